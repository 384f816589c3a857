/*
 * p2p.c — point-to-point: each call posts a descriptor and, if it
 * blocks, waits for its completion (a blocking call costs about a slice
 * and a half: the next slice boundary matches, the data moves in it).
 * A send of at most BCS_EAGER_MAX bytes travels in its descriptor's
 * slot and completes at once; a larger one is read from the sender's
 * buffer by the engine.  A non-contiguous datatype goes through a
 * packed copy.  Arguments are checked here, against the communicator's
 * error handler; the engine checks its descriptors again (bcs_ring.c).
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

int bcs_isend(const void *buf, int count, MPI_Datatype dt, int dest_world,
	      int tag, uint64_t ctx, struct bcs_comm *c, int sync,
	      MPI_Request *req)
{
	size_t bytes = (size_t)count * bcs_dt_size(dt);
	struct bcs_desc d = { .kind = BCS_D_SEND, .ctx = ctx,
			      .peer = dest_world, .tag = tag, .bytes = bytes };
	const void *src = buf;
	void *tmp = NULL;
	struct bcs_req *r;

	if (bytes && !bcs_dt_contig(dt)) {
		if (!(tmp = malloc(bytes)))
			return MPI_ERR_NO_MEM;
		bcs_dt_pack(dt, count, buf, tmp);
		src = tmp;
	}
	if (!sync && bytes <= BCS_EAGER_MAX) {
		/* the bytes go with the descriptor: done as posted */
		d.flags = BCS_F_EAGER;
		if (bcs_rt_post(&d, src)) {
			free(tmp);
			bcs_fatal(NULL, "%s", bcs_rt_failed());
		}
		free(tmp);
		if (!(r = bcs_req_new(R_DONE, c)))
			return MPI_ERR_INTERN;
		r->done = 1;
		*req = bcs_req_handle(r);
		return MPI_SUCCESS;
	}
	if (!(r = bcs_req_new(R_SEND, c))) {
		free(tmp);
		return MPI_ERR_INTERN;
	}
	r->tmp = tmp; /* kept until the engine has read it */
	d.flags = sync ? BCS_F_SYNC : 0;
	d.req = bcs_req_id(r);
	d.addr = (uint64_t)(uintptr_t)src;
	if (sync && bytes <= BCS_EAGER_MAX)
		d.flags |= BCS_F_EAGER;
	if (bcs_rt_post(&d, (d.flags & BCS_F_EAGER) ? src : NULL))
		bcs_fatal(NULL, "%s", bcs_rt_failed());
	*req = bcs_req_handle(r);
	return MPI_SUCCESS;
}

/* Receives posted so far: an Iprobe's answer older than the last is
 * stale (that receive may have taken the message). */
static uint64_t recvs_posted;

int bcs_irecv(void *buf, int count, MPI_Datatype dt, int src_world, int tag,
	      uint64_t ctx, struct bcs_comm *c, MPI_Request *req)
{
	size_t cap = (size_t)count * bcs_dt_size(dt);
	struct bcs_desc d = { .kind = BCS_D_RECV, .ctx = ctx,
			      .peer = src_world, .tag = tag, .bytes = cap,
			      .addr = (uint64_t)(uintptr_t)buf };
	struct bcs_req *r = bcs_req_new(R_RECV, c);

	if (!r)
		return MPI_ERR_INTERN;
	if (cap && !bcs_dt_contig(dt)) {
		if (!(r->tmp = malloc(cap))) {
			bcs_req_free(r);
			return MPI_ERR_NO_MEM;
		}
		r->unpack = 1;
		r->ubuf = buf;
		r->ucount = count;
		r->utype = dt;
		bcs_dt_hold(dt); /* a Type_free meanwhile must not undo it */
		d.addr = (uint64_t)(uintptr_t)r->tmp;
	}
	d.req = bcs_req_id(r);
	if (bcs_rt_post(&d, NULL))
		bcs_fatal(NULL, "%s", bcs_rt_failed());
	recvs_posted++;
	*req = bcs_req_handle(r);
	return MPI_SUCCESS;
}

/* A request already complete: a send to or receive from MPI_PROC_NULL. */
static int proc_null(struct bcs_comm *c, MPI_Request *req)
{
	struct bcs_req *r = bcs_req_new(R_DONE, c);

	if (!r)
		return MPI_ERR_INTERN;
	r->done = 1;
	r->st.MPI_SOURCE = MPI_PROC_NULL;
	r->st.MPI_TAG = MPI_ANY_TAG;
	*req = bcs_req_handle(r);
	return MPI_SUCCESS;
}

