/* fuzz_bcsring.c — a BCS-MPI rank's post ring as the engine reads it
 * (node/bcs_ring.c): any bytes as the rank's area (its head, then its
 * descriptor slots) and a tail the first bytes choose.  Whatever the
 * rank wrote, the engine takes at most a ring of descriptors, and a
 * descriptor that passes the check is one the engine can act on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bcs_ring.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bcs_area *a;
	struct bcs_desc out[BCS_RING_SLOTS];
	uint64_t tail;
	uint32_t n = 0, jsize;
	char why[256];
	int rc;

	if (size < 12)
		return 0;
	if (!(a = calloc(1, sizeof(*a))))
		return 0;
	memcpy(&tail, data, 8);
	tail >>= data[8] & 63;
	jsize = (uint32_t)data[9] | (uint32_t)data[10] << 8;
	data += 12;
	size -= 12;
	memcpy(a, data, size < sizeof(*a) ? size : sizeof(*a));
	/* the slots: the input repeated, so short inputs fill them too */
	for (size_t k = 0; size && k < sizeof(a->post); k++)
		((uint8_t *)a->post)[k] = data[k % size];
	memcpy(&a->post_head, data, size < 8 ? size : 8);
	why[0] = '\0';
	rc = bcs_ring_take(a, tail, out, BCS_RING_SLOTS, &n, why, sizeof(why));
	if (rc) {
		FUZZ_CHECK(n == 0 && why[0]);
	} else {
		FUZZ_CHECK(n <= BCS_RING_SLOTS);
		for (uint32_t k = 0; k < n; k++) {
			const struct bcs_desc *d = &out[k];

			why[0] = '\0';
			if (bcs_desc_check(d, jsize, why, sizeof(why))) {
				FUZZ_CHECK(why[0]);
				continue;
			}
			FUZZ_CHECK(d->kind >= BCS_D_SEND &&
				   d->kind <= BCS_D_CANCEL);
			if (d->kind == BCS_D_CANCEL)
				FUZZ_CHECK(!d->flags && !d->bytes);
			if (d->kind == BCS_D_COMM_FREE)
				FUZZ_CHECK(d->ctx != BCS_CTX_WORLD &&
					   !d->flags && !d->bytes);
			if (d->kind == BCS_D_PULLED)
				FUZZ_CHECK(!d->bytes && !(d->flags &
						~BCS_F_PULL_FAILED));
			FUZZ_CHECK(d->bytes <= BCS_BYTES_MAX);
			if (d->kind == BCS_D_SEND)
				FUZZ_CHECK(d->peer >= 0 &&
					   (uint32_t)d->peer < jsize &&
					   d->tag >= 0);
			if (d->kind == BCS_D_COMM)
				FUZZ_CHECK(d->bytes / 4 <= jsize &&
					   d->bytes % 4 == 0);
		}
	}
	free(a);
	return 0;
}
