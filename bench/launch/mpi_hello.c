/*
 * mpi_hello.c — the MPI hello world of bench/run launch's MPI rows: MPI
 * startup and shutdown and nothing else, built with each MPI's own
 * compiler (mpicc.mpich, mpicc.openmpi) and run under stormctl run and
 * under that MPI's own launcher.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	printf("rank %d of %d\n", rank, size);
	MPI_Finalize();
	return 0;
}
