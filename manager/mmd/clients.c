/*
 * clients.c — client connections and their outboxes (clients.h).
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "clients.h"

/* A request's buffer grows with the bytes that arrive, from this much:
 * a header that announces 16 MiB costs nothing until they come. */
#define BUF_FIRST 4096u

static int on_client(int32_t fd, int32_t revents, void *data);

int mmd_client_idle(const struct mmd_client *c)
{
	return c->closing && !c->watch_job && !c->wait_up && !c->wait_job &&
	       !c->out_len;
}

static void client_drop(struct mmd_clients *set, struct mmd_client *c)
{
	for (struct mmd_client **pp = &set->list; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	set->hooks.gone(set->hooks.ctx, c);
	qb_loop_poll_del(set->loop, c->fd);
	close(c->fd);
	free(c->buf);
	free(c->out);
	free(c);
}

/* Write what the socket takes now; wait for POLLOUT for the rest. */
static void client_flush(struct mmd_client *c)
{
	size_t done = 0;

	while (done < c->out_len) {
		ssize_t n = send(c->fd, c->out + done, c->out_len - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->out_len = 0;
			c->closing = 1;
			c->watch_job = 0;
			c->wait_up = 0;
			c->wait_job = 0;
			return;
		}
		done += (size_t)n;
	}
	memmove(c->out, c->out + done, c->out_len - done);
	c->out_len -= done;
	qb_loop_poll_mod(c->set->loop, QB_LOOP_MED, c->fd,
			 POLLIN | (c->out_len ? POLLOUT : 0), c, on_client);
}

int mmd_client_send(struct mmd_client *c, int type, const void *p,
		    uint32_t len)
{
	size_t need = c->out_len + ST_FRAME_HDR + len;

	if (c->closing && !c->watch_job)
		return -ECONNRESET;
	if (need > MMD_OUT_MAX) {
		qb_log(LOG_WARNING, "a client is %zu bytes behind: dropped "
		       "(its job goes on)", c->out_len);
		c->out_len = 0;
		c->closing = 1;
		c->watch_job = 0;
		return -ENOBUFS;
	}
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		uint8_t *q;

		while (cap < need)
			cap *= 2;
		q = realloc(c->out, cap);
		if (!q)
			return -ENOMEM;
		c->out = q;
		c->out_cap = cap;
	}
	st_frame_put_hdr(c->out + c->out_len, type, len);
	memcpy(c->out + c->out_len + ST_FRAME_HDR, p, len);
	c->out_len = need;
	client_flush(c);
	return 0;
}

int mmd_client_send_json(struct mmd_client *c, int type, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc = s ? mmd_client_send(c, type, s, (uint32_t)strlen(s))
		   : -ENOMEM;

	free(s);
	json_decref(o);
	if (rc)
		c->closing = 1;
	return rc;
}

int mmd_client_reply_err(struct mmd_client *c, int rc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mmd_client_send_json(c, ST_FRAME_REPLY,
				    json_pack("{s:b, s:s, s:i}", "ok", 0,
					      "error", msg, "errno",
					      rc < 0 ? -rc : rc));
}

/* Room for need bytes of payload (+ a NUL), grown as they arrive. */
static int buf_room(struct mmd_client *c, uint32_t need)
{
	uint32_t cap = c->buf_cap ? c->buf_cap : BUF_FIRST;
	uint8_t *b;

	if (need + 1 <= c->buf_cap)
		return 0;
	while (cap < need + 1)
		cap = cap > UINT32_MAX / 2 ? need + 1 : cap * 2;
	if (!(b = realloc(c->buf, cap)))
		return -ENOMEM;
	c->buf = b;
	c->buf_cap = cap;
	return 0;
}

