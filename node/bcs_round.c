/*
 * bcs_round.c — a BCS-MPI job's rounds (docs/bcsmpi.md §3, §6).
 *
 * At a slice boundary each node of a job builds its section of the
 * job's next round: its ranks' descriptors, taken from their rings
 * (descriptor exchange), its ranks' states for the matcher, bytes of
 * messages matched earlier whose sender is here, and its part of the
 * collective under way.  The section goes to the job's other nodes
 * (bcs_xchg.h); once every node's section of the round is here, each
 * node applies them all in the order of their node ids: the same
 * descriptors in the same order into the same matcher, so every node
 * makes the same matches (message scheduling), then moves what
 * concerns its own ranks (point-to-point) and runs the collectives.
 * A job on one node applies its own section at once, so a round is a
 * slice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <storm_bcs.h>

#include "bcs_int.h"
#include "bcs_ring.h"
#include "bcs_wire.h"

#define TAKE_MAX BCS_RING_SLOTS /* descriptors taken per rank and round */
#define STATE_ROOM (sizeof(struct bcs_item) + sizeof(struct bcs_w_state))

static void take_abort(struct bcs_job *j, uint32_t i, const struct bcs_desc *d)
{
	char msg[BCS_REASON_MAX + 1] = "";

	if (bcs_vm_copy(j->pid[i], d->addr, msg, d->bytes, 0))
		msg[0] = '\0';
	msg[d->bytes < BCS_REASON_MAX ? d->bytes : BCS_REASON_MAX] = '\0';
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 32)
			*p = ' ';
	if (d->flags & 1) /* an error under MPI_ERRORS_ARE_FATAL */
		bcs_job_fail(j, "rank %d: %s", j->world_of[i], msg);
	else
		bcs_job_fail(j, "rank %d called MPI_Abort (error code %u)%s%s",
			     j->world_of[i], d->op, msg[0] ? ": " : "", msg);
}

static void finish(struct bcs_job *j, struct bcs_xfer *x);

/* A send of area si completes: its buffer is the rank's again. */
static void send_done(struct bcs_job *j, uint32_t si, uint64_t req)
{
	struct bcs_done ds = { .req = req };

	bcs_complete(j, si, &ds);
	if (j->pending[si])
		j->pending[si]--;
}

/* Area i pulled the bytes of a message (or could not: the engine moves
 * them itself this round).  The receive completed in the rank; the
 * send completes now. */
static void pulled(struct bcs_job *j, uint32_t i, const struct bcs_desc *d)
{
	struct bcs_xfer **pp, *x;

	for (pp = &j->pulls; *pp && (*pp)->match != d->addr; pp = &(*pp)->next)
		;
	if (!(x = *pp) || j->area_of[x->r->dst] != i) {
		bcs_job_fail(j, "rank %d: a pull the engine did not ask for "
			     "(%llu)", j->world_of[i],
			     (unsigned long long)d->addr);
		return;
	}
	*pp = x->next;
	if (d->flags & BCS_F_PULL_FAILED) {
		x->next = NULL;
		*j->xtail = x;
		j->xtail = &x->next;
		return;
	}
	if (j->incoming[i])
		j->incoming[i]--;
	send_done(j, j->area_of[x->s->src], x->s->req);
	bcs_drop_pair(NULL, x->s, x->r);
	free(x);
}

/* The bytes a descriptor carries into the section (eager data, a
 * communicator's group), read now: the rank reuses its slot once the
 * descriptor is taken.  *buf is the slot or the engine's copy. */
static int desc_bytes(struct bcs_job *j, uint32_t i, uint64_t slot,
		      const struct bcs_desc *d, const void **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	if (d->kind == BCS_D_SEND && (d->flags & BCS_F_EAGER)) {
		*buf = bcs_job_eager(j, i, (uint32_t)(slot % BCS_RING_SLOTS));
		*len = d->bytes;
	} else if (d->kind == BCS_D_COMM) {
		*len = (size_t)d->bytes;
		if (d->flags & BCS_F_EAGER) {
			*buf = bcs_job_eager(j, i,
					    (uint32_t)(slot % BCS_RING_SLOTS));
		} else {
			int rc;

			if (*len > NM_BCS_SLICE_BYTES)
				return -E2BIG;
			rc = bcs_vm_copy(j->pid[i], d->addr, j->e->bounce, *len,
					 0);
			if (rc) {
				bcs_job_fail(j, "rank %d: communicator group "
					     "at %#llx: %s", j->world_of[i],
					     (unsigned long long)d->addr,
					     strerror(-rc));
				return rc;
			}
			*buf = j->e->bounce;
		}
	}
	return 0;
}

/* Area i's state and what it posted since the last round, into the
 * section (up to cap bytes; what does not fit waits in its ring). */
/* Whether area i has BCS_LATE_MAX completions waiting for room in its
 * done ring: it takes no more descriptors until it reads them (the
 * library does while it waits for room to post). */
static int late_full(const struct bcs_job *j, uint32_t i)
{
	uint32_t n = 0;

	for (const struct bcs_late *l = j->late[i]; l && n < BCS_LATE_MAX;
	     l = l->next)
		n++;
	return n >= BCS_LATE_MAX;
}

