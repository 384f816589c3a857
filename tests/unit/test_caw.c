/*
 * test_caw.c — COMPARE-AND-WRITE (caw.c) on the in-process machine.
 *
 * Covers the four comparisons (true iff every node of the set satisfies
 * it), writes that happen only when the result is true and only on the
 * set, sets without the sequencer or the initiator, sequential consistency
 * (concurrent writes that differ only in value converge; a CAW-based
 * counter never loses or duplicates an increment), and failures: a member
 * lost during the query (-STORM_EVIEWCHANGE, nothing written), a member
 * lost during the write (the write still reaches every survivor), the
 * sequencer lost mid-write or mid-stream (survivors still agree), a new
 * sequencer holding requests until its view is stable, and a killed node's
 * handle.  Bad arguments return their error and write nothing.
 *
 * Operations that must be stopped between phases are driven by one worker
 * thread while the test thread parks messages with sp_machine_hold() and
 * waits for the machine to go quiet; worker threads never assert.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "machine_fixture.h"

#define VAR 0   /* compared */
#define Y 8     /* written */
#define CTR 16  /* counter */

static void set_all(struct fx *f, uint64_t gaddr, int64_t v)
{
	for (uint32_t i = 0; i < f->o.n; i++)
		if (f->w[i] && !f->dead[i])
			assert_int_equal(sp_gvar_write_local(f->w[i], gaddr, v), 0);
}

static int64_t get(struct fx *f, uint32_t id, uint64_t gaddr)
{
	int64_t v = 0;

	assert_int_equal(sp_gvar_read(f->w[id], gaddr, &v), 0);
	return v;
}

static int caw(struct fx *f, uint32_t from, const sp_nodeset_t *set,
	       sp_cmp_t op, int64_t value, uint64_t waddr, int64_t wval)
{
	return sp_compare_and_write(f->w[from], set, VAR, op, value, waddr,
				    wval, FX_WAIT_MS);
}

/* ---- one operation in a worker thread ------------------------------------ */

struct one {
	pthread_t thr;
	sp_world_t *w;
	const sp_nodeset_t *set;
	int64_t wval;
	int rc;
};

static void *one_main(void *arg)
{
	struct one *o = arg;

	o->rc = sp_compare_and_write(o->w, o->set, VAR, SP_CMP_GE, 0, Y,
				     o->wval, FX_WAIT_MS);
	return NULL;
}

static void one_start(struct one *o, struct fx *f, uint32_t from,
		      const sp_nodeset_t *set, int64_t wval)
{
	o->w = f->w[from];
	o->set = set;
	o->wval = wval;
	o->rc = 1234;
	assert_int_equal(pthread_create(&o->thr, NULL, one_main, o), 0);
}

/* Wait until the operation a worker just started has moved the machine
 * (its first message was delivered) and everything it set off has been
 * delivered or parked. */
static void wait_started(struct fx *f, uint64_t t0)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		fx_quiesce(f);
		if (sp_machine_now(f->m) > t0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if ((b.tv_sec - a.tv_sec) * 1000 > FX_WAIT_MS)
			fail_msg("the worker's operation never started");
		sched_yield();
	}
}

/* ---- the four comparisons -------------------------------------------------- */

static void test_caw_ge_true_iff_every_node_satisfies(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	set_all(f, VAR, 5);
	assert_int_equal(caw(f, 3, all, SP_CMP_GE, 5, SP_NO_WRITE, 0), 1);
	assert_int_equal(caw(f, 3, all, SP_CMP_GE, -9, SP_NO_WRITE, 0), 1);
	assert_int_equal(caw(f, 3, all, SP_CMP_GE, 6, SP_NO_WRITE, 0), 0);
	assert_int_equal(sp_gvar_write_local(f->w[6], VAR, 4), 0);
	assert_int_equal(caw(f, 3, all, SP_CMP_GE, 5, SP_NO_WRITE, 0), 0);
	assert_int_equal(caw(f, 3, all, SP_CMP_GE, 4, SP_NO_WRITE, 0), 1);
	sp_nodeset_destroy(all);
}

