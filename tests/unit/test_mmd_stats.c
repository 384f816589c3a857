/*
 * test_mmd_stats.c — storm-mm's strobe statistics (manager/mmd/stats.c)
 * driven by hand: the test plays the strobe (micro-slice counts, the
 * heartbeat's send and completion) against a clock it moves itself.
 *
 * The clock: mmd_mono_ns(), which mmd_stats.c reads, is defined here as
 * the real CLOCK_MONOTONIC plus an offset the test advances; the strobe
 * timer is a real timerfd with a 1 s period that never fires during the
 * test, so its schedule (the anchor) is real and every figure is the
 * offset the test chose plus the microseconds the test itself takes (the
 * checks allow TOL_US for that).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "stats.h"

#define PERIOD_US 1000000u /* slice_us of the test's strobe: 1 s */
#define TOL_US 50000u      /* what the test's own running may add */

static uint64_t offset_ns;

uint64_t mmd_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
	       offset_ns;
}

struct fx {
	struct mmd_strobe_clock clk;
	struct mmd_stats st;
	int fd;
	uint64_t t0_off; /* offset when the anchor was taken */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct itimerspec its = { .it_interval = { 1, 0 },
				  .it_value = { 1, 0 } };

	if (!f)
		return -1;
	offset_ns = 0;
	f->clk.slice_us = PERIOD_US;
	f->clk.micro_slices = 1;
	f->clk.master = 1;
	f->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (f->fd < 0 || timerfd_settime(f->fd, 0, &its, NULL) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	close(f->fd);
	free(f);
	return 0;
}

/* The first expiration's handler: it anchors the schedule.  Expiration
 * number 1 is due at the timer's first firing, ~1 s of offset from now;
 * the test then lives in offset time: boundary k is due ~k s after the
 * anchor's offset. */
static void anchor(struct fx *f)
{
	f->clk.micro = 0;
	mmd_stats_timer(&f->st, &f->clk, f->fd, 0);
	assert_int_not_equal(f->st.period_ns, 0);
	assert_int_equal(f->st.period_ns, 1000000000u);
	f->t0_off = offset_ns;
}

/* Boundary k's handler runs `late_us` after its nominal time (n timer
 * expirations read at once). */
static void boundary(struct fx *f, uint64_t k, uint64_t n, uint64_t late_us)
{
	offset_ns = f->t0_off + k * 1000000000ull + late_us * 1000u;
	f->clk.micro += n;
	f->clk.slice++;
	mmd_stats_timer(&f->st, &f->clk, f->fd, n);
}

static void send_hb(struct fx *f)
{
	f->clk.hb_inflight = 1;
	f->clk.hb_sent_slice = f->clk.slice;
	mmd_stats_sent(&f->st, &f->clk);
}

static void hb_done(struct fx *f, uint64_t k, uint64_t at_us, int rc)
{
	offset_ns = f->t0_off + k * 1000000000ull + at_us * 1000u;
	mmd_stats_hb_done(&f->st, &f->clk, rc, 0);
	f->clk.hb_inflight = 0;
}

static json_int_t field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	return json_integer_value(v);
}

static void assert_near(json_int_t v, uint64_t want_us)
{
	assert_in_range((uint64_t)v, want_us, want_us + TOL_US);
}

static void test_lateness_runs_from_the_nominal_boundary(void **state)
{
	struct fx *f = *state;
	json_t *o;

	anchor(f);
	/* handler 300 ms late, every node has the heartbeat 500 ms after
	 * the boundary: lateness 500 ms, of which wake 300 and xfer 200 */
	boundary(f, 1, 1, 300000);
	send_hb(f);
	hb_done(f, 1, 500000, 0);
	o = mmd_stats_json(&f->st, &f->clk);
	assert_non_null(o);
	assert_int_equal(field(o, "slices"), 1);
	assert_int_equal(field(o, "missed"), 0);
	assert_int_equal(field(o, "late"), 0);
	assert_int_equal(field(o, "samples"), 1);
	assert_near(field(o, "max_us"), 500000);
	assert_near(field(o, "p99_us"), 500000);
	assert_near(field(o, "wake_p50_us"), 300000);
	assert_in_range((uint64_t)field(o, "xfer_p50_us"), 200000 - TOL_US,
			200000 + TOL_US);
	assert_int_equal(field(o, "period_us"), PERIOD_US);
	json_decref(o);
}

