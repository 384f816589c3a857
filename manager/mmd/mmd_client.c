/*
 * mmd_client.c — storm-mm's client service: the unix socket (peer uid by
 * SO_PEERCRED) and the TCP listener, frame assembly without blocking the
 * loop, and one handler per request op (docs/protocol.md).  A request that
 * changes state becomes an mm_op; reads look at the state directly.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include <munge.h>

#include "mmd.h"

void mmd_job_ended(struct mmd *mm, const mm_job_t *j);

static int is_terminal(mm_job_state_t s)
{
	return s == MM_JOB_COMPLETED || s == MM_JOB_FAILED ||
	       s == MM_JOB_CANCELLED;
}

/* Apply, then give every watched job that ended its side effects. */
int mmd_apply(struct mmd *mm, mm_op_t *op, mm_result_t *res)
{
	int rc = mm_apply(mm->st, op, res);
	mm_job_t j;

	if (rc && op->code != MM_OP_TICK)
		qb_log(LOG_DEBUG, "op %d refused: %s", op->code, res->err);
	for (struct mmd_client *c = mm->clients; c; c = c->next)
		if (c->watch_job && !mm_job_get(mm->st, c->watch_job, &j) &&
		    is_terminal(j.state))
			mmd_job_ended(mm, &j);
	/* ending a job closes (frees) all its output files: look again */
	for (int again = 1; again;) {
		again = 0;
		for (struct mmd_out *o = mm->outs; o; o = o->next)
			if (!mm_job_get(mm->st, o->job, &j) &&
			    is_terminal(j.state)) {
				mmd_job_ended(mm, &j);
				again = 1;
				break;
			}
	}
	return rc;
}

/* ---- sending ------------------------------------------------------------------ */

static void client_drop(struct mmd *mm, struct mmd_client *c)
{
	for (struct mmd_client **pp = &mm->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	mmd_client_gone(mm, c);
	qb_loop_poll_del(mm->loop, c->fd);
	close(c->fd);
	free(c->buf);
	free(c->out);
	free(c);
}

#define OUT_MAX (16u << 20) /* a client this far behind is dropped */

static int on_client(int32_t fd, int32_t revents, void *data);

/* Write what the socket takes now; wait for POLLOUT for the rest.  The
 * main loop never blocks on a client: a slow `stormctl run` (a paused
 * pager) must not stall the strobe. */
static void client_flush(struct mmd_client *c)
{
	size_t done = 0;

	while (done < c->out_len) {
		ssize_t n = send(c->fd, c->out + done, c->out_len - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->out_len = 0;
			c->closing = 1;
			c->watch_job = 0;
			c->wait_up = 0;
			c->wait_job = 0;
			return;
		}
		done += (size_t)n;
	}
	memmove(c->out, c->out + done, c->out_len - done);
	c->out_len -= done;
	qb_loop_poll_mod(c->mm->loop, QB_LOOP_MED, c->fd,
			 POLLIN | (c->out_len ? POLLOUT : 0), c, on_client);
}

static int client_send(struct mmd_client *c, int type, const void *p,
		       uint32_t len)
{
	size_t need = c->out_len + ST_FRAME_HDR + len;

	if (c->closing && !c->watch_job)
		return -ECONNRESET;
	if (need > OUT_MAX) {
		qb_log(LOG_WARNING, "a client is %zu bytes behind: dropped "
		       "(its job goes on)", c->out_len);
		c->out_len = 0;
		c->closing = 1;
		c->watch_job = 0;
		return -ENOBUFS;
	}
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		uint8_t *q;

		while (cap < need)
			cap *= 2;
		q = realloc(c->out, cap);
		if (!q)
			return -ENOMEM;
		c->out = q;
		c->out_cap = cap;
	}
	st_frame_put_hdr(c->out + c->out_len, type, len);
	memcpy(c->out + c->out_len + ST_FRAME_HDR, p, len);
	c->out_len = need;
	client_flush(c);
	return 0;
}

static int send_json(struct mmd_client *c, int type, json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	int rc = s ? client_send(c, type, s, (uint32_t)strlen(s)) : -ENOMEM;

	free(s);
	json_decref(o);
	if (rc)
		c->closing = 1;
	return rc;
}

