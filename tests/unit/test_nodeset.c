/*
 * test_nodeset.c — sp_nodeset_t (nodeset.c) against its contract in
 * storm_primitives.h: add/del/has/count/next/copy, the range-list parser
 * and formatter, and the rule that a failed call changes nothing.  A
 * seeded fuzz loop feeds random strings to sp_nodeset_parse(): every
 * string either parses and round-trips through sp_nodeset_format(), or
 * fails with -EINVAL/-ERANGE leaving the set exactly as it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "storm_primitives.h"

/* ---- helpers ------------------------------------------------------------- */

static sp_nodeset_t *mkset(uint32_t cap)
{
	sp_nodeset_t *s = NULL;

	assert_int_equal(sp_nodeset_create(cap, &s), 0);
	assert_non_null(s);
	return s;
}

/* 1 iff a and b hold the same ids (same capacity assumed). */
static int same(const sp_nodeset_t *a, const sp_nodeset_t *b)
{
	uint32_t cap = sp_nodeset_capacity(a);

	if (cap != sp_nodeset_capacity(b))
		return 0;
	for (uint32_t i = 0; i < cap; i++)
		if (sp_nodeset_has(a, i) != sp_nodeset_has(b, i))
			return 0;
	return 1;
}

static void fmt(const sp_nodeset_t *s, char *buf, size_t len)
{
	int need = sp_nodeset_format(s, buf, len);

	assert_true(need >= 0);
	assert_true((size_t)need < len);
	assert_int_equal(strlen(buf), (size_t)need);
}

/* Parse text that must fail with want; the set must be untouched and err
 * must say something. */
static void parse_fails(sp_nodeset_t *s, const char *text, int want)
{
	sp_nodeset_t *before = mkset(sp_nodeset_capacity(s));
	char err[256] = "";

	assert_int_equal(sp_nodeset_copy(before, s), 0);
	assert_int_equal(sp_nodeset_parse(s, text, err, sizeof(err)), want);
	assert_true(same(before, s));
	assert_true(strlen(err) > 0);
	sp_nodeset_destroy(before);
}

/* ---- create / add / del / has / count ------------------------------------ */

static void test_nodeset_create_rejects_bad_capacity(void **state)
{
	sp_nodeset_t *s = (sp_nodeset_t *)0x1;

	(void)state;
	assert_int_equal(sp_nodeset_create(0, &s), -EINVAL);
	assert_int_equal(sp_nodeset_create(65537, &s), -EINVAL);
	assert_int_equal(sp_nodeset_create(8, NULL), -EINVAL);
	assert_ptr_equal(s, (sp_nodeset_t *)0x1); /* untouched on failure */
	s = mkset(65536);
	assert_int_equal(sp_nodeset_capacity(s), 65536);
	assert_int_equal(sp_nodeset_count(s), 0);
	sp_nodeset_destroy(s);
	sp_nodeset_destroy(NULL); /* accepted */
}

static void test_nodeset_add_del_has_count(void **state)
{
	sp_nodeset_t *s = mkset(130);

	(void)state;
	assert_int_equal(sp_nodeset_add(s, 0), 0);
	assert_int_equal(sp_nodeset_add(s, 63), 0);
	assert_int_equal(sp_nodeset_add(s, 64), 0);
	assert_int_equal(sp_nodeset_add(s, 129), 0);
	assert_int_equal(sp_nodeset_add(s, 64), 0); /* idempotent */
	assert_int_equal(sp_nodeset_count(s), 4);
	assert_true(sp_nodeset_has(s, 0));
	assert_true(sp_nodeset_has(s, 63));
	assert_true(sp_nodeset_has(s, 64));
	assert_true(sp_nodeset_has(s, 129));
	assert_false(sp_nodeset_has(s, 1));
	assert_false(sp_nodeset_has(s, 128));
	assert_int_equal(sp_nodeset_del(s, 63), 0);
	assert_int_equal(sp_nodeset_del(s, 63), 0); /* idempotent */
	assert_false(sp_nodeset_has(s, 63));
	assert_int_equal(sp_nodeset_count(s), 3);
	sp_nodeset_clear(s);
	assert_int_equal(sp_nodeset_count(s), 0);
	sp_nodeset_destroy(s);
}

