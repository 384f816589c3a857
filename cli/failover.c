/*
 * failover.c — libstorm-client (storm_client.h): finding a Machine
 * Manager replica, one request and its reply over the framed protocol
 * (docs/protocol.md), MUNGE over TCP, and riding out a failover: the same
 * request (client id, sequence) goes to the next replica after a broken
 * connection or a go-elsewhere refusal, so it is applied exactly once.
 * stormctl is one user; a web dashboard is another.  It prints nothing:
 * every failure comes back as a code and a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <munge.h>
#include <storm_proto.h>

#include "storm_client.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void stc_init(stc_ctx_t *ctx)
{
	char host[256] = "localhost";
	uint64_t r = 0;

	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	/* The random part keeps two stormctl with the same pid on the same
	 * host (containers) apart in the manager's logs and dedup. */
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		r = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20 ^
		    (uint64_t)getpid() << 40;
	}
	snprintf(ctx->client_id, sizeof(ctx->client_id), "%s:%ld:%016llx",
		 host, (long)getpid(), (unsigned long long)r);
	ctx->seq = 0;
}

/* ---- connecting --------------------------------------------------------- */

static const char *const hint =
	"is the cluster running? start storm-mm, or point stormctl at it "
	"with --socket PATH or --manager HOST:PORT";

static int connect_unix(stc_ctx_t *ctx, const char *path, char *err,
			size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(ctx->endpoint, sizeof(ctx->endpoint), "socket %s", path);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen,
			 "socket path %s is too long (at most %zu bytes); "
			 "use a shorter run_dir or --socket", path,
			 sizeof(sa.sun_path) - 1);
		return -STC_USAGE;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -STC_UNREACH;
	}
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (errno == EINTR)
			continue;
		snprintf(err, errlen,
			 "cannot connect to the manager at %s: %s; %s", path,
			 strerror(errno), hint);
		close(fd);
		return -STC_UNREACH;
	}
	return fd;
}

/* Split "host:port", "[v6]:port" or ":port" (meaning this host).  A wildcard
 * listen address ("0.0.0.0", "::", "*") is reached through loopback. */
static int split_hostport(const char *addr, char *host, size_t hlen,
			  char *port, size_t plen)
{
	const char *colon, *h = addr;
	size_t n;

	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			return -1;
		h = addr + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return -1;
		n = (size_t)(colon - addr);
	}
	if (n >= hlen || strlen(colon + 1) >= plen || colon[1] == '\0')
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	if (!host[0] || !strcmp(host, "*") || !strcmp(host, "0.0.0.0"))
		strcpy(host, "127.0.0.1");
	else if (!strcmp(host, "::"))
		strcpy(host, "::1");
	return 0;
}

/* connect() with the --timeout bound: a manager host that drops packets
 * must not hang stormctl for the kernel's two minutes. */
static int connect_timed(int fd, const struct sockaddr *sa, socklen_t len,
			 int timeout_ms)
{
	int fl = fcntl(fd, F_GETFL), rc, soerr = 0;
	socklen_t sl = sizeof(soerr);
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	rc = connect(fd, sa, len);
	if (rc != 0 && errno != EINPROGRESS)
		return -errno;
	if (rc != 0) {
		do
			rc = poll(&p, 1, timeout_ms);
		while (rc < 0 && errno == EINTR);
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
			return -errno;
		if (soerr)
			return -soerr;
	}
	if (fcntl(fd, F_SETFL, fl) < 0)
		return -errno;
	return 0;
}

static int connect_tcp(stc_ctx_t *ctx, const char *addr, char *err,
		       size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char host[256], port[32];
	int rc, fd = -1, last = ECONNREFUSED;

	snprintf(ctx->endpoint, sizeof(ctx->endpoint), "address %s", addr);
	if (split_hostport(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen,
			 "manager address '%s' is not HOST:PORT", addr);
		return -STC_USAGE;
	}
	hints.ai_family = AF_UNSPEC;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve manager address %s: %s",
			 addr, gai_strerror(rc));
		return -STC_UNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			last = errno;
			continue;
		}
		rc = connect_timed(fd, ai->ai_addr, ai->ai_addrlen,
				   ctx->timeout_ms);
		if (rc == 0)
			break;
		last = -rc;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen,
			 "cannot connect to the manager at %s: %s; %s", addr,
			 strerror(last), hint);
		return -STC_UNREACH;
	}
	return fd;
}

