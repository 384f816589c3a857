/*
 * test_bcs_reduce.c — BCS-MPI's reduction kernels (proto/bcs_reduce.c)
 * against the contract in bcs_reduce.h and MPI-3.1 §5.9.2: the validity
 * table transcribed here from the standard, independently of the
 * library's; every operation on every type against a plain reference
 * computed here (integers in 64-bit arithmetic truncated, pairs by the
 * standard's wording), for 0, 1, 7 and 1000 elements, aligned and not,
 * and in place; then the corner cases the header promises: wrapping,
 * MINLOC/MAXLOC ties, NaN and signed zeros, logical results, padding,
 * and the floating-point environment pinned and put back.  Built twice:
 * bcs-reduce-fma runs it on kernels compiled with -O3 -mavx2 -mfma.
 * STORM_FUZZ_SEED=N replays the random inputs.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <cmocka.h>

#include "fuzz_rng.h"

#include <storm_bcs.h>

/* ---- the standard, transcribed ------------------------------------------ */

/* MPI-3.1 §5.9.2's groups; PAIR for §5.9.4's MINLOC/MAXLOC types, NONE for
 * the text types no reduction takes. */
enum std_cat { NONE, CINT, FINT, FLT, LOGICAL, CPLX, BYTE, PAIR };

/* How the reference computes on an element. */
enum cls { C_OPAQUE, C_INT, C_FLOAT, C_DOUBLE, C_LDOUBLE, C_CFLOAT,
	   C_CDOUBLE, C_CLDOUBLE, C_PAIR };

/* A pair's value and index: what they are, where they are. */
enum num { N_SHORT, N_INT, N_LONG, N_FLOAT, N_DOUBLE, N_LDOUBLE };

struct pair_layout {
	enum num vk, ik;
	size_t voff, ioff;
};

struct tt {
	enum bcs_type t;
	const char *name;
	enum std_cat cat;
	enum cls cls;
	size_t size;
	int sgn;                  /* C_INT */
	struct pair_layout pair;  /* C_PAIR */
};

/* The C layouts MPI names, declared here on their own. */
struct float_int { float v; int i; };
struct double_int { double v; int i; };
struct long_int { long v; int i; };
struct int_int { int v; int i; };
struct short_int { short v; int i; };
struct ldouble_int { long double v; int i; };
struct float_float { float v; float i; };
struct double_double { double v; double i; };

#define TI(t, n, c, T, s) { t, n, c, C_INT, sizeof(T), s, { 0, 0, 0, 0 } }
#define TF(t, n, c, k, sz) { t, n, c, k, sz, 0, { 0, 0, 0, 0 } }
#define TP(t, n, S, V, X) \
	{ t, n, PAIR, C_PAIR, sizeof(S), 0, \
	  { V, X, offsetof(S, v), offsetof(S, i) } }

