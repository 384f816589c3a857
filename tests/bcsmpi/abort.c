/*
 * abort.c — rank 1 calls MPI_Abort(MPI_COMM_WORLD, 42) while rank 0
 * waits for a message that never comes: the job ends FAILED with the
 * code, never a hang (tests/bcsmpi/test_jobs.py).
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, v;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1)
		MPI_Abort(MPI_COMM_WORLD, 42);
	MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
