/*
 * mm_internal.h — private to libstorm-manager: the state's structures,
 * shared by state.c (lifecycle, job and node events, lookups), submit.c
 * (SUBMIT) and sched.c (TICK); the limits shared with the operation codec
 * (opcodec.c); and the bounds-checked writer and reader that opcodec.c
 * defines and the state snapshot (snapshot.c, which also makes the
 * digest) uses too.  mm_apply() refuses a job spec beyond the limits, so
 * every operation a replica accepted can also be written to the
 * replication log and read back, and every state can be snapshotted.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include "storm_manager.h"

/* argc, envc and nfiles of one job spec */
#define MM_ARGS_MAX 4096u
/* bytes of one string (without its NUL) */
#define MM_STR_MAX 65536u
/* per-rank statuses of one JOB_EXITED (a job of more ranks than this
 * cannot report its exit through the log, so SUBMIT refuses it) */
#define MM_RANKS_MAX (1u << 24)

/* One job: the view mm_job_get() hands out, plus what owns its memory. */
struct mm_jobrec {
	mm_job_t v;            /* pointers below and into blk */
	sp_nodeset_t *nodes;   /* allocated nodes (empty while PENDING) */
	uint32_t *rank_node;   /* ranks entries, allocated at SUBMIT */
	int32_t *rank_status;  /* once ended by JOB_EXITED, else NULL */
	mm_usage_t *rank_usage; /* once ended by JOB_EXITED_USAGE, else NULL */
	sp_nodeset_t *want;    /* the nodelist, or NULL: any node */
	const char *nodelist;  /* its text as submitted (in blk), or NULL */
	void *blk;             /* argv/env/files arrays and every string */
	mm_input_t *inputs;    /* v.ninputs of them, or NULL */
	mm_ckpt_t *ckpts;      /* v.nckpts committed epochs, or NULL */
	uint32_t behind;       /* PENDING: the head it was last queued behind
				* (its reason says so; not state: a restore
				* rewrites the same text) */
};

struct mm_state {
	uint32_t nworld;
	uint32_t nnodes;
	mm_node_t *nodes;        /* ascending world id */
	int32_t *node_at;        /* world id -> index in nodes, or -1 */
	uint64_t total_cpus;
	struct mm_jobrec **jobs; /* ascending id (ids are never reused;
				  * retention leaves gaps) */
	uint32_t njobs, jobcap;
	uint32_t next_id;        /* the id the next SUBMIT gets */
	uint32_t live_lo;        /* jobs[0 .. live_lo - 1] are terminal */
	/* retention (derived from the jobs: rebuilt on decode) */
	uint32_t nterminal;      /* terminal jobs in the table */
	uint64_t min_end_ms;     /* no terminal job ended before this */
	/* the jobs the last mm_apply() removed (not state: mm_purged()),
	 * room for jobcap of them so TICK never allocates */
	struct mm_jobrec **purged;
	uint32_t npurged;
	uint64_t slice, now_ms;  /* from the last TICK */
	uint64_t active_gen;     /* bumped when a job starts or stops holding
				  * cpus (not state: for the shell's caches) */
	/* PENDING jobs in all and per uid, for admission caps: derived
	 * from the jobs (rebuilt on decode, not encoded) */
	uint32_t npending;
	struct mmi_uidcount { uint32_t uid, n, used; } *pend; /* open
				  * addressing; a uid's slot stays used at
				  * n 0 until a growth drops it */
	uint32_t pend_cap, pend_used;
	uint64_t state_bytes;    /* mm_state_bytes(): derived, rebuilt on
				  * decode */
	/* the scheduler (matrix.c, sched.c) */
	mm_sched_conf_t conf;
	uint32_t ncols, pow2;    /* PEs; the buddy tree's leaves */
	uint32_t *col_node;      /* column -> world id */
	uint32_t *cells;         /* rows_alloc x ncols: job id or 0 */
	uint32_t rows_alloc;
	uint32_t *rowuse;        /* MM_MPL_MAX: occupied cells per row */
	/* scratch, allocated with the state so TICK never allocates */
	uint8_t *tree;           /* 2 x pow2: free blocks */
	uint32_t *first;         /* ncols: a placement's first column per
				  * rank (a job's ranks <= the cpus) */
	uint32_t *scratch;       /* ncols: a row being replayed */
	struct mmi_holder *holders; /* ncols: jobs of a row, by end time */
	/* the credential replay cache (creds.c): ascending id */
	struct mmi_cred *creds;
	uint32_t ncreds, credcap;
	uint64_t creds_min_exp;  /* the least expire_ms in it (derived) */
};

/* A credential the cluster has taken (MM_OP_CRED). */
struct mmi_cred {
	uint8_t id[MM_CRED_ID_BYTES];
	uint64_t expire_ms;
};

