/*
 * snapshot.c — the whole state as bytes, for replication: a replica that
 * joins takes a snapshot from one that has the state and then applies the
 * log after it; a replica that restarts loads its last durable snapshot.
 * Either way the decoded state must go on exactly as the original would,
 * so a snapshot holds everything mm_apply() reads, and the decoder trusts
 * none of it: the bytes may come from another host or a damaged file.
 * mm_digest() is the hash of the same bytes.
 *
 * Format (little-endian; str, strv and the spec as in opcodec.c):
 *
 *   u8[4] magic "SMMS" | u16 version (7) | the body of that version
 *
 *   body v1:
 *     u32 nworld | u64 slice | u64 now_ms
 *     u32 nnodes | nnodes x node, in ascending world id:
 *       u32 id | str name | u32 cpus | u8 state | str reason | u32 failures
 *     u32 njobs | njobs x job, ids 1, 2, ... njobs in order:
 *       spec (SUBMIT's fields as the job kept them: str name, u32 uid,
 *       u32 gid, u32 ranks, str nodelist, strv argv, strv env, str cwd,
 *       strv files, u8 batch, str out_path, str err_path, u64 time_limit)
 *       | u8 state | str reason | u64 submit_slice, start_slice, end_slice,
 *       submit_ms, start_ms, end_ms | i32 exit_code
 *       | u8 placed (0/1) | ranks x u32 rank_node (all 0 unless placed)
 *       | u8 has_status (0/1) | if 1: ranks x i32 rank_status
 *
 *   body v2 (the scheduler), v1 with:
 *     after now_ms: u8 policy | u32 mpl | u32 quantum_slices | u8 placement
 *     each node, after failures: u64 up_ms | u64 up_since_ms
 *     each job, after its statuses: u32 row | u32 col | u32 width (all 0
 *       unless it holds PEs)
 *   body v3 (usage), v2 with:
 *     each job, after its block: u8 has_usage (0/1) | if 1: ranks x
 *       (u64 utime_us | u64 stime_us | u64 maxrss_kib); only a job with
 *       statuses has usage
 *   body v4 (retention: ids have gaps), v3 with the job table as:
 *     u32 next_id | u32 njobs | njobs x (u32 id | job as v3), ids
 *     ascending, 1 <= id < next_id (before v4: ids 1..njobs, next_id
 *     njobs + 1)
 *   body v5 (the credential replay cache), v4 then:
 *     u32 ncreds | ncreds x (u8[16] id | u64 expire_ms), ids strictly
 *     ascending, ncreds <= MM_CREDS_MAX (before v5: an empty cache)
 *   body v6 (limits), v5 with:
 *     each job, after its usage: u64 mem_bytes (0: no limit)
 *   body v7 (replicated inputs), v6 with:
 *     each job, after mem_bytes: u32 ninputs | ninputs x (u8[32] sha256
 *     | u64 size | u32 mode), ninputs 0 or 1 + nfiles | u8 mpi
 *   body v8 (checkpoints), v7 with:
 *     each job, after mpi: u32 ckpt_last | u32 ckpt_want | u64
 *     ckpt_want_slice | str ckpt_error | u32 nckpts | nckpts x (u32 epoch |
 *     u32 stop_us | u32 levels | u64 slice | u64 ms | u64 bytes) | u32
 *     restore_epoch | u32 restarts | u32 ckpt_every_s | u8 ckpt_requeue
 *     (0/1, only with want) | u8 requeue (0/1), epochs strictly ascending and <=
 *     ckpt_last, want 0 or ckpt_last, nckpts <= MM_CKPT_KEEP_MAX
 *   body v9 (job shapes, drained nodes), v8 with:
 *     each job, after requeue: u32 cpus_per_task (>= 1) | u32
 *     tasks_per_node | u32 node_count | u8 cpu_bind | u32 dep_job | u8
 *     dep_type | u32 array_id | u32 array_task | u32 array_max; and last, u32
 *     ndrained | ndrained x (u32 node id | str reason), ids ascending
 *   body v10 (batch allocations and steps), v9 with:
 *     each job, after array_max: u8 alloc (0/1) | u32 parent (an earlier
 *     allocation of the same owner, or 0; not with alloc).  A step
 *     holding PEs has no buddy block: its row, col and width are its
 *     task slots in its allocation's, which holds the cells
 *   The matrix's cells follow from the jobs' blocks; the decoder rebuilds
 *   them and refuses a state mm_matrix_check() finds inconsistent.  A v1
 *   snapshot (before the matrix) loads only if no job holds PEs: there is
 *   no block to give a running job that keeps every invariant.
 *
 * Not stored, because it follows from the rest: the world id -> node map
 * and total cpus (from the node table), each job's nodelist set (parsed
 * from its text as SUBMIT did) and node set (the nodes of its ranks once
 * placed), each node's used (the ranks of STAGING/RUNNING jobs on it),
 * live_lo (the first job not ended).  So the format has no redundancy to
 * disagree with, and nothing it holds can be left out of the digest.
 *
 * Key invariant: canonical — equal states encode to equal bytes, and
 * whatever decode accepts encodes back byte for byte.  The decoder builds
 * every job through SUBMIT's own checks and copies (mmi_job_new()), then
 * checks what the state machine guarantees: fixed-size text fits, states
 * and flags are in range, a placed job's ranks are on compute nodes of its
 * nodelist, a job holding cpus is on UP nodes and no node holds more
 * ranks than cpus, only a job that ended by JOB_EXITED has statuses.
 * Anything else is -STORM_EPROTO with what and the offset.  Every count is
 * checked against the bytes left before anything is allocated for it, so
 * decoding allocates in proportion to the input, besides the two node sets
 * of nworld bits every job has.  Versions are looked up in a table of
 * decoders; a new version adds a row and keeps the old ones.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

static const uint8_t snap_magic[4] = { 'S', 'M', 'M', 'S' };
#define SNAP_VERSION 10
#define HEADER_BYTES 6

/* The fewest bytes a node takes (empty name and reason), and a floor
 * under those of a job (at least 121: its spec with a one-byte argv[0],
 * the state, reason, times, exit code, flags and one rank), so that a
 * count is checked against the bytes left before a table is allocated. */