static int reply_err(struct mmd_client *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reply_err(struct mmd_client *c, int rc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return send_json(c, ST_FRAME_REPLY,
			 json_pack("{s:b, s:s, s:i}", "ok", 0, "error", msg,
				   "errno", rc < 0 ? -rc : rc));
}

void mmd_client_output(struct mmd *mm, uint32_t job, uint32_t rank,
		       int stream, const uint8_t *data, uint32_t len)
{
	uint8_t *buf = malloc(9 + len);
	int n;

	if (!buf)
		return;
	n = st_output_encode(buf, 9 + len, job, rank, stream, data, len);
	for (struct mmd_client *c = mm->clients; n > 0 && c; c = c->next)
		if (c->watch_job == job)
			client_send(c, ST_FRAME_OUTPUT, buf, (uint32_t)n);
	free(buf);
}

void mmd_client_job_ended(struct mmd *mm, const mm_job_t *j)
{
	for (struct mmd_client *c = mm->clients; c; c = c->next) {
		json_t *st;

		if (c->watch_job != j->id)
			continue;
		st = json_array();
		for (uint32_t r = 0; j->rank_status && r < j->ranks; r++)
			json_array_append_new(st,
					      json_integer(j->rank_status[r]));
		send_json(c, ST_FRAME_END,
			  json_pack("{s:i, s:s, s:i, s:s, s:o}", "job", j->id,
				    "state", mm_job_state_name(j->state),
				    "exit_code", j->exit_code, "reason",
				    j->reason, "rank_status", st));
		c->watch_job = 0;
		c->closing = 1;
	}
}

/* ---- requests ------------------------------------------------------------------- */

json_t *mmd_job_json(struct mmd *mm, const mm_job_t *j)
{
	json_t *argv = json_array(), *names = json_array(),
	       *st = json_array(), *o;
	uint32_t k;
	char nodes[1024] = "";

	for (uint32_t i = 0; i < j->argc; i++)
		json_array_append_new(argv, json_string(j->argv[i]));
	if (j->nodes) {
		sp_nodeset_format(j->nodes, nodes, sizeof(nodes));
		for (int64_t x = sp_nodeset_next(j->nodes, 0); x >= 0;
		     x = sp_nodeset_next(j->nodes, (uint32_t)x + 1)) {
			mm_node_t n;

			if (!mm_node_by_id(mm->st, (uint32_t)x, &n))
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
	/* its place in the matrix while it holds PEs (stormctl matrix) */
	if (o && j->width) {
		json_object_set_new(o, "row", json_integer(j->row));
		json_object_set_new(o, "col", json_integer(j->col));
		json_object_set_new(o, "width", json_integer(j->width));
	}
	/* launch timing measured here (benchmarks): files to every node,
	 * then launch command to every rank ended and reported */
	k = j->id % ST_DONE_SLOTS;
	if (o && mm->t_staged[k] && mm->t_stage[k])
		json_object_set_new(o, "transfer_ms", json_real(
			(double)(mm->t_staged[k] - mm->t_stage[k]) / 1e6));
	if (o && mm->t_end[k] && mm->t_staged[k])
		json_object_set_new(o, "execute_ms", json_real(
			(double)(mm->t_end[k] - mm->t_staged[k]) / 1e6));
	return o;
}

/* Strings of a JSON array, or NULL if it is not one of strings. */
static const char **strs(json_t *a, uint32_t *n)
{
	const char **v;
	size_t i;
	json_t *x;

	*n = 0;
	if (!a)
		return calloc(1, sizeof(char *));
	if (!json_is_array(a) || json_array_size(a) > 65536)
		return NULL;
	v = calloc(json_array_size(a) + 1, sizeof(char *));
	if (!v)
		return NULL;
	json_array_foreach(a, i, x) {
		if (!json_is_string(x)) {
			free(v);
			return NULL;
		}
		v[i] = json_string_value(x);
	}
	*n = (uint32_t)json_array_size(a);
	return v;
}

static void op_submit(struct mmd *mm, struct mmd_client *c, json_t *req,
		      int run)
{
	json_t *job = json_object_get(req, "job");
	mm_job_spec_t spec = { 0 };
	mm_op_t op = { .code = MM_OP_SUBMIT, .spec = &spec };
	mm_result_t res;
	const char **argv = NULL, **env = NULL, **files = NULL;
	json_int_t ranks = 1, limit = 0;

	if (!json_is_object(job)) {
		reply_err(c, EINVAL, "request: \"job\" must be an object");
		return;
	}
	spec.name = json_string_value(json_object_get(job, "name"));
	spec.nodelist = json_string_value(json_object_get(job, "nodes"));
	spec.cwd = json_string_value(json_object_get(job, "cwd"));
	spec.out_path = json_string_value(json_object_get(job, "stdout"));
	spec.err_path = json_string_value(json_object_get(job, "stderr"));
	if (json_object_get(job, "ranks"))
		ranks = json_integer_value(json_object_get(job, "ranks"));
	if (json_object_get(job, "time_limit_ms"))
		limit = json_integer_value(json_object_get(job,
							   "time_limit_ms"));
	argv = strs(json_object_get(job, "argv"), &spec.argc);
	env = strs(json_object_get(job, "env"), &spec.envc);
	files = strs(json_object_get(job, "files"), &spec.nfiles);
	if (!argv || !env || !files) {
		reply_err(c, EINVAL, "request: argv, env and files must be "
			  "arrays of strings");
		goto out;
	}
	if (ranks < 1 || ranks > 1000000 || limit < 0) {
		reply_err(c, EINVAL, "request: ranks must be 1 to 1000000 and "
			  "time_limit_ms not negative");
		goto out;
	}
	spec.name = spec.name ? spec.name : "";
	spec.cwd = spec.cwd ? spec.cwd : "/";
	spec.ranks = (uint32_t)ranks;
	spec.argv = argv;
	spec.env = env;
	spec.files = files;
	spec.batch = !run;
	spec.time_limit_ms = (uint64_t)limit;
	spec.uid = c->uid;
	spec.gid = c->gid;
	if (mmd_propose_client(mm, c, run ? MMD_REQ_RUN : MMD_REQ_SUBMIT, &op,
			       &res))
		reply_err(c, res.rc, "%s", res.err);
out:
	free(argv);
	free(env);
	free(files);
}

#define QUEUE_PAGE 5000 /* jobs per queue reply: well inside a frame */
#define EXPECT_EVERY_MS 1000 /* expected starts: recomputed at most so */

/* The expected starts of the first MMD_EXPECT_MAX pending jobs, as of the
 * state now or at most EXPECT_EVERY_MS ago (struct mmd_expect says why);
 * a job submitted since may be missing from them.  Never fails: out of
 * memory leaves none. */
static const struct mmd_expect *expected_starts(struct mmd *mm)
{
	struct mmd_expect *e = &mm->expect;
	uint64_t now = mmd_now_ms(mm);
	rp_status_t rs = { .applied = 0 };
	int n;

	if (mm->rp)
		rp_status(mm->rp, &rs);
	if (e->valid && (e->applied == rs.applied ||
			 now - e->at_ms < EXPECT_EVERY_MS))
		return e;
	n = mm_expected_starts(mm->st, MMD_EXPECT_MAX, e->id, e->start_ms);
	e->n = n > 0 ? n : 0;
	e->valid = 1;
	e->applied = rs.applied;
	e->at_ms = now;
	return e;
}

/* Jobs from id "from" on, at most a page; "next" says where the next page
 * starts (a long history never outgrows a frame).  The first page gives
 * the first pending jobs their expected start. */
static void op_queue(struct mmd *mm, struct mmd_client *c, json_t *req)
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
		e = expected_starts(mm);
	for (uint32_t id = (uint32_t)from; mm_job_next(mm->st, id, &j) == 0;
	     id = j.id + 1) {
		json_t *o;

		if (!all && is_terminal(j.state))
			continue;
		if (n == QUEUE_PAGE) {
			next = j.id; /* the first one this page leaves out */
			break;
		}
		o = mmd_job_json(mm, &j);
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
	send_json(c, ST_FRAME_REPLY, rep);
}

static int job_arg(struct mmd_client *c, json_t *req, uint32_t *id)
{
	json_t *v = json_object_get(req, "job");

	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > UINT32_MAX) {
		reply_err(c, EINVAL, "request: \"job\" must be a job id");
		return -1;
	}
	*id = (uint32_t)json_integer_value(v);
	return 0;
}

static void op_show(struct mmd *mm, struct mmd_client *c, json_t *req)
{
	uint32_t id;
	mm_job_t j;
	json_t *o;

	if (job_arg(c, req, &id))
		return;
	if (mm_job_get(mm->st, id, &j)) {
		reply_err(c, ENOENT, "no job %u (see stormctl queue -a)", id);
		return;
	}
	o = mmd_job_json(mm, &j);
	if (o && j.state == MM_JOB_PENDING) {
		const struct mmd_expect *e = expected_starts(mm);

		for (int k = 0; k < e->n; k++)
			if (e->id[k] == j.id)
				json_object_set_new(o, "expected_start_ms",
						    json_integer((json_int_t)
							e->start_ms[k]));
	}
	send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:o}", "ok", 1, "job",
					       o));
}

