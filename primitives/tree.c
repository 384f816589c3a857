/*
 * tree.c — radix-tree arithmetic shared by membership, multicast and the
 * combining tree.  A node's place in the tree is encoded in its position:
 * the parent of p is p with its lowest non-zero base-k digit cleared (k a
 * power of two), so every node computes the whole tree locally and no
 * topology ever travels on the wire.
 */
#include <stdint.h>

#include "sp_engine.h"

static inline uint32_t log2u(uint32_t k)
{
	return (uint32_t)__builtin_ctz(k);
}

uint32_t sp_radix_parent(uint32_t p, uint32_t k)
{
	uint32_t b = log2u(k), mask = k - 1, shift = 0;

	if (p == 0)
		return 0;
	while (((p >> shift) & mask) == 0)
		shift += b;
	return p & ~(mask << shift);
}

uint32_t sp_radix_children(uint32_t p, uint32_t M, uint32_t k, uint32_t *out,
			   uint32_t max)
{
	uint32_t b = log2u(k), mask = k - 1, top, n = 0;

	if (p == 0) {
		/* every digit position whose weight is below M */
		top = 0;
		while (top < 32 && ((uint64_t)1 << (top * b)) < M)
			top++;
	} else {
		top = 0;
		while (((p >> (top * b)) & mask) == 0)
			top++;
	}
	for (uint32_t i = top; i-- > 0;) {
		for (uint32_t d = 1; d < k; d++) {
			uint64_t c = (uint64_t)p + ((uint64_t)d << (i * b));

			if (c >= M)
				break;
			if (n < max)
				out[n] = (uint32_t)c;
			n++;
		}
	}
	return n;
}

static uint32_t depth(uint32_t p, uint32_t k)
{
	uint32_t b = log2u(k), mask = k - 1, d = 0;

	for (; p; p >>= b)
		d += (p & mask) != 0;
	return d;
}

uint32_t sp_radix_height(uint32_t M, uint32_t k)
{
	uint32_t h = 0;

	for (uint32_t p = 0; p < M; p++) {
		uint32_t d = depth(p, k);

		if (d > h)
			h = d;
	}
	return h;
}

/* ---- trees over a node set --------------------------------------------- */

static inline uint64_t word_wo_root(const uint64_t *words, uint32_t i,
				    uint32_t root)
{
	uint64_t w = words[i];

	if (root / 64 == i)
		w &= ~(UINT64_C(1) << (root % 64));
	return w;
}

uint32_t sp_settree_size(const uint64_t *words, uint32_t nwords, uint32_t root)
{
	uint32_t n = 1;

	for (uint32_t i = 0; i < nwords; i++)
		n += (uint32_t)__builtin_popcountll(word_wo_root(words, i, root));
	return n;
}

uint32_t sp_settree_pos(const uint64_t *words, uint32_t nwords, uint32_t root,
			uint32_t id)
{
	uint32_t n = 1, wi = id / 64;

	if (id == root)
		return 0;
	for (uint32_t i = 0; i < wi && i < nwords; i++)
		n += (uint32_t)__builtin_popcountll(word_wo_root(words, i, root));
	if (wi < nwords && id % 64)
		n += (uint32_t)__builtin_popcountll(
			word_wo_root(words, wi, root) &
			((UINT64_C(1) << (id % 64)) - 1));
	return n;
}

uint32_t sp_settree_id(const uint64_t *words, uint32_t nwords, uint32_t root,
		       uint32_t pos)
{
	uint32_t want;

	if (pos == 0)
		return root;
	want = pos - 1;
	for (uint32_t i = 0; i < nwords; i++) {
		uint64_t w = word_wo_root(words, i, root);
		uint32_t c = (uint32_t)__builtin_popcountll(w);

		if (want < c) {
			while (want--)
				w &= w - 1;
			return i * 64 + (uint32_t)__builtin_ctzll(w);
		}
		want -= c;
	}
	return UINT32_MAX;
}

uint32_t sp_settree_children(const uint64_t *words, uint32_t nwords,
			     uint32_t root, uint32_t id, uint32_t k,
			     uint32_t *out, uint32_t max)
{
	uint32_t M = sp_settree_size(words, nwords, root);
	uint32_t p = sp_settree_pos(words, nwords, root, id);
	uint32_t n = sp_radix_children(p, M, k, out, max);

	for (uint32_t i = 0; i < n && i < max; i++)
		out[i] = sp_settree_id(words, nwords, root, out[i]);
	return n;
}

uint32_t sp_settree_parent(const uint64_t *words, uint32_t nwords,
			   uint32_t root, uint32_t id, uint32_t k)
{
	uint32_t p = sp_settree_pos(words, nwords, root, id);

	return sp_settree_id(words, nwords, root, sp_radix_parent(p, k));
}
