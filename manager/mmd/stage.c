/*
 * stage.c — file staging (stage.h).  The stream (manifest, then every
 * file) is laid out as the slot images it is sent in, so each chunk goes
 * out from where the file was read into, without a copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "clock.h"
#include "stage.h"

#define STAGE_BUDGET_NS 50000000u /* launch work per slice, at most */

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The stream (manifest, then every file) laid out as the slot images it
 * is sent in — a chunk header, then up to chunk - header bytes — so that
 * each chunk goes out from where the file was read into, without a copy. */
struct chunked {
	uint8_t *img;
	uint32_t chunk, data;
	size_t off; /* stream bytes placed */
};

static uint8_t *at(struct chunked *c, size_t *room)
{
	size_t k = c->off / c->data, pos = c->off % c->data;

	*room = c->data - pos;
	return c->img + k * c->chunk + ST_CHUNK_HDR + pos;
}

static void put(struct chunked *c, const uint8_t *p, size_t n)
{
	while (n) {
		size_t room, m;
		uint8_t *dst = at(c, &room);

		m = n < room ? n : room;
		memcpy(dst, p, m);
		p += m;
		n -= m;
		c->off += m;
	}
}

/* Read n bytes of fd straight into the stream. */
static int put_file(struct chunked *c, int fd, size_t n)
{
	while (n) {
		size_t room;
		uint8_t *dst = at(c, &room);
		ssize_t r = read(fd, dst, n < room ? n : room);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO; /* it shrank under us */
		c->off += (size_t)r;
		n -= (size_t)r;
	}
	return 0;
}

/* Manifest + files, as chunk images in s. */
/* Each rank's first cpu on its node: the scheduler gives a job a block
 * of columns and its ranks take them in order, cpus_per_task each (a
 * node's columns are its cpus, from the node's first); NULL when the job
 * has no block. */
static uint32_t *rank_cpus(const mm_state_t *st, const mm_job_t *j)
{
	uint32_t *cpu, c = j->col, end = j->col + j->width;
	uint32_t cpt = j->cpus_per_task ? j->cpus_per_task : 1;
	mm_job_t p;

	/* a step's ranks have the cpus of its allocation's task slots */
	if (j->parent) {
		uint32_t *all, first;

		if (!j->width || mm_job_get(st, j->parent, &p) ||
		    j->col < p.col || j->col - p.col + j->ranks > p.ranks ||
		    !(all = rank_cpus(st, &p)))
			return NULL;
		first = j->col - p.col;
		if ((cpu = malloc(j->ranks * sizeof(*cpu))))
			memcpy(cpu, all + first, j->ranks * sizeof(*cpu));
		free(all);
		return cpu;
	}
	if (!j->width || !(cpu = malloc(j->ranks * sizeof(*cpu))))
		return NULL;
	for (uint32_t r = 0; r < j->ranks; r++) {
		uint32_t node = j->rank_node[r], base;

		while (c < end && mm_matrix_col_node(st, c) != node)
			c++;
		if (c >= end) {
			free(cpu);
			return NULL;
		}
		for (base = c; base > 0 &&
		     mm_matrix_col_node(st, base - 1) == node; base--)
			;
		cpu[r] = c - base;
		c += cpt;
	}
	return cpu;
}

