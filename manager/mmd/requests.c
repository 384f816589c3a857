/*
 * requests.c — the client protocol's requests (requests.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "clock.h"
#include "fetch.h"
#include "requests.h"
#include "requests_int.h"

#define ST(rq) (*(rq)->st)

static int is_terminal(mm_job_state_t s)
{
	return s == MM_JOB_COMPLETED || s == MM_JOB_FAILED ||
	       s == MM_JOB_CANCELLED;
}

void mmd_requests_output(struct mmd_requests *rq, uint32_t job, uint32_t rank,
		       int stream, const uint8_t *data, uint32_t len)
{
	uint8_t *buf = malloc(9 + len);
	int n;

	if (!buf)
		return;
	n = st_output_encode(buf, 9 + len, job, rank, stream, data, len);
	for (struct mmd_client *c = rq->clients->list; n > 0 && c; c = c->next)
		if (c->watch_job == job)
			mmd_client_send(c, ST_FRAME_OUTPUT, buf, (uint32_t)n);
	free(buf);
}

static void job_ended(struct mmd_requests *rq, const mm_job_t *j)
{
	for (struct mmd_client *c = rq->clients->list; c; c = c->next) {
		json_t *st;

		if (c->watch_job != j->id)
			continue;
		st = json_array();
		for (uint32_t r = 0; j->rank_status && r < j->ranks; r++)
			json_array_append_new(st,
					      json_integer(j->rank_status[r]));
		mmd_client_send_json(c, ST_FRAME_END,
			  json_pack("{s:i, s:s, s:i, s:s, s:o}", "job", j->id,
				    "state", mm_job_state_name(j->state),
				    "exit_code", j->exit_code, "reason",
				    j->reason, "rank_status", st));
		c->watch_job = 0;
		c->closing = 1;
	}
}

/* ---- requests ------------------------------------------------------------------- */

static const char *levels_name(uint32_t l)
{
	static const char *const names[8] = { "-", "L1", "L2", "L1+L2", "L3",
		"L1+L3", "L2+L3", "L1+L2+L3" };

	return names[l & 7];
}

static json_t *job_json(struct mmd_requests *rq, const mm_job_t *j)
{
	json_t *argv = json_array(), *names = json_array(),
	       *st = json_array(), *o;
	const struct mmd_job *r;
	const mm_usage_t *usage;
	char nodes[1024] = "";

	for (uint32_t i = 0; i < j->argc; i++)
		json_array_append_new(argv, json_string(j->argv[i]));
	if (j->nodes) {
		sp_nodeset_format(j->nodes, nodes, sizeof(nodes));
		for (int64_t x = sp_nodeset_next(j->nodes, 0); x >= 0;
		     x = sp_nodeset_next(j->nodes, (uint32_t)x + 1)) {
			mm_node_t n;

			if (!mm_node_by_id(ST(rq), (uint32_t)x, &n))
				json_array_append_new(names,
						      json_string(n.name));
		}
	}
	for (uint32_t r = 0; j->rank_status && r < j->ranks; r++)
		json_array_append_new(st, json_integer(j->rank_status[r]));
	o = json_pack("{s:i, s:s, s:i, s:s, s:s, s:i, s:s, s:o, s:o, s:s,"
			 " s:b, s:I, s:I, s:I, s:i, s:o}",
			 "id", j->id, "name", j->name, "uid", j->uid,
			 "state", mm_job_state_name(j->state),
			 "reason", j->reason, "ranks", j->ranks,
			 "nodes", nodes, "node_names", names, "argv", argv,
			 "cwd", j->cwd ? j->cwd : "", "batch", j->batch,
			 "submit_ms", (json_int_t)j->submit_ms,
			 "start_ms", (json_int_t)j->start_ms,
			 "end_ms", (json_int_t)j->end_ms,
			 "exit_code", j->exit_code, "rank_status", st);
	if (o && j->time_limit_ms)
		json_object_set_new(o, "time_limit_ms",
				    json_integer((json_int_t)j->time_limit_ms));
	if (o && j->mem_bytes)
		json_object_set_new(o, "mem_bytes",
				    json_integer((json_int_t)j->mem_bytes));
	/* its dependency and its place in an array */
	if (o && j->dep_type) {
		static const char *const types[] = {
			[MM_DEP_AFTEROK] = "afterok",
			[MM_DEP_AFTERANY] = "afterany",
			[MM_DEP_AFTERNOTOK] = "afternotok",
		};
		char dep[48];

		snprintf(dep, sizeof(dep), "%s:%u",
			 j->dep_type <= MM_DEP_MAX ? types[j->dep_type] : "?",
			 j->dep_job);
		json_object_set_new(o, "dependency", json_string(dep));
	}
	if (o && j->array_id) {
		json_object_set_new(o, "array_id", json_integer(j->array_id));
		json_object_set_new(o, "array_task",
				    json_integer(j->array_task));
		if (j->array_max)
			json_object_set_new(o, "array_max",
					    json_integer(j->array_max));
	}
	/* its shape, where it is not the default */
	if (o && j->cpus_per_task > 1)
		json_object_set_new(o, "cpus_per_task",
				    json_integer(j->cpus_per_task));
	if (o && j->tasks_per_node)
		json_object_set_new(o, "tasks_per_node",
				    json_integer(j->tasks_per_node));
	if (o && j->node_count)
		json_object_set_new(o, "node_count",
				    json_integer(j->node_count));
	if (o && j->cpu_bind == MM_BIND_NONE)
		json_object_set_new(o, "cpu_bind", json_string("none"));
	if (o && j->mpi != MM_MPI_NONE)
		json_object_set_new(o, "mpi", json_string(
			j->mpi == MM_MPI_BCS_ARRIVAL ? "bcs (arrival order)" :
			j->mpi == MM_MPI_PMI1 ? "pmi1" :
			j->mpi == MM_MPI_PMIX ? "pmix" : "bcs"));
	/* its checkpoints (docs/checkpoint.md): the committed epochs,
	 * the one being taken, why the last one failed */
	if (o && (j->nckpts || j->ckpt_want || j->ckpt_error[0])) {
		json_t *eps = json_array();

		for (uint32_t k = 0; k < j->nckpts; k++)
			json_array_append_new(eps, json_pack(
				"{s:i, s:I, s:I, s:f, s:s}", "epoch",
				j->ckpts[k].epoch, "bytes",
				(json_int_t)j->ckpts[k].bytes, "committed_ms",
				(json_int_t)j->ckpts[k].ms, "stop_ms",
				j->ckpts[k].stop_us / 1e3, "levels",
				levels_name(j->ckpts[k].levels)));
		json_object_set_new(o, "checkpoints", eps);
		if (j->ckpt_want)
			json_object_set_new(o, "checkpoint_pending",
					    json_integer(j->ckpt_want));
		if (j->ckpt_error[0])
			json_object_set_new(o, "checkpoint_error",
					    json_string(j->ckpt_error));
	}
	if (o && j->ckpt_every_s)
		json_object_set_new(o, "checkpoint_s",
				    j->ckpt_every_s == MM_CKPT_AUTO ?
				    json_string("auto") :
				    json_integer(j->ckpt_every_s));
	if (o && j->requeue)
		json_object_set_new(o, "requeue", json_true());
	if (o && (j->restore_epoch || j->restarts)) {
		json_object_set_new(o, "restore_epoch",
				    json_integer(j->restore_epoch));
		json_object_set_new(o, "restarts", json_integer(j->restarts));
	}
	/* a batch allocation, or a step of one and its task slots */
	if (o && j->alloc)
		json_object_set_new(o, "alloc", json_true());
	if (o && j->parent) {
		mm_job_t p;

		json_object_set_new(o, "parent", json_integer(j->parent));
		if (j->width && !mm_job_get(ST(rq), j->parent, &p))
			json_object_set_new(o, "slots", json_pack("[i, i]",
				j->col - p.col, j->col - p.col + j->width - 1));
	}
	/* its place in the matrix while it holds PEs (stormctl matrix) */
	if (o && j->width && !j->parent) {
		json_object_set_new(o, "row", json_integer(j->row));
		json_object_set_new(o, "col", json_integer(j->col));
		json_object_set_new(o, "width", json_integer(j->width));
	}
	/* launch timing measured here (benchmarks): files to every node,
	 * then launch command to every rank ended and reported; and each
	 * rank's usage as its node's wait4() saw it, while the record is
	 * kept (jobrec.h) */
	r = mmd_jobs_find(rq->jobs, j->id);
	if (o && r && r->t_staged && r->t_stage)
		json_object_set_new(o, "transfer_ms", json_real(
			(double)(r->t_staged - r->t_stage) / 1e6));
	if (o && r && r->t_end && r->t_staged)
		json_object_set_new(o, "execute_ms", json_real(
			(double)(r->t_end - r->t_staged) / 1e6));
	/* ranks whose EXIT was taken while the job runs on */
	if (o && r && r->status && r->ranks == j->ranks &&
	    (j->state == MM_JOB_STAGING || j->state == MM_JOB_RUNNING))
		json_object_set_new(o, "ranks_exited", json_integer(r->got));
	/* the state's (agreed, kept with the job); before that the
	 * shell's record of the EXIT records taken so far */
	usage = j->rank_usage ? j->rank_usage :
		r && r->usage && r->ranks == j->ranks ? r->usage : NULL;
	if (o && usage) {
		json_t *u = json_array();

		for (uint32_t k = 0; u && k < j->ranks; k++)
			json_array_append_new(u, json_pack(
				"{s:I, s:I, s:I}",
				"utime_us", (json_int_t)usage[k].utime_us,
				"stime_us", (json_int_t)usage[k].stime_us,
				"maxrss_kib",
				(json_int_t)usage[k].maxrss_kib));
		if (u)
			json_object_set_new(o, "usage", u);
	}
	return o;
}


