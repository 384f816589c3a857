/*
 * anysource.c — rank 0 takes every other rank's messages with
 * MPI_ANY_SOURCE and prints them in the order received; the senders
 * compute between sends for times that change with the run (argv[1])
 * and the rank.  With BCS-MPI's deterministic matching the output is the
 * same on every run, under any load (tests/bcsmpi/test_jobs.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

#define K 12

static void spin_ms(int ms)
{
	double end = MPI_Wtime() + ms / 1000.0;

	while (MPI_Wtime() < end)
		;
}

int main(int argc, char **argv)
{
	int rank, size, run = argc > 1 ? atoi(argv[1]) : 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0) {
		for (int n = 0; n < K * (size - 1); n++) {
			int v[2];
			MPI_Status st;

			MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
				 MPI_COMM_WORLD, &st);
			printf("%d: from %d tag %d value %d\n", n,
			       st.MPI_SOURCE, st.MPI_TAG, v[1]);
		}
	} else {
		for (int i = 0; i < K; i++) {
			int v[2] = { rank, rank * 100 + i };

			spin_ms((run * 7 + rank * 3 + i * 5) % 4);
			MPI_Send(v, 2, MPI_INT, 0, i % 3, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
