/*
 * requests.h — the client protocol's requests (docs/protocol.md): a table
 * of request types (name -> handler, whether it needs an authenticated
 * identity, its largest frame), MUNGE authentication over TCP, and the
 * answers: a write becomes an mm_op proposed through the group and is
 * answered once applied and durable; a read looks at the state directly.
 * Also what clients wait for: a `run`'s output stream and end, `wait`.
 */
#ifndef STORM_MMD_REQUESTS_H
#define STORM_MMD_REQUESTS_H

#include <stdint.h>

#include <storm_manager.h>
#include <storm_proto.h>

#include "auth.h"
#include "clients.h"
#include "metrics.h"
#include "inputs.h"
#include "jobrec.h"
#include "push.h"
#include "stdin.h"
#include "repl.h"
#include "strobe.h"

/* Kinds of client writes (the repl's cookie says which it was). */
enum { MMD_REQ_SUBMIT = 1, MMD_REQ_RUN, MMD_REQ_CANCEL,
       MMD_REQ_CRED, /* a TCP client's credential (MM_OP_CRED) */
       MMD_REQ_CKPT, /* a checkpoint asked for (MM_OP_CKPT_REQUEST) */
       MMD_REQ_RESTART, /* a restart from an epoch (MM_OP_CKPT_RESTART) */
       MMD_REQ_NODE /* a node drained or resumed (MM_OP_NODE_DRAIN) */ };

/* Expected starts of the first pending jobs (for queue and show):
 * replaying the scheduler costs O(live jobs) per round, so one result
 * serves every request until the state changes, and is computed again
 * at most once a second (a queue polled during a burst must not stall
 * the strobe). */
#define MMD_EXPECT_MAX 256
struct mmd_expect {
	int valid;        /* computed once at least */
	uint64_t applied; /* the applied index it was computed at */
	uint64_t at_ms;   /* mmd_strobe_now_ms() then */
	int n;            /* entries, in queue (id) order */
	uint32_t id[MMD_EXPECT_MAX];
	uint64_t start_ms[MMD_EXPECT_MAX]; /* state time; 0: unknown */
};

struct mmd_pending_auth;

#define MMD_REQ_TYPES_MAX 32 /* request types (requests.c's table) */

struct mmd_requests {
	const st_config_t *cfg;
	const st_host_t *host;
	mm_state_t **st;
	struct mmd_repl *repl;
	struct mmd_strobe *sb;
	struct mmd_jobs *jobs;
	struct mmd_clients *clients;
	struct mmd_stdin *sin;              /* run clients' stdin (stdin.h) */
	struct mmd_expect expect;
	struct mmd_auth auth;               /* the MUNGE worker */
	struct mmd_pending_auth *pending;   /* requests waiting for it */
	struct mmd_inputs inputs;           /* jobs' inputs: workers, store */
	struct mmd_push push;               /* ... copied to the replicas */
	struct mmd_input_set *sets;         /* input sets being received
					     * (INPUT frames) */
	/* each request type's latency, receipt to reply (metrics) */
	struct mmd_phist lat[MMD_REQ_TYPES_MAX];
};

/* Its series for the metrics page: storm_request_seconds{op=...}. */
void mmd_requests_metrics(const struct mmd_requests *rq,
			  struct mmd_text *t);

/* The auth worker's eventfd is readable: requests whose credential
 * checked out go on, the others are refused. */
void mmd_requests_auth_done(struct mmd_requests *rq);
/* Drop the requests waiting for credentials (shutdown). */
void mmd_requests_fini(struct mmd_requests *rq);
/* The inputs worker's eventfd is readable: submissions whose inputs
 * were read go on (proposed), the others are refused. */
void mmd_requests_inputs_done(struct mmd_requests *rq);
/* An INPUT frame from c (the clients' hook): len untrusted bytes. */
void mmd_requests_input(struct mmd_requests *rq, struct mmd_client *c,
			const uint8_t *p, uint32_t len);
/* The push worker's eventfd is readable: submissions whose inputs a
 * majority of the replicas hold are proposed, the others refused. */
void mmd_requests_pushed(struct mmd_requests *rq);
/* A whole request frame from c (the clients' hook): type
 * ST_FRAME_REQUEST (the JSON) or ST_FRAME_SEALED (a credential and the
 * JSON, docs/protocol.md §2.6), len bytes of untrusted payload. */
void mmd_requests_handle(struct mmd_requests *rq, struct mmd_client *c,
			 int type, const char *text, uint32_t len);
/* c goes away: its request waiting for the cluster's credential check is
 * dropped. */
void mmd_requests_client_gone(struct mmd_requests *rq, struct mmd_client *c);
/* A write of c's was applied and is durable here, or failed (the
 * replication glue's hook). */
void mmd_requests_answer(struct mmd_requests *rq, struct mmd_client *c,
			 int kind, uint32_t job, const mm_result_t *res);
/* A job's output (the mailboxes' hook): to whoever runs it. */
void mmd_requests_output(struct mmd_requests *rq, uint32_t job,
			 uint32_t rank, int stream, const uint8_t *data,
			 uint32_t len);
/* An operation was applied: jobs watched by a `run` that ended get their
 * END frame. */
void mmd_requests_applied(struct mmd_requests *rq);
/* Answer the waits whose condition holds or whose time is up. */
void mmd_requests_waits(struct mmd_requests *rq);

#endif
