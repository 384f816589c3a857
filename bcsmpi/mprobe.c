/*
 * mprobe.c — matched probes (MPI-3.1 §3.8.2): Mprobe and Improbe find a
 * message and take it out of matching at once, so that no other receive
 * can have it; Mrecv and Imrecv then deliver it.
 *
 * A probe's answer names the message's source and tag; a receive for
 * exactly those is posted before the call returns — by MPI's
 * non-overtaking rule it takes the earliest such message, the one
 * probed — into a buffer of the message's size.  The message handle is
 * that receive's request (MPICH's message handles are requests too).
 * Mrecv/Imrecv unpack from the buffer into the program's, at once if
 * the message is in, else at its completion.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* Take the message st describes (a probe's status on c) out of
 * matching: *message, or an error. */
static int take(const char *fn, struct bcs_comm *c, const MPI_Status *st,
		MPI_Message *message)
{
	uint64_t bytes = bcs_status_bytes(st);
	void *buf = malloc(bytes ? bytes : 1);
	MPI_Request r;
	int rc;

	if (!buf || bytes > INT32_MAX) {
		free(buf);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "no buffer for a "
				 "message of %llu bytes",
				 (unsigned long long)bytes);
	}
	rc = bcs_irecv(buf, (int)bytes, MPI_BYTE,
		       bcs_peer_world(c)[st->MPI_SOURCE], st->MPI_TAG, c->ctx,
		       c, &r);
	if (rc) {
		free(buf);
		return bcs_error(c, fn, rc, "out of requests");
	}
	bcs_req_get(r)->tmp = buf; /* freed with the request */
	*message = r;
	return MPI_SUCCESS;
}

static void no_proc(MPI_Message *message, MPI_Status *status)
{
	*message = MPI_MESSAGE_NO_PROC;
	if (status && status != MPI_STATUS_IGNORE) {
		memset(status, 0, sizeof(*status));
		status->MPI_SOURCE = MPI_PROC_NULL;
		status->MPI_TAG = MPI_ANY_TAG;
	}
}

#pragma weak MPI_Mprobe = PMPI_Mprobe
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
		MPI_Status *status)
{
	MPI_Status st;
	int rc;

	BCS_NEED_INIT("MPI_Mprobe");
	if (!message)
		return bcs_error(bcs_comm_get(comm), "MPI_Mprobe", MPI_ERR_ARG,
				 "message is NULL");
	if ((rc = PMPI_Probe(source, tag, comm, &st)))
		return rc;
	if (source == MPI_PROC_NULL) {
		no_proc(message, status);
		return MPI_SUCCESS;
	}
	if ((rc = take("MPI_Mprobe", bcs_comm_get(comm), &st, message)))
		return rc;
	if (status && status != MPI_STATUS_IGNORE)
		*status = st;
	return MPI_SUCCESS;
}

#pragma weak MPI_Improbe = PMPI_Improbe
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
		 MPI_Message *message, MPI_Status *status)
{
	MPI_Status st;
	int rc;

	BCS_NEED_INIT("MPI_Improbe");
	if (!message || !flag)
		return bcs_error(bcs_comm_get(comm), "MPI_Improbe", MPI_ERR_ARG,
				 "flag or message is NULL");
	if ((rc = PMPI_Iprobe(source, tag, comm, flag, &st)) || !*flag)
		return rc;
	if (source == MPI_PROC_NULL) {
		no_proc(message, status);
		return MPI_SUCCESS;
	}
	if ((rc = take("MPI_Improbe", bcs_comm_get(comm), &st, message)))
		return rc;
	if (status && status != MPI_STATUS_IGNORE)
		*status = st;
	return MPI_SUCCESS;
}

#pragma weak MPI_Imrecv = PMPI_Imrecv
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype,
		MPI_Message *message, MPI_Request *request)
{
	struct bcs_req *r;
	struct bcs_comm *c;
	uint64_t bytes;

	BCS_NEED_INIT("MPI_Imrecv");
	if (!message || !request)
		return bcs_error(NULL, "MPI_Imrecv", MPI_ERR_ARG,
				 "message or request is NULL");
	if (*message == MPI_MESSAGE_NO_PROC) {
		/* a receive from MPI_PROC_NULL: complete at once */
		*message = MPI_MESSAGE_NULL;
		return PMPI_Irecv(buf, count, datatype, MPI_PROC_NULL, 0,
				  MPI_COMM_SELF, request);
	}
	if (!(r = bcs_req_get(*message)) || r->kind != R_RECV || !r->tmp ||
	    r->unpack)
		return bcs_error(NULL, "MPI_Imrecv", MPI_ERR_REQUEST,
				 "not a message of MPI_Mprobe or MPI_Improbe "
				 "(%#x)", (unsigned)*message);
	c = r->comm;
	if (count < 0 || !bcs_dt_ok(datatype) ||
	    (count && !buf && bcs_dt_size(datatype) &&
	     bcs_dt_contig(datatype)))
		return bcs_error(c, "MPI_Imrecv", count < 0 ? MPI_ERR_COUNT :
				 !bcs_dt_ok(datatype) ? MPI_ERR_TYPE :
				 MPI_ERR_BUFFER, "count %d, datatype %#x or "
				 "buffer", count, (unsigned)datatype);
	/* the program's buffer and type, unpacked into at completion */
	r->unpack = 1;
	r->ubuf = buf;
	r->ucount = count;
	r->utype = datatype;
	bcs_dt_hold(datatype);
	if (r->done) {
		bytes = bcs_status_bytes(&r->st);
		bcs_dt_unpack(datatype, count, r->tmp, bytes, buf);
	}
	if (bcs_dt_size(datatype) * (size_t)count <
	    bcs_status_bytes(&r->st) && r->done)
		r->err = MPI_ERR_TRUNCATE;
	*request = *message;
	*message = MPI_MESSAGE_NULL;
	return MPI_SUCCESS;
}

#pragma weak MPI_Mrecv = PMPI_Mrecv
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype,
	       MPI_Message *message, MPI_Status *status)
{
	MPI_Request r;
	int rc;

	if ((rc = PMPI_Imrecv(buf, count, datatype, message, &r)))
		return rc;
	return PMPI_Wait(&r, status);
}
