/*
 * test_mm_state.c — the Machine Manager's state machine (manager/state.c,
 * submit.c, sched.c): submit checks, FCFS placement at TICK only, the job
 * lifecycle, node failures, time limits, and determinism.  Key rule: a
 * refused operation changes nothing, and the same operations in the same
 * order give the same digest.
 *
 * The machine used throughout: world of 8, compute nodes 1 (4 cpus),
 * 2 (2 cpus), 3 (4 cpus) and 5 (8 cpus): 18 cpus; 0, 4, 6, 7 are not
 * compute nodes.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "storm_manager.h"

#define EXITED(code) W_EXITCODE(code, 0)
#define KILLED(sig) W_EXITCODE(0, sig)

static mm_state_t *mkstate(void)
{
	static const uint32_t ids[] = { 5, 1, 3, 2 }; /* order given: any */
	static const char *const names[] = { "n5", "n1", "n3", "n2" };
	static const uint32_t cpus[] = { 8, 4, 4, 2 };
	mm_state_t *s = NULL;

	assert_int_equal(mm_state_create(8, 4, ids, names, cpus, &s), 0);
	assert_non_null(s);
	/* nodes are in service once they have joined */
	for (uint32_t i = 0; i < 4; i++) {
		mm_op_t up = { .code = MM_OP_NODE_UP, .node = ids[i] };

		assert_int_equal(mm_apply(s, &up, NULL), 0);
	}
	return s;
}

static const char *const true_argv[] = { "/bin/true", "-x" };

static mm_job_spec_t spec_of(uint32_t ranks, uint32_t uid,
			     const char *nodelist)
{
	mm_job_spec_t sp = {
		.name = "job",
		.uid = uid,
		.gid = 100,
		.ranks = ranks,
		.nodelist = nodelist,
		.argc = 2,
		.argv = true_argv,
		.cwd = "/tmp",
	};

	return sp;
}

static int submit_spec(mm_state_t *s, const mm_job_spec_t *sp,
		       mm_result_t *res)
{
	mm_op_t op = { .code = MM_OP_SUBMIT, .spec = sp };

	return mm_apply(s, &op, res);
}

/* Submit that must succeed; returns the id. */
static uint32_t submit(mm_state_t *s, uint32_t ranks, uint32_t uid,
		       const char *nodelist)
{
	mm_job_spec_t sp = spec_of(ranks, uid, nodelist);
	mm_result_t res;

	assert_int_equal(submit_spec(s, &sp, &res), 0);
	assert_int_equal(res.rc, 0);
	assert_true(res.job > 0);
	return res.job;
}

static int apply(mm_state_t *s, mm_op_t op)
{
	mm_result_t res;
	int rc = mm_apply(s, &op, &res);

	assert_int_equal(rc, res.rc);
	if (rc)
		assert_true(res.err[0] != '\0');
	return rc;
}

static void tick(mm_state_t *s, uint64_t slice, uint64_t now_ms)
{
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_TICK,
					     .slice = slice,
					     .now_ms = now_ms }), 0);
}

static mm_job_t job(mm_state_t *s, uint32_t id)
{
	mm_job_t j;

	assert_int_equal(mm_job_get(s, id, &j), 0);
	return j;
}

static mm_node_t node(mm_state_t *s, uint32_t world_id)
{
	mm_node_t n;

	assert_int_equal(mm_node_by_id(s, world_id, &n), 0);
	return n;
}

static uint32_t used_total(mm_state_t *s)
{
	uint32_t sum = 0;
	mm_node_t n;

	for (uint32_t i = 0; mm_node_get(s, i, &n) == 0; i++)
		sum += n.used;
	return sum;
}

static int exited(mm_state_t *s, uint32_t id, uint32_t n,
		  const int32_t *st)
{
	return apply(s, (mm_op_t){ .code = MM_OP_JOB_EXITED, .job = id,
				   .nstatus = n, .status = st });
}

/* Submit and tick a job onto nodes, then stage it: RUNNING. */
static uint32_t running(mm_state_t *s, uint32_t ranks, uint64_t slice,
			uint64_t now_ms)
{
	uint32_t id = submit(s, ranks, 1000, NULL);

	tick(s, slice, now_ms);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_JOB_STAGED,
					     .job = id }), 0);
	assert_int_equal(job(s, id).state, MM_JOB_RUNNING);
	return id;
}

/* Refuse with rc and leave the digest as it was. */
static void assert_refused(mm_state_t *s, const mm_job_spec_t *sp, int rc,
			   const char *needle)
{
	uint64_t before = mm_digest(s);
	mm_result_t res;

	assert_int_equal(submit_spec(s, sp, &res), rc);
	assert_non_null(strstr(res.err, needle));
	assert_int_equal(mm_digest(s), before);
}

/* ------------------------------------------------------------------------ */

static void test_state_create_validates_its_arguments(void **state)
{
	const uint32_t ids[] = { 1, 1 }, cpus[] = { 2, 2 }, zero[] = { 0 };
	const uint32_t far[] = { 8 };
	const char *const names[] = { "a", "b" };
	const char *const noname[] = { NULL };
	mm_state_t *s = (mm_state_t *)0x1;

	(void)state;
	assert_int_equal(mm_state_create(0, 1, ids, names, cpus, &s),
			 -EINVAL);
	assert_int_equal(mm_state_create(8, 0, ids, names, cpus, &s),
			 -EINVAL);
	assert_int_equal(mm_state_create(8, 2, ids, names, cpus, &s),
			 -EINVAL); /* the same id twice */
	assert_int_equal(mm_state_create(8, 1, far, names, cpus, &s),
			 -EINVAL); /* id beyond the world */
	assert_int_equal(mm_state_create(8, 1, ids, names, zero, &s),
			 -EINVAL);
	assert_int_equal(mm_state_create(8, 1, ids, noname, cpus, &s),
			 -EINVAL);
	assert_int_equal(mm_state_create(8, 1, NULL, names, cpus, &s),
			 -EINVAL);
	assert_ptr_equal(s, (mm_state_t *)0x1);
	mm_state_destroy(NULL);
}

