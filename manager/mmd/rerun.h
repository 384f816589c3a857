/*
 * rerun.h — what a restarted rank prints again, dropped (docs/checkpoint.md
 * §5).  A rank restored from a checkpoint epoch (or started over) runs
 * again the part of its program after that point and prints its output
 * again.  Its node says where the rank's output goes on from (a RERUN
 * record: the bytes of stdout and stderr it had written at the epoch);
 * here, per rank and stream of a job that may restart, the last bytes
 * passed on are kept, and what the rerun prints is compared with them:
 * identical bytes are dropped, so a deterministic program shows every
 * byte once; at the first byte that differs (or where the kept bytes do
 * not reach back) a line from Storm marks the point, and the rest is
 * passed on.
 *
 * Every replica takes the same records in the same order, so each
 * filters alike and a client that fails over sees one stream.  Bounded:
 * MMD_RERUN_KEEP bytes a stream, budget bytes of them in all (a stream
 * that would pass it keeps nothing: its rerun is marked, not filtered),
 * and a small record per stream.
 * Pure: no clock, no I/O.
 */
#ifndef STORM_MMD_RERUN_H
#define STORM_MMD_RERUN_H

#include <stddef.h>
#include <stdint.h>

#define MMD_RERUN_KEEP (256u << 10)

struct mmd_rerun;

/* What to pass on: called with the bytes to deliver, in order. */
typedef void (*mmd_rerun_emit_fn)(void *ctx, const uint8_t *p, uint32_t len);

/* 0 or -ENOMEM; budget: bytes of kept output in all. */
int mmd_rerun_create(struct mmd_rerun **out, uint64_t budget);
void mmd_rerun_destroy(struct mmd_rerun *r);
/* Output of a rank (stream 0 stdout, 1 stderr): passed on through emit,
 * less what repeats a rerun's earlier output.  keep: the job may
 * restart (it has or wants checkpoints, or --requeue): its output is
 * kept for a rerun to be compared with. */
void mmd_rerun_output(struct mmd_rerun *r, uint32_t job, uint32_t rank,
		      int stream, const uint8_t *p, uint32_t len, int keep,
		      mmd_rerun_emit_fn emit, void *ctx);
/* The rank runs again from epoch (0: from the start), its streams' next
 * bytes at offsets off[2]: what it prints is compared from there.  A
 * stream that cannot be compared (nothing kept, or not far enough back)
 * gets the marking line at once, through emit(ctx, stream, ...). */
void mmd_rerun_restart(struct mmd_rerun *r, uint32_t job, uint32_t rank,
		       uint32_t epoch, const uint64_t off[2],
		       void (*emit)(void *ctx, int stream, const uint8_t *p,
				    uint32_t len), void *ctx);
/* The job ended: what is kept of it goes. */
void mmd_rerun_forget(struct mmd_rerun *r, uint32_t job);
/* Bytes of output kept now, at most the budget (tests, stats). */
uint64_t mmd_rerun_kept(const struct mmd_rerun *r);

#endif
