/* fuzz_repl.c — a replication group message's operation record (the
 * OP and BATCH payloads every replica decodes from the group). */
#include <string.h>

#include "rp_internal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_op o;

	if (rp_op_decode(data, size, &o) == 0)
		FUZZ_CHECK(o.op == NULL ||
			   ((const uint8_t *)o.op >= data &&
			    (const uint8_t *)o.op + o.len <= data + size));
	return 0;
}