static int on_client(int32_t fd, int32_t revents, void *data)
{
	struct mmd_client *c = data;
	struct mmd_clients *set = c->set;
	ssize_t n;

	if (revents & POLLOUT) {
		client_flush(c);
		if (!(revents & POLLIN))
			return 0;
	}
	if (c->got < ST_FRAME_HDR) {
		n = read(fd, c->hdr + c->got, ST_FRAME_HDR - c->got);
		if (n <= 0)
			goto gone;
		c->got += (uint32_t)n;
		if (c->got == ST_FRAME_HDR) {
			int type;
			uint32_t len;

			if (st_frame_parse_hdr(c->hdr, &type, &len) ||
			    type != ST_FRAME_REQUEST) {
				mmd_client_reply_err(c, EPROTO, "not a Storm "
						     "request frame (protocol "
						     "%d)", ST_FRAME_VERSION);
				goto gone;
			}
			c->need = ST_FRAME_HDR + len;
			if (buf_room(c, len < BUF_FIRST ? len : BUF_FIRST))
				goto gone;
		}
	} else {
		uint32_t at = c->got - ST_FRAME_HDR, want = c->need - c->got;

		if (buf_room(c, at + want))
			goto gone;
		n = read(fd, c->buf + at, want);
		if (n <= 0)
			goto gone;
		c->got += (uint32_t)n;
	}
	if (c->got < ST_FRAME_HDR || c->got < c->need)
		return 0;
	{
		uint32_t len = c->need - ST_FRAME_HDR;

		if (buf_room(c, len))
			goto gone;
		c->buf[len] = '\0';
		c->got = c->need = 0;
		set->hooks.request(set->hooks.ctx, c, (const char *)c->buf,
				   len);
	}
	if (mmd_client_idle(c))
		client_drop(set, c);
	return 0;
gone:
	if (c->watch_job)
		qb_log(LOG_INFO, "job %u: its client left; the job goes on",
		       c->watch_job);
	client_drop(set, c);
	return 0;
}

static int on_accept(int32_t fd, int32_t revents, void *data)
{
	struct mmd_clients *set = data;
	struct mmd_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

	(void)revents;
	if (cfd < 0)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(cfd);
		return 0;
	}
	c->set = set;
	c->fd = cfd;
	/* unix socket: the kernel says who it is; TCP: nobody until MUNGE */
	if (fd == set->unix_fd &&
	    getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->uid = cred.uid;
		c->gid = cred.gid;
	} else {
		c->uid = c->gid = 65534; /* until its MUNGE credential */
		c->tcp = 1;
	}
	c->next = set->list;
	set->list = c;
	qb_loop_poll_add(set->loop, QB_LOOP_MED, cfd, POLLIN, c, on_client);
	return 0;
}

int mmd_clients_listen(struct mmd_clients *set, qb_loop_t *loop,
		       const st_config_t *cfg, const st_host_t *host,
		       const struct mmd_clients_hooks *hooks, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	*set = (struct mmd_clients){ .loop = loop, .hooks = *hooks,
				     .unix_fd = -1, .tcp_fd = -1 };
	st_manager_socket(cfg, host, set->sock_path, sizeof(set->sock_path));
	if (strlen(set->sock_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: run_dir too long for a socket path",
			 cfg->path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, set->sock_path);
	set->unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(set->sock_path);
	if (set->unix_fd < 0 ||
	    bind(set->unix_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(set->unix_fd, 64) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s (is run_dir "
			 "%s there and writable?)", set->sock_path,
			 strerror(errno), cfg->run_dir);
		return -errno;
	}
	chmod(set->sock_path, 0666); /* who may do what: by SO_PEERCRED */
	qb_loop_poll_add(loop, QB_LOOP_MED, set->unix_fd, POLLIN, set,
			 on_accept);
	if (host->listen[0]) {
		char addr[ST_ADDR_MAX], *port;
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_PASSIVE }, *ai;
		int one = 1;

		strcpy(addr, host->listen);
		port = strrchr(addr, ':');
		if (!port) {
			snprintf(err, errlen, "%s: [manager %s] listen = %s: "
				 "want HOST:PORT", cfg->path, host->name,
				 host->listen);
			return -STORM_ECONFIG;
		}
		*port++ = '\0';
		if (getaddrinfo(addr, port, &hints, &ai)) {
			snprintf(err, errlen, "cannot resolve %s",
				 host->listen);
			return -STORM_ECONFIG;
		}
		set->tcp_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC,
				     0);
		setsockopt(set->tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one,
			   sizeof(one));
		if (set->tcp_fd < 0 ||
		    bind(set->tcp_fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    listen(set->tcp_fd, 64) < 0) {
			snprintf(err, errlen, "cannot listen on %s: %s",
				 host->listen, strerror(errno));
			freeaddrinfo(ai);
			return -errno;
		}
		freeaddrinfo(ai);
		qb_loop_poll_add(loop, QB_LOOP_MED, set->tcp_fd, POLLIN, set,
				 on_accept);
	}
	return 0;
}

void mmd_clients_close(struct mmd_clients *set)
{
	while (set->list)
		client_drop(set, set->list);
	if (set->unix_fd >= 0) {
		close(set->unix_fd);
		unlink(set->sock_path);
	}
	if (set->tcp_fd >= 0)
		close(set->tcp_fd);
	set->unix_fd = set->tcp_fd = -1;
}

void mmd_clients_reap(struct mmd_clients *set)
{
	for (struct mmd_client *c = set->list, *next; c; c = next) {
		next = c->next;
		if (mmd_client_idle(c))
			client_drop(set, c);
	}
}
