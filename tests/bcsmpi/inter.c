/*
 * inter.c — intercommunicators, each result checked (tests/bcsmpi/
 * test_jobs.py, test "inter", 2 to 4 ranks; also under Debian's MPICH
 * itself): the even and odd ranks joined by Intercomm_create over
 * MPI_COMM_WORLD; Comm_test_inter, remote size and group; point-to-point
 * across (ANY_SOURCE's status naming the remote rank); Barrier, Bcast
 * and Reduce both ways (MPI_ROOT, MPI_PROC_NULL), Allreduce, Gather,
 * Scatter, Allgather, Alltoall and the v and w variants; Comm_dup of it; Intercomm_merge (low
 * group first).  With the argument "overlap": an Intercomm_create whose
 * groups overlap, which must end the job FAILED naming the call.
 * Prints "ok NAME" per group and "inter: all passed on N ranks".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static int color, lrank, lsize, rsize;

static void test_inter(MPI_Comm ic)
{
	int flag, n, rk, got = -1, v[8], all[8], sum = -1, x, want;
	MPI_Group rg, wg;
	MPI_Status st;
	int ranks[4], out[4];
	MPI_Request r[2];

	MPI_Comm_test_inter(ic, &flag);
	MPI_Comm_size(ic, &n);
	MPI_Comm_rank(ic, &rk);
	MPI_Comm_remote_size(ic, &rsize);
	CHECK(flag && n == lsize && rk == lrank && rsize == size - lsize,
	      "test_inter %d size %d rank %d remote %d", flag, n, rk, rsize);
	MPI_Comm_remote_group(ic, &rg);
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	for (int i = 0; i < rsize; i++)
		ranks[i] = i;
	MPI_Group_translate_ranks(rg, rsize, ranks, wg, out);
	for (int i = 0; i < rsize; i++)
		CHECK(out[i] == 2 * i + !color, "remote rank %d is world %d", i,
		      out[i]);
	MPI_Group_free(&rg);
	MPI_Group_free(&wg);
	ok("setup");

	/* across: each sends to remote rank lrank % rsize; every one
	 * receives all that come to it from ANY_SOURCE */
	{
		int expect = 0;

		for (int k = 0; k < rsize; k++)
			expect += k % lsize == lrank;
		MPI_Isend(&rank, 1, MPI_INT, lrank % rsize, 3, ic, &r[0]);
		for (int k = 0; k < expect; k++) {
			MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st);
			CHECK(got == 2 * st.MPI_SOURCE + !color &&
			      st.MPI_SOURCE % lsize == lrank,
			      "from remote %d: world %d", st.MPI_SOURCE, got);
		}
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	}
	ok("p2p");

	MPI_Barrier(ic);
	/* Bcast: group 0's rank 0 to group 1, then back */
	for (int g = 0; g < 2; g++) {
		int root = color == g ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL)
				      : 0;

		x = color == g && lrank == 0 ? 4242 + g : -1;
		MPI_Bcast(&x, 1, MPI_INT, root, ic);
		CHECK(color == g ? (lrank != 0 || x == 4242 + g) :
				   x == 4242 + g,
		      "Bcast from group %d: %d", g, x);
	}
	/* Allreduce: each group gets the other's sum of world ranks */
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic);
	want = 0;
	for (int k = 0; k < rsize; k++)
		want += 2 * k + !color;
	CHECK(sum == want, "Allreduce %d, want %d", sum, want);
	/* Reduce to group 1's rank 0 from group 0 */
	sum = -1;
	MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_MAX,
		   color == 0 ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL),
		   ic);
	CHECK(color == 0 || lrank != 0 || sum == 2 * (rsize - 1),
	      "Reduce MAX %d", sum);
	ok("reductions");

	/* Gather at group 0's rank 0 from group 1; Scatter back */
	x = rank * 10;
	memset(all, 0xff, sizeof(all));
	MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT,
		   color == 1 ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL),
		   ic);
	for (int k = 0; color == 0 && lrank == 0 && k < rsize; k++)
		CHECK(all[k] == (2 * k + 1) * 10, "Gather [%d] = %d", k,
		      all[k]);
	for (int k = 0; k < 8; k++)
		v[k] = 500 + k;
	got = -1;
	MPI_Scatter(v, 1, MPI_INT, &got, 1, MPI_INT,
		    color == 1 ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL),
		    ic);
	CHECK(color == 0 || got == 500 + lrank, "Scatter: %d", got);
	/* Allgather: each gets the other group's */
	memset(all, 0xff, sizeof(all));
	MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, ic);
	for (int k = 0; k < rsize; k++)
		CHECK(all[k] == (2 * k + !color) * 10, "Allgather [%d] = %d",
		      k, all[k]);
	/* Alltoall: block k to remote rank k */
	for (int k = 0; k < rsize; k++)
		v[k] = rank * 100 + k;
	MPI_Alltoall(v, 1, MPI_INT, all, 1, MPI_INT, ic);
	for (int k = 0; k < rsize; k++)
		CHECK(all[k] == (2 * k + !color) * 100 + lrank,
		      "Alltoall [%d] = %d", k, all[k]);
	ok("collectives");

	/* the v and w variants: remote rank k's block k + 1 ints */
	{
		int counts[4], displs[4], sc[4], sd[4], got[16], mine[4], k2;
		MPI_Datatype ints[4];
		int wd[4], wr[4];

		for (int k = 0; k < rsize; k++) {
			counts[k] = k + 1;
			displs[k] = 4 * k;
			ints[k] = MPI_INT;
			wr[k] = 4 * k * (int)sizeof(int);
		}
		for (int i = 0; i < 4; i++)
			mine[i] = rank * 100 + i;
		/* Gatherv at group 0's rank 0 from group 1 */
		memset(got, 0xff, sizeof(got));
		MPI_Gatherv(mine, lrank + 1, MPI_INT, got, counts, displs,
			    MPI_INT, color == 1 ? 0 : (lrank == 0 ? MPI_ROOT :
							MPI_PROC_NULL), ic);
		for (int k = 0; color == 0 && lrank == 0 && k < rsize; k++)
			for (int i = 0; i <= k; i++)
				CHECK(got[4 * k + i] == (2 * k + 1) * 100 + i,
				      "Gatherv [%d][%d] = %d", k, i,
				      got[4 * k + i]);
		/* Scatterv back: remote k gets k + 1 from its displacement */
		for (int i = 0; i < 16; i++)
			got[i] = 1000 + i;
		memset(mine, 0xff, sizeof(mine));
		MPI_Scatterv(got, counts, displs, MPI_INT, mine, lrank + 1,
			     MPI_INT, color == 1 ? 0 : (lrank == 0 ? MPI_ROOT :
							MPI_PROC_NULL), ic);
		for (int i = 0; color == 1 && i <= lrank; i++)
			CHECK(mine[i] == 1000 + 4 * lrank + i, "Scatterv [%d] ="
			      " %d", i, mine[i]);
		/* Allgatherv: every remote's lrank + 1 ints */
		for (int i = 0; i < 4; i++)
			mine[i] = rank * 100 + i;
		memset(got, 0xff, sizeof(got));
		MPI_Allgatherv(mine, lrank + 1, MPI_INT, got, counts, displs,
			       MPI_INT, ic);
		for (int k = 0; k < rsize; k++)
			for (int i = 0; i <= k; i++)
				CHECK(got[4 * k + i] == (2 * k + !color) * 100 +
				      i, "Allgatherv [%d][%d] = %d", k, i,
				      got[4 * k + i]);
		/* Alltoallv and Alltoallw: block k (my world rank * 10 + k)
		 * to remote k, one int each */
		for (int k = 0; k < rsize; k++) {
			sc[k] = 1;
			sd[k] = k;
			wd[k] = k * (int)sizeof(int);
			got[k] = -1;
			mine[k % 4] = 0;
		}
		{
			int blocks[4], one[4];

			for (int k = 0; k < rsize; k++) {
				blocks[k] = rank * 10 + k;
				one[k] = 1;
			}
			MPI_Alltoallv(blocks, sc, sd, MPI_INT, got, one, sd,
				      MPI_INT, ic);
			for (k2 = 0; k2 < rsize; k2++)
				CHECK(got[k2] == (2 * k2 + !color) * 10 + lrank,
				      "inter Alltoallv [%d] = %d", k2,
				      got[k2]);
			memset(got, 0xff, sizeof(got));
			MPI_Alltoallw(blocks, sc, wd, ints, got, one, wr, ints,
				      ic);
			for (k2 = 0; k2 < rsize; k2++)
				CHECK(got[4 * k2] == (2 * k2 + !color) * 10 +
				      lrank, "inter Alltoallw [%d] = %d", k2,
				      got[4 * k2]);
		}
	}
	ok("v_and_w");
}

