/*
 * outbox.c — records to the managers, one box at a time (outbox.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <qb/qblog.h>

#include "outbox.h"

#define PEND_MAX (8u << 20) /* output waiting for the managers */

int nm_outbox_init(struct nm_outbox *ob, sp_world_t *w,
		   const st_layout_t *lay, uint32_t nmanagers,
		   uint64_t seq_base)
{
	memset(ob, 0, sizeof(*ob));
	ob->w = w;
	ob->lay = lay;
	ob->nmanagers = nmanagers;
	ob->seq = seq_base;
	ob->box = calloc(1, lay->outbox_len);
	if (!ob->box || sp_nodeset_create(sp_node_count(w), &ob->sent_to)) {
		free(ob->box);
		ob->box = NULL;
		return -ENOMEM;
	}
	return 0;
}

void nm_outbox_fini(struct nm_outbox *ob)
{
	free(ob->pend);
	free(ob->box);
	free(ob->ends);
	sp_nodeset_destroy(ob->sent_to);
	memset(ob, 0, sizeof(*ob));
}

void nm_outbox_put(struct nm_outbox *ob, uint8_t type, uint32_t job,
		   uint32_t rank, const void *data, uint32_t len)
{
	uint32_t max = ob->lay->outbox_len - ST_BOX_HDR - ST_REC_HDR;
	size_t need;

	while (len > max) { /* one record must fit one box */
		nm_outbox_put(ob, type, job, rank, data, max);
		data = (const uint8_t *)data + max;
		len -= max;
	}
	need = ob->pend_len + ST_REC_HDR + len;
	if (need > PEND_MAX && type <= ST_REC_STDERR) {
		qb_log(LOG_WARNING, "job %u rank %u: output dropped, the "
		       "manager is not taking it", job, rank);
		return;
	}
	if (need > ob->pend_cap) {
		size_t cap = ob->pend_cap ? ob->pend_cap : 65536;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(ob->pend, cap);
		if (!p)
			return;
		ob->pend = p;
		ob->pend_cap = cap;
	}
	st_box_put_rec(ob->pend + ob->pend_len, type, job, rank, data, len);
	ob->pend_len += ST_REC_HDR + len;
}

/* The jobs whose ends are among the first off bytes of pend. */
static int note_ends(struct nm_outbox *ob, size_t off)
{
	st_rec_t rec;

	ob->nends = 0;
	for (size_t at = 0; at < off;) {
		st_box_next(ob->pend, off, &at, &rec);
		if (rec.type != ST_REC_EXIT && rec.type != ST_REC_FAIL)
			continue;
		if (ob->nends == ob->ends_cap) {
			uint32_t cap = ob->ends_cap ? 2 * ob->ends_cap : 64;
			uint32_t *d = realloc(ob->ends, cap * sizeof(*d));

			if (!d)
				return -ENOMEM;
			ob->ends = d;
			ob->ends_cap = cap;
		}
		ob->ends[ob->nends++] = rec.job;
	}
	return 0;
}

/* The manager replicas in the view now, into mm: 0, or -1 (none). */
static int view_managers(struct nm_outbox *ob, sp_nodeset_t *mm)
{
	sp_view_info_t vi;

	if (sp_view(ob->w, &vi, mm) == 0)
		for (uint32_t x = ob->nmanagers; x < sp_node_count(ob->w); x++)
			sp_nodeset_del(mm, x);
	return sp_nodeset_count(mm) ? 0 : -1;
}

/* The box in flight, not acknowledged, to the replicas that joined the
 * view since it went.  An abort of this transfer sends it whole again,
 * as any abort does (resend()); the same number twice is taken once. */
static void reach_joiners(struct nm_outbox *ob)
{
	sp_nodeset_t *mm = NULL;
	uint64_t seq;
	uint32_t len;
	int rc;

	if (sp_nodeset_create(sp_node_count(ob->w), &mm))
		return;
	if (view_managers(ob, mm) == 0) {
		for (int64_t x = sp_nodeset_next(ob->sent_to, 0); x >= 0;
		     x = sp_nodeset_next(ob->sent_to, (uint32_t)x + 1))
			sp_nodeset_del(mm, (uint32_t)x);
	}
	if (sp_nodeset_count(mm) == 0 ||
	    st_box_get_hdr(ob->box, ob->lay->outbox_len, &seq, &len)) {
		sp_nodeset_destroy(mm);
		return;
	}
	rc = sp_xfer_and_signal(ob->w, mm, ob->box, ST_BOX_HDR + len,
				ob->lay->outbox + (uint64_t)ob->lay->outbox_len *
							  sp_node_id(ob->w),
				ST_EV_LOCAL_OUT, ST_EV_OUT, NULL, 0);
	qb_log(LOG_DEBUG, "box %llu: %u bytes sent to %u replica(s) new in "
	       "the view (%d)", (unsigned long long)seq, len,
	       sp_nodeset_count(mm), rc);
	if (rc == 0)
		for (int64_t x = sp_nodeset_next(mm, 0); x >= 0;
		     x = sp_nodeset_next(mm, (uint32_t)x + 1))
			sp_nodeset_add(ob->sent_to, (uint32_t)x);
	sp_nodeset_destroy(mm);
}

