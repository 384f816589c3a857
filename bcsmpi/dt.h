/*
 * dt.h — what datatype.c (the table, predefined types, queries) and
 * dtmake.c (the constructors) share; private to those two.
 */
#ifndef BCSMPI_DT_H
#define BCSMPI_DT_H

#include "dtplan.h"
#include "impl.h"

struct bcs_dt {
	int committed;
	int dense;             /* one run from its address, extent = size
				* (set at commit): used in place */
	int overlaps;          /* two entries of one element share bytes
				* (set at commit): no receive into it */
	int freed;             /* by the program: only holds keep it */
	unsigned holds;        /* bcs_dt_hold's, not yet released */
	MPI_Datatype basic;    /* the predefined type of every element, or
				* MPI_DATATYPE_NULL (several) */
	size_t size;           /* bytes of data */
	size_t align;          /* of its strictest basic type (a struct's
				* extent is padded to it, as C pads) */
	MPI_Aint lb, extent;
	MPI_Aint true_lb, true_ub; /* the data's bounds; 0, 0 if none */
	struct dt_plan *plan;  /* NULL: no data */
	struct dt_plan own;    /* a predefined type's view: its leaf */
	/* how it was made, for Type_get_envelope/contents; the types
	 * derived among them held until this one is deleted */
	int combiner;
	int ni, na, nd;
	int *ints;
	MPI_Aint *aints;
	MPI_Datatype *types;
	char name[MPI_MAX_OBJECT_NAME];
	struct bcs_attr *attrs; /* cached (dtattr.c) */
};

/* Whether h is a predefined type; its name (NULL if not one). */
int dt_predefined(MPI_Datatype h);
const char *dt_predef_name(MPI_Datatype h);
/* The type of handle h, a freed one an operation holds included (v
 * holds a predefined one's view); NULL if none. */
const struct bcs_dt *dt_any(MPI_Datatype h, struct bcs_dt *v);
/* The same for a handle the program passes: not freed. */
const struct bcs_dt *dt_user(MPI_Datatype h, struct bcs_dt *v);
/* A derived type's own entry (NULL for a predefined one or none). */
struct bcs_dt *dt_derived(MPI_Datatype h);
/* Enter t into the table: 0 and *h, or MPI_ERR_NO_MEM (t untouched). */
int dt_enter(struct bcs_dt *t, MPI_Datatype *h);
/* Forget the names set on predefined types (dtmake.c). */
void bcs_dt_names_fini(void);
/* The attribute list of datatype h (a predefined one's too), or NULL
 * (no datatype, or no room for another predefined one's). */
struct bcs_attr **bcs_dt_attrs(MPI_Datatype h);
void bcs_dt_attrs_fini(void);
/* Free what t holds and t itself (not in the table, or leaving it). */
void dt_destroy(struct bcs_dt *t);

#endif /* BCSMPI_DT_H */
