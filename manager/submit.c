/*
 * submit.c — MM_OP_SUBMIT: check a job spec and deep-copy it into a new
 * PENDING job.  Everything a job will ever need to be placed (its rank
 * table, its node set) is allocated here, so TICK never allocates and
 * never fails half-way.
 *
 * Invariant: a refused SUBMIT changes nothing and says why in res->err;
 * an accepted one takes the next id (ids are 1, 2, 3, ...).  A snapshot
 * (snapshot.c) rebuilds each job through the same checks and copies
 * (mmi_job_new), so a decoded job is one SUBMIT could have made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"

static int check_strv(const char *what, uint32_t n, const char *const *v,
		      mm_result_t *res)
{
	if (n > MM_ARGS_MAX)
		return mmi_refuse(res, -EINVAL, "submit: %u %s strings, more "
				  "than the %u a job may carry; pass fewer", n,
				  what, MM_ARGS_MAX);
	if (n && !v)
		return mmi_refuse(res, -EINVAL, "submit: %s count is %u but "
				  "the array is NULL; give the strings or a "
				  "count of 0", what, n);
	for (uint32_t i = 0; i < n; i++) {
		if (!v[i])
			return mmi_refuse(res, -EINVAL, "submit: %s[%u] is "
					  "NULL; every string must be given",
					  what, i);
		if (strlen(v[i]) >= MM_STR_MAX)
			return mmi_refuse(res, -EINVAL, "submit: %s[%u] is "
					  "longer than %u bytes; shorten it",
					  what, i, MM_STR_MAX - 1);
	}
	return 0;
}

static int check_str(const char *what, const char *str, mm_result_t *res)
{
	if (str && strlen(str) >= MM_STR_MAX)
		return mmi_refuse(res, -EINVAL, "submit: %s is longer than %u "
				  "bytes; shorten it", what, MM_STR_MAX - 1);
	return 0;
}

/* Parse the nodelist into *want (NULL for "any") and check every id is a
 * compute node; *cpus gets the cpus the job may use. */
static int check_nodelist(mm_state_t *s, const char *text,
			  sp_nodeset_t **want, uint64_t *cpus,
			  mm_result_t *res)
{
	char perr[128];
	sp_nodeset_t *set;
	int rc;

	*want = NULL;
	*cpus = s->total_cpus;
	if (!text || !*text)
		return 0;
	rc = sp_nodeset_create(s->nworld, &set);
	if (rc)
		return mmi_refuse(res, rc, "submit: out of memory for the "
				  "nodelist");
	perr[0] = '\0';
	rc = sp_nodeset_parse(set, text, perr, sizeof(perr));
	if (rc) {
		sp_nodeset_destroy(set);
		return mmi_refuse(res, -EINVAL, "submit: nodelist \"%.64s\" "
				  "does not parse (%s); give world ids below "
				  "%u like \"1-3,5\"", text,
				  perr[0] ? perr : storm_strerror(rc),
				  s->nworld);
	}
	*cpus = 0;
	for (int64_t id = sp_nodeset_next(set, 0); id >= 0;
	     id = sp_nodeset_next(set, (uint32_t)id + 1)) {
		mm_node_t *n = node_of(s, (uint32_t)id);

		if (!n) {
			sp_nodeset_destroy(set);
			return mmi_refuse(res, -EINVAL, "submit: nodelist "
					  "\"%.64s\" names node %u, which is "
					  "not a compute node; list compute "
					  "nodes only", text, (uint32_t)id);
		}
		*cpus += n->cpus;
	}
	if (sp_nodeset_count(set) == 0) { /* text without ids: any node */
		sp_nodeset_destroy(set);
		*cpus = s->total_cpus;
		return 0;
	}
	*want = set;
	return 0;
}

/* Ranks the candidate nodes (want, or all) can hold under the spec's
 * shape, and whether -N can be met: 0, or a refusal saying why. */
