/*
 * comm.c — communicators: MPI_COMM_WORLD, MPI_COMM_SELF and those made
 * from them (dup, split, Cartesian).  A communicator is a group (its
 * members' world ranks, in communicator rank order) and a context the
 * engine keeps its messages and collectives apart by.  Key invariant:
 * every member derives the same context for a new communicator without
 * a message — from the parent's context, the count of communicators the
 * parent has made (collective calls come in the same order on every
 * member) and the split color — so only the group travels (allreduce).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

static struct bcs_comm comms[BCS_COMMS_MAX];

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finalizer: any change of the input moves every bit */
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

struct bcs_comm *bcs_comm_get(MPI_Comm c)
{
	unsigned i = H_INDEX(c);

	if (H_OBJ(c) != O_COMM)
		return NULL;
	if (H_KIND(c) == H_BUILTIN && i < 2)
		return comms[i].used ? &comms[i] : NULL;
	if (H_KIND(c) == H_DIRECT && i >= 2 && i < BCS_COMMS_MAX)
		return comms[i].used && !comms[i].freed ? &comms[i] : NULL;
	return NULL;
}

MPI_Comm bcs_comm_handle(const struct bcs_comm *c)
{
	unsigned i = (unsigned)(c - comms);

	return i < 2 ? H_MAKE(H_BUILTIN, O_COMM, i) :
		       H_MAKE(H_DIRECT, O_COMM, i);
}

/* The engine keeps the group of every communicator it runs collectives
 * on (BCS_D_COMM).  It takes it at its next slice, when the program may
 * have freed the communicator already: a group that fits travels in the
 * descriptor's slot; a larger one is read from here, and the call waits
 * until the engine has. */
static int announce(struct bcs_comm *c)
{
	struct bcs_desc d = { .kind = BCS_D_COMM, .ctx = c->ctx,
			      .addr = (uint64_t)(uintptr_t)c->world,
			      .bytes = (uint64_t)c->size * 4 };
	int eager = d.bytes <= BCS_EAGER_MAX;

	d.flags = eager ? BCS_F_EAGER : 0;
	if (bcs_rt_post(&d, eager ? c->world : NULL) ||
	    (!eager && bcs_rt_wait(bcs_rt_taken, NULL)))
		return MPI_ERR_OTHER;
	return MPI_SUCCESS;
}

int bcs_comms_init(void)
{
	int n = bcs_rt.size;
	struct bcs_comm *w = &comms[0], *s = &comms[1];

	memset(comms, 0, sizeof(comms));
	w->world = malloc((size_t)n * sizeof(int32_t));
	s->world = malloc(sizeof(int32_t));
	if (!w->world || !s->world)
		return MPI_ERR_NO_MEM;
	for (int r = 0; r < n; r++)
		w->world[r] = r;
	w->used = s->used = 1;
	w->builtin = s->builtin = 1;
	w->ctx = BCS_CTX_WORLD; /* the engine knows it without a word */
	w->size = n;
	w->rank = bcs_rt.rank;
	w->errh = s->errh = MPI_ERRORS_ARE_FATAL;
	s->ctx = (UINT64_C(1) << 63) | ((uint64_t)bcs_rt.rank << 1);
	s->size = 1;
	s->rank = 0;
	s->world[0] = bcs_rt.rank;
	strcpy(w->name, "MPI_COMM_WORLD");
	strcpy(s->name, "MPI_COMM_SELF");
	bcs_attrs_init(n);
	return MPI_SUCCESS;
}

int bcs_comm_finalize_self(void)
{
	return bcs_attr_delete_all(&comms[1], MPI_COMM_SELF);
}

static void comm_release(struct bcs_comm *c)
{
	bcs_attr_drop(c);
	bcs_graph_free(c->graph);
	free(c->world);
	free(c->rworld);
	if (c->cart) {
		free(c->cart->dims);
		free(c->cart->periods);
		free(c->cart->coords);
		free(c->cart);
	}
	memset(c, 0, sizeof(*c));
}

void bcs_comm_ref(struct bcs_comm *c)
{
	if (c)
		c->refs++;
}

void bcs_comm_unref(struct bcs_comm *c)
{
	if (c && --c->refs <= 0 && c->freed)
		comm_release(c);
}

void bcs_comms_fini(void)
{
	for (int i = 0; i < BCS_COMMS_MAX; i++)
		if (comms[i].used)
			comm_release(&comms[i]);
}

