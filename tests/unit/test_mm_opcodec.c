/*
 * test_mm_opcodec.c — the replication-log form of MM operations
 * (manager/opcodec.c): every opcode round-trips, and the decoder, fed
 * truncated, mutated and random bytes, never crashes, never leaks (run it
 * under -Db_sanitize=address,undefined) and returns -STORM_EPROTO for
 * anything malformed.  Key rule: the encoding is canonical — whatever
 * decodes re-encodes to the very same bytes (SCHED's settings included,
 * valid or not: mm_apply() judges them, not the codec).
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

#define BUFSZ 8192

static const char *const argv_[] = { "/bin/app", "--size", "" };
static const char *const env_[] = { "OMP_NUM_THREADS=4", "A=b" };
static const char *const files_[] = { "/data/in.dat" };
static const int32_t statuses[] = { 0, 2 << 8, 9, -1, INT32_MIN };
static const mm_sched_conf_t gang_conf = {
	.policy = MM_POLICY_GANG,
	.mpl = MM_MPL_MAX,
	.quantum_slices = 0x01020304,
	.placement = MM_PLACE_MOLAR,
};

static const mm_job_spec_t full_spec = {
	.name = "solver",
	.uid = 1000,
	.gid = 100,
	.ranks = 64,
	.nodelist = "1-3,5",
	.argc = 3,
	.argv = argv_,
	.envc = 2,
	.env = env_,
	.cwd = "/home/u",
	.nfiles = 1,
	.files = files_,
	.batch = 1,
	.out_path = "out.%j.%r",
	.err_path = NULL,
	.time_limit_ms = UINT64_C(0x0123456789abcdef),
};

/* SUBMIT_LIMITS carries the spec's limits too */
static const mm_job_spec_t limits_spec = {
	.name = "big", .uid = 1000, .gid = 100, .ranks = 2, .argc = 3,
	.argv = argv_, .cwd = "/", .mem_bytes = UINT64_C(3) << 30,
};

/* SUBMIT_INPUTS carries the inputs' digests, sizes and modes */
static const mm_input_t inputs_[2] = {
	{ .sha256 = { 1, 2, 3, [31] = 0xff }, .size = 123456, .mode = 0755 },
	{ .sha256 = { [0] = 0xaa, [16] = 0x55 }, .size = 0, .mode = 0600 },
};
static const mm_job_spec_t inputs_spec = {
	.name = "in", .uid = 1000, .gid = 100, .ranks = 1, .argc = 3,
	.argv = argv_, .cwd = "/", .nfiles = 1, .files = files_,
	.mem_bytes = 1u << 20, .ninputs = 2, .inputs = inputs_,
	.mpi = MM_MPI_BCS,
};

static const mm_job_spec_t ckpt_spec = {
	.name = "ck", .uid = 1000, .gid = 100, .ranks = 1, .argc = 3,
	.argv = argv_, .cwd = "/", .nfiles = 1, .files = files_,
	.ninputs = 2, .inputs = inputs_, .ckpt_every_s = MM_CKPT_AUTO,
	.requeue = 1,
};

static const mm_job_spec_t shape_spec = {
	.name = "sh", .uid = 1000, .gid = 100, .ranks = 8, .argc = 3,
	.argv = argv_, .cwd = "/", .nfiles = 1, .files = files_,
	.ninputs = 2, .inputs = inputs_, .cpus_per_task = 2,
	.tasks_per_node = 2, .node_count = 4, .cpu_bind = MM_BIND_NONE,
};

static const mm_usage_t usages[5] = {
	{ 1, 2, 3 }, { UINT64_MAX, 0, 1u << 20 }, { 0, 0, 0 },
	{ 123456789, 987654321, 4096 }, { 5, 6, 7 },
};

