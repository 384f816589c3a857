/*
 * coll.c — collectives.  Barrier, broadcast and reductions of a
 * predefined operation on a predefined type are one descriptor each:
 * the engine runs them in its collective microphase once every member
 * has posted (about a slice and a half).  The rest — gathers, scatters,
 * all-to-alls, reductions with a user operation or a derived type — are
 * made of messages in the communicator's collective context (ctx + 1,
 * apart from the program's own), all posted at once and waited for
 * together: the engine moves them in the same slice.  Reductions always
 * combine in rank order, r0 op (r1 op (... op r(n-1))), the engine's
 * order too, so a result is the same bits on every run.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* Tags of the message-made collectives, in their own context. */
enum { T_GATHER = 1, T_SCATTER, T_ALLGATHER, T_ALLTOALL, T_REDUCE,
       T_BCAST };

int bcs_coll_comm_any(const char *fn, MPI_Comm comm, struct bcs_comm **cp)
{
	if (!(*cp = bcs_comm_get(comm)))
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	return MPI_SUCCESS;
}

int bcs_coll_comm_ok(const char *fn, MPI_Comm comm, struct bcs_comm **cp)
{
	int rc;

	if ((rc = bcs_coll_comm_any(fn, comm, cp)))
		return rc;
	if ((*cp)->inter)
		return bcs_error(*cp, fn, MPI_ERR_UNSUPPORTED_OPERATION,
				 "on an intercommunicator: BCS-MPI runs "
				 "Barrier, Bcast, Reduce, Allreduce and the "
				 "gathers, scatters and all-to-alls there");
	return MPI_SUCCESS;
}

int bcs_coll_type_ok(const char *fn, struct bcs_comm *c, int count,
		   MPI_Datatype dt)
{
	if (count < 0)
		return bcs_error(c, fn, MPI_ERR_COUNT, "count %d", count);
	if (!bcs_dt_ok(dt))
		return bcs_error(c, fn, MPI_ERR_TYPE, "not a committed "
				 "datatype (%#x)", (unsigned)dt);
	return MPI_SUCCESS;
}

static int root_ok(const char *fn, struct bcs_comm *c, int root)
{
	if (root < 0 || root >= c->size)
		return bcs_error(c, fn, MPI_ERR_ROOT, "root %d in a "
				 "communicator of %d", root, c->size);
	return MPI_SUCCESS;
}

int bcs_coll_op_ok(const char *fn, struct bcs_comm *c, MPI_Op op)
{
	if (!bcs_op_ok(op) || op == MPI_REPLACE || op == MPI_NO_OP)
		return bcs_error(c, fn, MPI_ERR_OP, "not an operation of "
				 "reductions (%#x)", (unsigned)op);
	return MPI_SUCCESS;
}

/* One engine collective on c, waited for. */
static int engine_coll(const char *fn, struct bcs_comm *c,
		       struct bcs_desc *d)
{
	struct bcs_req *r = bcs_req_new(R_COLL, c);
	MPI_Request h;

	if (!r)
		return bcs_error(c, fn, MPI_ERR_INTERN, "out of requests");
	d->kind = BCS_D_COLL;
	d->ctx = c->ctx;
	d->req = bcs_req_id(r);
	if (bcs_rt_post(d, NULL))
		bcs_fatal(fn, "%s", bcs_rt_failed());
	h = bcs_req_handle(r);
	bcs_req_wait_all(&r, 1);
	if (r->err) {
		int err = r->err;

		bcs_req_finish(&h, MPI_STATUS_IGNORE);
		return bcs_error(c, fn, err, "the members called different "
				 "collectives, or with different roots, "
				 "sizes or operations");
	}
	return bcs_req_finish(&h, MPI_STATUS_IGNORE);
}

/* count of stype at sbuf into rcount of rtype at rbuf, here (a root's
 * own block): through a packed copy unless both are contiguous. */
int bcs_local_copy(const void *sbuf, int scount, MPI_Datatype stype,
		      void *rbuf, int rcount, MPI_Datatype rtype)
{
	size_t sb = (size_t)scount * bcs_dt_size(stype);
	size_t rb = (size_t)rcount * bcs_dt_size(rtype);
	void *tmp;

	if (sb > rb)
		return MPI_ERR_TRUNCATE;
	if (!sb)
		return MPI_SUCCESS;
	if (bcs_dt_contig(stype) && bcs_dt_contig(rtype)) {
		memmove(rbuf, sbuf, sb);
		return MPI_SUCCESS;
	}
	if (!(tmp = malloc(sb)))
		return MPI_ERR_NO_MEM;
	bcs_dt_pack(stype, scount, sbuf, tmp);
	bcs_dt_unpack(rtype, rcount, tmp, sb, rbuf);
	free(tmp);
	return MPI_SUCCESS;
}

