/*
 * fetch.c — a job's inputs from the peer that took them (fetch.h).  Key
 * invariant: what a peer sends is untrusted until checked — every piece
 * is the length its reply announced, a file never passes the size its
 * first reply gave, the job never passes the cap (max_input_mib) — and
 * the job's spool directory appears whole (rename) or not at all.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>
#include <munge.h>
#include <qb/qblog.h>

#include "fetch.h"
#include "inputs.h"
#include "peer.h"

#define REPLY_TIMEOUT_MS 10000

/* One request on fd; over TCP the first is sealed with root's MUNGE
 * credential (it authenticates the connection), later ones plain. */
static int ask(struct mmd_fetch *f, int fd, int seal, json_t *req)
{
	char *text = json_dumps(req, JSON_COMPACT);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = mmd_peer_send(fd, seal, text, f->note, sizeof(f->note));
	free(text);
	return rc;
}

int mmd_fetch_reply(const uint8_t *p, size_t len, uint64_t off, int first,
		    uint64_t size, uint64_t total, uint64_t cap,
		    struct mmd_fetch_piece *pc, char *why, size_t whylen)
{
	json_t *rep = json_loadb((const char *)p, len, 0, NULL);
	json_t *js, *jm, *jl;
	json_int_t sz, md, ln;

	if (!json_is_object(rep) ||
	    !json_is_boolean(json_object_get(rep, "ok"))) {
		snprintf(why, whylen, "an inputs_fetch reply that is not one");
		json_decref(rep);
		return -EPROTO;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		const char *e = json_string_value(json_object_get(rep,
								  "error"));
		int no = (int)json_integer_value(json_object_get(rep,
								 "errno"));

		snprintf(why, whylen, "%.300s", e && e[0] ? e : "refused");
		json_decref(rep);
		return no == ENOENT ? -ENOENT : -EPROTO;
	}
	js = json_object_get(rep, "size");
	jm = json_object_get(rep, "mode");
	jl = json_object_get(rep, "len");
	sz = json_is_integer(js) ? json_integer_value(js) : -1;
	md = json_is_integer(jm) ? json_integer_value(jm) : -1;
	ln = json_is_integer(jl) ? json_integer_value(jl) : -1;
	json_decref(rep); /* js, jm and jl with it */
	/* the peer's answer, checked before a byte is kept */
	if (sz < 0 || md < 0 || md > 0777 ||
	    ln < 0 || ln > MMD_FETCH_PIECE || (!first &&
					      (uint64_t)sz != size) ||
	    off > (uint64_t)sz || (uint64_t)ln > (uint64_t)sz - off ||
	    (!ln && off < (uint64_t)sz) || total > cap ||
	    (uint64_t)ln > cap - total) {
		snprintf(why, whylen, "an inputs_fetch reply out of bounds "
			 "(size %lld, mode %lld, len %lld at offset %llu; "
			 "%llu of the cap %llu kept)", (long long)sz,
			 (long long)md, (long long)ln,
			 (unsigned long long)off, (unsigned long long)total,
			 (unsigned long long)cap);
		return -EPROTO;
	}
	pc->size = (uint64_t)sz;
	pc->mode = (uint32_t)md;
	pc->len = (uint32_t)ln;
	return 0;
}

/* Input k of the job from the peer on fd into out.  0, -ENOENT (the
 * peer has no such inputs), or another -errno with f->note. */
static int fetch_input(struct mmd_fetch *f, int fd, int *seal,
		       const char *peer, uint32_t k, int out,
		       uint64_t *total)
{
	static long long seq;
	uint64_t off = 0, size = 0;
	int first = 1;
	char id[160];

	snprintf(id, sizeof(id), "storm-mm-%s-fetch-%ld", f->self->name,
		 (long)getpid());
	do {
		struct mmd_fetch_piece pc;
		json_t *req;
		uint8_t *p = NULL;
		uint32_t len;
		int type, rc;
		char why[400];

		req = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:I}", "op",
				"inputs_fetch", "cluster", f->cfg->cluster,
				"job", (json_int_t)f->job, "input",
				(json_int_t)k, "offset", (json_int_t)off,
				"client", id, "seq", (json_int_t)++seq);
		if (!req)
			return -ENOMEM;
		rc = ask(f, fd, *seal, req);
		json_decref(req);
		*seal = 0;
		if (!rc)
			rc = st_frame_recv(fd, REPLY_TIMEOUT_MS, &type, &p,
					   &len);
		if (rc < 0) {
			snprintf(f->note, sizeof(f->note), "manager %s: %s",
				 peer, storm_strerror(rc));
			return rc;
		}
		rc = type == ST_FRAME_REPLY ?
		     mmd_fetch_reply(p, len, off, first, size, *total,
				     f->in->cap, &pc, why, sizeof(why)) :
		     -EPROTO;
		free(p);
		if (rc) {
			snprintf(f->note, sizeof(f->note), "manager %s: %s",
				 peer, type == ST_FRAME_REPLY ? why :
				 "not a reply");
			return rc;
		}
		if (first && fchmod(out, (mode_t)pc.mode) < 0)
			return -errno;
		size = pc.size;
		first = 0;
		if (!pc.len)
			break;
		rc = st_frame_recv(fd, REPLY_TIMEOUT_MS, &type, &p, &len);
		if (rc < 0 || type != ST_FRAME_INPUT || len != pc.len) {
			free(p);
			snprintf(f->note, sizeof(f->note), "manager %s: the "
				 "piece of input %u at %llu: %s", peer, k,
				 (unsigned long long)off, rc < 0 ?
				 storm_strerror(rc) : "not as announced");
			return rc < 0 ? rc : -EPROTO;
		}
		for (uint32_t done = 0; done < len;) {
			ssize_t w = write(out, p + done, len - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = w < 0 ? -errno : -EIO;
				free(p);
				snprintf(f->note, sizeof(f->note), "spool: %s",
					 strerror(-rc));
				return rc;
			}
			done += (uint32_t)w;
		}
		free(p);
		off += len;
		*total += len;
	} while (off < size);
	return 0;
}

