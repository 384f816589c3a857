/*
 * sched.c — MM_OP_TICK, the only moment things happen (jobs past their
 * time limit end, then pending jobs are placed in the matrix), and
 * MM_OP_SCHED (the scheduler's settings).
 *
 * Policies, all over buddy blocks (matrix.c), pending jobs in id order:
 *  - fcfs: one row; once a job cannot be placed, none after it is;
 *  - backfill (EASY): one row; the first job that cannot be placed (the
 *    head) gets a reservation — the time every job holding PEs reaches its
 *    time limit early enough for the head's block to be free (the shadow
 *    time) and that block.  A later job starts now only if a block is free
 *    now and it cannot delay the reservation: its block misses the
 *    reserved one, or its own time limit ends it by the shadow time.  Jobs
 *    never outlive their limits (ended at the TICK after), so the head
 *    starts by its shadow time up to one TICK's resolution;
 *  - gang: mpl rows, each job in the first row with a block for it; strict
 *    order like fcfs (a job that fits nowhere holds the ones behind it, so
 *    a wide job is never starved by narrow ones).
 *
 * Expected starts replay this very scheduler forward in time on a light
 * copy of the state, every job running to its limit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

#define END_NEVER UINT64_MAX

static uint64_t end_of(const struct mm_jobrec *j, uint64_t start)
{
	return j->v.time_limit_ms ? start + j->v.time_limit_ms : END_NEVER;
}

static void enforce_time_limits(mm_state_t *s)
{
	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		if (!holds_cpus(j->v.state) || !j->v.time_limit_ms)
			continue;
		if (s->now_ms - j->v.start_ms <= j->v.time_limit_ms)
			continue;
		mmi_fmt(j->v.reason, sizeof(j->v.reason),
			"time limit of %llu ms exceeded",
			(unsigned long long)j->v.time_limit_ms);
		mmi_job_end(s, j, MM_JOB_FAILED);
	}
}

static void start(mm_state_t *s, struct mm_jobrec *j, uint32_t row,
		  uint32_t col, uint32_t width)
{
	mmi_block_take(s, j, row, col, width);
	mmi_pending_add(s, j->v.uid, -1);
	j->v.state = MM_JOB_STAGING;
	s->active_gen++;
	j->v.reason[0] = '\0';
	j->v.start_slice = s->slice;
	j->v.start_ms = s->now_ms;
}

static uint32_t *row_cells(mm_state_t *s, uint32_t row)
{
	return s->cells + (size_t)row * s->ncols;
}

/* The first row (of rows) with a block for j: placed there. */
static int place_first_fit(mm_state_t *s, struct mm_jobrec *j, uint32_t rows)
{
	uint32_t col, width;

	for (uint32_t r = 0; r < rows; r++)
		if (s->rowuse[r] + j->v.ranks <= s->ncols &&
		    mmi_find_block(s, row_cells(s, r), j, &col, &width) == 0) {
			start(s, j, r, col, width);
			return 1;
		}
	return 0;
}

static int by_end(const void *a, const void *b)
{
	const struct mmi_holder *x = a, *y = b;

	if (x->end_ms != y->end_ms)
		return x->end_ms < y->end_ms ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/* EASY's reservation for head in row 0: release the jobs holding PEs
 * there in the order they must end until a block for head is free.
 * 0 and *resv (end_ms = the shadow time, END_NEVER when it waits for a
 * job without a limit), or -ENOSPC (no block even on an empty row: its
 * nodes are down). */
static int reserve(mm_state_t *s, const struct mm_jobrec *head,
		   struct mmi_holder *resv)
{
	uint32_t nh = 0, col, width;

	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		const struct mm_jobrec *j = s->jobs[i];

		if (holds_cpus(j->v.state) && j->v.row == 0 && !j->v.parent)
			s->holders[nh++] = (struct mmi_holder){
				end_of(j, j->v.start_ms), j->v.id, 0,
				j->v.col, j->v.width };
	}
	qsort(s->holders, nh, sizeof(*s->holders), by_end);
	memcpy(s->scratch, row_cells(s, 0), s->ncols * sizeof(*s->scratch));
	for (uint32_t i = 0; i < nh; i++) {
		const struct mmi_holder *h = &s->holders[i];

		for (uint32_t c = h->col; c < h->col + h->width &&
		     c < s->ncols; c++)
			s->scratch[c] = 0;
		/* everything that ends at the same time goes together */
		if (i + 1 < nh && s->holders[i + 1].end_ms == h->end_ms)
			continue;
		if (mmi_find_block(s, s->scratch, head, &col, &width) == 0) {
			*resv = (struct mmi_holder){ h->end_ms, head->v.id, 0,
						     col, width };
			return 0;
		}
	}
	return -ENOSPC;
}