#define QUEUE_PAGE 5000 /* jobs per queue reply: well inside a frame */
#define EXPECT_EVERY_MS 1000 /* expected starts: recomputed at most so */

/* The expected starts of the first MMD_EXPECT_MAX pending jobs, as of the
 * state now or at most EXPECT_EVERY_MS ago (struct mmd_expect says why);
 * a job submitted since may be missing from them.  Never fails: out of
 * memory leaves none. */
static const struct mmd_expect *expected_starts(struct mmd_requests *rq)
{
	struct mmd_expect *e = &rq->expect;
	uint64_t now = mmd_strobe_now_ms(rq->sb);
	rp_status_t rs = { .applied = 0 };
	int n;

	if (rq->repl->rp)
		rp_status(rq->repl->rp, &rs);
	if (e->valid && (e->applied == rs.applied ||
			 now - e->at_ms < EXPECT_EVERY_MS))
		return e;
	n = mm_expected_starts(ST(rq), MMD_EXPECT_MAX, e->id, e->start_ms);
	e->n = n > 0 ? n : 0;
	e->valid = 1;
	e->applied = rs.applied;
	e->at_ms = now;
	return e;
}

/* Jobs from id "from" on, at most a page; "next" says where the next page
 * starts (a long history never outgrows a frame).  The first page gives
 * the first pending jobs their expected start. */
static void op_queue(struct mmd_requests *rq, struct mmd_client *c, json_t *req)
{
	int all = json_is_true(json_object_get(req, "all"));
	json_int_t from = json_integer_value(json_object_get(req, "from"));
	json_t *jobs = json_array(), *rep;
	uint32_t n = 0, next = 0;
	const struct mmd_expect *e = NULL;
	int k = 0;
	mm_job_t j;

	if (from < 1 || from > UINT32_MAX)
		from = 1;
	if (from == 1)
		e = expected_starts(rq);
	for (uint32_t id = (uint32_t)from; mm_job_next(ST(rq), id, &j) == 0;
	     id = j.id + 1) {
		json_t *o;

		if (!all && is_terminal(j.state))
			continue;
		if (n == QUEUE_PAGE) {
			next = j.id; /* the first one this page leaves out */
			break;
		}
		o = job_json(rq, &j);
		/* both in id order: one pass */
		while (e && k < e->n && e->id[k] < j.id)
			k++;
		if (o && e && k < e->n && e->id[k] == j.id &&
		    j.state == MM_JOB_PENDING)
			json_object_set_new(o, "expected_start_ms",
					    json_integer((json_int_t)
							 e->start_ms[k]));
		json_array_append_new(jobs, o);
		n++;
	}
	rep = json_pack("{s:b, s:o}", "ok", 1, "jobs", jobs);
	if (next)
		json_object_set_new(rep, "next", json_integer(next));
	mmd_client_send_json(c, ST_FRAME_REPLY, rep);
}

static int job_arg(struct mmd_client *c, json_t *req, uint32_t *id)
{
	json_t *v = json_object_get(req, "job");

	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > UINT32_MAX) {
		mmd_client_reply_err(c, EINVAL, "request: \"job\" must be a job id");
		return -1;
	}
	*id = (uint32_t)json_integer_value(v);
	return 0;
}

/* Root and the configured administrators see every user's jobs in the
 * history; a user sees their own. */
static int sees_all(const struct mmd_requests *rq, const struct mmd_client *c)
{
	if (c->uid == 0)
		return 1;
	for (uint32_t i = 0; i < rq->cfg->nadmins; i++)
		if (rq->cfg->admins[i] == c->uid)
			return 1;
	return 0;
}

/* show of a job retention moved out of the state: from the history. */
static void history_show(struct mmd_requests *rq, struct mmd_client *c,
			 uint32_t id)
{
	json_t *o = NULL;
	uint32_t uid = 0;
	int rc = mmd_history_get(&rq->repl->hist, id, &o, &uid);

	if (rc == 0 && !sees_all(rq, c) && uid != c->uid) {
		json_decref(o);
		mmd_client_reply_err(c, EPERM, "job %u is in the history of "
				     "uid %u: a user sees only their own "
				     "jobs' history", id, uid);
		return;
	}
	if (rc == 0) {
		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
			"{s:b, s:o}", "ok", 1, "job", o));
		return;
	}
	if (rc == -ENOENT && id < mm_next_id(ST(rq)))
		mmd_client_reply_err(c, ENOENT, "no job %u: it ended and left "
				     "the state, and the history no longer "
				     "holds it (history_jobs, history_days)",
				     id);
	else if (rc == -ENOENT)
		mmd_client_reply_err(c, ENOENT, "no job %u (ids so far: 1 to "
				     "%u; see stormctl queue -a)", id,
				     mm_next_id(ST(rq)) - 1);
	else
		mmd_client_reply_err(c, -rc, "job %u: the history cannot be "
				     "read here: %s", id, storm_strerror(rc));
}

static int state_bits(json_t *a, uint32_t *bits)
{
	size_t i;
	json_t *v;

	*bits = 0;
	json_array_foreach(a, i, v) {
		const char *n = json_string_value(v);
		int k;

		for (k = MM_JOB_COMPLETED; n && k <= MM_JOB_CANCELLED; k++)
			if (!strcasecmp(n, mm_job_state_name(k)))
				break;
		if (!n || k > MM_JOB_CANCELLED)
			return -1;
		*bits |= 1u << k;
	}
	return 0;
}