/* Wait for n requests (MPI_REQUEST_NULL skipped); the first error. */
int bcs_coll_wait(const char *fn, struct bcs_comm *c, MPI_Request *r, int n)
{
	int rc = MPI_SUCCESS;

	for (int i = 0; i < n; i++) {
		int e = r[i] == MPI_REQUEST_NULL ? MPI_SUCCESS :
			PMPI_Wait(&r[i], MPI_STATUS_IGNORE);

		if (e && !rc)
			rc = e;
	}
	return rc ? bcs_error(c, fn, rc, "a message of the collective "
			      "failed") : MPI_SUCCESS;
}

/* The messages a collective posted, all waited for even when it failed
 * on the way (none may land after the call returned); its error, rc,
 * through the communicator's handler. */
static int settle(const char *fn, struct bcs_comm *c, MPI_Request *r, int n,
		  int rc)
{
	int w = bcs_coll_wait(fn, c, r, n);

	if (rc)
		return bcs_error(c, fn, rc, "this rank's own block of the "
				 "collective");
	return w;
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
	struct bcs_desc d = { .coll = BCS_C_BARRIER };
	struct bcs_comm *c;
	int rc;

	BCS_NEED_INIT("MPI_Barrier");
	if ((rc = bcs_coll_comm_any("MPI_Barrier", comm, &c)))
		return rc;
	if (c->inter)
		return bcs_inter_barrier(c);
	if (c->size == 1)
		return MPI_SUCCESS;
	return engine_coll("MPI_Barrier", c, &d);
}

#pragma weak MPI_Bcast = PMPI_Bcast
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
	       MPI_Comm comm)
{
	struct bcs_desc d = { .coll = BCS_C_BCAST, .peer = root };
	size_t bytes;
	struct bcs_comm *c;
	void *tmp = NULL;
	int rc;

	BCS_NEED_INIT("MPI_Bcast");
	if ((rc = bcs_coll_comm_any("MPI_Bcast", comm, &c)) ||
	    (rc = bcs_coll_type_ok("MPI_Bcast", c, count, datatype)))
		return rc;
	if (c->inter)
		return bcs_inter_bcast(c, buffer, count, datatype, root);
	if ((rc = root_ok("MPI_Bcast", c, root)))
		return rc;
	bytes = (size_t)count * bcs_dt_size(datatype);
	if (c->size == 1 || !bytes)
		return c->size == 1 ? MPI_SUCCESS :
		       PMPI_Barrier(comm);
	d.bytes = bytes;
	d.addr = (uint64_t)(uintptr_t)buffer;
	if (!bcs_dt_contig(datatype)) {
		if (!(tmp = malloc(bytes)))
			return bcs_error(c, "MPI_Bcast", MPI_ERR_NO_MEM,
					 "out of memory for %zu bytes", bytes);
		if (c->rank == root)
			bcs_dt_pack(datatype, count, buffer, tmp);
		d.addr = (uint64_t)(uintptr_t)tmp;
	}
	rc = engine_coll("MPI_Bcast", c, &d);
	if (tmp && !rc && c->rank != root)
		bcs_dt_unpack(datatype, count, tmp, bytes, buffer);
	free(tmp);
	return rc;
}

/* ---- reductions -------------------------------------------------------------- */

/* The root's half of a message-made reduction: every member's count of
 * dt (its own copied from sbuf) received into one buffer, a span each in
 * rank order (bcs_dt_span: gaps and negative strides included), so that
 * an operation sees the program's layout.  The block of member k is at
 * *all + span * k - lb; *all is the caller's to free.  0, or an error
 * through c's handler. */