#define NODE_MIN_BYTES 21
#define JOB_MIN_BYTES 100

/* ------------------------------------------------------------------------ */
/* Encoder (and digest)                                                     */
/* ------------------------------------------------------------------------ */

static void put_node(struct mmi_wr *w, const mm_node_t *n)
{
	mmi_put_u32(w, n->id);
	mmi_put_str(w, n->name);
	mmi_put_u32(w, n->cpus);
	mmi_put_u8(w, (uint8_t)n->state);
	mmi_put_str(w, n->reason);
	mmi_put_u32(w, n->failures);
	mmi_put_u64(w, n->up_ms);
	mmi_put_u64(w, n->up_since_ms);
}

static void put_job(struct mmi_wr *w, const struct mm_jobrec *j)
{
	const mm_job_t *v = &j->v;
	const mm_job_spec_t sp = {
		.name = v->name,
		.uid = v->uid,
		.gid = v->gid,
		.ranks = v->ranks,
		.nodelist = j->nodelist,
		.argc = v->argc,
		.argv = v->argv,
		.envc = v->envc,
		.env = v->env,
		.cwd = v->cwd,
		.nfiles = v->nfiles,
		.files = v->files,
		.batch = v->batch,
		.out_path = v->out_path,
		.err_path = v->err_path,
		.time_limit_ms = v->time_limit_ms,
	};
	const uint64_t times[] = { v->submit_slice, v->start_slice,
				   v->end_slice, v->submit_ms, v->start_ms,
				   v->end_ms };

	mmi_put_spec(w, &sp);
	mmi_put_u8(w, (uint8_t)v->state);
	mmi_put_str(w, v->reason);
	for (size_t k = 0; k < sizeof(times) / sizeof(times[0]); k++)
		mmi_put_u64(w, times[k]);
	mmi_put_u32(w, (uint32_t)v->exit_code);
	/* placement always leaves at least one node in the set */
	mmi_put_u8(w, sp_nodeset_count(j->nodes) > 0);
	for (uint32_t r = 0; r < v->ranks; r++)
		mmi_put_u32(w, j->rank_node[r]);
	mmi_put_u8(w, j->rank_status != NULL);
	for (uint32_t r = 0; j->rank_status && r < v->ranks; r++)
		mmi_put_u32(w, (uint32_t)j->rank_status[r]);
	mmi_put_u32(w, v->width ? v->row : 0);
	mmi_put_u32(w, v->width ? v->col : 0);
	mmi_put_u32(w, v->width);
	mmi_put_u8(w, j->rank_usage != NULL);
	for (uint32_t r = 0; j->rank_usage && r < v->ranks; r++) {
		mmi_put_u64(w, j->rank_usage[r].utime_us);
		mmi_put_u64(w, j->rank_usage[r].stime_us);
		mmi_put_u64(w, j->rank_usage[r].maxrss_kib);
	}
	mmi_put_u64(w, v->mem_bytes);
	mmi_put_inputs(w, v->ninputs, v->inputs);
	mmi_put_u8(w, v->mpi);
	mmi_put_u32(w, v->ckpt_last);
	mmi_put_u32(w, v->ckpt_want);
	mmi_put_u64(w, v->ckpt_want_slice);
	mmi_put_str(w, v->ckpt_error);
	mmi_put_u32(w, v->nckpts);
	for (uint32_t k = 0; k < v->nckpts; k++) {
		mmi_put_u32(w, v->ckpts[k].epoch);
		mmi_put_u32(w, v->ckpts[k].stop_us);
		mmi_put_u32(w, v->ckpts[k].levels);
		mmi_put_u64(w, v->ckpts[k].slice);
		mmi_put_u64(w, v->ckpts[k].ms);
		mmi_put_u64(w, v->ckpts[k].bytes);
	}
	mmi_put_u32(w, v->restore_epoch);
	mmi_put_u32(w, v->restarts);
	mmi_put_u32(w, v->ckpt_every_s);
	mmi_put_u8(w, v->ckpt_requeue);
	mmi_put_u8(w, v->requeue);
	mmi_put_u32(w, v->cpus_per_task);
	mmi_put_u32(w, v->tasks_per_node);
	mmi_put_u32(w, v->node_count);
	mmi_put_u8(w, v->cpu_bind);
	mmi_put_u32(w, v->dep_job);
	mmi_put_u8(w, v->dep_type);
	mmi_put_u32(w, v->array_id);
	mmi_put_u32(w, v->array_task);
	mmi_put_u32(w, v->array_max);
	mmi_put_u8(w, v->alloc);
	mmi_put_u32(w, v->parent);
}

/* The spec's encoded bytes (counted, not written) plus 128 and 12 per
 * rank for what the job gains later (placement, statuses, times): what
 * it was submitted with only, so every replica weighs it alike. */
uint64_t mmi_job_bytes(const struct mm_jobrec *j)
{
	const mm_job_t *v = &j->v;
	mm_job_spec_t sp = {
		.name = v->name, .uid = v->uid, .gid = v->gid,
		.ranks = v->ranks, .nodelist = j->nodelist, .argc = v->argc,
		.argv = v->argv, .envc = v->envc, .env = v->env, .cwd = v->cwd,
		.nfiles = v->nfiles, .files = v->files, .batch = v->batch,
		.out_path = v->out_path, .err_path = v->err_path,
		.time_limit_ms = v->time_limit_ms,
	};
	struct mmi_wr w = { .cap = SIZE_MAX };

	mmi_put_spec(&w, &sp);
	mmi_put_inputs(&w, v->ninputs, v->inputs);
	mmi_put_u8(&w, v->mpi);
	return (uint64_t)w.n + 128u + 12u * (uint64_t)v->ranks;
}

