/*
 * bcs_match.h — BCS-MPI message matching, deterministic by construction
 * (docs/bcsmpi.md §4).  Pure: no clock, no I/O; the engine (bcs.c) feeds
 * it the sends and receives of one job as its slices take them and acts
 * on the matches it reports.
 *
 * Order.  Every rank keeps a logical clock, counted in sends, collectives
 * and completed receives (a receive advances it past the send's, as
 * Lamport's), and stamps each send with it.  A receive from a given
 * source takes that source's earliest matching send (MPI's
 * non-overtaking rule: a function of the sender's program alone).  An
 * MPI_ANY_SOURCE receive takes, among the sends that could match it,
 * the least by (clock, source, the source's posting sequence) — but only
 * once no rank can still post a lesser one: each rank's future sends are
 * bounded below (bcs_match_bounds: its clock + 1 while it runs; higher
 * while it is blocked on receives only, by the sends that can unblock
 * it; never, once finalized).  So which send an ANY_SOURCE receive gets
 * does not depend on the slice a send landed in — on timing — for
 * programs whose control flow does not depend on Test/Iprobe outcomes.
 *
 * Receives of one rank are considered in posting order; one that cannot
 * be decided yet holds back the later ones that could take the same
 * sends (same communicator, compatible tag), and only those.
 *
 * Liveness.  A rank that polls (MPI_Test in a loop) is not blocked and
 * keeps its bound at clock + 1; an ANY_SOURCE receive whose candidates
 * stay undecided for BCS_PATIENCE slices in which some rank of the job
 * polled (m->polling: a program computing long, or slowed by a loaded
 * host, never counts) is decided anyway, counted in `forced` (the run
 * is then not guaranteed to repeat).  BCS_ORDER_ARRIVAL turns the rule off: first come, first matched.
 *
 * Replay.  With a pick function (a recorded run's matches, bcs.c), a
 * receive takes exactly the send the record names for it — (source,
 * the source's sequence) for (receiving rank, its receive sequence) —
 * waiting until that send is posted; a named send the receive cannot
 * take is a divergence (m->diverged), and the caller stops the job.
 */
#ifndef STORM_NM_BCS_MATCH_H
#define STORM_NM_BCS_MATCH_H

#include <stdint.h>

#define BCS_PATIENCE 200u /* slices an ANY_SOURCE receive may wait */
#define BCS_CLOCK_INF UINT64_MAX

enum bcs_order { BCS_ORDER_DETERMINISTIC = 0, BCS_ORDER_ARRIVAL };

/* A send not matched yet. */
struct bcs_msg {
	struct bcs_msg *next;   /* its destination's list, in arrival order */
	int32_t src, dst, tag;
	uint32_t flags;         /* BCS_F_* of its descriptor */
	uint64_t ctx;
	uint64_t bytes;
	uint64_t clock;         /* the sender's, at posting */
	uint64_t seq;           /* the sender's posting sequence */
	uint64_t req;           /* the sender's request */
	uint64_t addr;          /* in the sender's memory */
	uint8_t *eager;         /* the engine's copy of eager bytes, or NULL */
	void *owner;            /* the engine's */
};

/* A receive (or blocking probe) not matched yet. */
struct bcs_recv {
	struct bcs_recv *next;  /* its rank's list, in posting order */
	int32_t dst, src, tag;  /* src, tag: a rank / tag or BCS_ANY */
	int probe;
	uint64_t ctx;
	uint64_t cap;           /* bytes it can take */
	uint64_t req;
	uint64_t addr;
	uint32_t waited;        /* slices undecided with a candidate */
	uint64_t seq;           /* the receiving rank's receive sequence */
	void *owner;
};

/* A recorded run's match for r: 1 with *src and *seq (the send it
 * took), or 0 (the record says nothing: decide as usual). */
typedef int (*bcs_pick_fn)(void *ctx, const struct bcs_recv *r,
			   int32_t *src, uint64_t *seq);

/* A rank as the matcher sees it at a slice. */
struct bcs_rank_state {
	uint64_t clock;         /* its clock (from its area) */
	int blocked;            /* waiting, every completion consumed */
	int gone;               /* finalized or exited: sends nothing */
	uint32_t other_pending; /* its sends and collectives not complete */
	uint64_t sent;          /* sends it has posted (the last sequence) */
};

struct bcs_match {
	uint32_t n;              /* ranks in the job */
	enum bcs_order order;
	struct bcs_msg **sends;  /* per destination */
	struct bcs_recv **recvs; /* per receiving rank */
	struct bcs_rank_state *rk;
	uint64_t *bound;         /* per rank: least clock of a future send */
	uint64_t forced;         /* ANY_SOURCE receives decided by patience */
	uint64_t matched;
	int polling;             /* a rank polled since the last slice: only
				  * then does patience count */
	bcs_pick_fn pick;        /* replaying a record, or NULL */
	void *pick_ctx;
	const struct bcs_recv *diverged; /* the first receive the record's
					  * send does not fit, or NULL */
};

/* A match: r takes s (a probe only looks at it; s stays). */
typedef void (*bcs_matched_fn)(void *ctx, struct bcs_recv *r,
			       struct bcs_msg *s);

/* For n ranks.  0 or -ENOMEM. */
int bcs_match_init(struct bcs_match *m, uint32_t n, enum bcs_order order);
/* Free what it holds; the sends and receives still in it are handed to
 * drop (may be NULL) first. */
void bcs_match_fini(struct bcs_match *m,
		    void (*drop)(void *ctx, struct bcs_msg *s,
				 struct bcs_recv *r), void *ctx);
/* A send taken from its rank (appended: per source, in posting order). */
void bcs_match_send(struct bcs_match *m, struct bcs_msg *s);
/* A receive taken from its rank (appended, posting order). */
void bcs_match_recv(struct bcs_match *m, struct bcs_recv *r);
/* Take back rank dst's receive req, not matched yet (MPI_Cancel): it
 * leaves the lists and is returned (the caller's), or NULL when there is
 * no such receive (matched already, or never posted). */
struct bcs_recv *bcs_match_cancel(struct bcs_match *m, int32_t dst,
				  uint64_t req);
/* Every match this slice allows, given the ranks' states (m->rk, set by
 * the caller), reported through fn in a deterministic order (by
 * receiving rank, then posting order).  Matched receives and sends
 * leave the lists before fn is called (fn owns them; a probe's send
 * stays).  Returns the matches made. */
uint32_t bcs_match_run(struct bcs_match *m, bcs_matched_fn fn, void *ctx);
/* The bounds of every rank's future sends (m->bound), from m->rk and the
 * pending receives (exposed for tests). */
void bcs_match_bounds(struct bcs_match *m);

#endif
