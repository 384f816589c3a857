/*
 * opcodec.c — the wire form of mm_op_t, for the replication log: replicas
 * of different builds must read each other's operations, so the format is
 * explicit, versioned and never a cast struct.
 *
 * Frame (little-endian):
 *
 *   u8 magic 'M' | u8 version (1) | u16 opcode | fields of the opcode
 *
 *   SUBMIT      spec: str name, u32 uid, u32 gid, u32 ranks, str nodelist,
 *               strv argv, strv env, str cwd, strv files, u8 batch (0/1),
 *               str out_path, str err_path, u64 time_limit_ms
 *   CANCEL      u32 job, u32 uid
 *   TICK        u64 slice, u64 now_ms
 *   NODE_DOWN   u32 node, str reason
 *   NODE_UP     u32 node
 *   JOB_STAGED  u32 job
 *   JOB_EXITED  u32 job, u32 n, n x i32 status
 *   JOB_FAILED  u32 job, str reason
 *
 *   str  = u32 length (0xffffffff: NULL) + bytes, no NUL inside
 *   strv = u32 count + count x str
 *
 * Key invariant: the encoding is canonical — whatever decode accepts,
 * encode writes back byte for byte (no trailing bytes, no embedded NUL,
 * batch exactly 0 or 1) — and the decoder checks every length against the
 * bytes left and the limits of mm_internal.h before it copies anything.
 * Opcodes and versions are looked up in tables; a new version adds a table.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

#define OP_MAGIC 0x4D
#define OP_VERSION 1
#define STR_NULL UINT32_MAX

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */
/* ------------------------------------------------------------------------ */

/* A failed put records the first error; later puts do nothing, so an
 * encoder checks once at the end. */
struct wr {
	uint8_t *buf;
	size_t cap, n;
	int err;
};

static void put_bytes(struct wr *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (w->cap - w->n < n) {
		w->err = -ENOSPC;
		return;
	}
	if (n)
		memcpy(w->buf + w->n, p, n);
	w->n += n;
}

static void put_le(struct wr *w, uint64_t v, int bytes)
{
	uint8_t b[8];

	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, (size_t)bytes);
}

static void put_u8(struct wr *w, uint8_t v)
{
	put_le(w, v, 1);
}

static void put_u16(struct wr *w, uint16_t v)
{
	put_le(w, v, 2);
}

static void put_u32(struct wr *w, uint32_t v)
{
	put_le(w, v, 4);
}

static void put_u64(struct wr *w, uint64_t v)
{
	put_le(w, v, 8);
}

static void put_str(struct wr *w, const char *s)
{
	size_t n;

	if (!s) {
		put_u32(w, STR_NULL);
		return;
	}
	n = strlen(s);
	if (n > MM_STR_MAX) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	put_u32(w, (uint32_t)n);
	put_bytes(w, s, n);
}

static void put_strv(struct wr *w, uint32_t n, const char *const *v)
{
	if (n > MM_ARGS_MAX || (n && !v)) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	put_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		put_str(w, v[i]);
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */
/* ------------------------------------------------------------------------ */

/* Decoded strings and arrays are carved from one arena sized up front
 * from the input length (see arena_bound()), so nothing a hostile length
 * says is ever allocated. */
struct rd {
	const uint8_t *buf;
	size_t len, pos;
	uint8_t *arena;
	size_t acap, aused;
	int bad;
};

static const uint8_t *get_bytes(struct rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return NULL;
	}
	p = r->buf + r->pos;
	r->pos += n;
	return p;
}

