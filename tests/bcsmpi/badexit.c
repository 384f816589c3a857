/*
 * badexit.c — rank 1 exits without MPI_Finalize while the others wait
 * for it in a barrier: the job must end FAILED naming rank 1, with no
 * rank left hanging (tests/bcsmpi/test_jobs.py); what rank 1 printed
 * before it left reaches the user all the same.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1) {
		printf("rank 1: leaving without MPI_Finalize\n");
		fprintf(stderr, "rank 1: on stderr too\n");
		exit(0);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
