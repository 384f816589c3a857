/* spin.h -- a fixed amount of CPU work, shared by calib.c, synth.c and
 * pair runs of bench/bcsmpi (bench/README.md, "bench/run bcsmpi").
 *
 * work(n) runs n steps of a 64-bit linear congruential chain.  Each step
 * needs the previous one's result and the empty asm makes the value opaque
 * to the compiler, so the loop can be neither vectorised nor folded: its
 * time is n times one multiply-add's latency, the same under every MPI's
 * compiler wrapper (all three call gcc -O2 here). */
#ifndef BENCH_BCSMPI_SPIN_H
#define BENCH_BCSMPI_SPIN_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in seconds. */
static inline double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t work(uint64_t n)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#endif
