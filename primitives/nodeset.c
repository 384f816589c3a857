/*
 * nodeset.c — sets of node ids as bitmaps, and their range-list text form
 * ("0-7,9"), which is what configs and stormctl show to people.
 * Invariant: bits at or beyond capacity are always zero, so counts and
 * comparisons can work on whole words.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_nodeset.h"

int sp_nodeset_create(uint32_t capacity, sp_nodeset_t **out)
{
	sp_nodeset_t *s;

	if (!out || capacity == 0 || capacity > 65536)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->capacity = capacity;
	s->nwords = sp_nodeset_words(capacity);
	s->words = calloc(s->nwords, sizeof(uint64_t));
	if (!s->words) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void sp_nodeset_destroy(sp_nodeset_t *s)
{
	if (!s)
		return;
	free(s->words);
	free(s);
}

int sp_nodeset_add(sp_nodeset_t *s, uint32_t id)
{
	if (id >= s->capacity)
		return -ERANGE;
	s->words[id / 64] |= UINT64_C(1) << (id % 64);
	return 0;
}

int sp_nodeset_add_range(sp_nodeset_t *s, uint32_t first, uint32_t last)
{
	if (first > last || last >= s->capacity)
		return -ERANGE;
	for (uint32_t i = first; i <= last; i++)
		s->words[i / 64] |= UINT64_C(1) << (i % 64);
	return 0;
}

int sp_nodeset_del(sp_nodeset_t *s, uint32_t id)
{
	if (id >= s->capacity)
		return -ERANGE;
	s->words[id / 64] &= ~(UINT64_C(1) << (id % 64));
	return 0;
}

void sp_nodeset_clear(sp_nodeset_t *s)
{
	memset(s->words, 0, s->nwords * sizeof(uint64_t));
}

int sp_nodeset_has(const sp_nodeset_t *s, uint32_t id)
{
	if (id >= s->capacity)
		return 0;
	return (s->words[id / 64] >> (id % 64)) & 1;
}

uint32_t sp_nodeset_count(const sp_nodeset_t *s)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nwords; i++)
		n += (uint32_t)__builtin_popcountll(s->words[i]);
	return n;
}

uint32_t sp_nodeset_capacity(const sp_nodeset_t *s)
{
	return s->capacity;
}

int64_t sp_nodeset_next(const sp_nodeset_t *s, uint32_t from)
{
	uint32_t w;
	uint64_t bits;

	if (from >= s->capacity)
		return -1;
	w = from / 64;
	bits = s->words[w] & (~UINT64_C(0) << (from % 64));
	for (;;) {
		if (bits)
			return (int64_t)w * 64 + __builtin_ctzll(bits);
		if (++w >= s->nwords)
			return -1;
		bits = s->words[w];
	}
}

int sp_nodeset_copy(sp_nodeset_t *dst, const sp_nodeset_t *src)
{
	if (!dst || !src || dst->capacity != src->capacity)
		return -EINVAL;
	memcpy(dst->words, src->words, src->nwords * sizeof(uint64_t));
	return 0;
}

/* Reads one decimal id at *p.  An id too large for 32 bits is -ERANGE (it
 * is an id beyond any machine, not a syntax error); *p is left at the first
 * digit then, so the caller can point at it. */
static int parse_id(const char **p, uint32_t *id)
{
	unsigned long v = 0;
	const char *q = *p;

	if (*q < '0' || *q > '9')
		return -EINVAL;
	while (*q >= '0' && *q <= '9') {
		v = v * 10 + (unsigned long)(*q - '0');
		if (v > 0xffffffffUL)
			return -ERANGE;
		q++;
	}
	*p = q;
	*id = (uint32_t)v;
	return 0;
}

int sp_nodeset_parse(sp_nodeset_t *s, const char *text, char *err,
		     size_t errlen)
{
	const char *p = text;
	uint64_t *saved;
	int rc = 0;

	if (!s || !text)
		return -EINVAL;
	/* Parse into a copy so a bad string leaves the set untouched. */
	saved = malloc(s->nwords * sizeof(uint64_t));
	if (!saved)
		return -ENOMEM;
	memcpy(saved, s->words, s->nwords * sizeof(uint64_t));
	sp_nodeset_clear(s);
	while (*p) {
		uint32_t a, b;

		rc = parse_id(&p, &a);
		if (rc)
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			rc = parse_id(&p, &b);
			if (rc)
				goto bad;
		}
		if (a > b) {
			/* names no id beyond capacity: malformed, not a range
			 * error */
			rc = -EINVAL;
			if (err)
				snprintf(err, errlen,
					 "node set \"%s\": range %u-%u is reversed; write it low-high (%u-%u)",
					 text, a, b, b, a);
			goto restore;
		}
		if (b >= s->capacity) {
			rc = -ERANGE;
			if (err)
				snprintf(err, errlen,
					 "node set \"%s\": node %u is beyond the %u nodes of this machine (ids 0-%u)",
					 text, b, s->capacity, s->capacity - 1);
			goto restore;
		}
		sp_nodeset_add_range(s, a, b);
		if (*p == ',') {
			p++;
			if (!*p)
				goto bad;
		} else if (*p) {
			rc = -EINVAL;
			goto bad;
		}
	}
	free(saved);
	return 0;
bad:
	if (rc == -ERANGE) {
		if (err)
			snprintf(err, errlen,
				 "node set \"%s\": the id at position %zu does not fit 32 bits; this machine has %u nodes",
				 text, (size_t)(p - text), s->capacity);
		goto restore;
	}
	if (err)
		snprintf(err, errlen,
			 "node set \"%s\": unexpected character at position %zu; expected a list like 0-7,9",
			 text, (size_t)(p - text));
	rc = -EINVAL;
restore:
	memcpy(s->words, saved, s->nwords * sizeof(uint64_t));
	free(saved);
	return rc;
}

int sp_nodeset_format(const sp_nodeset_t *s, char *buf, size_t len)
{
	size_t need = 0;
	int64_t i = sp_nodeset_next(s, 0);

	if (len)
		buf[0] = '\0';
	while (i >= 0) {
		int64_t j = i;
		char tmp[32];
		int n;

		while (j + 1 < s->capacity && sp_nodeset_has(s, (uint32_t)j + 1))
			j++;
		if (j > i)
			n = snprintf(tmp, sizeof(tmp), "%s%lld-%lld",
				     need ? "," : "", (long long)i, (long long)j);
		else
			n = snprintf(tmp, sizeof(tmp), "%s%lld", need ? "," : "",
				     (long long)i);
		if (need + (size_t)n < len)
			memcpy(buf + need, tmp, (size_t)n + 1);
		need += (size_t)n;
		i = j + 1 < s->capacity ? sp_nodeset_next(s, (uint32_t)j + 1) : -1;
	}
	return (int)need;
}
