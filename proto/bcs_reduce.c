/*
 * bcs_reduce.c — the predefined MPI reductions, once, for the rank's
 * library and the node's BCS engine alike (contract in bcs_reduce.h).
 *
 * Invariant: the same inputs give the same result bits on every node,
 * whichever side computes them.  Hence: a fixed operand order (in op
 * inout), no fast-math and no FMA contraction (meson.build passes
 * -ffp-contract=off; -ffast-math is refused below), and the floating
 * point environment pinned to IEEE defaults while a kernel runs — an
 * application linked with -Ofast sets flush-to-zero in its rank, where
 * the engine in storm-nm would not.
 *
 * Elements are loaded and stored with memcpy, so buffers need no
 * alignment; the loops are kept to two loads, one expression and one
 * store so that gcc vectorizes them (no reassociation is involved: every
 * element is combined on its own).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "bcs_reduce.h"

#if defined(__FAST_MATH__)
#error "bcs_reduce.c must not be built with -ffast-math: results would differ between nodes"
#endif

/* The Fortran types are gfortran's x86_64 defaults; the C ones must
 * match the formats the kernels assume. */
_Static_assert(sizeof(float) == 4 && FLT_MANT_DIG == 24, "IEEE binary32");
_Static_assert(sizeof(double) == 8 && DBL_MANT_DIG == 53, "IEEE binary64");
_Static_assert(sizeof(int) == 4, "INTEGER, 2INT as int");

/* ---- the types ---------------------------------------------------------- */

/* MPI-3.1 §5.9.2's categories, as bits: an operation's row of the table is
 * the set of categories it accepts. */
enum cat {
	CAT_NONE = 1u << 0,     /* text: MPI_CHAR, MPI_WCHAR */
	CAT_CINT = 1u << 1,
	CAT_FINT = 1u << 2,
	CAT_FLOAT = 1u << 3,
	CAT_LOGICAL = 1u << 4,
	CAT_COMPLEX = 1u << 5,
	CAT_BYTE = 1u << 6,
	CAT_PAIR = 1u << 7,
};

/* How an element is computed on, which many types share (MPI_INT,
 * MPI_INTEGER and MPI_INT32_T are all a signed 4-byte integer). */
enum kind {
	K_OPAQUE,    /* bytes: REPLACE and NO_OP only */
	K_INT,       /* integer of size 1, 2, 4 or 8; signed or not */
	K_FLOAT,
	K_DOUBLE,
	K_LDOUBLE,
	K_CFLOAT,    /* complex: two of the real type, real part first */
	K_CDOUBLE,
	K_CLDOUBLE,
	K_P_FLOAT_INT,
	K_P_DOUBLE_INT,
	K_P_LONG_INT,
	K_P_2INT,
	K_P_SHORT_INT,
	K_P_LDOUBLE_INT,
	K_P_2FLOAT,
	K_P_2DOUBLE,
};

/* The pair types, as the C compiler lays them out. */
struct p_float_int { float v; int i; };
struct p_double_int { double v; int i; };
struct p_long_int { long v; int i; };
struct p_2int { int v; int i; };
struct p_short_int { short v; int i; };
struct p_ldouble_int { long double v; int i; };
struct p_2float { float v; float i; };
struct p_2double { double v; double i; };

struct type_info {
	const char *name;
	unsigned char cat;
	unsigned char kind;
	unsigned char sgn;   /* K_INT: signed (MAX and MIN compare so) */
	unsigned char size;
};

#define T_INT(n, c, T, s) { n, c, K_INT, s, sizeof(T) }
#define T_OF(n, c, k, T) { n, c, k, 0, sizeof(T) }

