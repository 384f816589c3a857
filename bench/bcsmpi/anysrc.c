/* bench-anysrc: a master/worker job whose master receives with
 * MPI_ANY_SOURCE, for the cost of BCS-MPI's deterministic matching
 * (`bench/run bcsmpi`, determinism_cost_pct).
 *
 *   bench-anysrc TASKS STEPS_PER_MS     (2 or more ranks)
 *
 * Rank 0 hands out TASKS tasks: every worker gets one, then whoever
 * returns a result (MPI_Recv from MPI_ANY_SOURCE) gets the next, until
 * all are done and each worker is told to stop (tag 2).  Task k is
 * 0.1 + (k % 7) * 0.1 ms of work() (spin.h).  Rank 0 prints one JSON line:
 * runtime_s (first task sent to the last stop), and order, a hash of
 * which worker returned each result in turn (the same on every run where
 * matching is deterministic). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 3 || size < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: bench-anysrc TASKS "
				"STEPS_PER_MS (2 or more ranks)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long tasks = atol(argv[1]);
	double per_ms = atof(argv[2]);
	volatile uint64_t sink = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	if (rank == 0) {
		long next = 0, done = 0;
		uint64_t order = 1469598103934665603ULL; /* FNV-1a */
		MPI_Status st;
		for (int w = 1; w < size; w++) {
			long k = next < tasks ? next++ : -1;
			MPI_Send(&k, 1, MPI_LONG, w, k < 0 ? 2 : 1,
				 MPI_COMM_WORLD);
		}
		while (done < tasks) {
			long res;
			MPI_Recv(&res, 1, MPI_LONG, MPI_ANY_SOURCE, 3,
				 MPI_COMM_WORLD, &st);
			done++;
			order = (order ^ (uint64_t)st.MPI_SOURCE) *
				1099511628211ULL;
			long k = next < tasks ? next++ : -1;
			MPI_Send(&k, 1, MPI_LONG, st.MPI_SOURCE,
				 k < 0 ? 2 : 1, MPI_COMM_WORLD);
		}
		double t = MPI_Wtime() - t0;
		printf("{\"ranks\":%d,\"tasks\":%ld,\"runtime_s\":%.6f,"
		       "\"order\":\"%016llx\"}\n", size, tasks, t,
		       (unsigned long long)order);
		fflush(stdout);
	} else {
		for (;;) {
			long k;
			MPI_Status st;
			MPI_Recv(&k, 1, MPI_LONG, 0, MPI_ANY_TAG,
				 MPI_COMM_WORLD, &st);
			if (st.MPI_TAG == 2)
				break;
			sink += work((uint64_t)((0.1 + (k % 7) * 0.1) *
						per_ms));
			MPI_Send(&k, 1, MPI_LONG, 0, 3, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return (int)(sink & 0);
}