uint32_t nm_outbox_flush(struct nm_outbox *ob, const uint32_t **jobs)
{
	size_t off = 0, room = ob->lay->outbox_len - ST_BOX_HDR;
	sp_nodeset_t *mm = NULL;
	st_rec_t rec;
	int rc;

	if (nm_outbox_unacked(ob))
		reach_joiners(ob);
	if (ob->inflight || ob->pend_len == 0)
		return 0;
	/* whole records that fit one box */
	while (off < ob->pend_len) {
		size_t at = off;

		if (st_box_next(ob->pend, ob->pend_len, &at, &rec) != 1 ||
		    at > room)
			break;
		off = at;
	}
	if (note_ends(ob, off))
		return 0; /* sent with the next box */
	memcpy(ob->box + ST_BOX_HDR, ob->pend, off);
	st_box_put_hdr(ob->box, ++ob->seq, (uint32_t)off);
	/* to every manager replica in the view: whichever is (or becomes)
	 * the strobe master has it */
	if (sp_nodeset_create(sp_node_count(ob->w), &mm)) {
		ob->seq--;
		return 0;
	}
	if (view_managers(ob, mm)) {
		sp_nodeset_destroy(mm);
		ob->seq--;
		qb_log(LOG_DEBUG, "box: no manager in the view");
		return 0;
	}
	rc = sp_xfer_and_signal(ob->w, mm, ob->box, ST_BOX_HDR + off,
				ob->lay->outbox + (uint64_t)ob->lay->outbox_len *
							  sp_node_id(ob->w),
				ST_EV_LOCAL_OUT, ST_EV_OUT, NULL, 0);
	qb_log(LOG_DEBUG, "box %llu: %zu bytes sent (%d)",
	       (unsigned long long)ob->seq, off, rc);
	if (rc) {
		sp_nodeset_destroy(mm);
		ob->seq--;
		return 0; /* the manager is not in our view: try next slice */
	}
	sp_nodeset_copy(ob->sent_to, mm);
	sp_nodeset_destroy(mm);
	memmove(ob->pend, ob->pend + off, ob->pend_len - off);
	ob->pend_len -= off;
	ob->inflight = 1;
	ob->sent = 0;
	ob->acked = 0;
	*jobs = ob->ends;
	return ob->nends;
}

/* The transfer aborted: the manager never saw it; its records go first
 * in the next box, whatever its size (it may hold EXIT records, and a job
 * whose exits are lost never ends). */
static void resend(struct nm_outbox *ob)
{
	uint32_t len;
	uint64_t seq;
	uint8_t *keep;

	st_box_get_hdr(ob->box, ob->lay->outbox_len, &seq, &len);
	keep = malloc(ob->pend_len + len);
	if (keep) {
		memcpy(keep, ob->box + ST_BOX_HDR, len);
		memcpy(keep + len, ob->pend, ob->pend_len);
		free(ob->pend);
		ob->pend = keep;
		ob->pend_len += len;
		ob->pend_cap = ob->pend_len;
	}
	ob->seq--;
	ob->inflight = 0;
}

int nm_outbox_events(struct nm_outbox *ob)
{
	int rc;

	while ((rc = sp_test_event(ob->w, ST_EV_LOCAL_OUT, 0)) != -EAGAIN) {
		if (rc == 0)
			ob->sent = 1;
		else if (rc == -STORM_ECLOSED || rc == -STORM_EEXPELLED)
			break;
		else
			resend(ob);
	}
	/* the ack names the box: every manager replica has it (a new
	 * strobe master may ack an older one again) */
	while (sp_test_event(ob->w, ST_EV_OUTACK, 0) == 0) {
		int64_t acked = 0;

		sp_gvar_read(ob->w, ob->lay->outack, &acked);
		if ((uint64_t)acked == ob->seq)
			ob->acked = 1;
	}
	if (ob->inflight && ob->sent && ob->acked) {
		ob->inflight = 0;
		return 1;
	}
	return 0;
}
