/*
 * datatype.c — MPI datatypes: the predefined ones (MPICH's handles, their
 * sizes and reduction kernel types) and those a program builds from them
 * with MPI_Type_contiguous and MPI_Type_vector, nested at will.
 *
 * A type's data is described once, when the type is made, by a plan: a
 * nest of loops (count, stride in bytes) around one run of contiguous
 * bytes,
 *
 *     for i0 < count0 ... for ik < countk:
 *         run bytes at off + i0 * stride0 + ... + ik * stridek
 *
 * which pack, unpack and the reductions walk in type-map order.  A vector
 * puts two loops (count blocks at the stride, blocklength elements at the
 * old type's extent) around its old type's plan and simplifies: a loop of
 * one iteration goes, an innermost loop stepping by the run's length
 * joins the run, and two loops stepping evenly become one.  So a
 * contiguous type of anything dense is a single run, and a vector of
 * doubles one loop over runs of blocklength * 8 bytes, copied by a loop
 * the compiler specializes for 4, 8 and 16 bytes.  A contiguous type is
 * the vector of count blocks of one element at the old extent (MPI-3.1
 * §4.1.2 defines them so).
 *
 * Key invariant: a derived type owns its plan outright — the old type's
 * plan is copied into it, never shared — so freeing the types it was
 * built from changes nothing for it.  A derived type is freed when the
 * program has freed it and no operation holds it (bcs_dt_hold).
 *
 * Handles: predefined types are MPICH's builtin handles (size in bits
 * 8-15, a unique index in bits 0-7), but for the value-index pairs
 * MPI_FLOAT_INT .. MPI_LONG_DOUBLE_INT, which are MPICH's direct handles of
 * index 0-4.  Derived types are direct handles from index DT_FIRST up.
 *
 * The pair types are taken as their C structs, padding included: size =
 * extent = sizeof (16 for MPI_DOUBLE_INT, where MPICH's MPI_Type_size says
 * 12), so they are contiguous and travel whole, as the reduction kernels
 * (bcs_reduce.h), which the engine runs on the bytes received, lay them out.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"
#include "types.h"

/* ---- predefined types -------------------------------------------------- */

struct predef {
	MPI_Datatype h;
	enum bcs_type k; /* BCS_T_NONE: no reduction on it */
};

/* Indexed by the handle's bits 0-7 (unique among MPICH's builtins: the
 * compiler's -Woverride-init would say otherwise).  Not mapped to a kernel
 * type: MPI_PACKED, MPI_REAL16 and MPI_COMPLEX32 (no C type of their
 * format here) and the C++ types (bcs_reduce.h leaves them out: libbcsmpi
 * is C) — they travel, but take no operation.  MPI_CHARACTER is char. */
