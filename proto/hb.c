/*
 * hb.c — the byte formats manager and node managers exchange through
 * global memory: the heartbeat block, file-ring chunk headers, output
 * mailboxes and the job manifest.  Little endian, field by field through
 * bounds-checked helpers; a decoder never trusts a length it has not
 * checked against what is left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storm_proto.h"

#define HB_MAGIC 0x33424853u  /* "SHB3": entries with a checkpoint */
#define MF_MAGIC 0x31464d53u  /* "SMF1" */
#define MF_MAGIC2 0x32464d53u /* "SMF2": SMF1 + the owner after the job id,
			       * batch output patterns, the memory limit
			       * and the ranks' cpus at the end */
#define MF_MAGIC3 0x33464d53u /* "SMF3": SMF2 + u8 mpi at the end */
#define MF_MAGIC4 0x34464d53u /* "SMF4": SMF3 + u32 cpus per task, u8
			       * cpu binding, u32 array id, u32 array task
			       * at the end */
#define MF_MAGIC5 0x35464d53u /* "SMF5": SMF4 + u8 alloc, u32 parent at
			       * the end */
#define MF_MAX_STR (64u << 10)
#define MF_MAX_ARR 65536u

struct rd {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if (r->bad || r->len - r->off < n) {
		r->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += n;
	return v;
}

static void wr_n(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- heartbeat ----------------------------------------------------------- */

/* magic u32 | slice u64 | row u16 | lo u32 | hi u32 | njobs u32 | flags u32
 * then njobs x (job u32 | state u8 | row u16 | done u32 | ckpt u32 |
 * restore u32 | inc u32) */
int st_hb_encode(uint8_t *buf, size_t cap, const st_hb_t *hb)
{
	size_t need = ST_HB_HDR + (size_t)hb->njobs * ST_HB_ENTRY;

	if (need > cap || hb->njobs > st_hb_capacity(cap))
		return -ENOSPC;
	wr_n(buf, HB_MAGIC, 4);
	wr_n(buf + 4, hb->slice, 8);
	wr_n(buf + 12, hb->row, 2);
	wr_n(buf + 14, hb->lo, 4);
	wr_n(buf + 18, hb->hi, 4);
	wr_n(buf + 22, hb->njobs, 4);
	wr_n(buf + 26, hb->flags, 4);
	for (uint32_t i = 0; i < hb->njobs; i++) {
		uint8_t *e = buf + ST_HB_HDR + (size_t)ST_HB_ENTRY * i;

		wr_n(e, hb->jobs[i].job, 4);
		e[4] = hb->jobs[i].state;
		wr_n(e + 5, hb->jobs[i].row, 2);
		wr_n(e + 7, hb->jobs[i].done, 4);
		wr_n(e + 11, hb->jobs[i].ckpt, 4);
		wr_n(e + 15, hb->jobs[i].restore, 4);
		wr_n(e + 19, hb->jobs[i].inc, 4);
	}
	return (int)need;
}

int st_hb_decode(const uint8_t *buf, size_t len, st_hb_t *hb)
{
	struct rd r = { buf, len, 0, 0 };
	uint32_t n;

	if (rd_n(&r, 4) != HB_MAGIC)
		return -STORM_EPROTO;
	hb->slice = rd_n(&r, 8);
	hb->row = (uint16_t)rd_n(&r, 2);
	hb->lo = (uint32_t)rd_n(&r, 4);
	hb->hi = (uint32_t)rd_n(&r, 4);
	n = (uint32_t)rd_n(&r, 4);
	hb->flags = (uint32_t)rd_n(&r, 4);
	if (r.bad || n > st_hb_capacity(len) || hb->lo > hb->hi)
		return -STORM_EPROTO;
	for (uint32_t i = 0; i < n; i++) {
		st_hb_job_t *j = &hb->jobs[i];

		j->job = (uint32_t)rd_n(&r, 4);
		j->state = (uint8_t)rd_n(&r, 1);
		j->row = (uint16_t)rd_n(&r, 2);
		j->done = (uint32_t)rd_n(&r, 4);
		j->ckpt = (uint32_t)rd_n(&r, 4);
		j->restore = (uint32_t)rd_n(&r, 4);
		j->inc = (uint32_t)rd_n(&r, 4);
		if (j->state != ST_HB_STAGING && j->state != ST_HB_ACTIVE)
			r.bad = 1;
	}
	if (r.bad)
		return -STORM_EPROTO;
	hb->njobs = n;
	return 0;
}

size_t st_hb_need(const uint8_t *buf, size_t len)
{
	struct rd r = { buf, len, 0, 0 };
	uint64_t n;

	if (rd_n(&r, 4) != HB_MAGIC)
		return 0;
	r.off = 22;
	n = rd_n(&r, 4);
	if (r.bad)
		return 0;
	return ST_HB_HDR + (size_t)n * ST_HB_ENTRY;
}

int st_hb_same(const uint8_t *a, const uint8_t *b, size_t len)
{
	/* the slice is bytes 4..11, after the magic */
	return len >= ST_HB_HDR && memcmp(a, b, 4) == 0 &&
	       memcmp(a + 12, b + 12, len - 12) == 0;
}

/* ---- exit records ------------------------------------------------------------ */

void st_exit_encode(uint8_t out[ST_EXIT_LEN], const st_exit_t *e)
{
	wr_n(out, (uint32_t)e->status, 4);
	wr_n(out + 4, e->utime_us, 8);
	wr_n(out + 12, e->stime_us, 8);
	wr_n(out + 20, e->maxrss_kib, 8);
}

int st_exit_decode(const uint8_t *p, size_t len, st_exit_t *e)
{
	struct rd r = { p, len, 0, 0 };

	if (len != 4 && len != ST_EXIT_LEN)
		return -STORM_EPROTO;
	*e = (st_exit_t){ .status = (int32_t)(uint32_t)rd_n(&r, 4) };
	if (len == ST_EXIT_LEN) {
		e->utime_us = rd_n(&r, 8);
		e->stime_us = rd_n(&r, 8);
		e->maxrss_kib = rd_n(&r, 8);
	}
	return 0;
}

/* ---- chunks ---------------------------------------------------------------- */

void st_chunk_put_hdr(uint8_t *slot, uint32_t job, uint32_t index,
		      uint32_t total, uint32_t len)
{
	wr_n(slot, 0x4b4843u, 4); /* "CHK" */
	wr_n(slot + 4, job, 4);
	wr_n(slot + 8, index, 4);
	wr_n(slot + 12, total, 4);
	wr_n(slot + 16, len, 4);
	wr_n(slot + 20, 0, 4);
}

int st_chunk_get_hdr(const uint8_t *slot, uint32_t chunk_size, uint32_t *job,
		     uint32_t *index, uint32_t *total, uint32_t *len)
{
	struct rd r = { slot, ST_CHUNK_HDR, 0, 0 };

	if (chunk_size < ST_CHUNK_HDR || rd_n(&r, 4) != 0x4b4843u)
		return -STORM_EPROTO;
	*job = (uint32_t)rd_n(&r, 4);
	*index = (uint32_t)rd_n(&r, 4);
	*total = (uint32_t)rd_n(&r, 4);
	*len = (uint32_t)rd_n(&r, 4);
	if (r.bad || *index >= *total || *len > chunk_size - ST_CHUNK_HDR)
		return -STORM_EPROTO;
	return 0;
}

/* ---- output mailboxes -------------------------------------------------- */

void st_box_put_hdr(uint8_t *box, uint64_t seq, uint32_t nbytes)
{
	wr_n(box, seq, 8);
	wr_n(box + 8, nbytes, 4);
}

int st_box_get_hdr(const uint8_t *box, size_t boxlen, uint64_t *seq,
		   uint32_t *nbytes)
{
	struct rd r = { box, boxlen, 0, 0 };

	*seq = rd_n(&r, 8);
	*nbytes = (uint32_t)rd_n(&r, 4);
	if (r.bad || *nbytes > boxlen - ST_BOX_HDR)
		return -STORM_EPROTO;
	return 0;
}

void st_box_put_rec(uint8_t *p, uint8_t type, uint32_t job, uint32_t rank,
		    const void *data, uint32_t len)
{
	p[0] = type;
	wr_n(p + 1, job, 4);
	wr_n(p + 5, rank, 4);
	wr_n(p + 9, len, 4);
	if (len)
		memcpy(p + ST_REC_HDR, data, len);
}

int st_box_next(const uint8_t *box, size_t boxlen, size_t *off,
		st_rec_t *rec)
{
	struct rd r = { box, boxlen, *off, 0 };

	if (*off >= boxlen)
		return 0;
	rec->type = (uint8_t)rd_n(&r, 1);
	rec->job = (uint32_t)rd_n(&r, 4);
	rec->rank = (uint32_t)rd_n(&r, 4);
	rec->len = (uint32_t)rd_n(&r, 4);
	if (r.bad || rec->type < ST_REC_STDOUT || rec->type > ST_REC_PMI ||
	    rec->len > boxlen - r.off)
		return -STORM_EPROTO;
	rec->data = box + r.off;
	*off = r.off + rec->len;
	return 1;
}

int st_ckpt_rec_encode(uint8_t *out, size_t cap, const st_ckpt_rec_t *c)
{
	size_t wl = c->rc && c->why ? strlen(c->why) : 0;

	if (wl > 1024)
		wl = 1024;
	if (cap < ST_CKPT_REC_LEN + wl)
		return -ENOSPC;
	wr_n(out, c->epoch, 4);
	wr_n(out + 4, (uint32_t)c->rc, 4);
	wr_n(out + 8, c->bytes, 8);
	wr_n(out + 16, c->stop_us, 4);
	wr_n(out + 20, c->levels, 4);
	if (wl)
		memcpy(out + ST_CKPT_REC_LEN, c->why, wl);
	return (int)(ST_CKPT_REC_LEN + wl);
}

int st_ckpt_rec_decode(const uint8_t *p, size_t len, st_ckpt_rec_t *c)
{
	struct rd r = { p, len, 0, 0 };

	c->epoch = (uint32_t)rd_n(&r, 4);
	c->rc = (int32_t)(uint32_t)rd_n(&r, 4);
	c->bytes = rd_n(&r, 8);
	c->stop_us = (uint32_t)rd_n(&r, 4);
	c->levels = (uint32_t)rd_n(&r, 4);
	if (r.bad || !c->epoch || len - ST_CKPT_REC_LEN > 1024 ||
	    (!c->rc && len != ST_CKPT_REC_LEN) ||
	    (c->rc && len == ST_CKPT_REC_LEN))
		return -STORM_EPROTO;
	c->why = (const char *)p + ST_CKPT_REC_LEN;
	c->why_len = (uint32_t)(len - ST_CKPT_REC_LEN);
	return 0;
}

void st_rerun_encode(uint8_t out[ST_RERUN_LEN], const st_rerun_t *x)
{
	wr_n(out, x->epoch, 4);
	wr_n(out + 4, x->off[0], 8);
	wr_n(out + 12, x->off[1], 8);
}

int st_rerun_decode(const uint8_t *p, size_t len, st_rerun_t *x)
{
	struct rd r = { p, len, 0, 0 };

	x->epoch = (uint32_t)rd_n(&r, 4);
	x->off[0] = rd_n(&r, 8);
	x->off[1] = rd_n(&r, 8);
	return r.bad || len != ST_RERUN_LEN ? -STORM_EPROTO : 0;
}

/* ---- manifest ------------------------------------------------------------- */

struct wb {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

static void wb_put(struct wb *b, const void *d, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void wb_u(struct wb *b, uint64_t v, unsigned n)
{
	uint8_t t[8];

	wr_n(t, v, n);
	wb_put(b, t, n);
}

static void wb_str(struct wb *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	wb_u(b, n, 4);
	wb_put(b, s, n);
}

int st_manifest_encode(const st_manifest_t *m, uint8_t **out, size_t *len)
{
	struct wb b = { 0 };

	wb_u(&b, MF_MAGIC5, 4);
	wb_u(&b, 0, 4); /* total length, patched below */
	wb_u(&b, m->job, 4);
	wb_u(&b, m->uid, 4);
	wb_u(&b, m->gid, 4);
	wb_u(&b, m->ranks, 4);
	for (uint32_t i = 0; i < m->ranks; i++)
		wb_u(&b, m->rank_node[i], 4);
	wb_u(&b, m->argc, 4);
	for (uint32_t i = 0; i < m->argc; i++)
		wb_str(&b, m->argv[i]);
	wb_u(&b, m->envc, 4);
	for (uint32_t i = 0; i < m->envc; i++)
		wb_str(&b, m->env[i]);
	wb_str(&b, m->cwd);
	wb_u(&b, m->nfiles, 4);
	for (uint32_t i = 0; i < m->nfiles; i++) {
		wb_str(&b, m->file_names[i]);
		wb_u(&b, m->file_sizes[i], 8);
		wb_u(&b, m->file_modes[i], 4);
	}
	wb_u(&b, m->batch ? 1 : 0, 1);
	wb_str(&b, m->out_pat);
	wb_str(&b, m->err_pat);
	wb_u(&b, m->mem_limit, 8);
	wb_u(&b, m->rank_cpu ? 1 : 0, 1);
	for (uint32_t i = 0; m->rank_cpu && i < m->ranks; i++)
		wb_u(&b, m->rank_cpu[i], 4);
	wb_u(&b, m->mpi, 1);
	wb_u(&b, m->cpus_per_task ? m->cpus_per_task : 1, 4);
	wb_u(&b, m->cpu_bind, 1);
	wb_u(&b, m->array_id, 4);
	wb_u(&b, m->array_task, 4);
	wb_u(&b, m->alloc ? 1 : 0, 1);
	wb_u(&b, m->parent, 4);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	wr_n(b.p + 4, b.len, 4);
	*out = b.p;
	*len = b.len;
	return 0;
}

static char *rd_str(struct rd *r)
{
	uint64_t n = rd_n(r, 4);
	char *s;

	if (r->bad || n > MF_MAX_STR || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		r->bad = 1;
		return NULL;
	}
	memcpy(s, r->p + r->off, n);
	s[n] = '\0';
	r->off += n;
	/* a name with a NUL inside would mean something else on disk */
	if (strlen(s) != n)
		r->bad = 1;
	return s;
}

static char **rd_strs(struct rd *r, uint32_t *count)
{
	uint64_t n = rd_n(r, 4);
	char **v;

	if (r->bad || n > MF_MAX_ARR) {
		r->bad = 1;
		return NULL;
	}
	v = calloc(n + 1, sizeof(*v));
	if (!v) {
		r->bad = 1;
		return NULL;
	}
	*count = (uint32_t)n;
	for (uint64_t i = 0; i < n && !r->bad; i++)
		v[i] = rd_str(r);
	return v;
}

static void free_strs(char **v, uint32_t n)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void st_manifest_free(st_manifest_t *m)
{
	if (!m)
		return;
	free(m->rank_node);
	free_strs(m->argv, m->argc);
	free_strs(m->env, m->envc);
	free(m->cwd);
	free_strs(m->file_names, m->nfiles);
	free(m->file_sizes);
	free(m->file_modes);
	free(m->out_pat);
	free(m->err_pat);
	free(m->rank_cpu);
	free(m);
}

int st_manifest_decode(const uint8_t *p, size_t len, size_t *used,
		       st_manifest_t **out)
{
	struct rd r = { p, len, 0, 0 };
	st_manifest_t *m;
	uint64_t total, n, magic;

	if (len < 8)
		return -EAGAIN;
	magic = rd_n(&r, 4);
	if (magic != MF_MAGIC && magic != MF_MAGIC2 && magic != MF_MAGIC3 &&
	    magic != MF_MAGIC4 && magic != MF_MAGIC5)
		return -STORM_EPROTO;
	total = rd_n(&r, 4);
	if (total < 8)
		return -STORM_EPROTO;
	if (total > len)
		return -EAGAIN;
	r.len = (size_t)total;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->job = (uint32_t)rd_n(&r, 4);
	if (magic == MF_MAGIC2 || magic == MF_MAGIC3 ||
	    magic == MF_MAGIC4 || magic == MF_MAGIC5) {
		m->uid = (uint32_t)rd_n(&r, 4);
		m->gid = (uint32_t)rd_n(&r, 4);
		m->owned = 1;
	}
	n = rd_n(&r, 4);
	if (n == 0 || n > MF_MAX_ARR || n * 4 > r.len - r.off)
		r.bad = 1;
	if (!r.bad) {
		m->ranks = (uint32_t)n;
		m->rank_node = malloc(n * sizeof(*m->rank_node));
		if (!m->rank_node)
			r.bad = 1;
		for (uint64_t i = 0; !r.bad && i < n; i++)
			m->rank_node[i] = (uint32_t)rd_n(&r, 4);
	}
	if (!r.bad)
		m->argv = rd_strs(&r, &m->argc);
	if (!r.bad)
		m->env = rd_strs(&r, &m->envc);
	if (!r.bad)
		m->cwd = rd_str(&r);
	n = r.bad ? 0 : rd_n(&r, 4);
	if (!r.bad && (n == 0 || n > 1024))
		r.bad = 1;
	if (!r.bad) {
		m->file_names = calloc(n + 1, sizeof(char *));
		m->file_sizes = calloc(n, sizeof(uint64_t));
		m->file_modes = calloc(n, sizeof(uint32_t));
		if (!m->file_names || !m->file_sizes || !m->file_modes)
			r.bad = 1;
		else
			m->nfiles = (uint32_t)n;
	}
	for (uint32_t i = 0; !r.bad && i < m->nfiles; i++) {
		m->file_names[i] = rd_str(&r);
		m->file_sizes[i] = rd_n(&r, 8);
		m->file_modes[i] = (uint32_t)rd_n(&r, 4) & 07777;
		if (!r.bad && (!m->file_names[i][0] ||
			       strchr(m->file_names[i], '/') ||
			       !strcmp(m->file_names[i], ".") ||
			       !strcmp(m->file_names[i], "..")))
			r.bad = 1; /* a plain name in the job's directory */
	}
	if (!r.bad && (magic == MF_MAGIC2 || magic == MF_MAGIC3 ||
	    magic == MF_MAGIC4 || magic == MF_MAGIC5)) {
		uint64_t batch = rd_n(&r, 1);

		if (batch > 1)
			r.bad = 1;
		m->batch = (int)batch;
		if (!r.bad)
			m->out_pat = rd_str(&r);
		if (!r.bad)
			m->err_pat = rd_str(&r);
		m->mem_limit = r.bad ? 0 : rd_n(&r, 8);
		n = r.bad ? 0 : rd_n(&r, 1);
		if (n > 1 || (n && (uint64_t)m->ranks * 4 > r.len - r.off))
			r.bad = 1;
		if (!r.bad && n) {
			m->rank_cpu = malloc(m->ranks * sizeof(*m->rank_cpu));
			if (!m->rank_cpu)
				r.bad = 1;
			for (uint32_t i = 0; !r.bad && i < m->ranks; i++)
				m->rank_cpu[i] = (uint32_t)rd_n(&r, 4);
		}
		/* an older manager's (SMF2) ends here: no MPI */
		if (!r.bad && (magic == MF_MAGIC3 || magic == MF_MAGIC4 ||
			       magic == MF_MAGIC5)) {
			n = rd_n(&r, 1);
			if (n > ST_MPI_PMIX)
				r.bad = 1;
			m->mpi = (uint8_t)n;
		}
		m->cpus_per_task = 1;
		if (!r.bad && (magic == MF_MAGIC4 || magic == MF_MAGIC5)) {
			n = rd_n(&r, 4);
			if (n == 0 || n > 4096)
				r.bad = 1;
			m->cpus_per_task = (uint32_t)n;
			n = rd_n(&r, 1);
			if (n > ST_BIND_NONE)
				r.bad = 1;
			m->cpu_bind = (uint8_t)n;
			m->array_id = (uint32_t)rd_n(&r, 4);
			m->array_task = (uint32_t)rd_n(&r, 4);
		}
		if (!r.bad && magic == MF_MAGIC5) {
			n = rd_n(&r, 1);
			if (n > 1)
				r.bad = 1;
			m->alloc = (uint8_t)n;
			m->parent = (uint32_t)rd_n(&r, 4);
			if (m->alloc && m->parent)
				r.bad = 1;
		}
	}
	if (!r.bad && (m->argc == 0 || r.off != r.len))
		r.bad = 1;
	if (r.bad) {
		st_manifest_free(m);
		return -STORM_EPROTO;
	}
	*used = r.off;
	*out = m;
	return 0;
}

/* ---- PMI store chunks ----------------------------------------------------- */

void st_pmi_chunk_put(uint8_t *p, const st_pmi_chunk_t *c)
{
	st_put32(p, ST_PMI_MAGIC);
	st_put32(p + 4, c->job);
	st_put32(p + 8, c->inc);
	st_put32(p + 12, c->fence);
	st_put64(p + 16, c->seq);
	st_put32(p + 24, c->off);
	st_put32(p + 28, c->total);
	st_put32(p + 32, c->len);
	st_put32(p + 36, 0);
}

int st_pmi_chunk_get(const uint8_t *p, size_t room, st_pmi_chunk_t *c)
{
	if (room < ST_PMI_HDR || st_get32(p) != ST_PMI_MAGIC)
		return -STORM_EPROTO;
	c->job = st_get32(p + 4);
	c->inc = st_get32(p + 8);
	c->fence = st_get32(p + 12);
	c->seq = st_get64(p + 16);
	c->off = st_get32(p + 24);
	c->total = st_get32(p + 28);
	c->len = st_get32(p + 32);
	if (c->len > room - ST_PMI_HDR || c->off > c->total ||
	    c->len > c->total - c->off || !c->seq)
		return -STORM_EPROTO;
	return 0;
}

/* ---- rank 0's stdin chunks ------------------------------------------------ */

void st_stdin_chunk_put(uint8_t *p, const st_stdin_chunk_t *c)
{
	st_put32(p, ST_STDIN_MAGIC);
	st_put32(p + 4, c->job);
	st_put64(p + 8, c->seq);
	st_put32(p + 16, c->flags);
	st_put32(p + 20, c->len);
	st_put64(p + 24, 0);
}

int st_stdin_chunk_get(const uint8_t *p, size_t room, st_stdin_chunk_t *c)
{
	if (room < ST_STDIN_HDR || st_get32(p) != ST_STDIN_MAGIC)
		return -STORM_EPROTO;
	c->job = st_get32(p + 4);
	c->seq = st_get64(p + 8);
	c->flags = st_get32(p + 16);
	c->len = st_get32(p + 20);
	if (!c->seq || (c->flags & ~ST_STDIN_EOF) ||
	    c->len > room - ST_STDIN_HDR || st_get64(p + 24))
		return -STORM_EPROTO;
	return 0;
}

void st_stdin_ack_put(uint8_t p[ST_STDIN_ACK_LEN], const st_stdin_ack_t *a)
{
	st_put64(p, a->seq);
	st_put32(p + 8, a->job);
	st_put32(p + 12, a->flags);
}

int st_stdin_ack_get(const uint8_t p[ST_STDIN_ACK_LEN], st_stdin_ack_t *a)
{
	a->seq = st_get64(p);
	a->job = st_get32(p + 8);
	a->flags = st_get32(p + 12);
	return a->flags & ~ST_STDIN_CLOSED ? -STORM_EPROTO : 0;
}
