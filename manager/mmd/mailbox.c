/*
 * mailbox.c — the nodes' output mailboxes (mailbox.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "mailbox.h"

static void wr64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int mmd_mailbox_init(struct mmd_mailbox *b, const st_layout_t *lay,
		     uint32_t nworld, uint32_t nmanagers,
		     struct mmd_jobs *jobs,
		     const struct mmd_mailbox_hooks *hooks)
{
	*b = (struct mmd_mailbox){ .lay = lay, .nworld = nworld,
				   .nmanagers = nmanagers, .jobs = jobs,
				   .hooks = *hooks };
	b->box_seq = calloc(nworld, sizeof(*b->box_seq));
	b->box_cast = calloc(nworld, sizeof(*b->box_cast));
	b->ack = calloc(nworld, sizeof(*b->ack));
	if (!b->box_seq || !b->box_cast || !b->ack ||
	    sp_nodeset_create(nworld, &b->one) ||
	    mmd_rerun_create(&b->rerun, MMD_RERUN_BUDGET))
		return -ENOMEM;
	return 0;
}

void mmd_mailbox_forget(struct mmd_mailbox *b, uint32_t job)
{
	mmd_rerun_forget(b->rerun, job);
}

void mmd_mailbox_fini(struct mmd_mailbox *b)
{
	free(b->box_seq);
	free(b->box_cast);
	free(b->ack);
	sp_nodeset_destroy(b->one);
	mmd_rerun_destroy(b->rerun);
	b->rerun = NULL;
	b->box_seq = b->box_cast = NULL;
	b->ack = NULL;
	b->one = NULL;
}

/* A node's word on the checkpoint epoch its job is taking: its figures
 * (the commit waits for every node's, then its COMPARE-AND-WRITE), or
 * its failure, which the master turns into the epoch's abort. */
static void take_ckpt(struct mmd_mailbox *b, int master, const mm_state_t *st,
		      const mm_job_t *j, const st_rec_t *rec)
{
	struct mmd_job *r;
	st_ckpt_rec_t c;

	if (j->state != MM_JOB_RUNNING ||
	    st_ckpt_rec_decode(rec->data, rec->len, &c) ||
	    c.epoch != j->ckpt_want || !(r = mmd_jobs_get(b->jobs, j->id)))
		return; /* late, or of an epoch already settled */
	if (r->ckpt_epoch != c.epoch) {
		r->ckpt_epoch = c.epoch;
		r->ckpt_got = 0;
		r->ckpt_bytes = 0;
		r->ckpt_stop_us = 0;
		r->ckpt_proposed = 0;
		r->ckpt_levels = ~0u;
	}
	if (!c.rc) {
		/* each node once: a box sent again repeats its records */
		for (uint32_t k = 0; k < r->ckpt_got; k++)
			if (r->ckpt_from[k] == rec->rank)
				return;
		if (r->ckpt_got == r->ckpt_cap) {
			uint32_t cap = r->ckpt_cap ? 2 * r->ckpt_cap : 8;
			uint32_t *nf = realloc(r->ckpt_from,
					       cap * sizeof(*nf));

			if (!nf)
				return; /* not counted: the commit waits */
			r->ckpt_from = nf;
			r->ckpt_cap = cap;
		}
		r->ckpt_from[r->ckpt_got++] = rec->rank;
		r->ckpt_levels &= c.levels;
		r->ckpt_bytes += c.bytes;
		if (c.stop_us > r->ckpt_stop_us)
			r->ckpt_stop_us = c.stop_us;
		return;
	}
	if (master) {
		char why[MM_REASON_MAX];
		mm_node_t n;
		mm_op_t op = { .code = MM_OP_CKPT_ABORT, .job = j->id,
			       .epoch = c.epoch, .reason = why };

		if (mm_node_by_id(st, rec->rank, &n))
			snprintf(n.name, sizeof(n.name), "%u", rec->rank);
		snprintf(why, sizeof(why), "node %s: %.*s", n.name,
			 (int)c.why_len, c.why);
		b->hooks.propose(b->hooks.ctx, &op);
	}
}

