/*
 * test_mm_sched.c — the scheduler of the Machine Manager's state machine
 * (manager/matrix.c, sched.c): buddy blocks in the Ousterhout matrix
 * (aligned, tightest fit, coalescing, internal fragmentation), the
 * policies (strict fcfs, EASY backfill, gang over MPL rows and the row
 * rotation), MOLAR placement, time limits, MM_OP_SCHED and expected
 * starts.  Key rules: every operation leaves mm_matrix_check() happy (the
 * helpers check it after each one), and EASY never starts the head of the
 * queue later than the reservation it was given.
 *
 * Machines are built per test: node ids 0..n-1, names "n<id>", all UP,
 * and the scheduler settings given.  The seeded property tests print
 * their seed; STORM_FUZZ_SEED=N replays one.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz_rng.h"

#include "storm_manager.h"

#define MAXNODES 16

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static void check(const mm_state_t *s)
{
	char err[256];

	if (mm_matrix_check(s, err, sizeof(err)))
		fail_msg("matrix check: %s", err);
}

/* A machine of n nodes (ids 0..n-1) with the cpus given, all UP. */
static mm_state_t *mkmachine(uint32_t n, const uint32_t *cpus,
			     mm_policy_t policy, uint32_t mpl,
			     uint32_t quantum, mm_placement_t placement)
{
	uint32_t ids[MAXNODES];
	char namebuf[MAXNODES][8];
	const char *names[MAXNODES];
	mm_sched_conf_t c = { policy, mpl, quantum, placement };
	mm_state_t *s = NULL;

	assert_true(n <= MAXNODES);
	for (uint32_t i = 0; i < n; i++) {
		ids[i] = i;
		snprintf(namebuf[i], sizeof(namebuf[i]), "n%u", i);
		names[i] = namebuf[i];
	}
	assert_int_equal(mm_state_create(n, n, ids, names, cpus, &s), 0);
	assert_int_equal(mm_state_set_sched(s, &c), 0);
	for (uint32_t i = 0; i < n; i++) {
		mm_op_t up = { .code = MM_OP_NODE_UP, .node = i };

		assert_int_equal(mm_apply(s, &up, NULL), 0);
	}
	check(s);
	return s;
}

/* 16 PEs: 8 nodes of 2 cpus, node i on columns 2i, 2i + 1. */
static mm_state_t *mk16(mm_policy_t policy, uint32_t mpl)
{
	static const uint32_t cpus[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };

	return mkmachine(8, cpus, policy, mpl, 1, MM_PLACE_BUDDY);
}

/* 16 PEs: 4 nodes of 4 cpus, node i on columns 4i .. 4i + 3. */
static mm_state_t *mk4x4(mm_policy_t policy, mm_placement_t placement)
{
	static const uint32_t cpus[4] = { 4, 4, 4, 4 };

	return mkmachine(4, cpus, policy, 1, 1, placement);
}

/* Apply op; the matrix stays consistent whether it is accepted or not.
 * Returns the rc (res, if given, gets the result). */
static int apply_res(mm_state_t *s, mm_op_t op, mm_result_t *res)
{
	mm_result_t scratch;
	int rc;

	if (!res)
		res = &scratch;
	rc = mm_apply(s, &op, res);
	assert_int_equal(rc, res->rc);
	if (rc)
		assert_true(res->err[0] != '\0');
	check(s);
	return rc;
}

static int apply(mm_state_t *s, mm_op_t op)
{
	return apply_res(s, op, NULL);
}

static const char *const app_argv[] = { "/bin/app" };

static uint32_t submit(mm_state_t *s, uint32_t ranks, uint64_t limit_ms,
		       const char *nodelist)
{
	mm_job_spec_t sp = { .name = "j", .uid = 1000, .gid = 100,
			     .ranks = ranks, .nodelist = nodelist, .argc = 1,
			     .argv = app_argv, .time_limit_ms = limit_ms };
	mm_result_t res;

	if (apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT, .spec = &sp }, &res))
		fail_msg("submit %u ranks: %s", ranks, res.err);
	return res.job;
}

/* A job with a shape (SUBMIT_SHAPE): its id, or 0 with why in err. */
static uint32_t submit_shape(mm_state_t *s, uint32_t ranks, uint32_t cpt,
			     uint32_t tpn, uint32_t nodes, char *err,
			     size_t errlen)
{
	mm_job_spec_t sp = { .name = "j", .uid = 1000, .gid = 100,
			     .ranks = ranks, .argc = 1, .argv = app_argv,
			     .cpus_per_task = cpt, .tasks_per_node = tpn,
			     .node_count = nodes };
	mm_result_t res;

	if (apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT_SHAPE, .spec = &sp },
		      &res)) {
		snprintf(err, errlen, "%s", res.err);
		return 0;
	}
	return res.job;
}

static void tick(mm_state_t *s, uint64_t slice, uint64_t now_ms)
{
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_TICK,
					     .slice = slice,
					     .now_ms = now_ms }), 0);
}

static void cancel(mm_state_t *s, uint32_t id)
{
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = id,
					     .uid = 0 }), 0);
}

/* Every rank of id exits 0 (it must hold PEs). */
static void exit_ok(mm_state_t *s, uint32_t id)
{
	int32_t st[64] = { 0 };
	mm_job_t j;

	assert_int_equal(mm_job_get(s, id, &j), 0);
	assert_true(j.ranks <= 64);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_JOB_EXITED,
					     .job = id, .nstatus = j.ranks,
					     .status = st }), 0);
}

static mm_job_t job(const mm_state_t *s, uint32_t id)
{
	mm_job_t j;

	assert_int_equal(mm_job_get(s, id, &j), 0);
	return j;
}

static int holds(const mm_job_t *j)
{
	return j->state == MM_JOB_STAGING || j->state == MM_JOB_RUNNING;
}

/* id holds PEs in block row [col, col + width). */
static void assert_block(const mm_state_t *s, uint32_t id, uint32_t row,
			 uint32_t col, uint32_t width)
{
	mm_job_t j = job(s, id);

	if (!holds(&j))
		fail_msg("job %u is %s: %s", id, mm_job_state_name(j.state),
			 j.reason);
	assert_int_equal(j.row, row);
	assert_int_equal(j.col, col);
	assert_int_equal(j.width, width);
	for (uint32_t c = col; c < col + width; c++)
		if (mm_matrix_col_node(s, c) != UINT32_MAX)
			assert_int_equal(mm_matrix_cell(s, row, c), id);
}

/* The shadow time in a head's reason, or UINT64_MAX if it has none. */
static uint64_t reserved_from(const char *reason)
{
	const char *p = strstr(reason, "reserved from ");

	if (strncmp(reason, "head of queue", 13) || !p)
		return UINT64_MAX;
	return strtoull(p + strlen("reserved from "), NULL, 10);
}

/* Every occupied cell belongs to a job holding PEs whose block covers
 * it: the matrix never holds a job outside its block (mm_matrix_check
 * says so too; this reads it through the public views only). */
static void assert_cells_in_blocks(const mm_state_t *s)
{
	for (uint32_t r = 0; r < mm_matrix_rows(s); r++)
		for (uint32_t c = 0; c < mm_matrix_cols(s); c++) {
			uint32_t id = mm_matrix_cell(s, r, c);
			mm_job_t j;

			if (!id)
				continue;
			j = job(s, id);
			assert_true(holds(&j));
			assert_int_equal(j.row, r);
			assert_true(c >= j.col && c < j.col + j.width);
			assert_int_equal(j.col % j.width, 0);
			assert_int_equal(j.width & (j.width - 1), 0);
		}
}

/* ------------------------------------------------------------------------ */
/* Buddy blocks                                                             */
/* ------------------------------------------------------------------------ */

