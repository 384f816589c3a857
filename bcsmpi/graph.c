/*
 * graph.c — graph topologies (MPI-3.1 §7.5.3–7.5.5): Graph_create and
 * its queries, the distributed graphs (Dist_graph_create_adjacent,
 * Dist_graph_create) and theirs, Graph_map and Cart_map (ranks are never
 * reordered: the first nnodes keep theirs); and the neighborhood
 * collectives (§7.6) on every topology — Cartesian, graph, distributed
 * graph.
 *
 * A neighborhood collective is messages in the communicator's collective
 * context, all posted at once: block k of the send buffer goes to the
 * k-th out-neighbor, block k of the receive buffer comes from the k-th
 * in-neighbor.  On a Cartesian communicator the neighbors are, for each
 * dimension, the one at −1 then the one at +1 (MPI_PROC_NULL at a
 * non-periodic edge), and each message's tag says which direction it
 * went, so that with two processes along a periodic dimension (each the
 * other's −1 and +1) the −1 block still lands in the −1 slot.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

enum { T_NEIGHBOR = 40 }; /* + the direction index on a Cartesian one */

struct bcs_graph {
	int kind;                /* MPI_GRAPH or MPI_DIST_GRAPH */
	int nnodes, *index, *edges; /* MPI_GRAPH: the whole graph */
	int indeg, outdeg;       /* MPI_DIST_GRAPH: this process's */
	int *in, *inw, *out, *outw;
	int weighted;
};

void bcs_graph_free(struct bcs_graph *g)
{
	if (!g)
		return;
	free(g->index);
	free(g->edges);
	free(g->in);
	free(g->inw);
	free(g->out);
	free(g->outw);
	free(g);
}

int bcs_graph_kind(const struct bcs_graph *g)
{
	return g ? g->kind : MPI_UNDEFINED;
}

static int *dup_ints(const int *a, int n)
{
	int *b = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));

	if (b && n > 0)
		memcpy(b, a, (size_t)n * sizeof(int));
	return b;
}

/* A new communicator of the first n members of c's group, carrying g
 * (taken over): collective over c, every member here first. */