int bcs_p2p_check(const char *fn, struct bcs_comm **cp, MPI_Comm comm,
		  const void *buf, int count, MPI_Datatype dt, int peer,
		  int tag, unsigned how)
{
	struct bcs_comm *c = bcs_comm_get(comm);
	int recv = !!(how & BCS_P2P_RECV);

	*cp = c;
	if (!c)
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (count < 0)
		return bcs_error(c, fn, MPI_ERR_COUNT, "count %d", count);
	if (!((how & BCS_P2P_HELD) ? bcs_dt_held_ok(dt) : bcs_dt_ok(dt)))
		return bcs_error(c, fn, MPI_ERR_TYPE, "not a committed "
				 "datatype (%#x)", (unsigned)dt);
	/* MPI_BOTTOM (NULL) is a buffer for a type of absolute addresses,
	 * not for data at the buffer's own address */
	if (count && !buf && bcs_dt_size(dt) && bcs_dt_contig(dt))
		return bcs_error(c, fn, MPI_ERR_BUFFER, "buffer is NULL for "
				 "%d elements", count);
	if (recv && bcs_dt_overlaps(dt, count))
		return bcs_error(c, fn, MPI_ERR_TYPE, "a receive into %d "
				 "elements of a datatype whose entries "
				 "overlap", count);
	if (peer != MPI_PROC_NULL && !(recv && peer == MPI_ANY_SOURCE) &&
	    (peer < 0 || peer >= bcs_peer_size(c)))
		return bcs_error(c, fn, MPI_ERR_RANK, "rank %d in a %s of %d",
				 peer, c->inter ? "remote group" :
				 "communicator", bcs_peer_size(c));
	if (!(recv && tag == MPI_ANY_TAG) && (tag < 0 || tag > BCS_TAG_UB))
		return bcs_error(c, fn, MPI_ERR_TAG, "tag %d (0 to %d%s)",
				 tag, BCS_TAG_UB,
				 recv ? ", or MPI_ANY_TAG" : "");
	return MPI_SUCCESS;
}

static int world_of(const struct bcs_comm *c, int rank)
{
	return rank == MPI_ANY_SOURCE ? BCS_ANY : bcs_peer_world(c)[rank];
}

int bcs_p2p_send(const char *fn, const void *buf, int count,
		 MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		 enum bcs_send_mode mode, unsigned how, MPI_Request *req)
{
	struct bcs_comm *c;
	int rc;

	if ((rc = bcs_p2p_check(fn, &c, comm, buf, count, dt, dest, tag,
				how & ~BCS_P2P_RECV)))
		return rc;
	if (!req)
		return bcs_error(c, fn, MPI_ERR_REQUEST, "request is NULL");
	if (dest == MPI_PROC_NULL)
		return proc_null(c, req);
	if (mode == BCS_M_BUFFERED)
		return bcs_bsend(fn, c, buf, count, dt, world_of(c, dest), tag,
				 req);
	/* ready mode promises the receive is posted; a standard send is a
	 * valid ready send (MPI-3.1 §3.4): BCS-MPI never depends on it */
	rc = bcs_isend(buf, count, dt, world_of(c, dest), tag, c->ctx, c,
		       mode == BCS_M_SYNC, req);
	return rc ? bcs_error(c, fn, rc, "out of requests or memory") : 0;
}

int bcs_p2p_recv(const char *fn, void *buf, int count, MPI_Datatype dt,
		 int source, int tag, MPI_Comm comm, unsigned how,
		 MPI_Request *req)
{
	struct bcs_comm *c;
	int rc;

	if ((rc = bcs_p2p_check(fn, &c, comm, buf, count, dt, source, tag,
				how | BCS_P2P_RECV)))
		return rc;
	if (!req)
		return bcs_error(c, fn, MPI_ERR_REQUEST, "request is NULL");
	if (source == MPI_PROC_NULL)
		return proc_null(c, req);
	rc = bcs_irecv(buf, count, dt, world_of(c, source),
		       tag == MPI_ANY_TAG ? BCS_ANY : tag, c->ctx, c, req);
	return rc ? bcs_error(c, fn, rc, "out of requests or memory") : 0;
}

