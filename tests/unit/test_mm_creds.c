/*
 * test_mm_creds.c — the credential replay cache of the state machine
 * (manager/creds.c, MM_OP_CRED): a credential is taken once; one expired
 * by the state's time is refused; entries leave once the state's time
 * passes their expiry (and the skew); the cache is bounded, survives a
 * snapshot (canonical, in the digest) and its operation round-trips
 * through the log's codec.
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

static const uint32_t ids[1] = { 0 };
static const char *const names[1] = { "n0" };
static const uint32_t cpus[1] = { 4 };

static mm_state_t *mkstate(void)
{
	mm_state_t *s = NULL;

	assert_int_equal(mm_state_create(1, 1, ids, names, cpus, &s), 0);
	return s;
}

static void mkid(uint8_t id[MM_CRED_ID_BYTES], uint32_t k)
{
	memset(id, 0xa5, MM_CRED_ID_BYTES);
	/* big-endian first: ascending k, ascending ids */
	id[0] = (uint8_t)(k >> 24);
	id[1] = (uint8_t)(k >> 16);
	id[2] = (uint8_t)(k >> 8);
	id[3] = (uint8_t)k;
}

static int cred(mm_state_t *s, uint32_t k, uint64_t exp, mm_result_t *res)
{
	uint8_t id[MM_CRED_ID_BYTES];
	mm_op_t op = { .code = MM_OP_CRED, .uid = 1000, .cred_id = id,
		       .cred_expire_ms = exp };

	mkid(id, k);
	return mm_apply(s, &op, res);
}

static void tick(mm_state_t *s, uint64_t now_ms)
{
	mm_op_t op = { .code = MM_OP_TICK, .slice = mm_slice(s) + 1,
		       .now_ms = now_ms };

	assert_int_equal(mm_apply(s, &op, NULL), 0);
}

static void test_cred_is_taken_once(void **state)
{
	mm_state_t *s = mkstate();
	mm_result_t res;

	(void)state;
	tick(s, 1000000);
	assert_int_equal(cred(s, 7, 1300000, &res), 0);
	assert_int_equal(cred(s, 8, 1300000, &res), 0);
	assert_int_equal(cred(s, 7, 1300000, &res), -EACCES);
	assert_non_null(strstr(res.err, "replayed"));
	assert_non_null(strstr(res.err, "uid 1000"));
	assert_int_equal(mm_creds_count(s), 2);
	mm_state_destroy(s);
}

static void test_cred_expired_by_the_states_time_is_refused(void **state)
{
	mm_state_t *s = mkstate();
	mm_result_t res;

	(void)state;
	tick(s, 1000000);
	/* within the skew: taken */
	assert_int_equal(cred(s, 1, 1000000 - MM_CRED_SKEW_MS + 1, &res), 0);
	assert_int_equal(cred(s, 2, 1000000 - MM_CRED_SKEW_MS, &res),
			 -EACCES);
	assert_non_null(strstr(res.err, "expired by the cluster's time"));
	assert_int_equal(mm_creds_count(s), 1);
	mm_state_destroy(s);
}

static void test_creds_leave_once_the_states_time_passes_them(void **state)
{
	mm_state_t *s = mkstate();
	mm_result_t res;

	(void)state;
	tick(s, 1000000);
	assert_int_equal(cred(s, 1, 1010000, &res), 0);
	assert_int_equal(cred(s, 2, 1300000, &res), 0);
	/* the first is past its expiry and the skew, but within the
	 * sweep's lag: still there, and still refused */
	tick(s, 1010000 + MM_CRED_SKEW_MS);
	assert_int_equal(mm_creds_count(s), 2);
	assert_int_equal(cred(s, 1, 1010000, &res), -EACCES);
	tick(s, 1010000 + MM_CRED_SKEW_MS + 1000);
	assert_int_equal(mm_creds_count(s), 1);
	/* gone from the cache, it cannot come back: it expired */
	assert_int_equal(cred(s, 1, 1010000, &res), -EACCES);
	assert_non_null(strstr(res.err, "expired"));
	assert_int_equal(cred(s, 2, 1300000, &res), -EACCES);
	assert_non_null(strstr(res.err, "replayed"));
	tick(s, 1300000 + MM_CRED_SKEW_MS + 1000);
	assert_int_equal(mm_creds_count(s), 0);
	mm_state_destroy(s);
}

