/*
 * repl.c — the replication glue (repl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qb/qblog.h>

#include "clients.h"
#include "repl.h"

/* ---- replies: rc i32 | job u32 | error text (little endian) -------------- */

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static size_t reply_put(uint8_t *p, size_t cap, int rc, uint32_t job,
			const char *err)
{
	size_t n = err ? strlen(err) : 0;

	if (cap < 8)
		return 0;
	if (n > cap - 8)
		n = cap - 8;
	wr32(p, (uint32_t)rc);
	wr32(p + 4, job);
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
	res->rc = (int)(int32_t)rd32(p);
	res->job = rd32(p + 4);
	snprintf(res->err, sizeof(res->err), "%.*s", (int)(len - 8), p + 8);
}

/* ---- callbacks ------------------------------------------------------------ */

static int on_apply(void *ctx, const rp_request_t *req, uint8_t *reply,
		    size_t cap, size_t *rlen)
{
	struct mmd_repl *r = ctx;
	mm_result_t res = { 0 };
	void *arena = NULL;
	mm_op_t op;
	int rc;

	if (mm_op_decode(req->op, req->len, &op, &arena)) {
		/* agreed, so every replica refuses it alike */
		*rlen = reply_put(reply, cap, -STORM_EPROTO, 0,
				  "operation not understood by this storm-mm "
				  "(a newer version?)");
		return 0;
	}
	mm_apply(*r->st, &op, &res);
	if (res.rc == -ENOMEM) {
		/* this replica's memory, not the operation: a peer with
		 * memory would apply it, so refusing here would diverge */
		free(arena);
		return -ENOMEM;
	}
	if (res.rc && op.code != MM_OP_TICK && op.code != MM_OP_TICK_RETAIN)
		qb_log(LOG_DEBUG, "op %d refused: %s", op.code, res.err);
	*rlen = reply_put(reply, cap, res.rc, res.job, res.rc ? res.err : "");
	/* the jobs retention took out go to the history in this very
	 * transaction (a replayed one is there already) */
	if (op.code == MM_OP_TICK_RETAIN && !res.rc && !req->replay &&
	    (rc = mmd_history_apply(&r->hist, rp_txn(r->rp), *r->st,
				    req->index, op.history_jobs,
				    op.history_ms))) {
		qb_log(LOG_ERR, "history: cannot write at index %llu: %s",
		       (unsigned long long)req->index, storm_strerror(rc));
		free(arena);
		return rc;
	}
	rc = r->hooks.applied(r->hooks.ctx, &op, &res);
	free(arena);
	return rc;
}

/* The snapshot: the state machine's image, the EXIT statuses of running
 * jobs taken so far (jobrec.h), the PMI barriers' records (pmi.h), the
 * mailboxes' agreed part, then u32 length of the PMI part | u32 length
 * of the statuses | u32 SNAP_TAIL_MAGIC2.  Older images load: with
 * SNAP_TAIL_MAGIC (no PMI part), or without a tail at all (state |
 * mailbox part, before the statuses were added). */
#define SNAP_TAIL_MAGIC 0x5453414au  /* "JAST" */
#define SNAP_TAIL_MAGIC2 0x3253414au /* "JAS2" */

static int on_snapshot(void *ctx, uint8_t **buf, size_t *len)
{
	struct mmd_repl *r = ctx;
	uint8_t *st = NULL, *p;
	size_t slen = 0, jlen, plen, mlen = mmd_mailbox_size(r->mbox), n;
	struct mmd_pmi *pmi = r->mbox->pmi;
	int rc = mm_state_encode(*r->st, &st, &slen);

	if (rc)
		return rc;
	jlen = mmd_jobs_snap_size(r->jobs, *r->st);
	plen = pmi ? mmd_pmi_snap_size(pmi) : 0;
	n = slen + jlen + plen + mlen + 12;
	if (jlen > UINT32_MAX || plen > UINT32_MAX || !(p = malloc(n))) {
		free(st);
		return -ENOMEM;
	}
	memcpy(p, st, slen);
	mmd_jobs_snap_encode(r->jobs, *r->st, p + slen);
	if (pmi)
		mmd_pmi_snap_encode(pmi, p + slen + jlen);
	mmd_mailbox_encode(r->mbox, p + slen + jlen + plen);
	wr32(p + n - 12, (uint32_t)plen);
	wr32(p + n - 8, (uint32_t)jlen);
	wr32(p + n - 4, SNAP_TAIL_MAGIC2);
	free(st);
	*buf = p;
	*len = n;
	return 0;
}

