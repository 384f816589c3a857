/*
 * bcs_ring.c — descriptors out of a rank's post ring, checked
 * (bcs_ring.h).  Key invariant: nothing is read from the shared area
 * twice — the head once, each slot once, into memory the rank cannot
 * touch — and nothing copied is used before bcs_desc_check passed it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bcs_ring.h"

int bcs_ring_take(const struct bcs_area *area, uint64_t tail,
		  struct bcs_desc *out, uint32_t max, uint32_t *n, char *why,
		  size_t whylen)
{
	uint64_t head = __atomic_load_n(&area->post_head, __ATOMIC_ACQUIRE);
	uint64_t k;

	*n = 0;
	if (head < tail || head - tail > BCS_RING_SLOTS) {
		snprintf(why, whylen, "post ring indexes out of bounds (head "
			 "%llu, tail %llu, %u slots)",
			 (unsigned long long)head, (unsigned long long)tail,
			 BCS_RING_SLOTS);
		return -EPROTO;
	}
	for (k = tail; k < head && *n < max; k++)
		memcpy(&out[(*n)++], &area->post[k % BCS_RING_SLOTS],
		       sizeof(*out));
	return 0;
}

static int bad(char *why, size_t whylen, const char *what,
	       unsigned long long v)
{
	snprintf(why, whylen, "descriptor: %s %llu", what, v);
	return -EINVAL;
}

int bcs_desc_check(const struct bcs_desc *d, uint32_t size, char *why,
		   size_t whylen)
{
	if (d->bytes > BCS_BYTES_MAX)
		return bad(why, whylen, "bytes", d->bytes);
	switch (d->kind) {
	case BCS_D_SEND:
		if (d->peer < 0 || (uint32_t)d->peer >= size)
			return bad(why, whylen, "destination rank",
				   (unsigned long long)(uint32_t)d->peer);
		if (d->tag < 0)
			return bad(why, whylen, "send tag",
				   (unsigned long long)(uint32_t)d->tag);
		if (d->flags & ~(BCS_F_EAGER | BCS_F_SYNC))
			return bad(why, whylen, "flags", d->flags);
		if ((d->flags & BCS_F_EAGER) && d->bytes > BCS_EAGER_MAX)
			return bad(why, whylen, "eager bytes", d->bytes);
		return 0;
	case BCS_D_RECV:
	case BCS_D_PROBE:
		if (d->peer != BCS_ANY &&
		    (d->peer < 0 || (uint32_t)d->peer >= size))
			return bad(why, whylen, "source rank",
				   (unsigned long long)(uint32_t)d->peer);
		if (d->tag != BCS_ANY && d->tag < 0)
			return bad(why, whylen, "receive tag",
				   (unsigned long long)(uint32_t)d->tag);
		if (d->flags)
			return bad(why, whylen, "flags", d->flags);
		return 0;
	case BCS_D_COLL:
		if (d->coll < BCS_C_BARRIER || d->coll > BCS_C_ALLREDUCE)
			return bad(why, whylen, "collective", d->coll);
		if ((d->coll == BCS_C_BCAST || d->coll == BCS_C_REDUCE) &&
		    (d->peer < 0 || (uint32_t)d->peer >= size))
			return bad(why, whylen, "root",
				   (unsigned long long)(uint32_t)d->peer);
		if ((d->coll == BCS_C_REDUCE || d->coll == BCS_C_ALLREDUCE) &&
		    (!bcs_op_valid((enum bcs_op)d->op, (enum bcs_type)d->type)))
			return bad(why, whylen, "reduction op or type",
				   (unsigned long long)d->op << 32 | d->type);
		return 0;
	case BCS_D_COMM:
		if (d->bytes % 4 || d->bytes / 4 == 0 ||
		    d->bytes / 4 > size)
			return bad(why, whylen, "communicator size",
				   d->bytes / 4);
		if ((d->flags & ~BCS_F_EAGER) ||
		    ((d->flags & BCS_F_EAGER) && d->bytes > BCS_EAGER_MAX))
			return bad(why, whylen, "communicator flags", d->flags);
		return 0;
	case BCS_D_FINALIZE:
		return 0;
	case BCS_D_PULLED:
		if (d->bytes || (d->flags & ~BCS_F_PULL_FAILED))
			return bad(why, whylen, "pulled flags", d->flags);
		return 0;
	case BCS_D_COMM_FREE:
		if (d->flags || d->bytes || d->ctx == BCS_CTX_WORLD)
			return bad(why, whylen, "communicator free", d->ctx);
		return 0;
	case BCS_D_CANCEL:
		if (d->flags || d->bytes)
			return bad(why, whylen, "cancel", d->flags);
		return 0;
	case BCS_D_ABORT:
		if (d->bytes > BCS_REASON_MAX)
			return bad(why, whylen, "abort message bytes",
				   d->bytes);
		return 0;
	default:
		return bad(why, whylen, "kind", d->kind);
	}
}
