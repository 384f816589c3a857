/*
 * bcs_reduce.h — the reduction kernels of BCS-MPI (libstorm-bcs, included
 * by storm_bcs.h).  A reduction on a predefined datatype and operation is
 * computed in two places: by the rank's MPI library (MPI_Reduce_local, a
 * one-rank communicator, a node-local combine) and by storm-nm's BCS
 * engine in its reduce microphase.  Both call these functions, so every
 * node computes the same bits for the same inputs (docs/bcsmpi.md,
 * "Reductions").
 *
 * Pure C: no allocation, no threads, no global state, no dependency.
 * Every function may be called from any thread at any time.
 *
 * Types and operations are Storm's own numbering, independent of any MPI
 * ABI: libbcsmpi maps its MPI_Datatype and MPI_Op handles to them once,
 * and these numbers travel in descriptors (struct bcs_desc's type and op)
 * between a rank and its engine.  They are therefore append-only: a value
 * is never renumbered or reused.  0 is no type and no operation, so a
 * zeroed descriptor is refused.
 */
#ifndef STORM_BCS_REDUCE_H
#define STORM_BCS_REDUCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The predefined datatypes a reduction or an accumulate may name.  Sizes
 * are those of the C compiler this is built with (x86_64 Linux: long 8,
 * wchar_t 4, long double 16 holding the x87 80-bit format); the Fortran
 * ones are gfortran's defaults on x86_64.  Synonyms MPI defines map to one
 * value: MPI_LONG_LONG_INT and MPI_LONG_LONG to BCS_T_LONG_LONG,
 * MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX to BCS_T_C_FLOAT_COMPLEX.  Not
 * provided: the C++ types (libbcsmpi is C), MPI_INTEGER16, MPI_REAL2,
 * MPI_REAL16 and MPI_COMPLEX32 (no C type of that format here), and the
 * handles MPI_TYPE_CREATE_F90_* return (libbcsmpi maps them to the fixed
 * sizes below).  The MPI-3.1 §5.9.2 category of each is in brackets; a
 * type in no category takes only REPLACE and NO_OP.
 */
