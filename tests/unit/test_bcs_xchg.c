/*
 * test_bcs_xchg.c — the BCS engine's records between nodes
 * (node/bcs_xchg.c) over the in-process machine: three worlds in one
 * process, layout.bcs at BASE (two buffers of BLEN per sender), the
 * engine's events.  Each node runs its boundary as the engine does
 * (take what arrived, build, flush); sp_machine_quiesce, never a sleep,
 * waits for delivery.
 *
 * Covers: a section arrives whole with its job and round; one sender's
 * records are taken in order whatever the receiver's pace; a third
 * record waits until the first is acknowledged; an acknowledgement goes
 * alone when owed, needs none back, and is never overwritten unread; a
 * restarted sender's new incarnation is taken and its old one's records
 * are not; bcs_xchg_reset lets a channel start over.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <storm_proto.h>

#include "bcs_xchg.h"
#include "machine_fixture.h"

#define N 3
#define BASE 8192u /* layout.bcs: not at 0, so a wrong base shows */
#define BLEN 1024u /* layout.bcs_len */
#define MAXS 64

struct got {
	int n;
	struct {
		uint32_t from, job;
		uint64_t round;
		size_t len;
		uint8_t data[BLEN];
	} s[MAXS];
};

struct t {
	struct fx *f;
	struct bcs_xchg x[N];
	struct got got[N];
};

static uint8_t pattern(uint32_t job, uint64_t round, size_t i)
{
	return (uint8_t)(job * 31u + round * 7u + i);
}

static void on_section(void *ctx, uint32_t from, uint32_t job, uint32_t inc,
		       uint64_t round, const uint8_t *data, size_t len)
{
	struct got *g = ctx;

	assert_int_equal(inc, job % 3); /* put()'s */
	assert_true(g->n < MAXS);
	assert_true(len <= BLEN);
	g->s[g->n].from = from;
	g->s[g->n].job = job;
	g->s[g->n].round = round;
	g->s[g->n].len = len;
	memcpy(g->s[g->n].data, data, len);
	g->n++;
}

static int setup(void **state)
{
	struct fx_opts o = { .n = N, .gmem = 64 * 1024,
			     .nevents = ST_EV_COUNT };
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	*state = t;
	assert_true(BASE + 2u * N * BLEN <= o.gmem);
	assert_true(ST_EV_BCS < o.nevents && ST_EV_LOCAL_BCS < o.nevents);
	t->f = fx_new(&o);
	fx_settle(t->f, 0);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(bcs_xchg_init(&t->x[i], t->f->w[i], BASE,
					       BLEN, i, N),
				 0);
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	if (!t)
		return 0;
	for (uint32_t i = 0; i < N; i++)
		bcs_xchg_fini(&t->x[i]);
	fx_free(t->f);
	free(t);
	*state = NULL;
	return 0;
}

/* Node from appends a section of len bytes (job, round) to its record
 * for to. */
static int put(struct t *t, uint32_t from, uint32_t to, uint32_t job,
	       uint64_t round, size_t len)
{
	uint8_t data[BLEN];

	assert_true(len <= sizeof(data));
	for (size_t i = 0; i < len; i++)
		data[i] = pattern(job, round, i);
	return bcs_xchg_put(&t->x[from], to, job, job % 3, round, data, len);
}

/* Node i takes its completions and what arrived. */
static void take(struct t *t, uint32_t i)
{
	bcs_xchg_events(&t->x[i]);
	bcs_xchg_receive(&t->x[i], on_section, &t->got[i]);
}

/* Every transfer started is delivered and completed at its sender. */
static void deliver(struct t *t)
{
	fx_quiesce(t->f);
	for (uint32_t i = 0; i < N; i++) {
		bcs_xchg_events(&t->x[i]);
		assert_int_equal(t->x[i].inflight, 0);
	}
}

