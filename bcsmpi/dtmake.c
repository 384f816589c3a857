/*
 * dtmake.c — the datatype constructors (MPI-3.1 §4.1.2–4.1.7): vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * subarray, resized, dup, and what a program asks of how a type was made
 * (Type_get_envelope/contents), its name, Get_address and
 * Type_match_size.
 *
 * Every constructor is blocks of copies of older types: block i is
 * count_i elements of old_i, one extent apart, from byte disp_i.  Its
 * plan (dtplan.h) is the sequence of the blocks' loops around the old
 * types' plans, shared; its bounds are MPI's: lb the least of the
 * blocks' lower bounds, ub the greatest upper bound, and for a struct
 * the extent padded up to its strictest basic type's alignment, as C
 * pads a struct (MPICH does the same).  A type keeps the derived types
 * it was made of held (bcs_dt_hold) until it is deleted, so that
 * Type_get_contents can still hand them out after the program freed
 * them; it hands out a duplicate of each, which the program frees.
 *
 * Negative extents (Type_create_resized) are refused with MPI_ERR_ARG:
 * spans and bounds here assume the last element is the top one.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"
#include "types.h"

static int mul(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
	return __builtin_mul_overflow(a, b, r);
}

static int add(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
	return __builtin_add_overflow(a, b, r);
}

/* One block: count elements of old from byte disp. */
struct blk {
	MPI_Aint disp;
	MPI_Aint count;
	const struct bcs_dt *old;
	MPI_Datatype oldh;
};

/* The contents to record (copied) and the handles among them. */
struct contents {
	int combiner;
	int ni, na, nd;
	const int *ints;
	const MPI_Aint *aints;
	const MPI_Datatype *types;
};

/* Record c in t, holding the derived types among c's: 0 or
 * MPI_ERR_NO_MEM. */
static int record(struct bcs_dt *t, const struct contents *c)
{
	t->combiner = c->combiner;
	if ((c->ni && !(t->ints = malloc((size_t)c->ni * sizeof(int)))) ||
	    (c->na &&
	     !(t->aints = malloc((size_t)c->na * sizeof(MPI_Aint)))) ||
	    (c->nd &&
	     !(t->types = malloc((size_t)c->nd * sizeof(MPI_Datatype)))))
		return MPI_ERR_NO_MEM;
	if (c->ni)
		memcpy(t->ints, c->ints, (size_t)c->ni * sizeof(int));
	if (c->na)
		memcpy(t->aints, c->aints, (size_t)c->na * sizeof(MPI_Aint));
	for (int i = 0; i < c->nd; i++) {
		t->types[i] = c->types[i];
		bcs_dt_hold(c->types[i]);
		t->nd = i + 1; /* dt_destroy releases only what was held */
	}
	t->ni = c->ni;
	t->na = c->na;
	return MPI_SUCCESS;
}

/* t (built, not entered) into the table as *newtype with contents c;
 * on failure t is destroyed and the error returned through the
 * handler. */
static int finish(const char *fn, struct bcs_dt *t,
		  const struct contents *c, MPI_Datatype *newtype)
{
	int rc;

	if ((rc = record(t, c)) || (rc = dt_enter(t, newtype))) {
		dt_destroy(t);
		return bcs_error(NULL, fn, rc, "out of memory for a datatype");
	}
	return MPI_SUCCESS;
}

/* The type of n blocks (struct_pad: a struct's alignment padding):
 * 0 and *out, or MPI_ERR_ARG (sizes or bounds past MPI_Aint) or
 * MPI_ERR_NO_MEM. */
static int build(const struct blk *b, int n, int struct_pad,
		 struct bcs_dt **out)
{
	struct bcs_dt *t = calloc(1, sizeof(*t));
	struct dt_plan **parts = NULL;
	uint32_t np = 0;
	int rc = MPI_ERR_NO_MEM, any = 0;
	MPI_Aint lb = 0, ub = 0;

