/*
 * bcs_int.h — the BCS engine's own state, shared by its files and by no
 * one else: bcs.c (jobs, segments, completions, the match log),
 * bcs_round.c (a job's rounds: the section a node builds at a boundary,
 * and every node's sections applied in one order), bcs_coll.c
 * (collectives).  nm.c sees bcs.h only.
 *
 * State of a job is of two kinds.  Replicated: what every node of the
 * job derives alike from the rounds' sections — the matcher and its
 * ranks' states, the communicators and their posted collectives, the
 * match and round counters.  Local: what only this node has — its
 * ranks' areas, pids, ring tails, sequences, completions owed, and the
 * bytes on their way to or from its ranks.
 */
#ifndef STORM_NM_BCS_INT_H
#define STORM_NM_BCS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <storm_bcs.h>

#include "bcs.h"
#include "bcs_match.h"

#define BCS_COMMS_MAX 4096u       /* communicators a job holds at once */
#define BCS_COLL_QUEUED_MAX 1024u /* collectives a member posted ahead */
#define BCS_LATE_MAX 4096u        /* completions waiting for ring room */

/* A matched pair moving bytes to a rank of this node, or from one. */
struct bcs_xfer {
	struct bcs_xfer *next;
	struct bcs_recv *r;
	struct bcs_msg *s;
	uint64_t match;          /* the job's match number */
	uint32_t peer;           /* the other side's node (world id) */
	uint64_t len, done;
};

/* A recorded match (--bcs-replay). */
struct bcs_pick {
	int32_t dst;
	uint64_t rseq;
	int32_t src;
	uint64_t sseq;
	uint64_t k;              /* its number in the record */
};

/* A completion that found its ring full. */
struct bcs_late {
	struct bcs_late *next;
	struct bcs_done d;
};

/* A collective posted by one member, waiting for the others. */
struct bcs_cpost {
	struct bcs_cpost *next;
	struct bcs_desc d;
};

struct bcs_comm {
	struct bcs_comm *next;
	uint64_t ctx;
	uint32_t n;              /* members */
	int32_t *world;          /* communicator rank -> world rank */
	struct bcs_cpost **q;    /* per member: its collectives, in order */
	uint64_t off;            /* the first's bytes done (a chunk a slice) */
	uint64_t ndone;          /* collectives completed */
	uint64_t start;          /* SPREAD: the round it was chosen in */
	uint8_t *freed;          /* per member: MPI_Comm_free posted */
	uint32_t nfreed;
	int where;               /* BCS_C_HERE, _ELSEWHERE or _SPREAD */
};

enum { BCS_C_HERE = 1, BCS_C_ELSEWHERE, BCS_C_SPREAD };

/* A node's section of one round, as it arrived. */
struct bcs_sect {
	uint8_t *data;
	size_t len, cap;
	int have;
};

