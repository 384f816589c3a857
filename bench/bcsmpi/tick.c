/* bench-tick: a process woken every PERIOD_US microseconds that does
 * nothing else, until killed.  Run beside the peer's bare compute loop,
 * it prices the least any strobe of that period costs the ranks on this
 * machine (a wake-up and its context switches, nothing sent): the floor
 * under Storm's compute-loop overhead.
 *
 *   bench-tick PERIOD_US */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long us = argc > 1 ? atol(argv[1]) : 0;
	struct itimerspec it;
	uint64_t n;
	int fd;

	if (us <= 0 || us >= 1000000) {
		fprintf(stderr, "usage: bench-tick PERIOD_US (1 .. 999999)\n");
		return 2;
	}
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_nsec = us * 1000;
	it.it_value = it.it_interval;
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (fd < 0 || timerfd_settime(fd, 0, &it, NULL) < 0) {
		perror("bench-tick: timerfd");
		return 1;
	}
	for (;;)
		if (read(fd, &n, sizeof(n)) < 0)
			return 1;
}