MPI_Comm bcs_comm_new(struct bcs_comm *parent, uint32_t color, int size,
		      const int32_t *world, int *rc)
{
	uint64_t n = parent->children++;

	return bcs_comm_make(parent, n << 32 | color, size, world, rc);
}

/* A slot for a communicator of context ctx and those members, this
 * rank found among them; not announced. */
static MPI_Comm comm_slot(uint64_t ctx, int size, const int32_t *world,
			  int *rc)
{
	struct bcs_comm *c = NULL;

	for (int i = 2; i < BCS_COMMS_MAX && !c; i++)
		if (!comms[i].used) /* a freed one in use is still used */
			c = &comms[i];
	if (!c) {
		*rc = MPI_ERR_INTERN;
		return MPI_COMM_NULL;
	}
	memset(c, 0, sizeof(*c));
	if (!(c->world = malloc((size_t)size * sizeof(int32_t)))) {
		*rc = MPI_ERR_NO_MEM;
		return MPI_COMM_NULL;
	}
	memcpy(c->world, world, (size_t)size * sizeof(int32_t));
	c->used = 1;
	c->size = size;
	c->rank = -1;
	for (int k = 0; k < size; k++)
		if (world[k] == bcs_rt.rank)
			c->rank = k;
	/* even, and never the world's or a self context */
	c->ctx = (ctx & ~(UINT64_C(1) << 63 | 1)) | 4;
	c->errh = MPI_ERRORS_ARE_FATAL;
	c->local = MPI_COMM_NULL;
	*rc = MPI_SUCCESS;
	return bcs_comm_handle(c);
}

MPI_Comm bcs_comm_alloc(uint64_t key, int size, const int32_t *world,
			int *rc)
{
	return comm_slot(mix(key), size, world, rc);
}

MPI_Comm bcs_comm_make(struct bcs_comm *parent, uint64_t key, int size,
		       const int32_t *world, int *rc)
{
	MPI_Comm h = comm_slot(mix(parent->ctx ^ mix(key)), size, world, rc);
	struct bcs_comm *c;

	if (*rc)
		return MPI_COMM_NULL;
	c = bcs_comm_get(h);
	c->errh = parent->errh;
	if (size > 1 && (*rc = announce(c)) != MPI_SUCCESS) {
		comm_release(c);
		return MPI_COMM_NULL;
	}
	return h;
}

/* ---- the calls ------------------------------------------------------------- */

int bcs_comm_query(const char *fn, MPI_Comm comm, int inter_only,
		   int (*get)(const struct bcs_comm *c), int *out)
{
	struct bcs_comm *c;

	BCS_NEED_INIT(fn);
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (inter_only && !c->inter)
		return bcs_error(c, fn, MPI_ERR_COMM, "not an "
				 "intercommunicator");
	if (!out)
		return bcs_error(c, fn, MPI_ERR_ARG, "the result's address is "
				 "NULL");
	*out = get(c);
	return MPI_SUCCESS;
}

static int size_of(const struct bcs_comm *c)
{
	return c->size;
}

static int rank_of(const struct bcs_comm *c)
{
	return c->rank;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	return bcs_comm_query("MPI_Comm_size", comm, 0, size_of, size);
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	return bcs_comm_query("MPI_Comm_rank", comm, 0, rank_of, rank);
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT("MPI_Comm_dup");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_dup", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!newcomm)
		return bcs_error(c, "MPI_Comm_dup", MPI_ERR_ARG,
				 "newcomm is NULL");
	/* collective: every member is here before any uses the new one */
	if ((rc = PMPI_Barrier(comm)) != MPI_SUCCESS)
		return rc;
	if (c->inter)
		*newcomm = bcs_inter_dup(c, &rc);
	else
		*newcomm = bcs_comm_new(c, 0, c->size, c->world, &rc);
	if (rc != MPI_SUCCESS)
		return bcs_error(c, "MPI_Comm_dup", rc, "no room for another "
				 "communicator (%d at most)", BCS_COMMS_MAX);
	/* the attributes, through their copy callbacks */
	if ((rc = bcs_attr_copy(c, comm, bcs_comm_get(*newcomm), *newcomm))) {
		PMPI_Comm_free(newcomm);
		return bcs_error(c, "MPI_Comm_dup", rc, "an attribute's copy "
				 "callback failed (%d)", rc);
	}
	return MPI_SUCCESS;
}

struct member {
	int color, key, rank;
};

