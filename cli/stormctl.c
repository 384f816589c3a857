/*
 * stormctl.c — the driver: global options, then the command, whose options
 * and operands are checked against its record in commands.h before its
 * handler runs.  Nothing here knows what a command does; a command's
 * handler never sees an option it did not declare.
 *
 *   stormctl [--config FILE] [--socket PATH | --manager HOST:PORT] [--json]
 *            [--timeout MS] COMMAND [OPTIONS] [OPERANDS]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_COMMANDS_DEFINE
#include "commands.h"

#ifndef STORM_VERSION
#define STORM_VERSION "unknown"
#endif

#define DEFAULT_CONFIG "/etc/storm/storm.conf"
#define DEFAULT_TIMEOUT_MS 10000
#define MAX_TIMEOUT_MS 86400000u

const struct sc_cmd *sc_command_find(const char *name)
{
	for (size_t i = 0; i < sc_ncommands; i++)
		if (!strcmp(sc_commands[i].name, name))
			return &sc_commands[i];
	return NULL;
}

static const struct sc_opt *opt_by_id(const struct sc_opt *opts, int id)
{
	for (; opts->id; opts++)
		if (opts->id == id)
			return opts;
	return NULL;
}

static const struct sc_opt help_opt = { 'h', "help", NULL, NULL };

struct getopt_spec {
	char sopts[128];
	size_t ns;
	struct option lopts[64];
	int nl;
};

static void spec_add(struct getopt_spec *sp, const struct sc_opt *o)
{
	/* The tables are ours and small; outgrowing these is a bug. */
	if (sp->ns + 3 >= sizeof(sp->sopts) ||
	    (size_t)sp->nl + 2 >= sizeof(sp->lopts) / sizeof(sp->lopts[0]))
		abort();
	if (o->id < 256) {
		sp->sopts[sp->ns++] = (char)o->id;
		if (o->arg)
			sp->sopts[sp->ns++] = ':';
	}
	sp->lopts[sp->nl++] = (struct option){
		o->name, o->arg ? required_argument : no_argument, NULL, o->id
	};
}

/* Parse argv[1..] against opts with getopt_long, built from the table so
 * that what `help` prints is exactly what is accepted.  cmd names the
 * command in messages (NULL: the global options).  Returns the index of
 * the first operand; the options found land in out (malloc'd). */
int sc_parse_opts(const struct sc_cmd *cmd, const struct sc_opt *opts,
		  bool stop_at_operand, int argc, char **argv,
		  struct sc_args *out)
{
	struct getopt_spec sp = { .ns = 0 };
	int c;

	/* '+': stop at the first operand; otherwise GNU order, options may
	 * follow operands.  ':' reports a missing value apart. */
	if (stop_at_operand)
		sp.sopts[sp.ns++] = '+';
	sp.sopts[sp.ns++] = ':';
	for (const struct sc_opt *o = opts; o->id; o++)
		spec_add(&sp, o);
	if (cmd)
		spec_add(&sp, &help_opt); /* every command has --help */
	sp.sopts[sp.ns] = '\0';
	sp.lopts[sp.nl] = (struct option){ NULL, 0, NULL, 0 };

	out->opts = calloc((size_t)argc + 1, sizeof(*out->opts));
	out->nopts = 0;
	if (!out->opts)
		sc_die(SC_EXIT_FAILED, "out of memory");
	opterr = 0;
	optind = 0; /* glibc: start over, for the second parse */
	while ((c = getopt_long(argc, argv, sp.sopts, sp.lopts, NULL)) != -1) {
		const struct sc_opt *o;

		if (c == '?') {
			if (optopt > 0 && optopt < 256)
				sc_usage_die(cmd, "unknown option -%c", optopt);
			sc_usage_die(cmd, "unknown option %s",
				     argv[optind - 1]);
		}
		if (c == ':') {
			o = opt_by_id(opts, optopt);
			if (o && o->id < 256)
				sc_usage_die(cmd, "option -%c (--%s) needs a "
					     "value: %s", o->id, o->name,
					     o->arg);
			if (o)
				sc_usage_die(cmd, "option --%s needs a value: "
					     "%s", o->name, o->arg);
			sc_usage_die(cmd, "option %s needs a value",
				     argv[optind - 1]);
		}
		out->opts[out->nopts].id = c;
		out->opts[out->nopts].val = optarg;
		out->nopts++;
	}
	return optind;
}

