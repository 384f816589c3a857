/*
 * ckpt_store.h — checkpoint images on a node's disk (docs/checkpoint.md
 * §4): ROOT/job-J/epoch-E/NAME, directories root's (0711), and the
 * copies of a node's own files in the shared directory (L3: the same
 * path below it).  Used by the checkpoint agent (L1, L3) and by the
 * buddy (the copies it keeps for another node).  Paths only: no state.
 */
#ifndef STORM_NM_CKPT_STORE_H
#define STORM_NM_CKPT_STORE_H

#include <stdint.h>
#include <sys/types.h>

/* name below dirfd removed, a directory with all it holds. */
void nm_store_rm_tree(int dirfd, const char *name);
/* The directory of epoch of job below root, made if missing (afresh,
 * what was there removed, if fresh): its descriptor, or -errno. */
int nm_store_epoch_dir(const char *root, uint32_t job, uint32_t epoch,
		       int fresh);
/* Epoch of job removed below root, and this node's copies of its files
 * in shared (NULL or "": none); the directories there once empty. */
void nm_store_remove_epoch(const char *root, const char *shared,
			   uint32_t job, uint32_t epoch);
/* Every epoch of job before `before` removed, as nm_store_remove_epoch. */
void nm_store_remove_before(const char *root, const char *shared,
			    uint32_t job, uint32_t before);
/* Bytes of uid's files below root (every job's, every epoch's). */
uint64_t nm_store_usage(const char *root, uid_t uid);

#endif
