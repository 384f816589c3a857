/*
 * bcs_wire.c — a BCS-MPI round's section, encoded and checked
 * (bcs_wire.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bcs_wire.h"

#define ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

static size_t fixed_size(enum bcs_w_type type)
{
	switch (type) {
	case BCS_W_STATE:
		return sizeof(struct bcs_w_state);
	case BCS_W_DESC:
		return sizeof(struct bcs_w_desc);
	case BCS_W_DATA:
		return sizeof(struct bcs_w_data);
	case BCS_W_COLL:
		return sizeof(struct bcs_w_coll);
	case BCS_W_CUT:
		return sizeof(struct bcs_w_cut);
	}
	return 0;
}

size_t bcs_wire_size(enum bcs_w_type type, size_t nbytes)
{
	return sizeof(struct bcs_item) + fixed_size(type) + ALIGN8(nbytes);
}

int bcs_wire_put(uint8_t *buf, size_t cap, size_t *len, enum bcs_w_type type,
		 const void *fixed, const void *bytes, size_t nbytes)
{
	size_t fs = fixed_size(type), need = bcs_wire_size(type, nbytes);
	struct bcs_item h = { .type = (uint16_t)type,
			      .len = (uint32_t)nbytes };

	if (!fs || nbytes > UINT32_MAX || *len > cap || need > cap - *len)
		return -ENOSPC;
	memcpy(buf + *len, &h, sizeof(h));
	memcpy(buf + *len + sizeof(h), fixed, fs);
	if (nbytes && bytes)
		memcpy(buf + *len + sizeof(h) + fs, bytes, nbytes);
	memset(buf + *len + sizeof(h) + fs + nbytes, 0,
	       ALIGN8(nbytes) - nbytes);
	*len += need;
	return 0;
}

int bcs_wire_next(const uint8_t *sec, size_t len, size_t *off,
		  struct bcs_witem *it, char *why, size_t whylen)
{
	struct bcs_item h;
	size_t fs, at = *off;

	if (at >= len)
		return 0;
	if (len - at < sizeof(h)) {
		snprintf(why, whylen, "%zu stray bytes at offset %zu",
			 len - at, at);
		return -EINVAL;
	}
	memcpy(&h, sec + at, sizeof(h));
	fs = fixed_size((enum bcs_w_type)h.type);
	if (!fs) {
		snprintf(why, whylen, "an item of type %u at offset %zu",
			 h.type, at);
		return -EINVAL;
	}
	at += sizeof(h);
	if (len - at < fs || len - at - fs < ALIGN8((size_t)h.len)) {
		snprintf(why, whylen, "an item of type %u and %u bytes at "
			 "offset %zu past the section's %zu", h.type, h.len,
			 *off, len);
		return -EINVAL;
	}
	memset(it, 0, sizeof(*it));
	it->type = (enum bcs_w_type)h.type;
	memcpy(&it->u, sec + at, fs);
	it->bytes = sec + at + fs;
	it->nbytes = h.len;
	*off = at + fs + ALIGN8((size_t)h.len);
	return 1;
}