static int u64_arg(json_t *req, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(req, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* "history": jobs retention moved out of the state, like sacct: filters
 * user (uid), states, name (a glob), since_ms / until_ms (ran at some
 * time in the range), limit; "before" [end_ms, id] continues a listing.
 * Most recently ended first. */
static void op_history(struct mmd_requests *rq, struct mmd_client *c,
		       json_t *req)
{
	struct mmd_hist_query q = { .limit = 1000 };
	json_t *uid = json_object_get(req, "uid"), *jobs, *rep;
	json_t *before = json_object_get(req, "before");
	json_t *states = json_object_get(req, "states");
	uint64_t limit = q.limit, next_end = 0;
	uint32_t next_id = 0;
	char err[256];
	int more = 0, rc;

	if (uid && (!json_is_integer(uid) || json_integer_value(uid) < 0 ||
		    json_integer_value(uid) > UINT32_MAX)) {
		mmd_client_reply_err(c, EINVAL, "history: \"uid\" must be a "
				     "uid");
		return;
	}
	if (uid) {
		q.by_uid = 1;
		q.uid = (uint32_t)json_integer_value(uid);
	}
	if (!sees_all(rq, c)) {
		if (q.by_uid && q.uid != c->uid) {
			mmd_client_reply_err(c, EPERM, "history: uid %u may "
					     "see only its own jobs, not uid "
					     "%u's", c->uid, q.uid);
			return;
		}
		q.by_uid = 1;
		q.uid = c->uid;
	}
	if (states && (!json_is_array(states) ||
		       state_bits(states, &q.states))) {
		mmd_client_reply_err(c, EINVAL, "history: \"states\" must list "
				     "COMPLETED, FAILED or CANCELLED (the "
				     "history holds ended jobs only)");
		return;
	}
	q.name = json_string_value(json_object_get(req, "name"));
	if (u64_arg(req, "since_ms", &q.since_ms) ||
	    u64_arg(req, "until_ms", &q.until_ms) ||
	    u64_arg(req, "limit", &limit)) {
		mmd_client_reply_err(c, EINVAL, "history: since_ms, until_ms "
				     "and limit must be whole numbers");
		return;
	}
	q.limit = limit > UINT32_MAX ? UINT32_MAX : (uint32_t)limit;
	if (before) {
		json_t *e = json_array_get(before, 0);
		json_t *i = json_array_get(before, 1);

		if (!json_is_integer(e) || !json_is_integer(i) ||
		    json_integer_value(e) < 0 || json_integer_value(i) < 0 ||
		    json_integer_value(i) > UINT32_MAX) {
			mmd_client_reply_err(c, EINVAL, "history: \"before\" "
					     "must be [end_ms, id] from a "
					     "previous reply's \"next\"");
			return;
		}
		q.before_end = (uint64_t)json_integer_value(e);
		q.before_id = (uint32_t)json_integer_value(i);
	}
	if (!(jobs = json_array())) {
		mmd_client_reply_err(c, ENOMEM, "out of memory");
		return;
	}
	rc = mmd_history_query(&rq->repl->hist, &q, jobs, &more, &next_end,
			       &next_id, err, sizeof(err));
	if (rc) {
		json_decref(jobs);
		mmd_client_reply_err(c, -rc, "%s", err);
		return;
	}
	rep = json_pack("{s:b, s:o, s:b, s:b}", "ok", 1, "jobs", jobs, "more",
			more, "backfilling",
			rq->repl->hist.backfill_below != 0);
	if (rep && more)
		json_object_set_new(rep, "next", json_pack(
			"[I, I]", (json_int_t)next_end, (json_int_t)next_id));
	mmd_client_send_json(c, ST_FRAME_REPLY, rep);
}

/* "history_page": a peer replica that joined by state transfer fetches
 * the history it lacks (backfill.h).  Root only (a replica runs as
 * root); served only by a replica whose own history is whole. */
static void op_history_page(struct mmd_requests *rq, struct mmd_client *c,
			    json_t *req)
{
	const char *cluster = json_string_value(json_object_get(req,
								"cluster"));
	uint64_t below = 0, after = 0;
	uint32_t last = 0;
	json_t *recs = NULL;
	int more = 0, rc;

	if (c->uid != 0) {
		mmd_client_reply_err(c, EPERM, "history_page: for replicas "
				     "only (root)");
		return;
	}
	if (!cluster || strcmp(cluster, rq->cfg->cluster)) {
		mmd_client_reply_err(c, EINVAL, "history_page: asked for by "
				     "cluster \"%.64s\", this is \"%s\"",
				     cluster ? cluster : "", rq->cfg->cluster);
		return;
	}
	if (u64_arg(req, "below", &below) || u64_arg(req, "after", &after) ||
	    after > UINT32_MAX) {
		mmd_client_reply_err(c, EINVAL, "history_page: below and after "
				     "must be whole numbers");
		return;
	}
	if (!rq->repl->rs.synced || rq->repl->hist.backfill_below) {
		mmd_client_reply_err(c, EAGAIN, "history_page: manager %s does "
				     "not hold the whole history yet",
				     rq->host->name);
		return;
	}
	rc = mmd_history_page(&rq->repl->hist, below, (uint32_t)after, &recs,
			      &last, &more);
	if (rc) {
		json_decref(recs);
		mmd_client_reply_err(c, -rc, "history_page: %s",
				     storm_strerror(rc));
		return;
	}
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
		"{s:b, s:s, s:o, s:I, s:b}", "ok", 1, "cluster",
		rq->cfg->cluster, "records", recs, "last", (json_int_t)last,
		"more", more));
}

/* "inputs_fetch": for replicas only (root) — a piece of an input blob
 * from this replica's store, for a strobe master that must stage a job
 * whose blob it lacks (fetch.h).  The reply, then the piece as one
 * INPUT frame.  The blob is this daemon's own file, on its local disk:
 * a piece of MMD_FETCH_PIECE bytes at most is read in the loop. */
static void op_inputs_fetch(struct mmd_requests *rq, struct mmd_client *c,
			    json_t *req)
{
	const char *cluster = json_string_value(json_object_get(req,
								"cluster"));
	const char *hex = json_string_value(json_object_get(req, "sha256"));
	uint8_t sha[MM_INPUT_SHA256_BYTES];
	uint64_t off = 0;
	struct stat st;
	uint8_t *buf = NULL;
	ssize_t r = 0;
	int fd;

	if (c->uid != 0) {
		mmd_client_reply_err(c, EPERM, "inputs_fetch: for replicas "
				     "only (root)");
		return;
	}
	if (!cluster || strcmp(cluster, rq->cfg->cluster)) {
		mmd_client_reply_err(c, EINVAL, "inputs_fetch: asked for by "
				     "cluster \"%.64s\", this is \"%s\"",
				     cluster ? cluster : "", rq->cfg->cluster);
		return;
	}
	if (mmd_blob_parse(hex, sha) || u64_arg(req, "offset", &off)) {
		mmd_client_reply_err(c, EINVAL, "inputs_fetch: sha256 (64 "
				     "lower-case hex digits) and offset (a "
				     "whole number) are needed");
		return;
	}
	fd = mmd_blob_open(&rq->inputs, sha);
	if (fd < 0) {
		mmd_client_reply_err(c, ENOENT, "inputs_fetch: manager %s has "
				     "no blob %.16s", rq->host->name, hex);
		return;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < off ||
	    !(buf = malloc(MMD_FETCH_PIECE))) {
		close(fd);
		mmd_client_reply_err(c, EINVAL, "inputs_fetch: offset %llu "
				     "past blob %.16s",
				     (unsigned long long)off, hex);
		return;
	}
	if ((uint64_t)st.st_size > off) {
		size_t want = (uint64_t)st.st_size - off < MMD_FETCH_PIECE ?
			      (size_t)((uint64_t)st.st_size - off) :
			      MMD_FETCH_PIECE;

		do
			r = pread(fd, buf, want, (off_t)off);
		while (r < 0 && errno == EINTR);
	}
	close(fd);
	if (r < 0) {
		free(buf);
		mmd_client_reply_err(c, EIO, "inputs_fetch: %s",
				     strerror(errno));
		return;
	}
	if (!off)
		mmd_blob_have(&rq->inputs, sha, (uint64_t)st.st_size);
	if (!mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
		    "{s:b, s:I, s:I}", "ok", 1, "size",
		    (json_int_t)st.st_size, "len", (json_int_t)r)) && r > 0)
		mmd_client_send(c, ST_FRAME_INPUT, buf, (uint32_t)r);
	free(buf);
}