	if (!t || (n && !(parts = calloc((size_t)n, sizeof(*parts)))))
		goto fail;
	t->basic = n ? b[0].old->basic : MPI_DATATYPE_NULL;
	t->align = 1;
	for (int i = 0; i < n; i++) {
		const struct bcs_dt *o = b[i].old;
		MPI_Aint l, u, sz;

		if (b[i].count == 0)
			continue;
		rc = MPI_ERR_ARG;
		if (mul(b[i].count, (MPI_Aint)o->size, &sz) ||
		    __builtin_add_overflow(t->size, (size_t)sz, &t->size) ||
		    add(b[i].disp, o->lb, &l) || mul(b[i].count, o->extent, &u) ||
		    add(u, l, &u))
			goto fail;
		if (!any || l < lb)
			lb = l;
		if (!any || u > ub)
			ub = u;
		if (!any)
			t->basic = o->basic;
		else if (o->size && t->basic != o->basic)
			t->basic = MPI_DATATYPE_NULL;
		any = 1;
		if (o->align > t->align)
			t->align = o->align;
		if (o->plan &&
		    !(parts[np++] = dt_plan_loop(o->plan, b[i].count,
						 o->extent, b[i].disp, &rc)))
			goto fail;
	}
	if (struct_pad && any && (ub - lb) % (MPI_Aint)t->align) {
		rc = MPI_ERR_ARG;
		if (add(ub, (MPI_Aint)t->align - (ub - lb) %
			    (MPI_Aint)t->align, &ub))
			goto fail;
	}
	rc = MPI_ERR_ARG;
	if (__builtin_sub_overflow(ub, lb, &t->extent))
		goto fail;
	t->lb = lb;
	if (np && !(t->plan = dt_plan_seq(parts, np, &rc))) {
		np = 0; /* released by dt_plan_seq */
		goto fail;
	}
	free(parts);
	if (t->plan) {
		t->true_lb = t->plan->lo;
		t->true_ub = t->plan->hi;
	}
	*out = t;
	return MPI_SUCCESS;
fail:
	for (uint32_t i = 0; parts && i < np; i++)
		dt_plan_unref(parts[i]);
	free(parts);
	free(t);
	return rc;
}

/* oldtype as the program passes it to a constructor. */
static const struct bcs_dt *old_type(const char *fn, MPI_Datatype h,
				     struct bcs_dt *v, int *rc)
{
	const struct bcs_dt *t = dt_user(h, v);

	if (!t)
		*rc = bcs_error(NULL, fn, MPI_ERR_TYPE, "oldtype is not a "
				"datatype (%#x)", (unsigned)h);
	return t;
}

static int build_error(const char *fn, int rc)
{
	return bcs_error(NULL, fn, rc, rc == MPI_ERR_ARG ?
			 "sizes or displacements past MPI_Aint" :
			 "out of memory for a datatype");
}

/* ---- vectors ------------------------------------------------------------ */

/* count blocks of blocklen elements of old, stride bytes apart (MPI's
 * hvector: vector and contiguous are made of it).  The type map's bounds
 * whatever the stride's sign (MPI-3.1 §4.1.6); an empty map has lb = ub
 * = 0 (count 0); a blocklength of 0 keeps MPI's formula. */
static int hvector(MPI_Aint count, MPI_Aint blocklen, MPI_Aint stride,
		   const struct bcs_dt *old, struct bcs_dt **out)
{
	MPI_Aint n, size, reach, minshift, maxshift, ub, e = old->extent;
	struct dt_plan *in = NULL;
	struct bcs_dt *t;
	int rc;

	if (mul(count, blocklen, &n) || mul(n, (MPI_Aint)old->size, &size))
		return MPI_ERR_ARG;
	if (!(t = calloc(1, sizeof(*t))))
		return MPI_ERR_NO_MEM;
	t->basic = old->basic;
	t->align = old->align;
	t->size = (size_t)size;
	if (count > 0) {
		if (mul(count - 1, stride, &reach) ||
		    mul(blocklen - 1, e, &maxshift) ||
		    add(maxshift, reach > 0 ? reach : 0, &maxshift) ||
		    add(old->lb, old->extent, &ub) || add(ub, maxshift, &ub))
			goto too_large;
		minshift = reach < 0 ? reach : 0;
		if (add(old->lb, minshift, &t->lb) ||
		    __builtin_sub_overflow(ub, t->lb, &t->extent))
			goto too_large;
	}
	if (size > 0) {
		if (!(in = dt_plan_loop(old->plan, blocklen, e, 0, &rc)) ||
		    !(t->plan = dt_plan_loop(in, count, stride, 0, &rc))) {
			dt_plan_unref(in);
			free(t);
			return rc;
		}
		dt_plan_unref(in);
		t->true_lb = t->plan->lo;
		t->true_ub = t->plan->hi;
	}
	*out = t;
	return MPI_SUCCESS;
too_large:
	free(t);
	return MPI_ERR_ARG;
}