/* What this node may add to the job's unmatched descriptors and eager
 * bytes in a round: its share of what the bound leaves (every node
 * adds its own in the same round). */
static uint64_t share(uint64_t bound, uint64_t now, uint32_t nnodes)
{
	return now + (bound > now ? (bound - now) / nnodes : 0);
}

static void take(struct bcs_job *j, uint32_t i, uint8_t *sec, size_t cap,
		 size_t *len, uint64_t *nheld, uint64_t *held)
{
	struct bcs_area *a = bcs_job_area(j, i);
	struct bcs_desc d[TAKE_MAX];
	struct bcs_w_state st = { .rank = j->world_of[i] };
	uint32_t n = 0, polls;
	uint64_t dt;
	char why[256];
	int full;

	/* the rank's state first, then its descriptors: a send posted
	 * after the clock was read has a later clock (the library writes
	 * the descriptor, then the clock) */
	polls = __atomic_load_n(&a->polls, __ATOMIC_RELAXED);
	if (polls != j->polls[i])
		st.flags |= BCS_W_POLLED;
	j->polls[i] = polls;
	/* done_tail before blocked: the rank clears blocked before it
	 * takes a completion, so a tail that moved shows here */
	dt = __atomic_load_n(&a->done_tail, __ATOMIC_ACQUIRE);
	st.clock = __atomic_load_n(&a->clock, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&a->blocked, __ATOMIC_ACQUIRE) &&
	    dt == a->done_head && !j->late[i] && !j->incoming[i])
		st.flags |= BCS_W_BLOCKED; /* else completions it has not
					    * seen, or on their way */
	if (cap < *len + STATE_ROOM)
		return; /* no room for even its state: next round */
	cap -= STATE_ROOM;
	if (!(j->gone[i] && j->pid[i] <= 0) && !late_full(j, i)) {
		if (bcs_ring_take(a, j->tail[i], d, TAKE_MAX, &n, why,
				  sizeof(why))) {
			bcs_job_fail(j, "rank %d: %s (its segment is corrupt)",
				     j->world_of[i], why);
			return;
		}
	}
	full = n == BCS_RING_SLOTS; /* the rank may wait for room */
	for (uint32_t k = 0; k < n && !j->failed; k++) {
		uint64_t slot = j->tail[i] + k;
		int p2p = d[k].kind == BCS_D_SEND || d[k].kind == BCS_D_RECV ||
			  d[k].kind == BCS_D_PROBE;
		struct bcs_w_desc wd = { .rank = j->world_of[i], .d = d[k] };
		const void *bytes;
		size_t nb;

		if (bcs_desc_check(&d[k], j->size, why, sizeof(why))) {
			bcs_job_fail(j, "rank %d: %s (its segment is corrupt)",
				     j->world_of[i], why);
			return;
		}
		if (j->gone[i]) {
			bcs_job_fail(j, "rank %d posted after MPI_Finalize",
				     j->world_of[i]);
			return;
		}
		/* what the engines keep for the job is bounded: past the
		 * bound the rest stays in the rank's ring (it waits when
		 * the ring is full), never in root's memory */
		if (p2p && (*nheld >= share(NM_BCS_HELD_DESCS, j->nheld,
					    j->nnodes) ||
			    ((d[k].flags & BCS_F_EAGER) &&
			     *held + d[k].bytes > share(NM_BCS_HELD_BYTES,
							 j->held,
							 j->nnodes)))) {
			n = k;
			break;
		}
		if (d[k].kind == BCS_D_ABORT) {
			take_abort(j, i, &d[k]);
			return;
		}
		if (d[k].kind == BCS_D_PULLED) {
			pulled(j, i, &d[k]);
			continue;
		}
		if (desc_bytes(j, i, slot, &d[k], &bytes, &nb))
			return;
		if (*len > cap || bcs_wire_size(BCS_W_DESC, nb) > cap - *len) {
			n = k; /* the section is full: the rest next round */
			break;
		}
		switch (d[k].kind) {
		case BCS_D_SEND:
			wd.seq = ++j->seq[i];
			if (!(d[k].flags & BCS_F_EAGER) ||
			    (d[k].flags & BCS_F_SYNC))
				j->pending[i]++; /* until its bytes moved */
			++*nheld;
			if (d[k].flags & BCS_F_EAGER)
				*held += d[k].bytes;
			break;
		case BCS_D_RECV:
		case BCS_D_PROBE:
			wd.seq = ++j->rseq[i];
			++*nheld;
			break;
		case BCS_D_COLL:
			j->pending[i]++;
			break;
		case BCS_D_FINALIZE:
			j->gone[i] = 1;
			break;
		}
		bcs_wire_put(sec, cap, len, BCS_W_DESC, &wd, bytes, nb);
	}
	j->tail[i] += n;
	__atomic_store_n(&a->post_tail, j->tail[i], __ATOMIC_RELEASE);
	if (full || n)
		bcs_wake(a); /* room in its ring: a rank may be waiting */
	if (j->gone[i])
		st.flags |= BCS_W_GONE;
	st.pending = j->pending[i];
	st.sent = j->seq[i];
	bcs_wire_put(sec, cap + STATE_ROOM, len, BCS_W_STATE, &st, NULL, 0);
}

