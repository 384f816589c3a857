/*
 * bcs_match.c — deterministic BCS-MPI matching (bcs_match.h).  Key
 * invariant: an ANY_SOURCE receive takes a send only when no rank can
 * still post a send that is less in (clock, source, sequence) order and
 * could match it — so the choice is the one a run with every send
 * already posted would make.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <storm_bcs.h>

#include "bcs_match.h"

#define HELD_MAX 32 /* undecided ANY_SOURCE receives held per rank */

int bcs_match_init(struct bcs_match *m, uint32_t n, enum bcs_order order)
{
	memset(m, 0, sizeof(*m));
	m->n = n;
	m->order = order;
	m->sends = calloc(n ? n : 1, sizeof(*m->sends));
	m->recvs = calloc(n ? n : 1, sizeof(*m->recvs));
	m->rk = calloc(n ? n : 1, sizeof(*m->rk));
	m->bound = calloc(n ? n : 1, sizeof(*m->bound));
	if (!m->sends || !m->recvs || !m->rk || !m->bound) {
		bcs_match_fini(m, NULL, NULL);
		return -ENOMEM;
	}
	return 0;
}

void bcs_match_fini(struct bcs_match *m,
		    void (*drop)(void *ctx, struct bcs_msg *s,
				 struct bcs_recv *r), void *ctx)
{
	for (uint32_t d = 0; drop && m->sends && d < m->n; d++) {
		while (m->sends[d]) {
			struct bcs_msg *s = m->sends[d];

			m->sends[d] = s->next;
			drop(ctx, s, NULL);
		}
		while (m->recvs[d]) {
			struct bcs_recv *r = m->recvs[d];

			m->recvs[d] = r->next;
			drop(ctx, NULL, r);
		}
	}
	free(m->sends);
	free(m->recvs);
	free(m->rk);
	free(m->bound);
	memset(m, 0, sizeof(*m));
}

void bcs_match_send(struct bcs_match *m, struct bcs_msg *s)
{
	struct bcs_msg **pp = &m->sends[s->dst];

	while (*pp)
		pp = &(*pp)->next;
	s->next = NULL;
	*pp = s;
}

void bcs_match_recv(struct bcs_match *m, struct bcs_recv *r)
{
	struct bcs_recv **pp = &m->recvs[r->dst];

	while (*pp)
		pp = &(*pp)->next;
	r->next = NULL;
	r->waited = 0;
	*pp = r;
}

struct bcs_recv *bcs_match_cancel(struct bcs_match *m, int32_t dst,
				  uint64_t req)
{
	struct bcs_recv **pp, *r;

	if (dst < 0 || (uint32_t)dst >= m->n)
		return NULL;
	for (pp = &m->recvs[dst]; (r = *pp); pp = &r->next)
		if (r->req == req && !r->probe) {
			*pp = r->next;
			r->next = NULL;
			return r;
		}
	return NULL;
}

static int takes(const struct bcs_recv *r, const struct bcs_msg *s)
{
	return s->ctx == r->ctx && (r->src == BCS_ANY || r->src == s->src) &&
	       (r->tag == BCS_ANY || r->tag == s->tag);
}

/* Whether s is less than t in (clock, source, sequence) order. */
static int before(const struct bcs_msg *s, const struct bcs_msg *t)
{
	if (s->clock != t->clock)
		return s->clock < t->clock;
	if (s->src != t->src)
		return s->src < t->src;
	return s->seq < t->seq;
}

/* The least clock of a send visible now that r could take. */
static uint64_t least_visible(const struct bcs_match *m,
			      const struct bcs_recv *r)
{
	uint64_t least = BCS_CLOCK_INF;

	for (const struct bcs_msg *s = m->sends[r->dst]; s; s = s->next)
		if (takes(r, s) && s->clock < least)
			least = s->clock;
	return least;
}