static int make_hvector(const char *fn, int count, int blocklength,
			MPI_Aint stride, int stride_in_elements,
			MPI_Datatype oldtype, MPI_Datatype *newtype,
			const struct contents *c)
{
	struct bcs_dt v, *t = NULL;
	const struct bcs_dt *old;
	MPI_Aint bytes = stride;
	int rc;

	BCS_NEED_INIT(fn);
	if (count < 0 || blocklength < 0)
		return bcs_error(NULL, fn, MPI_ERR_COUNT, "count %d, "
				 "blocklength %d: not negative", count,
				 blocklength);
	if (!(old = old_type(fn, oldtype, &v, &rc)))
		return rc;
	if (!newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newtype is NULL");
	if (stride_in_elements && mul(stride, old->extent, &bytes))
		rc = MPI_ERR_ARG;
	else
		rc = hvector(count, blocklength, bytes, old, &t);
	if (rc)
		return build_error(fn, rc);
	return finish(fn, t, c, newtype);
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
			 MPI_Datatype *newtype)
{
	struct contents c = { MPI_COMBINER_CONTIGUOUS, 1, 0, 1, &count, NULL,
			      &oldtype };

	/* MPI-3.1 §4.1.2: count blocks of one element at the extent */
	return make_hvector("MPI_Type_contiguous", count, 1, 1, 1, oldtype,
			    newtype, &c);
}

#pragma weak MPI_Type_vector = PMPI_Type_vector
int PMPI_Type_vector(int count, int blocklength, int stride,
		     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int ints[3] = { count, blocklength, stride };
	struct contents c = { MPI_COMBINER_VECTOR, 3, 0, 1, ints, NULL,
			      &oldtype };

	return make_hvector("MPI_Type_vector", count, blocklength, stride, 1,
			    oldtype, newtype, &c);
}

#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
			     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int ints[2] = { count, blocklength };
	struct contents c = { MPI_COMBINER_HVECTOR, 2, 1, 1, ints, &stride,
			      &oldtype };

	return make_hvector("MPI_Type_create_hvector", count, blocklength,
			    stride, 0, oldtype, newtype, &c);
}

/* ---- indexed and struct --------------------------------------------------- */

/* The blocks of an indexed family call: blocklens (or one blocklen for
 * all when blocklens is NULL), displacements in elements of old (idisp)
 * or bytes (adisp); or, for a struct, one type per block.  Each checked,
 * the error naming the block. */
