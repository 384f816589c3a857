/*
 * bench_primitives.c — storm-bench-primitives: figures for the three
 * mechanisms, one JSON line per invocation (bench/run builds the table).
 *
 *   (each takes --auth 1: every message authenticated by a cluster key)
 *   caw    --provider P --nodes N --iters K   COMPARE-AND-WRITE latency
 *   xfer   --provider P --nodes N --bytes B --iters K   XFER bandwidth
 *   ts     --provider P --nodes N             stabilisation after a kill
 *   idle   --provider P --nodes N --seconds S CPU of a quiet machine
 *   ts-sim --nodes N --fanout F               Ts on the in-process machine
 *
 * Each libfabric run forks N node processes of this same program (node
 * mode, see node_main) through the test harness, which kills them all at
 * the end.  Node 0 is the membership root and does the measuring; the
 * others serve until node 0 multicasts "stop" to them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sp_cluster.h"
#include "storm_primitives.h"

#define EV_LOCAL 0
#define EV_REMOTE 1
#define EV_STOP 2
#define GA_VAR 0
#define GA_WVAR 8
#define GA_STOP 64
#define GA_DATA 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i];
}

static const char *arg(int argc, char **argv, const char *name,
		       const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return def;
}

static long argl(int argc, char **argv, const char *name, long def)
{
	const char *v = arg(argc, argv, name, NULL);

	return v ? strtol(v, NULL, 10) : def;
}

static void die(const char *what, int rc, const char *err)
{
	fprintf(stderr, "storm-bench-primitives: %s: %s%s%s\n", what,
		storm_strerror(rc), err && *err ? ": " : "", err ? err : "");
	exit(1);
}

/* ---- node mode -------------------------------------------------------------- */

static void stop_others(sp_world_t *w, sp_nodeset_t *others)
{
	int64_t one = 1;
	int rc;

	if (sp_nodeset_count(others) == 0)
		return;
	rc = sp_xfer_and_signal(w, others, &one, sizeof(one), GA_STOP,
				EV_LOCAL, EV_STOP, NULL, 0);
	if (rc == 0)
		sp_test_event(w, EV_LOCAL, 10000);
}

static void root_caw(sp_world_t *w, sp_nodeset_t *all, long iters)
{
	uint64_t *t = calloc((size_t)iters, sizeof(*t));
	uint64_t *tw = calloc((size_t)iters, sizeof(*tw));
	long wi = iters / 4 > 0 ? iters / 4 : 1;

	for (long i = 0; i < 200; i++)
		sp_compare_and_write(w, all, GA_VAR, SP_CMP_GE, 0, SP_NO_WRITE,
				     0, 10000);
	for (long i = 0; i < iters; i++) {
		uint64_t t0 = now_ns();
		int rc = sp_compare_and_write(w, all, GA_VAR, SP_CMP_GE, 0,
					      SP_NO_WRITE, 0, 10000);

		t[i] = now_ns() - t0;
		if (rc != 1)
			die("caw", rc < 0 ? rc : -EPROTO, "unexpected result");
	}
	for (long i = 0; i < wi; i++) {
		uint64_t t0 = now_ns();
		int rc = sp_compare_and_write(w, all, GA_VAR, SP_CMP_GE, 0,
					      GA_WVAR, i, 10000);

		tw[i] = now_ns() - t0;
		if (rc != 1)
			die("caw write", rc < 0 ? rc : -EPROTO, NULL);
	}
	printf("{\"median_us\":%.2f,\"p99_us\":%.2f,\"write_median_us\":%.2f}\n",
	       pct(t, (size_t)iters, 0.5) / 1e3, pct(t, (size_t)iters, 0.99) / 1e3,
	       pct(tw, (size_t)wi, 0.5) / 1e3);
	free(t);
	free(tw);
}

