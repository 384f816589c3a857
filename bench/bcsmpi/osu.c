/* bench-osu: OSU-style micro-benchmarks for `bench/run bcsmpi`
 * (bench/README.md).  Plain MPI: built with bcsmpicc, mpicc.openmpi and
 * mpicc.mpich alike.
 *
 *   bench-osu p2p ITERS LARGE_ITERS WINDOWS      (2 or more ranks; 0 and 1
 *                                                 measure, others wait)
 *     latency   ping-pong between ranks 0 and 1, MPI_Send + MPI_Recv;
 *               half the round trip, averaged over ITERS (8 B) and
 *               LARGE_ITERS (1 MiB) after a tenth as many unrecorded;
 *     bandwidth rank 0 posts a window of 64 MPI_Isend, MPI_Waitall, then
 *               waits for rank 1's 4-byte acknowledgement (rank 1: 64
 *               MPI_Irecv, MPI_Waitall, the acknowledgement); WINDOWS
 *               windows after one unrecorded; MB/s = 10^6 bytes/s of
 *               payload (1 MiB and 4 MiB messages).
 *   bench-osu coll ITERS LARGE_ITERS             (any number of ranks)
 *     MPI_Barrier, MPI_Allreduce of 8 bytes (one double, MPI_SUM), ITERS
 *     each, and MPI_Bcast of 1 MiB from rank 0, LARGE_ITERS, each call
 *     timed alone (a barrier between bcasts, not timed); the latency is
 *     the mean over ranks of each rank's mean time per call (OSU's "Avg
 *     Latency").
 * Received bytes and reduced values are checked (a wrong one aborts).
 * Rank 0 prints one JSON line of figures. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define MIB (1 << 20)

static int rank, size;

static void *xalloc(size_t n, int fill)
{
	char *p = malloc(n);
	if (!p) {
		fprintf(stderr, "bench-osu: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	memset(p, fill, n);
	return p;
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "bench-osu: rank %d: wrong data after %s\n",
			rank, what);
		MPI_Abort(MPI_COMM_WORLD, 4);
	}
}

static int filled(const char *p, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (char)c)
			return 0;
	return 1;
}

/* Half a round trip of bytes, in microseconds (rank 0's figure). */
static double latency(size_t bytes, int iters)
{
	int skip = iters / 10 > 2 ? iters / 10 : 2;
	char *s = xalloc(bytes ? bytes : 1, 'a' + rank);
	char *r = xalloc(bytes ? bytes : 1, 0);
	double t0 = 0, t = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < skip + iters; i++) {
		if (i == skip)
			t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(s, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(r, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(r, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(s, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	t = MPI_Wtime() - t0;
	if (rank < 2)
		check(filled(r, bytes, 'a' + !rank), "ping-pong");
	free(s);
	free(r);
	return t / (2.0 * iters) * 1e6;
}

/* Windowed bandwidth of bytes-sized messages, MB/s (rank 0's figure). */
static double bandwidth(size_t bytes, int windows)
{
	char *s = xalloc(bytes, rank == 0 ? 'x' : 0);
	char *r = xalloc(bytes, 0);
	int ack = 0;
	MPI_Request rq[WINDOW];
	double t0 = 0, t;

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 1 + windows; i++) {
		if (i == 1)
			t0 = MPI_Wtime();
		if (rank == 0) {
			for (int j = 0; j < WINDOW; j++)
				MPI_Isend(s, (int)bytes, MPI_BYTE, 1, 2,
					  MPI_COMM_WORLD, &rq[j]);
			MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (int j = 0; j < WINDOW; j++)
				MPI_Irecv(r, (int)bytes, MPI_BYTE, 0, 2,
					  MPI_COMM_WORLD, &rq[j]);
			MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
		}
	}
	t = MPI_Wtime() - t0;
	if (rank == 1)
		check(filled(r, bytes, 'x'), "the bandwidth windows");
	free(s);
	free(r);
	return (double)bytes * WINDOW * windows / t / 1e6;
}

/* The mean over ranks of this rank's mean seconds per call, in us. */
static double mean_over_ranks(double per_call_s)
{
	double sum = 0;
	MPI_Reduce(&per_call_s, &sum, 1, MPI_DOUBLE, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	return sum / size * 1e6;
}

static double barrier_lat(int iters)
{
	int skip = iters / 10 > 2 ? iters / 10 : 2;
	double t0 = 0;
	for (int i = 0; i < skip + iters; i++) {
		if (i == skip)
			t0 = MPI_Wtime();
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return mean_over_ranks((MPI_Wtime() - t0) / iters);
}

static double allreduce_lat(int iters)
{
	int skip = iters / 10 > 2 ? iters / 10 : 2;
	double t0 = 0, in, out = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < skip + iters; i++) {
		if (i == skip)
			t0 = MPI_Wtime();
		in = rank + i;
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM,
			      MPI_COMM_WORLD);
	}
	double t = MPI_Wtime() - t0;
	/* the last one: sum of rank + i over ranks */
	double want = (double)size * (skip + iters - 1) +
		      (double)size * (size - 1) / 2;
	check(out == want, "MPI_Allreduce");
	return mean_over_ranks(t / iters);
}

static double bcast_lat(size_t bytes, int iters)
{
	char *b = xalloc(bytes, rank == 0 ? 'b' : 0);
	double sum = 0;
	int skip = iters / 10 > 1 ? iters / 10 : 1;
	for (int i = 0; i < skip + iters; i++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		MPI_Bcast(b, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
		if (i >= skip)
			sum += MPI_Wtime() - t0;
	}
	check(filled(b, bytes, 'b'), "MPI_Bcast");
	free(b);
	return mean_over_ranks(sum / iters);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int p2p = argc == 5 && !strcmp(argv[1], "p2p");
	int coll = argc == 4 && !strcmp(argv[1], "coll");
	if ((!p2p && !coll) || (p2p && size < 2)) {
		if (rank == 0)
			fprintf(stderr, "usage: bench-osu p2p ITERS "
				"LARGE_ITERS WINDOWS (2 or more ranks) | "
				"coll ITERS LARGE_ITERS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int iters = atoi(argv[2]), large = atoi(argv[3]);
	if (iters < 1)
		iters = 1;
	if (large < 1)
		large = 1;
	if (p2p) {
		int windows = atoi(argv[4]) < 1 ? 1 : atoi(argv[4]);
		double l8 = latency(8, iters);
		double l1m = latency(MIB, large);
		double b1m = bandwidth(MIB, windows);
		double b4m = bandwidth(4 * MIB, windows);
		if (rank == 0)
			printf("{\"test\":\"p2p\",\"ranks\":%d,"
			       "\"lat_us_8b\":%.3f,\"lat_us_1m\":%.3f,"
			       "\"bw_mbs_1m\":%.1f,\"bw_mbs_4m\":%.1f,"
			       "\"window\":%d,\"windows\":%d}\n", size, l8,
			       l1m, b1m, b4m, WINDOW, windows);
	} else {
		double bar = barrier_lat(iters);
		double ar = allreduce_lat(iters);
		double bc = bcast_lat(MIB, large);
		if (rank == 0)
			printf("{\"test\":\"coll\",\"ranks\":%d,"
			       "\"barrier_us\":%.3f,\"allreduce_us_8b\":%.3f,"
			       "\"bcast_us_1m\":%.3f}\n", size, bar, ar, bc);
	}
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