/* A job holding a block, with the time it must end by (UINT64_MAX: no
 * time limit). */
struct mmi_holder {
	uint64_t end_ms;
	uint32_t job, row, col, width;
};

/* state.c: job id, or NULL (binary search: ids ascend). */
struct mm_jobrec *mmi_job_of(const mm_state_t *s, uint32_t id);
/* state.c: the index of the first job of id >= id (njobs if none). */
uint32_t mmi_job_lower(const mm_state_t *s, uint32_t id);
/* state.c: grow the job table (and the purged list) to hold one more;
 * -ENOMEM. */
int mmi_jobs_reserve(mm_state_t *s, uint32_t want);
/* sched.c: the retention of TICK_RETAIN (after the tick itself). */
void mmi_retain(mm_state_t *s, uint32_t keep, uint64_t keep_ms,
		uint64_t prev_now_ms);

/* snapshot.c: a job's weight against the state budget (mm_state_bytes). */
uint64_t mmi_job_bytes(const struct mm_jobrec *j);

/* state.c: a job of uid entered (+1) or left (-1) PENDING; -ENOMEM. */
int mmi_pending_add(mm_state_t *s, uint32_t uid, int delta);
/* state.c: the counts again from the jobs (snapshot decode). */
int mmi_pending_rebuild(mm_state_t *s);

static inline int is_terminal(mm_job_state_t st)
{
	return st == MM_JOB_COMPLETED || st == MM_JOB_FAILED ||
	       st == MM_JOB_CANCELLED;
}

/* Whether the job holds cpus on its nodes. */
static inline int holds_cpus(mm_job_state_t st)
{
	return st == MM_JOB_STAGING || st == MM_JOB_RUNNING;
}

static inline mm_node_t *node_of(mm_state_t *s, uint32_t world_id)
{
	if (world_id >= s->nworld || s->node_at[world_id] < 0)
		return NULL;
	return &s->nodes[s->node_at[world_id]];
}

/* Refuse an operation: sets res->rc and res->err (what, where, what to
 * do); returns rc. */
__attribute__((format(printf, 3, 4)))
int mmi_refuse(mm_result_t *res, int rc, const char *f, ...);
/* snprintf that may cut (reasons are fixed-size fields). */
__attribute__((format(printf, 3, 4)))
void mmi_fmt(char *dst, size_t len, const char *f, ...);
/* Move a job to terminal state st, releasing its cpus; the caller has
 * written the reason. */
void mmi_job_end(mm_state_t *s, struct mm_jobrec *j, mm_job_state_t st);
void mmi_job_free(struct mm_jobrec *j);

/* Check a job spec exactly as SUBMIT does and build its PENDING record
 * (id 0, not yet in the table: the caller puts it there or frees it with
 * mmi_job_free()).  A refusal is SUBMIT's, in res; returns res->rc. */
int mmi_job_new(mm_state_t *s, const mm_job_spec_t *sp,
		struct mm_jobrec **out, mm_result_t *res);

/* The matrix (matrix.c). */
int mmi_matrix_init(mm_state_t *s);
void mmi_matrix_free(mm_state_t *s);
int mmi_matrix_grow(mm_state_t *s, uint32_t rows);
uint32_t mmi_rows(const mm_state_t *s);
/* Whether a column may carry a rank of j: its node UP and in j's
 * nodelist. */
int mmi_col_usable(const mm_state_t *s, const struct mm_jobrec *j,
		   uint32_t col);
/* The buddy block for j in a row's cells (ncols of them): 0 and the
 * block, or -ENOSPC. */
int mmi_find_block(const mm_state_t *s, const uint32_t *row,
		   const struct mm_jobrec *j, uint32_t *col, uint32_t *width);
/* Put j into a block (cells, ranks on its first usable columns, node
 * use) / take it out. */
void mmi_block_take(mm_state_t *s, struct mm_jobrec *j, uint32_t row,
		    uint32_t col, uint32_t width);
void mmi_block_release(mm_state_t *s, struct mm_jobrec *j);

/* step.c: place a PENDING step on its allocation's free task slots (1)
 * or say why it waits (0; a step whose allocation ended is cancelled);
 * cancel the steps of allocation p that have not ended; check a spec's
 * alloc and parent as SUBMIT does. */
int mmi_step_place(mm_state_t *s, struct mm_jobrec *j);
void mmi_steps_end(mm_state_t *s, const struct mm_jobrec *p);
int mmi_step_check(mm_state_t *s, const mm_job_spec_t *sp, mm_result_t *res);

