/*
 * rerun.c — what a restarted rank prints again, dropped (rerun.h).
 *
 * Per stream: seen, the position of the next byte (bytes passed on or
 * matched so far); at, a rerun's next byte (at < seen: comparing); and a
 * ring of the bytes at positions [lo, seen), byte q in
 * ring[(q - base) % cap], base the position where keeping began.  The
 * ring grows by doubling up to MMD_RERUN_KEEP while nothing has wrapped,
 * within the budget; after that it wraps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rerun.h"

#define NBUCKETS 4096u
#define RING_MIN 4096u
/* Streams followed at most (records of ~80 bytes): past it a stream is
 * not followed, and a rerun of it passes unmarked. */
#define STREAMS_MAX (1u << 20)

struct stream {
	struct stream *next;
	uint32_t job, rank;
	int s;
	uint32_t epoch;   /* of the rerun being compared */
	uint64_t seen, at, lo;
	uint64_t from;    /* where the rerun being compared began */
	uint64_t base;    /* the position of ring[0] before any wrap */
	uint8_t *ring;
	uint32_t cap;
	int full;         /* the ring grows no more */
};

struct mmd_rerun {
	struct stream *b[NBUCKETS];
	uint64_t budget, kept;
	uint32_t nstreams;
};

int mmd_rerun_create(struct mmd_rerun **out, uint64_t budget)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->budget = budget;
	return 0;
}

static void stream_free(struct mmd_rerun *r, struct stream *x)
{
	r->kept -= x->cap;
	r->nstreams--;
	free(x->ring);
	free(x);
}

void mmd_rerun_destroy(struct mmd_rerun *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < NBUCKETS; i++)
		while (r->b[i]) {
			struct stream *x = r->b[i];

			r->b[i] = x->next;
			stream_free(r, x);
		}
	free(r);
}

static uint32_t bucket(uint32_t job, uint32_t rank, int s)
{
	return (job * 2654435761u ^ rank * 40503u ^ (uint32_t)s) % NBUCKETS;
}

/* The stream, or NULL; made if `make`.  Every stream of output that
 * comes is followed from its first byte, whether its job may rerun or
 * not yet (a checkpoint may be asked for later), so that a rerun's
 * offsets are positions here; the budget bounds the rings only. */
static struct stream *find(struct mmd_rerun *r, uint32_t job, uint32_t rank,
			   int s, int make)
{
	uint32_t h = bucket(job, rank, s);
	struct stream *x;

	for (x = r->b[h]; x; x = x->next)
		if (x->job == job && x->rank == rank && x->s == s)
			return x;
	if (!make || r->nstreams >= STREAMS_MAX ||
	    !(x = calloc(1, sizeof(*x))))
		return NULL;
	r->nstreams++;
	x->job = job;
	x->rank = rank;
	x->s = s;
	x->next = r->b[h];
	r->b[h] = x;
	return x;
}

/* Room in the ring for positions up to `end` (exclusive), while it has
 * not wrapped; past the budget or MMD_RERUN_KEEP it stays as it is. */
static void grow(struct mmd_rerun *r, struct stream *x, uint64_t end)
{
	uint64_t want = x->cap ? x->cap : RING_MIN;
	uint8_t *p;

	if (!x->cap) /* keeping begins here */
		x->base = x->lo = x->seen;
	if (x->full || end - x->base <= x->cap)
		return;
	if (x->seen - x->base > x->cap) { /* wrapped (refused before) */
		x->full = 1;
		return;
	}
	end -= x->base;
	while (want < end && want < MMD_RERUN_KEEP)
		want *= 2;
	if (want > MMD_RERUN_KEEP)
		want = MMD_RERUN_KEEP;
	if (r->kept + (want - x->cap) > r->budget ||
	    !(p = realloc(x->ring, (size_t)want))) {
		x->full = 1;
		return;
	}
	r->kept += want - x->cap;
	x->ring = p;
	x->cap = (uint32_t)want;
	if (want == MMD_RERUN_KEEP)
		x->full = 1;
}

/* Keep bytes p[0..len) at positions seen.. (seen moves on). */
static void keep_bytes(struct mmd_rerun *r, struct stream *x,
		       const uint8_t *p, uint32_t len, int keep)
{
	if (keep)
		grow(r, x, x->seen + len);
	for (uint32_t i = 0; x->cap && i < len; ) {
		uint32_t o = (uint32_t)((x->seen + i - x->base) % x->cap);
		uint32_t n = x->cap - o < len - i ? x->cap - o : len - i;

		memcpy(x->ring + o, p + i, n);
		i += n;
	}
	x->seen += len;
	x->at = x->seen;
	if (!x->cap)
		x->lo = x->seen;
	else if (x->seen - x->lo > x->cap)
		x->lo = x->seen - x->cap;
}

