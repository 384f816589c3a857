/*
 * caw.c — COMPARE-AND-WRITE over a combining tree.
 *
 * Every COMPARE-AND-WRITE is sequenced by the membership root, one at a
 * time: QUERY flows down a radix tree spanning the set (rooted at the
 * sequencer), each node evaluates its variable, VOTEs are AND-combined on
 * the way up.  If the result is true and a write was asked for, WRITE flows
 * down and WACKs come back before the next operation starts.  One sequencer
 * and one operation at a time give a single total order, so concurrent
 * writes that differ only in value leave every node with the same value.
 *
 * Sequencer (the in-flight op) — state × event:
 *   QUERY | last VOTE(gen): true+write -> WRITE; else -> RESULT, next
 *         | view drops a member of the set -> RESULT -STORM_EVIEWCHANGE
 *   WRITE | last WACK(gen) -> RESULT 1, next
 *         | view drops a member -> gen++, WRITE again over the survivors
 *   idle  | request, view not stable -> queue it
 *         | STABLE -> caw_seq = max(caw_seq, caw_seen), next
 * Participants keep per-op records only until they answer; a view change
 * drops them (the sequencer re-drives what is still needed).  If the
 * sequencer itself dies, the view's STABLE facts carry the latest write any
 * survivor applied: every node applies it if it has not, the initiator of
 * that write learns it succeeded, and other initiators resubmit.
 *
 * The sequencer starts an operation only in a stable view.  Before STABLE
 * a new sequencer knows neither the highest sequence number used by the
 * one that died (receivers would skip its writes as already applied) nor
 * whether that one's last write reached only some survivors (a query
 * would read a state that STABLE is about to change).  So requests queue
 * until STABLE, which sets caw_seq past every sequence number any survivor
 * saw and then starts the queue; a participant that gets a QUERY or WRITE
 * before its own STABLE holds it until then, for the same reason.  An
 * operation already in flight at a sequencer that stays the root is
 * re-driven at once: every write before it was its own.
 *
 * Direct compares.  Where the back-end lets a node load its peers' global
 * memory (shm: peek), the sequencer answers its own compare-only request
 * by loading the variable of every member itself: no message, no peer
 * thread woken.  It does so only when that load sees what a QUERY would:
 * no operation in flight or queued (every earlier write has been acked by
 * every member, and none can start while it holds the world lock) and,
 * in this epoch, a compare over every live node has already finished by
 * messages (so every member has applied the view's STABLE facts, as a
 * QUERY would have waited for).  A member it cannot load, or one found
 * dead, sends the request down the tree as usual.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sp_engine.h"


enum { C_QUERY = 1, C_WRITE = 2 };

struct sp_caw_req {
	struct sp_caw_req *next;
	uint64_t req;
	int done, result;
	uint64_t *set;
	uint64_t var, waddr;
	int64_t value, wval;
	int op;
	uint32_t root; /* where it was sent */
};

struct sp_caw_op {
	struct sp_caw_op *next;
	uint64_t seq, req;
	uint32_t init, parent, gen, pending;
	uint32_t troot; /* participant: root of the op's tree (the sequencer) */
	int phase, result, op;
	uint64_t *set;
	uint64_t var, waddr;
	int64_t value, wval;
};

static int cmp(int64_t x, int op, int64_t value)
{
	switch (op) {
	case SP_CMP_GE:
		return x >= value;
	case SP_CMP_LT:
		return x < value;
	case SP_CMP_EQ:
		return x == value;
	case SP_CMP_NE:
		return x != value;
	default:
		return 0;
	}
}

static int eval(sp_world_t *w, uint64_t var, int op, int64_t value)
{
	return cmp(__atomic_load_n((int64_t *)(void *)(w->gmem + var),
				   __ATOMIC_ACQUIRE),
		   op, value);
}

static int addr_ok(const sp_world_t *w, uint64_t a)
{
	return a % 8 == 0 && w->gmem_size >= 8 && a <= w->gmem_size - 8;
}

static uint32_t kids_of(sp_world_t *w, const uint64_t *set, uint32_t root,
			uint32_t *buf, uint32_t max)
{
	uint32_t n = sp_settree_children(set, w->nwords, root, w->id,
					 w->fanout, buf, max);

	return n < max ? n : max;
}

static void op_free(struct sp_caw_op *o)
{
	if (o) {
		free(o->set);
		free(o);
	}
}

static struct sp_caw_op *op_new(sp_world_t *w)
{
	struct sp_caw_op *o = calloc(1, sizeof(*o));