struct bcs_job {
	struct bcs_job *next;
	struct nm_bcs *e;
	uint32_t id, size, nlocal;
	uint32_t inc;            /* its incarnation: sections name it */
	int restoring;           /* opened for a restore: sections wait
				  * for it (bcs_early_keep) */
	int fd;
	struct bcs_seg *seg;
	uint64_t bytes;
	uint64_t area_off, area_stride; /* the layout, the engine's copy */
	/* the job's nodes, ascending world ids; sections apply in this
	 * order */
	uint32_t *nodes, nnodes, me;
	uint32_t *node_of;       /* world rank -> node (world id) */
	uint32_t maxlocal;       /* most ranks on one node */
	uint64_t coll_chunk;     /* a spread reduction's bytes a round */
	uint64_t bcast_chunk;    /* a spread broadcast's */
	/* local: this node's ranks ("areas") */
	uint32_t *area_of;       /* world rank -> local area, or UINT32_MAX */
	int32_t *world_of;       /* area -> world rank */
	pid_t *pid;              /* area -> pid (0: not started / gone) */
	int *gone;               /* area: finalized or exited */
	uint64_t *tail;          /* area: descriptors taken */
	uint64_t *seq;           /* area: sends posted */
	uint64_t *rseq;          /* area: receives posted */
	uint32_t *pending;       /* area: sends and collectives incomplete */
	struct bcs_late **late;  /* area: completions waiting for room */
	uint64_t *woken;         /* area: done_head when last woken */
	uint32_t *incoming;      /* area: receives matched, bytes moving */
	uint32_t *polls;         /* area: its polls counter when last read */
	struct bcs_xfer *xfers, **xtail; /* both ends here */
	struct bcs_xfer *out;    /* from a rank here to another node */
	struct bcs_xfer *in;     /* to a rank here from another node */
	struct bcs_xfer *pulls;  /* both ends here: the receiver pulls */
	/* replicated */
	struct bcs_match m;
	struct bcs_comm *comms;
	struct bcs_comm *spread; /* the spread collective under way */
	uint64_t held;           /* eager bytes kept for unmatched sends */
	uint64_t nheld;          /* descriptors kept unmatched */
	uint64_t round;          /* rounds applied (the job's slices) */
	int built;               /* our section of round + 1 is out */
	struct bcs_sect *sect;   /* [node index][2]: rounds by parity */
	/* the match log */
	int trace_fd;            /* --bcs-trace: the match log, or -1 */
	char *trace;             /* this round's lines */
	size_t trace_len, trace_cap;
	struct bcs_pick *picks;  /* --bcs-replay: the record, sorted */
	size_t npicks;
	/* the doorbell (nm_bcs_bell_fd): a job on this node alone */
	int bell_fd;             /* eventfd its ranks ring, or -1 */
	uint32_t early;          /* rounds it rang for this slice */
	/* quiet slices (bcs_round.c, due()): what its ranks here looked
	 * like at its last section, and the slices since */
	uint64_t seen_digest;
	uint32_t quiet;
	/* napping (bcs_round.c, nap()): nothing new at a slice, so the
	 * node manager needs no slices for it until a rank rings */
	uint64_t acts;           /* completions posted, bytes moved, spread
				  * collectives started: a round that did
				  * none of these leaves nothing to chain */
	uint32_t nap;            /* the areas' nap value, 0 awake */
	uint32_t naps;           /* naps taken (the next value) */
	/* a checkpoint's cut (docs/checkpoint.md §3, bcs_cut.c): local */
	uint32_t ckpt_want;      /* the epoch this node was told to take */
	uint32_t cut;            /* held after the round that named it */
	uint32_t cut_last;       /* the last epoch whose cut was reached */
	uint64_t cut_since_ms;   /* when the hold began (monotonic) */
	uint32_t lost;           /* 1 + a node of it that left the view */
	uint64_t lost_since_ms;
	int stopped;
	int failed;              /* reported by nm_bcs_failed once */
	int reported;
	char why[512];
};

/* Rounds a job may run on its doorbell between two slices: its ranks
 * write the eventfd, so a job that rings without cause costs the node
 * manager at most this many rounds a slice. */
#define BCS_EARLY_MAX 64
/* A job whose ranks here show nothing new builds no section at a slice
 * (no round, no records), but one at least every this many slices while
 * awake (a napping job's ranks ring). */
#define BCS_QUIET_MAX 16

/* bcs.c */
struct bcs_job *bcs_job_find(struct nm_bcs *e, uint32_t id);
uint64_t bcs_mono_ms(void);
/* A job whose node left the view NM_BCS_LOST_MS ago fails (nm_bcs_view). */
void bcs_lost_expire(struct bcs_job *j);
/* The job's per-rank and per-area arrays (size ranks, nlocal here):
 * 0, or -ENOMEM (those made are freed with the job). */
int bcs_job_alloc(struct bcs_job *j, uint32_t size, uint32_t nlocal);
/* Everything a job holds (NULL or half-built: its segment if mapped,
 * its descriptors if open), and the job. */
void bcs_job_free(struct bcs_job *j);
const char *bcs_node_name(const struct nm_bcs *e, uint32_t node);
void bcs_early_keep(struct nm_bcs *e, uint32_t job, uint32_t inc,
		    uint32_t from, uint64_t round, const uint8_t *data,
		    size_t len);
