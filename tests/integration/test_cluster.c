/*
 * test_cluster.c — the STORM core end to end: a real storm-mm and four
 * storm-nm processes on loopback (tcp;ofi_rxm), driven by the real
 * stormctl.  One cluster serves the whole group; tests that kill a node
 * restart it before they end.
 *
 *   run_streams_every_rank_labelled   -l output of every rank, stdout and
 *                                     stderr, STORM_* environment
 *   run_exits_with_the_jobs_status    a rank's exit 7 is stormctl's exit 7
 *   run_moves_a_12mb_binary           the padded program reaches 4 nodes
 *                                     whole (same checksum everywhere)
 *   run_on_a_subset_of_nodes          -w 2-3: only nm2 and nm3 run it
 *   two_jobs_run_at_once              each waits for the other's file
 *   cancel_ends_the_job_and_its_ranks the rank's process is gone
 *   time_limit_ends_the_job_and_its_ranks
 *                                     --time-limit: FAILED with the reason,
 *                                     its rank killed
 *   missing_program_fails_cleanly     a clear reason, exit 1, nothing left
 *   submit_writes_output_files        batch output lands in -o files,
 *                                     one per rank with %r
 *   submit_one_file_from_many_nodes   without %r, the ranks of 3 nodes
 *                                     write one file (rank 0's node
 *                                     writes it; the others relay)
 *   node_killed_mid_job_fails_it      kill -9 an NM: the job fails naming
 *                                     the node, its rank dies with it, and
 *                                     the other nodes keep working
 *   hung_node_manager_is_located      an NM whose main loop hangs (its
 *                                     process and fabric alive) is found
 *                                     by the strobe's binary search of
 *                                     COMPARE-AND-WRITEs and taken out
 *   node_rejoins                      the restarted NM is UP and runs jobs
 *
 * Usage: test_cluster STORM-MM STORM-NM STORMCTL PADDED [PATTERN]
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
#include <unistd.h>

#include <cmocka.h>

#include "sp_cluster.h"
#include "storm_fixture.h"

#define NODES 4
#define RUN_MS 30000

static const char *mm_exe, *nm_exe, *ctl_exe, *padded_exe;

static int setup(void **state)
{
	sf_cluster_t *c;
	int rc = sf_start(mm_exe, nm_exe, ctl_exe, NODES, "tcp", &c);

	if (rc)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	sf_destroy(*state);
	return 0;
}

/* Run stormctl; fail the test with its output if it did not exit want. */
static char *ctl(sf_cluster_t *c, int want, const char *const args[])
{
	char *out = NULL, *err = NULL;
	int rc = sf_ctl(c, RUN_MS, &out, &err, args);

	if (rc != want) {
		char *log = sf_read(c, "storm.log");

		fprintf(stderr, "stormctl %s ... exited %d, want %d\nstdout:\n"
			"%s\nstderr:\n%s\nlog (%s/storm.log):\n%s\n", args[0],
			rc, want, out ? out : "", err ? err : "", c->dir,
			log ? log : "");
		free(log);
		free(out);
		free(err);
		fail();
	}
	if (out && err) {
		size_t n = strlen(out);
		char *both = realloc(out, n + strlen(err) + 1);

		assert_non_null(both);
		strcpy(both + n, err);
		out = both;
	}
	free(err);
	return out;
}

static void test_run_streams_every_rank_labelled(void **state)
{
	const char *const a[] = { "run", "-n", "3", "-l", "--", "/bin/sh", "-c",
		"echo out $STORM_RANK of $STORM_SIZE job $STORM_JOB_ID on "
		"$STORM_NODENAME; echo err $STORM_RANK >&2", NULL };
	char *out = ctl(*state, 0, a);

	assert_non_null(strstr(out, "0: out 0 of 3 job"));
	assert_non_null(strstr(out, "1: out 1 of 3 job"));
	assert_non_null(strstr(out, "2: out 2 of 3 job"));
	assert_non_null(strstr(out, "0: err 0"));
	assert_non_null(strstr(out, "2: err 2"));
	assert_non_null(strstr(out, "on nm1"));
	assert_non_null(strstr(out, "on nm3"));
	free(out);
}

static void test_run_exits_with_the_jobs_status(void **state)
{
	const char *const a[] = { "run", "-n", "2", "--", "/bin/sh", "-c",
		"[ $STORM_RANK = 1 ] && exit 7; exit 0", NULL };
	char *out = ctl(*state, 7, a);

	free(out);
}

