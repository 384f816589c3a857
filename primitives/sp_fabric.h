/*
 * sp_fabric.h — the libfabric back-end's records and its shm helpers
 * (private to fabric.c and fabric_shm.c; see fabric.c for the design).
 */
#ifndef SP_FABRIC_H
#define SP_FABRIC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "sp_config.h"
#include "sp_transport.h"

#define FAB_FI_VERSION FI_VERSION(1, 12)
#define PREFIX 8u               /* sender id + magic; keeps hdr 8-aligned */
#define PREFIX_MAGIC 0x53544d31u /* a whole message */
#define FRAG_FIRST 0x53544d46u  /* shm: first piece, total length follows */
#define FRAG_MORE 0x53544d43u   /* shm: next piece */
#define FRAG_MAX 4096u          /* shm piece size, the provider's inject */
#define HDR_ROOM 4096u          /* max_msg = chunk + HDR_ROOM */
#define NRECV_MAX 64u           /* receive buffers posted: 8..64, */
#define NRECV_MIN 8u
#define RECV_POOL_CAP (64u << 20) /* and no more than 64 MiB of them */
#define SMALL_COPY 256u         /* payloads this small are copied: one iov */
#define SPIN_NS 200000u         /* spin (yielding) this long after activity ... */
#define HOT_NS 1000000u         /* ... if the last sleep was this short */
#define SPIN_MIN_NS 20000u      /* adaptive spins shorter than this stop */
#define SPIN_PROBE 16u          /* then every 16th hot wake-up probes */
#define LAZY_MAX_NS 20000000u   /* a lazy message waits at most this */
#define POLL_MIN_NS 20000u      /* polling sleeps double from this ... */
#define POLL_MAX_NS 5000000u    /* ... up to this (W_POLL) */
#define EAGAIN_MIN_NS 100000u   /* idle retry after EAGAIN, doubling */
#define EAGAIN_MAX_NS 10000000u
#define RETRY_MIN_NS 10000000u  /* startup: resend to a refusing peer */
#define RETRY_MAX_NS 200000000u
#define SHM_DIR "/dev/shm/"
#define BELL_SIZE 4096u
#define REGION_WAIT_NS 50000u /* a held region lock: wait, then EAGAIN */

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

struct link {
	struct link *next, *prev;
};

enum op_kind { OP_RECV = 1, OP_SEND, OP_LOOP, OP_DONE, OP_ORPHAN };
enum wait_mode { W_FD, W_BELL, W_POLL };
enum peer_state { P_NEW, P_UP, P_DOWN };

/* The provider's op_context: its scratch first (FI_CONTEXT2 mode), then
 * which of our records this is. */
struct fop {
	struct fi_context2 ctx;
	int kind;
};

struct frecv {
	struct fop op;
	struct link link; /* on f->rx_idle when re-posting failed */
	uint8_t *buf;
};

struct fsend {
	struct fop op;
	struct link link;
	uint32_t dst;
	uint64_t seq;
	void *cookie;
	const void *payload; /* NULL: copied into buf */
	size_t paylen, len;  /* len: bytes in buf */
	size_t off;          /* frag: message bytes already posted */
	int frag;            /* shm, over one inject: goes as pieces */
	int lazy_ev;         /* send_lazy's event, or -1 */
	int rd;              /* an RMA read of rlen bytes into rlocal, */
	int status;          /* reported with this (0 or -STORM_EUNREACH) */
	void *rlocal;
	size_t rlen;
	uint64_t raddr, rkey;
	uint8_t buf[];       /* prefix, hdr [, payload] */
};

/* The start of a node's shm lock file, mapped by its peers. */
struct fab_watch;

struct bell {
	_Atomic uint32_t sleeping; /* futex word: 1 while its thread sleeps */
	_Atomic uint32_t ready;    /* its endpoint is enabled */
	_Atomic uint64_t inc;      /* incarnation, new at every open */
	char region[240];          /* its shm endpoint name, per incarnation */
	pthread_mutex_t alive;     /* robust, held by its progress thread */
	_Atomic int32_t pid;       /* its process: staging is read by CMA */
	_Atomic uint64_t gmem_len; /* its global memory file "<region>.gmem"
				    * exists with this size; 0: none */
	_Atomic uint64_t stage_base; /* its staging arena "<region>.stage" */
	_Atomic uint64_t stage_len;  /* at this address of its, this long
				      * (set last); 0: none */
	_Atomic uint32_t quiet;    /* its quiet events (set_quiet): a lazy
				    * message signalling one does not ring */
	_Atomic uint32_t owed;     /* a lazy message waits unrung: it sleeps
				    * at most LAZY_MAX_NS */
};

/* shm: a peer's staging arena mapped here.  Counted: the peer's record
 * holds one reference while it knows that incarnation, each pin (the
 * transport's pin op) one more, so a pinned transfer stays readable after
 * the peer died and was forgotten.  On f->pinmaps until the last goes. */
struct fab_pinmap {
	struct fab_pinmap *next;
	void *m;
	size_t len;
	uint32_t refs;
};

/* A node as seen from here.  P_NEW: no send to it has completed yet
 * (startup, or talking again after P_DOWN), so at most one is in flight
 * and a failed one can be retried without reordering. */
