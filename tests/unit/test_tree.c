/*
 * test_tree.c — the radix-tree arithmetic of tree.c (private, sp_engine.h)
 * that membership, multicast and the combining tree all rely on.
 * Key properties checked exhaustively for fan-out 2, 4, 8, 16 and machines
 * of up to 2000 positions: every child's parent is the node that lists it,
 * every position except 0 is listed exactly once (so the tree spans the
 * machine), children come largest subtree first, heights match the depth
 * of the deepest position, and the set-tree position/id maps are inverse
 * bijections between a node set (plus its root) and 0..size-1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sp_engine.h"

static const uint32_t fanouts[] = {2, 4, 8, 16};
#define NFANOUTS (sizeof(fanouts) / sizeof(fanouts[0]))
#define MAXM 2000u

static uint32_t depth_by_walk(uint32_t p, uint32_t k)
{
	uint32_t d = 0;

	while (p != 0) {
		uint32_t q = sp_radix_parent(p, k);

		assert_true(q < p); /* parents precede children: no cycles */
		p = q;
		d++;
	}
	return d;
}

/* Number of positions in the subtree of p (p included) of an M-tree. */
static uint32_t subtree_size(uint32_t p, uint32_t M, uint32_t k,
			     uint32_t *buf)
{
	uint32_t n = 1, nk = sp_radix_children(p, M, k, buf, MAXM);
	uint32_t *mine = malloc((nk ? nk : 1) * sizeof(*mine));

	assert_non_null(mine);
	memcpy(mine, buf, nk * sizeof(*mine));
	for (uint32_t i = 0; i < nk; i++)
		n += subtree_size(mine[i], M, k, buf);
	free(mine);
	return n;
}

/* ---- radix tree over positions ----------------------------------------- */

static void test_radix_parent_of_every_child_is_the_node(void **state)
{
	uint32_t *kids = malloc(MAXM * sizeof(*kids));
	uint8_t *seen = malloc(MAXM);

	(void)state;
	assert_non_null(kids);
	assert_non_null(seen);
	for (size_t f = 0; f < NFANOUTS; f++) {
		uint32_t k = fanouts[f];

		for (uint32_t M = 1; M <= MAXM; M++) {
			uint64_t total = 0;

			memset(seen, 0, M);
			for (uint32_t p = 0; p < M; p++) {
				uint32_t nk = sp_radix_children(p, M, k, kids,
								MAXM);

				assert_true(nk < MAXM);
				for (uint32_t i = 0; i < nk; i++) {
					uint32_t c = kids[i];

					assert_true(c < M);
					assert_true(c != 0);
					assert_int_equal(sp_radix_parent(c, k), p);
					seen[c]++;
				}
				total += nk;
			}
			/* every position but the root is someone's child,
			 * exactly once: the tree spans 0..M-1 */
			assert_int_equal(seen[0], 0);
			for (uint32_t p = 1; p < M; p++)
				assert_int_equal(seen[p], 1);
			assert_int_equal(total, M - 1);
		}
	}
	free(kids);
	free(seen);
}

static void test_radix_parent_clears_lowest_nonzero_digit(void **state)
{
	(void)state;
	assert_int_equal(sp_radix_parent(0, 4), 0);
	assert_int_equal(sp_radix_parent(5, 4), 4);   /* 11 -> 10 (base 4) */
	assert_int_equal(sp_radix_parent(4, 4), 0);   /* 10 -> 00 */
	assert_int_equal(sp_radix_parent(12, 4), 0);  /* 30 -> 00 */
	assert_int_equal(sp_radix_parent(13, 4), 12); /* 31 -> 30 */
	assert_int_equal(sp_radix_parent(6, 2), 4);   /* 110 -> 100 */
	assert_int_equal(sp_radix_parent(0x1f0, 16), 0x100);
	for (size_t f = 0; f < NFANOUTS; f++)
		for (uint32_t p = 1; p < MAXM; p++)
			assert_true(sp_radix_parent(p, fanouts[f]) < p);
}

/* Children are listed highest digit first (the deepest subtrees first,
 * which shortens the critical path); in a full tree (M a power of k) that
 * is exactly "largest subtree first".  In a partial tree the last child of
 * the top digit may be small (M=65, k=4: 64 is a leaf listed before 16),
 * so only the digit order is a property of every M. */
