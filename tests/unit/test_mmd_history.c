/*
 * test_mmd_history.c — storm-mm's job history (manager/mmd/history.c) on
 * real LMDB environments: purged jobs go in with their applied index,
 * history retention removes by id and by age, queries filter and page,
 * and a joiner's backfill from a donor's pages ends with the very same
 * records, leaving out what its own retention has removed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "history.h"

struct env {
	char dir[64];
	MDB_env *env;
	struct mmd_history h;
};

static void env_open(struct env *e)
{
	char err[256];

	snprintf(e->dir, sizeof(e->dir), "/tmp/storm-hist-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	assert_int_equal(mdb_env_create(&e->env), 0);
	assert_int_equal(mdb_env_set_maxdbs(e->env, 8), 0);
	assert_int_equal(mdb_env_set_mapsize(e->env, (size_t)64 << 20), 0);
	assert_int_equal(mdb_env_open(e->env, e->dir, MDB_NOTLS, 0600), 0);
	if (mmd_history_open(&e->h, e->env, err, sizeof(err)))
		fail_msg("open: %s", err);
}

static void env_close(struct env *e)
{
	char cmd[128];

	mdb_env_close(e->env);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	assert_int_equal(system(cmd), 0);
}

static MDB_txn *begin(struct env *e)
{
	MDB_txn *t;

	assert_int_equal(mdb_txn_begin(e->env, NULL, 0, &t), 0);
	return t;
}

static mm_state_t *mkstate(void)
{
	static const uint32_t ids[] = { 1 };
	static const char *const names[] = { "n1" };
	static const uint32_t cpus[] = { 4 };
	mm_state_t *s = NULL;
	mm_op_t up = { .code = MM_OP_NODE_UP, .node = 1 };

	assert_int_equal(mm_state_create(2, 1, ids, names, cpus, &s), 0);
	assert_int_equal(mm_apply(s, &up, NULL), 0);
	return s;
}

static void submit_cancel(mm_state_t *s, uint32_t uid, const char *name)
{
	static const char *const argv[] = { "/bin/true" };
	mm_job_spec_t sp = { .name = name, .uid = uid, .gid = uid,
			     .ranks = 1, .argc = 1, .argv = argv,
			     .cwd = "/" };
	mm_op_t op = { .code = MM_OP_SUBMIT, .spec = &sp };
	mm_result_t res;

	assert_int_equal(mm_apply(s, &op, &res), 0);
	op = (mm_op_t){ .code = MM_OP_CANCEL, .job = res.job };
	assert_int_equal(mm_apply(s, &op, NULL), 0);
}

/* TICK_RETAIN at now keeping keep ended jobs, then the history's apply
 * at index with its retention. */
static void retain(struct env *e, mm_state_t *s, uint64_t now,
		   uint32_t keep, uint64_t index, uint32_t hjobs,
		   uint64_t hms)
{
	static uint64_t slice;
	mm_op_t op = { .code = MM_OP_TICK_RETAIN, .slice = ++slice,
		       .now_ms = now, .retain_jobs = keep };
	MDB_txn *t = begin(e);

	assert_int_equal(mm_apply(s, &op, NULL), 0);
	assert_int_equal(mmd_history_apply(&e->h, t, s, index, hjobs, hms),
			 0);
	assert_int_equal(mdb_txn_commit(t), 0);
}

static json_t *all(struct env *e, struct mmd_hist_query q)
{
	json_t *jobs = json_array();
	uint64_t ne = 0;
	uint32_t ni = 0;
	int more = 1;
	char err[256];

	if (!q.limit)
		q.limit = 1000;
	while (more) {
		if (mmd_history_query(&e->h, &q, jobs, &more, &ne, &ni, err,
				      sizeof(err)))
			fail_msg("query: %s", err);
		q.before_end = ne;
		q.before_id = ni;
	}
	return jobs;
}

static void test_purged_jobs_enter_and_retention_removes(void **st)
{
	struct env e;
	mm_state_t *s = mkstate();
	json_t *jobs, *o;
	uint32_t uid;

	(void)st;
	env_open(&e);
	for (int i = 0; i < 40; i++)
		submit_cancel(s, i < 10 ? 7 : 8, i < 10 ? "seven" : "eight");
	retain(&e, s, 1000, 8, 100, 0, 0);
	assert_int_equal(mmd_history_count(&e.h), 32);
	assert_int_equal(mmd_history_get(&e.h, 1, &o, &uid), 0);
	assert_int_equal(uid, 7);
	assert_int_equal(json_integer_value(json_object_get(o, "id")), 1);
	assert_true(json_is_true(json_object_get(o, "history")));
	assert_string_equal(json_string_value(json_object_get(o, "state")),
			    "CANCELLED");
	json_decref(o);
	assert_int_equal(mmd_history_get(&e.h, 40, &o, &uid), -ENOENT);
	/* by uid and name */
	jobs = all(&e, (struct mmd_hist_query){ .by_uid = 1, .uid = 7 });
	assert_int_equal(json_array_size(jobs), 10);
	json_decref(jobs);
	jobs = all(&e, (struct mmd_hist_query){ .name = "ei*" });
	assert_int_equal(json_array_size(jobs), 22);
	json_decref(jobs);
	/* paging gives each once */
	jobs = all(&e, (struct mmd_hist_query){ .limit = 4 });
	assert_int_equal(json_array_size(jobs), 32);
	json_decref(jobs);
	/* history retention by id: the last 20 ids (41 - 20 = 21 on) */
	submit_cancel(s, 8, "late");
	retain(&e, s, 2000, 8, 101, 20, 0);
	assert_int_equal(mm_next_id(s), 42);
	jobs = all(&e, (struct mmd_hist_query){ 0 });
	for (size_t i = 0; i < json_array_size(jobs); i++)
		assert_true(json_integer_value(json_object_get(
			json_array_get(jobs, i), "id")) >= 22);
	json_decref(jobs);
	/* by age: everything ended at 1000 ms is older than 500 ms at
	 * 5000 */
	retain(&e, s, 5000, 8, 102, 0, 500);
	assert_int_equal(mmd_history_count(&e.h), 0);
	mm_state_destroy(s);
	env_close(&e);
}

