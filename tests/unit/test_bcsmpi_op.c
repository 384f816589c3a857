/*
 * test_bcsmpi_op.c — reduction operations (bcsmpi/op.c): every predefined
 * operation on types of every category through bcs_op_apply, against
 * MPI-3.1's table transcribed here and the kernels' own results; derived
 * types reduced element by element with their gaps untouched; user
 * functions called once with the caller's count and datatype; the MPI
 * calls' errors.
 */
#include <complex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bcsmpi_stubs.h"
#include "types.h"

static int setup(void **state)
{
	(void)state;
	stub_initialize();
	assert_int_equal(bcs_dt_init(), MPI_SUCCESS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	bcs_dt_fini();
	bcs_op_fini();
	return 0;
}

static const MPI_Op ops[] = {
	MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
	MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE,
	MPI_NO_OP,
};
#define NOPS (sizeof ops / sizeof ops[0])

/* One type of each category of MPI-3.1 §5.9.2, and whether each operation
 * of ops[] is defined on it (the standard's table, written out: not
 * bcs_op_valid's). */
static const struct {
	MPI_Datatype t;
	const char *valid; /* one per ops[]: MAX MIN SUM PROD LAND BAND LOR
			    * BOR LXOR BXOR MINLOC MAXLOC REPLACE NO_OP */
} cases[] = {
	{ MPI_INT, "1111111111" "00" "11" },           /* C integer */
	{ MPI_UNSIGNED_CHAR, "1111111111" "00" "11" },
	{ MPI_INTEGER, "1111" "010101" "00" "11" },    /* Fortran integer */
	{ MPI_DOUBLE, "1111" "000000" "00" "11" },     /* floating point */
	{ MPI_FLOAT, "1111" "000000" "00" "11" },
	{ MPI_C_BOOL, "0000" "101010" "00" "11" },     /* logical */
	{ MPI_LOGICAL, "0000" "101010" "00" "11" },
	{ MPI_C_DOUBLE_COMPLEX, "0011" "000000" "00" "11" }, /* complex */
	{ MPI_BYTE, "0000" "010101" "00" "11" },       /* byte */
	{ MPI_DOUBLE_INT, "0000" "000000" "11" "11" }, /* pairs */
	{ MPI_2INT, "0000" "000000" "11" "11" },
	{ MPI_CHAR, "0000" "000000" "00" "11" },       /* text */
};

static void test_every_predefined_op_on_every_category(void **state)
{
	enum { N = 7 };
	unsigned char in[N * 16], io[N * 16], want[N * 16];

	(void)state;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		MPI_Datatype t = cases[c].t;
		size_t bytes = N * bcs_dt_size(t);
		enum bcs_type k;

		assert_int_equal(bcs_dt_kernel(t, &k), 0);
		for (size_t o = 0; o < NOPS; o++) {
			enum bcs_op op;
			int rc;

			for (size_t i = 0; i < bytes; i++) {
				in[i] = (unsigned char)(i * 7 + o);
				io[i] = (unsigned char)(i * 13 + c);
			}
			/* logical values must be valid _Bool */
			if (t == MPI_C_BOOL)
				for (size_t i = 0; i < bytes; i++) {
					in[i] &= 1;
					io[i] &= 1;
				}
			memcpy(want, io, bytes);
			assert_int_equal(bcs_op_kernel(ops[o], &op), 0);
			rc = bcs_op_apply(ops[o], in, io, N, t);
			if (cases[c].valid[o] == '0') {
				assert_int_equal(rc, MPI_ERR_OP);
				assert_memory_equal(io, want, bytes);
				continue;
			}
			assert_int_equal(rc, MPI_SUCCESS);
			assert_int_equal(bcs_reduce(op, k, in, want, N), 0);
			assert_memory_equal(io, want, bytes);
		}
	}
}