/* EASY: start j now if a block is free and it cannot delay resv. */
static int backfill(mm_state_t *s, struct mm_jobrec *j,
		    const struct mmi_holder *resv, int have_resv)
{
	uint32_t col, width;
	uint64_t end = end_of(j, s->now_ms);

	if (s->rowuse[0] + j->v.ranks > s->ncols ||
	    mmi_find_block(s, row_cells(s, 0), j, &col, &width))
		return 0;
	if (have_resv && col < resv->col + resv->width &&
	    resv->col < col + width &&
	    (end == END_NEVER || resv->end_ms == END_NEVER ||
	     end > resv->end_ms)) {
		/* the tightest block would delay the head, but another free
		 * one that misses the reserved block will do: search the row
		 * with that block taken (scratch is free once reserve() ran;
		 * blocks nest, so any block found misses it) */
		memcpy(s->scratch, row_cells(s, 0),
		       s->ncols * sizeof(*s->scratch));
		for (uint32_t c = resv->col;
		     c < resv->col + resv->width && c < s->ncols; c++)
			s->scratch[c] = UINT32_MAX;
		if (mmi_find_block(s, s->scratch, j, &col, &width))
			return 0;
	}
	start(s, j, 0, col, width);
	return 1;
}

static void head_reason(mm_state_t *s, struct mm_jobrec *j,
			const struct mmi_holder *resv, int have_resv)
{
	uint32_t w = 1;

	while (w < j->v.ranks)
		w <<= 1;
	if (s->conf.policy != MM_POLICY_BACKFILL)
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "head of queue: "
			"waiting for a free block of width %u (%u rank%s)%s", w,
			j->v.ranks, j->v.ranks == 1 ? "" : "s",
			s->conf.mpl > 1 ? " in any row" : "");
	else if (!have_resv)
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "head of queue: "
			"no block of width %u even on an idle machine (nodes "
			"are down); waiting for nodes", w);
	else if (resv->end_ms == END_NEVER)
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "head of queue: "
			"block of width %u at column %u reserved; its start "
			"waits for jobs without a time limit", resv->width,
			resv->col);
	else
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "head of queue: "
			"block of width %u at column %u reserved from %llu ms "
			"(when running jobs reach their limits)", resv->width,
			resv->col, (unsigned long long)resv->end_ms);
}

/* Arrays' tasks holding PEs, counted once per pass. */
struct arrays {
	uint32_t *id, *running;
	uint32_t n, cap;
};

static uint32_t *array_count(struct arrays *a, uint32_t id)
{
	for (uint32_t k = 0; k < a->n; k++)
		if (a->id[k] == id)
			return &a->running[k];
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? 2 * a->cap : 16;
		uint32_t *i = realloc(a->id, cap * sizeof(*i));

		if (i)
			a->id = i;
		uint32_t *r = realloc(a->running, cap * sizeof(*r));

		if (r)
			a->running = r;
		if (!i || !r)
			return NULL;
		a->cap = cap;
	}
	a->id[a->n] = id;
	a->running[a->n] = 0;
	return &a->running[a->n++];
}

static const char *const dep_names[] = {
	[MM_DEP_AFTEROK] = "afterok", [MM_DEP_AFTERANY] = "afterany",
	[MM_DEP_AFTERNOTOK] = "afternotok",
};

/* A PENDING job that may not start yet: its dependency has not ended
 * (or ended the wrong way: it is CANCELLED, saying why), or its array
 * has its most tasks running.  1 held (its reason says why), 0 free. */
static int held(mm_state_t *s, struct mm_jobrec *j, struct arrays *a)
{
	if (j->v.dep_type) {
		const struct mm_jobrec *d = mmi_job_of(s, j->v.dep_job);
		int ok = -1; /* -1 wait, 0 never, 1 met */

		if (!d)
			ok = j->v.dep_type == MM_DEP_AFTERANY;
		else if (is_terminal(d->v.state))
			ok = j->v.dep_type == MM_DEP_AFTERANY ||
			     (j->v.dep_type == MM_DEP_AFTEROK) ==
			     (d->v.state == MM_JOB_COMPLETED);
		if (ok < 0) {
			mmi_fmt(j->v.reason, sizeof(j->v.reason), "dependency: "
				"waiting for job %u to end (%s)", j->v.dep_job,
				dep_names[j->v.dep_type]);
			return 1;
		}
		if (!ok) {
			mmi_fmt(j->v.reason, sizeof(j->v.reason), "dependency "
				"never satisfied: job %u %s (%s:%u)",
				j->v.dep_job, d ? mm_job_state_name(d->v.state) :
				"left the state before its end could be "
				"judged", dep_names[j->v.dep_type],
				j->v.dep_job);
			mmi_job_end(s, j, MM_JOB_CANCELLED);
			return 1;
		}
		j->v.dep_type = MM_DEP_NONE; /* met: for good */
		j->v.dep_job = 0;
	}
	if (j->v.array_id && j->v.array_max) {
		uint32_t *run = array_count(a, j->v.array_id);

		if (run && *run >= j->v.array_max) {
			mmi_fmt(j->v.reason, sizeof(j->v.reason), "array %u: "
				"%u of its tasks running, its most at once",
				j->v.array_id, *run);
			return 1;
		}
	}
	return 0;
}

