/*
 * storm_primitives.h — the three STORM network mechanisms and radix-tree
 * membership.  This is the only header of libstorm-primitives; every layer
 * above (manager, node, bcsmpi, ckpt) uses the machine through it alone.
 *
 *   XFER-AND-SIGNAL    all-or-nothing PUT of a buffer to the same global
 *                      address on every node of a node set, with a local and
 *                      a remote event.
 *   TEST-EVENT         poll, or block with a timeout, for an event.
 *   COMPARE-AND-WRITE  a comparison that is true iff it holds on every node
 *                      of a set, then an optional write, sequentially
 *                      consistent with every other COMPARE-AND-WRITE.
 *
 * A "world" is one node's handle on the machine.  Its back-end is chosen when
 * it is opened: libfabric RDM endpoints (one process per node, provider from
 * the configuration) or the in-process machine (all nodes in one process as a
 * deterministic discrete-event simulation, with fault injection).  Nothing
 * above this header can tell which one runs.
 *
 * Conventions (see docs/primitives.md):
 *  - Functions that can fail return 0 (or a count) on success and a negative
 *    error on failure: -errno for system conditions, -STORM_E* for Storm's own.
 *    storm_strerror() names both.  On failure nothing has been changed.
 *  - Where a human needs to know what went wrong, an optional error-text
 *    buffer is the last parameter; it may be NULL.
 *  - Every function may be called from any thread unless it says otherwise;
 *    a world serialises its callers internally.
 *  - Global memory is a region of the same size on every node; a "global
 *    address" is a byte offset into it.  Global variables are int64_t at
 *    8-byte-aligned global addresses.
 */
#ifndef STORM_PRIMITIVES_H
#define STORM_PRIMITIVES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STORM_BUILDING_PRIMITIVES)
#define SP_API __attribute__((visibility("default")))
#else
#define SP_API
#endif

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Storm's own conditions are numbered above STORM_ERRNO_OFFSET so they never
 * collide with errno values.  Codes are append-only. */
#define STORM_ERRNO_OFFSET 4096
enum storm_errno {
	STORM_ECLOSED = STORM_ERRNO_OFFSET + 1, /* handle closed or node killed */
	STORM_EABORTED,   /* transfer aborted: nothing was delivered anywhere */
	STORM_ENOTINVIEW, /* a node of the set is not in the current view */
	STORM_EVIEWCHANGE,/* the view changed under the operation; retry */
	STORM_EPROVIDER,  /* libfabric provider unknown or unusable */
	STORM_EUNREACH,   /* a peer could not be reached */
	STORM_EEXPELLED,  /* this node was removed from the view; rejoin */
	STORM_EPROTO,     /* malformed or incompatible message */
	STORM_ECONFIG,    /* invalid configuration */
	STORM_ENOQUORUM,  /* this replica has no quorum: writes go elsewhere */
	STORM_ENOTSYNCED, /* this replica is catching up (state transfer) */
	STORM_EUNKNOWN,   /* outcome unknown (replica lost its group before the
			   * request was ordered): retry with the same sequence */
	STORM_EREPLAY,    /* a request's sequence number is older than the last
			   * one applied for its client */
	STORM_ESTATE,     /* durable state unusable (other cluster, version) */
	STORM_ERRNO_MAX
};

/** Name an error returned by any Storm function: a negative errno or a
 * negative STORM_E* code (the sign is ignored).  Returns a static string;
 * never NULL. */
SP_API const char *storm_strerror(int err);

/* ------------------------------------------------------------------------ */
/* Node sets                                                                 */
/* ------------------------------------------------------------------------ */

/** A set of node ids in [0, capacity).  A plain value owned by its creator;
 * not safe for concurrent modification. */
typedef struct sp_nodeset sp_nodeset_t;

/** Create an empty set able to hold ids 0..capacity-1 (capacity 1..65536).
 * @return 0, -EINVAL for a bad capacity, -ENOMEM. */
SP_API int sp_nodeset_create(uint32_t capacity, sp_nodeset_t **out);
/** Free a set; NULL is accepted. */
SP_API void sp_nodeset_destroy(sp_nodeset_t *set);
/** @return 0, or -ERANGE when id >= capacity. */
SP_API int sp_nodeset_add(sp_nodeset_t *set, uint32_t id);
/** Add ids first..last inclusive. @return 0, -ERANGE. */
SP_API int sp_nodeset_add_range(sp_nodeset_t *set, uint32_t first,
				uint32_t last);
