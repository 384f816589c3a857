/*
 * cmd_show.c — `stormctl show JOB`: every field of one job, one per line
 * with the names aligned, and each rank's wait status decoded into words
 * (runs of equal statuses collapsed, so 4096 ranks stay one line).  A job
 * holding PEs shows its matrix row and buddy block; a pending one its
 * reason and, when the manager can tell, its expected start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

/* Join a JSON array of strings with sep; malloc'd, "-" when empty. */
static char *join(const json_t *arr, const char *sep)
{
	size_t n = 1, i;
	const json_t *v;
	char *out;

	json_array_foreach(arr, i, v)
		if (json_is_string(v))
			n += strlen(json_string_value(v)) + strlen(sep);
	out = malloc(n + 1);
	if (!out)
		sc_die(SC_EXIT_FAILED, "out of memory");
	out[0] = '\0';
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v))
			continue;
		if (out[0])
			strcat(out, sep);
		strcat(out, json_string_value(v));
	}
	if (!out[0])
		strcpy(out, "-");
	return out;
}

/* CPU time of every rank together (user + system, as sacct's TotalCPU)
 * and the largest peak RSS of any rank (MaxRSS); "-" until reported.
 * With cgroups, a node's figures count every process of the job there
 * (also those that left their rank): its CPU time and its cgroup's peak
 * memory are in its first rank's. */
static void usage_rows(const json_t *job, const json_t *usage, char *cpu,
		       size_t cpulen, char *rss, size_t rsslen)
{
	int64_t us = 0, kib = 0;
	size_t i;
	json_t *u;

	snprintf(cpu, cpulen, "-");
	snprintf(rss, rsslen, "-");
	if ((!usage || !json_array_size(usage)) &&
	    json_object_get(job, "cpu_time_us")) {
		/* a wide job in the history keeps only the totals */
		us = sc_jint(job, "cpu_time_us", 0);
		kib = sc_jint(job, "max_rss_kib", 0);
		snprintf(cpu, cpulen, "%lld.%03lld s",
			 (long long)(us / 1000000),
			 (long long)(us / 1000 % 1000));
		snprintf(rss, rsslen, "%.1f MiB (largest of %lld rank(s))",
			 (double)kib / 1024.0,
			 (long long)sc_jint(job, "ranks", 0));
		return;
	}
	if (!usage || !json_array_size(usage))
		return;
	json_array_foreach(usage, i, u) {
		int64_t k = sc_jint(u, "maxrss_kib", 0);

		us += sc_jint(u, "utime_us", 0) + sc_jint(u, "stime_us", 0);
		kib = k > kib ? k : kib;
	}
	snprintf(cpu, cpulen, "%lld.%03lld s", (long long)(us / 1000000),
		 (long long)(us / 1000 % 1000));
	snprintf(rss, rsslen, "%.1f MiB (largest of %zu rank(s))",
		 (double)kib / 1024.0, json_array_size(usage));
}

/* Its checkpoints: each committed epoch (size, stop, storage levels),
 * the one being taken, and why the last one failed. */
