/*
 * identity.c — a job's user on this node (identity.h).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "identity.h"

int nm_identity_resolve(uid_t uid, gid_t gid, struct nm_identity *id,
			char *err, size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	long sys = sysconf(_SC_NGROUPS_MAX); /* setgroups()'s limit */
	int n = NM_ID_GROUPS_MAX, rc;

	memset(id, 0, sizeof(*id));
	id->uid = uid;
	id->gid = gid;
	rc = getpwuid_r(uid, &pw, buf, sizeof(buf), &res);
	if (rc || !res) {
		snprintf(err, errlen, "uid %u has no passwd entry on this "
			 "node%s%s: add the user to the node's NSS (passwd) "
			 "or submit as a user it knows", (unsigned)uid,
			 rc ? ": " : "", rc ? strerror(rc) : "");
		return rc ? -rc : -ENOENT;
	}
	snprintf(id->name, sizeof(id->name), "%s", pw.pw_name);
	snprintf(id->home, sizeof(id->home), "%s", pw.pw_dir);
	snprintf(id->shell, sizeof(id->shell), "%s", pw.pw_shell);
	/* -1: more groups than the buffer holds, n then says how many (more
	 * than NM_ID_GROUPS_MAX); a -1 that leaves n within it is a failed
	 * lookup (glibc: out of memory) */
	errno = 0;
	if (getgrouplist(pw.pw_name, gid, id->groups, &n) < 0 &&
	    n <= NM_ID_GROUPS_MAX) {
		rc = errno ? errno : ENOMEM;
		snprintf(err, errlen, "cannot list the groups of user %s "
			 "(uid %u) on this node: %s", pw.pw_name,
			 (unsigned)uid, strerror(rc));
		return -rc;
	}
	/* the tighter of the two limits is the one named */
	if (n > NM_ID_GROUPS_MAX || (sys > 0 && n > sys)) {
		int by_sys = sys > 0 && sys < NM_ID_GROUPS_MAX;

		snprintf(err, errlen, "user %s (uid %u) is in %d groups on "
			 "this node, more than %s (%ld): remove some from the "
			 "node's NSS (group)", pw.pw_name, (unsigned)uid, n,
			 by_sys ? "its NGROUPS_MAX" : "the most a job may carry",
			 by_sys ? sys : (long)NM_ID_GROUPS_MAX);
		return -E2BIG;
	}
	id->ngroups = n;
	return 0;
}

int nm_identity_assume(const struct nm_identity *id)
{
	/* raw: glibc's wrappers would signal the daemon's other threads
	 * from a vfork() child sharing their memory */
	if (syscall(SYS_setgroups, (size_t)id->ngroups, id->groups) < 0 ||
	    syscall(SYS_setresgid, id->gid, id->gid, id->gid) < 0 ||
	    syscall(SYS_setresuid, id->uid, id->uid, id->uid) < 0)
		return -errno;
	return 0;
}
