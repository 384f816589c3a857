/*
 * cmd_matrix.c — `stormctl matrix`: the scheduler's Ousterhout matrix as
 * the answering manager sees it.  Rows are time slots (the MPL), columns
 * the PEs, headed NODE.CPU; a cell holds the id of the job in it, "-" when
 * free; "*" marks the row whose jobs run now.  Phantom columns (the gaps
 * that align each node to a buddy block) are not shown.  A machine wider
 * than the terminal is printed in bands of columns, broken at node
 * boundaries where it can be, each band repeating the row labels.  Then
 * one line per job holding PEs: its row and buddy block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "commands.h"

#define DEFAULT_WIDTH 80

/* The line width to wrap at: the terminal's, else $COLUMNS, else 80. */
static int line_width(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	char *end;
	long n;

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	n = env ? strtol(env, &end, 10) : 0;
	if (env && *env && !*end && n >= 20 && n <= 100000)
		return (int)n;
	return DEFAULT_WIDTH;
}

/* A span of microseconds in the largest unit that divides it. */
static void fmt_us(int64_t us, char *buf, size_t len)
{
	if (us >= 1000000 && us % 1000000 == 0)
		snprintf(buf, len, "%lld s", (long long)(us / 1000000));
	else if (us >= 1000 && us % 1000 == 0)
		snprintf(buf, len, "%lld ms", (long long)(us / 1000));
	else
		snprintf(buf, len, "%lld us", (long long)us);
}

/* The reply's shape, checked once so that printing can trust it. */
static void check_reply(const sc_ctx_t *ctx, const struct sc_cmd *cmd,
			const json_t *reply, size_t ncols)
{
	const json_t *cells = sc_jarray(reply, "cells"), *row;
	size_t r;

	if (!sc_jarray(reply, "columns") || !cells || !sc_jarray(reply, "jobs"))
		sc_die(SC_EXIT_PROTO, "%s: the manager at %s sent no matrix "
		       "(columns, cells, jobs)", cmd->name, ctx->c.endpoint);
	json_array_foreach(cells, r, row)
		if (!json_is_array(row) || json_array_size(row) != ncols)
			sc_die(SC_EXIT_PROTO, "%s: the manager at %s sent a "
			       "matrix row %zu of %zu cells for %zu columns",
			       cmd->name, ctx->c.endpoint, r,
			       json_is_array(row) ? json_array_size(row) : 0,
			       ncols);
}

static void print_header(const json_t *reply)
{
	char q[32], s[32];
	int64_t active = sc_jint(reply, "active_row", -1);

	fmt_us(sc_jint(reply, "quantum_us", 0), q, sizeof(q));
	fmt_us(sc_jint(reply, "slice_us", 0), s, sizeof(s));
	printf("policy %s, MPL %lld, quantum %s (%lld slice%s of %s), "
	       "placement %s\n", sc_jstr(reply, "policy", "?"),
	       (long long)sc_jint(reply, "mpl", 0), q,
	       (long long)sc_jint(reply, "quantum_slices", 0),
	       sc_jint(reply, "quantum_slices", 0) == 1 ? "" : "s", s,
	       sc_jstr(reply, "placement", "?"));
	/* a replica that is not the strobe master reads its clock */
	if (sc_jbool(reply, "strobe_master", false))
		printf("slice %lld, ", (long long)sc_jint(reply, "slice", 0));
	else
		printf("slice ~%lld (%s's clock), ",
		       (long long)sc_jint(reply, "slice", 0),
		       sc_jstr(reply, "answered_by", "?"));
	if (active >= 0)
		printf("active row %lld", (long long)active);
	else
		printf("no active row (no jobs)");
	printf("; digest %s\n", sc_jstr(reply, "digest", "?"));
}

/* Columns [b, e) of the matrix, every row, under their NODE.CPU heads. */
static void print_band(const json_t *cells, char **heads, size_t b, size_t e,
		       int lw, int cw, int64_t active)
{
	const json_t *row;
	size_t r;

	printf("%-*s", lw, "row");
	for (size_t c = b; c < e; c++)
		printf(" %*s", cw, heads[c]);
	putchar('\n');
	json_array_foreach(cells, r, row) {
		printf("%c %*zu", (int64_t)r == active ? '*' : ' ', lw - 2, r);
		for (size_t c = b; c < e; c++) {
			const json_t *v = json_array_get(row, c);
			json_int_t id = json_is_integer(v) ?
					json_integer_value(v) : 0;

			if (id > 0)
				printf(" %*lld", cw, (long long)id);
			else
				printf(" %*s", cw, "-");
		}
		putchar('\n');
	}
}

static bool same_node(const json_t *cols, size_t a, size_t b)
{
	return sc_jint(json_array_get(cols, a), "node_id", -1) ==
	       sc_jint(json_array_get(cols, b), "node_id", -2);
}

