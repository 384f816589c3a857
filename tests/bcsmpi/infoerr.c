/*
 * infoerr.c — info objects and the program's own error handlers and
 * codes, each result checked (tests/bcsmpi/test_jobs.py, test
 * "infoerr", 1 to 4 ranks; also under Debian's MPICH itself): Info
 * create/set/get/get_valuelen/get_nkeys/get_nthkey/delete/dup/free,
 * MPI_INFO_ENV, Comm_set/get_info and Comm_dup_with_info; an error
 * handler of the program's called on a bad send (the call returning the
 * code) and by Comm_call_errhandler; Add_error_class/code/string with
 * Error_class/string and MPI_LASTUSEDCODE; a generalized request (its
 * query, cancel and free functions), Status_c2f/f2c, the Fortran 90
 * kinds, Pcontrol, and the tool interface (MPI_T) starting and counting.  Prints "ok NAME" per group
 * and "infoerr: all passed on N ranks" from rank 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

static int cls(int rc)
{
	int c = rc;

	MPI_Error_class(rc, &c);
	return c;
}

static void test_info(void)
{
	MPI_Info info, dup, used;
	char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
	int flag, n, len;
	MPI_Comm c;

	MPI_Info_create(&info);
	MPI_Info_set(info, "cb_nodes", "4");
	MPI_Info_set(info, "striping_unit", "1048576");
	MPI_Info_set(info, "cb_nodes", "8"); /* replaced, keeps its place */
	MPI_Info_get_nkeys(info, &n);
	CHECK(n == 2, "nkeys %d", n);
	MPI_Info_get_nthkey(info, 0, key);
	CHECK(!strcmp(key, "cb_nodes"), "key 0: %s", key);
	MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, value, &flag);
	CHECK(flag && !strcmp(value, "8"), "cb_nodes = %s", value);
	MPI_Info_get_valuelen(info, "striping_unit", &len, &flag);
	CHECK(flag && len == 7, "valuelen %d", len);
	MPI_Info_get(info, "nothing", MPI_MAX_INFO_VAL, value, &flag);
	CHECK(!flag, "a key never set");
	MPI_Info_dup(info, &dup);
	MPI_Info_delete(info, "cb_nodes");
	MPI_Info_get_nkeys(info, &n);
	CHECK(n == 1, "nkeys after delete %d", n);
	MPI_Info_get(dup, "cb_nodes", MPI_MAX_INFO_VAL, value, &flag);
	CHECK(flag && !strcmp(value, "8"), "the dup kept cb_nodes: %s",
	      value);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	CHECK(cls(MPI_Info_delete(info, "cb_nodes")) == MPI_ERR_INFO_NOKEY,
	      "deleting a key twice");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	/* hints on a communicator: taken or not, the calls work */
	MPI_Comm_dup_with_info(MPI_COMM_WORLD, dup, &c);
	MPI_Comm_set_info(c, info);
	MPI_Comm_get_info(c, &used);
	MPI_Info_get_nkeys(used, &n);
	CHECK(n >= 0, "Comm_get_info");
	MPI_Info_free(&used);
	MPI_Comm_free(&c);
	MPI_Info_free(&dup);
	MPI_Info_free(&info);
	CHECK(info == MPI_INFO_NULL, "freed info is null");
	MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
	CHECK(n >= 0, "MPI_INFO_ENV");
	ok("info");
}

static int seen_code, seen_calls;
static MPI_Comm seen_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
	seen_comm = *comm;
	seen_code = *code;
	seen_calls++;
}

