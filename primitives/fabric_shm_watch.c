/*
 * fabric_shm_watch.c — frees shm region locks that a killed node holds.
 *
 * libfabric 1.17's shm guards each node's region with a pthread spinlock
 * in shared memory.  A node killed (or stopped, then killed) inside one
 * leaves it held for ever: every later send to that region spins inside
 * fi_inject, under our f->mu, and the whole node stops — the failure
 * detector with it.  Two cases, both seen under kill -9:
 *   (a) a dead node holds its own region's lock: senders that passed the
 *       fab_died() check just before it died spin on it;
 *   (b) a dead node holds a live node's lock (it died sending there): the
 *       owner's progress and every sender to it spin.
 * A watchdog thread per shm endpoint, which never takes f->mu, samples
 * the lock words every IDLE_NS, and every WATCH_NS for AWAKE_NS once poked
 * (a peer went down, a sender found a region lock held: fab_watch_poke)
 * or once it sees a peer dead itself; it releases (a) once a dead peer's lock stays
 * held for DEAD_SAMPLES samples, and (b) once our own lock stays held for
 * OWN_SAMPLES samples spanning a peer's death — a live holder keeps it for
 * microseconds.  The region header layout (fab_region_map) is checked
 * against our own region before anything is touched: on any other layout
 * the watchdog only says so and stops.  Senders avoid most of this by
 * not entering a region whose lock stays held (fab_region_wait_free).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <rdma/fabric.h>

#include "sp_config.h"
#include "sp_transport.h"

#include "sp_fabric.h"

#define WATCH_NS 20000000u     /* sampling period while awake */
#define IDLE_NS 500000000u     /* ... and otherwise */
#define AWAKE_NS 3000000000ull /* awake this long after a poke or a death */
#define DEAD_SAMPLES 3     /* a dead peer's lock held this many samples */
#define OWN_SAMPLES 5      /* our lock held this many samples, across a death */

struct wpeer {
	int lfd;
	const struct bell *bell;
	uint64_t inc;
	uint8_t *region; /* first page of its region, or NULL */
	int dead, done;  /* done: its lock was seen free or was released */
	uint32_t held;
};

struct fab_watch {
	struct fab *f;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int stop;
	uint64_t awake_until; /* mono ns: sample fast until then (w->mu) */
	uint8_t *own;
	uint32_t own_held;
	uint64_t own_since, last_death;
	struct wpeer *peers;
};

static void peer_reset(struct wpeer *p)
{
	if (p->region)
		fab_region_unmap(p->region);
	p->region = NULL;
	p->dead = p->done = 0;
	p->held = 0;
}