static void test_radix_children_highest_digit_first(void **state)
{
	uint32_t *kids = malloc(MAXM * sizeof(*kids));
	uint32_t *scratch = malloc(MAXM * sizeof(*scratch));
	const uint32_t sizes[] = {7, 64, 65, 100, 256, 257, 1000, 1024};

	(void)state;
	assert_non_null(kids);
	assert_non_null(scratch);
	for (size_t f = 0; f < NFANOUTS; f++) {
		uint32_t k = fanouts[f];

		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			uint32_t M = sizes[s], full = 0;

			for (uint64_t q = 1; q <= M; q *= k)
				full = q == M;
			for (uint32_t p = 0; p < M; p += 1 + p / 8) {
				uint32_t nk = sp_radix_children(p, M, k, kids,
								MAXM);
				uint32_t prev_w = UINT32_MAX, prev_d = 0;
				uint32_t prev_sz = UINT32_MAX;
				uint32_t *mine = malloc((nk + 1) * sizeof(*mine));

				assert_non_null(mine);
				memcpy(mine, kids, nk * sizeof(*mine));
				for (uint32_t i = 0; i < nk; i++) {
					uint32_t diff = mine[i] - p, wgt = 1;

					/* diff = d * wgt with wgt a power of k */
					while (diff % k == 0) {
						diff /= k;
						wgt *= k;
					}
					assert_true(diff > 0 && diff < k);
					assert_true(wgt <= prev_w);
					if (wgt == prev_w)
						assert_true(diff > prev_d);
					prev_w = wgt;
					prev_d = diff;
					if (full) {
						uint32_t sz = subtree_size(
							mine[i], M, k, scratch);

						assert_true(sz <= prev_sz);
						prev_sz = sz;
					}
				}
				free(mine);
			}
		}
	}
	free(kids);
	free(scratch);
}

static void test_radix_children_respects_max_but_counts_all(void **state)
{
	uint32_t all[64], some[3] = {0, 0, 0};
	uint32_t n, m;

	(void)state;
	n = sp_radix_children(0, 64, 4, all, 64);
	assert_int_equal(n, 9); /* 3 digits x (k-1) */
	/* writes at most max entries and still returns the full count */
	m = sp_radix_children(0, 64, 4, some, 2);
	assert_int_equal(m, n);
	assert_int_equal(some[0], all[0]);
	assert_int_equal(some[1], all[1]);
	assert_int_equal(some[2], 0);
	assert_int_equal(sp_radix_children(0, 64, 4, NULL, 0), n);
	/* a leaf and a lone root have none */
	assert_int_equal(sp_radix_children(63, 64, 4, all, 64), 0);
	assert_int_equal(sp_radix_children(0, 1, 4, all, 64), 0);
}

static void test_radix_height_is_depth_of_deepest_position(void **state)
{
	(void)state;
	for (size_t f = 0; f < NFANOUTS; f++) {
		uint32_t k = fanouts[f];

		for (uint32_t M = 1; M <= MAXM; M++) {
			uint32_t h = 0;

			for (uint32_t p = 0; p < M; p++) {
				uint32_t d = depth_by_walk(p, k);

				if (d > h)
					h = d;
			}
			assert_int_equal(sp_radix_height(M, k), h);
		}
	}
}

static void test_radix_height_known_values(void **state)
{
	(void)state;
	assert_int_equal(sp_radix_height(1, 4), 0);
	assert_int_equal(sp_radix_height(2, 2), 1);
	assert_int_equal(sp_radix_height(4, 2), 2);
	assert_int_equal(sp_radix_height(1024, 2), 10);  /* 1111111111b */
	assert_int_equal(sp_radix_height(16, 4), 2);     /* 33 base 4 */
	assert_int_equal(sp_radix_height(17, 4), 2);
	assert_int_equal(sp_radix_height(1024, 4), 5);   /* 33333 base 4 */
	assert_int_equal(sp_radix_height(64, 8), 2);
	assert_int_equal(sp_radix_height(2000, 16), 3);  /* 0x6ff < 2000 */
	assert_int_equal(sp_radix_height(256, 16), 2);
	assert_int_equal(sp_radix_height(257, 16), 2);   /* 0x100: depth 1 */
}

/* ---- trees over node sets ------------------------------------------------ */

