/*
 * history.h — the job history: jobs that retention took out of the
 * replicated state (MM_OP_TICK_RETAIN), kept in LMDB databases of the
 * replica's own environment and written in the very transaction that
 * records the operation's applied index, so every replica holds the same
 * history at the same index.  Bounded by its own retention (the last
 * history_jobs job ids, ended within history_days), applied at the same
 * operations.  A replica that joined by state transfer fetches the
 * records it may lack from a peer, page by page, off the agreed stream
 * (backfill.h).  Reads (stormctl history, show and queue -a) look at the
 * committed databases with a read transaction.
 *
 * Databases:
 *   "history"      be32 id -> record: u64 purged_index | u64 end_ms |
 *                  u64 submit_ms | u32 uid | u8 state | u8 namelen | name
 *                  | the job as JSON (what `show --json` gives, from the
 *                  agreed state only); little-endian
 *   "history_end"  be64 end_ms | be32 id -> "" (age order, for the age
 *                  rule and time-range queries)
 *   "history_meta" "floor" u32, "cutoff" u64 (what retention removed:
 *                  ids below floor, jobs ended before cutoff; both only
 *                  grow), "backfill_below" u64 and "backfill_after" u32
 *                  (a backfill in progress: records purged at or before
 *                  that index, of ids above that one, may be missing)
 */
#ifndef STORM_MMD_HISTORY_H
#define STORM_MMD_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <lmdb.h>

#include <storm_manager.h>

#define MMD_HIST_PAGE_MAX (1u << 20) /* bytes of records per backfill page */
#define MMD_HIST_SCAN_MAX 100000u    /* records one query looks at */
#define MMD_HIST_LIMIT_MAX 10000u    /* jobs one query returns */

struct mmd_history {
	MDB_env *env;
	MDB_dbi recs, by_end, meta;
	int open;
	uint32_t floor;          /* as last applied (committed or not) */
	uint64_t cutoff;
	uint64_t backfill_below; /* 0: nothing missing */
	uint32_t backfill_after;
};

/* One record in its parts (a backfill page carries them so). */
struct mmd_hist_rec {
	uint32_t id;
	uint64_t purged_index, end_ms, submit_ms;
	uint32_t uid;
	uint8_t state;
	const char *name;
	const char *json;
	size_t json_len;
};

/* What `history` asks: every field optional (0 / NULL: any). */
struct mmd_hist_query {
	int by_uid;
	uint32_t uid;
	uint32_t states;        /* bit (1 << mm_job_state_t); 0: any */
	const char *name;       /* fnmatch(3) pattern */
	uint64_t since_ms;      /* ran at some time in [since, until] */
	uint64_t until_ms;      /* 0: no upper end */
	uint32_t limit;         /* 1..MMD_HIST_LIMIT_MAX */
	uint64_t before_end;    /* continue strictly before (end, id); */
	uint32_t before_id;     /* 0, 0: from the last to end */
};

/* Open (creating) the databases in the replica's environment; reads the
 * retention and backfill marks.  No transaction may be open. */
int mmd_history_open(struct mmd_history *h, MDB_env *env, char *err,
		     size_t errlen);

/* After an applied TICK_RETAIN at index: the jobs it purged (mm_purged_*)
 * go in, then retention: ids below next_id - keep_ids (keep_ids 0: no
 * count rule) and jobs ended before now - keep_ms (0: no age rule) go
 * out.  In t, the operation's transaction.  0 or -errno (a local
 * failure: the replica stops). */
int mmd_history_apply(struct mmd_history *h, MDB_txn *t, const mm_state_t *st,
		      uint64_t index, uint32_t keep_ids, uint64_t keep_ms);

/* The state came from a donor at index: records purged up to it may be
 * missing here; the backfill fetches them.  In t. */
int mmd_history_installed(struct mmd_history *h, MDB_txn *t, uint64_t index);

/* A page of a backfill: n records of ids above backfill_after, the last
 * id the donor looked at, and whether more follow.  Records retention
 * already removed here are left out. */
int mmd_history_put_page(struct mmd_history *h, MDB_txn *t,
			 const struct mmd_hist_rec *recs, size_t n,
			 uint32_t last, int more);

/* Reads (their own read transaction).  get: the job's JSON (*out, a new
 * reference) and its uid, or -ENOENT. */
int mmd_history_get(struct mmd_history *h, uint32_t id, json_t **out,
		    uint32_t *uid);
/* Matching jobs, most recently ended first, appended to jobs; *more set
 * with the cursor to continue from (q->before_*) when the limit or the
 * scan budget stopped it.  -EINVAL with err for an impossible query. */
int mmd_history_query(struct mmd_history *h, const struct mmd_hist_query *q,
		      json_t *jobs, int *more, uint64_t *next_end,
		      uint32_t *next_id, char *err, size_t errlen);
/* A backfill page for a peer: records of id > after purged at or before
 * below, at most MMD_HIST_PAGE_MAX bytes, as a JSON array of
 * [id, purged_index, end_ms, submit_ms, uid, state, name, json]; *last
 * the last id looked at, *more whether ids above it remain. */
int mmd_history_page(struct mmd_history *h, uint64_t below, uint32_t after,
		     json_t **records, uint32_t *last, int *more);
/* Records held (for status and tests). */
uint64_t mmd_history_count(struct mmd_history *h);

#endif