static int with_topology(const char *fn, struct bcs_comm *c, MPI_Comm comm,
			 int n, struct bcs_graph *g, MPI_Comm *newcomm)
{
	int rc;

	if ((rc = PMPI_Barrier(comm)) != MPI_SUCCESS) {
		bcs_graph_free(g);
		return rc;
	}
	if (c->rank >= n) {
		c->children++; /* as the members count */
		bcs_graph_free(g);
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	*newcomm = bcs_comm_new(c, 0x67, n, c->world, &rc);
	if (rc) {
		bcs_graph_free(g);
		return bcs_error(c, fn, rc, "no room for another communicator");
	}
	bcs_comm_get(*newcomm)->graph = g;
	return MPI_SUCCESS;
}

static int comm_arg(const char *fn, MPI_Comm comm, struct bcs_comm **c)
{
	BCS_NEED_INIT(fn);
	if (!(*c = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if ((*c)->inter)
		return bcs_error(*c, fn, MPI_ERR_COMM, "an intercommunicator "
				 "takes no topology");
	return MPI_SUCCESS;
}

/* The edges of a graph argument checked: 0, or the error. */
static int graph_ok(const char *fn, struct bcs_comm *c, int nnodes,
		    const int *index, const int *edges)
{
	if (nnodes < 0 || nnodes > c->size)
		return bcs_error(c, fn, MPI_ERR_ARG, "nnodes %d in a "
				 "communicator of %d", nnodes, c->size);
	if (nnodes && (!index || !edges))
		return bcs_error(c, fn, MPI_ERR_ARG, "index or edges is NULL");
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return bcs_error(c, fn, MPI_ERR_ARG, "index[%d] = %d "
					 "goes down", i, index[i]);
	for (int e = 0; nnodes && e < index[nnodes - 1]; e++)
		if (edges[e] < 0 || edges[e] >= nnodes)
			return bcs_error(c, fn, MPI_ERR_RANK, "edges[%d] = %d "
					 "outside 0..%d", e, edges[e],
					 nnodes - 1);
	return MPI_SUCCESS;
}

#pragma weak MPI_Graph_create = PMPI_Graph_create
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
		      const int edges[], int reorder, MPI_Comm *comm_graph)
{
	static const char fn[] = "MPI_Graph_create";
	struct bcs_comm *c;
	struct bcs_graph *g;
	int rc;

	(void)reorder; /* ranks stay where they are */
	if ((rc = comm_arg(fn, comm_old, &c)) ||
	    (rc = graph_ok(fn, c, nnodes, index, edges)))
		return rc;
	if (!comm_graph)
		return bcs_error(c, fn, MPI_ERR_ARG, "comm_graph is NULL");
	if (!(g = calloc(1, sizeof(*g))) ||
	    !(g->index = dup_ints(index, nnodes)) ||
	    !(g->edges = dup_ints(edges, nnodes ? index[nnodes - 1] : 0))) {
		bcs_graph_free(g);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	g->kind = MPI_GRAPH;
	g->nnodes = nnodes;
	return with_topology(fn, c, comm_old, nnodes, g, comm_graph);
}

/* The communicator's graph of kind, or the error. */
static int graph_of(const char *fn, MPI_Comm comm, int kind,
		    struct bcs_comm **c)
{
	int rc;

	if ((rc = comm_arg(fn, comm, c)))
		return rc;
	if (!(*c)->graph || (*c)->graph->kind != kind)
		return bcs_error(*c, fn, MPI_ERR_TOPOLOGY, "the communicator "
				 "has no %sgraph topology",
				 kind == MPI_DIST_GRAPH ? "distributed " : "");
	return MPI_SUCCESS;
}

#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	struct bcs_comm *c;
	int rc;

	if ((rc = graph_of("MPI_Graphdims_get", comm, MPI_GRAPH, &c)))
		return rc;
	if (!nnodes || !nedges)
		return bcs_error(c, "MPI_Graphdims_get", MPI_ERR_ARG,
				 "nnodes or nedges is NULL");
	*nnodes = c->graph->nnodes;
	*nedges = c->graph->nnodes ?
		  c->graph->index[c->graph->nnodes - 1] : 0;
	return MPI_SUCCESS;
}

#pragma weak MPI_Graph_get = PMPI_Graph_get
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
		   int edges[])
{
	struct bcs_comm *c;
	struct bcs_graph *g;
	int rc, ne;

	if ((rc = graph_of("MPI_Graph_get", comm, MPI_GRAPH, &c)))
		return rc;
	g = c->graph;
	ne = g->nnodes ? g->index[g->nnodes - 1] : 0;
	if (maxindex < g->nnodes || maxedges < ne ||
	    (g->nnodes && !index) || (ne && !edges))
		return bcs_error(c, "MPI_Graph_get", MPI_ERR_ARG, "room for "
				 "%d and %d; the graph has %d nodes, %d edges",
				 maxindex, maxedges, g->nnodes, ne);
	memcpy(index, g->index, (size_t)g->nnodes * sizeof(int));
	memcpy(edges, g->edges, (size_t)ne * sizeof(int));
	return MPI_SUCCESS;
}

/* The neighbors of rank r in graph g: *first into g->edges, *n. */
static void graph_nbrs(const struct bcs_graph *g, int r, int *first, int *n)
{
	*first = r ? g->index[r - 1] : 0;
	*n = g->index[r] - *first;
}

#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
	struct bcs_comm *c;
	int rc, first;

	if ((rc = graph_of("MPI_Graph_neighbors_count", comm, MPI_GRAPH,
			   &c)))
		return rc;
	if (rank < 0 || rank >= c->graph->nnodes || !nneighbors)
		return bcs_error(c, "MPI_Graph_neighbors_count", MPI_ERR_RANK,
				 "rank %d of %d nodes, or nneighbors NULL",
				 rank, c->graph->nnodes);
	graph_nbrs(c->graph, rank, &first, nneighbors);
	return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
			 int neighbors[])
{
	struct bcs_comm *c;
	int rc, first, n;

	if ((rc = graph_of("MPI_Graph_neighbors", comm, MPI_GRAPH, &c)))
		return rc;
	if (rank < 0 || rank >= c->graph->nnodes)
		return bcs_error(c, "MPI_Graph_neighbors", MPI_ERR_RANK,
				 "rank %d of %d nodes", rank,
				 c->graph->nnodes);
	graph_nbrs(c->graph, rank, &first, &n);
	if (maxneighbors < n || (n && !neighbors))
		return bcs_error(c, "MPI_Graph_neighbors", MPI_ERR_ARG,
				 "room for %d of %d neighbors", maxneighbors,
				 n);
	memcpy(neighbors, c->graph->edges + first, (size_t)n * sizeof(int));
	return MPI_SUCCESS;
}

