/*
 * job.c — a job's record on this node (job.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "job.h"
#include "output.h"

struct nm_job *nm_job_new(uint32_t id, st_manifest_t *m, const char *dir)
{
	struct nm_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = id;
	j->m = m;
	j->grace = 1;
	j->bcs_fd = -1;
	j->bcs_bell = -1;
	j->stdin_fd = -1;
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	return j;
}

void nm_job_free(struct nm_job *j)
{
	if (!j)
		return;
	nm_output_free(j->out);
	st_manifest_free(j->m);
	free(j->nodelist);
	free(j->ranks);
	free(j->ident);
	free(j);
}

int nm_job_place(struct nm_job *j, uint32_t self)
{
	uint32_t k = 0;

	if (j->ranks)
		return 0;
	j->nlocal = 0;
	for (uint32_t r = 0; r < j->m->ranks; r++)
		j->nlocal += j->m->rank_node[r] == self;
	j->ranks = calloc(j->nlocal ? j->nlocal : 1, sizeof(*j->ranks));
	if (!j->ranks) {
		j->nlocal = 0;
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < j->m->ranks; r++)
		if (j->m->rank_node[r] == self) {
			j->ranks[k].rank = r;
			j->ranks[k].fd[0] = j->ranks[k].fd[1] = -1;
			j->ranks[k].pmi_fd = -1;
			k++;
		}
	return 0;
}

int nm_job_ended(const struct nm_job *j)
{
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->ranks[i].pid || j->ranks[i].fd[0] >= 0 ||
		    j->ranks[i].fd[1] >= 0)
			return 0;
	return 1;
}

struct nm_rank *nm_job_rank_of(struct nm_job *j, pid_t pid)
{
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->ranks[i].pid == pid)
			return &j->ranks[i];
	return NULL;
}

static uint64_t tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

void nm_rank_reaped(struct nm_rank *x, int status, const struct rusage *ru)
{
	x->pid = 0;
	x->status = status;
	x->utime_us = tv_us(ru->ru_utime);
	x->stime_us = tv_us(ru->ru_stime);
	x->maxrss_kib = (uint64_t)ru->ru_maxrss;
}
