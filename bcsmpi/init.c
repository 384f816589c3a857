/*
 * init.c — a rank's life in BCS-MPI: MPI_Init attaches it to its node's
 * engine (rt.h), MPI_Finalize detaches it once every rank is there, and
 * the error path: an error under MPI_ERRORS_ARE_FATAL, or MPI_Abort,
 * ends the job through the engine with the call, rank and message
 * (stormctl show), never a hang.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl.h"

int bcs_thread_level = MPI_THREAD_SINGLE;
static pid_t main_tid; /* the thread that called MPI_Init */

/* Tell the engine (it fails the job with this text), wait until it has
 * (bounded), exit. */
static void __attribute__((noreturn)) end_job(int code, int error,
					     const char *msg)
{
	size_t n = strlen(msg);
	struct bcs_desc d = { .kind = BCS_D_ABORT, .op = (uint32_t)code,
			      .flags = error ? 1u : 0u,
			      .addr = (uint64_t)(uintptr_t)msg,
			      .bytes = n < BCS_REASON_MAX ? n :
				       BCS_REASON_MAX };

	if (bcs_rt.seg && !bcs_rt_failed() && !bcs_rt_post(&d, NULL)) {
		/* the engine reads the message from this process at its
		 * next slice: stay until it has (the job then ends) */
		for (int i = 0; i < 300 && !bcs_rt_failed(); i++)
			usleep(10000);
	}
	_exit(code ? code : 1);
}

void bcs_fatal(const char *fn, const char *fmt, ...)
{
	char msg[BCS_REASON_MAX];
	int n = 0;
	va_list ap;

	if (fn)
		n = snprintf(msg, sizeof(msg), "%s: ", fn);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "bcsmpi: rank %d: %s\n", bcs_rt.seg ? bcs_rt.rank : -1,
		msg);
	end_job(1, 1, msg);
}

int bcs_error(struct bcs_comm *c, const char *fn, int cls, const char *fmt,
	      ...)
{
	MPI_Errhandler h = c ? c->errh :
			   (bcs_comm_get(MPI_COMM_WORLD) ?
			    bcs_comm_get(MPI_COMM_WORLD)->errh :
			    MPI_ERRORS_ARE_FATAL);
	char msg[BCS_REASON_MAX - 64];
	va_list ap;

	if (h == MPI_ERRORS_RETURN)
		return cls;
	if (h != MPI_ERRORS_ARE_FATAL) /* the program's own: it decides */
		return bcs_errh_invoke(h, c ? bcs_comm_handle(c) :
				       MPI_COMM_WORLD, cls);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	{
		char text[MPI_MAX_ERROR_STRING];
		int len = 0;

		PMPI_Error_string(cls, text, &len);
		bcs_fatal(fn, "%s (%.60s)", msg, text);
	}
}

int bcs_unsupported(const char *fn)
{
	if (bcs_state_phase() != BCS_PHASE_INITIALIZED)
		bcs_fatal(fn, "not supported by BCS-MPI (docs/bcsmpi.md lists "
			  "what is)");
	return bcs_error(NULL, fn, MPI_ERR_UNSUPPORTED_OPERATION,
			 "%s is not supported by BCS-MPI (docs/bcsmpi.md lists "
			 "what is)", fn);
}

#pragma weak MPI_Init_thread = PMPI_Init_thread
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	char err[512];
	int rc;

	(void)argc;
	(void)argv;
	if (bcs_state_phase() != BCS_PHASE_UNINITIALIZED) {
		fprintf(stderr, "bcsmpi: MPI_Init: called twice, or after "
			"MPI_Finalize\n");
		return MPI_ERR_OTHER;
	}
	if ((rc = bcs_rt_init(bcs_req_done, err, sizeof(err)))) {
		fprintf(stderr, "bcsmpi: MPI_Init: %s\n", err);
		exit(1); /* ERRORS_ARE_FATAL: there is no job to end */
	}
	if ((rc = bcs_comms_init()) != MPI_SUCCESS ||
	    (rc = bcs_dt_init()) != MPI_SUCCESS ||
	    (rc = bcs_infos_init()) != MPI_SUCCESS)
		bcs_fatal("MPI_Init", "out of memory");
	/* one thread calls MPI here (the library starts none): SINGLE and
	 * FUNNELED are the same to it; more is not offered */
	bcs_thread_level = required > MPI_THREAD_FUNNELED ?
			   MPI_THREAD_FUNNELED : (required < MPI_THREAD_SINGLE ?
						  MPI_THREAD_SINGLE : required);
	if (provided)
		*provided = bcs_thread_level;
	main_tid = gettid();
	return bcs_state_advance(BCS_PHASE_INITIALIZED);
}

