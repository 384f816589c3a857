/*
 * test_mm_retain.c — retention (MM_OP_TICK_RETAIN): terminal jobs leave
 * the state by count (the lowest ids, in batches) or by age, into
 * mm_purged() for the shell's history; live jobs never leave; ids are
 * never reused; the state and its snapshot (version 4, ids with gaps)
 * stay equal on every replica.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "storm_manager.h"

static mm_state_t *mkstate(void)
{
	static const uint32_t ids[] = { 1, 2 };
	static const char *const names[] = { "n1", "n2" };
	static const uint32_t cpus[] = { 4, 4 };
	mm_state_t *s = NULL;

	assert_int_equal(mm_state_create(4, 2, ids, names, cpus, &s), 0);
	for (uint32_t i = 0; i < 2; i++) {
		mm_op_t up = { .code = MM_OP_NODE_UP, .node = ids[i] };

		assert_int_equal(mm_apply(s, &up, NULL), 0);
	}
	return s;
}

static uint32_t submit(mm_state_t *s, uint32_t uid)
{
	static const char *const argv[] = { "/bin/true" };
	mm_job_spec_t sp = { .name = "j", .uid = uid, .gid = uid, .ranks = 1,
			     .argc = 1, .argv = argv, .cwd = "/" };
	mm_op_t op = { .code = MM_OP_SUBMIT, .spec = &sp };
	mm_result_t res;

	assert_int_equal(mm_apply(s, &op, &res), 0);
	return res.job;
}

static void cancel(mm_state_t *s, uint32_t id)
{
	mm_op_t op = { .code = MM_OP_CANCEL, .job = id };

	assert_int_equal(mm_apply(s, &op, NULL), 0);
}

static int tick(mm_state_t *s, uint64_t slice, uint64_t now, uint32_t keep,
		uint64_t keep_ms, mm_result_t *res)
{
	mm_op_t op = { .code = MM_OP_TICK_RETAIN, .slice = slice,
		       .now_ms = now, .retain_jobs = keep,
		       .retain_ms = keep_ms };

	return mm_apply(s, &op, res);
}

static mm_state_t *round_trip(const mm_state_t *s)
{
	uint8_t *buf = NULL, *again = NULL;
	size_t n = 0, m = 0;
	mm_state_t *c = NULL;
	char err[256];

	assert_int_equal(mm_state_encode(s, &buf, &n), 0);
	if (mm_state_decode(buf, n, &c, err, sizeof(err)))
		fail_msg("decode: %s", err);
	assert_int_equal(mm_state_encode(c, &again, &m), 0);
	assert_int_equal(m, n);
	assert_memory_equal(buf, again, n);
	assert_true(mm_digest(c) == mm_digest(s));
	free(buf);
	free(again);
	return c;
}

/* 40 ended jobs, keep 16: the lowest ids go, down to 15 (a batch of a
 * sixteenth), into mm_purged(); the rest and the live one stay. */
static void test_count_retention_purges_lowest_ids_in_a_batch(void **st)
{
	mm_state_t *s = mkstate();
	mm_job_t j;
	uint64_t before;
	uint32_t live;

	(void)st;
	for (uint32_t i = 0; i < 40; i++)
		cancel(s, submit(s, 1000));
	live = submit(s, 1000); /* 41: PENDING, then placed */
	before = mm_state_bytes(s);
	assert_int_equal(tick(s, 1, 10, 16, 0, NULL), 0);
	assert_int_equal(mm_purged_count(s), 25);
	for (uint32_t i = 0; i < 25; i++) {
		assert_int_equal(mm_purged_get(s, i, &j), 0);
		assert_int_equal(j.id, i + 1);
		assert_int_equal(j.state, MM_JOB_CANCELLED);
		assert_int_equal(mm_job_get(s, i + 1, &j), -ENOENT);
	}
	assert_int_equal(mm_purged_get(s, 25, &j), -ENOENT);
	assert_int_equal(mm_job_count(s), 16);
	assert_true(mm_state_bytes(s) < before);
	assert_int_equal(mm_job_next(s, 1, &j), 0);
	assert_int_equal(j.id, 26);
	assert_int_equal(mm_job_get(s, live, &j), 0);
	assert_int_equal(j.state, MM_JOB_STAGING);
	/* ids are never reused */
	assert_int_equal(submit(s, 1000), 42);
	assert_int_equal(mm_next_id(s), 43);
	/* the list lasts until the next operation */
	assert_int_equal(mm_purged_count(s), 0);
	/* below the threshold: nothing more goes */
	assert_int_equal(tick(s, 2, 20, 16, 0, NULL), 0);
	assert_int_equal(mm_purged_count(s), 0);
	mm_state_destroy(s);
}

/* Age: ended at 1000 ms, kept 5000 ms: still there at 5999, gone at the
 * first tick of the second in which 6000 falls. */
