/*
 * request.c — requests and their completion: the engine's completions
 * (bcs_req_done) mark them done as they arrive; the program sees them
 * complete in Wait and Test, where a receive's status is filled and the
 * clock advanced past its send (rt.h: the moment the program observes
 * it, not the moment it arrived).  Key invariant: a request's handle
 * carries a generation, so a completion for a freed request (its id
 * reused) is dropped, never applied to another.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

#define REQS_MAX (1u << 16)
#define GEN_SHIFT 16 /* engine id: generation << 16 | index */

static struct bcs_req reqs[REQS_MAX];
static uint32_t gens[REQS_MAX];
static uint32_t next_free;

struct bcs_req *bcs_req_new(enum bcs_req_kind kind, struct bcs_comm *comm)
{
	for (uint32_t n = 0; n < REQS_MAX; n++) {
		uint32_t i = (next_free + n) % REQS_MAX;

		if (i == 0 || reqs[i].used)
			continue; /* index 0: no handle is MPI_REQUEST_NULL */
		memset(&reqs[i], 0, sizeof(reqs[i]));
		reqs[i].used = 1;
		reqs[i].kind = kind;
		reqs[i].comm = comm;
		bcs_comm_ref(comm);
		reqs[i].st.MPI_SOURCE = MPI_ANY_SOURCE;
		reqs[i].st.MPI_TAG = MPI_ANY_TAG;
		gens[i]++;
		next_free = i + 1;
		return &reqs[i];
	}
	return NULL;
}

/* The engine's id of r: its generation and index. */
uint64_t bcs_req_id(const struct bcs_req *r)
{
	uint32_t i = (uint32_t)(r - reqs);

	return (uint64_t)gens[i] << GEN_SHIFT | i;
}

MPI_Request bcs_req_handle(const struct bcs_req *r)
{
	return H_MAKE(H_DIRECT, O_REQUEST, (unsigned)(r - reqs));
}

struct bcs_req *bcs_req_get(MPI_Request h)
{
	unsigned i = H_INDEX(h);

	if (H_KIND(h) != H_DIRECT || H_OBJ(h) != O_REQUEST || !i ||
	    i >= REQS_MAX || !reqs[i].used)
		return NULL;
	return &reqs[i];
}

/* MPICH's layout: the low 32 bits in count_lo, the rest above the
 * cancelled bit of count_hi_and_cancelled. */
void bcs_status_set_bytes(MPI_Status *st, uint64_t bytes)
{
	st->count_lo = (int)(uint32_t)bytes;
	st->count_hi_and_cancelled = (int)((bytes >> 32) << 1) |
				     (st->count_hi_and_cancelled & 1);
}