static int make_blocks(const char *fn, int count, const int *blocklens,
		       int blocklen, const int *idisp, const MPI_Aint *adisp,
		       const MPI_Datatype *types, MPI_Datatype oldtype,
		       MPI_Datatype *newtype, const struct contents *c)
{
	struct bcs_dt *views = NULL, *t = NULL;
	struct blk *b = NULL;
	int rc = MPI_SUCCESS;

	BCS_NEED_INIT(fn);
	if (count < 0)
		return bcs_error(NULL, fn, MPI_ERR_COUNT, "count %d is "
				 "negative", count);
	if (!newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newtype is NULL");
	if (count && (!(b = calloc((size_t)count, sizeof(*b))) ||
		      !(views = calloc((size_t)count, sizeof(*views)))))
		goto nomem;
	for (int i = 0; i < count; i++) {
		MPI_Datatype h = types ? types[i] : oldtype;
		int bl = blocklens ? blocklens[i] : blocklen;

		if (bl < 0) {
			rc = bcs_error(NULL, fn, MPI_ERR_COUNT, "block %d: "
				       "blocklength %d is negative", i, bl);
			goto out;
		}
		if (!(b[i].old = dt_user(h, &views[i]))) {
			rc = bcs_error(NULL, fn, MPI_ERR_TYPE, "block %d: not "
				       "a datatype (%#x)", i, (unsigned)h);
			goto out;
		}
		b[i].oldh = h;
		b[i].count = bl;
		if (adisp)
			b[i].disp = adisp[i];
		else if (mul(idisp[i], b[i].old->extent, &b[i].disp)) {
			rc = build_error(fn, MPI_ERR_ARG);
			goto out;
		}
	}
	if ((rc = build(b, count, c->combiner == MPI_COMBINER_STRUCT, &t))) {
		rc = build_error(fn, rc);
		goto out;
	}
	rc = finish(fn, t, c, newtype);
	goto out;
nomem:
	rc = bcs_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
out:
	free(b);
	free(views);
	return rc;
}

/* The ints of an indexed family call: count, then the arrays. */
static int *ints_of(int count, const int *a, int na, const int *d, int nd,
		    int *n)
{
	int *v = malloc((size_t)(1 + na + nd) * sizeof(int));

	if (!v)
		return NULL;
	v[0] = count;
	if (na)
		memcpy(v + 1, a, (size_t)na * sizeof(int));
	if (nd)
		memcpy(v + 1 + na, d, (size_t)nd * sizeof(int));
	*n = 1 + na + nd;
	return v;
}

/* The indexed family differ in what their arrays hold. */
static int indexed(const char *fn, int combiner, int count,
		   const int *blocklens, int blocklen, const int *idisp,
		   const MPI_Aint *adisp, const MPI_Datatype *types,
		   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct contents c = { .combiner = combiner };
	int n = count > 0 ? count : 0, rc, *ints;
	int one[2] = { count, blocklen };

	BCS_NEED_INIT(fn);
	if (count > 0 && ((blocklens == NULL && combiner !=
			   MPI_COMBINER_INDEXED_BLOCK && combiner !=
			   MPI_COMBINER_HINDEXED_BLOCK) ||
			  (!idisp && !adisp)))
		return bcs_error(NULL, fn, MPI_ERR_ARG,
				 "an array argument is NULL");
	/* MPI-3.1 §4.1.13's table of what Type_get_contents returns */
	switch (combiner) {
	case MPI_COMBINER_INDEXED:
		ints = ints_of(count, blocklens, n, idisp, n, &c.ni);
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		ints = ints_of(count, &blocklen, 1, idisp, n, &c.ni);
		break;
	case MPI_COMBINER_HINDEXED_BLOCK:
		ints = ints_of(count, one + 1, 1, NULL, 0, &c.ni);
		break;
	default: /* HINDEXED, STRUCT */
		ints = ints_of(count, blocklens, n, NULL, 0, &c.ni);
	}
	if (!ints)
		return bcs_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
	c.ints = ints;
	c.na = adisp ? n : 0;
	c.aints = adisp;
	c.nd = types ? n : 1;
	c.types = types ? types : &oldtype;
	rc = make_blocks(fn, count, blocklens, blocklen, idisp, adisp, types,
			 oldtype, newtype, &c);
	free(ints);
	return rc;
}

#pragma weak MPI_Type_indexed = PMPI_Type_indexed
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
		      const int array_of_displacements[],
		      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count,
		       array_of_blocklengths, 0, array_of_displacements, NULL,
		       NULL, oldtype, newtype);
}

#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
			      const MPI_Aint array_of_displacements[],
			      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED,
		       count, array_of_blocklengths, 0, NULL,
		       array_of_displacements, NULL, oldtype, newtype);
}

#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
int PMPI_Type_create_indexed_block(int count, int blocklength,
				   const int array_of_displacements[],
				   MPI_Datatype oldtype,
				   MPI_Datatype *newtype)
{
	return indexed("MPI_Type_create_indexed_block",
		       MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
		       array_of_displacements, NULL, NULL, oldtype, newtype);
}

#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
int PMPI_Type_create_hindexed_block(int count, int blocklength,
				    const MPI_Aint array_of_displacements[],
				    MPI_Datatype oldtype,
				    MPI_Datatype *newtype)
{
	return indexed("MPI_Type_create_hindexed_block",
		       MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength,
		       NULL, array_of_displacements, NULL, oldtype, newtype);
}

