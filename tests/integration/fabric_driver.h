/*
 * fabric_driver.h — run one prim_node scenario on N node processes and
 * judge it: start the nodes (tests/harness), carry out the commands node
 * 0 prints for the driver, wait for every node to exit, check each exit.
 * Shared by the integration drivers (test_fabric.c, test_fabric_xfer.c);
 * cmocka assertions, so call it from a cmocka test.
 *
 * Commands, at the start of a line of node 0's output (prim_node.c):
 *   "STOP v r"  SIGSTOP node v, wait until the kernel says it is stopped,
 *               then SIGUSR1 node 0;
 *   "KILL v r"  SIGKILL node v;
 *   "REAP v r"  SIGKILL node v, wait until it is reaped, then SIGUSR1
 *               node 0.
 * Every wait is bounded (FD_RUN_MS for the whole scenario).
 */
#ifndef FABRIC_DRIVER_H
#define FABRIC_DRIVER_H

#include <stdint.h>
#include <time.h>

#include "sp_cluster.h"

#define FD_MAX_NODES 16
#define FD_RUN_MS 60000 /* a scenario, start to exit */

/* Flags of fd_run(). */
#define FD_RMA 1 /* no node may report that it cannot read staging
		  * remotely (the RMA path must be under test) */

/** Run scenario on nodes node processes of node_exe over provider.  The
 * cluster goes to *state (the test's teardown must spc_destroy() it).
 * Passes when every node not killed by a command exited 0 and printed
 * PASS, and every killed one died of SIGKILL; otherwise prints every
 * node's output and fails the test.  On success prints node 0's lines
 * that start with "round " (what each round covered). */
void fd_run(void **state, const char *node_exe, const char *provider,
	    const char *scenario, uint32_t nodes, int flags);

/** Print the output of nodes 0..nodes-1 (on a failure). */
void fd_dump(spc_cluster_t *c, uint32_t nodes);

/** Milliseconds since *t0 (CLOCK_MONOTONIC). */
long fd_ms_since(const struct timespec *t0);

#endif /* FABRIC_DRIVER_H */
