/*
 * layout.c — where things live in global memory.  Every world of a cluster
 * (manager and node managers) computes the same layout from the same
 * configuration file, which is what makes a global address mean the same
 * thing on every node.
 */
#include "storm_proto.h"

#define HB_LEN (64u << 10)
#define ALIGN(x, a) (((x) + (a) - 1) / (a) * (a))

void st_layout(const st_config_t *cfg, st_layout_t *out)
{
	uint32_t nworld = cfg->nmanagers + cfg->nnodes;
	uint64_t at;

	out->hb = 0;
	out->hb_len = HB_LEN;
	at = HB_LEN;
	/* one cache line each: the node writes them, compares read them */
	out->gv_slice = at;
	out->gv_consumed = at + 64;
	out->gv_outseq = at + 128;
	out->outack = at + 192;
	out->gv_done = at + 256;
	at = ALIGN(at + 256 + 8 * ST_DONE_SLOTS, 4096);
	out->chunk = cfg->chunk_kib << 10;
	out->slots = cfg->slots;
	out->ring = at;
	at = ALIGN(at + (uint64_t)out->chunk * out->slots, 4096);
	out->outbox = at;
	out->outbox_len = cfg->output_kib << 10;
	at = ALIGN(at + (uint64_t)out->outbox_len * nworld, 4096);
	out->size = at;
}
