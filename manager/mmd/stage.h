/*
 * stage.h — file staging: the strobe master multicasts a STAGING job's
 * program and files (after a manifest) in chunks into the ring of slots
 * in its nodes' global memory (XFER-AND-SIGNAL), with COMPARE-AND-WRITE
 * on gv_consumed for flow control, a bounded amount of work per slice;
 * when every node wrote everything out it proposes JOB_STAGED.  One job
 * at a time.
 */
#ifndef STORM_MMD_STAGE_H
#define STORM_MMD_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include <storm_manager.h>
#include <storm_primitives.h>
#include <storm_proto.h>

#include "caw.h"
#include "fetch.h"
#include "inputs.h"
#include "jobrec.h"
#include "phist.h"

#define MMD_SLOT_EV 8 /* events 8..15: one per ring slot in flight */
#define MMD_MAX_INFLIGHT 8

struct mmd_stage {
	/* set once */
	const st_layout_t *lay;
	struct mmd_caw *caw;
	struct mmd_jobs *jobs;
	void (*propose)(void *ctx, const mm_op_t *op);
	void *ctx;
	struct mmd_inputs *inputs; /* jobs' inputs this replica received */
	struct mmd_fetch *fetch;   /* ... or asks its peers for */
	/* the job being staged */
	uint32_t job;         /* 0: none */
	uint8_t *stream;      /* manifest + every file, as chunk images */
	size_t len;           /* stream bytes (without the headers) */
	uint32_t total, next; /* chunks */
	uint32_t inc;         /* its incarnation: the job's restarts */
	int busy[MMD_MAX_INFLIGHT];
	uint64_t started_ns;
	struct mmd_phist launch; /* staging times, begin to every node's
				  * files written (metrics) */
};

/* One slice's staging work: continue the job being staged, or begin the
 * first of active[] (ids of jobs holding PEs) that is STAGING. */
void mmd_stage_step(struct mmd_stage *s, sp_world_t *w, const mm_state_t *st,
		    uint64_t slice, const uint32_t *active, uint32_t nactive);
/* Forget the job being staged (a new master, a lost machine). */
void mmd_stage_free(struct mmd_stage *s);

#endif
