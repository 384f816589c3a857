/*
 * clock.h — storm-mm's clocks.  The pure state machine never reads one;
 * the shell reads them here only, so a test can supply its own.
 */
#ifndef STORM_MMD_CLOCK_H
#define STORM_MMD_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns: the shell's deadlines and measurements. */
uint64_t mmd_mono_ns(void);
/* CLOCK_REALTIME in ms: what TICK carries into the state (clients show
 * submit/start/end times as dates; the state never lets it go back). */
uint64_t mmd_wall_ms(void);
/* CLOCK_REALTIME in us: slice numbers continue from it across masters. */
uint64_t mmd_wall_us(void);

#endif