uint64_t bcs_status_bytes(const MPI_Status *st)
{
	return (uint64_t)(uint32_t)st->count_lo |
	       (uint64_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32;
}

void bcs_req_free(struct bcs_req *r)
{
	struct bcs_comm *c = r->comm;

	if (r->unpack)
		bcs_dt_release(r->utype); /* held for the unpack */
	if (r->kind == R_PERSIST)
		bcs_dt_release(r->pers.dt);
	if (r->kind == R_NBC)
		bcs_nbc_free(r->nbc); /* finished: its stack is idle */
	if (r->kind == R_GREQ)
		bcs_greq_free(r);
	free(r->tmp);
	memset(r, 0, sizeof(*r));
	bcs_comm_unref(c);
}

static int status_class(int32_t s)
{
	switch (s) {
	case BCS_OK:
		return MPI_SUCCESS;
	case BCS_E_TRUNCATE:
		return MPI_ERR_TRUNCATE;
	case BCS_E_COLL:
		return MPI_ERR_OTHER;
	case BCS_E_ARG:
		return MPI_ERR_ARG;
	case BCS_E_CANCELLED:
		return MPI_SUCCESS; /* the status says cancelled */
	default:
		return MPI_ERR_INTERN;
	}
}

void bcs_req_done(const struct bcs_done *d)
{
	uint32_t i = (uint32_t)(d->req & ((1u << GEN_SHIFT) - 1));
	struct bcs_req *r;

	if (i >= REQS_MAX || !reqs[i].used ||
	    gens[i] != (uint32_t)(d->req >> GEN_SHIFT))
		return; /* freed meanwhile (MPI_Request_free) */
	r = &reqs[i];
	r->done = 1;
	if (r->kind == R_RECV || r->kind == R_PROBE) {
		struct bcs_comm *c = r->comm;
		int src = d->source;

		/* the sender's communicator rank (of the remote group, on
		 * an intercommunicator) */
		for (int k = 0; c && k < bcs_peer_size(c); k++)
			if (bcs_peer_world(c)[k] == d->source) {
				src = k;
				break;
			}
		if (d->status == BCS_E_CANCELLED) {
			/* nothing came: source and tag stay ANY */
			r->st.count_hi_and_cancelled |= 1;
		} else {
			r->st.MPI_SOURCE = src;
			r->st.MPI_TAG = d->tag;
			bcs_status_set_bytes(&r->st, d->bytes);
			r->send_clock = d->clock;
			r->src_world = d->source;
		}
	} else if (r->kind == R_COLL) {
		r->send_clock = d->clock;
	}
	r->err = status_class(d->status);
	if (r->kind == R_RECV && r->unpack && d->status == BCS_OK) {
		size_t got = d->bytes;

		bcs_dt_unpack(r->utype, r->ucount, r->tmp, got, r->ubuf);
		/* a matched probe's message may be longer than the
		 * receive that came for it (mprobe.c) */
		if (got > (size_t)r->ucount * bcs_dt_size(r->utype))
			r->err = MPI_ERR_TRUNCATE;
	}
	if (r->on_done)
		r->on_done(r);
	if (r->persistent_free) {
		if (r->kind == R_RECV || r->kind == R_COLL)
			bcs_rt_clock_recv(r->send_clock);
		bcs_req_free(r);
	}
}

/* Whether r is done (a non-blocking collective moved on first). */
static int is_done(struct bcs_req *r)
{
	return r->kind == R_NBC ? bcs_nbc_done(r) : r->done;
}

struct bcs_req *bcs_req_live(MPI_Request h)
{
	struct bcs_req *r = bcs_req_get(h);

	if (r && r->kind == R_PERSIST)
		return bcs_req_get(r->active);
	return r;
}

static void empty_status(MPI_Status *st)
{
	if (st && st != MPI_STATUS_IGNORE) {
		memset(st, 0, sizeof(*st));
		st->MPI_SOURCE = MPI_ANY_SOURCE;
		st->MPI_TAG = MPI_ANY_TAG;
	}
}

int bcs_req_finish(MPI_Request *h, MPI_Status *st)
{
	struct bcs_req *r = bcs_req_get(*h);
	int err;

	if (!r) {
		*h = MPI_REQUEST_NULL;
		return MPI_SUCCESS;
	}
	if (r->kind == R_PERSIST) {
		/* its operation completes; the request stays, inactive */
		if (r->active != MPI_REQUEST_NULL)
			return bcs_req_finish(&r->active, st);
		empty_status(st);
		return MPI_SUCCESS;
	}
	/* a probe's answer counts as a receive: the engine's bounds assume
	 * so (bcs_match.h) */
	if (r->kind == R_RECV || r->kind == R_COLL || r->kind == R_PROBE)
		bcs_rt_clock_recv(r->send_clock);
	if (r->kind == R_GREQ && !r->err)
		r->err = bcs_greq_status(r); /* the program says its status */
	err = r->err;
	r->st.MPI_ERROR = err;
	if (st != MPI_STATUS_IGNORE && st)
		*st = r->st;
	bcs_req_free(r);
	*h = MPI_REQUEST_NULL;
	return err;
}

static int all_done(void *ctx)
{
	struct bcs_req **r = ((struct bcs_req ***)ctx)[0];
	int n = *((int **)ctx)[1];

	for (int i = 0; i < n; i++)
		if (r[i] && !is_done(r[i]))
			return 0;
	return 1;
}

int bcs_req_wait_all(struct bcs_req **r, int n)
{
	void *ctx[2] = { r, &n };

	if (bcs_wait(all_done, ctx))
		bcs_fatal(NULL, "%s", bcs_rt_failed() ? bcs_rt_failed() :
			  "the job failed");
	return MPI_SUCCESS;
}

/* ---- Wait and Test ----------------------------------------------------------- */

struct any {
	const MPI_Request *h;
	int n;
};

static int any_done(void *ctx)
{
	struct any *a = ctx;
	int live = 0;

	for (int i = 0; i < a->n; i++) {
		struct bcs_req *r = bcs_req_live(a->h[i]);

		if (r && is_done(r))
			return 1;
		live += r != NULL;
	}
	return !live; /* nothing to wait for */
}

static int every_done(void *ctx)
{
	struct any *a = ctx;

	for (int i = 0; i < a->n; i++) {
		struct bcs_req *r = bcs_req_live(a->h[i]);

		if (r && !is_done(r))
			return 0;
	}
	return 1;
}

static void wait_for(int (*ready)(void *), void *ctx)
{
	if (bcs_wait(ready, ctx))
		bcs_fatal(NULL, "%s", bcs_rt_failed() ? bcs_rt_failed() :
			  "the job failed");
}

#pragma weak MPI_Wait = PMPI_Wait
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct any a = { request, 1 };
	struct bcs_comm *c;
	struct bcs_req *r;
	int err;

	BCS_NEED_INIT("MPI_Wait");
	if (!request)
		return bcs_error(NULL, "MPI_Wait", MPI_ERR_REQUEST,
				 "request is NULL");
	if (*request == MPI_REQUEST_NULL) {
		empty_status(status);
		return MPI_SUCCESS;
	}
	if (!(r = bcs_req_get(*request)))
		return bcs_error(NULL, "MPI_Wait", MPI_ERR_REQUEST,
				 "not a request (%#x)", (unsigned)*request);
	c = r->comm; /* r is freed by finishing it */
	wait_for(every_done, &a);
	err = bcs_req_finish(request, status);
	return err ? bcs_error(c, "MPI_Wait", err, "the request failed")
		   : MPI_SUCCESS;
}

