/*
 * relay.c — output records from node to node (relay.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <qb/qblog.h>

#include "relay.h"

#define PEND_MAX (8u << 20) /* lines waiting for their file's node */
#define ENTRY_HDR 4         /* the destination before each record */
/* A box ends with its number again: a box still landing (another node's,
 * read on this node's event) shows the number of the one before there */
#define TRAILER 8

int nm_relay_init(struct nm_relay *r, sp_world_t *w, const st_layout_t *lay,
		  uint32_t first_node, uint64_t seq_base)
{
	memset(r, 0, sizeof(*r));
	r->w = w;
	r->lay = lay;
	r->self = sp_node_id(w);
	r->first_node = first_node;
	r->nworld = sp_node_count(w);
	r->seq = seq_base;
	r->box = calloc(1, lay->outbox_len);
	r->copy = malloc(lay->outbox_len);
	r->taken = calloc(r->nworld, sizeof(*r->taken));
	r->ack = calloc(r->nworld, sizeof(*r->ack));
	if (!r->box || !r->copy || !r->taken || !r->ack ||
	    sp_nodeset_create(r->nworld, &r->one)) {
		nm_relay_fini(r);
		return -ENOMEM;
	}
	return 0;
}

void nm_relay_fini(struct nm_relay *r)
{
	free(r->pend);
	free(r->box);
	free(r->copy);
	free(r->taken);
	free(r->ack);
	sp_nodeset_destroy(r->one);
	memset(r, 0, sizeof(*r));
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int pend_room(struct nm_relay *r, size_t need)
{
	size_t cap = r->pend_cap ? r->pend_cap : 65536;
	uint8_t *p;

	if (need <= r->pend_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (!(p = realloc(r->pend, cap)))
		return -ENOMEM;
	r->pend = p;
	r->pend_cap = cap;
	return 0;
}

int nm_relay_put(struct nm_relay *r, uint32_t dest, uint8_t type,
		 uint32_t job, uint32_t rank, const void *data, uint32_t len)
{
	uint32_t max = r->lay->outbox_len - ST_BOX_HDR - ST_REC_HDR - TRAILER;
	size_t need;

	while (len > max) { /* one record must fit one box */
		nm_relay_put(r, dest, type, job, rank, data, max);
		data = (const uint8_t *)data + max;
		len -= max;
	}
	need = r->pend_len + ENTRY_HDR + ST_REC_HDR + len;
	if (need > PEND_MAX) {
		qb_log(LOG_WARNING, "job %u rank %u: output dropped, node %u "
		       "is not taking it", job, rank, dest);
		return -ENOBUFS;
	}
	if (pend_room(r, need))
		return -ENOMEM;
	wr32(r->pend + r->pend_len, dest);
	st_box_put_rec(r->pend + r->pend_len + ENTRY_HDR, type, job, rank,
		       data, len);
	r->pend_len = need;
	return 0;
}

/* The entry at off: its destination, its record; the next offset. */
static size_t entry_at(const uint8_t *p, size_t len, size_t off,
		       uint32_t *dest, st_rec_t *rec)
{
	size_t at = 0;

	*dest = rd32(p + off);
	st_box_next(p + off + ENTRY_HDR, len - off - ENTRY_HDR, &at, rec);
	return off + ENTRY_HDR + at;
}

static void unsend(struct nm_relay *r);

void nm_relay_flush(struct nm_relay *r)
{
	size_t room = r->lay->outbox_len - ST_BOX_HDR - TRAILER, used = 0,
	       keep = 0;
	uint32_t dest, d;
	st_rec_t rec;
	int rc;

	if (r->inflight || r->pend_len == 0)
		return;
	/* the records for the first entry's node, in order, that fit one
	 * box; the others stay, in order */
	dest = rd32(r->pend);
	for (size_t off = 0, next; off < r->pend_len; off = next) {
		next = entry_at(r->pend, r->pend_len, off, &d, &rec);
		if (d == dest && used + (next - off - ENTRY_HDR) <= room) {
			memcpy(r->box + ST_BOX_HDR + used,
			       r->pend + off + ENTRY_HDR,
			       next - off - ENTRY_HDR);
			used += next - off - ENTRY_HDR;
		} else {
			memmove(r->pend + keep, r->pend + off, next - off);
			keep += next - off;
		}
	}
	r->pend_len = keep;
	st_box_put_hdr(r->box, ++r->seq, (uint32_t)used);
	wr64(r->box + ST_BOX_HDR + used, r->seq);
	r->dest = dest;
	sp_nodeset_clear(r->one);
	sp_nodeset_add(r->one, dest);
	rc = sp_xfer_and_signal(r->w, r->one, r->box,
				ST_BOX_HDR + used + TRAILER,
				r->lay->outbox + (uint64_t)r->lay->outbox_len *
							 r->self,
				ST_EV_LOCAL_RELAY, ST_EV_RELAY, NULL, 0);
	qb_log(LOG_DEBUG, "relay box %llu: %zu bytes to node %u (%d)",
	       (unsigned long long)r->seq, used, dest, rc);
	r->inflight = 1;
	r->sent = 0;
	if (rc) /* not in our view now: offered again at the next flush */
		unsend(r);
}

/* The box in flight back into pend, first: sent again. */
static void unsend(struct nm_relay *r)
{
	uint64_t seq;
	uint32_t len;
	size_t n = 0, at = ST_BOX_HDR;
	st_rec_t rec;
	uint8_t *keep;

	st_box_get_hdr(r->box, r->lay->outbox_len, &seq, &len);
	while (st_box_next(r->box, ST_BOX_HDR + len, &at, &rec) == 1)
		n++;
	keep = malloc(r->pend_len + len + ENTRY_HDR * n + 1);
	if (keep) {
		size_t k = 0, prev = ST_BOX_HDR;

		at = ST_BOX_HDR;
		while (st_box_next(r->box, ST_BOX_HDR + len, &at, &rec) == 1) {
			wr32(keep + k, r->dest);
			memcpy(keep + k + ENTRY_HDR, r->box + prev, at - prev);
			k += ENTRY_HDR + (at - prev);
			prev = at;
		}
		memcpy(keep + k, r->pend, r->pend_len);
		free(r->pend);
		r->pend = keep;
		r->pend_len += k;
		r->pend_cap = r->pend_len + 1;
	} else {
		qb_log(LOG_WARNING, "out of memory: relayed output lost");
	}
	r->seq--;
	r->inflight = 0;
}

int nm_relay_events(struct nm_relay *r)
{
	int64_t acked = 0;
	int rc;

	while ((rc = sp_test_event(r->w, ST_EV_LOCAL_RELAY, 0)) != -EAGAIN) {
		if (rc == -STORM_ECLOSED || rc == -STORM_EEXPELLED)
			break;
		if (rc == 0 && r->inflight)
			r->sent = 1;
		else if (r->inflight)
			unsend(r);
	}
	if (r->inflight && !r->sent) {
		/* a transfer that never started (the destination is not in
		 * our view) has no event: it is sent again later */
		return 0;
	}
	while (sp_test_event(r->w, ST_EV_RELAYACK, 0) == 0)
		;
	if (!r->inflight)
		return 0;
	sp_gmem_read(r->w, r->lay->outbox + (uint64_t)r->lay->outbox_len *
						     r->self,
		     &acked, sizeof(acked));
	if ((uint64_t)acked != r->seq)
		return 0;
	r->inflight = 0;
	return 1;
}

int nm_relay_holds(const struct nm_relay *r, uint32_t job)
{
	st_rec_t rec;
	uint32_t d;

	for (size_t off = 0; off < r->pend_len;) {
		off = entry_at(r->pend, r->pend_len, off, &d, &rec);
		if (rec.job == job)
			return 1;
	}
	if (r->inflight) {
		uint64_t seq;
		uint32_t len;
		size_t at = ST_BOX_HDR;

		st_box_get_hdr(r->box, r->lay->outbox_len, &seq, &len);
		while (st_box_next(r->box, ST_BOX_HDR + len, &at, &rec) == 1)
			if (rec.job == job)
				return 1;
	}
	return 0;
}

void nm_relay_receive(struct nm_relay *r, nm_relay_ready_fn ready,
		      nm_relay_take_fn take, void *ctx)
{
	while (sp_test_event(r->w, ST_EV_RELAY, 0) == 0)
		;
	r->held = 0;
	for (uint32_t n = r->first_node; n < r->nworld; n++) {
		uint64_t at = r->lay->outbox + (uint64_t)r->lay->outbox_len * n;
		uint8_t *box = r->copy;
		uint64_t seq;
		uint32_t len;
		size_t off;
		st_rec_t rec;
		int wait = 0;

		if (n == r->self ||
		    sp_gmem_read(r->w, at, box, ST_BOX_HDR) ||
		    st_box_get_hdr(box, r->lay->outbox_len, &seq, &len) ||
		    seq == 0 || seq == r->taken[n] ||
		    ST_BOX_HDR + (size_t)len + TRAILER > r->lay->outbox_len ||
		    sp_gmem_read(r->w, at, box, ST_BOX_HDR + len + TRAILER) ||
		    rd64(box + ST_BOX_HDR + len) != seq)
			continue;
		off = ST_BOX_HDR;
		while (!wait &&
		       st_box_next(box, ST_BOX_HDR + len, &off, &rec) == 1)
			wait = ready(ctx, &rec) == 0;
		if (wait) {
			r->held = 1;
			continue; /* offered again with the next event */
		}
		off = ST_BOX_HDR;
		while (st_box_next(box, ST_BOX_HDR + len, &off, &rec) == 1)
			if (ready(ctx, &rec) > 0)
				take(ctx, &rec);
		r->taken[n] = seq;
		r->ack[n] = (int64_t)seq;
		sp_nodeset_clear(r->one);
		sp_nodeset_add(r->one, n);
		sp_xfer_and_signal(r->w, r->one, &r->ack[n], 8, at,
				   SP_EV_NONE, ST_EV_RELAYACK, NULL, 0);
	}
}