/* No reordering: a rank keeps its place if the topology has room. */
static int map_rank(const char *fn, MPI_Comm comm, int n, int *newrank)
{
	struct bcs_comm *c;
	int rc;

	if ((rc = comm_arg(fn, comm, &c)))
		return rc;
	if (n < 0 || n > c->size || !newrank)
		return bcs_error(c, fn, MPI_ERR_ARG, "a topology of %d in a "
				 "communicator of %d, or newrank NULL", n,
				 c->size);
	*newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

#pragma weak MPI_Graph_map = PMPI_Graph_map
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
		   const int edges[], int *newrank)
{
	(void)index;
	(void)edges;
	return map_rank("MPI_Graph_map", comm, nnodes, newrank);
}

#pragma weak MPI_Cart_map = PMPI_Cart_map
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[],
		  const int periods[], int *newrank)
{
	long long n = 1;

	(void)periods;
	for (int i = 0; i < ndims && dims; i++)
		n = n * dims[i] > INT32_MAX ? INT32_MAX : n * dims[i];
	return map_rank("MPI_Cart_map", comm, ndims < 0 ? -1 : (int)n,
			newrank);
}

/* ---- distributed graphs ------------------------------------------------------ */

/* A distributed graph of this process's lists (weights: MPI_UNWEIGHTED
 * means none). */
static struct bcs_graph *dist_new(int indeg, const int *in, const int *inw,
				  int outdeg, const int *out, const int *outw,
				  int weighted)
{
	struct bcs_graph *g = calloc(1, sizeof(*g));

	if (!g || !(g->in = dup_ints(in, indeg)) ||
	    !(g->out = dup_ints(out, outdeg)) ||
	    !(g->inw = weighted ? dup_ints(inw, indeg) : dup_ints(NULL, 0)) ||
	    !(g->outw = weighted ? dup_ints(outw, outdeg) :
				   dup_ints(NULL, 0))) {
		bcs_graph_free(g);
		return NULL;
	}
	g->kind = MPI_DIST_GRAPH;
	g->indeg = indeg;
	g->outdeg = outdeg;
	g->weighted = weighted;
	return g;
}

static int ranks_ok(const char *fn, struct bcs_comm *c, const int *r, int n)
{
	for (int i = 0; i < n; i++)
		if (r[i] < 0 || r[i] >= c->size)
			return bcs_error(c, fn, MPI_ERR_RANK, "neighbor %d in a "
					 "communicator of %d", r[i], c->size);
	return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
				    const int sources[],
				    const int sourceweights[], int outdegree,
				    const int destinations[],
				    const int destweights[], MPI_Info info,
				    int reorder, MPI_Comm *comm_dist_graph)
{
	static const char fn[] = "MPI_Dist_graph_create_adjacent";
	struct bcs_comm *c;
	struct bcs_graph *g;
	int rc, weighted = sourceweights != MPI_UNWEIGHTED;

	(void)info;
	(void)reorder;
	if ((rc = comm_arg(fn, comm_old, &c)))
		return rc;
	if (indegree < 0 || outdegree < 0 || !comm_dist_graph ||
	    (indegree && !sources) || (outdegree && !destinations) ||
	    (weighted && ((indegree && !sourceweights) ||
			  (outdegree && !destweights))))
		return bcs_error(c, fn, MPI_ERR_ARG, "degrees %d, %d, or an "
				 "array NULL", indegree, outdegree);
	if ((rc = ranks_ok(fn, c, sources, indegree)) ||
	    (rc = ranks_ok(fn, c, destinations, outdegree)))
		return rc;
	if (!(g = dist_new(indegree, sources, sourceweights, outdegree,
			   destinations, destweights, weighted)))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	return with_topology(fn, c, comm_old, c->size, g, comm_dist_graph);
}

