/*
 * mmd_repl.c — storm-mm on top of replication/: client writes and the
 * strobe master's findings become operations in agreed order; every
 * replica applies them (mmd_apply) and the one that took a client's
 * request answers once it is durable.  Also the nodes' mailboxes: the
 * strobe master multicasts each box it takes to every replica (rp_cast),
 * so output reaches clients on any replica, exit statuses are known to
 * whoever becomes master next, and the box is acknowledged to its node
 * only once every replica has it.
 *
 * The application snapshot is the state machine's (mm_state_encode) plus
 * the shell's agreed extras: the last box taken from each node and the
 * rank statuses of running jobs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qb/qblog.h>

#include "mmd.h"

/* Bumped when the snapshot or operation encoding changes incompatibly. */
#define MMD_STATE_VERSION 1

/* ---- replies: rc i32 | job u32 | error text ------------------------------ */

static size_t reply_put(uint8_t *p, size_t cap, int rc, uint32_t job,
			const char *err)
{
	size_t n = err ? strlen(err) : 0;

	if (cap < 8)
		return 0;
	if (n > cap - 8)
		n = cap - 8;
	memcpy(p, &rc, 4);
	memcpy(p + 4, &job, 4);
	if (n)
		memcpy(p + 8, err, n);
	return 8 + n;
}

static void reply_get(const uint8_t *p, size_t len, mm_result_t *res)
{
	memset(res, 0, sizeof(*res));
	if (len < 8) {
		res->rc = -STORM_EPROTO;
		snprintf(res->err, sizeof(res->err), "empty reply");
		return;
	}
	memcpy(&res->rc, p, 4);
	memcpy(&res->job, p + 4, 4);
	snprintf(res->err, sizeof(res->err), "%.*s", (int)(len - 8), p + 8);
}

/* ---- callbacks ------------------------------------------------------------ */

static void on_apply(void *ctx, const rp_request_t *req, uint8_t *reply,
		     size_t cap, size_t *rlen)
{
	struct mmd *mm = ctx;
	mm_result_t res = { 0 };
	void *arena = NULL;
	mm_op_t op;

	if (mm_op_decode(req->op, req->len, &op, &arena)) {
		*rlen = reply_put(reply, cap, -STORM_EPROTO, 0,
				  "operation not understood by this storm-mm "
				  "(a newer version?)");
		return;
	}
	mmd_apply(mm, &op, &res);
	if (op.code == MM_OP_SUBMIT && res.rc == 0)
		mm->tick_wanted = 1;
	if (op.code == MM_OP_TICK)
		mm->tick_inflight = 0;
	if (op.code == MM_OP_JOB_STAGED || op.code == MM_OP_JOB_FAILED ||
	    op.code == MM_OP_CANCEL || op.code == MM_OP_NODE_UP ||
	    op.code == MM_OP_NODE_DOWN || op.code == MM_OP_JOB_EXITED)
		mm->tick_wanted = 1; /* cpus may have come free */
	*rlen = reply_put(reply, cap, res.rc, res.job, res.rc ? res.err : "");
	free(arena);
}

static int on_snapshot(void *ctx, uint8_t **buf, size_t *len)
{
	struct mmd *mm = ctx;
	uint8_t *st = NULL, *p;
	size_t slen = 0, n;
	int rc = mm_state_encode(mm->st, &st, &slen);

	if (rc)
		return rc;
	/* state | nworld u32 | box seq per world id (u64) */
	n = slen + 4 + 8u * mm->nworld;
	if (!(p = malloc(n))) {
		free(st);
		return -ENOMEM;
	}
	memcpy(p, st, slen);
	memcpy(p + slen, &mm->nworld, 4);
	memcpy(p + slen + 4, mm->box_seq, 8u * mm->nworld);
	free(st);
	*buf = p;
	*len = n;
	return 0;
}

