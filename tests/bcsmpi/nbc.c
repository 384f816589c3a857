/*
 * nbc.c — non-blocking collectives and Alltoallw, each result checked
 * against what the blocking collective gives (tests/bcsmpi/test_jobs.py,
 * test "nbc", 1 to 4 ranks; also under Debian's MPICH itself): an
 * Ibarrier overlapped with compute (Test in the loop), Ibcast of ints
 * and of a strided vector, Ireduce and Iallreduce with MPI_SUM (the
 * engine's) and with a non-commutative user operation (messages, two
 * phases for Iallreduce) with point-to-point traffic in between, three
 * outstanding at once completed in reverse order, every gather, scatter
 * and all-to-all (v and w too), Ireduce_scatter(_block), Iscan, Iexscan,
 * Alltoallw, Comm_idup, and bad arguments' error classes.  Prints "ok NAME" per
 * group and "nbc: all passed on N ranks" from rank 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static int cls(int rc)
{
	int c = rc;

	MPI_Error_class(rc, &c);
	return c;
}

/* Decimal digits appended in rank order: associative, not commutative
 * (a ranks' order mistake changes the result). */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	long long *a = in, *b = inout;

	(void)dt;
	for (int i = 0; i < *len; i++) {
		long long m = 1;

		while (m <= b[i])
			m *= 10;
		b[i] = a[i] * m + b[i];
	}
}

static long long digits(int upto)
{
	long long v = 0;

	for (int r = 0; r <= upto; r++)
		v = v * 10 + (r + 1);
	return v;
}

static void test_overlap(void)
{
	MPI_Request r;
	int flag = 0;
	long spins = 0;
	double x = 1.0;

	MPI_Ibarrier(MPI_COMM_WORLD, &r);
	while (!flag) {
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9; /* compute */
		MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		spins++;
	}
	CHECK(r == MPI_REQUEST_NULL && spins >= 1 && x > 1.0,
	      "Ibarrier: request %#x after %ld tests", (unsigned)r, spins);
	/* and with a blocking barrier between start and wait */
	MPI_Ibarrier(MPI_COMM_WORLD, &r);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	ok("overlap");
}

static void test_bcast_reduce(void)
{
	int v[6], strided[12], next = (rank + 1) % size;
	int prev = (rank + size - 1) % size, got = -1;
	long long mine = rank + 1, cat = 0, cat_all[3] = { 0 }, in[3];
	double sum = 0, all = 0, val = rank + 0.5;
	MPI_Datatype every_other;
	MPI_Request r[3], p[2];
	MPI_Op op;

	for (int i = 0; i < 6; i++)
		v[i] = rank == size - 1 ? 100 + i : -1;
	MPI_Ibcast(v, 6, MPI_INT, size - 1, MPI_COMM_WORLD, &r[0]);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	for (int i = 0; i < 6; i++)
		CHECK(v[i] == 100 + i, "Ibcast v[%d] = %d", i, v[i]);
	MPI_Type_vector(6, 1, 2, MPI_INT, &every_other);
	MPI_Type_commit(&every_other);
	for (int i = 0; i < 12; i++)
		strided[i] = rank == 0 ? (i % 2 ? -5 : i) : (i % 2 ? -5 : -1);
	MPI_Ibcast(strided, 1, every_other, 0, MPI_COMM_WORLD, &r[0]);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	for (int i = 0; i < 12; i++)
		CHECK(strided[i] == (i % 2 ? -5 : i), "strided Ibcast [%d] = "
		      "%d", i, strided[i]);
	MPI_Type_free(&every_other);

	/* the engine's reductions, and a user operation's messages, with
	 * point-to-point traffic while they run */
	MPI_Op_create(concat, 0, &op);
	MPI_Ireduce(&val, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD,
		    &r[0]);
	MPI_Iallreduce(&mine, &cat, 1, MPI_LONG_LONG, op, MPI_COMM_WORLD,
		       &r[1]);
	MPI_Iallreduce(&val, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
		       &r[2]);
	MPI_Irecv(&got, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, &p[0]);
	MPI_Isend(&rank, 1, MPI_INT, next, 9, MPI_COMM_WORLD, &p[1]);
	MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
	CHECK(got == prev, "p2p among collectives: %d", got);
	/* completed in reverse order */
	MPI_Wait(&r[2], MPI_STATUS_IGNORE);
	MPI_Wait(&r[1], MPI_STATUS_IGNORE);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	CHECK(all == size * size / 2.0, "Iallreduce SUM %g", all);
	CHECK(rank != 0 || sum == size * size / 2.0, "Ireduce SUM %g", sum);
	CHECK(cat == digits(size - 1), "Iallreduce of a non-commutative op: "
	      "%lld, want %lld", cat, digits(size - 1));
	/* several of one kind at once, Waitall */
	for (int k = 0; k < 3; k++) {
		in[k] = rank + 1;
		MPI_Iallreduce(&in[k], &cat_all[k], 1, MPI_LONG_LONG, op,
			       MPI_COMM_WORLD, &r[k]);
	}
	MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
	for (int k = 0; k < 3; k++)
		CHECK(cat_all[k] == digits(size - 1), "Iallreduce %d: %lld", k,
		      cat_all[k]);
	MPI_Op_free(&op);
	ok("bcast_reduce");
}