struct peer {
	struct link q;    /* waiting sends, in seq order */
	struct link pend; /* on f->pending while q is not empty */
	struct link dn;   /* on f->downs until peer_down is reported */
	fi_addr_t fa;     /* FI_ADDR_NOTAVAIL until inserted */
	uint64_t seq, retry_at, backoff, stall_since;
	uint64_t busy_since; /* sends in flight, none completed since */
	uint32_t inflight;
	uint8_t state, sent; /* sent: posted to since the last shm probe */
	int lfd;          /* shm: its lock file, bell and incarnation */
	struct bell *bell;
	uint64_t inc;
	int32_t pid;      /* shm: its process, for CMA reads */
	uint8_t *region;  /* shm: its region header (lock), or NULL */
	const uint8_t *gmem; /* shm: its global memory, mapped read-only */
	size_t gmem_len;
	const uint8_t *stage; /* shm: its staging arena, mapped read-only */
	struct fab_pinmap *stage_map; /* that mapping, counted (pin) */
	size_t stage_len;
	uint64_t stage_base;  /* the arena's address in its process */
	uint8_t *rbuf;    /* shm: message being reassembled (progress) */
	size_t rlen, rtot;
};

struct fab {
	struct sp_transport base; /* first: recovered with container_of */
	/* Immutable after open. */
	uint32_t self, nnodes;
	size_t max_msg, bufsz, inject_size, iov_limit;
	int shm, mode, cq_fd, ev_fd, lock_fd;
	uint64_t startup_end, hb_ns, stall_ns;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_mr *mr;      /* the engine's staging arena, or NULL */
	int rma;                /* the provider was opened with FI_RMA */
	int cma;                /* shm: reads done by process_vm_readv */
	struct bell own, *bell; /* &own, or our shm lock file */
	void *gmem;             /* shm: our global memory (share_gmem) */
	size_t gmem_len;
	void *stage;            /* shm: our staging arena (share_stage) */
	struct fab_pinmap *pinmaps; /* shm: peers' arenas mapped (mu) */
	size_t stage_len;
	char **names;           /* shm: base name of every node */
	/* Receive pool: the progress thread's alone once started. */
	struct frecv *rx;
	size_t nrx;
	uint8_t *rxmem;
	struct link rx_idle;
	/* Protected by mu. */
	pthread_mutex_t mu;
	int mu_init, eagain; /* eagain: a queue waits for tx space */
	uint64_t eagain_ns;
	struct peer *peers;
	struct link pending, downs, local, inflight, orphans;
	struct fab_watch *watch; /* shm: fabric_shm_watch.c, or NULL */
	/* Progress thread. */
	pthread_t thr;
	int thr_started;
	uint64_t next_tick;
	uint64_t spin_len;    /* adaptive spin after a wake (progress_main) */
	unsigned spin_probe;
	atomic_int stopping;
};

static inline void l_init(struct link *h) { h->next = h->prev = h; }
static inline int l_empty(const struct link *h) { return h->next == h; }
static inline void l_add_before(struct link *pos, struct link *n)
{
	n->prev = pos->prev;
	n->next = pos;
	pos->prev->next = n;
	pos->prev = n;
}
static inline void l_del(struct link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	l_init(n);
}
#define SEND_OF(l) container_of((l), struct fsend, link)

static inline struct fab *fab_of(struct sp_transport *t)
{
	return container_of(t, struct fab, base);
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void put_le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* fabric.c */
/* Error text for a human: what, where, what to do.  Returns rc. */
int fab_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void fab_wake(struct fab *f);
/* A finished send or read: the progress thread reports it (f->mu held). */
void fab_done_locked(struct fab *f, struct fsend *s);

/* fabric_shm.c: bells, lock files, lazy insertion, pieces (f->mu held
 * where the name says _locked) */
long fab_futex(_Atomic uint32_t *w, int op, uint32_t val, uint64_t ns);
int fab_quiet(struct bell *b, uint32_t ev);
void fab_ring(struct bell *b);
int fab_lock_path(char *buf, size_t len, const char *name);
int fab_lock_held(int fd);
int fab_died(struct bell *b);
int fab_shm_resolve_locked(struct fab *f, struct peer *p, uint32_t n);
void fab_shm_forget_locked(struct fab *f, struct peer *p);
int fab_shm_claim(struct fab *f, char *path, size_t len, char *err,
		  size_t errlen);
int fab_shm_read_locked(struct fab *f, struct peer *p, struct fsend *s);
int fab_post_frags_locked(struct fab *f, struct peer *p, struct fsend *s);
void *fab_shm_share_gmem(struct fab *f, size_t len);
void *fab_shm_share_stage(struct fab *f, size_t len);

/* The provider's region header (fabric_shm.c): mapped read-write, its
 * first page, iff it is 1.17's layout and pid's. */
#define REGION_LOCK_FREE 1
uint8_t *fab_region_map(const char *name, int32_t pid);
void fab_region_unmap(uint8_t *r);
_Atomic int32_t *fab_region_lock(uint8_t *r);
int fab_region_wait_free(uint8_t *r, uint64_t ns);

/* fabric_shm_watch.c: release shm region locks a killed node holds */
int fab_watch_start(struct fab *f);
void fab_watch_stop(struct fab *f);
/* Wake the watchdog for a while: a peer went down, or a lock stays held. */
void fab_watch_poke(struct fab *f);
void fab_shm_unshare_gmem(struct fab *f);
void fab_shm_unshare_stage(struct fab *f);
int fab_shm_peek_locked(struct fab *f, struct peer *p, uint64_t gaddr,
			int64_t *value);
const void *fab_shm_pin_locked(struct fab *f, struct peer *p,
			       uint64_t raddr, size_t len, void **pin);
void fab_shm_unpin_locked(struct fab *f, struct fab_pinmap *m);
/* destroy: unmap every peer arena still mapped, pinned or not */
void fab_shm_unmap_pins(struct fab *f);
int fab_shm_names(struct fab *f, const sp_config_t *cfg, char *err,
		  size_t errlen);

#endif /* SP_FABRIC_H */
