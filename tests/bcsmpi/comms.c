/*
 * comms.c — groups, communicators made from them, names and attributes,
 * each result checked (tests/bcsmpi/test_jobs.py, test "comms", 1 to 4
 * ranks; also run under Debian's MPICH itself): every group call
 * (union, intersection, difference, incl/excl and their range forms,
 * translate_ranks, compare), Comm_create (the even ranks, and disjoint
 * halves at once), Comm_create_group (called by its members only, twice
 * with one tag), Comm_split_type SHARED, Cart_sub, Comm_set/get_name,
 * the predefined attributes (MPI_TAG_UB through Comm_get_attr and the
 * old Attr_get), keyvals whose copy and delete callbacks are counted
 * across Comm_dup and Comm_free, and an MPI_COMM_SELF attribute deleted
 * by MPI_Finalize.  Prints "ok NAME" per group and "comms: all passed on
 * N ranks" from rank 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static int copies;

/* An error code's class (MPICH returns codes, not classes). */
static int cls(int rc)
{
	int c = rc;

	MPI_Error_class(rc, &c);
	return c;
}

static int count_copy(MPI_Comm comm, int keyval, void *extra, void *in,
		      void *out, int *flag)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	copies++;
	*(void **)out = (char *)in + 1; /* the copy is told apart */
	*flag = 1;
	return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)val;
	(*(int *)extra)++;
	return MPI_SUCCESS;
}

static int self_deleted;

static int at_finalize(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)keyval;
	(void)val;
	(void)extra;
	if (comm == MPI_COMM_SELF && !self_deleted++)
		printf("rank %d: MPI_COMM_SELF attribute deleted\n", rank);
	fflush(stdout);
	return MPI_SUCCESS;
}

static void test_groups(void)
{
	MPI_Group world, evens, odds, u, in, diff, first, rest, r1, r2;
	int n, rk, res, ranks[4], out[4], ev[2] = { 0, 2 };
	int range[1][3] = { { 0, size - 1, 2 } };

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_size(world, &n);
	MPI_Group_rank(world, &rk);
	CHECK(n == size && rk == rank, "world group %d, rank %d", n, rk);
	MPI_Group_range_incl(world, 1, range, &evens);
	MPI_Group_difference(world, evens, &odds);
	MPI_Group_size(evens, &n);
	CHECK(n == (size + 1) / 2, "evens: %d", n);
	MPI_Group_rank(odds, &rk);
	CHECK(rk == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "odds rank %d",
	      rk);
	MPI_Group_union(odds, evens, &u);
	MPI_Group_compare(u, world, &res);
	CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_IDENT),
	      "union against world: %d", res);
	MPI_Group_intersection(u, evens, &in);
	MPI_Group_compare(in, evens, &res);
	CHECK(res == MPI_IDENT, "intersection: %d", res);
	MPI_Group_difference(evens, evens, &diff);
	CHECK(diff == MPI_GROUP_EMPTY, "an empty difference");
	/* the odds come first in the union: translate */
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	MPI_Group_translate_ranks(world, size, ranks, u, out);
	for (int i = 0; i < size; i++)
		CHECK(out[i] == (i % 2 ? i / 2 : size / 2 + i / 2),
		      "translate %d: %d", i, out[i]);
	MPI_Group_incl(world, 1, ev, &first);
	MPI_Group_excl(world, 1, ev, &rest);
	MPI_Group_size(rest, &n);
	CHECK(n == size - 1, "excl: %d", n);
	MPI_Group_range_excl(world, 1, range, &r1);
	MPI_Group_compare(r1, odds, &res);
	CHECK(res == MPI_IDENT, "range_excl: %d", res);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	ranks[0] = size;
	CHECK(cls(MPI_Group_incl(world, 1, ranks, &r2)) == MPI_ERR_RANK,
	      "incl of rank %d", size);
	CHECK(cls(MPI_Group_size(MPI_GROUP_NULL, &n)) == MPI_ERR_GROUP,
	      "MPI_GROUP_NULL");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Group_free(&first);
	MPI_Group_free(&rest);
	MPI_Group_free(&r1);
	MPI_Group_free(&in);
	MPI_Group_free(&u);
	MPI_Group_free(&odds);
	MPI_Group_free(&evens);
	MPI_Group_free(&world);
	CHECK(world == MPI_GROUP_NULL, "freed groups are null");
	ok("groups");
}