#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
			    const MPI_Aint array_of_displacements[],
			    const MPI_Datatype array_of_types[],
			    MPI_Datatype *newtype)
{
	if (count > 0 && !array_of_types) {
		BCS_NEED_INIT("MPI_Type_create_struct");
		return bcs_error(NULL, "MPI_Type_create_struct", MPI_ERR_ARG,
				 "array_of_types is NULL");
	}
	return indexed("MPI_Type_create_struct", MPI_COMBINER_STRUCT, count,
		       array_of_blocklengths, 0, NULL, array_of_displacements,
		       array_of_types, MPI_DATATYPE_NULL, newtype);
}

/* ---- subarray, resized, dup ------------------------------------------------ */

/* MPI-3.1 §4.1.3: the subarray as nested hvectors from the fastest
 * dimension out, placed at its start, resized to [0, the whole array). */
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
			      const int array_of_subsizes[],
			      const int array_of_starts[], int order,
			      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_subarray";
	struct bcs_dt v, *t;
	const struct bcs_dt *old;
	struct dt_plan *p;
	MPI_Aint stride, disp = 0, n = 1, size, sz;
	struct contents c = { MPI_COMBINER_SUBARRAY, 0, 0, 1, NULL, NULL,
			      &oldtype };
	int *ints, rc;

	BCS_NEED_INIT(fn);
	if (ndims <= 0 || !array_of_sizes || !array_of_subsizes ||
	    !array_of_starts || !newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "ndims %d, or an array"
				 " or newtype NULL", ndims);
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "order %d (MPI_ORDER_C"
				 " or MPI_ORDER_FORTRAN)", order);
	for (int d = 0; d < ndims; d++)
		if (array_of_sizes[d] <= 0 || array_of_subsizes[d] < 0 ||
		    array_of_subsizes[d] > array_of_sizes[d] ||
		    array_of_starts[d] < 0 ||
		    array_of_starts[d] > array_of_sizes[d] -
					 array_of_subsizes[d])
			return bcs_error(NULL, fn, MPI_ERR_ARG, "dimension %d: "
					 "size %d, subsize %d, start %d", d,
					 array_of_sizes[d],
					 array_of_subsizes[d],
					 array_of_starts[d]);
	if (!(old = old_type(fn, oldtype, &v, &rc)))
		return rc;
	if (!(t = calloc(1, sizeof(*t))))
		return build_error(fn, MPI_ERR_NO_MEM);
	t->basic = old->basic;
	t->align = old->align;
	stride = old->extent;
	p = dt_plan_ref(old->plan);
	size = (MPI_Aint)old->size;
	rc = MPI_ERR_ARG;
	for (int k = 0; k < ndims; k++) {
		int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
		struct dt_plan *q = NULL;

		if (mul(size, array_of_subsizes[d], &size) ||
		    mul(array_of_starts[d], stride, &sz) ||
		    add(disp, sz, &disp) || mul(n, array_of_sizes[d], &n))
			goto fail;
		if (p && array_of_subsizes[d] == 0) {
			dt_plan_unref(p);
			p = NULL;
		} else if (p && !(q = dt_plan_loop(p, array_of_subsizes[d],
						    stride, 0, &rc))) {
			goto fail;
		}
		if (p) {
			dt_plan_unref(p);
			p = q;
		}
		if (mul(stride, array_of_sizes[d], &stride))
			goto fail;
	}
	if (p) {
		struct dt_plan *q = dt_plan_loop(p, 1, 0, disp, &rc);

		dt_plan_unref(p);
		if (!(p = q))
			goto fail;
		t->true_lb = p->lo;
		t->true_ub = p->hi;
	}
	t->plan = p;
	t->size = (size_t)size;
	t->lb = 0;
	t->extent = stride; /* the whole array's */
	ints = malloc((size_t)(3 * ndims + 2) * sizeof(int));
	if (!ints) {
		dt_destroy(t);
		return build_error(fn, MPI_ERR_NO_MEM);
	}
	ints[0] = ndims;
	memcpy(ints + 1, array_of_sizes, (size_t)ndims * sizeof(int));
	memcpy(ints + 1 + ndims, array_of_subsizes,
	       (size_t)ndims * sizeof(int));
	memcpy(ints + 1 + 2 * ndims, array_of_starts,
	       (size_t)ndims * sizeof(int));
	ints[1 + 3 * ndims] = order;
	c.ni = 3 * ndims + 2;
	c.ints = ints;
	rc = finish(fn, t, &c, newtype);
	free(ints);
	return rc;
