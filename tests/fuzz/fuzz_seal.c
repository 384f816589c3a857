/* fuzz_seal.c — a SEALED frame's payload as storm-mm reads it from any
 * TCP client before authentication (proto/seal.c): the envelope split
 * into credential and body, and a credential payload checked against a
 * digest.  Accepted means well-formed: the parts lie inside the input,
 * the credential is printable and re-encodes to the same bytes. */
#include <stdlib.h>
#include <string.h>

#include <storm_proto.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t d[ST_SHA256_BYTES] = { 0 };
	const uint8_t *body;
	const char *cred;
	size_t clen, blen;

	if (st_seal_decode(data, size, &cred, &clen, &body, &blen, NULL,
			   0) == 0) {
		char c[ST_SEAL_CRED_MAX + 1];
		uint8_t *p = NULL;
		uint32_t len;

		FUZZ_CHECK(clen >= 1 && clen <= ST_SEAL_CRED_MAX && blen >= 1);
		FUZZ_CHECK((const uint8_t *)cred == data + ST_SEAL_HDR &&
			   body + blen == data + size);
		memcpy(c, cred, clen);
		c[clen] = '\0';
		FUZZ_CHECK(st_seal_encode(c, body, blen, &p, &len) == 0);
		FUZZ_CHECK(len == size && !memcmp(p, data, size));
		free(p);
		FUZZ_CHECK(st_sha256(body, blen, d) == 0);
	}
	/* the whole input as a credential's payload */
	(void)st_seal_check(data, size, d, NULL, 0);
	return 0;
}
