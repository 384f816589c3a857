/*
 * cmd_history.c — `stormctl history`: jobs that ended and left the
 * replicated state after the retention, from the manager's job history,
 * like sacct: filtered by user, state, name and time range, most
 * recently ended first.  A user sees their own jobs; root and the
 * configured administrators every user's.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"

#define NCOLS 9
#define PAGE 1000

/* A time: "now", "-90s"/"-30m"/"-2h"/"-7d" (ago), "YYYY-MM-DD" or
 * "YYYY-MM-DDTHH:MM[:SS]" (local time), or milliseconds since the
 * epoch.  Dies with a usage error naming the option otherwise. */
static int64_t parse_when(const struct sc_cmd *cmd, const char *opt,
			  const char *v, int64_t now)
{
	struct tm tm = { 0 };
	const char *end;
	char *e;

	if (!strcmp(v, "now"))
		return now;
	if (v[0] == '-' && v[1]) {
		long long n = strtoll(v + 1, &e, 10);
		int64_t unit = *e == 's' ? 1000 : *e == 'm' ? 60000 :
			       *e == 'h' ? 3600000 : *e == 'd' ? 86400000 : 0;

		if (e == v + 1 || n < 0 || !unit || e[1])
			sc_usage_die(cmd, "--%s %s: want -Ns, -Nm, -Nh or -Nd "
				     "(that long ago)", opt, v);
		return now - n * unit;
	}
	if (strlen(v) >= 13 && v[4] == '-' && strspn(v, "0123456789") == 13) {
		long long ms = strtoll(v, &e, 10);

		if (!*e && ms >= 0)
			return ms;
	}
	if (strspn(v, "0123456789") == strlen(v) && *v)
		return strtoll(v, NULL, 10);
	end = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(v, "%Y-%m-%dT%H:%M", &tm);
	}
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(v, "%Y-%m-%d", &tm);
	}
	if (!end || *end)
		sc_usage_die(cmd, "--%s %s: want now, -Nh (ago), YYYY-MM-DD, "
			     "YYYY-MM-DDTHH:MM[:SS] or milliseconds since "
			     "the epoch", opt, v);
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm) * 1000;
}

static void add_states(const struct sc_cmd *cmd, json_t *states,
		       const char *v)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (strcasecmp(t, "COMPLETED") && strcasecmp(t, "FAILED") &&
		    strcasecmp(t, "CANCELLED"))
			sc_usage_die(cmd, "--state %s: the history holds "
				     "COMPLETED, FAILED and CANCELLED jobs",
				     t);
		json_array_append_new(states, json_string(t));
	}
}

static void job_row(sc_table_t *t, const json_t *job)
{
	char id[24], user[64], ranks[24], elapsed[32], hosts[256], code[16];
	char end[32];
	int64_t st = sc_jint(job, "start_ms", 0), en = sc_jint(job, "end_ms",
								0);
	const char *cells[NCOLS];

	snprintf(id, sizeof(id), "%lld", (long long)sc_jint(job, "id", -1));
	sc_fmt_user(sc_jint(job, "uid", -1), user, sizeof(user));
	snprintf(ranks, sizeof(ranks), "%lld",
		 (long long)sc_jint(job, "ranks", 0));
	if (st > 0 && en >= st)
		sc_fmt_elapsed(en - st, elapsed, sizeof(elapsed));
	else
		snprintf(elapsed, sizeof(elapsed), "-");
	sc_fmt_time(en, end, sizeof(end));
	snprintf(code, sizeof(code), "%lld",
		 (long long)sc_jint(job, "exit_code", 0));
	sc_fmt_hostlist(json_object_get(job, "node_names"), hosts,
			sizeof(hosts));
	cells[0] = id;
	cells[1] = sc_jstr(job, "name", "?");
	cells[2] = user;
	cells[3] = sc_jstr(job, "state", "?");
	cells[4] = ranks;
	cells[5] = hosts[0] ? hosts : "-";
	cells[6] = elapsed;
	cells[7] = end;
	cells[8] = code;
	sc_table_row(t, cells);
}

int sc_cmd_history(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		   const struct sc_args *args)
{
	static const char *const cols[NCOLS] = {
		">JOBID", "NAME", "USER", "STATE", ">RANKS", "NODES",
		">ELAPSED", "ENDED", ">EXIT"
	};
	int64_t now = sc_now_ms(), limit = 1000, since = -1, until = -1;
	json_t *q = json_pack("{s:s}", "op", "history"), *states = json_array();
	json_t *reply, *jobs, *job, *before = NULL;
	int backfilling = 0;
	sc_table_t *t;
	size_t i;

	for (int k = 0; k < args->nopts; k++) {
		const char *v = args->opts[k].val;

		switch (args->opts[k].id) {
		case 'u': {
			struct passwd *pw = getpwnam(v);
			uint64_t uid = pw ? pw->pw_uid :
				sc_number_or_die(cmd->name, "--user", v, 0,
						 UINT32_MAX - 1);

			json_object_set_new(q, "uid",
					    json_integer((json_int_t)uid));
			break;
		}
		case 's':
			add_states(cmd, states, v);
			break;
		case SC_OPT_NAME:
			json_object_set_new(q, "name", json_string(v));
			break;
		case 'S':
			since = parse_when(cmd, "since", v, now);
			break;
		case 'E':
			until = parse_when(cmd, "until", v, now);
			break;
		case SC_OPT_LIMIT:
			limit = (int64_t)sc_number_or_die(cmd->name, "--limit",
							  v, 1, 1000000);
			break;
		}
	}
	if (since >= 0 && until >= 0 && since > until)
		sc_usage_die(cmd, "--since is after --until: the range is "
			     "empty; give since <= until");
	if (json_array_size(states))
		json_object_set_new(q, "states", json_incref(states));
	if (since >= 0)
		json_object_set_new(q, "since_ms", json_integer(since));
	if (until >= 0)
		json_object_set_new(q, "until_ms", json_integer(until));
	json_decref(states);
	reply = json_pack("{s:b, s:[]}", "ok", 1, "jobs");
	jobs = sc_jarray(reply, "jobs");
	/* page by page ("next": where the next page starts) */
	while ((int64_t)json_array_size(jobs) < limit) {
		json_t *r = json_deep_copy(q), *page;
		int64_t want = limit - (int64_t)json_array_size(jobs);

		json_object_set_new(r, "limit", json_integer(want < PAGE ?
							     want : PAGE));
		if (before)
			json_object_set(r, "before", before);
		page = sc_call_or_die(ctx, cmd->name, r);
		if (!sc_jarray(page, "jobs"))
			sc_die(SC_EXIT_PROTO, "%s: the manager at %s sent no "
			       "job list", cmd->name, ctx->c.endpoint);
		json_array_extend(jobs, sc_jarray(page, "jobs"));
		backfilling |= sc_jbool(page, "backfilling", false);
		json_decref(before);
		before = json_incref(json_object_get(page, "next"));
		json_decref(page);
		if (!before)
			break;
	}
	json_decref(before);
	json_decref(q);
	json_object_set_new(reply, "backfilling", json_boolean(backfilling));
	if (ctx->json) {
		sc_print_json(reply);
	} else {
		t = sc_table_new(NCOLS, cols);
		json_array_foreach(jobs, i, job)
			job_row(t, job);
		sc_table_print(t);
		if (backfilling)
			fprintf(stderr, "stormctl: history: the manager at %s "
				"joined recently and is still fetching older "
				"history from its peers; ask again soon or ask "
				"another replica\n", ctx->c.endpoint);
	}
	json_decref(reply);
	return SC_EXIT_OK;
}
