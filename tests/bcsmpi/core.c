/*
 * core.c — BCS-MPI's core calls on a real job (tests/bcsmpi/test_jobs.py
 * runs it with `stormctl run --mpi=bcs -n N`): every call of issue 14's
 * item 2, each result checked.  Prints "ok NAME" per check group and
 * "core: all passed" from rank 0; a failed check prints what and exits
 * with MPI_Abort (the job ends FAILED with the message).  With "ldpath"
 * each rank prints its LD_LIBRARY_PATH and does nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static void test_basics(void)
{
	int flag, major, minor, len, provided;
	char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
	double t0 = MPI_Wtime();

	MPI_Initialized(&flag);
	CHECK(flag, "not initialized");
	MPI_Finalized(&flag);
	CHECK(!flag, "finalized");
	MPI_Get_version(&major, &minor);
	CHECK(major == 3 && minor == 1, "version %d.%d", major, minor);
	MPI_Get_library_version(lib, &len);
	CHECK(len > 0 && strstr(lib, "BCS-MPI"), "library %s", lib);
	MPI_Get_processor_name(name, &len);
	CHECK(len > 0 && (int)strlen(name) == len, "processor name");
	MPI_Query_thread(&provided);
	CHECK(provided == MPI_THREAD_FUNNELED, "thread level %d", provided);
	MPI_Is_thread_main(&flag);
	CHECK(flag, "not the main thread");
	CHECK(MPI_Wtick() > 0 && MPI_Wtime() >= t0, "clock");
	ok("basics");
}

static void test_p2p(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int v = -1, n;
	MPI_Status st;
	MPI_Request r[2];
	static double big[1 << 17]; /* 1 MiB: not eager */
	double *got = malloc(sizeof(big));

	/* a ring, blocking: even ranks send first */
	if (rank % 2 == 0) {
		MPI_Send(&rank, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
		MPI_Recv(&v, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
	} else {
		MPI_Recv(&v, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
		MPI_Send(&rank, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
	}
	CHECK(v == left && st.MPI_SOURCE == left && st.MPI_TAG == 7,
	      "ring got %d from %d tag %d", v, st.MPI_SOURCE, st.MPI_TAG);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == 1, "count %d", n);
	/* non-blocking, large */
	for (size_t i = 0; i < sizeof(big) / sizeof(*big); i++)
		big[i] = rank * 1e6 + (double)i;
	MPI_Irecv(got, 1 << 17, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &r[0]);
	MPI_Isend(big, 1 << 17, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &r[1]);
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	for (size_t i = 0; i < (1u << 17); i += 4099)
		CHECK(got[i] == left * 1e6 + (double)i, "big[%zu] %g", i,
		      got[i]);
	/* synchronous and sendrecv */
	MPI_Sendrecv(&rank, 1, MPI_INT, right, 9, &v, 1, MPI_INT, left, 9,
		     MPI_COMM_WORLD, &st);
	CHECK(v == left, "sendrecv got %d", v);
	if (size >= 2) {
		if (rank == 0)
			MPI_Ssend(&rank, 1, MPI_INT, 1, 10, MPI_COMM_WORLD);
		else if (rank == 1)
			MPI_Recv(&v, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &st);
	}
	/* MPI_PROC_NULL */
	MPI_Send(&rank, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
	MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL source");
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == 0, "PROC_NULL count %d", n);
	free(got);
	ok("p2p");
}

static void test_any_and_probe(void)
{
	MPI_Status st;
	int v, n, flag = 0;

	if (rank != 0) {
		MPI_Send(&rank, 1, MPI_INT, 0, 20 + rank, MPI_COMM_WORLD);
	} else {
		int seen = 0;

		for (int k = 1; k < size; k++) {
			MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
				  &st);
			MPI_Get_count(&st, MPI_INT, &n);
			CHECK(n == 1 && st.MPI_TAG == 20 + st.MPI_SOURCE,
			      "probe");
			MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
				 MPI_COMM_WORLD, &st);
			CHECK(v == st.MPI_SOURCE, "any got %d", v);
			seen |= 1 << v;
		}
		CHECK(seen == ((1 << size) - 2), "seen %#x", seen);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* Iprobe: asked, then answered at a slice boundary */
	if (rank == 0 && size > 1) {
		MPI_Send(&rank, 1, MPI_INT, 1, 30, MPI_COMM_WORLD);
	} else if (rank == 1) {
		while (!flag)
			MPI_Iprobe(0, 30, MPI_COMM_WORLD, &flag, &st);
		CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 30, "iprobe");
		MPI_Recv(&v, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, &st);
	}
	ok("any_source_probe");
}

