/*
 * test_mm_ckpt.c — the Machine Manager's checkpoint rules (manager/
 * ckpt.c) on its pure state: a restart queues a running job again from
 * an epoch, and a node's death does so for a job whose epoch outlives a
 * node (L2/L3) and fails one whose images were on that node only; a job
 * with --requeue and no such epoch starts over; a BCS-MPI job is
 * checkpointed and restarted across nodes; every state reached survives
 * a snapshot round trip.
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
#include "storm_manager.h"

static mm_state_t *with_epoch(uint32_t levels)
{
	mm_state_t *s = every_state();
	mm_op_t req = { .code = MM_OP_CKPT_REQUEST, .job = 7 };
	mm_op_t commit = { .code = MM_OP_CKPT_COMMIT, .job = 7, .epoch = 1,
			   .ckpt_bytes = 1, .ckpt_keep = 2,
			   .ckpt_levels = levels };

	assert_int_equal(mm_apply(s, &req, NULL), 0);
	assert_int_equal(mm_apply(s, &commit, NULL), 0);
	return s;
}

/* RESTART queues a running job again to run on from an epoch; NODE_DOWN
 * does it for a job whose epoch outlives a node (L2/L3), and fails one
 * whose images were on the node only; what they refuse changes nothing. */
static void test_restart_requeues_from_an_epoch(void **state)
{
	mm_state_t *s = with_epoch(MM_CKPT_L1 | MM_CKPT_L3), *c;
	mm_op_t rs = { .code = MM_OP_CKPT_RESTART, .job = 7, .uid = 4242 };
	mm_result_t res;
	mm_job_t j;
	uint32_t node;

	(void)state;
	assert_int_equal(mm_apply(s, &rs, &res), -EPERM);
	rs.uid = 0;
	rs.epoch = 9;
	assert_int_equal(mm_apply(s, &rs, &res), -ENOENT);
	assert_non_null(strstr(res.err, "no committed epoch 9"));
	rs.epoch = 0;
	rs.job = 8; /* PENDING */
	assert_int_equal(mm_apply(s, &rs, &res), -EALREADY);
	rs.job = 2; /* ended */
	assert_int_equal(mm_apply(s, &rs, &res), -EALREADY);
	rs.job = 7;
	assert_int_equal(mm_apply(s, &rs, &res), 0);
	assert_int_equal(res.epoch, 1);
	assert_int_equal(mm_job_get(s, 7, &j), 0);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_int_equal(j.restore_epoch, 1);
	assert_int_equal(j.restarts, 1);
	assert_int_equal(j.width, 0);
	assert_int_equal(sp_nodeset_count(j.nodes), 0);
	assert_non_null(strstr(j.reason, "restarting from checkpoint epoch 1"));
	c = round_trip(s);
	same_state(s, c);
	mm_state_destroy(c);
	mm_state_destroy(s);

	/* checkpoint --requeue: an abort leaves the job where it is; a
	 * commit queues it again from that epoch */
	s = with_epoch(MM_CKPT_L1);
	rs = (mm_op_t){ .code = MM_OP_CKPT_REQUEUE, .job = 7 };
	assert_int_equal(mm_apply(s, &rs, &res), 0);
	assert_int_equal(res.epoch, 2);
	assert_int_equal(mm_job_get(s, 7, &j), 0);
	assert_int_equal(j.ckpt_requeue, 1);
	c = round_trip(s); /* the mark is state */
	same_state(s, c);
	mm_state_destroy(c);
	assert_int_equal(mm_apply(s, &(mm_op_t){ .code = MM_OP_CKPT_ABORT,
		.job = 7, .epoch = 2, .reason = "x" }, &res), 0);
	assert_int_equal(mm_job_get(s, 7, &j), 0);
	assert_int_equal(j.state, MM_JOB_RUNNING);
	assert_int_equal(j.ckpt_requeue, 0);
	assert_int_equal(mm_apply(s, &rs, &res), 0);
	assert_int_equal(res.epoch, 3);
	assert_int_equal(mm_apply(s, &(mm_op_t){ .code = MM_OP_CKPT_COMMIT,
		.job = 7, .epoch = 3, .ckpt_keep = 2 }, &res), 0);
	assert_int_equal(mm_job_get(s, 7, &j), 0);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_int_equal(j.restore_epoch, 3);
	assert_int_equal(j.ckpt_requeue, 0);
	assert_non_null(strstr(j.reason, "requeued after checkpoint epoch 3"));
	c = round_trip(s);
	same_state(s, c);
	mm_state_destroy(c);
	mm_state_destroy(s);

	for (int survives = 0; survives < 2; survives++) {
		s = with_epoch(survives ? MM_CKPT_L3 : MM_CKPT_L1);
		assert_int_equal(mm_job_get(s, 7, &j), 0);
		node = j.rank_node[0];
		assert_int_equal(mm_apply(s, &(mm_op_t){ .code =
			MM_OP_NODE_DOWN, .node = node, .reason = "killed" },
					  &res), 0);
		assert_int_equal(mm_job_get(s, 7, &j), 0);
		assert_int_equal(j.state, survives ? MM_JOB_PENDING :
				 MM_JOB_FAILED);
		if (survives)
			assert_non_null(strstr(j.reason, "restarting from "
					       "checkpoint epoch 1"));
		c = round_trip(s);
		same_state(s, c);
		mm_state_destroy(c);
		mm_state_destroy(s);
	}
}

