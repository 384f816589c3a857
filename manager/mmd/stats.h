/*
 * stats.h — the strobe master's slice statistics (stats.c says what is
 * measured and why).  The strobe owns a struct mmd_stats and calls the
 * hooks with its clock (struct mmd_strobe_clock); main loop only, and
 * every hook returns at once on a replica that is not the master.
 */
#ifndef STORM_MMD_STATS_H
#define STORM_MMD_STATS_H

#include <stdint.h>

#include <jansson.h>

#include "phist.h"

/* A histogram is log-linear in us: exact below 64, then 32 buckets per
 * power of two, up to 2^32 us. */
#define MMD_STATS_BUCKETS 896
struct mmd_hist {
	uint64_t n, sum_us, max_us;
	uint32_t b[MMD_STATS_BUCKETS];
};

/* What the hooks read of the strobe. */
struct mmd_strobe_clock {
	int master;               /* this replica drives the strobe */
	uint32_t slice_us, micro_slices;
	uint64_t micro;           /* micro-slices so far */
	uint64_t slice;
	uint64_t hb_late;         /* heartbeats skipped: one still in flight */
	int hb_inflight;
	int hb_posted;            /* the last went as posted PUTs only: done
				   * once handed to the fabric */
	uint64_t hb_sent_slice;
	int idle;                 /* the idle strobe: not counted */
	uint64_t idle_slices;     /* slices passed idle (not strobed) */
};

struct mmd_stats {
	uint64_t period_ns;       /* the timer's interval; 0: not anchored */
	uint64_t anchor_ns;       /* nominal time of expiration anchor_micro */
	uint64_t anchor_micro;
	uint64_t boundary_ns;     /* the latest slice boundary's nominal time */
	uint64_t pending_ns;      /* ... of the heartbeat in flight; 0: none */
	uint64_t pending_sent_ns; /* when that heartbeat was sent */
	uint64_t pending_slice;
	uint64_t hb_late_seen;    /* clk->hb_late as last counted */
	uint64_t idle_base;       /* clk->idle_slices at the window's start */
	uint64_t since_ns;        /* the window's start */
	uint64_t slices, missed, late;
	struct mmd_hist lateness; /* boundary -> every node has the heartbeat */
	struct mmd_hist wake;     /* boundary -> the timer handler runs */
	struct mmd_hist xfer;     /* heartbeat sent -> its completion seen */
};

/* The strobe timer fd fired n times (clk->micro already counts them). */
void mmd_stats_timer(struct mmd_stats *s, const struct mmd_strobe_clock *clk,
		     int fd, uint64_t n);
/* The heartbeat of this slice was sent, or skipped (clk->hb_late). */
void mmd_stats_sent(struct mmd_stats *s, const struct mmd_strobe_clock *clk);
/* The heartbeat's local completion event, with its result rc, signalled
 * at at_ns on the monotonic clock (0: now). */
void mmd_stats_hb_done(struct mmd_stats *s,
		       const struct mmd_strobe_clock *clk, int rc,
		       uint64_t at_ns);
/* The statistics since the last reset as a new JSON object (the
 * `managers` reply's "strobe"; docs/protocol.md 5.8); NULL without
 * memory. */
json_t *mmd_stats_json(const struct mmd_stats *s,
		       const struct mmd_strobe_clock *clk);
/* The timer was re-armed (the idle strobe): the schedule is taken from
 * it again at the next expiration. */
void mmd_stats_unanchor(struct mmd_stats *s);
/* Starts a new window: counters and histogram to zero. */
void mmd_stats_reset(struct mmd_stats *s, const struct mmd_strobe_clock *clk);

/* h as a Prometheus histogram (each bucket counted at the first bound
 * its largest value fits under). */
void mmd_stats_phist(const struct mmd_hist *h, struct mmd_phist *out);

#endif