static void test_nodes_listed_in_world_id_order(void **state)
{
	mm_state_t *s = mkstate();
	const uint32_t want_id[] = { 1, 2, 3, 5 }, want_cpus[] = { 4, 2, 4, 8 };
	mm_node_t n;

	(void)state;
	assert_int_equal(mm_node_count(s), 4);
	for (uint32_t i = 0; i < 4; i++) {
		char name[8];

		assert_int_equal(mm_node_get(s, i, &n), 0);
		assert_int_equal(n.id, want_id[i]);
		assert_int_equal(n.cpus, want_cpus[i]);
		assert_int_equal(n.state, MM_NODE_UP);
		assert_int_equal(n.used, 0);
		snprintf(name, sizeof(name), "n%u", want_id[i]);
		assert_string_equal(n.name, name);
	}
	assert_int_equal(mm_node_get(s, 4, &n), -ENOENT);
	assert_int_equal(mm_node_by_id(s, 4, &n), -ENOENT);
	assert_int_equal(mm_node_by_id(s, 99, &n), -ENOENT);
	mm_state_destroy(s);
}

static void test_state_names(void **state)
{
	(void)state;
	assert_string_equal(mm_job_state_name(MM_JOB_PENDING), "PENDING");
	assert_string_equal(mm_job_state_name(MM_JOB_STAGING), "STAGING");
	assert_string_equal(mm_job_state_name(MM_JOB_RUNNING), "RUNNING");
	assert_string_equal(mm_job_state_name(MM_JOB_COMPLETED), "COMPLETED");
	assert_string_equal(mm_job_state_name(MM_JOB_FAILED), "FAILED");
	assert_string_equal(mm_job_state_name(MM_JOB_CANCELLED), "CANCELLED");
	assert_string_equal(mm_node_state_name(MM_NODE_UP), "UP");
	assert_string_equal(mm_node_state_name(MM_NODE_DOWN), "DOWN");
	assert_non_null(mm_job_state_name((mm_job_state_t)99));
}

static void test_submit_refuses_zero_ranks(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t sp = spec_of(0, 1000, NULL);

	(void)state;
	assert_refused(s, &sp, -EINVAL, "ranks");
	mm_state_destroy(s);
}

static void test_submit_refuses_missing_program(void **state)
{
	static const char *const empty[] = { "" };
	static const char *const null0[] = { NULL };
	mm_state_t *s = mkstate();
	mm_job_spec_t sp = spec_of(1, 1000, NULL);

	(void)state;
	sp.argc = 0;
	assert_refused(s, &sp, -EINVAL, "argv[0]");
	sp.argc = 1;
	sp.argv = NULL;
	assert_refused(s, &sp, -EINVAL, "argv[0]");
	sp.argv = empty;
	assert_refused(s, &sp, -EINVAL, "argv[0]");
	sp.argv = null0;
	assert_refused(s, &sp, -EINVAL, "argv[0]");
	sp = spec_of(1, 1000, NULL);
	sp.envc = 1; /* a count without strings */
	assert_refused(s, &sp, -EINVAL, "env");
	mm_state_destroy(s);
}

static void test_submit_refuses_more_ranks_than_cpus(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t sp = spec_of(19, 1000, NULL);

	(void)state;
	assert_refused(s, &sp, -EINVAL, "18 cpus");
	sp = spec_of(7, 1000, "1-2"); /* 6 cpus there */
	assert_refused(s, &sp, -EINVAL, "6 cpus");
	sp = spec_of(6, 1000, "1-2");
	assert_int_equal(submit_spec(s, &sp, NULL), 0);
	assert_int_equal(submit(s, 18, 1000, NULL), 2);
	mm_state_destroy(s);
}

static void test_submit_refuses_unparsable_nodelist(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t sp = spec_of(1, 1000, "1-x");

	(void)state;
	assert_refused(s, &sp, -EINVAL, "does not parse");
	sp.nodelist = "3-1";
	assert_refused(s, &sp, -EINVAL, "does not parse");
	sp.nodelist = "9"; /* beyond the world of 8 */
	assert_refused(s, &sp, -EINVAL, "does not parse");
	mm_state_destroy(s);
}

static void test_submit_refuses_nodelist_naming_non_compute_node(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t sp = spec_of(1, 1000, "1,4");

	(void)state;
	assert_refused(s, &sp, -EINVAL, "node 4");
	sp.nodelist = "0-1";
	assert_refused(s, &sp, -EINVAL, "node 0");
	mm_state_destroy(s);
}

static void test_submit_assigns_ids_from_1_and_copies_strings(void **state)
{
	mm_state_t *s = mkstate();
	char prog[] = "/bin/prog", env0[] = "A=1", file0[] = "/data/in";
	char cwd[] = "/home/u", name[] = "myjob", nl[] = "3,5";
	const char *argv[] = { prog, "arg" };
	const char *env[] = { env0 };
	const char *files[] = { file0 };
	mm_job_spec_t sp = {
		.name = name, .uid = 7, .gid = 8, .ranks = 3, .nodelist = nl,
		.argc = 2, .argv = argv, .envc = 1, .env = env, .cwd = cwd,
		.nfiles = 1, .files = files, .batch = 1,
		.out_path = "out.%j.%r", .err_path = NULL,
		.time_limit_ms = 5000,
	};
	mm_result_t res;
	mm_job_t j;

	(void)state;
	assert_int_equal(submit_spec(s, &sp, &res), 0);
	assert_int_equal(res.job, 1);
	assert_int_equal(submit(s, 1, 7, NULL), 2);
	/* the caller's buffers may change or go away */
	memset(prog, 'X', sizeof(prog) - 1);
	memset(env0, 'X', sizeof(env0) - 1);
	memset(file0, 'X', sizeof(file0) - 1);
	memset(cwd, 'X', sizeof(cwd) - 1);
	memset(name, 'X', sizeof(name) - 1);
	memset(nl, 'X', sizeof(nl) - 1);
	j = job(s, 1);
	assert_int_equal(j.id, 1);
	assert_string_equal(j.name, "myjob");
	assert_int_equal(j.uid, 7);
	assert_int_equal(j.gid, 8);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_int_equal(j.ranks, 3);
	assert_int_equal(j.argc, 2);
	assert_string_equal(j.argv[0], "/bin/prog");
	assert_string_equal(j.argv[1], "arg");
	assert_int_equal(j.envc, 1);
	assert_string_equal(j.env[0], "A=1");
	assert_string_equal(j.cwd, "/home/u");
	assert_int_equal(j.nfiles, 1);
	assert_string_equal(j.files[0], "/data/in");
	assert_int_equal(j.batch, 1);
	assert_string_equal(j.out_path, "out.%j.%r");
	assert_null(j.err_path);
	assert_int_equal(j.time_limit_ms, 5000);
	assert_int_equal(sp_nodeset_count(j.nodes), 0);
	assert_null(j.rank_status);
	assert_int_equal(mm_job_get(s, 3, &j), -ENOENT);
	assert_int_equal(mm_job_get(s, 0, &j), -ENOENT);
	mm_state_destroy(s);
}

