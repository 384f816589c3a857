/*
 * main.c — storm-mm's start and stop, and the wiring of its modules on
 * one libqb main loop: configuration and logging; the durable replicated
 * state (repl.h) around the pure state machine; the machine (world id of
 * this head node; the nodes join it) and the strobe that drives it
 * (strobe.h, with file staging, mailboxes and statistics below it); the
 * client listeners (clients.h) and what requests mean (requests.h).
 * Modules call down; what comes up (an operation applied, a box agreed,
 * a request framed) reaches them through the hooks wired here.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <qb/qblog.h>

#include "backfill.h"
#include "fetch.h"
#include "clients.h"
#include "clock.h"
#include "jobrec.h"
#include "join.h"
#include "mailbox.h"
#include "metrics.h"
#include "repl.h"
#include "requests.h"
#include "strobe.h"

struct mmd {
	st_config_t cfg;
	const st_host_t *host;
	st_layout_t lay;
	uint32_t nworld;
	qb_loop_t *loop;
	mm_state_t *st;
	struct mmd_jobs jobs;
	struct mmd_mailbox mbox;
	struct mmd_pmi pmi;      /* PMI barriers' stores (pmi.h) */
	struct mmd_strobe sb;
	struct mmd_repl repl;
	struct mmd_clients clients;
	struct mmd_requests rq;
	struct mmd_stdin sin;    /* run clients' stdin to rank 0 (stdin.h) */
	struct mmd_backfill backfill;
	struct mmd_fetch fetch;    /* a job's inputs from the peer that took them */
	struct mmd_join join;
	sp_world_t *w;
	int nfd, world_polled;
	int timer_fd;
	int exit_code;
	int was_synced;
	int first_start;          /* nothing applied yet: manager 0 founds */
	uint64_t join_since_ms;   /* trying to join the machine since */
	uint64_t swept_ms;        /* the inputs spool last swept */
	struct mmd_metrics metrics; /* GET /metrics (metrics.h) */
	int last_master;          /* strobe master last reported, -1 none */
	uint64_t master_lost_ns;  /* when it was last seen to go, 0: not */
	uint64_t failover_ns;     /* the last time without a master */
	uint64_t master_changes;
};

static int on_signal(int32_t sig, void *data)
{
	struct mmd *mm = data;

	qb_log(LOG_NOTICE, "signal %d: stopping", sig);
	sd_notify(0, "STOPPING=1");
	qb_loop_stop(mm->loop);
	return 0;
}

/* The metrics page (metrics.h): this replica's, every module its
 * own series. */
static void metrics_render(void *ctx, struct mmd_text *t)
{
	struct mmd *mm = ctx;
	rp_status_t rs = { .master = -1 };

	if (mm->repl.rp)
		rp_status(mm->repl.rp, &rs);
	mmd_text_head(t, "storm_info", "gauge",
		      "This replica: its name and cluster.");
	mmd_text_printf(t, "storm_info{manager=\"%s\",cluster=\"%s\"} 1\n",
			mm->host->name, mm->cfg.cluster);
	mmd_text_head(t, "storm_replica_applied_index", "gauge",
		      "The last operation this replica applied.");
	mmd_text_printf(t, "storm_replica_applied_index %llu\n",
			(unsigned long long)rs.applied);
	mmd_text_head(t, "storm_replica_quorum", "gauge",
		      "1 while this replica is in the component with "
		      "quorum and holds the agreed state.");
	mmd_text_printf(t, "storm_replica_quorum %d\n",
			rs.primary && rs.synced);
	mmd_text_head(t, "storm_replica_members", "gauge",
		      "Replicas in this replica's group.");
	mmd_text_printf(t, "storm_replica_members %u\n", rs.nmembers);
	mmd_text_head(t, "storm_failover_seconds", "gauge",
		      "The last time this replica saw without a strobe "
		      "master, from its loss to a new one.");
	mmd_text_printf(t, "storm_failover_seconds %.6f\n",
			(double)mm->failover_ns / 1e9);
	mmd_text_head(t, "storm_master_changes_total", "counter",
		      "Strobe masters this replica has seen take over.");
	mmd_text_printf(t, "storm_master_changes_total %llu\n",
			(unsigned long long)mm->master_changes);
	mmd_metrics_state(t, mm->st);
	mmd_strobe_metrics(&mm->sb, t);
	mmd_requests_metrics(&mm->rq, t);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: storm-mm --config FILE --name MANAGER\n"
		"  Machine Manager of a Storm cluster (one head node).\n"
		"  Exit status: 0 stopped by a signal, 1 runtime failure,\n"
		"  2 usage or configuration error.\n");
}

