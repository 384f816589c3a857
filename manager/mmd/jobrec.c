/*
 * jobrec.c — the shell's per-job records (jobrec.h): a chained hash table
 * on the job id, doubled when it holds more records than buckets.
 */
#include <stdlib.h>

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
