/*
 * mmd.h — storm-mm, the Machine Manager daemon: the I/O shell around the
 * pure state machine (storm_manager.h).  Private to manager/mmd/.
 *
 * The shell is the only place with a clock, sockets and the machine: it
 * turns client requests and what the strobe learns from the nodes into
 * mm_ops, and derives from the state, every slice, the level-triggered
 * heartbeat it multicasts.  One libqb main loop; the primitives' progress
 * engine reaches it through sp_notify_fd().
 */
#ifndef STORM_MMD_H
#define STORM_MMD_H

#include <stdint.h>

#include <jansson.h>
#include <qb/qbloop.h>

#include <storm_manager.h>
#include <storm_primitives.h>
#include <storm_proto.h>
#include <storm_replication.h>

#define MMD_SLOT_EV 8 /* events 8..15: one per file-ring slot in flight */
#define MMD_MAX_INFLIGHT 8

struct mmd_client {
	struct mmd_client *next;
	struct mmd *mm;
	int fd;
	uint32_t uid, gid;
	int tcp;             /* over TCP: needs a MUNGE credential */
	uint64_t client_key; /* hash of (uid, the request's "client") */
	uint64_t seq;        /* the request's "seq" */
	uint64_t anon_seq;   /* requests without "client": own numbering */
	uint8_t hdr[ST_FRAME_HDR];
	uint32_t got, need; /* bytes of header+payload read / expected */
	uint8_t *buf;
	uint8_t *out;       /* frames not yet taken by the socket */
	size_t out_len, out_cap;
	uint32_t watch_job; /* run: streams this job's output, then END */
	uint32_t wait_up;   /* wait: reply once this many nodes are UP */
	uint32_t wait_job;  /* wait: reply once this job has ended */
	int wait_down;      /* wait_up counts nodes DOWN instead */
	uint64_t wait_until_ms;
	int closing;
};

/* The job whose files are being multicast (one at a time). */
struct mmd_stage {
	uint32_t job;         /* 0: none */
	uint8_t *stream;      /* manifest + every file, as chunk images */
	size_t len;           /* stream bytes (without the headers) */
	uint32_t total, next; /* chunks */
	int busy[MMD_MAX_INFLIGHT];
	uint64_t started_ns;
};

/* Batch output files of one job. */
/* Batch output files of one job: one pair, or one pair per rank when a
 * pattern names the rank (%r). */
struct mmd_out {
	struct mmd_out *next;
	uint32_t job, rank; /* rank UINT32_MAX: the job's shared files */
	int fd[2];
};

/* A client's write waiting to be applied and durable. */
enum { MMD_REQ_SUBMIT = 1, MMD_REQ_RUN, MMD_REQ_CANCEL };
struct mmd_req {
	struct mmd_req *next;
	struct mmd_client *c; /* NULL once the client went away */
	int kind;
	uint32_t job;         /* cancel: the job */
};

/* Strobe statistics (mmd_stats.c): the strobe master's slices since the
 * last reset.  A histogram is log-linear in us: exact below 64, then 32
 * buckets per power of two, up to 2^32 us. */
#define MMD_STATS_BUCKETS 896
struct mmd_hist {
	uint64_t n, sum_us, max_us;
	uint32_t b[MMD_STATS_BUCKETS];
};
struct mmd_stats {
	uint64_t period_ns;       /* the timer's interval; 0: not anchored */
	uint64_t anchor_ns;       /* nominal time of expiration anchor_micro */
	uint64_t anchor_micro;
	uint64_t boundary_ns;     /* the latest slice boundary's nominal time */
	uint64_t pending_ns;      /* ... of the heartbeat in flight; 0: none */
	uint64_t pending_sent_ns; /* when that heartbeat was sent */
	uint64_t pending_slice;
	uint64_t hb_late_seen;    /* mm->hb_late as last counted */
	uint64_t since_ns;        /* the window's start */
	uint64_t slices, missed, late;
	struct mmd_hist lateness; /* boundary -> every node has the heartbeat */
	struct mmd_hist wake;     /* boundary -> the timer handler runs */
	struct mmd_hist xfer;     /* heartbeat sent -> its completion seen */
};

/* Expected starts of the first pending jobs (mmd_client.c, for queue and
 * show): replaying the scheduler costs O(live jobs) per round, so one
 * result serves every request until the state changes, and is computed
 * again at most once a second (a queue polled during a burst must not
 * stall the strobe). */
#define MMD_EXPECT_MAX 256
struct mmd_expect {
	int valid;        /* computed once at least */
	uint64_t applied; /* the applied index it was computed at */
	uint64_t at_ms;   /* mmd_now_ms() then */
	int n;            /* entries, in queue (id) order */
	uint32_t id[MMD_EXPECT_MAX];
	uint64_t start_ms[MMD_EXPECT_MAX]; /* state time; 0: unknown */
};

