/*
 * creds.c — the credential replay cache (MM_OP_CRED): a MUNGE credential
 * is accepted once by the whole cluster, not once per replica.  munged
 * refuses a replay only to its own host, so a credential captured on its
 * way to one replica would open a connection to another; the replica
 * that decoded a credential therefore proposes its id through the log,
 * and only the first CRED with that id is taken, everywhere alike.
 *
 * Key invariants: the cache is a function of the operations applied (no
 * clock: entries leave when TICK's agreed now_ms passes their expiry by
 * MM_CRED_SKEW_MS), it holds at most MM_CREDS_MAX entries, in ascending
 * id with no duplicates, so the snapshot that stores it is canonical.
 * Lookups are binary searches; an insertion moves the tail (at most
 * 1.5 MiB, for a credential that authenticates a connection, not for
 * every request); pruning compacts in place, at most once a second of
 * state time, and never allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

/* Entries wait this long past their leaving time so that a sweep comes
 * at most once a second of state time, not at every tick. */
#define SWEEP_LAG_MS 1000u

/* The index of the first entry of id >= id (ncreds if none). */
static uint32_t lower(const mm_state_t *s, const uint8_t *id)
{
	uint32_t lo = 0, hi = s->ncreds;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (memcmp(s->creds[mid].id, id, MM_CRED_ID_BYTES) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int reserve(mm_state_t *s)
{
	struct mmi_cred *n;
	uint32_t cap;

	if (s->ncreds < s->credcap)
		return 0;
	cap = s->credcap ? s->credcap * 2 : 64;
	if (cap > MM_CREDS_MAX)
		cap = MM_CREDS_MAX;
	n = realloc(s->creds, (size_t)cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->creds = n;
	s->credcap = cap;
	return 0;
}

int mmi_op_cred(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	uint32_t at;

	if (!op->cred_id)
		return mmi_refuse(res, -EINVAL, "credential: no id");
	if (op->cred_expire_ms > UINT64_MAX - MM_CRED_SKEW_MS ||
	    op->cred_expire_ms + MM_CRED_SKEW_MS <= s->now_ms)
		return mmi_refuse(res, -EACCES, "MUNGE credential of uid %u "
				  "refused: it expired by the cluster's "
				  "time (epoch ms %llu, it expired at %llu); "
				  "make a fresh one, and check that the "
				  "hosts' clocks agree (NTP)", op->uid,
				  (unsigned long long)s->now_ms,
				  (unsigned long long)op->cred_expire_ms);
	at = lower(s, op->cred_id);
	if (at < s->ncreds &&
	    !memcmp(s->creds[at].id, op->cred_id, MM_CRED_ID_BYTES))
		return mmi_refuse(res, -EACCES, "MUNGE credential of uid %u "
				  "refused: replayed (the cluster accepted "
				  "it before, maybe at another replica); "
				  "each request needs a fresh credential",
				  op->uid);
	if (s->ncreds >= MM_CREDS_MAX)
		return mmi_refuse(res, -EAGAIN, "MUNGE credential refused: "
				  "the cluster holds %u credentials that "
				  "have not expired yet, the most it keeps; "
				  "try again in a while (or give credentials "
				  "a shorter time to live)", MM_CREDS_MAX);
	if (reserve(s))
		return mmi_refuse(res, -ENOMEM, "credential: out of memory");
	memmove(&s->creds[at + 1], &s->creds[at],
		(size_t)(s->ncreds - at) * sizeof(*s->creds));
	memcpy(s->creds[at].id, op->cred_id, MM_CRED_ID_BYTES);
	s->creds[at].expire_ms = op->cred_expire_ms;
	s->ncreds++;
	if (op->cred_expire_ms < s->creds_min_exp)
		s->creds_min_exp = op->cred_expire_ms;
	return 0;
}

void mmi_creds_prune(mm_state_t *s)
{
	uint32_t k = 0;
	uint64_t min = UINT64_MAX;

	if (!s->ncreds || s->creds_min_exp > UINT64_MAX - MM_CRED_SKEW_MS -
					     SWEEP_LAG_MS ||
	    s->now_ms < s->creds_min_exp + MM_CRED_SKEW_MS + SWEEP_LAG_MS)
		return;
	for (uint32_t i = 0; i < s->ncreds; i++) {
		const struct mmi_cred *c = &s->creds[i];

		if (c->expire_ms + MM_CRED_SKEW_MS <= s->now_ms)
			continue; /* cannot be taken again: it has expired */
		if (c->expire_ms < min)
			min = c->expire_ms;
		s->creds[k++] = *c;
	}
	s->ncreds = k;
	s->creds_min_exp = min;
}

int mmi_creds_append(mm_state_t *s, const uint8_t *id, uint64_t expire_ms)
{
	if (s->ncreds >= MM_CREDS_MAX || reserve(s))
		return -ENOMEM;
	memcpy(s->creds[s->ncreds].id, id, MM_CRED_ID_BYTES);
	s->creds[s->ncreds].expire_ms = expire_ms;
	s->ncreds++;
	if (expire_ms < s->creds_min_exp)
		s->creds_min_exp = expire_ms;
	return 0;
}

uint32_t mm_creds_count(const mm_state_t *s)
{
	return s ? s->ncreds : 0;
}