#define B(h, k) [(h) & 0xff] = { (h), (k) }
static const struct predef builtins[256] = {
	B(MPI_CHAR, BCS_T_CHAR),
	B(MPI_SIGNED_CHAR, BCS_T_SIGNED_CHAR),
	B(MPI_UNSIGNED_CHAR, BCS_T_UNSIGNED_CHAR),
	B(MPI_BYTE, BCS_T_BYTE),
	B(MPI_WCHAR, BCS_T_WCHAR),
	B(MPI_SHORT, BCS_T_SHORT),
	B(MPI_UNSIGNED_SHORT, BCS_T_UNSIGNED_SHORT),
	B(MPI_INT, BCS_T_INT),
	B(MPI_UNSIGNED, BCS_T_UNSIGNED),
	B(MPI_LONG, BCS_T_LONG),
	B(MPI_UNSIGNED_LONG, BCS_T_UNSIGNED_LONG),
	B(MPI_LONG_LONG_INT, BCS_T_LONG_LONG),
	B(MPI_UNSIGNED_LONG_LONG, BCS_T_UNSIGNED_LONG_LONG),
	B(MPI_FLOAT, BCS_T_FLOAT),
	B(MPI_DOUBLE, BCS_T_DOUBLE),
	B(MPI_LONG_DOUBLE, BCS_T_LONG_DOUBLE),
	B(MPI_PACKED, BCS_T_NONE),
	B(MPI_INT8_T, BCS_T_INT8),
	B(MPI_INT16_T, BCS_T_INT16),
	B(MPI_INT32_T, BCS_T_INT32),
	B(MPI_INT64_T, BCS_T_INT64),
	B(MPI_UINT8_T, BCS_T_UINT8),
	B(MPI_UINT16_T, BCS_T_UINT16),
	B(MPI_UINT32_T, BCS_T_UINT32),
	B(MPI_UINT64_T, BCS_T_UINT64),
	B(MPI_C_BOOL, BCS_T_C_BOOL),
	B(MPI_C_FLOAT_COMPLEX, BCS_T_C_FLOAT_COMPLEX),
	B(MPI_C_DOUBLE_COMPLEX, BCS_T_C_DOUBLE_COMPLEX),
	B(MPI_C_LONG_DOUBLE_COMPLEX, BCS_T_C_LONG_DOUBLE_COMPLEX),
	B(MPI_AINT, BCS_T_AINT),
	B(MPI_OFFSET, BCS_T_OFFSET),
	B(MPI_COUNT, BCS_T_COUNT),
	B(MPI_CXX_BOOL, BCS_T_NONE),
	B(MPI_CXX_FLOAT_COMPLEX, BCS_T_NONE),
	B(MPI_CXX_DOUBLE_COMPLEX, BCS_T_NONE),
	B(MPI_CXX_LONG_DOUBLE_COMPLEX, BCS_T_NONE),
	B(MPI_INTEGER, BCS_T_INTEGER),
	B(MPI_REAL, BCS_T_REAL),
	B(MPI_DOUBLE_PRECISION, BCS_T_DOUBLE_PRECISION),
	B(MPI_COMPLEX, BCS_T_COMPLEX),
	B(MPI_DOUBLE_COMPLEX, BCS_T_DOUBLE_COMPLEX),
	B(MPI_LOGICAL, BCS_T_LOGICAL),
	B(MPI_CHARACTER, BCS_T_CHAR),
	B(MPI_INTEGER1, BCS_T_INTEGER1),
	B(MPI_INTEGER2, BCS_T_INTEGER2),
	B(MPI_INTEGER4, BCS_T_INTEGER4),
	B(MPI_INTEGER8, BCS_T_INTEGER8),
	B(MPI_REAL4, BCS_T_REAL4),
	B(MPI_REAL8, BCS_T_REAL8),
	B(MPI_REAL16, BCS_T_NONE),
	B(MPI_COMPLEX8, BCS_T_COMPLEX8),
	B(MPI_COMPLEX16, BCS_T_COMPLEX16),
	B(MPI_COMPLEX32, BCS_T_NONE),
	B(MPI_2INT, BCS_T_2INT),
	B(MPI_2INTEGER, BCS_T_2INTEGER),
	B(MPI_2REAL, BCS_T_2REAL),
	B(MPI_2DOUBLE_PRECISION, BCS_T_2DOUBLE_PRECISION),
};
#undef B

/* MPICH's direct handles 0-4; their size is the kernel's struct's. */
#define P(h, k) [H_INDEX(h)] = { (h), (k) }
static const struct predef pairs[] = {
	P(MPI_FLOAT_INT, BCS_T_FLOAT_INT),
	P(MPI_DOUBLE_INT, BCS_T_DOUBLE_INT),
	P(MPI_LONG_INT, BCS_T_LONG_INT),
	P(MPI_SHORT_INT, BCS_T_SHORT_INT),
	P(MPI_LONG_DOUBLE_INT, BCS_T_LONG_DOUBLE_INT),
};
#undef P
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* The predefined type of handle h, or NULL. */
static const struct predef *predef_of(MPI_Datatype h)
{
	const struct predef *p = NULL;

	if (H_OBJ(h) != O_DATATYPE)
		return NULL;
	if (H_KIND(h) == H_BUILTIN)
		p = &builtins[H_INDEX(h) & 0xff];
	else if (H_KIND(h) == H_DIRECT && H_INDEX(h) < NPAIRS)
		p = &pairs[H_INDEX(h)];
	return p && p->h == h ? p : NULL;
}