/* Dist_graph_create: each process names edges from any sources; every
 * process learns them all (two Allgathers) and keeps its own, in the
 * order of the contributing ranks and their arrays — the same order at
 * both ends of every edge. */
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
			   const int degrees[], const int destinations[],
			   const int weights[], MPI_Info info, int reorder,
			   MPI_Comm *comm_dist_graph)
{
	static const char fn[] = "MPI_Dist_graph_create";
	struct bcs_comm *c;
	struct bcs_graph *g = NULL;
	int rc, ne = 0, total = 0, weighted = weights != MPI_UNWEIGHTED;
	int *mine = NULL, *counts = NULL, *displs = NULL, *all = NULL;
	int *in = NULL, *inw = NULL, *out = NULL, *outw = NULL, nin = 0,
	    nout = 0, wflag;

	(void)info;
	(void)reorder;
	if ((rc = comm_arg(fn, comm_old, &c)))
		return rc;
	if (n < 0 || !comm_dist_graph || (n && (!sources || !degrees)))
		return bcs_error(c, fn, MPI_ERR_ARG, "n %d, or an array NULL",
				 n);
	for (int i = 0; i < n; i++) {
		if (degrees[i] < 0)
			return bcs_error(c, fn, MPI_ERR_ARG, "degrees[%d] = "
					 "%d", i, degrees[i]);
		ne += degrees[i];
	}
	if ((rc = ranks_ok(fn, c, sources, n)) ||
	    (ne && !destinations) ||
	    (rc = ranks_ok(fn, c, destinations, ne)))
		return rc ? rc : bcs_error(c, fn, MPI_ERR_ARG,
					   "destinations is NULL");
	/* this process's edges as (source, destination, weight) */
	rc = MPI_ERR_NO_MEM;
	if (!(mine = malloc(((size_t)ne * 3 + 1) * sizeof(int))) ||
	    !(counts = malloc((size_t)c->size * sizeof(int))) ||
	    !(displs = malloc((size_t)c->size * sizeof(int))))
		goto out;
	for (int i = 0, e = 0; i < n; i++)
		for (int k = 0; k < degrees[i]; k++, e++) {
			mine[3 * e] = sources[i];
			mine[3 * e + 1] = destinations[e];
			mine[3 * e + 2] = weighted && weights ? weights[e] : 1;
		}
	ne *= 3;
	wflag = weighted;
	if ((rc = PMPI_Allgather(&ne, 1, MPI_INT, counts, 1, MPI_INT,
				 comm_old)) ||
	    (rc = PMPI_Allreduce(MPI_IN_PLACE, &wflag, 1, MPI_INT, MPI_MAX,
				 comm_old)))
		goto out;
	for (int r = 0; r < c->size; r++) {
		displs[r] = total;
		total += counts[r];
	}
	rc = MPI_ERR_NO_MEM;
	if (!(all = malloc(((size_t)total + 1) * sizeof(int))) ||
	    !(in = malloc(((size_t)total / 3 + 1) * sizeof(int))) ||
	    !(inw = malloc(((size_t)total / 3 + 1) * sizeof(int))) ||
	    !(out = malloc(((size_t)total / 3 + 1) * sizeof(int))) ||
	    !(outw = malloc(((size_t)total / 3 + 1) * sizeof(int))))
		goto out;
	if ((rc = PMPI_Allgatherv(mine, ne, MPI_INT, all, counts, displs,
				  MPI_INT, comm_old)))
		goto out;
	for (int e = 0; e < total / 3; e++) {
		if (all[3 * e + 1] == c->rank) {
			in[nin] = all[3 * e];
			inw[nin++] = all[3 * e + 2];
		}
		if (all[3 * e] == c->rank) {
			out[nout] = all[3 * e + 1];
			outw[nout++] = all[3 * e + 2];
		}
	}
	rc = MPI_ERR_NO_MEM;
	if (!(g = dist_new(nin, in, inw, nout, out, outw, wflag)))
		goto out;
	rc = with_topology(fn, c, comm_old, c->size, g, comm_dist_graph);
	g = NULL;
out:
	free(mine);
	free(counts);
	free(displs);
	free(all);
	free(in);
	free(inw);
	free(out);
	free(outw);
	return rc == MPI_ERR_NO_MEM ? bcs_error(c, fn, rc, "out of memory") :
				      rc;
}

