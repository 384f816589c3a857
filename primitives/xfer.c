/*
 * xfer.c — XFER-AND-SIGNAL: all-or-nothing multicast into global memory.
 *
 * Two phases over a radix tree rooted at the source and spanning the
 * destination set: (1) STAGE — chunks flow down, each node keeps them in a
 * private staging buffer and forwards them to its children (XDATA carries
 * the bytes; XRMA, for transfers of XFER_RMA_MIN or more when the
 * back-end reads remotely, names a chunk in the parent's staging arena and
 * the child reads it — one copy, by the reader; a leaf of the tree, which
 * forwards nothing, is named the whole transfer at once); a node reports
 * XSTAGED up once it holds every byte and its whole subtree has reported;
 * (2) DECIDE — when the source has every XSTAGED it commits: XDECIDE(commit)
 * flows down, each node copies staging -> global memory, signals the remote
 * event and reports XDONE up; the local event fires at the source when all
 * are done.  Nothing reaches global memory before the decision, so an abort
 * (a destination left the view while staging) leaves every node untouched.
 *
 * Source record (sp_xfer_out) — state × event:
 *   STAGING    | last XSTAGED -> commit, COMMITTING | view drops a dest ->
 *              |   abort down, local ev -STORM_EABORTED, DONE
 *   COMMITTING | last XDONE(gen) -> local ev 0, DONE | view drops a dest ->
 *              |   gen++, XDECIDE(commit) again over the survivors
 *   DONE       | everything dropped
 * Destination record (sp_xfer_in):
 *   STAGING  --all bytes + subtree--> STAGED --commit--> COMMITTED
 *   STAGING/STAGED --abort--> ABORTED;  COMMITTED/ABORTED are tombstones
 *   that answer duplicate decisions and drop late chunks.
 *   If the source leaves the view while undecided, the view's STABLE facts
 *   decide: commit iff some survivor had committed (then all had staged).
 *
 * One destination (PUT).  With a single destination other than the source
 * there is nobody to agree with: one XPUT message carries the whole
 * transfer (up to one chunk), the destination copies it into global memory
 * at once, signals and answers XDONE — two messages and two wake-ups
 * instead of four, no staging.  The source record starts in COMMITTING, so
 * a destination leaving the view ends it as a commit among the survivors,
 * as in the tree.  A PUT waits behind nothing, so it is used only while no
 * earlier transfer of this source to that node is undone: transfers from
 * one source to one node still commit in the order they were started.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_engine.h"

enum { X_STAGING, X_STAGED, X_COMMITTING, X_COMMITTED, X_ABORTED, X_DONE };

#define XREF_OUT 1
#define XREF_IN 2
#define XIN_KEEP 1024 /* decided records kept as tombstones */
#define XRD_WHOLE 1   /* a leaf reads the whole transfer at once */
#define XRD_CHUNKS 2  /* others read it chunk by chunk */
/* From this size on, children read staging remotely when the back-end
 * can (one copy by the reader, no per-chunk messages); below it one
 * message per chunk is cheaper than a read's round trip. */
#define XFER_RMA_MIN (64u << 10)
/* A PUT up to this size is copied into the message (no send completion
 * to wait for, an inject on shm); larger ones go out of src. */
#define XPUT_INLINE (16u << 10)

/* What every chunk message of one transfer repeats. */
struct xhdr {
	uint64_t xid;
	uint32_t source;
	size_t len;
	uint64_t gaddr;
	sp_ev_t rev;
};

/* A read of one chunk in flight: the cookie the back-end reports. */
struct xread {
	struct sp_xfer_in *x;
	size_t off;
	uint32_t clen;
};

struct sp_xfer_out {
	int kind; /* XREF_OUT; first so a cookie can be told apart */
	uint32_t refs;
	struct sp_xfer_out *next;
	uint64_t xid;
	int state;
	uint32_t gen, pending;
	uint64_t *set;
	const uint8_t *src;
	uint8_t *stage; /* arena copy children read, or NULL */
	size_t len;
	uint64_t gaddr;
	sp_ev_t lev, rev;
};

struct sp_xfer_in {
	int kind; /* XREF_IN */
	uint32_t refs;
	struct sp_xfer_in *next;
	uint64_t xid;
	uint32_t source, parent, dparent;
	int state;
	uint32_t pending_staged, pending_done, gen;
	uint64_t *set;
	uint8_t *stage; /* arena run, or malloc'd (sp_stage_free knows), or
			 * the source's arena in place (pin, read-only) */
	void *pin;      /* the back-end's pin of stage, or NULL */
	size_t len, got;
	uint32_t reads_left; /* remote reads in flight (each holds a ref) */
	int rdmode;          /* 0, XRD_WHOLE (one read) or XRD_CHUNKS */
	struct xread *rd;    /* one per chunk, for the reads' cookies */
	uint64_t gaddr;
	sp_ev_t rev;
};

