/*
 * auth.h — MUNGE credentials decoded off the main loop.  munge_decode()
 * asks munged over a socket and waits for its answer; a slow or stuck
 * munged must not stall the strobe, so one worker thread decodes, in
 * order, and the main loop takes the results when the eventfd says so.
 * A request is named by the connection's number (not its pointer: the
 * connection may be gone when its answer comes).
 *
 * Besides uid, gid and payload, a result names the credential for the
 * cluster's replay cache (MM_OP_CRED): its id is the first
 * MM_CRED_ID_BYTES of SHA-256("storm-cred-1" | uid | gid | encode time |
 * ttl | payload), all as munged decoded them — never the credential's
 * text, whose base64 may be spelled more than one way — and it expires
 * at encode time + ttl.  The payload carries a random nonce
 * (docs/protocol.md §2.6), so two credentials never share an id.
 */
#ifndef STORM_MMD_AUTH_H
#define STORM_MMD_AUTH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <storm_manager.h>

#define MMD_AUTH_QUEUE 1024 /* decodes waiting at most */

struct mmd_auth_item;

struct mmd_auth_result {
	uint64_t conn;
	int ok;             /* munged vouches for uid, gid and payload */
	uint32_t uid, gid;
	char payload[512];  /* NUL-terminated; longer ones fail */
	size_t payload_len;
	uint8_t cred_id[MM_CRED_ID_BYTES];
	uint64_t expire_ms; /* epoch ms: encode time + time to live */
	char err[256];      /* !ok: munged's reason */
};

struct mmd_auth {
	pthread_t thread;
	int started, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mmd_auth_item *in, **in_tail, *out, **out_tail;
	uint32_t queued;
	int efd;            /* readable when results wait */
	char socket[1024];  /* munged's, or "": libmunge's default */
};

/* Start the worker.  @return 0 or -errno. */
int mmd_auth_start(struct mmd_auth *a, const char *munge_socket);
/* Stop it; pending decodes are dropped. */
void mmd_auth_stop(struct mmd_auth *a);
/* Queue cred (clen bytes, not NUL-terminated) for connection conn.
 * @return 0, -EAGAIN (queue full), -ENOMEM. */
int mmd_auth_submit(struct mmd_auth *a, uint64_t conn, const char *cred,
		    size_t clen);
/* The next result: 1 and *r, or 0 when none is left. */
int mmd_auth_next(struct mmd_auth *a, struct mmd_auth_result *r);

#endif
