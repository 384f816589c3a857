/*
 * sessions.c — the session table that makes client retries exactly-once:
 * per client id, the last sequence applied and the reply it got.  Part of
 * the replicated state (every replica updates it in agreed order, it is
 * in every snapshot), so a retry reaching any replica after a failover is
 * answered, not applied again.  A chained hash table keyed by the 64-bit
 * client id (libqb's qbmap wants string keys; this is 80 lines).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rp_internal.h"

static uint32_t slot(const struct rp_sessions *t, uint64_t client)
{
	uint64_t h = client * UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(h >> 32) & (t->nb - 1);
}

int rp_sessions_init(struct rp_sessions *t)
{
	t->nb = 1024;
	t->n = 0;
	t->b = calloc(t->nb, sizeof(*t->b));
	return t->b ? 0 : -ENOMEM;
}

void rp_sessions_free(struct rp_sessions *t)
{
	for (uint32_t i = 0; t->b && i < t->nb; i++)
		while (t->b[i]) {
			struct rp_session *s = t->b[i];
			t->b[i] = s->next;
			free(s);
		}
	free(t->b);
	t->b = NULL;
	t->n = 0;
}

struct rp_session *rp_session_get(struct rp_sessions *t, uint64_t client)
{
	for (struct rp_session *s = t->b[slot(t, client)]; s; s = s->next)
		if (s->client == client)
			return s;
	return NULL;
}

static void rehash(struct rp_sessions *t)
{
	uint32_t onb = t->nb;
	struct rp_session **ob = t->b, **nbk = calloc(onb * 2, sizeof(*nbk));

	if (!nbk)
		return; /* keep the long chains; still correct */
	t->b = nbk;
	t->nb = onb * 2;
	for (uint32_t i = 0; i < onb; i++)
		while (ob[i]) {
			struct rp_session *s = ob[i];
			ob[i] = s->next;
			uint32_t k = slot(t, s->client);
			s->next = t->b[k];
			t->b[k] = s;
		}
	free(ob);
}

int rp_session_put(struct rp_sessions *t, uint64_t client, uint64_t seq,
		   uint64_t index, const uint8_t *reply, size_t rlen)
{
	struct rp_session **pp = &t->b[slot(t, client)], *s;

	if (rlen > RP_REPLY_MAX)
		rlen = RP_REPLY_MAX;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->client == client)
			break;
	s = realloc(*pp, sizeof(*s) + rlen);
	if (!s)
		return -ENOMEM;
	if (!*pp) {
		s->next = NULL;
		t->n++;
	}
	*pp = s;
	s->client = client;
	s->seq = seq;
	s->index = index;
	s->rlen = (uint32_t)rlen;
	if (rlen)
		memcpy(s->reply, reply, rlen);
	if (t->n > t->nb * 2)
		rehash(t);
	return 0;
}

void rp_sessions_expire(struct rp_sessions *t, uint64_t before)
{
	for (uint32_t i = 0; i < t->nb; i++)
		for (struct rp_session **pp = &t->b[i]; *pp;) {
			if ((*pp)->index < before) {
				struct rp_session *s = *pp;
				*pp = s->next;
				free(s);
				t->n--;
			} else {
				pp = &(*pp)->next;
			}
		}
}

/* Canonical order is not needed for correctness (a restore rebuilds the
 * table), only a count and the entries. */
int rp_sessions_encode(const struct rp_sessions *t, struct rp_buf *b)
{
	rpw_u32(b, t->n);
	for (uint32_t i = 0; i < t->nb; i++)
		for (struct rp_session *s = t->b[i]; s; s = s->next) {
			rpw_u64(b, s->client);
			rpw_u64(b, s->seq);
			rpw_u64(b, s->index);
			rpw_u32(b, s->rlen);
			rpw_bytes(b, s->reply, s->rlen);
		}
	return b->bad ? -ENOMEM : 0;
}

int rp_sessions_decode(struct rp_sessions *t, struct rp_buf *b)
{
	uint32_t n = rpr_u32(b);

	for (uint32_t i = 0; i < n && !b->bad; i++) {
		uint64_t client = rpr_u64(b), seq = rpr_u64(b);
		uint64_t index = rpr_u64(b);
		uint32_t rlen = rpr_u32(b);
		const uint8_t *r;

		if (rlen > RP_REPLY_MAX)
			return -STORM_EPROTO;
		r = rpr_bytes(b, rlen);
		if (b->bad)
			break;
		if (rp_session_put(t, client, seq, index, r, rlen))
			return -ENOMEM;
	}
	return b->bad ? -STORM_EPROTO : 0;
}
