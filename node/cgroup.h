/*
 * cgroup.h — a cgroup per job: every process a job starts on this node,
 * including those that leave their rank's process group or daemonise,
 * can be signalled, frozen and killed together, and measured (CPU time,
 * peak memory, OOM kills) and limited (memory).
 *
 * Two layouts are served: pure cgroup v2 (a fresh Debian 12: every
 * controller on the one hierarchy) and the hybrid one (v2 mounted at
 * /sys/fs/cgroup/unified for membership, cgroup.kill, cgroup.freeze and
 * cpu.stat, memory on a v1 hierarchy).  The node manager's directory is
 * storm-CLUSTER-NODE-XXXXXXXX (a hash of its RAM-disk directory) below
 * its own cgroup on each hierarchy it uses;
 * each job's is job-ID below that.  The daemon itself stays where it
 * was started.
 */
#ifndef STORM_NM_CGROUP_H
#define STORM_NM_CGROUP_H

#include <stddef.h>
#include <stdint.h>

enum nm_cg_mode {
	NM_CG_NONE,    /* no containment (cgroup = none, or unavailable) */
	NM_CG_V2,      /* everything on cgroup v2 */
	NM_CG_HYBRID,  /* v2 for membership, v1 for memory */
};

struct nm_cgroups {
	enum nm_cg_mode mode;
	int wanted;        /* cgroup = auto: a job without one fails */
	char base[2200];   /* v2: the node manager's directory */
	char mem[2200];    /* v1 memory's ("" none: hybrid without it) */
	int memory;        /* memory limits and peaks available */
	int kill;          /* cgroup.kill available */
	char why[2600];    /* what is missing (mode NONE, or !memory) */
};

struct nm_cg {
	char dir[2240];    /* the job's v2 directory */
	char mem[2240];    /* its v1 memory directory, or "" */
	char procs[2][2260]; /* cgroup.procs files to join ("" unused) */
	int made;
};

/* Find the hierarchies, make this node manager's directories, and kill
 * and remove what a previous incarnation left (job-* directories).
 * wanted: the configuration says auto; place: what tells this node
 * manager from another of the same cluster and node names on the host
 * (its RAM-disk directory).  Never fails the daemon: what is missing is
 * in cg->why, and each job that needs it fails naming it. */
void nm_cg_init(struct nm_cgroups *cg, int wanted, const char *cluster,
		const char *node, const char *place);
/* The node manager stops: its directories removed (once its jobs'
 * are). */
void nm_cg_fini(struct nm_cgroups *cg);
/* The job's cgroup (and its memory limit, 0 none).  0, or -errno with
 * err naming the node, the job and the cause. */
int nm_cg_create(const struct nm_cgroups *cg, uint32_t job,
		 uint64_t mem_limit, const char *node, struct nm_cg *out,
		 char *err, size_t errlen);
/* In a vfork()ed child, before it changes its user: join the job's
 * cgroups (raw open/write/close).  0 or -errno. */
int nm_cg_join(const struct nm_cg *jc);
/* sig to every process in the job's cgroup; the count signalled. */
int nm_cg_signal(const struct nm_cg *jc, int sig);
/* Every process of the job killed at once (cgroup.kill, else SIGKILL to
 * each, a few rounds). */
void nm_cg_kill(const struct nm_cgroups *cg, const struct nm_cg *jc);
/* Freeze (1) or thaw (0) the job's processes. */
int nm_cg_freeze(const struct nm_cg *jc, int on);
/* Whether any process is left in it. */
int nm_cg_populated(const struct nm_cg *jc);
struct nm_cg_usage {
	uint64_t cpu_us;      /* user + system, every process ever in it */
	uint64_t peak_kib;    /* memory high-water mark (0: unknown) */
	uint64_t oom_kills;   /* processes the OOM killer ended in it */
};
void nm_cg_usage(const struct nm_cgroups *cg, const struct nm_cg *jc,
		 struct nm_cg_usage *u);
/* Remove the job's directories: 0, or -EBUSY while processes are left. */
int nm_cg_remove(struct nm_cg *jc);

#endif