static const struct tt all[] = {
	TF(BCS_T_CHAR, "MPI_CHAR", NONE, C_OPAQUE, 1),
	TI(BCS_T_SIGNED_CHAR, "MPI_SIGNED_CHAR", CINT, signed char, 1),
	TI(BCS_T_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", CINT, unsigned char, 0),
	TI(BCS_T_SHORT, "MPI_SHORT", CINT, short, 1),
	TI(BCS_T_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", CINT, unsigned short, 0),
	TI(BCS_T_INT, "MPI_INT", CINT, int, 1),
	TI(BCS_T_UNSIGNED, "MPI_UNSIGNED", CINT, unsigned, 0),
	TI(BCS_T_LONG, "MPI_LONG", CINT, long, 1),
	TI(BCS_T_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", CINT, unsigned long, 0),
	TI(BCS_T_LONG_LONG, "MPI_LONG_LONG", CINT, long long, 1),
	TI(BCS_T_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", CINT,
	  unsigned long long, 0),
	TI(BCS_T_INT8, "MPI_INT8_T", CINT, int8_t, 1),
	TI(BCS_T_INT16, "MPI_INT16_T", CINT, int16_t, 1),
	TI(BCS_T_INT32, "MPI_INT32_T", CINT, int32_t, 1),
	TI(BCS_T_INT64, "MPI_INT64_T", CINT, int64_t, 1),
	TI(BCS_T_UINT8, "MPI_UINT8_T", CINT, uint8_t, 0),
	TI(BCS_T_UINT16, "MPI_UINT16_T", CINT, uint16_t, 0),
	TI(BCS_T_UINT32, "MPI_UINT32_T", CINT, uint32_t, 0),
	TI(BCS_T_UINT64, "MPI_UINT64_T", CINT, uint64_t, 0),
	TF(BCS_T_WCHAR, "MPI_WCHAR", NONE, C_OPAQUE, sizeof(wchar_t)),
	TI(BCS_T_BYTE, "MPI_BYTE", BYTE, unsigned char, 0),
	TF(BCS_T_FLOAT, "MPI_FLOAT", FLT, C_FLOAT, sizeof(float)),
	TF(BCS_T_DOUBLE, "MPI_DOUBLE", FLT, C_DOUBLE, sizeof(double)),
	TF(BCS_T_LONG_DOUBLE, "MPI_LONG_DOUBLE", FLT, C_LDOUBLE,
	  sizeof(long double)),
	TF(BCS_T_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", CPLX, C_CFLOAT,
	  sizeof(float _Complex)),
	TF(BCS_T_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", CPLX, C_CDOUBLE,
	  sizeof(double _Complex)),
	TF(BCS_T_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", CPLX,
	  C_CLDOUBLE, sizeof(long double _Complex)),
	TI(BCS_T_C_BOOL, "MPI_C_BOOL", LOGICAL, _Bool, 0),
	TI(BCS_T_AINT, "MPI_AINT", FINT, intptr_t, 1),
	TI(BCS_T_OFFSET, "MPI_OFFSET", FINT, int64_t, 1),
	TI(BCS_T_COUNT, "MPI_COUNT", FINT, int64_t, 1),
	TI(BCS_T_INTEGER, "MPI_INTEGER", FINT, int32_t, 1),
	TF(BCS_T_REAL, "MPI_REAL", FLT, C_FLOAT, 4),
	TF(BCS_T_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", FLT, C_DOUBLE, 8),
	TI(BCS_T_LOGICAL, "MPI_LOGICAL", LOGICAL, uint32_t, 0),
	TF(BCS_T_COMPLEX, "MPI_COMPLEX", CPLX, C_CFLOAT, 8),
	TF(BCS_T_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", CPLX, C_CDOUBLE, 16),
	TI(BCS_T_INTEGER1, "MPI_INTEGER1", FINT, int8_t, 1),
	TI(BCS_T_INTEGER2, "MPI_INTEGER2", FINT, int16_t, 1),
	TI(BCS_T_INTEGER4, "MPI_INTEGER4", FINT, int32_t, 1),
	TI(BCS_T_INTEGER8, "MPI_INTEGER8", FINT, int64_t, 1),
	TF(BCS_T_REAL4, "MPI_REAL4", FLT, C_FLOAT, 4),
	TF(BCS_T_REAL8, "MPI_REAL8", FLT, C_DOUBLE, 8),
	TF(BCS_T_COMPLEX8, "MPI_COMPLEX8", CPLX, C_CFLOAT, 8),
	TF(BCS_T_COMPLEX16, "MPI_COMPLEX16", CPLX, C_CDOUBLE, 16),
	TP(BCS_T_FLOAT_INT, "MPI_FLOAT_INT", struct float_int, N_FLOAT, N_INT),
	TP(BCS_T_DOUBLE_INT, "MPI_DOUBLE_INT", struct double_int, N_DOUBLE,
	  N_INT),
	TP(BCS_T_LONG_INT, "MPI_LONG_INT", struct long_int, N_LONG, N_INT),
	TP(BCS_T_2INT, "MPI_2INT", struct int_int, N_INT, N_INT),
	TP(BCS_T_SHORT_INT, "MPI_SHORT_INT", struct short_int, N_SHORT, N_INT),
	TP(BCS_T_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", struct ldouble_int,
	  N_LDOUBLE, N_INT),
	TP(BCS_T_2INTEGER, "MPI_2INTEGER", struct int_int, N_INT, N_INT),
	TP(BCS_T_2REAL, "MPI_2REAL", struct float_float, N_FLOAT, N_FLOAT),
	TP(BCS_T_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION",
	  struct double_double, N_DOUBLE, N_DOUBLE),
};

#define NTYPES (sizeof(all) / sizeof(all[0]))

static const enum bcs_op all_ops[] = {
	BCS_OP_MAX, BCS_OP_MIN, BCS_OP_SUM, BCS_OP_PROD, BCS_OP_LAND,
	BCS_OP_BAND, BCS_OP_LOR, BCS_OP_BOR, BCS_OP_LXOR, BCS_OP_BXOR,
	BCS_OP_MINLOC, BCS_OP_MAXLOC, BCS_OP_REPLACE, BCS_OP_NO_OP,
};

#define NOPS (sizeof(all_ops) / sizeof(all_ops[0]))

/* The standard's table: which groups each operation takes. */
static int std_allows(enum bcs_op op, enum std_cat c)
{
	switch (op) {
	case BCS_OP_MAX:
	case BCS_OP_MIN:
		return c == CINT || c == FINT || c == FLT;
	case BCS_OP_SUM:
	case BCS_OP_PROD:
		return c == CINT || c == FINT || c == FLT || c == CPLX;
	case BCS_OP_LAND:
	case BCS_OP_LOR:
	case BCS_OP_LXOR:
		return c == CINT || c == LOGICAL;
	case BCS_OP_BAND:
	case BCS_OP_BOR:
	case BCS_OP_BXOR:
		return c == CINT || c == FINT || c == BYTE;
	case BCS_OP_MINLOC:
	case BCS_OP_MAXLOC:
		return c == PAIR;
	case BCS_OP_REPLACE:
	case BCS_OP_NO_OP:
		return 1;
	default:
		return 0;
	}
}

/* ---- the reference ------------------------------------------------------ */

/* Little endian (x86_64): integers byte by byte, zero- or sign-extended. */
static uint64_t get_u(const unsigned char *p, size_t w)
{
	uint64_t v = 0;

	for (size_t k = 0; k < w; k++)
		v |= (uint64_t)p[k] << (8 * k);
	return v;
}

static int64_t get_s(const unsigned char *p, size_t w)
{
	uint64_t u = get_u(p, w);

	if (w < 8 && (u >> (8 * w - 1)) & 1)
		u |= ~(uint64_t)0 << (8 * w);
	return (int64_t)u;
}

static void put_u(unsigned char *p, size_t w, uint64_t v)
{
	for (size_t k = 0; k < w; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

static void ref_int(enum bcs_op op, const struct tt *t, const unsigned char *a,
		    const unsigned char *b, unsigned char *r)
{
	size_t w = t->size;
	uint64_t ua = get_u(a, w), ub = get_u(b, w);
	int a_gt = t->sgn ? get_s(a, w) > get_s(b, w) : ua > ub;
	int a_lt = t->sgn ? get_s(a, w) < get_s(b, w) : ua < ub;

	switch (op) {
	case BCS_OP_MAX: put_u(r, w, a_gt ? ua : ub); break;
	case BCS_OP_MIN: put_u(r, w, a_lt ? ua : ub); break;
	case BCS_OP_SUM: put_u(r, w, ua + ub); break;
	case BCS_OP_PROD: put_u(r, w, ua * ub); break;
	case BCS_OP_LAND: put_u(r, w, ua && ub); break;
	case BCS_OP_LOR: put_u(r, w, ua || ub); break;
	case BCS_OP_LXOR: put_u(r, w, !ua != !ub); break;
	case BCS_OP_BAND: put_u(r, w, ua & ub); break;
	case BCS_OP_BOR: put_u(r, w, ua | ub); break;
	case BCS_OP_BXOR: put_u(r, w, ua ^ ub); break;
	default: fail_msg("ref_int: op %d", op);
	}
}

/* Bytes of a long double that hold its value (x87: 10 of 16). */
#define LD_BYTES (LDBL_MANT_DIG == 64 ? 10 : sizeof(long double))

#define REF_REAL(T, a, b, r, op)                                   \
	do {                                                       \
		T x, y, z;                                         \
		memcpy(&x, a, sizeof x);                           \
		memcpy(&y, b, sizeof y);                           \
		switch (op) {                                      \
		case BCS_OP_MAX: z = isnan(x) || isnan(y) ? y      \
				   : x > y ? x : y; break;         \
		case BCS_OP_MIN: z = isnan(x) || isnan(y) ? y      \
				   : x < y ? x : y; break;         \
		case BCS_OP_SUM: z = isnan(x) ? x + x : x + y; break; \
		default: z = isnan(x) ? x + x : x * y; break;      \
		}                                                  \
		memset(r, 0, sizeof z);                            \
		memcpy(r, &z, sizeof(T) == sizeof(long double)     \
				      ? LD_BYTES : sizeof z);       \
	} while (0)

/* Complex by the textbook formula, each product through a volatile so
 * that no compiler fuses it (gcc 12 at -O3 with FMA fuses C's own
 * complex `*` even under -ffp-contract=off). */
#define REF_COMPLEX(RT, a, b, r, op)                               \
	do {                                                       \
		RT x[2], y[2], z[2];                               \
		volatile RT p1, p2, p3, p4;                        \
		memcpy(x, a, sizeof x);                            \
		memcpy(y, b, sizeof y);                            \
		if (op == BCS_OP_SUM) {                            \
			z[0] = x[0] + y[0];                        \
			z[1] = x[1] + y[1];                        \
		} else {                                           \
			p1 = x[0] * y[0];                          \
			p2 = x[1] * y[1];                          \
			p3 = x[0] * y[1];                          \
			p4 = x[1] * y[0];                          \
			z[0] = p1 - p2;                            \
			z[1] = p3 + p4;                            \
		}                                                  \
		memset(r, 0, sizeof z);                            \
		for (int p_ = 0; p_ < 2; p_++)                     \
			memcpy(r + p_ * sizeof(RT), &z[p_],        \
			       sizeof(RT) == sizeof(long double)   \
				       ? LD_BYTES : sizeof(RT));   \
	} while (0)

static size_t num_size(enum num k)
{
	switch (k) {
	case N_SHORT: return sizeof(short);
	case N_INT: return sizeof(int);
	case N_LONG: return sizeof(long);
	case N_FLOAT: return sizeof(float);
	case N_DOUBLE: return sizeof(double);
	default: return sizeof(long double);
	}
}

/* Every value a pair holds here is exact in a long double. */
static long double num_get(enum num k, const unsigned char *p)
{
	short s; int i; long l; float f; double d; long double x;

	switch (k) {
	case N_SHORT: memcpy(&s, p, sizeof s); return s;
	case N_INT: memcpy(&i, p, sizeof i); return i;
	case N_LONG: memcpy(&l, p, sizeof l); return (long double)l;
	case N_FLOAT: memcpy(&f, p, sizeof f); return f;
	case N_DOUBLE: memcpy(&d, p, sizeof d); return d;
	default: memcpy(&x, p, sizeof x); return x;
	}
}

/* MPI-3.1 §5.9.4, MAXLOC: w = max(u, v); k = i if u > v, min(i, j) if
 * u = v, j if u < v.  MINLOC with < for >.  A NaN compares neither way:
 * the header gives the pair to b. */
static void ref_pair(enum bcs_op op, const struct tt *t, const unsigned char *a,
		     const unsigned char *b, unsigned char *r)
{
	const struct pair_layout *pl = &t->pair;
	long double u = num_get(pl->vk, a + pl->voff);
	long double v = num_get(pl->vk, b + pl->voff);
	long double i = num_get(pl->ik, a + pl->ioff);
	long double j = num_get(pl->ik, b + pl->ioff);
	const unsigned char *wv, *wi;
	size_t vbytes = pl->vk == N_LDOUBLE ? LD_BYTES : num_size(pl->vk);

	if (op == BCS_OP_MAXLOC ? u > v : u < v) {
		wv = a;
		wi = a;
	} else if (u == v) {
		wv = b;
		wi = i < j ? a : b;
	} else {
		wv = b;
		wi = b;
	}
	memset(r, 0, t->size);
	memcpy(r + pl->voff, wv + pl->voff, vbytes);
	memcpy(r + pl->ioff, wi + pl->ioff, num_size(pl->ik));
}

/* r = a op b for one element */
static void ref_elem(enum bcs_op op, const struct tt *t,
		     const unsigned char *a, const unsigned char *b,
		     unsigned char *r)
{
	if (op == BCS_OP_REPLACE) {
		memcpy(r, a, t->size);
		return;
	}
	if (op == BCS_OP_NO_OP) {
		memcpy(r, b, t->size);
		return;
	}
	switch (t->cls) {
	case C_INT: ref_int(op, t, a, b, r); break;
	case C_FLOAT: REF_REAL(float, a, b, r, op); break;
	case C_DOUBLE: REF_REAL(double, a, b, r, op); break;
	case C_LDOUBLE: REF_REAL(long double, a, b, r, op); break;
	case C_CFLOAT: REF_COMPLEX(float, a, b, r, op); break;
	case C_CDOUBLE: REF_COMPLEX(double, a, b, r, op); break;
	case C_CLDOUBLE: REF_COMPLEX(long double, a, b, r, op); break;
	case C_PAIR: ref_pair(op, t, a, b, r); break;
	default: fail_msg("ref_elem: %s takes only REPLACE, NO_OP", t->name);
	}
}

/* ---- inputs ------------------------------------------------------------- */

static void gen_num(enum num k, unsigned char *p, int small)
{
	long v = (long)(rnd() % (small ? 4 : 2000)) - (small ? 0 : 1000);
	short s = (short)v; int i = (int)v; float f = (float)v;
	double d = (double)v; long double x = (long double)v;

	switch (k) {
	case N_SHORT: memcpy(p, &s, sizeof s); break;
	case N_INT: memcpy(p, &i, sizeof i); break;
	case N_LONG: memcpy(p, &v, sizeof v); break;
	case N_FLOAT: memcpy(p, &f, sizeof f); break;
	case N_DOUBLE: memcpy(p, &d, sizeof d); break;
	default: memcpy(p, &x, sizeof x); break;
	}
}

/* A finite, nonzero value of moderate size with a fraction: products
 * neither overflow nor underflow, and sums round. */
static double gen_real(void)
{
	double m = (double)(rnd() % 2000000) / 1000.0 + 0.001;

	return rnd() & 1 ? -m : m;
}

/* Random element of t at p: garbage in the padding, a quarter of the
 * integers zero (so the logical operations see both truths), pairs
 * with small values (so ties are common). */
static void gen_elem(const struct tt *t, unsigned char *p)
{
	for (size_t k = 0; k < t->size; k++)
		p[k] = (unsigned char)rnd();
	switch (t->cls) {
	case C_INT:
		if (t->t == BCS_T_C_BOOL)
			p[0] = (unsigned char)(rnd() & 1);
		else if (rnd() % 4 == 0)
			memset(p, 0, t->size);
		break;
	case C_FLOAT: case C_CFLOAT:
		for (size_t k = 0; k < t->size / sizeof(float); k++) {
			float f = (float)gen_real();

			memcpy(p + k * sizeof f, &f, sizeof f);
		}
		break;
	case C_DOUBLE: case C_CDOUBLE:
		for (size_t k = 0; k < t->size / sizeof(double); k++) {
			double d = gen_real();

			memcpy(p + k * sizeof d, &d, sizeof d);
		}
		break;
	case C_LDOUBLE: case C_CLDOUBLE:
		for (size_t k = 0; k < t->size / sizeof(long double); k++) {
			long double x = (long double)gen_real() / 3;

			memcpy(p + k * sizeof x, &x, LD_BYTES);
		}
		break;
	case C_PAIR:
		gen_num(t->pair.vk, p + t->pair.voff, 1);
		gen_num(t->pair.ik, p + t->pair.ioff, 0);
		break;
	default:
		break;
	}
}

/* ---- checks ------------------------------------------------------------- */

static void check_against_reference(enum bcs_op op, const struct tt *t,
				    size_t n, size_t in_off, size_t io_off,
				    int in_place)
{
	size_t bytes = n * t->size;
	unsigned char *inb = malloc(bytes + 16), *iob = malloc(bytes + 16);
	unsigned char *want = malloc(bytes + 1);
	unsigned char *in = inb + in_off, *io = iob + io_off;

	assert_non_null(inb);
	assert_non_null(iob);
	assert_non_null(want);
	for (size_t k = 0; k < n; k++) {
		gen_elem(t, in + k * t->size);
		gen_elem(t, io + k * t->size);
	}
	if (in_place)
		memcpy(io, in, bytes);
	for (size_t k = 0; k < n; k++)
		ref_elem(op, t, in_place ? io + k * t->size : in + k * t->size,
			 io + k * t->size, want + k * t->size);
	assert_int_equal(bcs_reduce(op, t->t, in_place ? io : in, io, n), 0);
	for (size_t k = 0; k < n; k++) {
		if (memcmp(io + k * t->size, want + k * t->size, t->size)) {
			char got[128] = "", exp[128] = "";

			for (size_t b = 0; b < t->size && b < 32; b++) {
				sprintf(got + 2 * b, "%02x", io[k * t->size + b]);
				sprintf(exp + 2 * b, "%02x",
					want[k * t->size + b]);
			}
			fail_msg("%s %s n=%zu offsets %zu/%zu%s: element %zu "
				 "is %s, want %s", bcs_op_name(op), t->name, n,
				 in_off, io_off, in_place ? " in place" : "",
				 k, got, exp);
		}
	}
	free(inb);
	free(iob);
	free(want);
}

static void test_type_sizes_are_the_c_layouts(void **state)
{
	(void)state;
	for (size_t k = 0; k < NTYPES; k++)
		assert_int_equal(bcs_type_size(all[k].t), all[k].size);
	/* every value of the enum is a type this test knows */
	for (unsigned v = 1; v < BCS_T_END; v++) {
		size_t k = 0;

		while (k < NTYPES && all[k].t != (enum bcs_type)v)
			k++;
		assert_true(k < NTYPES);
	}
	assert_int_equal(NTYPES, BCS_T_END - 1);
	assert_int_equal(bcs_type_size(BCS_T_NONE), 0);
	assert_int_equal(bcs_type_size(BCS_T_END), 0);
	assert_int_equal(bcs_type_size((enum bcs_type)100000), 0);
	/* the figures docs/bcsmpi.md gives for x86_64 */
	assert_int_equal(bcs_type_size(BCS_T_LONG_DOUBLE_INT), 32);
	assert_int_equal(bcs_type_size(BCS_T_DOUBLE_INT), 16);
	assert_int_equal(bcs_type_size(BCS_T_SHORT_INT), 8);
	assert_int_equal(bcs_type_size(BCS_T_LOGICAL), 4);
	assert_int_equal(bcs_type_size(BCS_T_DOUBLE_COMPLEX), 16);
}

static void test_names_are_mpis(void **state)
{
	(void)state;
	for (size_t k = 0; k < NTYPES; k++)
		assert_string_equal(bcs_type_name(all[k].t), all[k].name);
	assert_string_equal(bcs_type_name(BCS_T_NONE), "?");
	assert_string_equal(bcs_type_name(BCS_T_END), "?");
	assert_string_equal(bcs_op_name(BCS_OP_SUM), "MPI_SUM");
	assert_string_equal(bcs_op_name(BCS_OP_MAXLOC), "MPI_MAXLOC");
	assert_string_equal(bcs_op_name(BCS_OP_NO_OP), "MPI_NO_OP");
	assert_string_equal(bcs_op_name(BCS_OP_NONE), "?");
	assert_string_equal(bcs_op_name(BCS_OP_END), "?");
	assert_string_equal(bcs_op_name((enum bcs_op)-1), "?");
}

static void test_valid_table_is_mpi_3_1s(void **state)
{
	(void)state;
	assert_int_equal(NOPS, BCS_OP_END - 1);
	for (size_t k = 0; k < NTYPES; k++) {
		for (size_t o = 0; o < NOPS; o++) {
			int want = std_allows(all_ops[o], all[k].cat);

			if (bcs_op_valid(all_ops[o], all[k].t) != want)
				fail_msg("%s on %s: valid %d, the standard "
					 "says %d", bcs_op_name(all_ops[o]),
					 all[k].name, !want, want);
		}
		assert_int_equal(bcs_op_valid(BCS_OP_NONE, all[k].t), 0);
		assert_int_equal(bcs_op_valid(BCS_OP_END, all[k].t), 0);
		assert_int_equal(bcs_op_valid((enum bcs_op)-1, all[k].t), 0);
	}
	for (size_t o = 0; o < NOPS; o++) {
		assert_int_equal(bcs_op_valid(all_ops[o], BCS_T_NONE), 0);
		assert_int_equal(bcs_op_valid(all_ops[o], BCS_T_END), 0);
		assert_int_equal(bcs_op_valid(all_ops[o], (enum bcs_type)-7), 0);
	}
	/* the brief's spot checks, spelled out */
	assert_false(bcs_op_valid(BCS_OP_LAND, BCS_T_DOUBLE));
	assert_false(bcs_op_valid(BCS_OP_LAND, BCS_T_INTEGER));
	assert_true(bcs_op_valid(BCS_OP_LAND, BCS_T_C_BOOL));
	assert_false(bcs_op_valid(BCS_OP_MAX, BCS_T_C_DOUBLE_COMPLEX));
	assert_false(bcs_op_valid(BCS_OP_SUM, BCS_T_BYTE));
	assert_true(bcs_op_valid(BCS_OP_BXOR, BCS_T_BYTE));
	assert_false(bcs_op_valid(BCS_OP_SUM, BCS_T_CHAR));
	assert_false(bcs_op_valid(BCS_OP_MAXLOC, BCS_T_INT));
	assert_false(bcs_op_valid(BCS_OP_SUM, BCS_T_2INT));
	assert_true(bcs_op_valid(BCS_OP_REPLACE, BCS_T_WCHAR));
}

static void test_invalid_combinations_are_einval_and_change_nothing(
	void **state)
{
	unsigned char in[64], io[64], before[64];

	(void)state;
	memset(in, 0x5a, sizeof in);
	for (size_t k = 0; k < sizeof io; k++)
		io[k] = (unsigned char)k;
	memcpy(before, io, sizeof io);
	for (size_t k = 0; k < NTYPES; k++) {
		for (size_t o = 0; o < NOPS; o++) {
			if (bcs_op_valid(all_ops[o], all[k].t))
				continue;
			assert_int_equal(bcs_reduce(all_ops[o], all[k].t, in,
						    io, 1), -EINVAL);
			assert_int_equal(bcs_reduce(all_ops[o], all[k].t, in,
						    io, 0), -EINVAL);
		}
	}
	assert_int_equal(bcs_reduce(BCS_OP_NONE, BCS_T_INT, in, io, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_NONE, in, io, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_END, in, io, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce((enum bcs_op)77, BCS_T_INT, in, io, 1),
			 -EINVAL);
	assert_memory_equal(io, before, sizeof io);
}

static void test_null_buffers_and_overflowing_counts(void **state)
{
	int x = 1;

	(void)state;
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_INT, NULL, NULL, 0), 0);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_INT, NULL, &x, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_INT, &x, NULL, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_REPLACE, BCS_T_INT, NULL, &x, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_INT, &x, &x,
				    SIZE_MAX / 2), -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_NO_OP, BCS_T_INT, NULL, &x, 1),
			 -EINVAL);
	assert_int_equal(bcs_reduce(BCS_OP_NO_OP, BCS_T_INT, NULL, NULL, 0), 0);
	assert_int_equal(x, 1);
}

static void test_every_op_on_every_type_matches_the_reference(void **state)
{
	static const size_t counts[] = { 0, 1, 7, 1000 };
	static const size_t offs[][2] = { { 0, 0 }, { 1, 3 }, { 3, 0 },
					  { 0, 5 } };
	unsigned runs = 0;

	(void)state;
	fuzz_seed_begin(0xbc5);
	for (size_t k = 0; k < NTYPES; k++) {
		for (size_t o = 0; o < NOPS; o++) {
			if (!bcs_op_valid(all_ops[o], all[k].t))
				continue;
			for (size_t c = 0; c < 4; c++) {
				for (size_t f = 0; f < 4; f++, runs++)
					check_against_reference(
						all_ops[o], &all[k], counts[c],
						offs[f][0], offs[f][1], 0);
				check_against_reference(all_ops[o], &all[k],
							counts[c], 1, 1, 1);
			}
		}
	}
	printf("%u reductions checked\n", runs);
}

/* ---- the header's promises, one by one ---------------------------------- */

static void test_signed_sum_and_prod_wrap_as_twos_complement(void **state)
{
	int in[3] = { INT_MAX, INT_MIN, INT_MAX };
	int io[3] = { 1, -1, 2 };
	int64_t a64[2] = { INT64_MIN, INT64_MAX };
	int64_t b64[2] = { -1, INT64_MAX };
	signed char sa[2] = { 127, -128 }, sb[2] = { 1, 127 };

	(void)state;
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_INT, in, io, 2), 0);
	assert_int_equal(io[0], INT_MIN);
	assert_int_equal(io[1], INT_MAX);
	assert_int_equal(bcs_reduce(BCS_OP_PROD, BCS_T_INT, in + 2, io + 2, 1),
			 0);
	assert_int_equal(io[2], -2);
	assert_int_equal(bcs_reduce(BCS_OP_PROD, BCS_T_INT64, a64, b64, 2), 0);
	assert_true(b64[0] == INT64_MIN);
	assert_true(b64[1] == 1);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_SIGNED_CHAR, sa, sb, 2),
			 0);
	assert_int_equal(sb[0], -128);
	assert_int_equal(sb[1], -1);
}