static const struct type_info types[BCS_T_END] = {
	[BCS_T_CHAR] = T_OF("MPI_CHAR", CAT_NONE, K_OPAQUE, char),
	[BCS_T_SIGNED_CHAR] = T_INT("MPI_SIGNED_CHAR", CAT_CINT, signed char, 1),
	[BCS_T_UNSIGNED_CHAR] = T_INT("MPI_UNSIGNED_CHAR", CAT_CINT, unsigned char, 0),
	[BCS_T_SHORT] = T_INT("MPI_SHORT", CAT_CINT, short, 1),
	[BCS_T_UNSIGNED_SHORT] = T_INT("MPI_UNSIGNED_SHORT", CAT_CINT, unsigned short, 0),
	[BCS_T_INT] = T_INT("MPI_INT", CAT_CINT, int, 1),
	[BCS_T_UNSIGNED] = T_INT("MPI_UNSIGNED", CAT_CINT, unsigned, 0),
	[BCS_T_LONG] = T_INT("MPI_LONG", CAT_CINT, long, 1),
	[BCS_T_UNSIGNED_LONG] = T_INT("MPI_UNSIGNED_LONG", CAT_CINT, unsigned long, 0),
	[BCS_T_LONG_LONG] = T_INT("MPI_LONG_LONG", CAT_CINT, long long, 1),
	[BCS_T_UNSIGNED_LONG_LONG] = T_INT("MPI_UNSIGNED_LONG_LONG", CAT_CINT, unsigned long long, 0),
	[BCS_T_INT8] = T_INT("MPI_INT8_T", CAT_CINT, int8_t, 1),
	[BCS_T_INT16] = T_INT("MPI_INT16_T", CAT_CINT, int16_t, 1),
	[BCS_T_INT32] = T_INT("MPI_INT32_T", CAT_CINT, int32_t, 1),
	[BCS_T_INT64] = T_INT("MPI_INT64_T", CAT_CINT, int64_t, 1),
	[BCS_T_UINT8] = T_INT("MPI_UINT8_T", CAT_CINT, uint8_t, 0),
	[BCS_T_UINT16] = T_INT("MPI_UINT16_T", CAT_CINT, uint16_t, 0),
	[BCS_T_UINT32] = T_INT("MPI_UINT32_T", CAT_CINT, uint32_t, 0),
	[BCS_T_UINT64] = T_INT("MPI_UINT64_T", CAT_CINT, uint64_t, 0),
	[BCS_T_WCHAR] = T_OF("MPI_WCHAR", CAT_NONE, K_OPAQUE, wchar_t),
	[BCS_T_BYTE] = T_INT("MPI_BYTE", CAT_BYTE, unsigned char, 0),
	[BCS_T_FLOAT] = T_OF("MPI_FLOAT", CAT_FLOAT, K_FLOAT, float),
	[BCS_T_DOUBLE] = T_OF("MPI_DOUBLE", CAT_FLOAT, K_DOUBLE, double),
	[BCS_T_LONG_DOUBLE] = T_OF("MPI_LONG_DOUBLE", CAT_FLOAT, K_LDOUBLE, long double),
	[BCS_T_C_FLOAT_COMPLEX] = T_OF("MPI_C_FLOAT_COMPLEX", CAT_COMPLEX, K_CFLOAT, float _Complex),
	[BCS_T_C_DOUBLE_COMPLEX] = T_OF("MPI_C_DOUBLE_COMPLEX", CAT_COMPLEX, K_CDOUBLE, double _Complex),
	[BCS_T_C_LONG_DOUBLE_COMPLEX] = T_OF("MPI_C_LONG_DOUBLE_COMPLEX", CAT_COMPLEX, K_CLDOUBLE, long double _Complex),
	/* logical: true is any nonzero byte, so an unsigned integer will do */
	[BCS_T_C_BOOL] = T_INT("MPI_C_BOOL", CAT_LOGICAL, _Bool, 0),
	[BCS_T_AINT] = T_INT("MPI_AINT", CAT_FINT, intptr_t, 1),
	[BCS_T_OFFSET] = T_INT("MPI_OFFSET", CAT_FINT, int64_t, 1),
	[BCS_T_COUNT] = T_INT("MPI_COUNT", CAT_FINT, int64_t, 1),
	[BCS_T_INTEGER] = T_INT("MPI_INTEGER", CAT_FINT, int32_t, 1),
	[BCS_T_REAL] = T_OF("MPI_REAL", CAT_FLOAT, K_FLOAT, float),
	[BCS_T_DOUBLE_PRECISION] = T_OF("MPI_DOUBLE_PRECISION", CAT_FLOAT, K_DOUBLE, double),
	[BCS_T_LOGICAL] = T_INT("MPI_LOGICAL", CAT_LOGICAL, uint32_t, 0),
	[BCS_T_COMPLEX] = T_OF("MPI_COMPLEX", CAT_COMPLEX, K_CFLOAT, float _Complex),
	[BCS_T_DOUBLE_COMPLEX] = T_OF("MPI_DOUBLE_COMPLEX", CAT_COMPLEX, K_CDOUBLE, double _Complex),
	[BCS_T_INTEGER1] = T_INT("MPI_INTEGER1", CAT_FINT, int8_t, 1),
	[BCS_T_INTEGER2] = T_INT("MPI_INTEGER2", CAT_FINT, int16_t, 1),
	[BCS_T_INTEGER4] = T_INT("MPI_INTEGER4", CAT_FINT, int32_t, 1),
	[BCS_T_INTEGER8] = T_INT("MPI_INTEGER8", CAT_FINT, int64_t, 1),
	[BCS_T_REAL4] = T_OF("MPI_REAL4", CAT_FLOAT, K_FLOAT, float),
	[BCS_T_REAL8] = T_OF("MPI_REAL8", CAT_FLOAT, K_DOUBLE, double),
	[BCS_T_COMPLEX8] = T_OF("MPI_COMPLEX8", CAT_COMPLEX, K_CFLOAT, float _Complex),
	[BCS_T_COMPLEX16] = T_OF("MPI_COMPLEX16", CAT_COMPLEX, K_CDOUBLE, double _Complex),
	[BCS_T_FLOAT_INT] = T_OF("MPI_FLOAT_INT", CAT_PAIR, K_P_FLOAT_INT, struct p_float_int),
	[BCS_T_DOUBLE_INT] = T_OF("MPI_DOUBLE_INT", CAT_PAIR, K_P_DOUBLE_INT, struct p_double_int),
	[BCS_T_LONG_INT] = T_OF("MPI_LONG_INT", CAT_PAIR, K_P_LONG_INT, struct p_long_int),
	[BCS_T_2INT] = T_OF("MPI_2INT", CAT_PAIR, K_P_2INT, struct p_2int),
	[BCS_T_SHORT_INT] = T_OF("MPI_SHORT_INT", CAT_PAIR, K_P_SHORT_INT, struct p_short_int),
	[BCS_T_LONG_DOUBLE_INT] = T_OF("MPI_LONG_DOUBLE_INT", CAT_PAIR, K_P_LDOUBLE_INT, struct p_ldouble_int),
	[BCS_T_2INTEGER] = T_OF("MPI_2INTEGER", CAT_PAIR, K_P_2INT, struct p_2int),
	[BCS_T_2REAL] = T_OF("MPI_2REAL", CAT_PAIR, K_P_2FLOAT, struct p_2float),
	[BCS_T_2DOUBLE_PRECISION] = T_OF("MPI_2DOUBLE_PRECISION", CAT_PAIR, K_P_2DOUBLE, struct p_2double),
};