static void put_state(struct mmi_wr *w, const mm_state_t *s)
{
	mmi_put_bytes(w, snap_magic, sizeof(snap_magic));
	mmi_put_u16(w, SNAP_VERSION);
	mmi_put_u32(w, s->nworld);
	mmi_put_u64(w, s->slice);
	mmi_put_u64(w, s->now_ms);
	mmi_put_u8(w, (uint8_t)s->conf.policy);
	mmi_put_u32(w, s->conf.mpl);
	mmi_put_u32(w, s->conf.quantum_slices);
	mmi_put_u8(w, (uint8_t)s->conf.placement);
	mmi_put_u32(w, s->nnodes);
	for (uint32_t i = 0; i < s->nnodes; i++)
		put_node(w, &s->nodes[i]);
	mmi_put_u32(w, s->next_id);
	mmi_put_u32(w, s->njobs);
	for (uint32_t i = 0; i < s->njobs; i++) {
		mmi_put_u32(w, s->jobs[i]->v.id);
		put_job(w, s->jobs[i]);
	}
	mmi_put_u32(w, s->ncreds);
	for (uint32_t i = 0; i < s->ncreds; i++) {
		mmi_put_bytes(w, s->creds[i].id, MM_CRED_ID_BYTES);
		mmi_put_u64(w, s->creds[i].expire_ms);
	}
	{
		uint32_t nd = 0;

		for (uint32_t i = 0; i < s->nnodes; i++)
			nd += s->nodes[i].drain != 0;
		mmi_put_u32(w, nd);
		for (uint32_t i = 0; i < s->nnodes; i++)
			if (s->nodes[i].drain) {
				mmi_put_u32(w, s->nodes[i].id);
				mmi_put_str(w, s->nodes[i].drain_reason);
			}
	}
	/* every string and count was bounded when it entered the state */
	assert(w->err == 0);
}

int mm_state_encode(const mm_state_t *s, uint8_t **out, size_t *len)
{
	struct mmi_wr w = { .cap = SIZE_MAX }; /* first count */
	uint8_t *buf;

	if (!s || !out || !len)
		return -EINVAL;
	put_state(&w, s);
	buf = malloc(w.n);
	if (!buf)
		return -ENOMEM;
	w = (struct mmi_wr){ .buf = buf, .cap = w.n };
	put_state(&w, s);
	*out = buf;
	*len = w.n;
	return 0;
}

uint64_t mm_digest(const mm_state_t *s)
{
	uint64_t h = MMI_FNV_OFFSET;
	struct mmi_wr w = { .cap = SIZE_MAX, .fnv = &h };

	if (s)
		put_state(&w, s);
	return h;
}

/* ------------------------------------------------------------------------ */
/* Decoder: failures                                                        */
/* ------------------------------------------------------------------------ */

struct sd {
	struct mmi_rd r;
	char part[32]; /* what is being read: "the header", "job 17" */
	char *err;
	size_t errlen;
	int failed;
	unsigned version;
	size_t block_at; /* where the job being read has its block */
};

static void sd_msg(struct sd *d, size_t at, const char *f, va_list ap)
{
	int n;

	if (!d->err || !d->errlen)
		return;
	n = snprintf(d->err, d->errlen, "snapshot: at offset %zu, in %s: ",
		     at, d->part);
	if (n >= 0 && (size_t)n < d->errlen)
		vsnprintf(d->err + n, d->errlen - (size_t)n, f, ap);
}

/* Refuse the input: the first refusal is the one reported, and the reader
 * stops reading.  Returns -STORM_EPROTO. */
__attribute__((format(printf, 3, 4)))
static int sd_fail(struct sd *d, size_t at, const char *f, ...)
{
	va_list ap;

	if (!d->failed) {
		va_start(ap, f);
		sd_msg(d, at, f, ap);
		va_end(ap);
		d->failed = -STORM_EPROTO;
	}
	mmi_rd_fail(&d->r, "refused");
	return -STORM_EPROTO;
}

__attribute__((format(printf, 2, 3)))
static int sd_nomem(struct sd *d, const char *f, ...)
{
	va_list ap;

	if (!d->failed) {
		va_start(ap, f);
		sd_msg(d, d->r.pos, f, ap);
		va_end(ap);
		d->failed = -ENOMEM;
	}
	mmi_rd_fail(&d->r, "out of memory");
	return -ENOMEM;
}

/* After a run of reads: a failure of the reader becomes the refusal.
 * Returns 0 or the first failure. */
static int sd_check(struct sd *d)
{
	if (d->r.bad && !d->failed)
		sd_fail(d, d->r.bad_at, "%s", d->r.why);
	return d->failed;
}