static void stop(struct mmd *mm, int code)
{
	mm->exit_code = code;
	qb_loop_stop(mm->loop);
}

/* ---- the scheduler's settings ---------------------------------------------- */

/* The scheduler settings of this replica's configuration (checked by
 * st_config_load: a known policy and placement, mpl only with gang, the
 * quantum a whole number of slices). */
static void sched_conf(void *ctx, mm_sched_conf_t *c)
{
	const struct mmd *mm = ctx;

	c->policy = MM_POLICY_FCFS;
	c->placement = MM_PLACE_BUDDY;
	mm_policy_parse(mm->cfg.sched_policy, &c->policy);
	mm_placement_parse(mm->cfg.placement, &c->placement);
	c->mpl = mm->cfg.mpl ? mm->cfg.mpl : 1;
	c->quantum_slices = mm->cfg.quantum_us / mm->cfg.slice_us;
	if (!c->quantum_slices)
		c->quantum_slices = 1;
}

static int state_init(struct mmd *mm)
{
	uint32_t n = mm->cfg.nnodes, *ids = calloc(n, sizeof(*ids)),
		 *cpus = calloc(n, sizeof(*cpus));
	const char **names = calloc(n, sizeof(*names));
	int rc = -ENOMEM;

	if (ids && cpus && names) {
		for (uint32_t i = 0; i < n; i++) {
			ids[i] = mm->cfg.nodes[i].world_id;
			cpus[i] = mm->cfg.nodes[i].cpus;
			names[i] = mm->cfg.nodes[i].name;
		}
		rc = mm_state_create(mm->nworld, n, ids, names, cpus, &mm->st);
	}
	if (!rc) {
		mm_sched_conf_t c;

		sched_conf(mm, &c);
		rc = mm_state_set_sched(mm->st, &c);
	}
	free(ids);
	free(cpus);
	free(names);
	return rc;
}

/* ---- hooks: what comes up from the modules --------------------------------- */

static void propose(void *ctx, const mm_op_t *op)
{
	struct mmd *mm = ctx;

	if (mm->sb.clk.master)
		mmd_repl_propose(&mm->repl, op);
}

static void job_output(void *ctx, uint32_t job, uint32_t rank, int stream,
		       const uint8_t *data, uint32_t len)
{
	mmd_requests_output(&((struct mmd *)ctx)->rq, job, rank, stream, data,
			    len);
}

static int applied(void *ctx, const mm_op_t *op, const mm_result_t *res)
{
	struct mmd *mm = ctx;
	mm_job_t j;

	mmd_strobe_applied(&mm->sb, mm->st, op, res->rc);
	mmd_requests_applied(&mm->rq);
	mmd_stdin_step(&mm->sin, mm->w, mm->st);
	/* the shell's record of a job that ended keeps only its timing */
	if (op->job && !mm_job_get(mm->st, op->job, &j) &&
	    (j.state == MM_JOB_COMPLETED || j.state == MM_JOB_FAILED ||
	     j.state == MM_JOB_CANCELLED)) {
		mmd_jobs_ended(&mm->jobs, op->job);
		mmd_mailbox_forget(&mm->mbox, op->job);
		mmd_pmi_forget(&mm->pmi, op->job);
	}
	return 0;
}

