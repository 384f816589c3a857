/*
 * test_bcsmpi_topo.c — Cartesian topologies (bcsmpi/topo.c):
 * MPI_Dims_create against the standard's examples and a brute force, and
 * MPI_Cart_create and its queries on 2-D grids, periodic or not.  comm.c
 * is stood in for by a table of communicators whose bcs_comm_new counts
 * what it made, so each member of an old communicator can be played in
 * turn (its rank set before the call).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bcsmpi_stubs.h"

/* ---- comm.c, stood in for ---------------------------------------------- */

#define NCOMMS 64

static struct bcs_comm comms[NCOMMS];
static int barriers, barrier_rc, made;

struct bcs_comm *bcs_comm_get(MPI_Comm c)
{
	unsigned i = H_INDEX(c);

	if (H_OBJ(c) != O_COMM || H_KIND(c) != H_DIRECT || i < 2 ||
	    i >= NCOMMS || !comms[i].used)
		return NULL;
	return &comms[i];
}

static MPI_Comm enter(int size, const int32_t *world, int rank)
{
	for (unsigned i = 2; i < NCOMMS; i++) {
		struct bcs_comm *c = &comms[i];

		if (c->used)
			continue;
		memset(c, 0, sizeof(*c));
		c->used = 1;
		c->size = size;
		c->rank = rank;
		c->world = malloc((size_t)size * sizeof(int32_t));
		memcpy(c->world, world, (size_t)size * sizeof(int32_t));
		return H_MAKE(H_DIRECT, O_COMM, i);
	}
	fail();
	return MPI_COMM_NULL;
}

/* As comm.c's: the parent counts it, the caller is where its world rank
 * is. */
MPI_Comm bcs_comm_new(struct bcs_comm *parent, uint32_t color, int size,
		      const int32_t *world, int *rc)
{
	int32_t me = parent->world[parent->rank];
	int rank = -1;

	(void)color;
	parent->children++;
	made++;
	for (int k = 0; k < size; k++)
		if (world[k] == me)
			rank = k;
	*rc = MPI_SUCCESS;
	return enter(size, world, rank);
}

int PMPI_Barrier(MPI_Comm comm)
{
	assert_non_null(bcs_comm_get(comm));
	barriers++;
	return barrier_rc;
}

/* comm.c's split, as this member sees it: the members of its color in
 * key order are worked out from the grid the test describes (splits),
 * so Cart_sub's color and key are checked by the ranks they give. */
static int split_color, split_key, splits;

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	int32_t me;

	assert_non_null(bcs_comm_get(comm));
	me = bcs_comm_get(comm)->world[bcs_comm_get(comm)->rank];
	split_color = color;
	split_key = key;
	splits++;
	*newcomm = enter(1, &me, 0);
	return MPI_SUCCESS;
}

static void release(MPI_Comm h);

