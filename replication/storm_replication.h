/*
 * storm_replication.h — symmetric active/active replication of a
 * deterministic state machine (libstorm-replication, prefix rp_).
 *
 * Every replica accepts requests and multicasts them in agreed order over
 * corosync CPG; every replica applies every request in that order; the
 * replica that took a request is told it is done only once it has been
 * applied and is durable in its LMDB file (the operation log and the
 * applied index commit in one transaction; several operations share a
 * commit).  A joining or restarted replica receives a snapshot of the
 * state at a known index from a donor, then the operations after it.
 * Requests carry (client id, sequence): a retry of an applied request is
 * answered from the session table and never applied twice.  Writes are
 * accepted only in a primary component (more than half of corosync's
 * expected votes in the ring).  docs/replication.md has the protocol.
 *
 * The library knows nothing of jobs: the application (storm-mm) gives it
 * callbacks to apply an operation, to encode and restore its whole state,
 * and to hear agreed non-logged messages (rp_cast) and role changes.
 *
 * Threads: none of its own.  Every call and every callback happens on the
 * caller's thread (a main loop that polls rp_fds() and calls
 * rp_dispatch()).  Conventions as in storm_primitives.h.
 */
#ifndef STORM_REPLICATION_H
#define STORM_REPLICATION_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STORM_BUILDING_REPLICATION)
#define RP_API __attribute__((visibility("default")))
#else
#define RP_API
#endif

typedef struct rp_replica rp_replica_t;
struct MDB_env; /* LMDB's */
struct MDB_txn;

#define RP_REPLY_MAX 512      /* bytes of one stored reply */
#define RP_OP_MAX (768u << 10) /* bytes of one operation (one CPG message) */
#define RP_MAX_REPLICAS 32

/** How operations are ordered. */
typedef enum rp_backend {
	RP_BACKEND_CPG = 1, /* corosync CPG + votequorum (production) */
	RP_BACKEND_SOLO,    /* one replica, no corosync: a single head node */
} rp_backend_t;

typedef struct rp_config {
	rp_backend_t backend;
	const char *cluster;     /* CPG group "storm-<cluster>"; checked
				  * against the state file */
	uint32_t replica;        /* this replica's index (0..nreplicas-1) */
	uint32_t nreplicas;      /* configured replicas */
	const char *state_dir;   /* LMDB environment directory (created) */
	uint32_t state_version;  /* the application's state/op version: a
				  * file or a peer of another version is
				  * refused */
	uint32_t recovery_wait_ms; /* total restart: seed from a majority
				    * after this long if not every replica
				    * came back (default 10000) */
	uint32_t snapshot_every; /* log entries between durable snapshots
				  * (default 20000) */
	int unsafe_nosync;       /* LMDB MDB_NOSYNC instead of MDB_NOMETASYNC:
				  * a host crash may corrupt the state
				  * (LMDB's documentation); for measuring
				  * the cost of durability only */
} rp_config_t;

/** One operation in agreed order. */
typedef struct rp_request {
	uint64_t index;   /* its position in the agreed order (1, 2, ...) */
	uint64_t client;  /* client id; 0: none (the strobe master's ops) */
	uint64_t seq;     /* client's sequence number */
	uint32_t uid, gid;/* who asked (authenticated by the taking replica) */
	uint32_t origin;  /* index of the replica that took it */
	const void *op;
	size_t len;
	int replay;       /* 1: re-applied from the local log at start-up */
} rp_request_t;

typedef struct rp_member {
	uint32_t replica;   /* configured index */
	uint32_t nodeid;    /* corosync node id */
	uint32_t pid;
	int synced;         /* holds the agreed state */
	uint64_t applied;   /* as it last reported (self: exact) */
} rp_member_t;

/** Where this replica stands. */
typedef struct rp_status {
	int primary;        /* in a component with quorum */
	int synced;         /* holds the agreed state (may apply, answer) */
	int quorate;        /* votequorum's own flag */
	int master;         /* replica index of the strobe master, -1 none */
	uint64_t applied;   /* last applied index */
	uint64_t durable;   /* last index committed to LMDB */
	uint64_t view;      /* confchg count seen by this replica */
	uint32_t inflight;  /* own operations multicast, not yet delivered */
	uint32_t queued;    /* messages waiting to be multicast */
	uint32_t pending;   /* own requests not yet answered */
	uint64_t sent_batches, sent_ops; /* own operations multicast, and in
					  * how many messages */
	uint32_t nmembers;
	rp_member_t members[RP_MAX_REPLICAS];
} rp_status_t;