int bcs_coll_gather_spans(const char *fn, struct bcs_comm *c,
			  const void *sbuf, int count, MPI_Datatype dt,
			  int tag, uint8_t **all, MPI_Aint *lb,
			  MPI_Aint *span)
{
	MPI_Request *r;
	uint8_t *b;
	int rc = MPI_SUCCESS;

	if (bcs_dt_span(dt, count, lb, span))
		return bcs_error(c, fn, MPI_ERR_TYPE, "the datatype's span");
	b = malloc((size_t)*span * (size_t)c->size + 1);
	r = malloc((size_t)c->size * sizeof(*r));
	if (!b || !r) {
		free(b);
		free(r);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	for (int k = 0; k < c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; k < c->size && !rc; k++) {
		uint8_t *at = b + (size_t)*span * (size_t)k - *lb;

		if (k == c->rank)
			rc = bcs_local_copy(sbuf, count, dt, at, count, dt);
		else
			rc = bcs_irecv(at, count, dt, c->world[k], tag,
				       c->ctx + 1, c, &r[k]);
	}
	rc = settle(fn, c, r, c->size, rc);
	free(r);
	if (rc)
		free(b);
	else
		*all = b;
	return rc;
}

/* Reduce of any op and type by messages: every member's contribution
 * to root, combined there in rank order. */
static int reduce_msgs(const char *fn, struct bcs_comm *c, const void *sbuf,
		       void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		       int root)
{
	MPI_Aint lb = 0, span = 0;
	uint8_t *all = NULL;
	int rc;

	if (c->rank != root) {
		MPI_Request s;

		if ((rc = bcs_isend(sbuf, count, dt, c->world[root], T_REDUCE,
				    c->ctx + 1, c, 0, &s)))
			return bcs_error(c, fn, rc, "out of requests");
		return bcs_coll_wait(fn, c, &s, 1);
	}
	if ((rc = bcs_coll_gather_spans(fn, c, sbuf, count, dt, T_REDUCE,
					&all, &lb, &span)))
		return rc;
#define AT(k) (all + (size_t)span * (size_t)(k) - lb)
	/* rank order: acc = r(n-1); then acc = r(k) op acc, k downwards */
	for (int k = c->size - 2; !rc && k >= 0; k--)
		rc = bcs_op_apply(op, AT(k), AT(c->size - 1), count, dt);
	if (!rc)
		rc = bcs_local_copy(AT(c->size - 1), count, dt, rbuf, count, dt);
#undef AT
	free(all);
	return rc ? bcs_error(c, fn, rc, "the operation does not apply to "
			      "the datatype") : MPI_SUCCESS;
}

static int reduce(const char *fn, const void *sendbuf, void *recvbuf,
		  int count, MPI_Datatype dt, MPI_Op op, int root, int all,
		  MPI_Comm comm)
{
	struct bcs_desc d = { .coll = all ? BCS_C_ALLREDUCE : BCS_C_REDUCE,
			      .peer = root };
	enum bcs_type t;
	enum bcs_op o;
	struct bcs_comm *c;
	size_t bytes;
	void *tmp = NULL;
	int rc, me_recv;

	BCS_NEED_INIT(fn);
	if ((rc = bcs_coll_comm_any(fn, comm, &c)) ||
	    (rc = bcs_coll_type_ok(fn, c, count, dt)) ||
	    (rc = bcs_coll_op_ok(fn, c, op)))
		return rc;
	if (c->inter)
		return bcs_inter_reduce(c, sendbuf, recvbuf, count, dt, op,
					root, all);
	if (!all && (rc = root_ok(fn, c, root)))
		return rc;
	me_recv = all || c->rank == root;
	bytes = (size_t)count * bcs_dt_size(dt);
	if (sendbuf == MPI_IN_PLACE) {
		if (!me_recv)
			return bcs_error(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE "
					 "at a rank that is not the root");
		/* the contribution is in recvbuf: send from a copy */
		if (!(sendbuf = bcs_dt_span_dup(recvbuf, count, dt, &tmp)))
			return bcs_error(c, fn, MPI_ERR_NO_MEM,
					 "out of memory");
	}
	if (c->size == 1) {
		rc = sendbuf == recvbuf ? MPI_SUCCESS :
		     bcs_local_copy(sendbuf, count, dt, recvbuf, count, dt);
		free(tmp);
		return rc ? bcs_error(c, fn, rc, "out of memory") : MPI_SUCCESS;
	}
	if (!bcs_dt_kernel(dt, &t) && !bcs_op_kernel(op, &o) &&
	    bcs_dt_contig(dt) && bcs_op_valid(o, t)) {
		d.type = (uint32_t)t;
		d.op = (uint32_t)o;
		d.bytes = bytes;
		d.addr = (uint64_t)(uintptr_t)sendbuf;
		d.addr2 = (uint64_t)(uintptr_t)recvbuf;
		rc = engine_coll(fn, c, &d);
	} else if (!bcs_op_kernel(op, &o) && !bcs_dt_kernel(dt, &t) &&
		   !bcs_op_valid(o, t)) {
		rc = bcs_error(c, fn, MPI_ERR_OP, "%s does not apply to %s",
			       bcs_op_name(o), bcs_type_name(t));
	} else {
		rc = reduce_msgs(fn, c, sendbuf, recvbuf, count, dt, op,
				 all ? 0 : root);
		if (!rc && all)
			rc = PMPI_Bcast(recvbuf, count, dt, 0, comm);
	}
	free(tmp);
	return rc;
}

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
	return reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op,
		      root, 0, comm);
}