static void test_buddy_packs_1_2_4_8_into_aligned_blocks_exactly(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_FCFS, 1);
	uint32_t a = submit(s, 1, 0, NULL), b = submit(s, 2, 0, NULL);
	uint32_t c = submit(s, 4, 0, NULL), d = submit(s, 8, 0, NULL);
	uint32_t e = submit(s, 1, 0, NULL);

	(void)state;
	assert_int_equal(mm_matrix_rows(s), 1);
	assert_int_equal(mm_matrix_cols(s), 16);
	assert_int_equal(mm_free_pes(s), 16);
	tick(s, 1, 10);
	/* each one in the tightest block: the buddy of a used one */
	assert_block(s, a, 0, 0, 1);
	assert_block(s, b, 0, 2, 2);
	assert_block(s, c, 0, 4, 4);
	assert_block(s, d, 0, 8, 8);
	assert_block(s, e, 0, 1, 1);
	/* no PE idle, every job placed, one rank per column */
	assert_int_equal(mm_free_pes(s), 0);
	for (uint32_t col = 0; col < 16; col++)
		assert_int_not_equal(mm_matrix_cell(s, 0, col), 0);
	for (uint32_t i = 0; i < 8; i++) {
		mm_node_t n;

		assert_int_equal(mm_node_by_id(s, i, &n), 0);
		assert_int_equal(n.used, 2);
		assert_int_equal(n.col, 2 * i);
	}
	assert_cells_in_blocks(s);
	mm_state_destroy(s);
}

static void test_three_ranks_take_a_width_4_block(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_FCFS, 1);
	uint32_t a = submit(s, 3, 0, NULL), b = submit(s, 1, 0, NULL);
	mm_node_t n;
	mm_job_t j;

	(void)state;
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 4);
	j = job(s, a);
	/* ranks on the first columns: n0, n0, n1; column 3 (n1's second
	 * cpu) is held by the job but carries no rank */
	assert_int_equal(j.rank_node[0], 0);
	assert_int_equal(j.rank_node[1], 0);
	assert_int_equal(j.rank_node[2], 1);
	assert_int_equal(mm_matrix_cell(s, 0, 3), a);
	assert_int_equal(mm_node_by_id(s, 1, &n), 0);
	assert_int_equal(n.used, 1);
	/* the hole is not handed out: b goes next to the block */
	assert_block(s, b, 0, 4, 1);
	assert_int_equal(mm_free_pes(s), 16 - 4 - 1);
	mm_state_destroy(s);
}

static void test_tightest_fit_keeps_a_free_width_8_block_whole(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_FCFS, 1);
	uint32_t a = submit(s, 8, 0, NULL), b = submit(s, 4, 0, NULL);
	uint32_t c = submit(s, 2, 0, NULL), d = submit(s, 1, 0, NULL);
	uint32_t e = submit(s, 1, 0, NULL), f, g;

	(void)state;
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 8);
	assert_block(s, b, 0, 8, 4);
	assert_block(s, c, 0, 12, 2);
	assert_block(s, d, 0, 14, 1);
	assert_block(s, e, 0, 15, 1);
	/* free [0, 8) and column 15, whose buddy (14) is busy */
	exit_ok(s, a);
	exit_ok(s, e);
	f = submit(s, 1, 0, NULL);
	g = submit(s, 8, 0, NULL);
	tick(s, 2, 20);
	/* lowest column would put f at 0 and leave g waiting */
	assert_block(s, f, 0, 15, 1);
	assert_block(s, g, 0, 0, 8);
	assert_int_equal(mm_free_pes(s), 0);
	mm_state_destroy(s);
}

static void test_freed_blocks_coalesce_for_a_machine_wide_job(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_FCFS, 1);
	uint32_t ids[6], big;

	(void)state;
	for (int i = 0; i < 6; i++)
		ids[i] = submit(s, (uint32_t[]){ 1, 4, 2, 1, 3, 2 }[i], 0,
				NULL);
	tick(s, 1, 10);
	/* end them in an order that leaves holes on the way */
	exit_ok(s, ids[3]);
	exit_ok(s, ids[1]);
	cancel(s, ids[5]);
	exit_ok(s, ids[0]);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_JOB_FAILED,
					     .job = ids[4],
					     .reason = "launch failed" }), 0);
	exit_ok(s, ids[2]);
	assert_int_equal(mm_free_pes(s), 16);
	big = submit(s, 16, 0, NULL);
	tick(s, 2, 20);
	assert_block(s, big, 0, 0, 16);
	mm_state_destroy(s);
}

/* Columns: n0 [0,4), n1 [4,6), n2 [8,12), n3 [16,24); 6, 7 and 12..15
 * are phantoms. */
static void test_nodes_of_4_2_4_8_cpus_are_aligned_blocks(void **state)
{
	static const uint32_t cpus[4] = { 4, 2, 4, 8 };
	mm_state_t *s = mkmachine(4, cpus, MM_POLICY_FCFS, 1, 1,
				  MM_PLACE_BUDDY);
	uint32_t small = submit(s, 2, 0, NULL);
	uint32_t a = submit(s, 8, 0, "3");
	uint32_t b = submit(s, 2, 0, "1");
	mm_job_t j;

	(void)state;
	assert_int_equal(mm_matrix_cols(s), 24);
	assert_int_equal(mm_matrix_col_node(s, 5), 1);
	assert_int_equal(mm_matrix_col_node(s, 6), UINT32_MAX);
	assert_int_equal(mm_matrix_col_node(s, 7), UINT32_MAX);
	assert_int_equal(mm_matrix_col_node(s, 12), UINT32_MAX);
	assert_int_equal(mm_matrix_col_node(s, 16), 3);
	assert_int_equal(mm_matrix_col_node(s, 99), UINT32_MAX);
	assert_int_equal(mm_free_pes(s), 18);
	tick(s, 1, 10);
	/* an idle machine is one free block (phantoms are free): the
	 * lowest column */
	assert_block(s, small, 0, 0, 2);
	assert_block(s, a, 0, 16, 8);
	j = job(s, a);
	for (uint32_t r = 0; r < 8; r++)
		assert_int_equal(j.rank_node[r], 3);
	/* n1 is a block of its own, though not a power of two wide */
	assert_block(s, b, 0, 4, 2);
	assert_int_equal(mm_free_pes(s), 6);
	/* phantom cells are never held */
	assert_int_equal(mm_matrix_cell(s, 0, 6), 0);
	mm_state_destroy(s);
}

/* Random submits and ends on a 16-PE machine under each policy: every
 * operation keeps the invariants; the idle fraction of the machine while
 * jobs wait is printed (information, not a bound). */
/* -c, --ntasks-per-node and -N on 4 nodes of 4 cpus: ranks on their
 * nodes as Slurm's block distribution puts them, each holding its cpus
 * (the node's used count), the block consistent (check() after every
 * op), and the cpus given back at the end. */
