/*
 * test_pmi.c — a job's PMI-1 server (node/pmi.c) over scripted client
 * transcripts: each test feeds lines as a rank would write them and
 * checks the replies byte for byte, the barrier's entries, the merge,
 * and the reason a broken client fails its job with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmi.h"

/* 4 ranks on 2 nodes (nodes 7 and 9: world ids), 2 each; ranks 0, 1 here */
static const uint32_t rank_node[] = { 7, 7, 9, 9 };
static const uint32_t here[] = { 0, 1 };

static struct nm_pmi *two_here(void)
{
	struct nm_pmi *p = nm_pmi_new(12, "storm-12", 4, rank_node, 2, here);

	assert_non_null(p);
	return p;
}

/* Send text as local rank i, expect the replies to be exactly want. */
static void say(struct nm_pmi *p, uint32_t i, const char *text,
		const char *want)
{
	const char *out = NULL;
	size_t n;

	assert_int_equal(nm_pmi_input(p, i, text, strlen(text)), 0);
	n = nm_pmi_output(p, i, &out);
	if (strlen(want) != n || (n && memcmp(out, want, n))) {
		fprintf(stderr, "sent:  %s\nwant:  %s\ngot:   %.*s\n", text,
			want, (int)n, out ? out : "");
		fail();
	}
	nm_pmi_written(p, i, n);
}

static void init(struct nm_pmi *p, uint32_t i)
{
	say(p, i, "cmd=init pmi_version=1 pmi_subversion=1\n",
	    "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n");
}

/* What MPICH's MPI_Init asks, up to its barrier. */
static void test_mpich_startup(void **state)
{
	struct nm_pmi *p = two_here();
	const uint8_t *e;
	size_t len;
	uint32_t fence;

	(void)state;
	init(p, 0);
	say(p, 0, "cmd=get_maxes\n", "cmd=maxes rc=0 kvsname_max=256 "
	    "keylen_max=64 vallen_max=1024\n");
	say(p, 0, "cmd=get_appnum\n", "cmd=appnum rc=0 appnum=0\n");
	say(p, 0, "cmd=get_my_kvsname\n",
	    "cmd=my_kvsname rc=0 kvsname=storm-12\n");
	say(p, 0, "cmd=get_universe_size\n",
	    "cmd=universe_size rc=0 size=4\n");
	say(p, 0, "cmd=get kvsname=storm-12 key=PMI_process_mapping\n",
	    "cmd=get_result rc=0 value=(vector,(0,2,2))\n");
	say(p, 0, "cmd=put kvsname=storm-12 key=P0-businesscard "
	    "value=tcp://a:1\n", "cmd=put_result rc=0\n");
	/* seen here at once, by either local rank */
	init(p, 1);
	say(p, 1, "cmd=get kvsname=storm-12 key=P0-businesscard\n",
	    "cmd=get_result rc=0 value=tcp://a:1\n");
	say(p, 1, "cmd=get kvsname=storm-12 key=P2-businesscard\n",
	    "cmd=get_result rc=-1 msg=key_P2-businesscard_not_found\n");
	say(p, 0, "cmd=barrier_in\n", "");
	assert_int_equal(nm_pmi_fence_ready(p, &e, &len, &fence), 0);
	say(p, 1, "cmd=put kvsname=storm-12 key=P1-businesscard "
	    "value=tcp://a:2\n", "cmd=put_result rc=0\n");
	say(p, 1, "cmd=barrier_in\n", "");
	/* every local rank is in: this node's entries go up, once */
	assert_int_equal(nm_pmi_fence_ready(p, &e, &len, &fence), 1);
	assert_int_equal(fence, 1);
	assert_int_equal(nm_pmi_entries_check(e, len), 0);
	assert_int_equal(len, 2 * (4 + 15 + 9));
	assert_memory_equal(e + 4, "P0-businesscard", 15);
	assert_int_equal(nm_pmi_fence_ready(p, &e, &len, &fence), 0);

	/* the merge: every node's entries, ours among them */
	uint8_t m[256];
	size_t ml = 0;
	const char *kv[][2] = { { "P0-businesscard", "tcp://a:1" },
				{ "P1-businesscard", "tcp://a:2" },
				{ "P2-businesscard", "tcp://b:1" },
				{ "P3-businesscard", "tcp://b:2" } };

	for (size_t k = 0; k < 4; k++) {
		size_t kl = strlen(kv[k][0]), vl = strlen(kv[k][1]);

		m[ml] = (uint8_t)kl;
		m[ml + 1] = 0;
		m[ml + 2] = (uint8_t)vl;
		m[ml + 3] = 0;
		memcpy(m + ml + 4, kv[k][0], kl);
		memcpy(m + ml + 4 + kl, kv[k][1], vl);
		ml += 4 + kl + vl;
	}
	assert_int_equal(nm_pmi_fence_take(p, 2, m, ml), 0); /* not ours */
	assert_int_equal(nm_pmi_fence_take(p, 1, m, ml), 1);
	assert_int_equal(nm_pmi_fences(p), 1);
	say(p, 0, "", "cmd=barrier_out rc=0\n");
	say(p, 1, "", "cmd=barrier_out rc=0\n");
	/* a copy sent again is ignored */
	assert_int_equal(nm_pmi_fence_take(p, 1, m, ml), 0);
	say(p, 1, "cmd=get kvsname=storm-12 key=P3-businesscard\n",
	    "cmd=get_result rc=0 value=tcp://b:2\n");
	/* the second barrier carries nothing new */
	say(p, 0, "cmd=barrier_in\n", "");
	say(p, 1, "cmd=barrier_in\n", "");
	assert_int_equal(nm_pmi_fence_ready(p, &e, &len, &fence), 1);
	assert_int_equal(fence, 2);
	assert_int_equal(len, 0);
	assert_int_equal(nm_pmi_fence_take(p, 2, NULL, 0), 1);
	say(p, 0, "cmd=finalize\n", "cmd=barrier_out rc=0\n"
	    "cmd=finalize_ack rc=0\n");
	say(p, 1, "cmd=finalize\n", "cmd=barrier_out rc=0\n"
	    "cmd=finalize_ack rc=0\n");
	assert_int_equal(nm_pmi_closed(p, 0), 0);
	assert_int_equal(nm_pmi_closed(p, 1), 0);
	assert_null(nm_pmi_failed(p, NULL));
	nm_pmi_free(p);
}

