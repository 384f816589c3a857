/*
 * test_bcs_wire.c — a BCS-MPI round's section (node/bcs_wire.c): every
 * item type through bcs_wire_put and back through bcs_wire_next (fixed
 * parts and bytes equal, items 8-aligned, -ENOSPC when full with nothing
 * written past the capacity), and the decoder's refusals, each with a
 * reason: truncated items, items longer than the section, unknown
 * types.  (tests/fuzz/fuzz_bcswire.c feeds it any bytes.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <storm_bcs.h>

#include "bcs_wire.h"

#define GUARD 0xa5

static const struct bcs_w_state st0 = { .rank = 3, .flags = BCS_W_BLOCKED |
							    BCS_W_POLLED,
					.clock = 41, .sent = 9,
					.pending = 2 };
static const struct bcs_w_desc desc0 = {
	.rank = 2, .seq = 17,
	.d = { .kind = BCS_D_SEND, .flags = 0, .req = 0x1122334455667788u,
	       .ctx = 5, .peer = 1, .tag = 99, .addr = 0x7f0000001000u,
	       .bytes = 13, .clock = 40 },
};
static const struct bcs_w_data data0 = { .match = 123, .off = 4096 };
static const struct bcs_w_coll coll0 = { .ctx = 5, .n = 7, .member = 1,
					 .off = 8192 };

static const struct bcs_w_cut cut0 = { .epoch = 7 };

static const void *fixed_of(enum bcs_w_type t)
{
	switch (t) {
	case BCS_W_STATE:
		return &st0;
	case BCS_W_DESC:
		return &desc0;
	case BCS_W_DATA:
		return &data0;
	case BCS_W_COLL:
		return &coll0;
	case BCS_W_CUT:
		return &cut0;
	}
	return NULL;
}

static size_t fixed_len(enum bcs_w_type t)
{
	return bcs_wire_size(t, 0) - sizeof(struct bcs_item);
}

static void test_every_item_type_round_trips(void **state)
{
	/* byte counts around the alignment: none, short of 8, exactly 8,
	 * just past */
	static const size_t nbytes[] = { 0, 1, 7, 8, 9, 13, 64 };
	uint8_t sec[4096], bytes[64];
	size_t len = 0, off = 0, k = 0;
	struct bcs_witem it;
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7 + 1);
	memset(sec, GUARD, sizeof(sec));
	for (enum bcs_w_type t = BCS_W_STATE; t <= BCS_W_CUT; t++)
		for (size_t n = 0; n < sizeof(nbytes) / sizeof(*nbytes); n++) {
			size_t before = len;

			assert_int_equal(bcs_wire_put(sec, sizeof(sec), &len, t,
						      fixed_of(t), bytes,
						      nbytes[n]),
					 0);
			assert_int_equal(len - before,
					 bcs_wire_size(t, nbytes[n]));
			assert_int_equal(len % 8, 0);
		}
	for (enum bcs_w_type t = BCS_W_STATE; t <= BCS_W_CUT; t++)
		for (size_t n = 0; n < sizeof(nbytes) / sizeof(*nbytes); n++) {
			size_t at = off;

			assert_int_equal(bcs_wire_next(sec, len, &off, &it, why,
						       sizeof(why)),
					 1);
			assert_int_equal(it.type, t);
			assert_memory_equal(&it.u, fixed_of(t), fixed_len(t));
			assert_int_equal(it.nbytes, nbytes[n]);
			assert_ptr_equal(it.bytes, sec + at +
							   sizeof(struct
								  bcs_item) +
							   fixed_len(t));
			if (nbytes[n])
				assert_memory_equal(it.bytes, bytes,
						    nbytes[n]);
			/* the padding to the next item is zeroes */
			for (size_t p = nbytes[n]; p % 8; p++)
				assert_int_equal(it.bytes[p], 0);
			assert_int_equal(off % 8, 0);
			assert_int_equal(off - at,
					 bcs_wire_size(t, nbytes[n]));
			k++;
		}
	assert_int_equal(k, BCS_W_CUT * sizeof(nbytes) / sizeof(*nbytes));
	assert_int_equal(off, len);
	assert_int_equal(bcs_wire_next(sec, len, &off, &it, why, sizeof(why)),
			 0);
	assert_int_equal(sec[len], GUARD);
}

static void test_bytes_left_for_the_caller(void **state)
{
	uint8_t sec[256];
	size_t len = 0, off = 0;
	struct bcs_witem it;
	char why[128];

	(void)state;
	memset(sec, GUARD, sizeof(sec));
	/* bytes NULL: room for 5 left at len - 8, the padding zeroed */
	assert_int_equal(bcs_wire_put(sec, sizeof(sec), &len, BCS_W_DATA,
				      &data0, NULL, 5),
			 0);
	assert_int_equal(len, bcs_wire_size(BCS_W_DATA, 5));
	memcpy(sec + len - 8, "abcde", 5);
	for (size_t p = len - 3; p < len; p++)
		assert_int_equal(sec[p], 0);
	assert_int_equal(bcs_wire_next(sec, len, &off, &it, why, sizeof(why)),
			 1);
	assert_int_equal(it.nbytes, 5);
	assert_memory_equal(it.bytes, "abcde", 5);
}