	if (o && !(o->set = malloc(w->nwords * sizeof(uint64_t)))) {
		free(o);
		o = NULL;
	}
	return o;
}

static void read_set(struct sp_rbuf *r, uint64_t *set, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		set[i] = sp_r_u64(r);
}

static void put_set(struct sp_wbuf *b, const uint64_t *set, uint32_t nwords)
{
	for (uint32_t i = 0; i < nwords; i++)
		sp_w_u64(b, set[i]);
}

static void apply_write(sp_world_t *w, uint64_t seq, uint32_t init,
			uint64_t req, uint64_t waddr, int64_t wval,
			const uint64_t *set)
{
	if (seq <= w->wseq_applied)
		return;
	w->wseq_applied = seq;
	if ((set[w->id / 64] >> (w->id % 64)) & 1)
		__atomic_store_n((int64_t *)(void *)(w->gmem + waddr), wval,
				 __ATOMIC_RELEASE);
	w->mywrite.wseq = seq;
	w->mywrite.winit = init;
	w->mywrite.wreq = req;
	w->mywrite.waddr = waddr;
	w->mywrite.wval = wval;
	memcpy(w->mywrite.wset, set, w->nwords * sizeof(uint64_t));
	if (seq > w->caw_seen)
		w->caw_seen = seq;
}

/* ---- initiator ------------------------------------------------------------- */

static void req_complete(sp_world_t *w, uint64_t req, int result)
{
	for (struct sp_caw_req *q = w->creq; q; q = q->next) {
		if (q->req == req && !q->done) {
			q->done = 1;
			q->result = result;
			pthread_cond_broadcast(&w->cond);
			return;
		}
	}
}

static void seq_enqueue(sp_world_t *w, struct sp_caw_op *o);

static void req_submit(sp_world_t *w, struct sp_caw_req *q)
{
	struct sp_wbuf b;
	struct sp_caw_op *o;

	q->root = w->v.root;
	if (w->v.root == w->id) {
		/* local fast path: no message to ourselves */
		o = op_new(w);
		if (!o) {
			q->done = 1;
			q->result = -ENOMEM;
			return;
		}
		o->init = w->id;
		o->req = q->req;
		memcpy(o->set, q->set, w->nwords * sizeof(uint64_t));
		o->var = q->var;
		o->op = q->op;
		o->value = q->value;
		o->waddr = q->waddr;
		o->wval = q->wval;
		seq_enqueue(w, o);
		return;
	}
	sp_msg_begin(w, &b, SP_MSG_CAW_REQ, w->v.epoch);
	sp_w_u64(&b, q->req);
	sp_w_u64(&b, q->var);
	sp_w_u8(&b, (uint8_t)q->op);
	sp_w_u64(&b, (uint64_t)q->value);
	sp_w_u64(&b, q->waddr);
	sp_w_u64(&b, (uint64_t)q->wval);
	put_set(&b, q->set, w->nwords);
	sp_msg_send(w, w->v.root, &b, NULL, 0, NULL);
}

/* 1 if every live node is in set. */
static int covers_live(const sp_world_t *w, const uint64_t *set)
{
	for (uint32_t i = 0; i < w->nwords; i++)
		if (w->v.live->words[i] & ~set[i])
			return 0;
	return 1;
}

/* A compare answered by loading every member's variable (see the top of
 * the file).  Lock held.  Returns 1, 0, or -ENOSYS: use messages. */
static int caw_direct(sp_world_t *w, const uint64_t *set, uint64_t var,
		      int op, int64_t value)
{
	const struct sp_transport_ops *ops = w->tp->ops;
	int64_t x;

	if (ops->version < SP_TRANSPORT_OPS_V3 || !ops->peek ||
	    w->v.root != w->id || !w->v.stable || w->v.expelled ||
	    w->cinflight || w->cq_head ||
	    w->caw_direct_epoch != w->v.epoch)
		return -ENOSYS;
	for (uint32_t i = 0; i < w->n; i++) {
		int rc;

		if (!((set[i / 64] >> (i % 64)) & 1))
			continue;
		if (i == w->id) {
			if (!eval(w, var, op, value))
				return 0;
			continue;
		}
		rc = ops->peek(w->tp, i, var, &x);
		if (rc == -STORM_EUNREACH)
			sp_nodeset_add(w->deferred, i); /* handled on return */
		if (rc)
			return -ENOSYS;
		if (!cmp(x, op, value))
			return 0;
	}
	return 1;
}