static void test_results_are_the_operations(void **state)
{
	int a[3] = { 1, -2, 3 }, b[3] = { 10, 20, -30 };
	double x[2] = { 1.5, -4 }, y[2] = { 2, 8 };
	struct { double v; int i; } p[2] = { { 1, 0 }, { 5, 0 } },
				    q[2] = { { 1, 1 }, { 2, 1 } };

	(void)state;
	assert_int_equal(bcs_op_apply(MPI_SUM, a, b, 3, MPI_INT), 0);
	assert_int_equal(b[0], 11);
	assert_int_equal(b[1], 18);
	assert_int_equal(b[2], -27);
	assert_int_equal(bcs_op_apply(MPI_PROD, x, y, 2, MPI_DOUBLE), 0);
	assert_true(y[0] == 3.0 && y[1] == -32.0);
	assert_int_equal(bcs_op_apply(MPI_MAXLOC, p, q, 2, MPI_DOUBLE_INT), 0);
	assert_true(q[0].v == 1 && q[0].i == 0); /* a tie: the lower index */
	assert_true(q[1].v == 5 && q[1].i == 0);
	/* no element: nothing to do, and no buffer needed */
	assert_int_equal(bcs_op_apply(MPI_SUM, NULL, NULL, 0, MPI_INT), 0);
	assert_int_equal(bcs_op_apply(MPI_SUM, a, b, -1, MPI_INT),
			 MPI_ERR_COUNT);
	assert_int_equal(bcs_op_apply(MPI_SUM, a, b, 1, MPI_DATATYPE_NULL),
			 MPI_ERR_TYPE);
	assert_int_equal(bcs_op_apply(MPI_OP_NULL, a, b, 1, MPI_INT),
			 MPI_ERR_OP);
	/* travel, but no reduction: MPI_PACKED, the C++ types */
	assert_int_equal(bcs_op_apply(MPI_REPLACE, a, b, 1, MPI_PACKED),
			 MPI_ERR_OP);
	assert_int_equal(bcs_op_apply(MPI_SUM, x, y, 1,
				      MPI_CXX_DOUBLE_COMPLEX), MPI_ERR_OP);
}

/* A vector of doubles sums at its elements only. */
static void test_derived_types_reduce_element_by_element(void **state)
{
	MPI_Datatype v, c, pairs;
	double in[10], io[10];
	struct { double v; int i; } pin[4] = { { 3, 1 }, { 0, 1 }, { 7, 1 },
					       { 9, 9 } },
				    pio[4] = { { 5, 2 }, { 0, 2 }, { 7, 0 },
					       { 1, 1 } };

	(void)state;
	/* elements 0, 2, 4 of each 5 doubles: two of them */
	assert_int_equal(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &v),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&v), MPI_SUCCESS);
	assert_int_equal(bcs_dt_extent(v), 40);
	for (int i = 0; i < 10; i++) {
		in[i] = i;
		io[i] = 100 * i;
	}
	assert_int_equal(bcs_op_apply(MPI_SUM, in, io, 2, v), MPI_SUCCESS);
	for (int i = 0; i < 10; i++)
		assert_true(io[i] == ((i % 5) % 2 == 0 ? 101.0 * i :
						      100.0 * i));
	/* an operation not defined on the basic type is refused whole */
	assert_int_equal(bcs_op_apply(MPI_BAND, in, io, 2, v), MPI_ERR_OP);
	/* uncommitted: not for use */
	assert_int_equal(MPI_Type_contiguous(2, MPI_DOUBLE, &c), MPI_SUCCESS);
	assert_int_equal(bcs_op_apply(MPI_SUM, in, io, 1, c), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_commit(&c), MPI_SUCCESS);
	assert_int_equal(bcs_op_apply(MPI_MIN, in, io, 5, c), MPI_SUCCESS);
	for (int i = 0; i < 10; i++)
		assert_true(io[i] == i);
	/* pairs: MAXLOC on elements 0 and 2 of a vector of MPI_DOUBLE_INT */
	assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_DOUBLE_INT, &pairs),
			 MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&pairs), MPI_SUCCESS);
	assert_int_equal(bcs_op_apply(MPI_MAXLOC, pin, pio, 1, pairs),
			 MPI_SUCCESS);
	assert_true(pio[0].v == 5 && pio[0].i == 2);
	assert_true(pio[1].v == 0 && pio[1].i == 2); /* a gap */
	assert_true(pio[2].v == 7 && pio[2].i == 0);
	assert_true(pio[3].v == 1 && pio[3].i == 1); /* past the type */
	assert_int_equal(bcs_op_apply(MPI_SUM, pin, pio, 1, pairs), MPI_ERR_OP);
	assert_int_equal(MPI_Type_free(&v), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&c), MPI_SUCCESS);
	assert_int_equal(MPI_Type_free(&pairs), MPI_SUCCESS);
}

