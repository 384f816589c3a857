/*
 * storm_client.h — libstorm-client: talk to a Storm cluster's Machine
 * Manager the way stormctl does, from any program (a web dashboard, a
 * batch front end).  It finds a replica (a given socket or address, else
 * the configuration's replicas: their local sockets first, then their
 * TCP listen addresses), sends one request (adding "client" and "seq",
 * and over TCP a MUNGE credential), reads its reply, and rides out a
 * failover: after a broken connection, no answer, or a refusal that
 * means "go elsewhere" (no quorum, catching up, outcome unknown) the same
 * request goes to the next replica until the timeout, so a write is
 * applied exactly once.  It prints nothing and exits nothing.
 *
 * Prefix stc_.  One context per thread.  docs/protocol.md has the
 * requests and replies.
 */
#ifndef STORM_CLIENT_H
#define STORM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Outcomes (stormctl passes them on as its exit status). */
enum stc_code {
	STC_OK = 0,      /* answered, "ok": true */
	STC_FAILED = 1,  /* the manager refused ("ok": false; see err) */
	STC_USAGE = 2,   /* a bad option or configuration */
	STC_UNREACH = 3, /* no replica could be reached, or it went away */
	STC_PROTO = 4,   /* the manager sent something unreadable */
};

#define STC_MAX_EPS 64
/* inputs of one job at most (one sendmsg of descriptors) */
#define STC_MAX_INPUTS 253
struct stc_ep {
	int is_unix;
	char addr[1200];
};

/** Where to find the manager and who this client is.  Zero it, set what
 * applies, call stc_init(). */
typedef struct stc_ctx {
	const char *config_path; /* the cluster's storm.conf (to find replicas) */
	const char *socket_path; /* or one replica's unix socket, */
	const char *manager;     /* or one replica's HOST:PORT, */
	const char *managers;    /* or several, "H:P,H:P,..." */
	char munge_socket[1024]; /* munged's socket; "": the configuration's */
	int timeout_ms;          /* for connecting and each reply */
	/* filled by the library */
	struct stc_ep eps[STC_MAX_EPS];
	int neps, ep_next;       /* ep_next: the one to try first */
	int last_errno;          /* of the last refusal ("errno") */
	char client_id[320];     /* "<hostname>:<pid>:<random hex>" */
	int64_t seq;             /* last request number used */
	char endpoint[4200];     /* "socket PATH" / "address H:P", for errors */
	char note[1024];         /* a message for the user the last call left
				  * besides its err (e.g. MUNGE), or "" */
	/* a run/submit's inputs, opened by the caller with its own rights:
	 * the program, then each --file (NULL/0: none).  On the unix
	 * socket they pass as descriptors (SCM_RIGHTS, "fds"); over TCP
	 * their bytes follow the request in INPUT frames ("inputs").
	 * The caller keeps and closes them. */
	const int *input_fds;
	int ninputs;
	/* internal: a reply read early (a refusal before the inputs were
	 * sent), handed out by the next stc_recv_reply() */
	uint8_t *early;
	uint32_t early_len;
} stc_ctx_t;

/** Set ctx's client id (once, before any request). */
void stc_init(stc_ctx_t *ctx);
/** Connect to a replica (the one that answered last first, then round
 * the list once).  @return the fd, or a negated stc_code with err. */
int stc_connect(stc_ctx_t *ctx, char *err, size_t errlen);
/** Send req (an object; "client" and "seq" added unless present) as one
 * REQUEST frame.  @return 0 or -errno. */
int stc_send_request(stc_ctx_t *ctx, int fd, json_t *req);
/** Read one REPLY within timeout_ms and check "ok".  On STC_OK *reply
 * holds it (caller decrefs). */
int stc_recv_reply(stc_ctx_t *ctx, int fd, int timeout_ms, json_t **reply,
		   char *err, size_t errlen);
/** A frame-level error rc (-ETIMEDOUT, -ECONNRESET, ...) as an stc_code
 * and a message naming the endpoint. */
int stc_frame_error(const stc_ctx_t *ctx, int rc, char *err, size_t errlen);
/** One request, riding out a failover until timeout_ms.  fdp non-NULL:
 * the connection is kept open for what follows the reply (run's output)
 * and returned there. */
int stc_request(stc_ctx_t *ctx, json_t *req, int *fdp, json_t **reply,
		char *err, size_t errlen);
/** stc_request() without a connection to keep. */
int stc_call_soft(stc_ctx_t *ctx, json_t *req, json_t **reply, char *err,
		  size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