void bcs_match_bounds(struct bcs_match *m)
{
	/* a rank blocked on receives alone sends nothing before one of
	 * them completes: then its clock passes that send's, and its next
	 * send is one more (hence + 2).  Start from "never" and lower:
	 * the greatest fixed point (a cycle of ranks waiting on each other
	 * never sends). */
	for (uint32_t p = 0; p < m->n; p++) {
		const struct bcs_rank_state *k = &m->rk[p];

		if (k->gone)
			m->bound[p] = BCS_CLOCK_INF;
		else if (k->blocked && !k->other_pending && m->recvs[p])
			m->bound[p] = BCS_CLOCK_INF;
		else
			m->bound[p] = k->clock + 1;
	}
	for (uint32_t round = 0; round <= m->n; round++) {
		uint64_t all = BCS_CLOCK_INF;
		int changed = 0;

		for (uint32_t s = 0; s < m->n; s++)
			if (m->bound[s] < all)
				all = m->bound[s];
		for (uint32_t p = 0; p < m->n; p++) {
			const struct bcs_rank_state *k = &m->rk[p];
			uint64_t x = BCS_CLOCK_INF, nb;

			if (k->gone || !k->blocked || k->other_pending ||
			    !m->recvs[p])
				continue;
			for (const struct bcs_recv *r = m->recvs[p]; r;
			     r = r->next) {
				uint64_t v = least_visible(m, r);
				uint64_t f = r->src == BCS_ANY ? all :
					     (uint32_t)r->src < m->n ?
					     m->bound[r->src] : BCS_CLOCK_INF;

				if (f < v)
					v = f;
				if (v < x)
					x = v;
			}
			if (x == BCS_CLOCK_INF || x >= BCS_CLOCK_INF - 2)
				nb = BCS_CLOCK_INF;
			else
				nb = (k->clock > x ? k->clock : x) + 2;
			if (nb < m->bound[p]) {
				m->bound[p] = nb;
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
}

/* Whether no rank can still post a send less than c that r could
 * take. */
static int safe(const struct bcs_match *m, const struct bcs_msg *c)
{
	for (uint32_t p = 0; p < m->n; p++) {
		if ((int32_t)p == c->src)
			continue; /* its later sends have later clocks */
		if (m->bound[p] < c->clock ||
		    (m->bound[p] == c->clock && (int32_t)p < c->src))
			return 0;
	}
	return 1;
}

/* Whether r could take a send an undecided receive h could take. */
static int overlaps(const struct bcs_recv *r, const struct bcs_recv *h)
{
	return r->ctx == h->ctx &&
	       (r->tag == BCS_ANY || h->tag == BCS_ANY || r->tag == h->tag);
}

/* r's send this slice, or NULL (none yet, or not decidable: *held). */
static struct bcs_msg *choose(struct bcs_match *m, struct bcs_recv *r,
			      int *bounded, int *held)
{
	struct bcs_msg *best = NULL;
	int32_t psrc;
	uint64_t pseq;

	*held = 0;
	if (m->pick && m->pick(m->pick_ctx, r, &psrc, &pseq)) {
		/* replay: the recorded send, once posted */
		for (struct bcs_msg *s = m->sends[r->dst]; s; s = s->next)
			if (s->src == psrc && s->seq == pseq) {
				if (takes(r, s))
					return s;
				if (!m->diverged)
					m->diverged = r;
				break;
			}
		if (psrc < 0 || (uint32_t)psrc >= m->n || m->rk[psrc].gone ||
		    m->rk[psrc].sent >= pseq ||
		    ++r->waited >= 10 * BCS_PATIENCE) {
			/* a send that will never come here: its rank is
			 * done, or made it and it went elsewhere, or it has
			 * not come for ten patiences */
			if (!m->diverged)
				m->diverged = r;
		}
		*held = 1;
		return NULL;
	}
	for (struct bcs_msg *s = m->sends[r->dst]; s; s = s->next) {
		if (!takes(r, s))
			continue;
		if (r->src != BCS_ANY || m->order == BCS_ORDER_ARRIVAL)
			return s; /* the source's earliest; or first come */
		if (!best || before(s, best))
			best = s;
	}
	if (!best)
		return NULL;
	if (!*bounded) {
		bcs_match_bounds(m);
		*bounded = 1;
	}
	if (safe(m, best))
		return best;
	if (m->polling && ++r->waited >= BCS_PATIENCE) {
		m->forced++;
		return best;
	}
	*held = 1;
	return NULL;
}

static void unlink_send(struct bcs_match *m, struct bcs_msg *s)
{
	for (struct bcs_msg **pp = &m->sends[s->dst]; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->next = NULL;
			return;
		}
}

uint32_t bcs_match_run(struct bcs_match *m, bcs_matched_fn fn, void *ctx)
{
	uint32_t made = 0;
	int bounded = 0;

	for (uint32_t d = 0; d < m->n; d++) {
		const struct bcs_recv *held[HELD_MAX];
		uint32_t nheld = 0;
		struct bcs_recv **pp = &m->recvs[d];

		while (*pp) {
			struct bcs_recv *r = *pp;
			struct bcs_msg *s;
			int hold = 0;

			for (uint32_t h = 0; h < nheld && !hold; h++)
				hold = overlaps(r, held[h]);
			if (hold || nheld == HELD_MAX) {
				pp = &r->next;
				continue;
			}
			s = choose(m, r, &bounded, &hold);
			if (!s) {
				/* a probe takes nothing: it holds no one */
				if (hold && !r->probe)
					held[nheld++] = r;
				pp = &r->next;
				continue;
			}
			*pp = r->next;
			r->next = NULL;
			if (!r->probe)
				unlink_send(m, s);
			made++;
			m->matched++;
			/* a match changes what the ranks can do next: its
			 * receiver may wake (so it counts as running, its
			 * bound its clock + 1, lower than any it will have),
			 * and bounds are computed again for the next
			 * undecided receive */
			m->rk[d].blocked = 0;
			bounded = 0;
			fn(ctx, r, s);
		}
	}
	return made;
}
