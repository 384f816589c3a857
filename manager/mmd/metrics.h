/*
 * metrics.h — this replica's Prometheus metrics (docs/metrics.md):
 * `GET /metrics` at the manager's metrics_listen, in the text exposition
 * format, served by libmicrohttpd in the main loop (its epoll descriptor
 * polled there, so a scrape reads the state between operations, never
 * during one).  Read-only; anything but GET or HEAD of /metrics is
 * refused; connections are bounded.
 *
 * The page is rendered by the caller's hook into a text buffer
 * (mmd_text); modules write their own series with the helpers below.
 */
#ifndef STORM_MMD_METRICS_H
#define STORM_MMD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <qb/qbloop.h>

#include <storm_manager.h>

#include "phist.h"

struct mmd_text {
	char *p;
	size_t len, cap;
	int err;            /* out of memory: the page is not served */
};

void mmd_text_printf(struct mmd_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* # HELP and # TYPE lines. */
void mmd_text_head(struct mmd_text *t, const char *name, const char *type,
		   const char *help);
/* A histogram's series: name_bucket{labels,le=...}, _sum, _count
 * (labels: "" or 'op="run"'). */
void mmd_text_phist(struct mmd_text *t, const char *name,
		    const char *labels, const struct mmd_phist *h);
/* The state's jobs by state and nodes by state (drained ones as
 * DRAINING / DRAINED), and the nodes' failures. */
void mmd_metrics_state(struct mmd_text *t, const mm_state_t *st);

typedef void (*mmd_metrics_render_fn)(void *ctx, struct mmd_text *t);

struct mmd_metrics {
	struct MHD_Daemon *d;
	qb_loop_t *loop;
	int epfd, lfd;
	mmd_metrics_render_fn render;
	void *ctx;
	uint64_t scrapes;
	qb_loop_timer_handle timer;
};

/* Listen on host:port (listen) and serve from the loop.  0, or -errno
 * with err saying what (an address in use names it). */
int mmd_metrics_start(struct mmd_metrics *m, qb_loop_t *loop,
		      const char *listen, mmd_metrics_render_fn render,
		      void *ctx, char *err, size_t errlen);
void mmd_metrics_stop(struct mmd_metrics *m);

#endif