enum bcs_type {
	BCS_T_NONE = 0,               /* no type: always refused */
	/* C */
	BCS_T_CHAR = 1,               /* char: text [none] */
	BCS_T_SIGNED_CHAR = 2,        /* signed char [C integer] */
	BCS_T_UNSIGNED_CHAR = 3,      /* unsigned char [C integer] */
	BCS_T_SHORT = 4,              /* [C integer] */
	BCS_T_UNSIGNED_SHORT = 5,     /* [C integer] */
	BCS_T_INT = 6,                /* [C integer] */
	BCS_T_UNSIGNED = 7,           /* [C integer] */
	BCS_T_LONG = 8,               /* [C integer] */
	BCS_T_UNSIGNED_LONG = 9,      /* [C integer] */
	BCS_T_LONG_LONG = 10,         /* [C integer] */
	BCS_T_UNSIGNED_LONG_LONG = 11, /* [C integer] */
	BCS_T_INT8 = 12,              /* int8_t [C integer] */
	BCS_T_INT16 = 13,             /* [C integer] */
	BCS_T_INT32 = 14,             /* [C integer] */
	BCS_T_INT64 = 15,             /* [C integer] */
	BCS_T_UINT8 = 16,             /* uint8_t [C integer] */
	BCS_T_UINT16 = 17,            /* [C integer] */
	BCS_T_UINT32 = 18,            /* [C integer] */
	BCS_T_UINT64 = 19,            /* [C integer] */
	BCS_T_WCHAR = 20,             /* wchar_t: text [none] */
	BCS_T_BYTE = 21,              /* 8 bits, no value [byte] */
	BCS_T_FLOAT = 22,             /* [floating point] */
	BCS_T_DOUBLE = 23,            /* [floating point] */
	BCS_T_LONG_DOUBLE = 24,       /* [floating point] */
	BCS_T_C_FLOAT_COMPLEX = 25,   /* float _Complex [complex] */
	BCS_T_C_DOUBLE_COMPLEX = 26,  /* [complex] */
	BCS_T_C_LONG_DOUBLE_COMPLEX = 27, /* [complex] */
	BCS_T_C_BOOL = 28,            /* _Bool, 1 byte [logical] */
	BCS_T_AINT = 29,              /* MPI_Aint: intptr_t [Fortran integer] */
	BCS_T_OFFSET = 30,            /* MPI_Offset: int64_t [Fortran integer] */
	BCS_T_COUNT = 31,             /* MPI_Count: int64_t [Fortran integer] */
	/* Fortran, as MPI defines them for C programs too */
	BCS_T_INTEGER = 32,           /* 4 bytes [Fortran integer] */
	BCS_T_REAL = 33,              /* 4 bytes [floating point] */
	BCS_T_DOUBLE_PRECISION = 34,  /* 8 bytes [floating point] */
	BCS_T_LOGICAL = 35,           /* 4 bytes, 0 false [logical] */
	BCS_T_COMPLEX = 36,           /* 2 x REAL [complex] */
	BCS_T_DOUBLE_COMPLEX = 37,    /* 2 x DOUBLE PRECISION [complex] */
	BCS_T_INTEGER1 = 38,          /* [Fortran integer] */
	BCS_T_INTEGER2 = 39,          /* [Fortran integer] */
	BCS_T_INTEGER4 = 40,          /* [Fortran integer] */
	BCS_T_INTEGER8 = 41,          /* [Fortran integer] */
	BCS_T_REAL4 = 42,             /* [floating point] */
	BCS_T_REAL8 = 43,             /* [floating point] */
	BCS_T_COMPLEX8 = 44,          /* 2 x REAL4 [complex] */
	BCS_T_COMPLEX16 = 45,         /* 2 x REAL8 [complex] */
	/* Value-index pairs for MINLOC and MAXLOC, laid out as the C
	 * compiler lays out the struct named (padding included in the
	 * size): the only types those two take, and they take no other
	 * operation but REPLACE and NO_OP. */
	BCS_T_FLOAT_INT = 46,         /* struct { float v; int i; } */
	BCS_T_DOUBLE_INT = 47,        /* struct { double v; int i; } */
	BCS_T_LONG_INT = 48,          /* struct { long v; int i; } */
	BCS_T_2INT = 49,              /* struct { int v; int i; } */
	BCS_T_SHORT_INT = 50,         /* struct { short v; int i; } */
	BCS_T_LONG_DOUBLE_INT = 51,   /* struct { long double v; int i; } */
	BCS_T_2INTEGER = 52,          /* Fortran: 2 x INTEGER */
	BCS_T_2REAL = 53,             /* Fortran: 2 x REAL (the index too) */
	BCS_T_2DOUBLE_PRECISION = 54, /* Fortran: 2 x DOUBLE PRECISION */
	BCS_T_END                     /* one past the last; not a type, and
				       * not on the wire (it grows) */
};

/* The predefined operations (MPI-3.1 §5.9.2, §5.9.4, §11.3.4). */
enum bcs_op {
	BCS_OP_NONE = 0,     /* no operation: always refused */
	BCS_OP_MAX = 1,      /* C/Fortran integer, floating point */
	BCS_OP_MIN = 2,      /* C/Fortran integer, floating point */
	BCS_OP_SUM = 3,      /* C/Fortran integer, floating point, complex */
	BCS_OP_PROD = 4,     /* C/Fortran integer, floating point, complex */
	BCS_OP_LAND = 5,     /* C integer, logical */
	BCS_OP_BAND = 6,     /* C/Fortran integer, byte */
	BCS_OP_LOR = 7,      /* C integer, logical */
	BCS_OP_BOR = 8,      /* C/Fortran integer, byte */
	BCS_OP_LXOR = 9,     /* C integer, logical */
	BCS_OP_BXOR = 10,    /* C/Fortran integer, byte */
	BCS_OP_MINLOC = 11,  /* value-index pairs */
	BCS_OP_MAXLOC = 12,  /* value-index pairs */
	BCS_OP_REPLACE = 13, /* any type: inout = in (accumulate) */
	BCS_OP_NO_OP = 14,   /* any type: inout unchanged (accumulate) */
	BCS_OP_END           /* one past the last; not an operation */
};

/** Bytes of one element of type @t (its C sizeof, padding included: the
 * stride between elements of an array of it), or 0 if @t is not a type
 * of enum bcs_type. */
size_t bcs_type_size(enum bcs_type t);

