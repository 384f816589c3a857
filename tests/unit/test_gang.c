/*
 * test_gang.c — the node manager's context switch (node/gang.c) on real
 * processes: every listed STOP or RUN reaches each local rank's process
 * group exactly once, stops go before continues, MPL 1 signals nothing,
 * and a stopped job that is cancelled (node/launch.c nm_launch_kill) dies,
 * closes its pipes and is reaped like a running one.
 *
 * kill() is defined here: a definition in the executable binds the calls
 * gang.c and launch.c make before libc's, so the test sees every signal
 * and its order; it then makes the real system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gang.h"
#include "job.h"
#include "launch.h"

#define MAX_SENT 1024

static struct {
	pid_t pid;
	int sig;
} sent[MAX_SENT];
static unsigned nsent;

int kill(pid_t pid, int sig)
{
	if (nsent < MAX_SENT) {
		sent[nsent].pid = pid;
		sent[nsent].sig = sig;
	}
	nsent++;
	return (int)syscall(SYS_kill, pid, sig);
}

static int real_kill(pid_t pid, int sig)
{
	return (int)syscall(SYS_kill, pid, sig);
}

/* ---- fixture: jobs of real ranks ------------------------------------------ */

#define MAX_RANKS 8

struct fx {
	struct nm_job *jobs;
	struct nm_job job[4];
	struct nm_rank ranks[4][MAX_RANKS];
	pid_t grandchild[4][MAX_RANKS];
};

/* storm-nm's reaping: wait4, the rank found by its pid */
static void reap(struct fx *f)
{
	struct rusage ru;
	int st;
	pid_t pid;

	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0)
		for (struct nm_job *j = f->jobs; j; j = j->next) {
			struct nm_rank *x = nm_job_rank_of(j, pid);

			if (x)
				nm_rank_reaped(x, st, &ru);
		}
}

/* One rank as spawn_rank makes it: the leader of a process group of its
 * own, with a child of its own in that group, stdout on a pipe whose read
 * end is x->fd[0].  Both sleep until signalled. */
