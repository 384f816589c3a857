/* fuzz_mailbox.c — what a node writes into the manager's memory: a file
 * chunk header, an output mailbox and its records, an EXIT record. */
#include <storm_proto.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t job, index, total, len;
	uint64_t seq;
	st_rec_t rec;
	st_exit_t e;

	if (size >= ST_CHUNK_HDR &&
	    st_chunk_get_hdr(data, (uint32_t)size, &job, &index, &total,
			     &len) == 0)
		FUZZ_CHECK(1);
	if (st_box_get_hdr(data, size, &seq, &len) == 0) {
		size_t off = ST_BOX_HDR, end = ST_BOX_HDR + (size_t)len;
		int rc;

		if (end > size)
			end = size;
		while ((rc = st_box_next(data, end, &off, &rec)) == 1) {
			FUZZ_CHECK(off <= end);
			FUZZ_CHECK(rec.data + rec.len <= data + end);
			if (rec.type == ST_REC_EXIT)
				st_exit_decode(rec.data, rec.len, &e);
		}
		FUZZ_CHECK(rc == 0 || rc == -STORM_EPROTO);
	}
	st_exit_decode(data, size, &e);
	return 0;
}