static int on_restore(void *ctx, const uint8_t *buf, size_t len, char *err,
		      size_t errlen)
{
	struct mmd_repl *r = ctx;
	size_t mlen = mmd_mailbox_size(r->mbox), jlen = 0, plen = 0, slen;
	const uint8_t *jobs = NULL, *mbox, *pmi = NULL;
	mm_state_t *st = NULL;
	int rc;

	if (len >= 12 && rd32(buf + len - 4) == SNAP_TAIL_MAGIC2) {
		plen = rd32(buf + len - 12);
		jlen = rd32(buf + len - 8);
		if (jlen > len - 12 || plen > len - 12 - jlen ||
		    mlen > len - 12 - jlen - plen) {
			snprintf(err, errlen, "snapshot of %zu bytes: its tail "
				 "names %zu bytes of job statuses and %zu of "
				 "PMI records that do not fit", len, jlen, plen);
			return -STORM_EPROTO;
		}
		slen = len - 12 - mlen - plen - jlen;
		jobs = buf + slen;
		pmi = buf + slen + jlen;
		mbox = buf + slen + jlen + plen;
	} else if (len >= 8 && rd32(buf + len - 4) == SNAP_TAIL_MAGIC) {
		jlen = rd32(buf + len - 8);
		if (jlen > len - 8 || mlen > len - 8 - jlen) {
			snprintf(err, errlen, "snapshot of %zu bytes: its tail "
				 "names %zu bytes of job statuses that do not "
				 "fit", len, jlen);
			return -STORM_EPROTO;
		}
		slen = len - 8 - mlen - jlen;
		jobs = buf + slen;
		mbox = buf + slen + jlen;
	} else {
		if (len < mlen) {
			snprintf(err, errlen, "snapshot of %zu bytes is too "
				 "short", len);
			return -STORM_EPROTO;
		}
		slen = len - mlen;
		mbox = buf + slen;
	}
	/* every part checked first: nothing changes unless all decode */
	{
		struct mmd_mailbox probe = *r->mbox;
		uint64_t *seq = malloc(8u * r->mbox->nworld);

		if (!seq)
			return -ENOMEM;
		probe.box_seq = seq;
		rc = mmd_mailbox_decode(&probe, mbox, mlen, err, errlen);
		free(seq);
		if (rc)
			return rc;
	}
	if ((rc = mm_state_decode(buf, slen, &st, err, errlen)))
		return rc;
	if (jobs) {
		struct mmd_jobs probe = { 0 };

		rc = mmd_jobs_snap_decode(&probe, jobs, jlen, err, errlen);
		mmd_jobs_free(&probe);
		if (rc) {
			mm_state_destroy(st);
			return rc;
		}
	}
	if (pmi && r->mbox->pmi) {
		struct mmd_pmi probe = { 0 };

		rc = mmd_pmi_snap_decode(&probe, pmi, plen, err, errlen);
		mmd_pmi_clear(&probe); /* only checked here */
		if (rc) {
			mm_state_destroy(st);
			return rc;
		}
	}
	mm_state_destroy(*r->st);
	*r->st = st;
	mmd_mailbox_decode(r->mbox, mbox, mlen, err, errlen);
	if (jobs && (rc = mmd_jobs_snap_decode(r->jobs, jobs, jlen, err,
					       errlen)))
		return rc; /* out of memory: the replica stops */
	if (pmi && r->mbox->pmi &&
	    (rc = mmd_pmi_snap_decode(r->mbox->pmi, pmi, plen, err, errlen)))
		return rc;
	r->hooks.restored(r->hooks.ctx);
	return 0;
}

static int on_installed(void *ctx, uint64_t index)
{
	struct mmd_repl *r = ctx;

	return mmd_history_installed(&r->hist, rp_txn(r->rp), index);
}

size_t mmd_repl_image_bytes(struct mmd_repl *r)
{
	uint8_t *img = NULL;
	size_t len = 0;

	if (on_snapshot(r, &img, &len))
		return 0;
	free(img);
	return len;
}

int mmd_repl_history_page(struct mmd_repl *r, const struct mmd_hist_rec *recs,
			  size_t n, uint32_t last, int more)
{
	return mmd_history_put_page(&r->hist, rp_txn(r->rp), recs, n, last,
				    more);
}

static void on_cast(void *ctx, uint32_t from, const void *msg, size_t len)
{
	struct mmd_repl *r = ctx;
	const uint8_t *p = msg;

	(void)from;
	/* BOX: node u32 | the box (header + records) */
	if (len < 4)
		return;
	r->hooks.box(r->hooks.ctx, rd32(p), p + 4, len - 4);
}

static void on_status(void *ctx, const rp_status_t *st)
{
	struct mmd_repl *r = ctx;

	r->rs = *st;
	r->hooks.status(r->hooks.ctx, st);
}

static void on_done(void *ctx, void *cookie, int rc, const uint8_t *reply,
		    size_t len)
{
	struct mmd_repl *r = ctx;
	struct mmd_req *q = cookie, **pp;
	mm_result_t res;

	for (pp = &r->reqs; *pp && *pp != q; pp = &(*pp)->next)
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
	if (r->hooks.settled)
		r->hooks.settled(r->hooks.ctx, q->conn, q->kind, &res);
	if (q->c)
		r->hooks.answer(r->hooks.ctx, q->c, q->kind, q->job, &res);
	free(q);
}

