/*
 * launch.h — a job's local ranks started: each by vfork() as the job's
 * user, in the job's cgroup (j->cg, made before), leading its own
 * process group, with a defined environment and its stdout/stderr on
 * pipes the caller reads; signalled by process group.
 */
#ifndef STORM_NM_LAUNCH_H
#define STORM_NM_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"

/* The descriptor a BCS-MPI rank finds its segment on (STORM_BCS_FD). */
#define NM_BCS_RANK_FD 3
/* The descriptor a BCS-MPI rank finds its job's doorbell on
 * (STORM_BCS_BELL), when the job is on this node alone. */
#define NM_BCS_BELL_FD 4

/* The descriptor a PMI-1 rank finds its job's PMI server on (PMI_FD). */
#define NM_PMI_RANK_FD 3

struct nm_launch {
	uint32_t node_id;   /* this node's world id */
	const char *node;   /* and name */
	/* BCS-MPI under MPICH's sonames, first on a BCS-MPI job's
	 * LD_LIBRARY_PATH ("" or NULL: not set) */
	const char *mpich_abi_dir;
	/* libstorm-pmi, for Open MPI's ranks (FLUX_PMI_LIBRARY_PATH), and
	 * the site's K=V words for every PMI job's ranks */
	const char *pmi_library, *mpi_env;
	/* cpu binding: the cpus a rank may be bound to, by index (the
	 * scheduler's column on this node); ncpus 0: no binding */
	int cpus[1024];
	uint32_t ncpus;
};

/* Resolve the job's user on this node (j->ident) from its manifest's
 * uid and gid: 0, or -errno with err naming the node, job and cause. */
int nm_launch_identity(const struct nm_launch *l, struct nm_job *j,
		       char *err, size_t errlen);
/* Start the job's local ranks (j->ranks, placed by nm_job_place), as
 * j->ident (resolved before): each gets its pid and its two pipe read
 * ends (non-blocking).  traced: each is stopped at its exec, traced by the
 * calling thread, for a restore (ckpt_restore) to make it the process of
 * a checkpoint.  0, or -errno with err saying which node, job and why
 * (the ranks started so far are killed). */
int nm_launch_start(const struct nm_launch *l, struct nm_job *j, int traced,
		    char *err, size_t errlen);
/* sig to every live rank's process group. */
void nm_launch_signal(struct nm_job *j, int sig);
/* SIGKILL to every live rank's process group. */
void nm_launch_kill(struct nm_job *j);

#endif
