/*
 * bcs_xchg.c — the BCS engine's records from node to node (bcs_xchg.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <storm_proto.h>

#include "bcs_xchg.h"

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

static uint64_t new_inc(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	return v ? v : 1;
}

int bcs_xchg_init(struct bcs_xchg *x, sp_world_t *w, uint64_t base,
		  uint32_t len, uint32_t self, uint32_t nworld)
{
	memset(x, 0, sizeof(*x));
	x->w = w;
	x->base = base;
	x->len = len;
	x->self = self;
	x->nworld = nworld;
	x->inc = new_inc();
	x->ch = calloc(nworld ? nworld : 1, sizeof(*x->ch));
	x->copy = malloc(len ? len : 1);
	if (!x->ch || !x->copy || sp_nodeset_create(nworld ? nworld : 1,
						    &x->one)) {
		bcs_xchg_fini(x);
		return -ENOMEM;
	}
	return 0;
}

void bcs_xchg_fini(struct bcs_xchg *x)
{
	for (uint32_t n = 0; x->ch && n < x->nworld; n++)
		free(x->ch[n].out);
	free(x->ch);
	free(x->copy);
	sp_nodeset_destroy(x->one);
	memset(x, 0, sizeof(*x));
}

static uint64_t buf_at(const struct bcs_xchg *x, uint32_t from, uint64_t seq)
{
	return x->base + ((uint64_t)from * 2 + seq % 2) * x->len;
}

int bcs_xchg_ready(const struct bcs_xchg *x, uint32_t peer)
{
	const struct bcs_chan *c;

	if (!x->w || peer >= x->nworld || peer == x->self || x->inflight)
		return 0;
	c = &x->ch[peer];
	if (c->out_len)
		return 1; /* being built this boundary */
	/* the buffer the next record fills holds no unacknowledged one */
	return c->need[(c->sent + 1) % 2] <= c->acked;
}

size_t bcs_xchg_room(const struct bcs_xchg *x, uint32_t peer)
{
	const struct bcs_chan *c;
	size_t used;

	if (!bcs_xchg_ready(x, peer))
		return 0;
	c = &x->ch[peer];
	used = c->out_len ? c->out_len : sizeof(struct bcs_rec_hdr);
	used += sizeof(struct bcs_sect_hdr);
	return used < x->len ? x->len - used : 0;
}

int bcs_xchg_put(struct bcs_xchg *x, uint32_t peer, uint32_t job,
		 uint32_t inc, uint64_t round, const void *data, size_t len)
{
	struct bcs_chan *c;
	struct bcs_sect_hdr h = { .job = job, .len = (uint32_t)len,
				  .round = round, .inc = inc };

	/* not ready: room is 0, which an empty section would pass */
	if (!bcs_xchg_ready(x, peer) || len > bcs_xchg_room(x, peer))
		return -ENOSPC;
	c = &x->ch[peer];
	if (!c->out && !(c->out = malloc(x->len)))
		return -ENOMEM;
	if (!c->out_len)
		c->out_len = sizeof(struct bcs_rec_hdr);
	if (ALIGN8(c->out_len + sizeof(h) + len) > x->len)
		return -ENOSPC;
	memcpy(c->out + c->out_len, &h, sizeof(h));
	memcpy(c->out + c->out_len + sizeof(h), data, len);
	memset(c->out + c->out_len + sizeof(h) + len, 0,
	       ALIGN8(len) - len);
	c->out_len += (uint32_t)(sizeof(h) + ALIGN8(len));
	c->nsect++;
	x->pending = 1;
	return 0;
}

