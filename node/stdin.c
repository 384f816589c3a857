/*
 * stdin.c — rank 0's stdin from the replica that holds stormctl
 * (stdin.h).  Key invariant: a replica's slot is acknowledged only once
 * its chunk is copied out into an empty job buffer, so nothing here
 * grows beyond one chunk per job, whatever the client sends.
 *
 *   stream     event                    action
 *   open       chunk, buffer empty      copy, ack, write what the pipe takes
 *   open       chunk, buffer full       leave it in the slot (held)
 *   open       buffer drained           take a held slot; after EOF: close
 *   open       write fails (EPIPE)      closed: drop the buffer
 *   closed     chunk                    ack "closed"
 *   any        feeder leaves the view   EOF once the buffer drains
 *   (none)     chunk                    ack "closed" (no such stream here)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "stdin.h"

struct nm_stdin_stream {
	struct nm_stdin_stream *next;
	struct nm_stdin *s;
	uint32_t job;
	int fd;           /* the pipe's write end; -1 once closed */
	int polled;       /* fd is in the loop for POLLOUT */
	int eof;          /* the end came: close once the buffer drains */
	int closed;       /* rank 0 takes no more */
	int feeder;       /* the replica that sent its first chunk, -1 */
	uint8_t *buf;     /* one chunk waiting for the pipe */
	uint32_t off, len;
};

int nm_stdin_init(struct nm_stdin *s, sp_world_t *w, const st_layout_t *lay,
		  qb_loop_t *loop, uint32_t nmanagers,
		  int (*starting)(void *ctx, uint32_t job), void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->starting = starting;
	s->ctx = ctx;
	s->w = w;
	s->lay = lay;
	s->loop = loop;
	s->nmanagers = nmanagers;
	s->ack = calloc(nmanagers ? nmanagers : 1, sizeof(*s->ack));
	s->taken = calloc(nmanagers ? nmanagers : 1, sizeof(*s->taken));
	s->held = calloc(nmanagers ? nmanagers : 1, sizeof(*s->held));
	s->copy = malloc(lay->stdin_len);
	if (!s->ack || !s->taken || !s->held || !s->copy ||
	    sp_nodeset_create(sp_node_count(w), &s->one)) {
		nm_stdin_fini(s);
		return -ENOMEM;
	}
	return 0;
}

