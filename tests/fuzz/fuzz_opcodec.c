/* fuzz_opcodec.c — an agreed operation as every replica decodes it (of
 * any version it knows); what decodes re-encodes and decodes alike. */
#include <stdlib.h>
#include <string.h>

#include <storm_manager.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *arena = NULL, *arena2 = NULL;
	mm_op_t op, op2;
	static uint8_t re[1u << 20];

	if (mm_op_decode(data, size, &op, &arena) == 0) {
		int n = mm_op_encode(&op, re, sizeof(re));

		if (n >= 0) {
			FUZZ_CHECK(mm_op_decode(re, (size_t)n, &op2,
						&arena2) == 0);
			FUZZ_CHECK(op2.code == op.code && op2.job == op.job);
			free(arena2);
		}
	}
	free(arena);
	return 0;
}
