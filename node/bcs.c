/*
 * bcs.c — the node's BCS engine (bcs.h).  Key invariants: a rank's
 * segment is read as untrusted bytes (bcs_ring.c copies and checks);
 * a rank's memory is touched only through the pid of the engine's own
 * child, never after nm.c reaped it; bytes move and completions are
 * posted only inside nm_bcs_slice(), at a slice boundary; a completion
 * that finds the rank's done ring full waits in the engine for the next
 * slice (back-pressure, never loss).
 *
 * Within a slice, per job: (1) the ranks' states and descriptors are
 * taken (descriptor exchange; one node holds every rank today), (2)
 * sends are matched with receives (message scheduling, bcs_match.c),
 * (3) matched bytes move, at most NM_BCS_SLICE_BYTES a slice, a large
 * message over several (point-to-point), (4) collectives whose every
 * member has posted run (barrier, broadcast, reduce), (5) completions
 * are posted and the ranks woken.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <storm_bcs.h>

#include "bcs.h"
#include "bcs_ring.h"

#define TAKE_MAX BCS_RING_SLOTS /* descriptors taken per rank and slice */

/* A matched pair still moving its bytes. */
struct bcs_xfer {
	struct bcs_xfer *next;
	struct bcs_recv *r;
	struct bcs_msg *s;
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
};

struct bcs_job {
	struct bcs_job *next;
	uint32_t id, size, nlocal;
	int fd;
	struct bcs_seg *seg;
	uint64_t bytes;
	uint64_t area_off, area_stride; /* the layout, the engine's copy */
	uint64_t held;           /* eager bytes kept for unmatched sends */
	uint64_t nheld;          /* descriptors kept unmatched */
	uint32_t *area_of;       /* world rank -> local area */
	int32_t *world_of;       /* area -> world rank */
	pid_t *pid;              /* area -> pid (0: not started / gone) */
	int *gone;               /* area: finalized or exited */
	uint64_t *tail;          /* area: descriptors taken */
	uint64_t *seq;           /* area: sends posted */
	uint32_t *pending;       /* area: sends and collectives incomplete */
	struct bcs_late **late;  /* area: completions waiting for room */
	uint64_t *woken;         /* area: done_head when last woken */
	uint32_t *incoming;      /* area: receives matched, bytes moving */
	uint32_t *polls;         /* area: its polls counter when last read */
	struct bcs_match m;
	struct bcs_xfer *xfers, **xtail;
	struct bcs_comm *comms;
	uint64_t *rseq;          /* area: receives posted */
	uint64_t slices;         /* the job's slices so far */
	int trace_fd;            /* --bcs-trace: the match log, or -1 */
	char *trace;             /* this slice's lines */
	size_t trace_len, trace_cap;
	struct bcs_pick *picks;  /* --bcs-replay: the record, sorted */
	size_t npicks;
	int stopped;
	int failed;              /* reported by nm_bcs_failed once */
	int reported;
	char why[512];
};

/* ---- helpers ---------------------------------------------------------- */

/* Area i of the job's segment and the eager buffer of its slot k, from
 * the engine's own copy of the layout: the segment's header is the
 * user's to scribble on, so the engine never reads it back. */
static struct bcs_area *area(const struct bcs_job *j, uint32_t i)
{
	return (struct bcs_area *)((char *)j->seg + j->area_off +
				   (uint64_t)i * j->area_stride);
}

static uint8_t *eager(const struct bcs_job *j, uint32_t i, uint32_t k)
{
	return (uint8_t *)area(j, i) + sizeof(struct bcs_area) +
	       (uint64_t)k * BCS_EAGER_MAX;
}

