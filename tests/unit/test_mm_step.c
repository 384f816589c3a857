/*
 * test_mm_step.c — batch allocations and their steps in the state machine
 * (manager/step.c): a step runs on free task slots of its running
 * allocation, in its row, with a done slot of its own; it waits for slots
 * without holding the queue; it ends on its own, and is cancelled when
 * its allocation ends; what SUBMIT refuses; a snapshot with steps running
 * round-trips.  Machine: mm_fixture.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "mm_fixture.h"

static uint64_t slice;

static void tick(mm_state_t *s)
{
	slice++;
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = slice,
			   .now_ms = slice * 10 });
}

static int submit_step(mm_state_t *s, uint32_t ranks, uint8_t alloc,
		       uint32_t parent, uint32_t uid, uint32_t nodes,
		       mm_result_t *res)
{
	static const char *const argv[] = { "/bin/script.sh" };
	mm_job_spec_t sp = {
		.name = alloc ? "alloc" : "step", .uid = uid, .gid = 100,
		.ranks = ranks, .argc = 1, .argv = argv, .cwd = "/home/u",
		.batch = alloc, .alloc = alloc, .parent = parent,
		.node_count = nodes,
	};

	return mm_apply(s, &(mm_op_t){ .code = MM_OP_SUBMIT_STEP,
				       .spec = &sp }, res);
}

static uint32_t job_in(mm_state_t *s, uint32_t ranks, uint8_t alloc,
		       uint32_t parent)
{
	mm_result_t res;

	assert_int_equal(submit_step(s, ranks, alloc, parent, 1000, 0, &res),
			 0);
	return res.job;
}

static mm_job_t get(mm_state_t *s, uint32_t id)
{
	mm_job_t j;

	assert_int_equal(mm_job_get(s, id, &j), 0);
	return j;
}

static void run(mm_state_t *s, uint32_t id)
{
	tick(s);
	assert_int_equal(get(s, id).state, MM_JOB_STAGING);
	must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED, .job = id });
	assert_int_equal(get(s, id).state, MM_JOB_RUNNING);
}

static void consistent(mm_state_t *s)
{
	char err[256];

	assert_int_equal(mm_matrix_check(s, err, sizeof(err)), 0);
}

static void exit_all(mm_state_t *s, uint32_t id, int code)
{
	mm_job_t j = get(s, id);
	int32_t st[16];

	for (uint32_t r = 0; r < j.ranks; r++)
		st[r] = W_EXITCODE(r ? 0 : code, 0);
	must(s, (mm_op_t){ .code = MM_OP_JOB_EXITED, .job = id,
			   .nstatus = j.ranks, .status = st });
}

static void test_steps_take_free_task_slots(void **state)
{
	mm_state_t *s = mkmachine(1);
	uint32_t a, s1, s2, s3, used[NNODES];
	mm_job_t ja, j1, j2;
	mm_node_t n;

	(void)state;
	a = job_in(s, 4, 1, 0);
	run(s, a);
	ja = get(s, a);
	assert_true(ja.alloc);
	for (uint32_t i = 0; i < NNODES; i++) {
		assert_int_equal(mm_node_get(s, i, &n), 0);
		used[i] = n.used;
	}
	s1 = job_in(s, 2, 0, a);
	s2 = job_in(s, 2, 0, a);
	s3 = job_in(s, 1, 0, a);
	assert_int_equal(get(s, s1).state, MM_JOB_PENDING);
	run(s, s1);
	j1 = get(s, s1);
	j2 = get(s, s2);
	assert_int_equal(j2.state, MM_JOB_STAGING);
	assert_int_equal(j1.parent, a);
	assert_int_equal(j1.row, ja.row);
	/* slots 0-1 and 2-3: the allocation's ranks' nodes */
	assert_int_equal(j1.col, ja.col);
	assert_int_equal(j2.col, ja.col + 2);
	for (uint32_t r = 0; r < 2; r++) {
		assert_int_equal(j1.rank_node[r], ja.rank_node[r]);
		assert_int_equal(j2.rank_node[r], ja.rank_node[2 + r]);
	}
	/* every job holding PEs its own done slot; a step's beyond the
	 * matrix's rows */
	assert_int_not_equal(mm_job_done_slot(s, &j1),
			     mm_job_done_slot(s, &ja));
	assert_int_not_equal(mm_job_done_slot(s, &j1),
			     mm_job_done_slot(s, &j2));
	assert_true(mm_job_done_slot(s, &j1) >= 16 * mm_matrix_cols(s));
	/* no slot left: the third waits, saying why */
	assert_int_equal(get(s, s3).state, MM_JOB_PENDING);
	assert_non_null(strstr(get(s, s3).reason, "free task slot of "
			       "allocation"));
	/* steps take no cells and count on no node */
	for (uint32_t i = 0; i < NNODES; i++) {
		assert_int_equal(mm_node_get(s, i, &n), 0);
		assert_int_equal(n.used, used[i]);
	}
	consistent(s);
	/* a step ends on its own: its own statuses; the allocation runs */
	exit_all(s, s1, 3);
	assert_int_equal(get(s, s1).state, MM_JOB_FAILED);
	assert_int_equal(get(s, s1).exit_code, 3);
	assert_int_equal(get(s, a).state, MM_JOB_RUNNING);
	tick(s);
	assert_int_equal(get(s, s3).state, MM_JOB_STAGING);
	assert_int_equal(get(s, s3).col, ja.col);
	consistent(s);
	mm_state_destroy(s);
}