static void test_full_section_is_enospc_and_untouched(void **state)
{
	uint8_t sec[512];
	size_t cap = bcs_wire_size(BCS_W_STATE, 0) +
		     bcs_wire_size(BCS_W_DESC, 13), len = 0, was;
	uint8_t bytes[64] = { 1 };

	(void)state;
	memset(sec, GUARD, sizeof(sec));
	assert_int_equal(bcs_wire_put(sec, cap, &len, BCS_W_STATE, &st0, NULL,
				      0),
			 0);
	assert_int_equal(bcs_wire_put(sec, cap, &len, BCS_W_DESC, &desc0,
				      bytes, 13),
			 0);
	assert_int_equal(len, cap);
	was = len;
	/* exactly full: the smallest item no longer fits */
	assert_int_equal(bcs_wire_put(sec, cap, &len, BCS_W_DATA, &data0,
				      NULL, 0),
			 -ENOSPC);
	assert_int_equal(len, was);
	/* one byte short of room for an item: refused, nothing written */
	len = cap - bcs_wire_size(BCS_W_DESC, 13);
	assert_int_equal(bcs_wire_put(sec, cap - 1, &len, BCS_W_DESC, &desc0,
				      bytes, 13),
			 -ENOSPC);
	assert_int_equal(len, cap - bcs_wire_size(BCS_W_DESC, 13));
	/* bytes that fit but whose padding would not */
	len = 0;
	assert_int_equal(bcs_wire_put(sec, bcs_wire_size(BCS_W_COLL, 8) - 1,
				      &len, BCS_W_COLL, &coll0, bytes, 1),
			 -ENOSPC);
	assert_int_equal(len, 0);
	for (size_t p = cap; p < sizeof(sec); p++)
		assert_int_equal(sec[p], GUARD);
	/* a length already past the capacity, an unknown type */
	len = cap + 8;
	assert_int_equal(bcs_wire_put(sec, cap, &len, BCS_W_STATE, &st0, NULL,
				      0),
			 -ENOSPC);
	len = 0;
	assert_int_equal(bcs_wire_put(sec, cap, &len, (enum bcs_w_type)9,
				      &st0, NULL, 0),
			 -ENOSPC);
	assert_int_equal(len, 0);
}

/* bcs_wire_next refuses: -EINVAL, a reason, *off where it was. */
static void refused(const uint8_t *sec, size_t len, size_t at,
		    const char *says)
{
	struct bcs_witem it;
	char why[160] = "";
	size_t off = at;

	assert_int_equal(bcs_wire_next(sec, len, &off, &it, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(off, at);
	assert_non_null(strstr(why, says));
}

static void test_bad_items_are_refused_with_a_reason(void **state)
{
	uint8_t sec[512];
	size_t len = 0, off = 0, one;
	struct bcs_item h;
	struct bcs_witem it;
	char why[160];

	(void)state;
	assert_int_equal(bcs_wire_put(sec, sizeof(sec), &len, BCS_W_STATE,
				      &st0, NULL, 0),
			 0);
	one = len;
	assert_int_equal(bcs_wire_put(sec, sizeof(sec), &len, BCS_W_DESC,
				      &desc0, "0123456789abc", 13),
			 0);
	/* truncated anywhere inside the second item: the first still
	 * decodes, the second is refused */
	for (size_t cut = one + 1; cut < len; cut++) {
		off = 0;
		assert_int_equal(bcs_wire_next(sec, cut, &off, &it, why,
					       sizeof(why)),
				 1);
		assert_int_equal(off, one);
		refused(sec, cut, one,
			cut - one < sizeof(struct bcs_item) ? "stray bytes"
							    : "past the");
	}
	/* an item whose length runs past the section */
	memcpy(&h, sec + one, sizeof(h));
	h.len = 14 + 8; /* ALIGN8: 24, the section holds 16 */
	memcpy(sec + one, &h, sizeof(h));
	refused(sec, len, one, "past the section");
	h.len = UINT32_MAX;
	memcpy(sec + one, &h, sizeof(h));
	refused(sec, len, one, "past the section");
	/* a length that rounds up past the section's end by its padding
	 * alone: 13 bytes are in, 16 needed, the section ends at 13 */
	h.len = 13;
	memcpy(sec + one, &h, sizeof(h));
	refused(sec, len - 3, one, "past the section");
	/* unknown types, 0 and past the last */
	for (uint16_t t = 0; t < 8; t++) {
		if (t >= BCS_W_STATE && t <= BCS_W_CUT)
			continue;
		h.type = t;
		memcpy(sec + one, &h, sizeof(h));
		refused(sec, len, one, "an item of type");
	}
	h.type = UINT16_MAX;
	memcpy(sec + one, &h, sizeof(h));
	refused(sec, len, one, "an item of type");
	/* no room for a reason: still refused */
	off = one;
	assert_int_equal(bcs_wire_next(sec, len, &off, &it, NULL, 0), -EINVAL);
	/* past the end: 0, nothing more */
	off = len;
	assert_int_equal(bcs_wire_next(sec, len, &off, &it, why, sizeof(why)),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_item_type_round_trips),
		cmocka_unit_test(test_bytes_left_for_the_caller),
		cmocka_unit_test(test_full_section_is_enospc_and_untouched),
		cmocka_unit_test(test_bad_items_are_refused_with_a_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
