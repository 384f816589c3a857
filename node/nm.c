/*
 * nm.c — storm-nm, the node manager: joins the manager's world, takes the
 * file chunks multicast into its ring (counting them in gv_consumed, which
 * the manager's COMPARE-AND-WRITE reads for flow control), and at every
 * heartbeat — a slice boundary — reconciles its jobs with the block's
 * level-triggered list (start what must run, stop what must not run now,
 * kill and forget what is not listed) and sends its queued output and
 * exit records to the manager.
 *
 *   job here | listed RUN        | listed STOP      | STAGING | not listed
 *   ---------+-------------------+------------------+---------+------------
 *   staged   | start ranks       | keep, unstarted  | keep    | forget
 *   running  | keep              | SIGSTOP (gang.c) | keep    | kill, forget
 *   stopped  | SIGCONT (gang.c)  | keep             | keep    | kill, forget
 *   ended    | report, then done | report, then done| -       | forget
 *
 * "Not listed" counts only inside the block's window of job ids: a job
 * outside it keeps what it was last listed with (the manager sweeps the
 * window when more jobs hold PEs than one block lists; docs/manager.md).
 * RUN or STOP follows from the job's row and the block's active row.
 * (A job whose manifest has arrived but that no heartbeat has listed yet
 * survives one heartbeat that does not list it: see reconcile.)
 *
 * A context switch stops the outgoing jobs before it continues or starts
 * the incoming ones.  When nothing changes (every job RUN and running, as
 * at MPL 1) the switch sends no signal: no system call at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <qb/qbloop.h>
#include <qb/qblog.h>

#include <storm_primitives.h>
#include <storm_proto.h>

#include "bcs.h"
#include "bcs_ckpt.h"
#include "cgroup.h"
#include "buddy.h"
#include "ckpt_agent.h"
#include "gang.h"
#include "job.h"
#include "launch.h"
#include "outbox.h"
#include "pmi_node.h"
#include "output.h"
#include "quiet.h"
#include "relay.h"
#include "stdin.h"
#include "ring.h"

/* storm-nm's context: one libqb main loop owns everything; the
 * primitives' progress engine reaches it only through sp_notify_fd().
 * Things sent to the manager leave only when a heartbeat arrives: events
 * from nodes happen at slice boundaries. */
struct nm {
	st_config_t cfg;
	st_layout_t lay;
	const st_host_t *host;
	sp_world_t *w;
	qb_loop_t *loop;
	int nfd;
	int stopping;
	struct nm_launch launch;
	struct nm_cgroups cg;    /* where jobs' cgroups go */
	struct nm_ring ring;     /* staging: the job whose chunks arrive */
	struct nm_outbox out;    /* records to the managers */
	struct nm_relay relay;   /* batch lines to another node's file */
	struct nm_stdin sin;     /* rank 0's stdin from stormctl */
	struct nm_bcs bcs;       /* the BCS-MPI engine (bcs.h) */
	struct nm_pmi_node pmi;  /* PMI-1 jobs' servers (pmi_node.h) */
	int pmi_up;              /* PMI records wait: the next box goes as
				  * soon as the last is acknowledged */
	struct nm_ckpt *ckpt;    /* the checkpoint agent (ckpt_agent.h) */
	struct nm_buddy *buddy;  /* L2: copies for and from other nodes */
	uint32_t self;           /* this node's world id */
	struct nm_job *jobs;
	struct nm_job *dying;    /* unlisted, processes left: killing */
	uint64_t slice;
	st_hb_t hb;           /* the last heartbeat decoded (its jobs: room
			       * for st_hb_capacity(lay.hb_len)) */
	uint8_t *hb_copy;     /* lay.hb_len: the block, copied under the
			       * world's lock before it is decoded */
	sp_nodeset_t *live;   /* the view, when it changed */
	uint64_t view_epoch;
	struct nm_quiet quiet; /* nothing here to do at a slice: ticks
				* quiet, the strobe may idle (quiet.h) */
};

static void ticks_update(struct nm *nm);

/* A heartbeat block is read this much first: the header and 369 jobs */
#define NM_HB_PREFIX 4096u

