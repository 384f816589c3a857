/*
 * storm_bcs.h — what a BCS-MPI rank (libbcsmpi) and its node's BCS
 * engine (storm-nm, node/bcs.c) share: the per-job shared-memory
 * segment, the descriptors a rank posts and the completions the engine
 * returns (docs/bcsmpi.md §3).  Header-only but for the reduction
 * kernels (libstorm-bcs): the rank library takes nothing else from
 * Storm, and starts no thread and opens no socket.
 *
 * The segment is a file in the job's RAM-disk directory, owned by the
 * job's user (0600), mapped by the engine and inherited by each local
 * rank as a descriptor (STORM_BCS_FD).  Layout:
 *
 *   struct bcs_seg (header, the engine's) | nlocal x struct bcs_area,
 *   each followed by its eager buffer (ring_slots x eager_max bytes)
 *
 * A rank writes only its own area: descriptors into its post ring
 * (slot post_head % ring_slots, then post_head++ with release order),
 * and consumes completions from its done ring.  The engine reads a
 * rank's area as untrusted bytes: every descriptor is copied out before
 * it is looked at, every index is bounded, and a rank that breaks the
 * format fails its job, never the engine.  A rank waiting sleeps on
 * its area's `wake` futex; the engine bumps it and wakes it when it
 * posts completions.
 */
#ifndef STORM_BCS_H
#define STORM_BCS_H

#include <stdint.h>

#include "bcs_reduce.h"

#define BCS_SEG_MAGIC 0x53534342u /* "BCSS" */
#define BCS_SEG_VERSION 3u
#define BCS_RING_SLOTS 256u     /* descriptors in flight per rank */
#define BCS_EAGER_MAX 4096u     /* a send this small travels in its slot */
#define BCS_ANY (-1)            /* a receive's source or tag: any */
#define BCS_REASON_MAX 256u
#define BCS_CTX_WORLD 2u        /* MPI_COMM_WORLD's context (even: a
				 * communicator's collectives use ctx + 1) */

/* What a descriptor asks for. */
enum bcs_kind {
	BCS_D_SEND = 1,  /* peer: destination world rank; bytes from addr
			  * (or from the slot's eager buffer, BCS_F_EAGER) */
	BCS_D_RECV,      /* peer: source world rank or BCS_ANY; tag or
			  * BCS_ANY; at most bytes into addr */
	BCS_D_PROBE,     /* as RECV, but nothing is taken: the completion
			  * tells source, tag and bytes of the send it
			  * would match */
	BCS_D_COLL,      /* a collective on communicator ctx (coll) */
	BCS_D_COMM,      /* communicator ctx has the world ranks in the
			  * int32 array at addr (bytes / 4 of them, in
			  * communicator rank order): the engine's copy */
	BCS_D_FINALIZE,  /* the rank is done: no more descriptors */
	BCS_D_ABORT,     /* MPI_Abort: the job ends FAILED; errcode in op,
			  * the message (bytes at addr) in its reason */
	BCS_D_COMM_FREE, /* MPI_Comm_free of communicator ctx: once every
			  * member has and none of its collectives is
			  * pending, the engine forgets it */
	BCS_D_PULLED,    /* the rank pulled the bytes a BCS_PULL completion
			  * named (addr: its pull id), or could not
			  * (BCS_F_PULL_FAILED: the engine copies them) */
	BCS_D_CANCEL,    /* MPI_Cancel of the rank's receive req: if it is
			  * not matched yet it completes BCS_E_CANCELLED,
			  * else this does nothing */
};

/* Descriptor flags. */
#define BCS_F_EAGER 0x1u /* SEND: the bytes are in the slot's buffer */
#define BCS_F_SYNC 0x2u  /* SEND: complete only once matched (Ssend) */
#define BCS_F_PULL_FAILED 0x4u /* PULLED: the read failed */

/* Collectives the engine runs in its microphases. */
enum bcs_coll {
	BCS_C_BARRIER = 1,
	BCS_C_BCAST,     /* peer: root (communicator rank); addr; bytes */
	BCS_C_REDUCE,    /* peer: root; addr: send, addr2: receive (root);
			  * type, op: bcs_type, bcs_op; bytes: of one rank */
	BCS_C_ALLREDUCE, /* as REDUCE, every rank receives */
};

/* One descriptor: 80 bytes, copied out by the engine before use. */
struct bcs_desc {
	uint32_t kind;   /* enum bcs_kind */
	uint32_t flags;
	uint64_t req;    /* the rank's request, echoed in the completion */
	uint64_t ctx;    /* the communicator's context (point-to-point and
			  * collective traffic of one communicator never
			  * mix with another's) */
	int32_t peer;    /* see enum bcs_kind; world ranks for p2p */
	int32_t tag;
	uint64_t addr;   /* in the rank's address space */
	uint64_t bytes;
	uint64_t addr2;
	uint32_t coll;   /* enum bcs_coll */
	uint32_t op;     /* enum bcs_op (reductions); ABORT: error code */
	uint32_t type;   /* enum bcs_type (reductions) */
	uint32_t pad;
	uint64_t clock;  /* the rank's logical clock when it posted this */
};

