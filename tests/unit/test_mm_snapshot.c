/*
 * test_mm_snapshot.c — the whole-state snapshot of the Machine Manager
 * (manager/snapshot.c): a decoded state is the encoded one — same views,
 * same digest — and goes on exactly like it under any further operations;
 * the encoding is canonical; a foreign version is refused saying so; a
 * version 1 snapshot (before the matrix) loads only if no job holds PEs;
 * a matrix block that no scheduler could have made is refused where it
 * is; and the decoder, fed truncated, mutated and random bytes (each in a
 * heap block of exactly its length), never crashes or leaks under
 * -Db_sanitize=address,undefined, and either refuses with -STORM_EPROTO or
 * gives a state that encodes back to the very same bytes and runs.
 * STORM_FUZZ_SEED=N replays the seeded parts.
 *
 * The machine: world of 8, compute nodes 0 (2 cpus), 1 (4), 3 (4), 5 (8)
 * and 7 (1): matrix columns n0 [0,2), n1 [4,8), n3 [8,12), n5 [16,24), n7
 * 24.  Node 0 is a compute node on purpose: a job placed only there has
 * rank_node all 0, like a job never placed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fuzz_rng.h"

#include "mm_fixture.h"
#include "storm_manager.h"

/* Offsets in a v3 snapshot of this machine (see snapshot.c).  Node i is
 * the i-th in world id order; while UP (reason "") one takes 39 bytes, 16
 * of them (up_ms, up_since_ms) new in v2.  A job's block is the 12 bytes
 * before its usage flag (v3), the last byte of a job without usage. */
#define OFF_VERSION 4
#define OFF_NWORLD 6
#define OFF_NOW 18
#define OFF_POLICY 26 /* the settings: new in v2 */
#define OFF_MPL 27
#define OFF_QUANTUM 31
#define OFF_PLACEMENT 35
#define OFF_NNODES 36
#define OFF_NODE(i) (40 + 39 * (i))
#define OFF_CPUS 10  /* in a node: after its id and name */
#define OFF_STATE 14
#define BLOCK_BYTES 12
/* a job's last bytes, without usage: has_usage (0), mem_bytes (v6),
 * ninputs (v7, 0), mpi (v7), and with no checkpoint (v8) ckpt_last,
 * ckpt_want, ckpt_want_slice, ckpt_error (""), nckpts, restore_epoch,
 * restarts, ckpt_every_s, ckpt_requeue, requeue, and its shape (v9)
 * cpus_per_task, tasks_per_node, node_count, cpu_bind, dependency
 * (job, type), array (id, task, max), and (v10) alloc, parent */
#define JOB_TAIL 87
/* v5: the credential cache's count and v9: the drained nodes' count,
 * last; both 0 */
#define CREDS_EMPTY 8

/* Decode bytes that must be refused; returns the message. */
static const char *refused(const uint8_t *buf, size_t len)
{
	static char err[256];
	mm_state_t *s = (mm_state_t *)0x1;

	err[0] = '\0';
	assert_int_equal(mm_state_decode(buf, len, &s, err, sizeof(err)),
			 -STORM_EPROTO);
	assert_ptr_equal(s, (mm_state_t *)0x1); /* untouched */
	assert_non_null(strstr(err, "snapshot: "));
	assert_non_null(strstr(err, " at offset "));
	return err;
}

