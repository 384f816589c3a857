/*
 * join.c — joining the machine off the main loop (join.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "join.h"

/* How long an attempt waits for a view: the root founding the machine
 * (boot) has its own, shorter, gathering wait. */
#define JOIN_WAIT_MS 3000
#define BOOT_WAIT_MS 1000

/* One attempt: found (world 0 only) or join.  A view that removes our
 * previous incarnation can reach this one while it joins: join again, as
 * a new incarnation, once. */
static int attempt(const st_config_t *cfg, uint32_t id, int may_found,
		   sp_world_t **w, char *err, size_t errlen)
{
	int boot = may_found && id == 0, rc = 0;

	for (int expelled = 0;; expelled++) {
		sp_config_t *sc = NULL;

		rc = st_config_world(cfg, id, !boot,
				     boot ? BOOT_WAIT_MS : JOIN_WAIT_MS, &sc,
				     err, errlen);
		if (!rc)
			rc = sp_open(sc, w, err, errlen);
		sp_config_destroy(sc);
		if (rc != -STORM_EEXPELLED || expelled == 1)
			break;
		qb_log(LOG_INFO, "joining again: %s", err);
	}
	return rc;
}

static void *worker(void *arg)
{
	struct mmd_join *j = arg;

	pthread_mutex_lock(&j->mu);
	for (;;) {
		sp_world_t *w = NULL;
		char err[sizeof(j->err)] = "";
		int may_found, rc;
		uint64_t one = 1;

		while (!j->stop && !j->asked)
			pthread_cond_wait(&j->cv, &j->mu);
		if (j->stop)
			break;
		may_found = j->may_found;
		j->asked = 0;
		j->busy = 1;
		pthread_mutex_unlock(&j->mu);
		rc = attempt(j->cfg, j->world_id, may_found, &w, err,
			     sizeof(err));
		pthread_mutex_lock(&j->mu);
		j->busy = 0;
		j->done = 1;
		j->rc = rc;
		j->w = rc ? NULL : w;
		memcpy(j->err, err, sizeof(err));
		if (write(j->efd, &one, sizeof(one)) < 0)
			qb_log(LOG_ERR, "joining the machine: eventfd: %s",
			       strerror(errno));
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

int mmd_join_init(struct mmd_join *j, const st_config_t *cfg,
		  uint32_t world_id)
{
	int rc;

	memset(j, 0, sizeof(*j));
	j->cfg = cfg;
	j->world_id = world_id;
	j->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (j->efd < 0)
		return -errno;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	if ((rc = pthread_create(&j->th, NULL, worker, j))) {
		close(j->efd);
		j->efd = -1;
		return -rc;
	}
	j->started = 1;
	return 0;
}

void mmd_join_fini(struct mmd_join *j)
{
	if (j->started) {
		pthread_mutex_lock(&j->mu);
		j->stop = 1;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		pthread_join(j->th, NULL);
		pthread_mutex_destroy(&j->mu);
		pthread_cond_destroy(&j->cv);
		j->started = 0;
	}
	sp_close(j->w);
	j->w = NULL;
	if (j->efd >= 0)
		close(j->efd);
	j->efd = -1;
}

int mmd_join_ask(struct mmd_join *j, int may_found)
{
	int asked = 0;

	pthread_mutex_lock(&j->mu);
	if (!j->asked && !j->busy && !j->done) {
		j->asked = 1;
		j->may_found = may_found;
		pthread_cond_broadcast(&j->cv);
		asked = 1;
	}
	pthread_mutex_unlock(&j->mu);
	return asked;
}

int mmd_join_take(struct mmd_join *j, sp_world_t **w, int *rc, char *err,
		  size_t errlen)
{
	uint64_t n;
	int took = 0;

	if (read(j->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		qb_log(LOG_ERR, "joining the machine: eventfd: %s",
		       strerror(errno));
	pthread_mutex_lock(&j->mu);
	if (j->done) {
		*w = j->w;
		*rc = j->rc;
		snprintf(err, errlen, "%s", j->err);
		j->w = NULL;
		j->done = 0;
		took = 1;
	}
	pthread_mutex_unlock(&j->mu);
	return took;
}

int mmd_join_pending(struct mmd_join *j)
{
	int p;

	pthread_mutex_lock(&j->mu);
	p = j->asked || j->busy || j->done;
	pthread_mutex_unlock(&j->mu);
	return p;
}
