/*
 * test_membership.c — radix-tree membership (membership.c) on the
 * in-process machine.
 *
 * Covers the initial view, single and simultaneous failures (the epoch
 * grows, the live set shrinks, every survivor agrees and is stable), root
 * failure (the lowest live id takes over), interior failures (children
 * re-link to their nearest live ancestor; sp_tree_links() on every
 * survivor describes one tree spanning them all), rejoining after a kill,
 * sp_report_failure() and what the removed node learns, a 1024-node
 * machine, and determinism: the same scripted scenario on two fresh
 * machines gives the same epochs, live sets and stabilisation times.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine_fixture.h"
#include "sp_engine.h" /* sp_radix_parent, sp_radix_height: the expected tree */

static sp_view_info_t view_of(struct fx *f, uint32_t id)
{
	sp_view_info_t vi;

	assert_int_equal(sp_view(f->w[id], &vi, NULL), 0);
	return vi;
}

static uint32_t first_alive(struct fx *f)
{
	for (uint32_t i = 0; i < f->o.n; i++)
		if (f->w[i] && !f->dead[i])
			return i;
	fail_msg("no node alive");
	return 0;
}

/* Every survivor's links describe one tree over exactly the survivors,
 * rooted at the view's root, where each node hangs off its nearest live
 * radix-tree ancestor (or the root when none is left). */
static void assert_tree_spans_survivors(struct fx *f)
{
	uint32_t n = f->o.n, root = view_of(f, first_alive(f)).root;
	int64_t *par = calloc(n, sizeof(*par));
	int *listed_by = calloc(n, sizeof(*listed_by));
	uint32_t *kids = calloc(n, sizeof(*kids));
	uint32_t height = 0;

	assert_non_null(par);
	assert_non_null(listed_by);
	assert_non_null(kids);
	for (uint32_t x = 0; x < n; x++)
		listed_by[x] = -1;
	for (uint32_t x = 0; x < n; x++) {
		int nk;

		if (!f->w[x] || f->dead[x])
			continue;
		nk = sp_tree_links(f->w[x], &par[x], kids, n);
		assert_true(nk >= 0);
		for (int i = 0; i < nk; i++) {
			uint32_t c = kids[i];

			assert_true(c < n);
			if (f->dead[c] || !f->w[c])
				fail_msg("node %u lists dead node %u as a child",
					 x, c);
			if (listed_by[c] >= 0)
				fail_msg("node %u is a child of both %d and %u",
					 c, listed_by[c], x);
			listed_by[c] = (int)x;
		}
	}
	for (uint32_t x = 0; x < n; x++) {
		uint32_t want, d = 0;

		if (!f->w[x] || f->dead[x])
			continue;
		if (x == root) {
			assert_int_equal(par[x], -1);
			assert_int_equal(listed_by[x], -1);
			continue;
		}
		/* nearest live ancestor in the radix tree, else the root */
		want = root;
		for (uint32_t a = x; a != 0;) {
			a = sp_radix_parent(a, f->o.fanout);
			if (a == root || (!f->dead[a] && f->w[a])) {
				want = a;
				break;
			}
		}
		if (par[x] != (int64_t)want)
			fail_msg("node %u: parent %lld, expected %u", x,
				 (long long)par[x], want);
		assert_int_equal(listed_by[x], (int)want);
		/* following parents reaches the root */
		for (int64_t a = (int64_t)x; a != (int64_t)root; a = par[a]) {
			assert_true(a >= 0);
			assert_true(++d <= n);
		}
		if (d > height)
			height = d;
	}
	assert_int_equal(view_of(f, root).height, height);
	free(par);
	free(listed_by);
	free(kids);
}

/* ---- views ------------------------------------------------------------------ */