typedef struct rp_callbacks {
	/** Apply req to the state (deterministic).  Write up to cap bytes
	 * of reply (what the client is told) to reply and their count to
	 * *rlen, and return 0.  A refused operation is a reply, not an
	 * error.  A non-zero return is a local failure a peer would not
	 * share (no memory, a full disk): the replica stops (fail-stop,
	 * rp_dispatch returns -STORM_ESTATE) rather than diverge; it rejoins
	 * by state transfer when restarted. */
	int (*apply)(void *ctx, const rp_request_t *req, uint8_t *reply,
		     size_t cap, size_t *rlen);
	/** Encode the whole state into a malloc'd buffer. @return 0 or
	 * -errno. */
	int (*snapshot)(void *ctx, uint8_t **buf, size_t *len);
	/** Replace the whole state by a snapshot's.  @return 0 or -errno /
	 * -STORM_EPROTO with err filled. */
	int (*restore)(void *ctx, const uint8_t *buf, size_t len, char *err,
		       size_t errlen);
	/** An rp_cast() message, in agreed order among synced replicas. */
	void (*cast)(void *ctx, uint32_t from_replica, const void *msg,
		     size_t len);
	/** Membership, quorum, sync or the strobe master changed. */
	void (*status)(void *ctx, const rp_status_t *st);
	/** A request rp_propose()d here is applied and durable (rc 0, the
	 * stored reply), or its outcome is unknown here (rc
	 * -STORM_EUNKNOWN: retry elsewhere with the same sequence), or it
	 * was refused (-STORM_EREPLAY). */
	void (*done)(void *ctx, void *cookie, int rc, const uint8_t *reply,
		     size_t len);
	/** Optional: a snapshot from a donor was restored here at index
	 * (state transfer, not a restart from this replica's own file).
	 * Called inside the transaction that stores it (rp_txn()): the
	 * application's own databases are this replica's old ones, and may
	 * lack what the group did while it was away.  Non-zero: the
	 * transfer fails (as a refused snapshot). */
	int (*installed)(void *ctx, uint64_t index);
} rp_callbacks_t;

/** Create a replica: opens (creating) the LMDB state in cfg->state_dir,
 * checks its cluster name and version, restores the last snapshot and
 * re-applies the log after it (callbacks restore and apply, with
 * req->replay 1).  It is not in any group yet.
 * @return 0; -STORM_ESTATE (another cluster's or version's file),
 * -STORM_ECONFIG, -errno; err says what, where, what to do. */
RP_API int rp_create(const rp_config_t *cfg, const rp_callbacks_t *cb,
		     void *ctx, rp_replica_t **out, char *err, size_t errlen);
/** Join the group (CPG) or, for SOLO, become the synced primary at once.
 * @return 0; -STORM_EUNREACH (corosync is not running here), -errno. */
RP_API int rp_start(rp_replica_t *r, char *err, size_t errlen);
/** Leave the group and free everything (pending proposals are told
 * -STORM_EUNKNOWN).  NULL accepted. */
RP_API void rp_destroy(rp_replica_t *r);

/** File descriptors to poll for input (up to max written).  They may
 * change after rp_dispatch(): fetch them again after a status callback.
 * @return their count. */
RP_API int rp_fds(rp_replica_t *r, int *fds, int max);
/** Handle whatever is ready (all fds; cheap when nothing is).  Commits
 * the operations applied meanwhile and calls done() for this replica's.
 * @return 0; -STORM_ECLOSED when corosync went away (the replica is no
 * longer synced; the caller should exit and be restarted). */
RP_API int rp_dispatch(rp_replica_t *r);
/** Milliseconds until rp_tick() wants to run (recovery timers), or -1. */
RP_API int rp_next_timeout_ms(rp_replica_t *r);
RP_API void rp_tick(rp_replica_t *r);

/** Propose an operation (len <= RP_OP_MAX).  client 0 skips the session
 * table (the strobe master's operations, which the state machine makes
 * idempotent).  done(cookie) is called later, never from inside this
 * call.  A (client, seq) already applied is answered from the session
 * table without a new order.
 * @return 0; -STORM_ENOQUORUM, -STORM_ENOTSYNCED (go to another
 * replica), -EINVAL, -ENOMEM. */
RP_API int rp_propose(rp_replica_t *r, uint64_t client, uint64_t seq,
		      uint32_t uid, uint32_t gid, const void *op, size_t len,
		      void *cookie);
/** Multicast an agreed message that is not logged (delivered to every
 * synced replica's cast callback, this one's included).  @return 0,
 * -STORM_ENOTSYNCED, -EINVAL, -ENOMEM. */
RP_API int rp_cast(rp_replica_t *r, const void *msg, size_t len);

/** Tell the group this replica's applied index (members' indexes in
 * rp_status() are as last reported; call every second or so).  Does
 * nothing if it has not changed. */
RP_API void rp_announce(rp_replica_t *r);

/** The replica's LMDB environment, in which the application may keep
 * databases of its own (any name but "meta" and "log"; at most
 * RP_APP_DBS of them).  NULL before rp_create() succeeded. */
#define RP_APP_DBS 4
/** LMDB's map (address space; the file grows as written). */
#define RP_MAP_BYTES ((size_t)16 << 30)
RP_API struct MDB_env *rp_env(rp_replica_t *r);
/** The write transaction the next commit makes durable with the applied
 * index, opened if none is: inside apply (not replay) and installed,
 * what the application writes there commits exactly with the operation,
 * so its databases change in agreed order like the state.  Between
 * dispatches it commits with the next round.  NULL if LMDB cannot open
 * one (the caller treats it as a local failure). */
RP_API struct MDB_txn *rp_txn(rp_replica_t *r);

/** Where this replica stands now. */
RP_API void rp_status(const rp_replica_t *r, rp_status_t *st);

#ifdef __cplusplus
}
#endif
#endif /* STORM_REPLICATION_H */