/* A global option's effect, wherever it was given. */
static void apply_global(sc_ctx_t *ctx, int id, const char *v)
{
	switch (id) {
	case SC_OPT_CONFIG:
		ctx->c.config_path = v;
		break;
	case SC_OPT_SOCKET:
		ctx->c.socket_path = v;
		break;
	case SC_OPT_MANAGER:
		ctx->c.manager = v;
		break;
	case SC_OPT_MANAGERS:
		ctx->c.managers = v;
		break;
	case SC_OPT_JSON:
		ctx->json = true;
		break;
	case SC_OPT_TIMEOUT:
		ctx->c.timeout_ms = (int)sc_number_or_die(
			NULL, "option --timeout", v, 1, MAX_TIMEOUT_MS);
		break;
	case SC_OPT_VERSION:
		printf("stormctl (Storm) %s\n", STORM_VERSION);
		sc_exit(SC_EXIT_OK);
	}
}

/* A command's options and the global long options it does not name
 * itself, so that `stormctl queue --json` means what it says. */
static struct sc_opt *with_globals(const struct sc_opt *opts)
{
	size_t n = 0, k = 0;
	struct sc_opt *all;

	while (opts[n].id)
		n++;
	for (const struct sc_opt *g = sc_global_opts; g->id; g++)
		k++;
	if (!(all = calloc(n + k + 1, sizeof(*all))))
		sc_die(SC_EXIT_FAILED, "out of memory");
	memcpy(all, opts, n * sizeof(*all));
	k = n;
	for (const struct sc_opt *g = sc_global_opts; g->id; g++) {
		bool clash = g->id < 256; /* -h is each command's own */

		for (size_t i = 0; i < n && !clash; i++)
			clash = opts[i].name && !strcmp(opts[i].name, g->name);
		if (!clash)
			all[k++] = *g;
	}
	return all;
}

static bool is_global(int id)
{
	for (const struct sc_opt *g = sc_global_opts; g->id; g++)
		if (g->id == id && id >= 256)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	sc_ctx_t ctx = { 0 };
	struct sc_args g, a;
	const struct sc_cmd *cmd;
	const char *env = getenv("STORM_CONFIG");
	int first;

	ctx.c.config_path = env && env[0] ? env : DEFAULT_CONFIG;
	ctx.c.timeout_ms = DEFAULT_TIMEOUT_MS;
	if (getenv("STORM_MUNGE_SOCKET"))
		snprintf(ctx.c.munge_socket, sizeof(ctx.c.munge_socket), "%s",
			 getenv("STORM_MUNGE_SOCKET"));

	first = sc_parse_opts(NULL, sc_global_opts, true, argc, argv, &g);
	for (int i = 0; i < g.nopts; i++) {
		if (g.opts[i].id == 'h') {
			sc_print_help();
			sc_exit(SC_EXIT_OK);
		}
		apply_global(&ctx, g.opts[i].id, g.opts[i].val);
	}
	free(g.opts);
	if (first >= argc)
		sc_usage_die(NULL, "no command given");
	cmd = sc_command_find(argv[first]);
	if (!cmd)
		sc_die(SC_EXIT_USAGE,
		       "'%s' is not a stormctl command; 'stormctl help' lists "
		       "them", argv[first]);

	/* The command's own argv starts at its name, as getopt expects. */
	argc -= first;
	argv += first;
	{
		struct sc_opt *all = with_globals(cmd->opts);
		int k = 0;

		first = sc_parse_opts(cmd, all, cmd->options_first, argc, argv,
				   &a);
		free(all);
		/* the global ones apply here and leave the command's list */
		for (int i = 0; i < a.nopts; i++) {
			if (a.opts[i].id == 'h') {
				sc_print_cmd_help(cmd);
				sc_exit(SC_EXIT_OK);
			}
			if (is_global(a.opts[i].id))
				apply_global(&ctx, a.opts[i].id,
					     a.opts[i].val);
			else
				a.opts[k++] = a.opts[i];
		}
		a.nopts = k;
	}
	a.operands = argv + first;
	a.noperands = argc - first;
	if (a.noperands < cmd->min_operands)
		sc_usage_die(cmd, "missing %s", cmd->operands);
	if (cmd->max_operands >= 0 && a.noperands > cmd->max_operands)
		sc_usage_die(cmd, "unexpected operand '%s'",
			     a.operands[cmd->max_operands]);

	sc_client_init(&ctx);
	first = cmd->handler(&ctx, cmd, &a);
	free(a.opts);
	sc_exit(first);
}
