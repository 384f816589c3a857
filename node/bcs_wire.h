/*
 * bcs_wire.h — what one node tells the others of a BCS-MPI job's round
 * (docs/bcsmpi.md §6): a section of items, each a struct bcs_item and
 * len bytes (8-aligned).  Every node of the job applies every node's
 * section of a round in the same order, so each runs the same matching
 * on the same inputs.
 *
 *   STATE  a rank's state for the matcher (struct bcs_w_state)
 *   DESC   a descriptor the rank posted (struct bcs_w_desc), then its
 *          bytes: eager data, a communicator's group, an abort text
 *   DATA   bytes of a matched message (struct bcs_w_data, then bytes),
 *          from the sender's node to the receiver's
 *   COLL   bytes of a collective's chunk (struct bcs_w_coll, then bytes):
 *          the root's for a broadcast, each member's for a reduction
 *   CUT    a checkpoint epoch this node was told to take (struct
 *          bcs_w_cut): every node holds the job after this round
 *          (bcs_cut.c)
 *
 * Sections come from other node managers over the authenticated fabric,
 * but are decoded as if they could be anything: bcs_wire_next bounds
 * every item before it is used.
 */
#ifndef STORM_NM_BCS_WIRE_H
#define STORM_NM_BCS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <storm_bcs.h>

enum bcs_w_type {
	BCS_W_STATE = 1, BCS_W_DESC, BCS_W_DATA, BCS_W_COLL, BCS_W_CUT
};

struct bcs_item {
	uint16_t type;
	uint16_t pad;
	uint32_t len;     /* bytes after the item's fixed part */
};

#define BCS_W_BLOCKED 1u
#define BCS_W_GONE 2u
#define BCS_W_POLLED 4u

struct bcs_w_state {
	int32_t rank;
	uint32_t flags;   /* BCS_W_* */
	uint64_t clock;
	uint64_t sent;    /* sends posted */
	uint32_t pending; /* sends and collectives incomplete */
	uint32_t pad;
};

struct bcs_w_desc {
	int32_t rank;
	uint32_t pad;
	uint64_t seq;     /* sends: the rank's send sequence; receives:
			   * its receive sequence */
	struct bcs_desc d;
};

struct bcs_w_data {
	uint64_t match;   /* the job's match number */
	uint64_t off;
};

struct bcs_w_coll {
	uint64_t ctx;     /* the communicator */
	uint64_t n;       /* its collectives completed before this one */
	int32_t member;   /* communicator rank whose bytes these are */
	uint32_t pad;
	uint64_t off;
};

struct bcs_w_cut {
	uint32_t epoch;
	uint32_t pad;
};

/* One decoded item: its fixed part copied out, its bytes in place. */
struct bcs_witem {
	enum bcs_w_type type;
	union {
		struct bcs_w_state st;
		struct bcs_w_desc desc;
		struct bcs_w_data data;
		struct bcs_w_coll coll;
		struct bcs_w_cut cut;
	} u;
	const uint8_t *bytes;
	size_t nbytes;
};

/* Append an item to buf (cap bytes, *len used): 0, or -ENOSPC.  bytes
 * NULL leaves its nbytes for the caller to fill (at *len - the 8-aligned
 * nbytes, once it returns). */
int bcs_wire_put(uint8_t *buf, size_t cap, size_t *len, enum bcs_w_type type,
		 const void *fixed, const void *bytes, size_t nbytes);
/* The bytes an item with nbytes of data takes. */
size_t bcs_wire_size(enum bcs_w_type type, size_t nbytes);
/* The next item of a section at *off: 1 (it, *off advanced), 0 at the
 * end, -EINVAL (why says what) for bytes that are not an item. */
int bcs_wire_next(const uint8_t *sec, size_t len, size_t *off,
		  struct bcs_witem *it, char *why, size_t whylen);

#endif
