/*
 * rp_internal.h — private to libstorm-replication: the wire codec of the
 * group's messages (wire.c), the LMDB store (store.c), the session table
 * (sessions.c), and the replica's protocol state shared by replica.c
 * (the protocol) and group.c (corosync glue, or the solo loopback).
 */
#ifndef RP_INTERNAL_H
#define RP_INTERNAL_H

#include <lmdb.h>
#include <stdint.h>

#include "storm_replication.h"

/* ---- wire (wire.c): every message "SR" | version | type ---------------- */

#define RP_WIRE_VERSION 1
/* Message types: append-only, never renumbered (replicas of different
 * builds share a group during a rolling upgrade). */
enum rp_msg {
	RP_MSG_OP = 1,    /* a request to apply (logged) */
	RP_MSG_STATE = 2, /* a member's replica index, sync flag, applied */
	RP_MSG_SNAP = 3,  /* one chunk of a snapshot for joiners */
	RP_MSG_CAST = 4,  /* an application message, not logged */
	RP_MSG_SEED = 5,  /* total restart: seed from the members present */
	RP_MSG_BATCH = 6, /* several OPs from one replica, in order */
};

struct rp_buf { /* bounds-checked writer / reader */
	uint8_t *p;
	size_t len, cap;
	int bad;
};
void rpw_u8(struct rp_buf *b, uint8_t v);
void rpw_u32(struct rp_buf *b, uint32_t v);
void rpw_u64(struct rp_buf *b, uint64_t v);
void rpw_bytes(struct rp_buf *b, const void *p, size_t n);
uint8_t rpr_u8(struct rp_buf *b);
uint32_t rpr_u32(struct rp_buf *b);
uint64_t rpr_u64(struct rp_buf *b);
const uint8_t *rpr_bytes(struct rp_buf *b, size_t n);
/* start a message of type t into a malloc'd, growing buffer */
int rpw_begin(struct rp_buf *b, int type, size_t hint);
/* check the header; returns the type or -STORM_EPROTO */
int rpr_begin(struct rp_buf *b, const void *msg, size_t len);

/* The body of an OP (also the log entry). */
struct rp_op {
	uint32_t nodeid, pid;  /* who multicast it */
	uint64_t token;        /* that replica's local proposal number */
	uint32_t origin;       /* its replica index */
	uint64_t client, seq;
	uint32_t uid, gid;
	const uint8_t *op;
	uint32_t len;
};
int rp_op_encode(const struct rp_op *o, struct rp_buf *b);
int rp_op_decode(const void *msg, size_t len, struct rp_op *o);

/* ---- sessions (sessions.c): (client) -> last seq and its reply ---------- */

struct rp_session {
	struct rp_session *next;
	uint64_t client, seq, index;
	uint32_t rlen;
	uint8_t reply[];
};
struct rp_sessions {
	struct rp_session **b;
	uint32_t nb, n;
};
int rp_sessions_init(struct rp_sessions *t);
void rp_sessions_free(struct rp_sessions *t);
struct rp_session *rp_session_get(struct rp_sessions *t, uint64_t client);
int rp_session_put(struct rp_sessions *t, uint64_t client, uint64_t seq,
		   uint64_t index, const uint8_t *reply, size_t rlen);
/* forget sessions last used before index (deterministic: every replica
 * calls it at the same indexes) */
void rp_sessions_expire(struct rp_sessions *t, uint64_t before);
int rp_sessions_encode(const struct rp_sessions *t, struct rp_buf *b);
int rp_sessions_decode(struct rp_sessions *t, struct rp_buf *b);

/* ---- store (store.c): LMDB ---------------------------------------------- */

struct rp_store {
	MDB_env *env;
	MDB_dbi meta, log;
	MDB_txn *txn;       /* the open batch, or NULL */
	uint64_t snap_index;
};
int rps_open(struct rp_store *s, const char *dir, const char *cluster,
	     uint32_t version, int nosync, char *err, size_t errlen);
void rps_close(struct rp_store *s);
/* the last snapshot (malloc'd copy; *len 0 and *index 0 if none) */
int rps_snapshot(struct rp_store *s, uint64_t *index, uint8_t **buf,
		 size_t *len);
/* call fn for every log entry after index, in order */
int rps_replay(struct rp_store *s, uint64_t after,
	       int (*fn)(void *arg, uint64_t index, const void *e, size_t len),
	       void *arg);
