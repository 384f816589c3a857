/*
 * test_bcsmpi_wtime.c — MPI_Wtime and MPI_Wtick (bcsmpi/wtime.c): seconds
 * on a clock that never goes back, with a resolution worth timing with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "mpi.h"

static void test_wtime_never_goes_back(void **state)
{
	double prev = MPI_Wtime();

	(void)state;
	for (int i = 0; i < 100000; i++) {
		double now = MPI_Wtime();

		assert_true(now >= prev);
		prev = now;
	}
}

static void test_wtime_counts_seconds(void **state)
{
	struct timespec fifty_ms = { 0, 50000000 };
	double t0, dt;

	(void)state;
	t0 = MPI_Wtime();
	nanosleep(&fifty_ms, NULL);
	dt = MPI_Wtime() - t0;
	assert_true(dt >= 0.049);
	assert_true(dt < 5.0);
}

static void test_wtick_is_the_clock_resolution(void **state)
{
	double tick = MPI_Wtick();

	(void)state;
	assert_true(tick > 0.0);
	assert_true(tick <= 1e-6);
	assert_true(PMPI_Wtick() == tick);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wtime_never_goes_back),
		cmocka_unit_test(test_wtime_counts_seconds),
		cmocka_unit_test(test_wtick_is_the_clock_resolution),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
