/*
 * test_inproc.c — the in-process machine itself (inproc.c): argument
 * checks of its fault-injection controls, and that they do what the
 * header says — delay adds virtual latency, drop loses messages, hold
 * parks them until released, kill is reported once — and that virtual
 * time is deterministic: the same calls on two fresh machines end at the
 * same virtual instant, provided the driver lets the machine go quiet
 * (sp_machine_quiesce) before each call that sends or kills — such a call
 * reads the machine clock, which the dispatcher thread advances.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "machine_fixture.h"

static void test_machine_rejects_bad_arguments(void **state)
{
	struct fx_opts o = {.n = 4};
	sp_machine_t *m = (sp_machine_t *)0x1;
	struct fx *f;

	assert_int_equal(sp_machine_create(0, NULL, &m), -EINVAL);
	assert_int_equal(sp_machine_create(65537, NULL, &m), -EINVAL);
	assert_int_equal(sp_machine_create(4, NULL, NULL), -EINVAL);
	assert_ptr_equal(m, (sp_machine_t *)0x1);
	*state = f = fx_new(&o);
	assert_int_equal(sp_machine_kill(f->m, 4, 0), -ERANGE);
	assert_int_equal(sp_machine_kill(NULL, 0, 0), -ERANGE);
	assert_int_equal(sp_machine_hold(f->m, 4, 1), -ERANGE);
	assert_int_equal(sp_machine_drop(f->m, 4, 0, 0.5), -EINVAL);
	assert_int_equal(sp_machine_drop(f->m, 0, 4, 0.5), -EINVAL);
	assert_int_equal(sp_machine_drop(f->m, 0, 1, -0.1), -EINVAL);
	assert_int_equal(sp_machine_drop(f->m, 0, 1, 1.5), -EINVAL);
	assert_int_equal(sp_machine_delay(f->m, 4, 0, 1), -EINVAL);
	assert_int_equal(sp_machine_delay(f->m, UINT32_MAX, 4, 1), -EINVAL);
	assert_int_equal(sp_machine_quiesce(f->m, 1000), 0);
}

static void test_machine_kill_is_once_per_attached_node(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	uint64_t e0;

	*state = f = fx_new(&o);
	e0 = fx_epoch(f, 0);
	fx_kill(f, 2);
	assert_int_equal(sp_machine_kill(f->m, 2, 0), -ENOENT);
	fx_settle(f, e0 + 1);
	fx_close(f, 2);
	/* no world attached */
	assert_int_equal(sp_machine_kill(f->m, 2, 0), -ENOENT);
}

/* Virtual time one COMPARE-AND-WRITE from node 1 over {0, 1} takes. */
static uint64_t caw_cost(struct fx *f)
{
	sp_nodeset_t *s = fx_set(f, "0-1");
	uint64_t t0, t1;

	fx_quiesce(f);
	t0 = sp_machine_now(f->m);
	assert_int_equal(sp_compare_and_write(f->w[1], s, 0, SP_CMP_GE, 0, 8, 1,
					      FX_WAIT_MS),
			 1);
	fx_quiesce(f);
	t1 = sp_machine_now(f->m);
	sp_nodeset_destroy(s);
	assert_true(t1 > t0);
	return t1 - t0;
}

static void test_machine_delay_adds_virtual_latency(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	uint64_t base, slow;

	*state = f = fx_new(&o);
	base = caw_cost(f);
	/* every message 1 -> 0 takes 5 ms longer: the request at least */
	assert_int_equal(sp_machine_delay(f->m, 1, 0, 5000000), 0);
	slow = caw_cost(f);
	assert_true(slow >= base + 5000000);
	assert_true(slow < base + 4 * 5000000ull);
}

