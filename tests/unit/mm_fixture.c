/*
 * mm_fixture.c — the Machine Manager unit tests' machine and helpers
 * (mm_fixture.h).
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

const uint32_t node_ids[NNODES] = { 5, 0, 3, 7, 1 };
const char *const node_names[NNODES] = { "n5", "n0", "n3", "n7",
						 "n1" };
const uint32_t node_cpus[NNODES] = { 8, 2, 4, 1, 4 };

mm_state_t *mkmachine(int up)
{
	mm_state_t *s = NULL;

	assert_int_equal(mm_state_create(8, NNODES, node_ids, node_names,
					 node_cpus, &s), 0);
	for (uint32_t i = 0; up && i < NNODES; i++) {
		mm_op_t op = { .code = MM_OP_NODE_UP, .node = node_ids[i] };

		assert_int_equal(mm_apply(s, &op, NULL), 0);
	}
	return s;
}

uint8_t *encode(const mm_state_t *s, size_t *len)
{
	uint8_t *buf = NULL;

	assert_int_equal(mm_state_encode(s, &buf, len), 0);
	assert_non_null(buf);
	return buf;
}

/* Decode bytes that must be accepted. */
mm_state_t *decode(const uint8_t *buf, size_t len)
{
	char err[256] = "unset";
	mm_state_t *s = NULL;
	int rc = mm_state_decode(buf, len, &s, err, sizeof(err));

	if (rc)
		fail_msg("decode: %d: %s", rc, err);
	assert_string_equal(err, "");
	assert_non_null(s);
	if (mm_matrix_check(s, err, sizeof(err)))
		fail_msg("decoded, but the matrix is not consistent: %s", err);
	return s;
}

/* ------------------------------------------------------------------------ */
/* Comparing two states through the public views only                       */
/* ------------------------------------------------------------------------ */

static void same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void same_strv(uint32_t n, const char *const *a,
		      const char *const *b)
{
	for (uint32_t i = 0; i < n; i++)
		same_str(a[i], b[i]);
}

void same_input(const mm_input_t *a, const mm_input_t *b)
{
	assert_memory_equal(a->sha256, b->sha256, MM_INPUT_SHA256_BYTES);
	assert_true(a->size == b->size);
	assert_int_equal(a->mode, b->mode);
}

static void same_job(const mm_job_t *a, const mm_job_t *b)
{
	assert_int_equal(a->id, b->id);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_int_equal(a->state, b->state);
	assert_string_equal(a->reason, b->reason);
	assert_int_equal(a->ranks, b->ranks);
	assert_int_equal(a->ninputs, b->ninputs);
	assert_int_equal(a->mpi, b->mpi);
	for (uint32_t k = 0; k < a->ninputs; k++)
		same_input(&a->inputs[k], &b->inputs[k]);
	assert_int_equal(sp_nodeset_count(a->nodes),
			 sp_nodeset_count(b->nodes));
	for (uint32_t id = 0; id < 8; id++)
		assert_int_equal(sp_nodeset_has(a->nodes, id),
				 sp_nodeset_has(b->nodes, id));
	assert_memory_equal(a->rank_node, b->rank_node,
			    a->ranks * sizeof(uint32_t));
	assert_int_equal(a->argc, b->argc);
	same_strv(a->argc, a->argv, b->argv);
	assert_int_equal(a->envc, b->envc);
	same_strv(a->envc, a->env, b->env);
	same_str(a->cwd, b->cwd);
	assert_int_equal(a->nfiles, b->nfiles);
	same_strv(a->nfiles, a->files, b->files);
	assert_int_equal(a->batch, b->batch);
	same_str(a->out_path, b->out_path);
	same_str(a->err_path, b->err_path);
	assert_int_equal(a->time_limit_ms, b->time_limit_ms);
	assert_int_equal(a->submit_slice, b->submit_slice);
	assert_int_equal(a->start_slice, b->start_slice);
	assert_int_equal(a->end_slice, b->end_slice);
	assert_int_equal(a->submit_ms, b->submit_ms);
	assert_int_equal(a->start_ms, b->start_ms);
	assert_int_equal(a->end_ms, b->end_ms);
	assert_int_equal(a->exit_code, b->exit_code);
	/* row and col mean something only while it holds PEs (a job that
	 * ended keeps its last ones; a snapshot stores 0) */
	assert_int_equal(a->width, b->width);
	if (a->width) {
		assert_int_equal(a->row, b->row);
		assert_int_equal(a->col, b->col);
	}
	if (!a->rank_status || !b->rank_status)
		assert_ptr_equal(a->rank_status, b->rank_status);
	else
		assert_memory_equal(a->rank_status, b->rank_status,
				    a->ranks * sizeof(int32_t));
}