static struct nm_job *job_by_id(struct nm *nm, uint32_t id)
{
	for (struct nm_job *j = nm->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

/* ---- records out ---------------------------------------------------------- */

/* The box carrying a job's last records is on its way: the job is done
 * here (the manager's termination compare reads this).  Safe before the
 * box is agreed: the manager ends a job only once every rank's EXIT
 * record is agreed as well, and a box lost on the way is sent again.
 * Marking it now, not at the acknowledgement, spares the end of every
 * job an acknowledgement's round trip and a wait for the compare. */
static void box_flush(struct nm *nm)
{
	const uint32_t *ends = NULL;
	uint32_t n = nm_outbox_flush(&nm->out, &ends);

	for (uint32_t i = 0; i < n; i++) {
		struct nm_job *j = job_by_id(nm, ends[i]);

		if (!j || !j->reported || j->done)
			continue;
		if (j->done_slot < nm->lay.done_slots)
			sp_gvar_write_local(nm->w, st_done_var(&nm->lay,
							       j->done_slot),
					    j->id);
		j->done = 1;
		qb_log(LOG_DEBUG, "job %u: done", j->id);
	}
}

/* A rank's output, where its job's routing says. */
static void rank_output(struct nm *nm, struct nm_job *j, uint32_t rank,
			int stream, const uint8_t *data, uint32_t len)
{
	uint32_t dest = 0;

	switch (nm_output_route(j, stream, &dest)) {
	case NM_ROUTE_FILE:
		nm_output_write(j, rank, stream, data, len);
		break;
	case NM_ROUTE_RELAY:
		nm_relay_put(&nm->relay, dest, stream ? ST_REC_STDERR
						     : ST_REC_STDOUT,
			     j->id, rank, data, len);
		nm_relay_flush(&nm->relay);
		break;
	default:
		nm_outbox_put(&nm->out, stream ? ST_REC_STDERR : ST_REC_STDOUT,
			      j->id, rank, data, len);
	}
}

/* A rank that runs again from an earlier point of its output: restored
 * from an epoch, or started over (a requeue).  The managers are told
 * where its output goes on from, and drop what it prints again
 * (docs/checkpoint.md §5); a file gets a line saying so instead, once
 * for a job-wide one. */
static void rank_rerun(struct nm *nm, struct nm_job *j, struct nm_rank *x)
{
	st_rerun_t r = { j->restore, { x->said[0], x->said[1] } };
	uint8_t rb[ST_RERUN_LEN];
	uint32_t dest = 0;
	char who[40], line[200];
	int n;

	switch (nm_output_route(j, 0, &dest)) {
	case NM_ROUTE_MANAGER:
		st_rerun_encode(rb, &r);
		nm_outbox_put(&nm->out, ST_REC_RERUN, j->id, x->rank, rb,
			      sizeof(rb));
		return;
	case NM_ROUTE_FILE:
		if (!nm_output_whole(j, 0)) { /* its own file */
			snprintf(who, sizeof(who), "job %u rank %u", j->id,
				 x->rank);
			break;
		}
		/* fall through */
	default:
		if (x->rank != 0)
			return;
		snprintf(who, sizeof(who), "job %u", j->id);
	}
	if (j->restore)
		n = snprintf(line, sizeof(line), "storm: %s restarted from "
			     "checkpoint epoch %u; what it printed after that "
			     "point may follow again\n", who, j->restore);
	else
		n = snprintf(line, sizeof(line), "storm: %s started over "
			     "(requeued); what it printed before may follow "
			     "again\n", who);
	if (n > 0 && (size_t)n < sizeof(line))
		rank_output(nm, j, x->rank, 0, (const uint8_t *)line,
			    (uint32_t)n);
}

/* Relayed lines from another node, for the job-wide file written here. */
static int relay_ready(void *ctx, const st_rec_t *rec)
{
	struct nm *nm = ctx;
	struct nm_job *j = job_by_id(nm, rec->job);
	int stream = rec->type == ST_REC_STDERR;

	if (!j || (rec->type != ST_REC_STDOUT && rec->type != ST_REC_STDERR))
		return -1;
	if (nm_output_whole(j, stream))
		return 1;
	/* its files open when it starts here: the lines wait till then */
	return !j->started && !j->reported ? 0 : -1;
}

static void relay_take(void *ctx, const st_rec_t *rec)
{
	struct nm *nm = ctx;
	struct nm_job *j = job_by_id(nm, rec->job);

	if (j)
		nm_output_write(j, rec->rank, rec->type == ST_REC_STDERR,
				rec->data, rec->len);
}

/* ---- jobs ---------------------------------------------------------------- */

/* Any of its processes left: a rank not reaped, or anything in its
 * cgroup (what left the rank's process group or daemonised). */
static int job_has_processes(const struct nm_job *j)
{
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->ranks[i].pid > 0)
			return 1;
	return nm_cg_populated(&j->cg);
}

static void unlink_job(struct nm_job **list, struct nm_job *j)
{
	for (struct nm_job **pp = list; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			return;
		}
}

/* A dying job whose processes are all gone: its cgroup removed, its
 * record freed.  1 when it went. */
static void bcs_close(struct nm *nm, struct nm_job *j);
static void pmi_close(struct nm *nm, struct nm_job *j);

static int dying_done(struct nm *nm, struct nm_job *j)
{
	if (job_has_processes(j) || nm_cg_remove(&j->cg))
		return 0;
	for (uint32_t i = 0; i < j->nlocal; i++)
		for (int s = 0; s < 2; s++)
			if (j->ranks[i].fd[s] >= 0) {
				qb_loop_poll_del(nm->loop, j->ranks[i].fd[s]);
				close(j->ranks[i].fd[s]);
				j->ranks[i].fd[s] = -1;
			}
	if (j->kill_timer)
		qb_loop_timer_del(nm->loop, j->kill_timer);
	unlink_job(&nm->dying, j);
	qb_log(LOG_DEBUG, "job %u: every process gone", j->id);
	bcs_close(nm, j);
	pmi_close(nm, j);
	nm_job_free(j);
	return 1;
}

static void on_kill_timer(void *data);

/* The grace period is over: everything of the job is killed; then its
 * end is looked for until the kernel has removed every process. */
static void job_kill_now(struct nm *nm, struct nm_job *j)
{
	qb_loop_timer_handle th;

	nm_launch_kill(j);
	nm_cg_kill(&nm->cg, &j->cg);
	if (dying_done(nm, j))
		return;
	j->kill_timer = 0;
	if (qb_loop_timer_add(nm->loop, QB_LOOP_MED, 20 * 1000000ull, j,
			      on_kill_timer, &th) == 0)
		j->kill_timer = th;
}

static void on_kill_timer(void *data)
{
	struct nm_job *j = data;
	struct nm *nm = j->nm_ctx;

	j->kill_timer = 0;
	if (!dying_done(nm, j))
		job_kill_now(nm, j);
}

/* The job is not listed any more (ended, cancelled, timed out, failed
 * elsewhere): its files go, and its processes get SIGTERM, then, after
 * kill_grace_ms, SIGKILL — every one in its cgroup, also those that left
 * their rank's process group. */
static void job_forget(struct nm *nm, struct nm_job *j)
{
	/* its pipes stay open while it dies: a process that writes as it
	 * handles SIGTERM must not die of SIGPIPE first */
	nm_ring_forget(&nm->ring, j->id);
	nm_ckpt_forget(nm->ckpt, j->id);
	nm_stdin_forget(&nm->sin, j->id);
	if (j->written)
		nm_ring_remove(j->dir, j->m);
	j->written = 0;
	unlink_job(&nm->jobs, j);
	j->next = nm->dying;
	nm->dying = j;
	j->dying = 1;
	if (!job_has_processes(j)) {
		if (!dying_done(nm, j))
			job_kill_now(nm, j); /* a cgroup that will not go */
		return;
	}
	qb_log(LOG_DEBUG, "job %u: SIGTERM to its processes, SIGKILL in "
	       "%u ms", j->id, nm->cfg.kill_grace_ms);
	nm_launch_signal(j, SIGTERM);
	nm_cg_signal(&j->cg, SIGTERM);
	if (j->stopped) { /* a stopped process acts on SIGTERM once let go */
		nm_cg_freeze(&j->cg, 0);
		nm_launch_signal(j, SIGCONT);
		nm_cg_signal(&j->cg, SIGCONT);
	}
	if (nm->cfg.kill_grace_ms == 0) {
		job_kill_now(nm, j);
		return;
	}
	{
		qb_loop_timer_handle th;

		if (qb_loop_timer_add(nm->loop, QB_LOOP_MED,
				      (uint64_t)nm->cfg.kill_grace_ms *
					      1000000ull,
				      j, on_kill_timer, &th) == 0)
			j->kill_timer = th;
		else
			job_kill_now(nm, j);
	}
}

static void job_fail(struct nm *nm, struct nm_job *j, const char *why)
{
	qb_log(LOG_ERR, "job %u: %s", j->id, why);
	nm_outbox_put(&nm->out, ST_REC_FAIL, j->id, 0, why,
		      (uint32_t)strlen(why));
	j->reported = 1;
	j->started = 1;
}

/* The OOM killer ended a process of the job here: the job fails with
 * that reason (once).  1 if so. */
static int job_check_oom(struct nm *nm, struct nm_job *j)
{
	struct nm_cg_usage u;
	char why[512];

	if (j->reported || !j->cg.made)
		return 0;
	nm_cg_usage(&nm->cg, &j->cg, &u);
	if (!u.oom_kills)
		return 0;
	if (j->m->mem_limit)
		snprintf(why, sizeof(why), "node %s: job %u: out of memory: "
			 "the kernel's OOM killer ended %llu of its "
			 "process(es) at its limit of %llu MiB (--mem)",
			 nm->host->name, j->id,
			 (unsigned long long)u.oom_kills,
			 (unsigned long long)(j->m->mem_limit >> 20));
	else
		snprintf(why, sizeof(why), "node %s: job %u: out of memory: "
			 "the kernel's OOM killer ended %llu of its "
			 "process(es)", nm->host->name, j->id,
			 (unsigned long long)u.oom_kills);
	job_fail(nm, j, why);
	return 1;
}

/* Every local rank reaped, its pipes drained, and none of its lines
 * still on the way to another node's file: queue the exits.  The
 * cgroup's figures count every process of the job here, also those the
 * ranks' wait4() does not see (escaped, daemonised): its CPU time beyond
 * the ranks' is added to the first local rank's, its peak memory is the
 * first rank's maximum RSS when larger (the node's peak). */
static void job_check_end(struct nm *nm, struct nm_job *j)
{
	struct nm_cg_usage u;
	uint64_t cpu = 0;

	if (!j->started || j->reported || !nm_job_ended(j) ||
	    nm_relay_holds(&nm->relay, j->id) || job_check_oom(nm, j))
		return;
	nm_cg_usage(&nm->cg, &j->cg, &u);
	for (uint32_t i = 0; i < j->nlocal; i++)
		cpu += j->ranks[i].utime_us + j->ranks[i].stime_us;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		const struct nm_rank *x = &j->ranks[i];
		st_exit_t e = { x->status, x->utime_us, x->stime_us,
				x->maxrss_kib };
		uint8_t b[ST_EXIT_LEN];

		if (i == 0 && u.cpu_us > cpu)
			e.utime_us += u.cpu_us - cpu;
		if (i == 0 && u.peak_kib > e.maxrss_kib)
			e.maxrss_kib = u.peak_kib;
		st_exit_encode(b, &e);
		nm_outbox_put(&nm->out, ST_REC_EXIT, j->id, x->rank, b,
			      sizeof(b));
	}
	if (j->nlocal == 0)
		nm_outbox_put(&nm->out, ST_REC_EXIT, j->id, UINT32_MAX, NULL,
			      0);
	j->reported = 1;
	qb_log(LOG_DEBUG, "job %u: ended here, reporting", j->id);
}