#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree,
				    int *outdegree, int *weighted)
{
	struct bcs_comm *c;
	int rc;

	if ((rc = graph_of("MPI_Dist_graph_neighbors_count", comm,
			   MPI_DIST_GRAPH, &c)))
		return rc;
	if (!indegree || !outdegree || !weighted)
		return bcs_error(c, "MPI_Dist_graph_neighbors_count",
				 MPI_ERR_ARG, "an output is NULL");
	*indegree = c->graph->indeg;
	*outdegree = c->graph->outdeg;
	*weighted = c->graph->weighted;
	return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
			      int sourceweights[], int maxoutdegree,
			      int destinations[], int destweights[])
{
	struct bcs_comm *c;
	struct bcs_graph *g;
	int rc;

	if ((rc = graph_of("MPI_Dist_graph_neighbors", comm, MPI_DIST_GRAPH,
			   &c)))
		return rc;
	g = c->graph;
	if (maxindegree < g->indeg || maxoutdegree < g->outdeg ||
	    (g->indeg && !sources) || (g->outdeg && !destinations))
		return bcs_error(c, "MPI_Dist_graph_neighbors", MPI_ERR_ARG,
				 "room for %d and %d of %d and %d neighbors",
				 maxindegree, maxoutdegree, g->indeg,
				 g->outdeg);
	memcpy(sources, g->in, (size_t)g->indeg * sizeof(int));
	memcpy(destinations, g->out, (size_t)g->outdeg * sizeof(int));
	if (g->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED)
		memcpy(sourceweights, g->inw, (size_t)g->indeg * sizeof(int));
	if (g->weighted && destweights && destweights != MPI_UNWEIGHTED)
		memcpy(destweights, g->outw, (size_t)g->outdeg * sizeof(int));
	return MPI_SUCCESS;
}

/* ---- neighborhood collectives -------------------------------------------------- */

/* The in- and out-neighbors of this process in comm's topology (arrays
 * the caller frees), and whether tags say the direction (Cartesian). */
struct nbrs {
	int nin, nout, *in, *out, cart;
};

static int neighbors(const char *fn, MPI_Comm comm, struct bcs_comm **cp,
		     struct nbrs *nb)
{
	struct bcs_comm *c;
	int rc;

	memset(nb, 0, sizeof(*nb));
	if ((rc = comm_arg(fn, comm, cp)))
		return rc;
	c = *cp;
	if (c->cart) {
		int nd = 0;

		PMPI_Cartdim_get(comm, &nd);
		nb->nin = nb->nout = 2 * nd;
		nb->in = malloc(((size_t)nb->nin + 1) * sizeof(int));
		nb->out = malloc(((size_t)nb->nout + 1) * sizeof(int));
		if (!nb->in || !nb->out)
			goto nomem;
		for (int d = 0; d < nd; d++) {
			PMPI_Cart_shift(comm, d, 1, &nb->in[2 * d],
					&nb->in[2 * d + 1]);
			nb->out[2 * d] = nb->in[2 * d];
			nb->out[2 * d + 1] = nb->in[2 * d + 1];
		}
		nb->cart = 1;
		return MPI_SUCCESS;
	}
	if (c->graph && c->graph->kind == MPI_GRAPH) {
		int first, n;

		graph_nbrs(c->graph, c->rank, &first, &n);
		nb->nin = nb->nout = n;
		nb->in = dup_ints(c->graph->edges + first, n);
		nb->out = dup_ints(c->graph->edges + first, n);
	} else if (c->graph) {
		nb->nin = c->graph->indeg;
		nb->nout = c->graph->outdeg;
		nb->in = dup_ints(c->graph->in, nb->nin);
		nb->out = dup_ints(c->graph->out, nb->nout);
	} else {
		return bcs_error(c, fn, MPI_ERR_TOPOLOGY, "the communicator "
				 "has no topology");
	}
	if (nb->in && nb->out)
		return MPI_SUCCESS;
nomem:
	free(nb->in);
	free(nb->out);
	return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
}

