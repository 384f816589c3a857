/*
 * launch.c — the node manager's process launcher: fork a job's local ranks
 * with their STORM_* environment and their stdout/stderr on pipes, reap
 * them, kill them, remove their files.  Each rank leads its own process
 * group so a kill reaches everything it started.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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

static void child(struct nm *nm, struct nm_job *j, uint32_t rank, int out[2],
		  int err[2], pid_t parent)
{
	const st_manifest_t *m = j->m;
	char prog[2048], v[64];
	char **argv = calloc(m->argc + 1, sizeof(char *));

	setpgid(0, 0);
	/* a rank never outlives its node manager, even a killed one */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	dup2(out[1], 1);
	dup2(err[1], 2);
	signal(SIGPIPE, SIG_DFL);
	snprintf(prog, sizeof(prog), "%s/%s", j->dir, m->file_names[0]);
	for (uint32_t i = 0; i < m->envc; i++)
		putenv(m->env[i]);
	snprintf(v, sizeof(v), "%u", j->id);
	setenv("STORM_JOB_ID", v, 1);
	snprintf(v, sizeof(v), "%u", rank);
	setenv("STORM_RANK", v, 1);
	snprintf(v, sizeof(v), "%u", m->ranks);
	setenv("STORM_SIZE", v, 1);
	snprintf(v, sizeof(v), "%u", sp_node_id(nm->w));
	setenv("STORM_NODEID", v, 1);
	setenv("STORM_NODENAME", nm->host->name, 1);
	setenv("STORM_JOB_DIR", j->dir, 1);
	if (m->cwd && m->cwd[0] && chdir(m->cwd) < 0) {
		dprintf(2, "storm-nm %s: rank %u: cannot enter %s: %s\n",
			nm->host->name, rank, m->cwd, strerror(errno));
		_exit(127);
	}
	if (!argv)
		_exit(127);
	argv[0] = m->argv[0];
	for (uint32_t i = 1; i < m->argc; i++)
		argv[i] = m->argv[i];
	execv(prog, argv);
	dprintf(2, "storm-nm %s: rank %u: cannot run %s: %s\n", nm->host->name,
		rank, m->argv[0], strerror(errno));
	_exit(127);
}

static int on_output(int32_t fd, int32_t revents, void *data);

int nm_job_start(struct nm *nm, struct nm_job *j, char *err, size_t errlen)
{
	uint32_t self = sp_node_id(nm->w), k = 0;
	pid_t self_pid = getpid();

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
		pid = fork();
		if (pid == 0)
			child(nm, j, r, out, er, self_pid);
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
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (struct nm_job *j = nm->jobs; j; j = j->next)
			for (uint32_t i = 0; i < j->nlocal; i++)
				if (j->ranks[i].pid == pid) {
					j->ranks[i].pid = 0;
					j->ranks[i].status = st;
				}
	}
}
