/*
 * pmi_node.c — PMI-1 jobs on this node (pmi_node.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "pmi.h"
#include "pmi_node.h"

struct pmi_conn {
	struct pmi_job *pj;
	uint32_t i;        /* local rank */
	int fd;            /* our end, -1 once closed */
	int polled;
	int want_out;
};

struct pmi_job {
	struct pmi_job *next;
	struct nm_pmi_node *n;
	uint32_t job, inc, slot, nlocal;
	struct nm_pmi *s;
	struct pmi_conn *c;
	int failed;        /* reported */
	/* the merged store coming down */
	uint32_t fence;
	uint8_t *asm_buf;
	size_t asm_len, asm_cap;
};

int nm_pmi_node_init(struct nm_pmi_node *n, sp_world_t *w,
		     const st_layout_t *lay, qb_loop_t *loop,
		     uint32_t rec_max, const struct nm_pmi_node_ops *ops)
{
	*n = (struct nm_pmi_node){ .w = w, .lay = lay, .loop = loop,
				   .ops = *ops, .rec_max = rec_max };
	n->inbox = malloc(lay->pmi_len);
	return n->inbox ? 0 : -ENOMEM;
}

static void conn_close(struct pmi_conn *c)
{
	if (c->fd < 0)
		return;
	if (c->polled)
		qb_loop_poll_del(c->pj->n->loop, c->fd);
	close(c->fd);
	c->fd = -1;
	c->polled = 0;
}

static void job_free(struct pmi_job *pj)
{
	for (uint32_t i = 0; pj->c && i < pj->nlocal; i++)
		conn_close(&pj->c[i]);
	nm_pmi_free(pj->s);
	free(pj->c);
	free(pj->asm_buf);
	free(pj);
}

void nm_pmi_node_fini(struct nm_pmi_node *n)
{
	while (n->jobs) {
		struct pmi_job *pj = n->jobs;

		n->jobs = pj->next;
		job_free(pj);
	}
	free(n->inbox);
	n->inbox = NULL;
}

static struct pmi_job *find(struct nm_pmi_node *n, uint32_t job)
{
	struct pmi_job *pj = n->jobs;

	while (pj && pj->job != job)
		pj = pj->next;
	return pj;
}

/* The job failed here: said once, and its ranks heard no more. */
static void job_failed(struct pmi_job *pj)
{
	const char *why = nm_pmi_failed(pj->s, NULL);

	if (pj->failed)
		return;
	pj->failed = 1;
	qb_log(LOG_NOTICE, "job %u: %s", pj->job, why ? why : "PMI failed");
	pj->n->ops.failed(pj->n->ops.ctx, pj->job, why ? why : "PMI failed");
}

static int on_conn(int32_t fd, int32_t revents, void *data);

/* Replies out, as far as the socket takes them. */
static void flush_out(struct pmi_conn *c)
{
	struct pmi_job *pj = c->pj;
	const char *buf;
	size_t len;
	ssize_t w;
	int want;

	if (c->fd < 0)
		return;
	while ((len = nm_pmi_output(pj->s, c->i, &buf)) > 0) {
		w = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0)
			break;
		nm_pmi_written(pj->s, c->i, (size_t)w);
	}
	want = nm_pmi_output(pj->s, c->i, &buf) > 0;
	if (c->polled && want != c->want_out) {
		qb_loop_poll_mod(pj->n->loop, QB_LOOP_HIGH, c->fd,
				 POLLIN | (want ? POLLOUT : 0), c, on_conn);
		c->want_out = want;
	}
}

/* Every local rank in the barrier: this node's entries go up, in
 * records of whole entries, then the slot says they went. */