int main(int argc, char **argv)
{
	MPI_Comm half, ic, dup, merged;
	int n, rk, sum;

	init(&argc, &argv);
	if (size < 2) {
		printf("inter: all passed on %d ranks\n", size);
		MPI_Finalize();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "overlap")) {
		/* each its own remote leader: both groups are {rank} */
		MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, rank,
				     5, &ic);
		printf("inter: the overlapping groups were taken\n");
		MPI_Finalize();
		return 0;
	}
	color = rank % 2;
	MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
	MPI_Comm_rank(half, &lrank);
	MPI_Comm_size(half, &lsize);
	/* the remote leader: world rank 1 for the evens, 0 for the odds */
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, !color, 77, &ic);
	test_inter(ic);
	MPI_Comm_dup(ic, &dup);
	test_inter(dup);
	MPI_Comm_free(&dup);
	/* merged: the odds ask to be high, so the evens come first */
	MPI_Intercomm_merge(ic, color, &merged);
	MPI_Comm_size(merged, &n);
	MPI_Comm_rank(merged, &rk);
	CHECK(n == size && rk == (color ? (size + 1) / 2 + lrank : lrank) &&
	      lsize == (color ? size / 2 : (size + 1) / 2),
	      "merged: size %d rank %d", n, rk);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
	CHECK(sum == size * (size - 1) / 2, "merged Allreduce %d", sum);
	ok("merge");
	MPI_Comm_free(&merged);
	MPI_Comm_free(&ic);
	MPI_Comm_free(&half);
	return finish("inter");
}
