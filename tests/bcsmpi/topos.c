/*
 * topos.c — graph topologies and neighborhood collectives, each result
 * checked (tests/bcsmpi/test_jobs.py, test "topos", 1 to 4 ranks; also
 * under Debian's MPICH itself): a ring as a graph (Graph_create and its
 * queries, Topo_test, Graph_map), the same ring as distributed graphs
 * (Dist_graph_create_adjacent with weights, Dist_graph_create with every
 * edge named by rank 0) and their queries; Neighbor_allgather and
 * Neighbor_alltoall on each, and on a periodic Cartesian line (with one
 * or two processes a rank is its own or both its neighbors: the −1 and
 * +1 blocks must not swap), Neighbor_allgatherv, _alltoallv, _alltoallw.
 * Prints "ok NAME" per group and "topos: all passed on N ranks".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static int next, prev;

/* The in-neighbors' blocks of a ring: prev's then next's.  With one or
 * two processes a graph's ring has one neighbor twice, and which of its
 * two edges a block took is the graph's order, not the ring's
 * direction (a Cartesian topology keeps the direction): checked from
 * three processes (cart: always). */
static void check_ring_exchange(MPI_Comm ring, const char *what, int cart)
{
	int out[2] = { rank * 10 + 1, rank * 10 + 2 }, in[2] = { -1, -1 };
	int one = rank, got[2] = { -1, -1 };

	/* allgather: my rank to both neighbors */
	MPI_Neighbor_allgather(&one, 1, MPI_INT, got, 1, MPI_INT, ring);
	CHECK(got[0] == prev && got[1] == next, "%s allgather: %d %d", what,
	      got[0], got[1]);
	/* alltoall: block 0 to prev, block 1 to next; I get prev's block
	 * 1 (it sent it to its next, me) and next's block 0 */
	MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring);
	CHECK((!cart && size < 3) ||
	      (in[0] == prev * 10 + 2 && in[1] == next * 10 + 1),
	      "%s alltoall: %d %d", what, in[0], in[1]);
}

static void test_graph(void)
{
	int *index = malloc(sizeof(int) * size), *edges = malloc(sizeof(int) *
								  2 * size);
	int nn, ne, st, cnt, nb[2], newrank;
	MPI_Comm ring;

	for (int r = 0; r < size; r++) {
		index[r] = 2 * (r + 1);
		edges[2 * r] = (r + size - 1) % size;
		edges[2 * r + 1] = (r + 1) % size;
	}
	MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
	MPI_Topo_test(ring, &st);
	CHECK(st == MPI_GRAPH, "Topo_test %d", st);
	MPI_Graphdims_get(ring, &nn, &ne);
	CHECK(nn == size && ne == 2 * size, "Graphdims %d %d", nn, ne);
	MPI_Graph_neighbors_count(ring, rank, &cnt);
	MPI_Graph_neighbors(ring, rank, 2, nb);
	CHECK(cnt == 2 && nb[0] == prev && nb[1] == next, "neighbors %d: %d "
	      "%d", cnt, nb[0], nb[1]);
	MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank);
	CHECK(newrank >= 0 && newrank < size, "Graph_map %d", newrank);
	{
		int *i2 = malloc(sizeof(int) * size);
		int *e2 = malloc(sizeof(int) * 2 * size), d1 = 1, p1 = 0;

		MPI_Graph_get(ring, size, 2 * size, i2, e2);
		CHECK(!memcmp(i2, index, sizeof(int) * size) &&
		      !memcmp(e2, edges, sizeof(int) * 2 * size),
		      "Graph_get");
		free(i2);
		free(e2);
		/* a grid of one: only rank 0 has a place in it */
		MPI_Cart_map(MPI_COMM_WORLD, 1, &d1, &p1, &newrank);
		CHECK(rank == 0 ? newrank == 0 : newrank == MPI_UNDEFINED,
		      "Cart_map %d", newrank);
	}
	check_ring_exchange(ring, "graph", 0);
	MPI_Comm_free(&ring);
	free(index);
	free(edges);
	ok("graph");
}