static void print_matrix(const json_t *reply)
{
	const json_t *cols = sc_jarray(reply, "columns"), *cells =
		sc_jarray(reply, "cells"), *v, *row;
	size_t ncols = json_array_size(cols), nrows = json_array_size(cells);
	size_t i, r, per, b;
	char **heads, num[24];
	int lw, cw = 1;

	if (!ncols) {
		printf("no PEs: no compute node in the configuration\n");
		return;
	}
	heads = calloc(ncols, sizeof(*heads));
	if (!heads)
		sc_die(SC_EXIT_FAILED, "out of memory");
	json_array_foreach(cols, i, v) {
		size_t n = strlen(sc_jstr(v, "node", "?")) + 24;

		heads[i] = malloc(n);
		if (!heads[i])
			sc_die(SC_EXIT_FAILED, "out of memory");
		snprintf(heads[i], n, "%s.%lld", sc_jstr(v, "node", "?"),
			 (long long)sc_jint(v, "cpu", 0));
		if ((int)strlen(heads[i]) > cw)
			cw = (int)strlen(heads[i]);
	}
	json_array_foreach(cells, r, row)
		json_array_foreach(row, i, v) {
			snprintf(num, sizeof(num), "%lld",
				 (long long)json_integer_value(v));
			if ((int)strlen(num) > cw)
				cw = (int)strlen(num);
		}
	snprintf(num, sizeof(num), "%zu", nrows ? nrows - 1 : 0);
	lw = 2 + (int)strlen(num) > 4 ? 2 + (int)strlen(num) : 4;
	per = (size_t)((line_width() - lw) / (cw + 1));
	per = per ? per : 1;
	for (b = 0; b < ncols;) {
		size_t e = b + per < ncols ? b + per : ncols;

		/* end the band where a node ends, if one ends in it */
		if (e < ncols) {
			size_t k = e;

			while (k > b && same_node(cols, k - 1, k))
				k--;
			if (k > b)
				e = k;
		}
		if (b)
			putchar('\n');
		print_band(cells, heads, b, e, lw, cw,
			   sc_jint(reply, "active_row", -1));
		b = e;
	}
	for (i = 0; i < ncols; i++)
		free(heads[i]);
	free(heads);
}

/* The PEs of block [col, col + width) as "FIRST-LAST" column heads (the
 * block's matrix columns count phantoms, which are not shown). */
static void fmt_pes(const json_t *cols, int64_t col, int64_t width,
		    char *buf, size_t len)
{
	const json_t *c, *first = NULL, *last = NULL;
	size_t i;

	json_array_foreach(cols, i, c) {
		int64_t k = sc_jint(c, "col", -1);

		if (k >= col && k < col + width) {
			first = first ? first : c;
			last = c;
		}
	}
	if (!first)
		snprintf(buf, len, "-");
	else if (first == last)
		snprintf(buf, len, "%s.%lld", sc_jstr(first, "node", "?"),
			 (long long)sc_jint(first, "cpu", 0));
	else
		snprintf(buf, len, "%s.%lld-%s.%lld",
			 sc_jstr(first, "node", "?"),
			 (long long)sc_jint(first, "cpu", 0),
			 sc_jstr(last, "node", "?"),
			 (long long)sc_jint(last, "cpu", 0));
}

static void print_jobs(const json_t *reply)
{
	static const char *const cols[] = { ">JOB", "NAME", "STATE", ">RANKS",
					    ">ROW", "BLOCK", "PES" };
	const json_t *jobs = sc_jarray(reply, "jobs"), *j;
	sc_table_t *t;
	size_t i;

	printf("\njobs: %zu\n", json_array_size(jobs));
	if (!json_array_size(jobs))
		return;
	t = sc_table_new(7, cols);
	json_array_foreach(jobs, i, j) {
		char id[24], ranks[24], row[24], block[64], pes[256];

		snprintf(id, sizeof(id), "%lld",
			 (long long)sc_jint(j, "job", 0));
		snprintf(ranks, sizeof(ranks), "%lld",
			 (long long)sc_jint(j, "ranks", 0));
		snprintf(row, sizeof(row), "%lld",
			 (long long)sc_jint(j, "row", 0));
		snprintf(block, sizeof(block), "[%lld,+%lld)",
			 (long long)sc_jint(j, "col", 0),
			 (long long)sc_jint(j, "width", 0));
		fmt_pes(sc_jarray(reply, "columns"), sc_jint(j, "col", 0),
			sc_jint(j, "width", 0), pes, sizeof(pes));
		sc_table_row(t, (const char *const[]){
			id, sc_jstr(j, "name", "?"), sc_jstr(j, "state", "?"),
			ranks, row, block, pes });
	}
	sc_table_print(t);
}

int sc_cmd_matrix(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		  const struct sc_args *args)
{
	json_t *req = json_pack("{s:s}", "op", "matrix"), *reply;

	(void)args;
	reply = sc_call_or_die(ctx, cmd->name, req);
	check_reply(ctx, cmd, reply,
		    json_array_size(sc_jarray(reply, "columns")));
	if (ctx->json) {
		sc_print_json(reply);
		json_decref(reply);
		return SC_EXIT_OK;
	}
	print_header(reply);
	print_matrix(reply);
	print_jobs(reply);
	if (!sc_jbool(reply, "consistent", true))
		sc_warn("%s: the manager at %s finds its matrix inconsistent: "
			"%s", cmd->name, ctx->c.endpoint,
			sc_jstr(reply, "inconsistency", "?"));
	json_decref(reply);
	return SC_EXIT_OK;
}
