/*
 * ring.c — the node's side of staging (ring.h).  Only the manifest at the head of a job's stream is
 * buffered (until it decodes); file bytes are copied once, slot → file.
 *
 *   stream state  | chunk arrives                | stream complete
 *   --------------+------------------------------+--------------------------
 *   manifest      | buffer; decode when whole:   | malformed: failed
 *                 |   owner takes it, directory  |
 *   files         | write at (file, offset)      | all files whole: written
 *   failed        | count it, write nothing      | (the owner told once)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "ring.h"

static int mkdirs(const char *path)
{
	char tmp[1200];

	if (strlen(path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	strcpy(tmp, path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static void stage_fail(struct nm_ring *r, const char *what, int rc)
{
	char why[1536];

	if (r->failed)
		return;
	r->failed = 1;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	snprintf(why, sizeof(why), "node %s: %s%s%s", r->node, what,
		 rc ? ": " : "", rc ? storm_strerror(rc) : "");
	r->ops.failed(r->ctx, r->job, r->m != NULL, why);
	r->m = NULL;
	r->dir = NULL;
}

/* The manifest decoded: the owner takes it, its directory, file 0 next. */
static void stage_begin_files(struct nm_ring *r, st_manifest_t *m)
{
	uint32_t nfiles = m->nfiles;
	const char *dir = r->ops.manifest(r->ctx, r->job, m);
	int rc;

	if (!dir) {
		stage_fail(r, "out of memory", 0);
		return;
	}
	qb_log(LOG_DEBUG, "job %u: manifest in, %u file(s) to write", r->job,
	       nfiles);
	r->m = m;
	r->dir = dir;
	r->file = 0;
	r->foff = 0;
	if ((rc = mkdirs(dir))) {
		char what[1400];

		snprintf(what, sizeof(what), "cannot make %s", dir);
		stage_fail(r, what, rc);
	}
}

/* Write data into the files, in manifest order. */
static void feed_files(struct nm_ring *r, const uint8_t *data, size_t len)
{
	const st_manifest_t *m = r->m;

	while (!r->failed && r->file < m->nfiles) {
		uint64_t left = m->file_sizes[r->file] - r->foff;
		size_t n = len < left ? len : (size_t)left;

		if (r->fd < 0) {
			char path[2048];

			snprintf(path, sizeof(path), "%s/%s", r->dir,
				 m->file_names[r->file]);
			/* the directory is root's until every file is in
			 * (stream_end): nothing the user planted is here */
			r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC |
					  O_CLOEXEC | O_NOFOLLOW,
					  m->file_modes[r->file] & 0777);
			if (r->fd < 0) {
				stage_fail(r, "cannot create a job file",
					   -errno);
				return;
			}
			if (m->owned && fchown(r->fd, m->uid, m->gid)) {
				stage_fail(r, "cannot give a job file to its "
					   "user", -errno);
				return;
			}
		}
		for (size_t done = 0; done < n;) {
			ssize_t w = write(r->fd, data + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				stage_fail(r, "cannot write a job file",
					   w < 0 ? -errno : -EIO);
				return;
			}
			done += (size_t)w;
		}
		data += n;
		len -= n;
		r->foff += n;
		if (r->foff < m->file_sizes[r->file])
			return; /* the rest comes with the next chunk */
		close(r->fd);
		r->fd = -1;
		r->file++;
		r->foff = 0;
	}
	if (len && !r->failed)
		stage_fail(r, "more bytes than the manifest declares", 0);
}

static void feed(struct nm_ring *r, const uint8_t *data, size_t len)
{
	st_manifest_t *m = NULL;
	size_t used;
	int rc;

	if (r->failed)
		return;
	if (r->m) {
		feed_files(r, data, len);
		return;
	}
	if (r->mf_len + len > r->mf_cap) {
		size_t cap = r->mf_cap ? r->mf_cap : 65536;
		uint8_t *q;

		while (cap < r->mf_len + len)
			cap *= 2;
		q = realloc(r->mf, cap);
		if (!q) {
			stage_fail(r, "out of memory", 0);
			return;
		}
		r->mf = q;
		r->mf_cap = cap;
	}
	memcpy(r->mf + r->mf_len, data, len);
	r->mf_len += len;
	rc = st_manifest_decode(r->mf, r->mf_len, &used, &m);
	if (rc == -EAGAIN)
		return;
	if (rc) {
		stage_fail(r, "malformed job manifest", 0);
		return;
	}
	stage_begin_files(r, m);
	if (!r->failed && r->mf_len > used)
		feed_files(r, r->mf + used, r->mf_len - used);
}

