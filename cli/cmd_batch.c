/*
 * cmd_batch.c — stormctl batch SCRIPT: a batch allocation whose first
 * node runs SCRIPT, with submit's options from the script's #STORM lines
 * (as sbatch reads #SBATCH) and then from the command line, which wins.
 * Inside, `stormctl run` starts steps on the allocation's task slots
 * (docs/batch.md).
 *
 * #STORM lines are read from the top of the script up to its first line
 * that is neither blank nor a comment.  Each is checked on its own, so a
 * bad one is refused naming its file and line: no job is submitted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define BATCH_LINE_MAX 4096 /* bytes of one line read for #STORM */
#define BATCH_WORDS_MAX 256 /* words of every #STORM line together */

struct words {
	char *w[BATCH_WORDS_MAX + 2]; /* "batch", the words, NULL */
	int n;
	int line[BATCH_WORDS_MAX + 2]; /* where each word came from */
	char *copies[BATCH_WORDS_MAX + 2]; /* the lines the words are in */
	int ncopies;
};

_Noreturn static void bad_line(const char *path, int line, const char *f,
			       ...) __attribute__((format(printf, 3, 4)));

static void bad_line(const char *path, int line, const char *f, ...)
{
	va_list ap;

	fprintf(stderr, "stormctl: batch: %s:%d: ", path, line);
	va_start(ap, f);
	vfprintf(stderr, f, ap);
	va_end(ap);
	fprintf(stderr, " (stormctl help batch lists the options)\n");
	sc_exit(SC_EXIT_USAGE);
}

/* Split one #STORM line's rest into words: blanks separate, '...' and
 * "..." quote (no escapes, no expansion: the line is not a shell's). */
static void split(const char *path, int line, char *p, struct words *w)
{
	while (*p) {
		char *out;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			break;
		if (w->n >= BATCH_WORDS_MAX + 1)
			bad_line(path, line, "more than %d words in #STORM "
				 "lines", BATCH_WORDS_MAX);
		out = p;
		w->line[w->n] = line;
		w->w[w->n++] = out;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '\'' || *p == '"') {
				char q = *p++;

				while (*p && *p != q && *p != '\n')
					*out++ = *p++;
				if (*p != q)
					bad_line(path, line, "an unterminated "
						 "%c quote", q);
				p++;
				continue;
			}
			*out++ = *p++;
		}
		if (*p)
			p++;
		*out = '\0';
	}
}

