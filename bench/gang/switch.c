/*
 * switch.c — `gang-switch`: what a gang-scheduling context switch costs on
 * this machine, by the ways a node manager can stop and resume a job's
 * processes: signals to each rank's process group (what storm-nm does,
 * node/gang.c) and the cgroup freezer (v1 `freezer.state`, v2
 * `cgroup.freeze`).  docs/gang.md "Context switch" quotes its tables.
 *
 * For N = 1, 8, 64 (--procs) CPU-bound children, each the leader of its
 * own process group as a rank is under storm-nm, every repetition times,
 * for every method (in an order rotated each repetition):
 *
 *   stop    from the first request until every process is stopped:
 *           sigstop      kill(-pgid, SIGSTOP) to each group, then
 *                        waitid(WSTOPPED | WNOWAIT) on each child (the
 *                        kernel wakes the parent when the child stops);
 *           freezer-v1   write FROZEN to freezer.state, re-read it until
 *                        it says FROZEN (FREEZING meanwhile; v1 has no
 *                        notification);
 *           freeze-v2    write 1 to cgroup.freeze, re-read cgroup.events
 *                        until it says "frozen 1";
 *           freeze-v2-poll  the same, but sleeping in poll(POLLPRI) on
 *                        cgroup.events between reads, as its documentation
 *                        suggests (not in the default set: see docs/gang.md)
 *   resume  the same back: SIGCONT and waitid(WCONTINUED | WNOWAIT);
 *           THAWED; 0 and "frozen 0".
 *
 * and, inside each, the "issue" time: the kill() calls or the one write
 * alone, which is what the caller's own loop pays; the rest the kernel
 * finishes asynchronously.  Between phases the children run (--gap-us,
 * default 1000) so that each stop catches them running.  After every
 * sigstop phase, outside the clock, /proc/PID/stat must show 'T' for
 * every child (and no 'T' after resume), else the run fails.
 *
 * --fifo runs the measuring process as SCHED_FIFO 1, --nice N (N < 0) as
 * SCHED_OTHER at nice N — its children stay SCHED_OTHER at nice 0
 * (SCHED_RESET_ON_FORK) — as a node manager raised above its ranks
 * would; with --fifo the re-read loops sleep 20 us between reads so that
 * the children can run on the core they would otherwise spin on.
 *
 * Usage: gang-switch [--json] [--reps R] [--procs N,N,...] [--gap-us U]
 *                    [--methods sigstop,freezer-v1,freeze-v2,...]
 *                    [--fifo | --nice N]
 * The freezer methods need root and a mounted hierarchy (one that is
 * unavailable is skipped and says why).  Prints a table, or with --json
 * one JSON object: stop_us_nN_M, stop_p99_us_nN_M, resume_us_nN_M,
 * resume_p99_us_nN_M, stop_issue_us_nN_M, resume_issue_us_nN_M (medians
 * unless p99; M = sigstop, freezer_v1, freeze_v2, freeze_v2_poll),
 * M_skipped (why), reps, gap_us, fifo, nice.  Median and p99 are nearest-rank
 * (bench/ompi/common.h).
 *
 * Cleanup, pass or fail (also on SIGINT/SIGTERM/SIGHUP and a 60 s
 * watchdog per repetition): the cgroups are thawed, every child is killed
 * by its PID and reaped, the cgroups removed.  Only a SIGKILL of this
 * program can leave a cgroup behind (storm-gang-bench.PID under the
 * mount); its children, once thawed, die with it (PR_SET_PDEATHSIG).
 *
 * Exit status: 0 measured; 1 a failure (named on stderr); 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../ompi/common.h"

#define MAX_PROCS 1024
#define MAX_NS 16
#define WARMUP 5
#define WATCHDOG_S 60

enum method { M_SIGSTOP, M_FREEZER_V1, M_FREEZE_V2, M_FREEZE_V2_POLL,
	      M_COUNT };
enum cg { CG_V1, CG_V2, CG_COUNT };

static const struct {
	const char *name, *key;
	int cg;        /* the cgroup it works on, or -1 */
	int dflt;      /* in the default set */
} method[M_COUNT] = {
	[M_SIGSTOP] = { "sigstop", "sigstop", -1, 1 },
	[M_FREEZER_V1] = { "freezer-v1", "freezer_v1", CG_V1, 1 },
	[M_FREEZE_V2] = { "freeze-v2", "freeze_v2", CG_V2, 1 },
	[M_FREEZE_V2_POLL] = { "freeze-v2-poll", "freeze_v2_poll", CG_V2, 0 },
};