static void root_xfer(sp_world_t *w, sp_nodeset_t *others, long bytes,
		      long iters)
{
	uint8_t *buf = malloc((size_t)bytes);
	uint64_t *t = calloc((size_t)iters, sizeof(*t));
	char err[256];
	double med;

	for (long i = 0; i < bytes; i++)
		buf[i] = (uint8_t)i;
	for (long i = -3; i < iters; i++) {
		uint64_t t0 = now_ns();
		int rc = sp_xfer_and_signal(w, others, buf, (size_t)bytes,
					    GA_DATA, EV_LOCAL, EV_REMOTE, err,
					    sizeof(err));

		if (rc)
			die("xfer", rc, err);
		rc = sp_test_event(w, EV_LOCAL, 30000);
		if (rc)
			die("xfer completion", rc, NULL);
		if (i >= 0)
			t[i] = now_ns() - t0;
	}
	med = pct(t, (size_t)iters, 0.5);
	printf("{\"mbs\":%.1f,\"median_ms\":%.3f}\n", (double)bytes / med * 1e3,
	       med / 1e6);
	free(buf);
	free(t);
}

static void root_ts(sp_world_t *w)
{
	sp_view_info_t vi;
	uint64_t e0;

	sp_view(w, &vi, NULL);
	e0 = vi.epoch;
	printf("READY %" PRIu64 "\n", now_ns());
	fflush(stdout);
	if (sp_view_wait(w, e0 + 1, 30000))
		die("ts", -ETIMEDOUT, "no view change after the kill");
	sp_view(w, &vi, NULL);
	printf("{\"stabilize_ns\":%" PRIu64 ",\"seen_ns\":%" PRIu64
	       ",\"height\":%u}\n",
	       vi.stabilize_ns, now_ns(), vi.height);
}

static int node_main(int argc, char **argv)
{
	sp_config_t *cfg;
	sp_world_t *w;
	sp_nodeset_t *all, *others;
	char err[512];
	const char *mode = arg(argc, argv, "--mode", "caw");
	long hb = argl(argc, argv, "--hb", 250);
	int rc;

	rc = spc_node_config(&argc, argv, &cfg, err, sizeof(err));
	if (rc)
		die("arguments", rc, err);
	sp_config_set_gmem(cfg, (size_t)argl(argc, argv, "--bytes", 0) +
					GA_DATA + 4096,
			   8);
	sp_config_set_fanout(cfg, (uint32_t)argl(argc, argv, "--fanout", 8));
	sp_config_set_chunk(cfg, (size_t)argl(argc, argv, "--chunk", 256 << 10));
	if (arg(argc, argv, "--staging", NULL))
		sp_config_set_staging(cfg, (size_t)argl(argc, argv, "--staging",
							0));
	sp_config_set_liveness(cfg, (uint32_t)hb, (uint32_t)hb * 5, 20000);
	if (argl(argc, argv, "--auth", 0)) {
		/* every message MAC'd (a fixed key: the cost is measured,
		 * not the secret) */
		uint8_t key[SP_AUTH_KEY_BYTES];

		memset(key, 0x5a, sizeof(key));
		sp_config_set_auth_key(cfg, key, sizeof(key));
	}
	rc = sp_open(cfg, &w, err, sizeof(err));
	sp_config_destroy(cfg);
	if (rc)
		die("open", rc, err);
	sp_nodeset_create(sp_node_count(w), &all);
	sp_nodeset_create(sp_node_count(w), &others);
	sp_nodeset_add_range(all, 0, sp_node_count(w) - 1);
	sp_nodeset_copy(others, all);
	sp_nodeset_del(others, 0);
	if (sp_node_id(w) != 0) {
		if (strcmp(mode, "idle") == 0 || strcmp(mode, "ts") == 0) {
			printf("READY\n");
			fflush(stdout);
		}
		rc = sp_test_event(w, EV_STOP, 600000);
		sp_close(w);
		sp_nodeset_destroy(all);
		sp_nodeset_destroy(others);
		return rc == 0 ? 0 : 1;
	}
	if (strcmp(mode, "caw") == 0)
		root_caw(w, all, argl(argc, argv, "--iters", 1000));
	else if (strcmp(mode, "xfer") == 0)
		root_xfer(w, others, argl(argc, argv, "--bytes", 1 << 20),
			  argl(argc, argv, "--iters", 20));
	else if (strcmp(mode, "ts") == 0) {
		root_ts(w);
		sp_view_info_t vi;
		sp_view(w, &vi, others);
		sp_nodeset_del(others, 0);
	} else if (strcmp(mode, "idle") == 0) {
		printf("READY\n");
		fflush(stdout);
		sp_test_event(w, EV_STOP, 600000); /* killed by the parent */
	}
	fflush(stdout);
	stop_others(w, others);
	sp_close(w);
	sp_nodeset_destroy(all);
	sp_nodeset_destroy(others);
	return 0;
}

