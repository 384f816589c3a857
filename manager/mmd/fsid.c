/*
 * fsid.c — opening files with a job owner's rights (fsid.h): the user's
 * groups as this host's NSS gives them, then st_open_as().
 */
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>

#include <storm_proto.h>

#include "fsid.h"

#define GROUPS_MAX 1024

int mmd_fsid_open(const char *path, uint32_t uid, uint32_t gid)
{
	gid_t groups[GROUPS_MAX];
	uint32_t g[GROUPS_MAX];
	int n = 1;
	struct passwd pw, *res = NULL;
	char buf[16384];

	groups[0] = gid;
	/* the user's groups on this host; a uid it does not know has its
	 * primary group alone */
	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &res) && res) {
		n = GROUPS_MAX;
		if (getgrouplist(pw.pw_name, gid, groups, &n) < 0)
			n = GROUPS_MAX; /* the first GROUPS_MAX */
	}
	for (int i = 0; i < n; i++)
		g[i] = groups[i];
	/* reads block again: the inputs are staged whole (a FIFO is refused
	 * without waiting for a writer) */
	return st_open_as(path, O_RDONLY, 0, uid, gid, g, n);
}
