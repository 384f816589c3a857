/*
 * metrics.c — see metrics.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <qb/qblog.h>

#include "metrics.h"

#define METRICS_CONNECTIONS 16
#define METRICS_PER_IP 4
#define METRICS_TIMEOUT_S 10
#define METRICS_TICK_NS (1000ull * 1000 * 1000)

/* ---- text ------------------------------------------------------------------- */

void mmd_text_printf(struct mmd_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err)
		return;
	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->err = 1;
			return;
		}
		if ((size_t)n < room)
			break;
		size_t cap = t->cap ? 2 * t->cap : 8192;
		char *q;

		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		if (!(q = realloc(t->p, cap))) {
			t->err = 1;
			return;
		}
		t->p = q;
		t->cap = cap;
	}
	t->len += (size_t)n;
}

void mmd_text_head(struct mmd_text *t, const char *name, const char *type,
		   const char *help)
{
	mmd_text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
			type);
}

void mmd_text_phist(struct mmd_text *t, const char *name,
		    const char *labels, const struct mmd_phist *h)
{
	const char *sep = labels && *labels ? "," : "";
	uint64_t cum = 0;

	labels = labels ? labels : "";
	for (int i = 0; i < MMD_PHIST_BOUNDS; i++) {
		cum += h->b[i];
		mmd_text_printf(t, "%s_bucket{%s%sle=\"%g\"} %llu\n", name,
				labels, sep, mmd_phist_bound[i],
				(unsigned long long)cum);
	}
	mmd_text_printf(t, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels,
			sep, (unsigned long long)h->n);
	mmd_text_printf(t, "%s_sum%s%s%s %.9f\n", name, *labels ? "{" : "",
			labels, *labels ? "}" : "", (double)h->sum_ns / 1e9);
	mmd_text_printf(t, "%s_count%s%s%s %llu\n", name, *labels ? "{" : "",
			labels, *labels ? "}" : "",
			(unsigned long long)h->n);
}

void mmd_metrics_state(struct mmd_text *t, const mm_state_t *st)
{
	static const mm_job_state_t states[] = {
		MM_JOB_PENDING, MM_JOB_STAGING, MM_JOB_RUNNING,
		MM_JOB_COMPLETED, MM_JOB_FAILED, MM_JOB_CANCELLED,
	};
	uint64_t jobs[sizeof(states) / sizeof(*states)] = { 0 };
	uint64_t up = 0, down = 0, draining = 0, drained = 0, fails = 0;
	uint32_t n = mm_node_count(st);
	mm_job_t j;

	/* every job the state holds (ended ones until retention) */
	for (uint32_t id = 1; mm_job_next(st, id, &j) == 0; id = j.id + 1)
		for (size_t k = 0; k < sizeof(states) / sizeof(*states); k++)
			jobs[k] += j.state == states[k];
	mmd_text_head(t, "storm_jobs", "gauge",
		      "Jobs held in the replicated state, by state.");
	for (size_t k = 0; k < sizeof(states) / sizeof(*states); k++)
		mmd_text_printf(t, "storm_jobs{state=\"%s\"} %llu\n",
				mm_job_state_name(states[k]),
				(unsigned long long)jobs[k]);
	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;

		if (mm_node_get(st, i, &x))
			continue;
		fails += x.failures;
		if (x.state != MM_NODE_UP)
			down++;
		else if (x.drain)
			*(x.used ? &draining : &drained) += 1;
		else
			up++;
	}
	mmd_text_head(t, "storm_nodes", "gauge",
		      "Compute nodes, by state (a drained node is DRAINING "
		      "while jobs hold it).");
	mmd_text_printf(t, "storm_nodes{state=\"UP\"} %llu\n"
			"storm_nodes{state=\"DOWN\"} %llu\n"
			"storm_nodes{state=\"DRAINING\"} %llu\n"
			"storm_nodes{state=\"DRAINED\"} %llu\n",
			(unsigned long long)up, (unsigned long long)down,
			(unsigned long long)draining,
			(unsigned long long)drained);
	mmd_text_head(t, "storm_node_failures_total", "counter",
		      "Times compute nodes went DOWN, over all nodes.");
	mmd_text_printf(t, "storm_node_failures_total %llu\n",
			(unsigned long long)fails);
}