/* One block per neighbor each way: send block k (count scounts[k] of
 * stypes[k] at sbuf + sdispls[k] bytes) to out-neighbor k, receive
 * block k from in-neighbor k. */
struct blocks {
	const void *sbuf;
	void *rbuf;
	const int *scounts, *rcounts;
	const MPI_Aint *sdispls, *rdispls;
	const MPI_Datatype *stypes, *rtypes;
};

static int exchange(const char *fn, struct bcs_comm *c,
		    const struct nbrs *nb, const struct blocks *b)
{
	MPI_Request *r = malloc(((size_t)nb->nin + nb->nout + 1) *
				sizeof(*r));
	int rc = MPI_SUCCESS, w;

	if (!r)
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0; k < nb->nin + nb->nout; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; !rc && k < nb->nin; k++)
		if (nb->in[k] != MPI_PROC_NULL)
			/* from the −1 neighbor comes what it sent to its +1 */
			rc = bcs_irecv((char *)b->rbuf + b->rdispls[k],
				       b->rcounts[k], b->rtypes[k],
				       c->world[nb->in[k]], T_NEIGHBOR +
				       (nb->cart ? k ^ 1 : 0), c->ctx + 1, c,
				       &r[k]);
	for (int k = 0; !rc && k < nb->nout; k++)
		if (nb->out[k] != MPI_PROC_NULL)
			rc = bcs_isend((const char *)b->sbuf + b->sdispls[k],
				       b->scounts[k], b->stypes[k],
				       c->world[nb->out[k]], T_NEIGHBOR +
				       (nb->cart ? k : 0), c->ctx + 1, c, 0,
				       &r[nb->nin + k]);
	w = bcs_coll_wait(fn, c, r, nb->nin + nb->nout);
	free(r);
	return rc ? bcs_error(c, fn, rc, "out of requests") : w;
}

/* The block layout of the fixed-size and v variants as a struct
 * blocks: counts, displacements in elements (NULL: k * count) and one
 * type each way. */
static int neighbor_coll(const char *fn, const void *sbuf, int scount,
			 const int *scounts, const int *sdispls,
			 MPI_Datatype stype, int same_send, void *rbuf,
			 int rcount, const int *rcounts, const int *rdispls,
			 MPI_Datatype rtype, MPI_Comm comm)
{
	struct bcs_comm *c;
	struct nbrs nb;
	struct blocks b = { sbuf, rbuf, NULL, NULL, NULL, NULL, NULL, NULL };
	int *sc = NULL, *rcn = NULL, rc;
	MPI_Aint *sd = NULL, *rd = NULL;
	MPI_Datatype *st = NULL, *rt = NULL;

	if ((rc = neighbors(fn, comm, &c, &nb)))
		return rc;
	if ((rc = bcs_coll_type_ok(fn, c, scount, stype)) ||
	    (rc = bcs_coll_type_ok(fn, c, rcount, rtype)))
		goto out;
	rc = MPI_ERR_NO_MEM;
	if (!(sc = malloc(((size_t)nb.nout + 1) * sizeof(int))) ||
	    !(sd = malloc(((size_t)nb.nout + 1) * sizeof(MPI_Aint))) ||
	    !(st = malloc(((size_t)nb.nout + 1) * sizeof(MPI_Datatype))) ||
	    !(rcn = malloc(((size_t)nb.nin + 1) * sizeof(int))) ||
	    !(rd = malloc(((size_t)nb.nin + 1) * sizeof(MPI_Aint))) ||
	    !(rt = malloc(((size_t)nb.nin + 1) * sizeof(MPI_Datatype)))) {
		rc = bcs_error(c, fn, rc, "out of memory");
		goto out;
	}
	for (int k = 0; k < nb.nout; k++) {
		sc[k] = scounts ? scounts[k] : scount;
		/* allgather: the one block to every neighbor */
		sd[k] = same_send ? 0 : (MPI_Aint)(sdispls ? sdispls[k] :
						   k * scount) *
					bcs_dt_extent(stype);
		st[k] = stype;
	}
	for (int k = 0; k < nb.nin; k++) {
		rcn[k] = rcounts ? rcounts[k] : rcount;
		rd[k] = (MPI_Aint)(rdispls ? rdispls[k] : k * rcount) *
			bcs_dt_extent(rtype);
		rt[k] = rtype;
	}
	b.scounts = sc;
	b.sdispls = sd;
	b.stypes = st;
	b.rcounts = rcn;
	b.rdispls = rd;
	b.rtypes = rt;
	rc = exchange(fn, c, &nb, &b);
out:
	free(sc);
	free(sd);
	free(st);
	free(rcn);
	free(rd);
	free(rt);
	free(nb.in);
	free(nb.out);
	return rc;
}

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount,
			    MPI_Datatype sendtype, void *recvbuf,
			    int recvcount, MPI_Datatype recvtype,
			    MPI_Comm comm)
{
	return neighbor_coll("MPI_Neighbor_allgather", sendbuf, sendcount,
			     NULL, NULL, sendtype, 1, recvbuf, recvcount, NULL,
			     NULL, recvtype, comm);
}

