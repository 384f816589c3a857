/*
 * bcs_anyloop.c — a BCS-MPI job to checkpoint: ITERS iterations of rank
 * 0 taking one message from every other rank with MPI_ANY_SOURCE and
 * printing them in the order received, then an allreduce of a digest of
 * each rank's memory (MIB MiB it keeps rewriting).  The senders spin for
 * times that change with the rank and the iteration, so arrival order
 * varies from run to run; under BCS-MPI's deterministic matching the
 * output does not, and a run restored from a checkpoint prints what an
 * uninterrupted one does (tests/ckpt/test_ckpt_jobs.py bcs,
 * bench/run ckpt T5).
 *
 *   bcs_anyloop ITERS SPIN_MS MIB
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static void spin_ms(double ms)
{
	double end = MPI_Wtime() + ms / 1000.0;

	while (MPI_Wtime() < end)
		;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100;
	double spin = argc > 2 ? atof(argv[2]) : 20.0;
	size_t bytes = (size_t)(argc > 3 ? atoi(argv[3]) : 8) << 20;
	unsigned char *mem;
	uint64_t digest = 1469598103934665603ull;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!(mem = malloc(bytes)))
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(mem, rank, bytes);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < iters; i++) {
		unsigned long long sum, d;

		for (size_t k = (size_t)i * 4096 % bytes; k < bytes;
		     k += 65536)
			mem[k] = (unsigned char)(mem[k] * 31 + i + rank);
		if (rank == 0) {
			spin_ms(spin);
			for (int n = 1; n < size; n++) {
				int v[2];
				MPI_Status st;

				MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, i,
					 MPI_COMM_WORLD, &st);
				printf("iter %d: from %d value %d\n", i,
				       st.MPI_SOURCE, v[1]);
			}
		} else {
			int v[2] = { rank, rank * 1000 + i };

			/* the arrival order changes with the iteration */
			spin_ms(spin * ((i * 7 + rank * 3) % 5) / 4.0);
			MPI_Send(v, 2, MPI_INT, 0, i, MPI_COMM_WORLD);
		}
		d = 0;
		for (size_t k = 0; k < bytes; k += 4096)
			d = d * 1099511628211ull + mem[k];
		MPI_Allreduce(&d, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
			      MPI_COMM_WORLD);
		digest = digest * 31 + sum;
	}
	if (rank == 0)
		printf("done %d ranks digest %llu\n", size,
		       (unsigned long long)digest);
	free(mem);
	MPI_Finalize();
	return 0;
}
