/*
 * rt.h — a BCS-MPI rank's side of its node's engine (docs/bcsmpi.md
 * §3): the segment inherited from storm-nm, descriptors posted into the
 * rank's ring, completions taken from it, and the sleep on its futex
 * while a blocking call waits.  No thread, no socket: the engine moves
 * everything at slice boundaries.
 *
 * The logical clock (bcs_match.h) lives here: bumped and stamped on
 * every send and collective posted, advanced past a receive's send when
 * the program sees that receive complete (rt_clock_recv, from Wait and
 * Test) — never when a completion merely arrives, whose moment depends
 * on timing.
 */
#ifndef BCSMPI_RT_H
#define BCSMPI_RT_H

#include <stddef.h>
#include <stdint.h>

#include <storm_bcs.h>

struct bcs_rt {
	struct bcs_seg *seg;
	struct bcs_area *area;
	uint32_t area_index;
	int rank, size;
	uint64_t bytes;         /* mapped */
	uint64_t clock;
	uint64_t head;          /* descriptors posted (ours) */
	uint64_t done_tail;     /* completions taken (ours) */
	uint64_t notices;       /* the area's notices when last looked */
	uint32_t nlocal;        /* ranks of the job on this node */
	uint64_t area_off, area_stride; /* the layout, checked at init (the
				 * header is writable by every rank) */
	int bell;               /* the job's doorbell (STORM_BCS_BELL) or -1:
				 * rung when every rank here waits, and once
				 * per engine nap (rt.c, nudge) */
	uint32_t nudged;        /* the nap value last rung for */
};

extern struct bcs_rt bcs_rt;

/* A completion, for the request layer (requests.c). */
typedef void (*bcs_rt_done_fn)(const struct bcs_done *d);

/* Map the segment named by STORM_BCS_FD/STORM_BCS_AREA, check it.
 * 0, or -errno with err saying what is wrong (not run by storm with
 * --mpi=bcs, a segment of another version). */
int bcs_rt_init(bcs_rt_done_fn done, char *err, size_t errlen);
void bcs_rt_fini(void);
/* Post d (clock stamped for sends and collectives; eager bytes into the
 * slot when d->flags has BCS_F_EAGER).  Waits for room in the ring.
 * 0, or -EPIPE (the engine failed the job: rt_failed says why). */
int bcs_rt_post(struct bcs_desc *d, const void *eager);
/* Take every completion that came (each handed to the done function).
 * Returns how many. */
uint32_t bcs_rt_poll(void);
/* Sleep until ready(ctx) or the job failed: completions are taken as
 * they come.  0, or -EPIPE. */
int bcs_rt_wait(int (*ready)(void *ctx), void *ctx);
/* A ready function for bcs_rt_wait: the engine has taken every
 * descriptor posted so far (ctx unused). */
int bcs_rt_taken(void *ctx);
/* The program saw a receive complete whose send had clock c. */
void bcs_rt_clock_recv(uint64_t c);
/* A Test or Iprobe found nothing: the program polls (the engine's
 * patience with an undecided ANY_SOURCE receive counts only then). */
void bcs_rt_polled(void);
/* The engine's reason, once it failed the job; NULL before. */
const char *bcs_rt_failed(void);

#endif