static void test_allocation_end_cancels_its_steps(void **state)
{
	mm_state_t *s = mkmachine(1);
	uint32_t a, s1, s2, other;

	(void)state;
	a = job_in(s, 2, 1, 0);
	s1 = job_in(s, 2, 0, a); /* waits for its allocation to run */
	tick(s);
	assert_int_equal(get(s, s1).state, MM_JOB_PENDING);
	assert_non_null(strstr(get(s, s1).reason, "allocation"));
	must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED, .job = a });
	tick(s);
	assert_int_equal(get(s, s1).state, MM_JOB_STAGING);
	s2 = job_in(s, 1, 0, a);
	other = job_in(s, 1, 0, 0); /* a job of its own: not touched */
	tick(s);
	assert_int_equal(get(s, s2).state, MM_JOB_PENDING);
	/* the script ends: the steps go with it */
	exit_all(s, a, 0);
	assert_int_equal(get(s, a).state, MM_JOB_COMPLETED);
	assert_int_equal(get(s, s1).state, MM_JOB_CANCELLED);
	assert_int_equal(get(s, s2).state, MM_JOB_CANCELLED);
	assert_non_null(strstr(get(s, s1).reason, "allocation"));
	assert_int_not_equal(get(s, other).state, MM_JOB_CANCELLED);
	consistent(s);
	mm_state_destroy(s);
}

static void test_bad_steps_are_refused(void **state)
{
	mm_state_t *s = mkmachine(1);
	mm_result_t res;
	uint32_t a, plain;

	(void)state;
	a = job_in(s, 2, 1, 0);
	plain = job_in(s, 1, 0, 0);
	assert_int_equal(submit_step(s, 1, 0, plain, 1000, 0, &res), -EINVAL);
	assert_non_null(strstr(res.err, "not a batch allocation"));
	assert_int_equal(submit_step(s, 1, 0, a, 1001, 0, &res), -EPERM);
	assert_non_null(strstr(res.err, "only its owner"));
	assert_int_equal(submit_step(s, 3, 0, a, 1000, 0, &res), -EINVAL);
	assert_non_null(strstr(res.err, "2 task slots"));
	assert_int_equal(submit_step(s, 1, 0, a, 1000, 1, &res), -EINVAL);
	assert_non_null(strstr(res.err, "-n alone"));
	assert_int_equal(submit_step(s, 1, 1, a, 1000, 0, &res), -EINVAL);
	assert_int_equal(submit_step(s, 1, 0, 99, 1000, 0, &res), -ENOENT);
	assert_non_null(strstr(res.err, "STORM_JOB_ID"));
	must(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = a, .uid = 1000 });
	assert_int_equal(submit_step(s, 1, 0, a, 1000, 0, &res), -EINVAL);
	assert_non_null(strstr(res.err, "has ended"));
	/* the same fields in an older code are dropped, not refused */
	mm_job_spec_t sp = { .name = "x", .uid = 1000, .ranks = 1, .argc = 1,
			     .argv = (const char *const[]){ "/x" },
			     .cwd = "/", .alloc = 1, .parent = 0 };
	uint32_t id = must(s, (mm_op_t){ .code = MM_OP_SUBMIT_SHAPE,
					  .spec = &sp });
	assert_false(get(s, id).alloc);
	/* checkpoints are for jobs of their own */
	uint32_t b = job_in(s, 2, 1, 0);

	run(s, b);
	assert_int_equal(mm_apply(s, &(mm_op_t){ .code = MM_OP_CKPT_REQUEST,
						 .job = b, .uid = 1000 },
				  &res), -EINVAL);
	assert_non_null(strstr(res.err, "batch allocation"));
	mm_state_destroy(s);
}

static void test_steps_round_trip(void **state)
{
	mm_state_t *s = mkmachine(1), *c;
	uint32_t a, s1, s2;

	(void)state;
	a = job_in(s, 4, 1, 0);
	run(s, a);
	s1 = job_in(s, 1, 0, a);
	s2 = job_in(s, 2, 0, a);
	run(s, s1);
	assert_int_equal(get(s, s2).state, MM_JOB_STAGING);
	job_in(s, 4, 0, a); /* PENDING */
	c = round_trip(s);
	consistent(c);
	assert_int_equal(mm_digest(c), mm_digest(s));
	/* the copy continues alike: the allocation's end ends its steps */
	exit_all(c, a, 0);
	exit_all(s, a, 0);
	assert_int_equal(get(c, s2).state, MM_JOB_CANCELLED);
	assert_int_equal(mm_digest(c), mm_digest(s));
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* A step that lies about its slots, or names no allocation: refused. */
static void test_snapshot_step_checks(void **state)
{
	mm_state_t *s = mkmachine(1);
	uint32_t a, s1;
	size_t n;
	uint8_t *buf;
	char err[256];
	mm_state_t *out = NULL;

	(void)state;
	a = job_in(s, 2, 1, 0);
	run(s, a);
	s1 = job_in(s, 1, 0, a);
	run(s, s1);
	buf = encode(s, &n);
	/* the last job's parent (the last 4 bytes before the creds and
	 * drained counts) made a job that is no allocation */
	assert_true(n > 12);
	buf[n - 8 - 4] = (uint8_t)(s1 + 1);
	assert_int_equal(mm_state_decode(buf, n, &out, err, sizeof(err)),
			 -STORM_EPROTO);
	assert_non_null(strstr(err, "step of job"));
	assert_null(out);
	free(buf);
	mm_state_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_take_free_task_slots),
		cmocka_unit_test(test_allocation_end_cancels_its_steps),
		cmocka_unit_test(test_bad_steps_are_refused),
		cmocka_unit_test(test_steps_round_trip),
		cmocka_unit_test(test_snapshot_step_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