static void test_shapes_place_ranks_as_slurm_does(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY);
	char err[256] = "";
	uint32_t a, b, c, d;
	mm_job_t j;
	mm_node_t n;

	(void)state;
	/* 4 ranks of 2 cpus: two per node, on nodes 0 and 1 */
	a = submit_shape(s, 4, 2, 0, 0, err, sizeof(err));
	assert_int_not_equal(a, 0);
	tick(s, 1, 10);
	j = job(s, a);
	assert_true(holds(&j));
	assert_int_equal(j.rank_node[0], 0);
	assert_int_equal(j.rank_node[1], 0);
	assert_int_equal(j.rank_node[2], 1);
	assert_int_equal(j.rank_node[3], 1);
	assert_int_equal(mm_node_by_id(s, 0, &n), 0);
	assert_int_equal(n.used, 4);
	assert_int_equal(j.width, 8);
	exit_ok(s, a);
	assert_int_equal(mm_node_by_id(s, 0, &n), 0);
	assert_int_equal(n.used, 0);
	/* 5 ranks on exactly 3 nodes: 2, 2, 1 */
	b = submit_shape(s, 5, 1, 0, 3, err, sizeof(err));
	assert_int_not_equal(b, 0);
	tick(s, 2, 20);
	j = job(s, b);
	assert_true(holds(&j));
	assert_int_equal(sp_nodeset_count(j.nodes), 3);
	assert_int_equal(j.rank_node[0], j.rank_node[1]);
	assert_int_equal(j.rank_node[2], j.rank_node[3]);
	assert_int_not_equal(j.rank_node[1], j.rank_node[2]);
	assert_int_not_equal(j.rank_node[3], j.rank_node[4]);
	exit_ok(s, b);
	/* one rank per node */
	c = submit_shape(s, 3, 1, 1, 0, err, sizeof(err));
	assert_int_not_equal(c, 0);
	tick(s, 3, 30);
	j = job(s, c);
	assert_true(holds(&j));
	assert_int_equal(sp_nodeset_count(j.nodes), 3);
	exit_ok(s, c);
	/* a node's 4 cpus to one rank: four of them fill the machine */
	d = submit_shape(s, 4, 4, 0, 0, err, sizeof(err));
	assert_int_not_equal(d, 0);
	tick(s, 4, 40);
	j = job(s, d);
	assert_true(holds(&j));
	assert_int_equal(sp_nodeset_count(j.nodes), 4);
	assert_int_equal(mm_free_pes(s), 0);
	exit_ok(s, d);
	mm_state_destroy(s);
}

/* Drain: root only; a drained node keeps its running job and takes no
 * new one; a job that takes checkpoints is asked for one and marked to
 * be queued again; resume puts the node back; a snapshot keeps it. */
static void test_drained_nodes_take_no_new_job(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY), *c;
	mm_op_t drain = { .code = MM_OP_NODE_DRAIN, .node = 0,
			  .reason = "bad DIMM" };
	mm_result_t res;
	uint32_t a, b, k;
	mm_job_t j;
	mm_node_t n;
	uint8_t *img = NULL;
	size_t len = 0;
	char err[256];

	(void)state;
	a = submit(s, 4, 0, NULL); /* node 0's cpus */
	tick(s, 1, 10);
	j = job(s, a);
	assert_true(holds(&j));
	assert_int_equal(j.rank_node[0], 0);
	drain.uid = 1000;
	assert_int_equal(apply_res(s, drain, &res), -EPERM);
	assert_non_null(strstr(res.err, "only root may take node n0 out of "
			       "service"));
	drain.uid = 0;
	assert_int_equal(apply(s, drain), 0);
	assert_int_equal(mm_node_by_id(s, 0, &n), 0);
	assert_int_equal(n.drain, 1);
	assert_string_equal(n.drain_reason, "bad DIMM");
	j = job(s, a);
	assert_int_equal(j.state, MM_JOB_STAGING); /* it runs on */
	assert_int_equal(j.ckpt_want, 0); /* it takes no checkpoints */
	/* a job of 8 runs on nodes 2 and 3 */
	b = submit(s, 8, 0, NULL);
	tick(s, 2, 20);
	j = job(s, b);
	assert_true(holds(&j));
	for (k = 0; k < 8; k++)
		assert_int_not_equal(j.rank_node[k], 0);
	/* the snapshot keeps the drain and its reason */
	assert_int_equal(mm_state_encode(s, &img, &len), 0);
	assert_int_equal(mm_state_decode(img, len, &c, err, sizeof(err)), 0);
	assert_int_equal(mm_node_by_id(c, 0, &n), 0);
	assert_int_equal(n.drain, 1);
	assert_string_equal(n.drain_reason, "bad DIMM");
	mm_state_destroy(c);
	free(img);
	exit_ok(s, a);
	exit_ok(s, b);
	/* DRAINED: free, and still not used: a machine-wide job waits */
	b = submit(s, 16, 0, NULL);
	tick(s, 3, 30);
	j = job(s, b);
	assert_int_equal(j.state, MM_JOB_PENDING);
	cancel(s, b);
	drain.code = MM_OP_NODE_RESUME;
	assert_int_equal(apply(s, drain), 0);
	assert_int_equal(mm_node_by_id(s, 0, &n), 0);
	assert_int_equal(n.drain, 0);
	/* a job that takes checkpoints, running on a node drained: asked
	 * for one, to be queued again once it commits */
	{
		mm_job_spec_t sp = { .name = "ck", .uid = 1000, .gid = 100,
				     .ranks = 4, .argc = 1, .argv = app_argv,
				     .ckpt_every_s = 600 };
		mm_op_t st = { .code = MM_OP_JOB_STAGED };

		assert_int_equal(apply_res(s, (mm_op_t){
			.code = MM_OP_SUBMIT_CKPT, .spec = &sp }, &res), 0);
		b = res.job;
		tick(s, 4, 40);
		st.job = b;
		assert_int_equal(apply(s, st), 0);
		j = job(s, b);
		assert_int_equal(j.state, MM_JOB_RUNNING);
		drain.code = MM_OP_NODE_DRAIN;
		drain.node = j.rank_node[0];
		assert_int_equal(apply(s, drain), 0);
		j = job(s, b);
		assert_int_equal(j.ckpt_want, 1);
		assert_int_equal(j.ckpt_requeue, 1);
	}
	mm_state_destroy(s);
}

static uint32_t submit_dep(mm_state_t *s, uint32_t uid, uint32_t dep,
			   uint8_t type, char *err, size_t errlen)
{
	mm_job_spec_t sp = { .name = "d", .uid = uid, .gid = 100, .ranks = 4,
			     .argc = 1, .argv = app_argv, .dep_job = dep,
			     .dep_type = type };
	mm_result_t res;

	if (apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT_SHAPE, .spec = &sp },
		      &res)) {
		snprintf(err, errlen, "%s", res.err);
		return 0;
	}
	return res.job;
}

/* afterok waits for its job, starts once it COMPLETED, and is cancelled
 * saying why once it cannot be; a later job is not blocked by a held
 * one; a dependency on a job that is not, or not the owner's, is
 * refused. */
static void test_dependencies_wait_start_or_cancel(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY);
	char err[256] = "";
	uint32_t a, b, c, d, e;
	mm_job_t j;

	(void)state;
	a = submit(s, 4, 0, NULL); /* uid 1000 */
	b = submit_dep(s, 1000, a, MM_DEP_AFTEROK, err, sizeof(err));
	c = submit_dep(s, 1000, a, MM_DEP_AFTERNOTOK, err, sizeof(err));
	d = submit(s, 4, 0, NULL); /* behind the held ones */
	assert_true(b && c);
	tick(s, 1, 10);
	j = job(s, b);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_string_equal(j.reason, "dependency: waiting for job 1 to end "
			    "(afterok)");
	j = job(s, d);
	assert_true(holds(&j)); /* not blocked by the held ones */
	exit_ok(s, a);
	tick(s, 2, 20);
	j = job(s, b);
	assert_true(holds(&j));
	assert_int_equal(j.dep_type, MM_DEP_NONE);
	j = job(s, c);
	assert_int_equal(j.state, MM_JOB_CANCELLED);
	assert_string_equal(j.reason, "dependency never satisfied: job 1 "
			    "COMPLETED (afternotok:1)");
	/* refused: a job not yet submitted, another user's */
	assert_int_equal(submit_dep(s, 1000, 99, MM_DEP_AFTEROK, err,
				    sizeof(err)), 0);
	assert_non_null(strstr(err, "dependency on job 99, which does not "
			       "exist"));
	assert_int_equal(submit_dep(s, 2000, d, MM_DEP_AFTERANY, err,
				    sizeof(err)), 0);
	assert_non_null(strstr(err, "a job may depend only on its owner's "
			       "jobs"));
	/* root may */
	e = submit_dep(s, 0, d, MM_DEP_AFTERANY, err, sizeof(err));
	assert_int_not_equal(e, 0);
	mm_state_destroy(s);
}

