/*
 * wire.c — the replication group's message framing: "SR", a version, a
 * type, then fields one by one, little-endian, through bounds-checked
 * helpers.  A reader that runs past the end sets bad and reads zeros, so a
 * decoder checks once at the end; a message of another version or a
 * truncated one is refused whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rp_internal.h"

static int grow(struct rp_buf *b, size_t n)
{
	if (b->bad)
		return -1;
	if (b->len + n <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->bad = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void rpw_bytes(struct rp_buf *b, const void *p, size_t n)
{
	if (n == 0 || grow(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void rpw_u8(struct rp_buf *b, uint8_t v)
{
	rpw_bytes(b, &v, 1);
}

void rpw_u32(struct rp_buf *b, uint32_t v)
{
	uint8_t x[4];

	for (int i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	rpw_bytes(b, x, 4);
}

void rpw_u64(struct rp_buf *b, uint64_t v)
{
	rpw_u32(b, (uint32_t)v);
	rpw_u32(b, (uint32_t)(v >> 32));
}

const uint8_t *rpr_bytes(struct rp_buf *b, size_t n)
{
	if (b->bad || n > b->cap - b->len) {
		b->bad = 1;
		return NULL;
	}
	const uint8_t *p = b->p + b->len;
	b->len += n;
	return p;
}

uint8_t rpr_u8(struct rp_buf *b)
{
	const uint8_t *p = rpr_bytes(b, 1);
	return p ? p[0] : 0;
}

uint32_t rpr_u32(struct rp_buf *b)
{
	const uint8_t *p = rpr_bytes(b, 4);
	uint32_t v = 0;

	if (p)
		for (int i = 0; i < 4; i++)
			v |= (uint32_t)p[i] << (8 * i);
	return v;
}

uint64_t rpr_u64(struct rp_buf *b)
{
	uint64_t lo = rpr_u32(b);
	return lo | (uint64_t)rpr_u32(b) << 32;
}

int rpw_begin(struct rp_buf *b, int type, size_t hint)
{
	memset(b, 0, sizeof(*b));
	if (grow(b, hint + 4))
		return -ENOMEM;
	rpw_u8(b, 'S');
	rpw_u8(b, 'R');
	rpw_u8(b, RP_WIRE_VERSION);
	rpw_u8(b, (uint8_t)type);
	return 0;
}

int rpr_begin(struct rp_buf *b, const void *msg, size_t len)
{
	b->p = (uint8_t *)(uintptr_t)msg;
	b->len = 0;
	b->cap = len;
	b->bad = 0;
	if (rpr_u8(b) != 'S' || rpr_u8(b) != 'R' ||
	    rpr_u8(b) != RP_WIRE_VERSION)
		return -STORM_EPROTO;
	int t = rpr_u8(b);
	return b->bad ? -STORM_EPROTO : t;
}

int rp_op_encode(const struct rp_op *o, struct rp_buf *b)
{
	int rc = rpw_begin(b, RP_MSG_OP, 48 + o->len);

	if (rc)
		return rc;
	rpw_u32(b, o->nodeid);
	rpw_u32(b, o->pid);
	rpw_u64(b, o->token);
	rpw_u32(b, o->origin);
	rpw_u64(b, o->client);
	rpw_u64(b, o->seq);
	rpw_u32(b, o->uid);
	rpw_u32(b, o->gid);
	rpw_u32(b, o->len);
	rpw_bytes(b, o->op, o->len);
	if (b->bad) {
		free(b->p);
		b->p = NULL;
		return -ENOMEM;
	}
	return 0;
}

int rp_op_decode(const void *msg, size_t len, struct rp_op *o)
{
	struct rp_buf b;

	if (rpr_begin(&b, msg, len) != RP_MSG_OP)
		return -STORM_EPROTO;
	o->nodeid = rpr_u32(&b);
	o->pid = rpr_u32(&b);
	o->token = rpr_u64(&b);
	o->origin = rpr_u32(&b);
	o->client = rpr_u64(&b);
	o->seq = rpr_u64(&b);
	o->uid = rpr_u32(&b);
	o->gid = rpr_u32(&b);
	o->len = rpr_u32(&b);
	if (o->len > RP_OP_MAX)
		return -STORM_EPROTO;
	o->op = rpr_bytes(&b, o->len);
	if (b.bad || b.len != len)
		return -STORM_EPROTO;
	return 0;
}
