/*
 * step.c — batch allocations and their steps.
 *
 * An allocation is a job like any other in the matrix: it holds a buddy
 * block, its ranks placed as its shape says, but only its rank 0 runs
 * (the batch script); the other ranks are task slots.  A step is a job of
 * the same owner submitted from inside the allocation (stormctl run with
 * STORM_JOB_ID set).  It takes no block: it runs on a contiguous run of
 * its parent's task slots [first, first + ranks) that no other running
 * step of the parent holds, in the parent's gang row, so it is stopped
 * and continued with its allocation.  Its row, col (the parent's col +
 * first) and width (its ranks) say where it is; its done slot lies in the
 * matrix rows after MM_MPL_MAX (mm_job_done_slot()), so it never meets a
 * block's.  A step has its own state, exit statuses and usage; when its
 * allocation ends, its steps that have not are cancelled.
 *
 * Steps are few per allocation: finding free slots scans the jobs after
 * the parent, which only a pending step of a running allocation pays.
 */
#include <errno.h>
#include <string.h>

#include "mm_internal.h"

uint32_t mm_job_done_slot(const mm_state_t *s, const mm_job_t *j)
{
	if (j->parent)
		return (MM_MPL_MAX + j->row) * s->ncols + j->col;
	return j->row * s->ncols + j->col;
}

/* The first run of want free task slots of parent p (steps of it holding
 * PEs hold theirs), or UINT32_MAX; *used gets the slots in use. */
static uint32_t free_slots(const mm_state_t *s, const struct mm_jobrec *p,
			   uint32_t want, uint32_t *used)
{
	uint32_t first = 0;
	int moved = 1;

	*used = 0;
	for (uint32_t i = mmi_job_lower(s, p->v.id + 1); i < s->njobs; i++) {
		const struct mm_jobrec *t = s->jobs[i];

		if (t->v.parent == p->v.id && holds_cpus(t->v.state))
			*used += t->v.width;
	}
	/* first fit: move past every step overlapping [first, +want) until
	 * none does (steps do not overlap, so this ends) */
	while (moved && first + want <= p->v.ranks) {
		moved = 0;
		for (uint32_t i = mmi_job_lower(s, p->v.id + 1);
		     i < s->njobs; i++) {
			const struct mm_jobrec *t = s->jobs[i];
			uint32_t lo, hi;

			if (t->v.parent != p->v.id || !holds_cpus(t->v.state))
				continue;
			lo = t->v.col - p->v.col;
			hi = lo + t->v.width;
			if (lo < first + want && first < hi) {
				first = hi;
				moved = 1;
			}
		}
	}
	return first + want <= p->v.ranks ? first : UINT32_MAX;
}

int mmi_step_place(mm_state_t *s, struct mm_jobrec *j)
{
	struct mm_jobrec *p = mmi_job_of(s, j->v.parent);
	uint32_t first, used;

	if (!p || is_terminal(p->v.state)) {
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "its allocation, "
			"job %u, ended before it could start", j->v.parent);
		mmi_job_end(s, j, MM_JOB_CANCELLED);
		return 0;
	}
	if (p->v.state != MM_JOB_RUNNING) {
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "waiting for its "
			"allocation, job %u, to run", p->v.id);
		return 0;
	}
	first = free_slots(s, p, j->v.ranks, &used);
	if (first == UINT32_MAX) {
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "waiting for %u "
			"free task slot%s of allocation %u (%u of its %u in "
			"use by other steps)", j->v.ranks,
			j->v.ranks == 1 ? "" : "s", p->v.id, used, p->v.ranks);
		return 0;
	}
	sp_nodeset_clear(j->nodes);
	for (uint32_t r = 0; r < j->v.ranks; r++) {
		j->rank_node[r] = p->rank_node[first + r];
		sp_nodeset_add(j->nodes, j->rank_node[r]);
	}
	j->v.row = p->v.row;
	j->v.col = p->v.col + first;
	j->v.width = j->v.ranks;
	j->v.cpus_per_task = p->v.cpus_per_task;
	mmi_pending_add(s, j->v.uid, -1);
	j->v.state = MM_JOB_STAGING;
	s->active_gen++;
	j->v.reason[0] = '\0';
	j->v.start_slice = s->slice;
	j->v.start_ms = s->now_ms;
	return 1;
}

void mmi_steps_end(mm_state_t *s, const struct mm_jobrec *p)
{
	for (uint32_t i = mmi_job_lower(s, p->v.id + 1); i < s->njobs; i++) {
		struct mm_jobrec *t = s->jobs[i];

		if (t->v.parent != p->v.id || is_terminal(t->v.state))
			continue;
		mmi_fmt(t->v.reason, sizeof(t->v.reason), "its allocation, "
			"job %u, ended (%s)", p->v.id,
			mm_job_state_name(p->v.state));
		mmi_job_end(s, t, MM_JOB_CANCELLED);
	}
}

int mmi_step_check(mm_state_t *s, const mm_job_spec_t *sp, mm_result_t *res)
{
	const struct mm_jobrec *p;

	if (sp->alloc && sp->parent)
		return mmi_refuse(res, -EINVAL, "submit: a step (of job %u) "
				  "cannot be an allocation itself",
				  sp->parent);
	if (sp->alloc && (sp->ckpt_every_s || sp->requeue ||
			  sp->array_count))
		return mmi_refuse(res, -EINVAL, "submit: a batch allocation "
				  "takes no checkpoints, --requeue or --array; "
				  "drop them");
	if (!sp->parent)
		return 0;
	if (!(p = mmi_job_of(s, sp->parent)))
		return mmi_refuse(res, -ENOENT, "step: no job %u in the state "
				  "(STORM_JOB_ID names the allocation a step "
				  "runs in); unset STORM_JOB_ID to submit a "
				  "job of its own", sp->parent);
	if (!p->v.alloc)
		return mmi_refuse(res, -EINVAL, "step: job %u is not a batch "
				  "allocation (stormctl batch makes one); "
				  "unset STORM_JOB_ID to submit a job of its "
				  "own", p->v.id);
	if (sp->uid != p->v.uid)
		return mmi_refuse(res, -EPERM, "step: allocation %u belongs to "
				  "uid %u, not to uid %u; only its owner "
				  "starts steps in it", p->v.id, p->v.uid,
				  sp->uid);
	if (is_terminal(p->v.state))
		return mmi_refuse(res, -EINVAL, "step: allocation %u has ended "
				  "(%s)", p->v.id,
				  mm_job_state_name(p->v.state));
	if (sp->ranks > p->v.ranks)
		return mmi_refuse(res, -EINVAL, "step: %u ranks, but "
				  "allocation %u has %u task slots; ask for at "
				  "most %u", sp->ranks, p->v.id, p->v.ranks,
				  p->v.ranks);
	if ((sp->nodelist && *sp->nodelist) || sp->cpus_per_task > 1 ||
	    sp->tasks_per_node || sp->node_count || sp->dep_type ||
	    sp->array_count || sp->ckpt_every_s || sp->requeue)
		return mmi_refuse(res, -EINVAL, "step: a step runs on its "
				  "allocation's task slots (its shape): give "
				  "-n alone, not a nodelist, -N, -c, "
				  "--ntasks-per-node, a dependency, an array "
				  "or checkpoints");
	return 0;
}
