/*
 * strobe.c — the strobe master's slice (strobe.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "clock.h"
#include "strobe.h"

uint64_t mmd_strobe_now_ms(const struct mmd_strobe *sb)
{
	return (mmd_mono_ns() - sb->t0_ns) / 1000000u;
}

int mmd_strobe_init(struct mmd_strobe *sb, const st_config_t *cfg,
		    const st_layout_t *lay, const char *name,
		    struct mmd_jobs *jobs, struct mmd_mailbox *mbox,
		    const struct mmd_strobe_hooks *hooks)
{
	uint32_t nworld = cfg->nmanagers + cfg->nnodes;

	*sb = (struct mmd_strobe){ .cfg = cfg, .lay = lay, .name = name,
				   .jobs = jobs, .mbox = mbox,
				   .hooks = *hooks, .nworld = nworld,
				   .t0_ns = mmd_mono_ns(), .timer_fd = -1 };
	sb->clk.slice_us = cfg->slice_us;
	sb->clk.micro_slices = cfg->micro_slices;
	sb->idle_delay = MMD_IDLE_PROBE_MIN;
	sb->caw.slice_us = cfg->slice_us;
	sb->stage = (struct mmd_stage){ .lay = lay, .caw = &sb->caw,
					.jobs = jobs,
					.propose = hooks->propose,
					.ctx = hooks->ctx };
	sb->hb_cap = st_hb_capacity(lay->hb_len);
	sb->hb = calloc(1, lay->hb_len);
	sb->hb_full = calloc(1, lay->hb_len);
	sb->hb_list = calloc(sb->hb_cap + 1, sizeof(*sb->hb_list));
	sb->seen = calloc(nworld, 1);
	sb->joined = calloc(nworld, sizeof(*sb->joined));
	sb->joined_slice = calloc(nworld, sizeof(*sb->joined_slice));
	if (!sb->hb || !sb->hb_full || !sb->hb_list || !sb->seen || !sb->joined ||
	    !sb->joined_slice || sp_nodeset_create(nworld, &sb->live) ||
	    sp_nodeset_create(nworld, &sb->tmp) ||
	    sp_nodeset_create(nworld, &sb->one))
		return -ENOMEM;
	return 0;
}

void mmd_strobe_fini(struct mmd_strobe *sb)
{
	mmd_stage_free(&sb->stage);
	free(sb->hb);
	free(sb->hb_full);
	free(sb->hb_list);
	free(sb->active);
	free(sb->seen);
	free(sb->joined);
	free(sb->joined_slice);
	sp_nodeset_destroy(sb->live);
	sp_nodeset_destroy(sb->tmp);
	sp_nodeset_destroy(sb->one);
	memset(sb, 0, sizeof(*sb));
}

void mmd_strobe_set_timer(struct mmd_strobe *sb, int fd)
{
	sb->timer_fd = fd;
}

static void idle_leave(struct mmd_strobe *sb, const char *why);

void mmd_strobe_set_world(struct mmd_strobe *sb, sp_world_t *w,
			  uint8_t *gmem)
{
	idle_leave(sb, "the machine changed");
	mmd_stage_free(&sb->stage);
	sb->w = w;
	sb->gmem = gmem;
	/* the heartbeat's completion is looked at by the next boundary's
	 * timer: no wake-up of its own per slice, unless a boundary is owed */
	if (w)
		sp_event_quiet(w, ST_EV_LOCAL_HB, 1);
}

static void propose(struct mmd_strobe *sb, const mm_op_t *op)
{
	if (sb->clk.master)
		sb->hooks.propose(sb->hooks.ctx, op);
}

/* Rebuilt only when the state says a job started or stopped holding
 * PEs, so the per-slice work does not grow with the queue. */
uint32_t mmd_strobe_active(struct mmd_strobe *sb, const mm_state_t *st)
{
	mm_job_t j;
	uint32_t n = 0;

	if (sb->active_valid && sb->active_gen == mm_active_gen(st))
		return sb->nactive;
	for (uint32_t id = 1; mm_job_next(st, id, &j) == 0; id = j.id + 1) {
		if (j.state != MM_JOB_STAGING && j.state != MM_JOB_RUNNING)
			continue;
		if (n == sb->active_cap) {
			uint32_t cap = sb->active_cap ? 2 * sb->active_cap : 64;
			uint32_t *a = realloc(sb->active, cap * sizeof(*a));

			if (!a) {
				/* a partial list would tell the nodes to kill
				 * the jobs left off: none this slice */
				sb->nactive = 0;
				sb->active_valid = 0;
				sb->active_failed = 1;
				return 0;
			}
			sb->active = a;
			sb->active_cap = cap;
		}
		sb->active[n++] = j.id;
	}
	sb->nactive = n;
	sb->active_gen = mm_active_gen(st);
	sb->active_valid = 1;
	sb->active_failed = 0;
	return n;
}

void mmd_strobe_state_replaced(struct mmd_strobe *sb)
{
	sb->active_valid = 0;
	sb->tick_wanted = 1;
}

static void heartbeat(struct mmd_strobe *sb, const mm_state_t *st,
		      int kick);