static void test_unsigned_wrap_and_narrow_prod(void **state)
{
	uint16_t a[2] = { 65535, 65535 }, b[2] = { 65535, 1 };
	uint64_t c = UINT64_MAX, d = 2;

	(void)state;
	/* 65535 * 65535 overflows int, which uint16_t promotes to */
	assert_int_equal(bcs_reduce(BCS_OP_PROD, BCS_T_UINT16, a, b, 1), 0);
	assert_int_equal(b[0], 1);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_UNSIGNED_SHORT, a + 1,
				    b + 1, 1), 0);
	assert_int_equal(b[1], 0);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_UINT64, &c, &d, 1), 0);
	assert_true(d == 1);
}

static void test_signed_max_min_compare_signed(void **state)
{
	int8_t a = -1, b = 1;
	uint8_t ua = 0xff, ub = 1;
	long la = LONG_MIN, lb = 0;

	(void)state;
	assert_int_equal(bcs_reduce(BCS_OP_MAX, BCS_T_INT8, &a, &b, 1), 0);
	assert_int_equal(b, 1);
	assert_int_equal(bcs_reduce(BCS_OP_MAX, BCS_T_UINT8, &ua, &ub, 1), 0);
	assert_int_equal(ub, 0xff);
	assert_int_equal(bcs_reduce(BCS_OP_MIN, BCS_T_LONG, &la, &lb, 1), 0);
	assert_true(lb == LONG_MIN);
}