static void test_membership_initial_view_holds_everyone(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	sp_view_info_t vi;
	int64_t parent;

	*state = f = fx_new(&o);
	fx_settle(f, 1);
	vi = view_of(f, 5);
	assert_true(vi.epoch > 0);
	assert_int_equal(vi.root, 0);
	assert_int_equal(vi.nlive, 8);
	assert_int_equal(vi.height, sp_radix_height(8, 4));
	assert_tree_spans_survivors(f);
	assert_int_equal(sp_tree_links(f->w[0], &parent, NULL, 0), 4);
	assert_int_equal(parent, -1);
	assert_int_equal(sp_node_id(f->w[5]), 5);
	assert_int_equal(sp_node_count(f->w[5]), 8);
}

static void test_membership_view_wait_times_out_without_change(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 2);
	assert_int_equal(sp_view_wait(f->w[2], e, 0), 0);
	assert_int_equal(sp_view_wait(f->w[2], e + 1, 50), -ETIMEDOUT);
}

static void test_membership_single_failure(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;
	uint64_t e0, e1;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 11);
	e1 = fx_settle(f, e0 + 1);
	assert_true(e1 > e0);
	assert_int_equal(view_of(f, 3).nlive, 15);
	assert_int_equal(view_of(f, 3).root, 0);
	assert_tree_spans_survivors(f);
	/* stable means stable: nothing more happens by itself */
	fx_quiesce(f);
	assert_int_equal(fx_epoch(f, 15), e1);
}

static void test_membership_multiple_simultaneous_failures(void **state)
{
	struct fx_opts o = {.n = 32};
	struct fx *f;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 3);
	fx_kill(f, 9);
	fx_kill(f, 17);
	fx_kill(f, 30);
	fx_settle(f, e0 + 1);
	assert_int_equal(view_of(f, 1).nlive, 28);
	assert_tree_spans_survivors(f);
}

/* A node and its only link to the root die together. */
static void test_membership_parent_and_child_fail_together(void **state)
{
	struct fx_opts o = {.n = 32};
	struct fx *f;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 5);
	fx_kill(f, 4);
	fx_kill(f, 16);
	fx_kill(f, 20);
	fx_settle(f, e0 + 1);
	assert_int_equal(view_of(f, 2).nlive, 28);
	assert_tree_spans_survivors(f);
}

static void test_membership_root_failure_elects_lowest_live(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 1);
	fx_kill(f, 0);
	e = fx_settle(f, e + 1);
	assert_int_equal(view_of(f, 9).root, 1);
	assert_tree_spans_survivors(f);
	/* and again: the new root fails */
	fx_kill(f, 1);
	fx_settle(f, e + 1);
	assert_int_equal(view_of(f, 9).root, 2);
	assert_int_equal(view_of(f, 9).nlive, 14);
	assert_tree_spans_survivors(f);
}

/* The root and the node that would succeed it die together: the next
 * live id must take over. */
static void test_membership_root_and_successor_fail_together(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 3);
	fx_kill(f, 0);
	fx_kill(f, 1);
	fx_settle(f, e + 1);
	assert_int_equal(view_of(f, 9).root, 2);
	assert_int_equal(view_of(f, 9).nlive, 14);
	assert_tree_spans_survivors(f);
}

/* The root and the next two ids die together: the fourth takes over. */
static void test_membership_root_and_two_successors_fail_together(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 3);
	fx_kill(f, 0);
	fx_kill(f, 1);
	fx_kill(f, 2);
	fx_settle(f, e + 1);
	assert_int_equal(view_of(f, 9).root, 3);
	assert_int_equal(view_of(f, 9).nlive, 13);
	assert_tree_spans_survivors(f);
}

static void test_membership_interior_failure_relinks_children(void **state)
{
	struct fx_opts o = {.n = 64};
	struct fx *f;
	int64_t parent;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_tree_links(f->w[5], &parent, NULL, 0), 0);
	assert_int_equal(parent, 4);
	assert_int_equal(sp_tree_links(f->w[20], &parent, NULL, 0), 3);
	assert_int_equal(parent, 16);
	fx_kill(f, 4);  /* children 5, 6, 7 */
	fx_kill(f, 16); /* children 17-19, 20, 24, 28 */
	fx_settle(f, e0 + 1);
	assert_tree_spans_survivors(f);
	assert_int_equal(sp_tree_links(f->w[5], &parent, NULL, 0), 0);
	assert_int_equal(parent, 0);
	/* 20 keeps its own children (21-23) and now hangs off the root */
	assert_int_equal(sp_tree_links(f->w[20], &parent, NULL, 0), 3);
	assert_int_equal(parent, 0);
}