void mmd_strobe_applied(struct mmd_strobe *sb, const mm_state_t *st,
			const mm_op_t *op, int rc)
{
	/* anything agreed may want the strobe (a job to schedule, stage,
	 * cancel, a node back); the TICK an idle strobe proposes only if it
	 * started or ended jobs (one to stage) */
	if ((op->code != MM_OP_TICK && op->code != MM_OP_TICK_RETAIN) ||
	    !sb->active_valid || sb->active_gen != mm_active_gen(st))
		idle_leave(sb, "an operation was agreed");
	/* a job staged everywhere is RUNNING now: its nodes hear it at
	 * once, not at the next boundary (launch latency: up to a slice) */
	if (op->code == MM_OP_JOB_STAGED && rc == 0 && sb->clk.master &&
	    sb->w)
		heartbeat(sb, st, 1);
	/* a job queued again runs anew: what its ranks reported of the
	 * run before is void */
	if ((op->code == MM_OP_CKPT_RESTART || op->code == MM_OP_NODE_DOWN ||
	     op->code == MM_OP_CKPT_COMMIT) && rc == 0)
		mmd_jobs_requeued(sb->jobs, st);
	switch (op->code) {
	case MM_OP_SUBMIT: case MM_OP_SUBMIT_CAPPED: case MM_OP_SUBMIT_LIMITS:
	case MM_OP_SUBMIT_INPUTS:
		if (rc == 0)
			sb->tick_wanted = 1;
		break;
	case MM_OP_TICK: case MM_OP_TICK_RETAIN:
		sb->tick_inflight = 0;
		break;
	case MM_OP_JOB_STAGED: case MM_OP_JOB_FAILED: case MM_OP_CANCEL:
	case MM_OP_NODE_UP: case MM_OP_NODE_DOWN: case MM_OP_JOB_EXITED:
	case MM_OP_JOB_EXITED_USAGE: case MM_OP_CKPT_RESTART:
	case MM_OP_CKPT_COMMIT:
		sb->tick_wanted = 1; /* cpus may have come free */
		break;
	default:
		break;
	}
}

/* ---- 2. view ---------------------------------------------------------------- */

static void check_view(struct mmd_strobe *sb, const mm_state_t *st)
{
	sp_view_info_t vi;
	uint32_t n = mm_node_count(st);

	if (!sb->clk.master || sp_view(sb->w, &vi, sb->live))
		return;
	for (uint32_t i = 0; i < n; i++) {
		mm_node_t node;
		mm_op_t op = { 0 };
		uint64_t joined;
		int in;

		if (mm_node_get(st, i, &node))
			continue;
		in = sp_nodeset_has(sb->live, node.id);
		if (in && sp_view_joined(sb->w, node.id, &joined) == 0 &&
		    joined != sb->joined[node.id]) {
			/* it joined again: a new incarnation, whatever ran on
			 * the old one is gone */
			if (sb->seen[node.id] && node.state == MM_NODE_UP) {
				op.code = MM_OP_NODE_DOWN;
				op.node = node.id;
				op.reason = "restarted: its processes are gone";
				qb_log(LOG_WARNING, "node %s restarted",
				       node.name);
				propose(sb, &op);
				node.state = MM_NODE_DOWN;
			}
			sb->joined[node.id] = joined;
		}
		if (in)
			sb->seen[node.id] = 1;
		if (!in && node.state == MM_NODE_UP) {
			op.code = MM_OP_NODE_DOWN;
			op.node = node.id;
			op.reason = sb->seen[node.id] ?
				"missed heartbeats: left the view" :
				"has not joined yet";
			if (sb->seen[node.id])
				qb_log(LOG_WARNING, "node %s failed: missed "
				       "heartbeats", node.name);
			propose(sb, &op);
		} else if (in && node.state == MM_NODE_DOWN) {
			sb->joined_slice[node.id] = sb->clk.slice;
			op.code = MM_OP_NODE_UP;
			op.node = node.id;
			qb_log(LOG_NOTICE, "node %s is back", node.name);
			propose(sb, &op);
		}
	}
}

/* ---- 2b. missed heartbeats ---------------------------------------------- */

/* Nodes of set whose node manager has not applied heartbeat `want`:
 * halve the set with COMPARE-AND-WRITE until each culprit stands alone
 * (STORM's binary search: log2(N) compares for one culprit). */
static void locate(struct mmd_strobe *sb, const mm_state_t *st,
		   sp_nodeset_t *set, int64_t want)
{
	sp_nodeset_t *half = NULL;
	uint32_t n = sp_nodeset_count(set), k = 0;
	int rc;

	if (n == 0)
		return;
	rc = mmd_caw(&sb->caw, sb->w, sb->clk.slice, set, sb->lay->gv_slice,
		     SP_CMP_GE, want, SP_NO_WRITE, 0, 1000);
	if (rc != 0)
		return; /* all applied it, or the view changed: not now */
	if (n == 1) {
		uint32_t x = (uint32_t)sp_nodeset_next(set, 0);
		mm_op_t op = { .code = MM_OP_NODE_DOWN, .node = x,
			       .reason = "missed heartbeats: its node manager "
					 "is not responding" };
		mm_node_t node;

		if (mm_node_by_id(st, x, &node) == 0)
			qb_log(LOG_WARNING, "node %s missed heartbeats: taken "
			       "out of the view", node.name);
		propose(sb, &op);
		/* out of the view too: a node manager that wakes up finds
		 * itself expelled, exits, and is restarted to rejoin */
		sp_report_failure(sb->w, x);
		return;
	}
	if (sp_nodeset_create(sb->nworld, &half))
		return;
	for (int64_t x = sp_nodeset_next(set, 0); x >= 0;
	     x = sp_nodeset_next(set, (uint32_t)x + 1))
		if (k++ < n / 2) {
			sp_nodeset_add(half, (uint32_t)x);
			sp_nodeset_del(set, (uint32_t)x);
		}
	locate(sb, st, half, want);
	locate(sb, st, set, want);
	sp_nodeset_destroy(half);
}

static void check_strobe(struct mmd_strobe *sb, const mm_state_t *st)
{
	uint64_t lag = sb->cfg->hb_timeout_ms * 1000ull / sb->cfg->slice_us;
	sp_nodeset_t *set = NULL;
	uint32_t n = mm_node_count(st);

	lag = lag < 10 ? 10 : lag;
	/* every lag/2 slices (the idle strobe jumps slices); only
	 * heartbeats every node received count */
	if (sb->clk.slice - sb->strobe_checked < lag / 2 ||
	    sb->hb_done_slice <= lag || sp_nodeset_create(sb->nworld, &set))
		return;
	sb->strobe_checked = sb->clk.slice;
	for (uint32_t i = 0; i < n; i++) {
		mm_node_t node;

		if (mm_node_get(st, i, &node) == 0 &&
		    node.state == MM_NODE_UP &&
		    sp_nodeset_has(sb->live, node.id) &&
		    sb->joined_slice[node.id] + lag < sb->clk.slice)
			sp_nodeset_add(set, node.id);
	}
	locate(sb, st, set, (int64_t)(sb->hb_done_slice - lag));
	sp_nodeset_destroy(set);
}

