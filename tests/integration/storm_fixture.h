/*
 * storm_fixture.h — a real Storm cluster for integration tests: storm-mm
 * and N storm-nm processes on loopback in a fresh directory, driven through
 * the real stormctl.  Ports are free ones chosen at run time; every process
 * started gets PR_SET_PDEATHSIG and is killed and reaped by PID in
 * sf_destroy(), pass or fail; the directory is removed.
 */
#ifndef STORM_FIXTURE_H
#define STORM_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#define SF_MAX_NODES 16

typedef struct sf_cluster {
	char dir[256];
	char conf[320];
	char sock[320];
	const char *mm_exe, *nm_exe, *ctl_exe;
	uint32_t nodes;
	pid_t mm;
	pid_t nm[SF_MAX_NODES + 1]; /* by world id (1..nodes) */
} sf_cluster_t;

/** Write the config, start the manager and nodes nodes, and wait (bounded)
 * until every node is UP.  @return 0 or -errno; on failure everything
 * started is stopped again and *out is NULL. */
int sf_start(const char *mm_exe, const char *nm_exe, const char *ctl_exe,
	     uint32_t nodes, const char *provider, sf_cluster_t **out);
/** (Re)start the node manager of world id i. */
int sf_start_nm(sf_cluster_t *c, uint32_t i);
/** Send sig to node manager i and, for SIGKILL/SIGTERM, reap it. */
int sf_kill_nm(sf_cluster_t *c, uint32_t i, int sig);
/** Wait until at least n nodes are UP (asks the manager, which answers
 * when it is so). @return 0, -ETIMEDOUT, -errno. */
int sf_wait_up(sf_cluster_t *c, uint32_t n, int timeout_ms);
/** Send one request (JSON text) to the manager and read its reply
 * (malloc'd into *reply if not NULL). @return 0 if the reply says ok,
 * -ENOENT if it refuses, -errno. */
int sf_request(sf_cluster_t *c, const char *req, int timeout_ms,
	       char **reply);
/** Wait until at least n nodes are DOWN (the manager noticed). */
int sf_wait_down(sf_cluster_t *c, uint32_t n, int timeout_ms);
/** Wait until job has ended; *reply (if not NULL) gets {"ok":..,"job":..}. */
int sf_wait_job(sf_cluster_t *c, uint32_t job, int timeout_ms, char **reply);
/** Start stormctl with stdout+stderr on a pipe (*out_fd). @return pid. */
pid_t sf_ctl_pipe(sf_cluster_t *c, const char *const args[], int *out_fd);
/** Read fd, appending to buf (NUL-terminated, capacity cap), until it
 * holds want. @return 0, -ETIMEDOUT, -ECONNRESET (EOF first). */
int sf_read_until(int fd, const char *want, int timeout_ms, char *buf,
		  size_t cap);
/** Wait until process pid (any, not only a child) has exited. */
int sf_await_gone(pid_t pid, int timeout_ms);
/** Run stormctl with the cluster's config and args (NULL-terminated),
 * bounded by timeout_ms; *out and *err (malloc'd, may be NULL) get its
 * output, the return value its exit status (128+sig if killed), or a
 * negative errno if it could not be run or timed out (then killed). */
int sf_ctl(sf_cluster_t *c, int timeout_ms, char **out, char **err,
	   const char *const args[]);
/** Start stormctl in the background (output to files under the cluster
 * dir named tag.out / tag.err). @return its pid or -errno. */
pid_t sf_ctl_bg(sf_cluster_t *c, const char *tag, const char *const args[]);
/** Read a file under the cluster dir (malloc'd, NUL-terminated) or NULL. */
char *sf_read(sf_cluster_t *c, const char *name);
/** Stop everything by PID, reap, remove the directory. NULL accepted. */
void sf_destroy(sf_cluster_t *c);

#endif