static void test_dist_graph(void)
{
	int src[2] = { prev, next }, dst[2] = { prev, next };
	int w[2] = { 5, 7 }, in[2], inw[2], out[2], outw[2], indeg, outdeg;
	int weighted, st;
	MPI_Comm ring, ring2;

	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, w, 2, dst, w,
				       MPI_INFO_NULL, 0, &ring);
	MPI_Topo_test(ring, &st);
	CHECK(st == MPI_DIST_GRAPH, "Topo_test %d", st);
	MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted);
	CHECK(indeg == 2 && outdeg == 2 && weighted, "counts %d %d %d", indeg,
	      outdeg, weighted);
	MPI_Dist_graph_neighbors(ring, 2, in, inw, 2, out, outw);
	CHECK(in[0] == prev && in[1] == next && inw[1] == 7 &&
	      out[0] == prev && outw[0] == 5, "adjacent neighbors");
	check_ring_exchange(ring, "dist graph adjacent", 0);
	MPI_Comm_free(&ring);
	/* rank 0 names every edge: r -> r-1 first, then r -> r+1 */
	{
		int n = rank == 0 ? size : 0;
		int *s = malloc(sizeof(int) * (size + 1));
		int *deg = malloc(sizeof(int) * (size + 1));
		int *d = malloc(sizeof(int) * (2 * size + 1));

		for (int r = 0; r < n; r++) {
			s[r] = r;
			deg[r] = 2;
			d[2 * r] = (r + size - 1) % size;
			d[2 * r + 1] = (r + 1) % size;
		}
		MPI_Dist_graph_create(MPI_COMM_WORLD, n, s, deg, d,
				      MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
				      &ring2);
		free(s);
		free(deg);
		free(d);
	}
	MPI_Dist_graph_neighbors_count(ring2, &indeg, &outdeg, &weighted);
	CHECK(indeg == 2 && outdeg == 2 && !weighted, "Dist_graph_create "
	      "counts %d %d %d", indeg, outdeg, weighted);
	MPI_Dist_graph_neighbors(ring2, 2, in, MPI_UNWEIGHTED, 2, out,
				 MPI_UNWEIGHTED);
	CHECK(out[0] == prev && out[1] == next, "its out-neighbors %d %d",
	      out[0], out[1]);
	{
		/* everyone's in-neighbors are prev and next, in some order:
		 * an allgather says which block came from whom */
		int me = rank, got[2] = { -1, -1 };

		MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT,
				       ring2);
		for (int k = 0; k < 2; k++)
			CHECK(got[k] == in[k], "in-neighbor %d sent %d, is "
			      "%d", k, got[k], in[k]);
	}
	MPI_Comm_free(&ring2);
	ok("dist_graph");
}

static void test_cart(void)
{
	int dims[1] = { size }, periods[1] = { 1 }, send[2], recv[2];
	int counts[2] = { 1, 1 }, displs[2] = { 0, 1 }, rdispls[2] = { 1, 0 };
	MPI_Aint wd[2] = { 0, sizeof(int) }, wr[2] = { sizeof(int), 0 };
	MPI_Datatype types[2] = { MPI_INT, MPI_INT };
	MPI_Comm line;

	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
	check_ring_exchange(line, "cart", 1);
	send[0] = rank * 10 + 1;
	send[1] = rank * 10 + 2;
	/* v: the blocks received swapped in place by the displacements */
	MPI_Neighbor_alltoallv(send, counts, displs, MPI_INT, recv, counts,
			       rdispls, MPI_INT, line);
	CHECK(recv[1] == prev * 10 + 2 && recv[0] == next * 10 + 1,
	      "alltoallv %d %d", recv[0], recv[1]);
	MPI_Neighbor_alltoallw(send, counts, wd, types, recv, counts, wr,
			       types, line);
	CHECK(recv[1] == prev * 10 + 2 && recv[0] == next * 10 + 1,
	      "alltoallw %d %d", recv[0], recv[1]);
	MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, recv, counts, rdispls,
				MPI_INT, line);
	CHECK(recv[1] == prev && recv[0] == next, "allgatherv %d %d",
	      recv[0], recv[1]);
	/* the non-blocking ones, two at once */
	{
		MPI_Request r[2];
		int got[2] = { -1, -1 }, in[2] = { -1, -1 };

		MPI_Ineighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT,
					line, &r[0]);
		MPI_Ineighbor_alltoall(send, 1, MPI_INT, in, 1, MPI_INT, line,
				       &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		CHECK(got[0] == prev && got[1] == next &&
		      in[0] == prev * 10 + 2 && in[1] == next * 10 + 1,
		      "Ineighbor: %d %d %d %d", got[0], got[1], in[0], in[1]);
		MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, recv, counts,
					 rdispls, MPI_INT, line, &r[0]);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		CHECK(recv[1] == prev && recv[0] == next, "Ineighbor_"
		      "allgatherv %d %d", recv[0], recv[1]);
		MPI_Ineighbor_alltoallv(send, counts, displs, MPI_INT, recv,
					counts, rdispls, MPI_INT, line, &r[0]);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		CHECK(recv[1] == prev * 10 + 2 && recv[0] == next * 10 + 1,
		      "Ineighbor_alltoallv %d %d", recv[0], recv[1]);
		MPI_Ineighbor_alltoallw(send, counts, wd, types, recv, counts,
					wr, types, line, &r[0]);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		CHECK(recv[1] == prev * 10 + 2 && recv[0] == next * 10 + 1,
		      "Ineighbor_alltoallw %d %d", recv[0], recv[1]);
	}
	MPI_Comm_free(&line);
	ok("cart");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	test_graph();
	test_dist_graph();
	test_cart();
	return finish("topos");
}
