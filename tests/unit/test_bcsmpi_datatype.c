/*
 * test_bcsmpi_datatype.c — datatypes (bcsmpi/datatype.c, dtmake.c,
 * dtplan.c): the predefined ones (sizes, kernel types), and every
 * constructor (contiguous, vector, hvector, the indexed family, struct
 * of mixed basic types, resized, dup, subarray) nested at random,
 * checked against a reference that lists every basic element's
 * displacement and size and copies byte by byte: sizes, bounds (MPI's,
 * a struct padded as C pads), pack, unpack (whole and cut short), the
 * runs bcs_dt_walk reports, element counts; envelope and contents,
 * names; then commit, free and hold.  STORM_FUZZ_SEED=N replays the random types.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bcsmpi_stubs.h"
#include "fuzz_rng.h"
#include "types.h"

/* Every predefined datatype handle of mpi.h, and its size: the C type's
 * (the pairs' as their C structs, padding included). */
struct pre {
	MPI_Datatype h;
	size_t size;
	int kernel; /* -1: none */
};

struct float_int { float v; int i; };
struct double_int { double v; int i; };
struct long_int { long v; int i; };
struct short_int { short v; int i; };
struct long_double_int { long double v; int i; };

static const struct pre pres[] = {
	{ MPI_CHAR, sizeof(char), BCS_T_CHAR },
	{ MPI_SIGNED_CHAR, 1, BCS_T_SIGNED_CHAR },
	{ MPI_UNSIGNED_CHAR, 1, BCS_T_UNSIGNED_CHAR },
	{ MPI_BYTE, 1, BCS_T_BYTE },
	{ MPI_WCHAR, 4, BCS_T_WCHAR },
	{ MPI_SHORT, sizeof(short), BCS_T_SHORT },
	{ MPI_UNSIGNED_SHORT, sizeof(short), BCS_T_UNSIGNED_SHORT },
	{ MPI_INT, sizeof(int), BCS_T_INT },
	{ MPI_UNSIGNED, sizeof(int), BCS_T_UNSIGNED },
	{ MPI_LONG, sizeof(long), BCS_T_LONG },
	{ MPI_UNSIGNED_LONG, sizeof(long), BCS_T_UNSIGNED_LONG },
	{ MPI_LONG_LONG_INT, sizeof(long long), BCS_T_LONG_LONG },
	{ MPI_LONG_LONG, sizeof(long long), BCS_T_LONG_LONG },
	{ MPI_UNSIGNED_LONG_LONG, 8, BCS_T_UNSIGNED_LONG_LONG },
	{ MPI_FLOAT, sizeof(float), BCS_T_FLOAT },
	{ MPI_DOUBLE, sizeof(double), BCS_T_DOUBLE },
	{ MPI_LONG_DOUBLE, sizeof(long double), BCS_T_LONG_DOUBLE },
	{ MPI_PACKED, 1, -1 },
	{ MPI_INT8_T, 1, BCS_T_INT8 },
	{ MPI_INT16_T, 2, BCS_T_INT16 },
	{ MPI_INT32_T, 4, BCS_T_INT32 },
	{ MPI_INT64_T, 8, BCS_T_INT64 },
	{ MPI_UINT8_T, 1, BCS_T_UINT8 },
	{ MPI_UINT16_T, 2, BCS_T_UINT16 },
	{ MPI_UINT32_T, 4, BCS_T_UINT32 },
	{ MPI_UINT64_T, 8, BCS_T_UINT64 },
	{ MPI_C_BOOL, sizeof(_Bool), BCS_T_C_BOOL },
	{ MPI_C_FLOAT_COMPLEX, 8, BCS_T_C_FLOAT_COMPLEX },
	{ MPI_C_COMPLEX, 8, BCS_T_C_FLOAT_COMPLEX },
	{ MPI_C_DOUBLE_COMPLEX, 16, BCS_T_C_DOUBLE_COMPLEX },
	{ MPI_C_LONG_DOUBLE_COMPLEX, 32, BCS_T_C_LONG_DOUBLE_COMPLEX },
	{ MPI_AINT, sizeof(MPI_Aint), BCS_T_AINT },
	{ MPI_OFFSET, sizeof(MPI_Offset), BCS_T_OFFSET },
	{ MPI_COUNT, sizeof(MPI_Count), BCS_T_COUNT },
	{ MPI_CXX_BOOL, 1, -1 },
	{ MPI_CXX_FLOAT_COMPLEX, 8, -1 },
	{ MPI_CXX_DOUBLE_COMPLEX, 16, -1 },
	{ MPI_CXX_LONG_DOUBLE_COMPLEX, 32, -1 },
	{ MPI_INTEGER, 4, BCS_T_INTEGER },
	{ MPI_REAL, 4, BCS_T_REAL },
	{ MPI_DOUBLE_PRECISION, 8, BCS_T_DOUBLE_PRECISION },
	{ MPI_COMPLEX, 8, BCS_T_COMPLEX },
	{ MPI_DOUBLE_COMPLEX, 16, BCS_T_DOUBLE_COMPLEX },
	{ MPI_LOGICAL, 4, BCS_T_LOGICAL },
	{ MPI_CHARACTER, 1, BCS_T_CHAR },
	{ MPI_INTEGER1, 1, BCS_T_INTEGER1 },
	{ MPI_INTEGER2, 2, BCS_T_INTEGER2 },
	{ MPI_INTEGER4, 4, BCS_T_INTEGER4 },
	{ MPI_INTEGER8, 8, BCS_T_INTEGER8 },
	{ MPI_REAL4, 4, BCS_T_REAL4 },
	{ MPI_REAL8, 8, BCS_T_REAL8 },
	{ MPI_REAL16, 16, -1 },
	{ MPI_COMPLEX8, 8, BCS_T_COMPLEX8 },
	{ MPI_COMPLEX16, 16, BCS_T_COMPLEX16 },
	{ MPI_COMPLEX32, 32, -1 },
	{ MPI_FLOAT_INT, sizeof(struct float_int), BCS_T_FLOAT_INT },
	{ MPI_DOUBLE_INT, sizeof(struct double_int), BCS_T_DOUBLE_INT },
	{ MPI_LONG_INT, sizeof(struct long_int), BCS_T_LONG_INT },
	{ MPI_SHORT_INT, sizeof(struct short_int), BCS_T_SHORT_INT },
	{ MPI_LONG_DOUBLE_INT, sizeof(struct long_double_int),
	  BCS_T_LONG_DOUBLE_INT },
	{ MPI_2INT, 2 * sizeof(int), BCS_T_2INT },
	{ MPI_2INTEGER, 8, BCS_T_2INTEGER },
	{ MPI_2REAL, 8, BCS_T_2REAL },
	{ MPI_2DOUBLE_PRECISION, 16, BCS_T_2DOUBLE_PRECISION },
};
#define NPRES (sizeof pres / sizeof pres[0])