/* Completion statuses (what the library maps to MPI error classes). */
enum bcs_status {
	BCS_OK = 0,
	BCS_E_TRUNCATE,  /* the send was longer than the receive */
	BCS_E_PEER,      /* the peer rank is gone (exited, killed) */
	BCS_E_ARG,       /* the engine refused the descriptor: reason in
			  * the segment's header */
	BCS_E_COLL,      /* mismatched collective (kind, root, op, size) */
	BCS_E_INTERN,    /* the engine could not do it (out of memory) */
	BCS_E_CANCELLED, /* RECV: taken back unmatched (BCS_D_CANCEL) */
	BCS_PULL = 16,   /* not a completion yet: a large message from a
			  * rank of this node matched this receive; read
			  * len bytes at src_addr of process src_pid into
			  * dst_addr (one copy, by the side that waits, as
			  * Open MPI's CMA), then post BCS_D_PULLED */
};

/* One completion. */
struct bcs_done {
	uint64_t req;
	int32_t status;  /* enum bcs_status */
	int32_t source;  /* RECV/PROBE: world rank of the send matched */
	int32_t tag;     /* ... and its tag */
	uint32_t pad;
	uint64_t bytes;  /* RECV/PROBE: the send's bytes */
	uint64_t clock;  /* RECV/PROBE: the send's clock */
	/* BCS_PULL only */
	uint64_t pull;   /* its id, for BCS_D_PULLED */
	uint64_t src_addr, dst_addr, len;
	int32_t src_pid;
	uint32_t src_area; /* the sender's area ... */
	uint32_t notice;   /* ... its notice slot for src_req, or
			    * BCS_NO_NOTICE */
	uint32_t pad2;
	uint64_t src_req;
};

#define BCS_NO_NOTICE UINT32_MAX

/* A rank's area.  Rank-written fields first, engine-written after, each
 * group on its own cache line. */
struct bcs_area {
	/* written by the rank */
	uint64_t post_head;   /* descriptors posted (atomic, release) */
	uint64_t done_tail;   /* completions consumed */
	uint64_t clock;       /* its logical clock now */
	uint32_t blocked;     /* 1 while it waits in a blocking call and
			       * can post nothing before a completion */
	uint32_t polls;       /* bumped by a Test or Iprobe that found
			       * nothing: the rank polls (bcs_match.h) */
	uint32_t pad0[8];
	/* written by the engine */
	uint64_t post_tail;   /* descriptors taken */
	uint64_t done_head;   /* completions posted (atomic, release) */
	uint32_t wake;        /* futex: bumped when completions come */
	int32_t rank;         /* its world rank */
	uint32_t nap;         /* nonzero while the engine sleeps through
			       * slices: a rank that posts, polls or waits
			       * rings the doorbell once per value */
	uint32_t pad1[9];
	struct bcs_desc post[BCS_RING_SLOTS];
	struct bcs_done done[BCS_RING_SLOTS];
	/* written by the job's other ranks (never read by the engine): a
	 * receiver that pulled this rank's bytes (BCS_PULL) puts the send's
	 * request in the slot the engine named, bumps notices and wakes
	 * it, so the send completes now rather than when the engine hears
	 * of the pull at the next slice (its completion then is a repeat) */
	uint64_t notices;
	uint64_t notice[BCS_RING_SLOTS];
};

/* The segment's header (the engine's; ranks only read it). */
struct bcs_seg {
	uint32_t magic, version;
	uint32_t job;
	uint32_t size;        /* ranks in the job */
	uint32_t nlocal;      /* ranks on this node: the areas */
	uint32_t ring_slots;  /* BCS_RING_SLOTS */
	uint32_t eager_max;   /* BCS_EAGER_MAX */
	uint32_t failed;      /* the engine failed the job: calls return */
	uint64_t bytes;       /* the whole segment */
	uint64_t area_off;    /* the first area */
	uint64_t area_stride; /* area + its eager buffer */
	char reason[BCS_REASON_MAX]; /* failed: why (for the library's
				      * error message) */
};

/* The area of local rank i, and the eager buffer of its slot k. */
static inline struct bcs_area *bcs_area_of(struct bcs_seg *s, uint32_t i)
{
	return (struct bcs_area *)((char *)s + s->area_off +
				   (uint64_t)i * s->area_stride);
}

static inline uint8_t *bcs_eager_of(struct bcs_seg *s, uint32_t i,
				    uint32_t k)
{
	return (uint8_t *)bcs_area_of(s, i) + sizeof(struct bcs_area) +
	       (uint64_t)k * s->eager_max;
}

/* Bytes of a segment for nlocal ranks. */
static inline uint64_t bcs_seg_bytes(uint32_t nlocal)
{
	uint64_t stride = sizeof(struct bcs_area) +
			  (uint64_t)BCS_RING_SLOTS * BCS_EAGER_MAX;

	stride = (stride + 4095u) & ~(uint64_t)4095u;
	return 4096u + (uint64_t)nlocal * stride;
}

#endif
