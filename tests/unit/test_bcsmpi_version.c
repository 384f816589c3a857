/*
 * test_bcsmpi_version.c — MPI_Get_version and MPI_Get_library_version
 * (bcsmpi/version.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mpi.h"

static void test_version_is_mpi_3_1(void **state)
{
	int v = 0, s = 0;

	(void)state;
	assert_int_equal(MPI_Get_version(&v, &s), MPI_SUCCESS);
	assert_int_equal(v, 3);
	assert_int_equal(s, 1);
	assert_int_equal(v, MPI_VERSION);
	assert_int_equal(s, MPI_SUBVERSION);
}

static void test_library_version_names_storm_and_its_version(void **state)
{
	char buf[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = -1;

	(void)state;
	memset(buf, 'x', sizeof buf);
	assert_int_equal(MPI_Get_library_version(buf, &len), MPI_SUCCESS);
	assert_string_equal(buf, "Storm BCS-MPI " STORM_VERSION);
	assert_int_equal(len, (int)strlen(buf));
}

static void test_null_arguments_are_err_arg(void **state)
{
	char buf[MPI_MAX_LIBRARY_VERSION_STRING];
	int v, len;

	(void)state;
	assert_int_equal(MPI_Get_version(NULL, &v), MPI_ERR_ARG);
	assert_int_equal(MPI_Get_version(&v, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Get_library_version(NULL, &len), MPI_ERR_ARG);
	assert_int_equal(MPI_Get_library_version(buf, NULL), MPI_ERR_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_is_mpi_3_1),
		cmocka_unit_test(
			test_library_version_names_storm_and_its_version),
		cmocka_unit_test(test_null_arguments_are_err_arg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