#pragma weak MPI_Test = PMPI_Test
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct bcs_req *r;
	int err;

	BCS_NEED_INIT("MPI_Test");
	if (!request || !flag)
		return bcs_error(NULL, "MPI_Test", MPI_ERR_ARG,
				 "request or flag is NULL");
	if (*request == MPI_REQUEST_NULL) {
		*flag = 1;
		empty_status(status);
		return MPI_SUCCESS;
	}
	if (!(r = bcs_req_get(*request)))
		return bcs_error(NULL, "MPI_Test", MPI_ERR_REQUEST,
				 "not a request (%#x)", (unsigned)*request);
	if (!bcs_req_live(*request)) { /* an inactive persistent one */
		*flag = 1;
		empty_status(status);
		return MPI_SUCCESS;
	}
	bcs_rt_poll();
	if (!(*flag = is_done(bcs_req_live(*request)))) {
		if (bcs_rt_failed())
			bcs_fatal("MPI_Test", "%s", bcs_rt_failed());
		bcs_rt_polled();
		return MPI_SUCCESS;
	}
	{
		struct bcs_comm *c = r->comm;

		err = bcs_req_finish(request, status);
		return err ? bcs_error(c, "MPI_Test", err, "the request "
				       "failed") : MPI_SUCCESS;
	}
}

#pragma weak MPI_Waitall = PMPI_Waitall
int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	struct any a = { requests, count };
	int err = MPI_SUCCESS;

	BCS_NEED_INIT("MPI_Waitall");
	if (count < 0 || (count && !requests))
		return bcs_error(NULL, "MPI_Waitall", MPI_ERR_ARG,
				 "count %d or requests NULL", count);
	for (int i = 0; i < count; i++)
		if (requests[i] != MPI_REQUEST_NULL &&
		    !bcs_req_get(requests[i]))
			return bcs_error(NULL, "MPI_Waitall", MPI_ERR_REQUEST,
					 "requests[%d] is not a request", i);
	wait_for(every_done, &a);
	for (int i = 0; i < count; i++) {
		MPI_Status *st = statuses == MPI_STATUSES_IGNORE ?
				 MPI_STATUS_IGNORE : &statuses[i];
		int e;

		if (requests[i] == MPI_REQUEST_NULL) {
			empty_status(st);
			continue;
		}
		if ((e = bcs_req_finish(&requests[i], st)))
			err = MPI_ERR_IN_STATUS;
	}
	return err ? bcs_error(NULL, "MPI_Waitall", err, "a request failed "
			       "(see the statuses)") : MPI_SUCCESS;
}

