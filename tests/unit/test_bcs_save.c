/*
 * test_bcs_save.c — a BCS-MPI job's engine state saved and restored
 * (node/bcs_save.c) on a real engine, in-process, without a cluster:
 * a one-node job of four ranks whose "ranks" are this test, posting
 * descriptors into their areas as bcsmpi/rt.c does, their memory this
 * process's (the engine reaches it by our own pid).  The job is stopped
 * mid-way — a 20 MiB message half moved, an eager send and receives
 * unmatched, a broadcast half posted, a communicator made, completions
 * waiting for room — saved, and run on; then a second engine opens the
 * job alike, gets the segment's and the memory's bytes as they were,
 * restores the image, and runs on the same way: the completions, the
 * bytes received and the engine's final state must be the same.
 *
 * Set STORM_BCS_SAVE_SEEDS=DIR to write real images as fuzz seeds
 * (tests/fuzz/corpus/bcssave/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <storm_bcs.h>

#include "bcs.h"
#include "bcs_int.h"

#define JOB 7u
#define SIZE 4u
#define BIG (20u << 20)  /* two and a half slices' bytes */
#define MID 10000u
#define BC 5000u
#define RED 250u         /* ints of the allreduce */
#define LOG_MAX 1024u

/* ---- the ranks' memory (this process's) ---------------------------------- */

struct mem {
	uint8_t *big_src, *big_dst;
	uint8_t mid_src[MID], mid_dst[MID];
	uint8_t small1[128];
	uint8_t bc[SIZE][BC];
	uint8_t r3a[8192], r3b[8192];
	uint8_t s1[6000];
	int32_t red_in[SIZE][RED], red_out[SIZE][RED];
	uint64_t reqs;  /* the ranks' request numbers so far */
};

static struct mem M;

static void mem_init(void)
{
	if (!M.big_src) {
		M.big_src = malloc(BIG);
		M.big_dst = malloc(BIG);
		assert_non_null(M.big_src);
		assert_non_null(M.big_dst);
	}
	for (uint32_t k = 0; k < BIG; k++)
		M.big_src[k] = (uint8_t)(k * 31 + (k >> 13));
	memset(M.big_dst, 0, BIG);
	M.reqs = 0;
	for (uint32_t k = 0; k < MID; k++)
		M.mid_src[k] = (uint8_t)(k * 7);
	memset(M.mid_dst, 0, MID);
	memset(M.small1, 0, sizeof(M.small1));
	memset(M.bc, 0, sizeof(M.bc));
	for (uint32_t k = 0; k < BC; k++)
		M.bc[0][k] = (uint8_t)(k ^ 0x5a);
	memset(M.r3a, 0, sizeof(M.r3a));
	memset(M.r3b, 0, sizeof(M.r3b));
	for (uint32_t k = 0; k < sizeof(M.s1); k++)
		M.s1[k] = (uint8_t)(k * 13 + 1);
	for (uint32_t i = 0; i < SIZE; i++)
		for (uint32_t k = 0; k < RED; k++) {
			M.red_in[i][k] = (int32_t)(i * 1000 + k);
			M.red_out[i][k] = 0;
		}
}

/* The memory's bytes (what the checkpoint work saves of the ranks). */
struct mem_copy {
	uint8_t *big_dst;
	struct mem m;
};

static void mem_save(struct mem_copy *c)
{
	c->m = M;
	c->big_dst = malloc(BIG);
	assert_non_null(c->big_dst);
	memcpy(c->big_dst, M.big_dst, BIG);
}

static void mem_restore(const struct mem_copy *c)
{
	uint8_t *src = M.big_src, *dst = M.big_dst;

	M = c->m;
	M.big_src = src;
	M.big_dst = dst;
	memcpy(M.big_dst, c->big_dst, BIG);
}

/* ---- an engine and the job's segment ------------------------------------- */

struct eng {
	struct nm_bcs e;
	struct bcs_seg *seg;
	size_t bytes;
	uint32_t job, size;
	int open;
};

struct log {
	uint32_t n[SIZE];
	struct bcs_done d[SIZE][LOG_MAX];
};

static void eng_init(struct eng *g)
{
	memset(g, 0, sizeof(*g));
	assert_int_equal(nm_bcs_init(&g->e), 0);
}