/* A rank was reaped, a pipe closed or relayed lines written out: a job
 * that has ended reports now, not at the next heartbeat — the manager
 * still reads it only at a slice boundary, one slice sooner.  A dying
 * job whose processes are gone goes. */
static void jobs_changed(struct nm *nm)
{
	struct nm_job *j, *next;

	for (j = nm->jobs; j; j = j->next)
		job_check_end(nm, j);
	for (j = nm->dying; j; j = next) {
		next = j->next;
		dying_done(nm, j);
	}
	box_flush(nm);
}

static int on_output(int32_t fd, int32_t revents, void *data)
{
	struct nm_job *j = data;
	struct nm *nm = NULL;
	uint8_t buf[16384];
	ssize_t n;

	(void)revents;
	for (uint32_t i = 0; i < j->nlocal; i++)
		for (int s = 0; s < 2; s++) {
			struct nm_rank *x = &j->ranks[i];

			if (x->fd[s] != fd)
				continue;
			nm = j->nm_ctx;
			n = read(fd, buf, sizeof(buf));
			if (n > 0) {
				/* a dying job's lines reach its files; the
				 * managers have forgotten it */
				x->said[s] += (uint64_t)n;
				if (!j->dying)
					rank_output(nm, j, x->rank, s, buf,
						    (uint32_t)n);
				else if (nm_output_route(j, s, &(uint32_t){ 0 })
					 == NM_ROUTE_FILE)
					nm_output_write(j, x->rank, s, buf,
							(size_t)n);
				ticks_update(nm);
				return 0;
			}
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			qb_loop_poll_del(nm->loop, fd);
			close(fd);
			x->fd[s] = -1;
			jobs_changed(nm);
			ticks_update(nm);
			return 0;
		}
	return 0;
}

/* Start a job's local ranks: who they run as, where they are, their
 * output files (as the user), then the processes. */
/* What a job's ranks wrote that their pipes hold now, sent on before a
 * record that ends the job: a rank's last lines often say why it failed,
 * and the manager forgets the job's output once it has failed.  At most
 * 1 MiB a pipe (a rank still writing cannot hold the failure back); EOF
 * and the rest are on_output's. */
static void job_drain_output(struct nm *nm, struct nm_job *j)
{
	uint8_t buf[16384];

	for (uint32_t i = 0; i < j->nlocal; i++)
		for (int s = 0; s < 2; s++) {
			struct nm_rank *x = &j->ranks[i];

			for (int k = 0; x->fd[s] >= 0 && k < 64; k++) {
				ssize_t n = read(x->fd[s], buf, sizeof(buf));

				if (n <= 0)
					break;
				x->said[s] += (uint64_t)n;
				rank_output(nm, j, x->rank, s, buf,
					    (uint32_t)n);
			}
		}
}

/* Jobs the BCS engine failed: their reason goes to the manager before
 * the exits it caused (the other ranks stop when they see it), after
 * what the ranks wrote so far. */
static void bcs_failures(struct nm *nm)
{
	char why[640];
	uint32_t id;
	struct nm_job *j;

	while (nm_bcs_failed(&nm->bcs, &id, why, sizeof(why)))
		if ((j = job_by_id(nm, id)) && !j->reported) {
			if (!j->dying)
				job_drain_output(nm, j);
			job_fail(nm, j, why);
		}
}

/* The value of name in the job's environment (stormctl puts
 * --bcs-trace and --bcs-replay there), or NULL. */
static const char *job_env(const struct nm_job *j, const char *name)
{
	size_t n = strlen(name);

	for (uint32_t i = 0; i < j->m->envc; i++)
		if (!strncmp(j->m->env[i], name, n) && j->m->env[i][n] == '=')
			return j->m->env[i] + n + 1;
	return NULL;
}

#define BCS_REPLAY_MAX (64u << 20) /* bytes of a replayed log */

/* --bcs-trace FILE and --bcs-replay FILE: opened with the job's user's
 * rights (never the daemon's), FILE an absolute path. */
static int bcs_trace_replay(struct nm *nm, struct nm_job *j, char *err,
			    size_t errlen)
{
	const char *trace = job_env(j, "STORM_BCS_TRACE");
	const char *replay = job_env(j, "STORM_BCS_REPLAY");
	const struct nm_identity *id = j->ident;
	uint32_t groups[NM_ID_GROUPS_MAX];
	int fd;

	if (!id)
		return 0;
	for (int i = 0; i < id->ngroups; i++)
		groups[i] = id->groups[i];
	/* the match log is the same on every node of the job (each makes
	 * every match): the node of rank 0 writes it */
	if (trace && trace[0] == '/' && j->m->rank_node &&
	    j->m->rank_node[0] == sp_node_id(nm->w)) {
		fd = st_open_as(trace, O_WRONLY | O_CREAT | O_TRUNC |
				O_NOFOLLOW | O_CLOEXEC, 0644, id->uid, id->gid,
				groups, id->ngroups);
		if (fd < 0) {
			snprintf(err, errlen, "node %s: job %u: cannot open "
				 "its BCS-MPI trace %s as uid %u: %s",
				 nm->host->name, j->id, trace,
				 (unsigned)id->uid, strerror(-fd));
			return fd;
		}
		nm_bcs_trace(&nm->bcs, j->id, fd);
	}
	if (replay && replay[0] == '/') {
		char *text = malloc(BCS_REPLAY_MAX);
		size_t len = 0;
		ssize_t r = 0;
		int rc;

		fd = st_open_as(replay, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0,
				id->uid, id->gid, groups, id->ngroups);
		if (fd < 0 || !text) {
			free(text);
			if (fd >= 0)
				close(fd);
			snprintf(err, errlen, "node %s: job %u: cannot read "
				 "its BCS-MPI replay log %s as uid %u: %s",
				 nm->host->name, j->id, replay,
				 (unsigned)id->uid,
				 strerror(fd < 0 ? -fd : ENOMEM));
			return fd < 0 ? fd : -ENOMEM;
		}
		while (len < BCS_REPLAY_MAX &&
		       (r = read(fd, text + len, BCS_REPLAY_MAX - len)) > 0)
			len += (size_t)r;
		close(fd);
		rc = r < 0 ? -errno : len == BCS_REPLAY_MAX ? -EFBIG :
		     nm_bcs_replay(&nm->bcs, j->id, text, len, err, errlen);
		free(text);
		if (rc == -EFBIG || (rc && r < 0))
			snprintf(err, errlen, "node %s: job %u: BCS-MPI replay "
				 "log %s: %s", nm->host->name, j->id, replay,
				 rc == -EFBIG ? "larger than 64 MiB" :
				 strerror(-rc));
		return rc;
	}
	return 0;
}