static void test_membership_fanout_2_and_16(void **state)
{
	const uint32_t fanouts[] = {2, 16};

	for (size_t i = 0; i < 2; i++) {
		struct fx_opts o = {.n = 40, .fanout = fanouts[i]};
		struct fx *f;
		uint64_t e0;

		*state = f = fx_new(&o);
		e0 = fx_epoch(f, 0);
		assert_int_equal(view_of(f, 0).height,
				 sp_radix_height(40, fanouts[i]));
		fx_kill(f, 16);
		fx_kill(f, 2);
		fx_settle(f, e0 + 1);
		assert_tree_spans_survivors(f);
		fx_free(f);
		*state = NULL;
	}
}

/* ---- an authenticated machine ------------------------------------------------- */

static const uint8_t key_a[SP_AUTH_KEY_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t key_b[SP_AUTH_KEY_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 9 };

/* Every member holds the key: the machine forms and a node rejoins as on
 * an open one; every message carries a MAC. */
static void test_membership_authenticated_machine_forms_and_rejoins(
	void **state)
{
	struct fx_opts o = {.n = 8, .key = key_a};
	struct fx *f;
	uint64_t e0, e1;

	*state = f = fx_new(&o);
	assert_int_equal(view_of(f, 5).nlive, 8);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 5);
	e1 = fx_settle(f, e0 + 1);
	fx_close(f, 5);
	assert_int_equal(fx_open(f, 5, 1), 0);
	fx_settle(f, e1 + 1);
	assert_int_equal(view_of(f, 5).nlive, 8);
}

/* A process at a member's address without the key, or with another one,
 * is never heard: it cannot join, and the members' view stays without it
 * (its JOINs and anything else it sends are dropped before decoding). */
static void test_membership_node_without_the_key_cannot_join(void **state)
{
	struct fx_opts o = {.n = 4, .key = key_a};
	struct fx *f;
	uint64_t e0, e1;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 3);
	e1 = fx_settle(f, e0 + 1);
	fx_close(f, 3);
	/* another key, then none: (inproc opens without waiting for a
	 * view) no view comes, and the members' stays */
	for (int k = 0; k < 2; k++) {
		assert_int_equal(fx_open_key(f, 3, 1, k ? NULL : key_b, 0), 0);
		assert_int_equal(sp_view_wait(f->w[3], e1, 300), -ETIMEDOUT);
		fx_close(f, 3);
		f->dead[3] = 1;
		assert_int_equal(fx_settle(f, e1), e1);
		assert_int_equal(view_of(f, 0).nlive, 3);
	}
	/* with the key it joins */
	assert_int_equal(fx_open(f, 3, 1), 0);
	fx_settle(f, e1 + 1);
	assert_int_equal(view_of(f, 0).nlive, 4);
}

/* ---- joining ---------------------------------------------------------------- */

static void test_membership_rejoin_after_kill(void **state)
{
	struct fx_opts o = {.n = 16};
	struct fx *f;
	uint64_t e0, e1, e2;
	int64_t parent;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 6);
	e1 = fx_settle(f, e0 + 1);
	fx_close(f, 6);
	assert_int_equal(fx_open(f, 6, 1), 0);
	e2 = fx_settle(f, e1 + 1);
	assert_true(e2 > e1);
	assert_int_equal(view_of(f, 6).nlive, 16);
	assert_int_equal(view_of(f, 6).root, 0);
	assert_tree_spans_survivors(f);
	assert_int_equal(sp_tree_links(f->w[6], &parent, NULL, 0), 0);
	assert_int_equal(parent, 4);
}

