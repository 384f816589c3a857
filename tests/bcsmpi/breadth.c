/*
 * breadth.c — calls of issue 15 beyond the core, each result checked
 * (tests/bcsmpi/test_jobs.py, test "breadth", 1 to 4 ranks): Rsend,
 * Irsend, Sendrecv_replace (ints and a strided vector), Scan and Exscan
 * (MPI_SUM, in place, and an associative non-commutative user operation:
 * digits concatenated in rank order), Reduce_scatter_block and
 * Reduce_scatter (in place too), the true extent and _x type queries,
 * Get_elements(_x), Aint_add/diff, and the error classes of
 * bad arguments under MPI_ERRORS_RETURN.  Prints "ok NAME" per group and
 * "breadth: all passed on N ranks" from rank 0; a failed check exits
 * through MPI_Abort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static void test_ready_and_replace(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int got = -1, v[3], strided[6];
	MPI_Request r[2];
	MPI_Datatype vec;

	/* ready mode: the receive is posted (and everyone knows it)
	 * before the send */
	MPI_Irecv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &r[0]);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Rsend(&rank, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
	MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	CHECK(got == prev, "Rsend: got %d, want %d", got, prev);
	MPI_Irecv(&got, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &r[0]);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Irsend(&rank, 1, MPI_INT, next, 6, MPI_COMM_WORLD, &r[1]);
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	CHECK(got == prev, "Irsend: got %d, want %d", got, prev);
	ok("rsend");

	for (int i = 0; i < 3; i++)
		v[i] = rank * 10 + i;
	MPI_Status st;
	MPI_Sendrecv_replace(v, 3, MPI_INT, next, 7, prev, 7, MPI_COMM_WORLD,
			     &st);
	for (int i = 0; i < 3; i++)
		CHECK(v[i] == prev * 10 + i, "Sendrecv_replace: v[%d] = %d",
		      i, v[i]);
	CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7,
	      "Sendrecv_replace status: source %d tag %d", st.MPI_SOURCE,
	      st.MPI_TAG);
	/* every other int: the gaps must be left alone */
	MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int i = 0; i < 6; i++)
		strided[i] = i % 2 ? -1 : rank * 10 + i;
	MPI_Sendrecv_replace(strided, 1, vec, next, 8, prev, 8,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0; i < 6; i++)
		CHECK(strided[i] == (i % 2 ? -1 : prev * 10 + i),
		      "Sendrecv_replace vector: [%d] = %d", i, strided[i]);
	MPI_Type_free(&vec);
	ok("sendrecv_replace");
}

/* (value, digits) pairs: a then b is a * 10^digits(b) + b.  Associative,
 * not commutative. */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	long long *a = in, *b = inout;

	(void)dt;
	for (int i = 0; i + 1 < *len; i += 2) {
		long long p = 1;

		for (long long d = 0; d < b[i + 1]; d++)
			p *= 10;
		b[i] = a[i] * p + b[i];
		b[i + 1] += a[i + 1];
	}
}

