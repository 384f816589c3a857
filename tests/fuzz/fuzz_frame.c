/* fuzz_frame.c — client frames: the header a manager reads from any
 * client, and an OUTPUT payload a client reads from the manager. */
#include <string.h>

#include <storm_proto.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t job, rank, len;
	const uint8_t *d;
	size_t dlen;
	int type, stream;

	if (size >= ST_FRAME_HDR &&
	    st_frame_parse_hdr(data, &type, &len) == 0)
		FUZZ_CHECK(len <= ST_FRAME_MAX);
	if (st_output_decode(data, size, &job, &rank, &stream, &d,
			     &dlen) == 0)
		FUZZ_CHECK(d >= data && d + dlen <= data + size &&
			   (stream == 1 || stream == 2));
	return 0;
}
