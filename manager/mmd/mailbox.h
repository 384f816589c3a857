/*
 * mailbox.h — the nodes' output mailboxes.  A node XFER-AND-SIGNALs each
 * box (output, EXIT and FAIL records) to every manager replica; the
 * strobe master multicasts each new one to the group (rp_cast), and every
 * replica takes its records when the group delivers it, in agreed order:
 * output to whoever watches the job, exit statuses into the job's record,
 * a node's failure of a job as a JOB_FAILED proposal, batch output into
 * the job's files (the master only: one writer).  The master then
 * acknowledges the box to its node, which may forget it.
 *
 * box_seq (the last box taken from each node) is agreed: it travels in
 * the snapshot (mmd_mailbox_encode/decode).
 */
#ifndef STORM_MMD_MAILBOX_H
#define STORM_MMD_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

#include <storm_manager.h>
#include <storm_primitives.h>
#include <storm_proto.h>
#include <storm_replication.h>

#include "jobrec.h"
#include "pmi.h"
#include "rerun.h"

struct mmd_mailbox_hooks {
	/* output of a job that is not batch: to its watchers */
	void (*output)(void *ctx, uint32_t job, uint32_t rank, int stream,
		       const uint8_t *data, uint32_t len);
	/* the strobe master's finding (JOB_FAILED) */
	void (*propose)(void *ctx, const mm_op_t *op);
	void *ctx;
};

struct mmd_mailbox {
	const st_layout_t *lay;
	uint32_t nworld, nmanagers;
	struct mmd_jobs *jobs;
	struct mmd_mailbox_hooks hooks;
	uint64_t *box_seq;  /* per world id: last box taken (agreed) */
	uint64_t *box_cast; /* per world id: multicast by this master */
	int64_t *ack;       /* per world id: the seq being acked */
	sp_nodeset_t *one;
	int ends_ready;     /* a job's last EXIT record was taken: the
			     * caller looks for ended jobs now */
	struct mmd_rerun *rerun; /* what restarted ranks print again */
	struct mmd_pmi *pmi;     /* PMI records go there (NULL: dropped) */
};

/* Output kept for restarted ranks to be compared with, in all. */
#define MMD_RERUN_BUDGET (64ull << 20)

int mmd_mailbox_init(struct mmd_mailbox *b, const st_layout_t *lay,
		     uint32_t nworld, uint32_t nmanagers,
		     struct mmd_jobs *jobs,
		     const struct mmd_mailbox_hooks *hooks);
void mmd_mailbox_fini(struct mmd_mailbox *b);
/* The job ended: what was kept of its output goes. */
void mmd_mailbox_forget(struct mmd_mailbox *b, uint32_t job);
/* Strobe master: multicast the new boxes in gmem to the group. */
void mmd_mailbox_take(struct mmd_mailbox *b, sp_world_t *w,
		      const uint8_t *gmem, rp_replica_t *rp,
		      const mm_state_t *st);
/* The group delivered node's box: take its records if new; the master
 * (w non-NULL) acknowledges it to the node. */
void mmd_mailbox_agreed(struct mmd_mailbox *b, sp_world_t *w, int master,
			const mm_state_t *st, uint32_t node,
			const uint8_t *box, size_t boxlen);
/* A new strobe master multicasts every box again. */
void mmd_mailbox_master_reset(struct mmd_mailbox *b);
/* The agreed part for the snapshot: nworld u32 | box seq u64 each. */
size_t mmd_mailbox_size(const struct mmd_mailbox *b);
void mmd_mailbox_encode(const struct mmd_mailbox *b, uint8_t *out);
int mmd_mailbox_decode(struct mmd_mailbox *b, const uint8_t *p, size_t len,
		       char *err, size_t errlen);

#endif