/* A BCS-MPI job's segment, which its ranks inherit (bcs.h). */
static int bcs_open(struct nm *nm, struct nm_job *j, char *err,
		    size_t errlen)
{
	uint32_t *ranks;
	int rc;

	if (j->m->mpi != ST_MPI_BCS && j->m->mpi != ST_MPI_BCS_ARRIVAL)
		return 0;
	if (!(ranks = malloc((j->nlocal ? j->nlocal : 1) * sizeof(*ranks)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < j->nlocal; i++)
		ranks[i] = j->ranks[i].rank;
	rc = nm_bcs_open(&nm->bcs, j->id, j->inc, j->restore != 0,
			 j->m->ranks, j->nlocal, ranks, j->m->rank_node,
			 j->ident ? j->ident->uid : getuid(),
			 j->ident ? j->ident->gid : getgid(),
			 j->m->mpi == ST_MPI_BCS_ARRIVAL ? BCS_ORDER_ARRIVAL :
			 BCS_ORDER_DETERMINISTIC, &j->bcs_fd, err, errlen);
	free(ranks);
	if (rc == 0)
		j->bcs_bell = nm_bcs_bell_fd(&nm->bcs, j->id);
	return rc ? rc : bcs_trace_replay(nm, j, err, errlen);
}

/* A BCS-MPI job's ranks all wait (bcs.h): its round now. */
static int on_bcs_bell(int32_t fd, int32_t revents, void *data)
{
	struct nm_job *j = data;
	struct nm *nm = j->nm_ctx;

	(void)fd;
	(void)revents;
	nm_bcs_bell(&nm->bcs, j->id);
	bcs_failures(nm);
	ticks_update(nm);
	return 0;
}

/* The engine's side of a job goes: its doorbell leaves the loop first. */
static void bcs_close(struct nm *nm, struct nm_job *j)
{
	if (j->bcs_bell >= 0)
		qb_loop_poll_del(nm->loop, j->bcs_bell);
	j->bcs_bell = -1;
	nm_bcs_close(&nm->bcs, j->id);
}

/* A BCS-MPI job restored: its engine's state and segment back from the
 * epoch, before its ranks run again (the engine holds the job stopped
 * until they are all restored). */
static int bcs_restore(struct nm *nm, struct nm_job *j, char *err,
		       size_t errlen)
{
	char name[32], why[512];
	uint8_t *blob;
	size_t len;
	int rc;

	if (j->bcs_fd < 0 || !j->restore)
		return 0;
	nm_bcs_ckpt_name(j, name, sizeof(name));
	if ((rc = nm_ckpt_side_read(nm->ckpt, j, j->restore, name, &blob,
				    &len, why, sizeof(why))))
		goto out;
	rc = nm_bcs_ckpt_restore(&nm->bcs, j, blob, len, why, sizeof(why));
	free(blob);
out:
	if (rc)
		snprintf(err, errlen, "job %u: restore from epoch %u: %s",
			 j->id, j->restore, why);
	return rc;
}

/* A job restarting from an epoch: 1 once its images are at hand here
 * (fetched from the node that keeps them if need be), 0 while they come;
 * a job whose images no node has fails. */
static int restore_gathered(struct nm *nm, struct nm_job *j)
{
	char side[32], why[512], err[700];
	int rc;

	if (!j->restore)
		return 1;
	if (nm_job_place(j, nm->launch.node_id)) {
		job_fail(nm, j, "out of memory");
		return 0;
	}
	if (j->m->mpi)
		nm_bcs_ckpt_name(j, side, sizeof(side));
	rc = nm_ckpt_gather(nm->ckpt, j, j->restore, j->m->mpi ? side : NULL,
			    why, sizeof(why));
	if (rc < 0) {
		snprintf(err, sizeof(err), "job %u: restore from epoch %u: %s",
			 j->id, j->restore, why);
		job_fail(nm, j, err);
	}
	return rc == 1;
}

/* ---- PMI-1 (pmi_node.h) ---------------------------------------------------- */

/* A barrier's entries up: the box goes now, not at the next heartbeat
 * (the ranks wait), or as soon as the one in flight is acknowledged. */
static void pmi_record(void *ctx, uint32_t job, const void *data,
		       uint32_t len)
{
	struct nm *nm = ctx;

	nm_outbox_put(&nm->out, ST_REC_PMI, job, nm->self, data, len);
	nm->pmi_up = 1;
	box_flush(nm);
}

static void pmi_failed(void *ctx, uint32_t job, const char *why)
{
	struct nm *nm = ctx;
	struct nm_job *j = job_by_id(nm, job);

	if (j && !j->reported) {
		job_fail(nm, j, why);
		box_flush(nm);
	}
}

static int pmi_open(struct nm *nm, struct nm_job *j, char *err,
		    size_t errlen)
{
	uint32_t *ranks;
	int *fds, rc;

	if (j->m->mpi != ST_MPI_PMI1 && j->m->mpi != ST_MPI_PMIX)
		return 0;
	ranks = calloc(j->nlocal + 1, sizeof(*ranks));
	fds = calloc(j->nlocal + 1, sizeof(*fds));
	if (!ranks || !fds) {
		free(ranks);
		free(fds);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < j->nlocal; i++)
		ranks[i] = j->ranks[i].rank;
	rc = nm_pmi_node_open(&nm->pmi, j->id, j->inc, j->done_slot,
			      j->m->ranks, j->m->rank_node, j->nlocal, ranks,
			      fds, err, errlen);
	for (uint32_t i = 0; !rc && i < j->nlocal; i++)
		j->ranks[i].pmi_fd = fds[i];
	j->pmi = !rc;
	free(ranks);
	free(fds);
	return rc;
}

/* The ranks started (or failed to): the ranks' ends are closed here. */
static void pmi_started(struct nm *nm, struct nm_job *j)
{
	int *fds;

	if (!j->pmi || !(fds = calloc(j->nlocal + 1, sizeof(*fds))))
		return;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		fds[i] = j->ranks[i].pmi_fd;
		j->ranks[i].pmi_fd = -1;
	}
	nm_pmi_node_started(&nm->pmi, j->id, fds);
	free(fds);
}

static void pmi_close(struct nm *nm, struct nm_job *j)
{
	if (!j->pmi)
		return;
	pmi_started(nm, j); /* ends never handed over */
	nm_pmi_node_close(&nm->pmi, j->id);
	j->pmi = 0;
}

/* The job's nodes by name, in the order of their first rank (as PMI
 * numbers them too), and this node's place among them. */
static int job_nodelist(struct nm *nm, struct nm_job *j)
{
	const st_manifest_t *m = j->m;
	size_t len = 0, cap = 256;
	uint32_t nseen = 0, *seen = calloc(m->ranks + 1, sizeof(*seen));
	char *s = malloc(cap);

	if (!seen || !s)
		goto fail;
	s[0] = 0;
	for (uint32_t r = 0; r < m->ranks; r++) {
		uint32_t w = m->rank_node[r], k;
		const char *name;
		size_t n;

		for (k = 0; k < nseen && seen[k] != w; k++)
			;
		if (k < nseen)
			continue;
		seen[nseen++] = w;
		if (w == nm->self)
			j->node_index = k;
		name = w >= nm->cfg.nmanagers &&
		       w - nm->cfg.nmanagers < nm->cfg.nnodes ?
		       nm->cfg.nodes[w - nm->cfg.nmanagers].name : "?";
		n = strlen(name);
		while (len + n + 2 > cap) {
			char *t = realloc(s, cap * 2);

			if (!t)
				goto fail;
			s = t;
			cap *= 2;
		}
		len += (size_t)sprintf(s + len, "%s%s", len ? "," : "", name);
	}
	free(seen);
	free(j->nodelist);
	j->nodelist = s;
	return 0;
fail:
	free(seen);
	free(s);
	return -ENOMEM;
}

/* Rank 0 of a run job's first incarnation reads the stdin its stormctl
 * forwards (stdin.h); everyone else /dev/null. */
static int stdin_wanted(const struct nm *nm, const struct nm_job *j)
{
	return !j->m->batch && !j->inc && !j->restore && j->m->ranks &&
	       j->m->rank_node[0] == nm->launch.node_id;
}

/* stdin.h's question: job's rank 0 is yet to start here. */
static int stdin_starting(void *ctx, uint32_t id)
{
	struct nm *nm = ctx;

	for (struct nm_job *j = nm->jobs; j; j = j->next)
		if (j->id == id)
			return !j->started && stdin_wanted(nm, j);
	return 0;
}

static int stdin_open(struct nm *nm, struct nm_job *j, char *err,
		      size_t errlen)
{
	int fd;

	if (!stdin_wanted(nm, j))
		return 0;
	fd = nm_stdin_open(&nm->sin, j->id);
	if (fd < 0) {
		snprintf(err, errlen, "node %s: job %u: no pipe for rank 0's "
			 "stdin: %s", nm->host->name, j->id, strerror(-fd));
		return fd;
	}
	j->stdin_fd = fd;
	return 0;
}

static void stdin_started(struct nm_job *j)
{
	if (j->stdin_fd >= 0)
		close(j->stdin_fd); /* rank 0 has it, or failed */
	j->stdin_fd = -1;
}

static void job_start(struct nm *nm, struct nm_job *j)
{
	char err[1536];

	qb_log(LOG_DEBUG, "job %u: RUN at slice %llu", j->id,
	       (unsigned long long)nm->slice);
	if (nm_launch_identity(&nm->launch, j, err, sizeof(err)) ||
	    ((nm_job_place(j, nm->launch.node_id) || job_nodelist(nm, j)) &&
	     snprintf(err, sizeof(err), "out of memory") > 0) ||
	    nm_output_open(j, nm->launch.node_id, nm->host->name, err,
			   sizeof(err)) ||
	    nm_cg_create(&nm->cg, j->id, j->m->mem_limit, nm->host->name,
			 &j->cg, err, sizeof(err)) ||
	    bcs_open(nm, j, err, sizeof(err)) ||
	    bcs_restore(nm, j, err, sizeof(err)) ||
	    pmi_open(nm, j, err, sizeof(err)) ||
	    stdin_open(nm, j, err, sizeof(err)) ||
	    nm_launch_start(&nm->launch, j, j->restore != 0, err,
			    sizeof(err)) ||
	    (j->restore && nm_ckpt_restore(nm->ckpt, j, j->restore, err,
					   sizeof(err)))) {
		if (j->restore)
			nm_launch_kill(j); /* stubs not restored: they go */
		stdin_started(j);
		pmi_started(nm, j);
		job_fail(nm, j, err);
		return;
	}
	stdin_started(j);
	pmi_started(nm, j);
	if (j->restore)
		qb_log(LOG_INFO, "job %u: %u rank(s) restored from checkpoint "
		       "epoch %u", j->id, j->nlocal, j->restore);
	for (uint32_t i = 0; (j->restore || j->inc) && i < j->nlocal; i++)
		rank_rerun(nm, j, &j->ranks[i]);
	for (uint32_t i = 0; j->bcs_fd >= 0 && i < j->nlocal; i++)
		nm_bcs_started(&nm->bcs, j->id, i, j->ranks[i].pid);
	if (j->bcs_fd >= 0 && j->restore) /* restored: it runs again */
		nm_bcs_stopped(&nm->bcs, j->id, j->stopped);
	if (j->bcs_bell >= 0)
		qb_loop_poll_add(nm->loop, QB_LOOP_HIGH, j->bcs_bell, POLLIN,
				 j, on_bcs_bell);
	for (uint32_t i = 0; i < j->nlocal; i++)
		for (int s = 0; s < 2; s++)
			if (j->ranks[i].fd[s] >= 0) /* not a task slot's */
				qb_loop_poll_add(nm->loop, QB_LOOP_MED,
						 j->ranks[i].fd[s], POLLIN, j,
						 on_output);
}

/* ---- checkpoints (ckpt_agent.h) ------------------------------------------- */

/* What epoch e did here, to the managers: the figures, or the failure
 * (the epoch's abort); once written, the job's gv_ckpt slot says so for
 * the master's compare. */
static void ckpt_report(struct nm *nm, const struct nm_ckpt_done *d)
{
	st_ckpt_rec_t c = { .epoch = d->epoch, .rc = d->rc,
			    .bytes = d->bytes, .stop_us = d->stop_us,
			    .levels = d->levels, .why = d->why };
	struct nm_job *j = job_by_id(nm, d->job);
	uint8_t rec[ST_CKPT_REC_LEN + 1024];
	int n;

	if (!j)
		return; /* gone meanwhile: its epoch went with it */
	if (d->rc)
		qb_log(LOG_WARNING, "job %u: checkpoint epoch %u failed: %s",
		       d->job, d->epoch, d->why);
	else
		qb_log(LOG_INFO, "job %u: checkpoint epoch %u written (%llu "
		       "bytes, stopped %u us, %llu pages, %llu written since)",
		       d->job, d->epoch, (unsigned long long)d->bytes,
		       d->stop_us, (unsigned long long)d->pages,
		       (unsigned long long)d->dirty);
	if ((n = st_ckpt_rec_encode(rec, sizeof(rec), &c)) > 0)
		nm_outbox_put(&nm->out, ST_REC_CKPT, d->job, nm->self, rec,
			      (uint32_t)n);
	if (!d->rc && j->done_slot < nm->lay.done_slots)
		sp_gvar_write_local(nm->w, st_ckpt_var(&nm->lay, j->done_slot),
				    st_ckpt_done(d->job, d->epoch));
}

static int job_held(void *ctx, uint32_t id)
{
	return job_by_id(ctx, id) != NULL;
}

static void ckpt_start(struct nm *nm, struct nm_job *j)
{
	struct nm_ckpt_done d = { .job = j->id, .epoch = j->ckpt_want };
	struct nm_bcs_side bs;

	/* a BCS-MPI job: its engine's state and segment go with it */
	if (j->bcs_fd >= 0)
		nm_bcs_ckpt_side(&nm->bcs, j, &bs);
	if ((d.rc = nm_ckpt_start(nm->ckpt, j, j->ckpt_want,
				  j->bcs_fd >= 0 ? &bs.side : NULL, d.why,
				  sizeof(d.why))))
		ckpt_report(nm, &d);
}

static int on_ckpt(int32_t fd, int32_t revents, void *data)
{
	struct nm *nm = data;
	struct nm_ckpt_done d;

	(void)fd;
	(void)revents;
	while (nm_ckpt_poll(nm->ckpt, &d))
		ckpt_report(nm, &d);
	ticks_update(nm);
	return 0;
}

static void reap(struct nm *nm)
{
	struct rusage ru;
	int st;
	pid_t pid;

	/* wait4: each rank's usage goes to the manager with its status */
	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0)
		/* a stop is no end: a process the checkpoint agent traces
		 * (its snapshot is this daemon's child) reports its stops */
		for (int l = WIFSTOPPED(st) || WIFCONTINUED(st) ? 2 : 0; l < 2;
		     l++)
			for (struct nm_job *j = l ? nm->dying : nm->jobs; j;
			     j = j->next) {
				struct nm_rank *x = nm_job_rank_of(j, pid);

				if (!x)
					continue;
				if (x->pid > 0)
					nm_bcs_exited(&nm->bcs, j->id,
						      (uint32_t)(x - j->ranks),
						      st);
				nm_rank_reaped(x, st, &ru);
				/* a rank SIGKILLed: by the OOM killer? */
				if (!l && WIFSIGNALED(st) &&
				    WTERMSIG(st) == SIGKILL)
					job_check_oom(nm, j);
				l = 2;
				break;
			}
}

