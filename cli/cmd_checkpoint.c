/*
 * cmd_checkpoint.c — `stormctl checkpoint JOB`: asks for a checkpoint of a
 * running job and, unless --no-wait, follows it until the epoch is
 * committed in the replicated catalog (every node wrote its images) or
 * aborted (the reason said), polling `show` through the failover client,
 * so a manager's death on the way changes nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "commands.h"

/* epoch of job in reply: 1 committed, -1 failed (why), 0 still going. */
static int settled(json_t *job, int64_t epoch, char *why, size_t whylen,
		   json_t **done)
{
	json_t *eps = json_object_get(job, "checkpoints"), *e;
	const char *err = sc_jstr(job, "checkpoint_error", "");
	char tag[32];
	size_t i;

	json_array_foreach(eps, i, e)
		if (sc_jint(e, "epoch", 0) == epoch) {
			*done = e;
			return 1;
		}
	if (sc_jint(job, "checkpoint_pending", 0) == epoch)
		return 0;
	snprintf(tag, sizeof(tag), "epoch %" PRId64 ":", epoch);
	if (!strncmp(err, tag, strlen(tag)))
		snprintf(why, whylen, "%s", err);
	else if (strcmp(sc_jstr(job, "state", ""), "RUNNING"))
		snprintf(why, whylen, "the job ended (%s) before epoch %"
			 PRId64 " was committed", sc_jstr(job, "state", "?"),
			 epoch);
	else /* committed, then dropped from the catalog (keep) */
		return 1;
	return -1;
}

int sc_cmd_checkpoint(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		      const struct sc_args *args)
{
	uint64_t id = sc_number_or_die(cmd->name, "job id", args->operands[0],
				       0, UINT32_MAX);
	json_t *req = json_object(), *reply;
	struct timespec nap = { 0, 50 * 1000000 };
	int64_t epoch, waited = 0;
	int wait = 1, requeue = 0;

	for (int k = 0; k < args->nopts; k++) {
		if (args->opts[k].id == SC_OPT_NO_WAIT)
			wait = 0;
		if (args->opts[k].id == SC_OPT_REQUEUE)
			requeue = 1;
	}
	if (req) {
		json_object_set_new(req, "op", json_string("checkpoint"));
		json_object_set_new(req, "job", json_integer((json_int_t)id));
		if (requeue)
			json_object_set_new(req, "requeue", json_true());
	}
	reply = sc_call_or_die(ctx, cmd->name, req);
	epoch = sc_jint(reply, "epoch", 0);
	if (!wait) {
		if (ctx->json)
			sc_print_json(reply);
		else
			printf("Checkpoint of job %" PRIu64 " asked for: epoch "
			       "%" PRId64 "\n", id, epoch);
		json_decref(reply);
		return SC_EXIT_OK;
	}
	json_decref(reply);
	for (;;) {
		json_t *q = json_object(), *job, *done = NULL;
		char why[512] = "";
		int s;

		if (q) {
			json_object_set_new(q, "op", json_string("show"));
			json_object_set_new(q, "job",
					    json_integer((json_int_t)id));
		}
		reply = sc_call_or_die(ctx, cmd->name, q);
		job = json_object_get(reply, "job");
		if (!json_is_object(job))
			sc_die(SC_EXIT_PROTO, "%s: the manager sent no job",
			       cmd->name);
		if ((s = settled(job, epoch, why, sizeof(why), &done)) < 0) {
			json_decref(reply);
			sc_die(SC_EXIT_FAILED, "%s: job %" PRIu64 ": %s; the "
			       "job runs on, its earlier epochs stand",
			       cmd->name, id, why);
		}
		if (s > 0) {
			if (ctx->json) {
				json_t *o = json_pack("{s:b, s:I, s:I}", "ok",
						      1, "job", (json_int_t)id,
						      "epoch",
						      (json_int_t)epoch);

				if (o && done)
					json_object_set(o, "checkpoint", done);
				sc_print_json(o);
				json_decref(o);
			} else {
				printf("Checkpointed job %" PRIu64 ": epoch %"
				       PRId64 " committed (%" PRId64 " bytes, "
				       "stopped %.1f ms)%s\n", id, epoch,
				       done ? sc_jint(done, "bytes", 0) : 0,
				       done ? json_number_value(json_object_get(
						      done, "stop_ms")) : 0.0,
				       requeue ? "; requeued" : "");
			}
			json_decref(reply);
			return SC_EXIT_OK;
		}
		json_decref(reply);
		if (waited >= ctx->c.timeout_ms)
			sc_die(SC_EXIT_FAILED, "%s: job %" PRIu64 ": epoch %"
			       PRId64 " not committed within %d ms (--timeout);"
			       " stormctl show %" PRIu64 " says how it ends",
			       cmd->name, id, epoch, ctx->c.timeout_ms, id);
		nanosleep(&nap, NULL);
		waited += 50;
	}
}