static void test_jobs_are_scheduled_only_at_tick(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = submit(s, 2, 1000, NULL);

	(void)state;
	assert_int_equal(job(s, id).state, MM_JOB_PENDING);
	assert_int_equal(used_total(s), 0);
	/* other operations do not schedule either */
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_NODE_UP,
					     .node = 1 }), 0);
	assert_int_equal(job(s, id).state, MM_JOB_PENDING);
	tick(s, 1, 1000);
	assert_int_equal(job(s, id).state, MM_JOB_STAGING);
	assert_int_equal(job(s, id).start_slice, 1);
	assert_int_equal(job(s, id).start_ms, 1000);
	assert_int_equal(mm_slice(s), 1);
	assert_int_equal(used_total(s), 2);
	mm_state_destroy(s);
}

/* Columns: n1 [0,4), n2 [4,6), n3 [8,12), n5 [16,24) (each node aligned
 * to its cpus rounded up to a power of two), 32 leaves in the tree. */
static void test_buddy_places_jobs_in_aligned_blocks(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 7, 1000, NULL);
	uint32_t b = submit(s, 5, 1000, NULL);
	const uint32_t want_a[] = { 5, 5, 5, 5, 5, 5, 5 };
	const uint32_t want_b[] = { 1, 1, 1, 1, 2 };
	mm_job_t j;

	(void)state;
	tick(s, 1, 10);
	/* width 8: [0,8) has 6 PEs, [8,16) 4, [16,24) 8 */
	j = job(s, a);
	assert_int_equal(j.state, MM_JOB_STAGING);
	assert_memory_equal(j.rank_node, want_a, sizeof(want_a));
	assert_int_equal(j.row, 0);
	assert_int_equal(j.col, 16);
	assert_int_equal(j.width, 8);
	assert_int_equal(sp_nodeset_count(j.nodes), 1);
	j = job(s, b);
	assert_memory_equal(j.rank_node, want_b, sizeof(want_b));
	assert_int_equal(j.col, 0);
	assert_int_equal(j.width, 8);
	assert_int_equal(sp_nodeset_count(j.nodes), 2);
	assert_int_equal(node(s, 1).used, 4);
	assert_int_equal(node(s, 2).used, 1);
	assert_int_equal(node(s, 3).used, 0);
	assert_int_equal(node(s, 5).used, 7);
	assert_int_equal(mm_matrix_check(s, NULL, 0), 0);
	mm_state_destroy(s);
}

static void test_strict_fcfs_head_blocks_later_jobs(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 16, 1000, NULL);
	uint32_t b = submit(s, 4, 1000, NULL);  /* 2 free: cannot start */
	uint32_t c = submit(s, 1, 1000, NULL);  /* would fit, but waits */
	char want[64];

	(void)state;
	tick(s, 1, 10);
	assert_int_equal(job(s, a).state, MM_JOB_STAGING);
	assert_int_equal(job(s, b).state, MM_JOB_PENDING);
	assert_int_equal(job(s, c).state, MM_JOB_PENDING);
	assert_string_equal(job(s, b).reason, "head of queue: waiting for a "
			    "free block of width 4 (4 ranks)");
	snprintf(want, sizeof(want), "queued behind job %u", b);
	assert_string_equal(job(s, c).reason, want);
	assert_int_equal(used_total(s), 16);
	/* a ends: b and c start at the next tick, in order */
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = a,
					     .uid = 0 }), 0);
	assert_int_equal(job(s, b).state, MM_JOB_PENDING);
	tick(s, 2, 20);
	assert_int_equal(job(s, b).state, MM_JOB_STAGING);
	assert_int_equal(job(s, c).state, MM_JOB_STAGING);
	assert_int_equal(job(s, b).rank_node[0], 1);
	assert_int_equal(job(s, c).rank_node[0], 2);
	assert_string_equal(job(s, c).reason, "");
	mm_state_destroy(s);
}

static void test_nodelist_restricts_placement(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 5, 1000, "3,5");
	uint32_t b = submit(s, 2, 1000, "2");
	mm_job_t j;

	(void)state;
	tick(s, 1, 10);
	j = job(s, a);
	assert_int_equal(j.state, MM_JOB_STAGING);
	/* width 8: [8,16) holds only n3's 4 PEs, [16,24) n5's 8 */
	for (uint32_t r = 0; r < 5; r++)
		assert_int_equal(j.rank_node[r], 5);
	assert_false(sp_nodeset_has(j.nodes, 1));
	assert_false(sp_nodeset_has(j.nodes, 3));
	j = job(s, b);
	assert_int_equal(j.state, MM_JOB_STAGING);
	assert_int_equal(j.rank_node[0], 2);
	assert_int_equal(j.rank_node[1], 2);
	assert_int_equal(node(s, 1).used, 0); /* free, but not listed */
	mm_state_destroy(s);
}

