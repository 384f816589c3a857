/*
 * state.c — the lifecycle phase (bcs_state.h) and the two calls that only
 * read it, MPI_Initialized and MPI_Finalized.  The phase is an atomic int
 * that only moves forward; see bcs_state.h for its table.
 *
 * Profiling: each call is defined as PMPI_<name>; MPI_<name> is a weak
 * alias, so a profiling library's MPI_<name> takes its place.  Code inside
 * libbcsmpi calls PMPI_<name> (or bcs_*), never MPI_<name>.
 */
#include <stdatomic.h>
#include <stddef.h>

#include "bcs_state.h"
#include "mpi.h"

static atomic_int bcs_phase_now = BCS_PHASE_UNINITIALIZED;

enum bcs_phase bcs_state_phase(void)
{
	return (enum bcs_phase)atomic_load(&bcs_phase_now);
}

int bcs_state_advance(enum bcs_phase to)
{
	int from;

	switch (to) {
	case BCS_PHASE_INITIALIZED:
		from = BCS_PHASE_UNINITIALIZED;
		break;
	case BCS_PHASE_FINALIZED:
		from = BCS_PHASE_INITIALIZED;
		break;
	default:
		return MPI_ERR_OTHER;
	}
	return atomic_compare_exchange_strong(&bcs_phase_now, &from, (int)to)
		? MPI_SUCCESS : MPI_ERR_OTHER;
}

#pragma weak MPI_Initialized = PMPI_Initialized
int PMPI_Initialized(int *flag)
{
	if (flag == NULL)
		return MPI_ERR_ARG;
	*flag = bcs_state_phase() != BCS_PHASE_UNINITIALIZED;
	return MPI_SUCCESS;
}

#pragma weak MPI_Finalized = PMPI_Finalized
int PMPI_Finalized(int *flag)
{
	if (flag == NULL)
		return MPI_ERR_ARG;
	*flag = bcs_state_phase() == BCS_PHASE_FINALIZED;
	return MPI_SUCCESS;
}
