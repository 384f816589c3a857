/*
 * p2pmodes.c — point-to-point beyond the core, each result checked
 * (tests/bcsmpi/test_jobs.py, test "p2pmodes", 1 to 4 ranks): persistent
 * requests in every mode (a ring over Startall, a strided receive,
 * restarting, inactive requests in Wait/Test/Waitany), Request_get_status,
 * Cancel of receives (unmatched: cancelled; matched: delivered; a
 * persistent one, then started again) and of a send (completes), the
 * Status_set_* calls, matched probes (Mprobe/Mrecv with a receive
 * posted in between, Improbe/Imrecv, MPI_MESSAGE_NO_PROC), buffered mode (Bsend, Ibsend, Bsend_init; messages
 * held while nobody receives; no room and no buffer: MPI_ERR_BUFFER;
 * detach waits for delivery), and bad arguments' error classes.  With
 * the argument "fatal", a Bsend with no room under the default handler:
 * the job must end FAILED naming the call.  Prints "ok NAME" per group
 * and "p2pmodes: all passed on N ranks" from rank 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

#define BIG 10000 /* ints: more than the engine carries in a descriptor */

static int next, prev;

static void test_persistent(void)
{
	int out[BIG], in[BIG], strided[2 * 4], four[4], flag, index;
	MPI_Request r[2], one;
	MPI_Status st;
	MPI_Datatype every_other;

	MPI_Recv_init(in, BIG, MPI_INT, prev, 1, MPI_COMM_WORLD, &r[0]);
	MPI_Send_init(out, BIG, MPI_INT, next, 1, MPI_COMM_WORLD, &r[1]);
	/* inactive: complete at once with an empty status */
	MPI_Test(&r[0], &flag, &st);
	CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE &&
	      st.MPI_TAG == MPI_ANY_TAG, "Test of an inactive request: flag "
	      "%d source %d tag %d", flag, st.MPI_SOURCE, st.MPI_TAG);
	MPI_Waitany(2, r, &index, &st);
	CHECK(index == MPI_UNDEFINED, "Waitany of inactive: index %d",
	      index);
	CHECK(r[0] != MPI_REQUEST_NULL, "an inactive request stays");
	for (int it = 0; it < 5; it++) {
		for (int i = 0; i < BIG; i++)
			out[i] = rank * 100000 + it * 1000 + i % 1000;
		memset(in, 0xff, sizeof(in));
		MPI_Startall(2, r);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL,
		      "completing leaves persistent requests");
		for (int i = 0; i < BIG; i++)
			CHECK(in[i] == prev * 100000 + it * 1000 + i % 1000,
			      "iteration %d: in[%d] = %d", it, i, in[i]);
	}
	/* starting an active request is an error */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Start(&r[0]);
	CHECK(MPI_Start(&r[0]) == MPI_ERR_REQUEST, "Start of an active "
	      "request");
	MPI_Start(&r[1]);
	MPI_Wait(&r[0], &st);
	MPI_Wait(&r[1], MPI_STATUS_IGNORE);
	CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 1, "status source %d "
	      "tag %d", st.MPI_SOURCE, st.MPI_TAG);
	CHECK(MPI_Cancel(&r[0]) == MPI_ERR_REQUEST, "Cancel of an inactive "
	      "request");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Request_free(&r[0]);
	MPI_Request_free(&r[1]);
	CHECK(r[0] == MPI_REQUEST_NULL, "Request_free nulls the handle");

	/* the other modes, and a strided receive (gaps left alone) */
	MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
	MPI_Type_commit(&every_other);
	for (int mode = 0; mode < 2; mode++) {
		for (int i = 0; i < 4; i++)
			four[i] = rank * 10 + i + mode;
		for (int i = 0; i < 8; i++)
			strided[i] = -1;
		MPI_Recv_init(strided, 1, every_other, prev, 2,
			      MPI_COMM_WORLD, &r[0]);
		MPI_Type_free(&every_other); /* the request holds it */
		MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
		MPI_Type_commit(&every_other);
		if (mode == 0)
			MPI_Ssend_init(four, 4, MPI_INT, next, 2,
				       MPI_COMM_WORLD, &r[1]);
		else
			MPI_Rsend_init(four, 4, MPI_INT, next, 2,
				       MPI_COMM_WORLD, &r[1]);
		MPI_Start(&r[0]);
		MPI_Barrier(MPI_COMM_WORLD); /* ready mode: receives posted */
		MPI_Start(&r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		for (int i = 0; i < 8; i++)
			CHECK(strided[i] == (i % 2 ? -1 : prev * 10 + i / 2 +
					     mode),
			      "mode %d: strided[%d] = %d", mode, i,
			      strided[i]);
		MPI_Request_free(&r[0]);
		MPI_Request_free(&r[1]);
	}
	MPI_Type_free(&every_other);

	/* freed while active: the operation still completes */
	MPI_Send_init(&rank, 1, MPI_INT, next, 3, MPI_COMM_WORLD, &one);
	MPI_Start(&one);
	MPI_Request_free(&one);
	MPI_Recv(&four[0], 1, MPI_INT, prev, 3, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	CHECK(four[0] == prev, "a freed active send delivered %d", four[0]);
	ok("persistent");
}

static void test_get_status_and_cancel(void)
{
	int got = -1, flag = 0, cancelled, v, count;
	MPI_Request r, s;
	MPI_Status st;

	/* Request_get_status looks without completing */
	MPI_Irecv(&got, 1, MPI_INT, prev, 10, MPI_COMM_WORLD, &r);
	MPI_Send(&rank, 1, MPI_INT, next, 10, MPI_COMM_WORLD);
	while (!flag)
		MPI_Request_get_status(r, &flag, &st);
	CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 10, "get_status: "
	      "source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
	CHECK(r != MPI_REQUEST_NULL, "get_status kept the request");
	MPI_Request_get_status(r, &flag, &st);
	CHECK(flag, "get_status again");
	MPI_Wait(&r, &st);
	CHECK(r == MPI_REQUEST_NULL && got == prev, "Wait after get_status: "
	      "got %d", got);
	MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
	CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE, "get_status of null");

	/* an unmatched receive is cancelled */
	MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &r);
	MPI_Cancel(&r);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(cancelled, "an unmatched receive was not cancelled");
	MPI_Get_count(&st, MPI_INT, &count);
	CHECK(count == 0, "a cancelled receive's count %d", count);

	/* a matched one completes with its data */
	got = -1;
	MPI_Irecv(&got, 1, MPI_INT, prev, 12, MPI_COMM_WORLD, &r);
	MPI_Send(&rank, 1, MPI_INT, next, 12, MPI_COMM_WORLD);
	flag = 0;
	while (!flag)
		MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
	MPI_Cancel(&r);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(!cancelled && got == prev, "a matched receive: cancelled %d "
	      "got %d", cancelled, got);

	/* a send is not cancelled: it completes, and is received */
	v = rank + 1000;
	MPI_Isend(&v, 1, MPI_INT, next, 13, MPI_COMM_WORLD, &s);
	MPI_Cancel(&s);
	MPI_Wait(&s, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(!cancelled, "a send said cancelled");
	MPI_Recv(&got, 1, MPI_INT, prev, 13, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	CHECK(got == prev + 1000, "the send cancelled in vain: got %d", got);

	/* a persistent receive: cancelled, then started for real */
	MPI_Recv_init(&got, 1, MPI_INT, prev, 14, MPI_COMM_WORLD, &r);
	MPI_Start(&r);
	MPI_Cancel(&r);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(cancelled, "a persistent receive was not cancelled");
	/* The sender below may run ahead; before every rank has cancelled,
	 * its tag-14 message could match the receive being cancelled. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Start(&r);
	MPI_Send(&rank, 1, MPI_INT, next, 14, MPI_COMM_WORLD);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(!cancelled && got == prev, "restarted: cancelled %d got %d",
	      cancelled, got);
	MPI_Request_free(&r);

	/* synchronous, completed by Testsome */
	{
		MPI_Request q[2];
		int outcount = 0, idx[2], done = 0;

		MPI_Irecv(&got, 1, MPI_INT, prev, 15, MPI_COMM_WORLD, &q[0]);
		MPI_Issend(&rank, 1, MPI_INT, next, 15, MPI_COMM_WORLD, &q[1]);
		while (done < 2) {
			MPI_Testsome(2, q, &outcount, idx, MPI_STATUSES_IGNORE);
			CHECK(outcount != MPI_UNDEFINED, "Testsome: nothing "
			      "live with %d done", done);
			done += outcount;
		}
		CHECK(got == prev, "Issend delivered %d", got);
	}
	/* matched probes: the probed message goes to Mrecv even though
	 * an ANY_SOURCE receive of the same tag is posted in between */
	{
		MPI_Message m;
		MPI_Request any;
		int v2[2] = { rank, rank * 2 }, in2[2] = { -1, -1 }, flag2 = 0;
		int other = -1, cnt;

		MPI_Send(v2, 2, MPI_INT, next, 16, MPI_COMM_WORLD);
		MPI_Mprobe(prev, 16, MPI_COMM_WORLD, &m, &st);
		CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 16, "Mprobe "
		      "status %d %d", st.MPI_SOURCE, st.MPI_TAG);
		MPI_Irecv(&other, 1, MPI_INT, MPI_ANY_SOURCE, 16,
			  MPI_COMM_WORLD, &any);
		MPI_Mrecv(in2, 2, MPI_INT, &m, &st);
		MPI_Get_count(&st, MPI_INT, &cnt);
		CHECK(m == MPI_MESSAGE_NULL && in2[0] == prev &&
		      in2[1] == prev * 2 && cnt == 2, "Mrecv: %d %d count %d",
		      in2[0], in2[1], cnt);
		MPI_Send(&rank, 1, MPI_INT, next, 16, MPI_COMM_WORLD);
		MPI_Wait(&any, MPI_STATUS_IGNORE);
		CHECK(other == prev, "the receive in between got %d", other);
		/* Improbe until it finds one, then Imrecv */
		MPI_Send(v2, 2, MPI_INT, next, 17, MPI_COMM_WORLD);
		while (!flag2)
			MPI_Improbe(prev, 17, MPI_COMM_WORLD, &flag2, &m,
				    MPI_STATUS_IGNORE);
		MPI_Imrecv(in2, 2, MPI_INT, &m, &any);
		MPI_Wait(&any, &st);
		CHECK(in2[1] == prev * 2, "Imrecv: %d", in2[1]);
		MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st);
		CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE ==
		      MPI_PROC_NULL, "Mprobe of MPI_PROC_NULL");
		MPI_Mrecv(in2, 2, MPI_INT, &m, &st);
		CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Mrecv of no process");
	}
	/* statuses set by hand */
	MPI_Status_set_elements(&st, MPI_DOUBLE, 7);
	MPI_Get_count(&st, MPI_DOUBLE, &count);
	CHECK(count == 7, "Status_set_elements: count %d", count);
	MPI_Status_set_elements_x(&st, MPI_INT, 3);
	MPI_Get_count(&st, MPI_INT, &count);
	CHECK(count == 3, "Status_set_elements_x: count %d", count);
	MPI_Status_set_elements(&st, MPI_DOUBLE, 7);
	MPI_Status_set_cancelled(&st, 1);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(cancelled, "Status_set_cancelled(1)");
	MPI_Status_set_cancelled(&st, 0);
	MPI_Test_cancelled(&st, &cancelled);
	MPI_Get_count(&st, MPI_DOUBLE, &count);
	CHECK(!cancelled && count == 7, "Status_set_cancelled(0): %d, "
	      "count %d", cancelled, count);
	ok("get_status_and_cancel");
}