/* Output on to the watchers, through the rerun filter. */
struct pass {
	struct mmd_mailbox *b;
	uint32_t job, rank;
	int stream;
};

static void pass_on(void *ctx, const uint8_t *p, uint32_t len)
{
	struct pass *o = ctx;

	o->b->hooks.output(o->b->hooks.ctx, o->job, o->rank, o->stream + 1,
			   p, len);
}

static void pass_mark(void *ctx, int stream, const uint8_t *p, uint32_t len)
{
	struct pass *o = ctx;

	o->b->hooks.output(o->b->hooks.ctx, o->job, o->rank, stream + 1, p,
			   len);
}

/* A job that may run a part again: its output is kept to compare with. */
static int may_rerun(const mm_job_t *j)
{
	return j->nckpts || j->ckpt_want || j->ckpt_every_s || j->requeue ||
	       j->restarts;
}

static void take_record(struct mmd_mailbox *b, int master,
			const mm_state_t *st, uint32_t node,
			const st_rec_t *rec)
{
	mm_job_t j;

	if (mm_job_get(st, rec->job, &j))
		return;
	if (rec->type == ST_REC_STDOUT || rec->type == ST_REC_STDERR) {
		struct pass o = { b, rec->job, rec->rank,
				  rec->type == ST_REC_STDERR };

		/* a batch job's output is written by its nodes, as its
		 * user (docs/security.md): none comes here */
		if (!j.batch)
			mmd_rerun_output(b->rerun, rec->job, rec->rank,
					 o.stream, rec->data, rec->len,
					 may_rerun(&j), pass_on, &o);
	} else if (rec->type == ST_REC_RERUN) {
		struct pass o = { b, rec->job, rec->rank, 0 };
		st_rerun_t x;

		if (!j.batch && !st_rerun_decode(rec->data, rec->len, &x))
			mmd_rerun_restart(b->rerun, rec->job, rec->rank,
					  x.epoch, x.off, pass_mark, &o);
	} else if (rec->type == ST_REC_EXIT) {
		struct mmd_job *r;
		st_exit_t e;

		/* a straggler of a job that has ended: nothing to keep */
		if (j.state != MM_JOB_STAGING && j.state != MM_JOB_RUNNING)
			return;
		if (rec->rank >= j.ranks ||
		    st_exit_decode(rec->data, rec->len, &e) ||
		    !(r = mmd_jobs_get(b->jobs, rec->job)) ||
		    !mmd_job_status(r, j.ranks))
			return;
		if (r->status[rec->rank] == -1 && ++r->got == j.ranks)
			b->ends_ready = 1;
		r->status[rec->rank] = e.status;
		r->usage[rec->rank] = (mm_usage_t){
			e.utime_us, e.stime_us, e.maxrss_kib };
	} else if (rec->type == ST_REC_CKPT) {
		take_ckpt(b, master, st, &j, rec);
	} else if (rec->type == ST_REC_PMI) {
		/* the node is the box's, whatever the record says */
		if (b->pmi)
			mmd_pmi_record(b->pmi, master, st, node, rec->job,
				       rec->data, rec->len);
	} else if (rec->type == ST_REC_FAIL) {
		char why[MM_REASON_MAX];
		mm_op_t op = { .code = MM_OP_JOB_FAILED, .job = rec->job,
			       .reason = why };

		snprintf(why, sizeof(why), "%.*s", (int)rec->len, rec->data);
		if (master)
			b->hooks.propose(b->hooks.ctx, &op);
	}
}