static void ckpt_rows(sc_table_t *t, json_t *job)
{
	json_t *eps = json_object_get(job, "checkpoints"), *e;
	char line[160], key[32];
	size_t i;

	json_array_foreach(eps, i, e) {
		snprintf(key, sizeof(key), "checkpoint");
		snprintf(line, sizeof(line), "epoch %lld: %.1f MB, stopped "
			 "%.1f ms, on %s", (long long)sc_jint(e, "epoch", 0),
			 (double)sc_jint(e, "bytes", 0) / 1e6,
			 json_number_value(json_object_get(e, "stop_ms")),
			 sc_jstr(e, "levels", "L1"));
		sc_table_row(t, (const char *const[]){ key, line });
	}
	if (sc_jint(job, "checkpoint_pending", 0)) {
		snprintf(line, sizeof(line), "epoch %lld",
			 (long long)sc_jint(job, "checkpoint_pending", 0));
		sc_table_row(t, (const char *const[]){ "checkpointing",
						       line });
	}
	if (*sc_jstr(job, "checkpoint_error", ""))
		sc_table_row(t, (const char *const[]){
			"checkpoint_error", sc_jstr(job, "checkpoint_error",
						    "") });
	if (json_is_string(json_object_get(job, "checkpoint_s")))
		snprintf(line, sizeof(line), "auto");
	else
		snprintf(line, sizeof(line), "%lld s",
			 (long long)sc_jint(job, "checkpoint_s", 0));
	if (json_object_get(job, "checkpoint_s"))
		sc_table_row(t, (const char *const[]){ "checkpoint_every",
						       line });
	if (json_is_true(json_object_get(job, "requeue")))
		sc_table_row(t, (const char *const[]){ "requeue", "yes" });
	if (sc_jint(job, "restarts", 0)) {
		if (sc_jint(job, "restore_epoch", 0))
			snprintf(line, sizeof(line), "%lld (the last from "
				 "epoch %lld)",
				 (long long)sc_jint(job, "restarts", 0),
				 (long long)sc_jint(job, "restore_epoch", 0));
		else
			snprintf(line, sizeof(line), "%lld (from the start)",
				 (long long)sc_jint(job, "restarts", 0));
		sc_table_row(t, (const char *const[]){ "restarts", line });
	}
}

