/*
 * sp_cluster.h — start a machine of N node processes on this host, for the
 * demo, the integration tests and the benchmarks.
 *
 * Addresses are chosen at run time (free loopback ports for socket
 * providers, unique names for shm).  Every child gets PR_SET_PDEATHSIG, and
 * spc_destroy() kills and reaps every child by PID, so no node outlives the
 * program that started it, pass or fail.
 */
#ifndef SP_CLUSTER_H
#define SP_CLUSTER_H

#include <stdint.h>
#include <sys/types.h>

#include "storm_primitives.h"

typedef struct spc_cluster spc_cluster_t;

/** Start n copies of exe, node i with arguments
 *   --node i --nodes n --provider P --addrs a0,a1,… [extra…]
 * and its stdout+stderr in a file (spc_output()).  extra is NULL-terminated
 * (may be NULL). @return 0, -errno. */
int spc_start(const char *exe, const char *provider, uint32_t n,
	      char *const extra[], spc_cluster_t **out);
/** Start node i again (after it exited or was killed), with extra args
 * (e.g. "--join"). @return 0, -errno. */
int spc_restart(spc_cluster_t *c, uint32_t i, char *const extra[]);
/** Wait up to timeout_ms for node i to exit; *status gets its exit code
 * (128+signal when killed). @return 0, -ETIMEDOUT. */
int spc_wait(spc_cluster_t *c, uint32_t i, int timeout_ms, int *status);
/** Wait up to timeout_ms (< 0: no limit) for child pid to exit and reap
 * it (*st: waitpid status).  Waits on a pidfd, not by polling.
 * @return 0; -ETIMEDOUT (still running, not reaped); -errno. */
int spc_waitpid(pid_t pid, int timeout_ms, int *st);
/** Wait until a node's output file grows or a running node exits, at
 * most timeout_ms (inotify and pidfds: an event, not a poll).
 * @return 0; -ETIMEDOUT; -errno. */
int spc_wait_activity(spc_cluster_t *c, int timeout_ms);
/** Send sig to node i. @return 0, -errno. */
int spc_kill(spc_cluster_t *c, uint32_t i, int sig);
/** Wait up to timeout_ms until node i is stopped (after a SIGSTOP).
 * @return 0; -ETIMEDOUT; -ESRCH (it exited instead: spc_wait() has its
 * status). */
int spc_wait_stopped(spc_cluster_t *c, uint32_t i, int timeout_ms);
pid_t spc_pid(const spc_cluster_t *c, uint32_t i);
/** The output node i has written so far (malloc'd, caller frees). */
char *spc_output(const spc_cluster_t *c, uint32_t i);
/** Kill every node still running (SIGKILL), reap, remove files (the
 * outputs and, for shm, the files killed nodes left in /dev/shm). NULL ok. */
void spc_destroy(spc_cluster_t *c);

/** In a node process: build a config from the arguments above; removes
 * them from argv.  @return 0, or -EINVAL with err set. */
int spc_node_config(int *argc, char **argv, sp_config_t **cfg, char *err,
		    size_t errlen);

#endif /* SP_CLUSTER_H */
