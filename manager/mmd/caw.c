/* caw.c — see caw.h. */
#include <errno.h>

#include <qb/qblog.h>

#include "caw.h"

int mmd_caw(struct mmd_caw *c, sp_world_t *w, uint64_t slice,
	    const sp_nodeset_t *set, uint64_t var, sp_cmp_t op, int64_t value,
	    uint64_t wvar, int64_t wval, int timeout_ms)
{
	int limit = (int)(2 * c->slice_us / 1000u);
	int rc;

	if (limit < 20)
		limit = 20;
	if (timeout_ms > limit)
		timeout_ms = limit;
	if (c->stalled && slice < c->stalled + 10)
		return -ETIMEDOUT;
	rc = sp_compare_and_write(w, set, var, op, value, wvar, wval,
				  timeout_ms);
	if (rc == -ETIMEDOUT) {
		c->stalled = slice;
		qb_log(LOG_DEBUG, "slice %llu: a compare timed out; the others "
		       "wait for the next slice", (unsigned long long)slice);
	}
	return rc;
}
