/*
 * sp_engine.h — the protocol engine shared by every back-end (private).
 *
 * One struct sp_world per node.  Everything in it is guarded by w->lock:
 * application calls and message handlers (run by the back-end's progress
 * thread or the in-process dispatcher) both take it, so a handler never
 * races an API call.  Handlers never block; API calls block only on
 * w->cond, which every state change that someone may wait for broadcasts.
 *
 * Files: engine.c (worlds, events, dispatch), tree.c (radix-tree math),
 * membership.c (views), xfer.c (XFER-AND-SIGNAL), caw.c
 * (COMPARE-AND-WRITE), inproc.c and fabric.c (back-ends).
 */
#ifndef SP_ENGINE_H
#define SP_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sp_config.h"
#include "sp_nodeset.h"
#include "sp_transport.h"
#include "sp_wire.h"
#include "storm_primitives.h"

/* ---- trees (tree.c) ---------------------------------------------------- */

/* Radix tree over positions 0..M-1 with fan-out k = 2^b: the parent of p is
 * p with its lowest non-zero base-k digit cleared.  Children are listed
 * largest subtree first, which shortens the critical path. */
uint32_t sp_radix_parent(uint32_t pos, uint32_t k);
uint32_t sp_radix_children(uint32_t pos, uint32_t M, uint32_t k,
			   uint32_t *out, uint32_t max);
uint32_t sp_radix_height(uint32_t M, uint32_t k);

/* The tree of one operation: participants are root followed by the members
 * of set other than root, in id order; position = index in that list. */
uint32_t sp_settree_pos(const uint64_t *words, uint32_t nwords, uint32_t root,
			uint32_t id);
uint32_t sp_settree_id(const uint64_t *words, uint32_t nwords, uint32_t root,
		       uint32_t pos);
uint32_t sp_settree_size(const uint64_t *words, uint32_t nwords,
			 uint32_t root);
/* Children ids of id in the tree; returns the count. */
uint32_t sp_settree_children(const uint64_t *words, uint32_t nwords,
			     uint32_t root, uint32_t id, uint32_t k,
			     uint32_t *out, uint32_t max);
/* Parent id of id (id != root). */
uint32_t sp_settree_parent(const uint64_t *words, uint32_t nwords,
			   uint32_t root, uint32_t id, uint32_t k);

/* ---- events -------------------------------------------------------------- */

struct sp_event {
	uint64_t ok;   /* successful signals not yet consumed */
	uint32_t nerr; /* failed signals not yet consumed (reported first) */
	int err;       /* status of the most recent failed signal */
	int quiet;     /* signals do not make the notify fd readable */
	uint64_t at;   /* sp_now() of the most recent signal */
};

/* ---- membership state (membership.c) ------------------------------------- */

/* What a subtree reports up with its VIEW_ACK and the root sends down with
 * STABLE, so that decisions of a coordinator that died are finished the same
 * way everywhere (see docs/primitives.md, "Resolution"). */
struct sp_facts {
	uint64_t caw_max_seq;
	/* the latest COMPARE-AND-WRITE write seen in the subtree */
	uint64_t wseq;
	uint32_t winit;
	uint64_t wreq;
	uint64_t waddr;
	int64_t wval;
	uint64_t *wset; /* nwords; valid when wseq != 0 */
	/* committed transfers whose source is gone */
	uint64_t *xids;
	uint32_t nxids, capxids;
};

struct sp_view_state {
	uint64_t epoch; /* counter << 16 | creator id; 0 = none yet */
	uint32_t root;
	sp_nodeset_t *live;
	int32_t *parent; /* per node: parent id, -1 for root or non-member */
	uint32_t *kids;  /* this node's children */
	uint32_t nkids;
	uint32_t height;
	int installed, stable, expelled;
	uint32_t pending_acks;
	uint64_t t_start, stabilize_ns;
	struct sp_facts facts; /* combined for the current epoch */
	/* boot (root) */
	sp_nodeset_t *hello;
	uint64_t boot_deadline;
	uint64_t *joined; /* per node: epoch of the view it last joined in */
	uint64_t *inc;    /* root: per node, the incarnation it joined with */
	uint64_t my_inc;  /* this incarnation (sent with JOIN) */
	/* liveness */
	uint64_t *last_heard;
	uint64_t last_hb;
	sp_nodeset_t *reported; /* failures suspected (and reported) this epoch */
	uint64_t report_time;
	uint32_t report_to;     /* acting root they went to; UINT32_MAX none */
	/* joining */
	int joining;
	uint32_t join_target;
	uint32_t join_tried;    /* candidates found unreachable in a row */
	uint32_t join_knocks;   /* knocks sent by the tick */
	uint64_t join_next;
};