static size_t predef_size(const struct predef *p)
{
	if (H_KIND(p->h) == H_BUILTIN)
		return ((unsigned)p->h >> 8) & 0xff;
	return bcs_type_size(p->k);
}

/* ---- the table of types ------------------------------------------------ */

/* One loop of a plan: count >= 2 iterations, stride bytes apart. */
struct dt_loop {
	MPI_Aint count;
	MPI_Aint stride;
};

struct bcs_dt {
	int committed;
	int freed;             /* by the program: only holds keep it */
	unsigned holds;        /* bcs_dt_hold's, not yet released */
	MPI_Datatype basic;    /* the predefined type of every element */
	size_t size;           /* bytes of data */
	MPI_Aint lb, extent;
	MPI_Aint true_lb, true_ub; /* the data's bounds; 0, 0 if none */
	/* the plan (top of the file); run 0: no data, no loop */
	MPI_Aint off;
	size_t run;
	int depth;
	struct dt_loop *loop;  /* depth loops, outermost first */
};

/* Index 0-4 are MPICH's pair types; the room up to 15 keeps clear of any
 * further direct handle MPICH may predefine. */
#define DT_FIRST 16u
#define DT_MAX (H_INDEX(~0u) + 1u)

static struct bcs_dt **dts; /* by handle index; NULL: free */
static unsigned ndts;       /* entries of dts */
static unsigned dt_next = DT_FIRST; /* where the search for a free
				     * index starts */

/* A predefined type seen as a derived one: a plan of one run. */
static const struct bcs_dt *predef_view(const struct predef *p,
					struct bcs_dt *v)
{
	memset(v, 0, sizeof(*v));
	v->committed = 1;
	v->basic = p->h;
	v->size = predef_size(p);
	v->extent = (MPI_Aint)v->size;
	v->true_ub = v->extent;
	v->run = v->size;
	return v;
}

static struct bcs_dt *derived(MPI_Datatype h)
{
	unsigned i = H_INDEX(h);

	if (H_KIND(h) != H_DIRECT || H_OBJ(h) != O_DATATYPE ||
	    i < DT_FIRST || i >= ndts)
		return NULL;
	return dts[i];
}

/* The type of handle h for the library's own use (a freed type that an
 * operation holds included), v holding a predefined one's view; NULL if
 * none. */
static const struct bcs_dt *dt_any(MPI_Datatype h, struct bcs_dt *v)
{
	const struct predef *p = predef_of(h);

	return p ? predef_view(p, v) : derived(h);
}

/* The same for a handle the program passes: not freed. */
static const struct bcs_dt *dt_user(MPI_Datatype h, struct bcs_dt *v)
{
	const struct bcs_dt *t = dt_any(h, v);

	return t && !t->freed ? t : NULL;
}

static void dt_delete(unsigned i)
{
	free(dts[i]->loop);
	free(dts[i]);
	dts[i] = NULL;
}

/* A free index of the table, growing it if need be; 0 if out of room
 * (0 is never a derived type's).  Indexes are reused round-robin, so a
 * stale handle rarely names a new type. */
static unsigned dt_slot(void)
{
	unsigned n = ndts > DT_FIRST ? ndts - DT_FIRST : 0, cap, i;
	struct bcs_dt **d;

	for (unsigned k = 0; k < n; k++) {
		i = DT_FIRST + (dt_next - DT_FIRST + k) % n;
		if (!dts[i])
			return i;
	}
	cap = ndts ? ndts * 2 : DT_FIRST + 64;
	if (cap > DT_MAX)
		cap = DT_MAX;
	if (cap <= ndts || !(d = realloc(dts, cap * sizeof(*d))))
		return 0;
	memset(d + ndts, 0, (cap - ndts) * sizeof(*d));
	i = ndts > DT_FIRST ? ndts : DT_FIRST;
	dts = d;
	ndts = cap;
	return i;
}

