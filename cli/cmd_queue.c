/*
 * cmd_queue.c — `stormctl queue [-a]`: the manager's job list as a table
 * (or its reply as JSON).  The manager filters: "all": false asks only for
 * jobs that have not ended, so a long history costs nothing here.  A job
 * holding PEs shows its matrix row; a pending one when it is expected to
 * start (the first page's first pending jobs: the manager replays its
 * scheduler with every job running to its time limit) and, as REASON,
 * why it waits.  With -a, the jobs retention moved out of the state come
 * first, from the job history (the most recent HISTORY_MAX of them).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#define NCOLS 10
#define HISTORY_MAX 1000

static void job_row(sc_table_t *t, const json_t *job, int64_t now)
{
	char id[24], user[64], ranks[24], elapsed[32], hosts[256], row[24];
	char starts[32];
	int64_t start = sc_jint(job, "start_ms", 0);
	int64_t end = sc_jint(job, "end_ms", 0);
	const json_t *names = json_object_get(job, "node_names");
	const char *state = sc_jstr(job, "state", "?");
	const char *cells[NCOLS];

	snprintf(id, sizeof(id), "%lld", (long long)sc_jint(job, "id", -1));
	sc_fmt_user(sc_jint(job, "uid", -1), user, sizeof(user));
	snprintf(ranks, sizeof(ranks), "%lld",
		 (long long)sc_jint(job, "ranks", 0));
	if (start > 0)
		sc_fmt_elapsed((end > 0 ? end : now) - start, elapsed,
			       sizeof(elapsed));
	else
		snprintf(elapsed, sizeof(elapsed), "-");
	if (sc_jint(job, "width", 0) > 0)
		snprintf(row, sizeof(row), "%lld",
			 (long long)sc_jint(job, "row", 0));
	else
		snprintf(row, sizeof(row), "-");
	if (!strcmp(state, "PENDING"))
		sc_fmt_until(sc_jint(job, "expected_start_ms", 0), now, starts,
			     sizeof(starts));
	else
		snprintf(starts, sizeof(starts), "-");
	cells[0] = id;
	cells[1] = sc_jstr(job, "name", "?");
	cells[2] = user;
	cells[3] = state;
	cells[4] = ranks;
	sc_fmt_hostlist(names, hosts, sizeof(hosts));
	cells[5] = hosts[0] ? hosts : "-";
	cells[6] = row;
	cells[7] = elapsed;
	cells[8] = starts;
	cells[9] = sc_jstr(job, "reason", "");
	sc_table_row(t, cells);
}

int sc_cmd_queue(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args)
{
	static const char *const cols[NCOLS] = {
		">JOBID", "NAME", "USER", "STATE", ">RANKS", "NODES", ">ROW",
		">TIME", "START", "REASON"
	};
	bool all = false;
	json_t *req = NULL, *reply, *jobs, *job;
	sc_table_t *t;
	int64_t now = sc_now_ms();
	size_t i;

	for (int k = 0; k < args->nopts; k++)
		if (args->opts[k].id == 'a')
			all = true;
	json_decref(req);
	/* page by page ("next": where the next page starts) */
	reply = json_pack("{s:b, s:[]}", "ok", 1, "jobs");
	jobs = sc_jarray(reply, "jobs");
	if (all) {
		/* oldest first, as the state's jobs follow in id order */
		json_t *h = sc_call_or_die(ctx, cmd->name, json_pack(
			"{s:s, s:i}", "op", "history", "limit", HISTORY_MAX));
		json_t *hj = sc_jarray(h, "jobs");

		for (size_t k = json_array_size(hj); k > 0; k--)
			json_array_append(jobs, json_array_get(hj, k - 1));
		json_decref(h);
	}
	for (json_int_t from = 1; from > 0;) {
		json_t *page, *r = json_pack("{s:s, s:b, s:I}", "op", "queue",
					     "all", all, "from", from);

		page = sc_call_or_die(ctx, cmd->name, r);
		if (!sc_jarray(page, "jobs"))
			sc_die(SC_EXIT_PROTO, "%s: the manager at %s sent no "
			       "job list", cmd->name, ctx->c.endpoint);
		json_array_extend(jobs, sc_jarray(page, "jobs"));
		from = sc_jint(page, "next", 0);
		json_decref(page);
	}
	if (ctx->json) {
		sc_print_json(reply);
	} else {
		t = sc_table_new(NCOLS, cols);
		json_array_foreach(jobs, i, job)
			job_row(t, job, now);
		sc_table_print(t);
	}
	json_decref(reply);
	return SC_EXIT_OK;
}
