/*
 * test_engine.c — engine.c beyond the protocols: the notification fd a
 * daemon's main loop polls instead of blocking in sp_test_event().
 * In-process machine; every wait is bounded by FX_WAIT_MS.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "machine_fixture.h"

#define LEV 1
#define REV 2

/* 1 if fd polls readable within timeout_ms. */
static int readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* Clear fd: it must be readable now, and not once read. */
static void drain(int fd)
{
	uint64_t v;

	assert_true(readable(fd, FX_WAIT_MS));
	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	assert_false(readable(fd, 0));
}

/* 8 bytes from src to the nodes of ranges, with a remote event; returns
 * once the source's local event says every destination has them. */
static void xfer_to(struct fx *f, uint32_t src, const char *ranges)
{
	static const int64_t v = 42;
	sp_nodeset_t *dst = fx_set(f, ranges);

	assert_int_equal(sp_xfer_and_signal(f->w[src], dst, &v, sizeof(v), 64,
					    LEV, REV, NULL, 0),
			 0);
	sp_nodeset_destroy(dst);
	assert_int_equal(sp_test_event(f->w[src], LEV, FX_WAIT_MS), 0);
}

static void test_notify_fd_readable_after_remote_event(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	int fd;

	*state = f = fx_new(&o);
	fd = sp_notify_fd(f->w[2]);
	assert_true(fd >= 0);
	drain(fd); /* readable at creation: earlier signals are not lost */
	xfer_to(f, 0, "2");
	drain(fd);
	assert_int_equal(sp_test_event(f->w[2], REV, 0), 0);
	assert_int_equal(sp_test_event(f->w[2], REV, 0), -EAGAIN);
}

static void test_notify_fd_readable_for_signal_before_asked(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	int fd;

	*state = f = fx_new(&o);
	xfer_to(f, 0, "1-3");
	fd = sp_notify_fd(f->w[3]);
	assert_true(fd >= 0);
	drain(fd);
	assert_int_equal(sp_test_event(f->w[3], REV, 0), 0);
}

static void test_notify_fd_untouched_outside_the_set(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	int fd;

	*state = f = fx_new(&o);
	fd = sp_notify_fd(f->w[3]);
	drain(fd);
	xfer_to(f, 0, "1-2");
	fx_quiesce(f);
	assert_false(readable(fd, 0));
}

static void test_notify_fd_readable_on_view_change(void **state)
{
	struct fx_opts o = {.n = 8};
	struct fx *f;
	uint64_t e;
	int fd;

	*state = f = fx_new(&o);
	e = fx_epoch(f, 1);
	fd = sp_notify_fd(f->w[1]);
	drain(fd);
	fx_kill(f, 5);
	assert_true(fx_settle(f, e + 1) > e);
	drain(fd);
}

static void test_notify_fd_is_one_fd_and_eclosed_when_killed(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f;
	int fd;

	*state = f = fx_new(&o);
	fd = sp_notify_fd(f->w[2]);
	assert_true(fd >= 0);
	assert_int_equal(sp_notify_fd(f->w[2]), fd);
	drain(fd);
	fx_kill(f, 2);
	/* a loop polling it wakes and learns the world is gone */
	drain(fd);
	assert_int_equal(sp_test_event(f->w[2], REV, 0), -STORM_ECLOSED);
	assert_int_equal(sp_notify_fd(f->w[2]), -STORM_ECLOSED);
	assert_int_equal(sp_notify_fd(NULL), -EINVAL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_teardown(fn, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_notify_fd_readable_after_remote_event),
		T(test_notify_fd_readable_for_signal_before_asked),
		T(test_notify_fd_untouched_outside_the_set),
		T(test_notify_fd_readable_on_view_change),
		T(test_notify_fd_is_one_fd_and_eclosed_when_killed),
	};

	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
