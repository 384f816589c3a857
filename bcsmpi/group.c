/*
 * group.c — process groups (MPI-3.1 §6.3): ordered sets of the job's
 * processes, kept as world ranks in group rank order.  Pure bookkeeping
 * of this process: no group call talks to the engine.  MPI_GROUP_EMPTY
 * is predefined; every group call that makes an empty group returns it.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

#define GROUPS_MAX 4096

struct bcs_group {
	int used;
	int size;
	int32_t *world;
};

static struct bcs_group groups[GROUPS_MAX]; /* [0]: MPI_GROUP_EMPTY */
static unsigned group_next = 1;

static struct bcs_group *get(MPI_Group g)
{
	unsigned i = H_INDEX(g);

	if (g == MPI_GROUP_EMPTY)
		return &groups[0];
	if (H_KIND(g) != H_DIRECT || H_OBJ(g) != O_GROUP || !i ||
	    i >= GROUPS_MAX || !groups[i].used)
		return NULL;
	return &groups[i];
}

int bcs_group_members(MPI_Group g, const int32_t **world, int *size)
{
	const struct bcs_group *p = get(g);

	if (!p)
		return -1;
	*world = p->world;
	*size = p->size;
	return 0;
}

MPI_Group bcs_group_new(int size, const int32_t *world, int *rc)
{
	*rc = MPI_SUCCESS;
	if (size == 0)
		return MPI_GROUP_EMPTY;
	for (unsigned n = 1; n < GROUPS_MAX; n++) {
		unsigned i = (group_next + n - 1) % (GROUPS_MAX - 1) + 1;
		struct bcs_group *p = &groups[i];

		if (p->used)
			continue;
		if (!(p->world = malloc((size_t)size * sizeof(int32_t)))) {
			*rc = MPI_ERR_NO_MEM;
			return MPI_GROUP_NULL;
		}
		memcpy(p->world, world, (size_t)size * sizeof(int32_t));
		p->size = size;
		p->used = 1;
		group_next = i + 1;
		return H_MAKE(H_DIRECT, O_GROUP, i);
	}
	*rc = MPI_ERR_INTERN;
	return MPI_GROUP_NULL;
}

void bcs_groups_fini(void)
{
	for (unsigned i = 1; i < GROUPS_MAX; i++)
		free(groups[i].world);
	memset(groups, 0, sizeof(groups));
	group_next = 1;
}

/* The group rank of world rank w in p, or MPI_UNDEFINED. */
static int rank_of(const struct bcs_group *p, int32_t w)
{
	for (int k = 0; k < p->size; k++)
		if (p->world[k] == w)
			return k;
	return MPI_UNDEFINED;
}

/* A group argument: p, or the error through MPI_COMM_WORLD's handler. */
#define GROUP_ARG(fn, p, g)                                                 \
	do {                                                                \
		BCS_NEED_INIT(fn);                                          \
		if (!((p) = get(g)))                                        \
			return bcs_error(NULL, fn, MPI_ERR_GROUP,           \
					 "not a group (%#x)", (unsigned)(g)); \
	} while (0)

/* A new group of n world ranks into *out: 0 or the error. */
static int made(const char *fn, int n, const int32_t *world, MPI_Group *out)
{
	int rc;

	if (!out)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "newgroup is NULL");
	*out = bcs_group_new(n, world, &rc);
	return rc ? bcs_error(NULL, fn, rc, "no room for another group (%d "
			      "at most)", GROUPS_MAX - 1) : MPI_SUCCESS;
}

#pragma weak MPI_Comm_group = PMPI_Comm_group
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	struct bcs_comm *c;

	BCS_NEED_INIT("MPI_Comm_group");
	if (!(c = bcs_comm_get(comm)))
		return bcs_error(NULL, "MPI_Comm_group", MPI_ERR_COMM,
				 "not a communicator (%#x)", (unsigned)comm);
	return made("MPI_Comm_group", c->size, c->world, group);
}

/* Group_size and Group_rank: one int about a group. */
static int group_query(const char *fn, MPI_Group group, int rank, int *out)
{
	struct bcs_group *p;

	GROUP_ARG(fn, p, group);
	if (!out)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "%s is NULL",
				 rank ? "rank" : "size");
	*out = rank ? rank_of(p, bcs_rt.rank) : p->size;
	return MPI_SUCCESS;
}