/* The wall clock, as the strobe master's slice count and the state's
 * times (MM_OP_TICK's now_ms) read it. */
static uint64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One row of the matrix over the real columns cols[0..n): job ids, 0 free;
 * every job met is added to ids (a block's cells are adjacent: one entry
 * per block and row). */
static json_t *matrix_row(struct mmd *mm, uint32_t row, const uint32_t *cols,
			  uint32_t n, uint32_t *ids, size_t *nids)
{
	json_t *a = json_array();
	uint32_t last = 0;

	for (uint32_t i = 0; a && i < n; i++) {
		uint32_t id = mm_matrix_cell(mm->st, row, cols[i]);

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
 * knows the slice, another replica's mm->slice stands still, so it takes
 * the wall clock as mmd_master_changed() does (the master's count started
 * from it, and they differ only by the master's missed boundaries). */
static void op_matrix(struct mmd *mm, struct mmd_client *c)
{
	uint32_t rows = mm_matrix_rows(mm->st), ncols = mm_matrix_cols(mm->st);
	uint32_t n = 0, active;
	uint64_t slice = mm->master ? mm->slice :
			 wall_us() / mm->cfg.slice_us;
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
	mm_sched_get(mm->st, &sc);
	active = mm_active_row(mm->st, slice);
	snprintf(digest, sizeof(digest), "%016llx",
		 (unsigned long long)mm_matrix_digest(mm->st));
	/* a node's columns are adjacent: its cpu k is its k-th column */
	for (uint32_t col = 0, first = 0, last = UINT32_MAX; col < ncols;
	     col++) {
		uint32_t id = mm_matrix_col_node(mm->st, col);

		if (id == UINT32_MAX)
			continue; /* a phantom */
		if (id != last && mm_node_by_id(mm->st, id, &x))
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
		json_array_append_new(cells, matrix_row(mm, r, cols, n, ids,
							&nids));
	qsort(ids, nids, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < nids; i++) {
		mm_job_t j;

		if ((i && ids[i] == ids[i - 1]) ||
		    mm_job_get(mm->st, ids[i], &j))
			continue;
		json_array_append_new(jobs, json_pack(
			"{s:i, s:i, s:i, s:i, s:s, s:s, s:i, s:i}", "job", j.id,
			"row", j.row, "col", j.col, "width", j.width, "state",
			mm_job_state_name(j.state), "name", j.name, "ranks",
			j.ranks, "uid", j.uid));
	}
	bad = mm_matrix_check(mm->st, why, sizeof(why));
	rep = json_pack("{s:b, s:s, s:i, s:i, s:I, s:i, s:s, s:i, s:I, s:i,"
			" s:s, s:s, s:b, s:b, s:O, s:O, s:O}",
			"ok", 1, "policy", mm_policy_name(sc.policy),
			"mpl", sc.mpl, "quantum_slices", sc.quantum_slices,
			"quantum_us", (json_int_t)sc.quantum_slices *
				      mm->cfg.slice_us,
			"slice_us", mm->cfg.slice_us,
			"placement", mm_placement_name(sc.placement),
			"rows", rows, "slice", (json_int_t)slice,
			"active_row", active == UINT32_MAX ? -1 : (int)active,
			"digest", digest, "answered_by", mm->host->name,
			"strobe_master", mm->master, "consistent", !bad,
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
		reply_err(c, ENOMEM, "matrix: out of memory");
		return;
	}
	send_json(c, ST_FRAME_REPLY, rep);
}

static void op_cancel(struct mmd *mm, struct mmd_client *c, json_t *req)
{
	mm_op_t op = { .code = MM_OP_CANCEL, .uid = c->uid };
	mm_result_t res;

	if (job_arg(c, req, &op.job))
		return;
	/* an administrator acts on any job, as root does */
	for (uint32_t i = 0; i < mm->cfg.nadmins; i++)
		if (mm->cfg.admins[i] == c->uid) {
			qb_log(LOG_INFO, "job %u: cancel by administrator uid %u",
			       op.job, c->uid);
			op.uid = 0;
		}
	if (mmd_propose_client(mm, c, MMD_REQ_CANCEL, &op, &res))
		reply_err(c, res.rc, "%s", res.err);
}

/* A write of c's was applied and is durable here (or failed). */
void mmd_client_answer(struct mmd *mm, struct mmd_client *c, int kind,
		       uint32_t job, const mm_result_t *res)
{
	if (res->rc) {
		reply_err(c, res->rc, "%s", res->err);
		return;
	}
	if (kind == MMD_REQ_CANCEL) {
		send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:i, s:s}", "ok",
						       1, "job", job, "state",
						       "CANCELLED"));
		return;
	}
	qb_log(LOG_INFO, "job %u submitted by uid %u", res->job, c->uid);
	if (kind == MMD_REQ_RUN) {
		mm_job_t j;

		c->watch_job = res->job;
		/* it may have ended already (a retry of a finished run) */
		if (!mm_job_get(mm->st, res->job, &j) &&
		    is_terminal(j.state)) {
			send_json(c, ST_FRAME_REPLY, json_pack(
				"{s:b, s:i}", "ok", 1, "job", res->job));
			mmd_client_job_ended(mm, &j);
			return;
		}
	}
	send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:i}", "ok", 1, "job",
					       res->job));
}