/* A line may arrive in pieces, and several in one read. */
static void test_pieces(void **state)
{
	struct nm_pmi *p = two_here();

	(void)state;
	say(p, 0, "cmd=ini", "");
	say(p, 0, "t pmi_version=1 pmi_subversion=1\ncmd=get_appnum\n",
	    "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n"
	    "cmd=appnum rc=0 appnum=0\n");
	nm_pmi_free(p);
}

/* Rank layouts and their PMI_process_mapping. */
static void mapping_is(uint32_t size, const uint32_t *rn, const char *want)
{
	uint32_t r0 = 0;
	struct nm_pmi *p = nm_pmi_new(1, "k", size, rn, 1, &r0);
	char line[256];

	assert_non_null(p);
	init(p, 0);
	snprintf(line, sizeof(line), "cmd=get_result rc=0 value=%s\n", want);
	say(p, 0, "cmd=get key=PMI_process_mapping\n", line);
	nm_pmi_free(p);
}

static void test_mapping(void **state)
{
	const uint32_t block[] = { 4, 4, 5, 5, 6, 6, 7, 7 };
	const uint32_t uneven[] = { 4, 4, 4, 5, 5, 6 };
	const uint32_t cyclic[] = { 4, 5, 4, 5 };
	const uint32_t one[] = { 3 };

	(void)state;
	mapping_is(8, block, "(vector,(0,4,2))");
	mapping_is(6, uneven, "(vector,(0,1,3),(1,1,2),(2,1,1))");
	mapping_is(4, cyclic, "(vector,(0,2,1),(0,2,1))");
	mapping_is(1, one, "(vector,(0,1,1))");
}

static void fails_with(const char *text, const char *why_part)
{
	struct nm_pmi *p = two_here();
	const char *why;

	init(p, 0);
	assert_int_equal(nm_pmi_input(p, 0, text, strlen(text)), -1);
	why = nm_pmi_failed(p, NULL);
	assert_non_null(why);
	if (!strstr(why, why_part)) {
		fprintf(stderr, "why: %s\nwant: %s\n", why, why_part);
		fail();
	}
	/* it stays failed */
	assert_int_equal(nm_pmi_input(p, 0, "cmd=get_appnum\n", 15), -1);
	nm_pmi_free(p);
}