static void test_minloc_maxloc_lower_index_wins_ties(void **state)
{
	struct int_int a[3] = { { 5, 9 }, { 5, 2 }, { 7, 9 } };
	struct int_int b[3] = { { 5, 4 }, { 5, 4 }, { 3, 1 } };
	struct double_int da = { 2.5, 10 }, db = { 2.5, -3 };
	struct float_float fa = { 1.0f, 3.0f }, fb = { 1.0f, 8.0f };

	(void)state;
	assert_int_equal(bcs_reduce(BCS_OP_MAXLOC, BCS_T_2INT, a, b, 3), 0);
	assert_int_equal(b[0].v, 5);
	assert_int_equal(b[0].i, 4);   /* tie: min(9, 4) */
	assert_int_equal(b[1].i, 2);   /* tie: min(2, 4) */
	assert_int_equal(b[2].v, 7);   /* in wins: its index */
	assert_int_equal(b[2].i, 9);
	b[2] = (struct int_int){ 3, 1 };
	assert_int_equal(bcs_reduce(BCS_OP_MINLOC, BCS_T_2INT, a + 2, b + 2,
				    1), 0);
	assert_int_equal(b[2].v, 3);
	assert_int_equal(b[2].i, 1);
	assert_int_equal(bcs_reduce(BCS_OP_MINLOC, BCS_T_DOUBLE_INT, &da, &db,
				    1), 0);
	assert_int_equal(db.i, -3);
	assert_int_equal(bcs_reduce(BCS_OP_MAXLOC, BCS_T_2REAL, &fa, &fb, 1),
			 0);
	assert_true(fb.v == 1.0f && fb.i == 3.0f);
}