/* An array: its tasks are jobs with consecutive ids, numbered as asked,
 * at most array_max holding PEs at once; the rest wait saying so. */
static void test_arrays_run_at_most_their_max(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY);
	mm_job_spec_t sp = { .name = "arr", .uid = 1000, .gid = 100,
			     .ranks = 1, .argc = 1, .argv = app_argv,
			     .array_first = 10, .array_step = 5,
			     .array_count = 6, .array_max = 2 };
	mm_result_t res;
	uint32_t running = 0, first;
	mm_job_t j;

	(void)state;
	assert_int_equal(apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT_SHAPE,
						 .spec = &sp }, &res), 0);
	first = res.job;
	tick(s, 1, 10);
	for (uint32_t k = 0; k < 6; k++) {
		j = job(s, first + k);
		assert_int_equal(j.array_id, first);
		assert_int_equal(j.array_task, 10 + 5 * k);
		running += holds(&j);
		if (!holds(&j))
			assert_non_null(strstr(j.reason, "2 of its tasks "
					       "running, its most at once"));
	}
	assert_int_equal(running, 2);
	exit_ok(s, first);
	tick(s, 2, 20);
	j = job(s, first + 2);
	assert_true(holds(&j));
	j = job(s, first + 3);
	assert_false(holds(&j));
	/* too many, or none */
	sp.array_count = MM_ARRAY_MAX + 1;
	assert_int_equal(apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT_SHAPE,
						 .spec = &sp }, &res), -EINVAL);
	assert_non_null(strstr(res.err, "at most 10000"));
	mm_state_destroy(s);
}

static void test_shapes_the_machine_cannot_hold_are_refused(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY);
	char err[256];

	(void)state;
	assert_int_equal(submit_shape(s, 1, 5, 0, 0, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "5 cpus per task, but the largest node "
			       "has 4"));
	assert_int_equal(submit_shape(s, 5, 1, 0, 5, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "5 nodes requested but the machine has "
			       "only 4"));
	assert_int_equal(submit_shape(s, 2, 1, 0, 3, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "3 nodes for 2 ranks"));
	assert_int_equal(submit_shape(s, 9, 1, 2, 0, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "9 ranks of 1 cpus each at most "
			       "tasks_per_node on a node need more than the "
			       "machine holds (8)"));
	assert_int_equal(submit_shape(s, 9, 2, 0, 0, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "holds (8)"));
	assert_int_equal(submit_shape(s, 9, 1, 0, 2, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "9 ranks on 2 nodes need 2 nodes "
			       "holding 4 ranks"));
	mm_state_destroy(s);
}

static void test_random_load_keeps_blocks_consistent(void **state)
{
	static const mm_policy_t pols[] = { MM_POLICY_FCFS,
					    MM_POLICY_BACKFILL,
					    MM_POLICY_GANG };

	(void)state;
	fuzz_seed_begin(0xb0dd1e5);
	for (size_t p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
		uint32_t mpl = pols[p] == MM_POLICY_GANG ? 2 : 1;
		mm_state_t *s = mk16(pols[p], mpl);
		uint64_t slice = 0, waits = 0;
		double idle = 0;
		uint32_t last = 0, started = 0;

		for (int step = 0; step < 4000; step++) {
			uint64_t k = rnd() % 10;
			mm_job_t j;

			if (k < 1) {
				last = submit(s, 1 + (uint32_t)(rnd() % 16),
					      10 * (1 + rnd() % 20), NULL);
			} else if (k < 3 && last) {
				/* end a random job, if it holds PEs */
				uint32_t id = 1 + (uint32_t)(rnd() % last);

				j = job(s, id);
				if (holds(&j) && rnd() % 2)
					exit_ok(s, id);
				else if (holds(&j))
					cancel(s, id);
			} else {
				uint32_t pending = 0;

				slice++;
				tick(s, slice, slice * 10);
				for (uint32_t id = 1;
				     mm_job_next(s, id, &j) == 0;
				     id = j.id + 1)
					pending += j.state == MM_JOB_PENDING;
				if (pending) {
					waits++;
					idle += (double)mm_free_pes(s) /
						(16.0 * mm_matrix_rows(s));
				}
			}
			assert_cells_in_blocks(s);
		}
		for (uint32_t id = 1; id <= last; id++)
			started += job(s, id).start_slice > 0;
		printf("%s: %u jobs, %u started; %.1f%% of PEs idle on "
		       "average while jobs waited (%" PRIu64 " ticks)\n",
		       mm_policy_name(pols[p]), last, started,
		       waits ? 100.0 * idle / (double)waits : 0.0, waits);
		assert_true(started > last / 2);
		mm_state_destroy(s);
	}
}

/* ------------------------------------------------------------------------ */
/* EASY backfill and strict fcfs                                            */
/* ------------------------------------------------------------------------ */

/* A [0,8) until 1300, B [8,12) until 1100; [12,16) free.  Head H wants
 * all 16: reserved from 1300.  L (4 ranks, until 2010) would delay it;
 * S (4 ranks, until 1210) ends first and is backfilled. */
static void test_backfill_starts_short_job_refuses_one_that_delays(
	void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_BACKFILL, MM_PLACE_BUDDY);
	uint32_t a = submit(s, 8, 300, NULL), b = submit(s, 4, 100, NULL);
	uint32_t h, l, sh;
	char want[128];

	(void)state;
	tick(s, 1, 1000);
	assert_block(s, a, 0, 0, 8);
	assert_block(s, b, 0, 8, 4);
	h = submit(s, 16, 100, NULL);
	l = submit(s, 4, 1000, NULL);
	sh = submit(s, 4, 200, NULL);
	tick(s, 2, 1010);
	assert_int_equal(job(s, h).state, MM_JOB_PENDING);
	assert_string_equal(job(s, h).reason, "head of queue: block of width "
			    "16 at column 0 reserved from 1300 ms (when "
			    "running jobs reach their limits)");
	assert_int_equal(job(s, l).state, MM_JOB_PENDING);
	snprintf(want, sizeof(want), "queued behind job %u (no free block "
		 "that would not delay its reservation)", h);
	assert_string_equal(job(s, l).reason, want);
	assert_block(s, sh, 0, 12, 4);
	/* H starts at the first tick past its shadow time; S had ended */
	tick(s, 3, 1100);
	tick(s, 4, 1200);
	tick(s, 5, 1300);
	assert_int_equal(job(s, h).state, MM_JOB_PENDING);
	tick(s, 6, 1301);
	assert_block(s, h, 0, 0, 16);
	assert_int_equal(job(s, h).start_ms, 1301);
	assert_int_equal(job(s, sh).state, MM_JOB_FAILED); /* its limit */
	assert_int_equal(job(s, l).state, MM_JOB_PENDING);
	mm_state_destroy(s);
}

/* A [0,8) until 1100, B [8,12) until 1300.  Head H (8 ranks) is reserved
 * [0,8) from 1100; L (4 ranks, no end before 11010) misses that block
 * and starts on [12,16). */
static void test_backfill_starts_long_job_outside_the_reservation(
	void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_BACKFILL, MM_PLACE_BUDDY);
	uint32_t a = submit(s, 8, 100, NULL), b = submit(s, 4, 300, NULL);
	uint32_t h, l;

	(void)state;
	tick(s, 1, 1000);
	assert_block(s, a, 0, 0, 8);
	assert_block(s, b, 0, 8, 4);
	h = submit(s, 8, 100, NULL);
	l = submit(s, 4, 10000, NULL);
	tick(s, 2, 1010);
	assert_string_equal(job(s, h).reason, "head of queue: block of width "
			    "8 at column 0 reserved from 1100 ms (when "
			    "running jobs reach their limits)");
	assert_block(s, l, 0, 12, 4);
	tick(s, 3, 1101);
	assert_block(s, h, 0, 0, 8);
	assert_block(s, l, 0, 12, 4);
	mm_state_destroy(s);
}