static void test_create(void)
{
	MPI_Group world, evens, half;
	MPI_Comm c, h, g1, g2;
	int range[1][3] = { { 0, size - 1, 2 } }, n, rk, sum = 0;
	int lo[1][3] = { { 0, (size - 1) / 2, 1 } };
	int hi[1][3] = { { (size + 1) / 2, size - 1, 1 } };

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_range_incl(world, 1, range, &evens);
	MPI_Comm_create(MPI_COMM_WORLD, evens, &c);
	if (rank % 2) {
		CHECK(c == MPI_COMM_NULL, "an odd rank got a communicator");
	} else {
		MPI_Comm_size(c, &n);
		MPI_Comm_rank(c, &rk);
		CHECK(n == (size + 1) / 2 && rk == rank / 2, "evens: size %d "
		      "rank %d", n, rk);
		MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
		for (int r = 0; r < size; r += 2)
			sum -= r;
		CHECK(sum == 0, "Allreduce on the evens: off by %d", sum);
		MPI_Comm_free(&c);
	}
	/* disjoint halves, each process passing its own */
	if (rank <= (size - 1) / 2)
		MPI_Group_range_incl(world, 1, lo, &half);
	else
		MPI_Group_range_incl(world, 1, hi, &half);
	MPI_Comm_create(MPI_COMM_WORLD, half, &h);
	CHECK(h != MPI_COMM_NULL, "a half");
	MPI_Comm_size(h, &n);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MIN, h);
	CHECK(sum == (rank <= (size - 1) / 2 ? 0 : (size + 1) / 2),
	      "the half's lowest rank %d", sum);
	MPI_Comm_free(&h);
	/* create_group: only the members call, twice with the same tag */
	if (rank % 2 == 0) {
		MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &g1);
		MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &g2);
		MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MAX, g2);
		CHECK(sum == (size - 1) / 2 * 2, "create_group max %d", sum);
		MPI_Barrier(g1);
		MPI_Comm_free(&g1);
		MPI_Comm_free(&g2);
	}
	MPI_Group_free(&half);
	MPI_Group_free(&evens);
	MPI_Group_free(&world);
	ok("create");
}

static void test_split_type_and_cart_sub(void)
{
	MPI_Comm node, cart, row;
	int n, dims[2] = { 0, 0 }, periods[2] = { 0, 1 }, keep[2] = { 0, 1 };
	int coords[2], rk, total = 0;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
			    MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &n);
	MPI_Allreduce(&n, &total, 1, MPI_INT, MPI_MIN, node);
	CHECK(total == n && n >= 1 && n <= size, "node of %d", n);
	MPI_Comm_free(&node);
	MPI_Dims_create(size, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Cart_coords(cart, rank, 2, coords);
	MPI_Cart_sub(cart, keep, &row);
	MPI_Comm_size(row, &n);
	MPI_Comm_rank(row, &rk);
	CHECK(n == dims[1] && rk == coords[1], "Cart_sub: size %d rank %d",
	      n, rk);
	MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, row);
	CHECK(total == coords[0] * dims[1] * dims[1] +
		       dims[1] * (dims[1] - 1) / 2,
	      "a row's sum %d", total);
	MPI_Comm_free(&row);
	MPI_Comm_free(&cart);
	ok("split_type_and_cart_sub");
}

