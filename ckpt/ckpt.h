/*
 * ckpt.h — libstorm-ckpt, Storm's checkpoint/restart engine (docs/
 * checkpoint.md): transparent capture of an unmodified single-threaded
 * process into an image (ckpt_image.h), and restore of a process from a
 * full image and the deltas after it.  The one public header of ckpt/;
 * storm-nm's checkpoint agent is its user.
 *
 * Who may call: a process that may ptrace the target (storm-nm, as
 * root).  The engine never opens a user's file, sets a user's limit or
 * makes a user's pipe with its own rights: all of that is a system call
 * the traced process makes itself, with its owner's credentials.
 * Not thread-safe per process: one capture or restore of a pid at a time.
 */
#ifndef STORM_CKPT_H
#define STORM_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ckpt_image.h"

/* What one capture cost and wrote. */
struct ckpt_stats {
	uint64_t stop_ns;        /* the process was stopped this long */
	uint64_t pages;          /* memory pages in the image */
	uint64_t bytes;          /* the image's length */
	uint32_t vmas, files;
};

/* Capture process pid into an image written to fd, with header h (its
 * kind CKPT_FULL).  The process is stopped for the capture and left as
 * it was (running, or stopped by SIGSTOP).  Returns 0; or -ENOTSUP when
 * the process holds something the engine cannot restore (another
 * thread, a socket, a pipe to another process, a device, a shared
 * anonymous mapping), why naming it, and the process untouched; -ENOSPC
 * and other -errno of writing the image; -ESRCH if it is gone.  st, if
 * not NULL, is filled on success. */
int ckpt_capture(pid_t pid, int fd, const struct ckpt_header *h,
		 struct ckpt_stats *st, char *why, size_t whylen);

/* An image in memory: one of a chain given to ckpt_restore. */
struct ckpt_blob {
	const void *buf;
	size_t len;
};

/* Restore into pid a process from chain[0..n): a full image and the
 * deltas after it, in epoch order, each checked against expect (NULL:
 * not checked).  pid must be a child of the caller that called
 * ptrace(PTRACE_TRACEME) and then execve()d the image's binary as the
 * image's owner, and is stopped at that exec.  On success the process
 * runs on from where it was captured and the caller no longer traces it;
 * on failure (-EINVAL: a bad or mismatched image, why saying which;
 * -ESTALE: a mapped file changed since the capture; other -errno: a call
 * the process made failed, why naming it) pid is killed, never left half
 * restored. */
int ckpt_restore(pid_t pid, const struct ckpt_blob *chain, size_t n,
		 const struct ckpt_ident *expect, char *why, size_t whylen);

#endif