/* ---- what cleanup needs, reachable from a signal handler ----------------- */

/* The one global: a signal handler must find the children and the
 * cgroups.  Written by the main flow; the handler only reads it. */
static struct {
	pid_t pid[MAX_PROCS];
	volatile sig_atomic_t n;
	char dir[CG_COUNT][1100]; /* cgroup directories made, "" if none */
	int ctl[CG_COUNT];       /* freezer.state / cgroup.freeze, or -1 */
	int events;              /* v2 cgroup.events, or -1 */
	volatile sig_atomic_t cleaning;
} g = { .ctl = { -1, -1 }, .events = -1 };

static int fifo; /* --fifo: the re-read loops sleep between reads */
static long nice_val; /* --nice */

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		return;
}

/* Async-signal-safe: thaw, kill each child by its PID, reap, remove the
 * cgroups.  Runs once. */
static void cleanup(void)
{
	if (g.cleaning)
		return;
	g.cleaning = 1;
	/* a task frozen by v1 does not act on SIGKILL until thawed */
	if (g.ctl[CG_V1] >= 0 && pwrite(g.ctl[CG_V1], "THAWED", 6, 0) < 0)
		say("gang-switch: cannot thaw the v1 cgroup\n");
	if (g.ctl[CG_V2] >= 0 && pwrite(g.ctl[CG_V2], "0", 1, 0) < 0)
		say("gang-switch: cannot thaw the v2 cgroup\n");
	for (int i = 0; i < g.n; i++)
		if (g.pid[i] > 0)
			kill(g.pid[i], SIGKILL);
	for (int i = 0; i < g.n; i++)
		if (g.pid[i] > 0)
			while (waitpid(g.pid[i], NULL, 0) < 0 && errno == EINTR)
				;
	g.n = 0;
	if (g.events >= 0)
		close(g.events);
	g.events = -1;
	for (int c = 0; c < CG_COUNT; c++) {
		if (g.ctl[c] >= 0)
			close(g.ctl[c]);
		g.ctl[c] = -1;
		if (g.dir[c][0] && rmdir(g.dir[c]) < 0) {
			say("gang-switch: cannot remove ");
			say(g.dir[c]);
			say("\n");
		}
		g.dir[c][0] = '\0';
	}
}

static void on_fatal_signal(int sig)
{
	say(sig == SIGALRM ? "gang-switch: a repetition outlasted the "
			     "watchdog; giving up\n"
			   : "gang-switch: interrupted\n");
	cleanup();
	_exit(1);
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "gang-switch: %s: %s\n", what, strerror(err));
	cleanup();
	exit(1);
}

/* ---- clocks and small helpers --------------------------------------------- */

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A control file's contents, read from offset 0 (cgroup files are
 * generated afresh by each read from 0). */
static void read_at0(int fd, char *buf, size_t cap, const char *what)
{
	ssize_t n = pread(fd, buf, cap - 1, 0);

	if (n < 0)
		fail(what, errno);
	buf[n] = '\0';
}

/* /proc/PID/stat's state letter, or 0 */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* ---- cgroups ----------------------------------------------------------------- */

/* The freezer v1 mount and the cgroup2 mount, from /proc/mounts ("" if
 * none).  On a hybrid host cgroup2 is often at /sys/fs/cgroup/unified:
 * cgroup.freeze is a core file of every non-root cgroup2, with or without
 * controllers. */
