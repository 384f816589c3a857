/*
 * jobrec.h — what storm-mm's shell keeps per job, keyed by job id: the
 * rank statuses its nodes' EXIT records brought (with each rank's usage),
 * whether this strobe master proposed the job's end or staging already,
 * and its launch timing.  Nothing here is
 * replicated state: the agreed parts (statuses) are rebuilt from the
 * agreed mailboxes on every replica alike.
 *
 * Any number of jobs: a chained hash table that grows with the live ones.
 * A record of an ended job keeps only its timing (`stormctl show` and the
 * launch benchmark read it), and the oldest such are dropped beyond
 * MMD_JOBS_ENDED_KEEP, so the table stays as large as the active jobs.
 */
#ifndef STORM_MMD_JOBREC_H
#define STORM_MMD_JOBREC_H

#include <stdint.h>

#include <storm_manager.h>

#define MMD_JOBS_ENDED_KEEP 4096
/* A proposal not applied after this many slices was lost (a full queue,
 * a moment without quorum): the strobe proposes it again. */
#define MMD_RETRY_SLICES 100


struct mmd_job {
	struct mmd_job *next; /* hash chain */
	uint32_t id;
	uint32_t ranks;         /* entries of status and usage */
	int32_t *status;        /* per rank: wait status, -1 until its EXIT */
	mm_usage_t *usage;
	uint32_t got;           /* ranks whose EXIT was taken */
	int exit_proposed;      /* JOB_EXITED proposed by this master */
	int staged_proposed;    /* JOB_STAGED proposed by this master */
	uint64_t exit_slice, staged_slice; /* ... at these slices */
	int ended;              /* terminal: kept for its timing only */
	uint64_t t_stage, t_staged, t_end; /* launch timing, monotonic ns */
	uint8_t hb_state;       /* as last listed (strobe.c, when the
				 * heartbeat cannot list every job) */
	uint64_t hb_changed;    /* slice hb_state last changed */
	/* the checkpoint epoch being taken: what its nodes reported
	 * (CKPT records), and the commit this master proposed */
	uint32_t ckpt_epoch;
	uint32_t ckpt_got;      /* nodes with every image written */
	uint32_t *ckpt_from;    /* ... their world ids (ckpt_got of them) */
	uint32_t ckpt_cap;
	uint64_t ckpt_bytes;
	uint32_t ckpt_stop_us;  /* the longest stop of a node */
	uint32_t ckpt_levels;   /* where every node's images are (AND) */
	int ckpt_proposed;
	uint64_t ckpt_slice;
	uint64_t ckpt_asked_ms; /* the strobe last asked for one (its
				 * interval), monotonic ms */
};

struct mmd_jobs {
	struct mmd_job **bucket;
	uint32_t nbuckets, n;
	uint32_t *ended;        /* ring of ended ids, oldest first */
	uint32_t ended_head, ended_n;
};

/* The record of job id, or NULL. */
struct mmd_job *mmd_jobs_find(struct mmd_jobs *t, uint32_t id);
/* ... created if missing; NULL only without memory. */
struct mmd_job *mmd_jobs_get(struct mmd_jobs *t, uint32_t id);
/* The rank statuses of j sized for ranks (all -1 at first); NULL without
 * memory. */
int32_t *mmd_job_status(struct mmd_job *j, uint32_t ranks);
/* Job id reached a terminal state: its statuses go, its timing and usage
 * stay until MMD_JOBS_ENDED_KEEP later ends. */
void mmd_jobs_ended(struct mmd_jobs *t, uint32_t id);
/* Jobs queued again (a restart, by hand or after a node's loss): what
 * their run before reported is void, and they are staged anew. */
void mmd_jobs_requeued(struct mmd_jobs *t, const mm_state_t *st);
/* A new strobe master proposes everything again (level-triggered). */
void mmd_jobs_master_reset(struct mmd_jobs *t);
/* Every record, for shutdown. */
void mmd_jobs_free(struct mmd_jobs *t);
/* Records held (tests, statistics). */
uint32_t mmd_jobs_count(const struct mmd_jobs *t);

/* The agreed part a joiner needs, in the snapshot: the EXIT statuses and
 * usage taken so far of jobs still holding PEs in st (the boxes that
 * brought them are acknowledged and will not come again).
 *   u32 count | count x (u32 job | u32 ranks | ranks x (i32 status |
 *   u64 utime_us | u64 stime_us | u64 maxrss_kib)), little endian */
size_t mmd_jobs_snap_size(struct mmd_jobs *t, const mm_state_t *st);
void mmd_jobs_snap_encode(struct mmd_jobs *t, const mm_state_t *st,
			  uint8_t *out);
/* Check p (len bytes) and, if whole, take its statuses into the records.
 * @return 0, -STORM_EPROTO (err filled), -ENOMEM. */
int mmd_jobs_snap_decode(struct mmd_jobs *t, const uint8_t *p, size_t len,
			 char *err, size_t errlen);

#endif