static uint32_t *kidbuf(sp_world_t *w, uint32_t *max)
{
	/* children of one node in a radix tree: at most (k-1)·digits */
	static _Thread_local uint32_t buf[8192];

	(void)w;
	*max = sizeof(buf) / sizeof(buf[0]);
	return buf;
}

/* ---- records ------------------------------------------------------------- */

static struct sp_xfer_in *in_find(sp_world_t *w, uint64_t xid)
{
	for (struct sp_xfer_in *r = w->xin; r; r = r->next)
		if (r->xid == xid)
			return r;
	return NULL;
}

/* Give back what r stages in: an arena run, private memory or a pin. */
static void in_release(sp_world_t *w, struct sp_xfer_in *r)
{
	if (r->pin)
		w->tp->ops->unpin(w->tp, r->pin);
	else
		sp_stage_free(w, r->stage, r->len);
	r->pin = NULL;
	r->stage = NULL;
}

static void in_free(sp_world_t *w, struct sp_xfer_in *r)
{
	in_release(w, r);
	free(r->rd);
	free(r->set);
	free(r);
}

static void in_drop_stage(sp_world_t *w, struct sp_xfer_in *r)
{
	if (r->refs == 0)
		in_release(w, r);
}

/* Every byte staged here (reads count as requested: none may be left). */
static int in_complete(const struct sp_xfer_in *r)
{
	return r->got == r->len && r->reads_left == 0;
}

/* A send from or a read into r's staging finished. */
static void in_unref(sp_world_t *w, struct sp_xfer_in *r)
{
	if (--r->refs == 0 && r->state != X_STAGING && r->state != X_STAGED)
		in_drop_stage(w, r);
}

/* Keep at most XIN_KEEP decided records (tombstones). */
static void in_gc(sp_world_t *w)
{
	struct sp_xfer_in **pp = &w->xin;
	uint32_t kept = 0;

	while (*pp) {
		struct sp_xfer_in *r = *pp;
		int decided = r->state == X_COMMITTED || r->state == X_ABORTED;

		if (decided && r->refs == 0 && r->pending_done == 0 &&
		    ++kept > XIN_KEEP) {
			*pp = r->next;
			in_free(w, r);
			continue;
		}
		pp = &r->next;
	}
}

static struct sp_xfer_in *in_new(sp_world_t *w, uint64_t xid, uint32_t source,
				 const uint8_t *setw)
{
	struct sp_xfer_in *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->kind = XREF_IN;
	r->set = malloc(w->nwords * sizeof(uint64_t));
	if (!r->set) {
		free(r);
		return NULL;
	}
	for (uint32_t i = 0; i < w->nwords; i++) {
		struct sp_rbuf rr = {.p = setw + 8 * i, .len = 8};

		r->set[i] = sp_r_u64(&rr);
	}
	r->xid = xid;
	r->source = source;
	r->next = w->xin;
	w->xin = r;
	in_gc(w);
	return r;
}

static void out_unlink_free(sp_world_t *w, struct sp_xfer_out *o)
{
	for (struct sp_xfer_out **pp = &w->xout; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	}
	sp_stage_free(w, o->stage, o->len);
	free(o->set);
	free(o);
}

static void out_finish(sp_world_t *w, struct sp_xfer_out *o, int status)
{
	o->state = X_DONE;
	sp_event_signal(w, o->lev, status);
	if (o->refs == 0)
		out_unlink_free(w, o);
}

void sp_xfer_send_done(sp_world_t *w, void *cookie)
{
	int kind = cookie ? *(int *)cookie : 0;

	if (kind == XREF_OUT) {
		struct sp_xfer_out *o = cookie;

		if (--o->refs == 0 && o->state == X_DONE)
			out_unlink_free(w, o);
	} else if (kind == XREF_IN) {
		in_unref(w, cookie);
	}
}

/* ---- messages ------------------------------------------------------------ */

static void put_set(struct sp_wbuf *b, const uint64_t *set, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		sp_w_u64(b, set[i]);
}

static void send_chunk(sp_world_t *w, uint32_t dst, uint64_t xid,
		       uint32_t source, size_t len, uint64_t gaddr, sp_ev_t rev,
		       const uint64_t *set, size_t off, const uint8_t *data,
		       uint32_t clen, uint32_t *refs, void *cookie)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, SP_MSG_XDATA, w->v.epoch);
	sp_w_u64(&b, xid);
	sp_w_u32(&b, source);
	sp_w_u64(&b, len);
	sp_w_u64(&b, gaddr);
	sp_w_u32(&b, rev);
	sp_w_u64(&b, off);
	sp_w_u32(&b, clen);
	put_set(&b, set, w->nwords);
	(*refs)++;
	if (sp_msg_send(w, dst, &b, data, clen, cookie) == -EMSGSIZE)
		(*refs)--;
}

/* Tell a child that chunk [off, off+clen) is in our arena staging: it
 * reads it from there. */
