/*
 * openas.c — opening a file with a user's rights, not the daemon's
 * (st_open_as in storm_proto.h).  The manager opens a job's inputs this
 * way, and the node manager its batch output files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "storm_proto.h"

#define GROUPS_MAX 65536

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

int st_open_as(const char *path, int flags, unsigned mode, uint32_t uid,
	       uint32_t gid, const uint32_t *groups, int ngroups)
{
	gid_t *mine, *theirs;
	int nmine, fd, rc;
	struct stat st;

	if (ngroups < 0 || ngroups > GROUPS_MAX)
		return -EINVAL;
	nmine = getgroups(0, NULL);
	if (nmine < 0)
		return -errno;
	mine = malloc(((size_t)nmine + 1) * sizeof(gid_t));
	theirs = malloc(((size_t)ngroups + 1) * sizeof(gid_t));
	if (!mine || !theirs) {
		free(mine);
		free(theirs);
		return -ENOMEM;
	}
	for (int i = 0; i < ngroups; i++)
		theirs[i] = groups[i];
	nmine = getgroups(nmine, mine);
	if (nmine < 0 || (rc = become(uid, gid, theirs, ngroups))) {
		rc = nmine < 0 ? -errno : rc;
		if (nmine >= 0)
			become(geteuid(), getegid(), mine, nmine);
		free(mine);
		free(theirs);
		return rc;
	}
	fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, mode);
	rc = fd < 0 ? -errno : 0;
	if (become(geteuid(), getegid(), mine, nmine)) {
		/* a thread left with a user's identity must not go on */
		qb_log(LOG_CRIT, "cannot take back the daemon's file-system "
		       "identity after opening %s: exiting", path);
		abort();
	}
	free(mine);
	free(theirs);
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
	if (!(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
