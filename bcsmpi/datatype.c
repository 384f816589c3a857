/*
 * datatype.c — MPI datatypes: the predefined ones (MPICH's handles, their
 * sizes, names and reduction kernel types), the table of those a program
 * builds (dtmake.c builds them; dtplan.h describes their data), and what
 * the rest of the library and the program ask of a type.
 *
 * A derived type is freed when the program has freed it and no operation
 * holds it (bcs_dt_hold); its plan is shared by reference, so freeing the
 * types it was built from changes nothing for it.
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
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"
#include "types.h"

/* ---- predefined types -------------------------------------------------- */

struct predef {
	MPI_Datatype h;
	enum bcs_type k; /* BCS_T_NONE: no reduction on it */
	const char *name;
};

/* Indexed by the handle's bits 0-7 (unique among MPICH's builtins: the
 * compiler's -Woverride-init would say otherwise).  Not mapped to a kernel
 * type: MPI_PACKED, MPI_REAL16 and MPI_COMPLEX32 (no C type of their
 * format here) and the C++ types (bcs_reduce.h leaves them out: libbcsmpi
 * is C) — they travel, but take no operation.  MPI_CHARACTER is char. */
#define B(h, k) [(h) & 0xff] = { (h), (k), #h }
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
#define P(h, k) [H_INDEX(h)] = { (h), (k), #h }
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

/* The alignment C gives p's type: a pair's or a complex's is its
 * component's; the rest are aligned to their size, up to 8 (16 for
 * the long double family, x86-64). */
static size_t predef_align(const struct predef *p)
{
	struct f_i { float v; int i; };
	struct s_i { short v; int i; };
	size_t sz = predef_size(p), a = 1;

	switch (p->k) {
	case BCS_T_FLOAT_INT:
		return alignof(struct f_i);
	case BCS_T_SHORT_INT:
		return alignof(struct s_i);
	case BCS_T_2INT:
	case BCS_T_2INTEGER:
	case BCS_T_2REAL:
	case BCS_T_C_FLOAT_COMPLEX:
	case BCS_T_COMPLEX:
	case BCS_T_COMPLEX8:
		return alignof(float);
	case BCS_T_2DOUBLE_PRECISION:
	case BCS_T_C_DOUBLE_COMPLEX:
	case BCS_T_DOUBLE_COMPLEX:
	case BCS_T_COMPLEX16:
		return alignof(double);
	case BCS_T_LONG_DOUBLE:
	case BCS_T_C_LONG_DOUBLE_COMPLEX:
	case BCS_T_LONG_DOUBLE_INT:
		return alignof(long double);
	default:
		break;
	}
	if (p->h == MPI_CXX_LONG_DOUBLE_COMPLEX || p->h == MPI_REAL16 ||
	    p->h == MPI_COMPLEX32)
		return alignof(long double);
	if (p->h == MPI_CXX_FLOAT_COMPLEX)
		return alignof(float);
	if (p->h == MPI_CXX_DOUBLE_COMPLEX)
		return alignof(double);
	while (a < 8 && sz % (a * 2) == 0)
		a *= 2;
	return a;
}

int dt_predefined(MPI_Datatype h)
{
	return predef_of(h) != NULL;
}

const char *dt_predef_name(MPI_Datatype h)
{
	const struct predef *p = predef_of(h);

	return p ? p->name : NULL;
}

/* ---- the table of types ------------------------------------------------ */

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
	v->align = predef_align(p);
	v->extent = (MPI_Aint)v->size;
	v->true_ub = v->extent;
	v->combiner = MPI_COMBINER_NAMED;
	v->dense = 1;
	v->own = (struct dt_plan){ .refs = 1, .run = v->size,
				   .basic_size = v->size, .basic = p->h,
				   .size = v->size, .hi = v->extent };
	v->plan = &v->own;
	return v;
}

struct bcs_dt *dt_derived(MPI_Datatype h)
{
	unsigned i = H_INDEX(h);

