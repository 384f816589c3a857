/*
 * engine.c — a node's world: open/close, global memory, events, and the
 * dispatch of incoming messages to the protocol modules.
 *
 * Invariant: every field of struct sp_world is read or written only under
 * w->lock; back-ends enter through sp_engine_* (which take it) and leave
 * through tp->ops->send (called with it held, never blocking).
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "sp_engine.h"

static void seterr(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ---- messages ------------------------------------------------------------ */

void sp_msg_begin(sp_world_t *w, struct sp_wbuf *b, uint8_t type,
		  uint64_t epoch)
{
	b->p = w->sbuf;
	b->cap = w->sbuf_cap;
	b->len = 0;
	b->overflow = 0;
	sp_w_u16(b, SP_WIRE_MAGIC);
	sp_w_u8(b, w->auth ? SP_WIRE_VERSION_AUTH : SP_WIRE_VERSION);
	sp_w_u8(b, type);
	sp_w_u32(b, w->id);
	sp_w_u64(b, epoch);
	if (w->auth) { /* the fields' length and the MAC: sp_msg_send */
		static const uint8_t none[4 + SP_MAC_LEN];

		sp_w_bytes(b, none, sizeof(none));
	}
}

/* The MAC of an authenticated message (SipHash-2-4 with 128-bit output,
 * libsodium's crypto_shorthash_siphashx24, under keys derived from the
 * cluster key): over the header, the fields' length, and a SipHash of
 * the fields and one of the payload under keys of their own.  Hashing
 * the two parts apart lets the sender MAC a payload it does not copy
 * (it goes out behind the fields), and the receiver find the parts by
 * the authenticated length.  SipHash costs ~35 ns for a small message,
 * a tenth of keyed BLAKE2b: the protocols' critical paths are chains of
 * small messages. */
static void msg_mac(const sp_world_t *w, uint8_t mac[SP_MAC_LEN],
		    const uint8_t *hdr, const uint8_t *fields, size_t flen,
		    const void *payload, size_t plen)
{
	uint8_t in[SP_HDR_LEN + 4 + 2 * SP_MAC_LEN];

	memcpy(in, hdr, SP_HDR_LEN + 4);
	crypto_shorthash_siphashx24(in + SP_HDR_LEN + 4, fields, flen,
				    w->mac_key[1]);
	crypto_shorthash_siphashx24(in + SP_HDR_LEN + 4 + SP_MAC_LEN,
				    payload, plen, w->mac_key[2]);
	crypto_shorthash_siphashx24(mac, in, sizeof(in), w->mac_key[0]);
}

static int msg_send(sp_world_t *w, uint32_t dst, struct sp_wbuf *b,
		    const void *payload, size_t plen, void *cookie,
		    sp_ev_t lazy_ev)
{
	const struct sp_transport_ops *ops = w->tp->ops;
	int rc;

	if (b->overflow || w->closed)
		return -EMSGSIZE;
	if (w->auth) {
		size_t at = SP_HDR_LEN + 4 + SP_MAC_LEN,
		       flen = b->len - at;

		for (int i = 0; i < 4; i++)
			b->p[SP_HDR_LEN + i] = (uint8_t)(flen >> (8 * i));
		msg_mac(w, b->p + SP_HDR_LEN + 4, b->p, b->p + at, flen,
			payload ? payload : (const void *)"", plen);
	}
	if (lazy_ev != SP_EV_NONE && !payload && !cookie &&
	    ops->version >= SP_TRANSPORT_OPS_V5 && ops->send_lazy)
		rc = ops->send_lazy(w->tp, dst, b->p, b->len, lazy_ev);
	else
		rc = ops->send(w->tp, dst, b->p, b->len, payload, plen,
			       cookie);
	if (rc == -STORM_EUNREACH && dst != w->id)
		sp_nodeset_add(w->deferred, dst);
	return rc;
}

int sp_msg_send(sp_world_t *w, uint32_t dst, struct sp_wbuf *b,
		const void *payload, size_t plen, void *cookie)
{
	return msg_send(w, dst, b, payload, plen, cookie, SP_EV_NONE);
}

