/*
 * badinput.c — the bad input of issue 15, each refused with the class
 * the standard names (tests/bcsmpi/test_jobs.py, test "badinput", 1 to
 * 4 ranks): datatype constructors with negative counts, a receive into a
 * type whose entries overlap, freeing predefined handles, and using a
 * freed communicator, datatype, request or persistent request — under
 * MPI_ERRORS_RETURN.  With the argument "overlap", the receive into
 * overlapping entries under the default handler: the job must end
 * FAILED naming the call and the rank.  Prints "badinput: all passed on
 * N ranks" from rank 0.
 */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

/* Two ints at offsets 0 and 2 bytes: their entries share bytes. */
static MPI_Datatype overlapping(void)
{
	int bl[2] = { 1, 1 };
	MPI_Aint disp[2] = { 0, 2 };
	MPI_Datatype types[2] = { MPI_INT, MPI_INT }, t;

	MPI_Type_create_struct(2, bl, disp, types, &t);
	MPI_Type_commit(&t);
	return t;
}

#define CLASS(call, want)                                                     \
	do {                                                                  \
		int rc_ = (call), c_ = rc_;                                   \
                                                                              \
		MPI_Error_class(rc_, &c_);                                    \
		CHECK(c_ == (want), "%s: class %d, want %d", #call, c_,       \
		      (want));                                                \
	} while (0)

int main(int argc, char **argv)
{
	int bl[2] = { 1, -2 }, buf[4] = { 0 }, x = 0;
	MPI_Aint disp[2] = { 0, 4 };
	MPI_Datatype types[2] = { MPI_INT, MPI_INT }, t, v, dead, pre;
	MPI_Comm c, stale;
	MPI_Request r, gone;
	MPI_Op sum = MPI_SUM;

	init(&argc, &argv);
	t = overlapping();
	if (argc > 1 && !strcmp(argv[1], "overlap")) {
		MPI_Sendrecv(buf, 2, MPI_INT, rank, 1, buf, 1, t, rank, 1,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		printf("badinput: the overlapping receive was taken\n");
		MPI_Finalize();
		return 0;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	/* constructors */
	CLASS(MPI_Type_vector(-1, 1, 1, MPI_INT, &v), MPI_ERR_COUNT);
	CLASS(MPI_Type_create_struct(2, bl, disp, types, &v), MPI_ERR_COUNT);
	CLASS(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &v), MPI_ERR_TYPE);
	/* a receive into overlapping entries; sending from them is fine */
	CLASS(MPI_Irecv(buf, 1, t, rank, 2, MPI_COMM_WORLD, &r),
	      MPI_ERR_TYPE);
	CLASS(MPI_Send(buf, 1, t, rank, 3, MPI_COMM_WORLD), MPI_SUCCESS);
	CLASS(MPI_Recv(buf, 2, MPI_INT, rank, 3, MPI_COMM_WORLD,
		       MPI_STATUS_IGNORE), MPI_SUCCESS);
	/* predefined handles cannot be freed */
	pre = MPI_INT;
	CLASS(MPI_Type_free(&pre), MPI_ERR_TYPE);
	c = MPI_COMM_WORLD;
	CLASS(MPI_Comm_free(&c), MPI_ERR_COMM);
	CLASS(MPI_Op_free(&sum), MPI_ERR_OP);
	/* freed handles are dead */
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	stale = c;
	MPI_Comm_free(&c);
	CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, stale), MPI_ERR_COMM);
	MPI_Type_contiguous(2, MPI_INT, &dead);
	MPI_Type_commit(&dead);
	v = dead;
	MPI_Type_free(&dead);
	CLASS(MPI_Send(&x, 1, v, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
	MPI_Isend(&x, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &r);
	gone = r;
	MPI_Recv(&x, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	CLASS(MPI_Wait(&gone, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
	MPI_Send_init(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &r);
	gone = r;
	MPI_Request_free(&r);
	CLASS(MPI_Start(&gone), MPI_ERR_REQUEST);
	MPI_Type_free(&t);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	return finish("badinput");
}
