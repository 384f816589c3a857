/*
 * mmd_main.c — storm-mm's start and stop: configuration, logging, the
 * machine (world id of this head node; the nodes join it), the state
 * machine over the configured compute nodes, the client listeners and the
 * strobe timer, all on one libqb main loop.
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

#include <qb/qblog.h>

#include "mmd.h"

static int on_signal(int32_t sig, void *data)
{
	struct mmd *mm = data;

	qb_log(LOG_NOTICE, "signal %d: stopping", sig);
	qb_loop_stop(mm->loop);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: storm-mm --config FILE --name MANAGER\n"
		"  Machine Manager of a Storm cluster (one head node).\n"
		"  Exit status: 0 stopped by a signal, 1 runtime failure,\n"
		"  2 usage or configuration error.\n");
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

		mmd_sched_conf(mm, &c);
		rc = mm_state_set_sched(mm->st, &c);
	}
	free(ids);
	free(cpus);
	free(names);
	return rc;
}

/* The scheduler settings of this replica's configuration (checked by
 * st_config_load: a known policy and placement, mpl only with gang, the
 * quantum a whole number of slices). */
void mmd_sched_conf(const struct mmd *mm, mm_sched_conf_t *c)
{
	c->policy = MM_POLICY_FCFS;
	c->placement = MM_PLACE_BUDDY;
	mm_policy_parse(mm->cfg.sched_policy, &c->policy);
	mm_placement_parse(mm->cfg.placement, &c->placement);
	c->mpl = mm->cfg.mpl ? mm->cfg.mpl : 1;
	c->quantum_slices = mm->cfg.quantum_us / mm->cfg.slice_us;
	if (!c->quantum_slices)
		c->quantum_slices = 1;
}

/* A new strobe master brings the replicated settings in line with its
 * configuration (an administrator changed it and restarted the
 * replicas): through the group, like any change.  Refused while rows
 * that would go still hold jobs; the log says so. */
void mmd_sched_apply(struct mmd *mm)
{
	mm_sched_conf_t want, have;
	mm_op_t op = { .code = MM_OP_SCHED, .sched = &want };

	mmd_sched_conf(mm, &want);
	mm_sched_get(mm->st, &have);
	if (!memcmp(&want, &have, sizeof(want)))
		return;
	qb_log(LOG_NOTICE, "scheduler settings from %s: policy %s, mpl %u, "
	       "quantum %u slices, placement %s (were %s, %u, %u, %s)",
	       mm->cfg.path, mm_policy_name(want.policy), want.mpl,
	       want.quantum_slices, mm_placement_name(want.placement),
	       mm_policy_name(have.policy), have.mpl, have.quantum_slices,
	       mm_placement_name(have.placement));
	mmd_propose(mm, &op);
}

/* The machine: manager 0 founds it (may_found: on the cluster's first
 * start, or after a long vain wait while the whole cluster was down);
 * otherwise a replica joins the running machine, whose root may be a node
 * manager by then, and never founds one that might split it.  A join
 * attempt waits JOIN_WAIT_MS: the main loop (and the clients this replica
 * serves) waits with it, so a failed attempt is retried at a later tick
 * rather than waited out here. */
#define JOIN_WAIT_MS 3000
#define FOUND_AFTER_MS 30000

int mmd_world_open(struct mmd *mm, int may_found, char *err, size_t errlen)
{
	sp_config_t *sc = NULL;
	size_t size;
	int boot = may_found && mm->host->world_id == 0, rc = 0;

	for (int expelled = 0;; expelled++) {
		rc = st_config_world(&mm->cfg, mm->host->world_id, !boot,
				     boot ? 1000 : JOIN_WAIT_MS, &sc, err,
				     errlen);
		if (!rc)
			rc = sp_open(sc, &mm->w, err, errlen);
		sp_config_destroy(sc);
		sc = NULL;
		/* a view that removes our previous incarnation can reach this
		 * one while it joins: join again, as a new incarnation */
		if (rc != -STORM_EEXPELLED || expelled == 1)
			break;
		qb_log(LOG_INFO, "joining again: %s", err);
	}
	if (rc)
		return rc;
	mm->gmem = sp_gmem(mm->w, &size);
	return 0;
}

/* Join the machine: once synced (a restarted replica must report to its
 * group first), and again after a cut that cost this replica its group
 * (its view of the machine is its own island then), before it may be
 * strobe master.  Called from the tick until it succeeds. */
