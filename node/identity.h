/*
 * identity.h — who a job's processes run as on this node: the uid and
 * primary gid the manager established for the job (SO_PEERCRED or MUNGE,
 * never what a client claims), its supplementary groups and passwd entry
 * from this node's NSS.  Resolved in the node manager before any fork:
 * storm-nm is multi-threaded and launches with vfork(), where NSS and
 * glibc's set*id wrappers (which signal every thread) are unsafe; the
 * child only makes the raw calls of nm_identity_assume().
 */
#ifndef STORM_NM_IDENTITY_H
#define STORM_NM_IDENTITY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NM_ID_GROUPS_MAX 1024

struct nm_identity {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[NM_ID_GROUPS_MAX];
	char name[256], home[1024], shell[256];
};

/* Look uid up (gid: the job's primary group).  0, or -errno with err
 * saying what is wrong and what to do (no passwd entry, too many
 * groups). */
int nm_identity_resolve(uid_t uid, gid_t gid, struct nm_identity *id,
			char *err, size_t errlen);
/* In the child, before exec: groups, gid, uid, by raw system calls, in
 * that order (a process that is still root picks its groups).  0, or
 * -errno; the caller reports which. */
int nm_identity_assume(const struct nm_identity *id);

#endif
