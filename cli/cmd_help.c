/*
 * cmd_help.c — `stormctl help [COMMAND]`, `stormctl COMMAND --help`, usage
 * errors, and `stormctl help --man`, which prints cli/stormctl.1.  All of it
 * is rendered from the records in commands.h, so the help, the man page
 * and what the parser accepts cannot drift apart: change a record, then
 * regenerate the man page with
 *     build/cli/stormctl help --man > cli/stormctl.1
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef STORM_VERSION
#define STORM_VERSION "unknown"
#endif

#define WIDTH 79
#define OPT_COL 26

/* Prose that is not tied to one record, shared by help and man page. */
static const char about[] =
	"stormctl asks storm-mm, the Storm cluster manager, to run, queue, "
	"show and cancel jobs, and reports on nodes and the cluster.";

static const char finding[] =
	"With --socket, stormctl talks to that unix socket; with --manager, "
	"to that TCP address; with --managers, to those TCP addresses in "
	"turn.  Otherwise it reads the configuration and knows every manager "
	"replica: each RUN_DIR/storm-mm-NAME.sock that exists here, then "
	"each listen address.  It starts at a random local replica and, "
	"after a broken connection, no answer or a refusal that means go "
	"elsewhere (no quorum, catching up), sends the same request (same "
	"client id and sequence: applied exactly once) to the next one, "
	"until --timeout.  Over TCP each request is sealed with a fresh MUNGE "
	"credential bound to its bytes, which the cluster accepts once "
	"(munge_socket in the configuration, or STORM_MUNGE_SOCKET).";

/* ---- plain text --------------------------------------------------------- */

/* Print text wrapped to WIDTH, every line indented by indent columns; the
 * first line starts at column col (already printed). */
static void wrap(FILE *f, int col, int indent, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *w = p;
		int n;

		while (*w == ' ')
			w++;
		n = (int)strcspn(w, " ");
		if (!n)
			break;
		if (col > indent && col + 1 + n > WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		} else if (col < indent) {
			fprintf(f, "%*s", indent - col, "");
			col = indent;
		}
		fwrite(w, 1, (size_t)n, f);
		col += n;
		p = w + n;
	}
	fputc('\n', f);
}

