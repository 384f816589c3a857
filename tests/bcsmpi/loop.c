/*
 * loop.c — ITERS iterations of: compute SPIN_MS, then an allreduce, a
 * broadcast from a rotating root and a ring exchange, each result
 * checked.  Long enough to be gang-switched, or to live through a strobe
 * master's failover (tests/bcsmpi/test_jobs.py).
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100;
	double spin = (argc > 2 ? atof(argv[2]) : 2.0) / 1000.0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < iters; i++) {
		double end = MPI_Wtime() + spin;
		int v = rank + i, sum = 0, b = i * 7, left;

		while (MPI_Wtime() < end)
			;
		MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		if (sum != size * (size - 1) / 2 + size * i) {
			fprintf(stderr, "iteration %d: sum %d\n", i, sum);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		if (rank != i % size)
			b = -1;
		MPI_Bcast(&b, 1, MPI_INT, i % size, MPI_COMM_WORLD);
		MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, i, &left, 1,
			     MPI_INT, (rank + size - 1) % size, i,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (b != i * 7 || left != (rank + size - 1) % size) {
			fprintf(stderr, "iteration %d: bcast %d, left %d\n", i,
				b, left);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (rank == 0)
		printf("loop: %d iterations checked on %d ranks\n", iters,
		       size);
	MPI_Finalize();
	return 0;
}