static void op_show(struct mmd_requests *rq, struct mmd_client *c, json_t *req)
{
	uint32_t id;
	mm_job_t j;
	json_t *o;

	if (job_arg(c, req, &id))
		return;
	if (mm_job_get(ST(rq), id, &j)) {
		history_show(rq, c, id);
		return;
	}
	o = job_json(rq, &j);
	if (o && j.state == MM_JOB_PENDING) {
		const struct mmd_expect *e = expected_starts(rq);

		for (int k = 0; k < e->n; k++)
			if (e->id[k] == j.id)
				json_object_set_new(o, "expected_start_ms",
						    json_integer((json_int_t)
							e->start_ms[k]));
	}
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:o}", "ok", 1, "job",
					       o));
}

/* One row of the matrix over the real columns cols[0..n): job ids, 0 free;
 * every job met is added to ids (a block's cells are adjacent: one entry
 * per block and row). */
static json_t *matrix_row(struct mmd_requests *rq, uint32_t row, const uint32_t *cols,
			  uint32_t n, uint32_t *ids, size_t *nids)
{
	json_t *a = json_array();
	uint32_t last = 0;

	for (uint32_t i = 0; a && i < n; i++) {
		uint32_t id = mm_matrix_cell(ST(rq), row, cols[i]);

		json_array_append_new(a, json_integer(id));
		if (id && id != last)
			ids[(*nids)++] = id;
		last = id;
	}
	return a;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The Ousterhout matrix (docs/protocol.md 5.10): the settings in force,
 * the active row, every real column (phantoms left out) and cell, and the
 * jobs holding PEs.  Read-only: any replica answers from its state.  The
 * active row is a function of the state and the slice; the strobe master
 * knows the slice, another replica's rq->sb->clk.slice stands still, so it takes
 * the wall clock as mmd_master_changed() does (the master's count started
 * from it, and they differ only by the master's missed boundaries). */
static void op_matrix(struct mmd_requests *rq, struct mmd_client *c)
{
	uint32_t rows = mm_matrix_rows(ST(rq)), ncols = mm_matrix_cols(ST(rq));
	uint32_t n = 0, active;
	uint64_t slice = rq->sb->clk.master ? rq->sb->clk.slice :
			 mmd_wall_us() / rq->cfg->slice_us;
	uint32_t *cols = calloc(ncols ? ncols : 1, sizeof(*cols));
	uint32_t *ids = calloc((size_t)rows * ncols + 1, sizeof(*ids));
	json_t *acols = json_array(), *cells = json_array(),
	       *jobs = json_array(), *rep = NULL;
	size_t nids = 0;
	mm_sched_conf_t sc;
	mm_node_t x;
	char digest[24], why[256];
	int bad;

	if (!cols || !ids || !acols || !cells || !jobs)
		goto out;
	mm_sched_get(ST(rq), &sc);
	active = mm_active_row(ST(rq), slice);
	snprintf(digest, sizeof(digest), "%016llx",
		 (unsigned long long)mm_matrix_digest(ST(rq)));
	/* a node's columns are adjacent: its cpu k is its k-th column */
	for (uint32_t col = 0, first = 0, last = UINT32_MAX; col < ncols;
	     col++) {
		uint32_t id = mm_matrix_col_node(ST(rq), col);

		if (id == UINT32_MAX)
			continue; /* a phantom */
		if (id != last && mm_node_by_id(ST(rq), id, &x))
			continue;
		if (id != last)
			first = col;
		last = id;
		cols[n++] = col;
		json_array_append_new(acols, json_pack(
			"{s:i, s:s, s:i, s:i}", "col", col, "node", x.name,
			"node_id", id, "cpu", col - first));
	}
	for (uint32_t r = 0; r < rows; r++)
		json_array_append_new(cells, matrix_row(rq, r, cols, n, ids,
							&nids));
	qsort(ids, nids, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < nids; i++) {
		mm_job_t j;

		if ((i && ids[i] == ids[i - 1]) ||
		    mm_job_get(ST(rq), ids[i], &j))
			continue;
		json_array_append_new(jobs, json_pack(
			"{s:i, s:i, s:i, s:i, s:s, s:s, s:i, s:i}", "job", j.id,
			"row", j.row, "col", j.col, "width", j.width, "state",
			mm_job_state_name(j.state), "name", j.name, "ranks",
			j.ranks, "uid", j.uid));
	}
	bad = mm_matrix_check(ST(rq), why, sizeof(why));
	rep = json_pack("{s:b, s:s, s:i, s:i, s:I, s:i, s:s, s:i, s:I, s:i,"
			" s:s, s:s, s:b, s:b, s:O, s:O, s:O}",
			"ok", 1, "policy", mm_policy_name(sc.policy),
			"mpl", sc.mpl, "quantum_slices", sc.quantum_slices,
			"quantum_us", (json_int_t)sc.quantum_slices *
				      rq->cfg->slice_us,
			"slice_us", rq->cfg->slice_us,
			"placement", mm_placement_name(sc.placement),
			"rows", rows, "slice", (json_int_t)slice,
			"active_row", active == UINT32_MAX ? -1 : (int)active,
			"digest", digest, "answered_by", rq->host->name,
			"strobe_master", rq->sb->clk.master, "consistent", !bad,
			"columns", acols, "cells", cells, "jobs", jobs);
	if (rep && bad)
		json_object_set_new(rep, "inconsistency", json_string(why));
out:
	json_decref(acols);
	json_decref(cells);
	json_decref(jobs);
	free(cols);
	free(ids);
	if (!rep) {
		mmd_client_reply_err(c, ENOMEM, "matrix: out of memory");
		return;
	}
	mmd_client_send_json(c, ST_FRAME_REPLY, rep);
}

static void op_cancel(struct mmd_requests *rq, struct mmd_client *c, json_t *req)
{
	mm_op_t op = { .code = MM_OP_CANCEL, .uid = c->uid };
	mm_result_t res;

	if (job_arg(c, req, &op.job))
		return;
	/* an administrator acts on any job, as root does */
	for (uint32_t i = 0; i < rq->cfg->nadmins; i++)
		if (rq->cfg->admins[i] == c->uid) {
			qb_log(LOG_INFO, "job %u: cancel by administrator uid %u",
			       op.job, c->uid);
			op.uid = 0;
		}
	if (mmd_repl_propose_client(rq->repl, c, c->client_key, c->seq, c->uid, c->gid, MMD_REQ_CANCEL, &op, &res))
		mmd_client_reply_err(c, res.rc, "%s", res.err);
}

/* Drain or resume a node (docs/operating.md): root and the configured
 * administrators; answered once agreed. */
static void op_node_service(struct mmd_requests *rq, struct mmd_client *c,
			    json_t *req, int drain)
{
	mm_op_t op = { .code = drain ? MM_OP_NODE_DRAIN : MM_OP_NODE_RESUME,
		       .uid = c->uid };
	json_t *n = json_object_get(req, "node"), *r = json_object_get(req,
								      "reason");
	mm_result_t res;

	if (!json_is_integer(n) || json_integer_value(n) < 0 ||
	    json_integer_value(n) > UINT32_MAX) {
		mmd_client_reply_err(c, EINVAL, "%s: \"node\" must be a node's "
				     "world id", drain ? "drain" : "resume");
		return;
	}
	if (r && (!json_is_string(r) ||
		  strlen(json_string_value(r)) >= MM_REASON_MAX)) {
		mmd_client_reply_err(c, EINVAL, "drain: \"reason\" must be a "
				     "string of at most %d bytes",
				     MM_REASON_MAX - 1);
		return;
	}
	op.node = (uint32_t)json_integer_value(n);
	op.reason = r ? json_string_value(r) : NULL;
	for (uint32_t i = 0; i < rq->cfg->nadmins; i++)
		if (rq->cfg->admins[i] == c->uid)
			op.uid = 0;
	if (mmd_repl_propose_client(rq->repl, c, c->client_key, c->seq,
				    c->uid, c->gid, MMD_REQ_NODE, &op, &res))
		mmd_client_reply_err(c, res.rc, "%s", res.err);
}

static void op_drain(struct mmd_requests *rq, struct mmd_client *c,
		     json_t *req)
{
	op_node_service(rq, c, req, 1);
}

static void op_resume(struct mmd_requests *rq, struct mmd_client *c,
		      json_t *req)
{
	op_node_service(rq, c, req, 0);
}

/* A checkpoint of a job, now (docs/checkpoint.md): answered with its
 * epoch once the request is agreed; stormctl follows it to the commit.
 * With "requeue": true the job then leaves its nodes and is queued
 * again, to run on from that epoch. */
static void op_checkpoint(struct mmd_requests *rq, struct mmd_client *c,
			  json_t *req)
{
	mm_op_t op = { .code = MM_OP_CKPT_REQUEST, .uid = c->uid };
	json_t *rq_ = json_object_get(req, "requeue");
	mm_result_t res;

	if (job_arg(c, req, &op.job))
		return;
	if (rq_ && !json_is_boolean(rq_)) {
		mmd_client_reply_err(c, EINVAL, "checkpoint: \"requeue\" must "
				     "be true or false");
		return;
	}
	if (json_is_true(rq_))
		op.code = MM_OP_CKPT_REQUEUE;
	for (uint32_t i = 0; i < rq->cfg->nadmins; i++)
		if (rq->cfg->admins[i] == c->uid)
			op.uid = 0;
	if (mmd_repl_propose_client(rq->repl, c, c->client_key, c->seq,
				    c->uid, c->gid, MMD_REQ_CKPT, &op, &res))
		mmd_client_reply_err(c, res.rc, "%s", res.err);
}

/* A running job back in the queue, to run on from a committed epoch
 * ("epoch" absent or 0: the last). */
static void op_restart(struct mmd_requests *rq, struct mmd_client *c,
		       json_t *req)
{
	mm_op_t op = { .code = MM_OP_CKPT_RESTART, .uid = c->uid };
	json_t *e = json_object_get(req, "epoch");
	mm_result_t res;

	if (job_arg(c, req, &op.job))
		return;
	if (e && (!json_is_integer(e) || json_integer_value(e) < 0 ||
		  json_integer_value(e) > UINT32_MAX)) {
		mmd_client_reply_err(c, EINVAL, "restart: \"epoch\" must be an "
				     "epoch number (0: the last committed)");
		return;
	}
	op.epoch = e ? (uint32_t)json_integer_value(e) : 0;
	for (uint32_t i = 0; i < rq->cfg->nadmins; i++)
		if (rq->cfg->admins[i] == c->uid)
			op.uid = 0;
	if (mmd_repl_propose_client(rq->repl, c, c->client_key, c->seq,
				    c->uid, c->gid, MMD_REQ_RESTART, &op,
				    &res))
		mmd_client_reply_err(c, res.rc, "%s", res.err);
}

static void credential_agreed(struct mmd_requests *rq, struct mmd_client *c,
			      const mm_result_t *res);

/* A write of c's was applied and is durable here (or failed). */
void mmd_requests_answer(struct mmd_requests *rq, struct mmd_client *c, int kind,
		       uint32_t job, const mm_result_t *res)
{
	if (kind == MMD_REQ_CRED) {
		credential_agreed(rq, c, res);
		return;
	}
	if (res->rc) {
		/* a refusal of what a user may not do is logged with who */
		if (res->rc == -EPERM)
			qb_log(LOG_NOTICE, "uid %u refused: %s", c->uid,
			       res->err);
		mmd_client_reply_err(c, res->rc, "%s", res->err);
		return;
	}
	if (kind == MMD_REQ_CANCEL) {
		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:i, s:s}", "ok",
						       1, "job", job, "state",
						       "CANCELLED"));
		return;
	}
	if (kind == MMD_REQ_NODE) {
		mm_node_t n;

		/* res->job: the node's world id (op_node_drain) */
		if (mm_node_by_id(ST(rq), res->job, &n))
			n = (mm_node_t){ .id = res->job };
		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
			"{s:b, s:i, s:s, s:b}", "ok", 1, "node", n.id, "name",
			n.name, "drain", n.drain));
		return;
	}
	if (kind == MMD_REQ_RESTART) {
		mm_job_t j;

		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
			"{s:b, s:i, s:i, s:s}", "ok", 1, "job", job, "epoch",
			mm_job_get(ST(rq), job, &j) ? 0 : j.restore_epoch,
			"state", "PENDING"));
		return;
	}
	if (kind == MMD_REQ_CKPT) {
		mm_job_t j;
		uint32_t epoch = 0;

		/* the reply carries no epoch: the state has it, pending
		 * (or, if it committed already, the last one) */
		if (!mm_job_get(ST(rq), job, &j))
			epoch = j.ckpt_want ? j.ckpt_want : j.ckpt_last;
		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
			"{s:b, s:i, s:i}", "ok", 1, "job", job, "epoch",
			epoch));
		return;
	}
	qb_log(LOG_INFO, "job %u submitted by uid %u", res->job, c->uid);
	if (kind == MMD_REQ_RUN) {
		mm_job_t j;

		c->watch_job = res->job;
		/* it may have ended already (a retry of a finished run) */
		if (!mm_job_get(ST(rq), res->job, &j) &&
		    is_terminal(j.state)) {
			mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
				"{s:b, s:i}", "ok", 1, "job", res->job));
			job_ended(rq, &j);
			return;
		}
		if (rq->sin)
			mmd_stdin_open(rq->sin, c, res->job, c->stdin_want);
	}
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:i}", "ok", 1, "job",
					       res->job));
}

