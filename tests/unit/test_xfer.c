/*
 * test_xfer.c — XFER-AND-SIGNAL (xfer.c) on the in-process machine.
 *
 * Covers delivery (bytes at the same global address on every destination,
 * the remote event there, the local event at the source), sets with and
 * without the source, subsets (nodes outside the set are never touched),
 * multi-chunk transfers, many concurrent sources, and the all-or-nothing
 * rule around failures: a destination lost while staging aborts the
 * transfer with no global memory changed anywhere, while a node lost after
 * the commit was decided (a destination, or the source itself) still
 * leaves every survivor with the data.  A single destination is one PUT:
 * committed on arrival, never ahead of an earlier transfer to that node,
 * finished by its destination's death.  Bad arguments return their error
 * and change nothing.  Every node's global memory starts with a per-node
 * pattern (fx_fill) so any stray byte shows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_fixture.h"

enum { LEV = 1, REV = 2 };

static uint8_t *payload(size_t len, uint32_t salt)
{
	uint8_t *p = malloc(len);

	assert_non_null(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7u + salt * 131u + (i >> 9));
	return p;
}

/* Node id holds data at gaddr and fx_fill()'s pattern everywhere else. */
static void assert_delivered(struct fx *f, uint32_t id, const uint8_t *data,
			     size_t len, uint64_t gaddr)
{
	size_t size = 0;
	const uint8_t *g = sp_gmem(f->w[id], &size);

	for (size_t off = 0; off < size; off++) {
		int inside = off >= gaddr && off < gaddr + len;
		uint8_t want = inside ? data[off - gaddr] : fx_pattern(id, off);

		if (g[off] != want)
			fail_msg("node %u: byte %zu is %#x, want %#x (%s)", id,
				 off, g[off], want,
				 inside ? "transferred" : "untouched");
	}
}

/* ev fired exactly once at node id. */
static void assert_event_once(struct fx *f, uint32_t id, sp_ev_t ev)
{
	int rc = sp_test_event(f->w[id], ev, FX_WAIT_MS);

	if (rc != 0)
		fail_msg("node %u: event %u: %s", id, ev, storm_strerror(rc));
	fx_assert_no_event(f, id, ev);
}

/* Run one transfer from src to the nodes of ranges and check the outcome
 * on every node of the machine. */
static void xfer_and_check(struct fx *f, uint32_t src, const char *ranges,
			   size_t len, uint64_t gaddr)
{
	sp_nodeset_t *dst = fx_set(f, ranges);
	uint8_t *data = payload(len, src);
	char err[256] = "";

	fx_fill(f);
	assert_int_equal(sp_xfer_and_signal(f->w[src], dst, data, len, gaddr,
					    LEV, REV, err, sizeof(err)),
			 0);
	/* local event: every destination has the bytes in place */
	assert_int_equal(sp_test_event(f->w[src], LEV, FX_WAIT_MS), 0);
	for (uint32_t i = 0; i < f->o.n; i++) {
		if (!sp_nodeset_has(dst, i))
			continue;
		assert_delivered(f, i, data, len, gaddr);
		assert_event_once(f, i, REV);
	}
	/* nothing further arrives anywhere, and outsiders stay untouched */
	fx_quiesce(f);
	for (uint32_t i = 0; i < f->o.n; i++) {
		if (i != src)
			fx_assert_no_event(f, i, LEV);
		if (sp_nodeset_has(dst, i)) {
			assert_delivered(f, i, data, len, gaddr);
		} else {
			fx_assert_pattern(f, i);
			fx_assert_no_event(f, i, REV);
		}
	}
	fx_assert_no_event(f, src, LEV);
	free(data);
	sp_nodeset_destroy(dst);
}

/* ---- delivery -------------------------------------------------------------- */

static void test_xfer_delivers_to_every_destination(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;

	*state = f = fx_new(&o);
	xfer_and_check(f, 3, "0-7", 1000, 128);
}

