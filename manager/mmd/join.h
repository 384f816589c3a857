/*
 * join.h — this head node joins the machine (the world of head and
 * compute nodes) without stopping the main loop.  An attempt waits up to
 * seconds for a view (sp_open); the main loop serves clients and the
 * replication group meanwhile, so a worker thread makes the attempt and
 * the loop takes the opened world (or the failure) when the eventfd is
 * readable.  One attempt at a time; the caller asks again after a
 * failure.
 */
#ifndef STORM_MMD_JOIN_H
#define STORM_MMD_JOIN_H

#include <pthread.h>
#include <stdint.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct mmd_join {
	const st_config_t *cfg;
	uint32_t world_id;
	pthread_t th;
	int started;
	int efd;                 /* readable: an attempt ended */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, asked, busy, done; /* under mu */
	int may_found;           /* of the attempt asked for */
	int rc;                  /* of the attempt done */
	sp_world_t *w;           /* opened, not yet taken */
	char err[1024];
};

/* Start the worker (idle until asked).  0 or -errno. */
int mmd_join_init(struct mmd_join *j, const st_config_t *cfg,
		  uint32_t world_id);
/* Stop the worker (waits for an attempt under way) and close a world
 * opened but not taken. */
void mmd_join_fini(struct mmd_join *j);
/* Ask for an attempt (may_found: manager 0 may found the machine rather
 * than wait for a root).  1 if asked, 0 while an attempt is under way
 * or its outcome not yet taken. */
int mmd_join_ask(struct mmd_join *j, int may_found);
/* The efd is readable: 1 with the outcome (*w opened and rc 0, or rc
 * -errno and err saying why), or 0 if no attempt has ended. */
int mmd_join_take(struct mmd_join *j, sp_world_t **w, int *rc, char *err,
		  size_t errlen);
/* 1 while an attempt is asked for, under way or not yet taken. */
int mmd_join_pending(struct mmd_join *j);

#endif