/* ---- 4. termination ------------------------------------------------------------ */

/* A job's done slot: its first cell in the matrix, a step's beyond the
 * matrix's rows (no two jobs holding PEs share one). */
static uint32_t done_slot(const mm_state_t *st, const mm_job_t *j)
{
	return mm_job_done_slot(st, j);
}

static void check_ends(struct mmd_strobe *sb, const mm_state_t *st)
{
	/* a job of a gang row that is not running now cannot end by itself
	 * (its processes are stopped): its compare waits for its turn, so
	 * time-sharing costs the strobe no more compares than one row */
	int shared = mm_matrix_shared(st);
	uint32_t row = shared ? mm_active_row(st, sb->clk.slice) : 0, n;
	mm_job_t j;

	if (!sb->clk.master || !sb->w)
		return;
	n = mmd_strobe_active(sb, st);
	for (uint32_t i = 0; i < n; i++) {
		mm_op_t op = { .code = MM_OP_JOB_EXITED_USAGE,
			       .job = sb->active[i] };
		struct mmd_job *r = mmd_jobs_find(sb->jobs, sb->active[i]);

		/* every rank's EXIT record first: it is agreed before the
		 * node sets its done slot, and costs no compare */
		/* proposed, and not applied within MMD_RETRY_SLICES: the
		 * proposal was lost; a repeat is refused harmlessly */
		if (!r || !r->status ||
		    (r->exit_proposed &&
		     sb->clk.slice - r->exit_slice < MMD_RETRY_SLICES) ||
		    mm_job_get(st, sb->active[i], &j) ||
		    j.state != MM_JOB_RUNNING || (shared && j.row != row) ||
		    r->ranks != j.ranks || r->got < j.ranks)
			continue;
		if (mmd_caw(&sb->caw, sb->w, sb->clk.slice, j.nodes,
			    st_done_var(sb->lay, done_slot(st, &j)), SP_CMP_EQ,
			    j.id, SP_NO_WRITE, 0, 1000) != 1)
			continue;
		qb_log(LOG_DEBUG, "job %u: ended everywhere (slice %llu)",
		       j.id, (unsigned long long)sb->clk.slice);
		op.nstatus = j.ranks;
		op.status = r->status;
		op.usage = r->usage;
		r->t_end = mmd_mono_ns();
		r->exit_proposed = 1;
		r->exit_slice = sb->clk.slice;
		propose(sb, &op);
	}
}

/* ---- 4b. PMI barriers: a store every node contributed to goes down -------- */

void mmd_strobe_pmi(struct mmd_strobe *sb, const mm_state_t *st)
{
	if (sb->clk.master && sb->w && sb->pmi)
		mmd_pmi_step(sb->pmi, sb->w, &sb->caw, st, sb->live,
			     sb->clk.slice);
}

/* ---- 5. checkpoints: an epoch every node has written is committed ---------- */

/* Each node of a job taking epoch e writes its images, then sets its
 * gv_ckpt slot to st_ckpt_done(job, e) and reports its figures; once
 * every node's figures are agreed, one compare over the job's nodes
 * confirms them all and the commit is proposed.  A failure anywhere is
 * the epoch's abort (mailbox.c), so an epoch is committed everywhere or
 * nowhere, and a new master re-derives all of it from the state. */
static void check_ckpts(struct mmd_strobe *sb, const mm_state_t *st)
{
	uint32_t n;
	mm_job_t j;

	if (!sb->clk.master || !sb->w)
		return;
	n = mmd_strobe_active(sb, st);
	for (uint32_t i = 0; i < n; i++) {
		struct mmd_job *r = mmd_jobs_find(sb->jobs, sb->active[i]);
		mm_op_t op = { .code = MM_OP_CKPT_COMMIT,
			       .job = sb->active[i] };

		if (!r || !r->ckpt_epoch ||
		    (r->ckpt_proposed &&
		     sb->clk.slice - r->ckpt_slice < MMD_RETRY_SLICES) ||
		    mm_job_get(st, sb->active[i], &j) ||
		    j.state != MM_JOB_RUNNING || j.ckpt_want != r->ckpt_epoch ||
		    r->ckpt_got < sp_nodeset_count(j.nodes))
			continue;
		if (mmd_caw(&sb->caw, sb->w, sb->clk.slice, j.nodes,
			    st_ckpt_var(sb->lay, done_slot(st, &j)), SP_CMP_EQ,
			    st_ckpt_done(j.id, j.ckpt_want), SP_NO_WRITE, 0,
			    1000) != 1)
			continue;
		qb_log(LOG_INFO, "job %u: checkpoint epoch %u on every node "
		       "(%llu bytes)", j.id, j.ckpt_want,
		       (unsigned long long)r->ckpt_bytes);
		op.epoch = j.ckpt_want;
		op.ckpt_bytes = r->ckpt_bytes;
		op.ckpt_stop_us = r->ckpt_stop_us;
		op.ckpt_levels = r->ckpt_levels;
		op.ckpt_keep = sb->cfg->ckpt_keep ? sb->cfg->ckpt_keep : 2;
		r->ckpt_proposed = 1;
		r->ckpt_slice = sb->clk.slice;
		propose(sb, &op);
	}
}

/* A job's interval between checkpoints, in ms: its own, or with auto
 * Young's first-order optimum sqrt(2 C M), C its last epoch's stop (what
 * a checkpoint costs the job), M the job's MTBF (a node's, ckpt_mtbf_h,
 * over its nodes); 60 s before it has an epoch, within 60 s .. a day. */