/* Node i's k-th section taken is (from, job, round) with len bytes. */
static void assert_section(struct t *t, uint32_t i, int k, uint32_t from,
			   uint32_t job, uint64_t round, size_t len)
{
	const struct got *g = &t->got[i];

	assert_true(k < g->n);
	assert_int_equal(g->s[k].from, from);
	assert_int_equal(g->s[k].job, job);
	assert_int_equal(g->s[k].round, round);
	assert_int_equal(g->s[k].len, len);
	for (size_t b = 0; b < len; b++)
		if (g->s[k].data[b] != pattern(job, round, b))
			fail_msg("node %u, section %d: byte %zu is %#x", i, k,
				 b, g->s[k].data[b]);
}

/* Boundaries of every node with nothing to say: no record goes. */
static void assert_quiet(struct t *t, int boundaries)
{
	uint64_t sent[N];

	for (uint32_t i = 0; i < N; i++)
		sent[i] = t->x[i].sent_records;
	for (int b = 0; b < boundaries; b++) {
		for (uint32_t i = 0; i < N; i++) {
			take(t, i);
			assert_int_equal(bcs_xchg_flush(&t->x[i]), 0);
		}
		deliver(t);
	}
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(t->x[i].sent_records, sent[i]);
}

static void test_section_arrives_whole_with_job_and_round(void **state)
{
	struct t *t = *state;
	size_t full = bcs_xchg_room(&t->x[0], 2);
	struct bcs_rec_hdr h;

	assert_true(full > 0 && full <= BLEN);
	assert_int_equal(put(t, 0, 1, 7, 3, 100), 0);
	assert_int_equal(put(t, 0, 1, 8, 3, 0), 0);
	/* to node 2: a section as large as the record holds */
	assert_int_equal(put(t, 0, 2, 7, 3, full), 0);
	assert_int_equal(bcs_xchg_room(&t->x[0], 2), 0);
	assert_int_equal(put(t, 0, 2, 9, 3, 1), -ENOSPC);
	/* nothing to a node not in the world, nor to oneself */
	assert_int_equal(put(t, 0, 0, 7, 3, 8), -ENOSPC);
	assert_int_equal(put(t, 0, N, 7, 3, 8), -ENOSPC);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 2);
	/* until this boundary's transfers complete, no record is built */
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 0);
	deliver(t);
	take(t, 1);
	take(t, 2);
	assert_int_equal(t->got[1].n, 2);
	assert_section(t, 1, 0, 0, 7, 3, 100);
	assert_section(t, 1, 1, 0, 8, 3, 0);
	assert_int_equal(t->got[2].n, 1);
	assert_section(t, 2, 0, 0, 7, 3, full);
	/* it sits in the sender's first buffer (seq 1) at the receiver */
	assert_int_equal(sp_gmem_read(t->f->w[1], BASE + (0 * 2 + 1) * BLEN,
				      &h, sizeof(h)),
			 0);
	assert_int_equal(h.magic, BCS_REC_MAGIC);
	assert_int_equal(h.from, 0);
	assert_int_equal(h.seq, 1);
	assert_int_equal(h.nsect, 2);
	/* taken once */
	take(t, 1);
	take(t, 2);
	assert_int_equal(t->got[1].n, 2);
	assert_int_equal(t->got[2].n, 1);
	assert_int_equal(t->got[0].n, 0);
}

static void test_records_from_one_sender_are_taken_in_order(void **state)
{
	struct t *t = *state;
	uint64_t r = 0;

	/* node 1 takes only every third boundary: records pile up in both
	 * buffers, and flow control holds node 0 back in between */
	for (int b = 0; b < 40; b++) {
		take(t, 0);
		if (bcs_xchg_ready(&t->x[0], 1)) {
			r++;
			assert_int_equal(put(t, 0, 1, 5, r, 8 * (r % 5) + 3),
					 0);
			assert_int_equal(put(t, 0, 1, 6, r, 1), 0);
		}
		bcs_xchg_flush(&t->x[0]);
		if (b % 3 == 2)
			take(t, 1);
		bcs_xchg_flush(&t->x[1]);
		deliver(t);
	}
	take(t, 1);
	assert_true(r >= 20);
	assert_int_equal(t->got[1].n, (int)(2 * r));
	for (uint64_t k = 0; k < r; k++) {
		assert_section(t, 1, (int)(2 * k), 0, 5, k + 1,
			       8 * ((k + 1) % 5) + 3);
		assert_section(t, 1, (int)(2 * k + 1), 0, 6, k + 1, 1);
	}
}