/* ---- driver mode ------------------------------------------------------------- */

static char *self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return NULL;
	path[n] = '\0';
	return path;
}

/* Wait until node i's output contains text (bounded). */
static char *await_output(spc_cluster_t *c, uint32_t i, const char *text,
			  int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000u;

	for (;;) {
		char *out = spc_output(c, i);
		int st;

		if (out && strstr(out, text))
			return out;
		free(out);
		if (now_ns() > end)
			return NULL;
		if (spc_wait(c, i, 5, &st) == 0) {
			out = spc_output(c, i);
			if (out && strstr(out, text))
				return out;
			fprintf(stderr, "node %u exited (%d): %s\n", i, st,
				out ? out : "");
			free(out);
			return NULL;
		}
	}
}

static uint64_t cpu_ticks(pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	p = strrchr(buf, ')');
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			&ut, &st) == 2)
		return ut + st;
	return 0;
}

static int run_cluster(const char *mode, int argc, char **argv)
{
	const char *prov = arg(argc, argv, "--provider", "tcp");
	uint32_t n = (uint32_t)argl(argc, argv, "--nodes", 4);
	char *extra[32];
	int k = 0, rc = 1, st;
	spc_cluster_t *c;
	char *out = NULL, *json;
	static const char *pass[] = {"--iters", "--bytes", "--fanout",
				     "--chunk", "--hb", "--staging", "--auth"};

	extra[k++] = "--mode";
	extra[k++] = (char *)mode;
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		const char *v = arg(argc, argv, pass[i], NULL);

		if (v) {
			extra[k++] = (char *)pass[i];
			extra[k++] = (char *)v;
		}
	}
	if (strcmp(mode, "xfer") == 0 && !arg(argc, argv, "--bytes", NULL)) {
		extra[k++] = "--bytes";
		extra[k++] = "1048576";
	}
	if (strcmp(mode, "ts") == 0 && !arg(argc, argv, "--hb", NULL)) {
		extra[k++] = "--hb";
		extra[k++] = "20";
	}
	extra[k] = NULL;
	if (spc_start(self_exe(), prov, n, extra, &c)) {
		fprintf(stderr, "cannot start %u nodes\n", n);
		return 1;
	}
	if (strcmp(mode, "idle") == 0) {
		long secs = argl(argc, argv, "--seconds", 5);
		uint64_t t0 = 0, t1 = 0;

		for (uint32_t i = 0; i < n; i++) {
			char *o = await_output(c, i, "READY", 30000);

			if (!o)
				goto out;
			free(o);
		}
		for (uint32_t i = 0; i < n; i++)
			t0 += cpu_ticks(spc_pid(c, i));
		/* the measurement interval itself: nothing to wait for */
		sleep((unsigned)secs);
		for (uint32_t i = 0; i < n; i++)
			t1 += cpu_ticks(spc_pid(c, i));
		printf("{\"cpu_pct_one_core\":%.3f}\n",
		       (double)(t1 - t0) * 100.0 /
			       ((double)sysconf(_SC_CLK_TCK) * (double)secs));
		rc = 0;
		goto out;
	}
	if (strcmp(mode, "ts") == 0) {
		uint64_t kill_ns, stab, seen;
		unsigned h;

		for (uint32_t i = 0; i < n; i++) {
			char *o = await_output(c, i, "READY", 30000);

			if (!o)
				goto out;
			free(o);
		}
		kill_ns = now_ns();
		spc_kill(c, n - 1, 9);
		out = await_output(c, 0, "stabilize_ns", 30000);
		json = out ? strchr(out, '{') : NULL;
		if (!json || sscanf(json,
				    "{\"stabilize_ns\":%" SCNu64
				    ",\"seen_ns\":%" SCNu64 ",\"height\":%u",
				    &stab, &seen, &h) != 3)
			goto out;
		printf("{\"ts_ms\":%.3f,\"detect_ms\":%.3f,\"height\":%u}\n",
		       (double)stab / 1e6,
		       (double)(seen - stab - kill_ns) / 1e6, h);
		rc = 0;
		goto out;
	}
	if (spc_wait(c, 0, 300000, &st) || st != 0) {
		out = spc_output(c, 0);
		fprintf(stderr, "node 0 failed: %s\n", out ? out : "");
		for (uint32_t i = 1; i < n; i++) {
			const char *o = spc_output(c, i);
			if (o && *o)
				fprintf(stderr, "node %u said: %s\n", i, o);
		}
		goto out;
	}
	out = spc_output(c, 0);
	json = out ? strchr(out, '{') : NULL;
	if (!json)
		goto out;
	fputs(json, stdout);
	rc = 0;