static void find_mounts(char mnt[CG_COUNT][512])
{
	char dev[256], dir[512], type[64], opts[512];
	FILE *f = fopen("/proc/mounts", "re");

	mnt[CG_V1][0] = mnt[CG_V2][0] = '\0';
	if (!f)
		return;
	while (fscanf(f, "%255s %511s %63s %511s %*d %*d", dev, dir, type,
		      opts) == 4) {
		if (!strcmp(type, "cgroup") && !mnt[CG_V1][0]) {
			char *save = NULL;

			for (char *o = strtok_r(opts, ",", &save); o;
			     o = strtok_r(NULL, ",", &save))
				if (!strcmp(o, "freezer"))
					snprintf(mnt[CG_V1], 512, "%s", dir);
		} else if (!strcmp(type, "cgroup2") && !mnt[CG_V2][0]) {
			snprintf(mnt[CG_V2], 512, "%s", dir);
		}
	}
	fclose(f);
}

/* Makes cgroup c under mount: 0, or -1 and a reason in why. */
static int cgroup_make(int c, const char *mount, char *why, size_t whylen)
{
	char path[1200];

	if (!mount[0]) {
		snprintf(why, whylen, "no %s mounted (/proc/mounts)",
			 c == CG_V1 ? "cgroup v1 freezer" : "cgroup2");
		return -1;
	}
	snprintf(g.dir[c], sizeof(g.dir[c]), "%s/storm-gang-bench.%d", mount,
		 (int)getpid());
	if (mkdir(g.dir[c], 0755) < 0) {
		snprintf(why, whylen, "mkdir %s: %s", g.dir[c],
			 strerror(errno));
		g.dir[c][0] = '\0';
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", g.dir[c],
		 c == CG_V1 ? "freezer.state" : "cgroup.freeze");
	g.ctl[c] = open(path, O_RDWR | O_CLOEXEC);
	if (g.ctl[c] < 0) {
		snprintf(why, whylen, "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (c == CG_V2) {
		snprintf(path, sizeof(path), "%s/cgroup.events", g.dir[c]);
		g.events = open(path, O_RDONLY | O_CLOEXEC);
		if (g.events < 0) {
			snprintf(why, whylen, "open %s: %s", path,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void cgroup_add(int c, pid_t pid)
{
	char path[1200], s[32];
	int fd, len;

	snprintf(path, sizeof(path), "%s/cgroup.procs", g.dir[c]);
	len = snprintf(s, sizeof(s), "%d", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, (size_t)len) != len)
		fail(path, errno);
	close(fd);
}

/* ---- children ---------------------------------------------------------------- */

static void spawn(int n, const int *cg_used)
{
	pid_t parent = getpid();

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			fail("fork", errno);
		if (pid == 0) {
			volatile unsigned long spin = 0;

			setpgid(0, 0);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent) /* it died before prctl */
				_exit(1);
			for (;;)
				spin++;
		}
		setpgid(pid, pid); /* as the child does: no race either way */
		g.pid[i] = pid;
		g.n = i + 1;
		for (int c = 0; c < CG_COUNT; c++)
			if (cg_used[c])
				cgroup_add(c, pid);
	}
}

static void reap_all(void)
{
	for (int i = 0; i < g.n; i++) {
		kill(g.pid[i], SIGKILL);
		while (waitpid(g.pid[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
	g.n = 0;
}

/* ---- the methods: one phase each (stop = 1 stops, 0 resumes) --------------- */

static void phase_sigstop(int stop, double *issue_us)
{
	double t0 = now_us();

	for (int i = 0; i < g.n; i++)
		if (kill(-g.pid[i], stop ? SIGSTOP : SIGCONT) < 0)
			fail("kill", errno);
	*issue_us = now_us() - t0;
	for (int i = 0; i < g.n; i++) {
		siginfo_t si;

		do {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)g.pid[i], &si,
				   (stop ? WSTOPPED : WCONTINUED) | WNOWAIT) < 0 &&
			    errno != EINTR)
				fail("waitid", errno);
		} while (si.si_code != (stop ? CLD_STOPPED : CLD_CONTINUED));
	}
}

static void reread_pause(void)
{
	if (fifo)
		sleep_us(20);
}

static void phase_freezer_v1(int stop, double *issue_us)
{
	const char *want = stop ? "FROZEN" : "THAWED";
	char buf[64];
	double t0 = now_us();

	if (pwrite(g.ctl[CG_V1], want, strlen(want), 0) < 0)
		fail("write freezer.state", errno);
	*issue_us = now_us() - t0;
	for (;;) { /* FREEZING until every task is in the refrigerator */
		read_at0(g.ctl[CG_V1], buf, sizeof(buf), "read freezer.state");
		if (!strncmp(buf, want, strlen(want)))
			break;
		reread_pause();
	}
}

static void phase_freeze_v2(int stop, int use_poll, double *issue_us)
{
	const char *want = stop ? "frozen 1" : "frozen 0";
	char buf[256];
	double t0 = now_us();

	if (pwrite(g.ctl[CG_V2], stop ? "1" : "0", 1, 0) < 0)
		fail("write cgroup.freeze", errno);
	*issue_us = now_us() - t0;
	for (;;) {
		struct pollfd p = { .fd = g.events, .events = POLLPRI };

		read_at0(g.events, buf, sizeof(buf), "read cgroup.events");
		if (strstr(buf, want))
			break;
		/* a change notified since the read above wakes it at once */
		if (!use_poll)
			reread_pause();
		else if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			fail("poll cgroup.events", errno);
	}
}

static void phase(int m, int stop, double *issue_us)
{
	switch (m) {
	case M_SIGSTOP: phase_sigstop(stop, issue_us); break;
	case M_FREEZER_V1: phase_freezer_v1(stop, issue_us); break;
	case M_FREEZE_V2: phase_freeze_v2(stop, 0, issue_us); break;
	case M_FREEZE_V2_POLL: phase_freeze_v2(stop, 1, issue_us); break;
	default: break;
	}
}

/* Outside the clock: what /proc says must agree with the signals. */
static void check_proc(int stopped)
{
	for (int i = 0; i < g.n; i++) {
		char st = proc_state(g.pid[i]);

		if ((st == 'T') != stopped) {
			fprintf(stderr, "gang-switch: child %d shows state "
				"'%c' after %s\n", (int)g.pid[i], st ? st : '?',
				stopped ? "SIGSTOP" : "SIGCONT");
			cleanup();
			exit(1);
		}
	}
}

/* ---- main -------------------------------------------------------------------- */

struct result {
	double stop[3], resume[3]; /* median, p99, median of the issue */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: gang-switch [--json] [--reps R] [--procs N,N,...] "
		"[--gap-us U]\n"
		"                   [--methods sigstop,freezer-v1,freeze-v2,"
		"freeze-v2-poll] [--fifo | --nice N]\n");
}

/* "1,8,64" into ns: the count, or -1 */
static int parse_procs(const char *s, long *ns, int cap)
{
	char buf[256], *save = NULL;
	int k = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (k == cap || bench_parse_pos(t, &ns[k]) || ns[k] > MAX_PROCS)
			return -1;
		k++;
	}
	return k ? k : -1;
}

/* "sigstop,freeze-v2" into want[]: 0 or -1 */
static int parse_methods(const char *s, int *want)
{
	char buf[256], *save = NULL;

	memset(want, 0, M_COUNT * sizeof(*want));
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int m = 0;

		while (m < M_COUNT && strcmp(t, method[m].name))
			m++;
		if (m == M_COUNT)
			return -1;
		want[m] = 1;
	}
	return 0;
}