#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
		   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return reduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op,
		      0, 1, comm);
}

/* ---- gathers and scatters -------------------------------------------------- */

/* The v-variants are the general case: counts and displacements (in
 * elements of the receive or send type) per member. */
static int gatherv(const char *fn, const void *sbuf, int scount,
		   MPI_Datatype stype, void *rbuf, const int *rcounts,
		   const int *displs, MPI_Datatype rtype, int root,
		   struct bcs_comm *c)
{
	uint64_t cctx = c->ctx + 1;
	MPI_Aint rext = bcs_dt_extent(rtype);
	MPI_Request *r;
	int rc = MPI_SUCCESS;

	if (c->rank != root) {
		MPI_Request s;

		if ((rc = bcs_isend(sbuf, scount, stype, c->world[root],
				    T_GATHER, cctx, c, 0, &s)))
			return bcs_error(c, fn, rc, "out of requests");
		return bcs_coll_wait(fn, c, &s, 1);
	}
	if (!(r = malloc((size_t)c->size * sizeof(*r))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0; k < c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; k < c->size; k++) {
		uint8_t *at = (uint8_t *)rbuf + (MPI_Aint)displs[k] * rext;

		r[k] = MPI_REQUEST_NULL;
		if (k == root) {
			if (sbuf != MPI_IN_PLACE)
				rc = bcs_local_copy(sbuf, scount, stype, at, rcounts[k], rtype);
		} else {
			rc = bcs_irecv(at, rcounts[k], rtype, c->world[k],
				       T_GATHER, cctx, c, &r[k]);
		}
		if (rc)
			break;
	}
	rc = settle(fn, c, r, c->size, rc);
	free(r);
	return rc;
}

static int scatterv(const char *fn, const void *sbuf, const int *scounts,
		    const int *displs, MPI_Datatype stype, void *rbuf,
		    int rcount, MPI_Datatype rtype, int root,
		    struct bcs_comm *c)
{
	uint64_t cctx = c->ctx + 1;
	MPI_Aint sext = bcs_dt_extent(stype);
	MPI_Request *r;
	int rc = MPI_SUCCESS;

