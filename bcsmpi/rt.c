/*
 * rt.c — a rank's side of the BCS engine (rt.h).  Key invariants: a
 * descriptor is complete in its slot before post_head covers it
 * (release), and the clock a send carries is published after the send
 * (the engine reads clocks before descriptors: bcs.c); blocked is set
 * only with every completion taken and nothing left to post, so the
 * engine may count on this rank posting nothing until it completes
 * something.
 */
#include <errno.h>
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
#include <time.h>
#include <unistd.h>

#include "rt.h"

struct bcs_rt bcs_rt;

/* Local rank i's area by the layout checked at init: the header's copy
 * is writable by every rank of the job. */
static struct bcs_area *area_at(uint32_t i)
{
	return (struct bcs_area *)((char *)bcs_rt.seg + bcs_rt.area_off +
				   (uint64_t)i * bcs_rt.area_stride);
}

/* BCS_D_PULLED descriptors owed the engine (posted as room allows). */
static struct bcs_desc *pulled;
static size_t npulled, pulled_cap;
static int no_pull; /* STORM_BCS_NO_PULL=1: leave every copy to the
		     * engine (a comparison, and its fallback's test) */
static bcs_rt_done_fn rt_done;

#define WAIT_NS 100000000L /* a sleep re-checks the job at least this often */

static int env_num(const char *name, long *v)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || *end || *v < 0 ? -EINVAL : 0;
}

int bcs_rt_init(bcs_rt_done_fn done, char *err, size_t errlen)
{
	long fd, area, rank, size;
	struct stat st;
	struct bcs_seg *seg;

	if (env_num("STORM_BCS_FD", &fd) || env_num("STORM_BCS_AREA", &area) ||
	    env_num("STORM_RANK", &rank) || env_num("STORM_SIZE", &size)) {
		snprintf(err, errlen, "no BCS-MPI segment: run the program "
			 "with `stormctl run --mpi=bcs` (STORM_BCS_FD, "
			 "STORM_BCS_AREA, STORM_RANK and STORM_SIZE are "
			 "missing or malformed)");
		return -ENOENT;
	}
	if (fstat((int)fd, &st) < 0 || (uint64_t)st.st_size < 4096) {
		snprintf(err, errlen, "BCS-MPI segment on descriptor %ld: %s",
			 fd, strerror(errno ? errno : EINVAL));
		return -EINVAL;
	}
	seg = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, (int)fd, 0);
	if (seg == MAP_FAILED) {
		snprintf(err, errlen, "BCS-MPI segment: mmap: %s",
			 strerror(errno));
		return -errno;
	}
	if (seg->magic != BCS_SEG_MAGIC || seg->version != BCS_SEG_VERSION ||
	    seg->bytes != (uint64_t)st.st_size ||
	    seg->ring_slots != BCS_RING_SLOTS ||
	    seg->eager_max != BCS_EAGER_MAX || (uint64_t)area >= seg->nlocal ||
	    seg->size != (uint64_t)size || (uint64_t)rank >= seg->size ||
	    seg->area_off + (uint64_t)seg->nlocal * seg->area_stride >
	    seg->bytes) {
		munmap(seg, (size_t)st.st_size);
		snprintf(err, errlen, "BCS-MPI segment: not one this library "
			 "reads (version %u; rebuild the program with this "
			 "Storm's bcsmpicc)", BCS_SEG_VERSION);
		return -EPROTO;
	}
	/* the segment is in memory now: the descriptor is not needed */
	close((int)fd);
	memset(&bcs_rt, 0, sizeof(bcs_rt));
	bcs_rt.seg = seg;
	bcs_rt.bytes = (uint64_t)st.st_size;
	bcs_rt.area_index = (uint32_t)area;
	bcs_rt.area = bcs_area_of(seg, (uint32_t)area);
	bcs_rt.rank = (int)rank;
	bcs_rt.size = (int)size;
	bcs_rt.head = bcs_rt.area->post_head;
	bcs_rt.done_tail = bcs_rt.area->done_tail;
	bcs_rt.clock = bcs_rt.area->clock;
	bcs_rt.nlocal = seg->nlocal;
	bcs_rt.area_off = seg->area_off;
	bcs_rt.area_stride = seg->area_stride;
	/* the doorbell: only a job on one node has one; kept from the
	 * programs this rank may start */
	bcs_rt.bell = -1;
	if (env_num("STORM_BCS_BELL", &fd) == 0 &&
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
		bcs_rt.bell = (int)fd;
	rt_done = done;
	no_pull = getenv("STORM_BCS_NO_PULL") &&
		  !strcmp(getenv("STORM_BCS_NO_PULL"), "1");
	return 0;
}

void bcs_rt_fini(void)
{
	if (bcs_rt.seg)
		munmap(bcs_rt.seg, bcs_rt.bytes);
	if (bcs_rt.seg && bcs_rt.bell >= 0)
		close(bcs_rt.bell);
	memset(&bcs_rt, 0, sizeof(bcs_rt));
	free(pulled);
	pulled = NULL;
	npulled = pulled_cap = 0;
}

