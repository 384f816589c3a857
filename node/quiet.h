/*
 * quiet.h — a node manager with nothing to do at a slice, and the
 * strobe's idling.  While quiet, the heartbeats that only advance the
 * slice (ST_EV_HB_TICK) do not wake the main loop, and gv_quiet says 1,
 * so that the strobe master, finding every node quiet with one
 * COMPARE-AND-WRITE, may idle: strobe only every few slices, with
 * ST_HB_IDLE in the block.  A node that has work again while the last
 * block says idle signals ST_EV_WAKE to the managers in its view (8
 * bytes, its world id, into their wake word), once per idle block; the
 * master strobes again from the next slice boundary (docs/manager.md,
 * the idle strobe).
 */
#ifndef STORM_NM_QUIET_H
#define STORM_NM_QUIET_H

#include <stdint.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct nm_quiet {
	sp_world_t *w;
	const st_layout_t *lay;
	uint32_t nmanagers;
	sp_nodeset_t *mm;     /* the managers in the view, per wake */
	int quiet;            /* as last set: ticks quiet, gv_quiet 1 */
	uint64_t woke;        /* the idle block's slice a wake went for */
	int64_t word;         /* the wake's payload: this node's id */
	uint64_t wakes;       /* sent (statistics, tests) */
};

/* 0 or -ENOMEM.  Starts busy: ticks heard, gv_quiet 0. */
int nm_quiet_init(struct nm_quiet *q, sp_world_t *w, const st_layout_t *lay,
		  uint32_t nmanagers);
void nm_quiet_fini(struct nm_quiet *q);
/* After every handler of the main loop: work (this node has something
 * to do at the next slice) and hb (the last block applied).  Sets the
 * ticks and gv_quiet; wakes an idle strobe when there is work. */
void nm_quiet_update(struct nm_quiet *q, int work, const st_hb_t *hb);
/* Take the wakes' local completions (the notify handler). */
void nm_quiet_events(struct nm_quiet *q);

#endif