	if (c->rank != root) {
		MPI_Request q;

		if ((rc = bcs_irecv(rbuf, rcount, rtype, c->world[root],
				    T_SCATTER, cctx, c, &q)))
			return bcs_error(c, fn, rc, "out of requests");
		return bcs_coll_wait(fn, c, &q, 1);
	}
	if (!(r = malloc((size_t)c->size * sizeof(*r))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0; k < c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; k < c->size; k++) {
		const uint8_t *at = (const uint8_t *)sbuf +
				    (MPI_Aint)displs[k] * sext;

		r[k] = MPI_REQUEST_NULL;
		if (k == root) {
			if (rbuf != MPI_IN_PLACE)
				rc = bcs_local_copy(at, scounts[k], stype, rbuf, rcount, rtype);
		} else {
			rc = bcs_isend(at, scounts[k], stype, c->world[k],
				       T_SCATTER, cctx, c, 0, &r[k]);
		}
		if (rc)
			break;
	}
	rc = settle(fn, c, r, c->size, rc);
	free(r);
	return rc;
}

/* Counts all n and displacements k * n, for the fixed-size variants. */
static int *even(int size, int n, int **displs)
{
	int *counts = malloc((size_t)size * sizeof(int));

	*displs = malloc((size_t)size * sizeof(int));
	if (!counts || !*displs) {
		free(counts);
		free(*displs);
		*displs = NULL;
		return NULL;
	}
	for (int k = 0; k < size; k++) {
		counts[k] = n;
		(*displs)[k] = k * n;
	}
	return counts;
}

#define COLL_ARGS(fn, c, comm)                                               \
	BCS_NEED_INIT(fn);                                                   \
	if ((rc = bcs_coll_comm_ok(fn, comm, &c)))                                    \
		return rc

/* The same for the collectives BCS-MPI runs on intercommunicators too. */
#define COLL_ARGS_ANY(fn, c, comm)                                           \
	BCS_NEED_INIT(fn);                                                   \
	if ((rc = bcs_coll_comm_any(fn, comm, &c)))                          \
		return rc

#pragma weak MPI_Gather = PMPI_Gather
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		MPI_Comm comm)
{
	struct bcs_comm *c;
	int *counts, *displs, rc;

	COLL_ARGS_ANY("MPI_Gather", c, comm);
	if (c->inter)
		return bcs_inter_gather(c, sendbuf, sendcount, sendtype,
					recvbuf, recvcount, recvtype, root);
	if ((rc = root_ok("MPI_Gather", c, root)) ||
	    (sendbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Gather", c, sendcount, sendtype))) ||
	    (c->rank == root &&
	     (rc = bcs_coll_type_ok("MPI_Gather", c, recvcount, recvtype))))
		return rc;
	if (!(counts = even(c->size, recvcount, &displs)))
		return bcs_error(c, "MPI_Gather", MPI_ERR_NO_MEM,
				 "out of memory");
	rc = gatherv("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf,
		     counts, displs, recvtype, root, c);
	free(counts);
	free(displs);
	return rc;
}

#pragma weak MPI_Gatherv = PMPI_Gatherv
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, const int recvcounts[], const int displs[],
		 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	struct bcs_comm *c;
	int rc;

	COLL_ARGS_ANY("MPI_Gatherv", c, comm);
	if (c->inter)
		return bcs_inter_gatherv(c, sendbuf, sendcount, sendtype,
					 recvbuf, recvcounts, displs, recvtype,
					 root);
	if ((rc = root_ok("MPI_Gatherv", c, root)) ||
	    (sendbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Gatherv", c, sendcount, sendtype))))
		return rc;
	if (c->rank == root && (!recvcounts || !displs))
		return bcs_error(c, "MPI_Gatherv", MPI_ERR_ARG, "recvcounts "
				 "or displs is NULL at the root");
	return gatherv("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf,
		       recvcounts, displs, recvtype, root, c);
}

#pragma weak MPI_Scatter = PMPI_Scatter
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
		 MPI_Comm comm)
{
	struct bcs_comm *c;
	int *counts, *displs, rc;

	COLL_ARGS_ANY("MPI_Scatter", c, comm);
	if (c->inter)
		return bcs_inter_scatter(c, sendbuf, sendcount, sendtype,
					 recvbuf, recvcount, recvtype, root);
	if ((rc = root_ok("MPI_Scatter", c, root)) ||
	    (recvbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Scatter", c, recvcount, recvtype))) ||
	    (c->rank == root &&
	     (rc = bcs_coll_type_ok("MPI_Scatter", c, sendcount, sendtype))))
		return rc;
	if (!(counts = even(c->size, sendcount, &displs)))
		return bcs_error(c, "MPI_Scatter", MPI_ERR_NO_MEM,
				 "out of memory");
	rc = scatterv("MPI_Scatter", sendbuf, counts, displs, sendtype,
		      recvbuf, recvcount, recvtype, root, c);
	free(counts);
	free(displs);
	return rc;
}

#pragma weak MPI_Scatterv = PMPI_Scatterv
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
		  const int displs[], MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int root,
		  MPI_Comm comm)
{
	struct bcs_comm *c;
	int rc;

	COLL_ARGS_ANY("MPI_Scatterv", c, comm);
	if (c->inter)
		return bcs_inter_scatterv(c, sendbuf, sendcounts, displs,
					  sendtype, recvbuf, recvcount,
					  recvtype, root);
	if ((rc = root_ok("MPI_Scatterv", c, root)) ||
	    (recvbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Scatterv", c, recvcount, recvtype))))
		return rc;
	if (c->rank == root && (!sendcounts || !displs))
		return bcs_error(c, "MPI_Scatterv", MPI_ERR_ARG, "sendcounts "
				 "or displs is NULL at the root");
	return scatterv("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype,
			recvbuf, recvcount, recvtype, root, c);
}

/* ---- all-gathers and all-to-alls ---------------------------------------- */

/* Every member sends its block to every other, all posted at once. */
static int allgatherv(const char *fn, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, const int *rcounts,
		      const int *displs, MPI_Datatype rtype,
		      struct bcs_comm *c)
{
	uint64_t cctx = c->ctx + 1;
	MPI_Aint rext = bcs_dt_extent(rtype);
	uint8_t *mine = (uint8_t *)rbuf + (MPI_Aint)displs[c->rank] * rext;
	MPI_Request *r = malloc((size_t)c->size * 2 * sizeof(*r));
	int rc = MPI_SUCCESS;

	if (!r)
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	if (sbuf != MPI_IN_PLACE)
		rc = bcs_local_copy(sbuf, scount, stype, mine,
				   rcounts[c->rank], rtype);
	for (int k = 0; k < 2 * c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; !rc && k < c->size; k++) {
		if (k == c->rank)
			continue;
		rc = bcs_irecv((uint8_t *)rbuf + (MPI_Aint)displs[k] * rext,
			       rcounts[k], rtype, c->world[k], T_ALLGATHER,
			       cctx, c, &r[2 * k]);
		if (!rc)
			rc = bcs_isend(mine, rcounts[c->rank], rtype,
				       c->world[k], T_ALLGATHER, cctx, c, 0,
				       &r[2 * k + 1]);
	}
	rc = settle(fn, c, r, 2 * c->size, rc);
	free(r);
	return rc;
}

#pragma weak MPI_Allgather = PMPI_Allgather
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   MPI_Comm comm)
{
	struct bcs_comm *c;
	int *counts, *displs, rc;

	COLL_ARGS_ANY("MPI_Allgather", c, comm);
	if (c->inter)
		return bcs_inter_allgather(c, sendbuf, sendcount, sendtype,
					   recvbuf, recvcount, recvtype);
	if ((sendbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Allgather", c, sendcount, sendtype))) ||
	    (rc = bcs_coll_type_ok("MPI_Allgather", c, recvcount, recvtype)))
		return rc;
	if (!(counts = even(c->size, recvcount, &displs)))
		return bcs_error(c, "MPI_Allgather", MPI_ERR_NO_MEM,
				 "out of memory");
	rc = allgatherv("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf,
			counts, displs, recvtype, c);
	free(counts);
	free(displs);
	return rc;
}

#pragma weak MPI_Allgatherv = PMPI_Allgatherv
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		    void *recvbuf, const int recvcounts[], const int displs[],
		    MPI_Datatype recvtype, MPI_Comm comm)
{
	struct bcs_comm *c;
	int rc;

	COLL_ARGS_ANY("MPI_Allgatherv", c, comm);
	if ((sendbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Allgatherv", c, sendcount, sendtype))))
		return rc;
	if (!recvcounts || !displs)
		return bcs_error(c, "MPI_Allgatherv", MPI_ERR_ARG,
				 "recvcounts or displs is NULL");
	if (c->inter)
		return bcs_inter_allgatherv(c, sendbuf, sendcount, sendtype,
					    recvbuf, recvcounts, displs,
					    recvtype);
	return allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype,
			  recvbuf, recvcounts, displs, recvtype, c);
}

static int alltoallv(const char *fn, const void *sbuf, const int *scounts,
		     const int *sdispls, MPI_Datatype stype, void *rbuf,
		     const int *rcounts, const int *rdispls,
		     MPI_Datatype rtype, struct bcs_comm *c)
{
	uint64_t cctx = c->ctx + 1;
	MPI_Aint sext = bcs_dt_extent(stype), rext = bcs_dt_extent(rtype);
	MPI_Request *r = malloc((size_t)c->size * 2 * sizeof(*r));
	int rc = MPI_SUCCESS;

	if (!r)
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0; k < 2 * c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; !rc && k < c->size; k++) {
		const uint8_t *s = (const uint8_t *)sbuf +
				   (MPI_Aint)sdispls[k] * sext;
		uint8_t *d = (uint8_t *)rbuf + (MPI_Aint)rdispls[k] * rext;

		if (k == c->rank)
			rc = bcs_local_copy(s, scounts[k], stype, d,
					   rcounts[k], rtype);
		else if (!(rc = bcs_irecv(d, rcounts[k], rtype, c->world[k],
					  T_ALLTOALL, cctx, c, &r[2 * k])))
			rc = bcs_isend(s, scounts[k], stype, c->world[k],
				       T_ALLTOALL, cctx, c, 0, &r[2 * k + 1]);
	}
	rc = settle(fn, c, r, 2 * c->size, rc);
	free(r);
	return rc;
}

/* MPI_IN_PLACE for an all-to-all: the send blocks are in recvbuf; a
 * copy of it to send from. */
static void *in_place_copy(const void *rbuf, const int *rcounts,
			   const int *rdispls, MPI_Datatype rtype, int size)
{
	MPI_Aint ext = bcs_dt_extent(rtype);
	size_t span = 0;
	void *copy;

	for (int k = 0; k < size; k++) {
		size_t end = ((size_t)rdispls[k] + (size_t)rcounts[k]) *
			     (size_t)ext;

		if (end > span)
			span = end;
	}
	if ((copy = malloc(span ? span : 1)))
		memcpy(copy, rbuf, span);
	return copy;
}

#pragma weak MPI_Alltoall = PMPI_Alltoall
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  MPI_Comm comm)
{
	struct bcs_comm *c;
	int *counts, *displs, rc;
	void *copy = NULL;

	COLL_ARGS_ANY("MPI_Alltoall", c, comm);
	if (c->inter)
		return bcs_inter_alltoall(c, sendbuf, sendcount, sendtype,
					  recvbuf, recvcount, recvtype);
	if ((sendbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Alltoall", c, sendcount, sendtype))) ||
	    (rc = bcs_coll_type_ok("MPI_Alltoall", c, recvcount, recvtype)))
		return rc;
	if (!(counts = even(c->size, recvcount, &displs)))
		return bcs_error(c, "MPI_Alltoall", MPI_ERR_NO_MEM,
				 "out of memory");
	if (sendbuf == MPI_IN_PLACE) {
		copy = in_place_copy(recvbuf, counts, displs, recvtype,
				     c->size);
		sendbuf = copy;
		sendcount = recvcount;
		sendtype = recvtype;
	}
	{
		int *scounts, *sdispls = NULL;

		if (!(scounts = even(c->size, sendcount, &sdispls)) || !sendbuf)
			rc = bcs_error(c, "MPI_Alltoall", MPI_ERR_NO_MEM,
				       "out of memory");
		else
			rc = alltoallv("MPI_Alltoall", sendbuf, scounts,
				       sdispls, sendtype, recvbuf, counts,
				       displs, recvtype, c);
		free(scounts);
		free(sdispls);
	}
	free(copy);
	free(counts);
	free(displs);
	return rc;
}

#pragma weak MPI_Alltoallv = PMPI_Alltoallv
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
		   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
		   const int recvcounts[], const int rdispls[],
		   MPI_Datatype recvtype, MPI_Comm comm)
{
	struct bcs_comm *c;
	void *copy = NULL;
	int rc;

	COLL_ARGS_ANY("MPI_Alltoallv", c, comm);
	if (!recvcounts || !rdispls ||
	    (sendbuf != MPI_IN_PLACE && (!sendcounts || !sdispls)))
		return bcs_error(c, "MPI_Alltoallv", MPI_ERR_ARG, "a count or "
				 "displacement array is NULL");
	if (c->inter)
		return bcs_inter_alltoallw("MPI_Alltoallv", c, sendbuf,
					   sendcounts, sdispls, sendtype, NULL,
					   recvbuf, recvcounts, rdispls,
					   recvtype, NULL);
	if ((sendbuf != MPI_IN_PLACE &&
	     (rc = bcs_coll_type_ok("MPI_Alltoallv", c, 0, sendtype))) ||
	    (rc = bcs_coll_type_ok("MPI_Alltoallv", c, 0, recvtype)))
		return rc;
	if (sendbuf == MPI_IN_PLACE) {
		if (!(copy = in_place_copy(recvbuf, recvcounts, rdispls,
					   recvtype, c->size)))
			return bcs_error(c, "MPI_Alltoallv", MPI_ERR_NO_MEM,
					 "out of memory");
		sendbuf = copy;
		sendcounts = recvcounts;
		sdispls = rdispls;
		sendtype = recvtype;
	}
	rc = alltoallv("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype,
		       recvbuf, recvcounts, rdispls, recvtype, c);
	free(copy);
	return rc;
}
