/*
 * fabric.c — the libfabric back-end: one process is one node, one RDM
 * endpoint per node, opaque messages between node ids.
 *
 * Why it exists: the engine needs only "send these bytes to node n, in
 * order, without blocking" and a thread that hands it receives, send
 * completions, failures and ticks.  This file maps that onto tcp;ofi_rxm,
 * shm, sockets, verbs;ofi_rxm or udp;ofi_rxd.
 *
 * Invariants:
 *  - On the wire every message is [sender id LE32][PREFIX_MAGIC LE32][hdr]
 *    [payload]: receivers learn the source from it on every provider.
 *  - Messages to one node leave in send() order: once anything is queued
 *    for a node, later sends queue behind it, and a send that failed during
 *    startup goes back to its place (per-node sequence number).
 *  - send() never blocks and never calls the engine.  The engine is called
 *    only from the progress thread, never with f->mu held.
 *  - A send record is on exactly one list: its node's queue, in flight
 *    (the provider holds it), local (loopback delivery or a send_done to
 *    report) or orphans (its peer died: reported, the provider may still
 *    hold it).
 *  - shm messages larger than FRAG_MAX go as FRAG_MAX pieces by fi_inject:
 *    1.17's shm completes larger sends in one FIFO, so one peer killed
 *    mid-transfer would stop every later send completion to everyone.
 *
 * Idle waiting.  16 idle nodes must use < 2% of a core, and a wake-up
 * costs tens of µs here, so timed polling cannot meet it:
 *  W_FD   tcp;ofi_rxm, sockets: ppoll on the CQ wait fd and an eventfd.
 *  W_BELL shm (1.17 has no CQ wait object): a futex word in a small file
 *         per node in /dev/shm, rung by senders after posting.  The file
 *         also holds an OFD lock while the node lives (liveness; a killed
 *         node's leftovers), its incarnation, its region name and a robust
 *         mutex held by its progress thread (death seen by a load).
 *  W_POLL others without FI_GETWAIT (udp;ofi_rxd): adaptive polling.
 * After a short sleep (a burst) the thread spins before blocking: ping-pong
 * latency matters as much as idle cost.  The spin adapts (spin_after_wake):
 * full while a caller of ours is blocked, else as long as recent spins
 * found work, so a periodic strobe does not keep a core busy.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <sodium.h>

#include "sp_config.h"
#include "sp_transport.h"

#include "sp_fabric.h"

/* Error text for a human: what, where, what to do.  Returns rc. */
int fab_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Wake our own progress thread; only a sleeping one costs a syscall. */
void fab_wake(struct fab *f)
{
	uint64_t one = 1;

	if (f->mode == W_BELL)
		fab_ring(f->bell);
	else if (atomic_load(&f->bell->sleeping) && write(f->ev_fd, &one, 8))
		(void)0; /* nothing to do when the counter is saturated */
}

/* ------------------------------------------------------------------------ */
/* Sending (f->mu held)                                                      */
/* ------------------------------------------------------------------------ */

static void pend_locked(struct fab *f, struct peer *p)
{
	if (l_empty(&p->q))
		l_del(&p->pend);
	else if (l_empty(&p->pend))
		l_add_before(&f->pending, &p->pend);
}

/* A finished send: the progress thread reports its cookie. */
void fab_done_locked(struct fab *f, struct fsend *s)
{
	if (!s->cookie) {
		free(s);
		return;
	}
	s->op.kind = OP_DONE;
	l_add_before(&f->local, &s->link);
	fab_wake(f);
}

static void down_locked(struct fab *f, struct peer *p)
{
	uint32_t id = (uint32_t)(p - f->peers);

	if (p->state == P_DOWN)
		return;
	p->state = P_DOWN;
	p->stall_since = 0;
	qb_log(LOG_NOTICE, "fabric: node %u: node %u is unreachable", f->self,
	       id);
	fab_watch_poke(f); /* if it died holding a lock, release it soon */
	l_add_before(&f->downs, &p->dn);
	while (!l_empty(&p->q)) {
		struct fsend *s = SEND_OF(p->q.next);
		l_del(&s->link);
		fab_done_locked(f, s);
	}
	pend_locked(f, p);
	/* Sends in flight to a dead peer may never complete (tcp;ofi_rxm
	 * keeps them).  The provider has copied them or waits for the peer
	 * to read them, so report them now; the records wait for destroy. */
	for (struct link *l = f->inflight.next, *nx; l != &f->inflight;
	     l = nx) {
		struct fsend *s = SEND_OF(l), *d;
		nx = l->next;
		if (s->dst != id)
			continue;
		l_del(l);
		l_add_before(&f->orphans, l);
		s->op.kind = OP_ORPHAN;
		p->inflight--;
		if (s->cookie && (d = calloc(1, sizeof(*d)))) {
			d->cookie = s->cookie;
			d->rd = s->rd;
			d->status = -STORM_EUNREACH;
			fab_done_locked(f, d);
		}
	}
	fab_wake(f);
}

/* Hand s (on no list) to the provider: 0 (s is in flight, or was injected
 * and freed or reported) or a -FI_* code with s where it was. */