/* Every place a manager replica may answer, in the order tried: what the
 * user named (--socket, --manager, --managers), else, from the
 * configuration, each replica's local socket that exists here, then each
 * replica's TCP listen address. */
static int endpoints(stc_ctx_t *ctx, char *err, size_t errlen)
{
	char cerr[1024];
	st_config_t cfg;
	struct stat st;
	int rc;

	ctx->neps = 0;
#define ADD(u, a) do { if (ctx->neps < STC_MAX_EPS) { \
		ctx->eps[ctx->neps].is_unix = (u); \
		snprintf(ctx->eps[ctx->neps].addr, \
			 sizeof(ctx->eps[0].addr), "%s", (a)); \
		ctx->neps++; } } while (0)
	if (ctx->socket_path)
		ADD(1, ctx->socket_path);
	if (ctx->manager)
		ADD(0, ctx->manager);
	if (ctx->managers) {
		char list[4096], *save = NULL;

		snprintf(list, sizeof(list), "%s", ctx->managers);
		for (char *a = strtok_r(list, ",", &save); a;
		     a = strtok_r(NULL, ",", &save))
			if (a[0])
				ADD(0, a);
	}
	if (ctx->neps)
		return 0;
	rc = st_config_load(ctx->config_path, &cfg, cerr, sizeof(cerr));
	if (rc < 0) {
		if (cerr[0])
			snprintf(err, errlen,
				 "configuration: %s; or reach the manager "
				 "directly with --socket PATH or --manager "
				 "HOST:PORT", cerr);
		else
			snprintf(err, errlen,
				 "cannot read configuration %s: %s; give "
				 "--config FILE, set STORM_CONFIG, or use "
				 "--socket PATH or --manager HOST:PORT",
				 ctx->config_path, storm_strerror(rc));
		return -STC_USAGE;
	}
	for (uint32_t i = 0; i < cfg.nmanagers; i++) {
		char sock[1200];

		st_manager_socket(&cfg, &cfg.managers[i], sock, sizeof(sock));
		if (stat(sock, &st) == 0)
			ADD(1, sock);
	}
	for (uint32_t i = 0; i < cfg.nmanagers; i++)
		if (cfg.managers[i].listen[0])
			ADD(0, cfg.managers[i].listen);
#undef ADD
	if (!ctx->munge_socket[0])
		snprintf(ctx->munge_socket, sizeof(ctx->munge_socket), "%s",
			 cfg.munge_socket);
	if (!ctx->neps) {
		char sock[1200];

		st_manager_socket(&cfg, &cfg.managers[0], sock, sizeof(sock));
		snprintf(ctx->endpoint, sizeof(ctx->endpoint), "socket %s",
			 sock);
		snprintf(err, errlen,
			 "cannot reach the manager: no manager socket exists "
			 "here (%s) and %s names no manager with a listen "
			 "address; %s", sock, ctx->config_path, hint);
		st_config_free(&cfg);
		return -STC_UNREACH;
	}
	st_config_free(&cfg);
	return 0;
}

int stc_connect(stc_ctx_t *ctx, char *err, size_t errlen)
{
	char last[2048] = "";
	int rc = 0;

	if (!ctx->neps) {
		int nunix = 0;

		if ((rc = endpoints(ctx, err, errlen)))
			return rc;
		/* any replica serves: start at a random local one, so that
		 * many stormctl processes spread over the replicas */
		while (nunix < ctx->neps && ctx->eps[nunix].is_unix)
			nunix++;
		if (nunix > 1)
			ctx->ep_next = (int)((unsigned)getpid() % (unsigned)nunix);
	}
	/* from the one that answered last, round the list once */
	for (int i = 0; i < ctx->neps; i++) {
		int k = (ctx->ep_next + i) % ctx->neps;
		const struct stc_ep *e = &ctx->eps[k];

		rc = e->is_unix ? connect_unix(ctx, e->addr, last, sizeof(last))
				: connect_tcp(ctx, e->addr, last, sizeof(last));
		if (rc >= 0) {
			ctx->ep_next = k;
			return rc;
		}
		if (rc == -STC_USAGE)
			break;
	}
	if (ctx->neps > 1)
		snprintf(err, errlen, "none of the %d manager replicas "
			 "answered; the last: %s", ctx->neps, last);
	else
		snprintf(err, errlen, "%s", last);
	return rc;
}

