/*
 * bcs_coll.c — a BCS-MPI job's communicators and collectives (bcs_int.h).
 *
 * A communicator is known alike on every node of the job (its COMM
 * descriptors are in the rounds), and so is each member's queue of
 * posted collectives.  A collective runs once every member has posted
 * it, in one of three ways, by where the members are:
 *   HERE       all on this node: the engine reads and writes their
 *              memories directly, a chunk of NM_BCS_SLICE_BYTES a round;
 *   ELSEWHERE  none here: dropped from the queue, nothing to do;
 *   SPREAD     on several nodes: a barrier completes at once; a
 *              broadcast's root node, or for a reduction every member's
 *              node, puts a chunk of coll_chunk bytes in each section
 *              from the next round on, and every node writes what its
 *              members get.  One spread collective of a job at a time,
 *              chosen alike everywhere (the first communicator, in the
 *              job's list, whose next collective every member posted).
 * A reduction combines the members' bytes in one fixed order,
 * r0 op (r1 op (... op r(n-1))), whatever node computes it, so every
 * run and every node gives the same bits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <storm_bcs.h>

#include "bcs_int.h"
#include "bcs_wire.h"

struct bcs_comm *bcs_comm_find(struct bcs_job *j, uint64_t ctx)
{
	for (struct bcs_comm *c = j->comms; c; c = c->next)
		if (c->ctx == ctx)
			return c;
	return NULL;
}

/* Communicator rank of world rank w in c, or -1. */
int32_t bcs_comm_rank(const struct bcs_comm *c, int32_t w)
{
	for (uint32_t k = 0; k < c->n; k++)
		if (c->world[k] == w)
			return (int32_t)k;
	return -1;
}

void bcs_comm_free(struct bcs_comm *c)
{
	for (uint32_t k = 0; c->q && k < c->n; k++)
		while (c->q[k]) {
			struct bcs_cpost *p = c->q[k];

			c->q[k] = p->next;
			free(p);
		}
	free(c->q);
	free(c->world);
	free(c->freed);
	free(c);
}

/* Appended: the list's order is the order the rounds made them in,
 * the same on every node. */
int bcs_comm_add(struct bcs_job *j, uint64_t ctx, uint32_t n,
		 const int32_t *world)
{
	struct bcs_comm *c = calloc(1, sizeof(*c)), **pp;
	uint32_t here = 0, node0 = UINT32_MAX;
	int one_node = 1;

	if (!c || !(c->world = malloc((n ? n : 1) * sizeof(int32_t))) ||
	    !(c->q = calloc(n ? n : 1, sizeof(*c->q))) ||
	    !(c->freed = calloc(n ? n : 1, 1))) {
		if (c)
			bcs_comm_free(c);
		return -ENOMEM;
	}
	c->ctx = ctx;
	c->n = n;
	memcpy(c->world, world, n * sizeof(int32_t));
	for (uint32_t k = 0; k < n; k++) {
		uint32_t node = j->node_of[world[k]];

		here += bcs_local(j, world[k]);
		if (node0 == UINT32_MAX)
			node0 = node;
		else if (node != node0)
			one_node = 0;
	}
	c->where = !one_node ? BCS_C_SPREAD : here ? BCS_C_HERE :
						    BCS_C_ELSEWHERE;
	for (pp = &j->comms; *pp; pp = &(*pp)->next)
		;
	*pp = c;
	return 0;
}

