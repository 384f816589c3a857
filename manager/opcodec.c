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
 *   SCHED       u8 policy, u32 mpl, u32 quantum_slices, u8 placement
 *               (any values: mm_apply() checks them)
 *   SUBMIT_CAPPED  spec as SUBMIT, u32 max_pending, u32 max_pending_user,
 *               u64 max_state_bytes
 *   JOB_EXITED_USAGE  as JOB_EXITED, then n x (u64 utime_us, u64 stime_us,
 *               u64 maxrss_kib)
 *   TICK_RETAIN as TICK, then u32 retain_jobs, u64 retain_ms,
 *               u32 history_jobs, u64 history_ms
 *   CRED        u8[16] id, u64 expire_ms, u32 uid
 *   SUBMIT_LIMITS  as SUBMIT_CAPPED, then u64 mem_bytes
 *   SUBMIT_INPUTS  as SUBMIT_LIMITS, then u32 n, n x (u8[32] sha256,
 *               u64 size, u32 mode), u8 mpi
 *   CKPT_REQUEST   u32 job, u32 uid
 *   CKPT_COMMIT    u32 job, u32 epoch, u64 bytes, u32 stop_us, u32 keep,
 *                  u32 levels
 *   CKPT_ABORT     u32 job, u32 epoch, str reason
 *   CKPT_RESTART   u32 job, u32 uid, u32 epoch
 *   SUBMIT_CKPT    as SUBMIT_INPUTS, then u32 ckpt_every_s, u8 requeue
 *   CKPT_REQUEUE   u32 job, u32 uid
 *   SUBMIT_SHAPE   as SUBMIT_CKPT, then u32 cpus_per_task, u32
 *                  tasks_per_node, u32 node_count, u8 cpu_bind, u32
 *                  dep_job, u8 dep_type, u32 array_first, u32
 *                  array_step, u32 array_count, u32 array_max
 *   NODE_DRAIN, NODE_RESUME  u32 node, u32 uid, str reason
 *   SUBMIT_STEP    as SUBMIT_SHAPE, then u8 alloc, u32 parent
 *
 *   str  = u32 length (0xffffffff: NULL) + bytes, no NUL inside
 *   strv = u32 count + count x str
 *
 * Key invariant: the encoding is canonical — whatever decode accepts,
 * encode writes back byte for byte (no trailing bytes, no embedded NUL,
 * batch exactly 0 or 1) — and the decoder checks every length against the
 * bytes left and the limits of mm_internal.h before it copies anything.
 * Opcodes and versions are looked up in tables; a new version adds a table.
 * The writer and reader here (declared in mm_internal.h) serve the state
 * snapshot (snapshot.c) and the digest too.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

#define OP_MAGIC 0x4D
#define OP_VERSION 1

/* ------------------------------------------------------------------------ */
/* Writer (declared in mm_internal.h: snapshot.c writes with it too)        */
/* ------------------------------------------------------------------------ */

#define FNV_PRIME UINT64_C(0x100000001b3)

static void put_err(struct mmi_wr *w, int err)
{
	if (!w->err)
		w->err = err;
}

void mmi_put_bytes(struct mmi_wr *w, const void *p, size_t n)
{
	const uint8_t *b = p;

	if (w->err)
		return;
	if (w->cap - w->n < n) {
		w->err = -ENOSPC;
		return;
	}
	if (w->buf && n)
		memcpy(w->buf + w->n, p, n);
	for (size_t i = 0; w->fnv && i < n; i++) {
		*w->fnv ^= b[i];
		*w->fnv *= FNV_PRIME;
	}
	w->n += n;
}

static void put_le(struct mmi_wr *w, uint64_t v, int bytes)
{
	uint8_t b[8];

	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	mmi_put_bytes(w, b, (size_t)bytes);
}

void mmi_put_u8(struct mmi_wr *w, uint8_t v)
{
	put_le(w, v, 1);
}

void mmi_put_u16(struct mmi_wr *w, uint16_t v)
{
	put_le(w, v, 2);
}

void mmi_put_u32(struct mmi_wr *w, uint32_t v)
{
	put_le(w, v, 4);
}