	if (H_KIND(h) != H_DIRECT || H_OBJ(h) != O_DATATYPE ||
	    i < DT_FIRST || i >= ndts)
		return NULL;
	return dts[i];
}

const struct bcs_dt *dt_any(MPI_Datatype h, struct bcs_dt *v)
{
	const struct predef *p = predef_of(h);

	return p ? predef_view(p, v) : dt_derived(h);
}

const struct bcs_dt *dt_user(MPI_Datatype h, struct bcs_dt *v)
{
	const struct bcs_dt *t = dt_any(h, v);

	return t && !t->freed ? t : NULL;
}

void dt_destroy(struct bcs_dt *t)
{
	bcs_attrs_drop(&t->attrs);
	dt_plan_unref(t->plan);
	for (int i = 0; i < t->nd; i++)
		bcs_dt_release(t->types[i]);
	free(t->ints);
	free(t->aints);
	free(t->types);
	free(t);
}

static void dt_delete(unsigned i)
{
	struct bcs_dt *t = dts[i];

	dts[i] = NULL; /* first: releasing its parts may come back here */
	dt_destroy(t);
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

int dt_enter(struct bcs_dt *t, MPI_Datatype *h)
{
	unsigned i = dt_slot();

	if (!i)
		return MPI_ERR_NO_MEM;
	dts[i] = t;
	dt_next = i + 1 < ndts ? i + 1 : DT_FIRST;
	*h = H_MAKE(H_DIRECT, O_DATATYPE, i);
	return MPI_SUCCESS;
}

/* ---- copying ------------------------------------------------------------- */

/* count elements between buf and the stream s. */
static void copy(const struct bcs_dt *t, int count, unsigned char *buf,
		 unsigned char *s, int unpack)
{
	const struct dt_plan *p = t->plan;

	if (!p || count <= 0)
		return;
	if (p->run && p->depth == 0) {
		if ((MPI_Aint)p->run == t->extent) { /* one run in all */
			size_t n = (size_t)count * p->run;

			if (unpack)
				memcpy(buf + p->off, s, n);
			else
				memcpy(s, buf + p->off, n);
		} else if (unpack) {
			dt_scatter(buf + p->off, s, count, t->extent, p->run);
		} else {
			dt_gather(s, buf + p->off, count, t->extent, p->run);
		}
		return;
	}
	for (int i = 0; i < count; i++)
		s = dt_plan_copy(p, buf + (MPI_Aint)i * t->extent, s, unpack);
}

static int walk(const struct bcs_dt *t, int count, dt_run_fn fn, void *ctx)
{
	int rc;

	if (!t->plan)
		return 0;
	for (int i = 0; i < count; i++)
		if ((rc = dt_plan_walk(t->plan, (MPI_Aint)i * t->extent, fn,
				       ctx)))
			return rc;
	return 0;
}

/* A partial element's bytes from the stream, as far as they go. */
struct partial {
	unsigned char *buf;
	const unsigned char *s;
	size_t left;
};

static int unpack_partial(void *ctx, MPI_Aint off, size_t len,
			  const struct dt_plan *leaf)
{
	struct partial *p = ctx;

	(void)leaf;
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
	return t->size == 0 || t->dense;
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
	if (!count || !t->plan) {
		*true_lb = *span = 0;
		return 0;
	}
	/* extents are never negative here: the last element is the top */
	if (__builtin_mul_overflow(count - 1, t->extent, &ub) ||
	    __builtin_add_overflow(ub, t->true_ub, &ub) ||
	    __builtin_sub_overflow(ub, t->true_lb, span))
		return -1;
	*true_lb = t->true_lb;
	return 0;
}

struct walk_ctx {
	int (*fn)(void *ctx, MPI_Aint off, size_t len);
	void *ctx;
};

static int walk_run(void *ctx, MPI_Aint off, size_t len,
		    const struct dt_plan *leaf)
{
	struct walk_ctx *w = ctx;

	(void)leaf;
	return w->fn(w->ctx, off, len);
}

int bcs_dt_walk(MPI_Datatype dt, int count,
		int (*fn)(void *ctx, MPI_Aint off, size_t len), void *ctx)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);
	struct walk_ctx w = { fn, ctx };

	if (!t || count < 0)
		return -1;
	return walk(t, count, walk_run, &w);
}