static int say(char *line, size_t cap, const struct stream *x, int differ)
{
	char from[48];

	if (x->epoch)
		snprintf(from, sizeof(from), "restarted from checkpoint "
			 "epoch %u", x->epoch);
	else
		snprintf(from, sizeof(from), "started over (requeued)");
	return snprintf(line, cap, "storm: rank %u %s; %s\n", x->rank, from,
			differ ? "what it prints from here on differs from "
			"what it printed before" : "what it printed after "
			"that point may follow again");
}

static uint8_t byte_at(const struct stream *x, uint64_t q)
{
	return x->ring[(q - x->base) % x->cap];
}

/* The rerun differs at x->at: a line from Storm (on a line of its own)
 * marks the point, then the rerun's line so far again, whole; what was
 * passed on after x->at is the stream no more. */
static void differs(struct stream *x, mmd_rerun_emit_fn emit, void *ctx)
{
	uint8_t part[512];
	uint64_t ls = x->at;
	char line[200];
	int m = 0;

	if (x->seen > x->lo && byte_at(x, x->seen - 1) != '\n')
		line[m++] = '\n';
	m += say(line + m, sizeof(line) - (size_t)m, x, 1);
	while (ls > x->from && x->at - ls < sizeof(part) &&
	       byte_at(x, ls - 1) != '\n')
		ls--;
	for (uint64_t q = ls; q < x->at; q++)
		part[q - ls] = byte_at(x, q);
	x->seen = x->at;
	if (m > 0 && (size_t)m < sizeof(line))
		emit(ctx, (const uint8_t *)line, (uint32_t)m);
	if (x->at > ls)
		emit(ctx, part, (uint32_t)(x->at - ls));
}

void mmd_rerun_output(struct mmd_rerun *r, uint32_t job, uint32_t rank,
		      int stream, const uint8_t *p, uint32_t len, int keep,
		      mmd_rerun_emit_fn emit, void *ctx)
{
	struct stream *x = find(r, job, rank, stream, 1);

	while (x && len && x->at < x->seen) {
		uint32_t o = (uint32_t)((x->at - x->base) % x->cap);
		uint64_t run = x->seen - x->at;
		uint32_t n = len, k = 0;

		if (n > run)
			n = (uint32_t)run;
		if (n > x->cap - o)
			n = x->cap - o;
		while (k < n && p[k] == x->ring[o + k])
			k++;
		x->at += k;
		p += k;
		len -= k;
		if (k < n)  /* it differs: say so, it is the stream now */
			differs(x, emit, ctx);
	}
	if (!len)
		return;
	emit(ctx, p, len);
	if (x)
		keep_bytes(r, x, p, len, keep);
}

void mmd_rerun_restart(struct mmd_rerun *r, uint32_t job, uint32_t rank,
		       uint32_t epoch, const uint64_t off[2],
		       void (*emit)(void *ctx, int stream, const uint8_t *p,
				    uint32_t len), void *ctx)
{
	for (int s = 0; s < 2; s++) {
		struct stream *x = find(r, job, rank, s, 0);
		char line[200];
		int m;

		if (!x)
			continue; /* nothing of it passed on: nothing repeats */
		x->epoch = epoch;
		if (off[s] >= x->seen) { /* what lies between never came */
			x->seen = x->at = x->lo = x->base = off[s];
			continue;
		}
		if (x->cap && off[s] >= x->lo) {
			x->at = x->from = off[s]; /* compared as it comes */
			continue;
		}
		/* not kept that far back: it repeats, marked */
		x->seen = x->at = x->lo = x->base = off[s];
		m = say(line, sizeof(line), x, 0);
		if (m > 0 && (size_t)m < sizeof(line))
			emit(ctx, s, (const uint8_t *)line, (uint32_t)m);
	}
}

void mmd_rerun_forget(struct mmd_rerun *r, uint32_t job)
{
	for (uint32_t i = 0; r && i < NBUCKETS; i++)
		for (struct stream **pp = &r->b[i]; *pp; ) {
			struct stream *x = *pp;

			if (x->job != job) {
				pp = &x->next;
				continue;
			}
			*pp = x->next;
			stream_free(r, x);
		}
}

uint64_t mmd_rerun_kept(const struct mmd_rerun *r)
{
	return r ? r->kept : 0;
}