static void test_buffered(void)
{
	static int big[3][BIG], in[BIG];
	int size_needed, bsize, rc, small[4], one = 0, strided[6], got[3];
	void *buf, *detached;
	MPI_Request r;
	MPI_Datatype every_other;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Bsend(&rank, 1, MPI_INT, next, 20, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_BUFFER, "Bsend with no buffer: %d", rc);

	/* room for three big messages, by the standard's rule */
	MPI_Pack_size(BIG, MPI_INT, MPI_COMM_WORLD, &size_needed);
	bsize = 3 * (size_needed + MPI_BSEND_OVERHEAD);
	buf = malloc(bsize);
	CHECK(buf != NULL, "malloc");
	MPI_Buffer_attach(buf, bsize);
	rc = MPI_Buffer_attach(buf, bsize);
	CHECK(rc == MPI_ERR_BUFFER, "attaching twice: %d", rc);
	/* nobody receives yet: three are held, the fourth has no room */
	for (int m = 0; m < 3; m++) {
		for (int i = 0; i < BIG; i++)
			big[m][i] = rank * 1000 + m * 100 + i % 100;
		if (m == 2)
			rc = MPI_Ibsend(big[m], BIG, MPI_INT, next, 21,
					MPI_COMM_WORLD, &r);
		else
			rc = MPI_Bsend(big[m], BIG, MPI_INT, next, 21,
				       MPI_COMM_WORLD);
		CHECK(rc == MPI_SUCCESS, "buffered send %d: %d", m, rc);
		memset(big[m], 0, sizeof(big[m])); /* the buffer has it */
	}
	rc = MPI_Bsend(big[0], BIG, MPI_INT, next, 21, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_BUFFER, "a fourth with no room: %d", rc);
	MPI_Wait(&r, MPI_STATUS_IGNORE); /* Ibsend's: complete at once */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int m = 0; m < 3; m++) {
		MPI_Recv(in, BIG, MPI_INT, prev, 21, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		for (int i = 0; i < BIG; i++)
			CHECK(in[i] == prev * 1000 + m * 100 + i % 100,
			      "buffered message %d: in[%d] = %d", m, i,
			      in[i]);
	}
	/* the three may still be leaving the buffer (a send completes
	 * once the engine moved its bytes): detach waits for that */
	MPI_Buffer_detach(&detached, &bsize);
	CHECK(detached == buf, "detach gave %p, not %p", detached, buf);
	MPI_Buffer_attach(buf, bsize);
	/* small messages and a strided one, persistent too */
	MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
	MPI_Type_commit(&every_other);
	for (int i = 0; i < 6; i++)
		strided[i] = i % 2 ? -7 : rank * 10 + i / 2;
	rc = MPI_Bsend(strided, 1, every_other, next, 22, MPI_COMM_WORLD);
	CHECK(rc == MPI_SUCCESS, "a strided Bsend: %d", rc);
	MPI_Recv(got, 3, MPI_INT, prev, 22, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	for (int i = 0; i < 3; i++)
		CHECK(got[i] == prev * 10 + i, "strided Bsend: got[%d] = %d",
		      i, got[i]);
	MPI_Type_free(&every_other);
	MPI_Bsend_init(&one, 1, MPI_INT, next, 23, MPI_COMM_WORLD, &r);
	for (int it = 0; it < 20; it++) {
		one = rank * 100 + it;
		rc = MPI_Start(&r);
		CHECK(rc == MPI_SUCCESS, "Bsend_init's Start %d: %d", it, rc);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Recv(small, 1, MPI_INT, prev, 23, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		CHECK(small[0] == prev * 100 + it, "Bsend_init %d: got %d",
		      it, small[0]);
	}
	MPI_Request_free(&r);
	/* detach waits for what is still in the buffer */
	rc = MPI_Bsend(big[1], BIG, MPI_INT, next, 24, MPI_COMM_WORLD);
	CHECK(rc == MPI_SUCCESS, "the last Bsend: %d", rc);
	MPI_Irecv(in, BIG, MPI_INT, prev, 24, MPI_COMM_WORLD, &r);
	MPI_Buffer_detach(&detached, &bsize);
	CHECK(detached == buf && bsize == 3 * (size_needed +
					       MPI_BSEND_OVERHEAD),
	      "detach gave %p (%d bytes)", detached, bsize);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	free(buf);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	ok("buffered");
}

static void test_bad_arguments(void)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int x = 0, rc;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Send_init(&x, -1, MPI_INT, next, 0, MPI_COMM_WORLD, &r);
	CHECK(rc == MPI_ERR_COUNT, "Send_init count -1: %d", rc);
	rc = MPI_Recv_init(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r);
	CHECK(rc == MPI_ERR_RANK, "Recv_init rank %d: %d", size, rc);
	rc = MPI_Send_init(&x, 1, MPI_INT, next, -3, MPI_COMM_WORLD, &r);
	CHECK(rc == MPI_ERR_TAG, "Send_init tag -3: %d", rc);
	rc = MPI_Send_init(&x, 1, MPI_DATATYPE_NULL, next, 0, MPI_COMM_WORLD,
			   &r);
	CHECK(rc == MPI_ERR_TYPE, "Send_init of DATATYPE_NULL: %d", rc);
	rc = MPI_Start(&r); /* MPI_REQUEST_NULL: none was made */
	CHECK(rc == MPI_ERR_REQUEST, "Start of a bad request: %d", rc);
	MPI_Isend(&x, 1, MPI_INT, next, 30, MPI_COMM_WORLD, &r);
	rc = MPI_Start(&r);
	CHECK(rc == MPI_ERR_REQUEST, "Start of a non-persistent request: %d",
	      rc);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Recv(&x, 1, MPI_INT, prev, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	ok("bad_arguments");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	if (argc > 1 && !strcmp(argv[1], "fatal")) {
		static char small[MPI_BSEND_OVERHEAD + 8];
		int big[64] = { 0 };

		MPI_Buffer_attach(small, sizeof(small));
		/* no room: the default handler ends the job */
		MPI_Bsend(big, 64, MPI_INT, next, 1, MPI_COMM_WORLD);
		printf("p2pmodes: the Bsend with no room returned\n");
		MPI_Finalize();
		return 0;
	}
	test_persistent();
	test_get_status_and_cancel();
	test_buffered();
	test_bad_arguments();
	return finish("p2pmodes");
}
