/*
 * test_nm_quiet.c — a node manager's quiet flag and its wake of an idle
 * strobe (node/quiet.c) over the in-process machine: world 0 is the
 * manager, worlds 1 and 2 node managers.  fx_quiesce, never a sleep,
 * waits for delivery.
 *
 * Covers: gv_quiet starts 0 and follows the node's work; work while the
 * last block says the strobe idles signals ST_EV_WAKE to the manager,
 * with the node's id in its wake word, once per idle block; no wake
 * while the strobe strobes, or without work; the wake's local
 * completion is taken; a node out of work lets the manager's
 * COMPARE-AND-WRITE over every node find them all quiet.
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

#include "machine_fixture.h"
#include "quiet.h"

#define N 3

struct t {
	struct fx *f;
	st_layout_t lay;
	struct nm_quiet q[N]; /* 1 and 2 */
};

static int setup(void **state)
{
	struct fx_opts o = { .n = N, .gmem = 64 * 1024,
			     .nevents = ST_EV_COUNT };
	struct t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	*state = t;
	/* gvars where the real layout has them, on a smaller memory */
	t->lay.gv_quiet = 4096;
	t->lay.wake = 4096 + 64;
	t->f = fx_new(&o);
	fx_settle(t->f, 0);
	for (uint32_t i = 1; i < N; i++)
		assert_int_equal(nm_quiet_init(&t->q[i], t->f->w[i], &t->lay,
					       1),
				 0);
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	if (!t)
		return 0;
	for (uint32_t i = 1; i < N; i++)
		nm_quiet_fini(&t->q[i]);
	fx_free(t->f);
	free(t);
	*state = NULL;
	return 0;
}

static int64_t quiet_of(struct t *t, uint32_t i)
{
	int64_t v = -1;

	assert_int_equal(sp_gvar_read(t->f->w[i], t->lay.gv_quiet, &v), 0);
	return v;
}

/* ST_EV_WAKE signals the manager took since the last call. */
static int wakes(struct t *t)
{
	int n = 0;

	fx_quiesce(t->f);
	for (uint32_t i = 1; i < N; i++)
		nm_quiet_events(&t->q[i]);
	while (sp_test_event(t->f->w[0], ST_EV_WAKE, 0) == 0)
		n++;
	return n;
}

/* The manager's COMPARE-AND-WRITE: gv_quiet 1 on nodes 1 and 2. */
static int all_quiet(struct t *t)
{
	sp_nodeset_t *s = fx_set(t->f, "1-2");
	int rc = sp_compare_and_write(t->f->w[0], s, t->lay.gv_quiet,
				      SP_CMP_EQ, 1, SP_NO_WRITE, 0, 5000);

	sp_nodeset_destroy(s);
	assert_true(rc == 0 || rc == 1);
	return rc;
}

static void test_gv_quiet_follows_work(void **state)
{
	struct t *t = *state;
	st_hb_t hb = { .slice = 10 };

	assert_int_equal(quiet_of(t, 1), 0);
	assert_int_equal(all_quiet(t), 0);
	nm_quiet_update(&t->q[1], 0, &hb);
	assert_int_equal(quiet_of(t, 1), 1);
	assert_int_equal(all_quiet(t), 0); /* node 2 still has work */
	nm_quiet_update(&t->q[2], 0, &hb);
	assert_int_equal(all_quiet(t), 1);
	nm_quiet_update(&t->q[2], 1, &hb);
	assert_int_equal(quiet_of(t, 2), 0);
	assert_int_equal(all_quiet(t), 0);
	/* the strobe strobes: work wakes nobody */
	assert_int_equal(wakes(t), 0);
}

static void test_work_wakes_an_idle_strobe_once_per_block(void **state)
{
	struct t *t = *state;
	st_hb_t idle = { .slice = 100, .flags = ST_HB_IDLE };
	int64_t word = -1;

	nm_quiet_update(&t->q[1], 0, &idle);
	assert_int_equal(wakes(t), 0); /* no work: no wake */
	nm_quiet_update(&t->q[1], 1, &idle);
	assert_int_equal(quiet_of(t, 1), 0);
	assert_int_equal(wakes(t), 1);
	assert_int_equal(sp_gvar_read(t->f->w[0], t->lay.wake, &word), 0);
	assert_int_equal(word, 1);
	assert_int_equal(t->q[1].wakes, 1);
	/* every handler calls it: one wake per idle block */
	nm_quiet_update(&t->q[1], 1, &idle);
	nm_quiet_update(&t->q[1], 1, &idle);
	assert_int_equal(wakes(t), 0);
	/* the next idle block (this node's wake was lost, or it came
	 * after the idling began): again */
	idle.slice = 132;
	nm_quiet_update(&t->q[1], 1, &idle);
	assert_int_equal(wakes(t), 1);
	/* node 2 too, with its own id */
	nm_quiet_update(&t->q[2], 1, &idle);
	assert_int_equal(wakes(t), 1);
	assert_int_equal(sp_gvar_read(t->f->w[0], t->lay.wake, &word), 0);
	assert_int_equal(word, 2);
	/* its local completion was taken */
	assert_int_equal(sp_test_event(t->f->w[2], ST_EV_LOCAL_WAKE, 0),
			 -EAGAIN);
}

static void test_no_wake_once_the_strobe_is_back(void **state)
{
	struct t *t = *state;
	st_hb_t idle = { .slice = 200, .flags = ST_HB_IDLE };
	st_hb_t back = { .slice = 201 };

	nm_quiet_update(&t->q[1], 1, &idle);
	assert_int_equal(wakes(t), 1);
	nm_quiet_update(&t->q[1], 1, &back);
	nm_quiet_update(&t->q[1], 0, &back);
	nm_quiet_update(&t->q[1], 1, &back);
	assert_int_equal(wakes(t), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gv_quiet_follows_work,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_work_wakes_an_idle_strobe_once_per_block, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_no_wake_once_the_strobe_is_back, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
