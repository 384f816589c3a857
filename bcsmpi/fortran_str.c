/*
 * fortran_str.c — the Fortran bindings fortran.py does not generate:
 * MPI_Init (no argc/argv in Fortran), MPI_Wtime, MPI_Wtick and
 * MPI_Aint_add/diff (functions), those that take or give strings (a hidden length after
 * the arguments, blank padding instead of a NUL), the attribute calls
 * (values are INTEGERs of MPI_ADDRESS_KIND in Fortran, not pointers, and
 * a predefined attribute's value is the value itself), MPI_Op_create
 * (a Fortran user function takes its arguments by reference, as C's),
 * and the COMMON blocks of mpif.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortran.h"

struct bcs_mpipriv1 mpipriv1_;
struct bcs_mpipriv2 mpipriv2_;

/* A Fortran string (len bytes, blank padded) as a C one in buf. */
static const char *c_string(const char *s, size_t len, char *buf,
			    size_t cap)
{
	while (len && s[len - 1] == ' ')
		len--;
	if (len >= cap)
		len = cap - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

/* A C string into a Fortran one of len bytes, blank padded. */
static void f_string(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n > len)
		n = len;
	memcpy(dst, src, n);
	memset(dst + n, ' ', len - n);
}

BCSMPI_F void mpi_init_(MPI_Fint *ierror)
{
	*ierror = MPI_Init(NULL, NULL);
}

BCSMPI_F void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided,
		      MPI_Fint *ierror)
{
	*ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}

BCSMPI_F double mpi_wtime_(void)
{
	return MPI_Wtime();
}

BCSMPI_F double mpi_wtick_(void)
{
	return MPI_Wtick();
}

BCSMPI_F MPI_Aint mpi_aint_add_(MPI_Aint *base, MPI_Aint *disp)
{
	return MPI_Aint_add(*base, *disp);
}

BCSMPI_F MPI_Aint mpi_aint_diff_(MPI_Aint *addr1, MPI_Aint *addr2)
{
	return MPI_Aint_diff(*addr1, *addr2);
}

/* A call that gives a string: its C answer (of at most MPI_MAX_* bytes)
 * blank padded into the Fortran string, *resultlen its length there. */
static void give(int rc, const char *buf, int n, char *dst, size_t len,
		 MPI_Fint *resultlen, MPI_Fint *ierror)
{
	*ierror = rc;
	if (rc)
		return;
	f_string(dst, len, buf);
	*resultlen = n < (int)len ? n : (int)len;
}

BCSMPI_F void mpi_get_processor_name_(char *name, MPI_Fint *resultlen,
				      MPI_Fint *ierror, size_t name_len)
{
	char buf[MPI_MAX_PROCESSOR_NAME];
	int n = 0, rc = MPI_Get_processor_name(buf, &n);

	give(rc, buf, n, name, name_len, resultlen, ierror);
}

