/*
 * ring.c — the node manager's side of launch: file chunks arrive in a
 * ring of slots in global memory (XFER-AND-SIGNAL from the manager); each
 * is written straight into its file on the RAM disk and then counted in
 * gv_consumed, which the manager's COMPARE-AND-WRITE reads before it
 * reuses the slot.  Only the manifest at the head of a job's stream is
 * buffered (until it decodes); file bytes are copied once, slot → file.
 *
 *   stream state  | chunk arrives                | stream complete
 *   --------------+------------------------------+--------------------------
 *   manifest      | buffer; decode when whole:   | malformed: job fails
 *                 |   job + directory created    |
 *   files         | write at (file, offset)      | all files whole: written
 *   failed        | count it, write nothing      | (FAIL already queued)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "nm.h"

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

static void stage_fail(struct nm *nm, const char *what, int rc)
{
	char why[1536];

	if (nm->stg_failed)
		return;
	nm->stg_failed = 1;
	if (nm->stg_fd >= 0)
		close(nm->stg_fd);
	nm->stg_fd = -1;
	snprintf(why, sizeof(why), "node %s: %s%s%s", nm->host->name, what,
		 rc ? ": " : "", rc ? storm_strerror(rc) : "");
	if (nm->stg_j)
		nm_job_fail(nm, nm->stg_j, why);
	else
		qb_log(LOG_ERR, "job %u: %s", nm->stg_job, why);
}

/* The manifest decoded: the job, its directory, file 0 next. */
static void stage_begin_files(struct nm *nm, st_manifest_t *m)
{
	struct nm_job *j = nm_job_new(nm, nm->stg_job, m);
	int rc;

	if (!j) {
		st_manifest_free(m);
		stage_fail(nm, "out of memory", 0);
		return;
	}
	qb_log(LOG_DEBUG, "job %u: manifest in, %u file(s) to write",
	       j->id, m->nfiles);
	nm->stg_j = j;
	nm->stg_file = 0;
	nm->stg_foff = 0;
	if ((rc = mkdirs(j->dir))) {
		char what[1400];

		snprintf(what, sizeof(what), "cannot make %s", j->dir);
		stage_fail(nm, what, rc);
	}
}

/* Write data into the files, in manifest order. */
static void feed_files(struct nm *nm, const uint8_t *data, size_t len)
{
	const st_manifest_t *m = nm->stg_j->m;

	while (!nm->stg_failed && nm->stg_file < m->nfiles) {
		uint64_t left = m->file_sizes[nm->stg_file] - nm->stg_foff;
		size_t n = len < left ? len : (size_t)left;

		if (nm->stg_fd < 0) {
			char path[2048];

			snprintf(path, sizeof(path), "%s/%s", nm->stg_j->dir,
				 m->file_names[nm->stg_file]);
			/* the directory is root's until every file is in
			 * (stream_end): nothing the user planted is here */
			nm->stg_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC |
					  O_CLOEXEC | O_NOFOLLOW,
					  m->file_modes[nm->stg_file] & 0777);
			if (nm->stg_fd < 0) {
				stage_fail(nm, "cannot create a job file",
					   -errno);
				return;
			}
			if (m->owned && fchown(nm->stg_fd, m->uid, m->gid)) {
				stage_fail(nm, "cannot give a job file to its "
					   "user", -errno);
				return;
			}
		}
		for (size_t done = 0; done < n;) {
			ssize_t w = write(nm->stg_fd, data + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				stage_fail(nm, "cannot write a job file",
					   w < 0 ? -errno : -EIO);
				return;
			}
			done += (size_t)w;
		}
		data += n;
		len -= n;
		nm->stg_foff += n;
		if (nm->stg_foff < m->file_sizes[nm->stg_file])
			return; /* the rest comes with the next chunk */
		close(nm->stg_fd);
		nm->stg_fd = -1;
		nm->stg_file++;
		nm->stg_foff = 0;
	}
	if (len && !nm->stg_failed)
		stage_fail(nm, "more bytes than the manifest declares", 0);
}

