/*
 * gang.h — the node's half of gang scheduling: the context switch
 * (gang.c says how).
 */
#ifndef STORM_NM_GANG_H
#define STORM_NM_GANG_H

#include <stdint.h>

#include "job.h"

/* Stop the started jobs of the list whose want is ST_HB_STOP, then
 * continue the stopped ones whose want is ST_HB_RUN; no system call for
 * a job whose processes already match (main loop only). */
void nm_gang_switch(struct nm_job *jobs, uint64_t slice);

#endif