static int setup(void **state)
{
	(void)state;
	stub_initialize();
	assert_int_equal(bcs_dt_init(), MPI_SUCCESS);
	stub_err_reset();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	bcs_dt_fini();
	return 0;
}

/* ---- predefined types -------------------------------------------------- */

static void test_predefined_types_have_their_c_sizes(void **state)
{
	(void)state;
	for (size_t i = 0; i < NPRES; i++) {
		MPI_Datatype h = pres[i].h;
		MPI_Aint lb = -1, extent = -1;
		int size = -1;

		assert_true(bcs_dt_ok(h));
		assert_true(bcs_dt_contig(h));
		assert_int_equal(bcs_dt_size(h), pres[i].size);
		assert_int_equal(bcs_dt_extent(h), (MPI_Aint)pres[i].size);
		assert_int_equal(bcs_dt_basic(h), h);
		assert_int_equal(MPI_Type_size(h, &size), MPI_SUCCESS);
		assert_int_equal(size, (int)pres[i].size);
		assert_int_equal(MPI_Type_get_extent(h, &lb, &extent),
				 MPI_SUCCESS);
		assert_int_equal(lb, 0);
		assert_int_equal(extent, (MPI_Aint)pres[i].size);
		/* and a builtin handle says so in bits 8-15 (MPICH) */
		if (((unsigned)h >> 30) == 1)
			assert_int_equal(((unsigned)h >> 8) & 0xff,
					 pres[i].size);
	}
}

static void test_kernel_types_cover_every_reduction_type(void **state)
{
	int seen[BCS_T_END] = { 0 };

	(void)state;
	for (size_t i = 0; i < NPRES; i++) {
		enum bcs_type k = BCS_T_NONE;
		int rc = bcs_dt_kernel(pres[i].h, &k);

		if (pres[i].kernel < 0) {
			assert_int_equal(rc, -1);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(k, pres[i].kernel);
		assert_int_equal(bcs_type_size(k), pres[i].size);
		seen[k] = 1;
	}
	for (int k = 1; k < BCS_T_END; k++)
		assert_true(seen[k]);
}

static void test_null_and_foreign_handles_are_no_types(void **state)
{
	enum bcs_type k;
	const MPI_Datatype bad[] = {
		MPI_DATATYPE_NULL, MPI_INTEGER16, 0, -1, MPI_COMM_WORLD,
		MPI_SUM, (MPI_Datatype)0x4c0004ff, (MPI_Datatype)0x4c000805,
		(MPI_Datatype)0x8c000005, (MPI_Datatype)0x8c000010,
		(MPI_Datatype)0x8c001234,
	};
	int size;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_false(bcs_dt_ok(bad[i]));
		assert_int_equal(bcs_dt_kernel(bad[i], &k), -1);
		assert_int_equal(bcs_dt_size(bad[i]), 0);
		assert_int_equal(bcs_dt_basic(bad[i]), MPI_DATATYPE_NULL);
		assert_int_equal(MPI_Type_size(bad[i], &size), MPI_ERR_TYPE);
		assert_string_equal(stub_err_fn, "MPI_Type_size");
	}
}

static void test_predefined_types_cannot_be_freed(void **state)
{
	MPI_Datatype t = MPI_DOUBLE;

	(void)state;
	assert_int_equal(MPI_Type_free(&t), MPI_ERR_TYPE);
	assert_int_equal(t, MPI_DOUBLE);
	assert_true(bcs_dt_ok(MPI_DOUBLE));
	t = MPI_DOUBLE_INT;
	assert_int_equal(MPI_Type_free(&t), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_commit(&t), MPI_SUCCESS);
}

/* ---- the reference ----------------------------------------------------- */

/* A type as MPI-3.1 §4.1 defines it: each basic element's displacement
 * and bytes, in type-map order; lb and ub by the constructors' rules. */
struct el {
	long off, b;
};

struct ref {
	MPI_Datatype h, basic;
	struct el *map;
	size_t n;
	long lb, ub;
	long align;
	int placed;      /* a copy of an old type went in (bounds set) */
	int committed;   /* predefined, or a dup of a committed type */
};

struct cbase {
	MPI_Datatype h;
	long align; /* as C aligns it */
};

static const struct cbase bases[] = {
	{ MPI_CHAR, 1 },
	{ MPI_SHORT, _Alignof(short) },
	{ MPI_INT, _Alignof(int) },
	{ MPI_DOUBLE, _Alignof(double) },
	{ MPI_DOUBLE_INT, _Alignof(struct double_int) },
	{ MPI_LONG_DOUBLE, _Alignof(long double) },
	{ MPI_C_DOUBLE_COMPLEX, _Alignof(double _Complex) },
	{ MPI_SHORT_INT, _Alignof(struct short_int) },
	{ MPI_C_LONG_DOUBLE_COMPLEX, _Alignof(long double _Complex) },
};
#define NBASES (sizeof bases / sizeof bases[0])

static struct ref ref_of(const struct cbase *c)
{
	struct ref r = { c->h, c->h, malloc(sizeof(struct el)), 1, 0, 0,
			 c->align, 1, 1 };

	r.map[0] = (struct el){ 0, (long)bcs_dt_size(c->h) };
	r.ub = r.map[0].b;
	return r;
}

static struct ref ref_basic(MPI_Datatype h)
{
	for (size_t i = 0; i < NBASES; i++)
		if (bases[i].h == h)
			return ref_of(&bases[i]);
	fail();
	return ref_of(&bases[0]);
}

static struct ref ref_new(void)
{
	struct ref r = { MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, NULL, 0, 0, 0,
			 1, 0, 0 };

	return r;
}