static void test_nodelist_job_waits_for_its_nodes(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 8, 1000, "5");
	uint32_t b = submit(s, 1, 1000, "5");

	(void)state;
	tick(s, 1, 10);
	assert_int_equal(job(s, a).state, MM_JOB_STAGING);
	/* 10 cpus are free elsewhere, but not on node 5 */
	assert_int_equal(job(s, b).state, MM_JOB_PENDING);
	assert_string_equal(job(s, b).reason, "head of queue: waiting for a "
			    "free block of width 1 (1 rank)");
	mm_state_destroy(s);
}

static void test_staged_moves_staging_to_running(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = submit(s, 1, 1000, NULL);
	mm_op_t staged = { .code = MM_OP_JOB_STAGED, .job = id };

	(void)state;
	assert_int_equal(apply(s, staged), -EALREADY); /* still PENDING */
	tick(s, 1, 10);
	assert_int_equal(apply(s, staged), 0);
	assert_int_equal(job(s, id).state, MM_JOB_RUNNING);
	assert_int_equal(apply(s, staged), -EALREADY);
	staged.job = 99;
	assert_int_equal(apply(s, staged), -ENOENT);
	mm_state_destroy(s);
}

static void test_exited_all_zero_completes(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = running(s, 3, 1, 10);
	const int32_t st[] = { EXITED(0), EXITED(0), EXITED(0) };
	mm_job_t j;

	(void)state;
	tick(s, 4, 400);
	assert_int_equal(exited(s, id, 3, st), 0);
	j = job(s, id);
	assert_int_equal(j.state, MM_JOB_COMPLETED);
	assert_int_equal(j.exit_code, 0);
	assert_non_null(j.rank_status);
	assert_memory_equal(j.rank_status, st, sizeof(st));
	assert_int_equal(j.end_slice, 4);
	assert_int_equal(j.end_ms, 400);
	assert_int_equal(used_total(s), 0);
	mm_state_destroy(s);
}

static void test_exited_nonzero_fails_with_first_rank(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = running(s, 5, 1, 10);
	const int32_t st[] = { EXITED(0), EXITED(0), EXITED(0), EXITED(2),
			       EXITED(3) };
	mm_job_t j;

	(void)state;
	assert_int_equal(exited(s, id, 5, st), 0);
	j = job(s, id);
	assert_int_equal(j.state, MM_JOB_FAILED);
	assert_int_equal(j.exit_code, 2);
	assert_string_equal(j.reason, "rank 3 exited with status 2");
	assert_int_equal(used_total(s), 0);
	mm_state_destroy(s);
}

static void test_exited_by_signal_fails_with_128_plus_signal(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = running(s, 2, 1, 10);
	const int32_t st[] = { EXITED(0), KILLED(SIGKILL) };
	mm_job_t j;

	(void)state;
	assert_int_equal(exited(s, id, 2, st), 0);
	j = job(s, id);
	assert_int_equal(j.state, MM_JOB_FAILED);
	assert_int_equal(j.exit_code, 128 + SIGKILL);
	assert_string_equal(j.reason, "rank 1 killed by signal 9");
	mm_state_destroy(s);
}

static void test_exited_refuses_wrong_count_and_wrong_state(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = running(s, 2, 1, 10);
	uint32_t pend = submit(s, 18, 1000, NULL);
	const int32_t st[] = { 0, 0, 0 };
	uint64_t before = mm_digest(s);

	(void)state;
	assert_int_equal(exited(s, id, 3, st), -EINVAL);
	assert_int_equal(exited(s, id, 1, st), -EINVAL);
	assert_int_equal(exited(s, id, 2, NULL), -EINVAL);
	assert_int_equal(exited(s, pend, 18, NULL), -EINVAL); /* PENDING */
	assert_int_equal(exited(s, 77, 2, st), -ENOENT);
	assert_int_equal(mm_digest(s), before);
	assert_int_equal(exited(s, id, 2, st), 0);
	assert_int_equal(exited(s, id, 2, st), -EALREADY);
	mm_state_destroy(s);
}

static void test_exited_while_staging_is_accepted(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = submit(s, 1, 1000, NULL);
	const int32_t st[] = { EXITED(0) };

	(void)state;
	tick(s, 1, 10);
	assert_int_equal(exited(s, id, 1, st), 0);
	assert_int_equal(job(s, id).state, MM_JOB_COMPLETED);
	mm_state_destroy(s);
}

static void test_job_failed_ends_job_with_reason(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id = running(s, 4, 1, 10);
	mm_op_t op = { .code = MM_OP_JOB_FAILED, .job = id,
		       .reason = "launch failed on n1: No such file" };

	(void)state;
	assert_int_equal(apply(s, op), 0);
	assert_int_equal(job(s, id).state, MM_JOB_FAILED);
	assert_string_equal(job(s, id).reason,
			    "launch failed on n1: No such file");
	assert_int_equal(used_total(s), 0);
	assert_int_equal(apply(s, op), -EALREADY);
	mm_state_destroy(s);
}

static void test_cancel_by_owner_or_root(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 2, 1000, NULL);
	uint32_t b = submit(s, 2, 1000, NULL);

	(void)state;
	tick(s, 1, 10);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = a,
					     .uid = 1000 }), 0);
	assert_int_equal(job(s, a).state, MM_JOB_CANCELLED);
	assert_string_equal(job(s, a).reason, "cancelled by uid 1000");
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = b,
					     .uid = 0 }), 0);
	assert_string_equal(job(s, b).reason,
			    "cancelled by root or an administrator");
	assert_int_equal(used_total(s), 0);
	mm_state_destroy(s);
}