void mmi_put_u64(struct mmi_wr *w, uint64_t v)
{
	put_le(w, v, 8);
}

void mmi_put_str(struct mmi_wr *w, const char *s)
{
	size_t n;

	if (!s) {
		mmi_put_u32(w, MMI_STR_NULL);
		return;
	}
	n = strlen(s);
	if (n > MM_STR_MAX) {
		put_err(w, -EINVAL);
		return;
	}
	mmi_put_u32(w, (uint32_t)n);
	mmi_put_bytes(w, s, n);
}

void mmi_put_strv(struct mmi_wr *w, uint32_t n, const char *const *v)
{
	if (n > MM_ARGS_MAX || (n && !v)) {
		put_err(w, -EINVAL);
		return;
	}
	mmi_put_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		mmi_put_str(w, v[i]);
}

/* ------------------------------------------------------------------------ */
/* Reader (declared in mm_internal.h: snapshot.c reads with it too)         */
/* ------------------------------------------------------------------------ */

void mmi_rd_fail(struct mmi_rd *r, const char *why)
{
	if (r->bad)
		return;
	r->bad = 1;
	r->bad_at = r->pos;
	r->why = why;
}

const uint8_t *mmi_get_bytes(struct mmi_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad)
		return NULL;
	if (r->len - r->pos < n) {
		mmi_rd_fail(r, "the input ends in the middle of a field");
		return NULL;
	}
	p = r->buf + r->pos;
	r->pos += n;
	return p;
}