fail:
	dt_plan_unref(p);
	free(t);
	return build_error(fn, rc);
}

/* A copy of old's description (plan shared), uncommitted. */
static struct bcs_dt *copy_of(const struct bcs_dt *old)
{
	struct bcs_dt *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->basic = old->basic;
	t->size = old->size;
	t->align = old->align;
	t->lb = old->lb;
	t->extent = old->extent;
	t->true_lb = old->true_lb;
	t->true_ub = old->true_ub;
	t->dense = old->dense;
	if (old->plan == &old->own) { /* a predefined type's view */
		t->plan = dt_plan_leaf(old->basic, old->own.basic_size,
				       old->size);
		if (!t->plan) {
			free(t);
			return NULL;
		}
	} else {
		t->plan = dt_plan_ref(old->plan);
	}
	return t;
}

#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb,
			     MPI_Aint extent, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_resized";
	MPI_Aint ae[2] = { lb, extent }, ub;
	struct contents c = { MPI_COMBINER_RESIZED, 0, 2, 1, NULL, ae,
			      &oldtype };
	struct bcs_dt v, *t;
	const struct bcs_dt *old;
	int rc;

	BCS_NEED_INIT(fn);
	if (!(old = old_type(fn, oldtype, &v, &rc)))
		return rc;
	if (!newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newtype is NULL");
	if (extent < 0 || add(lb, extent, &ub))
		return bcs_error(NULL, fn, MPI_ERR_ARG, "extent %ld: BCS-MPI "
				 "takes extents of 0 and up", (long)extent);
	if (!(t = copy_of(old)))
		return build_error(fn, MPI_ERR_NO_MEM);
	t->lb = lb;
	t->extent = extent;
	t->dense = 0; /* known at its commit */
	return finish(fn, t, &c, newtype);
}

#pragma weak MPI_Type_dup = PMPI_Type_dup
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_dup";
	struct contents c = { MPI_COMBINER_DUP, 0, 0, 1, NULL, NULL,
			      &oldtype };
	struct bcs_dt v, *t;
	const struct bcs_dt *old;
	int rc;

	BCS_NEED_INIT(fn);
	if (!(old = old_type(fn, oldtype, &v, &rc)))
		return rc;
	if (!newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newtype is NULL");
	if (!(t = copy_of(old)))
		return build_error(fn, MPI_ERR_NO_MEM);
	t->committed = old->committed; /* MPI-3.1 §4.1.10 */
	if ((rc = finish(fn, t, &c, newtype)))
		return rc;
	/* the attributes, through their copy callbacks */
	{
		struct bcs_attr **from = bcs_dt_attrs(oldtype);

		if (from && (rc = bcs_attrs_copy(*from, oldtype, &t->attrs,
						 *newtype))) {
			PMPI_Type_free(newtype);
			return bcs_error(NULL, fn, rc, "an attribute's copy "
					 "callback failed (%d)", rc);
		}
	}
	return MPI_SUCCESS;
}

/* ---- how a type was made ------------------------------------------------------ */

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
			   int *num_addresses, int *num_datatypes,
			   int *combiner)
{
	struct bcs_dt v;
	const struct bcs_dt *t;

	BCS_NEED_INIT("MPI_Type_get_envelope");
	if (!(t = dt_user(datatype, &v)))
		return bcs_error(NULL, "MPI_Type_get_envelope", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)datatype);
	if (!num_integers || !num_addresses || !num_datatypes || !combiner)
		return bcs_error(NULL, "MPI_Type_get_envelope", MPI_ERR_ARG,
				 "an output argument is NULL");
	*num_integers = t->ni;
	*num_addresses = t->na;
	*num_datatypes = t->nd;
	*combiner = t->combiner;
	return MPI_SUCCESS;
}