/* The tightest free block for L is inside the reserved one, but another
 * misses it: EASY starts L there.  Layout after the placeholders Z1, Z2
 * are cancelled: [0,2) free, S1 [2,4) and S2 [4,8) until 1100, [8,12)
 * free, Q [12,16) long.  H (8 ranks) is reserved [0,8) from 1100. */
static void test_backfill_looks_past_the_reserved_block(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_BACKFILL, MM_PLACE_BUDDY);
	uint32_t z1 = submit(s, 2, 0, NULL), s1 = submit(s, 2, 100, NULL);
	uint32_t s2 = submit(s, 4, 100, NULL), z2 = submit(s, 4, 0, NULL);
	uint32_t q = submit(s, 4, 100000, NULL), h, l;

	(void)state;
	tick(s, 1, 1000);
	assert_block(s, z1, 0, 0, 2);
	assert_block(s, s1, 0, 2, 2);
	assert_block(s, s2, 0, 4, 4);
	assert_block(s, z2, 0, 8, 4);
	assert_block(s, q, 0, 12, 4);
	cancel(s, z1);
	cancel(s, z2);
	h = submit(s, 8, 100, NULL);
	l = submit(s, 2, 100000, NULL);
	tick(s, 2, 1010);
	assert_string_equal(job(s, h).reason, "head of queue: block of width "
			    "8 at column 0 reserved from 1100 ms (when "
			    "running jobs reach their limits)");
	/* not [0, 2), the tighter fit: it would hold [0, 8) past 1100 */
	assert_block(s, l, 0, 8, 2);
	tick(s, 3, 1101);
	assert_block(s, h, 0, 0, 8);
	mm_state_destroy(s);
}

/* The same queue as above under fcfs: nothing passes the head. */
static void test_fcfs_does_not_start_a_job_behind_the_head(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY);
	uint32_t h, l;
	char want[64];

	(void)state;
	submit(s, 8, 100, NULL);
	submit(s, 4, 300, NULL);
	tick(s, 1, 1000);
	h = submit(s, 8, 100, NULL);
	l = submit(s, 4, 10000, NULL);
	tick(s, 2, 1010);
	assert_string_equal(job(s, h).reason, "head of queue: waiting for a "
			    "free block of width 8 (8 ranks)");
	assert_int_equal(job(s, l).state, MM_JOB_PENDING);
	snprintf(want, sizeof(want), "queued behind job %u", h);
	assert_string_equal(job(s, l).reason, want);
	assert_int_equal(mm_free_pes(s), 4);
	mm_state_destroy(s);
}

/* Random workloads under backfill, every job with a time limit, ticks
 * every TICK_MS: each job that becomes head of the queue with a
 * reservation starts no later than the reservation plus one tick (time
 * limits end jobs at the first tick past them).  Some jobs exit early,
 * which only brings reservations forward. */
#define TICK_MS 10
static void test_easy_never_delays_the_head_reservation(void **state)
{
	uint32_t backfilled = 0, heads = 0;

	(void)state;
	fuzz_seed_begin(0xea5e);
	for (int run = 0; run < 30; run++) {
		mm_state_t *s = mk16(MM_POLICY_BACKFILL, 1);
		uint64_t resv[4096];
		uint32_t last = 0;

		for (uint64_t slice = 1; slice <= 400; slice++) {
			uint64_t now = 1000 + slice * TICK_MS;
			mm_job_t j;

			for (uint64_t k = rnd() % 3; k > 0 && last < 4000;
			     k--) {
				/* up to 2, 4, 8 or 16 ranks: mostly small */
				uint32_t most = 2u << (rnd() % 4);

				last = submit(s, 1 + (uint32_t)(rnd() % most),
					      TICK_MS * (1 + rnd() % 30), NULL);
				resv[last] = 0;
			}
			if (last && rnd() % 4 == 0) {
				uint32_t id = 1 + (uint32_t)(rnd() % last);

				j = job(s, id);
				if (holds(&j))
					exit_ok(s, id);
			}
			tick(s, slice, now);
			for (uint32_t id = 1; id <= last; id++) {
				uint64_t r;

				j = job(s, id);
				if (j.state == MM_JOB_PENDING) {
					r = reserved_from(j.reason);
					if (!resv[id] && r != UINT64_MAX) {
						resv[id] = r;
						heads++;
						assert_true(r >= now);
					}
					continue;
				}
				if (resv[id] && j.start_ms > resv[id] + TICK_MS)
					fail_msg("run %d: job %u reserved from "
						 "%" PRIu64 " started at "
						 "%" PRIu64, run, id, resv[id],
						 j.start_ms);
			}
		}
		/* backfilled: started while an older job still waited */
		for (uint32_t id = 2; id <= last; id++) {
			mm_job_t j = job(s, id);

			if (j.start_slice == 0)
				continue;
			for (uint32_t o = 1; o < id; o++) {
				mm_job_t p = job(s, o);

				if (p.start_slice > j.start_slice ||
				    (p.start_slice == 0 &&
				     p.state == MM_JOB_PENDING)) {
					backfilled++;
					break;
				}
			}
		}
		mm_state_destroy(s);
	}
	printf("%u heads with reservations, %u jobs backfilled\n", heads,
	       backfilled);
	/* the property was exercised */
	assert_true(heads > 100);
	assert_true(backfilled > 100);
}

/* ------------------------------------------------------------------------ */
/* Gang scheduling                                                          */
/* ------------------------------------------------------------------------ */

static void test_gang_rows_of_machine_wide_jobs_take_turns(
	void **state)
{
	static const uint32_t cpus[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };
	mm_state_t *s = mkmachine(8, cpus, MM_POLICY_GANG, 2, 3,
				  MM_PLACE_BUDDY);
	uint32_t a = submit(s, 16, 0, NULL), b = submit(s, 16, 0, NULL);
	uint32_t c = submit(s, 16, 0, NULL);

	(void)state;
	assert_int_equal(mm_active_row(s, 0), UINT32_MAX); /* empty */
	assert_false(mm_matrix_shared(s));
	assert_int_equal(mm_free_pes(s), 32);
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 16);
	assert_block(s, b, 1, 0, 16);
	assert_int_equal(job(s, c).state, MM_JOB_PENDING);
	assert_string_equal(job(s, c).reason, "head of queue: waiting for a "
			    "free block of width 16 (16 ranks) in any row");
	assert_true(mm_matrix_shared(s));
	assert_int_equal(mm_free_pes(s), 0);
	/* quantum 3: rows 0, 0, 0, 1, 1, 1, 0, ... */
	for (uint64_t slice = 0; slice < 60; slice++)
		assert_int_equal(mm_active_row(s, slice), (slice / 3) % 2);
	assert_int_equal(mm_active_row(s, UINT64_MAX - 2),
			 ((UINT64_MAX - 2) / 3) % 2);
	/* one busy row: always that one */
	exit_ok(s, a);
	assert_false(mm_matrix_shared(s));
	for (uint64_t slice = 0; slice < 20; slice++)
		assert_int_equal(mm_active_row(s, slice), 1);
	/* the freed row takes the waiting job */
	tick(s, 2, 20);
	assert_block(s, c, 0, 0, 16);
	cancel(s, b);
	cancel(s, c);
	assert_int_equal(mm_active_row(s, 7), UINT32_MAX);
	mm_state_destroy(s);
}

static void test_single_row_policies_never_share(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_FCFS, 1);
	uint32_t a = submit(s, 8, 0, NULL);

	(void)state;
	submit(s, 8, 0, NULL);
	submit(s, 8, 0, NULL);
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 8);
	assert_false(mm_matrix_shared(s));
	for (uint64_t slice = 0; slice < 10; slice++)
		assert_int_equal(mm_active_row(s, slice), 0);
	mm_state_destroy(s);
}