static const struct sc_opt *opt_long(const struct sc_opt *opts,
				     const char *name, size_t n)
{
	for (const struct sc_opt *o = opts; o->id; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return o;
	return NULL;
}

static const struct sc_opt *opt_short(const struct sc_opt *opts, char c)
{
	for (const struct sc_opt *o = opts; o->id; o++)
		if (o->id < 256 && o->id == c)
			return o;
	return NULL;
}

/* Every word of a line an option of opts, with its value: the rest of
 * the check (values) is submit's own, after. */
static void check_words(const char *path, const struct sc_opt *opts,
			const struct words *w, int from)
{
	for (int i = from; i < w->n; i++) {
		const char *x = w->w[i];
		const struct sc_opt *o;
		int line = w->line[i];
		int inline_val;

		if (x[0] != '-' || !x[1])
			bad_line(path, line, "'%s' is not an option; a "
				 "#STORM line holds options only", x);
		if (x[1] == '-') {
			size_t n = strcspn(x + 2, "=");

			o = opt_long(opts, x + 2, n);
			inline_val = x[2 + n] == '=';
			if (!o)
				bad_line(path, line, "unknown option %.*s",
					 (int)(n + 2), x);
			if (!o->arg && inline_val)
				bad_line(path, line, "option --%s takes no "
					 "value", o->name);
		} else {
			o = opt_short(opts, x[1]);
			if (!o)
				bad_line(path, line, "unknown option -%c",
					 x[1]);
			if (!o->arg && x[2])
				bad_line(path, line, "option -%c takes no "
					 "value (one option per word)", x[1]);
			inline_val = x[2] != '\0';
		}
		if (o->arg && !inline_val) {
			if (i + 1 >= w->n || w->line[i + 1] != line)
				bad_line(path, line, "option %s needs a value: "
					 "%s", x, o->arg);
			i++;
		}
	}
}

/* The script's #STORM words, checked; exits 2 on a bad script. */
static void read_script(const char *path, const struct sc_opt *opts,
			struct words *w)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(BATCH_LINE_MAX + 1);
	int line = 0;

	if (!buf)
		sc_die(SC_EXIT_FAILED, "out of memory");
	if (!f)
		sc_die(SC_EXIT_USAGE, "batch: cannot read %s: %s (the script "
		       "is read with your rights)", path, strerror(errno));
	while (fgets(buf, BATCH_LINE_MAX + 1, f)) {
		size_t len = strlen(buf);
		char *p = buf;
		int from = w->n;

		line++;
		if (len == BATCH_LINE_MAX && buf[len - 1] != '\n')
			bad_line(path, line, "a line longer than %d bytes "
				 "before the script's first command",
				 BATCH_LINE_MAX);
		if (line == 1) {
			if (strncmp(buf, "#!", 2))
				bad_line(path, 1, "a batch script starts with "
					 "#! and the program that runs it, as "
					 "#!/bin/sh");
			continue;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || !*p)
			continue;
		if (*p != '#')
			break; /* its first command: no #STORM after */
		if (strncmp(p, "#STORM", 6) ||
		    (p[6] != ' ' && p[6] != '\t' && p[6] != '\n' && p[6]))
			continue; /* a comment */
		/* the words point into the copy, which stays */
		if (w->ncopies >= BATCH_WORDS_MAX + 1)
			bad_line(path, line, "more than %d #STORM lines",
				 BATCH_WORDS_MAX);
		if (!(p = strdup(p + 6)))
			sc_die(SC_EXIT_FAILED, "out of memory");
		w->copies[w->ncopies++] = p;
		split(path, line, p, w);
		if (w->n == from)
			bad_line(path, line, "a #STORM line without options");
		check_words(path, opts, w, from);
	}
	if (line == 0)
		bad_line(path, 1, "the script is empty; a batch script starts "
			 "with #! and the program that runs it, as #!/bin/sh");
	if (ferror(f))
		sc_die(SC_EXIT_USAGE, "batch: cannot read %s: %s", path,
		       strerror(errno));
	fclose(f);
	free(buf);
}

int sc_cmd_batch(sc_ctx_t *ctx, const struct sc_cmd *cmd,
		 const struct sc_args *args)
{
	struct words w = { .w = { "batch" }, .n = 1 };
	struct sc_args from_script, all;
	char **ops = NULL;
	int first;

	read_script(args->operands[0], cmd->opts, &w);
	w.w[w.n] = NULL;
	first = sc_parse_opts(cmd, cmd->opts, true, w.n, w.w, &from_script);
	if (first != w.n)
		sc_die(SC_EXIT_USAGE, "batch: %s: '%s' in a #STORM line is not "
		       "an option", args->operands[0], w.w[first]);
	/* the script's first, so the command line's win */
	all = *args;
	all.nopts = from_script.nopts + args->nopts;
	all.opts = calloc((size_t)all.nopts + 1, sizeof(*all.opts));
	if (!all.opts)
		sc_die(SC_EXIT_FAILED, "out of memory");
	memcpy(all.opts, from_script.opts,
	       (size_t)from_script.nopts * sizeof(*all.opts));
	memcpy(all.opts + from_script.nopts, args->opts,
	       (size_t)args->nopts * sizeof(*all.opts));
	free(from_script.opts);
	/* a script is a path, never looked up in PATH (as sbatch's) */
	if (!strchr(args->operands[0], '/')) {
		ops = calloc((size_t)args->noperands + 1, sizeof(*ops));

		if (!ops || asprintf(&ops[0], "./%s", args->operands[0]) < 0)
			sc_die(SC_EXIT_FAILED, "out of memory");
		for (int i = 1; i < args->noperands; i++)
			ops[i] = args->operands[i];
		all.operands = ops;
	}
	first = sc_submit_job(ctx, cmd, &all, true);
	free(all.opts);
	if (ops)
		free(ops[0]);
	free(ops);
	for (int i = 0; i < w.ncopies; i++)
		free(w.copies[i]);
	return first;
}