static void send_rma(sp_world_t *w, uint32_t dst, struct xhdr h,
		     const uint64_t *set, const uint8_t *stage, size_t off,
		     uint32_t clen)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, SP_MSG_XRMA, w->v.epoch);
	sp_w_u64(&b, h.xid);
	sp_w_u32(&b, h.source);
	sp_w_u64(&b, h.len);
	sp_w_u64(&b, h.gaddr);
	sp_w_u32(&b, h.rev);
	sp_w_u64(&b, off);
	sp_w_u32(&b, clen);
	sp_w_u64(&b, w->stage.key);
	sp_w_u64(&b, sp_stage_raddr(w, stage + off));
	put_set(&b, set, w->nwords);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

static void send_decide(sp_world_t *w, uint32_t dst, uint64_t xid,
			uint32_t source, int commit, uint32_t gen,
			const uint64_t *set)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, SP_MSG_XDECIDE, w->v.epoch);
	sp_w_u64(&b, xid);
	sp_w_u32(&b, source);
	sp_w_u8(&b, (uint8_t)commit);
	sp_w_u32(&b, gen);
	put_set(&b, set, w->nwords);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

static void send_up(sp_world_t *w, uint32_t dst, uint8_t type, uint64_t xid,
		    uint32_t gen)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, type, w->v.epoch);
	sp_w_u64(&b, xid);
	sp_w_u32(&b, gen);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

/* Children of this node in the tree of (set, source); returns count. */
static uint32_t kids_of(sp_world_t *w, const uint64_t *set, uint32_t source,
			uint32_t **out)
{
	uint32_t max, *buf = kidbuf(w, &max);
	uint32_t n = sp_settree_children(set, w->nwords, source, w->id,
					 w->fanout, buf, max);

	*out = buf;
	return n < max ? n : max;
}

/* Whether kid has no children of its own in the tree of (set, source):
 * a leaf forwards nothing, so chunking its read buys no pipelining — one
 * read of the whole transfer costs a quarter of the messages and wake-ups
 * of four chunk reads. */
static int is_leaf(sp_world_t *w, const uint64_t *set, uint32_t source,
		   uint32_t kid, size_t len)
{
	uint32_t one[1];

	return len <= UINT32_MAX &&
	       sp_settree_children(set, w->nwords, source, kid, w->fanout,
				   one, 1) == 0;
}

static int in_set(const uint64_t *set, uint32_t id)
{
	return (set[id / 64] >> (id % 64)) & 1;
}

static uint32_t chunk_len(const sp_world_t *w, size_t len, size_t off)
{
	return (uint32_t)(len - off < w->chunk ? len - off : w->chunk);
}

/* ---- source side ---------------------------------------------------------- */

static void commit_local(sp_world_t *w, uint64_t gaddr, const void *data,
			 size_t len, sp_ev_t rev)
{
	memcpy(w->gmem + gaddr, data, len);
	sp_event_signal(w, rev, 0);
}

static void out_decide_commit(sp_world_t *w, struct sp_xfer_out *o,
			      const uint64_t *set)
{
	uint32_t *kids, nk;

	if (o->state == X_STAGING && in_set(o->set, w->id))
		commit_local(w, o->gaddr, o->src, o->len, o->rev);
	o->state = X_COMMITTING;
	o->gen++;
	nk = kids_of(w, set, w->id, &kids);
	o->pending = nk;
	for (uint32_t i = 0; i < nk; i++)
		send_decide(w, kids[i], o->xid, w->id, 1, o->gen, set);
	if (o->pending == 0)
		out_finish(w, o, 0);
}

/* The one node of set other than this one, or -1 (none, or several). */
static int64_t sole_dest(const sp_world_t *w, const uint64_t *set)
{
	int64_t d = -1;

	for (uint32_t i = 0; i < w->nwords; i++) {
		uint64_t x = set[i];

		if (i == w->id / 64)
			x &= ~(1ull << (w->id % 64));
		if (!x)
			continue;
		if (d >= 0 || (x & (x - 1)))
			return -1;
		d = (int64_t)i * 64 + __builtin_ctzll(x);
	}
	return d;
}

/* Whether a transfer of ours that includes node d is still undone. */
static int undone_to(const sp_world_t *w, uint32_t d)
{
	for (const struct sp_xfer_out *o = w->xout; o; o = o->next)
		if (o->state != X_DONE && in_set(o->set, d))
			return 1;
	return 0;
}

/* The PUT: committed here at once if we are a destination too, then the
 * whole transfer in one message; XDONE(gen 1) finishes it. */
