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
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

struct bcs_rt bcs_rt;
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
	rt_done = done;
	return 0;
}

void bcs_rt_fini(void)
{
	if (bcs_rt.seg)
		munmap(bcs_rt.seg, bcs_rt.bytes);
	memset(&bcs_rt, 0, sizeof(bcs_rt));
}

const char *bcs_rt_failed(void)
{
	if (!bcs_rt.seg ||
	    !__atomic_load_n(&bcs_rt.seg->failed, __ATOMIC_ACQUIRE))
		return NULL;
	return bcs_rt.seg->reason[0] ? bcs_rt.seg->reason : "job failed";
}

uint32_t bcs_rt_poll(void)
{
	struct bcs_area *a = bcs_rt.area;
	uint64_t head = __atomic_load_n(&a->done_head, __ATOMIC_ACQUIRE);
	uint32_t n = 0;

	while (bcs_rt.done_tail < head) {
		struct bcs_done d = a->done[bcs_rt.done_tail % BCS_RING_SLOTS];

		bcs_rt.done_tail++;
		__atomic_store_n(&a->done_tail, bcs_rt.done_tail,
				 __ATOMIC_RELEASE);
		rt_done(&d);
		n++;
	}
	return n;
}

static void sleep_on(uint32_t seen)
{
	struct timespec ts = { 0, WAIT_NS };

	syscall(SYS_futex, &bcs_rt.area->wake, FUTEX_WAIT, seen, &ts, NULL,
		0);
}

int bcs_rt_post(struct bcs_desc *d, const void *eager)
{
	struct bcs_area *a = bcs_rt.area;
	uint64_t k;

	/* room in the ring: the engine takes descriptors every slice */
	while (bcs_rt.head - __atomic_load_n(&a->post_tail, __ATOMIC_ACQUIRE)
	       >= BCS_RING_SLOTS) {
		uint32_t seen = __atomic_load_n(&a->wake, __ATOMIC_ACQUIRE);

		if (bcs_rt_failed())
			return -EPIPE;
		bcs_rt_poll();
		if (bcs_rt.head - __atomic_load_n(&a->post_tail,
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
		memcpy(bcs_eager_of(bcs_rt.seg, bcs_rt.area_index, (uint32_t)k),
		       eager, d->bytes);
	a->post[k] = *d;
	bcs_rt.head++;
	__atomic_store_n(&a->post_head, bcs_rt.head, __ATOMIC_RELEASE);
	__atomic_store_n(&a->clock, bcs_rt.clock, __ATOMIC_RELEASE);
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
}

void bcs_rt_clock_recv(uint64_t c)
{
	bcs_rt.clock = (c > bcs_rt.clock ? c : bcs_rt.clock) + 1;
	__atomic_store_n(&bcs_rt.area->clock, bcs_rt.clock, __ATOMIC_RELEASE);
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
		    bcs_rt.done_tail)
			sleep_on(seen);
		__atomic_store_n(&a->blocked, 0, __ATOMIC_SEQ_CST);
	}
}
