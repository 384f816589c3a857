/*
 * test_bcs_cut.c — a checkpoint's cut of a BCS-MPI job on several nodes
 * (node/bcs_cut.c), on an engine's job record: a node told to take an
 * epoch asks for it in its next section; the round carrying the ask
 * holds the job until released; an epoch whose cut passed without this
 * node is refused, a newer one asked anew; a hold with no order here
 * runs out.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bcs.h"
#include "bcs_int.h"
#include "bcs_wire.h"

struct two {
	struct nm_bcs e;
	struct bcs_job j;
};

static void two_nodes(struct two *t)
{
	memset(t, 0, sizeof(*t));
	t->j.id = 9;
	t->j.nnodes = 2;
	t->j.e = &t->e;
	t->e.jobs = &t->j;
}

/* The epoch this node's next section asks for (0: none). */
static uint32_t asked(const struct bcs_job *j)
{
	uint8_t sec[64];
	size_t len = 0, off = 0;
	struct bcs_witem it;
	char why[64];

	assert_int_equal(bcs_cut_request(j, sec, sizeof(sec), &len), 0);
	if (!len)
		return 0;
	assert_int_equal(bcs_wire_next(sec, len, &off, &it, why, sizeof(why)),
			 1);
	assert_int_equal(it.type, BCS_W_CUT);
	assert_int_equal(off, len);
	return it.u.cut.epoch;
}

static void test_cut_after_the_round_that_asks(void **state)
{
	struct two t;

	(void)state;
	two_nodes(&t);
	assert_int_equal(asked(&t.j), 0);
	/* told to take epoch 1: asked in the next section, not held yet */
	assert_int_equal(nm_bcs_cut(&t.e, 9, 1), 0);
	assert_true(bcs_cut_wanted(&t.j));
	assert_int_equal(asked(&t.j), 1);
	assert_false(nm_bcs_at_cut(&t.e, 9, 1));
	/* a round without an ask changes nothing; the one with it holds */
	bcs_cut_round(&t.j, 0);
	assert_int_equal(t.j.cut, 0);
	bcs_cut_round(&t.j, 1);
	assert_int_equal(t.j.cut, 1);
	assert_false(bcs_cut_wanted(&t.j));
	assert_int_equal(asked(&t.j), 0);
	assert_int_equal(nm_bcs_cut(&t.e, 9, 1), 1);
	assert_true(nm_bcs_at_cut(&t.e, 9, 1));
	assert_false(nm_bcs_at_cut(&t.e, 9, 2));
	nm_bcs_cut_release(&t.e, 9);
	assert_int_equal(t.j.cut, 0);
	assert_int_equal(t.j.ckpt_want, 0);
	/* epoch 1 again: its cut passed, a capture now is not of it */
	assert_int_equal(nm_bcs_cut(&t.e, 9, 1), 1);
	assert_false(nm_bcs_at_cut(&t.e, 9, 1));
	assert_int_equal(asked(&t.j), 0);
	/* the next one is asked for */
	assert_int_equal(nm_bcs_cut(&t.e, 9, 2), 0);
	assert_int_equal(asked(&t.j), 2);
}

static void test_a_hold_for_another_epoch_is_given_up(void **state)
{
	struct two t;

	(void)state;
	two_nodes(&t);
	/* another node asked: held before this node's order came */
	bcs_cut_round(&t.j, 4);
	assert_int_equal(t.j.cut, 4);
	/* the order here is for a newer epoch (4 was aborted) */
	assert_int_equal(nm_bcs_cut(&t.e, 9, 5), 0);
	assert_int_equal(t.j.cut, 0);
	assert_int_equal(asked(&t.j), 5);
	/* held with no order: it runs out */
	bcs_cut_round(&t.j, 5);
	t.j.ckpt_want = 0;
	bcs_cut_expire(&t.j);
	assert_int_equal(t.j.cut, 5);
	t.j.cut_since_ms = bcs_mono_ms() - NM_BCS_CUT_HOLD_MS - 1;
	bcs_cut_expire(&t.j);
	assert_int_equal(t.j.cut, 0);
	assert_false(nm_bcs_at_cut(&t.e, 9, 5));
}

static void test_one_node_needs_no_cut(void **state)
{
	struct two t;

	(void)state;
	two_nodes(&t);
	t.j.nnodes = 1;
	assert_int_equal(nm_bcs_cut(&t.e, 9, 1), 1);
	assert_true(nm_bcs_at_cut(&t.e, 9, 1));
	assert_int_equal(asked(&t.j), 0);
	/* a job not here: nothing to wait for (the agent says so) */
	assert_int_equal(nm_bcs_cut(&t.e, 10, 1), 1);
	assert_false(nm_bcs_at_cut(&t.e, 10, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_after_the_round_that_asks),
		cmocka_unit_test(test_a_hold_for_another_epoch_is_given_up),
		cmocka_unit_test(test_one_node_needs_no_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
