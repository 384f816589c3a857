/*
 * ckpt_loop.c — a long-running rank for the checkpoint tests and the
 * benchmark: MIB MiB of memory, of which it rewrites DIRTY MiB a second,
 * always the same DIRTY MiB (pages scattered through the footprint): a
 * working set smaller than the footprint, as in the TICK measurements,
 * for SECONDS seconds of steps (100 a second, each followed by a 10 ms
 * sleep, so its result does not depend on how fast it ran); then prints
 * "done RANK SUM", SUM a digest of its memory, the same on every run.
 * With "thread" it also starts a thread (which a checkpoint refuses);
 * with "say" it prints "step RANK N" every tenth step, and to stderr
 * "half RANK" half way (the output a restart must not repeat).
 *
 *   ckpt_loop MIB DIRTY SECONDS [thread|say]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	size_t mib, dirty, steps, pages, per, ws, at = 0;
	const char *rank = getenv("STORM_RANK");
	struct timespec nap = { 0, 10 * 1000000 };
	uint64_t sum = 1469598103934665603ull;
	unsigned char *mem;
	pthread_t th;

	if (argc < 4)
		return 2;
	mib = strtoul(argv[1], NULL, 10);
	dirty = strtoul(argv[2], NULL, 10);
	steps = strtoul(argv[3], NULL, 10) * 100;
	pages = mib * 256;
	per = dirty * 256 / 100; /* pages a step */
	ws = dirty * 256 < pages ? dirty * 256 : pages;
	if (!pages || !(mem = malloc(pages * 4096)))
		return 2;
	for (size_t p = 0; p < pages; p++)
		memset(mem + p * 4096, (int)(p & 0xff), 4096);
	if (argc > 4 && !strcmp(argv[4], "thread"))
		pthread_create(&th, NULL, idle, NULL);
	printf("started %s\n", rank ? rank : "?");
	fflush(stdout);
	for (size_t s = 0; s < steps; s++) {
		if (argc > 4 && !strcmp(argv[4], "say") && s % 10 == 0) {
			printf("step %s %zu\n", rank ? rank : "?", s);
			fflush(stdout);
			if (s == steps / 2)
				fprintf(stderr, "half %s\n", rank ? rank : "?");
		}
		for (size_t k = 0; k < per; k++) {
			/* the working set: ws pages, k * 7919 mod pages
			 * (7919 is prime: distinct pages) */
			size_t p = (at++ % ws * 7919) % pages;

			mem[p * 4096 + (s % 4096)] += (unsigned char)(s + k);
		}
		nanosleep(&nap, NULL);
	}
	for (size_t i = 0; i < pages * 4096; i += 64)
		sum = (sum ^ mem[i]) * 1099511628211ull;
	printf("done %s %llu\n", rank ? rank : "?", (unsigned long long)sum);
	return 0;
}
