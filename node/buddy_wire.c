/*
 * buddy_wire.c — the bytes of L2 transfers (buddy.h): a box's header
 * and a request line, encoded by the sender and checked whole by the
 * receiver before it acts on one (fuzzed: tests/fuzz/fuzz_buddy.c).
 *
 * Box (little-endian, NM_BUDDY_HDR bytes, then len bytes of the file):
 *   0 magic "SBD1"  4 flags  8 seq  16 job  20 epoch  24 base  28 uid
 *  32 gid  36 len  40 off  48 total  56 want_seq  64 name[32] (NUL-ended)
 * Request line (NM_BUDDY_WANT_LINE bytes):
 *   0 seq  8 job  12 epoch  16 rank  20 0  24 name[32] ("" or a name)
 */
#include <errno.h>
#include <string.h>

#include "buddy.h"

#define MAGIC 0x31444253u /* "SBD1" */
#define TOTAL_MAX (64ull << 30)

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

int nm_buddy_name_ok(const char *s)
{
	size_t n = strnlen(s, NM_BUDDY_NAME_MAX);

	if (n == 0 || n >= NM_BUDDY_NAME_MAX || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

void nm_buddy_box_encode(uint8_t *p, const struct nm_buddy_box *x)
{
	put32(p, MAGIC);
	put32(p + 4, x->flags);
	put64(p + 8, x->seq);
	put32(p + 16, x->job);
	put32(p + 20, x->epoch);
	put32(p + 24, x->base);
	put32(p + 28, x->uid);
	put32(p + 32, x->gid);
	put32(p + 36, x->len);
	put64(p + 40, x->off);
	put64(p + 48, x->total);
	put64(p + 56, x->want_seq);
	memset(p + 64, 0, NM_BUDDY_NAME_MAX);
	memcpy(p + 64, x->name, strnlen(x->name, NM_BUDDY_NAME_MAX - 1));
}

/* A name field: a name, NUL-ended, zeros after it (one spelling). */
static int name_field_ok(const char *f, int empty_ok)
{
	size_t k = strnlen(f, NM_BUDDY_NAME_MAX);

	if (k == NM_BUDDY_NAME_MAX || (k ? !nm_buddy_name_ok(f) : !empty_ok))
		return 0;
	for (size_t i = k; i < NM_BUDDY_NAME_MAX; i++)
		if (f[i])
			return 0;
	return 1;
}

int nm_buddy_box_decode(const uint8_t *p, size_t n, struct nm_buddy_box *x)
{
	if (n < NM_BUDDY_HDR || get32(p) != MAGIC)
		return -EPROTO;
	x->flags = get32(p + 4);
	x->seq = get64(p + 8);
	x->job = get32(p + 16);
	x->epoch = get32(p + 20);
	x->base = get32(p + 24);
	x->uid = get32(p + 28);
	x->gid = get32(p + 32);
	x->len = get32(p + 36);
	x->off = get64(p + 40);
	x->total = get64(p + 48);
	x->want_seq = get64(p + 56);
	memcpy(x->name, p + 64, NM_BUDDY_NAME_MAX);
	x->data = p + NM_BUDDY_HDR;
	if (!name_field_ok(x->name, 0) ||
	    x->len > n - NM_BUDDY_HDR || x->total > TOTAL_MAX ||
	    x->off > x->total || x->len > x->total - x->off ||
	    !x->job || !x->epoch)
		return -EPROTO;
	return 0;
}

void nm_buddy_want_encode(uint8_t *p, uint64_t seq, uint32_t job,
			  uint32_t epoch, uint32_t rank, const char *name)
{
	memset(p, 0, NM_BUDDY_WANT_LINE);
	put64(p, seq);
	put32(p + 8, job);
	put32(p + 12, epoch);
	put32(p + 16, rank);
	if (name)
		memcpy(p + 24, name, strnlen(name, NM_BUDDY_NAME_MAX - 1));
}

int nm_buddy_want_decode(const uint8_t *p, uint64_t *seq, uint32_t *job,
			 uint32_t *epoch, uint32_t *rank,
			 char name[NM_BUDDY_NAME_MAX])
{
	*seq = get64(p);
	*job = get32(p + 8);
	*epoch = get32(p + 12);
	*rank = get32(p + 16);
	memcpy(name, p + 24, NM_BUDDY_NAME_MAX);
	if (!name_field_ok(name, 1) ||
	    !*job || !*epoch || (*rank == UINT32_MAX && !name[0]))
		return -EPROTO;
	return 0;
}
