/*
 * inproc.c — the in-process machine: every node of a machine as a world in
 * one process, connected by a discrete-event network.
 *
 * One dispatcher thread delivers events in (virtual time, sequence) order,
 * so a run driven from one thread is deterministic.  Time is virtual and
 * follows a LogGP cost model: a send costs the sender o, travels L + G·bytes
 * (+ any injected delay), and costs the receiver o; each node has its own
 * clock, so parallel work overlaps as it would on a real machine and
 * protocol latencies (membership stabilisation, a COMPARE-AND-WRITE) can be
 * read off in virtual time for thousands of nodes on a 2-core host.
 *
 * Fault injection: kill (the node stops, its blocked callers get
 * -STORM_ECLOSED, and its tree neighbours are told after a detection
 * delay, as a heartbeat would), drop (probability per link),
 * delay (extra latency per link), hold (park every message to a node).
 *
 * Lock order: world lock before machine lock.  The dispatcher never holds
 * the machine lock while it calls into a world.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sp_engine.h"

enum { EV_MSG = 1, EV_SEND_DONE, EV_DETECT };

struct mev {
	uint64_t t, seq;
	int kind;
	uint32_t src, dst;
	void *cookie;
	uint8_t *data;
	size_t len;
};

struct rule {
	uint32_t src, dst;
	double drop;
	uint64_t delay;
};

struct inproc_tp {
	struct sp_transport base; /* first: recovered by cast */
	sp_machine_t *m;
	uint32_t id;
};

struct mnode {
	sp_world_t *w;
	int dead, hold;
	int pinned; /* sp_machine_kill() is calling into w: ip_stop waits */
	uint64_t clock;
	struct mev *held;
	size_t nheld, capheld;
};

struct sp_machine {
	pthread_mutex_t lock;
	pthread_cond_t cond, idle;
	uint32_t n;
	sp_machine_params_t p;
	struct mnode *nodes;
	struct mev *heap;
	size_t nheap, capheap;
	uint64_t now, seq, rng;
	struct rule *rules;
	size_t nrules;
	pthread_t thr;
	int stop;
	int64_t busy_node; /* node whose handler runs now, -1 none */
};

/* ---- event heap ----------------------------------------------------------- */