/* Bytes of messages from ranks here to ranks of node peer, into its
 * copy of the section (up to cap).  A send whose last bytes go
 * completes: its buffer is the rank's again. */
static void ship(struct bcs_job *j, uint32_t peer, uint8_t *sec, size_t cap,
		 size_t *len)
{
	const size_t item = sizeof(struct bcs_item) + sizeof(struct bcs_w_data);

	for (struct bcs_xfer **pp = &j->out; *pp && !j->failed;) {
		struct bcs_xfer *x = *pp;
		struct bcs_w_data wd = { .match = x->match, .off = x->done };
		uint32_t si = j->area_of[x->s->src];
		uint64_t n = x->len - x->done;
		int rc;

		if (x->peer != peer) {
			pp = &x->next;
			continue;
		}
		if (*len + item + 64 > cap)
			return;
		if (n > cap - *len - item)
			n = (cap - *len - item) & ~(uint64_t)7;
		/* the bytes straight from the rank into the section */
		bcs_wire_put(sec, cap, len, BCS_W_DATA, &wd, NULL, n);
		rc = bcs_vm_copy(j->pid[si], x->s->addr + x->done,
				 sec + *len - ((n + 7) & ~(uint64_t)7), n, 0);
		if (rc) {
			bcs_job_fail(j, "message from rank %d to rank %d (tag "
				     "%d, %llu bytes): %s", x->s->src,
				     x->r->dst, x->s->tag,
				     (unsigned long long)x->s->bytes,
				     rc == -EFAULT ? "a buffer is not mapped "
				     "in its rank" : strerror(-rc));
			return;
		}
		x->done += n;
		if (x->done < x->len)
			return; /* the record is full */
		*pp = x->next;
		send_done(j, si, x->s->req);
		bcs_drop_pair(NULL, x->s, x->r);
		free(x);
	}
}

static struct bcs_sect *sect_of(struct bcs_job *j, uint32_t k, uint64_t round)
{
	return &j->sect[2 * (size_t)k + round % 2];
}

static int sect_store(struct bcs_sect *s, const uint8_t *data, size_t len)
{
	if (s->cap < len) {
		uint8_t *p = realloc(s->data, len ? len : 1);

		if (!p)
			return -ENOMEM;
		s->data = p;
		s->cap = len;
	}
	memcpy(s->data, data, len);
	s->len = len;
	s->have = 1;
	return 0;
}

/* Our section of the next round, sent to the job's other nodes: 1 if
 * built, 0 if it waits (a record still owed, no room). */
/* What the ranks here show the engine, folded: descriptors posted, the
 * clock, a wait, completions taken, polls, a start or an exit.  Read
 * before a section takes them, so what changes meanwhile shows at the
 * next slice; equal at two slices, nothing of it changed (short of a
 * collision, which the quiet bound covers). */
static uint64_t digest(const struct bcs_job *j)
{
	uint64_t h = 1469598103934665603ull;

	for (uint32_t i = 0; i < j->nlocal; i++) {
		const struct bcs_area *a = bcs_job_area(j, i);
		uint64_t v[6] = {
			__atomic_load_n(&a->post_head, __ATOMIC_ACQUIRE),
			__atomic_load_n(&a->clock, __ATOMIC_ACQUIRE),
			__atomic_load_n(&a->blocked, __ATOMIC_ACQUIRE),
			__atomic_load_n(&a->done_tail, __ATOMIC_ACQUIRE),
			__atomic_load_n(&a->polls, __ATOMIC_RELAXED),
			(uint64_t)j->gone[i] << 1 | (j->pid[i] > 0),
		};

		for (int k = 0; k < 6; k++)
			h = (h ^ v[k]) * 1099511628211ull;
	}
	return h;
}

static int build(struct nm_bcs *e, struct bcs_job *j)
{
	uint64_t r = j->round + 1;
	size_t cap = NM_BCS_SECT_LOCAL, len = 0, common, need;
	uint64_t nheld = j->nheld, held = j->held;

	/* held at a checkpoint's cut: nothing of the next round yet */
	if (sect_of(j, j->me, r)->have || j->failed || j->stopped ||
	    !j->seg || j->cut)
		return 0;
	j->seen_digest = digest(j);
	j->quiet = 0;
	for (uint32_t k = 0; k < j->nnodes; k++) {
		size_t room;

		if (k == j->me)
			continue;
		if (!bcs_xchg_ready(&e->x, j->nodes[k]))
			return 0;
		room = bcs_xchg_room(&e->x, j->nodes[k]);
		if (room < cap)
			cap = room;
	}
	need = bcs_coll_need(j);
	if (cap < need + 4096)
		return 0; /* a full record: next boundary */
	/* the states of every rank here, at least, after the chunk */
	if (cap - need < 4096 + (size_t)j->nlocal * 64)
		return 0;
	if (bcs_coll_build(e, j, e->sbuf, cap, &len) ||
	    bcs_cut_request(j, e->sbuf, cap, &len))
		return 0;
	/* a quarter of the room stays for bytes of matched messages */
	common = j->out ? cap - cap / 4 : cap;
	for (uint32_t i = 0; i < j->nlocal && !j->failed; i++)
		take(j, i, e->sbuf, common, &len, &nheld, &held);
	if (j->failed)
		return 0;
	if (sect_store(sect_of(j, j->me, r), e->sbuf, len)) {
		bcs_job_fail(j, "out of memory for a round");
		return 0;
	}
	for (uint32_t k = 0; k < j->nnodes; k++) {
		size_t plen = len, room;

		if (k == j->me)
			continue;
		room = bcs_xchg_room(&e->x, j->nodes[k]);
		memcpy(e->pbuf, e->sbuf, len);
		ship(j, j->nodes[k], e->pbuf, room, &plen);
		if (bcs_xchg_put(&e->x, j->nodes[k], j->id, j->inc, r, e->pbuf,
				 plen)) {
			bcs_job_fail(j, "round %llu: no room for the section "
				     "to node %s",
				     (unsigned long long)r,
				     bcs_node_name(e, j->nodes[k]));
			return 0;
		}
	}
	return 1;
}