static int on_restore(void *ctx, const uint8_t *buf, size_t len, char *err,
		      size_t errlen)
{
	struct mmd *mm = ctx;
	size_t tail = 4 + 8u * mm->nworld;
	mm_state_t *st = NULL;
	uint32_t nworld;
	int rc;

	if (len < tail) {
		snprintf(err, errlen, "snapshot of %zu bytes is too short", len);
		return -STORM_EPROTO;
	}
	memcpy(&nworld, buf + len - tail, 4);
	if (nworld != mm->nworld) {
		snprintf(err, errlen, "snapshot of a machine of %u hosts, the "
			 "configuration has %u: every head node must read "
			 "the same file", nworld, mm->nworld);
		return -STORM_EPROTO;
	}
	if ((rc = mm_state_decode(buf, len - tail, &st, err, errlen)))
		return rc;
	mm_state_destroy(mm->st);
	mm->st = st;
	mm->active_valid = 0;
	memcpy(mm->box_seq, buf + len - tail + 4, 8u * mm->nworld);
	mm->tick_wanted = 1;
	return 0;
}

static void on_cast(void *ctx, uint32_t from, const void *msg, size_t len)
{
	struct mmd *mm = ctx;
	const uint8_t *p = msg;
	uint32_t node;

	(void)from;
	/* BOX: node u32 | the box (header + records) */
	if (len < 4)
		return;
	memcpy(&node, p, 4);
	if (node >= mm->nworld)
		return;
	mmd_box_agreed(mm, node, p + 4, len - 4);
}

static void on_status(void *ctx, const rp_status_t *st)
{
	struct mmd *mm = ctx;
	int master;

	/* out of the group means out of the machine too (see
	 * mmd_world_rejoin): no strobe until it joined again */
	if (mm->was_synced && !st->synced)
		mm->world_stale = 1;
	mm->was_synced = st->synced;
	master = st->synced && st->primary && !mm->world_stale &&
		 st->master == (int)mm->host->world_id;
	mm->rs = *st;
	if (master != mm->master)
		mmd_master_changed(mm, master);
	mmd_client_waits(mm);
}

