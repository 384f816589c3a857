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
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "nm.h"

#define PEND_MAX (8u << 20) /* output waiting for the manager */

void nm_queue_rec(struct nm *nm, uint8_t type, uint32_t job, uint32_t rank,
		  const void *data, uint32_t len)
{
	size_t need = nm->pend_len + ST_REC_HDR + len;
	uint32_t max = nm->lay.outbox_len - ST_BOX_HDR - ST_REC_HDR;

	while (len > max) { /* one record must fit one box */
		nm_queue_rec(nm, type, job, rank, data, max);
		data = (const uint8_t *)data + max;
		len -= max;
		need = nm->pend_len + ST_REC_HDR + len;
	}
	if (need > PEND_MAX && type <= ST_REC_STDERR) {
		qb_log(LOG_WARNING, "job %u rank %u: output dropped, the "
		       "manager is not taking it", job, rank);
		return;
	}
	if (need > nm->pend_cap) {
		size_t cap = nm->pend_cap ? nm->pend_cap : 65536;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(nm->pend, cap);
		if (!p)
			return;
		nm->pend = p;
		nm->pend_cap = cap;
	}
	st_box_put_rec(nm->pend + nm->pend_len, type, job, rank, data, len);
	nm->pend_len += ST_REC_HDR + len;
}

/* ---- output mailbox ------------------------------------------------------ */

/* The box carrying a job's last records is on its way: the job is done
 * here (the manager's termination compare reads this).  Safe before the
 * box is agreed: the manager ends a job only once every rank's EXIT
 * record is agreed as well, and a box lost on the way is sent again.
 * Marking it now, not at the acknowledgement, spares the end of every
 * job an acknowledgement's round trip and a wait for the compare. */
static void box_mark_done(struct nm *nm)
{
	for (uint32_t i = 0; i < nm->box_ndone; i++) {
		uint32_t job = nm->box_done[i];

		for (struct nm_job *j = nm->jobs; j; j = j->next)
			if (j->id == job && j->reported && !j->done) {
				if (j->done_slot < nm->lay.done_slots)
					sp_gvar_write_local(nm->w,
						st_done_var(&nm->lay,
							    j->done_slot),
						job);
				j->done = 1;
				qb_log(LOG_DEBUG, "job %u: done", job);
			}
	}
	nm->box_ndone = 0;
}

static void box_flush(struct nm *nm)
{
	sp_nodeset_t *mm = NULL;
	size_t off = 0, room = nm->lay.outbox_len - ST_BOX_HDR;
	st_rec_t rec;
	int rc;

	if (nm->box_inflight || nm->pend_len == 0)
		return;
	/* whole records that fit one box */
	while (off < nm->pend_len) {
		size_t at = off;

		if (st_box_next(nm->pend, nm->pend_len, &at, &rec) != 1 ||
		    at > room)
			break;
		off = at;
	}
	nm->box_ndone = 0;
	for (size_t at = 0; at < off;) {
		st_box_next(nm->pend, off, &at, &rec);
		if (rec.type != ST_REC_EXIT && rec.type != ST_REC_FAIL)
			continue;
		if (nm->box_ndone == nm->box_done_cap) {
			uint32_t cap = nm->box_done_cap ? 2 * nm->box_done_cap
							: 64;
			uint32_t *d = realloc(nm->box_done, cap * sizeof(*d));

			if (!d)
				return; /* sent with the next box */
			nm->box_done = d;
			nm->box_done_cap = cap;
		}
		nm->box_done[nm->box_ndone++] = rec.job;
	}
	memcpy(nm->box + ST_BOX_HDR, nm->pend, off);
	st_box_put_hdr(nm->box, ++nm->box_seq, (uint32_t)off);
	/* to every manager replica in the view: whichever is (or becomes)
	 * the strobe master has it */
	if (sp_nodeset_create(sp_node_count(nm->w), &mm))
		return;
	sp_view_info_t vi;

	if (sp_view(nm->w, &vi, mm) == 0)
		for (uint32_t x = nm->cfg.nmanagers; x < sp_node_count(nm->w);
		     x++)
			sp_nodeset_del(mm, x);
	if (sp_nodeset_count(mm) == 0) {
		sp_nodeset_destroy(mm);
		nm->box_seq--;
		qb_log(LOG_DEBUG, "box: no manager in the view");
		return;
	}
	rc = sp_xfer_and_signal(nm->w, mm, nm->box, ST_BOX_HDR + off,
				nm->lay.outbox + (uint64_t)nm->lay.outbox_len *
							 sp_node_id(nm->w),
				ST_EV_LOCAL_OUT, ST_EV_OUT, NULL, 0);
	sp_nodeset_destroy(mm);
	qb_log(LOG_DEBUG, "box %llu: %zu bytes sent (%d)",
	       (unsigned long long)nm->box_seq, off, rc);
	if (rc) {
		nm->box_seq--;
		return; /* the manager is not in our view: try next slice */
	}
	memmove(nm->pend, nm->pend + off, nm->pend_len - off);
	nm->pend_len -= off;
	nm->box_inflight = 1;
	nm->box_sent = 0;
	nm->box_acked = 0;
	box_mark_done(nm);
}