/* The replicas as this one sees them: membership, quorum, the strobe
 * master and each applied index; on the strobe master, its slice
 * statistics, read and then reset if the request says so. */
static void op_managers(struct mmd_requests *rq, struct mmd_client *c, json_t *req)
{
	const rp_status_t *rs = &rq->repl->rs;
	json_t *a = json_array();

	char digest[24];

	rp_status(rq->repl->rp, &rq->repl->rs); /* this replica's own: exact */
	snprintf(digest, sizeof(digest), "%016llx",
		 (unsigned long long)mm_digest(ST(rq)));
	for (uint32_t i = 0; i < rq->cfg->nmanagers; i++) {
		const st_host_t *h = &rq->cfg->managers[i];
		const rp_member_t *m = NULL;

		for (uint32_t k = 0; k < rs->nmembers; k++)
			if (rs->members[k].replica == i)
				m = &rs->members[k];
		json_array_append_new(a, json_pack(
			"{s:s, s:s, s:s, s:b, s:b, s:b, s:I, s:b}",
			"name", h->name, "address", h->address,
			"listen", h->listen, "member", m != NULL,
			"synced", m && m->synced, "master",
			rs->master == (int)i, "applied",
			(json_int_t)(m ? m->applied : 0),
			"self", i == rq->host->world_id));
	}
	json_t *diag = json_pack("{s:i, s:i, s:i, s:I, s:I, s:b, s:b, s:b}",
				 "inflight", rs->inflight, "queued", rs->queued,
				 "pending", rs->pending, "sent_batches",
				 (json_int_t)rs->sent_batches, "sent_ops",
				 (json_int_t)rs->sent_ops,
				 "strobe_master", rq->sb->clk.master,
				 "tick_inflight", rq->sb->tick_inflight,
				 "world_stale", rq->sb->world_stale);

	json_t *rep = json_pack(
		"{s:b, s:o, s:s, s:s, s:b, s:b, s:b, s:I, s:I, s:I, s:s, s:o,"
		" s:i}",
		"ok", 1, "replication", diag,
		"cluster", rq->cfg->cluster, "answered_by", rq->host->name,
		"quorate", rs->quorate, "primary", rs->primary, "synced",
		rs->synced, "view", (json_int_t)rs->view, "applied",
		(json_int_t)rs->applied, "durable", (json_int_t)rs->durable,
		"digest", digest, "managers", a,
		"connections", (int)rq->clients->n);

	/* this replica's job history and state size (tests, benchmarks) */
	if (rep) {
		json_object_set_new(rep, "history", json_pack(
			"{s:I, s:b}", "jobs",
			(json_int_t)mmd_history_count(&rq->repl->hist),
			"backfilling", rq->repl->hist.backfill_below != 0));
		json_object_set_new(rep, "state", json_pack(
			"{s:i, s:I, s:i}", "jobs", (int)mm_job_count(ST(rq)),
			"bytes", (json_int_t)mm_state_bytes(ST(rq)),
			"next_id", (int)mm_next_id(ST(rq))));
		/* encoding the image costs O(state): only when asked */
		if (json_is_true(json_object_get(req, "sizes")))
			json_object_set_new(json_object_get(rep, "state"),
					    "snapshot_bytes", json_integer(
				(json_int_t)mmd_repl_image_bytes(rq->repl)));
	}

	if (rep && rq->sb->clk.master) {
		json_object_set_new(rep, "strobe", mmd_stats_json(&rq->sb->stats, &rq->sb->clk));
		if (json_is_true(json_object_get(req, "reset_strobe_stats")))
			mmd_stats_reset(&rq->sb->stats, &rq->sb->clk);
	}
	mmd_client_send_json(c, ST_FRAME_REPLY, rep);
}