static void print_json(const long *ns, int nn, const int *want,
		       const int *use, char why[M_COUNT][1400],
		       struct result res[][M_COUNT], long reps, long gap)
{
	const char *sep = "";

	printf("{");
	for (int x = 0; x < nn; x++)
		for (int m = 0; m < M_COUNT; m++) {
			const struct result *q = &res[x][m];
			const char *k = method[m].key;
			long n = ns[x];

			if (!use[m])
				continue;
			printf("%s\"stop_us_n%ld_%s\": %.1f, "
			       "\"stop_p99_us_n%ld_%s\": %.1f, "
			       "\"resume_us_n%ld_%s\": %.1f, "
			       "\"resume_p99_us_n%ld_%s\": %.1f, "
			       "\"stop_issue_us_n%ld_%s\": %.1f, "
			       "\"resume_issue_us_n%ld_%s\": %.1f",
			       sep, n, k, q->stop[0], n, k, q->stop[1], n, k,
			       q->resume[0], n, k, q->resume[1], n, k,
			       q->stop[2], n, k, q->resume[2]);
			sep = ", ";
		}
	for (int m = 0; m < M_COUNT; m++) {
		if (!want[m] || use[m])
			continue;
		printf("%s\"%s_skipped\": \"", sep, method[m].key);
		for (const char *c = why[m]; *c; c++)
			printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
		printf("\"");
		sep = ", ";
	}
	printf("%s\"reps\": %ld, \"gap_us\": %ld, \"fifo\": %s, \"nice\": %ld}\n",
	       sep, reps, gap, fifo ? "true" : "false", nice_val);
}