/* ---- applying a round: every node's section, in node order ------------ */

static void on_match(void *ctx, struct bcs_recv *r, struct bcs_msg *s)
{
	struct bcs_job *j = ctx;
	int here_r = bcs_local(j, r->dst), here_s = bcs_local(j, s->src);
	struct bcs_xfer *x;

	bcs_trace_match(j, r, s);
	/* the receive leaves the engines' keeping, and so does the send
	 * (its bytes move now; a probe's send stays) */
	j->nheld -= j->nheld ? 1 : 0;
	if (!r->probe) {
		j->nheld -= j->nheld ? 1 : 0;
		if (s->flags & BCS_F_EAGER)
			j->held -= j->held >= s->bytes ? s->bytes : j->held;
	}
	if (r->probe) {
		struct bcs_done d = { .req = r->req, .source = s->src,
				      .tag = s->tag, .bytes = s->bytes,
				      .clock = s->clock };

		if (here_r)
			bcs_complete(j, j->area_of[r->dst], &d);
		free(r);
		return;
	}
	/* a synchronous send whose bytes went with it (eager) completes
	 * once matched: on its own node when the receive is elsewhere */
	if (here_s && !here_r && (s->flags & BCS_F_EAGER)) {
		if (s->flags & BCS_F_SYNC)
			send_done(j, j->area_of[s->src], s->req);
		bcs_drop_pair(NULL, s, r);
		return;
	}
	if (!here_r && !here_s) {
		bcs_drop_pair(NULL, s, r);
		return;
	}
	if (!(x = calloc(1, sizeof(*x)))) {
		bcs_job_fail(j, "out of memory for a transfer");
		bcs_drop_pair(NULL, s, r);
		return;
	}
	x->r = r;
	x->s = s;
	x->match = j->m.matched;
	x->len = s->bytes < r->cap ? s->bytes : r->cap;
	if (here_r)
		j->incoming[j->area_of[r->dst]]++;
	if (here_r && here_s && !(s->flags & BCS_F_EAGER) && x->len &&
	    j->pid[j->area_of[s->src]] > 0) {
		/* one copy, by the receiver (it waits anyway): it reads the
		 * sender's memory with its own rights, then says so */
		struct bcs_done d = { .req = r->req, .status = BCS_PULL,
				      .source = s->src, .tag = s->tag,
				      .bytes = s->bytes, .clock = s->clock,
				      .pull = x->match, .src_addr = s->addr,
				      .dst_addr = r->addr, .len = x->len,
				      .src_pid = j->pid[j->area_of[s->src]],
				      .src_area = j->area_of[s->src],
				      .notice = (uint32_t)(x->match %
							   BCS_RING_SLOTS),
				      .src_req = s->req };

		x->peer = j->e->self;
		x->next = j->pulls;
		j->pulls = x;
		bcs_complete(j, j->area_of[r->dst], &d);
	} else if (here_r && (here_s || (s->flags & BCS_F_EAGER))) {
		x->peer = j->e->self;
		*j->xtail = x; /* moved here, this round */
		j->xtail = &x->next;
	} else if (here_s) {
		struct bcs_xfer **pp;

		x->peer = j->node_of[r->dst];
		for (pp = &j->out; *pp; pp = &(*pp)->next)
			;
		*pp = x; /* shipped from the next round on */
	} else {
		x->peer = j->node_of[s->src];
		x->next = j->in; /* its bytes come in later rounds */
		j->in = x;
	}
}

/* The receiving rank's completion; the sender's too if it is here. */
static void finish(struct bcs_job *j, struct bcs_xfer *x)
{
	struct bcs_done dr = { .req = x->r->req, .source = x->s->src,
			       .tag = x->s->tag, .bytes = x->len,
			       .clock = x->s->clock,
			       .status = x->s->bytes > x->r->cap ?
					 BCS_E_TRUNCATE : BCS_OK };
	uint32_t ri = j->area_of[x->r->dst];

	bcs_complete(j, ri, &dr);
	if (j->incoming[ri])
		j->incoming[ri]--;
	if (bcs_local(j, x->s->src) &&
	    (!(x->s->flags & BCS_F_EAGER) || (x->s->flags & BCS_F_SYNC)))
		send_done(j, j->area_of[x->s->src], x->s->req);
	bcs_drop_pair(NULL, x->s, x->r);
	free(x);
}

