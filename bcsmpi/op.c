/*
 * op.c — reduction operations: MPI's predefined ones, computed by the
 * libstorm-bcs kernels (bcs_reduce.h) so that a rank gets the bits its
 * node's engine gets for the same inputs, and the program's own
 * (MPI_Op_create).  bcs_op_apply is the one place either is applied: by
 * MPI_Reduce_local here, by the collectives wherever a rank combines
 * data itself.
 *
 * Key invariants: a predefined operation runs only on a type MPI defines
 * it for (bcs_op_valid on the type's basic element: a derived type of
 * doubles sums as doubles, run by run of its type map); a user function
 * gets the caller's count and datatype unchanged, derived or not, in one
 * call (MPI-3.1 §5.9.5) — it is never split into basic elements for it.
 *
 * Handles: the predefined operations are MPICH's builtin handles (index
 * 1-14, MPI_MAX .. MPI_NO_OP); user operations are direct handles from
 * index 1.  Like the datatype table, the operation table takes no lock.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"
#include "types.h"

/* By handle index; BCS_OP_NONE where MPICH has no operation. */
static const enum bcs_op predef_ops[] = {
	[MPI_MAX & 0xff] = BCS_OP_MAX,
	[MPI_MIN & 0xff] = BCS_OP_MIN,
	[MPI_SUM & 0xff] = BCS_OP_SUM,
	[MPI_PROD & 0xff] = BCS_OP_PROD,
	[MPI_LAND & 0xff] = BCS_OP_LAND,
	[MPI_BAND & 0xff] = BCS_OP_BAND,
	[MPI_LOR & 0xff] = BCS_OP_LOR,
	[MPI_BOR & 0xff] = BCS_OP_BOR,
	[MPI_LXOR & 0xff] = BCS_OP_LXOR,
	[MPI_BXOR & 0xff] = BCS_OP_BXOR,
	[MPI_MINLOC & 0xff] = BCS_OP_MINLOC,
	[MPI_MAXLOC & 0xff] = BCS_OP_MAXLOC,
	[MPI_REPLACE & 0xff] = BCS_OP_REPLACE,
	[MPI_NO_OP & 0xff] = BCS_OP_NO_OP,
};
#define NPREDEF (sizeof predef_ops / sizeof predef_ops[0])

struct uop {
	MPI_User_function *fn; /* NULL: a free entry */
	int commute;
};

static struct uop *uops; /* by handle index; 0 is never used */
static unsigned nuops;

static struct uop *uop_get(MPI_Op op)
{
	unsigned i = H_INDEX(op);

	if (H_KIND(op) != H_DIRECT || H_OBJ(op) != O_OP || !i || i >= nuops ||
	    !uops[i].fn)
		return NULL;
	return &uops[i];
}

/* ---- impl.h and types.h ------------------------------------------------ */

int bcs_op_kernel(MPI_Op op, enum bcs_op *o)
{
	unsigned i = H_INDEX(op);

	if (H_KIND(op) != H_BUILTIN || H_OBJ(op) != O_OP || i >= NPREDEF ||
	    predef_ops[i] == BCS_OP_NONE)
		return -1;
	*o = predef_ops[i];
	return 0;
}

int bcs_op_ok(MPI_Op op)
{
	enum bcs_op o;

	return !bcs_op_kernel(op, &o) || uop_get(op);
}

int bcs_op_commutative(MPI_Op op)
{
	enum bcs_op o;
	const struct uop *u;

	if (!bcs_op_kernel(op, &o))
		return 1;
	return (u = uop_get(op)) ? u->commute : 0;
}

struct apply {
	enum bcs_op o;
	enum bcs_type k;
	size_t ksize;
	const unsigned char *in;
	unsigned char *inout;
};

/* One run of a derived type's data: whole basic elements (types.h). */
static int apply_run(void *ctx, MPI_Aint off, size_t len)
{
	const struct apply *a = ctx;

	return bcs_reduce(a->o, a->k, a->in + off, a->inout + off,
			  len / a->ksize) ? MPI_ERR_BUFFER : 0;
}

int bcs_op_apply(MPI_Op op, const void *in, void *inout, int count,
		 MPI_Datatype dt)
{
	const struct uop *u;
	struct apply a;
	MPI_Datatype basic;

	if (count < 0)
		return MPI_ERR_COUNT;
	if (!bcs_dt_ok(dt))
		return MPI_ERR_TYPE;
	if ((u = uop_get(op))) {
		int len = count;
		MPI_Datatype d = dt; /* the function may write through it */

		/* MPI_User_function takes invec without const */
		if (count > 0)
			u->fn((void *)(uintptr_t)in, inout, &len, &d);
		return MPI_SUCCESS;
	}
	basic = bcs_dt_basic(dt);
	if (bcs_op_kernel(op, &a.o) || bcs_dt_kernel(basic, &a.k) ||
	    !bcs_op_valid(a.o, a.k))
		return MPI_ERR_OP;
	if (count == 0 || bcs_dt_size(dt) == 0)
		return MPI_SUCCESS;
	a.ksize = bcs_type_size(a.k);
	if (bcs_dt_contig(dt)) /* predefined types among them */
		return bcs_reduce(a.o, a.k, in, inout, (size_t)count *
				  (bcs_dt_size(dt) / a.ksize)) ?
		       MPI_ERR_BUFFER : MPI_SUCCESS;
	if (!in || !inout)
		return MPI_ERR_BUFFER;
	a.in = in;
	a.inout = inout;
	return bcs_dt_walk(dt, count, apply_run, &a);
}