/* Failures after which the same request (same client id and sequence)
 * goes to another replica: it is applied at most once wherever it lands. */
static bool elsewhere(const stc_ctx_t *ctx, int code)
{
	if (code == STC_UNREACH)
		return true;
	return code == STC_FAILED &&
	       (ctx->last_errno == STORM_ENOQUORUM ||
		ctx->last_errno == STORM_ENOTSYNCED ||
		ctx->last_errno == STORM_EUNKNOWN);
}

int stc_request(stc_ctx_t *ctx, json_t *req, int *fdp, json_t **reply,
	       char *err, size_t errlen)
{
	int64_t deadline = now_ms() + ctx->timeout_ms;
	int tries = 0, code;

	for (;;) {
		int fd = stc_connect(ctx, err, errlen), rc;

		if (fd < 0) {
			code = -fd;
		} else if ((rc = stc_send_request(ctx, fd, req)) < 0) {
			code = stc_frame_error(ctx, rc, err, errlen);
			close(fd);
		} else {
			code = stc_recv_reply(ctx, fd, ctx->timeout_ms, reply,
					     err, errlen);
			if (code == STC_OK && fdp) {
				*fdp = fd;
				return code;
			}
			close(fd);
		}
		if (!elsewhere(ctx, code) || now_ms() >= deadline)
			return code;
		/* the next replica; a whole round that failed waits a
		 * little (a view change takes a few ms to hundreds) */
		ctx->ep_next = (ctx->ep_next + 1) % (ctx->neps ? ctx->neps : 1);
		if (++tries % (ctx->neps ? ctx->neps : 1) == 0)
			poll(NULL, 0, 50);
	}
}

/* ---- one request, one reply --------------------------------------------- */

int stc_frame_error(const stc_ctx_t *ctx, int rc, char *err, size_t errlen)
{
	switch (rc) {
	case -ETIMEDOUT:
		snprintf(err, errlen,
			 "no reply from the manager at %s within %d ms; it may "
			 "be overloaded or hung (raise --timeout, or check "
			 "storm-mm's log)", ctx->endpoint, ctx->timeout_ms);
		return STC_UNREACH;
	case -ECONNRESET:
	case -EPIPE:
		snprintf(err, errlen,
			 "lost the manager at %s: it closed the connection "
			 "(did storm-mm stop?)", ctx->endpoint);
		return STC_UNREACH;
	case -STORM_EPROTO:
		snprintf(err, errlen,
			 "bad frame from the manager at %s (is it a storm-mm "
			 "of the same version?)", ctx->endpoint);
		return STC_PROTO;
	case -ENOMEM:
		snprintf(err, errlen, "out of memory");
		return STC_FAILED;
	default:
		snprintf(err, errlen, "talking to the manager at %s: %s",
			 ctx->endpoint, storm_strerror(rc));
		return STC_UNREACH;
	}
}

/* The manager reads at most 16 KiB over TCP before a connection has
 * authenticated: a larger request goes after an "auth" request sealed
 * with its own credential (docs/protocol.md §1.4), and then plain. */
#define AUTH_FIRST_OVER 8192

/* A MUNGE credential whose payload binds text[0 .. n): the SHA-256 of
 * the body and a fresh nonce (docs/protocol.md §2.6).  0 and *cred
 * (malloc'd), or -EACCES with ctx->note saying why. */
