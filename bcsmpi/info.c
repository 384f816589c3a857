/*
 * info.c — info objects (MPI-3.1 §9): ordered (key, value) strings a
 * program hands to calls as hints.  BCS-MPI takes no hints, so
 * Comm_set_info keeps nothing and Comm_get_info gives an empty object,
 * as the standard allows; the objects themselves work in full.
 * MPI_INFO_ENV holds what the job was started with that BCS-MPI knows:
 * "maxprocs" (the job's size) and "host" (this node's name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

#define INFOS_MAX 1024

struct entry {
	struct entry *next;
	char *key, *value;
};

struct info {
	int used;
	struct entry *first; /* in the order set */
};

static struct info infos[INFOS_MAX]; /* [0]: MPI_INFO_ENV */

static struct info *get(MPI_Info h)
{
	unsigned i = H_INDEX(h);

	if (h == MPI_INFO_ENV)
		return &infos[0];
	if (H_KIND(h) != H_DIRECT || H_OBJ(h) != O_INFO || !i ||
	    i >= INFOS_MAX || !infos[i].used)
		return NULL;
	return &infos[i];
}

static struct entry *find(struct info *p, const char *key)
{
	for (struct entry *e = p->first; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

static void clear(struct info *p)
{
	while (p->first) {
		struct entry *e = p->first;

		p->first = e->next;
		free(e->key);
		free(e->value);
		free(e);
	}
}

/* Set key to value in p: 0 or MPI_ERR_NO_MEM. */
static int set(struct info *p, const char *key, const char *value)
{
	struct entry *e = find(p, key), **pp;
	char *v = strdup(value);

	if (!v)
		return MPI_ERR_NO_MEM;
	if (e) {
		free(e->value);
		e->value = v;
		return MPI_SUCCESS;
	}
	if (!(e = calloc(1, sizeof(*e))) || !(e->key = strdup(key))) {
		free(e);
		free(v);
		return MPI_ERR_NO_MEM;
	}
	e->value = v;
	for (pp = &p->first; *pp; pp = &(*pp)->next)
		;
	*pp = e;
	return MPI_SUCCESS;
}

int bcs_infos_init(void)
{
	char n[16], host[MPI_MAX_PROCESSOR_NAME];
	int len = 0;

	memset(infos, 0, sizeof(infos));
	infos[0].used = 1;
	snprintf(n, sizeof(n), "%d", bcs_rt.size);
	PMPI_Get_processor_name(host, &len);
	if (set(&infos[0], "maxprocs", n) || set(&infos[0], "host", host))
		return MPI_ERR_NO_MEM;
	return MPI_SUCCESS;
}

void bcs_infos_fini(void)
{
	for (int i = 0; i < INFOS_MAX; i++)
		clear(&infos[i]);
	memset(infos, 0, sizeof(infos));
}

static MPI_Info info_new(int *rc)
{
	for (unsigned i = 1; i < INFOS_MAX; i++)
		if (!infos[i].used) {
			infos[i].used = 1;
			*rc = MPI_SUCCESS;
			return H_MAKE(H_DIRECT, O_INFO, i);
		}
	*rc = MPI_ERR_INTERN;
	return MPI_INFO_NULL;
}

#define INFO_ARG(fn, p, h)                                                  \
	do {                                                                \
		BCS_NEED_INIT(fn);                                          \
		if (!((p) = get(h)))                                        \
			return bcs_error(NULL, fn, MPI_ERR_INFO,            \
					 "not an info object (%#x)",        \
					 (unsigned)(h));                    \
	} while (0)

/* A key the standard allows: 1 to MPI_MAX_INFO_KEY characters. */
static int key_ok(const char *fn, const char *key)
{
	size_t n = key ? strlen(key) : 0;

	if (!n || n > MPI_MAX_INFO_KEY)
		return bcs_error(NULL, fn, MPI_ERR_INFO_KEY, "key of %zu "
				 "characters (1 to %d)", n, MPI_MAX_INFO_KEY);
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_create = PMPI_Info_create
int PMPI_Info_create(MPI_Info *info)
{
	int rc;

	BCS_NEED_INIT("MPI_Info_create");
	if (!info)
		return bcs_error(NULL, "MPI_Info_create", MPI_ERR_ARG,
				 "info is NULL");
	*info = info_new(&rc);
	return rc ? bcs_error(NULL, "MPI_Info_create", rc, "no room for "
			      "another info object (%d at most)",
			      INFOS_MAX - 1) : MPI_SUCCESS;
}

#pragma weak MPI_Info_set = PMPI_Info_set
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	struct info *p;
	size_t n = value ? strlen(value) : 0;
	int rc;

	INFO_ARG("MPI_Info_set", p, info);
	if (p == &infos[0])
		return bcs_error(NULL, "MPI_Info_set", MPI_ERR_INFO,
				 "MPI_INFO_ENV cannot change");
	if ((rc = key_ok("MPI_Info_set", key)))
		return rc;
	if (!n || n > MPI_MAX_INFO_VAL)
		return bcs_error(NULL, "MPI_Info_set", MPI_ERR_INFO_VALUE,
				 "value of %zu characters (1 to %d)", n,
				 MPI_MAX_INFO_VAL);
	if ((rc = set(p, key, value)))
		return bcs_error(NULL, "MPI_Info_set", rc, "out of memory");
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_get = PMPI_Info_get
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value,
		  int *flag)
{
	struct info *p;
	struct entry *e;
	int rc;

	INFO_ARG("MPI_Info_get", p, info);
	if ((rc = key_ok("MPI_Info_get", key)))
		return rc;
	if (!flag || valuelen < 0 || (valuelen && !value))
		return bcs_error(NULL, "MPI_Info_get", MPI_ERR_ARG,
				 "flag or value NULL, or valuelen %d",
				 valuelen);
	if (!(*flag = (e = find(p, key)) != NULL))
		return MPI_SUCCESS;
	/* at most valuelen characters, and the NUL (MPI-3.1 §9) */
	snprintf(value, (size_t)valuelen + 1, "%s", e->value);
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
			   int *flag)
{
	struct info *p;
	struct entry *e;
	int rc;

	INFO_ARG("MPI_Info_get_valuelen", p, info);
	if ((rc = key_ok("MPI_Info_get_valuelen", key)))
		return rc;
	if (!valuelen || !flag)
		return bcs_error(NULL, "MPI_Info_get_valuelen", MPI_ERR_ARG,
				 "valuelen or flag is NULL");
	if ((*flag = (e = find(p, key)) != NULL))
		*valuelen = (int)strlen(e->value);
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_delete = PMPI_Info_delete
int PMPI_Info_delete(MPI_Info info, const char *key)
{
	struct info *p;
	struct entry **pp, *e;
	int rc;

	INFO_ARG("MPI_Info_delete", p, info);
	if ((rc = key_ok("MPI_Info_delete", key)))
		return rc;
	for (pp = &p->first; (e = *pp); pp = &e->next)
		if (!strcmp(e->key, key)) {
			*pp = e->next;
			free(e->key);
			free(e->value);
			free(e);
			return MPI_SUCCESS;
		}
	return bcs_error(NULL, "MPI_Info_delete", MPI_ERR_INFO_NOKEY,
			 "no key \"%.64s\"", key);
}

#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	struct info *p;

	INFO_ARG("MPI_Info_get_nkeys", p, info);
	if (!nkeys)
		return bcs_error(NULL, "MPI_Info_get_nkeys", MPI_ERR_ARG,
				 "nkeys is NULL");
	*nkeys = 0;
	for (struct entry *e = p->first; e; e = e->next)
		++*nkeys;
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	struct info *p;
	struct entry *e;
	int k = 0;

	INFO_ARG("MPI_Info_get_nthkey", p, info);
	if (!key)
		return bcs_error(NULL, "MPI_Info_get_nthkey", MPI_ERR_ARG,
				 "key is NULL");
	for (e = p->first; e && k < n; e = e->next)
		k++;
	if (n < 0 || !e)
		return bcs_error(NULL, "MPI_Info_get_nthkey", MPI_ERR_ARG,
				 "n %d: the object has %d keys", n, k);
	snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", e->key);
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_dup = PMPI_Info_dup
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	struct info *p;
	int rc;

	INFO_ARG("MPI_Info_dup", p, info);
	if (!newinfo)
		return bcs_error(NULL, "MPI_Info_dup", MPI_ERR_ARG,
				 "newinfo is NULL");
	*newinfo = info_new(&rc);
	for (struct entry *e = p->first; !rc && e; e = e->next)
		rc = set(get(*newinfo), e->key, e->value);
	if (rc) {
		if (*newinfo != MPI_INFO_NULL)
			PMPI_Info_free(newinfo);
		return bcs_error(NULL, "MPI_Info_dup", rc, "out of memory or "
				 "info objects");
	}
	return MPI_SUCCESS;
}

#pragma weak MPI_Info_free = PMPI_Info_free
int PMPI_Info_free(MPI_Info *info)
{
	struct info *p;

	BCS_NEED_INIT("MPI_Info_free");
	if (!info || !(p = get(*info)) || p == &infos[0])
		return bcs_error(NULL, "MPI_Info_free", MPI_ERR_INFO,
				 "not an info object the program made");
	clear(p);
	p->used = 0;
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}

/* ---- hints on communicators: none taken ----------------------------------- */

#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	BCS_NEED_INIT("MPI_Comm_set_info");
	if (!bcs_comm_get(comm))
		return bcs_error(NULL, "MPI_Comm_set_info", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (info != MPI_INFO_NULL && !get(info))
		return bcs_error(NULL, "MPI_Comm_set_info", MPI_ERR_INFO,
				 "not an info object (%#x)", (unsigned)info);
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	BCS_NEED_INIT("MPI_Comm_get_info");
	if (!bcs_comm_get(comm))
		return bcs_error(NULL, "MPI_Comm_get_info", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	return PMPI_Info_create(info_used);
}

#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	int rc;

	if ((rc = PMPI_Comm_set_info(comm, info)))
		return rc;
	return PMPI_Comm_dup(comm, newcomm);
}