static void test_caw_lt_true_iff_every_node_satisfies(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	set_all(f, VAR, 5);
	assert_int_equal(caw(f, 0, all, SP_CMP_LT, 6, SP_NO_WRITE, 0), 1);
	assert_int_equal(caw(f, 0, all, SP_CMP_LT, 5, SP_NO_WRITE, 0), 0);
	assert_int_equal(sp_gvar_write_local(f->w[0], VAR, 100), 0);
	assert_int_equal(caw(f, 0, all, SP_CMP_LT, 6, SP_NO_WRITE, 0), 0);
	assert_int_equal(caw(f, 0, all, SP_CMP_LT, 101, SP_NO_WRITE, 0), 1);
	sp_nodeset_destroy(all);
}

static void test_caw_eq_true_iff_every_node_satisfies(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	set_all(f, VAR, INT64_MIN);
	assert_int_equal(caw(f, 7, all, SP_CMP_EQ, INT64_MIN, SP_NO_WRITE, 0), 1);
	assert_int_equal(caw(f, 7, all, SP_CMP_EQ, 0, SP_NO_WRITE, 0), 0);
	assert_int_equal(sp_gvar_write_local(f->w[5], VAR, 0), 0);
	assert_int_equal(caw(f, 7, all, SP_CMP_EQ, INT64_MIN, SP_NO_WRITE, 0), 0);
	assert_int_equal(caw(f, 7, all, SP_CMP_EQ, 0, SP_NO_WRITE, 0), 0);
	sp_nodeset_destroy(all);
}

static void test_caw_ne_true_iff_every_node_satisfies(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	set_all(f, VAR, 5);
	assert_int_equal(caw(f, 2, all, SP_CMP_NE, 4, SP_NO_WRITE, 0), 1);
	assert_int_equal(caw(f, 2, all, SP_CMP_NE, 5, SP_NO_WRITE, 0), 0);
	assert_int_equal(sp_gvar_write_local(f->w[7], VAR, 4), 0);
	assert_int_equal(caw(f, 2, all, SP_CMP_NE, 4, SP_NO_WRITE, 0), 0);
	assert_int_equal(caw(f, 2, all, SP_CMP_NE, 3, SP_NO_WRITE, 0), 1);
	sp_nodeset_destroy(all);
}

/* ---- writes ------------------------------------------------------------------ */

static void test_caw_writes_only_when_true(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	set_all(f, VAR, 1);
	set_all(f, Y, -1);
	assert_int_equal(sp_gvar_write_local(f->w[4], VAR, 0), 0);
	assert_int_equal(caw(f, 1, all, SP_CMP_EQ, 1, Y, 77), 0);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(get(f, i, Y), -1);
	assert_int_equal(sp_gvar_write_local(f->w[4], VAR, 1), 0);
	assert_int_equal(caw(f, 1, all, SP_CMP_EQ, 1, Y, 77), 1);
	/* in place on every node when the call returns */
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(get(f, i, Y), 77);
	/* the compared variable itself may be the one written */
	assert_int_equal(sp_compare_and_write(f->w[6], all, VAR, SP_CMP_EQ, 1,
					      VAR, 2, FX_WAIT_MS),
			 1);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(get(f, i, VAR), 2);
	sp_nodeset_destroy(all);
}

static void test_caw_on_subset_ignores_and_spares_outsiders(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;
	sp_nodeset_t *sub;

	*state = f = fx_new(&o);
	sub = fx_set(f, "2-3,6,11");
	set_all(f, VAR, 10);
	set_all(f, Y, 0);
	/* outsiders (even the sequencer, node 0) fail the comparison */
	assert_int_equal(sp_gvar_write_local(f->w[0], VAR, -1), 0);
	assert_int_equal(sp_gvar_write_local(f->w[5], VAR, -1), 0);
	assert_int_equal(caw(f, 6, sub, SP_CMP_GE, 10, Y, 9), 1);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(get(f, i, Y), sp_nodeset_has(sub, i) ? 9 : 0);
	/* a member failing it makes it false */
	assert_int_equal(sp_gvar_write_local(f->w[11], VAR, 3), 0);
	assert_int_equal(caw(f, 6, sub, SP_CMP_GE, 10, Y, 99), 0);
	sp_nodeset_destroy(sub);
}