static void test_cancel_by_other_uid_is_refused(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 2, 1000, NULL);
	uint64_t before = mm_digest(s);
	mm_op_t op = { .code = MM_OP_CANCEL, .job = a, .uid = 1001 };
	mm_result_t res;

	(void)state;
	assert_int_equal(mm_apply(s, &op, &res), -EPERM);
	assert_non_null(strstr(res.err, "uid 1000"));
	assert_int_equal(job(s, a).state, MM_JOB_PENDING);
	assert_int_equal(mm_digest(s), before);
	op.job = 42;
	assert_int_equal(apply(s, op), -ENOENT);
	mm_state_destroy(s);
}

static void test_cancel_of_ended_job_is_refused(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = submit(s, 2, 1000, NULL);
	mm_op_t op = { .code = MM_OP_CANCEL, .job = a, .uid = 1000 };

	(void)state;
	assert_int_equal(apply(s, op), 0);
	assert_int_equal(apply(s, op), -EALREADY);
	/* the record stays, as history */
	assert_int_equal(job(s, a).state, MM_JOB_CANCELLED);
	mm_state_destroy(s);
}

/* Admission caps ride in SUBMIT_CAPPED: the PENDING jobs in all and of
 * the submitting uid are counted; over a cap the submission is refused
 * with a clear error and nothing changes; a job that starts or is
 * cancelled frees its place; the counts survive a snapshot. */
static void test_submit_capped_refuses_over_the_pending_caps(void **state)
{
	mm_state_t *s = mkstate(), *t = NULL;
	mm_job_spec_t a = spec_of(18, 1000, NULL), b = spec_of(18, 2000, NULL);
	mm_op_t op = { .code = MM_OP_SUBMIT_CAPPED, .max_pending = 5,
		       .max_pending_user = 3 };
	mm_result_t res;
	uint8_t *snap = NULL;
	size_t n = 0;
	uint64_t d;
	char err[256];

	(void)state;
	/* 18 ranks fill the machine: one runs, the rest stay PENDING */
	op.spec = &a;
	for (int i = 0; i < 3; i++)
		assert_int_equal(mm_apply(s, &op, &res), 0);
	assert_int_equal(mm_pending_count(s, 1000), 3);
	d = mm_digest(s);
	assert_int_equal(mm_apply(s, &op, &res), -EAGAIN);
	assert_non_null(strstr(res.err, "max_pending_per_user"));
	assert_true(mm_digest(s) == d); /* refused: nothing changed */
	op.spec = &b;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	assert_int_equal(mm_apply(s, &op, &res), 0);
	assert_int_equal(mm_pending_count(s, UINT32_MAX), 5);
	assert_int_equal(mm_apply(s, &op, &res), -EAGAIN);
	assert_non_null(strstr(res.err, "queue is full"));
	/* a plain SUBMIT has no caps */
	assert_int_equal(submit_spec(s, &b, &res), 0);
	assert_int_equal(mm_pending_count(s, UINT32_MAX), 6);
	/* one starts (the first), one is cancelled: two places free */
	tick(s, 1, 1000);
	assert_int_equal(job(s, 1).state, MM_JOB_STAGING);
	assert_int_equal(mm_pending_count(s, 1000), 2);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = 4,
					     .uid = 2000 }), 0);
	assert_int_equal(mm_pending_count(s, 2000), 2);
	assert_int_equal(mm_pending_count(s, UINT32_MAX), 4);
	op.spec = &a;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	/* the counts come back from a snapshot */
	assert_int_equal(mm_state_encode(s, &snap, &n), 0);
	assert_int_equal(mm_state_decode(snap, n, &t, err, sizeof(err)), 0);
	assert_int_equal(mm_pending_count(t, UINT32_MAX),
			 mm_pending_count(s, UINT32_MAX));
	assert_int_equal(mm_pending_count(t, 1000), 3);
	assert_int_equal(mm_pending_count(t, 2000), 2);
	assert_int_equal(mm_pending_count(t, 3000), 0);
	assert_true(mm_state_bytes(t) == mm_state_bytes(s));
	free(snap);
	mm_state_destroy(t);
	mm_state_destroy(s);
}

/* Two uids in one probe chain of the pending counts (1000 and 1016 hash
 * alike in a table of 16): the first's count falling to 0 must not cut
 * the chain, or the second's decrement is lost and its count is wrong
 * for ever (and replicas that rebuilt from a snapshot would disagree). */
static void test_pending_counts_of_colliding_uids(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t a = spec_of(18, 1000, NULL), b = spec_of(18, 1016, NULL);
	mm_result_t res;

	(void)state;
	assert_int_equal(submit_spec(s, &a, &res), 0);
	assert_int_equal(submit_spec(s, &b, &res), 0);
	tick(s, 1, 1000); /* a starts: 1000's count falls to 0 */
	assert_int_equal(mm_pending_count(s, 1000), 0);
	assert_int_equal(mm_pending_count(s, 1016), 1);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = 1,
					     .uid = 0 }), 0);
	tick(s, 2, 2000); /* b starts */
	assert_int_equal(job(s, 2).state, MM_JOB_STAGING);
	assert_int_equal(mm_pending_count(s, 1016), 0);
	assert_int_equal(mm_pending_count(s, UINT32_MAX), 0);
	assert_int_equal(submit_spec(s, &b, &res), 0);
	assert_int_equal(mm_pending_count(s, 1016), 1);
	assert_int_equal(mm_pending_count(s, 1000), 0);
	mm_state_destroy(s);
}

/* JOB_EXITED_USAGE keeps each rank's usage with the job, through a
 * snapshot; without usage it is refused. */
