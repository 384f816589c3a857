/*
 * primitives_demo.c — storm-demo: the three mechanisms and membership on a
 * machine of node processes on this host, narrated.
 *
 *   storm-demo [--nodes N] [--provider tcp|shm|sockets]
 *
 * Node 0 multicasts a 1 MiB image to every node (XFER-AND-SIGNAL), every
 * node checks it and raises a flag, node 0 asks "has everyone checked it?"
 * with one COMPARE-AND-WRITE; then the demo kills a node and shows the
 * membership view change and a second transfer to the survivors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "sp_cluster.h"
#include "storm_primitives.h"

#define IMG (1u << 20)
#define GA_OK 0
#define GA_GO 8
#define GA_IMG 4096
#define EV_LOCAL 0
#define EV_IMG 1

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int fail(const char *what, int rc, const char *err)
{
	printf("node: %s failed: %s %s\n", what, storm_strerror(rc),
	       err ? err : "");
	return 1;
}

/* Every node: receive images until told to stop, checking each one. */
static int node_serve(sp_world_t *w)
{
	size_t sz;
	uint8_t *g = sp_gmem(w, &sz);

	for (int round = 1;; round++) {
		int64_t go;
		int rc = sp_test_event(w, EV_IMG, 60000);

		if (rc)
			return fail("waiting for the image", rc, NULL);
		sp_gvar_read(w, GA_GO, &go);
		if (go < 0)
			return 0;
		printf("node %u: image %d arrived, checksum %08x\n",
		       sp_node_id(w), round, checksum(g + GA_IMG, IMG));
		fflush(stdout);
		sp_gvar_write_local(w, GA_OK, round);
	}
}

static int xfer_wait(sp_world_t *w, sp_nodeset_t *set, const void *buf,
		     size_t len, uint64_t ga, sp_ev_t remote)
{
	char err[256];
	int rc = sp_xfer_and_signal(w, set, buf, len, ga, EV_LOCAL, remote,
				    err, sizeof(err));

	if (rc)
		return fail("XFER-AND-SIGNAL", rc, err);
	rc = sp_test_event(w, EV_LOCAL, 30000);
	return rc ? fail("XFER-AND-SIGNAL completion", rc, NULL) : 0;
}

static int node_main(int argc, char **argv)
{
	sp_config_t *cfg;
	sp_world_t *w;
	sp_nodeset_t *live, *others;
	sp_view_info_t vi;
	uint8_t *img;
	char err[512], set[256];
	uint64_t t0;
	int rc, rounds = 0;

	rc = spc_node_config(&argc, argv, &cfg, err, sizeof(err));
	if (rc)
		return fail("arguments", rc, err);
	/* The library logs through libqb: notices (a peer down, a view
	 * change) to stderr, which the launcher shows. */
	qb_log_init("storm-demo", LOG_USER, LOG_NOTICE);
	qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_ENABLED, QB_FALSE);
	qb_log_filter_ctl(QB_LOG_STDERR, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE,
			  "*", LOG_NOTICE);
	qb_log_ctl(QB_LOG_STDERR, QB_LOG_CONF_ENABLED, QB_TRUE);
	sp_config_set_gmem(cfg, GA_IMG + IMG, 4);
	sp_config_set_liveness(cfg, 50, 250, 20000);
	rc = sp_open(cfg, &w, err, sizeof(err));
	sp_config_destroy(cfg);
	if (rc)
		return fail("open", rc, err);
	if (sp_node_id(w) != 0) {
		rc = node_serve(w);
		sp_close(w);
		return rc;
	}
	sp_nodeset_create(sp_node_count(w), &live);
	sp_nodeset_create(sp_node_count(w), &others);
	img = malloc(IMG);
	for (uint32_t i = 0; i < IMG; i++)
		img[i] = (uint8_t)(i * 7 + 3);
	for (int phase = 0; phase < 2; phase++) {
		int64_t go = 1;

		sp_view(w, &vi, live);
		sp_nodeset_copy(others, live);
		sp_nodeset_del(others, 0);
		sp_nodeset_format(live, set, sizeof(set));
		printf("root: view epoch %llu: nodes %s, tree height %u\n",
		       (unsigned long long)(vi.epoch >> 16), set, vi.height);
		rounds++;
		t0 = now_ns();
		/* the GO flag quietly first, then the image with its event:
		 * both all-or-nothing, and ordered by waiting for each */
		rc = xfer_wait(w, others, &go, sizeof(go), GA_GO, SP_EV_NONE);
		if (!rc) {
			img[0] = (uint8_t)rounds;
			rc = xfer_wait(w, others, img, IMG, GA_IMG, EV_IMG);
		}
		if (rc)
			return rc;
		printf("root: XFER-AND-SIGNAL of 1 MiB to nodes %s committed in %.2f ms (checksum %08x)\n",
		       set, (double)(now_ns() - t0) / 1e6, checksum(img, IMG));
		t0 = now_ns();
		do {
			/* each node raises its flag after checking: ask all */
			rc = sp_compare_and_write(w, others, GA_OK, SP_CMP_GE,
						  rounds, SP_NO_WRITE, 0, 5000);
		} while (rc == 0 && now_ns() - t0 < 5000000000ull);
		printf("root: COMPARE-AND-WRITE \"ok >= %d on every node\" -> %s (%.3f ms)\n",
		       rounds, rc == 1 ? "true" : "false",
		       (double)(now_ns() - t0) / 1e6);
		rc = sp_compare_and_write(w, others, GA_OK, SP_CMP_GE,
					  rounds + 1, SP_NO_WRITE, 0, 5000);
		printf("root: COMPARE-AND-WRITE \"ok >= %d on every node\" -> %s (%s)\n",
		       rounds + 1, rc == 1 ? "true" : "false",
		       rc == 0 ? "as it should be" : "WRONG");
		if (rc != 0)
			return 1;
		fflush(stdout);
		if (phase == 0) {
			printf("READY-TO-KILL\n");
			fflush(stdout);
			rc = sp_view_wait(w, vi.epoch + 1, 30000);
			if (rc)
				return fail("waiting for the view change", rc,
					    NULL);
			sp_view(w, &vi, NULL);
			printf("root: failure detected; new view stable in %.3f ms (membership stabilisation Ts)\n",
			       (double)vi.stabilize_ns / 1e6);
		}
	}
	{
		int64_t stop = -1;

		xfer_wait(w, others, &stop, sizeof(stop), GA_GO, EV_IMG);
	}
	free(img);
	sp_nodeset_destroy(live);
	sp_nodeset_destroy(others);
	sp_close(w);
	return 0;
}