static void test_caw_initiator_and_sequencer_outside_set(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *sub;

	*state = f = fx_new(&o);
	sub = fx_set(f, "4-5");
	set_all(f, VAR, 1);
	set_all(f, Y, 0);
	assert_int_equal(sp_gvar_write_local(f->w[7], VAR, 0), 0);
	assert_int_equal(sp_gvar_write_local(f->w[0], VAR, 0), 0);
	assert_int_equal(caw(f, 7, sub, SP_CMP_EQ, 1, Y, 5), 1);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(get(f, i, Y), i == 4 || i == 5 ? 5 : 0);
	sp_nodeset_destroy(sub);
}

static void test_caw_single_node_set(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *me, *root;

	*state = f = fx_new(&o);
	me = fx_set(f, "2");
	root = fx_set(f, "0");
	set_all(f, VAR, 3);
	assert_int_equal(caw(f, 2, me, SP_CMP_EQ, 3, Y, 1), 1);
	assert_int_equal(caw(f, 0, root, SP_CMP_EQ, 3, Y, 2), 1);
	assert_int_equal(get(f, 2, Y), 1);
	assert_int_equal(get(f, 0, Y), 2);
	assert_int_equal(get(f, 1, Y), 0);
	sp_nodeset_destroy(me);
	sp_nodeset_destroy(root);
}

/* ---- sequential consistency ---------------------------------------------------- */

struct worker {
	pthread_t thr;
	sp_world_t *w;
	const sp_nodeset_t *set;
	uint32_t node;
	int iters;   /* operations to issue (writers) or wins wanted (counter) */
	int counter; /* 1: increment CTR with EQ/write, 0: write Y */
	int wins, tries, viewchanges;
	int bad_rc;  /* first unexpected return code, 0 if none */
	/* progress reporting to the test thread */
	pthread_mutex_t *mu;
	pthread_cond_t *cv;
	int *total;
};

static void *worker_main(void *arg)
{
	struct worker *k = arg;

	while (k->counter ? k->wins < k->iters : k->tries < k->iters) {
		int64_t cur = 0;
		int rc;

		if (k->tries++ > 100000) {
			k->bad_rc = -ELOOP;
			break;
		}
		if (k->counter) {
			sp_gvar_read(k->w, CTR, &cur);
			rc = sp_compare_and_write(k->w, k->set, CTR, SP_CMP_EQ,
						  cur, CTR, cur + 1, FX_WAIT_MS);
		} else {
			rc = sp_compare_and_write(
				k->w, k->set, VAR, SP_CMP_GE, 0, Y,
				(int64_t)k->node * 1000000 + k->tries,
				FX_WAIT_MS);
		}
		if (rc == -STORM_EVIEWCHANGE) {
			k->viewchanges++;
			continue;
		}
		if (rc < 0 || (!k->counter && rc != 1)) {
			k->bad_rc = rc < 0 ? rc : -EPROTO;
			break;
		}
		if (rc == 1) {
			k->wins++;
			if (k->mu) {
				pthread_mutex_lock(k->mu);
				(*k->total)++;
				pthread_cond_broadcast(k->cv);
				pthread_mutex_unlock(k->mu);
			}
		}
	}
	return NULL;
}

static void workers_start(struct worker *k, uint32_t n, struct fx *f,
			  const uint32_t *nodes, const sp_nodeset_t *set,
			  int iters, int counter)
{
	for (uint32_t i = 0; i < n; i++) {
		memset(&k[i], 0, sizeof(k[i]));
		k[i].w = f->w[nodes[i]];
		k[i].node = nodes[i];
		k[i].set = set;
		k[i].iters = iters;
		k[i].counter = counter;
	}
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(pthread_create(&k[i].thr, NULL, worker_main,
						&k[i]),
				 0);
}

static void workers_join(struct worker *k, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		pthread_join(k[i].thr, NULL);
	for (uint32_t i = 0; i < n; i++)
		if (k[i].bad_rc)
			fail_msg("worker on node %u: unexpected result %d (%s)",
				 k[i].node, k[i].bad_rc,
				 storm_strerror(k[i].bad_rc));
}

