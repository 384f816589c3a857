/*
 * gang.c — the node's half of gang scheduling: the context switch.  The
 * heartbeat lists every placed job as RUN (its row of the Ousterhout
 * matrix is the active one) or STOP (placed, but another row runs now);
 * on_heartbeat records that in j->want and calls nm_gang_switch(), which
 * brings the started jobs' processes to match: SIGSTOP to every local
 * rank's process group of a job that must stop, SIGCONT to those of a
 * stopped job that must run — all the stops first, so that the outgoing
 * row has been told to stop before the incoming one is let go.
 *
 * Invariant: j->stopped is 1 exactly when the last signal sent to j's
 * ranks was SIGSTOP.  A job is signalled only when its listed state and
 * j->stopped disagree, so a node where every job is always RUN (MPL 1)
 * makes no system call here at all.
 *
 *   job here            | listed RUN          | listed STOP
 *   --------------------+---------------------+---------------------
 *   not started         | (started by caller) | stays unstarted
 *   started, running    | -                   | SIGSTOP, stopped = 1
 *   started, stopped    | SIGCONT, stopped = 0| -
 *
 * Jobs not listed are ended by the caller (thawed and continued, so that
 * SIGTERM reaches them; SIGKILL after the grace period); ranks already
 * reaped (pid 0) are skipped.
 *
 * A process that left its rank's process group (setsid, a daemon) is
 * out of the signals' reach but not of the job's cgroup: a stop also
 * freezes the cgroup (cgroup.freeze), a continue thaws it first.  That
 * is one write per job per switch beside the signals, which stay the
 * fast path: a frozen cgroup settles asynchronously, a stopped group
 * at once.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <qb/qblog.h>

#include <storm_proto.h>

#include "gang.h"

/* sig to the process group each live local rank leads (spawn_rank makes
 * every rank a group leader, so whatever it forked without leaving its
 * group is signalled too).  ESRCH — a group whose processes have all gone
 * but whose leader is not reaped yet — is not worth a word; anything else
 * (not expected: the node manager runs as root) is said once per job, as
 * this runs at every switch. */
static void signal_ranks(struct nm_job *j, int sig)
{
	for (uint32_t i = 0; i < j->nlocal; i++) {
		pid_t pid = j->ranks[i].pid;

		if (pid <= 0 || kill(-pid, sig) == 0 || errno == ESRCH)
			continue;
		if (!j->sig_warned)
			qb_log(LOG_WARNING, "job %u rank %u: cannot send "
			       "signal %d: %s (said once per job)", j->id,
			       j->ranks[i].rank, sig, strerror(errno));
		j->sig_warned = 1;
	}
}

void nm_gang_switch(struct nm_job *jobs, uint64_t slice)
{
	struct nm_job *j;

	for (j = jobs; j; j = j->next)
		if (j->want == ST_HB_STOP && j->started && !j->stopped) {
			signal_ranks(j, SIGSTOP);
			/* and what left the ranks' process groups */
			nm_cg_freeze(&j->cg, 1);
			j->stopped = 1;
			qb_log(LOG_DEBUG, "job %u: stopped at slice %llu",
			       j->id, (unsigned long long)slice);
		}
	for (j = jobs; j; j = j->next)
		if (j->want == ST_HB_RUN && j->stopped) {
			nm_cg_freeze(&j->cg, 0);
			signal_ranks(j, SIGCONT);
			j->stopped = 0;
			qb_log(LOG_DEBUG, "job %u: continued at slice %llu",
			       j->id, (unsigned long long)slice);
		}
}
