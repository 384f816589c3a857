/*
 * relay.h — output records from node to node.  A batch job whose output
 * pattern has no %r has one file, written by the node of its rank 0 as
 * the job's user; the other nodes send their ranks' lines there, the way
 * every node sends records to the managers (outbox.h): one box at a time
 * by XFER-AND-SIGNAL, into the sender's slot of the outbox array in the
 * destination's global memory (unused on a node, where no manager
 * writes), acknowledged once written out.  The acknowledgement lands in
 * the sender's own slot of its own global memory, which no one else
 * writes.  A job's EXIT records wait until none of its lines is here or
 * on the way (nm_relay_holds), so the file is whole when the job ends.
 */
#ifndef STORM_NM_RELAY_H
#define STORM_NM_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct nm_relay {
	sp_world_t *w;
	const st_layout_t *lay;
	uint32_t self, first_node, nworld;
	sp_nodeset_t *one;
	/* sending: entries of (u32 destination, record) in order */
	uint8_t *pend;
	size_t pend_len, pend_cap;
	uint8_t *box;           /* the box in flight, to dest */
	uint32_t dest;
	uint64_t seq;
	int inflight, sent;
	/* receiving, per sender: the last box taken, the ack sent */
	uint64_t *taken;
	int64_t *ack;
	uint8_t *copy;
	int held;               /* a box received waits for its job */
};

/* How the owner takes a relayed record: 1 now, 0 not yet (the box waits
 * and is offered again), -1 never (dropped: a job this node does not
 * hold, or holds no file for). */
typedef int (*nm_relay_ready_fn)(void *ctx, const st_rec_t *rec);
typedef void (*nm_relay_take_fn)(void *ctx, const st_rec_t *rec);

/* first_node: the world id of the first node (the managers come before).
 * seq_base as for the outbox.  0 or -ENOMEM. */
int nm_relay_init(struct nm_relay *r, sp_world_t *w, const st_layout_t *lay,
		  uint32_t first_node, uint64_t seq_base);
void nm_relay_fini(struct nm_relay *r);
/* Queue a record for node dest. */
int nm_relay_put(struct nm_relay *r, uint32_t dest, uint8_t type,
		 uint32_t job, uint32_t rank, const void *data, uint32_t len);
/* Send the next box if none is in flight. */
void nm_relay_flush(struct nm_relay *r);
/* Take this node's relay events: its box's transfer (aborted: sent
 * again), its acknowledgement.  1 when the box in flight was written out
 * at its destination now. */
int nm_relay_events(struct nm_relay *r);
/* Whether any record of job is waiting here or on its way. */
int nm_relay_holds(const struct nm_relay *r, uint32_t job);
/* Offer the boxes other nodes sent here: each box whose records are all
 * ready is taken whole and acknowledged. */
void nm_relay_receive(struct nm_relay *r, nm_relay_ready_fn ready,
		      nm_relay_take_fn take, void *ctx);
/* Records wait here: to be sent, or received and held for their job
 * (offered again at the next heartbeat). */
static inline int nm_relay_waiting(const struct nm_relay *r)
{
	return r->pend_len > 0 || r->held;
}

#endif
