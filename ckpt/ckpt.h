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
	uint64_t dirty_pages;    /* ... of them written since the last one */
	uint64_t bytes;          /* the image's length */
	uint32_t vmas, files;
	int snapshot;            /* 1: read from a copy-on-write snapshot */
};

/* The pages a process writes between captures (userfaultfd write-
 * protect), for incremental captures.  One per traced process; create
 * it before its first (full) capture.  Destroy accepts NULL. */
typedef struct ckpt_track ckpt_track_t;
int ckpt_track_create(ckpt_track_t **out);
void ckpt_track_destroy(ckpt_track_t *t);

/* Capture process pid into an image written to fd, with header h.
 *
 * The process is stopped only while its state is taken and a copy-on-
 * write snapshot of it made (a fork it makes itself, which the engine
 * holds stopped and reads after the process runs on); it is left as it
 * was (running, or stopped by SIGSTOP).  Where the fork is refused the
 * image is read while the process stays stopped (st->snapshot = 0).
 *
 * h->kind CKPT_FULL: every page; with tr not NULL, tracking starts (or
 * starts again) with this capture.  CKPT_DELTA: only the pages written
 * since tr's last capture of pid, whose epoch must be h->parent.
 *
 * Returns 0; -ENOTSUP when the process holds something the engine cannot
 * restore (another thread, a socket, a pipe to another process, a
 * device, a shared anonymous mapping), why naming it, the process
 * untouched; -EINVAL for a delta without tracking of pid at h->parent;
 * -ENOSPC and other -errno of writing the image; -ESRCH if it is gone.
 * After any failure the next capture of pid must be full.  st, if not
 * NULL, is filled on success. */
int ckpt_capture(pid_t pid, int fd, const struct ckpt_header *h,
		 ckpt_track_t *tr, struct ckpt_stats *st, char *why,
		 size_t whylen);

/* The same in three steps, so that a caller stops all of a job's ranks
 * at once and writes the images after they run on (maybe in another
 * thread).  hold: the stop, the state and the snapshot (the process runs
 * on when it returns, unless it was stopped); 0 and *out, or the
 * failure as ckpt_capture's, with nothing left to end.  write: the pages
 * and the trailer, from any thread: 0 or -errno.  end: from the thread
 * that held (it traces the snapshot): the snapshot goes, the result is
 * the capture's (st filled on success, why on failure), *k is freed. */
typedef struct ckpt_capture ckpt_capture_t;
int ckpt_capture_hold(pid_t pid, int fd, const struct ckpt_header *h,
		      ckpt_track_t *tr, ckpt_capture_t **out, char *why,
		      size_t whylen);

/* What the process got from its launcher and a restore's stub is given
 * again (a BCS-MPI rank's segment and doorbell).  fds: descriptors at
 * these numbers are recorded as inherited rather than refused (the
 * stub's own stay).  maps: a shared mapping of the file the caller holds
 * as own_fd is recorded as such, its pages left out (the caller saves
 * the file's bytes), and mapped again from the stub's descriptor stub_fd
 * on restore (the process may have closed its own). */
struct ckpt_inherit_map {
	int own_fd, stub_fd;
};
struct ckpt_inherit {
	const int *fds;
	size_t n;
	const struct ckpt_inherit_map *maps;
	size_t nmaps;
};
/* ckpt_capture_hold with inherited descriptors (NULL: none). */
int ckpt_capture_hold_inherit(pid_t pid, int fd, const struct ckpt_header *h,
			      ckpt_track_t *tr, const struct ckpt_inherit *in,
			      ckpt_capture_t **out, char *why, size_t whylen);
int ckpt_capture_write(ckpt_capture_t *k);
/* Between hold and write: the caller's own bytes about the process (at
 * most CKPT_NOTE_MAX; what storm-nm knows of it, such as how much output
 * it had written), kept in the image, checked with it, ignored by a
 * restore and handed back by ckpt_note.  0 or -errno (-EINVAL: too
 * long; a failure fails the capture). */
#define CKPT_NOTE_MAX 1024
int ckpt_capture_note(ckpt_capture_t *k, const void *note, size_t len);
int ckpt_capture_end(ckpt_capture_t *k, struct ckpt_stats *st, char *why,
		     size_t whylen);

/* An image in memory: one of a chain given to ckpt_restore. */
struct ckpt_blob {
	const void *buf;
	size_t len;
};

/* Check chain[0..n) as ckpt_restore does before it touches a process:
 * every image whole and of expect (if not NULL), a full image then its
 * deltas in order, every section of the right shape.  0, or -EINVAL with
 * why saying what is wrong (-ENOMEM).  Touches no process. */
int ckpt_check(const struct ckpt_blob *chain, size_t n,
	       const struct ckpt_ident *expect, char *why, size_t whylen);

/* Compact chain[0..n) (as ckpt_restore takes it) into one full image of
 * its last epoch, written to fd: what a restore of the chain puts in
 * memory, the last image's state, so that the chain before it may go.
 * Touches no process.  0 (*bytes: the image's length), or -errno with
 * why (-EINVAL: a bad chain, as ckpt_check says; -ENOSPC...). */
int ckpt_compact(const struct ckpt_blob *chain, size_t n, int fd,
		 uint64_t *bytes, char *why, size_t whylen);

/* The note of image b (one ckpt_check or ckpt_restore accepted): its
 * length, at most cap bytes of it copied to buf; -ENOENT if it has none,
 * -EINVAL if b is not an image. */
long ckpt_note(const struct ckpt_blob *b, void *buf, size_t cap);

/* Paths that moved since the capture: a path holding `marker` (such as
 * "/job-17/") is taken as `to` followed by what comes after the marker
 * (a job's files staged again in another node's directory).  A file
 * mapped from a moved path is checked by its size alone (its content is
 * the staging's, checked by digest), others by size and time. */
struct ckpt_remap {
	const char *marker;
	const char *to;
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
		 const struct ckpt_ident *expect,
		 const struct ckpt_remap *remap, char *why, size_t whylen);

#endif
