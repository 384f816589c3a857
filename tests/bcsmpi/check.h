/*
 * check.h — what the MPI test programs of tests/bcsmpi share: the rank
 * and size, CHECK (a failed check names the rank and line and ends the
 * job through MPI_Abort), ok() ("ok NAME" from rank 0 once every rank
 * got there), init() and finish().  Plain MPI: built by bcsmpicc and by mpicc.mpich alike.
 */
#ifndef BCSMPI_TEST_CHECK_H
#define BCSMPI_TEST_CHECK_H

#include <stdio.h>

#include <mpi.h>

static int rank, size;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__,   \
				__LINE__);                                    \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			MPI_Abort(MPI_COMM_WORLD, 3);                         \
		}                                                             \
	} while (0)

static void ok(const char *what)
{
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok %s\n", what);
	fflush(stdout);
}

/* MPI_Init, and this rank and the size of MPI_COMM_WORLD. */
static inline void init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
}

/* "NAME: all passed on N ranks" from rank 0, MPI_Finalize; main's
 * return. */
static inline int finish(const char *name)
{
	if (rank == 0)
		printf("%s: all passed on %d ranks\n", name, size);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}

#endif
