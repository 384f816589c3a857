/*
 * bcs.c — the node's BCS engine (bcs.h): its jobs, their segments, the
 * completions it posts, the match log.  Key invariants: a rank's
 * segment is read as untrusted bytes (bcs_ring.c copies and checks);
 * a rank's memory is touched only through the pid of the engine's own
 * child, never after nm.c reaped it; bytes move and completions are
 * posted only in a round (bcs_round.c), which starts at a slice
 * boundary; a completion that finds the rank's done ring full waits in
 * the engine for the next round (back-pressure, never loss).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <storm_bcs.h>

#include "bcs_int.h"

/* ---- helpers ---------------------------------------------------------- */

/* Area i of the job's segment and the eager buffer of its slot k, from
 * the engine's own copy of the layout: the segment's header is the
 * user's to scribble on, so the engine never reads it back. */
struct bcs_area *bcs_job_area(const struct bcs_job *j, uint32_t i)
{
	return (struct bcs_area *)((char *)j->seg + j->area_off +
				   (uint64_t)i * j->area_stride);
}

uint8_t *bcs_job_eager(const struct bcs_job *j, uint32_t i, uint32_t k)
{
	return (uint8_t *)bcs_job_area(j, i) + sizeof(struct bcs_area) +
	       (uint64_t)k * BCS_EAGER_MAX;
}

struct bcs_job *bcs_job_find(struct nm_bcs *e, uint32_t id)
{
	for (struct bcs_job *j = e->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

void bcs_job_fail(struct bcs_job *j, const char *fmt, ...)
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
			struct bcs_area *a = bcs_job_area(j, i);

			__atomic_add_fetch(&a->wake, 1, __ATOMIC_RELEASE);
			syscall(SYS_futex, &a->wake, FUTEX_WAKE, INT_MAX,
				NULL, NULL, 0);
		}
	}
	qb_log(LOG_WARNING, "job %u: BCS-MPI: %s", j->id, j->why);
}

