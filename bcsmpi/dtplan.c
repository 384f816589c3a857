/*
 * dtplan.c — datatype plans (dtplan.h): building them with overflow
 * checks, simplifying a leaf's loops, and walking them to copy data.
 */
#include <stdlib.h>
#include <string.h>

#include "dtplan.h"

static int mul(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
	return __builtin_mul_overflow(a, b, r);
}

static int add(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
	return __builtin_add_overflow(a, b, r);
}

struct dt_plan *dt_plan_ref(struct dt_plan *p)
{
	if (p)
		p->refs++;
	return p;
}

void dt_plan_unref(struct dt_plan *p)
{
	if (!p || --p->refs)
		return;
	for (uint32_t i = 0; i < p->nparts; i++)
		dt_plan_unref(p->part[i]);
	free(p->part);
	free(p->loop);
	free(p);
}

struct dt_plan *dt_plan_leaf(MPI_Datatype basic, size_t basic_size,
			     size_t size)
{
	struct dt_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->refs = 1;
	p->run = p->size = size;
	p->basic = basic;
	p->basic_size = basic_size;
	p->hi = (MPI_Aint)size;
	return p;
}

static void drop_loop(struct dt_plan *p, int k)
{
	memmove(&p->loop[k], &p->loop[k + 1],
		(size_t)(p->depth - k - 1) * sizeof(p->loop[0]));
	p->depth--;
}

/* The simplifications of dtplan.h until none applies (a sequence's
 * loops have no run to join). */
static void simplify(struct dt_plan *p)
{
	int changed = 1;

	while (changed) {
		changed = 0;
		for (int k = p->depth - 1; k >= 0; k--)
			if (p->loop[k].count == 1) {
				drop_loop(p, k);
				changed = 1;
			}
		while (p->run && p->depth &&
		       p->loop[p->depth - 1].stride == (MPI_Aint)p->run) {
			p->run *= (size_t)p->loop[p->depth - 1].count;
			p->depth--;
			changed = 1;
		}
		for (int k = p->depth - 2; k >= 0; k--) {
			struct dt_loop *o = &p->loop[k], *in = &p->loop[k + 1];
			MPI_Aint step;

			if (!mul(in->count, in->stride, &step) &&
			    o->stride == step) {
				in->count *= o->count;
				drop_loop(p, k);
				changed = 1;
			}
		}
	}
}

struct dt_plan *dt_plan_loop(struct dt_plan *in, MPI_Aint count,
			     MPI_Aint stride, MPI_Aint disp, int *err)
{
	MPI_Aint reach, size, lo, hi;
	struct dt_plan *p;

	*err = MPI_ERR_ARG;
	if (count < 1 || mul(count, (MPI_Aint)in->size, &size) ||
	    mul(count - 1, stride, &reach) ||
	    add(disp, in->lo, &lo) || add(lo, reach < 0 ? reach : 0, &lo) ||
	    add(disp, in->hi, &hi) || add(hi, reach > 0 ? reach : 0, &hi))
		return NULL;
	/* a leaf is always copied: a predefined type's leaf lives in a
	 * caller's stack (datatype.c, its view) */
	if (count == 1 && disp == 0 && !in->run)
		return dt_plan_ref(in);
	*err = MPI_ERR_NO_MEM;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->refs = 1;
	p->basic = in->basic;
	p->size = (size_t)size;
	p->lo = lo;
	p->hi = hi;
	p->loop = malloc((size_t)(in->run ? in->depth + 1 : 1) *
			 sizeof(p->loop[0]));
	if (!p->loop)
		goto nomem;
	p->loop[0] = (struct dt_loop){ count, stride };
	p->depth = 1;
	if (in->run) { /* a leaf: one nest of loops, simplified */
		if (in->depth)
			memcpy(&p->loop[1], in->loop,
			       (size_t)in->depth * sizeof(p->loop[0]));
		p->depth += in->depth;
		p->run = in->run;
		p->basic_size = in->basic_size;
		if (add(disp, in->off, &p->off)) {
			dt_plan_unref(p);
			*err = MPI_ERR_ARG;
			return NULL;
		}
	} else {
		if (!(p->part = malloc(sizeof(p->part[0]))))
			goto nomem;
		p->part[0] = dt_plan_ref(in);
		p->nparts = 1;
		p->off = disp;
	}
	simplify(p);
	return p;
nomem:
	dt_plan_unref(p);
	return NULL;
}

/* Whether leaf b goes on where leaf a ends, as the same type. */
static int continues(const struct dt_plan *a, const struct dt_plan *b)
{
	return a->run && b->run && !a->depth && !b->depth &&
	       a->basic == b->basic && a->basic_size == b->basic_size &&
	       a->off + (MPI_Aint)a->run == b->off;
}

struct dt_plan *dt_plan_seq(struct dt_plan **part, uint32_t n, int *err)
{
	struct dt_plan *p = NULL, **out = NULL;
	uint32_t k = 0;

	if (!n) {
		*err = MPI_ERR_ARG;
		return NULL;
	}
	size_t size = 0;

	*err = MPI_ERR_NO_MEM;
	if (!(out = malloc((size_t)n * sizeof(*out))))
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		struct dt_plan *q = part[i];