static void put_start(sp_world_t *w, struct sp_xfer_out *o, uint32_t d)
{
	struct sp_wbuf b;
	int rc;

	if (in_set(o->set, w->id))
		commit_local(w, o->gaddr, o->src, o->len, o->rev);
	o->state = X_COMMITTING;
	o->gen = 1;
	o->pending = 1;
	sp_msg_begin(w, &b, SP_MSG_XPUT, w->v.epoch);
	sp_w_u64(&b, o->xid);
	sp_w_u64(&b, o->gaddr);
	sp_w_u32(&b, o->rev);
	sp_w_u32(&b, (uint32_t)o->len);
	if (o->len <= XPUT_INLINE) {
		sp_w_bytes(&b, o->src, o->len);
		rc = sp_msg_send(w, d, &b, NULL, 0, NULL);
	} else {
		o->refs++;
		if ((rc = sp_msg_send(w, d, &b, o->src, o->len, o)) ==
		    -EMSGSIZE)
			o->refs--;
	}
	/* unreachable: the view change that follows finishes it */
	if (rc == -EMSGSIZE)
		out_finish(w, o, -EMSGSIZE);
}

int sp_put_posted(sp_world_t *w, uint32_t node, const void *src,
		  size_t len, uint64_t gaddr, sp_ev_t remote_ev)
{
	struct sp_wbuf b;
	int rc;

	if (!w || !src || node >= w->n || node == w->id || len == 0 ||
	    len > SP_PUT_POSTED_MAX || len > w->chunk ||
	    gaddr > w->gmem_size || len > w->gmem_size - gaddr ||
	    (remote_ev != SP_EV_NONE && remote_ev >= w->nevents))
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	if (w->closed || w->v.expelled)
		rc = w->closed ? -STORM_ECLOSED : -STORM_EEXPELLED;
	else if (!sp_nodeset_has(w->v.live, node))
		rc = -STORM_ENOTINVIEW;
	else if (undone_to(w, node))
		rc = -EBUSY; /* it would overtake that one */
	else
		rc = 0;
	if (rc == 0) {
		sp_msg_begin(w, &b, SP_MSG_XPOST, w->v.epoch);
		sp_w_u64(&b, (uint64_t)w->id << 32 | ++w->xseq);
		sp_w_u64(&b, gaddr);
		sp_w_u32(&b, remote_ev);
		sp_w_u32(&b, (uint32_t)len);
		sp_w_bytes(&b, src, len);
		/* its only effect there is remote_ev: a node that keeps it
		 * quiet need not wake for it */
		rc = sp_msg_send_lazy(w, node, &b, remote_ev);
		if (rc == -EMSGSIZE)
			rc = -EINVAL;
		sp_deferred_run(w);
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

int sp_xfer_and_signal(sp_world_t *w, const sp_nodeset_t *dst,
		       const void *src, size_t len, uint64_t gaddr,
		       sp_ev_t local_ev, sp_ev_t remote_ev, char *err,
		       size_t errlen)
{
	struct sp_xfer_out *o;
	uint32_t *kids, nk;
	int64_t bad;

	if (!w || !dst || !src)
		return -EINVAL;
	if (dst->capacity != w->n || sp_nodeset_count(dst) == 0 || len == 0) {
		if (err)
			snprintf(err, errlen,
				 "xfer: empty node set, zero length or a set sized for another machine (%u nodes)",
				 w->n);
		return -EINVAL;
	}
	if (gaddr > w->gmem_size || len > w->gmem_size - gaddr) {
		if (err)
			snprintf(err, errlen,
				 "xfer: global range [%llu, +%zu) is outside global memory (%zu bytes)",
				 (unsigned long long)gaddr, len, w->gmem_size);
		return -EINVAL;
	}
	if ((local_ev != SP_EV_NONE && local_ev >= w->nevents) ||
	    (remote_ev != SP_EV_NONE && remote_ev >= w->nevents)) {
		if (err)
			snprintf(err, errlen,
				 "xfer: event out of range (this world has %u events)",
				 w->nevents);
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->set = malloc(w->nwords * sizeof(uint64_t));
	if (!o->set) {
		free(o);
		return -ENOMEM;
	}
	pthread_mutex_lock(&w->lock);
	if (w->closed || w->v.expelled) {
		int rc = w->closed ? -STORM_ECLOSED : -STORM_EEXPELLED;

		pthread_mutex_unlock(&w->lock);
		free(o->set);
		free(o);
		return rc;
	}
	for (bad = sp_nodeset_next(dst, 0); bad >= 0;
	     bad = sp_nodeset_next(dst, (uint32_t)bad + 1))
		if (!sp_nodeset_has(w->v.live, (uint32_t)bad))
			break;
	if (bad >= 0) {
		pthread_mutex_unlock(&w->lock);
		if (err)
			snprintf(err, errlen,
				 "xfer: node %lld is not a member of the current view",
				 (long long)bad);
		free(o->set);
		free(o);
		return -STORM_ENOTINVIEW;
	}
	memcpy(o->set, dst->words, w->nwords * sizeof(uint64_t));
	o->kind = XREF_OUT;
	o->xid = (uint64_t)w->id << 32 | ++w->xseq;
	o->src = src;
	o->len = len;
	o->gaddr = gaddr;
	o->lev = local_ev;
	o->rev = remote_ev;
	o->state = X_STAGING;
	bad = len <= w->chunk ? sole_dest(w, o->set) : -1;
	if (bad >= 0 && undone_to(w, (uint32_t)bad))
		bad = -1;
	o->next = w->xout;
	w->xout = o;
	if (bad >= 0) {
		put_start(w, o, (uint32_t)bad);
		sp_deferred_run(w);
		pthread_mutex_unlock(&w->lock);
		return 0;
	}
	nk = kids_of(w, o->set, w->id, &kids);
	o->pending = nk;
	if (nk && len >= XFER_RMA_MIN && (o->stage = sp_stage_alloc(w, len))) {
		/* The children read it from the arena, one copy each, a
		 * chunk at a time so that the tree pipelines. */
		struct xhdr h = { o->xid, w->id, len, gaddr, remote_ev };

		memcpy(o->stage, src, len);
		for (uint32_t i = 0; i < nk; i++)
			if (is_leaf(w, o->set, w->id, kids[i], len))
				send_rma(w, kids[i], h, o->set, o->stage, 0,
					 (uint32_t)len);
		for (size_t off = 0; off < len; off += w->chunk)
			for (uint32_t i = 0; i < nk; i++)
				if (!is_leaf(w, o->set, w->id, kids[i], len))
					send_rma(w, kids[i], h, o->set,
						 o->stage, off,
						 chunk_len(w, len, off));
	}
	/* chunk-major order: every child gets chunk i before chunk i+1, so
	 * the whole tree pipelines */
	for (size_t off = 0; !o->stage && off < len; off += w->chunk) {
		uint32_t clen = (uint32_t)(len - off < w->chunk ? len - off :
								  w->chunk);

		for (uint32_t i = 0; i < nk; i++)
			send_chunk(w, kids[i], o->xid, w->id, len, gaddr,
				   remote_ev, o->set, off,
				   (const uint8_t *)src + off, clen, &o->refs, o);
	}
	if (nk == 0)
		out_decide_commit(w, o, o->set);
	sp_deferred_run(w);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* ---- handlers -------------------------------------------------------------- */

static void in_maybe_staged(sp_world_t *w, struct sp_xfer_in *r)
{
	if (r->state == X_STAGING && in_complete(r) &&
	    r->pending_staged == 0) {
		r->state = X_STAGED;
		send_up(w, r->parent, SP_MSG_XSTAGED, r->xid, 0);
	}
}

/* A new destination record in STAGING, staging in the arena if asked and
 * it fits (else malloc'd); ABORTED here if there is no memory for it. */
static void in_stage_init(sp_world_t *w, struct sp_xfer_in *x,
			  uint32_t parent, size_t len, uint64_t gaddr,
			  sp_ev_t rev, int arena)
{
	uint32_t *kids;

	x->len = len;
	x->gaddr = gaddr;
	x->rev = rev;
	x->parent = parent;
	x->stage = arena ? sp_stage_alloc(w, len) : NULL;
	if (!x->stage && !(x->stage = malloc(len))) {
		x->state = X_ABORTED;
		return;
	}
	x->state = X_STAGING;
	x->pending_staged = kids_of(w, x->set, x->source, &kids);
}

static struct sp_xfer_in *in_start(sp_world_t *w, uint64_t xid,
				   uint32_t source, uint32_t parent,
				   const uint8_t *setw, size_t len,
				   uint64_t gaddr, sp_ev_t rev, int arena)
{
	struct sp_xfer_in *x = in_new(w, xid, source, setw);

	if (x)
		in_stage_init(w, x, parent, len, gaddr, rev, arena);
	return x;
}

/* Chunk [off, off+clen) is staged here: pass it on to our children, by a
 * read of our arena staging or, if it is malloc'd, by messages.  A leaf
 * child reads the whole transfer at once, when the last chunk is in. */
static void in_forward(sp_world_t *w, struct sp_xfer_in *x, size_t off,
		       uint32_t clen)
{
	struct xhdr h = { x->xid, x->source, x->len, x->gaddr, x->rev };
	uint32_t *kids, nk = kids_of(w, x->set, x->source, &kids);

	for (uint32_t i = 0; i < nk; i++) {
		if (sp_stage_owns(w, x->stage) &&
		    is_leaf(w, x->set, x->source, kids[i], x->len)) {
			if (x->got == x->len)
				send_rma(w, kids[i], h, x->set, x->stage, 0,
					 (uint32_t)x->len);
		} else if (sp_stage_owns(w, x->stage))
			send_rma(w, kids[i], h, x->set, x->stage, off, clen);
		else
			send_chunk(w, kids[i], x->xid, x->source, x->len,
				   x->gaddr, x->rev, x->set, off,
				   x->stage + off, clen, &x->refs, x);
	}
}

/* A leaf child of the source, named the whole transfer, on a back-end
 * that can pin the source's arena (shm: a file mapped here): it stages
 * nothing and reads the bytes at the commit, straight into global
 * memory — one copy instead of two.  Sound because the source keeps its
 * arena copy until every XDONE (its run is freed at DONE, or at an abort,
 * after which we never read) and the pin keeps the mapping if the source
 * dies: a commit decided before its death still finds every byte.  NULL:
 * not possible here; the caller stages as usual. */
static struct sp_xfer_in *in_pinned(sp_world_t *w, uint64_t xid,
				    uint32_t source, const uint8_t *setw,
				    size_t len, uint64_t gaddr, sp_ev_t rev,
				    uint64_t raddr, uint64_t key)
{
	const struct sp_transport_ops *ops = w->tp->ops;
	struct sp_xfer_in *x;
	const void *at;
	uint32_t *kids;
	void *pin = NULL;

	if (ops->version < SP_TRANSPORT_OPS_V6 || !ops->pin ||
	    !(at = ops->pin(w->tp, source, raddr, key, len, &pin)))
		return NULL;
	if (!(x = in_new(w, xid, source, setw))) {
		ops->unpin(w->tp, pin);
		return NULL;
	}
	if (kids_of(w, x->set, source, &kids)) {
		/* not a leaf in our tree of x->set: stage as usual */
		ops->unpin(w->tp, pin);
		in_stage_init(w, x, source, len, gaddr, rev, 1);
		return x;
	}
	x->len = len;
	x->gaddr = gaddr;
	x->rev = rev;
	x->parent = source;
	x->stage = (uint8_t *)(uintptr_t)at; /* only ever read */
	x->pin = pin;
	x->got = len;
	x->rdmode = XRD_WHOLE;
	x->state = X_STAGING;
	return x;
}

/* XRMA: the parent staged a chunk in its arena; read it into ours. */
static void on_rma(sp_world_t *w, uint32_t src, struct sp_rbuf *r)
{
	uint64_t xid = sp_r_u64(r);
	uint32_t source = sp_r_u32(r);
	uint64_t len = sp_r_u64(r), gaddr = sp_r_u64(r);
	uint32_t rev = sp_r_u32(r);
	uint64_t off = sp_r_u64(r);
	uint32_t clen = sp_r_u32(r);
	uint64_t key = sp_r_u64(r), raddr = sp_r_u64(r);
	const uint8_t *setw = sp_r_ptr(r, w->nwords * 8u);
	struct sp_xfer_in *x;
	struct xread *rd;
	int mode;

	if (r->bad || !setw || source >= w->n || len == 0 ||
	    gaddr > w->gmem_size || len > w->gmem_size - gaddr ||
	    off >= len || off % w->chunk ||
	    (clen != chunk_len(w, len, off) && (off || clen != len)) ||
	    !w->stage.base)
		return; /* malformed, or we cannot read remotely: dropped */
	x = in_find(w, xid);
	if (!x && src == source && off == 0 && clen == len &&
	    (x = in_pinned(w, xid, source, setw, len, gaddr, rev, raddr,
			   key)) && x->pin) {
		in_maybe_staged(w, x);
		return;
	}
	if (!x && !(x = in_start(w, xid, source, src, setw, len, gaddr, rev,
				 1)))
		return;
	if (x->state != X_STAGING || x->len != len || x->pin)
		return; /* decided already, or a duplicate */
	if (!x->rd && !(x->rd = calloc((len + w->chunk - 1) / w->chunk,
				       sizeof(*x->rd)))) {
		x->state = X_ABORTED; /* no memory: never stages */
		return;
	}
	rd = &x->rd[off / w->chunk];
	mode = off == 0 && clen == len ? XRD_WHOLE : XRD_CHUNKS;
	if (rd->x || (x->rdmode && x->rdmode != mode))
		return; /* a duplicate, or a mix of whole and chunks */
	x->rdmode = mode;
	*rd = (struct xread){ x, off, clen };
	/* A failed read means src is gone: the view change that follows
	 * aborts or resolves the transfer. */
	x->refs++;
	x->reads_left++;
	if (w->tp->ops->read(w->tp, src, x->stage + off, clen, raddr, key,
			     rd)) {
		x->refs--;
		x->reads_left--;
	}
}

void sp_xfer_read_done(sp_world_t *w, void *cookie, int status)
{
	struct xread *rd = cookie;
	struct sp_xfer_in *x = rd->x;

	x->reads_left--;
	if (!status && x->state == X_STAGING) {
		x->got += rd->clen;
		in_forward(w, x, rd->off, rd->clen);
		in_maybe_staged(w, x);
	}
	in_unref(w, x);
}

static void on_data(sp_world_t *w, uint32_t src, struct sp_rbuf *r)
{
	uint64_t xid = sp_r_u64(r);
	uint32_t source = sp_r_u32(r);
	uint64_t len = sp_r_u64(r), gaddr = sp_r_u64(r);
	uint32_t rev = sp_r_u32(r);
	uint64_t off = sp_r_u64(r);
	uint32_t clen = sp_r_u32(r), *kids, nk;
	const uint8_t *setw = sp_r_ptr(r, w->nwords * 8u);
	const uint8_t *data = sp_r_ptr(r, clen);
	struct sp_xfer_in *x;

	if (!setw || !data || source >= w->n || len == 0 ||
	    gaddr > w->gmem_size || len > w->gmem_size - gaddr || off > len ||
	    clen > len - off)
		return; /* malformed: dropped whole, never half-applied */
	x = in_find(w, xid);
	if (!x && !(x = in_start(w, xid, source, src, setw, len, gaddr, rev,
				 0)))
		return;
	if (x->state != X_STAGING || x->len != len)
		return; /* late chunk of a decided transfer */
	memcpy(x->stage + off, data, clen);
	nk = kids_of(w, x->set, source, &kids);
	for (uint32_t i = 0; i < nk; i++)
		send_chunk(w, kids[i], xid, source, len, gaddr, rev, x->set,
			   off, x->stage + off, clen, &x->refs, x);
	x->got += clen;
	in_maybe_staged(w, x);
}

/* XPUT: the whole transfer, ours alone: into global memory now.  XPOST
 * (ack 0) the same, answered by nothing. */
static void on_put(sp_world_t *w, uint32_t src, struct sp_rbuf *r, int ack)
{
	uint64_t xid = sp_r_u64(r), gaddr = sp_r_u64(r);
	uint32_t rev = sp_r_u32(r), len = sp_r_u32(r);
	const uint8_t *data = sp_r_ptr(r, len);

	if (r->bad || !data || len == 0 || (uint32_t)(xid >> 32) != src ||
	    gaddr > w->gmem_size || len > w->gmem_size - gaddr)
		return; /* malformed: dropped whole, never half-applied */
	commit_local(w, gaddr, data, len, rev);
	if (ack)
		send_up(w, src, SP_MSG_XDONE, xid, 1);
}

static struct sp_xfer_out *out_find(sp_world_t *w, uint64_t xid)
{
	for (struct sp_xfer_out *o = w->xout; o; o = o->next)
		if (o->xid == xid)
			return o;
	return NULL;
}

static void on_staged(sp_world_t *w, struct sp_rbuf *r)
{
	uint64_t xid = sp_r_u64(r);
	struct sp_xfer_out *o;
	struct sp_xfer_in *x;

	if (r->bad)
		return;
	if ((uint32_t)(xid >> 32) == w->id) {
		o = out_find(w, xid);
		if (o && o->state == X_STAGING && o->pending &&
		    --o->pending == 0)
			out_decide_commit(w, o, o->set);
		return;
	}
	x = in_find(w, xid);
	if (x && x->state == X_STAGING && x->pending_staged) {
		x->pending_staged--;
		in_maybe_staged(w, x);
	}
}

static void on_decide(sp_world_t *w, uint32_t src, struct sp_rbuf *r)
{
	uint64_t xid = sp_r_u64(r);
	uint32_t source = sp_r_u32(r);
	int commit = sp_r_u8(r);
	uint32_t gen = sp_r_u32(r), *kids, nk;
	const uint8_t *setw = sp_r_ptr(r, w->nwords * 8u);
	uint64_t *set;
	struct sp_xfer_in *x;

	if (!setw || source >= w->n)
		return;
	x = in_find(w, xid);
	if (!x) {
		/* never saw a chunk (abort before it arrived), or long gone */
		x = in_new(w, xid, source, setw);
		if (!x)
			return;
		x->state = commit ? X_COMMITTED : X_ABORTED;
	}
	set = malloc(w->nwords * sizeof(uint64_t));
	if (!set)
		return;
	for (uint32_t i = 0; i < w->nwords; i++) {
		struct sp_rbuf rr = {.p = setw + 8 * i, .len = 8};

		set[i] = sp_r_u64(&rr);
	}
	nk = kids_of(w, set, source, &kids);
	if (!commit) {
		if (x->state == X_STAGING || x->state == X_STAGED) {
			x->state = X_ABORTED;
			in_drop_stage(w, x);
		}
		for (uint32_t i = 0; i < nk; i++)
			send_decide(w, kids[i], xid, source, 0, gen, set);
		free(set);
		return;
	}
	if (x->state == X_STAGED ||
	    (x->state == X_STAGING && in_complete(x))) {
		commit_local(w, x->gaddr, x->stage, x->len, x->rev);
		x->state = X_COMMITTED;
		in_drop_stage(w, x);
	}
	if (x->state != X_COMMITTED) {
		free(set); /* commit without our data: protocol violation */
		return;
	}
	if (gen <= x->gen) {
		/* A decision of an older generation, late along a path of a
		 * tree the view replaced (or a duplicate): the newer one
		 * already set our parent and children.  Answering it would
		 * reset the count of XDONEs we owe the current generation. */
		free(set);
		return;
	}
	x->gen = gen;
	x->dparent = src;
	x->pending_done = nk;
	for (uint32_t i = 0; i < nk; i++)
		send_decide(w, kids[i], xid, source, 1, gen, set);
	if (nk == 0)
		send_up(w, src, SP_MSG_XDONE, xid, gen);
	free(set);
}

static void on_done(sp_world_t *w, struct sp_rbuf *r)
{
	uint64_t xid = sp_r_u64(r);
	uint32_t gen = sp_r_u32(r);
	struct sp_xfer_out *o;
	struct sp_xfer_in *x;

	if (r->bad)
		return;
	if ((uint32_t)(xid >> 32) == w->id) {
		o = out_find(w, xid);
		if (o && o->state == X_COMMITTING && o->gen == gen &&
		    o->pending && --o->pending == 0)
			out_finish(w, o, 0);
		return;
	}
	x = in_find(w, xid);
	if (x && x->gen == gen && x->pending_done &&
	    --x->pending_done == 0)
		send_up(w, x->dparent, SP_MSG_XDONE, xid, gen);
}

void sp_xfer_on_msg(sp_world_t *w, uint32_t src, uint8_t type,
		    struct sp_rbuf *r)
{
	switch (type) {
	case SP_MSG_XDATA:
		on_data(w, src, r);
		break;
	case SP_MSG_XRMA:
		on_rma(w, src, r);
		break;
	case SP_MSG_XSTAGED:
		on_staged(w, r);
		break;
	case SP_MSG_XDECIDE:
		on_decide(w, src, r);
		break;
	case SP_MSG_XDONE:
		on_done(w, r);
		break;
	case SP_MSG_XPUT:
	case SP_MSG_XPOST:
		on_put(w, src, r, type == SP_MSG_XPUT);
		break;
	default:
		break;
	}
}

/* ---- view changes ---------------------------------------------------------- */

void sp_xfer_on_view(sp_world_t *w)
{
	struct sp_xfer_out *o, *next;
	uint64_t *live = w->v.live->words;


	for (o = w->xout; o; o = next) {
		int lost = 0;

		next = o->next;
		if (o->state == X_DONE)
			continue;
		if (w->v.expelled) {
			/* Survivors may still commit from our arena copy
			 * (pinned): never hand its run out again. */
			if (sp_stage_owns(w, o->stage))
				o->stage = NULL;
			out_finish(w, o, -STORM_EEXPELLED);
			continue;
		}
		for (uint32_t i = 0; i < w->nwords; i++)
			if (o->set[i] & ~live[i])
				lost = 1;
		if (!lost)
			continue;
		for (uint32_t i = 0; i < w->nwords; i++)
			o->set[i] &= live[i];
		if (o->state == X_STAGING) {
			uint32_t *kids, nk = kids_of(w, o->set, w->id, &kids);

			for (uint32_t i = 0; i < nk; i++)
				send_decide(w, kids[i], o->xid, w->id, 0, 0,
					    o->set);
			out_finish(w, o, -STORM_EABORTED);
		} else {
			/* decided: finish the commit among the survivors */
			out_decide_commit(w, o, o->set);
		}
	}
}

void sp_xfer_facts(sp_world_t *w, struct sp_facts *f)
{
	for (struct sp_xfer_in *x = w->xin; x; x = x->next)
		if (x->state == X_COMMITTED &&
		    !sp_nodeset_has(w->v.live, x->source))
			sp_facts_add_xid(f, x->xid);
}

void sp_xfer_resolve(sp_world_t *w, const struct sp_facts *f)
{
	for (struct sp_xfer_in *x = w->xin; x; x = x->next) {
		int committed = 0;

		if ((x->state != X_STAGING && x->state != X_STAGED) ||
		    sp_nodeset_has(w->v.live, x->source))
			continue;
		for (uint32_t i = 0; i < f->nxids; i++)
			if (f->xids[i] == x->xid)
				committed = 1;
		if (committed && in_complete(x)) {
			commit_local(w, x->gaddr, x->stage, x->len, x->rev);
			x->state = X_COMMITTED;
		} else {
			x->state = X_ABORTED;
		}
		in_drop_stage(w, x);
	}
}

void sp_xfer_fini(sp_world_t *w)
{
	while (w->xout) {
		struct sp_xfer_out *o = w->xout;

		w->xout = o->next;
		sp_stage_free(w, o->stage, o->len);
		free(o->set);
		free(o);
	}
	while (w->xin) {
		struct sp_xfer_in *x = w->xin;

		w->xin = x->next;
		if (x->pin) {
			/* the back-end unmapped its pins in destroy() */
			x->pin = NULL;
			x->stage = NULL;
		}
		in_free(w, x);
	}
}