#pragma weak MPI_Testall = PMPI_Testall
int PMPI_Testall(int count, MPI_Request requests[], int *flag,
		 MPI_Status statuses[])
{
	struct any a = { requests, count };

	BCS_NEED_INIT("MPI_Testall");
	if (count < 0 || (count && !requests) || !flag)
		return bcs_error(NULL, "MPI_Testall", MPI_ERR_ARG,
				 "count %d, requests or flag NULL", count);
	bcs_rt_poll();
	if (!(*flag = every_done(&a))) {
		if (bcs_rt_failed())
			bcs_fatal("MPI_Testall", "%s", bcs_rt_failed());
		bcs_rt_polled();
		return MPI_SUCCESS;
	}
	return PMPI_Waitall(count, requests, statuses);
}

/* The first done of requests (a fixed scan: index order), or -1. */
static int first_done(int count, MPI_Request requests[])
{
	for (int i = 0; i < count; i++) {
		struct bcs_req *r = bcs_req_live(requests[i]);

		if (r && is_done(r))
			return i;
	}
	return -1;
}

#pragma weak MPI_Waitany = PMPI_Waitany
int PMPI_Waitany(int count, MPI_Request requests[], int *index,
		 MPI_Status *status)
{
	struct any a = { requests, count };
	int i, err;

	BCS_NEED_INIT("MPI_Waitany");
	if (count < 0 || (count && !requests) || !index)
		return bcs_error(NULL, "MPI_Waitany", MPI_ERR_ARG,
				 "count %d, requests or index NULL", count);
	wait_for(any_done, &a);
	if ((i = first_done(count, requests)) < 0) {
		*index = MPI_UNDEFINED;
		empty_status(status);
		return MPI_SUCCESS;
	}
	*index = i;
	err = bcs_req_finish(&requests[i], status);
	return err ? bcs_error(NULL, "MPI_Waitany", err, "the request failed")
		   : MPI_SUCCESS;
}

#pragma weak MPI_Testany = PMPI_Testany
int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
		 MPI_Status *status)
{
	struct any a = { requests, count };
	int i, err, live = 0;

	BCS_NEED_INIT("MPI_Testany");
	if (count < 0 || (count && !requests) || !index || !flag)
		return bcs_error(NULL, "MPI_Testany", MPI_ERR_ARG,
				 "count %d, requests, index or flag NULL",
				 count);
	(void)a;
	bcs_rt_poll();
	for (int k = 0; k < count; k++)
		live += bcs_req_live(requests[k]) != NULL;
	if ((i = first_done(count, requests)) < 0) {
		*flag = !live;
		*index = MPI_UNDEFINED;
		if (!live)
			empty_status(status);
		else
			bcs_rt_polled();
		return MPI_SUCCESS;
	}
	*flag = 1;
	*index = i;
	err = bcs_req_finish(&requests[i], status);
	return err ? bcs_error(NULL, "MPI_Testany", err, "the request failed")
		   : MPI_SUCCESS;
}

static int some(const char *fn, int count, MPI_Request requests[],
		int *outcount, int indices[], MPI_Status statuses[])
{
	int n = 0, live = 0, err = MPI_SUCCESS;

	for (int i = 0; i < count; i++) {
		struct bcs_req *r = bcs_req_live(requests[i]);
		MPI_Status *st;

		live += r != NULL;
		if (!r || !is_done(r))
			continue;
		st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE :
						       &statuses[n];
		indices[n++] = i;
		if (bcs_req_finish(&requests[i], st))
			err = MPI_ERR_IN_STATUS;
	}
	*outcount = live ? n : MPI_UNDEFINED;
	return err ? bcs_error(NULL, fn, err, "a request failed (see the "
			       "statuses)") : MPI_SUCCESS;
}

#pragma weak MPI_Waitsome = PMPI_Waitsome
int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount,
		  int indices[], MPI_Status statuses[])
{
	struct any a = { requests, incount };

	BCS_NEED_INIT("MPI_Waitsome");
	if (incount < 0 || (incount && (!requests || !indices)) || !outcount)
		return bcs_error(NULL, "MPI_Waitsome", MPI_ERR_ARG,
				 "incount %d, requests, indices or outcount "
				 "NULL", incount);
	wait_for(any_done, &a);
	return some("MPI_Waitsome", incount, requests, outcount, indices,
		    statuses);
}

