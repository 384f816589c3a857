/*
 * caw.h — the strobe's COMPARE-AND-WRITE, bounded.  A compare blocks the
 * main loop (clients too), so each waits at most a couple of slices, and
 * once one times out (the sequencer died and the view has not changed
 * yet) the next ten slices skip them: they are level-triggered and are
 * simply asked again later.
 */
#ifndef STORM_MMD_CAW_H
#define STORM_MMD_CAW_H

#include <stdint.h>

#include <storm_primitives.h>

struct mmd_caw {
	uint32_t slice_us;
	uint64_t stalled; /* slice of the last timeout; 0: none */
};

/* sp_compare_and_write() at slice `slice`, waiting at most timeout_ms
 * (itself at most two slices, at least 20 ms): 1 true, 0 false, or
 * -errno (-ETIMEDOUT also while stalled). */
int mmd_caw(struct mmd_caw *c, sp_world_t *w, uint64_t slice,
	    const sp_nodeset_t *set, uint64_t var, sp_cmp_t op, int64_t value,
	    uint64_t wvar, int64_t wval, int timeout_ms);

#endif
