/*
 * clients.h — storm-mm's client connections: the unix socket (peer uid by
 * SO_PEERCRED) and the TCP listener, frame assembly without blocking the
 * loop, and each client's outbox: frames the socket has not taken yet,
 * written as it takes them (a paused `stormctl run` must not stall the
 * strobe).  What a request means is requests.c's; a whole request frame
 * goes to hooks.request.
 */
#ifndef STORM_MMD_CLIENTS_H
#define STORM_MMD_CLIENTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <qb/qbloop.h>

#include <storm_proto.h>

#include "phist.h"

#define MMD_OUT_MAX (16u << 20) /* a client this far behind is dropped */
/* A TCP connection's frames before its credential checked out. */
#define MMD_UNAUTH_FRAME_MAX (16u << 10)
/* Descriptors a unix client may pass with one request (SCM_RIGHTS, one
 * sendmsg: the kernel's SCM_MAX_FD). */
#define MMD_CLIENT_FDS 253u

struct mmd_clients;

struct mmd_client {
	struct mmd_client *next;
	struct mmd_clients *set;
	uint64_t id;         /* this connection's number (never reused) */
	int fd;
	uint32_t uid, gid;
	int tcp;             /* over TCP: needs a MUNGE credential */
	int authed;          /* uid/gid established (unix: at accept) */
	int inflight;        /* a request is being answered: until its
			      * REPLY frame, no other is read */
	char addr[64];       /* TCP: the peer's address */
	uint64_t since_ms, last_ms; /* accepted; last request or reply */
	uint64_t frame_ms;   /* the current frame's first byte; 0: none */
	uint64_t out_ms;     /* the outbox last moved (or filled from
			      * empty): a client that stops reading is
			      * closed after client_idle_ms */
	uint64_t client_key; /* hash of (uid, the request's "client") */
	uint64_t seq;        /* the request's "seq" */
	uint64_t anon_seq;   /* requests without "client": own numbering */
	uint8_t hdr[ST_FRAME_HDR];
	int type;            /* the frame being read */
	uint32_t got, need;  /* bytes of header+payload read / expected */
	uint8_t *buf;
	uint32_t buf_cap;
	uint8_t *out;        /* frames not yet taken by the socket */
	size_t out_len, out_cap;
	uint32_t watch_job;  /* run: streams this job's output, then END */
	uint32_t stdin_job;  /* run: STDIN frames for this job are due
			      * (stdin.h) */
	int stdin_want;      /* run: its request asked "stdin": "0" */
	int paused;          /* not read: its last STDIN frame waits */
	uint32_t wait_up;    /* wait: reply once this many nodes are UP */
	uint32_t wait_job;   /* wait: reply once this job has ended */
	int wait_down;       /* wait_up counts nodes DOWN instead */
	uint64_t wait_until_ms;
	int closing;
	/* descriptors that came with the request being read (unix); a
	 * request takes them, the rest are closed once it is handled */
	int fds[MMD_CLIENT_FDS];
	uint32_t nfds;
	int fds_over;        /* more came than MMD_CLIENT_FDS */
	uint64_t input_left; /* TCP: INPUT frame bytes still expected */
	/* the request being answered: its latency goes to lat (its kind's
	 * histogram, set by whoever dispatched it) at its REPLY frame */
	struct mmd_phist *lat;
	uint64_t req_ns;
};

struct mmd_clients_hooks {
	/* a whole request frame of type ST_FRAME_REQUEST or
	 * ST_FRAME_SEALED: text is NUL-terminated, len bytes */
	void (*request)(void *ctx, struct mmd_client *c, int type,
			const char *text, uint32_t len);
	/* a whole INPUT frame (TCP, while c->input_left was set): len
	 * bytes, already taken off c->input_left */
	void (*input)(void *ctx, struct mmd_client *c, const uint8_t *p,
		      uint32_t len);
	/* a whole STDIN frame (while c->stdin_job is set): len bytes, at
	 * most ST_STDIN_FRAME_MAX */
	void (*stdin_frame)(void *ctx, struct mmd_client *c,
			    const uint8_t *p, uint32_t len);
	/* c goes away: nothing may refer to it after this */
	void (*gone)(void *ctx, struct mmd_client *c);
	void *ctx;
};

struct mmd_clients {
	qb_loop_t *loop;
	const st_config_t *cfg;
	struct mmd_clients_hooks hooks;
	uint64_t next_id;
	uint32_t n;
	int spare_fd;        /* /dev/null, given up to accept-and-close one
			      * connection when descriptors run out */
	int unix_fd, tcp_fd;
	char sock_path[1100];
	struct mmd_client *list;
};

/* Listen on cfg's socket for manager host (and its TCP address, if
 * any).  @return 0, or -errno with err filled. */
int mmd_clients_listen(struct mmd_clients *set, qb_loop_t *loop,
		       const st_config_t *cfg, const st_host_t *host,
		       const struct mmd_clients_hooks *hooks, char *err,
		       size_t errlen);
void mmd_clients_close(struct mmd_clients *set);
/* Drop the clients whose stream ended, and those past their deadlines:
 * idle (client_idle_ms), a frame or an authentication not done within
 * client_frame_ms (called each slice). */
void mmd_clients_reap(struct mmd_clients *set);
/* The connection numbered id, or NULL. */
struct mmd_client *mmd_clients_find(struct mmd_clients *set, uint64_t id);
/* c (TCP) proved uid/gid: it counts against that uid's connections from
 * now on.  @return 0, or -EUSERS (the uid has clients_per_user already:
 * refused and answered). */
int mmd_client_authed(struct mmd_client *c, uint32_t uid, uint32_t gid);


/* One frame to c, queued if the socket does not take it now. */
int mmd_client_send(struct mmd_client *c, int type, const void *p,
		    uint32_t len);
/* o as one JSON frame (o is consumed). */
int mmd_client_send_json(struct mmd_client *c, int type, json_t *o);
/* {"ok": false, "error": ..., "errno": rc} */
int mmd_client_reply_err(struct mmd_client *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Stop (1) or go on (0) reading c: backpressure while what it sent
 * waits.  A hang-up is still seen while paused. */
void mmd_client_pause(struct mmd_client *c, int paused);
/* Whether c has nothing left to do and may be dropped. */
int mmd_client_idle(const struct mmd_client *c);

#endif
