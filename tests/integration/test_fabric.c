/*
 * test_fabric.c — the libfabric back-end with real node processes on this
 * host: the same scenarios (prim_node.c) on every provider, four nodes
 * each.  Covers XFER-AND-SIGNAL to every node verified everywhere and
 * agreed through a COMPARE-AND-WRITE, COMPARE-AND-WRITE true/false/writes/
 * subsets, and a node killed with SIGKILL whose survivors install and
 * agree on a view without it.  (All-or-nothing under failures is covered
 * on the in-process machine, test_xfer.c, where failures can be placed
 * between protocol phases.)
 *
 * Usage: test_fabric PATH-TO-prim_node.  Every node process is killed by
 * PID in the per-test teardown (spc_destroy), pass or fail; on failure the
 * nodes' output is printed.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sp_cluster.h"

#define NODES 4
#define START_MS 30000 /* every node open and READY */
#define RUN_MS 60000   /* a scenario, start to exit */

static const char *node_exe;

static int teardown(void **state)
{
	spc_destroy(*state); /* SIGKILL + reap every node still running */
	*state = NULL;
	return 0;
}

static void dump(spc_cluster_t *c)
{
	for (uint32_t i = 0; i < NODES; i++) {
		char *out = spc_output(c, i);

		print_message("---- node %u (pid %d) ----\n%s", i,
			      (int)spc_pid(c, i), out ? out : "");
		free(out);
	}
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait until every node printed READY (its world is open).  The nodes'
 * output is a file, so this polls it, bounded by START_MS. */
static void wait_ready(spc_cluster_t *c)
{
	struct timespec t0;
	const struct timespec tick = {0, 10 * 1000 * 1000};

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < NODES; i++) {
		for (;;) {
			char *out = spc_output(c, i);
			int ready = out && strstr(out, "READY") != NULL;
			int failed = out && strstr(out, "FAIL") != NULL;

			free(out);
			if (ready)
				break;
			if (failed || ms_since(&t0) > START_MS) {
				dump(c);
				fail_msg("node %u never became ready", i);
			}
			nanosleep(&tick, NULL);
		}
	}
}

/* Start NODES node processes running scenario on provider; if victim is
 * a node id, SIGKILL it once all are ready.  Every other node must exit 0
 * and print PASS. */
static void run_scenario(void **state, const char *provider,
			 const char *scenario, int victim)
{
	char *extra[] = {"--scenario", (char *)scenario, NULL};
	spc_cluster_t *c = NULL;
	int rc, status;

	assert_non_null(node_exe);
	rc = spc_start(node_exe, provider, NODES, extra, &c);
	if (rc)
		fail_msg("spc_start(%s, %s): %s", node_exe, provider,
			 strerror(-rc));
	*state = c;
	if (victim >= 0) {
		wait_ready(c);
		assert_int_equal(spc_kill(c, (uint32_t)victim, SIGKILL), 0);
		assert_int_equal(spc_wait(c, (uint32_t)victim, RUN_MS, &status), 0);
		assert_int_equal(status, 128 + SIGKILL);
	}
	for (uint32_t i = 0; i < NODES; i++) {
		char *out;

		if ((int)i == victim)
			continue;
		rc = spc_wait(c, i, RUN_MS, &status);
		if (rc || status != 0) {
			dump(c);
			fail_msg("%s/%s: node %u %s %d", provider, scenario, i,
				 rc ? "did not exit; status" : "exited with",
				 rc ? rc : status);
		}
		out = spc_output(c, i);
		rc = out && strstr(out, "PASS") != NULL;
		free(out);
		if (!rc) {
			dump(c);
			fail_msg("%s/%s: node %u did not print PASS", provider,
				 scenario, i);
		}
	}
}

/* ---- tcp (tcp;ofi_rxm) ----------------------------------------------------- */

static void test_fabric_tcp_xfer_to_all_verified_by_caw(void **state)
{
	run_scenario(state, "tcp", "xfer", -1);
}

static void test_fabric_tcp_caw_true_false_and_writes(void **state)
{
	run_scenario(state, "tcp", "caw", -1);
}

static void test_fabric_tcp_killed_node_leaves_the_view(void **state)
{
	run_scenario(state, "tcp", "kill", NODES - 1);
}

/* ---- shm --------------------------------------------------------------------- */

static void test_fabric_shm_xfer_to_all_verified_by_caw(void **state)
{
	run_scenario(state, "shm", "xfer", -1);
}

static void test_fabric_shm_caw_true_false_and_writes(void **state)
{
	run_scenario(state, "shm", "caw", -1);
}

static void test_fabric_shm_killed_node_leaves_the_view(void **state)
{
	run_scenario(state, "shm", "kill", NODES - 1);
}

int main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_teardown(fn, teardown)
	const struct CMUnitTest tcp[] = {
		T(test_fabric_tcp_xfer_to_all_verified_by_caw),
		T(test_fabric_tcp_caw_true_false_and_writes),
		T(test_fabric_tcp_killed_node_leaves_the_view),
	};
	const struct CMUnitTest shm[] = {
		T(test_fabric_shm_xfer_to_all_verified_by_caw),
		T(test_fabric_shm_caw_true_false_and_writes),
		T(test_fabric_shm_killed_node_leaves_the_view),
	};
	int failed = 0;

	if (argc < 2 || access(argv[1], X_OK) != 0) {
		fprintf(stderr, "usage: %s PATH-TO-prim_node\n", argv[0]);
		return 2;
	}
	node_exe = argv[1];
	failed += cmocka_run_group_tests_name("fabric-tcp", tcp, NULL, NULL);
	failed += cmocka_run_group_tests_name("fabric-shm", shm, NULL, NULL);
	return failed ? 1 : 0;
}