static uint64_t get_le(struct rd *r, int bytes)
{
	const uint8_t *p = get_bytes(r, (size_t)bytes);
	uint64_t v = 0;

	for (int i = 0; p && i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint8_t get_u8(struct rd *r)
{
	return (uint8_t)get_le(r, 1);
}

static uint16_t get_u16(struct rd *r)
{
	return (uint16_t)get_le(r, 2);
}

static uint32_t get_u32(struct rd *r)
{
	return (uint32_t)get_le(r, 4);
}

static uint64_t get_u64(struct rd *r)
{
	return get_le(r, 8);
}

static void *arena_alloc(struct rd *r, size_t n, size_t align)
{
	size_t at = (r->aused + align - 1) & ~(align - 1);

	if (r->bad || at > r->acap || r->acap - at < n) {
		r->bad = 1;
		return NULL;
	}
	r->aused = at + n;
	return r->arena + at;
}

static const char *get_str(struct rd *r)
{
	uint32_t n = get_u32(r);
	const uint8_t *p;
	char *s;

	if (r->bad || n == STR_NULL)
		return NULL;
	if (n > MM_STR_MAX) {
		r->bad = 1;
		return NULL;
	}
	p = get_bytes(r, n);
	if (!p || memchr(p, 0, n)) { /* a NUL inside would not round-trip */
		r->bad = 1;
		return NULL;
	}
	s = arena_alloc(r, (size_t)n + 1, 1);
	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static const char *const *get_strv(struct rd *r, uint32_t *count)
{
	uint32_t n = get_u32(r);
	const char **v;

	*count = 0;
	/* every string takes at least its 4-byte length */
	if (r->bad || n > MM_ARGS_MAX || (size_t)n * 4 > r->len - r->pos) {
		r->bad = 1;
		return NULL;
	}
	if (n == 0)
		return NULL;
	v = arena_alloc(r, (size_t)n * sizeof(*v), alignof(const char *));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		v[i] = get_str(r);
	*count = n;
	return v;
}

/* The most arena a frame of len bytes can need: a string of L bytes costs
 * 4 + L of input and at most 8 (its pointer) + L + 1 of arena, i.e. at
 * most twice its input plus one; statuses cost what they take; add the
 * spec and the alignment of at most five aligned allocations. */
static size_t arena_bound(size_t len)
{
	return sizeof(mm_job_spec_t) + 3 * len + 64;
}

/* ------------------------------------------------------------------------ */
/* One encoder and one decoder per opcode                                   */
/* ------------------------------------------------------------------------ */

static void enc_submit(struct wr *w, const mm_op_t *op)
{
	const mm_job_spec_t *sp = op->spec;

	if (!sp) {
		w->err = -EINVAL;
		return;
	}
	put_str(w, sp->name);
	put_u32(w, sp->uid);
	put_u32(w, sp->gid);
	put_u32(w, sp->ranks);
	put_str(w, sp->nodelist);
	put_strv(w, sp->argc, sp->argv);
	put_strv(w, sp->envc, sp->env);
	put_str(w, sp->cwd);
	put_strv(w, sp->nfiles, sp->files);
	put_u8(w, sp->batch != 0);
	put_str(w, sp->out_path);
	put_str(w, sp->err_path);
	put_u64(w, sp->time_limit_ms);
}

static void dec_submit(struct rd *r, mm_op_t *op)
{
	mm_job_spec_t *sp = arena_alloc(r, sizeof(*sp), alignof(mm_job_spec_t));
	uint8_t batch;

	if (!sp)
		return;
	memset(sp, 0, sizeof(*sp));
	sp->name = get_str(r);
	sp->uid = get_u32(r);
	sp->gid = get_u32(r);
	sp->ranks = get_u32(r);
	sp->nodelist = get_str(r);
	sp->argv = get_strv(r, &sp->argc);
	sp->env = get_strv(r, &sp->envc);
	sp->cwd = get_str(r);
	sp->files = get_strv(r, &sp->nfiles);
	batch = get_u8(r);
	if (batch > 1)
		r->bad = 1;
	sp->batch = batch;
	sp->out_path = get_str(r);
	sp->err_path = get_str(r);
	sp->time_limit_ms = get_u64(r);
	op->spec = sp;
}

static void enc_cancel(struct wr *w, const mm_op_t *op)
{
	put_u32(w, op->job);
	put_u32(w, op->uid);
}

static void dec_cancel(struct rd *r, mm_op_t *op)
{
	op->job = get_u32(r);
	op->uid = get_u32(r);
}

static void enc_tick(struct wr *w, const mm_op_t *op)
{
	put_u64(w, op->slice);
	put_u64(w, op->now_ms);
}

static void dec_tick(struct rd *r, mm_op_t *op)
{
	op->slice = get_u64(r);
	op->now_ms = get_u64(r);
}

static void enc_node_down(struct wr *w, const mm_op_t *op)
{
	put_u32(w, op->node);
	put_str(w, op->reason);
}

static void dec_node_down(struct rd *r, mm_op_t *op)
{
	op->node = get_u32(r);
	op->reason = get_str(r);
}

static void enc_node_up(struct wr *w, const mm_op_t *op)
{
	put_u32(w, op->node);
}

static void dec_node_up(struct rd *r, mm_op_t *op)
{
	op->node = get_u32(r);
}

static void enc_job_staged(struct wr *w, const mm_op_t *op)
{
	put_u32(w, op->job);
}

static void dec_job_staged(struct rd *r, mm_op_t *op)
{
	op->job = get_u32(r);
}

static void enc_job_exited(struct wr *w, const mm_op_t *op)
{
	if (op->nstatus > MM_RANKS_MAX || (op->nstatus && !op->status)) {
		w->err = -EINVAL;
		return;
	}
	put_u32(w, op->job);
	put_u32(w, op->nstatus);
	for (uint32_t i = 0; i < op->nstatus; i++)
		put_u32(w, (uint32_t)op->status[i]);
}

static void dec_job_exited(struct rd *r, mm_op_t *op)
{
	uint32_t n;
	int32_t *st;

	op->job = get_u32(r);
	n = get_u32(r);
	if (r->bad || n > MM_RANKS_MAX || (size_t)n * 4 > r->len - r->pos) {
		r->bad = 1;
		return;
	}
	if (n == 0)
		return;
	st = arena_alloc(r, (size_t)n * sizeof(*st), alignof(int32_t));
	for (uint32_t i = 0; st && i < n; i++)
		st[i] = (int32_t)get_u32(r);
	op->nstatus = n;
	op->status = st;
}

static void enc_job_failed(struct wr *w, const mm_op_t *op)
{
	put_u32(w, op->job);
	put_str(w, op->reason);
}

static void dec_job_failed(struct rd *r, mm_op_t *op)
{
	op->job = get_u32(r);
	op->reason = get_str(r);
}

struct op_codec {
	void (*enc)(struct wr *, const mm_op_t *);
	void (*dec)(struct rd *, mm_op_t *);
};

/* Version 1, indexed by mm_opcode_t (append-only; never renumber). */
static const struct op_codec codec_v1[] = {
	[MM_OP_SUBMIT] = { enc_submit, dec_submit },
	[MM_OP_CANCEL] = { enc_cancel, dec_cancel },
	[MM_OP_TICK] = { enc_tick, dec_tick },
	[MM_OP_NODE_DOWN] = { enc_node_down, dec_node_down },
	[MM_OP_NODE_UP] = { enc_node_up, dec_node_up },
	[MM_OP_JOB_STAGED] = { enc_job_staged, dec_job_staged },
	[MM_OP_JOB_EXITED] = { enc_job_exited, dec_job_exited },
	[MM_OP_JOB_FAILED] = { enc_job_failed, dec_job_failed },
};

/* Every version a replica can read; encode writes OP_VERSION. */
static const struct {
	const struct op_codec *ops;
	size_t nops;
} versions[] = {
	[OP_VERSION] = { codec_v1, sizeof(codec_v1) / sizeof(codec_v1[0]) },
};

static const struct op_codec *codec_for(unsigned version, unsigned code)
{
	const struct op_codec *c;

	if (version >= sizeof(versions) / sizeof(versions[0]) ||
	    !versions[version].ops || code >= versions[version].nops)
		return NULL;
	c = &versions[version].ops[code];
	return c->dec ? c : NULL;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

int mm_op_encode(const mm_op_t *op, uint8_t *buf, size_t cap)
{
	const struct op_codec *c;
	struct wr w = { .buf = buf, .cap = cap };

	if (!op || (!buf && cap))
		return -EINVAL;
	c = codec_for(OP_VERSION, (unsigned)op->code);
	if (!c)
		return -EINVAL;
	/* the count is returned as an int */
	if (w.cap > (size_t)INT32_MAX)
		w.cap = (size_t)INT32_MAX;
	put_u8(&w, OP_MAGIC);
	put_u8(&w, OP_VERSION);
	put_u16(&w, (uint16_t)op->code);
	c->enc(&w, op);
	return w.err ? w.err : (int)w.n;
}

int mm_op_decode(const uint8_t *buf, size_t len, mm_op_t *op, void **arena)
{
	const struct op_codec *c;
	struct rd r = { .buf = buf, .len = len };
	mm_op_t out;
	uint8_t magic, version;
	uint16_t code;

	if (!buf || !op || !arena || len > (SIZE_MAX - 1024) / 3)
		return -STORM_EPROTO;
	magic = get_u8(&r);
	version = get_u8(&r);
	code = get_u16(&r);
	if (r.bad || magic != OP_MAGIC)
		return -STORM_EPROTO;
	c = codec_for(version, code);
	if (!c)
		return -STORM_EPROTO;
	r.acap = arena_bound(len);
	r.arena = malloc(r.acap);
	if (!r.arena)
		return -ENOMEM;
	memset(&out, 0, sizeof(out));
	out.code = (mm_opcode_t)code;
	c->dec(&r, &out);
	if (r.bad || r.pos != len) { /* short, malformed, or trailing bytes */
		free(r.arena);
		return -STORM_EPROTO;
	}
	*op = out;
	*arena = r.arena;
	return 0;
}
