/*
 * version.c — which MPI this is: MPI_Get_version (the standard's version,
 * 3.1, as MPI_VERSION / MPI_SUBVERSION in mpi.h) and
 * MPI_Get_library_version ("Storm BCS-MPI <Storm's version>").  Both may be
 * called at any time, before MPI_Init and after MPI_Finalize (MPI-3.1
 * §8.1.1), so they touch no state.
 */
#include <stddef.h>
#include <string.h>

#include "mpi.h"

#ifndef BCSMPI_VERSION
#error "BCSMPI_VERSION (Storm's version string) is set by bcsmpi/meson.build"
#endif

static const char bcs_library_version[] = "Storm BCS-MPI " BCSMPI_VERSION;

_Static_assert(sizeof bcs_library_version <= MPI_MAX_LIBRARY_VERSION_STRING,
	"the version string must fit the caller's buffer");

#pragma weak MPI_Get_version = PMPI_Get_version
int PMPI_Get_version(int *version, int *subversion)
{
	if (version == NULL || subversion == NULL)
		return MPI_ERR_ARG;
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

/* version must hold MPI_MAX_LIBRARY_VERSION_STRING bytes; *resultlen is the
 * length without the terminating NUL. */
#pragma weak MPI_Get_library_version = PMPI_Get_library_version
int PMPI_Get_library_version(char *version, int *resultlen)
{
	if (version == NULL || resultlen == NULL)
		return MPI_ERR_ARG;
	memcpy(version, bcs_library_version, sizeof bcs_library_version);
	*resultlen = (int)(sizeof bcs_library_version - 1);
	return MPI_SUCCESS;
}
