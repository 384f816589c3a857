/*
 * nm.h — storm-nm's context, shared by its files (private to node/).
 *
 * One libqb main loop owns everything; the primitives' progress engine
 * reaches it only through sp_notify_fd().  Things sent to the manager leave
 * only when a heartbeat arrives: events from nodes happen at slice
 * boundaries.
 */
#ifndef STORM_NM_H
#define STORM_NM_H

#include <stdint.h>
#include <sys/types.h>

#include <qb/qbloop.h>

#include <storm_primitives.h>
#include <storm_proto.h>

#include "identity.h"

struct nm_rank {
	uint32_t rank;
	pid_t pid;         /* 0 once reaped */
	int fd[2];         /* stdout, stderr read ends; -1 at EOF */
	int32_t status;    /* wait status once reaped */
	uint64_t utime_us, stime_us, maxrss_kib; /* wait4()'s, once reaped */
};

struct nm_job {
	struct nm_job *next;
	struct nm *nm;
	uint32_t id;
	st_manifest_t *m;
	char dir[1200];
	int written;       /* files on the ramdisk */
	int started;
	int stopped;       /* its ranks were last sent SIGSTOP (gang.c) */
	int sig_warned;    /* a failed stop/continue was logged (gang.c) */
	uint8_t want;      /* what it must be now: ST_HB_STAGING/RUN/STOP,
			    * from its last listing and the active row */
	uint8_t listed;    /* as last listed: ST_HB_STAGING or ST_HB_ACTIVE */
	uint16_t row;      /* its gang row, as last listed */
	uint32_t done_slot; /* its done gvar, as last listed */
	int grace;         /* 1 until first listed: one unlisted heartbeat,
			    * sent before its staging began, is forgiven */
	int seen;          /* listed in the heartbeat being applied */
	int reported;      /* EXIT records queued */
	int done;          /* done gvar set */
	uint32_t nlocal;
	struct nm_rank *ranks;
	struct nm_identity *ident; /* its user here (NULL: a version-1
				    * manifest, run as the daemon) */
};

struct nm {
	st_config_t cfg;
	st_layout_t lay;
	const st_host_t *host;
	sp_world_t *w;
	uint8_t *gmem;
	qb_loop_t *loop;
	int nfd;
	int stopping;
	/* the job whose chunks are arriving */
	uint32_t stg_job, stg_next, stg_total, last_stg_job;
	uint8_t *stg;          /* the manifest, until it decodes */
	size_t stg_len, stg_cap;
	struct nm_job *stg_j;  /* its job, once the manifest decoded */
	uint32_t stg_file;     /* the file being written, at stg_foff */
	uint64_t stg_foff;
	int stg_fd, stg_failed;
	struct nm_job *jobs;
	/* output to the manager: records waiting, and the box in flight */
	uint8_t *pend;
	size_t pend_len, pend_cap;
	uint8_t *box;
	uint64_t box_seq;
	int box_inflight, box_acked, box_sent;
	uint32_t *box_done; /* jobs whose EXIT records are in the box */
	uint32_t box_ndone, box_done_cap;
	uint64_t slice;
	st_hb_t hb;           /* the last heartbeat decoded (its jobs: room
			       * for st_hb_capacity(lay.hb_len)) */
	uint8_t *hb_copy;     /* lay.hb_len: the block, copied under the
			       * world's lock before it is decoded */
	sp_nodeset_t *live;   /* the view, when it changed */
	uint64_t view_epoch;
};

/* ring.c */
void nm_take_chunks(struct nm *nm);
void nm_stage_forget(struct nm *nm, struct nm_job *j);
/* gang.c: stop the started jobs whose want is ST_HB_STOP, then continue
 * the stopped ones whose want is ST_HB_RUN; no system call for a job
 * whose processes already match (main loop only) */
void nm_gang_switch(struct nm *nm);
/* launch.c */
int nm_job_start(struct nm *nm, struct nm_job *j, char *err, size_t errlen);
void nm_job_kill(struct nm *nm, struct nm_job *j);
void nm_reap(struct nm *nm);
void nm_job_remove_files(struct nm_job *j);
/* nm.c */
void nm_queue_rec(struct nm *nm, uint8_t type, uint32_t job, uint32_t rank,
		  const void *data, uint32_t len);
void nm_jobs_changed(struct nm *nm);
struct nm_job *nm_job_new(struct nm *nm, uint32_t id, st_manifest_t *m);
void nm_job_fail(struct nm *nm, struct nm_job *j, const char *why);

#endif
