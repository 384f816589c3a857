/*
 * client.h — what every stormctl subcommand shares (private to cli/): the
 * invocation context, the one exit path with its documented codes, strict
 * number parsing, the connection to storm-mm and the request/reply
 * exchange, JSON accessors that never trust the reply's shape, and a small
 * aligned-table printer.
 *
 * Error handling in stormctl is deliberately terminal: a helper whose name
 * ends in _or_die() prints "stormctl: what: detail" and leaves through
 * sc_exit() with the matching code.  The _soft variants return a code and
 * text instead, for the places (cancelling from a signal, cancelling a list
 * of jobs) that must carry on after a failure.
 */
#ifndef STORMCTL_CLIENT_H
#define STORMCTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "storm_client.h"

/* Exit status (stormctl(1), EXIT STATUS).  For `run`, a job that ran and
 * exited non-zero passes its own code through instead. */
enum sc_exit_code {
	SC_EXIT_OK = STC_OK,           /* done */
	SC_EXIT_FAILED = STC_FAILED,   /* the job failed, or the manager
					* refused */
	SC_EXIT_USAGE = STC_USAGE,     /* bad option, number, operand or
					* config */
	SC_EXIT_UNREACH = STC_UNREACH, /* cannot reach, or lost, the manager */
	SC_EXIT_PROTO = STC_PROTO,     /* the manager sent something
					* unreadable */
};

/** The invocation: the client library's context (where the manager is,
 * who this client is) and stormctl's own global options.  One per
 * process, built by stormctl.c and passed to every handler. */
typedef struct sc_ctx {
	stc_ctx_t c;  /* libstorm-client (storm_client.h) */
	bool json;    /* --json */
} sc_ctx_t;

/** Leave stormctl with code: flushes stdout first, and a failed flush (a
 * full disk, a closed pipe) turns success into SC_EXIT_FAILED. */
_Noreturn void sc_exit(int code);
/** Print "stormctl: " + the formatted text + newline on stderr, then
 * sc_exit(code). */
_Noreturn void sc_die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** Print "stormctl: " + the formatted text + newline on stderr. */
void sc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Parse text as an unsigned decimal number in [min, max]: no sign, no
 * trailing characters, no overflow.  On failure exits SC_EXIT_USAGE with a
 * message naming cmd (NULL for a global option) and what (e.g. "option -n"
 * or "job id"). */
uint64_t sc_number_or_die(const char *cmd, const char *what,
			  const char *text, uint64_t min, uint64_t max);

/** Fill ctx->client_id (call once, before any request). */
void sc_client_init(sc_ctx_t *ctx);

/** Connect to a manager replica chosen by ctx (see stormctl(1), "Finding
 * the manager"): --socket, --manager, --managers, else from the
 * configuration every replica's socket under run_dir that exists here,
 * then every replica's `listen` address; starting at the one that
 * answered last and going round the list once.  Sets ctx->endpoint.
 * @return the connected fd, or an exit code negated (-SC_EXIT_USAGE for a
 * config problem, -SC_EXIT_UNREACH) with err filled in. */
int sc_connect(sc_ctx_t *ctx, char *err, size_t errlen);

/** Send req (an object; "client" and "seq" are added) as one REQUEST
 * frame.  @return 0 or -errno from st_frame_send(). */
int sc_send_request(sc_ctx_t *ctx, int fd, json_t *req);

/** Connect, send req, wait up to ctx->timeout_ms for one REPLY, close.
 * On "ok":true *reply holds it (caller decrefs).  @return SC_EXIT_OK, or
 * SC_EXIT_FAILED ("ok":false; err holds the manager's error),
 * SC_EXIT_UNREACH, SC_EXIT_PROTO, SC_EXIT_USAGE, with err filled in. */
int sc_call_soft(sc_ctx_t *ctx, json_t *req, json_t **reply, char *err,
		 size_t errlen);
/** sc_call_soft() that rides out a failover: after a broken connection,
 * no answer, or a refusal that means "go elsewhere" (no quorum, catching
 * up, outcome unknown), the same request (same client id and sequence)
 * goes to the next replica, until --timeout.  fdp non-NULL: the
 * connection is kept open for what follows the reply (run's output) and
 * returned there. */
int sc_request(sc_ctx_t *ctx, json_t *req, int *fdp, json_t **reply,
	       char *err, size_t errlen);
/** sc_call_soft() that dies on any failure, prefixing the message with
 * cmd.  Steals req. */
json_t *sc_call_or_die(sc_ctx_t *ctx, const char *cmd, json_t *req);

/** Read a REPLY frame from fd within timeout_ms and check its "ok"; as
 * sc_call_soft() otherwise. */
int sc_recv_reply(sc_ctx_t *ctx, int fd, int timeout_ms, json_t **reply,
		  char *err, size_t errlen);

/** Describe a failed frame operation for a human (what happened to the
 * connection, and what to do) and return the exit code it maps to. */
int sc_frame_error(const sc_ctx_t *ctx, int rc, char *err, size_t errlen);

/** Print v as indented JSON on stdout (--json). */
void sc_print_json(const json_t *v);

/* ---- reading a reply without trusting it -------------------------------- */

/** The string at key, or def when absent or not a string. */
const char *sc_jstr(const json_t *o, const char *key, const char *def);
/** The integer at key, or def when absent or not an integer. */
int64_t sc_jint(const json_t *o, const char *key, int64_t def);
/** The boolean at key, or def. */
bool sc_jbool(const json_t *o, const char *key, bool def);
/** The array at key, or NULL. */
json_t *sc_jarray(const json_t *o, const char *key);

/** Format epoch milliseconds as local "YYYY-MM-DD HH:MM:SS", "-" for 0. */
void sc_fmt_time(int64_t ms, char *buf, size_t len);
/** Format a duration in ms as [D-]HH:MM:SS, "-" when negative. */
void sc_fmt_elapsed(int64_t ms, char *buf, size_t len);
/** Format a time to come (epoch ms) relative to now_ms, to the second:
 * "in 12s", "in 5m03s", "in 2h03m", "in 3d04h"; "now" when it is not
 * after now_ms; "-" when at_ms <= 0 (unknown). */
void sc_fmt_until(int64_t at_ms, int64_t now_ms, char *buf, size_t len);
/** Format a duration in ms coarsely for a narrow column: "45s", "12m",
 * "5h", "3d" (whole units, rounded down); "-" when negative. */
void sc_fmt_span(int64_t ms, char *buf, size_t len);
/** Host names (a JSON array of strings) folded like nm[1-3,7]. */
void sc_fmt_hostlist(const json_t *names, char *buf, size_t len);
/** The user name of uid, or the number when it has none; "-" when < 0. */
void sc_fmt_user(int64_t uid, char *buf, size_t len);
/** Wall-clock now in epoch milliseconds (the manager's *_ms fields). */
int64_t sc_now_ms(void);
/** Summarise a rank_status array ("0-3:exit 0,4:signal 9"), malloc'd. */
char *sc_fmt_rank_status(const json_t *arr);

/* ---- aligned tables ----------------------------------------------------- */

typedef struct sc_table sc_table_t;

/** A table whose header row is the ncols names in cols; a name starting
 * with '>' is right-aligned (the '>' is not printed).  Dies on ENOMEM. */
sc_table_t *sc_table_new(int ncols, const char *const *cols);
/** Append a row of ncols strings (copied). */
void sc_table_row(sc_table_t *t, const char *const *cells);
/** Print with each column as wide as its widest cell, then free. */
void sc_table_print(sc_table_t *t);

#endif /* STORMCTL_CLIENT_H */