static uint64_t isqrt(uint64_t v)
{
	uint64_t x = v, y = (x + 1) / 2;

	while (y < x) {
		x = y;
		y = (x + v / x) / 2;
	}
	return x;
}

static uint64_t ckpt_interval_ms(const struct mmd_strobe *sb,
				 const mm_job_t *j)
{
	uint64_t c_us, m_us, t;
	uint32_t nodes = j->nodes ? sp_nodeset_count(j->nodes) : 1;

	if (j->ckpt_every_s != MM_CKPT_AUTO)
		return (uint64_t)j->ckpt_every_s * 1000u;
	if (!j->nckpts)
		return 60000;
	c_us = j->ckpts[j->nckpts - 1].stop_us;
	m_us = (uint64_t)(sb->cfg->ckpt_mtbf_h ? sb->cfg->ckpt_mtbf_h : 720) *
	       3600000000ull / (nodes ? nodes : 1);
	/* sqrt(2 C M) in us, as ms (a product past 2^64: the longest) */
	if (c_us && m_us > UINT64_MAX / 2 / c_us)
		return 86400000;
	t = isqrt(2 * c_us * m_us) / 1000u;
	return t < 60000 ? 60000 : t > 86400000 ? 86400000 : t;
}

/* Jobs submitted with an interval: the strobe asks for their epochs
 * (CKPT_REQUEST, as root) when one is due by the state's time, at most
 * once an interval even if the last one failed. */
static void check_ckpt_due(struct mmd_strobe *sb, const mm_state_t *st)
{
	uint64_t now = mm_now_ms(st), mono = mmd_mono_ns() / 1000000u;
	uint32_t n;
	mm_job_t j;

	if (!sb->clk.master || !sb->w)
		return;
	n = mmd_strobe_active(sb, st);
	for (uint32_t i = 0; i < n; i++) {
		struct mmd_job *r;
		uint64_t every, last;

		if (mm_job_get(st, sb->active[i], &j) ||
		    j.state != MM_JOB_RUNNING || !j.ckpt_every_s ||
		    j.ckpt_want || !(r = mmd_jobs_get(sb->jobs, j.id)))
			continue;
		every = ckpt_interval_ms(sb, &j);
		last = j.nckpts ? j.ckpts[j.nckpts - 1].ms : j.start_ms;
		if (now < last + every ||
		    (r->ckpt_asked_ms && mono < r->ckpt_asked_ms + every))
			continue;
		r->ckpt_asked_ms = mono;
		qb_log(LOG_DEBUG, "job %u: a checkpoint is due (every %llu ms)",
		       j.id, (unsigned long long)every);
		propose(sb, &(mm_op_t){ .code = MM_OP_CKPT_REQUEST,
					.job = j.id, .uid = 0 });
	}
}

void mmd_strobe_ends(struct mmd_strobe *sb, const mm_state_t *st)
{
	check_ends(sb, st);
	check_ckpts(sb, st);
}

/* ---- 6. heartbeat ---------------------------------------------------------- */

static st_hb_job_t hb_entry(const mm_state_t *st, const mm_job_t *j)
{
	return (st_hb_job_t){ j->id, j->state == MM_JOB_STAGING ?
			      ST_HB_STAGING : ST_HB_ACTIVE,
			      (uint16_t)j->row, done_slot(st, j),
			      j->state == MM_JOB_RUNNING ? j->ckpt_want : 0,
			      j->restore_epoch, j->restarts };
}

/* More jobs hold PEs than one block lists: jobs whose state changed in
 * the last MMD_HB_FRESH_SLICES slices first (at most half the block),
 * then a window of the rest from the sweep's cursor on; every job is
 * listed again within ceil(active / (capacity / 2)) slices. */
static uint32_t list_overflow(struct mmd_strobe *sb, const mm_state_t *st,
			      uint32_t na, st_hb_t *hb)
{
	uint32_t n = 0, i, start;
	mm_job_t j;

	for (i = 0; i < na && n < sb->hb_cap / 2; i++) {
		struct mmd_job *r = mmd_jobs_get(sb->jobs, sb->active[i]);
		st_hb_job_t e;

		if (!r || mm_job_get(st, sb->active[i], &j))
			continue;
		e = hb_entry(st, &j);
		if (r->hb_state != e.state) {
			r->hb_state = e.state;
			r->hb_changed = sb->clk.slice;
		}
		if (sb->clk.slice - r->hb_changed < MMD_HB_FRESH_SLICES)
			sb->hb_list[n++] = e;
	}
	/* the window: from the first active id at or past the cursor */
	for (start = 0; start < na && sb->active[start] < sb->sweep; start++)
		;
	if (start == na)
		start = 0;
	/* from the cursor: the ids since the last window's end are covered
	 * even if the job at the cursor has gone meanwhile */
	hb->lo = start ? sb->sweep : 0;
	for (i = start; i < na && n < sb->hb_cap; i++)
		if (!mm_job_get(st, sb->active[i], &j))
			sb->hb_list[n++] = hb_entry(st, &j);
	if (i == na) {
		hb->hi = UINT32_MAX;
		sb->sweep = 0;
		sb->hb_sweeps++;
	} else {
		hb->hi = sb->active[i] - 1;
		sb->sweep = sb->active[i];
	}
	return n;
}

/* The encoded block to the n nodes of sb->tmp: one PUT each up to
 * MMD_HB_PUT_MAX nodes, else one multicast.  Returns the transfers
 * started (hb_pending); a node it could not start for counts as failed. */
