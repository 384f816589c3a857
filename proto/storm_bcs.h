/*
 * storm_bcs.h — what a BCS-MPI rank (libbcsmpi) and its node's BCS
 * engine (storm-nm) share.  For now the reduction kernels alone
 * (libstorm-bcs, bcs_reduce.h); the shared-memory segment and its
 * descriptor rings join them here.
 */
#ifndef STORM_BCS_H
#define STORM_BCS_H

#include "bcs_reduce.h"

#endif
