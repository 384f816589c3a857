/*
 * phist.h — a latency histogram as Prometheus exposes one: cumulative
 * counts at fixed bounds in seconds (100 us to 10 s), their sum and
 * count.  Fixed bounds, so every replica's series add up.
 */
#ifndef STORM_MMD_PHIST_H
#define STORM_MMD_PHIST_H

#include <stdint.h>

#define MMD_PHIST_BOUNDS 16

struct mmd_phist {
	uint64_t b[MMD_PHIST_BOUNDS]; /* observations <= bound[i] (not
				       * cumulative here) */
	uint64_t n;                   /* all of them (+Inf) */
	uint64_t sum_ns;
};

/* The bounds, in seconds, ascending (Prometheus's le labels). */
extern const double mmd_phist_bound[MMD_PHIST_BOUNDS];

void mmd_phist_add(struct mmd_phist *h, uint64_t ns);

#endif