/* One op of every opcode, with every field its opcode carries set. */
static const mm_op_t sample_ops[] = {
	{ .code = MM_OP_SUBMIT, .spec = &full_spec },
	{ .code = MM_OP_CANCEL, .job = 17, .uid = 1000 },
	{ .code = MM_OP_TICK, .slice = UINT64_MAX - 1, .now_ms = 123456789 },
	{ .code = MM_OP_NODE_DOWN, .node = 65535, .reason = "heartbeat lost" },
	{ .code = MM_OP_NODE_UP, .node = 3 },
	{ .code = MM_OP_JOB_STAGED, .job = UINT32_MAX },
	{ .code = MM_OP_JOB_EXITED, .job = 4, .nstatus = 5,
	  .status = statuses },
	{ .code = MM_OP_JOB_FAILED, .job = 9, .reason = NULL },
	{ .code = MM_OP_JOB_EXITED_USAGE, .job = 4, .nstatus = 5,
	  .status = statuses, .usage = usages },
	{ .code = MM_OP_SCHED, .sched = &gang_conf },
	{ .code = MM_OP_SUBMIT_CAPPED, .spec = &full_spec,
	  .max_pending = 100000, .max_pending_user = UINT32_MAX,
	  .max_state_bytes = UINT64_C(2147483648) },
	{ .code = MM_OP_SUBMIT_LIMITS, .spec = &limits_spec,
	  .max_pending = 10, .max_pending_user = 5, .max_state_bytes = 1 },
	{ .code = MM_OP_SUBMIT_INPUTS, .spec = &inputs_spec,
	  .max_pending = 10, .max_pending_user = 5, .max_state_bytes = 0 },
	{ .code = MM_OP_CKPT_REQUEST, .job = 12, .uid = 1000 },
	{ .code = MM_OP_CKPT_COMMIT, .job = 12, .epoch = 3,
	  .ckpt_bytes = UINT64_C(1) << 40, .ckpt_stop_us = 4096,
	  .ckpt_keep = 2, .ckpt_levels = MM_CKPT_L1 | MM_CKPT_L3 },
	{ .code = MM_OP_CKPT_ABORT, .job = 12, .epoch = UINT32_MAX,
	  .reason = "node nm1: rank 0: 2 threads (one is supported)" },
	{ .code = MM_OP_CKPT_RESTART, .job = 12, .uid = 0, .epoch = 7 },
	{ .code = MM_OP_SUBMIT_CKPT, .spec = &ckpt_spec, .max_pending = 3 },
	{ .code = MM_OP_CKPT_REQUEUE, .job = 5, .uid = 1000 },
	{ .code = MM_OP_SUBMIT_SHAPE, .spec = &shape_spec, .max_pending = 9 },
};
#define NSAMPLES (sizeof(sample_ops) / sizeof(sample_ops[0]))

static void assert_str_same(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_strv_same(uint32_t na, const char *const *a, uint32_t nb,
			     const char *const *b)
{
	assert_int_equal(na, nb);
	for (uint32_t i = 0; i < na; i++)
		assert_str_same(a[i], b[i]);
}

static void assert_op_same(const mm_op_t *a, const mm_op_t *b)
{
	assert_int_equal(a->code, b->code);
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->node, b->node);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->slice, b->slice);
	assert_int_equal(a->now_ms, b->now_ms);
	assert_str_same(a->reason, b->reason);
	assert_int_equal(a->nstatus, b->nstatus);
	assert_int_equal(a->max_pending, b->max_pending);
	assert_int_equal(a->max_pending_user, b->max_pending_user);
	assert_true(a->max_state_bytes == b->max_state_bytes);
	if (a->nstatus)
		assert_memory_equal(a->status, b->status,
				    a->nstatus * sizeof(int32_t));
	assert_true(!a->usage == !b->usage);
	if (a->usage)
		assert_memory_equal(a->usage, b->usage,
				    a->nstatus * sizeof(mm_usage_t));
	if (!a->sched || !b->sched) {
		assert_ptr_equal(a->sched, b->sched);
	} else {
		assert_int_equal(a->sched->policy, b->sched->policy);
		assert_int_equal(a->sched->mpl, b->sched->mpl);
		assert_int_equal(a->sched->quantum_slices,
				 b->sched->quantum_slices);
		assert_int_equal(a->sched->placement, b->sched->placement);
	}
	if (!a->spec || !b->spec) {
		assert_ptr_equal(a->spec, b->spec);
		return;
	}
	assert_str_same(a->spec->name, b->spec->name);
	assert_true(a->spec->mem_bytes == b->spec->mem_bytes);
	assert_int_equal(a->spec->ninputs, b->spec->ninputs);
	assert_int_equal(a->spec->mpi, b->spec->mpi);
	assert_int_equal(a->spec->ckpt_every_s, b->spec->ckpt_every_s);
	assert_int_equal(a->spec->requeue, b->spec->requeue);
	assert_int_equal(a->spec->cpus_per_task, b->spec->cpus_per_task);
	assert_int_equal(a->spec->tasks_per_node, b->spec->tasks_per_node);
	assert_int_equal(a->spec->node_count, b->spec->node_count);
	assert_int_equal(a->spec->cpu_bind, b->spec->cpu_bind);
	for (uint32_t k = 0; k < a->spec->ninputs; k++) {
		assert_memory_equal(a->spec->inputs[k].sha256,
				    b->spec->inputs[k].sha256,
				    MM_INPUT_SHA256_BYTES);
		assert_true(a->spec->inputs[k].size ==
			    b->spec->inputs[k].size);
		assert_int_equal(a->spec->inputs[k].mode,
				 b->spec->inputs[k].mode);
	}
	assert_int_equal(a->spec->uid, b->spec->uid);
	assert_int_equal(a->spec->gid, b->spec->gid);
	assert_int_equal(a->spec->ranks, b->spec->ranks);
	assert_str_same(a->spec->nodelist, b->spec->nodelist);
	assert_strv_same(a->spec->argc, a->spec->argv, b->spec->argc,
			 b->spec->argv);
	assert_strv_same(a->spec->envc, a->spec->env, b->spec->envc,
			 b->spec->env);
	assert_str_same(a->spec->cwd, b->spec->cwd);
	assert_strv_same(a->spec->nfiles, a->spec->files, b->spec->nfiles,
			 b->spec->files);
	assert_int_equal(a->spec->batch, b->spec->batch);
	assert_str_same(a->spec->out_path, b->spec->out_path);
	assert_str_same(a->spec->err_path, b->spec->err_path);
	assert_int_equal(a->spec->time_limit_ms, b->spec->time_limit_ms);
}