/* ---- the world ------------------------------------------------------------ */

struct sp_xfer_out;
struct sp_xfer_in;
struct sp_caw_req;
struct sp_caw_op;

/* The staging arena (stage.c): registered for remote reads. */
struct sp_stage {
	uint8_t *base;     /* NULL: no arena, transfers go by messages */
	size_t size, units;
	uint64_t *map;     /* one bit per unit in use */
	uint64_t key, raddr; /* what peers name base by in a read */
	int shared;        /* base is the back-end's (share_stage) */
};

struct sp_world {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int auth;                 /* messages carry a MAC (set at open) */
	uint8_t mac_key[3][16];   /* crypto_shorthash_siphashx24 keys */
	uint64_t auth_dropped;    /* messages whose MAC failed (atomic-free:
				   * a statistic, read loosely) */
	uint32_t id, n, fanout, nwords;
	size_t chunk;
	uint8_t *gmem;
	size_t gmem_size;
	int gmem_shared; /* gmem is the back-end's (share_gmem) */
	uint32_t nevents;
	struct sp_event *ev;
	struct sp_transport *tp;
	size_t max_msg;
	int closed;
	int notify_fd;           /* sp_notify_fd(): eventfd, -1 until asked */
	int notify_defer;        /* in a back-end entry point: notify at unlock */
	int notify_owed;         /* a notify deferred to that unlock */
	sp_nodeset_t *deferred; /* peers found unreachable while sending */
	uint64_t hb_period_ns, hb_timeout_ns, startup_ns;
	struct sp_view_state v;
	/* xfer */
	uint32_t xseq;
	struct sp_xfer_out *xout;  /* transfers this node sources */
	struct sp_xfer_in *xin;    /* transfers staged or decided here */
	uint32_t nxin_done;
	/* caw */
	uint64_t caw_next_req;
	struct sp_caw_req *creq;   /* requests this node initiated */
	struct sp_caw_op *cq_head, *cq_tail; /* sequencer queue (root) */
	struct sp_caw_op *cinflight;         /* sequencer: the one running */
	struct sp_caw_op *cpart;  /* ops this node takes part in */
	struct sp_caw_op *cdefer; /* ops that came before our STABLE */
	uint64_t caw_seq;         /* sequencer: last seq assigned */
	uint64_t caw_seen;        /* highest seq seen */
	uint64_t wseq_applied;    /* last write applied here */
	/* Sequencer: the epoch in which a COMPARE over every live node
	 * finished by messages, so every member has applied this view's
	 * STABLE facts: from then on a compare may peek directly. */
	uint64_t caw_direct_epoch;
	struct sp_facts mywrite;  /* the last write applied here */
	struct sp_stage stage;
	uint64_t spin_ns; /* blocking calls yield-spin this long first */
	atomic_uint waiters; /* callers inside sp_wait (sp_engine_waiters) */
	/* scratch for building messages (guarded by lock) */
	uint8_t *sbuf;
	size_t sbuf_cap;
};

/* ---- engine helpers (engine.c) ------------------------------------------ */

/* Start a message of type in w->sbuf (lock held). */
void sp_msg_begin(sp_world_t *w, struct sp_wbuf *b, uint8_t type,
		  uint64_t epoch);
/* Send b (+ payload) to dst; on -STORM_EUNREACH the failure is handled
 * (reported to the root).  Lock held. */
int sp_msg_send(sp_world_t *w, uint32_t dst, struct sp_wbuf *b,
		const void *payload, size_t plen, void *cookie);
/* As sp_msg_send of b alone, but the back-end need not wake dst for it
 * while dst keeps ev quiet (transport V5 send_lazy; else a plain send). */
