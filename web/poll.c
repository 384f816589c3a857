/*
 * poll.c — the dashboard's view, gathered from the Machine Manager: one
 * round asks whichever replica answers (libstorm-client fails over, as
 * stormctl does) for queue, nodes, matrix and managers, and keeps only
 * what the page shows.  Figures that change on every round without
 * meaning anything to a reader (a node's service time, the slice count)
 * are left out, so that the document changes — and an event goes to
 * the browsers — only when something shown did.
 *
 * Invariant: the document is one line of JSON (compact encoding): an
 * event stream's "data:" line carries it whole.
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "web.h"

/* ---- copying what is shown ------------------------------------------------ */

/* dst[key] = src[key] when src has it: optional fields stay optional. */
static void copy(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (v)
		json_object_set(dst, key, v);
}

static void copy_keys(json_t *dst, const json_t *src,
		      const char *const *keys)
{
	for (; *keys; keys++)
		copy(dst, src, *keys);
}

/* A uid's name for the queue (the number when it has none). */
static json_t *user_name(json_int_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[1024], num[32];

	if (uid >= 0 && uid <= UINT32_MAX &&
	    !getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) && res)
		return json_string(res->pw_name);
	snprintf(num, sizeof(num), "%lld", (long long)uid);
	return json_string(num);
}

static json_t *view_jobs(const json_t *rep)
{
	static const char *const keys[] = {
		"id", "name", "uid", "state", "reason", "ranks", "node_names",
		"submit_ms", "start_ms", "expected_start_ms", "time_limit_ms",
		"dependency", "row", NULL,
	};
	json_t *out = json_array(), *j;
	size_t i;

	json_array_foreach(json_object_get(rep, "jobs"), i, j) {
		json_t *o = json_object();

		copy_keys(o, j, keys);
		json_object_set_new(o, "user", user_name(json_integer_value(
			json_object_get(j, "uid"))));
		json_array_append_new(out, o);
	}
	return out;
}

static json_t *view_nodes(const json_t *rep)
{
	static const char *const keys[] = {
		"name", "state", "cpus", "used", "failures", "reason", NULL,
	};
	json_t *out = json_array(), *n;
	size_t i;

	json_array_foreach(json_object_get(rep, "nodes"), i, n) {
		json_t *o = json_object();

		copy_keys(o, n, keys);
		json_array_append_new(out, o);
	}
	return out;
}

static json_t *view_matrix(const json_t *rep)
{
	static const char *const keys[] = {
		"policy", "mpl", "rows", "active_row", "columns", "cells",
		"jobs", "quantum_us", NULL,
	};
	json_t *o = json_object();

	copy_keys(o, rep, keys);
	return o;
}

/* Every configured replica, as the one that answered sees the group: a
 * member (synced, or still catching up), or absent — dead, cut off, or
 * not yet joined. */
static json_t *view_replicas(const json_t *rep)
{
	json_t *out = json_array(), *m;
	size_t i;

	json_array_foreach(json_object_get(rep, "managers"), i, m) {
		int member = json_is_true(json_object_get(m, "member"));
		int synced = json_is_true(json_object_get(m, "synced"));
		json_t *o = json_pack("{s:s}", "state",
				      !member ? "absent" :
				      synced ? "member" : "syncing");

		copy(o, m, "name");
		copy(o, m, "address");
		copy(o, m, "master");
		copy(o, m, "self");
		if (member)
			copy(o, m, "applied");
		json_array_append_new(out, o);
	}
	return out;
}

/* ---- one round ------------------------------------------------------------- */

static int ask(struct web_poll *p, const char *op, json_t **rep)
{
	json_t *req = json_pack("{s:s}", "op", op);
	char err[1024] = "";
	int rc;

	*rep = NULL;
	if (!req)
		return STC_FAILED;
	rc = stc_call_soft(&p->c, req, rep, err, sizeof(err));
	json_decref(req);
	if (rc != STC_OK) {
		snprintf(p->error, sizeof(p->error), "%s: %s", op,
			 err[0] ? err : "no answer");
		/* none reachable: the next round looks for the replicas'
		 * sockets again (a cluster started after storm-web) */
		if (rc == STC_UNREACH)
			p->c.neps = 0;
	}
	return rc;
}

char *web_poll_once(struct web_poll *p)
{
	static const char *const ops[] = { "managers", "queue", "nodes",
					   "matrix" };
	json_t *rep[4] = { NULL }, *doc;
	char *text;
	size_t k;

	p->error[0] = '\0';
	for (k = 0; k < 4; k++)
		if (ask(p, ops[k], &rep[k]) != STC_OK)
			break;
	if (k == 4) {
		doc = json_pack("{s:b, s:O?, s:O?, s:O?, s:o, s:o, s:o, s:o}",
				"ok", 1,
				"cluster", json_object_get(rep[0], "cluster"),
				"answered_by", json_object_get(rep[0],
							       "answered_by"),
				"quorate", json_object_get(rep[0], "quorate"),
				"replicas", view_replicas(rep[0]),
				"jobs", view_jobs(rep[1]),
				"nodes", view_nodes(rep[2]),
				"matrix", view_matrix(rep[3]));
		if (doc && json_object_get(rep[1], "next"))
			json_object_set_new(doc, "jobs_more", json_true());
		if (doc) {
			json_decref(p->last);
			p->last = json_incref(doc);
		}
	} else {
		/* the last view stays on the page, marked stale */
		doc = p->last ? json_deep_copy(p->last) : json_object();
		if (doc) {
			json_object_set_new(doc, "ok", json_false());
			json_object_set_new(doc, "error",
					    json_string(p->error));
		}
	}
	for (k = 0; k < 4; k++)
		json_decref(rep[k]);
	if (!doc)
		return NULL;
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	return text;
}

void web_poll_fini(struct web_poll *p)
{
	json_decref(p->last);
	p->last = NULL;
}