/* ---- jobs ---------------------------------------------------------------- */

static void job_forget(struct nm *nm, struct nm_job *j)
{
	struct nm_job **pp;

	nm_job_kill(nm, j);
	for (uint32_t i = 0; i < j->nlocal; i++)
		for (int s = 0; s < 2; s++)
			if (j->ranks[i].fd[s] >= 0) {
				qb_loop_poll_del(nm->loop, j->ranks[i].fd[s]);
				close(j->ranks[i].fd[s]);
			}
	/* killed ranks are reaped by nm_reap (SIGCHLD) and found no more */
	nm_stage_forget(nm, j);
	nm_job_remove_files(j);
	for (pp = &nm->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	st_manifest_free(j->m);
	free(j->ranks);
	free(j->ident);
	free(j);
}

struct nm_job *nm_job_new(struct nm *nm, uint32_t id, st_manifest_t *m)
{
	struct nm_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->nm = nm;
	j->id = id;
	j->m = m;
	j->grace = 1;
	snprintf(j->dir, sizeof(j->dir), "%s/%s-%s/job-%u", nm->cfg.ramdisk,
		 nm->cfg.cluster, nm->host->name, id);
	j->next = nm->jobs;
	nm->jobs = j;
	return j;
}

/* Every local rank reaped and its pipes drained: queue the exits. */
static void job_check_end(struct nm *nm, struct nm_job *j)
{
	if (!j->started || j->reported)
		return;
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->ranks[i].pid || j->ranks[i].fd[0] >= 0 ||
		    j->ranks[i].fd[1] >= 0)
			return;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		const struct nm_rank *x = &j->ranks[i];
		st_exit_t e = { x->status, x->utime_us, x->stime_us,
				x->maxrss_kib };
		uint8_t b[ST_EXIT_LEN];

		st_exit_encode(b, &e);
		nm_queue_rec(nm, ST_REC_EXIT, j->id, x->rank, b, sizeof(b));
	}
	if (j->nlocal == 0)
		nm_queue_rec(nm, ST_REC_EXIT, j->id, UINT32_MAX, NULL, 0);
	j->reported = 1;
	qb_log(LOG_DEBUG, "job %u: ended here, reporting", j->id);
}

void nm_job_fail(struct nm *nm, struct nm_job *j, const char *why)
{
	qb_log(LOG_ERR, "job %u: %s", j->id, why);
	nm_queue_rec(nm, ST_REC_FAIL, j->id, 0, why, (uint32_t)strlen(why));
	j->reported = 1;
	j->started = 1;
}