/* The non-blocking sends differ only in their mode. */
#define ISEND(name, mode)                                                   \
	int P##name(const void *buf, int count, MPI_Datatype datatype,      \
		    int dest, int tag, MPI_Comm comm, MPI_Request *request) \
	{                                                                   \
		BCS_NEED_INIT(#name);                                       \
		return bcs_p2p_send(#name, buf, count, datatype, dest, tag, \
				    comm, mode, 0, request);                \
	}

#pragma weak MPI_Isend = PMPI_Isend
ISEND(MPI_Isend, BCS_M_STANDARD)
#pragma weak MPI_Issend = PMPI_Issend
ISEND(MPI_Issend, BCS_M_SYNC)
#pragma weak MPI_Irsend = PMPI_Irsend
ISEND(MPI_Irsend, BCS_M_READY)
#pragma weak MPI_Ibsend = PMPI_Ibsend
ISEND(MPI_Ibsend, BCS_M_BUFFERED)

#pragma weak MPI_Irecv = PMPI_Irecv
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source,
	       int tag, MPI_Comm comm, MPI_Request *request)
{
	BCS_NEED_INIT("MPI_Irecv");
	return bcs_p2p_recv("MPI_Irecv", buf, count, datatype, source, tag,
			    comm, 0, request);
}

/* A blocking send: started, then waited for. */
static int send_wait(const char *fn, const void *buf, int count,
		     MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		     enum bcs_send_mode mode)
{
	MPI_Request r;
	int rc;

	BCS_NEED_INIT(fn);
	if ((rc = bcs_p2p_send(fn, buf, count, dt, dest, tag, comm, mode, 0,
			       &r)))
		return rc;
	return PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

#pragma weak MPI_Send = PMPI_Send
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
	      int tag, MPI_Comm comm)
{
	return send_wait("MPI_Send", buf, count, datatype, dest, tag, comm,
			 BCS_M_STANDARD);
}

#pragma weak MPI_Ssend = PMPI_Ssend
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest,
	       int tag, MPI_Comm comm)
{
	return send_wait("MPI_Ssend", buf, count, datatype, dest, tag, comm,
			 BCS_M_SYNC);
}

#pragma weak MPI_Recv = PMPI_Recv
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source,
	      int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Request r;
	int rc;

	BCS_NEED_INIT("MPI_Recv");
	if ((rc = bcs_p2p_recv("MPI_Recv", buf, count, datatype, source, tag,
			       comm, 0, &r)))
		return rc;
	return PMPI_Wait(&r, status);
}

#pragma weak MPI_Sendrecv = PMPI_Sendrecv
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  int dest, int sendtag, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, int source, int recvtag,
		  MPI_Comm comm, MPI_Status *status)
{
	struct bcs_comm *c;
	MPI_Request r[2];
	MPI_Status st[2];
	int rc;

	BCS_NEED_INIT("MPI_Sendrecv");
	/* the send's arguments first: a receive once posted stays */
	if ((rc = bcs_p2p_check("MPI_Sendrecv", &c, comm, sendbuf, sendcount,
			sendtype, dest, sendtag, 0)))
		return rc;
	if ((rc = bcs_p2p_recv("MPI_Sendrecv", recvbuf, recvcount, recvtype,
			       source, recvtag, comm, 0, &r[0])))
		return rc;
	if ((rc = bcs_p2p_send("MPI_Sendrecv", sendbuf, sendcount, sendtype,
			       dest, sendtag, comm, BCS_M_STANDARD, 0,
			       &r[1]))) {
		/* out of requests: the receive must not land after the
		 * call returned */
		PMPI_Cancel(&r[0]);
		PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
		return rc;
	}
	rc = PMPI_Waitall(2, r, st);
	if (status != MPI_STATUS_IGNORE && status)
		*status = st[0];
	return rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR ? st[0].MPI_ERROR :
					 st[1].MPI_ERROR : rc;
}

#pragma weak MPI_Rsend = PMPI_Rsend
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest,
	       int tag, MPI_Comm comm)
{
	return send_wait("MPI_Rsend", buf, count, datatype, dest, tag, comm,
			 BCS_M_READY);
}

#pragma weak MPI_Bsend = PMPI_Bsend
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest,
	       int tag, MPI_Comm comm)
{
	return send_wait("MPI_Bsend", buf, count, datatype, dest, tag, comm,
			 BCS_M_BUFFERED);
}

/* The message goes out of a copy of buf's span, the reply lands in buf. */
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype,
			  int dest, int sendtag, int source, int recvtag,
			  MPI_Comm comm, MPI_Status *status)
{
	struct bcs_comm *c;
	void *tmp, *out;
	int rc;

	BCS_NEED_INIT("MPI_Sendrecv_replace");
	if ((rc = bcs_p2p_check("MPI_Sendrecv_replace", &c, comm, buf, count,
			datatype, dest, sendtag, 0)))
		return rc;
	if (!(out = bcs_dt_span_dup(buf, count, datatype, &tmp)))
		return bcs_error(c, "MPI_Sendrecv_replace", MPI_ERR_NO_MEM,
				 "out of memory");
	rc = PMPI_Sendrecv(out, count, datatype, dest, sendtag, buf, count,
			   datatype, source, recvtag, comm, status);
	free(tmp);
	return rc;
}