static int seal_cred(stc_ctx_t *ctx, const char *text, size_t n,
		     char **cred)
{
	char payload[ST_SEAL_PAYLOAD_LEN + 1];
	uint8_t nonce[ST_SEAL_NONCE_BYTES];
	munge_ctx_t mc;
	munge_err_t e;

	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
		snprintf(ctx->note, sizeof(ctx->note), "cannot draw a nonce "
			 "for a MUNGE credential: %s", strerror(errno));
		return -EACCES;
	}
	if (st_seal_payload(text, n, nonce, payload))
		return -ENOMEM;
	if (!(mc = munge_ctx_create()))
		return -ENOMEM;
	if (ctx->munge_socket[0])
		munge_ctx_set(mc, MUNGE_OPT_SOCKET, ctx->munge_socket);
	e = munge_encode(cred, mc, payload, (int)strlen(payload));
	munge_ctx_destroy(mc);
	if (e != EMUNGE_SUCCESS) {
		free(*cred);
		*cred = NULL;
		snprintf(ctx->note, sizeof(ctx->note), "cannot get a MUNGE "
			 "credential for %.600s: %s (is munged running?)",
			 ctx->endpoint, munge_strerror(e));
		return -EACCES;
	}
	return 0;
}

/* One SEALED frame: the credential and the body text as sent. */
static int send_sealed(stc_ctx_t *ctx, int fd, const char *text)
{
	size_t n = strlen(text);
	char *cred = NULL;
	uint8_t *p = NULL;
	uint32_t len;
	int rc;

	if ((rc = seal_cred(ctx, text, n, &cred)))
		return rc;
	rc = st_seal_encode(cred, text, n, &p, &len);
	free(cred);
	if (rc)
		return rc == -EINVAL ? -EACCES : rc;
	rc = st_frame_send(fd, ST_FRAME_SEALED, p, len);
	free(p);
	return rc;
}

static int auth_first(stc_ctx_t *ctx, int fd, json_t *req)
{
	char *text, err[1024];
	json_t *auth, *reply = NULL;
	int rc;

	auth = json_pack("{s:s, s:O, s:O}", "op", "auth",
			 "client", json_object_get(req, "client"),
			 "seq", json_object_get(req, "seq"));
	text = auth ? json_dumps(auth, JSON_COMPACT) : NULL;
	json_decref(auth);
	if (!text)
		return -ENOMEM;
	rc = send_sealed(ctx, fd, text);
	free(text);
	if (rc)
		return rc;
	rc = stc_recv_reply(ctx, fd, ctx->timeout_ms, &reply, err,
			   sizeof(err));
	json_decref(reply);
	if (rc != STC_OK) {
		snprintf(ctx->note, sizeof(ctx->note), "%s", err);
		return rc == STC_FAILED ? -EACCES : -ECONNRESET;
	}
	return 0;
}

/* The request frame with the inputs' descriptors on its first bytes
 * (docs/protocol.md 5.1: "fds"). */
static int send_with_fds(stc_ctx_t *ctx, int fd, const char *text,
			 size_t n)
{
	union {
		char buf[CMSG_SPACE(STC_MAX_INPUTS * sizeof(int))];
		struct cmsghdr align;
	} u;
	uint8_t hdr[ST_FRAME_HDR];
	struct iovec iov = { .iov_base = hdr, .iov_len = sizeof(hdr) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE((size_t)ctx->ninputs *
							  sizeof(int)) };
	struct cmsghdr *cm;
	ssize_t w;

	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)ctx->ninputs * sizeof(int));
	memcpy(CMSG_DATA(cm), ctx->input_fds,
	       (size_t)ctx->ninputs * sizeof(int));
	st_frame_put_hdr(hdr, ST_FRAME_REQUEST, (uint32_t)n);
	/* the header alone carries them; the rest goes as usual */
	do
		w = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return errno == EPIPE ? -ECONNRESET : -errno;
	for (size_t done = (size_t)w; done < sizeof(hdr); done += (size_t)w) {
		w = send(fd, hdr + done, sizeof(hdr) - done, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w < 0)
			return errno == EPIPE ? -ECONNRESET : -errno;
	}
	for (size_t done = 0; done < n; done += (size_t)w) {
		w = send(fd, text + done, n - done, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w < 0)
			return errno == EPIPE ? -ECONNRESET : -errno;
	}
	return 0;
}

