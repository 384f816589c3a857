/*
 * client.c — stormctl's side of the client protocol (docs/protocol.md) and
 * the plumbing every subcommand shares: finding and connecting to storm-mm,
 * one request and its reply, the single exit path, strict numbers, safe
 * reads of the reply's JSON and aligned tables.
 *
 * Invariant: every way out of stormctl goes through sc_exit(), so the exit
 * status always means what stormctl(1) says it means; and every message a
 * user sees names what failed, where (the socket or address), and what to
 * try next.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <munge.h>
#include <storm_proto.h>

#include "client.h"

/* ---- exit and messages -------------------------------------------------- */

_Noreturn void sc_exit(int code)
{
	/* A table that never reached the disk or the pipe is not success. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (code == SC_EXIT_OK) {
			fprintf(stderr, "stormctl: writing output: %s\n",
				strerror(errno));
			code = SC_EXIT_FAILED;
		}
	}
	exit(code);
}

static void vwarn(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("stormctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sc_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

_Noreturn void sc_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	sc_exit(code);
}

uint64_t sc_number_or_die(const char *cmd, const char *what,
			  const char *text, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts "-1" (as a huge value) and leading blanks;
	 * neither is a number a user meant. */
	const char *sep = cmd ? ": " : "";

	if (!cmd)
		cmd = "";
	if (!text || text[0] < '0' || text[0] > '9')
		sc_die(SC_EXIT_USAGE,
		       "%s%s%s: '%s' is not a number (want %llu-%llu)", cmd,
		       sep, what, text ? text : "", (unsigned long long)min,
		       (unsigned long long)max);
	errno = 0;
	v = strtoull(text, &end, 10);
	if (*end != '\0')
		sc_die(SC_EXIT_USAGE,
		       "%s%s%s: '%s' is not a number (want %llu-%llu)", cmd,
		       sep, what, text, (unsigned long long)min,
		       (unsigned long long)max);
	if (errno == ERANGE || v < min || v > max)
		sc_die(SC_EXIT_USAGE, "%s%s%s: %s is out of range (%llu-%llu)",
		       cmd, sep, what, text, (unsigned long long)min,
		       (unsigned long long)max);
	return v;
}

/* ---- the client library, for stormctl's commands ------------------------ */

void sc_client_init(sc_ctx_t *ctx)
{
	stc_init(&ctx->c);
}

int sc_connect(sc_ctx_t *ctx, char *err, size_t errlen)
{
	return stc_connect(&ctx->c, err, errlen);
}

/* A message the library left (a MUNGE or auth failure) goes to stderr,
 * where stormctl's messages go. */
static void note(sc_ctx_t *ctx)
{
	if (ctx->c.note[0]) {
		sc_warn("%s", ctx->c.note);
		ctx->c.note[0] = '\0';
	}
}

int sc_send_request(sc_ctx_t *ctx, int fd, json_t *req)
{
	int rc = stc_send_request(&ctx->c, fd, req);

	note(ctx);
	return rc;
}

int sc_request(sc_ctx_t *ctx, json_t *req, int *fdp, json_t **reply,
	       char *err, size_t errlen)
{
	int rc = stc_request(&ctx->c, req, fdp, reply, err, errlen);

	note(ctx);
	return rc;
}

int sc_recv_reply(sc_ctx_t *ctx, int fd, int timeout_ms, json_t **reply,
		  char *err, size_t errlen)
{
	return stc_recv_reply(&ctx->c, fd, timeout_ms, reply, err, errlen);
}

int sc_frame_error(const sc_ctx_t *ctx, int rc, char *err, size_t errlen)
{
	return stc_frame_error(&ctx->c, rc, err, errlen);
}

int sc_call_soft(sc_ctx_t *ctx, json_t *req, json_t **reply, char *err,
		 size_t errlen)
{
	return sc_request(ctx, req, NULL, reply, err, errlen);
}

json_t *sc_call_or_die(sc_ctx_t *ctx, const char *cmd, json_t *req)
{
	json_t *reply = NULL;
	char err[2048];
	int code;

	if (!req)
		sc_die(SC_EXIT_FAILED, "%s: out of memory", cmd);
	code = sc_call_soft(ctx, req, &reply, err, sizeof(err));
	json_decref(req);
	if (code != SC_EXIT_OK)
		sc_die(code, "%s: %s", cmd, err);
	return reply;
}

void sc_print_json(const json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}

/* ---- reading replies ---------------------------------------------------- */

const char *sc_jstr(const json_t *o, const char *key, const char *def)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : def;
}

int64_t sc_jint(const json_t *o, const char *key, int64_t def)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

bool sc_jbool(const json_t *o, const char *key, bool def)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_boolean(v) ? json_is_true(v) : def;
}

json_t *sc_jarray(const json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_array(v) ? v : NULL;
}

void sc_fmt_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || !localtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

void sc_fmt_elapsed(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000;

	if (ms < 0)
		snprintf(buf, len, "-");
	else if (s >= 86400)
		snprintf(buf, len, "%lld-%02d:%02d:%02d",
			 (long long)(s / 86400), (int)(s % 86400 / 3600),
			 (int)(s % 3600 / 60), (int)(s % 60));
	else
		snprintf(buf, len, "%02d:%02d:%02d", (int)(s / 3600),
			 (int)(s % 3600 / 60), (int)(s % 60));
}

