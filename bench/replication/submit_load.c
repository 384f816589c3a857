/*
 * submit_load.c — `submit-load`, the load generator of the replication
 * benchmark and of the fault tests: C client threads that each keep one
 * write (a submit, or a cancel of their own job) outstanding against the
 * storm-mm replicas, fail over between them the way stormctl does, and
 * report throughput, latency and the longest stretch of time in which no
 * write was acknowledged at all (the failover gap).
 *
 * Why it exists: stormctl is one request per process, far too slow and too
 * noisy to load a replicated manager or to time a failover.  This speaks
 * the client protocol (docs/protocol.md) directly, with proto/'s framing.
 *
 * Invariant: a request keeps its (client, seq) — and its exact bytes —
 * through every retry on every replica, so the replicas apply it at most
 * once; and it is logged (--log) once, when and only when a replica
 * acknowledged it.  A fault test can therefore check that every logged line
 * was applied exactly once.
 *
 * Usage:
 *   submit-load --managers EP,EP,... --clients C --seconds S [--ranks 1]
 *               [--program /bin/sleep] [--arg 3600] [--cancel-every K]
 *               [--log FILE] [--timeout-ms 5000] [--name-prefix load]
 *   EP = unix:/path/to/sock | tcp:HOST:PORT   (HOST may be [v6])
 *
 *   Client k (0 .. C-1) is "load-<pid>-<k>", numbers its requests 1, 2, ...
 *   and sends request after request for S seconds (S may have a fraction),
 *   each on its own connection (protocol §1.2), to the endpoints in turn
 *   starting at endpoint k % n (each request to the endpoint after the one
 *   that answered the last, so every live replica takes writes).  A
 *   request is a "submit" of a job named "<prefix>-<k>-<seq>" with argv
 *   [program, arg] (no arg if --arg is "") and --ranks ranks; with --cancel-every K (K >= 2), every K-th request is
 *   instead a "cancel" of the client's last acknowledged, not yet cancelled
 *   job (a submit if it has none).  A submit hands over its program as
 *   stormctl does on the unix socket (docs/protocol.md 5.1): "fds": 1 and
 *   the program's descriptor (opened once, at the start) passed with the
 *   request on every attempt.  (tcp: endpoints get plain REQUEST frames:
 *   neither a MUNGE seal nor INPUT frames, so a manager refuses writes
 *   there; the benchmark uses unix: ones.)
 *
 *   Retried on the next endpoint, same bytes, after: a failed connect, send
 *   or receive, no reply within --timeout-ms, or a refusal with errno
 *   STORM_ENOQUORUM, STORM_ENOTSYNCED or STORM_EUNKNOWN; after a whole round
 *   of endpoints has failed, 10 ms pause.  Any other refusal fails the
 *   request (counted, and shown on stderr).  A request still unanswered
 *   --timeout-ms after the end of the run is abandoned: counted as failed
 *   (its outcome is unknown; stderr names its client and seq).
 *
 *   --log FILE gets one line per acknowledged request, "client seq op job"
 *   (op: submit | cancel).  stdout gets one JSON object:
 *     {"clients":C,"seconds":S,"managers":n,"acked":N,"acked_per_s":x,
 *      "p50_ms":x,"p99_ms":x,"max_ms":x,"failed":F,"abandoned":A,
 *      "retries":R,"cancels":K,"max_gap_ms":x,"gap_at_ms":x,"start_ms":x}
 *   acked counts every acknowledgement, including those of requests that
 *   were in flight at the end; acked_per_s only those within the S seconds.
 *   Latency runs from the first send of a request to its acknowledgement,
 *   across retries (percentiles nearest-rank; null when nothing was acked).
 *   The gap is the longest interval without any acknowledgement within
 *   [start + 100 ms, end - 100 ms] (the window's edges count as its ends);
 *   gap_at_ms and start_ms are CLOCK_MONOTONIC ms, so a fault test can set
 *   them beside the moment it killed a replica.  retries counts sends after
 *   a request's first.
 *
 *   Exit status: 0 nothing failed, 1 a request failed or was abandoned (or
 *   the log could not be written), 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <storm_proto.h>

#define NS_PER_MS INT64_C(1000000)
#define NS_PER_S INT64_C(1000000000)
#define MAX_EPS 64
#define MAX_CLIENTS 4096
#define EDGE_NS (100 * NS_PER_MS) /* start and end left out of the gap */
#define ROUND_PAUSE_NS (10 * NS_PER_MS)
#define FAILS_SHOWN 20            /* failure lines on stderr, then a count */

