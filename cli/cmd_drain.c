/*
 * cmd_drain.c — `stormctl drain NODES --reason TEXT` and `stormctl resume
 * NODES`.  NODES names compute nodes by name (nm3, a range nm[1-4,7] as
 * Slurm writes them) or by world id (5, 2-4), comma-separated.  Every
 * name is checked against the manager's node list before the first
 * request goes out, so a typo drains nothing; then each node is asked on
 * its own and a refusal for one does not stop the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

struct want {
	uint32_t *ids;
	size_t n, cap;
};

static void want_add(struct want *w, uint32_t id)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->ids[i] == id)
			return;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		uint32_t *t = realloc(w->ids, cap * sizeof(*t));

		if (!t)
			sc_die(SC_EXIT_FAILED, "out of memory");
		w->ids = t;
		w->cap = cap;
	}
	w->ids[w->n++] = id;
}

/* The node called name in the manager's list, or -1. */
static int64_t by_name(const json_t *nodes, const char *name)
{
	size_t i;
	json_t *x;

	json_array_foreach(nodes, i, x)
		if (!strcmp(sc_jstr(x, "name", ""), name))
			return sc_jint(x, "id", -1);
	return -1;
}

static bool by_id(const json_t *nodes, int64_t id)
{
	size_t i;
	json_t *x;

	json_array_foreach(nodes, i, x)
		if (sc_jint(x, "id", -2) == id)
			return true;
	return false;
}

/* One word of NODES: a name, prefix[ranges]suffix, or ids a-b. */
static void word(const char *cmd, const json_t *nodes, const char *w,
		 struct want *out)
{
	const char *lb = strchr(w, '['), *rb = lb ? strchr(lb, ']') : NULL;
	char *end;

	if (w[0] >= '0' && w[0] <= '9') { /* ids */
		unsigned long a = strtoul(w, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (*end || b < a || b - a > 65536)
			sc_die(SC_EXIT_USAGE, "%s: '%s' is not a node name, id "
			       "or id range", cmd, w);
		for (unsigned long id = a; id <= b; id++) {
			if (!by_id(nodes, (int64_t)id))
				sc_die(SC_EXIT_USAGE, "%s: %lu is not a compute "
				       "node's id (stormctl nodes lists them)",
				       cmd, id);
			want_add(out, (uint32_t)id);
		}
		return;
	}
	if (!lb) {
		int64_t id = by_name(nodes, w);

		if (id < 0)
			sc_die(SC_EXIT_USAGE, "%s: no compute node is called "
			       "'%s' (stormctl nodes lists them)", cmd, w);
		want_add(out, (uint32_t)id);
		return;
	}
	if (!rb)
		sc_die(SC_EXIT_USAGE, "%s: '%s': a '[' without its ']'", cmd, w);
	/* prefix[1-3,07]suffix: each number keeps its digits' width */
	for (const char *p = lb + 1; p < rb;) {
		const char *q = p;
		unsigned long a, b;
		int width;

		a = strtoul(p, &end, 10);
		width = (int)(end - q);
		b = a;
		if (end == q)
			sc_die(SC_EXIT_USAGE, "%s: '%s': a range wants numbers",
			       cmd, w);
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if ((*end != ',' && end != rb) || b < a || b - a > 65536)
			sc_die(SC_EXIT_USAGE, "%s: '%s' is not a node range "
			       "(prefix[1-3,7])", cmd, w);
		for (unsigned long k = a; k <= b; k++) {
			char name[256];
			int64_t id;

			snprintf(name, sizeof(name), "%.*s%0*lu%s",
				 (int)(lb - w), w, width, k, rb + 1);
			if ((id = by_name(nodes, name)) < 0)
				sc_die(SC_EXIT_USAGE, "%s: no compute node is "
				       "called '%s' (stormctl nodes lists "
				       "them)", cmd, name);
			want_add(out, (uint32_t)id);
		}
		p = end + (*end == ',');
	}
}

/* NODES split at the commas outside brackets. */
static void parse_nodes(const char *cmd, const json_t *nodes,
			const char *text, struct want *out)
{
	char *s = strdup(text), *p = s;

	if (!s)
		sc_die(SC_EXIT_FAILED, "out of memory");
	while (*p) {
		char *q = p;
		int depth = 0;

		while (*q && (*q != ',' || depth)) {
			depth += *q == '[';
			depth -= *q == ']';
			q++;
		}
		if (q == p)
			sc_die(SC_EXIT_USAGE, "%s: an empty node name in '%s'",
			       cmd, text);
		char c = *q;

		*q = '\0';
		word(cmd, nodes, p, out);
		p = c ? q + 1 : q;
	}
	free(s);
}

static int service(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		   const struct sc_args *args, bool drain)
{
	const char *reason = NULL;
	struct want w = { 0 };
	json_t *list, *nodes;
	int worst = SC_EXIT_OK;

	for (int i = 0; i < args->nopts; i++)
		if (args->opts[i].id == SC_OPT_REASON)
			reason = args->opts[i].val;
	if (drain && (!reason || !reason[0]))
		sc_die(SC_EXIT_USAGE, "%s: say why: --reason TEXT (it shows in "
		       "stormctl nodes)", cmd->name);
	if (reason && strlen(reason) > 150)
		sc_die(SC_EXIT_USAGE, "%s: --reason: at most 150 bytes",
		       cmd->name);
	list = json_object();
	if (!list)
		sc_die(SC_EXIT_FAILED, "out of memory");
	json_object_set_new(list, "op", json_string("nodes"));
	list = sc_call_or_die(ctx, cmd->name, list);
	nodes = json_object_get(list, "nodes");
	for (int i = 0; i < args->noperands; i++)
		parse_nodes(cmd->name, nodes, args->operands[i], &w);
	for (size_t i = 0; i < w.n; i++) {
		json_t *req = json_object(), *reply = NULL;
		char err[2048];
		int code;

		if (!req)
			sc_die(SC_EXIT_FAILED, "out of memory");
		json_object_set_new(req, "op", json_string(cmd->name));
		json_object_set_new(req, "node", json_integer(w.ids[i]));
		if (reason)
			json_object_set_new(req, "reason", json_string(reason));
		code = sc_call_soft(ctx, req, &reply, err, sizeof(err));
		json_decref(req);
		if (code == SC_EXIT_UNREACH || code == SC_EXIT_PROTO)
			sc_die(code, "%s: node %u: %s", cmd->name, w.ids[i],
			       err);
		if (code != SC_EXIT_OK) {
			sc_warn("%s: node %u: %s", cmd->name, w.ids[i], err);
			worst = code;
			continue;
		}
		if (ctx->json)
			sc_print_json(reply);
		else if (drain)
			printf("Drained node %s (%u): no new job goes there; "
			       "its jobs run on\n", sc_jstr(reply, "name", "?"),
			       w.ids[i]);
		else
			printf("Resumed node %s (%u)\n",
			       sc_jstr(reply, "name", "?"), w.ids[i]);
		json_decref(reply);
	}
	free(w.ids);
	json_decref(list);
	return worst;
}

int sc_cmd_drain(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args)
{
	return service(ctx, cmd, args, true);
}

int sc_cmd_resume(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args)
{
	return service(ctx, cmd, args, false);
}