static void test_run_moves_a_12mb_binary(void **state)
{
	const char *const a[] = { "run", "-n", "4", "-l", "--", padded_exe,
				  NULL };
	char *out = ctl(*state, 0, a), *sum, line[128];

	sum = strstr(out, "0: rank 0 checksum ");
	assert_non_null(sum);
	sum += strlen("0: rank 0 checksum ");
	for (int r = 1; r < 4; r++) {
		snprintf(line, sizeof(line), "%d: rank %d checksum %.*s", r, r,
			 (int)strcspn(sum, "\n"), sum);
		assert_non_null(strstr(out, line));
	}
	free(out);
}

static void test_run_on_a_subset_of_nodes(void **state)
{
	const char *const a[] = { "run", "-n", "2", "-w", "2-3", "--",
				  "/bin/sh", "-c", "echo on $STORM_NODENAME",
				  NULL };
	char *out = ctl(*state, 0, a);

	assert_non_null(strstr(out, "on nm2"));
	assert_non_null(strstr(out, "on nm3"));
	assert_null(strstr(out, "on nm1"));
	assert_null(strstr(out, "on nm4"));
	free(out);
}

static void test_two_jobs_run_at_once(void **state)
{
	sf_cluster_t *c = *state;
	char sa[600], sb[600];
	const char *const a[] = { "run", "-n", "1", "-w", "1", "--", "/bin/sh",
				  "-c", sa, NULL };
	const char *const b[] = { "run", "-n", "1", "-w", "2", "--", "/bin/sh",
				  "-c", sb, NULL };
	pid_t pa, pb;
	int st;

	/* each job creates its file, then waits (bounded) for the other's:
	 * both succeed only if they run at the same time */
	snprintf(sa, sizeof(sa), "touch %s/a; for i in $(seq 100); do "
		 "[ -e %s/b ] && exit 0; sleep 0.1; done; exit 1", c->dir,
		 c->dir);
	snprintf(sb, sizeof(sb), "touch %s/b; for i in $(seq 100); do "
		 "[ -e %s/a ] && exit 0; sleep 0.1; done; exit 1", c->dir,
		 c->dir);
	pa = sf_ctl_bg(c, "jobA", a);
	pb = sf_ctl_bg(c, "jobB", b);
	assert_true(pa > 0 && pb > 0);
	assert_int_equal(spc_waitpid(pa, RUN_MS, &st), 0);
	assert_int_equal(st, 0);
	assert_int_equal(spc_waitpid(pb, RUN_MS, &st), 0);
	assert_int_equal(st, 0);
}

/* Start a job that prints "ready PID" and sleeps; returns the rank's pid
 * and leaves the stormctl run client running (*client, *fd). */
static pid_t start_sleeper(sf_cluster_t *c, const char *nodes,
			   pid_t *client, int *fd, char *buf, size_t cap)
{
	const char *const a[] = { "run", "-n", "1", "-w", nodes, "--",
				  "/bin/sh", "-c",
				  "echo ready $$; exec sleep 300", NULL };
	char *p;

	buf[0] = '\0';
	*client = sf_ctl_pipe(c, a, fd);
	assert_true(*client > 0);
	assert_int_equal(sf_read_until(*fd, "\n", RUN_MS, buf, cap), 0);
	p = strstr(buf, "ready ");
	assert_non_null(p);
	return (pid_t)atoi(p + 6);
}

static void test_cancel_ends_the_job_and_its_ranks(void **state)
{
	sf_cluster_t *c = *state;
	char buf[4096], job[16];
	const char *const q[] = { "--json", "queue", NULL };
	const char *const cancel[] = { "cancel", job, NULL };
	pid_t client, rank;
	char *out, *id;
	int fd, st;

	rank = start_sleeper(c, "1", &client, &fd, buf, sizeof(buf));
	out = ctl(c, 0, q);
	id = strstr(out, "\"id\":");
	if (!id)
		id = strstr(out, "\"id\": ");
	assert_non_null(id);
	snprintf(job, sizeof(job), "%d", atoi(strchr(id, ':') + 1));
	free(out);
	free(ctl(c, 0, cancel));
	/* the run client sees the end; the rank's process is killed */
	assert_int_equal(spc_waitpid(client, RUN_MS, &st), 0);
	assert_int_not_equal(st, 0);
	assert_int_equal(sf_await_gone(rank, RUN_MS), 0);
	close(fd);
}

