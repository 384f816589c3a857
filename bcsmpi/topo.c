/*
 * topo.c — Cartesian process topologies: MPI_Dims_create's balanced grid,
 * communicators that carry one (struct bcs_cart, impl.h), and the queries
 * on them.  Ranks are numbered in row-major order (the last dimension
 * varies fastest, MPI-3.1 §7.5.1) and keep their rank of the old
 * communicator: reorder is a hint this library does not take.
 *
 * Key invariant: MPI_Cart_create counts one communicator made on every
 * member of the old one, in the grid or not — members outside it bump
 * the parent's count (children) as MPI_Comm_split does for MPI_UNDEFINED
 * — so the next communicator any of them makes gets the same context on
 * all of them (comm.c).
 *
 * Error classes follow MPICH's where MPI names none (an argument out of
 * range is MPI_ERR_ARG, a grid larger than the communicator too), but a
 * coordinate outside a non-periodic dimension in MPI_Cart_rank is
 * MPI_ERR_RANK: it names no rank.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* ---- MPI_Dims_create --------------------------------------------------- */

/* The number of divisors of an int is at most 1600 (2095133040's). */
#define DIVISORS_MAX 1600

/* A search for k factors of n in non-increasing order, the least spread
 * (largest - smallest) first and, among those, the lexicographically
 * least (the smallest largest factor): the "as close to each other as
 * possible" of MPI-3.1 §7.5.2, made exact so every rank agrees.  Branch
 * and bound over n's divisors: the smallest of r factors of m is at most
 * m^(1/r), which bounds the spread a partial choice can still reach. */
struct dims_search {
	int k;
	int *cur, *best;
	int have_best;
	const int *div; /* n's divisors, ascending */
	int ndiv;
};

/* d^r >= m, without overflow. */
static int pow_reaches(long long d, int r, long long m)
{
	long long p = 1;

	for (int i = 0; i < r; i++) {
		if (p >= m)
			return 1;
		p *= d;
	}
	return p >= m;
}

/* The largest x with x^r <= m (m >= 1, r >= 1). */
static long long iroot(long long m, int r)
{
	long long lo = 1, hi = m;

	while (lo < hi) {
		long long mid = lo + (hi - lo + 1) / 2;

		/* mid^r <= m  <=>  not mid^r >= m + 1 */
		if (pow_reaches(mid, r, m + 1))
			hi = mid - 1;
		else
			lo = mid;
	}
	return lo;
}

static int better(const struct dims_search *s)
{
	int sc, sb;

	if (!s->have_best)
		return 1;
	sc = s->cur[0] - s->cur[s->k - 1];
	sb = s->best[0] - s->best[s->k - 1];
	if (sc != sb)
		return sc < sb;
	for (int i = 0; i < s->k; i++)
		if (s->cur[i] != s->best[i])
			return s->cur[i] < s->best[i];
	return 0;
}

/* Factors pos.. of the product m, none above maxf. */
static void dims_search(struct dims_search *s, int pos, long long m,
			long long maxf)
{
	int r = s->k - pos;

	if (m == 1) {
		for (int i = pos; i < s->k; i++)
			s->cur[i] = 1;
		if (better(s)) {
			memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
			s->have_best = 1;
		}
		return;
	}
	if (r == 0)
		return;
	if (s->have_best && pos > 0 &&
	    s->cur[0] - iroot(m, r) > s->best[0] - s->best[s->k - 1])
		return;
	for (int j = s->ndiv - 1; j >= 0; j--) {
		long long d = s->div[j];

		if (d > maxf || m % d)
			continue;
		if (!pow_reaches(d, r, m))
			break; /* smaller ones cannot carry m in r factors */
		s->cur[pos] = (int)d;
		dims_search(s, pos + 1, m / d, d);
	}
}

/* dims of k free dimensions for n nodes (n >= 1, k >= 1). 0, or
 * MPI_ERR_NO_MEM. */
static int dims_balance(int n, int k, int *out)
{
	int div[DIVISORS_MAX], lo = 0, hi = DIVISORS_MAX;
	struct dims_search s = { .k = k };

	/* the divisors of n, ascending: the small ones from the front, their
	 * cofactors from the back, then closed up */
	for (long long d = 1; d * d <= n; d++)
		if (n % d == 0) {
			div[lo++] = (int)d;
			if (d * d != n)
				div[--hi] = (int)(n / d);
		}
	memmove(&div[lo], &div[hi], (size_t)(DIVISORS_MAX - hi) * sizeof(int));
	s.div = div;
	s.ndiv = lo + DIVISORS_MAX - hi;
	s.cur = malloc((size_t)k * sizeof(int));
	s.best = malloc((size_t)k * sizeof(int));
	if (!s.cur || !s.best) {
		free(s.cur);
		free(s.best);
		return MPI_ERR_NO_MEM;
	}
	dims_search(&s, 0, n, n);
	memcpy(out, s.best, (size_t)k * sizeof(int)); /* (n, 1, ..) at worst */
	free(s.cur);
	free(s.best);
	return MPI_SUCCESS;
}

