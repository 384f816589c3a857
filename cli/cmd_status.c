/*
 * cmd_status.c — `stormctl status`: the cluster in a few lines, for a
 * glance or a health check (exit 0 means the manager answered).
 */
#include <stdio.h>

#include "commands.h"

int sc_cmd_status(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args)
{
	static const char *const cols[] = { "FIELD", "VALUE" };
	json_t *req = json_object(), *reply;
	sc_table_t *t;
	char slice[48], slice_us[48], epoch[48], nodes[64], jobs[64];
	const char *rows[][2] = {
		{ "cluster", NULL }, { "manager", NULL },   { "slice", slice },
		{ "slice_us", slice_us }, { "view_epoch", epoch },
		{ "nodes", nodes },  { "jobs", jobs },
	};

	(void)args;
	if (req)
		json_object_set_new(req, "op", json_string("status"));
	reply = sc_call_or_die(ctx, cmd->name, req);
	if (ctx->json) {
		sc_print_json(reply);
		json_decref(reply);
		return SC_EXIT_OK;
	}
	rows[0][1] = sc_jstr(reply, "cluster", "?");
	rows[1][1] = sc_jstr(reply, "manager", "?");
	snprintf(slice, sizeof(slice), "%lld",
		 (long long)sc_jint(reply, "slice", -1));
	snprintf(slice_us, sizeof(slice_us), "%lld",
		 (long long)sc_jint(reply, "slice_us", -1));
	snprintf(epoch, sizeof(epoch), "%lld",
		 (long long)sc_jint(reply, "view_epoch", -1));
	snprintf(nodes, sizeof(nodes), "%lld up of %lld",
		 (long long)sc_jint(reply, "nodes_up", -1),
		 (long long)sc_jint(reply, "nodes_total", -1));
	snprintf(jobs, sizeof(jobs), "%lld pending, %lld running",
		 (long long)sc_jint(reply, "jobs_pending", -1),
		 (long long)sc_jint(reply, "jobs_running", -1));
	t = sc_table_new(2, cols);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		sc_table_row(t, rows[i]);
	sc_table_print(t);
	json_decref(reply);
	return SC_EXIT_OK;
}