static int by_key(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank - y->rank;
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	struct bcs_comm *c;
	int *all, rc, n = 0;
	struct member *m;
	int32_t *world;

	BCS_NEED_INIT("MPI_Comm_split");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_split", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (c->inter)
		return bcs_error(c, "MPI_Comm_split", MPI_ERR_UNSUPPORTED_OPERATION,
				 "on an intercommunicator: not supported by "
				 "BCS-MPI (merge it first)");
	if (!newcomm)
		return bcs_error(c, "MPI_Comm_split", MPI_ERR_ARG,
				 "newcomm is NULL");
	if (color < 0 && color != MPI_UNDEFINED)
		return bcs_error(c, "MPI_Comm_split", MPI_ERR_ARG,
				 "color %d: not negative, or MPI_UNDEFINED",
				 color);
	/* every member's (color, key): each fills its own pair, a sum
	 * gives them all (one collective of the engine) */
	all = calloc((size_t)c->size * 2, sizeof(int));
	m = malloc((size_t)c->size * sizeof(*m));
	world = malloc((size_t)c->size * sizeof(*world));
	if (!all || !m || !world) {
		free(all);
		free(m);
		free(world);
		return bcs_error(c, "MPI_Comm_split", MPI_ERR_NO_MEM,
				 "out of memory for %d members", c->size);
	}
	all[2 * c->rank] = color;
	all[2 * c->rank + 1] = key;
	rc = PMPI_Allreduce(MPI_IN_PLACE, all, 2 * c->size, MPI_INT, MPI_SUM,
			    comm);
	if (rc == MPI_SUCCESS && color != MPI_UNDEFINED) {
		for (int r = 0; r < c->size; r++)
			if (all[2 * r] == color)
				m[n++] = (struct member){ all[2 * r],
							  all[2 * r + 1], r };
		qsort(m, (size_t)n, sizeof(*m), by_key);
		for (int k = 0; k < n; k++)
			world[k] = c->world[m[k].rank];
		*newcomm = bcs_comm_new(c, (uint32_t)color, n, world, &rc);
		if (rc != MPI_SUCCESS)
			rc = bcs_error(c, "MPI_Comm_split", rc, "no room for "
				       "another communicator (%d at most)",
				       BCS_COMMS_MAX);
	} else if (rc == MPI_SUCCESS) {
		c->children++; /* as the others count */
		*newcomm = MPI_COMM_NULL;
	}
	free(all);
	free(m);
	free(world);
	return rc;
}

#pragma weak MPI_Comm_free = PMPI_Comm_free
int PMPI_Comm_free(MPI_Comm *comm)
{
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT("MPI_Comm_free");
	if (!comm || !(c = bcs_comm_get(*comm)))
		return bcs_error(NULL, "MPI_Comm_free", MPI_ERR_COMM,
				 "not a communicator");
	if (c->builtin)
		return bcs_error(c, "MPI_Comm_free", MPI_ERR_COMM,
				 "MPI_COMM_WORLD and MPI_COMM_SELF cannot "
				 "be freed");
	/* the attributes' delete callbacks first: one that fails keeps
	 * the communicator */
	if ((rc = bcs_attr_delete_all(c, *comm)))
		return bcs_error(c, "MPI_Comm_free", rc, "an attribute's "
				 "delete callback failed (%d)", rc);
	/* an intercommunicator's local half goes with it */
	if (c->inter && c->local != MPI_COMM_NULL)
		PMPI_Comm_free(&c->local);
	/* the engine forgets its group once every member has freed it
	 * (an intercommunicator's was never announced) */
	if (c->size > 1 && !c->inter) {
		struct bcs_desc d = { .kind = BCS_D_COMM_FREE, .ctx = c->ctx };

		if (bcs_rt_post(&d, NULL))
			return bcs_error(c, "MPI_Comm_free", MPI_ERR_OTHER,
					 "the job has failed");
	}
	/* requests still pending on it keep it until they are done (their
	 * statuses translate through its group) */
	c->freed = 1;
	if (c->refs <= 0)
		comm_release(c);
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

static int same_members(const struct bcs_comm *a, const struct bcs_comm *b)
{
	for (int i = 0; i < a->size; i++) {
		int found = 0;

		for (int k = 0; k < b->size && !found; k++)
			found = a->world[i] == b->world[k];
		if (!found)
			return 0;
	}
	return 1;
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	struct bcs_comm *a, *b;

	BCS_NEED_INIT("MPI_Comm_compare");
	if (!(a = bcs_comm_get(comm1)) || !(b = bcs_comm_get(comm2)))
		return bcs_error(NULL, "MPI_Comm_compare", MPI_ERR_COMM,
				 "not a communicator");
	if (!result)
		return bcs_error(a, "MPI_Comm_compare", MPI_ERR_ARG,
				 "result is NULL");
	if (a == b)
		*result = MPI_IDENT;
	else if (a->size != b->size || !same_members(a, b))
		*result = MPI_UNEQUAL;
	else if (!memcmp(a->world, b->world, (size_t)a->size * 4))
		*result = MPI_CONGRUENT;
	else
		*result = MPI_SIMILAR;
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_set_errhandler");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_set_errhandler", MPI_ERR_COMM,
				 "not a communicator");
	if (!bcs_errh_valid(errhandler))
		return bcs_error(c, "MPI_Comm_set_errhandler", MPI_ERR_ARG,
				 "errhandler %#x: MPI_ERRORS_ARE_FATAL, "
				 "MPI_ERRORS_RETURN or one of "
				 "MPI_Comm_create_errhandler",
				 (unsigned)errhandler);
	c->errh = errhandler;
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_get_errhandler");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_get_errhandler", MPI_ERR_COMM,
				 "not a communicator");
	if (!errhandler)
		return bcs_error(c, "MPI_Comm_get_errhandler", MPI_ERR_ARG,
				 "errhandler is NULL");
	*errhandler = c->errh;
	return MPI_SUCCESS;
}