#define CAT_ANY 0xffu

/* MPI-3.1 §5.9.2 (and §5.9.4 for the pairs, §11.3.4 for REPLACE, NO_OP) */
static const struct {
	const char *name;
	unsigned char cats;
} ops[BCS_OP_END] = {
	[BCS_OP_MAX] = { "MPI_MAX", CAT_CINT | CAT_FINT | CAT_FLOAT },
	[BCS_OP_MIN] = { "MPI_MIN", CAT_CINT | CAT_FINT | CAT_FLOAT },
	[BCS_OP_SUM] = { "MPI_SUM", CAT_CINT | CAT_FINT | CAT_FLOAT | CAT_COMPLEX },
	[BCS_OP_PROD] = { "MPI_PROD", CAT_CINT | CAT_FINT | CAT_FLOAT | CAT_COMPLEX },
	[BCS_OP_LAND] = { "MPI_LAND", CAT_CINT | CAT_LOGICAL },
	[BCS_OP_BAND] = { "MPI_BAND", CAT_CINT | CAT_FINT | CAT_BYTE },
	[BCS_OP_LOR] = { "MPI_LOR", CAT_CINT | CAT_LOGICAL },
	[BCS_OP_BOR] = { "MPI_BOR", CAT_CINT | CAT_FINT | CAT_BYTE },
	[BCS_OP_LXOR] = { "MPI_LXOR", CAT_CINT | CAT_LOGICAL },
	[BCS_OP_BXOR] = { "MPI_BXOR", CAT_CINT | CAT_FINT | CAT_BYTE },
	[BCS_OP_MINLOC] = { "MPI_MINLOC", CAT_PAIR },
	[BCS_OP_MAXLOC] = { "MPI_MAXLOC", CAT_PAIR },
	[BCS_OP_REPLACE] = { "MPI_REPLACE", CAT_ANY },
	[BCS_OP_NO_OP] = { "MPI_NO_OP", CAT_ANY },
};