void bcs_coll_comm(struct bcs_job *j, int32_t rank, const struct bcs_desc *d,
		   const uint8_t *group, size_t len)
{
	uint32_t n = (uint32_t)(d->bytes / 4);
	int32_t *w;
	struct bcs_comm *c;

	if (len != (size_t)n * 4 || !(w = malloc((n ? n : 1) * sizeof(*w)))) {
		bcs_job_fail(j, "rank %d: communicator %#llx: a group of %zu "
			     "bytes", rank, (unsigned long long)d->ctx, len);
		return;
	}
	memcpy(w, group, len);
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t l = 0; l < k + 1; l++)
			if (w[k] < 0 || (uint32_t)w[k] >= j->size ||
			    (l < k && w[l] == w[k])) {
				free(w);
				bcs_job_fail(j, "rank %d: communicator %#llx: "
					     "member %u is not a rank of the "
					     "job or is there twice", rank,
					     (unsigned long long)d->ctx, k);
				return;
			}
	c = bcs_comm_find(j, d->ctx);
	if (c && (c->n != n || memcmp(c->world, w, len))) {
		free(w);
		bcs_job_fail(j, "rank %d: communicator %#llx: another group "
			     "than its other members gave", rank,
			     (unsigned long long)d->ctx);
		return;
	}
	if (!c) {
		uint32_t count = 0;

		for (struct bcs_comm *x = j->comms; x; x = x->next)
			count++;
		if (count >= BCS_COMMS_MAX)
			bcs_job_fail(j, "rank %d: more than %u communicators "
				     "at once (free those no longer used with "
				     "MPI_Comm_free)", rank, BCS_COMMS_MAX);
		else if (bcs_comm_add(j, d->ctx, n, w))
			bcs_job_fail(j, "out of memory for a communicator");
	}
	free(w);
}

void bcs_coll_free(struct bcs_job *j, int32_t rank, const struct bcs_desc *d)
{
	struct bcs_comm *c = bcs_comm_find(j, d->ctx);
	int32_t me;

	if (!c || (me = bcs_comm_rank(c, rank)) < 0 || c->freed[me]) {
		bcs_job_fail(j, "rank %d: MPI_Comm_free of communicator %#llx, "
			     "%s", rank, (unsigned long long)d->ctx,
			     !c || me < 0 ? "which it is not a member of" :
			     "which it had freed already");
		return;
	}
	c->freed[me] = 1;
	c->nfreed++;
}

/* Communicators every member freed, none of whose collectives is
 * pending: gone (alike on every node). */
static void comms_sweep(struct bcs_job *j)
{
	for (struct bcs_comm **pp = &j->comms; *pp;) {
		struct bcs_comm *c = *pp;
		int idle = c->nfreed == c->n && j->spread != c;

		for (uint32_t k = 0; idle && k < c->n; k++)
			idle = !c->q[k];
		if (!idle) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		bcs_comm_free(c);
	}
}

void bcs_coll_post(struct bcs_job *j, int32_t rank, const struct bcs_desc *d)
{
	struct bcs_comm *c = bcs_comm_find(j, d->ctx);
	struct bcs_cpost *p, **pp;
	int32_t me;

	if (!c || (me = bcs_comm_rank(c, rank)) < 0) {
		bcs_job_fail(j, "rank %d: a collective on communicator %#llx, "
			     "which it is not a member of", rank,
			     (unsigned long long)d->ctx);
		return;
	}
	if ((d->coll == BCS_C_BCAST || d->coll == BCS_C_REDUCE) &&
	    (uint32_t)d->peer >= c->n) {
		bcs_job_fail(j, "rank %d: root %d of a communicator of %u",
			     rank, d->peer, c->n);
		return;
	}
	{
		uint32_t queued = 0;

		for (pp = &c->q[me]; *pp; pp = &(*pp)->next)
			queued++;
		if (queued >= BCS_COLL_QUEUED_MAX) {
			bcs_job_fail(j, "rank %d: more than %u collectives "
				     "on communicator %#llx that its other "
				     "members have not joined", rank,
				     BCS_COLL_QUEUED_MAX,
				     (unsigned long long)d->ctx);
			return;
		}
	}
	if (!(p = malloc(sizeof(*p)))) {
		bcs_job_fail(j, "out of memory for a collective");
		return;
	}
	p->d = *d;
	p->next = NULL;
	*pp = p;
}

int bcs_same_coll(const struct bcs_desc *a, const struct bcs_desc *b)
{
	if (a->coll != b->coll)
		return 0;
	switch (a->coll) {
	case BCS_C_BCAST:
		return a->peer == b->peer && a->bytes == b->bytes;
	case BCS_C_REDUCE:
		return a->peer == b->peer && a->bytes == b->bytes &&
		       a->op == b->op && a->type == b->type;
	case BCS_C_ALLREDUCE:
		return a->bytes == b->bytes && a->op == b->op &&
		       a->type == b->type;
	default:
		return 1;
	}
}

