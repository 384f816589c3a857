/*
 * cpg_probe.c — raw corosync CPG, with nothing of Storm's on top: the
 * ceiling the replication benchmark measures Storm against, and the
 * membership clock its fault runs read.
 *
 * Why it exists: Storm's replicated log is totally ordered by CPG
 * (CPG_TYPE_AGREED).  Whatever rate and latency CPG itself reaches on these
 * machines bounds what the replication layer can reach; `ceiling` measures
 * exactly that, the way the replication layer must use CPG (a cap on the
 * messages each sender has in flight, because corosync has no back-pressure
 * and cpg_flow_control_state_get is a stub).  `watch` prints every
 * configuration change with both clocks, so a fault test can subtract the
 * moment it cut a head (tests/harness/headnet prints it) from the moment the
 * survivors saw the head leave.
 *
 * Usage:
 *   cpg-probe ceiling --group G --size BYTES --seconds S [--senders K]
 *                     [--window W] [--wait S]
 *     Joins G and waits (at most --wait s, default 60) until G has K members
 *     (default 1): K such processes, on one corosync or on several heads.
 *     Every member of G counts, so a `watch` must watch another group.
 *     Then, for S seconds, multicasts AGREED messages of BYTES (>= 24) as
 *     fast as it can with at most W (default 64) of its own messages sent
 *     but not yet delivered back to it, counts every agreed delivery (any
 *     sender's) and the send-to-own-delivery latency of its own, and prints
 *     one JSON line:
 *       {"size":B,"senders":K,"window":W,"seconds":S,"sent":n,
 *        "delivered":n,"delivered_per_s":x,"delivered_mb_per_s":x,
 *        "self_latency_us_p50":x,"self_latency_us_p99":x,"try_again":n}
 *     (MB = 10^6 bytes of payload; percentiles are nearest-rank.)
 *   cpg-probe watch --group G
 *     Joins G and prints one JSON line per callback, flushed at once, until
 *     SIGTERM or SIGINT:
 *       {"event":"confchg","real_ms":x,"mono_ms":x,"members":n,
 *        "member_list":[[nodeid,pid],...],"joined":[[nodeid,pid,"join"],...],
 *        "left":[[nodeid,pid,"nodedown"],...]}
 *       {"event":"totem","real_ms":x,"mono_ms":x,"members":n,
 *        "member_list":[nodeid,...],"ring":"nodeid.seq"}
 *     real_ms is CLOCK_REALTIME, mono_ms CLOCK_MONOTONIC, both in ms, read
 *     on entry to the callback.
 *
 * A client reaches the corosync of its own network namespace (libqb IPC is
 * abstract unix sockets): run it as `ip netns exec NS cpg-probe ...`.
 *
 * Key invariant: a message's header (magic, sequence, send time) is written
 * and read field by field at fixed offsets; only the sender reads its send
 * time back, so the clock is always the same process's CLOCK_MONOTONIC.
 *
 * Exit status: 0 success (watch: stopped by a signal); 1 an error (named on
 * stderr: corosync unreachable, a CPG call failed, too few members in time);
 * 2 bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* signalfd, getopt_long */
#endif

#include <corosync/corotypes.h>
#include <corosync/cpg.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Constants and state
 * ------------------------------------------------------------------------ */

#define PROBE_MAGIC 0x43504750u /* "CPGP" */
#define PROBE_HDR_SIZE 24       /* magic u32, pad u32, seq u64, send_ns u64 */
#define PROBE_MAX_SIZE 1047552  /* corosync's largest unfragmented message */
#define PROBE_MAX_SAMPLES (64u * 1024 * 1024)

enum { EXIT_USAGE = 2 };

/* One probe process: the CPG connection and what the callbacks count. */
struct probe {
	cpg_handle_t handle;
	struct cpg_name group;
	uint32_t my_nodeid;
	uint32_t my_pid;
	size_t members;         /* entries of the last confchg's member list */
	int err;                /* first error inside a callback, 0 if none */

