/*
 * bcs_xchg.h — the BCS engine's records from node to node (docs/bcsmpi.md
 * §6).  At a slice boundary the engine of each node writes, for every
 * other node it shares a BCS-MPI job with, one record: a section per
 * such job (that job's round: its ranks' states, descriptors and bytes,
 * bcs_wire.h).  A record goes by XFER-AND-SIGNAL into the sender's
 * buffer in the destination's global memory (layout.bcs: two buffers per
 * sender, used alternately), and the destination copies it out as soon
 * as it lands (ST_EV_BCS).
 *
 * Flow control.  A buffer is written again only once the destination
 * has acknowledged the record with sections last written there: every
 * record carries the sender's count of records taken from the
 * destination, and a node that took a record with sections and has
 * nothing to say sends an acknowledgement alone (which needs none).  An
 * acknowledgement alone takes no number of the sequence: it names the
 * last record with sections and goes into the buffer the next one will
 * fill, so whatever overwrites it, unread or not, carries at least as
 * much, and the destination never waits for a record that is gone.  So
 * no record with sections is overwritten unread, and a node never waits
 * for more than its peers' last record.  The transfers of one boundary
 * all complete (ST_EV_LOCAL_BCS) before the next boundary's start.
 *
 * Pure plumbing: sections are opaque here, and what a lost peer means
 * (its jobs fail) is the engine's to decide.
 */
#ifndef STORM_NM_BCS_XCHG_H
#define STORM_NM_BCS_XCHG_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>

#define BCS_REC_MAGIC 0x58534342u /* "BCSX" */

/* A record's header; its sections follow, each a struct bcs_sect_hdr
 * and len bytes (8-aligned). */
struct bcs_rec_hdr {
	uint32_t magic;
	uint32_t len;    /* the whole record */
	uint64_t inc;    /* the sender's incarnation (random, nonzero) */
	uint64_t seq;    /* the sender's records with sections to this
			  * node, from 1 (this one's, or, nsect 0: the
			  * last one's) */
	uint64_t ack_inc; /* the destination's incarnation ack is of */
	uint64_t ack;    /* the destination's records (with sections) the
			  * sender took */
	uint32_t from;   /* the sender's world id */
	uint32_t nsect;
};

struct bcs_sect_hdr {
	uint32_t job;
	uint32_t len;
	uint64_t round;
	uint32_t inc;    /* the job's incarnation (its restarts): a section
			  * of a killed incarnation still in flight is not
			  * taken for the restarted one's */
	uint32_t pad;
};

struct bcs_chan {
	uint64_t sent;    /* records with sections sent to it */
	uint64_t need[2]; /* per buffer there: the seq of the record with
			   * sections last written, until it acknowledges */
	uint64_t acked;   /* its acknowledgement of ours */
	uint64_t taken;   /* its records (with sections) we took */
	uint64_t inc, old_inc; /* its incarnation, and the one before */
	uint64_t told;    /* the acknowledgement it last got from us */
	int owe;          /* we took a record with sections since */
	uint8_t *out;     /* the record being built (len bytes) */
	uint32_t out_len;
	uint32_t nsect;
};

struct bcs_xchg {
	sp_world_t *w;
	uint64_t base;     /* layout.bcs */
	uint32_t len;      /* layout.bcs_len */
	uint32_t self, nworld;
	uint64_t inc;      /* ours */
	struct bcs_chan *ch; /* per world id */
	uint8_t *copy;     /* a record read out */
	sp_nodeset_t *one;
	uint32_t inflight; /* transfers of the last boundary not complete */
	int pending;       /* a record with sections may wait for a flush */
	uint64_t sent_records, taken_records, lost; /* counters */
};

/* w NULL: no other node (tests, and a world not yet open). 0, -ENOMEM. */
int bcs_xchg_init(struct bcs_xchg *x, sp_world_t *w, uint64_t base,
		  uint32_t len, uint32_t self, uint32_t nworld);
void bcs_xchg_fini(struct bcs_xchg *x);
/* Whether a record to peer can be built now: the last boundary's
 * transfers are complete and the buffer it would fill is free. */
int bcs_xchg_ready(const struct bcs_xchg *x, uint32_t peer);
/* Bytes a section to peer may still hold in this boundary's record. */
size_t bcs_xchg_room(const struct bcs_xchg *x, uint32_t peer);
/* Append a section (job and its incarnation, round, len bytes of data)
 * to the record for peer.  0; -ENOSPC (no room, or not bcs_xchg_ready: a section of any
 * length), -ENOMEM: nothing appended. */
int bcs_xchg_put(struct bcs_xchg *x, uint32_t peer, uint32_t job,
		 uint32_t inc, uint64_t round, const void *data, size_t len);
/* Start this boundary's transfers: every record with sections, and an
 * acknowledgement to each node owed one.  Returns the transfers
 * started. */
uint32_t bcs_xchg_flush(struct bcs_xchg *x);
/* Whether a record with sections waits for a flush (one was built while
 * the last flush's transfers were still in flight). */
int bcs_xchg_pending(const struct bcs_xchg *x);
/* Take the local completions (ST_EV_LOCAL_BCS). */
void bcs_xchg_events(struct bcs_xchg *x);
/* Records that arrived (ST_EV_BCS), per sender in order: each section
 * handed to fn (data valid during the call). */
typedef void (*bcs_xchg_section_fn)(void *ctx, uint32_t from, uint32_t job,
				    uint32_t inc, uint64_t round,
				    const uint8_t *data, size_t len);
void bcs_xchg_receive(struct bcs_xchg *x, bcs_xchg_section_fn fn, void *ctx);
/* The node left the view or came back: forget both directions. */
void bcs_xchg_reset(struct bcs_xchg *x, uint32_t peer);

/* Check a record image of len bytes (from a peer: bounded before use).
 * 0, or -EINVAL with why. */
int bcs_rec_check(const uint8_t *rec, size_t len, char *why, size_t whylen);

#endif