static void answer(void *ctx, struct mmd_client *c, int kind, uint32_t job,
		   const mm_result_t *res)
{
	mmd_requests_answer(&((struct mmd *)ctx)->rq, c, kind, job, res);
}

static void box_agreed(void *ctx, uint32_t node, const uint8_t *box,
		       size_t len)
{
	struct mmd *mm = ctx;

	mmd_mailbox_agreed(&mm->mbox, mm->sb.w, mm->sb.clk.master, mm->st,
			   node, box, len);
	/* a job's last exit: its end need not wait for a micro-slice */
	if (mm->mbox.ends_ready) {
		mm->mbox.ends_ready = 0;
		mmd_strobe_ends(&mm->sb, mm->st);
	}
	/* a barrier's last entries: its store goes down now */
	if (mmd_pmi_busy(&mm->pmi))
		mmd_strobe_pmi(&mm->sb, mm->st);
}

static void repl_status(void *ctx, const rp_status_t *st)
{
	struct mmd *mm = ctx;
	int master;

	/* out of the group means out of the machine too (see
	 * world_rejoin): no strobe until it joined again */
	if (mm->was_synced && !st->synced)
		mm->sb.world_stale = 1;
	mm->was_synced = st->synced;
	mmd_push_view(&mm->rq.push, st->nmembers);
	master = st->synced && st->primary && !mm->sb.world_stale &&
		 st->master == (int)mm->host->world_id;
	/* failover, as this replica sees it: from the report without the
	 * old master to the one with a new master (metrics) */
	if (mm->last_master >= 0 && st->master != mm->last_master &&
	    !mm->master_lost_ns)
		mm->master_lost_ns = mmd_mono_ns();
	if (st->master >= 0 && st->master != mm->last_master) {
		mm->master_changes++;
		if (mm->master_lost_ns) {
			mm->failover_ns = mmd_mono_ns() - mm->master_lost_ns;
			mm->master_lost_ns = 0;
		}
	}
	mm->last_master = st->master;
	if (master != mm->sb.clk.master)
		mmd_strobe_master(&mm->sb, mm->st, mm->repl.rp, master);
	mmd_requests_waits(&mm->rq);
}

static void restored(void *ctx)
{
	mmd_strobe_state_replaced(&((struct mmd *)ctx)->sb);
}

static void client_request(void *ctx, struct mmd_client *c, int type,
			   const char *text, uint32_t len)
{
	mmd_requests_handle(&((struct mmd *)ctx)->rq, c, type, text, len);
}

static void client_input(void *ctx, struct mmd_client *c, const uint8_t *p,
			 uint32_t len)
{
	mmd_requests_input(&((struct mmd *)ctx)->rq, c, p, len);
}

static int on_inputs(int32_t fd, int32_t revents, void *data)
{
	(void)fd;
	(void)revents;
	mmd_requests_inputs_done(&((struct mmd *)data)->rq);
	return 0;
}

static int on_pushed(int32_t fd, int32_t revents, void *data)
{
	(void)fd;
	(void)revents;
	mmd_requests_pushed(&((struct mmd *)data)->rq);
	return 0;
}

static int on_fetched(int32_t fd, int32_t revents, void *data)
{
	(void)fd;
	(void)revents;
	mmd_fetch_drain(&((struct mmd *)data)->fetch);
	return 0;
}

static int on_auth(int32_t fd, int32_t revents, void *data)
{
	(void)fd;
	(void)revents;
	mmd_requests_auth_done(&((struct mmd *)data)->rq);
	return 0;
}

static void client_gone(void *ctx, struct mmd_client *c)
{
	mmd_repl_client_gone(&((struct mmd *)ctx)->repl, c);
	mmd_requests_client_gone(&((struct mmd *)ctx)->rq, c);
	mmd_stdin_gone(&((struct mmd *)ctx)->sin, c);
}

static void client_stdin(void *ctx, struct mmd_client *c, const uint8_t *p,
			 uint32_t len)
{
	struct mmd *mm = ctx;

	mmd_stdin_frame(&mm->sin, c, p, len);
	mmd_stdin_step(&mm->sin, mm->w, mm->st);
}