/* Nodes with their reliability as MOLAR placement scores it: service
 * time observed (in service before, plus the current spell if UP) and
 * that per failure (+1: a node never seen to fail scores all of it). */
static void op_nodes(struct mmd_requests *rq, struct mmd_client *c)
{
	json_t *a = json_array();
	uint32_t n = mm_node_count(ST(rq));
	uint64_t now = mmd_wall_us() / 1000u;

	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;
		uint64_t up;

		if (mm_node_get(ST(rq), i, &x))
			continue;
		up = x.up_ms;
		if (x.state == MM_NODE_UP && x.up_since_ms &&
		    now > x.up_since_ms)
			up += now - x.up_since_ms;
		json_t *o = json_pack(
			"{s:i, s:s, s:s, s:i, s:i, s:i, s:s, s:I, s:I}",
			"id", x.id, "name", x.name,
			/* drained and UP: DRAINING while jobs hold it */
			"state", x.state == MM_NODE_UP && x.drain ?
				 (x.used ? "DRAINING" : "DRAINED") :
				 mm_node_state_name(x.state), "cpus", x.cpus,
			"used", x.used, "failures", x.failures,
			"reason", x.drain && x.state == MM_NODE_UP ?
				  x.drain_reason : x.reason,
			"service_ms", (json_int_t)up, "mttf_ms",
			(json_int_t)(up / ((uint64_t)x.failures + 1)));

		if (o && x.drain)
			json_object_set_new(o, "drain_reason",
					    json_string(x.drain_reason));
		json_array_append_new(a, o);
	}
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:o}", "ok", 1,
					       "nodes", a));
}

static void op_status(struct mmd_requests *rq, struct mmd_client *c)
{
	uint32_t n = mm_node_count(ST(rq)), up = 0, pend = 0, run = 0;
	sp_view_info_t vi = { 0 };
	mm_job_t j;

	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;

		if (!mm_node_get(ST(rq), i, &x) && x.state == MM_NODE_UP)
			up++;
	}
	for (uint32_t id = 1; mm_job_next(ST(rq), id, &j) == 0; id = j.id + 1) {
		pend += j.state == MM_JOB_PENDING;
		run += j.state == MM_JOB_STAGING || j.state == MM_JOB_RUNNING;
	}
	if (rq->sb->w)
		sp_view(rq->sb->w, &vi, NULL);
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
		"{s:b, s:s, s:s, s:I, s:i, s:I, s:i, s:i, s:i, s:i}",
		"ok", 1, "cluster", rq->cfg->cluster, "manager", rq->host->name,
		"slice", (json_int_t)rq->sb->clk.slice, "slice_us", rq->cfg->slice_us,
		"view_epoch", (json_int_t)vi.epoch, "nodes_up", up,
		"nodes_total", n, "jobs_pending", pend, "jobs_running", run));
}

static uint32_t nodes_up(struct mmd_requests *rq)
{
	uint32_t n = mm_node_count(ST(rq)), up = 0;

	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;

		if (!mm_node_get(ST(rq), i, &x) && x.state == MM_NODE_UP)
			up++;
	}
	return up;
}

/* Answer the "wait" requests whose condition holds or whose time is up:
 * scripts and tests wait for the cluster on an answer, not by polling. */
void mmd_requests_waits(struct mmd_requests *rq)
{
	uint32_t up = nodes_up(rq);

	for (struct mmd_client *c = rq->clients->list; c; c = c->next) {
		mm_job_t j;

		if (c->wait_job && !mm_job_get(ST(rq), c->wait_job, &j) &&
		    is_terminal(j.state)) {
			c->wait_job = 0;
			mmd_client_send_json(c, ST_FRAME_REPLY,
				  json_pack("{s:b, s:o}", "ok", 1, "job",
					    job_json(rq, &j)));
			c->closing = 1;
		} else if (c->wait_job &&
			   mmd_strobe_now_ms(rq->sb) >= c->wait_until_ms) {
			mmd_client_reply_err(c, ETIMEDOUT, "job %u has not ended yet",
				  c->wait_job);
			c->wait_job = 0;
			c->closing = 1;
		}
		if (!c->wait_up)
			continue;
		if (c->wait_down ? mm_node_count(ST(rq)) - up >= c->wait_up :
				   up >= c->wait_up) {
			c->wait_up = 0;
			op_status(rq, c);
			c->closing = 1;
		} else if (mmd_strobe_now_ms(rq->sb) >= c->wait_until_ms) {
			mmd_client_reply_err(c, ETIMEDOUT, "%u node(s) up when the wait "
				  "timed out (see stormctl nodes)", up);
			c->wait_up = 0;
			c->closing = 1;
		}
	}
}

static void op_wait(struct mmd_requests *rq, struct mmd_client *c, json_t *req)
{
	json_t *n = json_object_get(req, "nodes_up"),
	       *t = json_object_get(req, "timeout_ms");
	int down = 0;
	mm_job_t j;

	if (json_object_get(req, "job")) {
		if (job_arg(c, req, &c->wait_job))
			return;
		if (mm_job_get(ST(rq), c->wait_job, &j)) {
			mmd_client_reply_err(c, ENOENT, "no job %u", c->wait_job);
			c->wait_job = 0;
			return;
		}
		if (t && (!json_is_integer(t) || json_integer_value(t) < 0))
			t = NULL;
		c->wait_until_ms = mmd_strobe_now_ms(rq->sb) +
			(t ? (uint64_t)json_integer_value(t) : 3600000u);
		mmd_requests_waits(rq);
		return;
	}

	if (!n && (n = json_object_get(req, "nodes_down")))
		down = 1;
	if (!json_is_integer(n) || json_integer_value(n) < 1 ||
	    json_integer_value(n) > mm_node_count(ST(rq)) ||
	    (t && (!json_is_integer(t) || json_integer_value(t) < 0 ||
		   json_integer_value(t) > 3600000))) {
		mmd_client_reply_err(c, EINVAL, "request: wait needs job, or nodes_up or "
			  "nodes_down in [1, %u], and timeout_ms in [0, "
			  "3600000]",
			  mm_node_count(ST(rq)));
		return;
	}
	c->wait_up = (uint32_t)json_integer_value(n);
	c->wait_down = down;
	c->wait_until_ms = mmd_strobe_now_ms(rq->sb) +
			   (t ? (uint64_t)json_integer_value(t) : 10000u);
	mmd_requests_waits(rq);
}

/* (client, seq) names a write for exactly-once retries: the key mixes
 * in the authenticated uid, so one user cannot answer for another's
 * client id.  A request without them gets a number of its own. */