/* The replicas as this one sees them: membership, quorum, the strobe
 * master and each applied index; on the strobe master, its slice
 * statistics, read and then reset if the request says so. */
static void op_managers(struct mmd *mm, struct mmd_client *c, json_t *req)
{
	const rp_status_t *rs = &mm->rs;
	json_t *a = json_array();

	char digest[24];

	rp_status(mm->rp, &mm->rs); /* this replica's own: exact */
	snprintf(digest, sizeof(digest), "%016llx",
		 (unsigned long long)mm_digest(mm->st));
	for (uint32_t i = 0; i < mm->cfg.nmanagers; i++) {
		const st_host_t *h = &mm->cfg.managers[i];
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
			"self", i == mm->host->world_id));
	}
	json_t *diag = json_pack("{s:i, s:i, s:i, s:I, s:I, s:b, s:b, s:b}",
				 "inflight", rs->inflight, "queued", rs->queued,
				 "pending", rs->pending, "sent_batches",
				 (json_int_t)rs->sent_batches, "sent_ops",
				 (json_int_t)rs->sent_ops,
				 "strobe_master", mm->master,
				 "tick_inflight", mm->tick_inflight,
				 "world_stale", mm->world_stale);

	json_t *rep = json_pack(
		"{s:b, s:o, s:s, s:s, s:b, s:b, s:b, s:I, s:I, s:I, s:s, s:o}",
		"ok", 1, "replication", diag,
		"cluster", mm->cfg.cluster, "answered_by", mm->host->name,
		"quorate", rs->quorate, "primary", rs->primary, "synced",
		rs->synced, "view", (json_int_t)rs->view, "applied",
		(json_int_t)rs->applied, "durable", (json_int_t)rs->durable,
		"digest", digest, "managers", a);

	if (rep && mm->master) {
		json_object_set_new(rep, "strobe", mmd_stats_json(mm));
		if (json_is_true(json_object_get(req, "reset_strobe_stats")))
			mmd_stats_reset(mm);
	}
	send_json(c, ST_FRAME_REPLY, rep);
}