static const struct type_info *type_of(enum bcs_type t)
{
	/* unsigned: a descriptor's type is a rank's uint32_t, any value */
	if ((unsigned)t >= BCS_T_END || !types[t].name)
		return NULL;
	return &types[t];
}

size_t bcs_type_size(enum bcs_type t)
{
	const struct type_info *ti = type_of(t);

	return ti ? ti->size : 0;
}

const char *bcs_type_name(enum bcs_type t)
{
	const struct type_info *ti = type_of(t);

	return ti ? ti->name : "?";
}

const char *bcs_op_name(enum bcs_op op)
{
	if ((unsigned)op >= BCS_OP_END || !ops[op].name)
		return "?";
	return ops[op].name;
}

int bcs_op_valid(enum bcs_op op, enum bcs_type t)
{
	const struct type_info *ti = type_of(t);

	if (!ti || (unsigned)op >= BCS_OP_END || !ops[op].name)
		return 0;
	return (ops[op].cats & ti->cat) != 0;
}

/* ---- element access ----------------------------------------------------- */

/* x87's 80-bit format in 16 bytes: the value is the first 10, the rest
 * are padding the kernels write as 0 (a long double store would leave
 * whatever the stack held there). */
#if LDBL_MANT_DIG == 64
#define LDOUBLE_VALUE_BYTES 10
#else
#define LDOUBLE_VALUE_BYTES sizeof(long double)
#endif

