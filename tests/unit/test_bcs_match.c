/*
 * test_bcs_match.c — BCS-MPI matching (node/bcs_match.c) over scripted
 * descriptor streams: MPI's non-overtaking rule, the deterministic
 * ANY_SOURCE order under shuffled arrival slices, the bounds that make
 * it safe (running, blocked, finalized ranks), held receives, probes,
 * the arrival order, and the patience that keeps a polling program live.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <storm_bcs.h>

#include "bcs_match.h"

#define MAXM 512

struct log {
	int n;
	int32_t src[MAXM];
	int32_t tag[MAXM];
	uint64_t req[MAXM];
	uint64_t sreq[MAXM];
	int probe[MAXM];
};

static void on_match(void *ctx, struct bcs_recv *r, struct bcs_msg *s)
{
	struct log *l = ctx;

	assert_true(l->n < MAXM);
	l->src[l->n] = s->src;
	l->tag[l->n] = s->tag;
	l->req[l->n] = r->req;
	l->sreq[l->n] = s->req;
	l->probe[l->n] = r->probe;
	l->n++;
	if (!r->probe)
		free(s);
	free(r);
}

static struct bcs_msg *msg(int32_t src, int32_t dst, int32_t tag,
			   uint64_t clock, uint64_t seq)
{
	struct bcs_msg *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->src = src;
	s->dst = dst;
	s->tag = tag;
	s->ctx = 1;
	s->clock = clock;
	s->seq = seq;
	s->req = (uint64_t)src << 32 | seq;
	return s;
}

static struct bcs_recv *rcv(int32_t dst, int32_t src, int32_t tag,
			    uint64_t req)
{
	struct bcs_recv *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->dst = dst;
	r->src = src;
	r->tag = tag;
	r->ctx = 1;
	r->req = req;
	return r;
}

static void drop(void *ctx, struct bcs_msg *s, struct bcs_recv *r)
{
	(void)ctx;
	free(s);
	free(r);
}

static void test_specific_source_is_non_overtaking(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };

	(void)state;
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_send(&m, msg(1, 0, 7, 1, 1));
	bcs_match_send(&m, msg(2, 0, 7, 1, 1));
	bcs_match_send(&m, msg(1, 0, 8, 2, 2));
	bcs_match_send(&m, msg(1, 0, 7, 3, 3));
	bcs_match_recv(&m, rcv(0, 1, 7, 100)); /* 1's first tag 7 */
	bcs_match_recv(&m, rcv(0, 1, BCS_ANY, 101)); /* then its tag 8 */
	bcs_match_recv(&m, rcv(0, 1, 7, 102)); /* its second tag 7 */
	assert_int_equal(bcs_match_run(&m, on_match, &l), 3);
	assert_int_equal(l.sreq[0], (1ull << 32) | 1);
	assert_int_equal(l.sreq[1], (1ull << 32) | 2);
	assert_int_equal(l.sreq[2], (1ull << 32) | 3);
	/* nothing posted for 2's send: it waits */
	assert_non_null(m.sends[0]);
	assert_int_equal(m.sends[0]->src, 2);
	bcs_match_fini(&m, drop, NULL);
}

/* Ranks 1..3 each send K messages to rank 0, clocks 1..K; rank 0 has
 * 3K ANY_SOURCE receives posted.  Each slice a sender posts 0, 1 or 2
 * of its next sends (the arrival noise), its clock that of its last
 * send; it is gone once all are posted. */
#define K 20
static void run_shuffled(unsigned seed, int32_t *order)
{
	struct bcs_match m;
	struct log l = { 0 };
	uint32_t posted[4] = { 0 };
	int slices = 0;

	srand(seed);
	assert_int_equal(bcs_match_init(&m, 4, BCS_ORDER_DETERMINISTIC), 0);
	for (int i = 0; i < 3 * K; i++)
		bcs_match_recv(&m, rcv(0, BCS_ANY, 5, (uint64_t)i));
	m.rk[0].blocked = 1;
	while (l.n < 3 * K) {
		assert_true(++slices < 10000);
		for (int q = 1; q <= 3; q++) {
			int more = rand() % 3;

			while (more-- > 0 && posted[q] < K) {
				posted[q]++;
				bcs_match_send(&m, msg(q, 0, 5, posted[q],
						       posted[q]));
			}
			m.rk[q].clock = posted[q];
			m.rk[q].gone = posted[q] == K;
		}
		bcs_match_run(&m, on_match, &l);
		m.rk[0].blocked = 1;
	}
	for (int i = 0; i < 3 * K; i++)
		order[i] = l.src[i] * 1000 + (int32_t)(l.sreq[i] & 0xffff);
	assert_int_equal(m.forced, 0);
	bcs_match_fini(&m, drop, NULL);
}