/* A rank was reaped or a pipe closed: a job that has ended reports now,
 * not at the next heartbeat — the manager still reads it only at a slice
 * boundary, one slice sooner. */
void nm_jobs_changed(struct nm *nm)
{
	for (struct nm_job *j = nm->jobs; j; j = j->next)
		job_check_end(nm, j);
	box_flush(nm);
}

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

		if (!(j = find_job(v, n, e->job)))
			continue;
		j->seen = 1;
		j->listed = e->state;
		j->row = e->row;
		/* out of range: a manager with another configuration;
		 * such a job's end is never marked (no other job's slot
		 * is overwritten) */
		j->done_slot = e->done < nm->lay.done_slots ? e->done
							    : UINT32_MAX;
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
	struct nm_job *j;

	/* a copy taken under the world's lock: the next heartbeat may land
	 * while this one is read */
	if (sp_gmem_read(nm->w, nm->lay.hb, nm->hb_copy, nm->lay.hb_len) ||
	    st_hb_decode(nm->hb_copy, nm->lay.hb_len, &nm->hb)) {
		qb_log(LOG_WARNING, "malformed heartbeat block: ignored");
		return;
	}
	nm->slice = nm->hb.slice;
	sp_gvar_write_local(nm->w, nm->lay.gv_slice, (int64_t)nm->slice);
	/* 1. what each job must be now; the unlisted go */
	reconcile(nm);
	/* 2. the switch: outgoing jobs stopped, then incoming continued */
	nm_gang_switch(nm);
	/* 3. jobs at their first RUN start, after the stops */
	for (j = nm->jobs; j; j = j->next) {
		if (j->want == ST_HB_RUN && !j->started && j->written) {
			char err[256];

			qb_log(LOG_DEBUG, "job %u: RUN at slice %llu", j->id,
			       (unsigned long long)nm->slice);
			if (nm_job_start(nm, j, err, sizeof(err)))
				nm_job_fail(nm, j, err);
		}
		job_check_end(nm, j);
	}
	box_flush(nm);
}

/* ---- main loop -------------------------------------------------------------- */

static int on_notify(int32_t fd, int32_t revents, void *data)
{
	struct nm *nm = data;
	sp_view_info_t vi;
	uint64_t v;
	int hb = 0, rc;

	(void)revents;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	while (sp_test_event(nm->w, ST_EV_CHUNK, 0) == 0)
		nm_take_chunks(nm);
	while (sp_test_event(nm->w, ST_EV_HB, 0) == 0)
		hb = 1;
	while ((rc = sp_test_event(nm->w, ST_EV_LOCAL_OUT, 0)) != -EAGAIN) {
		if (rc == 0) {
			nm->box_sent = 1;
		} else if (rc == -STORM_ECLOSED || rc == -STORM_EEXPELLED) {
			break;
		} else {
			/* aborted: the manager never saw it; send again */
			uint32_t len;
			uint64_t seq;

			st_box_get_hdr(nm->box, nm->lay.outbox_len, &seq, &len);
			/* whatever its size: it may hold EXIT records, and a
			 * job whose exits are lost never ends */
			{
				uint8_t *keep = malloc(nm->pend_len + len);

				if (keep) {
					memcpy(keep, nm->box + ST_BOX_HDR, len);
					memcpy(keep + len, nm->pend,
					       nm->pend_len);
					free(nm->pend);
					nm->pend = keep;
					nm->pend_len += len;
					nm->pend_cap = nm->pend_len;
				}
			}
			nm->box_seq--;
			nm->box_inflight = 0;
		}
	}
	/* the ack names the box: every manager replica has it (a new
	 * strobe master may ack an older one again) */
	while (sp_test_event(nm->w, ST_EV_OUTACK, 0) == 0) {
		int64_t acked = 0;

		sp_gvar_read(nm->w, nm->lay.outack, &acked);
		if ((uint64_t)acked == nm->box_seq)
			nm->box_acked = 1;
	}
	if (nm->box_inflight && nm->box_sent && nm->box_acked) {
		nm->box_inflight = 0;
		/* exits waiting behind the last box go now; output waits
		 * for the heartbeat (one box per slice) */
		for (struct nm_job *j = nm->jobs; j; j = j->next)
			if (j->reported && !j->done) {
				box_flush(nm);
				break;
			}
	}
	if (hb)
		on_heartbeat(nm);
	/* a new view may have left us out: we exit, to be restarted and
	 * rejoin (looked at only when the view changed) */
	if (sp_view(nm->w, &vi, NULL) == 0 && vi.epoch != nm->view_epoch &&
	    sp_view(nm->w, &vi, nm->live) == 0) {
		nm->view_epoch = vi.epoch;
		if (!sp_nodeset_has(nm->live, sp_node_id(nm->w))) {
			qb_log(LOG_ERR, "this node was expelled from the "
			       "view; exiting so that it can be restarted "
			       "and rejoin");
			nm->stopping = 1;
			qb_loop_stop(nm->loop);
		}
	}
	return 0;
}