/** 1 if MPI-3.1 allows operation @op on type @t, else 0 (also for values
 * outside the enums, as a descriptor from a rank may carry).  The table
 * is MPI-3.1 §5.9.2's: MAX, MIN on C integer, Fortran integer and
 * floating point; SUM, PROD on those and complex; LAND, LOR, LXOR on C
 * integer and logical (not floating point, not Fortran integer); BAND,
 * BOR, BXOR on C integer, Fortran integer and byte; MINLOC, MAXLOC on
 * the pair types alone; REPLACE and NO_OP on every type. */
int bcs_op_valid(enum bcs_op op, enum bcs_type t);

/** Combine @count elements of type @t: inout[i] = in[i] op inout[i].
 *
 * Operand order: @in is the left operand and @inout the right, as in
 * MPI_Reduce_local(inbuf, inoutbuf) and a user function's (invec,
 * inoutvec).  To reduce in rank order, pass the lower ranks' partial
 * result as @in and the higher ranks' as @inout.  The order matters for
 * bits even where MPI calls an operation commutative: it decides which
 * NaN a floating SUM or PROD returns, which of +0 and -0 MAX and MIN
 * return, and what a NaN does to MAX and MIN (below).
 *
 * Results, element by element (a = in[i], b = inout[i]):
 * - Integers (signed or not): SUM and PROD wrap modulo 2^bits, as
 *   two's complement (computed in unsigned arithmetic: no undefined
 *   behaviour).  MAX, MIN compare as the type's signedness says.
 * - Logical operations on C integers and logical types: an element is
 *   true iff any of its bytes is nonzero; the result is 0 or 1 of the
 *   type (for _Bool, the byte 0 or 1).
 * - Floating point: SUM a + b, PROD a * b in the type's own precision,
 *   never contracted into a fused multiply-add — except that a NaN a
 *   gives a op a, which is a quieted (so with two NaNs the result is
 *   @in's, whatever instruction order the compiler chose); MAX is
 *   (a > b ? a : b) and MIN (a < b ? a : b), so a NaN in @inout is kept,
 *   a NaN in @in alone is dropped, and MAX(+0, -0) is -0 (b) — the same
 *   bits on every node, where fmax() would leave them to the C library.
 * - Complex: SUM part by part; PROD by the textbook formula
 *   (ar*br - ai*bi) + (ar*bi + ai*br)i, without C Annex G's recovery
 *   of infinities (as Open MPI and MPICH compute it).  A part that is
 *   NaN is C's NAN (positive, quiet, no payload).
 * - MAXLOC on pairs (u,i) = a, (v,j) = b: the value is (u > v ? u : v),
 *   the index i if u > v, min(i, j) if u == v, else j — MPI's rule that
 *   the lower index wins a tie; so a NaN value in either operand makes
 *   @inout's pair win.  MINLOC likewise with <.
 * - REPLACE: inout[i] = in[i], every byte; NO_OP: nothing.
 * - long double (alone, complex, or in LONG_DOUBLE_INT) and pair types:
 *   bytes that hold no value (the 6 bytes of padding in x87's 16, the
 *   padding of a pair's struct) are written as 0 by every operation but
 *   REPLACE, so whole result elements are bit-identical whatever the
 *   padding of the inputs was.
 * - Floating kernels run under IEEE defaults (round to nearest, no
 *   flush-to-zero, exceptions masked, x87 at 64-bit precision) whatever
 *   the calling thread had set, and put its settings back: an -Ofast
 *   application's rank and the engine compute alike, and none traps.
 *
 * Buffers need no alignment (engine buffers may be unaligned: elements
 * are loaded and stored with memcpy, which the compiler turns into plain
 * moves).  @in and @inout may be the same buffer (x op x) but must not
 * otherwise overlap.  Either may be NULL when @count is 0.
 *
 * @return 0; or -EINVAL if bcs_op_valid(@op, @t) is 0, or @count > 0
 *         with a NULL buffer or more than SIZE_MAX bytes; then @inout
 *         is unchanged.
 */
int bcs_reduce(enum bcs_op op, enum bcs_type t, const void *in, void *inout,
	       size_t count);

/** The name of type @t as MPI spells it ("MPI_DOUBLE_INT"), or "?" for
 * a value outside the enum: for error messages.  Static storage. */
const char *bcs_type_name(enum bcs_type t);

/** The name of operation @op ("MPI_SUM"), or "?".  Static storage. */
const char *bcs_op_name(enum bcs_op op);

#ifdef __cplusplus
}
#endif

#endif