/* ---- the history a joiner lacks ------------------------------------------------ */

/* Ask for the next page while the history misses records (a replica
 * that joined by state transfer): called at every timer tick, a no-op
 * while a page is on its way. */
static void backfill_next(struct mmd *mm)
{
	const struct mmd_history *h = &mm->repl.hist;

	if (h->backfill_below && mm->repl.rs.synced)
		mmd_backfill_ask(&mm->backfill, h->backfill_below,
				 h->backfill_after);
}

static int on_backfill(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	const struct mmd_history *h = &mm->repl.hist;
	struct mmd_backfill_page p;
	int rc;

	(void)fd;
	(void)revents;
	if (!mmd_backfill_take(&mm->backfill, &p))
		return 0;
	/* a page asked for before a newer state transfer is stale */
	if (h->backfill_below && p.below == h->backfill_below &&
	    p.after == h->backfill_after) {
		rc = mmd_repl_history_page(&mm->repl, p.recs, p.n, p.last,
					   p.more);
		if (rc) {
			qb_log(LOG_ERR, "history backfill: cannot write a page "
			       "here: %s; exiting so that this replica "
			       "restarts", storm_strerror(rc));
			stop(mm, 1);
		} else if (!h->backfill_below) {
			qb_log(LOG_NOTICE, "history backfill done: the history "
			       "holds what the group's does");
		}
	}
	mmd_backfill_page_free(&p);
	backfill_next(mm);
	return 0;
}

/* ---- the machine -------------------------------------------------------------- */

/* Manager 0 founds the machine (may_found: on the cluster's first start,
 * or after a long vain wait while the whole cluster was down); otherwise
 * a replica joins the running machine, whose root may be a node manager
 * by then, and never founds one that might split it.  An attempt waits
 * seconds for a view: the join worker (join.h) waits, not the main loop,
 * which goes on serving clients and the group. */
#define FOUND_AFTER_MS 30000

static int may_found(const struct mmd *mm, uint64_t now)
{
	return mm->first_start || now - mm->join_since_ms >= FOUND_AFTER_MS;
}

static int on_notify(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;

	(void)revents;
	mmd_strobe_notify(&mm->sb, mm->st, mm->repl.rp, fd);
	mmd_stdin_acks(&mm->sin, mm->w);
	mmd_stdin_step(&mm->sin, mm->w, mm->st);
	return 0;
}

/* Join the machine: once synced (a restarted replica must report to its
 * group first), and again after a cut that cost this replica its group
 * (its view of the machine is its own island then), before it may be
 * strobe master.  Called from the timer until an attempt succeeds;
 * leaves the old world and asks the join worker for an attempt. */
static void world_rejoin(struct mmd *mm)
{
	uint64_t now = mmd_strobe_now_ms(&mm->sb);

	if (mmd_join_pending(&mm->join))
		return;
	if (mm->w)
		qb_log(LOG_NOTICE, "manager %s: joining the machine again "
		       "after losing the group", mm->host->name);
	if (mm->world_polled)
		qb_loop_poll_del(mm->loop, mm->nfd);
	mm->world_polled = 0;
	mmd_strobe_set_world(&mm->sb, NULL, NULL);
	sp_close(mm->w);
	mm->w = NULL;
	if (!mm->join_since_ms)
		mm->join_since_ms = now ? now : 1;
	mmd_join_ask(&mm->join, may_found(mm, now));
}

