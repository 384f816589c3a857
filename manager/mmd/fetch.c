/*
 * fetch.c — a job's input blobs from the peers that hold them (fetch.h).
 * Key invariant: what a peer sends is untrusted until checked — every
 * piece is the length its reply announced, a blob never passes the size
 * its first reply gave nor the size the job record says, the job never
 * passes the cap (max_input_mib), and a blob enters the store (rename)
 * only if its bytes hash to its name.
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
	json_t *js, *jl;
	json_int_t sz, ln;

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
	jl = json_object_get(rep, "len");
	sz = json_is_integer(js) ? json_integer_value(js) : -1;
	ln = json_is_integer(jl) ? json_integer_value(jl) : -1;
	json_decref(rep); /* js and jl with it */
	/* the peer's answer, checked before a byte is kept */
	if (sz < 0 || ln < 0 || ln > MMD_FETCH_PIECE || (!first &&
					      (uint64_t)sz != size) ||
	    off > (uint64_t)sz || (uint64_t)ln > (uint64_t)sz - off ||
	    (!ln && off < (uint64_t)sz) || total > cap ||
	    (uint64_t)ln > cap - total) {
		snprintf(why, whylen, "an inputs_fetch reply out of bounds "
			 "(size %lld, len %lld at offset %llu; "
			 "%llu of the cap %llu kept)", (long long)sz,
			 (long long)ln,
			 (unsigned long long)off, (unsigned long long)total,
			 (unsigned long long)cap);
		return -EPROTO;
	}
	pc->size = (uint64_t)sz;
	pc->len = (uint32_t)ln;
	return 0;
}

/* Blob want from the peer on fd into out, hashed as it comes.  0 (the
 * bytes hash to want's digest), -ENOENT (the peer has no such blob), or
 * another -errno with f->note. */
static int fetch_blob(struct mmd_fetch *f, int fd, int *seal,
		      const char *peer, const mm_input_t *want, int out,
		      uint64_t *total)
{
	static long long seq;
	crypto_hash_sha256_state hs;
	uint8_t got[MM_INPUT_SHA256_BYTES];
	uint64_t off = 0, size = 0;
	int first = 1;
	char id[160], hex[MMD_BLOB_HEX];

	mmd_blob_hex(want->sha256, hex);
	snprintf(id, sizeof(id), "storm-mm-%s-fetch-%ld", f->self->name,
		 (long)getpid());
	crypto_hash_sha256_init(&hs);
	do {
		struct mmd_fetch_piece pc;
		json_t *req;
		uint8_t *p = NULL;
		uint32_t len;
		int type, rc;
		char why[400];

		req = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I}", "op",
				"inputs_fetch", "cluster", f->cfg->cluster,
				"sha256", hex, "offset", (json_int_t)off,
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
		if (!rc && pc.size != want->size) {
			rc = -EPROTO;
			snprintf(why, sizeof(why), "blob %.16s has %llu bytes "
				 "there, the job says %llu", hex,
				 (unsigned long long)pc.size,
				 (unsigned long long)want->size);
		}
		if (rc) {
			snprintf(f->note, sizeof(f->note), "manager %s: %s",
				 peer, type == ST_FRAME_REPLY ? why :
				 "not a reply");
			return rc;
		}
		size = pc.size;
		first = 0;
		if (!pc.len)
			break;
		rc = st_frame_recv(fd, REPLY_TIMEOUT_MS, &type, &p, &len);
		if (rc < 0 || type != ST_FRAME_INPUT || len != pc.len) {
			free(p);
			snprintf(f->note, sizeof(f->note), "manager %s: the "
				 "piece of blob %.16s at %llu: %s", peer, hex,
				 (unsigned long long)off, rc < 0 ?
				 storm_strerror(rc) : "not as announced");
			return rc < 0 ? rc : -EPROTO;
		}
		crypto_hash_sha256_update(&hs, p, len);
		for (uint32_t done = 0; done < len;) {
			ssize_t w = write(out, p + done, len - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = w < 0 ? -errno : -EIO;
				free(p);
				snprintf(f->note, sizeof(f->note), "store: %s",
					 strerror(-rc));
				return rc;
			}
			done += (uint32_t)w;
		}
		free(p);
		off += len;
		*total += len;
	} while (off < size);
	crypto_hash_sha256_final(&hs, got);
	if (sodium_memcmp(got, want->sha256, MM_INPUT_SHA256_BYTES)) {
		snprintf(f->note, sizeof(f->note), "manager %s: blob %.16s: "
			 "the bytes it sent do not hash to the name", peer,
			 hex);
		return -EBADMSG;
	}
	return 0;
}

/* Every blob of f->want not here yet, from peer m into the store: 0, or
 * -errno (f->note says why). */
static int fetch_from(struct mmd_fetch *f, const st_host_t *m)
{
	char path[1400];
	uint64_t total = 0;
	int fd, seal = 0, rc = 0;

	fd = mmd_peer_dial(f->cfg, m, &seal, f->note, sizeof(f->note));
	if (fd < 0)
		return fd;
	for (uint32_t k = 0; k < f->n && !rc; k++) {
		const mm_input_t *w = &f->want[k];
		char hex[MMD_BLOB_HEX];
		int out;

		if (mmd_blob_have(f->in, w->sha256, w->size))
			continue;
		mmd_blob_hex(w->sha256, hex);
		snprintf(path, sizeof(path), "%s/fetch-%s", f->in->dir, hex);
		unlink(path);
		out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
			   O_NOFOLLOW, 0600);
		if (out < 0) {
			rc = -errno;
			snprintf(f->note, sizeof(f->note), "store: %.300s: %s",
				 path, strerror(errno));
			break;
		}
		rc = fetch_blob(f, fd, &seal, m->name, w, out, &total);
		close(out);
		if (!rc)
			rc = mmd_blob_adopt(f->in, path, w->sha256);
		else
			unlink(path);
	}
	close(fd);
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
		if (!found && !f->note[0])
			snprintf(f->note, sizeof(f->note), "no other manager "
				 "replica is configured");
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

int mmd_fetch_step(struct mmd_fetch *f, uint32_t job, uint32_t n,
		   const mm_input_t *inputs, char *why, size_t whylen)
{
	int rc = -EAGAIN;

	if (!f->started || f->cfg->nmanagers < 2 || n > MMD_INPUTS_MAX) {
		snprintf(why, whylen, "no other manager replica to ask");
		return 0;
	}
	pthread_mutex_lock(&f->mu);
	if (f->state == MMD_FETCH_DONE && f->job == job) {
		rc = f->found;
		if (!rc)
			snprintf(why, whylen, "%s", f->note);
		f->state = MMD_FETCH_IDLE;
	} else if (f->state != MMD_FETCH_BUSY) {
		f->job = job;
		f->n = n;
		memcpy(f->want, inputs, n * sizeof(*inputs));
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
		qb_log(LOG_INFO, "job %u: input blobs fetched from a peer",
		       f->job);
	else if (f->state == MMD_FETCH_DONE)
		qb_log(LOG_WARNING, "job %u: no peer has its input blobs: %s",
		       f->job, f->note);
	pthread_mutex_unlock(&f->mu);
}