static void test_xfer_source_outside_its_set(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;

	*state = f = fx_new(&o);
	xfer_and_check(f, 2, "0-1,3-7", 777, 4096);
}

static void test_xfer_source_alone_in_its_set(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;

	*state = f = fx_new(&o);
	xfer_and_check(f, 5, "5", 64, 0);
}

static void test_xfer_to_subset_leaves_others_untouched(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;

	*state = f = fx_new(&o);
	xfer_and_check(f, 0, "3,5-9,14", 300, 1024);
	/* a set that excludes the membership root and the source */
	xfer_and_check(f, 15, "1-2,11", 300, 2048);
}

static void test_xfer_multiple_chunks(void **state)
{
	struct fx_opts o = {.n = 8, .gmem = 64 * 1024, .chunk = 4096};
	struct fx *f;

	*state = f = fx_new(&o);
	xfer_and_check(f, 6, "0-7", 3 * 4096 + 123, 10000);
	/* exactly a multiple of the chunk, and ending at the last byte */
	xfer_and_check(f, 1, "0,2-7", 4 * 4096, 64 * 1024 - 4 * 4096);
}

static void test_xfer_deep_tree_of_256_nodes(void **state)
{
	struct fx_opts o = {.n = 256, .gmem = 16 * 1024, .chunk = 4096};
	struct fx *f;

	*state = f = fx_new(&o);
	xfer_and_check(f, 77, "0-255", 9000, 512);
}

static void test_xfer_signals_count(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t a[16], b[16];

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(sp_xfer_and_signal(f->w[1], all, a, sizeof(a), 0, LEV,
					    REV, NULL, 0),
			 0);
	assert_int_equal(sp_xfer_and_signal(f->w[1], all, b, sizeof(b), 64, LEV,
					    REV, NULL, 0),
			 0);
	/* two transfers: two signals of each event, then none */
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS), 0);
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS), 0);
	fx_assert_no_event(f, 1, LEV);
	for (uint32_t i = 0; i < 4; i++) {
		const uint8_t *g = sp_gmem(f->w[i], NULL);

		assert_int_equal(sp_test_event(f->w[i], REV, FX_WAIT_MS), 0);
		assert_int_equal(sp_test_event(f->w[i], REV, FX_WAIT_MS), 0);
		fx_assert_no_event(f, i, REV);
		assert_memory_equal(g, a, sizeof(a));
		assert_memory_equal(g + 64, b, sizeof(b));
	}
	/* a poll on an idle event, and a bounded wait, both say so */
	assert_int_equal(sp_test_event(f->w[0], 5, 0), -EAGAIN);
	assert_int_equal(sp_test_event(f->w[0], 5, 20), -ETIMEDOUT);
	sp_nodeset_destroy(all);
}

static void test_xfer_without_events(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t a[100];

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	fx_fill(f);
	memset(a, 0x5a, sizeof(a));
	assert_int_equal(sp_xfer_and_signal(f->w[2], all, a, sizeof(a), 800,
					    SP_EV_NONE, SP_EV_NONE, NULL, 0),
			 0);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 4; i++) {
		assert_delivered(f, i, a, sizeof(a), 800);
		for (sp_ev_t ev = 0; ev < f->o.nevents; ev++)
			fx_assert_no_event(f, i, ev);
	}
	sp_nodeset_destroy(all);
}