/* ---- user operations --------------------------------------------------- */

static struct {
	int calls, len;
	MPI_Datatype dt;
	void *in, *inout;
} seen;

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	seen.calls++;
	seen.len = *len;
	seen.dt = *dt;
	seen.in = in;
	seen.inout = inout;
	if (*dt == MPI_INT)
		for (int i = 0; i < *len; i++)
			((int *)inout)[i] += ((int *)in)[i];
	*dt = MPI_DATATYPE_NULL; /* ours only */
}

static void test_user_op_gets_count_and_datatype(void **state)
{
	MPI_Op op;
	MPI_Datatype v;
	int a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, b[8] = { 0 }, commute = -1;
	enum bcs_op k;

	(void)state;
	assert_int_equal(MPI_Op_create(user_sum, 1, &op), MPI_SUCCESS);
	assert_true(bcs_op_ok(op));
	assert_int_equal(bcs_op_kernel(op, &k), -1);
	memset(&seen, 0, sizeof seen);
	assert_int_equal(bcs_op_apply(op, a, b, 8, MPI_INT), MPI_SUCCESS);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.len, 8);
	assert_int_equal(seen.dt, MPI_INT);
	assert_ptr_equal(seen.in, a);
	assert_ptr_equal(seen.inout, b);
	assert_int_equal(b[7], 8);
	/* a derived type reaches it as itself, once */
	assert_int_equal(MPI_Type_vector(2, 1, 3, MPI_INT, &v), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&v), MPI_SUCCESS);
	memset(&seen, 0, sizeof seen);
	assert_int_equal(MPI_Reduce_local(a, b, 2, v, op), MPI_SUCCESS);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.len, 2);
	assert_int_equal(seen.dt, v);
	assert_int_equal(MPI_Op_commutative(op, &commute), MPI_SUCCESS);
	assert_int_equal(commute, 1);
	assert_int_equal(MPI_Op_free(&op), MPI_SUCCESS);
	assert_int_equal(op, MPI_OP_NULL);
	assert_int_equal(MPI_Type_free(&v), MPI_SUCCESS);
}

static void test_op_create_and_free(void **state)
{
	MPI_Op a, b, stale, sum = MPI_SUM;
	int commute = -1;

	(void)state;
	assert_int_equal(MPI_Op_create(user_sum, 0, &a), MPI_SUCCESS);
	assert_int_equal(MPI_Op_create(user_sum, 7, &b), MPI_SUCCESS);
	assert_int_not_equal(a, b);
	assert_int_equal(bcs_op_commutative(a), 0);
	assert_int_equal(bcs_op_commutative(b), 1);
	assert_int_equal(MPI_Op_commutative(MPI_SUM, &commute), MPI_SUCCESS);
	assert_int_equal(commute, 1);
	stale = a;
	assert_int_equal(MPI_Op_free(&a), MPI_SUCCESS);
	assert_false(bcs_op_ok(stale));
	assert_int_equal(MPI_Op_free(&stale), MPI_ERR_OP);
	assert_int_equal(MPI_Op_commutative(stale, &commute), MPI_ERR_OP);
	assert_int_equal(bcs_op_apply(stale, &commute, &commute, 1, MPI_INT),
			 MPI_ERR_OP);
	assert_int_equal(MPI_Op_free(&sum), MPI_ERR_OP);
	assert_int_equal(sum, MPI_SUM);
	assert_int_equal(MPI_Op_free(&b), MPI_SUCCESS);
	assert_int_equal(MPI_Op_create(NULL, 1, &a), MPI_ERR_ARG);
	assert_int_equal(MPI_Op_create(user_sum, 1, NULL), MPI_ERR_ARG);
	/* many: distinct handles, entries reused after a free */
	for (int round = 0; round < 3; round++) {
		MPI_Op many[100];

		for (int i = 0; i < 100; i++)
			assert_int_equal(MPI_Op_create(user_sum, 1, &many[i]),
					 MPI_SUCCESS);
		for (int i = 0; i < 100; i++)
			assert_int_equal(MPI_Op_free(&many[i]), MPI_SUCCESS);
	}
}

