/*
 * cmd_nodes.c — `stormctl nodes`: one row per compute node as the manager
 * sees it (its view of who is up is the one that schedules), with what
 * MOLAR placement weighs: failures seen, service time observed, and the
 * observed MTTF (service time per failure + 1).
 */
#include <stdio.h>

#include "commands.h"

int sc_cmd_nodes(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args)
{
	static const char *const cols[] = { ">ID", "NAME", "STATE", ">CPUS",
					    ">USED", ">FAILURES", ">SERVICE",
					    ">MTTF", "REASON" };
	json_t *req = json_object(), *reply, *nodes, *n;
	sc_table_t *t;
	size_t i;

	(void)args;
	if (req)
		json_object_set_new(req, "op", json_string("nodes"));
	reply = sc_call_or_die(ctx, cmd->name, req);
	nodes = sc_jarray(reply, "nodes");
	if (!nodes)
		sc_die(SC_EXIT_PROTO, "%s: the manager at %s sent no node list",
		       cmd->name, ctx->c.endpoint);
	if (ctx->json) {
		sc_print_json(reply);
		json_decref(reply);
		return SC_EXIT_OK;
	}
	t = sc_table_new(9, cols);
	json_array_foreach(nodes, i, n) {
		char id[24], cpus[24], used[24], fails[24], svc[24], mttf[24];
		const char *cells[9];

		snprintf(id, sizeof(id), "%lld",
			 (long long)sc_jint(n, "id", -1));
		snprintf(cpus, sizeof(cpus), "%lld",
			 (long long)sc_jint(n, "cpus", 0));
		snprintf(used, sizeof(used), "%lld",
			 (long long)sc_jint(n, "used", 0));
		snprintf(fails, sizeof(fails), "%lld",
			 (long long)sc_jint(n, "failures", 0));
		cells[0] = id;
		cells[1] = sc_jstr(n, "name", "?");
		cells[2] = sc_jstr(n, "state", "?");
		cells[3] = cpus;
		cells[4] = used;
		sc_fmt_span(sc_jint(n, "service_ms", -1), svc, sizeof(svc));
		sc_fmt_span(sc_jint(n, "mttf_ms", -1), mttf, sizeof(mttf));
		cells[5] = fails;
		cells[6] = svc;
		cells[7] = mttf;
		cells[8] = sc_jstr(n, "reason", "");
		sc_table_row(t, cells);
	}
	sc_table_print(t);
	json_decref(reply);
	return SC_EXIT_OK;
}