static void schedule(mm_state_t *s)
{
	struct mmi_holder resv = { 0 };
	uint32_t head = 0, rows = mmi_rows(s);
	int easy = s->conf.policy == MM_POLICY_BACKFILL, have_resv = 0;
	struct arrays arr = { 0 };

	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];
		uint32_t *run;

		if (j->v.array_id && j->v.array_max && holds_cpus(j->v.state) &&
		    (run = array_count(&arr, j->v.array_id)))
			++*run;
	}
	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		if (j->v.state != MM_JOB_PENDING)
			continue;
		/* a step waits only for its allocation's slots: it blocks
		 * no one and takes no block */
		if (j->v.parent) {
			mmi_step_place(s, j);
			continue;
		}
		/* held jobs wait aside: they block no one behind them */
		if ((j->v.dep_type || (j->v.array_id && j->v.array_max)) &&
		    held(s, j, &arr))
			continue;
		if (head && easy && backfill(s, j, &resv, have_resv)) {
			uint32_t *run;

			if (holds_cpus(j->v.state) && j->v.array_id &&
			    j->v.array_max &&
			    (run = array_count(&arr, j->v.array_id)))
				++*run;
			continue;
		}
		if (head) {
			/* the same text as the last tick wrote unless the
			 * head changed: no formatting per waiting job per
			 * tick (thousands wait during a burst) */
			if (j->behind != head) {
				j->behind = head;
				mmi_fmt(j->v.reason, sizeof(j->v.reason),
					easy ? "queued behind job %u (no free "
					"block that would not delay its "
					"reservation)" : "queued behind job %u",
					head);
			}
			continue;
		}
		j->behind = 0;
		if (place_first_fit(s, j, rows)) {
			uint32_t *run;

			if (j->v.array_id && j->v.array_max &&
			    (run = array_count(&arr, j->v.array_id)))
				++*run;
			continue;
		}
		head = j->v.id;
		if (easy)
			have_resv = reserve(s, j, &resv) == 0;
		head_reason(s, j, &resv, have_resv);
	}
	free(arr.id);
	free(arr.running);
}

int mmi_op_tick(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	uint64_t prev_now = s->now_ms;

	if (op->slice < s->slice)
		return mmi_refuse(res, -EINVAL, "tick: slice %llu is older "
				  "than the current slice %llu; slices only "
				  "move forward", (unsigned long long)op->slice,
				  (unsigned long long)s->slice);
	if (op->code == MM_OP_TICK_RETAIN && op->retain_jobs == 0 &&
	    op->retain_ms == 0)
		return mmi_refuse(res, -EINVAL, "tick: a retention of 0 jobs "
				  "and 0 ms would drop ended jobs unseen; "
				  "give job_retention (jobs) or "
				  "job_retention_s (age) above 0");
	s->slice = op->slice;
	/* A clock that steps back (a new leader) must not make time run
	 * backwards inside the state: keep now_ms monotonic. */
	if (op->now_ms > s->now_ms)
		s->now_ms = op->now_ms;
	enforce_time_limits(s);
	schedule(s);
	mmi_creds_prune(s);
	if (op->code == MM_OP_TICK_RETAIN)
		mmi_retain(s, op->retain_jobs, op->retain_ms, prev_now);
	return 0;
}

/* ---- retention ------------------------------------------------------------ */

/* Terminal jobs leave the table for the shell's history (mm_purged())
 * when there are more than keep of them (the lowest ids go, down to
 * keep - keep/16 so that removals come in batches, not one per tick) or
 * when they ended keep_ms or more ago (looked at once per second of
 * state time).  0 leaves that rule out.  One pass compacts the table,
 * so the cost is O(jobs in the table) per purge and nothing per tick
 * otherwise; it never allocates (purged has jobcap room). */