/* ---- staging (ring.h's handlers) ------------------------------------------ */

static const char *staged_manifest(void *ctx, uint32_t id, st_manifest_t *m)
{
	struct nm *nm = ctx;
	char dir[1200];
	struct nm_job *j;

	snprintf(dir, sizeof(dir), "%s/%s-%s/job-%u", nm->cfg.ramdisk,
		 nm->cfg.cluster, nm->host->name, id);
	/* staged again (a restart): the incarnation before goes first */
	if ((j = job_by_id(nm, id))) {
		qb_log(LOG_DEBUG, "job %u: staged again: the run before goes",
		       id);
		job_forget(nm, j);
	}
	if (!(j = nm_job_new(id, m, dir))) {
		st_manifest_free(m);
		return NULL;
	}
	j->inc = nm->ring.inc; /* the stream's, being taken */
	j->nm_ctx = nm;
	j->next = nm->jobs;
	nm->jobs = j;
	return j->dir;
}

static void staged_failed(void *ctx, uint32_t id, int taken, const char *why)
{
	struct nm *nm = ctx;
	struct nm_job *j = taken ? job_by_id(nm, id) : NULL;

	if (j)
		job_fail(nm, j, why);
	else
		qb_log(LOG_ERR, "job %u: %s", id, why);
}

static void staged_written(void *ctx, uint32_t id)
{
	struct nm *nm = ctx;
	struct nm_job *j = job_by_id(nm, id);

	if (j)
		j->written = 1;
}

static const struct nm_ring_ops ring_ops = {
	.manifest = staged_manifest,
	.failed = staged_failed,
	.written = staged_written,
};

static int cmp_job(const void *a, const void *b)
{
	uint32_t x = (*(struct nm_job *const *)a)->id,
		 y = (*(struct nm_job *const *)b)->id;

	return x < y ? -1 : x > y;
}