static int job_open(struct eng *g, uint32_t job, uint32_t size)
{
	uint32_t ranks[SIZE], nodes[SIZE];
	char err[256] = "";
	int fd, rc;

	for (uint32_t r = 0; r < size; r++) {
		ranks[r] = r;
		nodes[r] = 0; /* the engine's self with no world attached */
	}
	rc = nm_bcs_open(&g->e, job, 0, 0, size, size, ranks, nodes, getuid(),
			 getgid(), BCS_ORDER_DETERMINISTIC, &fd, err,
			 sizeof(err));
	if (rc)
		fail_msg("nm_bcs_open: %s", err);
	g->bytes = (size_t)bcs_seg_bytes(size);
	g->seg = mmap(NULL, g->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      0);
	assert_true(g->seg != MAP_FAILED);
	g->job = job;
	g->size = size;
	g->open = 1;
	for (uint32_t i = 0; i < size; i++)
		nm_bcs_started(&g->e, job, i, getpid());
	return 0;
}

static void job_close(struct eng *g)
{
	if (!g->open)
		return;
	munmap(g->seg, g->bytes);
	nm_bcs_close(&g->e, g->job);
	g->open = 0;
}

static void eng_fini(struct eng *g)
{
	job_close(g);
	nm_bcs_fini(&g->e);
}

/* ---- a rank's side (bcsmpi/rt.c) ---------------------------------------- */

enum { K_SEND = 1, K_RECV, K_PROBE, K_COLL, K_OTHER };

static void post(struct eng *g, uint32_t i, struct bcs_desc d,
		 const void *eager, int what)
{
	struct bcs_area *a = bcs_area_of(g->seg, i);
	uint64_t head = a->post_head;

	assert_true(head - a->post_tail < BCS_RING_SLOTS);
	d.req = (uint64_t)what << 32 | ++M.reqs;
	if (d.kind == BCS_D_SEND || d.kind == BCS_D_COLL)
		d.clock = ++a->clock;
	else
		d.clock = a->clock;
	if (eager && d.bytes)
		memcpy(bcs_eager_of(g->seg, i,
				    (uint32_t)(head % BCS_RING_SLOTS)),
		       eager, d.bytes);
	a->post[head % BCS_RING_SLOTS] = d;
	__atomic_store_n(&a->post_head, head + 1, __ATOMIC_RELEASE);
}

static void rk_send(struct eng *g, uint32_t i, int32_t to, int32_t tag,
		 const void *buf, uint64_t bytes, uint32_t flags)
{
	struct bcs_desc d = { .kind = BCS_D_SEND, .ctx = BCS_CTX_WORLD,
			      .peer = to, .tag = tag,
			      .addr = (uint64_t)(uintptr_t)buf, .bytes = bytes,
			      .flags = flags };

	if (bytes <= BCS_EAGER_MAX)
		d.flags |= BCS_F_EAGER;
	post(g, i, d, (d.flags & BCS_F_EAGER) ? buf : NULL, K_SEND);
}

static void rk_recv(struct eng *g, uint32_t i, int32_t from, int32_t tag,
		 void *buf, uint64_t cap, int probe)
{
	struct bcs_desc d = { .kind = probe ? BCS_D_PROBE : BCS_D_RECV,
			      .ctx = BCS_CTX_WORLD, .peer = from, .tag = tag,
			      .addr = (uint64_t)(uintptr_t)buf, .bytes = cap };

	post(g, i, d, NULL, probe ? K_PROBE : K_RECV);
}

static void coll(struct eng *g, uint32_t i, uint64_t ctx, uint32_t kind,
		 int32_t root, const void *buf, void *out, uint64_t bytes)
{
	struct bcs_desc d = { .kind = BCS_D_COLL, .ctx = ctx, .coll = kind,
			      .peer = root,
			      .addr = (uint64_t)(uintptr_t)buf,
			      .addr2 = (uint64_t)(uintptr_t)out,
			      .bytes = bytes };

	if (kind == BCS_C_ALLREDUCE) {
		d.type = BCS_T_INT;
		d.op = BCS_OP_SUM;
	}
	post(g, i, d, NULL, K_COLL);
}

