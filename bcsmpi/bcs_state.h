/*
 * bcs_state.h — libbcsmpi's lifecycle phase (internal; never installed).
 *
 * MPI_Init, MPI_Finalize, MPI_Initialized and MPI_Finalized take no handle,
 * so the phase is the one piece of process-wide state the library must
 * keep.  It only moves forward, and every change is one atomic
 * compare-and-swap, so MPI_Initialized and MPI_Finalized may be called from
 * any thread at any time (MPI-3.1 §8.7) while another thread initializes.
 *
 *   phase \ event     init completes      finalize completes
 *   UNINITIALIZED     -> INITIALIZED      MPI_ERR_OTHER (not initialized)
 *   INITIALIZED       MPI_ERR_OTHER       -> FINALIZED
 *   FINALIZED         MPI_ERR_OTHER       MPI_ERR_OTHER
 *
 * MPI_Initialized is true from INITIALIZED on (it stays true after
 * MPI_Finalize, as the standard says); MPI_Finalized only in FINALIZED.
 * An MPI_Init that fails leaves the phase UNINITIALIZED.
 */
#ifndef BCS_STATE_H
#define BCS_STATE_H

enum bcs_phase {
	BCS_PHASE_UNINITIALIZED = 0,
	BCS_PHASE_INITIALIZED,
	BCS_PHASE_FINALIZED,
};

/** The current phase.  Any thread, any time. */
enum bcs_phase bcs_state_phase(void);

/** Move from the phase before @to to @to: MPI_Init calls it with
 * BCS_PHASE_INITIALIZED once it has succeeded, MPI_Finalize with
 * BCS_PHASE_FINALIZED.  Returns MPI_SUCCESS, or MPI_ERR_OTHER (phase
 * unchanged) for any transition the table above does not allow — two
 * threads racing to initialize get one MPI_SUCCESS between them. */
int bcs_state_advance(enum bcs_phase to);

#endif /* BCS_STATE_H */
