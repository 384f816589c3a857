/*
 * http.c — storm-web's HTTP side: three read-only routes, found in a
 * table, served by libmicrohttpd with a thread per connection (an event
 * stream's reader blocks on the view's condition until the view
 * changes, which needs a thread of its own; the connections are bounded).
 *
 *   GET /             the page (page.html)
 *   GET /api/state    the view, application/json
 *   GET /api/events   text/event-stream: the view now, then once per
 *                     change; a comment line every KEEPALIVE_S between
 *
 * Every byte from the network is untrusted: a request is answered from
 * its method and path alone, before any body is read (none is); headers
 * are bounded by the connection's memory; other paths are 404, other
 * methods 405.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "web.h"

#define HTTP_CONNECTIONS 64  /* at once, over every address */
#define HTTP_PER_IP 32       /* a browser opens several */
#define HTTP_TIMEOUT_S 30    /* idle; a stream is never idle that long */
#define HTTP_MEMORY (32u << 10) /* per connection: headers at most */
#define STREAMS_MAX 16       /* event streams open at once */
#define KEEPALIVE_S 10       /* < HTTP_TIMEOUT_S; proxies see traffic */

struct web_http {
	struct MHD_Daemon *d;
	struct web_view *v;
};

/* ---- responses ------------------------------------------------------------- */

static enum MHD_Result send_buffer(struct MHD_Connection *conn,
				   unsigned int code, const char *type,
				   void *buf, size_t len,
				   enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, buf, mode);
	enum MHD_Result rc;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	rc = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result send_text(struct MHD_Connection *conn,
				 unsigned int code, const char *fmt,
				 const char *arg)
{
	char *t = NULL;

	if (asprintf(&t, fmt, arg) < 0)
		return MHD_NO;
	return send_buffer(conn, code, "text/plain; charset=utf-8", t,
			   strlen(t), MHD_RESPMEM_MUST_FREE);
}

/* ---- routes ---------------------------------------------------------------- */

static enum MHD_Result get_page(struct web_http *h,
				struct MHD_Connection *conn)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	(void)h;
	r = MHD_create_response_from_buffer(web_page_len, (void *)web_page,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* the page loads nothing from anywhere else */
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; script-src "
				"'unsafe-inline'; style-src 'unsafe-inline'; "
				"img-src 'self' data:; frame-ancestors 'none'");
	rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result get_state(struct web_http *h,
				 struct MHD_Connection *conn)
{
	char *doc;
	size_t len;

	pthread_mutex_lock(&h->v->mu);
	len = h->v->len;
	doc = malloc(len + 1);
	if (doc)
		memcpy(doc, h->v->doc, len + 1);
	pthread_mutex_unlock(&h->v->mu);
	if (!doc)
		return MHD_NO;
	return send_buffer(conn, MHD_HTTP_OK, "application/json", doc, len,
			   MHD_RESPMEM_MUST_FREE);
}

/* One event stream: what is still to be written of the current event. */
struct stream {
	struct web_view *v;
	uint64_t seen;  /* the version last sent (0: none yet) */
	char *buf;      /* "data: DOC\n\n" or a keepalive */
	size_t len, off;
};

/* The next event, waiting for it (this connection's own thread): the
 * view when it changed since the last, else a keepalive comment after
 * KEEPALIVE_S.  0, or -1 when the server stops. */