static void comm(struct eng *g, uint32_t i, uint64_t ctx,
		 const int32_t *group, uint32_t n)
{
	struct bcs_desc d = { .kind = BCS_D_COMM, .ctx = ctx,
			      .flags = BCS_F_EAGER, .bytes = 4 * n };

	post(g, i, d, group, K_OTHER);
}

static void finalize(struct eng *g, uint32_t i)
{
	struct bcs_desc d = { .kind = BCS_D_FINALIZE };

	post(g, i, d, NULL, K_OTHER);
}

/* Whether a rank asked to pull a large message (BCS_PULL) does so, or
 * answers that it cannot, so that the engine copies it (its fallback;
 * what the checkpoint's state is built on). */
static int pull_for_real;

/* Rank i takes its completions (a receive's advances its clock). */
static void consume(struct eng *g, uint32_t i, struct log *l)
{
	struct bcs_area *a = bcs_area_of(g->seg, i);
	uint64_t head = __atomic_load_n(&a->done_head, __ATOMIC_ACQUIRE);

	while (a->done_tail < head) {
		struct bcs_done d = a->done[a->done_tail % BCS_RING_SLOTS];

		if (d.status == BCS_PULL) {
			struct bcs_desc p = { .kind = BCS_D_PULLED,
					      .req = d.req, .addr = d.pull };

			__atomic_store_n(&a->done_tail, a->done_tail + 1,
					 __ATOMIC_RELEASE);
			assert_int_equal(d.src_pid, getpid());
			if (!pull_for_real) {
				p.flags = BCS_F_PULL_FAILED;
				post(g, i, p, NULL, K_OTHER);
				continue;
			}
			memcpy((void *)(uintptr_t)d.dst_addr,
			       (const void *)(uintptr_t)d.src_addr, d.len);
			post(g, i, p, NULL, K_OTHER);
			d.status = d.bytes > d.len ? BCS_E_TRUNCATE : BCS_OK;
			d.bytes = d.len;
			head = __atomic_load_n(&a->done_head, __ATOMIC_ACQUIRE);
			if (l) {
				assert_true(l->n[i] < LOG_MAX);
				l->d[i][l->n[i]++] = d;
			}
			if (d.req >> 32 == K_RECV)
				a->clock = (d.clock > a->clock ? d.clock :
					    a->clock) + 1;
			continue;
		}

		if (l) {
			assert_true(l->n[i] < LOG_MAX);
			l->d[i][l->n[i]++] = d;
		}
		if (d.req >> 32 == K_RECV)
			a->clock = (d.clock > a->clock ? d.clock :
				    a->clock) + 1;
		__atomic_store_n(&a->done_tail, a->done_tail + 1,
				 __ATOMIC_RELEASE);
	}
}

/* ---- the program -------------------------------------------------------- */

static uint8_t eager5[100];
static const char fifty[50] = "fifty bytes, an eager send from rank two";

/* Up to the checkpoint: two slices. */
static void phase1(struct eng *g)
{
	static const int32_t group[2] = { 3, 1 };

	for (uint32_t k = 0; k < sizeof(eager5); k++)
		eager5[k] = (uint8_t)('a' + k % 26);
	rk_send(g, 0, 1, 5, eager5, sizeof(eager5), 0);
	rk_send(g, 0, 2, 7, M.big_src, BIG, 0);
	rk_send(g, 0, 3, 9, M.mid_src, MID, BCS_F_SYNC);
	rk_recv(g, 2, 0, 7, M.big_dst, BIG, 0);
	rk_recv(g, 3, BCS_ANY, 11, M.r3a, sizeof(M.r3a), 0);
	rk_recv(g, 3, BCS_ANY, 11, M.r3b, sizeof(M.r3b), 0);
	coll(g, 0, BCS_CTX_WORLD, BCS_C_BCAST, 0, M.bc[0], NULL, BC);
	coll(g, 1, BCS_CTX_WORLD, BCS_C_BCAST, 0, M.bc[1], NULL, BC);
	comm(g, 1, 10, group, 2);
	comm(g, 3, 10, group, 2);
	for (int k = 0; k < 200; k++)
		rk_recv(g, 1, 0, 5, NULL, 0, 1);
	nm_bcs_slice(&g->e, 1);
	for (uint32_t i = 0; i < SIZE; i++)
		if (i != 1) /* rank 1 takes none: its ring fills */
			consume(g, i, NULL);
	for (int k = 0; k < 100; k++)
		rk_recv(g, 1, 0, 5, NULL, 0, 1);
	nm_bcs_slice(&g->e, 2);
	for (uint32_t i = 0; i < SIZE; i++)
		if (i != 1)
			consume(g, i, NULL);
}

