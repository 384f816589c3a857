/*
 * stage.c — the staging arena: where XFER-AND-SIGNAL keeps data between
 * STAGE and DECIDE when the back-end lets children read it remotely.
 *
 * Why an arena and not malloc: a child reads its parent's staging with the
 * back-end's RMA read (one copy, by the reader).  The region must be
 * registered with the provider once (registration per transfer costs more
 * than the copy), and it must never be unmapped while the world lives: a
 * read that races an abort may land on freed staging, and then reads stale
 * bytes of a transfer that will never commit instead of faulting.
 *
 * The arena is the back-end's shared memory where it offers one (shm: a
 * file peers map, so a child's read is a memcpy), else mapped here
 * (MAP_NORESERVE); either way pages cost only once used.  It is carved in
 * STAGE_UNIT runs by a first-fit bitmap; a transfer that does not fit goes
 * by messages instead.  Guarded by the world lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <qb/qblog.h>

#include "sp_engine.h"

#define STAGE_UNIT (64u << 10)

static int bit(const uint64_t *m, size_t i)
{
	return (int)(m[i / 64] >> (i % 64) & 1u);
}

static void set_bits(uint64_t *m, size_t from, size_t n, int on)
{
	for (size_t i = from; i < from + n; i++) {
		if (on)
			m[i / 64] |= (uint64_t)1 << (i % 64);
		else
			m[i / 64] &= ~((uint64_t)1 << (i % 64));
	}
}

int sp_stage_init(sp_world_t *w, size_t bytes)
{
	struct sp_stage *s = &w->stage;
	const struct sp_transport_ops *ops = w->tp->ops;
	void *p;

	memset(s, 0, sizeof(*s));
	if (bytes < STAGE_UNIT || ops->version < SP_TRANSPORT_OPS_V2 ||
	    !ops->reg || !ops->read)
		return 0; /* messages only */
	bytes = (bytes + STAGE_UNIT - 1) / STAGE_UNIT * STAGE_UNIT;
	/* Shared with the back-end where it can (shm: children copy from
	 * it with a memcpy); the back-end unmaps that one itself. */
	p = ops->version >= SP_TRANSPORT_OPS_V4 && ops->share_stage ?
		    ops->share_stage(w->tp, bytes) : NULL;
	s->shared = p != NULL;
	if (!p)
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	s->units = bytes / STAGE_UNIT;
	s->map = calloc((s->units + 63) / 64, sizeof(uint64_t));
	if (!s->map || ops->reg(w->tp, p, bytes, &s->key, &s->raddr) != 0) {
		/* A provider without RMA: transfers go by messages. */
		qb_log(LOG_INFO, "node %u: no remote reads of staging, "
		       "transfers go by messages", w->id);
		free(s->map);
		if (!s->shared)
			munmap(p, bytes);
		memset(s, 0, sizeof(*s));
		return 0;
	}
	s->base = p;
	s->size = bytes;
	return 0;
}

void sp_stage_fini(sp_world_t *w)
{
	struct sp_stage *s = &w->stage;

	if (s->base && !s->shared)
		munmap(s->base, s->size); /* else the back-end's, gone with it */
	free(s->map);
	memset(s, 0, sizeof(*s));
}

void *sp_stage_alloc(sp_world_t *w, size_t len)
{
	struct sp_stage *s = &w->stage;
	size_t need = (len + STAGE_UNIT - 1) / STAGE_UNIT, run = 0;

	if (!s->base || len == 0 || need > s->units)
		return NULL;
	for (size_t i = 0; i < s->units; i++) {
		run = bit(s->map, i) ? 0 : run + 1;
		if (run == need) {
			set_bits(s->map, i + 1 - need, need, 1);
			return s->base + (i + 1 - need) * STAGE_UNIT;
		}
	}
	return NULL;
}

int sp_stage_owns(const sp_world_t *w, const void *p)
{
	const uint8_t *b = p;

	return w->stage.base && b >= w->stage.base &&
	       b < w->stage.base + w->stage.size;
}

void sp_stage_free(sp_world_t *w, void *p, size_t len)
{
	struct sp_stage *s = &w->stage;

	if (!p)
		return;
	if (!sp_stage_owns(w, p)) {
		free(p);
		return;
	}
	set_bits(s->map, (size_t)((uint8_t *)p - s->base) / STAGE_UNIT,
		 (len + STAGE_UNIT - 1) / STAGE_UNIT, 0);
}

uint64_t sp_stage_raddr(const sp_world_t *w, const void *p)
{
	return w->stage.raddr + (uint64_t)((const uint8_t *)p - w->stage.base);
}
