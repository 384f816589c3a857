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
	if (getgrouplist(pw.pw_name, gid, id->groups, &n) < 0) {
		snprintf(err, errlen, "user %s (uid %u) is in %d groups on "
			 "this node, more than the %d a job may carry: "
			 "remove some from the node's NSS (group)",
			 pw.pw_name, (unsigned)uid, n, NM_ID_GROUPS_MAX);
		return -E2BIG;
	}
	if (n > sysconf(_SC_NGROUPS_MAX)) {
		snprintf(err, errlen, "user %s (uid %u) is in %d groups on "
			 "this node, more than its NGROUPS_MAX (%ld)",
			 pw.pw_name, (unsigned)uid, n,
			 sysconf(_SC_NGROUPS_MAX));
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
