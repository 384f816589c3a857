/*
 * mmd_stats.c — strobe statistics: how late each slice's heartbeat
 * reached every node, as the strobe master sees it.
 *
 * Why it exists: a time slice is only as good as the strobe that keeps
 * it.  `bench/run gang` looks for the smallest slice_us the strobe
 * sustains, and an administrator asks whether the one configured is kept
 * (the `managers` request's "strobe" object, docs/protocol.md 5.8).
 *
 * What is measured, per slice:
 *   lateness = (the heartbeat's local completion event seen: every node
 *               has it) - (the slice boundary's nominal time);
 * the nominal time is the strobe timerfd's own schedule, anchor + k x
 * interval (a periodic kernel timer does not drift), not when the handler
 * happened to run, so a handler woken late is counted late.  A slice is
 *   missed when its boundary passed inside a timer overrun (several
 *          boundaries in one wake-up: one pass serves them all), when its
 *          heartbeat was not sent because the previous one was still in
 *          flight (clk->hb_late), or when the transfer failed;
 *   late   when its lateness exceeds one slice period.
 * Two parts of the lateness are kept apart, to say where it goes: wake
 * (boundary -> the timer handler runs) and xfer (heartbeat sent -> its
 * completion seen); the rest is the slice's work before the heartbeat.
 *
 * Key invariant: constant cost per slice and no allocation — one
 * clock_gettime per hook and histogram increments; the anchor takes one
 * timerfd_gettime, once.  The histogram is log-linear in microseconds
 * (exact below 64 us, then 32 buckets per power of two: a percentile is
 * within ~3 %), so p50/p99/max cover everything since the last reset.
 * Only the strobe master counts (the hooks return on the others).
 */
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "clock.h"
#include "stats.h"

#define SUB_BITS 5
#define SUB (1u << SUB_BITS) /* sub-buckets per power of two */

static uint32_t bucket_of(uint64_t us)
{
	uint32_t msb, shift, idx;

	if (us < 2u * SUB)
		return (uint32_t)us;
	msb = 63u - (uint32_t)__builtin_clzll(us);
	shift = msb - SUB_BITS;
	idx = 2u * SUB + (shift - 1u) * SUB + (uint32_t)(us >> shift) - SUB;
	return idx < MMD_STATS_BUCKETS ? idx : MMD_STATS_BUCKETS - 1u;
}

/* The largest value bucket b holds (a percentile errs on the late side). */
static uint64_t bucket_top(uint32_t b)
{
	uint32_t shift;

	if (b < 2u * SUB)
		return b;
	shift = (b - 2u * SUB) / SUB + 1u;
	return (((uint64_t)SUB + (b - 2u * SUB) % SUB + 1u) << shift) - 1u;
}

static void hist_add(struct mmd_hist *h, uint64_t us)
{
	h->n++;
	h->sum_us += us;
	if (us > h->max_us)
		h->max_us = us;
	h->b[bucket_of(us)]++;
}

/* Nearest rank over the histogram; 0 without samples. */
static uint64_t percentile(const struct mmd_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	rank = (uint64_t)(p * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	for (uint32_t b = 0; b < MMD_STATS_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= rank) {
			uint64_t v = bucket_top(b);

			return v < h->max_us ? v : h->max_us;
		}
	}
	return h->max_us;
}

static uint64_t us_between(uint64_t from_ns, uint64_t to_ns)
{
	return to_ns > from_ns ? (to_ns - from_ns) / 1000u : 0;
}

void mmd_stats_reset(struct mmd_stats *s, const struct mmd_strobe_clock *clk)
{
	s->slices = s->missed = s->late = 0;
	memset(&s->lateness, 0, sizeof(s->lateness));
	memset(&s->wake, 0, sizeof(s->wake));
	memset(&s->xfer, 0, sizeof(s->xfer));
	s->hb_late_seen = clk->hb_late;
	s->idle_base = clk->idle_slices;
	s->since_ns = mmd_mono_ns();
}

void mmd_stats_unanchor(struct mmd_stats *s)
{
	s->period_ns = 0;
	s->pending_ns = 0;
}

