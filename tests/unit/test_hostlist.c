/*
 * test_hostlist.c — stormctl's folding of host names (cli/hostlist.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client.h"

static void check(const char *const *names, size_t n, const char *want)
{
	json_t *a = json_array();
	char buf[256];

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(names[i]));
	sc_fmt_hostlist(a, buf, sizeof(buf));
	json_decref(a);
	assert_string_equal(buf, want);
}

#define CHECK(want, ...)                                                    \
	do {                                                                \
		const char *const v[] = { __VA_ARGS__ };                   \
		check(v, sizeof(v) / sizeof(v[0]), want);                   \
	} while (0)

static void test_hostlist_folds_consecutive_numbers(void **state)
{
	(void)state;
	CHECK("nm[1-4]", "nm1", "nm2", "nm3", "nm4");
	CHECK("nm[1-3,7,9-10]", "nm1", "nm2", "nm3", "nm7", "nm9", "nm10");
}

static void test_hostlist_keeps_single_and_odd_names(void **state)
{
	(void)state;
	CHECK("nm3", "nm3");
	CHECK("login,nm[1-2]", "login", "nm1", "nm2");
	CHECK("n01,n02", "n01", "n02"); /* leading zeros: as they are */
	CHECK("a[1-2],b5", "a1", "a2", "b5");
}

static void test_hostlist_empty_and_short_buffer(void **state)
{
	json_t *a = json_array();
	char buf[8];

	(void)state;
	sc_fmt_hostlist(a, buf, sizeof(buf));
	assert_string_equal(buf, "");
	for (int i = 0; i < 20; i++)
		json_array_append_new(a, json_string(i % 2 ? "x" : "yy"));
	sc_fmt_hostlist(a, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf));
	assert_string_equal(buf + strlen(buf) - 3, "...");
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostlist_folds_consecutive_numbers),
		cmocka_unit_test(test_hostlist_keeps_single_and_odd_names),
		cmocka_unit_test(test_hostlist_empty_and_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