/* Whole basic elements in bytes of count of dt's data. */
struct elems {
	uint64_t left, n;
};

static int count_run(void *ctx, MPI_Aint off, size_t len,
		     const struct dt_plan *leaf)
{
	struct elems *e = ctx;
	size_t take = len < e->left ? len : (size_t)e->left;

	(void)off;
	e->n += take / leaf->basic_size;
	e->left -= take;
	return e->left == 0;
}

int64_t bcs_dt_elements(MPI_Datatype dt, uint64_t bytes)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);
	struct elems e = { bytes, 0 };
	uint64_t whole;

	if (!t)
		return -1;
	if (!t->size)
		return 0;
	/* whole elements of dt at once, then a partial one run by run */
	whole = bytes / t->size;
	e.left = bytes % t->size;
	if (e.left)
		walk(t, 1, count_run, &e);
	if (whole && t->plan) {
		struct elems one = { t->size, 0 };

		walk(t, 1, count_run, &one);
		if (__builtin_mul_overflow(whole, one.n, &whole) ||
		    whole + e.n > INT64_MAX)
			return -1;
	}
	return (int64_t)(whole + e.n);
}

/* The bytes that hold the first n basic elements of count of dt. */
struct first {
	uint64_t left, bytes;
};

static int first_run(void *ctx, MPI_Aint off, size_t len,
		     const struct dt_plan *leaf)
{
	struct first *f = ctx;
	uint64_t n = len / leaf->basic_size;

	(void)off;
	if (n > f->left)
		n = f->left;
	f->bytes += n * leaf->basic_size;
	f->left -= n;
	return f->left == 0;
}

int bcs_dt_elements_bytes(MPI_Datatype dt, int64_t n, uint64_t *bytes)
{
	int64_t per = bcs_dt_elements(dt, bcs_dt_size(dt));
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);
	struct first f = { 0, 0 };

	if (!t || n < 0 || per < 0)
		return -1;
	if (per == 0) {
		*bytes = 0;
		return n ? -1 : 0;
	}
	f.left = (uint64_t)(n % per);
	if (f.left)
		walk(t, 1, first_run, &f);
	if (__builtin_mul_overflow((uint64_t)(n / per), (uint64_t)t->size,
				   bytes) ||
	    __builtin_add_overflow(*bytes, f.bytes, bytes))
		return -1;
	return 0;
}

int bcs_dt_hold(MPI_Datatype dt)
{
	struct bcs_dt *t = dt_derived(dt);

	if (predef_of(dt))
		return 0;
	if (!t || t->holds == UINT_MAX)
		return -1;
	t->holds++;
	return 0;
}

void bcs_dt_release(MPI_Datatype dt)
{
	struct bcs_dt *t = dt_derived(dt);

	if (!t || !t->holds)
		return;
	if (--t->holds == 0 && t->freed)
		dt_delete(H_INDEX(dt));
}

