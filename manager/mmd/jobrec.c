/*
 * jobrec.c — the shell's per-job records (jobrec.h): a chained hash table
 * on the job id, doubled when it holds more records than buckets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <storm_proto.h>

#include "jobrec.h"

static uint32_t hash(uint32_t id, uint32_t nbuckets)
{
	/* ids are dense and ascending: a multiplicative hash spreads them */
	return (uint32_t)((id * 2654435761u) & (nbuckets - 1));
}

struct mmd_job *mmd_jobs_find(struct mmd_jobs *t, uint32_t id)
{
	if (!t->nbuckets)
		return NULL;
	for (struct mmd_job *j = t->bucket[hash(id, t->nbuckets)]; j;
	     j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

static int grow(struct mmd_jobs *t)
{
	uint32_t nb = t->nbuckets ? 2 * t->nbuckets : 256;
	struct mmd_job **b = calloc(nb, sizeof(*b));

	if (!b)
		return -1;
	for (uint32_t i = 0; i < t->nbuckets; i++)
		for (struct mmd_job *j = t->bucket[i], *next; j; j = next) {
			uint32_t h = hash(j->id, nb);

			next = j->next;
			j->next = b[h];
			b[h] = j;
		}
	free(t->bucket);
	t->bucket = b;
	t->nbuckets = nb;
	return 0;
}

struct mmd_job *mmd_jobs_get(struct mmd_jobs *t, uint32_t id)
{
	struct mmd_job *j = mmd_jobs_find(t, id);
	uint32_t h;

	if (j)
		return j;
	if (t->n >= t->nbuckets && grow(t))
		return NULL;
	if (!(j = calloc(1, sizeof(*j))))
		return NULL;
	j->id = id;
	h = hash(id, t->nbuckets);
	j->next = t->bucket[h];
	t->bucket[h] = j;
	t->n++;
	return j;
}

int32_t *mmd_job_status(struct mmd_job *j, uint32_t ranks)
{
	if (j->status && j->usage && j->ranks == ranks)
		return j->status;
	free(j->status);
	free(j->usage);
	j->status = calloc(ranks ? ranks : 1, sizeof(*j->status));
	j->usage = calloc(ranks ? ranks : 1, sizeof(*j->usage));
	j->got = 0;
	j->ranks = j->status && j->usage ? ranks : 0;
	if (!j->status || !j->usage) {
		free(j->status);
		free(j->usage);
		j->status = NULL;
		j->usage = NULL;
		return NULL;
	}
	for (uint32_t r = 0; r < ranks; r++)
		j->status[r] = -1;
	return j->status;
}

/* A job's statuses; its usage stays while the record does. */
static void release(struct mmd_job *j)
{
	free(j->status);
	j->status = NULL;
	j->got = 0;
	free(j->ckpt_from);
	j->ckpt_from = NULL;
	j->ckpt_cap = j->ckpt_got = 0;
}

static void drop(struct mmd_jobs *t, uint32_t id)
{
	if (!t->nbuckets)
		return;
	for (struct mmd_job **pp = &t->bucket[hash(id, t->nbuckets)]; *pp;
	     pp = &(*pp)->next)
		if ((*pp)->id == id) {
			struct mmd_job *j = *pp;

			*pp = j->next;
			release(j);
			free(j->usage);
			free(j);
			t->n--;
			return;
		}
}

void mmd_jobs_ended(struct mmd_jobs *t, uint32_t id)
{
	struct mmd_job *j = mmd_jobs_find(t, id);

	if (!j || j->ended)
		return;
	release(j);
	j->ended = 1;
	if (!t->ended && !(t->ended = calloc(MMD_JOBS_ENDED_KEEP,
					     sizeof(*t->ended)))) {
		drop(t, id);
		return;
	}
	if (t->ended_n == MMD_JOBS_ENDED_KEEP) {
		drop(t, t->ended[t->ended_head]);
		t->ended_head = (t->ended_head + 1) % MMD_JOBS_ENDED_KEEP;
		t->ended_n--;
	}
	t->ended[(t->ended_head + t->ended_n) % MMD_JOBS_ENDED_KEEP] = id;
	t->ended_n++;
}

void mmd_jobs_requeued(struct mmd_jobs *t, const mm_state_t *st)
{
	mm_job_t v;

	for (uint32_t i = 0; i < t->nbuckets; i++)
		for (struct mmd_job *j = t->bucket[i]; j; j = j->next) {
			if (mm_job_get(st, j->id, &v) ||
			    v.state != MM_JOB_PENDING || !v.restarts)
				continue;
			for (uint32_t k = 0; j->status && k < j->ranks; k++)
				j->status[k] = -1;
			j->got = 0;
			j->exit_proposed = j->staged_proposed = 0;
			j->ckpt_epoch = 0;
			j->t_stage = j->t_staged = j->t_end = 0;
		}
}

void mmd_jobs_master_reset(struct mmd_jobs *t)
{
	for (uint32_t i = 0; i < t->nbuckets; i++)
		for (struct mmd_job *j = t->bucket[i]; j; j = j->next)
			j->exit_proposed = j->staged_proposed = 0;
}

void mmd_jobs_free(struct mmd_jobs *t)
{
	for (uint32_t i = 0; i < t->nbuckets; i++)
		while (t->bucket[i]) {
			struct mmd_job *j = t->bucket[i];

			t->bucket[i] = j->next;
			release(j);
			free(j->usage);
			free(j);
		}
	free(t->bucket);
	free(t->ended);
	*t = (struct mmd_jobs){ 0 };
}

uint32_t mmd_jobs_count(const struct mmd_jobs *t)
{
	return t->n;
}

/* ---- the snapshot's part ------------------------------------------------ */

#define SNAP_RANK 28 /* i32 + 3 x u64 */

/* A record whose statuses a joiner needs: its job holds PEs still. */
static int wanted(const struct mmd_job *j, const mm_state_t *st)
{
	mm_job_t v;

	return j->status && j->got && !j->ended &&
	       !mm_job_get(st, j->id, &v) && v.ranks == j->ranks &&
	       (v.state == MM_JOB_STAGING || v.state == MM_JOB_RUNNING);
}

size_t mmd_jobs_snap_size(struct mmd_jobs *t, const mm_state_t *st)
{
	size_t n = 4;

	for (uint32_t i = 0; i < t->nbuckets; i++)
		for (struct mmd_job *j = t->bucket[i]; j; j = j->next)
			if (wanted(j, st))
				n += 8 + (size_t)j->ranks * SNAP_RANK;
	return n;
}

void mmd_jobs_snap_encode(struct mmd_jobs *t, const mm_state_t *st,
			  uint8_t *out)
{
	uint8_t *p = out + 4;
	uint32_t count = 0;

	for (uint32_t i = 0; i < t->nbuckets; i++)
		for (struct mmd_job *j = t->bucket[i]; j; j = j->next) {
			if (!wanted(j, st))
				continue;
			st_put32(p, j->id);
			st_put32(p + 4, j->ranks);
			p += 8;
			for (uint32_t r = 0; r < j->ranks; r++, p += SNAP_RANK) {
				st_put32(p, (uint32_t)j->status[r]);
				st_put64(p + 4, j->usage[r].utime_us);
				st_put64(p + 12, j->usage[r].stime_us);
				st_put64(p + 20, j->usage[r].maxrss_kib);
			}
			count++;
		}
	st_put32(out, count);
}

int mmd_jobs_snap_decode(struct mmd_jobs *t, const uint8_t *p, size_t len,
			 char *err, size_t errlen)
{
	size_t at = 4;
	uint32_t count;

	if (len < 4) {
		snprintf(err, errlen, "snapshot's job statuses: %zu bytes",
			 len);
		return -STORM_EPROTO;
	}
	count = st_get32(p);
	/* the whole part first: nothing is taken from a torn one */
	for (uint32_t k = 0; k < count; k++) {
		uint32_t ranks;

		if (len - at < 8) {
			snprintf(err, errlen, "snapshot's job statuses end "
				 "inside entry %u", k);
			return -STORM_EPROTO;
		}
		ranks = st_get32(p + at + 4);
		if (ranks == 0 || ranks > (len - at - 8) / SNAP_RANK) {
			snprintf(err, errlen, "snapshot's job statuses: entry "
				 "%u of %u ranks does not fit", k, ranks);
			return -STORM_EPROTO;
		}
		at += 8 + (size_t)ranks * SNAP_RANK;
	}
	if (at != len) {
		snprintf(err, errlen, "snapshot's job statuses: %zu bytes "
			 "after the last entry", len - at);
		return -STORM_EPROTO;
	}
	for (at = 4; at < len;) {
		uint32_t id = st_get32(p + at), ranks = st_get32(p + at + 4);
		struct mmd_job *j = mmd_jobs_get(t, id);

		at += 8;
		if (!j || !mmd_job_status(j, ranks))
			return -ENOMEM;
		j->got = 0;
		for (uint32_t r = 0; r < ranks; r++, at += SNAP_RANK) {
			j->status[r] = (int32_t)st_get32(p + at);
			j->usage[r].utime_us = st_get64(p + at + 4);
			j->usage[r].stime_us = st_get64(p + at + 12);
			j->usage[r].maxrss_kib = st_get64(p + at + 20);
			j->got += j->status[r] != -1;
		}
	}
	return 0;
}