static void test_nodeset_out_of_range_ids_change_nothing(void **state)
{
	sp_nodeset_t *s = mkset(70), *before = mkset(70);

	(void)state;
	assert_int_equal(sp_nodeset_add(s, 5), 0);
	assert_int_equal(sp_nodeset_copy(before, s), 0);
	assert_int_equal(sp_nodeset_add(s, 70), -ERANGE);
	assert_int_equal(sp_nodeset_add(s, UINT32_MAX), -ERANGE);
	assert_int_equal(sp_nodeset_del(s, 70), -ERANGE);
	assert_int_equal(sp_nodeset_add_range(s, 60, 70), -ERANGE);
	assert_int_equal(sp_nodeset_add_range(s, 9, 8), -ERANGE);
	assert_false(sp_nodeset_has(s, 70));
	assert_false(sp_nodeset_has(s, UINT32_MAX));
	assert_true(same(before, s));
	sp_nodeset_destroy(s);
	sp_nodeset_destroy(before);
}

static void test_nodeset_add_range_is_inclusive(void **state)
{
	sp_nodeset_t *s = mkset(200);

	(void)state;
	assert_int_equal(sp_nodeset_add_range(s, 60, 130), 0);
	assert_int_equal(sp_nodeset_count(s), 71);
	assert_false(sp_nodeset_has(s, 59));
	assert_true(sp_nodeset_has(s, 60));
	assert_true(sp_nodeset_has(s, 130));
	assert_false(sp_nodeset_has(s, 131));
	assert_int_equal(sp_nodeset_add_range(s, 199, 199), 0);
	assert_int_equal(sp_nodeset_count(s), 72);
	sp_nodeset_destroy(s);
}

static void test_nodeset_next_iterates_in_order(void **state)
{
	sp_nodeset_t *s = mkset(300);
	const uint32_t ids[] = {0, 1, 63, 64, 127, 128, 200, 299};
	size_t k = 0;

	(void)state;
	assert_int_equal(sp_nodeset_next(s, 0), -1); /* empty */
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		assert_int_equal(sp_nodeset_add(s, ids[i]), 0);
	for (int64_t x = sp_nodeset_next(s, 0); x >= 0;
	     x = sp_nodeset_next(s, (uint32_t)x + 1))
		assert_int_equal(x, ids[k++]);
	assert_int_equal(k, sizeof(ids) / sizeof(ids[0]));
	assert_int_equal(sp_nodeset_next(s, 65), 127);
	assert_int_equal(sp_nodeset_next(s, 299), 299);
	assert_int_equal(sp_nodeset_next(s, 300), -1);
	assert_int_equal(sp_nodeset_next(s, UINT32_MAX), -1);
	sp_nodeset_destroy(s);
}

static void test_nodeset_copy_requires_same_capacity(void **state)
{
	sp_nodeset_t *a = mkset(100), *b = mkset(100), *c = mkset(101);

	(void)state;
	assert_int_equal(sp_nodeset_add_range(a, 3, 77), 0);
	assert_int_equal(sp_nodeset_add(b, 99), 0);
	assert_int_equal(sp_nodeset_copy(b, a), 0);
	assert_true(same(a, b));
	assert_false(sp_nodeset_has(b, 99)); /* replaced, not merged */
	assert_int_equal(sp_nodeset_add(c, 100), 0);
	assert_int_equal(sp_nodeset_copy(c, a), -EINVAL);
	assert_int_equal(sp_nodeset_count(c), 1); /* untouched */
	assert_true(sp_nodeset_has(c, 100));
	assert_int_equal(sp_nodeset_copy(NULL, a), -EINVAL);
	assert_int_equal(sp_nodeset_copy(a, NULL), -EINVAL);
	sp_nodeset_destroy(a);
	sp_nodeset_destroy(b);
	sp_nodeset_destroy(c);
}

/* ---- parse / format ------------------------------------------------------ */

static void test_nodeset_parse_range_list(void **state)
{
	sp_nodeset_t *s = mkset(16);
	char err[128];

	(void)state;
	assert_int_equal(sp_nodeset_add(s, 15), 0); /* parse clears first */
	assert_int_equal(sp_nodeset_parse(s, "0-7,9", err, sizeof(err)), 0);
	assert_int_equal(sp_nodeset_count(s), 9);
	for (uint32_t i = 0; i < 8; i++)
		assert_true(sp_nodeset_has(s, i));
	assert_false(sp_nodeset_has(s, 8));
	assert_true(sp_nodeset_has(s, 9));
	assert_false(sp_nodeset_has(s, 15));
	/* overlapping and unordered pieces, single-id ranges */
	assert_int_equal(sp_nodeset_parse(s, "12-13,3,2-4,13-13", NULL, 0), 0);
	assert_int_equal(sp_nodeset_count(s), 5);
	/* the last id of the machine; the empty list is the empty set */
	assert_int_equal(sp_nodeset_parse(s, "15", NULL, 0), 0);
	assert_int_equal(sp_nodeset_count(s), 1);
	assert_int_equal(sp_nodeset_parse(s, "", NULL, 0), 0);
	assert_int_equal(sp_nodeset_count(s), 0);
	sp_nodeset_destroy(s);
}

