/*
 * fetch.h — a strobe master that must stage a job some of whose input
 * blobs it does not hold (inputs.h: a majority of the replicas got them
 * before the job was accepted, push.h; this one may have been down, or
 * joined since) asks its peers for them, over the client protocol
 * (`inputs_fetch`, root only, docs/protocol.md §5.13), blob by blob in
 * pieces of at most MMD_FETCH_PIECE bytes, into its own store; a blob
 * is kept only if its bytes hash to its name.  A worker thread does the
 * blocking network part (the peer's unix socket if it is on this host,
 * else its TCP address with a MUNGE credential of root), so the strobe
 * never waits for a peer; the stager asks again each slice until the
 * answer is in, then stages from the store, or, when no live peer has
 * a blob, fails the job saying so.
 *
 * State (under mu):  IDLE --ask(job)--> BUSY --worker--> DONE(job, found)
 *                    DONE --step(same job)--> IDLE (the answer taken)
 *                    DONE --step(other job)--> BUSY (the old answer dropped)
 */
#ifndef STORM_MMD_FETCH_H
#define STORM_MMD_FETCH_H

#include <pthread.h>
#include <stdint.h>

#include <storm_proto.h>

#include "inputs.h"

#define MMD_FETCH_PIECE (4u << 20) /* bytes per inputs_fetch reply */

enum { MMD_FETCH_IDLE, MMD_FETCH_BUSY, MMD_FETCH_DONE };

struct mmd_fetch {
	const st_config_t *cfg;
	const st_host_t *self;
	struct mmd_inputs *in;
	pthread_t th;
	int started;
	int efd;                 /* readable: an answer is in */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, state;         /* under mu */
	uint32_t job, n;         /* asked for: job, its number of inputs */
	mm_input_t want[MMD_INPUTS_MAX]; /* ... and those inputs */
	int found;               /* DONE: every blob of the job is here */
	char note[512];          /* DONE and !found: why */
};

/* One inputs_fetch reply, as checked. */
struct mmd_fetch_piece {
	uint64_t size;  /* the blob's bytes */
	uint32_t len;   /* bytes of the INPUT frame that follows (0: none) */
};

/* Check a peer's reply to inputs_fetch (len bytes of untrusted JSON) for
 * the piece at off of a blob whose size an earlier reply gave (first:
 * none did), total bytes of the job kept so far, against cap: 0 and *pc;
 * -ENOENT (the peer does not hold the job's inputs); -EPROTO (a refusal,
 * malformed, or out of bounds: a length over MMD_FETCH_PIECE or past the
 * size, a size that changed, an empty piece before the end, the job
 * past cap), why says which. */
int mmd_fetch_reply(const uint8_t *p, size_t len, uint64_t off, int first,
		    uint64_t size, uint64_t total, uint64_t cap,
		    struct mmd_fetch_piece *pc, char *why, size_t whylen);
/* Start the worker (idle until asked).  0 or -errno. */
int mmd_fetch_init(struct mmd_fetch *f, const st_config_t *cfg,
		   const st_host_t *self, struct mmd_inputs *in);
void mmd_fetch_fini(struct mmd_fetch *f);
/* The stager, for job whose n inputs are not all here: 1 (fetched: in
 * the store now), 0 (no live peer has some: why says which), -EAGAIN
 * (asked, not answered yet: again next slice).  Main loop only. */
int mmd_fetch_step(struct mmd_fetch *f, uint32_t job, uint32_t n,
		   const mm_input_t *inputs, char *why, size_t whylen);
/* The efd is readable: consume it (the stager takes the answer). */
void mmd_fetch_drain(struct mmd_fetch *f);

#endif