static void test_names_and_attributes(void)
{
	char name[MPI_MAX_OBJECT_NAME];
	int len, flag, *ub, key, key2, k, deleted = 0, *old;
	void *val;
	MPI_Comm dup;

	MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
	CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world's name %s", name);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_name(dup, "solver");
	MPI_Comm_get_name(dup, name, &len);
	CHECK(!strcmp(name, "solver") && len == 6, "dup's name %s", name);
	/* predefined: MPI_TAG_UB at least 32767 (MPI-3.1 §8.1.2) */
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	CHECK(flag && *ub >= 32767, "MPI_TAG_UB %d", flag ? *ub : -1);
	MPI_Attr_get(dup, MPI_TAG_UB, &old, &flag);
	CHECK(flag && *old == *ub, "Attr_get's MPI_TAG_UB");
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &old, &flag);
	CHECK(!flag || *old == 0 || *old == 1, "MPI_WTIME_IS_GLOBAL");
	{
		MPI_Errhandler eh;

		MPI_Comm_get_errhandler(dup, &eh);
		CHECK(eh == MPI_ERRORS_ARE_FATAL, "dup's error handler");
	}
	/* the MPI-1 names of the same */
	MPI_Keyval_create(MPI_NULL_COPY_FN, count_delete, &k, &deleted);
	MPI_Attr_put(dup, k, (void *)&len);
	MPI_Attr_get(dup, k, &val, &flag);
	CHECK(flag && val == (void *)&len, "Attr_get of Attr_put's");
	MPI_Attr_delete(dup, k);
	CHECK(deleted == 1, "Attr_delete's callback %d", deleted);
	MPI_Keyval_free(&k);
	deleted = 0;
	/* a keyval copied by dup, deleted on free and on replacement */
	MPI_Comm_create_keyval(count_copy, count_delete, &key, &deleted);
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
			       &key2, NULL);
	MPI_Comm_set_attr(dup, key, (void *)name);
	MPI_Comm_set_attr(dup, key2, (void *)&len);
	MPI_Comm_get_attr(dup, key, &val, &flag);
	CHECK(flag && val == name, "got %p, set %p", val, (void *)name);
	{
		MPI_Comm again;

		MPI_Comm_dup(dup, &again);
		CHECK(copies == 1, "copy callbacks %d", copies);
		MPI_Comm_get_attr(again, key, &val, &flag);
		CHECK(flag && val == name + 1, "the copy's value");
		MPI_Comm_get_attr(again, key2, &val, &flag);
		CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");
		MPI_Comm_free(&again);
		CHECK(deleted == 1, "delete callbacks on free %d", deleted);
	}
	MPI_Comm_set_attr(dup, key, (void *)(name + 5));
	CHECK(deleted == 2, "delete callback on replacement %d", deleted);
	MPI_Comm_delete_attr(dup, key);
	CHECK(deleted == 3, "delete callback on delete %d", deleted);
	MPI_Comm_get_attr(dup, key, &val, &flag);
	CHECK(!flag, "a deleted attribute is still there");
	/* freed keyval: the attribute still works until deleted */
	MPI_Comm_set_attr(dup, key, (void *)name);
	k = key;
	MPI_Comm_free_keyval(&key);
	CHECK(key == MPI_KEYVAL_INVALID, "free_keyval's handle");
	MPI_Comm_get_attr(dup, k, &val, &flag);
	CHECK(flag && val == name, "an attribute of a freed keyval");
	MPI_Comm_free(&dup);
	CHECK(deleted == 4, "delete callbacks %d", deleted);
	MPI_Comm_free_keyval(&key2);
	/* MPI_COMM_DUP_FN copies the value itself */
	MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key,
			       NULL);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_attr(dup, key, (void *)name);
	{
		MPI_Comm again;

		MPI_Comm_dup(dup, &again);
		MPI_Comm_get_attr(again, key, &val, &flag);
		CHECK(flag && val == name, "MPI_COMM_DUP_FN");
		MPI_Comm_free(&again);
	}
	MPI_Comm_free(&dup);
	MPI_Comm_free_keyval(&key);
	/* at Finalize: MPI_COMM_SELF's attributes are deleted first */
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
	ok("names_and_attributes");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	test_groups();
	test_create();
	test_split_type_and_cart_sub();
	test_names_and_attributes();
	if (rank == 0)
		printf("comms: all passed on %d ranks\n", size);
	fflush(stdout);
	MPI_Finalize();
	if (self_deleted != 1) { /* no MPI_Abort after MPI_Finalize */
		fprintf(stderr, "rank %d: MPI_COMM_SELF's attribute deleted "
			"%d times\n", rank, self_deleted);
		return 1;
	}
	return 0;
}