static void test_xfer_concurrent_sources(void **state)
{
	enum { N = 8, LEN = 2048 };
	struct fx_opts o = {.n = N, .gmem = N * LEN, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t *data[N];

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	/* every node sends its own slot to everyone, all at once */
	for (uint32_t s = 0; s < N; s++) {
		data[s] = payload(LEN, s + 1);
		assert_int_equal(sp_xfer_and_signal(f->w[s], all, data[s], LEN,
						    (uint64_t)s * LEN, LEV, REV,
						    NULL, 0),
				 0);
	}
	for (uint32_t s = 0; s < N; s++)
		assert_int_equal(sp_test_event(f->w[s], LEV, FX_WAIT_MS), 0);
	for (uint32_t i = 0; i < N; i++) {
		const uint8_t *g = sp_gmem(f->w[i], NULL);

		for (uint32_t s = 0; s < N; s++) {
			assert_memory_equal(g + (size_t)s * LEN, data[s], LEN);
			assert_int_equal(sp_test_event(f->w[i], REV, FX_WAIT_MS),
					 0);
		}
		fx_assert_no_event(f, i, REV);
	}
	for (uint32_t s = 0; s < N; s++)
		free(data[s]);
	sp_nodeset_destroy(all);
}

/* ---- all or nothing ---------------------------------------------------------- */

/* Staging cannot finish (messages to node 5 are held), a destination (6)
 * dies: the transfer aborts and no node's global memory changes. */
static void test_xfer_all_or_nothing_when_dest_dies(void **state)
{
	struct fx_opts o = {.n = 8, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t *data;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	data = payload(10000, 9);
	fx_fill(f);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_machine_hold(f->m, 5, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[1], all, data, 10000, 4096,
					    LEV, REV, NULL, 0),
			 0);
	/* everyone but 5 now holds staged data; nothing is decided */
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), -EAGAIN);
	for (uint32_t i = 0; i < 8; i++)
		fx_assert_pattern(f, i);
	fx_kill(f, 6);
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS),
			 -STORM_EABORTED);
	assert_int_equal(sp_machine_hold(f->m, 5, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++) {
		fx_assert_pattern(f, i);
		fx_assert_no_event(f, i, REV);
		fx_assert_no_event(f, i, LEV);
	}
	/* the machine still works: a transfer among the survivors commits */
	sp_nodeset_del(all, 6);
	assert_int_equal(sp_xfer_and_signal(f->w[1], all, data, 10000, 4096,
					    LEV, REV, NULL, 0),
			 0);
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS), 0);
	for (uint32_t i = 0; i < 8; i++)
		if (i != 6)
			assert_delivered(f, i, data, 10000, 4096);
	free(data);
	sp_nodeset_destroy(all);
}

/* Bring a transfer from 1 to all of 8 nodes to the point where the commit
 * is decided and has reached 0, 1, 2, 3 but not 4, the interior node that
 * forwards it to 5, 6, 7.  Returns the epoch before any failure. */
static uint64_t decide_but_stall_at_4(struct fx *f, const sp_nodeset_t *all,
				      const uint8_t *data, size_t len,
				      uint64_t gaddr)
{
	uint64_t e0 = fx_epoch(f, 0);

	fx_fill(f);
	/* stage everywhere, park the XSTAGED answers at the source */
	assert_int_equal(sp_machine_hold(f->m, 1, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[1], all, data, len, gaddr, LEV,
					    REV, NULL, 0),
			 0);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 8; i++)
		fx_assert_pattern(f, i);
	/* let the source decide, but park its decision to 4 */
	assert_int_equal(sp_machine_hold(f->m, 4, 1), 0);
	assert_int_equal(sp_machine_hold(f->m, 1, 0), 0);
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), -EAGAIN);
	for (uint32_t i = 0; i < 4; i++)
		assert_delivered(f, i, data, len, gaddr);
	for (uint32_t i = 4; i < 8; i++)
		fx_assert_pattern(f, i);
	return e0;
}

static void test_xfer_commit_survives_dest_death_after_decide(void **state)
{
	struct fx_opts o = {.n = 8, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t *data;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	data = payload(9000, 3);
	e0 = decide_but_stall_at_4(f, all, data, 9000, 300);
	fx_kill(f, 4);
	/* the source finishes the commit among the survivors */
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS), 0);
	assert_int_equal(sp_machine_hold(f->m, 4, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++) {
		if (i == 4)
			continue;
		assert_delivered(f, i, data, 9000, 300);
		assert_event_once(f, i, REV);
	}
	fx_assert_no_event(f, 1, LEV);
	free(data);
	sp_nodeset_destroy(all);
}

