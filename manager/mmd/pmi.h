/*
 * pmi.h — the job-wide PMI exchange (docs/pmi.md): a barrier of a
 * PMI-1 job completes once every node of the job sent its entries.
 *
 * Up: each node's entries for barrier b come as PMI mailbox records
 * (whole entries each, the last flagged), agreed like every box, so
 * every replica appends them in the same order and, once the last node's
 * last record is in, holds the same merged store of barrier b
 * (mmd_pmi_record).  Nothing of this is a proposal: the mailboxes are
 * agreed, and a new strobe master has what the old one had.
 *
 * Down: the strobe master confirms with one COMPARE-AND-WRITE over the
 * job's nodes that each set its gv_pmi slot to "entries of b sent", then
 * writes the store by XFER-AND-SIGNAL into every node's PMI inbox, a
 * chunk at a time: before the inbox is written again, a compare over the
 * last chunk's nodes says each copied it out (gv_pmi_seq).  A node that
 * took a store answers a copy sent again (a new master's) by ignoring
 * it, so a master that died half-way leaves nothing to undo.
 */
#ifndef STORM_MMD_PMI_H
#define STORM_MMD_PMI_H

#include <stddef.h>
#include <stdint.h>

#include <storm_manager.h>
#include <storm_primitives.h>
#include <storm_proto.h>

#include "caw.h"

/* A job's merged store, at most (the nodes' own bound, node/pmi.h). */
#define MMD_PMI_STORE_MAX (64u << 20)

struct mmd_pmi_job;

struct mmd_pmi {
	const st_layout_t *lay;
	struct mmd_pmi_job *jobs;
	/* the strobe master's: the chunk in the inboxes */
	uint8_t *chunk;           /* lay->pmi_len */
	uint64_t seq;             /* the last chunk's number */
	sp_nodeset_t *sent_to;    /* ... its nodes, until they took it */
	int inflight;
	uint64_t sent_slice;
	uint64_t stores;          /* stores completed (statistics) */
	/* the propose hook: a store too large fails its job */
	void (*propose)(void *ctx, const mm_op_t *op);
	void *ctx;
};

int mmd_pmi_init(struct mmd_pmi *x, const st_layout_t *lay, uint32_t nworld,
		 void (*propose)(void *ctx, const mm_op_t *op), void *ctx);
void mmd_pmi_fini(struct mmd_pmi *x);
/* An agreed PMI record of node (every replica). */
void mmd_pmi_record(struct mmd_pmi *x, int master, const mm_state_t *st,
		    uint32_t node, uint32_t job, const uint8_t *data,
		    size_t len);
/* Every job's records go (a probe's, after a check). */
void mmd_pmi_clear(struct mmd_pmi *x);
/* The job ended or was queued again: its stores go. */
void mmd_pmi_forget(struct mmd_pmi *x, uint32_t job);
/* A new strobe master: every store not known to be everywhere goes
 * again. */
void mmd_pmi_master_reset(struct mmd_pmi *x, uint64_t seq_base);
/* Strobe master: the next chunk, if the inboxes are free. */
void mmd_pmi_step(struct mmd_pmi *x, sp_world_t *w, struct mmd_caw *caw,
		  const mm_state_t *st, const sp_nodeset_t *live,
		  uint64_t slice);
/* A store waits to go down (the strobe must not idle). */
int mmd_pmi_busy(const struct mmd_pmi *x);

/* The agreed part a joiner needs, in the snapshot: every job's stores
 * and the records of the barrier being gathered (a new master completes
 * it).  u32 count | count x (u32 job | u32 inc | u32 done | u32 failed
 * | u32 n | n bytes (store) | u32 n | n bytes (next) | u32 got | got x
 * u32 node), little endian. */
size_t mmd_pmi_snap_size(const struct mmd_pmi *x);
void mmd_pmi_snap_encode(const struct mmd_pmi *x, uint8_t *out);
/* Check p (len bytes, untrusted) and, if whole, replace the records.
 * 0, -STORM_EPROTO (err), -ENOMEM. */
int mmd_pmi_snap_decode(struct mmd_pmi *x, const uint8_t *p, size_t len,
			char *err, size_t errlen);

#endif