static void feed(struct nm *nm, const uint8_t *data, size_t len)
{
	st_manifest_t *m = NULL;
	size_t used;
	int rc;

	if (nm->stg_failed)
		return;
	if (nm->stg_j) {
		feed_files(nm, data, len);
		return;
	}
	if (nm->stg_len + len > nm->stg_cap) {
		size_t cap = nm->stg_cap ? nm->stg_cap : 65536;
		uint8_t *q;

		while (cap < nm->stg_len + len)
			cap *= 2;
		q = realloc(nm->stg, cap);
		if (!q) {
			stage_fail(nm, "out of memory", 0);
			return;
		}
		nm->stg = q;
		nm->stg_cap = cap;
	}
	memcpy(nm->stg + nm->stg_len, data, len);
	nm->stg_len += len;
	rc = st_manifest_decode(nm->stg, nm->stg_len, &used, &m);
	if (rc == -EAGAIN)
		return;
	if (rc) {
		stage_fail(nm, "malformed job manifest", 0);
		return;
	}
	stage_begin_files(nm, m);
	if (!nm->stg_failed && nm->stg_len > used)
		feed_files(nm, nm->stg + used, nm->stg_len - used);
}

static void stream_end(struct nm *nm)
{
	if (!nm->stg_failed && !nm->stg_j)
		stage_fail(nm, "job stream ended inside its manifest", 0);
	if (!nm->stg_failed)
		feed_files(nm, NULL, 0); /* files of size 0 at the end */
	if (!nm->stg_failed && nm->stg_file != nm->stg_j->m->nfiles)
		stage_fail(nm, "job stream shorter than its manifest", 0);
	/* the job's directory (0700) becomes its user's once it holds
	 * every file */
	if (!nm->stg_failed && nm->stg_j->m->owned &&
	    chown(nm->stg_j->dir, nm->stg_j->m->uid, nm->stg_j->m->gid))
		stage_fail(nm, "cannot give the job's directory to its user",
			   -errno);
	if (!nm->stg_failed)
		nm->stg_j->written = 1;
	if (nm->stg_fd >= 0)
		close(nm->stg_fd);
	nm->stg_fd = -1;
	nm->stg_j = NULL;
	nm->last_stg_job = nm->stg_job;
}

void nm_stage_forget(struct nm *nm, struct nm_job *j)
{
	if (nm->stg_j != j)
		return;
	if (nm->stg_fd >= 0)
		close(nm->stg_fd);
	nm->stg_fd = -1;
	nm->stg_j = NULL;
	nm->stg_failed = 1; /* the rest of its stream is counted, not kept */
}

void nm_take_chunks(struct nm *nm)
{
	for (;;) {
		const uint8_t *p;
		uint32_t job, idx, total, len;

		if (nm->stg_next >= nm->stg_total) {
			/* between streams: a new one starts at chunk 0, slot 0 */
			p = nm->gmem + nm->lay.ring;
			if (st_chunk_get_hdr(p, nm->lay.chunk, &job, &idx,
					     &total, &len) ||
			    idx != 0 || job <= nm->last_stg_job)
				return;
			nm->stg_job = job;
			nm->stg_next = 0;
			nm->stg_total = total;
			nm->stg_len = 0;
			nm->stg_failed = 0;
			nm->stg_j = NULL;
		}
		p = nm->gmem + nm->lay.ring +
		    (uint64_t)(nm->stg_next % nm->lay.slots) * nm->lay.chunk;
		if (st_chunk_get_hdr(p, nm->lay.chunk, &job, &idx, &total,
				     &len) ||
		    job != nm->stg_job || idx != nm->stg_next)
			return; /* not arrived yet */
		feed(nm, p + ST_CHUNK_HDR, len);
		nm->stg_next++;
		if (nm->stg_next == nm->stg_total)
			stream_end(nm);
		/* after the bytes are in their files: the slot may be reused */
		sp_gvar_write_local(nm->w, nm->lay.gv_consumed,
				    st_consumed(nm->stg_job, nm->stg_next));
	}
}