/* Nodes with their reliability as MOLAR placement scores it: service
 * time observed (in service before, plus the current spell if UP) and
 * that per failure (+1: a node never seen to fail scores all of it). */
static void op_nodes(struct mmd *mm, struct mmd_client *c)
{
	json_t *a = json_array();
	uint32_t n = mm_node_count(mm->st);
	uint64_t now = wall_us() / 1000u;

	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;
		uint64_t up;

		if (mm_node_get(mm->st, i, &x))
			continue;
		up = x.up_ms;
		if (x.state == MM_NODE_UP && x.up_since_ms &&
		    now > x.up_since_ms)
			up += now - x.up_since_ms;
		json_array_append_new(a, json_pack(
			"{s:i, s:s, s:s, s:i, s:i, s:i, s:s, s:I, s:I}",
			"id", x.id, "name", x.name,
			"state", mm_node_state_name(x.state), "cpus", x.cpus,
			"used", x.used, "failures", x.failures,
			"reason", x.reason, "service_ms", (json_int_t)up,
			"mttf_ms",
			(json_int_t)(up / ((uint64_t)x.failures + 1))));
	}
	send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:o}", "ok", 1,
					       "nodes", a));
}

static void op_status(struct mmd *mm, struct mmd_client *c)
{
	uint32_t n = mm_node_count(mm->st), up = 0, pend = 0, run = 0;
	sp_view_info_t vi = { 0 };
	mm_job_t j;

	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;

		if (!mm_node_get(mm->st, i, &x) && x.state == MM_NODE_UP)
			up++;
	}
	for (uint32_t id = 1; mm_job_next(mm->st, id, &j) == 0; id = j.id + 1) {
		pend += j.state == MM_JOB_PENDING;
		run += j.state == MM_JOB_STAGING || j.state == MM_JOB_RUNNING;
	}
	if (mm->w)
		sp_view(mm->w, &vi, NULL);
	send_json(c, ST_FRAME_REPLY, json_pack(
		"{s:b, s:s, s:s, s:I, s:i, s:I, s:i, s:i, s:i, s:i}",
		"ok", 1, "cluster", mm->cfg.cluster, "manager", mm->host->name,
		"slice", (json_int_t)mm->slice, "slice_us", mm->cfg.slice_us,
		"view_epoch", (json_int_t)vi.epoch, "nodes_up", up,
		"nodes_total", n, "jobs_pending", pend, "jobs_running", run));
}