static void test_gathers(void)
{
	int send[8], recv[64], want[64], counts[8], displs[8], rcounts[8];
	int rdispls[8], one = rank * 10 + 1;
	MPI_Request r;
	MPI_Datatype types[8];
	int wd[8], wr[8];

	/* Igather to the last rank against the blocking Gather */
	for (int i = 0; i < 2; i++)
		send[i] = rank * 100 + i;
	MPI_Igather(send, 2, MPI_INT, recv, 2, MPI_INT, size - 1,
		    MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Gather(send, 2, MPI_INT, want, 2, MPI_INT, size - 1,
		   MPI_COMM_WORLD);
	CHECK(rank != size - 1 || !memcmp(recv, want, 2 * size * sizeof(int)),
	      "Igather");
	/* Igatherv: rank k sends k + 1 */
	for (int k = 0; k < size; k++) {
		counts[k] = k + 1;
		displs[k] = k * 4;
	}
	for (int i = 0; i <= rank; i++)
		send[i] = rank * 10 + i;
	memset(recv, 0, sizeof(recv));
	MPI_Igatherv(send, rank + 1, MPI_INT, recv, counts, displs, MPI_INT,
		     0, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int k = 0; rank == 0 && k < size; k++)
		for (int i = 0; i <= k; i++)
			CHECK(recv[k * 4 + i] == k * 10 + i, "Igatherv [%d][%d]"
			      " = %d", k, i, recv[k * 4 + i]);
	/* Iscatter and Iscatterv from rank 0 */
	for (int i = 0; i < 64; i++)
		want[i] = 1000 + i;
	MPI_Iscatter(want, 3, MPI_INT, recv, 3, MPI_INT, 0, MPI_COMM_WORLD,
		     &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int i = 0; i < 3; i++)
		CHECK(recv[i] == 1000 + rank * 3 + i, "Iscatter [%d] = %d", i,
		      recv[i]);
	MPI_Iscatterv(want, counts, displs, MPI_INT, recv, rank + 1, MPI_INT,
		      0, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int i = 0; i <= rank; i++)
		CHECK(recv[i] == 1000 + rank * 4 + i, "Iscatterv [%d] = %d", i,
		      recv[i]);
	/* Iallgather and Iallgatherv */
	MPI_Iallgather(&one, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int k = 0; k < size; k++)
		CHECK(recv[k] == k * 10 + 1, "Iallgather [%d] = %d", k,
		      recv[k]);
	MPI_Iallgatherv(send, rank + 1, MPI_INT, recv, counts, displs,
			MPI_INT, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int k = 0; k < size; k++)
		for (int i = 0; i <= k; i++)
			CHECK(recv[k * 4 + i] == k * 10 + i, "Iallgatherv "
			      "[%d][%d] = %d", k, i, recv[k * 4 + i]);
	/* Ialltoall(v,w) and Alltoallw: block k of rank r is r * 100 + k */
	for (int k = 0; k < size; k++) {
		send[k] = rank * 100 + k;
		counts[k] = 1;
		displs[k] = k;
		rcounts[k] = 1;
		rdispls[k] = 2 * k;
		types[k] = MPI_INT;
		wd[k] = k * (int)sizeof(int);
		wr[k] = 2 * k * (int)sizeof(int);
	}
	MPI_Ialltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int k = 0; k < size; k++)
		CHECK(recv[k] == k * 100 + rank, "Ialltoall [%d] = %d", k,
		      recv[k]);
	memset(recv, 0xff, sizeof(recv));
	MPI_Ialltoallv(send, counts, displs, MPI_INT, recv, rcounts, rdispls,
		       MPI_INT, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int k = 0; k < size; k++)
		CHECK(recv[2 * k] == k * 100 + rank && recv[2 * k + 1] == -1,
		      "Ialltoallv [%d] = %d", k, recv[2 * k]);
	memset(recv, 0xff, sizeof(recv));
	MPI_Alltoallw(send, counts, wd, types, recv, rcounts, wr, types,
		      MPI_COMM_WORLD);
	for (int k = 0; k < size; k++)
		CHECK(recv[2 * k] == k * 100 + rank && recv[2 * k + 1] == -1,
		      "Alltoallw [%d] = %d", k, recv[2 * k]);
	memset(recv, 0xff, sizeof(recv));
	MPI_Ialltoallw(send, counts, wd, types, recv, rcounts, wr, types,
		       MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int k = 0; k < size; k++)
		CHECK(recv[2 * k] == k * 100 + rank, "Ialltoallw [%d] = %d", k,
		      recv[2 * k]);
	ok("gathers");
}

