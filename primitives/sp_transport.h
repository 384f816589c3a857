/*
 * sp_transport.h — the back-end family behind the mechanisms (private).
 *
 * The protocols (two-phase multicast, combining tree, membership) are
 * written once, in the engine, over this narrow ops table; a back-end only
 * moves opaque messages between node ids.  This is PEACE's nucleus family
 * and libfabric's provider model: one typed, versioned table; a back-end
 * embeds struct sp_transport first and recovers itself with container_of.
 *
 * Threading contract:
 *  - ops->send() is called with the world lock held, from any thread
 *    (application threads and the back-end's own progress thread).  It must
 *    never block and never call back into the engine.
 *  - The back-end calls the sp_engine_* entry points WITHOUT holding any of
 *    its own locks that send() takes; the engine takes the world lock.
 */
#ifndef SP_TRANSPORT_H
#define SP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "storm_primitives.h"

#define SP_TRANSPORT_OPS_V1 1
#define SP_TRANSPORT_OPS_V2 2 /* + reg, read */
#define SP_TRANSPORT_OPS_V3 3 /* + share_gmem, peek */
#define SP_TRANSPORT_OPS_V4 4 /* + share_stage */
#define SP_TRANSPORT_OPS_V5 5 /* + send_lazy, set_quiet */
#define SP_TRANSPORT_OPS_V6 6 /* + pin, unpin */

struct sp_transport;

struct sp_transport_ops {
	uint32_t version; /* SP_TRANSPORT_OPS_V1 */
	const char *name;
	/* Queue one message to dst: hdr (copied before return) followed by
	 * payload.  The payload is referenced until the back-end calls
	 * sp_engine_send_done(w, cookie) (cookie NULL: nothing to report; the
	 * back-end may copy payload at once and report immediately, but never
	 * from inside send()).  dst may be this node.  Messages between one
	 * pair of nodes are delivered in order.  Returns 0, or -STORM_EUNREACH
	 * when dst is known to be gone (the message is dropped; send_done is
	 * still reported for a non-NULL cookie). */
	int (*send)(struct sp_transport *t, uint32_t dst, const void *hdr,
		    size_t hdrlen, const void *payload, size_t paylen,
		    void *cookie);
	/* Monotonic time in ns: real for libfabric, virtual for inproc. */
	uint64_t (*now_ns)(struct sp_transport *t);
	/* Begin delivering messages (start the progress thread). */
	int (*start)(struct sp_transport *t);
	/* Stop delivering; after return no engine entry point is called
	 * again for this world.  Called without the world lock. */
	void (*stop)(struct sp_transport *t);
	/* Free everything; called after stop(). */
	void (*destroy)(struct sp_transport *t);
	/* Largest hdrlen + paylen a message may have. */
	size_t (*max_msg)(struct sp_transport *t);
	/* --- V2, optional (NULL: messages only) --- */
	/* Make [base, base+len) readable by peers' read(), once, before
	 * start(); it stays registered until destroy().  Sets the key and the
	 * address peers name base by.  Returns 0 or a negative errno. */
	int (*reg)(struct sp_transport *t, void *base, size_t len,
		   uint64_t *key, uint64_t *raddr);
	/* Copy len bytes at (raddr, key) in node src's registered region into
	 * local.  Never blocks; completion is reported by
	 * sp_engine_read_done(w, cookie, status) from the progress thread,
	 * status 0 or -STORM_EUNREACH (src gone).  Returns 0 or
	 * -STORM_EUNREACH (src known gone: nothing will be reported). */
	int (*read)(struct sp_transport *t, uint32_t src, void *local,
		    size_t len, uint64_t raddr, uint64_t key, void *cookie);
	/* --- V3, optional (NULL: global memory is private) --- */
	/* Give the node's global memory of len bytes (zeroed, page-aligned)
	 * in memory that peers can load from directly.  Called once, before
	 * start(); the memory is the back-end's until destroy().  Returns
	 * it, or NULL (then the engine keeps its own private memory). */
	void *(*share_gmem)(struct sp_transport *t, size_t len);
	/* Load node's 8-byte global variable at gaddr now, atomically and
	 * without its threads' help (world lock held; never blocks).
	 * Returns 0; -ENOSYS (not possible for node now: use messages);
	 * -STORM_EUNREACH (node is gone). */
	int (*peek)(struct sp_transport *t, uint32_t node, uint64_t gaddr,
		    int64_t *value);
	/* --- V4, optional (NULL: the engine maps its own arena) --- */
	/* Give the staging arena of len bytes (page-aligned, pages cost
	 * once used) in memory that read() of peers can copy from without
	 * this node's help.  Called once, before reg() and start(); the
	 * memory is the back-end's until destroy(), which unmaps it.
	 * Returns it, or NULL. */
	void *(*share_stage)(struct sp_transport *t, size_t len);
	/* --- V5, optional (NULL: send(), and every message wakes) --- */
	/* As send() of hdr alone with no report, but if dst declared ev
	 * quiet (set_quiet) its progress thread is not woken for it: the
	 * message waits until it wakes for anything else, or for at most
	 * the back-end's bound.  For messages whose only effect there is
	 * signalling ev (a posted PUT). */
	int (*send_lazy)(struct sp_transport *t, uint32_t dst,
			 const void *hdr, size_t hdrlen, uint32_t ev);
	/* The events (bit i: event i < 32) that are quiet here now; a bit
	 * cleared wakes the progress thread, to take what waits at once. */
	void (*set_quiet)(struct sp_transport *t, uint32_t mask);
	/* --- V6, optional (NULL: a reader copies with read()) --- */
	/* The len bytes at (raddr, key) in node src's registered region,
	 * readable here in place with no copy, and kept readable — even
	 * if src dies — until unpin(*pin).  For bytes src wrote before the
	 * message naming them and keeps until this node answers.  World
	 * lock held; never blocks.  NULL: not possible now (use read()). */
	const void *(*pin)(struct sp_transport *t, uint32_t src,
			   uint64_t raddr, uint64_t key, size_t len,
			   void **pin);
	void (*unpin)(struct sp_transport *t, void *pin);
};

