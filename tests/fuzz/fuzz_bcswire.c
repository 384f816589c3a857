/* fuzz_bcswire.c — a BCS-MPI round's section as another node's engine
 * sent it (node/bcs_wire.c): any bytes through bcs_wire_next until it
 * stops.  Each item it returns lies inside the section, every byte of it
 * is read (so ASan sees an overread), and it encodes back to the same
 * bytes but for the padding the encoder zeroes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bcs_wire.h"
#include "fuzz.h"

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	for (size_t k = 0; k < n; k++)
		s ^= p[k];
	sink ^= s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact copy: the input's own buffer may have slack (replay.c) */
	uint8_t *sec = malloc(size ? size : 1), *re = malloc(size ? size : 1);
	size_t off = 0, relen = 0;
	struct bcs_witem it;
	char why[256];
	int rc;

	if (!sec || !re) {
		free(sec);
		free(re);
		return 0;
	}
	memcpy(sec, data, size);
	for (;;) {
		size_t at = off, fixed;

		why[0] = '\0';
		rc = bcs_wire_next(sec, size, &off, &it, why, sizeof(why));
		if (rc <= 0)
			break;
		FUZZ_CHECK(rc == 1);
		FUZZ_CHECK(it.type >= BCS_W_STATE && it.type <= BCS_W_CUT);
		fixed = bcs_wire_size(it.type, 0) - sizeof(struct bcs_item);
		FUZZ_CHECK(off > at && off <= size);
		FUZZ_CHECK(off - at == bcs_wire_size(it.type, it.nbytes));
		FUZZ_CHECK(it.bytes == sec + at + sizeof(struct bcs_item) +
					       fixed);
		FUZZ_CHECK(it.nbytes <= size - (size_t)(it.bytes - sec));
		touch(sec + at, off - at);
		touch(it.bytes, it.nbytes);
		touch((const uint8_t *)&it.u, fixed);
		/* encodes back to the same bytes, the item's pad and the
		 * bytes' alignment padding aside (the encoder zeroes them) */
		FUZZ_CHECK(bcs_wire_put(re, size, &relen, it.type, &it.u,
					it.bytes, it.nbytes) == 0);
		FUZZ_CHECK(relen == off);
		FUZZ_CHECK(!memcmp(re + at, sec + at, 2));
		FUZZ_CHECK(!memcmp(re + at + 4, sec + at + 4,
				   sizeof(struct bcs_item) - 4 + fixed +
					   it.nbytes));
	}
	if (rc == 0) {
		FUZZ_CHECK(off == size);
	} else {
		FUZZ_CHECK(rc == -EINVAL && why[0]);
		FUZZ_CHECK(off < size);
	}
	free(sec);
	free(re);
	return 0;
}
