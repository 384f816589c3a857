/*
 * rt.c — real-time scheduling for the daemons (the configuration's
 * `realtime`).  A gang-scheduled node runs CPU-bound ranks on every core;
 * at the same priority as they, storm-nm and the strobe lose the CPU to
 * them for milliseconds and a 2 ms quantum is not kept (docs/gang.md).
 * SCHED_FIFO lets the strobe path preempt the ranks at once; the daemons
 * only ever block or do bounded work, and the threads they create later
 * inherit the policy.  Ranks must not: the node manager puts each back to
 * SCHED_OTHER before it runs the program.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <qb/qblog.h>

#include "storm_proto.h"

int st_realtime(const st_config_t *cfg, const char *who)
{
	struct sched_param p = { .sched_priority = (int)cfg->realtime };

	if (!cfg->realtime)
		return 0;
	if (sched_setscheduler(0, SCHED_FIFO, &p) < 0) {
		int rc = -errno;

		qb_log(LOG_WARNING, "%s: realtime = %u: cannot take SCHED_FIFO "
		       "(%s); running at normal priority: time slices may be "
		       "late (run as root or grant CAP_SYS_NICE)", who,
		       cfg->realtime, strerror(errno));
		return rc;
	}
	qb_log(LOG_INFO, "%s: SCHED_FIFO priority %u", who, cfg->realtime);
	return 0;
}