static void test_exited_with_usage_keeps_it(void **state)
{
	mm_state_t *s = mkstate(), *t = NULL;
	static const int32_t st[2] = { 0, 0 };
	static const mm_usage_t u[2] = { { 10, 20, 300 }, { 11, 21, 301 } };
	uint32_t id;
	uint8_t *snap = NULL;
	size_t n = 0;
	char err[256];
	mm_job_t j;

	(void)state;
	id = running(s, 2, 1, 1000);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_JOB_EXITED_USAGE,
					     .job = id, .nstatus = 2,
					     .status = st }), -EINVAL);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_JOB_EXITED_USAGE,
					     .job = id, .nstatus = 2,
					     .status = st, .usage = u }), 0);
	j = job(s, id);
	assert_int_equal(j.state, MM_JOB_COMPLETED);
	assert_non_null(j.rank_usage);
	assert_memory_equal(j.rank_usage, u, sizeof(u));
	assert_int_equal(mm_state_encode(s, &snap, &n), 0);
	assert_int_equal(mm_state_decode(snap, n, &t, err, sizeof(err)), 0);
	assert_int_equal(mm_job_get(t, id, &j), 0);
	assert_non_null(j.rank_usage);
	assert_memory_equal(j.rank_usage, u, sizeof(u));
	assert_true(mm_digest(t) == mm_digest(s));
	free(snap);
	mm_state_destroy(t);
	mm_state_destroy(s);
}

/* The size budget: a submission that would take the jobs' bytes past it
 * is refused "state full" and changes nothing; a cancel goes on. */
static void test_submit_capped_refuses_past_the_state_budget(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t a = spec_of(1, 1000, NULL);
	mm_op_t op = { .code = MM_OP_SUBMIT_CAPPED, .spec = &a };
	mm_result_t res;
	uint64_t one, d;

	(void)state;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	one = mm_state_bytes(s);
	assert_true(one > 100 && one < 1000);
	op.max_state_bytes = 3 * one;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	assert_int_equal(mm_apply(s, &op, &res), 0);
	d = mm_digest(s);
	assert_int_equal(mm_apply(s, &op, &res), -ENOSPC);
	assert_non_null(strstr(res.err, "state full"));
	assert_true(mm_digest(s) == d && mm_state_bytes(s) == 3 * one);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = 2,
					     .uid = 1000 }), 0);
	/* without a budget (plain SUBMIT, or 0) it is taken */
	op.max_state_bytes = 0;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	mm_state_destroy(s);
}

static void test_node_down_fails_its_jobs_and_frees_cpus(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t a = running(s, 6, 1, 10);  /* n1 x4, n2 x2 */
	uint32_t b = submit(s, 8, 1000, "5");
	uint32_t c = submit(s, 10, 1000, NULL);
	mm_op_t down = { .code = MM_OP_NODE_DOWN, .node = 2,
			 .reason = "heartbeat lost" };
	mm_node_t n;

	(void)state;
	tick(s, 2, 20);
	assert_int_equal(job(s, b).state, MM_JOB_STAGING);
	assert_int_equal(job(s, c).state, MM_JOB_PENDING); /* 4 free */
	assert_int_equal(apply(s, down), 0);
	assert_int_equal(job(s, a).state, MM_JOB_FAILED);
	assert_string_equal(job(s, a).reason,
			    "node n2 failed: heartbeat lost");
	assert_int_equal(job(s, b).state, MM_JOB_STAGING); /* not on n2 */
	n = node(s, 2);
	assert_int_equal(n.state, MM_NODE_DOWN);
	assert_string_equal(n.reason, "heartbeat lost");
	assert_int_equal(n.failures, 1);
	assert_int_equal(n.used, 0);
	assert_int_equal(node(s, 1).used, 0); /* a's cpus everywhere */
	assert_int_equal(job(s, c).state, MM_JOB_PENDING); /* until a tick */
	tick(s, 3, 30);
	/* 8 free on n1 and n3 plus none on DOWN n2: c needs 10 */
	assert_int_equal(job(s, c).state, MM_JOB_PENDING);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = b,
					     .uid = 0 }), 0);
	tick(s, 4, 40);
	assert_int_equal(job(s, c).state, MM_JOB_STAGING);
	for (uint32_t r = 0; r < 10; r++)
		assert_int_not_equal(job(s, c).rank_node[r], 2);
	mm_state_destroy(s);
}

static void test_node_down_twice_is_a_noop_and_unknown_is_enoent(void **state)
{
	mm_state_t *s = mkstate();
	mm_op_t down = { .code = MM_OP_NODE_DOWN, .node = 3, .reason = "x" };
	uint64_t d;

	(void)state;
	assert_int_equal(apply(s, down), 0);
	d = mm_digest(s);
	down.reason = "again";
	assert_int_equal(apply(s, down), 0);
	assert_int_equal(mm_digest(s), d);
	assert_int_equal(node(s, 3).failures, 1);
	assert_string_equal(node(s, 3).reason, "x");
	down.node = 4;
	assert_int_equal(apply(s, down), -ENOENT);
	down.node = 1000;
	assert_int_equal(apply(s, down), -ENOENT);
	mm_state_destroy(s);
}

/* A node is in service only once it has joined: before NODE_UP it is
 * DOWN, says why, and no job is placed on it. */
static void test_nodes_start_down_until_they_join(void **state)
{
	static const uint32_t ids[] = { 1, 2 };
	static const char *const names[] = { "a", "b" };
	static const uint32_t cpus[] = { 1, 1 };
	mm_op_t up = { .code = MM_OP_NODE_UP, .node = 2 };
	mm_state_t *s = NULL;
	mm_node_t n;
	mm_job_t j;
	uint32_t id;

	(void)state;
	assert_int_equal(mm_state_create(4, 2, ids, names, cpus, &s), 0);
	assert_int_equal(mm_node_by_id(s, 1, &n), 0);
	assert_int_equal(n.state, MM_NODE_DOWN);
	assert_string_equal(n.reason, "has not joined yet");
	assert_int_equal(n.failures, 0);
	id = submit(s, 1, 7, NULL);
	tick(s, 1, 10);
	assert_int_equal(mm_job_get(s, id, &j), 0);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_int_equal(mm_apply(s, &up, NULL), 0);
	tick(s, 2, 20);
	assert_int_equal(mm_job_get(s, id, &j), 0);
	assert_int_equal(j.state, MM_JOB_STAGING);
	assert_int_equal(j.rank_node[0], 2);
	mm_state_destroy(s);
}

