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
	st_put32(p, MAGIC);
	st_put32(p + 4, x->flags);
	st_put64(p + 8, x->seq);
	st_put32(p + 16, x->job);
	st_put32(p + 20, x->epoch);
	st_put32(p + 24, x->base);
	st_put32(p + 28, x->uid);
	st_put32(p + 32, x->gid);
	st_put32(p + 36, x->len);
	st_put64(p + 40, x->off);
	st_put64(p + 48, x->total);
	st_put64(p + 56, x->want_seq);
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
	if (n < NM_BUDDY_HDR || st_get32(p) != MAGIC)
		return -EPROTO;
	x->flags = st_get32(p + 4);
	x->seq = st_get64(p + 8);
	x->job = st_get32(p + 16);
	x->epoch = st_get32(p + 20);
	x->base = st_get32(p + 24);
	x->uid = st_get32(p + 28);
	x->gid = st_get32(p + 32);
	x->len = st_get32(p + 36);
	x->off = st_get64(p + 40);
	x->total = st_get64(p + 48);
	x->want_seq = st_get64(p + 56);
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
	st_put64(p, seq);
	st_put32(p + 8, job);
	st_put32(p + 12, epoch);
	st_put32(p + 16, rank);
	if (name)
		memcpy(p + 24, name, strnlen(name, NM_BUDDY_NAME_MAX - 1));
}

int nm_buddy_want_decode(const uint8_t *p, uint64_t *seq, uint32_t *job,
			 uint32_t *epoch, uint32_t *rank,
			 char name[NM_BUDDY_NAME_MAX])
{
	*seq = st_get64(p);
	*job = st_get32(p + 8);
	*epoch = st_get32(p + 12);
	*rank = st_get32(p + 16);
	memcpy(name, p + 24, NM_BUDDY_NAME_MAX);
	if (!name_field_ok(name, 1) ||
	    !*job || !*epoch || (*rank == UINT32_MAX && !name[0]))
		return -EPROTO;
	return 0;
}
