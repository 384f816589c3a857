/*
 * fsid.h — open a job's input files with its owner's rights, not root's.
 *
 * The strobe master reads a job's program and --file inputs when it
 * stages the job.  It runs as root; a user must not get a file staged
 * that only root (or another user) may read.  The opening thread takes
 * the owner's file-system identity for the open alone: fsuid, fsgid and
 * the supplementary groups the manager host's NSS gives the user, by raw
 * system calls, which change the calling thread only (glibc's setgroups
 * would change every thread of the daemon).  The thread is root again
 * before mmd_fsid_open returns.
 */
#ifndef STORM_MMD_FSID_H
#define STORM_MMD_FSID_H

#include <stdint.h>

/* open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) as uid/gid with the
 * user's groups, then only a regular file is kept.  The fd, or -errno
 * (-EINVAL: not a regular file). */
int mmd_fsid_open(const char *path, uint32_t uid, uint32_t gid);

#endif