static int post_locked(struct fab *f, struct peer *p, struct fsend *s)
{
	ssize_t rc;
	int inject = 0;

	if (f->shm && p->fa != FI_ADDR_NOTAVAIL &&
	    (atomic_load(&p->bell->inc) != p->inc || fab_died(p->bell))) {
		down_locked(f, p); /* dead, or restarted: gone either way */
		return -FI_ECONNRESET;
	}
	if (p->fa == FI_ADDR_NOTAVAIL &&
	    (!f->shm || fab_shm_resolve_locked(f, p, s->dst)))
		return -FI_EAGAIN;
	if (s->rd && f->shm) {
		/* by ourselves, from its mapped arena or by CMA */
		if ((rc = fab_shm_read_locked(f, p, s)) == 0)
			return 0;
		if (rc == -EPERM) {
			/* not allowed here (ptrace policy): provider's read */
			f->cma = 0;
			qb_log(LOG_NOTICE, "fabric: node %u: CMA refused, "
			       "staging read through the shm provider", f->self);
		}
		else if (rc != -ENOSYS)
			return (int)rc;
	}
	if (f->shm && !fab_region_wait_free(p->region, REGION_WAIT_NS)) {
		fab_watch_poke(f); /* its holder may be dead */
		return -FI_EAGAIN; /* its holder is not running: retry later */
	}
	if (s->rd) {
		rc = fi_read(f->ep, s->rlocal, s->rlen, NULL, p->fa, s->raddr,
			     s->rkey, &s->op);
	} else if (s->frag) {
		rc = fab_post_frags_locked(f, p, s);
		inject = 2;
	} else if (s->payload) {
		struct iovec iov[2] = {
			{ .iov_base = s->buf, .iov_len = s->len },
			{ .iov_base = (void *)s->payload,
			  .iov_len = s->paylen },
		};
		rc = fi_sendv(f->ep, iov, NULL, 2, p->fa, &s->op);
	} else if (!s->cookie && p->state == P_UP &&
		   s->len <= f->inject_size) {
		/* Nothing to report to a proven peer: no completion. */
		rc = fi_inject(f->ep, s->buf, s->len, p->fa);
		inject = 1;
	} else {
		rc = fi_send(f->ep, s->buf, s->len, NULL, p->fa, &s->op);
	}
	/* Ring even on EAGAIN: our shm connection request, or a full queue,
	 * waits for the peer to progress.  A lazy message to an event the
	 * peer keeps quiet does not: fab_ring's fence orders our post before
	 * the look at its mask (set_quiet rings after changing it). */
	if (f->mode == W_BELL && !rc && s->lazy_ev >= 0 &&
	    fab_quiet(p->bell, (uint32_t)s->lazy_ev))
		atomic_store(&p->bell->owed, 1);
	else if (f->mode == W_BELL)
		fab_ring(p->bell);
	if (rc)
		return (int)rc;
	p->stall_since = 0;
	p->sent = 1;
	f->eagain_ns = EAGAIN_MIN_NS;
	if (inject == 2) {
		p->state = P_UP; /* shm takes it or says EAGAIN: no failures */
		fab_done_locked(f, s);
		return 0;
	} else if (inject) {
		free(s);
		return 0;
	}
	if (p->inflight++ == 0)
		p->busy_since = mono_ns();
	l_add_before(&f->inflight, &s->link);
	if (f->mode != W_FD)
		fab_wake(f); /* its completion needs our polling */
	return 0;
}

/* A posted send failed with err (positive).  During startup a peer that is
 * not there yet is retried later, s back at its place in the queue;
 * otherwise the peer is down. */
static void fail_locked(struct fab *f, struct peer *p, struct fsend *s,
			int err, uint64_t now)
{
	static const int transient[] = {
		FI_ECONNREFUSED, FI_ECONNRESET, FI_ECONNABORTED, FI_ENOTCONN,
		FI_EHOSTUNREACH, FI_ENETUNREACH, FI_ETIMEDOUT, FI_ENOENT,
		FI_EAGAIN, FI_EIO,
	};
	struct link *pos = p->q.next;
	int retry = 0;

	for (size_t i = 0; i < sizeof(transient) / sizeof(*transient); i++)
		retry |= err == transient[i];
	if (!retry || p->state == P_DOWN || now >= f->startup_end) {
		down_locked(f, p);
		fab_done_locked(f, s);
		return;
	}
	while (pos != &p->q && SEND_OF(pos)->seq < s->seq)
		pos = pos->next;
	l_add_before(pos, &s->link);
	p->state = P_NEW;
	p->backoff = p->backoff ? 2 * p->backoff : RETRY_MIN_NS;
	p->backoff = p->backoff > RETRY_MAX_NS ? RETRY_MAX_NS : p->backoff;
	p->retry_at = now + p->backoff;
	pend_locked(f, p);
}

/* Post what p's queue allows; returns how many were posted. */
static int flush_locked(struct fab *f, struct peer *p, uint64_t now)
{
	int n = 0, rc;

	while (!l_empty(&p->q) && p->state != P_DOWN && now >= p->retry_at &&
	       (p->state == P_UP || p->inflight == 0)) {
		struct fsend *s = SEND_OF(p->q.next);
		l_del(&s->link);
		if ((rc = post_locked(f, p, s)) == 0) {
			n++;
			continue;
		}
		if (rc != -FI_EAGAIN) {
			fail_locked(f, p, s, -rc, now);
			continue;
		}
		l_add_before(p->q.next, &s->link);
		p->stall_since = p->stall_since ? p->stall_since : now;
		/* Taking nothing for a heartbeat timeout after startup is
		 * dead: tcp;ofi_rxm answers EAGAIN, not an error completion,
		 * while it retries a refused connection. */
		uint64_t from = p->stall_since > f->startup_end ?
					p->stall_since : f->startup_end;
		if (f->stall_ns && now > from + f->stall_ns)
			down_locked(f, p);
		else
			f->eagain = 1;
		break;
	}
	pend_locked(f, p);
	return n;
}

/* ------------------------------------------------------------------------ */
/* Ops called by the engine                                                  */
/* ------------------------------------------------------------------------ */

/* Put s at the end of p's queue and post what the queue allows. */
static void enqueue_locked(struct fab *f, struct peer *p, struct fsend *s)
{
	s->seq = p->seq++;
	l_add_before(&p->q, &s->link);
	if (p->q.next == &s->link)
		flush_locked(f, p, mono_ns());
	if (!l_empty(&p->q))
		fab_wake(f); /* the thread retries what is queued */
	pend_locked(f, p);
}

