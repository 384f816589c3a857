/*
 * outbox.h — what this node tells the managers: stdout/stderr, EXIT and
 * FAIL records, queued here and sent as one box at a time
 * (XFER-AND-SIGNAL) to every manager replica in the view, into this
 * node's mailbox slot there.  The strobe master casts the box to its
 * replicas and acknowledges it once they all have it (outack); only then
 * does the next box go.  A box whose transfer aborted is sent again, and
 * one not yet acknowledged goes to every replica that joins the view
 * meanwhile: the next strobe master may be one of them (a replica that
 * restarted, elected when the master died), and only the master casts.
 */
#ifndef STORM_NM_OUTBOX_H
#define STORM_NM_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct nm_outbox {
	sp_world_t *w;
	const st_layout_t *lay;
	uint32_t nmanagers;
	uint8_t *pend;          /* records waiting */
	size_t pend_len, pend_cap;
	uint8_t *box;           /* the box in flight */
	uint64_t seq;
	int inflight, sent, acked;
	sp_nodeset_t *sent_to;  /* the replicas the box in flight went to */
	uint32_t *ends;         /* jobs whose EXIT/FAIL records are in it */
	uint32_t nends, ends_cap;
};

/* seq_base: boxes are numbered from a base of this incarnation's own, so
 * that the manager tells them from the last one's.  0 or -ENOMEM. */
int nm_outbox_init(struct nm_outbox *ob, sp_world_t *w,
		   const st_layout_t *lay, uint32_t nmanagers,
		   uint64_t seq_base);
void nm_outbox_fini(struct nm_outbox *ob);
/* Queue a record (split into records that fit one box).  Output beyond
 * a bound the managers are not taking is dropped, with a warning. */
void nm_outbox_put(struct nm_outbox *ob, uint8_t type, uint32_t job,
		   uint32_t rank, const void *data, uint32_t len);
/* Send what is waiting, unless a box is in flight.  Returns the jobs
 * whose EXIT or FAIL records left with it (*jobs, valid until the next
 * call), 0 when none did. */
uint32_t nm_outbox_flush(struct nm_outbox *ob, const uint32_t **jobs);
/* Take the box's events (its transfer done or aborted, its ack).  1 when
 * the box in flight was acknowledged now (the next may go). */
int nm_outbox_events(struct nm_outbox *ob);
/* A box is in flight and not acknowledged yet: the node keeps its slices
 * (nm_outbox_flush() sends it to replicas new in the view). */
static inline int nm_outbox_unacked(const struct nm_outbox *ob)
{
	return ob->inflight && !ob->acked;
}
/* Records wait for a box (sent at a heartbeat). */
static inline int nm_outbox_waiting(const struct nm_outbox *ob)
{
	return ob->pend_len > 0;
}

#endif
