/*
 * stdin.h — rank 0's stdin on its node (docs/protocol.md 2.8).  Rank 0 of
 * a `run` job (not batch, first incarnation) reads a pipe whose other end
 * this module holds; every other rank, and rank 0 of a batch job or of a
 * restarted one, reads /dev/null.  The bytes come from the manager
 * replica that holds the job's stormctl connection: it XFER-AND-SIGNALs
 * one chunk at a time into its own inbox slot here (one slot per
 * replica), and sends the next only once this node acknowledges the last
 * (an XFER-AND-SIGNAL of a 16-byte ack into the replica's line for this
 * node).  A chunk is taken out of its slot only when the job's buffer
 * (one chunk) is empty, so what waits here for a slow rank 0 is at most
 * a chunk per job plus the pipe; until then the slot stays full and the
 * replica stops reading its client.
 *
 * The pipe is closed (rank 0 reads EOF) after an EOF chunk, when the
 * replica feeding it leaves the view (what it had not sent is lost with
 * it), or when the job is forgotten here.  A write that fails (rank 0
 * closed its stdin or exited) makes every later chunk of the job answered
 * "closed": the replica tells stormctl to stop sending.
 */
#ifndef STORM_NM_STDIN_H
#define STORM_NM_STDIN_H

#include <stdint.h>

#include <qb/qbloop.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct nm_stdin_stream;

struct nm_stdin {
	sp_world_t *w;
	const st_layout_t *lay;
	qb_loop_t *loop;
	uint32_t nmanagers;
	struct nm_stdin_stream *list;
	uint8_t (*ack)[ST_STDIN_ACK_LEN]; /* per replica: the last ack */
	uint64_t *taken;  /* per replica: seq of the last chunk taken */
	int *held;        /* per replica: its slot waits for a buffer */
	uint8_t *copy;    /* a slot read whole (lay->stdin_len) */
	sp_nodeset_t *one;
	/* whether job's rank 0 is still to start here with a stdin pipe
	 * (its chunks wait in their slot until nm_stdin_open) */
	int (*starting)(void *ctx, uint32_t job);
	void *ctx;
};

/* 0 or -ENOMEM. */
int nm_stdin_init(struct nm_stdin *s, sp_world_t *w, const st_layout_t *lay,
		  qb_loop_t *loop, uint32_t nmanagers,
		  int (*starting)(void *ctx, uint32_t job), void *ctx);
void nm_stdin_fini(struct nm_stdin *s);
/* Job's rank 0 starts here reading a pipe: its read end (the caller gives
 * it to the rank and closes it), or -errno.  The write end is this
 * module's until nm_stdin_forget(job). */
int nm_stdin_open(struct nm_stdin *s, uint32_t job);
/* ST_EV_STDIN fired: take the chunks waiting in the slots. */
void nm_stdin_events(struct nm_stdin *s);
/* The view changed (live: its members): streams fed by a replica that
 * left end (EOF). */
void nm_stdin_view(struct nm_stdin *s, const sp_nodeset_t *live);
/* The job is forgotten here: its pipe closes. */
void nm_stdin_forget(struct nm_stdin *s, uint32_t job);

#endif
