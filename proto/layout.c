/*
 * layout.c — where things live in global memory.  Every world of a cluster
 * (manager and node managers) computes the same layout from the same
 * configuration file, which is what makes a global address mean the same
 * thing on every node.
 */
#include "storm_proto.h"

#define ALIGN(x, a) (((x) + (a) - 1) / (a) * (a))

uint32_t st_matrix_cols(const st_config_t *cfg)
{
	uint64_t c = 0;

	for (uint32_t i = 0; i < cfg->nnodes; i++) {
		uint64_t a = 1;

		while (a < cfg->nodes[i].cpus)
			a <<= 1;
		c = (c + a - 1) / a * a + cfg->nodes[i].cpus;
	}
	return (uint32_t)c;
}

void st_layout(const st_config_t *cfg, st_layout_t *out)
{
	uint32_t nworld = cfg->nmanagers + cfg->nnodes;
	uint64_t at;

	out->hb = 0;
	out->hb_len = (cfg->heartbeat_kib ? cfg->heartbeat_kib : 64) << 10;
	at = ALIGN(out->hb_len, 4096);
	/* one cache line each: the node writes them, compares read them */
	out->gv_slice = at;
	out->gv_consumed = at + 64;
	out->gv_outseq = at + 128;
	out->outack = at + 192;
	out->gv_quiet = at + 256;
	out->wake = at + 320;
	out->gv_done = at + 384;
	out->done_slots = ST_DONE_ROWS * st_matrix_cols(cfg);
	out->gv_ckpt = out->gv_done + 8 * (uint64_t)out->done_slots;
	out->gv_pmi = out->gv_ckpt + 8 * (uint64_t)out->done_slots;
	out->gv_pmi_seq = ALIGN(out->gv_pmi + 8 * (uint64_t)out->done_slots,
				64);
	at = ALIGN(out->gv_pmi_seq + 64, 4096);
	out->chunk = cfg->chunk_kib << 10;
	out->slots = cfg->slots;
	out->ring = at;
	at = ALIGN(at + (uint64_t)out->chunk * out->slots, 4096);
	out->outbox = at;
	out->outbox_len = cfg->output_kib << 10;
	at = ALIGN(at + (uint64_t)out->outbox_len * nworld, 4096);
	out->bcs = at;
	out->bcs_len = (cfg->bcs_kib ? cfg->bcs_kib : 512) << 10;
	at = ALIGN(at + 2ull * out->bcs_len * nworld, 4096);
	out->pmi = at;
	out->pmi_len = (cfg->pmi_kib ? cfg->pmi_kib : 64) << 10;
	at = ALIGN(at + out->pmi_len, 4096);
	out->buddy = at;
	out->buddy_len = cfg->ckpt_buddy_kib << 10;
	at = ALIGN(at + (uint64_t)out->buddy_len * cfg->nnodes, 4096);
	out->buddy_ack = at;
	out->buddy_want = at + 32ull * cfg->nnodes;
	at = ALIGN(out->buddy_want + 64ull * cfg->nnodes, 4096);
	out->stdin = at;
	out->stdin_len = ST_STDIN_HDR + ST_STDIN_FRAME_MAX;
	at = ALIGN(at + (uint64_t)out->stdin_len * cfg->nmanagers, 4096);
	out->stdin_ack = at;
	at = ALIGN(at + 64ull * nworld, 4096);
	out->size = at;
}