/** @return 0, or -ERANGE when id >= capacity. */
SP_API int sp_nodeset_del(sp_nodeset_t *set, uint32_t id);
/** Remove every id. */
SP_API void sp_nodeset_clear(sp_nodeset_t *set);
/** @return 1 if id is in the set, 0 otherwise (also for id >= capacity). */
SP_API int sp_nodeset_has(const sp_nodeset_t *set, uint32_t id);
/** @return the number of ids in the set. */
SP_API uint32_t sp_nodeset_count(const sp_nodeset_t *set);
/** @return the capacity given at creation. */
SP_API uint32_t sp_nodeset_capacity(const sp_nodeset_t *set);
/** Iterate: the smallest id >= from in the set, or -1 when none. */
SP_API int64_t sp_nodeset_next(const sp_nodeset_t *set, uint32_t from);
/** Copy src into dst (same capacity). @return 0, -EINVAL. */
SP_API int sp_nodeset_copy(sp_nodeset_t *dst, const sp_nodeset_t *src);
/** Parse a range list such as "0-7,9,12-13" into set (cleared first).
 * @return 0; -EINVAL (a syntax error or a reversed range such as "3-1"),
 * -ERANGE (an id beyond capacity, including one too large for 32 bits).
 * On failure err says what and where, and set is unchanged. */
SP_API int sp_nodeset_parse(sp_nodeset_t *set, const char *text, char *err,
			    size_t errlen);
/** Format as a range list ("0-7,9").  Writes at most len bytes including
 * the NUL. @return the length the full text needs (like snprintf). */