static void test_any_source_order_is_independent_of_arrival(void **state)
{
	int32_t first[3 * K], again[3 * K];

	(void)state;
	run_shuffled(1, first);
	/* the order is (clock, source): 1:1, 2:1, 3:1, 1:2, ... */
	for (int i = 0; i < 3 * K; i++)
		assert_int_equal(first[i], (i % 3 + 1) * 1000 + i / 3 + 1);
	for (unsigned seed = 2; seed < 40; seed++) {
		run_shuffled(seed, again);
		assert_memory_equal(first, again, sizeof(first));
	}
}

static void test_running_rank_with_lower_clock_holds_the_match(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };

	(void)state;
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 1));
	bcs_match_send(&m, msg(2, 0, 3, 5, 1)); /* clock 5 from rank 2 */
	m.rk[0].blocked = 1; /* the receiver waits in MPI_Recv */
	m.rk[2].clock = 5;
	m.rk[1].clock = 2; /* rank 1 may still send at clock 3 < 5 */
	assert_int_equal(bcs_match_run(&m, on_match, &l), 0);
	m.rk[1].clock = 4; /* next send at 5: (5, 1) < (5, 2) still */
	assert_int_equal(bcs_match_run(&m, on_match, &l), 0);
	m.rk[1].clock = 5; /* next at 6: safe */
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.src[0], 2);
	bcs_match_fini(&m, drop, NULL);
}

static void test_rank_blocked_on_the_receiver_does_not_hold(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };

	(void)state;
	/* rank 0 waits for anyone; 2 has sent (clock 9); 1 (clock 1) is
	 * blocked on a receive only 0 can satisfy: it sends nothing first */
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 1));
	bcs_match_recv(&m, rcv(1, 0, BCS_ANY, 2));
	bcs_match_send(&m, msg(2, 0, 0, 9, 1));
	m.rk[0] = (struct bcs_rank_state){ .clock = 3, .blocked = 1 };
	m.rk[1] = (struct bcs_rank_state){ .clock = 1, .blocked = 1 };
	m.rk[2] = (struct bcs_rank_state){ .clock = 9, .gone = 1 };
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.src[0], 2);
	/* but blocked on a receive from a rank that runs: held by it */
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 3));
	bcs_match_send(&m, msg(2, 0, 0, 10, 2));
	m.rk[0].blocked = 1;
	m.rk[1].blocked = 1;
	m.rk[2] = (struct bcs_rank_state){ .clock = 10 };
	bcs_match_recv(&m, rcv(1, 2, BCS_ANY, 4));
	/* 1's bound: after 2's next send (>= 11), + 2; 0's candidate is
	 * 2's clock-10 send: safe */
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.req[1], 3);
	/* a blocked rank with a send still pending may resume at any time:
	 * its clock + 1 bounds it */
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 5));
	bcs_match_send(&m, msg(2, 0, 0, 12, 3));
	m.rk[0].blocked = 1;
	m.rk[1] = (struct bcs_rank_state){ .clock = 4, .blocked = 1,
					   .other_pending = 1 };
	m.rk[2] = (struct bcs_rank_state){ .clock = 12 };
	assert_int_equal(bcs_match_run(&m, on_match, &l), 0);
	bcs_match_fini(&m, drop, NULL);
}