struct sp_transport {
	const struct sp_transport_ops *ops;
	sp_world_t *world;
};

/* --- engine entry points, called by back-ends (world lock NOT held) --- */

/* A message from src; msg is valid only during the call. */
void sp_engine_deliver(sp_world_t *w, uint32_t src, const void *msg,
		       size_t len);
/* The payload of the send with this cookie may be reused. */
void sp_engine_send_done(sp_world_t *w, void *cookie);
/* The read with this cookie finished: status 0 or -STORM_EUNREACH. */
void sp_engine_read_done(sp_world_t *w, void *cookie, int status);
/* The back-end believes node is gone (connection error, injected fault). */
void sp_engine_peer_down(sp_world_t *w, uint32_t node);
/* Periodic call (every liveness period) for heartbeats and timeouts. */
void sp_engine_tick(sp_world_t *w);
/* Callers now blocked in a call of this node (no lock needed): while one
 * waits, a reply is worth spinning for. */
unsigned sp_engine_waiters(sp_world_t *w);
/* 1 if node is this node's parent or child in the membership tree. */
int sp_engine_is_neighbor(sp_world_t *w, uint32_t node);

/* --- back-end constructors --- */

/* Open the libfabric back-end for world w per cfg.  On failure err says
 * what, where and what to do.  Returns 0, -STORM_EPROVIDER,
 * -STORM_ECONFIG, -STORM_EUNREACH, -ENOMEM. */
int sp_fabric_open(sp_world_t *w, const sp_config_t *cfg,
		   struct sp_transport **out, char *err, size_t errlen);
/* Attach world w to its in-process machine. */
int sp_inproc_open(sp_world_t *w, const sp_config_t *cfg,
		   struct sp_transport **out, char *err, size_t errlen);

#endif /* SP_TRANSPORT_H */