/* ---- options and the run ------------------------------------------------ */

struct endpoint {
	char text[1100]; /* as given, for messages */
	struct sockaddr_storage sa;
	socklen_t salen;
};

struct opts {
	struct endpoint eps[MAX_EPS];
	int neps;
	int clients;
	double seconds;
	long ranks;
	const char *program;
	const char *arg;
	const char *log_path;
	const char *prefix;
	long cancel_every; /* 0: never */
	int spread;        /* rotate replicas per request (default), or with
			    * --sticky start at the first and keep the one
			    * that answers */
	int timeout_ms;
	char cwd[4096];
	int prog_fd;       /* the program, opened once: a submit's input */
};

/* What the client threads share.  Everything but the lock-protected part
 * is written before the threads start and only read afterwards. */
struct run {
	const struct opts *o;
	long pid;
	int64_t start_ns, end_ns, hard_ns; /* CLOCK_MONOTONIC */
	pthread_mutex_t lock;              /* guards log, fails_shown, stderr */
	FILE *log;
	int log_err;                       /* first errno writing the log */
	uint64_t fails_shown;
};

/* A growable array of ns values, owned by one client thread. */
struct series {
	int64_t *v;
	size_t n, cap;
};

/* One client: touched only by its own thread until that thread is joined. */
struct client {
	struct run *run;
	int k;
	char id[48];
	int64_t seq;
	int64_t live_job; /* last acked submit not yet cancelled, or 0 */
	int ep;           /* endpoint of the next attempt */
	struct series lat, acks;
	uint64_t failed, abandoned, retries, cancels;
	pthread_t thread;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NS_PER_S),
			       .tv_nsec = (long)(ns % NS_PER_S) };

	while (ns > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void out_of_memory(void)
{
	fputs("submit-load: out of memory\n", stderr);
	exit(1);
}

static void series_add(struct series *s, int64_t v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		int64_t *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			out_of_memory();
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

/* ---- usage -------------------------------------------------------------- */

static const char usage_text[] =
	"usage: submit-load --managers EP,EP,... --clients C --seconds S\n"
	"                   [--ranks N] [--program ABS_PATH] [--arg ARG]\n"
	"                   [--cancel-every K] [--log FILE] [--timeout-ms MS]\n"
	"                   [--name-prefix P] [--sticky]\n"
	"  EP = unix:/path/to/socket | tcp:HOST:PORT\n"
	"  defaults: --ranks 1 --program /bin/sleep --arg 3600 "
	"--timeout-ms 5000 --name-prefix load; --cancel-every 0 (never)\n";

static _Noreturn void usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static _Noreturn void usage(const char *fmt, ...)
{
	va_list ap;

	fputs("submit-load: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs(usage_text, stderr);
	exit(2);
}

/* A whole decimal number in [min, max], or exit 2 naming the option. */
static long number(const char *opt, const char *text, long min, long max)
{
	char *end;
	long v;

	if (!text || text[0] < '0' || text[0] > '9')
		usage("%s: '%s' is not a number (want %ld to %ld)", opt,
		      text ? text : "", min, max);
	errno = 0;
	v = strtol(text, &end, 10);
	if (*end != '\0')
		usage("%s: '%s' is not a number (want %ld to %ld)", opt, text,
		      min, max);
	if (errno == ERANGE || v < min || v > max)
		usage("%s: %s is out of range (%ld to %ld)", opt, text, min,
		      max);
	return v;
}

/* "unix:/path" or "tcp:HOST:PORT" ("[v6]:PORT"); TCP names are resolved
 * here, once, so no thread ever waits on a resolver. */
static void parse_endpoint(const char *text, struct endpoint *e)
{
	snprintf(e->text, sizeof(e->text), "%s", text);
	if (!strncmp(text, "unix:", 5)) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&e->sa;
		const char *path = text + 5;

		if (!path[0] || strlen(path) >= sizeof(sun->sun_path))
			usage("--managers: '%s': the socket path must be 1 to "
			      "%zu bytes", text, sizeof(sun->sun_path) - 1);
		memset(&e->sa, 0, sizeof(e->sa));
		sun->sun_family = AF_UNIX;
		memcpy(sun->sun_path, path, strlen(path) + 1);
		e->salen = (socklen_t)sizeof(*sun);
	} else if (!strncmp(text, "tcp:", 4)) {
		struct addrinfo hints = { .ai_family = AF_UNSPEC,
					  .ai_socktype = SOCK_STREAM };
		struct addrinfo *res;
		const char *addr = text + 4, *colon, *h = addr;
		char host[256], port[32];
		size_t hn;
		int rc;

		if (addr[0] == '[') {
			const char *close = strchr(addr, ']');

			colon = close && close[1] == ':' ? close + 1 : NULL;
			h = addr + 1;
			hn = close ? (size_t)(close - h) : 0;
		} else {
			colon = strrchr(addr, ':');
			hn = colon ? (size_t)(colon - addr) : 0;
		}
		if (!colon || !hn || hn >= sizeof(host) || !colon[1] ||
		    strlen(colon + 1) >= sizeof(port))
			usage("--managers: '%s' is not tcp:HOST:PORT", text);
		memcpy(host, h, hn);
		host[hn] = '\0';
		strcpy(port, colon + 1);
		rc = getaddrinfo(host, port, &hints, &res);
		if (rc != 0)
			usage("--managers: cannot resolve '%s': %s", text,
			      gai_strerror(rc));
		memcpy(&e->sa, res->ai_addr, res->ai_addrlen);
		e->salen = res->ai_addrlen;
		freeaddrinfo(res);
	} else {
		usage("--managers: '%s' is neither unix:PATH nor "
		      "tcp:HOST:PORT", text);
	}
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "managers", required_argument, NULL, 'm' },
		{ "clients", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "ranks", required_argument, NULL, 'n' },
		{ "program", required_argument, NULL, 'p' },
		{ "arg", required_argument, NULL, 'a' },
		{ "cancel-every", required_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "name-prefix", required_argument, NULL, 'P' },
		{ "sticky", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *managers = NULL, *seconds = NULL;
	char *end;
	int c;

	*o = (struct opts){ .ranks = 1, .program = "/bin/sleep",
			    .arg = "3600", .prefix = "load",
			    .timeout_ms = 5000, .spread = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': managers = optarg; break;
		case 'S': o->spread = 0; break;
		case 'c': o->clients = (int)number("--clients", optarg, 1,
						    MAX_CLIENTS); break;
		case 's': seconds = optarg; break;
		case 'n': o->ranks = number("--ranks", optarg, 1, 1000000);
			break;
		case 'p': o->program = optarg; break;
		case 'a': o->arg = optarg; break;
		case 'k': o->cancel_every = number("--cancel-every", optarg, 0,
						   LONG_MAX); break;
		case 'l': o->log_path = optarg; break;
		case 't': o->timeout_ms = (int)number("--timeout-ms", optarg,
						       1, 3600000); break;
		case 'P': o->prefix = optarg; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default:
			usage("%s: unknown option, or it lacks its value",
			      argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage("unexpected operand '%s'", argv[optind]);
	if (!managers || !o->clients || !seconds)
		usage("--managers, --clients and --seconds are required");

	errno = 0;
	o->seconds = strtod(seconds, &end);
	if (seconds[0] < '0' || seconds[0] > '9' || *end || errno ||
	    !isfinite(o->seconds) || o->seconds <= 0 || o->seconds > 86400)
		usage("--seconds: '%s' is not a duration (more than 0, at "
		      "most 86400; fractions allowed)", seconds);
	if (o->cancel_every == 1)
		usage("--cancel-every: 1 would leave nothing to cancel "
		      "(want 0 for never, or 2 and more)");
	if (o->program[0] != '/')
		usage("--program: '%s' must be an absolute path (the manager "
		      "does not search PATH)", o->program);
	if (!getcwd(o->cwd, sizeof(o->cwd)))
		strcpy(o->cwd, "/");

	{
		char list[8192], *save = NULL;

		if (strlen(managers) >= sizeof(list))
			usage("--managers: the list is too long");
		strcpy(list, managers);
		for (char *t = strtok_r(list, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			if (o->neps == MAX_EPS)
				usage("--managers: at most %d endpoints",
				      MAX_EPS);
			parse_endpoint(t, &o->eps[o->neps++]);
		}
		if (!o->neps)
			usage("--managers: no endpoint given");
	}
}

/* ---- one attempt: connect, send, read the reply ------------------------- */

enum outcome { ACKED, RETRY, FAILED };

static bool elsewhere(json_int_t e)
{
	return e == STORM_ENOQUORUM || e == STORM_ENOTSYNCED ||
	       e == STORM_EUNKNOWN;
}

/* connect() within timeout_ms, for unix sockets as for TCP: a replica
 * whose listen backlog is full (EAGAIN) or whose host drops packets must
 * cost one attempt, never a thread.  @return fd or -errno. */
static int dial(const struct endpoint *e, int timeout_ms)
{
	struct pollfd p = { .events = POLLOUT };
	int fd, rc, soerr = 0;
	socklen_t sl = sizeof(soerr);

	fd = socket(e->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)&e->sa, e->salen);
	if (rc != 0 && errno == EINPROGRESS) {
		p.fd = fd;
		do
			rc = poll(&p, 1, timeout_ms);
		while (rc < 0 && errno == EINTR);
		if (rc == 0)
			errno = ETIMEDOUT;
		else if (rc > 0 &&
			 getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0)
			errno = soerr;
		rc = errno ? -1 : 0;
	}
	/* st_frame_* want a blocking socket (a small request always fits
	 * a fresh socket's buffer; the reply is read under a timeout) */
	if (rc != 0 || fcntl(fd, F_SETFL, 0) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

/* The request frame; with in >= 0, that descriptor rides on its first
 * bytes (SCM_RIGHTS, docs/protocol.md 5.1: "fds").  @return 0 or -errno. */
static int send_request(int fd, const char *text, size_t len, int in)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	uint8_t hdr[ST_FRAME_HDR];
	struct iovec iov = { .iov_base = hdr, .iov_len = sizeof(hdr) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	size_t done;
	ssize_t w;

	if (in < 0)
		return st_frame_send(fd, ST_FRAME_REQUEST, text, (uint32_t)len);
	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &in, sizeof(int));
	st_frame_put_hdr(hdr, ST_FRAME_REQUEST, (uint32_t)len);
	do
		w = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	/* the rest of the header, then the body, as plain bytes */
	for (done = (size_t)w; done < sizeof(hdr) + len; done += (size_t)w) {
		const char *p = done < sizeof(hdr)
					? (const char *)hdr + done
					: text + (done - sizeof(hdr));
		size_t n = done < sizeof(hdr) ? sizeof(hdr) - done
					      : sizeof(hdr) + len - done;

		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			w = 0;
		else if (w < 0)
			return -errno;
	}
	return 0;
}

/* Send text to e, wait at most timeout_ms for the reply.  ACKED with *job,
 * RETRY (go to the next replica) or FAILED; err says what happened.  in:
 * the descriptor passed with it on a unix socket, or -1. */
static enum outcome attempt(const struct endpoint *e, const char *text,
			    size_t len, int in, int timeout_ms, int64_t *job,
			    char *err, size_t errlen)
{
	json_t *v = NULL, *ok;
	json_error_t jerr;
	uint8_t *p = NULL;
	uint32_t plen;
	enum outcome out;
	int fd, type, rc;

	fd = dial(e, timeout_ms);
	if (fd < 0) {
		snprintf(err, errlen, "connecting to %s: %s", e->text,
			 storm_strerror(fd));
		return RETRY;
	}
	rc = send_request(fd, text, len,
			  e->sa.ss_family == AF_UNIX ? in : -1);
	if (rc == 0)
		rc = st_frame_recv(fd, timeout_ms, &type, &p, &plen);
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", e->text,
			 rc == -ETIMEDOUT ? "no reply within --timeout-ms"
					  : storm_strerror(rc));
		return RETRY;
	}
	if (type == ST_FRAME_REPLY)
		v = json_loadb((const char *)p, plen, 0, &jerr);
	free(p);
	ok = json_object_get(v, "ok");
	if (!json_is_object(v) || !json_is_boolean(ok)) {
		snprintf(err, errlen, "%s: the reply is not a protocol-1 "
			 "REPLY with \"ok\"", e->text);
		out = FAILED;
	} else if (json_is_true(ok)) {
		json_t *j = json_object_get(v, "job");

		out = json_is_integer(j) && json_integer_value(j) > 0 ? ACKED
								      : FAILED;
		if (out == ACKED)
			*job = (int64_t)json_integer_value(j);
		else
			snprintf(err, errlen, "%s: an acknowledgement "
				 "without a job id", e->text);
	} else {
		json_t *en = json_object_get(v, "errno");
		json_int_t n = json_is_integer(en) ? json_integer_value(en) : 0;
		const char *what = json_string_value(json_object_get(v,
								     "error"));

		out = elsewhere(n) ? RETRY : FAILED;
		snprintf(err, errlen, "%s refused: %s (errno %" JSON_INTEGER_FORMAT
			 ")", e->text, what ? what : "no reason given", n);
	}
	json_decref(v);
	return out;
}

/* ---- a client ----------------------------------------------------------- */

static void show_failure(struct client *c, int64_t seq, const char *op,
			 const char *why)
{
	struct run *r = c->run;

	pthread_mutex_lock(&r->lock);
	if (r->fails_shown++ < FAILS_SHOWN)
		fprintf(stderr, "submit-load: %s seq %" PRId64 " %s: %s\n",
			c->id, seq, op, why);
	pthread_mutex_unlock(&r->lock);
}

static void log_ack(struct client *c, int64_t seq, const char *op,
		    int64_t job)
{
	struct run *r = c->run;

	if (!r->log)
		return;
	pthread_mutex_lock(&r->lock);
	if (fprintf(r->log, "%s %" PRId64 " %s %" PRId64 "\n", c->id, seq, op,
		    job) < 0 && !r->log_err)
		r->log_err = errno ? errno : EIO;
	pthread_mutex_unlock(&r->lock);
}

/* The request's bytes, made once: a retry must be the same request. */
static char *build_request(struct client *c, int64_t seq, int64_t cancel)
{
	const struct opts *o = c->run->o;
	json_t *req, *argv;
	char name[512];
	char *text;

	if (cancel) {
		req = json_pack("{s:s, s:s, s:I, s:I}", "op", "cancel",
				"client", c->id, "seq", (json_int_t)seq,
				"job", (json_int_t)cancel);
	} else {
		snprintf(name, sizeof(name), "%s-%d-%" PRId64, o->prefix, c->k,
			 seq);
		argv = o->arg[0] ? json_pack("[s, s]", o->program, o->arg)
				 : json_pack("[s]", o->program);
		/* batch output thrown away: the load is the manager's */
		req = json_pack("{s:s, s:s, s:I, s:i, s:{s:s, s:I, s:o, "
				"s:[], s:[], s:s, s:s, s:s}}", "op", "submit",
				"client", c->id, "seq", (json_int_t)seq,
				"fds", 1, "job", "name", name, "ranks",
				(json_int_t)o->ranks, "argv", argv, "env",
				"files", "cwd", o->cwd, "stdout", "/dev/null",
				"stderr", "/dev/null");
	}
	text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!text)
		out_of_memory();
	return text;
}

/* One request from first send to acknowledgement, failure or
 * abandonment.  Never runs past r->hard_ns (plus one short pause). */
static void one_request(struct client *c)
{
	struct run *r = c->run;
	const struct opts *o = r->o;
	int64_t seq = ++c->seq, job = 0, first = now_ns();
	int64_t cancel = o->cancel_every && seq % o->cancel_every == 0
				 ? c->live_job : 0;
	const char *op = cancel ? "cancel" : "submit";
	char *text = build_request(c, seq, cancel);
	size_t len = strlen(text);
	char err[1024] = "never sent (the run was over)";
	enum outcome out = RETRY;

	for (int tries = 0;; tries++) {
		int64_t left = r->hard_ns - now_ns();
		int wait_ms;

		if (tries) {
			c->ep = (c->ep + 1) % o->neps;
			if (tries % o->neps == 0) { /* a whole round failed */
				sleep_ns(left < ROUND_PAUSE_NS ? left
							       : ROUND_PAUSE_NS);
				left = r->hard_ns - now_ns();
			}
		}
		if (left <= 0)
			break;
		if (tries)
			c->retries++;
		wait_ms = (int)((left + NS_PER_MS - 1) / NS_PER_MS);
		if (wait_ms > o->timeout_ms)
			wait_ms = o->timeout_ms;
		out = attempt(&o->eps[c->ep], text, len,
			      cancel ? -1 : o->prog_fd, wait_ms, &job, err,
			      sizeof(err));
		if (out != RETRY)
			break;
	}
	free(text);
	/* the next request goes to the next replica (load on all of them);
	 * --sticky: it stays where this one was answered */
	if (o->spread)
		c->ep = (c->ep + 1) % o->neps;

	if (out == ACKED) {
		int64_t t = now_ns();

		series_add(&c->lat, t - first);
		series_add(&c->acks, t);
		log_ack(c, seq, op, job);
		if (cancel) {
			c->cancels++;
			c->live_job = 0;
		} else {
			c->live_job = job;
		}
		return;
	}
	c->failed++;
	if (cancel)
		c->live_job = 0; /* not ours to cancel again */
	if (out == RETRY) {
		char why[1200];

		c->abandoned++;
		snprintf(why, sizeof(why), "abandoned, outcome unknown (last "
			 "attempt: %s)", err);
		show_failure(c, seq, op, why);
	} else {
		show_failure(c, seq, op, err);
	}
}

static void *client_main(void *arg)
{
	struct client *c = arg;

	while (now_ns() < c->run->end_ns)
		one_request(c);
	return NULL;
}

/* ---- results ------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n). */
static int64_t pct(const int64_t *v, size_t n, double p)
{
	size_t r = (size_t)(p * (double)n);

	if ((double)r < p * (double)n)
		r++; /* ceil, without libm */

	return v[r ? r - 1 : 0];
}

static void print_ms_or_null(const char *key, const int64_t *v, size_t n,
			     double p)
{
	if (n)
		printf(",\"%s\":%.3f", key, (double)pct(v, n, p) / 1e6);
	else
		printf(",\"%s\":null", key);
}

/* The longest interval without an acknowledgement within the window
 * [lo, hi]; acks sorted.  *at gets where it starts. */
static int64_t longest_gap(const int64_t *acks, size_t n, int64_t lo,
			   int64_t hi, int64_t *at)
{
	int64_t prev = lo, best = 0;

	*at = lo;
	if (hi <= lo)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		int64_t t = i < n ? acks[i] : hi;

		if (t < lo)
			continue;
		if (t > hi)
			t = hi;
		if (t - prev > best) {
			best = t - prev;
			*at = prev;
		}
		prev = t;
		if (t == hi)
			break;
	}
	return best;
}

static struct series merge(struct client *cl, int n, bool latencies)
{
	struct series all = { 0 };

	for (int i = 0; i < n; i++) {
		const struct series *s = latencies ? &cl[i].lat : &cl[i].acks;

		for (size_t j = 0; j < s->n; j++)
			series_add(&all, s->v[j]);
	}
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), cmp_i64);
	return all;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static struct opts o;
	struct run r = { .o = &o, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct client *cl;
	struct series lat, acks;
	uint64_t failed = 0, abandoned = 0, retries = 0, cancels = 0;
	size_t in_time = 0;
	int64_t gap, gap_at;
	int rc;

	parse_args(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	o.prog_fd = open(o.program, O_RDONLY | O_CLOEXEC);
	if (o.prog_fd < 0) {
		fprintf(stderr, "submit-load: --program: cannot open %s: %s\n",
			o.program, strerror(errno));
		return 2;
	}
	if (o.log_path) {
		r.log = fopen(o.log_path, "w");
		if (!r.log) {
			fprintf(stderr, "submit-load: --log: cannot open %s: "
				"%s\n", o.log_path, strerror(errno));
			return 2;
		}
	}
	cl = calloc((size_t)o.clients, sizeof(*cl));
	if (!cl)
		out_of_memory();
	r.pid = (long)getpid();
	r.start_ns = now_ns();
	r.end_ns = r.start_ns + (int64_t)(o.seconds * (double)NS_PER_S);
	r.hard_ns = r.end_ns + (int64_t)o.timeout_ms * NS_PER_MS;
	for (int k = 0; k < o.clients; k++) {
		struct client *c = &cl[k];

		c->run = &r;
		c->k = k;
		c->ep = o.spread ? k % o.neps : 0;
		snprintf(c->id, sizeof(c->id), "load-%ld-%d", r.pid, k);
		rc = pthread_create(&c->thread, NULL, client_main, c);
		if (rc != 0) {
			fprintf(stderr, "submit-load: starting client %d: "
				"%s\n", k, strerror(rc));
			exit(1); /* the others are bounded; no result */
		}
	}
	for (int k = 0; k < o.clients; k++) {
		pthread_join(cl[k].thread, NULL);
		failed += cl[k].failed;
		abandoned += cl[k].abandoned;
		retries += cl[k].retries;
		cancels += cl[k].cancels;
	}
	if (r.fails_shown > FAILS_SHOWN)
		fprintf(stderr, "submit-load: %" PRIu64 " more failures not "
			"shown\n", r.fails_shown - FAILS_SHOWN);
	if (r.log && (fclose(r.log) != 0 || r.log_err)) {
		fprintf(stderr, "submit-load: --log: writing %s: %s\n",
			o.log_path, strerror(r.log_err ? r.log_err : errno));
		failed++;
	}

	lat = merge(cl, o.clients, true);
	acks = merge(cl, o.clients, false);
	while (in_time < acks.n && acks.v[in_time] <= r.end_ns)
		in_time++;
	gap = longest_gap(acks.v, acks.n, r.start_ns + EDGE_NS,
			  r.end_ns - EDGE_NS, &gap_at);

	printf("{\"clients\":%d,\"seconds\":%g,\"managers\":%d,\"acked\":%zu,"
	       "\"acked_per_s\":%.1f", o.clients, o.seconds, o.neps, acks.n,
	       (double)in_time / o.seconds);
	print_ms_or_null("p50_ms", lat.v, lat.n, 0.50);
	print_ms_or_null("p99_ms", lat.v, lat.n, 0.99);
	print_ms_or_null("max_ms", lat.v, lat.n, 1.0);
	printf(",\"failed\":%" PRIu64 ",\"abandoned\":%" PRIu64
	       ",\"retries\":%" PRIu64 ",\"cancels\":%" PRIu64
	       ",\"max_gap_ms\":%.3f,\"gap_at_ms\":%.3f,\"start_ms\":%.3f}\n",
	       failed, abandoned, retries, cancels, (double)gap / 1e6,
	       (double)gap_at / 1e6, (double)r.start_ns / 1e6);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "submit-load: writing stdout: %s\n",
			strerror(errno));
		return 1;
	}
	for (int k = 0; k < o.clients; k++) {
		free(cl[k].lat.v);
		free(cl[k].acks.v);
	}
	free(cl);
	close(o.prog_fd);
	free(lat.v);
	free(acks.v);
	return failed ? 1 : 0;
}