int sc_cmd_show(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		const struct sc_args *args)
{
	static const char *const cols[] = { "FIELD", "VALUE" };
	uint64_t id = sc_number_or_die(cmd->name, "job id", args->operands[0],
				       0, UINT32_MAX);
	json_t *req = json_object(), *reply, *job;
	char num[8][48], user[64], submit[32], start[32], end[32], elapsed[32];
	char *argv, *names, *status;
	char row[24], block[64], until[32], expect[80], limit[32], mem[48];
	char cpu[64], rss[64];
	int64_t st, en, ex;
	sc_table_t *t;

	if (req) {
		json_object_set_new(req, "op", json_string("show"));
		json_object_set_new(req, "job", json_integer((json_int_t)id));
	}
	reply = sc_call_or_die(ctx, cmd->name, req);
	job = json_object_get(reply, "job");
	if (!json_is_object(job))
		sc_die(SC_EXIT_PROTO, "%s: the manager at %s sent no job",
		       cmd->name, ctx->c.endpoint);
	if (ctx->json) {
		sc_print_json(reply);
		json_decref(reply);
		return SC_EXIT_OK;
	}

	snprintf(num[0], sizeof(num[0]), "%lld",
		 (long long)sc_jint(job, "id", -1));
	snprintf(num[1], sizeof(num[1]), "%lld",
		 (long long)sc_jint(job, "ranks", 0));
	snprintf(num[2], sizeof(num[2]), "%lld",
		 (long long)sc_jint(job, "exit_code", 0));
	sc_fmt_user(sc_jint(job, "uid", -1), user, sizeof(user));
	sc_fmt_time(sc_jint(job, "submit_ms", 0), submit, sizeof(submit));
	st = sc_jint(job, "start_ms", 0);
	en = sc_jint(job, "end_ms", 0);
	sc_fmt_time(st, start, sizeof(start));
	sc_fmt_time(en, end, sizeof(end));
	if (st > 0)
		sc_fmt_elapsed((en > 0 ? en : sc_now_ms()) - st, elapsed,
			       sizeof(elapsed));
	else
		snprintf(elapsed, sizeof(elapsed), "-");
	if (sc_jint(job, "width", 0) > 0) {
		int64_t col = sc_jint(job, "col", 0);
		int64_t w = sc_jint(job, "width", 0);

		snprintf(row, sizeof(row), "%lld",
			 (long long)sc_jint(job, "row", 0));
		snprintf(block, sizeof(block), "[%lld,+%lld) (columns "
			 "%lld-%lld)", (long long)col, (long long)w,
			 (long long)col, (long long)(col + w - 1));
	} else {
		snprintf(row, sizeof(row), "-");
		snprintf(block, sizeof(block), "-");
	}
	ex = sc_jint(job, "expected_start_ms", -1);
	if (ex > 0) {
		size_t k;

		sc_fmt_time(ex, expect, sizeof(expect));
		sc_fmt_until(ex, sc_now_ms(), until, sizeof(until));
		k = strlen(expect);
		snprintf(expect + k, sizeof(expect) - k, " (%s)", until);
	} else if (ex == 0) {
		snprintf(expect, sizeof(expect), "unknown (it waits for jobs "
			 "without a time limit)");
	} else {
		snprintf(expect, sizeof(expect), "-");
	}
	if (sc_jint(job, "time_limit_ms", 0) > 0)
		sc_fmt_elapsed(sc_jint(job, "time_limit_ms", 0), limit,
			       sizeof(limit));
	else
		snprintf(limit, sizeof(limit), "-");
	if (sc_jint(job, "mem_bytes", 0) > 0)
		snprintf(mem, sizeof(mem), "%lld MiB per node",
			 (long long)(sc_jint(job, "mem_bytes", 0) >> 20));
	else
		snprintf(mem, sizeof(mem), "-");
	argv = join(sc_jarray(job, "argv"), " ");
	names = join(sc_jarray(job, "node_names"), ",");
	status = sc_fmt_rank_status(sc_jarray(job, "rank_status"));
	usage_rows(job, sc_jarray(job, "usage"), cpu, sizeof(cpu), rss,
		   sizeof(rss));

	t = sc_table_new(2, cols);
#define ROW(k, v) sc_table_row(t, (const char *const[]){ (k), (v) })
	ROW("id", num[0]);
	ROW("name", sc_jstr(job, "name", "?"));
	ROW("user", user);
	ROW("state", sc_jstr(job, "state", "?"));
	if (sc_jbool(job, "history", false))
		ROW("kept_in", "the job history (it left the state after "
		    "the retention)");
	ROW("reason", sc_jstr(job, "reason", ""));
	ROW("batch", sc_jbool(job, "batch", false) ? "yes" : "no");
	ROW("ranks", num[1]);
	ROW("nodes", sc_jstr(job, "nodes", "-"));
	ROW("node_names", names);
	ROW("argv", argv);
	ROW("cwd", sc_jstr(job, "cwd", "-"));
	ROW("submitted", submit);
	ROW("started", start);
	ROW("ended", end);
	ROW("elapsed", elapsed);
	ROW("row", row);
	ROW("block", block);
	ROW("expected_start", expect);
	ROW("time_limit", limit);
	ROW("mem_limit", mem);
	ROW("mpi", sc_jstr(job, "mpi", "none"));
	{
		char shape[128];

		snprintf(shape, sizeof(shape), "%lld cpu(s) per rank%s%.0lld%s"
			 "%.0lld", (long long)sc_jint(job, "cpus_per_task", 1),
			 sc_jint(job, "tasks_per_node", 0) ?
			 ", at most " : "",
			 (long long)sc_jint(job, "tasks_per_node", 0),
			 sc_jint(job, "node_count", 0) ? ", on nodes: " : "",
			 (long long)sc_jint(job, "node_count", 0));
		ROW("shape", shape);
		ROW("cpu_bind", sc_jstr(job, "cpu_bind", "cores"));
	}
	ROW("exit_code", num[2]);
	ROW("rank_status", status);
	ROW("cpu_time", cpu);
	ROW("max_rss", rss);
	ckpt_rows(t, job);
#undef ROW
	sc_table_print(t);
	free(argv);
	free(names);
	free(status);
	json_decref(reply);
	return SC_EXIT_OK;
}