static void test_node_up_returns_node_to_service(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t id;

	(void)state;
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_NODE_DOWN,
					     .node = 1, .reason = "r" }), 0);
	id = submit(s, 1, 1000, "1");
	tick(s, 1, 10);
	assert_int_equal(job(s, id).state, MM_JOB_PENDING);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_NODE_UP,
					     .node = 1 }), 0);
	assert_int_equal(node(s, 1).state, MM_NODE_UP);
	assert_string_equal(node(s, 1).reason, "");
	assert_int_equal(node(s, 1).failures, 1);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_NODE_UP,
					     .node = 1 }), 0);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_NODE_UP,
					     .node = 0 }), -ENOENT);
	tick(s, 2, 20);
	assert_int_equal(job(s, id).state, MM_JOB_STAGING);
	mm_state_destroy(s);
}

static void test_time_limit_fails_job_at_tick(void **state)
{
	mm_state_t *s = mkstate();
	mm_job_spec_t sp = spec_of(2, 1000, NULL);
	mm_result_t res;

	(void)state;
	sp.time_limit_ms = 500;
	assert_int_equal(submit_spec(s, &sp, &res), 0);
	tick(s, 1, 1000);
	assert_int_equal(job(s, res.job).state, MM_JOB_STAGING);
	tick(s, 2, 1500); /* exactly the limit: still allowed */
	assert_int_equal(job(s, res.job).state, MM_JOB_STAGING);
	tick(s, 3, 1501);
	assert_int_equal(job(s, res.job).state, MM_JOB_FAILED);
	assert_string_equal(job(s, res.job).reason,
			    "time limit of 500 ms exceeded");
	assert_int_equal(job(s, res.job).end_slice, 3);
	assert_int_equal(used_total(s), 0);
	mm_state_destroy(s);
}

static void test_tick_refuses_an_older_slice(void **state)
{
	mm_state_t *s = mkstate();

	(void)state;
	tick(s, 5, 100);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 4,
					     .now_ms = 200 }), -EINVAL);
	assert_int_equal(mm_slice(s), 5);
	tick(s, 5, 50); /* same slice, clock stepped back: accepted */
	assert_int_equal(mm_slice(s), 5);
	mm_state_destroy(s);
}

static void test_apply_refuses_unknown_opcode(void **state)
{
	mm_state_t *s = mkstate();

	(void)state;
	assert_int_equal(apply(s, (mm_op_t){ .code = (mm_opcode_t)0 }),
			 -EINVAL);
	assert_int_equal(apply(s, (mm_op_t){ .code = (mm_opcode_t)999 }),
			 -EINVAL);
	assert_int_equal(mm_apply(s, NULL, NULL), -EINVAL);
	mm_state_destroy(s);
}

static void test_job_next_iterates_in_id_order(void **state)
{
	mm_state_t *s = mkstate();
	uint32_t seen = 0;
	mm_job_t j;

	(void)state;
	for (int i = 0; i < 5; i++)
		submit(s, 1, 1000, NULL);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = 2,
					     .uid = 0 }), 0);
	for (uint32_t id = 0; mm_job_next(s, id, &j) == 0; id = j.id + 1)
		assert_int_equal(j.id, ++seen);
	assert_int_equal(seen, 5);
	assert_int_equal(mm_job_next(s, 3, &j), 0);
	assert_int_equal(j.id, 3);
	assert_int_equal(mm_job_next(s, 6, &j), -ENOENT);
	mm_state_destroy(s);
}

/* A small deterministic generator, so the test is the same every run. */
static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Mostly a job that holds nodes (where the action is), else one of the
 * newest, sometimes one that does not exist. */
static uint32_t some_job(uint64_t *x, const mm_state_t *s)
{
	uint32_t last = 0, nlive = 0, pick, back;
	mm_job_t j;

	for (uint32_t id = 1; mm_job_next(s, id, &j) == 0; id = j.id + 1) {
		last = j.id;
		nlive += j.state == MM_JOB_STAGING || j.state == MM_JOB_RUNNING;
	}
	if (nlive && rng_next(x) % 4) {
		pick = (uint32_t)(rng_next(x) % nlive);
		for (uint32_t id = 1; mm_job_next(s, id, &j) == 0;
		     id = j.id + 1) {
			if ((j.state == MM_JOB_STAGING ||
			     j.state == MM_JOB_RUNNING) && pick-- == 0)
				return j.id;
		}
	}
	back = (uint32_t)(rng_next(x) % 12);
	if (back == 11)
		return last + 1; /* not there (yet) */
	return last > back ? last - back : 1;
}

/* A random operation, mostly sensible (some are refused: replicas must
 * agree on that too).  Reads s only to aim at real jobs. */
static mm_op_t random_op(uint64_t *x, const mm_state_t *s, uint64_t *slice,
			 mm_job_spec_t *sp, int32_t *st, uint32_t nst_max)
{
	static const char *const lists[] = { NULL, "1-3", "5", "2,5", "" };
	mm_op_t op = { 0 };
	mm_job_t j;

	switch (rng_next(x) % 10) {
	case 0:
		*sp = spec_of(1 + (uint32_t)(rng_next(x) % 10),
			      1000 + (uint32_t)(rng_next(x) % 3),
			      lists[rng_next(x) % 5]);
		sp->time_limit_ms = rng_next(x) % 3 ? 0 : 300;
		op.code = MM_OP_SUBMIT;
		op.spec = sp;
		break;
	case 2:
	case 3:
		*slice += 1;
		op.code = MM_OP_TICK;
		op.slice = *slice;
		op.now_ms = *slice * 100;
		break;
	case 4:
	case 8:
		op.code = rng_next(x) % 4 ? MM_OP_JOB_STAGED : MM_OP_CANCEL;
		op.job = some_job(x, s);
		op.uid = rng_next(x) % 2 ? 0 : 1000;
		break;
	case 5:
	case 6:
		op.code = MM_OP_JOB_EXITED;
		op.job = some_job(x, s);
		op.nstatus = 1 + (uint32_t)(rng_next(x) % nst_max);
		if (mm_job_get(s, op.job, &j) == 0 && rng_next(x) % 8)
			op.nstatus = j.ranks;
		for (uint32_t i = 0; i < op.nstatus; i++)
			st[i] = rng_next(x) % 8 ? 0 : EXITED(1);
		op.status = st;
		break;
	case 7:
		op.code = rng_next(x) % 3 ? MM_OP_NODE_UP : MM_OP_NODE_DOWN;
		op.node = (uint32_t)(rng_next(x) % 7);
		op.reason = "random failure";
		break;
	default:
		op.code = MM_OP_JOB_FAILED;
		op.job = some_job(x, s);
		op.reason = "random launch error";
		break;
	}
	return op;
}

