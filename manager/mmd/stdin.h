/*
 * stdin.h — rank 0's stdin, from the stormctl connection this replica
 * holds to the node of the job's rank 0 (docs/protocol.md 2.8).  Not
 * replicated: the bytes exist only on the connection, here, and on the
 * node.  Each `run` whose REPLY this replica sent has a stream: with
 * "stdin": "0" its client's STDIN frames feed it, one frame at a time
 * (the client's socket is not read while a frame waits here: TCP's own
 * flow control holds stormctl back); with "none" (or a client that does
 * not say) its only chunk is the end.  Once the job RUNs, each frame goes
 * as one chunk by XFER-AND-SIGNAL into this replica's inbox slot on rank
 * 0's node, and no other chunk goes to that node before the node
 * acknowledges it.  What waits is bounded: one frame per stream, one
 * chunk per node.
 *
 *   stream   event                         action
 *   open     STDIN frame (n > 0)           hold it; pause the client
 *   open     STDIN frame (empty), client   end due
 *            gone
 *   open     job RUNNING, node's slot free send the frame (+ end); resume
 *   open     node acks "closed"            done: an empty STDIN frame
 *                                          tells the client to stop
 *   any      job ended (or unknown)        done (the END frame follows)
 * After "done", STDIN frames from the client are read and dropped.
 */
#ifndef STORM_MMD_STDIN_H
#define STORM_MMD_STDIN_H

#include <stdint.h>

#include <storm_manager.h>
#include <storm_primitives.h>
#include <storm_proto.h>

#include "clients.h"

struct mmd_stdin_stream;
struct mmd_stdin_node;

struct mmd_stdin {
	const st_layout_t *lay;
	uint32_t nworld;
	uint32_t self;               /* this replica's index (world id) */
	struct mmd_clients *clients;
	struct mmd_stdin_stream *list;
	struct mmd_stdin_node *nodes; /* per world id */
	sp_nodeset_t *one;
	uint64_t seq_base;           /* chunk numbers of this incarnation */
};

/* 0 or -ENOMEM.  seq_base: differs from any earlier incarnation's
 * (the nodes take a chunk whose number differs from the last one's). */
int mmd_stdin_init(struct mmd_stdin *x, const st_layout_t *lay,
		   uint32_t nworld, uint32_t self, struct mmd_clients *clients,
		   uint64_t seq_base);
void mmd_stdin_fini(struct mmd_stdin *x);
/* c's run of job was answered: forward 1, its STDIN frames feed rank 0;
 * 0, rank 0 gets the end at once.  0 or -ENOMEM (rank 0 then waits for
 * the manager feeding it to leave: said in the log). */
int mmd_stdin_open(struct mmd_stdin *x, struct mmd_client *c, uint32_t job,
		   int forward);
/* A STDIN frame from c (len untrusted bytes, at most
 * ST_STDIN_FRAME_MAX: clients.c checked). */
void mmd_stdin_frame(struct mmd_stdin *x, struct mmd_client *c,
		     const uint8_t *p, uint32_t len);
/* c goes away: its stream ends after what it sent. */
void mmd_stdin_gone(struct mmd_stdin *x, struct mmd_client *c);
/* ST_EV_STDIN_ACK: take the nodes' acks (w may be NULL: nothing). */
void mmd_stdin_acks(struct mmd_stdin *x, sp_world_t *w);
/* Send what can go now (after a frame, an ack, an applied operation). */
void mmd_stdin_step(struct mmd_stdin *x, sp_world_t *w,
		    const mm_state_t *st);

#endif