const char *bcs_rt_failed(void)
{
	if (!bcs_rt.seg ||
	    !__atomic_load_n(&bcs_rt.seg->failed, __ATOMIC_ACQUIRE))
		return NULL;
	return bcs_rt.seg->reason[0] ? bcs_rt.seg->reason : "job failed";
}

/* Post what fits of the PULLED descriptors owed, without waiting. */
static void flush_pulled(void)
{
	struct bcs_area *a = bcs_rt.area;
	size_t k = 0;

	while (k < npulled &&
	       bcs_rt.head - __atomic_load_n(&a->post_tail, __ATOMIC_ACQUIRE) <
		       BCS_RING_SLOTS) {
		pulled[k].clock = bcs_rt.clock;
		a->post[bcs_rt.head % BCS_RING_SLOTS] = pulled[k++];
		bcs_rt.head++;
		__atomic_store_n(&a->post_head, bcs_rt.head, __ATOMIC_RELEASE);
	}
	memmove(pulled, pulled + k, (npulled - k) * sizeof(*pulled));
	npulled -= k;
}

/* A large message from a rank of this node: read it straight from the
 * sender (one copy, with this rank's own rights), then tell the engine.
 * 1 if the receive is complete here, 0 if the engine copies it. */
static int pull(struct bcs_done *d)
{
	struct iovec l = { .iov_base = (void *)(uintptr_t)d->dst_addr,
			   .iov_len = d->len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)d->src_addr,
			   .iov_len = d->len };
	struct bcs_desc p = { .kind = BCS_D_PULLED, .req = d->req,
			      .addr = d->pull };
	int ok = !no_pull &&
		 process_vm_readv(d->src_pid, &l, 1, &r, 1, 0) ==
			 (ssize_t)d->len;

	if (!ok)
		p.flags = BCS_F_PULL_FAILED;
	else if (d->notice < BCS_RING_SLOTS &&
		 d->src_area < bcs_rt.nlocal) {
		/* the sender may reuse its buffer now: tell it */
		struct bcs_area *s = area_at(d->src_area);

		__atomic_store_n(&s->notice[d->notice], d->src_req,
				 __ATOMIC_RELEASE);
		__atomic_add_fetch(&s->notices, 1, __ATOMIC_RELEASE);
		__atomic_add_fetch(&s->wake, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &s->wake, FUTEX_WAKE, INT_MAX, NULL, NULL,
			0);
	}
	if (npulled == pulled_cap) {
		size_t cap = pulled_cap ? 2 * pulled_cap : 64;
		struct bcs_desc *np = realloc(pulled, cap * sizeof(*np));

		if (!np) { /* no memory: the engine never learns of this
			    * pull; the job fails rather than hangs */
			abort();
		}
		pulled = np;
		pulled_cap = cap;
	}
	pulled[npulled++] = p;
	if (!ok)
		return 0;
	d->status = d->bytes > d->len ? BCS_E_TRUNCATE : BCS_OK;
	d->bytes = d->len;
	return 1;
}

/* Sends of ours whose bytes a receiver pulled: complete (the engine's
 * completion of each comes later, a repeat the request layer drops). */
static uint32_t take_notices(void)
{
	struct bcs_area *a = bcs_rt.area;
	uint64_t seen = __atomic_load_n(&a->notices, __ATOMIC_ACQUIRE);
	uint32_t n = 0;

	if (seen == bcs_rt.notices)
		return 0;
	bcs_rt.notices = seen;
	for (uint32_t k = 0; k < BCS_RING_SLOTS; k++) {
		uint64_t req = __atomic_exchange_n(&a->notice[k], 0,
						   __ATOMIC_ACQ_REL);
		struct bcs_done d = { .req = req };

		if (req) {
			rt_done(&d);
			n++;
		}
	}
	return n;
}

uint32_t bcs_rt_poll(void)
{
	struct bcs_area *a = bcs_rt.area;
	uint64_t head = __atomic_load_n(&a->done_head, __ATOMIC_ACQUIRE);
	uint32_t n = take_notices();

	while (bcs_rt.done_tail < head) {
		struct bcs_done d = a->done[bcs_rt.done_tail % BCS_RING_SLOTS];

		bcs_rt.done_tail++;
		__atomic_store_n(&a->done_tail, bcs_rt.done_tail,
				 __ATOMIC_RELEASE);
		if (d.status == BCS_PULL && !pull(&d))
			continue;
		rt_done(&d);
		n++;
	}
	if (npulled)
		flush_pulled();
	return n;
}

static void sleep_on(uint32_t seen)
{
	struct timespec ts = { 0, WAIT_NS };

	syscall(SYS_futex, &bcs_rt.area->wake, FUTEX_WAIT, seen, &ts, NULL,
		0);
}

