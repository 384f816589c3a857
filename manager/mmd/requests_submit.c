/*
 * requests_submit.c — "run" and "submit": the job specification from the
 * request, the job's inputs as the client hands them over (inputs.h),
 * their copies on the other replicas (push.h), and the proposal once a
 * majority holds them.  Also a peer's copy arriving here (inputs_put).  Apart from requests.c, which
 * dispatches every request, because the inputs' life (descriptors, INPUT
 * frames, the workers' results, settling) is a subject of its own.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "requests.h"
#include "requests_int.h"

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

/* ---- a job's inputs (inputs.h) ------------------------------------------- */

static void set_link(struct mmd_requests *rq, struct mmd_input_set *s)
{
	s->next = rq->sets;
	rq->sets = s;
}

/* The set being received on connection conn, unlinked; NULL if none. */
struct mmd_input_set *mmd_requests_set_take(struct mmd_requests *rq,
					     uint64_t conn)
{
	struct mmd_input_set **pp = &rq->sets, *s;

	while (*pp && (*pp)->conn != conn)
		pp = &(*pp)->next;
	if ((s = *pp)) {
		*pp = s->next;
		s->next = NULL;
	}
	return s;
}

static void inputs_refused(struct mmd_client *c, int rc, const char *why)
{
	qb_log(LOG_NOTICE, "uid %u refused: %s", c->uid, why);
	mmd_client_reply_err(c, rc, "%s", why);
}

/* The set s is read and stored: copied to the other replicas first
 * (push.h) when there are any, then proposed. */
static void inputs_ready(struct mmd_requests *rq, struct mmd_client *c,
			 struct mmd_input_set *s)
{
	if (!mmd_push_wanted(&rq->push)) {
		mmd_requests_submit(rq, c, s->req, s->run, s);
		return;
	}
	if (mmd_push_queue(&rq->push, s)) {
		mmd_client_reply_err(c, EAGAIN, "manager %s: %u jobs' inputs "
				     "wait to be copied to the other replicas: "
				     "try again", rq->host->name,
				     MMD_PUSH_QUEUE);
		mmd_inputs_free(&rq->inputs, s);
	}
}

/* The request announces its inputs: descriptors that came with it (unix,
 * "fds": N) or bytes that follow it (TCP, "inputs": [{"size", "mode"},
 * ...]).  Begin taking them: 1 (the request goes on when they are in),
 * -1 (refused and answered).  A request without them is refused: the
 * manager never opens a user's path itself (docs/security.md §2). */