/* ---- made from groups ------------------------------------------------------ */

/* Whether every member of the group is one of c's. */
static int within(const struct bcs_comm *c, const int32_t *w, int n)
{
	for (int i = 0; i < n; i++) {
		int found = 0;

		for (int k = 0; k < c->size && !found; k++)
			found = c->world[k] == w[i];
		if (!found)
			return 0;
	}
	return 1;
}

static int is_member(const int32_t *w, int n)
{
	for (int i = 0; i < n; i++)
		if (w[i] == bcs_rt.rank)
			return 1;
	return 0;
}

/* Collective over comm; each process passes a group, the same on the
 * members of one group, groups disjoint (MPI-3.1 §6.4.2): a group's
 * members derive one context from its lowest world rank. */
#pragma weak MPI_Comm_create = PMPI_Comm_create
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	struct bcs_comm *c;
	const int32_t *w;
	int n, rc;
	int32_t low = INT32_MAX;

	BCS_NEED_INIT("MPI_Comm_create");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_create", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (c->inter)
		return bcs_error(c, "MPI_Comm_create", MPI_ERR_UNSUPPORTED_OPERATION,
				 "on an intercommunicator: not supported by "
				 "BCS-MPI (merge it first)");
	if (bcs_group_members(group, &w, &n))
		return bcs_error(c, "MPI_Comm_create", MPI_ERR_GROUP,
				 "not a group (%#x)", (unsigned)group);
	if (!newcomm)
		return bcs_error(c, "MPI_Comm_create", MPI_ERR_ARG,
				 "newcomm is NULL");
	if (!within(c, w, n))
		return bcs_error(c, "MPI_Comm_create", MPI_ERR_GROUP,
				 "the group has processes the communicator "
				 "does not");
	if ((rc = PMPI_Barrier(comm)) != MPI_SUCCESS)
		return rc;
	if (!is_member(w, n)) {
		c->children++; /* as the members count */
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	for (int i = 0; i < n; i++)
		if (w[i] < low)
			low = w[i];
	*newcomm = bcs_comm_new(c, (uint32_t)low, n, w, &rc);
	return rc ? bcs_error(c, "MPI_Comm_create", rc, "no room for another "
			      "communicator (%d at most)", BCS_COMMS_MAX) :
		    MPI_SUCCESS;
}

/* Collective over the group's members only (MPI-3.1 §6.4.2): the
 * parent's count of children cannot serve (the others do not call), so
 * the key is the group, the tag and how many communicators this
 * process made of that group and tag before — the same on every
 * member, since each makes them in the same order. */
struct made_of {
	struct made_of *next;
	uint64_t parent, group, tag;
	uint64_t count;
};
static struct made_of *made_of;