/* A heap block of exactly len bytes, so ASan sees any read past it. */
static uint8_t *exactly(const uint8_t *p, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	assert_non_null(c);
	memcpy(c, p, len);
	return c;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The version 1 form of the v5 snapshot buf (of a state with at most one
 * job, without usage): the settings, each node's service times, the
 * job's block, its usage flag and its memory limit (v5) left out.  Returns a malloc'd buffer of
 * *len bytes. */
static uint8_t *to_v1(const uint8_t *buf, size_t n, size_t *len)
{
	uint8_t *v1 = malloc(n);
	size_t in = OFF_NNODES + 4, out = OFF_POLICY;
	uint32_t nnodes = get32(buf + OFF_NNODES), njobs;

	assert_non_null(v1);
	assert_int_equal(get32(buf + n - CREDS_EMPTY), 0); /* v5's */
	n -= CREDS_EMPTY;
	memcpy(v1, buf, OFF_POLICY);
	v1[OFF_VERSION] = 1;
	memcpy(v1 + out, buf + OFF_NNODES, 4);
	out += 4;
	for (uint32_t i = 0; i < nnodes; i++) {
		/* id, name, cpus, state, reason, failures | up_ms, since */
		size_t at = in;

		in += 4;
		in += 4 + get32(buf + in);
		in += 5;
		in += 4 + get32(buf + in);
		in += 4;
		memcpy(v1 + out, buf + at, in - at);
		out += in - at;
		in += 16;
	}
	in += 4; /* next_id (v4) */
	njobs = get32(buf + in);
	assert_true(njobs <= 1);
	assert_true(!njobs || buf[n - JOB_TAIL] == 0); /* no usage */
	memcpy(v1 + out, buf + in, 4);
	out += 4;
	in += 4 + (njobs ? 4 : 0); /* the job's id (v4) */
	memcpy(v1 + out, buf + in, n - in - (njobs ? BLOCK_BYTES + JOB_TAIL : 0));
	out += n - in - (njobs ? BLOCK_BYTES + JOB_TAIL : 0);
	*len = out;
	return v1;
}

/* Where the 12 bytes of the block (row, col, width) are: the only place
 * they occur. */
static size_t block_at(const uint8_t *buf, size_t n, uint32_t row,
		       uint32_t col, uint32_t width)
{
	uint8_t pat[BLOCK_BYTES];
	size_t at = SIZE_MAX;

	put32(pat, row);
	put32(pat + 4, col);
	put32(pat + 8, width);
	for (size_t i = 0; i + BLOCK_BYTES <= n; i++)
		if (!memcmp(buf + i, pat, BLOCK_BYTES)) {
			assert_int_equal(at, SIZE_MAX);
			at = i;
		}
	assert_int_not_equal(at, SIZE_MAX);
	return at;
}

/* ------------------------------------------------------------------------ */
/* Random operations (seeded by fuzz_rng.h)                                 */
/* ------------------------------------------------------------------------ */

/* What one generated operation points into. */
struct gen {
	uint64_t slice;
	uint32_t last_job;
	mm_job_spec_t spec;
	const char *argv[3], *env[2], *files[1];
	int32_t status[16];
	mm_sched_conf_t sched;
};

static const char *pick(const char *const *v, size_t n)
{
	return v[rnd() % n];
}
#define PICK(arr) pick(arr, sizeof(arr) / sizeof(arr[0]))

static const char *const names[] = {
	"",
	"solver",
	"a job name of exactly sixty-three bytes, which the view keeps .",
	"a job name longer than the sixty-four bytes of the view: it is cut",
};
static const char *const lists[] = { NULL, "", "0-1,3", "5", "0,7", "1,3,5",
				     "6", "0" };
static const char *const words[] = { "/bin/app", "-v", "", "--n=4",
				     "OMP_NUM_THREADS=2", "/data/in" };

static void gen_spec(struct gen *g)
{
	mm_job_spec_t *sp = &g->spec;

	memset(sp, 0, sizeof(*sp));
	sp->name = PICK(names);
	sp->uid = 1000 + (uint32_t)(rnd() % 3);
	sp->gid = 100;
	sp->ranks = 1 + (uint32_t)(rnd() % 12);
	sp->nodelist = PICK(lists);
	g->argv[0] = "/bin/app";
	sp->argc = 1 + (uint32_t)(rnd() % 3);
	for (uint32_t i = 1; i < sp->argc; i++)
		g->argv[i] = PICK(words);
	sp->argv = g->argv;
	sp->envc = (uint32_t)(rnd() % 3);
	for (uint32_t i = 0; i < sp->envc; i++)
		g->env[i] = PICK(words);
	sp->env = sp->envc ? g->env : NULL;
	sp->nfiles = (uint32_t)(rnd() % 2);
	g->files[0] = "/data/in";
	sp->files = sp->nfiles ? g->files : NULL;
	sp->cwd = rnd() % 4 ? "/home/u" : NULL;
	sp->batch = (int)(rnd() % 2);
	sp->out_path = sp->batch ? "out.%j.%r" : NULL;
	sp->err_path = rnd() % 3 ? NULL : "err.%j";
	sp->time_limit_ms = rnd() % 3 ? 0 : 100 * (1 + rnd() % 6);
}

/* Scheduler settings: mostly valid (gang with up to 3 rows), now and
 * then not (refused, and fewer rows than are busy is refused too). */
static void gen_sched(struct gen *g)
{
	mm_sched_conf_t *c = &g->sched;

	c->policy = (mm_policy_t)(rnd() % 10 ? 1 + rnd() % 3 : rnd() % 5);
	c->mpl = c->policy == MM_POLICY_GANG ? 1 + (uint32_t)(rnd() % 3) : 1;
	if (rnd() % 10 == 0)
		c->mpl = (uint32_t)(rnd() % 18);
	c->quantum_slices = 1 + (uint32_t)(rnd() % 4);
	c->placement = (mm_placement_t)(rnd() % 10 ? 1 + rnd() % 2 :
					rnd() % 4);
}

/* Mostly a job that holds cpus (where things happen), else a recent one,
 * now and then one that does not exist. */
static uint32_t gen_job(const struct gen *g, const mm_state_t *s)
{
	uint32_t lo = g->last_job > 16 ? g->last_job - 15 : 1;
	uint32_t live[16], n = 0;
	mm_job_t j;

	for (uint32_t id = lo; mm_job_next(s, id, &j) == 0; id = j.id + 1) {
		if (j.state == MM_JOB_STAGING || j.state == MM_JOB_RUNNING)
			live[n++] = j.id;
	}
	if (n && rnd() % 4)
		return live[rnd() % n];
	if (rnd() % 10 == 0)
		return g->last_job + 1;
	return g->last_job > 0 ? lo + (uint32_t)(rnd() % (g->last_job -
							 lo + 1)) : 1;
}

static mm_op_t gen_op(struct gen *g, const mm_state_t *s)
{
	mm_op_t op = { 0 };
	uint64_t k = rnd() % 100;
	mm_job_t j;

	if (k < 20) {
		gen_spec(g);
		op.code = MM_OP_SUBMIT;
		op.spec = &g->spec;
	} else if (k < 45) {
		g->slice += rnd() % 3; /* sometimes the same slice again */
		op.code = MM_OP_TICK;
		op.slice = g->slice;
		op.now_ms = g->slice * 100 + rnd() % 150; /* may step back */
	} else if (k < 60) {
		op.code = MM_OP_JOB_STAGED;
		op.job = gen_job(g, s);
	} else if (k < 75) {
		op.code = MM_OP_JOB_EXITED;
		op.job = gen_job(g, s);
		op.nstatus = mm_job_get(s, op.job, &j) == 0 && rnd() % 8 ?
				     j.ranks : 1 + (uint32_t)(rnd() % 16);
		for (uint32_t i = 0; i < op.nstatus; i++) {
			uint64_t w = rnd() % 10;

			g->status[i] = w < 7 ? 0 :
				       w < 9 ? W_EXITCODE(1 + (int)w, 0) :
					       W_EXITCODE(0, 9);
		}
		op.status = g->status;
	} else if (k < 81) {
		op.code = MM_OP_JOB_FAILED;
		op.job = gen_job(g, s);
		op.reason = rnd() % 2 ? "launch failed" : NULL;
	} else if (k < 85) {
		op.code = MM_OP_CANCEL;
		op.job = gen_job(g, s);
		op.uid = rnd() % 2 ? 0 : 1000 + (uint32_t)(rnd() % 3);
	} else if (k < 88) {
		gen_sched(g);
		op.code = MM_OP_SCHED;
		op.sched = &g->sched;
	} else {
		op.code = rnd() % 3 ? MM_OP_NODE_UP : MM_OP_NODE_DOWN;
		op.node = (uint32_t)(rnd() % 9);
		op.reason = "left the view";
	}
	return op;
}

/* Apply op to both, which must agree on everything. */
static void apply_both(mm_state_t *a, mm_state_t *b, const mm_op_t *op,
		       struct gen *g)
{
	mm_result_t ra, rb;

	assert_int_equal(mm_apply(a, op, &ra), mm_apply(b, op, &rb));
	assert_int_equal(ra.rc, rb.rc);
	assert_int_equal(ra.job, rb.job);
	assert_string_equal(ra.err, rb.err);
	assert_int_equal(mm_digest(a), mm_digest(b));
	if (ra.job)
		g->last_job = ra.job;
}

/* A state after n random operations from the current seed. */
static mm_state_t *random_state(int n, struct gen *g)
{
	mm_state_t *s = mkmachine(1);

	for (int i = 0; i < n; i++) {
		mm_op_t op = gen_op(g, s);
		mm_result_t res;

		mm_apply(s, &op, &res);
		if (res.job)
			g->last_job = res.job;
	}
	return s;
}

/* Gang, two rows, quantum 3, MOLAR, and a node with a service history:
 * job 1 (19 ranks) holds row 0 [0, 32); job 2 (8 ranks on n5) row 1
 * [16, 24); job 3 (12 ranks: more than the 10 PEs of row 1's [0, 16))
 * waits for a row. */
static mm_state_t *gang_state(void)
{
	const mm_sched_conf_t c = { MM_POLICY_GANG, 2, 3, MM_PLACE_MOLAR };
	mm_state_t *s = mkmachine(0);

	assert_int_equal(mm_state_set_sched(s, &c), 0);
	for (uint32_t i = 0; i < NNODES; i++)
		must(s, (mm_op_t){ .code = MM_OP_NODE_UP,
				   .node = node_ids[i] });
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 1, .now_ms = 500 });
	must(s, (mm_op_t){ .code = MM_OP_NODE_DOWN, .node = 3,
			   .reason = "reboot" });
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 2, .now_ms = 700 });
	must(s, (mm_op_t){ .code = MM_OP_NODE_UP, .node = 3 });
	submit(s, 19, NULL);
	submit(s, 8, "5");
	submit(s, 12, NULL);
	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 3, .now_ms = 900 });
	return s;
}