/* Enter t into the table: 0 and *h, or MPI_ERR_NO_MEM (t untouched). */
static int dt_enter(struct bcs_dt *t, MPI_Datatype *h)
{
	unsigned i = dt_slot();

	if (!i)
		return MPI_ERR_NO_MEM;
	dts[i] = t;
	dt_next = i + 1 < ndts ? i + 1 : DT_FIRST;
	*h = H_MAKE(H_DIRECT, O_DATATYPE, i);
	return MPI_SUCCESS;
}

/* ---- building a plan --------------------------------------------------- */

static int mul(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
	return __builtin_mul_overflow(a, b, r);
}

static int add(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
	return __builtin_add_overflow(a, b, r);
}

static void drop_loop(struct bcs_dt *t, int k)
{
	memmove(&t->loop[k], &t->loop[k + 1],
		(size_t)(t->depth - k - 1) * sizeof(t->loop[0]));
	t->depth--;
}

/* The simplifications of the top of the file, until none applies.  Every
 * product stays below the type's size or a stride already computed, but
 * the loops' joint stride is checked anyway. */
static void plan_simplify(struct bcs_dt *t)
{
	int changed = 1;

	while (changed) {
		changed = 0;
		for (int k = t->depth - 1; k >= 0; k--)
			if (t->loop[k].count == 1) {
				drop_loop(t, k);
				changed = 1;
			}
		while (t->depth &&
		       t->loop[t->depth - 1].stride == (MPI_Aint)t->run) {
			t->run *= (size_t)t->loop[t->depth - 1].count;
			t->depth--;
			changed = 1;
		}
		for (int k = t->depth - 2; k >= 0; k--) {
			struct dt_loop *o = &t->loop[k], *in = &t->loop[k + 1];
			MPI_Aint step;

			if (!mul(in->count, in->stride, &step) &&
			    o->stride == step) {
				in->count *= o->count;
				drop_loop(t, k);
				changed = 1;
			}
		}
	}
}

/* The data's bounds from the plan. */
static void plan_bounds(struct bcs_dt *t)
{
	MPI_Aint lo = t->off, hi = t->off + (MPI_Aint)t->run;

	if (!t->run) {
		t->true_lb = t->true_ub = 0;
		return;
	}
	for (int k = 0; k < t->depth; k++) {
		MPI_Aint reach = (t->loop[k].count - 1) * t->loop[k].stride;

		if (reach < 0)
			lo += reach;
		else
			hi += reach;
	}
	t->true_lb = lo;
	t->true_ub = hi;
}

/* count blocks of blocklen elements of old, stride bytes apart (MPI's
 * hvector; vector and contiguous are made of it).  0 and *out, or
 * MPI_ERR_ARG (sizes or extents past MPI_Aint) or MPI_ERR_NO_MEM. */
static int dt_hvector(MPI_Aint count, MPI_Aint blocklen, MPI_Aint stride,
		      const struct bcs_dt *old, struct bcs_dt **out)
{
	MPI_Aint n, size, reach, minshift, maxshift, ub, e = old->extent;
	struct bcs_dt *t;

	if (mul(count, blocklen, &n) || mul(n, (MPI_Aint)old->size, &size))
		return MPI_ERR_ARG;
	if (!(t = calloc(1, sizeof(*t))))
		return MPI_ERR_NO_MEM;
	t->basic = old->basic;
	t->size = (size_t)size;
	/* MPI-3.1 §4.1.6 over the type map {old + (i * stride + j * e)}: the
	 * lowest and highest shift, whatever the stride's sign.  An empty
	 * map has lb = ub = 0 (count 0); a blocklength of 0 keeps MPI's
	 * formula ((count - 1) * stride, MPICH's value too). */
	if (count > 0) {
		if (mul(count - 1, stride, &reach) ||
		    mul(blocklen - 1, e, &maxshift) ||
		    add(maxshift, reach > 0 ? reach : 0, &maxshift) ||
		    add(old->lb, old->extent, &ub) ||
		    add(ub, maxshift, &ub))
			goto too_large;
		minshift = reach < 0 ? reach : 0;
		if (add(old->lb, minshift, &t->lb) ||
		    __builtin_sub_overflow(ub, t->lb, &t->extent))
			goto too_large;
	}
	if (size > 0) {
		t->loop = malloc((size_t)(old->depth + 2) * sizeof(t->loop[0]));
		if (!t->loop) {
			free(t);
			return MPI_ERR_NO_MEM;
		}
		t->loop[0] = (struct dt_loop){ count, stride };
		t->loop[1] = (struct dt_loop){ blocklen, e };
		if (old->depth) /* a predefined type has no loop array */
			memcpy(&t->loop[2], old->loop,
			       (size_t)old->depth * sizeof(t->loop[0]));
		t->depth = old->depth + 2;
		t->off = old->off;
		t->run = old->run;
		plan_simplify(t);
	}
	plan_bounds(t);
	*out = t;
	return MPI_SUCCESS;
too_large:
	free(t);
	return MPI_ERR_ARG;
}