static int inputs_begin(struct mmd_requests *rq, struct mmd_client *c,
			json_t *req, int run, const mm_job_spec_t *spec)
{
	json_t *fdsj = json_object_get(req, "fds");
	json_t *ins = json_object_get(req, "inputs");
	uint32_t n = 1 + spec->nfiles;
	const char **names;
	struct mmd_input_set *s;
	char why[600];
	int rc;

	if (!fdsj && !ins) {
		inputs_refused(c, EINVAL, c->nfds ?
			       "request: descriptors came without \"fds\" "
			       "naming them (docs/protocol.md 5.1)" :
			       "request: the program and files must come with "
			       "it, as descriptors (\"fds\", unix socket) or "
			       "bytes (\"inputs\", TCP; docs/protocol.md "
			       "5.1): the manager opens no path for a user. "
			       "Use a stormctl of this version");
		return -1;
	}
	if (fdsj && c->tcp) {
		inputs_refused(c, EINVAL, "request: \"fds\" over TCP: "
			       "descriptors pass only on the unix socket; "
			       "send the bytes (\"inputs\", INPUT frames)");
		return -1;
	}
	if (ins && !c->tcp) {
		inputs_refused(c, EINVAL, "request: \"inputs\" on the unix "
			       "socket: pass the open files as descriptors "
			       "(\"fds\", SCM_RIGHTS)");
		return -1;
	}
	if (n > MMD_INPUTS_MAX) {
		snprintf(why, sizeof(why), "request: %u inputs (the program "
			 "and %u files): at most %u; put the files in an "
			 "archive", n, spec->nfiles, MMD_INPUTS_MAX);
		inputs_refused(c, E2BIG, why);
		return -1;
	}
	if (fdsj && (!json_is_integer(fdsj) ||
		     json_integer_value(fdsj) != (json_int_t)n ||
		     c->nfds != n || c->fds_over)) {
		snprintf(why, sizeof(why), "request: \"fds\" must be the "
			 "number of inputs, %u (the program, then each "
			 "file), and that many descriptors must come with "
			 "it (%u%s came)", n, c->nfds,
			 c->fds_over ? " or more" : "");
		inputs_refused(c, EINVAL, why);
		return -1;
	}
	if (ins && (!json_is_array(ins) || json_array_size(ins) != n)) {
		snprintf(why, sizeof(why), "request: \"inputs\" must be an "
			 "array of %u objects (the program, then each file)",
			 n);
		inputs_refused(c, EINVAL, why);
		return -1;
	}
	if (!(names = calloc(n, sizeof(char *)))) {
		mmd_client_reply_err(c, ENOMEM, "out of memory");
		return -1;
	}
	names[0] = spec->argv[0];
	for (uint32_t k = 1; k < n; k++)
		names[k] = spec->files[k - 1];
	if (fdsj) {
		int *fds = malloc(n * sizeof(int));

		if (fds) {
			memcpy(fds, c->fds, n * sizeof(int));
			c->nfds = 0; /* the set's now */
		}
		s = fds ? mmd_inputs_new(&rq->inputs, c->id, n, fds, names)
			: NULL;
	} else {
		s = mmd_inputs_new(&rq->inputs, c->id, n, NULL, names);
	}
	free(names);
	if (!s) {
		mmd_client_reply_err(c, ENOMEM, "out of memory");
		return -1;
	}
	s->req = json_incref(req);
	s->run = run;
	if (fdsj) {
		if ((rc = mmd_inputs_read(&rq->inputs, s))) {
			if (rc == -EAGAIN)
				mmd_client_reply_err(c, EAGAIN, "manager %s: "
					"%u jobs' inputs wait to be read: "
					"try again", rq->host->name,
					MMD_INPUTS_QUEUE);
			else
				mmd_client_reply_err(c, rc, "%s", s->err);
			mmd_inputs_free(&rq->inputs, s);
			return -1;
		}
		return 1;
	}
	/* TCP: sizes checked against the cap before a byte is kept */
	{
		uint64_t sum = 0;

		for (uint32_t k = 0; k < n; k++) {
			json_t *o = json_array_get(ins, k);
			json_t *sz = json_object_get(o, "size");
			json_t *md = json_object_get(o, "mode");

			if (!json_is_integer(sz) || !json_is_integer(md) ||
			    json_integer_value(sz) < 0 ||
			    json_integer_value(md) < 0 ||
			    json_integer_value(md) > 0777) {
				snprintf(why, sizeof(why), "request: input %u "
					 "(%s) needs \"size\" (bytes, not "
					 "negative) and \"mode\" (0 to 0777)",
					 k, s->names[k]);
				inputs_refused(c, EINVAL, why);
				mmd_inputs_free(&rq->inputs, s);
				return -1;
			}
			s->sizes[k] = (uint64_t)json_integer_value(sz);
			s->modes[k] = (uint32_t)json_integer_value(md);
			if (s->sizes[k] > rq->inputs.cap ||
			    (sum += s->sizes[k]) > rq->inputs.cap) {
				snprintf(why, sizeof(why), "the job's inputs "
					 "pass the cap of %u MiB per job "
					 "(max_input_mib in the manager's "
					 "configuration) at %s: stage less (or "
					 "larger files another way), or ask "
					 "the administrator to raise "
					 "max_input_mib", rq->inputs.cap_mib,
					 s->names[k]);
				inputs_refused(c, EFBIG, why);
				mmd_inputs_free(&rq->inputs, s);
				return -1;
			}
		}
	}
	if (mmd_inputs_recv_begin(&rq->inputs, s)) {
		mmd_client_reply_err(c, s->rc, "%s", s->err);
		mmd_inputs_free(&rq->inputs, s);
		return -1;
	}
	if (!s->left) { /* every input empty: stored already */
		inputs_ready(rq, c, s);
		return 1;
	}
	c->input_left = s->left;
	set_link(rq, s);
	/* checked: the client may send them (docs/protocol.md 2.7) */
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack("{s:b, s:s}", "ok",
							  1, "inputs",
							  "send"));
	c->inflight = 1; /* the request's own answer is still due */
	return 1;
}

