/*
 * test_bcsmpi_state.c — the lifecycle phase (bcsmpi/state.c, table in
 * bcs_state.h) and MPI_Initialized / MPI_Finalized on it.  The phase is
 * per process and only moves forward, so each test runs in a child process
 * of its own and reports through its exit status.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bcs_state.h"
#include "mpi.h"

/* In a child: name the failed check on stderr and _exit(1). */
#define EXPECT(cond)                                                        \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,  \
				#cond);                                     \
			_exit(1);                                           \
		}                                                           \
	} while (0)

static void in_child(void (*body)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		body();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void flags(int *initialized, int *finalized)
{
	EXPECT(MPI_Initialized(initialized) == MPI_SUCCESS);
	EXPECT(MPI_Finalized(finalized) == MPI_SUCCESS);
}

static void before_init(void)
{
	int i = -1, f = -1;

	EXPECT(bcs_state_phase() == BCS_PHASE_UNINITIALIZED);
	flags(&i, &f);
	EXPECT(i == 0 && f == 0);
}

static void test_neither_initialized_nor_finalized_at_start(void **state)
{
	(void)state;
	in_child(before_init);
}

static void lifecycle(void)
{
	int i = -1, f = -1;

	EXPECT(bcs_state_advance(BCS_PHASE_INITIALIZED) == MPI_SUCCESS);
	flags(&i, &f);
	EXPECT(i == 1 && f == 0);
	EXPECT(bcs_state_advance(BCS_PHASE_FINALIZED) == MPI_SUCCESS);
	flags(&i, &f);
	/* still "initialized" after MPI_Finalize, as the standard says */
	EXPECT(i == 1 && f == 1);
}

static void test_init_then_finalize_sets_both_flags(void **state)
{
	(void)state;
	in_child(lifecycle);
}

static void illegal(void)
{
	int i = -1, f = -1;

	/* finalize before init */
	EXPECT(bcs_state_advance(BCS_PHASE_FINALIZED) == MPI_ERR_OTHER);
	EXPECT(bcs_state_advance(BCS_PHASE_UNINITIALIZED) == MPI_ERR_OTHER);
	EXPECT(bcs_state_phase() == BCS_PHASE_UNINITIALIZED);
	EXPECT(bcs_state_advance(BCS_PHASE_INITIALIZED) == MPI_SUCCESS);
	/* init twice */
	EXPECT(bcs_state_advance(BCS_PHASE_INITIALIZED) == MPI_ERR_OTHER);
	EXPECT(bcs_state_advance(BCS_PHASE_FINALIZED) == MPI_SUCCESS);
	/* anything after finalize */
	EXPECT(bcs_state_advance(BCS_PHASE_INITIALIZED) == MPI_ERR_OTHER);
	EXPECT(bcs_state_advance(BCS_PHASE_FINALIZED) == MPI_ERR_OTHER);
	EXPECT(bcs_state_phase() == BCS_PHASE_FINALIZED);
	flags(&i, &f);
	EXPECT(i == 1 && f == 1);
}

static void test_illegal_transitions_are_refused(void **state)
{
	(void)state;
	in_child(illegal);
}

#define RACERS 8

static void *race(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)(bcs_state_advance(BCS_PHASE_INITIALIZED) ==
		MPI_SUCCESS);
}

static void racing_init(void)
{
	pthread_t t[RACERS];
	intptr_t wins = 0;

	for (int k = 0; k < RACERS; k++)
		EXPECT(pthread_create(&t[k], NULL, race, NULL) == 0);
	for (int k = 0; k < RACERS; k++) {
		void *won;

		EXPECT(pthread_join(t[k], &won) == 0);
		wins += (intptr_t)won;
	}
	EXPECT(wins == 1);
}

static void test_racing_initializations_have_one_winner(void **state)
{
	(void)state;
	in_child(racing_init);
}

static void test_null_flag_is_err_arg(void **state)
{
	(void)state;
	assert_int_equal(MPI_Initialized(NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Finalized(NULL), MPI_ERR_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_neither_initialized_nor_finalized_at_start),
		cmocka_unit_test(test_init_then_finalize_sets_both_flags),
		cmocka_unit_test(test_illegal_transitions_are_refused),
		cmocka_unit_test(test_racing_initializations_have_one_winner),
		cmocka_unit_test(test_null_flag_is_err_arg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