/* From the checkpoint on: to the end. */
static void phase2(struct eng *g, struct log *l)
{
	nm_bcs_stopped(&g->e, g->job, 0);
	rk_recv(g, 1, 0, 5, M.small1, sizeof(M.small1), 0);
	coll(g, 2, BCS_CTX_WORLD, BCS_C_BCAST, 0, M.bc[2], NULL, BC);
	coll(g, 3, BCS_CTX_WORLD, BCS_C_BCAST, 0, M.bc[3], NULL, BC);
	rk_send(g, 1, 3, 11, M.s1, sizeof(M.s1), 0);
	rk_send(g, 2, 3, 11, fifty, sizeof(fifty), 0);
	rk_recv(g, 3, 0, 9, M.mid_dst, MID, 0);
	/* communicator 10 is {3, 1}: its rank 0 is world rank 3 */
	coll(g, 1, 10, BCS_C_ALLREDUCE, 0, M.red_in[1], M.red_out[1],
	     RED * 4);
	coll(g, 3, 10, BCS_C_ALLREDUCE, 0, M.red_in[3], M.red_out[3],
	     RED * 4);
	for (uint64_t s = 3; s < 20; s++) {
		nm_bcs_slice(&g->e, s);
		for (uint32_t i = 0; i < SIZE; i++)
			consume(g, i, l);
		if (s == 4)
			for (uint32_t i = 0; i < SIZE; i++)
				finalize(g, i);
	}
}

static void save(struct eng *g, uint8_t **buf, size_t *len)
{
	char err[256] = "";
	int rc = nm_bcs_save(&g->e, g->job, buf, len, err, sizeof(err));

	if (rc)
		fail_msg("nm_bcs_save: %s", err);
}

static void put_seed(const char *name, const uint8_t *buf, size_t len)
{
	const char *dir = getenv("STORM_BCS_SAVE_SEEDS");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "wb"));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* A job run to its checkpoint: the image, the segment's and the
 * memory's bytes then. */
struct ckpt {
	struct eng g;
	uint8_t *img;
	size_t len;
	uint8_t *seg;
	struct mem_copy mem;
};

/* What the engine holds at the checkpoint: every kind of state the
 * image carries is there, so the test is not one of an empty job. */
static void held_at_checkpoint(struct eng *g)
{
	struct bcs_job *j = bcs_job_find(&g->e, JOB);
	struct bcs_comm *w, *c10;

	assert_non_null(j);
	assert_int_equal(j->round, 2);
	/* the 20 MiB message: its receiver could not pull it (slice 1),
	 * so the engine moves it, a slice's bytes so far (slice 2) */
	assert_non_null(j->xfers);
	assert_int_equal(j->xfers->len, BIG);
	assert_int_equal(j->xfers->done, NM_BCS_SLICE_BYTES);
	/* unmatched: the eager send (its bytes here), the sync send, the
	 * two ANY_SOURCE receives */
	assert_non_null(j->m.sends[1]);
	assert_non_null(j->m.sends[1]->eager);
	assert_non_null(j->m.sends[3]);
	assert_null(j->m.sends[3]->eager);
	assert_non_null(j->m.recvs[3]);
	assert_non_null(j->m.recvs[3]->next);
	assert_int_equal(j->nheld, 4);
	assert_int_equal(j->held, sizeof(eager5));
	/* rank 1's probe completions beyond its ring */
	assert_non_null(j->late[1]);
	/* the broadcast posted by two of four; communicator 10 */
	w = bcs_comm_find(j, BCS_CTX_WORLD);
	c10 = bcs_comm_find(j, 10);
	assert_non_null(w);
	assert_non_null(c10);
	assert_non_null(w->q[0]);
	assert_non_null(w->q[1]);
	assert_null(w->q[2]);
	assert_int_equal(c10->n, 2);
}