static void print_table(const long *ns, int nn, const int *want,
			const int *use, char why[M_COUNT][1400],
			struct result res[][M_COUNT], long reps, long gap)
{
	printf("gang-switch: %ld repetitions, %ld us between phases, "
	       "measuring process %s %ld; times in us\n", reps, gap,
	       fifo ? "SCHED_FIFO" : "SCHED_OTHER, nice", fifo ? 1 : nice_val);
	printf("%5s  %-14s  %9s  %9s  %9s  %9s  %9s  %9s\n", "procs",
	       "method", "stop", "stop p99", "resume", "res. p99",
	       "stop iss.", "res. iss.");
	for (int x = 0; x < nn; x++)
		for (int m = 0; m < M_COUNT; m++) {
			const struct result *q = &res[x][m];

			if (!use[m])
				continue;
			printf("%5ld  %-14s  %9.1f  %9.1f  %9.1f  %9.1f  "
			       "%9.1f  %9.1f\n", ns[x], method[m].name,
			       q->stop[0], q->stop[1], q->resume[0],
			       q->resume[1], q->stop[2], q->resume[2]);
		}
	printf("(stop, resume: median; iss.: median time of the kill() "
	       "calls or the write alone)\n");
	for (int m = 0; m < M_COUNT; m++)
		if (want[m] && !use[m])
			printf("%s: skipped (%s)\n", method[m].name, why[m]);
}

