/*
 * pmi_node.h — PMI-1 jobs on this node (docs/pmi.md): each job's server
 * (pmi.h), the socket pairs its ranks find on PMI_FD, and the node's
 * side of the job-wide exchange: a barrier's entries go up as PMI
 * mailbox records through the caller (ops.record), then the job's
 * gv_pmi slot says they went; the merged store comes down into this
 * node's PMI inbox a chunk at a time (ST_EV_PMI), each acknowledged in
 * gv_pmi_seq once copied out.
 *
 * nm.c calls it; it does not reach back: a job it fails is reported
 * through ops.failed, for nm.c to end.
 */
#ifndef STORM_NM_PMI_NODE_H
#define STORM_NM_PMI_NODE_H

#include <stddef.h>
#include <stdint.h>

#include <qb/qbloop.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct nm_pmi_node_ops {
	/* a PMI record (ST_PMI_REC_HDR and entries) for the managers */
	void (*record)(void *ctx, uint32_t job, const void *data,
		       uint32_t len);
	/* the job fails here: why names the rank and the cause */
	void (*failed)(void *ctx, uint32_t job, const char *why);
	void *ctx;
};

struct pmi_job;

struct nm_pmi_node {
	sp_world_t *w;
	const st_layout_t *lay;
	qb_loop_t *loop;
	struct nm_pmi_node_ops ops;
	uint32_t rec_max;       /* entries per record, at most */
	struct pmi_job *jobs;
	uint8_t *inbox;         /* a copy of the inbox (lay->pmi_len) */
};

/* rec_max: the largest record's entries that fit one mailbox box. */
int nm_pmi_node_init(struct nm_pmi_node *n, sp_world_t *w,
		     const st_layout_t *lay, qb_loop_t *loop,
		     uint32_t rec_max, const struct nm_pmi_node_ops *ops);
void nm_pmi_node_fini(struct nm_pmi_node *n);
/* Job (incarnation inc, gv_pmi slot `slot`) with size ranks in all (rank
 * r on node rank_node[r]), nlocal here (world ranks ranks[]): per local
 * rank, fds[i] gets the end the rank inherits (close-on-exec: the
 * launcher moves it to NM_PMI_RANK_FD).  0, or -errno with err. */
int nm_pmi_node_open(struct nm_pmi_node *n, uint32_t job, uint32_t inc,
		     uint32_t slot, uint32_t size, const uint32_t *rank_node,
		     uint32_t nlocal, const uint32_t *ranks, int *fds,
		     char *err, size_t errlen);
/* The ranks started: the node's ends are closed here (fds as given). */
void nm_pmi_node_started(struct nm_pmi_node *n, uint32_t job, int *fds);
/* The job is gone here. */
void nm_pmi_node_close(struct nm_pmi_node *n, uint32_t job);
/* A chunk arrived in the inbox (ST_EV_PMI). */
void nm_pmi_node_events(struct nm_pmi_node *n);

#endif