SP_API int sp_nodeset_format(const sp_nodeset_t *set, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

typedef struct sp_config sp_config_t;
typedef struct sp_world sp_world_t;
typedef struct sp_machine sp_machine_t;

/** Create a configuration with defaults (see docs/primitives.md).
 * @return 0, -ENOMEM. */
SP_API int sp_config_create(sp_config_t **out);
/** Free; NULL accepted. */
SP_API void sp_config_destroy(sp_config_t *cfg);

/** This node's id and the number of nodes (1..65536). @return 0, -EINVAL. */
SP_API int sp_config_set_node(sp_config_t *cfg, uint32_t node_id,
			      uint32_t nnodes);
/** Back-end provider: "inproc" for the in-process machine, or a libfabric
 * provider name ("tcp", "shm", "sockets", "verbs", "tcp;ofi_rxm", …).
 * Unknown names are reported by sp_open(). @return 0, -EINVAL, -ENOMEM. */
SP_API int sp_config_set_provider(sp_config_t *cfg, const char *provider);
/** Address of node id for the libfabric back-end: "host:port" for socket
 * providers, a name for shm.  Every node of the machine needs one.
 * @return 0, -ERANGE, -ENOMEM. */
SP_API int sp_config_set_address(sp_config_t *cfg, uint32_t node_id,
				 const char *addr);
/** Size of global memory in bytes (default 1 MiB, max 1 GiB) and number of
 * events (default 64). @return 0, -EINVAL. */
SP_API int sp_config_set_gmem(sp_config_t *cfg, size_t bytes,
			      uint32_t nevents);
/** Fan-out of every tree (membership, multicast, combining): a power of two,
 * 2..256, default 4. @return 0, -EINVAL. */
SP_API int sp_config_set_fanout(sp_config_t *cfg, uint32_t fanout);
/** Multicast chunk size (4 KiB..4 MiB, default 256 KiB); like the fan-out,
 * the same on every node of a machine. @return 0, -EINVAL. */
SP_API int sp_config_set_chunk(sp_config_t *cfg, size_t bytes);
/** Staging arena for transfers read remotely (RMA) by the libfabric
 * back-end: bytes of address space, used as transfers need it (default
 * 4 x the global memory, at least 8 MiB; 0: transfers go by messages).
 * A transfer that does not fit at the moment goes by messages.
 * @return 0, -EINVAL. */
SP_API int sp_config_set_staging(sp_config_t *cfg, size_t bytes);
/** Liveness among tree neighbours for the libfabric back-end: a heartbeat
 * every period_ms, a neighbour silent for timeout_ms is failed (defaults 250
 * and 1000; period 0 turns detection off).  Also the time sp_open() waits for
 * the whole machine to appear (startup_ms, default 10000).
 * @return 0, -EINVAL. */
SP_API int sp_config_set_liveness(sp_config_t *cfg, uint32_t period_ms,
				  uint32_t timeout_ms, uint32_t startup_ms);
/** Bytes of a cluster key (sp_config_set_auth_key). */
#define SP_AUTH_KEY_BYTES 32
/** Authenticate the machine's traffic with a key every member holds:
 * each message carries a MAC (SipHash-2-4, 128 bits, libsodium) over its header
 * and body, and a message whose MAC does not check out is dropped before
 * it is decoded, so a process without the key cannot join, report, or
 * speak in any protocol.  Every node of a machine must have the same key
 * (a node with another key, or none, is never heard).  len must be
 * SP_AUTH_KEY_BYTES.  Without a key (the default) nothing is
 * authenticated. @return 0, -EINVAL. */
SP_API int sp_config_set_auth_key(sp_config_t *cfg, const uint8_t *key,
				  size_t len);
/** Open this node as a (re)joining member rather than as part of the
 * initial machine (default 0). */
SP_API int sp_config_set_join(sp_config_t *cfg, int join);
/** The in-process machine a world of provider "inproc" belongs to. */
SP_API int sp_config_set_machine(sp_config_t *cfg, sp_machine_t *machine);

/* ------------------------------------------------------------------------ */
/* Worlds                                                                    */
/* ------------------------------------------------------------------------ */

/** Open this node's world.  For libfabric providers this opens the endpoint,
 * then waits (up to the startup time) until the initial view is installed;
 * nodes that did not appear by then are left out of it.  For "inproc" the
 * node is attached to its machine and returns at once.
 * @return 0; -STORM_ECONFIG (missing or inconsistent settings),
 * -STORM_EPROVIDER (no such provider), -STORM_EUNREACH (the root never
 * answered), -ENOMEM.  err gets what, where and what to do. */
SP_API int sp_open(const sp_config_t *cfg, sp_world_t **out, char *err,
		   size_t errlen);
/** Close: stop the progress engine, fail every pending operation with
 * -STORM_ECLOSED, free everything.  NULL accepted.  Must not be called while
 * another thread is inside a call on the same world. */
SP_API void sp_close(sp_world_t *w);

/** This node's id. */
SP_API uint32_t sp_node_id(const sp_world_t *w);
/** Number of configured nodes (the capacity of node sets for this world). */
SP_API uint32_t sp_node_count(const sp_world_t *w);

/** The local copy of global memory and its size.  The pointer stays valid
 * until sp_close().  Bytes at a global address change only when an
 * XFER-AND-SIGNAL commits there or a COMPARE-AND-WRITE writes there; read
 * them after the corresponding event. */
SP_API void *sp_gmem(sp_world_t *w, size_t *size);
/** Copy len bytes of the local global memory at gaddr into buf as one
 * image: no XFER-AND-SIGNAL commits into it while it is copied (a block
 * read in place can be torn by the next one landing).
 * @return 0, or -EINVAL for a range outside global memory. */
SP_API int sp_gmem_read(sp_world_t *w, uint64_t gaddr, void *buf, size_t len);
/** Read / write a global variable on this node only (atomic 64-bit).
 * @return 0, -EINVAL for a misaligned or out-of-range address. */
SP_API int sp_gvar_read(sp_world_t *w, uint64_t gaddr, int64_t *value);
SP_API int sp_gvar_write_local(sp_world_t *w, uint64_t gaddr, int64_t value);

/* ------------------------------------------------------------------------ */
/* The mechanisms                                                            */
/* ------------------------------------------------------------------------ */

typedef uint32_t sp_ev_t;
#define SP_EV_NONE UINT32_MAX

/** XFER-AND-SIGNAL: copy len bytes from src to global address gaddr on
 * every node of dst (which may include this node), non-blocking.
 *
 * All or nothing: the data is staged on every destination first and lands
 * at gaddr only once every destination has it.  If a destination leaves the
 * view before that, the transfer is aborted and no destination's global
 * memory changes.  Once committed, remote_ev is signalled on each
 * destination after the bytes are in place, and local_ev on this node when
 * every destination has them (status 0) or when the transfer was aborted
 * (status -STORM_EABORTED).  src must stay valid and unchanged until local_ev
 * completes (or, with SP_EV_NONE, until sp_close()).
 * @return 0 (started); -EINVAL (empty set, len 0, range outside global
 * memory, bad event); -STORM_ENOTINVIEW (a destination is not a live member);
 * -STORM_ECLOSED; -STORM_EEXPELLED.  err says which. */
SP_API int sp_xfer_and_signal(sp_world_t *w, const sp_nodeset_t *dst,
			      const void *src, size_t len, uint64_t gaddr,
			      sp_ev_t local_ev, sp_ev_t remote_ev, char *err,
			      size_t errlen);

/** A posted PUT: len bytes (at most SP_PUT_POSTED_MAX) to gaddr on one
 * other node, signalling remote_ev there, with no answer — the bytes are
 * copied into the message, so src is free on return, and no event fires
 * here.  For level-triggered state its sender repeats (a heartbeat that
 * only advances the slice): one message and one wake-up.  It lands after
 * every transfer to that node started before it, or is refused.
 * @return 0 (sent); -EBUSY (an earlier transfer to node is undone: use
 * sp_xfer_and_signal); -EINVAL (node is this one, len 0 or too long,
 * range outside global memory, bad event); -STORM_ENOTINVIEW;
 * -STORM_ECLOSED; -STORM_EEXPELLED. */
#define SP_PUT_POSTED_MAX (16u << 10)
SP_API int sp_put_posted(sp_world_t *w, uint32_t node, const void *src,
			 size_t len, uint64_t gaddr, sp_ev_t remote_ev);

/** TEST-EVENT: consume one signal of ev.  timeout_ms 0 polls, < 0 blocks
 * without limit.  Signals count: n signals satisfy n calls.
 * @return 0 (signalled, operation succeeded); the operation's negative
 * status (e.g. -STORM_EABORTED) if the signal reports a failure;
 * -EAGAIN (poll, nothing signalled); -ETIMEDOUT; -EINVAL (bad event);
 * -STORM_ECLOSED. */
SP_API int sp_test_event(sp_world_t *w, sp_ev_t ev, int timeout_ms);

/** Whether signals of ev make sp_notify_fd() readable (quiet 0, the
 * default) or not (quiet 1).  For an event a main loop looks at on its own
 * schedule anyway — a periodic transfer's completion, seen at the next
 * period — it saves a wake-up per signal.  Turning quiet off while a signal
 * is pending makes the fd readable.  sp_test_event() is unaffected.
 * @return 0; -EINVAL (w NULL, bad event). */
SP_API int sp_event_quiet(sp_world_t *w, sp_ev_t ev, int quiet);

/** When ev was last signalled, in ns of the engine's clock (CLOCK_MONOTONIC
 * on a fabric, virtual in-process); 0 if never.  For a quiet event, the
 * time it completed rather than the time it was seen.
 * @return 0; -EINVAL. */
SP_API int sp_event_time(sp_world_t *w, sp_ev_t ev, uint64_t *ns);

/** A file descriptor that becomes readable when an event may have been
 * signalled or the view changed, for a daemon's main loop (libqb's
 * qb_loop_poll_add, poll, epoll) instead of a thread blocked in
 * sp_test_event().  It is an eventfd: when it polls readable, read 8
 * bytes from it (clearing it), then poll the events of interest with
 * sp_test_event(w, ev, 0) until -EAGAIN, and sp_view() for the view.
 * A wake-up may be spurious; a signal that arrives after the read makes
 * it readable again, so none is missed.  Created on the first call and
 * owned by w: closed by sp_close(); do not close it.  Any thread.
 * @return the fd (>= 0); -EINVAL (w NULL); -STORM_ECLOSED; -errno from
 * eventfd(2). */
SP_API int sp_notify_fd(sp_world_t *w);

typedef enum sp_cmp {
	SP_CMP_GE = 0, /* var >= value */
	SP_CMP_LT,     /* var <  value */
	SP_CMP_EQ,     /* var == value */
	SP_CMP_NE      /* var != value */
} sp_cmp_t;

/** COMPARE-AND-WRITE: evaluate (var op value) on every node of set; the
 * result is true iff it holds on all of them.  If it is true and
 * write_gaddr != SP_NO_WRITE, write_value is written at write_gaddr on every
 * node of set before any other COMPARE-AND-WRITE is evaluated anywhere
 * (all COMPARE-AND-WRITEs are totally ordered by one sequencer).  Blocks up
 * to timeout_ms (< 0: no limit).
 * @return 1 (true), 0 (false); -EINVAL (empty set, bad address or op);
 * -STORM_ENOTINVIEW; -STORM_EVIEWCHANGE (a node of the set left during the
 * operation: nothing was written); -ETIMEDOUT; -STORM_ECLOSED;
 * -STORM_EEXPELLED. */
#define SP_NO_WRITE UINT64_MAX
SP_API int sp_compare_and_write(sp_world_t *w, const sp_nodeset_t *set,
				uint64_t var_gaddr, sp_cmp_t op, int64_t value,
				uint64_t write_gaddr, int64_t write_value,
				int timeout_ms);

/* ------------------------------------------------------------------------ */
/* Membership                                                                */
/* ------------------------------------------------------------------------ */

/** A snapshot of this node's view of the membership. */
typedef struct sp_view_info {
	uint64_t epoch;        /* increases with every view change */
	uint32_t root;         /* the membership root (and CAW sequencer) */
	uint32_t nlive;        /* members in this view */
	int stable;            /* 1 once the root holds every acknowledgement */
	uint32_t height;       /* height of the membership tree */
	uint64_t stabilize_ns; /* at the root: view start -> all acks */
} sp_view_info_t;

/** Copy this node's current view.  live (optional, capacity
 * sp_node_count()) receives the members. @return 0, -STORM_ECLOSED. */
SP_API int sp_view(sp_world_t *w, sp_view_info_t *info, sp_nodeset_t *live);
/** Wait until this node holds a stable view with epoch >= min_epoch.
 * @return 0, -ETIMEDOUT, -STORM_EEXPELLED, -STORM_ECLOSED. */
SP_API int sp_view_wait(sp_world_t *w, uint64_t min_epoch, int timeout_ms);
/** The epoch of the view in which node last joined, as this node saw it
 * (0: it was in this node's first view).  A node that restarts and joins
 * again while still a member is removed and added back (two views), so a
 * change of this value is how layers above learn that whatever the old
 * incarnation held is gone. @return 0, -EINVAL, -STORM_ECLOSED. */
SP_API int sp_view_joined(sp_world_t *w, uint32_t node, uint64_t *epoch);
/** Report that node has failed (for failure detectors above this layer,
 * e.g. the heartbeat).  The root removes it and installs a new view.
 * @return 0, -ERANGE, -STORM_ECLOSED. */
SP_API int sp_report_failure(sp_world_t *w, uint32_t node);
/** Parent of this node in the current membership tree (-1 at the root) and
 * its children.  @return the number of children (written to at most max
 * entries of children), -STORM_ECLOSED. */
SP_API int sp_tree_links(sp_world_t *w, int64_t *parent, uint32_t *children,
			 uint32_t max);

/* ------------------------------------------------------------------------ */
/* The in-process machine (tests and simulation)                             */
/* ------------------------------------------------------------------------ */

/** Cost model of the in-process machine (LogGP, nanoseconds): overhead o per
 * message sent or received, latency L, gap per byte G.  Time inside it is
 * virtual: events are delivered in (virtual time, sequence) order by one
 * dispatcher, so a run is deterministic for a given sequence of calls. */
typedef struct sp_machine_params {
	uint64_t o_ns;
	uint64_t L_ns;
	double G_ns_per_byte;
	uint64_t seed; /* for drop injection */
} sp_machine_params_t;

/** Create an in-process machine of nnodes nodes (params NULL: defaults).
 * Worlds attach with provider "inproc" and sp_config_set_machine().
 * @return 0, -EINVAL, -ENOMEM. */
SP_API int sp_machine_create(uint32_t nnodes, const sp_machine_params_t *params,
			     sp_machine_t **out);
/** Destroy; every world attached must be closed first.  NULL accepted. */
SP_API void sp_machine_destroy(sp_machine_t *m);
/** Virtual time now (ns). */
SP_API uint64_t sp_machine_now(sp_machine_t *m);
/** Fault injection: kill a node (it stops at once, and calls blocked on or
 * made later on its world return -STORM_ECLOSED; its tree neighbours
 * notice after detect_ns of virtual time).  The world must still be closed
 * with sp_close(). @return 0, -ERANGE, -ENOENT (no world attached, or
 * already dead), -ENOMEM. */
SP_API int sp_machine_kill(sp_machine_t *m, uint32_t node, uint64_t detect_ns);
/** Drop each message from src to dst with probability p (UINT32_MAX as
 * src or dst: any).  @return 0, -EINVAL. */
SP_API int sp_machine_drop(sp_machine_t *m, uint32_t src, uint32_t dst,
			   double p);
/** Add delay_ns of virtual latency to messages from src to dst (UINT32_MAX:
 * any). @return 0, -EINVAL. */
SP_API int sp_machine_delay(sp_machine_t *m, uint32_t src, uint32_t dst,
			    uint64_t delay_ns);
/** Hold every message to node, or release them (hold 0), so tests can stop
 * a transfer between its phases. @return 0, -ERANGE. */
SP_API int sp_machine_hold(sp_machine_t *m, uint32_t node, int hold);
/** Block until the machine has nothing left to deliver (held messages
 * excepted) or timeout_ms passes. @return 0, -ETIMEDOUT. */
SP_API int sp_machine_quiesce(sp_machine_t *m, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* STORM_PRIMITIVES_H */