#pragma weak MPI_Dims_create = PMPI_Dims_create
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	long long fixed = 1;
	int free_dims = 0, *f, rc;

	BCS_NEED_INIT("MPI_Dims_create");
	if (nnodes < 1 || ndims < 0)
		return bcs_error(NULL, "MPI_Dims_create", MPI_ERR_ARG,
				 "nnodes %d, ndims %d: nnodes positive, ndims "
				 "not negative", nnodes, ndims);
	if (ndims == 0)
		return MPI_SUCCESS; /* as MPICH: nothing to set */
	if (!dims)
		return bcs_error(NULL, "MPI_Dims_create", MPI_ERR_ARG,
				 "dims is NULL");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return bcs_error(NULL, "MPI_Dims_create", MPI_ERR_DIMS,
					 "dims[%d] is %d: 0 (to choose) or a "
					 "size", i, dims[i]);
		if (dims[i] == 0)
			free_dims++;
		else if ((fixed *= dims[i]) > nnodes)
			break;
	}
	if (fixed > nnodes || nnodes % fixed ||
	    (free_dims == 0 && fixed != nnodes))
		return bcs_error(NULL, "MPI_Dims_create", MPI_ERR_DIMS,
				 "the sizes given in dims%s do not divide "
				 "nnodes %d", free_dims ? "" : " (none 0)",
				 nnodes);
	if (free_dims == 0)
		return MPI_SUCCESS;
	if (!(f = malloc((size_t)free_dims * sizeof(int))))
		return bcs_error(NULL, "MPI_Dims_create", MPI_ERR_NO_MEM,
				 "out of memory for %d dimensions", ndims);
	if ((rc = dims_balance((int)(nnodes / fixed), free_dims, f))) {
		free(f);
		return bcs_error(NULL, "MPI_Dims_create", rc,
				 "out of memory for %d dimensions", ndims);
	}
	for (int i = 0, j = 0; i < ndims; i++)
		if (dims[i] == 0)
			dims[i] = f[j++];
	free(f);
	return MPI_SUCCESS;
}

/* ---- Cartesian communicators ------------------------------------------- */

static void cart_free(struct bcs_cart *cart)
{
	if (!cart)
		return;
	free(cart->dims);
	free(cart->periods);
	free(cart->coords);
	free(cart);
}

/* A topology of ndims dimensions (0 allowed) with this rank's coords;
 * NULL when out of memory.  Freed with its communicator (comm.c). */
static struct bcs_cart *cart_new(int ndims, const int dims[],
				 const int periods[], int rank)
{
	size_t n = ndims > 0 ? (size_t)ndims : 1;
	struct bcs_cart *cart = calloc(1, sizeof(*cart));

	if (!cart)
		return NULL;
	cart->dims = calloc(n, sizeof(int));
	cart->periods = calloc(n, sizeof(int));
	cart->coords = calloc(n, sizeof(int));
	if (!cart->dims || !cart->periods || !cart->coords) {
		cart_free(cart);
		return NULL;
	}
	cart->ndims = ndims;
	for (int i = ndims - 1; i >= 0; i--) {
		cart->dims[i] = dims[i];
		cart->periods[i] = periods[i] != 0;
		cart->coords[i] = rank % dims[i];
		rank /= dims[i];
	}
	return cart;
}

/* The communicator comm and its topology for call fn: 0, or the error
 * (reported). */