/* An attempt to join ended (the join worker's eventfd). */
static int on_joined(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	uint64_t now = mmd_strobe_now_ms(&mm->sb);
	sp_world_t *w = NULL;
	char err[1024];
	size_t size;
	rp_status_t st;
	int rc;

	(void)fd;
	(void)revents;
	if (!mmd_join_take(&mm->join, &w, &rc, err, sizeof(err)))
		return 0;
	if (rc) {
		qb_log(LOG_WARNING, "cannot join the machine yet (%s); trying "
		       "again", err);
		if (rc != -STORM_EUNREACH && rc != -STORM_EEXPELLED &&
		    rc != -ETIMEDOUT)
			stop(mm, 1);
		return 0;
	}
	/* the group was lost while the attempt ran: out of the group means
	 * out of the machine; the next tick after it synced joins again */
	if (!mm->repl.rs.synced || !mm->sb.world_stale) {
		sp_close(w);
		return 0;
	}
	mm->w = w;
	if (may_found(mm, now))
		mm->first_start = 0;
	mm->join_since_ms = 0;
	mmd_strobe_set_world(&mm->sb, mm->w, sp_gmem(mm->w, &size));
	mm->nfd = sp_notify_fd(mm->w);
	qb_loop_poll_add(mm->loop, QB_LOOP_HIGH, mm->nfd, POLLIN, mm,
			 on_notify);
	mm->world_polled = 1;
	mm->sb.world_stale = 0;
	rp_status(mm->repl.rp, &st);
	repl_status(mm, &st);
	return 0;
}

/* ---- the loop's events -------------------------------------------------------- */

static int on_repl(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	int rc;

	(void)fd;
	(void)revents;
	rc = mmd_repl_dispatch(&mm->repl);
	if (rc) {
		qb_log(LOG_ERR, "replication stopped (%s): exiting so that "
		       "this replica restarts and rejoins",
		       storm_strerror(rc));
		stop(mm, 1);
	}
	return 0;
}

/* The strobe's timerfd fired: one or more micro-slice boundaries passed
 * (a periodic kernel timer: no drift, and no polling of libqb's
 * millisecond timers in between).  The replication layer's seconds-scale
 * timers and the machine's rejoin ride on it. */
static int on_timer(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	uint64_t n = 0;

	(void)revents;
	if (read(fd, &n, sizeof(n)) != sizeof(n) || n == 0)
		return 0;
	if (mm->sb.world_stale && mm->repl.rs.synced)
		world_rejoin(mm);
	mmd_repl_tick(&mm->repl, mmd_strobe_now_ms(&mm->sb));
	mmd_strobe_timer(&mm->sb, mm->st, mm->repl.rp, fd, n);
	mmd_requests_waits(&mm->rq);
	mmd_clients_reap(&mm->clients);
	backfill_next(mm);
	if (mmd_strobe_now_ms(&mm->sb) - mm->swept_ms >= 5000) {
		/* inputs of jobs staged, ended or gone */
		mm->swept_ms = mmd_strobe_now_ms(&mm->sb);
		mmd_inputs_sweep(&mm->rq.inputs, mm->st);
	}
	return 0;
}

/* A worker thread started (rc, from its init): its eventfd (*efd, read
 * only now: the init that set it is another argument) joins the loop.
 * 0, or -1 with the reason logged. */
static int watch_worker(struct mmd *mm, int rc, const char *what,
			const int *efd, enum qb_loop_priority prio,
			qb_loop_poll_dispatch_fn fn)
{
	if (rc) {
		qb_log(LOG_ERR, "cannot start the %s worker: %s", what,
		       strerror(-rc));
		return -1;
	}
	qb_loop_poll_add(mm->loop, prio, *efd, POLLIN, mm, fn);
	return 0;
}