/* graph.c's: these communicators have no graph */
int bcs_graph_kind(const struct bcs_graph *g)
{
	assert_null(g);
	return MPI_UNDEFINED;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
	release(*comm);
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* An old communicator of size members (world ranks 100..), played as
 * member rank. */
static MPI_Comm old_comm(int size, int rank)
{
	int32_t world[64];

	for (int i = 0; i < size; i++)
		world[i] = 100 + i;
	return enter(size, world, rank);
}

/* comm.c's comm_release: the topology goes with the communicator. */
static void release(MPI_Comm h)
{
	struct bcs_comm *c = bcs_comm_get(h);

	if (!c)
		return;
	if (c->cart) {
		free(c->cart->dims);
		free(c->cart->periods);
		free(c->cart->coords);
		free(c->cart);
	}
	free(c->world);
	memset(c, 0, sizeof(*c));
}

static int setup(void **state)
{
	(void)state;
	stub_initialize();
	return 0;
}

/* A Cartesian communicator of the 2-D grid dims on size members, as
 * member rank sees it. */
static MPI_Comm grid(int size, int rank, const int dims[2],
		     const int periods[2], MPI_Comm *old)
{
	MPI_Comm cart = MPI_COMM_WORLD;

	*old = old_comm(size, rank);
	assert_int_equal(MPI_Cart_create(*old, 2, dims, periods, 1, &cart),
			 MPI_SUCCESS);
	return cart;
}

/* ---- MPI_Dims_create --------------------------------------------------- */

static void dims_are(int nnodes, int ndims, const int *in, const int *want)
{
	int d[8];

	memcpy(d, in, (size_t)ndims * sizeof(int));
	assert_int_equal(MPI_Dims_create(nnodes, ndims, d), MPI_SUCCESS);
	assert_memory_equal(d, want, (size_t)ndims * sizeof(int));
}

static void test_dims_create_standard_examples(void **state)
{
	(void)state;
	/* MPI-3.1 §7.5.2, Example 7.1 */
	dims_are(6, 2, (int[]){ 0, 0 }, (int[]){ 3, 2 });
	dims_are(7, 2, (int[]){ 0, 0 }, (int[]){ 7, 1 });
	dims_are(6, 3, (int[]){ 0, 3, 0 }, (int[]){ 2, 3, 1 });
	/* and MPICH's answers where they are the only balanced ones */
	dims_are(16, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 2, 2 });
	dims_are(12, 3, (int[]){ 0, 0, 0 }, (int[]){ 3, 2, 2 });
	dims_are(1000, 4, (int[]){ 0, 0, 0, 0 }, (int[]){ 8, 5, 5, 5 });
	dims_are(96, 4, (int[]){ 0, 0, 0, 0 }, (int[]){ 4, 4, 3, 2 });
	dims_are(50, 3, (int[]){ 0, 0, 0 }, (int[]){ 5, 5, 2 });
	dims_are(1, 3, (int[]){ 0, 0, 0 }, (int[]){ 1, 1, 1 });
	dims_are(6, 2, (int[]){ 2, 3 }, (int[]){ 2, 3 });
	dims_are(12, 3, (int[]){ 0, 2, 0 }, (int[]){ 3, 2, 2 });
	/* the least spread, then the smallest largest: 9 8 5 (MPICH 10 6 6) */
	dims_are(360, 3, (int[]){ 0, 0, 0 }, (int[]){ 9, 8, 5 });
	assert_int_equal(MPI_Dims_create(5, 0, NULL), MPI_SUCCESS);
}