int sp_compare_and_write(sp_world_t *w, const sp_nodeset_t *set,
			 uint64_t var, sp_cmp_t op, int64_t value,
			 uint64_t waddr, int64_t wval, int timeout_ms)
{
	struct sp_caw_req *q, **pp;
	struct sp_wait wt;
	int rc;
	int64_t bad;

	if (!w || !set || set->capacity != w->n || sp_nodeset_count(set) == 0 ||
	    !addr_ok(w, var) || (unsigned)op > SP_CMP_NE ||
	    (waddr != SP_NO_WRITE && !addr_ok(w, waddr)))
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q || !(q->set = malloc(w->nwords * sizeof(uint64_t)))) {
		free(q);
		return -ENOMEM;
	}
	memcpy(q->set, set->words, w->nwords * sizeof(uint64_t));
	q->var = var;
	q->op = (int)op;
	q->value = value;
	q->waddr = waddr;
	q->wval = wval;
	sp_wait_init(w, &wt, timeout_ms);
	pthread_mutex_lock(&w->lock);
	rc = w->closed ? -STORM_ECLOSED : w->v.expelled ? -STORM_EEXPELLED : 0;
	for (bad = sp_nodeset_next(set, 0); !rc && bad >= 0;
	     bad = sp_nodeset_next(set, (uint32_t)bad + 1))
		if (!sp_nodeset_has(w->v.live, (uint32_t)bad))
			rc = -STORM_ENOTINVIEW;
	if (rc) {
		pthread_mutex_unlock(&w->lock);
		free(q->set);
		free(q);
		return rc;
	}
	if (waddr == SP_NO_WRITE) {
		rc = caw_direct(w, q->set, var, (int)op, value);
		if (rc != -ENOSYS) {
			pthread_mutex_unlock(&w->lock);
			free(q->set);
			free(q);
			return rc;
		}
		rc = 0; /* a member found dead is handled below */
	}
	q->req = ++w->caw_next_req;
	q->next = w->creq;
	w->creq = q;
	req_submit(w, q);
	sp_deferred_run(w);
	while (!q->done && !w->closed) {
		if (sp_wait(w, &wt) ==
		    -ETIMEDOUT)
			break;
	}
	rc = q->done ? q->result : w->closed ? -STORM_ECLOSED : -ETIMEDOUT;
	for (pp = &w->creq; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	free(q->set);
	free(q);
	return rc;
}

/* ---- sequencer -------------------------------------------------------------- */

static void send_down(sp_world_t *w, uint32_t dst, struct sp_caw_op *o)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, o->phase == C_QUERY ? SP_MSG_CAW_QUERY :
						  SP_MSG_CAW_WRITE,
		     w->v.epoch);
	sp_w_u64(&b, o->seq);
	sp_w_u32(&b, o->gen);
	sp_w_u32(&b, w->id); /* the tree's root: this sequencer */
	sp_w_u32(&b, o->init);
	sp_w_u64(&b, o->req);
	sp_w_u64(&b, o->phase == C_QUERY ? o->var : o->waddr);
	sp_w_u8(&b, (uint8_t)o->op);
	sp_w_u64(&b, (uint64_t)(o->phase == C_QUERY ? o->value : o->wval));
	put_set(&b, o->set, w->nwords);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

static void seq_result(sp_world_t *w, struct sp_caw_op *o, int result)
{
	if (result >= 0 && covers_live(w, o->set))
		w->caw_direct_epoch = w->v.epoch;
	if (o->init == w->id) {
		req_complete(w, o->req, result);
	} else {
		struct sp_wbuf b;

		sp_msg_begin(w, &b, SP_MSG_CAW_RESULT, w->v.epoch);
		sp_w_u64(&b, o->req);
		sp_w_u32(&b, (uint32_t)result);
		sp_msg_send(w, o->init, &b, NULL, 0, NULL);
	}
}

static void seq_start_next(sp_world_t *w);

/* Send the current phase of the in-flight op down its tree. */
static void seq_drive(sp_world_t *w, struct sp_caw_op *o)
{
	uint32_t kids[1024], nk;

	o->gen++;
	nk = kids_of(w, o->set, w->id, kids, 1024);
	o->pending = nk;
	for (uint32_t i = 0; i < nk; i++)
		send_down(w, kids[i], o);
}

static void seq_finish(sp_world_t *w, struct sp_caw_op *o, int result)
{
	seq_result(w, o, result);
	w->cinflight = NULL;
	op_free(o);
	seq_start_next(w);
}