static void test_time_limit_ends_the_job_and_its_ranks(void **state)
{
	sf_cluster_t *c = *state;
	const char *const a[] = { "run", "-n", "1", "-w", "1", "--time-limit",
				  "300", "--", "/bin/sh", "-c",
				  "echo ready $$; exec sleep 300", NULL };
	char buf[4096] = "", *p;
	pid_t client, rank;
	int fd, st;

	client = sf_ctl_pipe(c, a, &fd);
	assert_true(client > 0);
	assert_int_equal(sf_read_until(fd, "\n", RUN_MS, buf, sizeof(buf)), 0);
	p = strstr(buf, "ready ");
	assert_non_null(p);
	rank = (pid_t)atoi(p + 6);
	assert_int_equal(sf_read_until(fd, "time limit", RUN_MS, buf,
				       sizeof(buf)), 0);
	assert_int_equal(spc_waitpid(client, RUN_MS, &st), 0);
	assert_int_not_equal(st, 0);
	close(fd);
	assert_int_equal(sf_await_gone(rank, RUN_MS), 0);
}

/* stormctl opens a job's inputs itself (docs/security.md 2): a program
 * it cannot open is a bad operand, exit 2, before the manager hears of
 * it */
static void test_missing_program_fails_cleanly(void **state)
{
	const char *const a[] = { "run", "-n", "1", "--",
				  "/nonexistent/program", NULL };
	char *out = ctl(*state, 2, a);

	assert_non_null(strstr(out, "/nonexistent/program"));
	free(out);
}

