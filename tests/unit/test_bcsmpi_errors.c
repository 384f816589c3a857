/*
 * test_bcsmpi_errors.c — MPI_Error_class and MPI_Error_string
 * (bcsmpi/errors.c): a text for every MPI-3.1 error class, and invalid
 * codes refused without touching the caller's buffers.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mpi.h"

/* Every predefined class: MPI_SUCCESS .. MPI_T_ERR_INVALID but 54, which
 * MPICH leaves unused. */
static int is_class(int c)
{
	return c >= MPI_SUCCESS && c <= MPI_T_ERR_INVALID && c != 54;
}

static void test_error_string_names_every_class(void **state)
{
	static char seen[MPI_T_ERR_INVALID + 1][MPI_MAX_ERROR_STRING];

	(void)state;
	for (int c = 0; c <= MPI_T_ERR_INVALID; c++) {
		int len = -1;

		if (!is_class(c))
			continue;
		assert_int_equal(PMPI_Error_string(c, seen[c], &len),
			MPI_SUCCESS);
		assert_int_equal(len, (int)strlen(seen[c]));
		assert_true(len > 4 && len < MPI_MAX_ERROR_STRING);
		/* starts with the class's name: "MPI_ERR_TAG: ..." */
		assert_true(strncmp(seen[c], "MPI_", 4) == 0);
		assert_non_null(strstr(seen[c], ": "));
		for (int d = 0; d < c; d++)
			if (is_class(d))
				assert_string_not_equal(seen[c], seen[d]);
	}
}

static void test_error_string_names_classes_as_mpi_h_does(void **state)
{
	char s[MPI_MAX_ERROR_STRING];
	int len;

	(void)state;
	assert_int_equal(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len),
		MPI_SUCCESS);
	assert_true(strncmp(s, "MPI_ERR_TRUNCATE: ", 18) == 0);
	assert_int_equal(MPI_Error_string(MPI_SUCCESS, s, &len), MPI_SUCCESS);
	assert_true(strncmp(s, "MPI_SUCCESS: ", 13) == 0);
	assert_int_equal(MPI_Error_string(MPI_T_ERR_INVALID, s, &len),
		MPI_SUCCESS);
	assert_true(strncmp(s, "MPI_T_ERR_INVALID: ", 19) == 0);
}

static void test_error_class_of_a_class_is_itself(void **state)
{
	(void)state;
	for (int c = 0; c <= MPI_T_ERR_INVALID; c++) {
		int cls = -1;

		if (!is_class(c))
			continue;
		assert_int_equal(MPI_Error_class(c, &cls), MPI_SUCCESS);
		assert_int_equal(cls, c);
	}
}

static void test_invalid_code_is_err_arg_and_changes_nothing(void **state)
{
	const int bad[] = { -1, 54, MPI_T_ERR_INVALID + 1, MPI_ERR_LASTCODE,
			    INT_MAX, INT_MIN };
	char s[MPI_MAX_ERROR_STRING];

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int cls = 12345, len = 12345;

		memset(s, 'x', sizeof s);
		assert_int_equal(MPI_Error_class(bad[i], &cls), MPI_ERR_ARG);
		assert_int_equal(cls, 12345);
		assert_int_equal(MPI_Error_string(bad[i], s, &len),
			MPI_ERR_ARG);
		assert_int_equal(len, 12345);
		assert_int_equal(s[0], 'x');
	}
}

static void test_null_arguments_are_err_arg(void **state)
{
	char s[MPI_MAX_ERROR_STRING];
	int len;

	(void)state;
	assert_int_equal(MPI_Error_class(MPI_ERR_TAG, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Error_string(MPI_ERR_TAG, NULL, &len),
		MPI_ERR_ARG);
	assert_int_equal(MPI_Error_string(MPI_ERR_TAG, s, NULL), MPI_ERR_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_string_names_every_class),
		cmocka_unit_test(test_error_string_names_classes_as_mpi_h_does),
		cmocka_unit_test(test_error_class_of_a_class_is_itself),
		cmocka_unit_test(
			test_invalid_code_is_err_arg_and_changes_nothing),
		cmocka_unit_test(test_null_arguments_are_err_arg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