struct rset {
	uint32_t n, nwords, root;
	uint64_t *w;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void rset_make(struct rset *r, uint32_t n, uint64_t *seed)
{
	uint32_t density = (uint32_t)(rnd(seed) % 100) + 1;

	r->n = n;
	r->nwords = sp_nodeset_words(n);
	r->w = calloc(r->nwords, sizeof(uint64_t));
	assert_non_null(r->w);
	for (uint32_t i = 0; i < n; i++)
		if (rnd(seed) % 100 < density)
			r->w[i / 64] |= UINT64_C(1) << (i % 64);
	r->root = (uint32_t)(rnd(seed) % n); /* in the set or not */
}

static int rset_has(const struct rset *r, uint32_t id)
{
	return id == r->root || ((r->w[id / 64] >> (id % 64)) & 1);
}

static void test_settree_pos_id_are_inverse(void **state)
{
	uint64_t seed = 0xc0ffee;

	(void)state;
	for (int iter = 0; iter < 400; iter++) {
		struct rset r;
		uint32_t n = 1 + (uint32_t)(rnd(&seed) % 300), size, members = 0;
		uint8_t *hit;

		rset_make(&r, n, &seed);
		size = sp_settree_size(r.w, r.nwords, r.root);
		hit = calloc(size, 1);
		assert_non_null(hit);
		assert_int_equal(sp_settree_pos(r.w, r.nwords, r.root, r.root), 0);
		assert_int_equal(sp_settree_id(r.w, r.nwords, r.root, 0), r.root);
		for (uint32_t id = 0; id < n; id++) {
			uint32_t p;

			if (!rset_has(&r, id))
				continue;
			members++;
			p = sp_settree_pos(r.w, r.nwords, r.root, id);
			assert_true(p < size);
			assert_int_equal(hit[p], 0);
			hit[p] = 1;
			assert_int_equal(sp_settree_id(r.w, r.nwords, r.root, p), id);
		}
		/* set ∪ {root} maps onto 0..size-1 exactly */
		assert_int_equal(members, size);
		for (uint32_t p = 0; p < size; p++) {
			uint32_t id = sp_settree_id(r.w, r.nwords, r.root, p);

			assert_true(hit[p]);
			assert_true(rset_has(&r, id));
			assert_int_equal(sp_settree_pos(r.w, r.nwords, r.root, id), p);
		}
		/* positions past the end name nobody */
		assert_int_equal(sp_settree_id(r.w, r.nwords, r.root, size),
				 UINT32_MAX);
		/* members other than the root keep id order */
		for (uint32_t a = 0, last = 0; a < n; a++) {
			uint32_t p;

			if (!rset_has(&r, a) || a == r.root)
				continue;
			p = sp_settree_pos(r.w, r.nwords, r.root, a);
			assert_true(p > last);
			last = p;
		}
		free(hit);
		free(r.w);
	}
}

static void test_settree_children_and_parent_agree(void **state)
{
	uint64_t seed = 0xfeed;
	uint32_t *kids = malloc(MAXM * sizeof(*kids));

	(void)state;
	assert_non_null(kids);
	for (int iter = 0; iter < 200; iter++) {
		struct rset r;
		uint32_t n = 1 + (uint32_t)(rnd(&seed) % 300);
		uint32_t k = fanouts[rnd(&seed) % NFANOUTS], listed = 0;
		uint8_t *seen = calloc(n, 1);

		assert_non_null(seen);
		rset_make(&r, n, &seed);
		for (uint32_t id = 0; id < n; id++) {
			uint32_t nk;

			if (!rset_has(&r, id))
				continue;
			nk = sp_settree_children(r.w, r.nwords, r.root, id, k,
						 kids, MAXM);
			for (uint32_t i = 0; i < nk; i++) {
				assert_true(kids[i] < n);
				assert_true(rset_has(&r, kids[i]));
				assert_true(kids[i] != r.root);
				assert_int_equal(sp_settree_parent(r.w, r.nwords,
								   r.root,
								   kids[i], k),
						 id);
				seen[kids[i]]++;
			}
			listed += nk;
		}
		for (uint32_t id = 0; id < n; id++)
			assert_int_equal(seen[id],
					 rset_has(&r, id) && id != r.root ? 1 : 0);
		assert_int_equal(listed,
				 sp_settree_size(r.w, r.nwords, r.root) - 1);
		free(seen);
		free(r.w);
	}
	free(kids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_radix_parent_of_every_child_is_the_node),
		cmocka_unit_test(test_radix_parent_clears_lowest_nonzero_digit),
		cmocka_unit_test(test_radix_children_highest_digit_first),
		cmocka_unit_test(test_radix_children_respects_max_but_counts_all),
		cmocka_unit_test(test_radix_height_is_depth_of_deepest_position),
		cmocka_unit_test(test_radix_height_known_values),
		cmocka_unit_test(test_settree_pos_id_are_inverse),
		cmocka_unit_test(test_settree_children_and_parent_agree),
	};

	return cmocka_run_group_tests_name("tree", tests, NULL, NULL);
}
