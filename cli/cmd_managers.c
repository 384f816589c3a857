/*
 * cmd_managers.c — `stormctl managers`: the manager replicas as the
 * answering one sees them (group membership, sync, strobe master, applied
 * index) and its quorum — what an administrator checks during a rolling
 * restart or after a network cut.
 */
#include <stdio.h>

#include "commands.h"

int sc_cmd_managers(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		    const struct sc_args *args)
{
	static const char *const cols[] = { "NAME", "STATE", "ROLE",
					    "APPLIED", "LISTEN" };
	json_t *req = json_object(), *reply, *a, *m;
	sc_table_t *t;
	size_t i;

	(void)args;
	if (req)
		json_object_set_new(req, "op", json_string("managers"));
	reply = sc_call_or_die(ctx, cmd->name, req);
	if (ctx->json) {
		sc_print_json(reply);
		json_decref(reply);
		return SC_EXIT_OK;
	}
	t = sc_table_new(5, cols);
	a = sc_jarray(reply, "managers");
	json_array_foreach(a, i, m) {
		char applied[32], name[96];
		const char *row[5];

		snprintf(name, sizeof(name), "%s%s", sc_jstr(m, "name", "?"),
			 sc_jbool(m, "self", false) ? " (*)" : "");
		snprintf(applied, sizeof(applied), "%lld",
			 (long long)sc_jint(m, "applied", 0));
		row[0] = name;
		row[1] = !sc_jbool(m, "member", false) ? "absent" :
			 sc_jbool(m, "synced", false) ? "synced" : "joining";
		row[2] = sc_jbool(m, "master", false) ? "strobe master" : "-";
		row[3] = sc_jbool(m, "member", false) ? applied : "-";
		row[4] = sc_jstr(m, "listen", "");
		if (!row[4][0])
			row[4] = "-";
		sc_table_row(t, row);
	}
	sc_table_print(t);
	printf("answered by %s: %s, %s, view %lld, applied %lld "
	       "(durable %lld)\n", sc_jstr(reply, "answered_by", "?"),
	       sc_jbool(reply, "quorate", false) ? "quorate" : "NO QUORUM",
	       sc_jbool(reply, "synced", false) ? "synced" : "not synced",
	       (long long)sc_jint(reply, "view", 0),
	       (long long)sc_jint(reply, "applied", 0),
	       (long long)sc_jint(reply, "durable", 0));
	json_decref(reply);
	return SC_EXIT_OK;
}