static int next_event(struct stream *s)
{
	struct web_view *v = s->v;
	struct timespec until;
	int rc = 0;

	free(s->buf);
	s->buf = NULL;
	s->len = s->off = 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += KEEPALIVE_S;
	pthread_mutex_lock(&v->mu);
	while (!v->stopping && v->version == s->seen && rc == 0)
		rc = pthread_cond_timedwait(&v->changed, &v->mu, &until);
	if (v->stopping) {
		pthread_mutex_unlock(&v->mu);
		return -1;
	}
	if (v->version != s->seen) {
		/* the retry hint: a browser reconnects within a second
		 * after storm-web restarts */
		if (asprintf(&s->buf, "%sdata: %s\n\n",
			     s->seen ? "" : "retry: 1000\n", v->doc) >= 0)
			s->seen = v->version;
		else
			s->buf = NULL;
	}
	pthread_mutex_unlock(&v->mu);
	if (!s->buf && !(s->buf = strdup(": keepalive\n\n")))
		return -1;
	s->len = strlen(s->buf);
	return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct stream *s = cls;
	size_t n;

	(void)pos;
	if (s->off == s->len && next_event(s))
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *s = cls;

	pthread_mutex_lock(&s->v->mu);
	s->v->streams--;
	pthread_mutex_unlock(&s->v->mu);
	free(s->buf);
	free(s);
}

static enum MHD_Result get_events(struct web_http *h,
				  struct MHD_Connection *conn)
{
	struct MHD_Response *r;
	struct stream *s;
	enum MHD_Result rc;
	int full;

	pthread_mutex_lock(&h->v->mu);
	full = h->v->streams >= STREAMS_MAX;
	if (!full)
		h->v->streams++;
	pthread_mutex_unlock(&h->v->mu);
	if (full)
		return send_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "%s", "too many event streams open: close a "
				 "dashboard, or read /api/state\n");
	if (!(s = calloc(1, sizeof(*s)))) {
		pthread_mutex_lock(&h->v->mu);
		h->v->streams--;
		pthread_mutex_unlock(&h->v->mu);
		return MHD_NO;
	}
	s->v = h->v;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 << 10,
					      stream_read, s, stream_free);
	if (!r) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static const struct route {
	const char *path;
	enum MHD_Result (*get)(struct web_http *h, struct MHD_Connection *c);
	int head; /* HEAD served too (not on a stream: it never ends) */
} routes[] = {
	{ "/",           get_page,   1 },
	{ "/api/state",  get_state,  1 },
	{ "/api/events", get_events, 0 },
};

static const struct route *route_of(const char *url)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(*routes); i++)
		if (!strcmp(routes[i].path, url))
			return &routes[i];
	return NULL;
}

/* Answered at the first call, from the request line alone: a body, if
 * one was sent, is never read (libmicrohttpd closes the connection
 * after the answer). */
static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **con_cls)
{
	struct web_http *h = cls;
	const struct route *r = route_of(url);
	int get = !strcmp(method, MHD_HTTP_METHOD_GET),
	    head = !strcmp(method, MHD_HTTP_METHOD_HEAD);

	(void)version;
	(void)upload;
	(void)upload_len;
	if (*con_cls) /* answered already; a body is not ours to read */
		return MHD_NO;
	*con_cls = h;
	if (!r)
		return send_text(conn, MHD_HTTP_NOT_FOUND, "%s",
				 "not found: storm-web serves /, /api/state "
				 "and /api/events\n");
	if (!get && !(head && r->head))
		return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "%s",
				 "storm-web is read-only: GET only\n");
	return r->get(h, conn);
}

/* ---- the server ------------------------------------------------------------ */

int web_http_start(struct web_http **out, int lfd, struct web_view *v,
		   char *err, size_t errlen)
{
	struct web_http *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h) {
		close(lfd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	h->v = v;
	h->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				MHD_USE_POLL_INTERNAL_THREAD,
				0, NULL, NULL, answer, h,
				MHD_OPTION_LISTEN_SOCKET, lfd,
				MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)HTTP_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)HTTP_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)HTTP_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)HTTP_MEMORY,
				MHD_OPTION_END);
	if (!h->d) {
		close(lfd);
		free(h);
		snprintf(err, errlen, "the HTTP server did not start (out of "
			 "memory or threads?)");
		return -EIO;
	}
	*out = h;
	return 0;
}

void web_http_stop(struct web_http *h)
{
	if (!h)
		return;
	web_view_stop(h->v);
	MHD_stop_daemon(h->d); /* closes the listening socket too */
	free(h);
}