/* open the batch if none is */
int rps_batch(struct rp_store *s);
/* add to the open batch (opening it) */
int rps_append(struct rp_store *s, uint64_t index, const void *e, size_t len);
/* replace the snapshot by (index, image), dropping the log up to index;
 * clear: drop the whole log too (state transfer) */
int rps_put_snapshot(struct rp_store *s, uint64_t index, const void *img,
		     size_t len, int clear);
/* commit the batch (to the page cache: survives the process) */
int rps_commit(struct rp_store *s);
/* make every commit so far durable on disk */
int rps_sync(struct rp_store *s);
void rps_abort(struct rp_store *s);

/* ---- the replica (replica.c protocol, group.c transport) --------------- */

#include <corosync/cpg.h>
#include <corosync/votequorum.h>

struct rp_out { /* a message waiting to be multicast, in order */
	struct rp_out *next;
	uint8_t *msg;
	size_t len;
	int is_op;
};

struct rp_pending { /* a proposal of this replica not yet applied */
	struct rp_pending *next;
	uint64_t token;
	void *cookie;
	int applied;           /* applied in this batch: done after commit */
	int rc;
	size_t rlen;
	uint8_t reply[RP_REPLY_MAX];
	uint8_t *msg;          /* the OP as multicast (resent after a view
				* change; a copy that arrives twice is a
				* retry the sessions answer) */
	size_t len;
};

struct rp_mem { /* a member of the current group view */
	uint32_t nodeid, pid;
	uint32_t replica;      /* from its STATE (or the snapshot) */
	int synced, have_state;
	int survivor;          /* lost the group while running (not restarted) */
	uint64_t applied;
};

struct rp_buffered { /* an OP delivered while waiting for a snapshot */
	struct rp_buffered *next;
	size_t len;
	uint8_t msg[];
};

struct rp_replica {
	rp_config_t cfg;
	char cluster[64], state_dir[1024];
	rp_callbacks_t cb;
	void *ctx;
	struct rp_store store;
	struct rp_sessions sessions;
	uint64_t applied;          /* last applied index */
	uint64_t durable;          /* last committed and synced to disk */
	uint64_t committed;        /* last committed (page cache) */
	uint64_t sync_ms;          /* when the last sync was */
	uint64_t announced;        /* applied index last sent in a STATE */
	int synced, primary, quorate;
	int survivor;              /* has been synced in this process */
	uint32_t my_nodeid, my_pid;
	int64_t master;            /* index in mem[] of the strobe master, or
				    * -1; kept as (nodeid, pid) below */
	uint32_t master_nodeid, master_pid;
	int has_master;
	struct rp_mem mem[RP_MAX_REPLICAS];
	uint32_t nmem;
	uint64_t view;
	uint32_t ring_size, quorum_votes;
	int seed_ok;               /* a SEED was delivered in this view */
	uint64_t view_since_ms;    /* first seen without a synced member */
	int seed_sent;
	/* joiner: snapshot being assembled and the ops after its point */
	uint8_t *snap;
	size_t snap_len, snap_got;
	uint64_t snap_id, snap_index;
	uint32_t snap_next;
	struct rp_buffered *buf_head, **buf_tail;
	size_t buf_bytes;
	/* proposals and the send queue */
	struct rp_pending *pend;
	uint64_t next_token;
	uint32_t inflight;
	uint64_t sent_batches, sent_ops;
	struct rp_out *out_head, **out_tail;
	/* transport */
	cpg_handle_t cpg;
	votequorum_handle_t vq;
	int cpg_fd, vq_fd, solo_fd;
	struct solo_msg *solo_head, **solo_tail;
	int closed;
	char fatal[1400];
};

/* group.c */
int rpg_start(rp_replica_t *r, char *err, size_t errlen);
void rpg_stop(rp_replica_t *r);
/* multicast one message now: 0, -EAGAIN (try later), -errno */
int rpg_send(rp_replica_t *r, const void *msg, size_t len);
int rpg_dispatch(rp_replica_t *r);
/* replica.c: entry points for the transport */
void rp_on_deliver(rp_replica_t *r, uint32_t nodeid, uint32_t pid,
		   const void *msg, size_t len);
void rp_on_confchg(rp_replica_t *r, const struct cpg_address *members,
		   size_t nmembers, const struct cpg_address *left,
		   size_t nleft, const struct cpg_address *joined,
		   size_t njoined);
void rp_on_ring(rp_replica_t *r, uint32_t ring_size);
void rp_on_quorum(rp_replica_t *r, int quorate, uint32_t quorum_votes);
uint64_t rp_mono_ms(void);

#endif /* RP_INTERNAL_H */
