/*
 * test_mmd_pmi.c — the replicas' side of a PMI barrier
 * (manager/mmd/pmi.c) on a real state machine: records of every node of
 * a running job merge, in agreed order, into the barrier's store; a
 * box sent again repeats nothing; a killed incarnation's records are
 * dropped; the snapshot's part carries the stores and the records of
 * the barrier being gathered, so a joiner that becomes master completes
 * it; a malformed part is refused and changes nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mm_fixture.h"
#include "pmi.h"

static const st_layout_t lay = { .pmi_len = 64 << 10 };

/* A PMI record: inc, barrier, last, entries. */
static size_t rec(uint8_t *b, uint32_t inc, uint32_t fence, uint32_t last,
		  const char *k, const char *v)
{
	size_t kl = strlen(k), vl = strlen(v);

	st_put32(b, inc);
	st_put32(b + 4, fence);
	st_put32(b + 8, last);
	b[12] = (uint8_t)kl;
	b[13] = 0;
	b[14] = (uint8_t)vl;
	b[15] = 0;
	memcpy(b + 16, k, kl);
	memcpy(b + 16 + kl, v, vl);
	return 16 + kl + vl;
}

/* A job of 8 ranks placed and RUNNING on nodes 1 and 3 (4 cpus each). */
static mm_state_t *running(uint32_t *id, uint32_t *n0, uint32_t *n1)
{
	mm_state_t *s = mkmachine(1);
	mm_job_t j;

	*id = submit(s, 8, "1,3");
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 1, .now_ms = 10 });
	must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED, .job = *id });
	assert_int_equal(mm_job_get(s, *id, &j), 0);
	assert_int_equal(j.state, MM_JOB_RUNNING);
	*n0 = j.rank_node[0];
	*n1 = j.rank_node[7];
	assert_int_not_equal(*n0, *n1);
	return s;
}

static void test_records_merge_once_per_node(void **state)
{
	struct mmd_pmi x, y = { 0 };
	uint32_t id, a, b;
	mm_state_t *s = running(&id, &a, &b);
	uint8_t r[256], *snap;
	size_t n, len;
	char err[128];

	(void)state;
	assert_int_equal(mmd_pmi_init(&x, &lay, 8, NULL, NULL), 0);
	n = rec(r, 0, 1, 1, "P0", "a");
	mmd_pmi_record(&x, 0, s, a, id, r, n);
	mmd_pmi_record(&x, 0, s, a, id, r, n); /* a box sent again */
	assert_false(mmd_pmi_busy(&x)); /* not every node yet */
	/* the snapshot in the middle: the joiner completes the barrier */
	len = mmd_pmi_snap_size(&x);
	snap = malloc(len);
	assert_non_null(snap);
	mmd_pmi_snap_encode(&x, snap);
	assert_int_equal(mmd_pmi_init(&y, &lay, 8, NULL, NULL), 0);
	assert_int_equal(mmd_pmi_snap_decode(&y, snap, len, err, sizeof(err)),
			 0);
	n = rec(r, 1, 1, 1, "P7", "b"); /* a killed incarnation's */
	mmd_pmi_record(&y, 0, s, b, id, r, n);
	assert_false(mmd_pmi_busy(&y));
	n = rec(r, 0, 1, 1, "P7", "b");
	mmd_pmi_record(&y, 0, s, b, id, r, n);
	assert_true(mmd_pmi_busy(&y)); /* the store waits to go down */
	assert_int_equal(y.stores, 1);
	/* a malformed part: refused, nothing changes */
	snap[0] = 0xff;
	assert_int_equal(mmd_pmi_snap_decode(&y, snap, len, err, sizeof(err)),
			 -STORM_EPROTO);
	assert_non_null(strstr(err, "PMI part"));
	assert_true(mmd_pmi_busy(&y));
	assert_int_equal(mmd_pmi_snap_decode(&y, snap, 3, err, sizeof(err)),
			 -STORM_EPROTO);
	free(snap);
	mmd_pmi_fini(&x);
	mmd_pmi_fini(&y);
	mm_state_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_merge_once_per_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