static void test_dims_create_refuses_the_impossible(void **state)
{
	int d[3] = { 0, 3, 0 };

	(void)state;
	/* MPI-3.1 Example 7.1: (7, 3) with (0, 3, 0) is erroneous */
	assert_int_equal(MPI_Dims_create(7, 3, d), MPI_ERR_DIMS);
	assert_int_equal(d[0], 0);
	assert_int_equal(d[1], 3);
	assert_int_equal(d[2], 0);
	d[0] = 2;
	d[1] = 3;
	assert_int_equal(MPI_Dims_create(7, 2, d), MPI_ERR_DIMS);
	assert_int_equal(MPI_Dims_create(5, 2, d), MPI_ERR_DIMS);
	d[0] = -1;
	d[1] = 0;
	assert_int_equal(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
	d[0] = 0;
	assert_int_equal(MPI_Dims_create(0, 2, d), MPI_ERR_ARG);
	assert_int_equal(MPI_Dims_create(-1, 2, d), MPI_ERR_ARG);
	assert_int_equal(MPI_Dims_create(6, -1, d), MPI_ERR_ARG);
	assert_int_equal(MPI_Dims_create(6, 2, NULL), MPI_ERR_ARG);
	/* fixed sizes whose product passes an int */
	d[0] = 65536;
	d[1] = 65536;
	d[2] = 0;
	assert_int_equal(MPI_Dims_create(1 << 30, 3, d), MPI_ERR_DIMS);
}

static int lex_less(const int *a, const int *b, int k)
{
	for (int i = 0; i < k; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return 0;
}

/* Every non-increasing factorization of n into k factors; the best by
 * the least spread, then lexicographically least. */
static void all_factorizations(int m, int k, int pos, int maxf, int *cur,
			       int *best, int *have)
{
	if (pos == k) {
		int sc = cur[0] - cur[k - 1];

		if (m != 1)
			return;
		if (*have) {
			int sb = best[0] - best[k - 1];

			if (sc > sb || (sc == sb && !lex_less(cur, best, k)))
				return;
		}
		memcpy(best, cur, (size_t)k * sizeof(int));
		*have = 1;
		return;
	}
	for (int d = maxf; d >= 1; d--)
		if (m % d == 0) {
			cur[pos] = d;
			all_factorizations(m / d, k, pos + 1, d, cur, best,
					   have);
		}
}

static void test_dims_create_is_as_balanced_as_can_be(void **state)
{
	(void)state;
	for (int n = 1; n <= 240; n++)
		for (int k = 1; k <= 4; k++) {
			int cur[4], best[4], have = 0, d[4] = { 0 };

			all_factorizations(n, k, 0, n, cur, best, &have);
			assert_true(have);
			assert_int_equal(MPI_Dims_create(n, k, d), MPI_SUCCESS);
			assert_memory_equal(d, best, (size_t)k * sizeof(int));
		}
}

static void test_dims_create_is_quick_on_large_counts(void **state)
{
	int d[32] = { 0 };
	long long p = 1;

	(void)state;
	/* a prime: itself and ones */
	assert_int_equal(MPI_Dims_create(INT_MAX, 2, d), MPI_SUCCESS);
	assert_int_equal(d[0], INT_MAX);
	assert_int_equal(d[1], 1);
	/* 2^30 in 30 dimensions: all 2; in 5: all 64 */
	memset(d, 0, sizeof d);
	assert_int_equal(MPI_Dims_create(1 << 30, 30, d), MPI_SUCCESS);
	for (int i = 0; i < 30; i++)
		assert_int_equal(d[i], 2);
	memset(d, 0, sizeof d);
	assert_int_equal(MPI_Dims_create(1 << 30, 5, d), MPI_SUCCESS);
	for (int i = 0; i < 5; i++)
		assert_int_equal(d[i], 64);
	/* the product of the first nine primes, and 2^4 3^3 5^2 7 11 13 17 */
	memset(d, 0, sizeof d);
	assert_int_equal(MPI_Dims_create(223092870, 6, d), MPI_SUCCESS);
	for (int i = 0; i < 6; i++) {
		p *= d[i];
		if (i)
			assert_true(d[i] <= d[i - 1]);
	}
	assert_int_equal(p, 223092870);
	memset(d, 0, sizeof d);
	assert_int_equal(MPI_Dims_create(2042040 * 36, 7, d), MPI_SUCCESS);
	p = 1;
	for (int i = 0; i < 7; i++)
		p *= d[i];
	assert_int_equal(p, 2042040 * 36);
}

/* ---- Cartesian communicators ------------------------------------------- */

/* 8 members, a 2 x 3 grid: ranks 0..5 in it, in row-major order; 6 and 7
 * get MPI_COMM_NULL, and every member counts one communicator made. */
static void test_cart_create_keeps_rank_order(void **state)
{
	const int dims[2] = { 2, 3 }, periods[2] = { 1, 0 };

	(void)state;
	for (int r = 0; r < 8; r++) {
		MPI_Comm old, cart;
		struct bcs_comm *c;
		int before_made = made, before_barriers = barriers;

		cart = grid(8, r, dims, periods, &old);
		assert_int_equal(barriers, before_barriers + 1);
		assert_int_equal(bcs_comm_get(old)->children, 1);
		if (r >= 6) {
			assert_int_equal(cart, MPI_COMM_NULL);
			assert_int_equal(made, before_made);
			release(old);
			continue;
		}
		assert_int_equal(made, before_made + 1);
		assert_non_null(c = bcs_comm_get(cart));
		assert_int_equal(c->size, 6);
		assert_int_equal(c->rank, r);
		assert_non_null(c->cart);
		assert_int_equal(c->cart->ndims, 2);
		assert_int_equal(c->cart->coords[0], r / 3);
		assert_int_equal(c->cart->coords[1], r % 3);
		assert_int_equal(c->cart->periods[0], 1);
		assert_int_equal(c->cart->periods[1], 0);
		for (int k = 0; k < 6; k++)
			assert_int_equal(c->world[k], 100 + k);
		release(cart);
		release(old);
	}
}

static void test_cart_coords_and_rank_are_inverse(void **state)
{
	const int dims[2] = { 3, 4 }, periods[2] = { 0, 0 };
	MPI_Comm old, cart = grid(12, 5, dims, periods, &old);

	(void)state;
	for (int r = 0; r < 12; r++) {
		int co[2] = { -1, -1 }, back = -1;

		assert_int_equal(MPI_Cart_coords(cart, r, 2, co), MPI_SUCCESS);
		assert_int_equal(co[0], r / 4);
		assert_int_equal(co[1], r % 4);
		assert_int_equal(MPI_Cart_rank(cart, co, &back), MPI_SUCCESS);
		assert_int_equal(back, r);
	}
	release(cart);
	release(old);
}

static void test_cart_rank_wraps_periodic_dimensions_only(void **state)
{
	const int dims[2] = { 2, 3 }, per[2] = { 1, 1 }, non[2] = { 1, 0 };
	MPI_Comm old, old2, cart = grid(6, 0, dims, per, &old);
	MPI_Comm half = grid(6, 0, dims, non, &old2);
	int r = -1;

	(void)state;
	assert_int_equal(MPI_Cart_rank(cart, (int[]){ -1, 4 }, &r),
			 MPI_SUCCESS);
	assert_int_equal(r, 1 * 3 + 1);
	assert_int_equal(MPI_Cart_rank(cart, (int[]){ 5, -7 }, &r),
			 MPI_SUCCESS);
	assert_int_equal(r, 1 * 3 + 2);
	assert_int_equal(MPI_Cart_rank(half, (int[]){ -1, 2 }, &r),
			 MPI_SUCCESS);
	assert_int_equal(r, 1 * 3 + 2);
	r = -1;
	assert_int_equal(MPI_Cart_rank(half, (int[]){ 0, 3 }, &r),
			 MPI_ERR_RANK);
	assert_int_equal(MPI_Cart_rank(half, (int[]){ 0, -1 }, &r),
			 MPI_ERR_RANK);
	assert_int_equal(r, -1);
	release(cart);
	release(half);
	release(old);
	release(old2);
}

/* A 2 x 3 grid:  0 1 2
 *                3 4 5 */
static void test_cart_shift_on_a_periodic_grid(void **state)
{
	const int dims[2] = { 2, 3 }, periods[2] = { 1, 1 };

	(void)state;
	for (int me = 0; me < 6; me++) {
		MPI_Comm old, cart = grid(6, me, dims, periods, &old);
		int src, dst, row = me / 3, col = me % 3;

		assert_int_equal(MPI_Cart_shift(cart, 1, 1, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(dst, row * 3 + (col + 1) % 3);
		assert_int_equal(src, row * 3 + (col + 2) % 3);
		assert_int_equal(MPI_Cart_shift(cart, 0, 1, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(dst, (me + 3) % 6);
		assert_int_equal(src, (me + 3) % 6);
		assert_int_equal(MPI_Cart_shift(cart, 1, -4, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(dst, row * 3 + (col + 2) % 3);
		assert_int_equal(src, row * 3 + (col + 1) % 3);
		assert_int_equal(MPI_Cart_shift(cart, 0, 0, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(src, me);
		assert_int_equal(dst, me);
		release(cart);
		release(old);
	}
}

static void test_cart_shift_stops_at_non_periodic_edges(void **state)
{
	const int dims[2] = { 2, 3 }, periods[2] = { 0, 0 };

	(void)state;
	for (int me = 0; me < 6; me++) {
		MPI_Comm old, cart = grid(6, me, dims, periods, &old);
		int src, dst, row = me / 3, col = me % 3;

		assert_int_equal(MPI_Cart_shift(cart, 1, 1, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(dst, col < 2 ? me + 1 : MPI_PROC_NULL);
		assert_int_equal(src, col > 0 ? me - 1 : MPI_PROC_NULL);
		assert_int_equal(MPI_Cart_shift(cart, 0, -1, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(dst, row == 1 ? me - 3 : MPI_PROC_NULL);
		assert_int_equal(src, row == 0 ? me + 3 : MPI_PROC_NULL);
		assert_int_equal(MPI_Cart_shift(cart, 1, INT_MAX, &src, &dst),
				 MPI_SUCCESS);
		assert_int_equal(src, MPI_PROC_NULL);
		assert_int_equal(dst, MPI_PROC_NULL);
		assert_int_equal(MPI_Cart_shift(cart, 2, 1, &src, &dst),
				 MPI_ERR_ARG);
		assert_int_equal(MPI_Cart_shift(cart, -1, 1, &src, &dst),
				 MPI_ERR_ARG);
		release(cart);
		release(old);
	}
}

static void test_cart_get_and_topo_test(void **state)
{
	const int dims[2] = { 2, 3 }, periods[2] = { 0, 5 };
	MPI_Comm old, cart = grid(6, 4, dims, periods, &old);
	int nd = -1, d[2], p[2], co[2], status;

	(void)state;
	assert_int_equal(MPI_Cartdim_get(cart, &nd), MPI_SUCCESS);
	assert_int_equal(nd, 2);
	assert_int_equal(MPI_Cart_get(cart, 2, d, p, co), MPI_SUCCESS);
	assert_int_equal(d[0], 2);
	assert_int_equal(d[1], 3);
	assert_int_equal(p[0], 0);
	assert_int_equal(p[1], 1);
	assert_int_equal(co[0], 1);
	assert_int_equal(co[1], 1);
	assert_int_equal(MPI_Cart_get(cart, 1, d, p, co), MPI_ERR_ARG);
	assert_int_equal(MPI_Topo_test(cart, &status), MPI_SUCCESS);
	assert_int_equal(status, MPI_CART);
	assert_int_equal(MPI_Topo_test(old, &status), MPI_SUCCESS);
	assert_int_equal(status, MPI_UNDEFINED);
	/* a communicator without one: no Cartesian queries */
	assert_int_equal(MPI_Cartdim_get(old, &nd), MPI_ERR_TOPOLOGY);
	assert_int_equal(MPI_Cart_coords(old, 0, 2, co), MPI_ERR_TOPOLOGY);
	assert_int_equal(MPI_Cart_rank(old, co, &nd), MPI_ERR_TOPOLOGY);
	assert_int_equal(MPI_Cart_shift(old, 0, 1, &nd, &nd),
			 MPI_ERR_TOPOLOGY);
	assert_int_equal(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM);
	assert_int_equal(MPI_Cart_coords(cart, 6, 2, co), MPI_ERR_RANK);
	assert_int_equal(MPI_Cart_coords(cart, -1, 2, co), MPI_ERR_RANK);
	assert_int_equal(MPI_Cart_coords(cart, 0, 1, co), MPI_ERR_ARG);
	release(cart);
	release(old);
}

static void test_cart_create_refuses_bad_grids(void **state)
{
	MPI_Comm old = old_comm(4, 0), cart = MPI_COMM_WORLD;
	int before = barriers;

	(void)state;
	assert_int_equal(MPI_Cart_create(old, 2, (int[]){ 3, 2 },
					 (int[]){ 0, 0 }, 0, &cart),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Cart_create(old, 2, (int[]){ 0, 2 },
					 (int[]){ 0, 0 }, 0, &cart),
			 MPI_ERR_DIMS);
	assert_int_equal(MPI_Cart_create(old, 2, (int[]){ -2, 2 },
					 (int[]){ 0, 0 }, 0, &cart),
			 MPI_ERR_DIMS);
	assert_int_equal(MPI_Cart_create(old, 3, (int[]){ 65536, 65536, 2 },
					 (int[]){ 0, 0, 0 }, 0, &cart),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Cart_create(old, -1, NULL, NULL, 0, &cart),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Cart_create(old, 1, (int[]){ 2 }, (int[]){ 0 },
					 0, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Cart_create(MPI_COMM_NULL, 1, (int[]){ 1 },
					 (int[]){ 0 }, 0, &cart),
			 MPI_ERR_COMM);
	assert_int_equal(cart, MPI_COMM_WORLD);
	/* refused before the barrier: no member waits for this one */
	assert_int_equal(barriers, before);
	assert_int_equal(bcs_comm_get(old)->children, 0);
	/* a failed barrier makes nothing */
	barrier_rc = MPI_ERR_OTHER;
	assert_int_equal(MPI_Cart_create(old, 1, (int[]){ 2 }, (int[]){ 0 },
					 0, &cart), MPI_ERR_OTHER);
	barrier_rc = MPI_SUCCESS;
	assert_int_equal(bcs_comm_get(old)->children, 0);
	release(old);
}

/* ndims 0: a grid of one process (MPI-3.1 §7.5.1). */
static void test_cart_of_no_dimension_has_one_member(void **state)
{
	MPI_Comm old0 = old_comm(3, 0), old1 = old_comm(3, 1), c0, c1;
	int nd = -1, r = -1, status;

	(void)state;
	assert_int_equal(MPI_Cart_create(old0, 0, NULL, NULL, 0, &c0),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Cart_create(old1, 0, NULL, NULL, 0, &c1),
			 MPI_SUCCESS);
	assert_int_equal(c1, MPI_COMM_NULL);
	assert_int_equal(bcs_comm_get(old1)->children, 1);
	assert_int_not_equal(c0, MPI_COMM_NULL);
	assert_int_equal(bcs_comm_get(c0)->size, 1);
	assert_int_equal(MPI_Cartdim_get(c0, &nd), MPI_SUCCESS);
	assert_int_equal(nd, 0);
	assert_int_equal(MPI_Topo_test(c0, &status), MPI_SUCCESS);
	assert_int_equal(status, MPI_CART);
	assert_int_equal(MPI_Cart_rank(c0, NULL, &r), MPI_SUCCESS);
	assert_int_equal(r, 0);
	release(c0);
	release(old0);
	release(old1);
}

/* Cart_sub of a 2 x 3 x 4 grid keeping dimensions 0 and 2: each member
 * splits by its coordinate in dimension 1 and keys by its row-major
 * place in the 2 x 4 grid left, which it gets with its coordinates. */
static void test_cart_sub_keeps_the_chosen_dimensions(void **state)
{
	const int dims[3] = { 2, 3, 4 }, periods[3] = { 1, 0, 1 };
	const int remain[3] = { 1, 0, 1 };

	(void)state;
	for (int r = 0; r < 24; r++) {
		MPI_Comm old = old_comm(24, r), cart, sub;
		int c[3], sdims[2], speriods[2], scoords[2], nd;

		assert_int_equal(MPI_Cart_create(old, 3, dims, periods, 0,
						 &cart), MPI_SUCCESS);
		assert_int_equal(MPI_Cart_coords(cart, r, 3, c), MPI_SUCCESS);
		assert_int_equal(MPI_Cart_sub(cart, remain, &sub),
				 MPI_SUCCESS);
		assert_int_equal(split_color, c[1]);
		assert_int_equal(split_key, c[0] * 4 + c[2]);
		assert_int_equal(MPI_Cartdim_get(sub, &nd), MPI_SUCCESS);
		assert_int_equal(nd, 2);
		assert_int_equal(MPI_Cart_get(sub, 2, sdims, speriods,
					      scoords), MPI_SUCCESS);
		assert_int_equal(sdims[0], 2);
		assert_int_equal(sdims[1], 4);
		assert_int_equal(speriods[0], 1);
		assert_int_equal(speriods[1], 1);
		assert_int_equal(scoords[0], c[0]);
		assert_int_equal(scoords[1], c[2]);
		release(sub);
		release(cart);
		release(old);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cart_sub_keeps_the_chosen_dimensions),
		cmocka_unit_test(test_dims_create_standard_examples),
		cmocka_unit_test(test_dims_create_refuses_the_impossible),
		cmocka_unit_test(test_dims_create_is_as_balanced_as_can_be),
		cmocka_unit_test(test_dims_create_is_quick_on_large_counts),
		cmocka_unit_test(test_cart_create_keeps_rank_order),
		cmocka_unit_test(test_cart_coords_and_rank_are_inverse),
		cmocka_unit_test(test_cart_rank_wraps_periodic_dimensions_only),
		cmocka_unit_test(test_cart_shift_on_a_periodic_grid),
		cmocka_unit_test(test_cart_shift_stops_at_non_periodic_edges),
		cmocka_unit_test(test_cart_get_and_topo_test),
		cmocka_unit_test(test_cart_create_refuses_bad_grids),
		cmocka_unit_test(test_cart_of_no_dimension_has_one_member),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
