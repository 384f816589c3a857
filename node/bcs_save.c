/*
 * bcs_save.c — a BCS-MPI job's engine state as bytes and back
 * (nm_bcs_save, nm_bcs_restore: bcs.h), for coordinated checkpoints.
 * The checkpoint work stops the job, saves its ranks' memories and
 * segment and this image; a restore opens the job alike (possibly in a
 * fresh storm-nm), puts the memories and segment back, restores the
 * image, gives the ranks' pids (nm_bcs_started) and resumes it.
 *
 * Key invariants.  The image holds everything of struct bcs_job that
 * nm_bcs_open's arguments do not give, so a job restored from it runs
 * on exactly as the job saved would have (tests/unit/test_bcs_save.c).
 * An image is untrusted bytes (a file a user could have altered): its
 * checksum is checked before anything else, every length is bounded
 * before it is used, every count is capped, every rank, index and
 * pointer the engine will follow is checked against the job, and the
 * image is decoded into a structure of its own, swapped in only once
 * all of it decoded — a refused image changes nothing.  A decoded image
 * encodes back to the same bytes (the fuzz target checks it).
 *
 * Not saved: the ranks' pids (nm_bcs_started gives them again), the
 * segment's descriptor and mapping (nm_bcs_open makes them; the
 * checkpoint work restores the segment's bytes), the match log's file
 * and its pending lines, and a replayed record (nm_bcs_replay: the
 * restored job keeps whatever record it was given).  m.bound is not
 * saved either: the matcher computes it again before each use.
 *
 * Format, version 1 (little-endian integers; "list" is a u32 count then
 * its entries; the encoding is canonical, one image per state):
 *
 *   u32 magic "BCSE"   u32 version   u64 bytes of the whole image
 *   u32 job   u32 node (this node's world id)
 *   u32 size  u32 nlocal  u32 order
 *   u32 node_of[size]  i32 world_of[nlocal]
 *   u32 failed  [failed: u32 n, n bytes of why]  u32 built
 *   u64 round  u64 held  u64 nheld
 *   u64 forced u64 matched u32 polling
 *   rk[size]: u64 clock, u32 blocked, u32 gone, u32 other_pending,
 *             u64 sent
 *   per destination rank: list of sends (MSG)
 *   per receiving rank: list of receives (RECV)
 *   list of communicators: u64 ctx, u32 n, i32 world[n], u64 off,
 *        u64 ndone, u64 start, u32 where, u8 freed[n], per member a
 *        list of DESC
 *   u32 spread: 0, or 1 + its index in the communicators' list
 *   sect[2 * nnodes]: u32 have [have: u64 len, len bytes]
 *   per area: u32 gone, u64 tail, u64 seq, u64 rseq, u32 pending,
 *             u64 woken, u32 incoming, u32 polls, list of DONE (late)
 *   xfers, out, in, pulls: each a list of u64 match, u32 peer,
 *             u64 len, u64 done, RECV, MSG
 *   32 bytes: BLAKE2b-256 (libsodium's crypto_generichash, no key) of
 *             every byte before it
 *
 *   MSG:  i32 src dst tag, u32 flags, u64 ctx bytes clock seq req addr,
 *         u8 eager [1: bytes bytes]
 *   RECV: i32 dst src tag, u32 probe, u64 ctx cap req addr, u32 waited,
 *         u64 seq
 *   DESC: struct bcs_desc field by field; DONE: struct bcs_done alike
 *
 * The checksum catches a damaged file, not a forged one: anyone can
 * compute it.  What keeps a forged image from hurting the engine is the
 * decoder's checks, the same the engine applies to what ranks post.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <storm_bcs.h>

#include "bcs_int.h"
#include "bcs_ring.h"

#define SAVE_MAGIC 0x45534342u /* "BCSE" */
#define SAVE_VERSION 1u
#define SAVE_HEAD 24u          /* magic, version, bytes, job, node */
#define SAVE_SUM 32u           /* crypto_generichash_BYTES */
/* Caps on what an image may hold.  The matcher's descriptors and eager
 * bytes: what the engines of the job's nodes keep, each up to
 * NM_BCS_HELD_DESCS / NM_BCS_HELD_BYTES.  The rest has no bound of its
 * own in the engine; NM_BCS_HELD_DESCS each is far past any real job. */
#define SAVE_LIST_MAX NM_BCS_HELD_DESCS

/* ---- writing ------------------------------------------------------------ */

struct wr {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void put(struct wr *w, const void *src, size_t n)
{
	if (w->err || !n)
		return;
	if (w->cap - w->len < n) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *p;

