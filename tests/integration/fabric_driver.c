/*
 * fabric_driver.c — see fabric_driver.h.  The driver learns what node 0
 * wants by reading its output file, and when nodes exit by waitpid(); a
 * file and a child's exit have no descriptor to block on here, so it
 * polls both every millisecond, bounded by FD_RUN_MS.  A kill thus lands
 * within about a millisecond of node 0 asking for it.
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

#include <cmocka.h>

#include "fabric_driver.h"

#define STOP_MS 5000  /* a SIGSTOP taking effect */
#define GRACE_MS 3000 /* the others' last words after a node failed */

void fd_dump(spc_cluster_t *c, uint32_t nodes)
{
	for (uint32_t i = 0; i < nodes; i++) {
		char *out = spc_output(c, i);

		print_message("---- node %u (pid %d) ----\n%s", i,
			      (int)spc_pid(c, i), out ? out : "");
		free(out);
	}
}

long fd_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The k-th (from 0) command in out, if any: "STOP v r", "KILL v r" or
 * "REAP v r" at
 * the start of a line.  Returns 1 and fills cmd (5 bytes) and victim. */
static int nth_command(const char *out, int k, char *cmd, int *victim)
{
	const char *l = out;

	while (l && *l) {
		unsigned r;

		if ((strncmp(l, "STOP ", 5) == 0 || strncmp(l, "KILL ", 5) == 0 ||
		     strncmp(l, "REAP ", 5) == 0) &&
		    sscanf(l + 5, "%d %u", victim, &r) == 2 && k-- == 0) {
			memcpy(cmd, l, 4);
			cmd[4] = '\0';
			return 1;
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return 0;
}

/* Carry out one command.  A stopped node is reported to node 0 (SIGUSR1)
 * only once the kernel says it is stopped. */
static void obey(spc_cluster_t *c, uint32_t nodes, const char *cmd,
		 int victim, int *killed, int *stopped)
{
	int rc;

	if (victim <= 0 || victim >= (int)nodes || killed[victim]) {
		fd_dump(c, nodes);
		fail_msg("node 0 asked to %s node %d", cmd, victim);
	}
	if (strcmp(cmd, "STOP") == 0) {
		rc = spc_kill(c, (uint32_t)victim, SIGSTOP);
		if (!rc)
			rc = spc_wait_stopped(c, (uint32_t)victim, STOP_MS);
		if (!rc)
			rc = spc_kill(c, 0, SIGUSR1);
		stopped[victim] = 1;
	} else {
		rc = spc_kill(c, (uint32_t)victim, SIGKILL);
		if (!rc && strcmp(cmd, "REAP") == 0) {
			/* gone for good, then node 0 may look */
			int st;

			rc = spc_wait(c, (uint32_t)victim, STOP_MS, &st);
			if (!rc)
				rc = spc_kill(c, 0, SIGUSR1);
		}
		killed[victim] = 1;
		stopped[victim] = 0;
	}
	if (rc) {
		fd_dump(c, nodes);
		fail_msg("%s node %d: %s", cmd, victim, strerror(-rc));
	}
}

/* Node 0's lines saying how each round ended, so that a passing run's
 * log tells what it covered (which outcome a racing kill produced). */
static void print_outcomes(spc_cluster_t *c, const char *provider,
			   const char *scenario)
{
	char *out = spc_output(c, 0);

	for (char *l = out, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(l, "round ", 6) == 0 || strstr(l, "rounds aborted"))
			print_message("%s/%s: node 0: %s\n", provider, scenario,
				      l);
	}
	free(out);
}

/* Every node exited: judge each. */
static void judge(spc_cluster_t *c, const char *provider,
		  const char *scenario, uint32_t nodes, int flags,
		  const int *killed, const int *status)
{
	for (uint32_t i = 0; i < nodes; i++) {
		char *out = spc_output(c, i);
		int pass = out && strstr(out, "PASS") != NULL;
		int norma = out && strstr(out, "no remote reads of staging");

		free(out);
		if (killed[i] ? status[i] != 128 + SIGKILL :
				(status[i] != 0 || !pass)) {
			fd_dump(c, nodes);
			fail_msg("%s/%s: node %u exited with %d%s", provider,
				 scenario, i, status[i],
				 killed[i] ? " (killed: want SIGKILL)" :
				 pass ? "" : " without PASS");
		}
		if ((flags & FD_RMA) && norma) {
			fd_dump(c, nodes);
			fail_msg("%s/%s: node %u cannot read staging remotely: "
				 "the RMA path is not under test", provider,
				 scenario, i);
		}
	}
}

/* A node failed (exited non-zero without being killed): give the others
 * GRACE_MS to exit and say why, unless only stopped ones are left. */
static int give_up(const int *stopped, const int *exited, uint32_t nodes,
		   const struct timespec *failed_at)
{
	uint32_t running = 0;

	for (uint32_t i = 0; i < nodes; i++)
		running += !exited[i] && !stopped[i];
	return running == 0 || fd_ms_since(failed_at) > GRACE_MS;
}

void fd_run(void **state, const char *node_exe, const char *provider,
	    const char *scenario, uint32_t nodes, int flags)
{
	char *extra[] = {"--scenario", (char *)scenario, NULL};
	int killed[FD_MAX_NODES] = {0}, exited[FD_MAX_NODES] = {0};
	int status[FD_MAX_NODES] = {0}, stopped[FD_MAX_NODES] = {0};
	spc_cluster_t *c = NULL;
	struct timespec t0, failed_at;
	uint32_t left = nodes;
	int rc, done = 0, failed = -1;

	assert_non_null(node_exe);
	assert_true(nodes > 0 && nodes <= FD_MAX_NODES);
	rc = spc_start(node_exe, provider, nodes, extra, &c);
	if (rc)
		fail_msg("spc_start(%s, %s): %s", node_exe, provider,
			 strerror(-rc));
	*state = c;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (left) {
		char *out = spc_output(c, 0), cmd[8];
		int victim;

		while (failed < 0 && nth_command(out, done, cmd, &victim)) {
			obey(c, nodes, cmd, victim, killed, stopped);
			done++;
		}
		free(out);
		for (uint32_t i = 0; i < nodes; i++) {
			if (!exited[i] && spc_wait(c, i, 0, &status[i]) == 0) {
				exited[i] = 1;
				left--;
				if (failed < 0 && !killed[i] && status[i]) {
					failed = (int)i;
					clock_gettime(CLOCK_MONOTONIC,
						      &failed_at);
				}
			}
		}
		if (failed >= 0 && give_up(stopped, exited, nodes, &failed_at)) {
			fd_dump(c, nodes);
			fail_msg("%s/%s: node %d exited with %d", provider,
				 scenario, failed, status[failed]);
		}
		if (left && fd_ms_since(&t0) > FD_RUN_MS) {
			fd_dump(c, nodes);
			fail_msg("%s/%s: nodes still running after %d ms",
				 provider, scenario, FD_RUN_MS);
		}
		/* until node 0 writes a command, a node exits, or the
		 * grace or run limit needs checking */
		if (left)
			spc_wait_activity(c, 50);
	}
	judge(c, provider, scenario, nodes, flags, killed, status);
	print_outcomes(c, provider, scenario);
}