void mmi_retain(mm_state_t *s, uint32_t keep, uint64_t keep_ms,
		uint64_t prev_now_ms)
{
	uint32_t over = 0, w = 0;
	uint64_t cutoff = 0, min_end = UINT64_MAX;

	if (keep && s->nterminal > keep)
		over = s->nterminal - (keep - keep / 16);
	if (keep_ms && s->now_ms / 1000 != prev_now_ms / 1000 &&
	    s->now_ms >= keep_ms && s->min_end_ms <= s->now_ms - keep_ms)
		cutoff = s->now_ms - keep_ms + 1; /* ended before: out */
	if (!over && !cutoff)
		return;
	for (uint32_t i = 0; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		if (is_terminal(j->v.state) &&
		    (over || j->v.end_ms < cutoff)) {
			if (over)
				over--;
			s->purged[s->npurged++] = j;
			s->nterminal--;
			s->state_bytes -= mmi_job_bytes(j);
			continue;
		}
		if (is_terminal(j->v.state) && j->v.end_ms < min_end)
			min_end = j->v.end_ms;
		s->jobs[w++] = j;
	}
	s->njobs = w;
	s->min_end_ms = min_end;
	s->live_lo = 0;
	while (s->live_lo < s->njobs &&
	       is_terminal(s->jobs[s->live_lo]->v.state))
		s->live_lo++;
}

/* ---- MM_OP_SCHED ------------------------------------------------------------ */

int mmi_op_sched(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	char why[200];

	if (mm_sched_check(op->sched, why, sizeof(why)))
		return mmi_refuse(res, -EINVAL, "sched: %s", why);
	for (uint32_t r = op->sched->mpl; r < s->conf.mpl; r++)
		if (s->rowuse[r])
			return mmi_refuse(res, -EBUSY, "sched: row %u still "
					  "holds jobs, so the MPL cannot drop "
					  "to %u; wait for them to end or "
					  "cancel them (stormctl matrix)", r,
					  op->sched->mpl);
	if (mmi_matrix_grow(s, op->sched->mpl))
		return mmi_refuse(res, -ENOMEM, "sched: out of memory for %u "
				  "matrix rows", op->sched->mpl);
	s->conf = *op->sched;
	/* waiting jobs' reasons are rewritten at the next tick */
	for (uint32_t i = s->live_lo; i < s->njobs; i++)
		s->jobs[i]->behind = 0;
	return 0;
}

int mm_state_set_sched(mm_state_t *s, const mm_sched_conf_t *c)
{
	if (!s || mm_sched_check(c, NULL, 0) || s->njobs)
		return -EINVAL;
	if (mmi_matrix_grow(s, c->mpl))
		return -ENOMEM;
	s->conf = *c;
	return 0;
}

/* ---- expected starts ---------------------------------------------------------- */

/* A copy of s that TICK can run on: everything the scheduler reads or
 * writes, live jobs copied shallowly (their spec is only read), ended
 * ones replaced by one shared terminal record. */
struct sim {
	mm_state_t st;
	struct mm_jobrec ended;
};

static void sim_free(struct sim *m)
{
	mm_state_t *s = &m->st;

	for (uint32_t i = 0; s->jobs && i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		if (!j || j == &m->ended)
			continue;
		free(j->rank_node);
		sp_nodeset_destroy(j->nodes);
		free(j);
	}
	free(s->jobs);
	free(s->nodes);
	mmi_matrix_free(s);
	free(m);
}

static struct sim *sim_new(const mm_state_t *o, uint32_t last)
{
	struct sim *m = calloc(1, sizeof(*m));
	mm_state_t *s;
	size_t cells = (size_t)o->rows_alloc * o->ncols;