static void test_age_retention(void **st)
{
	mm_state_t *s = mkstate();
	mm_job_t j;
	uint32_t a, b;

	(void)st;
	assert_int_equal(tick(s, 1, 1000, 0, 5000, NULL), 0);
	a = submit(s, 7);
	cancel(s, a);
	assert_int_equal(tick(s, 2, 3000, 0, 5000, NULL), 0);
	b = submit(s, 7);
	cancel(s, b); /* ended at 3000 */
	assert_int_equal(tick(s, 3, 5999, 0, 5000, NULL), 0);
	assert_int_equal(mm_purged_count(s), 0);
	assert_int_equal(tick(s, 4, 6000, 0, 5000, NULL), 0);
	assert_int_equal(mm_purged_count(s), 1);
	assert_int_equal(mm_purged_get(s, 0, &j), 0);
	assert_int_equal(j.id, a);
	assert_int_equal(mm_job_get(s, b, &j), 0);
	assert_int_equal(tick(s, 5, 8000, 0, 5000, NULL), 0);
	assert_int_equal(mm_purged_count(s), 1);
	assert_int_equal(mm_job_get(s, b, &j), -ENOENT);
	mm_state_destroy(s);
}

/* A state with gaps round-trips byte for byte, and the copy goes on
 * exactly as the original (same next id, same digest after the same
 * operations). */
static void test_gaps_survive_the_snapshot(void **st)
{
	mm_state_t *s = mkstate(), *c;

	(void)st;
	for (uint32_t i = 0; i < 30; i++) {
		uint32_t id = submit(s, 5);

		if (i % 3)
			cancel(s, id);
	}
	assert_int_equal(tick(s, 1, 10, 4, 0, NULL), 0);
	assert_true(mm_purged_count(s) > 0);
	c = round_trip(s);
	assert_int_equal(mm_next_id(c), 31);
	assert_int_equal(submit(s, 5), submit(c, 5));
	assert_int_equal(tick(s, 2, 2000, 4, 1000, NULL), 0);
	assert_int_equal(tick(c, 2, 2000, 4, 1000, NULL), 0);
	assert_int_equal(mm_purged_count(s), mm_purged_count(c));
	assert_true(mm_digest(s) == mm_digest(c));
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* Both rules off is refused and changes nothing; an unknown job after
 * retention says where to look. */
static void test_bad_retention_and_purged_lookups(void **st)
{
	mm_state_t *s = mkstate();
	mm_result_t res;
	mm_op_t op = { .code = MM_OP_CANCEL, .job = 1 };
	uint64_t d;

	(void)st;
	cancel(s, submit(s, 1));
	d = mm_digest(s);
	assert_int_equal(tick(s, 9, 90, 0, 0, &res), -EINVAL);
	assert_non_null(strstr(res.err, "retention"));
	assert_true(mm_digest(s) == d);
	assert_int_equal(tick(s, 9, 90, 1, 0, NULL), 0);
	assert_int_equal(mm_job_count(s), 1); /* 1 kept */
	cancel(s, submit(s, 1));
	assert_int_equal(tick(s, 10, 100, 1, 0, NULL), 0);
	assert_int_equal(mm_job_count(s), 1);
	assert_int_equal(mm_apply(s, &op, &res), -ENOENT);
	assert_non_null(strstr(res.err, "history"));
	mm_state_destroy(s);
}

/* A snapshot whose ids do not ascend, or reach next_id, is refused. */
static void test_snapshot_ids_are_checked(void **st)
{
	mm_state_t *s = mkstate(), *c = NULL;
	uint8_t *buf = NULL;
	size_t n = 0, at;
	char err[256];
	uint32_t next;

	(void)st;
	submit(s, 1);
	assert_int_equal(mm_state_encode(s, &buf, &n), 0);
	/* next_id 2, njobs 1, id 1: find "02 00 00 00 01 00 00 00 01 00 00
	 * 00" */
	for (at = 0; at + 12 <= n; at++)
		if (!memcmp(buf + at, "\2\0\0\0\1\0\0\0\1\0\0\0", 12))
			break;
	assert_true(at + 12 <= n);
	next = 1; /* the job's id is not below it */
	memcpy(buf + at, &next, 4);
	assert_int_equal(mm_state_decode(buf, n, &c, err, sizeof(err)),
			 -STORM_EPROTO);
	buf[at] = 3;
	buf[at + 8] = 3; /* id 3 >= next_id 3 */
	assert_int_equal(mm_state_decode(buf, n, &c, err, sizeof(err)),
			 -STORM_EPROTO);
	assert_non_null(strstr(err, "next_id 3"));
	assert_null(c);
	free(buf);
	mm_state_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_count_retention_purges_lowest_ids_in_a_batch),
		cmocka_unit_test(test_age_retention),
		cmocka_unit_test(test_gaps_survive_the_snapshot),
		cmocka_unit_test(test_bad_retention_and_purged_lookups),
		cmocka_unit_test(test_snapshot_ids_are_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