void same_state(const mm_state_t *a, const mm_state_t *b)
{
	mm_sched_conf_t ca, cb;
	mm_node_t na, nb;
	mm_job_t ja, jb;
	uint32_t id = 1;

	assert_int_equal(mm_digest(a), mm_digest(b));
	assert_int_equal(mm_slice(a), mm_slice(b));
	mm_sched_get(a, &ca);
	mm_sched_get(b, &cb);
	assert_memory_equal(&ca, &cb, sizeof(ca));
	assert_int_equal(mm_matrix_digest(a), mm_matrix_digest(b));
	assert_int_equal(mm_matrix_rows(a), mm_matrix_rows(b));
	assert_int_equal(mm_matrix_cols(a), mm_matrix_cols(b));
	assert_int_equal(mm_free_pes(a), mm_free_pes(b));
	for (uint64_t slice = 0; slice < 8; slice++)
		assert_int_equal(mm_active_row(a, slice),
				 mm_active_row(b, slice));
	assert_int_equal(mm_node_count(a), mm_node_count(b));
	for (uint32_t i = 0; mm_node_get(a, i, &na) == 0; i++) {
		assert_int_equal(mm_node_get(b, i, &nb), 0);
		assert_int_equal(na.id, nb.id);
		assert_string_equal(na.name, nb.name);
		assert_int_equal(na.cpus, nb.cpus);
		assert_int_equal(na.state, nb.state);
		assert_string_equal(na.reason, nb.reason);
		assert_int_equal(na.used, nb.used);
		assert_int_equal(na.failures, nb.failures);
		assert_int_equal(na.up_ms, nb.up_ms);
		assert_int_equal(na.up_since_ms, nb.up_since_ms);
		assert_int_equal(na.col, nb.col);
	}
	for (; mm_job_next(a, id, &ja) == 0; id = ja.id + 1) {
		assert_int_equal(mm_job_next(b, id, &jb), 0);
		same_job(&ja, &jb);
	}
	assert_int_equal(mm_job_next(b, id, &jb), -ENOENT);
}

/* Encode s, decode it, check the copy is s and encodes to the same
 * bytes; returns the copy. */
mm_state_t *round_trip(const mm_state_t *s)
{
	size_t n, m;
	uint8_t *a = encode(s, &n), *b;
	mm_state_t *c = decode(a, n);

	same_state(s, c);
	b = encode(c, &m);
	assert_int_equal(m, n);
	assert_memory_equal(a, b, n);
	free(a);
	free(b);
	return c;
}

uint32_t must(mm_state_t *s, mm_op_t op)
{
	mm_result_t res;

	if (mm_apply(s, &op, &res))
		fail_msg("op %d: %s", op.code, res.err);
	return res.job;
}

uint32_t submit(mm_state_t *s, uint32_t ranks, const char *nodelist)
{
	static const char *const argv[] = { "/bin/app", "-n" };
	static const char *const env[] = { "A=1", "B=" };
	static const char *const files[] = { "/data/in" };
	mm_job_spec_t sp = {
		.name = "job", .uid = 1000, .gid = 100, .ranks = ranks,
		.nodelist = nodelist, .argc = 2, .argv = argv,
		.envc = ranks % 3, .env = ranks % 3 ? env : NULL,
		.cwd = "/home/u", .nfiles = ranks % 2, .files = files,
		.batch = ranks % 2, .out_path = "o.%j", .time_limit_ms = 500,
	};

	return must(s, (mm_op_t){ .code = MM_OP_SUBMIT, .spec = &sp });
}

/* A state with a DOWN node and jobs in every state (ids in brackets):
 * PENDING [8, 9], STAGING [1], RUNNING [7], COMPLETED [2], FAILED by a
 * rank [3], before placement [5] and after [6], CANCELLED [4]. */
mm_state_t *every_state(void)
{
	mm_state_t *s = mkmachine(1);
	const int32_t ok[] = { 0, 0 };
	const int32_t bad[] = { 0, W_EXITCODE(0, 9), 0, W_EXITCODE(3, 0) };
	uint32_t id;

	must(s, (mm_op_t){ .code = MM_OP_NODE_DOWN, .node = 7,
			   .reason = "left the view" });
	submit(s, 3, "0-1,3");
	id = submit(s, 2, NULL);
	submit(s, 4, NULL);
	submit(s, 1, "5");
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 1, .now_ms = 100 });
	must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED, .job = id });
	must(s, (mm_op_t){ .code = MM_OP_JOB_EXITED, .job = id, .nstatus = 2,
			   .status = ok });
	must(s, (mm_op_t){ .code = MM_OP_JOB_EXITED, .job = 3, .nstatus = 4,
			   .status = bad });
	must(s, (mm_op_t){ .code = MM_OP_CANCEL, .job = 4 });
	submit(s, 1, NULL);
	submit(s, 1, NULL);
	must(s, (mm_op_t){ .code = MM_OP_JOB_FAILED, .job = 5,
			   .reason = "launch failed" });
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 2, .now_ms = 200 });
	must(s, (mm_op_t){ .code = MM_OP_JOB_FAILED, .job = 6 });
	submit(s, 4, NULL);
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 3, .now_ms = 300 });
	must(s, (mm_op_t){ .code = MM_OP_JOB_STAGED, .job = 7 });
	submit(s, 16, NULL);
	submit(s, 1, "0");
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 4, .now_ms = 400 });
	return s;
}