/* The types are handed out as the program gave them when predefined,
 * as duplicates (committed as they were) when derived: the program
 * frees those (MPI-3.1 §4.1.13). */
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
			   int max_addresses, int max_datatypes,
			   int array_of_integers[],
			   MPI_Aint array_of_addresses[],
			   MPI_Datatype array_of_datatypes[])
{
	static const char fn[] = "MPI_Type_get_contents";
	struct bcs_dt v;
	const struct bcs_dt *t;

	BCS_NEED_INIT(fn);
	if (!(t = dt_user(datatype, &v)))
		return bcs_error(NULL, fn, MPI_ERR_TYPE, "not a datatype "
				 "(%#x)", (unsigned)datatype);
	if (t->combiner == MPI_COMBINER_NAMED)
		return bcs_error(NULL, fn, MPI_ERR_TYPE, "%s is predefined: "
				 "it has no contents",
				 dt_predef_name(datatype));
	if (max_integers < t->ni || max_addresses < t->na ||
	    max_datatypes < t->nd)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "room for %d, %d, %d;"
				 " it has %d integers, %d addresses, %d "
				 "datatypes (MPI_Type_get_envelope)",
				 max_integers, max_addresses, max_datatypes,
				 t->ni, t->na, t->nd);
	if ((t->ni && !array_of_integers) || (t->na && !array_of_addresses) ||
	    (t->nd && !array_of_datatypes))
		return bcs_error(NULL, fn, MPI_ERR_ARG, "an array is NULL");
	if (t->ni)
		memcpy(array_of_integers, t->ints, (size_t)t->ni * sizeof(int));
	if (t->na)
		memcpy(array_of_addresses, t->aints,
		       (size_t)t->na * sizeof(MPI_Aint));
	for (int i = 0; i < t->nd; i++) {
		struct bcs_dt ov;
		const struct bcs_dt *o = dt_any(t->types[i], &ov);
		struct bcs_dt *d;
		struct contents c = { MPI_COMBINER_DUP, 0, 0, 1, NULL, NULL,
				      &t->types[i] };
		int rc;

		if (dt_predefined(t->types[i])) {
			array_of_datatypes[i] = t->types[i];
			continue;
		}
		if (!o || !(d = copy_of(o)))
			return build_error(fn, MPI_ERR_NO_MEM);
		d->committed = o->committed;
		if ((rc = finish(fn, d, &c, &array_of_datatypes[i]))) {
			while (i-- > 0)
				if (!dt_predefined(array_of_datatypes[i]))
					PMPI_Type_free(&array_of_datatypes[i]);
			return rc;
		}
	}
	return MPI_SUCCESS;
}

/* ---- names, addresses, sizes ------------------------------------------------- */

/* Predefined types' names as set by the program (by handle; few). */
struct pname {
	struct pname *next;
	MPI_Datatype h;
	char name[MPI_MAX_OBJECT_NAME];
};
static struct pname *pnames;

#pragma weak MPI_Type_set_name = PMPI_Type_set_name
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
	struct bcs_dt *t = dt_derived(datatype);
	char *dst;

	BCS_NEED_INIT("MPI_Type_set_name");
	if (!dt_predefined(datatype) && (!t || t->freed))
		return bcs_error(NULL, "MPI_Type_set_name", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)datatype);
	if (!type_name)
		return bcs_error(NULL, "MPI_Type_set_name", MPI_ERR_ARG,
				 "type_name is NULL");
	if (t) {
		dst = t->name;
	} else {
		struct pname *p;

		for (p = pnames; p && p->h != datatype; p = p->next)
			;
		if (!p) {
			if (!(p = calloc(1, sizeof(*p))))
				return bcs_error(NULL, "MPI_Type_set_name",
						 MPI_ERR_NO_MEM,
						 "out of memory");
			p->h = datatype;
			p->next = pnames;
			pnames = p;
		}
		dst = p->name;
	}
	/* longer names are cut, as the standard allows */
	snprintf(dst, MPI_MAX_OBJECT_NAME, "%s", type_name);
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_name = PMPI_Type_get_name
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name,
		       int *resultlen)
{
	struct bcs_dt v;
	const struct bcs_dt *t;
	const char *name;

	BCS_NEED_INIT("MPI_Type_get_name");
	if (!(t = dt_user(datatype, &v)))
		return bcs_error(NULL, "MPI_Type_get_name", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)datatype);
	if (!type_name || !resultlen)
		return bcs_error(NULL, "MPI_Type_get_name", MPI_ERR_ARG,
				 "type_name or resultlen is NULL");
	name = dt_predefined(datatype) ? dt_predef_name(datatype) : t->name;
	for (struct pname *p = pnames; p; p = p->next)
		if (p->h == datatype)
			name = p->name;
	*resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", name);
	if (*resultlen >= MPI_MAX_OBJECT_NAME)
		*resultlen = MPI_MAX_OBJECT_NAME - 1;
	return MPI_SUCCESS;
}