static void test_scans(void)
{
	int v[8], out[8], scan = -1, ex = -1, counts[8];
	MPI_Request r[2];

	for (int k = 0; k < size; k++) {
		v[k] = rank + k;
		counts[k] = 1;
	}
	MPI_Ireduce_scatter_block(v, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
				  &r[0]);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	CHECK(out[0] == size * (size - 1) / 2 + size * rank,
	      "Ireduce_scatter_block %d", out[0]);
	MPI_Ireduce_scatter(v, out, counts, MPI_INT, MPI_MAX, MPI_COMM_WORLD,
			    &r[0]);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	CHECK(out[0] == size - 1 + rank, "Ireduce_scatter %d", out[0]);
	MPI_Iscan(&rank, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
	MPI_Iexscan(&rank, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	CHECK(scan == rank * (rank + 1) / 2, "Iscan %d", scan);
	CHECK(rank == 0 || ex == rank * (rank - 1) / 2, "Iexscan %d", ex);
	ok("scans");
}

/* Comm_idup, a blocking Comm_dup made between it and its Wait: both
 * work, with their own contexts. */
static void test_idup(void)
{
	MPI_Comm a, b;
	MPI_Request r;
	int sum_a = 0, sum_b = 0;

	MPI_Comm_idup(MPI_COMM_WORLD, &a, &r);
	MPI_Comm_dup(MPI_COMM_WORLD, &b);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Allreduce(&rank, &sum_a, 1, MPI_INT, MPI_SUM, a);
	MPI_Allreduce(&rank, &sum_b, 1, MPI_INT, MPI_SUM, b);
	CHECK(sum_a == size * (size - 1) / 2 && sum_b == sum_a,
	      "Comm_idup: %d and %d", sum_a, sum_b);
	MPI_Comm_free(&a);
	MPI_Comm_free(&b);
	ok("idup");
}

static void test_bad_arguments(void)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int x = 0, rc;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &r);
	CHECK(cls(rc) == MPI_ERR_ROOT, "Ibcast root %d: %d", size, rc);
	rc = MPI_Ibarrier(MPI_COMM_NULL, &r);
	CHECK(cls(rc) == MPI_ERR_COMM, "Ibarrier of MPI_COMM_NULL: %d", rc);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	ok("bad_arguments");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	test_overlap();
	test_bcast_reduce();
	test_gathers();
	test_scans();
	test_idup();
	test_bad_arguments();
	return finish("nbc");
}
