/* bench-synth: the synthetic loops of the buffered-coscheduling paper,
 * for `bench/run bcsmpi` (bench/README.md).  Plain MPI: built with
 * bcsmpicc, mpicc.openmpi and mpicc.mpich alike.
 *
 *   bench-synth LOOP G_MS ITERS STEPS_PER_MS
 *
 * Every iteration computes G_MS milliseconds (work(G_MS * STEPS_PER_MS)
 * of spin.h; STEPS_PER_MS from bench-calib) and then, by LOOP:
 *   barrier   MPI_Barrier on MPI_COMM_WORLD;
 *   stencil   a halo exchange on a periodic 2-D grid of the ranks
 *             (MPI_Dims_create, MPI_Cart_create, MPI_Cart_shift): 4 KiB
 *             to and from each of the 4 neighbours, 4 MPI_Irecv and 4
 *             MPI_Isend, then MPI_Waitall (2 ranks: a 2x1 grid, so one
 *             pair of neighbours is the other rank and the other pair
 *             this rank itself);
 *   compute   nothing: the baseline, what sharing the cores costs alone.
 * The time runs on rank 0 from a barrier before the loop to the loop's
 * end; after stencil and compute a final barrier is inside it, so every
 * rank has finished.
 *
 * Rank 0 prints one JSON line: loop, ranks, g_ms, iters, runtime_s,
 * nominal_s (ITERS * G_MS), overhead_pct (over nominal: on an
 * oversubscribed machine not the figure to read; bench.py takes the
 * overhead over the compute loop), compute_s (the mean over ranks of the
 * time inside work()), start_s and end_s (rank 0's CLOCK_MONOTONIC at
 * the loop's start and end: one clock for every process of the machine,
 * so two jobs' spans can be put together). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

#define HALO 4096 /* bytes to each neighbour */

enum loop { L_BARRIER, L_STENCIL, L_COMPUTE };

struct grid {
	MPI_Comm comm;
	int lo[2], hi[2]; /* neighbours below and above, per dimension */
	char *out, *in;   /* 4 halos each */
};

static void grid_make(struct grid *g)
{
	int size, dims[2] = {0, 0}, periods[2] = {1, 1};

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Dims_create(size, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g->comm);
	for (int d = 0; d < 2; d++)
		MPI_Cart_shift(g->comm, d, 1, &g->lo[d], &g->hi[d]);
	g->out = calloc(4, HALO);
	g->in = calloc(4, HALO);
	if (!g->out || !g->in)
		MPI_Abort(MPI_COMM_WORLD, 3);
}

/* One exchange: the halo that travels up dimension d has tag 2d, the one
 * that travels down 2d + 1, so a rank that is its own neighbour (or both
 * of another's) still matches each message to its slot. */
static void grid_exchange(struct grid *g)
{
	MPI_Request rq[8];
	int k = 0;

	for (int d = 0; d < 2; d++) {
		MPI_Irecv(g->in + (2 * d) * HALO, HALO, MPI_BYTE, g->lo[d],
			  2 * d, g->comm, &rq[k++]);
		MPI_Irecv(g->in + (2 * d + 1) * HALO, HALO, MPI_BYTE,
			  g->hi[d], 2 * d + 1, g->comm, &rq[k++]);
	}
	for (int d = 0; d < 2; d++) {
		MPI_Isend(g->out + (2 * d) * HALO, HALO, MPI_BYTE, g->hi[d],
			  2 * d, g->comm, &rq[k++]);
		MPI_Isend(g->out + (2 * d + 1) * HALO, HALO, MPI_BYTE,
			  g->lo[d], 2 * d + 1, g->comm, &rq[k++]);
	}
	MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
}

static void grid_free(struct grid *g)
{
	MPI_Comm_free(&g->comm);
	free(g->out);
	free(g->in);
}

int main(int argc, char **argv)
{
	int rank, size;
	enum loop loop;
	struct grid g;
	volatile uint64_t sink = 0;
	double inside = 0, inside_sum = 0, t0, t, start, end;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 5) {
		if (rank == 0)
			fprintf(stderr, "usage: bench-synth barrier|stencil|"
				"compute G_MS ITERS STEPS_PER_MS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (!strcmp(argv[1], "barrier"))
		loop = L_BARRIER;
	else if (!strcmp(argv[1], "stencil"))
		loop = L_STENCIL;
	else if (!strcmp(argv[1], "compute"))
		loop = L_COMPUTE;
	else {
		if (rank == 0)
			fprintf(stderr, "bench-synth: unknown loop '%s'\n",
				argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 2);
		return 2;
	}
	double g_ms = atof(argv[2]);
	long iters = atol(argv[3]);
	uint64_t steps = (uint64_t)(g_ms * atof(argv[4]));

	if (loop == L_STENCIL)
		grid_make(&g);

	MPI_Barrier(MPI_COMM_WORLD);
	start = mono_s();
	t0 = MPI_Wtime();
	for (long i = 0; i < iters; i++) {
		double c0 = mono_s();
		sink += work(steps);
		inside += mono_s() - c0;
		if (loop == L_BARRIER)
			MPI_Barrier(MPI_COMM_WORLD);
		else if (loop == L_STENCIL)
			grid_exchange(&g);
	}
	if (loop != L_BARRIER)
		MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime() - t0;
	end = mono_s();

	MPI_Reduce(&inside, &inside_sum, 1, MPI_DOUBLE, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (rank == 0) {
		double nominal = (double)iters * g_ms / 1e3;
		printf("{\"loop\":\"%s\",\"ranks\":%d,\"g_ms\":%g,"
		       "\"iters\":%ld,\"runtime_s\":%.6f,\"nominal_s\":%.6f,"
		       "\"overhead_pct\":%.3f,\"compute_s\":%.6f,"
		       "\"start_s\":%.6f,\"end_s\":%.6f}\n",
		       argv[1], size, g_ms, iters, t, nominal,
		       nominal > 0 ? 100 * (t - nominal) / nominal : 0.0,
		       inside_sum / size, start, end);
		fflush(stdout);
	}
	if (loop == L_STENCIL)
		grid_free(&g);
	MPI_Finalize();
	return (int)(sink & 0);
}