#pragma weak MPI_Group_size = PMPI_Group_size
int PMPI_Group_size(MPI_Group group, int *size)
{
	return group_query("MPI_Group_size", group, 0, size);
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int PMPI_Group_rank(MPI_Group group, int *rank)
{
	return group_query("MPI_Group_rank", group, 1, rank);
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
			       MPI_Group group2, int ranks2[])
{
	struct bcs_group *a, *b;

	GROUP_ARG("MPI_Group_translate_ranks", a, group1);
	GROUP_ARG("MPI_Group_translate_ranks", b, group2);
	if (n < 0 || (n && (!ranks1 || !ranks2)))
		return bcs_error(NULL, "MPI_Group_translate_ranks",
				 MPI_ERR_ARG, "n %d, or ranks NULL", n);
	for (int i = 0; i < n; i++) {
		if (ranks1[i] == MPI_PROC_NULL) {
			ranks2[i] = MPI_PROC_NULL;
			continue;
		}
		if (ranks1[i] < 0 || ranks1[i] >= a->size)
			return bcs_error(NULL, "MPI_Group_translate_ranks",
					 MPI_ERR_RANK, "ranks1[%d] = %d in a "
					 "group of %d", i, ranks1[i], a->size);
		ranks2[i] = rank_of(b, a->world[ranks1[i]]);
	}
	return MPI_SUCCESS;
}

#pragma weak MPI_Group_compare = PMPI_Group_compare
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
	struct bcs_group *a, *b;
	int same = 1;

	GROUP_ARG("MPI_Group_compare", a, group1);
	GROUP_ARG("MPI_Group_compare", b, group2);
	if (!result)
		return bcs_error(NULL, "MPI_Group_compare", MPI_ERR_ARG,
				 "result is NULL");
	if (a->size != b->size) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	for (int k = 0; k < a->size; k++) {
		if (rank_of(b, a->world[k]) == MPI_UNDEFINED) {
			*result = MPI_UNEQUAL;
			return MPI_SUCCESS;
		}
		same &= a->world[k] == b->world[k];
	}
	*result = same ? MPI_IDENT : MPI_SIMILAR;
	return MPI_SUCCESS;
}

/* The set operations: which of a's members are kept (in a's order),
 * then (with_b) b's members not in a (in b's order). */
enum keep { KEEP_ALL, KEEP_IN_B, KEEP_NOT_IN_B };

static int set_op(const char *fn, MPI_Group g1, MPI_Group g2,
		  enum keep keep, int with_b, MPI_Group *newgroup)
{
	struct bcs_group *a, *b;
	int32_t *w;
	int n = 0, rc;

	GROUP_ARG(fn, a, g1);
	GROUP_ARG(fn, b, g2);
	if (!(w = malloc((size_t)(a->size + b->size + 1) * sizeof(*w))))
		return bcs_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0; k < a->size; k++) {
		int in_b = rank_of(b, a->world[k]) != MPI_UNDEFINED;

		if (keep == KEEP_ALL || in_b == (keep == KEEP_IN_B))
			w[n++] = a->world[k];
	}
	for (int k = 0; with_b && k < b->size; k++)
		if (rank_of(a, b->world[k]) == MPI_UNDEFINED)
			w[n++] = b->world[k];
	rc = made(fn, n, w, newgroup);
	free(w);
	return rc;
}

#pragma weak MPI_Group_union = PMPI_Group_union
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return set_op("MPI_Group_union", group1, group2, KEEP_ALL, 1,
		      newgroup);
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
			    MPI_Group *newgroup)
{
	return set_op("MPI_Group_intersection", group1, group2, KEEP_IN_B, 0,
		      newgroup);
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
			  MPI_Group *newgroup)
{
	return set_op("MPI_Group_difference", group1, group2, KEEP_NOT_IN_B,
		      0, newgroup);
}

/* ranks (n of them, each a rank of p, distinct) into marks: 0, or the
 * error. */
static int mark(const char *fn, const struct bcs_group *p, int n,
		const int *ranks, unsigned char *marks)
{
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= p->size)
			return bcs_error(NULL, fn, MPI_ERR_RANK, "rank %d in "
					 "a group of %d", ranks[i], p->size);
		if (marks[ranks[i]]++)
			return bcs_error(NULL, fn, MPI_ERR_RANK, "rank %d "
					 "given twice", ranks[i]);
	}
	return MPI_SUCCESS;
}