static void on_done(void *ctx, void *cookie, int rc, const uint8_t *reply,
		    size_t len)
{
	struct mmd *mm = ctx;
	struct mmd_req *q = cookie, **pp;
	mm_result_t res;

	for (pp = &mm->reqs; *pp && *pp != q; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = q->next;
	if (rc) {
		memset(&res, 0, sizeof(res));
		res.rc = rc;
		snprintf(res.err, sizeof(res.err), "%s", storm_strerror(rc));
	} else {
		reply_get(reply, len, &res);
	}
	if (q->c)
		mmd_client_answer(mm, q->c, q->kind, q->job, &res);
	free(q);
}

/* ---- API for the shell ------------------------------------------------------ */

int mmd_repl_open(struct mmd *mm, char *err, size_t errlen)
{
	static const rp_callbacks_t cb = {
		.apply = on_apply,
		.snapshot = on_snapshot,
		.restore = on_restore,
		.cast = on_cast,
		.status = on_status,
		.done = on_done,
	};
	rp_config_t rc = {
		.backend = mm->cfg.nmanagers > 1 ? RP_BACKEND_CPG :
						   RP_BACKEND_SOLO,
		.cluster = mm->cfg.cluster,
		.replica = mm->host->world_id,
		.nreplicas = mm->cfg.nmanagers,
		.state_dir = mm->state_path,
		.state_version = MMD_STATE_VERSION,
	};

	if (!strcmp(mm->cfg.replication, "corosync"))
		rc.backend = RP_BACKEND_CPG;
	else if (!strcmp(mm->cfg.replication, "none"))
		rc.backend = RP_BACKEND_SOLO;
	if (rc.backend == RP_BACKEND_SOLO && mm->cfg.nmanagers > 1) {
		snprintf(err, errlen, "%s: replication = none with %u "
			 "[manager] sections: several managers need corosync",
			 mm->cfg.path, mm->cfg.nmanagers);
		return -STORM_ECONFIG;
	}
	snprintf(mm->state_path, sizeof(mm->state_path), "%s/%s",
		 mm->cfg.state_dir, mm->host->name);
	rc.state_dir = mm->state_path;
	mm->opbuf = malloc(RP_OP_MAX);
	if (!mm->opbuf)
		return -ENOMEM;
	return rp_create(&rc, &cb, mm, &mm->rp, err, errlen);
}

int mmd_repl_start(struct mmd *mm, char *err, size_t errlen)
{
	return rp_start(mm->rp, err, errlen);
}

void mmd_repl_close(struct mmd *mm)
{
	rp_destroy(mm->rp);
	mm->rp = NULL;
	while (mm->reqs) {
		struct mmd_req *q = mm->reqs;

		mm->reqs = q->next;
		free(q);
	}
	free(mm->opbuf);
	mm->opbuf = NULL;
}

/* A client's write: ordered, applied everywhere, answered when durable. */
int mmd_propose_client(struct mmd *mm, struct mmd_client *c, int kind,
		       const mm_op_t *op, mm_result_t *res)
{
	struct mmd_req *q;
	int n = mm_op_encode(op, mm->opbuf, RP_OP_MAX), rc;

	memset(res, 0, sizeof(*res));
	if (n < 0) {
		res->rc = -E2BIG;
		snprintf(res->err, sizeof(res->err), "request too large "
			 "(over %u bytes encoded): fewer or shorter "
			 "arguments, environment or files", RP_OP_MAX);
		return res->rc;
	}
	if (!(q = calloc(1, sizeof(*q))))
		return res->rc = -ENOMEM;
	q->c = c;
	q->kind = kind;
	q->job = op->job;
	rc = rp_propose(mm->rp, c->client_key, c->seq, c->uid, c->gid,
			mm->opbuf, (size_t)n, q);
	if (rc) {
		free(q);
		res->rc = rc;
		snprintf(res->err, sizeof(res->err), "%s (manager %s)",
			 storm_strerror(rc), mm->host->name);
		return rc;
	}
	q->next = mm->reqs;
	mm->reqs = q;
	return 0;
}

/* The strobe master's findings: proposed without a client (the state
 * machine refuses a repeat, e.g. after a handover, without changing). */
void mmd_propose(struct mmd *mm, const mm_op_t *op)
{
	int n;

	if (!mm->master)
		return;
	n = mm_op_encode(op, mm->opbuf, RP_OP_MAX);
	if (n < 0 || rp_propose(mm->rp, 0, 0, 0, 0, mm->opbuf, (size_t)n,
				NULL))
		qb_log(LOG_DEBUG, "operation %d not proposed", op->code);
}

void mmd_client_gone(struct mmd *mm, struct mmd_client *c)
{
	for (struct mmd_req *q = mm->reqs; q; q = q->next)
		if (q->c == c)
			q->c = NULL;
}

int mmd_on_repl(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	int rc;

	(void)fd;
	(void)revents;
	rc = rp_dispatch(mm->rp);
	if (rc == -STORM_ECLOSED || rc == -STORM_ESTATE) {
		qb_log(LOG_ERR, "replication stopped (%s): exiting so that "
		       "this replica restarts and rejoins",
		       storm_strerror(rc));
		mm->exit_code = 1;
		qb_loop_stop(mm->loop);
	}
	return 0;
}

/* Seconds-scale timers of the replication layer (recovery wait) and
 * corosync's try-again ride on the strobe's timer. */
void mmd_repl_tick(struct mmd *mm)
{
	uint64_t now = mmd_now_ms(mm);

	if (mm->world_stale && mm->rs.synced) {
		rp_status_t st;

		mmd_world_rejoin(mm);
		rp_status(mm->rp, &st);
		on_status(mm, &st);
	}
	if (now - mm->announce_ms >= 1000) {
		mm->announce_ms = now;
		rp_announce(mm->rp);
	}
	int t = rp_next_timeout_ms(mm->rp);

	if (t == 0 || t == 2)
		rp_tick(mm->rp);
}