BCSMPI_F void mpi_get_library_version_(char *version, MPI_Fint *resultlen,
				       MPI_Fint *ierror, size_t version_len)
{
	char buf[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0, rc = MPI_Get_library_version(buf, &n);

	give(rc, buf, n, version, version_len, resultlen, ierror);
}

BCSMPI_F void mpi_error_string_(MPI_Fint *errorcode, char *string,
				MPI_Fint *resultlen, MPI_Fint *ierror,
				size_t string_len)
{
	char buf[MPI_MAX_ERROR_STRING];
	int n = 0, rc = MPI_Error_string(*errorcode, buf, &n);

	give(rc, buf, n, string, string_len, resultlen, ierror);
}

BCSMPI_F void mpi_comm_get_name_(MPI_Fint *comm, char *name,
				 MPI_Fint *resultlen, MPI_Fint *ierror,
				 size_t name_len)
{
	char buf[MPI_MAX_OBJECT_NAME];
	int n = 0, rc = MPI_Comm_get_name((MPI_Comm)*comm, buf, &n);

	give(rc, buf, n, name, name_len, resultlen, ierror);
}

BCSMPI_F void mpi_type_get_name_(MPI_Fint *datatype, char *name,
				 MPI_Fint *resultlen, MPI_Fint *ierror,
				 size_t name_len)
{
	char buf[MPI_MAX_OBJECT_NAME];
	int n = 0, rc = MPI_Type_get_name((MPI_Datatype)*datatype, buf, &n);

	give(rc, buf, n, name, name_len, resultlen, ierror);
}

BCSMPI_F void mpi_comm_set_name_(MPI_Fint *comm, const char *name,
				 MPI_Fint *ierror, size_t name_len)
{
	char buf[MPI_MAX_OBJECT_NAME];

	*ierror = MPI_Comm_set_name((MPI_Comm)*comm,
				    c_string(name, name_len, buf,
					     sizeof(buf)));
}

BCSMPI_F void mpi_type_set_name_(MPI_Fint *datatype, const char *name,
				 MPI_Fint *ierror, size_t name_len)
{
	char buf[MPI_MAX_OBJECT_NAME];

	*ierror = MPI_Type_set_name((MPI_Datatype)*datatype,
				    c_string(name, name_len, buf,
					     sizeof(buf)));
}

/* ---- info objects: keys and values are strings ----------------------------- */

BCSMPI_F void mpi_info_set_(MPI_Fint *info, const char *key, const char *value,
			    MPI_Fint *ierror, size_t key_len,
			    size_t value_len)
{
	char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];

	*ierror = MPI_Info_set((MPI_Info)*info,
			       c_string(key, key_len, k, sizeof(k)),
			       c_string(value, value_len, v, sizeof(v)));
}

BCSMPI_F void mpi_info_get_(MPI_Fint *info, const char *key,
			    MPI_Fint *valuelen, char *value, MPI_Fint *flag,
			    MPI_Fint *ierror, size_t key_len,
			    size_t value_len)
{
	char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
	int f = 0, n = *valuelen < MPI_MAX_INFO_VAL ? *valuelen :
						   MPI_MAX_INFO_VAL;

	*ierror = MPI_Info_get((MPI_Info)*info,
			       c_string(key, key_len, k, sizeof(k)), n, v,
			       &f);
	*flag = f;
	if (!*ierror && f)
		f_string(value, value_len, v);
}

BCSMPI_F void mpi_info_get_valuelen_(MPI_Fint *info, const char *key,
				     MPI_Fint *valuelen, MPI_Fint *flag,
				     MPI_Fint *ierror, size_t key_len)
{
	char k[MPI_MAX_INFO_KEY + 1];
	int f = 0;

	*ierror = MPI_Info_get_valuelen((MPI_Info)*info,
					c_string(key, key_len, k, sizeof(k)),
					valuelen, &f);
	*flag = f;
}

BCSMPI_F void mpi_info_delete_(MPI_Fint *info, const char *key,
			       MPI_Fint *ierror, size_t key_len)
{
	char k[MPI_MAX_INFO_KEY + 1];

	*ierror = MPI_Info_delete((MPI_Info)*info,
				  c_string(key, key_len, k, sizeof(k)));
}

BCSMPI_F void mpi_info_get_nthkey_(MPI_Fint *info, MPI_Fint *n, char *key,
				   MPI_Fint *ierror, size_t key_len)
{
	char k[MPI_MAX_INFO_KEY + 1];

	*ierror = MPI_Info_get_nthkey((MPI_Info)*info, *n, k);
	if (!*ierror)
		f_string(key, key_len, k);
}

BCSMPI_F void mpi_add_error_string_(MPI_Fint *errorcode, const char *string,
				    MPI_Fint *ierror, size_t string_len)
{
	char buf[MPI_MAX_ERROR_STRING];

	*ierror = MPI_Add_error_string(*errorcode,
				       c_string(string, string_len, buf,
						sizeof(buf)));
}