static char *self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return NULL;
	path[n] = '\0';
	return path;
}

static void show(spc_cluster_t *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		char *o = spc_output(c, i);
		char *line = o ? strtok(o, "\n") : NULL;

		for (; line; line = strtok(NULL, "\n"))
			if (strncmp(line, "READY", 5) != 0)
				printf("  [%u] %s\n", i, line);
		free(o);
	}
}

int main(int argc, char **argv)
{
	const char *prov = "tcp";
	uint32_t n = 4;
	spc_cluster_t *c;
	int st = 1, rc;
	uint64_t end;

	if (argc > 1 && strcmp(argv[1], "--node") == 0)
		return node_main(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--nodes") == 0) {
			n = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else if (i + 1 < argc && strcmp(argv[i], "--provider") == 0) {
			prov = argv[++i];
		} else {
			fprintf(stderr,
				"usage: storm-demo [--nodes N (3-64)] [--provider tcp|shm|sockets]\n");
			return 2;
		}
	}
	if (n < 3 || n > 64) {
		fprintf(stderr, "storm-demo: --nodes must be 3..64 (got %u)\n", n);
		return 2;
	}
	printf("storm-demo: %u node processes, provider %s, on this host\n", n,
	       prov);
	rc = spc_start(self_exe(), prov, n, NULL, &c);
	if (rc) {
		fprintf(stderr, "storm-demo: cannot start nodes: %s\n",
			storm_strerror(rc));
		return 1;
	}
	end = now_ns() + 60000000000ull;
	for (;;) {
		char *o = spc_output(c, 0);
		int done = o && strstr(o, "READY-TO-KILL");

		free(o);
		if (done)
			break;
		if (spc_wait(c, 0, 10, &st) == 0 || now_ns() > end) {
			show(c, n);
			fprintf(stderr, "storm-demo: node 0 did not get ready\n");
			spc_destroy(c);
			return 1;
		}
	}
	printf("storm-demo: killing node %u (SIGKILL)\n", n - 1);
	spc_kill(c, n - 1, 9);
	if (spc_wait(c, 0, 60000, &st) || st != 0)
		st = st ? st : 1;
	for (uint32_t i = 1; i + 1 < n; i++) {
		int s2 = 0;

		if (spc_wait(c, i, 10000, &s2) || s2 != 0)
			st = st ? st : 1;
	}
	show(c, n);
	spc_destroy(c);
	printf("storm-demo: %s; every node process has exited\n",
	       st == 0 ? "done" : "FAILED");
	return st == 0 ? 0 : 1;
}
