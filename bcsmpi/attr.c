/*
 * attr.c — attribute caching on communicators (MPI-3.1 §6.7): keyvals
 * with their copy and delete callbacks, attributes set, got and deleted,
 * copied by MPI_Comm_dup and deleted by MPI_Comm_free (newest first);
 * the predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO,
 * MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE),
 * answered on every communicator; and the deprecated MPI-1 names of the
 * same calls.  A keyval freed while attributes use it lives on until the
 * last of them is deleted, as the standard says.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

#define KEYVALS_MAX 1024

struct bcs_attr {
	struct bcs_attr *next;
	int keyval;
	void *val;
};

struct keyval {
	int used;
	int kind;                /* BCS_KEYVAL_COMM or BCS_KEYVAL_TYPE */
	int freed;               /* by the program: attributes keep it */
	unsigned refs;           /* attributes of it */
	MPI_Comm_copy_attr_function *copy;
	MPI_Comm_delete_attr_function *del;
	void *extra;
};

static struct keyval keyvals[KEYVALS_MAX]; /* [0] unused */

/* The predefined attributes' values (pointers to them are handed out). */
static int tag_ub = BCS_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE,
	   wtime_global, universe, appnum, lastcode = MPI_ERR_LASTCODE;

static const struct {
	int key;
	int *val;
} predefined[] = {
	{ MPI_TAG_UB, &tag_ub },
	{ MPI_HOST, &host },
	/* every process may do I/O */
	{ MPI_IO, &io },
	/* each node's clock is its own */
	{ MPI_WTIME_IS_GLOBAL, &wtime_global },
	{ MPI_UNIVERSE_SIZE, &universe },
	{ MPI_APPNUM, &appnum },
	{ MPI_LASTUSEDCODE, &lastcode },
};
#define NPREDEFINED (sizeof predefined / sizeof predefined[0])

static int *predefined_val(int key)
{
	for (size_t i = 0; i < NPREDEFINED; i++)
		if (predefined[i].key == key)
			return predefined[i].val;
	return NULL;
}

static struct keyval *keyval_get(int k)
{
	unsigned i = H_INDEX(k);

	if (H_KIND(k) != H_DIRECT || H_OBJ(k) != O_KEYVAL || !i ||
	    i >= KEYVALS_MAX || !keyvals[i].used)
		return NULL;
	return &keyvals[i];
}

static void keyval_unref(struct keyval *kv)
{
	if (kv->refs)
		kv->refs--;
	if (!kv->refs && kv->freed)
		memset(kv, 0, sizeof(*kv));
}

/* MPI_COMM_DUP_FN: the value itself is copied. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state,
		void *attribute_val_in, void *attribute_val_out, int *flag)
{
	(void)oldcomm;
	(void)keyval;
	(void)extra_state;
	*(void **)attribute_val_out = attribute_val_in;
	*flag = 1;
	return MPI_SUCCESS;
}

/* Delete attribute *pp of the object of handle h: its delete callback
 * first; a callback's error keeps it and is returned. */
static int attr_remove(int h, struct bcs_attr **pp)
{
	struct bcs_attr *a = *pp;
	struct keyval *kv = keyval_get(a->keyval);
	int rc;

	if (kv && kv->del &&
	    (rc = kv->del(h, a->keyval, a->val, kv->extra)) != MPI_SUCCESS)
		return rc;
	*pp = a->next;
	if (kv)
		keyval_unref(kv);
	free(a);
	return MPI_SUCCESS;
}

int bcs_attrs_delete_all(struct bcs_attr **list, int h)
{
	int rc;

	while (*list)
		if ((rc = attr_remove(h, list)))
			return rc;
	return MPI_SUCCESS;
}

int bcs_attr_delete_all(struct bcs_comm *c, MPI_Comm h)
{
	return bcs_attrs_delete_all(&c->attrs, h);
}

int bcs_attrs_set(struct bcs_attr **list, int h, int key, void *val)
{
	struct keyval *kv = keyval_get(key);
	struct bcs_attr **pp, *a;
	int rc;

	for (pp = list; *pp; pp = &(*pp)->next)
		if ((*pp)->keyval == key) {
			if ((rc = attr_remove(h, pp)))
				return rc;
			break;
		}
	if (!(a = malloc(sizeof(*a))))
		return MPI_ERR_NO_MEM;
	a->keyval = key;
	a->val = val;
	a->next = *list; /* newest first: deleted first */
	*list = a;
	kv->refs++;
	return MPI_SUCCESS;
}