int sp_msg_send_lazy(sp_world_t *w, uint32_t dst, struct sp_wbuf *b,
		     sp_ev_t ev);
void sp_event_signal(sp_world_t *w, sp_ev_t ev, int status);
/* Make sp_notify_fd() readable (lock held): an event or a view change. */
void sp_notify(sp_world_t *w);
uint64_t sp_now(sp_world_t *w);
/* Handle a suspected failure of node (lock held). */
void sp_failure_locked(sp_world_t *w, uint32_t node);
/* Handle the failures that sends found (lock held).  Sends only record
 * them, so that a view change never starts inside another handler. */
void sp_deferred_run(sp_world_t *w);

/* Back-end entry point (world lock NOT held), beside those in
 * sp_transport.h: the node was killed (fault injection).  Marks the world
 * closed and wakes its blocked callers, which return -STORM_ECLOSED. */
void sp_engine_kill(sp_world_t *w);

/* ---- blocking calls (engine.c) ------------------------------------------ */

#define SP_WAIT_SPIN_NS 100000u

/* One blocking call's wait: its deadline and its spin. */
struct sp_wait {
	struct timespec dl;
	int forever;
	uint64_t spin_until;
};
/* timeout_ms < 0: forever; 0: the deadline is now. */
void sp_wait_init(sp_world_t *w, struct sp_wait *wt, int timeout_ms);
/* Lock held; may drop it.  Returns 0 (look again) or -ETIMEDOUT. */
int sp_wait(sp_world_t *w, struct sp_wait *wt);

/* ---- staging arena (stage.c), lock held -------------------------------- */

/* Map and register bytes of arena if the back-end can read remotely;
 * otherwise (or on any failure) leave it empty.  Always returns 0. */
int sp_stage_init(sp_world_t *w, size_t bytes);
void sp_stage_fini(sp_world_t *w);
/* A run of the arena holding len bytes, or NULL when it is full. */
void *sp_stage_alloc(sp_world_t *w, size_t len);
int sp_stage_owns(const sp_world_t *w, const void *p);
/* Give back p of len bytes: to the arena, or free() if malloc'd. */
void sp_stage_free(sp_world_t *w, void *p, size_t len);
/* The address a peer's read names p (inside the arena) by. */
uint64_t sp_stage_raddr(const sp_world_t *w, const void *p);

/* ---- protocol modules: init/fini, handlers, view-change hooks ---------- */

int sp_mship_init(sp_world_t *w, const sp_config_t *cfg);
void sp_mship_fini(sp_world_t *w);
void sp_mship_boot(sp_world_t *w, const sp_config_t *cfg);
void sp_mship_tick(sp_world_t *w);
void sp_mship_heard(sp_world_t *w, uint32_t src);
void sp_mship_on_msg(sp_world_t *w, uint32_t src, uint8_t type,
		     uint64_t epoch, struct sp_rbuf *r);
int sp_facts_init(struct sp_facts *f, uint32_t nwords);
void sp_facts_fini(struct sp_facts *f);
void sp_facts_reset(struct sp_facts *f);
int sp_facts_add_xid(struct sp_facts *f, uint64_t xid);

void sp_xfer_on_msg(sp_world_t *w, uint32_t src, uint8_t type,
		    struct sp_rbuf *r);
void sp_xfer_on_view(sp_world_t *w);       /* after a view is installed */
void sp_xfer_facts(sp_world_t *w, struct sp_facts *f);
void sp_xfer_resolve(sp_world_t *w, const struct sp_facts *f);
void sp_xfer_send_done(sp_world_t *w, void *cookie);
void sp_xfer_read_done(sp_world_t *w, void *cookie, int status);
void sp_xfer_fini(sp_world_t *w);

void sp_caw_on_msg(sp_world_t *w, uint32_t src, uint8_t type,
		   struct sp_rbuf *r);
void sp_caw_on_view(sp_world_t *w);
void sp_caw_on_stable(sp_world_t *w, const struct sp_facts *f);
void sp_caw_facts(sp_world_t *w, struct sp_facts *f);
void sp_caw_fini(sp_world_t *w);

#define SP_UNUSED __attribute__((unused))

#endif /* SP_ENGINE_H */