/* Move up to *budget bytes of x (both ends here, or eager bytes held
 * here); 1 once all are moved. */
static int move(struct nm_bcs *e, struct bcs_job *j, struct bcs_xfer *x,
		uint64_t *budget)
{
	uint32_t ri = j->area_of[x->r->dst];
	int rc = 0;

	while (x->done < x->len && *budget) {
		uint64_t n = x->len - x->done;

		if (n > *budget)
			n = *budget;
		if (n > NM_BCS_SLICE_BYTES)
			n = NM_BCS_SLICE_BYTES;
		if (x->s->eager)
			rc = bcs_vm_copy(j->pid[ri], x->r->addr + x->done,
					 x->s->eager + x->done, n, 1);
		else if (!(rc = bcs_vm_copy(j->pid[j->area_of[x->s->src]],
					    x->s->addr + x->done, e->bounce, n,
					    0)))
			rc = bcs_vm_copy(j->pid[ri], x->r->addr + x->done,
					 e->bounce, n, 1);
		if (rc) {
			bcs_job_fail(j, "message from rank %d to rank %d (tag "
				     "%d, %llu bytes): %s", x->s->src,
				     x->r->dst, x->s->tag,
				     (unsigned long long)x->s->bytes,
				     rc == -EFAULT ? "a buffer is not mapped "
				     "in its rank" : strerror(-rc));
			return 0;
		}
		x->done += n;
		*budget -= n;
	}
	return x->done == x->len;
}

static void transfers(struct nm_bcs *e, struct bcs_job *j)
{
	uint64_t budget = NM_BCS_SLICE_BYTES;

	while (j->xfers && !j->failed) {
		struct bcs_xfer *x = j->xfers;

		if (!move(e, j, x, &budget))
			return; /* the rest next round */
		j->xfers = x->next;
		if (!j->xfers)
			j->xtail = &j->xfers;
		finish(j, x);
	}
	/* messages from another node that need no bytes from it */
	for (struct bcs_xfer **pp = &j->in; *pp && !j->failed;) {
		struct bcs_xfer *x = *pp;

		if (x->len) {
			pp = &x->next;
			continue;
		}
		*pp = x->next;
		finish(j, x);
	}
	for (struct bcs_xfer **pp = &j->out; *pp && !j->failed;) {
		struct bcs_xfer *x = *pp;
		if (x->len) {
			pp = &x->next;
			continue;
		}
		*pp = x->next;
		send_done(j, j->area_of[x->s->src], x->s->req);
		bcs_drop_pair(NULL, x->s, x->r);
		free(x);
	}
}

/* Bytes from another node for a receive here. */
static int apply_data(struct bcs_job *j, uint32_t node,
		      const struct bcs_witem *it)
{
	struct bcs_xfer **pp, *x;
	int rc;

	for (pp = &j->in; *pp && (*pp)->match != it->u.data.match;
	     pp = &(*pp)->next)
		;
	x = *pp;
	if (!x || x->peer != node || it->u.data.off != x->done ||
	    it->nbytes > x->len - x->done)
		return -EPROTO;
	rc = bcs_vm_copy(j->pid[j->area_of[x->r->dst]], x->r->addr + x->done,
			 (void *)it->bytes, it->nbytes, 1);
	if (rc) {
		bcs_job_fail(j, "message from rank %d to rank %d (tag %d, "
			     "%llu bytes): %s", x->s->src, x->r->dst,
			     x->s->tag, (unsigned long long)x->s->bytes,
			     rc == -EFAULT ? "a buffer is not mapped in its "
			     "rank" : strerror(-rc));
		return 0;
	}
	x->done += it->nbytes;
	j->acts++;
	if (x->done == x->len) {
		*pp = x->next;
		finish(j, x);
	}
	return 0;
}