static int send_one(struct bcs_xchg *x, uint32_t peer, int with_sections)
{
	struct bcs_chan *c = &x->ch[peer];
	uint8_t ackbuf[sizeof(struct bcs_rec_hdr)];
	uint8_t *rec = with_sections ? c->out : ackbuf;
	/* an acknowledgement alone is no record of the sequence: it names
	 * the last one, and goes where the next one will (free: its last
	 * record was taken), to be overwritten by it or by a newer
	 * acknowledgement, either carrying as much */
	uint64_t seq = with_sections ? c->sent + 1 : c->sent;
	struct bcs_rec_hdr h = { .magic = BCS_REC_MAGIC,
				 .len = with_sections ? c->out_len :
							(uint32_t)sizeof(h),
				 .inc = x->inc, .seq = seq,
				 .ack_inc = c->inc, .ack = c->taken,
				 .from = x->self,
				 .nsect = with_sections ? c->nsect : 0 };
	char err[256];
	int rc;

	memcpy(rec, &h, sizeof(h));
	sp_nodeset_clear(x->one);
	sp_nodeset_add(x->one, peer);
	rc = sp_xfer_and_signal(x->w, x->one, rec, h.len,
				buf_at(x, x->self, c->sent + 1),
				ST_EV_LOCAL_BCS, ST_EV_BCS, err, sizeof(err));
	if (rc) {
		/* the peer left the view: its jobs fail (the engine sees
		 * the view); nothing to send it any more */
		qb_log(LOG_DEBUG, "BCS record to node %u: %s", peer, err);
		x->lost++;
		return 0;
	}
	if (with_sections) {
		c->sent = seq;
		c->need[seq % 2] = seq;
	}
	c->told = c->taken;
	c->owe = 0;
	x->sent_records++;
	return 1;
}

uint32_t bcs_xchg_flush(struct bcs_xchg *x)
{
	uint32_t n = 0;

	if (!x->w || x->inflight)
		return 0;
	for (uint32_t p = 0; p < x->nworld; p++) {
		struct bcs_chan *c = &x->ch[p];

		if (p == x->self)
			continue;
		if (c->out_len)
			n += (uint32_t)send_one(x, p, 1);
		else if (c->owe && c->need[(c->sent + 1) % 2] <= c->acked)
			n += (uint32_t)send_one(x, p, 0);
		c->out_len = 0;
		c->nsect = 0;
	}
	x->pending = 0;
	x->inflight = n;
	return n;
}

int bcs_xchg_pending(const struct bcs_xchg *x)
{
	return x->pending;
}

void bcs_xchg_events(struct bcs_xchg *x)
{
	int rc;

	if (!x->w)
		return;
	while ((rc = sp_test_event(x->w, ST_EV_LOCAL_BCS, 0)) != -EAGAIN) {
		if (rc == -STORM_ECLOSED || rc == -STORM_EEXPELLED ||
		    rc == -EINVAL)
			break;
		if (x->inflight)
			x->inflight--;
		/* an aborted one: its destination left the view */
	}
}

int bcs_rec_check(const uint8_t *rec, size_t len, char *why, size_t whylen)
{
	struct bcs_rec_hdr h;
	size_t off = sizeof(h);

	if (len < sizeof(h)) {
		snprintf(why, whylen, "a record of %zu bytes", len);
		return -EINVAL;
	}
	memcpy(&h, rec, sizeof(h));
	if (h.magic != BCS_REC_MAGIC || h.len < sizeof(h) || h.len > len) {
		snprintf(why, whylen, "a record with magic %#x and length %u "
			 "in %zu bytes", h.magic, h.len, len);
		return -EINVAL;
	}
	for (uint32_t k = 0; k < h.nsect; k++) {
		struct bcs_sect_hdr s;

		if (h.len - off < sizeof(s)) {
			snprintf(why, whylen, "section %u of %u past the "
				 "record's end", k, h.nsect);
			return -EINVAL;
		}
		memcpy(&s, rec + off, sizeof(s));
		off += sizeof(s);
		if (s.len > h.len - off || ALIGN8(s.len) > h.len - off) {
			snprintf(why, whylen, "section %u (job %u) of %u "
				 "bytes past the record's end", k, s.job,
				 s.len);
			return -EINVAL;
		}
		off += ALIGN8(s.len);
	}
	return 0;
}