/* The first row with a block, in order: narrow jobs fill row 0 first,
 * and a wide job is never passed by narrower ones (strict order). */
static void test_gang_fills_rows_in_order_and_keeps_strict_order(
	void **state)
{
	mm_state_t *s = mk16(MM_POLICY_GANG, 2);
	uint32_t a = submit(s, 8, 0, NULL), b = submit(s, 8, 0, NULL);
	uint32_t c = submit(s, 12, 0, NULL), d = submit(s, 16, 0, NULL);
	uint32_t e = submit(s, 1, 0, NULL);
	char want[64];

	(void)state;
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 8);
	assert_block(s, b, 0, 8, 8);
	assert_block(s, c, 1, 0, 16);
	assert_int_equal(job(s, d).state, MM_JOB_PENDING);
	assert_int_equal(job(s, e).state, MM_JOB_PENDING);
	snprintf(want, sizeof(want), "queued behind job %u", d);
	assert_string_equal(job(s, e).reason, want);
	mm_state_destroy(s);
}

/* A node that fails takes down its jobs in every row, not only the
 * active one; the others keep their blocks, and its columns are skipped
 * until it is back. */
static void test_node_down_fails_its_jobs_in_every_row(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_GANG, MM_PLACE_BUDDY);
	const mm_sched_conf_t two = { MM_POLICY_GANG, 2, 1, MM_PLACE_BUDDY };
	uint32_t a, b, c, d;

	(void)state;
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_SCHED,
					     .sched = &two }), 0);
	a = submit(s, 16, 0, NULL);
	b = submit(s, 4, 0, "3");
	c = submit(s, 4, 0, "0");
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 16);
	assert_block(s, b, 1, 12, 4);
	assert_block(s, c, 1, 0, 4);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_NODE_DOWN,
					     .node = 3, .reason = "gone" }), 0);
	assert_int_equal(job(s, a).state, MM_JOB_FAILED);
	assert_int_equal(job(s, b).state, MM_JOB_FAILED);
	assert_string_equal(job(s, b).reason, "node n3 failed: gone");
	assert_block(s, c, 1, 0, 4);
	assert_int_equal(mm_matrix_cell(s, 0, 0), 0);
	assert_int_equal(mm_matrix_cell(s, 1, 12), 0);
	/* 12 ranks fit n0-n2 only through a width-16 block */
	d = submit(s, 12, 0, NULL);
	tick(s, 2, 20);
	assert_block(s, d, 0, 0, 16);
	for (uint32_t r = 0; r < 12; r++)
		assert_int_not_equal(job(s, d).rank_node[r], 3);
	assert_int_equal(mm_free_pes(s), 12 * 2 - 12 - 4);
	mm_state_destroy(s);
}

/* ------------------------------------------------------------------------ */
/* MOLAR                                                                    */
/* ------------------------------------------------------------------------ */

/* Service histories on a 4 x 4 machine, all UP from t = 0, now 10000:
 * n0 failed at 1000 (back at 1100): MTTF (1000 + 8900) / 2 = 4950;
 * n1 failed at 3000 and 6000: (3000 + 2900 + 3900) / 3 ~ 3267;
 * n2 failed at 8000: (8000 + 1900) / 2 = 4950; n3 never: 10000. */
static void fail_history(mm_state_t *s)
{
	static const struct {
		uint64_t at;
		uint32_t node;
		int down;
	} ev[] = {
		{ 1000, 0, 1 }, { 1100, 0, 0 }, { 3000, 1, 1 }, { 3100, 1, 0 },
		{ 6000, 1, 1 }, { 6100, 1, 0 }, { 8000, 2, 1 }, { 8100, 2, 0 },
	};
	uint64_t slice = 0;

	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		tick(s, ++slice, ev[i].at);
		assert_int_equal(apply(s, (mm_op_t){
			.code = ev[i].down ? MM_OP_NODE_DOWN : MM_OP_NODE_UP,
			.node = ev[i].node, .reason = "test" }), 0);
	}
	tick(s, ++slice, 10000);
}

static void test_molar_places_on_the_nodes_with_the_longest_mttf(
	void **state)
{
	mm_state_t *m = mk4x4(MM_POLICY_FCFS, MM_PLACE_MOLAR);
	mm_state_t *b = mk4x4(MM_POLICY_FCFS, MM_PLACE_BUDDY);
	mm_node_t n;
	uint32_t jm, jb;

	(void)state;
	fail_history(m);
	fail_history(b);
	assert_int_equal(mm_node_by_id(m, 1, &n), 0);
	assert_int_equal(n.failures, 2);
	assert_int_equal(n.up_ms, 3000 + 2900);
	assert_int_equal(n.up_since_ms, 6100);
	/* 4 ranks: n3's block under molar, the lowest column under buddy */
	jm = submit(m, 4, 0, NULL);
	jb = submit(b, 4, 0, NULL);
	tick(m, 100, 10000);
	tick(b, 100, 10000);
	assert_block(m, jm, 0, 12, 4);
	assert_block(b, jb, 0, 0, 4);
	/* 8 ranks: [0,8) is as good as its n1 (3267), [8,16) as n2 (4950) */
	jm = submit(m, 8, 0, NULL);
	jb = submit(b, 8, 0, NULL);
	cancel(m, 1);
	cancel(b, 1);
	tick(m, 101, 10000);
	tick(b, 101, 10000);
	assert_block(m, jm, 0, 8, 8);
	assert_block(b, jb, 0, 0, 8);
	/* then 2 ranks: n0 (4950) over n1 (3267), the free half of [0, 8) */
	jm = submit(m, 2, 0, NULL);
	tick(m, 102, 10000);
	assert_block(m, jm, 0, 0, 2);
	mm_state_destroy(m);
	mm_state_destroy(b);
}

/* ------------------------------------------------------------------------ */
/* Time limits, MM_OP_SCHED, bad input                                      */
/* ------------------------------------------------------------------------ */

static void test_time_limit_ends_job_and_frees_its_block(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_BACKFILL, 1);
	uint32_t a = submit(s, 5, 250, NULL);
	mm_job_t j;

	(void)state;
	tick(s, 1, 1000);
	assert_block(s, a, 0, 0, 8);
	assert_int_equal(mm_free_pes(s), 8);
	tick(s, 2, 1250);
	assert_int_equal(job(s, a).state, MM_JOB_STAGING);
	tick(s, 3, 1251);
	j = job(s, a);
	assert_int_equal(j.state, MM_JOB_FAILED);
	assert_string_equal(j.reason, "time limit of 250 ms exceeded");
	assert_int_equal(j.end_ms, 1251);
	assert_int_equal(j.width, 0);
	assert_int_equal(mm_free_pes(s), 16);
	for (uint32_t c = 0; c < 16; c++)
		assert_int_equal(mm_matrix_cell(s, 0, c), 0);
	mm_state_destroy(s);
}

/* Refused settings: the code, a message naming the problem, no change. */
static void sched_refused(mm_state_t *s, mm_sched_conf_t c, int rc,
			  const char *needle)
{
	uint64_t d = mm_digest(s), md = mm_matrix_digest(s);
	mm_sched_conf_t before, after;
	mm_result_t res;

	mm_sched_get(s, &before);
	assert_int_equal(apply_res(s, (mm_op_t){ .code = MM_OP_SCHED,
						 .sched = &c }, &res), rc);
	if (!strstr(res.err, needle))
		fail_msg("\"%s\" does not say \"%s\"", res.err, needle);
	assert_non_null(strstr(res.err, "sched: "));
	assert_int_equal(mm_digest(s), d);
	assert_int_equal(mm_matrix_digest(s), md);
	mm_sched_get(s, &after);
	assert_memory_equal(&before, &after, sizeof(before));
}