static void test_xfer_commit_survives_source_death_after_decide(void **state)
{
	struct fx_opts o = {.n = 8, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t *data;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	data = payload(9000, 4);
	e0 = decide_but_stall_at_4(f, all, data, 9000, 300);
	/* the source and the node holding the decision both die: 5, 6, 7
	 * staged but never heard the decision; the view's facts carry it */
	fx_kill(f, 1);
	fx_kill(f, 4);
	assert_int_equal(sp_machine_hold(f->m, 4, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++) {
		if (i == 1 || i == 4)
			continue;
		assert_delivered(f, i, data, 9000, 300);
		assert_event_once(f, i, REV);
	}
	free(data);
	sp_nodeset_destroy(all);
}

/* A decision of an older generation that arrives late, along the old
 * tree, at a node already answering the newer one must not take it over.
 * Source 1 to all of 8 (fan-out 4): 4 relays to 5, 6, 7.  The decision
 * (generation 1) is parked at 4; node 2 dies; the source re-decides among
 * the survivors (generation 2), whose tree makes 5 the relay to 6 and 7;
 * 6 is parked so 5 still owes it an XDONE when 4, released, forwards the
 * stale generation-1 decision to 5.  Regression: 5 took the stale one
 * over, dropped 6's generation-2 XDONE and the source never finished
 * (seen on shm as xkill-root's round 2 timing out). */
static void test_xfer_stale_decision_does_not_take_over(void **state)
{
	struct fx_opts o = {.n = 8, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t *data;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	data = payload(9000, 5);
	/* generation 1 reaches 0, 2, 3 and is parked at 4 */
	e0 = decide_but_stall_at_4(f, all, data, 9000, 300);
	/* generation 2 over the survivors of 2; 5's XDONE from 6 parked */
	assert_int_equal(sp_machine_hold(f->m, 6, 1), 0);
	fx_kill(f, 2);
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), -EAGAIN);
	/* 4 forwards the stale generation 1 to 5, then answers generation 2 */
	assert_int_equal(sp_machine_hold(f->m, 4, 0), 0);
	fx_quiesce(f);
	assert_int_equal(sp_machine_hold(f->m, 6, 0), 0);
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++) {
		if (i == 2)
			continue;
		assert_delivered(f, i, data, 9000, 300);
		assert_event_once(f, i, REV);
	}
	fx_assert_no_event(f, 1, LEV);
	free(data);
	sp_nodeset_destroy(all);
}

/* The source dies before deciding: every survivor drops its staged copy. */
static void test_xfer_aborts_when_source_dies_before_decide(void **state)
{
	struct fx_opts o = {.n = 8, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t *data;
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	data = payload(5000, 5);
	fx_fill(f);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_machine_hold(f->m, 2, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[2], all, data, 5000, 0, LEV,
					    REV, NULL, 0),
			 0);
	fx_quiesce(f);
	fx_kill(f, 2);
	assert_int_equal(sp_machine_hold(f->m, 2, 0), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 8; i++) {
		fx_assert_pattern(f, i);
		if (i != 2)
			fx_assert_no_event(f, i, REV);
	}
	free(data);
	sp_nodeset_destroy(all);
}

/* ---- bad input --------------------------------------------------------------- */

/* A rejected call: expected error, a message, and no effect anywhere. */
static void rejected(struct fx *f, uint32_t src, const sp_nodeset_t *dst,
		     const void *buf, size_t len, uint64_t gaddr, sp_ev_t lev,
		     sp_ev_t rev, int want)
{
	char err[256] = "";

	assert_int_equal(sp_xfer_and_signal(f->w[src], dst, buf, len, gaddr,
					    lev, rev, err, sizeof(err)),
			 want);
	assert_true(strlen(err) > 0);
	fx_quiesce(f);
	for (uint32_t i = 0; i < f->o.n; i++) {
		if (!f->w[i] || f->dead[i])
			continue;
		fx_assert_pattern(f, i);
		for (sp_ev_t ev = 0; ev < f->o.nevents; ev++)
			fx_assert_no_event(f, i, ev);
	}
}