static void test_pair_padding_is_written_as_zero(void **state)
{
	unsigned char a[sizeof(struct short_int)], b[sizeof a];
	struct short_int s = { 4, 1 };
	struct ldouble_int la = { 1.5L, 1 }, lb = { 2.5L, 2 };
	unsigned char lbb[sizeof lb];

	(void)state;
	memset(a, 0xee, sizeof a);
	memset(b, 0xee, sizeof b);
	memcpy(a + offsetof(struct short_int, v), &s.v, sizeof s.v);
	memcpy(a + offsetof(struct short_int, i), &s.i, sizeof s.i);
	memcpy(b, a, sizeof b);
	assert_int_equal(bcs_reduce(BCS_OP_MAXLOC, BCS_T_SHORT_INT, a, b, 1),
			 0);
	for (size_t k = sizeof(short); k < offsetof(struct short_int, i); k++)
		assert_int_equal(b[k], 0);
	memset(lbb, 0xee, sizeof lbb);
	memcpy(lbb, &lb.v, LD_BYTES);
	memcpy(lbb + offsetof(struct ldouble_int, i), &lb.i, sizeof lb.i);
	assert_int_equal(bcs_reduce(BCS_OP_MINLOC, BCS_T_LONG_DOUBLE_INT, &la,
				    lbb, 1), 0);
	for (size_t k = LD_BYTES; k < sizeof lbb; k++)
		if (k < offsetof(struct ldouble_int, i) ||
		    k >= offsetof(struct ldouble_int, i) + sizeof(int))
			assert_int_equal(lbb[k], 0);
	memcpy(&lb.i, lbb + offsetof(struct ldouble_int, i), sizeof lb.i);
	assert_int_equal(lb.i, 1);
}