static int all_posted(const struct bcs_comm *c)
{
	for (uint32_t k = 0; k < c->n; k++)
		if (!c->q[k])
			return 0;
	return 1;
}

/* Complete c's first collective on every member here (status, and the
 * latest of the members' clocks) and drop it everywhere. */
static void coll_done(struct bcs_job *j, struct bcs_comm *c, int status)
{
	uint64_t clock = 0;

	for (uint32_t k = 0; k < c->n; k++)
		if (c->q[k]->d.clock > clock)
			clock = c->q[k]->d.clock;
	for (uint32_t k = 0; k < c->n; k++) {
		struct bcs_cpost *p = c->q[k];

		if (bcs_local(j, c->world[k])) {
			uint32_t i = j->area_of[c->world[k]];
			struct bcs_done d = { .req = p->d.req,
					      .status = status,
					      .clock = clock };

			bcs_complete(j, i, &d);
			if (j->pending[i])
				j->pending[i]--;
		}
		c->q[k] = p->next;
		free(p);
	}
	c->off = 0;
	c->ndone++;
	if (j->spread == c)
		j->spread = NULL;
}

/* Whether c's first collective is well formed: if not, it completes
 * with the status the members get (every node decides alike). */
static int coll_check(struct bcs_job *j, struct bcs_comm *c)
{
	const struct bcs_desc *d0 = &c->q[0]->d;

	for (uint32_t k = 0; k < c->n; k++)
		if (!bcs_same_coll(d0, &c->q[k]->d)) {
			coll_done(j, c, BCS_E_COLL);
			return 0;
		}
	if ((d0->coll == BCS_C_REDUCE || d0->coll == BCS_C_ALLREDUCE) &&
	    (!bcs_type_size((enum bcs_type)d0->type) ||
	     d0->bytes % bcs_type_size((enum bcs_type)d0->type) ||
	     !bcs_op_valid((enum bcs_op)d0->op, (enum bcs_type)d0->type))) {
		coll_done(j, c, BCS_E_ARG);
		return 0;
	}
	return 1;
}

static void coll_failed(struct bcs_job *j, struct bcs_comm *c, int rc)
{
	bcs_job_fail(j, "collective on communicator %#llx: %s",
		     (unsigned long long)c->ctx, rc == -EFAULT ?
		     "a buffer is not mapped in its rank" : strerror(-rc));
}

static pid_t pid_of(const struct bcs_job *j, const struct bcs_comm *c,
		    uint32_t k)
{
	return j->pid[j->area_of[c->world[k]]];
}

/* ---- HERE: every member on this node ------------------------------------ */

/* One chunk of c's first collective (every member has posted it): at
 * most NM_BCS_SLICE_BYTES of its data a round, through the engine's own
 * buffers (never the size a descriptor says).  1 once it is done, 0 if
 * it goes on next round, -errno (the job failed). */
static int run_here(struct nm_bcs *e, struct bcs_job *j, struct bcs_comm *c)
{
	const struct bcs_desc *d0 = &c->q[0]->d;
	uint64_t bytes = d0->bytes, off = c->off, n;
	int rc = 0;

	if (off == 0 && !coll_check(j, c))
		return 1;
	if (d0->coll == BCS_C_BARRIER || off >= bytes) {
		coll_done(j, c, BCS_OK);
		return 1;
	}
	n = bytes - off < NM_BCS_SLICE_BYTES ? bytes - off : NM_BCS_SLICE_BYTES;
	if (d0->coll == BCS_C_BCAST) {
		rc = bcs_vm_copy(pid_of(j, c, (uint32_t)d0->peer),
				 c->q[d0->peer]->d.addr + off, e->cbuf, n, 0);
		for (uint32_t k = 0; !rc && k < c->n; k++)
			if ((int32_t)k != d0->peer)
				rc = bcs_vm_copy(pid_of(j, c, k),
						 c->q[k]->d.addr + off, e->cbuf,
						 n, 1);
	} else {
		size_t esz = bcs_type_size((enum bcs_type)d0->type);

		n -= n % esz;
		for (uint32_t k = c->n; !rc && k-- > 0;) {
			rc = bcs_vm_copy(pid_of(j, c, k),
					 c->q[k]->d.addr + off,
					 k == c->n - 1 ? e->cbuf : e->ctmp, n,
					 0);
			if (!rc && k != c->n - 1)
				bcs_reduce((enum bcs_op)d0->op,
					   (enum bcs_type)d0->type, e->ctmp,
					   e->cbuf, n / esz);
		}
		for (uint32_t k = 0; !rc && k < c->n; k++)
			if (d0->coll == BCS_C_ALLREDUCE ||
			    (int32_t)k == d0->peer)
				rc = bcs_vm_copy(pid_of(j, c, k),
						 c->q[k]->d.addr2 + off,
						 e->cbuf, n, 1);
	}
	if (rc) {
		coll_failed(j, c, rc);
		return rc;
	}
	c->off = off + n;
	if (c->off < bytes)
		return 0;
	coll_done(j, c, BCS_OK);
	return 1;
}

