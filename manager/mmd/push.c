/*
 * push.c — a job's input blobs copied to a majority of the replicas
 * before its SUBMIT is proposed (push.h).  Key invariant: a set is
 * reported pushed only if at least p->need replicas, this one included,
 * answered that they hold every one of its blobs (a peer keeps a blob
 * only once its bytes hash to its name, requests_submit.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <qb/qblog.h>

#include "peer.h"
#include "push.h"

#define REPLY_TIMEOUT_MS 10000

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int mmd_push_reply(const uint8_t *p, size_t len, int first, char *why,
		   size_t whylen)
{
	json_t *rep = json_loadb((const char *)p, len, 0, NULL);
	const char *in;
	int rc;

	if (!json_is_object(rep) ||
	    !json_is_boolean(json_object_get(rep, "ok"))) {
		snprintf(why, whylen, "an inputs_put reply that is not one");
		json_decref(rep);
		return -EPROTO;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		const char *e = json_string_value(json_object_get(rep,
								  "error"));
		json_int_t no = json_integer_value(json_object_get(rep,
								   "errno"));

		snprintf(why, whylen, "%.300s", e && e[0] ? e : "refused");
		json_decref(rep);
		return no > 0 && no < 4096 ? -(int)no : -EPROTO;
	}
	in = json_string_value(json_object_get(rep, "inputs"));
	if (first && json_is_true(json_object_get(rep, "have")))
		rc = 1;
	else if (first && in && !strcmp(in, "send"))
		rc = 2;
	else if (!first && !json_object_get(rep, "inputs") &&
		 !json_object_get(rep, "have"))
		rc = 0;
	else {
		snprintf(why, whylen, "an inputs_put reply out of turn");
		rc = -EPROTO;
	}
	json_decref(rep);
	return rc;
}

static void drop(struct mmd_push_peer *pp)
{
	if (pp->fd >= 0)
		close(pp->fd);
	pp->fd = -1;
	pp->down_until_ms = mono_ms() + MMD_PUSH_BACKOFF_MS;
}

/* One request on pp's connection and its reply: the reply's code
 * (mmd_push_reply) or -errno, note filled. */
static int ask(struct mmd_push_peer *pp, const char *peer, json_t *req,
	       int first, char *note, size_t notelen)
{
	char *text = json_dumps(req, JSON_COMPACT), why[300];
	uint8_t *p = NULL;
	uint32_t len;
	int type, rc;

	if (!text)
		return -ENOMEM;
	rc = mmd_peer_send(pp->fd, 0, text, note, notelen);
	free(text);
	if (!rc)
		rc = st_frame_recv(pp->fd, REPLY_TIMEOUT_MS, &type, &p, &len);
	if (rc < 0) {
		snprintf(note, notelen, "manager %s: %s", peer,
			 storm_strerror(rc));
		return rc;
	}
	rc = type == ST_FRAME_REPLY ?
	     mmd_push_reply(p, len, first, why, sizeof(why)) : -EPROTO;
	free(p);
	if (rc < 0)
		snprintf(note, notelen, "manager %s: %s", peer,
			 type == ST_FRAME_REPLY ? why : "not a reply");
	return rc;
}

/* Connect to peer m (over TCP the connection is authenticated first,
 * with a sealed "auth": INPUT frames pass only on such a one).  0 or
 * -errno with note. */
static int dial(struct mmd_push *p, struct mmd_push_peer *pp,
		const st_host_t *m, char *note, size_t notelen)
{
	uint8_t *rep = NULL;
	uint32_t len;
	int type, rc;

	pp->fd = mmd_peer_dial(p->cfg, m, &pp->tcp, note, notelen);
	if (pp->fd < 0)
		return pp->fd;
	if (!pp->tcp)
		return 0;
	rc = mmd_peer_send(pp->fd, 1, "{\"op\":\"auth\"}", note, notelen);
	if (!rc)
		rc = st_frame_recv(pp->fd, REPLY_TIMEOUT_MS, &type, &rep,
				   &len);
	if (!rc) {
		json_t *o = type == ST_FRAME_REPLY ?
			    json_loadb((const char *)rep, len, 0, NULL) : NULL;

		if (!json_is_true(json_object_get(o, "ok")))
			rc = -EACCES;
		json_decref(o);
	}
	free(rep);
	if (rc)
		snprintf(note, notelen, "manager %s: authentication: %s",
			 m->name, storm_strerror(rc));
	return rc;
}