static int check_shape(mm_state_t *s, const mm_job_spec_t *sp,
		       const sp_nodeset_t *want, mm_result_t *res)
{
	uint32_t c = sp->cpus_per_task ? sp->cpus_per_task : 1;
	uint32_t k = sp->tasks_per_node, n = sp->node_count;
	uint32_t base = n ? sp->ranks / n : 0, extra = n ? sp->ranks % n : 0;
	uint32_t big = 0, fit_base = 0, fit_more = 0, nodes = 0;
	uint64_t slots = 0;

	if (c > MM_CPUS_MAX || k > MM_CPUS_MAX || sp->cpu_bind > MM_BIND_MAX)
		return mmi_refuse(res, -EINVAL, "submit: shape out of range "
				  "(cpus per task %u, tasks per node %u: at "
				  "most %u; cpu_bind %u)", c, k, MM_CPUS_MAX,
				  sp->cpu_bind);
	if (n && n > sp->ranks)
		return mmi_refuse(res, -EINVAL, "submit: %u nodes for %u "
				  "ranks: every node needs a rank; ask for at "
				  "most %u nodes", n, sp->ranks, sp->ranks);
	if (n && k && sp->ranks > (uint64_t)n * k)
		return mmi_refuse(res, -EINVAL, "submit: %u ranks do not fit "
				  "%u nodes of at most %u each", sp->ranks, n,
				  k);
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const mm_node_t *x = &s->nodes[i];
		uint32_t q = x->cpus / c;

		if (want && !sp_nodeset_has(want, x->id))
			continue;
		nodes++;
		if (x->cpus > big)
			big = x->cpus;
		if (k && q > k)
			q = k;
		slots += q;
		fit_base += q >= base && q > 0;
		fit_more += q >= base + 1;
	}
	if (c > big)
		return mmi_refuse(res, -EINVAL, "submit: %u cpus per task, but "
				  "the largest %s has %u; ask for at most %u",
				  c, want ? "node of the nodelist" : "node",
				  big, big);
	if (n && n > nodes)
		return mmi_refuse(res, -EINVAL, "submit: %u nodes requested but "
				  "%s has only %u", n, want ? "the nodelist" :
				  "the machine", nodes);
	if (n && (fit_base < n || fit_more < extra))
		return mmi_refuse(res, -EINVAL, "submit: %u ranks on %u nodes "
				  "need %u nodes holding %u ranks of %u cpus "
				  "(and %u of them one more): %s has not so "
				  "many", sp->ranks, n, n, base, c, extra,
				  want ? "the nodelist" : "the machine");
	if (sp->ranks > slots)
		return mmi_refuse(res, -EINVAL, "submit: %u ranks of %u cpus "
				  "each%s need more than %s holds (%llu); ask "
				  "for at most %llu", sp->ranks, c,
				  k ? " at most tasks_per_node on a node" : "",
				  want ? "the nodelist" : "the machine",
				  (unsigned long long)slots,
				  (unsigned long long)slots);
	return 0;
}

/* A dependency names a job of the state that the submitter owns (root
 * any).  It can only be an earlier job (ids ascend), so dependencies
 * never form a cycle. */
static int check_dependency(mm_state_t *s, const mm_job_spec_t *sp,
			    mm_result_t *res)
{
	const struct mm_jobrec *d;

	if (!sp->dep_type || sp->dep_type > MM_DEP_MAX || !sp->dep_job)
		return mmi_refuse(res, -EINVAL, "submit: dependency type %u on "
				  "job %u: want afterok, afterany or "
				  "afternotok on a job id", sp->dep_type,
				  sp->dep_job);
	if (!(d = mmi_job_of(s, sp->dep_job)))
		return mmi_refuse(res, -ENOENT, "submit: dependency on job %u, "
				  "which %s", sp->dep_job,
				  sp->dep_job >= s->next_id ?
				  "does not exist (a job can only depend on "
				  "one submitted before it)" :
				  "is no longer in the state (it ended and "
				  "went to the history)");
	if (sp->uid != 0 && d->v.uid != sp->uid)
		return mmi_refuse(res, -EPERM, "submit: dependency on job %u of "
				  "uid %u; a job may depend only on its "
				  "owner's jobs", sp->dep_job, d->v.uid);
	return 0;
}