/* A copy of old at shift: its elements, its bounds into r's. */
static void place(struct ref *r, const struct ref *old, long shift)
{
	r->map = realloc(r->map, (r->n + old->n + 1) * sizeof(struct el));
	assert_non_null(r->map);
	for (size_t k = 0; k < old->n; k++)
		r->map[r->n++] = (struct el){ old->map[k].off + shift,
					      old->map[k].b };
	if (!r->placed || shift + old->lb < r->lb)
		r->lb = shift + old->lb;
	if (!r->placed || shift + old->ub > r->ub)
		r->ub = shift + old->ub;
	if (!r->placed)
		r->basic = old->basic;
	else if (r->basic != old->basic)
		r->basic = MPI_DATATYPE_NULL;
	if (old->align > r->align)
		r->align = old->align;
	r->placed = 1;
}

/* vector(count, blocklen, stride) of old; contiguous is the vector of
 * count blocks of one at stride 1. */
static struct ref ref_vector(const struct ref *old, int count, int blocklen,
			     int stride, int contiguous)
{
	struct ref r = ref_new();
	long ext = old->ub - old->lb;
	int rc;

	for (int i = 0; i < count; i++)
		for (int j = 0; j < blocklen; j++)
			place(&r, old, ((long)i * stride + j) * ext);
	if (contiguous)
		rc = MPI_Type_contiguous(count, old->h, &r.h);
	else
		rc = MPI_Type_vector(count, blocklen, stride, old->h, &r.h);
	assert_int_equal(rc, MPI_SUCCESS);
	return r;
}

static struct ref ref_hvector(const struct ref *old, int count, int blocklen,
			      long stride)
{
	struct ref r = ref_new();
	long ext = old->ub - old->lb;

	for (int i = 0; i < count; i++)
		for (int j = 0; j < blocklen; j++)
			place(&r, old, i * stride + j * ext);
	assert_int_equal(MPI_Type_create_hvector(count, blocklen, stride,
						 old->h, &r.h), MPI_SUCCESS);
	return r;
}

/* The indexed family: kind 0 indexed, 1 hindexed, 2 indexed_block,
 * 3 hindexed_block; n random blocks. */
static struct ref ref_indexed(const struct ref *old, int kind, int n)
{
	struct ref r = ref_new();
	long ext = old->ub - old->lb;
	int bl[4], idisp[4], one = 1 + (int)(rnd() % 3), rc;
	MPI_Aint adisp[4];

	for (int i = 0; i < n; i++) {
		bl[i] = kind >= 2 ? one : (int)(rnd() % 4); /* 0 too */
		idisp[i] = (int)(rnd() % 17) - 8;
		adisp[i] = (MPI_Aint)(rnd() % 97) - 48;
		for (int j = 0; j < bl[i]; j++)
			place(&r, old, kind % 2 ? adisp[i] + j * ext :
				       ((long)idisp[i] + j) * ext);
	}
	if (!r.placed) /* no data: the old type's, as datatype.c says */
		r.basic = old->basic;
	switch (kind) {
	case 0:
		rc = MPI_Type_indexed(n, bl, idisp, old->h, &r.h);
		break;
	case 1:
		rc = MPI_Type_create_hindexed(n, bl, adisp, old->h, &r.h);
		break;
	case 2:
		rc = MPI_Type_create_indexed_block(n, one, idisp, old->h, &r.h);
		break;
	default:
		rc = MPI_Type_create_hindexed_block(n, one, adisp, old->h,
						    &r.h);
	}
	assert_int_equal(rc, MPI_SUCCESS);
	return r;
}

/* A struct of old and up to two random basic types, the extent padded
 * to the strictest alignment (as C, and MPICH). */
static struct ref ref_struct(const struct ref *old, struct ref *extra)
{
	struct ref r = ref_new();
	int n = 1 + (int)(rnd() % 3), bl[3];
	MPI_Aint disp[3];
	MPI_Datatype types[3];
	const struct ref *parts[3];

	parts[0] = old;
	for (int i = 1; i < n; i++) {
		extra[i - 1] = ref_of(&bases[rnd() % NBASES]);
		parts[i] = &extra[i - 1];
	}
	for (int i = 0; i < n; i++) {
		long ext = parts[i]->ub - parts[i]->lb;

		bl[i] = (int)(rnd() % 3) + (i == 0);
		disp[i] = (MPI_Aint)(rnd() % 64) - 16;
		types[i] = parts[i]->h;
		for (int j = 0; j < bl[i]; j++)
			place(&r, parts[i], disp[i] + j * ext);
	}
	if (!r.placed)
		r.basic = old->basic;
	if (r.placed && (r.ub - r.lb) % r.align)
		r.ub += r.align - (r.ub - r.lb) % r.align;
	assert_int_equal(MPI_Type_create_struct(n, bl, disp, types, &r.h),
			 MPI_SUCCESS);
	return r;
}

static struct ref ref_resized(const struct ref *old)
{
	struct ref r = ref_new();
	long ext = old->ub - old->lb;

	place(&r, old, 0);
	r.lb = old->lb + (long)(rnd() % 9) - 4;
	r.ub = r.lb + ext + (long)(rnd() % 9) - 2;
	if (r.ub < r.lb)
		r.ub = r.lb;
	assert_int_equal(MPI_Type_create_resized(old->h, r.lb, r.ub - r.lb,
						 &r.h), MPI_SUCCESS);
	return r;
}

static struct ref ref_dup(const struct ref *old)
{
	struct ref r = ref_new();

	place(&r, old, 0);
	r.lb = old->lb;
	r.ub = old->ub;
	r.committed = old->committed; /* MPI-3.1 §4.1.10 */
	assert_int_equal(MPI_Type_dup(old->h, &r.h), MPI_SUCCESS);
	return r;
}

/* A 2-d subarray (C or Fortran order) of a random array of old. */
static struct ref ref_subarray(const struct ref *old)
{
	struct ref r = ref_new();
	long ext = old->ub - old->lb;
	int sizes[2], sub[2], starts[2], order = rnd() % 2 ?
						 MPI_ORDER_C :
						 MPI_ORDER_FORTRAN;