static int cart_of(const char *fn, MPI_Comm comm, struct bcs_comm **c)
{
	if (!(*c = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!(*c)->cart)
		return bcs_error(*c, fn, MPI_ERR_TOPOLOGY,
				 "the communicator has no Cartesian topology");
	return MPI_SUCCESS;
}

/* Coordinate x of dimension i, wrapped if periodic; -1 if outside a
 * non-periodic one. */
static long long cart_wrap(const struct bcs_cart *cart, int i, long long x)
{
	long long d = cart->dims[i];

	if (cart->periods[i])
		return ((x % d) + d) % d;
	return x >= 0 && x < d ? x : -1;
}

#pragma weak MPI_Cart_create = PMPI_Cart_create
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
		     const int periods[], int reorder, MPI_Comm *comm_cart)
{
	struct bcs_cart *cart = NULL;
	struct bcs_comm *c;
	long long n = 1;
	int rc;

	(void)reorder; /* ranks stay where they are */
	BCS_NEED_INIT("MPI_Cart_create");
	if (!(c = bcs_comm_get(comm_old)))
		return bcs_error(NULL, "MPI_Cart_create", MPI_ERR_COMM,
				 "not a communicator (%#x)",
				 (unsigned)comm_old);
	if (!comm_cart || ndims < 0 || (ndims > 0 && (!dims || !periods)))
		return bcs_error(c, "MPI_Cart_create", MPI_ERR_ARG,
				 "ndims %d; dims, periods or comm_cart NULL",
				 ndims);
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return bcs_error(c, "MPI_Cart_create", MPI_ERR_DIMS,
					 "dims[%d] is %d: not positive", i,
					 dims[i]);
		if (n <= c->size)
			n *= dims[i];
	}
	if (n > c->size)
		return bcs_error(c, "MPI_Cart_create", MPI_ERR_ARG,
				 "the grid has more processes than the "
				 "communicator's %d", c->size);
	if (c->rank < n &&
	    !(cart = cart_new(ndims, dims, periods, c->rank)))
		return bcs_error(c, "MPI_Cart_create", MPI_ERR_NO_MEM,
				 "out of memory for %d dimensions", ndims);
	/* collective: every member is here before any uses the new one */
	if ((rc = PMPI_Barrier(comm_old)) != MPI_SUCCESS) {
		cart_free(cart);
		return rc;
	}
	if (!cart) {
		c->children++; /* as the members of the grid count */
		*comm_cart = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	/* the first n ranks, in their order */
	*comm_cart = bcs_comm_new(c, 0, (int)n, c->world, &rc);
	if (rc != MPI_SUCCESS) {
		cart_free(cart);
		return bcs_error(c, "MPI_Cart_create", rc, "no room for "
				 "another communicator (%d at most)",
				 BCS_COMMS_MAX);
	}
	bcs_comm_get(*comm_cart)->cart = cart;
	return MPI_SUCCESS;
}

#pragma weak MPI_Topo_test = PMPI_Topo_test
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Topo_test");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Topo_test", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!status)
		return bcs_error(c, "MPI_Topo_test", MPI_ERR_ARG,
				 "status is NULL");
	*status = c->cart ? MPI_CART : bcs_graph_kind(c->graph);
	return MPI_SUCCESS;
}

#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT("MPI_Cartdim_get");
	if ((rc = cart_of("MPI_Cartdim_get", comm, &c)))
		return rc;
	if (!ndims)
		return bcs_error(c, "MPI_Cartdim_get", MPI_ERR_ARG,
				 "ndims is NULL");
	*ndims = c->cart->ndims;
	return MPI_SUCCESS;
}

/* maxdims below the topology's dimensions is an error, not a silent
 * truncation. */
#pragma weak MPI_Cart_get = PMPI_Cart_get
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
		  int coords[])
{
	struct bcs_comm *c;
	struct bcs_cart *cart;
	int rc;

	BCS_NEED_INIT("MPI_Cart_get");
	if ((rc = cart_of("MPI_Cart_get", comm, &c)))
		return rc;
	cart = c->cart;
	if (maxdims < cart->ndims ||
	    (cart->ndims > 0 && (!dims || !periods || !coords)))
		return bcs_error(c, "MPI_Cart_get", MPI_ERR_ARG,
				 "maxdims %d for %d dimensions, or dims, "
				 "periods or coords NULL", maxdims,
				 cart->ndims);
	for (int i = 0; i < cart->ndims; i++) {
		dims[i] = cart->dims[i];
		periods[i] = cart->periods[i];
		coords[i] = cart->coords[i];
	}
	return MPI_SUCCESS;
}

#pragma weak MPI_Cart_rank = PMPI_Cart_rank
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	struct bcs_comm *c;
	struct bcs_cart *cart;
	long long r = 0;
	int rc;

	BCS_NEED_INIT("MPI_Cart_rank");
	if ((rc = cart_of("MPI_Cart_rank", comm, &c)))
		return rc;
	cart = c->cart;
	if (!rank || (cart->ndims > 0 && !coords))
		return bcs_error(c, "MPI_Cart_rank", MPI_ERR_ARG,
				 "coords or rank is NULL");
	for (int i = 0; i < cart->ndims; i++) {
		long long x = cart_wrap(cart, i, coords[i]);

		if (x < 0)
			return bcs_error(c, "MPI_Cart_rank", MPI_ERR_RANK,
					 "coords[%d] is %d, outside 0..%d of a "
					 "non-periodic dimension", i,
					 coords[i], cart->dims[i] - 1);
		r = r * cart->dims[i] + x;
	}
	*rank = (int)r;
	return MPI_SUCCESS;
}

