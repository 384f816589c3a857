/*
 * datatypes.c — derived datatypes in real messages, each result checked
 * (tests/bcsmpi/test_jobs.py, test "datatypes", 1 to 4 ranks; also run
 * under Debian's MPICH itself, so the expectations are MPICH's): an
 * array of C structs (struct + resized) around the ring, MPI_BOTTOM with
 * absolute addresses (Get_address, hindexed), a column of a 2-d array
 * as a subarray, the upper triangle of a matrix (indexed), a dup'd
 * indexed_block, Pack/Unpack of mixed data sent as MPI_PACKED,
 * Bcast and Allgather of structs, Get_elements of a struct message, and
 * the envelope, contents and name of a type.  Prints "ok NAME" per group
 * and "datatypes: all passed on N ranks" from rank 0.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static int next, prev;

struct particle {
	int id;
	double pos[3];
	char tag;
};

static MPI_Datatype particle_type(void)
{
	int bl[3] = { 1, 3, 1 };
	MPI_Aint disp[3] = { offsetof(struct particle, id),
			     offsetof(struct particle, pos),
			     offsetof(struct particle, tag) }, lb, ext;
	MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, t, r;

	MPI_Type_create_struct(3, bl, disp, types, &t);
	/* padded as C pads it already; resized all the same, as codes do */
	MPI_Type_get_extent(t, &lb, &ext);
	CHECK(lb == 0 && ext == sizeof(struct particle),
	      "struct extent %ld, sizeof %zu", (long)ext,
	      sizeof(struct particle));
	MPI_Type_create_resized(t, 0, sizeof(struct particle), &r);
	MPI_Type_free(&t);
	MPI_Type_commit(&r);
	return r;
}

static void set_particle(struct particle *p, int owner, int i)
{
	p->id = owner * 100 + i;
	for (int d = 0; d < 3; d++)
		p->pos[d] = owner + i * 0.5 + d * 0.25;
	p->tag = (char)('a' + (owner + i) % 26);
}

static int same_particle(const struct particle *p, int owner, int i)
{
	struct particle q;

	set_particle(&q, owner, i);
	return p->id == q.id && p->pos[0] == q.pos[0] &&
	       p->pos[1] == q.pos[1] && p->pos[2] == q.pos[2] &&
	       p->tag == q.tag;
}

static void test_structs(void)
{
	enum { N = 50 };
	struct particle out[N], in[N], all[4 * 3];
	MPI_Datatype pt = particle_type();
	MPI_Status st;
	int count, elements;

	for (int i = 0; i < N; i++)
		set_particle(&out[i], rank, i);
	memset(in, 0, sizeof(in));
	MPI_Sendrecv(out, N, pt, next, 1, in, N, pt, prev, 1, MPI_COMM_WORLD,
		     &st);
	for (int i = 0; i < N; i++)
		CHECK(same_particle(&in[i], prev, i), "particle %d from %d: "
		      "id %d tag %c", i, prev, in[i].id, in[i].tag);
	MPI_Get_count(&st, pt, &count);
	MPI_Get_elements(&st, pt, &elements);
	CHECK(count == N && elements == N * 5, "count %d elements %d", count,
	      elements);
	/* collectives */
	set_particle(&out[0], 7, 7);
	if (rank != 0)
		memset(&out[0], 0, sizeof(out[0]));
	MPI_Bcast(out, 1, pt, 0, MPI_COMM_WORLD);
	CHECK(same_particle(&out[0], 7, 7), "Bcast of a struct");
	for (int i = 0; i < 3; i++)
		set_particle(&out[i], rank, i);
	MPI_Allgather(out, 3, pt, all, 3, pt, MPI_COMM_WORLD);
	for (int r = 0; r < size && r < 4; r++)
		for (int i = 0; i < 3; i++)
			CHECK(same_particle(&all[r * 3 + i], r, i),
			      "Allgather: rank %d's particle %d", r, i);
	MPI_Type_free(&pt);
	ok("structs");
}

