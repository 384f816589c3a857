/*
 * backfill.h — a replica that joined by state transfer fetches the job
 * history it may lack (records purged before the snapshot's index) from
 * a synced peer, page by page (at most MMD_HIST_PAGE_MAX bytes), over
 * the client protocol — off the agreed stream, so the group's ordered
 * traffic never waits for it.  A worker thread does the blocking network
 * part (its own connection: the peer's unix socket if it is on this
 * host, else its TCP address with a MUNGE credential of root); the main
 * loop writes each page into the history in the replica's transaction
 * (history.h), so pages and applied operations never race.
 */
#ifndef STORM_MMD_BACKFILL_H
#define STORM_MMD_BACKFILL_H

#include <pthread.h>
#include <stdint.h>

#include <jansson.h>
#include <storm_proto.h>

#include "history.h"

struct mmd_backfill_page {
	uint64_t below;            /* what was asked for */
	uint32_t after;
	struct mmd_hist_rec *recs; /* strings point into doc */
	size_t n;
	uint32_t last;
	int more;
	json_t *doc;
};

struct mmd_backfill {
	const st_config_t *cfg;
	const st_host_t *self;
	pthread_t th;
	int started;
	int efd;                 /* readable: a page is ready */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, asked, ready;  /* under mu */
	uint64_t below;          /* the page asked for */
	uint32_t after;
	struct mmd_backfill_page page;
	char note[512];          /* the last failure, for the log */
	uint32_t peer;           /* next peer to try */
};

/* Start the worker (idle until asked).  0 or -errno. */
int mmd_backfill_init(struct mmd_backfill *b, const st_config_t *cfg,
		      const st_host_t *self);
void mmd_backfill_fini(struct mmd_backfill *b);
/* Ask for the page after `after` of records purged at or before below;
 * does nothing while one is asked for or waiting to be taken. */
void mmd_backfill_ask(struct mmd_backfill *b, uint64_t below,
		      uint32_t after);
/* The efd is readable: 1 and the page (the caller frees it with
 * mmd_backfill_page_free), or 0. */
int mmd_backfill_take(struct mmd_backfill *b, struct mmd_backfill_page *p);
void mmd_backfill_page_free(struct mmd_backfill_page *p);

#endif
