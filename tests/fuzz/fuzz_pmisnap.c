/* fuzz_pmisnap.c — the snapshot's PMI part as a peer replica sent it
 * (manager/mmd/pmi.c): any bytes through mmd_pmi_snap_decode.  A part it
 * takes encodes again to as many bytes; one it refuses changes
 * nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pmi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const st_layout_t lay = { .pmi_len = 4096 };
	struct mmd_pmi x;
	char err[128];
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy || mmd_pmi_init(&x, &lay, 8, NULL, NULL)) {
		free(copy);
		return 0;
	}
	memcpy(copy, data, size);
	if (mmd_pmi_snap_decode(&x, copy, size, err, sizeof(err)) == 0)
		FUZZ_CHECK(mmd_pmi_snap_size(&x) == size);
	else
		FUZZ_CHECK(x.jobs == NULL);
	mmd_pmi_fini(&x);
	free(copy);
	return 0;
}
