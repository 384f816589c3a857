/*
 * fsid.c — opening files with a job owner's rights (fsid.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "fsid.h"

#define GROUPS_MAX 1024

/* The calling thread's file-system identity; 0 or -errno. */
static int become(uint32_t uid, uint32_t gid, const gid_t *groups, int n)
{
	if (syscall(SYS_setgroups, (size_t)n, groups) < 0)
		return -errno;
	/* setfs*id report the previous id, not errors: check by reading */
	syscall(SYS_setfsgid, gid);
	syscall(SYS_setfsuid, uid);
	if ((uint32_t)syscall(SYS_setfsgid, (gid_t)-1) != gid ||
	    (uint32_t)syscall(SYS_setfsuid, (uid_t)-1) != uid)
		return -EPERM;
	return 0;
}

int mmd_fsid_open(const char *path, uint32_t uid, uint32_t gid)
{
	gid_t groups[GROUPS_MAX], mine[GROUPS_MAX];
	int n = 1, nmine, fd, rc;
	struct passwd pw, *res = NULL;
	struct stat st;
	char buf[16384];

	groups[0] = gid;
	/* the user's groups on this host; a uid it does not know has its
	 * primary group alone */
	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &res) && res) {
		n = GROUPS_MAX;
		if (getgrouplist(pw.pw_name, gid, groups, &n) < 0)
			n = GROUPS_MAX; /* the first GROUPS_MAX */
	}
	nmine = getgroups(GROUPS_MAX, mine);
	if (nmine < 0)
		return -errno;
	if ((rc = become(uid, gid, groups, n))) {
		become(geteuid(), getegid(), mine, nmine);
		return rc;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	if ((become(geteuid(), getegid(), mine, nmine))) {
		/* a thread left with a user's identity must not go on */
		qb_log(LOG_CRIT, "cannot take back root's file-system identity "
		       "after opening %s: exiting", path);
		abort();
	}
	if (rc)
		return rc;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	/* reads block again: the inputs are staged whole (a FIFO was refused
	 * above without waiting for a writer) */
	fcntl(fd, F_SETFL, 0);
	return fd;
}