void mmd_stats_timer(struct mmd_stats *s, const struct mmd_strobe_clock *clk,
		     int fd, uint64_t n)
{
	uint64_t ms = clk->micro_slices, last, crossed, now;

	if (!clk->master || clk->idle)
		return;
	now = mmd_mono_ns();
	if (!s->period_ns) {
		/* the anchor: the next expiration's nominal time, from the
		 * timer itself; taken right after the read, so that one is
		 * number micro + 1 */
		struct itimerspec its;

		if (timerfd_gettime(fd, &its) < 0)
			return;
		s->period_ns = (uint64_t)its.it_interval.tv_sec * 1000000000u +
			       (uint64_t)its.it_interval.tv_nsec;
		s->anchor_ns = now + (uint64_t)its.it_value.tv_sec *
			       1000000000u + (uint64_t)its.it_value.tv_nsec;
		s->anchor_micro = clk->micro + 1;
		s->hb_late_seen = clk->hb_late;
		/* a new anchor after the idle strobe keeps the window */
		if (!s->since_ns)
			s->since_ns = now;
		if (!s->period_ns)
			return;
	}
	crossed = clk->micro / ms - (clk->micro - n) / ms;
	if (!crossed)
		return;
	s->slices += crossed;
	s->missed += crossed - 1;
	last = clk->micro / ms * ms; /* the latest boundary's expiration */
	s->boundary_ns = (uint64_t)((int64_t)s->anchor_ns +
				    ((int64_t)last - (int64_t)s->anchor_micro) *
				    (int64_t)s->period_ns);
	if (s->boundary_ns > now) {
		/* an expiration came between the read and the anchor: the
		 * anchor is whole periods late, for good */
		uint64_t k = (s->boundary_ns - now + s->period_ns - 1) /
			     s->period_ns;

		s->anchor_ns -= k * s->period_ns;
		s->boundary_ns -= k * s->period_ns;
	}
	hist_add(&s->wake, us_between(s->boundary_ns, now));
}

void mmd_stats_sent(struct mmd_stats *s, const struct mmd_strobe_clock *clk)
{
	if (!clk->master || clk->idle || !s->period_ns)
		return;
	if (clk->hb_late != s->hb_late_seen) {
		/* skipped: the previous heartbeat was still in flight */
		s->missed += clk->hb_late - s->hb_late_seen;
		s->hb_late_seen = clk->hb_late;
		return;
	}
	if ((clk->hb_inflight || clk->hb_posted) &&
	    clk->hb_sent_slice == clk->slice &&
	    s->pending_slice != clk->slice) {
		s->pending_ns = s->boundary_ns;
		s->pending_sent_ns = mmd_mono_ns();
		s->pending_slice = clk->slice;
		/* posted: nothing comes back; it is on time if handed to
		 * the fabric in time */
		if (!clk->hb_inflight)
			mmd_stats_hb_done(s, clk, 0, s->pending_sent_ns);
	}
}

void mmd_stats_hb_done(struct mmd_stats *s,
		       const struct mmd_strobe_clock *clk, int rc,
		       uint64_t at_ns)
{
	uint64_t now, us;

	if (!s->pending_ns)
		return;
	if (rc) {
		s->missed++;
		s->pending_ns = 0;
		return;
	}
	now = at_ns ? at_ns : mmd_mono_ns();
	us = us_between(s->pending_ns, now);
	s->pending_ns = 0;
	hist_add(&s->lateness, us);
	hist_add(&s->xfer, us_between(s->pending_sent_ns, now));
	if (us > clk->slice_us)
		s->late++;
}

json_t *mmd_stats_json(const struct mmd_stats *s,
		       const struct mmd_strobe_clock *clk)
{
	const struct mmd_hist *h = &s->lateness;

	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I,"
			 " s:I, s:I, s:I, s:I, s:I, s:b}",
			 "slices", (json_int_t)s->slices,
			 "missed", (json_int_t)s->missed,
			 "late", (json_int_t)s->late,
			 "samples", (json_int_t)h->n,
			 "p50_us", (json_int_t)percentile(h, 0.50),
			 "p99_us", (json_int_t)percentile(h, 0.99),
			 "max_us", (json_int_t)h->max_us,
			 "mean_us", h->n ? (double)h->sum_us / (double)h->n : 0.0,
			 "period_us", (json_int_t)clk->slice_us,
			 "window_ms", (json_int_t)(us_between(s->since_ns,
							      mmd_mono_ns()) /
						   1000u),
			 "wake_p50_us", (json_int_t)percentile(&s->wake, 0.50),
			 "wake_p99_us", (json_int_t)percentile(&s->wake, 0.99),
			 "xfer_p50_us", (json_int_t)percentile(&s->xfer, 0.50),
			 "xfer_p99_us", (json_int_t)percentile(&s->xfer, 0.99),
			 "idle_slices", (json_int_t)(clk->idle_slices -
						     s->idle_base),
			 "idle", clk->idle);
}

void mmd_stats_phist(const struct mmd_hist *h, struct mmd_phist *out)
{
	*out = (struct mmd_phist){ .n = h->n, .sum_ns = h->sum_us * 1000u };
	for (uint32_t b = 0; b < MMD_STATS_BUCKETS; b++) {
		double top = (double)bucket_top(b) / 1e6;

		if (!h->b[b])
			continue;
		for (int i = 0; i < MMD_PHIST_BOUNDS; i++)
			if (top <= mmd_phist_bound[i]) {
				out->b[i] += h->b[b];
				break;
			}
	}
}