static uint64_t get_le(struct mmi_rd *r, int bytes)
{
	const uint8_t *p = mmi_get_bytes(r, (size_t)bytes);
	uint64_t v = 0;

	for (int i = 0; p && i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint8_t mmi_get_u8(struct mmi_rd *r)
{
	return (uint8_t)get_le(r, 1);
}

uint16_t mmi_get_u16(struct mmi_rd *r)
{
	return (uint16_t)get_le(r, 2);
}

uint32_t mmi_get_u32(struct mmi_rd *r)
{
	return (uint32_t)get_le(r, 4);
}

uint64_t mmi_get_u64(struct mmi_rd *r)
{
	return get_le(r, 8);
}

void *mmi_arena_alloc(struct mmi_rd *r, size_t n, size_t align)
{
	size_t at = (r->aused + align - 1) & ~(align - 1);

	if (r->bad)
		return NULL;
	if (at > r->acap || r->acap - at < n) {
		mmi_rd_fail(r, "more decoded data than the input can hold");
		return NULL;
	}
	r->aused = at + n;
	return r->arena + at;
}

const char *mmi_get_str(struct mmi_rd *r)
{
	uint32_t n = mmi_get_u32(r);
	const uint8_t *p;
	char *s;

	if (r->bad || n == MMI_STR_NULL)
		return NULL;
	if (n > MM_STR_MAX) {
		r->pos -= 4; /* point at the length */
		mmi_rd_fail(r, "a string length over the limit");
		return NULL;
	}
	p = mmi_get_bytes(r, n);
	if (p && memchr(p, 0, n)) { /* a NUL inside would not round-trip */
		r->pos -= n;
		mmi_rd_fail(r, "a NUL byte inside a string");
	}
	s = mmi_arena_alloc(r, (size_t)n + 1, 1);
	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

const char *const *mmi_get_strv(struct mmi_rd *r, uint32_t *count)
{
	uint32_t n = mmi_get_u32(r);
	const char **v;

	*count = 0;
	if (r->bad)
		return NULL;
	/* every string takes at least its 4-byte length */
	if (n > MM_ARGS_MAX || (size_t)n * 4 > r->len - r->pos) {
		r->pos -= 4;
		mmi_rd_fail(r, "a string count over the limit or the bytes "
			    "left");
		return NULL;
	}
	if (n == 0)
		return NULL;
	v = mmi_arena_alloc(r, (size_t)n * sizeof(*v), alignof(const char *));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		v[i] = mmi_get_str(r);
	*count = n;
	return v;
}

/* The most arena a frame of len bytes can need: a string of L bytes costs
 * 4 + L of input and at most 8 (its pointer) + L + 1 of arena, i.e. at
 * most twice its input plus one; statuses cost what they take; add the
 * spec and the alignment of at most five aligned allocations. */
size_t mmi_arena_bound(size_t len)
{
	return sizeof(mm_job_spec_t) + 3 * len + 64;
}

/* ------------------------------------------------------------------------ */
/* One encoder and one decoder per opcode                                   */
/* ------------------------------------------------------------------------ */

void mmi_put_spec(struct mmi_wr *w, const mm_job_spec_t *sp)
{
	mmi_put_str(w, sp->name);
	mmi_put_u32(w, sp->uid);
	mmi_put_u32(w, sp->gid);
	mmi_put_u32(w, sp->ranks);
	mmi_put_str(w, sp->nodelist);
	mmi_put_strv(w, sp->argc, sp->argv);
	mmi_put_strv(w, sp->envc, sp->env);
	mmi_put_str(w, sp->cwd);
	mmi_put_strv(w, sp->nfiles, sp->files);
	mmi_put_u8(w, sp->batch != 0);
	mmi_put_str(w, sp->out_path);
	mmi_put_str(w, sp->err_path);
	mmi_put_u64(w, sp->time_limit_ms);
}

const mm_job_spec_t *mmi_get_spec(struct mmi_rd *r)
{
	mm_job_spec_t *sp = mmi_arena_alloc(r, sizeof(*sp),
					    alignof(mm_job_spec_t));
	uint8_t batch;

	if (!sp)
		return NULL;
	memset(sp, 0, sizeof(*sp));
	sp->name = mmi_get_str(r);
	sp->uid = mmi_get_u32(r);
	sp->gid = mmi_get_u32(r);
	sp->ranks = mmi_get_u32(r);
	sp->nodelist = mmi_get_str(r);
	sp->argv = mmi_get_strv(r, &sp->argc);
	sp->env = mmi_get_strv(r, &sp->envc);
	sp->cwd = mmi_get_str(r);
	sp->files = mmi_get_strv(r, &sp->nfiles);
	batch = mmi_get_u8(r);
	if (batch > 1)
		mmi_rd_fail(r, "batch is neither 0 nor 1");
	sp->batch = batch;
	sp->out_path = mmi_get_str(r);
	sp->err_path = mmi_get_str(r);
	sp->time_limit_ms = mmi_get_u64(r);
	return sp;
}

static void enc_submit(struct mmi_wr *w, const mm_op_t *op)
{
	if (!op->spec) {
		w->err = -EINVAL;
		return;
	}
	mmi_put_spec(w, op->spec);
}

static void dec_submit(struct mmi_rd *r, mm_op_t *op)
{
	op->spec = mmi_get_spec(r);
}

static void enc_submit_capped(struct mmi_wr *w, const mm_op_t *op)
{
	enc_submit(w, op);
	mmi_put_u32(w, op->max_pending);
	mmi_put_u32(w, op->max_pending_user);
	mmi_put_u64(w, op->max_state_bytes);
}

static void dec_submit_capped(struct mmi_rd *r, mm_op_t *op)
{
	op->spec = mmi_get_spec(r);
	op->max_pending = mmi_get_u32(r);
	op->max_pending_user = mmi_get_u32(r);
	op->max_state_bytes = mmi_get_u64(r);
}

static void enc_submit_limits(struct mmi_wr *w, const mm_op_t *op)
{
	enc_submit_capped(w, op);
	if (op->spec)
		mmi_put_u64(w, op->spec->mem_bytes);
}

static void dec_submit_limits(struct mmi_rd *r, mm_op_t *op)
{
	dec_submit_capped(r, op);
	if (op->spec)
		((mm_job_spec_t *)op->spec)->mem_bytes = mmi_get_u64(r);
}

void mmi_put_inputs(struct mmi_wr *w, uint32_t n, const mm_input_t *in)
{
	mmi_put_u32(w, n);
	for (uint32_t k = 0; k < n; k++) {
		mmi_put_bytes(w, in[k].sha256, MM_INPUT_SHA256_BYTES);
		mmi_put_u64(w, in[k].size);
		mmi_put_u32(w, in[k].mode);
	}
}

const mm_input_t *mmi_get_inputs(struct mmi_rd *r, uint32_t *n)
{
	uint32_t cnt = mmi_get_u32(r);
	mm_input_t *in;

	*n = 0;
	/* each takes 44 bytes of input: the count is checked against what
	 * is left before the arena is asked for room */
	if (r->bad || !cnt)
		return NULL;
	if (cnt > MM_ARGS_MAX + 1 || (size_t)cnt * 44 > r->len - r->pos) {
		mmi_rd_fail(r, "more inputs than the bytes left hold");
		return NULL;
	}
	in = mmi_arena_alloc(r, (size_t)cnt * sizeof(*in), alignof(mm_input_t));
	if (!in)
		return NULL;
	for (uint32_t k = 0; k < cnt; k++) {
		const uint8_t *d = mmi_get_bytes(r, MM_INPUT_SHA256_BYTES);

		if (!d)
			return NULL;
		memcpy(in[k].sha256, d, MM_INPUT_SHA256_BYTES);
		in[k].size = mmi_get_u64(r);
		in[k].mode = mmi_get_u32(r);
	}
	*n = cnt;
	return in;
}

static void enc_submit_inputs(struct mmi_wr *w, const mm_op_t *op)
{
	enc_submit_limits(w, op);
	if (op->spec) {
		mmi_put_inputs(w, op->spec->ninputs, op->spec->inputs);
		mmi_put_u8(w, op->spec->mpi);
	}
}

static void dec_submit_inputs(struct mmi_rd *r, mm_op_t *op)
{
	dec_submit_limits(r, op);
	if (op->spec) {
		mm_job_spec_t *sp = (mm_job_spec_t *)op->spec;

		sp->inputs = mmi_get_inputs(r, &sp->ninputs);
		sp->mpi = mmi_get_u8(r);
	}
}

static void enc_submit_ckpt(struct mmi_wr *w, const mm_op_t *op)
{
	enc_submit_inputs(w, op);
	if (op->spec) {
		mmi_put_u32(w, op->spec->ckpt_every_s);
		mmi_put_u8(w, op->spec->requeue);
	}
}

static void dec_submit_ckpt(struct mmi_rd *r, mm_op_t *op)
{
	dec_submit_inputs(r, op);
	if (op->spec) {
		mm_job_spec_t *sp = (mm_job_spec_t *)op->spec;

		sp->ckpt_every_s = mmi_get_u32(r);
		sp->requeue = mmi_get_u8(r);
	}
}

static void enc_submit_shape(struct mmi_wr *w, const mm_op_t *op)
{
	enc_submit_ckpt(w, op);
	if (op->spec) {
		mmi_put_u32(w, op->spec->cpus_per_task);
		mmi_put_u32(w, op->spec->tasks_per_node);
		mmi_put_u32(w, op->spec->node_count);
		mmi_put_u8(w, op->spec->cpu_bind);
		mmi_put_u32(w, op->spec->dep_job);
		mmi_put_u8(w, op->spec->dep_type);
		mmi_put_u32(w, op->spec->array_first);
		mmi_put_u32(w, op->spec->array_step);
		mmi_put_u32(w, op->spec->array_count);
		mmi_put_u32(w, op->spec->array_max);
	}
}

static void dec_submit_shape(struct mmi_rd *r, mm_op_t *op)
{
	dec_submit_ckpt(r, op);
	if (op->spec) {
		mm_job_spec_t *sp = (mm_job_spec_t *)op->spec;

		sp->cpus_per_task = mmi_get_u32(r);
		sp->tasks_per_node = mmi_get_u32(r);
		sp->node_count = mmi_get_u32(r);
		sp->cpu_bind = mmi_get_u8(r);
		sp->dep_job = mmi_get_u32(r);
		sp->dep_type = mmi_get_u8(r);
		sp->array_first = mmi_get_u32(r);
		sp->array_step = mmi_get_u32(r);
		sp->array_count = mmi_get_u32(r);
		sp->array_max = mmi_get_u32(r);
	}
}

static void enc_submit_step(struct mmi_wr *w, const mm_op_t *op)
{
	enc_submit_shape(w, op);
	if (op->spec) {
		mmi_put_u8(w, op->spec->alloc);
		mmi_put_u32(w, op->spec->parent);
	}
}

static void dec_submit_step(struct mmi_rd *r, mm_op_t *op)
{
	dec_submit_shape(r, op);
	if (op->spec) {
		mm_job_spec_t *sp = (mm_job_spec_t *)op->spec;

		sp->alloc = mmi_get_u8(r);
		sp->parent = mmi_get_u32(r);
	}
}

static void enc_cancel(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->job);
	mmi_put_u32(w, op->uid);
}

static void dec_cancel(struct mmi_rd *r, mm_op_t *op)
{
	op->job = mmi_get_u32(r);
	op->uid = mmi_get_u32(r);
}

static void enc_ckpt_commit(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->job);
	mmi_put_u32(w, op->epoch);
	mmi_put_u64(w, op->ckpt_bytes);
	mmi_put_u32(w, op->ckpt_stop_us);
	mmi_put_u32(w, op->ckpt_keep);
	mmi_put_u32(w, op->ckpt_levels);
}

static void enc_ckpt_restart(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->job);
	mmi_put_u32(w, op->uid);
	mmi_put_u32(w, op->epoch);
}