int main(int argc, char **argv)
{
	long ns[MAX_NS] = { 1, 8, 64 }, reps = 200, gap = 1000;
	int nn = 3, json = 0, want[M_COUNT], use[M_COUNT] = { 0 };
	int cg_used[CG_COUNT] = { 0 }, cg_ok[CG_COUNT];
	char why[M_COUNT][1400] = { { 0 } }, cg_why[CG_COUNT][1400];
	char mnt[CG_COUNT][512];
	static struct result res[MAX_NS][M_COUNT];
	double *all[M_COUNT][4]; /* this N's samples: stop, resume, issues */
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	for (int m = 0; m < M_COUNT; m++)
		want[m] = method[m].dflt;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;

		if (!strcmp(a, "--json"))
			json = 1;
		else if (!strcmp(a, "--fifo"))
			fifo = 1;
		else if (!strcmp(a, "--reps") && v && ++i)
			bad = bench_parse_pos(v, &reps) != 0;
		else if (!strcmp(a, "--nice") && v && ++i)
			bad = sscanf(v, "%ld", &nice_val) != 1 || nice_val > 0 ||
			      nice_val < -20;
		else if (!strcmp(a, "--gap-us") && v && ++i)
			bad = bench_parse_pos(v, &gap) != 0;
		else if (!strcmp(a, "--procs") && v && ++i)
			bad = (nn = parse_procs(v, ns, MAX_NS)) < 0;
		else if (!strcmp(a, "--methods") && v && ++i)
			bad = parse_methods(v, want) < 0;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return usage(stdout), 0;
		else
			bad = 1;
		if (bad) {
			usage(stderr);
			return 2;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (fifo && nice_val) {
		usage(stderr);
		return 2;
	}
	if (fifo || nice_val) {
		struct sched_param sp = { .sched_priority = fifo ? 1 : 0 };

		if (nice_val && setpriority(PRIO_PROCESS, 0, (int)nice_val) < 0)
			fail("setpriority", errno);
		if (sched_setscheduler(0, (fifo ? SCHED_FIFO : SCHED_OTHER) |
					      SCHED_RESET_ON_FORK, &sp) < 0)
			fail("sched_setscheduler", errno);
	}
	for (int m = 0; m < M_COUNT; m++)
		for (int k = 0; k < 4; k++)
			if (!(all[m][k] = calloc((size_t)reps, sizeof(double))))
				fail("calloc", ENOMEM);

	find_mounts(mnt);
	for (int c = 0; c < CG_COUNT; c++) {
		for (int m = 0; m < M_COUNT; m++)
			cg_used[c] |= want[m] && method[m].cg == c;
		cg_ok[c] = cg_used[c] &&
			   !cgroup_make(c, mnt[c], cg_why[c], sizeof(cg_why[c]));
		cg_used[c] = cg_ok[c];
	}
	for (int m = 0; m < M_COUNT; m++) {
		use[m] = want[m] && (method[m].cg < 0 || cg_ok[method[m].cg]);
		if (want[m] && !use[m]) {
			snprintf(why[m], sizeof(why[m]), "%s",
				 cg_why[method[m].cg]);
			fprintf(stderr, "gang-switch: %s skipped: %s\n",
				method[m].name, why[m]);
		}
	}

	for (int x = 0; x < nn; x++) {
		spawn((int)ns[x], cg_used);
		sleep_us(10000); /* let them all get going */
		for (long r = -WARMUP; r < reps; r++) {
			alarm(WATCHDOG_S);
			for (int k = 0; k < M_COUNT; k++) {
				int m = (int)((r + WARMUP + k) % M_COUNT);
				double t0, t1, t2, t3, si, ri;

				if (!use[m])
					continue;
				sleep_us(gap);
				t0 = now_us();
				phase(m, 1, &si);
				t1 = now_us();
				if (m == M_SIGSTOP)
					check_proc(1);
				sleep_us(gap);
				t2 = now_us();
				phase(m, 0, &ri);
				t3 = now_us();
				if (m == M_SIGSTOP)
					check_proc(0);
				if (r < 0)
					continue;
				all[m][0][r] = t1 - t0;
				all[m][1][r] = t3 - t2;
				all[m][2][r] = si;
				all[m][3][r] = ri;
			}
		}
		alarm(0);
		reap_all();
		for (int m = 0; m < M_COUNT; m++) {
			size_t nr = (size_t)reps;
			struct result *q = &res[x][m];

			if (!use[m])
				continue;
			q->stop[0] = bench_quantile(all[m][0], nr, 0.5);
			q->stop[1] = bench_quantile(all[m][0], nr, 0.99);
			q->resume[0] = bench_quantile(all[m][1], nr, 0.5);
			q->resume[1] = bench_quantile(all[m][1], nr, 0.99);
			q->stop[2] = bench_quantile(all[m][2], nr, 0.5);
			q->resume[2] = bench_quantile(all[m][3], nr, 0.5);
		}
	}
	cleanup();
	for (int m = 0; m < M_COUNT; m++)
		for (int k = 0; k < 4; k++)
			free(all[m][k]);
	if (json)
		print_json(ns, nn, want, use, why, res, reps, gap);
	else
		print_table(ns, nn, want, use, why, res, reps, gap);
	return 0;
}