/* The predefined attributes' keyvals (their values are ints in C). */
static int predefined(int key)
{
	return key == MPI_TAG_UB || key == MPI_HOST || key == MPI_IO ||
	       key == MPI_WTIME_IS_GLOBAL || key == MPI_UNIVERSE_SIZE ||
	       key == MPI_APPNUM || key == MPI_LASTUSEDCODE;
}

/* Fortran numbers a predefined attribute's keyval C's + 1 (mpif.h, as
 * MPICH's): the C one. */
static int c_key(MPI_Fint key)
{
	return predefined(key - 1) ? key - 1 : key;
}

BCSMPI_F void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,
			MPI_Fint *ierror)
{
	*ierror = MPI_Comm_set_attr((MPI_Comm)*comm, *keyval,
				    (void *)(intptr_t)*val);
}

BCSMPI_F void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,
			MPI_Fint *flag, MPI_Fint *ierror)
{
	int key = c_key(*keyval), f = 0;
	void *v = NULL;

	*ierror = MPI_Comm_get_attr((MPI_Comm)*comm, key, &v, &f);
	*flag = f;
	if (!*ierror && f)
		*val = predefined(key) ? *(int *)v : (MPI_Aint)(intptr_t)v;
}

BCSMPI_F void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,
		   MPI_Fint *ierror)
{
	*ierror = MPI_Attr_put((MPI_Comm)*comm, *keyval,
			       (void *)(intptr_t)*val);
}

BCSMPI_F void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,
		   MPI_Fint *flag, MPI_Fint *ierror)
{
	int key = c_key(*keyval), f = 0;
	void *v = NULL;

	*ierror = MPI_Attr_get((MPI_Comm)*comm, key, &v, &f);
	*flag = f;
	if (!*ierror && f)
		*val = predefined(key) ? *(int *)v : (MPI_Fint)(intptr_t)v;
}

/* A Fortran user function (invec, inoutvec, len, datatype), all by
 * reference, is called as C's is. */
BCSMPI_F void mpi_op_create_(MPI_User_function *fn, MPI_Fint *commute, MPI_Fint *op,
		    MPI_Fint *ierror)
{
	*ierror = MPI_Op_create(fn, *commute, (MPI_Op *)op);
}

/* Fortran's MPI_PCONTROL(LEVEL) takes no more. */
BCSMPI_F void mpi_pcontrol_(MPI_Fint *level, MPI_Fint *ierror)
{
	*ierror = MPI_Pcontrol(*level);
}

/* A Fortran status is the C one's five ints (MPICH's layout). */
#pragma weak MPI_Status_c2f = PMPI_Status_c2f
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
	if (!c_status || c_status == MPI_STATUS_IGNORE || !f_status)
		return bcs_error(NULL, "MPI_Status_c2f", MPI_ERR_ARG,
				 "a status is NULL or ignored");
	memcpy(f_status, c_status, sizeof(*c_status));
	return MPI_SUCCESS;
}

#pragma weak MPI_Status_f2c = PMPI_Status_f2c
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
	if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
		return bcs_error(NULL, "MPI_Status_f2c", MPI_ERR_ARG,
				 "a status is NULL or ignored");
	memcpy(c_status, f_status, sizeof(*c_status));
	return MPI_SUCCESS;
}

/* ---- callbacks of Fortran's conventions ---------------------------------- */

/* A keyval made from Fortran: its callbacks take every argument by
 * reference, attribute values as INTEGER(KIND=MPI_ADDRESS_KIND) (as
 * INTEGER for the MPI-1 names); C's callbacks below call them.  One
 * record per keyval index, so nothing is allocated. */