static void test_creds_are_bounded(void **state)
{
	mm_state_t *s = mkstate();
	mm_result_t res;

	(void)state;
	for (uint32_t k = 0; k < MM_CREDS_MAX; k++)
		assert_int_equal(cred(s, k, 5000000, &res), 0);
	assert_int_equal(cred(s, MM_CREDS_MAX, 5000000, &res), -EAGAIN);
	assert_non_null(strstr(res.err, "try again"));
	/* a replay is still a replay when full */
	assert_int_equal(cred(s, 17, 5000000, &res), -EACCES);
	tick(s, 5000000 + MM_CRED_SKEW_MS + 1000);
	assert_int_equal(mm_creds_count(s), 0);
	assert_int_equal(cred(s, MM_CREDS_MAX, 9000000, &res), 0);
	mm_state_destroy(s);
}

static void test_creds_survive_a_snapshot(void **state)
{
	mm_state_t *s = mkstate(), *c = NULL;
	uint8_t *buf = NULL, *back = NULL;
	size_t n, m;
	mm_result_t res;
	char err[256];

	(void)state;
	tick(s, 1000000);
	/* out of order: the cache keeps them sorted */
	assert_int_equal(cred(s, 9, 1200000, &res), 0);
	assert_int_equal(cred(s, 3, 1100000, &res), 0);
	assert_int_equal(cred(s, 5, 1300000, &res), 0);
	assert_int_equal(mm_state_encode(s, &buf, &n), 0);
	assert_int_equal(mm_state_decode(buf, n, &c, err, sizeof(err)), 0);
	assert_int_equal(mm_creds_count(c), 3);
	assert_int_equal(mm_digest(c), mm_digest(s));
	assert_int_equal(mm_state_encode(c, &back, &m), 0);
	assert_int_equal(m, n);
	assert_memory_equal(back, buf, n);
	assert_int_equal(cred(c, 3, 1100000, &res), -EACCES);
	assert_non_null(strstr(res.err, "replayed"));
	/* the restored one prunes alike */
	tick(s, 1100000 + MM_CRED_SKEW_MS + 1000);
	tick(c, 1100000 + MM_CRED_SKEW_MS + 1000);
	assert_int_equal(mm_creds_count(c), 2);
	assert_int_equal(mm_digest(c), mm_digest(s));
	/* ids out of order in the bytes: refused (not canonical) */
	{
		uint8_t *t = malloc(n);
		/* the credentials, then v9's drained nodes' count (0) */
		size_t first = n - 4 - 3 * (MM_CRED_ID_BYTES + 8);
		mm_state_t *bad = (mm_state_t *)0x1;

		assert_non_null(t);
		memcpy(t, buf, n);
		t[first + MM_CRED_ID_BYTES + 8 + 3] = 0; /* id 5 -> id 0 */
		assert_int_equal(mm_state_decode(t, n, &bad, err, sizeof(err)),
				 -STORM_EPROTO);
		assert_non_null(strstr(err, "ids must ascend"));
		assert_ptr_equal(bad, (mm_state_t *)0x1);
		free(t);
	}
	free(buf);
	free(back);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

static void test_cred_op_round_trips_through_the_codec(void **state)
{
	uint8_t id[MM_CRED_ID_BYTES], buf[128];
	mm_op_t op = { .code = MM_OP_CRED, .uid = 42, .cred_id = id,
		       .cred_expire_ms = 123456789 }, back;
	void *arena = NULL;
	int n;

	(void)state;
	mkid(id, 77);
	n = mm_op_encode(&op, buf, sizeof(buf));
	assert_int_equal(n, 4 + MM_CRED_ID_BYTES + 8 + 4);
	assert_int_equal(mm_op_decode(buf, (size_t)n, &back, &arena), 0);
	assert_int_equal(back.code, MM_OP_CRED);
	assert_int_equal(back.uid, 42);
	assert_int_equal(back.cred_expire_ms, 123456789);
	assert_memory_equal(back.cred_id, id, MM_CRED_ID_BYTES);
	free(arena);
	/* short by one byte: refused */
	assert_int_equal(mm_op_decode(buf, (size_t)n - 1, &back, &arena),
			 -STORM_EPROTO);
	op.cred_id = NULL;
	assert_int_equal(mm_op_encode(&op, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cred_is_taken_once),
		cmocka_unit_test(test_cred_expired_by_the_states_time_is_refused),
		cmocka_unit_test(test_creds_leave_once_the_states_time_passes_them),
		cmocka_unit_test(test_creds_are_bounded),
		cmocka_unit_test(test_creds_survive_a_snapshot),
		cmocka_unit_test(test_cred_op_round_trips_through_the_codec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