int sp_msg_send_lazy(sp_world_t *w, uint32_t dst, struct sp_wbuf *b,
		     sp_ev_t ev)
{
	return msg_send(w, dst, b, NULL, 0, NULL, ev);
}

void sp_deferred_run(sp_world_t *w)
{
	int64_t x;

	while ((x = sp_nodeset_next(w->deferred, 0)) >= 0) {
		sp_nodeset_del(w->deferred, (uint32_t)x);
		sp_failure_locked(w, (uint32_t)x);
	}
}

uint64_t sp_now(sp_world_t *w)
{
	return w->tp->ops->now_ns(w->tp);
}

/* ---- events -------------------------------------------------------------- */

void sp_event_signal(sp_world_t *w, sp_ev_t ev, int status)
{
	if (ev == SP_EV_NONE || ev >= w->nevents)
		return;
	if (status) {
		w->ev[ev].nerr++;
		w->ev[ev].err = status;
	} else {
		w->ev[ev].ok++;
	}
	w->ev[ev].at = sp_now(w);
	pthread_cond_broadcast(&w->cond);
	if (!w->ev[ev].quiet)
		sp_notify(w);
}

int sp_event_quiet(sp_world_t *w, sp_ev_t ev, int quiet)
{
	if (!w || ev >= w->nevents)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	w->ev[ev].quiet = quiet != 0;
	/* a signal that came while it was quiet is not missed */
	if (!quiet && (w->ev[ev].ok || w->ev[ev].nerr))
		sp_notify(w);
	/* the back-end may then leave this node asleep for messages that
	 * only signal it (sp_put_posted) */
	if (ev < 32 && w->tp->ops->version >= SP_TRANSPORT_OPS_V5 &&
	    w->tp->ops->set_quiet) {
		uint32_t mask = 0;

		for (sp_ev_t e = 0; e < w->nevents && e < 32; e++)
			if (w->ev[e].quiet)
				mask |= 1u << e;
		w->tp->ops->set_quiet(w->tp, mask);
	}
	pthread_mutex_unlock(&w->lock);
	return 0;
}

int sp_event_time(sp_world_t *w, sp_ev_t ev, uint64_t *ns)
{
	if (!w || ev >= w->nevents || !ns)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	*ns = w->ev[ev].at;
	pthread_mutex_unlock(&w->lock);
	return 0;
}

static void notify_write(int fd)
{
	static const uint64_t one = 1;

	/* Non-blocking: a counter already at its limit is readable anyway. */
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		(void)0;
}

void sp_notify(sp_world_t *w)
{
	if (w->notify_defer)
		w->notify_owed = 1;
	else
		notify_write(w->notify_fd);
}

/* The back-end's entry points notify after the world lock is released:
 * a main loop woken while the progress thread still holds it would only
 * block on it again (two more context switches per event). */
static void entry_lock(sp_world_t *w)
{
	pthread_mutex_lock(&w->lock);
	w->notify_defer = 1;
}

static void entry_unlock(sp_world_t *w)
{
	int owed = w->notify_owed, fd = w->notify_fd;

	w->notify_defer = 0;
	w->notify_owed = 0;
	pthread_mutex_unlock(&w->lock);
	if (owed)
		notify_write(fd);
}

