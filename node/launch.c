/*
 * launch.c — the node manager's process launcher: fork a job's local ranks
 * with their STORM_* environment and their stdout/stderr on pipes, reap
 * them, kill them, remove their files.  Each rank leads its own process
 * group so a kill reaches everything it started.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "nm.h"

void nm_job_remove_files(struct nm_job *j)
{
	if (!j->written || !j->m)
		return;
	for (uint32_t i = 0; i < j->m->nfiles; i++) {
		char path[2048];

		snprintf(path, sizeof(path), "%s/%s", j->dir,
			 j->m->file_names[i]);
		unlink(path);
	}
	rmdir(j->dir);
	j->written = 0;
}

/* What a rank's environment takes from its user's passwd entry when the
 * user did not export it; nothing comes from the daemon's own. */
static int env_has(char **e, size_t k, const char *name)
{
	size_t len = strlen(name);

	for (size_t x = 0; x < k; x++)
		if (e[x] && !strncmp(e[x], name, len) && e[x][len] == '=')
			return 1;
	return 0;
}

/* The environment of one rank, built before the fork, defined rather
 * than inherited from the daemon: the user's --export's, STORM_*, then
 * an allow-list the user did not set: PATH (a default), HOME, USER,
 * LOGNAME, SHELL (from the node's passwd entry of the job's user).
 * Returns a malloc'd NULL-terminated array of malloc'd strings. */
static char **rank_env(struct nm *nm, const struct nm_job *j, uint32_t rank)
{
	const st_manifest_t *m = j->m;
	const struct nm_identity *id = j->ident;
	size_t k = 0;
	char **e = calloc(m->envc + 12, sizeof(char *));

	if (!e)
		return NULL;
	for (uint32_t i = 0; i < m->envc; i++)
		e[k++] = strdup(m->env[i]);
	if (asprintf(&e[k++], "STORM_JOB_ID=%u", j->id) < 0 ||
	    asprintf(&e[k++], "STORM_RANK=%u", rank) < 0 ||
	    asprintf(&e[k++], "STORM_SIZE=%u", m->ranks) < 0 ||
	    asprintf(&e[k++], "STORM_NODEID=%u", sp_node_id(nm->w)) < 0 ||
	    asprintf(&e[k++], "STORM_NODENAME=%s", nm->host->name) < 0 ||
	    asprintf(&e[k++], "STORM_JOB_DIR=%s", j->dir) < 0)
		e[k - 1] = NULL;
	{
		/* the allow-list, where the user did not export it */
		const char *const allow[][2] = {
			{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
			{ "HOME", id ? id->home : NULL },
			{ "USER", id ? id->name : NULL },
			{ "LOGNAME", id ? id->name : NULL },
			{ "SHELL", id ? id->shell : NULL },
		};

		for (size_t a = 0; a < sizeof(allow) / sizeof(*allow); a++)
			if (allow[a][1] && !env_has(e, k, allow[a][0]) &&
			    asprintf(&e[k++], "%s=%s", allow[a][0],
				     allow[a][1]) < 0)
				e[k - 1] = NULL;
	}
	for (size_t x = 0; x < k; x++)
		if (!e[x]) { /* out of memory somewhere */
			for (size_t y = 0; y < k; y++)
				free(e[y]);
			free(e);
			return NULL;
		}
	return e;
}

static void free_env(char **e)
{
	for (size_t i = 0; e && e[i]; i++)
		free(e[i]);
	free(e);
}

static void child_fail(const char *what, const char *path)
{
	const char *why = strerror(errno);

	/* async-signal-safe: the parent's memory is shared until exec */
	if (write(2, "storm-nm: ", 10) < 0 || write(2, what, strlen(what)) < 0 ||
	    write(2, path, strlen(path)) < 0 || write(2, ": ", 2) < 0 ||
	    write(2, why, strlen(why)) < 0 || write(2, "\n", 1) < 0)
		_exit(127);
	_exit(127);
}

/* One rank by vfork(): the node manager's large address space is not
 * copied (a fork of it cost more than the rank's whole run), and the
 * child only makes system calls on data prepared here until it execs. */
static pid_t spawn_rank(struct nm *nm, struct nm_job *j, uint32_t rank,
			int out, int err)
{
	static const int handled[] = { SIGCHLD, SIGTERM, SIGINT, SIGUSR2,
				       SIGPIPE };
	const st_manifest_t *m = j->m;
	char prog[2048], **envp = rank_env(nm, j, rank);
	char **argv = calloc(m->argc + 1, sizeof(char *));
	sigset_t all, old;
	pid_t parent = getpid(), pid;

	if (!envp || !argv) {
		free_env(envp);
		free(argv);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < m->argc; i++)
		argv[i] = m->argv[i];
	snprintf(prog, sizeof(prog), "%s/%s", j->dir, m->file_names[0]);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0) {
		setpgid(0, 0);
		/* a rank runs at normal priority whatever the node manager's
		 * (realtime in the configuration) */
		sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ 0 });
		/* its user's rights from here on (errno set on failure) */
		if (j->ident && nm_identity_assume(j->ident) < 0)
			child_fail("cannot become the job's user ",
				   j->ident->name);
		/* a rank never outlives its node manager, even a killed one
		 * (after the uid change, which clears it) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(out, 1);
		dup2(err, 2);
		for (size_t i = 0; i < sizeof(handled) / sizeof(*handled); i++)
			signal(handled[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (m->cwd && m->cwd[0] && chdir(m->cwd) < 0)
			child_fail("cannot enter ", m->cwd);
		execve(prog, argv, envp);
		child_fail("cannot run ", m->argv[0]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free_env(envp);
	free(argv);
	return pid;
}

static int on_output(int32_t fd, int32_t revents, void *data);

int nm_job_start(struct nm *nm, struct nm_job *j, char *err, size_t errlen)
{
	uint32_t self = sp_node_id(nm->w), k = 0;

	/* who its ranks run as, resolved before any fork */
	if (j->m->owned && !j->ident) {
		char why[512];
		int rc;

		if (!(j->ident = malloc(sizeof(*j->ident)))) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if ((rc = nm_identity_resolve(j->m->uid, j->m->gid, j->ident,
					      why, sizeof(why)))) {
			free(j->ident);
			j->ident = NULL;
			snprintf(err, errlen, "node %s: cannot start job %u: "
				 "%s", nm->host->name, j->id, why);
			qb_log(LOG_ERR, "%s", err);
			return rc;
		}
	} else if (!j->m->owned) {
		qb_log(LOG_WARNING, "job %u: its manifest names no user (a "
		       "manager older than this node manager): its ranks run "
		       "as this daemon's user; upgrade the managers", j->id);
	}
	for (uint32_t r = 0; r < j->m->ranks; r++)
		j->nlocal += j->m->rank_node[r] == self;
	j->ranks = calloc(j->nlocal ? j->nlocal : 1, sizeof(*j->ranks));
	if (!j->ranks) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	j->started = 1;
	for (uint32_t r = 0; r < j->m->ranks; r++) {
		struct nm_rank *x;
		int out[2], er[2];
		pid_t pid;

		if (j->m->rank_node[r] != self)
			continue;
		x = &j->ranks[k++];
		x->rank = r;
		x->fd[0] = x->fd[1] = -1;
		if (pipe2(out, O_CLOEXEC) < 0)
			goto fail;
		if (pipe2(er, O_CLOEXEC) < 0) {
			close(out[0]);
			close(out[1]);
			goto fail;
		}
		pid = spawn_rank(nm, j, r, out[1], er[1]);
		close(out[1]);
		close(er[1]);
		if (pid < 0) {
			close(out[0]);
			close(er[0]);
			goto fail;
		}
		x->pid = pid;
		x->fd[0] = out[0];
		x->fd[1] = er[0];
		fcntl(out[0], F_SETFL, O_NONBLOCK);
		fcntl(er[0], F_SETFL, O_NONBLOCK);
		qb_loop_poll_add(nm->loop, QB_LOOP_MED, out[0], POLLIN, j,
				 on_output);
		qb_loop_poll_add(nm->loop, QB_LOOP_MED, er[0], POLLIN, j,
				 on_output);
	}
	qb_log(LOG_INFO, "job %u: started %u rank(s) here", j->id, j->nlocal);
	return 0;