void bcs_dt_names_fini(void)
{
	while (pnames) {
		struct pname *p = pnames;

		pnames = p->next;
		free(p);
	}
}

/* A flat address space: the address is the pointer (MPI_BOTTOM is 0). */
#pragma weak MPI_Get_address = PMPI_Get_address
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
	if (!address)
		return bcs_error(NULL, "MPI_Get_address", MPI_ERR_ARG,
				 "address is NULL");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}

/* The Fortran-sized types, as MPICH answers (MPI-3.1 §17.1.9). */
#pragma weak MPI_Type_match_size = PMPI_Type_match_size
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
	static const struct {
		int cls, size;
		MPI_Datatype h;
	} match[] = {
		{ MPI_TYPECLASS_REAL, 4, MPI_REAL4 },
		{ MPI_TYPECLASS_REAL, 8, MPI_REAL8 },
		{ MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1 },
		{ MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2 },
		{ MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4 },
		{ MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8 },
		{ MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8 },
		{ MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16 },
	};

	BCS_NEED_INIT("MPI_Type_match_size");
	if (!datatype)
		return bcs_error(NULL, "MPI_Type_match_size", MPI_ERR_ARG,
				 "datatype is NULL");
	for (size_t i = 0; i < sizeof(match) / sizeof(match[0]); i++)
		if (match[i].cls == typeclass && match[i].size == size) {
			*datatype = match[i].h;
			return MPI_SUCCESS;
		}
	return bcs_error(NULL, "MPI_Type_match_size", MPI_ERR_ARG,
			 "no predefined type of class %d and %d bytes",
			 typeclass, size);
}

/* The Fortran 90 parameterized types (MPI-3.1 §17.1.9): the predefined
 * type of the kind gfortran's SELECTED_REAL_KIND / SELECTED_INT_KIND
 * would choose (MPI_UNDEFINED: that bound left open). */
static int f90_pick(const char *fn, int p, int r, int cplx,
		    MPI_Datatype *newtype)
{
	BCS_NEED_INIT(fn);
	if (!newtype)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newtype is NULL");
	if ((p == MPI_UNDEFINED || p <= 6) && (r == MPI_UNDEFINED || r <= 37))
		*newtype = cplx ? MPI_COMPLEX8 : MPI_REAL4;
	else if ((p == MPI_UNDEFINED || p <= 15) &&
		 (r == MPI_UNDEFINED || r <= 307))
		*newtype = cplx ? MPI_COMPLEX16 : MPI_REAL8;
	else
		return bcs_error(NULL, fn, MPI_ERR_ARG, "no real kind of "
				 "precision %d and range %d here", p, r);
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
	return f90_pick("MPI_Type_create_f90_real", p, r, 0, newtype);
}

#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
	return f90_pick("MPI_Type_create_f90_complex", p, r, 1, newtype);
}

#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
	static const struct {
		int r;
		MPI_Datatype h;
	} ints[] = { { 2, MPI_INTEGER1 }, { 4, MPI_INTEGER2 },
		     { 9, MPI_INTEGER4 }, { 18, MPI_INTEGER8 } };

	BCS_NEED_INIT("MPI_Type_create_f90_integer");
	if (!newtype)
		return bcs_error(NULL, "MPI_Type_create_f90_integer",
				 MPI_ERR_ARG, "newtype is NULL");
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (r <= ints[i].r) {
			*newtype = ints[i].h;
			return MPI_SUCCESS;
		}
	return bcs_error(NULL, "MPI_Type_create_f90_integer", MPI_ERR_ARG,
			 "no integer kind of range %d here", r);
}