/* A node that restarts and knocks before its death was noticed is a new
 * incarnation: the root removes it and adds it back (two views), so every
 * layer sees it leave and join (sp_view_joined changes everywhere), and
 * the joiner is never told it was expelled.  Regression (issue 3): the
 * manager kept treating the new node manager as the old one. */
static void test_membership_restart_before_detection_is_a_new_incarnation(
	void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e0, e2, j0 = 1, j2 = 0, j6 = 0;
	sp_view_info_t vi;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_view_joined(f->w[0], 6, &j0), 0);
	assert_int_equal(j0, 0); /* in the first view: no join */
	/* dies, noticed only in a virtual hour; restarts at once */
	assert_int_equal(sp_machine_kill(f->m, 6, 3600000000000ull), 0);
	f->dead[6] = 1;
	fx_close(f, 6);
	assert_int_equal(fx_open(f, 6, 1), 0);
	e2 = fx_settle(f, e0 + 1);
	/* without it, then with it: two views past e0 */
	assert_int_equal(e2 >> 16, (e0 >> 16) + 2);
	assert_int_equal(sp_view(f->w[6], &vi, NULL), 0);
	assert_int_equal(vi.nlive, 8);
	assert_int_equal(sp_view_joined(f->w[0], 6, &j0), 0);
	assert_int_equal(sp_view_joined(f->w[2], 6, &j2), 0);
	assert_int_equal(j0, e2);
	assert_int_equal(j2, e2);
	/* the new incarnation saw itself join, never expelled */
	assert_int_equal(sp_view_joined(f->w[6], 6, &j6), 0);
	fx_quiesce(f);
	assert_int_equal(fx_epoch(f, 0), e2);
}

static void test_membership_rejoin_of_old_root(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 0);
	fx_kill(f, 0);
	e = fx_settle(f, e + 1);
	fx_close(f, 0);
	assert_int_equal(fx_open(f, 0, 1), 0);
	fx_settle(f, e + 1);
	/* the root does not move back: 1 leads, 0 is a member again */
	assert_int_equal(view_of(f, 0).root, 1);
	assert_int_equal(view_of(f, 0).nlive, 8);
	assert_tree_spans_survivors(f);
}

/* Node 0 (where a joiner knocks first) is gone: the joiner must try the
 * other nodes and get in. */
static void test_membership_rejoin_when_node_0_is_dead(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 1);
	fx_kill(f, 0);
	fx_kill(f, 5);
	e = fx_settle(f, e + 1);
	fx_close(f, 5);
	assert_int_equal(fx_open(f, 5, 1), 0);
	fx_settle(f, e + 1);
	assert_int_equal(view_of(f, 5).root, 1);
	assert_int_equal(view_of(f, 5).nlive, 7);
	assert_tree_spans_survivors(f);
}

static void test_membership_open_rejects_attached_node(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_world_t *w = NULL;
	sp_config_t *cfg = NULL;
	char err[256] = "";

	*state = f = fx_new(&o);
	assert_int_equal(sp_config_create(&cfg), 0);
	assert_int_equal(sp_config_set_node(cfg, 2, 4), 0);
	assert_int_equal(sp_config_set_provider(cfg, "inproc"), 0);
	assert_int_equal(sp_config_set_machine(cfg, f->m), 0);
	assert_true(sp_open(cfg, &w, err, sizeof(err)) < 0);
	assert_null(w);
	assert_true(strlen(err) > 0);
	/* a machine of another size */
	assert_int_equal(sp_config_set_node(cfg, 2, 5), 0);
	assert_int_equal(sp_open(cfg, &w, err, sizeof(err)), -STORM_ECONFIG);
	assert_null(w);
	sp_config_destroy(cfg);
}

/* ---- reported failures --------------------------------------------------------- */