static void fence_up(struct pmi_job *pj)
{
	struct nm_pmi_node *n = pj->n;
	const uint8_t *e;
	size_t len, off = 0;
	uint32_t fence;
	uint8_t *rec;

	if (!nm_pmi_fence_ready(pj->s, &e, &len, &fence))
		return;
	rec = malloc(ST_PMI_REC_HDR + n->rec_max);
	if (!rec) {
		n->ops.failed(n->ops.ctx, pj->job, "PMI: out of memory");
		pj->failed = 1;
		return;
	}
	do {
		size_t take = 0;

		/* whole entries, as many as fit */
		while (off + take < len) {
			size_t at = off + take;
			size_t one = 4 + ((size_t)e[at] | (size_t)e[at + 1] << 8) +
				     ((size_t)e[at + 2] |
				      (size_t)e[at + 3] << 8);

			if (take + one > n->rec_max)
				break;
			take += one;
		}
		st_put32(rec, pj->inc);
		st_put32(rec + 4, fence);
		st_put32(rec + 8, off + take >= len);
		if (take) /* no puts at all: no entries, e NULL */
			memcpy(rec + ST_PMI_REC_HDR, e + off, take);
		n->ops.record(n->ops.ctx, pj->job, rec,
			      (uint32_t)(ST_PMI_REC_HDR + take));
		off += take;
	} while (off < len);
	free(rec);
	if (pj->slot < n->lay->done_slots)
		sp_gvar_write_local(n->w, st_pmi_var(n->lay, pj->slot),
				    st_pmi_slot(pj->job, 2 * (fence - 1) + 1));
	qb_log(LOG_DEBUG, "job %u: PMI barrier %u: %zu bytes up", pj->job,
	       fence, len);
}

static int on_conn(int32_t fd, int32_t revents, void *data)
{
	struct pmi_conn *c = data;
	struct pmi_job *pj = c->pj;
	char buf[4096];
	ssize_t r;

	(void)fd;
	if (revents & POLLOUT)
		flush_out(c);
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0) {
		conn_close(c);
		if (nm_pmi_closed(pj->s, c->i))
			job_failed(pj);
		return 0;
	}
	if (pj->failed)
		return 0; /* the job is being ended: what it says is moot */
	if (nm_pmi_input(pj->s, c->i, buf, (size_t)r)) {
		job_failed(pj);
		return 0;
	}
	flush_out(c);
	fence_up(pj);
	return 0;
}

int nm_pmi_node_open(struct nm_pmi_node *n, uint32_t job, uint32_t inc,
		     uint32_t slot, uint32_t size, const uint32_t *rank_node,
		     uint32_t nlocal, const uint32_t *ranks, int *fds,
		     char *err, size_t errlen)
{
	struct pmi_job *pj = calloc(1, sizeof(*pj));
	char kvs[32];

	snprintf(kvs, sizeof(kvs), "storm-%u", job);
	for (uint32_t i = 0; i < nlocal; i++)
		fds[i] = -1;
	if (!pj || !(pj->c = calloc(nlocal ? nlocal : 1, sizeof(*pj->c))) ||
	    !(pj->s = nm_pmi_new(job, kvs, size, rank_node, nlocal, ranks))) {
		if (pj)
			free(pj->c);
		free(pj);
		snprintf(err, errlen, "PMI: out of memory");
		return -ENOMEM;
	}
	pj->n = n;
	pj->job = job;
	pj->inc = inc;
	pj->slot = slot;
	pj->nlocal = nlocal;
	for (uint32_t i = 0; i < nlocal; i++) {
		int sv[2];

		pj->c[i] = (struct pmi_conn){ .pj = pj, .i = i, .fd = -1 };
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			int e = errno;

			snprintf(err, errlen, "PMI: socketpair: %s",
				 strerror(e));
			for (uint32_t k = 0; k < i; k++) {
				close(fds[k]);
				fds[k] = -1;
			}
			job_free(pj);
			return -e;
		}
		pj->c[i].fd = sv[0];
		fds[i] = sv[1];
	}
	if (slot < n->lay->done_slots)
		sp_gvar_write_local(n->w, st_pmi_var(n->lay, slot),
				    st_pmi_slot(job, 0));
	pj->next = n->jobs;
	n->jobs = pj;
	return 0;
}