static uint32_t nodes_up(struct mmd *mm)
{
	uint32_t n = mm_node_count(mm->st), up = 0;

	for (uint32_t i = 0; i < n; i++) {
		mm_node_t x;

		if (!mm_node_get(mm->st, i, &x) && x.state == MM_NODE_UP)
			up++;
	}
	return up;
}

/* Answer the "wait" requests whose condition holds or whose time is up:
 * scripts and tests wait for the cluster on an answer, not by polling. */
void mmd_client_waits(struct mmd *mm)
{
	uint32_t up = nodes_up(mm);

	for (struct mmd_client *c = mm->clients; c; c = c->next) {
		mm_job_t j;

		if (c->wait_job && !mm_job_get(mm->st, c->wait_job, &j) &&
		    is_terminal(j.state)) {
			c->wait_job = 0;
			send_json(c, ST_FRAME_REPLY,
				  json_pack("{s:b, s:o}", "ok", 1, "job",
					    mmd_job_json(mm, &j)));
			c->closing = 1;
		} else if (c->wait_job &&
			   mmd_now_ms(mm) >= c->wait_until_ms) {
			reply_err(c, ETIMEDOUT, "job %u has not ended yet",
				  c->wait_job);
			c->wait_job = 0;
			c->closing = 1;
		}
		if (!c->wait_up)
			continue;
		if (c->wait_down ? mm_node_count(mm->st) - up >= c->wait_up :
				   up >= c->wait_up) {
			c->wait_up = 0;
			op_status(mm, c);
			c->closing = 1;
		} else if (mmd_now_ms(mm) >= c->wait_until_ms) {
			reply_err(c, ETIMEDOUT, "%u node(s) up when the wait "
				  "timed out (see stormctl nodes)", up);
			c->wait_up = 0;
			c->closing = 1;
		}
	}
}

static void op_wait(struct mmd *mm, struct mmd_client *c, json_t *req)
{
	json_t *n = json_object_get(req, "nodes_up"),
	       *t = json_object_get(req, "timeout_ms");
	int down = 0;
	mm_job_t j;

	if (json_object_get(req, "job")) {
		if (job_arg(c, req, &c->wait_job))
			return;
		if (mm_job_get(mm->st, c->wait_job, &j)) {
			reply_err(c, ENOENT, "no job %u", c->wait_job);
			c->wait_job = 0;
			return;
		}
		if (t && (!json_is_integer(t) || json_integer_value(t) < 0))
			t = NULL;
		c->wait_until_ms = mmd_now_ms(mm) +
			(t ? (uint64_t)json_integer_value(t) : 3600000u);
		mmd_client_waits(mm);
		return;
	}

	if (!n && (n = json_object_get(req, "nodes_down")))
		down = 1;
	if (!json_is_integer(n) || json_integer_value(n) < 1 ||
	    json_integer_value(n) > mm_node_count(mm->st) ||
	    (t && (!json_is_integer(t) || json_integer_value(t) < 0 ||
		   json_integer_value(t) > 3600000))) {
		reply_err(c, EINVAL, "request: wait needs job, or nodes_up or "
			  "nodes_down in [1, %u], and timeout_ms in [0, "
			  "3600000]",
			  mm_node_count(mm->st));
		return;
	}
	c->wait_up = (uint32_t)json_integer_value(n);
	c->wait_down = down;
	c->wait_until_ms = mmd_now_ms(mm) +
			   (t ? (uint64_t)json_integer_value(t) : 10000u);
	mmd_client_waits(mm);
}

/* (client, seq) names a write for exactly-once retries: the key mixes
 * in the authenticated uid, so one user cannot answer for another's
 * client id.  A request without them gets a number of its own. */