static int check_spec(mm_state_t *s, const mm_job_spec_t *sp,
		      sp_nodeset_t **want, mm_result_t *res)
{
	uint64_t cpus;
	int rc;

	if (!sp)
		return mmi_refuse(res, -EINVAL, "submit: no job spec given");
	if (sp->ranks == 0)
		return mmi_refuse(res, -EINVAL, "submit: ranks is 0; a job "
				  "needs at least one rank");
	if (sp->argc == 0 || !sp->argv || !sp->argv[0] || !sp->argv[0][0])
		return mmi_refuse(res, -EINVAL, "submit: no program (argc 0 or "
				  "argv[0] empty); give the program path as "
				  "argv[0]");
	rc = check_strv("argv", sp->argc, sp->argv, res);
	if (!rc)
		rc = check_strv("env", sp->envc, sp->env, res);
	if (!rc)
		rc = check_strv("files", sp->nfiles, sp->files, res);
	if (!rc)
		rc = check_str("name", sp->name, res);
	if (!rc)
		rc = check_str("cwd", sp->cwd, res);
	if (!rc)
		rc = check_str("out_path", sp->out_path, res);
	if (!rc)
		rc = check_str("err_path", sp->err_path, res);
	if (!rc)
		rc = check_str("nodelist", sp->nodelist, res);
	if (rc)
		return rc;
	if (sp->ninputs && (sp->ninputs != sp->nfiles + 1 || !sp->inputs))
		return mmi_refuse(res, -EINVAL, "submit: %u inputs for a job "
				  "of %u files; the program and each file "
				  "have one", sp->ninputs, sp->nfiles);
	for (uint32_t k = 0; k < sp->ninputs; k++)
		if (sp->inputs[k].mode > 0777)
			return mmi_refuse(res, -EINVAL, "submit: input %u has "
					  "mode %o; only permission bits "
					  "(0 to 0777) are kept", k,
					  sp->inputs[k].mode);
	if (sp->mpi > MM_MPI_MAX)
		return mmi_refuse(res, -EINVAL, "submit: MPI %u is not one "
				  "this manager knows (none, bcs, pmi1 or pmix)",
				  sp->mpi);
	/* an MPI of its own keeps sockets and shared memory between its
	 * ranks that a checkpoint of each rank alone cannot capture */
	if ((sp->mpi == MM_MPI_PMI1 || sp->mpi == MM_MPI_PMIX) &&
	    (sp->ckpt_every_s || sp->requeue))
		return mmi_refuse(res, -EINVAL, "submit: an MPICH or Open MPI "
				  "job "
				  "cannot be checkpointed: its ranks' "
				  "connections are outside Storm; use "
				  "BCS-MPI (--mpi bcs) for --checkpoint and "
				  "--requeue");
	if (sp->ckpt_every_s && sp->ckpt_every_s != MM_CKPT_AUTO &&
	    sp->ckpt_every_s > MM_CKPT_EVERY_MAX)
		return mmi_refuse(res, -EINVAL, "submit: a checkpoint every "
				  "%u s; at most every %u s (a year), or auto",
				  sp->ckpt_every_s, MM_CKPT_EVERY_MAX);
	if (sp->requeue > 1)
		return mmi_refuse(res, -EINVAL, "submit: requeue %u; 0 or 1",
				  sp->requeue);
	if (sp->ranks > MM_RANKS_MAX)
		return mmi_refuse(res, -EINVAL, "submit: %u ranks, more than "
				  "the %u a job may have; ask for fewer",
				  sp->ranks, MM_RANKS_MAX);
	rc = check_nodelist(s, sp->nodelist, want, &cpus, res);
	if (rc)
		return rc;
	if (sp->ranks > cpus) {
		mmi_refuse(res, -EINVAL, "submit: %u ranks requested but %s "
			   "has only %llu cpus; ask for at most %llu ranks",
			   sp->ranks, *want ? "the nodelist" : "the machine",
			   (unsigned long long)cpus, (unsigned long long)cpus);
		sp_nodeset_destroy(*want);
		*want = NULL;
		return -EINVAL;
	}
	if ((sp->dep_job || sp->dep_type) &&
	    (rc = check_dependency(s, sp, res))) {
		sp_nodeset_destroy(*want);
		*want = NULL;
		return rc;
	}
	if ((sp->cpus_per_task > 1 || sp->tasks_per_node || sp->node_count ||
	     sp->cpu_bind) && (rc = check_shape(s, sp, *want, res))) {
		sp_nodeset_destroy(*want);
		*want = NULL;
		return rc;
	}
	return 0;
}