static void seq_subtree_done(sp_world_t *w, struct sp_caw_op *o)
{
	if (o->phase == C_QUERY && o->result && o->waddr != SP_NO_WRITE) {
		o->phase = C_WRITE;
		apply_write(w, o->seq, o->init, o->req, o->waddr, o->wval,
			    o->set);
		seq_drive(w, o);
		if (o->pending)
			return;
	}
	seq_finish(w, o, o->result);
}

static void seq_start_next(sp_world_t *w)
{
	/* held until the view is stable: see the top of this file */
	while (!w->cinflight && w->cq_head && w->v.stable) {
		struct sp_caw_op *o = w->cq_head;
		int missing = 0;

		w->cq_head = o->next;
		if (!w->cq_head)
			w->cq_tail = NULL;
		o->next = NULL;
		for (uint32_t i = 0; i < w->nwords; i++)
			if (o->set[i] & ~w->v.live->words[i])
				missing = 1;
		if (missing) {
			seq_result(w, o, -STORM_ENOTINVIEW);
			op_free(o);
			continue;
		}
		w->cinflight = o;
		o->seq = ++w->caw_seq;
		if (o->seq > w->caw_seen)
			w->caw_seen = o->seq;
		o->phase = C_QUERY;
		o->result = ((o->set[w->id / 64] >> (w->id % 64)) & 1) ?
				    eval(w, o->var, o->op, o->value) :
				    1;
		seq_drive(w, o);
		if (o->pending == 0)
			seq_subtree_done(w, o);
	}
}

static void seq_enqueue(sp_world_t *w, struct sp_caw_op *o)
{
	o->next = NULL;
	if (w->cq_tail)
		w->cq_tail->next = o;
	else
		w->cq_head = o;
	w->cq_tail = o;
	seq_start_next(w);
}

/* ---- handlers --------------------------------------------------------------- */

static void on_req(sp_world_t *w, uint32_t src, struct sp_rbuf *r)
{
	struct sp_caw_op *o = op_new(w);

	if (!o)
		return;
	o->init = src;
	o->req = sp_r_u64(r);
	o->var = sp_r_u64(r);
	o->op = sp_r_u8(r);
	o->value = (int64_t)sp_r_u64(r);
	o->waddr = sp_r_u64(r);
	o->wval = (int64_t)sp_r_u64(r);
	read_set(r, o->set, w->nwords);
	if (r->bad || !addr_ok(w, o->var) || o->op > SP_CMP_NE ||
	    (o->waddr != SP_NO_WRITE && !addr_ok(w, o->waddr))) {
		op_free(o);
		return;
	}
	if (w->v.root != w->id) {
		/* stale root guess: the initiator resubmits after STABLE */
		op_free(o);
		return;
	}
	seq_enqueue(w, o);
}

static struct sp_caw_op *part_find(sp_world_t *w, uint64_t seq)
{
	for (struct sp_caw_op *o = w->cpart; o; o = o->next)
		if (o->seq == seq)
			return o;
	return NULL;
}

static void part_unlink(sp_world_t *w, struct sp_caw_op *o)
{
	for (struct sp_caw_op **pp = &w->cpart; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			return;
		}
	}
}

static void send_up(sp_world_t *w, uint32_t dst, uint8_t type, uint64_t seq,
		    uint32_t gen, int result)
{
	struct sp_wbuf b;

	sp_msg_begin(w, &b, type, w->v.epoch);
	sp_w_u64(&b, seq);
	sp_w_u32(&b, gen);
	sp_w_u8(&b, (uint8_t)result);
	sp_msg_send(w, dst, &b, NULL, 0, NULL);
}

/* Take part in a QUERY or WRITE: evaluate or apply, forward it down the
 * op's tree, and answer at once if this node is a leaf of it. */
