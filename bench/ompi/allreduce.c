/*
 * allreduce.c — Open MPI peer for Storm's COMPARE-AND-WRITE latency.
 *
 * Why it exists: `bench/run primitives` reports COMPARE-AND-WRITE latency at
 * N nodes next to the latency of the closest MPI operation, an 8-byte
 * MPI_Allreduce over N ranks (a global comparison "x >= v on every node" is
 * an allreduce with MPI_MIN followed by a test), and the ratio of the two.
 *
 * What is measured, so both sides use the same statistic: after a warm-up and
 * one barrier, the ranks run a barrier-free loop of ITERS allreduces of one
 * int64 with MPI_MIN; rank 0 times every iteration on its own with MPI_Wtime
 * (Storm times each COMPARE-AND-WRITE individually at its initiator), then
 * prints the median and the 99th percentile (nearest rank) in microseconds
 * as one JSON line:
 *     {"median_us":x,"p99_us":y,"min_us":z,"iters":k,"ranks":n}
 *
 * Usage: allreduce [--iters K] [--warmup W]      (defaults 2000 and 200)
 * Exit status: 0 on success, 1 on bad arguments or a wrong result.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define DEFAULT_ITERS 2000
#define DEFAULT_WARMUP 200

static int parse_args(int argc, char **argv, long *iters, long *warmup)
{
	for (int i = 1; i < argc; i++) {
		long *dst = NULL;

		if (strcmp(argv[i], "--iters") == 0)
			dst = iters;
		else if (strcmp(argv[i], "--warmup") == 0)
			dst = warmup;
		if (dst == NULL || i + 1 >= argc ||
		    bench_parse_pos(argv[i + 1], dst) != 0)
			return -1;
		i++;
	}
	return 0;
}

/* One allreduce; every rank contributes (rank + 1), so the minimum is 1. */
static int one_allreduce(int rank)
{
	int64_t mine = (int64_t)rank + 1;
	int64_t min = 0;

	MPI_Allreduce(&mine, &min, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
	return min == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	long iters = DEFAULT_ITERS;
	long warmup = DEFAULT_WARMUP;
	double *us = NULL;
	int rank, size, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	if (parse_args(argc, argv, &iters, &warmup) != 0) {
		if (rank == 0)
			fprintf(stderr,
				"usage: allreduce [--iters K] [--warmup W]\n");
		MPI_Finalize();
		return 1;
	}
	if (rank == 0) {
		us = malloc((size_t)iters * sizeof(*us));
		if (us == NULL) {
			fprintf(stderr, "allreduce: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}

	for (long i = 0; i < warmup; i++)
		bad |= one_allreduce(rank);
	MPI_Barrier(MPI_COMM_WORLD);

	for (long i = 0; i < iters; i++) {
		double t0 = MPI_Wtime();

		bad |= one_allreduce(rank);
		if (rank == 0)
			us[i] = (MPI_Wtime() - t0) * 1e6;
	}

	if (bad) {
		fprintf(stderr, "allreduce: rank %d got a wrong minimum\n",
			rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0) {
		double p99 = bench_quantile(us, (size_t)iters, 0.99);
		double med = bench_quantile(us, (size_t)iters, 0.50);

		printf("{\"median_us\":%.3f,\"p99_us\":%.3f,\"min_us\":%.3f,"
		       "\"iters\":%ld,\"ranks\":%d}\n",
		       med, p99, us[0], iters, size);
		fflush(stdout);
		free(us);
	}
	MPI_Finalize();
	return 0;
}