	if (!m)
		return NULL;
	s = &m->st;
	*s = *o;
	s->jobs = NULL;
	s->nodes = NULL;
	s->col_node = NULL;
	s->cells = NULL;
	s->rowuse = NULL;
	s->tree = NULL;
	s->scratch = NULL;
	s->holders = NULL;
	s->first = NULL;
	/* the pending counts and the purged list are the original's: the
	 * replay must not touch them (admission caps read the counts) */
	s->pend = NULL;
	s->pend_cap = s->pend_used = 0;
	s->purged = NULL;
	s->npurged = 0;
	m->ended.v.state = MM_JOB_COMPLETED;
	s->jobs = calloc(o->njobs ? o->njobs : 1, sizeof(*s->jobs));
	s->nodes = malloc(o->nnodes * sizeof(*s->nodes));
	s->col_node = malloc(o->ncols * sizeof(*s->col_node));
	s->cells = malloc(cells * sizeof(*s->cells));
	s->rowuse = malloc(MM_MPL_MAX * sizeof(*s->rowuse));
	s->tree = malloc(2 * (size_t)o->pow2);
	s->scratch = malloc(o->ncols * sizeof(*s->scratch));
	s->holders = malloc(o->ncols * sizeof(*s->holders));
	s->first = malloc((o->ncols ? o->ncols : 1) * sizeof(*s->first));
	if (!s->jobs || !s->nodes || !s->col_node || !s->cells ||
	    !s->rowuse || !s->tree || !s->scratch || !s->holders ||
	    !s->first) {
		sim_free(m);
		return NULL;
	}
	memcpy(s->nodes, o->nodes, o->nnodes * sizeof(*s->nodes));
	memcpy(s->col_node, o->col_node, o->ncols * sizeof(*s->col_node));
	memcpy(s->cells, o->cells, cells * sizeof(*s->cells));
	memcpy(s->rowuse, o->rowuse, MM_MPL_MAX * sizeof(*s->rowuse));
	for (uint32_t i = 0; i < o->njobs; i++) {
		const struct mm_jobrec *j = o->jobs[i];
		struct mm_jobrec *c;

		/* pending jobs after the last one asked about leave it out:
		 * exact for fcfs and gang (strict order), and under backfill
		 * they could only take PEs from the ones asked about */
		/* steps too: they take no block */
		if (i < o->live_lo || is_terminal(j->v.state) ||
		    j->v.parent ||
		    (j->v.id > last && j->v.state == MM_JOB_PENDING)) {
			s->jobs[i] = &m->ended;
			continue;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			sim_free(m);
			return NULL;
		}
		*c = *j;
		c->v.alloc = 0; /* the replay holds no steps to end */
		c->rank_node = malloc(j->v.ranks * sizeof(*c->rank_node));
		c->nodes = NULL;
		s->jobs[i] = c;
		if (!c->rank_node || sp_nodeset_create(o->nworld, &c->nodes) ||
		    sp_nodeset_copy(c->nodes, j->nodes)) {
			sim_free(m);
			return NULL;
		}
		memcpy(c->rank_node, j->rank_node,
		       j->v.ranks * sizeof(*c->rank_node));
	}
	return m;
}

int mm_expected_starts(const mm_state_t *o, uint32_t max, uint32_t *ids,
		       uint64_t *start_ms)
{
	struct sim *m;
	mm_state_t *s;
	uint32_t n = 0, got = 0, *at;

	if (!o || (max && (!ids || !start_ms)))
		return -EINVAL;
	for (uint32_t i = o->live_lo; n < max && i < o->njobs; i++)
		if (o->jobs[i]->v.state == MM_JOB_PENDING &&
		    !o->jobs[i]->v.parent) {
			ids[n] = o->jobs[i]->v.id;
			start_ms[n++] = 0;
		}
	if (!n)
		return 0;
	/* where each is in the table (the copy keeps the same places) */
	at = malloc(n * sizeof(*at));
	m = at ? sim_new(o, ids[n - 1]) : NULL;
	if (!m) {
		free(at);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < n; k++)
		at[k] = mmi_job_lower(o, ids[k]);
	s = &m->st;
	/* each round: schedule at time t, then jump to the next end */
	for (uint32_t round = 0; got < n && round < 4 * n + s->ncols; round++) {
		uint64_t next = END_NEVER;

		schedule(s);
		for (uint32_t k = 0; k < n; k++) {
			const struct mm_jobrec *j = s->jobs[at[k]];

			if (!start_ms[k] && j->v.state != MM_JOB_PENDING) {
				start_ms[k] = s->now_ms ? s->now_ms : 1;
				got++;
			}
		}
		for (uint32_t i = s->live_lo; i < s->njobs; i++) {
			const struct mm_jobrec *j = s->jobs[i];
			uint64_t e;

			if (!holds_cpus(j->v.state))
				continue;
			e = end_of(j, j->v.start_ms);
			next = e < next ? e : next;
		}
		if (next == END_NEVER)
			break; /* the rest wait for jobs without a limit */
		if (next > s->now_ms)
			s->now_ms = next;
		for (uint32_t i = s->live_lo; i < s->njobs; i++) {
			struct mm_jobrec *j = s->jobs[i];

			if (holds_cpus(j->v.state) &&
			    end_of(j, j->v.start_ms) <= s->now_ms)
				mmi_job_end(s, j, MM_JOB_COMPLETED);
		}
	}
	sim_free(m);
	free(at);
	return (int)n;
}