static int encode(const mm_op_t *op, uint8_t *buf)
{
	int n = mm_op_encode(op, buf, BUFSZ);

	assert_true(n >= 4);
	return n;
}

/* ------------------------------------------------------------------------ */

static void test_every_opcode_round_trips(void **state)
{
	uint8_t a[BUFSZ], b[BUFSZ];

	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		void *arena = NULL;
		mm_op_t op;
		int n = encode(&sample_ops[i], a), m;

		assert_int_equal(a[0], 0x4D);
		assert_int_equal(a[1], 1);
		assert_int_equal(a[2] | a[3] << 8, sample_ops[i].code);
		assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena), 0);
		assert_non_null(arena);
		assert_op_same(&sample_ops[i], &op);
		m = encode(&op, b);
		assert_int_equal(m, n);
		assert_memory_equal(a, b, (size_t)n);
		free(arena);
	}
}

static void test_decoded_strings_live_in_the_arena(void **state)
{
	uint8_t a[BUFSZ];
	void *arena = NULL;
	mm_op_t op;
	int n = encode(&sample_ops[0], a);

	(void)state;
	assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena), 0);
	/* the input may go away: nothing decoded points into it */
	memset(a, 0xAA, sizeof(a));
	assert_string_equal(op.spec->argv[1], "--size");
	assert_string_equal(op.spec->argv[2], "");
	assert_string_equal(op.spec->env[0], "OMP_NUM_THREADS=4");
	assert_null(op.spec->err_path);
	free(arena);
}

static void test_encode_reports_enospc_for_every_short_buffer(void **state)
{
	uint8_t a[BUFSZ], b[BUFSZ];

	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		int n = encode(&sample_ops[i], a);

		for (int cap = 0; cap < n; cap++)
			assert_int_equal(mm_op_encode(&sample_ops[i], b,
						      (size_t)cap), -ENOSPC);
		assert_int_equal(mm_op_encode(&sample_ops[i], b, (size_t)n),
				 n);
	}
}

static void test_encode_refuses_unknown_opcode_and_missing_spec(void **state)
{
	uint8_t a[BUFSZ];
	mm_op_t op = { .code = (mm_opcode_t)0 };

	(void)state;
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), -EINVAL);
	op.code = (mm_opcode_t)(MM_OP_TICK_RETAIN + 1);
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), -EINVAL);
	op.code = MM_OP_SUBMIT; /* no spec */
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), -EINVAL);
	op.code = MM_OP_SCHED; /* no settings */
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), -EINVAL);
	assert_int_equal(mm_op_encode(NULL, a, sizeof(a)), -EINVAL);
}