static void test_requests(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int in[4], out[4], idx, cnt, done = 0, flag, indices[4];
	MPI_Request r[4];
	MPI_Status st[4];

	for (int k = 0; k < 4; k++) {
		out[k] = rank * 10 + k;
		MPI_Irecv(&in[k], 1, MPI_INT, left, 40 + k, MPI_COMM_WORLD,
			  &r[k]);
	}
	for (int k = 0; k < 4; k++)
		MPI_Send(&out[k], 1, MPI_INT, right, 40 + k, MPI_COMM_WORLD);
	MPI_Waitany(4, r, &idx, &st[0]);
	CHECK(idx >= 0 && idx < 4 && r[idx] == MPI_REQUEST_NULL, "waitany");
	done++;
	while (done < 4) {
		MPI_Waitsome(4, r, &cnt, indices, st);
		CHECK(cnt != MPI_UNDEFINED && cnt > 0, "waitsome %d", cnt);
		done += cnt;
	}
	for (int k = 0; k < 4; k++)
		CHECK(in[k] == left * 10 + k, "in[%d] %d", k, in[k]);
	MPI_Testall(4, r, &flag, MPI_STATUSES_IGNORE);
	CHECK(flag, "testall on nulls");
	MPI_Testany(4, r, &idx, &flag, MPI_STATUS_IGNORE);
	CHECK(flag && idx == MPI_UNDEFINED, "testany on nulls");
	/* Request_free of a send */
	MPI_Isend(&rank, 1, MPI_INT, right, 50, MPI_COMM_WORLD, &r[0]);
	MPI_Request_free(&r[0]);
	CHECK(r[0] == MPI_REQUEST_NULL, "request_free");
	MPI_Recv(&idx, 1, MPI_INT, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(idx == left, "freed send arrived");
	/* Test until done */
	MPI_Irecv(&idx, 1, MPI_INT, left, 51, MPI_COMM_WORLD, &r[0]);
	MPI_Send(&rank, 1, MPI_INT, right, 51, MPI_COMM_WORLD);
	flag = 0;
	while (!flag)
		MPI_Test(&r[0], &flag, &st[0]);
	CHECK(idx == left, "test");
	ok("requests");
}

static void test_collectives(void)
{
	int v = rank + 1, sum = 0, max = 0, *all, *counts, *displs;
	double d = rank * 0.5, dsum = 0;
	struct {
		double v;
		int i;
	} in = { (double)(rank % 3), rank }, out;
	static char big[1 << 20];

	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == size * (size + 1) / 2, "allreduce sum %d", sum);
	MPI_Reduce(&v, &max, 1, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD);
	CHECK(rank != size - 1 || max == size, "reduce max %d", max);
	MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	CHECK(dsum == 0.25 * size * (size - 1), "double sum %g", dsum);
	MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
		      MPI_COMM_WORLD);
	CHECK(out.v == (size > 2 ? 2.0 : (double)(size - 1)) &&
	      out.i == (size > 2 ? 2 : size - 1), "maxloc %g %d", out.v, out.i);
	sum = rank;
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == size * (size - 1) / 2, "in place %d", sum);
	/* broadcast, 1 MiB */
	if (rank == 0)
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (char)(i * 7);
	MPI_Bcast(big, sizeof(big), MPI_CHAR, 0, MPI_COMM_WORLD);
	for (size_t i = 0; i < sizeof(big); i += 997)
		CHECK(big[i] == (char)(i * 7), "bcast[%zu]", i);
	/* gather, scatter, allgather, alltoall and their v forms */
	all = calloc((size_t)size * size, sizeof(int));
	counts = malloc((size_t)size * sizeof(int));
	displs = malloc((size_t)size * sizeof(int));
	MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int k = 0; rank == 0 && k < size; k++)
		CHECK(all[k] == k, "gather[%d] %d", k, all[k]);
	MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, 0, MPI_COMM_WORLD);
	CHECK(v == rank, "scatter %d", v);
	MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
	for (int k = 0; k < size; k++)
		CHECK(all[k] == k, "allgather[%d] %d", k, all[k]);
	for (int k = 0; k < size; k++) {
		counts[k] = 1;
		displs[k] = size - 1 - k; /* reversed */
	}
	MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT,
		       MPI_COMM_WORLD);
	for (int k = 0; k < size; k++)
		CHECK(all[size - 1 - k] == k, "allgatherv %d", k);
	MPI_Gatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, 0,
		    MPI_COMM_WORLD);
	MPI_Scatterv(all, counts, displs, MPI_INT, &v, 1, MPI_INT, 0,
		     MPI_COMM_WORLD);
	CHECK(v == rank, "scatterv %d", v);
	{
		int *s = malloc((size_t)size * sizeof(int));
		int *t = malloc((size_t)size * sizeof(int));

		for (int k = 0; k < size; k++)
			s[k] = rank * 100 + k;
		MPI_Alltoall(s, 1, MPI_INT, t, 1, MPI_INT, MPI_COMM_WORLD);
		for (int k = 0; k < size; k++)
			CHECK(t[k] == k * 100 + rank, "alltoall[%d] %d", k,
			      t[k]);
		for (int k = 0; k < size; k++)
			counts[k] = 1, displs[k] = k;
		MPI_Alltoallv(s, counts, displs, MPI_INT, t, counts, displs,
			      MPI_INT, MPI_COMM_WORLD);
		for (int k = 0; k < size; k++)
			CHECK(t[k] == k * 100 + rank, "alltoallv[%d]", k);
		free(s);
		free(t);
	}
	free(all);
	free(counts);
	free(displs);
	ok("collectives");
}