static void dec_ckpt_restart(struct mmi_rd *r, mm_op_t *op)
{
	op->job = mmi_get_u32(r);
	op->uid = mmi_get_u32(r);
	op->epoch = mmi_get_u32(r);
}

static void dec_ckpt_commit(struct mmi_rd *r, mm_op_t *op)
{
	op->job = mmi_get_u32(r);
	op->epoch = mmi_get_u32(r);
	op->ckpt_bytes = mmi_get_u64(r);
	op->ckpt_stop_us = mmi_get_u32(r);
	op->ckpt_keep = mmi_get_u32(r);
	op->ckpt_levels = mmi_get_u32(r);
}

static void enc_ckpt_abort(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->job);
	mmi_put_u32(w, op->epoch);
	mmi_put_str(w, op->reason);
}

static void dec_ckpt_abort(struct mmi_rd *r, mm_op_t *op)
{
	op->job = mmi_get_u32(r);
	op->epoch = mmi_get_u32(r);
	op->reason = mmi_get_str(r);
}

static void enc_tick(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u64(w, op->slice);
	mmi_put_u64(w, op->now_ms);
}

static void dec_tick(struct mmi_rd *r, mm_op_t *op)
{
	op->slice = mmi_get_u64(r);
	op->now_ms = mmi_get_u64(r);
}