static int apply_desc(struct bcs_job *j, uint32_t node,
		      const struct bcs_witem *it, char *why, size_t whylen)
{
	const struct bcs_w_desc *wd = &it->u.desc;
	const struct bcs_desc *d = &wd->d;

	if (bcs_desc_check(d, j->size, why, whylen))
		return -EPROTO;
	if (j->node_of[wd->rank] != node) {
		snprintf(why, whylen, "a descriptor of rank %d, not its",
			 wd->rank);
		return -EPROTO;
	}
	switch (d->kind) {
	case BCS_D_SEND: {
		struct bcs_msg *s = calloc(1, sizeof(*s));

		if (!s || ((d->flags & BCS_F_EAGER) && it->nbytes != d->bytes))
			goto bad;
		s->src = wd->rank;
		s->dst = d->peer;
		s->tag = d->tag;
		s->flags = d->flags;
		s->ctx = d->ctx;
		s->bytes = d->bytes;
		s->clock = d->clock;
		s->seq = wd->seq;
		s->req = d->req;
		s->addr = d->addr;
		/* eager bytes are kept only where they are received */
		if ((d->flags & BCS_F_EAGER) && bcs_local(j, d->peer)) {
			if (!(s->eager = malloc(d->bytes ? d->bytes : 1))) {
				free(s);
				bcs_job_fail(j, "out of memory for a message");
				return 0;
			}
			memcpy(s->eager, it->bytes, d->bytes);
		}
		j->nheld++;
		if (d->flags & BCS_F_EAGER)
			j->held += d->bytes;
		bcs_match_send(&j->m, s);
		return 0;
	bad:
		free(s);
		snprintf(why, whylen, "a send of rank %d with %zu bytes for "
			 "%llu", wd->rank, it->nbytes,
			 (unsigned long long)d->bytes);
		return -EPROTO;
	}
	case BCS_D_RECV:
	case BCS_D_PROBE: {
		struct bcs_recv *r = calloc(1, sizeof(*r));

		if (!r) {
			bcs_job_fail(j, "out of memory for a receive");
			return 0;
		}
		r->dst = wd->rank;
		r->src = d->peer;
		r->tag = d->tag;
		r->probe = d->kind == BCS_D_PROBE;
		r->ctx = d->ctx;
		r->cap = d->bytes;
		r->req = d->req;
		r->addr = d->addr;
		r->seq = wd->seq;
		j->nheld++;
		bcs_match_recv(&j->m, r);
		return 0;
	}
	case BCS_D_COLL:
		bcs_coll_post(j, wd->rank, d);
		return 0;
	case BCS_D_COMM:
		bcs_coll_comm(j, wd->rank, d, it->bytes, it->nbytes);
		return 0;
	case BCS_D_COMM_FREE:
		bcs_coll_free(j, wd->rank, d);
		return 0;
	case BCS_D_CANCEL: {
		/* every node takes it back, in the same place of the same
		 * round: the matches stay the same everywhere */
		struct bcs_recv *r = bcs_match_cancel(&j->m, wd->rank,
						      d->req);

		if (!r)
			return 0; /* matched: the receive completes */
		j->nheld -= j->nheld ? 1 : 0;
		if (bcs_local(j, r->dst)) {
			struct bcs_done dc = { .req = r->req,
					       .status = BCS_E_CANCELLED,
					       .source = BCS_ANY,
					       .tag = BCS_ANY };

			bcs_complete(j, j->area_of[r->dst], &dc);
		}
		free(r);
		return 0;
	}
	default: /* FINALIZE: its state says gone */
		return 0;
	}
}

static int apply_section(struct bcs_job *j, uint32_t k, const uint8_t *sec,
			 size_t len, uint32_t *cut, char *why, size_t whylen)
{
	struct bcs_witem it;
	size_t off = 0;
	int rc = 0;

	while (!j->failed &&
	       (rc = bcs_wire_next(sec, len, &off, &it, why, whylen)) > 0) {
		switch (it.type) {
		case BCS_W_STATE: {
			const struct bcs_w_state *st = &it.u.st;
			struct bcs_rank_state *rk;

			if (st->rank < 0 || (uint32_t)st->rank >= j->size ||
			    j->node_of[st->rank] != j->nodes[k]) {
				snprintf(why, whylen, "the state of rank %d",
					 st->rank);
				return -EPROTO;
			}
			rk = &j->m.rk[st->rank];
			rk->clock = st->clock;
			rk->blocked = !!(st->flags & BCS_W_BLOCKED);
			rk->gone = !!(st->flags & BCS_W_GONE);
			rk->other_pending = st->pending;
			rk->sent = st->sent;
			if (st->flags & BCS_W_POLLED)
				j->m.polling = 1;
			break;
		}
		case BCS_W_DESC:
			if (it.u.desc.rank < 0 ||
			    (uint32_t)it.u.desc.rank >= j->size) {
				snprintf(why, whylen, "a descriptor of rank %d",
					 it.u.desc.rank);
				return -EPROTO;
			}
			if ((rc = apply_desc(j, j->nodes[k], &it, why,
					     whylen)))
				return rc;
			break;
		case BCS_W_DATA:
			if (apply_data(j, j->nodes[k], &it)) {
				snprintf(why, whylen, "bytes of match %llu at "
					 "%llu that no receive here expects",
					 (unsigned long long)it.u.data.match,
					 (unsigned long long)it.u.data.off);
				return -EPROTO;
			}
			break;
		case BCS_W_COLL: /* bcs_coll_round, once all are applied */
			break;
		case BCS_W_CUT: /* held once the round is applied */
			if (it.u.cut.epoch > *cut)
				*cut = it.u.cut.epoch;
			break;
		}
	}
	return rc;
}

