/* fuzz_hb.c — the heartbeat block a node reads from global memory every
 * slice; what decodes must re-encode to the same bytes, and its header
 * must name its length (st_hb_need). */
#include <stdlib.h>
#include <string.h>

#include <storm_proto.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_hb_t hb = { 0 };
	uint8_t *re;

	hb.jobs = calloc(st_hb_capacity(size) + 1, sizeof(*hb.jobs));
	if (!hb.jobs)
		return 0;
	if (st_hb_decode(data, size, &hb) == 0) {
		size_t n = ST_HB_HDR + (size_t)ST_HB_ENTRY * hb.njobs;

		FUZZ_CHECK(n <= size && hb.lo <= hb.hi);
		/* what a node reads first says how much to read */
		FUZZ_CHECK(st_hb_need(data, size) == n);
		FUZZ_CHECK(st_hb_same(data, data, n));
		re = malloc(n);
		FUZZ_CHECK(re && st_hb_encode(re, n, &hb) == (int)n);
		FUZZ_CHECK(!memcmp(re, data, 26) &&
			   !memcmp(re + ST_HB_HDR, data + ST_HB_HDR,
				   n - ST_HB_HDR));
		free(re);
	}
	free(hb.jobs);
	return 0;
}
