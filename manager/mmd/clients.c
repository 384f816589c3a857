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
#include <sys/resource.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "clients.h"
#include "clock.h"

/* A request's buffer grows with the bytes that arrive, from this much:
 * a header that announces 16 MiB costs nothing until they come. */
#define BUF_FIRST 4096u

static int on_client(int32_t fd, int32_t revents, void *data);

static uint64_t now_ms(void)
{
	return mmd_mono_ns() / 1000000u;
}

int mmd_client_idle(const struct mmd_client *c)
{
	return c->closing && !c->watch_job && !c->wait_up && !c->wait_job &&
	       !c->out_len;
}

static void close_fds(struct mmd_client *c)
{
	for (uint32_t i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	c->nfds = 0;
	c->fds_over = 0;
}

/* read() of the socket; on the unix socket, the descriptors that come
 * with the bytes are kept (MMD_CLIENT_FDS at most; the rest closed). */
static ssize_t rd(struct mmd_client *c, void *p, size_t n)
{
	union {
		char buf[CMSG_SPACE(MMD_CLIENT_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = p, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t r;

	if (c->tcp)
		return read(c->fd, p, n);
	r = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
	if (r < 0)
		return r;
	if (mh.msg_flags & MSG_CTRUNC)
		c->fds_over = 1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;
		int fd;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			if (c->nfds < MMD_CLIENT_FDS) {
				c->fds[c->nfds++] = fd;
			} else {
				close(fd);
				c->fds_over = 1;
			}
		}
	}
	return r;
}

static void client_drop(struct mmd_clients *set, struct mmd_client *c)
{
	for (struct mmd_client **pp = &set->list; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	set->hooks.gone(set->hooks.ctx, c);
	set->n--;
	qb_loop_poll_del(set->loop, c->fd);
	close(c->fd);
	close_fds(c);
	free(c->buf);
	free(c->out);
	free(c);
}

/* Write what the socket takes now; wait for POLLOUT for the rest. */
static void client_flush(struct mmd_client *c)
{
	size_t done = 0;

	if (c->out_len)
		c->out_ms = c->out_ms ? c->out_ms : now_ms();
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
	if (done || !c->out_len)
		c->out_ms = c->out_len ? now_ms() : 0;
	qb_loop_poll_mod(c->set->loop, QB_LOOP_MED, c->fd,
			 (c->paused ? 0 : POLLIN) | (c->out_len ? POLLOUT : 0),
			 c, on_client);
}

void mmd_client_pause(struct mmd_client *c, int paused)
{
	if (c->paused == !!paused)
		return;
	c->paused = !!paused;
	qb_loop_poll_mod(c->set->loop, QB_LOOP_MED, c->fd,
			 (c->paused ? 0 : POLLIN) | (c->out_len ? POLLOUT : 0),
			 c, on_client);
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
	if (type == ST_FRAME_REPLY) {
		c->inflight = 0; /* its request is answered */
		if (c->lat) {
			mmd_phist_add(c->lat, mmd_mono_ns() - c->req_ns);
			c->lat = NULL;
		}
	}
	c->last_ms = now_ms();
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

/* Room for need bytes of payload (+ a NUL): the buffer doubles as bytes
 * arrive, never past the frame's own length (+ 1). */
static int buf_room(struct mmd_client *c, uint32_t need)
{
	uint32_t cap = c->buf_cap ? c->buf_cap : BUF_FIRST;
	uint8_t *b;

	if (need + 1 <= c->buf_cap)
		return 0;
	while (cap < need + 1)
		cap = cap > UINT32_MAX / 2 ? need + 1 : cap * 2;
	if (cap > c->need - ST_FRAME_HDR + 1)
		cap = c->need - ST_FRAME_HDR + 1;
	if (cap < need + 1)
		cap = need + 1;
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

	(void)fd; /* c->fd */
	if (revents & POLLOUT) {
		client_flush(c);
		if (!(revents & POLLIN))
			return 0;
	}
	if (c->closing && !c->watch_job)
		goto gone; /* refused or done: nothing more is read */
	if (c->paused) { /* its STDIN frame waits: not read meanwhile */
		if (revents & (POLLHUP | POLLERR))
			goto gone;
		return 0;
	}
	if (c->got < ST_FRAME_HDR) {
		n = rd(c, c->hdr + c->got, ST_FRAME_HDR - c->got);
		if (n <= 0)
			goto gone;
		if (!c->got)
			c->frame_ms = now_ms();
		c->got += (uint32_t)n;
		if (c->got == ST_FRAME_HDR) {
			int type;
			uint32_t len;

			if (st_frame_parse_hdr(c->hdr, &type, &len) ||
			    (type != ST_FRAME_REQUEST &&
			     type != ST_FRAME_SEALED &&
			     type != ST_FRAME_INPUT &&
			     type != ST_FRAME_STDIN)) {
				mmd_client_reply_err(c, EPROTO, "not a Storm "
						     "request frame (protocol "
						     "%d)", ST_FRAME_VERSION);
				goto gone;
			}
			if ((type == ST_FRAME_INPUT) !=
			    (c->input_left > 0) ||
			    (type == ST_FRAME_INPUT &&
			     (!len || len > c->input_left))) {
				mmd_client_reply_err(c, EPROTO, "%s", c->
					input_left ? "INPUT frames of "
					"1 byte or more, no more than the "
					"request announced, were due "
					"(docs/protocol.md 2.7)" :
					"an INPUT frame without a request "
					"that announced inputs "
					"(docs/protocol.md 2.7)");
				goto gone;
			}
			if (type == ST_FRAME_STDIN &&
			    (!c->stdin_job || len > ST_STDIN_FRAME_MAX)) {
				mmd_client_reply_err(c, EPROTO, "%s",
					c->stdin_job ? "a STDIN frame over "
					"64 KiB (docs/protocol.md 2.8)" :
					"a STDIN frame without a run that "
					"forwards stdin (docs/protocol.md "
					"2.8)");
				goto gone;
			}
			if (c->inflight && type != ST_FRAME_INPUT &&
			    type != ST_FRAME_STDIN) {
				mmd_client_reply_err(c, EBUSY, "one request at "
						     "a time on a connection: "
						     "wait for the reply");
				goto gone;
			}
			if (c->tcp && !c->authed &&
			    len > MMD_UNAUTH_FRAME_MAX) {
				mmd_client_reply_err(c, EACCES, "a request of "
					"%u bytes over TCP before its "
					"credential checked out (at most %u): "
					"authenticate first (op auth; "
					"stormctl does)", len,
					MMD_UNAUTH_FRAME_MAX);
				goto gone;
			}
			c->type = type;
			c->need = ST_FRAME_HDR + len;
			if (buf_room(c, len < BUF_FIRST ? len : BUF_FIRST))
				goto gone;
		}
	} else {
		uint32_t at = c->got - ST_FRAME_HDR, want = c->need - c->got;

		/* at most what doubling the buffer holds: 16 MiB announced
		 * costs 16 MiB only once 8 MiB have come */
		if (at + 1 >= c->buf_cap && buf_room(c, c->buf_cap * 2))
			goto gone;
		if (want > c->buf_cap - 1 - at)
			want = c->buf_cap - 1 - at;
		n = rd(c, c->buf + at, want);
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
		c->frame_ms = 0;
		c->last_ms = now_ms();
		if (c->type == ST_FRAME_INPUT) {
			c->input_left -= len;
			set->hooks.input(set->hooks.ctx, c, c->buf, len);
		} else if (c->type == ST_FRAME_STDIN) {
			set->hooks.stdin_frame(set->hooks.ctx, c, c->buf, len);
		} else {
			c->inflight = 1;
			set->hooks.request(set->hooks.ctx, c, c->type,
					   (const char *)c->buf, len);
			close_fds(c); /* those the request did not take */
		}
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

/* Refuse a connection before it is one: an error frame, then close. */
static void refuse(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void refuse(int fd, const char *fmt, ...)
{
	char msg[400], body[600];
	uint8_t frame[ST_FRAME_HDR + sizeof(body)];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(body, sizeof(body), "{\"ok\": false, \"error\": \"%s\", "
		     "\"errno\": %d}", msg, EAGAIN);
	if (n > 0 && (size_t)n < sizeof(body)) {
		st_frame_put_hdr(frame, ST_FRAME_REPLY, (uint32_t)n);
		memcpy(frame + ST_FRAME_HDR, body, (size_t)n);
		ssize_t w = send(fd, frame, ST_FRAME_HDR + (size_t)n,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		(void)w; /* best effort: it is going anyway */
	}
	close(fd);
}

/* Connections of uid (authenticated), and unauthenticated TCP ones from
 * addr. */
static void count(const struct mmd_clients *set, uint32_t uid,
		  const char *addr, uint32_t *of_uid, uint32_t *of_addr)
{
	*of_uid = *of_addr = 0;
	for (const struct mmd_client *c = set->list; c; c = c->next) {
		if (c->authed && c->uid == uid)
			(*of_uid)++;
		if (addr && c->tcp && !c->authed && !strcmp(c->addr, addr))
			(*of_addr)++;
	}
}

static int on_accept(int32_t fd, int32_t revents, void *data)
{
	struct mmd_clients *set = data;
	const st_config_t *cfg = set->cfg;
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	struct mmd_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char addr[64] = "";
	uint32_t of_uid, of_addr;
	int cfd = accept4(fd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC);
	int is_unix = fd == set->unix_fd;

	(void)revents;
	if (cfd < 0 && (errno == EMFILE || errno == ENFILE) &&
	    set->spare_fd >= 0) {
		/* out of descriptors: the connection would stay pending and
		 * the listener readable for ever (a busy loop); take it with
		 * the spare descriptor and close it */
		close(set->spare_fd);
		cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd >= 0)
			close(cfd);
		set->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		qb_log(LOG_WARNING, "client refused: out of file descriptors "
		       "(%u connections)", set->n);
		return 0;
	}
	if (cfd < 0)
		return 0;
	/* unix socket: the kernel says who it is; TCP: nobody until MUNGE */
	if (is_unix) {
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			close(cfd);
			return 0;
		}
	} else if (sa.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr,
			  addr, sizeof(addr));
	} else if (sa.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr,
			  addr, sizeof(addr));
	}
	count(set, is_unix ? cred.uid : UINT32_MAX, is_unix ? NULL : addr,
	      &of_uid, &of_addr);
	if (set->n >= cfg->clients_max &&
	    !(is_unix && cred.uid == 0 &&
	      set->n < cfg->clients_max + cfg->clients_root_reserved)) {
		qb_log(LOG_WARNING, "client refused: %u connections (the "
		       "clients_max)", set->n);
		refuse(cfd, "too many connections to this manager (%u, the "
		       "clients_max): try again later", set->n);
		return 0;
	}
	if (is_unix && cred.uid != 0 && of_uid >= cfg->clients_per_user) {
		refuse(cfd, "uid %u has %u connections to this manager (the "
		       "clients_per_user): close some", (unsigned)cred.uid,
		       of_uid);
		return 0;
	}
	if (!is_unix && of_addr >= cfg->clients_per_address) {
		refuse(cfd, "%s has %u connections waiting to authenticate "
		       "(the clients_per_address): try again later", addr,
		       of_addr);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(cfd);
		return 0;
	}
	c->set = set;
	c->fd = cfd;
	c->id = ++set->next_id;
	c->since_ms = c->last_ms = now_ms();
	if (is_unix) {
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->authed = 1;
	} else {
		c->uid = c->gid = 65534; /* until its MUNGE credential */
		c->tcp = 1;
		snprintf(c->addr, sizeof(c->addr), "%s", addr);
	}
	c->next = set->list;
	set->list = c;
	set->n++;
	qb_loop_poll_add(set->loop, QB_LOOP_MED, cfd, POLLIN, c, on_client);
	return 0;
}

int mmd_client_authed(struct mmd_client *c, uint32_t uid, uint32_t gid)
{
	uint32_t of_uid, of_addr;

	count(c->set, uid, NULL, &of_uid, &of_addr);
	if (uid != 0 && of_uid >= c->set->cfg->clients_per_user) {
		mmd_client_reply_err(c, EUSERS, "uid %u has %u connections to "
				     "this manager (the clients_per_user): "
				     "close some", uid, of_uid);
		c->closing = 1;
		return -EUSERS;
	}
	c->uid = uid;
	c->gid = gid;
	c->authed = 1;
	return 0;
}

struct mmd_client *mmd_clients_find(struct mmd_clients *set, uint64_t id)
{
	for (struct mmd_client *c = set->list; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

int mmd_clients_listen(struct mmd_clients *set, qb_loop_t *loop,
		       const st_config_t *cfg, const st_host_t *host,
		       const struct mmd_clients_hooks *hooks, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	*set = (struct mmd_clients){ .loop = loop, .cfg = cfg,
				     .hooks = *hooks, .unix_fd = -1,
				     .tcp_fd = -1 };
	set->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	{
		/* room for every connection the caps allow, and the rest */
		struct rlimit rl;
		rlim_t want = (rlim_t)cfg->clients_max +
			      cfg->clients_root_reserved + 256;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
			rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
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
	if (set->spare_fd >= 0)
		close(set->spare_fd);
	set->unix_fd = set->tcp_fd = set->spare_fd = -1;
}

/* Why c is past a deadline, or NULL. */
static const char *overdue(const struct mmd_client *c, uint64_t now)
{
	const st_config_t *cfg = c->set->cfg;

	if (c->out_len && c->out_ms && now - c->out_ms > cfg->client_idle_ms)
		return "its replies not read";
	if (c->frame_ms && now - c->frame_ms > cfg->client_frame_ms)
		return "a request frame not received whole in time";
	if (c->tcp && !c->authed && !c->inflight &&
	    now - c->since_ms > cfg->client_frame_ms)
		return "no credential in time";
	if (!c->inflight && !c->watch_job && !c->wait_up && !c->wait_job &&
	    !c->out_len && now - c->last_ms > cfg->client_idle_ms)
		return "idle";
	return NULL;
}

void mmd_clients_reap(struct mmd_clients *set)
{
	uint64_t now = now_ms();

	for (struct mmd_client *c = set->list, *next; c; c = next) {
		const char *why = overdue(c, now);

		next = c->next;
		if (why && (!c->closing || c->out_len)) {
			qb_log(LOG_INFO, "client (uid %u%s%s) closed: %s",
			       c->uid, c->tcp ? " from " : "", c->addr, why);
			if (!c->out_len)
				mmd_client_reply_err(c, ETIMEDOUT, "closed by "
						     "the manager: %s", why);
			c->closing = 1;
			c->out_len = 0; /* not waited for */
			c->watch_job = c->wait_up = c->wait_job = 0;
		}
		if (mmd_client_idle(c))
			client_drop(set, c);
	}
}
