/*
 * dtplan.h — a datatype's plan (private to libbcsmpi): where its data
 * lies, walked in type-map order by pack, unpack, the reductions and
 * element counts.  Pure: no MPI state.
 *
 * A plan is a nest of loops (count, stride in bytes) around either one
 * run of contiguous bytes of one predefined type (a leaf) or a sequence
 * of plans, each placed by its own offset (the blocks of an indexed or
 * struct type):
 *
 *     for i0 < count0 ... for ik < countk:
 *         at off + i0 * stride0 + ... + ik * stridek:
 *             the run, or each part in order
 *
 * A leaf's loops simplify (a loop of one iteration goes, an innermost
 * loop stepping by the run's length joins the run, two loops stepping
 * evenly become one), so a contiguous type of anything dense is a single
 * run and a vector of doubles one loop over runs, copied by loops the
 * compiler specializes for 4, 8 and 16 bytes.  Adjacent leaf parts of a
 * sequence that continue one another as one type merge into one run.
 *
 * Key invariant: a plan is immutable once built and shared by reference
 * count — a type built from others refers to their plans (a leaf's loops
 * are copied, to simplify them with the new ones) — so freeing the types
 * it was built from changes nothing for it, and an indexed type of n
 * blocks costs n small nodes whatever its blocks are made of.
 */
#ifndef BCSMPI_DTPLAN_H
#define BCSMPI_DTPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

struct dt_loop {
	MPI_Aint count; /* >= 2 once simplified */
	MPI_Aint stride;
};

struct dt_plan {
	unsigned refs;
	MPI_Aint off;
	int depth;
	struct dt_loop *loop;    /* depth loops, outermost first */
	size_t run;              /* a leaf's bytes (> 0); 0: a sequence */
	size_t basic_size;       /* a leaf: bytes of one basic element */
	MPI_Datatype basic;      /* the predefined type of every element,
				  * or MPI_DATATYPE_NULL (several) */
	uint32_t nparts;
	struct dt_plan **part;   /* a sequence's, in order */
	size_t size;             /* bytes of data */
	MPI_Aint lo, hi;         /* the data's bounds (lo < hi) */
};

/* A run of size bytes of predefined type basic (elements of basic_size
 * bytes): a new plan, or NULL (no memory). */
struct dt_plan *dt_plan_leaf(MPI_Datatype basic, size_t basic_size,
			     size_t size);
/* count copies of in, stride bytes apart, the first at disp: a new
 * reference (in is not consumed), or NULL with *err set: MPI_ERR_ARG
 * (sizes or bounds past MPI_Aint) or MPI_ERR_NO_MEM.  count >= 1. */
struct dt_plan *dt_plan_loop(struct dt_plan *in, MPI_Aint count,
			     MPI_Aint stride, MPI_Aint disp, int *err);
/* The parts in order (each a reference the call takes over; n >= 1):
 * the one plan they make, or NULL with *err set (the parts released). */
struct dt_plan *dt_plan_seq(struct dt_plan **part, uint32_t n, int *err);
struct dt_plan *dt_plan_ref(struct dt_plan *p);
void dt_plan_unref(struct dt_plan *p);

/* One element's data between typed memory at m and the stream s:
 * unpack, the stream is read and m written; else m is only read.
 * Returns the stream past it. */
unsigned char *dt_plan_copy(const struct dt_plan *p, unsigned char *m,
			    unsigned char *s, int unpack);
/* n runs of len bytes stride apart at m from the stream s, or to it. */
void dt_scatter(unsigned char *m, const unsigned char *s, MPI_Aint n,
		MPI_Aint stride, size_t len);
void dt_gather(unsigned char *s, const unsigned char *m, MPI_Aint n,
	       MPI_Aint stride, size_t len);
/* fn(ctx, off, len, basic) for each run of one element at base, in
 * type-map order; stops at fn's first nonzero return and returns it. */
typedef int (*dt_run_fn)(void *ctx, MPI_Aint off, size_t len,
			 const struct dt_plan *leaf);
int dt_plan_walk(const struct dt_plan *p, MPI_Aint base, dt_run_fn fn,
		 void *ctx);

#endif /* BCSMPI_DTPLAN_H */