static void test_xfer_rejects_range_outside_gmem(void **state)
{
	struct fx_opts o = {.n = 4, .gmem = 8192};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t buf[64] = {1};

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	fx_fill(f);
	rejected(f, 0, all, buf, 64, 8192 - 63, LEV, REV, -EINVAL);
	rejected(f, 0, all, buf, 1, 8192, LEV, REV, -EINVAL);
	rejected(f, 0, all, buf, 64, UINT64_MAX - 10, LEV, REV, -EINVAL);
	rejected(f, 0, all, buf, SIZE_MAX, 8, LEV, REV, -EINVAL);
	sp_nodeset_destroy(all);
}

static void test_xfer_rejects_zero_length(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t buf[8] = {1};

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	fx_fill(f);
	rejected(f, 1, all, buf, 0, 0, LEV, REV, -EINVAL);
	sp_nodeset_destroy(all);
}

static void test_xfer_rejects_empty_or_foreign_set(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *none, *other = NULL;
	uint8_t buf[8] = {1};

	*state = f = fx_new(&o);
	none = fx_set(f, "");
	fx_fill(f);
	rejected(f, 1, none, buf, 8, 0, LEV, REV, -EINVAL);
	/* a set sized for another machine */
	assert_int_equal(sp_nodeset_create(5, &other), 0);
	assert_int_equal(sp_nodeset_add(other, 0), 0);
	rejected(f, 1, other, buf, 8, 0, LEV, REV, -EINVAL);
	sp_nodeset_destroy(none);
	sp_nodeset_destroy(other);
}

static void test_xfer_rejects_bad_events(void **state)
{
	struct fx_opts o = {.n = 4, .nevents = 8};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t buf[8] = {1};

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	fx_fill(f);
	rejected(f, 2, all, buf, 8, 0, 8, REV, -EINVAL);
	rejected(f, 2, all, buf, 8, 0, LEV, 8, -EINVAL);
	rejected(f, 2, all, buf, 8, 0, SP_EV_NONE - 1, SP_EV_NONE, -EINVAL);
	assert_int_equal(sp_test_event(f->w[2], 8, 0), -EINVAL);
	assert_int_equal(sp_test_event(f->w[2], SP_EV_NONE, 0), -EINVAL);
	sp_nodeset_destroy(all);
}

static void test_xfer_rejects_node_not_in_view(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t buf[8] = {1};
	uint64_t e0;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-7");
	e0 = fx_epoch(f, 0);
	fx_kill(f, 6);
	fx_settle(f, e0 + 1);
	fx_fill(f);
	rejected(f, 2, all, buf, 8, 0, LEV, REV, -STORM_ENOTINVIEW);
	sp_nodeset_destroy(all);
}

/* A killed node's handle is dead ("handle closed or node killed"): calls
 * on it fail with -STORM_ECLOSED instead of starting work that can never
 * finish. */
static void test_xfer_on_killed_node_is_eclosed(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *all;
	uint8_t buf[8] = {1};

	*state = f = fx_new(&o);
	all = fx_set(f, "0-3");
	fx_fill(f);
	fx_kill(f, 3);
	assert_int_equal(sp_xfer_and_signal(f->w[3], all, buf, 8, 0, LEV, REV,
					    NULL, 0),
			 -STORM_ECLOSED);
	assert_int_equal(sp_test_event(f->w[3], LEV, 1000), -STORM_ECLOSED);
	fx_quiesce(f);
	for (uint32_t i = 0; i < 4; i++)
		fx_assert_pattern(f, i);
	sp_nodeset_destroy(all);
}

/* ---- one destination: PUT ------------------------------------------------ */

/* A single destination commits on arrival: with every message to the
 * source held (its XDONE among them), the bytes and the remote event are
 * already there — a two-phase transfer would still wait for a decision
 * that needs the source's XSTAGED. */
