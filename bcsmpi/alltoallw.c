/*
 * alltoallw.c — MPI_Alltoallw (MPI-3.1 §5.8): the all-to-all with a
 * datatype and a byte displacement per member, messages in the
 * communicator's collective context as coll.c's all-to-alls, all posted
 * at once and waited for together.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

#define T_ALLTOALLW 7 /* after coll.c's tags */

/* MPI_IN_PLACE: a copy of the receive blocks' whole span to send
 * from, addressed as recvbuf; *block to free. */
static const void *in_place(const void *rbuf, const int *rcounts,
			    const int *rdispls, const MPI_Datatype *rtypes,
			    int size, void **block)
{
	MPI_Aint lo = 0, hi = 0;
	int any = 0;
	uint8_t *b;

	for (int k = 0; k < size; k++) {
		MPI_Aint lb, span;

		if (!rcounts[k] || bcs_dt_span(rtypes[k], rcounts[k], &lb,
					       &span) || !span)
			continue;
		if (!any || rdispls[k] + lb < lo)
			lo = rdispls[k] + lb;
		if (!any || rdispls[k] + lb + span > hi)
			hi = rdispls[k] + lb + span;
		any = 1;
	}
	if (!(b = malloc((size_t)(hi - lo) + 1)))
		return NULL;
	memcpy(b, (const uint8_t *)rbuf + lo, (size_t)(hi - lo));
	*block = b;
	return b - lo;
}

#pragma weak MPI_Alltoallw = PMPI_Alltoallw
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
		   const int sdispls[], const MPI_Datatype sendtypes[],
		   void *recvbuf, const int recvcounts[], const int rdispls[],
		   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	static const char fn[] = "MPI_Alltoallw";
	struct bcs_comm *c;
	MPI_Request *r;
	void *block = NULL;
	int rc;

	BCS_NEED_INIT(fn);
	if ((rc = bcs_coll_comm_any(fn, comm, &c)))
		return rc;
	if (!recvcounts || !rdispls || !recvtypes ||
	    (sendbuf != MPI_IN_PLACE &&
	     (!sendcounts || !sdispls || !sendtypes)))
		return bcs_error(c, fn, MPI_ERR_ARG, "a count, displacement "
				 "or type array is NULL");
	if (c->inter)
		return bcs_inter_alltoallw(fn, c, sendbuf, sendcounts, sdispls,
					   MPI_DATATYPE_NULL, sendtypes,
					   recvbuf, recvcounts, rdispls,
					   MPI_DATATYPE_NULL, recvtypes);
	for (int k = 0; k < c->size; k++)
		if ((sendbuf != MPI_IN_PLACE &&
		     (rc = bcs_coll_type_ok(fn, c, sendcounts[k],
					    sendtypes[k]))) ||
		    (rc = bcs_coll_type_ok(fn, c, recvcounts[k],
					   recvtypes[k])))
			return rc;
	if (sendbuf == MPI_IN_PLACE) {
		if (!(sendbuf = in_place(recvbuf, recvcounts, rdispls,
					 recvtypes, c->size, &block)))
			return bcs_error(c, fn, MPI_ERR_NO_MEM,
					 "out of memory");
		sendcounts = recvcounts;
		sdispls = rdispls;
		sendtypes = recvtypes;
	}
	if (!(r = malloc((size_t)c->size * 2 * sizeof(*r)))) {
		free(block);
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	}
	for (int k = 0; k < 2 * c->size; k++)
		r[k] = MPI_REQUEST_NULL;
	for (int k = 0; !rc && k < c->size; k++) {
		const uint8_t *s = (const uint8_t *)sendbuf + sdispls[k];
		uint8_t *d = (uint8_t *)recvbuf + rdispls[k];

		if (k == c->rank)
			rc = bcs_local_copy(s, sendcounts[k], sendtypes[k], d,
					    recvcounts[k], recvtypes[k]);
		else if (!(rc = bcs_irecv(d, recvcounts[k], recvtypes[k],
					  c->world[k], T_ALLTOALLW, c->ctx + 1,
					  c, &r[2 * k])))
			rc = bcs_isend(s, sendcounts[k], sendtypes[k],
				       c->world[k], T_ALLTOALLW, c->ctx + 1, c,
				       0, &r[2 * k + 1]);
	}
	/* every message posted is waited for, even after an error */
	{
		int w = bcs_coll_wait(fn, c, r, 2 * c->size);

		if (rc)
			rc = bcs_error(c, fn, rc, "this rank's own block");
		else
			rc = w;
	}
	free(r);
	free(block);
	return rc;
}
