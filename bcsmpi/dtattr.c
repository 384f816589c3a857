/*
 * dtattr.c — attributes cached on datatypes (MPI-3.1 §6.7.4): keyvals
 * of their own, set, got and deleted on a datatype, copied by
 * MPI_Type_dup through the copy callbacks and deleted by MPI_Type_free
 * (datatype.c, dtmake.c).  attr.c keeps the lists; a derived type holds
 * its own, a predefined type's live in a small table here.
 */
#include <stdlib.h>

#include "dt.h"

#define PREDEF_ATTRS_MAX 64

static struct {
	MPI_Datatype h;
	struct bcs_attr *attrs;
} predef[PREDEF_ATTRS_MAX];

struct bcs_attr **bcs_dt_attrs(MPI_Datatype h)
{
	struct bcs_dt *t = dt_derived(h);
	int free_slot = -1;

	if (t)
		return t->freed ? NULL : &t->attrs;
	if (!dt_predefined(h))
		return NULL;
	for (int i = 0; i < PREDEF_ATTRS_MAX; i++) {
		if (predef[i].h == h)
			return &predef[i].attrs;
		if (!predef[i].h && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return NULL;
	predef[free_slot].h = h;
	return &predef[free_slot].attrs;
}

void bcs_dt_attrs_fini(void)
{
	for (int i = 0; i < PREDEF_ATTRS_MAX; i++) {
		bcs_attrs_drop(&predef[i].attrs);
		predef[i].h = 0;
	}
}

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
			    MPI_Type_delete_attr_function *type_delete_attr_fn,
			    int *type_keyval, void *extra_state)
{
	/* the callbacks take the datatype's int handle as a communicator's
	 * take the communicator's: one table serves both */
	return bcs_keyval_create("MPI_Type_create_keyval", BCS_KEYVAL_TYPE,
				 (MPI_Comm_copy_attr_function *)
				 type_copy_attr_fn,
				 (MPI_Comm_delete_attr_function *)
				 type_delete_attr_fn, type_keyval,
				 extra_state);
}

#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
int PMPI_Type_free_keyval(int *type_keyval)
{
	return bcs_keyval_free("MPI_Type_free_keyval", BCS_KEYVAL_TYPE,
			       type_keyval);
}

/* The datatype's list and the keyval checked: 0, or the error. */
static int args(const char *fn, MPI_Datatype dt, int key,
		struct bcs_attr ***list)
{
	BCS_NEED_INIT(fn);
	if (!(*list = bcs_dt_attrs(dt)))
		return bcs_error(NULL, fn, MPI_ERR_TYPE, "not a datatype "
				 "(%#x)", (unsigned)dt);
	if (!bcs_keyval_ok(key, BCS_KEYVAL_TYPE))
		return bcs_error(NULL, fn, MPI_ERR_KEYVAL, "not a datatype "
				 "keyval (%#x)", (unsigned)key);
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval,
		       void *attribute_val)
{
	struct bcs_attr **list;
	int rc;

	if ((rc = args("MPI_Type_set_attr", datatype, type_keyval, &list)))
		return rc;
	if ((rc = bcs_attrs_set(list, datatype, type_keyval, attribute_val)))
		return bcs_error(NULL, "MPI_Type_set_attr", rc, "the old "
				 "value's delete callback failed, or out of "
				 "memory");
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval,
		       void *attribute_val, int *flag)
{
	struct bcs_attr **list;
	int rc;

	if ((rc = args("MPI_Type_get_attr", datatype, type_keyval, &list)))
		return rc;
	if (!attribute_val || !flag)
		return bcs_error(NULL, "MPI_Type_get_attr", MPI_ERR_ARG,
				 "attribute_val or flag is NULL");
	*flag = bcs_attrs_get(*list, type_keyval, (void **)attribute_val);
	return MPI_SUCCESS;
}

#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
	struct bcs_attr **list;
	int rc;

	if ((rc = args("MPI_Type_delete_attr", datatype, type_keyval, &list)))
		return rc;
	if ((rc = bcs_attrs_delete(list, datatype, type_keyval)))
		return bcs_error(NULL, "MPI_Type_delete_attr", rc,
				 rc == MPI_ERR_KEYVAL ? "no attribute of that "
				 "keyval on the datatype" :
				 "the delete callback failed");
	return MPI_SUCCESS;
}