/* Blob k of s to the peer on pp: 0 (it holds it now) or -errno. */
static int put_blob(struct mmd_push *p, struct mmd_push_peer *pp,
		    const char *peer, const struct mmd_input_set *s,
		    uint32_t k, uint8_t *buf, char *note, size_t notelen)
{
	static long long seq;
	char hex[MMD_BLOB_HEX], id[160];
	uint64_t off = 0;
	json_t *req;
	int rc, fd;

	mmd_blob_hex(s->sha[k], hex);
	snprintf(id, sizeof(id), "storm-mm-%s-push-%ld", p->self->name,
		 (long)getpid());
	req = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I}", "op", "inputs_put",
			"cluster", p->cfg->cluster, "sha256", hex, "size",
			(json_int_t)s->sizes[k], "client", id, "seq",
			(json_int_t)++seq);
	if (!req)
		return -ENOMEM;
	rc = ask(pp, peer, req, 1, note, notelen);
	json_decref(req);
	if (rc == 1)
		return 0; /* held there already */
	if (rc != 2)
		return rc < 0 ? rc : -EPROTO;
	if ((fd = mmd_blob_open(p->in, s->sha[k])) < 0) {
		snprintf(note, notelen, "blob %.16s is gone from this "
			 "replica's store", hex);
		return fd;
	}
	while (off < s->sizes[k]) {
		uint64_t left = s->sizes[k] - off;
		ssize_t r = pread(fd, buf, left < MMD_PUSH_PIECE ?
				  (size_t)left : MMD_PUSH_PIECE, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : -EIO;
			snprintf(note, notelen, "blob %.16s: %s", hex,
				 strerror(-rc));
			close(fd);
			return rc; /* the peer waits for bytes: drop it */
		}
		if ((rc = st_frame_send(pp->fd, ST_FRAME_INPUT, buf,
					(uint32_t)r))) {
			snprintf(note, notelen, "manager %s: %s", peer,
				 storm_strerror(rc));
			close(fd);
			return rc;
		}
		off += (uint64_t)r;
	}
	close(fd);
	/* its answer once the bytes are in (and hashed) */
	{
		uint8_t *rep = NULL;
		uint32_t len;
		int type;
		char why[300];

		rc = st_frame_recv(pp->fd, REPLY_TIMEOUT_MS, &type, &rep,
				   &len);
		if (rc < 0) {
			snprintf(note, notelen, "manager %s: %s", peer,
				 storm_strerror(rc));
			return rc;
		}
		rc = type == ST_FRAME_REPLY ?
		     mmd_push_reply(rep, len, 0, why, sizeof(why)) : -EPROTO;
		free(rep);
		if (rc)
			snprintf(note, notelen, "manager %s: %s", peer,
				 type == ST_FRAME_REPLY ? why : "not a reply");
		return rc ? (rc < 0 ? rc : -EPROTO) : 0;
	}
}

/* Every blob of s to peer i (m): 0, or -errno with note.  backoff: a
 * peer that failed lately is not dialled. */
static int push_to(struct mmd_push *p, uint32_t i, const st_host_t *m,
		   const struct mmd_input_set *s, uint8_t *buf, int backoff,
		   char *note, size_t notelen)
{
	struct mmd_push_peer *pp = &p->peers[i];
	int rc = 0;

	/* a connection kept from an earlier set may have been closed by
	 * the peer meanwhile (idle): once more on a fresh one before the
	 * peer counts as failed */
	for (int attempt = 0; attempt < 2; attempt++) {
		int reused = pp->fd >= 0;

		note[0] = '\0';
		rc = 0;
		if (backoff && pp->fd < 0 && mono_ms() < pp->down_until_ms) {
			snprintf(note, notelen, "manager %s: failed less than "
				 "%u ms ago", m->name, MMD_PUSH_BACKOFF_MS);
			return -EHOSTUNREACH;
		}
		if (pp->fd < 0 && (rc = dial(p, pp, m, note, notelen)))
			break;
		for (uint32_t k = 0; k < s->n && !rc; k++)
			rc = put_blob(p, pp, m->name, s, k, buf, note, notelen);
		if (!rc || !reused)
			break;
		close(pp->fd);
		pp->fd = -1;
	}
	if (rc)
		drop(pp);
	return rc;
}

