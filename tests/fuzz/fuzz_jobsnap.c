/* fuzz_jobsnap.c — the snapshot's part with the exit statuses of running
 * jobs (manager/mmd/jobrec.c), as a joining replica takes it from its
 * donor: a torn or forged part is refused whole, never half taken. */
#include <errno.h>
#include <string.h>

#include "jobrec.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmd_jobs t;
	char err[256];
	int rc;

	memset(&t, 0, sizeof(t));
	rc = mmd_jobs_snap_decode(&t, data, size, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -STORM_EPROTO || rc == -ENOMEM);
	if (rc == -STORM_EPROTO)
		FUZZ_CHECK(mmd_jobs_count(&t) == 0 && err[0]);
	mmd_jobs_free(&t);
	return 0;
}