void mmd_mailbox_take(struct mmd_mailbox *b, sp_world_t *w,
		      const uint8_t *gmem, rp_replica_t *rp,
		      const mm_state_t *st)
{
	for (uint32_t n = b->nmanagers; n < b->nworld; n++) {
		const uint8_t *box = gmem + b->lay->outbox +
				     (uint64_t)b->lay->outbox_len * n;
		uint64_t seq;
		uint32_t len;

		/* a new box is one with another number: a restarted node
		 * numbers its boxes from a new base */
		if (st_box_get_hdr(box, b->lay->outbox_len, &seq, &len) ||
		    seq == 0 || seq == b->box_cast[n] ||
		    ST_BOX_HDR + (size_t)len > b->lay->outbox_len)
			continue;
		if (seq == b->box_seq[n]) { /* agreed before: ack again */
			mmd_mailbox_agreed(b, w, 1, st, n, box,
					   b->lay->outbox_len);
			b->box_cast[n] = seq;
			continue;
		}
		/* the cast: node u32 (little endian) | the box as written */
		uint8_t *msg = malloc(4 + ST_BOX_HDR + len);

		if (!msg)
			return;
		for (int i = 0; i < 4; i++)
			msg[i] = (uint8_t)(n >> (8 * i));
		memcpy(msg + 4, box, ST_BOX_HDR + len);
		int crc = rp_cast(rp, msg, 4 + ST_BOX_HDR + len);

		qb_log(LOG_DEBUG, "box %llu of node %u: %u bytes cast (%d)",
		       (unsigned long long)seq, n, len, crc);
		if (crc == 0)
			b->box_cast[n] = seq;
		free(msg);
	}
}

void mmd_mailbox_agreed(struct mmd_mailbox *b, sp_world_t *w, int master,
			const mm_state_t *st, uint32_t node,
			const uint8_t *box, size_t boxlen)
{
	uint64_t seq;
	uint32_t len;

	if (node >= b->nworld || st_box_get_hdr(box, boxlen, &seq, &len) ||
	    ST_BOX_HDR + (size_t)len > boxlen)
		return;
	qb_log(LOG_DEBUG, "box %llu of node %u agreed (%s)",
	       (unsigned long long)seq, node,
	       seq != b->box_seq[node] ? "new" : "seen");
	if (seq != b->box_seq[node]) {
		size_t off = ST_BOX_HDR;
		st_rec_t rec;

		while (st_box_next(box, ST_BOX_HDR + len, &off, &rec) == 1)
			take_record(b, master, st, node, &rec);
		b->box_seq[node] = seq;
	}
	if (!master || !w)
		return;
	/* every replica has it: the node may forget it */
	b->ack[node] = (int64_t)seq;
	sp_nodeset_clear(b->one);
	sp_nodeset_add(b->one, node);
	sp_xfer_and_signal(w, b->one, &b->ack[node], 8, b->lay->outack,
			   SP_EV_NONE, ST_EV_OUTACK, NULL, 0);
}

void mmd_mailbox_master_reset(struct mmd_mailbox *b)
{
	memset(b->box_cast, 0, b->nworld * sizeof(*b->box_cast));
}

size_t mmd_mailbox_size(const struct mmd_mailbox *b)
{
	return 4 + 8u * b->nworld;
}

void mmd_mailbox_encode(const struct mmd_mailbox *b, uint8_t *out)
{
	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t)(b->nworld >> (8 * i));
	for (uint32_t x = 0; x < b->nworld; x++)
		wr64(out + 4 + 8u * x, b->box_seq[x]);
}

int mmd_mailbox_decode(struct mmd_mailbox *b, const uint8_t *p, size_t len,
		       char *err, size_t errlen)
{
	uint32_t nworld;

	if (len != mmd_mailbox_size(b)) {
		snprintf(err, errlen, "snapshot's mailbox part of %zu bytes, "
			 "want %zu", len, mmd_mailbox_size(b));
		return -STORM_EPROTO;
	}
	nworld = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		 (uint32_t)p[3] << 24;
	if (nworld != b->nworld) {
		snprintf(err, errlen, "snapshot of a machine of %u hosts, the "
			 "configuration has %u: every head node must read "
			 "the same file", nworld, b->nworld);
		return -STORM_EPROTO;
	}
	for (uint32_t x = 0; x < b->nworld; x++)
		b->box_seq[x] = rd64(p + 4 + 8u * x);
	return 0;
}