/* ---- API ------------------------------------------------------------------ */

int mmd_repl_open(struct mmd_repl *r, const st_config_t *cfg,
		  const st_host_t *host, mm_state_t **st,
		  struct mmd_mailbox *mbox, struct mmd_jobs *jobs,
		  const struct mmd_repl_hooks *hooks, char *err,
		  size_t errlen)
{
	static const rp_callbacks_t cb = {
		.apply = on_apply,
		.snapshot = on_snapshot,
		.restore = on_restore,
		.cast = on_cast,
		.status = on_status,
		.done = on_done,
		.installed = on_installed,
	};
	int ret;
	rp_config_t rc = {
		.unsafe_nosync = !strcmp(cfg->state_sync, "nosync"),
		.backend = cfg->nmanagers > 1 ? RP_BACKEND_CPG :
						RP_BACKEND_SOLO,
		.cluster = cfg->cluster,
		.replica = host->world_id,
		.nreplicas = cfg->nmanagers,
		.state_version = MMD_STATE_VERSION,
	};

	*r = (struct mmd_repl){ .st = st, .mbox = mbox, .jobs = jobs,
				.hooks = *hooks, .name = host->name };
	if (!strcmp(cfg->replication, "corosync"))
		rc.backend = RP_BACKEND_CPG;
	else if (!strcmp(cfg->replication, "none"))
		rc.backend = RP_BACKEND_SOLO;
	if (rc.backend == RP_BACKEND_SOLO && cfg->nmanagers > 1) {
		snprintf(err, errlen, "%s: replication = none with %u "
			 "[manager] sections: several managers need corosync",
			 cfg->path, cfg->nmanagers);
		return -STORM_ECONFIG;
	}
	snprintf(r->state_path, sizeof(r->state_path), "%s/%s",
		 cfg->state_dir, host->name);
	if (rc.unsafe_nosync)
		qb_log(LOG_WARNING, "state_sync = nosync: a crash of this host "
		       "may corrupt %s (for measurements only)",
		       r->state_path);
	rc.state_dir = r->state_path;
	r->opbuf = malloc(RP_OP_MAX);
	if (!r->opbuf)
		return -ENOMEM;
	ret = rp_create(&rc, &cb, r, &r->rp, err, errlen);
	if (ret)
		return ret;
	/* the history lives in the same environment, written in the same
	 * transactions (history.h) */
	return mmd_history_open(&r->hist, rp_env(r->rp), err, errlen);
}

int mmd_repl_start(struct mmd_repl *r, char *err, size_t errlen)
{
	return rp_start(r->rp, err, errlen);
}

void mmd_repl_close(struct mmd_repl *r)
{
	rp_destroy(r->rp);
	r->rp = NULL;
	while (r->reqs) {
		struct mmd_req *q = r->reqs;

		r->reqs = q->next;
		free(q);
	}
	free(r->opbuf);
	r->opbuf = NULL;
}

int mmd_repl_propose_client(struct mmd_repl *r, struct mmd_client *c,
			    uint64_t client_key, uint64_t seq, uint32_t uid,
			    uint32_t gid, int kind, const mm_op_t *op,
			    mm_result_t *res)
{
	struct mmd_req *q;
	int n = mm_op_encode(op, r->opbuf, RP_OP_MAX), rc;

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
	q->conn = c ? c->id : 0;
	q->kind = kind;
	q->job = op->job;
	rc = rp_propose(r->rp, client_key, seq, uid, gid, r->opbuf,
			(size_t)n, q);
	if (rc) {
		free(q);
		res->rc = rc;
		snprintf(res->err, sizeof(res->err), "%s (manager %s)",
			 storm_strerror(rc), r->name);
		return rc;
	}
	q->next = r->reqs;
	r->reqs = q;
	return 0;
}

void mmd_repl_propose(struct mmd_repl *r, const mm_op_t *op)
{
	int n = mm_op_encode(op, r->opbuf, RP_OP_MAX);

	if (n < 0 || rp_propose(r->rp, 0, 0, 0, 0, r->opbuf, (size_t)n,
				NULL))
		qb_log(LOG_DEBUG, "operation %d not proposed", op->code);
}

void mmd_repl_client_gone(struct mmd_repl *r, struct mmd_client *c)
{
	for (struct mmd_req *q = r->reqs; q; q = q->next)
		if (q->c == c)
			q->c = NULL;
}

int mmd_repl_dispatch(struct mmd_repl *r)
{
	int rc = rp_dispatch(r->rp);

	return rc == -STORM_ECLOSED || rc == -STORM_ESTATE ? rc : 0;
}

void mmd_repl_tick(struct mmd_repl *r, uint64_t now_ms)
{
	int t;

	if (now_ms - r->announce_ms >= 1000) {
		r->announce_ms = now_ms;
		rp_announce(r->rp);
	}
	t = rp_next_timeout_ms(r->rp);
	if (t == 0 || t == 2)
		rp_tick(r->rp);
}