		part[i] = NULL;
		if (__builtin_add_overflow(size, q->size, &size) ||
		    size > (size_t)INT64_MAX) {
			*err = MPI_ERR_ARG;
			dt_plan_unref(q);
			goto fail;
		}
		if (k && continues(out[k - 1], q)) {
			struct dt_plan *m = dt_plan_leaf(q->basic,
							 q->basic_size,
							 out[k - 1]->run +
							 q->run);

			if (!m) {
				dt_plan_unref(q);
				goto fail;
			}
			m->off = out[k - 1]->off;
			m->lo = m->off;
			m->hi = m->off + (MPI_Aint)m->run;
			dt_plan_unref(out[k - 1]);
			dt_plan_unref(q);
			out[k - 1] = m;
			continue;
		}
		out[k++] = q;
	}
	if (k == 1) {
		p = out[0];
		free(out);
		return p;
	}
	if (!(p = calloc(1, sizeof(*p))))
		goto fail;
	p->refs = 1;
	p->part = out;
	p->nparts = k;
	p->size = size;
	p->basic = out[0]->basic;
	p->lo = out[0]->lo;
	p->hi = out[0]->hi;
	for (uint32_t i = 1; i < k; i++) {
		if (out[i]->basic != p->basic)
			p->basic = MPI_DATATYPE_NULL;
		if (out[i]->lo < p->lo)
			p->lo = out[i]->lo;
		if (out[i]->hi > p->hi)
			p->hi = out[i]->hi;
	}
	return p;
fail:
	for (uint32_t i = 0; i < n; i++)
		dt_plan_unref(part[i]);
	for (uint32_t i = 0; out && i < k; i++)
		dt_plan_unref(out[i]);
	free(out);
	return NULL;
}

/* ---- copying ------------------------------------------------------------ */

/* The usual lengths as constants, so each memcpy is a move or two. */
#define RUNS(dst, src, len)                                                 \
	for (MPI_Aint i = 0; i < n; i++)                                    \
	memcpy(dst, src, len)

void dt_gather(unsigned char *s, const unsigned char *m, MPI_Aint n,
	       MPI_Aint stride, size_t len)
{
	switch (len) {
	case 4:
		RUNS(s + i * 4, m + i * stride, 4);
		break;
	case 8:
		RUNS(s + i * 8, m + i * stride, 8);
		break;
	case 16:
		RUNS(s + i * 16, m + i * stride, 16);
		break;
	default:
		RUNS(s + (size_t)i * len, m + i * stride, len);
	}
}

void dt_scatter(unsigned char *m, const unsigned char *s, MPI_Aint n,
		MPI_Aint stride, size_t len)
{
	switch (len) {
	case 4:
		RUNS(m + i * stride, s + i * 4, 4);
		break;
	case 8:
		RUNS(m + i * stride, s + i * 8, 8);
		break;
	case 16:
		RUNS(m + i * stride, s + i * 16, 16);
		break;
	default:
		RUNS(m + i * stride, s + (size_t)i * len, len);
	}
}
#undef RUNS

static unsigned char *copy_level(const struct dt_plan *p, int lvl,
				 unsigned char *m, unsigned char *s, int unpack)
{
	const struct dt_loop *l;

	if (lvl == p->depth) {
		if (p->run) {
			if (unpack)
				memcpy(m, s, p->run);
			else
				memcpy(s, m, p->run);
			return s + p->run;
		}
		for (uint32_t k = 0; k < p->nparts; k++)
			s = dt_plan_copy(p->part[k], m, s, unpack);
		return s;
	}
	l = &p->loop[lvl];
	if (p->run && lvl == p->depth - 1) {
		if (unpack)
			dt_scatter(m, s, l->count, l->stride, p->run);
		else
			dt_gather(s, m, l->count, l->stride, p->run);
		return s + (size_t)l->count * p->run;
	}
	for (MPI_Aint i = 0; i < l->count; i++)
		s = copy_level(p, lvl + 1, m + i * l->stride, s, unpack);
	return s;
}

unsigned char *dt_plan_copy(const struct dt_plan *p, unsigned char *m,
			    unsigned char *s, int unpack)
{
	return copy_level(p, 0, m + p->off, s, unpack);
}

static int walk_level(const struct dt_plan *p, int lvl, MPI_Aint base,
		      dt_run_fn fn, void *ctx)
{
	int rc;

	if (lvl == p->depth) {
		if (p->run)
			return fn(ctx, base, p->run, p);
		for (uint32_t k = 0; k < p->nparts; k++)
			if ((rc = dt_plan_walk(p->part[k], base, fn, ctx)))
				return rc;
		return 0;
	}
	for (MPI_Aint i = 0; i < p->loop[lvl].count; i++)
		if ((rc = walk_level(p, lvl + 1, base + i * p->loop[lvl].stride,
				     fn, ctx)))
			return rc;
	return 0;
}

int dt_plan_walk(const struct dt_plan *p, MPI_Aint base, dt_run_fn fn,
		 void *ctx)
{
	return walk_level(p, 0, base + p->off, fn, ctx);
}