static uint32_t hb_send(struct mmd_strobe *sb, size_t len, uint32_t n,
			sp_ev_t ev)
{
	uint32_t started = 0;

	sb->hb_rc = 0;
	sb->hb_posted = 0;
	if (n > MMD_HB_PUT_MAX) {
		started = sp_xfer_and_signal(sb->w, sb->tmp, sb->hb, len,
					     sb->lay->hb, ST_EV_LOCAL_HB,
					     ev, NULL, 0) == 0;
	} else {
		for (int64_t x = sp_nodeset_next(sb->tmp, 0); x >= 0;
		     x = sp_nodeset_next(sb->tmp, (uint32_t)x + 1)) {
			/* a block that only advances the slice is posted: no
			 * answer wakes this manager's fabric thread.  Refused
			 * (behind an undone transfer, or anything else): the
			 * acknowledged transfer, which reports its own fate */
			if (ev == ST_EV_HB_TICK && len <= SP_PUT_POSTED_MAX &&
			    sp_put_posted(sb->w, (uint32_t)x, sb->hb, len,
					  sb->lay->hb, ev) == 0) {
				sb->hb_posted++;
				continue;
			}
			sp_nodeset_add(sb->one, (uint32_t)x);
			if (sp_xfer_and_signal(sb->w, sb->one, sb->hb, len,
					       sb->lay->hb, ST_EV_LOCAL_HB,
					       ev, NULL, 0) == 0)
				started++;
			else
				sb->hb_rc = -STORM_ENOTINVIEW;
			sp_nodeset_del(sb->one, (uint32_t)x);
		}
	}
	sb->hb_pending = started;
	return started;
}

/* Slices between two full blocks at most: MMD_HB_FULL_MAX, and 8 per
 * heartbeat timeout. */
static uint64_t full_every(const struct mmd_strobe *sb)
{
	uint64_t every = (uint64_t)sb->cfg->hb_timeout_ms * 1000u /
			 sb->cfg->slice_us / 8;

	return every < 1 ? 1 : every > MMD_HB_FULL_MAX ? MMD_HB_FULL_MAX
						       : every;
}

/* The event the block in sb->hb goes with: ST_EV_HB_TICK when it equals
 * the last full one but for its slice (and that one is recent), else
 * ST_EV_HB, and it becomes the last full one. */
static sp_ev_t hb_event(struct mmd_strobe *sb, size_t len, int kick)
{
	uint64_t every = full_every(sb);

	if (!kick && len == sb->hb_full_len &&
	    sb->clk.slice - sb->hb_full_slice < every &&
	    st_hb_same(sb->hb, sb->hb_full, len))
		return ST_EV_HB_TICK;
	memcpy(sb->hb_full, sb->hb, len);
	sb->hb_full_len = len;
	sb->hb_full_slice = sb->clk.slice;
	return ST_EV_HB;
}

/* The node managers of the view, in sb->tmp (the managers left out). */
static void live_nodes(struct mmd_strobe *sb)
{
	sp_nodeset_copy(sb->tmp, sb->live);
	for (uint32_t i = 0; i < sb->cfg->nmanagers; i++)
		sp_nodeset_del(sb->tmp, i);
}

/* At every slice boundary; and mid-slice (kick) when a job launches: the
 * same slice's heartbeat again, with the job list as it is now. */
static void heartbeat(struct mmd_strobe *sb, const mm_state_t *st, int kick)
{
	uint32_t na = mmd_strobe_active(sb, st), n = 0;
	/* the gang matrix's row whose turn it is: its jobs RUN, the other
	 * rows' STOP (with one busy row, as at MPL 1, every job RUNs) */
	uint32_t row = mm_active_row(st, sb->clk.slice);
	st_hb_t hb = { .slice = sb->clk.slice, .lo = 0, .hi = UINT32_MAX,
		       .jobs = sb->hb_list };
	mm_job_t j;
	int len;

	if (sb->clk.hb_inflight) {
		/* a boundary's heartbeat behind a kick is owed, not late:
		 * the kick went out within this slice */
		if (!kick && !sb->hb_kicked) {
			qb_log(LOG_DEBUG, "slice %llu: heartbeat late",
			       (unsigned long long)sb->clk.slice);
			sb->clk.hb_late++;
		}
		sb->hb_owed = 1;
		sp_event_quiet(sb->w, ST_EV_LOCAL_HB, 0);
		return;
	}
	if (sb->active_failed)
		return; /* out of memory for the job list: no heartbeat */
	hb.flags = sb->idle ? ST_HB_IDLE : 0;
	hb.row = !mm_matrix_shared(st) ? ST_HB_ALL_ROWS :
		 row < MM_MPL_MAX ? (uint16_t)row : ST_HB_ALL_ROWS - 1;
	if (na <= sb->hb_cap) {
		for (uint32_t i = 0; i < na; i++)
			if (!mm_job_get(st, sb->active[i], &j))
				sb->hb_list[n++] = hb_entry(st, &j);
	} else {
		n = list_overflow(sb, st, na, &hb);
	}
	hb.njobs = n;
	len = st_hb_encode(sb->hb, sb->lay->hb_len, &hb);
	live_nodes(sb);
	n = sp_nodeset_count(sb->tmp);
	if (len < 0 || n == 0)
		return;
	if (!hb_send(sb, (size_t)len, n, hb_event(sb, (size_t)len, kick)) &&
	    !sb->hb_posted)
		sb->hb_rc = -STORM_ENOTINVIEW;
	if (sb->hb_rc)
		sb->hb_full_len = 0; /* a node missed it: the next is full */
	sb->clk.hb_posted = 0;
	if (sb->hb_pending) {
		sb->clk.hb_inflight = 1;
		sb->clk.hb_sent_slice = sb->clk.slice;
		sb->hb_kicked = kick;
	} else if (sb->hb_posted && !sb->hb_rc) {
		/* posted to every node: done as sent */
		sb->clk.hb_posted = 1;
		sb->clk.hb_sent_slice = sb->clk.slice;
		sb->hb_done_slice = sb->clk.slice;
	}
}