static void spawn(struct nm_rank *x, pid_t *grandchild, uint32_t rank)
{
	int out[2], gc[2];
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(gc), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t g;

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], 1);
		close(out[0]);
		close(gc[0]);
		g = fork();
		if (g == 0) {
			for (;;)
				pause();
		}
		if (write(gc[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	close(out[1]);
	close(gc[1]);
	assert_int_equal(read(gc[0], grandchild, sizeof(*grandchild)),
			 (ssize_t)sizeof(*grandchild));
	close(gc[0]);
	x->rank = rank;
	x->pid = pid;
	x->fd[0] = out[0];
	x->fd[1] = -1;
	x->status = 0;
}

/* njobs jobs of nranks started ranks each, listed RUN and running */
static struct fx *fx_new(int njobs, uint32_t nranks)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	for (int k = njobs - 1; k >= 0; k--) {
		struct nm_job *j = &f->job[k];

		j->id = 100 + (uint32_t)k;
		j->started = 1;
		j->written = 1;
		j->want = ST_HB_RUN;
		j->nlocal = nranks;
		j->ranks = f->ranks[k];
		for (uint32_t r = 0; r < nranks; r++)
			spawn(&j->ranks[r], &f->grandchild[k][r], r);
		j->next = f->jobs;
		f->jobs = j;
	}
	nsent = 0;
	return f;
}

/* Everything the fixture started is killed and reaped, pass or fail. */
static void fx_free(struct fx *f)
{
	for (struct nm_job *j = f->jobs; j; j = j->next)
		for (uint32_t r = 0; r < j->nlocal; r++) {
			struct nm_rank *x = &j->ranks[r];

			if (x->pid > 0) {
				real_kill(-x->pid, SIGKILL);
				waitpid(x->pid, NULL, 0);
			}
			if (x->fd[0] >= 0)
				close(x->fd[0]);
		}
	free(f);
}

/* Waits (up to 5 s) until /proc shows pid stopped (want 1) or not. */
static int proc_stopped(pid_t pid, int want)
{
	struct timespec ts = { 0, 1000000 };

	for (int i = 0; i < 5000; i++) {
		char path[64], buf[512], *p;
		FILE *fp;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fp = fopen(path, "r");
		if (!fp)
			return -1;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && (p[2] == 'T') == want)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* The rank (a child: waitid) and its own child (/proc) are stopped. */
static void assert_rank_stopped(struct fx *f, int k, uint32_t r)
{
	siginfo_t si = { 0 };

	assert_int_equal(waitid(P_PID, (id_t)f->ranks[k][r].pid, &si,
				WSTOPPED | WNOWAIT), 0);
	assert_int_equal(si.si_code, CLD_STOPPED);
	assert_int_equal(si.si_status, SIGSTOP);
	assert_int_equal(proc_stopped(f->grandchild[k][r], 1), 0);
}

static void assert_rank_running(struct fx *f, int k, uint32_t r)
{
	assert_int_equal(proc_stopped(f->ranks[k][r].pid, 0), 0);
	assert_int_equal(proc_stopped(f->grandchild[k][r], 0), 0);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_gang_mpl1_every_job_run_makes_no_system_call(void **state)
{
	struct fx *f = fx_new(3, 4);

	(void)state;
	for (int slice = 0; slice < 10000; slice++)
		nm_gang_switch(f->jobs, 0);
	assert_int_equal(nsent, 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(f->job[k].stopped, 0);
	fx_free(f);
}

static void test_gang_stop_then_run_signals_every_rank_group_once(void **state)
{
	struct fx *f = fx_new(1, 4);
	struct nm_job *j = &f->job[0];

	(void)state;
	j->want = ST_HB_STOP;
	for (int slice = 0; slice < 100; slice++)
		nm_gang_switch(f->jobs, 0);
	assert_int_equal(nsent, 4);
	for (uint32_t r = 0; r < 4; r++) {
		/* to the group, not the process: its children stop too */
		assert_int_equal(sent[r].pid, -f->ranks[0][r].pid);
		assert_int_equal(sent[r].sig, SIGSTOP);
		assert_rank_stopped(f, 0, r);
	}
	assert_int_equal(j->stopped, 1);

	nsent = 0;
	j->want = ST_HB_RUN;
	for (int slice = 0; slice < 100; slice++)
		nm_gang_switch(f->jobs, 0);
	assert_int_equal(nsent, 4);
	for (uint32_t r = 0; r < 4; r++) {
		siginfo_t si = { 0 };

		assert_int_equal(sent[r].pid, -f->ranks[0][r].pid);
		assert_int_equal(sent[r].sig, SIGCONT);
		assert_int_equal(waitid(P_PID, (id_t)f->ranks[0][r].pid, &si,
					WCONTINUED | WNOWAIT), 0);
		assert_int_equal(si.si_code, CLD_CONTINUED);
		assert_rank_running(f, 0, r);
	}
	assert_int_equal(j->stopped, 0);
	fx_free(f);
}

static void test_gang_switch_stops_outgoing_before_continuing_incoming(
	void **state)
{
	struct fx *f = fx_new(4, 2);

	(void)state;
	/* rows {0, 2} running, {1, 3} stopped; then the other way round, a
	 * few times: the list interleaves them, the signals may not */
	f->job[1].want = f->job[3].want = ST_HB_STOP;
	nm_gang_switch(f->jobs, 0);
	for (int sw = 0; sw < 6; sw++) {
		int out = sw % 2 ? 1 : 0; /* the row stopped now */

		nsent = 0;
		for (int k = 0; k < 4; k++)
			f->job[k].want = k % 2 == out ? ST_HB_STOP : ST_HB_RUN;
		nm_gang_switch(f->jobs, 0);
		assert_int_equal(nsent, 8);
		for (unsigned i = 0; i < 8; i++)
			assert_int_equal(sent[i].sig, i < 4 ? SIGSTOP : SIGCONT);
		for (int k = 0; k < 4; k++) {
			assert_int_equal(f->job[k].stopped, k % 2 == out);
			for (uint32_t r = 0; r < 2; r++) {
				if (k % 2 == out)
					assert_rank_stopped(f, k, r);
				else
					assert_rank_running(f, k, r);
			}
		}
	}
	fx_free(f);
}

static void test_gang_stop_before_start_leaves_job_unstarted(void **state)
{
	struct fx *f = fx_new(1, 2);
	struct nm_job *j = &f->job[0];

	(void)state;
	j->started = 0; /* staged, never run: the caller starts it at RUN */
	j->want = ST_HB_STOP;
	nm_gang_switch(f->jobs, 0);
	j->want = ST_HB_RUN;
	nm_gang_switch(f->jobs, 0);
	assert_int_equal(nsent, 0);
	assert_int_equal(j->started, 0);
	assert_int_equal(j->stopped, 0);
	fx_free(f);
}

static void test_gang_reaped_ranks_are_skipped(void **state)
{
	struct fx *f = fx_new(1, 3);
	struct nm_job *j = &f->job[0];
	pid_t gone = j->ranks[1].pid;

	(void)state;
	real_kill(-gone, SIGKILL);
	assert_int_equal(waitpid(gone, &j->ranks[1].status, 0), gone);
	j->ranks[1].pid = 0;
	j->want = ST_HB_STOP;
	nm_gang_switch(f->jobs, 0);
	j->want = ST_HB_RUN;
	nm_gang_switch(f->jobs, 0);
	assert_int_equal(nsent, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_true(sent[i].pid != -gone && sent[i].pid != 0);
	fx_free(f);
}

/* Cancelled during a context switch: the job is stopped when the
 * heartbeat stops listing it.  SIGKILL ends stopped processes: each rank
 * is reaped (as storm-nm does) with its SIGKILL status and its pipe reaches EOF
 * (its child, stopped in the same group, dies too); no SIGCONT needed. */
static void test_gang_cancel_stopped_job_kills_reaps_and_closes(void **state)
{
	struct fx *f = fx_new(1, 3);
	struct nm_job *j = &f->job[0];
	struct timespec ts = { 0, 1000000 };
	int left = 3;

	(void)state;
	j->want = ST_HB_STOP;
	nm_gang_switch(f->jobs, 0);
	for (uint32_t r = 0; r < 3; r++)
		assert_rank_stopped(f, 0, r);
	nm_launch_kill(j);
	for (int i = 0; i < 5000 && left; i++) {
		reap(f);
		left = 0;
		for (uint32_t r = 0; r < 3; r++)
			left += j->ranks[r].pid != 0;
		if (left)
			nanosleep(&ts, NULL);
	}
	assert_int_equal(left, 0);
	for (uint32_t r = 0; r < 3; r++) {
		char c;

		assert_true(WIFSIGNALED(j->ranks[r].status));
		assert_int_equal(WTERMSIG(j->ranks[r].status), SIGKILL);
		/* EOF: the rank and its child, which holds the pipe too,
		 * are both gone */
		assert_int_equal(read(j->ranks[r].fd[0], &c, 1), 0);
	}
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gang_mpl1_every_job_run_makes_no_system_call),
		cmocka_unit_test(test_gang_stop_then_run_signals_every_rank_group_once),
		cmocka_unit_test(test_gang_switch_stops_outgoing_before_continuing_incoming),
		cmocka_unit_test(test_gang_stop_before_start_leaves_job_unstarted),
		cmocka_unit_test(test_gang_reaped_ranks_are_skipped),
		cmocka_unit_test(test_gang_cancel_stopped_job_kills_reaps_and_closes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