/* ---- copying along a plan ---------------------------------------------- */

/* n runs of len bytes stride apart at m, to or from the stream s; the
 * usual lengths as constants, so each memcpy is a move or two. */
#define RUNS(dst, src, len)                                                 \
	for (MPI_Aint i = 0; i < n; i++)                                    \
	memcpy(dst, src, len)

static void gather(unsigned char *s, const unsigned char *m, MPI_Aint n,
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

static void scatter(unsigned char *m, const unsigned char *s, MPI_Aint n,
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

/* One element from loop lvl in: typed memory at m (its off applied), the
 * stream at s; returns the stream past it.  unpack: the stream is read and
 * m written, else the other way (m is then only read). */
static unsigned char *copy_level(const struct bcs_dt *t, int lvl,
				 unsigned char *m, unsigned char *s, int unpack)
{
	const struct dt_loop *l = &t->loop[lvl];

	if (lvl == t->depth - 1) {
		if (unpack)
			scatter(m, s, l->count, l->stride, t->run);
		else
			gather(s, m, l->count, l->stride, t->run);
		return s + (size_t)l->count * t->run;
	}
	for (MPI_Aint i = 0; i < l->count; i++)
		s = copy_level(t, lvl + 1, m + i * l->stride, s, unpack);
	return s;
}

/* count elements between buf and the stream s. */
static void copy(const struct bcs_dt *t, int count, unsigned char *buf,
		 unsigned char *s, int unpack)
{
	if (!t->run || count <= 0)
		return;
	if (t->depth == 0) {
		if ((MPI_Aint)t->run == t->extent) { /* one run in all */
			size_t n = (size_t)count * t->run;

			if (unpack)
				memcpy(buf + t->off, s, n);
			else
				memcpy(s, buf + t->off, n);
		} else if (unpack) {
			scatter(buf + t->off, s, count, t->extent, t->run);
		} else {
			gather(s, buf + t->off, count, t->extent, t->run);
		}
		return;
	}
	for (int i = 0; i < count; i++)
		s = copy_level(t, 0, buf + (MPI_Aint)i * t->extent + t->off, s,
			       unpack);
}

static int walk_level(const struct bcs_dt *t, int lvl, MPI_Aint base,
		      int (*fn)(void *ctx, MPI_Aint off, size_t len),
		      void *ctx)
{
	int rc;

	if (lvl == t->depth)
		return fn(ctx, base, t->run);
	for (MPI_Aint i = 0; i < t->loop[lvl].count; i++)
		if ((rc = walk_level(t, lvl + 1, base + i * t->loop[lvl].stride,
				     fn, ctx)))
			return rc;
	return 0;
}

static int walk(const struct bcs_dt *t, int count,
		int (*fn)(void *ctx, MPI_Aint off, size_t len), void *ctx)
{
	int rc;

	if (!t->run)
		return 0;
	for (int i = 0; i < count; i++)
		if ((rc = walk_level(t, 0, (MPI_Aint)i * t->extent + t->off,
				     fn, ctx)))
			return rc;
	return 0;
}

/* A partial element's bytes from the stream, as far as they go. */
struct partial {
	unsigned char *buf;
	const unsigned char *s;
	size_t left;
};

static int unpack_partial(void *ctx, MPI_Aint off, size_t len)
{
	struct partial *p = ctx;

	if (len > p->left)
		len = p->left;
	memcpy(p->buf + off, p->s, len);
	p->s += len;
	p->left -= len;
	return p->left == 0;
}

/* ---- impl.h and types.h ------------------------------------------------ */

int bcs_dt_ok(MPI_Datatype dt)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_user(dt, &v);

	return t && t->committed;
}

int bcs_dt_held_ok(MPI_Datatype dt)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	return t && t->committed;
}

