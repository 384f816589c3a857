/*
 * errors.c — one table naming every error a Storm function can return.
 * Storm's own codes sit above STORM_ERRNO_OFFSET (storm_primitives.h) so
 * they never collide with errno; everything below is strerror()'s.
 */
#include <string.h>

#include "storm_primitives.h"

static const char *const storm_msgs[] = {
	[STORM_ECLOSED - STORM_ERRNO_OFFSET] = "handle closed or node killed",
	[STORM_EABORTED - STORM_ERRNO_OFFSET] =
		"transfer aborted: a destination left the view, nothing was delivered",
	[STORM_ENOTINVIEW - STORM_ERRNO_OFFSET] =
		"a node of the set is not a member of the current view",
	[STORM_EVIEWCHANGE - STORM_ERRNO_OFFSET] =
		"the view changed during the operation; retry",
	[STORM_EPROVIDER - STORM_ERRNO_OFFSET] =
		"libfabric provider unknown or unusable",
	[STORM_EUNREACH - STORM_ERRNO_OFFSET] = "peer unreachable",
	[STORM_EEXPELLED - STORM_ERRNO_OFFSET] =
		"this node was removed from the view; it must rejoin",
	[STORM_EPROTO - STORM_ERRNO_OFFSET] =
		"malformed or incompatible protocol message",
	[STORM_ECONFIG - STORM_ERRNO_OFFSET] = "invalid configuration",
	[STORM_ENOQUORUM - STORM_ERRNO_OFFSET] =
		"this manager replica has no quorum; try another replica",
	[STORM_ENOTSYNCED - STORM_ERRNO_OFFSET] =
		"this manager replica is catching up; try another replica",
	[STORM_EUNKNOWN - STORM_ERRNO_OFFSET] =
		"the replica lost its group before ordering the request; "
		"retry it (same sequence) on another replica",
	[STORM_EREPLAY - STORM_ERRNO_OFFSET] =
		"request sequence number older than the last applied one",
	[STORM_ESTATE - STORM_ERRNO_OFFSET] =
		"durable state belongs to another cluster or version",
};

const char *storm_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err > STORM_ERRNO_OFFSET && err < STORM_ERRNO_MAX) {
		const char *m = storm_msgs[err - STORM_ERRNO_OFFSET];
		return m ? m : "unknown Storm error";
	}
	if (err == 0)
		return "success";
	if (err >= STORM_ERRNO_OFFSET)
		return "unknown Storm error";
	/* strerror() is not thread-safe in general, but glibc's returns
	 * static text for known codes, which is all we pass it. */
	return strerror(err);
}