/* incl (ranks in their order) or excl (the others in group order). */
static int pick(const char *fn, MPI_Group group, int n, const int *ranks,
		int incl, MPI_Group *newgroup)
{
	struct bcs_group *p;
	unsigned char *marks;
	int32_t *w;
	int k = 0, rc;

	GROUP_ARG(fn, p, group);
	if (n < 0 || (n && !ranks))
		return bcs_error(NULL, fn, MPI_ERR_ARG, "n %d, or ranks NULL",
				 n);
	marks = calloc((size_t)p->size + 1, 1);
	w = malloc(((size_t)p->size + 1) * sizeof(*w));
	if (!marks || !w) {
		free(marks);
		free(w);
		return bcs_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	if (!(rc = mark(fn, p, n, ranks, marks))) {
		if (incl)
			for (int i = 0; i < n; i++)
				w[k++] = p->world[ranks[i]];
		else
			for (int r = 0; r < p->size; r++)
				if (!marks[r])
					w[k++] = p->world[r];
		rc = made(fn, k, w, newgroup);
	}
	free(marks);
	free(w);
	return rc;
}

#pragma weak MPI_Group_incl = PMPI_Group_incl
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
		    MPI_Group *newgroup)
{
	return pick("MPI_Group_incl", group, n, ranks, 1, newgroup);
}

#pragma weak MPI_Group_excl = PMPI_Group_excl
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
		    MPI_Group *newgroup)
{
	return pick("MPI_Group_excl", group, n, ranks, 0, newgroup);
}

/* The ranks n triples (first, last, stride) name, in order. */
static int expand(const char *fn, const struct bcs_group *p, int n,
		  int ranges[][3], int **out, int *count)
{
	int k = 0, *r;

	if (n < 0 || (n && !ranges))
		return bcs_error(NULL, fn, MPI_ERR_ARG, "n %d, or ranges NULL",
				 n);
	for (int i = 0; i < n; i++) {
		int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];

		if (s == 0 || f < 0 || f >= p->size || l < 0 ||
		    l >= p->size)
			return bcs_error(NULL, fn, MPI_ERR_RANK, "range %d: "
					 "(%d, %d, %d) in a group of %d", i,
					 f, l, s, p->size);
		if ((s > 0 && l >= f) || (s < 0 && l <= f))
			k += (l - f) / s + 1;
		if (k > p->size) /* some rank twice: mark says which */
			break;
	}
	if (!(r = malloc(((size_t)k + 1) * sizeof(int))))
		return bcs_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
	*count = 0;
	for (int i = 0; i < n && *count < k; i++) {
		int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];

		for (int x = f; (s > 0 ? x <= l : x >= l) && *count < k;
		     x += s)
			r[(*count)++] = x;
	}
	*out = r;
	return MPI_SUCCESS;
}

static int range(const char *fn, MPI_Group group, int n, int ranges[][3],
		 int incl, MPI_Group *newgroup)
{
	struct bcs_group *p;
	int *ranks = NULL, k = 0, rc;

	GROUP_ARG(fn, p, group);
	if ((rc = expand(fn, p, n, ranges, &ranks, &k)))
		return rc;
	rc = pick(fn, group, k, ranks, incl, newgroup);
	free(ranks);
	return rc;
}

#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
			  MPI_Group *newgroup)
{
	return range("MPI_Group_range_incl", group, n, ranges, 1, newgroup);
}

#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
			  MPI_Group *newgroup)
{
	return range("MPI_Group_range_excl", group, n, ranges, 0, newgroup);
}

#pragma weak MPI_Group_free = PMPI_Group_free
int PMPI_Group_free(MPI_Group *group)
{
	struct bcs_group *p;

	BCS_NEED_INIT("MPI_Group_free");
	if (!group || !(p = get(*group)))
		return bcs_error(NULL, "MPI_Group_free", MPI_ERR_GROUP,
				 "not a group");
	if (p != &groups[0]) { /* MPI_GROUP_EMPTY stays */
		free(p->world);
		memset(p, 0, sizeof(*p));
	}
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