static void test_membership_report_failure_removes_node(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_report_failure(f->w[3], 8), -ERANGE);
	assert_int_equal(sp_report_failure(f->w[3], 6), 0);
	f->dead[6] = 1; /* expelled, though its world runs on */
	fx_settle(f, e0 + 1);
	assert_int_equal(view_of(f, 0).nlive, 7);
	assert_tree_spans_survivors(f);
	/* reporting it again, or a node already gone, changes nothing */
	assert_int_equal(sp_report_failure(f->w[2], 6), 0);
	fx_quiesce(f);
	assert_int_equal(fx_epoch(f, 2), fx_epoch(f, 0));
	assert_int_equal(view_of(f, 2).nlive, 7);
}

/* "-STORM_EEXPELLED: this node was removed from the view; rejoin" — the
 * removed node must be able to find out. */
static void test_membership_expelled_node_learns_it(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	assert_int_equal(sp_report_failure(f->w[3], 6), 0);
	f->dead[6] = 1;
	fx_settle(f, e0 + 1);
	assert_int_equal(sp_view_wait(f->w[6], e0 + 1, 1000), -STORM_EEXPELLED);
}

/* A node that is no longer a member must not be able to remove members. */
static void test_membership_suspect_from_expelled_node_is_ignored(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e0, e1;

	*state = f = fx_new(&o);
	/* The epoch to beat is read before the report: the report only
	 * sends SUSPECT, and the dispatcher thread may have the root install
	 * the new view before sp_report_failure() even returns. */
	e0 = fx_epoch(f, 0);
	/* 6 is removed, and does not know it yet: its view is parked */
	assert_int_equal(sp_machine_hold(f->m, 6, 1), 0);
	assert_int_equal(sp_report_failure(f->w[3], 6), 0);
	f->dead[6] = 1;
	e1 = fx_settle(f, e0 + 1);
	/* it suspects its old parent */
	assert_int_equal(sp_report_failure(f->w[6], 4), 0);
	fx_quiesce(f);
	assert_int_equal(fx_epoch(f, 0), e1);
	assert_int_equal(view_of(f, 0).nlive, 7);
	/* and learns it was removed once its messages flow again */
	assert_int_equal(sp_machine_hold(f->m, 6, 0), 0);
	assert_int_equal(sp_view_wait(f->w[6], e1, FX_WAIT_MS),
			 -STORM_EEXPELLED);
	fx_quiesce(f);
	assert_int_equal(fx_epoch(f, 0), e1);
}

/* ---- scale ------------------------------------------------------------------------ */

static void test_membership_1024_nodes_single_failure_stabilizes(void **state)
{
	struct fx_opts o = {.n = 1024, .gmem = 4096, .nevents = 2};
	struct fx *f;
	sp_view_info_t vi;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	assert_int_equal(view_of(f, 0).height, 5); /* 1023 = 33333 base 4 */
	fx_kill(f, 256); /* interior: 257..511 below it */
	fx_settle(f, e0 + 1);
	vi = view_of(f, 0);
	assert_int_equal(vi.nlive, 1023);
	assert_int_equal(vi.root, 0);
	assert_int_equal(vi.height, 5);
	assert_true(vi.stabilize_ns > 0);
	/* Ts = O_cm + O_cp·H: a view down and acks up take at least one
	 * message latency per level each way, and far less than a second */
	assert_true(vi.stabilize_ns >= 2 * 5 * 2000);
	assert_true(vi.stabilize_ns < 1000000000ull);
	print_message("1024 nodes: stabilised in %llu ns of virtual time, height %u\n",
		      (unsigned long long)vi.stabilize_ns, vi.height);
	assert_tree_spans_survivors(f);
}

/* ---- determinism ------------------------------------------------------------------ */

struct step {
	uint64_t epoch, stabilize_ns, now;
	uint32_t root, nlive;
	char live[256];
};