/* A TICK goes through the group (and the log), so it is proposed only
 * when it can change something: jobs wait, a time limit may pass, or
 * something freed cpus; at least once a second to keep the state's
 * clock near the wall clock.  One at a time. */
static int tick_due(struct mmd_strobe *sb, const mm_state_t *st)
{
	uint64_t now = mmd_strobe_now_ms(sb);
	mm_job_t j;
	uint32_t n;

	if (sb->tick_inflight)
		return now - sb->tick_last_ms > 2000; /* lost */
	if (now - sb->tick_last_ms >= 1000)
		return 1;
	/* a new job or freed cpus: only worth a tick if some PE is free
	 * (a full machine with a long queue must not pay a scan per slice) */
	if (sb->tick_wanted && mm_free_pes(st) > 0)
		return 1;
	/* time limits: a tenth of a second is their resolution */
	n = mmd_strobe_active(sb, st);
	for (uint32_t i = 0; now - sb->tick_last_ms >= 100 && i < n; i++)
		if (!mm_job_get(st, sb->active[i], &j) && j.time_limit_ms)
			return 1;
	return 0;
}

/* ---- the idle strobe ------------------------------------------------------ */

static uint64_t micro_ns(const struct mmd_strobe *sb)
{
	return (uint64_t)sb->cfg->slice_us * 1000u / sb->clk.micro_slices;
}

static uint64_t idle_period_ns(const struct mmd_strobe *sb)
{
	return sb->idle_every * sb->clk.micro_slices * micro_ns(sb);
}

/* The timer's first expiration at first_ns (monotonic, absolute), then
 * every interval_ns.  0 or -errno. */
static int timer_arm(struct mmd_strobe *sb, uint64_t first_ns,
		     uint64_t interval_ns)
{
	struct itimerspec its = {
		.it_interval = { (time_t)(interval_ns / 1000000000u),
				 (long)(interval_ns % 1000000000u) },
		.it_value = { (time_t)(first_ns / 1000000000u),
			      (long)(first_ns % 1000000000u) },
	};

	return timerfd_settime(sb->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) ?
	       -errno : 0;
}

/* Whether nothing on this side wants the next slices: no heartbeat
 * owed, no TICK wanted, nothing staging, no job ending, no gang switch
 * to come (a shared matrix switches rows at quantum boundaries). */
static int idle_allowed(struct mmd_strobe *sb, const mm_state_t *st)
{
	uint32_t na;
	mm_job_t j;

	if (!sb->cfg->idle_slices || sb->timer_fd < 0 || !sb->clk.master ||
	    !sb->w || sb->clk.hb_inflight || sb->hb_owed ||
	    sb->tick_inflight || sb->stage.job ||
	    /* a TICK tick_due() would propose now (no free PE: it waits
	     * for its once a second, which idle boundaries still see) */
	    (sb->tick_wanted && mm_free_pes(st) > 0) ||
	    sb->active_failed || mm_matrix_shared(st) ||
	    (sb->pmi && mmd_pmi_busy(sb->pmi)))
		return 0;
	na = mmd_strobe_active(sb, st);
	for (uint32_t i = 0; i < na; i++) {
		struct mmd_job *r = mmd_jobs_find(sb->jobs, sb->active[i]);

		/* a checkpoint pending: its nodes report, the commit
		 * follows at a boundary */
		if (mm_job_get(st, sb->active[i], &j) ||
		    j.state != MM_JOB_RUNNING || (r && r->got) ||
		    j.ckpt_want)
			return 0;
	}
	return 1;
}

/* At a slice boundary, before its heartbeat: idle from here if every
 * node is quiet.  The timer keeps the grid of boundaries, one every
 * idle_every slices from this one. */
static void idle_try(struct mmd_strobe *sb, const mm_state_t *st)
{
	struct itimerspec its;
	uint64_t every, next_ns, now;

	if (sb->idle || sb->clk.slice < sb->idle_probe ||
	    !idle_allowed(sb, st))
		return;
	sb->idle_probe = sb->clk.slice + sb->idle_delay;
	live_nodes(sb);
	/* a wake from before the compare is answered by it */
	while (sp_test_event(sb->w, ST_EV_WAKE, 0) == 0)
		;
	if (sp_nodeset_count(sb->tmp) &&
	    mmd_caw(&sb->caw, sb->w, sb->clk.slice, sb->tmp,
		    sb->lay->gv_quiet, SP_CMP_EQ, 1, SP_NO_WRITE, 0,
		    1000) != 1)
		return;
	/* one that crossed it: a node has work already.  (One that comes
	 * later leaves the idle strobe; a node that got busy after the
	 * compare without waking learns of the idling from this boundary's
	 * block, and wakes then.) */
	if (sp_test_event(sb->w, ST_EV_WAKE, 0) == 0)
		return;
	every = full_every(sb);
	if (sb->cfg->idle_slices < every)
		every = sb->cfg->idle_slices;
	if (every < 2 || timerfd_gettime(sb->timer_fd, &its))
		return;
	/* the next micro-slice expiration, and so this boundary's time */
	now = mmd_mono_ns();
	next_ns = now + (uint64_t)its.it_value.tv_sec * 1000000000u +
		  (uint64_t)its.it_value.tv_nsec;
	sb->idle_every = every;
	sb->idle_next_ns = next_ns - micro_ns(sb) + idle_period_ns(sb);
	if (timer_arm(sb, sb->idle_next_ns, idle_period_ns(sb)))
		return;
	sb->idle = 1;
	sb->clk.idle = 1;
	sb->idle_since = sb->clk.slice;
	sb->idle_entered++;
	qb_log(LOG_DEBUG, "slice %llu: every node quiet, the strobe idles "
	       "(a boundary every %llu slices)",
	       (unsigned long long)sb->clk.slice, (unsigned long long)every);
}

/* Strobe again, from a boundary now: what woke the strobe is served
 * within the wake-up, not up to a slice later (nothing but the
 * statistics, re-anchored, keeps the old grid's phase).  The slices that
 * passed since the last idle boundary are counted, not served. */