/* Round j->round + 1, once every node's section of it is here. */
static int apply(struct nm_bcs *e, struct bcs_job *j)
{
	uint64_t r = j->round + 1;
	uint32_t cut = 0;
	char why[256];

	for (uint32_t k = 0; k < j->nnodes; k++)
		if (!sect_of(j, k, r)->have)
			return 0;
	j->m.polling = 0;
	for (uint32_t k = 0; k < j->nnodes && !j->failed; k++) {
		struct bcs_sect *s = sect_of(j, k, r);

		if (apply_section(j, k, s->data, s->len, &cut, why,
				  sizeof(why))) {
			bcs_job_fail(j, "round %llu: node %s's section: %s",
				     (unsigned long long)r,
				     bcs_node_name(e, j->nodes[k]), why);
			break;
		}
	}
	j->round = r;
	if (j->failed)
		return 0;
	bcs_match_run(&j->m, on_match, j);
	bcs_trace_flush(j);
	if (j->m.diverged) {
		bcs_diverged(j);
		return 0;
	}
	transfers(e, j);
	bcs_coll_round(e, j, (uint32_t)(r % 2));
	for (uint32_t k = 0; k < j->nnodes; k++)
		sect_of(j, k, r)->have = 0;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct bcs_area *a = bcs_job_area(j, i);

		bcs_complete_late(j, i);
		if (a->done_head != j->woken[i]) {
			j->woken[i] = a->done_head;
			bcs_wake(a);
		}
	}
	bcs_cut_round(j, cut);
	return 1;
}

void bcs_round_section(struct nm_bcs *e, struct bcs_job *j, uint32_t from,
		       uint64_t round, const uint8_t *data, size_t len)
{
	uint32_t k;

	for (k = 0; k < j->nnodes && j->nodes[k] != from; k++)
		;
	if (k == j->nnodes || k == j->me || round <= j->round ||
	    round > j->round + 2 || sect_of(j, k, round)->have) {
		qb_log(LOG_WARNING, "job %u: BCS-MPI section of round %llu "
		       "from node %s dropped (the job is at round %llu)",
		       j->id, (unsigned long long)round, bcs_node_name(e, from),
		       (unsigned long long)j->round);
		return;
	}
	if (sect_store(sect_of(j, k, round), data, len))
		bcs_job_fail(j, "out of memory for a round");
}

/* A section of another incarnation of an open job: an earlier one's
 * (killed, its sections still in flight) is dropped, a later one's (this
 * node is yet to close the job and open it again) kept, as are those of
 * a job being restored here. */
static void on_section(void *ctx, uint32_t from, uint32_t job, uint32_t inc,
		       uint64_t round, const uint8_t *data, size_t len)
{
	struct nm_bcs *e = ctx;
	struct bcs_job *j = bcs_job_find(e, job);

	if (j && inc == j->inc && !j->restoring)
		bcs_round_section(e, j, from, round, data, len);
	else if (!j || inc > j->inc || (inc == j->inc && j->restoring))
		bcs_early_keep(e, job, inc, from, round, data, len);
}

/* Another node has sent its section of the job's next round. */
static int peer_started(const struct bcs_job *j)
{
	for (uint32_t k = 0; k < j->nnodes; k++)
		if (k != j->me && sect_of((struct bcs_job *)j, k,
					  j->round + 1)->have)
			return 1;
	return 0;
}

/* Every rank of the job here waits (their word): none can post anything
 * before a completion, and a finalized one posts nothing more. */
static int all_wait(const struct bcs_job *j)
{
	uint32_t live = 0;

	for (uint32_t i = 0; i < j->nlocal; i++) {
		if (j->gone[i])
			continue;
		live++;
		if (!__atomic_load_n(&bcs_job_area(j, i)->blocked,
				     __ATOMIC_ACQUIRE))
			return 0;
	}
	return live > 0;
}

/* Work that needs more rounds by itself: bytes still moving, a spread
 * collective's next chunk, completions waiting for room. */
static int more_rounds(const struct bcs_job *j)
{
	if (j->xfers || j->out || j->in || j->spread)
		return 1;
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->late[i])
			return 1;
	return 0;
}

/* The job's ranks are told the engine is awake again. */
static void wake(struct bcs_job *j)
{
	if (!j->nap)
		return;
	j->nap = 0;
	for (uint32_t i = 0; i < j->nlocal; i++)
		__atomic_store_n(&bcs_job_area(j, i)->nap, 0, __ATOMIC_RELAXED);
}

/* The job's rounds may run here: not failed, not gang-stopped, mapped,
 * none of its nodes lost. */
static int running(const struct bcs_job *j)
{
	return !j->failed && !j->stopped && j->seg && !j->lost;
}

/* Our section of the job's next round, then every round whose sections
 * are all in.  Returns whether the section was built. */
static int step(struct nm_bcs *e, struct bcs_job *j)
{
	wake(j);
	if (!build(e, j))
		return 0;
	while (!j->failed && apply(e, j))
		;
	return 1;
}

/* Every rank here waits: the section of the next round holds now what it
 * would at the next slice, so it is built now (sent to the job's other
 * nodes by the caller's flush; the round applies once theirs are in —
 * each of them builds its own at its slice, or at once if its ranks all
 * wait too).  On one node it applies at once, and goes on while the
 * ranks still wait on work that needs more rounds.  Nothing is matched
 * otherwise: matching depends on what was posted, never on when rounds
 * run (bcs_match.h).  Whether the ranks wait is their word, so a job
 * runs at most BCS_EARLY_MAX such rounds a slice.  Returns whether a
 * section was built. */