void bcs_dt_fini(void)
{
	bcs_dt_names_fini();
	bcs_dt_attrs_fini();
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

/* Whether t's data is one run from its address in order, extent =
 * size: a buffer of it is used as it is. */
struct next {
	MPI_Aint at;
};

static int follows(void *ctx, MPI_Aint off, size_t len,
		   const struct dt_plan *leaf)
{
	struct next *n = ctx;

	(void)leaf;
	if (off != n->at)
		return 1;
	n->at += (MPI_Aint)len;
	return 0;
}

static int dense(const struct bcs_dt *t)
{
	struct next n = { 0 };

	if (!t->plan)
		return 1;
	if (t->lb != 0 || t->extent != (MPI_Aint)t->size)
		return 0;
	if (t->plan->run) /* one leaf: no walk over its runs */
		return t->plan->depth == 0 && t->plan->off == 0;
	return walk(t, 1, follows, &n) == 0 && n.at == (MPI_Aint)t->size;
}

/* Whether count elements of t touch a byte twice (MPI-3.1 §4.1.1: a
 * receive into such a type is erroneous).  The runs are sorted and
 * compared; -1 when there are too many to look at (not checked). */
struct spans {
	MPI_Aint *off;
	size_t *len, n, cap;
};

static int add_span(void *ctx, MPI_Aint off, size_t len,
		    const struct dt_plan *leaf)
{
	struct spans *s = ctx;

	(void)leaf;
	if (s->n == s->cap)
		return 1;
	s->off[s->n] = off;
	s->len[s->n++] = len;
	return 0;
}

static int by_off(const void *a, const void *b)
{
	const MPI_Aint *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

#define SPANS_MAX 65536u

static int count_span(void *ctx, MPI_Aint off, size_t len,
		      const struct dt_plan *leaf)
{
	size_t *n = ctx;

	(void)off;
	(void)len;
	(void)leaf;
	return ++*n > SPANS_MAX;
}

static int overlaps(const struct bcs_dt *t, int count)
{
	struct spans s = { NULL, NULL, 0, 0 };
	MPI_Aint (*pair)[2] = NULL;
	int rc = 0;

	if (!t->plan || count <= 0)
		return 0;
	if (walk(t, count, count_span, &s.cap))
		return -1; /* too many runs to look at */
	s.off = malloc(s.cap * sizeof(*s.off) + 1);
	s.len = malloc(s.cap * sizeof(*s.len) + 1);
	pair = malloc(s.cap * sizeof(*pair) + 1);
	if (!s.off || !s.len || !pair || walk(t, count, add_span, &s)) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < s.n; i++) {
		pair[i][0] = s.off[i];
		pair[i][1] = (MPI_Aint)s.len[i];
	}
	qsort(pair, s.n, sizeof(*pair), by_off);
	for (size_t i = 1; i < s.n && !rc; i++)
		rc = pair[i - 1][0] + pair[i - 1][1] > pair[i][0];
out:
	free(s.off);
	free(s.len);
	free(pair);
	return rc;
}

int bcs_dt_overlaps(MPI_Datatype dt, int count)
{
	struct bcs_dt v;
	const struct bcs_dt *t = dt_any(dt, &v);

	if (!t || count <= 0)
		return 0;
	if (t->overlaps)
		return 1;
	/* elements can only meet when one's extent is less than its span */
	if (count > 1 && t->plan && t->extent < t->true_ub - t->true_lb)
		return overlaps(t, count) == 1;
	return 0;
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
	if (!(t = dt_derived(*datatype)) || t->freed)
		return bcs_error(NULL, "MPI_Type_commit", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)*datatype);
	t->committed = 1;
	t->dense = dense(t);
	t->overlaps = overlaps(t, 1) == 1;
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_free = PMPI_Type_free
int PMPI_Type_free(MPI_Datatype *datatype)
{
	struct bcs_dt *t;
	int rc;

	BCS_NEED_INIT("MPI_Type_free");
	if (!datatype)
		return bcs_error(NULL, "MPI_Type_free", MPI_ERR_ARG,
				 "datatype is NULL");
	if (predef_of(*datatype))
		return bcs_error(NULL, "MPI_Type_free", MPI_ERR_TYPE,
				 "%#x is a predefined datatype: it cannot be "
				 "freed", (unsigned)*datatype);
	if (!(t = dt_derived(*datatype)) || t->freed)
		return bcs_error(NULL, "MPI_Type_free", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)*datatype);
	/* its attributes' delete callbacks first: one that fails keeps
	 * the type */
	if ((rc = bcs_attrs_delete_all(&t->attrs, *datatype)))
		return bcs_error(NULL, "MPI_Type_free", rc, "an attribute's "
				 "delete callback failed (%d)", rc);
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