size_t bcs_dt_size(MPI_Datatype dt)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	return t ? t->size : 0;
}

MPI_Aint bcs_dt_extent(MPI_Datatype dt)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	return t ? t->extent : 0;
}

int bcs_dt_contig(MPI_Datatype dt)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	if (!t)
		return 0;
	return t->size == 0 ||
	       (t->depth == 0 && t->off == 0 && t->run == t->size &&
		t->extent == (MPI_Aint)t->size);
}

void bcs_dt_pack(MPI_Datatype dt, int count, const void *buf, void *out)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	/* buf is only read: copy() reads m when packing */
	if (t)
		copy(t, count, (unsigned char *)(uintptr_t)buf, out, 0);
}

void bcs_dt_unpack(MPI_Datatype dt, int count, const void *in, size_t bytes,
		   void *buf)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);
	size_t full;

	if (!t || count <= 0 || !t->size)
		return;
	full = bytes / t->size;
	if (full >= (size_t)count) {
		full = (size_t)count;
		bytes = full * t->size;
	}
	copy(t, (int)full, buf, (unsigned char *)(uintptr_t)in, 1);
	if (bytes > full * t->size) {
		struct partial p = { buf, (const unsigned char *)in +
				     full * t->size, bytes - full * t->size };

		p.buf += (MPI_Aint)full * t->extent;
		walk(t, 1, unpack_partial, &p);
	}
}

int bcs_dt_kernel(MPI_Datatype dt, enum bcs_type *t)
{
	const struct predef *p = predef_of(dt);

	if (!p || p->k == BCS_T_NONE)
		return -1;
	*t = p->k;
	return 0;
}

MPI_Datatype bcs_dt_basic(MPI_Datatype dt)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	return t ? t->basic : MPI_DATATYPE_NULL;
}

int bcs_dt_span(MPI_Datatype dt, int count, MPI_Aint *true_lb,
		MPI_Aint *span)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);
	MPI_Aint ub;

	if (!t || count < 0)
		return -1;
	if (!count || !t->run) {
		*true_lb = *span = 0;
		return 0;
	}
	/* extents are never negative here: the last element is the top */
	if (mul(count - 1, t->extent, &ub) || add(ub, t->true_ub, &ub) ||
	    __builtin_sub_overflow(ub, t->true_lb, span))
		return -1;
	*true_lb = t->true_lb;
	return 0;
}

int bcs_dt_walk(MPI_Datatype dt, int count,
		int (*fn)(void *ctx, MPI_Aint off, size_t len), void *ctx)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	if (!t || count < 0)
		return -1;
	return walk(t, count, fn, ctx);
}

int bcs_dt_hold(MPI_Datatype dt)
{
	struct bcs_dt *t = derived(dt);

	if (predef_of(dt))
		return 0;
	if (!t || t->holds == UINT_MAX)
		return -1;
	t->holds++;
	return 0;
}

void bcs_dt_release(MPI_Datatype dt)
{
	struct bcs_dt *t = derived(dt);

	if (!t || !t->holds)
		return;
	if (--t->holds == 0 && t->freed)
		dt_delete(H_INDEX(dt));
}

void bcs_dt_fini(void)
{
	for (unsigned i = DT_FIRST; i < ndts; i++)
		if (dts[i])
			dt_delete(i);
	free(dts);
	dts = NULL;
	ndts = 0;
	dt_next = DT_FIRST;
}

/* The table's invariant: a kernel type's size is the handle's. */
int bcs_dt_init(void)
{
	bcs_dt_fini();
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
		const struct predef *p = &builtins[i];

		if (p->h && p->k != BCS_T_NONE &&
		    bcs_type_size(p->k) != predef_size(p))
			return MPI_ERR_INTERN;
	}
	for (size_t i = 0; i < NPAIRS; i++)
		if (!predef_size(&pairs[i]))
			return MPI_ERR_INTERN;
	return MPI_SUCCESS;
}