static void test_bounds(void **state)
{
	struct bcs_match m;

	(void)state;
	assert_int_equal(bcs_match_init(&m, 4, BCS_ORDER_DETERMINISTIC), 0);
	/* 0 runs at 7; 1 finalized; 2 blocked on a receive from 0; 3
	 * blocked on a receive from 2: a chain */
	m.rk[0] = (struct bcs_rank_state){ .clock = 7 };
	m.rk[1] = (struct bcs_rank_state){ .gone = 1 };
	m.rk[2] = (struct bcs_rank_state){ .clock = 1, .blocked = 1 };
	m.rk[3] = (struct bcs_rank_state){ .clock = 30, .blocked = 1 };
	bcs_match_recv(&m, rcv(2, 0, BCS_ANY, 1));
	bcs_match_recv(&m, rcv(3, 2, BCS_ANY, 2));
	bcs_match_bounds(&m);
	assert_int_equal(m.bound[0], 8);
	assert_true(m.bound[1] == BCS_CLOCK_INF);
	assert_int_equal(m.bound[2], 10);  /* 0's next (8), + 2 */
	assert_int_equal(m.bound[3], 32);  /* its own clock dominates */
	/* a send already posted that 2 could take lowers its bound */
	bcs_match_send(&m, msg(0, 2, 1, 3, 1));
	bcs_match_bounds(&m);
	assert_int_equal(m.bound[2], 5);
	/* a cycle of blocked ranks never sends */
	bcs_match_fini(&m, drop, NULL);
	assert_int_equal(bcs_match_init(&m, 2, BCS_ORDER_DETERMINISTIC), 0);
	m.rk[0] = (struct bcs_rank_state){ .clock = 1, .blocked = 1 };
	m.rk[1] = (struct bcs_rank_state){ .clock = 1, .blocked = 1 };
	bcs_match_recv(&m, rcv(0, 1, BCS_ANY, 1));
	bcs_match_recv(&m, rcv(1, 0, BCS_ANY, 2));
	bcs_match_bounds(&m);
	assert_true(m.bound[0] == BCS_CLOCK_INF);
	assert_true(m.bound[1] == BCS_CLOCK_INF);
	bcs_match_fini(&m, drop, NULL);
}

static void test_undecided_receive_holds_only_overlapping(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };

	(void)state;
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_recv(&m, rcv(0, BCS_ANY, 4, 1));  /* undecided */
	bcs_match_recv(&m, rcv(0, 2, BCS_ANY, 2));  /* overlaps: held */
	bcs_match_recv(&m, rcv(0, 2, 9, 3));        /* another tag: goes */
	bcs_match_send(&m, msg(2, 0, 4, 6, 1));
	bcs_match_send(&m, msg(2, 0, 9, 7, 2));
	m.rk[0].blocked = 1;
	m.rk[2].clock = 7;
	m.rk[1].clock = 0; /* may still send at clock 1 */
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.req[0], 3);
	bcs_match_send(&m, msg(2, 0, 4, 8, 3));
	m.rk[2].clock = 8;
	m.rk[0].blocked = 1;
	m.rk[1].gone = 1;
	assert_int_equal(bcs_match_run(&m, on_match, &l), 2);
	assert_int_equal(l.req[1], 1);
	assert_int_equal(l.tag[1], 4);
	assert_int_equal(l.req[2], 2);
	bcs_match_fini(&m, drop, NULL);
}

static void test_probe_looks_without_taking(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };
	struct bcs_recv *p = rcv(0, 1, BCS_ANY, 1);

	(void)state;
	p->probe = 1;
	assert_int_equal(bcs_match_init(&m, 2, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_recv(&m, p);
	bcs_match_recv(&m, rcv(0, 1, BCS_ANY, 2));
	bcs_match_send(&m, msg(1, 0, 3, 1, 1));
	assert_int_equal(bcs_match_run(&m, on_match, &l), 2);
	assert_true(l.probe[0]);
	assert_int_equal(l.sreq[0], l.sreq[1]); /* the same send */
	assert_null(m.sends[0]);
	bcs_match_fini(&m, drop, NULL);
}

static void test_arrival_order_and_patience(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };
	uint32_t slices = 0;

	(void)state;
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_ARRIVAL), 0);
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 1));
	bcs_match_send(&m, msg(2, 0, 0, 9, 1));
	bcs_match_send(&m, msg(1, 0, 0, 1, 1));
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.src[0], 2); /* first come */
	bcs_match_fini(&m, drop, NULL);
	/* a rank that polls never blocks: the receive is decided after
	 * BCS_PATIENCE slices, and counted */
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 1));
	bcs_match_send(&m, msg(2, 0, 0, 9, 1));
	m.rk[0].blocked = 1;
	m.rk[1].clock = 1;
	m.rk[2].clock = 9;
	/* slices without polling (rank 1 computes) never count */
	for (int k = 0; k < 3 * (int)BCS_PATIENCE; k++)
		assert_int_equal(bcs_match_run(&m, on_match, &l), 0);
	m.polling = 1;
	while (bcs_match_run(&m, on_match, &l) == 0)
		slices++;
	assert_int_equal(slices, BCS_PATIENCE - 1);
	assert_int_equal(m.forced, 1);
	bcs_match_fini(&m, drop, NULL);
}