static void test_xfer_put_commits_on_arrival(void **state)
{
	struct fx_opts o = {.n = 4, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *one;
	uint8_t *data;

	*state = f = fx_new(&o);
	one = fx_set(f, "3");
	data = payload(3000, 5);
	fx_fill(f);
	assert_int_equal(sp_machine_hold(f->m, 1, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[1], one, data, 3000, 64, LEV,
					    REV, NULL, 0),
			 0);
	assert_event_once(f, 3, REV);
	assert_delivered(f, 3, data, 3000, 64);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), -EAGAIN);
	assert_int_equal(sp_machine_hold(f->m, 1, 0), 0);
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS), 0);
	for (uint32_t i = 0; i < 4; i++)
		if (i != 3)
			fx_assert_pattern(f, i);
	free(data);
	sp_nodeset_destroy(one);
}

/* A small transfer started while a larger one to the same node is still
 * staging commits after it, as it would in two phases: the last started
 * is what the node holds. */
static void test_xfer_put_keeps_order_behind_staging(void **state)
{
	struct fx_opts o = {.n = 4, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *one;
	uint8_t *big, *small;

	*state = f = fx_new(&o);
	one = fx_set(f, "2");
	big = payload(10000, 1);
	small = payload(10000, 2);
	fx_fill(f);
	assert_int_equal(sp_machine_hold(f->m, 2, 1), 0);
	/* more than a chunk: two phases */
	assert_int_equal(sp_xfer_and_signal(f->w[0], one, big, 10000, 0, LEV,
					    REV, NULL, 0),
			 0);
	assert_int_equal(sp_xfer_and_signal(f->w[0], one, small, 100, 0, LEV,
					    REV, NULL, 0),
			 0);
	assert_int_equal(sp_machine_hold(f->m, 2, 0), 0);
	assert_int_equal(sp_test_event(f->w[0], LEV, FX_WAIT_MS), 0);
	assert_int_equal(sp_test_event(f->w[0], LEV, FX_WAIT_MS), 0);
	fx_quiesce(f);
	memcpy(big, small, 100);
	assert_delivered(f, 2, big, 10000, 0);
	assert_int_equal(sp_test_event(f->w[2], REV, 0), 0);
	assert_event_once(f, 2, REV);
	free(big);
	free(small);
	sp_nodeset_destroy(one);
}

/* The destination dies before its XDONE: the transfer ends as a commit
 * among the survivors (none), as a decided two-phase one does, and the
 * source's machine goes on. */
static void test_xfer_put_dest_death_finishes_it(void **state)
{
	struct fx_opts o = {.n = 4, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *one;
	uint8_t *data;
	uint64_t e0;

	*state = f = fx_new(&o);
	one = fx_set(f, "3");
	data = payload(2000, 7);
	fx_fill(f);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_machine_hold(f->m, 3, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[1], one, data, 2000, 0, LEV,
					    REV, NULL, 0),
			 0);
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), -EAGAIN);
	fx_kill(f, 3);
	assert_int_equal(sp_test_event(f->w[1], LEV, FX_WAIT_MS), 0);
	fx_settle(f, e0 + 1);
	for (uint32_t i = 0; i < 3; i++) {
		fx_assert_pattern(f, i);
		fx_assert_no_event(f, i, REV);
	}
	sp_nodeset_del(one, 3);
	sp_nodeset_add(one, 2);
	xfer_and_check(f, 1, "2", 2000, 0);
	free(data);
	sp_nodeset_destroy(one);
}

/* A posted PUT lands and signals at its destination, and nothing comes
 * back to the source: no event, no record left behind. */
