/*
 * bcs_cut.c — where a checkpoint cuts a BCS-MPI job that spans nodes
 * (docs/checkpoint.md §3).
 *
 * The nodes' engine images of one epoch must be of one moment of the
 * job's exchange: nothing one node sent may be missing from the image of
 * the node it went to.  Rounds give that moment.  A node told to take
 * epoch e puts a CUT item naming e in its next section; every node
 * applies the round carrying it alike, and then holds the job: it
 * builds no section of the next round until its agent has captured the
 * job there.  Every node's image is thus "round R applied, nothing of
 * R + 1 built"; a section of R + 1 from a node that captured and ran on
 * before this one is left out of this one's image (nm_bcs_save), and a
 * restore resumes every node at R + 1.
 *
 * The order reaches the nodes at about the same slice (the heartbeat),
 * but a node may reach the cut before its own order: it holds until
 * the order comes, or for NM_BCS_CUT_HOLD_MS, after which it runs on
 * and a late order for that epoch is refused (the capture would not be
 * of the cut).  A newer epoch wanted, or the order gone, releases the
 * hold too.
 */
#include <errno.h>

#include <qb/qblog.h>

#include "bcs_int.h"
#include "bcs_wire.h"

int bcs_cut_wanted(const struct bcs_job *j)
{
	return !j->cut && j->ckpt_want > j->cut_last;
}

int bcs_cut_request(const struct bcs_job *j, uint8_t *sec, size_t cap,
		    size_t *len)
{
	struct bcs_w_cut c = { .epoch = j->ckpt_want };

	if (!bcs_cut_wanted(j))
		return 0;
	return bcs_wire_put(sec, cap, len, BCS_W_CUT, &c, NULL, 0);
}

void bcs_cut_round(struct bcs_job *j, uint32_t epoch)
{
	if (!epoch)
		return;
	j->cut = epoch;
	if (epoch > j->cut_last)
		j->cut_last = epoch;
	j->cut_since_ms = bcs_mono_ms();
	qb_log(LOG_DEBUG, "job %u: BCS-MPI held after round %llu for "
	       "checkpoint epoch %u", j->id, (unsigned long long)j->round,
	       epoch);
}

static void release(struct bcs_job *j)
{
	j->cut = 0;
	j->ckpt_want = 0;
}

void bcs_cut_expire(struct bcs_job *j)
{
	if (!j->cut || bcs_mono_ms() - j->cut_since_ms < NM_BCS_CUT_HOLD_MS)
		return;
	qb_log(LOG_WARNING, "job %u: held %u ms for checkpoint epoch %u "
	       "that this node was not told to take: it runs on",
	       j->id, NM_BCS_CUT_HOLD_MS, j->cut);
	release(j);
}

int nm_bcs_cut(struct nm_bcs *e, uint32_t job, uint32_t epoch)
{
	struct bcs_job *j = bcs_job_find(e, job);

	if (!j || j->nnodes == 1 || j->failed || j->cut == epoch)
		return 1;
	if (j->cut)
		release(j); /* held for another epoch: it was given up */
	if (epoch <= j->cut_last)
		return 1; /* passed without this node: refused (at_cut) */
	j->ckpt_want = epoch;
	return 0;
}

int nm_bcs_at_cut(struct nm_bcs *e, uint32_t job, uint32_t epoch)
{
	struct bcs_job *j = bcs_job_find(e, job);

	return j && (j->nnodes == 1 || j->cut == epoch);
}

void nm_bcs_cut_release(struct nm_bcs *e, uint32_t job)
{
	struct bcs_job *j = bcs_job_find(e, job);

	if (j)
		release(j);
}