static void test_overrun_counts_skipped_boundaries_as_missed(void **state)
{
	struct fx *f = *state;
	json_t *o;

	anchor(f);
	/* three expirations in one read: boundaries 1 and 2 are lost, the
	 * heartbeat goes out for boundary 3 */
	boundary(f, 3, 3, 100000);
	send_hb(f);
	hb_done(f, 3, 200000, 0);
	o = mmd_stats_json(&f->st, &f->clk);
	assert_int_equal(field(o, "slices"), 3);
	assert_int_equal(field(o, "missed"), 2);
	assert_int_equal(field(o, "samples"), 1);
	assert_near(field(o, "max_us"), 200000);
	json_decref(o);
}

static void test_heartbeat_still_in_flight_is_missed(void **state)
{
	struct fx *f = *state;
	json_t *o;

	anchor(f);
	boundary(f, 1, 1, 0);
	send_hb(f);
	/* boundary 2: the first is still in flight, heartbeat() skips */
	boundary(f, 2, 1, 0);
	f->clk.hb_late++;
	mmd_stats_sent(&f->st, &f->clk);
	/* the first completes 1.5 periods after its boundary: late */
	hb_done(f, 1, 1500000, 0);
	o = mmd_stats_json(&f->st, &f->clk);
	assert_int_equal(field(o, "slices"), 2);
	assert_int_equal(field(o, "missed"), 1);
	assert_int_equal(field(o, "late"), 1);
	assert_near(field(o, "max_us"), 1500000);
	json_decref(o);
}

static void test_failed_transfer_is_missed_not_sampled(void **state)
{
	struct fx *f = *state;
	json_t *o;

	anchor(f);
	boundary(f, 1, 1, 0);
	send_hb(f);
	hb_done(f, 1, 1000, -EIO);
	o = mmd_stats_json(&f->st, &f->clk);
	assert_int_equal(field(o, "missed"), 1);
	assert_int_equal(field(o, "samples"), 0);
	assert_int_equal(field(o, "p99_us"), 0);
	json_decref(o);
}

static void test_reset_starts_a_new_window(void **state)
{
	struct fx *f = *state;
	json_t *o;

	anchor(f);
	boundary(f, 2, 2, 0);
	send_hb(f);
	hb_done(f, 2, 900000, 0);
	mmd_stats_reset(&f->st, &f->clk);
	boundary(f, 3, 1, 0);
	send_hb(f);
	hb_done(f, 3, 100000, 0);
	o = mmd_stats_json(&f->st, &f->clk);
	assert_int_equal(field(o, "slices"), 1);
	assert_int_equal(field(o, "missed"), 0);
	assert_int_equal(field(o, "samples"), 1);
	assert_near(field(o, "max_us"), 100000);
	json_decref(o);
}

static void test_percentiles_within_the_histogram_error(void **state)
{
	struct fx *f = *state;
	json_int_t p50, p99;
	json_t *o;

	anchor(f);
	/* lateness 9, 18, ... 900 ms: p50 450 ms, p99 891 ms */
	for (uint64_t k = 1; k <= 100; k++) {
		boundary(f, k, 1, 0);
		send_hb(f);
		hb_done(f, k, k * 9000, 0);
	}
	o = mmd_stats_json(&f->st, &f->clk);
	assert_int_equal(field(o, "samples"), 100);
	p50 = field(o, "p50_us");
	p99 = field(o, "p99_us");
	/* a bucket spans 1/32 of its power of two: at most ~3.2 % above */
	assert_in_range((uint64_t)p50, 450000, 450000 * 1033 / 1000 + TOL_US);
	assert_in_range((uint64_t)p99, 891000, 891000 * 1033 / 1000 + TOL_US);
	assert_near(field(o, "max_us"), 900000);
	assert_int_equal(field(o, "late"), 0);
	json_decref(o);
}

static void test_a_replica_that_is_not_master_counts_nothing(void **state)
{
	struct fx *f = *state;
	json_t *o;

	f->clk.master = 0;
	f->clk.micro = 5;
	mmd_stats_timer(&f->st, &f->clk, f->fd, 5);
	mmd_stats_sent(&f->st, &f->clk);
	mmd_stats_hb_done(&f->st, &f->clk, 0, 0);
	o = mmd_stats_json(&f->st, &f->clk);
	assert_int_equal(field(o, "slices"), 0);
	assert_int_equal(field(o, "samples"), 0);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_lateness_runs_from_the_nominal_boundary, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_overrun_counts_skipped_boundaries_as_missed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_heartbeat_still_in_flight_is_missed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_failed_transfer_is_missed_not_sampled, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_reset_starts_a_new_window, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_percentiles_within_the_histogram_error, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_replica_that_is_not_master_counts_nothing, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
