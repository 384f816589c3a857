/* fuzz_pmi.c — what a rank writes on PMI_FD (node/pmi.c), and a merged
 * store as it comes down from the managers (st_pmi_chunk_get, then
 * nm_pmi_fence_take).  The input: a byte choosing how it is cut, then
 * the bytes, fed to local ranks 0 and 1 of a 4-rank job in pieces; a
 * barrier every rank entered is answered with the input's tail as the
 * merged entries.  Invariants: a failed job says why; a reply waiting
 * is bounded; a store the server took was whole entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pmi.h"
#include "storm_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t rank_node[] = { 1, 1, 2, 2 };
	static const uint32_t here[] = { 0, 1 };
	struct nm_pmi *p;
	size_t off = 1, piece;
	uint8_t *copy;
	st_pmi_chunk_t c;

	if (size < 1)
		return 0;
	/* the chunk header decoder sees the same bytes */
	if (st_pmi_chunk_get(data, size, &c) == 0)
		FUZZ_CHECK(ST_PMI_HDR + (size_t)c.len <= size &&
			   c.off + (uint64_t)c.len <= c.total);
	piece = (size_t)(data[0] & 0x3f) + 1;
	if (!(p = nm_pmi_new(5, "storm-5", 4, rank_node, 2, here)))
		return 0;
	copy = malloc(size);
	if (!copy) {
		nm_pmi_free(p);
		return 0;
	}
	memcpy(copy, data, size);
	while (off < size) {
		size_t n = size - off < piece ? size - off : piece;
		uint32_t who = (data[0] >> 6) & 1;
		const uint8_t *e;
		const char *out;
		size_t len, olen;
		uint32_t fence;
		int rc = nm_pmi_input(p, who ^ (uint32_t)((off / piece) & 1),
				      (const char *)copy + off, n);

		if (rc)
			FUZZ_CHECK(nm_pmi_failed(p, NULL) != NULL);
		for (uint32_t i = 0; i < 2; i++) {
			olen = nm_pmi_output(p, i, &out);
			FUZZ_CHECK(olen <= NM_PMI_OUT_MAX);
			nm_pmi_written(p, i, olen);
		}
		if (nm_pmi_fence_ready(p, &e, &len, &fence)) {
			FUZZ_CHECK(nm_pmi_entries_check(e, len) == 0);
			rc = nm_pmi_fence_take(p, fence, copy + off + n,
					       size - off - n);
			FUZZ_CHECK(rc != 1 ||
				   nm_pmi_entries_check(copy + off + n,
							size - off - n) == 0);
		}
		off += n;
	}
	if (data[0] & 0x80)
		nm_pmi_closed(p, 1);
	free(copy);
	nm_pmi_free(p);
	return 0;
}
