/*
 * wtime.c — MPI_Wtime and MPI_Wtick on CLOCK_MONOTONIC: elapsed time that
 * never jumps with the wall clock (NTP, settimeofday), in seconds.  It is
 * local to the node (MPI_WTIME_IS_GLOBAL is false).  The clock's origin is
 * the node's boot, so a rank restarted from a checkpoint on another node
 * would see time jump; the checkpoint work must carry an offset for it.
 */
#include <time.h>

#include "mpi.h"

#pragma weak MPI_Wtime = PMPI_Wtime
double PMPI_Wtime(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail on Linux for a valid pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#pragma weak MPI_Wtick = PMPI_Wtick
double PMPI_Wtick(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC, &res) != 0 ||
	    (res.tv_sec == 0 && res.tv_nsec == 0))
		return 1e-9;
	return (double)res.tv_sec + (double)res.tv_nsec * 1e-9;
}
