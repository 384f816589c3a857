/*
 * job.h — one job as this node holds it: its manifest, where its files
 * are, its local ranks, and what the heartbeats last said of it.  The
 * node manager (nm.c) owns the list; the launcher, the gang switch and
 * the output sinks work on one job at a time.
 */
#ifndef STORM_NM_JOB_H
#define STORM_NM_JOB_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <storm_proto.h>

#include "cgroup.h"
#include "identity.h"

struct nm_output;

struct nm_rank {
	uint32_t rank;
	pid_t pid;         /* 0 once reaped */
	int fd[2];         /* stdout, stderr read ends; -1 at EOF */
	int32_t status;    /* wait status once reaped */
	uint64_t utime_us, stime_us, maxrss_kib; /* wait4()'s, once reaped */
	uint64_t said[2];  /* bytes it wrote to stdout, stderr that were
			    * read (from its start, or its epoch's point) */
	int pmi_fd;        /* its end of its PMI socket pair until it is
			    * started (launch.c), or -1 */
};

struct nm_job {
	struct nm_job *next;
	void *nm_ctx;      /* the node manager's, for its loop handlers */
	uint32_t id;
	st_manifest_t *m;
	char dir[1200];    /* its files on the RAM disk */
	int written;       /* files on the ramdisk */
	int started;
	int stopped;       /* its ranks were last sent SIGSTOP (gang.c) */
	int sig_warned;    /* a failed stop/continue was logged (gang.c) */
	uint8_t want;      /* what it must be now: ST_HB_STAGING/RUN/STOP,
			    * from its last listing and the active row */
	uint8_t listed;    /* as last listed: ST_HB_STAGING or ST_HB_ACTIVE */
	uint16_t row;      /* its gang row, as last listed */
	uint32_t done_slot; /* its done gvar, as last listed */
	uint32_t ckpt_want; /* the checkpoint epoch listed, 0: none */
	uint32_t restore;  /* its ranks start from this epoch (listed) */
	uint32_t inc;      /* the incarnation staged here (restarts) */
	int grace;         /* 1 until first listed: one unlisted heartbeat,
			    * sent before its staging began, is forgiven */
	int seen;          /* listed in the heartbeat being applied */
	int reported;      /* EXIT records queued */
	int done;          /* done gvar set */
	uint32_t nlocal;
	struct nm_rank *ranks;
	struct nm_identity *ident; /* its user here (NULL: a version-1
				    * manifest, run as the daemon) */
	struct nm_output *out;     /* its batch output files (output.h) */
	struct nm_cg cg;           /* its cgroup here (cgroup.h) */
	int dying;         /* unlisted, processes left: SIGTERM sent, the
			    * kill follows after the grace period */
	uint64_t kill_timer; /* the node manager's timer for it (0 none) */
	int bcs_fd;        /* its BCS-MPI segment (the engine's), or -1:
			    * each rank inherits it (launch.c) */
	char *nodelist;    /* its nodes' names, in the order of their first
			    * rank (STORM_NODELIST), once started */
	uint32_t node_index; /* this node's place in it (STORM_NODEID) */
	int pmi;           /* a PMI-1 job: its server is open here
			    * (pmi_node.h) */
	int stdin_fd;      /* rank 0's stdin (the pipe's read end) while
			    * it starts (stdin.h), or -1: /dev/null */
	int bcs_bell;      /* its doorbell (the engine's), or -1: each rank
			    * inherits it too; polled by the node manager */
};

/* A job with manifest m (taken), its files in dir.  NULL: no memory. */
struct nm_job *nm_job_new(uint32_t id, st_manifest_t *m, const char *dir);
/* Free j and what it holds (its processes and files are the caller's
 * business: killed and removed before). */
void nm_job_free(struct nm_job *j);
/* Its local ranks (those of its manifest on node self) into j->ranks:
 * no process yet, no pipes.  0 or -ENOMEM. */
int nm_job_place(struct nm_job *j, uint32_t self);
/* Every local rank reaped and its pipes at EOF. */
int nm_job_ended(const struct nm_job *j);
/* The local rank whose process is pid, or NULL. */
struct nm_rank *nm_job_rank_of(struct nm_job *j, pid_t pid);
/* Its wait status and usage into x, reaped. */
void nm_rank_reaped(struct nm_rank *x, int status, const struct rusage *ru);

#endif