static void part_start(sp_world_t *w, struct sp_caw_op *o)
{
	uint8_t type = o->phase == C_QUERY ? SP_MSG_CAW_QUERY : SP_MSG_CAW_WRITE;
	uint32_t kids[1024], nk;

	if (o->phase == C_QUERY) {
		o->result = eval(w, o->var, o->op, o->value);
	} else {
		apply_write(w, o->seq, o->init, o->req, o->var, o->value,
			    o->set);
		o->result = 1;
	}
	nk = kids_of(w, o->set, o->troot, kids, 1024);
	o->pending = nk;
	if (nk == 0) {
		send_up(w, o->parent, o->phase == C_QUERY ? SP_MSG_CAW_VOTE :
							    SP_MSG_CAW_WACK,
			o->seq, o->gen, o->result);
		op_free(o);
		return;
	}
	/* forward the same message unchanged to our children */
	for (uint32_t i = 0; i < nk; i++) {
		struct sp_wbuf b;

		sp_msg_begin(w, &b, type, w->v.epoch);
		sp_w_u64(&b, o->seq);
		sp_w_u32(&b, o->gen);
		sp_w_u32(&b, o->troot);
		sp_w_u32(&b, o->init);
		sp_w_u64(&b, o->req);
		sp_w_u64(&b, o->var);
		sp_w_u8(&b, (uint8_t)o->op);
		sp_w_u64(&b, (uint64_t)o->value);
		put_set(&b, o->set, w->nwords);
		sp_msg_send(w, kids[i], &b, NULL, 0, NULL);
	}
	o->next = w->cpart;
	w->cpart = o;
}

static void on_down(sp_world_t *w, uint32_t src, uint8_t type,
		    struct sp_rbuf *r)
{
	uint64_t seq = sp_r_u64(r);
	uint32_t gen = sp_r_u32(r), root = sp_r_u32(r), init = sp_r_u32(r);
	uint64_t req = sp_r_u64(r), addr = sp_r_u64(r);
	int op = sp_r_u8(r);
	int64_t value = (int64_t)sp_r_u64(r);
	struct sp_caw_op *o, **pp;

	if (r->bad || root >= w->n || !addr_ok(w, addr) ||
	    (type == SP_MSG_CAW_QUERY && op > SP_CMP_NE))
		return;
	o = op_new(w);
	if (!o)
		return;
	read_set(r, o->set, w->nwords);
	if (r->bad) {
		op_free(o);
		return;
	}
	if (seq > w->caw_seen)
		w->caw_seen = seq;
	o->seq = seq;
	o->gen = gen;
	o->parent = src;
	o->troot = root;
	o->phase = type == SP_MSG_CAW_QUERY ? C_QUERY : C_WRITE;
	o->var = addr; /* the compared variable, or the one written */
	o->op = op;
	o->value = value; /* the compared value, or the one written */
	o->init = init;
	o->req = req;
	if (!w->v.stable) {
		/* A sequencer runs an op only once its view is stable, but
		 * our STABLE may still be on its way down another path: it
		 * may carry a write of a sequencer that died, which must be
		 * applied before we evaluate or apply anything newer (or
		 * our high-water mark would skip it).  Hold the op until
		 * then, in arrival order; a view change drops it (the
		 * sequencer re-drives). */
		for (pp = &w->cdefer; *pp; pp = &(*pp)->next)
			;
		*pp = o;
		return;
	}
	part_start(w, o);
}

static void on_up(sp_world_t *w, uint8_t type, struct sp_rbuf *r)
{
	uint64_t seq = sp_r_u64(r);
	uint32_t gen = sp_r_u32(r);
	int res = sp_r_u8(r);
	int phase = type == SP_MSG_CAW_VOTE ? C_QUERY : C_WRITE;
	struct sp_caw_op *o = w->cinflight;

	if (r->bad)
		return;
	if (o && o->seq == seq && w->v.root == w->id) {
		if (o->phase != phase || o->gen != gen || !o->pending)
			return;
		o->result &= res;
		if (--o->pending == 0)
			seq_subtree_done(w, o);
		return;
	}
	o = part_find(w, seq);
	if (!o || o->phase != phase || o->gen != gen || !o->pending)
		return;
	o->result &= res;
	if (--o->pending == 0) {
		send_up(w, o->parent, type, seq, gen, o->result);
		part_unlink(w, o);
		op_free(o);
	}
}

static void on_result(sp_world_t *w, struct sp_rbuf *r)
{
	uint64_t req = sp_r_u64(r);
	int32_t res = (int32_t)sp_r_u32(r);

	if (!r->bad)
		req_complete(w, req, res);
}

void sp_caw_on_msg(sp_world_t *w, uint32_t src, uint8_t type,
		   struct sp_rbuf *r)
{
	switch (type) {
	case SP_MSG_CAW_REQ:
		on_req(w, src, r);
		break;
	case SP_MSG_CAW_QUERY:
	case SP_MSG_CAW_WRITE:
		on_down(w, src, type, r);
		break;
	case SP_MSG_CAW_VOTE:
	case SP_MSG_CAW_WACK:
		on_up(w, type, r);
		break;
	case SP_MSG_CAW_RESULT:
		on_result(w, r);
		break;
	default:
		break;
	}
}

