/*
 * stdin.c — rank 0's stdin streams of this replica's run clients
 * (stdin.h).  Key invariant: at most one frame per stream and one chunk
 * per node are held here; a client whose frame waits is not read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <qb/qblog.h>

#include "stdin.h"

struct mmd_stdin_stream {
	struct mmd_stdin_stream *next;
	uint64_t client;   /* the connection's id; 0: gone */
	uint32_t job;
	uint8_t *buf;      /* a frame to send (ST_STDIN_FRAME_MAX) */
	uint32_t len;
	int have;          /* buf holds it */
	int eof;           /* the end goes after it */
	int done;          /* nothing more goes */
};

struct mmd_stdin_node {
	uint64_t seq;      /* the last chunk sent to it */
	uint32_t job;      /* ... for this job */
	int inflight;      /* not acknowledged yet */
	uint8_t *chunk;    /* lay->stdin_len while it is in flight */
};

int mmd_stdin_init(struct mmd_stdin *x, const st_layout_t *lay,
		   uint32_t nworld, uint32_t self, struct mmd_clients *clients,
		   uint64_t seq_base)
{
	memset(x, 0, sizeof(*x));
	x->lay = lay;
	x->nworld = nworld;
	x->self = self;
	x->clients = clients;
	x->seq_base = seq_base;
	x->nodes = calloc(nworld ? nworld : 1, sizeof(*x->nodes));
	if (!x->nodes || sp_nodeset_create(nworld ? nworld : 1, &x->one)) {
		mmd_stdin_fini(x);
		return -ENOMEM;
	}
	return 0;
}

static void stream_free(struct mmd_stdin_stream *s)
{
	free(s->buf);
	free(s);
}

void mmd_stdin_fini(struct mmd_stdin *x)
{
	while (x->list) {
		struct mmd_stdin_stream *s = x->list;

		x->list = s->next;
		stream_free(s);
	}
	for (uint32_t n = 0; x->nodes && n < x->nworld; n++)
		free(x->nodes[n].chunk);
	free(x->nodes);
	sp_nodeset_destroy(x->one);
	memset(x, 0, sizeof(*x));
}

static struct mmd_stdin_stream *by_client(struct mmd_stdin *x, uint64_t id)
{
	for (struct mmd_stdin_stream *s = x->list; s; s = s->next)
		if (s->client == id && !s->done)
			return s;
	return NULL;
}

int mmd_stdin_open(struct mmd_stdin *x, struct mmd_client *c, uint32_t job,
		   int forward)
{
	struct mmd_stdin_stream *s = calloc(1, sizeof(*s));

	if (!s || (forward && !(s->buf = malloc(ST_STDIN_FRAME_MAX)))) {
		free(s);
		qb_log(LOG_WARNING, "job %u: out of memory for rank 0's "
		       "stdin: it ends when this manager leaves", job);
		return -ENOMEM;
	}
	s->job = job;
	if (forward) {
		s->client = c->id;
		c->stdin_job = job; /* its STDIN frames are due */
	} else {
		s->eof = 1;
	}
	s->next = x->list;
	x->list = s;
	return 0;
}

void mmd_stdin_frame(struct mmd_stdin *x, struct mmd_client *c,
		     const uint8_t *p, uint32_t len)
{
	struct mmd_stdin_stream *s = by_client(x, c->id);

	if (!s || s->eof)
		return; /* rank 0 takes no more, or after the end: dropped */
	if (!len) {
		s->eof = 1;
		return;
	}
	if (s->have || len > ST_STDIN_FRAME_MAX)
		return; /* clients.c paused it: cannot happen */
	memcpy(s->buf, p, len);
	s->len = len;
	s->have = 1;
	mmd_client_pause(c, 1);
}

void mmd_stdin_gone(struct mmd_stdin *x, struct mmd_client *c)
{
	struct mmd_stdin_stream *s = by_client(x, c->id);

	if (s) {
		s->client = 0;
		s->eof = 1;
	}
}