/* ---- SPREAD: members on several nodes ----------------------------------- */

/* The spread collective's chunk at its offset: its length. */
static uint64_t chunk_len(const struct bcs_job *j, const struct bcs_comm *c)
{
	const struct bcs_desc *d0 = &c->q[0]->d;
	uint64_t n = d0->bytes - c->off;
	uint64_t most = d0->coll == BCS_C_BCAST ? j->bcast_chunk :
						   j->coll_chunk;

	if (n > most)
		n = most;
	if (d0->coll != BCS_C_BCAST) {
		size_t esz = bcs_type_size((enum bcs_type)d0->type);

		n -= n % esz;
	}
	return n;
}

/* Members whose bytes this node puts in a section of the chunk: the
 * root of a broadcast, every member of a reduction — those here. */
static int contributes(const struct bcs_job *j, const struct bcs_comm *c,
		       uint32_t k)
{
	return bcs_local(j, c->world[k]) &&
	       (c->q[0]->d.coll != BCS_C_BCAST ||
		(int32_t)k == c->q[0]->d.peer);
}

size_t bcs_coll_need(const struct bcs_job *j)
{
	const struct bcs_comm *c = j->spread;
	size_t n = 0;

	if (!c)
		return 0;
	for (uint32_t k = 0; k < c->n; k++)
		if (contributes(j, c, k))
			n += bcs_wire_size(BCS_W_COLL, chunk_len(j, c));
	return n;
}

int bcs_coll_build(struct nm_bcs *e, struct bcs_job *j, uint8_t *sec,
		   size_t cap, size_t *len)
{
	struct bcs_comm *c = j->spread;
	uint64_t n;

	(void)e;
	if (!c)
		return 0;
	n = chunk_len(j, c);
	for (uint32_t k = 0; k < c->n; k++) {
		struct bcs_w_coll wc = { .ctx = c->ctx, .n = c->ndone,
					 .member = (int32_t)k, .off = c->off };
		int rc;

		if (!contributes(j, c, k))
			continue;
		if (bcs_wire_put(sec, cap, len, BCS_W_COLL, &wc, NULL, n))
			return -ENOSPC;
		rc = bcs_vm_copy(pid_of(j, c, k), c->q[k]->d.addr + c->off,
				 sec + *len - ((n + 7) & ~(uint64_t)7), n, 0);
		if (rc) {
			coll_failed(j, c, rc);
			return rc;
		}
	}
	return 0;
}

/* The round's bytes of member k of the spread collective, or NULL. */
static const uint8_t *member_bytes(struct bcs_job *j, struct bcs_comm *c,
				   uint32_t parity, uint32_t k, uint64_t n)
{
	uint32_t node = j->node_of[c->world[k]], x;
	const struct bcs_sect *s;
	struct bcs_witem it;
	size_t off = 0;
	char why[64];

	for (x = 0; x < j->nnodes && j->nodes[x] != node; x++)
		;
	if (x == j->nnodes)
		return NULL;
	s = &j->sect[2 * (size_t)x + parity];
	while (bcs_wire_next(s->data, s->len, &off, &it, why, sizeof(why)) > 0)
		if (it.type == BCS_W_COLL && it.u.coll.ctx == c->ctx &&
		    it.u.coll.n == c->ndone && it.u.coll.member == (int32_t)k &&
		    it.u.coll.off == c->off && it.nbytes == n)
			return it.bytes;
	return NULL;
}

