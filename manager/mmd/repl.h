/*
 * repl.h — storm-mm on top of replication/: client writes and the strobe
 * master's findings become operations in agreed order; every replica
 * applies them to the state machine, and the one that took a client's
 * request answers once it is applied and durable.  Also the snapshot
 * (the state machine's, then the mailboxes' agreed part) and the boxes
 * the strobe master multicasts (rp_cast).
 *
 * Fail-stop: when applying an agreed operation fails here for a local
 * reason (no memory), hooks.applied returns an error, the replication
 * layer stops, and storm-mm exits to rejoin by state transfer — never to
 * go on with a state that differs from its peers'.
 */
#ifndef STORM_MMD_REPL_H
#define STORM_MMD_REPL_H

#include <stddef.h>
#include <stdint.h>

#include <storm_manager.h>
#include <storm_proto.h>
#include <storm_replication.h>

#include "history.h"
#include "jobrec.h"
#include "mailbox.h"

/* Bumped when the snapshot or operation encoding changes incompatibly.
 * 2: the checkpoint operations (MM_OP_CKPT_*), which an older replica
 * could not apply while newer ones did. */
#define MMD_STATE_VERSION 2

struct mmd_client;

struct mmd_repl_hooks {
	/* op was applied to the state with result res: the shell's side
	 * effects.  Non-zero: a local failure, the replica stops. */
	int (*applied)(void *ctx, const mm_op_t *op, const mm_result_t *res);
	/* a write proposed for client c (never NULL) is done (res) */
	void (*answer)(void *ctx, struct mmd_client *c, int kind,
		       uint32_t job, const mm_result_t *res);
	/* a write proposed for connection conn is done (res), whether the
	 * client is still there or not (may be NULL) */
	void (*settled)(void *ctx, uint64_t conn, int kind,
			const mm_result_t *res);
	/* the group delivered a box the strobe master took from node */
	void (*box)(void *ctx, uint32_t node, const uint8_t *box, size_t len);
	/* membership, quorum, sync or the strobe master changed */
	void (*status)(void *ctx, const rp_status_t *st);
	/* the whole state was replaced by a snapshot's */
	void (*restored)(void *ctx);
	void *ctx;
};

/* A client's write waiting to be applied and durable. */
struct mmd_req {
	struct mmd_req *next;
	struct mmd_client *c; /* NULL once the client went away */
	uint64_t conn;        /* its connection's number */
	int kind;
	uint32_t job;
};

struct mmd_repl {
	rp_replica_t *rp;
	rp_status_t rs;           /* as last reported */
	mm_state_t **st;          /* the state machine (replaced on restore) */
	struct mmd_mailbox *mbox;
	struct mmd_jobs *jobs;    /* the shell's records: statuses go in the
				   * snapshot */
	struct mmd_repl_hooks hooks;
	struct mmd_req *reqs;
	uint8_t *opbuf;           /* RP_OP_MAX: one encoded operation */
	struct mmd_history hist;  /* in the replica's LMDB environment */
	char state_path[1100];
	const char *name;         /* this manager's */
	uint64_t announce_ms;
};

/* Open the durable state of manager host (replication as cfg says).
 * @return 0, -STORM_ECONFIG / -STORM_ESTATE (exit 2), other -errno. */
int mmd_repl_open(struct mmd_repl *r, const st_config_t *cfg,
		  const st_host_t *host, mm_state_t **st,
		  struct mmd_mailbox *mbox, struct mmd_jobs *jobs,
		  const struct mmd_repl_hooks *hooks, char *err,
		  size_t errlen);
int mmd_repl_start(struct mmd_repl *r, char *err, size_t errlen);
/* The bytes of the state's image (what a snapshot stores): encodes it,
 * so for diagnostics on request only.  0 if it cannot. */
size_t mmd_repl_image_bytes(struct mmd_repl *r);
/* A backfill page (backfill.h) into the history, in the replica's next
 * commit.  0 or -errno (a local failure). */
int mmd_repl_history_page(struct mmd_repl *r, const struct mmd_hist_rec *recs,
			  size_t n, uint32_t last, int more);
void mmd_repl_close(struct mmd_repl *r);
/* A client's write: ordered, applied everywhere, answered (hooks.answer)
 * when durable.  @return 0, or res filled and its rc. */
int mmd_repl_propose_client(struct mmd_repl *r, struct mmd_client *c,
			    uint64_t client_key, uint64_t seq, uint32_t uid,
			    uint32_t gid, int kind, const mm_op_t *op,
			    mm_result_t *res);
/* The strobe master's finding, without a client. */
void mmd_repl_propose(struct mmd_repl *r, const mm_op_t *op);
/* Client c went away: its pending writes are answered to nobody. */
void mmd_repl_client_gone(struct mmd_repl *r, struct mmd_client *c);
/* Dispatch the group's events.  @return 0, or -STORM_ECLOSED /
 * -STORM_ESTATE when the replica must stop. */
int mmd_repl_dispatch(struct mmd_repl *r);
/* Seconds-scale timers (recovery wait, announcements), now_ms monotonic. */
void mmd_repl_tick(struct mmd_repl *r, uint64_t now_ms);

#endif