struct mmd {
	st_config_t cfg;
	/* replication (mmd_repl.c) */
	rp_replica_t *rp;
	rp_status_t rs;           /* as last reported */
	int master;               /* this replica drives the strobe */
	struct mmd_req *reqs;
	uint8_t *opbuf;           /* RP_OP_MAX: one encoded operation */
	char state_path[1100];
	int tick_wanted, tick_inflight;
	uint64_t tick_last_ms, announce_ms;
	uint64_t *box_cast;       /* per world id: box multicast, not agreed */
	uint32_t *exit_proposed;  /* per job slot: JOB_EXITED proposed */
	uint32_t staged_proposed; /* JOB_STAGED proposed for this job */
	int exit_code;
	int was_synced, world_stale, world_polled;
	int first_start;          /* nothing applied yet: manager 0 founds */
	uint64_t join_since_ms;   /* trying to join the machine since */
	uint64_t caw_stalled;
	uint32_t *active, nactive, active_cap; /* mmd_active() */
	uint64_t active_gen;
	int active_valid;     /* slice in which a compare timed out */
	st_layout_t lay;
	const st_host_t *host;
	sp_world_t *w;
	uint8_t *gmem;
	mm_state_t *st;
	qb_loop_t *loop;
	int nfd, unix_fd, tcp_fd;
	char sock_path[1100];
	uint32_t nworld;
	uint64_t slice, t0_ns, hb_late;
	uint64_t micro, micro_late; /* micro-slices so far, and missed */
	int timer_fd;             /* the strobe: a periodic timerfd */
	int hb_inflight;
	int hb_owed;           /* a slice passed while it was in flight: send
				 * the current one as soon as it completes */
	uint64_t hb_sent_slice, hb_done_slice; /* last heartbeat everyone got */
	uint8_t *hb;
	st_hb_job_t *hb_list; /* ST_HB_MAX_JOBS, built every slice */
	uint64_t *box_seq;   /* per world id: last box taken */
	int64_t *ack;        /* per world id: the seq being acked */
	int32_t **status;    /* per job slot: rank statuses from EXIT */
	uint32_t *status_job, *status_got;
	/* per job slot: launch timing (measurement only, not replicated) */
	uint64_t *t_stage, *t_staged, *t_end;
	struct mmd_stage stage;
	struct mmd_client *clients;
	struct mmd_out *outs;
	sp_nodeset_t *live, *tmp;
	uint8_t *seen;       /* per world id: was in a view once */
	uint64_t *joined;    /* per world id: sp_view_joined() last seen */
	uint64_t *joined_slice; /* per world id: slice it came UP */
	struct mmd_stats stats;  /* the strobe's (mmd_stats.c) */
	struct mmd_expect expect; /* queue's expected starts (mmd_client.c) */
};

/* mmd_client.c */
int mmd_listen(struct mmd *mm, char *err, size_t errlen);
void mmd_close_listeners(struct mmd *mm);
void mmd_client_free_all(struct mmd *mm);
/* a job produced output / ended: tell who watches it */
void mmd_client_output(struct mmd *mm, uint32_t job, uint32_t rank,
		       int stream, const uint8_t *data, uint32_t len);
void mmd_client_job_ended(struct mmd *mm, const mm_job_t *j);
json_t *mmd_job_json(struct mmd *mm, const mm_job_t *j);
int mmd_apply(struct mmd *mm, mm_op_t *op, mm_result_t *res);
void mmd_client_reap(struct mmd *mm);
void mmd_client_waits(struct mmd *mm);
void mmd_job_ended(struct mmd *mm, const mm_job_t *j);

/* mmd_main.c */
int mmd_world_open(struct mmd *mm, int may_found, char *err,
		   size_t errlen);
void mmd_world_rejoin(struct mmd *mm);

/* mmd_repl.c */
int mmd_repl_open(struct mmd *mm, char *err, size_t errlen);
int mmd_repl_start(struct mmd *mm, char *err, size_t errlen);
void mmd_repl_close(struct mmd *mm);
int mmd_propose_client(struct mmd *mm, struct mmd_client *c, int kind,
		       const mm_op_t *op, mm_result_t *res);
void mmd_propose(struct mmd *mm, const mm_op_t *op);
/* mmd_main.c: the configuration's scheduler settings; a new strobe
 * master proposes them if the replicated ones differ */
void mmd_sched_conf(const struct mmd *mm, mm_sched_conf_t *c);
void mmd_sched_apply(struct mmd *mm);
void mmd_client_gone(struct mmd *mm, struct mmd_client *c);
int mmd_on_repl(int32_t fd, int32_t revents, void *data);
void mmd_repl_tick(struct mmd *mm);
/* mmd_client.c: a write of c's is applied (or failed) */
void mmd_client_answer(struct mmd *mm, struct mmd_client *c, int kind,
		       uint32_t job, const mm_result_t *res);

/* mmd_slice.c */
void mmd_box_agreed(struct mmd *mm, uint32_t node, const uint8_t *box,
		    size_t boxlen);
void mmd_master_changed(struct mmd *mm, int master);
uint32_t mmd_active(struct mmd *mm);
int mmd_on_timer(int32_t fd, int32_t revents, void *data);
void mmd_check_view(struct mmd *mm);
int mmd_on_notify(int32_t fd, int32_t revents, void *data);
void mmd_stage_free(struct mmd *mm);
uint64_t mmd_now_ms(struct mmd *mm);
uint64_t mmd_mono_ns(void);

/* mmd_stats.c — the strobe master's slice statistics.  Main loop only;
 * every hook returns at once on a replica that is not the master. */
/* The strobe timer fd fired n times (mm->micro already counts them). */
void mmd_stats_timer(struct mmd *mm, int fd, uint64_t n);
/* heartbeat() ran for this slice: sent, or skipped (mm->hb_late). */
void mmd_stats_sent(struct mmd *mm);
/* The heartbeat's local completion event, with its result rc. */
void mmd_stats_hb_done(struct mmd *mm, int rc);
/* The statistics since the last reset as a new JSON object (the
 * `managers` reply's "strobe"; docs/protocol.md 5.8); NULL without
 * memory. */
json_t *mmd_stats_json(struct mmd *mm);
/* Starts a new window: counters and histogram to zero. */
void mmd_stats_reset(struct mmd *mm);

#endif