static void enc_tick_retain(struct mmi_wr *w, const mm_op_t *op)
{
	enc_tick(w, op);
	mmi_put_u32(w, op->retain_jobs);
	mmi_put_u64(w, op->retain_ms);
	mmi_put_u32(w, op->history_jobs);
	mmi_put_u64(w, op->history_ms);
}

static void dec_tick_retain(struct mmi_rd *r, mm_op_t *op)
{
	dec_tick(r, op);
	op->retain_jobs = mmi_get_u32(r);
	op->retain_ms = mmi_get_u64(r);
	op->history_jobs = mmi_get_u32(r);
	op->history_ms = mmi_get_u64(r);
}

static void enc_node_down(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->node);
	mmi_put_str(w, op->reason);
}

static void dec_node_down(struct mmi_rd *r, mm_op_t *op)
{
	op->node = mmi_get_u32(r);
	op->reason = mmi_get_str(r);
}

static void enc_node_drain(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->node);
	mmi_put_u32(w, op->uid);
	mmi_put_str(w, op->reason);
}

static void dec_node_drain(struct mmi_rd *r, mm_op_t *op)
{
	op->node = mmi_get_u32(r);
	op->uid = mmi_get_u32(r);
	op->reason = mmi_get_str(r);
}

static void enc_node_up(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->node);
}

static void dec_node_up(struct mmi_rd *r, mm_op_t *op)
{
	op->node = mmi_get_u32(r);
}

static void enc_job_staged(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->job);
}