static void test_decode_rejects_bad_magic_version_and_opcode(void **state)
{
	uint8_t a[BUFSZ], b[BUFSZ];
	void *arena = (void *)0x1;
	mm_op_t op;
	int n = encode(&sample_ops[2], a);

	(void)state;
	memcpy(b, a, (size_t)n);
	b[0] = 'N';
	assert_int_equal(mm_op_decode(b, (size_t)n, &op, &arena),
			 -STORM_EPROTO);
	memcpy(b, a, (size_t)n);
	b[1] = 2; /* a version this build does not know */
	assert_int_equal(mm_op_decode(b, (size_t)n, &op, &arena),
			 -STORM_EPROTO);
	b[1] = 0;
	assert_int_equal(mm_op_decode(b, (size_t)n, &op, &arena),
			 -STORM_EPROTO);
	for (unsigned code = 0; code < 0x10000; code += code < 16 ? 1 : 97) {
		if (code >= MM_OP_SUBMIT && code <= MM_OP_JOB_EXITED_USAGE)
			continue;
		memcpy(b, a, (size_t)n);
		b[2] = (uint8_t)code;
		b[3] = (uint8_t)(code >> 8);
		assert_int_equal(mm_op_decode(b, (size_t)n, &op, &arena),
				 -STORM_EPROTO);
	}
	assert_ptr_equal(arena, (void *)0x1); /* untouched on failure */
}

static void test_decode_rejects_every_truncation(void **state)
{
	uint8_t a[BUFSZ];

	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		int n = encode(&sample_ops[i], a);

		for (int len = 0; len < n; len++) {
			/* a copy of exactly len bytes, so ASan sees any
			 * read beyond it */
			uint8_t *t = malloc(len ? (size_t)len : 1);
			void *arena = NULL;
			mm_op_t op;

			memcpy(t, a, (size_t)len);
			assert_int_equal(mm_op_decode(t, (size_t)len, &op,
						      &arena), -STORM_EPROTO);
			assert_null(arena);
			free(t);
		}
	}
}

static void test_decode_rejects_trailing_bytes(void **state)
{
	uint8_t a[BUFSZ];
	void *arena = NULL;
	mm_op_t op;

	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++) {
		int n = encode(&sample_ops[i], a);

		a[n] = 0;
		assert_int_equal(mm_op_decode(a, (size_t)n + 1, &op, &arena),
				 -STORM_EPROTO);
	}
	assert_null(arena);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_decode_rejects_lying_lengths(void **state)
{
	static const uint32_t lies[] = { 0xfffffffe, 0x80000000, 65537,
					 4097, 1000 };
	uint8_t a[BUFSZ];
	void *arena = NULL;
	mm_op_t op;
	int n;

	(void)state;
	/* NODE_DOWN: u32 node, then the reason's length at offset 8 */
	n = encode(&sample_ops[3], a);
	for (size_t k = 0; k < sizeof(lies) / sizeof(lies[0]); k++) {
		put32(a + 8, lies[k]);
		assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena),
				 -STORM_EPROTO);
	}
	/* JOB_EXITED: u32 job, then the status count at offset 8 */
	n = encode(&sample_ops[6], a);
	for (size_t k = 0; k < sizeof(lies) / sizeof(lies[0]); k++) {
		put32(a + 8, lies[k]);
		assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena),
				 -STORM_EPROTO);
	}
	assert_null(arena);
}

static void test_decode_rejects_nul_inside_a_string(void **state)
{
	mm_op_t in = { .code = MM_OP_JOB_FAILED, .job = 1, .reason = "abc" };
	uint8_t a[BUFSZ];
	void *arena = NULL;
	mm_op_t op;
	int n = encode(&in, a);

	(void)state;
	a[n - 2] = 0; /* "a\0c" would not encode back the same */
	assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena),
			 -STORM_EPROTO);
	assert_null(arena);
}

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Decode t; if it is accepted it must encode back to exactly t. */
static int decode_checked(const uint8_t *t, size_t len)
{
	uint8_t back[BUFSZ];
	void *arena = NULL;
	mm_op_t op;
	int rc = mm_op_decode(t, len, &op, &arena), n;

	if (rc) {
		assert_int_equal(rc, -STORM_EPROTO);
		assert_null(arena);
		return 0;
	}
	n = mm_op_encode(&op, back, sizeof(back));
	assert_int_equal(n, (int)len);
	assert_memory_equal(back, t, len);
	free(arena);
	return 1;
}