/* ---- HTTP ------------------------------------------------------------------- */

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **con_cls)
{
	struct mmd_metrics *m = cls;
	struct MHD_Response *r;
	struct mmd_text t = { 0 };
	unsigned int code = MHD_HTTP_OK;
	enum MHD_Result rc;

	(void)version;
	(void)upload;
	if (!*con_cls) { /* the headers: the body (none) comes next */
		*con_cls = (void *)1;
		return MHD_YES;
	}
	if (*upload_len) { /* a body: not ours to read */
		*upload_len = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
		mmd_text_printf(&t, "only GET /metrics is served here\n");
	} else if (strcmp(url, "/metrics")) {
		code = MHD_HTTP_NOT_FOUND;
		mmd_text_printf(&t, "no %s here: the metrics are at /metrics\n",
				url);
	} else {
		m->scrapes++;
		m->render(m->ctx, &t);
		mmd_text_head(&t, "storm_metrics_scrapes_total", "counter",
			      "Scrapes of this replica's metrics.");
		mmd_text_printf(&t, "storm_metrics_scrapes_total %llu\n",
				(unsigned long long)m->scrapes);
	}
	if (t.err) {
		free(t.p);
		return MHD_NO;
	}
	r = MHD_create_response_from_buffer(t.len, t.p ? t.p : (char *)"",
					    t.p ? MHD_RESPMEM_MUST_FREE
						: MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(t.p);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
				code == MHD_HTTP_OK ?
				"text/plain; version=0.0.4; charset=utf-8" :
				"text/plain; charset=utf-8");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	rc = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return rc;
}

static int on_ready(int32_t fd, int32_t revents, void *data)
{
	struct mmd_metrics *m = data;

	(void)fd;
	(void)revents;
	MHD_run(m->d);
	return 0;
}

/* Idle connections time out only when MHD runs: once a second. */
static void on_tick(void *data)
{
	struct mmd_metrics *m = data;

	MHD_run(m->d);
	qb_loop_timer_add(m->loop, QB_LOOP_LOW, METRICS_TICK_NS, m, on_tick,
			  &m->timer);
}

/* host:port into a bound, listening socket. */
static int listen_on(const char *listen_at, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(listen_at, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST |
					      AI_NUMERICSERV },
			*ai = NULL;
	int fd, e, one = 1;

	if (!colon || colon == listen_at ||
	    (size_t)(colon - listen_at) >= sizeof(host)) {
		snprintf(err, errlen, "metrics_listen = \"%s\": want "
			 "HOST:PORT (an address of this host)", listen_at);
		return -EINVAL;
	}
	memcpy(host, listen_at, (size_t)(colon - listen_at));
	host[colon - listen_at] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if ((e = getaddrinfo(host, colon + 1, &hints, &ai))) {
		snprintf(err, errlen, "metrics_listen = \"%s\": %s", listen_at,
			 gai_strerror(e));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		e = errno;
		snprintf(err, errlen, "metrics_listen = \"%s\": cannot listen: "
			 "%s%s", listen_at, strerror(e),
			 e == EADDRINUSE ? " (another process holds the port: "
			 "give this replica another one)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -e;
	}
	freeaddrinfo(ai);
	return fd;
}

int mmd_metrics_start(struct mmd_metrics *m, qb_loop_t *loop,
		      const char *listen_at, mmd_metrics_render_fn render,
		      void *ctx, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *info;
	int fd = listen_on(listen_at, err, errlen);

	*m = (struct mmd_metrics){ .loop = loop, .render = render, .ctx = ctx,
				   .epfd = -1, .lfd = -1 };
	if (fd < 0)
		return fd;
	m->lfd = fd;
	m->d = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, answer, m,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)METRICS_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned int)METRICS_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)METRICS_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)(64 << 10),
				MHD_OPTION_END);
	if (!m->d || !(info = MHD_get_daemon_info(m->d,
						  MHD_DAEMON_INFO_EPOLL_FD))) {
		snprintf(err, errlen, "metrics_listen = \"%s\": the HTTP "
			 "server did not start", listen_at);
		mmd_metrics_stop(m);
		return -EIO;
	}
	m->epfd = info->epoll_fd;
	qb_loop_poll_add(loop, QB_LOOP_LOW, m->epfd, POLLIN, m, on_ready);
	qb_loop_timer_add(loop, QB_LOOP_LOW, METRICS_TICK_NS, m, on_tick,
			  &m->timer);
	qb_log(LOG_INFO, "metrics at http://%s/metrics", listen_at);
	return 0;
}

void mmd_metrics_stop(struct mmd_metrics *m)
{
	if (!m->loop) /* never started */
		return;
	if (m->epfd >= 0)
		qb_loop_poll_del(m->loop, m->epfd);
	if (m->timer && m->loop)
		qb_loop_timer_del(m->loop, m->timer);
	if (m->d)
		MHD_stop_daemon(m->d);
	else if (m->lfd >= 0)
		close(m->lfd);
	m->d = NULL;
	m->epfd = m->lfd = -1;
	m->timer = 0;
	m->loop = NULL;
}