/* Sections kept for the job (its incarnation's; older ones go). */
void bcs_early_adopt(struct nm_bcs *e, struct bcs_job *j);
struct bcs_area *bcs_job_area(const struct bcs_job *j, uint32_t i);
uint8_t *bcs_job_eager(const struct bcs_job *j, uint32_t i, uint32_t k);
void bcs_job_fail(struct bcs_job *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int bcs_vm_copy(pid_t pid, uint64_t addr, void *buf, size_t len, int write);
void bcs_complete(struct bcs_job *j, uint32_t i, const struct bcs_done *d);
void bcs_complete_late(struct bcs_job *j, uint32_t i);
void bcs_wake(struct bcs_area *a);
void bcs_drop_pair(void *ctx, struct bcs_msg *s, struct bcs_recv *r);
void bcs_trace_match(struct bcs_job *j, const struct bcs_recv *r,
		     const struct bcs_msg *s);
void bcs_trace_flush(struct bcs_job *j);
void bcs_diverged(struct bcs_job *j);
static inline int bcs_local(const struct bcs_job *j, int32_t rank)
{
	return rank >= 0 && (uint32_t)rank < j->size &&
	       j->area_of[rank] != UINT32_MAX;
}

/* bcs_coll.c */
struct bcs_comm *bcs_comm_find(struct bcs_job *j, uint64_t ctx);
int32_t bcs_comm_rank(const struct bcs_comm *c, int32_t w);
int bcs_comm_add(struct bcs_job *j, uint64_t ctx, uint32_t n,
		 const int32_t *world);
void bcs_comm_free(struct bcs_comm *c);
/* A COMM or COLL descriptor of rank applied (every node alike). */
void bcs_coll_comm(struct bcs_job *j, int32_t rank, const struct bcs_desc *d,
		   const uint8_t *group, size_t len);
void bcs_coll_post(struct bcs_job *j, int32_t rank, const struct bcs_desc *d);
void bcs_coll_free(struct bcs_job *j, int32_t rank, const struct bcs_desc *d);
/* Whether two members posted the same collective (kind, root, size,
 * operation, type). */
int bcs_same_coll(const struct bcs_desc *a, const struct bcs_desc *b);
/* Bytes our part of the spread collective's chunk takes in the next
 * section (0: none due), and that part put into it. */
size_t bcs_coll_need(const struct bcs_job *j);
int bcs_coll_build(struct nm_bcs *e, struct bcs_job *j, uint8_t *sec,
		   size_t cap, size_t *len);
/* After a round's matching: the spread collective's chunk from the
 * round's sections, then every collective that can run. */
void bcs_coll_round(struct nm_bcs *e, struct bcs_job *j, uint32_t parity);

/* bcs_save.c: a job's state as an image (format there), and back.
 * encode: 0 with *buf (malloc'd, the caller's) and *len, or -ENOMEM.
 * decode: 0 with *out, a job of the image's shape and state (no
 * segment, descriptor or pids; bcs_job_free it), the image's node taken
 * as this one; or -EBADMSG, -EPROTONOSUPPORT, -ENOMEM with err saying
 * what.  e may be NULL. */
int bcs_save_encode(const struct bcs_job *j, uint8_t **buf, size_t *len);
int bcs_save_decode(struct nm_bcs *e, const uint8_t *buf, size_t len,
		    struct bcs_job **out, char *err, size_t errlen);
/* The same for a job placed anew: place[r] (nplace = its size) is rank
 * r's node now; the image's node ids are read as those (nm_bcs_restore_
 * placed says what moves). */
int bcs_save_decode_placed(struct nm_bcs *e, const uint8_t *buf, size_t len,
			   const uint32_t *place, uint32_t nplace,
			   struct bcs_job **out, char *err, size_t errlen);

/* bcs_round.c */
void bcs_round_section(struct nm_bcs *e, struct bcs_job *j, uint32_t from,
		       uint64_t round, const uint8_t *data, size_t len);

/* bcs_cut.c: a checkpoint's cut of a job on several nodes.  The epoch a
 * node's section asks for (an item appended to it, or nothing), the
 * round just applied's requests (every node alike: the job is held),
 * whether a section may be built, and the hold's time bound. */
int bcs_cut_request(const struct bcs_job *j, uint8_t *sec, size_t cap,
		    size_t *len);
void bcs_cut_round(struct bcs_job *j, uint32_t epoch);
int bcs_cut_wanted(const struct bcs_job *j);
void bcs_cut_expire(struct bcs_job *j);

#endif
