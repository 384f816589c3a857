/* fuzz_bcsckpt.c — a BCS-MPI job's checkpoint blob as a restore reads it
 * (node/bcs_ckpt.c, nm_bcs_ckpt_restore: the segment's bytes and the
 * engine's image), into a real engine's job of two ranks on this node:
 * any bytes once as they are, and once as the engine image of a blob made
 * well-formed around them (header, the segment's size, checksum), so
 * that the engine's decoder is reached with a node id to move too.
 * Whatever the bytes, the restore takes them or refuses them with a
 * reason, and the job stays one the engine can close. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#include <storm_bcs.h>

#include "bcs_ckpt.h"
#include "fuzz.h"
#include "job.h"

#define HEAD 32u
#define SUM 32u

static struct nm_bcs engine;
static int ready;

static void restore(const uint8_t *p, size_t n)
{
	const uint32_t ranks[2] = { 0, 1 }, rank_node[2] = { 0, 0 };
	struct nm_job j;
	char err[512] = "";
	int fd, rc;

	memset(&j, 0, sizeof(j));
	j.id = 7;
	if (nm_bcs_open(&engine, 7, 0, 1, 2, 2, ranks, rank_node, getuid(),
			getgid(), BCS_ORDER_DETERMINISTIC, &fd, err,
			sizeof(err)))
		return;
	rc = nm_bcs_ckpt_restore(&engine, &j, p, n, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || (rc < 0 && err[0]));
	nm_bcs_close(&engine, 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seg = bcs_seg_bytes(2);
	size_t n = HEAD + (size_t)seg + size + SUM;
	uint8_t *p;

	if (!ready) {
		if (nm_bcs_init(&engine))
			abort();
		engine.self = 0;
		ready = 1;
	}
	restore(data, size);
	if (!(p = calloc(1, n)))
		return 0;
	memcpy(p, "BCSK", 4);
	p[4] = 1;                                 /* version */
	p[8] = size ? data[0] % 3 : 0;            /* the node that saved it */
	for (int b = 0; b < 8; b++) {
		p[16 + b] = (uint8_t)(seg >> (8 * b));
		p[24 + b] = (uint8_t)((uint64_t)size >> (8 * b));
	}
	memcpy(p + HEAD + seg, data, size);
	crypto_generichash(p + n - SUM, SUM, p, n - SUM, NULL, 0);
	restore(p, n);
	free(p);
	return 0;
}