static void checkpoint(struct ckpt *c)
{
	eng_init(&c->g);
	mem_init();
	job_open(&c->g, JOB, SIZE);
	phase1(&c->g);
	nm_bcs_stopped(&c->g.e, JOB, 1);
	held_at_checkpoint(&c->g);
	save(&c->g, &c->img, &c->len);
	c->seg = malloc(c->g.bytes);
	assert_non_null(c->seg);
	memcpy(c->seg, c->g.seg, c->g.bytes);
	mem_save(&c->mem);
}

static void ckpt_free(struct ckpt *c)
{
	eng_fini(&c->g);
	free(c->img);
	free(c->seg);
	free(c->mem.big_dst);
}

/* ---- tests --------------------------------------------------------------- */

static void test_restored_job_runs_on_as_the_saved_one(void **state)
{
	struct ckpt c;
	struct eng g2;
	struct log *l1 = calloc(1, sizeof(*l1)), *l2 = calloc(1, sizeof(*l2));
	struct mem_copy out1;
	uint8_t *fin1, *fin2;
	size_t flen1, flen2;
	char err[256] = "";

	(void)state;
	assert_non_null(l1);
	assert_non_null(l2);
	checkpoint(&c);
	put_seed("seed-stopped", c.img, c.len);
	/* the reference: the saved job runs on */
	phase2(&c.g, l1);
	nm_bcs_stopped(&c.g.e, JOB, 1);
	save(&c.g, &fin1, &flen1);
	put_seed("seed-finished", fin1, flen1);
	mem_save(&out1);
	/* what it did: the message, the sync send, the broadcast, the
	 * ANY_SOURCE receives, the allreduce, the eager one */
	assert_memory_equal(M.big_dst, M.big_src, BIG);
	assert_memory_equal(M.mid_dst, M.mid_src, MID);
	for (uint32_t i = 1; i < SIZE; i++)
		assert_memory_equal(M.bc[i], M.bc[0], BC);
	assert_memory_equal(M.small1, eager5, sizeof(eager5));
	assert_memory_equal(M.r3a, M.s1, sizeof(M.s1));
	assert_memory_equal(M.r3b, "fifty bytes", 11);
	assert_int_equal(M.red_out[1][5], 1000 + 5 + 3000 + 5);
	assert_memory_equal(M.red_out[1], M.red_out[3], RED * 4);
	/* rank 1's 300 probes, its receive; 44 of them waited in the
	 * engine for room */
	assert_true(l1->n[1] >= 301);

	/* the restore: another engine, the job opened alike, its segment
	 * and memory as they were at the checkpoint */
	mem_restore(&c.mem);
	eng_init(&g2);
	job_open(&g2, JOB, SIZE);
	memcpy(g2.seg, c.seg, g2.bytes);
	if (nm_bcs_restore(&g2.e, JOB, c.img, c.len, err, sizeof(err)))
		fail_msg("nm_bcs_restore: %s", err);
	phase2(&g2, l2);
	nm_bcs_stopped(&g2.e, JOB, 1);
	save(&g2, &fin2, &flen2);

	for (uint32_t i = 0; i < SIZE; i++) {
		assert_int_equal(l2->n[i], l1->n[i]);
		assert_memory_equal(l2->d[i], l1->d[i],
				    l1->n[i] * sizeof(struct bcs_done));
	}
	assert_memory_equal(M.big_dst, out1.big_dst, BIG);
	assert_memory_equal(&M.mid_dst, &out1.m.mid_dst,
			    offsetof(struct mem, red_out) + sizeof(M.red_out) -
			    offsetof(struct mem, mid_dst));
	assert_int_equal(flen2, flen1);
	assert_memory_equal(fin2, fin1, flen1);
	free(fin1);
	free(fin2);
	free(out1.big_dst);
	free(l1);
	free(l2);
	eng_fini(&g2);
	ckpt_free(&c);
}