out:
	if (rc && !out) {
		out = spc_output(c, 0);
		fprintf(stderr, "node 0 output: %s\n", out ? out : "");
	}
	free(out);
	spc_destroy(c);
	return rc;
}

static int run_sim(int argc, char **argv)
{
	uint32_t n = (uint32_t)argl(argc, argv, "--nodes", 1024);
	uint32_t k = (uint32_t)argl(argc, argv, "--fanout", 4);
	sp_machine_t *m;
	sp_world_t **w = calloc(n, sizeof(*w));
	sp_view_info_t vi;
	char err[256];
	int rc;

	if (sp_machine_create(n, NULL, &m))
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		sp_config_t *cfg;

		sp_config_create(&cfg);
		sp_config_set_node(cfg, i, n);
		sp_config_set_provider(cfg, "inproc");
		sp_config_set_machine(cfg, m);
		sp_config_set_fanout(cfg, k);
		sp_config_set_gmem(cfg, 4096, 4);
		rc = sp_open(cfg, &w[i], err, sizeof(err));
		sp_config_destroy(cfg);
		if (rc)
			die("open", rc, err);
	}
	sp_view(w[0], &vi, NULL);
	/* node k heads a subtree of its own (positions k+1..2k-1 hang off
	 * it), so its failure exercises re-linking of orphans */
	sp_machine_kill(m, n > k ? k : n - 1, 1000);
	rc = sp_view_wait(w[0], vi.epoch + 1, 60000);
	if (rc)
		die("view", rc, NULL);
	sp_machine_quiesce(m, 60000);
	sp_view(w[0], &vi, NULL);
	printf("{\"ts_us\":%.3f,\"height\":%u}\n", (double)vi.stabilize_ns / 1e3,
	       vi.height);
	for (uint32_t i = 0; i < n; i++)
		sp_close(w[i]);
	sp_machine_destroy(m);
	free(w);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--node") == 0)
		return node_main(argc, argv);
	if (argc < 2) {
		fprintf(stderr,
			"usage: storm-bench-primitives caw|xfer|ts|idle|ts-sim [options]\n");
		return 2;
	}
	if (strcmp(argv[1], "ts-sim") == 0)
		return run_sim(argc, argv);
	if (strcmp(argv[1], "caw") == 0 || strcmp(argv[1], "xfer") == 0 ||
	    strcmp(argv[1], "ts") == 0 || strcmp(argv[1], "idle") == 0)
		return run_cluster(argv[1], argc, argv);
	fprintf(stderr, "storm-bench-primitives: unknown benchmark \"%s\"\n",
		argv[1]);
	return 2;
}
