/*
 * launch.c — the node manager's process launcher (launch.h): a job's
 * local ranks forked with their defined environment and their
 * stdout/stderr on pipes, killed by process group.  Each rank leads its
 * own process group so a kill reaches everything it started.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "launch.h"

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

/* A BCS-MPI rank's LD_LIBRARY_PATH starts with the directory holding
 * libbcsmpi under MPICH's sonames, so a binary built with mpicc.mpich
 * (asking for libmpich.so.12 or libmpi.so.12) runs on BCS-MPI unchanged;
 * what the user exported follows.  Returns the new count of e. */
/* Room beyond the user's variables: 12 STORM_*, 4 BCS-MPI, 6 PMI, up to
 * 32 of mpi_env, 5 of the allow-list, the NULL. */
#define NM_ENV_EXTRA 64

static size_t abi_path(const struct nm_launch *l, char **e, size_t k)
{
	static const char name[] = "LD_LIBRARY_PATH=";
	const char *dir = l->mpich_abi_dir;
	char *v;

	if (!dir || !dir[0])
		return k;
	for (size_t x = 0; x < k; x++) {
		if (!e[x] || strncmp(e[x], name, sizeof(name) - 1))
			continue;
		if (asprintf(&v, "%s%s%s%s", name, dir,
			     e[x][sizeof(name) - 1] ? ":" : "",
			     e[x] + sizeof(name) - 1) < 0)
			return k; /* out of memory: the user's alone */
		free(e[x]);
		e[x] = v;
		return k;
	}
	if (asprintf(&e[k++], "%s%s", name, dir) < 0)
		e[--k] = NULL;
	return k;
}

/* The environment of one rank, built before the fork, defined rather
 * than inherited from the daemon: the user's --export's, STORM_*, then
 * an allow-list the user did not set: PATH (a default), HOME, USER,
 * LOGNAME, SHELL (from the node's passwd entry of the job's user).
 * Returns a malloc'd NULL-terminated array of malloc'd strings. */