/* Over TCP: "inputs" names each input's size and mode (regular files
 * only: their bytes are sent, not a descriptor). */
static int inputs_json(stc_ctx_t *ctx, json_t *req)
{
	json_t *a = json_array();

	if (!a)
		return -ENOMEM;
	for (int k = 0; k < ctx->ninputs; k++) {
		struct stat st;

		if (fstat(ctx->input_fds[k], &st) < 0 ||
		    !S_ISREG(st.st_mode)) {
			snprintf(ctx->note, sizeof(ctx->note), "input %d (the "
				 "%s) is not a regular file: over TCP only "
				 "regular files are sent", k,
				 k ? "a --file" : "program");
			json_decref(a);
			return -EINVAL;
		}
		json_array_append_new(a, json_pack("{s:I, s:i}", "size",
						   (json_int_t)st.st_size,
						   "mode",
						   (int)(st.st_mode & 0777)));
	}
	json_object_set_new(req, "inputs", a);
	return 0;
}

/* Over TCP, after the request: the inputs' bytes in INPUT frames, as
 * many as "inputs" announced (a file that shrank meanwhile is an error,
 * bytes it grew by are not sent). */
static int send_inputs(stc_ctx_t *ctx, int fd, json_t *req)
{
	enum { CHUNK = 1u << 20 };
	json_t *a = json_object_get(req, "inputs");
	uint8_t *buf = malloc(CHUNK);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (int k = 0; k < ctx->ninputs && !rc; k++) {
		uint64_t size = (uint64_t)json_integer_value(json_object_get(
			json_array_get(a, (size_t)k), "size"));
		uint64_t off = 0;

		while (off < size && !rc) {
			size_t want = size - off < CHUNK ? (size_t)(size - off)
							 : CHUNK;
			ssize_t r = pread(ctx->input_fds[k], buf, want,
					  (off_t)off);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				snprintf(ctx->note, sizeof(ctx->note), "input "
					 "%d: %s", k, r < 0 ? strerror(errno) :
					 "it shrank while being sent");
				rc = r < 0 ? -errno : -EIO;
				break;
			}
			rc = st_frame_send(fd, ST_FRAME_INPUT, buf,
					   (uint32_t)r);
			off += (uint64_t)r;
		}
	}
	free(buf);
	return rc;
}

/* The manager checked the announced inputs (sizes against its cap)
 * and says {"ok": true, "inputs": "send"}: send them.  A refusal
 * instead is kept for stc_recv_reply(). */
static int go_ahead(stc_ctx_t *ctx, int fd, json_t *req)
{
	uint8_t *p = NULL;
	uint32_t len;
	int type, rc = st_frame_recv(fd, ctx->timeout_ms, &type, &p, &len);
	json_t *v;

	if (rc < 0)
		return rc;
	v = type == ST_FRAME_REPLY ? json_loadb((const char *)p, len, 0,
						 NULL) : NULL;
	if (v && json_is_true(json_object_get(v, "ok")) &&
	    !strcmp(json_string_value(json_object_get(v, "inputs")) ?
		    json_string_value(json_object_get(v, "inputs")) : "",
		    "send")) {
		json_decref(v);
		free(p);
		return send_inputs(ctx, fd, req);
	}
	json_decref(v);
	if (type != ST_FRAME_REPLY) {
		free(p);
		return -STORM_EPROTO;
	}
	free(ctx->early);
	ctx->early = p; /* the answer: a refusal, or what it is */
	ctx->early_len = len;
	return 0;
}