static void push_set(struct mmd_push *p, struct mmd_input_set *s,
		     uint8_t *buf)
{
	uint32_t holders = 1, need; /* this replica */
	char notes[512] = "", note[400];
	uint8_t *skipped = calloc(p->cfg->nmanagers, 1);
	size_t nl = 0;

	pthread_mutex_lock(&p->mu);
	need = p->members / 2 + 1;
	pthread_mutex_unlock(&p->mu);
	/* every peer that has not failed lately; then, if that is not a
	 * majority, those that have (a head back from a restart) */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < p->cfg->nmanagers; i++) {
			const st_host_t *m = &p->cfg->managers[i];
			int rc;

			if (m == p->self || !strcmp(m->name, p->self->name) ||
			    (pass && (!skipped || !skipped[i])))
				continue;
			rc = push_to(p, i, m, s, buf, !pass, note,
				     sizeof(note));
			if (!rc) {
				holders++;
				continue;
			}
			if (rc == -EHOSTUNREACH && !pass && skipped) {
				skipped[i] = 1;
				continue;
			}
			if (nl < sizeof(notes) - 1)
				nl += (size_t)snprintf(notes + nl,
						       sizeof(notes) - nl,
						       "%s%s", nl ? "; " : "",
						       note);
		}
		if (holders >= need)
			break;
	}
	free(skipped);
	if (holders >= need)
		return;
	s->rc = -EHOSTUNREACH;
	snprintf(s->err, sizeof(s->err), "the job's inputs reached %u manager "
		 "replicas, and %u (a majority of the view's) must hold them "
		 "before a job is accepted, so that a head's failure loses "
		 "nothing: %.400s; try again", holders, need, notes);
}

static void *worker(void *arg)
{
	struct mmd_push *p = arg;
	uint8_t *buf = malloc(MMD_PUSH_PIECE);

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct mmd_input_set *s;
		const uint64_t one = 1;

		while (!p->stop && !p->todo)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		s = p->todo;
		p->todo = s->next;
		if (!p->todo)
			p->todo_tail = &p->todo;
		pthread_mutex_unlock(&p->mu);
		if (buf) {
			push_set(p, s, buf);
		} else {
			s->rc = -ENOMEM;
			snprintf(s->err, sizeof(s->err), "out of memory");
		}
		pthread_mutex_lock(&p->mu);
		s->next = NULL;
		*p->done_tail = s;
		p->done_tail = &s->next;
		ssize_t w = write(p->efd, &one, sizeof(one));

		(void)w; /* the counter is only a wake-up */
	}
	pthread_mutex_unlock(&p->mu);
	free(buf);
	return NULL;
}

int mmd_push_init(struct mmd_push *p, const st_config_t *cfg,
		  const st_host_t *self, struct mmd_inputs *in)
{
	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->self = self;
	p->in = in;
	p->members = cfg->nmanagers; /* until the view says */
	p->todo_tail = &p->todo;
	p->done_tail = &p->done;
	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->efd < 0)
		return -errno;
	p->peers = calloc(cfg->nmanagers ? cfg->nmanagers : 1,
			  sizeof(*p->peers));
	if (!p->peers) {
		close(p->efd);
		p->efd = -1;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cfg->nmanagers; i++)
		p->peers[i].fd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->th, NULL, worker, p)) {
		free(p->peers);
		p->peers = NULL;
		close(p->efd);
		p->efd = -1;
		return -EAGAIN;
	}
	p->started = 1;
	return 0;
}

static void free_list(struct mmd_push *p, struct mmd_input_set *s)
{
	while (s) {
		struct mmd_input_set *next = s->next;

		mmd_inputs_free(p->in, s);
		s = next;
	}
}

void mmd_push_fini(struct mmd_push *p)
{
	if (!p->started)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	free_list(p, p->todo);
	free_list(p, p->done);
	for (uint32_t i = 0; i < p->cfg->nmanagers; i++)
		if (p->peers[i].fd >= 0)
			close(p->peers[i].fd);
	free(p->peers);
	close(p->efd);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	p->started = 0;
}

void mmd_push_view(struct mmd_push *p, uint32_t members)
{
	if (!p->started)
		return;
	pthread_mutex_lock(&p->mu);
	p->members = members ? members : 1;
	pthread_mutex_unlock(&p->mu);
}

int mmd_push_wanted(const struct mmd_push *p)
{
	return p->started && p->cfg->nmanagers > 1;
}

int mmd_push_queue(struct mmd_push *p, struct mmd_input_set *s)
{
	if (p->queued >= MMD_PUSH_QUEUE)
		return -EAGAIN;
	pthread_mutex_lock(&p->mu);
	s->next = NULL;
	*p->todo_tail = s;
	p->todo_tail = &s->next;
	p->queued++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int mmd_push_next(struct mmd_push *p, struct mmd_input_set **out)
{
	struct mmd_input_set *s;
	uint64_t v;

	if (read(p->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&p->mu);
	s = p->done;
	if (s) {
		p->done = s->next;
		if (!p->done)
			p->done_tail = &p->done;
		p->queued--;
	}
	pthread_mutex_unlock(&p->mu);
	if (!s)
		return 0;
	s->next = NULL;
	if (s->rc)
		qb_log(LOG_WARNING, "inputs not replicated: %s", s->err);
	*out = s;
	return 1;
}