static int request_identity(struct mmd_requests *rq, struct mmd_client *c,
			    json_t *req)
{
	const char *id = json_string_value(json_object_get(req, "client"));
	json_t *seq = json_object_get(req, "seq");
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	if (!id || !json_is_integer(seq)) {
		if (!c->anon_seq) { /* per connection: never retried */
			c->anon_seq = 1;
			c->client_key = ((uint64_t)(uintptr_t)c ^
					 mmd_mono_ns()) | 1;
			(void)rq;
		}
		c->seq = c->anon_seq++;
		return 0;
	}
	if (json_integer_value(seq) < 1) {
		mmd_client_reply_err(c, EINVAL, "request: \"seq\" must be at least 1");
		return -1;
	}
	for (const char *p = id; *p; p++)
		h = (h ^ (uint8_t)*p) * UINT64_C(0x100000001b3);
	for (int i = 0; i < 4; i++)
		h = (h ^ ((c->uid >> (8 * i)) & 0xff)) *
		    UINT64_C(0x100000001b3);
	c->client_key = h ? h : 1;
	c->seq = (uint64_t)json_integer_value(seq);
	return 0;
}

/* A TCP connection authenticates with the MUNGE credential of its first
 * request, which comes sealed (docs/protocol.md §2.6): the credential's
 * payload names the SHA-256 of the body as sent, and the cluster takes
 * each credential once.  Three steps, none on the main loop's time:
 *
 *   state       event                      next / answer
 *   decoding    munged refuses             refused, EACCES (munged's why)
 *   decoding    payload binds another body refused, EACCES, logged
 *   decoding    checks out                 replicating (MM_OP_CRED)
 *   decoding    propose fails (no quorum)  refused with that code: the
 *                                          client goes to another replica
 *   replicating the cluster took it before refused, EACCES "replayed",
 *               or it expired by its time  logged with the uid
 *   replicating accepted                   the connection is the uid's;
 *                                          the request is dispatched
 *   either      the client goes            dropped (client_gone)
 *
 * A read-only request over TCP takes the same path: a credential that
 * skipped the replicated check could be replayed to a replica for a
 * read, so a minority replica authenticates no TCP client.  The unix
 * socket has SO_PEERCRED and none of this. */
struct mmd_pending_auth {
	struct mmd_pending_auth *next;
	uint64_t conn;
	json_t *req;
	const struct mmd_request_type *type;
	uint8_t digest[ST_SHA256_BYTES]; /* of the body received */
	int replicating;                 /* MM_OP_CRED proposed */
	uint32_t uid, gid;               /* the credential's, once decoded */
};

static int begin_auth(struct mmd_requests *rq, struct mmd_client *c,
		      json_t *req, const struct mmd_request_type *t,
		      const char *cred, size_t clen,
		      const uint8_t digest[ST_SHA256_BYTES])
{
	struct mmd_pending_auth *p;

	if (!(p = calloc(1, sizeof(*p))))
		return mmd_client_reply_err(c, ENOMEM, "out of memory"), -1;
	if (mmd_auth_submit(&rq->auth, c->id, cred, clen)) {
		free(p);
		mmd_client_reply_err(c, EAGAIN, "manager %s: %u credentials "
				     "wait to be checked: try again",
				     rq->host->name, MMD_AUTH_QUEUE);
		return -1;
	}
	p->conn = c->id;
	p->req = json_incref(req);
	p->type = t;
	memcpy(p->digest, digest, sizeof(p->digest));
	p->next = rq->pending;
	rq->pending = p;
	return 0;
}

static void dispatch(struct mmd_requests *rq, struct mmd_client *c,
		     const struct mmd_request_type *t, json_t *req);

static struct mmd_pending_auth *pending_take(struct mmd_requests *rq,
					     uint64_t conn, int replicating)
{
	struct mmd_pending_auth **pp = &rq->pending, *p;

	while (*pp && ((*pp)->conn != conn ||
		       (*pp)->replicating != replicating))
		pp = &(*pp)->next;
	if ((p = *pp))
		*pp = p->next;
	return p;
}

static void pending_free(struct mmd_pending_auth *p)
{
	json_decref(p->req);
	free(p);
}

/* munged vouched for r: check the binding, then ask the cluster. */
static void credential_decoded(struct mmd_requests *rq, struct mmd_client *c,
			       struct mmd_pending_auth *p,
			       const struct mmd_auth_result *r)
{
	mm_op_t op = { .code = MM_OP_CRED, .uid = r->uid,
		       .cred_id = r->cred_id,
		       .cred_expire_ms = r->expire_ms };
	mm_result_t res;
	char why[320];

	if (st_seal_check(r->payload, r->payload_len, p->digest, why,
			  sizeof(why))) {
		qb_log(LOG_NOTICE, "uid %u refused: MUNGE credential from %s: "
		       "%s", r->uid, c->addr, why);
		mmd_client_reply_err(c, EACCES, "MUNGE credential of uid %u "
				     "refused: %s", r->uid, why);
		pending_free(p);
		return;
	}
	p->uid = r->uid;
	p->gid = r->gid;
	if (mmd_repl_propose_client(rq->repl, c, 0, 0, r->uid, r->gid,
				    MMD_REQ_CRED, &op, &res)) {
		mmd_client_reply_err(c, res.rc, "MUNGE credential of uid %u "
				     "not checked: the cluster's replay check "
				     "goes through the replicated log, and "
				     "manager %s cannot write to it now (%s): "
				     "try another replica", r->uid,
				     rq->host->name, res.err);
		pending_free(p);
		return;
	}
	p->replicating = 1;
	p->next = rq->pending;
	rq->pending = p;
}

void mmd_requests_auth_done(struct mmd_requests *rq)
{
	struct mmd_auth_result r;

	while (mmd_auth_next(&rq->auth, &r)) {
		struct mmd_pending_auth *p = pending_take(rq, r.conn, 0);
		struct mmd_client *c;

		if (!p)
			continue;
		c = mmd_clients_find(rq->clients, r.conn);
		if (!c) {
			pending_free(p); /* gone meanwhile */
		} else if (!r.ok) {
			qb_log(LOG_NOTICE, "TCP client %s refused: MUNGE "
			       "credential: %s", c->addr, r.err);
			mmd_client_reply_err(c, EACCES, "MUNGE credential "
					     "refused: %s (is munged running "
					     "with the cluster's key on both "
					     "hosts?)", r.err);
			pending_free(p);
		} else {
			credential_decoded(rq, c, p, &r);
		}
	}
}

/* The cluster took c's credential, or refused it (MM_OP_CRED). */
static void credential_agreed(struct mmd_requests *rq, struct mmd_client *c,
			      const mm_result_t *res)
{
	struct mmd_pending_auth *p = pending_take(rq, c->id, 1);

	if (!p)
		return;
	if (res->rc) {
		qb_log(LOG_NOTICE, "uid %u refused: from %s: %s", p->uid,
		       c->addr, res->err);
		mmd_client_reply_err(c, res->rc, "%s", res->err);
	} else if (mmd_client_authed(c, p->uid, p->gid) == 0) {
		dispatch(rq, c, p->type, p->req);
	}
	pending_free(p);
}

void mmd_requests_client_gone(struct mmd_requests *rq, struct mmd_client *c)
{
	struct mmd_pending_auth *p;
	struct mmd_input_set *s;

	while ((p = pending_take(rq, c->id, 1)))
		pending_free(p);
	/* inputs still coming go; those being read or pushed are dropped
	 * when done (the client is not found then) */
	while ((s = mmd_requests_set_take(rq, c->id)))
		mmd_inputs_free(&rq->inputs, s);
	/* one still decoding is dropped when its result comes */
}

/* "auth": a TCP client authenticates its connection with a small frame
 * before a large request (frames are capped until it has). */
static void op_auth(struct mmd_requests *rq, struct mmd_client *c,
		    json_t *req)
{
	(void)rq;
	(void)req;
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
		"{s:b, s:i, s:i}", "ok", 1, "uid", (int)c->uid, "gid",
		(int)c->gid));
}

/* ---- the table ------------------------------------------------------------ */