#pragma weak MPI_Cart_coords = PMPI_Cart_coords
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	struct bcs_comm *c;
	struct bcs_cart *cart;
	int rc;

	BCS_NEED_INIT("MPI_Cart_coords");
	if ((rc = cart_of("MPI_Cart_coords", comm, &c)))
		return rc;
	cart = c->cart;
	if (rank < 0 || rank >= c->size)
		return bcs_error(c, "MPI_Cart_coords", MPI_ERR_RANK,
				 "rank %d is outside 0..%d", rank, c->size - 1);
	if (maxdims < cart->ndims || (cart->ndims > 0 && !coords))
		return bcs_error(c, "MPI_Cart_coords", MPI_ERR_ARG,
				 "maxdims %d for %d dimensions, or coords "
				 "NULL", maxdims, cart->ndims);
	for (int i = cart->ndims - 1; i >= 0; i--) {
		coords[i] = rank % cart->dims[i];
		rank /= cart->dims[i];
	}
	return MPI_SUCCESS;
}

/* The neighbours disp steps along direction: MPI_PROC_NULL past the edge
 * of a non-periodic dimension. */
#pragma weak MPI_Cart_shift = PMPI_Cart_shift
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
		    int *rank_dest)
{
	struct bcs_comm *c;
	struct bcs_cart *cart;
	long long stride = 1, here, to, from;
	int rc;

	BCS_NEED_INIT("MPI_Cart_shift");
	if ((rc = cart_of("MPI_Cart_shift", comm, &c)))
		return rc;
	cart = c->cart;
	if (direction < 0 || direction >= cart->ndims)
		return bcs_error(c, "MPI_Cart_shift", MPI_ERR_ARG,
				 "direction %d is outside 0..%d", direction,
				 cart->ndims - 1);
	if (!rank_source || !rank_dest)
		return bcs_error(c, "MPI_Cart_shift", MPI_ERR_ARG,
				 "rank_source or rank_dest is NULL");
	for (int i = cart->ndims - 1; i > direction; i--)
		stride *= cart->dims[i];
	here = cart->coords[direction];
	to = cart_wrap(cart, direction, here + disp);
	from = cart_wrap(cart, direction, here - disp);
	*rank_dest = to < 0 ? MPI_PROC_NULL :
		     (int)(c->rank + (to - here) * stride);
	*rank_source = from < 0 ? MPI_PROC_NULL :
		       (int)(c->rank + (from - here) * stride);
	return MPI_SUCCESS;
}

/* The grids of the kept dimensions (MPI-3.1 §7.5.7): a split whose
 * color numbers the dropped coordinates and whose key the kept ones in
 * row-major order — so each new communicator's ranks run row-major over
 * its grid, as cart_new lays the coordinates out. */
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	struct bcs_comm *c;
	struct bcs_cart *g, *sub;
	int color = 0, key = 0, n = 0, rc;
	int *dims, *periods;

	BCS_NEED_INIT("MPI_Cart_sub");
	if ((rc = cart_of("MPI_Cart_sub", comm, &c)))
		return rc;
	g = c->cart;
	if ((g->ndims && !remain_dims) || !newcomm)
		return bcs_error(c, "MPI_Cart_sub", MPI_ERR_ARG,
				 "remain_dims or newcomm is NULL");
	dims = malloc(((size_t)g->ndims + 1) * sizeof(int));
	periods = malloc(((size_t)g->ndims + 1) * sizeof(int));
	if (!dims || !periods) {
		free(dims);
		free(periods);
		return bcs_error(c, "MPI_Cart_sub", MPI_ERR_NO_MEM,
				 "out of memory");
	}
	for (int d = 0; d < g->ndims; d++) {
		if (remain_dims[d]) {
			key = key * g->dims[d] + g->coords[d];
			dims[n] = g->dims[d];
			periods[n++] = g->periods[d];
		} else {
			color = color * g->dims[d] + g->coords[d];
		}
	}
	if ((rc = PMPI_Comm_split(comm, color, key, newcomm)) != MPI_SUCCESS) {
		free(dims);
		free(periods);
		return rc;
	}
	sub = cart_new(n, dims, periods, key);
	free(dims);
	free(periods);
	if (!sub) {
		PMPI_Comm_free(newcomm);
		return bcs_error(c, "MPI_Cart_sub", MPI_ERR_NO_MEM,
				 "out of memory for %d dimensions", n);
	}
	bcs_comm_get(*newcomm)->cart = sub;
	return MPI_SUCCESS;
}
