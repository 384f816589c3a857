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

static MPI_Comm handle_of(const struct bcs_comm *c)
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
	return MPI_SUCCESS;
}

static void comm_release(struct bcs_comm *c)
{
	free(c->world);
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
	struct bcs_comm *c = NULL;
	uint64_t n = parent->children++;

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
	c->ctx = (mix(parent->ctx ^ mix(n << 32 | color)) &
		  ~(UINT64_C(1) << 63 | 1)) | 4;
	c->errh = parent->errh;
	if (size > 1 && (*rc = announce(c)) != MPI_SUCCESS) {
		comm_release(c);
		return MPI_COMM_NULL;
	}
	*rc = MPI_SUCCESS;
	return handle_of(c);
}

/* ---- the calls ------------------------------------------------------------- */

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_size");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_size", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!size)
		return bcs_error(c, "MPI_Comm_size", MPI_ERR_ARG,
				 "size is NULL");
	*size = c->size;
	return MPI_SUCCESS;
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_rank");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_rank", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	if (!rank)
		return bcs_error(c, "MPI_Comm_rank", MPI_ERR_ARG,
				 "rank is NULL");
	*rank = c->rank;
	return MPI_SUCCESS;
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
	*newcomm = bcs_comm_new(c, 0, c->size, c->world, &rc);
	if (rc != MPI_SUCCESS)
		return bcs_error(c, "MPI_Comm_dup", rc, "no room for another "
				 "communicator (%d at most)", BCS_COMMS_MAX);
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

	BCS_NEED_INIT("MPI_Comm_free");
	if (!comm || !(c = bcs_comm_get(*comm)))
		return bcs_error(NULL, "MPI_Comm_free", MPI_ERR_COMM,
				 "not a communicator");
	if (c->builtin)
		return bcs_error(c, "MPI_Comm_free", MPI_ERR_COMM,
				 "MPI_COMM_WORLD and MPI_COMM_SELF cannot "
				 "be freed");
	/* the engine forgets its group once every member has freed it */
	if (c->size > 1) {
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
	if (errhandler != MPI_ERRORS_ARE_FATAL &&
	    errhandler != MPI_ERRORS_RETURN)
		return bcs_error(c, "MPI_Comm_set_errhandler", MPI_ERR_ARG,
				 "errhandler %#x: MPI_ERRORS_ARE_FATAL or "
				 "MPI_ERRORS_RETURN", (unsigned)errhandler);
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