static void test_sched_refuses_invalid_settings_changing_nothing(
	void **state)
{
	mm_state_t *s = mk16(MM_POLICY_BACKFILL, 1);
	const mm_sched_conf_t ok = { MM_POLICY_GANG, 4, 5, MM_PLACE_MOLAR };
	char err[200];

	(void)state;
	submit(s, 4, 0, NULL);
	tick(s, 1, 10);
	sched_refused(s, (mm_sched_conf_t){ 0, 1, 1, MM_PLACE_BUDDY },
		      -EINVAL, "policy 0 does not exist");
	sched_refused(s, (mm_sched_conf_t){ 9, 1, 1, MM_PLACE_BUDDY },
		      -EINVAL, "policy 9 does not exist");
	sched_refused(s, (mm_sched_conf_t){ MM_POLICY_GANG, 0, 1,
					    MM_PLACE_BUDDY },
		      -EINVAL, "mpl 0 is out of range; give 1..16");
	sched_refused(s, (mm_sched_conf_t){ MM_POLICY_GANG, 17, 1,
					    MM_PLACE_BUDDY },
		      -EINVAL, "mpl 17 is out of range");
	sched_refused(s, (mm_sched_conf_t){ MM_POLICY_FCFS, 2, 1,
					    MM_PLACE_BUDDY },
		      -EINVAL, "mpl 2 needs the gang policy");
	sched_refused(s, (mm_sched_conf_t){ MM_POLICY_GANG, 2, 0,
					    MM_PLACE_BUDDY },
		      -EINVAL, "quantum of 0 slices is out of range");
	sched_refused(s, (mm_sched_conf_t){ MM_POLICY_GANG, 2,
					    MM_QUANTUM_MAX + 1,
					    MM_PLACE_BUDDY },
		      -EINVAL, "quantum of 1000001 slices");
	sched_refused(s, (mm_sched_conf_t){ MM_POLICY_GANG, 2, 1, 7 },
		      -EINVAL, "placement 7 does not exist");
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_SCHED }), -EINVAL);
	/* the same check as a function, and the good one passes */
	assert_int_equal(mm_sched_check(&ok, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(mm_sched_check(NULL, NULL, 0), -EINVAL);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_SCHED,
					     .sched = &ok }), 0);
	assert_int_equal(mm_matrix_rows(s), 4);
	mm_state_destroy(s);
}

static void test_sched_lowering_mpl_under_a_busy_row_is_ebusy(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_GANG, 1);
	const mm_sched_conf_t two = { MM_POLICY_GANG, 2, 1, MM_PLACE_BUDDY };
	const mm_sched_conf_t one = { MM_POLICY_GANG, 1, 1, MM_PLACE_BUDDY };
	const mm_sched_conf_t fcfs = { MM_POLICY_FCFS, 1, 1, MM_PLACE_BUDDY };
	uint32_t a = submit(s, 16, 0, NULL), b = submit(s, 16, 0, NULL);

	(void)state;
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 16);
	assert_int_equal(job(s, b).state, MM_JOB_PENDING);
	/* raising the MPL: the next tick uses the new row */
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_SCHED,
					     .sched = &two }), 0);
	assert_int_equal(mm_matrix_rows(s), 2);
	assert_int_equal(job(s, b).state, MM_JOB_PENDING);
	tick(s, 2, 20);
	assert_block(s, b, 1, 0, 16);
	/* row 1 holds b: neither fewer rows nor a one-row policy */
	sched_refused(s, one, -EBUSY, "row 1 still holds jobs");
	sched_refused(s, fcfs, -EBUSY, "row 1 still holds jobs");
	/* row 0 may empty: b stays in row 1, still -EBUSY */
	cancel(s, a);
	sched_refused(s, one, -EBUSY, "row 1 still holds jobs");
	cancel(s, b);
	assert_int_equal(apply(s, (mm_op_t){ .code = MM_OP_SCHED,
					     .sched = &fcfs }), 0);
	assert_int_equal(mm_matrix_rows(s), 1);
	mm_state_destroy(s);
}

static void test_submit_refuses_a_job_larger_than_the_machine(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_GANG, 4);
	mm_job_spec_t sp = { .name = "big", .ranks = 17, .argc = 1,
			     .argv = app_argv };
	uint64_t d = mm_digest(s);
	mm_result_t res;

	(void)state;
	/* four rows are no more cpus: a job holds one block of one row */
	assert_int_equal(apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT,
						 .spec = &sp }, &res), -EINVAL);
	assert_non_null(strstr(res.err, "17 ranks requested but the machine "
			       "has only 16 cpus"));
	sp.ranks = 0;
	assert_int_equal(apply_res(s, (mm_op_t){ .code = MM_OP_SUBMIT,
						 .spec = &sp }, &res), -EINVAL);
	assert_non_null(strstr(res.err, "ranks is 0"));
	assert_int_equal(mm_digest(s), d);
	mm_state_destroy(s);
}

/* Cancelling a job whose row is not the active one (the node may be in
 * the middle of switching to it) frees its block like any other. */
static void test_cancel_in_an_inactive_row_frees_its_block(void **state)
{
	mm_state_t *s = mk16(MM_POLICY_GANG, 3);
	uint32_t a = submit(s, 16, 0, NULL), b = submit(s, 8, 0, NULL);
	uint32_t c = submit(s, 8, 0, NULL), d;

	(void)state;
	tick(s, 1, 10);
	assert_block(s, a, 0, 0, 16);
	assert_block(s, b, 1, 0, 8);
	assert_block(s, c, 1, 8, 8);
	assert_int_equal(mm_active_row(s, 0), 0);
	cancel(s, b);
	assert_int_equal(job(s, b).width, 0);
	for (uint32_t col = 0; col < 8; col++)
		assert_int_equal(mm_matrix_cell(s, 1, col), 0);
	assert_int_equal(mm_active_row(s, 1), 1); /* c keeps row 1 busy */
	cancel(s, c);
	assert_int_equal(mm_active_row(s, 1), 0);
	assert_false(mm_matrix_shared(s));
	assert_int_equal(mm_free_pes(s), 32);
	/* the row is reused */
	d = submit(s, 16, 0, NULL);
	tick(s, 2, 20);
	assert_block(s, d, 1, 0, 16);
	mm_state_destroy(s);
}

static void test_matrix_digest_follows_the_matrix(void **state)
{
	mm_state_t *a = mk16(MM_POLICY_GANG, 2), *b = mk16(MM_POLICY_GANG, 2);
	const mm_sched_conf_t q2 = { MM_POLICY_GANG, 2, 2, MM_PLACE_BUDDY };

	(void)state;
	assert_int_equal(mm_matrix_digest(a), mm_matrix_digest(b));
	for (int k = 0; k < 2; k++) {
		mm_state_t *s = k ? b : a;

		submit(s, 16, 0, NULL);
		submit(s, 3, 0, NULL);
		tick(s, 1, 10);
		exit_ok(s, 1);
	}
	assert_int_equal(mm_matrix_digest(a), mm_matrix_digest(b));
	/* a cell changes */
	tick(a, 2, 20);
	tick(b, 2, 20);
	submit(b, 1, 0, NULL);
	tick(b, 3, 30);
	assert_int_not_equal(mm_matrix_digest(a), mm_matrix_digest(b));
	tick(a, 3, 30);
	submit(a, 1, 0, NULL);
	tick(a, 4, 40);
	tick(b, 4, 40);
	assert_int_equal(mm_matrix_digest(a), mm_matrix_digest(b));
	/* the settings change */
	assert_int_equal(apply(a, (mm_op_t){ .code = MM_OP_SCHED,
					     .sched = &q2 }), 0);
	assert_int_not_equal(mm_matrix_digest(a), mm_matrix_digest(b));
	mm_state_destroy(a);
	mm_state_destroy(b);
}