/* ---- the calls --------------------------------------------------------- */

/* MPI_Type_size and its _x twin: the bytes of data in one element. */
static int type_size(const char *fn, MPI_Datatype dt, int given,
		     MPI_Count *size)
{
	struct bcs_dt v;
	const struct bcs_dt *t;

	BCS_NEED_INIT(fn);
	if (!(t = dt_user(dt, &v)))
		return bcs_error(NULL, fn, MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)dt);
	if (!given)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "size is NULL");
	*size = (MPI_Count)t->size;
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_size = PMPI_Type_size
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
	MPI_Count n = 0;
	int rc = type_size("MPI_Type_size", datatype, size != NULL, &n);

	if (!rc)
		*size = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}

#pragma weak MPI_Type_size_x = PMPI_Type_size_x
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	MPI_Count n = 0;
	int rc = type_size("MPI_Type_size_x", datatype, size != NULL, &n);

	if (!rc)
		*size = n;
	return rc;
}

#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb,
			 MPI_Aint *extent)
{
	struct bcs_dt v;
	const struct bcs_dt *t;

	BCS_NEED_INIT("MPI_Type_get_extent");
	if (!(t = dt_user(datatype, &v)))
		return bcs_error(NULL, "MPI_Type_get_extent", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)datatype);
	if (!lb || !extent)
		return bcs_error(NULL, "MPI_Type_get_extent", MPI_ERR_ARG,
				 "lb or extent is NULL");
	*lb = t->lb;
	*extent = t->extent;
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
			   MPI_Count *extent)
{
	MPI_Aint l = 0, e = 0;
	int rc;

	if (!lb || !extent)
		return bcs_error(NULL, "MPI_Type_get_extent_x", MPI_ERR_ARG,
				 "lb or extent is NULL");
	if ((rc = PMPI_Type_get_extent(datatype, &l, &e)))
		return rc;
	*lb = l;
	*extent = e;
	return MPI_SUCCESS;
}

/* The true extent: the bytes one element's data touches (bcs_dt_span),
 * gaps at either end left out. */
static int get_true_extent(const char *fn, MPI_Datatype dt, MPI_Aint *lb,
		       MPI_Aint *extent)
{
	BCS_NEED_INIT(fn);
	if (!lb || !extent)
		return bcs_error(NULL, fn, MPI_ERR_ARG,
				 "true_lb or true_extent is NULL");
	if (!bcs_dt_ok(dt) || bcs_dt_span(dt, 1, lb, extent))
		return bcs_error(NULL, fn, MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)dt);
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
			      MPI_Aint *true_extent)
{
	return get_true_extent("MPI_Type_get_true_extent", datatype, true_lb,
			   true_extent);
}

#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
				MPI_Count *true_extent)
{
	MPI_Aint l = 0, e = 0;
	int rc;

	if (!true_lb || !true_extent)
		return bcs_error(NULL, "MPI_Type_get_true_extent_x",
				 MPI_ERR_ARG,
				 "true_lb or true_extent is NULL");
	if ((rc = get_true_extent("MPI_Type_get_true_extent_x", datatype, &l,
			      &e)))
		return rc;
	*true_lb = l;
	*true_extent = e;
	return MPI_SUCCESS;
}

/* What MPI_Type_contiguous and MPI_Type_vector share once their counts
 * are checked: stride in elements of old's extent. */