static void test_errhandlers(void)
{
	MPI_Errhandler eh, got;
	MPI_Comm c;
	int rc, myclass, mycode, ec, len, *last, flag;
	char text[MPI_MAX_ERROR_STRING];

	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_create_errhandler(handler, &eh);
	MPI_Comm_set_errhandler(c, eh);
	MPI_Comm_get_errhandler(c, &got);
	MPI_Errhandler_free(&eh);
	MPI_Errhandler_free(&got);
	/* a bad rank: the handler runs, the call returns the code */
	rc = MPI_Send(&rc, 1, MPI_INT, size + 3, 0, c);
	CHECK(seen_calls == 1 && seen_comm == c && seen_code == rc &&
	      cls(rc) == MPI_ERR_RANK, "handler: %d calls, code %d, rc %d",
	      seen_calls, seen_code, rc);
	/* added classes and codes */
	MPI_Add_error_class(&myclass);
	MPI_Add_error_code(myclass, &mycode);
	MPI_Add_error_string(mycode, "the solver diverged");
	MPI_Error_class(mycode, &ec);
	CHECK(ec == myclass, "the added code's class %d, want %d", ec,
	      myclass);
	MPI_Error_string(mycode, text, &len);
	CHECK(!strcmp(text, "the solver diverged") && len == 19,
	      "the added code's text: %s", text);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
	CHECK(flag && *last >= myclass, "MPI_LASTUSEDCODE %d < %d",
	      flag ? *last : -1, myclass);
	/* and the program calls its handler itself */
	MPI_Comm_call_errhandler(c, mycode);
	CHECK(seen_calls == 2 && seen_code == mycode, "call_errhandler: %d "
	      "calls, code %d", seen_calls, seen_code);
	MPI_Comm_free(&c);
	ok("errhandlers");
}

/* A generalized request: the program's own operation. */
static int queried, freed, cancelled;

static int greq_query(void *extra, MPI_Status *st)
{
	queried++;
	MPI_Status_set_elements(st, MPI_INT, *(int *)extra);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
	(void)extra;
	freed++;
	return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
	(void)extra;
	cancelled += 1 + complete;
	return MPI_SUCCESS;
}

static void test_odds_and_ends(void)
{
	MPI_Request r;
	MPI_Status st;
	MPI_Fint f[MPI_F_STATUS_SIZE];
	MPI_Datatype t;
	int flag, n = 3, count, sz;

	MPI_Grequest_start(greq_query, greq_free, greq_cancel, &n, &r);
	MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
	CHECK(!flag && r != MPI_REQUEST_NULL, "a generalized request done "
	      "before its completion");
	MPI_Cancel(&r);
	MPI_Grequest_complete(r);
	MPI_Wait(&r, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	CHECK(queried == 1 && freed == 1 && cancelled == 1 && count == 3,
	      "generalized request: query %d free %d cancel %d count %d",
	      queried, freed, cancelled, count);
	/* statuses to and from Fortran */
	MPI_Status_c2f(&st, f);
	memset(&st, 0, sizeof(st));
	MPI_Status_f2c(f, &st);
	MPI_Get_count(&st, MPI_INT, &count);
	CHECK(count == 3, "a status through Fortran: count %d", count);
	/* Fortran 90 kinds */
	MPI_Type_create_f90_real(15, 300, &t);
	MPI_Type_size(t, &sz);
	CHECK(sz == 8, "f90_real(15, 300): %d bytes", sz);
	MPI_Type_create_f90_integer(9, &t);
	MPI_Type_size(t, &sz);
	CHECK(sz == 4, "f90_integer(9): %d bytes", sz);
	MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &t);
	MPI_Type_size(t, &sz);
	CHECK(sz == 8, "f90_complex(6): %d bytes", sz);
	CHECK(MPI_Pcontrol(1) == MPI_SUCCESS, "Pcontrol");
	/* the tool interface: it starts, and has nothing to show */
	{
		int provided, ncvar = -1, npvar = -1, ncat = -1, idx;
		MPI_T_pvar_session session;

		CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) ==
		      MPI_SUCCESS, "MPI_T_init_thread");
		MPI_T_cvar_get_num(&ncvar);
		MPI_T_pvar_get_num(&npvar);
		MPI_T_category_get_num(&ncat);
		CHECK(ncvar >= 0 && npvar >= 0 && ncat >= 0, "MPI_T counts %d "
		      "%d %d", ncvar, npvar, ncat);
		CHECK(MPI_T_cvar_get_index("no such variable", &idx) ==
		      MPI_T_ERR_INVALID_NAME, "an unknown cvar name");
		CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS &&
		      MPI_T_pvar_session_free(&session) == MPI_SUCCESS &&
		      session == MPI_T_PVAR_SESSION_NULL, "a pvar session");
		CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
	}
	ok("odds_and_ends");
}

int main(int argc, char **argv)
{
	init(&argc, &argv);
	test_info();
	test_errhandlers();
	test_odds_and_ends();
	return finish("infoerr");
}
