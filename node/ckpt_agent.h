/*
 * ckpt_agent.h — storm-nm's checkpoint agent (docs/checkpoint.md §3): takes
 * the epochs the heartbeat orders of this node's part of a job with the
 * engine of ckpt/ (libstorm-ckpt), writes the images where the job's user
 * owns them, and hands the node manager each epoch's outcome to report.
 *
 * A capture stops the job's local ranks together (SIGSTOP, and a frozen
 * cgroup thawed meanwhile so that ptrace can act), holds each rank for
 * its state and copy-on-write snapshot, and lets the job run on; the
 * images are written by the agent's thread while it runs.  The node
 * manager's loop polls nm_ckpt_fd() and calls nm_ckpt_poll().
 *
 * Images: ROOT/job-J/epoch-E/rank-R.img, directories root's (0711), each
 * image the job owner's, mode 0600; with a buddy (L2) and a shared
 * directory (L3), a copy there too, made by the writer before the epoch
 * is reported written.  A job's next capture is a delta of
 * its last one here, up to CKPT_CHAIN deltas, then a full one again; the
 * chain before the previous full image is deleted.
 */
#ifndef STORM_NM_CKPT_AGENT_H
#define STORM_NM_CKPT_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include <ckpt.h>

struct nm_job;
struct nm_ckpt;
struct nm_buddy;

/* What the node manager saves of a job beside its ranks' images (a
 * BCS-MPI job: the engine's image and the segment's bytes).  held() is
 * called while the job's ranks are stopped, after they are held: 0 and
 * a malloc'd blob (the agent's then), written to the epoch's directory
 * as `name` (the job owner's, mode 0600; copied to L3 too), or -errno
 * with why (the epoch fails).  inherit: what the ranks got from their
 * launcher (ckpt_inherit). */
struct nm_ckpt_side {
	const char *name;
	int (*held)(void *ctx, struct nm_job *j, uint8_t **buf, size_t *len,
		    char *why, size_t whylen);
	void *ctx;
	struct ckpt_inherit inherit;
};

/* What one epoch did here. */
struct nm_ckpt_done {
	uint32_t job, epoch;
	int rc;                  /* 0: every local image written */
	uint64_t bytes;          /* of the images */
	uint32_t stop_us;        /* how long the local ranks were stopped */
	uint32_t levels;         /* where its images are: 1 L1, 4 L3 */
	uint64_t pages, dirty;   /* memory pages in them, and of those the
				  * ones written since the epoch before */
	char why[256];           /* rc: what failed, the rank named */
};

/* An agent writing below root (made if missing), and a copy below shared
 * (L3; NULL or "": none), for cluster (its name), chain deltas between
 * full images (0: every image full); 0 or -errno with why. */
int nm_ckpt_create(struct nm_ckpt **out, const char *root,
		   const char *shared, const char *cluster, uint32_t chain,
		   char *why, size_t whylen);
void nm_ckpt_destroy(struct nm_ckpt *a);

/* Whether epoch of j is new to the agent (not taken, not being taken). */
int nm_ckpt_wanted(const struct nm_ckpt *a, const struct nm_job *j,
		   uint32_t epoch);
/* Take epoch of j: 0, its ranks held and running on, the outcome to come
 * by nm_ckpt_poll(); or -errno with why, nothing left behind (the epoch
 * failed here). */
int nm_ckpt_start(struct nm_ckpt *a, struct nm_job *j, uint32_t epoch,
		  const struct nm_ckpt_side *side, char *why, size_t whylen);
/* The blob `name` saved with epoch of j (nm_ckpt_side), here (L1) or in
 * the shared directory (L3), read whole: 0 with *buf (malloc'd) and
 * *len, or -errno with why. */
int nm_ckpt_side_read(struct nm_ckpt *a, const struct nm_job *j,
		      uint32_t epoch, const char *name, uint8_t **buf,
		      size_t *len, char *why, size_t whylen);
/* L2 (buddy.h): every image written here is copied to a buddy, and a
 * restore's images missing here are fetched from the node that has
 * them.  NULL: neither.  Before the first epoch. */
void nm_ckpt_set_buddy(struct nm_ckpt *a, struct nm_buddy *b);
/* Whether what epoch of j needs here (its local ranks' chains, and the
 * blob side if not NULL) is at hand, in L1, L2 or L3: 1; 0 while it is
 * being fetched from the node that keeps it (call again later); -errno
 * with why when no node has it. */
int nm_ckpt_gather(struct nm_ckpt *a, struct nm_job *j, uint32_t epoch,
		   const char *side, char *why, size_t whylen);
/* The local ranks of j, started stopped at their exec and traced by the
 * calling thread (nm_launch_start, traced), made the processes of epoch
 * of j: their images found here (L1) or in the shared directory (L3),
 * each rank's chain back to its full image checked whole first.  0, or
 * -errno with why (the rank that failed is killed and reaped, pid 0; the
 * caller ends the rest). */
int nm_ckpt_restore(struct nm_ckpt *a, struct nm_job *j, uint32_t epoch,
		    char *why, size_t whylen);
/* A descriptor readable when an outcome is ready. */
int nm_ckpt_fd(const struct nm_ckpt *a);
/* An outcome: 1 and *d, or 0 when none is ready. */
int nm_ckpt_poll(struct nm_ckpt *a, struct nm_ckpt_done *d);
/* Captures being written. */
int nm_ckpt_busy(const struct nm_ckpt *a);
/* Job id is gone here: its tracking goes; its images stay for a
 * restart, and go linger_s later (nm_ckpt_sweep) unless it is back. */
void nm_ckpt_forget(struct nm_ckpt *a, uint32_t job);
/* One user's images here at most quota_bytes (0: no quota; an epoch
 * that passes it fails with EDQUOT); a gone job's images kept linger_s. */
void nm_ckpt_limits(struct nm_ckpt *a, uint64_t quota_bytes,
		    uint32_t linger_s);
/* Gone jobs' images past their linger deleted (at most once a second);
 * held(ctx, job): the job is here again. */
void nm_ckpt_sweep(struct nm_ckpt *a, int (*held)(void *, uint32_t),
		   void *ctx);

#endif