static void test_same_ops_give_same_digest(void **state)
{
	mm_state_t *a = mkstate(), *b = mkstate();
	uint64_t x = 0x9e3779b97f4a7c15ULL, slice = 0;
	uint32_t seen[MM_JOB_CANCELLED + 1] = { 0 }, newest = 0;
	int32_t st[10];
	uint8_t buf[4096];
	mm_job_t j;

	(void)state;
	assert_int_equal(mm_digest(a), mm_digest(b));
	for (int i = 0; i < 3000; i++) {
		mm_job_spec_t sp;
		mm_op_t op = random_op(&x, a, &slice, &sp, st, 10), dop;
		mm_result_t ra, rb;
		void *arena = NULL;
		int n;

		/* replica b reads the op back from the log form */
		n = mm_op_encode(&op, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal(mm_op_decode(buf, (size_t)n, &dop, &arena),
				 0);
		assert_int_equal(mm_apply(a, &op, &ra),
				 mm_apply(b, &dop, &rb));
		assert_int_equal(ra.job, rb.job);
		assert_string_equal(ra.err, rb.err);
		free(arena);
		assert_int_equal(mm_digest(a), mm_digest(b));
		if (ra.job)
			newest = ra.job;
		for (uint32_t id = newest > 30 ? newest - 30 : 1;
		     mm_job_next(a, id, &j) == 0; id = j.id + 1)
			seen[j.state]++;
	}
	assert_int_equal(mm_slice(a), slice);
	/* the sequence went through every job state, so the digests
	 * compared more than queues */
	for (int k = MM_JOB_PENDING; k <= MM_JOB_CANCELLED; k++)
		assert_true(seen[k] > 0);
	/* one more accepted op on one side only: the digests part */
	tick(a, slice + 1, (slice + 1) * 100);
	assert_int_not_equal(mm_digest(a), mm_digest(b));
	mm_state_destroy(a);
	mm_state_destroy(b);
}

static void test_different_op_gives_different_digest(void **state)
{
	mm_state_t *a = mkstate(), *b = mkstate();

	(void)state;
	submit(a, 2, 1000, NULL);
	submit(b, 2, 1001, NULL); /* differs only in the uid */
	assert_int_not_equal(mm_digest(a), mm_digest(b));
	mm_state_destroy(a);
	mm_state_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_create_validates_its_arguments),
		cmocka_unit_test(test_nodes_listed_in_world_id_order),
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_submit_refuses_zero_ranks),
		cmocka_unit_test(test_submit_refuses_missing_program),
		cmocka_unit_test(test_submit_refuses_more_ranks_than_cpus),
		cmocka_unit_test(test_submit_refuses_unparsable_nodelist),
		cmocka_unit_test(
			test_submit_refuses_nodelist_naming_non_compute_node),
		cmocka_unit_test(
			test_submit_assigns_ids_from_1_and_copies_strings),
		cmocka_unit_test(test_jobs_are_scheduled_only_at_tick),
		cmocka_unit_test(test_buddy_places_jobs_in_aligned_blocks),
		cmocka_unit_test(test_strict_fcfs_head_blocks_later_jobs),
		cmocka_unit_test(test_nodelist_restricts_placement),
		cmocka_unit_test(test_nodelist_job_waits_for_its_nodes),
		cmocka_unit_test(test_staged_moves_staging_to_running),
		cmocka_unit_test(test_exited_all_zero_completes),
		cmocka_unit_test(test_exited_nonzero_fails_with_first_rank),
		cmocka_unit_test(
			test_exited_by_signal_fails_with_128_plus_signal),
		cmocka_unit_test(
			test_exited_refuses_wrong_count_and_wrong_state),
		cmocka_unit_test(test_exited_while_staging_is_accepted),
		cmocka_unit_test(test_job_failed_ends_job_with_reason),
		cmocka_unit_test(test_cancel_by_owner_or_root),
		cmocka_unit_test(test_cancel_by_other_uid_is_refused),
		cmocka_unit_test(test_cancel_of_ended_job_is_refused),
		cmocka_unit_test(test_submit_capped_refuses_over_the_pending_caps),
		cmocka_unit_test(test_submit_capped_refuses_past_the_state_budget),
		cmocka_unit_test(test_exited_with_usage_keeps_it),
		cmocka_unit_test(test_pending_counts_of_colliding_uids),
		cmocka_unit_test(test_node_down_fails_its_jobs_and_frees_cpus),
		cmocka_unit_test(
			test_node_down_twice_is_a_noop_and_unknown_is_enoent),
		cmocka_unit_test(test_nodes_start_down_until_they_join),
		cmocka_unit_test(test_node_up_returns_node_to_service),
		cmocka_unit_test(test_time_limit_fails_job_at_tick),
		cmocka_unit_test(test_tick_refuses_an_older_slice),
		cmocka_unit_test(test_apply_refuses_unknown_opcode),
		cmocka_unit_test(test_job_next_iterates_in_id_order),
		cmocka_unit_test(test_same_ops_give_same_digest),
		cmocka_unit_test(test_different_op_gives_different_digest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
