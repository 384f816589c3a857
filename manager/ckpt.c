/*
 * ckpt.c — the replicated checkpoint catalog (docs/checkpoint.md §3): which
 * epoch of a job is being taken, and which are committed, so that only a
 * committed epoch is ever restarted and every replica agrees which.
 *
 *   state \\ op    CKPT_REQUEST            CKPT_COMMIT e        CKPT_ABORT e
 *   none          want = ++last; epoch    -ESTALE              -ESTALE
 *   want = e      epoch e again           catalog += e;        want = 0,
 *                 (idempotent)            want = 0, error ""   error = reason
 *   want = f != e (as above)              -ESTALE              -ESTALE
 *
 * REQUEUE is REQUEST with a mark: the COMMIT of that epoch then also
 * queues the job again (as RESTART does); an ABORT clears the mark.
 *
 * RESTART (by hand, or NODE_DOWN of a node of a job with an epoch that
 * survives a node's loss) releases the job's block and queues it again,
 * PENDING with restore_epoch: placed anew, its nodes restore its ranks
 * from that epoch's images instead of starting them.
 *
 * A REQUEST of a job not RUNNING is refused (-EAGAIN before it runs,
 * -EALREADY once it ended), as is one of another user's job (-EPERM).
 * When a job ends its pending epoch is dropped (mmi_job_end); its
 * catalog stays with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

static int job(mm_state_t *s, const char *what, const mm_op_t *op,
	       struct mm_jobrec **out, mm_result_t *res)
{
	if (!(*out = mmi_job_of(s, op->job)))
		return mmi_refuse(res, -ENOENT, "%s: no job %u in the state; "
				  "check the id (stormctl queue)", what,
				  op->job);
	return 0;
}

int mmi_op_ckpt_request(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	int rc = job(s, "checkpoint", op, &j, res);

	if (rc)
		return rc;
	if (op->uid != 0 && op->uid != j->v.uid)
		return mmi_refuse(res, -EPERM, "checkpoint: job %u belongs to "
				  "uid %u, not to uid %u; only its owner or "
				  "root may checkpoint it", j->v.id, j->v.uid,
				  op->uid);
	/* a script and the steps it starts hold state between them (its
	 * files, its waiting stormctl) that no image of one captures */
	if (j->v.alloc || j->v.parent)
		return mmi_refuse(res, -EINVAL, "checkpoint: job %u is a batch "
				  "%s; checkpoints are taken of jobs of their "
				  "own (stormctl submit --checkpoint)",
				  j->v.id, j->v.alloc ? "allocation" : "step");
	if (j->v.state == MM_JOB_PENDING || j->v.state == MM_JOB_STAGING)
		return mmi_refuse(res, -EAGAIN, "checkpoint: job %u is %s; a "
				  "job is checkpointed once it runs", j->v.id,
				  mm_job_state_name(j->v.state));
	if (j->v.state != MM_JOB_RUNNING)
		return mmi_refuse(res, -EALREADY, "checkpoint: job %u already "
				  "ended (%s); nothing to checkpoint", j->v.id,
				  mm_job_state_name(j->v.state));
	if (op->code == MM_OP_CKPT_REQUEUE && j->v.restarts >= MM_RESTARTS_MAX)
		return mmi_refuse(res, -EMLINK, "checkpoint --requeue: job %u "
				  "was restarted %u times, the most a job may "
				  "be", j->v.id, j->v.restarts);
	if (!j->v.ckpt_want) {
		j->v.ckpt_want = ++j->v.ckpt_last;
		j->v.ckpt_want_slice = s->slice;
	}
	if (op->code == MM_OP_CKPT_REQUEUE)
		j->v.ckpt_requeue = 1;
	res->job = j->v.id;
	res->epoch = j->v.ckpt_want;
	return 0;
}

static int pending(mm_state_t *s, const char *what, const mm_op_t *op,
		   struct mm_jobrec **j, mm_result_t *res)
{
	int rc = job(s, what, op, j, res);

	if (rc)
		return rc;
	if (!op->epoch || (*j)->v.ckpt_want != op->epoch)
		return mmi_refuse(res, -ESTALE, "%s: job %u is not taking "
				  "epoch %u (taking %u); a late or repeated "
				  "report", what, (*j)->v.id, op->epoch,
				  (*j)->v.ckpt_want);
	return 0;
}

