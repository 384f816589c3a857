/*
 * sp_wire.h — bounds-checked encoding of protocol messages (private).
 * Every message starts with the same header (magic, version, type, sender,
 * epoch); fields follow one by one in little-endian order.  A decoder never
 * casts a struct over received bytes: it reads through sp_rbuf, whose
 * failure flag turns any short or oversized message into one -STORM_EPROTO.
 */
#ifndef SP_WIRE_H
#define SP_WIRE_H

#include <stdint.h>
#include <string.h>

#define SP_WIRE_MAGIC 0x5354 /* "ST" */
#define SP_WIRE_VERSION 1
#define SP_HDR_LEN 16 /* magic u16, version u8, type u8, src u32, epoch u64 */
/* An authenticated machine's messages (sp_config_set_auth_key): version
 * 2, the header followed by u32 the fields' length and a MAC of
 * SP_MAC_LEN bytes (engine.c msg_mac: SipHash-2-4 over the header, that
 * length, and SipHashes of the fields and of the payload); then the
 * fields and the payload as in version 1.  Either kind of node drops the
 * other's messages whole. */
#define SP_WIRE_VERSION_AUTH 2
#define SP_MAC_LEN 16

/* Message types.  Append only: a number is never reused or renumbered. */
enum sp_msg_type {
	SP_MSG_HELLO = 1,   /* boot: node -> root */
	SP_MSG_VIEW,        /* root -> down: a new view */
	SP_MSG_VIEW_ACK,    /* up: subtree installed the view (+ facts) */
	SP_MSG_STABLE,      /* root -> down: view stable (+ resolution) */
	SP_MSG_SUSPECT,     /* any -> root: a node has failed */
	SP_MSG_JOIN,        /* joiner -> root */
	SP_MSG_HB,          /* tree neighbours: liveness */
	SP_MSG_XDATA,       /* xfer: one chunk, down */
	SP_MSG_XSTAGED,     /* xfer: subtree staged, up */
	SP_MSG_XDECIDE,     /* xfer: commit or abort, down */
	SP_MSG_XDONE,       /* xfer: subtree committed, up */
	SP_MSG_CAW_REQ,     /* caw: initiator -> sequencer */
	SP_MSG_CAW_QUERY,   /* caw: evaluate, down */
	SP_MSG_CAW_VOTE,    /* caw: combined result, up */
	SP_MSG_CAW_WRITE,   /* caw: apply the write, down */
	SP_MSG_CAW_WACK,    /* caw: write applied, up */
	SP_MSG_CAW_RESULT,  /* caw: sequencer -> initiator */
	SP_MSG_XRMA,        /* xfer: read the whole transfer from my arena, down */
	SP_MSG_XPUT,        /* xfer: one destination, whole, committed at once */
	SP_MSG_XPOST,       /* xfer: an XPUT answered by nothing (posted) */
	SP_MSG_MAX
};

struct sp_wbuf {
	uint8_t *p;
	size_t len, cap;
	int overflow;
};

struct sp_rbuf {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static inline void sp_w_bytes(struct sp_wbuf *w, const void *v, size_t n)
{
	if (w->len + n > w->cap) {
		w->overflow = 1;
		return;
	}
	memcpy(w->p + w->len, v, n);
	w->len += n;
}

static inline void sp_w_u8(struct sp_wbuf *w, uint8_t v)
{
	sp_w_bytes(w, &v, 1);
}

static inline void sp_w_u16(struct sp_wbuf *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	sp_w_bytes(w, b, 2);
}

static inline void sp_w_u32(struct sp_wbuf *w, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	sp_w_bytes(w, b, 4);
}

static inline void sp_w_u64(struct sp_wbuf *w, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	sp_w_bytes(w, b, 8);
}

static inline void sp_r_bytes(struct sp_rbuf *r, void *v, size_t n)
{
	if (r->bad || r->off + n > r->len) {
		r->bad = 1;
		memset(v, 0, n);
		return;
	}
	memcpy(v, r->p + r->off, n);
	r->off += n;
}

static inline const uint8_t *sp_r_ptr(struct sp_rbuf *r, size_t n)
{
	const uint8_t *q;

	if (r->bad || r->off + n > r->len) {
		r->bad = 1;
		return NULL;
	}
	q = r->p + r->off;
	r->off += n;
	return q;
}

static inline uint8_t sp_r_u8(struct sp_rbuf *r)
{
	uint8_t v;

	sp_r_bytes(r, &v, 1);
	return v;
}

static inline uint16_t sp_r_u16(struct sp_rbuf *r)
{
	uint8_t b[2];

	sp_r_bytes(r, b, 2);
	return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t sp_r_u32(struct sp_rbuf *r)
{
	uint8_t b[4];
	uint32_t v = 0;

	sp_r_bytes(r, b, 4);
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)b[i] << (8 * i);
	return v;
}

static inline uint64_t sp_r_u64(struct sp_rbuf *r)
{
	uint8_t b[8];
	uint64_t v = 0;

	sp_r_bytes(r, b, 8);
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

#endif /* SP_WIRE_H */