static void test_caw_concurrent_writes_converge(void **state)
{
	enum { N = 8, ITERS = 150 };
	struct fx_opts o = {.n = N};
	struct worker k[N];
	uint32_t nodes[N];
	struct fx *f;
	sp_nodeset_t *all;
	int64_t y0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	for (uint32_t i = 0; i < N; i++)
		nodes[i] = i;
	workers_start(k, N, f, nodes, all, ITERS, 0);
	workers_join(k, N);
	fx_quiesce(f);
	y0 = get(f, 0, Y);
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(k[i].wins, ITERS);
		assert_int_equal(get(f, i, Y), y0);
	}
	/* the survivor is some node's last write */
	assert_int_equal(y0 % 1000000, ITERS);
	sp_nodeset_destroy(all);
}

static void test_caw_counter_increments_are_serialized(void **state)
{
	enum { N = 6, WINS = 25 };
	struct fx_opts o = {.n = N};
	struct worker k[N];
	uint32_t nodes[N];
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-5");
	for (uint32_t i = 0; i < N; i++)
		nodes[i] = i;
	workers_start(k, N, f, nodes, all, WINS, 1);
	workers_join(k, N);
	fx_quiesce(f);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(get(f, i, CTR), N * WINS);
	sp_nodeset_destroy(all);
}

/* ---- failures -------------------------------------------------------------------- */