static int build_stream(struct mmd_stage *s, const mm_state_t *st,
			const mm_job_t *j, char *why, size_t whylen)
{
	uint32_t nf = 1 + j->nfiles;
	st_manifest_t m = { .job = j->id, .uid = j->uid, .gid = j->gid,
			    .owned = 1, .ranks = j->ranks,
			    .rank_node = (uint32_t *)j->rank_node,
			    .argc = j->argc, .argv = (char **)j->argv,
			    .envc = j->envc, .env = (char **)j->env,
			    .cwd = (char *)j->cwd, .nfiles = nf,
			    .batch = j->batch,
			    .out_pat = (char *)j->out_path,
			    .err_pat = (char *)j->err_path,
			    .mem_limit = j->mem_bytes, .mpi = j->mpi,
			    .rank_cpu = rank_cpus(st, j),
			    .cpus_per_task = j->cpus_per_task,
			    .cpu_bind = j->cpu_bind,
			    .array_id = j->array_id,
			    .array_task = j->array_task,
			    .alloc = j->alloc, .parent = j->parent };
	struct chunked c = { .chunk = s->lay->chunk,
			     .data = s->lay->chunk - ST_CHUNK_HDR };
	int *fds = malloc(nf * sizeof(int));
	uint8_t *mf = NULL;
	size_t mflen = 0, total;
	uint32_t chunks = 0;
	int rc = 0;

	m.file_names = calloc(nf, sizeof(char *));
	m.file_sizes = calloc(nf, sizeof(uint64_t));
	m.file_modes = calloc(nf, sizeof(uint32_t));
	for (uint32_t i = 0; fds && i < nf; i++)
		fds[i] = -1;
	if (!fds || !m.file_names || !m.file_sizes || !m.file_modes) {
		rc = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	/* the bytes the client handed over, stored by digest (inputs.h);
	 * a blob missing here is asked of the peers (fetch.h) */
	if (j->ninputs != nf) {
		rc = -EINVAL;
		snprintf(why, whylen, "the job was submitted without its "
			 "inputs (by a client or manager of an earlier "
			 "version): submit it again");
		goto out;
	}
	for (uint32_t i = 0; i < nf; i++)
		if (!s->inputs || !mmd_blob_have(s->inputs, j->inputs[i].sha256,
						 j->inputs[i].size)) {
			rc = s->fetch ? mmd_fetch_step(s->fetch, j->id, nf,
						       j->inputs, why,
						       whylen) : 0;
			if (rc < 0)
				goto out; /* asked: next slice */
			if (rc == 0) {
				char note[300];

				snprintf(note, sizeof(note), "%.299s", why);
				rc = -ENOENT;
				snprintf(why, whylen, "its inputs are on no "
					 "live manager replica (%.300s): "
					 "submit it again", note);
				goto out;
			}
			rc = 0;
			break;
		}
	for (uint32_t i = 0; i < nf; i++) {
		const char *path = i ? j->files[i - 1] : j->argv[0];
		struct stat st;

		fds[i] = s->inputs ? mmd_blob_open(s->inputs,
						   j->inputs[i].sha256) :
				     -ENOENT;
		if (fds[i] < 0 || fstat(fds[i], &st) < 0 ||
		    (uint64_t)st.st_size != j->inputs[i].size) {
			rc = fds[i] < 0 ? fds[i] : -EIO;
			snprintf(why, whylen, "input %s is not in the "
				 "manager's store as submitted: %s", path,
				 storm_strerror(rc));
			qb_log(LOG_WARNING, "job %u: %s", j->id, why);
			goto out;
		}
		m.file_names[i] = (char *)base(path);
		m.file_sizes[i] = j->inputs[i].size;
		m.file_modes[i] = j->inputs[i].mode;
		/* a batch script runs whatever its mode, as sbatch's */
		if (i == 0 && j->alloc)
			m.file_modes[i] |= 0500;
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(m.file_names[k], m.file_names[i])) {
				rc = -EINVAL;
				snprintf(why, whylen, "two files named %s: "
					 "file names must differ",
					 m.file_names[i]);
				goto out;
			}
	}
	if ((rc = st_manifest_encode(&m, &mf, &mflen))) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	total = mflen;
	for (uint32_t i = 0; i < nf; i++)
		total += m.file_sizes[i];
	if ((total + c.data - 1) / c.data >= ST_CHUNKS_MAX) {
		rc = -EFBIG;
		snprintf(why, whylen, "%zu bytes of inputs: more than %u "
			 "chunks of %u bytes (chunk_kib)", total,
			 ST_CHUNKS_MAX - 1, c.data);
		goto out;
	}
	chunks = (uint32_t)((total + c.data - 1) / c.data);
	c.img = malloc((size_t)chunks * c.chunk);
	if (!c.img) {
		rc = -ENOMEM;
		snprintf(why, whylen, "out of memory for %zu bytes", total);
		goto out;
	}
	put(&c, mf, mflen);
	for (uint32_t i = 0; i < nf; i++) {
		rc = put_file(&c, fds[i], m.file_sizes[i]);
		if (rc) {
			snprintf(why, whylen, "cannot read %s on the manager: "
				 "%s", i ? j->files[i - 1] : j->argv[0],
				 storm_strerror(rc));
			free(c.img);
			goto out;
		}
	}
	for (uint32_t k = 0; k < chunks; k++) {
		st_chunk_put_hdr(c.img + (size_t)k * c.chunk, j->id, k, chunks,
				 (uint32_t)(k + 1 < chunks ? c.data :
					    total - (size_t)k * c.data));
		/* a restart's staging: a new incarnation of the stream */
		st_chunk_put_inc(c.img + (size_t)k * c.chunk, j->restarts);
	}
	s->inc = j->restarts;
	s->stream = c.img;
	s->len = total;
	s->total = chunks;
out:
	for (uint32_t i = 0; fds && i < nf; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(mf);
	free(m.file_names);
	free(m.file_sizes);
	free(m.file_modes);
	free(m.rank_cpu);
	return rc;
}

void mmd_stage_free(struct mmd_stage *s)
{
	free(s->stream);
	s->stream = NULL;
	s->job = 0;
}

static uint32_t inflight_max(const struct mmd_stage *s)
{
	return s->lay->slots < MMD_MAX_INFLIGHT ? s->lay->slots :
						   MMD_MAX_INFLIGHT;
}

static void stage_fail(struct mmd_stage *s, uint32_t job, const char *why)
{
	mm_op_t op = { .code = MM_OP_JOB_FAILED, .job = job, .reason = why };

	qb_log(LOG_WARNING, "job %u: launch failed: %s", job, why);
	s->propose(s->ctx, &op);
	mmd_stage_free(s);
}

void mmd_stage_step(struct mmd_stage *s, sp_world_t *w, const mm_state_t *st,
		    uint64_t slice, const uint32_t *active, uint32_t nactive)
{
	uint32_t data_len = s->lay->chunk - ST_CHUNK_HDR;
	struct mmd_job *r;
	uint64_t until = mmd_mono_ns() + STAGE_BUDGET_NS;
	mm_job_t j;
	char why[512];

	if (s->job && (mm_job_get(st, s->job, &j) ||
		       j.state != MM_JOB_STAGING)) {
		/* cancelled or failed meanwhile: wait out what is in flight */
		for (uint32_t k = 0; k < inflight_max(s); k++)
			if (s->busy[k] &&
			    sp_test_event(w, MMD_SLOT_EV + k, 50) != -EAGAIN)
				s->busy[k] = 0;
		mmd_stage_free(s);
	}
	if (!s->job) {
		uint32_t id = 0;

		for (uint32_t i = 0; i < nactive && !id; i++) {
			if (mm_job_get(st, active[i], &j) ||
			    j.state != MM_JOB_STAGING)
				continue;
			r = mmd_jobs_find(s->jobs, j.id);
			if (!r || !r->staged_proposed) {
				id = j.id;
			} else if (slice - r->staged_slice >=
				   MMD_RETRY_SLICES) {
				/* staged everywhere (the compare said so),
				 * but the proposal was lost: again */
				mm_op_t op = { .code = MM_OP_JOB_STAGED,
					       .job = j.id };

				r->staged_slice = slice;
				s->propose(s->ctx, &op);
			}
		}
		if (!id || mm_job_get(st, id, &j) ||
		    !(r = mmd_jobs_get(s->jobs, id)))
			return;
		r->t_stage = mmd_mono_ns();
		r->t_staged = r->t_end = 0;
		switch (build_stream(s, st, &j, why, sizeof(why))) {
		case 0:
			break;
		case -EAGAIN:
			return; /* its inputs are being fetched: next slice */
		default:
			stage_fail(s, j.id, why);
			return;
		}
		s->job = j.id;
		s->next = 0;
		s->started_ns = mmd_mono_ns();
	}
	while (s->next < s->total && mmd_mono_ns() < until) {
		uint32_t c = s->next, k = c % inflight_max(s);
		uint32_t slot = c % s->lay->slots;
		size_t off = (size_t)c * data_len;
		uint32_t len = (uint32_t)(s->len - off < data_len ?
					  s->len - off : data_len);
		const uint8_t *img = s->stream + (size_t)c * s->lay->chunk;
		int rc;

		if (s->busy[k]) {
			uint64_t now = mmd_mono_ns();

			rc = sp_test_event(w, MMD_SLOT_EV + k,
					   now >= until ? 0 :
					   (int)((until - now) / 1000000u) + 1);
			if (rc == -EAGAIN || rc == -ETIMEDOUT)
				return; /* next slice */
			s->busy[k] = 0;
			if (rc) {
				snprintf(why, sizeof(why), "file multicast "
					 "failed: %s", storm_strerror(rc));
				stage_fail(s, j.id, why);
				return;
			}
		}
		if (c >= s->lay->slots) {
			/* the slot's previous chunk is on every node's disk */
			rc = mmd_caw(s->caw, w, slice, j.nodes,
				     s->lay->gv_consumed, SP_CMP_GE,
				     st_consumed_inc(j.id, s->inc,
						     c - s->lay->slots + 1),
				     SP_NO_WRITE, 0, 1000);
			if (rc != 1) {
				qb_log(LOG_DEBUG, "job %u: chunk %u waits for "
				       "its slot (%d)", j.id, c, rc);
				return; /* not yet, or a node left: retry */
			}
		}
		rc = sp_xfer_and_signal(w, j.nodes, img,
					ST_CHUNK_HDR + len, s->lay->ring +
					(uint64_t)slot * s->lay->chunk,
					MMD_SLOT_EV + k, ST_EV_CHUNK, why,
					sizeof(why));
		if (rc) {
			/* a node left the view: the view check fails the job */
			qb_log(LOG_DEBUG, "job %u: chunk %u: %s", j.id, c, why);
			return;
		}
		s->busy[k] = 1;
		s->next++;
	}
	if (s->next < s->total)
		return;
	if (mmd_caw(s->caw, w, slice, j.nodes, s->lay->gv_consumed,
		    SP_CMP_GE, st_consumed_inc(j.id, s->inc, s->total),
		    SP_NO_WRITE, 0,
		    1000) == 1) {
		mm_op_t op = { .code = MM_OP_JOB_STAGED, .job = j.id };

		for (uint32_t k = 0; k < inflight_max(s); k++)
			if (s->busy[k] &&
			    sp_test_event(w, MMD_SLOT_EV + k, 50) != -EAGAIN)
				s->busy[k] = 0;
		qb_log(LOG_INFO, "job %u: %zu bytes on %u node(s) in %.1f ms",
		       j.id, s->len, sp_nodeset_count(j.nodes),
		       (double)(mmd_mono_ns() - s->started_ns) / 1e6);
		mmd_phist_add(&s->launch, mmd_mono_ns() - s->started_ns);
		if ((r = mmd_jobs_get(s->jobs, j.id))) {
			r->t_staged = mmd_mono_ns();
			r->staged_proposed = 1;
			r->staged_slice = slice;
		}
		s->propose(s->ctx, &op);
		mmd_stage_free(s);
	}
}