	for (int d = 0; d < 2; d++) {
		sizes[d] = 1 + (int)(rnd() % 4);
		sub[d] = 1 + (int)(rnd() % (unsigned)sizes[d]);
		starts[d] = (int)(rnd() % (unsigned)(sizes[d] - sub[d] + 1));
	}
	/* the type map in memory order: C's last dimension fastest,
	 * Fortran's first */
	if (order == MPI_ORDER_C) {
		for (int a = 0; a < sub[0]; a++)
			for (int b = 0; b < sub[1]; b++)
				place(&r, old, ((long)(starts[0] + a) *
						sizes[1] + starts[1] + b) *
					       ext);
	} else {
		for (int b = 0; b < sub[1]; b++)
			for (int a = 0; a < sub[0]; a++)
				place(&r, old, ((long)(starts[1] + b) *
						sizes[0] + starts[0] + a) *
					       ext);
	}
	r.lb = 0;
	r.ub = (long)sizes[0] * sizes[1] * ext;
	assert_int_equal(MPI_Type_create_subarray(2, sizes, sub, starts, order,
						  old->h, &r.h), MPI_SUCCESS);
	return r;
}

/* A random nest of 1 to 4 constructors over a random basic type, at
 * most a few hundred elements; a struct's extra basic types go in
 * extra (freed with the chain). */
static struct ref ref_random(struct ref *chain, struct ref *extra,
			     int *levels)
{
	int n = 1 + (int)(rnd() % 4);

	chain[0] = ref_of(&bases[rnd() % NBASES]);
	for (int l = 1; l <= n; l++) {
		const struct ref *o = &chain[l - 1];
		int count = 1 + (int)(rnd() % 4);
		int blocklen = 1 + (int)(rnd() % 3);
		int stride = (int)(rnd() % 13) - 6;

		switch (rnd() % 10) {
		case 0:
			chain[l] = ref_vector(o, count, 1, 1, 1);
			break;
		case 1:
			chain[l] = ref_vector(o, count, blocklen, stride, 0);
			break;
		case 2:
			chain[l] = ref_hvector(o, count, blocklen,
					       (long)(rnd() % 101) - 50);
			break;
		case 3:
		case 4:
			chain[l] = ref_indexed(o, (int)(rnd() % 4), count);
			break;
		case 5:
		case 6:
			chain[l] = ref_struct(o, &extra[2 * l]);
			break;
		case 7:
			chain[l] = ref_resized(o);
			break;
		case 8:
			chain[l] = ref_dup(o);
			break;
		default:
			chain[l] = ref_subarray(o);
		}
		if (chain[l].n > 300 || chain[l].n == 0) {
			n = l;
			break;
		}
	}
	*levels = n;
	return chain[n];
}

static long ref_size(const struct ref *r)
{
	long s = 0;

	for (size_t k = 0; k < r->n; k++)
		s += r->map[k].b;
	return s;
}

/* count elements of r at origin, packed byte by byte in type-map order. */
static void ref_pack(const struct ref *r, int count, const unsigned char *o,
		     unsigned char *out)
{
	long ext = r->ub - r->lb;

	for (int e = 0; e < count; e++)
		for (size_t k = 0; k < r->n; k++) {
			memcpy(out, o + e * ext + r->map[k].off,
			       (size_t)r->map[k].b);
			out += r->map[k].b;
		}
}

/* The first bytes of the stream in, byte by byte, into the elements. */
static void ref_unpack(const struct ref *r, int count, const unsigned char *in,
		       size_t bytes, unsigned char *o)
{
	long ext = r->ub - r->lb;

	for (int e = 0; e < count; e++)
		for (size_t k = 0; k < r->n; k++)
			for (long b = 0; b < r->map[k].b; b++) {
				if (!bytes--)
					return;
				o[e * ext + r->map[k].off + b] = *in++;
			}
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)rnd();
}

struct runs {
	long *bytes;         /* each byte's offset, in order */
	size_t n;
	const unsigned char *starts; /* by stream byte: an element starts */
	int odd;             /* a run not of whole basic elements */
};

static int collect(void *ctx, MPI_Aint off, size_t len)
{
	struct runs *r = ctx;

	if (len == 0 || !r->starts[r->n] || !r->starts[r->n + len])
		r->odd = 1;
	for (size_t i = 0; i < len; i++)
		r->bytes[r->n++] = off + (long)i;
	return 0;
}

/* Everything datatype.c says about r against the reference. */
static void check_type(const struct ref *r)
{
	long ext = r->ub - r->lb, tlo = 0, thi = 0;
	size_t size = (size_t)ref_size(r);
	MPI_Aint lb, extent, tlb, span;
	int isize, dense = ext == (long)size && r->lb == 0;

	assert_int_equal(MPI_Type_size(r->h, &isize), MPI_SUCCESS);
	assert_int_equal(isize, (int)size);
	assert_int_equal(MPI_Type_get_extent(r->h, &lb, &extent), MPI_SUCCESS);
	assert_int_equal(lb, r->lb);
	assert_int_equal(extent, ext);
	assert_int_equal(bcs_dt_basic(r->h), r->basic);
	for (size_t k = 0, at = 0; k < r->n; at += (size_t)r->map[k++].b) {
		dense = dense && r->map[k].off == (long)at;
		if (k == 0 || r->map[k].off < tlo)
			tlo = r->map[k].off;
		if (k == 0 || r->map[k].off + r->map[k].b > thi)
			thi = r->map[k].off + r->map[k].b;
	}
	assert_int_equal(bcs_dt_contig(r->h), dense || size == 0);
	/* overlapping entries, in one element and in two */
	for (int count = 1; count <= 2; count++) {
		int clash = 0;

		for (size_t a = 0; a < r->n * count && !clash; a++)
			for (size_t b = a + 1; b < r->n * count && !clash;
			     b++) {
				long oa = r->map[a % r->n].off +
					  (long)(a / r->n) * ext;
				long ob = r->map[b % r->n].off +
					  (long)(b / r->n) * ext;

				clash = oa < ob + r->map[b % r->n].b &&
					ob < oa + r->map[a % r->n].b;
			}
		assert_int_equal(bcs_dt_overlaps(r->h, count), clash);
	}

	for (int count = 0; count <= 3; count++) {
		long lo = tlo < r->lb ? tlo : r->lb;
		long hi = (count > 0 ? count - 1 : 0) * ext +
			  (thi > r->ub ? thi : r->ub);
		size_t memlen = (size_t)(hi - lo) + 64, total = size * count;
		unsigned char *mem = malloc(memlen), *mem2 = malloc(memlen);
		unsigned char *got = malloc(total + 1);
		unsigned char *want = malloc(total + 1);
		unsigned char *starts = calloc(total + 1, 1);
		unsigned char *o = mem + 32 - lo, *o2 = mem2 + 32 - lo;
		struct runs runs = { malloc((total + 1) * sizeof(long)), 0,
				     starts, 0 };
		size_t cut, p = 0;

		for (int e = 0; e < count; e++)
			for (size_t k = 0; k < r->n; p += (size_t)r->map[k++].b)
				starts[p] = 1;
		starts[total] = 1;
		/* the span: the elements' lowest and highest byte */
		assert_int_equal(bcs_dt_span(r->h, count, &tlb, &span), 0);
		if (count && size) {
			assert_int_equal(tlb, tlo);
			assert_int_equal(span, (count - 1) * ext + thi - tlo);
		} else {
			assert_int_equal(span, 0);
		}
		/* pack */
		fill(mem, memlen);
		bcs_dt_pack(r->h, count, o, got);
		ref_pack(r, count, o, want);
		assert_memory_equal(got, want, total);
		/* walk: the same bytes in the same order, whole elements */
		assert_int_equal(bcs_dt_walk(r->h, count, collect, &runs), 0);
		assert_int_equal(runs.n, total);
		assert_false(runs.odd);
		p = 0;
		for (int e = 0; e < count; e++)
			for (size_t k = 0; k < r->n; k++)
				for (long b = 0; b < r->map[k].b; b++, p++)
					assert_int_equal(runs.bytes[p],
							 e * ext +
							 r->map[k].off + b);
		/* elements: every whole one, none of a cut one */
		assert_int_equal(bcs_dt_elements(r->h, total),
				 (int64_t)r->n * count);
		/* unpack, whole and cut anywhere: the gaps untouched */
		fill(want, total);
		for (int t = 0; t < 3; t++) {
			cut = t == 0 ? total : (size_t)(rnd() % (total + 1));
			fill(mem, memlen);
			memcpy(mem2, mem, memlen);
			bcs_dt_unpack(r->h, count, want, cut, o);
			ref_unpack(r, count, want, cut, o2);
			assert_memory_equal(mem, mem2, memlen);
		}
		free(starts);
		free(runs.bytes);
		free(mem);
		free(mem2);
		free(got);
		free(want);
	}
}