static int start_timer(struct mmd *mm)
{
	uint64_t ns = (uint64_t)mm->cfg.slice_us * 1000u /
		      mm->cfg.micro_slices;
	struct itimerspec its = {
		.it_interval = { (time_t)(ns / 1000000000u),
				 (long)(ns % 1000000000u) },
		.it_value = { (time_t)(ns / 1000000000u),
			      (long)(ns % 1000000000u) },
	};

	mm->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				      TFD_NONBLOCK | TFD_CLOEXEC);
	if (mm->timer_fd < 0 ||
	    timerfd_settime(mm->timer_fd, 0, &its, NULL) < 0) {
		qb_log(LOG_ERR, "cannot start the strobe timer: %s",
		       strerror(errno));
		return -1;
	}
	qb_loop_poll_add(mm->loop, QB_LOOP_HIGH, mm->timer_fd, POLLIN, mm,
			 on_timer);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"name", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = getenv("STORM_CONFIG"), *name = NULL;
	static struct mmd mm = { .timer_fd = -1, .nfd = -1, .last_master = -1,
				  .backfill = { .efd = -1 },
				  .join = { .efd = -1 } };
	qb_loop_signal_handle sh;
	char err[1024] = "";
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'n': name = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "storm-mm: --config FILE is required\n");
		usage(stderr);
		return 2;
	}
	if (st_config_load(path, &mm.cfg, err, sizeof(err))) {
		fprintf(stderr, "storm-mm: %s\n", err);
		return 2;
	}
	mm.host = name ? st_config_host(&mm.cfg, name) : &mm.cfg.managers[0];
	if (!mm.host || mm.host->world_id >= mm.cfg.nmanagers) {
		fprintf(stderr, "storm-mm: %s: no [manager %s] section\n",
			path, name);
		st_config_free(&mm.cfg);
		return 2;
	}
	if (st_log_setup(&mm.cfg, "storm-mm")) {
		st_config_free(&mm.cfg);
		return 2;
	}
	st_realtime(&mm.cfg, "storm-mm");
	/* its own directories, checked: the client socket's (searchable:
	 * users connect), the replicated state's (private) */
	{
		char sdir[1200];

		snprintf(sdir, sizeof(sdir), "%s/%s", mm.cfg.state_dir,
			 mm.host->name);
		if (st_key_check(&mm.cfg, err, sizeof(err)) ||
		    st_dir_ensure(mm.cfg.run_dir, 0755, err, sizeof(err)) ||
		    st_dir_ensure(mm.cfg.state_dir, 0700, err, sizeof(err)) ||
		    st_dir_ensure(sdir, 0700, err, sizeof(err))) {
			qb_log(LOG_ERR, "%s", err);
			fprintf(stderr, "storm-mm: %s\n", err);
			st_config_free(&mm.cfg);
			return 2;
		}
	}
	st_layout(&mm.cfg, &mm.lay);
	mm.nworld = mm.cfg.nmanagers + mm.cfg.nnodes;
	mm.clients.unix_fd = mm.clients.tcp_fd = mm.clients.spare_fd = -1;
	{
		const struct mmd_mailbox_hooks mh = {
			.output = job_output, .propose = propose, .ctx = &mm };
		const struct mmd_strobe_hooks sh_ = {
			.propose = propose, .sched_conf = sched_conf,
			.ctx = &mm };

		if (state_init(&mm) ||
		    mmd_mailbox_init(&mm.mbox, &mm.lay, mm.nworld,
				     mm.cfg.nmanagers, &mm.jobs, &mh) ||
		    mmd_strobe_init(&mm.sb, &mm.cfg, &mm.lay, mm.host->name,
				    &mm.jobs, &mm.mbox, &sh_) ||
		    mmd_pmi_init(&mm.pmi, &mm.lay, mm.nworld, propose, &mm)) {
			qb_log(LOG_ERR, "out of memory");
			rc = 1;
			goto out;
		}
		mm.mbox.pmi = &mm.pmi;
		mm.sb.pmi = &mm.pmi;
	}
	{
		/* the budget must hold at least the machine itself */
		uint8_t *img = NULL;
		size_t n = 0;

		if (!mm_state_encode(mm.st, &img, &n) &&
		    (uint64_t)n * 2 > (uint64_t)mm.cfg.state_budget_mib << 20) {
			fprintf(stderr, "storm-mm: %s: state_budget_mib = %u "
				"is less than twice one snapshot of this "
				"machine with no job (%zu bytes): raise it\n",
				mm.cfg.path, mm.cfg.state_budget_mib, n);
			free(img);
			rc = 2;
			goto out;
		}
		free(img);
	}
	if ((uint64_t)mm_matrix_cols(mm.st) * ST_DONE_ROWS >
	    mm.lay.done_slots) {
		/* the layout and the matrix must agree on the columns */
		qb_log(LOG_ERR, "internal: %u matrix columns, %u done slots",
		       mm_matrix_cols(mm.st), mm.lay.done_slots);
		rc = 1;
		goto out;
	}
	mm.rq = (struct mmd_requests){ .cfg = &mm.cfg, .host = mm.host,
				       .st = &mm.st, .repl = &mm.repl,
				       .sb = &mm.sb, .jobs = &mm.jobs,
				       .clients = &mm.clients, .sin = &mm.sin };
	/* chunk numbers of this incarnation: the wall clock's ms, far
	 * above any earlier incarnation's count */
	if (mmd_stdin_init(&mm.sin, &mm.lay, mm.nworld, mm.host->world_id,
			   &mm.clients, (uint64_t)time(NULL) << 24)) {
		qb_log(LOG_ERR, "out of memory");
		rc = 1;
		goto out;
	}
	/* the jobs' inputs: a private spool beside the state */
	{
		char idir[1300];

		snprintf(idir, sizeof(idir), "%s/%s/inputs",
			 mm.cfg.state_dir, mm.host->name);
		if ((rc = mmd_inputs_start(&mm.rq.inputs, idir,
					   mm.cfg.max_input_mib, err,
					   sizeof(err)))) {
			qb_log(LOG_ERR, "%s", err);
			fprintf(stderr, "storm-mm: %s\n", err);
			rc = 2;
			goto out;
		}
		mm.sb.stage.inputs = &mm.rq.inputs;
		mm.sb.stage.fetch = &mm.fetch;
	}
	/* the durable state first (its log is replayed into the modules
	 * above, wired before it): a replica that cannot use its file
	 * (another cluster's, another version's) stops before anything */
	{
		const struct mmd_repl_hooks rh = {
			.applied = applied, .answer = answer,
			.box = box_agreed, .status = repl_status,
			.restored = restored, .ctx = &mm };

		rc = mmd_repl_open(&mm.repl, &mm.cfg, mm.host, &mm.st,
				   &mm.mbox, &mm.jobs, &rh, err, sizeof(err));
	}
	if (rc) {
		qb_log(LOG_ERR, "%s", err);
		fprintf(stderr, "storm-mm: %s\n", err);
		rc = rc == -STORM_ESTATE || rc == -STORM_ECONFIG ? 2 : 1;
		goto out;
	}
	rp_status(mm.repl.rp, &mm.repl.rs);
	/* The machine is joined once the group has synced this replica (see
	 * on_timer): joining it can take a while, and a restarted replica
	 * must report to its group at once (a group that lost its last
	 * synced member waits for exactly this one). */
	mm.first_start = mm.repl.rs.applied == 0;
	mm.sb.world_stale = 1;
	mm.loop = qb_loop_create();
	{
		const struct mmd_clients_hooks ch = {
			.request = client_request, .input = client_input,
			.stdin_frame = client_stdin, .gone = client_gone,
			.ctx = &mm };

		if ((rc = mmd_clients_listen(&mm.clients, mm.loop, &mm.cfg,
					     mm.host, &ch, err,
					     sizeof(err)))) {
			qb_log(LOG_ERR, "%s", err);
			rc = 1;
			goto out;
		}
	}
	/* the worker threads: each hands its results over by an eventfd */
	if (watch_worker(&mm, 0, "inputs", &mm.rq.inputs.efd, QB_LOOP_MED,
			 on_inputs) ||
	    watch_worker(&mm, mmd_push_init(&mm.rq.push, &mm.cfg, mm.host,
					    &mm.rq.inputs),
			 "inputs push", &mm.rq.push.efd, QB_LOOP_MED,
			 on_pushed) ||
	    watch_worker(&mm, mmd_fetch_init(&mm.fetch, &mm.cfg, mm.host,
					     &mm.rq.inputs),
			 "inputs fetch", &mm.fetch.efd, QB_LOOP_LOW,
			 on_fetched) ||
	    watch_worker(&mm, mmd_auth_start(&mm.rq.auth,
					   mm.host->munge_socket[0] ?
					   mm.host->munge_socket :
					   mm.cfg.munge_socket),
			 "MUNGE", &mm.rq.auth.efd, QB_LOOP_MED, on_auth) ||
	    watch_worker(&mm, mmd_backfill_init(&mm.backfill, &mm.cfg,
						mm.host),
			 "history backfill", &mm.backfill.efd, QB_LOOP_LOW,
			 on_backfill) ||
	    watch_worker(&mm, mmd_join_init(&mm.join, &mm.cfg,
					    mm.host->world_id),
			 "machine join", &mm.join.efd, QB_LOOP_HIGH,
			 on_joined)) {
		rc = 1;
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((rc = mmd_repl_start(&mm.repl, err, sizeof(err)))) {
		qb_log(LOG_ERR, "%s", err);
		rc = 1;
		goto out;
	}
	{
		int fds[4], n = rp_fds(mm.repl.rp, fds, 4);

		for (int i = 0; i < n; i++)
			qb_loop_poll_add(mm.loop, QB_LOOP_HIGH, fds[i], POLLIN,
					 &mm, on_repl);
	}
	qb_loop_signal_add(mm.loop, QB_LOOP_HIGH, SIGTERM, &mm, on_signal, &sh);
	qb_loop_signal_add(mm.loop, QB_LOOP_HIGH, SIGINT, &mm, on_signal, &sh);
	if (start_timer(&mm)) {
		rc = 1;
		goto out;
	}
	mmd_strobe_set_timer(&mm.sb, mm.timer_fd);
	if (mm.host->metrics[0]) {
		char why[512];

		if (mmd_metrics_start(&mm.metrics, mm.loop, mm.host->metrics,
				      metrics_render, &mm, why, sizeof(why))) {
			fprintf(stderr, "storm-mm: %s: [manager %s] %s\n",
				mm.cfg.path, mm.host->name, why);
			qb_log(LOG_ERR, "%s", why);
			rc = 1;
			goto out;
		}
	}
	qb_log(LOG_INFO, "manager %s of cluster %s: %u node(s), slice %u us, "
	       "clients on %s%s%s", mm.host->name, mm.cfg.cluster,
	       mm.cfg.nnodes, mm.cfg.slice_us, mm.clients.sock_path,
	       mm.host->listen[0] ? " and " : "", mm.host->listen);
	/* Type=notify: serving clients from here (joining the machine goes
	 * on in the background) */
	sd_notifyf(0, "READY=1\nSTATUS=manager %s of cluster %s: clients on "
		   "%s%s%s", mm.host->name, mm.cfg.cluster,
		   mm.clients.sock_path, mm.host->listen[0] ? " and " : "",
		   mm.host->listen);
	qb_loop_run(mm.loop);
	rc = mm.exit_code;
out:
	mmd_join_fini(&mm.join);
	mmd_backfill_fini(&mm.backfill);
	mmd_fetch_fini(&mm.fetch);
	mmd_push_fini(&mm.rq.push);
	mmd_repl_close(&mm.repl);
	mmd_clients_close(&mm.clients);
	mmd_stdin_fini(&mm.sin);
	mmd_auth_stop(&mm.rq.auth);
	mmd_requests_fini(&mm.rq);
	if (mm.rq.inputs.dir[0])
		mmd_inputs_stop(&mm.rq.inputs);
	if (mm.loop)
		qb_loop_destroy(mm.loop);
	if (mm.timer_fd >= 0)
		close(mm.timer_fd);
	mmd_metrics_stop(&mm.metrics);
	mmd_strobe_fini(&mm.sb);
	mmd_pmi_fini(&mm.pmi);
	sp_close(mm.w);
	mmd_mailbox_fini(&mm.mbox);
	mmd_jobs_free(&mm.jobs);
	mm_state_destroy(mm.st);
	st_config_free(&mm.cfg);
	qb_log_fini();
	return rc;
}
