/*
 * mismatch.c — the ranks of MPI_COMM_WORLD call MPI_Bcast with different
 * roots: the engine sees the collective mismatch, and the job ends FAILED
 * with the call and the reason, never a hang (tests/bcsmpi/test_jobs.py).
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, v = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? 0 : 1, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
