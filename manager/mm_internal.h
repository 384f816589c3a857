/*
 * mm_internal.h — private to libstorm-manager: the state's structures,
 * shared by state.c (lifecycle, job and node events, lookups, digest),
 * submit.c (SUBMIT) and sched.c (TICK), and the limits shared with the
 * operation codec (opcodec.c).  mm_apply() refuses a job spec beyond the
 * limits, so every operation a replica accepted can also be written to the
 * replication log and read back.
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
	sp_nodeset_t *want;    /* the nodelist, or NULL: any node */
	const char *nodelist;  /* its text as submitted (in blk), or NULL */
	void *blk;             /* argv/env/files arrays and every string */
};

struct mm_state {
	uint32_t nworld;
	uint32_t nnodes;
	mm_node_t *nodes;        /* ascending world id */
	int32_t *node_at;        /* world id -> index in nodes, or -1 */
	uint64_t total_cpus;
	struct mm_jobrec **jobs; /* jobs[id - 1] */
	uint32_t njobs, jobcap;
	uint32_t live_lo;        /* jobs[0 .. live_lo - 1] are terminal */
	uint64_t slice, now_ms;  /* from the last TICK */
};

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

/* Operation handlers that live outside state.c. */
int mmi_op_submit(mm_state_t *s, const mm_op_t *op, mm_result_t *res);
int mmi_op_tick(mm_state_t *s, const mm_op_t *op, mm_result_t *res);

#endif /* MM_INTERNAL_H */