#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
			   MPI_Comm *newcomm)
{
	struct bcs_comm *c;
	const int32_t *w;
	struct made_of *m;
	uint64_t h = 0x9e3779b97f4a7c15u;
	int n, rc;

	BCS_NEED_INIT("MPI_Comm_create_group");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_create_group", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (c->inter)
		return bcs_error(c, "MPI_Comm_create_group", MPI_ERR_UNSUPPORTED_OPERATION,
				 "on an intercommunicator: not supported by "
				 "BCS-MPI (merge it first)");
	if (bcs_group_members(group, &w, &n))
		return bcs_error(c, "MPI_Comm_create_group", MPI_ERR_GROUP,
				 "not a group (%#x)", (unsigned)group);
	if (!newcomm)
		return bcs_error(c, "MPI_Comm_create_group", MPI_ERR_ARG,
				 "newcomm is NULL");
	if (tag < 0 || tag > BCS_TAG_UB)
		return bcs_error(c, "MPI_Comm_create_group", MPI_ERR_TAG,
				 "tag %d (0 to %d)", tag, BCS_TAG_UB);
	if (!within(c, w, n) || !is_member(w, n))
		return bcs_error(c, "MPI_Comm_create_group", MPI_ERR_GROUP,
				 "the caller must be in the group, and the "
				 "group within the communicator");
	for (int i = 0; i < n; i++)
		h = mix(h ^ (uint32_t)w[i]);
	for (m = made_of; m; m = m->next)
		if (m->parent == c->ctx && m->group == h &&
		    m->tag == (uint64_t)tag)
			break;
	if (!m) {
		if (!(m = calloc(1, sizeof(*m))))
			return bcs_error(c, "MPI_Comm_create_group",
					 MPI_ERR_NO_MEM, "out of memory");
		*m = (struct made_of){ made_of, c->ctx, h, (uint64_t)tag, 0 };
		made_of = m;
	}
	*newcomm = bcs_comm_make(c, UINT64_C(1) << 63 |
				 mix(h ^ mix((uint64_t)tag << 32 |
					     m->count)), n, w, &rc);
	if (rc)
		return bcs_error(c, "MPI_Comm_create_group", rc, "no room for "
				 "another communicator (%d at most)",
				 BCS_COMMS_MAX);
	m->count++;
	/* every member is here before any uses it */
	return PMPI_Barrier(*newcomm);
}

void bcs_comms_made_fini(void)
{
	while (made_of) {
		struct made_of *m = made_of;

		made_of = m->next;
		free(m);
	}
}

/* MPI_COMM_TYPE_SHARED: the processes of one node (its name, as
 * MPI_Get_processor_name says), in key order. */
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key,
			 MPI_Info info, MPI_Comm *newcomm)
{
	struct bcs_comm *c;
	char *names;
	int color = MPI_UNDEFINED, len, rc;

	(void)info;
	BCS_NEED_INIT("MPI_Comm_split_type");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_split_type", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
		return bcs_error(c, "MPI_Comm_split_type", MPI_ERR_ARG,
				 "split_type %d (MPI_COMM_TYPE_SHARED or "
				 "MPI_UNDEFINED)", split_type);
	if (!(names = calloc((size_t)c->size, MPI_MAX_PROCESSOR_NAME)))
		return bcs_error(c, "MPI_Comm_split_type", MPI_ERR_NO_MEM,
				 "out of memory");
	PMPI_Get_processor_name(names + (size_t)c->rank *
				MPI_MAX_PROCESSOR_NAME, &len);
	/* every member's node name: the first member of each node gives
	 * it its color */
	rc = PMPI_Allgather(MPI_IN_PLACE, 0, MPI_CHAR, names,
			    MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
	if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_SHARED)
		for (int r = 0; r < c->size && color == MPI_UNDEFINED; r++)
			if (!strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME,
				    names + (size_t)c->rank *
					    MPI_MAX_PROCESSOR_NAME))
				color = r;
	free(names);
	if (rc != MPI_SUCCESS)
		return rc;
	return PMPI_Comm_split(comm, color, key, newcomm);
}

/* ---- names ------------------------------------------------------------------ */

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_set_name");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_set_name", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!comm_name)
		return bcs_error(c, "MPI_Comm_set_name", MPI_ERR_ARG,
				 "comm_name is NULL");
	/* longer names are cut, as the standard allows */
	snprintf(c->name, sizeof(c->name), "%s", comm_name);
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_get_name");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_get_name", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!comm_name || !resultlen)
		return bcs_error(c, "MPI_Comm_get_name", MPI_ERR_ARG,
				 "comm_name or resultlen is NULL");
	*resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
	return MPI_SUCCESS;
}
