/* fuzz_stdin.c — rank 0's stdin between a manager replica and a node
 * (docs/protocol.md 2.8): a chunk in a node's inbox slot as the node
 * reads it (st_stdin_chunk_get), an ack in a replica's line as the
 * replica reads it (st_stdin_ack_get).  The first byte picks which; the
 * rest is the slot or the line.  What is accepted lies inside the slot,
 * carries no unknown flag and encodes back to the same header. */
#include <stdint.h>
#include <string.h>

#include <storm_proto.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		st_stdin_ack_t a;
		uint8_t back[ST_STDIN_ACK_LEN];

		if (size - 1 < ST_STDIN_ACK_LEN ||
		    st_stdin_ack_get(data + 1, &a))
			return 0;
		FUZZ_CHECK(!(a.flags & ~ST_STDIN_CLOSED));
		st_stdin_ack_put(back, &a);
		FUZZ_CHECK(!memcmp(back, data + 1, ST_STDIN_ACK_LEN));
	} else {
		st_stdin_chunk_t c;
		uint8_t back[ST_STDIN_HDR];

		if (st_stdin_chunk_get(data + 1, size - 1, &c))
			return 0;
		FUZZ_CHECK(c.seq != 0 && !(c.flags & ~ST_STDIN_EOF));
		FUZZ_CHECK((size_t)ST_STDIN_HDR + c.len <= size - 1);
		st_stdin_chunk_put(back, &c);
		FUZZ_CHECK(!memcmp(back, data + 1, ST_STDIN_HDR));
	}
	return 0;
}