int sp_notify_fd(sp_world_t *w)
{
	int rc;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	if (w->closed) {
		rc = -STORM_ECLOSED;
	} else if (w->notify_fd < 0) {
		w->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		rc = w->notify_fd < 0 ? -errno : w->notify_fd;
		/* signals that came before it was asked for are not lost */
		if (rc >= 0)
			sp_notify(w);
	} else {
		rc = w->notify_fd;
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static void deadline_after(struct timespec *ts, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

void sp_wait_init(sp_world_t *w, struct sp_wait *wt, int timeout_ms)
{
	(void)w;
	wt->forever = timeout_ms < 0;
	wt->spin_until = 0;
	if (!wt->forever)
		deadline_after(&wt->dl, timeout_ms);
}

static int wait_locked(sp_world_t *w, struct sp_wait *wt)
{
	if (w->spin_ns) {
		/* An answer often comes sooner than a condvar wake-up would
		 * take; yield rather than spin, cores may be fewer than
		 * nodes. */
		uint64_t now = sp_now(w);

		if (!wt->spin_until)
			wt->spin_until = now + w->spin_ns;
		if (now < wt->spin_until) {
			pthread_mutex_unlock(&w->lock);
			sched_yield();
			pthread_mutex_lock(&w->lock);
			return 0;
		}
	}
	if (wt->forever)
		return pthread_cond_wait(&w->cond, &w->lock) ? -EINVAL : 0;
	return pthread_cond_timedwait(&w->cond, &w->lock, &wt->dl) ==
			       ETIMEDOUT ?
		       -ETIMEDOUT :
		       0;
}

int sp_wait(sp_world_t *w, struct sp_wait *wt)
{
	int rc;

	atomic_fetch_add(&w->waiters, 1);
	rc = wait_locked(w, wt);
	atomic_fetch_sub(&w->waiters, 1);
	return rc;
}

unsigned sp_engine_waiters(sp_world_t *w)
{
	return atomic_load(&w->waiters);
}

int sp_test_event(sp_world_t *w, sp_ev_t ev, int timeout_ms)
{
	struct sp_wait wt;
	int rc = 0;

	if (!w || ev >= w->nevents)
		return -EINVAL;
	sp_wait_init(w, &wt, timeout_ms);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct sp_event *e = &w->ev[ev];

		if (e->nerr) {
			e->nerr--;
			rc = e->err;
			break;
		}
		if (e->ok) {
			e->ok--;
			rc = 0;
			break;
		}
		if (w->closed) {
			rc = -STORM_ECLOSED;
			break;
		}
		if (timeout_ms == 0) {
			rc = -EAGAIN;
			break;
		}
		if (sp_wait(w, &wt) == -ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}


/* ---- global memory --------------------------------------------------------- */

void *sp_gmem(sp_world_t *w, size_t *size)
{
	if (size)
		*size = w->gmem_size;
	return w->gmem;
}

int sp_gmem_read(sp_world_t *w, uint64_t gaddr, void *buf, size_t len)
{
	if (!w || !buf || gaddr > w->gmem_size || len > w->gmem_size - gaddr)
		return -EINVAL;
	pthread_mutex_lock(&w->lock); /* commits happen under it */
	memcpy(buf, w->gmem + gaddr, len);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

static int gvar_check(const sp_world_t *w, uint64_t a)
{
	return (a % 8 == 0 && a <= w->gmem_size - 8) ? 0 : -EINVAL;
}

int sp_gvar_read(sp_world_t *w, uint64_t a, int64_t *value)
{
	if (!w || !value || gvar_check(w, a))
		return -EINVAL;
	*value = __atomic_load_n((int64_t *)(void *)(w->gmem + a),
				 __ATOMIC_ACQUIRE);
	return 0;
}

int sp_gvar_write_local(sp_world_t *w, uint64_t a, int64_t value)
{
	if (!w || gvar_check(w, a))
		return -EINVAL;
	__atomic_store_n((int64_t *)(void *)(w->gmem + a), value,
			 __ATOMIC_RELEASE);
	return 0;
}

uint32_t sp_node_id(const sp_world_t *w)
{
	return w->id;
}

uint32_t sp_node_count(const sp_world_t *w)
{
	return w->n;
}

/* ---- dispatch ------------------------------------------------------------ */

typedef void (*sp_handler_fn)(sp_world_t *w, uint32_t src, uint8_t type,
			      uint64_t epoch, struct sp_rbuf *r);

static void on_mship(sp_world_t *w, uint32_t src, uint8_t type,
		     uint64_t epoch, struct sp_rbuf *r)
{
	sp_mship_on_msg(w, src, type, epoch, r);
}

static void on_xfer(sp_world_t *w, uint32_t src, uint8_t type,
		    uint64_t epoch, struct sp_rbuf *r)
{
	(void)epoch;
	sp_xfer_on_msg(w, src, type, r);
}

static void on_caw(sp_world_t *w, uint32_t src, uint8_t type, uint64_t epoch,
		   struct sp_rbuf *r)
{
	(void)epoch;
	sp_caw_on_msg(w, src, type, r);
}

/* Static handler table keyed by message type (append only, like the
 * message numbers themselves). */
static const sp_handler_fn handlers[SP_MSG_MAX] = {
	[SP_MSG_HELLO] = on_mship,	[SP_MSG_VIEW] = on_mship,
	[SP_MSG_VIEW_ACK] = on_mship,	[SP_MSG_STABLE] = on_mship,
	[SP_MSG_SUSPECT] = on_mship,	[SP_MSG_JOIN] = on_mship,
	[SP_MSG_HB] = on_mship,		[SP_MSG_XDATA] = on_xfer,
	[SP_MSG_XSTAGED] = on_xfer,	[SP_MSG_XDECIDE] = on_xfer,
	[SP_MSG_XDONE] = on_xfer,	[SP_MSG_CAW_REQ] = on_caw,
	[SP_MSG_CAW_QUERY] = on_caw,	[SP_MSG_CAW_VOTE] = on_caw,
	[SP_MSG_CAW_WRITE] = on_caw,	[SP_MSG_CAW_WACK] = on_caw,
	[SP_MSG_CAW_RESULT] = on_caw,	[SP_MSG_XRMA] = on_xfer,
	[SP_MSG_XPUT] = on_xfer,	[SP_MSG_XPOST] = on_xfer,
};

void sp_engine_deliver(sp_world_t *w, uint32_t src, const void *msg,
		       size_t len)
{
	struct sp_rbuf r = {.p = msg, .len = len};
	uint16_t magic = sp_r_u16(&r);
	uint8_t ver = sp_r_u8(&r), type = sp_r_u8(&r);
	uint32_t hsrc = sp_r_u32(&r);
	uint64_t epoch = sp_r_u64(&r);

	/* Foreign, truncated or future-version traffic is dropped whole; on
	 * an authenticated machine, so is a message whose MAC does not check
	 * out (no key, another key, altered), before anything of it is
	 * read. */
	if (r.bad || magic != SP_WIRE_MAGIC ||
	    ver != (w->auth ? SP_WIRE_VERSION_AUTH : SP_WIRE_VERSION) ||
	    type == 0 || type >= SP_MSG_MAX || !handlers[type] ||
	    hsrc != src || src >= w->n)
		return;
	if (w->auth) {
		const uint8_t *m = msg;
		size_t at = SP_HDR_LEN + 4 + SP_MAC_LEN, flen;
		uint8_t mac[SP_MAC_LEN];

		if (len < at)
			return;
		flen = (size_t)m[SP_HDR_LEN] | (size_t)m[SP_HDR_LEN + 1] << 8 |
		       (size_t)m[SP_HDR_LEN + 2] << 16 |
		       (size_t)m[SP_HDR_LEN + 3] << 24;
		if (flen > len - at)
			return;
		msg_mac(w, mac, m, m + at, flen, m + at + flen,
			len - at - flen);
		if (crypto_verify_16(mac, m + SP_HDR_LEN + 4)) {
			w->auth_dropped++;
			return;
		}
		r.off = at;
	}
	entry_lock(w);
	if (!w->closed) {
		sp_mship_heard(w, src);
		handlers[type](w, src, type, epoch, &r);
		sp_deferred_run(w);
	}
	entry_unlock(w);
}

void sp_engine_send_done(sp_world_t *w, void *cookie)
{
	entry_lock(w);
	sp_xfer_send_done(w, cookie);
	sp_deferred_run(w);
	entry_unlock(w);
}

void sp_engine_read_done(sp_world_t *w, void *cookie, int status)
{
	entry_lock(w);
	sp_xfer_read_done(w, cookie, status);
	sp_deferred_run(w);
	entry_unlock(w);
}

void sp_engine_peer_down(sp_world_t *w, uint32_t node)
{
	entry_lock(w);
	if (!w->closed && node < w->n && node != w->id) {
		sp_failure_locked(w, node);
		sp_deferred_run(w);
	}
	entry_unlock(w);
}

void sp_engine_tick(sp_world_t *w)
{
	entry_lock(w);
	if (!w->closed) {
		sp_mship_tick(w);
		sp_deferred_run(w);
	}
	entry_unlock(w);
}

void sp_engine_kill(sp_world_t *w)
{
	/* A killed node's handle is dead: wake every blocked caller so it
	 * returns -STORM_ECLOSED instead of waiting for work that can never
	 * finish.  sp_close() still frees the world. */
	pthread_mutex_lock(&w->lock);
	w->closed = 1;
	pthread_cond_broadcast(&w->cond);
	sp_notify(w); /* a main loop learns it from sp_test_event() */
	pthread_mutex_unlock(&w->lock);
}

int sp_engine_is_neighbor(sp_world_t *w, uint32_t node)
{
	int yes = 0;

	pthread_mutex_lock(&w->lock);
	if (!w->closed && w->v.installed && node < w->n) {
		yes = w->v.parent[w->id] == (int32_t)node ||
		      (w->v.parent[node] == (int32_t)w->id);
	}
	pthread_mutex_unlock(&w->lock);
	return yes;
}

/* ---- open / close ------------------------------------------------------- */

static int is_inproc(const sp_config_t *cfg)
{
	return cfg->provider && strcmp(cfg->provider, "inproc") == 0;
}

static void world_free(sp_world_t *w)
{
	if (!w)
		return;
	sp_caw_fini(w);
	sp_xfer_fini(w);
	sp_mship_fini(w);
	sp_facts_fini(&w->mywrite);
	sp_stage_fini(w); /* after the back-end: it held the registration */
	sp_nodeset_destroy(w->deferred);
	if (w->notify_fd >= 0)
		close(w->notify_fd);
	free(w->ev);
	if (!w->gmem_shared)
		free(w->gmem); /* else the back-end's, gone with it */
	free(w->sbuf);
	sodium_memzero(w->mac_key, sizeof(w->mac_key));
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

int sp_open(const sp_config_t *cfg, sp_world_t **out, char *err,
	    size_t errlen)
{
	sp_world_t *w;
	pthread_condattr_t ca;
	int rc;

	if (!cfg || !out)
		return -EINVAL;
	if (cfg->nnodes == 0) {
		seterr(err, errlen,
		       "no node id and node count configured; call sp_config_set_node() first");
		return -STORM_ECONFIG;
	}
	if (!cfg->provider) {
		seterr(err, errlen,
		       "no provider configured; set one (\"inproc\", \"tcp\", \"shm\", …)");
		return -STORM_ECONFIG;
	}
	if (is_inproc(cfg) && !cfg->machine) {
		seterr(err, errlen,
		       "provider \"inproc\" needs a machine: sp_config_set_machine()");
		return -STORM_ECONFIG;
	}
	if (cfg->auth && sodium_init() < 0) {
		seterr(err, errlen, "libsodium cannot start");
		return -ENOMEM;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	w->notify_fd = -1;
	w->id = cfg->node_id;
	w->n = cfg->nnodes;
	w->nwords = sp_nodeset_words(cfg->nnodes);
	w->fanout = cfg->fanout;
	w->chunk = cfg->chunk;
	w->auth = cfg->auth;
	/* three MAC keys from the cluster key, one per use (msg_mac) */
	for (int k = 0; w->auth && k < 3; k++) {
		char ctx[32];

		snprintf(ctx, sizeof(ctx), "storm fabric mac %d", k);
		crypto_generichash_blake2b(w->mac_key[k], sizeof(w->mac_key[k]),
					   (const uint8_t *)ctx, strlen(ctx),
					   cfg->auth_key,
					   sizeof(cfg->auth_key));
	}
	w->gmem_size = cfg->gmem_bytes;
	w->nevents = cfg->nevents;
	w->hb_period_ns = (uint64_t)cfg->hb_period_ms * 1000000u;
	w->hb_timeout_ns = (uint64_t)cfg->hb_timeout_ms * 1000000u;
	w->startup_ns = (uint64_t)cfg->startup_ms * 1000000u;
	w->sbuf_cap = 256 + (size_t)w->nwords * 8 * 4 + 64 * 1024;
	w->sbuf = malloc(w->sbuf_cap);
	w->ev = calloc(w->nevents, sizeof(*w->ev));
	/* Page-aligned so back-ends may register it for RMA later. */
	if (posix_memalign((void **)&w->gmem, 4096, w->gmem_size))
		w->gmem = NULL;
	if (sp_nodeset_create(w->n, &w->deferred))
		w->deferred = NULL;
	if (!w->sbuf || !w->ev || !w->gmem || !w->deferred ||
	    sp_facts_init(&w->mywrite, w->nwords)) {
		world_free(w);
		return -ENOMEM;
	}
	memset(w->gmem, 0, w->gmem_size);
	rc = sp_mship_init(w, cfg);
	if (rc) {
		world_free(w);
		return rc;
	}
	rc = is_inproc(cfg) ? sp_inproc_open(w, cfg, &w->tp, err, errlen) :
			      sp_fabric_open(w, cfg, &w->tp, err, errlen);
	if (rc) {
		world_free(w);
		return rc;
	}
	w->max_msg = w->tp->ops->max_msg(w->tp);
	if (w->tp->ops->version >= SP_TRANSPORT_OPS_V3 &&
	    w->tp->ops->share_gmem) {
		/* Peers may then read our variables without our threads
		 * (COMPARE by direct loads, caw.c). */
		void *g = w->tp->ops->share_gmem(w->tp, w->gmem_size);

		if (g) {
			free(w->gmem);
			w->gmem = g;
			w->gmem_shared = 1;
		}
	}
	/* Real nodes answer in tens of µs; virtual time needs no spinning. */
	w->spin_ns = is_inproc(cfg) ? 0 : SP_WAIT_SPIN_NS;
	if (w->max_msg < w->chunk + 1024 + (size_t)w->nwords * 8) {
		seterr(err, errlen,
		       "chunk size %zu does not fit the back-end's %zu-byte messages; lower the chunk size",
		       w->chunk, w->max_msg);
		w->tp->ops->destroy(w->tp);
		world_free(w);
		return -STORM_ECONFIG;
	}
	sp_stage_init(w, cfg->staging_bytes != SIZE_MAX ? cfg->staging_bytes :
			 4 * w->gmem_size > (8u << 20) ? 4 * w->gmem_size :
							 (8u << 20));
	rc = w->tp->ops->start(w->tp);
	if (rc) {
		seterr(err, errlen, "cannot start the progress engine: %s",
		       storm_strerror(rc));
		w->tp->ops->destroy(w->tp);
		world_free(w);
		return rc;
	}
	pthread_mutex_lock(&w->lock);
	sp_mship_boot(w, cfg);
	sp_deferred_run(w);
	pthread_mutex_unlock(&w->lock);
	if (!is_inproc(cfg)) {
		/* Wait for the first view: the machine is usable only then. */
		rc = sp_view_wait(w, 1, (int)cfg->startup_ms + 1000);
		if (rc) {
			seterr(err, errlen,
			       "node %u: no membership view within %u ms (%s); is node 0 (the root) running and reachable at %s?",
			       w->id, cfg->startup_ms, storm_strerror(rc),
			       cfg->addrs && cfg->addrs[0] ? cfg->addrs[0] : "?");
			sp_close(w);
			return rc == -ETIMEDOUT ? -STORM_EUNREACH : rc;
		}
	}
	*out = w;
	return 0;
}

void sp_close(sp_world_t *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->closed = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	w->tp->ops->stop(w->tp);
	w->tp->ops->destroy(w->tp);
	world_free(w);
}