static void test_long_double_padding_is_written_as_zero(void **state)
{
	unsigned char a[2 * sizeof(long double)], b[sizeof a];
	long double x = 1.25L;

	(void)state;
	memset(a, 0xab, sizeof a);
	memset(b, 0xcd, sizeof b);
	memcpy(a, &x, LD_BYTES);
	memcpy(b, &x, LD_BYTES);
	memcpy(a + sizeof x, &x, LD_BYTES);
	memcpy(b + sizeof x, &x, LD_BYTES);
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_C_LONG_DOUBLE_COMPLEX, a,
				    b, 1), 0);
	for (size_t k = LD_BYTES; k < sizeof x; k++) {
		assert_int_equal(b[k], 0);
		assert_int_equal(b[sizeof x + k], 0);
	}
	memcpy(&x, b, sizeof x);
	assert_true(x == 2.5L);
}

static void test_nan_in_inout_is_kept_nan_in_in_is_dropped(void **state)
{
	double a[4] = { NAN, 1.0, NAN, 1.0 }, b[4] = { 1.0, NAN, 2.0, NAN };
	float fa = NAN, fb = -3.0f;
	struct float_int pa = { NAN, 1 }, pb = { 2.0f, 7 };

	(void)state;
	assert_int_equal(bcs_reduce(BCS_OP_MAX, BCS_T_DOUBLE, a, b, 2), 0);
	assert_true(b[0] == 1.0);      /* NaN in in: dropped */
	assert_true(isnan(b[1]));      /* NaN in inout: kept */
	assert_int_equal(bcs_reduce(BCS_OP_MIN, BCS_T_DOUBLE, a + 2, b + 2, 2),
			 0);
	assert_true(b[2] == 2.0);
	assert_true(isnan(b[3]));
	assert_int_equal(bcs_reduce(BCS_OP_MAX, BCS_T_FLOAT, &fa, &fb, 1), 0);
	assert_true(fb == -3.0f);
	/* MAXLOC: a NaN value compares neither way, inout's pair wins */
	assert_int_equal(bcs_reduce(BCS_OP_MAXLOC, BCS_T_FLOAT_INT, &pa, &pb,
				    1), 0);
	assert_true(pb.v == 2.0f && pb.i == 7);
}

