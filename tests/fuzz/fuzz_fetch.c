/* fuzz_fetch.c — a peer's reply to inputs_fetch as a strobe master checks
 * it before it keeps a byte (mmd_fetch_reply, manager/mmd/fetch.c): any
 * bytes as the reply's JSON, against the state of a fetch the input's
 * first 25 bytes choose (offset, whether a size came before and which,
 * bytes kept, the cap).  An accepted piece is always within bounds. */
#include <stdint.h>
#include <string.h>

#include "fetch.h"
#include "fuzz.h"

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmd_fetch_piece pc;
	uint64_t off, known, total, cap;
	int first;
	char why[400];

	if (size < 25)
		return 0;
	first = data[0] & 1;
	off = be64(data + 1) >> (data[0] >> 2 & 63);
	known = be64(data + 9) >> (data[0] >> 1 & 31);
	total = be64(data + 17) >> 20;
	cap = (uint64_t)(data[0] | 1) << 20;
	if (mmd_fetch_reply(data + 25, size - 25, off, first, known, total,
			    cap, &pc, why, sizeof(why)) == 0) {
		FUZZ_CHECK(pc.len <= MMD_FETCH_PIECE);
		FUZZ_CHECK(first || pc.size == known);
		FUZZ_CHECK(off <= pc.size && pc.len <= pc.size - off);
		FUZZ_CHECK(pc.len || off == pc.size);
		FUZZ_CHECK(total <= cap && pc.len <= cap - total);
	} else {
		FUZZ_CHECK(why[0] != '\0');
	}
	return 0;
}
