/*
 * pmpi.c — the profiling interface (test_bcsmpi.py pmpi): a program that
 * defines MPI_Get_version and MPI_Wtime itself, counts the calls and
 * forwards them to PMPI_*, as a profiling library does.  Its definitions
 * must take the place of libbcsmpi's weak MPI_* aliases, while PMPI_*
 * still reach the library.  Exit 0 when they do.
 */
#include <stdio.h>

#include <mpi.h>

static int version_calls;
static int wtime_calls;

int MPI_Get_version(int *version, int *subversion)
{
	version_calls++;
	return PMPI_Get_version(version, subversion);
}

double MPI_Wtime(void)
{
	wtime_calls++;
	return PMPI_Wtime();
}

int main(void)
{
	int v = 0, s = 0;
	double t;

	if (MPI_Get_version(&v, &s) != MPI_SUCCESS || v != 3 || s != 1) {
		fprintf(stderr, "pmpi: MPI_Get_version gave %d.%d\n", v, s);
		return 1;
	}
	t = MPI_Wtime();
	if (version_calls != 1 || wtime_calls != 1 || t <= 0.0) {
		fprintf(stderr, "pmpi: the program's MPI_* were not called "
			"(%d, %d)\n", version_calls, wtime_calls);
		return 1;
	}
	printf("pmpi: profiling wrappers called, PMPI_* reached the library\n");
	return 0;
}