__attribute__((format(printf, 2, 3)))
static void sd_part(struct sd *d, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(d->part, sizeof(d->part), f, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Decoder: fields                                                          */
/* ------------------------------------------------------------------------ */

/* A u8 that must lie in lo..hi. */
static uint8_t get_ranged(struct sd *d, const char *field, uint8_t lo,
			  uint8_t hi)
{
	size_t at = d->r.pos;
	uint8_t v = mmi_get_u8(&d->r);

	if (!d->r.bad && (v < lo || v > hi))
		sd_fail(d, at, "%s is %u, not one of %u..%u", field, v, lo, hi);
	return v;
}

/* Text the state keeps in a fixed field of cap bytes: never NULL, and
 * shorter than cap (a longer one would come back cut). */
static void check_fixed(struct sd *d, size_t at, const char *field,
			const char *text, size_t cap)
{
	if (d->r.bad)
		return;
	if (!text)
		sd_fail(d, at, "%s is NULL; it is text, \"\" at least", field);
	else if (strlen(text) >= cap)
		sd_fail(d, at, "%s is %zu bytes, more than the %zu it may have",
			field, strlen(text), cap - 1);
}

static void get_fixed(struct sd *d, const char *field, char *dst,
		      size_t cap)
{
	size_t at = d->r.pos;
	const char *text = mmi_get_str(&d->r);

	check_fixed(d, at, field, text, cap);
	if (!d->r.bad)
		memcpy(dst, text, strlen(text) + 1);
}

/* ------------------------------------------------------------------------ */
/* Decoder: the node table                                                  */
/* ------------------------------------------------------------------------ */

/* Read node i into *n; checks its id against the previous one. */
static int dec_node(struct sd *d, uint32_t i, uint32_t nworld,
		    mm_node_t *n)
{
	size_t at = d->r.pos;

	sd_part(d, "node %u", i);
	n->id = mmi_get_u32(&d->r);
	get_fixed(d, "name", n->name, sizeof(n->name));
	n->cpus = mmi_get_u32(&d->r);
	n->state = get_ranged(d, "state", MM_NODE_UP, MM_NODE_DOWN);
	get_fixed(d, "reason", n->reason, sizeof(n->reason));
	n->failures = mmi_get_u32(&d->r);
	if (d->version >= 2) {
		n->up_ms = mmi_get_u64(&d->r);
		n->up_since_ms = mmi_get_u64(&d->r);
	}
	if (sd_check(d))
		return d->failed;
	if (n->id >= nworld)
		return sd_fail(d, at, "world id %u is not below the world "
			       "size %u", n->id, nworld);
	if (i > 0 && n->id <= n[-1].id)
		return sd_fail(d, at, "world id %u after %u: nodes are in "
			       "ascending world id", n->id, n[-1].id);
	if (n->cpus == 0 || n->cpus > MM_CPUS_MAX)
		return sd_fail(d, at + 4, "node %u has %u cpus, not 1..%u",
			       n->id, n->cpus, MM_CPUS_MAX);
	return 0;
}

/* The header's fields and the node table: a new state without jobs. */
static int dec_nodes(struct sd *d, mm_state_t **out)
{
	struct mmi_rd *r = &d->r;
	size_t at = r->pos, nodes_at;
	uint32_t nworld, nnodes, *ids, *cpus;
	uint64_t slice, now_ms;
	mm_sched_conf_t conf = { MM_POLICY_FCFS, 1, 1, MM_PLACE_BUDDY };
	size_t conf_at;
	char why[200];
	const char **names;
	mm_node_t *tmp;
	mm_state_t *s;
	int rc;

	sd_part(d, "the header");
	nworld = mmi_get_u32(r);
	slice = mmi_get_u64(r);
	now_ms = mmi_get_u64(r);
	conf_at = r->pos;
	if (d->version >= 2) {
		conf.policy = (mm_policy_t)mmi_get_u8(r);
		conf.mpl = mmi_get_u32(r);
		conf.quantum_slices = mmi_get_u32(r);
		conf.placement = (mm_placement_t)mmi_get_u8(r);
	}
	nodes_at = r->pos;
	nnodes = mmi_get_u32(r);
	if (sd_check(d))
		return d->failed;
	if (nworld == 0 || nworld > 65536)
		return sd_fail(d, at, "world size %u is not one of 1..65536",
			       nworld);
	if (mm_sched_check(&conf, why, sizeof(why)))
		return sd_fail(d, conf_at, "scheduler settings: %s", why);
	if (nnodes == 0 || nnodes > nworld)
		return sd_fail(d, nodes_at, "%u compute nodes in a world of "
			       "%u; there are 1..%u", nnodes, nworld, nworld);
	if (nnodes > (r->len - r->pos) / NODE_MIN_BYTES)
		return sd_fail(d, nodes_at, "%u nodes cannot fit in the %zu "
			       "bytes left", nnodes, r->len - r->pos);
	ids = mmi_arena_alloc(r, nnodes * sizeof(*ids), sizeof(*ids));
	cpus = mmi_arena_alloc(r, nnodes * sizeof(*cpus), sizeof(*cpus));
	names = mmi_arena_alloc(r, nnodes * sizeof(*names), sizeof(*names));
	tmp = calloc(nnodes, sizeof(*tmp));
	if (!tmp)
		return sd_nomem(d, "out of memory for %u nodes", nnodes);
	for (uint32_t i = 0; i < nnodes && !sd_check(d); i++) {
		if (dec_node(d, i, nworld, &tmp[i]))
			break;
		ids[i] = tmp[i].id;
		cpus[i] = tmp[i].cpus;
		names[i] = tmp[i].name;
	}
	if (d->failed) {
		free(tmp);
		return d->failed;
	}
	rc = mm_state_create(nworld, nnodes, ids, names, cpus, &s);
	if (rc == -EINVAL) {
		free(tmp);
		return sd_fail(d, nodes_at, "%u nodes with more PEs than a "
			       "matrix holds", nnodes);
	}
	if (rc) {
		free(tmp);
		return sd_nomem(d, "out of memory for the node table");
	}
	if (mm_state_set_sched(s, &conf)) {
		free(tmp);
		mm_state_destroy(s);
		return sd_nomem(d, "out of memory for %u matrix rows",
				conf.mpl);
	}
	/* ascending ids: tmp[i] is s->nodes[i], which it completes; the
	 * first column is the layout's (mm_state_create), not stored */
	for (uint32_t i = 0; i < nnodes; i++)
		tmp[i].col = s->nodes[i].col;
	memcpy(s->nodes, tmp, nnodes * sizeof(*tmp));
	free(tmp);
	s->slice = slice;
	s->now_ms = now_ms;
	r->aused = 0;
	*out = s;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Decoder: jobs                                                            */
/* ------------------------------------------------------------------------ */

/* The job's ranks (at offset at), read into j->rank_node: on no node unless
 * placed; else on compute nodes of its nodelist, which make its node set,
 * and if it holds cpus, on UP nodes with a cpu free for each. */
static int dec_ranks(struct sd *d, mm_state_t *s, struct mm_jobrec *j,
		     int placed)
{
	int holds = holds_cpus(j->v.state);

	for (uint32_t r = 0; r < j->v.ranks; r++) {
		size_t at = d->r.pos;
		uint32_t id = mmi_get_u32(&d->r);
		mm_node_t *n = node_of(s, id);

		if (sd_check(d))
			return d->failed;
		if (!placed) {
			if (id != 0)
				return sd_fail(d, at, "rank %u is on node %u "
					       "but the job was never placed",
					       r, id);
			continue;
		}
		if (!n)
			return sd_fail(d, at, "rank %u is on %u, not a compute "
				       "node", r, id);
		if (j->want && !sp_nodeset_has(j->want, id))
			return sd_fail(d, at, "rank %u is on node %u, outside "
				       "the job's nodelist", r, id);
		if (holds && n->state != MM_NODE_UP)
			return sd_fail(d, at, "rank %u of a %s job is on node "
				       "%u, which is DOWN", r,
				       mm_job_state_name(j->v.state), id);
		j->rank_node[r] = id;
		sp_nodeset_add(j->nodes, id);
		n->used += holds;
	}
	return 0;
}

/* Statuses, only on a job that ended by JOB_EXITED (COMPLETED, or FAILED
 * by a rank): it was placed, and a COMPLETED job always has them. */
static int dec_status(struct sd *d, struct mm_jobrec *j, int placed)
{
	mm_job_state_t st = j->v.state;
	size_t at = d->r.pos;
	int has = get_ranged(d, "has_status", 0, 1);
	int32_t *v;

	if (sd_check(d))
		return d->failed;
	if (has && (!placed || (st != MM_JOB_COMPLETED &&
				st != MM_JOB_FAILED)))
		return sd_fail(d, at, "statuses on a %s%s job: only a job that "
			       "ended by JOB_EXITED has them",
			       placed ? "" : "never placed ",
			       mm_job_state_name(st));
	if (!has && st == MM_JOB_COMPLETED)
		return sd_fail(d, at, "a COMPLETED job without its statuses");
	if (!has)
		return 0;
	if ((size_t)j->v.ranks * 4 > d->r.len - d->r.pos)
		return sd_fail(d, d->r.pos, "%u statuses cannot fit in the %zu "
			       "bytes left", j->v.ranks, d->r.len - d->r.pos);
	v = malloc((size_t)j->v.ranks * sizeof(*v));
	if (!v)
		return sd_nomem(d, "out of memory for %u statuses",
				j->v.ranks);
	for (uint32_t r = 0; r < j->v.ranks; r++)
		v[r] = (int32_t)mmi_get_u32(&d->r);
	j->rank_status = v;
	j->v.rank_status = v;
	return 0;
}

static int claim_block(struct sd *d, mm_state_t *s, struct mm_jobrec *j);

/* Its block (v2): only a job holding PEs has one, a buddy block of a row
 * in force whose cells no other job holds; the rest of the consistency
 * (ranks on its columns) is mm_matrix_check()'s, once all jobs are in.
 * A v1 job holding PEs has none to give it. */
static int dec_block(struct sd *d, mm_state_t *s, struct mm_jobrec *j)
{
	size_t at = d->r.pos;
	uint32_t row = 0, col = 0, w = 0;

	if (d->version >= 2) {
		row = mmi_get_u32(&d->r);
		col = mmi_get_u32(&d->r);
		w = mmi_get_u32(&d->r);
		if (sd_check(d))
			return d->failed;
	}
	if (!holds_cpus(j->v.state)) {
		if (row || col || w)
			return sd_fail(d, at, "a %s job has a block",
				       mm_job_state_name(j->v.state));
		return 0;
	}
	if (d->version < 2)
		return sd_fail(d, at, "a version 1 snapshot with a %s job: "
			       "it has no matrix block; let the jobs end "
			       "before upgrading", mm_job_state_name(j->v.state));
	j->v.row = row;
	j->v.col = col;
	j->v.width = w;
	/* from v10 a job may be a step, said after its shape: its block
	 * waits for that (dec_step()) */
	d->block_at = at;
	return d->version >= 10 ? 0 : claim_block(d, s, j);
}

/* A job's buddy block: a row in force whose cells no other job holds. */
static int claim_block(struct sd *d, mm_state_t *s, struct mm_jobrec *j)
{
	uint32_t row = j->v.row, col = j->v.col, w = j->v.width;
	size_t at = d->block_at;

	if (row >= s->conf.mpl || !w || (w & (w - 1)) || w > s->pow2 ||
	    col % w || col >= s->ncols)
		return sd_fail(d, at, "block row %u [%u, +%u) is not a buddy "
			       "block of a %u x %u matrix", row, col, w,
			       s->conf.mpl, s->ncols);
	for (uint32_t c = col; c < col + w && c < s->ncols; c++) {
		uint32_t *cell = &s->cells[(size_t)row * s->ncols + c];

		if (mm_matrix_col_node(s, c) == UINT32_MAX)
			continue; /* a phantom: never held */
		if (*cell)
			return sd_fail(d, at, "block row %u [%u, +%u) overlaps "
				       "job %u's", row, col, w, *cell);
		*cell = j->v.id;
		s->rowuse[row]++;
	}
	return 0;
}

/* Whether it is an allocation or a step (v10).  A step's allocation is
 * an earlier job of its owner, in the state while the step has not
 * ended; a step holding PEs holds task slots of its allocation's, not a
 * block, and its ranks count on no node (the allocation's do). */
static int dec_step(struct sd *d, mm_state_t *s, struct mm_jobrec *j)
{
	size_t at = d->r.pos;
	const struct mm_jobrec *p;
	uint32_t cpt = j->v.cpus_per_task;

	j->v.alloc = (uint8_t)get_ranged(d, "alloc", 0, 1);
	j->v.parent = mmi_get_u32(&d->r);
	if (sd_check(d))
		return d->failed;
	if (!j->v.parent)
		return holds_cpus(j->v.state) ? claim_block(d, s, j) : 0;
	p = mmi_job_of(s, j->v.parent);
	if (j->v.alloc || j->v.parent >= j->v.id ||
	    (p && (!p->v.alloc || p->v.uid != j->v.uid)) ||
	    (!p && !is_terminal(j->v.state)))
		return sd_fail(d, at, "a step of job %u that SUBMIT would not "
			       "give (an allocation of its owner, in the "
			       "state while the step lives)", j->v.parent);
	if (!holds_cpus(j->v.state))
		return 0;
	if (!holds_cpus(p->v.state) || j->v.row != p->v.row ||
	    j->v.col < p->v.col || j->v.width != j->v.ranks ||
	    cpt != p->v.cpus_per_task ||
	    (uint64_t)j->v.col - p->v.col + j->v.width > p->v.ranks)
		return sd_fail(d, d->block_at, "step slots row %u [%u, +%u) "
			       "are not task slots of its allocation %u, "
			       "holding PEs", j->v.row, j->v.col, j->v.width,
			       j->v.parent);
	for (uint32_t r = 0; r < j->v.ranks; r++)
		node_of(s, j->rank_node[r])->used -= cpt;
	return 0;
}

/* Its inputs (v7): none, or one per input, as SUBMIT checks them. */
static int dec_inputs(struct sd *d, struct mm_jobrec *j)
{
	size_t at = d->r.pos;
	const mm_input_t *in;
	uint32_t n;

	d->r.aused = 0; /* the spec's strings are copied already */
	in = mmi_get_inputs(&d->r, &n);
	if (sd_check(d))
		return d->failed;
	if (n && n != j->v.nfiles + 1)
		return sd_fail(d, at, "%u inputs for a job of %u files", n,
			       j->v.nfiles);
	for (uint32_t k = 0; k < n; k++)
		if (in[k].mode > 0777)
			return sd_fail(d, at, "input %u has mode %o", k,
				       in[k].mode);
	j->v.mpi = (uint8_t)get_ranged(d, "mpi", MM_MPI_NONE, MM_MPI_MAX);
	if (sd_check(d))
		return d->failed;
	if (!n)
		return 0;
	if (!(j->inputs = malloc(n * sizeof(*j->inputs))))
		return sd_nomem(d, "out of memory for %u inputs", n);
	memcpy(j->inputs, in, n * sizeof(*j->inputs));
	j->v.ninputs = n;
	j->v.inputs = j->inputs;
	return 0;
}

/* Its checkpoints (v8): the catalog as CKPT_COMMIT leaves it. */
static int dec_ckpts(struct sd *d, struct mm_jobrec *j)
{
	size_t at;
	uint32_t n;

	j->v.ckpt_last = mmi_get_u32(&d->r);
	j->v.ckpt_want = mmi_get_u32(&d->r);
	j->v.ckpt_want_slice = mmi_get_u64(&d->r);
	get_fixed(d, "checkpoint error", j->v.ckpt_error,
		  sizeof(j->v.ckpt_error));
	at = d->r.pos;
	n = mmi_get_u32(&d->r);
	if (sd_check(d))
		return d->failed;
	if (j->v.ckpt_want && j->v.ckpt_want != j->v.ckpt_last)
		return sd_fail(d, at, "epoch %u pending, not the last one "
			       "handed out (%u)", j->v.ckpt_want,
			       j->v.ckpt_last);
	if (n > MM_CKPT_KEEP_MAX || (size_t)n * 36 > d->r.len - d->r.pos)
		return sd_fail(d, at, "%u checkpoints (at most %u, in the "
			       "bytes left)", n, MM_CKPT_KEEP_MAX);
	if (n && !(j->ckpts = calloc(MM_CKPT_KEEP_MAX, sizeof(*j->ckpts))))
		return sd_nomem(d, "out of memory for %u checkpoints", n);
	for (uint32_t k = 0; k < n; k++) {
		mm_ckpt_t *c = &j->ckpts[k];

		c->epoch = mmi_get_u32(&d->r);
		c->stop_us = mmi_get_u32(&d->r);
		c->levels = mmi_get_u32(&d->r);
		c->slice = mmi_get_u64(&d->r);
		c->ms = mmi_get_u64(&d->r);
		c->bytes = mmi_get_u64(&d->r);
		if (sd_check(d))
			return d->failed;
		if (!c->epoch || c->epoch > j->v.ckpt_last ||
		    (k && c->epoch <= j->ckpts[k - 1].epoch))
			return sd_fail(d, at, "checkpoint epochs not ascending "
				       "within 1..%u", j->v.ckpt_last);
	}
	j->v.nckpts = n;
	j->v.ckpts = j->ckpts;
	at = d->r.pos;
	j->v.restore_epoch = mmi_get_u32(&d->r);
	j->v.restarts = mmi_get_u32(&d->r);
	j->v.ckpt_every_s = mmi_get_u32(&d->r);
	j->v.ckpt_requeue = mmi_get_u8(&d->r);
	j->v.requeue = mmi_get_u8(&d->r);
	if (sd_check(d))
		return d->failed;
	if (j->v.requeue > 1)
		return sd_fail(d, at, "a requeue flag %u (0 or 1)",
			       j->v.requeue);
	if (j->v.ckpt_requeue > 1 || (j->v.ckpt_requeue && !j->v.ckpt_want))
		return sd_fail(d, at, "a requeue mark %u without an epoch "
			       "pending", j->v.ckpt_requeue);
	if (j->v.restore_epoch > j->v.ckpt_last)
		return sd_fail(d, at, "restoring epoch %u, after the last "
			       "handed out (%u)", j->v.restore_epoch,
			       j->v.ckpt_last);
	return 0;
}

/* Its shape (v9).  Its ranks were counted on their nodes one cpu each:
 * a rank holds cpus_per_task of them. */
static int dec_shape(struct sd *d, mm_state_t *s, struct mm_jobrec *j)
{
	size_t at = d->r.pos;

	j->v.cpus_per_task = mmi_get_u32(&d->r);
	j->v.tasks_per_node = mmi_get_u32(&d->r);
	j->v.node_count = mmi_get_u32(&d->r);
	j->v.cpu_bind = mmi_get_u8(&d->r);
	j->v.dep_job = mmi_get_u32(&d->r);
	j->v.dep_type = mmi_get_u8(&d->r);
	j->v.array_id = mmi_get_u32(&d->r);
	j->v.array_task = mmi_get_u32(&d->r);
	j->v.array_max = mmi_get_u32(&d->r);
	if (sd_check(d))
		return d->failed;
	if (j->v.dep_type > MM_DEP_MAX || (!j->v.dep_type != !j->v.dep_job) ||
	    j->v.dep_job >= j->v.id || j->v.array_id > j->v.id ||
	    (!j->v.array_id && (j->v.array_task || j->v.array_max)))
		return sd_fail(d, at, "a dependency (job %u, type %u) or array "
			       "(%u, task %u) that SUBMIT would not give",
			       j->v.dep_job, j->v.dep_type, j->v.array_id,
			       j->v.array_task);
	if (!j->v.cpus_per_task || j->v.cpus_per_task > MM_CPUS_MAX ||
	    j->v.tasks_per_node > MM_CPUS_MAX ||
	    j->v.node_count > j->v.ranks || j->v.cpu_bind > MM_BIND_MAX)
		return sd_fail(d, at, "a shape out of range (cpus per task "
			       "%u, tasks per node %u, nodes %u, bind %u)",
			       j->v.cpus_per_task, j->v.tasks_per_node,
			       j->v.node_count, j->v.cpu_bind);
	if (holds_cpus(j->v.state))
		for (uint32_t r = 0; r < j->v.ranks; r++)
			node_of(s, j->rank_node[r])->used +=
				j->v.cpus_per_task - 1;
	return 0;
}

/* Its usage (v3): only a job with statuses may have it. */
static int dec_usage(struct sd *d, struct mm_jobrec *j)
{
	size_t at = d->r.pos;
	int has;
	mm_usage_t *u;

	if (d->version < 3)
		return 0;
	has = get_ranged(d, "has_usage", 0, 1);
	if (sd_check(d) || !has)
		return d->failed;
	if (!j->rank_status)
		return sd_fail(d, at, "usage on a job without statuses");
	if ((size_t)j->v.ranks * 24 > d->r.len - d->r.pos)
		return sd_fail(d, d->r.pos, "usage of %u ranks cannot fit in "
			       "the %zu bytes left", j->v.ranks,
			       d->r.len - d->r.pos);
	u = malloc((size_t)j->v.ranks * sizeof(*u));
	if (!u)
		return sd_nomem(d, "out of memory for %u ranks' usage",
				j->v.ranks);
	for (uint32_t r = 0; r < j->v.ranks; r++) {
		u[r].utime_us = mmi_get_u64(&d->r);
		u[r].stime_us = mmi_get_u64(&d->r);
		u[r].maxrss_kib = mmi_get_u64(&d->r);
	}
	j->rank_usage = u;
	j->v.rank_usage = u;
	return 0;
}

/* Job id: its spec, rebuilt as SUBMIT would, then what happened to it. */
static int dec_job(struct sd *d, mm_state_t *s, uint32_t id)
{
	struct mmi_rd *r = &d->r;
	size_t at = r->pos, placed_at;
	const mm_job_spec_t *sp;
	struct mm_jobrec *j;
	mm_result_t res = { 0 };
	int placed;

	sd_part(d, "job %u", id);
	r->aused = 0; /* the previous job's strings are copied: reuse */
	sp = mmi_get_spec(r);
	if (sd_check(d))
		return d->failed;
	check_fixed(d, at, "name", sp->name, MM_NAME_MAX);
	if (!d->failed && (size_t)sp->ranks * 4 > r->len - r->pos)
		sd_fail(d, at, "%u ranks cannot fit in the %zu bytes left",
			sp->ranks, r->len - r->pos);
	if (d->failed)
		return d->failed;
	if (mmi_job_new(s, sp, &j, &res)) {
		if (res.rc == -ENOMEM)
			return sd_nomem(d, "%s", res.err);
		return sd_fail(d, at, "not a job SUBMIT accepts (%s)", res.err);
	}
	if (sp->nodelist && !j->nodelist) {
		mmi_job_free(j);
		return sd_fail(d, at, "nodelist \"%.32s\" names no node; a job "
			       "without one stores none (NULL)", sp->nodelist);
	}
	j->v.id = id;
	s->jobs[s->njobs++] = j; /* the state frees it from now on */
	j->v.state = get_ranged(d, "state", MM_JOB_PENDING, MM_JOB_CANCELLED);
	get_fixed(d, "reason", j->v.reason, sizeof(j->v.reason));
	j->v.submit_slice = mmi_get_u64(r);
	j->v.start_slice = mmi_get_u64(r);
	j->v.end_slice = mmi_get_u64(r);
	j->v.submit_ms = mmi_get_u64(r);
	j->v.start_ms = mmi_get_u64(r);
	j->v.end_ms = mmi_get_u64(r);
	j->v.exit_code = (int32_t)mmi_get_u32(r);
	placed_at = r->pos;
	placed = get_ranged(d, "placed", 0, 1);
	if (sd_check(d))
		return d->failed;
	if (placed && j->v.state == MM_JOB_PENDING)
		return sd_fail(d, placed_at, "a PENDING job is placed");
	if (!placed && holds_cpus(j->v.state))
		return sd_fail(d, placed_at, "a %s job is not placed",
			       mm_job_state_name(j->v.state));
	if (dec_ranks(d, s, j, placed) || dec_status(d, j, placed) ||
	    dec_block(d, s, j) || dec_usage(d, j))
		return d->failed;
	if (d->version >= 6) {
		j->v.mem_bytes = mmi_get_u64(&d->r);
		if (sd_check(d))
			return d->failed;
	}
	if (d->version >= 7 && dec_inputs(d, j))
		return d->failed;
	if (d->version >= 8 && dec_ckpts(d, j))
		return d->failed;
	if (d->version >= 9 && dec_shape(d, s, j))
		return d->failed;
	if (d->version >= 10 && dec_step(d, s, j))
		return d->failed;
	return 0;
}

static int dec_jobs(struct sd *d, mm_state_t *s)
{
	struct mmi_rd *r = &d->r;
	size_t at = r->pos;
	uint32_t njobs, next_id = 0, id = 0;

	sd_part(d, "the job table");
	if (d->version >= 4)
		next_id = mmi_get_u32(r);
	njobs = mmi_get_u32(r);
	if (sd_check(d))
		return d->failed;
	if (d->version < 4)
		next_id = njobs + 1;
	if (njobs > (r->len - r->pos) / JOB_MIN_BYTES)
		return sd_fail(d, at, "%u jobs cannot fit in the %zu bytes "
			       "left", njobs, r->len - r->pos);
	if (next_id == 0 || njobs > next_id - 1)
		return sd_fail(d, at, "%u jobs with ids below %u", njobs,
			       next_id);
	if (mmi_jobs_reserve(s, njobs))
		return sd_nomem(d, "out of memory for %u jobs", njobs);
	s->next_id = next_id;
	for (uint32_t k = 0; k < njobs; k++) {
		uint32_t prev = id;

		if (d->version >= 4) {
			size_t id_at = r->pos;

			id = mmi_get_u32(r);
			if (sd_check(d))
				return d->failed;
			if (id <= prev || id >= next_id)
				return sd_fail(d, id_at, "job id %u after %u: "
					       "ids ascend and stay below "
					       "next_id %u", id, prev,
					       next_id);
		} else {
			id = k + 1;
		}
		if (dec_job(d, s, id))
			return d->failed;
	}
	while (s->live_lo < s->njobs &&
	       is_terminal(s->jobs[s->live_lo]->v.state))
		s->live_lo++;
	if (mmi_pending_rebuild(s))
		return sd_nomem(d, "out of memory for the pending counts");
	s->state_bytes = 0;
	s->nterminal = 0;
	s->min_end_ms = UINT64_MAX;
	for (uint32_t i = 0; i < s->njobs; i++) {
		const struct mm_jobrec *j = s->jobs[i];

		s->state_bytes += mmi_job_bytes(j);
		if (is_terminal(j->v.state)) {
			s->nterminal++;
			if (j->v.end_ms < s->min_end_ms)
				s->min_end_ms = j->v.end_ms;
		}
	}
	return 0;
}

/* v5: the replay cache, ids strictly ascending (canonical). */
static int dec_creds(struct sd *d, mm_state_t *s)
{
	struct mmi_rd *r = &d->r;
	size_t at = r->pos;
	uint32_t n;

	if (d->version < 5)
		return 0;
	sd_part(d, "the credential cache");
	n = mmi_get_u32(r);
	if (sd_check(d))
		return d->failed;
	if (n > MM_CREDS_MAX || n > (r->len - r->pos) / (MM_CRED_ID_BYTES + 8))
		return sd_fail(d, at, "%u credentials: more than %u or than "
			       "the %zu bytes left hold", n, MM_CREDS_MAX,
			       r->len - r->pos);
	for (uint32_t i = 0; i < n; i++) {
		size_t id_at = r->pos;
		const uint8_t *id = mmi_get_bytes(r, MM_CRED_ID_BYTES);
		uint64_t exp = mmi_get_u64(r);

		if (sd_check(d))
			return d->failed;
		if (i && memcmp(s->creds[i - 1].id, id, MM_CRED_ID_BYTES) >= 0)
			return sd_fail(d, id_at, "credential %u: ids must "
				       "ascend", i);
		if (mmi_creds_append(s, id, exp))
			return sd_nomem(d, "out of memory for %u credentials",
					n);
	}
	return 0;
}

/* v9: the drained nodes, ids strictly ascending. */
static int dec_drained(struct sd *d, mm_state_t *s)
{
	struct mmi_rd *r = &d->r;
	size_t at = r->pos;
	uint32_t n, last = 0;

	if (d->version < 9)
		return 0;
	sd_part(d, "the drained nodes");
	n = mmi_get_u32(r);
	if (sd_check(d))
		return d->failed;
	if (n > s->nnodes)
		return sd_fail(d, at, "%u drained nodes of %u", n, s->nnodes);
	for (uint32_t i = 0; i < n; i++) {
		size_t id_at = r->pos;
		uint32_t id = mmi_get_u32(r);
		const char *why = mmi_get_str(r);
		mm_node_t *x;

		if (sd_check(d))
			return d->failed;
		if (!(x = node_of(s, id)) || (i && id <= last) || !why ||
		    strlen(why) >= sizeof(x->drain_reason))
			return sd_fail(d, id_at, "drained node %u: not a "
				       "compute node, out of order, or its "
				       "reason too long", id);
		x->drain = 1;
		snprintf(x->drain_reason, sizeof(x->drain_reason), "%s", why);
		last = id;
	}
	return 0;
}

static int dec_v1(struct sd *d, mm_state_t **out)
{
	mm_state_t *s = NULL;
	char why[200];

	if (dec_nodes(d, &s) || dec_jobs(d, s) || dec_creds(d, s) ||
	    dec_drained(d, s)) {
		mm_state_destroy(s);
		return d->failed;
	}
	if (mm_matrix_check(s, why, sizeof(why))) {
		sd_part(d, "the matrix");
		mm_state_destroy(s);
		return sd_fail(d, d->r.pos, "%s", why);
	}
	if (d->r.pos != d->r.len) {
		sd_part(d, "the end");
		mm_state_destroy(s);
		return sd_fail(d, d->r.pos, "%zu bytes after the last part",
			       d->r.len - d->r.pos);
	}
	*out = s;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Decoder: entry point and the table of versions                           */
/* ------------------------------------------------------------------------ */

/* Every version this build reads, indexed by version; encode writes
 * SNAP_VERSION.  A new version adds a row and keeps the old ones, so a
 * replica can load what an older build wrote. */
static int (*const decoders[])(struct sd *, mm_state_t **) = {
	[1] = dec_v1,
	[2] = dec_v1, /* the same decoder, reading d->version's fields */
	[3] = dec_v1,
	[4] = dec_v1,
	[5] = dec_v1,
	[6] = dec_v1,
	[7] = dec_v1,
	[8] = dec_v1,
	[9] = dec_v1,
	[10] = dec_v1,
};

int mm_state_decode(const uint8_t *buf, size_t len, mm_state_t **out,
		    char *err, size_t errlen)
{
	struct sd d = { .r = { .buf = buf, .len = len }, .err = err,
			.errlen = errlen };
	const uint8_t *magic;
	uint16_t version;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out || (!buf && len))
		return -EINVAL;
	sd_part(&d, "the header");
	if (len > MMI_INPUT_MAX)
		return sd_fail(&d, 0, "%zu bytes is more than a snapshot can "
			       "be", len);
	magic = mmi_get_bytes(&d.r, sizeof(snap_magic));
	version = mmi_get_u16(&d.r);
	if (len < HEADER_BYTES)
		return sd_fail(&d, 0, "%zu bytes, fewer than the %d of the "
			       "header", len, HEADER_BYTES);
	if (memcmp(magic, snap_magic, sizeof(snap_magic)))
		return sd_fail(&d, 0, "not a Storm manager snapshot (magic "
			       "%02x %02x %02x %02x, not \"SMMS\")", magic[0],
			       magic[1], magic[2], magic[3]);
	if (version >= sizeof(decoders) / sizeof(decoders[0]) ||
	    !decoders[version])
		return sd_fail(&d, 4, "version %u, which this build does not "
			       "read (it reads version %u and older); take "
			       "the snapshot from a replica of this build's "
			       "version, or upgrade this one", version,
			       SNAP_VERSION);
	d.r.acap = mmi_arena_bound(len);
	d.r.arena = malloc(d.r.acap);
	if (!d.r.arena)
		return sd_nomem(&d, "out of memory for %zu bytes of snapshot",
				len);
	d.version = version;
	rc = decoders[version](&d, out);
	free(d.r.arena);
	return rc;
}