fail:
	snprintf(err, errlen, "node %s: cannot start job %u: %s",
		 nm->host->name, j->id, strerror(errno));
	j->nlocal = k - 1; /* the ranks started so far */
	nm_job_kill(nm, j);
	return -errno;
}

static int on_output(int32_t fd, int32_t revents, void *data)
{
	struct nm_job *j = data;
	uint8_t buf[16384];
	ssize_t n;

	(void)revents;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		for (int s = 0; s < 2; s++) {
			struct nm_rank *x = &j->ranks[i];

			if (x->fd[s] != fd)
				continue;
			n = read(fd, buf, sizeof(buf));
			if (n > 0) {
				nm_queue_rec(j->nm, s ? ST_REC_STDERR :
						     ST_REC_STDOUT,
					     j->id, x->rank, buf, (uint32_t)n);
				return 0;
			}
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			qb_loop_poll_del(j->nm->loop, fd);
			close(fd);
			x->fd[s] = -1;
			nm_jobs_changed(j->nm);
			return 0;
		}
	}
	qb_loop_poll_del(j->nm->loop, fd);
	return 0;
}

void nm_job_kill(struct nm *nm, struct nm_job *j)
{
	(void)nm;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct nm_rank *x = &j->ranks[i];

		if (x->pid > 0)
			kill(-x->pid, SIGKILL);
	}
}

void nm_reap(struct nm *nm)
{
	struct rusage ru;
	int st;
	pid_t pid;

	/* wait4: each rank's usage goes to the manager with its status */
	while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0) {
		for (struct nm_job *j = nm->jobs; j; j = j->next)
			for (uint32_t i = 0; i < j->nlocal; i++)
				if (j->ranks[i].pid == pid) {
					struct nm_rank *x = &j->ranks[i];

					x->pid = 0;
					x->status = st;
					x->utime_us = (uint64_t)ru.ru_utime.tv_sec *
						1000000u + (uint64_t)ru.ru_utime.tv_usec;
					x->stime_us = (uint64_t)ru.ru_stime.tv_sec *
						1000000u + (uint64_t)ru.ru_stime.tv_usec;
					x->maxrss_kib = (uint64_t)ru.ru_maxrss;
				}
	}
}
