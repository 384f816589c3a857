/* fuzz_ckptimage.c — a checkpoint image as a restore reads it
 * (ckpt/ckpt_image.c, and the engine's sections by ckpt_check, which a
 * restore runs before it touches a process): any bytes, with or without an expected owner,
 * and the same bytes with the trailer's length and digest made right
 * (so that mutations reach what the reader checks after the digest).
 * What the reader accepts it can walk: every section lies inside the
 * image, and as many as the trailer says; what ckpt_check accepts,
 * ckpt_compact makes a full image of that checks too. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ckpt.h"
#include "fuzz.h"

static void check(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	check(data, size);
	if (size < CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES ||
	    !(fixed = malloc(size)))
		return 0;
	memcpy(fixed, data, size);
	memcpy(fixed + size - CKPT_TRAILER_BYTES, "STORMEND", 8);
	for (int i = 0; i < 8; i++)
		fixed[size - CKPT_TRAILER_BYTES + 16 + i] =
			(uint8_t)((uint64_t)(size - CKPT_TRAILER_BYTES) >>
				  (8 * i));
	if (sodium_init() >= 0)
		crypto_generichash(fixed + size - CKPT_TRAILER_BYTES + 24,
				   CKPT_DIGEST_BYTES, fixed,
				   size - CKPT_TRAILER_BYTES, NULL, 0);
	check(fixed, size);
	free(fixed);
	return 0;
}

static void check(const uint8_t *data, size_t size)
{
	struct ckpt_ident id = { 1, 2, 3, 4 };
	struct ckpt_reader r;
	struct ckpt_section s;
	char why[128];
	uint64_t n = 0;

	for (int expect = 0; expect < 2; expect++) {
		why[0] = '\0';
		if (ckpt_read_begin(&r, data, size, expect ? &id : NULL, why,
				    sizeof(why))) {
			FUZZ_CHECK(why[0]);
			continue;
		}
		n = 0;
		while (ckpt_read_section(&r, &s)) {
			const uint8_t *d = s.data;

			FUZZ_CHECK(d >= data + CKPT_HEADER_BYTES &&
				   s.len <= size &&
				   d + s.len <= data + size -
						CKPT_TRAILER_BYTES);
			n++;
		}
		FUZZ_CHECK(n == r.sections);
	}
	{
		struct ckpt_blob b = { data, size };
		int rc;

		why[0] = '\0';
		rc = ckpt_check(&b, 1, NULL, why, sizeof(why));
		FUZZ_CHECK(rc == 0 || (rc < 0 && why[0]) || rc == -ENOMEM);
		/* what the check takes, the compaction takes too: it writes
		 * a full image that checks (into memory, not a disk) */
		if (rc == 0) {
			int fd = memfd_create("compact", MFD_CLOEXEC);
			uint64_t bytes = 0;
			uint8_t *out;

			if (fd < 0)
				return;
			rc = ckpt_compact(&b, 1, fd, &bytes, why, sizeof(why));
			FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
			if (!rc && (out = malloc((size_t)bytes))) {
				struct ckpt_blob c = { out, (size_t)bytes };

				FUZZ_CHECK(pread(fd, out, (size_t)bytes, 0) ==
					   (ssize_t)bytes);
				FUZZ_CHECK(ckpt_check(&c, 1, NULL, why,
						      sizeof(why)) == 0);
				free(out);
			}
			close(fd);
		}
	}
}
