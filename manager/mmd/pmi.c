/*
 * pmi.c — the job-wide PMI exchange (pmi.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qb/qblog.h>

#include "jobrec.h"
#include "pmi.h"

/* A chunk not taken by every node within this many slices goes again
 * (its transfer was aborted by a view change). */
#define PMI_RESEND_SLICES 50

struct mmd_pmi_job {
	struct mmd_pmi_job *next;
	uint32_t job, inc;
	uint32_t done;        /* barriers whose merged store is complete */
	uint8_t *store;       /* the merged store of barrier done */
	size_t store_len;
	uint8_t *next_buf;    /* entries for barrier done + 1, so far */
	size_t next_len, next_cap;
	uint32_t *from;       /* nodes whose last record for it came */
	uint32_t got, cap;
	int failed;           /* too large: its job fails */
	/* the strobe master's */
	uint32_t sent;        /* barrier whose store went to every node */
	size_t off;           /* bytes of the store sent so far */
};

int mmd_pmi_init(struct mmd_pmi *x, const st_layout_t *lay, uint32_t nworld,
		 void (*propose)(void *ctx, const mm_op_t *op), void *ctx)
{
	*x = (struct mmd_pmi){ .lay = lay, .propose = propose, .ctx = ctx };
	x->chunk = malloc(lay->pmi_len);
	if (!x->chunk || sp_nodeset_create(nworld, &x->sent_to))
		return -ENOMEM;
	return 0;
}

static void job_free(struct mmd_pmi_job *p)
{
	free(p->store);
	free(p->next_buf);
	free(p->from);
	free(p);
}

void mmd_pmi_fini(struct mmd_pmi *x)
{
	while (x->jobs) {
		struct mmd_pmi_job *p = x->jobs;

		x->jobs = p->next;
		job_free(p);
	}
	free(x->chunk);
	x->chunk = NULL;
	sp_nodeset_destroy(x->sent_to);
	x->sent_to = NULL;
}

static struct mmd_pmi_job **find(struct mmd_pmi *x, uint32_t job)
{
	struct mmd_pmi_job **pp = &x->jobs;

	while (*pp && (*pp)->job != job)
		pp = &(*pp)->next;
	return pp;
}

void mmd_pmi_clear(struct mmd_pmi *x)
{
	while (x->jobs) {
		struct mmd_pmi_job *p = x->jobs;

		x->jobs = p->next;
		job_free(p);
	}
}

void mmd_pmi_forget(struct mmd_pmi *x, uint32_t job)
{
	struct mmd_pmi_job **pp = find(x, job), *p = *pp;

	if (p) {
		*pp = p->next;
		job_free(p);
	}
}

static void fail_job(struct mmd_pmi *x, int master, struct mmd_pmi_job *p,
		     const char *why)
{
	mm_op_t op = { .code = MM_OP_JOB_FAILED, .job = p->job,
		       .reason = why };

	p->failed = 1;
	qb_log(LOG_WARNING, "job %u: %s", p->job, why);
	if (master && x->propose)
		x->propose(x->ctx, &op);
}

void mmd_pmi_record(struct mmd_pmi *x, int master, const mm_state_t *st,
		    uint32_t node, uint32_t job, const uint8_t *data,
		    size_t len)
{
	struct mmd_pmi_job **pp = find(x, job), *p = *pp;
	uint32_t inc, fence, last;
	mm_job_t j;

	if (len < ST_PMI_REC_HDR || mm_job_get(st, job, &j) ||
	    j.state != MM_JOB_RUNNING || !sp_nodeset_has(j.nodes, node))
		return;
	inc = st_get32(data);
	fence = st_get32(data + 4);
	last = st_get32(data + 8);
	data += ST_PMI_REC_HDR;
	len -= ST_PMI_REC_HDR;
	if (inc != j.restarts)
		return; /* a killed incarnation's, late */
	if (p && p->inc != inc) { /* restarted: begin again */
		*pp = p->next;
		job_free(p);
		p = NULL;
	}
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return;
		p->job = job;
		p->inc = inc;
		p->next = x->jobs;
		x->jobs = p;
	}
	if (p->failed || fence != p->done + 1)
		return; /* a box sent again repeats its records */
	for (uint32_t k = 0; k < p->got; k++)
		if (p->from[k] == node)
			return;
	if (p->next_len + len > MMD_PMI_STORE_MAX) {
		char why[MM_REASON_MAX];

		snprintf(why, sizeof(why), "PMI: the key-value space of "
			 "barrier %u exceeds %u MiB", fence,
			 MMD_PMI_STORE_MAX >> 20);
		fail_job(x, master, p, why);
		return;
	}
	if (p->next_len + len > p->next_cap) {
		size_t cap = p->next_cap ? p->next_cap : 4096;
		uint8_t *b;

		while (cap < p->next_len + len)
			cap *= 2;
		if (!(b = realloc(p->next_buf, cap)))
			return; /* fail-stop is the replica's (repl.c) */
		p->next_buf = b;
		p->next_cap = cap;
	}
	if (len)
		memcpy(p->next_buf + p->next_len, data, len);
	p->next_len += len;
	if (!last)
		return;
	if (p->got == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 8;
		uint32_t *f = realloc(p->from, cap * sizeof(*f));

		if (!f)
			return;
		p->from = f;
		p->cap = cap;
	}
	p->from[p->got++] = node;
	if (p->got < sp_nodeset_count(j.nodes))
		return;
	/* every node's entries: barrier fence's store */
	free(p->store);
	p->store = p->next_buf;
	p->store_len = p->next_len;
	p->next_buf = NULL;
	p->next_len = p->next_cap = 0;
	p->got = 0;
	p->done = fence;
	p->off = 0;
	x->stores++;
	qb_log(LOG_DEBUG, "job %u: PMI barrier %u: %zu bytes from %u nodes",
	       job, fence, p->store_len, sp_nodeset_count(j.nodes));
}