/* ------------------------------------------------------------------------ */
/* Expected starts                                                          */
/* ------------------------------------------------------------------------ */

/* Drive s to the time every pending job has started, every job ending
 * exactly at its limit (JOB_EXITED at start + limit, then the TICK). */
static void drive_to_limits(mm_state_t *s, uint64_t *slice)
{
	for (int round = 0; round < 10000; round++) {
		uint64_t next = UINT64_MAX;
		uint32_t pending = 0;
		mm_job_t j;

		for (uint32_t id = 1; mm_job_next(s, id, &j) == 0;
		     id = j.id + 1) {
			pending += j.state == MM_JOB_PENDING;
			if (holds(&j) && j.time_limit_ms &&
			    j.start_ms + j.time_limit_ms < next)
				next = j.start_ms + j.time_limit_ms;
		}
		if (!pending)
			return;
		assert_true(next != UINT64_MAX);
		for (uint32_t id = 1; mm_job_next(s, id, &j) == 0;
		     id = j.id + 1)
			if (holds(&j) && j.start_ms + j.time_limit_ms == next)
				exit_ok(s, j.id);
		tick(s, ++*slice, next);
	}
	fail_msg("jobs still pending after 10000 rounds");
}

/* Compare mm_expected_starts() of s's pending jobs with the starts that
 * driving s gives; returns how many there were. */
static uint32_t expected_starts_come_true(mm_state_t *s, uint64_t slice)
{
	uint32_t ids[512];
	uint64_t at[512];
	int n = mm_expected_starts(s, 512, ids, at);

	assert_true(n >= 0);
	drive_to_limits(s, &slice);
	for (int k = 0; k < n; k++) {
		mm_job_t j = job(s, ids[k]);

		if (j.start_ms != at[k])
			fail_msg("job %u (%u ranks): expected at %" PRIu64
				 ", started at %" PRIu64, ids[k], j.ranks,
				 at[k], j.start_ms);
	}
	return (uint32_t)n;
}

static void test_expected_starts_match_the_schedule(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_BACKFILL, MM_PLACE_BUDDY);
	uint32_t ids[8], h, l, sh, after;
	uint64_t at[8];

	(void)state;
	submit(s, 8, 300, NULL);   /* [0,8) until 1300 */
	submit(s, 4, 100, NULL);   /* [8,12) until 1100 */
	tick(s, 1, 1000);
	h = submit(s, 16, 100, NULL);
	l = submit(s, 4, 1000, NULL);
	sh = submit(s, 4, 200, NULL);
	after = submit(s, 2, 50, NULL);
	tick(s, 2, 1010);
	assert_int_equal(mm_expected_starts(s, 8, ids, at), 3);
	/* in queue order; S was backfilled and is no longer pending */
	assert_int_equal(ids[0], h);
	assert_int_equal(at[0], 1300);
	assert_int_equal(ids[1], l);
	assert_int_equal(at[1], 1400); /* after H's 100 ms */
	/* 2 ranks for 50 ms fit [8, 10) when B ends, before 1300 */
	assert_int_equal(ids[2], after);
	assert_int_equal(at[2], 1100);
	assert_int_equal(job(s, sh).state, MM_JOB_STAGING);
	/* a limit of max, and none asked */
	assert_int_equal(mm_expected_starts(s, 1, ids, at), 1);
	assert_int_equal(mm_expected_starts(s, 0, NULL, NULL), 0);
	assert_int_equal(expected_starts_come_true(s, 2), 3);
	mm_state_destroy(s);
}

static void test_expected_starts_unknown_behind_unlimited_jobs(void **state)
{
	mm_state_t *s = mk4x4(MM_POLICY_BACKFILL, MM_PLACE_BUDDY);
	uint32_t ids[2];
	uint64_t at[2];

	(void)state;
	submit(s, 16, 0, NULL); /* no limit */
	tick(s, 1, 1000);
	submit(s, 1, 100, NULL);
	tick(s, 2, 1010);
	assert_int_equal(mm_expected_starts(s, 2, ids, at), 1);
	assert_int_equal(at[0], 0);
	assert_non_null(strstr(job(s, ids[0]).reason, "waits for jobs "
			       "without a time limit"));
	mm_state_destroy(s);
}

/* Random queues under backfill (and fcfs): predictions come true. */
static void test_expected_starts_come_true_on_random_queues(void **state)
{
	uint32_t predicted = 0;

	(void)state;
	fuzz_seed_begin(0x57a275);
	for (int run = 0; run < 60; run++) {
		mm_state_t *s = mk16(run % 3 ? MM_POLICY_BACKFILL :
				     MM_POLICY_FCFS, 1);
		uint64_t slice = 0;
		int njobs = 5 + (int)(rnd() % 40);

		for (int i = 0; i < njobs; i++) {
			submit(s, 1 + (uint32_t)(rnd() % 16),
			       10 * (1 + rnd() % 50), NULL);
			if (rnd() % 4 == 0) {
				slice++;
				tick(s, slice, 1000 + 7 * slice);
			}
		}
		slice++;
		tick(s, slice, 1000 + 7 * slice);
		predicted += expected_starts_come_true(s, slice);
		mm_state_destroy(s);
	}
	assert_true(predicted > 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_buddy_packs_1_2_4_8_into_aligned_blocks_exactly),
		cmocka_unit_test(test_three_ranks_take_a_width_4_block),
		cmocka_unit_test(
			test_tightest_fit_keeps_a_free_width_8_block_whole),
		cmocka_unit_test(
			test_freed_blocks_coalesce_for_a_machine_wide_job),
		cmocka_unit_test(test_nodes_of_4_2_4_8_cpus_are_aligned_blocks),
		cmocka_unit_test(test_random_load_keeps_blocks_consistent),
		cmocka_unit_test(test_shapes_place_ranks_as_slurm_does),
		cmocka_unit_test(test_drained_nodes_take_no_new_job),
		cmocka_unit_test(test_dependencies_wait_start_or_cancel),
		cmocka_unit_test(test_arrays_run_at_most_their_max),
		cmocka_unit_test(test_shapes_the_machine_cannot_hold_are_refused),
		cmocka_unit_test(
			test_backfill_starts_short_job_refuses_one_that_delays),
		cmocka_unit_test(
			test_backfill_starts_long_job_outside_the_reservation),
		cmocka_unit_test(test_backfill_looks_past_the_reserved_block),
		cmocka_unit_test(
			test_fcfs_does_not_start_a_job_behind_the_head),
		cmocka_unit_test(test_easy_never_delays_the_head_reservation),
		cmocka_unit_test(
			test_gang_rows_of_machine_wide_jobs_take_turns),
		cmocka_unit_test(test_single_row_policies_never_share),
		cmocka_unit_test(
			test_gang_fills_rows_in_order_and_keeps_strict_order),
		cmocka_unit_test(test_node_down_fails_its_jobs_in_every_row),
		cmocka_unit_test(
			test_molar_places_on_the_nodes_with_the_longest_mttf),
		cmocka_unit_test(test_time_limit_ends_job_and_frees_its_block),
		cmocka_unit_test(
			test_sched_refuses_invalid_settings_changing_nothing),
		cmocka_unit_test(
			test_sched_lowering_mpl_under_a_busy_row_is_ebusy),
		cmocka_unit_test(
			test_submit_refuses_a_job_larger_than_the_machine),
		cmocka_unit_test(
			test_cancel_in_an_inactive_row_frees_its_block),
		cmocka_unit_test(test_matrix_digest_follows_the_matrix),
		cmocka_unit_test(test_expected_starts_match_the_schedule),
		cmocka_unit_test(
			test_expected_starts_unknown_behind_unlimited_jobs),
		cmocka_unit_test(
			test_expected_starts_come_true_on_random_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
