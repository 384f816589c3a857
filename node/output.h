/*
 * output.h — a batch job's output files, written on the nodes as the
 * job's user (nothing is written with the daemon's rights).  For each
 * stream (stdout, stderr) the job's pattern says where: with %r, each
 * rank's node writes that rank's own file; without, the node of rank 0
 * writes the one file, and the other nodes' lines reach it through the
 * relay (relay.h).  Files are opened when the job starts, with the
 * user's file-system identity, O_NOFOLLOW, regular files only, relative
 * patterns against the job's absolute working directory: a path the user
 * may not write fails the job before any rank runs.  An interactive job
 * has no files: its output goes to the managers (outbox.h).
 */
#ifndef STORM_NM_OUTPUT_H
#define STORM_NM_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"

enum nm_route {
	NM_ROUTE_MANAGER, /* a record to the managers (not batch) */
	NM_ROUTE_FILE,    /* written here */
	NM_ROUTE_RELAY,   /* to the node of rank 0 */
};

/* Open this node's files of job j (started here: j->ident resolved);
 * j->out stays NULL for a job that is not batch.  0, or -errno with err
 * naming the node, the file and the cause. */
int nm_output_open(struct nm_job *j, uint32_t self, const char *node,
		   char *err, size_t errlen);
/* Where stream (0 stdout, 1 stderr) of a rank of j goes from this node;
 * *dest: the node of rank 0 for NM_ROUTE_RELAY. */
enum nm_route nm_output_route(const struct nm_job *j, int stream,
			      uint32_t *dest);
/* Whether this node writes the job-wide file of stream (relayed lines
 * are taken). */
int nm_output_whole(const struct nm_job *j, int stream);
/* Write a rank's lines to its file here (a write error is logged once
 * per job and the lines dropped: the job goes on). */
void nm_output_write(struct nm_job *j, uint32_t rank, int stream,
		     const void *data, size_t len);
void nm_output_free(struct nm_output *o);

#endif