static void test_signed_zero_max_min_give_inouts(void **state)
{
	double a[2] = { 0.0, -0.0 }, b[2] = { -0.0, 0.0 };

	(void)state;
	assert_int_equal(bcs_reduce(BCS_OP_MAX, BCS_T_DOUBLE, a, b, 2), 0);
	assert_true(signbit(b[0]));
	assert_false(signbit(b[1]));
	a[0] = -0.0;
	b[0] = 0.0;
	assert_int_equal(bcs_reduce(BCS_OP_MIN, BCS_T_DOUBLE, a, b, 1), 0);
	assert_false(signbit(b[0]));
}

/* Two NaNs: the result is in's, quieted, for every element — on the
 * vector path and the scalar one, aligned or not, in place or not. */
static void test_nan_sum_and_prod_return_ins_nan(void **state)
{
	static const size_t offs[][2] = { { 0, 0 }, { 1, 3 }, { 4, 0 } };
	const uint64_t pa = 0x7ff8000000000001ull; /* quiet, payload 1 */
	const uint64_t pb = 0x7ff8000000000002ull;
	const uint64_t sa = 0x7ff0000000000003ull; /* signaling */
	const uint32_t fa = 0x7fc00011u, fb = 0x7fc00022u;
	enum { N = 203 };
	unsigned char in[N * 8 + 8], io[N * 8 + 8];

	(void)state;
	for (size_t o = 0; o < 3; o++) {
		for (int op = BCS_OP_SUM; op <= BCS_OP_PROD; op++) {
			unsigned char *a = in + offs[o][0], *b = io + offs[o][1];
			uint64_t r;

			for (size_t k = 0; k < N; k++) {
				memcpy(a + 8 * k, k % 3 ? &pa : &sa, 8);
				memcpy(b + 8 * k, &pb, 8);
			}
			assert_int_equal(bcs_reduce((enum bcs_op)op,
						    BCS_T_DOUBLE, a, b, N), 0);
			for (size_t k = 0; k < N; k++) {
				memcpy(&r, b + 8 * k, 8);
				assert_true(r == (k % 3 ? pa
						 : sa | 0x0008000000000000ull));
			}
			for (size_t k = 0; k < N; k++) {
				memcpy(a + 4 * k, &fa, 4);
				memcpy(b + 4 * k, &fb, 4);
			}
			assert_int_equal(bcs_reduce((enum bcs_op)op,
						    BCS_T_FLOAT, a, b, N), 0);
			for (size_t k = 0; k < N; k++) {
				uint32_t f;

				memcpy(&f, b + 4 * k, 4);
				assert_true(f == fa);
			}
		}
	}
}

static void test_nan_in_a_complex_result_is_nan_itself(void **state)
{
	uint64_t pa = 0x7ff8000000000001ull, pb = 0xfff8000000000002ull;
	double a[2], b[2], one = 1.0, nan_c = NAN;
	uint64_t r[2], want;

	(void)state;
	memcpy(&a[0], &pa, 8);
	memcpy(&a[1], &one, 8);
	memcpy(&b[0], &pb, 8);
	memcpy(&b[1], &pb, 8);
	memcpy(&want, &nan_c, 8);
	assert_int_equal(bcs_reduce(BCS_OP_PROD, BCS_T_C_DOUBLE_COMPLEX, a, b,
				    1), 0);
	memcpy(r, b, sizeof r);
	assert_true(r[0] == want);
	assert_true(r[1] == want);
}

static void test_logical_results_are_0_or_1(void **state)
{
	uint32_t la[4] = { 0, 2, 0x100, 0 }, lb[4] = { 7, 0x80000000u, 3, 0 };
	uint32_t lc[4];
	unsigned char ba[2] = { 1, 0 }, bb[2] = { 1, 1 };
	int ia[3] = { -5, 0, 3 }, ib[3] = { 9, 0, 0 };

	(void)state;
	memcpy(lc, lb, sizeof lc);
	assert_int_equal(bcs_reduce(BCS_OP_LAND, BCS_T_LOGICAL, la, lb, 4), 0);
	assert_int_equal(lb[0], 0);
	assert_int_equal(lb[1], 1);
	assert_int_equal(lb[2], 1);
	assert_int_equal(lb[3], 0);
	assert_int_equal(bcs_reduce(BCS_OP_LXOR, BCS_T_LOGICAL, la, lc, 4), 0);
	assert_int_equal(lc[0], 1);
	assert_int_equal(lc[1], 0);
	assert_int_equal(lc[2], 0);
	assert_int_equal(lc[3], 0);
	assert_int_equal(bcs_reduce(BCS_OP_LXOR, BCS_T_C_BOOL, ba, bb, 2), 0);
	assert_int_equal(bb[0], 0);
	assert_int_equal(bb[1], 1);
	assert_int_equal(bcs_reduce(BCS_OP_LOR, BCS_T_INT, ia, ib, 3), 0);
	assert_int_equal(ib[0], 1);
	assert_int_equal(ib[1], 0);
	assert_int_equal(ib[2], 1);
}