		while (cap - w->len < n)
			cap *= 2;
		if (!(p = realloc(w->p, cap))) {
			w->err = -ENOMEM;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void put_u8(struct wr *w, uint8_t v)
{
	put(w, &v, 1);
}

static void put_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	put(w, b, 4);
}

static void put_i32(struct wr *w, int32_t v)
{
	put_u32(w, (uint32_t)v);
}

static void put_u64(struct wr *w, uint64_t v)
{
	put_u32(w, (uint32_t)v);
	put_u32(w, (uint32_t)(v >> 32));
}

static void put_msg(struct wr *w, const struct bcs_msg *s)
{
	put_i32(w, s->src);
	put_i32(w, s->dst);
	put_i32(w, s->tag);
	put_u32(w, s->flags);
	put_u64(w, s->ctx);
	put_u64(w, s->bytes);
	put_u64(w, s->clock);
	put_u64(w, s->seq);
	put_u64(w, s->req);
	put_u64(w, s->addr);
	put_u8(w, s->eager != NULL);
	if (s->eager)
		put(w, s->eager, (size_t)s->bytes);
}

static void put_recv(struct wr *w, const struct bcs_recv *r)
{
	put_i32(w, r->dst);
	put_i32(w, r->src);
	put_i32(w, r->tag);
	put_u32(w, (uint32_t)r->probe);
	put_u64(w, r->ctx);
	put_u64(w, r->cap);
	put_u64(w, r->req);
	put_u64(w, r->addr);
	put_u32(w, r->waited);
	put_u64(w, r->seq);
}

static void put_desc(struct wr *w, const struct bcs_desc *d)
{
	put_u32(w, d->kind);
	put_u32(w, d->flags);
	put_u64(w, d->req);
	put_u64(w, d->ctx);
	put_i32(w, d->peer);
	put_i32(w, d->tag);
	put_u64(w, d->addr);
	put_u64(w, d->bytes);
	put_u64(w, d->addr2);
	put_u32(w, d->coll);
	put_u32(w, d->op);
	put_u32(w, d->type);
	put_u32(w, d->pad);
	put_u64(w, d->clock);
}

static void put_done(struct wr *w, const struct bcs_done *d)
{
	put_u64(w, d->req);
	put_i32(w, d->status);
	put_i32(w, d->source);
	put_i32(w, d->tag);
	put_u32(w, d->pad);
	put_u64(w, d->bytes);
	put_u64(w, d->clock);
	put_u64(w, d->pull);
	put_u64(w, d->src_addr);
	put_u64(w, d->dst_addr);
	put_u64(w, d->len);
	put_i32(w, d->src_pid);
	put_u32(w, d->src_area);
	put_u32(w, d->notice);
	put_u32(w, d->pad2);
	put_u64(w, d->src_req);
}

static void put_xfers(struct wr *w, const struct bcs_xfer *x)
{
	uint32_t n = 0;

	for (const struct bcs_xfer *y = x; y; y = y->next)
		n++;
	put_u32(w, n);
	for (; x; x = x->next) {
		put_u64(w, x->match);
		put_u32(w, x->peer);
		put_u64(w, x->len);
		put_u64(w, x->done);
		put_recv(w, x->r);
		put_msg(w, x->s);
	}
}

static void put_comm(struct wr *w, const struct bcs_comm *c)
{
	put_u64(w, c->ctx);
	put_u32(w, c->n);
	for (uint32_t k = 0; k < c->n; k++)
		put_i32(w, c->world[k]);
	put_u64(w, c->off);
	put_u64(w, c->ndone);
	put_u64(w, c->start);
	put_u32(w, (uint32_t)c->where);
	for (uint32_t k = 0; k < c->n; k++)
		put_u8(w, c->freed[k]);
	for (uint32_t k = 0; k < c->n; k++) {
		uint32_t n = 0;

		for (const struct bcs_cpost *p = c->q[k]; p; p = p->next)
			n++;
		put_u32(w, n);
		for (const struct bcs_cpost *p = c->q[k]; p; p = p->next)
			put_desc(w, &p->d);
	}
}

int bcs_save_encode(const struct bcs_job *j, uint8_t **buf, size_t *len)
{
	struct wr w = { 0 };
	uint32_t n, spread = 0;
	size_t whylen;

	put_u32(&w, SAVE_MAGIC);
	put_u32(&w, SAVE_VERSION);
	put_u64(&w, 0); /* the image's bytes, once known */
	put_u32(&w, j->id);
	put_u32(&w, j->nodes[j->me]);
	put_u32(&w, j->size);
	put_u32(&w, j->nlocal);
	put_u32(&w, (uint32_t)j->m.order);
	for (uint32_t r = 0; r < j->size; r++)
		put_u32(&w, j->node_of[r]);
	for (uint32_t i = 0; i < j->nlocal; i++)
		put_i32(&w, j->world_of[i]);
	put_u32(&w, !!j->failed);
	if (j->failed) {
		whylen = strnlen(j->why, sizeof(j->why) - 1);
		put_u32(&w, (uint32_t)whylen);
		put(&w, j->why, whylen);
	}
	put_u32(&w, !!j->built);
	put_u64(&w, j->round);
	put_u64(&w, j->held);
	put_u64(&w, j->nheld);
	/* the matcher */
	put_u64(&w, j->m.forced);
	put_u64(&w, j->m.matched);
	put_u32(&w, !!j->m.polling);
	for (uint32_t r = 0; r < j->size; r++) {
		const struct bcs_rank_state *rk = &j->m.rk[r];

		put_u64(&w, rk->clock);
		put_u32(&w, !!rk->blocked);
		put_u32(&w, !!rk->gone);
		put_u32(&w, rk->other_pending);
		put_u64(&w, rk->sent);
	}
	for (uint32_t d = 0; d < j->size; d++) {
		n = 0;
		for (const struct bcs_msg *s = j->m.sends[d]; s; s = s->next)
			n++;
		put_u32(&w, n);
		for (const struct bcs_msg *s = j->m.sends[d]; s; s = s->next)
			put_msg(&w, s);
	}
	for (uint32_t d = 0; d < j->size; d++) {
		n = 0;
		for (const struct bcs_recv *r = j->m.recvs[d]; r; r = r->next)
			n++;
		put_u32(&w, n);
		for (const struct bcs_recv *r = j->m.recvs[d]; r; r = r->next)
			put_recv(&w, r);
	}
	/* the communicators and the spread collective */
	n = 0;
	for (const struct bcs_comm *c = j->comms; c; c = c->next) {
		n++;
		if (c == j->spread)
			spread = n;
	}
	put_u32(&w, n);
	for (const struct bcs_comm *c = j->comms; c; c = c->next)
		put_comm(&w, c);
	put_u32(&w, spread);
	/* sections of the next rounds already here */
	for (uint32_t k = 0; k < 2 * j->nnodes; k++) {
		const struct bcs_sect *s = &j->sect[k];

		put_u32(&w, !!s->have);
		if (s->have) {
			put_u64(&w, s->len);
			put(&w, s->data, s->len);
		}
	}
	/* local: the areas, then the transfers */
	for (uint32_t i = 0; i < j->nlocal; i++) {
		put_u32(&w, !!j->gone[i]);
		put_u64(&w, j->tail[i]);
		put_u64(&w, j->seq[i]);
		put_u64(&w, j->rseq[i]);
		put_u32(&w, j->pending[i]);
		put_u64(&w, j->woken[i]);
		put_u32(&w, j->incoming[i]);
		put_u32(&w, j->polls[i]);
		n = 0;
		for (const struct bcs_late *l = j->late[i]; l; l = l->next)
			n++;
		put_u32(&w, n);
		for (const struct bcs_late *l = j->late[i]; l; l = l->next)
			put_done(&w, &l->d);
	}
	put_xfers(&w, j->xfers);
	put_xfers(&w, j->out);
	put_xfers(&w, j->in);
	put_xfers(&w, j->pulls);
	/* room for the checksum, then the length and the checksum */
	{
		uint8_t zero[SAVE_SUM] = { 0 };

		put(&w, zero, sizeof(zero));
	}
	if (w.err) {
		free(w.p);
		return w.err;
	}
	for (int b = 0; b < 8; b++)
		w.p[8 + b] = (uint8_t)((uint64_t)w.len >> (8 * b));
	crypto_generichash(w.p + w.len - SAVE_SUM, SAVE_SUM, w.p,
			   w.len - SAVE_SUM, NULL, 0);
	*buf = w.p;
	*len = w.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

struct rd {
	const uint8_t *p;
	size_t len, off;
	int bad;          /* a read went past the end */
};

static const uint8_t *get(struct rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static uint32_t get_u32(struct rd *r)
{
	const uint8_t *b = get(r, 4);

	return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 |
		   (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
}

static int32_t get_i32(struct rd *r)
{
	return (int32_t)get_u32(r);
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t lo = get_u32(r);

	return lo | (uint64_t)get_u32(r) << 32;
}

static uint8_t get_u8(struct rd *r)
{
	const uint8_t *b = get(r, 1);

	return b ? b[0] : 0;
}

/* The decoder's state: the image, the job being built from it, why it
 * failed (the first reason only). */
struct dec {
	struct rd r;
	struct bcs_job *j;
	uint32_t self;
	/* a job placed anew: place[r] is rank r's node now, and the
	 * image's node ids old[k] are read as new[k] (nmap of them) */
	const uint32_t *place;
	uint32_t *old, *new, nmap;
	int reordered;     /* the job's nodes are in another order now */
	uint64_t matcher_descs, matcher_eager, xfer_eager;
	uint64_t lists;    /* entries of the capped lists so far */
	char *err;
	size_t errlen;
	int rc;
};

static int fail(struct dec *x, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A node id of the image as the job placed anew has it: k < nmap, or
 * -1 (not a node of the job's). */
static int64_t map_node(const struct dec *x, uint32_t v)
{
	for (uint32_t k = 0; k < x->nmap; k++)
		if (x->old[k] == v)
			return x->new[k];
	return -1;
}

/* Not a node of the job's: UINT32_MAX, which no check lets pass. */
static uint32_t get_node(struct dec *x)
{
	uint32_t v = get_u32(&x->r);
	int64_t m;

	if (!x->place)
		return v;
	return (m = map_node(x, v)) < 0 ? UINT32_MAX : (uint32_t)m;
}

static int fail(struct dec *x, int rc, const char *fmt, ...)
{
	va_list ap;

	if (x->rc)
		return x->rc;
	va_start(ap, fmt);
	vsnprintf(x->err, x->errlen, fmt, ap);
	va_end(ap);
	x->rc = rc;
	return rc;
}

/* The image ended early: the one error every read shares. */
static int short_image(struct dec *x, const char *where)
{
	return fail(x, -EBADMSG, "BCS-MPI engine image: truncated in %s at "
		    "byte %zu", where, x->r.off);
}

static int bad(struct dec *x, const char *what)
{
	return fail(x, -EBADMSG, "BCS-MPI engine image: %s (near byte %zu)",
		    what, x->r.off);
}

/* A count that is read next, capped, and each entry of which takes at
 * least min bytes of what is left. */
static int get_count(struct dec *x, uint64_t cap, size_t min, uint32_t *n,
		     const char *what)
{
	*n = get_u32(&x->r);
	if (x->r.bad)
		return short_image(x, what);
	if (*n > cap || (uint64_t)*n * min > x->r.len - x->r.off) {
		char m[160];

		snprintf(m, sizeof(m), "%u %s (at most %llu)", *n, what,
			 (unsigned long long)cap);
		return bad(x, m);
	}
	return 0;
}

static int is_bool(uint32_t v)
{
	return v == 0 || v == 1;
}

static int get_msg(struct dec *x, struct bcs_msg **out)
{
	struct bcs_job *j = x->j;
	struct bcs_msg *s = calloc(1, sizeof(*s));
	uint8_t has;

	if (!s)
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	*out = s;
	s->src = get_i32(&x->r);
	s->dst = get_i32(&x->r);
	s->tag = get_i32(&x->r);
	s->flags = get_u32(&x->r);
	s->ctx = get_u64(&x->r);
	s->bytes = get_u64(&x->r);
	s->clock = get_u64(&x->r);
	s->seq = get_u64(&x->r);
	s->req = get_u64(&x->r);
	s->addr = get_u64(&x->r);
	has = get_u8(&x->r);
	if (x->r.bad)
		return short_image(x, "a send");
	if (s->src < 0 || (uint32_t)s->src >= j->size || s->dst < 0 ||
	    (uint32_t)s->dst >= j->size || s->tag < 0 ||
	    (s->flags & ~(BCS_F_EAGER | BCS_F_SYNC)) ||
	    s->bytes > BCS_BYTES_MAX ||
	    ((s->flags & BCS_F_EAGER) && s->bytes > BCS_EAGER_MAX) ||
	    !is_bool(has))
		return bad(x, "a send's ranks, tag, flags or bytes");
	/* eager bytes are kept exactly where they are received */
	if (has != ((s->flags & BCS_F_EAGER) && bcs_local(j, s->dst)))
		return bad(x, "a send's eager bytes where they are not kept, "
			   "or none where they are");
	if (has) {
		const uint8_t *b = get(&x->r, (size_t)s->bytes);

		if (!b)
			return short_image(x, "a send's eager bytes");
		if (!(s->eager = malloc(s->bytes ? s->bytes : 1)))
			return fail(x, -ENOMEM, "out of memory for a BCS-MPI "
				    "image");
		memcpy(s->eager, b, (size_t)s->bytes);
	}
	return 0;
}

static int get_recv(struct dec *x, struct bcs_recv **out)
{
	struct bcs_job *j = x->j;
	struct bcs_recv *r = calloc(1, sizeof(*r));
	uint32_t probe;

	if (!r)
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	*out = r;
	r->dst = get_i32(&x->r);
	r->src = get_i32(&x->r);
	r->tag = get_i32(&x->r);
	probe = get_u32(&x->r);
	r->ctx = get_u64(&x->r);
	r->cap = get_u64(&x->r);
	r->req = get_u64(&x->r);
	r->addr = get_u64(&x->r);
	r->waited = get_u32(&x->r);
	r->seq = get_u64(&x->r);
	if (x->r.bad)
		return short_image(x, "a receive");
	r->probe = (int)probe;
	if (r->dst < 0 || (uint32_t)r->dst >= j->size ||
	    (r->src != BCS_ANY &&
	     (r->src < 0 || (uint32_t)r->src >= j->size)) ||
	    (r->tag != BCS_ANY && r->tag < 0) || !is_bool(probe) ||
	    r->cap > BCS_BYTES_MAX)
		return bad(x, "a receive's ranks, tag or bytes");
	return 0;
}

static void get_desc(struct rd *r, struct bcs_desc *d)
{
	d->kind = get_u32(r);
	d->flags = get_u32(r);
	d->req = get_u64(r);
	d->ctx = get_u64(r);
	d->peer = get_i32(r);
	d->tag = get_i32(r);
	d->addr = get_u64(r);
	d->bytes = get_u64(r);
	d->addr2 = get_u64(r);
	d->coll = get_u32(r);
	d->op = get_u32(r);
	d->type = get_u32(r);
	d->pad = get_u32(r);
	d->clock = get_u64(r);
}

static void get_done(struct rd *r, struct bcs_done *d)
{
	d->req = get_u64(r);
	d->status = get_i32(r);
	d->source = get_i32(r);
	d->tag = get_i32(r);
	d->pad = get_u32(r);
	d->bytes = get_u64(r);
	d->clock = get_u64(r);
	d->pull = get_u64(r);
	d->src_addr = get_u64(r);
	d->dst_addr = get_u64(r);
	d->len = get_u64(r);
	d->src_pid = get_i32(r);
	d->src_area = get_u32(r);
	d->notice = get_u32(r);
	d->pad2 = get_u32(r);
	d->src_req = get_u64(r);
}

/* Bytes an entry takes at least: a count of n entries needs n times
 * this left in the image before anything is allocated for them. */
#define MSG_MIN 65u   /* a send without eager bytes */
#define RECV_MIN 60u
#define DESC_MIN 80u
#define DONE_MIN 96u
#define XFER_MIN (28u + RECV_MIN + MSG_MIN)
#define COMM_MIN 48u

/* ---- the replicated state ------------------------------------------------ */

static int get_matcher(struct dec *x)
{
	struct bcs_job *j = x->j;
	uint32_t polling, n;
	uint64_t cap = (uint64_t)j->nnodes * NM_BCS_HELD_DESCS;

	j->m.forced = get_u64(&x->r);
	j->m.matched = get_u64(&x->r);
	polling = get_u32(&x->r);
	if (x->r.bad)
		return short_image(x, "the matcher");
	if (!is_bool(polling))
		return bad(x, "the matcher's polling flag");
	j->m.polling = (int)polling;
	if ((uint64_t)j->size * 28 > x->r.len - x->r.off)
		return short_image(x, "the ranks' states");
	for (uint32_t p = 0; p < j->size; p++) {
		struct bcs_rank_state *rk = &j->m.rk[p];
		uint32_t blocked, gone;

		rk->clock = get_u64(&x->r);
		blocked = get_u32(&x->r);
		gone = get_u32(&x->r);
		rk->other_pending = get_u32(&x->r);
		rk->sent = get_u64(&x->r);
		if (!is_bool(blocked) || !is_bool(gone))
			return bad(x, "a rank's state");
		rk->blocked = (int)blocked;
		rk->gone = (int)gone;
	}
	for (uint32_t d = 0; d < j->size; d++) {
		struct bcs_msg **tail = &j->m.sends[d];

		if (get_count(x, cap - x->matcher_descs, MSG_MIN, &n,
			      "unmatched sends and receives"))
			return x->rc;
		x->matcher_descs += n;
		for (uint32_t k = 0; k < n; k++) {
			struct bcs_msg *s;

			/* linked first: freed with the job on any error */
			if (get_msg(x, &s)) {
				*tail = s;
				return x->rc;
			}
			*tail = s;
			tail = &s->next;
			if (s->dst != (int32_t)d)
				return bad(x, "a send in another rank's list");
			if (s->flags & BCS_F_EAGER)
				x->matcher_eager += s->bytes;
		}
	}
	if (x->matcher_eager > (uint64_t)j->nnodes * NM_BCS_HELD_BYTES)
		return bad(x, "more eager bytes than the engines keep");
	for (uint32_t d = 0; d < j->size; d++) {
		struct bcs_recv **tail = &j->m.recvs[d];

		if (get_count(x, cap - x->matcher_descs, RECV_MIN, &n,
			      "unmatched sends and receives"))
			return x->rc;
		x->matcher_descs += n;
		for (uint32_t k = 0; k < n; k++) {
			struct bcs_recv *r;
			int rc = get_recv(x, &r);

			*tail = r;
			if (rc)
				return x->rc;
			tail = &r->next;
			if (r->dst != (int32_t)d)
				return bad(x, "a receive in another rank's "
					   "list");
		}
	}
	/* the counters are the lists' (bcs_round.c keeps them so) */
	if (j->nheld != x->matcher_descs || j->held != x->matcher_eager)
		return bad(x, "the held counters disagree with the unmatched "
			   "sends and receives");
	return 0;
}

/* A collective under way (bytes done, or the spread one) is one the
 * engine checked when it started it (bcs_coll.c, coll_check): every
 * member posted the same, with a type it can reduce. */
static int under_way_ok(const struct bcs_comm *c)
{
	const struct bcs_desc *d0;

	for (uint32_t k = 0; k < c->n; k++)
		if (!c->q[k])
			return 0;
	d0 = &c->q[0]->d;
	for (uint32_t k = 1; k < c->n; k++)
		if (!bcs_same_coll(d0, &c->q[k]->d))
			return 0;
	if (d0->coll == BCS_C_REDUCE || d0->coll == BCS_C_ALLREDUCE) {
		size_t esz = bcs_type_size((enum bcs_type)d0->type);

		if (!esz || d0->bytes % esz)
			return 0;
	}
	return c->off <= d0->bytes;
}

static int get_comm(struct dec *x, uint8_t *seen, struct bcs_comm **out)
{
	struct bcs_job *j = x->j;
	uint64_t ctx = get_u64(&x->r);
	uint32_t n, where;
	int32_t *w;
	struct bcs_comm *c;
	uint32_t m = 0;
	int rc = 0;

	if (get_count(x, j->size, 4, &n, "members of a communicator"))
		return x->rc;
	if (!n)
		return bad(x, "a communicator without members");
	if (!(w = malloc(n * sizeof(*w))))
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	for (m = 0; m < n; m++) {
		w[m] = get_i32(&x->r);
		if (w[m] < 0 || (uint32_t)w[m] >= j->size || seen[w[m]]) {
			rc = 1;
			break;
		}
		seen[w[m]] = 1;
	}
	for (uint32_t k = 0; k < m; k++) /* seen is clean for the next */
		seen[w[k]] = 0;
	if (rc) {
		free(w);
		return bad(x, "a communicator's member is not a rank of the "
			   "job, or is there twice");
	}
	/* appended to j->comms: freed with the job on any error */
	rc = bcs_comm_add(j, ctx, n, w);
	free(w);
	if (rc)
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	for (c = j->comms; c->next; c = c->next)
		;
	*out = c;
	c->off = get_u64(&x->r);
	c->ndone = get_u64(&x->r);
	c->start = get_u64(&x->r);
	where = get_u32(&x->r);
	if (x->r.bad)
		return short_image(x, "a communicator");
	if (where != (uint32_t)c->where)
		return bad(x, "a communicator's place (here, elsewhere, "
			   "spread) is not its members'");
	for (uint32_t k = 0; k < n; k++) {
		uint8_t f = get_u8(&x->r);

		if (x->r.bad)
			return short_image(x, "a communicator");
		if (f > 1)
			return bad(x, "a member's freed flag");
		c->freed[k] = f;
		c->nfreed += f;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct bcs_cpost **tail = &c->q[k];
		uint32_t np;

		if (get_count(x, SAVE_LIST_MAX - x->lists, DESC_MIN, &np,
			      "posted collectives and other entries"))
			return x->rc;
		x->lists += np;
		for (uint32_t l = 0; l < np; l++) {
			struct bcs_cpost *p = calloc(1, sizeof(*p));
			char why[256];

			if (!p)
				return fail(x, -ENOMEM, "out of memory for a "
					    "BCS-MPI image");
			*tail = p;
			tail = &p->next;
			get_desc(&x->r, &p->d);
			if (x->r.bad)
				return short_image(x, "a posted collective");
			if (bcs_desc_check(&p->d, j->size, why, sizeof(why)) ||
			    p->d.kind != BCS_D_COLL ||
			    ((p->d.coll == BCS_C_BCAST ||
			      p->d.coll == BCS_C_REDUCE) &&
			     (uint32_t)p->d.peer >= n))
				return bad(x, "a posted collective the engine "
					   "would not have taken");
		}
	}
	if (c->off && c->where != BCS_C_HERE && c->where != BCS_C_SPREAD)
		return bad(x, "bytes done of a collective not run here");
	if (c->off && !under_way_ok(c))
		return bad(x, "a collective under way its members did not "
			   "all post alike");
	return 0;
}

static int get_comms(struct dec *x)
{
	struct bcs_job *j = x->j;
	uint8_t *seen;
	uint32_t n, spread, k = 0;

	if (get_count(x, SAVE_LIST_MAX, COMM_MIN, &n, "communicators"))
		return x->rc;
	if (!(seen = calloc(j->size ? j->size : 1, 1)))
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	for (uint32_t i = 0; i < n; i++) {
		struct bcs_comm *c;

		if (get_comm(x, seen, &c))
			break;
	}
	free(seen);
	if (x->rc)
		return x->rc;
	spread = get_u32(&x->r);
	if (x->r.bad)
		return short_image(x, "the spread collective");
	if (spread > n)
		return bad(x, "the spread collective's communicator");
	for (struct bcs_comm *c = j->comms; c; c = c->next)
		if (++k == spread)
			j->spread = c;
	if (j->spread &&
	    (j->spread->where != BCS_C_SPREAD || !under_way_ok(j->spread) ||
	     j->spread->start > j->round))
		return bad(x, "a spread collective that was never started");
	return 0;
}

static int get_sects(struct dec *x)
{
	struct bcs_job *j = x->j;

	for (uint32_t k = 0; k < 2 * j->nnodes; k++) {
		struct bcs_sect *s = &j->sect[k];
		uint32_t have = get_u32(&x->r);
		uint64_t len;
		const uint8_t *b;

		if (x->r.bad)
			return short_image(x, "the sections");
		if (!is_bool(have))
			return bad(x, "a section's flag");
		if (!have)
			continue;
		if (x->reordered)
			return fail(x, -EINVAL, "job %u's image holds sections "
				    "of rounds to come, and its nodes are in "
				    "another order now", j->id);
		len = get_u64(&x->r);
		if (x->r.bad)
			return short_image(x, "a section");
		if (len > NM_BCS_SECT_LOCAL)
			return bad(x, "a section longer than any node sends");
		if (!(b = get(&x->r, (size_t)len)))
			return short_image(x, "a section's bytes");
		if (!(s->data = malloc(len ? len : 1)))
			return fail(x, -ENOMEM, "out of memory for a BCS-MPI "
				    "image");
		memcpy(s->data, b, (size_t)len);
		s->len = s->cap = (size_t)len;
		s->have = 1;
	}
	return 0;
}

/* ---- the local state ---------------------------------------------------- */

static int get_areas(struct dec *x)
{
	struct bcs_job *j = x->j;

	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct bcs_late **tail = &j->late[i];
		uint32_t gone, n;

		gone = get_u32(&x->r);
		j->tail[i] = get_u64(&x->r);
		j->seq[i] = get_u64(&x->r);
		j->rseq[i] = get_u64(&x->r);
		j->pending[i] = get_u32(&x->r);
		j->woken[i] = get_u64(&x->r);
		j->incoming[i] = get_u32(&x->r);
		j->polls[i] = get_u32(&x->r);
		if (x->r.bad)
			return short_image(x, "an area");
		if (!is_bool(gone))
			return bad(x, "an area's finalized flag");
		j->gone[i] = (int)gone;
		if (get_count(x, SAVE_LIST_MAX - x->lists, DONE_MIN, &n,
			      "late completions and other entries"))
			return x->rc;
		x->lists += n;
		for (uint32_t k = 0; k < n; k++) {
			struct bcs_late *l = calloc(1, sizeof(*l));

			if (!l)
				return fail(x, -ENOMEM, "out of memory for a "
					    "BCS-MPI image");
			*tail = l;
			tail = &l->next;
			get_done(&x->r, &l->d);
			if (x->r.bad)
				return short_image(x, "a late completion");
		}
	}
	return 0;
}

static int in_job(const struct bcs_job *j, uint32_t node)
{
	for (uint32_t k = 0; k < j->nnodes; k++)
		if (j->nodes[k] == node)
			return 1;
	return 0;
}

enum { L_XFERS, L_OUT, L_IN, L_PULL };

/* A transfer as on_match (bcs_round.c) makes one for its list: the
 * ranks and nodes that list's code reaches through it. */
static int xfer_ok(const struct bcs_job *j, const struct bcs_xfer *x,
		   int list, uint32_t self)
{
	const struct bcs_msg *s = x->s;
	const struct bcs_recv *r = x->r;
	int here_r = bcs_local(j, r->dst), here_s = bcs_local(j, s->src);

	if (r->probe || r->dst != s->dst ||
	    (r->src != BCS_ANY && r->src != s->src) ||
	    x->len != (s->bytes < r->cap ? s->bytes : r->cap) ||
	    x->done > x->len || x->match == 0 || x->match > j->m.matched)
		return 0;
	switch (list) {
	case L_XFERS:
		return here_r && (here_s || s->eager) && x->peer == self;
	case L_OUT:
		return here_s && !here_r && !s->eager &&
		       x->peer == j->node_of[r->dst] && in_job(j, x->peer);
	case L_PULL:
		return here_r && here_s && !s->eager && x->len &&
		       !x->done && x->peer == self;
	default:
		return here_r && !here_s && !s->eager &&
		       x->peer == j->node_of[s->src] && in_job(j, x->peer);
	}
}

static int get_xfers(struct dec *x, int list, struct bcs_xfer **head)
{
	struct bcs_job *j = x->j;
	struct bcs_xfer **tail = head;
	uint32_t n;

	if (get_count(x, SAVE_LIST_MAX - x->lists, XFER_MIN, &n,
		      "transfers and other entries"))
		return x->rc;
	x->lists += n;
	for (uint32_t k = 0; k < n; k++) {
		struct bcs_xfer *t = calloc(1, sizeof(*t));

		if (!t)
			return fail(x, -ENOMEM, "out of memory for a BCS-MPI "
				    "image");
		*tail = t;
		tail = &t->next;
		if (list == L_XFERS)
			j->xtail = tail;
		t->match = get_u64(&x->r);
		t->peer = get_node(x);
		t->len = get_u64(&x->r);
		t->done = get_u64(&x->r);
		if (x->r.bad)
			return short_image(x, "a transfer");
		if (get_recv(x, &t->r) || get_msg(x, &t->s))
			return x->rc;
		if (t->s->eager)
			x->xfer_eager += t->s->bytes;
		if (!xfer_ok(j, t, list, x->self))
			return bad(x, "a transfer whose ranks, nodes or bytes "
				   "are not its list's");
	}
	if (x->xfer_eager > (uint64_t)j->nnodes * NM_BCS_HELD_BYTES)
		return bad(x, "more eager bytes than the engines keep");
	return 0;
}

/* ---- the job ------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t p = *(const uint32_t *)a, q = *(const uint32_t *)b;

	return p < q ? -1 : p > q;
}

/* The job placed anew (x->place): the image's nodes read as the ones its
 * ranks have now, one for one, or the image is refused naming two ranks
 * grouped otherwise; node_of, and the image's node, as now. */
static int placed(struct dec *x, struct bcs_job *j)
{
	int64_t self;

	if (!(x->old = malloc(j->size * sizeof(*x->old))) ||
	    !(x->new = malloc(j->size * sizeof(*x->new))))
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	for (uint32_t r = 0; r < j->size; r++) {
		uint32_t k;

		for (k = 0; k < x->nmap; k++)
			if (x->old[k] == j->node_of[r] ||
			    x->new[k] == x->place[r])
				break;
		if (k == x->nmap) {
			x->old[k] = j->node_of[r];
			x->new[k] = x->place[r];
			x->nmap++;
		} else if (x->old[k] != j->node_of[r] ||
			   x->new[k] != x->place[r]) {
			uint32_t s;

			for (s = 0; s < r; s++)
				if (j->node_of[s] == x->old[k] ||
				    x->place[s] == x->new[k])
					break;
			return fail(x, -EINVAL, "job %u's ranks are grouped "
				    "on nodes otherwise than at its checkpoint "
				    "(ranks %u and %u were on %s node, and now "
				    "on %s): a BCS-MPI job restarts with its "
				    "ranks together as they were", j->id, s, r,
				    j->node_of[s] == j->node_of[r] ? "one" :
				    "two", x->place[s] == x->place[r] ? "one" :
				    "two");
		}
	}
	for (uint32_t a = 0; a < x->nmap; a++)
		for (uint32_t b = 0; b < x->nmap; b++)
			if (x->old[a] < x->old[b] && x->new[a] > x->new[b])
				x->reordered = 1;
	for (uint32_t r = 0; r < j->size; r++)
		j->node_of[r] = x->place[r];
	if ((self = map_node(x, x->self)) < 0)
		return bad(x, "the image's node has no rank of the job");
	x->self = (uint32_t)self;
	return 0;
}

/* A job with the image's size, ranks and nodes, as nm_bcs_open would
 * have it but for its segment: the arrays, the matcher, the nodes. */
static int job_shape(struct dec *x, uint32_t id, uint32_t size,
		     uint32_t nlocal, uint32_t order)
{
	struct bcs_job *j;

	if (!(j = x->j = calloc(1, sizeof(*j))))
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	j->fd = -1;
	j->trace_fd = -1;
	j->id = id;
	j->size = size;
	j->nlocal = nlocal;
	j->xtail = &j->xfers;
	j->node_of = malloc(size * sizeof(*j->node_of));
	j->nodes = malloc(size * sizeof(*j->nodes));
	if (bcs_job_alloc(j, size, nlocal) || !j->node_of || !j->nodes ||
	    bcs_match_init(&j->m, size, (enum bcs_order)order))
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	for (uint32_t r = 0; r < size; r++) {
		j->node_of[r] = get_u32(&x->r);
		j->area_of[r] = UINT32_MAX;
	}
	if (!x->r.bad && x->place && placed(x, j))
		return x->rc;
	for (uint32_t i = 0; i < nlocal; i++)
		j->world_of[i] = get_i32(&x->r);
	if (x->r.bad)
		return short_image(x, "the job's ranks");
	for (uint32_t i = 0; i < nlocal; i++) {
		int32_t w = j->world_of[i];

		if (w < 0 || (uint32_t)w >= size ||
		    j->area_of[w] != UINT32_MAX || j->node_of[w] != x->self)
			return bad(x, "an area's rank is not a rank of this "
				   "node, or is there twice");
		j->area_of[w] = i;
	}
	memcpy(j->nodes, j->node_of, size * sizeof(*j->nodes));
	qsort(j->nodes, size, sizeof(*j->nodes), cmp_u32);
	for (uint32_t r = 0; r < size; r++)
		if (!j->nnodes || j->nodes[j->nnodes - 1] != j->nodes[r])
			j->nodes[j->nnodes++] = j->nodes[r];
	j->me = UINT32_MAX;
	for (uint32_t k = 0; k < j->nnodes; k++)
		if (j->nodes[k] == x->self)
			j->me = k;
	if (j->me == UINT32_MAX)
		return bad(x, "no rank of the job on its node");
	if (!(j->sect = calloc(2 * (size_t)j->nnodes, sizeof(*j->sect))))
		return fail(x, -ENOMEM, "out of memory for a BCS-MPI image");
	return 0;
}

int bcs_save_decode(struct nm_bcs *e, const uint8_t *buf, size_t len,
		    struct bcs_job **out, char *err, size_t errlen)
{
	return bcs_save_decode_placed(e, buf, len, NULL, 0, out, err, errlen);
}

int bcs_save_decode_placed(struct nm_bcs *e, const uint8_t *buf, size_t len,
			   const uint32_t *place, uint32_t nplace,
			   struct bcs_job **out, char *err, size_t errlen)
{
	struct dec x = { .r = { .p = buf, .len = len }, .err = err,
			 .errlen = errlen, .place = place };
	uint8_t sum[SAVE_SUM];
	uint32_t magic, version, id, size, nlocal, order, failed, built;
	uint64_t bytes;

	*out = NULL;
	magic = get_u32(&x.r);
	version = get_u32(&x.r);
	bytes = get_u64(&x.r);
	id = get_u32(&x.r);
	x.self = get_u32(&x.r); /* mapped with the ranks' nodes */
	if (x.r.bad || magic != SAVE_MAGIC)
		return fail(&x, -EBADMSG, "not a BCS-MPI engine image (%zu "
			    "bytes%s)", len, x.r.bad ? "" : ", no magic");
	if (version != SAVE_VERSION)
		return fail(&x, -EPROTONOSUPPORT, "BCS-MPI engine image of "
			    "version %u: this engine reads version %u", version,
			    SAVE_VERSION);
	if (bytes != len || len < SAVE_HEAD + SAVE_SUM)
		return fail(&x, -EBADMSG, "BCS-MPI engine image truncated or "
			    "padded: %zu bytes where it says %llu", len,
			    (unsigned long long)bytes);
	crypto_generichash(sum, sizeof(sum), buf, len - SAVE_SUM, NULL, 0);
	if (sodium_memcmp(sum, buf + len - SAVE_SUM, SAVE_SUM))
		return fail(&x, -EBADMSG, "BCS-MPI engine image damaged: its "
			    "checksum differs");
	x.r.len = len - SAVE_SUM; /* the body ends at the checksum */
	size = get_u32(&x.r);
	nlocal = get_u32(&x.r);
	order = get_u32(&x.r);
	if (x.r.bad)
		return short_image(&x, "the job's shape");
	if (!size || !nlocal || nlocal > size ||
	    (uint64_t)size * 4 + (uint64_t)nlocal * 4 > x.r.len - x.r.off ||
	    (order != BCS_ORDER_DETERMINISTIC && order != BCS_ORDER_ARRIVAL))
		return bad(&x, "the job's size, local ranks or order");
	if (x.place && nplace != size)
		return fail(&x, -EINVAL, "job %u's image has %u ranks, the "
			    "job placed now %u", id, size, nplace);
	if (job_shape(&x, id, size, nlocal, order))
		goto out;
	x.j->e = e;
	failed = get_u32(&x.r);
	if (x.r.bad) {
		short_image(&x, "the job's failure");
		goto out;
	}
	if (!is_bool(failed)) {
		bad(&x, "the job's failed flag");
		goto out;
	}
	x.j->failed = (int)failed;
	if (failed) {
		uint32_t n = get_u32(&x.r);
		const uint8_t *b;

		if (n >= sizeof(x.j->why) || !(b = get(&x.r, n)) ||
		    memchr(b, '\0', n)) {
			bad(&x, "the job's failure text");
			goto out;
		}
		memcpy(x.j->why, b, n);
	}
	built = get_u32(&x.r);
	x.j->round = get_u64(&x.r);
	x.j->held = get_u64(&x.r);
	x.j->nheld = get_u64(&x.r);
	if (x.r.bad) {
		short_image(&x, "the job's counters");
		goto out;
	}
	if (!is_bool(built)) {
		bad(&x, "the job's built flag");
		goto out;
	}
	x.j->built = (int)built;
	if (get_matcher(&x) || get_comms(&x) || get_sects(&x) ||
	    get_areas(&x) || get_xfers(&x, L_XFERS, &x.j->xfers) ||
	    get_xfers(&x, L_OUT, &x.j->out) || get_xfers(&x, L_IN, &x.j->in) ||
	    get_xfers(&x, L_PULL, &x.j->pulls))
		goto out;
	if (x.r.off != x.r.len) {
		bad(&x, "bytes after the last transfer");
		goto out;
	}
	free(x.old);
	free(x.new);
	*out = x.j;
	return 0;
out:
	free(x.old);
	free(x.new);
	bcs_job_free(x.j);
	return x.rc ? x.rc : -EBADMSG;
}

/* ---- the public calls ---------------------------------------------------- */

int nm_bcs_save(struct nm_bcs *e, uint32_t job, uint8_t **buf, size_t *len,
		char *err, size_t errlen)
{
	struct bcs_job *j = bcs_job_find(e, job);
	int rc;

	if (!j) {
		snprintf(err, errlen, "no BCS-MPI job %u here", job);
		return -ENOENT;
	}
	if (!j->stopped && !j->failed) {
		snprintf(err, errlen, "BCS-MPI job %u is running: stop it "
			 "(nm_bcs_stopped) before saving its engine state",
			 job);
		return -EBUSY;
	}
	if (j->cut) {
		/* at a cut: round j->round applied, and nothing of the next
		 * is in the image — a section of it from a node that ran on
		 * after its capture is that node's, not this image's
		 * (bcs_cut.c) */
		struct bcs_sect *kept = j->sect;

		j->sect = calloc(2 * (size_t)j->nnodes, sizeof(*j->sect));
		rc = j->sect ? bcs_save_encode(j, buf, len) : -ENOMEM;
		free(j->sect);
		j->sect = kept;
	} else {
		rc = bcs_save_encode(j, buf, len);
	}
	if (rc)
		snprintf(err, errlen, "out of memory for job %u's BCS-MPI "
			 "engine image", job);
	return rc;
}

/* The image's job is the one opened here: what differs, or 0. */
static int same_job(const struct nm_bcs *e, const struct bcs_job *j,
		    const struct bcs_job *d, char *err, size_t errlen)
{
	if (d->id != j->id) {
		snprintf(err, errlen, "the image is of job %u, not job %u",
			 d->id, j->id);
		return -EINVAL;
	}
	if (d->nodes[d->me] != e->self) {
		snprintf(err, errlen, "job %u's BCS-MPI engine image was made "
			 "on node %u, not on this node (%u)", j->id,
			 d->nodes[d->me], e->self);
		return -EINVAL;
	}
	if (d->size != j->size) {
		snprintf(err, errlen, "job %u's BCS-MPI engine image has %u "
			 "ranks, the job opened here %u", j->id, d->size,
			 j->size);
		return -EINVAL;
	}
	if (d->nlocal != j->nlocal) {
		snprintf(err, errlen, "job %u's BCS-MPI engine image has %u "
			 "ranks on this node, the job opened here %u", j->id,
			 d->nlocal, j->nlocal);
		return -EINVAL;
	}
	if (d->m.order != j->m.order) {
		snprintf(err, errlen, "job %u's BCS-MPI engine image matches "
			 "%s, the job opened here %s", j->id,
			 d->m.order == BCS_ORDER_ARRIVAL ? "by arrival" :
			 "deterministically", j->m.order == BCS_ORDER_ARRIVAL ?
			 "by arrival" : "deterministically");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (d->world_of[i] != j->world_of[i]) {
			snprintf(err, errlen, "job %u's BCS-MPI engine image "
				 "has rank %d in local area %u, the job opened "
				 "here rank %d", j->id, d->world_of[i], i,
				 j->world_of[i]);
			return -EINVAL;
		}
	for (uint32_t r = 0; r < j->size; r++)
		if (d->node_of[r] != j->node_of[r]) {
			snprintf(err, errlen, "job %u's BCS-MPI engine image "
				 "has rank %u on node %u, the job opened here "
				 "on node %u", j->id, r, d->node_of[r],
				 j->node_of[r]);
			return -EINVAL;
		}
	return 0;
}

#define SWAP(a, b)                                                           \
	do {                                                                 \
		__typeof__(a) t_ = (a);                                      \
		(a) = (b);                                                   \
		(b) = t_;                                                    \
	} while (0)

static void fix_xtail(struct bcs_job *j)
{
	j->xtail = &j->xfers;
	while (*j->xtail)
		j->xtail = &(*j->xtail)->next;
}

static int restore(struct nm_bcs *e, uint32_t job, const uint8_t *buf,
		   size_t len, int placed, char *err, size_t errlen)
{
	struct bcs_job *j = bcs_job_find(e, job), *d;
	bcs_pick_fn pick;
	void *pick_ctx;
	int rc;

	if (!j) {
		snprintf(err, errlen, "no BCS-MPI job %u here", job);
		return -ENOENT;
	}
	if ((rc = bcs_save_decode_placed(e, buf, len,
					 placed ? j->node_of : NULL, j->size,
					 &d, err, errlen)))
		return rc;
	if ((rc = same_job(e, j, d, err, errlen))) {
		bcs_job_free(d);
		return rc;
	}
	/* the image's state in, the job's old state out with d */
	SWAP(j->gone, d->gone);
	SWAP(j->tail, d->tail);
	SWAP(j->seq, d->seq);
	SWAP(j->rseq, d->rseq);
	SWAP(j->pending, d->pending);
	SWAP(j->late, d->late);
	SWAP(j->woken, d->woken);
	SWAP(j->incoming, d->incoming);
	SWAP(j->polls, d->polls);
	SWAP(j->xfers, d->xfers);
	SWAP(j->out, d->out);
	SWAP(j->in, d->in);
	fix_xtail(j);
	fix_xtail(d);
	pick = j->m.pick; /* the replayed record, if any, stays */
	pick_ctx = j->m.pick_ctx;
	SWAP(j->m, d->m);
	j->m.pick = pick;
	j->m.pick_ctx = pick_ctx;
	j->m.diverged = NULL;
	SWAP(j->comms, d->comms);
	SWAP(j->spread, d->spread);
	SWAP(j->held, d->held);
	SWAP(j->nheld, d->nheld);
	SWAP(j->round, d->round);
	SWAP(j->built, d->built);
	SWAP(j->sect, d->sect);
	j->failed = d->failed;
	memcpy(j->why, d->why, sizeof(j->why));
	j->reported = 0;
	j->stopped = 1;
	bcs_job_free(d);
	/* what the other nodes sent meanwhile, of the rounds after the
	 * image's */
	j->restoring = 0;
	bcs_early_adopt(e, j);
	return 0;
}

int nm_bcs_restore(struct nm_bcs *e, uint32_t job, const uint8_t *buf,
		   size_t len, char *err, size_t errlen)
{
	return restore(e, job, buf, len, 0, err, errlen);
}

int nm_bcs_restore_placed(struct nm_bcs *e, uint32_t job, const uint8_t *buf,
			  size_t len, char *err, size_t errlen)
{
	return restore(e, job, buf, len, 1, err, errlen);
}