#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
			     MPI_Datatype sendtype, void *recvbuf,
			     const int recvcounts[], const int displs[],
			     MPI_Datatype recvtype, MPI_Comm comm)
{
	if (!recvcounts || !displs) {
		BCS_NEED_INIT("MPI_Neighbor_allgatherv");
		return bcs_error(NULL, "MPI_Neighbor_allgatherv", MPI_ERR_ARG,
				 "recvcounts or displs is NULL");
	}
	return neighbor_coll("MPI_Neighbor_allgatherv", sendbuf, sendcount,
			     NULL, NULL, sendtype, 1, recvbuf, 0, recvcounts,
			     displs, recvtype, comm);
}

#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
			   MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype,
			   MPI_Comm comm)
{
	return neighbor_coll("MPI_Neighbor_alltoall", sendbuf, sendcount,
			     NULL, NULL, sendtype, 0, recvbuf, recvcount, NULL,
			     NULL, recvtype, comm);
}

#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
			    const int sdispls[], MPI_Datatype sendtype,
			    void *recvbuf, const int recvcounts[],
			    const int rdispls[], MPI_Datatype recvtype,
			    MPI_Comm comm)
{
	if (!sendcounts || !sdispls || !recvcounts || !rdispls) {
		BCS_NEED_INIT("MPI_Neighbor_alltoallv");
		return bcs_error(NULL, "MPI_Neighbor_alltoallv", MPI_ERR_ARG,
				 "a count or displacement array is NULL");
	}
	return neighbor_coll("MPI_Neighbor_alltoallv", sendbuf, 0, sendcounts,
			     sdispls, sendtype, 0, recvbuf, 0, recvcounts,
			     rdispls, recvtype, comm);
}

#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
			    const MPI_Aint sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf,
			    const int recvcounts[], const MPI_Aint rdispls[],
			    const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct bcs_comm *c;
	struct nbrs nb;
	struct blocks b = { sendbuf, recvbuf, sendcounts, recvcounts, sdispls,
			    rdispls, sendtypes, recvtypes };
	int rc;

	if ((rc = neighbors("MPI_Neighbor_alltoallw", comm, &c, &nb)))
		return rc;
	if ((nb.nout && (!sendcounts || !sdispls || !sendtypes)) ||
	    (nb.nin && (!recvcounts || !rdispls || !recvtypes)))
		rc = bcs_error(c, "MPI_Neighbor_alltoallw", MPI_ERR_ARG,
			       "a count, displacement or type array is NULL");
	for (int k = 0; !rc && k < nb.nout; k++)
		rc = bcs_coll_type_ok("MPI_Neighbor_alltoallw", c,
				      sendcounts[k], sendtypes[k]);
	for (int k = 0; !rc && k < nb.nin; k++)
		rc = bcs_coll_type_ok("MPI_Neighbor_alltoallw", c,
				      recvcounts[k], recvtypes[k]);
	if (!rc)
		rc = exchange("MPI_Neighbor_alltoallw", c, &nb, &b);
	free(nb.in);
	free(nb.out);
	return rc;
}