static int early(struct nm_bcs *e, struct bcs_job *j)
{
	int built = 0;

	while (running(j) && j->early < BCS_EARLY_MAX) {
		uint64_t r = j->round;

		if (!step(e, j))
			break;
		built = 1;
		j->early++;
		if (j->round == r || !all_wait(j) || !more_rounds(j))
			break;
	}
	return built;
}

void nm_bcs_events(struct nm_bcs *e)
{
	int built = 0;

	bcs_xchg_events(&e->x);
	bcs_xchg_receive(&e->x, on_section, e);
	for (struct bcs_job *j = e->jobs; j; j = j->next) {
		uint64_t acts = j->acts;
		int applied = 0;

		while (running(j) && apply(e, j)) {
			wake(j);
			applied = 1;
		}
		if (j->nnodes == 1 || !running(j))
			continue;
		/* a round applied, and the ranks still wait: the next one
		 * needs no slice either (a reduction's second round) — if
		 * that round did anything.  One that did nothing (a barrier
		 * whose members elsewhere still compute) would only start
		 * another the other nodes answer at once, round after round
		 * (N = 8 over 4 node managers, barrier loop G = 10 ms: +40 %
		 * against +14 % before the chain) */
		if (all_wait(j) &&
		    (!applied || j->acts != acts || more_rounds(j)))
			built |= early(e, j);
		/* another node started a round this one had no news for:
		 * its section now, not at the next slice */
		else if (peer_started(j))
			built |= step(e, j);
	}
	/* sections built while the last records were in flight go now */
	if (built || bcs_xchg_pending(&e->x))
		bcs_xchg_flush(&e->x);
}

/* Whether the job's next round may hold anything at this slice: news
 * from its ranks here, descriptors still in their rings, work of more
 * rounds, another node's section of it already in, or BCS_QUIET_MAX
 * slices without one.  A job that only computes then costs no round
 * and, across nodes, no records, slice after slice. */
static int news(const struct bcs_job *j)
{
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (__atomic_load_n(&bcs_job_area(j, i)->post_head,
				    __ATOMIC_ACQUIRE) != j->tail[i])
			return 1;
	return digest(j) != j->seen_digest || more_rounds(j) ||
	       j->pulls || peer_started(j) || bcs_cut_wanted(j);
}

/* The quiet bound is for a digest that hides a change; a napping job's
 * ranks ring instead, so its naps are not cut short (an idle strobe's
 * blocks come every few dozen slices: one round per 16 of them would
 * wake the strobe every half second for nothing). */
static int due(struct bcs_job *j)
{
	return news(j) || (!j->nap && ++j->quiet >= BCS_QUIET_MAX);
}

/* Nothing new at this slice: the job naps, and the node manager may
 * sleep through slices (nm_bcs_busy).  Its ranks see the nap value and
 * ring the doorbell once, when they next post, poll or wait; the value
 * is stored before their state is looked at again, and they store
 * theirs before loading it (a fence each side), so a change made as
 * the nap began is either seen here or rung. */
static void nap(struct bcs_job *j)
{
	if (j->nap || j->bell_fd < 0)
		return; /* no doorbell: no rank could wake it */
	if (++j->naps == 0)
		j->naps = 1;
	j->nap = j->naps;
	for (uint32_t i = 0; i < j->nlocal; i++)
		__atomic_store_n(&bcs_job_area(j, i)->nap, j->nap,
				 __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (news(j))
		wake(j);
}

void nm_bcs_slice(struct nm_bcs *e, uint64_t slice)
{
	(void)slice;
	nm_bcs_events(e);
	for (struct bcs_job *j = e->jobs; j; j = j->next) {
		j->early = 0;
		bcs_cut_expire(j);
		bcs_lost_expire(j);
		if (!running(j))
			continue;
		if (due(j))
			step(e, j);
		else
			nap(j);
	}
	bcs_xchg_flush(&e->x);
}

int nm_bcs_busy(const struct nm_bcs *e)
{
	if (bcs_xchg_pending(&e->x))
		return 1;
	for (const struct bcs_job *j = e->jobs; j; j = j->next)
		if ((running(j) && !j->nap) || (j->lost && !j->failed))
			return 1; /* a lost one: slices until it fails */
	return 0;
}

/* Every rank of the job here waits: its section of the next round now
 * (early). */
void nm_bcs_bell(struct nm_bcs *e, uint32_t job)
{
	struct bcs_job *j = bcs_job_find(e, job);
	uint64_t v;

	if (!j || j->bell_fd < 0)
		return;
	if (read(j->bell_fd, &v, sizeof(v)) < 0)
		return; /* EAGAIN: a rank read it, or a spurious wake */
	/* rung from a nap by a rank that posted or polls: the job takes
	 * slices again, its section comes at the next one.  Built now, it
	 * would start a round the other nodes answer at once while their
	 * ranks compute, round after round (N = 8 over 4 node managers,
	 * compute loop: +10 %) */
	wake(j);
	if (!all_wait(j))
		return;
	if (early(e, j))
		bcs_xchg_flush(&e->x);
}