static void ref_free(struct ref *r)
{
	if (r->h != r->basic || !r->placed)
		assert_int_equal(MPI_Type_free(&r->h), MPI_SUCCESS);
	free(r->map);
}

/* ---- derived types ----------------------------------------------------- */

static void test_nested_types_pack_as_the_reference(void **state)
{
	(void)state;
	fuzz_seed_begin(0x5eed7e57);
	for (int iter = 0; iter < 3000; iter++) {
		struct ref chain[5], extra[10];
		int levels;
		struct ref r;

		memset(extra, 0, sizeof(extra));
		r = ref_random(chain, extra, &levels);
		/* not committed yet (but a dup of a committed type) */
		assert_int_equal(bcs_dt_ok(r.h), r.committed);
		assert_int_equal(MPI_Type_commit(&r.h), MPI_SUCCESS);
		assert_true(bcs_dt_ok(r.h));
		check_type(&r);
		for (int l = levels; l >= 0; l--)
			ref_free(&chain[l]);
		for (int k = 0; k < 10; k++)
			free(extra[k].map);
	}
}

static void test_vector_extent_is_mpis(void **state)
{
	struct ref i = ref_basic(MPI_INT), d = ref_basic(MPI_DOUBLE);
	struct ref v = ref_vector(&i, 3, 2, 4, 0);
	struct ref c = ref_vector(&d, 5, 1, 1, 1);
	MPI_Aint lb, ext;

	(void)state;
	/* ((count - 1) * stride + blocklength) * extent */
	assert_int_equal(MPI_Type_get_extent(v.h, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, ((3 - 1) * 4 + 2) * 4);
	assert_int_equal(bcs_dt_size(v.h), 3 * 2 * 4);
	assert_int_equal(MPI_Type_commit(&v.h), MPI_SUCCESS);
	assert_false(bcs_dt_contig(v.h));
	check_type(&v);
	/* contiguous doubles: one run, used in place */
	assert_int_equal(MPI_Type_commit(&c.h), MPI_SUCCESS);
	assert_true(bcs_dt_contig(c.h));
	assert_int_equal(bcs_dt_extent(c.h), 40);
	check_type(&c);
	ref_free(&v);
	ref_free(&c);
	free(i.map);
	free(d.map);
}

/* MPICH's values: vector(3, 2, -4, MPI_INT) lies from -32 to 8, and a
 * vector of it with stride -1 from -72 to 8. */
static void test_negative_strides_reach_below_the_buffer(void **state)
{
	struct ref i = ref_basic(MPI_INT);
	struct ref v = ref_vector(&i, 3, 2, -4, 0);
	struct ref w = ref_vector(&v, 2, 1, -1, 0);
	MPI_Aint lb, ext;

	(void)state;
	assert_int_equal(MPI_Type_get_extent(v.h, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, -32);
	assert_int_equal(ext, 40);
	assert_int_equal(MPI_Type_get_extent(w.h, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, -72);
	assert_int_equal(ext, 80);
	assert_int_equal(MPI_Type_commit(&v.h), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&w.h), MPI_SUCCESS);
	check_type(&v);
	check_type(&w);
	ref_free(&w);
	ref_free(&v);
	free(i.map);
}

static void test_empty_types_have_no_data(void **state)
{
	MPI_Datatype none, holes, empty;
	MPI_Aint lb, ext, tlb, span;
	unsigned char buf[64], out[8] = { 0 };

	(void)state;
	assert_int_equal(MPI_Type_vector(0, 2, 4, MPI_INT, &none), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_extent(none, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, 0);
	/* blocklength 0 keeps MPI's (and MPICH's) extent formula */
	assert_int_equal(MPI_Type_vector(3, 0, 4, MPI_INT, &holes),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_extent(holes, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(ext, 32);
	assert_int_equal(bcs_dt_size(holes), 0);
	assert_int_equal(MPI_Type_contiguous(0, MPI_DOUBLE, &empty),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&holes), MPI_SUCCESS);
	assert_true(bcs_dt_contig(holes)); /* nothing to gather */
	memset(buf, 7, sizeof buf);
	bcs_dt_pack(holes, 2, buf, out);
	bcs_dt_unpack(holes, 2, out, 0, buf);
	assert_int_equal(bcs_dt_span(holes, 2, &tlb, &span), 0);
	assert_int_equal(span, 0);
	assert_int_equal(MPI_Type_free(&none), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&holes), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&empty), MPI_SUCCESS);
}

/* The common case must stay a plain strided copy: a column of a
 * row-major matrix of doubles, packed and unpacked. */
static void test_vector_of_doubles_packs_the_column(void **state)
{
	enum { ROWS = 1000, COLS = 7 };
	static double m[ROWS][COLS], col[ROWS];
	MPI_Datatype column;

	(void)state;
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			m[r][c] = r * 10 + c;
	assert_int_equal(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&column), MPI_SUCCESS);
	bcs_dt_pack(column, 1, &m[0][3], col);
	for (int r = 0; r < ROWS; r++)
		assert_true(col[r] == r * 10 + 3);
	for (int r = 0; r < ROWS; r++)
		col[r] = -r;
	bcs_dt_unpack(column, 1, col, sizeof col, &m[0][5]);
	for (int r = 0; r < ROWS; r++) {
		assert_true(m[r][5] == -r);
		assert_true(m[r][4] == r * 10 + 4);
		assert_true(m[r][6] == r * 10 + 6);
	}
	assert_int_equal(MPI_Type_free(&column), MPI_SUCCESS);
}

static void test_bad_arguments_are_refused(void **state)
{
	MPI_Datatype t = MPI_DATATYPE_NULL, v;
	int size;

	(void)state;
	assert_int_equal(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
	assert_int_equal(MPI_Type_vector(2, -1, 1, MPI_INT, &t),
			 MPI_ERR_COUNT);
	assert_int_equal(MPI_Type_vector(-2, 1, 1, MPI_INT, &t),
			 MPI_ERR_COUNT);
	assert_int_equal(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t),
			 MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(t, MPI_DATATYPE_NULL);
	/* past an int: MPI_UNDEFINED; past MPI_Aint: refused, not wrapped */
	assert_int_equal(MPI_Type_contiguous(INT_MAX, MPI_INT, &t),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_size(t, &size), MPI_SUCCESS);
	assert_int_equal(size, MPI_UNDEFINED);
	assert_int_equal(bcs_dt_size(t), (size_t)INT_MAX * 4);
	assert_int_equal(MPI_Type_free(&t), MPI_SUCCESS);
	assert_int_equal(MPI_Type_contiguous(INT_MAX, MPI_C_LONG_DOUBLE_COMPLEX,
					     &v), MPI_SUCCESS);
	assert_int_equal(MPI_Type_contiguous(INT_MAX, v, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_vector(2, 1, INT_MAX, v, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_vector(INT_MAX, INT_MAX, 1, v, &t),
			 MPI_ERR_ARG);
	assert_int_equal(t, MPI_DATATYPE_NULL);
	assert_int_equal(MPI_Type_free(&v), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_free(NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
}

/* Type_get_envelope/contents give back what each constructor was given
 * (MPI-3.1 §4.1.13), derived types among them as duplicates. */
static void test_contents_are_what_was_given(void **state)
{
	MPI_Datatype vec, st, res, dup, sub, got[3];
	int bl[2] = { 2, 1 }, ints[16], ni, na, nd, comb, len;
	MPI_Aint disp[2] = { 0, 16 }, aints[4], lb, ext;
	MPI_Datatype types[2];
	int sizes[2] = { 4, 5 }, subs[2] = { 2, 3 }, starts[2] = { 1, 2 };
	char name[MPI_MAX_OBJECT_NAME];

	(void)state;
	assert_int_equal(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb),
			 MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_NAMED);
	assert_int_equal(ni + na + nd, 0);
	assert_int_equal(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, aints,
					       got), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb),
			 MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_VECTOR);
	assert_int_equal(ni, 3);
	assert_int_equal(na, 0);
	assert_int_equal(nd, 1);
	assert_int_equal(MPI_Type_get_contents(vec, 16, 4, 3, ints, aints,
					       got), MPI_SUCCESS);
	assert_int_equal(ints[0], 3);
	assert_int_equal(ints[1], 2);
	assert_int_equal(ints[2], 5);
	assert_int_equal(got[0], MPI_DOUBLE); /* predefined: itself */
	/* a struct of the vector and an int; the vector freed meanwhile */
	types[0] = vec;
	types[1] = MPI_INT;
	assert_int_equal(MPI_Type_create_struct(2, bl, disp, types, &st),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&vec), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_envelope(st, &ni, &na, &nd, &comb),
			 MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_STRUCT);
	assert_int_equal(ni, 3);
	assert_int_equal(na, 2);
	assert_int_equal(nd, 2);
	assert_int_equal(MPI_Type_get_contents(st, 2, 2, 2, ints, aints, got),
			 MPI_ERR_ARG); /* no room for the ints */
	assert_int_equal(MPI_Type_get_contents(st, 3, 2, 2, ints, aints, got),
			 MPI_SUCCESS);
	assert_int_equal(ints[0], 2);
	assert_int_equal(ints[1], 2);
	assert_int_equal(ints[2], 1);
	assert_int_equal(aints[1], 16);
	assert_int_equal(got[1], MPI_INT);
	/* the vector, freed by the program, comes back as a duplicate */
	assert_int_equal(MPI_Type_get_envelope(got[0], &ni, &na, &nd, &comb),
			 MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_DUP);
	assert_int_equal(bcs_dt_size(got[0]), 6 * 8);
	assert_int_equal(MPI_Type_free(&got[0]), MPI_SUCCESS);
	/* resized: lb and extent as addresses */
	assert_int_equal(MPI_Type_create_resized(st, -8, 64, &res),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_contents(res, 0, 2, 1, ints, aints, got),
			 MPI_SUCCESS);
	assert_int_equal(aints[0], -8);
	assert_int_equal(aints[1], 64);
	assert_int_equal(MPI_Type_get_extent(res, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, -8);
	assert_int_equal(ext, 64);
	assert_int_equal(MPI_Type_free(&got[0]), MPI_SUCCESS);
	assert_int_equal(MPI_Type_create_resized(st, 0, -8, &dup),
			 MPI_ERR_ARG); /* negative extents: refused */
	/* dup: committed as its original */
	assert_int_equal(MPI_Type_commit(&res), MPI_SUCCESS);
	assert_int_equal(MPI_Type_dup(res, &dup), MPI_SUCCESS);
	assert_true(bcs_dt_ok(dup));
	assert_int_equal(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb),
			 MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_DUP);
	/* subarray */
	assert_int_equal(MPI_Type_create_subarray(2, sizes, subs, starts,
						  MPI_ORDER_C, MPI_INT, &sub),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb),
			 MPI_SUCCESS);
	assert_int_equal(comb, MPI_COMBINER_SUBARRAY);
	assert_int_equal(ni, 8);
	assert_int_equal(MPI_Type_get_contents(sub, 8, 0, 1, ints, aints, got),
			 MPI_SUCCESS);
	assert_int_equal(ints[0], 2);
	assert_int_equal(ints[3], 2);
	assert_int_equal(ints[6], 2);
	assert_int_equal(ints[7], MPI_ORDER_C);
	assert_int_equal(MPI_Type_get_extent(sub, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, 4 * 5 * 4);
	assert_int_equal(bcs_dt_size(sub), 2 * 3 * 4);
	/* names: the predefined ones', a set one, cut at the limit */
	assert_int_equal(MPI_Type_get_name(MPI_DOUBLE, name, &len),
			 MPI_SUCCESS);
	assert_string_equal(name, "MPI_DOUBLE");
	assert_int_equal(len, 10);
	assert_int_equal(MPI_Type_get_name(sub, name, &len), MPI_SUCCESS);
	assert_int_equal(len, 0);
	assert_int_equal(MPI_Type_set_name(sub, "halo"), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_name(sub, name, &len), MPI_SUCCESS);
	assert_string_equal(name, "halo");
	assert_int_equal(MPI_Type_set_name(MPI_INT, "my int"), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_name(MPI_INT, name, &len), MPI_SUCCESS);
	assert_string_equal(name, "my int");
	assert_int_equal(MPI_Type_free(&sub), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&dup), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&res), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&st), MPI_SUCCESS);
}