static int make_vector(const char *fn, int count, int blocklength,
		       int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct bcs_dt v, *t;
	const struct bcs_dt *old;
	MPI_Aint bytes;
	int rc;

	if (!(old = dt_user(oldtype, &v)))
		return bcs_error(NULL, fn, MPI_ERR_TYPE,
				 "oldtype is not a datatype (%#x)",
				 (unsigned)oldtype);
	if (!newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newtype is NULL");
	if (mul(stride, old->extent, &bytes))
		rc = MPI_ERR_ARG;
	else
		rc = dt_hvector(count, blocklength, bytes, old, &t);
	if (rc == MPI_ERR_ARG)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "count %d, "
				 "blocklength %d, stride %d of a type of "
				 "extent %ld: sizes past MPI_Aint", count,
				 blocklength, stride, old->extent);
	if (rc == MPI_SUCCESS && (rc = dt_enter(t, newtype)) != MPI_SUCCESS) {
		free(t->loop);
		free(t);
	}
	if (rc != MPI_SUCCESS)
		return bcs_error(NULL, fn, rc, "out of memory for a datatype");
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
			 MPI_Datatype *newtype)
{
	BCS_NEED_INIT("MPI_Type_contiguous");
	if (count < 0)
		return bcs_error(NULL, "MPI_Type_contiguous", MPI_ERR_COUNT,
				 "count %d is negative", count);
	return make_vector("MPI_Type_contiguous", count, 1, 1, oldtype,
			   newtype);
}

#pragma weak MPI_Type_vector = PMPI_Type_vector
int PMPI_Type_vector(int count, int blocklength, int stride,
		     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	BCS_NEED_INIT("MPI_Type_vector");
	if (count < 0 || blocklength < 0)
		return bcs_error(NULL, "MPI_Type_vector", MPI_ERR_COUNT,
				 "count %d, blocklength %d: not negative",
				 count, blocklength);
	return make_vector("MPI_Type_vector", count, blocklength, stride,
			   oldtype, newtype);
}

/* Committing a predefined type is allowed and does nothing. */
#pragma weak MPI_Type_commit = PMPI_Type_commit
int PMPI_Type_commit(MPI_Datatype *datatype)
{
	struct bcs_dt *t;

	BCS_NEED_INIT("MPI_Type_commit");
	if (!datatype)
		return bcs_error(NULL, "MPI_Type_commit", MPI_ERR_ARG,
				 "datatype is NULL");
	if (predef_of(*datatype))
		return MPI_SUCCESS;
	if (!(t = derived(*datatype)) || t->freed)
		return bcs_error(NULL, "MPI_Type_commit", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)*datatype);
	t->committed = 1;
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_free = PMPI_Type_free
int PMPI_Type_free(MPI_Datatype *datatype)
{
	struct bcs_dt *t;

	BCS_NEED_INIT("MPI_Type_free");
	if (!datatype)
		return bcs_error(NULL, "MPI_Type_free", MPI_ERR_ARG,
				 "datatype is NULL");
	if (predef_of(*datatype))
		return bcs_error(NULL, "MPI_Type_free", MPI_ERR_TYPE,
				 "%#x is a predefined datatype: it cannot be "
				 "freed", (unsigned)*datatype);
	if (!(t = derived(*datatype)) || t->freed)
		return bcs_error(NULL, "MPI_Type_free", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)*datatype);
	if (t->holds)
		t->freed = 1; /* the last bcs_dt_release deletes it */
	else
		dt_delete(H_INDEX(*datatype));
	*datatype = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}

/* Address arithmetic (MPI-3.1 §4.1.5): on this flat address space, plain
 * sums and differences, done unsigned so that wrapping is defined. */
#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	return (MPI_Aint)((unsigned long)base + (unsigned long)disp);
}

#pragma weak MPI_Aint_diff = PMPI_Aint_diff
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	return (MPI_Aint)((unsigned long)addr1 - (unsigned long)addr2);
}

/* A copy of the bytes count of dt span at buf, laid out as at buf: the
 * typed pointer into it (NULL: no memory, or no span), *block what to
 * free.  For a send out of a buffer the call then overwrites. */
void *bcs_dt_span_dup(const void *buf, int count, MPI_Datatype dt,
		      void **block)
{
	MPI_Aint lb = 0, span = 0;
	uint8_t *b;

	*block = NULL;
	if (bcs_dt_span(dt, count, &lb, &span) ||
	    !(b = malloc((size_t)span + 1)))
		return NULL;
	memcpy(b, (const uint8_t *)buf + lb, (size_t)span);
	*block = b;
	return b - lb;
}