int bcs_attrs_get(struct bcs_attr *list, int key, void **val)
{
	for (struct bcs_attr *a = list; a; a = a->next)
		if (a->keyval == key) {
			*val = a->val;
			return 1;
		}
	return 0;
}

int bcs_attrs_delete(struct bcs_attr **list, int h, int key)
{
	for (struct bcs_attr **pp = list; *pp; pp = &(*pp)->next)
		if ((*pp)->keyval == key)
			return attr_remove(h, pp);
	return MPI_ERR_KEYVAL;
}

int bcs_attrs_copy(struct bcs_attr *from, int fromh, struct bcs_attr **to,
		   int toh)
{
	struct bcs_attr **list;
	int n = 0, rc = MPI_SUCCESS;

	for (struct bcs_attr *a = from; a; a = a->next)
		n++;
	if (!n)
		return MPI_SUCCESS;
	if (!(list = malloc((size_t)n * sizeof(*list))))
		return MPI_ERR_NO_MEM;
	n = 0;
	for (struct bcs_attr *a = from; a; a = a->next)
		list[n++] = a;
	/* oldest first, so the copies keep the order */
	while (n-- > 0 && rc == MPI_SUCCESS) {
		struct bcs_attr *a = list[n];
		struct keyval *kv = keyval_get(a->keyval);
		void *out = NULL;
		int flag = 0;

		if (!kv || !kv->copy)
			continue; /* a NULL_COPY_FN: not copied */
		rc = kv->copy(fromh, a->keyval, kv->extra, a->val, &out,
			      &flag);
		if (rc == MPI_SUCCESS && flag)
			rc = bcs_attrs_set(to, toh, a->keyval, out);
	}
	free(list);
	return rc;
}

int bcs_attr_copy(struct bcs_comm *old, MPI_Comm oldh, struct bcs_comm *new,
		  MPI_Comm newh)
{
	return bcs_attrs_copy(old->attrs, oldh, &new->attrs, newh);
}

void bcs_attrs_drop(struct bcs_attr **list)
{
	while (*list) {
		struct bcs_attr *a = *list;

		*list = a->next;
		free(a);
	}
}

/* Forget c's attributes without callbacks (MPI_Finalize's end). */
void bcs_attr_drop(struct bcs_comm *c)
{
	bcs_attrs_drop(&c->attrs);
}

void bcs_keyval_set_extra(int key, void *extra)
{
	struct keyval *kv = keyval_get(key);

	if (kv)
		kv->extra = extra;
}

int bcs_keyval_ok(int key, int kind)
{
	struct keyval *kv = keyval_get(key);

	return kv && !kv->freed && kv->kind == kind;
}

void bcs_attrs_init(int world_size)
{
	memset(keyvals, 0, sizeof(keyvals));
	universe = world_size;
	lastcode = MPI_ERR_LASTCODE;
}

void bcs_attr_lastcode(int code)
{
	lastcode = code;
}

/* ---- the calls ------------------------------------------------------------ */

int bcs_keyval_create(const char *fn, int kind,
		      MPI_Comm_copy_attr_function *copy,
		      MPI_Comm_delete_attr_function *del, int *keyval,
		      void *extra)
{
	BCS_NEED_INIT(fn);
	if (!keyval)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "keyval is NULL");
	for (unsigned i = 1; i < KEYVALS_MAX; i++)
		if (!keyvals[i].used) {
			keyvals[i] = (struct keyval){ .used = 1, .kind = kind,
						      .copy = copy, .del = del,
						      .extra = extra };
			*keyval = H_MAKE(H_DIRECT, O_KEYVAL, i);
			return MPI_SUCCESS;
		}
	return bcs_error(NULL, fn, MPI_ERR_KEYVAL, "no room for another "
			 "keyval (%d at most)", KEYVALS_MAX - 1);
}

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
			    MPI_Comm_delete_attr_function *comm_delete_attr_fn,
			    int *comm_keyval, void *extra_state)
{
	return bcs_keyval_create("MPI_Comm_create_keyval", BCS_KEYVAL_COMM,
				 comm_copy_attr_fn, comm_delete_attr_fn,
				 comm_keyval, extra_state);
}