static void my_prod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	CHECK(*dt == MPI_INT, "user op type");
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] = ((int *)in)[i] * ((int *)inout)[i];
}

static void test_ops_and_types(void)
{
	MPI_Op op;
	MPI_Datatype vec;
	int v = 2, p = 0, m[6], got[6];

	MPI_Op_create(my_prod, 1, &op);
	MPI_Allreduce(&v, &p, 1, MPI_INT, op, MPI_COMM_WORLD);
	CHECK(p == 1 << size, "user op %d", p);
	MPI_Op_free(&op);
	/* a strided column: every other int */
	MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int k = 0; k < 6; k++)
		m[k] = rank * 10 + k, got[k] = -1;
	if (size > 1) {
		if (rank == 0)
			MPI_Send(m, 1, vec, 1, 60, MPI_COMM_WORLD);
		if (rank == 1) {
			MPI_Recv(got, 1, vec, 0, 60, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			CHECK(got[0] == 0 && got[1] == -1 && got[2] == 2 &&
			      got[4] == 4 && got[5] == -1, "vector recv");
		}
	}
	MPI_Type_free(&vec);
	ok("ops_types");
}

static int comms_loop;

static void test_comms(void)
{
	MPI_Comm dup, half, cart;
	int r, s, cmp, dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
	int coords[2], src, dst, sum;

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
	CHECK(cmp == MPI_CONGRUENT, "dup compare %d", cmp);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	MPI_Comm_rank(half, &r);
	MPI_Comm_size(half, &s);
	CHECK(s == (size + 1 - rank % 2) / 2, "split size %d", s);
	CHECK(r == s - 1 - rank / 2, "split rank %d (key reversed)", r);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
	{
		int want = 0;

		for (int k = rank % 2; k < size; k += 2)
			want += k;
		CHECK(sum == want, "sum on the half %d", sum);
	}
	MPI_Comm_free(&half);
	MPI_Comm_free(&dup);
	CHECK(dup == MPI_COMM_NULL, "freed");
	MPI_Dims_create(size, 2, dims);
	CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims");
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Cart_coords(cart, rank, 2, coords);
	MPI_Cart_rank(cart, coords, &r);
	CHECK(r == rank, "cart rank %d", r);
	MPI_Cart_shift(cart, 0, 1, &src, &dst);
	CHECK(dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1],
	      "shift dst %d", dst);
	MPI_Cart_shift(cart, 1, 1, &src, &dst);
	CHECK(coords[1] != dims[1] - 1 || dst == MPI_PROC_NULL,
	      "edge %d", dst);
	MPI_Comm_free(&cart);
	/* more communicators over the job's life than the engine holds at
	 * once (4096): freeing them must release the engine's copies
	 * (argument "comms-loop": a dup is a barrier, so this takes 5000
	 * slices) */
	for (int k = 0; comms_loop && k < 5000; k++) {
		MPI_Comm_dup(MPI_COMM_WORLD, &dup);
		MPI_Comm_free(&dup);
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
	CHECK(sum == size * (size - 1) / 2, "sum on the 5001st dup %d", sum);
	MPI_Comm_free(&dup);
	ok("comms");
}

static void test_errors(void)
{
	int v = 0, rc, cls, len;
	char text[MPI_MAX_ERROR_STRING];

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Send(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RANK, "bad rank gives %d", cls);
	rc = MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_TAG, "bad tag gives %d", rc);
	rc = MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_COUNT, "bad count gives %d", rc);
	rc = MPI_Bcast(&v, 1, MPI_INT, size, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_ROOT, "bad root gives %d", rc);
	MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
	CHECK(len > 0 && strstr(text, "TRUNCATE"), "error string");
	if (size > 1) {
		int two[2] = { 1, 2 };

		if (rank == 0)
			MPI_Send(two, 2, MPI_INT, 1, 70, MPI_COMM_WORLD);
		if (rank == 1) {
			rc = MPI_Recv(&v, 1, MPI_INT, 0, 70, MPI_COMM_WORLD,
				      MPI_STATUS_IGNORE);
			CHECK(rc == MPI_ERR_TRUNCATE, "truncation gives %d",
			      rc);
		}
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	ok("errors");
}

int main(int argc, char **argv)
{
	int provided;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	comms_loop = argc > 1 && !strcmp(argv[1], "comms-loop");
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1 && !strcmp(argv[1], "ldpath")) {
		/* the library path the node manager gave this rank */
		const char *p = getenv("LD_LIBRARY_PATH");

		printf("rank %d LD_LIBRARY_PATH=%s\n", rank, p ? p : "(unset)");
		MPI_Finalize();
		return 0;
	}
	test_basics();
	test_p2p();
	test_any_and_probe();
	test_requests();
	test_collectives();
	test_ops_and_types();
	test_comms();
	test_errors();
	return finish("core");
}