/* Deep copies go into one block per job: first the three pointer arrays,
 * then the strings, so a job frees with one free(). */
struct copier {
	char *p;
	size_t left;
};

static size_t strv_size(uint32_t n, const char *const *v)
{
	size_t sz = (size_t)n * sizeof(char *);

	for (uint32_t i = 0; i < n; i++)
		sz += strlen(v[i]) + 1;
	return sz;
}

static const char *copy_str(struct copier *c, const char *src)
{
	size_t n;
	char *dst;

	if (!src)
		return NULL;
	n = strlen(src) + 1;
	dst = c->p;
	memcpy(dst, src, n);
	c->p += n;
	c->left -= n;
	return dst;
}

static int job_build(mm_state_t *s, const mm_job_spec_t *sp,
		     sp_nodeset_t *want, struct mm_jobrec **out)
{
	const char *const *strv[3] = { sp->argv, sp->env, sp->files };
	uint32_t cnt[3] = { sp->argc, sp->envc, sp->nfiles };
	const char **arr[3];
	const char *one[4] = { sp->cwd, sp->out_path, sp->err_path,
			       want ? sp->nodelist : NULL };
	struct mm_jobrec *j;
	struct copier c;
	size_t sz = 0;
	int rc = -ENOMEM;

	for (int k = 0; k < 3; k++)
		sz += strv_size(cnt[k], strv[k]);
	for (int k = 0; k < 4; k++)
		sz += one[k] ? strlen(one[k]) + 1 : 0;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->blk = malloc(sz ? sz : 1);
	j->rank_node = calloc(sp->ranks, sizeof(*j->rank_node));
	if (sp->ninputs &&
	    (j->inputs = malloc(sp->ninputs * sizeof(*j->inputs))))
		memcpy(j->inputs, sp->inputs, sp->ninputs * sizeof(*j->inputs));
	if (!j->blk || !j->rank_node || (sp->ninputs && !j->inputs))
		goto fail;
	j->v.ninputs = sp->ninputs;
	j->v.inputs = j->inputs;
	j->v.mpi = sp->mpi;
	j->v.ckpt_every_s = sp->ckpt_every_s;
	j->v.requeue = sp->requeue;
	j->v.cpus_per_task = sp->cpus_per_task ? sp->cpus_per_task : 1;
	j->v.tasks_per_node = sp->tasks_per_node;
	j->v.node_count = sp->node_count;
	j->v.cpu_bind = sp->cpu_bind;
	j->v.dep_job = sp->dep_job;
	j->v.dep_type = sp->dep_type;
	j->v.alloc = sp->alloc != 0;
	j->v.parent = sp->parent;
	rc = sp_nodeset_create(s->nworld, &j->nodes);
	if (rc)
		goto fail;
	c.p = j->blk;
	c.left = sz;
	for (int k = 0; k < 3; k++) {
		arr[k] = (const char **)(void *)c.p;
		c.p += (size_t)cnt[k] * sizeof(char *);
		c.left -= (size_t)cnt[k] * sizeof(char *);
	}
	for (int k = 0; k < 3; k++) {
		for (uint32_t i = 0; i < cnt[k]; i++)
			arr[k][i] = copy_str(&c, strv[k][i]);
	}
	j->v.argc = sp->argc;
	j->v.argv = arr[0];
	j->v.envc = sp->envc;
	j->v.env = sp->envc ? arr[1] : NULL;
	j->v.nfiles = sp->nfiles;
	j->v.files = sp->nfiles ? arr[2] : NULL;
	j->v.cwd = copy_str(&c, sp->cwd);
	j->v.out_path = copy_str(&c, sp->out_path);
	j->v.err_path = copy_str(&c, sp->err_path);
	j->nodelist = copy_str(&c, one[3]);
	j->want = want;
	/* A name longer than the view's field is cut: it is only for
	 * humans, and cutting is as deterministic as refusing. */
	snprintf(j->v.name, sizeof(j->v.name), "%s", sp->name ? sp->name : "");
	j->v.uid = sp->uid;
	j->v.gid = sp->gid;
	j->v.ranks = sp->ranks;
	j->v.nodes = j->nodes;
	j->v.rank_node = j->rank_node;
	j->v.batch = sp->batch != 0;
	j->v.time_limit_ms = sp->time_limit_ms;
	j->v.mem_bytes = sp->mem_bytes;
	j->v.state = MM_JOB_PENDING;
	mmi_fmt(j->v.reason, sizeof(j->v.reason),
		"submitted; considered at the next slice");
	j->v.submit_slice = s->slice;
	j->v.submit_ms = s->now_ms;
	*out = j;
	return 0;
fail:
	mmi_job_free(j);
	return rc;
}