static int on_signal(int32_t sig, void *data)
{
	struct nm *nm = data;

	if (sig == SIGCHLD) {
		nm_reap(nm);
		nm_jobs_changed(nm);
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
	nm->stopping = 1;
	qb_loop_stop(nm->loop);
	return 0;
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
	size_t size;
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
	st_log_setup(&nm.cfg, "storm-nm");
	st_realtime(&nm.cfg, "storm-nm");
	/* the RAM disk's directories, checked: the jobs' own go below */
	{
		char dir[1200], why[1400];

		snprintf(dir, sizeof(dir), "%s/%s-%s", nm.cfg.ramdisk,
			 nm.cfg.cluster, nm.host->name);
		if (st_dir_ensure(nm.cfg.ramdisk, 0755, why, sizeof(why)) ||
		    st_dir_ensure(dir, 0755, why, sizeof(why))) {
			qb_log(LOG_ERR, "%s", why);
			fprintf(stderr, "storm-nm: %s\n", why);
			st_config_free(&nm.cfg);
			return 2;
		}
	}
	st_layout(&nm.cfg, &nm.lay);
	nm.box = calloc(1, nm.lay.outbox_len);
	nm.hb.jobs = calloc(st_hb_capacity(nm.lay.hb_len) + 1,
			    sizeof(*nm.hb.jobs));
	nm.hb_copy = malloc(nm.lay.hb_len);
	nm.stg_fd = -1;
	{
		struct timespec ts;

		/* boxes are numbered from a base of this incarnation's own,
		 * so that the manager tells them from the last one's */
		clock_gettime(CLOCK_REALTIME, &ts);
		nm.box_seq = (uint64_t)ts.tv_sec * 1000000000u +
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
	if (!nm.box || !nm.hb.jobs || !nm.hb_copy ||
	    sp_nodeset_create(sp_node_count(nm.w), &nm.live)) {
		qb_log(LOG_ERR, "out of memory");
		rc = 1;
		goto out;
	}
	nm.gmem = sp_gmem(nm.w, &size);
	nm.loop = qb_loop_create();
	nm.nfd = sp_notify_fd(nm.w);
	signal(SIGPIPE, SIG_IGN);
	qb_loop_poll_add(nm.loop, QB_LOOP_HIGH, nm.nfd, POLLIN, &nm, on_notify);
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
	qb_loop_run(nm.loop);
	rc = 0;
out:
	while (nm.jobs)
		job_forget(&nm, nm.jobs);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (nm.loop)
		qb_loop_destroy(nm.loop);
	sp_close(nm.w);
	free(nm.box);
	free(nm.box_done);
	free(nm.hb.jobs);
	free(nm.hb_copy);
	sp_nodeset_destroy(nm.live);
	free(nm.pend);
	free(nm.stg);
	st_config_free(&nm.cfg);
	qb_log_fini();
	return rc;
}