static void test_complex_prod_is_the_textbook_formula(void **state)
{
	double a[2] = { 1.5, -2.0 }, b[2] = { 3.0, 0.25 };
	float fa[2] = { INFINITY, 0.0f }, fb[2] = { 1.0f, 0.0f };

	(void)state;
	/* (1.5 - 2i)(3 + 0.25i) = 4.5 + 0.5 + (0.375 - 6)i */
	assert_int_equal(bcs_reduce(BCS_OP_PROD, BCS_T_C_DOUBLE_COMPLEX, a, b,
				    1), 0);
	assert_true(b[0] == 5.0 && b[1] == -5.625);
	/* no Annex G recovery: (inf + 0i)(1 + 0i) has inf * 0 = NaN in
	 * its imaginary part */
	assert_int_equal(bcs_reduce(BCS_OP_PROD, BCS_T_COMPLEX, fa, fb, 1), 0);
	assert_true(isinf(fb[0]));
	assert_true(isnan(fb[1]));
}

static void test_replace_copies_every_byte_and_no_op_none(void **state)
{
	unsigned char a[3 * 32], b[sizeof a], keep[sizeof a];

	(void)state;
	for (size_t k = 0; k < sizeof a; k++) {
		a[k] = (unsigned char)(k * 7 + 1);
		b[k] = (unsigned char)(k * 3);
	}
	memcpy(keep, b, sizeof b);
	assert_int_equal(bcs_reduce(BCS_OP_NO_OP, BCS_T_LONG_DOUBLE_INT, a, b,
				    3), 0);
	assert_memory_equal(b, keep, sizeof b);
	assert_int_equal(bcs_reduce(BCS_OP_REPLACE, BCS_T_LONG_DOUBLE_INT, a, b,
				    3), 0);
	assert_memory_equal(b, a, sizeof b);
}

#if defined(__SSE__)
#define MXCSR_FTZ 0x8000u
#define MXCSR_DAZ 0x0040u
#define MXCSR_UP 0x4000u

static void test_caller_fp_environment_is_ignored_and_restored(void **state)
{
	unsigned int saved = _mm_getcsr();
	unsigned int odd = (saved | MXCSR_FTZ | MXCSR_DAZ | MXCSR_UP) &
			   ~0x3fu;
	double tiny = DBL_MIN / 4, t2 = tiny;
	double one = 1.0, eps = 0x1p-60;
	long double la = 1.0L, lb = 0x1p-40L;
	unsigned short cw, cw_single = 0x007f, cw_after;

	(void)state;
	_mm_setcsr(odd);
	/* DAZ would read tiny as 0, FTZ flush the result */
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_DOUBLE, &tiny, &t2, 1),
			 0);
	assert_int_equal(_mm_getcsr() & ~0x3fu, odd);
	/* upward rounding would give the double after 1 */
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_DOUBLE, &one, &eps, 1),
			 0);
	assert_int_equal(_mm_getcsr() & ~0x3fu, odd);
	_mm_setcsr(saved);
	assert_true(t2 == DBL_MIN / 2);
	assert_true(eps == 1.0);

	/* x87 at 24-bit precision would round 1 + 2^-40 to 1 */
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	__asm__ volatile("fldcw %0" : : "m"(cw_single));
	assert_int_equal(bcs_reduce(BCS_OP_SUM, BCS_T_LONG_DOUBLE, &la, &lb, 1),
			 0);
	__asm__ volatile("fnstcw %0" : "=m"(cw_after));
	__asm__ volatile("fldcw %0" : : "m"(cw));
	assert_int_equal(cw_after, cw_single);
	assert_true(lb == 1.0L + 0x1p-40L);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_sizes_are_the_c_layouts),
		cmocka_unit_test(test_names_are_mpis),
		cmocka_unit_test(test_valid_table_is_mpi_3_1s),
		cmocka_unit_test(
			test_invalid_combinations_are_einval_and_change_nothing),
		cmocka_unit_test(test_null_buffers_and_overflowing_counts),
		cmocka_unit_test(
			test_every_op_on_every_type_matches_the_reference),
		cmocka_unit_test(
			test_signed_sum_and_prod_wrap_as_twos_complement),
		cmocka_unit_test(test_unsigned_wrap_and_narrow_prod),
		cmocka_unit_test(test_signed_max_min_compare_signed),
		cmocka_unit_test(test_minloc_maxloc_lower_index_wins_ties),
		cmocka_unit_test(test_pair_padding_is_written_as_zero),
		cmocka_unit_test(test_long_double_padding_is_written_as_zero),
		cmocka_unit_test(
			test_nan_in_inout_is_kept_nan_in_in_is_dropped),
		cmocka_unit_test(test_signed_zero_max_min_give_inouts),
		cmocka_unit_test(test_nan_sum_and_prod_return_ins_nan),
		cmocka_unit_test(test_nan_in_a_complex_result_is_nan_itself),
		cmocka_unit_test(test_logical_results_are_0_or_1),
		cmocka_unit_test(test_complex_prod_is_the_textbook_formula),
		cmocka_unit_test(
			test_replace_copies_every_byte_and_no_op_none),
#if defined(__SSE__)
		cmocka_unit_test(
			test_caller_fp_environment_is_ignored_and_restored),
#endif
	};

#if defined(BCS_TEST_FMA)
	/* this build's kernels were compiled for AVX2 and FMA */
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
		printf("no AVX2 and FMA on this CPU: skipped\n");
		return 77;
	}
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