void mmd_requests_input(struct mmd_requests *rq, struct mmd_client *c,
			const uint8_t *p, uint32_t len)
{
	struct mmd_input_set *s = mmd_requests_set_take(rq, c->id);

	if (!s) { /* clients.c lets no INPUT frame through without one */
		c->closing = 1;
		return;
	}
	if (!mmd_inputs_recv(&rq->inputs, s, p, len)) {
		set_link(rq, s);
		return;
	}
	if (s->put) { /* a peer's copy (inputs_put) */
		if (s->rc) {
			qb_log(LOG_WARNING, "inputs_put: %s", s->err);
			mmd_client_reply_err(c, -s->rc, "inputs_put: %s",
					     s->err);
		} else {
			mmd_client_send_json(c, ST_FRAME_REPLY,
					     json_pack("{s:b}", "ok", 1));
		}
		mmd_inputs_free(&rq->inputs, s);
		return;
	}
	if (s->rc) {
		inputs_refused(c, s->rc, s->err);
		mmd_inputs_free(&rq->inputs, s);
		return;
	}
	inputs_ready(rq, c, s);
}

void mmd_requests_inputs_done(struct mmd_requests *rq)
{
	struct mmd_input_set *s;

	while (mmd_inputs_next(&rq->inputs, &s)) {
		struct mmd_client *c = mmd_clients_find(rq->clients, s->conn);

		if (!c) {
			mmd_inputs_free(&rq->inputs, s); /* gone meanwhile */
		} else if (s->rc) {
			inputs_refused(c, s->rc, s->err);
			mmd_inputs_free(&rq->inputs, s);
		} else {
			inputs_ready(rq, c, s);
		}
	}
}

void mmd_requests_pushed(struct mmd_requests *rq)
{
	struct mmd_input_set *s;

	while (mmd_push_next(&rq->push, &s)) {
		struct mmd_client *c = mmd_clients_find(rq->clients, s->conn);

		if (!c) {
			mmd_inputs_free(&rq->inputs, s); /* gone meanwhile */
		} else if (s->rc) {
			/* nothing was proposed: the client may try again */
			mmd_client_reply_err(c, EAGAIN, "%s", s->err);
			mmd_inputs_free(&rq->inputs, s);
		} else {
			mmd_requests_submit(rq, c, s->req, s->run, s);
		}
	}
}

/* "inputs_put": for replicas only (root) — a peer copies a blob of a
 * job it is about to propose (push.h).  {"have": true} if the blob is
 * here (its grace starts again), else {"inputs": "send"}: its bytes
 * follow in INPUT frames, are hashed as they come and kept only if they
 * hash to the name; then {"ok": true}. */
void mmd_requests_inputs_put(struct mmd_requests *rq, struct mmd_client *c,
			     json_t *req)
{
	const char *cluster = json_string_value(json_object_get(req,
								"cluster"));
	const char *hex = json_string_value(json_object_get(req, "sha256"));
	json_t *sz = json_object_get(req, "size");
	const char *names[1] = { "a peer's blob" };
	uint8_t sha[MM_INPUT_SHA256_BYTES];
	struct mmd_input_set *s;

	if (c->uid != 0) {
		mmd_client_reply_err(c, EPERM, "inputs_put: for replicas "
				     "only (root)");
		return;
	}
	if (!cluster || strcmp(cluster, rq->cfg->cluster)) {
		mmd_client_reply_err(c, EINVAL, "inputs_put: from cluster "
				     "\"%.64s\", this is \"%s\"",
				     cluster ? cluster : "", rq->cfg->cluster);
		return;
	}
	if (mmd_blob_parse(hex, sha) || !json_is_integer(sz) ||
	    json_integer_value(sz) < 0 ||
	    (uint64_t)json_integer_value(sz) > rq->inputs.cap) {
		mmd_client_reply_err(c, EINVAL, "inputs_put: sha256 (64 "
				     "lower-case hex digits) and size (0 to "
				     "the cap, %u MiB) are needed",
				     rq->inputs.cap_mib);
		return;
	}
	if (mmd_blob_have(&rq->inputs, sha, (uint64_t)json_integer_value(sz))) {
		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
			"{s:b, s:b}", "ok", 1, "have", 1));
		return;
	}
	if (!(s = mmd_inputs_new(&rq->inputs, c->id, 1, NULL, names))) {
		mmd_client_reply_err(c, ENOMEM, "out of memory");
		return;
	}
	s->put = 1;
	memcpy(s->claimed, sha, sizeof(sha));
	s->sizes[0] = (uint64_t)json_integer_value(sz);
	s->modes[0] = 0600;
	if (mmd_inputs_recv_begin(&rq->inputs, s)) {
		mmd_client_reply_err(c, -s->rc, "inputs_put: %s", s->err);
		mmd_inputs_free(&rq->inputs, s);
		return;
	}
	if (!s->left) { /* empty: stored already */
		mmd_client_send_json(c, ST_FRAME_REPLY, json_pack("{s:b}",
								  "ok", 1));
		mmd_inputs_free(&rq->inputs, s);
		return;
	}
	c->input_left = s->left;
	set_link(rq, s);
	mmd_client_send_json(c, ST_FRAME_REPLY, json_pack(
		"{s:b, s:s}", "ok", 1, "inputs", "send"));
	c->inflight = 1; /* the answer once the bytes are in is still due */
}