static void idle_leave(struct mmd_strobe *sb, const char *why)
{
	uint64_t p, last, now, k, old = sb->clk.micro;

	if (!sb->idle)
		return;
	p = micro_ns(sb);
	last = sb->idle_next_ns - idle_period_ns(sb);
	now = mmd_mono_ns();
	k = now > last ? (now - last) / p : 0;
	/* the boundary now is a micro-slice's: the next full one is owed
	 * at once, so count up to the one before it */
	k = (old + k) / sb->clk.micro_slices * sb->clk.micro_slices +
	    sb->clk.micro_slices - 1 - old;
	sb->idle = 0;
	sb->clk.idle = 0;
	sb->clk.micro += k;
	k = sb->clk.micro / sb->clk.micro_slices - old / sb->clk.micro_slices;
	sb->clk.slice += k;
	sb->clk.idle_slices += k;
	/* a spell shorter than going idle and back costs (a loop that
	 * communicates every few slices, ranks reaching a barrier one by
	 * one): look later next time; one that paid: soon again */
	if (sb->clk.slice - sb->idle_since < MMD_IDLE_SHORT)
		sb->idle_delay = sb->idle_delay * 2 > MMD_IDLE_PROBE_MAX ?
				 MMD_IDLE_PROBE_MAX : sb->idle_delay * 2;
	else if (sb->clk.slice - sb->idle_since >= 4 * MMD_IDLE_SHORT)
		sb->idle_delay = MMD_IDLE_PROBE_MIN;
	sb->idle_probe = sb->clk.slice + sb->idle_delay;
	mmd_stats_unanchor(&sb->stats);
	if (timer_arm(sb, now, p))
		qb_log(LOG_ERR, "cannot re-arm the strobe timer: %s",
		       strerror(errno));
	qb_log(LOG_DEBUG, "slice %llu: the strobe is back (%s)",
	       (unsigned long long)sb->clk.slice, why);
}

/* ---- events ---------------------------------------------------------------- */

void mmd_strobe_notify(struct mmd_strobe *sb, const mm_state_t *st,
		       rp_replica_t *rp, int fd)
{
	uint64_t v;
	int rc, woke = 0;

	if (!sb->w || (fd >= 0 && read(fd, &v, sizeof(v)) < 0 &&
		       errno != EAGAIN))
		return;
	while (sp_test_event(sb->w, ST_EV_OUT, 0) == 0) {
		woke = 1;
		if (sb->clk.master)
			mmd_mailbox_take(sb->mbox, sb->w, sb->gmem, rp, st);
	}
	while (sp_test_event(sb->w, ST_EV_WAKE, 0) == 0)
		woke = 1;
	if (woke && sb->idle) {
		sb->idle_woken++;
		idle_leave(sb, "a node has work");
	}
	/* the slots' and the acks' completions are only the master's */
	if (!sb->clk.master)
		for (uint32_t k = 0; k < 16; k++)
			while (sp_test_event(sb->w, k, 0) == 0)
				;
	while ((rc = sp_test_event(sb->w, ST_EV_LOCAL_HB, 0)) != -EAGAIN) {
		uint64_t at = 0;

		/* one completion per node when it went as PUTs: the
		 * heartbeat is done with the last */
		if (sb->hb_rc == 0)
			sb->hb_rc = rc;
		if (sb->hb_pending > 1) {
			sb->hb_pending--;
			continue;
		}
		sb->hb_pending = 0;
		rc = sb->hb_rc;
		sp_event_time(sb->w, ST_EV_LOCAL_HB, &at);
		mmd_stats_hb_done(&sb->stats, &sb->clk, rc, at);
		if (rc == 0 && sb->clk.hb_inflight)
			sb->hb_done_slice = sb->clk.hb_sent_slice;
		sb->clk.hb_inflight = 0;
	}
	/* a slice boundary passed while the last heartbeat was in flight:
	 * its commands (the active row above all) go now, late, rather than
	 * at the next boundary — skipping every other heartbeat would show
	 * the nodes the same gang row each time */
	if (sb->clk.master && sb->hb_owed && !sb->clk.hb_inflight) {
		sb->hb_owed = 0;
		sp_event_quiet(sb->w, ST_EV_LOCAL_HB, 1);
		heartbeat(sb, st, 0);
	}
}

/* The configuration's scheduler settings, proposed by a new master if
 * the replicated ones differ (an administrator changed the file and
 * restarted the replicas); refused while rows that would go hold jobs. */
static void sched_apply(struct mmd_strobe *sb, const mm_state_t *st)
{
	mm_sched_conf_t want, have;
	mm_op_t op = { .code = MM_OP_SCHED, .sched = &want };

	sb->hooks.sched_conf(sb->hooks.ctx, &want);
	mm_sched_get(st, &have);
	if (!memcmp(&want, &have, sizeof(want)))
		return;
	qb_log(LOG_NOTICE, "scheduler settings from %s: policy %s, mpl %u, "
	       "quantum %u slices, placement %s (were %s, %u, %u, %s)",
	       sb->cfg->path, mm_policy_name(want.policy), want.mpl,
	       want.quantum_slices, mm_placement_name(want.placement),
	       mm_policy_name(have.policy), have.mpl, have.quantum_slices,
	       mm_placement_name(have.placement));
	propose(sb, &op);
}

/* Everything the strobe needs is re-read: the nodes' state is
 * level-triggered (the job list, done slots, mailboxes still held until
 * acknowledged), the job table and exit statuses are agreed.  Slice
 * numbers continue from the wall clock so they never go backwards
 * across masters. */