static struct bcs_job *job_find(struct nm_bcs *e, uint32_t id)
{
	for (struct bcs_job *j = e->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

static void job_fail(struct bcs_job *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void job_fail(struct bcs_job *j, const char *fmt, ...)
{
	va_list ap;

	if (j->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(j->why, sizeof(j->why), fmt, ap);
	va_end(ap);
	j->failed = 1;
	if (j->seg) {
		snprintf(j->seg->reason, sizeof(j->seg->reason), "%.255s", j->why);
		__atomic_store_n(&j->seg->failed, 1, __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < j->nlocal; i++) {
			struct bcs_area *a = area(j, i);

			__atomic_add_fetch(&a->wake, 1, __ATOMIC_RELEASE);
			syscall(SYS_futex, &a->wake, FUTEX_WAKE, INT_MAX,
				NULL, NULL, 0);
		}
	}
	qb_log(LOG_WARNING, "job %u: BCS-MPI: %s", j->id, j->why);
}

/* Bytes between the engine and a rank's memory, whole or an error. */
static int vm_copy(pid_t pid, uint64_t addr, void *buf, size_t len,
		   int write)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (pid <= 0)
		return -ESRCH;
	n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0) :
		    process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static void wake(struct bcs_area *a)
{
	__atomic_add_fetch(&a->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &a->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* A completion for area i: into its ring, or kept for the next slice. */
static void complete(struct bcs_job *j, uint32_t i, const struct bcs_done *d)
{
	struct bcs_area *a = area(j, i);
	uint64_t head = a->done_head;
	uint64_t tail = __atomic_load_n(&a->done_tail, __ATOMIC_ACQUIRE);
	struct bcs_late *l, **pp;

	if (tail > head) {
		job_fail(j, "rank %d: done ring indexes out of bounds (its "
			 "segment is corrupt)", j->world_of[i]);
		return;
	}
	if (!j->late[i] && head - tail < BCS_RING_SLOTS) {
		a->done[head % BCS_RING_SLOTS] = *d;
		__atomic_store_n(&a->done_head, head + 1, __ATOMIC_RELEASE);
		return;
	}
	if (!(l = malloc(sizeof(*l)))) {
		job_fail(j, "out of memory for a completion");
		return;
	}
	l->d = *d;
	l->next = NULL;
	for (pp = &j->late[i]; *pp; pp = &(*pp)->next)
		;
	*pp = l;
}

/* Completions that waited for room, in order. */
static void complete_late(struct bcs_job *j, uint32_t i)
{
	struct bcs_area *a = area(j, i);

	while (j->late[i]) {
		uint64_t head = a->done_head;
		uint64_t tail = __atomic_load_n(&a->done_tail,
						__ATOMIC_ACQUIRE);
		struct bcs_late *l = j->late[i];

		if (tail > head || head - tail >= BCS_RING_SLOTS)
			return;
		a->done[head % BCS_RING_SLOTS] = l->d;
		__atomic_store_n(&a->done_head, head + 1, __ATOMIC_RELEASE);
		j->late[i] = l->next;
		free(l);
	}
}

/* ---- segment ------------------------------------------------------------ */

int nm_bcs_init(struct nm_bcs *e)
{
	memset(e, 0, sizeof(*e));
	e->bounce = malloc(NM_BCS_SLICE_BYTES);
	e->cbuf = malloc(NM_BCS_SLICE_BYTES);
	e->ctmp = malloc(NM_BCS_SLICE_BYTES);
	return e->bounce && e->cbuf && e->ctmp ? 0 : -ENOMEM;
}

static void comm_free(struct bcs_comm *c)
{
	for (uint32_t k = 0; c->q && k < c->n; k++)
		while (c->q[k]) {
			struct bcs_cpost *p = c->q[k];

			c->q[k] = p->next;
			free(p);
		}
	free(c->q);
	free(c->world);
	free(c);
}

static void drop_pair(void *ctx, struct bcs_msg *s, struct bcs_recv *r)
{
	(void)ctx;
	if (s)
		free(s->eager);
	free(s);
	free(r);
}

static void job_free(struct bcs_job *j)
{
	bcs_match_fini(&j->m, drop_pair, NULL);
	while (j->xfers) {
		struct bcs_xfer *x = j->xfers;

		j->xfers = x->next;
		drop_pair(NULL, x->s, x->r);
		free(x);
	}
	while (j->comms) {
		struct bcs_comm *c = j->comms;

		j->comms = c->next;
		comm_free(c);
	}
	for (uint32_t i = 0; j->late && i < j->nlocal; i++)
		while (j->late[i]) {
			struct bcs_late *l = j->late[i];

			j->late[i] = l->next;
			free(l);
		}
	if (j->seg)
		munmap(j->seg, j->bytes);
	if (j->fd >= 0)
		close(j->fd);
	free(j->area_of);
	free(j->world_of);
	free(j->pid);
	free(j->gone);
	free(j->tail);
	free(j->seq);
	free(j->pending);
	free(j->late);
	free(j->woken);
	free(j->incoming);
	free(j->polls);
	free(j->rseq);
	free(j->trace);
	free(j->picks);
	if (j->trace_fd >= 0)
		close(j->trace_fd);
	free(j);
}

void nm_bcs_fini(struct nm_bcs *e)
{
	while (e->jobs) {
		struct bcs_job *j = e->jobs;

		e->jobs = j->next;
		job_free(j);
	}
	free(e->bounce);
	free(e->cbuf);
	free(e->ctmp);
	e->bounce = e->cbuf = e->ctmp = NULL;
}

/* The world communicator: every rank, known without a descriptor. */
static int comm_add(struct bcs_job *j, uint64_t ctx, uint32_t n,
		    const int32_t *world)
{
	struct bcs_comm *c = calloc(1, sizeof(*c));

	if (!c || !(c->world = malloc(n * sizeof(int32_t))) ||
	    !(c->q = calloc(n, sizeof(*c->q)))) {
		if (c)
			comm_free(c);
		return -ENOMEM;
	}
	c->ctx = ctx;
	c->n = n;
	memcpy(c->world, world, n * sizeof(int32_t));
	c->next = j->comms;
	j->comms = c;
	return 0;
}

int nm_bcs_open(struct nm_bcs *e, uint32_t job, uint32_t size,
		uint32_t nlocal, const uint32_t *ranks, const char *dir,
		uid_t uid, gid_t gid, enum bcs_order order, int *fd, char *err,
		size_t errlen)
{
	struct bcs_job *j;
	int32_t *all = NULL;
	int rc = -ENOMEM;

	if (nlocal != size) {
		snprintf(err, errlen, "a BCS-MPI job runs within one node in "
			 "this version: job %u has %u of its %u ranks here "
			 "(ask for --nodes with one node, or fewer ranks)",
			 job, nlocal, size);
		return -ENOTSUP;
	}
	if (!(j = calloc(1, sizeof(*j))))
		goto nomem;
	j->fd = -1;
	j->trace_fd = -1;
	j->id = job;
	j->size = size;
	j->nlocal = nlocal;
	j->xtail = &j->xfers;
	j->area_of = calloc(size, sizeof(*j->area_of));
	j->world_of = calloc(nlocal, sizeof(*j->world_of));
	j->pid = calloc(nlocal, sizeof(*j->pid));
	j->gone = calloc(nlocal, sizeof(*j->gone));
	j->tail = calloc(nlocal, sizeof(*j->tail));
	j->seq = calloc(nlocal, sizeof(*j->seq));
	j->pending = calloc(nlocal, sizeof(*j->pending));
	j->late = calloc(nlocal, sizeof(*j->late));
	j->woken = calloc(nlocal, sizeof(*j->woken));
	j->incoming = calloc(nlocal, sizeof(*j->incoming));
	j->rseq = calloc(nlocal, sizeof(*j->rseq));
	j->polls = calloc(nlocal, sizeof(*j->polls));
	all = malloc(size * sizeof(*all));
	if (!j->area_of || !j->world_of || !j->pid || !j->gone || !j->tail ||
	    !j->seq || !j->pending || !j->late || !j->woken ||
	    !j->incoming || !j->rseq || !j->polls || !all ||
	    bcs_match_init(&j->m, size, order))
		goto nomem;
	for (uint32_t r = 0; r < size; r++)
		all[r] = (int32_t)r;
	if (comm_add(j, BCS_CTX_WORLD, size, all))
		goto nomem;
	for (uint32_t i = 0; i < nlocal; i++) {
		if (ranks[i] >= size) {
			rc = -EINVAL;
			snprintf(err, errlen, "rank %u of a job of %u",
				 ranks[i], size);
			goto out;
		}
		j->world_of[i] = (int32_t)ranks[i];
		j->area_of[ranks[i]] = i;
	}
	(void)dir;
	j->bytes = bcs_seg_bytes(nlocal);
	/* memory with no name a user could reach, owned by the job's user,
	 * its size sealed: a rank that could shrink it would crash the
	 * engine on its next access (SIGBUS) */
	j->fd = memfd_create("bcs-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (j->fd < 0 || fchown(j->fd, uid, gid) < 0 ||
	    fchmod(j->fd, 0600) < 0 ||
	    ftruncate(j->fd, (off_t)j->bytes) < 0 ||
	    fcntl(j->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_SEAL) < 0) {
		rc = -errno;
		snprintf(err, errlen, "BCS-MPI segment: %s", strerror(errno));
		goto out;
	}
	j->seg = mmap(NULL, j->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		      j->fd, 0);
	if (j->seg == MAP_FAILED) {
		j->seg = NULL;
		rc = -errno;
		snprintf(err, errlen, "BCS-MPI segment: mmap: %s",
			 strerror(errno));
		goto out;
	}
	j->area_off = 4096;
	j->area_stride = (j->bytes - 4096) / (nlocal ? nlocal : 1);
	*j->seg = (struct bcs_seg){
		.magic = BCS_SEG_MAGIC, .version = BCS_SEG_VERSION,
		.job = job, .size = size, .nlocal = nlocal,
		.ring_slots = BCS_RING_SLOTS, .eager_max = BCS_EAGER_MAX,
		.bytes = j->bytes, .area_off = j->area_off,
		.area_stride = j->area_stride,
	};
	for (uint32_t i = 0; i < nlocal; i++)
		area(j, i)->rank = j->world_of[i];
	free(all);
	j->next = e->jobs;
	e->jobs = j;
	*fd = j->fd;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory for a BCS-MPI job");
out:
	free(all);
	if (j)
		job_free(j);
	return rc;
}

void nm_bcs_started(struct nm_bcs *e, uint32_t job, uint32_t i, pid_t pid)
{
	struct bcs_job *j = job_find(e, job);

	if (j && i < j->nlocal)
		j->pid[i] = pid;
}

void nm_bcs_exited(struct nm_bcs *e, uint32_t job, uint32_t i, int status)
{
	struct bcs_job *j = job_find(e, job);

	if (!j || i >= j->nlocal)
		return;
	j->pid[i] = 0; /* to be reaped: its pid is no longer ours */
	if (!j->gone[i])
		job_fail(j, "rank %d exited without MPI_Finalize (%s %d)",
			 j->world_of[i], WIFSIGNALED(status) ? "signal" :
			 "exit code", WIFSIGNALED(status) ? WTERMSIG(status) :
			 WEXITSTATUS(status));
	j->gone[i] = 1;
}

void nm_bcs_close(struct nm_bcs *e, uint32_t job)
{
	for (struct bcs_job **pp = &e->jobs; *pp; pp = &(*pp)->next)
		if ((*pp)->id == job) {
			struct bcs_job *j = *pp;

			*pp = j->next;
			job_free(j);
			return;
		}
}

void nm_bcs_stopped(struct nm_bcs *e, uint32_t job, int stopped)
{
	struct bcs_job *j = job_find(e, job);

	if (j)
		j->stopped = stopped;
}

int nm_bcs_failed(struct nm_bcs *e, uint32_t *job, char *why, size_t whylen)
{
	for (struct bcs_job *j = e->jobs; j; j = j->next)
		if (j->failed && !j->reported) {
			j->reported = 1;
			*job = j->id;
			snprintf(why, whylen, "BCS-MPI: %s", j->why);
			return 1;
		}
	return 0;
}

/* ---- (1) descriptors in ------------------------------------------------ */

static struct bcs_comm *comm_find(struct bcs_job *j, uint64_t ctx)
{
	for (struct bcs_comm *c = j->comms; c; c = c->next)
		if (c->ctx == ctx)
			return c;
	return NULL;
}

/* Communicator rank of world rank w in c, or -1. */
static int32_t comm_rank(const struct bcs_comm *c, int32_t w)
{
	for (uint32_t k = 0; k < c->n; k++)
		if (c->world[k] == w)
			return (int32_t)k;
	return -1;
}

static int take_comm(struct bcs_job *j, uint32_t i, uint64_t slot,
		     const struct bcs_desc *d)
{
	uint32_t n = (uint32_t)(d->bytes / 4);
	int32_t *w = malloc(n * sizeof(*w));
	struct bcs_comm *c;
	int rc = 0;

	if (!w) {
		job_fail(j, "out of memory for a communicator");
		return -ENOMEM;
	}
	if (d->flags & BCS_F_EAGER) /* the group in the slot */
		memcpy(w, eager(j, i,
				       (uint32_t)(slot % BCS_RING_SLOTS)),
		       n * 4);
	else
		rc = vm_copy(j->pid[i], d->addr, w, n * 4, 0);
	if (rc) {
		free(w);
		job_fail(j, "rank %d: communicator group at %#llx: %s",
			 j->world_of[i], (unsigned long long)d->addr,
			 strerror(-rc));
		return rc;
	}
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t l = 0; l < k + 1; l++)
			if (w[k] < 0 || (uint32_t)w[k] >= j->size ||
			    (l < k && w[l] == w[k])) {
				free(w);
				job_fail(j, "rank %d: communicator %#llx: "
					 "member %u is not a rank of the job "
					 "or is there twice", j->world_of[i],
					 (unsigned long long)d->ctx, k);
				return -EINVAL;
			}
	c = comm_find(j, d->ctx);
	if (c && (c->n != n || memcmp(c->world, w, n * 4))) {
		free(w);
		job_fail(j, "rank %d: communicator %#llx: another group than "
			 "its other members gave", j->world_of[i],
			 (unsigned long long)d->ctx);
		return -EINVAL;
	}
	rc = c ? 0 : comm_add(j, d->ctx, n, w);
	free(w);
	if (rc)
		job_fail(j, "out of memory for a communicator");
	return rc;
}

static int take_coll(struct bcs_job *j, uint32_t i, const struct bcs_desc *d)
{
	struct bcs_comm *c = comm_find(j, d->ctx);
	struct bcs_cpost *p, **pp;
	int32_t me;

	if (!c || (me = comm_rank(c, j->world_of[i])) < 0) {
		job_fail(j, "rank %d: a collective on communicator %#llx, "
			 "which it is not a member of", j->world_of[i],
			 (unsigned long long)d->ctx);
		return -EINVAL;
	}
	if ((d->coll == BCS_C_BCAST || d->coll == BCS_C_REDUCE) &&
	    (uint32_t)d->peer >= c->n) {
		job_fail(j, "rank %d: root %d of a communicator of %u",
			 j->world_of[i], d->peer, c->n);
		return -EINVAL;
	}
	if (!(p = malloc(sizeof(*p)))) {
		job_fail(j, "out of memory for a collective");
		return -ENOMEM;
	}
	p->d = *d;
	p->next = NULL;
	for (pp = &c->q[me]; *pp; pp = &(*pp)->next)
		;
	*pp = p;
	j->pending[i]++;
	return 0;
}

static int take_send(struct bcs_job *j, uint32_t i, uint64_t slot,
		     const struct bcs_desc *d)
{
	struct bcs_msg *s = calloc(1, sizeof(*s));

	if (!s) {
		job_fail(j, "out of memory for a message");
		return -ENOMEM;
	}
	s->src = j->world_of[i];
	s->dst = d->peer;
	s->tag = d->tag;
	s->flags = d->flags;
	s->ctx = d->ctx;
	s->bytes = d->bytes;
	s->clock = d->clock;
	s->seq = ++j->seq[i];
	s->req = d->req;
	s->addr = d->addr;
	if (d->flags & BCS_F_EAGER) {
		/* out of the slot now: the rank reuses it once taken */
		s->eager = malloc(d->bytes ? d->bytes : 1);
		if (!s->eager) {
			free(s);
			job_fail(j, "out of memory for a message");
			return -ENOMEM;
		}
		memcpy(s->eager, eager(j, i,
					      (uint32_t)(slot % BCS_RING_SLOTS)),
		       d->bytes);
	}
	if (!(d->flags & BCS_F_EAGER) || (d->flags & BCS_F_SYNC))
		j->pending[i]++; /* completed when its bytes are moved */
	j->nheld++;
	if (s->eager)
		j->held += s->bytes;
	bcs_match_send(&j->m, s);
	return 0;
}

static int take_recv(struct bcs_job *j, uint32_t i, const struct bcs_desc *d)
{
	struct bcs_recv *r = calloc(1, sizeof(*r));

	if (!r) {
		job_fail(j, "out of memory for a receive");
		return -ENOMEM;
	}
	r->dst = j->world_of[i];
	r->src = d->peer;
	r->tag = d->tag;
	r->probe = d->kind == BCS_D_PROBE;
	r->ctx = d->ctx;
	r->cap = d->bytes;
	r->req = d->req;
	r->addr = d->addr;
	r->seq = ++j->rseq[i];
	j->nheld++;
	bcs_match_recv(&j->m, r);
	return 0;
}

static void take_abort(struct bcs_job *j, uint32_t i, const struct bcs_desc *d)
{
	char msg[BCS_REASON_MAX + 1] = "";

	if (vm_copy(j->pid[i], d->addr, msg, d->bytes, 0))
		msg[0] = '\0';
	msg[d->bytes < BCS_REASON_MAX ? d->bytes : BCS_REASON_MAX] = '\0';
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 32)
			*p = ' ';
	if (d->flags & 1) /* an error under MPI_ERRORS_ARE_FATAL */
		job_fail(j, "rank %d: %s", j->world_of[i], msg);
	else
		job_fail(j, "rank %d called MPI_Abort (error code %u)%s%s",
			 j->world_of[i], d->op, msg[0] ? ": " : "", msg);
}

/* Everything area i posted since the last slice. */
static void take(struct bcs_job *j, uint32_t i)
{
	struct bcs_area *a = area(j, i);
	struct bcs_desc d[TAKE_MAX];
	uint32_t n = 0;
	char why[256];
	int full;

	if (j->gone[i] && j->pid[i] <= 0)
		return;
	if (bcs_ring_take(a, j->tail[i], d, TAKE_MAX, &n, why, sizeof(why))) {
		job_fail(j, "rank %d: %s (its segment is corrupt)",
			 j->world_of[i], why);
		return;
	}
	full = n == BCS_RING_SLOTS; /* the rank may wait for room */
	for (uint32_t k = 0; k < n && !j->failed; k++) {
		uint64_t slot = j->tail[i] + k;
		int p2p = d[k].kind == BCS_D_SEND || d[k].kind == BCS_D_RECV ||
			  d[k].kind == BCS_D_PROBE;

		if (bcs_desc_check(&d[k], j->size, why, sizeof(why))) {
			job_fail(j, "rank %d: %s (its segment is corrupt)",
				 j->world_of[i], why);
			return;
		}
		if (j->gone[i]) {
			job_fail(j, "rank %d posted after MPI_Finalize",
				 j->world_of[i]);
			return;
		}
		/* what the engine keeps for the job is bounded: past the
		 * bound the rest stays in the rank's ring (it waits when
		 * the ring is full), never in root's memory */
		if (p2p && (j->nheld >= NM_BCS_HELD_DESCS ||
			    ((d[k].flags & BCS_F_EAGER) &&
			     j->held + d[k].bytes > NM_BCS_HELD_BYTES))) {
			n = k;
			break;
		}
		switch (d[k].kind) {
		case BCS_D_SEND:
			take_send(j, i, slot, &d[k]);
			break;
		case BCS_D_RECV:
		case BCS_D_PROBE:
			take_recv(j, i, &d[k]);
			break;
		case BCS_D_COLL:
			take_coll(j, i, &d[k]);
			break;
		case BCS_D_COMM:
			take_comm(j, i, slot, &d[k]);
			break;
		case BCS_D_FINALIZE:
			j->gone[i] = 1;
			break;
		case BCS_D_ABORT:
			take_abort(j, i, &d[k]);
			break;
		}
	}
	j->tail[i] += n;
	__atomic_store_n(&a->post_tail, j->tail[i], __ATOMIC_RELEASE);
	if (full || n)
		wake(a); /* room in its ring: a rank may be waiting for it */
}

/* ---- (2) matching and (3) moving ---------------------------------------- */

/* A match into the job's log (written out at the end of the slice). */
static void trace_match(struct bcs_job *j, const struct bcs_recv *r,
			const struct bcs_msg *s)
{
	char line[256];
	int n;

	if (j->trace_fd < 0 || r->probe)
		return;
	n = snprintf(line, sizeof(line), "match %llu slice %llu: rank %d recv "
		     "%llu <- rank %d send %llu tag %d bytes %llu\n",
		     (unsigned long long)j->m.matched,
		     (unsigned long long)j->slices, r->dst,
		     (unsigned long long)r->seq, s->src,
		     (unsigned long long)s->seq, s->tag,
		     (unsigned long long)s->bytes);
	if (j->trace_len + (size_t)n > j->trace_cap) {
		size_t cap = j->trace_cap ? 2 * j->trace_cap : 4096;
		char *t;

		while (cap < j->trace_len + (size_t)n)
			cap *= 2;
		if (!(t = realloc(j->trace, cap)))
			return; /* the log loses a line rather than the job */
		j->trace = t;
		j->trace_cap = cap;
	}
	memcpy(j->trace + j->trace_len, line, (size_t)n);
	j->trace_len += (size_t)n;
}

static void trace_flush(struct bcs_job *j)
{
	size_t done = 0;

	while (j->trace_fd >= 0 && done < j->trace_len) {
		ssize_t w = write(j->trace_fd, j->trace + done,
				  j->trace_len - done);

		if (w <= 0) {
			qb_log(LOG_WARNING, "job %u: BCS-MPI trace: %s; no "
			       "more of it is written", j->id,
			       w < 0 ? strerror(errno) : "short write");
			close(j->trace_fd);
			j->trace_fd = -1;
			break;
		}
		done += (size_t)w;
	}
	j->trace_len = 0;
}

static int cmp_pick(const void *a, const void *b)
{
	const struct bcs_pick *x = a, *y = b;

	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->rseq < y->rseq ? -1 : x->rseq > y->rseq;
}

static int pick(void *ctx, const struct bcs_recv *r, int32_t *src,
		uint64_t *seq)
{
	struct bcs_job *j = ctx;
	struct bcs_pick key = { .dst = r->dst, .rseq = r->seq }, *p;

	if (r->probe)
		return 0;
	p = bsearch(&key, j->picks, j->npicks, sizeof(key), cmp_pick);
	if (!p)
		return 0;
	*src = p->src;
	*seq = p->sseq;
	return 1;
}

void nm_bcs_trace(struct nm_bcs *e, uint32_t job, int fd)
{
	struct bcs_job *j = job_find(e, job);

	if (!j) {
		close(fd);
		return;
	}
	if (j->trace_fd >= 0)
		close(j->trace_fd);
	j->trace_fd = fd;
}

int nm_bcs_replay(struct nm_bcs *e, uint32_t job, const char *text,
		  size_t len, char *err, size_t errlen)
{
	struct bcs_job *j = job_find(e, job);
	size_t cap = 0, line = 0;
	const char *p = text, *end = text + len;

	if (!j) {
		snprintf(err, errlen, "no BCS-MPI job %u here", job);
		return -ENOENT;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char buf[256];
		unsigned long long k, sl, rs, ss, b;
		int d, s, t, used = 0;
		size_t n = (size_t)((nl ? nl : end) - p);

		line++;
		if (n && n < sizeof(buf)) {
			memcpy(buf, p, n);
			buf[n] = '\0';
		}
		if (!n || n >= sizeof(buf) ||
		    sscanf(buf, "match %llu slice %llu: rank %d recv %llu <- "
			   "rank %d send %llu tag %d bytes %llu%n", &k, &sl, &d,
			   &rs, &s, &ss, &t, &b, &used) != 8 ||
		    (size_t)used != n || d < 0 || (uint32_t)d >= j->size ||
		    s < 0 || (uint32_t)s >= j->size) {
			if (n) {
				snprintf(err, errlen, "replay log, line %zu: "
					 "not a match line of job of %u ranks "
					 "(\"match K slice N: rank D recv R <- "
					 "rank S send Q tag T bytes B\")",
					 line, j->size);
				return -EINVAL;
			}
		} else {
			if (j->npicks == cap) {
				struct bcs_pick *np;

				cap = cap ? 2 * cap : 256;
				if (!(np = realloc(j->picks,
						   cap * sizeof(*np)))) {
					snprintf(err, errlen, "out of memory "
						 "for the replay log");
					return -ENOMEM;
				}
				j->picks = np;
			}
			j->picks[j->npicks++] = (struct bcs_pick){
				.dst = d, .rseq = rs, .src = s, .sseq = ss,
				.k = k };
		}
		p = nl ? nl + 1 : end;
	}
	qsort(j->picks, j->npicks, sizeof(*j->picks), cmp_pick);
	j->m.pick = pick;
	j->m.pick_ctx = j;
	return 0;
}

static void on_match(void *ctx, struct bcs_recv *r, struct bcs_msg *s)
{
	struct bcs_job *j = ctx;
	struct bcs_xfer *x;

	trace_match(j, r, s);
	/* the receive leaves the engine's keeping, and so does the send
	 * (its bytes move now; a probe's send stays) */
	j->nheld -= j->nheld ? 1 : 0;
	if (!r->probe) {
		j->nheld -= j->nheld ? 1 : 0;
		if (s->eager)
			j->held -= j->held >= s->bytes ? s->bytes : j->held;
	}
	if (r->probe) {
		struct bcs_done d = { .req = r->req, .source = s->src,
				      .tag = s->tag, .bytes = s->bytes,
				      .clock = s->clock };

		complete(j, j->area_of[r->dst], &d);
		free(r);
		return;
	}
	if (!(x = calloc(1, sizeof(*x)))) {
		job_fail(j, "out of memory for a transfer");
		drop_pair(NULL, s, r);
		return;
	}
	x->r = r;
	x->s = s;
	x->len = s->bytes < r->cap ? s->bytes : r->cap;
	j->incoming[j->area_of[r->dst]]++;
	*j->xtail = x;
	j->xtail = &x->next;
}

/* Move up to *budget bytes of x; 1 once all are moved. */
static int move(struct nm_bcs *e, struct bcs_job *j, struct bcs_xfer *x,
		uint64_t *budget)
{
	uint32_t si = j->area_of[x->s->src], ri = j->area_of[x->r->dst];
	int rc = 0;

	while (x->done < x->len && *budget) {
		uint64_t n = x->len - x->done;

		if (n > *budget)
			n = *budget;
		if (n > NM_BCS_SLICE_BYTES)
			n = NM_BCS_SLICE_BYTES;
		if (x->s->eager)
			rc = vm_copy(j->pid[ri], x->r->addr + x->done,
				     x->s->eager + x->done, n, 1);
		else if (!(rc = vm_copy(j->pid[si], x->s->addr + x->done,
					e->bounce, n, 0)))
			rc = vm_copy(j->pid[ri], x->r->addr + x->done,
				     e->bounce, n, 1);
		if (rc) {
			job_fail(j, "message from rank %d to rank %d (tag %d, "
				 "%llu bytes): %s", x->s->src, x->r->dst,
				 x->s->tag, (unsigned long long)x->s->bytes,
				 rc == -EFAULT ? "a buffer is not mapped in "
				 "its rank" : strerror(-rc));
			return 0;
		}
		x->done += n;
		*budget -= n;
	}
	return x->done == x->len;
}

static void finish(struct bcs_job *j, struct bcs_xfer *x)
{
	struct bcs_done dr = { .req = x->r->req, .source = x->s->src,
			       .tag = x->s->tag, .bytes = x->len,
			       .clock = x->s->clock,
			       .status = x->s->bytes > x->r->cap ?
					 BCS_E_TRUNCATE : BCS_OK };
	uint32_t si = j->area_of[x->s->src], ri = j->area_of[x->r->dst];

	complete(j, ri, &dr);
	if (j->incoming[ri])
		j->incoming[ri]--;
	if (!(x->s->flags & BCS_F_EAGER) || (x->s->flags & BCS_F_SYNC)) {
		struct bcs_done ds = { .req = x->s->req };

		complete(j, si, &ds);
		if (j->pending[si])
			j->pending[si]--;
	}
	drop_pair(NULL, x->s, x->r);
	free(x);
}

static void transfers(struct nm_bcs *e, struct bcs_job *j)
{
	uint64_t budget = NM_BCS_SLICE_BYTES;

	while (j->xfers && !j->failed) {
		struct bcs_xfer *x = j->xfers;

		if (!move(e, j, x, &budget))
			return; /* the rest next slice */
		j->xfers = x->next;
		if (!j->xfers)
			j->xtail = &j->xfers;
		finish(j, x);
	}
}

/* ---- (4) collectives ----------------------------------------------------- */

static int same_coll(const struct bcs_desc *a, const struct bcs_desc *b)
{
	if (a->coll != b->coll)
		return 0;
	switch (a->coll) {
	case BCS_C_BCAST:
		return a->peer == b->peer && a->bytes == b->bytes;
	case BCS_C_REDUCE:
		return a->peer == b->peer && a->bytes == b->bytes &&
		       a->op == b->op && a->type == b->type;
	case BCS_C_ALLREDUCE:
		return a->bytes == b->bytes && a->op == b->op &&
		       a->type == b->type;
	default:
		return 1;
	}
}

/* Complete c's first collective on every member (status, and the
 * latest of the members' clocks) and drop it. */
static void coll_done(struct bcs_job *j, struct bcs_comm *c, int status)
{
	uint64_t clock = 0;

	for (uint32_t k = 0; k < c->n; k++)
		if (c->q[k]->d.clock > clock)
			clock = c->q[k]->d.clock;
	for (uint32_t k = 0; k < c->n; k++) {
		struct bcs_cpost *p = c->q[k];
		uint32_t i = j->area_of[c->world[k]];
		struct bcs_done d = { .req = p->d.req, .status = status,
				      .clock = clock };

		complete(j, i, &d);
		if (j->pending[i])
			j->pending[i]--;
		c->q[k] = p->next;
		free(p);
	}
	c->off = 0;
}

/* One chunk of c's first collective (every member has posted it): at
 * most NM_BCS_SLICE_BYTES of its data a slice, through the engine's own
 * buffers (never the size a descriptor says).  1 once it is done, 0 if
 * it goes on next slice, -errno (the job failed). */
static int run_coll(struct nm_bcs *e, struct bcs_job *j, struct bcs_comm *c)
{
	const struct bcs_desc *d0 = &c->q[0]->d;
	uint64_t bytes = d0->bytes, off = c->off, n;
	int rc = 0;

	if (off == 0) {
		for (uint32_t k = 0; k < c->n; k++)
			if (!same_coll(d0, &c->q[k]->d)) {
				coll_done(j, c, BCS_E_COLL);
				return 1;
			}
		if ((d0->coll == BCS_C_REDUCE || d0->coll == BCS_C_ALLREDUCE) &&
		    (!bcs_type_size((enum bcs_type)d0->type) ||
		     bytes % bcs_type_size((enum bcs_type)d0->type) ||
		     !bcs_op_valid((enum bcs_op)d0->op,
				   (enum bcs_type)d0->type))) {
			coll_done(j, c, BCS_E_ARG);
			return 1;
		}
	}
	if (d0->coll == BCS_C_BARRIER || off >= bytes) {
		coll_done(j, c, BCS_OK);
		return 1;
	}
	n = bytes - off < NM_BCS_SLICE_BYTES ? bytes - off : NM_BCS_SLICE_BYTES;
	if (d0->coll == BCS_C_BCAST) {
		int32_t root = c->world[d0->peer];

		rc = vm_copy(j->pid[j->area_of[root]],
			     c->q[d0->peer]->d.addr + off, e->cbuf, n, 0);
		for (uint32_t k = 0; !rc && k < c->n; k++)
			if ((int32_t)k != d0->peer)
				rc = vm_copy(j->pid[j->area_of[c->world[k]]],
					     c->q[k]->d.addr + off, e->cbuf, n,
					     1);
	} else {
		size_t esz = bcs_type_size((enum bcs_type)d0->type);

		/* acc = r0 op (r1 op (... op r(n-1))): one fixed order, so
		 * every run gives the same bits */
		n -= n % esz;
		for (uint32_t k = c->n; !rc && k-- > 0;) {
			pid_t pid = j->pid[j->area_of[c->world[k]]];

			rc = vm_copy(pid, c->q[k]->d.addr + off,
				     k == c->n - 1 ? e->cbuf : e->ctmp, n, 0);
			if (!rc && k != c->n - 1)
				bcs_reduce((enum bcs_op)d0->op,
					   (enum bcs_type)d0->type, e->ctmp,
					   e->cbuf, n / esz);
		}
		for (uint32_t k = 0; !rc && k < c->n; k++)
			if (d0->coll == BCS_C_ALLREDUCE ||
			    (int32_t)k == d0->peer)
				rc = vm_copy(j->pid[j->area_of[c->world[k]]],
					     c->q[k]->d.addr2 + off, e->cbuf, n,
					     1);
	}
	if (rc) {
		job_fail(j, "collective on communicator %#llx: %s",
			 (unsigned long long)c->ctx, rc == -EFAULT ?
			 "a buffer is not mapped in its rank" :
			 strerror(-rc));
		return rc;
	}
	c->off = off + n;
	if (c->off < bytes)
		return 0;
	coll_done(j, c, BCS_OK);
	return 1;
}

static void collectives(struct nm_bcs *e, struct bcs_job *j)
{
	for (struct bcs_comm *c = j->comms; c && !j->failed; c = c->next)
		for (;;) {
			uint32_t k;

			for (k = 0; k < c->n && c->q[k]; k++)
				;
			if (k < c->n || run_coll(e, j, c) != 1)
				break;
		}
}

/* ---- the slice ----------------------------------------------------------- */

static void job_slice(struct nm_bcs *e, struct bcs_job *j)
{
	/* the ranks' states first, then their descriptors: a send posted
	 * after the clock was read has a later clock (the library writes
	 * the descriptor, then the clock) */
	j->m.polling = 0;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct bcs_area *a = area(j, i);
		struct bcs_rank_state *k = &j->m.rk[j->world_of[i]];
		uint32_t polls = __atomic_load_n(&a->polls, __ATOMIC_RELAXED);
		uint64_t dt;

		if (polls != j->polls[i])
			j->m.polling = 1;
		j->polls[i] = polls;
		/* done_tail before blocked: the rank clears blocked before
		 * it takes a completion, so a tail that moved shows here */
		dt = __atomic_load_n(&a->done_tail, __ATOMIC_ACQUIRE);
		k->clock = __atomic_load_n(&a->clock, __ATOMIC_ACQUIRE);
		k->blocked = __atomic_load_n(&a->blocked, __ATOMIC_ACQUIRE);
		if (dt != a->done_head || j->late[i] || j->incoming[i])
			k->blocked = 0; /* completions it has not seen, or
					 * that are on their way */
	}
	for (uint32_t i = 0; i < j->nlocal && !j->failed; i++)
		take(j, i);
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct bcs_rank_state *k = &j->m.rk[j->world_of[i]];

		k->gone = j->gone[i];
		k->other_pending = j->pending[i];
		k->sent = j->seq[i];
	}
	if (j->failed)
		return;
	j->slices++;
	bcs_match_run(&j->m, on_match, j);
	trace_flush(j);
	if (j->m.diverged) {
		const struct bcs_recv *r = j->m.diverged;
		struct bcs_pick key = { .dst = r->dst, .rseq = r->seq }, *p;

		p = bsearch(&key, j->picks, j->npicks, sizeof(key), cmp_pick);
		job_fail(j, "the run diverged from the replayed log at its "
			 "match %llu (slice %llu): rank %d's receive %llu "
			 "cannot take rank %d's send %llu",
			 p ? (unsigned long long)p->k : 0ULL,
			 (unsigned long long)j->slices, r->dst,
			 (unsigned long long)r->seq, p ? p->src : -1,
			 p ? (unsigned long long)p->sseq : 0ULL);
		return;
	}
	transfers(e, j);
	collectives(e, j);
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct bcs_area *a = area(j, i);

		complete_late(j, i);
		if (a->done_head != j->woken[i]) {
			j->woken[i] = a->done_head;
			wake(a);
		}
	}
}

void nm_bcs_slice(struct nm_bcs *e, uint64_t slice)
{
	(void)slice;
	for (struct bcs_job *j = e->jobs; j; j = j->next)
		if (!j->stopped && !j->failed && j->seg)
			job_slice(e, j);
}