static void test_decode_survives_random_mutations(void **state)
{
	uint8_t base[NSAMPLES][BUFSZ];
	int blen[NSAMPLES];
	uint64_t x = 0x2545F4914F6CDD1DULL;
	int accepted = 0;

	(void)state;
	for (size_t i = 0; i < NSAMPLES; i++)
		blen[i] = encode(&sample_ops[i], base[i]);
	for (int iter = 0; iter < 20000; iter++) {
		size_t i = rng_next(&x) % NSAMPLES;
		size_t len = (size_t)blen[i];
		uint8_t *t = malloc(len + 16), *u;
		int nmut = 1 + (int)(rng_next(&x) % 4);

		memcpy(t, base[i], len);
		for (int k = 0; k < nmut; k++) {
			size_t at = rng_next(&x) % len;

			switch (rng_next(&x) % 5) {
			case 0: /* flip a bit */
				t[at] ^= (uint8_t)(1u << (rng_next(&x) % 8));
				break;
			case 1: /* any byte */
				t[at] = (uint8_t)rng_next(&x);
				break;
			case 2: /* an interesting byte */
				t[at] = (uint8_t[]){ 0, 1, 0x7f, 0x80,
						     0xff }[rng_next(&x) % 5];
				break;
			case 3: /* cut */
				len = at;
				break;
			default: /* grow by a few random bytes */
				for (int g = 0; g < 4 && len < 16 +
				     (size_t)blen[i]; g++)
					t[len++] = (uint8_t)rng_next(&x);
				break;
			}
			if (len == 0)
				break;
		}
		/* the exact length, so ASan flags any over-read */
		u = malloc(len ? len : 1);
		memcpy(u, t, len);
		accepted += decode_checked(u, len);
		free(u);
		free(t);
	}
	/* some mutations (e.g. of a uid) still decode: that path ran too */
	assert_true(accepted > 0);
}

static void test_decode_survives_random_buffers(void **state)
{
	uint64_t x = 0xD1B54A32D192ED03ULL;

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = rng_next(&x) % 96;
		uint8_t *t = malloc(len ? len : 1);

		for (size_t k = 0; k < len; k++)
			t[k] = (uint8_t)rng_next(&x);
		if (len >= 4 && iter % 2) { /* a plausible header */
			t[0] = 0x4D;
			t[1] = 1;
			t[2] = (uint8_t)(1 + rng_next(&x) % MM_OP_JOB_EXITED_USAGE);
			t[3] = 0;
		}
		decode_checked(t, len);
		free(t);
	}
}

/* SCHED: u8 policy, u32 mpl, u32 quantum, u8 placement (10 bytes after
 * the 4 of the frame), whatever their values: a replica must log and read
 * back settings it will refuse, so that every replica refuses them. */
static void test_sched_round_trips_any_settings_canonically(void **state)
{
	static const mm_sched_conf_t confs[] = {
		{ MM_POLICY_FCFS, 1, 1, MM_PLACE_BUDDY },
		{ MM_POLICY_BACKFILL, 1, MM_QUANTUM_MAX, MM_PLACE_MOLAR },
		{ (mm_policy_t)0, 0, 0, (mm_placement_t)0 },
		{ (mm_policy_t)255, UINT32_MAX, UINT32_MAX,
		  (mm_placement_t)255 },
		{ MM_POLICY_FCFS, 2, 1, (mm_placement_t)7 },
	};
	static const uint8_t want[] = { 0x4D, 1, 9, 0, 3, 16, 0, 0, 0,
					0x04, 0x03, 0x02, 0x01, 2 };
	uint8_t a[BUFSZ], b[BUFSZ];

	(void)state;
	assert_int_equal(encode(&sample_ops[NSAMPLES - 11], a),
			 (int)sizeof(want));
	assert_memory_equal(a, want, sizeof(want));
	for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
		mm_op_t in = { .code = MM_OP_SCHED, .sched = &confs[i] }, op;
		void *arena = NULL;
		int n = encode(&in, a);

		assert_int_equal(n, 14);
		assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena), 0);
		assert_op_same(&in, &op);
		assert_int_equal(encode(&op, b), n);
		assert_memory_equal(a, b, (size_t)n);
		free(arena);
	}
	/* every byte value of the u8 fields decodes and encodes back */
	for (unsigned v = 0; v < 256; v++) {
		mm_op_t op;
		void *arena = NULL;

		encode(&sample_ops[NSAMPLES - 11], a);
		a[4] = (uint8_t)v;
		a[13] = (uint8_t)(255 - v);
		assert_int_equal(mm_op_decode(a, 14, &op, &arena), 0);
		assert_int_equal(op.sched->policy, v);
		assert_int_equal(op.sched->placement, 255 - v);
		assert_int_equal(encode(&op, b), 14);
		assert_memory_equal(a, b, 14);
		free(arena);
	}
}