static void test_save_restore_save_gives_the_same_bytes(void **state)
{
	struct ckpt c;
	struct eng g2;
	uint8_t *again, *later;
	size_t alen, llen;
	char err[256] = "";

	(void)state;
	checkpoint(&c);
	/* a stopped job builds and applies nothing */
	nm_bcs_slice(&c.g.e, 3);
	nm_bcs_slice(&c.g.e, 4);
	save(&c.g, &later, &llen);
	assert_int_equal(llen, c.len);
	assert_memory_equal(later, c.img, c.len);
	/* restored elsewhere and saved again */
	eng_init(&g2);
	job_open(&g2, JOB, SIZE);
	assert_int_equal(nm_bcs_restore(&g2.e, JOB, c.img, c.len, err,
					sizeof(err)), 0);
	save(&g2, &again, &alen); /* stopped by the restore */
	assert_int_equal(alen, c.len);
	assert_memory_equal(again, c.img, c.len);
	/* restored over itself, too */
	assert_int_equal(nm_bcs_restore(&c.g.e, JOB, c.img, c.len, err,
					sizeof(err)), 0);
	free(again);
	save(&c.g, &again, &alen);
	assert_memory_equal(again, c.img, c.len);
	free(again);
	free(later);
	eng_fini(&g2);
	ckpt_free(&c);
}

/* A large message between two ranks of a node: the engine asks the
 * receiver to pull it (one copy, by the side that waits); the receive
 * completes in the rank, the send once the engine hears it was pulled;
 * a stopped job's image carries a pull under way. */
static void test_large_message_pulled_by_receiver(void **state)
{
	struct eng g;
	struct bcs_job *j;
	struct log *l = calloc(1, sizeof(*l));
	uint8_t *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(l);
	mem_init();
	eng_init(&g);
	job_open(&g, JOB, SIZE);
	rk_send(&g, 0, 2, 7, M.big_src, BIG, 0);
	rk_recv(&g, 2, 0, 7, M.big_dst, BIG, 0);
	nm_bcs_slice(&g.e, 1);
	j = bcs_job_find(&g.e, JOB);
	assert_non_null(j->pulls);
	assert_null(j->xfers);
	/* stopped with the pull asked for: the image holds it */
	nm_bcs_stopped(&g.e, JOB, 1);
	save(&g, &buf, &len);
	free(buf);
	nm_bcs_stopped(&g.e, JOB, 0);
	pull_for_real = 1;
	consume(&g, 2, l);
	consume(&g, 0, l);
	pull_for_real = 0;
	assert_int_equal(l->n[2], 1);
	assert_int_equal(l->d[2][0].status, BCS_OK);
	assert_int_equal(l->d[2][0].bytes, BIG);
	assert_int_equal(l->n[0], 0); /* the send: not yet */
	assert_memory_equal(M.big_dst, M.big_src, BIG);
	nm_bcs_slice(&g.e, 2);
	consume(&g, 0, l);
	assert_int_equal(l->n[0], 1);
	assert_int_equal(l->d[0][0].status, BCS_OK);
	assert_null(j->pulls);
	assert_int_equal(j->incoming[2], 0);
	assert_int_equal(j->pending[0], 0);
	free(l);
	eng_fini(&g);
}

static void test_save_refused_while_the_job_runs(void **state)
{
	struct eng g;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[256] = "";

	(void)state;
	eng_init(&g);
	job_open(&g, JOB, SIZE);
	assert_int_equal(nm_bcs_save(&g.e, JOB, &buf, &len, err, sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "stop it"));
	assert_null(buf);
	assert_int_equal(nm_bcs_save(&g.e, JOB + 1, &buf, &len, err,
				     sizeof(err)), -ENOENT);
	nm_bcs_stopped(&g.e, JOB, 1);
	save(&g, &buf, &len);
	put_seed("seed-fresh", buf, len);
	free(buf);
	eng_fini(&g);
}

/* Restoring img into g's job fails with rc, err containing what, and
 * the job's state (its image) unchanged. */
static void refused(struct eng *g, const uint8_t *img, size_t len, int rc,
		    const char *what)
{
	uint8_t *before, *after;
	size_t blen, alen;
	char err[256] = "";

	nm_bcs_stopped(&g->e, g->job, 1);
	save(g, &before, &blen);
	assert_int_equal(nm_bcs_restore(&g->e, g->job, img, len, err,
					sizeof(err)), rc);
	if (!strstr(err, what))
		fail_msg("\"%s\" does not say \"%s\"", err, what);
	save(g, &after, &alen);
	assert_int_equal(alen, blen);
	assert_memory_equal(after, before, blen);
	free(before);
	free(after);
}