static void test_third_record_waits_for_the_acknowledgement(void **state)
{
	struct t *t = *state;

	assert_int_equal(put(t, 0, 1, 1, 1, 16), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 0);
	/* the second buffer is free */
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 1);
	assert_int_equal(put(t, 0, 1, 1, 2, 16), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 0);
	/* the first holds record 1, not acknowledged: nothing goes, not
	 * even an empty section */
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 0);
	assert_int_equal(bcs_xchg_room(&t->x[0], 1), 0);
	assert_int_equal(put(t, 0, 1, 1, 3, 16), -ENOSPC);
	assert_int_equal(put(t, 0, 1, 1, 3, 0), -ENOSPC);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 0);
	/* node 2 is another channel: free */
	assert_int_equal(bcs_xchg_ready(&t->x[0], 2), 1);
	/* node 1 takes both, in order; node 0 does not know yet */
	take(t, 1);
	assert_int_equal(t->got[1].n, 2);
	assert_section(t, 1, 0, 0, 1, 1, 16);
	assert_section(t, 1, 1, 0, 1, 2, 16);
	take(t, 0);
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 0);
	/* node 1's record carries the acknowledgement; until node 0 takes
	 * it, still nothing */
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 0);
	take(t, 0);
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 1);
	assert_int_equal(put(t, 0, 1, 1, 3, 16), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 1);
	assert_int_equal(t->got[1].n, 3);
	assert_section(t, 1, 2, 0, 1, 3, 16);
}