static void stream_done(struct mmd_stdin *x, struct mmd_stdin_stream *s,
			int tell)
{
	struct mmd_client *c = s->client ?
			       mmd_clients_find(x->clients, s->client) : NULL;

	s->done = 1;
	s->have = 0;
	if (c) {
		mmd_client_pause(c, 0);
		if (tell) /* stop sending: rank 0 takes no more */
			mmd_client_send(c, ST_FRAME_STDIN, "", 0);
	}
}

void mmd_stdin_acks(struct mmd_stdin *x, sp_world_t *w)
{
	if (!w)
		return;
	while (sp_test_event(w, ST_EV_STDIN_ACK, 0) == 0)
		;
	for (uint32_t n = 0; n < x->nworld; n++) {
		struct mmd_stdin_node *nd = &x->nodes[n];
		uint8_t line[ST_STDIN_ACK_LEN];
		st_stdin_ack_t a;

		if (!nd->inflight ||
		    sp_gmem_read(w, x->lay->stdin_ack + 64ull * n, line,
				 sizeof(line)) ||
		    st_stdin_ack_get(line, &a) || a.seq != nd->seq)
			continue;
		nd->inflight = 0;
		if (!(a.flags & ST_STDIN_CLOSED))
			continue;
		for (struct mmd_stdin_stream *s = x->list; s; s = s->next)
			if (s->job == a.job && !s->done)
				stream_done(x, s, 1);
	}
}

static int send_chunk(struct mmd_stdin *x, sp_world_t *w,
		      struct mmd_stdin_stream *s, uint32_t node)
{
	struct mmd_stdin_node *nd = &x->nodes[node];
	uint32_t len = s->have ? s->len : 0;
	st_stdin_chunk_t c = { .job = s->job,
			       .seq = (nd->seq ? nd->seq : x->seq_base) + 1,
			       .flags = s->eof ? ST_STDIN_EOF : 0,
			       .len = len };
	char err[256] = "";

	if (!nd->chunk && !(nd->chunk = malloc(x->lay->stdin_len)))
		return -ENOMEM;
	st_stdin_chunk_put(nd->chunk, &c);
	if (len)
		memcpy(nd->chunk + ST_STDIN_HDR, s->buf, len);
	sp_nodeset_clear(x->one);
	sp_nodeset_add(x->one, node);
	if (sp_xfer_and_signal(w, x->one, nd->chunk, ST_STDIN_HDR + len,
			       x->lay->stdin + (uint64_t)x->self *
			       x->lay->stdin_len, SP_EV_NONE, ST_EV_STDIN,
			       err, sizeof(err))) {
		qb_log(LOG_DEBUG, "job %u: stdin to node %u: %s", s->job,
		       node, err);
		return -EAGAIN;
	}
	nd->seq = c.seq;
	nd->job = s->job;
	nd->inflight = 1;
	return 0;
}

void mmd_stdin_step(struct mmd_stdin *x, sp_world_t *w, const mm_state_t *st)
{
	for (struct mmd_stdin_stream **pp = &x->list, *s; (s = *pp);) {
		mm_job_t j;
		int gone = mm_job_get(st, s->job, &j) ||
			   j.state == MM_JOB_COMPLETED ||
			   j.state == MM_JOB_FAILED ||
			   j.state == MM_JOB_CANCELLED;

		if (gone && !s->done)
			stream_done(x, s, 0);
		if (!s->done && w && j.state == MM_JOB_RUNNING &&
		    (s->have || s->eof) && j.ranks && j.rank_node &&
		    j.rank_node[0] < x->nworld) {
			struct mmd_stdin_node *nd = &x->nodes[j.rank_node[0]];

			/* a chunk of a job that ended is not waited for */
			if (nd->inflight && nd->job != s->job &&
			    (mm_job_get(st, nd->job, &j) ||
			     j.state != MM_JOB_RUNNING))
				nd->inflight = 0;
			mm_job_get(st, s->job, &j);
			if (!nd->inflight &&
			    !send_chunk(x, w, s, j.rank_node[0])) {
				struct mmd_client *c = s->client ?
					mmd_clients_find(x->clients,
							 s->client) : NULL;

				s->have = 0;
				if (s->eof)
					s->done = 1;
				else if (c)
					mmd_client_pause(c, 0);
			}
		}
		if (s->done) {
			*pp = s->next;
			stream_free(s);
			continue;
		}
		pp = &s->next;
	}
}
