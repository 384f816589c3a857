/*
 * pack.c — MPI_Pack, MPI_Unpack, MPI_Pack_size (MPI-3.1 §4.2).  Every
 * rank of a BCS-MPI job runs the same library on the same kind of node,
 * so the packed form is the data's own bytes in type-map order, exactly
 * what a send of the type carries (datatype.c's pack plan): a packed
 * buffer sent as MPI_PACKED is received by any type of the same
 * signature.  The "external32" form (Pack_external) stays unsupported.
 */
#include <limits.h>

#include "impl.h"

/* What Pack and Unpack check alike: 0, or the error through comm's
 * handler (MPI_COMM_WORLD's when comm is not one). */
static int check(const char *fn, MPI_Comm comm, int count, MPI_Datatype dt,
		 const int *position, struct bcs_comm **cp)
{
	struct bcs_comm *c = bcs_comm_get(comm);

	*cp = c;
	if (!c)
		return bcs_error(NULL, fn, MPI_ERR_COMM, "not a communicator "
				 "(%#x)", (unsigned)comm);
	if (count < 0)
		return bcs_error(c, fn, MPI_ERR_COUNT, "count %d", count);
	if (!bcs_dt_ok(dt))
		return bcs_error(c, fn, MPI_ERR_TYPE, "not a committed "
				 "datatype (%#x)", (unsigned)dt);
	if (!position || *position < 0)
		return bcs_error(c, fn, MPI_ERR_ARG, "position is %s",
				 position ? "negative" : "NULL");
	return MPI_SUCCESS;
}

#pragma weak MPI_Pack = PMPI_Pack
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype,
	      void *outbuf, int outsize, int *position, MPI_Comm comm)
{
	struct bcs_comm *c;
	size_t bytes;
	int rc;

	BCS_NEED_INIT("MPI_Pack");
	if ((rc = check("MPI_Pack", comm, incount, datatype, position, &c)))
		return rc;
	bytes = (size_t)incount * bcs_dt_size(datatype);
	if (outsize < *position || bytes > (size_t)(outsize - *position))
		return bcs_error(c, "MPI_Pack", MPI_ERR_TRUNCATE, "%zu bytes "
				 "at position %d of a buffer of %d", bytes,
				 *position, outsize);
	if (bytes && (!inbuf || !outbuf))
		return bcs_error(c, "MPI_Pack", MPI_ERR_BUFFER,
				 "inbuf or outbuf is NULL");
	if (bytes)
		bcs_dt_pack(datatype, incount, inbuf,
			    (char *)outbuf + *position);
	*position += (int)bytes;
	return MPI_SUCCESS;
}

#pragma weak MPI_Unpack = PMPI_Unpack
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
		int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	struct bcs_comm *c;
	size_t bytes;
	int rc;

	BCS_NEED_INIT("MPI_Unpack");
	if ((rc = check("MPI_Unpack", comm, outcount, datatype, position, &c)))
		return rc;
	bytes = (size_t)outcount * bcs_dt_size(datatype);
	if (insize < *position || bytes > (size_t)(insize - *position))
		return bcs_error(c, "MPI_Unpack", MPI_ERR_TRUNCATE, "%zu "
				 "bytes at position %d of a buffer of %d",
				 bytes, *position, insize);
	if (bytes && (!inbuf || !outbuf))
		return bcs_error(c, "MPI_Unpack", MPI_ERR_BUFFER,
				 "inbuf or outbuf is NULL");
	if (bytes)
		bcs_dt_unpack(datatype, outcount,
			      (const char *)inbuf + *position, bytes, outbuf);
	*position += (int)bytes;
	return MPI_SUCCESS;
}

#pragma weak MPI_Pack_size = PMPI_Pack_size
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
		   int *size)
{
	struct bcs_comm *c;
	int zero = 0, rc;
	size_t bytes;

	BCS_NEED_INIT("MPI_Pack_size");
	if ((rc = check("MPI_Pack_size", comm, incount, datatype, &zero, &c)))
		return rc;
	if (!size)
		return bcs_error(c, "MPI_Pack_size", MPI_ERR_ARG,
				 "size is NULL");
	bytes = (size_t)incount * bcs_dt_size(datatype);
	if (bytes > INT_MAX)
		return bcs_error(c, "MPI_Pack_size", MPI_ERR_COUNT, "%zu bytes "
				 "do not fit an int", bytes);
	*size = (int)bytes;
	return MPI_SUCCESS;
}