/* --requeue: a job whose node dies with no epoch that survives it (none,
 * or L1 only) goes back to the queue to start over, as often as
 * MM_RESTARTS_MAX; without the flag it fails. */
static void test_requeue_starts_over(void **state)
{
	static const char *const argv[] = { "/bin/app" };
	const mm_input_t in = { .sha256 = { 1 }, .size = 1, .mode = 0755 };
	mm_job_spec_t sp = { .name = "rq", .uid = 1000, .gid = 100,
			     .ranks = 2, .argc = 1, .argv = argv, .cwd = "/",
			     .ninputs = 1, .inputs = &in, .requeue = 1 };
	mm_result_t res;
	mm_job_t j;

	(void)state;
	for (int flag = 0; flag < 2; flag++) {
		mm_state_t *s = mkmachine(1), *c;
		uint32_t id, node;

		sp.requeue = (uint8_t)flag;
		id = must(s, (mm_op_t){ .code = MM_OP_SUBMIT_CKPT,
					.spec = &sp });
		for (uint32_t r = 1; r <= 3; r++) {
			must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = r,
					   .now_ms = 100 * r });
			assert_int_equal(mm_job_get(s, id, &j), 0);
			assert_int_equal(j.state, MM_JOB_STAGING);
			if (r == 2) /* a restart may die while staging too */
				must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED,
						   .job = id });
			node = j.rank_node[1];
			assert_int_equal(mm_apply(s, &(mm_op_t){
				.code = MM_OP_NODE_DOWN, .node = node,
				.reason = "killed" }, &res), 0);
			assert_int_equal(mm_job_get(s, id, &j), 0);
			c = round_trip(s);
			same_state(s, c);
			mm_state_destroy(c);
			if (!flag) {
				assert_int_equal(j.state, MM_JOB_FAILED);
				break;
			}
			assert_int_equal(j.state, MM_JOB_PENDING);
			assert_int_equal(j.restore_epoch, 0);
			assert_int_equal(j.restarts, r);
			assert_true(j.requeue);
			assert_non_null(strstr(j.reason, "to start over"));
			must(s, (mm_op_t){ .code = MM_OP_NODE_UP,
					   .node = node });
		}
		mm_state_destroy(s);
	}
}

/* A BCS-MPI job is checkpointed on as many nodes as it spans (the nodes
 * cut it at one round: node/bcs_cut.c): submitted with --checkpoint over
 * two nodes, asked for by hand, committed, and queued again from its
 * epoch when one of its nodes dies. */
static void test_bcs_checkpoint_across_nodes(void **state)
{
	static const char *const argv[] = { "/bin/mpi" };
	const mm_input_t in = { .sha256 = { 2 }, .size = 1, .mode = 0755 };
	mm_job_spec_t sp = { .name = "bcs", .uid = 1000, .gid = 100,
			     .ranks = 6, .nodelist = "0,3", .argc = 1,
			     .argv = argv, .cwd = "/", .ninputs = 1,
			     .inputs = &in, .mpi = MM_MPI_BCS,
			     .ckpt_every_s = 60 };
	mm_state_t *s = mkmachine(1), *c;
	mm_result_t res;
	uint32_t id;
	mm_job_t j;

	(void)state;
	/* 2 + 4 cpus: the job needs both nodes */
	id = must(s, (mm_op_t){ .code = MM_OP_SUBMIT_CKPT, .spec = &sp });
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 1, .now_ms = 100 });
	must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED, .job = id });
	assert_int_equal(mm_job_get(s, id, &j), 0);
	assert_int_equal(j.state, MM_JOB_RUNNING);
	assert_int_equal(sp_nodeset_count(j.nodes), 2);
	assert_int_equal(mm_apply(s, &(mm_op_t){ .code = MM_OP_CKPT_REQUEST,
						 .job = id }, &res), 0);
	assert_int_equal(res.epoch, 1);
	must(s, (mm_op_t){ .code = MM_OP_CKPT_COMMIT, .job = id, .epoch = 1,
			   .ckpt_keep = 2,
			   .ckpt_levels = MM_CKPT_L1 | MM_CKPT_L2 });
	c = round_trip(s);
	same_state(s, c);
	mm_state_destroy(c);
	must(s, (mm_op_t){ .code = MM_OP_NODE_DOWN, .node = 3,
			   .reason = "killed" });
	assert_int_equal(mm_job_get(s, id, &j), 0);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_int_equal(j.restore_epoch, 1);
	c = round_trip(s);
	same_state(s, c);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* A job's inputs (digests, sizes, modes) are state: they round trip, and
 * only SUBMIT_INPUTS carries them. */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_requeues_from_an_epoch),
		cmocka_unit_test(test_requeue_starts_over),
		cmocka_unit_test(test_bcs_checkpoint_across_nodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
