/* fuzz_buddy.c — the bytes of L2 checkpoint transfers as a node manager
 * receives them (node/buddy_wire.c): a box that landed in a sender's slot
 * (its header and file bytes) and a request line.  Whatever the bytes,
 * a box is refused or taken with its name one a copy may have and its
 * bytes inside both the box and the file; a request likewise; what is
 * taken encodes back to the same header. */
#include <stdint.h>
#include <string.h>

#include "buddy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nm_buddy_box x;
	uint8_t again[NM_BUDDY_HDR];

	if (!nm_buddy_box_decode(data, size, &x)) {
		FUZZ_CHECK(nm_buddy_name_ok(x.name));
		FUZZ_CHECK(x.len <= size - NM_BUDDY_HDR);
		FUZZ_CHECK(x.off <= x.total && x.len <= x.total - x.off);
		FUZZ_CHECK(x.data == data + NM_BUDDY_HDR);
		FUZZ_CHECK(x.job && x.epoch);
		nm_buddy_box_encode(again, &x);
		FUZZ_CHECK(!memcmp(again, data, NM_BUDDY_HDR));
	}
	if (size >= NM_BUDDY_WANT_LINE) {
		char name[NM_BUDDY_NAME_MAX];
		uint64_t seq;
		uint32_t job, epoch, rank;

		if (!nm_buddy_want_decode(data, &seq, &job, &epoch, &rank,
					  name)) {
			FUZZ_CHECK(!name[0] || nm_buddy_name_ok(name));
			FUZZ_CHECK(job && epoch);
			FUZZ_CHECK(rank != UINT32_MAX || name[0]);
		}
	}
	return 0;
}