static void test_impossible_queries_are_refused(void **st)
{
	struct env e;
	json_t *jobs = json_array();
	uint64_t ne;
	uint32_t ni;
	int more;
	char err[256];

	(void)st;
	env_open(&e);
	assert_int_equal(mmd_history_query(&e.h, &(struct mmd_hist_query){
		.since_ms = 10, .until_ms = 5, .limit = 1 }, jobs, &more, &ne,
		&ni, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "range is empty"));
	assert_int_equal(mmd_history_query(&e.h, &(struct mmd_hist_query){
		.limit = 0 }, jobs, &more, &ne, &ni, err, sizeof(err)),
		-EINVAL);
	json_decref(jobs);
	env_close(&e);
}

/* A donor's history at index 100 (and later records the joiner gets
 * through the ordered operations): the joiner, installed at 100,
 * backfills page by page and ends with equal records. */
static void test_backfill_converges(void **st)
{
	struct env d, j;
	mm_state_t *s = mkstate();
	uint32_t after = 0, last;
	int more = 1, pages = 0;

	(void)st;
	env_open(&d);
	env_open(&j);
	for (int i = 0; i < 300; i++)
		submit_cancel(s, 9, "x");
	retain(&d, s, 1000, 8, 100, 0, 0);
	{
		MDB_txn *t = begin(&j);

		assert_int_equal(mmd_history_installed(&j.h, t, 100), 0);
		assert_int_equal(mdb_txn_commit(t), 0);
	}
	/* later purges reach both through the ordered operations */
	for (int i = 0; i < 30; i++)
		submit_cancel(s, 9, "y");
	retain(&d, s, 1100, 8, 101, 0, 0);
	{	/* the same operation on the joiner's history */
		MDB_txn *t = begin(&j);

		assert_int_equal(mmd_history_apply(&j.h, t, s, 101, 0, 0), 0);
		assert_int_equal(mdb_txn_commit(t), 0);
	}
	while (more) {
		json_t *recs;
		struct mmd_hist_rec r[4096];
		size_t n;
		MDB_txn *t;

		assert_int_equal(mmd_history_page(&d.h, 100, after, &recs,
						  &last, &more), 0);
		n = json_array_size(recs);
		assert_true(n <= 4096);
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_array_get(recs, i);

			r[i] = (struct mmd_hist_rec){
				.id = json_integer_value(json_array_get(e, 0)),
				.purged_index = json_integer_value(
					json_array_get(e, 1)),
				.end_ms = json_integer_value(json_array_get(e,
									    2)),
				.submit_ms = json_integer_value(
					json_array_get(e, 3)),
				.uid = json_integer_value(json_array_get(e, 4)),
				.state = json_integer_value(json_array_get(e,
									   5)),
				.name = json_string_value(json_array_get(e, 6)),
				.json = json_string_value(json_array_get(e, 7)),
				.json_len = json_string_length(
					json_array_get(e, 7)) };
			assert_true(r[i].purged_index <= 100);
		}
		t = begin(&j);
		assert_int_equal(mmd_history_put_page(&j.h, t, r, n, last,
						      more), 0);
		assert_int_equal(mdb_txn_commit(t), 0);
		json_decref(recs);
		after = last;
		pages++;
	}
	assert_int_equal(j.h.backfill_below, 0);
	{
		json_t *a = all(&d, (struct mmd_hist_query){ 0 });
		json_t *b = all(&j, (struct mmd_hist_query){ 0 });

		assert_int_equal(json_array_size(a), 322);
		assert_int_equal(json_array_size(b), 322);
		for (size_t i = 0; i < 322; i++)
			if (!json_equal(json_array_get(a, i),
					json_array_get(b, i)))
				fail_msg("record %zu: %s vs %s", i,
					 json_dumps(json_array_get(a, i), 0),
					 json_dumps(json_array_get(b, i), 0));
		json_decref(a);
		json_decref(b);
	}
	mm_state_destroy(s);
	env_close(&d);
	env_close(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_purged_jobs_enter_and_retention_removes),
		cmocka_unit_test(test_impossible_queries_are_refused),
		cmocka_unit_test(test_backfill_converges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
