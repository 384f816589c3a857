/*
 * auth.c — MUNGE decoding on a worker thread (auth.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <munge.h>
#include <storm_proto.h>

#include "auth.h"

struct mmd_auth_item {
	struct mmd_auth_item *next;
	struct mmd_auth_result r;
	char cred[];
};

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* The credential's id for the replay cache (auth.h). */
static int cred_id(struct mmd_auth_result *r, uint64_t encoded, uint64_t ttl)
{
	uint8_t in[12 + 4 + 4 + 8 + 8 + sizeof(r->payload)], d[ST_SHA256_BYTES];
	size_t n = 0;

	memcpy(in, "storm-cred-1", 12);
	n += 12;
	put_be(in + n, r->uid, 4);
	n += 4;
	put_be(in + n, r->gid, 4);
	n += 4;
	put_be(in + n, encoded, 8);
	n += 8;
	put_be(in + n, ttl, 8);
	n += 8;
	memcpy(in + n, r->payload, r->payload_len);
	n += r->payload_len;
	if (st_sha256(in, n, d))
		return -1;
	memcpy(r->cred_id, d, MM_CRED_ID_BYTES);
	return 0;
}

static void decode(const char *sock, const char *cred,
		   struct mmd_auth_result *r)
{
	munge_ctx_t ctx = munge_ctx_create();
	void *payload = NULL;
	int len = 0, ttl = 0;
	time_t encoded = 0;
	uid_t uid;
	gid_t gid;
	munge_err_t e;

	if (!ctx) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return;
	}
	if (sock[0])
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock);
	e = munge_decode(cred, ctx, &payload, &len, &uid, &gid);
	if (e == EMUNGE_SUCCESS &&
	    (munge_ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, &encoded) !=
	     EMUNGE_SUCCESS ||
	     munge_ctx_get(ctx, MUNGE_OPT_TTL, &ttl) != EMUNGE_SUCCESS ||
	     encoded < 0 || ttl < 0)) {
		snprintf(r->err, sizeof(r->err), "munged gave no encode time "
			 "or time to live");
		e = EMUNGE_SNAFU;
	}
	munge_ctx_destroy(ctx);
	if (e != EMUNGE_SUCCESS) {
		if (!r->err[0])
			snprintf(r->err, sizeof(r->err), "%s",
				 munge_strerror(e));
	} else if (len < 0 || (size_t)len >= sizeof(r->payload)) {
		snprintf(r->err, sizeof(r->err), "payload of %d bytes", len);
	} else {
		if (len)
			memcpy(r->payload, payload, (size_t)len);
		r->payload[len] = '\0';
		r->payload_len = (size_t)len;
		r->uid = uid;
		r->gid = gid;
		r->expire_ms = ((uint64_t)encoded + (uint64_t)ttl) * 1000;
		if (cred_id(r, (uint64_t)encoded, (uint64_t)ttl))
			snprintf(r->err, sizeof(r->err), "cannot hash the "
				 "credential (libcrypto)");
		else
			r->ok = 1;
	}
	free(payload);
}

static void *worker(void *arg)
{
	struct mmd_auth *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct mmd_auth_item *it;
		const uint64_t one = 1;

		while (!a->stop && !a->in)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop)
			break;
		it = a->in;
		a->in = it->next;
		if (!a->in)
			a->in_tail = &a->in;
		pthread_mutex_unlock(&a->mu);
		decode(a->socket, it->cred, &it->r);
		pthread_mutex_lock(&a->mu);
		it->next = NULL;
		*a->out_tail = it;
		a->out_tail = &it->next;
		ssize_t w = write(a->efd, &one, sizeof(one));

		(void)w; /* the counter is only a wake-up */
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int mmd_auth_start(struct mmd_auth *a, const char *munge_socket)
{
	memset(a, 0, sizeof(*a));
	a->in_tail = &a->in;
	a->out_tail = &a->out;
	snprintf(a->socket, sizeof(a->socket), "%s", munge_socket);
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->efd < 0)
		return -errno;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->thread, NULL, worker, a)) {
		close(a->efd);
		a->efd = -1;
		return -EAGAIN;
	}
	a->started = 1;
	return 0;
}

static void free_list(struct mmd_auth_item *it)
{
	while (it) {
		struct mmd_auth_item *next = it->next;

		free(it);
		it = next;
	}
}

void mmd_auth_stop(struct mmd_auth *a)
{
	if (!a->started)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	free_list(a->in);
	free_list(a->out);
	close(a->efd);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	a->started = 0;
}

int mmd_auth_submit(struct mmd_auth *a, uint64_t conn, const char *cred,
		    size_t n)
{
	struct mmd_auth_item *it;

	if (a->queued >= MMD_AUTH_QUEUE)
		return -EAGAIN;
	if (!(it = calloc(1, sizeof(*it) + n + 1)))
		return -ENOMEM;
	it->r.conn = conn;
	memcpy(it->cred, cred, n);
	it->cred[n] = '\0';
	pthread_mutex_lock(&a->mu);
	*a->in_tail = it;
	a->in_tail = &it->next;
	a->queued++;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

int mmd_auth_next(struct mmd_auth *a, struct mmd_auth_result *r)
{
	struct mmd_auth_item *it;
	uint64_t v;

	if (read(a->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&a->mu);
	it = a->out;
	if (it) {
		a->out = it->next;
		if (!a->out)
			a->out_tail = &a->out;
		a->queued--;
	}
	pthread_mutex_unlock(&a->mu);
	if (!it)
		return 0;
	*r = it->r;
	free(it);
	return 1;
}
