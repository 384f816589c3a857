/*
 * state.c — the Machine Manager's state machine: the node table, the job
 * table (queue history included) and their allocations, changed only by
 * mm_apply().  All policy lives in this library (SUBMIT in submit.c, TICK
 * in sched.c, the rest here), away from clocks, sockets and randomness, so
 * every replica that applies the same operations in the same order holds
 * the same state and the same mm_digest().
 *
 * Invariants:
 *  - an operation applies whole or is refused with nothing changed: what
 *    an operation may need is allocated before its first change (a job's
 *    rank table at SUBMIT, its status copy before JOB_EXITED), so TICK,
 *    CANCEL and NODE_DOWN never allocate;
 *  - for every node, used == ranks of STAGING/RUNNING jobs on it <= cpus
 *    x mpl; the matrix holds exactly those jobs' blocks (matrix.c);
 *  - job ids are 1, 2, 3, ... in SUBMIT order, never reused; jobs[]
 *    holds them in ascending id; a terminal job leaves it only at
 *    TICK_RETAIN (retention, sched.c), into mm_purged() for the shell's
 *    history;
 *  - things happen only at TICK: a job is placed, or ends by its time
 *    limit, only there.
 *
 * Job states x operations ("=" unchanged and accepted, "-E" refused):
 *
 *            TICK          STAGED     EXITED        FAILED  CANCEL  NODE_DOWN
 *  PENDING   STAGING or =  -EALREADY  -EINVAL       FAILED  CANCEL  =
 *  STAGING   FAILED(tl)/=  RUNNING    COMPL/FAILED  FAILED  CANCEL  FAILED(*)
 *  RUNNING   FAILED(tl)/=  -EALREADY  COMPL/FAILED  FAILED  CANCEL  FAILED(*)
 *  terminal  =             -EALREADY  -EALREADY     -EALR.  -EALR.  =
 *
 *  tl: its time limit passed; (*) if a rank of it is on the node.
 *  Unknown job: -ENOENT; CANCEL by a uid neither 0 nor the job's: -EPERM.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "mm_internal.h"

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */
/* ------------------------------------------------------------------------ */

void mmi_fmt(char *dst, size_t len, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(dst, len, f, ap);
	va_end(ap);
}

/* Refuse an operation: the code, and a message saying what, where and
 * what to do. */
int mmi_refuse(mm_result_t *res, int rc, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(res->err, sizeof(res->err), f, ap);
	va_end(ap);
	res->rc = rc;
	return rc;
}