typedef void f_copy_fn(MPI_Fint *obj, MPI_Fint *key, void *extra, void *in,
		       void *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete_fn(MPI_Fint *obj, MPI_Fint *key, void *val,
			 void *extra, MPI_Fint *ierror);

#define F_KEYVALS 1024 /* attr.c's KEYVALS_MAX */

static struct fkeyval {
	f_copy_fn *copy;
	f_delete_fn *del;
	MPI_Aint extra;
	int narrow;              /* the MPI-1 names: INTEGER values */
} fkeyvals[F_KEYVALS];

/* The predefined Fortran callbacks (mpif.h declares them EXTERNAL). */
BCSMPI_F void mpi_comm_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, void *e,
				     void *in, void *out, MPI_Fint *flag,
				     MPI_Fint *ierror)
{
	(void)o, (void)k, (void)e, (void)in, (void)out;
	*flag = 0;
	*ierror = MPI_SUCCESS;
}

BCSMPI_F void mpi_comm_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, MPI_Aint *in,
			       MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	(void)o, (void)k, (void)e;
	*out = *in;
	*flag = 1;
	*ierror = MPI_SUCCESS;
}

BCSMPI_F void mpi_comm_null_delete_fn_(MPI_Fint *o, MPI_Fint *k, void *v,
				       void *e, MPI_Fint *ierror)
{
	(void)o, (void)k, (void)v, (void)e;
	*ierror = MPI_SUCCESS;
}

BCSMPI_F void mpi_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, void *e, void *in,
				void *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	mpi_comm_null_copy_fn_(o, k, e, in, out, flag, ierror);
}

BCSMPI_F void mpi_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, MPI_Fint *in,
			  MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	(void)o, (void)k, (void)e;
	*out = *in;
	*flag = 1;
	*ierror = MPI_SUCCESS;
}

BCSMPI_F void mpi_null_delete_fn_(MPI_Fint *o, MPI_Fint *k, void *v, void *e,
				  MPI_Fint *ierror)
{
	mpi_comm_null_delete_fn_(o, k, v, e, ierror);
}

BCSMPI_F void mpi_type_null_copy_fn_(MPI_Fint *o, MPI_Fint *k, void *e,
				     void *in, void *out, MPI_Fint *flag,
				     MPI_Fint *ierror)
{
	mpi_comm_null_copy_fn_(o, k, e, in, out, flag, ierror);
}

BCSMPI_F void mpi_type_dup_fn_(MPI_Fint *o, MPI_Fint *k, void *e, MPI_Aint *in,
			       MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
	mpi_comm_dup_fn_(o, k, e, in, out, flag, ierror);
}

BCSMPI_F void mpi_type_null_delete_fn_(MPI_Fint *o, MPI_Fint *k, void *v,
				       void *e, MPI_Fint *ierror)
{
	mpi_comm_null_delete_fn_(o, k, v, e, ierror);
}

static int f_copy(MPI_Comm obj, int key, void *extra, void *in, void *out,
		  int *flag)
{
	struct fkeyval *f = extra;
	MPI_Fint o = obj, k = key, fl = 0, ierr = MPI_SUCCESS;

	if (f->narrow) {
		MPI_Fint vin = (MPI_Fint)(intptr_t)in, vout = 0,
			 e = (MPI_Fint)f->extra;

		f->copy(&o, &k, &e, &vin, &vout, &fl, &ierr);
		*(void **)out = (void *)(intptr_t)vout;
	} else {
		MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;

		f->copy(&o, &k, &f->extra, &vin, &vout, &fl, &ierr);
		*(void **)out = (void *)(intptr_t)vout;
	}
	*flag = fl != 0;
	return ierr;
}

static int f_delete(MPI_Comm obj, int key, void *val, void *extra)
{
	struct fkeyval *f = extra;
	MPI_Fint o = obj, k = key, ierr = MPI_SUCCESS;

	if (f->narrow) {
		MPI_Fint v = (MPI_Fint)(intptr_t)val, e = (MPI_Fint)f->extra;

		f->del(&o, &k, &v, &e, &ierr);
	} else {
		MPI_Aint v = (MPI_Aint)(intptr_t)val;

		f->del(&o, &k, &v, &f->extra, &ierr);
	}
	return ierr;
}