void nm_pmi_node_started(struct nm_pmi_node *n, uint32_t job, int *fds)
{
	struct pmi_job *pj = find(n, job);

	for (uint32_t i = 0; pj && i < pj->nlocal; i++) {
		struct pmi_conn *c = &pj->c[i];

		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
		if (c->fd >= 0 &&
		    qb_loop_poll_add(n->loop, QB_LOOP_HIGH, c->fd, POLLIN, c,
				     on_conn) == 0)
			c->polled = 1;
	}
}

void nm_pmi_node_close(struct nm_pmi_node *n, uint32_t job)
{
	struct pmi_job **pp = &n->jobs;

	while (*pp && (*pp)->job != job)
		pp = &(*pp)->next;
	if (*pp) {
		struct pmi_job *pj = *pp;

		*pp = pj->next;
		job_free(pj);
	}
}

/* A chunk of barrier fence's store: assembled in order; the whole store
 * answers the barrier. */
static void take_chunk(struct pmi_job *pj, const st_pmi_chunk_t *c,
		       const uint8_t *bytes)
{
	int rc;

	if (pj->failed || c->inc != pj->inc ||
	    c->fence != nm_pmi_fences(pj->s) + 1)
		return; /* a store taken before, sent again */
	if (c->off == 0 || pj->fence != c->fence) {
		pj->fence = c->fence;
		pj->asm_len = 0;
	}
	if (c->off != pj->asm_len)
		return; /* a piece of an earlier sending */
	if (c->total > NM_PMI_STORE_MAX) {
		pj->failed = 1;
		pj->n->ops.failed(pj->n->ops.ctx, pj->job, "PMI: the job's "
				  "merged key-value store is too large");
		return;
	}
	if (pj->asm_len + c->len > pj->asm_cap) {
		size_t cap = pj->asm_cap ? pj->asm_cap : 4096;
		uint8_t *b;

		while (cap < pj->asm_len + c->len)
			cap *= 2;
		if (!(b = realloc(pj->asm_buf, cap)))
			return; /* sent again after a while */
		pj->asm_buf = b;
		pj->asm_cap = cap;
	}
	if (c->len)
		memcpy(pj->asm_buf + pj->asm_len, bytes, c->len);
	pj->asm_len += c->len;
	if (pj->asm_len < c->total)
		return;
	rc = nm_pmi_fence_take(pj->s, c->fence, pj->asm_buf, pj->asm_len);
	pj->asm_len = 0;
	if (rc < 0) {
		job_failed(pj);
		return;
	}
	if (pj->slot < pj->n->lay->done_slots)
		sp_gvar_write_local(pj->n->w, st_pmi_var(pj->n->lay, pj->slot),
				    st_pmi_slot(pj->job, 2 * c->fence));
	for (uint32_t i = 0; i < pj->nlocal; i++)
		flush_out(&pj->c[i]);
}

void nm_pmi_node_events(struct nm_pmi_node *n)
{
	st_pmi_chunk_t c;
	struct pmi_job *pj;

	while (sp_test_event(n->w, ST_EV_PMI, 0) == 0) {
		/* the master writes the inbox again only once we said we
		 * copied this chunk out (gv_pmi_seq) */
		if (sp_gmem_read(n->w, n->lay->pmi, n->inbox, ST_PMI_HDR) ||
		    st_pmi_chunk_get(n->inbox, n->lay->pmi_len, &c) ||
		    (c.len && sp_gmem_read(n->w, n->lay->pmi + ST_PMI_HDR,
					   n->inbox + ST_PMI_HDR, c.len))) {
			qb_log(LOG_WARNING, "malformed PMI chunk: ignored");
			continue;
		}
		if ((pj = find(n, c.job)))
			take_chunk(pj, &c, n->inbox + ST_PMI_HDR);
		sp_gvar_write_local(n->w, n->lay->gv_pmi_seq, (int64_t)c.seq);
	}
}
