/*
 * strobe.h — what storm-mm's strobe master does at every slice boundary.
 *
 *  1. take the nodes' output mailboxes (mailbox.h)
 *  2. view -> NODE_DOWN / NODE_UP operations (fault detection), and the
 *     binary search for nodes that miss heartbeats
 *  3. TICK (schedules pending jobs), when it can change something
 *  4. termination: one COMPARE-AND-WRITE per running job of the active
 *     row over its nodes ("its done slot == job id" everywhere) -> JOB_EXITED
 *  5. launch: file staging (stage.h)
 *  6. multicast the heartbeat block
 *
 * Between two slices, micro_slices - 1 micro-slice boundaries only collect
 * events (1 and 4): what the nodes report is seen within a micro-slice,
 * while commands still go out once a slice.  Everything it finds goes out
 * as proposals (hooks.propose); it reads the state, never changes it.
 *
 * The idle strobe: when nothing here waits for a slice (no staging, no
 * job ending, no gang switch to come, no TICK wanted) and one
 * COMPARE-AND-WRITE finds gv_quiet 1 on every node, the timer is re-armed
 * to one boundary every idle_slices slices (on the same grid) and the
 * blocks carry ST_HB_IDLE; a node's ST_EV_WAKE, a mailbox, or any agreed
 * operation but a TICK brings the strobe back from the next boundary.
 */
#ifndef STORM_MMD_STROBE_H
#define STORM_MMD_STROBE_H

#include <stdint.h>

#include <storm_manager.h>
#include <storm_primitives.h>
#include <storm_proto.h>
#include <storm_replication.h>

#include "caw.h"
#include "jobrec.h"
#include "mailbox.h"
#include "metrics.h"
#include "pmi.h"
#include "stage.h"
#include "stats.h"

struct mmd_strobe_hooks {
	void (*propose)(void *ctx, const mm_op_t *op);
	/* the configuration's scheduler settings (a new master proposes
	 * them if the replicated ones differ) */
	void (*sched_conf)(void *ctx, mm_sched_conf_t *c);
	void *ctx;
};

/* Slices a heartbeat lists a job whose state changed, when not every
 * job fits one block (docs/manager.md). */
#define MMD_HB_FRESH_SLICES 4
/* Up to this many nodes the heartbeat goes as one single-destination
 * transfer (a PUT: two messages) per node rather than one multicast over
 * the tree (four per node): with the fan-out of 8 that tree is flat
 * anyway, so nothing scales worse, and each node manager wakes once per
 * slice instead of twice.  The heartbeat is level-triggered state (the
 * current slice, row and job list), so a node that got slice k's and one
 * that did not (the master died between two PUTs) agree again at k + 1. */
#define MMD_HB_PUT_MAX 8
/* A block equal to the last full one but for its slice is signalled
 * ST_EV_HB_TICK, which idle node managers sleep through; a full one
 * (ST_EV_HB) goes at least every this many slices, and at least 8 times
 * per heartbeat timeout, so each node manager still applies heartbeats
 * well within it (check_strobe compares its applied slice). */
#define MMD_HB_FULL_MAX 32
/* Slices between two looks at the nodes' gv_quiet while some are busy
 * (one COMPARE-AND-WRITE over the nodes each), and after a wake: MIN,
 * doubled up to MAX after each idle spell shorter than SHORT slices (a
 * strobe woken that soon costs more than it saved: a block each way, a
 * wake, a compare), back to MIN after one of 4 x SHORT or more. */
#define MMD_IDLE_PROBE_MIN 2
#define MMD_IDLE_PROBE_MAX 64
#define MMD_IDLE_SHORT 4