static struct nm_job *find_job(struct nm_job **v, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid]->id == id)
			return v[mid];
		if (v[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The block's listing into the jobs: those listed take their state, row
 * and done slot; those inside the window and not listed go — except a
 * job never listed yet: the manager has one heartbeat in flight at a
 * time, and the one in flight when the job's staging began (which does
 * not list it) can land after the job's first chunks. */
static void reconcile(struct nm *nm)
{
	const st_hb_t *hb = &nm->hb;
	struct nm_job **v = NULL, *j, *next;
	size_t n = 0;

	for (j = nm->jobs; j; j = j->next)
		n++;
	if (n && !(v = malloc(n * sizeof(*v)))) {
		qb_log(LOG_WARNING, "out of memory: heartbeat ignored");
		return;
	}
	n = 0;
	for (j = nm->jobs; j; j = j->next) {
		j->seen = 0;
		v[n++] = j;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_job);
	for (uint32_t i = 0; i < hb->njobs; i++) {
		const st_hb_job_t *e = &hb->jobs[i];

		/* another incarnation (restarted since, maybe elsewhere) is
		 * not this one: unlisted, it goes */
		if (!(j = find_job(v, n, e->job)) || e->inc != j->inc)
			continue;
		j->seen = 1;
		j->listed = e->state;
		j->row = e->row;
		/* out of range: a manager with another configuration;
		 * such a job's end is never marked (no other job's slot
		 * is overwritten) */
		j->done_slot = e->done < nm->lay.done_slots ? e->done
							    : UINT32_MAX;
		j->ckpt_want = e->ckpt;
		j->restore = e->restore;
	}
	free(v);
	for (j = nm->jobs; j; j = next) {
		next = j->next;
		if (!j->seen && j->id >= hb->lo && j->id <= hb->hi) {
			if (j->grace) {
				j->grace = 0;
				continue;
			}
			qb_log(LOG_DEBUG, "job %u: not listed at slice %llu, "
			       "forgotten", j->id,
			       (unsigned long long)hb->slice);
			job_forget(nm, j);
			continue;
		}
		if (j->seen)
			j->grace = 0;
		j->want = j->listed ? st_hb_want(j->listed, j->row, hb->row)
				    : 0;
	}
}

static void on_heartbeat(struct nm *nm)
{
	size_t len = nm->lay.hb_len < NM_HB_PREFIX ? nm->lay.hb_len
						     : NM_HB_PREFIX;
	size_t need;
	struct nm_job *j;

	/* a copy taken under the world's lock: the next heartbeat may land
	 * while this one is read.  A prefix first (the block is as long as
	 * its job list, the area 64 KiB); a longer block is read again
	 * whole, in one copy, so the two never mix */
	if (sp_gmem_read(nm->w, nm->lay.hb, nm->hb_copy, len))
		len = 0;
	else if ((need = st_hb_need(nm->hb_copy, len)) > len)
		len = need <= nm->lay.hb_len &&
		      !sp_gmem_read(nm->w, nm->lay.hb, nm->hb_copy, need) ?
		      need : 0;
	if (!len || st_hb_decode(nm->hb_copy, len, &nm->hb)) {
		qb_log(LOG_WARNING, "malformed heartbeat block: ignored");
		return;
	}
	nm->slice = nm->hb.slice;
	sp_gvar_write_local(nm->w, nm->lay.gv_slice, (int64_t)nm->slice);
	/* 1. what each job must be now; the unlisted go */
	reconcile(nm);
	/* 2. the switch: outgoing jobs stopped, then incoming continued */
	nm_gang_switch(nm->jobs, nm->slice);
	/* 3. jobs at their first RUN start, after the stops */
	for (j = nm->jobs; j; j = j->next) {
		if (j->want == ST_HB_RUN && !j->started && j->written &&
		    restore_gathered(nm, j))
			job_start(nm, j);
		job_check_end(nm, j);
	}
	/* 3b. checkpoints ordered: each epoch taken once; a BCS-MPI job on
	 * several nodes at the round every node cuts it at */
	for (j = nm->jobs; j; j = j->next)
		if (j->ckpt_want && j->started && j->want != ST_HB_STAGING &&
		    nm_ckpt_wanted(nm->ckpt, j, j->ckpt_want) &&
		    (j->bcs_fd < 0 ||
		     nm_bcs_cut(&nm->bcs, j->id, j->ckpt_want))) {
			ckpt_start(nm, j);
			if (j->bcs_fd >= 0)
				nm_bcs_cut_release(&nm->bcs, j->id);
		}
	nm_ckpt_sweep(nm->ckpt, job_held, nm);
	/* 4. BCS-MPI: the slice's communication, for the jobs running */
	for (j = nm->jobs; j; j = j->next)
		nm_bcs_stopped(&nm->bcs, j->id, j->stopped);
	nm_bcs_slice(&nm->bcs, nm->slice);
	bcs_failures(nm);
	/* relayed lines that waited for their job to start here */
	nm_relay_receive(&nm->relay, relay_ready, relay_take, nm);
	nm_relay_flush(&nm->relay);
	box_flush(nm);
}

/* ---- slices with nothing to do ------------------------------------------ */

/* Whether anything here must happen at the next slice: a job to start
 * or whose end is to be reported, records waiting for their box,
 * relayed lines waiting for their job, BCS-MPI rounds. */
static int slice_work(const struct nm *nm)
{
	if (nm_bcs_busy(&nm->bcs) || nm_outbox_waiting(&nm->out) ||
	    nm_outbox_unacked(&nm->out) ||
	    nm_relay_waiting(&nm->relay) || nm_ckpt_busy(nm->ckpt))
		return 1;
	for (const struct nm_job *j = nm->jobs; j; j = j->next)
		if ((j->ckpt_want && j->started &&
		     nm_ckpt_wanted(nm->ckpt, j, j->ckpt_want)) ||
		    (j->want == ST_HB_RUN && j->written && !j->started) ||
		    (j->started && !j->reported && nm_job_ended(j)) ||
		    (j->reported && !j->done))
			return 1;
	return 0;
}

/* With nothing to do at a slice, the heartbeats that differ from the
 * last only in their slice (ST_EV_HB_TICK) stay quiet: the main loop
 * sleeps through them until one changes something, or until the
 * strobe's periodic full one; and the strobe may idle (docs/manager.md
 * §3, ticks and the idle strobe).  Called at the end of every handler
 * of the loop. */
static void ticks_update(struct nm *nm)
{
	nm_quiet_update(&nm->quiet, slice_work(nm), &nm->hb);
}

/* ---- main loop -------------------------------------------------------------- */

static int on_notify(int32_t fd, int32_t revents, void *data)
{
	struct nm *nm = data;
	sp_view_info_t vi;
	uint64_t v;
	int hb = 0;

	(void)revents;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	while (sp_test_event(nm->w, ST_EV_CHUNK, 0) == 0)
		nm_ring_take(&nm->ring);
	while (sp_test_event(nm->w, ST_EV_HB, 0) == 0)
		hb = 1;
	while (sp_test_event(nm->w, ST_EV_HB_TICK, 0) == 0)
		hb = 1;
	nm_quiet_events(&nm->quiet);
	if (nm_outbox_events(&nm->out)) {
		/* exits and PMI records waiting behind the last box go
		 * now; output waits for the heartbeat (one box per slice) */
		for (struct nm_job *j = nm->jobs; j; j = j->next)
			if (j->reported && !j->done) {
				box_flush(nm);
				break;
			}
		if (nm->pmi_up) {
			nm->pmi_up = nm_outbox_waiting(&nm->out);
			box_flush(nm);
		}
	}
	nm_pmi_node_events(&nm->pmi);
	nm_stdin_events(&nm->sin);
	nm_relay_receive(&nm->relay, relay_ready, relay_take, nm);
	if (nm_relay_events(&nm->relay)) {
		nm_relay_flush(&nm->relay);
		jobs_changed(nm); /* a job's last lines may be written out */
	}
	if (hb) {
		on_heartbeat(nm);
	} else {
		/* BCS-MPI records from the jobs' other nodes: rounds run as
		 * soon as every section is here */
		nm_bcs_events(&nm->bcs);
		bcs_failures(nm);
	}
	/* a new view may have left us out: we exit, to be restarted and
	 * rejoin (looked at only when the view changed) */
	if (sp_view(nm->w, &vi, NULL) == 0 && vi.epoch != nm->view_epoch &&
	    sp_view(nm->w, &vi, nm->live) == 0) {
		nm->view_epoch = vi.epoch;
		nm_bcs_view(&nm->bcs, nm->live);
		nm_stdin_view(&nm->sin, nm->live);
		bcs_failures(nm);
		if (!sp_nodeset_has(nm->live, sp_node_id(nm->w))) {
			qb_log(LOG_ERR, "this node was expelled from the "
			       "view; exiting so that it can be restarted "
			       "and rejoin");
			nm->stopping = 1;
			qb_loop_stop(nm->loop);
		}
	}
	ticks_update(nm);
	return 0;
}

static int on_signal(int32_t sig, void *data)
{
	struct nm *nm = data;

	if (sig == SIGCHLD) {
		reap(nm);
		bcs_failures(nm);
		jobs_changed(nm);
		ticks_update(nm);
		return 0;
	}
	if (sig == SIGUSR2) {
		/* test control (STORM_TEST_CONTROLS=1): the main loop stops
		 * responding while the process and its fabric live on — a
		 * hang only the strobe's heartbeat check can see */
		qb_log(LOG_NOTICE, "test control: main loop hangs");
		for (;;)
			pause();
	}
	qb_log(LOG_NOTICE, "signal %d: stopping", sig);
	sd_notify(0, "STOPPING=1");
	nm->stopping = 1;
	qb_loop_stop(nm->loop);
	return 0;
}

/* The node manager stops: every job's processes get SIGTERM, and what
 * is left after kill_grace_ms is killed; cgroups and files removed.  The
 * main loop has stopped: this waits here (it is the end). */
static void shutdown_jobs(struct nm *nm)
{
	struct timespec t0, now, nap = { 0, 10 * 1000000L };
	struct nm_job *j;
	int left = 1;

	for (j = nm->jobs; j; j = j->next) {
		for (uint32_t i = 0; i < j->nlocal; i++)
			for (int s = 0; s < 2; s++)
				if (j->ranks[i].fd[s] >= 0) {
					close(j->ranks[i].fd[s]);
					j->ranks[i].fd[s] = -1;
				}
		if (j->written)
			nm_ring_remove(j->dir, j->m);
		j->written = 0;
	}
	while ((j = nm->jobs)) { /* all are dying now */
		nm->jobs = j->next;
		j->next = nm->dying;
		nm->dying = j;
		if (j->kill_timer)
			continue;
		nm_cg_freeze(&j->cg, 0);
		nm_launch_signal(j, SIGTERM);
		nm_cg_signal(&j->cg, SIGTERM);
		nm_launch_signal(j, SIGCONT);
		nm_cg_signal(&j->cg, SIGCONT);
	}
	if (nm->dying)
		qb_log(LOG_NOTICE, "stopping: SIGTERM to the jobs' processes, "
		       "SIGKILL to what is left in %u ms",
		       nm->cfg.kill_grace_ms);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int killed = 0; nm->dying && left;) {
		double ms;

		reap(nm);
		left = 0;
		for (j = nm->dying; j; j = j->next)
			left += job_has_processes(j);
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (double)(now.tv_sec - t0.tv_sec) * 1e3 +
		     (double)(now.tv_nsec - t0.tv_nsec) / 1e6;
		if (left && !killed && ms >= nm->cfg.kill_grace_ms) {
			for (j = nm->dying; j; j = j->next) {
				nm_launch_kill(j);
				nm_cg_kill(&nm->cg, &j->cg);
			}
			killed = 1;
		}
		if (left && killed && ms >= nm->cfg.kill_grace_ms + 5000.0)
			break; /* unkillable (D state): leave the cgroup */
		if (left)
			nanosleep(&nap, NULL);
	}
	while ((j = nm->dying)) {
		nm->dying = j->next;
		if (nm_cg_remove(&j->cg))
			qb_log(LOG_WARNING, "job %u: its cgroup %s still holds "
			       "processes", j->id, j->cg.dir);
		bcs_close(nm, j);
		pmi_close(nm, j);
		nm_job_free(j);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	nm_cg_fini(&nm->cg);
}

/* Ranks are bound to their cpus (cpu_bind = auto) when this node's
 * configured cpus are the cpus this daemon may run on: the scheduler's
 * k-th column on the node is the k-th of them. */
static void cpu_binding(struct nm *nm)
{
	cpu_set_t set;
	uint32_t n = 0;

	nm->launch.ncpus = 0;
	if (strcmp(nm->cfg.cpu_bind, "auto") ||
	    sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE && n < 1024; c++)
		if (CPU_ISSET(c, &set))
			nm->launch.cpus[n++] = c;
	if (n != nm->host->cpus) {
		qb_log(LOG_INFO, "ranks not bound to cpus: this node is "
		       "configured with %u cpu(s), this daemon may run on %u "
		       "(cpu_bind = auto binds where they agree)",
		       nm->host->cpus, n);
		return;
	}
	nm->launch.ncpus = n;
	qb_log(LOG_INFO, "ranks bound to their cpus (%u)", n);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: storm-nm --config FILE --name NODE\n"
		"  Node manager of one compute node of a Storm cluster.\n"
		"  Exit status: 0 stopped by a signal, 1 runtime failure,\n"
		"  2 usage or configuration error.\n");
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
	struct nm nm = { 0 };
	sp_config_t *sc = NULL;
	qb_loop_signal_handle sh;
	char err[1024];
	uint64_t seq_base;
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'n': name = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!path || !name) {
		fprintf(stderr, "storm-nm: --config FILE and --name NODE are "
			"required\n");
		usage(stderr);
		return 2;
	}
	if ((rc = st_config_load(path, &nm.cfg, err, sizeof(err)))) {
		fprintf(stderr, "storm-nm: %s\n", err);
		return 2;
	}
	nm.host = st_config_host(&nm.cfg, name);
	if (!nm.host || nm.host->world_id < nm.cfg.nmanagers) {
		fprintf(stderr, "storm-nm: %s: no [node %s] section\n", path,
			name);
		st_config_free(&nm.cfg);
		return 2;
	}
	if (st_log_setup(&nm.cfg, "storm-nm")) {
		st_config_free(&nm.cfg);
		return 2;
	}
	st_realtime(&nm.cfg, "storm-nm");
	{
		char place[1200];

		snprintf(place, sizeof(place), "%s/%s-%s", nm.cfg.ramdisk,
			 nm.cfg.cluster, nm.host->name);
		nm_cg_init(&nm.cg, strcmp(nm.cfg.cgroup, "none") != 0,
			   nm.cfg.cluster, nm.host->name, place);
	}
	/* the RAM disk's directories, checked: the jobs' own go below */
	{
		char dir[1200], why[1400];

		snprintf(dir, sizeof(dir), "%s/%s-%s", nm.cfg.ramdisk,
			 nm.cfg.cluster, nm.host->name);
		if (st_key_check(&nm.cfg, why, sizeof(why)) ||
		    st_dir_ensure(nm.cfg.ramdisk, 0755, why, sizeof(why)) ||
		    st_dir_ensure(dir, 0755, why, sizeof(why))) {
			qb_log(LOG_ERR, "%s", why);
			fprintf(stderr, "storm-nm: %s\n", why);
			st_config_free(&nm.cfg);
			return 2;
		}
	}
	st_layout(&nm.cfg, &nm.lay);
	nm.hb.jobs = calloc(st_hb_capacity(nm.lay.hb_len) + 1,
			    sizeof(*nm.hb.jobs));
	nm.hb_copy = malloc(nm.lay.hb_len);
	{
		struct timespec ts;

		/* boxes are numbered from a base of this incarnation's own,
		 * so that the manager tells them from the last one's */
		clock_gettime(CLOCK_REALTIME, &ts);
		seq_base = (uint64_t)ts.tv_sec * 1000000000u +
			   (uint64_t)ts.tv_nsec;
	}
	/* a view that removes this node while it joins (the root changed
	 * under the join: a head restarted meanwhile) is no reason to stop:
	 * join again as a new incarnation, a few times */
	for (int expelled = 0;; expelled++) {
		rc = st_config_world(&nm.cfg, nm.host->world_id, 1, 600000,
				     &sc, err, sizeof(err));
		if (!rc)
			rc = sp_open(sc, &nm.w, err, sizeof(err));
		sp_config_destroy(sc);
		sc = NULL;
		if (rc != -STORM_EEXPELLED || expelled == 4)
			break;
		qb_log(LOG_INFO, "joining again: %s", err);
	}
	if (rc) {
		qb_log(LOG_ERR, "cannot join the cluster: %s", err);
		rc = 1;
		goto out;
	}
	if (!nm.hb.jobs || !nm.hb_copy ||
	    sp_nodeset_create(sp_node_count(nm.w), &nm.live) ||
	    nm_outbox_init(&nm.out, nm.w, &nm.lay, nm.cfg.nmanagers,
			   seq_base) ||
	    nm_relay_init(&nm.relay, nm.w, &nm.lay, nm.cfg.nmanagers,
			  seq_base) ||
	    nm_quiet_init(&nm.quiet, nm.w, &nm.lay, nm.cfg.nmanagers)) {
		qb_log(LOG_ERR, "out of memory");
		rc = 1;
		goto out;
	}
	if (nm_bcs_init(&nm.bcs) ||
	    nm_bcs_attach(&nm.bcs, nm.w, nm.lay.bcs, nm.lay.bcs_len,
			  sp_node_id(nm.w), sp_node_count(nm.w), &nm.cfg)) {
		qb_log(LOG_ERR, "out of memory");
		rc = 1;
		goto out;
	}
	{
		/* a PMI record: whole entries that fit one box */
		const struct nm_pmi_node_ops po = {
			.record = pmi_record, .failed = pmi_failed,
			.ctx = &nm };
		uint32_t rec_max = (nm.lay.outbox_len - ST_BOX_HDR -
				    ST_REC_HDR - ST_PMI_REC_HDR) / 2;

		nm.loop = qb_loop_create();
		if (!nm.loop || nm_pmi_node_init(&nm.pmi, nm.w, &nm.lay,
						 nm.loop, rec_max, &po) ||
		    nm_stdin_init(&nm.sin, nm.w, &nm.lay, nm.loop,
				  nm.cfg.nmanagers, stdin_starting, &nm)) {
			qb_log(LOG_ERR, "out of memory");
			rc = 1;
			goto out;
		}
	}
	nm.launch.node_id = sp_node_id(nm.w);
	nm.launch.node = nm.host->name;
	nm.launch.mpich_abi_dir = nm.cfg.mpich_abi_dir;
	nm.launch.pmi_library = nm.cfg.pmi_library;
	nm.launch.mpi_env = nm.cfg.mpi_env;
	cpu_binding(&nm);
	nm_ring_init(&nm.ring, nm.w, &nm.lay, nm.host->name, &ring_ops, &nm);
	nm.nfd = sp_notify_fd(nm.w);
	signal(SIGPIPE, SIG_IGN);
	qb_loop_poll_add(nm.loop, QB_LOOP_HIGH, nm.nfd, POLLIN, &nm, on_notify);
	nm.self = nm.host->world_id;
	{
		char root[1200], bdir[1300], why[1400];

		/* L1: node-local, the ramdisk unless configured */
		if (nm.cfg.ckpt_dir[0])
			snprintf(root, sizeof(root), "%s/%s-%s", nm.cfg.ckpt_dir,
				 nm.cfg.cluster, nm.host->name);
		else
			snprintf(root, sizeof(root), "%s/%s-%s/ckpt",
				 nm.cfg.ramdisk, nm.cfg.cluster, nm.host->name);
		if ((nm.cfg.ckpt_dir[0] &&
		     st_dir_ensure(nm.cfg.ckpt_dir, 0711, why, sizeof(why))) ||
		    (nm.cfg.ckpt_shared_dir[0] &&
		     st_dir_ensure(nm.cfg.ckpt_shared_dir, 0711, why,
				   sizeof(why))) ||
		    nm_ckpt_create(&nm.ckpt, root, nm.cfg.ckpt_shared_dir,
				   nm.cfg.cluster, nm.cfg.ckpt_chain, why,
				   sizeof(why))) {
			qb_log(LOG_ERR, "%s", why);
			fprintf(stderr, "storm-nm: %s\n", why);
			rc = 2;
			goto out;
		}
		nm_ckpt_limits(nm.ckpt, (uint64_t)nm.cfg.ckpt_quota_mib << 20,
			       nm.cfg.ckpt_linger_s);
		/* L2: copies other nodes keep here, below L1's root */
		snprintf(bdir, sizeof(bdir), "%s/buddy", root);
		if (nm_buddy_create(&nm.buddy, nm.w, &nm.lay,
				    nm.cfg.nmanagers, nm.cfg.nnodes, bdir,
				    root, seq_base, nm.cfg.ckpt_linger_s, why,
				    sizeof(why))) {
			qb_log(LOG_ERR, "checkpoint copies (L2): %s", why);
			fprintf(stderr, "storm-nm: checkpoint copies (L2): "
				"%s\n", why);
			rc = 2;
			goto out;
		}
		nm_ckpt_set_buddy(nm.ckpt, nm.buddy);
		qb_loop_poll_add(nm.loop, QB_LOOP_MED, nm_ckpt_fd(nm.ckpt),
				 POLLIN, &nm, on_ckpt);
	}
	qb_loop_signal_add(nm.loop, QB_LOOP_HIGH, SIGCHLD, &nm, on_signal, &sh);
	{
		struct sigaction sa;

		/* a rank stopped or continued by a context switch is no news:
		 * SIGCHLD only for exits (libqb installs it without
		 * SA_NOCLDSTOP; this keeps its handler and adds the flag) */
		if (sigaction(SIGCHLD, NULL, &sa) == 0) {
			sa.sa_flags |= SA_NOCLDSTOP;
			sigaction(SIGCHLD, &sa, NULL);
		}
	}
	qb_loop_signal_add(nm.loop, QB_LOOP_HIGH, SIGTERM, &nm, on_signal, &sh);
	qb_loop_signal_add(nm.loop, QB_LOOP_HIGH, SIGINT, &nm, on_signal, &sh);
	if (getenv("STORM_TEST_CONTROLS") &&
	    !strcmp(getenv("STORM_TEST_CONTROLS"), "1"))
		qb_loop_signal_add(nm.loop, QB_LOOP_HIGH, SIGUSR2, &nm,
				   on_signal, &sh);
	qb_log(LOG_INFO, "node %s (world id %u) joined cluster %s",
	       nm.host->name, nm.host->world_id, nm.cfg.cluster);
	/* Type=notify: in the machine, taking jobs */
	sd_notifyf(0, "READY=1\nSTATUS=node %s (world id %u) in cluster %s",
		   nm.host->name, nm.host->world_id, nm.cfg.cluster);
	qb_loop_run(nm.loop);
	rc = 0;
out:
	shutdown_jobs(&nm);
	nm_pmi_node_fini(&nm.pmi);
	nm_stdin_fini(&nm.sin); /* its descriptors leave the loop */
	if (nm.loop)
		qb_loop_destroy(nm.loop);
	nm_ring_fini(&nm.ring);
	nm_outbox_fini(&nm.out);
	nm_relay_fini(&nm.relay);
	nm_quiet_fini(&nm.quiet);
	nm_bcs_fini(&nm.bcs);
	nm_ckpt_destroy(nm.ckpt); /* its writer may be sending to a buddy */
	nm_buddy_destroy(nm.buddy);
	sp_close(nm.w);
	free(nm.hb.jobs);
	free(nm.hb_copy);
	sp_nodeset_destroy(nm.live);
	st_config_free(&nm.cfg);
	qb_log_fini();
	return rc;
}