/* An enum value a byte cannot carry is not written (it would not come
 * back the same). */
static void test_sched_encode_refuses_values_over_a_byte(void **state)
{
	mm_sched_conf_t c = { (mm_policy_t)256, 1, 1, MM_PLACE_BUDDY };
	mm_op_t op = { .code = MM_OP_SCHED, .sched = &c };
	uint8_t a[BUFSZ];

	(void)state;
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), -EINVAL);
	c.policy = MM_POLICY_GANG;
	c.placement = (mm_placement_t)0x1000;
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), -EINVAL);
	c.placement = MM_PLACE_BUDDY;
	assert_int_equal(mm_op_encode(&op, a, sizeof(a)), 14);
}

/* A decoded SCHED applies like the original: accepted or refused alike. */
static void test_decoded_sched_applies_to_a_state(void **state)
{
	static const uint32_t ids[] = { 0, 1 }, cpus[] = { 4, 4 };
	static const char *const names[] = { "a", "b" };
	const mm_sched_conf_t good = { MM_POLICY_GANG, 3, 2, MM_PLACE_MOLAR };
	const mm_sched_conf_t bad = { MM_POLICY_FCFS, 3, 2, MM_PLACE_MOLAR };
	const mm_sched_conf_t *confs[] = { &good, &bad };
	int want[] = { 0, -EINVAL };
	mm_state_t *s = NULL;

	(void)state;
	assert_int_equal(mm_state_create(2, 2, ids, names, cpus, &s), 0);
	for (int k = 0; k < 2; k++) {
		mm_op_t in = { .code = MM_OP_SCHED, .sched = confs[k] }, op;
		uint8_t a[BUFSZ];
		void *arena = NULL;
		mm_result_t res;
		mm_sched_conf_t now;

		assert_int_equal(mm_op_decode(a, (size_t)encode(&in, a), &op,
					      &arena), 0);
		assert_int_equal(mm_apply(s, &op, &res), want[k]);
		free(arena);
		mm_sched_get(s, &now);
		assert_memory_equal(&now, &good, sizeof(now));
	}
	assert_int_equal(mm_matrix_rows(s), 3);
	mm_state_destroy(s);
}

static void test_decoded_submit_applies_to_a_state(void **state)
{
	static const uint32_t ids[] = { 1, 2, 3, 5 }, cpus[] = { 32, 16, 8, 8 };
	static const char *const names[] = { "a", "b", "c", "d" };
	uint8_t a[BUFSZ];
	mm_state_t *s = NULL;
	void *arena = NULL;
	mm_result_t res;
	mm_op_t op;
	mm_job_t j;
	int n = encode(&sample_ops[0], a);

	(void)state;
	assert_int_equal(mm_state_create(8, 4, ids, names, cpus, &s), 0);
	assert_int_equal(mm_op_decode(a, (size_t)n, &op, &arena), 0);
	assert_int_equal(mm_apply(s, &op, &res), 0);
	free(arena); /* the state holds its own copies */
	assert_int_equal(mm_job_get(s, res.job, &j), 0);
	assert_string_equal(j.argv[0], "/bin/app");
	assert_string_equal(j.env[1], "A=b");
	assert_int_equal(j.ranks, 64);
	mm_state_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_opcode_round_trips),
		cmocka_unit_test(test_decoded_strings_live_in_the_arena),
		cmocka_unit_test(
			test_encode_reports_enospc_for_every_short_buffer),
		cmocka_unit_test(
			test_encode_refuses_unknown_opcode_and_missing_spec),
		cmocka_unit_test(
			test_decode_rejects_bad_magic_version_and_opcode),
		cmocka_unit_test(test_decode_rejects_every_truncation),
		cmocka_unit_test(test_decode_rejects_trailing_bytes),
		cmocka_unit_test(test_decode_rejects_lying_lengths),
		cmocka_unit_test(test_decode_rejects_nul_inside_a_string),
		cmocka_unit_test(test_decode_survives_random_mutations),
		cmocka_unit_test(test_decode_survives_random_buffers),
		cmocka_unit_test(
			test_sched_round_trips_any_settings_canonically),
		cmocka_unit_test(test_sched_encode_refuses_values_over_a_byte),
		cmocka_unit_test(test_decoded_sched_applies_to_a_state),
		cmocka_unit_test(test_decoded_submit_applies_to_a_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
