/* fuzz_snapshot.c — a state snapshot as a joining replica decodes it
 * (sent by a donor, or read back from its own disk); what decodes
 * encodes again to bytes that decode to the same digest. */
#include <stdlib.h>

#include <storm_manager.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mm_state_t *st = NULL, *st2 = NULL;
	uint8_t *re = NULL;
	size_t n = 0;
	char err[256];

	if (mm_state_decode(data, size, &st, err, sizeof(err)) == 0) {
		FUZZ_CHECK(mm_state_encode(st, &re, &n) == 0);
		FUZZ_CHECK(mm_state_decode(re, n, &st2, err, sizeof(err)) == 0);
		FUZZ_CHECK(mm_digest(st) == mm_digest(st2));
		mm_state_destroy(st2);
		free(re);
		mm_state_destroy(st);
	}
	return 0;
}