int mmi_job_new(mm_state_t *s, const mm_job_spec_t *sp,
		struct mm_jobrec **out, mm_result_t *res)
{
	sp_nodeset_t *want = NULL;
	int rc;

	rc = check_spec(s, sp, &want, res);
	if (rc)
		return rc;
	rc = job_build(s, sp, want, out);
	if (rc) {
		sp_nodeset_destroy(want);
		return mmi_refuse(res, rc, "submit: out of memory for the job");
	}
	return 0;
}

/* What an op of this code carries, and what it does not (the log holds
 * older codes: a field they lack is its default). */
static void fixup(struct mm_jobrec *j, const mm_op_t *op, int inputs)
{
	/* limits travel only in SUBMIT_LIMITS and SUBMIT_INPUTS, inputs
	 * only in the latter (what the log holds) */
	if (op->code != MM_OP_SUBMIT_LIMITS && !inputs)
		j->v.mem_bytes = 0;
	int shape = op->code == MM_OP_SUBMIT_SHAPE ||
		    op->code == MM_OP_SUBMIT_STEP;

	if (op->code != MM_OP_SUBMIT_CKPT && !shape) {
		j->v.ckpt_every_s = 0;
		j->v.requeue = 0;
	}
	if (op->code != MM_OP_SUBMIT_STEP) {
		j->v.alloc = 0;
		j->v.parent = 0;
	}
	if (!shape) {
		j->v.cpus_per_task = 1;
		j->v.tasks_per_node = j->v.node_count = 0;
		j->v.cpu_bind = MM_BIND_AUTO;
		j->v.dep_job = 0;
		j->v.dep_type = MM_DEP_NONE;
	}
	if (!inputs) {
		free(j->inputs);
		j->inputs = NULL;
		j->v.ninputs = 0;
		j->v.inputs = NULL;
		j->v.mpi = MM_MPI_NONE;
	}
}