static char **rank_env(const struct nm_launch *l, const struct nm_job *j,
		       uint32_t rank, uint32_t local)
{
	const st_manifest_t *m = j->m;
	const struct nm_identity *id = j->ident;
	size_t k = 0;
	/* 6 STORM_*, 4 BCS-MPI, 6 PMI, the site's, 5 of the allow-list,
	 * the NULL */
	char **e = calloc(m->envc + NM_ENV_EXTRA, sizeof(char *));

	if (!e)
		return NULL;
	/* the user's, but never what Storm sets below (a job submitted
	 * from inside another would carry the other's STORM_JOB_ID) */
	for (uint32_t i = 0; i < m->envc; i++)
		if (!st_env_storm_sets(m->env[i]) &&
		    (!m->alloc || strncmp(m->env[i], "STORM_NTASKS=", 13)))
			e[k++] = strdup(m->env[i]);
	/* a step's ranks are in its allocation's job; the step is theirs */
	if (asprintf(&e[k++], "STORM_JOB_ID=%u", m->parent ? m->parent :
		     j->id) < 0 ||
	    (m->parent &&
	     asprintf(&e[k++], "STORM_STEP_ID=%u", j->id) < 0) ||
	    /* a batch script: how many tasks its steps have by default */
	    (m->alloc &&
	     asprintf(&e[k++], "STORM_NTASKS=%u", m->ranks) < 0) ||
	    asprintf(&e[k++], "STORM_RANK=%u", rank) < 0 ||
	    asprintf(&e[k++], "STORM_SIZE=%u", m->ranks) < 0 ||
	    asprintf(&e[k++], "STORM_NODEID=%u", j->node_index) < 0 ||
	    asprintf(&e[k++], "STORM_LOCALID=%u", local) < 0 ||
	    asprintf(&e[k++], "STORM_NODELIST=%s",
		     j->nodelist ? j->nodelist : l->node) < 0 ||
	    (m->array_id &&
	     (asprintf(&e[k++], "STORM_ARRAY_JOB_ID=%u", m->array_id) < 0 ||
	      asprintf(&e[k++], "STORM_ARRAY_TASK_ID=%u", m->array_task) <
	      0)) ||
	    asprintf(&e[k++], "STORM_NODENAME=%s", l->node) < 0 ||
	    asprintf(&e[k++], "STORM_JOB_DIR=%s", j->dir) < 0)
		e[k - 1] = NULL;
	/* BCS-MPI: the segment, on a descriptor of its own, and the rank's
	 * area in it (bcs.h) */
	if (j->bcs_fd >= 0 &&
	    (asprintf(&e[k++], "STORM_BCS_FD=%d", NM_BCS_RANK_FD) < 0 ||
	     asprintf(&e[k++], "STORM_BCS_AREA=%u", local) < 0))
		e[k - 1] = NULL;
	if (j->bcs_fd >= 0 && j->bcs_bell >= 0 &&
	    asprintf(&e[k++], "STORM_BCS_BELL=%d", NM_BCS_BELL_FD) < 0)
		e[k - 1] = NULL;
	if (j->bcs_fd >= 0)
		k = abi_path(l, e, k);
	/* PMI-1: the server on a descriptor of its own, as MPICH's
	 * clients look for it */
	if (j->ranks[local].pmi_fd >= 0 &&
	    (asprintf(&e[k++], "PMI_FD=%d", NM_PMI_RANK_FD) < 0 ||
	     asprintf(&e[k++], "PMI_RANK=%u", rank) < 0 ||
	     asprintf(&e[k++], "PMI_SIZE=%u", m->ranks) < 0))
		e[k - 1] = NULL;
	/* Open MPI 4 as a foreign launcher starts it: its flux component
	 * loads libstorm-pmi, which talks to the same server; its shared
	 * memory goes in the job's directory here (two nodes of one host,
	 * as a local cluster has, must not meet in /dev/shm) */
	if (j->ranks[local].pmi_fd >= 0 && m->mpi == ST_MPI_PMIX &&
	    (asprintf(&e[k++], "FLUX_JOB_ID=%u", j->id) < 0 ||
	     asprintf(&e[k++], "FLUX_PMI_LIBRARY_PATH=%s",
		      l->pmi_library ? l->pmi_library : "") < 0 ||
	     asprintf(&e[k++], "OMPI_MCA_btl_vader_backing_directory=%s",
		      j->dir) < 0))
		e[k - 1] = NULL;
	/* the site's, where the user set nothing */
	for (const char *w = l->mpi_env; j->ranks[local].pmi_fd >= 0 && w &&
	     *w && k < m->envc + NM_ENV_EXTRA - 6;) {
		size_t n = strcspn(w, " \t"), eq = strcspn(w, "=");
		char *name;

		if (n && eq < n && (name = strndup(w, eq))) {
			if (!env_has(e, k, name) &&
			    !(e[k++] = strndup(w, n)))
				k--;
			free(name);
		}
		w += n;
		w += strspn(w, " \t");
	}
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

/* Why the last vfork'd child failed before its exec: it shares our
 * memory until then, so the parent reads what it set here. */
static struct {
	const char *what, *path;
	int err;
} child_err;

static void child_fail(const char *what, const char *path)
{
	const char *why = strerror(errno);

	child_err.what = what;
	child_err.path = path;
	child_err.err = errno;
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
static pid_t spawn_rank(const struct nm_launch *l, struct nm_job *j,
			uint32_t rank, uint32_t local, int out, int err,
			int traced)
{
	static const int handled[] = { SIGCHLD, SIGTERM, SIGINT, SIGUSR2,
				       SIGPIPE };
	const st_manifest_t *m = j->m;
	const uint32_t cpt = m->cpus_per_task ? m->cpus_per_task : 1;
	const int bound = l->ncpus && m->rank_cpu &&
			  m->cpu_bind != ST_BIND_NONE &&
			  m->rank_cpu[rank] < l->ncpus &&
			  cpt <= l->ncpus - m->rank_cpu[rank];
	cpu_set_t bind;
	char prog[2048], **envp = rank_env(l, j, rank, local);
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
	/* its cpus, the scheduler's columns on this node */
	CPU_ZERO(&bind);
	for (uint32_t k = 0; bound && k < cpt; k++)
		CPU_SET(l->cpus[m->rank_cpu[rank] + k], &bind);
	sigfillset(&all);
	child_err.what = NULL;
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0) {
		setpgid(0, 0);
		/* a rank runs at normal priority whatever the node manager's
		 * (realtime in the configuration) */
		sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ 0 });
		/* into the job's cgroup while it may (root), so everything it
		 * starts is there too */
		if (j->cg.made) {
			int rc = nm_cg_join(&j->cg);

			if (rc < 0) {
				errno = -rc;
				child_fail("cannot join the job's cgroup ",
					   j->cg.dir);
			}
		}
		if (bound && sched_setaffinity(0, sizeof(bind), &bind) < 0)
			child_fail("cannot bind to its cpu in ", prog);
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
		/* stdin: rank 0 of a run job reads what stormctl forwards
		 * (stdin.h); the others nothing (never the daemon's own) */
		int nul = rank == 0 && j->stdin_fd >= 0 ?
			  fcntl(j->stdin_fd, F_DUPFD_CLOEXEC, 0) :
			  open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (nul < 0 || (nul == 0 ? fcntl(0, F_SETFD, 0) :
				dup2(nul, 0)) < 0)
			child_fail("cannot open its stdin for ", prog);
		/* a BCS-MPI rank's memory is written by the engine (root)
		 * through its pid: it may never become a more privileged
		 * process (a set-uid program) under that pid */
		if (j->bcs_fd >= 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			child_fail("cannot set no_new_privs for ", prog);
		/* BCS-MPI's segment and doorbell: inherited (dup2 clears
		 * close-on-exec; already there, the flag is cleared by
		 * hand); the doorbell first moves off the segment's number */
		int bell = j->bcs_bell;

		if (bell == NM_BCS_RANK_FD &&
		    (bell = fcntl(bell, F_DUPFD_CLOEXEC, NM_BCS_BELL_FD + 1)) < 0)
			child_fail("cannot pass the BCS-MPI doorbell to ", prog);
		if (j->bcs_fd >= 0 &&
		    (j->bcs_fd == NM_BCS_RANK_FD ?
		     fcntl(NM_BCS_RANK_FD, F_SETFD, 0) :
		     dup2(j->bcs_fd, NM_BCS_RANK_FD)) < 0)
			child_fail("cannot pass the BCS-MPI segment to ",
				   prog);
		if (j->bcs_fd >= 0 && bell >= 0 &&
		    (bell == NM_BCS_BELL_FD ?
		     fcntl(NM_BCS_BELL_FD, F_SETFD, 0) :
		     dup2(bell, NM_BCS_BELL_FD)) < 0)
			child_fail("cannot pass the BCS-MPI doorbell to ",
				   prog);
		/* PMI-1: the server's socket (a PMI job has no BCS-MPI
		 * descriptors) */
		int pmi = j->ranks[local].pmi_fd;

		if (pmi >= 0 && (pmi == NM_PMI_RANK_FD ?
				 fcntl(NM_PMI_RANK_FD, F_SETFD, 0) :
				 dup2(pmi, NM_PMI_RANK_FD)) < 0)
			child_fail("cannot pass the PMI socket to ", prog);
		/* nothing else of the daemon's: its log, its fabric
		 * sockets and epolls would be the user's to write to (and
		 * to checkpoint) otherwise */
		close_range(pmi >= 0 ? NM_PMI_RANK_FD + 1 :
			    j->bcs_fd < 0 ? 3 : bell >= 0 ? NM_BCS_BELL_FD + 1
							  : NM_BCS_RANK_FD + 1,
			    ~0u, 0);
		for (size_t i = 0; i < sizeof(handled) / sizeof(*handled); i++)
			signal(handled[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (m->cwd && m->cwd[0] && chdir(m->cwd) < 0)
			child_fail("cannot enter ", m->cwd);
		/* a checkpointable rank's addresses are the same run after
		 * run (docs/checkpoint.md) */
		if (!m->mpi)
			personality(ADDR_NO_RANDOMIZE);
		/* a restart's stub: stopped at its exec for the restore */
		if (traced && ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			child_fail("cannot be traced for its restore: ", prog);
		execve(prog, argv, envp);
		child_fail("cannot run ", m->argv[0]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free_env(envp);
	free(argv);
	if (pid > 0 && child_err.what) { /* it never ran the program */
		waitpid(pid, NULL, 0);
		errno = child_err.err ? child_err.err : ECHILD;
		return -1;
	}
	return pid;
}

int nm_launch_identity(const struct nm_launch *l, struct nm_job *j,
		       char *err, size_t errlen)
{
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
				 "%s", l->node, j->id, why);
			qb_log(LOG_ERR, "%s", err);
			return rc;
		}
	} else if (!j->m->owned) {
		qb_log(LOG_WARNING, "job %u: its manifest names no user (a "
		       "manager older than this node manager): its ranks run "
		       "as this daemon's user; upgrade the managers", j->id);
	}
	return 0;
}

int nm_launch_start(const struct nm_launch *l, struct nm_job *j, int traced,
		    char *err, size_t errlen)
{
	int e;

	j->started = 1;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct nm_rank *x = &j->ranks[i];
		int out[2], er[2];
		pid_t pid;

		/* an allocation's ranks but 0 are task slots for its steps:
		 * no process, ended at once */
		if (j->m->alloc && x->rank != 0) {
			x->pid = 0;
			x->fd[0] = x->fd[1] = -1;
			x->status = 0;
			continue;
		}
		if (pipe2(out, O_CLOEXEC) < 0)
			goto fail;
		if (pipe2(er, O_CLOEXEC) < 0) {
			close(out[0]);
			close(out[1]);
			goto fail;
		}
		pid = spawn_rank(l, j, x->rank, i, out[1], er[1], traced);
		close(out[1]);
		close(er[1]);
		if (pid < 0) {
			close(out[0]);
			close(er[0]);
			goto fail;
		}
		if (traced) { /* stopped at its exec, or it failed */
			int st;

			while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
				;
			if (!WIFSTOPPED(st)) {
				x->pid = 0;
				close(out[0]);
				close(er[0]);
				errno = ECHILD;
				goto fail;
			}
		}
		x->pid = pid;
		x->fd[0] = out[0];
		x->fd[1] = er[0];
		fcntl(out[0], F_SETFL, O_NONBLOCK);
		fcntl(er[0], F_SETFL, O_NONBLOCK);
	}
	qb_log(LOG_INFO, "job %u: started %u rank(s) here", j->id, j->nlocal);
	return 0;
fail:
	e = errno;
	if (child_err.what) /* the rank's own step, as the job's user */
		snprintf(err, errlen, "node %s: cannot start job %u: %s%s: %s",
			 l->node, j->id, child_err.what, child_err.path,
			 strerror(e));
	else
		snprintf(err, errlen, "node %s: cannot start job %u: %s",
			 l->node, j->id, strerror(e));
	/* the ranks started so far are killed (and reaped as usual) */
	for (uint32_t i = 0; i < j->nlocal; i++)
		for (int s = 0; s < 2; s++) {
			if (j->ranks[i].fd[s] >= 0)
				close(j->ranks[i].fd[s]);
			j->ranks[i].fd[s] = -1;
		}
	nm_launch_kill(j);
	return -e;
}

void nm_launch_signal(struct nm_job *j, int sig)
{
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct nm_rank *x = &j->ranks[i];

		if (x->pid > 0)
			kill(-x->pid, sig);
	}
}

void nm_launch_kill(struct nm_job *j)
{
	nm_launch_signal(j, SIGKILL);
}
