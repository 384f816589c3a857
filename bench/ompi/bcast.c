/*
 * bcast.c — Open MPI peer for Storm's XFER-AND-SIGNAL bandwidth.
 *
 * Why it exists: `bench/run primitives` reports the bandwidth of one
 * XFER-AND-SIGNAL of B bytes (1 MiB) delivered to N nodes next to that of an
 * MPI_Bcast of B bytes over N ranks, and the ratio of the two.
 *
 * Completion must mean the same thing on both sides. A Storm XFER completes
 * at its source only once every destination holds the data (two-phase, all
 * or nothing); MPI_Bcast returns at the root as soon as the root's buffer may
 * be reused, possibly before any other rank has the data. So every timed
 * iteration is MPI_Bcast followed by an "all received" confirmation to the
 * root: an MPI_Reduce of one int (MPI_SUM) to rank 0, which each rank enters
 * only after its MPI_Bcast returned, i.e. once it holds all B bytes.
 * MPI_Reduce rather than MPI_Barrier because it is the cheapest way for Open
 * MPI to tell the root "everyone has it": a one-way fan-in tree of tiny
 * messages, the same shape as Storm's combining-tree acknowledgement, whereas
 * a barrier is an all-to-all exchange (recursive doubling / dissemination,
 * log2 N rounds that every rank must finish). Choosing the cheaper
 * confirmation can only favour Open MPI, never Storm.
 *
 * What is measured: after a warm-up and one barrier, ITERS iterations each
 * timed on rank 0 with MPI_Wtime; the figure is bandwidth = B / median time
 * in MB/s, MB = 10^6 bytes, counting the payload once (not once per
 * receiver). One JSON line on rank 0:
 *     {"mbs":x,"median_ms":y,"p99_ms":z,"bytes":b,"iters":k,"ranks":n}
 *
 * Usage: bcast [--bytes B] [--iters K] [--warmup W]
 *        (defaults 1048576, 50 and 5)
 * Exit status: 0 on success, 1 on bad arguments or corrupt data.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define DEFAULT_BYTES (1L << 20)
#define DEFAULT_ITERS 50
#define DEFAULT_WARMUP 5

struct args {
	long bytes;
	long iters;
	long warmup;
};

static int parse_args(int argc, char **argv, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		long *dst = NULL;

		if (strcmp(argv[i], "--bytes") == 0)
			dst = &a->bytes;
		else if (strcmp(argv[i], "--iters") == 0)
			dst = &a->iters;
		else if (strcmp(argv[i], "--warmup") == 0)
			dst = &a->warmup;
		if (dst == NULL || i + 1 >= argc ||
		    bench_parse_pos(argv[i + 1], dst) != 0)
			return -1;
		i++;
	}
	return a->bytes <= (long)INT_MAX ? 0 : -1;
}

/*
 * One broadcast of iteration `it` plus its confirmation. The root stamps the
 * first and last byte with the iteration number; receivers check them (O(1),
 * so the check costs nothing measurable). Returns 0, or -1 on corrupt data.
 */
static int one_bcast(unsigned char *buf, long bytes, long it, int rank,
		     int size)
{
	unsigned char stamp = (unsigned char)(it & 0xff);
	int one = 1, sum = 0, bad = 0;

	if (rank == 0) {
		buf[0] = stamp;
		buf[bytes - 1] = stamp;
	}
	MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (buf[0] != stamp || buf[bytes - 1] != stamp)
		bad = 1;
	MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && sum != size)
		bad = 1;
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct args a = { DEFAULT_BYTES, DEFAULT_ITERS, DEFAULT_WARMUP };
	unsigned char *buf;
	double *ms = NULL;
	int rank, size, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	if (parse_args(argc, argv, &a) != 0) {
		if (rank == 0)
			fprintf(stderr, "usage: bcast [--bytes B] "
					"[--iters K] [--warmup W]\n");
		MPI_Finalize();
		return 1;
	}
	buf = malloc((size_t)a.bytes);
	if (rank == 0)
		ms = malloc((size_t)a.iters * sizeof(*ms));
	if (buf == NULL || (rank == 0 && ms == NULL)) {
		fprintf(stderr, "bcast: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	/* Touch every page so no first-touch fault lands in a timed run. */
	memset(buf, 0xa5, (size_t)a.bytes);

	for (long i = 0; i < a.warmup; i++)
		bad |= one_bcast(buf, a.bytes, i, rank, size);
	MPI_Barrier(MPI_COMM_WORLD);

	for (long i = 0; i < a.iters; i++) {
		double t0 = MPI_Wtime();

		bad |= one_bcast(buf, a.bytes, a.warmup + i, rank, size);
		if (rank == 0)
			ms[i] = (MPI_Wtime() - t0) * 1e3;
	}

	if (bad) {
		fprintf(stderr, "bcast: rank %d saw corrupt data\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0) {
		double p99 = bench_quantile(ms, (size_t)a.iters, 0.99);
		double med = bench_quantile(ms, (size_t)a.iters, 0.50);
		double mbs = (double)a.bytes / 1e6 / (med / 1e3);

		printf("{\"mbs\":%.3f,\"median_ms\":%.4f,\"p99_ms\":%.4f,"
		       "\"bytes\":%ld,\"iters\":%ld,\"ranks\":%d}\n",
		       mbs, med, p99, a.bytes, a.iters, size);
		fflush(stdout);
		free(ms);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
