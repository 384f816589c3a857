/*
 * bcs_ckpt.c — a BCS-MPI job's part of a checkpoint (bcs_ckpt.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "bcs_ckpt.h"
#include "job.h"
#include "launch.h"

#define BLOB_MAGIC 0x4b534342u /* "BCSK" */
#define BLOB_VERSION 1u
#define BLOB_HEAD 32u
#define BLOB_SUM 32u
#define BLOB_ENGINE_MAX (1ull << 32) /* bytes of an engine image read */

/* The agent calls it with the job's ranks stopped: the engine stops the
 * job too (it builds no round meanwhile), saves it, and the segment is
 * copied; the engine's stop then follows the job's own (gang) state.  A
 * job on several nodes is saved at the epoch's cut only (bcs_cut.c). */
static int held(void *ctx, struct nm_job *j, uint8_t **buf, size_t *len,
		char *why, size_t whylen)
{
	struct nm_bcs *e = ctx;
	uint8_t *eng = NULL, *b;
	size_t englen = 0, seglen;
	void *seg;
	int rc;

	if (nm_bcs_segment(e, j->id, &seg, &seglen)) {
		snprintf(why, whylen, "job %u has no BCS-MPI segment here",
			 j->id);
		return -ENOENT;
	}
	if (!nm_bcs_at_cut(e, j->id, j->ckpt_want)) {
		snprintf(why, whylen, "job %u's BCS-MPI rounds went past the "
			 "cut of epoch %u before this node was told to take "
			 "it (a cut is held %u ms at most): the epoch is given "
			 "up, the next one is taken anew", j->id, j->ckpt_want,
			 NM_BCS_CUT_HOLD_MS);
		return -ESTALE;
	}
	nm_bcs_stopped(e, j->id, 1);
	rc = nm_bcs_save(e, j->id, &eng, &englen, why, whylen);
	b = rc ? NULL : malloc(BLOB_HEAD + seglen + englen + BLOB_SUM);
	if (b) {
		st_put32(b, BLOB_MAGIC);
		st_put32(b + 4, BLOB_VERSION);
		st_put32(b + 8, e->self);
		st_put32(b + 12, 0);
		st_put64(b + 16, seglen);
		st_put64(b + 24, englen);
		memcpy(b + BLOB_HEAD, seg, seglen);
		memcpy(b + BLOB_HEAD + seglen, eng, englen);
		crypto_generichash(b + BLOB_HEAD + seglen + englen, BLOB_SUM,
				   b, BLOB_HEAD + seglen + englen, NULL, 0);
	}
	nm_bcs_stopped(e, j->id, j->stopped);
	free(eng);
	if (rc)
		return rc;
	if (!b) {
		snprintf(why, whylen, "out of memory for job %u's BCS-MPI "
			 "state", j->id);
		return -ENOMEM;
	}
	*buf = b;
	*len = BLOB_HEAD + seglen + englen + BLOB_SUM;
	return 0;
}

void nm_bcs_ckpt_name(const struct nm_job *j, char *name, size_t n)
{
	uint32_t first = UINT32_MAX;

	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->ranks[i].rank < first)
			first = j->ranks[i].rank;
	snprintf(name, n, "bcs-%u.img", first);
}

void nm_bcs_ckpt_side(struct nm_bcs *e, const struct nm_job *j,
		      struct nm_bcs_side *s)
{
	memset(s, 0, sizeof(*s));
	nm_bcs_ckpt_name(j, s->name, sizeof(s->name));
	s->fds[0] = NM_BCS_BELL_FD;
	s->map[0] = (struct ckpt_inherit_map){ j->bcs_fd, NM_BCS_RANK_FD };
	s->side = (struct nm_ckpt_side){
		.name = s->name, .held = held, .ctx = e,
		.inherit = { .fds = s->fds, .n = j->bcs_bell >= 0 ? 1 : 0,
			     .maps = s->map, .nmaps = 1 },
	};
}

int nm_bcs_ckpt_restore(struct nm_bcs *e, const struct nm_job *j,
			const uint8_t *blob, size_t len, char *why,
			size_t whylen)
{
	uint8_t sum[BLOB_SUM];
	uint64_t seglen, englen;
	size_t have;
	void *seg;

	if (len < BLOB_HEAD + BLOB_SUM || st_get32(blob) != BLOB_MAGIC ||
	    st_get32(blob + 4) != BLOB_VERSION) {
		snprintf(why, whylen, "its BCS-MPI state is not one (%zu "
			 "bytes, no magic or another version)", len);
		return -EINVAL;
	}
	seglen = st_get64(blob + 16);
	englen = st_get64(blob + 24);
	if (seglen > len || englen > BLOB_ENGINE_MAX ||
	    BLOB_HEAD + seglen + englen + BLOB_SUM != len) {
		snprintf(why, whylen, "its BCS-MPI state is torn (%zu bytes, "
			 "not what its header says)", len);
		return -EINVAL;
	}
	crypto_generichash(sum, sizeof(sum), blob, len - BLOB_SUM, NULL, 0);
	if (sodium_memcmp(sum, blob + len - BLOB_SUM, BLOB_SUM)) {
		snprintf(why, whylen, "its BCS-MPI state is corrupt (the "
			 "digest does not match)");
		return -EINVAL;
	}
	if (nm_bcs_segment(e, j->id, &seg, &have) || have != seglen) {
		snprintf(why, whylen, "its BCS-MPI segment was %llu bytes, "
			 "the job's here %zu", (unsigned long long)seglen,
			 have);
		return -EINVAL;
	}
	memcpy(seg, blob + BLOB_HEAD, (size_t)seglen);
	return nm_bcs_restore_placed(e, j->id, blob + BLOB_HEAD + seglen,
				     (size_t)englen, why, whylen);
}