/* Bytes between the engine and a rank's memory, whole or an error. */
int bcs_vm_copy(pid_t pid, uint64_t addr, void *buf, size_t len,
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

void bcs_wake(struct bcs_area *a)
{
	__atomic_add_fetch(&a->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &a->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* A completion for area i: into its ring, or kept for the next slice. */
void bcs_complete(struct bcs_job *j, uint32_t i, const struct bcs_done *d)
{
	struct bcs_area *a = bcs_job_area(j, i);
	uint64_t head = a->done_head;
	uint64_t tail = __atomic_load_n(&a->done_tail, __ATOMIC_ACQUIRE);
	struct bcs_late *l, **pp;

	j->acts++;
	if (tail > head) {
		bcs_job_fail(j, "rank %d: done ring indexes out of bounds (its "
			 "segment is corrupt)", j->world_of[i]);
		return;
	}
	if (!j->late[i] && head - tail < BCS_RING_SLOTS) {
		a->done[head % BCS_RING_SLOTS] = *d;
		__atomic_store_n(&a->done_head, head + 1, __ATOMIC_RELEASE);
		return;
	}
	if (!(l = malloc(sizeof(*l)))) {
		bcs_job_fail(j, "out of memory for a completion");
		return;
	}
	l->d = *d;
	l->next = NULL;
	for (pp = &j->late[i]; *pp; pp = &(*pp)->next)
		;
	*pp = l;
}

/* Completions that waited for room, in order. */
void bcs_complete_late(struct bcs_job *j, uint32_t i)
{
	struct bcs_area *a = bcs_job_area(j, i);

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

/* ---- jobs ------------------------------------------------------------ */

/* A section that came before its job opened here. */
struct bcs_early {
	struct bcs_early *next;
	uint32_t job, inc, from;
	uint64_t round;
	size_t len;
	uint8_t data[];
};

int nm_bcs_init(struct nm_bcs *e)
{
	memset(e, 0, sizeof(*e));
	e->bounce = malloc(NM_BCS_SLICE_BYTES);
	e->cbuf = malloc(NM_BCS_SLICE_BYTES);
	e->ctmp = malloc(NM_BCS_SLICE_BYTES);
	e->sbuf = malloc(NM_BCS_SECT_LOCAL);
	if (bcs_xchg_init(&e->x, NULL, 0, 0, 0, 0))
		return -ENOMEM;
	return e->bounce && e->cbuf && e->ctmp && e->sbuf ? 0 : -ENOMEM;
}

int nm_bcs_attach(struct nm_bcs *e, sp_world_t *w, uint64_t base,
		  uint32_t len, uint32_t self, uint32_t nworld,
		  const st_config_t *cfg)
{
	e->cfg = cfg;
	bcs_xchg_fini(&e->x);
	free(e->pbuf);
	e->self = self;
	if (!(e->pbuf = malloc(len)))
		return -ENOMEM;
	return bcs_xchg_init(&e->x, w, base, len, self, nworld);
}

void bcs_drop_pair(void *ctx, struct bcs_msg *s, struct bcs_recv *r)
{
	(void)ctx;
	if (s)
		free(s->eager);
	free(s);
	free(r);
}

static void xfers_free(struct bcs_xfer *x)
{
	while (x) {
		struct bcs_xfer *n = x->next;

		bcs_drop_pair(NULL, x->s, x->r);
		free(x);
		x = n;
	}
}

static void job_free(struct bcs_job *j)
{
	bcs_match_fini(&j->m, bcs_drop_pair, NULL);
	xfers_free(j->xfers);
	xfers_free(j->out);
	xfers_free(j->in);
	xfers_free(j->pulls);
	while (j->comms) {
		struct bcs_comm *c = j->comms;

		j->comms = c->next;
		bcs_comm_free(c);
	}
	for (uint32_t i = 0; j->late && i < j->nlocal; i++)
		while (j->late[i]) {
			struct bcs_late *l = j->late[i];

			j->late[i] = l->next;
			free(l);
		}
	for (uint32_t k = 0; j->sect && k < 2 * j->nnodes; k++)
		free(j->sect[k].data);
	if (j->seg)
		munmap(j->seg, j->bytes);
	if (j->fd >= 0)
		close(j->fd);
	free(j->sect);
	free(j->nodes);
	free(j->node_of);
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
	if (j->bell_fd >= 0)
		close(j->bell_fd);
	free(j);
}

void bcs_job_free(struct bcs_job *j)
{
	job_free(j);
}

void nm_bcs_fini(struct nm_bcs *e)
{
	while (e->jobs) {
		struct bcs_job *j = e->jobs;

		e->jobs = j->next;
		job_free(j);
	}
	while (e->early) {
		struct bcs_early *x = e->early;

		e->early = x->next;
		free(x);
	}
	bcs_xchg_fini(&e->x);
	free(e->bounce);
	free(e->cbuf);
	free(e->ctmp);
	free(e->sbuf);
	free(e->pbuf);
	e->bounce = e->cbuf = e->ctmp = e->sbuf = e->pbuf = NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The job's nodes from its ranks' (ascending world ids, this one among
 * them), and a spread collective's chunk: half a record for a
 * broadcast's root, half a record over the most crowded node's members
 * for a reduction. */
static int job_nodes(struct nm_bcs *e, struct bcs_job *j,
		     const uint32_t *rank_node, char *err, size_t errlen)
{
	uint32_t *cnt;

	if (!(j->nodes = malloc(j->size * sizeof(*j->nodes))) ||
	    !(j->node_of = malloc(j->size * sizeof(*j->node_of))))
		return -ENOMEM;
	memcpy(j->node_of, rank_node, j->size * sizeof(*j->node_of));
	memcpy(j->nodes, rank_node, j->size * sizeof(*j->nodes));
	qsort(j->nodes, j->size, sizeof(*j->nodes), cmp_u32);
	j->nnodes = 0;
	for (uint32_t r = 0; r < j->size; r++)
		if (!j->nnodes || j->nodes[j->nnodes - 1] != j->nodes[r])
			j->nodes[j->nnodes++] = j->nodes[r];
	j->me = UINT32_MAX;
	for (uint32_t k = 0; k < j->nnodes; k++)
		if (j->nodes[k] == e->self)
			j->me = k;
	if (j->me == UINT32_MAX) {
		snprintf(err, errlen, "job %u has no rank on this node", j->id);
		return -EINVAL;
	}
	if (j->nnodes > 1 && (!e->x.w || j->nodes[j->nnodes - 1] >=
						 e->x.nworld)) {
		snprintf(err, errlen, "job %u spans nodes this node manager "
			 "cannot reach", j->id);
		return -EINVAL;
	}
	if (!(cnt = calloc(j->nnodes, sizeof(*cnt))))
		return -ENOMEM;
	j->maxlocal = 1;
	for (uint32_t r = 0; r < j->size; r++) {
		uint32_t *p = bsearch(&rank_node[r], j->nodes, j->nnodes,
				      sizeof(*j->nodes), cmp_u32);
		uint32_t k = (uint32_t)(p - j->nodes);

		if (++cnt[k] > j->maxlocal)
			j->maxlocal = cnt[k];
	}
	free(cnt);
	/* a round's section holds the chunk beside the descriptors: a
	 * broadcast's root sends one, a reduction's nodes one per member */
	if (j->nnodes > 1) {
		j->bcast_chunk = (e->x.len / 2) & ~(uint64_t)63;
		j->coll_chunk = (e->x.len / 2 / j->maxlocal) & ~(uint64_t)63;
	} else {
		j->bcast_chunk = j->coll_chunk = NM_BCS_SLICE_BYTES;
	}
	if (j->coll_chunk < 64)
		j->coll_chunk = 64;
	if (j->bcast_chunk < 64)
		j->bcast_chunk = 64;
	j->sect = calloc(2 * (size_t)j->nnodes, sizeof(*j->sect));
	return j->sect ? 0 : -ENOMEM;
}

/* Sections that came for the job before it opened (or while it was
 * restored): its incarnation's are taken, an earlier one's dropped, a
 * later one's stay. */
void bcs_early_adopt(struct nm_bcs *e, struct bcs_job *j)
{
	for (struct bcs_early **pp = &e->early; *pp;) {
		struct bcs_early *x = *pp;

		if (x->job != j->id || x->inc > j->inc) {
			pp = &x->next;
			continue;
		}
		*pp = x->next;
		e->nearly--;
		if (x->inc == j->inc)
			bcs_round_section(e, j, x->from, x->round, x->data,
					  x->len);
		free(x);
	}
}

/* A section for a job not open here (yet): kept, the oldest dropped
 * past NM_BCS_EARLY_MAX (a job this node is not in, or one that ended
 * here, never opens). */
void bcs_early_keep(struct nm_bcs *e, uint32_t job, uint32_t inc,
		    uint32_t from, uint64_t round, const uint8_t *data,
		    size_t len)
{
	struct bcs_early *x = malloc(sizeof(*x) + len), **pp;

	if (!x)
		return;
	*x = (struct bcs_early){ .job = job, .inc = inc, .from = from,
				 .round = round, .len = len };
	memcpy(x->data, data, len);
	for (pp = &e->early; *pp; pp = &(*pp)->next)
		;
	*pp = x;
	if (++e->nearly > NM_BCS_EARLY_MAX) {
		x = e->early;
		e->early = x->next;
		e->nearly--;
		qb_log(LOG_WARNING, "BCS-MPI: a section of job %u from node "
		       "%u dropped (no such job here)", x->job, x->from);
		free(x);
	}
}

int bcs_job_alloc(struct bcs_job *j, uint32_t size, uint32_t nlocal)
{
	j->area_of = malloc(size * sizeof(*j->area_of));
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
	return j->area_of && j->world_of && j->pid && j->gone && j->tail &&
			       j->seq && j->pending && j->late && j->woken &&
			       j->incoming && j->rseq && j->polls ?
		       0 :
		       -ENOMEM;
}

int nm_bcs_open(struct nm_bcs *e, uint32_t job, uint32_t inc, int restoring,
		uint32_t size, uint32_t nlocal, const uint32_t *ranks,
		const uint32_t *rank_node, uid_t uid, gid_t gid,
		enum bcs_order order, int *fd, char *err, size_t errlen)
{
	struct bcs_job *j;
	int32_t *all = NULL;
	int rc = -ENOMEM;

	if (!(j = calloc(1, sizeof(*j))))
		goto nomem;
	j->e = e;
	j->fd = -1;
	j->trace_fd = -1;
	j->bell_fd = -1;
	j->id = job;
	j->inc = inc;
	j->restoring = restoring;
	j->size = size;
	j->nlocal = nlocal;
	j->xtail = &j->xfers;
	all = malloc(size * sizeof(*all));
	if (bcs_job_alloc(j, size, nlocal) || !all ||
	    bcs_match_init(&j->m, size, order))
		goto nomem;
	if ((rc = job_nodes(e, j, rank_node, err, errlen))) {
		if (rc == -ENOMEM)
			goto nomem;
		goto out;
	}
	for (uint32_t r = 0; r < size; r++) {
		all[r] = (int32_t)r;
		j->area_of[r] = UINT32_MAX;
	}
	for (uint32_t i = 0; i < nlocal; i++) {
		if (ranks[i] >= size || rank_node[ranks[i]] != e->self) {
			rc = -EINVAL;
			snprintf(err, errlen, "rank %u of a job of %u is not "
				 "this node's", ranks[i], size);
			goto out;
		}
		j->world_of[i] = (int32_t)ranks[i];
		j->area_of[ranks[i]] = i;
	}
	if (bcs_comm_add(j, BCS_CTX_WORLD, size, all))
		goto nomem;
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
		bcs_job_area(j, i)->rank = j->world_of[i];
	/* a job need not wait for the strobe when all its ranks here
	 * wait: they ring (docs/bcsmpi.md §2) */
	if ((j->bell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "BCS-MPI doorbell: eventfd: %s",
			 strerror(errno));
		goto out;
	}
	free(all);
	j->next = e->jobs;
	e->jobs = j;
	*fd = j->fd;
	if (!restoring)
		bcs_early_adopt(e, j);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory for a BCS-MPI job");
out:
	free(all);
	if (j)
		job_free(j);
	return rc;
}

int nm_bcs_segment(struct nm_bcs *e, uint32_t job, void **base,
		   size_t *len)
{
	struct bcs_job *j = bcs_job_find(e, job);

	if (!j || !j->seg)
		return -ENOENT;
	*base = j->seg;
	*len = (size_t)j->bytes;
	return 0;
}

int nm_bcs_bell_fd(struct nm_bcs *e, uint32_t job)
{
	struct bcs_job *j = bcs_job_find(e, job);

	return j ? j->bell_fd : -1;
}

void nm_bcs_started(struct nm_bcs *e, uint32_t job, uint32_t i, pid_t pid)
{
	struct bcs_job *j = bcs_job_find(e, job);

	if (j && i < j->nlocal)
		j->pid[i] = pid;
}

void nm_bcs_exited(struct nm_bcs *e, uint32_t job, uint32_t i, int status)
{
	struct bcs_job *j = bcs_job_find(e, job);

	if (!j || i >= j->nlocal)
		return;
	j->pid[i] = 0; /* to be reaped: its pid is no longer ours */
	if (!j->gone[i])
		bcs_job_fail(j, "rank %d exited without MPI_Finalize (%s %d)",
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
	struct bcs_job *j = bcs_job_find(e, job);

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


/* A node's name for messages (its world id if the configuration has
 * none). */
const char *bcs_node_name(const struct nm_bcs *e, uint32_t node)
{
	static char buf[24];

	for (uint32_t i = 0; e->cfg && i < e->cfg->nnodes; i++)
		if (e->cfg->nodes[i].world_id == node)
			return e->cfg->nodes[i].name;
	snprintf(buf, sizeof(buf), "#%u", node);
	return buf;
}

uint64_t bcs_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A node of the job left the view: its rounds stop, and its ranks here
 * wait, for the manager decides what follows (it sees the node's death
 * too): a restart from the job's last checkpoint, which ends this
 * incarnation here, or the job's end.  Failed here at once, the job
 * would end FAILED before the manager could restart it.  Should the
 * manager say nothing for NM_BCS_LOST_MS, the job fails here. */
void nm_bcs_view(struct nm_bcs *e, const sp_nodeset_t *live)
{
	for (uint32_t n = 0; e->x.w && n < e->x.nworld; n++)
		if (n != e->self && !sp_nodeset_has(live, n))
			bcs_xchg_reset(&e->x, n);
	for (struct bcs_job *j = e->jobs; j; j = j->next)
		for (uint32_t k = 0; k < j->nnodes && !j->lost; k++)
			if (!sp_nodeset_has(live, j->nodes[k])) {
				j->lost = j->nodes[k] + 1;
				j->lost_since_ms = bcs_mono_ms();
				qb_log(LOG_WARNING, "job %u: BCS-MPI: node %s, "
				       "which holds ranks of the job, left the "
				       "view: its rounds wait for the manager",
				       j->id, bcs_node_name(e, j->nodes[k]));
			}
}

void bcs_lost_expire(struct bcs_job *j)
{
	if (!j->lost || j->failed ||
	    bcs_mono_ms() - j->lost_since_ms < NM_BCS_LOST_MS)
		return;
	bcs_job_fail(j, "node %s, which holds ranks of the job, left the "
		     "view (its node manager or its host failed)",
		     bcs_node_name(j->e, j->lost - 1));
}

/* The run left the replayed log: the job stops naming the first match
 * that differs. */
static int cmp_pick(const void *a, const void *b);

void bcs_diverged(struct bcs_job *j)
{
	const struct bcs_recv *r = j->m.diverged;
	struct bcs_pick key = { .dst = r->dst, .rseq = r->seq }, *p;

	p = bsearch(&key, j->picks, j->npicks, sizeof(key), cmp_pick);
	bcs_job_fail(j, "the run diverged from the replayed log at its "
		     "match %llu (round %llu): rank %d's receive %llu "
		     "cannot take rank %d's send %llu",
		     p ? (unsigned long long)p->k : 0ULL,
		     (unsigned long long)j->round, r->dst,
		     (unsigned long long)r->seq, p ? p->src : -1,
		     p ? (unsigned long long)p->sseq : 0ULL);
}

/* ---- the match log ------------------------------------------------------ */

void bcs_trace_match(struct bcs_job *j, const struct bcs_recv *r,
			const struct bcs_msg *s)
{
	char line[256];
	int n;

	if (j->trace_fd < 0 || r->probe)
		return;
	n = snprintf(line, sizeof(line), "match %llu slice %llu: rank %d recv "
		     "%llu <- rank %d send %llu tag %d bytes %llu\n",
		     (unsigned long long)j->m.matched,
		     (unsigned long long)j->round, r->dst,
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

void bcs_trace_flush(struct bcs_job *j)
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
	struct bcs_job *j = bcs_job_find(e, job);

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
	struct bcs_job *j = bcs_job_find(e, job);
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