/* A struct's extent is padded as C pads the struct; mixed basic types
 * have no single basic type (no reduction on them). */
static void test_struct_is_laid_out_as_c(void **state)
{
	struct s {
		char c;
		double d;
		int i;
	} v[2] = { { 'a', 1.5, 7 }, { 'b', -2.5, 9 } }, w[2];
	int bl[3] = { 1, 1, 1 };
	MPI_Aint disp[3] = { offsetof(struct s, c), offsetof(struct s, d),
			     offsetof(struct s, i) }, lb, ext;
	MPI_Datatype types[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT }, st;
	unsigned char packed[2 * 13];
	MPI_Count n;

	(void)state;
	assert_int_equal(MPI_Type_create_struct(3, bl, disp, types, &st),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&st), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_extent(st, &lb, &ext), MPI_SUCCESS);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, sizeof(struct s));
	assert_int_equal(bcs_dt_size(st), 13);
	assert_int_equal(bcs_dt_basic(st), MPI_DATATYPE_NULL);
	bcs_dt_pack(st, 2, v, packed);
	memset(w, 0, sizeof(w));
	bcs_dt_unpack(st, 2, packed, sizeof(packed), w);
	assert_true(w[1].c == 'b' && w[1].d == -2.5 && w[1].i == 9);
	assert_int_equal(bcs_dt_elements(st, 13 + 1 + 8), 5);
	assert_int_equal(bcs_dt_elements_bytes(st, 5, (uint64_t *)&n), 0);
	assert_int_equal(n, 13 + 1 + 8);
	assert_int_equal(MPI_Type_free(&st), MPI_SUCCESS);
}

