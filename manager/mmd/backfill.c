/*
 * backfill.c — fetching the history a joiner lacks (backfill.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <munge.h>
#include <qb/qblog.h>

#include "backfill.h"
#include "peer.h"

#define REPLY_TIMEOUT_MS 30000
#define RETRY_MS 1000

/* One page from peer m, or -errno with b->note saying why. */
static int fetch(struct mmd_backfill *b, const st_host_t *m, uint64_t below,
		 uint32_t after, struct mmd_backfill_page *p)
{
	char id[160], *text = NULL;
	const char *why, *cluster;
	json_t *req, *rep = NULL, *recs;
	uint8_t *payload = NULL;
	uint32_t len;
	int fd, type, rc, tcp = 0;
	static long long seq;

	fd = mmd_peer_dial(b->cfg, m, &tcp, b->note, sizeof(b->note));
	if (fd < 0)
		return fd;
	snprintf(id, sizeof(id), "storm-mm-%s-backfill-%ld", b->self->name,
		 (long)getpid());
	req = json_pack("{s:s, s:I, s:I, s:s, s:I, s:s}", "op",
			"history_page", "below", (json_int_t)below, "after",
			(json_int_t)after, "cluster", b->cfg->cluster, "seq",
			(json_int_t)++seq, "client", id);
	if (!req) {
		close(fd);
		return -ENOMEM;
	}
	text = json_dumps(req, JSON_COMPACT);
	if (!text) {
		rc = -ENOMEM;
		goto out;
	}
	rc = mmd_peer_send(fd, tcp, text, b->note, sizeof(b->note));
	if (!rc)
		rc = st_frame_recv(fd, REPLY_TIMEOUT_MS, &type, &payload, &len);
	if (rc < 0) {
		snprintf(b->note, sizeof(b->note), "manager %s: %s", m->name,
			 strerror(-rc));
		goto out;
	}
	rep = json_loadb((const char *)payload, len, 0, NULL);
	recs = json_object_get(rep, "records");
	why = json_string_value(json_object_get(rep, "error"));
	cluster = json_string_value(json_object_get(rep, "cluster"));
	if (!json_is_true(json_object_get(rep, "ok"))) {
		snprintf(b->note, sizeof(b->note), "manager %s: %s", m->name,
			 why ? why : "a reply that is not one");
		rc = -EAGAIN;
		goto out;
	}
	if (!json_is_array(recs) || !cluster ||
	    strcmp(cluster, b->cfg->cluster)) {
		snprintf(b->note, sizeof(b->note), "manager %s: a history page "
			 "of another cluster or without records: refused",
			 m->name);
		rc = -EPROTO;
		goto out;
	}
	p->n = json_array_size(recs);
	p->recs = calloc(p->n ? p->n : 1, sizeof(*p->recs));
	if (!p->recs) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->n; i++) {
		json_t *e = json_array_get(recs, i);
		struct mmd_hist_rec *r = &p->recs[i];
		json_t *js = json_array_get(e, 7);

		if (json_array_size(e) != 8 || !json_is_string(js) ||
		    !json_is_string(json_array_get(e, 6))) {
			snprintf(b->note, sizeof(b->note), "manager %s: record "
				 "%zu of a history page is malformed", m->name,
				 i);
			free(p->recs);
			p->recs = NULL;
			rc = -EPROTO;
			goto out;
		}
		r->id = (uint32_t)json_integer_value(json_array_get(e, 0));
		r->purged_index = (uint64_t)json_integer_value(
			json_array_get(e, 1));
		r->end_ms = (uint64_t)json_integer_value(json_array_get(e, 2));
		r->submit_ms = (uint64_t)json_integer_value(
			json_array_get(e, 3));
		r->uid = (uint32_t)json_integer_value(json_array_get(e, 4));
		r->state = (uint8_t)json_integer_value(json_array_get(e, 5));
		r->name = json_string_value(json_array_get(e, 6));
		r->json = json_string_value(js);
		r->json_len = json_string_length(js);
	}
	p->last = (uint32_t)json_integer_value(json_object_get(rep, "last"));
	p->more = json_is_true(json_object_get(rep, "more"));
	p->doc = rep;
	rep = NULL;
	rc = 0;
out:
	json_decref(rep);
	json_decref(req);
	free(text);
	free(payload);
	close(fd);
	return rc;
}

static void *worker(void *arg)
{
	struct mmd_backfill *b = arg;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		struct mmd_backfill_page p = { 0 };
		uint64_t below;
		uint32_t after;
		int rc = -ENOENT;

		while (!b->stop && (!b->asked || b->ready))
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->stop)
			break;
		below = b->below;
		after = b->after;
		pthread_mutex_unlock(&b->mu);
		/* every other manager in turn, from where the last one
		 * served */
		for (uint32_t k = 0; k < b->cfg->nmanagers && rc; k++) {
			const st_host_t *m = &b->cfg->managers[
				(b->peer + k) % b->cfg->nmanagers];

			if (m == b->self)
				continue;
			if (!(rc = fetch(b, m, below, after, &p)))
				b->peer = (uint32_t)(m - b->cfg->managers);
		}
		pthread_mutex_lock(&b->mu);
		if (rc) {
			struct timespec ts;

			qb_log(LOG_WARNING, "history backfill: no peer served "
			       "a page yet (%s); trying again", b->note);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += RETRY_MS / 1000;
			if (!b->stop)
				pthread_cond_timedwait(&b->cv, &b->mu, &ts);
			continue;
		}
		p.below = below;
		p.after = after;
		b->page = p;
		b->ready = 1;
		b->asked = 0;
		{
			uint64_t one = 1;

			if (write(b->efd, &one, 8) < 0)
				qb_log(LOG_ERR, "history backfill: eventfd: %s",
				       strerror(errno));
		}
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

int mmd_backfill_init(struct mmd_backfill *b, const st_config_t *cfg,
		      const st_host_t *self)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->cfg = cfg;
	b->self = self;
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0)
		return -errno;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	if ((rc = pthread_create(&b->th, NULL, worker, b))) {
		close(b->efd);
		b->efd = -1;
		return -rc;
	}
	b->started = 1;
	return 0;
}

void mmd_backfill_fini(struct mmd_backfill *b)
{
	if (b->started) {
		pthread_mutex_lock(&b->mu);
		b->stop = 1;
		pthread_cond_broadcast(&b->cv);
		pthread_mutex_unlock(&b->mu);
		pthread_join(b->th, NULL);
		b->started = 0;
		mmd_backfill_page_free(&b->page);
	}
	if (b->efd >= 0)
		close(b->efd);
	b->efd = -1;
}

void mmd_backfill_ask(struct mmd_backfill *b, uint64_t below, uint32_t after)
{
	if (!b->started)
		return;
	pthread_mutex_lock(&b->mu);
	if (!b->asked && !b->ready) {
		b->asked = 1;
		b->below = below;
		b->after = after;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
}

int mmd_backfill_take(struct mmd_backfill *b, struct mmd_backfill_page *p)
{
	uint64_t v;
	int got = 0;

	if (read(b->efd, &v, 8) < 0 && errno != EAGAIN)
		qb_log(LOG_ERR, "history backfill: eventfd: %s",
		       strerror(errno));
	pthread_mutex_lock(&b->mu);
	if (b->ready) {
		*p = b->page;
		memset(&b->page, 0, sizeof(b->page));
		b->ready = 0;
		got = 1;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return got;
}

void mmd_backfill_page_free(struct mmd_backfill_page *p)
{
	free(p->recs);
	json_decref(p->doc);
	memset(p, 0, sizeof(*p));
}