void mmd_world_rejoin(struct mmd *mm)
{
	uint64_t now = mmd_now_ms(mm);
	char err[1024];
	int rc;

	if (mm->w)
		qb_log(LOG_NOTICE, "manager %s: joining the machine again "
		       "after losing the group", mm->host->name);
	if (mm->world_polled)
		qb_loop_poll_del(mm->loop, mm->nfd);
	mm->world_polled = 0;
	mmd_stage_free(mm);
	sp_close(mm->w);
	mm->w = NULL;
	if (!mm->join_since_ms)
		mm->join_since_ms = now ? now : 1;
	rc = mmd_world_open(mm, mm->first_start ||
			    now - mm->join_since_ms >= FOUND_AFTER_MS,
			    err, sizeof(err));
	if (rc) {
		qb_log(LOG_WARNING, "cannot join the machine yet (%s); trying "
		       "again", err);
		if (rc != -STORM_EUNREACH && rc != -STORM_EEXPELLED &&
		    rc != -ETIMEDOUT) {
			mm->exit_code = 1;
			qb_loop_stop(mm->loop);
		}
		return;
	}
	if (mm->first_start || now - mm->join_since_ms >= FOUND_AFTER_MS)
		mm->first_start = 0;
	mm->join_since_ms = 0;
	mm->nfd = sp_notify_fd(mm->w);
	qb_loop_poll_add(mm->loop, QB_LOOP_HIGH, mm->nfd, POLLIN, mm,
			 mmd_on_notify);
	mm->world_polled = 1;
	mm->world_stale = 0;
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
	struct mmd mm = { .unix_fd = -1, .tcp_fd = -1, .timer_fd = -1 };
	qb_loop_signal_handle sh;
	struct timespec ts;
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
	st_log_setup(&mm.cfg, "storm-mm");
	st_realtime(&mm.cfg, "storm-mm");
	mkdir(mm.cfg.run_dir, 0755);
	st_layout(&mm.cfg, &mm.lay);
	mm.nworld = mm.cfg.nmanagers + mm.cfg.nnodes;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mm.t0_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	mm.box_seq = calloc(mm.nworld, sizeof(*mm.box_seq));
	mm.box_cast = calloc(mm.nworld, sizeof(*mm.box_cast));
	mm.exit_proposed = calloc(ST_DONE_SLOTS, sizeof(uint32_t));
	if (!mm.box_seq || !mm.box_cast || !mm.exit_proposed ||
	    state_init(&mm)) {
		qb_log(LOG_ERR, "out of memory");
		rc = 1;
		goto out;
	}
	/* the durable state first: a replica that cannot use its file
	 * (another cluster's, another version's) stops before anything */
	if ((rc = mmd_repl_open(&mm, err, sizeof(err)))) {
		qb_log(LOG_ERR, "%s", err);
		fprintf(stderr, "storm-mm: %s\n", err);
		rc = rc == -STORM_ESTATE || rc == -STORM_ECONFIG ? 2 : 1;
		goto out;
	}
	rp_status(mm.rp, &mm.rs);
	/* The machine is joined once the group has synced this replica (see
	 * mmd_repl_tick): joining it can take a while, and a restarted
	 * replica must report to its group at once (a group that lost its
	 * last synced member waits for exactly this one). */
	mm.first_start = mm.rs.applied == 0;
	mm.world_stale = 1;
	mm.hb = calloc(1, mm.lay.hb_len);
	mm.hb_list = calloc(ST_HB_MAX_JOBS, sizeof(*mm.hb_list));
	mm.ack = calloc(mm.nworld, sizeof(*mm.ack));
	mm.seen = calloc(mm.nworld, 1);
	mm.joined = calloc(mm.nworld, sizeof(*mm.joined));
	mm.joined_slice = calloc(mm.nworld, sizeof(uint64_t));
	mm.status = calloc(ST_DONE_SLOTS, sizeof(*mm.status));
	mm.status_job = calloc(ST_DONE_SLOTS, sizeof(uint32_t));
	mm.status_got = calloc(ST_DONE_SLOTS, sizeof(uint32_t));
	mm.t_stage = calloc(ST_DONE_SLOTS, sizeof(uint64_t));
	mm.t_staged = calloc(ST_DONE_SLOTS, sizeof(uint64_t));
	mm.t_end = calloc(ST_DONE_SLOTS, sizeof(uint64_t));
	if (!mm.hb || !mm.hb_list || !mm.ack || !mm.seen || !mm.joined || !mm.joined_slice || !mm.status ||
	    !mm.status_job || !mm.status_got || !mm.t_stage ||
	    !mm.t_staged || !mm.t_end ||
	    sp_nodeset_create(mm.nworld, &mm.live) ||
	    sp_nodeset_create(mm.nworld, &mm.tmp)) {
		qb_log(LOG_ERR, "out of memory");
		rc = 1;
		goto out;
	}
	mm.loop = qb_loop_create();
	if ((rc = mmd_listen(&mm, err, sizeof(err)))) {
		qb_log(LOG_ERR, "%s", err);
		rc = 1;
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((rc = mmd_repl_start(&mm, err, sizeof(err)))) {
		qb_log(LOG_ERR, "%s", err);
		rc = 1;
		goto out;
	}
	{
		int fds[4], n = rp_fds(mm.rp, fds, 4);

		for (int i = 0; i < n; i++)
			qb_loop_poll_add(mm.loop, QB_LOOP_HIGH, fds[i], POLLIN,
					 &mm, mmd_on_repl);
	}
	mm.nfd = -1;
	qb_loop_signal_add(mm.loop, QB_LOOP_HIGH, SIGTERM, &mm, on_signal, &sh);
	qb_loop_signal_add(mm.loop, QB_LOOP_HIGH, SIGINT, &mm, on_signal, &sh);
	{
		uint64_t ns = (uint64_t)mm.cfg.slice_us * 1000u /
			      mm.cfg.micro_slices;
		struct itimerspec its = {
			.it_interval = { (time_t)(ns / 1000000000u),
					 (long)(ns % 1000000000u) },
			.it_value = { (time_t)(ns / 1000000000u),
				      (long)(ns % 1000000000u) },
		};

		mm.timer_fd = timerfd_create(CLOCK_MONOTONIC,
					     TFD_NONBLOCK | TFD_CLOEXEC);
		if (mm.timer_fd < 0 ||
		    timerfd_settime(mm.timer_fd, 0, &its, NULL) < 0) {
			qb_log(LOG_ERR, "cannot start the strobe timer: %s",
			       strerror(errno));
			rc = 1;
			goto out;
		}
		qb_loop_poll_add(mm.loop, QB_LOOP_HIGH, mm.timer_fd, POLLIN,
				 &mm, mmd_on_timer);
	}
	qb_log(LOG_INFO, "manager %s of cluster %s: %u node(s), slice %u us, "
	       "clients on %s%s%s", mm.host->name, mm.cfg.cluster,
	       mm.cfg.nnodes, mm.cfg.slice_us, mm.sock_path,
	       mm.host->listen[0] ? " and " : "", mm.host->listen);
	qb_loop_run(mm.loop);
	rc = mm.exit_code;
out:
	mmd_repl_close(&mm);
	mmd_client_free_all(&mm);
	mmd_close_listeners(&mm);
	if (mm.loop)
		qb_loop_destroy(mm.loop);
	mmd_stage_free(&mm);
	if (mm.timer_fd >= 0)
		close(mm.timer_fd);
	sp_close(mm.w);
	mm_state_destroy(mm.st);
	for (uint32_t k = 0; mm.status && k < ST_DONE_SLOTS; k++)
		free(mm.status[k]);
	while (mm.outs) {
		struct mmd_out *o = mm.outs;

		mm.outs = o->next;
		for (int s = 0; s < 2; s++)
			if (o->fd[s] >= 0)
				close(o->fd[s]);
		free(o);
	}
	free(mm.status);
	free(mm.status_job);
	free(mm.status_got);
	free(mm.t_stage);
	free(mm.t_staged);
	free(mm.t_end);
	free(mm.hb);
	free(mm.hb_list);
	free(mm.box_seq);
	free(mm.box_cast);
	free(mm.active);
	free(mm.exit_proposed);
	free(mm.ack);
	free(mm.seen);
	free(mm.joined);
	free(mm.joined_slice);
	sp_nodeset_destroy(mm.live);
	sp_nodeset_destroy(mm.tmp);
	st_config_free(&mm.cfg);
	qb_log_fini();
	return rc;
}