static void test_predefined_ops_map_to_the_kernels(void **state)
{
	enum bcs_op k;

	(void)state;
	for (size_t o = 0; o < NOPS; o++) {
		assert_true(bcs_op_ok(ops[o]));
		assert_int_equal(bcs_op_kernel(ops[o], &k), 0);
		assert_int_equal(k, BCS_OP_MAX + (int)o);
		assert_int_equal(bcs_op_commutative(ops[o]), 1);
	}
	assert_false(bcs_op_ok(MPI_OP_NULL));
	assert_false(bcs_op_ok((MPI_Op)0x5800000f));
	assert_false(bcs_op_ok((MPI_Op)0x58000000));
	assert_false(bcs_op_ok(MPI_INT));
	assert_int_equal(bcs_op_kernel(MPI_OP_NULL, &k), -1);
}

static void test_reduce_local_checks_its_arguments(void **state)
{
	double a[2] = { 1, 2 }, b[2] = { 3, 4 };
	MPI_Datatype c;

	(void)state;
	assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_DOUBLE, MPI_SUM),
			 MPI_SUCCESS);
	assert_true(b[0] == 4 && b[1] == 6);
	stub_err_reset();
	assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_DOUBLE, MPI_BAND),
			 MPI_ERR_OP);
	assert_string_equal(stub_err_fn, "MPI_Reduce_local");
	assert_non_null(strstr(stub_err_text, "MPI_BAND"));
	assert_non_null(strstr(stub_err_text, "MPI_DOUBLE"));
	assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_DOUBLE, MPI_REPLACE),
			 MPI_ERR_OP);
	assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_DOUBLE, MPI_NO_OP),
			 MPI_ERR_OP);
	assert_int_equal(MPI_Reduce_local(a, b, -1, MPI_DOUBLE, MPI_SUM),
			 MPI_ERR_COUNT);
	assert_int_equal(MPI_Reduce_local(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM),
			 MPI_ERR_TYPE);
	assert_int_equal(MPI_Reduce_local(a, b, 1, MPI_DOUBLE, MPI_OP_NULL),
			 MPI_ERR_OP);
	assert_int_equal(MPI_Reduce_local(MPI_IN_PLACE, b, 1, MPI_DOUBLE,
					  MPI_SUM), MPI_ERR_BUFFER);
	assert_int_equal(MPI_Reduce_local(NULL, b, 1, MPI_DOUBLE, MPI_SUM),
			 MPI_ERR_BUFFER);
	assert_int_equal(MPI_Reduce_local(NULL, NULL, 0, MPI_DOUBLE, MPI_SUM),
			 MPI_SUCCESS);
	/* a derived type made of doubles: as doubles */
	assert_int_equal(MPI_Type_contiguous(2, MPI_DOUBLE, &c), MPI_SUCCESS);
	assert_int_equal(MPI_Reduce_local(a, b, 1, c, MPI_SUM), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_commit(&c), MPI_SUCCESS);
	assert_int_equal(MPI_Reduce_local(a, b, 1, c, MPI_SUM), MPI_SUCCESS);
	assert_true(b[0] == 5 && b[1] == 8);
	stub_err_reset();
	assert_int_equal(MPI_Reduce_local(a, b, 1, c, MPI_LXOR), MPI_ERR_OP);
	assert_non_null(strstr(stub_err_text, "made of MPI_DOUBLE"));
	assert_int_equal(MPI_Type_free(&c), MPI_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_predefined_op_on_every_category),
		cmocka_unit_test(test_results_are_the_operations),
		cmocka_unit_test(test_derived_types_reduce_element_by_element),
		cmocka_unit_test(test_user_op_gets_count_and_datatype),
		cmocka_unit_test(test_op_create_and_free),
		cmocka_unit_test(test_predefined_ops_map_to_the_kernels),
		cmocka_unit_test(test_reduce_local_checks_its_arguments),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