static void h_run(struct mmd_requests *rq, struct mmd_client *c, json_t *req)
{
	json_t *in = json_object_get(req, "stdin");
	const char *v = json_string_value(in);

	/* rank 0's stdin: "0" forwarded, "none" (or a client that does not
	 * say) /dev/null-like: the end at once */
	if (in && (!v || (strcmp(v, "0") && strcmp(v, "none")))) {
		mmd_client_reply_err(c, EINVAL, "\"stdin\" must be \"0\" "
				     "(forwarded to rank 0) or \"none\"");
		return;
	}
	c->stdin_want = v && !strcmp(v, "0");
	mmd_requests_submit(rq, c, req, 1, NULL);
}

static void h_submit(struct mmd_requests *rq, struct mmd_client *c,
		     json_t *req)
{
	mmd_requests_submit(rq, c, req, 0, NULL);
}

static void h_nodes(struct mmd_requests *rq, struct mmd_client *c,
		    json_t *req)
{
	(void)req;
	op_nodes(rq, c);
}

static void h_status(struct mmd_requests *rq, struct mmd_client *c,
		     json_t *req)
{
	(void)req;
	op_status(rq, c);
}

static void h_matrix(struct mmd_requests *rq, struct mmd_client *c,
		     json_t *req)
{
	(void)req;
	op_matrix(rq, c);
}

/* A read needs little: an id, a page, a credential (~200 bytes). */
#define READ_MAX (64u << 10)

static const struct mmd_request_type {
	const char *name;
	void (*handle)(struct mmd_requests *rq, struct mmd_client *c,
		       json_t *req);
	int auth;           /* needs an authenticated identity (MUNGE over
			     * TCP; the unix socket's peer is known) */
	uint32_t max_bytes; /* largest frame */
} request_types[] = {
	{ "run",      h_run,       1, ST_FRAME_MAX },
	{ "submit",   h_submit,    1, ST_FRAME_MAX },
	{ "cancel",   op_cancel,   1, READ_MAX },
	{ "drain",    op_drain,    1, READ_MAX },
	{ "resume",   op_resume,   1, READ_MAX },
	{ "checkpoint", op_checkpoint, 1, READ_MAX },
	{ "restart",  op_restart,  1, READ_MAX },
	{ "queue",    op_queue,    1, READ_MAX },
	{ "show",     op_show,     1, READ_MAX },
	{ "nodes",    h_nodes,     1, READ_MAX },
	{ "status",   h_status,    1, READ_MAX },
	{ "matrix",   h_matrix,    1, READ_MAX },
	{ "wait",     op_wait,     1, READ_MAX },
	{ "managers", op_managers, 1, READ_MAX },
	{ "auth",     op_auth,     1, READ_MAX },
	{ "history",  op_history,  1, READ_MAX },
	{ "history_page", op_history_page, 1, READ_MAX },
	{ "inputs_fetch", op_inputs_fetch, 1, READ_MAX },
	{ "inputs_put", mmd_requests_inputs_put, 1, READ_MAX },
};

static const struct mmd_request_type *request_type(const char *name)
{
	for (size_t i = 0; i < sizeof(request_types) /
			       sizeof(request_types[0]); i++)
		if (!strcmp(request_types[i].name, name))
			return &request_types[i];
	return NULL;
}

static void dispatch(struct mmd_requests *rq, struct mmd_client *c,
		     const struct mmd_request_type *t, json_t *req)
{
	size_t k = (size_t)(t - request_types);

	/* its latency, to its reply (now, or once agreed) */
	if (k < MMD_REQ_TYPES_MAX) {
		c->lat = &rq->lat[k];
		c->req_ns = mmd_mono_ns();
	}
	if (request_identity(rq, c, req))
		return; /* answered */
	t->handle(rq, c, req);
}

void mmd_requests_metrics(const struct mmd_requests *rq, struct mmd_text *t)
{
	size_t n = sizeof(request_types) / sizeof(*request_types);

	mmd_text_head(t, "storm_request_seconds", "histogram",
		      "Client requests, from receipt to reply (a job "
		      "submission's once agreed), by request.");
	for (size_t k = 0; k < n && k < MMD_REQ_TYPES_MAX; k++) {
		char labels[64];

		snprintf(labels, sizeof(labels), "op=\"%s\"",
			 request_types[k].name);
		mmd_text_phist(t, "storm_request_seconds", labels, &rq->lat[k]);
	}
}

/* Over TCP before authentication: why a frame without a seal is
 * refused. */
static void unsealed(struct mmd_client *c, json_t *req)
{
	if (json_object_get(req, "munge"))
		mmd_client_reply_err(c, EACCES, "request over TCP with its "
				     "MUNGE credential inside (an older "
				     "stormctl?): a credential now travels in "
				     "a SEALED frame and binds the request's "
				     "bytes (docs/protocol.md 2.6); upgrade "
				     "stormctl");
	else
		mmd_client_reply_err(c, EACCES, "request over TCP without a "
				     "MUNGE credential: use stormctl (it seals "
				     "each request with one) with munged "
				     "running, or the manager's unix socket");
}

void mmd_requests_handle(struct mmd_requests *rq, struct mmd_client *c,
			 int type, const char *text, uint32_t len)
{
	const char *cred = NULL;
	const uint8_t *body = (const uint8_t *)text;
	size_t clen = 0, blen = len;
	uint8_t digest[ST_SHA256_BYTES];
	char why[256];
	json_error_t jerr;
	json_t *req;
	const char *op;
	const struct mmd_request_type *t;

	if (type == ST_FRAME_SEALED) {
		if (c->authed) {
			mmd_client_reply_err(c, EPROTO, "a sealed request on "
					     "a connection that is %s: send "
					     "it as a plain REQUEST frame",
					     c->tcp ? "authenticated already"
						    : "the unix socket's "
						      "(SO_PEERCRED names "
						      "you)");
			return;
		}
		if (st_seal_decode((const uint8_t *)text, len, &cred, &clen,
				   &body, &blen, why, sizeof(why))) {
			mmd_client_reply_err(c, EPROTO, "%s", why);
			return;
		}
		if (st_sha256(body, blen, digest)) {
			mmd_client_reply_err(c, ENOMEM, "out of memory");
			return;
		}
	}
	req = json_loadb((const char *)body, blen, 0, &jerr);
	op = json_string_value(json_object_get(req, "op"));
	t = op ? request_type(op) : NULL;
	if (!json_is_object(req) || !op) {
		mmd_client_reply_err(c, EPROTO, "request: not a JSON object "
				     "with \"op\" (%s)",
				     req ? "no op" : jerr.text);
	} else if (!t) {
		mmd_client_reply_err(c, EINVAL, "request: unknown op \"%s\"",
				     op);
	} else if (blen > t->max_bytes) {
		mmd_client_reply_err(c, E2BIG, "request: %s of %zu bytes, at "
				     "most %u", op, blen, t->max_bytes);
	} else if (cred && json_object_get(req, "inputs")) {
		mmd_client_reply_err(c, EPROTO, "request: %s with \"inputs\" "
				     "in a SEALED frame: authenticate the "
				     "connection first (op auth), then send "
				     "the request and its INPUT frames "
				     "(docs/protocol.md 2.7)", op);
	} else if (t->auth && !c->authed) {
		if (!cred)
			unsealed(c, req);
		else
			begin_auth(rq, c, req, t, cred, clen, digest);
	} else {
		dispatch(rq, c, t, req);
	}
	json_decref(req);
}

void mmd_requests_fini(struct mmd_requests *rq)
{
	while (rq->sets) {
		struct mmd_input_set *s = rq->sets;

		rq->sets = s->next;
		mmd_inputs_free(&rq->inputs, s);
	}
	while (rq->pending) {
		struct mmd_pending_auth *p = rq->pending;

		rq->pending = p->next;
		pending_free(p);
	}
}

void mmd_requests_applied(struct mmd_requests *rq)
{
	mm_job_t j;

	for (struct mmd_client *c = rq->clients->list; c; c = c->next)
		if (c->watch_job && !mm_job_get(ST(rq), c->watch_job, &j) &&
		    is_terminal(j.state))
			job_ended(rq, &j);
}