void sc_fmt_until(int64_t at_ms, int64_t now_ms, char *buf, size_t len)
{
	int64_t s = (at_ms - now_ms + 999) / 1000; /* a part-second counts */

	if (at_ms <= 0)
		snprintf(buf, len, "-");
	else if (at_ms <= now_ms)
		snprintf(buf, len, "now");
	else if (s < 60)
		snprintf(buf, len, "in %llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "in %dm%02ds", (int)(s / 60), (int)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "in %dh%02dm", (int)(s / 3600),
			 (int)(s % 3600 / 60));
	else
		snprintf(buf, len, "in %lldd%02dh", (long long)(s / 86400),
			 (int)(s % 86400 / 3600));
}

void sc_fmt_span(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000;

	if (ms < 0)
		snprintf(buf, len, "-");
	else if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
}

void sc_fmt_user(int64_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (uid < 0 || uid > UINT32_MAX) {
		snprintf(buf, len, "-");
		return;
	}
	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "%s", res->pw_name);
	else
		snprintf(buf, len, "%lld", (long long)uid);
}

int64_t sc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One wait status in words: exit code e is e<<8, signal s is s. */
static void fmt_wait(int64_t w, char *buf, size_t len)
{
	if (w < 0)
		snprintf(buf, len, "not run");
	else if ((w & 0x7f) == 0)
		snprintf(buf, len, "exit %d", (int)((w >> 8) & 0xff));
	else
		snprintf(buf, len, "signal %d", (int)(w & 0x7f));
}

char *sc_fmt_rank_status(const json_t *arr)
{
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0, used = 0;
	size_t cap = 64;
	char *out = malloc(cap);

	if (!out)
		sc_die(SC_EXIT_FAILED, "out of memory");
	out[0] = '\0';
	/* Runs of equal status collapse: 1024 ranks that all exited 0 are
	 * one line, not a thousand. */
	for (size_t i = 0; i < n;) {
		const json_t *v = json_array_get(arr, i);
		int64_t w = json_is_integer(v) ? json_integer_value(v) : -1;
		size_t j = i + 1;
		char what[32], piece[96];
		int k;

		while (j < n) {
			const json_t *u = json_array_get(arr, j);
			int64_t x = json_is_integer(u) ? json_integer_value(u)
						       : -1;

			if (x != w)
				break;
			j++;
		}
		fmt_wait(w, what, sizeof(what));
		if (j - i == 1)
			k = snprintf(piece, sizeof(piece), "%s%zu:%s",
				     used ? "," : "", i, what);
		else
			k = snprintf(piece, sizeof(piece), "%s%zu-%zu:%s",
				     used ? "," : "", i, j - 1, what);
		while (used + (size_t)k + 1 > cap) {
			char *bigger = realloc(out, cap *= 2);

			if (!bigger)
				sc_die(SC_EXIT_FAILED, "out of memory");
			out = bigger;
		}
		memcpy(out + used, piece, (size_t)k + 1);
		used += (size_t)k;
		i = j;
	}
	if (!n)
		snprintf(out, cap, "-");
	return out;
}

/* ---- tables ------------------------------------------------------------- */

struct sc_table {
	int ncols;
	size_t nrows, cap; /* rows, header included */
	char **cells;      /* nrows x ncols */
	bool *right;
};

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		sc_die(SC_EXIT_FAILED, "out of memory");
	return d;
}

sc_table_t *sc_table_new(int ncols, const char *const *cols)
{
	sc_table_t *t = calloc(1, sizeof(*t));
	const char *heads[32];

	if (!t || ncols < 1 || ncols > 32)
		sc_die(SC_EXIT_FAILED, "out of memory");
	t->ncols = ncols;
	t->right = calloc((size_t)ncols, sizeof(bool));
	if (!t->right)
		sc_die(SC_EXIT_FAILED, "out of memory");
	for (int c = 0; c < ncols; c++) {
		t->right[c] = cols[c][0] == '>';
		heads[c] = cols[c] + t->right[c];
	}
	sc_table_row(t, heads);
	return t;
}

void sc_table_row(sc_table_t *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **c = realloc(t->cells, cap * (size_t)t->ncols *
						     sizeof(char *));

		if (!c)
			sc_die(SC_EXIT_FAILED, "out of memory");
		t->cells = c;
		t->cap = cap;
	}
	for (int c = 0; c < t->ncols; c++)
		t->cells[t->nrows * (size_t)t->ncols + (size_t)c] =
			xstrdup(cells[c]);
	t->nrows++;
}

void sc_table_print(sc_table_t *t)
{
	size_t *w = calloc((size_t)t->ncols, sizeof(size_t));

	if (!w)
		sc_die(SC_EXIT_FAILED, "out of memory");
	for (size_t r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			size_t n = strlen(t->cells[r * (size_t)t->ncols +
						   (size_t)c]);

			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		char **row = &t->cells[r * (size_t)t->ncols];
		int lastc = t->ncols - 1;

		/* Empty trailing cells print nothing, not blanks. */
		while (lastc > 0 && !row[lastc][0] && !t->right[lastc])
			lastc--;
		for (int c = 0; c <= lastc; c++) {
			const char *s = row[c];
			bool last = c == lastc;

			if (c)
				fputs("  ", stdout);
			if (t->right[c])
				printf("%*s", (int)w[c], s);
			else if (last) /* no trailing blanks */
				fputs(s, stdout);
			else
				printf("%-*s", (int)w[c], s);
		}
		fputc('\n', stdout);
	}
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
	free(w);
	free(t);
}

