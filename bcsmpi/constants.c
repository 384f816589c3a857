/*
 * constants.c — the predefined values mpi.h declares as objects rather than
 * macros, as MPICH does (so MPICH-built programs find them by these names):
 * distinct addresses a program passes and the library compares, never
 * dereferences.  Each points at storage of its own so no two compare equal,
 * and none equals NULL or MPI_BOTTOM.
 */
#include "mpi.h"

static int bcs_unweighted_tag;
static int bcs_weights_empty_tag;
/* Room for one Fortran status each: a Fortran binding may pass these back. */
static MPI_Fint bcs_f_status_ignore[sizeof(MPI_Status) / sizeof(MPI_Fint)];
static MPI_Fint bcs_f_statuses_ignore[sizeof(MPI_Status) / sizeof(MPI_Fint)];
static char bcs_pvar_all_handles_tag;

int *const MPI_UNWEIGHTED = &bcs_unweighted_tag;
int *const MPI_WEIGHTS_EMPTY = &bcs_weights_empty_tag;
MPI_Fint *MPI_F_STATUS_IGNORE = bcs_f_status_ignore;
MPI_Fint *MPI_F_STATUSES_IGNORE = bcs_f_statuses_ignore;
struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES =
	(struct MPIR_T_pvar_handle_s *)(void *)&bcs_pvar_all_handles_tag;