static inline float ld_float(const unsigned char *p)
{
	float v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline void st_float(unsigned char *p, float v)
{
	memcpy(p, &v, sizeof v);
}

static inline double ld_double(const unsigned char *p)
{
	double v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline void st_double(unsigned char *p, double v)
{
	memcpy(p, &v, sizeof v);
}

static inline long double ld_ldouble(const unsigned char *p)
{
	long double v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline void st_ldouble(unsigned char *p, long double v)
{
	unsigned char b[sizeof v] = { 0 };

	memcpy(b, &v, LDOUBLE_VALUE_BYTES);
	memcpy(p, b, sizeof v);
}

/* One loop over n elements of T: a = in[i], b = inout[i], inout[i] =
 * EXPR.  Nothing else in the body, so gcc vectorizes it (checking at run
 * time that in and inout do not overlap, else the plain loop). */
#define ZIP(T, EXPR)                                               \
	do {                                                       \
		for (size_t k_ = 0; k_ < n; k_++) {                \
			T a, b, r;                                 \
			memcpy(&a, in + k_ * sizeof(T), sizeof(T)); \
			memcpy(&b, io + k_ * sizeof(T), sizeof(T)); \
			r = (T)(EXPR);                             \
			memcpy(io + k_ * sizeof(T), &r, sizeof(T)); \
		}                                                  \
	} while (0)

/* ---- integers ----------------------------------------------------------- */

/* Every operation but MAX and MIN is computed on the unsigned type of the
 * same width: signed overflow would be undefined, unsigned wraps, and the
 * two's-complement bits are the same.  (1u * a) keeps the narrow types,
 * which C promotes to int, in unsigned arithmetic for PROD. */
#define INT_KERNEL(name, S, U)                                             \
	static void name(enum bcs_op op, int sgn, const unsigned char *in,    \
			 unsigned char *io, size_t n)                         \
	{                                                                  \
		switch (op) {                                              \
		case BCS_OP_MAX:                                           \
			if (sgn)                                           \
				ZIP(S, a > b ? a : b);                     \
			else                                               \
				ZIP(U, a > b ? a : b);                     \
			break;                                             \
		case BCS_OP_MIN:                                           \
			if (sgn)                                           \
				ZIP(S, a < b ? a : b);                     \
			else                                               \
				ZIP(U, a < b ? a : b);                     \
			break;                                             \
		case BCS_OP_SUM:                                           \
			ZIP(U, 0u + a + b);                                \
			break;                                             \
		case BCS_OP_PROD:                                          \
			ZIP(U, 1u * a * b);                                \
			break;                                             \
		case BCS_OP_LAND:                                          \
			ZIP(U, a != 0 && b != 0);                          \
			break;                                             \
		case BCS_OP_LOR:                                           \
			ZIP(U, a != 0 || b != 0);                          \
			break;                                             \
		case BCS_OP_LXOR:                                          \
			ZIP(U, (a != 0) != (b != 0));                      \
			break;                                             \
		case BCS_OP_BAND:                                          \
			ZIP(U, a & b);                                     \
			break;                                             \
		case BCS_OP_BOR:                                           \
			ZIP(U, a | b);                                     \
			break;                                             \
		case BCS_OP_BXOR:                                          \
			ZIP(U, a ^ b);                                     \
			break;                                             \
		default: /* bcs_op_valid() let nothing else through */    \
			break;                                             \
		}                                                          \
	}

INT_KERNEL(int1, int8_t, uint8_t)
INT_KERNEL(int2, int16_t, uint16_t)
INT_KERNEL(int4, int32_t, uint32_t)
INT_KERNEL(int8, int64_t, uint64_t)

/* ---- floating point and complex ---------------------------------------- */

/* MAX and MIN as the plain comparison (what x86's maxsd computes): with
 * a NaN the comparison is false and b, inout's element, is the result.
 * SUM and PROD: when a is NaN the result is a op a — a, quieted — not
 * a op b: with two NaN operands x86 returns the first one's payload, and
 * which register is "first" is the compiler's choice — it may differ
 * between the vector loop and the scalar one, which one runs depends on
 * where the buffers are, and the bits must not.  (clang does choose
 * differently; the unit test catches it.) */
#define FLOAT_KERNEL(name, T)                                              \
	static void name(enum bcs_op op, const unsigned char *in,             \
			 unsigned char *io, size_t n)                         \
	{                                                                  \
		switch (op) {                                              \
		case BCS_OP_MAX:                                           \
			ZIP(T, a > b ? a : b);                             \
			break;                                             \
		case BCS_OP_MIN:                                           \
			ZIP(T, a < b ? a : b);                             \
			break;                                             \
		case BCS_OP_SUM:                                           \
			ZIP(T, a + (a != a ? a : b));                      \
			break;                                             \
		case BCS_OP_PROD:                                          \
			ZIP(T, a * (a != a ? a : b));                      \
			break;                                             \
		default:                                                   \
			break;                                             \
		}                                                          \
	}

FLOAT_KERNEL(float_k, float)
FLOAT_KERNEL(double_k, double)

static void ldouble_k(enum bcs_op op, const unsigned char *in,
		      unsigned char *io, size_t n)
{
	const size_t sz = sizeof(long double);

	for (size_t k = 0; k < n; k++) {
		long double a = ld_ldouble(in + k * sz);
		long double b = ld_ldouble(io + k * sz);
		long double r;

		switch (op) {
		case BCS_OP_MAX:
			r = a > b ? a : b;
			break;
		case BCS_OP_MIN:
			r = a < b ? a : b;
			break;
		case BCS_OP_SUM:
			r = a + (a != a ? a : b);
			break;
		default:
			r = a * (a != a ? a : b);
			break;
		}
		st_ldouble(io + k * sz, r);
	}
}

/* A product that must stay a product.  GCC 12's vectorizer recognizes
 * (ar*br - ai*bi, ar*bi + ai*br) as a complex multiplication and, at -O3
 * with FMA available (-march=haswell and later), emits vfmaddsub for it
 * even under -ffp-contract=off: one rounding instead of two, so a node
 * built for a newer CPU would compute other bits.  An empty asm that
 * claims to change each product hides them from that pattern; it costs
 * nothing but the vectorization of this (scalar anyway) loop.  Long
 * double has no vector or fused form on x86, so it needs none. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define ROUNDED(x) __asm__("" : "+x"(x))
#elif defined(__GNUC__) && !defined(__clang__)
#define ROUNDED(x) __asm__("" : "+m"(x))
#else
#define ROUNDED(x) ((void)0) /* clang honours -ffp-contract=off */
#endif
#define AS_IS(x) ((void)0)

/* Complex: the real part, then the imaginary part, each a T.  PROD is
 * the textbook formula, each product rounded (no contraction, see
 * ROUNDED), the operands in a fixed order.  A part that comes out NaN is
 * C's NAN: with four inputs to a part, which NaN payload survives would
 * again be the compiler's choice of operand order (see FLOAT_KERNEL). */
#define COMPLEX_KERNEL(name, T, LD, ST, KEEP)                              \
	static void name(enum bcs_op op, const unsigned char *in,             \
			 unsigned char *io, size_t n)                         \
	{                                                                  \
		const size_t sz = sizeof(T);                               \
                                                                           \
		for (size_t k = 0; k < n; k++) {                           \
			const unsigned char *pa = in + 2 * k * sz;         \
			unsigned char *pb = io + 2 * k * sz;               \
			T ar = LD(pa), ai = LD(pa + sz);                   \
			T br = LD(pb), bi = LD(pb + sz);                   \
			T rr, ri;                                          \
                                                                           \
			if (op == BCS_OP_SUM) {                            \
				rr = ar + br;                              \
				ri = ai + bi;                              \
			} else {                                           \
				T p1 = ar * br, p2 = ai * bi;              \
				T p3 = ar * bi, p4 = ai * br;              \
                                                                           \
				KEEP(p1);                                  \
				KEEP(p2);                                  \
				KEEP(p3);                                  \
				KEEP(p4);                                  \
				rr = p1 - p2;                              \
				ri = p3 + p4;                              \
			}                                                  \
			if (rr != rr)                                      \
				rr = (T)NAN;                               \
			if (ri != ri)                                      \
				ri = (T)NAN;                               \
			ST(pb, rr);                                        \
			ST(pb + sz, ri);                                   \
		}                                                          \
	}

COMPLEX_KERNEL(cfloat_k, float, ld_float, st_float, ROUNDED)
COMPLEX_KERNEL(cdouble_k, double, ld_double, st_double, ROUNDED)
COMPLEX_KERNEL(cldouble_k, long double, ld_ldouble, st_ldouble, AS_IS)

/* ---- value-index pairs -------------------------------------------------- */

/* MPI-3.1 §5.9.4 with a = (u, i), b = (v, j): the value as MAX (MIN)
 * computes it, the index of the winner, the lower index on a tie.  The
 * result is built in a zeroed byte array, so the struct's padding comes
 * out as 0 on every node. */
#define PAIR_KERNEL(name, S, VT, IT, ST_V)                                 \
	static void name(enum bcs_op op, const unsigned char *in,             \
			 unsigned char *io, size_t n)                         \
	{                                                                  \
		const int max = op == BCS_OP_MAXLOC;                       \
                                                                           \
		for (size_t k = 0; k < n; k++) {                           \
			S a, b;                                            \
			unsigned char r[sizeof(S)] = { 0 };                \
			VT rv;                                             \
			IT ri;                                             \
			int wins, tie;                                     \
                                                                           \
			memcpy(&a, in + k * sizeof(S), sizeof(S));         \
			memcpy(&b, io + k * sizeof(S), sizeof(S));         \
			wins = max ? a.v > b.v : a.v < b.v;                \
			tie = a.v == b.v;                                  \
			rv = wins ? a.v : b.v;                             \
			ri = wins ? a.i                                    \
				  : tie ? (a.i < b.i ? a.i : b.i) : b.i;  \
			ST_V(r + offsetof(S, v), rv);                      \
			memcpy(r + offsetof(S, i), &ri, sizeof(ri));       \
			memcpy(io + k * sizeof(S), r, sizeof(S));          \
		}                                                          \
	}

static inline void st_short(unsigned char *p, short v)
{
	memcpy(p, &v, sizeof v);
}

static inline void st_int(unsigned char *p, int v)
{
	memcpy(p, &v, sizeof v);
}

static inline void st_long(unsigned char *p, long v)
{
	memcpy(p, &v, sizeof v);
}

PAIR_KERNEL(p_float_int_k, struct p_float_int, float, int, st_float)
PAIR_KERNEL(p_double_int_k, struct p_double_int, double, int, st_double)
PAIR_KERNEL(p_long_int_k, struct p_long_int, long, int, st_long)
PAIR_KERNEL(p_2int_k, struct p_2int, int, int, st_int)
PAIR_KERNEL(p_short_int_k, struct p_short_int, short, int, st_short)
PAIR_KERNEL(p_ldouble_int_k, struct p_ldouble_int, long double, int,
	    st_ldouble)
PAIR_KERNEL(p_2float_k, struct p_2float, float, float, st_float)
PAIR_KERNEL(p_2double_k, struct p_2double, double, double, st_double)

/* ---- the floating-point environment ------------------------------------ */

/* The caller's process may run with flush-to-zero, denormals-are-zero, a
 * directed rounding mode, unmasked exceptions or x87 single precision
 * (-Ofast's startup code sets the first two): any of them changes result
 * bits, or traps.  A floating kernel runs under the IEEE defaults and the
 * caller's settings are put back after. */
struct fpenv {
	unsigned int mxcsr;    /* the caller's SSE control and status */
	unsigned short x87cw;  /* the caller's x87 control word */
};

#define MXCSR_DEFAULT 0x1f80u /* all masked, to nearest, no FTZ or DAZ */
#define X87CW_DEFAULT 0x037fu /* all masked, to nearest, 64-bit mantissa */

/* x87 only for the long double kernels: the others never touch it. */
static void fpenv_pin(struct fpenv *e, int x87)
{
	e->mxcsr = MXCSR_DEFAULT;
	e->x87cw = X87CW_DEFAULT;
#if defined(__SSE__)
	e->mxcsr = _mm_getcsr();
	if (e->mxcsr != MXCSR_DEFAULT)
		_mm_setcsr(MXCSR_DEFAULT);
#endif
#if defined(__x86_64__) || defined(__i386__)
	if (x87) {
		unsigned short cw = X87CW_DEFAULT;

		__asm__ volatile("fnstcw %0" : "=m"(e->x87cw));
		if (e->x87cw != cw)
			__asm__ volatile("fldcw %0" : : "m"(cw));
	}
#endif
	(void)x87;
}

static void fpenv_restore(const struct fpenv *e)
{
#if defined(__SSE__)
	if (e->mxcsr != MXCSR_DEFAULT)
		_mm_setcsr(e->mxcsr);
#endif
#if defined(__x86_64__) || defined(__i386__)
	if (e->x87cw != X87CW_DEFAULT)
		__asm__ volatile("fldcw %0" : : "m"(e->x87cw));
#endif
	(void)e;
}

/* ---- the entry point ---------------------------------------------------- */

static void int_dispatch(enum bcs_op op, const struct type_info *ti,
			 const unsigned char *in, unsigned char *io, size_t n)
{
	switch (ti->size) {
	case 1:
		int1(op, ti->sgn, in, io, n);
		break;
	case 2:
		int2(op, ti->sgn, in, io, n);
		break;
	case 4:
		int4(op, ti->sgn, in, io, n);
		break;
	default:
		int8(op, ti->sgn, in, io, n);
		break;
	}
}

/* The other kernels, by kind (K_FLOAT onwards).  Most compute in floating
 * point, so all run with the environment pinned (integer pairs lose a few
 * cycles to that, nothing else). */
typedef void kernel_fn(enum bcs_op, const unsigned char *, unsigned char *,
		       size_t);

static kernel_fn *const kernels[] = {
	[K_FLOAT] = float_k,
	[K_DOUBLE] = double_k,
	[K_LDOUBLE] = ldouble_k,
	[K_CFLOAT] = cfloat_k,
	[K_CDOUBLE] = cdouble_k,
	[K_CLDOUBLE] = cldouble_k,
	[K_P_FLOAT_INT] = p_float_int_k,
	[K_P_DOUBLE_INT] = p_double_int_k,
	[K_P_LONG_INT] = p_long_int_k,
	[K_P_2INT] = p_2int_k,
	[K_P_SHORT_INT] = p_short_int_k,
	[K_P_LDOUBLE_INT] = p_ldouble_int_k,
	[K_P_2FLOAT] = p_2float_k,
	[K_P_2DOUBLE] = p_2double_k,
};

int bcs_reduce(enum bcs_op op, enum bcs_type t, const void *in, void *inout,
	       size_t count)
{
	const struct type_info *ti = type_of(t);
	struct fpenv env;

	if (!bcs_op_valid(op, t))
		return -EINVAL;
	if (count == 0)
		return 0;
	if (!in || !inout || count > SIZE_MAX / ti->size)
		return -EINVAL;
	if (op == BCS_OP_NO_OP)
		return 0;
	if (op == BCS_OP_REPLACE) {
		memmove(inout, in, count * ti->size);
		return 0;
	}
	if (ti->kind == K_INT) {
		int_dispatch(op, ti, in, inout, count);
		return 0;
	}
	fpenv_pin(&env, ti->kind == K_LDOUBLE || ti->kind == K_CLDOUBLE ||
				ti->kind == K_P_LDOUBLE_INT);
	kernels[ti->kind](op, in, inout, count);
	fpenv_restore(&env);
	return 0;
}