#pragma weak MPI_Init = PMPI_Init
int PMPI_Init(int *argc, char ***argv)
{
	return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, NULL);
}

#pragma weak MPI_Finalize = PMPI_Finalize
int PMPI_Finalize(void)
{
	struct bcs_desc d = { .kind = BCS_D_FINALIZE };
	int rc;

	BCS_NEED_INIT("MPI_Finalize");
	/* MPI_COMM_SELF's attributes go first: a library's delete callback
	 * may still communicate (MPI-3.1 §8.7.1) */
	if ((rc = bcs_comm_finalize_self()))
		return bcs_error(NULL, "MPI_Finalize", rc, "a delete callback "
				 "of an MPI_COMM_SELF attribute failed (%d)",
				 rc);
	bcs_bsend_flush(); /* buffered messages are delivered all the same */
	/* every rank is here: nothing of theirs still needs this one */
	if ((rc = PMPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
		return rc;
	if (bcs_rt_post(&d, NULL) || bcs_rt_wait(bcs_rt_taken, NULL))
		bcs_fatal("MPI_Finalize", "%s", bcs_rt_failed() ?
			  bcs_rt_failed() : "the job failed");
	bcs_comms_fini();
	bcs_comms_made_fini();
	bcs_groups_fini();
	bcs_errh_fini();
	bcs_infos_fini();
	bcs_dt_fini();
	bcs_op_fini();
	bcs_rt_fini();
	return bcs_state_advance(BCS_PHASE_FINALIZED);
}

#pragma weak MPI_Abort = PMPI_Abort
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
	(void)comm; /* the whole job ends: MPI allows it */
	fprintf(stderr, "bcsmpi: rank %d: MPI_Abort(%s, %d)\n",
		bcs_rt.seg ? bcs_rt.rank : -1,
		comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "comm", errorcode);
	end_job(errorcode, 0, "");
}

/* Profiling control is for a profiling layer (one that intercepts
 * MPI_Pcontrol through PMPI); BCS-MPI itself has nothing to turn. */
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
int PMPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}

#pragma weak MPI_Query_thread = PMPI_Query_thread
int PMPI_Query_thread(int *provided)
{
	BCS_NEED_INIT("MPI_Query_thread");
	if (!provided)
		return bcs_error(NULL, "MPI_Query_thread", MPI_ERR_ARG,
				 "provided is NULL");
	*provided = bcs_thread_level;
	return MPI_SUCCESS;
}

#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
int PMPI_Is_thread_main(int *flag)
{
	BCS_NEED_INIT("MPI_Is_thread_main");
	if (!flag)
		return bcs_error(NULL, "MPI_Is_thread_main", MPI_ERR_ARG,
				 "flag is NULL");
	*flag = gettid() == main_tid;
	return MPI_SUCCESS;
}

#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
int PMPI_Get_processor_name(char *name, int *resultlen)
{
	const char *node = getenv("STORM_NODENAME");
	char host[MPI_MAX_PROCESSOR_NAME];

	if (!name || !resultlen)
		return bcs_error(NULL, "MPI_Get_processor_name", MPI_ERR_ARG,
				 "name or resultlen is NULL");
	if (!node) {
		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	*resultlen = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", node);
	if (*resultlen >= MPI_MAX_PROCESSOR_NAME)
		*resultlen = MPI_MAX_PROCESSOR_NAME - 1;
	return MPI_SUCCESS;
}
