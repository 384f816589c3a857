/*
 * sched.c — MM_OP_TICK, the only moment things happen: jobs past their
 * time limit end, then pending jobs are placed first come, first served.
 *
 * Invariant: strict FCFS — pending jobs are considered in id order and
 * once one cannot be placed, none after it is; placement fills UP nodes
 * in ascending world id, so the same state and tick give the same
 * allocation on every replica.
 */
#include <assert.h>
#include <errno.h>

#include "mm_internal.h"

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

static uint64_t free_cpus(const mm_state_t *s, const sp_nodeset_t *want)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < s->nnodes; i++) {
		const mm_node_t *n = &s->nodes[i];

		if (n->state != MM_NODE_UP ||
		    (want && !sp_nodeset_has(want, n->id)))
			continue;
		sum += n->cpus - n->used;
	}
	return sum;
}

/* Fill UP nodes in ascending world id, each up to its free cpus. */
static void place(mm_state_t *s, struct mm_jobrec *j)
{
	uint32_t r = 0;

	sp_nodeset_clear(j->nodes);
	for (uint32_t i = 0; i < s->nnodes && r < j->v.ranks; i++) {
		mm_node_t *n = &s->nodes[i];

		if (n->state != MM_NODE_UP ||
		    (j->want && !sp_nodeset_has(j->want, n->id)))
			continue;
		if (n->used < n->cpus)
			sp_nodeset_add(j->nodes, n->id);
		while (n->used < n->cpus && r < j->v.ranks) {
			j->rank_node[r++] = n->id;
			n->used++;
		}
	}
	/* schedule() checked free_cpus() first */
	assert(r == j->v.ranks);
	j->v.state = MM_JOB_STAGING;
	s->active_gen++;
	j->v.reason[0] = '\0';
	j->v.start_slice = s->slice;
	j->v.start_ms = s->now_ms;
}

static void schedule(mm_state_t *s)
{
	uint32_t head = 0; /* id of the first job that could not be placed */

	for (uint32_t i = s->live_lo; i < s->njobs; i++) {
		struct mm_jobrec *j = s->jobs[i];

		if (j->v.state != MM_JOB_PENDING)
			continue;
		if (head) {
			/* the text is the same as the last tick wrote unless
			 * the head changed: no formatting per waiting job per
			 * tick (thousands wait during a burst) */
			if (j->behind != head) {
				j->behind = head;
				mmi_fmt(j->v.reason, sizeof(j->v.reason),
					"queued behind job %u", head);
			}
			continue;
		}
		j->behind = 0;
		if (free_cpus(s, j->want) >= j->v.ranks) {
			place(s, j);
			continue;
		}
		head = j->v.id;
		mmi_fmt(j->v.reason, sizeof(j->v.reason),
			"waiting for %u free cpus (head of queue)",
			j->v.ranks);
	}
}

int mmi_op_tick(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	if (op->slice < s->slice)
		return mmi_refuse(res, -EINVAL, "tick: slice %llu is older "
				  "than the current slice %llu; slices only "
				  "move forward", (unsigned long long)op->slice,
				  (unsigned long long)s->slice);
	s->slice = op->slice;
	/* A clock that steps back (a new leader) must not make time run
	 * backwards inside the state: keep now_ms monotonic. */
	if (op->now_ms > s->now_ms)
		s->now_ms = op->now_ms;
	enforce_time_limits(s);
	schedule(s);
	return 0;
}