int mmi_op_ckpt_commit(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	uint32_t keep = op->ckpt_keep, n;
	mm_ckpt_t *c;
	int rc = pending(s, "checkpoint commit", op, &j, res);

	if (rc)
		return rc;
	if (keep < 1 || keep > MM_CKPT_KEEP_MAX)
		return mmi_refuse(res, -EINVAL, "checkpoint commit: keep %u "
				  "is not in 1..%u", keep, MM_CKPT_KEEP_MAX);
	/* allocated before the first change: a refusal changes nothing */
	if (!j->ckpts && !(j->ckpts = calloc(MM_CKPT_KEEP_MAX,
					     sizeof(*j->ckpts))))
		return mmi_refuse(res, -ENOMEM, "checkpoint commit: out of "
				  "memory");
	n = j->v.nckpts;
	while (n >= keep) { /* the oldest go */
		memmove(j->ckpts, j->ckpts + 1, (n - 1) * sizeof(*j->ckpts));
		n--;
	}
	c = &j->ckpts[n];
	c->epoch = op->epoch;
	c->stop_us = op->ckpt_stop_us;
	c->slice = s->slice;
	c->ms = s->now_ms;
	c->bytes = op->ckpt_bytes;
	c->levels = op->ckpt_levels ? op->ckpt_levels : MM_CKPT_L1;
	j->v.nckpts = n + 1;
	j->v.ckpts = j->ckpts;
	j->v.ckpt_want = 0;
	j->v.ckpt_error[0] = '\0';
	if (j->v.ckpt_requeue) { /* checkpoint --requeue: off its nodes */
		mmi_job_requeue(s, j, op->epoch);
		mmi_fmt(j->v.reason, sizeof(j->v.reason), "requeued after "
			"checkpoint epoch %u", op->epoch);
	}
	res->job = j->v.id;
	res->epoch = op->epoch;
	return 0;
}

int mmi_op_ckpt_abort(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	int rc = pending(s, "checkpoint abort", op, &j, res);

	if (rc)
		return rc;
	j->v.ckpt_want = 0;
	j->v.ckpt_requeue = 0; /* it runs on where it is */
	mmi_fmt(j->v.ckpt_error, sizeof(j->v.ckpt_error), "epoch %u: %s",
		op->epoch, op->reason && *op->reason ? op->reason : "failed");
	res->job = j->v.id;
	res->epoch = op->epoch;
	return 0;
}

/* The job back in the queue, to run on from epoch e (reason set). */
void mmi_job_requeue(mm_state_t *s, struct mm_jobrec *j, uint32_t e)
{
	if (holds_cpus(j->v.state)) {
		mmi_block_release(s, j);
		s->active_gen++;
		mmi_pending_add(s, j->v.uid, +1);
	}
	sp_nodeset_clear(j->nodes);
	memset(j->rank_node, 0, j->v.ranks * sizeof(*j->rank_node));
	j->v.state = MM_JOB_PENDING;
	j->v.ckpt_want = 0;
	j->v.ckpt_requeue = 0;
	j->v.restore_epoch = e;
	j->v.restarts++;
}

/* The last committed epoch of j with a level in `levels`, or 0. */
uint32_t mmi_ckpt_last(const struct mm_jobrec *j, uint32_t levels)
{
	for (uint32_t k = j->v.nckpts; k-- > 0;)
		if (j->ckpts[k].levels & levels)
			return j->ckpts[k].epoch;
	return 0;
}

int mmi_op_ckpt_restart(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j;
	uint32_t e = op->epoch;
	int rc = job(s, "restart", op, &j, res);

	if (rc)
		return rc;
	if (op->uid != 0 && op->uid != j->v.uid)
		return mmi_refuse(res, -EPERM, "restart: job %u belongs to uid "
				  "%u, not to uid %u; only its owner or root "
				  "may restart it", j->v.id, j->v.uid, op->uid);
	if (is_terminal(j->v.state))
		return mmi_refuse(res, -EALREADY, "restart: job %u already "
				  "ended (%s); an ended job is not restarted",
				  j->v.id, mm_job_state_name(j->v.state));
	if (j->v.state == MM_JOB_PENDING)
		return mmi_refuse(res, -EALREADY, "restart: job %u is PENDING "
				  "(%s); it runs %s once placed", j->v.id,
				  j->v.restore_epoch ? "restarting" : "queued",
				  j->v.restore_epoch ? "from its epoch" :
				  "from the start");
	if (!j->v.nckpts)
		return mmi_refuse(res, -ENOENT, "restart: job %u has no "
				  "committed checkpoint (stormctl checkpoint "
				  "%u takes one)", j->v.id, j->v.id);
	if (j->v.restarts >= MM_RESTARTS_MAX)
		return mmi_refuse(res, -EMLINK, "restart: job %u was "
				  "restarted %u times, the most a job may be",
				  j->v.id, j->v.restarts);
	if (!e)
		e = j->ckpts[j->v.nckpts - 1].epoch;
	for (uint32_t k = 0; k < j->v.nckpts; k++)
		if (j->ckpts[k].epoch == e) {
			mmi_job_requeue(s, j, e);
			mmi_fmt(j->v.reason, sizeof(j->v.reason), "restarting "
				"from checkpoint epoch %u (asked by uid %u)", e,
				op->uid);
			res->job = j->v.id;
			res->epoch = e;
			return 0;
		}
	return mmi_refuse(res, -ENOENT, "restart: job %u has no committed "
			  "epoch %u (committed: %u..%u, the last %u kept)",
			  j->v.id, e, j->ckpts[0].epoch,
			  j->ckpts[j->v.nckpts - 1].epoch, j->v.nckpts);
}