static void test_truncated_image_refused(void **state)
{
	struct ckpt c;
	struct eng g2;

	(void)state;
	checkpoint(&c);
	eng_init(&g2);
	job_open(&g2, JOB, SIZE);
	refused(&g2, c.img, c.len - 1, -EBADMSG, "truncated");
	refused(&g2, c.img, c.len / 2, -EBADMSG, "truncated");
	refused(&g2, c.img, 10, -EBADMSG, "not a BCS-MPI engine image");
	refused(&g2, c.img, 0, -EBADMSG, "not a BCS-MPI engine image");
	eng_fini(&g2);
	ckpt_free(&c);
}

static void test_damaged_image_refused(void **state)
{
	struct ckpt c;
	struct eng g2;

	(void)state;
	checkpoint(&c);
	eng_init(&g2);
	job_open(&g2, JOB, SIZE);
	for (size_t at = 24; at < c.len; at += c.len / 7) {
		c.img[at] ^= 0x10;
		refused(&g2, c.img, c.len, -EBADMSG, "checksum");
		c.img[at] ^= 0x10;
	}
	c.img[4] = 9; /* the version */
	refused(&g2, c.img, c.len, -EPROTONOSUPPORT, "version 9");
	eng_fini(&g2);
	ckpt_free(&c);
}

static void test_image_of_another_job_or_shape_refused(void **state)
{
	struct ckpt c;
	struct eng g2;

	(void)state;
	checkpoint(&c);
	eng_init(&g2);
	job_open(&g2, JOB + 1, SIZE);
	refused(&g2, c.img, c.len, -EINVAL, "of job 7, not job 8");
	job_close(&g2);
	job_open(&g2, JOB, SIZE - 1);
	refused(&g2, c.img, c.len, -EINVAL, "has 4 ranks, the job opened "
		"here 3");
	assert_int_equal(nm_bcs_restore(&g2.e, JOB + 5, c.img, c.len,
					(char[64]){ 0 }, 64), -ENOENT);
	eng_fini(&g2);
	ckpt_free(&c);
}

/* A job placed anew (a restart): the image's nodes are read as the ones
 * its ranks have now when they group the ranks alike, and the image is
 * refused, the two ranks named, when they do not. */
static void test_image_read_on_the_nodes_placed_now(void **state)
{
	static const uint32_t alike[SIZE] = { 3, 3, 3, 3 };
	static const uint32_t split[SIZE] = { 3, 3, 4, 4 };
	struct bcs_job *d = NULL;
	struct ckpt c;
	char err[256] = "";

	(void)state;
	checkpoint(&c);
	assert_int_equal(bcs_save_decode_placed(&c.g.e, c.img, c.len, alike,
						SIZE, &d, err, sizeof(err)),
			 0);
	assert_int_equal(d->nnodes, 1);
	assert_int_equal(d->nodes[d->me], 3);
	for (uint32_t r = 0; r < SIZE; r++)
		assert_int_equal(d->node_of[r], 3);
	bcs_job_free(d);
	assert_int_equal(bcs_save_decode_placed(&c.g.e, c.img, c.len, split,
						SIZE, &d, err, sizeof(err)),
			 -EINVAL);
	assert_null(d);
	assert_non_null(strstr(err, "ranks 0 and 2 were on one node, and "
				    "now on two"));
	assert_int_equal(bcs_save_decode_placed(&c.g.e, c.img, c.len, alike,
						SIZE - 1, &d, err,
						sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "has 4 ranks, the job placed now 3"));
	ckpt_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restored_job_runs_on_as_the_saved_one),
		cmocka_unit_test(test_save_restore_save_gives_the_same_bytes),
		cmocka_unit_test(test_save_refused_while_the_job_runs),
		cmocka_unit_test(test_large_message_pulled_by_receiver),
		cmocka_unit_test(test_truncated_image_refused),
		cmocka_unit_test(test_damaged_image_refused),
		cmocka_unit_test(test_image_of_another_job_or_shape_refused),
		cmocka_unit_test(test_image_read_on_the_nodes_placed_now),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	free(M.big_src);
	free(M.big_dst);
	return rc;
}
