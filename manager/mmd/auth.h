/*
 * auth.h — MUNGE credentials decoded off the main loop.  munge_decode()
 * asks munged over a socket and waits for its answer; a slow or stuck
 * munged must not stall the strobe, so one worker thread decodes, in
 * order, and the main loop takes the results when the eventfd says so.
 * A request is named by the connection's number (not its pointer: the
 * connection may be gone when its answer comes).
 */
#ifndef STORM_MMD_AUTH_H
#define STORM_MMD_AUTH_H

#include <pthread.h>
#include <stdint.h>

#define MMD_AUTH_QUEUE 1024 /* decodes waiting at most */

struct mmd_auth_item;

struct mmd_auth_result {
	uint64_t conn;
	int ok;             /* munged vouches for uid, gid and payload */
	uint32_t uid, gid;
	char payload[512];  /* NUL-terminated; longer ones fail */
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
/* Queue cred for connection conn.  @return 0, -EAGAIN (queue full),
 * -ENOMEM. */
int mmd_auth_submit(struct mmd_auth *a, uint64_t conn, const char *cred);
/* The next result: 1 and *r, or 0 when none is left. */
int mmd_auth_next(struct mmd_auth *a, struct mmd_auth_result *r);

#endif
