/*
 * persist.c — persistent requests (MPI-3.1 §3.9): Send_init and its
 * modes, Recv_init, Start, Startall.  A persistent request keeps its
 * arguments; each Start posts one ordinary operation of them (p2p.c),
 * which Wait and Test complete through it (request.c, bcs_req_live),
 * leaving it inactive and ready to start again.  So a persistent loop
 * costs what the same Isend/Irecv loop costs: every BCS-MPI operation
 * is a posted descriptor anyway.
 */
#include <string.h>

#include "impl.h"

/* A persistent request of those arguments, checked as the operation
 * would be (so a bad one fails at its init, not at a later Start). */
static int make(const char *fn, void *buf, int count, MPI_Datatype dt,
		int peer, int tag, MPI_Comm comm, int recv,
		enum bcs_send_mode mode, MPI_Request *request)
{
	struct bcs_comm *c;
	struct bcs_req *r;
	int rc;

	BCS_NEED_INIT(fn);
	if ((rc = bcs_p2p_check(fn, &c, comm, buf, count, dt, peer, tag,
				recv ? BCS_P2P_RECV : 0)))
		return rc;
	if (!request)
		return bcs_error(c, fn, MPI_ERR_REQUEST, "request is NULL");
	if (!(r = bcs_req_new(R_PERSIST, c)))
		return bcs_error(c, fn, MPI_ERR_INTERN, "out of requests");
	r->pers = (struct bcs_persist){ .buf = buf, .count = count,
					.dt = dt, .peer = peer, .tag = tag,
					.comm = comm, .recv = recv,
					.mode = mode, .fn = fn };
	bcs_dt_hold(dt); /* a Type_free meanwhile must not undo it */
	r->active = MPI_REQUEST_NULL;
	*request = bcs_req_handle(r);
	return MPI_SUCCESS;
}

#define SEND_INIT(name, mode)                                               \
	int P##name(const void *buf, int count, MPI_Datatype datatype,      \
		    int dest, int tag, MPI_Comm comm, MPI_Request *request) \
	{                                                                   \
		return make(#name, (void *)buf, count, datatype, dest, tag, \
			    comm, 0, mode, request);                        \
	}

#pragma weak MPI_Send_init = PMPI_Send_init
SEND_INIT(MPI_Send_init, BCS_M_STANDARD)
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
SEND_INIT(MPI_Ssend_init, BCS_M_SYNC)
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
SEND_INIT(MPI_Rsend_init, BCS_M_READY)
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
SEND_INIT(MPI_Bsend_init, BCS_M_BUFFERED)

#pragma weak MPI_Recv_init = PMPI_Recv_init
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source,
		   int tag, MPI_Comm comm, MPI_Request *request)
{
	return make("MPI_Recv_init", buf, count, datatype, source, tag, comm,
		    1, BCS_M_STANDARD, request);
}

/* Start request h (fn: the caller, for errors). */
static int start(const char *fn, MPI_Request h)
{
	struct bcs_req *r = bcs_req_get(h);
	struct bcs_persist *p;

	if (!r || r->kind != R_PERSIST)
		return bcs_error(r ? r->comm : NULL, fn, MPI_ERR_REQUEST,
				 "not a persistent request (%#x)",
				 (unsigned)h);
	if (r->active != MPI_REQUEST_NULL)
		return bcs_error(r->comm, fn, MPI_ERR_REQUEST,
				 "the request is active: complete it (MPI_Wait"
				 " or MPI_Test) before starting it again");
	p = &r->pers;
	if (!bcs_comm_get(p->comm))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "its communicator "
				 "was freed");
	/* its datatype is held: freed by the program since is fine */
	return p->recv ?
	       bcs_p2p_recv(fn, p->buf, p->count, p->dt, p->peer, p->tag,
			    p->comm, BCS_P2P_HELD, &r->active) :
	       bcs_p2p_send(fn, p->buf, p->count, p->dt, p->peer, p->tag,
			    p->comm, p->mode, BCS_P2P_HELD, &r->active);
}

#pragma weak MPI_Start = PMPI_Start
int PMPI_Start(MPI_Request *request)
{
	BCS_NEED_INIT("MPI_Start");
	if (!request)
		return bcs_error(NULL, "MPI_Start", MPI_ERR_REQUEST,
				 "request is NULL");
	return start("MPI_Start", *request);
}

/* Each in order; the first that cannot start stops the rest (those
 * started run on, and complete through their requests). */
#pragma weak MPI_Startall = PMPI_Startall
int PMPI_Startall(int count, MPI_Request requests[])
{
	int rc;

	BCS_NEED_INIT("MPI_Startall");
	if (count < 0 || (count && !requests))
		return bcs_error(NULL, "MPI_Startall", MPI_ERR_ARG,
				 "count %d or requests NULL", count);
	for (int i = 0; i < count; i++)
		if ((rc = start("MPI_Startall", requests[i])))
			return rc;
	return MPI_SUCCESS;
}