#pragma weak MPI_Testsome = PMPI_Testsome
int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount,
		  int indices[], MPI_Status statuses[])
{
	BCS_NEED_INIT("MPI_Testsome");
	if (incount < 0 || (incount && (!requests || !indices)) || !outcount)
		return bcs_error(NULL, "MPI_Testsome", MPI_ERR_ARG,
				 "incount %d, requests, indices or outcount "
				 "NULL", incount);
	bcs_rt_poll();
	return some("MPI_Testsome", incount, requests, outcount, indices,
		    statuses);
}

#pragma weak MPI_Request_free = PMPI_Request_free
int PMPI_Request_free(MPI_Request *request)
{
	struct bcs_req *r;

	BCS_NEED_INIT("MPI_Request_free");
	if (!request || !(r = bcs_req_get(*request)))
		return bcs_error(NULL, "MPI_Request_free", MPI_ERR_REQUEST,
				 "not a request");
	if (r->kind == R_NBC && !is_done(r))
		return bcs_error(r->comm, "MPI_Request_free", MPI_ERR_REQUEST,
				 "a non-blocking collective under way: "
				 "complete it with MPI_Wait or MPI_Test");
	if (r->kind == R_PERSIST) {
		/* its operation under way goes on alone, freed as below */
		if (r->active != MPI_REQUEST_NULL)
			PMPI_Request_free(&r->active);
		bcs_req_free(r);
	} else if (r->done) {
		if (r->kind == R_RECV || r->kind == R_COLL)
			bcs_rt_clock_recv(r->send_clock);
		bcs_req_free(r);
	} else {
		r->persistent_free = 1; /* freed when its completion comes */
	}
	*request = MPI_REQUEST_NULL;
	return MPI_SUCCESS;
}

/* A receive not matched yet is taken back at the next slice boundary
 * (BCS_D_CANCEL) and completes cancelled; one matched meanwhile
 * completes as usual.  A send is never cancelled: it completes and its
 * status says so (MPI-3.1 §3.8.4 allows either). */
#pragma weak MPI_Cancel = PMPI_Cancel
int PMPI_Cancel(MPI_Request *request)
{
	struct bcs_req *r, *a;

	BCS_NEED_INIT("MPI_Cancel");
	if (!request || !(r = bcs_req_get(*request)))
		return bcs_error(NULL, "MPI_Cancel", MPI_ERR_REQUEST,
				 "not a request (%#x)",
				 request ? (unsigned)*request : 0u);
	if (!(a = bcs_req_live(*request)))
		return bcs_error(r->comm, "MPI_Cancel", MPI_ERR_REQUEST,
				 "an inactive persistent request");
	if (a->kind == R_GREQ) {
		int rc = bcs_greq_cancel(a);

		return rc ? bcs_error(NULL, "MPI_Cancel", rc, "the cancel "
				      "function failed (%d)", rc) :
			    MPI_SUCCESS;
	}
	if (a->kind == R_COLL || a->kind == R_NBC)
		return bcs_error(r->comm, "MPI_Cancel", MPI_ERR_REQUEST,
				 "a collective's request cannot be "
				 "cancelled");
	if (a->kind == R_RECV && !a->done && !a->cancel_asked) {
		struct bcs_desc d = { .kind = BCS_D_CANCEL,
				      .req = bcs_req_id(a) };

		if (bcs_rt_post(&d, NULL))
			bcs_fatal("MPI_Cancel", "%s", bcs_rt_failed());
		a->cancel_asked = 1;
	}
	return MPI_SUCCESS;
}

#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	if (!status || !flag)
		return bcs_error(NULL, "MPI_Test_cancelled", MPI_ERR_ARG,
				 "status or flag is NULL");
	*flag = status->count_hi_and_cancelled & 1;
	return MPI_SUCCESS;
}

#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	if (!status)
		return bcs_error(NULL, "MPI_Status_set_cancelled",
				 MPI_ERR_ARG, "status is NULL");
	status->count_hi_and_cancelled =
		(status->count_hi_and_cancelled & ~1) | !!flag;
	return MPI_SUCCESS;
}

/* Test without completing: the request (and a receive's clock) stay
 * for the Wait or Test that completes it. */