/* The engine naps (storm_bcs.h, nap): what this rank just did (post,
 * poll, wait) is news it would otherwise see only at its next full
 * slice, so the doorbell rings, once per nap.  Our store is fenced
 * before the load, as the engine's is: one of the two sees the other. */
static void nudge(void)
{
	static const uint64_t one = 1;
	uint32_t v;

	if (bcs_rt.bell < 0)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	v = __atomic_load_n(&bcs_rt.area->nap, __ATOMIC_RELAXED);
	if (!v || v == bcs_rt.nudged)
		return;
	bcs_rt.nudged = v;
	if (write(bcs_rt.bell, &one, sizeof(one)) < 0)
		(void)0; /* the strobe's periodic full slice comes anyway */
}

int bcs_rt_post(struct bcs_desc *d, const void *eager)
{
	struct bcs_area *a = bcs_rt.area;
	uint64_t k;

	/* room in the ring (the engine takes descriptors every slice),
	 * after the PULLED owed: they go first, and before a FINALIZE */
	if (npulled)
		flush_pulled();
	while (npulled ||
	       bcs_rt.head - __atomic_load_n(&a->post_tail, __ATOMIC_ACQUIRE)
	       >= BCS_RING_SLOTS) {
		uint32_t seen = __atomic_load_n(&a->wake, __ATOMIC_ACQUIRE);

		if (bcs_rt_failed())
			return -EPIPE;
		bcs_rt_poll();
		if (npulled ||
		    bcs_rt.head - __atomic_load_n(&a->post_tail,
						  __ATOMIC_ACQUIRE) >=
		    BCS_RING_SLOTS)
			sleep_on(seen);
	}
	if (bcs_rt_failed())
		return -EPIPE;
	if (d->kind == BCS_D_SEND || d->kind == BCS_D_COLL)
		d->clock = ++bcs_rt.clock;
	else
		d->clock = bcs_rt.clock;
	k = bcs_rt.head % BCS_RING_SLOTS;
	if (eager && d->bytes)
		memcpy((uint8_t *)bcs_rt.area + sizeof(struct bcs_area) +
		       k * BCS_EAGER_MAX,
		       eager, d->bytes);
	a->post[k] = *d;
	bcs_rt.head++;
	__atomic_store_n(&a->post_head, bcs_rt.head, __ATOMIC_RELEASE);
	__atomic_store_n(&a->clock, bcs_rt.clock, __ATOMIC_RELEASE);
	nudge();
	return 0;
}

int bcs_rt_taken(void *ctx)
{
	(void)ctx;
	return __atomic_load_n(&bcs_rt.area->post_tail, __ATOMIC_ACQUIRE) >=
	       bcs_rt.head;
}

void bcs_rt_polled(void)
{
	__atomic_add_fetch(&bcs_rt.area->polls, 1, __ATOMIC_RELAXED);
	nudge();
}

void bcs_rt_clock_recv(uint64_t c)
{
	bcs_rt.clock = (c > bcs_rt.clock ? c : bcs_rt.clock) + 1;
	__atomic_store_n(&bcs_rt.area->clock, bcs_rt.clock, __ATOMIC_RELEASE);
}

/* About to sleep with blocked set: if every rank here is blocked too,
 * nothing more can be posted until the engine acts, so it may run the
 * round now instead of at the next slice.  blocked is stored before the
 * others' are loaded (both sequentially consistent): of two ranks
 * blocking at once, at least the later one sees the other and rings. */
static void ring_if_all_wait(void)
{
	static const uint64_t one = 1;

	if (bcs_rt.bell < 0)
		return;
	for (uint32_t i = 0; i < bcs_rt.nlocal; i++)
		if (!__atomic_load_n(&area_at(i)->blocked, __ATOMIC_SEQ_CST))
			return;
	if (write(bcs_rt.bell, &one, sizeof(one)) < 0)
		(void)0; /* the strobe's round comes anyway */
}

int bcs_rt_wait(int (*ready)(void *ctx), void *ctx)
{
	struct bcs_area *a = bcs_rt.area;

	for (;;) {
		uint32_t seen = __atomic_load_n(&a->wake, __ATOMIC_ACQUIRE);

		bcs_rt_poll();
		if (ready(ctx))
			return 0;
		if (bcs_rt_failed())
			return -EPIPE;
		/* nothing to post until a completion: the engine may count
		 * on it (bcs_match.h); then look once more before sleeping */
		__atomic_store_n(&a->blocked, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&a->done_head, __ATOMIC_SEQ_CST) ==
			    bcs_rt.done_tail &&
		    __atomic_load_n(&a->notices, __ATOMIC_SEQ_CST) ==
			    bcs_rt.notices) {
			nudge();
			ring_if_all_wait();
			sleep_on(seen);
		}
		__atomic_store_n(&a->blocked, 0, __ATOMIC_SEQ_CST);
	}
}
