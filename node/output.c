/*
 * output.c — a batch job's output files on the nodes (output.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qb/qblog.h>

#include <storm_proto.h>

#include "output.h"

#define DISCARD (-2) /* a file of /dev/null: nothing is written */

struct nm_output {
	int per_rank[2];  /* the stream's pattern has %r */
	uint32_t rank0;   /* the node of rank 0 */
	int whole[2];     /* the job-wide file, on rank 0's node; else -1 */
	int (*fd)[2];     /* per local rank (j->ranks order) for %r
			   * (DISCARD: /dev/null) */
	uint32_t n;
	int warned;
};

static const char *pattern(const st_manifest_t *m, int stream)
{
	const char *p = stream ? m->err_pat : m->out_pat;

	return p && p[0] ? p : stream ? "storm-%j.err" : "storm-%j.out";
}

/* pat with %j (job id) and %r (rank) expanded, relative to cwd.  0, or
 * -ENAMETOOLONG. */
static int expand(char *out, size_t cap, const char *pat, const char *cwd,
		  uint32_t job, uint32_t rank)
{
	size_t n = 0;

	if (pat[0] != '/')
		n = (size_t)snprintf(out, cap, "%s/", cwd);
	for (const char *s = pat; *s; s++) {
		if (n + 12 >= cap)
			return -ENAMETOOLONG;
		if (s[0] == '%' && (s[1] == 'j' || s[1] == 'r')) {
			n += (size_t)snprintf(out + n, cap - n, "%u",
					      s[1] == 'j' ? job : rank);
			s++;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return 0;
}

static int open_one(const struct nm_job *j, int stream, uint32_t rank,
		    const char *node, int *fd, char *err, size_t errlen)
{
	const st_manifest_t *m = j->m;
	const struct nm_identity *id = j->ident;
	char path[4096];
	uint32_t groups[NM_ID_GROUPS_MAX];
	int rc;

	if (pattern(m, stream)[0] != '/' && (!m->cwd || m->cwd[0] != '/')) {
		snprintf(err, errlen, "node %s: job %u: its output file %s is "
			 "relative and its working directory '%s' is not "
			 "absolute; give an absolute path", node, j->id,
			 pattern(m, stream), m->cwd ? m->cwd : "");
		return -EINVAL;
	}
	if (expand(path, sizeof(path), pattern(m, stream), m->cwd, j->id,
		   rank)) {
		snprintf(err, errlen, "node %s: job %u: its output file path "
			 "is longer than %zu bytes", node, j->id,
			 sizeof(path) - 12);
		return -ENAMETOOLONG;
	}
	/* the one non-regular file allowed: output thrown away */
	if (!strcmp(path, "/dev/null")) {
		*fd = DISCARD;
		return 0;
	}
	for (int i = 0; i < id->ngroups; i++)
		groups[i] = id->groups[i];
	rc = st_open_as(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW,
			0644, id->uid, id->gid, groups, id->ngroups);
	if (rc < 0) {
		snprintf(err, errlen, "node %s: job %u: cannot open its "
			 "output file %s as uid %u: %s", node, j->id, path,
			 (unsigned)id->uid,
			 rc == -EINVAL ? "not a regular file" :
			 rc == -ELOOP ? "it is a symbolic link" :
				       strerror(-rc));
		return rc;
	}
	*fd = rc;
	return 0;
}

void nm_output_free(struct nm_output *o)
{
	if (!o)
		return;
	for (int s = 0; s < 2; s++) {
		if (o->whole[s] >= 0)
			close(o->whole[s]);
		for (uint32_t i = 0; o->fd && i < o->n; i++)
			if (o->fd[i][s] >= 0)
				close(o->fd[i][s]);
	}
	free(o->fd);
	free(o);
}

int nm_output_open(struct nm_job *j, uint32_t self, const char *node,
		   char *err, size_t errlen)
{
	const st_manifest_t *m = j->m;
	struct nm_output *o;
	int rc = 0;

	if (!m->batch || j->out)
		return 0;
	if (!j->ident) { /* a batch job always names its user (version 2) */
		snprintf(err, errlen, "node %s: job %u: batch output without "
			 "a user", node, j->id);
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->fd = malloc((j->nlocal ? j->nlocal : 1) *
				   sizeof(*o->fd)))) {
		free(o);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	o->n = j->nlocal;
	o->rank0 = m->rank_node[0];
	for (uint32_t i = 0; i < o->n; i++)
		o->fd[i][0] = o->fd[i][1] = -1;
	j->out = o;
	for (int s = 0; s < 2 && !rc; s++) {
		o->whole[s] = -1;
		o->per_rank[s] = strstr(pattern(m, s), "%r") != NULL;
		if (!o->per_rank[s] && o->rank0 == self)
			rc = open_one(j, s, 0, node, &o->whole[s], err,
				      errlen);
		for (uint32_t i = 0; o->per_rank[s] && !rc && i < o->n; i++)
			rc = open_one(j, s, j->ranks[i].rank, node,
				      &o->fd[i][s], err, errlen);
	}
	if (rc) {
		qb_log(LOG_NOTICE, "uid %u refused: %s", (unsigned)m->uid,
		       err);
		nm_output_free(o);
		j->out = NULL;
	}
	return rc;
}

enum nm_route nm_output_route(const struct nm_job *j, int stream,
			      uint32_t *dest)
{
	const struct nm_output *o = j->out;

	if (!o)
		return NM_ROUTE_MANAGER;
	if (o->per_rank[stream] || o->whole[stream] != -1)
		return NM_ROUTE_FILE;
	*dest = o->rank0;
	return NM_ROUTE_RELAY;
}

int nm_output_whole(const struct nm_job *j, int stream)
{
	return j->out && j->out->whole[stream] != -1;
}

void nm_output_write(struct nm_job *j, uint32_t rank, int stream,
		     const void *data, size_t len)
{
	struct nm_output *o = j->out;
	int fd = -1;

	if (!o)
		return;
	if (o->per_rank[stream]) {
		for (uint32_t i = 0; i < o->n; i++)
			if (j->ranks[i].rank == rank)
				fd = o->fd[i][stream];
	} else {
		fd = o->whole[stream];
	}
	for (size_t done = 0; fd >= 0 && done < len;) {
		ssize_t w = write(fd, (const uint8_t *)data + done,
				  len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!o->warned)
				qb_log(LOG_WARNING, "job %u: its output file: "
				       "%s (lines dropped; said once per "
				       "job)", j->id,
				       w < 0 ? strerror(errno) : "short write");
			o->warned = 1;
			return;
		}
		done += (size_t)w;
	}
}
