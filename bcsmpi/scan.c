/*
 * scan.c — the prefix reductions and the reduce-scatters, thin layers
 * over what the core has.  MPI_Scan and MPI_Exscan gather every
 * contribution at rank 0 in the communicator's collective context (tags
 * of their own, beside coll.c's), combine them there in rank order —
 * acc(k) = acc(k-1) op x(k), the order MPI defines, so a non-commutative
 * operation gets the right answer and every run the same bits — and
 * send each member its prefix: two message rounds, each moved by the
 * engine in one slice.  MPI_Reduce_scatter(_block) is MPI_Reduce to rank
 * 0 and MPI_Scatterv from it.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* Tags in the collective context: coll.c's are 1 to 6. */
enum { T_SCAN_IN = 16, T_SCAN_OUT };

/* What every prefix reduction and reduce-scatter checks first. */
static int scan_args(const char *fn, MPI_Comm comm, int count,
		     MPI_Datatype dt, MPI_Op op, struct bcs_comm **cp)
{
	int rc;

	if ((rc = bcs_coll_comm_ok(fn, comm, cp)) ||
	    (rc = bcs_coll_type_ok(fn, *cp, count, dt)))
		return rc;
	return bcs_coll_op_ok(fn, *cp, op);
}

/* Rank 0: every member's contribution (bcs_coll_gather_spans), combined
 * into prefixes in rank order, each sent back: inclusive, member k gets
 * acc(k); exclusive, acc(k-1) (rank 0 nothing).  0 or an MPI class. */
static int scan_root(const char *fn, struct bcs_comm *c, const void *in,
		     void *out, int count, MPI_Datatype dt, MPI_Op op,
		     int exclusive)
{
	MPI_Aint lb = 0, span = 0;
	MPI_Request *r;
	uint8_t *all = NULL;
	int rc;

	if ((rc = bcs_coll_gather_spans(fn, c, in, count, dt, T_SCAN_IN, &all,
					&lb, &span)))
		return rc;
	if (!(r = malloc((size_t)c->size * sizeof(*r)))) {
		free(all);
		return MPI_ERR_NO_MEM;
	}
#define AT(k) (all + (size_t)span * (size_t)(k) - lb)
	for (int k = 0; k < c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 1; k < c->size && !rc; k++)
		rc = bcs_op_apply(op, AT(k - 1), AT(k), count, dt);
	for (int k = 1; k < c->size && !rc; k++)
		rc = bcs_isend(AT(exclusive ? k - 1 : k), count, dt,
			       c->world[k], T_SCAN_OUT, c->ctx + 1, c, 0,
			       &r[k]);
	if (bcs_coll_wait(fn, c, r, c->size) && !rc)
		rc = MPI_ERR_OTHER;
	if (!rc && !exclusive)
		rc = bcs_local_copy(AT(0), count, dt, out, count, dt);
#undef AT
	free(all);
	free(r);
	return rc;
}

static int scan(const char *fn, const void *sendbuf, void *recvbuf,
		int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		int exclusive)
{
	struct bcs_comm *c;
	void *tmp = NULL;
	int rc;

	BCS_NEED_INIT(fn);
	if ((rc = scan_args(fn, comm, count, dt, op, &c)))
		return rc;
	/* in place: the contribution is in recvbuf, which the result
	 * overwrites; send from a copy */
	if (sendbuf == MPI_IN_PLACE &&
	    !(sendbuf = bcs_dt_span_dup(recvbuf, count, dt, &tmp)))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	if (count == 0) {
		rc = MPI_SUCCESS;
	} else if (c->rank == 0) {
		rc = scan_root(fn, c, sendbuf, recvbuf, count, dt, op,
			       exclusive);
	} else {
		MPI_Request r[2];

		if ((rc = bcs_irecv(recvbuf, count, dt, c->world[0],
				    T_SCAN_OUT, c->ctx + 1, c, &r[0])))
			r[0] = MPI_REQUEST_NULL;
		if ((rc = rc ? rc :
		     bcs_isend(sendbuf, count, dt, c->world[0], T_SCAN_IN,
			       c->ctx + 1, c, 0, &r[1])))
			r[1] = MPI_REQUEST_NULL;
		if (bcs_coll_wait(fn, c, r, 2) && !rc)
			rc = MPI_ERR_OTHER;
	}
	free(tmp);
	return rc ? bcs_error(c, fn, rc, "the operation does not apply to "
			      "the datatype, or a message of it failed") :
		    MPI_SUCCESS;
}

#pragma weak MPI_Scan = PMPI_Scan
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
	      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return scan("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm,
		    0);
}

#pragma weak MPI_Exscan = PMPI_Exscan
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
		MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return scan("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm,
		    1);
}

/* ---- reduce-scatter --------------------------------------------------------- */

/* The element-wise reduction of every member's sum(counts) elements, of
 * which member k gets counts[k], in rank order. */
static int reduce_scatter(const char *fn, const void *sendbuf,
			  void *recvbuf, const int *counts,
			  MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	struct bcs_comm *c;
	MPI_Aint lb = 0, span = 0;
	int *displs, total = 0, rc;
	uint8_t *sum = NULL;

	BCS_NEED_INIT(fn);
	if ((rc = scan_args(fn, comm, 0, dt, op, &c)))
		return rc;
	if (!counts)
		return bcs_error(c, fn, MPI_ERR_ARG, "recvcounts is NULL");
	for (int k = 0; k < c->size; k++) {
		if (counts[k] < 0 || counts[k] > 0x7fffffff - total)
			return bcs_error(c, fn, MPI_ERR_COUNT, "recvcounts[%d] "
					 "is %d", k, counts[k]);
		total += counts[k];
	}
	if (!(displs = malloc((size_t)c->size * sizeof(int))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	for (int k = 0, at = 0; k < c->size; at += counts[k], k++)
		displs[k] = at;
	if (c->rank == 0 &&
	    (bcs_dt_span(dt, total, &lb, &span) ||
	     !(sum = malloc((size_t)span + 1)))) {
		free(displs);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	/* in place: the contribution is in recvbuf (all of it) */
	if (sendbuf == MPI_IN_PLACE)
		sendbuf = recvbuf;
	rc = PMPI_Reduce(sendbuf, sum ? sum - lb : NULL, total, dt, op, 0,
			 comm);
	if (!rc)
		rc = PMPI_Scatterv(sum ? sum - lb : NULL, counts, displs, dt,
				   recvbuf, counts[c->rank], dt, 0, comm);
	free(sum);
	free(displs);
	return rc;
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
			const int recvcounts[], MPI_Datatype datatype,
			MPI_Op op, MPI_Comm comm)
{
	return reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf,
			      recvcounts, datatype, op, comm);
}

#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
			      int recvcount, MPI_Datatype datatype,
			      MPI_Op op, MPI_Comm comm)
{
	struct bcs_comm *c;
	int *counts, rc;

	BCS_NEED_INIT("MPI_Reduce_scatter_block");
	if ((rc = scan_args("MPI_Reduce_scatter_block", comm, recvcount,
			    datatype, op, &c)))
		return rc;
	if (!(counts = malloc((size_t)c->size * sizeof(int))))
		return bcs_error(c, "MPI_Reduce_scatter_block", MPI_ERR_NO_MEM,
				 "out of memory");
	for (int k = 0; k < c->size; k++)
		counts[k] = recvcount;
	rc = reduce_scatter("MPI_Reduce_scatter_block", sendbuf, recvbuf,
			    counts, datatype, op, comm);
	free(counts);
	return rc;
}