static int request_identity(struct mmd_client *c, json_t *req)
{
	const char *id = json_string_value(json_object_get(req, "client"));
	json_t *seq = json_object_get(req, "seq");
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	if (!id || !json_is_integer(seq)) {
		if (!c->anon_seq) { /* per connection: never retried */
			c->anon_seq = 1;
			c->client_key = ((uint64_t)(uintptr_t)c ^
					 mmd_mono_ns()) | 1;
		}
		c->seq = c->anon_seq++;
		return 0;
	}
	if (json_integer_value(seq) < 1) {
		reply_err(c, EINVAL, "request: \"seq\" must be at least 1");
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

/* A TCP request carries a MUNGE credential whose payload names the
 * request ("CLIENT:SEQ"); munged vouches for the uid and gid, refuses a
 * forged, expired or replayed one.  (The unix socket has SO_PEERCRED.) */
static int authenticate(struct mmd *mm, struct mmd_client *c, json_t *req)
{
	const char *cred = json_string_value(json_object_get(req, "munge"));
	const char *id = json_string_value(json_object_get(req, "client"));
	json_int_t seq = json_integer_value(json_object_get(req, "seq"));
	munge_ctx_t ctx;
	munge_err_t e;
	void *payload = NULL;
	int len = 0;
	uid_t uid;
	gid_t gid;
	char want[512];

	if (!cred) {
		reply_err(c, EACCES, "request over TCP without a MUNGE "
			  "credential: use stormctl (it adds one) with munged "
			  "running, or the manager's unix socket");
		return -1;
	}
	if (!(ctx = munge_ctx_create()))
		return reply_err(c, ENOMEM, "out of memory"), -1;
	if (mm->cfg.munge_socket[0])
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, mm->cfg.munge_socket);
	e = munge_decode(cred, ctx, &payload, &len, &uid, &gid);
	munge_ctx_destroy(ctx);
	snprintf(want, sizeof(want), "%s:%lld", id ? id : "",
		 (long long)seq);
	if (e != EMUNGE_SUCCESS) {
		reply_err(c, EACCES, "MUNGE credential refused: %s (is munged "
			  "running with the cluster's key on both hosts?)",
			  munge_strerror(e));
		free(payload);
		return -1;
	}
	if (!payload || (size_t)len != strlen(want) ||
	    memcmp(payload, want, (size_t)len)) {
		reply_err(c, EACCES, "MUNGE credential made for another "
			  "request (its payload must be \"CLIENT:SEQ\")");
		free(payload);
		return -1;
	}
	free(payload);
	c->uid = uid;
	c->gid = gid;
	return 0;
}

static void request(struct mmd *mm, struct mmd_client *c, const char *text)
{
	json_error_t jerr;
	json_t *req = json_loads(text, 0, &jerr);
	const char *op = json_string_value(json_object_get(req, "op"));

	if (!json_is_object(req) || !op) {
		reply_err(c, EPROTO, "request: not a JSON object with \"op\" "
			  "(%s)", req ? "no op" : jerr.text);
	} else if (c->tcp && authenticate(mm, c, req)) {
		/* refused */
	} else if (request_identity(c, req)) {
		/* answered */
	} else if (!strcmp(op, "run") || !strcmp(op, "submit")) {
		op_submit(mm, c, req, !strcmp(op, "run"));
	} else if (!strcmp(op, "queue")) {
		op_queue(mm, c, req);
	} else if (!strcmp(op, "show")) {
		op_show(mm, c, req);
	} else if (!strcmp(op, "cancel")) {
		op_cancel(mm, c, req);
	} else if (!strcmp(op, "nodes")) {
		op_nodes(mm, c);
	} else if (!strcmp(op, "status")) {
		op_status(mm, c);
	} else if (!strcmp(op, "matrix")) {
		op_matrix(mm, c);
	} else if (!strcmp(op, "wait")) {
		op_wait(mm, c, req);
	} else if (!strcmp(op, "managers")) {
		op_managers(mm, c, req);
	} else {
		reply_err(c, EINVAL, "request: unknown op \"%s\"", op);
	}
	json_decref(req);
}

/* ---- connections ------------------------------------------------------------- */

static int on_client(int32_t fd, int32_t revents, void *data)
{
	struct mmd_client *c = data;
	struct mmd *mm = c->mm;
	ssize_t n;

	if (revents & POLLOUT) {
		client_flush(c);
		if (!(revents & POLLIN))
			return 0;
	}
	if (c->got < ST_FRAME_HDR) {
		n = read(fd, c->hdr + c->got, ST_FRAME_HDR - c->got);
		if (n <= 0)
			goto gone;
		c->got += (uint32_t)n;
		if (c->got == ST_FRAME_HDR) {
			int type;
			uint32_t len;

			if (st_frame_parse_hdr(c->hdr, &type, &len) ||
			    type != ST_FRAME_REQUEST) {
				reply_err(c, EPROTO, "not a Storm request "
					  "frame (protocol %d)",
					  ST_FRAME_VERSION);
				goto gone;
			}
			c->need = ST_FRAME_HDR + len;
			free(c->buf);
			c->buf = malloc(len + 1);
			if (!c->buf)
				goto gone;
		}
	} else {
		n = read(fd, c->buf + (c->got - ST_FRAME_HDR),
			 c->need - c->got);
		if (n <= 0)
			goto gone;
		c->got += (uint32_t)n;
	}
	if (c->got < ST_FRAME_HDR || c->got < c->need)
		return 0;
	c->buf[c->need - ST_FRAME_HDR] = '\0';
	c->got = c->need = 0;
	request(mm, c, (const char *)c->buf);
	if (c->closing && !c->watch_job && !c->wait_up &&
		    !c->wait_job && !c->out_len)
		client_drop(mm, c);
	return 0;
gone:
	if (c->watch_job)
		qb_log(LOG_INFO, "job %u: its client left; the job goes on",
		       c->watch_job);
	client_drop(mm, c);
	return 0;
}

static int on_accept(int32_t fd, int32_t revents, void *data)
{
	struct mmd *mm = data;
	struct mmd_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

	(void)revents;
	if (cfd < 0)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(cfd);
		return 0;
	}
	c->mm = mm;
	c->fd = cfd;
	/* unix socket: the kernel says who it is; TCP: nobody until MUNGE */
	if (fd == mm->unix_fd &&
	    getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->uid = cred.uid;
		c->gid = cred.gid;
	} else {
		c->uid = c->gid = 65534; /* until its MUNGE credential */
		c->tcp = 1;
	}
	c->next = mm->clients;
	mm->clients = c;
	qb_loop_poll_add(mm->loop, QB_LOOP_MED, cfd, POLLIN, c, on_client);
	return 0;
}

