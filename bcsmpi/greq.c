/*
 * greq.c — generalized requests (MPI-3.1 §12.2): an operation the
 * program runs itself, completed by MPI_Grequest_complete; Wait and Test
 * then ask its query function for the status and call its free
 * function, Cancel its cancel function.  The request layer calls in
 * here for requests of kind R_GREQ (request.c).
 */
#include <stdlib.h>

#include "impl.h"

struct greq {
	MPI_Grequest_query_function *query;
	MPI_Grequest_free_function *free;
	MPI_Grequest_cancel_function *cancel;
	void *extra;
};

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
			MPI_Grequest_free_function *free_fn,
			MPI_Grequest_cancel_function *cancel_fn,
			void *extra_state, MPI_Request *request)
{
	struct bcs_req *r;
	struct greq *g;

	BCS_NEED_INIT("MPI_Grequest_start");
	if (!query_fn || !free_fn || !cancel_fn || !request)
		return bcs_error(NULL, "MPI_Grequest_start", MPI_ERR_ARG,
				 "a function or request is NULL");
	if (!(g = malloc(sizeof(*g))) || !(r = bcs_req_new(R_GREQ, NULL))) {
		free(g);
		return bcs_error(NULL, "MPI_Grequest_start", MPI_ERR_INTERN,
				 "out of requests or memory");
	}
	*g = (struct greq){ query_fn, free_fn, cancel_fn, extra_state };
	r->greq = g;
	*request = bcs_req_handle(r);
	return MPI_SUCCESS;
}

#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete
int PMPI_Grequest_complete(MPI_Request request)
{
	struct bcs_req *r;

	BCS_NEED_INIT("MPI_Grequest_complete");
	if (!(r = bcs_req_get(request)) || r->kind != R_GREQ || r->done)
		return bcs_error(NULL, "MPI_Grequest_complete",
				 MPI_ERR_REQUEST, "not a generalized request "
				 "under way (%#x)", (unsigned)request);
	r->done = 1;
	if (r->persistent_free) /* MPI_Request_free'd: its free now */
		bcs_req_free(r);
	return MPI_SUCCESS;
}

int bcs_greq_status(struct bcs_req *r)
{
	struct greq *g = r->greq;

	return g->query(g->extra, &r->st);
}

int bcs_greq_cancel(struct bcs_req *r)
{
	struct greq *g = r->greq;

	return g->cancel(g->extra, r->done);
}

void bcs_greq_free(struct bcs_req *r)
{
	struct greq *g = r->greq;

	if (!g)
		return;
	g->free(g->extra);
	free(g);
	r->greq = NULL;
}