static void test_scans(void)
{
	int x = rank + 1, s = -7, want = 0;
	long long pair[2] = { rank + 1, 1 }, got[2] = { -1, -1 }, digits = 0;
	MPI_Op cat;

	for (int k = 0; k <= rank; k++)
		want += k + 1;
	MPI_Scan(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(s == want, "Scan: %d, want %d", s, want);
	s = x;
	MPI_Scan(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(s == want, "Scan in place: %d, want %d", s, want);
	s = -7;
	MPI_Exscan(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(rank == 0 ? s == -7 : s == want - x,
	      "Exscan: %d (want %d; rank 0 untouched)", s,
	      rank ? want - x : -7);
	s = x;
	MPI_Exscan(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	CHECK(rank == 0 ? s == x : s == rank, "Exscan MAX in place: %d", s);
	/* a type whose lower bound is below its address: two ints, the
	 * second 2 ints before the first (stride -2) */
	{
		int in[3], out[3] = { -5, -5, -5 };
		MPI_Datatype back;

		MPI_Type_vector(2, 1, -2, MPI_INT, &back);
		MPI_Type_commit(&back);
		in[2] = rank + 1;
		in[1] = 99;
		in[0] = 10 * (rank + 1);
		MPI_Scan(&in[2], &out[2], 1, back, MPI_SUM, MPI_COMM_WORLD);
		CHECK(out[2] == want && out[0] == 10 * want && out[1] == -5,
		      "Scan of a negative-stride vector: %d %d %d, want %d "
		      "-5 %d", out[0], out[1], out[2], 10 * want, want);
		MPI_Type_free(&back);
	}
	ok("scan");

	MPI_Op_create(concat, 0, &cat);
	for (int k = 0; k <= rank; k++)
		digits = digits * 10 + k + 1;
	MPI_Scan(pair, got, 2, MPI_LONG_LONG, cat, MPI_COMM_WORLD);
	CHECK(got[0] == digits && got[1] == rank + 1,
	      "Scan of a non-commutative op: %lld (%lld digits), want %lld",
	      got[0], got[1], digits);
	MPI_Op_free(&cat);
	ok("scan_noncommutative");
}

static void test_reduce_scatter(void)
{
	int n = 2 * size, *in = malloc(sizeof(int) * (size_t)n), out[2];
	int *counts = malloc(sizeof(int) * (size_t)size), total = 0, at = 0;
	int *all, *mine;

	for (int j = 0; j < n; j++)
		in[j] = rank * 100 + j;
	MPI_Reduce_scatter_block(in, out, 2, MPI_INT, MPI_SUM,
				 MPI_COMM_WORLD);
	for (int i = 0; i < 2; i++) {
		int j = 2 * rank + i;

		CHECK(out[i] == 100 * size * (size - 1) / 2 + size * j,
		      "Reduce_scatter_block: [%d] = %d", i, out[i]);
	}
	ok("reduce_scatter_block");

	for (int k = 0; k < size; k++) {
		counts[k] = k + 1;
		total += counts[k];
		if (k < rank)
			at += counts[k];
	}
	all = malloc(sizeof(int) * (size_t)total);
	mine = malloc(sizeof(int) * (size_t)total);
	for (int j = 0; j < total; j++)
		all[j] = rank + j;
	MPI_Reduce_scatter(all, mine, counts, MPI_INT, MPI_SUM,
			   MPI_COMM_WORLD);
	for (int i = 0; i < counts[rank]; i++)
		CHECK(mine[i] == size * (size - 1) / 2 + size * (at + i),
		      "Reduce_scatter: [%d] = %d", i, mine[i]);
	/* in place: the input is recvbuf, whole */
	for (int j = 0; j < total; j++)
		all[j] = rank + j;
	MPI_Reduce_scatter(MPI_IN_PLACE, all, counts, MPI_INT, MPI_MAX,
			   MPI_COMM_WORLD);
	for (int i = 0; i < counts[rank]; i++)
		CHECK(all[i] == size - 1 + at + i,
		      "Reduce_scatter in place: [%d] = %d", i, all[i]);
	free(all);
	free(mine);
	free(counts);
	free(in);
	ok("reduce_scatter");
}

static void test_type_queries(void)
{
	MPI_Datatype vec, back, pair;
	MPI_Aint lb, ext, tlb, text;
	MPI_Count clb, cext, csize;
	int seven[7] = { 1, 2, 3, 4, 5, 6, 7 }, got[8], n = -1;
	MPI_Status st;

	MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_get_true_extent(vec, &tlb, &text);
	CHECK(tlb == 0 && text == 5 * (MPI_Aint)sizeof(int),
	      "true extent of vector(3,1,2): %ld %ld", (long)tlb, (long)text);
	MPI_Type_size_x(vec, &csize);
	MPI_Type_get_extent_x(vec, &clb, &cext);
	CHECK(csize == 3 * (MPI_Count)sizeof(int) && clb == 0 &&
	      cext == 5 * (MPI_Count)sizeof(int),
	      "size_x/extent_x of vector(3,1,2): %lld %lld %lld",
	      (long long)csize, (long long)clb, (long long)cext);
	MPI_Type_free(&vec);
	/* stride -2: the data lies below the address */
	MPI_Type_vector(2, 1, -2, MPI_INT, &back);
	MPI_Type_commit(&back);
	MPI_Type_get_extent(back, &lb, &ext);
	MPI_Type_get_true_extent_x(back, &clb, &cext);
	CHECK(lb == -2 * (MPI_Aint)sizeof(int) &&
	      ext == 3 * (MPI_Aint)sizeof(int) &&
	      clb == -2 * (MPI_Count)sizeof(int) &&
	      cext == 3 * (MPI_Count)sizeof(int),
	      "extents of vector(2,1,-2): lb %ld ext %ld true %lld %lld",
	      (long)lb, (long)ext, (long long)clb, (long long)cext);
	MPI_Type_free(&back);
	ok("type_queries");

	/* seven ints received as pairs: 3.5 pairs, 7 basic elements */
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	MPI_Sendrecv(seven, 7, MPI_INT, rank, 9, got, 4, pair, rank, 9,
		     MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, pair, &n);
	CHECK(n == MPI_UNDEFINED, "Get_count of 7 ints as pairs: %d", n);
	MPI_Get_elements(&st, pair, &n);
	CHECK(n == 7, "Get_elements of 7 ints as pairs: %d", n);
	MPI_Get_elements_x(&st, MPI_INT, &csize);
	CHECK(csize == 7, "Get_elements_x as MPI_INT: %lld",
	      (long long)csize);
	MPI_Get_elements(&st, MPI_DOUBLE, &n);
	CHECK(n == MPI_UNDEFINED, "Get_elements of 28 bytes as doubles: %d",
	      n);
	MPI_Type_free(&pair);
	ok("get_elements");
}

static void test_misc_and_errors(void)
{
	char a[16];
	MPI_Aint base = (MPI_Aint)(size_t)&a[0];
	int x = 1, y, rc, cls;

	CHECK(MPI_Aint_add(base, 5) == (MPI_Aint)(size_t)&a[5],
	      "Aint_add");
	CHECK(MPI_Aint_diff((MPI_Aint)(size_t)&a[9], base) == 9,
	      "Aint_diff");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Scan(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_OP, "Scan with MPI_OP_NULL: class %d", cls);
	rc = MPI_Exscan(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_COUNT, "Exscan count -1: class %d", cls);
	rc = MPI_Reduce_scatter(&x, &y, NULL, MPI_INT, MPI_SUM,
				MPI_COMM_WORLD);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_ARG, "Reduce_scatter NULL counts: class %d",
	      cls);
	rc = MPI_Sendrecv_replace(&x, 1, MPI_INT, size, 0, 0, 0,
				  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RANK, "Sendrecv_replace to rank %d: class %d",
	      size, cls);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	ok("errors");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	test_ready_and_replace();
	test_scans();
	test_reduce_scatter();
	test_type_queries();
	test_misc_and_errors();
	return finish("breadth");
}
