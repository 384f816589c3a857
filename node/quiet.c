/*
 * quiet.c — ticks kept quiet, gv_quiet, and the wake of an idle strobe
 * (quiet.h).
 */
#include <errno.h>
#include <string.h>

#include <qb/qblog.h>

#include "quiet.h"

int nm_quiet_init(struct nm_quiet *q, sp_world_t *w, const st_layout_t *lay,
		  uint32_t nmanagers)
{
	*q = (struct nm_quiet){ .w = w, .lay = lay, .nmanagers = nmanagers,
				.word = (int64_t)sp_node_id(w) };
	if (sp_nodeset_create(sp_node_count(w), &q->mm))
		return -ENOMEM;
	sp_gvar_write_local(w, lay->gv_quiet, 0);
	return 0;
}

void nm_quiet_fini(struct nm_quiet *q)
{
	sp_nodeset_destroy(q->mm);
	memset(q, 0, sizeof(*q));
}

/* ST_EV_WAKE to every manager replica in the view: whichever is the
 * strobe master strobes again.  A wake that cannot go is sent again for
 * the next idle block (every few slices while the strobe idles). */
static void wake(struct nm_quiet *q, uint64_t slice)
{
	sp_view_info_t vi;
	int rc;

	q->woke = slice;
	if (sp_view(q->w, &vi, q->mm))
		return;
	for (uint32_t x = q->nmanagers; x < sp_node_count(q->w); x++)
		sp_nodeset_del(q->mm, x);
	if (sp_nodeset_count(q->mm) == 0)
		return;
	rc = sp_xfer_and_signal(q->w, q->mm, &q->word, sizeof(q->word),
				q->lay->wake, ST_EV_LOCAL_WAKE, ST_EV_WAKE,
				NULL, 0);
	if (rc == 0)
		q->wakes++;
	qb_log(LOG_DEBUG, "idle strobe at slice %llu: woken (%d)",
	       (unsigned long long)slice, rc);
}

void nm_quiet_update(struct nm_quiet *q, int work, const st_hb_t *hb)
{
	int quiet = !work;

	if (quiet != q->quiet &&
	    sp_event_quiet(q->w, ST_EV_HB_TICK, quiet) == 0) {
		/* gv_quiet 0 before any wake: a master that compared it
		 * after this store sees work; one that compared before is
		 * woken */
		sp_gvar_write_local(q->w, q->lay->gv_quiet, quiet);
		q->quiet = quiet;
	}
	if (!q->quiet && (hb->flags & ST_HB_IDLE) && q->woke != hb->slice)
		wake(q, hb->slice);
}

void nm_quiet_events(struct nm_quiet *q)
{
	while (sp_test_event(q->w, ST_EV_LOCAL_WAKE, 0) != -EAGAIN)
		;
}