int bcs_keyval_free(const char *fn, int kind, int *keyval)
{
	struct keyval *kv;

	BCS_NEED_INIT(fn);
	if (!keyval || !(kv = keyval_get(*keyval)) || kv->freed ||
	    kv->kind != kind)
		return bcs_error(NULL, fn, MPI_ERR_KEYVAL, "not a keyval%s",
				 keyval && predefined_val(*keyval) ?
				 " of the program's (a predefined one)" : "");
	kv->freed = 1;
	kv->refs++;
	keyval_unref(kv); /* gone now if no attribute uses it */
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int PMPI_Comm_free_keyval(int *comm_keyval)
{
	return bcs_keyval_free("MPI_Comm_free_keyval", BCS_KEYVAL_COMM,
			       comm_keyval);
}

static int set_attr(const char *fn, MPI_Comm comm, int key, void *val)
{
	struct bcs_comm *c;
	struct keyval *kv;
	int rc;

	BCS_NEED_INIT(fn);
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (!(kv = keyval_get(key)) || kv->freed ||
	    kv->kind != BCS_KEYVAL_COMM)
		return bcs_error(c, fn, MPI_ERR_KEYVAL, "%s", predefined_val(key)
				 ? "a predefined attribute cannot be set" :
				 "not a communicator keyval");
	if ((rc = bcs_attrs_set(&c->attrs, comm, key, val)))
		return bcs_error(c, fn, rc, "the old value's delete callback "
				 "failed, or out of memory");
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	return set_attr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

/* attribute_val is really a void **: it gets the value set (for the
 * predefined attributes, a pointer to an int). */
static int get_attr(const char *fn, MPI_Comm comm, int key, void *val,
		    int *flag)
{
	struct bcs_comm *c;
	int *pre;

	BCS_NEED_INIT(fn);
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (!val || !flag)
		return bcs_error(c, fn, MPI_ERR_ARG, "attribute_val or flag "
				 "is NULL");
	if ((pre = predefined_val(key))) {
		*(void **)val = pre;
		*flag = 1;
		return MPI_SUCCESS;
	}
	if (!keyval_get(key) || keyval_get(key)->kind != BCS_KEYVAL_COMM)
		return bcs_error(c, fn, MPI_ERR_KEYVAL, "not a communicator "
				 "keyval (%#x)", (unsigned)key);
	*flag = bcs_attrs_get(c->attrs, key, (void **)val);
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val,
		       int *flag)
{
	return get_attr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val,
			flag);
}

static int delete_attr(const char *fn, MPI_Comm comm, int key)
{
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT(fn);
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (!keyval_get(key) || keyval_get(key)->kind != BCS_KEYVAL_COMM)
		return bcs_error(c, fn, MPI_ERR_KEYVAL, "not a communicator "
				 "keyval (%#x)", (unsigned)key);
	if ((rc = bcs_attrs_delete(&c->attrs, comm, key)))
		return bcs_error(c, fn, rc, rc == MPI_ERR_KEYVAL ?
				 "no attribute of that keyval on the "
				 "communicator" : "the delete callback failed");
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
	return delete_attr("MPI_Comm_delete_attr", comm, comm_keyval);
}

/* ---- the MPI-1 names (deprecated, still in MPI-3.1) ------------------------- */

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int PMPI_Keyval_create(MPI_Copy_function *copy_fn,
		       MPI_Delete_function *delete_fn, int *keyval,
		       void *extra_state)
{
	return bcs_keyval_create("MPI_Keyval_create", BCS_KEYVAL_COMM, copy_fn,
				 delete_fn, keyval, extra_state);
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int PMPI_Keyval_free(int *keyval)
{
	return bcs_keyval_free("MPI_Keyval_free", BCS_KEYVAL_COMM, keyval);
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	return set_attr("MPI_Attr_put", comm, keyval, attribute_val);
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	return get_attr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return delete_attr("MPI_Attr_delete", comm, keyval);
}
