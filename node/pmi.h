/*
 * pmi.h — the PMI-1 server of one job on this node (docs/pmi.md): what an
 * unmodified MPICH program (or Open MPI through its PMI-1 route) finds
 * on PMI_FD.  Each local rank holds one end of a socket pair; the node
 * manager feeds the bytes it reads to nm_pmi_input and writes back what
 * nm_pmi_output holds.  The "simple" wire protocol: lines of
 * space-separated key=value words, the first cmd=NAME.
 *
 * The key-value space is job-wide.  A rank's puts are visible to the
 * ranks of this node at once and to the others after the next barrier:
 * once every local rank is in barrier_in, nm_pmi_fence_ready hands out
 * this node's puts since the last barrier (entries, below); the node
 * manager carries them up (a mailbox record), the managers merge every
 * node's, and the merged store comes back (nm_pmi_fence_take), which
 * answers barrier_out to every local rank.
 *
 * Pure: no I/O, no clock.  Every byte from a rank is untrusted: a line is
 * bounded (NM_PMI_LINE_MAX), keys and values too (the maxes announced),
 * and a rank that breaks the protocol fails the job with a reason naming
 * it (nm_pmi_failed), never the engine.
 *
 * Entries (a node's contribution, a merged store): u16 key length | u16
 * value length | key | value, little endian, back to back.
 */
#ifndef STORM_NM_PMI_H
#define STORM_NM_PMI_H

#include <stddef.h>
#include <stdint.h>

#define NM_PMI_KVSNAME_MAX 256 /* announced maxes (get_maxes) */
#define NM_PMI_KEY_MAX 64
#define NM_PMI_VAL_MAX 1024
#define NM_PMI_LINE_MAX 2048   /* a request line, newline included */
#define NM_PMI_OUT_MAX (64u << 10) /* replies a rank has not read */
#define NM_PMI_STORE_MAX (64u << 20) /* the job's key-value space here */

struct nm_pmi;

/* The job's server: size ranks in all (rank r on node rank_node[r], any
 * ids), nlocal here (world ranks ranks[], in local order), in key-value
 * space kvsname.  NULL without memory. */
struct nm_pmi *nm_pmi_new(uint32_t job, const char *kvsname, uint32_t size,
			  const uint32_t *rank_node, uint32_t nlocal,
			  const uint32_t *ranks);
void nm_pmi_free(struct nm_pmi *p);

/* Bytes local rank i wrote.  0; -1: the job fails (nm_pmi_failed says
 * why: a line that is not PMI-1, a key or value too long, MPI_Abort). */
int nm_pmi_input(struct nm_pmi *p, uint32_t i, const char *buf, size_t len);
/* Local rank i closed its end (it exited): -1 if that fails the job (it
 * had not finalized and a barrier can no longer complete), else 0. */
int nm_pmi_closed(struct nm_pmi *p, uint32_t i);
/* Replies waiting for local rank i: *buf, the byte count; consume what
 * was written with nm_pmi_written. */
size_t nm_pmi_output(const struct nm_pmi *p, uint32_t i, const char **buf);
void nm_pmi_written(struct nm_pmi *p, uint32_t i, size_t n);

/* Every local rank is in barrier k + 1 (k: barriers completed) and this
 * node's entries for it were not handed out yet: 1 with *entries (valid
 * until nm_pmi_fence_take), *len, *fence = k + 1; else 0. */
int nm_pmi_fence_ready(struct nm_pmi *p, const uint8_t **entries,
		       size_t *len, uint32_t *fence);
/* The merged entries of every node for barrier `fence` (len bytes,
 * untrusted: checked).  1: taken, every local rank answered; 0: not the
 * barrier waited for (a copy sent again): ignored; -1: the job fails
 * (malformed, or the space would exceed NM_PMI_STORE_MAX). */
int nm_pmi_fence_take(struct nm_pmi *p, uint32_t fence,
		      const uint8_t *entries, size_t len);
/* Barriers completed. */
uint32_t nm_pmi_fences(const struct nm_pmi *p);

/* Why the job fails (a line of text), or NULL while it does not.
 * *code: the exit code a rank's abort gave, or -1. */
const char *nm_pmi_failed(const struct nm_pmi *p, int *code);

/* Check entries (len bytes): 0, or -1 (not whole entries, or a key or
 * value beyond the maxes). */
int nm_pmi_entries_check(const uint8_t *e, size_t len);

#endif