/* ---- view changes ----------------------------------------------------------- */

void sp_caw_on_view(sp_world_t *w)
{
	struct sp_caw_op *o = w->cinflight;

	if (w->v.expelled) {
		/* no sequencer will ever answer a node outside the view */
		for (struct sp_caw_req *q = w->creq; q; q = q->next)
			if (!q->done)
				req_complete(w, q->req, -STORM_EEXPELLED);
	}

	/* participants' partial combinations (and ops held for STABLE) are
	 * void in a new tree */
	while (w->cpart) {
		struct sp_caw_op *p = w->cpart;

		w->cpart = p->next;
		op_free(p);
	}
	while (w->cdefer) {
		struct sp_caw_op *p = w->cdefer;

		w->cdefer = p->next;
		op_free(p);
	}
	if (w->v.root != w->id) {
		/* no longer (or never) the sequencer: queued requests are
		 * resubmitted by their initiators after STABLE */
		op_free(w->cinflight);
		w->cinflight = NULL;
		while (w->cq_head) {
			struct sp_caw_op *q = w->cq_head;

			w->cq_head = q->next;
			op_free(q);
		}
		w->cq_tail = NULL;
		return;
	}
	if (!o)
		return;
	for (uint32_t i = 0; i < w->nwords; i++) {
		if (o->set[i] & ~w->v.live->words[i]) {
			if (o->phase == C_QUERY) {
				seq_finish(w, o, -STORM_EVIEWCHANGE);
				return;
			}
			break;
		}
	}
	for (uint32_t i = 0; i < w->nwords; i++)
		o->set[i] &= w->v.live->words[i];
	/* re-drive the current phase over the new tree */
	if (o->phase == C_QUERY)
		o->result = ((o->set[w->id / 64] >> (w->id % 64)) & 1) ?
				    eval(w, o->var, o->op, o->value) :
				    1;
	seq_drive(w, o);
	if (o->pending == 0)
		seq_subtree_done(w, o);
}

void sp_caw_facts(sp_world_t *w, struct sp_facts *f)
{
	if (w->caw_seen > f->caw_max_seq)
		f->caw_max_seq = w->caw_seen;
	if (w->mywrite.wseq > f->wseq) {
		f->wseq = w->mywrite.wseq;
		f->winit = w->mywrite.winit;
		f->wreq = w->mywrite.wreq;
		f->waddr = w->mywrite.waddr;
		f->wval = w->mywrite.wval;
		memcpy(f->wset, w->mywrite.wset, w->nwords * sizeof(uint64_t));
	}
}

void sp_caw_on_stable(sp_world_t *w, const struct sp_facts *f)
{
	if (f->caw_max_seq > w->caw_seen)
		w->caw_seen = f->caw_max_seq;
	if (f->wseq) {
		apply_write(w, f->wseq, f->winit, f->wreq, f->waddr, f->wval,
			    f->wset);
		if (f->winit == w->id)
			req_complete(w, f->wreq, 1);
	}
	/* a new sequencer numbers past everything any survivor saw, so no
	 * receiver takes its writes for ones already applied */
	if (w->v.root == w->id && w->caw_seq < w->caw_seen)
		w->caw_seq = w->caw_seen;
	/* requests sent to a sequencer that is gone: send them again */
	for (struct sp_caw_req *q = w->creq; q; q = q->next)
		if (!q->done && !sp_nodeset_has(w->v.live, q->root))
			req_submit(w, q);
	/* ops that reached us before our STABLE, in arrival order */
	while (w->cdefer) {
		struct sp_caw_op *o = w->cdefer;

		w->cdefer = o->next;
		o->next = NULL;
		part_start(w, o);
	}
	if (w->v.root == w->id)
		seq_start_next(w); /* the queue held since the view changed */
}

void sp_caw_fini(sp_world_t *w)
{
	op_free(w->cinflight);
	w->cinflight = NULL;
	while (w->cq_head) {
		struct sp_caw_op *q = w->cq_head;

		w->cq_head = q->next;
		op_free(q);
	}
	while (w->cpart) {
		struct sp_caw_op *p = w->cpart;

		w->cpart = p->next;
		op_free(p);
	}
	while (w->cdefer) {
		struct sp_caw_op *p = w->cdefer;

		w->cdefer = p->next;
		op_free(p);
	}
}