static void stream_close_fd(struct nm_stdin_stream *x)
{
	if (x->polled)
		qb_loop_poll_del(x->s->loop, x->fd);
	x->polled = 0;
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

static void stream_free(struct nm_stdin_stream *x)
{
	stream_close_fd(x);
	free(x->buf);
	free(x);
}

void nm_stdin_fini(struct nm_stdin *s)
{
	while (s->list) {
		struct nm_stdin_stream *x = s->list;

		s->list = x->next;
		stream_free(x);
	}
	free(s->ack);
	free(s->taken);
	free(s->held);
	free(s->copy);
	sp_nodeset_destroy(s->one);
	memset(s, 0, sizeof(*s));
}

static void take_held(struct nm_stdin *s);

static struct nm_stdin_stream *find(struct nm_stdin *s, uint32_t job)
{
	for (struct nm_stdin_stream *x = s->list; x; x = x->next)
		if (x->job == job)
			return x;
	return NULL;
}

int nm_stdin_open(struct nm_stdin *s, uint32_t job)
{
	struct nm_stdin_stream *x;
	int p[2];

	if (find(s, job))
		nm_stdin_forget(s, job);
	x = calloc(1, sizeof(*x));
	if (!x || !(x->buf = malloc(ST_STDIN_FRAME_MAX))) {
		free(x);
		return -ENOMEM;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		int e = errno;

		free(x->buf);
		free(x);
		return -e;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	x->s = s;
	x->job = job;
	x->fd = p[1];
	x->feeder = -1;
	x->next = s->list;
	s->list = x;
	take_held(s);
	return p[0];
}

static void send_ack(struct nm_stdin *s, uint32_t m, uint64_t seq,
		     uint32_t job, uint32_t flags)
{
	char err[256] = "";
	st_stdin_ack_t a = { .seq = seq, .job = job, .flags = flags };

	st_stdin_ack_put(s->ack[m], &a);
	sp_nodeset_clear(s->one);
	sp_nodeset_add(s->one, m); /* a replica's world id is its index */
	if (sp_xfer_and_signal(s->w, s->one, s->ack[m], ST_STDIN_ACK_LEN,
			       s->lay->stdin_ack +
			       64ull * sp_node_id(s->w),
			       SP_EV_NONE, ST_EV_STDIN_ACK, err, sizeof(err)))
		qb_log(LOG_DEBUG, "job %u: stdin ack to manager %u: %s", job,
		       m, err);
}

static void pump(struct nm_stdin_stream *x);
static void take_held(struct nm_stdin *s);

static int on_writable(int32_t fd, int32_t revents, void *data)
{
	(void)fd;
	(void)revents;
	pump(data);
	return 0;
}

static void take_held(struct nm_stdin *s);

/* Write what the pipe takes; wait for POLLOUT for the rest. */
static void pump(struct nm_stdin_stream *x)
{
	while (x->fd >= 0 && x->off < x->len) {
		ssize_t n = write(x->fd, x->buf + x->off, x->len - x->off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (!x->polled)
				x->polled = !qb_loop_poll_add(
					x->s->loop, QB_LOOP_MED, x->fd,
					POLLOUT, x, on_writable);
			return;
		}
		if (n <= 0) { /* EPIPE: rank 0 closed it, or ended */
			x->closed = 1;
			stream_close_fd(x);
			break;
		}
		x->off += (uint32_t)n;
	}
	x->off = x->len = 0;
	if (x->polled) {
		qb_loop_poll_del(x->s->loop, x->fd);
		x->polled = 0;
	}
	if (x->eof)
		stream_close_fd(x);
	take_held(x->s);
}

/* The chunk in replica m's slot, if new: 1 taken (or answered), 0 it
 * waits for its job's buffer. */
static int take(struct nm_stdin *s, uint32_t m)
{
	st_stdin_chunk_t c;
	struct nm_stdin_stream *x;

	uint64_t at = s->lay->stdin + (uint64_t)m * s->lay->stdin_len;

	/* the header first, the bytes only for a new chunk: the slot does
	 * not change before this node acknowledges what is in it */
	if (sp_gmem_read(s->w, at, s->copy, ST_STDIN_HDR) ||
	    st_stdin_chunk_get(s->copy, s->lay->stdin_len, &c) ||
	    c.seq == s->taken[m] || c.len > ST_STDIN_FRAME_MAX ||
	    (c.len && sp_gmem_read(s->w, at + ST_STDIN_HDR,
				   s->copy + ST_STDIN_HDR, c.len)))
		return 1; /* nothing new (or not a chunk: ignored) */
	x = find(s, c.job);
	if (x && !x->closed && x->fd >= 0 && x->len)
		return 0; /* held until the buffer drains */
	if (!x && s->starting && s->starting(s->ctx, c.job))
		return 0; /* held until rank 0 starts */
	s->taken[m] = c.seq;
	if (!x || x->closed || x->fd < 0 ||
	    (x->feeder >= 0 && x->feeder != (int)m)) {
		send_ack(s, m, c.seq, c.job, ST_STDIN_CLOSED);
		return 1;
	}
	x->feeder = (int)m;
	memcpy(x->buf, s->copy + ST_STDIN_HDR, c.len);
	x->off = 0;
	x->len = c.len;
	x->eof = !!(c.flags & ST_STDIN_EOF);
	send_ack(s, m, c.seq, c.job, 0);
	pump(x);
	return 1;
}

static void take_held(struct nm_stdin *s)
{
	for (uint32_t m = 0; m < s->nmanagers; m++)
		if (s->held[m])
			s->held[m] = !take(s, m);
}

void nm_stdin_events(struct nm_stdin *s)
{
	int got = 0;

	while (sp_test_event(s->w, ST_EV_STDIN, 0) == 0)
		got = 1;
	for (uint32_t m = 0; got && m < s->nmanagers; m++)
		s->held[m] = !take(s, m);
}

void nm_stdin_view(struct nm_stdin *s, const sp_nodeset_t *live)
{
	for (struct nm_stdin_stream *x = s->list; x; x = x->next) {
		if (x->fd < 0 || x->feeder < 0 ||
		    sp_nodeset_has(live, (uint32_t)x->feeder))
			continue;
		qb_log(LOG_NOTICE, "job %u: the manager feeding rank 0's "
		       "stdin left: its stdin ends here", x->job);
		x->eof = 1;
		if (!x->len)
			stream_close_fd(x);
	}
}

void nm_stdin_forget(struct nm_stdin *s, uint32_t job)
{
	for (struct nm_stdin_stream **pp = &s->list; *pp; pp = &(*pp)->next)
		if ((*pp)->job == job) {
			struct nm_stdin_stream *x = *pp;

			*pp = x->next;
			stream_free(x);
			break;
		}
	take_held(s);
}