/* ------------------------------------------------------------------------ */

static void test_empty_state_round_trips(void **state)
{
	mm_state_t *fresh = mkmachine(0), *up = mkmachine(1), *c;
	size_t n;
	uint8_t *buf = encode(fresh, &n);

	(void)state;
	assert_memory_equal(buf, "SMMS", 4);
	assert_int_equal(buf[OFF_VERSION] | buf[OFF_VERSION + 1] << 8, 10);
	assert_int_equal(buf[OFF_NWORLD], 8);
	/* a new state's settings: fcfs, mpl 1, quantum 1, buddy */
	assert_int_equal(buf[OFF_POLICY], MM_POLICY_FCFS);
	assert_int_equal(get32(buf + OFF_MPL), 1);
	assert_int_equal(get32(buf + OFF_QUANTUM), 1);
	assert_int_equal(buf[OFF_PLACEMENT], MM_PLACE_BUDDY);
	assert_int_equal(buf[OFF_NNODES], NNODES);
	assert_int_equal(buf[OFF_NODE(0)], 0); /* ascending world id */
	free(buf);
	c = round_trip(fresh);
	mm_state_destroy(c);
	c = round_trip(up);
	mm_state_destroy(c);
	assert_int_not_equal(mm_digest(fresh), mm_digest(up));
	mm_state_destroy(fresh);
	mm_state_destroy(up);
}

static void test_digest_is_the_hash_of_the_snapshot(void **state)
{
	struct gen g = { 0 };
	mm_state_t *s;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	uint8_t *buf;
	size_t n;

	(void)state;
	fuzz_seed_begin(0xd16e57);
	s = random_state(300, &g);
	buf = encode(s, &n);
	for (size_t i = 0; i < n; i++) {
		h ^= buf[i];
		h *= UINT64_C(0x100000001b3);
	}
	assert_int_equal(mm_digest(s), h);
	assert_int_equal(mm_digest(NULL), UINT64_C(0xcbf29ce484222325));
	free(buf);
	mm_state_destroy(s);
}

/* Replica b starts from a snapshot of a and is itself snapshotted and
 * replaced by its copy at random points; every operation is applied to
 * both, which must agree on every result and digest all along. */
static void test_decoded_state_continues_like_the_original(void **state)
{
	uint32_t seen[MM_JOB_CANCELLED + 1] = { 0 };
	int snapshots = 0, shared = 0;

	(void)state;
	fuzz_seed_begin(0x5a4e5407);
	for (int run = 0; run < 40; run++) {
		struct gen g = { 0 };
		mm_state_t *a = random_state((int)(rnd() % 200), &g);
		mm_state_t *b = round_trip(a);
		int nops = 100 + (int)(rnd() % 400);
		mm_job_t j;

		for (int i = 0; i < nops; i++) {
			mm_op_t op = gen_op(&g, a);

			apply_both(a, b, &op, &g);
			if (rnd() % 40 == 0) {
				mm_state_t *c = round_trip(b);

				mm_state_destroy(b);
				b = c;
				snapshots++;
				shared += mm_matrix_shared(b);
				for (uint32_t id = 1;
				     mm_job_next(b, id, &j) == 0; id = j.id + 1)
					seen[j.state]++;
			}
		}
		same_state(a, b);
		mm_state_destroy(a);
		mm_state_destroy(b);
	}
	/* snapshots were taken with jobs in every state, some of them
	 * with jobs in more than one row */
	assert_true(snapshots > 100);
	assert_true(shared > 0);
	for (int k = MM_JOB_PENDING; k <= MM_JOB_CANCELLED; k++)
		assert_true(seen[k] > 0);
}