#pragma weak MPI_Request_get_status = PMPI_Request_get_status
int PMPI_Request_get_status(MPI_Request request, int *flag,
			    MPI_Status *status)
{
	struct bcs_req *r;

	BCS_NEED_INIT("MPI_Request_get_status");
	if (!flag)
		return bcs_error(NULL, "MPI_Request_get_status", MPI_ERR_ARG,
				 "flag is NULL");
	if (request != MPI_REQUEST_NULL && !bcs_req_get(request))
		return bcs_error(NULL, "MPI_Request_get_status",
				 MPI_ERR_REQUEST, "not a request (%#x)",
				 (unsigned)request);
	if (!(r = bcs_req_live(request))) { /* null, or inactive */
		*flag = 1;
		empty_status(status);
		return MPI_SUCCESS;
	}
	bcs_rt_poll();
	if (!(*flag = is_done(r))) {
		if (bcs_rt_failed())
			bcs_fatal("MPI_Request_get_status", "%s",
				  bcs_rt_failed());
		bcs_rt_polled();
		return MPI_SUCCESS;
	}
	if (status && status != MPI_STATUS_IGNORE)
		*status = r->st;
	return MPI_SUCCESS;
}

/* The basic elements a status's bytes hold as dt's, whatever their
 * types: MPI_UNDEFINED when they are not whole elements or do not fit. */
static int elements(const char *fn, const MPI_Status *status,
		    MPI_Datatype dt, MPI_Count *n)
{
	uint64_t bytes, back;
	int64_t e;

	if (!status || !n)
		return bcs_error(NULL, fn, MPI_ERR_ARG,
				 "status or count is NULL");
	if (!bcs_dt_ok(dt))
		return bcs_error(NULL, fn, MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)dt);
	bytes = bcs_status_bytes(status);
	e = bcs_dt_elements(dt, bytes);
	/* bytes that end inside a basic element hold no whole count */
	*n = e < 0 || bcs_dt_elements_bytes(dt, e, &back) || back != bytes ?
	     MPI_UNDEFINED : (MPI_Count)e;
	return MPI_SUCCESS;
}

#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype,
			MPI_Count *count)
{
	return elements("MPI_Get_elements_x", status, datatype, count);
}

#pragma weak MPI_Get_elements = PMPI_Get_elements
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype,
		      int *count)
{
	MPI_Count n = 0;
	int rc = elements("MPI_Get_elements", status, datatype, &n);

	if (!rc && count)
		*count = n > INT32_MAX ? MPI_UNDEFINED : (int)n;
	return rc;
}

/* n basic elements of dt as a status's bytes. */
static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype dt,
			MPI_Count n)
{
	uint64_t bytes;

	if (!status)
		return bcs_error(NULL, fn, MPI_ERR_ARG, "status is NULL");
	if (!bcs_dt_ok(dt))
		return bcs_error(NULL, fn, MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)dt);
	if (n < 0 || bcs_dt_elements_bytes(dt, n, &bytes))
		return bcs_error(NULL, fn, MPI_ERR_COUNT, "count %lld",
				 (long long)n);
	bcs_status_set_bytes(status, bytes);
	return MPI_SUCCESS;
}

#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype,
			     int count)
{
	return set_elements("MPI_Status_set_elements", status, datatype,
			    count);
}

#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype,
			       MPI_Count count)
{
	return set_elements("MPI_Status_set_elements_x", status, datatype,
			    count);
}

#pragma weak MPI_Get_count = PMPI_Get_count
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype,
		   int *count)
{
	size_t sz, bytes;

	if (!status || !count)
		return bcs_error(NULL, "MPI_Get_count", MPI_ERR_ARG,
				 "status or count is NULL");
	if (!bcs_dt_ok(datatype))
		return bcs_error(NULL, "MPI_Get_count", MPI_ERR_TYPE,
				 "not a datatype (%#x)", (unsigned)datatype);
	sz = bcs_dt_size(datatype);
	bytes = bcs_status_bytes(status);
	if (sz == 0)
		*count = 0;
	else if (bytes % sz || bytes / sz > INT32_MAX)
		*count = MPI_UNDEFINED;
	else
		*count = (int)(bytes / sz);
	return MPI_SUCCESS;
}