static void f_keyval(const char *fn, int kind, f_copy_fn *copy,
		     f_delete_fn *del, MPI_Fint *keyval, MPI_Aint extra,
		     int narrow, MPI_Fint *ierror)
{
	unsigned i;

	*ierror = bcs_keyval_create(fn, kind, f_copy, f_delete, keyval, NULL);
	if (*ierror)
		return;
	i = H_INDEX(*keyval);
	if (i >= F_KEYVALS) {
		bcs_keyval_free(fn, kind, keyval);
		*ierror = bcs_error(NULL, fn, MPI_ERR_INTERN, "keyval index "
				    "%u past the Fortran table", i);
		return;
	}
	fkeyvals[i] = (struct fkeyval){ copy, del, extra, narrow };
	bcs_keyval_set_extra(*keyval, &fkeyvals[i]);
}

BCSMPI_F void mpi_comm_create_keyval_(f_copy_fn *copy, f_delete_fn *del,
				      MPI_Fint *keyval, MPI_Aint *extra,
				      MPI_Fint *ierror)
{
	f_keyval("MPI_Comm_create_keyval", BCS_KEYVAL_COMM, copy, del, keyval,
		 *extra, 0, ierror);
}

BCSMPI_F void mpi_type_create_keyval_(f_copy_fn *copy, f_delete_fn *del,
				      MPI_Fint *keyval, MPI_Aint *extra,
				      MPI_Fint *ierror)
{
	f_keyval("MPI_Type_create_keyval", BCS_KEYVAL_TYPE, copy, del, keyval,
		 *extra, 0, ierror);
}

BCSMPI_F void mpi_keyval_create_(f_copy_fn *copy, f_delete_fn *del,
				 MPI_Fint *keyval, MPI_Fint *extra,
				 MPI_Fint *ierror)
{
	f_keyval("MPI_Keyval_create", BCS_KEYVAL_COMM, copy, del, keyval,
		 *extra, 1, ierror);
}

/* A Fortran error handler (COMM, ERROR_CODE) by reference is called as
 * C's is. */
BCSMPI_F void mpi_comm_create_errhandler_(MPI_Comm_errhandler_function *fn,
					  MPI_Fint *errhandler,
					  MPI_Fint *ierror)
{
	*ierror = MPI_Comm_create_errhandler(fn, (MPI_Errhandler *)errhandler);
}

/* A generalized request made from Fortran: its functions through C's
 * (the record freed with the request). */
typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete,
			 MPI_Fint *ierror);

struct fgreq {
	f_query_fn *query;
	f_free_fn *free;
	f_cancel_fn *cancel;
	MPI_Aint extra;
};

static int fg_query(void *extra, MPI_Status *status)
{
	struct fgreq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	g->query(&g->extra, (MPI_Fint *)status, &ierr);
	return ierr;
}

static int fg_free(void *extra)
{
	struct fgreq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	g->free(&g->extra, &ierr);
	free(g);
	return ierr;
}

static int fg_cancel(void *extra, int complete)
{
	struct fgreq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS, c = complete != 0;

	g->cancel(&g->extra, &c, &ierr);
	return ierr;
}

BCSMPI_F void mpi_grequest_start_(f_query_fn *query, f_free_fn *free_fn,
				  f_cancel_fn *cancel, MPI_Aint *extra,
				  MPI_Fint *request, MPI_Fint *ierror)
{
	struct fgreq *g = malloc(sizeof(*g));

	if (!g) {
		*ierror = bcs_error(NULL, "MPI_Grequest_start",
				    MPI_ERR_NO_MEM, "out of memory");
		return;
	}
	*g = (struct fgreq){ query, free_fn, cancel, *extra };
	*ierror = MPI_Grequest_start(fg_query, fg_free, fg_cancel, g,
				     (MPI_Request *)request);
	if (*ierror)
		free(g);
}