static void record(struct fx *f, struct step *s)
{
	sp_nodeset_t *live = NULL;
	sp_view_info_t vi;
	uint32_t root = view_of(f, first_alive(f)).root;

	assert_int_equal(sp_nodeset_create(f->o.n, &live), 0);
	assert_int_equal(sp_view(f->w[root], &vi, live), 0);
	s->epoch = vi.epoch;
	s->stabilize_ns = vi.stabilize_ns;
	s->root = vi.root;
	s->nlive = vi.nlive;
	s->now = sp_machine_now(f->m);
	assert_true(sp_nodeset_format(live, s->live, sizeof(s->live)) <
		    (int)sizeof(s->live));
	sp_nodeset_destroy(live);
}

enum { NSTEPS = 6 };

static void scenario(void **state, struct step *out)
{
	struct fx_opts o = {.n = 64};
	struct fx *f;
	uint64_t e;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 0);
	fx_kill(f, 9);
	e = fx_settle(f, e + 1);
	record(f, &out[0]);
	fx_close(f, 9);
	assert_int_equal(fx_open(f, 9, 1), 0);
	e = fx_settle(f, e + 1);
	record(f, &out[1]);
	fx_kill(f, 0);
	e = fx_settle(f, e + 1);
	record(f, &out[2]);
	/* every call that sends or kills reads the machine's clock: the
	 * machine must be quiet first, or the result races the dispatcher */
	fx_kill(f, 16);
	fx_quiesce(f);
	fx_kill(f, 17);
	e = fx_settle(f, e + 1);
	record(f, &out[3]);
	assert_int_equal(sp_report_failure(f->w[5], 40), 0);
	f->dead[40] = 1;
	e = fx_settle(f, e + 1);
	record(f, &out[4]);
	fx_kill(f, 1);
	fx_settle(f, e + 1);
	record(f, &out[5]);
	fx_free(f);
	*state = NULL;
}

static void test_membership_is_deterministic(void **state)
{
	struct step a[NSTEPS], b[NSTEPS];

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	scenario(state, a);
	scenario(state, b);
	for (int i = 0; i < NSTEPS; i++) {
		assert_int_equal(a[i].epoch, b[i].epoch);
		assert_int_equal(a[i].root, b[i].root);
		assert_int_equal(a[i].nlive, b[i].nlive);
		assert_string_equal(a[i].live, b[i].live);
		assert_int_equal(a[i].stabilize_ns, b[i].stabilize_ns);
		assert_int_equal(a[i].now, b[i].now);
		assert_true(a[i].stabilize_ns > 0);
	}
	/* and the script did what it says */
	assert_int_equal(a[0].nlive, 63);
	assert_int_equal(a[1].nlive, 64);
	assert_int_equal(a[2].root, 1);
	assert_int_equal(a[3].nlive, 61);
	assert_int_equal(a[4].nlive, 60);
	assert_int_equal(a[5].root, 2);
	assert_int_equal(a[5].nlive, 59);
}

int main(void)
{
#define T(fn) cmocka_unit_test_teardown(fn, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_membership_initial_view_holds_everyone),
		T(test_membership_view_wait_times_out_without_change),
		T(test_membership_single_failure),
		T(test_membership_multiple_simultaneous_failures),
		T(test_membership_parent_and_child_fail_together),
		T(test_membership_root_failure_elects_lowest_live),
		T(test_membership_root_and_successor_fail_together),
		T(test_membership_root_and_two_successors_fail_together),
		T(test_membership_interior_failure_relinks_children),
		T(test_membership_fanout_2_and_16),
		T(test_membership_authenticated_machine_forms_and_rejoins),
		T(test_membership_node_without_the_key_cannot_join),
		T(test_membership_rejoin_after_kill),
		T(test_membership_restart_before_detection_is_a_new_incarnation),
		T(test_membership_rejoin_of_old_root),
		T(test_membership_rejoin_when_node_0_is_dead),
		T(test_membership_open_rejects_attached_node),
		T(test_membership_report_failure_removes_node),
		T(test_membership_expelled_node_learns_it),
		T(test_membership_suspect_from_expelled_node_is_ignored),
		T(test_membership_1024_nodes_single_failure_stabilizes),
		T(test_membership_is_deterministic),
	};

	return cmocka_run_group_tests_name("membership", tests, NULL, NULL);
}