static int send_ev(struct sp_transport *t, uint32_t dst, const void *hdr,
		   size_t hdrlen, const void *payload, size_t paylen,
		   void *cookie, int lazy_ev)
{
	struct fab *f = fab_of(t);
	struct fsend *s;
	int rc = 0, copy, frag;

	if (dst >= f->nnodes)
		return -EINVAL;
	if (hdrlen + paylen > f->max_msg)
		return -EMSGSIZE; /* not accepted: no send_done */
	frag = f->shm && dst != f->self &&
	       PREFIX + hdrlen + paylen > f->inject_size;
	copy = dst == f->self || (!frag && (paylen <= SMALL_COPY || f->shm ||
					     f->iov_limit < 2));
	s = malloc(sizeof(*s) + PREFIX + hdrlen + (copy ? paylen : 0));
	if (!s)
		return -ENOMEM;
	s->op.kind = OP_SEND;
	s->off = 0;
	s->rd = 0;
	s->frag = frag;
	s->lazy_ev = frag ? -1 : lazy_ev;
	s->dst = dst;
	s->cookie = cookie;
	s->paylen = paylen;
	s->payload = copy ? NULL : payload;
	put_le32(s->buf, f->self);
	put_le32(s->buf + 4, PREFIX_MAGIC);
	if (hdrlen)
		memcpy(s->buf + PREFIX, hdr, hdrlen);
	if (copy && paylen)
		memcpy(s->buf + PREFIX + hdrlen, payload, paylen);
	s->len = PREFIX + hdrlen + (copy ? paylen : 0);

	pthread_mutex_lock(&f->mu);
	if (dst == f->self) {
		/* Loopback: delivered by the progress thread, never here. */
		s->op.kind = OP_LOOP;
		l_add_before(&f->local, &s->link);
		fab_wake(f);
	} else if (f->peers[dst].state == P_DOWN) {
		fab_done_locked(f, s);
		rc = -STORM_EUNREACH;
	} else {
		enqueue_locked(f, &f->peers[dst], s);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static int fab_send(struct sp_transport *t, uint32_t dst, const void *hdr,
		    size_t hdrlen, const void *payload, size_t paylen,
		    void *cookie)
{
	return send_ev(t, dst, hdr, hdrlen, payload, paylen, cookie, -1);
}

static int fab_send_lazy(struct sp_transport *t, uint32_t dst,
			 const void *hdr, size_t hdrlen, uint32_t ev)
{
	return send_ev(t, dst, hdr, hdrlen, NULL, 0, NULL,
		       ev < 32 ? (int)ev : -1);
}

static void fab_set_quiet(struct sp_transport *t, uint32_t mask)
{
	struct fab *f = fab_of(t);

	/* lifted: what waits unrung is taken now */
	if (atomic_exchange(&f->bell->quiet, mask) & ~mask)
		fab_wake(f);
}

/* Registers the engine's staging arena: peers read it with fi_read. */
static int fab_reg(struct sp_transport *t, void *base, size_t len,
		   uint64_t *key, uint64_t *raddr)
{
	struct fab *f = fab_of(t);
	int rc;

	if (!f->rma || f->mr)
		return -ENOSYS;
	/* a random key where the provider takes ours (an authenticated
	 * machine, make_hints), sent to readers only in MAC'd messages */
	rc = fi_mr_reg(f->domain, base, len, FI_REMOTE_READ, 0,
		       f->info->domain_attr->mr_mode & FI_MR_PROV_KEY ? 0 :
		       ((uint64_t)randombytes_random() << 32 |
			randombytes_random()), 0, &f->mr, NULL);
	if (rc) {
		f->mr = NULL;
		return rc;
	}
	*key = fi_mr_key(f->mr);
	/* Without FI_MR_VIRT_ADDR a remote address is an offset. */
	*raddr = f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
			 (uint64_t)(uintptr_t)base : 0;
	return 0;
}

/* Queues a read of src's registered memory; it keeps its place among the
 * sends to src.  Completion: sp_engine_read_done. */
static int fab_read(struct sp_transport *t, uint32_t src, void *local,
		    size_t len, uint64_t raddr, uint64_t key, void *cookie)
{
	struct fab *f = fab_of(t);
	struct fsend *s;
	int rc = 0;

	if (src >= f->nnodes || src == f->self || !f->mr)
		return -EINVAL;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->op.kind = OP_SEND;
	s->rd = 1;
	s->status = -STORM_EUNREACH; /* unless it completes */
	s->dst = src;
	s->cookie = cookie;
	s->rlocal = local;
	s->rlen = len;
	s->raddr = raddr;
	s->rkey = key;
	pthread_mutex_lock(&f->mu);
	if (f->peers[src].state == P_DOWN) {
		free(s);
		rc = -STORM_EUNREACH;
	} else {
		enqueue_locked(f, &f->peers[src], s);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static uint64_t fab_now_ns(struct sp_transport *t)
{
	(void)t;
	return mono_ns();
}

static size_t fab_max_msg(struct sp_transport *t)
{
	return fab_of(t)->max_msg;
}

/* ------------------------------------------------------------------------ */
/* Progress thread                                                           */
/* ------------------------------------------------------------------------ */

static void post_recv(struct fab *f, struct frecv *r)
{
	if (fi_recv(f->ep, r->buf, f->bufsz, NULL, FI_ADDR_UNSPEC, &r->op))
		l_add_before(&f->rx_idle, &r->link); /* retried every loop */
}

static void on_recv(struct fab *f, struct frecv *r, size_t len)
{
	uint32_t src = get_le32(r->buf), kind = get_le32(r->buf + 4);
	const uint8_t *msg = r->buf + PREFIX;
	struct peer *p;

	if (len < PREFIX + (kind == FRAG_FIRST ? 4u : 0u) || src >= f->nnodes ||
	    src == f->self || (kind != PREFIX_MAGIC && kind != FRAG_FIRST &&
			       kind != FRAG_MORE))
		return; /* not from a Storm peer: drop */
	p = &f->peers[src];
	len -= PREFIX;
	if (kind != PREFIX_MAGIC) {
		/* shm pieces arrive in order and are never interleaved. */
		if (kind == FRAG_FIRST) {
			p->rtot = get_le32(msg);
			p->rlen = 0;
			msg += 4;
			len -= 4;
			if (!p->rbuf && !(p->rbuf = malloc(f->max_msg)))
				p->rtot = 0;
		}
		if (!p->rtot || p->rtot > f->max_msg ||
		    len > p->rtot - p->rlen) {
			p->rtot = 0; /* malformed: drop the message */
			return;
		}
		memcpy(p->rbuf + p->rlen, msg, len);
		if ((p->rlen += len) < p->rtot)
			return;
		msg = p->rbuf;
		len = p->rtot;
		p->rtot = 0;
	}
	pthread_mutex_lock(&f->mu);
	if (p->state == P_DOWN) {
		/* Talking again (a rejoin): let sends through, to its new
		 * incarnation. */
		p->state = P_NEW;
		p->backoff = p->retry_at = 0;
		if (f->shm)
			fab_shm_forget_locked(f, p);
	}
	if (f->shm && p->fa == FI_ADDR_NOTAVAIL)
		fab_shm_resolve_locked(f, p, src);
	pthread_mutex_unlock(&f->mu);
	sp_engine_deliver(f->base.world, src, msg, len);
}

static void on_send(struct fab *f, struct fsend *s, int err)
{
	struct peer *p = &f->peers[s->dst];
	uint64_t now = mono_ns();
	void *cookie = NULL;
	int rd = s->rd;

	pthread_mutex_lock(&f->mu);
	l_del(&s->link);
	if (s->op.kind == OP_ORPHAN) {
		/* reported when its peer went down */
	} else if (err) {
		p->busy_since = --p->inflight ? now : 0;
		fail_locked(f, p, s, err, now);
		s = NULL;
	} else {
		p->busy_since = --p->inflight ? now : 0;
		p->state = p->state == P_NEW ? P_UP : p->state;
		p->backoff = 0;
		cookie = s->cookie;
		flush_locked(f, p, now);
	}
	pthread_mutex_unlock(&f->mu);
	if (cookie && rd)
		sp_engine_read_done(f->base.world, cookie, 0);
	else if (cookie)
		sp_engine_send_done(f->base.world, cookie);
	free(s);
}

static void on_comp(struct fab *f, void *ctx, size_t len, int err)
{
	struct fop *op = ctx;

	if (!op)
		return; /* a failed inject: liveness checks will notice */
	if (op->kind == OP_SEND || op->kind == OP_ORPHAN) {
		on_send(f, container_of(op, struct fsend, op), err);
	} else if (op->kind == OP_RECV && err != FI_ECANCELED) {
		struct frecv *r = container_of(op, struct frecv, op);
		if (!err)
			on_recv(f, r, len);
		post_recv(f, r);
	}
}

static int drain_cq(struct fab *f)
{
	struct fi_cq_msg_entry e[16];
	struct fi_cq_err_entry ee;
	ssize_t r;
	int n = 0;

	do {
		r = fi_cq_read(f->cq, e, 16);
		if (r == -FI_EAVAIL) {
			memset(&ee, 0, sizeof(ee));
			if (fi_cq_readerr(f->cq, &ee, 0) != 1)
				break;
			on_comp(f, ee.op_context, 0, ee.err ? ee.err : FI_EIO);
			n++;
			continue;
		}
		for (ssize_t i = 0; i < r; i++)
			on_comp(f, e[i].op_context, e[i].len, 0);
		n += r > 0 ? (int)r : 0;
	} while (r == 16 || r == -FI_EAVAIL);
	return n;
}

/* Report failures, deliver loopback messages, report finished sends. */
static int run_local(struct fab *f)
{
	struct link todo;
	int n = 0;

	l_init(&todo);
	pthread_mutex_lock(&f->mu);
	while (!l_empty(&f->downs)) {
		struct peer *p = container_of(f->downs.next, struct peer, dn);
		l_del(&p->dn);
		pthread_mutex_unlock(&f->mu);
		sp_engine_peer_down(f->base.world, (uint32_t)(p - f->peers));
		n++;
		pthread_mutex_lock(&f->mu);
	}
	if (!l_empty(&f->local)) {
		todo = f->local;
		todo.next->prev = todo.prev->next = &todo;
		l_init(&f->local);
	}
	pthread_mutex_unlock(&f->mu);
	while (!l_empty(&todo)) {
		struct fsend *s = SEND_OF(todo.next);
		l_del(&s->link);
		if (s->op.kind == OP_LOOP)
			sp_engine_deliver(f->base.world, f->self,
					  s->buf + PREFIX, s->len - PREFIX);
		if (s->cookie && s->rd)
			sp_engine_read_done(f->base.world, s->cookie,
					    s->status);
		else if (s->cookie)
			sp_engine_send_done(f->base.world, s->cookie);
		free(s);
		n++;
	}
	return n;
}

/* Retry queued sends; lower *deadline to when the next retry is due. */
static int run_queues(struct fab *f, uint64_t now, uint64_t *deadline)
{
	int n = 0;

	pthread_mutex_lock(&f->mu);
	f->eagain = 0; /* set again by any queue still refused */
	for (struct link *l = f->pending.next, *nx; l != &f->pending; l = nx) {
		struct peer *p = container_of(l, struct peer, pend);
		nx = l->next;
		n += flush_locked(f, p, now);
		if (!l_empty(&p->pend) && p->retry_at > now &&
		    p->retry_at < *deadline)
			*deadline = p->retry_at;
	}
	if (f->eagain && now + f->eagain_ns < *deadline)
		*deadline = now + f->eagain_ns;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* Each tick after startup.  A peer whose sends in flight have not
 * completed for a heartbeat timeout is down (tcp;ofi_rxm never fails them
 * when the peer dies).  shm has no connection to break at all: a peer we
 * sent to whose lock is free or whose incarnation changed is down. */
static void probe(struct fab *f, uint64_t now)
{
	pthread_mutex_lock(&f->mu);
	for (struct link *l = f->inflight.next; f->stall_ns &&
	     l != &f->inflight; l = l->next) {
		struct peer *p = &f->peers[SEND_OF(l)->dst];
		uint64_t from = p->busy_since > f->startup_end ?
					p->busy_since : f->startup_end;
		if (now > from + f->stall_ns) {
			down_locked(f, p); /* takes its sends off the list */
			l = &f->inflight;
		}
	}
	for (uint32_t i = 0; f->shm && i < f->nnodes; i++) {
		struct peer *p = &f->peers[i];
		if (p->sent && p->state != P_DOWN && p->lfd >= 0 &&
		    (!fab_lock_held(p->lfd) || fab_died(p->bell) ||
		     atomic_load(&p->bell->inc) != p->inc))
			down_locked(f, p);
		p->sent = 0;
	}
	pthread_mutex_unlock(&f->mu);
}

enum { WAIT_SLEPT, WAIT_WORK, WAIT_WOKEN, WAIT_REFUSED };

/* Sleep until the provider, a sender or the deadline wakes us.  Returns
 * WAIT_WORK if the last look found work, WAIT_WOKEN if something woke us before
 * the deadline, WAIT_REFUSED if fi_trywait wants progress first. */
static int wait_idle(struct fab *f, uint64_t now, uint64_t deadline,
		     uint64_t *backoff)
{
	struct pollfd pfd[2] = { { .fd = f->ev_fd, .events = POLLIN },
				 { .fd = f->cq_fd, .events = POLLIN } };
	uint64_t wait = deadline > now ? deadline - now : 0, v;
	int busy, rc = WAIT_SLEPT;

	/* Announce the sleep, then look once more: whoever adds work after
	 * this look sees sleeping == 1 and wakes us (f->mu, fab_ring()'s fence
	 * and fi_trywait() order the two sides). */
	atomic_store(&f->bell->sleeping, 1);
	pthread_mutex_lock(&f->mu);
	busy = !l_empty(&f->local) || !l_empty(&f->downs);
	pthread_mutex_unlock(&f->mu);
	if (!busy && f->mode == W_BELL)
		busy = drain_cq(f);
	if (busy)
		rc = WAIT_WORK;
	else if (!atomic_load(&f->stopping)) {
		/* a lazy message may wait unrung: not for long */
		if (atomic_load(&f->bell->owed) && wait > LAZY_MAX_NS)
			wait = LAZY_MAX_NS;
		if (f->mode == W_POLL) {
			*backoff = *backoff ? 2 * *backoff : POLL_MIN_NS;
			if (*backoff > POLL_MAX_NS)
				*backoff = POLL_MAX_NS;
			wait = wait > *backoff ? *backoff : wait;
		}
		if (f->mode == W_FD) {
			struct fid *fid = &f->cq->fid;
			if (fi_trywait(f->fabric, &fid, 1) != FI_SUCCESS) {
				rc = WAIT_REFUSED;
				wait = 0;
			}
		}
		struct timespec ts = { .tv_sec = (time_t)(wait / 1000000000u),
				       .tv_nsec = (long)(wait % 1000000000u) };
		if (wait && f->mode == W_BELL) {
			if (fab_futex(&f->bell->sleeping, FUTEX_WAIT, 1, wait) ==
				    0 || errno == EAGAIN)
				rc = WAIT_WOKEN;
		} else if (wait &&
			   ppoll(pfd, f->mode == W_FD ? 2 : 1, &ts, NULL) > 0) {
			rc = WAIT_WOKEN;
		}
	}
	atomic_store(&f->bell->sleeping, 0);
	if (pfd[0].revents && read(f->ev_fd, &v, 8))
		(void)0; /* EAGAIN: a racing read took it */
	return rc;
}

/* How long to spin after a wake-up.  A spin pays only if work follows
 * soon: for a blocked caller's reply it always may; otherwise learn from
 * the last spins (a hit keeps twice its wait, a miss halves the spin), so
 * a periodic strobe — one message per slice, nothing after it — stops
 * costing a fifth of a core while a stream of messages keeps its spin.
 * Once the spin has decayed to nothing, every SPIN_PROBE-th hot wake-up
 * tries a short one, to notice a stream starting. */
static uint64_t spin_after_wake(struct fab *f, int w, uint64_t slept)
{
	if (f->mode == W_POLL || sp_engine_waiters(f->base.world))
		return SPIN_NS;
	if (w != WAIT_WORK && !(w == WAIT_WOKEN && slept < HOT_NS))
		return 0;
	if (f->spin_len)
		return f->spin_len;
	return ++f->spin_probe % SPIN_PROBE ? 0 : 2 * SPIN_MIN_NS;
}

static void spin_hit(struct fab *f, uint64_t waited)
{
	uint64_t len = 2 * waited;

	if (len < f->spin_len)
		len = f->spin_len;
	f->spin_len = len < SPIN_MIN_NS ? SPIN_MIN_NS :
		      len > SPIN_NS	 ? SPIN_NS :
					   len;
}

static void spin_miss(struct fab *f)
{
	f->spin_len /= 2;
	if (f->spin_len < SPIN_MIN_NS)
		f->spin_len = 0;
}

static void *progress_main(void *arg)
{
	struct fab *f = arg;
	uint64_t last = mono_ns(), backoff = 0, spin = SPIN_NS;
	int alive = f->shm && pthread_mutex_lock(&f->bell->alive) == 0;
	int spinning = 0; /* an idle look since the last work */

	f->spin_len = SPIN_NS;
	while (!atomic_load(&f->stopping)) {
		uint64_t now = mono_ns(), deadline = UINT64_MAX;
		int busy;

		/* before the look: a lazy message after it sets it again */
		if (atomic_load(&f->bell->owed))
			atomic_store(&f->bell->owed, 0);
		busy = drain_cq(f) + run_local(f);
		busy += run_queues(f, now, &deadline);
		for (struct link *l = f->rx_idle.next, *nx; l != &f->rx_idle;
		     l = nx) {
			nx = l->next;
			l_del(l);
			post_recv(f, container_of(l, struct frecv, link));
		}
		if (f->hb_ns && now >= f->next_tick) {
			f->next_tick += f->hb_ns;
			if (f->next_tick <= now)
				f->next_tick = now + f->hb_ns;
			if (now >= f->startup_end)
				probe(f, now);
			/* Not activity: a heartbeat must not start a spin
			 * (16 idle nodes would pay it 4 times a second). */
			sp_engine_tick(f->base.world);
		}
		if (f->hb_ns && f->next_tick < deadline)
			deadline = f->next_tick;
		if (busy) {
			if (spinning && spin && f->mode != W_POLL)
				spin_hit(f, now - last);
			last = now;
			backoff = 0;
			spinning = 0;
		}
		if (spin && sp_engine_waiters(f->base.world))
			spin = SPIN_NS;
		/* Outside a burst go straight to sleep: its last look (and
		 * fi_trywait) sees anything our work just caused. */
		if (!busy && now - last < spin) {
			spinning = 1;
			sched_yield(); /* spinning: let an oversubscribed core run others */
			/* Someone else ran meanwhile: the core is contended
			 * (a job's ranks compute on it), and more turns
			 * would only take theirs, a context switch each (a
			 * 1 ms strobe kept the thread runnable for good).
			 * This spin ends; what was learnt stays for the next
			 * burst. */
			if (f->mode != W_POLL &&
			    !sp_engine_waiters(f->base.world) &&
			    mono_ns() - now > SPIN_MIN_NS)
				spin = 0;
		}
		if ((busy && !spin) || (!busy && now - last >= spin)) {
			if (spinning && spin && f->mode != W_POLL &&
			    !sp_engine_waiters(f->base.world))
				spin_miss(f);
			int w = wait_idle(f, now, deadline, &backoff);
			last = mono_ns();
			/* A burst: woken soon after the last work.  A refused
			 * fi_trywait is none: just progress and retry. */
			spin = spin_after_wake(f, w, last - now);
			spinning = 0;
			if (f->eagain && 2 * f->eagain_ns <= EAGAIN_MAX_NS)
				f->eagain_ns *= 2;
		}
	}
	if (alive)
		pthread_mutex_unlock(&f->bell->alive);
	return NULL;
}

static void fab_stop(struct sp_transport *t);

static int fab_start(struct sp_transport *t)
{
	struct fab *f = fab_of(t);
	int rc;

	if (f->thr_started)
		return 0;
	f->next_tick = mono_ns() + f->hb_ns;
	atomic_store(&f->stopping, 0);
	if ((rc = pthread_create(&f->thr, NULL, progress_main, f)) != 0)
		return -rc;
	f->thr_started = 1;
	if ((rc = fab_watch_start(f)) != 0) {
		fab_stop(t);
		return rc;
	}
	return 0;
}

static void fab_stop(struct sp_transport *t)
{
	struct fab *f = fab_of(t);
	uint64_t one = 1;

	fab_watch_stop(f);
	if (!f->thr_started)
		return;
	atomic_store(&f->stopping, 1);
	atomic_store(&f->bell->sleeping, 0);
	fab_futex(&f->bell->sleeping, FUTEX_WAKE, 1, 0);
	if (write(f->ev_fd, &one, 8))
		(void)0; /* saturated: it is awake */
	pthread_join(f->thr, NULL);
	f->thr_started = 0;
}

static void free_sends(struct link *h)
{
	while (!l_empty(h)) {
		struct link *l = h->next;
		l_del(l);
		free(SEND_OF(l));
	}
}

static void fab_destroy(struct sp_transport *t)
{
	struct fab *f = t ? fab_of(t) : NULL;
	char path[PATH_MAX];

	if (!f)
		return;
	fab_stop(t);
	if (f->bell != &f->own)
		atomic_store(&f->bell->ready, 0);
	/* Endpoint first: it cancels what is posted, so no buffer below is
	 * referenced by the provider any more. */
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->mr)
		fi_close(&f->mr->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	fi_freeinfo(f->info);
	free_sends(&f->inflight);
	free_sends(&f->orphans);
	free_sends(&f->local);
	for (uint32_t i = 0; f->peers && i < f->nnodes; i++) {
		free_sends(&f->peers[i].q);
		fab_shm_forget_locked(f, &f->peers[i]);
		free(f->peers[i].rbuf);
	}
	fab_shm_unmap_pins(f);
	fab_shm_unshare_gmem(f);
	fab_shm_unshare_stage(f);
	if (f->bell != &f->own) {
		if (!fab_lock_path(path, sizeof(path), f->names[f->self]))
			unlink(path); /* still locked by us: nobody else's */
		munmap(f->bell, BELL_SIZE);
	}
	if (f->lock_fd >= 0)
		close(f->lock_fd); /* releases the lock: we are gone */
	for (uint32_t i = 0; f->names && i < f->nnodes; i++)
		free(f->names[i]);
	if (f->ev_fd >= 0)
		close(f->ev_fd);
	if (f->mu_init)
		pthread_mutex_destroy(&f->mu);
	free(f->names);
	free(f->peers);
	free(f->rx);
	free(f->rxmem);
	free(f);
}

static void *fab_share_gmem(struct sp_transport *t, size_t len)
{
	return fab_shm_share_gmem(fab_of(t), len);
}

static void *fab_share_stage(struct sp_transport *t, size_t len)
{
	return fab_shm_share_stage(fab_of(t), len);
}

static int fab_peek(struct sp_transport *t, uint32_t node, uint64_t gaddr,
		    int64_t *value)
{
	struct fab *f = fab_of(t);
	int rc;

	if (!f->shm || node >= f->nnodes || node == f->self)
		return -ENOSYS;
	pthread_mutex_lock(&f->mu);
	rc = fab_shm_peek_locked(f, &f->peers[node], gaddr, value);
	pthread_mutex_unlock(&f->mu);
	return rc;
}

/* shm: a child reads a leaf's whole transfer from the parent's arena at
 * commit, straight into global memory (xfer.c): one copy, not two. */
static const void *fab_pin(struct sp_transport *t, uint32_t src,
			   uint64_t raddr, uint64_t key, size_t len, void **pin)
{
	struct fab *f = fab_of(t);
	const void *p;

	(void)key; /* shm names arena bytes by address: no key */
	if (!f->shm || src >= f->nnodes || src == f->self)
		return NULL;
	pthread_mutex_lock(&f->mu);
	p = fab_shm_pin_locked(f, &f->peers[src], raddr, len, pin);
	pthread_mutex_unlock(&f->mu);
	return p;
}

static void fab_unpin(struct sp_transport *t, void *pin)
{
	struct fab *f = fab_of(t);

	pthread_mutex_lock(&f->mu);
	fab_shm_unpin_locked(f, pin);
	pthread_mutex_unlock(&f->mu);
}

static const struct sp_transport_ops fabric_ops = {
	.version = SP_TRANSPORT_OPS_V6,
	.name = "fabric",
	.send = fab_send,
	.now_ns = fab_now_ns,
	.start = fab_start,
	.stop = fab_stop,
	.destroy = fab_destroy,
	.max_msg = fab_max_msg,
	.reg = fab_reg,
	.read = fab_read,
	.share_gmem = fab_share_gmem,
	.peek = fab_peek,
	.share_stage = fab_share_stage,
	.send_lazy = fab_send_lazy,
	.set_quiet = fab_set_quiet,
	.pin = fab_pin,
	.unpin = fab_unpin,
};

/* ------------------------------------------------------------------------ */
/* Open                                                                      */
/* ------------------------------------------------------------------------ */

/* The config's provider name to libfabric's: RDM over a utility layer. */
static const char *prov_name(const char *cfg)
{
	static const char *const alias[][2] = {
		{ "tcp", "tcp;ofi_rxm" },
		{ "verbs", "verbs;ofi_rxm" },
		{ "udp", "udp;ofi_rxd" },
	};
	for (size_t i = 0; i < sizeof(alias) / sizeof(*alias); i++)
		if (!strcmp(cfg, alias[i][0]))
			return alias[i][1];
	return cfg;
}

/* rma: also one-sided reads of a registered region (the staging arena);
 * 2: with a key of ours (an authenticated machine: unguessable, so a
 * process without the cluster key cannot read the arena), 1: the
 * provider's. */
static struct fi_info *make_hints(const char *prov, int rma)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->mr_mode = 0; /* messages: we register nothing */
	if (rma) {
		h->caps |= FI_RMA | FI_READ | FI_REMOTE_READ;
		h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
					  (rma == 1 ? FI_MR_PROV_KEY : 0);
	}
	h->domain_attr->threading = FI_THREAD_SAFE; /* send() vs progress */
	h->tx_attr->msg_order = h->rx_attr->msg_order = FI_ORDER_SAS;
	if (prov && !(h->fabric_attr->prov_name = strdup(prov))) {
		fi_freeinfo(h);
		return NULL;
	}
	return h;
}

/* "tcp, shm, sockets": the usable providers, spelled as in the config. */
static void list_providers(char *out, size_t len)
{
	struct fi_info *h = make_hints(NULL, 0), *all = NULL;
	char seen[512] = ",", key[80], *semi;
	size_t used = 0;

	out[0] = '\0';
	if (h && fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &all) == 0) {
		for (struct fi_info *i = all; i && used + 1 < len;
		     i = i->next) {
			snprintf(key, sizeof(key), ",%s,",
				 i->fabric_attr->prov_name);
			if ((semi = strstr(key, ";ofi_rx")))
				strcpy(semi, ",");
			if (strstr(seen, key) || strchr(key, ';') ||
			    strlen(seen) + strlen(key) >= sizeof(seen))
				continue; /* a duplicate, or another layering */
			strcat(seen, key + 1);
			key[strlen(key) - 1] = '\0';
			used += (size_t)snprintf(out + used, len - used, "%s%s",
						 used ? ", " : "", key + 1);
		}
	}
	if (!out[0])
		snprintf(out, len, "none");
	fi_freeinfo(all);
	fi_freeinfo(h);
}

/* Split "host:port" or "[v6]:port". */
static int split_addr(const char *a, char *host, size_t hl, char *port,
		      size_t pl)
{
	const char *colon = strrchr(a, ':');
	size_t n = colon ? (size_t)(colon - a) : 0;

	if (!colon || !colon[1] || strlen(colon + 1) >= pl)
		return -1;
	if (a[0] == '[' && n >= 2 && a[n - 1] == ']') {
		a++;
		n -= 2;
	}
	if (n == 0 || n >= hl)
		return -1;
	memcpy(host, a, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

/* Socket providers: insert every node in id order, so that node i is AV
 * index i, resolved with getaddrinfo (udp;ofi_rxd has no insertsvc). */
static int insert_hosts(struct fab *f, const sp_config_t *cfg, char *err,
			size_t errlen)
{
	uint32_t fmt = f->info->addr_format;
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_family = fmt == FI_SOCKADDR_IN ? AF_INET :
			     fmt == FI_SOCKADDR_IN6 ? AF_INET6 : AF_UNSPEC,
	};

	for (uint32_t i = 0; i < f->nnodes; i++) {
		char host[256], port[32];
		struct addrinfo *ai = NULL;
		fi_addr_t fa = FI_ADDR_NOTAVAIL;
		int rc = split_addr(cfg->addrs[i], host, sizeof(host), port,
				    sizeof(port));
		if (rc)
			return fab_fail(err, errlen, -STORM_ECONFIG,
				    "fabric: address \"%s\" of node %u is not "
				    "host:port — fix it in the config",
				    cfg->addrs[i], i);
		if ((rc = getaddrinfo(host, port, &hints, &ai)) == 0)
			rc = fi_av_insert(f->av, ai->ai_addr, 1, &fa, 0, NULL);
		freeaddrinfo(ai);
		if (rc == 1 && fa < i)
			/* the AV hands back the earlier node's index */
			return fab_fail(err, errlen, -STORM_ECONFIG,
				    "fabric: nodes %u and %u have the same "
				    "address \"%s\" — give every node its "
				    "own host:port", (unsigned)fa, i,
				    cfg->addrs[i]);
		if (rc != 1 || fa != i)
			return fab_fail(err, errlen, -STORM_EUNREACH,
				    "fabric: node %u cannot resolve \"%s\", "
				    "the address of node %u — check the host "
				    "name",
				    f->self, cfg->addrs[i], i);
		f->peers[i].fa = fa;
	}
	return 0;
}

/* From fabric to enabled endpoint, then the peers' addresses. */
static int open_fids(struct fab *f, const sp_config_t *cfg, const char *prov,
		     char *err, size_t errlen)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_MSG,
				  .wait_obj = FI_WAIT_FD };
	struct fi_av_attr ava = { .type = FI_AV_TABLE, .count = f->nnodes };
	char path[PATH_MAX] = "";
	int rc;

	rc = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (!rc)
		rc = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (rc)
		return fab_fail(err, errlen, -STORM_EPROVIDER, "fabric: provider "
			    "\"%s\" failed to open a domain (%s) — try another "
			    "provider=", prov, fi_strerror(-rc));
	cqa.size = f->info->rx_attr->size + f->info->tx_attr->size;
	rc = fi_cq_open(f->domain, &cqa, &f->cq, NULL);
	if (!rc && fi_control(&f->cq->fid, FI_GETWAIT, &f->cq_fd) != 0) {
		fi_close(&f->cq->fid); /* a wait object we cannot poll */
		f->cq = NULL;
		rc = -FI_ENOSYS;
	}
	if (rc) {
		f->mode = f->shm ? W_BELL : W_POLL;
		f->cq_fd = -1;
		cqa.wait_obj = FI_WAIT_NONE;
		rc = fi_cq_open(f->domain, &cqa, &f->cq, NULL);
	}
	if (!rc)
		rc = fi_av_open(f->domain, &ava, &f->av, NULL);
	if (!rc)
		rc = fi_endpoint(f->domain, f->info, &f->ep, NULL);
	if (!rc && f->shm) {
		if ((rc = fab_shm_claim(f, path, sizeof(path), err, errlen)))
			return rc == -STORM_ECONFIG ? rc :
			       fab_fail(err, errlen, -STORM_ECONFIG, "fabric: node "
				    "%u cannot use %s (%s) — check /dev/shm",
				    f->self, path, strerror(-rc));
		rc = fi_setname(&f->ep->fid, f->bell->region,
				strlen(f->bell->region) + 1);
	}
	if (!rc)
		rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc)
		rc = fi_ep_bind(f->ep, &f->av->fid, 0);
	if (!rc)
		rc = fi_enable(f->ep);
	if (rc)
		return fab_fail(err, errlen, rc == -FI_EADDRINUSE ||
				    rc == -FI_EADDRNOTAVAIL ? -STORM_ECONFIG :
				    -STORM_EPROVIDER, "fabric: node %u cannot "
			    "open its endpoint at \"%s\" with provider \"%s\" "
			    "(%s) — is the address this host's, and free?",
			    f->self, cfg->addrs[f->self], prov,
			    fi_strerror(-rc));
	return f->shm ? 0 : insert_hosts(f, cfg, err, errlen);
}

/* Post the receive pool: every buffer takes a whole message. */
static int post_pool(struct fab *f, const char *prov, char *err,
		     size_t errlen)
{
	f->nrx = RECV_POOL_CAP / f->bufsz;
	f->nrx = f->nrx > NRECV_MAX ? NRECV_MAX :
		 f->nrx < NRECV_MIN ? NRECV_MIN : f->nrx;
	f->nrx = f->nrx > f->info->rx_attr->size ? f->info->rx_attr->size :
						   f->nrx;
	f->rx = calloc(f->nrx, sizeof(*f->rx));
	f->rxmem = aligned_alloc(64, f->nrx * f->bufsz);
	if (!f->rx || !f->rxmem)
		return -ENOMEM;
	for (size_t i = 0; i < f->nrx; i++) {
		f->rx[i].op.kind = OP_RECV;
		f->rx[i].buf = f->rxmem + i * f->bufsz;
		int rc = (int)fi_recv(f->ep, f->rx[i].buf, f->bufsz, NULL,
				      FI_ADDR_UNSPEC, &f->rx[i].op);
		if (rc)
			return fab_fail(err, errlen, -STORM_EPROVIDER,
				    "fabric: provider \"%s\" refused receive "
				    "buffer %zu of %zu (%s)", prov, i, f->nrx,
				    fi_strerror(-rc));
	}
	return 0;
}

int sp_fabric_open(sp_world_t *w, const sp_config_t *cfg,
		   struct sp_transport **out, char *err, size_t errlen)
{
	struct fi_info *hints = NULL, *any = NULL;
	char host[256] = "", port[32] = "", avail[256];
	const char *prov;
	struct fab *f;
	int rc;

	if (!cfg || !out || !cfg->provider || !cfg->addrs ||
	    cfg->nnodes == 0 || cfg->node_id >= cfg->nnodes)
		return fab_fail(err, errlen, -STORM_ECONFIG,
			    "fabric: node id, node count and provider must be "
			    "set — call sp_config_set_node/_provider");
	for (uint32_t i = 0; i < cfg->nnodes; i++)
		if (!cfg->addrs[i])
			return fab_fail(err, errlen, -STORM_ECONFIG,
				    "fabric: node %u has no address — set one "
				    "for every node (sp_config_set_address)",
				    i);
	prov = prov_name(cfg->provider);
	if (!(f = calloc(1, sizeof(*f))))
		return -ENOMEM;
	f->base.ops = &fabric_ops;
	f->base.world = w;
	f->self = cfg->node_id;
	f->nnodes = cfg->nnodes;
	f->shm = !strncmp(prov, "shm", 3);
	f->cq_fd = f->ev_fd = f->lock_fd = -1;
	f->bell = &f->own;
	f->max_msg = cfg->chunk + HDR_ROOM;
	f->bufsz = (f->max_msg + PREFIX + 63) & ~(size_t)63;
	f->hb_ns = (uint64_t)cfg->hb_period_ms * 1000000u;
	f->stall_ns = f->hb_ns ? (uint64_t)cfg->hb_timeout_ms * 1000000u : 0;
	f->startup_end = mono_ns() + (uint64_t)cfg->startup_ms * 1000000u;
	f->eagain_ns = EAGAIN_MIN_NS;
	l_init(&f->rx_idle);
	l_init(&f->pending);
	l_init(&f->downs);
	l_init(&f->local);
	l_init(&f->inflight);
	l_init(&f->orphans);
	if ((rc = -pthread_mutex_init(&f->mu, NULL)) != 0)
		goto out;
	f->mu_init = 1;
	rc = -ENOMEM;
	if (!(f->peers = calloc(f->nnodes, sizeof(*f->peers))))
		goto out;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		l_init(&f->peers[i].q);
		l_init(&f->peers[i].pend);
		l_init(&f->peers[i].dn);
		f->peers[i].fa = FI_ADDR_NOTAVAIL;
		f->peers[i].lfd = -1;
	}
	if (f->shm) {
		if ((rc = fab_shm_names(f, cfg, err, errlen)))
			goto out;
	} else if (split_addr(cfg->addrs[f->self], host, sizeof(host), port,
			      sizeof(port))) {
		rc = fab_fail(err, errlen, -STORM_ECONFIG, "fabric: address \"%s\" "
			  "of node %u (this node) is not host:port — fix it in "
			  "the config", cfg->addrs[f->self], f->self);
		goto out;
	}
	/* With RMA if the provider has it (staging read by children), else
	 * messages only. */
	/* (on shm the node is the trust boundary and only root may read a
	 * region: the provider's keys; its own mode is also the faster,
	 * ~15 % on 1 MiB at N = 8) */
	for (int rma = cfg->auth && !f->shm ? 2 : 1; rma >= 0; rma--) {
		fi_freeinfo(hints);
		rc = -ENOMEM;
		if (!(hints = make_hints(prov, rma)))
			goto out;
		hints->addr_format = f->shm ? FI_ADDR_STR : FI_FORMAT_UNSPEC;
		rc = fi_getinfo(FAB_FI_VERSION, f->shm ? NULL : host,
				f->shm ? NULL : port, f->shm ? 0 : FI_SOURCE,
				hints, &f->info);
		f->rma = rma && !rc;
		f->cma = f->shm && f->rma;
		if (!rc) {
			qb_log(LOG_INFO, "fabric: node %u: %s, %s", f->self,
			       prov, rma == 2 ? "staging read remotely, under "
			       "a random key" : rma ? "staging read remotely, "
			       "under the provider's key" : "transfers by "
			       "messages");
			break;
		}
	}
	if (rc && !f->shm &&
	    fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, hints, &any) == 0) {
		rc = fab_fail(err, errlen, -STORM_ECONFIG,
			  "fabric: provider \"%s\" cannot bind node %u to "
			  "\"%s\" (fi_getinfo: %s) — use an address of this "
			  "host", prov, f->self, cfg->addrs[f->self],
			  fi_strerror(-rc));
		goto out;
	} else if (rc) {
		list_providers(avail, sizeof(avail));
		rc = fab_fail(err, errlen, -STORM_EPROVIDER,
			  "provider \"%s\" is not available (fi_getinfo: %s); "
			  "available here: %s — set provider= in the config",
			  cfg->provider, fi_strerror(-rc), avail);
		goto out;
	}
	if (f->info->ep_attr->max_msg_size < f->bufsz) {
		rc = fab_fail(err, errlen, -STORM_EPROVIDER,
			  "fabric: provider \"%s\" carries at most %zu bytes, "
			  "chunk %zu needs %zu — lower the chunk size", prov,
			  f->info->ep_attr->max_msg_size, cfg->chunk, f->bufsz);
		goto out;
	}
	f->inject_size = f->info->tx_attr->inject_size;
	f->iov_limit = f->info->tx_attr->iov_limit;
	if ((rc = open_fids(f, cfg, prov, err, errlen)))
		goto out;
	if ((f->ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		rc = fab_fail(err, errlen, -errno, "fabric: node %u: eventfd: %s "
			  "— raise the open-files limit", f->self,
			  strerror(errno));
		goto out;
	}
	if ((rc = post_pool(f, prov, err, errlen)))
		goto out;
	if (f->shm)
		atomic_store(&f->bell->ready, 1); /* peers may insert us now */
	fi_freeinfo(hints);
	*out = &f->base;
	return 0;
out:
	if (rc == -ENOMEM)
		fab_fail(err, errlen, rc, "fabric: node %u: out of memory while "
		     "opening (%zu-byte receive buffers)", f->self, f->bufsz);
	fi_freeinfo(any);
	fi_freeinfo(hints);
	fab_destroy(&f->base);
	return rc;
}