static void peer_watch(struct fab_watch *w, uint32_t n, uint64_t now)
{
	struct wpeer *p = &w->peers[n];
	char path[PATH_MAX], name[sizeof(p->bell->region)];
	struct stat st;
	void *m;

	if (!p->bell) {
		if (fab_lock_path(path, sizeof(path), w->f->names[n]) ||
		    (p->lfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return;
		if (fstat(p->lfd, &st) < 0 || st.st_size < (off_t)BELL_SIZE ||
		    (m = mmap(NULL, BELL_SIZE, PROT_READ, MAP_SHARED, p->lfd,
			      0)) == MAP_FAILED) {
			close(p->lfd);
			p->lfd = -1;
			return;
		}
		p->bell = m;
		p->inc = atomic_load(&p->bell->inc);
	}
	if (atomic_load(&p->bell->inc) != p->inc) {
		peer_reset(p); /* a new incarnation */
		p->inc = atomic_load(&p->bell->inc);
	}
	if (!fab_died((struct bell *)p->bell) || p->done)
		return;
	if (!p->dead) {
		p->dead = 1;
		w->last_death = now;
		pthread_mutex_lock(&w->mu);
		w->awake_until = now + AWAKE_NS;
		pthread_mutex_unlock(&w->mu);
	}
	if (!p->region) {
		memcpy(name, p->bell->region, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		p->region = fab_region_map(name, atomic_load(&p->bell->pid));
		if (!p->region) {
			p->done = 1; /* gone, or not a region we know */
			return;
		}
	}
	if (atomic_load(fab_region_lock(p->region)) == REGION_LOCK_FREE) {
		p->done = 1;
		return;
	}
	if (++p->held < DEAD_SAMPLES)
		return;
	atomic_store(fab_region_lock(p->region), REGION_LOCK_FREE);
	p->done = 1;
	qb_log(LOG_NOTICE,
	       "fabric: node %u: node %u died holding its shm region lock; "
	       "released it", w->f->self, n);
}

static void own_watch(struct fab_watch *w, uint64_t now)
{
	if (atomic_load(fab_region_lock(w->own)) == REGION_LOCK_FREE) {
		w->own_held = 0;
		return;
	}
	if (w->own_held++ == 0)
		w->own_since = now;
	if (w->own_held < OWN_SAMPLES || w->last_death < w->own_since)
		return;
	atomic_store(fab_region_lock(w->own), REGION_LOCK_FREE);
	w->own_held = 0;
	qb_log(LOG_WARNING,
	       "fabric: node %u: our shm region lock stayed held across a "
	       "peer's death; released it", w->f->self);
}

static void *watch_main(void *arg)
{
	struct fab_watch *w = arg;
	struct timespec ts;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		uint64_t now = mono_ns();

		pthread_mutex_unlock(&w->mu);
		for (uint32_t n = 0; n < w->f->nnodes; n++)
			if (n != w->f->self)
				peer_watch(w, n, now);
		own_watch(w, now);
		pthread_mutex_lock(&w->mu);
		/* quiet: a slow look (our own region's lock can be stuck by
		 * a dead sender while our progress thread, which would have
		 * poked us, spins on it) */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)(mono_ns() < w->awake_until ? WATCH_NS :
							      IDLE_NS);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (!w->stop)
			pthread_cond_timedwait(&w->cond, &w->mu, &ts);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int fab_watch_start(struct fab *f)
{
	struct fab_watch *w;
	pthread_condattr_t ca;
	char name[sizeof(f->bell->region)];

	if (!f->shm || f->watch)
		return 0;
	memcpy(name, f->bell->region, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->f = f;
	w->own = fab_region_map(name, (int32_t)getpid());
	if (!w->own) {
		qb_log(LOG_NOTICE,
		       "fabric: node %u: shm region %s is not libfabric "
		       "1.17's layout; locks a killed node holds are not "
		       "released", f->self, name);
		free(w);
		return 0;
	}
	w->peers = calloc(f->nnodes, sizeof(*w->peers));
	if (!w->peers) {
		fab_region_unmap(w->own);
		free(w);
		return -ENOMEM;
	}
	for (uint32_t n = 0; n < f->nnodes; n++)
		w->peers[n].lfd = -1;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thr, NULL, watch_main, w) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->mu);
		fab_region_unmap(w->own);
		free(w->peers);
		free(w);
		return -EAGAIN;
	}
	f->watch = w;
	return 0;
}

void fab_watch_poke(struct fab *f)
{
	struct fab_watch *w = f->watch;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->awake_until = mono_ns() + AWAKE_NS;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->mu);
}

void fab_watch_stop(struct fab *f)
{
	struct fab_watch *w = f->watch;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thr, NULL);
	for (uint32_t n = 0; n < f->nnodes; n++) {
		peer_reset(&w->peers[n]);
		if (w->peers[n].bell)
			munmap((void *)w->peers[n].bell, BELL_SIZE);
		if (w->peers[n].lfd >= 0)
			close(w->peers[n].lfd);
	}
	fab_region_unmap(w->own);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
	free(w->peers);
	free(w);
	f->watch = NULL;
}