void mmd_pmi_master_reset(struct mmd_pmi *x, uint64_t seq_base)
{
	x->seq = seq_base;
	x->inflight = 0;
	sp_nodeset_clear(x->sent_to);
	for (struct mmd_pmi_job *p = x->jobs; p; p = p->next) {
		p->sent = p->done ? p->done - 1 : 0;
		p->off = 0;
	}
}

int mmd_pmi_busy(const struct mmd_pmi *x)
{
	if (x->inflight)
		return 1;
	for (const struct mmd_pmi_job *p = x->jobs; p; p = p->next)
		if (p->sent < p->done && !p->failed)
			return 1;
	return 0;
}

/* The last chunk is out of every inbox it went to: 1; 0 not yet. */
static int inboxes_free(struct mmd_pmi *x, sp_world_t *w,
			struct mmd_caw *caw, const sp_nodeset_t *live,
			uint64_t slice)
{
	int64_t n;
	int rc;

	if (!x->inflight)
		return 1;
	/* nodes gone from the view no longer count */
	for (n = sp_nodeset_next(x->sent_to, 0); n >= 0;
	     n = sp_nodeset_next(x->sent_to, (uint32_t)n + 1))
		if (!sp_nodeset_has(live, (uint32_t)n))
			sp_nodeset_del(x->sent_to, (uint32_t)n);
	if (!sp_nodeset_count(x->sent_to)) {
		x->inflight = 0;
		return 1;
	}
	rc = mmd_caw(caw, w, slice, x->sent_to, x->lay->gv_pmi_seq,
		     SP_CMP_EQ, (int64_t)x->seq, SP_NO_WRITE, 0, 1000);
	if (rc == 1) {
		x->inflight = 0;
		return 1;
	}
	if (slice - x->sent_slice >= PMI_RESEND_SLICES) {
		const uint8_t *c = x->chunk;
		size_t len = ST_PMI_HDR + st_get32(c + 32);

		x->sent_slice = slice;
		sp_xfer_and_signal(w, x->sent_to, c, len, x->lay->pmi,
				   SP_EV_NONE, ST_EV_PMI, NULL, 0);
	}
	return 0;
}

void mmd_pmi_step(struct mmd_pmi *x, sp_world_t *w, struct mmd_caw *caw,
		  const mm_state_t *st, const sp_nodeset_t *live,
		  uint64_t slice)
{
	if (!w || !inboxes_free(x, w, caw, live, slice))
		return;
	for (struct mmd_pmi_job *p = x->jobs; p; p = p->next) {
		size_t room = x->lay->pmi_len - ST_PMI_HDR, len;
		st_pmi_chunk_t c;
		char err[256] = "";
		mm_job_t j;
		int64_t n;

		if (p->sent >= p->done || p->failed ||
		    mm_job_get(st, p->job, &j) || j.state != MM_JOB_RUNNING ||
		    j.restarts != p->inc)
			continue;
		/* every node sent its entries and waits (or, after a new
		 * master, took the store already) */
		if (!p->off &&
		    mmd_caw(caw, w, slice, j.nodes,
			    st_pmi_var(x->lay, mm_job_done_slot(st, &j)),
			    SP_CMP_GE, st_pmi_slot(j.id, 2 * p->done - 1),
			    SP_NO_WRITE, 0, 1000) != 1)
			continue;
		len = p->store_len - p->off < room ? p->store_len - p->off
						   : room;
		c = (st_pmi_chunk_t){ .job = j.id, .inc = p->inc,
				      .fence = p->done, .seq = ++x->seq,
				      .off = (uint32_t)p->off,
				      .total = (uint32_t)p->store_len,
				      .len = (uint32_t)len };
		st_pmi_chunk_put(x->chunk, &c);
		if (len)
			memcpy(x->chunk + ST_PMI_HDR, p->store + p->off, len);
		sp_nodeset_clear(x->sent_to);
		for (n = sp_nodeset_next(j.nodes, 0); n >= 0;
		     n = sp_nodeset_next(j.nodes, (uint32_t)n + 1))
			if (sp_nodeset_has(live, (uint32_t)n))
				sp_nodeset_add(x->sent_to, (uint32_t)n);
		if (!sp_nodeset_count(x->sent_to) ||
		    sp_xfer_and_signal(w, x->sent_to, x->chunk,
				       ST_PMI_HDR + len, x->lay->pmi,
				       SP_EV_NONE, ST_EV_PMI, err,
				       sizeof(err))) {
			qb_log(LOG_DEBUG, "job %u: PMI store: %s", j.id, err);
			return; /* again at the next step */
		}
		x->inflight = 1;
		x->sent_slice = slice;
		p->off += len;
		if (p->off >= p->store_len) {
			p->sent = p->done;
			p->off = 0;
		}
		return; /* one chunk in the inboxes at a time */
	}
}

