/*
 * bcs_ckpt.h — a BCS-MPI job's part of a checkpoint (docs/checkpoint.md
 * §1): beside its ranks' images, what the engine holds for the job (its
 * image, nm_bcs_save) and the job's segment, saved while the ranks are
 * stopped, put back when the job is restored.
 *
 * The ranks map the segment from the descriptor their launcher gave them
 * (NM_BCS_RANK_FD) and keep the doorbell (NM_BCS_BELL_FD): their images
 * record both as inherited (ckpt_inherit), and a restored rank maps the
 * new segment, made by nm_bcs_open, where the old one was.  A job on
 * several nodes is saved at the epoch's cut (bcs_cut.c), so nothing is
 * in flight between the engines' images, and restored on nodes that
 * group its ranks as before (nm_bcs_restore_placed).
 *
 * The blob: "BCSK" u32 | version u32 (1) | node u32 (the world id that
 * saved it) | u32 0 | segment bytes u64 | engine image bytes u64 | the
 * segment | the engine's image | BLAKE2b-256 of every byte before it.
 */
#ifndef STORM_NM_BCS_CKPT_H
#define STORM_NM_BCS_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "bcs.h"
#include "ckpt_agent.h"

struct nm_job;

/* What the agent needs for a BCS-MPI job j (nm_ckpt_start's side);
 * name and the inherit arrays are kept in *s. */
struct nm_bcs_side {
	struct nm_ckpt_side side;
	char name[32];
	int fds[1];
	struct ckpt_inherit_map map[1];
};
void nm_bcs_ckpt_side(struct nm_bcs *e, const struct nm_job *j,
		      struct nm_bcs_side *s);
/* The blob's file name for j on this node (its first local rank's). */
void nm_bcs_ckpt_name(const struct nm_job *j, char *name, size_t n);
/* Put the job's engine state and segment back from a blob (the job
 * opened here with nm_bcs_open, its ranks restored): 0, the job left
 * stopped in the engine (nm_bcs_started, then nm_bcs_stopped to run
 * it); or -errno with why. */
int nm_bcs_ckpt_restore(struct nm_bcs *e, const struct nm_job *j,
			const uint8_t *blob, size_t len, char *why,
			size_t whylen);

#endif