static void test_caw_member_lost_during_query_is_viewchange(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;
	struct one op;
	uint64_t e0, t0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	e0 = fx_epoch(f, 0);
	fx_quiesce(f);
	t0 = sp_machine_now(f->m);
	/* the query cannot finish while 7's messages are parked */
	assert_int_equal(sp_machine_hold(f->m, 7, 1), 0);
	one_start(&op, f, 2, all, 55);
	wait_started(f, t0);
	fx_kill(f, 6);
	pthread_join(op.thr, NULL);
	assert_int_equal(op.rc, -STORM_EVIEWCHANGE);
	assert_int_equal(sp_machine_hold(f->m, 7, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(get(f, i, Y), 0);
	sp_nodeset_destroy(all);
}

/* Start a CAW (write Y = wval over all of 8 nodes) from node `from` and stop
 * it where the write has reached nodes 0-3 but is parked at 4, the interior
 * node that forwards it to 5, 6, 7. */
static void write_stalled_at_4(struct fx *f, struct one *op, uint32_t from,
			       const sp_nodeset_t *all, int64_t wval)
{
	uint64_t t0;

	fx_quiesce(f);
	t0 = sp_machine_now(f->m);
	/* 1: the query stalls at 4, waiting for the vote of 7 */
	assert_int_equal(sp_machine_hold(f->m, 7, 1), 0);
	one_start(op, f, from, all, wval);
	wait_started(f, t0);
	/* 2: let 7 vote; park 4's combined vote at the sequencer */
	assert_int_equal(sp_machine_hold(f->m, 0, 1), 0);
	assert_int_equal(sp_machine_hold(f->m, 7, 0), 0);
	fx_quiesce(f);
	/* 3: park everything to 4, then let the sequencer see the vote */
	assert_int_equal(sp_machine_hold(f->m, 4, 1), 0);
	assert_int_equal(sp_machine_hold(f->m, 0, 0), 0);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(get(f, i, Y), i < 4 ? wval : 0);
}

static void test_caw_write_completes_when_member_dies_mid_write(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;
	struct one op;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	e0 = fx_epoch(f, 0);
	write_stalled_at_4(f, &op, 2, all, 31);
	fx_kill(f, 4);
	pthread_join(op.thr, NULL);
	assert_int_equal(op.rc, 1);
	assert_int_equal(sp_machine_hold(f->m, 4, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++)
		if (i != 4)
			assert_int_equal(get(f, i, Y), 31);
	sp_nodeset_destroy(all);
}

static void test_caw_write_completes_when_sequencer_dies_mid_write(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all, *rest;
	struct one op;
	uint64_t e0;
	sp_view_info_t vi;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	rest = fx_set(f, "1-3,5-7");
	e0 = fx_epoch(f, 1);
	write_stalled_at_4(f, &op, 2, all, 47);
	/* the sequencer and the node holding the write both die */
	fx_kill(f, 0);
	fx_kill(f, 4);
	/* the initiator learns from the new view that its write happened */
	pthread_join(op.thr, NULL);
	assert_int_equal(op.rc, 1);
	assert_int_equal(sp_machine_hold(f->m, 4, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++)
		if (i != 0 && i != 4)
			assert_int_equal(get(f, i, Y), 47);
	/* the new sequencer (1) serves the next operation */
	assert_int_equal(sp_view(f->w[5], &vi, NULL), 0);
	assert_int_equal(vi.root, 1);
	assert_int_equal(caw(f, 5, rest, SP_CMP_GE, 0, Y, 48), 1);
	for (uint32_t i = 0; i < 8; i++)
		if (i != 0 && i != 4)
			assert_int_equal(get(f, i, Y), 48);
	sp_nodeset_destroy(all);
	sp_nodeset_destroy(rest);
}

/* The sequencer dies with its last write on 0-3 only; the new view's
 * STABLE carries it to 5-7.  An operation the new sequencer orders right
 * after STABLE can reach 7 (through 6) before 7's own STABLE (slowed on
 * the link 1 -> 7): 7 must still apply the old write first, or its
 * high-water mark would skip it as older than the new one. */
static void test_caw_write_of_dead_sequencer_lands_before_newer_ops(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all, *rest;
	struct worker k[1];
	const uint32_t from[1] = {2};
	struct one op;
	uint64_t e0, t0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	rest = fx_set(f, "1-3,5-7");
	e0 = fx_epoch(f, 1);
	write_stalled_at_4(f, &op, 2, all, 47);
	/* no view can become stable while 7 is parked */
	assert_int_equal(sp_machine_hold(f->m, 7, 1), 0);
	assert_int_equal(sp_machine_delay(f->m, 1, 7, 200000), 0);
	fx_kill(f, 0);
	fx_kill(f, 4);
	fx_quiesce(f);
	/* "CTR == 0 -> CTR = 1" waits at the new sequencer (1) */
	t0 = sp_machine_now(f->m);
	workers_start(k, 1, f, from, rest, 1, 1);
	wait_started(f, t0);
	assert_int_equal(sp_machine_hold(f->m, 7, 0), 0);
	assert_int_equal(sp_machine_hold(f->m, 4, 0), 0);
	pthread_join(op.thr, NULL);
	assert_int_equal(op.rc, 1);
	workers_join(k, 1);
	assert_int_equal(k[0].wins, 1);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 1; i < 8; i++) {
		if (i == 4)
			continue;
		assert_int_equal(get(f, i, Y), 47);
		assert_int_equal(get(f, i, CTR), 1);
	}
	sp_nodeset_destroy(all);
	sp_nodeset_destroy(rest);
}

/* A new sequencer (the root died) orders nothing until its view is
 * stable: only then does it know the highest sequence number any survivor
 * saw, and whether the last write of the one that died reached only some
 * of them.  The write it then orders must land everywhere — it used to
 * number from 0, so every receiver skipped it as already applied. */
static void test_caw_new_sequencer_waits_for_stable_then_writes(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all, *sub;
	sp_view_info_t vi;
	struct one op;
	uint64_t e0, t0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	sub = fx_set(f, "1-3");
	set_all(f, Y, 0);
	for (int64_t v = 1; v <= 5; v++)
		assert_int_equal(caw(f, 2, all, SP_CMP_GE, 0, Y, v), 1);
	e0 = fx_epoch(f, 1);
	/* the new view cannot become stable while 7 is parked */
	assert_int_equal(sp_machine_hold(f->m, 7, 1), 0);
	fx_kill(f, 0);
	fx_quiesce(f);
	assert_int_equal(sp_view(f->w[2], &vi, NULL), 0);
	assert_true(vi.epoch > e0);
	assert_int_equal(vi.root, 1);
	assert_int_equal(vi.stable, 0);
	/* "VAR >= 0 -> Y = 20" reaches the new sequencer and waits there */
	t0 = sp_machine_now(f->m);
	one_start(&op, f, 2, sub, 20);
	wait_started(f, t0);
	for (uint32_t i = 1; i <= 3; i++)
		assert_int_equal(get(f, i, Y), 5);
	assert_int_equal(op.rc, 1234);
	/* stable: it runs, and its write is applied, not skipped */
	assert_int_equal(sp_machine_hold(f->m, 7, 0), 0);
	pthread_join(op.thr, NULL);
	assert_int_equal(op.rc, 1);
	for (uint32_t i = 1; i <= 3; i++)
		assert_int_equal(get(f, i, Y), 20);
	/* and the ones after it are ordered as usual */
	assert_int_equal(sp_compare_and_write(f->w[2], sub, Y, SP_CMP_EQ, 5, Y,
					      21, FX_WAIT_MS),
			 0);
	assert_int_equal(sp_compare_and_write(f->w[2], sub, Y, SP_CMP_EQ, 20, Y,
					      21, FX_WAIT_MS),
			 1);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 1; i <= 3; i++)
		assert_int_equal(get(f, i, Y), 21);
	sp_nodeset_destroy(all);
	sp_nodeset_destroy(sub);
}

/* Nodes 1..7 run a CAW counter over themselves while the sequencer (node
 * 0, outside the set) is killed: no increment is lost or doubled and all
 * survivors agree. */
static void test_caw_sequencer_failure_mid_stream(void **state)
{
	enum { N = 8, W = 7, WINS = 12 };
	struct fx_opts o = {.n = N};
	struct worker k[W];
	uint32_t nodes[W];
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct timespec dl;
	int total = 0, rc = 0, sum = 0;
	struct fx *f;
	sp_nodeset_t *set;
	uint64_t e0;

	*state = f = fx_new(&o);
	set = fx_set(f, "1-7");
	e0 = fx_epoch(f, 1);
	for (uint32_t i = 0; i < W; i++)
		nodes[i] = i + 1;
	for (uint32_t i = 0; i < W; i++) {
		memset(&k[i], 0, sizeof(k[i]));
		k[i].w = f->w[nodes[i]];
		k[i].node = nodes[i];
		k[i].set = set;
		k[i].iters = WINS;
		k[i].counter = 1;
		k[i].mu = &mu;
		k[i].cv = &cv;
		k[i].total = &total;
	}
	for (uint32_t i = 0; i < W; i++)
		assert_int_equal(pthread_create(&k[i].thr, NULL, worker_main,
						&k[i]),
				 0);
	/* kill the sequencer once the stream is well under way */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += FX_WAIT_MS / 1000;
	pthread_mutex_lock(&mu);
	while (total < W * WINS / 3 && rc == 0)
		rc = pthread_cond_timedwait(&cv, &mu, &dl);
	pthread_mutex_unlock(&mu);
	fx_kill(f, 0);
	workers_join(k, W);
	assert_int_equal(rc, 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < W; i++)
		sum += k[i].wins;
	assert_int_equal(sum, W * WINS);
	for (uint32_t i = 1; i < N; i++)
		assert_int_equal(get(f, i, CTR), W * WINS);
	sp_nodeset_destroy(set);
}

/* ---- bad input ----------------------------------------------------------------- */

static void test_caw_rejects_bad_arguments(void **state)
{
	struct fx_opts o = {.n = 4, .gmem = 4096};
	struct fx *f;
	sp_nodeset_t *all, *none, *other = NULL;
	sp_world_t *w;

	*state = f = fx_new(&o);
	w = f->w[1];
	all = fx_set(f, "0-3");
	none = fx_set(f, "");
	assert_int_equal(sp_nodeset_create(5, &other), 0);
	assert_int_equal(sp_nodeset_add(other, 1), 0);
	set_all(f, VAR, 1);
	set_all(f, Y, 0);
	/* empty set, a set for another machine, NULL */
	assert_int_equal(sp_compare_and_write(w, none, VAR, SP_CMP_EQ, 1, Y, 9,
					      100),
			 -EINVAL);
	assert_int_equal(sp_compare_and_write(w, other, VAR, SP_CMP_EQ, 1, Y, 9,
					      100),
			 -EINVAL);
	assert_int_equal(sp_compare_and_write(w, NULL, VAR, SP_CMP_EQ, 1, Y, 9,
					      100),
			 -EINVAL);
	/* misaligned or out-of-range variables */
	assert_int_equal(sp_compare_and_write(w, all, 4, SP_CMP_EQ, 1, Y, 9, 100),
			 -EINVAL);
	assert_int_equal(sp_compare_and_write(w, all, 4096, SP_CMP_EQ, 1, Y, 9,
					      100),
			 -EINVAL);
	assert_int_equal(sp_compare_and_write(w, all, VAR, SP_CMP_EQ, 1, 12, 9,
					      100),
			 -EINVAL);
	assert_int_equal(sp_compare_and_write(w, all, VAR, SP_CMP_EQ, 1, 4096, 9,
					      100),
			 -EINVAL);
	/* an operation that is not one of the four */
	assert_int_equal(sp_compare_and_write(w, all, VAR, (sp_cmp_t)4, 1, Y, 9,
					      100),
			 -EINVAL);
	assert_int_equal(sp_compare_and_write(w, all, VAR, (sp_cmp_t)-1, 1, Y, 9,
					      100),
			 -EINVAL);
	/* the last aligned variable is fine */
	assert_int_equal(sp_compare_and_write(w, all, 4088, SP_CMP_EQ, 0, 4088,
					      3, FX_WAIT_MS),
			 1);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(get(f, i, Y), 0);
		assert_int_equal(get(f, i, 4088), 3);
	}
	sp_nodeset_destroy(all);
	sp_nodeset_destroy(none);
	sp_nodeset_destroy(other);
}

static void test_caw_rejects_node_not_in_view(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	e0 = fx_epoch(f, 0);
	fx_kill(f, 5);
	fx_settle(f, e0 + 1);
	assert_int_equal(caw(f, 2, all, SP_CMP_GE, 0, Y, 9), -STORM_ENOTINVIEW);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 8; i++)
		if (i != 5)
			assert_int_equal(get(f, i, Y), 0);
	sp_nodeset_destroy(all);
}

