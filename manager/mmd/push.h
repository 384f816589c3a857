/*
 * push.h — a job's input blobs (inputs.h) copied to the other manager
 * replicas before its SUBMIT is proposed, so that an acknowledged job
 * never depends on the one head that took it: the set goes on only once
 * a majority of the configured replicas (this one included) hold every
 * blob.  Any quorate group then contains a holder, and a strobe master
 * without them fetches them (fetch.h).  The copy goes over the client
 * protocol (`inputs_put`, root only, docs/protocol.md §5.14): a blob the
 * peer holds costs one round trip, one it lacks follows in INPUT frames
 * and is kept there only if it hashes to its name.
 *
 * One worker thread does the network part, set by set, with one
 * connection per peer kept open between sets; a peer that failed is not
 * dialled again for MMD_PUSH_BACKOFF_MS, so a dead head costs the sets
 * nothing but its absence from the count.
 */
#ifndef STORM_MMD_PUSH_H
#define STORM_MMD_PUSH_H

#include <pthread.h>
#include <stdint.h>

#include <storm_proto.h>

#include "inputs.h"

#define MMD_PUSH_QUEUE 1024u      /* sets waiting, at most */
#define MMD_PUSH_BACKOFF_MS 1000u
#define MMD_PUSH_PIECE (1u << 20) /* bytes per INPUT frame */

struct mmd_push_peer {
	int fd;                 /* -1: not connected */
	int tcp;
	uint64_t down_until_ms; /* failed: not dialled before */
};

struct mmd_push {
	const st_config_t *cfg;
	const st_host_t *self;
	struct mmd_inputs *in;
	uint32_t members;       /* replicas in the current view (under mu) */
	struct mmd_push_peer *peers; /* cfg->nmanagers (worker only) */
	pthread_t th;
	int started;
	int efd;                /* readable: sets are done */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	struct mmd_input_set *todo, **todo_tail, *done, **done_tail;
	uint32_t queued;
};

/* Start the worker.  0 or -errno. */
int mmd_push_init(struct mmd_push *p, const st_config_t *cfg,
		  const st_host_t *self, struct mmd_inputs *in);
void mmd_push_fini(struct mmd_push *p);
/* The current view has members replicas (the replication status). */
void mmd_push_view(struct mmd_push *p, uint32_t members);
/* Whether sets must be pushed at all (more than one replica). */
int mmd_push_wanted(const struct mmd_push *p);
/* Queue a stored set.  0, or -EAGAIN (MMD_PUSH_QUEUE sets wait): the
 * set is the caller's still. */
int mmd_push_queue(struct mmd_push *p, struct mmd_input_set *s);
/* The next set pushed (rc 0) or not (rc and err say why): 1 and *s, or
 * 0. */
int mmd_push_next(struct mmd_push *p, struct mmd_input_set **s);

/* Check a peer's reply to inputs_put (len bytes of untrusted JSON):
 * 1 (it holds the blob: done), 2 (send the bytes), 0 (the bytes came
 * and were kept), or -EPROTO / the peer's -errno with why filled.
 * first: the reply to the request itself (1 or 2 expected), else the
 * one after the bytes (0 expected). */
int mmd_push_reply(const uint8_t *p, size_t len, int first, char *why,
		   size_t whylen);

#endif