/* set: the request's inputs, in (NULL: not taken yet). */
void mmd_requests_submit(struct mmd_requests *rq, struct mmd_client *c,
			 json_t *req, int run, struct mmd_input_set *set)
{
	json_t *job = json_object_get(req, "job");
	mm_job_spec_t spec = { 0 };
	/* the caps of this replica's configuration travel in the op: every
	 * replica admits or refuses alike */
	mm_op_t op = { .code = MM_OP_SUBMIT_CAPPED, .spec = &spec,
		       .max_pending = rq->cfg->max_pending_jobs,
		       .max_pending_user = rq->cfg->max_pending_per_user,
		       .max_state_bytes = (uint64_t)rq->cfg->state_budget_mib
					  << 20 };
	mm_result_t res;
	const char **argv = NULL, **env = NULL, **files = NULL;
	mm_input_t *inputs = NULL;
	json_int_t ranks = 1, limit = 0, mem = 0;

	if (!json_is_object(job)) {
		mmd_client_reply_err(c, EINVAL, "request: \"job\" must be an object");
		goto out;
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
	if (json_object_get(job, "mem_bytes"))
		mem = json_integer_value(json_object_get(job, "mem_bytes"));
	if (json_object_get(job, "mpi")) {
		const char *mpi = json_string_value(json_object_get(job,
								    "mpi"));

		if (!mpi || (strcmp(mpi, "none") && strcmp(mpi, "bcs") &&
			     strcmp(mpi, "pmi1") && strcmp(mpi, "pmix"))) {
			mmd_client_reply_err(c, EINVAL, "request: \"mpi\" "
					     "must be \"none\", \"bcs\", "
					     "\"pmi1\" or \"pmix\"");
			goto out;
		}
		spec.mpi = !strcmp(mpi, "bcs") ? MM_MPI_BCS :
			   !strcmp(mpi, "pmi1") ? MM_MPI_PMI1 :
			   !strcmp(mpi, "pmix") ? MM_MPI_PMIX : MM_MPI_NONE;
	}
	if (json_object_get(job, "bcs_order")) {
		const char *o = json_string_value(json_object_get(job,
								  "bcs_order"));

		if (!o || (strcmp(o, "deterministic") &&
			   strcmp(o, "arrival")) || spec.mpi != MM_MPI_BCS) {
			mmd_client_reply_err(c, EINVAL, "request: "
					     "\"bcs_order\" must be "
					     "\"deterministic\" or \"arrival\", "
					     "with \"mpi\": \"bcs\"");
			goto out;
		}
		if (!strcmp(o, "arrival"))
			spec.mpi = MM_MPI_BCS_ARRIVAL;
	}
	if (json_object_get(job, "checkpoint_s")) {
		json_t *cs = json_object_get(job, "checkpoint_s");

		if (json_is_string(cs) && !strcmp(json_string_value(cs),
						  "auto"))
			spec.ckpt_every_s = MM_CKPT_AUTO;
		else if (json_is_integer(cs) && json_integer_value(cs) >= 1 &&
			 json_integer_value(cs) <= MM_CKPT_EVERY_MAX)
			spec.ckpt_every_s = (uint32_t)json_integer_value(cs);
		else {
			mmd_client_reply_err(c, EINVAL, "request: "
					     "\"checkpoint_s\" must be 1 to %u "
					     "(seconds between checkpoints) or "
					     "\"auto\"", MM_CKPT_EVERY_MAX);
			goto out;
		}
	}
	if (json_object_get(job, "requeue")) {
		if (!json_is_boolean(json_object_get(job, "requeue"))) {
			mmd_client_reply_err(c, EINVAL, "request: \"requeue\" "
					     "must be true or false");
			goto out;
		}
		spec.requeue = json_is_true(json_object_get(job, "requeue"));
	}
	/* the shape: whole numbers within the machine's bounds (submit.c
	 * checks them against the nodes) */
	{
		static const struct {
			const char *key;
			size_t off;
			json_int_t lo, hi;
		} shape[] = {
			{ "cpus_per_task",
			  offsetof(mm_job_spec_t, cpus_per_task), 1,
			  MM_CPUS_MAX },
			{ "tasks_per_node",
			  offsetof(mm_job_spec_t, tasks_per_node), 1,
			  MM_CPUS_MAX },
			{ "node_count", offsetof(mm_job_spec_t, node_count),
			  1, ST_MAX_NODES },
		};

		for (size_t k = 0; k < sizeof(shape) / sizeof(*shape); k++) {
			json_t *v = json_object_get(job, shape[k].key);

			if (!v)
				continue;
			if (!json_is_integer(v) ||
			    json_integer_value(v) < shape[k].lo ||
			    json_integer_value(v) > shape[k].hi) {
				mmd_client_reply_err(c, EINVAL, "request: "
						     "\"%s\" must be %lld to "
						     "%lld", shape[k].key,
						     (long long)shape[k].lo,
						     (long long)shape[k].hi);
				goto out;
			}
			*(uint32_t *)((char *)&spec + shape[k].off) =
				(uint32_t)json_integer_value(v);
		}
		if (json_object_get(job, "cpu_bind")) {
			const char *b = json_string_value(
				json_object_get(job, "cpu_bind"));

			if (!b || (strcmp(b, "auto") && strcmp(b, "none"))) {
				mmd_client_reply_err(c, EINVAL, "request: "
						     "\"cpu_bind\" must be "
						     "\"auto\" or \"none\"");
				goto out;
			}
			spec.cpu_bind = !strcmp(b, "none") ? MM_BIND_NONE
							   : MM_BIND_AUTO;
		}
	}
	/* a dependency {"type": "afterok", "job": N} and an array
	 * {"first", "step", "count", "max"} (submit.c checks them against
	 * the state) */
	if (json_object_get(job, "dependency")) {
		static const char *const types[] = {
			[MM_DEP_AFTEROK] = "afterok",
			[MM_DEP_AFTERANY] = "afterany",
			[MM_DEP_AFTERNOTOK] = "afternotok",
		};
		json_t *d = json_object_get(job, "dependency");
		const char *t = json_string_value(json_object_get(d, "type"));
		json_t *id = json_object_get(d, "job");

		for (uint8_t k = 1; t && k <= MM_DEP_MAX; k++)
			if (!strcmp(t, types[k]))
				spec.dep_type = k;
		if (!spec.dep_type || !json_is_integer(id) ||
		    json_integer_value(id) < 1 ||
		    json_integer_value(id) > UINT32_MAX) {
			mmd_client_reply_err(c, EINVAL, "request: "
					     "\"dependency\" must be {\"type\": "
					     "afterok, afterany or afternotok, "
					     "\"job\": a job id}");
			goto out;
		}
		spec.dep_job = (uint32_t)json_integer_value(id);
	}
	if (json_object_get(job, "array")) {
		json_t *a = json_object_get(job, "array");
		static const char *const keys[] = { "first", "step", "count",
						    "max" };
		uint32_t *f[] = { &spec.array_first, &spec.array_step,
				  &spec.array_count, &spec.array_max };

		for (size_t k = 0; k < 4; k++) {
			json_t *v = json_object_get(a, keys[k]);

			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > UINT32_MAX ||
			    (k == 2 && (json_integer_value(v) < 1 ||
					json_integer_value(v) > MM_ARRAY_MAX))) {
				mmd_client_reply_err(c, EINVAL, "request: "
						     "\"array\" must have "
						     "first, step, count (1 to "
						     "%u) and max",
						     MM_ARRAY_MAX);
				goto out;
			}
			*f[k] = (uint32_t)json_integer_value(v);
		}
		if (run) {
			mmd_client_reply_err(c, EINVAL, "request: an array is "
					     "submitted, not run (stormctl "
					     "submit --array)");
			goto out;
		}
	}
	/* a batch allocation {"alloc": true} (submitted, its script rank
	 * 0) or a step of one {"parent": N} (step.c checks it) */
	if (json_object_get(job, "alloc")) {
		if (!json_is_boolean(json_object_get(job, "alloc")) || run) {
			mmd_client_reply_err(c, EINVAL, "request: \"alloc\" "
					     "must be true or false, and only "
					     "in a submit (stormctl batch)");
			goto out;
		}
		spec.alloc = json_is_true(json_object_get(job, "alloc"));
	}
	if (json_object_get(job, "parent")) {
		json_t *v = json_object_get(job, "parent");

		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > UINT32_MAX) {
			mmd_client_reply_err(c, EINVAL, "request: \"parent\" "
					     "must be a job id (the "
					     "allocation a step runs in)");
			goto out;
		}
		spec.parent = (uint32_t)json_integer_value(v);
	}
	argv = strs(json_object_get(job, "argv"), &spec.argc);
	env = strs(json_object_get(job, "env"), &spec.envc);
	files = strs(json_object_get(job, "files"), &spec.nfiles);
	if (!argv || !env || !files) {
		mmd_client_reply_err(c, EINVAL, "request: argv, env and files must be "
			  "arrays of strings");
		goto out;
	}
	if (ranks < 1 || ranks > 1000000 || limit < 0 || mem < 0) {
		mmd_client_reply_err(c, EINVAL, "request: ranks must be 1 to 1000000, "
			  "time_limit_ms and mem_bytes not negative");
		goto out;
	}
	/* the inputs' digests (and any limit) go in SUBMIT_INPUTS */
	spec.mem_bytes = (uint64_t)mem;
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
	if (!set && spec.argc) {
		inputs_begin(rq, c, req, run, &spec);
		goto out; /* taking them, or refused */
	}
	if (set) {
		if (!(inputs = calloc(set->n, sizeof(*inputs)))) {
			mmd_client_reply_err(c, ENOMEM, "out of memory");
			goto out;
		}
		for (uint32_t k = 0; k < set->n; k++) {
			memcpy(inputs[k].sha256, set->sha[k],
			       MM_INPUT_SHA256_BYTES);
			inputs[k].size = set->sizes[k];
			inputs[k].mode = set->modes[k];
		}
		spec.ninputs = set->n;
		spec.inputs = inputs;
		/* a job without checkpoints goes as before: a replica that
		 * predates SUBMIT_CKPT reads it */
		op.code = spec.alloc || spec.parent ? MM_OP_SUBMIT_STEP :
			  spec.cpus_per_task > 1 || spec.tasks_per_node ||
			  spec.node_count || spec.cpu_bind ||
			  spec.dep_type || spec.array_count ?
			  MM_OP_SUBMIT_SHAPE :
			  spec.ckpt_every_s || spec.requeue ?
			  MM_OP_SUBMIT_CKPT : MM_OP_SUBMIT_INPUTS;
	}
	if (mmd_repl_propose_client(rq->repl, c, c->client_key, c->seq, c->uid,
				    c->gid, run ? MMD_REQ_RUN : MMD_REQ_SUBMIT,
				    &op, &res)) {
		mmd_client_reply_err(c, res.rc, "%s", res.err);
		goto out;
	}
out:
	/* the blobs stay in the store: the job names them */
	if (set)
		mmd_inputs_free(&rq->inputs, set);
	free(inputs);
	free(argv);
	free(env);
	free(files);
}