static void test_acknowledgement_alone_when_owed_needs_none(void **state)
{
	struct t *t = *state;

	/* a record with sections: node 1 owes an acknowledgement */
	assert_int_equal(put(t, 0, 1, 1, 1, 24), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 1);
	/* nothing to say but the acknowledgement: it goes alone, to node 0
	 * only (node 2 is owed nothing) */
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(t->got[0].n, 0);
	/* it needs none back: no record flows any more */
	assert_quiet(t, 4);
	/* with something to say, the acknowledgement rides along: one
	 * record, not two */
	assert_int_equal(put(t, 0, 1, 1, 2, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 1);
	assert_int_equal(put(t, 1, 0, 1, 2, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(t->got[0].n, 1);
	assert_section(t, 0, 0, 1, 1, 2, 8);
	/* node 0 took sections: it owes one acknowledgement alone, then
	 * quiet again */
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	assert_quiet(t, 4);
	assert_int_equal(t->got[1].n, 2);
}

/* An acknowledgement alone sits in a buffer too.  A sender with two
 * records of sections to send right after it must not overwrite it
 * before the destination read it: the destination, waiting for it,
 * would take nothing from that sender ever again. */
static void test_acknowledgement_alone_is_not_lost(void **state)
{
	struct t *t = *state;
	uint64_t r = 0;

	assert_int_equal(put(t, 0, 1, 1, 1, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 1);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1); /* the ack alone */
	deliver(t);
	/* node 0 is busy for a while; node 1 sends what it can */
	while (bcs_xchg_ready(&t->x[1], 0)) {
		assert_true(r < 4);
		r++;
		assert_int_equal(put(t, 1, 0, 2, r, 8), 0);
		assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
		deliver(t);
	}
	assert_int_equal(r, 2);
	take(t, 0);
	assert_int_equal(t->got[0].n, 2);
	assert_section(t, 0, 0, 1, 2, 1, 8);
	assert_section(t, 0, 1, 1, 2, 2, 8);
	/* and the channel goes on */
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 1);
	assert_int_equal(bcs_xchg_ready(&t->x[1], 0), 1);
	assert_int_equal(put(t, 1, 0, 2, 3, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(t->got[0].n, 3);
	assert_section(t, 0, 2, 1, 2, 3, 8);
}

/* Node id restarts: a new engine (a new incarnation) and, as for a new
 * process, fresh global memory. */
static void restart(struct t *t, uint32_t id)
{
	size_t size = 0;
	uint8_t *g = sp_gmem(t->f->w[id], &size);

	assert_true(size >= BASE + 2u * N * BLEN);
	bcs_xchg_fini(&t->x[id]);
	memset(g + BASE, 0, 2u * N * BLEN);
	assert_int_equal(bcs_xchg_init(&t->x[id], t->f->w[id], BASE, BLEN, id,
				       N),
			 0);
}

static void test_new_incarnation_taken_stale_one_not(void **state)
{
	struct t *t = *state;
	uint64_t old = t->x[1].inc;

	/* records 1 and 2 of node 1 taken by node 0 */
	for (uint64_t r = 1; r <= 2; r++) {
		assert_int_equal(put(t, 1, 0, 4, r, 8), 0);
		assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
		deliver(t);
		take(t, 0);
		take(t, 1);
	}
	assert_int_equal(t->got[0].n, 2);
	/* node 1 restarts: its record 1 of the new incarnation lands in
	 * the buffer of the old one's record 1; record 2 of the old one
	 * is still in the other buffer */
	restart(t, 1);
	assert_true(t->x[1].inc != old);
	assert_int_equal(put(t, 1, 0, 4, 100, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(t->got[0].n, 3);
	assert_section(t, 0, 2, 1, 4, 100, 8);
	/* the old record 2 is not taken again, the new one's record 2
	 * (over it) is */
	take(t, 0);
	assert_int_equal(t->got[0].n, 3);
	assert_int_equal(put(t, 1, 0, 4, 101, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(t->got[0].n, 4);
	assert_section(t, 0, 3, 1, 4, 101, 8);
}

static void test_reset_lets_a_channel_start_over(void **state)
{
	struct t *t = *state;

	/* node 1's record 1 taken by node 0; its record 2 lands but node 1
	 * dies before node 0 takes it */
	assert_int_equal(put(t, 1, 0, 4, 1, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(put(t, 1, 0, 4, 2, 8), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	/* node 0 sent node 1 two records it never took: node 0 is stuck */
	for (uint64_t r = 1; r <= 2; r++) {
		assert_int_equal(put(t, 0, 1, 4, r, 8), 0);
		assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
		deliver(t);
	}
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 0);
	/* the view says node 1 left: node 0 forgets it both ways */
	bcs_xchg_reset(&t->x[0], 1);
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 1);
	/* what the old incarnation left in node 0's memory stays there,
	 * and is not taken: neither record 1 (taken before) nor record 2 */
	take(t, 0);
	assert_int_equal(t->got[0].n, 1);
	assert_section(t, 0, 0, 1, 4, 1, 8);
	restart(t, 1);
	take(t, 0);
	assert_int_equal(t->got[0].n, 1);
	/* both directions start over from record 1 */
	assert_int_equal(put(t, 0, 1, 5, 1, 16), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	assert_int_equal(put(t, 1, 0, 5, 1, 16), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	take(t, 1);
	assert_int_equal(t->got[0].n, 2);
	assert_section(t, 0, 1, 1, 5, 1, 16);
	assert_int_equal(t->got[1].n, 1);
	assert_section(t, 1, 0, 0, 5, 1, 16);
	/* and flow control works on the new channel: two records, then an
	 * acknowledgement */
	assert_int_equal(put(t, 0, 1, 5, 2, 16), 0);
	assert_int_equal(bcs_xchg_flush(&t->x[0]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 0);
	take(t, 1);
	assert_int_equal(bcs_xchg_flush(&t->x[1]), 1);
	deliver(t);
	take(t, 0);
	assert_int_equal(bcs_xchg_ready(&t->x[0], 1), 1);
	assert_int_equal(t->got[1].n, 2);
	assert_section(t, 1, 1, 0, 5, 2, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_section_arrives_whole_with_job_and_round, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_records_from_one_sender_are_taken_in_order,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_third_record_waits_for_the_acknowledgement,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_acknowledgement_alone_when_owed_needs_none,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_acknowledgement_alone_is_not_lost, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_new_incarnation_taken_stale_one_not, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_reset_lets_a_channel_start_over, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