/* Whether a record, from its header, is new to c: the next record with
 * sections of the incarnation we know, or the first of a new one; or an
 * acknowledgement alone naming the last we took, or none for a new
 * incarnation (seen any number of times: it stays in its buffer until
 * overwritten, and taking it again changes nothing). */
static int is_new(const struct bcs_chan *c, const struct bcs_rec_hdr *h,
		  uint32_t from)
{
	if (h->magic != BCS_REC_MAGIC || h->from != from ||
	    h->inc == c->old_inc)
		return 0;
	if (!h->nsect)
		return h->inc == c->inc ? h->seq == c->taken : h->seq == 0;
	return h->inc == c->inc ? h->seq == c->taken + 1 : h->seq == 1;
}

/* Take the record in buf, if it is new (is_new).  1 if it was the next
 * record with sections, else 0. */
static int take(struct bcs_xchg *x, uint32_t from, int buf,
		bcs_xchg_section_fn fn, void *ctx)
{
	struct bcs_chan *c = &x->ch[from];
	uint64_t at = x->base + ((uint64_t)from * 2 + (uint64_t)buf) * x->len;
	struct bcs_rec_hdr h;
	char why[160];
	size_t off, n;
	int changed = 0;

	if (sp_gmem_read(x->w, at, &h, sizeof(h)) || !is_new(c, &h, from))
		return 0;
	n = h.len;
	if (n < sizeof(h) || n > x->len || sp_gmem_read(x->w, at, x->copy, n))
		return 0;
	/* read again whole: the first header may be of an older image
	 * than the copy, whose own length need not be n — the n bytes
	 * read are what is checked */
	memcpy(&h, x->copy, sizeof(h));
	if (!is_new(c, &h, from))
		return 0;
	if (bcs_rec_check(x->copy, n, why, sizeof(why))) {
		qb_log(LOG_ERR, "BCS record from node %u dropped: %s", from,
		       why);
		x->lost++;
		return 0;
	}
	if (h.inc != c->inc) {
		c->old_inc = c->inc;
		c->inc = h.inc;
		c->taken = 0;
		c->told = 0;
		changed = 1;
	}
	if (h.ack_inc == x->inc && h.ack > c->acked && h.ack <= c->sent) {
		c->acked = h.ack;
		changed = 1;
	}
	if (!h.nsect) {
		/* an acknowledgement alone: needs none */
		x->taken_records += (uint64_t)changed;
		return 0;
	}
	c->taken = h.seq;
	c->owe = 1;
	x->taken_records++;
	off = sizeof(h);
	for (uint32_t k = 0; k < h.nsect; k++) {
		struct bcs_sect_hdr s;

		memcpy(&s, x->copy + off, sizeof(s));
		off += sizeof(s);
		fn(ctx, from, s.job, s.inc, s.round, x->copy + off, s.len);
		off += ALIGN8(s.len);
	}
	return 1;
}

void bcs_xchg_receive(struct bcs_xchg *x, bcs_xchg_section_fn fn, void *ctx)
{
	if (!x->w)
		return;
	while (sp_test_event(x->w, ST_EV_BCS, 0) == 0)
		;
	for (uint32_t n = 0; n < x->nworld; n++) {
		if (n == x->self)
			continue;
		/* two at most are new: the lesser first (an acknowledgement
		 * alone is seen on the way: it is where the next record
		 * goes, or where the last came from) */
		for (int k = 0; k < 2; k++)
			if (!take(x, n, (int)((x->ch[n].taken + 1) % 2), fn,
				  ctx) &&
			    !take(x, n, (int)(x->ch[n].taken % 2), fn, ctx))
				break;
	}
}

void bcs_xchg_reset(struct bcs_xchg *x, uint32_t peer)
{
	struct bcs_chan *c;

	if (peer >= x->nworld)
		return;
	c = &x->ch[peer];
	c->sent = c->acked = c->told = 0;
	c->need[0] = c->need[1] = 0;
	c->owe = 0;
	c->out_len = 0;
	c->nsect = 0;
	c->old_inc = c->inc ? c->inc : c->old_inc;
	c->inc = 0;
	c->taken = 0;
}