struct mmd_strobe {
	/* set once */
	const st_config_t *cfg;
	const st_layout_t *lay;
	const char *name;          /* this manager's */
	struct mmd_jobs *jobs;
	struct mmd_mailbox *mbox;
	struct mmd_pmi *pmi;       /* PMI stores down to the nodes (or NULL) */
	struct mmd_strobe_hooks hooks;
	uint32_t nworld;
	uint64_t t0_ns;
	/* the machine (mmd_strobe_set_world) */
	sp_world_t *w;
	uint8_t *gmem;
	/* parts */
	struct mmd_strobe_clock clk;
	struct mmd_stats stats;
	struct mmd_caw caw;
	struct mmd_stage stage;
	/* heartbeat */
	int hb_owed;           /* a slice passed while it was in flight: send
				* the current one as soon as it completes */
	int hb_kicked;         /* the one in flight is a mid-slice launch */
	uint64_t hb_done_slice; /* last heartbeat every node got */
	uint32_t hb_pending;   /* its transfers not yet completed */
	uint32_t hb_posted;    /* nodes it went to as a posted PUT */
	int hb_rc;             /* the first failure among them, or 0 */
	uint8_t *hb;
	uint8_t *hb_full;      /* the last block sent as ST_EV_HB */
	size_t hb_full_len;    /* its bytes, 0 for none (send the next so) */
	uint64_t hb_full_slice; /* its slice */
	st_hb_job_t *hb_list;  /* st_hb_capacity(lay->hb_len) */
	uint32_t hb_cap;
	uint32_t sweep;        /* next id of the sweep, when jobs overflow */
	uint64_t hb_sweeps;    /* sweeps completed (statistics) */
	/* jobs holding PEs, ascending (mmd_strobe_active) */
	uint32_t *active, nactive, active_cap;
	uint64_t active_gen;
	int active_valid;
	int active_failed;     /* no memory for the list: no heartbeat */
	/* the view */
	sp_nodeset_t *live, *tmp, *one;
	uint8_t *seen;          /* per world id: was in a view once */
	uint64_t *joined;       /* per world id: sp_view_joined() last seen */
	uint64_t *joined_slice; /* per world id: slice it came UP */
	int world_stale;       /* out of the group: the machine must be
				* joined again before it may be master */
	/* TICK */
	int tick_wanted, tick_inflight;
	uint64_t tick_last_ms;
	uint64_t strobe_checked; /* slice of the last missed-heartbeat search */
	/* the idle strobe */
	int timer_fd;          /* the strobe's timerfd (mmd_strobe_set_timer) */
	int idle;
	uint64_t idle_every;   /* slices per boundary while idle */
	uint64_t idle_next_ns; /* the next idle boundary's nominal time */
	uint64_t idle_probe;   /* slice from which nodes' gv_quiet is looked at */
	uint64_t idle_delay;   /* ... after a wake or a failed look */
	uint64_t idle_since;   /* slice the idle spell began */
	uint64_t idle_entered, idle_woken; /* times (statistics) */
};

int mmd_strobe_init(struct mmd_strobe *sb, const st_config_t *cfg,
		    const st_layout_t *lay, const char *name,
		    struct mmd_jobs *jobs, struct mmd_mailbox *mbox,
		    const struct mmd_strobe_hooks *hooks);
void mmd_strobe_fini(struct mmd_strobe *sb);
/* The strobe's timerfd, periodic at a micro-slice: the idle strobe
 * re-arms it. */
void mmd_strobe_set_timer(struct mmd_strobe *sb, int fd);
/* The machine was joined (w, its global memory) or left (NULL). */
void mmd_strobe_set_world(struct mmd_strobe *sb, sp_world_t *w,
			  uint8_t *gmem);
/* This replica becomes (or stops being) the strobe master. */
void mmd_strobe_master(struct mmd_strobe *sb, const mm_state_t *st,
		       rp_replica_t *rp, int master);
/* The strobe timer fired n times: a micro-slice or a slice boundary. */
void mmd_strobe_timer(struct mmd_strobe *sb, const mm_state_t *st,
		      rp_replica_t *rp, int fd, uint64_t n);
/* The machine's notify fd is readable: events, mailboxes, completions. */
void mmd_strobe_notify(struct mmd_strobe *sb, const mm_state_t *st,
		       rp_replica_t *rp, int fd);
/* An operation was applied (rc its result): what the strobe waits for;
 * on the master a job whose files are on its nodes launches at once. */
void mmd_strobe_applied(struct mmd_strobe *sb, const mm_state_t *st,
			const mm_op_t *op, int rc);
/* Strobe master: propose the end of every job whose ranks all exited
 * (statuses agreed, every node's done slot set); at every micro-slice,
 * and when a job's last EXIT record was agreed. */
void mmd_strobe_ends(struct mmd_strobe *sb, const mm_state_t *st);
/* Its series for the metrics page: master, slices, heartbeat
 * lateness, launches. */
void mmd_strobe_metrics(const struct mmd_strobe *sb, struct mmd_text *t);
/* Strobe master: a PMI store to send down, now (a barrier's last
 * records were agreed). */
void mmd_strobe_pmi(struct mmd_strobe *sb, const mm_state_t *st);
/* The whole state was replaced (a snapshot restored). */
void mmd_strobe_state_replaced(struct mmd_strobe *sb);
/* Jobs holding PEs (STAGING, RUNNING), ascending, in sb->active. */
uint32_t mmd_strobe_active(struct mmd_strobe *sb, const mm_state_t *st);
/* Milliseconds since this storm-mm started (monotonic). */
uint64_t mmd_strobe_now_ms(const struct mmd_strobe *sb);

#endif
