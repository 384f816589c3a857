/* bench-calib: how many steps of work() (spin.h) take one millisecond on
 * one idle core of this machine.  The fastest of TRIALS timed runs counts
 * (other load only ever slows a run down).  Prints the number alone.
 *
 *   bench-calib [TRIALS]     (default 15) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 15;
	volatile uint64_t sink = 0;
	uint64_t n = 1u << 20;
	double best;

	if (trials < 1)
		trials = 1;
	/* long enough that the clock's resolution does not matter: 40 ms */
	for (;;) {
		double t0 = mono_s();
		sink += work(n);
		if (mono_s() - t0 >= 0.04)
			break;
		n *= 2;
	}
	best = 1e300;
	for (int i = 0; i < trials; i++) {
		double t0 = mono_s(), t;
		sink += work(n);
		t = mono_s() - t0;
		if (t < best)
			best = t;
	}
	printf("%.0f\n", (double)n / (best * 1e3));
	return (int)(sink & 0);
}
