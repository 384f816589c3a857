/* fuzz_bcssave.c — a BCS-MPI job's engine image as a restore reads it
 * (node/bcs_save.c, bcs_save_decode): any bytes, once as they are and
 * once with their length and checksum made right, so that the body's
 * decoder is reached too.  Whatever the bytes, the decoder refuses them
 * with a reason or gives a job that encodes back to the same bytes
 * (the encoding is canonical: nothing decoded is lost or invented). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "bcs_int.h"
#include "fuzz.h"

#define HEAD 24u
#define SUM 32u

static void decode(const uint8_t *p, size_t n)
{
	struct bcs_job *j = NULL;
	uint8_t *out = NULL;
	size_t len = 0;
	char err[512] = "";
	int rc = bcs_save_decode(NULL, p, n, &j, err, sizeof(err));

	if (rc) {
		FUZZ_CHECK(rc < 0 && !j && err[0]);
		return;
	}
	FUZZ_CHECK(j != NULL);
	if (bcs_save_encode(j, &out, &len) == 0) {
		FUZZ_CHECK(len == n && !memcmp(out, p, n));
		free(out);
	}
	bcs_job_free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p;

	decode(data, size);
	if (size < HEAD + SUM || !(p = malloc(size)))
		return 0;
	memcpy(p, data, size);
	for (int b = 0; b < 8; b++)
		p[8 + b] = (uint8_t)((uint64_t)size >> (8 * b));
	crypto_generichash(p + size - SUM, SUM, p, size - SUM, NULL, 0);
	decode(p, size);
	free(p);
	return 0;
}