static void test_constructors_refuse_bad_arguments(void **state)
{
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int bl[2] = { 1, -1 }, d[2] = { 0, 1 }, sizes[1] = { 4 };
	int subs[1] = { 3 }, starts[1] = { 2 };
	MPI_Aint ad[2] = { 0, 8 };
	MPI_Datatype types[2] = { MPI_INT, MPI_DATATYPE_NULL };

	(void)state;
	assert_int_equal(MPI_Type_indexed(2, bl, d, MPI_INT, &t),
			 MPI_ERR_COUNT);
	assert_int_equal(MPI_Type_indexed(-1, bl, d, MPI_INT, &t),
			 MPI_ERR_COUNT);
	assert_int_equal(MPI_Type_create_hindexed(2, NULL, ad, MPI_INT, &t),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Type_create_indexed_block(2, -2, d, MPI_INT, &t),
			 MPI_ERR_COUNT);
	bl[1] = 1;
	assert_int_equal(MPI_Type_create_struct(2, bl, ad, types, &t),
			 MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_create_struct(2, bl, ad, NULL, &t),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Type_create_subarray(1, sizes, subs, starts,
						  MPI_ORDER_C, MPI_INT, &t),
			 MPI_ERR_ARG); /* 2 + 3 > 4 */
	assert_int_equal(MPI_Type_create_subarray(1, sizes, subs, d,
						  77, MPI_INT, &t),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
	assert_int_equal(t, MPI_DATATYPE_NULL);
}

/* Datatype attributes: copied by Type_dup through the copy callback,
 * deleted by Type_free and by replacement; on a predefined type too. */
static int dt_copies, dt_deletes;

static int dt_copy(MPI_Datatype t, int key, void *extra, void *in, void *out,
		   int *flag)
{
	(void)t;
	(void)key;
	(void)extra;
	dt_copies++;
	*(void **)out = (char *)in + 1;
	*flag = 1;
	return MPI_SUCCESS;
}

static int dt_delete(MPI_Datatype t, int key, void *val, void *extra)
{
	(void)t;
	(void)key;
	(void)val;
	(void)extra;
	dt_deletes++;
	return MPI_SUCCESS;
}

static void test_datatype_attributes(void **state)
{
	static char base[4];
	MPI_Datatype v, d;
	void *val;
	int key, flag;

	(void)state;
	assert_int_equal(MPI_Type_create_keyval(dt_copy, dt_delete, &key,
						NULL), MPI_SUCCESS);
	assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &v), MPI_SUCCESS);
	assert_int_equal(MPI_Type_set_attr(v, key, base), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_attr(v, key, &val, &flag), MPI_SUCCESS);
	assert_true(flag && val == base);
	assert_int_equal(MPI_Type_dup(v, &d), MPI_SUCCESS);
	assert_int_equal(dt_copies, 1);
	assert_int_equal(MPI_Type_get_attr(d, key, &val, &flag), MPI_SUCCESS);
	assert_true(flag && val == base + 1);
	assert_int_equal(MPI_Type_set_attr(v, key, base + 2), MPI_SUCCESS);
	assert_int_equal(dt_deletes, 1); /* the old value's */
	assert_int_equal(MPI_Type_free(&v), MPI_SUCCESS);
	assert_int_equal(dt_deletes, 2);
	assert_int_equal(MPI_Type_delete_attr(d, key), MPI_SUCCESS);
	assert_int_equal(dt_deletes, 3);
	assert_int_equal(MPI_Type_get_attr(d, key, &val, &flag), MPI_SUCCESS);
	assert_false(flag);
	assert_int_equal(MPI_Type_delete_attr(d, key), MPI_ERR_KEYVAL);
	/* on a predefined type */
	assert_int_equal(MPI_Type_set_attr(MPI_DOUBLE, key, base), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_attr(MPI_DOUBLE, key, &val, &flag),
			 MPI_SUCCESS);
	assert_true(flag && val == base);
	assert_int_equal(MPI_Type_delete_attr(MPI_DOUBLE, key), MPI_SUCCESS);
	/* a communicator's keyval is not a datatype's */
	assert_int_equal(MPI_Type_get_attr(d, 0x64400001, &val, &flag),
			 MPI_ERR_KEYVAL);
	assert_int_equal(MPI_Type_free_keyval(&key), MPI_SUCCESS);
	assert_int_equal(key, MPI_KEYVAL_INVALID);
	assert_int_equal(MPI_Type_free(&d), MPI_SUCCESS);
}