static int ev_less(const struct mev *a, const struct mev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_push(sp_machine_t *m, struct mev e)
{
	size_t i;

	if (m->nheap == m->capheap) {
		size_t cap = m->capheap ? 2 * m->capheap : 256;
		struct mev *h = realloc(m->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		m->heap = h;
		m->capheap = cap;
	}
	e.seq = ++m->seq;
	i = m->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!ev_less(&e, &m->heap[p]))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = e;
	pthread_cond_signal(&m->cond);
	return 0;
}

static struct mev heap_pop(sp_machine_t *m)
{
	struct mev top = m->heap[0], last = m->heap[--m->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= m->nheap)
			break;
		if (c + 1 < m->nheap && ev_less(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!ev_less(&m->heap[c], &last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (m->nheap)
		m->heap[i] = last;
	return top;
}

static double rnd(sp_machine_t *m)
{
	/* xorshift64*: reproducible from the seed */
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return (double)((m->rng * UINT64_C(2685821657736338717)) >> 11) /
	       (double)(UINT64_C(1) << 53);
}

static void link_rules(sp_machine_t *m, uint32_t s, uint32_t d, double *drop,
		       uint64_t *delay)
{
	*drop = 0;
	*delay = 0;
	for (size_t i = 0; i < m->nrules; i++) {
		struct rule *r = &m->rules[i];

		if ((r->src == UINT32_MAX || r->src == s) &&
		    (r->dst == UINT32_MAX || r->dst == d)) {
			if (r->drop > *drop)
				*drop = r->drop;
			*delay += r->delay;
		}
	}
}

/* ---- dispatcher ----------------------------------------------------------- */

static void deliver(sp_machine_t *m, struct mev *e)
{
	sp_world_t *w;

	if (e->kind == EV_DETECT) {
		/* a node opened again before its death was noticed is a new
		 * incarnation that beats: nothing to notice any more */
		if (!m->nodes[e->src].dead && m->nodes[e->src].w)
			return;
		for (uint32_t v = 0; v < m->n; v++) {
			if (m->nodes[v].dead || !m->nodes[v].w || v == e->src)
				continue;
			w = m->nodes[v].w;
			m->busy_node = v;
			pthread_mutex_unlock(&m->lock);
			if (sp_engine_is_neighbor(w, e->src)) {
				pthread_mutex_lock(&m->lock);
				if (m->nodes[v].clock < e->t)
					m->nodes[v].clock = e->t;
				pthread_mutex_unlock(&m->lock);
				sp_engine_peer_down(w, e->src);
			}
			pthread_mutex_lock(&m->lock);
		}
		m->busy_node = -1;
		return;
	}
	if (e->kind == EV_SEND_DONE) {
		w = m->nodes[e->src].w;
		if (!w)
			return;
		m->busy_node = e->src;
		pthread_mutex_unlock(&m->lock);
		sp_engine_send_done(w, e->cookie);
		pthread_mutex_lock(&m->lock);
		m->busy_node = -1;
		return;
	}
	w = m->nodes[e->dst].w;
	if (!w || m->nodes[e->dst].dead)
		return;
	if (m->nodes[e->dst].clock < e->t)
		m->nodes[e->dst].clock = e->t;
	m->nodes[e->dst].clock += m->p.o_ns;
	m->busy_node = e->dst;
	pthread_mutex_unlock(&m->lock);
	sp_engine_deliver(w, e->src, e->data, e->len);
	pthread_mutex_lock(&m->lock);
	m->busy_node = -1;
}

static void *dispatcher(void *arg)
{
	sp_machine_t *m = arg;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		struct mev e;

		if (m->nheap == 0) {
			pthread_cond_broadcast(&m->idle);
			pthread_cond_wait(&m->cond, &m->lock);
			continue;
		}
		e = heap_pop(m);
		if (e.kind == EV_MSG && m->nodes[e.dst].hold) {
			struct mnode *nd = &m->nodes[e.dst];

			if (nd->nheld == nd->capheld) {
				size_t cap = nd->capheld ? 2 * nd->capheld : 64;
				struct mev *h = realloc(nd->held, cap * sizeof(*h));

				if (!h) {
					free(e.data);
					continue;
				}
				nd->held = h;
				nd->capheld = cap;
			}
			nd->held[nd->nheld++] = e;
			continue;
		}
		if (e.t > m->now)
			m->now = e.t;
		deliver(m, &e);
		free(e.data);
		pthread_cond_broadcast(&m->idle);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* ---- transport ops ---------------------------------------------------------- */

static int ip_send(struct sp_transport *t, uint32_t dst, const void *hdr,
		   size_t hdrlen, const void *payload, size_t paylen,
		   void *cookie)
{
	struct inproc_tp *tp = (struct inproc_tp *)t;
	sp_machine_t *m = tp->m;
	struct mnode *s;
	uint64_t t0, delay;
	double drop;
	int rc = 0;

	if (dst >= m->n)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	s = &m->nodes[tp->id];
	if (s->dead) {
		pthread_mutex_unlock(&m->lock);
		return 0; /* a killed node's messages vanish */
	}
	t0 = s->clock > m->now || m->busy_node == tp->id ? s->clock : m->now;
	s->clock = t0 + m->p.o_ns;
	link_rules(m, tp->id, dst, &drop, &delay);
	if (m->nodes[dst].dead || !m->nodes[dst].w) {
		rc = -STORM_EUNREACH;
	} else if (drop > 0 && rnd(m) < drop) {
		/* lost on the wire: the sender cannot tell */
	} else {
		struct mev e = {.kind = EV_MSG, .src = tp->id, .dst = dst};

		e.len = hdrlen + paylen;
		e.data = malloc(e.len);
		if (!e.data) {
			pthread_mutex_unlock(&m->lock);
			return -ENOMEM;
		}
		memcpy(e.data, hdr, hdrlen);
		if (paylen)
			memcpy(e.data + hdrlen, payload, paylen);
		e.t = s->clock + m->p.L_ns +
		      (uint64_t)(m->p.G_ns_per_byte * (double)e.len) + delay;
		if (heap_push(m, e)) {
			free(e.data);
			rc = -ENOMEM;
		}
	}
	if (cookie) {
		struct mev d = {.kind = EV_SEND_DONE, .src = tp->id,
				.t = s->clock, .cookie = cookie};

		heap_push(m, d);
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static uint64_t ip_now(struct sp_transport *t)
{
	struct inproc_tp *tp = (struct inproc_tp *)t;
	sp_machine_t *m = tp->m;
	struct mnode *s;
	uint64_t v;

	pthread_mutex_lock(&m->lock);
	s = &m->nodes[tp->id];
	/* inside its own handler a node lives at its own clock; called from
	 * an application thread it catches up with the machine first */
	if (m->busy_node != tp->id && s->clock < m->now)
		s->clock = m->now;
	v = s->clock;
	pthread_mutex_unlock(&m->lock);
	return v;
}

static int ip_start(struct sp_transport *t)
{
	(void)t;
	return 0;
}

static void ip_stop(struct sp_transport *t)
{
	struct inproc_tp *tp = (struct inproc_tp *)t;
	sp_machine_t *m = tp->m;

	pthread_mutex_lock(&m->lock);
	m->nodes[tp->id].w = NULL;
	/* wait out a handler of ours that the dispatcher may be running, and
	 * a kill that is marking the world closed */
	while (m->busy_node == (int64_t)tp->id || m->nodes[tp->id].pinned)
		pthread_cond_wait(&m->idle, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

static void ip_destroy(struct sp_transport *t)
{
	free(t);
}

static size_t ip_max_msg(struct sp_transport *t)
{
	(void)t;
	return (size_t)64 << 20;
}

static const struct sp_transport_ops inproc_ops = {
	.version = SP_TRANSPORT_OPS_V1,
	.name = "inproc",
	.send = ip_send,
	.now_ns = ip_now,
	.start = ip_start,
	.stop = ip_stop,
	.destroy = ip_destroy,
	.max_msg = ip_max_msg,
};

int sp_inproc_open(sp_world_t *w, const sp_config_t *cfg,
		   struct sp_transport **out, char *err, size_t errlen)
{
	sp_machine_t *m = cfg->machine;
	struct inproc_tp *tp;

	if (cfg->nnodes != m->n || cfg->node_id >= m->n) {
		if (err)
			snprintf(err, errlen,
				 "inproc: node %u of %u does not fit a machine of %u nodes",
				 cfg->node_id, cfg->nnodes, m->n);
		return -STORM_ECONFIG;
	}
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	tp->base.ops = &inproc_ops;
	tp->base.world = w;
	tp->m = m;
	tp->id = cfg->node_id;
	pthread_mutex_lock(&m->lock);
	if (m->nodes[tp->id].w) {
		pthread_mutex_unlock(&m->lock);
		free(tp);
		if (err)
			snprintf(err, errlen,
				 "inproc: node %u is already attached", cfg->node_id);
		return -EBUSY;
	}
	m->nodes[tp->id].w = w;
	m->nodes[tp->id].dead = 0;
	if (m->nodes[tp->id].clock < m->now)
		m->nodes[tp->id].clock = m->now;
	pthread_mutex_unlock(&m->lock);
	*out = &tp->base;
	return 0;
}

/* ---- the machine -------------------------------------------------------------- */

int sp_machine_create(uint32_t nnodes, const sp_machine_params_t *params,
		      sp_machine_t **out)
{
	sp_machine_t *m;
	pthread_condattr_t ca;

	if (!out || nnodes == 0 || nnodes > SP_MAX_NODES)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->nodes = calloc(nnodes, sizeof(*m->nodes));
	if (!m->nodes) {
		free(m);
		return -ENOMEM;
	}
	m->n = nnodes;
	if (params) {
		m->p = *params;
	} else {
		m->p.o_ns = 1000;
		m->p.L_ns = 2000;
		m->p.G_ns_per_byte = 0.1;
		m->p.seed = 1;
	}
	m->rng = m->p.seed ? m->p.seed : 0x9e3779b97f4a7c15ULL;
	m->busy_node = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, NULL);
	pthread_cond_init(&m->idle, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&m->thr, NULL, dispatcher, m)) {
		pthread_cond_destroy(&m->cond);
		pthread_cond_destroy(&m->idle);
		pthread_mutex_destroy(&m->lock);
		free(m->nodes);
		free(m);
		return -EAGAIN;
	}
	*out = m;
	return 0;
}

void sp_machine_destroy(sp_machine_t *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thr, NULL);
	for (size_t i = 0; i < m->nheap; i++)
		free(m->heap[i].data);
	for (uint32_t v = 0; v < m->n; v++) {
		for (size_t i = 0; i < m->nodes[v].nheld; i++)
			free(m->nodes[v].held[i].data);
		free(m->nodes[v].held);
	}
	free(m->heap);
	free(m->rules);
	free(m->nodes);
	pthread_cond_destroy(&m->cond);
	pthread_cond_destroy(&m->idle);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

uint64_t sp_machine_now(sp_machine_t *m)
{
	uint64_t v;

	pthread_mutex_lock(&m->lock);
	v = m->now;
	pthread_mutex_unlock(&m->lock);
	return v;
}

int sp_machine_kill(sp_machine_t *m, uint32_t node, uint64_t detect_ns)
{
	struct mev e = {.kind = EV_DETECT, .src = node};
	struct mnode *nd;
	sp_world_t *w;
	int rc;

	if (!m || node >= m->n)
		return -ERANGE;
	pthread_mutex_lock(&m->lock);
	nd = &m->nodes[node];
	if (nd->dead || !nd->w) {
		pthread_mutex_unlock(&m->lock);
		return -ENOENT;
	}
	e.t = m->now + detect_ns;
	rc = heap_push(m, e);
	if (rc) {
		pthread_mutex_unlock(&m->lock);
		return rc; /* nothing changed */
	}
	nd->dead = 1;
	/* Lock order is world before machine, so the world is told after
	 * the machine lock is dropped; the pin keeps sp_close() from freeing
	 * it meanwhile. */
	w = nd->w;
	nd->pinned++;
	pthread_mutex_unlock(&m->lock);
	sp_engine_kill(w);
	pthread_mutex_lock(&m->lock);
	nd->pinned--;
	pthread_cond_broadcast(&m->idle);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int add_rule(sp_machine_t *m, struct rule r)
{
	struct rule *n;

	pthread_mutex_lock(&m->lock);
	n = realloc(m->rules, (m->nrules + 1) * sizeof(*n));
	if (!n) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	m->rules = n;
	m->rules[m->nrules++] = r;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

int sp_machine_drop(sp_machine_t *m, uint32_t src, uint32_t dst, double p)
{
	if (!m || p < 0 || p > 1 || (src != UINT32_MAX && src >= m->n) ||
	    (dst != UINT32_MAX && dst >= m->n))
		return -EINVAL;
	return add_rule(m, (struct rule){.src = src, .dst = dst, .drop = p});
}

int sp_machine_delay(sp_machine_t *m, uint32_t src, uint32_t dst,
		     uint64_t delay_ns)
{
	if (!m || (src != UINT32_MAX && src >= m->n) ||
	    (dst != UINT32_MAX && dst >= m->n))
		return -EINVAL;
	return add_rule(m,
			(struct rule){.src = src, .dst = dst, .delay = delay_ns});
}

int sp_machine_hold(sp_machine_t *m, uint32_t node, int hold)
{
	struct mnode *nd;

	if (!m || node >= m->n)
		return -ERANGE;
	pthread_mutex_lock(&m->lock);
	nd = &m->nodes[node];
	nd->hold = !!hold;
	if (!hold) {
		for (size_t i = 0; i < nd->nheld; i++) {
			struct mev e = nd->held[i];

			if (e.t < m->now)
				e.t = m->now;
			heap_push(m, e);
		}
		nd->nheld = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

int sp_machine_quiesce(sp_machine_t *m, int timeout_ms)
{
	struct timespec dl;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&m->lock);
	while (m->nheap || m->busy_node != -1) {
		if (pthread_cond_timedwait(&m->idle, &m->lock, &dl) ==
		    ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}