static void dec_job_staged(struct mmi_rd *r, mm_op_t *op)
{
	op->job = mmi_get_u32(r);
}

static void enc_job_exited(struct mmi_wr *w, const mm_op_t *op)
{
	if (op->nstatus > MM_RANKS_MAX || (op->nstatus && !op->status)) {
		w->err = -EINVAL;
		return;
	}
	mmi_put_u32(w, op->job);
	mmi_put_u32(w, op->nstatus);
	for (uint32_t i = 0; i < op->nstatus; i++)
		mmi_put_u32(w, (uint32_t)op->status[i]);
}

static void enc_job_exited_usage(struct mmi_wr *w, const mm_op_t *op)
{
	if (op->nstatus && !op->usage) {
		w->err = -EINVAL;
		return;
	}
	enc_job_exited(w, op);
	for (uint32_t i = 0; i < op->nstatus && !w->err; i++) {
		mmi_put_u64(w, op->usage[i].utime_us);
		mmi_put_u64(w, op->usage[i].stime_us);
		mmi_put_u64(w, op->usage[i].maxrss_kib);
	}
}

static void dec_job_exited(struct mmi_rd *r, mm_op_t *op);

static void dec_job_exited_usage(struct mmi_rd *r, mm_op_t *op)
{
	mm_usage_t *u;

	dec_job_exited(r, op);
	if (r->bad || !op->nstatus)
		return;
	if ((size_t)op->nstatus * 24 > r->len - r->pos) {
		mmi_rd_fail(r, "usage for fewer ranks than statuses");
		return;
	}
	u = mmi_arena_alloc(r, (size_t)op->nstatus * sizeof(*u),
			    alignof(mm_usage_t));
	for (uint32_t i = 0; u && i < op->nstatus; i++) {
		u[i].utime_us = mmi_get_u64(r);
		u[i].stime_us = mmi_get_u64(r);
		u[i].maxrss_kib = mmi_get_u64(r);
	}
	op->usage = u;
}

static void dec_job_exited(struct mmi_rd *r, mm_op_t *op)
{
	uint32_t n;
	int32_t *st;

	op->job = mmi_get_u32(r);
	n = mmi_get_u32(r);
	if (r->bad)
		return;
	if (n > MM_RANKS_MAX || (size_t)n * 4 > r->len - r->pos) {
		mmi_rd_fail(r, "a status count over the limit or the bytes "
			    "left");
		return;
	}
	if (n == 0)
		return;
	st = mmi_arena_alloc(r, (size_t)n * sizeof(*st), alignof(int32_t));
	for (uint32_t i = 0; st && i < n; i++)
		st[i] = (int32_t)mmi_get_u32(r);
	op->nstatus = n;
	op->status = st;
}

static void enc_job_failed(struct mmi_wr *w, const mm_op_t *op)
{
	mmi_put_u32(w, op->job);
	mmi_put_str(w, op->reason);
}

static void dec_job_failed(struct mmi_rd *r, mm_op_t *op)
{
	op->job = mmi_get_u32(r);
	op->reason = mmi_get_str(r);
}

static void enc_sched(struct mmi_wr *w, const mm_op_t *op)
{
	if (!op->sched || (unsigned)op->sched->policy > UINT8_MAX ||
	    (unsigned)op->sched->placement > UINT8_MAX) {
		w->err = -EINVAL;
		return;
	}
	mmi_put_u8(w, (uint8_t)op->sched->policy);
	mmi_put_u32(w, op->sched->mpl);
	mmi_put_u32(w, op->sched->quantum_slices);
	mmi_put_u8(w, (uint8_t)op->sched->placement);
}

static void dec_sched(struct mmi_rd *r, mm_op_t *op)
{
	mm_sched_conf_t *c = mmi_arena_alloc(r, sizeof(*c),
					     alignof(mm_sched_conf_t));

	if (!c)
		return;
	c->policy = (mm_policy_t)mmi_get_u8(r);
	c->mpl = mmi_get_u32(r);
	c->quantum_slices = mmi_get_u32(r);
	c->placement = (mm_placement_t)mmi_get_u8(r);
	op->sched = c;
}