static void test_caw_times_out_when_sequencer_is_unreachable(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	assert_int_equal(sp_machine_hold(f->m, 0, 1), 0);
	assert_int_equal(sp_compare_and_write(f->w[2], all, VAR, SP_CMP_GE, 0,
					      SP_NO_WRITE, 0, 50),
			 -ETIMEDOUT);
	assert_int_equal(sp_machine_hold(f->m, 0, 0), 0);
	fx_quiesce(f);
	/* and the machine still works */
	assert_int_equal(caw(f, 2, all, SP_CMP_GE, 0, Y, 1), 1);
	sp_nodeset_destroy(all);
}

static void test_caw_on_killed_node_is_eclosed(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *all;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	fx_kill(f, 3);
	assert_int_equal(sp_compare_and_write(f->w[3], all, VAR, SP_CMP_GE, 0, Y,
					      1, 1000),
			 -STORM_ECLOSED);
	sp_nodeset_destroy(all);
}

int main(void)
{
#define T(fn) cmocka_unit_test_teardown(fn, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_caw_ge_true_iff_every_node_satisfies),
		T(test_caw_lt_true_iff_every_node_satisfies),
		T(test_caw_eq_true_iff_every_node_satisfies),
		T(test_caw_ne_true_iff_every_node_satisfies),
		T(test_caw_writes_only_when_true),
		T(test_caw_on_subset_ignores_and_spares_outsiders),
		T(test_caw_initiator_and_sequencer_outside_set),
		T(test_caw_single_node_set),
		T(test_caw_concurrent_writes_converge),
		T(test_caw_counter_increments_are_serialized),
		T(test_caw_member_lost_during_query_is_viewchange),
		T(test_caw_write_completes_when_member_dies_mid_write),
		T(test_caw_write_completes_when_sequencer_dies_mid_write),
		T(test_caw_rejects_bad_arguments),
		T(test_caw_rejects_node_not_in_view),
		T(test_caw_times_out_when_sequencer_is_unreachable),
		T(test_caw_new_sequencer_waits_for_stable_then_writes),
		T(test_caw_write_of_dead_sequencer_lands_before_newer_ops),
		T(test_caw_sequencer_failure_mid_stream),
		T(test_caw_on_killed_node_is_eclosed),
	};

	return cmocka_run_group_tests_name("caw", tests, NULL, NULL);
}
