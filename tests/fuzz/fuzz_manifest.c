/* fuzz_manifest.c — a job's manifest, the first bytes of its chunk
 * stream, as a node decodes it (any prefix may arrive first). */
#include <errno.h>

#include <storm_proto.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_manifest_t *m = NULL;
	size_t used = 0;
	int rc = st_manifest_decode(data, size, &used, &m);

	if (rc == 0) {
		FUZZ_CHECK(used <= size && m);
		st_manifest_free(m);
	} else {
		FUZZ_CHECK(rc == -EAGAIN || rc == -STORM_EPROTO ||
			   rc == -ENOMEM);
	}
	return 0;
}