/* Two separate variables sent as one message from MPI_BOTTOM. */
static void test_bottom(void)
{
	int count_out = rank + 10, count_in = -1;
	double vals_out[4], vals_in[4] = { 0 };
	int bl[2] = { 1, 4 };
	MPI_Aint disp[2];
	MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, send, recv;

	for (int i = 0; i < 4; i++)
		vals_out[i] = rank * 1.5 + i;
	MPI_Get_address(&count_out, &disp[0]);
	MPI_Get_address(vals_out, &disp[1]);
	MPI_Type_create_struct(2, bl, disp, types, &send);
	MPI_Type_commit(&send);
	MPI_Get_address(&count_in, &disp[0]);
	MPI_Get_address(vals_in, &disp[1]);
	MPI_Type_create_struct(2, bl, disp, types, &recv);
	MPI_Type_commit(&recv);
	MPI_Sendrecv(MPI_BOTTOM, 1, send, next, 3, MPI_BOTTOM, 1, recv, prev,
		     3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(count_in == prev + 10, "MPI_BOTTOM: count %d", count_in);
	for (int i = 0; i < 4; i++)
		CHECK(vals_in[i] == prev * 1.5 + i, "MPI_BOTTOM: vals[%d] %g",
		      i, vals_in[i]);
	MPI_Type_free(&send);
	MPI_Type_free(&recv);
	ok("bottom");
}

static void test_arrays(void)
{
	enum { R = 6, C = 8 };
	int a[R][C], b[R][C], sizes[2] = { R, C }, sub[2] = { R - 2, 1 };
	int starts[2] = { 1, C - 2 }, m[4][4], tri[10], bl[4], disp[4];
	int idx[3] = { 0, 3, 5 };
	MPI_Datatype column, upper, picks, picks2;

	for (int i = 0; i < R; i++)
		for (int j = 0; j < C; j++) {
			a[i][j] = rank * 1000 + i * C + j;
			b[i][j] = -1;
		}
	/* an interior column, into column 1 of the neighbour's */
	MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT,
				 &column);
	MPI_Type_commit(&column);
	{
		int *col = malloc(sizeof(int) * (R - 2));

		MPI_Sendrecv(a, 1, column, next, 4, col, R - 2, MPI_INT, prev,
			     4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int i = 0; i < R - 2; i++)
			CHECK(col[i] == prev * 1000 + (i + 1) * C + C - 2,
			      "subarray column[%d] = %d", i, col[i]);
		free(col);
	}
	MPI_Sendrecv(&a[0][0], (R - 2), MPI_INT, next, 5, b, 1, column, prev,
		     5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0; i < R; i++)
		for (int j = 0; j < C; j++)
			CHECK(b[i][j] == (i >= 1 && i <= R - 2 && j == C - 2 ?
					  prev * 1000 + i - 1 : -1),
			      "into a subarray: b[%d][%d] = %d", i, j,
			      b[i][j]);
	MPI_Type_free(&column);
	/* the upper triangle, row by row */
	for (int i = 0; i < 4; i++) {
		bl[i] = 4 - i;
		disp[i] = i * 4 + i;
		for (int j = 0; j < 4; j++)
			m[i][j] = rank * 100 + i * 4 + j;
	}
	MPI_Type_indexed(4, bl, disp, MPI_INT, &upper);
	MPI_Type_commit(&upper);
	MPI_Sendrecv(m, 1, upper, next, 6, tri, 10, MPI_INT, prev, 6,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0, k = 0; i < 4; i++)
		for (int j = i; j < 4; j++, k++)
			CHECK(tri[k] == prev * 100 + i * 4 + j,
			      "triangle[%d] = %d", k, tri[k]);
	MPI_Type_free(&upper);
	/* a dup of an indexed_block: blocks of 2 at 0, 3, 5 */
	MPI_Type_create_indexed_block(3, 2, idx, MPI_INT, &picks);
	MPI_Type_dup(picks, &picks2);
	MPI_Type_free(&picks);
	MPI_Type_commit(&picks2);
	MPI_Sendrecv(a[0], 1, picks2, next, 7, tri, 6, MPI_INT, prev, 7,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int k = 0; k < 6; k++)
		CHECK(tri[k] == prev * 1000 + idx[k / 2] + k % 2,
		      "indexed_block[%d] = %d", k, tri[k]);
	MPI_Type_free(&picks2);
	ok("arrays");
}

static void test_pack(void)
{
	char buf[256], got[256];
	int pos = 0, n = rank + 3, m = -1, size, need;
	double d[3] = { rank + 0.5, rank + 1.5, rank + 2.5 }, e[3];
	MPI_Status st;

	MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &size);
	MPI_Pack_size(3, MPI_DOUBLE, MPI_COMM_WORLD, &need);
	need += size;
	MPI_Pack(&n, 1, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
	MPI_Pack(d, 3, MPI_DOUBLE, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
	CHECK(pos <= need, "packed %d, Pack_size said %d", pos, need);
	MPI_Sendrecv(buf, pos, MPI_PACKED, next, 8, got, sizeof(got),
		     MPI_PACKED, prev, 8, MPI_COMM_WORLD, &st);
	pos = 0;
	MPI_Unpack(got, sizeof(got), &pos, &m, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Unpack(got, sizeof(got), &pos, e, 3, MPI_DOUBLE, MPI_COMM_WORLD);
	CHECK(m == prev + 3 && e[0] == prev + 0.5 && e[2] == prev + 2.5,
	      "unpacked %d %g %g", m, e[0], e[2]);
	ok("pack");
}

static void test_contents_and_names(void)
{
	int bl[2] = { 2, 1 }, ni, na, nd, comb, ints[3], len;
	MPI_Aint disp[2] = { 0, 16 }, aints[2];
	MPI_Datatype types[2] = { MPI_DOUBLE, MPI_INT }, st, got[2];
	char name[MPI_MAX_OBJECT_NAME];

	MPI_Type_create_struct(2, bl, disp, types, &st);
	MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
	CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2,
	      "envelope %d: %d %d %d", comb, ni, na, nd);
	MPI_Type_get_contents(st, 3, 2, 2, ints, aints, got);
	CHECK(ints[0] == 2 && ints[1] == 2 && ints[2] == 1 &&
	      aints[1] == 16 && got[0] == MPI_DOUBLE && got[1] == MPI_INT,
	      "contents %d %d %d %ld", ints[0], ints[1], ints[2],
	      (long)aints[1]);
	MPI_Type_set_name(st, "pair");
	MPI_Type_get_name(st, name, &len);
	CHECK(!strcmp(name, "pair") && len == 4, "name %s", name);
	MPI_Type_get_name(MPI_DOUBLE, name, &len);
	CHECK(!strcmp(name, "MPI_DOUBLE"), "MPI_DOUBLE's name: %s", name);
	MPI_Type_free(&st);
	{
		MPI_Datatype r8;
		int sz;

		MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &r8);
		MPI_Type_size(r8, &sz);
		CHECK(sz == 8, "Type_match_size(REAL, 8): %d bytes", sz);
	}
	ok("contents_and_names");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	test_structs();
	test_bottom();
	test_arrays();
	test_pack();
	test_contents_and_names();
	return finish("datatypes");
}
