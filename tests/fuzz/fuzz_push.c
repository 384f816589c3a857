/* fuzz_push.c — a peer's reply to inputs_put as the pushing replica
 * checks it (mmd_push_reply, manager/mmd/push.c): any bytes as the
 * reply's JSON, as the first reply (held, or send the bytes) or the one
 * after the bytes (kept).  Whatever it says, the answer is one of the
 * codes for that turn, and a refusal says why. */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "push.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[300];
	int first, rc;

	if (size < 1)
		return 0;
	first = data[0] & 1;
	why[0] = '\0';
	rc = mmd_push_reply(data + 1, size - 1, first, why, sizeof(why));
	if (rc < 0)
		FUZZ_CHECK(why[0] != '\0');
	else if (first)
		FUZZ_CHECK(rc == 1 || rc == 2);
	else
		FUZZ_CHECK(rc == 0);
	return 0;
}