	/* ceiling */
	bool measuring;
	uint64_t sent;          /* own messages multicast */
	uint64_t self_delivered;/* own messages delivered back (ever) */
	uint64_t delivered;     /* anyone's messages delivered while measuring */
	uint64_t *lat_ns;       /* own latencies while measuring */
	size_t nlat, cap_lat;

	/* watch */
	bool print;             /* print callbacks (watch) */
};

/* ------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------ */

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof v);
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof v);
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static const char *reason_name(uint32_t reason)
{
	switch (reason) {
	case CPG_REASON_JOIN: return "join";
	case CPG_REASON_LEAVE: return "leave";
	case CPG_REASON_NODEDOWN: return "nodedown";
	case CPG_REASON_NODEUP: return "nodeup";
	case CPG_REASON_PROCDOWN: return "procdown";
	default: return "undefined";
	}
}

/* Parses a decimal in [lo, hi] into *out; false if it is not one. */
static bool parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile q (0..100] of n sorted values, in µs. */
static double pct_us(const uint64_t *v, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return 0.0;
	rank = (size_t)((q / 100.0) * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1e3;
}

/* ------------------------------------------------------------------------
 * CPG callbacks
 * ------------------------------------------------------------------------ */

static struct probe *probe_of(cpg_handle_t handle)
{
	void *ctx = NULL;

	cpg_context_get(handle, &ctx);
	return ctx;
}

static void on_deliver(cpg_handle_t handle, const struct cpg_name *group,
		       uint32_t nodeid, uint32_t pid, void *msg, size_t len)
{
	struct probe *p = probe_of(handle);
	const unsigned char *m = msg;

	(void)group;
	if (p->measuring)
		p->delivered++;
	if (nodeid != p->my_nodeid || pid != p->my_pid)
		return;
	if (len < PROBE_HDR_SIZE || get_u32(m) != PROBE_MAGIC)
		return;
	p->self_delivered++;
	if (!p->measuring || p->nlat >= PROBE_MAX_SAMPLES)
		return;
	if (p->nlat == p->cap_lat) {
		size_t cap = p->cap_lat ? p->cap_lat * 2 : 65536;
		uint64_t *n = realloc(p->lat_ns, cap * sizeof *n);

		if (!n) {
			if (!p->err)
				p->err = -ENOMEM;
			return;
		}
		p->lat_ns = n;
		p->cap_lat = cap;
	}
	p->lat_ns[p->nlat++] = mono_ns() - get_u64(m + 16);
}

static void print_addrs(const struct cpg_address *a, size_t n, bool reason)
{
	for (size_t i = 0; i < n; i++) {
		printf("%s[%" PRIu32 ",%" PRIu32, i ? "," : "", a[i].nodeid,
		       a[i].pid);
		if (reason)
			printf(",\"%s\"", reason_name(a[i].reason));
		putchar(']');
	}
}

static void on_confchg(cpg_handle_t handle, const struct cpg_name *group,
		       const struct cpg_address *members, size_t nmembers,
		       const struct cpg_address *left, size_t nleft,
		       const struct cpg_address *joined, size_t njoined)
{
	uint64_t real = clock_ns(CLOCK_REALTIME), mono = mono_ns();
	struct probe *p = probe_of(handle);

	(void)group;
	p->members = nmembers;
	if (!p->print)
		return;
	printf("{\"event\":\"confchg\",\"real_ms\":%.3f,\"mono_ms\":%.3f,"
	       "\"members\":%zu,\"member_list\":[",
	       (double)real / 1e6, (double)mono / 1e6, nmembers);
	print_addrs(members, nmembers, false);
	printf("],\"joined\":[");
	print_addrs(joined, njoined, true);
	printf("],\"left\":[");
	print_addrs(left, nleft, true);
	printf("]}\n");
	if (fflush(stdout) != 0 && !p->err)
		p->err = -EIO;
}

static void on_totem(cpg_handle_t handle, struct cpg_ring_id ring,
		     uint32_t nmembers, const uint32_t *members)
{
	uint64_t real = clock_ns(CLOCK_REALTIME), mono = mono_ns();
	struct probe *p = probe_of(handle);

	if (!p->print)
		return;
	printf("{\"event\":\"totem\",\"real_ms\":%.3f,\"mono_ms\":%.3f,"
	       "\"members\":%" PRIu32 ",\"member_list\":[",
	       (double)real / 1e6, (double)mono / 1e6, nmembers);
	for (uint32_t i = 0; i < nmembers; i++)
		printf("%s%" PRIu32, i ? "," : "", members[i]);
	printf("],\"ring\":\"%" PRIx32 ".%" PRIx64 "\"}\n", ring.nodeid,
	       ring.seq);
	if (fflush(stdout) != 0 && !p->err)
		p->err = -EIO;
}

/* ------------------------------------------------------------------------
 * Connection
 * ------------------------------------------------------------------------ */

/* Connects, sets the context, learns our id and joins group; 0 or -1. */
static int probe_open(struct probe *p, const char *group)
{
	cpg_model_v1_data_t model = {
		.model = CPG_MODEL_V1,
		.cpg_deliver_fn = on_deliver,
		.cpg_confchg_fn = on_confchg,
		.cpg_totem_confchg_fn = on_totem,
		.flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF,
	};
	unsigned int nodeid;
	cs_error_t rc;
	size_t len = strlen(group);

	if (len == 0 || len >= CPG_MAX_NAME_LENGTH) {
		fprintf(stderr, "cpg-probe: group name must be 1..%d bytes\n",
			CPG_MAX_NAME_LENGTH - 1);
		return -1;
	}
	memcpy(p->group.value, group, len);
	p->group.length = (uint32_t)len;
	p->my_pid = (uint32_t)getpid();

	rc = cpg_model_initialize(&p->handle, CPG_MODEL_V1,
				  (cpg_model_data_t *)&model, p);
	if (rc != CS_OK) {
		fprintf(stderr, "cpg-probe: cannot connect to corosync: %s "
			"(is one running in this network namespace?)\n",
			cs_strerror(rc));
		return -1;
	}
	rc = cpg_local_get(p->handle, &nodeid);
	if (rc != CS_OK) {
		fprintf(stderr, "cpg-probe: cpg_local_get: %s\n",
			cs_strerror(rc));
		return -1;
	}
	p->my_nodeid = nodeid;
	/* TRY_AGAIN while corosync synchronizes after a view change. */
	for (int i = 0; i < 1000; i++) {
		rc = cpg_join(p->handle, &p->group);
		if (rc != CS_ERR_TRY_AGAIN)
			break;
		usleep(10000);
	}
	if (rc != CS_OK) {
		fprintf(stderr, "cpg-probe: cpg_join %s: %s\n", group,
			cs_strerror(rc));
		return -1;
	}
	return 0;
}

static void probe_close(struct probe *p)
{
	if (p->handle) {
		cpg_leave(p->handle, &p->group);
		cpg_finalize(p->handle);
		p->handle = 0;
	}
	free(p->lat_ns);
	p->lat_ns = NULL;
}

/* A signalfd for SIGINT and SIGTERM (blocked from now on); fd or -1. */
static int stop_signals_fd(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		perror("cpg-probe: signalfd");
	return fd;
}

/*
 * Waits up to timeout_ms for the CPG fd or the signal fd and dispatches
 * what arrived.  Returns 1 if a stop signal came, 0 otherwise, -1 on an
 * error (printed).
 */
static int pump(struct probe *p, int cpg_fd, int sig_fd, int timeout_ms)
{
	struct pollfd fds[2] = {
		{ .fd = cpg_fd, .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
	};
	cs_error_t rc;
	int n = poll(fds, 2, timeout_ms);

	if (n < 0) {
		if (errno == EINTR)
			return 0;
		perror("cpg-probe: poll");
		return -1;
	}
	if (fds[1].revents & POLLIN)
		return 1;
	if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
		rc = cpg_dispatch(p->handle, CS_DISPATCH_ALL);
		if (rc != CS_OK && rc != CS_ERR_TRY_AGAIN) {
			fprintf(stderr, "cpg-probe: cpg_dispatch: %s "
				"(corosync gone?)\n", cs_strerror(rc));
			return -1;
		}
	}
	if (p->err) {
		fprintf(stderr, "cpg-probe: %s\n", strerror(-p->err));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Subcommands
 * ------------------------------------------------------------------------ */

static void usage(int status)
{
	fprintf(stderr,
		"usage: cpg-probe ceiling --group G --size BYTES --seconds S\n"
		"                         [--senders K] [--window W] [--wait S]\n"
		"       cpg-probe watch --group G\n"
		"BYTES is %d..%d; K = members of G to wait for, each a sender\n"
		"(default 1); W = own messages in flight (default 64).\n"
		"exit status: 0 ok, 1 failure, 2 usage\n",
		PROBE_HDR_SIZE, PROBE_MAX_SIZE);
	exit(status);
}

static int cmd_ceiling(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "size", required_argument, NULL, 'b' },
		{ "seconds", required_argument, NULL, 's' },
		{ "senders", required_argument, NULL, 'k' },
		{ "window", required_argument, NULL, 'w' },
		{ "wait", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *group = NULL;
	double size = -1, seconds = -1, senders = 1, window = 64, wait_s = 60;
	struct probe p = { 0 };
	unsigned char *buf = NULL;
	uint64_t t0, t_end, deadline, try_again = 0;
	int c, cpg_fd, sig_fd, r, status = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;

		switch (c) {
		case 'g': group = optarg; break;
		case 'b': ok = parse_num(optarg, PROBE_HDR_SIZE, PROBE_MAX_SIZE,
					 &size); break;
		case 's': ok = parse_num(optarg, 0.001, 86400, &seconds); break;
		case 'k': ok = parse_num(optarg, 1, 1000, &senders); break;
		case 'w': ok = parse_num(optarg, 1, 1000000, &window); break;
		case 't': ok = parse_num(optarg, 0, 86400, &wait_s); break;
		default: ok = false; break;
		}
		if (!ok) {
			fprintf(stderr, "cpg-probe: ceiling: bad argument\n");
			usage(EXIT_USAGE);
		}
	}
	if (!group || size < 0 || seconds < 0 || optind != argc) {
		fprintf(stderr, "cpg-probe: ceiling: --group, --size and "
			"--seconds are required\n");
		usage(EXIT_USAGE);
	}

	buf = calloc(1, (size_t)size);
	sig_fd = stop_signals_fd();
	if (!buf || sig_fd < 0 || probe_open(&p, group) < 0)
		goto out;
	if (cpg_fd_get(p.handle, &cpg_fd) != CS_OK) {
		fprintf(stderr, "cpg-probe: cpg_fd_get failed\n");
		goto out;
	}

	/* Wait for K members: every sender starts at the same confchg. */
	deadline = mono_ns() + (uint64_t)(wait_s * 1e9);
	while (p.members < (size_t)senders) {
		uint64_t now = mono_ns();

		if (now >= deadline) {
			fprintf(stderr, "cpg-probe: %zu of %.0f members in "
				"%s after %.0f s\n", p.members, senders, group,
				wait_s);
			goto out;
		}
		r = pump(&p, cpg_fd, sig_fd,
			 (int)((deadline - now) / 1000000 + 1));
		if (r != 0)
			goto out;
	}

	t0 = mono_ns();
	deadline = t0 + (uint64_t)(seconds * 1e9);
	p.measuring = true;
	put_u32(buf, PROBE_MAGIC);
	put_u32(buf + 4, 0);
	for (;;) {
		struct iovec iov = { .iov_base = buf, .iov_len = (size_t)size };
		uint64_t now = mono_ns();
		bool blocked = false;
		int timeout_ms;

		if (now >= deadline)
			break;
		while (p.sent - p.self_delivered < (uint64_t)window) {
			cs_error_t rc;

			put_u64(buf + 8, p.sent);
			put_u64(buf + 16, mono_ns());
			rc = cpg_mcast_joined(p.handle, CPG_TYPE_AGREED, &iov, 1);
			if (rc == CS_ERR_TRY_AGAIN) {
				/* corosync's queue is full: let it drain. */
				try_again++;
				blocked = true;
				break;
			}
			if (rc != CS_OK) {
				fprintf(stderr, "cpg-probe: cpg_mcast_joined: "
					"%s\n", cs_strerror(rc));
				goto out;
			}
			p.sent++;
		}
		timeout_ms = blocked ? 1 : (int)((deadline - now) / 1000000 + 1);
		r = pump(&p, cpg_fd, sig_fd, timeout_ms);
		if (r < 0)
			goto out;
		if (r > 0)
			break; /* stopped early: report what was measured */
	}
	t_end = mono_ns();
	p.measuring = false;

	{
		double el = (double)(t_end - t0) / 1e9;
		double rate = (double)p.delivered / el;

		qsort(p.lat_ns, p.nlat, sizeof *p.lat_ns, cmp_u64);
		printf("{\"size\":%.0f,\"senders\":%.0f,\"window\":%.0f,"
		       "\"seconds\":%.3f,\"sent\":%" PRIu64 ",\"delivered\":%"
		       PRIu64 ",\"delivered_per_s\":%.1f,"
		       "\"delivered_mb_per_s\":%.3f,"
		       "\"self_latency_us_p50\":%.1f,"
		       "\"self_latency_us_p99\":%.1f,\"try_again\":%" PRIu64
		       "}\n",
		       size, senders, window, el, p.sent, p.delivered, rate,
		       rate * size / 1e6, pct_us(p.lat_ns, p.nlat, 50),
		       pct_us(p.lat_ns, p.nlat, 99), try_again);
		status = fflush(stdout) == 0 ? 0 : 1;
	}
out:
	probe_close(&p);
	free(buf);
	return status;
}

static int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	const char *group = NULL;
	struct probe p = { .print = true };
	int c, cpg_fd, sig_fd, r, status = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'g')
			usage(EXIT_USAGE);
		group = optarg;
	}
	if (!group || optind != argc) {
		fprintf(stderr, "cpg-probe: watch: --group is required\n");
		usage(EXIT_USAGE);
	}
	sig_fd = stop_signals_fd();
	if (sig_fd < 0 || probe_open(&p, group) < 0)
		goto out;
	if (cpg_fd_get(p.handle, &cpg_fd) != CS_OK) {
		fprintf(stderr, "cpg-probe: cpg_fd_get failed\n");
		goto out;
	}
	while ((r = pump(&p, cpg_fd, sig_fd, -1)) == 0)
		;
	if (r > 0)
		status = 0;
out:
	probe_close(&p);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage(EXIT_USAGE);
	/* subcommand options start after the subcommand */
	if (strcmp(argv[1], "ceiling") == 0)
		return cmd_ceiling(argc - 1, argv + 1);
	if (strcmp(argv[1], "watch") == 0)
		return cmd_watch(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fprintf(stderr, "cpg-probe: raw corosync CPG ceiling and "
			"membership clock (see bench/replication/cpg_probe.c)\n");
		usage(0);
	} else {
		fprintf(stderr, "cpg-probe: unknown command '%s'\n", argv[1]);
	}
	usage(EXIT_USAGE);
}
