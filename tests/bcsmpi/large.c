/*
 * large.c — messages from 0 bytes to 64 MiB between two ranks, each
 * checked byte for byte; the largest cross several slices (the engine
 * moves at most 8 MiB per slice).  tests/bcsmpi/test_jobs.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, size;
	size_t max = (size_t)64 << 20;
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	buf = malloc(max);
	for (size_t n = 0; n <= max; n = n ? n * 4 : 1) {
		MPI_Status st;
		int count;

		if (rank == 0) {
			for (size_t i = 0; i < n; i++)
				buf[i] = (unsigned char)(i * 31 + n);
			MPI_Send(buf, (int)n, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
		} else if (rank == 1) {
			memset(buf, 0, n);
			MPI_Recv(buf, (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
				 &st);
			MPI_Get_count(&st, MPI_BYTE, &count);
			if ((size_t)count != n) {
				fprintf(stderr, "%zu bytes: count %d\n", n,
					count);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
			for (size_t i = 0; i < n; i++)
				if (buf[i] != (unsigned char)(i * 31 + n)) {
					fprintf(stderr, "%zu bytes: byte %zu "
						"differs\n", n, i);
					MPI_Abort(MPI_COMM_WORLD, 2);
				}
		}
	}
	/* collectives over several slices: the engine moves at most 8 MiB
	 * of one a slice */
	for (size_t i = 0; i < max; i++)
		buf[i] = rank == 0 ? (unsigned char)(i * 13) : 0;
	MPI_Bcast(buf, (int)max, MPI_BYTE, 0, MPI_COMM_WORLD);
	for (size_t i = 0; i < max; i += 4093)
		if (buf[i] != (unsigned char)(i * 13)) {
			fprintf(stderr, "bcast: byte %zu differs\n", i);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	{
		size_t n = max / sizeof(double) / 2;
		double *v = (double *)buf, *w = (double *)(buf + max / 2);

		for (size_t i = 0; i < n; i++)
			v[i] = (double)(rank + 1) * (double)i;
		MPI_Allreduce(v, w, (int)n, MPI_DOUBLE, MPI_SUM,
			      MPI_COMM_WORLD);
		for (size_t i = 0; i < n; i += 997)
			if (w[i] != (double)i * size * (size + 1) / 2) {
				fprintf(stderr, "allreduce: element %zu is "
					"%g\n", i, w[i]);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
	}
	if (rank == 0)
		printf("large: all arrived (0 B to %zu MiB; bcast of %zu MiB, "
		       "allreduce of %zu MiB)\n", max >> 20, max >> 20,
		       max >> 21);
	free(buf);
	MPI_Finalize();
	return 0;
}