static void print_opts(FILE *f, const struct sc_opt *opts, bool with_help)
{
	static const struct sc_opt help = { 'h', "help", NULL,
					    "Print this help and exit." };

	for (const struct sc_opt *o = opts;; o++) {
		char label[96];
		int n;

		if (!o->id) {
			if (!with_help)
				break;
			o = &help;
			with_help = false;
		}
		if (o->id < 256)
			n = snprintf(label, sizeof(label), "  -%c, --%s%s%s",
				     o->id, o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		else
			n = snprintf(label, sizeof(label), "      --%s%s%s",
				     o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		fputs(label, f);
		if (n + 2 > OPT_COL) {
			fputc('\n', f);
			n = 0;
		}
		wrap(f, n, OPT_COL, o->help);
		if (o == &help)
			break;
	}
}

void sc_print_usage(const struct sc_cmd *cmd, FILE *f)
{
	if (!cmd) {
		fprintf(f, "Usage: stormctl [GLOBAL OPTIONS] COMMAND [OPTIONS] "
			   "[OPERANDS]\n");
		return;
	}
	fprintf(f, "Usage: stormctl [GLOBAL OPTIONS] %s%s%s%s\n", cmd->name,
		cmd->opts[0].id ? " [OPTIONS]" : "",
		cmd->operands[0] ? " " : "", cmd->operands);
}

_Noreturn void sc_usage_die(const struct sc_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "stormctl: %s%s", cmd ? cmd->name : "",
		cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	sc_print_usage(cmd, stderr);
	fprintf(stderr, "Try 'stormctl %s%s--help'.\n", cmd ? cmd->name : "",
		cmd ? " " : "");
	sc_exit(SC_EXIT_USAGE);
}

void sc_print_cmd_help(const struct sc_cmd *cmd)
{
	sc_print_usage(cmd, stdout);
	fputc('\n', stdout);
	wrap(stdout, 0, 0, cmd->description);
	printf("\nOptions:\n");
	print_opts(stdout, cmd->opts, true);
	printf("\nGlobal options (see 'stormctl help') go before the "
	       "command or among its options.\n");
}

void sc_print_help(void)
{
	sc_print_usage(NULL, stdout);
	fputc('\n', stdout);
	wrap(stdout, 0, 0, about);
	printf("\nCommands:\n");
	for (size_t i = 0; i < sc_ncommands; i++)
		printf("  %-8s  %s\n", sc_commands[i].name,
		       sc_commands[i].summary);
	printf("\nGlobal options:\n");
	print_opts(stdout, sc_global_opts, false);
	printf("\nFinding the manager:\n");
	wrap(stdout, 0, 2, finding);
	printf("\nExit status:\n");
	for (const struct sc_exit_doc *e = sc_exit_docs; e->code; e++) {
		printf("  %-5s  ", e->code);
		wrap(stdout, 9, 9, e->text);
	}
	printf("\n'stormctl help COMMAND' or 'stormctl COMMAND --help' shows "
	       "a command's options.\n");
}

/* ---- troff -------------------------------------------------------------- */

/* Text into troff: backslashes and hyphen-minus escaped, no line starting
 * with a control character.  Each call starts a new input line. */
static void roff(const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			fputc(*s, stdout);
	}
	fputc('\n', stdout);
}

static void roff_opt(const struct sc_opt *o)
{
	printf(".TP\n");
	if (o->id < 256)
		printf("\\fB\\-%c\\fR, ", o->id);
	printf("\\fB");
	fputs("\\-\\-", stdout);
	for (const char *p = o->name; *p; p++)
		fputs(*p == '-' ? "\\-" : (char[]){ *p, 0 }, stdout);
	printf("\\fR");
	if (o->arg)
		printf(" \\fI%s\\fR", o->arg);
	printf("\n");
	roff(o->help);
}

static void print_man(void)
{
	printf(".\\\" stormctl.1 - generated by 'stormctl help --man' from "
	       "cli/commands.h\n"
	       ".\\\" and cli/cmd_help.c; edit those, then regenerate.\n");
	printf(".TH STORMCTL 1 \"\" \"Storm %s\" \"Storm Manual\"\n",
	       STORM_VERSION);
	printf(".SH NAME\nstormctl \\- control a Storm cluster\n");
	printf(".SH SYNOPSIS\n.B stormctl\n[\\fIGLOBAL OPTIONS\\fR] "
	       "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIOPERANDS\\fR]\n");
	printf(".SH DESCRIPTION\n");
	roff(about);
	printf(".SH GLOBAL OPTIONS\n");
	for (const struct sc_opt *o = sc_global_opts; o->id; o++)
		roff_opt(o);
	printf(".SH COMMANDS\n");
	for (size_t i = 0; i < sc_ncommands; i++) {
		const struct sc_cmd *c = &sc_commands[i];

		printf(".SS \"");
		fputs(c->name, stdout);
		if (c->opts[0].id)
			fputs(" [OPTIONS]", stdout);
		if (c->operands[0]) {
			fputc(' ', stdout);
			for (const char *p = c->operands; *p; p++)
				fputs(*p == '-' ? "\\-" : (char[]){ *p, 0 },
				      stdout);
		}
		printf("\"\n");
		roff(c->description);
		for (const struct sc_opt *o = c->opts; o->id; o++)
			roff_opt(o);
		printf(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\n"
		       "Print the command's help and exit.\n");
	}
	printf(".SH FINDING THE MANAGER\n");
	roff(finding);
	printf(".SH ENVIRONMENT\n.TP\n.B STORM_CONFIG\n");
	roff("The configuration file to read when --config is not given.");
	printf(".SH EXIT STATUS\n");
	for (const struct sc_exit_doc *e = sc_exit_docs; e->code; e++) {
		printf(".TP\n.B %s\n", e->code);
		roff(e->text);
	}
	printf(".SH FILES\n.TP\n.I /etc/storm/storm.conf\n");
	roff("The default configuration.");
	printf(".TP\n.I RUN_DIR/storm\\-mm.sock\n");
	roff("The manager's unix socket (run_dir from the configuration).");
	printf(".SH EXAMPLES\n.nf\n");
	roff("stormctl run -n 4 -l hostname");
	roff("stormctl submit -n 64 -o out.%j.%r -- ./solver --steps 100");
	roff("stormctl queue -a");
	roff("stormctl --json show 12");
	roff("stormctl --manager head1:7070 nodes");
	printf(".fi\n.SH SEE ALSO\n");
	roff("docs/stormctl.md and docs/protocol.md in the Storm sources.");
}

int sc_cmd_help(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		const struct sc_args *args)
{
	const struct sc_cmd *which;

	(void)ctx;
	for (int i = 0; i < args->nopts; i++) {
		if (args->opts[i].id == SC_OPT_MAN) {
			print_man();
			return SC_EXIT_OK;
		}
	}
	if (args->noperands == 0) {
		sc_print_help();
		return SC_EXIT_OK;
	}
	which = sc_command_find(args->operands[0]);
	if (!which)
		sc_usage_die(cmd, "'%s' is not a stormctl command",
			     args->operands[0]);
	sc_print_cmd_help(which);
	return SC_EXIT_OK;
}