static void stream_end(struct nm_ring *r)
{
	if (!r->failed && !r->m)
		stage_fail(r, "job stream ended inside its manifest", 0);
	if (!r->failed)
		feed_files(r, NULL, 0); /* files of size 0 at the end */
	if (!r->failed && r->file != r->m->nfiles)
		stage_fail(r, "job stream shorter than its manifest", 0);
	/* the job's directory (0700) becomes its user's once it holds
	 * every file */
	if (!r->failed && r->m->owned &&
	    chown(r->dir, r->m->uid, r->m->gid))
		stage_fail(r, "cannot give the job's directory to its user",
			   -errno);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->last_job = r->job;
	r->last_inc = r->inc;
	if (!r->failed) {
		r->m = NULL;
		r->dir = NULL;
		r->ops.written(r->ctx, r->job);
	}
}

void nm_ring_forget(struct nm_ring *r, uint32_t job)
{
	if (r->job != job || !r->m)
		return;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->m = NULL;
	r->dir = NULL;
	r->failed = 1; /* the rest of its stream is counted, not kept */
}

void nm_ring_remove(const char *dir, const st_manifest_t *m)
{
	for (uint32_t i = 0; m && i < m->nfiles; i++) {
		char path[2048];

		snprintf(path, sizeof(path), "%s/%s", dir, m->file_names[i]);
		unlink(path);
	}
	rmdir(dir);
}

void nm_ring_init(struct nm_ring *r, sp_world_t *w, const st_layout_t *lay,
		  const char *node, const struct nm_ring_ops *ops, void *ctx)
{
	size_t size;

	memset(r, 0, sizeof(*r));
	r->w = w;
	r->gmem = sp_gmem(w, &size);
	r->lay = lay;
	r->node = node;
	r->ops = *ops;
	r->ctx = ctx;
	r->fd = -1;
}

void nm_ring_fini(struct nm_ring *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->mf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

void nm_ring_take(struct nm_ring *r)
{
	for (;;) {
		const uint8_t *p;
		uint32_t job, idx, total, len;

		if (r->next >= r->total) {
			/* between streams: a new one starts at chunk 0, slot 0 */
			p = r->gmem + r->lay->ring;
			/* slot 0 holds the newest stream sent here: one
			 * other than the last taken is new (a job staged
			 * again after a restart is a new incarnation) */
			if (st_chunk_get_hdr(p, r->lay->chunk, &job, &idx,
					     &total, &len) ||
			    idx != 0 || (job == r->last_job &&
					 st_chunk_inc(p) == r->last_inc) ||
			    (job < r->last_job && !st_chunk_inc(p)))
				return;
			r->job = job;
			r->inc = st_chunk_inc(p);
			r->next = 0;
			r->total = total;
			r->mf_len = 0;
			r->failed = 0;
			r->m = NULL;
			r->dir = NULL;
		}
		p = r->gmem + r->lay->ring +
		    (uint64_t)(r->next % r->lay->slots) * r->lay->chunk;
		if (st_chunk_get_hdr(p, r->lay->chunk, &job, &idx, &total,
				     &len) ||
		    job != r->job || st_chunk_inc(p) != r->inc ||
		    idx != r->next)
			return; /* not arrived yet */
		feed(r, p + ST_CHUNK_HDR, len);
		r->next++;
		if (r->next == r->total)
			stream_end(r);
		/* after the bytes are in their files: the slot may be reused */
		sp_gvar_write_local(r->w, r->lay->gv_consumed,
				    st_consumed_inc(r->job, r->inc, r->next));
	}
}