static void test_machine_drop_loses_messages(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *s;

	*state = f = fx_new(&o);
	s = fx_set(f, "0-3");
	/* every message from 2 to the sequencer (0) is lost */
	assert_int_equal(sp_machine_drop(f->m, 2, 0, 1.0), 0);
	assert_int_equal(sp_compare_and_write(f->w[2], s, 0, SP_CMP_GE, 0,
					      SP_NO_WRITE, 0, 100),
			 -ETIMEDOUT);
	/* ...and only those: a transfer from 2 to 1 and 3 goes through */
	{
		sp_nodeset_t *d = fx_set(f, "1,3");
		uint8_t b[32];

		memset(b, 0x42, sizeof(b));
		assert_int_equal(sp_xfer_and_signal(f->w[2], d, b, sizeof(b),
						    64, 1, 2, NULL, 0),
				 0);
		assert_int_equal(sp_test_event(f->w[2], 1, FX_WAIT_MS), 0);
		assert_memory_equal((uint8_t *)sp_gmem(f->w[3], NULL) + 64, b,
				    sizeof(b));
		sp_nodeset_destroy(d);
	}
	sp_nodeset_destroy(s);
}

static void test_machine_hold_parks_until_release(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	sp_nodeset_t *d;
	uint8_t b[16];

	*state = f = fx_new(&o);
	d = fx_set(f, "3");
	memset(b, 0x17, sizeof(b));
	assert_int_equal(sp_machine_hold(f->m, 3, 1), 0);
	assert_int_equal(sp_xfer_and_signal(f->w[1], d, b, sizeof(b), 0, 1, 2,
					    NULL, 0),
			 0);
	/* quiet, with the transfer parked at 3 */
	fx_quiesce(f);
	assert_int_equal(sp_test_event(f->w[1], 1, 0), -EAGAIN);
	assert_int_equal(sp_test_event(f->w[3], 2, 0), -EAGAIN);
	assert_int_equal(sp_machine_hold(f->m, 3, 0), 0);
	assert_int_equal(sp_test_event(f->w[1], 1, FX_WAIT_MS), 0);
	assert_int_equal(sp_test_event(f->w[3], 2, FX_WAIT_MS), 0);
	assert_memory_equal(sp_gmem(f->w[3], NULL), b, sizeof(b));
	sp_nodeset_destroy(d);
}

/* The same calls on a fresh machine end at the same virtual time. */
static uint64_t script(void **state)
{
	struct fx_opts o = {.n = 16, .chunk = 4096};
	static uint8_t buf[10000];
	struct fx *f;
	sp_nodeset_t *all;
	uint64_t t, e;

	*state = f = fx_new(&o);
	all = fx_set(f, "0-15");
	memset(buf, 3, sizeof(buf));
	assert_int_equal(sp_xfer_and_signal(f->w[5], all, buf, sizeof(buf), 0,
					    1, 2, NULL, 0),
			 0);
	assert_int_equal(sp_test_event(f->w[5], 1, FX_WAIT_MS), 0);
	/* a call that sends reads the machine's clock: quiet it first */
	fx_quiesce(f);
	assert_int_equal(sp_compare_and_write(f->w[9], all, 0, SP_CMP_EQ,
					      0x0303030303030303, 16000, 1,
					      FX_WAIT_MS),
			 1);
	fx_quiesce(f);
	e = fx_epoch(f, 0);
	fx_kill(f, 7);
	fx_settle(f, e + 1);
	t = sp_machine_now(f->m);
	sp_nodeset_destroy(all);
	fx_free(f);
	*state = NULL;
	return t;
}

static void test_machine_virtual_time_is_deterministic(void **state)
{
	uint64_t a = script(state), b = script(state);

	assert_true(a > 0);
	assert_int_equal(a, b);
}

int main(void)
{
#define T(fn) cmocka_unit_test_teardown(fn, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_machine_rejects_bad_arguments),
		T(test_machine_kill_is_once_per_attached_node),
		T(test_machine_delay_adds_virtual_latency),
		T(test_machine_drop_loses_messages),
		T(test_machine_hold_parks_until_release),
		T(test_machine_virtual_time_is_deterministic),
	};

	return cmocka_run_group_tests_name("inproc", tests, NULL, NULL);
}