int mmi_op_submit(mm_state_t *s, const mm_op_t *op, mm_result_t *res)
{
	struct mm_jobrec *j = NULL, **more = NULL;
	int capped = op->code == MM_OP_SUBMIT_CAPPED ||
		     op->code == MM_OP_SUBMIT_LIMITS ||
		     op->code == MM_OP_SUBMIT_INPUTS ||
		     op->code == MM_OP_SUBMIT_CKPT ||
		     op->code == MM_OP_SUBMIT_SHAPE ||
		     op->code == MM_OP_SUBMIT_STEP;
	int inputs = capped && op->code != MM_OP_SUBMIT_CAPPED &&
		     op->code != MM_OP_SUBMIT_LIMITS;
	int shape = op->code == MM_OP_SUBMIT_SHAPE ||
		    op->code == MM_OP_SUBMIT_STEP;
	/* an array is its tasks, each a job, made in one operation */
	uint32_t n = shape && op->spec &&
		     op->spec->array_count ? op->spec->array_count : 1;
	uint64_t bytes;
	int rc;

	if (n > MM_ARRAY_MAX)
		return mmi_refuse(res, -EINVAL, "submit: an array of %u tasks; "
				  "at most %u", n, MM_ARRAY_MAX);
	if (n > 1 && (!op->spec->array_step ||
		      op->spec->array_first + (uint64_t)(n - 1) *
		      op->spec->array_step > UINT32_MAX))
		return mmi_refuse(res, -EINVAL, "submit: array tasks %u, +%u, "
				  "%u of them: not numbers a task can have",
				  op->spec->array_first, op->spec->array_step,
				  n);
	/* admission: the caps the proposer's configuration sets, carried in
	 * the op so every replica decides alike */
	if (capped && op->spec) {
		uint32_t all = mm_pending_count(s, UINT32_MAX),
			 mine = mm_pending_count(s, op->spec->uid);

		if (op->max_pending && (uint64_t)all + n > op->max_pending)
			return mmi_refuse(res, -EAGAIN, "submit: the queue is "
					  "full (%u jobs pending, the "
					  "max_pending_jobs%s): try again when "
					  "some have started", all,
					  n > 1 ? ", and this array's tasks "
					  "count each" : "");
		if (op->max_pending_user &&
		    (uint64_t)mine + n > op->max_pending_user)
			return mmi_refuse(res, -EAGAIN, "submit: uid %u has %u "
					  "jobs pending (the max_pending_per_"
					  "user%s): wait for some to start, or "
					  "cancel some", op->spec->uid, mine,
					  n > 1 ? ", and this array's tasks "
					  "count each" : "");
	}
	if (op->code == MM_OP_SUBMIT_STEP && op->spec &&
	    (rc = mmi_step_check(s, op->spec, res)))
		return rc;
	rc = mmi_job_new(s, op->spec, &j, res);
	if (rc)
		return rc;
	fixup(j, op, inputs);
	bytes = mmi_job_bytes(j);
	if (capped && op->max_state_bytes &&
	    s->state_bytes + bytes * n > op->max_state_bytes) {
		uint64_t have = s->state_bytes, max = op->max_state_bytes;

		mmi_job_free(j);
		return mmi_refuse(res, -ENOSPC, "submit: state full: the "
				  "jobs held take %llu of the %llu bytes of "
				  "the state_budget_mib; cancels and reads go "
				  "on, submissions resume as ended jobs leave "
				  "the state", (unsigned long long)have,
				  (unsigned long long)max);
	}
	if ((uint64_t)s->next_id + n > UINT32_MAX) {
		mmi_job_free(j);
		return mmi_refuse(res, -ENOSPC,
				  "submit: job ids are exhausted");
	}
	if (n > 1 && !(more = calloc(n - 1, sizeof(*more)))) {
		mmi_job_free(j);
		return mmi_refuse(res, -ENOMEM, "submit: out of memory");
	}
	for (uint32_t k = 1; k < n; k++) {
		if ((rc = mmi_job_new(s, op->spec, &more[k - 1], res))) {
			for (uint32_t q = 0; q + 1 < k; q++)
				mmi_job_free(more[q]);
			free(more);
			mmi_job_free(j);
			return rc;
		}
		fixup(more[k - 1], op, inputs);
	}
	if (mmi_jobs_reserve(s, s->njobs + n) ||
	    mmi_pending_add(s, j->v.uid, (int)n)) {
		for (uint32_t q = 0; q + 1 < n; q++)
			mmi_job_free(more[q]);
		free(more);
		mmi_job_free(j);
		return mmi_refuse(res, -ENOMEM, "submit: out of memory "
				  "for the job table");
	}
	res->job = s->next_id;
	for (uint32_t k = 0; k < n; k++) {
		struct mm_jobrec *t = k ? more[k - 1] : j;

		t->v.id = s->next_id++;
		if (n > 1 || (shape && op->spec->array_count)) {
			t->v.array_id = res->job;
			t->v.array_task = op->spec->array_first +
					  k * op->spec->array_step;
			t->v.array_max = op->spec->array_max;
		}
		s->jobs[s->njobs++] = t;
		s->state_bytes += bytes;
	}
	free(more);
	return 0;
}