/* ---- lifetime ---------------------------------------------------------- */

static void test_freeing_the_old_type_keeps_the_new(void **state)
{
	struct ref i = ref_basic(MPI_INT);
	struct ref v = ref_vector(&i, 3, 1, 2, 0);
	struct ref c = ref_vector(&v, 2, 1, 1, 1);
	int size;

	(void)state;
	assert_int_equal(MPI_Type_commit(&c.h), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&v.h), MPI_SUCCESS);
	assert_int_equal(v.h, MPI_DATATYPE_NULL);
	check_type(&c);
	v.h = MPI_DATATYPE_NULL;
	assert_int_equal(MPI_Type_size(v.h, &size), MPI_ERR_TYPE);
	ref_free(&c);
	free(v.map);
	free(i.map);
}

static void test_freed_handles_are_dead(void **state)
{
	MPI_Datatype t, stale;
	int size;

	(void)state;
	assert_int_equal(MPI_Type_contiguous(2, MPI_INT, &t), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&t), MPI_SUCCESS);
	stale = t;
	assert_int_equal(MPI_Type_free(&t), MPI_SUCCESS);
	assert_int_equal(t, MPI_DATATYPE_NULL);
	assert_false(bcs_dt_ok(stale));
	assert_int_equal(MPI_Type_size(stale, &size), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_free(&stale), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_commit(&stale), MPI_ERR_TYPE);
}

/* A receive in progress keeps its type through MPI_Type_free. */
static void test_a_held_type_outlives_its_handle(void **state)
{
	MPI_Datatype t, h;
	int out[6] = { 0 };
	const int in[3] = { 1, 2, 3 };

	(void)state;
	assert_int_equal(MPI_Type_vector(3, 1, 2, MPI_INT, &t), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&t), MPI_SUCCESS);
	h = t;
	assert_int_equal(bcs_dt_hold(h), 0);
	assert_int_equal(MPI_Type_free(&t), MPI_SUCCESS);
	assert_false(bcs_dt_ok(h)); /* no new use */
	bcs_dt_unpack(h, 1, in, sizeof in, out);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[2], 2);
	assert_int_equal(out[4], 3);
	assert_int_equal(out[1] | out[3] | out[5], 0);
	bcs_dt_release(h);
	assert_int_equal(bcs_dt_size(h), 0); /* gone */
	assert_int_equal(bcs_dt_hold(h), -1);
	/* predefined: nothing to hold */
	assert_int_equal(bcs_dt_hold(MPI_INT), 0);
	bcs_dt_release(MPI_INT);
	assert_true(bcs_dt_ok(MPI_INT));
}

static void test_many_types_get_distinct_handles(void **state)
{
	enum { N = 1000 };
	static MPI_Datatype t[N];

	(void)state;
	for (int i = 0; i < N; i++) {
		assert_int_equal(MPI_Type_contiguous(i + 1, MPI_CHAR, &t[i]),
				 MPI_SUCCESS);
		for (int j = 0; j < i; j += 97)
			assert_int_not_equal(t[i], t[j]);
	}
	for (int i = 0; i < N; i += 2)
		assert_int_equal(MPI_Type_free(&t[i]), MPI_SUCCESS);
	for (int i = 1; i < N; i += 2)
		assert_int_equal(bcs_dt_size(t[i]), (size_t)i + 1);
	for (int i = 1; i < N; i += 2)
		assert_int_equal(MPI_Type_free(&t[i]), MPI_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predefined_types_have_their_c_sizes),
		cmocka_unit_test(test_kernel_types_cover_every_reduction_type),
		cmocka_unit_test(test_null_and_foreign_handles_are_no_types),
		cmocka_unit_test(test_predefined_types_cannot_be_freed),
		cmocka_unit_test(test_nested_types_pack_as_the_reference),
		cmocka_unit_test(test_vector_extent_is_mpis),
		cmocka_unit_test(test_negative_strides_reach_below_the_buffer),
		cmocka_unit_test(test_empty_types_have_no_data),
		cmocka_unit_test(test_vector_of_doubles_packs_the_column),
		cmocka_unit_test(test_bad_arguments_are_refused),
		cmocka_unit_test(test_contents_are_what_was_given),
		cmocka_unit_test(test_struct_is_laid_out_as_c),
		cmocka_unit_test(test_constructors_refuse_bad_arguments),
		cmocka_unit_test(test_datatype_attributes),
		cmocka_unit_test(test_freeing_the_old_type_keeps_the_new),
		cmocka_unit_test(test_freed_handles_are_dead),
		cmocka_unit_test(test_a_held_type_outlives_its_handle),
		cmocka_unit_test(test_many_types_get_distinct_handles),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