/* The chunk the round carried: written to the members here. */
static void spread_chunk(struct nm_bcs *e, struct bcs_job *j,
			 struct bcs_comm *c, uint32_t parity)
{
	const struct bcs_desc *d0 = &c->q[0]->d;
	uint64_t n = chunk_len(j, c);
	const uint8_t *src = NULL;
	int rc = 0;

	if (d0->coll == BCS_C_BCAST) {
		if (!(src = member_bytes(j, c, parity, (uint32_t)d0->peer, n)))
			goto missing;
		for (uint32_t k = 0; !rc && k < c->n; k++)
			if ((int32_t)k != d0->peer &&
			    bcs_local(j, c->world[k]))
				rc = bcs_vm_copy(pid_of(j, c, k),
						 c->q[k]->d.addr + c->off,
						 (void *)src, n, 1);
	} else {
		size_t esz = bcs_type_size((enum bcs_type)d0->type);
		int wanted = 0;

		for (uint32_t k = 0; k < c->n; k++)
			wanted |= bcs_local(j, c->world[k]) &&
				  (d0->coll == BCS_C_ALLREDUCE ||
				   (int32_t)k == d0->peer);
		for (uint32_t k = c->n; wanted && k-- > 0;) {
			if (!(src = member_bytes(j, c, parity, k, n)))
				goto missing;
			if (k == c->n - 1) {
				memcpy(e->cbuf, src, n);
			} else {
				memcpy(e->ctmp, src, n);
				bcs_reduce((enum bcs_op)d0->op,
					   (enum bcs_type)d0->type, e->ctmp,
					   e->cbuf, n / esz);
			}
		}
		for (uint32_t k = 0; wanted && !rc && k < c->n; k++)
			if (bcs_local(j, c->world[k]) &&
			    (d0->coll == BCS_C_ALLREDUCE ||
			     (int32_t)k == d0->peer))
				rc = bcs_vm_copy(pid_of(j, c, k),
						 c->q[k]->d.addr2 + c->off,
						 e->cbuf, n, 1);
	}
	if (rc) {
		coll_failed(j, c, rc);
		return;
	}
	c->off += n;
	if (c->off >= d0->bytes)
		coll_done(j, c, BCS_OK);
	return;
missing:
	bcs_job_fail(j, "round %llu: a node's bytes of the collective on "
		     "communicator %#llx at %llu are missing",
		     (unsigned long long)j->round, (unsigned long long)c->ctx,
		     (unsigned long long)c->off);
}

void bcs_coll_round(struct nm_bcs *e, struct bcs_job *j, uint32_t parity)
{
	/* the spread collective's chunk of this round: it was chosen in an
	 * earlier round, so every node put its part in */
	if (j->spread && j->spread->start < j->round) {
		spread_chunk(e, j, j->spread, parity);
		j->acts++;
	}
	for (struct bcs_comm *c = j->comms; c && !j->failed; c = c->next)
		while (!j->failed && all_posted(c)) {
			if (c->where == BCS_C_HERE) {
				if (run_here(e, j, c) != 1)
					break;
			} else if (c->where == BCS_C_ELSEWHERE) {
				coll_done(j, c, BCS_OK);
			} else if (j->spread == c || !coll_check(j, c)) {
				if (j->spread == c)
					break; /* under way */
			} else if (c->q[0]->d.coll == BCS_C_BARRIER ||
				   !c->q[0]->d.bytes) {
				coll_done(j, c, BCS_OK);
			} else if (!j->spread) {
				j->acts++;
				j->spread = c; /* bytes from the next round */
				c->off = 0;
				c->start = j->round;
				break;
			} else {
				break; /* after the one under way */
			}
		}
	comms_sweep(j);
}