int stc_send_request(stc_ctx_t *ctx, int fd, json_t *req)
{
	const char *op;
	char *text;
	size_t n;
	int rc, inputs;

	/* a retry keeps its number: that is what makes it exactly-once */
	if (!json_object_get(req, "seq")) {
		json_object_set_new(req, "client",
				    json_string(ctx->client_id));
		json_object_set_new(req, "seq", json_integer(++ctx->seq));
	}
	json_object_del(req, "fds");
	json_object_del(req, "inputs");
	free(ctx->early);
	ctx->early = NULL;
	if (ctx->ninputs > STC_MAX_INPUTS)
		return -E2BIG;
	op = json_string_value(json_object_get(req, "op"));
	inputs = ctx->ninputs > 0 && op &&
		 (!strcmp(op, "run") || !strcmp(op, "submit"));
	if (inputs) {
		if (strncmp(ctx->endpoint, "address ", 8))
			json_object_set_new(req, "fds",
					    json_integer(ctx->ninputs));
		else if ((rc = inputs_json(ctx, req)))
			return rc;
	}
	text = json_dumps(req, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	n = strlen(text);
	if (n > ST_FRAME_MAX)
		rc = -EMSGSIZE;
	else if (inputs && strncmp(ctx->endpoint, "address ", 8))
		/* the unix socket: the descriptors ride on the request */
		rc = send_with_fds(ctx, fd, text, n);
	else if (inputs) {
		/* TCP: an authenticated connection first (INPUT frames may
		 * be large), then the request and its bytes */
		if (!(rc = auth_first(ctx, fd, req)) &&
		    !(rc = st_frame_send(fd, ST_FRAME_REQUEST, text,
					 (uint32_t)n)))
			rc = go_ahead(ctx, fd, req);
	} else if (strncmp(ctx->endpoint, "address ", 8))
		/* the unix socket: the kernel names the peer */
		rc = st_frame_send(fd, ST_FRAME_REQUEST, text, (uint32_t)n);
	else if (n <= AUTH_FIRST_OVER)
		/* over TCP, sealed with a fresh credential bound to these
		 * very bytes (the cluster takes each credential once) */
		rc = send_sealed(ctx, fd, text);
	else if (!(rc = auth_first(ctx, fd, req)))
		rc = st_frame_send(fd, ST_FRAME_REQUEST, text, (uint32_t)n);
	free(text);
	return rc;
}

int stc_recv_reply(stc_ctx_t *ctx, int fd, int timeout_ms, json_t **reply,
		  char *err, size_t errlen)
{
	json_error_t jerr;
	uint8_t *p = NULL;
	uint32_t len;
	json_t *v, *ok;
	int type, rc;

	if (ctx->early) {
		p = ctx->early;
		len = ctx->early_len;
		type = ST_FRAME_REPLY;
		ctx->early = NULL;
		rc = 0;
	} else {
		rc = st_frame_recv(fd, timeout_ms, &type, &p, &len);
	}
	if (rc < 0)
		return stc_frame_error(ctx, rc, err, errlen);
	if (type != ST_FRAME_REPLY) {
		free(p);
		snprintf(err, errlen,
			 "the manager at %s sent a frame of type %d where a "
			 "reply was due", ctx->endpoint, type);
		return STC_PROTO;
	}
	v = json_loadb((const char *)p, len, 0, &jerr);
	free(p);
	if (!v || !json_is_object(v)) {
		snprintf(err, errlen,
			 "the manager at %s sent a reply that is not a JSON "
			 "object (%s)", ctx->endpoint,
			 v ? "another JSON value" : jerr.text);
		json_decref(v);
		return STC_PROTO;
	}
	ok = json_object_get(v, "ok");
	if (!json_is_boolean(ok)) {
		snprintf(err, errlen,
			 "the manager at %s sent a reply without \"ok\"",
			 ctx->endpoint);
		json_decref(v);
		return STC_PROTO;
	}
	if (!json_is_true(ok)) {
		int64_t e = json_integer_value(json_object_get(v, "errno"));

		ctx->last_errno = (int)e;
		const char *what = json_string_value(json_object_get(v, "error"));

		/* The manager's text already says what, where and what to
		 * do; the number is for scripts (--json) and a fallback. */
		if (what && what[0])
			snprintf(err, errlen, "%s", what);
		else if (e > 0 && e < INT_MAX)
			snprintf(err, errlen, "the manager refused: %s",
				 storm_strerror(-(int)e));
		else
			snprintf(err, errlen, "the manager refused");
		json_decref(v);
		return STC_FAILED;
	}
	*reply = v;
	return STC_OK;
}

int stc_call_soft(stc_ctx_t *ctx, json_t *req, json_t **reply, char *err,
		 size_t errlen)
{
	return stc_request(ctx, req, NULL, reply, err, errlen);
}

