/*
 * flood.c — rank 0 posts 3000 sends to rank 1 before rank 1 posts a
 * single receive: its ring of 256 descriptors fills, it sleeps until the
 * engine takes them (back-pressure), and every message arrives, in order
 * (tests/bcsmpi/test_jobs.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

#define N 3000

int main(int argc, char **argv)
{
	int rank;
	MPI_Request *r = malloc(N * sizeof(*r));
	int *vals = malloc(N * sizeof(int));

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		for (int i = 0; i < N; i++) {
			vals[i] = i;
			MPI_Isend(&vals[i], 1, MPI_INT, 1, 0, MPI_COMM_WORLD,
				  &r[i]);
		}
		MPI_Waitall(N, r, MPI_STATUSES_IGNORE);
	} else if (rank == 1) {
		usleep(200000); /* the sender fills its ring meanwhile */
		for (int i = 0; i < N; i++)
			MPI_Irecv(&vals[i], 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
				  &r[i]);
		MPI_Waitall(N, r, MPI_STATUSES_IGNORE);
		for (int i = 0; i < N; i++)
			if (vals[i] != i) {
				fprintf(stderr, "message %d carried %d\n", i,
					vals[i]);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
		printf("flood: %d messages in order\n", N);
	}
	MPI_Finalize();
	free(r);
	free(vals);
	return 0;
}