void bcs_op_fini(void)
{
	free(uops);
	uops = NULL;
	nuops = 0;
}

/* ---- the calls --------------------------------------------------------- */

#pragma weak MPI_Op_create = PMPI_Op_create
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
	unsigned i;

	BCS_NEED_INIT("MPI_Op_create");
	if (!user_fn || !op)
		return bcs_error(NULL, "MPI_Op_create", MPI_ERR_ARG,
				 "user_fn or op is NULL");
	for (i = 1; i < nuops && uops[i].fn; i++)
		;
	if (i >= nuops) {
		unsigned cap = nuops ? nuops * 2 : 16;
		struct uop *u;

		if (cap > H_INDEX(~0u) + 1u || !(u = realloc(uops, cap *
							      sizeof(*u))))
			return bcs_error(NULL, "MPI_Op_create", MPI_ERR_NO_MEM,
					 "out of memory for an operation");
		memset(u + nuops, 0, (cap - nuops) * sizeof(*u));
		i = nuops ? nuops : 1;
		uops = u;
		nuops = cap;
	}
	uops[i].fn = user_fn;
	uops[i].commute = commute != 0;
	*op = H_MAKE(H_DIRECT, O_OP, i);
	return MPI_SUCCESS;
}

#pragma weak MPI_Op_free = PMPI_Op_free
int PMPI_Op_free(MPI_Op *op)
{
	enum bcs_op o;
	struct uop *u;

	BCS_NEED_INIT("MPI_Op_free");
	if (!op)
		return bcs_error(NULL, "MPI_Op_free", MPI_ERR_ARG,
				 "op is NULL");
	if (!bcs_op_kernel(*op, &o))
		return bcs_error(NULL, "MPI_Op_free", MPI_ERR_OP,
				 "%s is predefined: it cannot be freed",
				 bcs_op_name(o));
	if (!(u = uop_get(*op)))
		return bcs_error(NULL, "MPI_Op_free", MPI_ERR_OP,
				 "not an operation (%#x)", (unsigned)*op);
	u->fn = NULL;
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

#pragma weak MPI_Op_commutative = PMPI_Op_commutative
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
	BCS_NEED_INIT("MPI_Op_commutative");
	if (!bcs_op_ok(op))
		return bcs_error(NULL, "MPI_Op_commutative", MPI_ERR_OP,
				 "not an operation (%#x)", (unsigned)op);
	if (!commute)
		return bcs_error(NULL, "MPI_Op_commutative", MPI_ERR_ARG,
				 "commute is NULL");
	*commute = bcs_op_commutative(op);
	return MPI_SUCCESS;
}

/* MPI_REPLACE and MPI_NO_OP are refused: MPI-3.1 §11.3.4 allows them in
 * accumulate calls only (bcs_op_apply takes them, for those). */
#pragma weak MPI_Reduce_local = PMPI_Reduce_local
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
		      MPI_Datatype datatype, MPI_Op op)
{
	enum bcs_op o;
	enum bcs_type k;
	int rc;

	BCS_NEED_INIT("MPI_Reduce_local");
	if (count < 0)
		return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_COUNT,
				 "count %d is negative", count);
	if (!bcs_dt_ok(datatype))
		return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_TYPE,
				 "not a committed datatype (%#x)",
				 (unsigned)datatype);
	if (!bcs_op_ok(op))
		return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_OP,
				 "not an operation (%#x)", (unsigned)op);
	if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE ||
	    (count > 0 && bcs_dt_size(datatype) > 0 && (!inbuf || !inoutbuf)))
		return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_BUFFER,
				 "inbuf or inoutbuf is NULL or MPI_IN_PLACE");
	if (!bcs_op_kernel(op, &o)) {
		if (o == BCS_OP_REPLACE || o == BCS_OP_NO_OP)
			return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_OP,
					 "%s is for accumulate calls only",
					 bcs_op_name(o));
		if (bcs_dt_kernel(bcs_dt_basic(datatype), &k))
			return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_OP,
					 "%s is not defined on datatype %#x",
					 bcs_op_name(o), (unsigned)datatype);
		if (!bcs_op_valid(o, k))
			return bcs_error(NULL, "MPI_Reduce_local", MPI_ERR_OP,
					 "%s is not defined on %s%s",
					 bcs_op_name(o),
					 bcs_dt_basic(datatype) == datatype ?
					 "" : "a datatype made of ",
					 bcs_type_name(k));
	}
	if ((rc = bcs_op_apply(op, inbuf, inoutbuf, count, datatype)))
		return bcs_error(NULL, "MPI_Reduce_local", rc,
				 "the reduction failed");
	return MPI_SUCCESS;
}