static void test_nodeset_parse_syntax_errors_leave_set_untouched(void **state)
{
	sp_nodeset_t *s = mkset(16);
	const char *bad[] = {"1,,2", "a",   "1-",  "-1", ",1",  "1,",
			     "1 ,2", " 1",  "1-2-3", "0x3", "1;2", "3-a",
			     "+1",   "1\n", "--", ","};

	(void)state;
	assert_int_equal(sp_nodeset_add_range(s, 4, 6), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_fails(s, bad[i], -EINVAL);
	assert_int_equal(sp_nodeset_count(s), 3);
	sp_nodeset_destroy(s);
}

static void test_nodeset_parse_beyond_capacity_is_erange(void **state)
{
	sp_nodeset_t *s = mkset(16);

	(void)state;
	assert_int_equal(sp_nodeset_add(s, 1), 0);
	parse_fails(s, "16", -ERANGE);
	parse_fails(s, "0-16", -ERANGE);
	parse_fails(s, "2,3,1000", -ERANGE);
	parse_fails(s, "4294967295", -ERANGE);
	assert_int_equal(sp_nodeset_count(s), 1);
	sp_nodeset_destroy(s);
}

/* An id too large even for 32 bits is still "an id beyond capacity". */
static void test_nodeset_parse_huge_id_is_erange(void **state)
{
	sp_nodeset_t *s = mkset(16);

	(void)state;
	parse_fails(s, "99999999999", -ERANGE);
	parse_fails(s, "0-4294967296", -ERANGE);
	sp_nodeset_destroy(s);
}

/* "3-1" names no id beyond capacity: it is malformed, hence -EINVAL. */
static void test_nodeset_parse_reversed_range_is_einval(void **state)
{
	sp_nodeset_t *s = mkset(16);

	(void)state;
	assert_int_equal(sp_nodeset_add(s, 7), 0);
	parse_fails(s, "3-1", -EINVAL);
	sp_nodeset_destroy(s);
}

static void test_nodeset_parse_rejects_null(void **state)
{
	sp_nodeset_t *s = mkset(8);

	(void)state;
	assert_int_equal(sp_nodeset_parse(s, NULL, NULL, 0), -EINVAL);
	assert_int_equal(sp_nodeset_parse(NULL, "1", NULL, 0), -EINVAL);
	sp_nodeset_destroy(s);
}

static void test_nodeset_format_compresses_ranges(void **state)
{
	sp_nodeset_t *s = mkset(200);
	char buf[256];

	(void)state;
	fmt(s, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(sp_nodeset_add_range(s, 0, 7), 0);
	assert_int_equal(sp_nodeset_add(s, 9), 0);
	assert_int_equal(sp_nodeset_add_range(s, 63, 65), 0);
	assert_int_equal(sp_nodeset_add(s, 199), 0);
	fmt(s, buf, sizeof(buf));
	assert_string_equal(buf, "0-7,9,63-65,199");
	sp_nodeset_clear(s);
	assert_int_equal(sp_nodeset_add_range(s, 0, 199), 0);
	fmt(s, buf, sizeof(buf));
	assert_string_equal(buf, "0-199");
	sp_nodeset_destroy(s);
}

static void test_nodeset_format_reports_needed_length(void **state)
{
	sp_nodeset_t *s = mkset(32);
	char buf[64];
	int need;

	(void)state;
	assert_int_equal(sp_nodeset_parse(s, "0-7,9,12-13", NULL, 0), 0);
	need = sp_nodeset_format(s, NULL, 0);
	assert_int_equal(need, (int)strlen("0-7,9,12-13"));
	for (size_t len = 1; len <= (size_t)need; len++) {
		memset(buf, 'X', sizeof(buf));
		assert_int_equal(sp_nodeset_format(s, buf, len), need);
		/* never writes past len, always NUL-terminated within it */
		assert_true(memchr(buf, '\0', len) != NULL);
		for (size_t i = len; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 'X');
		/* what is there is a prefix of the full text */
		assert_int_equal(strncmp(buf, "0-7,9,12-13", strlen(buf)), 0);
	}
	assert_int_equal(sp_nodeset_format(s, buf, (size_t)need + 1), need);
	assert_string_equal(buf, "0-7,9,12-13");
	sp_nodeset_destroy(s);
}

static void test_nodeset_format_parse_round_trip(void **state)
{
	const uint32_t caps[] = {1, 7, 64, 65, 129, 1000};
	uint64_t rng = 0x5eed;

	(void)state;
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		for (int iter = 0; iter < 200; iter++) {
			sp_nodeset_t *a = mkset(caps[c]), *b = mkset(caps[c]);
			size_t len;
			char *buf;

			for (uint32_t i = 0; i < caps[c]; i++) {
				rng = rng * 6364136223846793005ULL +
				      1442695040888963407ULL;
				/* vary density so runs of all lengths appear */
				if ((rng >> 33) % 8 < (uint64_t)(iter % 8))
					assert_int_equal(sp_nodeset_add(a, i), 0);
			}
			len = (size_t)sp_nodeset_format(a, NULL, 0) + 1;
			buf = malloc(len);
			assert_non_null(buf);
			fmt(a, buf, len);
			assert_int_equal(sp_nodeset_parse(b, buf, NULL, 0), 0);
			assert_true(same(a, b));
			free(buf);
			sp_nodeset_destroy(a);
			sp_nodeset_destroy(b);
		}
	}
}

/* ---- fuzz ---------------------------------------------------------------- */

static void test_nodeset_parse_fuzz_never_half_applies(void **state)
{
	static const char alphabet[] = "0123456789,-,-, x9";
	sp_nodeset_t *s = mkset(40), *before = mkset(40), *again = mkset(40);
	uint64_t rng = 42;
	char text[24], out[256], err[256];
	int ok = 0, failed = 0;

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		size_t len;
		int rc;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		len = rng % (sizeof(text) - 1);
		for (size_t i = 0; i < len; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			/* mostly the parser's alphabet, sometimes any byte */
			text[i] = (rng >> 40) % 16 ?
					  alphabet[(rng >> 8) % (sizeof(alphabet) - 1)] :
					  (char)(1 + (rng >> 16) % 255);
		}
		text[len] = '\0';
		/* start from a pseudo-random set */
		sp_nodeset_clear(s);
		for (uint32_t i = 0; i < 40; i++)
			if ((rng >> (i % 64)) & 1)
				assert_int_equal(sp_nodeset_add(s, i), 0);
		assert_int_equal(sp_nodeset_copy(before, s), 0);
		rc = sp_nodeset_parse(s, text, err, sizeof(err));
		if (rc == 0) {
			ok++;
			fmt(s, out, sizeof(out));
			assert_int_equal(sp_nodeset_parse(again, out, NULL, 0), 0);
			assert_true(same(s, again));
		} else {
			failed++;
			assert_true(rc == -EINVAL || rc == -ERANGE);
			assert_true(same(before, s));
		}
	}
	/* the generator must exercise both outcomes */
	assert_true(ok > 100);
	assert_true(failed > 100);
	sp_nodeset_destroy(s);
	sp_nodeset_destroy(before);
	sp_nodeset_destroy(again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeset_create_rejects_bad_capacity),
		cmocka_unit_test(test_nodeset_add_del_has_count),
		cmocka_unit_test(test_nodeset_out_of_range_ids_change_nothing),
		cmocka_unit_test(test_nodeset_add_range_is_inclusive),
		cmocka_unit_test(test_nodeset_next_iterates_in_order),
		cmocka_unit_test(test_nodeset_copy_requires_same_capacity),
		cmocka_unit_test(test_nodeset_parse_range_list),
		cmocka_unit_test(test_nodeset_parse_syntax_errors_leave_set_untouched),
		cmocka_unit_test(test_nodeset_parse_beyond_capacity_is_erange),
		cmocka_unit_test(test_nodeset_parse_huge_id_is_erange),
		cmocka_unit_test(test_nodeset_parse_reversed_range_is_einval),
		cmocka_unit_test(test_nodeset_parse_rejects_null),
		cmocka_unit_test(test_nodeset_format_compresses_ranges),
		cmocka_unit_test(test_nodeset_format_reports_needed_length),
		cmocka_unit_test(test_nodeset_format_parse_round_trip),
		cmocka_unit_test(test_nodeset_parse_fuzz_never_half_applies),
	};

	return cmocka_run_group_tests_name("nodeset", tests, NULL, NULL);
}