int mmd_listen(struct mmd *mm, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	st_manager_socket(&mm->cfg, mm->host, mm->sock_path,
			  sizeof(mm->sock_path));
	if (strlen(mm->sock_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: run_dir too long for a socket path",
			 mm->cfg.path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, mm->sock_path);
	mm->unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(mm->sock_path);
	if (mm->unix_fd < 0 ||
	    bind(mm->unix_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(mm->unix_fd, 64) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s (is run_dir "
			 "%s there and writable?)", mm->sock_path,
			 strerror(errno), mm->cfg.run_dir);
		return -errno;
	}
	chmod(mm->sock_path, 0666); /* who may do what: by SO_PEERCRED */
	qb_loop_poll_add(mm->loop, QB_LOOP_MED, mm->unix_fd, POLLIN, mm,
			 on_accept);
	mm->tcp_fd = -1;
	if (mm->host->listen[0]) {
		char host[ST_ADDR_MAX], *port;
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_PASSIVE }, *ai;
		int one = 1;

		strcpy(host, mm->host->listen);
		port = strrchr(host, ':');
		if (!port) {
			snprintf(err, errlen, "%s: [manager %s] listen = %s: "
				 "want HOST:PORT", mm->cfg.path,
				 mm->host->name, mm->host->listen);
			return -STORM_ECONFIG;
		}
		*port++ = '\0';
		if (getaddrinfo(host, port, &hints, &ai)) {
			snprintf(err, errlen, "cannot resolve %s",
				 mm->host->listen);
			return -STORM_ECONFIG;
		}
		mm->tcp_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC,
				    0);
		setsockopt(mm->tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one,
			   sizeof(one));
		if (mm->tcp_fd < 0 ||
		    bind(mm->tcp_fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    listen(mm->tcp_fd, 64) < 0) {
			snprintf(err, errlen, "cannot listen on %s: %s",
				 mm->host->listen, strerror(errno));
			freeaddrinfo(ai);
			return -errno;
		}
		freeaddrinfo(ai);
		qb_loop_poll_add(mm->loop, QB_LOOP_MED, mm->tcp_fd, POLLIN,
				 mm, on_accept);
	}
	return 0;
}

void mmd_close_listeners(struct mmd *mm)
{
	if (mm->unix_fd >= 0) {
		close(mm->unix_fd);
		unlink(mm->sock_path);
	}
	if (mm->tcp_fd >= 0)
		close(mm->tcp_fd);
}

void mmd_client_free_all(struct mmd *mm)
{
	while (mm->clients)
		client_drop(mm, mm->clients);
}

/* Drop clients whose stream ended (called each slice). */
void mmd_client_reap(struct mmd *mm)
{
	for (struct mmd_client *c = mm->clients, *next; c; c = next) {
		next = c->next;
		if (c->closing && !c->watch_job && !c->wait_up &&
		    !c->wait_job && !c->out_len)
			client_drop(mm, c);
	}
}