/* Every input of f->job from peer m into the spool: 0, or -errno. */
static int fetch_from(struct mmd_fetch *f, const st_host_t *m)
{
	char dir[1300], to[1300], path[1400];
	uint64_t total = 0;
	int fd, seal = 0, rc = 0;

	fd = mmd_peer_dial(f->cfg, m, &seal, f->note, sizeof(f->note));
	if (fd < 0)
		return fd;
	snprintf(dir, sizeof(dir), "%s/fetch-%u", f->in->dir, f->job);
	snprintf(to, sizeof(to), "%s/job-%u", f->in->dir, f->job);
	mmd_spool_remove(dir);
	if (mkdir(dir, 0700) < 0) {
		rc = -errno;
		snprintf(f->note, sizeof(f->note), "spool: %.300s: %s", dir,
			 strerror(errno));
		close(fd);
		return rc;
	}
	for (uint32_t k = 0; k < f->n && !rc; k++) {
		int out;

		snprintf(path, sizeof(path), "%s/%u", dir, k);
		out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
			   O_NOFOLLOW, 0600);
		if (out < 0) {
			rc = -errno;
			break;
		}
		rc = fetch_input(f, fd, &seal, m->name, k, out, &total);
		close(out);
	}
	close(fd);
	if (!rc && rename(dir, to) < 0)
		rc = -errno;
	if (rc)
		mmd_spool_remove(dir);
	return rc;
}

static void *worker(void *arg)
{
	struct mmd_fetch *f = arg;

	pthread_mutex_lock(&f->mu);
	for (;;) {
		const uint64_t one = 1;
		int found = 0;

		while (!f->stop && f->state != MMD_FETCH_BUSY)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop)
			break;
		pthread_mutex_unlock(&f->mu);
		f->note[0] = '\0';
		for (uint32_t i = 0; i < f->cfg->nmanagers && !found; i++) {
			const st_host_t *m = &f->cfg->managers[i];

			if (!strcmp(m->name, f->self->name))
				continue;
			found = fetch_from(f, m) == 0;
		}
		pthread_mutex_lock(&f->mu);
		f->found = found;
		f->state = MMD_FETCH_DONE;
		ssize_t w = write(f->efd, &one, sizeof(one));

		(void)w; /* the counter is only a wake-up */
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int mmd_fetch_init(struct mmd_fetch *f, const st_config_t *cfg,
		   const st_host_t *self, struct mmd_inputs *in)
{
	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	f->self = self;
	f->in = in;
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->efd < 0)
		return -errno;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	if (pthread_create(&f->th, NULL, worker, f)) {
		close(f->efd);
		f->efd = -1;
		return -EAGAIN;
	}
	f->started = 1;
	return 0;
}

void mmd_fetch_fini(struct mmd_fetch *f)
{
	if (!f->started)
		return;
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->th, NULL);
	close(f->efd);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	f->started = 0;
}

int mmd_fetch_step(struct mmd_fetch *f, uint32_t job, uint32_t n)
{
	int rc = -EAGAIN;

	if (!f->started || f->cfg->nmanagers < 2)
		return 0; /* no peer to ask */
	pthread_mutex_lock(&f->mu);
	if (f->state == MMD_FETCH_DONE && f->job == job) {
		rc = f->found;
		f->state = MMD_FETCH_IDLE;
	} else if (f->state != MMD_FETCH_BUSY) {
		f->job = job;
		f->n = n;
		f->state = MMD_FETCH_BUSY;
		pthread_cond_signal(&f->cv);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void mmd_fetch_drain(struct mmd_fetch *f)
{
	uint64_t v;
	ssize_t r = read(f->efd, &v, sizeof(v));

	(void)r; /* the stager takes the answer at its next slice */
	pthread_mutex_lock(&f->mu);
	if (f->state == MMD_FETCH_DONE && f->found)
		qb_log(LOG_INFO, "job %u: inputs fetched from a peer", f->job);
	else if (f->state == MMD_FETCH_DONE)
		qb_log(LOG_NOTICE, "job %u: no peer has its inputs (%s): "
		       "reading its paths on this host", f->job,
		       f->note[0] ? f->note : "no peer");
	pthread_mutex_unlock(&f->mu);
}