/* Bad input: a clear reason naming the rank, never a crash. */
static void test_bad_input(void **state)
{
	char big[4097]; /* a string: its last byte stays NUL */

	(void)state;
	fails_with("hello world\n", "rank 0: PMI: 'hello world' is not a "
		   "PMI-1 request");
	fails_with("\x01\x02\n", "is not a PMI-1 request");
	fails_with("cmd=frobnicate\n", "unknown request cmd=frobnicate");
	fails_with("cmd=put kvsname=storm-12 key=k\n",
		   "cmd=put without key= and value=");
	memset(big, 0, sizeof(big));
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "cmd=put key=k value=", 20);
	big[20 + 1025] = '\n';
	fails_with(big, "put of a value of 1025 bytes (at most 1024)");
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "cmd=put key=", 12);
	memcpy(big + 12 + 65, " value=v\n", 9);
	fails_with(big, "put of a key of 65 bytes (at most 64)");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 2] = '\n';
	fails_with(big, "a request line of more than 2047 bytes");
	fails_with("cmd=spawn nprocs=2\n", "is not served by Storm");
	fails_with("cmd=barrier_in\ncmd=barrier_in\n",
		   "cmd=barrier_in while in barrier_in");

	/* before init */
	struct nm_pmi *p = two_here();

	assert_int_equal(nm_pmi_input(p, 1, "cmd=get_appnum\n", 15), -1);
	assert_non_null(strstr(nm_pmi_failed(p, NULL),
			       "rank 1: PMI: cmd=get_appnum before cmd=init"));
	nm_pmi_free(p);
	/* the wrong key-value space: an error reply, not a failure */
	p = two_here();
	init(p, 0);
	say(p, 0, "cmd=get kvsname=other key=a\n",
	    "cmd=get_result rc=-1 msg=no_such_kvsname\n");
	/* the name service: answered, not served */
	say(p, 0, "cmd=lookup_name service=x\n",
	    "cmd=lookup_result rc=-1 msg=not_served_by_storm\n");
	nm_pmi_free(p);
}

/* MPI_Abort: the job fails with the rank, its code and its message. */
static void test_abort(void **state)
{
	struct nm_pmi *p = two_here();
	int code = 0;

	(void)state;
	init(p, 1);
	assert_int_equal(nm_pmi_input(p, 1, "cmd=abort exitcode=7\n", 21),
			 -1);
	assert_string_equal(nm_pmi_failed(p, &code),
			    "rank 1 called MPI_Abort (exit code 7)");
	assert_int_equal(code, 7);
	nm_pmi_free(p);
}

/* A barrier from only some ranks, then one dies: the job fails at once,
 * naming it, rather than hang. */
static void test_death_in_barrier(void **state)
{
	struct nm_pmi *p = two_here();
	const uint8_t *e;
	size_t len;
	uint32_t fence;

	(void)state;
	init(p, 0);
	init(p, 1);
	say(p, 0, "cmd=barrier_in\n", "");
	assert_int_equal(nm_pmi_closed(p, 1), -1);
	assert_string_equal(nm_pmi_failed(p, NULL),
			    "rank 1 ended without PMI finalize (in MPI, "
			    "without MPI_Finalize): the job's other ranks "
			    "cannot complete");
	assert_int_equal(nm_pmi_fence_ready(p, &e, &len, &fence), 0);
	nm_pmi_free(p);

	/* one ended first; the other's barrier can never complete */
	p = two_here();
	init(p, 0);
	assert_int_equal(nm_pmi_closed(p, 1), 0); /* never a client */
	assert_int_equal(nm_pmi_input(p, 0, "cmd=barrier_in\n", 15), -1);
	assert_non_null(strstr(nm_pmi_failed(p, NULL),
			       "rank 1 ended before PMI barrier 1"));
	nm_pmi_free(p);
}

/* Merged entries from the managers are checked too. */
static void test_bad_merge(void **state)
{
	struct nm_pmi *p = two_here();
	const uint8_t *e;
	size_t len;
	uint32_t fence;
	const uint8_t bad[] = { 3, 0, 200, 0, 'a', 'b', 'c' };

	(void)state;
	init(p, 0);
	init(p, 1);
	say(p, 0, "cmd=barrier_in\n", "");
	say(p, 1, "cmd=barrier_in\n", "");
	assert_int_equal(nm_pmi_fence_ready(p, &e, &len, &fence), 1);
	assert_int_equal(nm_pmi_fence_take(p, 1, bad, sizeof(bad)), -1);
	assert_non_null(strstr(nm_pmi_failed(p, NULL), "malformed"));
	nm_pmi_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mpich_startup),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_mapping),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_death_in_barrier),
		cmocka_unit_test(test_bad_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