/* ---- the snapshot's part ------------------------------------------------- */

static void put32(uint8_t **p, uint32_t v)
{
	st_put32(*p, v);
	*p += 4;
}

size_t mmd_pmi_snap_size(const struct mmd_pmi *x)
{
	size_t n = 4;

	for (const struct mmd_pmi_job *p = x->jobs; p; p = p->next)
		n += 28 + p->store_len + p->next_len + 4u * p->got;
	return n;
}

void mmd_pmi_snap_encode(const struct mmd_pmi *x, uint8_t *out)
{
	uint32_t count = 0;

	for (const struct mmd_pmi_job *p = x->jobs; p; p = p->next)
		count++;
	put32(&out, count);
	for (const struct mmd_pmi_job *p = x->jobs; p; p = p->next) {
		put32(&out, p->job);
		put32(&out, p->inc);
		put32(&out, p->done);
		put32(&out, (uint32_t)p->failed);
		put32(&out, (uint32_t)p->store_len);
		if (p->store_len)
			memcpy(out, p->store, p->store_len);
		out += p->store_len;
		put32(&out, (uint32_t)p->next_len);
		if (p->next_len)
			memcpy(out, p->next_buf, p->next_len);
		out += p->next_len;
		put32(&out, p->got);
		for (uint32_t k = 0; k < p->got; k++)
			put32(&out, p->from[k]);
	}
}

/* A length-prefixed part of at most max bytes, copied; -1 if it does
 * not fit what is left. */
static int take_bytes(const uint8_t **p, const uint8_t *end, size_t max,
		      uint8_t **out, size_t *len)
{
	uint32_t n;

	if (end - *p < 4)
		return -1;
	n = st_get32(*p);
	*p += 4;
	if (n > max || (size_t)(end - *p) < n)
		return -1;
	*out = NULL;
	if (n && !(*out = malloc(n)))
		return -1;
	if (n)
		memcpy(*out, *p, n);
	*p += n;
	*len = n;
	return 0;
}

int mmd_pmi_snap_decode(struct mmd_pmi *x, const uint8_t *buf, size_t len,
			char *err, size_t errlen)
{
	const uint8_t *p = buf, *end;
	struct mmd_pmi_job *jobs = NULL;
	uint32_t count;

	if (!buf || len < 4)
		goto bad;
	end = buf + len;
	count = st_get32(p);
	p += 4;
	for (uint32_t i = 0; i < count; i++) {
		struct mmd_pmi_job *j = calloc(1, sizeof(*j));

		if (!j)
			goto nomem;
		j->next = jobs;
		jobs = j;
		if (end - p < 16)
			goto bad;
		j->job = st_get32(p);
		j->inc = st_get32(p + 4);
		j->done = st_get32(p + 8);
		j->failed = st_get32(p + 12) != 0;
		p += 16;
		if (take_bytes(&p, end, MMD_PMI_STORE_MAX, &j->store,
			       &j->store_len) ||
		    take_bytes(&p, end, MMD_PMI_STORE_MAX, &j->next_buf,
			       &j->next_len) || end - p < 4)
			goto bad;
		j->next_cap = j->next_len;
		j->got = st_get32(p);
		p += 4;
		if (j->got > 65536 || (size_t)(end - p) / 4 < j->got)
			goto bad;
		j->cap = j->got;
		if (j->got && !(j->from = malloc(4u * j->got)))
			goto nomem;
		for (uint32_t k = 0; k < j->got; k++, p += 4)
			j->from[k] = st_get32(p);
	}
	if (p != end)
		goto bad;
	mmd_pmi_clear(x);
	x->jobs = jobs;
	return 0;
bad:
	snprintf(err, errlen, "snapshot's PMI part of %zu bytes is malformed",
		 len);
	while (jobs) {
		struct mmd_pmi_job *j = jobs;

		jobs = j->next;
		job_free(j);
	}
	return -STORM_EPROTO;
nomem:
	snprintf(err, errlen, "out of memory for the snapshot's PMI part");
	while (jobs) {
		struct mmd_pmi_job *j = jobs;

		jobs = j->next;
		job_free(j);
	}
	return -ENOMEM;
}