static void test_every_job_state_round_trips(void **state)
{
	static const mm_job_state_t want[] = {
		MM_JOB_STAGING, MM_JOB_COMPLETED, MM_JOB_FAILED,
		MM_JOB_CANCELLED, MM_JOB_FAILED, MM_JOB_FAILED,
		MM_JOB_RUNNING, MM_JOB_PENDING, MM_JOB_PENDING,
	};
	const int32_t ok[4] = { 0 };
	mm_state_t *s = every_state(), *c = round_trip(s);
	struct gen g = { .slice = 4, .last_job = 9 };
	mm_job_t j;

	(void)state;
	for (uint32_t id = 1; id <= 9; id++) {
		assert_int_equal(mm_job_get(c, id, &j), 0);
		assert_int_equal(j.state, want[id - 1]);
	}
	assert_non_null(strstr(j.reason, "queued behind job 8"));
	/* both go on alike: job 7 ends, 1 passes its time limit, 8 starts
	 * and fills node 0, which 9 is waiting for */
	apply_both(s, c, &(mm_op_t){ .code = MM_OP_JOB_EXITED, .job = 7,
				     .nstatus = 4, .status = ok }, &g);
	apply_both(s, c, &(mm_op_t){ .code = MM_OP_TICK, .slice = 5,
				     .now_ms = 1000 }, &g);
	assert_int_equal(mm_job_get(c, 1, &j), 0);
	assert_int_equal(j.state, MM_JOB_FAILED);
	assert_int_equal(mm_job_get(c, 8, &j), 0);
	assert_int_equal(j.state, MM_JOB_STAGING);
	assert_int_equal(mm_job_get(c, 9, &j), 0);
	assert_string_equal(j.reason, "head of queue: waiting for a free block "
			    "of width 1 (1 rank)");
	same_state(s, c);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* The checkpoint catalog is state: what CKPT_REQUEST, COMMIT and ABORT
 * leave round-trips, and both copies go on alike; what they refuse
 * changes nothing. */
static void test_checkpoint_catalog_round_trips(void **state)
{
	mm_state_t *s = every_state(), *c;
	struct gen g = { .slice = 4, .last_job = 9 };
	mm_result_t res;
	mm_job_t j;
	mm_op_t req = { .code = MM_OP_CKPT_REQUEST, .job = 7 };
	mm_op_t commit = { .code = MM_OP_CKPT_COMMIT, .job = 7, .epoch = 1,
			   .ckpt_bytes = 4096, .ckpt_stop_us = 250,
			   .ckpt_keep = 2 };
	mm_op_t abort_ = { .code = MM_OP_CKPT_ABORT, .job = 7, .epoch = 2,
			   .reason = "disk full" };

	(void)state;
	assert_int_equal(mm_apply(s, &req, &res), 0);
	assert_int_equal(res.epoch, 1);
	assert_int_equal(mm_apply(s, &req, &res), 0); /* the same one */
	assert_int_equal(res.epoch, 1);
	assert_int_equal(mm_apply(s, &commit, &res), 0);
	assert_int_equal(mm_apply(s, &commit, &res), -ESTALE); /* repeated */
	assert_int_equal(mm_apply(s, &req, &res), 0);
	assert_int_equal(res.epoch, 2);
	assert_int_equal(mm_apply(s, &abort_, &res), 0);
	for (uint32_t e = 3; e <= 5; e += 2) { /* 3 is committed, 4 aborted */
		assert_int_equal(mm_apply(s, &req, &res), 0);
		assert_int_equal(res.epoch, e - (e == 5));
		commit.epoch = abort_.epoch = res.epoch;
		assert_int_equal(mm_apply(s, e == 3 ? &commit : &abort_, &res),
				 0);
	}
	assert_int_equal(mm_apply(s, &req, &res), 0);
	assert_int_equal(res.epoch, 5);
	commit.epoch = 5;
	assert_int_equal(mm_apply(s, &commit, &res), 0); /* 1 goes: keep 2 */
	assert_int_equal(mm_apply(s, &req, &res), 0);
	assert_int_equal(res.epoch, 6); /* pending across the snapshot */
	/* refused: not running yet, ended, another user's, a bad keep */
	req.job = 8;
	assert_int_equal(mm_apply(s, &req, &res), -EAGAIN);
	req.job = 2;
	assert_int_equal(mm_apply(s, &req, &res), -EALREADY);
	assert_non_null(strstr(res.err, "already ended"));
	req.job = 7;
	req.uid = 4242;
	assert_int_equal(mm_apply(s, &req, &res), -EPERM);
	commit.epoch = 6;
	commit.ckpt_keep = 0;
	assert_int_equal(mm_apply(s, &commit, &res), -EINVAL);

	c = round_trip(s);
	assert_int_equal(mm_job_get(c, 7, &j), 0);
	assert_int_equal(j.nckpts, 2);
	assert_int_equal(j.ckpts[0].epoch, 3);
	assert_int_equal(j.ckpts[1].epoch, 5);
	assert_int_equal(j.ckpts[1].bytes, 4096);
	assert_int_equal(j.ckpts[1].stop_us, 250);
	assert_int_equal(j.ckpt_want, 6);
	assert_int_equal(j.ckpt_last, 6);
	assert_string_equal(j.ckpt_error, "");
	same_state(s, c);
	/* both go on alike: 6 aborts, then the job ends */
	abort_.epoch = 6;
	apply_both(s, c, &abort_, &g);
	assert_int_equal(mm_job_get(c, 7, &j), 0);
	assert_string_equal(j.ckpt_error, "epoch 6: disk full");
	same_state(s, c);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* Job 7 of every_state() with epoch 1 committed at levels. */
static void test_job_inputs_round_trip(void **state)
{
	static const char *const argv[] = { "/bin/prog" };
	static const char *const files[] = { "/tmp/data" };
	const mm_input_t in[2] = {
		{ .sha256 = { 9, 8, 7, [31] = 1 }, .size = 4096, .mode = 0755 },
		{ .sha256 = { [5] = 0x42 }, .size = 3, .mode = 0640 },
	};
	mm_job_spec_t sp = { .name = "in", .uid = 1000, .gid = 100,
			     .ranks = 1, .argc = 1, .argv = argv, .cwd = "/",
			     .nfiles = 1, .files = files, .ninputs = 2,
			     .inputs = in, .mpi = MM_MPI_BCS };
	mm_state_t *s = mkmachine(1), *c;
	mm_op_t op = { .code = MM_OP_SUBMIT_INPUTS, .spec = &sp };
	mm_result_t res;
	mm_job_t j;

	(void)state;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	op.code = MM_OP_SUBMIT_LIMITS; /* inputs dropped: not what it carries */
	assert_int_equal(mm_apply(s, &op, &res), 0);
	op.code = MM_OP_SUBMIT_INPUTS;
	sp.ninputs = 1; /* not one per input: refused */
	assert_int_equal(mm_apply(s, &op, &res), -EINVAL);
	assert_non_null(strstr(res.err, "inputs"));
	/* an interval travels in SUBMIT_CKPT only */
	sp.ninputs = 2;
	sp.ckpt_every_s = 90;
	op.code = MM_OP_SUBMIT_CKPT;
	sp.mpi = MM_MPI_NONE;
	sp.ckpt_every_s = MM_CKPT_EVERY_MAX + 1;
	assert_int_equal(mm_apply(s, &op, &res), -EINVAL);
	sp.ckpt_every_s = 90;
	sp.requeue = 2; /* a flag: 0 or 1 */
	assert_int_equal(mm_apply(s, &op, &res), -EINVAL);
	sp.requeue = 1;
	assert_int_equal(mm_apply(s, &op, &res), 0); /* job 3 */
	op.code = MM_OP_SUBMIT_INPUTS;
	assert_int_equal(mm_apply(s, &op, &res), 0); /* job 4: dropped */
	sp.requeue = 0;
	/* a shape travels in SUBMIT_SHAPE only (job 5; job 6 drops it) */
	sp.cpus_per_task = 1;
	sp.tasks_per_node = 1;
	sp.node_count = 1;
	sp.cpu_bind = MM_BIND_NONE;
	op.code = MM_OP_SUBMIT_SHAPE;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	op.code = MM_OP_SUBMIT_CKPT;
	assert_int_equal(mm_apply(s, &op, &res), 0);
	c = round_trip(s);
	assert_int_equal(mm_job_get(c, 5, &j), 0);
	assert_int_equal(j.tasks_per_node, 1);
	assert_int_equal(j.node_count, 1);
	assert_int_equal(j.cpu_bind, MM_BIND_NONE);
	assert_int_equal(mm_job_get(c, 6, &j), 0);
	assert_int_equal(j.cpus_per_task, 1);
	assert_int_equal(j.tasks_per_node, 0);
	assert_int_equal(j.node_count, 0);
	assert_int_equal(j.cpu_bind, MM_BIND_AUTO);
	assert_int_equal(mm_job_get(c, 3, &j), 0);
	assert_int_equal(j.ckpt_every_s, 90);
	assert_int_equal(j.requeue, 1);
	assert_int_equal(mm_job_get(c, 4, &j), 0);
	assert_int_equal(j.ckpt_every_s, 0);
	assert_int_equal(j.requeue, 0);
	assert_int_equal(mm_job_get(c, 1, &j), 0);
	assert_int_equal(j.ninputs, 2);
	assert_int_equal(j.mpi, MM_MPI_BCS);
	same_input(&j.inputs[0], &in[0]);
	same_input(&j.inputs[1], &in[1]);
	assert_int_equal(mm_job_get(c, 2, &j), 0);
	assert_int_equal(j.ninputs, 0);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* A job placed only on node 0 has rank_node all 0, like one never placed:
 * the snapshot tells them apart. */
static void test_job_placed_on_node_0_keeps_its_nodes(void **state)
{
	static const char *const argv[] = { "/bin/app" };
	mm_job_spec_t sp = { .name = "z", .ranks = 2, .nodelist = "0",
			     .argc = 1, .argv = argv };
	mm_op_t submit = { .code = MM_OP_SUBMIT, .spec = &sp };
	mm_op_t tick = { .code = MM_OP_TICK, .slice = 1, .now_ms = 10 };
	mm_state_t *s = mkmachine(1), *c;
	mm_job_t j;

	(void)state;
	assert_int_equal(mm_apply(s, &submit, NULL), 0);
	assert_int_equal(mm_apply(s, &submit, NULL), 0);
	assert_int_equal(mm_apply(s, &tick, NULL), 0);
	c = round_trip(s);
	assert_int_equal(mm_job_get(c, 1, &j), 0);
	assert_int_equal(j.state, MM_JOB_STAGING);
	assert_true(sp_nodeset_has(j.nodes, 0));
	assert_int_equal(mm_job_get(c, 2, &j), 0);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_int_equal(sp_nodeset_count(j.nodes), 0);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* Jobs in two rows under gang: the same bytes, the same matrix, and both
 * go on alike (rows taking turns, the waiting job taking a freed row). */
static void test_gang_state_with_two_rows_round_trips(void **state)
{
	mm_state_t *s = gang_state(), *c;
	struct gen g = { .slice = 3, .last_job = 3 };
	mm_node_t n;
	mm_job_t j;

	(void)state;
	assert_int_equal(mm_job_get(s, 1, &j), 0);
	assert_int_equal(j.row, 0);
	assert_int_equal(j.width, 32);
	assert_int_equal(mm_job_get(s, 2, &j), 0);
	assert_int_equal(j.row, 1);
	assert_int_equal(j.col, 16);
	assert_int_equal(j.width, 8);
	assert_int_equal(mm_job_get(s, 3, &j), 0);
	assert_int_equal(j.state, MM_JOB_PENDING);
	assert_true(mm_matrix_shared(s));
	c = round_trip(s);
	assert_int_equal(mm_matrix_digest(c), mm_matrix_digest(s));
	assert_int_equal(mm_matrix_cell(c, 1, 16), 2);
	assert_int_equal(mm_matrix_cell(c, 1, 15), 0);
	assert_int_equal(mm_node_by_id(c, 3, &n), 0);
	assert_int_equal(n.failures, 1);
	assert_int_equal(n.up_ms, 500);
	assert_int_equal(n.up_since_ms, 700);
	assert_int_equal(n.col, 8);
	for (uint64_t slice = 0; slice < 12; slice++)
		assert_int_equal(mm_active_row(c, slice), (slice / 3) % 2);
	/* job 1 ends: 3 takes row 0 in both */
	apply_both(s, c, &(mm_op_t){ .code = MM_OP_CANCEL, .job = 1 }, &g);
	apply_both(s, c, &(mm_op_t){ .code = MM_OP_TICK, .slice = 4,
				     .now_ms = 1000 }, &g);
	assert_int_equal(mm_job_get(c, 3, &j), 0);
	assert_int_equal(j.state, MM_JOB_STAGING);
	assert_int_equal(j.row, 0);
	same_state(s, c);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* Version 1 (before the matrix) loads while no job holds PEs, as the
 * default settings; with a job holding PEs there is no block to give it
 * and it is refused, saying so. */
static void test_version_1_loads_only_without_jobs_holding_pes(void **state)
{
	mm_state_t *s = mkmachine(1), *c;
	uint8_t *v2, *v1, *back;
	size_t n, n1, m;
	const char *err;
	char want[64];

	(void)state;
	submit(s, 2, NULL); /* PENDING */
	v2 = encode(s, &n);
	v1 = to_v1(v2, n, &n1);
	assert_int_equal(n1, n - 10 - 16 * NNODES - 8 - BLOCK_BYTES - JOB_TAIL -
			 CREDS_EMPTY);
	c = decode(v1, n1);
	/* it is the same state: written as v2, the same bytes */
	same_state(s, c);
	back = encode(c, &m);
	assert_int_equal(m, n);
	assert_memory_equal(back, v2, n);
	free(back);
	free(v1);
	free(v2);
	mm_state_destroy(c);

	must(s, (mm_op_t){ .code = MM_OP_TICK, .slice = 1, .now_ms = 10 });
	v2 = encode(s, &n);
	v1 = to_v1(v2, n, &n1);
	err = refused(v1, n1);
	assert_non_null(strstr(err, "in job 1: a version 1 snapshot with a "
			       "STAGING job: it has no matrix block; let the "
			       "jobs end before upgrading"));
	/* where its block would be: after its statuses, the end */
	snprintf(want, sizeof(want), "at offset %zu,", n1);
	assert_non_null(strstr(err, want));
	free(v1);
	free(v2);

	/* ended: loads again */
	must(s, (mm_op_t){ .code = MM_OP_JOB_EXITED, .job = 1, .nstatus = 2,
			   .status = (const int32_t[]){ 0, 0 } });
	v2 = encode(s, &n);
	v1 = to_v1(v2, n, &n1);
	c = decode(v1, n1);
	same_state(s, c);
	free(v1);
	free(v2);
	mm_state_destroy(c);
	mm_state_destroy(s);
}

/* A block no scheduler could have made, refused at the block (or, for
 * what follows from all the jobs, at the end, "in the matrix"). */
static void test_impossible_blocks_are_refused_where_they_are(void **state)
{
	mm_state_t *s = gang_state();
	uint8_t *buf, *t;
	size_t n, at, pend;
	char want[96];

	(void)state;
	buf = encode(s, &n);
	t = malloc(n);
	assert_non_null(t);
	at = block_at(buf, n, 1, 16, 8); /* job 2's */
	pend = n - CREDS_EMPTY - BLOCK_BYTES - JOB_TAIL; /* job 3's: PENDING */
	assert_int_equal(get32(buf + pend + 8), 0);

	memcpy(t, buf, n);
	put32(t + at, 0); /* onto job 1's row */
	snprintf(want, sizeof(want), "at offset %zu, in job 2: block row 0 "
		 "[16, +8) overlaps job 1's", at);
	assert_non_null(strstr(refused(t, n), want));

	memcpy(t, buf, n);
	put32(t + at + 4, 20); /* not a multiple of its width */
	snprintf(want, sizeof(want), "at offset %zu, in job 2: block row 1 "
		 "[20, +8) is not a buddy block of a 2 x 25 matrix", at);
	assert_non_null(strstr(refused(t, n), want));

	memcpy(t, buf, n);
	put32(t + at, 2); /* a row beyond the mpl */
	snprintf(want, sizeof(want), "at offset %zu, in job 2: block row 2 "
		 "[16, +8) is not", at);
	assert_non_null(strstr(refused(t, n), want));

	memcpy(t, buf, n);
	put32(t + at + 8, 6); /* not a power of two */
	assert_non_null(strstr(refused(t, n), "block row 1 [16, +6) is not"));

	memcpy(t, buf, n);
	put32(t + at + 8, 64); /* wider than the matrix */
	assert_non_null(strstr(refused(t, n), "block row 1 [16, +64) is not"));

	memcpy(t, buf, n);
	put32(t + at + 8, 0); /* a STAGING job without a block */
	assert_non_null(strstr(refused(t, n), "block row 1 [16, +0) is not"));

	memcpy(t, buf, n);
	put32(t + pend + 8, 1); /* a PENDING job with one */
	snprintf(want, sizeof(want), "at offset %zu, in job 3: a PENDING job "
		 "has a block", pend);
	assert_non_null(strstr(refused(t, n), want));

	/* a whole, free buddy block, but not where job 2's ranks are */
	memcpy(t, buf, n);
	put32(t + at + 4, 0);
	assert_non_null(strstr(refused(t, n), "in the matrix: job 2: rank 0 "
				"on node 5 has no column of its own in the "
				"job's block"));

	/* one row fewer than job 2 needs */
	memcpy(t, buf, n);
	put32(t + OFF_MPL, 1);
	snprintf(want, sizeof(want), "at offset %zu, in job 2: block row 1 "
		 "[16, +8) is not a buddy block of a 1 x 25 matrix", at);
	assert_non_null(strstr(refused(t, n), want));
	free(t);
	free(buf);
	mm_state_destroy(s);
}

/* Settings mm_sched_check() refuses, refused at their offset. */
static void test_invalid_settings_are_refused(void **state)
{
	static const struct {
		size_t off;
		uint32_t v;
		int wide;
		const char *says;
	} bad[] = {
		{ OFF_POLICY, 0, 0, "scheduling policy 0 does not exist" },
		{ OFF_POLICY, 4, 0, "scheduling policy 4 does not exist" },
		{ OFF_POLICY, 0xff, 0, "scheduling policy 255 does not" },
		{ OFF_POLICY, MM_POLICY_FCFS, 0, "mpl 2 needs the gang" },
		{ OFF_MPL, 0, 1, "mpl 0 is out of range" },
		{ OFF_MPL, 17, 1, "mpl 17 is out of range" },
		{ OFF_QUANTUM, 0, 1, "quantum of 0 slices is out of range" },
		{ OFF_QUANTUM, MM_QUANTUM_MAX + 1, 1, "quantum of 1000001" },
		{ OFF_PLACEMENT, 0, 0, "placement 0 does not exist" },
		{ OFF_PLACEMENT, 3, 0, "placement 3 does not exist" },
	};
	mm_state_t *s = gang_state();
	uint8_t *buf, *t;
	size_t n;

	(void)state;
	buf = encode(s, &n);
	t = malloc(n);
	assert_non_null(t);
	assert_int_equal(buf[OFF_POLICY], MM_POLICY_GANG);
	assert_int_equal(get32(buf + OFF_MPL), 2);
	assert_int_equal(get32(buf + OFF_QUANTUM), 3);
	assert_int_equal(buf[OFF_PLACEMENT], MM_PLACE_MOLAR);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		const char *err;

		memcpy(t, buf, n);
		if (bad[k].wide)
			put32(t + bad[k].off, bad[k].v);
		else
			t[bad[k].off] = (uint8_t)bad[k].v;
		err = refused(t, n);
		assert_non_null(strstr(err, "at offset 26, in the header: "
				       "scheduler settings: "));
		if (!strstr(err, bad[k].says))
			fail_msg("\"%s\" does not say \"%s\"", err,
				 bad[k].says);
	}
	free(t);
	free(buf);
	mm_state_destroy(s);
}

static void test_foreign_version_is_refused(void **state)
{
	mm_state_t *s = mkmachine(1);
	size_t n;
	uint8_t *buf = encode(s, &n);
	const char *err;

	(void)state;
	buf[OFF_VERSION] = 11;
	err = refused(buf, n);
	assert_non_null(strstr(err, "version 11"));
	assert_non_null(strstr(err, "offset 4"));
	assert_non_null(strstr(err, "reads version 10 and older"));
	buf[OFF_VERSION] = 0;
	assert_non_null(strstr(refused(buf, n), "version 0"));
	buf[OFF_VERSION] = 3;
	buf[OFF_VERSION + 1] = 1; /* 259 */
	assert_non_null(strstr(refused(buf, n), "version 259"));
	buf[OFF_VERSION + 1] = 0;
	buf[0] = 'X';
	err = refused(buf, n);
	assert_non_null(strstr(err, "not a Storm manager snapshot"));
	assert_non_null(strstr(err, "offset 0"));
	free(buf);
	mm_state_destroy(s);
}

static void test_inconsistent_fields_are_refused_where_they_are(void **state)
{
	mm_state_t *s = every_state();
	uint8_t *buf, *t;
	size_t n;

	(void)state;
	buf = encode(s, &n);
	t = malloc(n + 1);
	assert_non_null(t);

	memcpy(t, buf, n);
	put32(t + OFF_NWORLD, 0);
	assert_non_null(strstr(refused(t, n), "at offset 6, in the header: "
				"world size 0"));
	memcpy(t, buf, n);
	put32(t + OFF_NNODES, 9);
	assert_non_null(strstr(refused(t, n), "offset 36, in the header: 9 "
				"compute nodes"));
	memcpy(t, buf, n);
	put32(t + OFF_NODE(0), 8); /* beyond the world */
	assert_non_null(strstr(refused(t, n), "offset 40, in node 0: world "
				"id 8"));
	memcpy(t, buf, n);
	put32(t + OFF_NODE(0), 1); /* equal to the next one's */
	assert_non_null(strstr(refused(t, n), "offset 79, in node 1: world "
				"id 1 after 1"));
	memcpy(t, buf, n);
	t[OFF_NODE(1) + OFF_STATE] = MM_NODE_DOWN; /* under job 1 */
	assert_non_null(strstr(refused(t, n), "in job 1: rank 0 of a STAGING "
				"job is on node 1, which is DOWN"));
	memcpy(t, buf, n);
	/* job 1's 3 ranks on node 1's 4 cpus, block [4, 8): with 1 cpu the
	 * node has one column, 2, and the block is node 3's */
	put32(t + OFF_NODE(1) + OFF_CPUS, 1);
	assert_non_null(strstr(refused(t, n), "in the matrix: job 1: rank 0 "
				"on node 1 has no column of its own"));
	memcpy(t, buf, n);
	t[n] = 0; /* one byte too many */
	assert_non_null(strstr(refused(t, n + 1), "1 bytes after the last"));
	free(t);
	free(buf);
	mm_state_destroy(s);
}

static void test_lying_counts_are_refused_before_allocating(void **state)
{
	mm_state_t *s = mkmachine(1);
	size_t n;
	uint8_t *buf = encode(s, &n);
	uint8_t *t = exactly(buf, n);

	(void)state;
	/* the job count is the last field of a state without jobs, but
	 * for the credential cache's and the drained nodes' */
	put32(t + n - 12, UINT32_MAX);
	assert_non_null(strstr(refused(t, n), "jobs cannot fit"));
	put32(t + n - 12, 1);
	assert_non_null(strstr(refused(t, n), "in the job table: 1 jobs"));
	put32(t + n - 12, 0);
	put32(t + n - 8, UINT32_MAX);
	assert_non_null(strstr(refused(t, n), "in the credential cache: "
				"4294967295 credentials"));
	put32(t + n - 8, 0);
	put32(t + n - 4, UINT32_MAX);
	assert_non_null(strstr(refused(t, n), "in the drained nodes: "
				"4294967295 drained nodes"));
	free(t);
	free(buf);
	mm_state_destroy(s);
}

static void test_decode_and_encode_check_their_arguments(void **state)
{
	mm_state_t *s = mkmachine(0), *out = NULL;
	uint8_t *buf = NULL;
	size_t n = 0;
	char err[8];

	(void)state;
	assert_int_equal(mm_state_encode(NULL, &buf, &n), -EINVAL);
	assert_int_equal(mm_state_encode(s, NULL, &n), -EINVAL);
	assert_int_equal(mm_state_encode(s, &buf, NULL), -EINVAL);
	assert_null(buf);
	assert_int_equal(mm_state_decode(NULL, 3, &out, NULL, 0), -EINVAL);
	assert_int_equal(mm_state_decode((const uint8_t *)"", 0, NULL, NULL,
					 0), -EINVAL);
	/* no room for the message, or none asked: still refused */
	assert_int_equal(mm_state_decode(NULL, 0, &out, NULL, 0),
			 -STORM_EPROTO);
	assert_int_equal(mm_state_decode((const uint8_t *)"SMM", 3, &out, err,
					 sizeof(err)), -STORM_EPROTO);
	assert_int_equal(strlen(err), sizeof(err) - 1); /* cut, terminated */
	assert_null(out);
	mm_state_destroy(s);
}

/* The most matrix columns a decoded state is driven on.  A node's cpus
 * may be mutated up to the 2^24 PEs mm_state_create() allows, and
 * placing a job looks at every column of every block width: seconds per
 * TICK on such a machine (and far more under ASan).  Those states are
 * decoded, re-encoded and checked all the same. */
#define DRIVE_COLS_MAX 4096

/* Decode t, which must not crash; if accepted it must encode back to
 * exactly t (an older version's input: to the v5 bytes of the same
 * state),
 * decode again, and run. */
static int decode_checked(const uint8_t *t, size_t len)
{
	char err[256];
	mm_state_t *s = NULL, *again;
	uint8_t *back;
	size_t m;
	int rc = mm_state_decode(t, len, &s, err, sizeof(err));

	if (rc) {
		assert_int_equal(rc, -STORM_EPROTO);
		assert_true(err[0] != '\0');
		assert_null(s);
		return 0;
	}
	back = encode(s, &m);
	if (t[OFF_VERSION] < 7 && t[OFF_VERSION + 1] == 0) {
		uint8_t *back2;
		size_t m2;

		again = decode(back, m);
		back2 = encode(again, &m2);
		assert_int_equal(m2, m);
		assert_memory_equal(back2, back, m);
		free(back2);
	} else {
		assert_int_equal(m, len);
		assert_memory_equal(back, t, len);
		again = decode(back, m);
	}
	assert_int_equal(mm_digest(again), mm_digest(s));
	if (mm_matrix_check(s, err, sizeof(err)))
		fail_msg("accepted an inconsistent matrix: %s", err);
	/* what the state machine asserts must hold in it: drive it (each
	 * node down, a tick, up, a tick: cpus released, jobs placed) */
	for (uint32_t node = 0; mm_matrix_cols(s) <= DRIVE_COLS_MAX &&
	     node < 8; node++) {
		const mm_op_t ops[] = {
			{ .code = MM_OP_NODE_DOWN, .node = node },
			{ .code = MM_OP_TICK, .slice = mm_slice(s) + 1,
			  .now_ms = UINT64_MAX / 2 },
			{ .code = MM_OP_NODE_UP, .node = node },
			{ .code = MM_OP_TICK, .slice = mm_slice(s) + 2,
			  .now_ms = UINT64_MAX / 2 },
		};

		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			mm_apply(s, &ops[k], NULL);
			if (mm_matrix_check(s, err, sizeof(err)))
				fail_msg("after op %d: %s", ops[k].code, err);
		}
	}
	free(back);
	mm_state_destroy(again);
	mm_state_destroy(s);
	return 1;
}

static void test_decode_refuses_every_truncation(void **state)
{
	mm_state_t *s;
	uint8_t *buf;
	size_t n;

	(void)state;
	s = every_state();
	buf = encode(s, &n);
	mm_state_destroy(s);
	for (size_t len = 0; len < n; len++) {
		uint8_t *t = exactly(buf, len);

		refused(t, len);
		free(t);
	}
	free(buf);
}

static void test_decode_survives_random_mutations(void **state)
{
	mm_state_t *s;
	uint8_t *bases[2];
	size_t ns[2];
	int accepted = 0;

	(void)state;
	fuzz_seed_begin(0xf1195);
	/* one row under fcfs, and two rows under gang */
	s = every_state();
	bases[0] = encode(s, &ns[0]);
	mm_state_destroy(s);
	s = gang_state();
	bases[1] = encode(s, &ns[1]);
	mm_state_destroy(s);
	for (int iter = 0; iter < 20000; iter++) {
		const uint8_t *base = bases[iter % 2];
		size_t n = ns[iter % 2], len = n;
		uint8_t *t = exactly(base, n), *u;
		int nmut = 1 + (int)(rnd() % 3);

		for (int k = 0; k < nmut && len > 0; k++) {
			size_t at = rnd() % len;

			switch (rnd() % 5) {
			case 0:
				t[at] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 1:
				t[at] = (uint8_t)rnd();
				break;
			case 2:
				t[at] = (uint8_t[]){ 0, 1, 2, 0x7f, 0x80,
						     0xff }[rnd() % 6];
				break;
			case 3: /* a length or count that lies */
				if (at + 4 <= len)
					put32(t + at, (uint32_t[]){
						0, 1, 64, 4097, 65537,
						UINT32_MAX }[rnd() % 6]);
				break;
			default: /* cut */
				len = at;
				break;
			}
		}
		u = exactly(t, len);
		accepted += decode_checked(u, len);
		free(u);
		free(t);
	}
	/* some mutations (a uid, a time) still decode: that path ran */
	assert_true(accepted > 0);
	free(bases[0]);
	free(bases[1]);
}

static void test_decode_survives_random_buffers(void **state)
{
	(void)state;
	fuzz_seed_begin(0xb0ffe75);
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = rnd() % 200;
		uint8_t *t = malloc(len ? len : 1);

		assert_non_null(t);
		for (size_t k = 0; k < len; k++)
			t[k] = (uint8_t)rnd();
		if (len >= 40 && iter % 2) { /* a plausible v2 header */
			memcpy(t, "SMMS\2\0", 6);
			put32(t + OFF_NWORLD, 1 + (uint32_t)(rnd() % 16));
			t[OFF_POLICY] = (uint8_t)(1 + rnd() % 3);
			put32(t + OFF_MPL, 1 + (uint32_t)(rnd() % 2));
			put32(t + OFF_QUANTUM, 1 + (uint32_t)(rnd() % 2));
			t[OFF_PLACEMENT] = (uint8_t)(1 + rnd() % 2);
			put32(t + OFF_NNODES, (uint32_t)(rnd() % 3));
		} else if (len >= 30 && iter % 4 == 0) { /* v1 */
			memcpy(t, "SMMS\1\0", 6);
			put32(t + OFF_NWORLD, 1 + (uint32_t)(rnd() % 16));
			put32(t + OFF_POLICY, (uint32_t)(rnd() % 3));
		}
		decode_checked(t, len);
		free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_state_round_trips),
		cmocka_unit_test(test_digest_is_the_hash_of_the_snapshot),
		cmocka_unit_test(
			test_decoded_state_continues_like_the_original),
		cmocka_unit_test(test_every_job_state_round_trips),
		cmocka_unit_test(test_job_inputs_round_trip),
		cmocka_unit_test(test_checkpoint_catalog_round_trips),
		cmocka_unit_test(test_job_placed_on_node_0_keeps_its_nodes),
		cmocka_unit_test(test_gang_state_with_two_rows_round_trips),
		cmocka_unit_test(
			test_version_1_loads_only_without_jobs_holding_pes),
		cmocka_unit_test(
			test_impossible_blocks_are_refused_where_they_are),
		cmocka_unit_test(test_invalid_settings_are_refused),
		cmocka_unit_test(test_foreign_version_is_refused),
		cmocka_unit_test(
			test_inconsistent_fields_are_refused_where_they_are),
		cmocka_unit_test(
			test_lying_counts_are_refused_before_allocating),
		cmocka_unit_test(test_decode_and_encode_check_their_arguments),
		cmocka_unit_test(test_decode_refuses_every_truncation),
		cmocka_unit_test(test_decode_survives_random_mutations),
		cmocka_unit_test(test_decode_survives_random_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