static void enc_cred(struct mmi_wr *w, const mm_op_t *op)
{
	if (!op->cred_id) {
		w->err = -EINVAL;
		return;
	}
	mmi_put_bytes(w, op->cred_id, MM_CRED_ID_BYTES);
	mmi_put_u64(w, op->cred_expire_ms);
	mmi_put_u32(w, op->uid);
}

static void dec_cred(struct mmi_rd *r, mm_op_t *op)
{
	const uint8_t *id = mmi_get_bytes(r, MM_CRED_ID_BYTES);
	uint8_t *copy = mmi_arena_alloc(r, MM_CRED_ID_BYTES, 1);

	if (id && copy)
		memcpy(copy, id, MM_CRED_ID_BYTES);
	op->cred_id = copy;
	op->cred_expire_ms = mmi_get_u64(r);
	op->uid = mmi_get_u32(r);
}

struct op_codec {
	void (*enc)(struct mmi_wr *, const mm_op_t *);
	void (*dec)(struct mmi_rd *, mm_op_t *);
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
	[MM_OP_SCHED] = { enc_sched, dec_sched },
	[MM_OP_SUBMIT_CAPPED] = { enc_submit_capped, dec_submit_capped },
	[MM_OP_JOB_EXITED_USAGE] = { enc_job_exited_usage,
				     dec_job_exited_usage },
	[MM_OP_TICK_RETAIN] = { enc_tick_retain, dec_tick_retain },
	[MM_OP_CRED] = { enc_cred, dec_cred },
	[MM_OP_SUBMIT_LIMITS] = { enc_submit_limits, dec_submit_limits },
	[MM_OP_SUBMIT_INPUTS] = { enc_submit_inputs, dec_submit_inputs },
	[MM_OP_CKPT_REQUEST] = { enc_cancel, dec_cancel }, /* job, uid */
	[MM_OP_CKPT_COMMIT] = { enc_ckpt_commit, dec_ckpt_commit },
	[MM_OP_CKPT_ABORT] = { enc_ckpt_abort, dec_ckpt_abort },
	[MM_OP_CKPT_RESTART] = { enc_ckpt_restart, dec_ckpt_restart },
	[MM_OP_SUBMIT_CKPT] = { enc_submit_ckpt, dec_submit_ckpt },
	[MM_OP_CKPT_REQUEUE] = { enc_cancel, dec_cancel }, /* job, uid */
	[MM_OP_SUBMIT_SHAPE] = { enc_submit_shape, dec_submit_shape },
	[MM_OP_NODE_DRAIN] = { enc_node_drain, dec_node_drain },
	[MM_OP_NODE_RESUME] = { enc_node_drain, dec_node_drain },
	[MM_OP_SUBMIT_STEP] = { enc_submit_step, dec_submit_step },
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
	struct mmi_wr w = { .buf = buf, .cap = cap };

	if (!op || (!buf && cap))
		return -EINVAL;
	c = codec_for(OP_VERSION, (unsigned)op->code);
	if (!c)
		return -EINVAL;
	/* the count is returned as an int */
	if (w.cap > (size_t)INT32_MAX)
		w.cap = (size_t)INT32_MAX;
	mmi_put_u8(&w, OP_MAGIC);
	mmi_put_u8(&w, OP_VERSION);
	mmi_put_u16(&w, (uint16_t)op->code);
	c->enc(&w, op);
	return w.err ? w.err : (int)w.n;
}

int mm_op_decode(const uint8_t *buf, size_t len, mm_op_t *op, void **arena)
{
	const struct op_codec *c;
	struct mmi_rd r = { .buf = buf, .len = len };
	mm_op_t out;
	uint8_t magic, version;
	uint16_t code;

	if (!buf || !op || !arena || len > MMI_INPUT_MAX)
		return -STORM_EPROTO;
	magic = mmi_get_u8(&r);
	version = mmi_get_u8(&r);
	code = mmi_get_u16(&r);
	if (r.bad || magic != OP_MAGIC)
		return -STORM_EPROTO;
	c = codec_for(version, code);
	if (!c)
		return -STORM_EPROTO;
	r.acap = mmi_arena_bound(len);
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