static void test_xfer_posted_put_lands_unanswered(void **state)
{
	struct fx_opts o = {.n = 4, .chunk = 4096};
	struct fx *f;
	uint8_t *data, *want, *next;

	*state = f = fx_new(&o);
	data = payload(3000, 5);
	want = payload(3000, 5);
	next = payload(3000, 6);
	fx_fill(f);
	assert_int_equal(sp_put_posted(f->w[1], 3, data, 3000, 64, REV), 0);
	memset(data, 0xee, 3000); /* src is free on return */
	assert_event_once(f, 3, REV);
	assert_delivered(f, 3, want, 3000, 64);
	/* a second one goes too: the first left nothing undone */
	assert_int_equal(sp_put_posted(f->w[1], 3, next, 3000, 64, REV), 0);
	assert_event_once(f, 3, REV);
	assert_delivered(f, 3, next, 3000, 64);
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], LEV, 0), -EAGAIN);
	for (uint32_t i = 0; i < 3; i++)
		fx_assert_pattern(f, i);
	free(data);
	free(want);
	free(next);
}

/* A posted PUT never overtakes: behind an undone transfer to the same
 * node it is refused (-EBUSY); and it checks what it is given. */
static void test_xfer_posted_put_refused_behind_undone(void **state)
{
	struct fx_opts o = {.n = 4, .chunk = 4096};
	struct fx *f;
	sp_nodeset_t *one;
	uint8_t *big;

	*state = f = fx_new(&o);
	one = fx_set(f, "2");
	big = payload(10000, 1);
	fx_fill(f);
	assert_int_equal(sp_machine_hold(f->m, 2, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[0], one, big, 10000, 0, LEV,
					    REV, NULL, 0),
			 0);
	assert_int_equal(sp_put_posted(f->w[0], 2, big, 100, 0, REV), -EBUSY);
	/* another node is not behind anything */
	assert_int_equal(sp_put_posted(f->w[0], 3, big, 100, 0, REV), 0);
	assert_int_equal(sp_machine_hold(f->m, 2, 0), 0);
	assert_int_equal(sp_test_event(f->w[0], LEV, FX_WAIT_MS), 0);
	assert_int_equal(sp_put_posted(f->w[0], 2, big, 100, 0, REV), 0);
	assert_int_equal(sp_put_posted(f->w[0], 0, big, 100, 0, REV), -EINVAL);
	assert_int_equal(sp_put_posted(f->w[0], 2, big, 0, 0, REV), -EINVAL);
	assert_int_equal(sp_put_posted(f->w[0], 2, big, 4097, 0, REV),
			 -EINVAL);
	assert_int_equal(sp_put_posted(f->w[0], 9, big, 100, 0, REV), -EINVAL);
	free(big);
	sp_nodeset_destroy(one);
}

int main(void)
{
#define T(fn) cmocka_unit_test_teardown(fn, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_xfer_delivers_to_every_destination),
		T(test_xfer_source_outside_its_set),
		T(test_xfer_source_alone_in_its_set),
		T(test_xfer_to_subset_leaves_others_untouched),
		T(test_xfer_multiple_chunks),
		T(test_xfer_deep_tree_of_256_nodes),
		T(test_xfer_signals_count),
		T(test_xfer_without_events),
		T(test_xfer_concurrent_sources),
		T(test_xfer_all_or_nothing_when_dest_dies),
		T(test_xfer_commit_survives_dest_death_after_decide),
		T(test_xfer_commit_survives_source_death_after_decide),
		T(test_xfer_stale_decision_does_not_take_over),
		T(test_xfer_aborts_when_source_dies_before_decide),
		T(test_xfer_rejects_range_outside_gmem),
		T(test_xfer_rejects_zero_length),
		T(test_xfer_rejects_empty_or_foreign_set),
		T(test_xfer_rejects_bad_events),
		T(test_xfer_rejects_node_not_in_view),
		T(test_xfer_on_killed_node_is_eclosed),
		T(test_xfer_put_commits_on_arrival),
		T(test_xfer_put_keeps_order_behind_staging),
		T(test_xfer_put_dest_death_finishes_it),
		T(test_xfer_posted_put_lands_unanswered),
		T(test_xfer_posted_put_refused_behind_undone),
	};

	return cmocka_run_group_tests_name("xfer", tests, NULL, NULL);
}