/* Replay: the recorded send, whatever the order says; a divergence when
 * it cannot come. */
static int pick_src2(void *ctx, const struct bcs_recv *r, int32_t *src,
		     uint64_t *seq)
{
	(void)ctx;
	if (r->req != 1)
		return 0;
	*src = 2;
	*seq = 1;
	return 1;
}

static void test_replay_takes_the_recorded_send(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };

	(void)state;
	assert_int_equal(bcs_match_init(&m, 3, BCS_ORDER_DETERMINISTIC), 0);
	m.pick = pick_src2;
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 1));
	bcs_match_send(&m, msg(1, 0, 0, 1, 1)); /* the least: not taken */
	m.rk[0].blocked = 1;
	m.rk[1] = (struct bcs_rank_state){ .clock = 1, .sent = 1 };
	m.rk[2] = (struct bcs_rank_state){ .clock = 0 };
	assert_int_equal(bcs_match_run(&m, on_match, &l), 0); /* waits */
	bcs_match_send(&m, msg(2, 0, 0, 9, 1));
	m.rk[2].sent = 1;
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.src[0], 2);
	assert_null(m.diverged);
	/* recorded again: rank 2 made its send 1 and it is taken */
	bcs_match_recv(&m, rcv(0, BCS_ANY, BCS_ANY, 1));
	assert_int_equal(bcs_match_run(&m, on_match, &l), 0);
	assert_non_null(m.diverged);
	bcs_match_fini(&m, drop, NULL);
}

/* MPI_Cancel: an unmatched receive leaves the lists (the send stays
 * for the next receive); a matched one is not found. */
static void test_cancel_takes_back_only_unmatched(void **state)
{
	struct bcs_match m;
	struct log l = { 0 };
	struct bcs_recv *r;

	(void)state;
	assert_int_equal(bcs_match_init(&m, 2, BCS_ORDER_DETERMINISTIC), 0);
	bcs_match_recv(&m, rcv(0, 1, 4, 10));
	bcs_match_recv(&m, rcv(0, 1, 5, 11));
	bcs_match_recv(&m, rcv(0, 1, 5, 12));
	assert_null(bcs_match_cancel(&m, 0, 99)); /* never posted */
	assert_null(bcs_match_cancel(&m, 1, 10)); /* another rank's */
	assert_null(bcs_match_cancel(&m, 7, 10)); /* no such rank */
	r = bcs_match_cancel(&m, 0, 11);
	assert_non_null(r);
	assert_int_equal(r->req, 11);
	assert_null(r->next);
	free(r);
	bcs_match_send(&m, msg(1, 0, 5, 1, 1));
	assert_int_equal(bcs_match_run(&m, on_match, &l), 1);
	assert_int_equal(l.req[0], 12); /* 11 took nothing */
	assert_null(bcs_match_cancel(&m, 0, 12)); /* matched */
	r = bcs_match_cancel(&m, 0, 10);
	assert_non_null(r);
	free(r);
	assert_null(m.recvs[0]);
	bcs_match_fini(&m, drop, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specific_source_is_non_overtaking),
		cmocka_unit_test(
			test_any_source_order_is_independent_of_arrival),
		cmocka_unit_test(
			test_running_rank_with_lower_clock_holds_the_match),
		cmocka_unit_test(
			test_rank_blocked_on_the_receiver_does_not_hold),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_undecided_receive_holds_only_overlapping),
		cmocka_unit_test(test_probe_looks_without_taking),
		cmocka_unit_test(test_arrival_order_and_patience),
		cmocka_unit_test(test_replay_takes_the_recorded_send),
		cmocka_unit_test(test_cancel_takes_back_only_unmatched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