void mmd_strobe_master(struct mmd_strobe *sb, const mm_state_t *st,
		       rp_replica_t *rp, int master)
{
	sp_view_info_t vi;

	idle_leave(sb, "the strobe master changed");
	sb->clk.master = master;
	mmd_stage_free(&sb->stage);
	mmd_jobs_master_reset(sb->jobs);
	if (!master) {
		qb_log(LOG_NOTICE, "manager %s: no longer the strobe master",
		       sb->name);
		return;
	}
	sb->clk.slice = mmd_wall_us() / sb->cfg->slice_us;
	sb->clk.hb_inflight = 0;
	sb->hb_pending = 0;
	sb->hb_owed = 0;
	sb->hb_kicked = 0;
	sb->hb_done_slice = 0;
	sb->hb_full_len = 0;
	sb->tick_inflight = 0;
	sb->tick_wanted = 1;
	sb->strobe_checked = sb->clk.slice;
	sb->idle_delay = MMD_IDLE_PROBE_MIN;
	sb->idle_probe = sb->clk.slice + sb->idle_delay;
	sp_view(sb->w, &vi, sb->live);
	for (uint32_t x = 0; x < sb->nworld; x++) {
		sb->joined_slice[x] = sb->clk.slice;
		sp_view_joined(sb->w, x, &sb->joined[x]);
		sb->seen[x] = (uint8_t)sp_nodeset_has(sb->live, x);
	}
	mmd_mailbox_master_reset(sb->mbox);
	/* chunk numbers above any the last master used */
	if (sb->pmi)
		mmd_pmi_master_reset(sb->pmi, mmd_wall_us() << 8);
	qb_log(LOG_NOTICE, "manager %s: strobe master from slice %llu",
	       sb->name, (unsigned long long)sb->clk.slice);
	sched_apply(sb, st);
	mmd_mailbox_take(sb->mbox, sb->w, sb->gmem, rp, st);
}

void mmd_strobe_timer(struct mmd_strobe *sb, const mm_state_t *st,
		      rp_replica_t *rp, int fd, uint64_t n)
{
	uint32_t na;
	uint64_t adv = 1;
	int full = 0, was_idle = sb->idle;

	if (sb->idle) {
		/* each expiration is idle_every slices */
		adv = n * sb->idle_every;
		sb->clk.micro += adv * sb->clk.micro_slices;
		sb->clk.idle_slices += adv;
		sb->idle_next_ns += n * idle_period_ns(sb);
		full = 1;
	}
	/* late by several: one pass, but a slice boundary is not skipped */
	for (uint64_t i = 0; !was_idle && i < n; i++)
		full |= ++sb->clk.micro % sb->clk.micro_slices == 0;
	mmd_stats_timer(&sb->stats, &sb->clk, fd, n);
	if (!sb->clk.master || !sb->w) {
		/* a replica that is not the strobe master only serves */
		mmd_strobe_notify(sb, st, rp, -1);
		return;
	}
	if (!full) {
		/* a micro-slice: collect events, send no commands */
		mmd_strobe_notify(sb, st, rp, -1);
		check_ends(sb, st);
		check_ckpts(sb, st);
		mmd_strobe_pmi(sb, st);
		return;
	}
	sb->clk.slice += adv;
	mmd_strobe_notify(sb, st, rp, -1);
	mmd_mailbox_take(sb->mbox, sb->w, sb->gmem, rp, st);
	check_view(sb, st);
	check_strobe(sb, st);
	if (tick_due(sb, st)) {
		/* with the retention of this replica's configuration: the
		 * op carries it, so every replica purges alike */
		mm_op_t op = {
			.code = MM_OP_TICK_RETAIN, .slice = sb->clk.slice,
			.now_ms = mmd_wall_ms(),
			.retain_jobs = sb->cfg->job_retention,
			.retain_ms = (uint64_t)sb->cfg->job_retention_s * 1000,
			.history_jobs = sb->cfg->history_jobs,
			.history_ms = (uint64_t)sb->cfg->history_days *
				      86400000,
		};

		sb->tick_inflight = 1;
		sb->tick_wanted = 0;
		sb->tick_last_ms = mmd_strobe_now_ms(sb);
		propose(sb, &op);
	}
	check_ends(sb, st);
	check_ckpts(sb, st);
	mmd_strobe_pmi(sb, st);
	check_ckpt_due(sb, st);
	na = mmd_strobe_active(sb, st);
	mmd_stage_step(&sb->stage, sb->w, st, sb->clk.slice, sb->active, na);
	/* before the heartbeat: the block says whether the strobe idles */
	idle_try(sb, st);
	heartbeat(sb, st, 0);
	if (!was_idle)
		mmd_stats_sent(&sb->stats, &sb->clk);
}

void mmd_strobe_metrics(const struct mmd_strobe *sb, struct mmd_text *t)
{
	struct mmd_phist late;

	mmd_text_head(t, "storm_strobe_master", "gauge",
		      "1 while this replica is the strobe master.");
	mmd_text_printf(t, "storm_strobe_master %d\n", sb->clk.master);
	mmd_text_head(t, "storm_strobe_slices_total", "counter",
		      "Slices this replica strobed as master (since its "
		      "statistics were last reset).");
	mmd_text_printf(t, "storm_strobe_slices_total %llu\n",
			(unsigned long long)sb->stats.slices);
	mmd_text_head(t, "storm_strobe_missed_total", "counter",
		      "Slice boundaries the strobe master's timer missed.");
	mmd_text_printf(t, "storm_strobe_missed_total %llu\n",
			(unsigned long long)sb->stats.missed);
	mmd_stats_phist(&sb->stats.lateness, &late);
	mmd_text_head(t, "storm_strobe_lateness_seconds", "histogram",
		      "From a slice boundary to every node holding its "
		      "heartbeat (this replica as master).");
	mmd_text_phist(t, "storm_strobe_lateness_seconds", "", &late);
	mmd_text_head(t, "storm_launch_seconds", "histogram",
		      "Staging a job: its program and files to every node's "
		      "RAM disk (this replica as master).");
	mmd_text_phist(t, "storm_launch_seconds", "", &sb->stage.launch);
}