/* ---- probes ----------------------------------------------------------------- */

/* An Iprobe's question to the engine, outstanding until answered. */
struct asked {
	struct asked *next;
	uint64_t ctx;           /* its communicator's (freed or not) */
	int source, tag;
	uint64_t posted_at;     /* recvs_posted when asked */
	MPI_Request req;
};
static struct asked *asked;

static int probe_post(struct bcs_comm *c, int source, int tag,
		      MPI_Request *req)
{
	struct bcs_req *r = bcs_req_new(R_PROBE, c);
	struct bcs_desc d = { .kind = BCS_D_PROBE, .ctx = c->ctx,
			      .peer = world_of(c, source),
			      .tag = tag == MPI_ANY_TAG ? BCS_ANY : tag };

	if (!r)
		return MPI_ERR_INTERN;
	d.req = bcs_req_id(r);
	if (bcs_rt_post(&d, NULL))
		bcs_fatal(NULL, "%s", bcs_rt_failed());
	*req = bcs_req_handle(r);
	return MPI_SUCCESS;
}

#pragma weak MPI_Probe = PMPI_Probe
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	struct bcs_comm *c;
	MPI_Request r;
	int rc;

	BCS_NEED_INIT("MPI_Probe");
	if ((rc = bcs_p2p_check("MPI_Probe", &c, comm, NULL, 0, MPI_BYTE,
				source, tag, BCS_P2P_RECV)))
		return rc;
	if (source == MPI_PROC_NULL) {
		if (status && status != MPI_STATUS_IGNORE) {
			memset(status, 0, sizeof(*status));
			status->MPI_SOURCE = MPI_PROC_NULL;
			status->MPI_TAG = MPI_ANY_TAG;
		}
		return MPI_SUCCESS;
	}
	if ((rc = probe_post(c, source, tag, &r)))
		return bcs_error(c, "MPI_Probe", rc, "out of requests");
	return PMPI_Wait(&r, status);
}

#pragma weak MPI_Iprobe = PMPI_Iprobe
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
		MPI_Status *status)
{
	struct bcs_comm *c;
	struct asked *a, **pp;
	int rc;

	BCS_NEED_INIT("MPI_Iprobe");
	if ((rc = bcs_p2p_check("MPI_Iprobe", &c, comm, NULL, 0, MPI_BYTE,
				source, tag, BCS_P2P_RECV)))
		return rc;
	if (!flag)
		return bcs_error(c, "MPI_Iprobe", MPI_ERR_ARG, "flag is NULL");
	if (source == MPI_PROC_NULL) {
		*flag = 1;
		return PMPI_Probe(source, tag, comm, status);
	}
	/* the engine answers at a slice boundary: a question is asked
	 * once and stays until answered; until then the answer is no */
	bcs_rt_poll();
	for (pp = &asked; (a = *pp); pp = &a->next)
		if (a->ctx == c->ctx && a->source == source && a->tag == tag)
			break;
	if (a && bcs_req_get(a->req)->done &&
	    a->posted_at != recvs_posted) {
		/* answered before a receive was posted, which may have taken
		 * that very message: ask again */
		bcs_req_free(bcs_req_get(a->req));
		*pp = a->next;
		free(a);
		a = NULL;
	}
	if (!a) {
		if (!(a = calloc(1, sizeof(*a))))
			return bcs_error(c, "MPI_Iprobe", MPI_ERR_NO_MEM,
					 "out of memory");
		a->ctx = c->ctx;
		a->source = source;
		a->tag = tag;
		a->posted_at = recvs_posted;
		if ((rc = probe_post(c, source, tag, &a->req))) {
			free(a);
			return bcs_error(c, "MPI_Iprobe", rc,
					 "out of requests");
		}
		a->next = asked;
		asked = a;
		*flag = 0;
		bcs_rt_polled();
		return MPI_SUCCESS;
	}
	if (!bcs_req_get(a->req)->done) {
		*flag = 0;
		bcs_rt_polled();
		return MPI_SUCCESS;
	}
	*pp = a->next;
	rc = bcs_req_finish(&a->req, status);
	free(a);
	*flag = 1;
	return rc ? bcs_error(c, "MPI_Iprobe", rc, "the probe failed") : 0;
}