static void test_submit_writes_output_files(void **state)
{
	sf_cluster_t *c = *state;
	char pat[400], path[400], *reply = NULL, *out, *data;
	const char *const a[] = { "submit", "-n", "2", "-o", pat, "--",
				  "/bin/sh", "-c", "echo batch $STORM_RANK",
				  NULL };
	uint32_t job;

	snprintf(pat, sizeof(pat), "%s/out-%%j-%%r.txt", c->dir);
	out = ctl(c, 0, a);
	assert_non_null(strstr(out, "Submitted job "));
	job = (uint32_t)atoi(strstr(out, "Submitted job ") + 14);
	free(out);
	assert_int_equal(sf_wait_job(c, job, RUN_MS, &reply), 0);
	assert_non_null(strstr(reply, "COMPLETED"));
	free(reply);
	for (int r = 0; r < 2; r++) {
		char want[32];

		snprintf(path, sizeof(path), "out-%u-%d.txt", job, r);
		snprintf(want, sizeof(want), "batch %d\n", r);
		data = sf_read(c, path);
		assert_non_null(data);
		assert_string_equal(data, want);
		free(data);
	}
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_submit_one_file_from_many_nodes(void **state)
{
	sf_cluster_t *c = *state;
	char opat[400], epat[400], path[400], *reply = NULL, *out;
	const char *const a[] = { "submit", "-n", "3", "-o", opat, "-e", epat,
				  "--", "/bin/sh", "-c",
				  "echo out $STORM_RANK $STORM_NODENAME; "
				  "echo err $STORM_RANK >&2", NULL };
	uint32_t job;

	snprintf(opat, sizeof(opat), "%s/one-%%j.out", c->dir);
	snprintf(epat, sizeof(epat), "%s/one-%%j.err", c->dir);
	out = ctl(c, 0, a);
	assert_non_null(strstr(out, "Submitted job "));
	job = (uint32_t)atoi(strstr(out, "Submitted job ") + 14);
	free(out);
	assert_int_equal(sf_wait_job(c, job, RUN_MS, &reply), 0);
	assert_non_null(strstr(reply, "COMPLETED"));
	free(reply);
	for (int s = 0; s < 2; s++) {
		char *data, *line[8], *save = NULL, want[32];
		int n = 0;

		snprintf(path, sizeof(path), "one-%u.%s", job, s ? "err" : "out");
		data = sf_read(c, path);
		assert_non_null(data);
		for (char *l = strtok_r(data, "\n", &save); l && n < 8;
		     l = strtok_r(NULL, "\n", &save))
			line[n++] = l;
		/* every rank's line, once, whole: from three nodes */
		assert_int_equal(n, 3);
		qsort(line, (size_t)n, sizeof(*line), cmp_line);
		for (int r = 0; r < 3; r++) {
			snprintf(want, sizeof(want), "%s %d", s ? "err" : "out",
				 r);
			assert_true(!strncmp(line[r], want, strlen(want)));
		}
		if (!s) /* not all from one node */
			assert_true(strcmp(strrchr(line[0], ' '),
					   strrchr(line[2], ' ')) != 0);
		free(data);
	}
}

static void test_node_killed_mid_job_fails_it(void **state)
{
	sf_cluster_t *c = *state;
	char buf[8192];
	const char *const other[] = { "run", "-n", "2", "-w", "1,3", "--",
				      "/bin/sh", "-c", "echo still $STORM_RANK",
				      NULL };
	pid_t client, rank;
	char *out;
	int fd, st;

	rank = start_sleeper(c, "2", &client, &fd, buf, sizeof(buf));
	assert_int_equal(sf_kill_nm(c, 2, SIGKILL), 0);
	/* the job fails with a reason naming the node */
	assert_int_equal(sf_read_until(fd, "nm2", RUN_MS, buf, sizeof(buf)), 0);
	assert_int_equal(spc_waitpid(client, RUN_MS, &st), 0);
	assert_int_not_equal(st, 0);
	close(fd);
	assert_int_equal(sf_wait_down(c, 1, RUN_MS), 0);
	/* its rank did not outlive it */
	assert_int_equal(sf_await_gone(rank, RUN_MS), 0);
	/* the rest of the cluster keeps working */
	out = ctl(c, 0, other);
	assert_non_null(strstr(out, "still 0"));
	assert_non_null(strstr(out, "still 1"));
	free(out);
	/* leave the cluster whole for the next test */
	assert_int_equal(sf_start_nm(c, 2), 0);
	assert_int_equal(sf_wait_up(c, NODES, RUN_MS), 0);
}

static void test_hung_node_manager_is_located(void **state)
{
	sf_cluster_t *c = *state;
	const char *const a[] = { "--json", "nodes", NULL };
	char *out, *p;

	/* its process and fabric live on: only the strobe check sees it */
	assert_int_equal(sf_kill_nm(c, 3, SIGUSR2), 0);
	assert_int_equal(sf_wait_down(c, 1, RUN_MS), 0);
	out = ctl(c, 0, a);
	p = strstr(out, "\"nm3\"");
	assert_non_null(p);
	assert_non_null(strstr(p, "not responding"));
	free(out);
	/* leave the cluster whole for the next test */
	assert_int_equal(sf_kill_nm(c, 3, SIGKILL), 0);
	assert_int_equal(sf_start_nm(c, 3), 0);
	assert_int_equal(sf_wait_up(c, NODES, RUN_MS), 0);
}

static void test_node_rejoins(void **state)
{
	sf_cluster_t *c = *state;
	const char *const a[] = { "run", "-n", "1", "-w", "4", "--",
				  "/bin/sh", "-c", "echo back on $STORM_NODENAME",
				  NULL };
	char *out;

	assert_int_equal(sf_kill_nm(c, 4, SIGKILL), 0);
	/* missed heartbeats: the manager takes it out of service */
	assert_int_equal(sf_wait_down(c, 1, RUN_MS), 0);
	assert_int_equal(sf_start_nm(c, 4), 0);
	assert_int_equal(sf_wait_up(c, NODES, RUN_MS), 0);
	out = ctl(c, 0, a);
	assert_non_null(strstr(out, "back on nm4"));
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_streams_every_rank_labelled),
		cmocka_unit_test(test_run_exits_with_the_jobs_status),
		cmocka_unit_test(test_run_moves_a_12mb_binary),
		cmocka_unit_test(test_run_on_a_subset_of_nodes),
		cmocka_unit_test(test_two_jobs_run_at_once),
		cmocka_unit_test(test_cancel_ends_the_job_and_its_ranks),
		cmocka_unit_test(test_time_limit_ends_the_job_and_its_ranks),
		cmocka_unit_test(test_missing_program_fails_cleanly),
		cmocka_unit_test(test_submit_writes_output_files),
		cmocka_unit_test(test_submit_one_file_from_many_nodes),
		cmocka_unit_test(test_node_killed_mid_job_fails_it),
		cmocka_unit_test(test_hung_node_manager_is_located),
		cmocka_unit_test(test_node_rejoins),
	};

	if (argc < 5) {
		fprintf(stderr, "usage: %s STORM-MM STORM-NM STORMCTL PADDED "
			"[PATTERN]\n", argv[0]);
		return 2;
	}
	mm_exe = argv[1];
	nm_exe = argv[2];
	ctl_exe = argv[3];
	padded_exe = argv[4];
	if (argc > 5)
		cmocka_set_test_filter(argv[5]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
