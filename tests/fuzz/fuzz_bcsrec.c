/* fuzz_bcsrec.c — a BCS record as another node wrote it into this
 * node's global memory (node/bcs_xchg.c): any bytes through
 * bcs_rec_check, and a record it accepts walked exactly as take() walks
 * it (the header, then nsect sections, each a struct bcs_sect_hdr and
 * its 8-aligned bytes), each section's bytes then decoded item by item
 * (bcs_wire_next) as the engine applies them.  Nothing read may lie
 * outside the record's bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bcs_wire.h"
#include "bcs_xchg.h"
#include "fuzz.h"

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	for (size_t k = 0; k < n; k++)
		s ^= p[k];
	sink ^= s;
}

static void section(const uint8_t *sec, size_t len)
{
	struct bcs_witem it;
	size_t off = 0;
	char why[256];
	int rc;

	while ((rc = bcs_wire_next(sec, len, &off, &it, why, sizeof(why))) >
	       0) {
		FUZZ_CHECK(off <= len);
		FUZZ_CHECK(it.bytes >= sec && it.nbytes <= len &&
			   (size_t)(it.bytes - sec) <= len - it.nbytes);
		touch(it.bytes, it.nbytes);
	}
	FUZZ_CHECK(rc == 0 ? off == len : rc == -EINVAL && off < len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact copy: the input's own buffer may have slack (replay.c) */
	uint8_t *rec = malloc(size ? size : 1);
	struct bcs_rec_hdr h;
	size_t off;
	char why[256] = "";

	if (!rec)
		return 0;
	memcpy(rec, data, size);
	if (bcs_rec_check(rec, size, why, sizeof(why))) {
		FUZZ_CHECK(why[0]);
		free(rec);
		return 0;
	}
	FUZZ_CHECK(size >= sizeof(h));
	memcpy(&h, rec, sizeof(h));
	FUZZ_CHECK(h.magic == BCS_REC_MAGIC && h.len >= sizeof(h) &&
		   h.len <= size);
	/* as take() does, trusting the check */
	off = sizeof(h);
	for (uint32_t k = 0; k < h.nsect; k++) {
		struct bcs_sect_hdr s;

		FUZZ_CHECK(h.len - off >= sizeof(s));
		memcpy(&s, rec + off, sizeof(s));
		off += sizeof(s);
		FUZZ_CHECK(ALIGN8(s.len) <= h.len - off);
		touch(rec + off, ALIGN8(s.len));
		section(rec + off, s.len);
		off += ALIGN8(s.len);
	}
	FUZZ_CHECK(off <= h.len);
	free(rec);
	return 0;
}