uint32_t mmi_job_lower(const mm_state_t *s, uint32_t id)
{
	uint32_t lo = 0, hi = s->njobs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->jobs[mid]->v.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct mm_jobrec *mmi_job_of(const mm_state_t *s, uint32_t id)
{
	uint32_t i = mmi_job_lower(s, id);

	return i < s->njobs && s->jobs[i]->v.id == id ? s->jobs[i] : NULL;
}

#define job_of mmi_job_of

int mmi_jobs_reserve(mm_state_t *s, uint32_t want)
{
	uint32_t cap = s->jobcap ? s->jobcap : 64;
	struct mm_jobrec **v;

	if (want <= s->jobcap)
		return 0;
	while (cap < want)
		cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
	v = realloc(s->jobs, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->jobs = v;
	v = realloc(s->purged, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM; /* jobs grew: harmless, jobcap says the rest */
	s->purged = v;
	s->jobcap = cap;
	return 0;
}

static void purged_clear(mm_state_t *s)
{
	for (uint32_t i = 0; i < s->npurged; i++)
		mmi_job_free(s->purged[i]);
	s->npurged = 0;
}

uint32_t mm_purged_count(const mm_state_t *s)
{
	return s ? s->npurged : 0;
}

int mm_purged_get(const mm_state_t *s, uint32_t i, mm_job_t *out)
{
	if (!s || !out)
		return -EINVAL;
	if (i >= s->npurged)
		return -ENOENT;
	*out = s->purged[i]->v;
	return 0;
}

uint32_t mm_job_count(const mm_state_t *s)
{
	return s ? s->njobs : 0;
}

uint32_t mm_next_id(const mm_state_t *s)
{
	return s ? s->next_id : 0;
}

const char *mm_job_state_name(mm_job_state_t st)
{
	static const char *const names[] = {
		[MM_JOB_PENDING] = "PENDING",
		[MM_JOB_STAGING] = "STAGING",
		[MM_JOB_RUNNING] = "RUNNING",
		[MM_JOB_COMPLETED] = "COMPLETED",
		[MM_JOB_FAILED] = "FAILED",
		[MM_JOB_CANCELLED] = "CANCELLED",
	};

	if ((unsigned)st >= sizeof(names) / sizeof(names[0]) || !names[st])
		return "UNKNOWN";
	return names[st];
}

const char *mm_node_state_name(mm_node_state_t st)
{
	if (st == MM_NODE_UP)
		return "UP";
	if (st == MM_NODE_DOWN)
		return "DOWN";
	return "UNKNOWN";
}

/* ------------------------------------------------------------------------ */
/* Create and destroy                                                       */
/* ------------------------------------------------------------------------ */

void mmi_job_free(struct mm_jobrec *j)
{
	if (!j)
		return;
	sp_nodeset_destroy(j->nodes);
	sp_nodeset_destroy(j->want);
	free(j->rank_node);
	free(j->inputs);
	free(j->rank_status);
	free(j->rank_usage);
	free(j->ckpts);
	free(j->blk);
	free(j);
}

/* ---- PENDING counts ---------------------------------------------------- */

/* The slot of uid, or the free one where it would go.  A uid keeps its
 * slot while its count falls to 0 (probe chains stay whole); a growth
 * re-inserts only the counts above 0, so the table follows the uids with
 * jobs pending, not every uid ever seen.  The counts, not the layout,
 * are what replicas must agree on. */
static struct mmi_uidcount *pend_slot(const mm_state_t *s, uint32_t uid)
{
	uint32_t k = (uid * 2654435761u) & (s->pend_cap - 1);

	while (s->pend[k].used && s->pend[k].uid != uid)
		k = (k + 1) & (s->pend_cap - 1);
	return &s->pend[k];
}

static int pend_grow(mm_state_t *s)
{
	struct mmi_uidcount *old = s->pend;
	uint32_t oldcap = s->pend_cap, live = 0, cap = 16;

	for (uint32_t i = 0; i < oldcap; i++)
		live += old[i].used && old[i].n;
	while (cap < 4 * (live + 1))
		cap *= 2;
	if (!(s->pend = calloc(cap, sizeof(*s->pend)))) {
		s->pend = old;
		return -ENOMEM;
	}
	s->pend_cap = cap;
	s->pend_used = 0;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].used && old[i].n) {
			*pend_slot(s, old[i].uid) = old[i];
			s->pend_used++;
		}
	free(old);
	return 0;
}

int mmi_pending_add(mm_state_t *s, uint32_t uid, int delta)
{
	struct mmi_uidcount *c;

	if (delta > 0 && 2 * (s->pend_used + 1) > s->pend_cap &&
	    pend_grow(s))
		return -ENOMEM;
	if (!s->pend_cap)
		return 0;
	c = pend_slot(s, uid);
	if (delta > 0) {
		if (!c->used) {
			c->used = 1;
			c->uid = uid;
			s->pend_used++;
		}
		c->n++;
		s->npending++;
	} else if (c->used && c->n) {
		c->n--;
		s->npending--;
	}
	return 0;
}

uint32_t mm_pending_count(const mm_state_t *s, uint32_t uid)
{
	if (uid == UINT32_MAX)
		return s->npending;
	return s->pend_cap ? pend_slot(s, uid)->n : 0;
}

int mmi_pending_rebuild(mm_state_t *s)
{
	free(s->pend);
	s->pend = NULL;
	s->pend_cap = s->pend_used = s->npending = 0;
	for (uint32_t i = s->live_lo; i < s->njobs; i++)
		if (s->jobs[i]->v.state == MM_JOB_PENDING &&
		    mmi_pending_add(s, s->jobs[i]->v.uid, 1))
			return -ENOMEM;
	return 0;
}

uint64_t mm_state_bytes(const mm_state_t *s)
{
	return s->state_bytes;
}

void mm_state_destroy(mm_state_t *s)
{
	if (!s)
		return;
	free(s->pend);
	free(s->creds);
	for (uint32_t i = 0; i < s->njobs; i++)
		mmi_job_free(s->jobs[i]);
	free(s->jobs);
	purged_clear(s);
	free(s->purged);
	mmi_matrix_free(s);
	free(s->nodes);
	free(s->node_at);
	free(s);
}

int mm_state_create(uint32_t nworld, uint32_t nnodes, const uint32_t *ids,
		    const char *const *names, const uint32_t *cpus,
		    mm_state_t **out)
{
	mm_state_t *s;

	if (!out || nworld == 0 || nworld > 65536 || nnodes == 0 ||
	    nnodes > nworld || !ids || !names || !cpus)
		return -EINVAL;
	for (uint32_t i = 0; i < nnodes; i++) {
		if (ids[i] >= nworld || cpus[i] == 0 || cpus[i] > MM_CPUS_MAX ||
		    !names[i] ||
		    strlen(names[i]) >= MM_NAME_MAX)
			return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->nworld = nworld;
	s->nnodes = nnodes;
	s->next_id = 1;
	s->min_end_ms = UINT64_MAX;
	s->creds_min_exp = UINT64_MAX;
	s->nodes = calloc(nnodes, sizeof(*s->nodes));
	s->node_at = malloc(nworld * sizeof(*s->node_at));
	if (!s->nodes || !s->node_at) {
		mm_state_destroy(s);
		return -ENOMEM;
	}
	/* The node table is kept in ascending world id whatever the order
	 * given, so placement and iteration do not depend on it. */
	for (uint32_t w = 0; w < nworld; w++)
		s->node_at[w] = -1;
	for (uint32_t i = 0; i < nnodes; i++) {
		if (s->node_at[ids[i]] >= 0) { /* the same id twice */
			mm_state_destroy(s);
			return -EINVAL;
		}
		s->node_at[ids[i]] = 0;
	}
	for (uint32_t w = 0, k = 0; w < nworld; w++) {
		if (s->node_at[w] >= 0)
			s->node_at[w] = (int32_t)k++;
	}
	for (uint32_t i = 0; i < nnodes; i++) {
		mm_node_t *n = &s->nodes[s->node_at[ids[i]]];

		n->id = ids[i];
		snprintf(n->name, sizeof(n->name), "%s", names[i]);
		n->cpus = cpus[i];
		/* in service once it has joined (NODE_UP), not before */
		n->state = MM_NODE_DOWN;
		snprintf(n->reason, sizeof(n->reason), "has not joined yet");
		s->total_cpus += cpus[i];
	}
	if (mmi_matrix_init(s)) {
		int rc = s->total_cpus > (1u << 24) ? -EINVAL : -ENOMEM;

		mm_state_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Ending jobs                                                              */
/* ------------------------------------------------------------------------ */

/* Move a job to a terminal state.  The caller formats the reason into
 * j->v.reason first (or leaves it as it should read). */
void mmi_job_end(mm_state_t *s, struct mm_jobrec *j, mm_job_state_t st)
{
	if (holds_cpus(j->v.state))
		s->active_gen++;
	if (holds_cpus(j->v.state))
		mmi_block_release(s, j);
	if (j->v.state == MM_JOB_PENDING)
		mmi_pending_add(s, j->v.uid, -1);
	j->v.state = st;
	j->v.ckpt_want = 0; /* an epoch in flight is dropped */
	j->v.ckpt_requeue = 0;
	j->v.end_slice = s->slice;
	j->v.end_ms = s->now_ms;
	s->nterminal++;
	if (j->v.end_ms < s->min_end_ms)
		s->min_end_ms = j->v.end_ms;
	while (s->live_lo < s->njobs &&
	       is_terminal(s->jobs[s->live_lo]->v.state))
		s->live_lo++;
	if (j->v.alloc)
		mmi_steps_end(s, j);
}

/* ------------------------------------------------------------------------ */
/* Job events and CANCEL                                                    */
/* ------------------------------------------------------------------------ */

static int find_job(mm_state_t *s, const char *what, uint32_t id,
		    struct mm_jobrec **out, mm_result_t *res)
{
	*out = job_of(s, id);
	if (!*out)
		return mmi_refuse(res, -ENOENT, "%s: no job %u in the state "
				  "(ids so far 1..%u; ended jobs move to the "
				  "history after the retention); check the id "
				  "or stormctl history", what, id,
				  s->next_id - 1);
	return 0;
}

static int refuse_ended(mm_result_t *res, const char *what,
			const struct mm_jobrec *j)
{
	return mmi_refuse(res, -EALREADY, "%s: job %u already ended (%s)", what,
			  j->v.id, mm_job_state_name(j->v.state));
}

static int op_job_staged(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	int rc = find_job(s, "job staged", op->job, &j, res);

	if (rc)
		return rc;
	if (j->v.state != MM_JOB_STAGING)
		return mmi_refuse(res, -EALREADY, "job staged: job %u is %s, "
				  "not STAGING; nothing to do", j->v.id,
				  mm_job_state_name(j->v.state));
	j->v.state = MM_JOB_RUNNING;
	return 0;
}

/* The job's exit code and reason from the first rank that did not exit
 * 0; returns 1 if there was one. */
static int first_failure(const struct mm_jobrec *j, const int32_t *st,
			 int32_t *code, char *reason, size_t len)
{
	for (uint32_t r = 0; r < j->v.ranks; r++) {
		int w = st[r];

		if (WIFEXITED(w) && WEXITSTATUS(w) == 0)
			continue;
		if (WIFEXITED(w)) {
			*code = WEXITSTATUS(w);
			mmi_fmt(reason, len, "rank %u exited with status %d", r,
				WEXITSTATUS(w));
		} else if (WIFSIGNALED(w)) {
			*code = 128 + WTERMSIG(w);
			mmi_fmt(reason, len, "rank %u killed by signal %d", r,
				WTERMSIG(w));
		} else {
			*code = 255;
			mmi_fmt(reason, len, "rank %u reported wait status "
				"0x%x (neither an exit nor a signal)", r,
				(unsigned)w);
		}
		return 1;
	}
	return 0;
}

static int op_job_exited(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	int32_t *copy;
	int rc = find_job(s, "job exited", op->job, &j, res);

	if (rc)
		return rc;
	if (is_terminal(j->v.state))
		return refuse_ended(res, "job exited", j);
	if (j->v.state == MM_JOB_PENDING)
		return mmi_refuse(res, -EINVAL, "job exited: job %u is PENDING "
				  "and has no ranks to exit; check the job id",
				  j->v.id);
	if (op->nstatus != j->v.ranks || !op->status)
		return mmi_refuse(res, -EINVAL, "job exited: %u statuses for "
				  "job %u of %u ranks; give one per rank",
				  op->nstatus, j->v.id, j->v.ranks);
	copy = malloc((size_t)j->v.ranks * sizeof(*copy));
	if (!copy)
		return mmi_refuse(res, -ENOMEM, "job exited: out of memory for "
				  "job %u's statuses", j->v.id);
	if (op->code == MM_OP_JOB_EXITED_USAGE) {
		mm_usage_t *u;

		if (!op->usage) {
			free(copy);
			return mmi_refuse(res, -EINVAL, "job exited: no usage "
					  "for job %u", j->v.id);
		}
		u = malloc((size_t)j->v.ranks * sizeof(*u));
		if (!u) {
			free(copy);
			return mmi_refuse(res, -ENOMEM, "job exited: out of "
					  "memory for job %u's usage",
					  j->v.id);
		}
		memcpy(u, op->usage, (size_t)j->v.ranks * sizeof(*u));
		j->rank_usage = u;
		j->v.rank_usage = u;
	}
	memcpy(copy, op->status, (size_t)j->v.ranks * sizeof(*copy));
	j->rank_status = copy;
	j->v.rank_status = copy;
	j->v.exit_code = 0;
	j->v.reason[0] = '\0';
	if (first_failure(j, copy, &j->v.exit_code, j->v.reason,
			  sizeof(j->v.reason)))
		mmi_job_end(s, j, MM_JOB_FAILED);
	else
		mmi_job_end(s, j, MM_JOB_COMPLETED);
	return 0;
}

static int op_job_failed(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	int rc = find_job(s, "job failed", op->job, &j, res);

	if (rc)
		return rc;
	if (is_terminal(j->v.state))
		return refuse_ended(res, "job failed", j);
	mmi_fmt(j->v.reason, sizeof(j->v.reason), "%s",
		op->reason && *op->reason ? op->reason : "failed");
	mmi_job_end(s, j, MM_JOB_FAILED);
	return 0;
}

static int op_cancel(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	int rc = find_job(s, "cancel", op->job, &j, res);

	if (rc)
		return rc;
	if (op->uid != 0 && op->uid != j->v.uid)
		return mmi_refuse(res, -EPERM, "cancel: job %u belongs to uid "
				  "%u, not to uid %u; only its owner or root "
				  "may cancel it", j->v.id, j->v.uid, op->uid);
	if (is_terminal(j->v.state))
		return refuse_ended(res, "cancel", j);
	if (op->uid == 0)
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "cancelled by root "
			"or an administrator");
	else
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "cancelled by uid "
			"%u", op->uid);
	mmi_job_end(s, j, MM_JOB_CANCELLED);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Nodes                                                                    */
/* ------------------------------------------------------------------------ */

static int find_node(mm_state_t *s, const char *what, uint32_t id,
		     mm_node_t **out, mm_result_t *res)
{
	*out = node_of(s, id);
	if (!*out)
		return mmi_refuse(res, -ENOENT, "%s: %u is not a compute node; "
				  "check the world id", what, id);
	return 0;
}

static int op_node_down(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	const char *why = op->reason && *op->reason ? op->reason : "down";
	mm_node_t *n;
	int rc = find_node(s, "node down", op->node, &n, res);

	if (rc)
		return rc;
	if (n->state == MM_NODE_DOWN)
		return 0;
	n->state = MM_NODE_DOWN;
	mmi_fmt(n->reason, sizeof(n->reason), "%s", why);
	n->failures++;
	/* its service time, for MOLAR's observed MTTF */
	if (s->now_ms > n->up_since_ms)
		n->up_ms += s->now_ms - n->up_since_ms;
	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		uint32_t e;

		if (!holds_cpus(j->v.state) || !sp_nodeset_has(j->nodes, n->id))
			continue;
		/* a job with an epoch whose images outlive a node runs on
		 * from it, on the nodes left */
		if (j->v.state == MM_JOB_RUNNING &&
		    j->v.restarts < MM_RESTARTS_MAX &&
		    (e = mmi_ckpt_last(j, MM_CKPT_SURVIVES))) {
			mmi_job_requeue(s, j, e);
			mmi_fmt(j->v.reason, sizeof(j->v.reason), "node %s "
				"failed: %s; restarting from checkpoint epoch "
				"%u", n->name, why, e);
			continue;
		}
		/* --requeue: no epoch to run on from, so from the start */
		if (j->v.requeue && j->v.restarts < MM_RESTARTS_MAX) {
			mmi_job_requeue(s, j, 0);
			mmi_fmt(j->v.reason, sizeof(j->v.reason), "node %s "
				"failed: %s; requeued (--requeue) to start "
				"over", n->name, why);
			continue;
		}
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "node %s failed: %s",
			n->name, why);
		mmi_job_end(s, j, MM_JOB_FAILED);
	}
	return 0;
}

static int op_node_up(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	mm_node_t *n;
	int rc = find_node(s, "node up", op->node, &n, res);

	if (rc)
		return rc;
	if (n->state != MM_NODE_UP)
		n->up_since_ms = s->now_ms;
	n->state = MM_NODE_UP;
	n->reason[0] = '\0';
	return 0;
}

/* Drain: no new job on the node.  Its running jobs that take
 * checkpoints (an interval, or --requeue) are checkpointed and queued
 * again, to run on from the epoch elsewhere (as CKPT_REQUEUE); the
 * others run to their end. */
static int op_node_drain(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	const char *why = op->reason && *op->reason ? op->reason : "drained";
	mm_node_t *n;
	int rc = find_node(s, op->code == MM_OP_NODE_DRAIN ? "drain" :
			   "resume", op->node, &n, res);

	if (rc)
		return rc;
	if (op->uid != 0)
		return mmi_refuse(res, -EPERM, "%s: only root may take node %s "
				  "%s service (uid %u asked)",
				  op->code == MM_OP_NODE_DRAIN ? "drain" :
				  "resume", n->name,
				  op->code == MM_OP_NODE_DRAIN ? "out of" :
				  "back into", op->uid);
	res->job = n->id; /* the answer names the node */
	if (op->code == MM_OP_NODE_RESUME) {
		n->drain = 0;
		n->drain_reason[0] = '\0';
		return 0;
	}
	n->drain = 1;
	mmi_fmt(n->drain_reason, sizeof(n->drain_reason), "%s", why);
	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		if (j->v.state != MM_JOB_RUNNING ||
		    !sp_nodeset_has(j->nodes, n->id) ||
		    !(j->v.ckpt_every_s || j->v.requeue) ||
		    j->v.restarts >= MM_RESTARTS_MAX)
			continue;
		if (!j->v.ckpt_want) {
			j->v.ckpt_want = ++j->v.ckpt_last;
			j->v.ckpt_want_slice = s->slice;
		}
		j->v.ckpt_requeue = 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* mm_apply: one handler per opcode                                         */
/* ------------------------------------------------------------------------ */

typedef int (*op_fn)(mm_state_t *, const mm_op_t *, mm_result_t *);

/* Indexed by mm_opcode_t, which is append-only: add a row, never renumber. */
static const op_fn op_table[] = {
	[MM_OP_SUBMIT] = mmi_op_submit,
	[MM_OP_CANCEL] = op_cancel,
	[MM_OP_TICK] = mmi_op_tick,
	[MM_OP_NODE_DOWN] = op_node_down,
	[MM_OP_NODE_UP] = op_node_up,
	[MM_OP_JOB_STAGED] = op_job_staged,
	[MM_OP_JOB_EXITED] = op_job_exited,
	[MM_OP_JOB_FAILED] = op_job_failed,
	[MM_OP_SCHED] = mmi_op_sched,
	[MM_OP_SUBMIT_CAPPED] = mmi_op_submit,
	[MM_OP_SUBMIT_LIMITS] = mmi_op_submit,
	[MM_OP_SUBMIT_INPUTS] = mmi_op_submit,
	[MM_OP_JOB_EXITED_USAGE] = op_job_exited,
	[MM_OP_TICK_RETAIN] = mmi_op_tick,
	[MM_OP_CRED] = mmi_op_cred,
	[MM_OP_CKPT_REQUEST] = mmi_op_ckpt_request,
	[MM_OP_CKPT_COMMIT] = mmi_op_ckpt_commit,
	[MM_OP_CKPT_ABORT] = mmi_op_ckpt_abort,
	[MM_OP_CKPT_RESTART] = mmi_op_ckpt_restart,
	[MM_OP_SUBMIT_CKPT] = mmi_op_submit,
	[MM_OP_CKPT_REQUEUE] = mmi_op_ckpt_request,
	[MM_OP_SUBMIT_SHAPE] = mmi_op_submit,
	[MM_OP_NODE_DRAIN] = op_node_drain,
	[MM_OP_NODE_RESUME] = op_node_drain,
	[MM_OP_SUBMIT_STEP] = mmi_op_submit,
};

int mm_apply(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	mm_result_t scratch;

	if (!res)
		res = &scratch;
	memset(res, 0, sizeof(*res));
	if (!s || !op)
		return mmi_refuse(res, -EINVAL,
				  "apply: no state or no operation");
	purged_clear(s); /* the shell has taken them since */
	if ((unsigned)op->code >= sizeof(op_table) / sizeof(op_table[0]) ||
	    !op_table[op->code])
		return mmi_refuse(res, -EINVAL, "apply: unknown operation code "
				  "%u; this manager is older than the log",
				  op->code);
	res->rc = op_table[op->code](s, op, res);
	return res->rc;
}

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */
/* ------------------------------------------------------------------------ */

int mm_job_get(const mm_state_t *s, uint32_t id, mm_job_t *out)
{
	const struct mm_jobrec *j;

	if (!s || !out)
		return -EINVAL;
	j = job_of(s, id);
	if (!j)
		return -ENOENT;
	*out = j->v;
	return 0;
}

int mm_job_next(const mm_state_t *s, uint32_t from, mm_job_t *out)
{
	uint32_t i;

	if (!s || !out)
		return -EINVAL;
	i = mmi_job_lower(s, from);
	if (i >= s->njobs)
		return -ENOENT;
	*out = s->jobs[i]->v;
	return 0;
}

uint32_t mm_live_from(const mm_state_t *s)
{
	if (!s)
		return 0;
	return s->live_lo < s->njobs ? s->jobs[s->live_lo]->v.id : s->next_id;
}

uint32_t mm_node_count(const mm_state_t *s)
{
	return s ? s->nnodes : 0;
}

int mm_node_get(const mm_state_t *s, uint32_t index, mm_node_t *out)
{
	if (!s || !out)
		return -EINVAL;
	if (index >= s->nnodes)
		return -ENOENT;
	*out = s->nodes[index];
	return 0;
}

int mm_node_by_id(const mm_state_t *s, uint32_t world_id, mm_node_t *out)
{
	if (!s || !out)
		return -EINVAL;
	if (world_id >= s->nworld || s->node_at[world_id] < 0)
		return -ENOENT;
	*out = s->nodes[s->node_at[world_id]];
	return 0;
}

uint64_t mm_slice(const mm_state_t *s)
{
	return s ? s->slice : 0;
}

uint64_t mm_now_ms(const mm_state_t *s)
{
	return s ? s->now_ms : 0;
}

uint64_t mm_active_gen(const mm_state_t *s)
{
	return s->active_gen;
}