/* Operation handlers that live outside state.c. */
int mmi_op_submit(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_tick(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_sched(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_cred(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_ckpt_request(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_ckpt_commit(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_ckpt_abort(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_ckpt_restart(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
/* ckpt.c: j queued again to run on from epoch e; the last committed
 * epoch of j stored at one of levels, or 0. */
void mmi_job_requeue(mm_state_t *s, struct mm_jobrec *j, uint32_t e);
uint32_t mmi_ckpt_last(const struct mm_jobrec *j, uint32_t levels);
/* creds.c: drop the entries the state's time has passed (TICK; never
 * allocates). */
void mmi_creds_prune(mm_state_t *s);
/* creds.c: put an entry decoded from a snapshot (ids ascending, checked
 * by the caller); -ENOMEM. */
int mmi_creds_append(mm_state_t *s, const uint8_t *id, uint64_t expire_ms);

/* ------------------------------------------------------------------------ */
/* Wire helpers (opcodec.c), shared with snapshot.c                         */
/* ------------------------------------------------------------------------ */

/* Little-endian integers; str = u32 length (MMI_STR_NULL: NULL) + bytes,
 * no NUL inside, at most MM_STR_MAX; strv = u32 count (at most
 * MM_ARGS_MAX) + count x str. */
#define MMI_STR_NULL UINT32_MAX

/* A writer into buf[0 .. cap).  A failed put records the first error
 * (-ENOSPC: no room; -EINVAL: a string or count beyond the limits) and
 * later puts do nothing, so an encoder checks err once at the end.
 * buf NULL with cap SIZE_MAX only counts (n); fnv non-NULL also folds
 * every byte put into *fnv (FNV-1a 64, started at MMI_FNV_OFFSET). */
struct mmi_wr {
	uint8_t *buf;
	size_t cap, n;
	int err;
	uint64_t *fnv;
};

#define MMI_FNV_OFFSET UINT64_C(0xcbf29ce484222325)

void mmi_put_bytes(struct mmi_wr *w, const void *p, size_t n);
void mmi_put_u8(struct mmi_wr *w, uint8_t v);
void mmi_put_u16(struct mmi_wr *w, uint16_t v);
void mmi_put_u32(struct mmi_wr *w, uint32_t v);
void mmi_put_u64(struct mmi_wr *w, uint64_t v);
void mmi_put_str(struct mmi_wr *w, const char *s);
void mmi_put_strv(struct mmi_wr *w, uint32_t n, const char *const *v);

/* A reader of buf[0 .. len).  The first failure (bytes missing, a length
 * beyond its limit or the bytes left, a NUL inside a string, the arena
 * exhausted) sets bad and records where (bad_at, an offset into buf) and
 * why (a static string); later gets do nothing and return 0 or NULL, so
 * a decoder checks bad once per part.  Strings and arrays are carved from
 * arena[0 .. acap), which the caller sizes from the input length, so
 * nothing a hostile length says is ever allocated. */
struct mmi_rd {
	const uint8_t *buf;
	size_t len, pos;
	uint8_t *arena;
	size_t acap, aused;
	int bad;
	size_t bad_at;
	const char *why;
};

/* Mark the reader bad at its position (the first failure is kept). */
void mmi_rd_fail(struct mmi_rd *r, const char *why);
const uint8_t *mmi_get_bytes(struct mmi_rd *r, size_t n);
uint8_t mmi_get_u8(struct mmi_rd *r);
uint16_t mmi_get_u16(struct mmi_rd *r);
uint32_t mmi_get_u32(struct mmi_rd *r);
uint64_t mmi_get_u64(struct mmi_rd *r);
void *mmi_arena_alloc(struct mmi_rd *r, size_t n, size_t align);
/* The most arena that decoding len input bytes can need, one job spec
 * included; a decoder refuses len > MMI_INPUT_MAX first. */
#define MMI_INPUT_MAX ((SIZE_MAX - 1024) / 3)
size_t mmi_arena_bound(size_t len);
/* A str, NUL-terminated in the arena (NULL for a NULL str). */
const char *mmi_get_str(struct mmi_rd *r);
/* A strv (NULL when count 0); *count gets its count. */
const char *const *mmi_get_strv(struct mmi_rd *r, uint32_t *count);

/* A job spec as SUBMIT carries it (see opcodec.c); the spec read back is
 * in the arena and is only decoded, not checked: mm_apply() does that. */
void mmi_put_spec(struct mmi_wr *w, const mm_job_spec_t *sp);
const mm_job_spec_t *mmi_get_spec(struct mmi_rd *r);
/* A job's inputs (SUBMIT_INPUTS, snapshot v7): u32 n, n x (u8[32]
 * sha256, u64 size, u32 mode); read back in the arena (NULL when 0). */
void mmi_put_inputs(struct mmi_wr *w, uint32_t n, const mm_input_t *in);
const mm_input_t *mmi_get_inputs(struct mmi_rd *r, uint32_t *n);

#endif /* MM_INTERNAL_H */
