/*
 * test_fabric_xfer.c — XFER-AND-SIGNAL on the libfabric back-end with real
 * node processes on this host, on tcp and on shm: both ways a chunk moves
 * down the tree (read remotely from the parent's staging arena, XRMA, for
 * transfers of 64 KiB or more; XDATA messages otherwise) and all or nothing
 * when a destination is killed in the middle of a large transfer.  The
 * node side is prim_node.c's x* scenarios (5 MiB global memory, 256 KiB
 * chunks, fan-out 2, so every tree has interior nodes that forward).
 *
 *   rma_large_delivered       3 MiB + 1000 from node 0 to all 7 nodes and
 *                             1 MiB + 12 from node 5 to the others, at the
 *                             same time, twice; checked byte for byte on
 *                             every node, and that each node's arena has
 *                             the pages (the RMA path was taken).
 *   staging_disabled          the same with sp_config_set_staging(cfg, 0).
 *   arena_too_small           a 128 KiB arena: 1 MiB + 12 goes by messages
 *                             while two 96 KiB transfers compete for it.
 *   all_or_nothing_when_dest_dies
 *                             8 nodes; per round 3 MiB + 1000 from node 0
 *                             to the live nodes (one left out in two
 *                             rounds); an interior node of the round's
 *                             tree is stopped before the transfer starts
 *                             and killed once it has (the source must get
 *                             -STORM_EABORTED), or killed as soon as it has
 *                             started (either outcome); every survivor
 *                             holds all of it or none of it, with its
 *                             remote event or without; a last round must
 *                             commit.
 *
 * How a kill lands mid-transfer without sleeping: node 0 prints "STOP v r"
 * or "KILL v r"; the driver (fabric_driver.c) acts by PID through the
 * harness within a millisecond and, for STOP, tells node 0 by SIGUSR1 once
 * the node is stopped.  A stopped destination cannot stage, so the source
 * cannot commit before the view drops it: the abort is certain.
 *
 *   all_or_nothing_when_root_child_dies
 *                             the same rounds with victims that are
 *                             children of the membership root, which
 *                             watches them itself (regression: the root
 *                             used to expel the live children it adopted
 *                             when it removed a silent one; pinned
 *                             minimally by test_fabric.c's
 *                             root_child_silent_expels_only_it).
 *
 * Usage: test_fabric_xfer PATH-TO-prim_node [PATTERN]
 * (PATTERN: only tests whose name matches, cmocka's '*' and '?').  Every
 * node process is killed by PID in the per-test teardown (spc_destroy),
 * pass or fail; on failure the nodes' output is printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fabric_driver.h"

#define NODES_XFER 7
#define NODES_KILL 8

static const char *node_exe;

static int teardown(void **state)
{
	spc_destroy(*state); /* SIGKILL + reap every node still running */
	*state = NULL;
	return 0;
}

/* ---- tcp (tcp;ofi_rxm) ----------------------------------------------------- */

static void test_xfer_tcp_rma_large_delivered_to_every_node(void **state)
{
	fd_run(state, node_exe, "tcp", "xbig", NODES_XFER, FD_RMA);
}

static void test_xfer_tcp_staging_disabled_goes_by_messages(void **state)
{
	fd_run(state, node_exe, "tcp", "xmsg", NODES_XFER, 0);
}

static void test_xfer_tcp_arena_too_small_falls_back_to_messages(void **state)
{
	fd_run(state, node_exe, "tcp", "xsmall", NODES_XFER, FD_RMA);
}

static void test_xfer_tcp_all_or_nothing_when_dest_dies(void **state)
{
	fd_run(state, node_exe, "tcp", "xkill", NODES_KILL, FD_RMA);
}

static void test_xfer_tcp_all_or_nothing_when_root_child_dies(void **state)
{
	fd_run(state, node_exe, "tcp", "xkill-root", NODES_KILL, FD_RMA);
}

/* ---- shm --------------------------------------------------------------------- */

static void test_xfer_shm_rma_large_delivered_to_every_node(void **state)
{
	fd_run(state, node_exe, "shm", "xbig", NODES_XFER, FD_RMA);
}

static void test_xfer_shm_staging_disabled_goes_by_messages(void **state)
{
	fd_run(state, node_exe, "shm", "xmsg", NODES_XFER, 0);
}

static void test_xfer_shm_arena_too_small_falls_back_to_messages(void **state)
{
	fd_run(state, node_exe, "shm", "xsmall", NODES_XFER, FD_RMA);
}

static void test_xfer_shm_all_or_nothing_when_dest_dies(void **state)
{
	fd_run(state, node_exe, "shm", "xkill", NODES_KILL, FD_RMA);
}

static void test_xfer_shm_all_or_nothing_when_root_child_dies(void **state)
{
	fd_run(state, node_exe, "shm", "xkill-root", NODES_KILL, FD_RMA);
}

int main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_teardown(fn, teardown)
	const struct CMUnitTest tcp[] = {
		T(test_xfer_tcp_rma_large_delivered_to_every_node),
		T(test_xfer_tcp_staging_disabled_goes_by_messages),
		T(test_xfer_tcp_arena_too_small_falls_back_to_messages),
		T(test_xfer_tcp_all_or_nothing_when_dest_dies),
		T(test_xfer_tcp_all_or_nothing_when_root_child_dies),
	};
	const struct CMUnitTest shm[] = {
		T(test_xfer_shm_rma_large_delivered_to_every_node),
		T(test_xfer_shm_staging_disabled_goes_by_messages),
		T(test_xfer_shm_arena_too_small_falls_back_to_messages),
		T(test_xfer_shm_all_or_nothing_when_dest_dies),
		T(test_xfer_shm_all_or_nothing_when_root_child_dies),
	};
	int failed = 0;

	if (argc < 2 || access(argv[1], X_OK) != 0) {
		fprintf(stderr, "usage: %s PATH-TO-prim_node [PATTERN]\n",
			argv[0]);
		return 2;
	}
	node_exe = argv[1];
	for (int i = 2; i < argc; i++)
		cmocka_set_test_filter(argv[i]);
	failed += cmocka_run_group_tests_name("fabric-xfer-tcp", tcp, NULL, NULL);
	failed += cmocka_run_group_tests_name("fabric-xfer-shm", shm, NULL, NULL);
	return failed ? 1 : 0;
}
