/*
 * web.h — storm-web's parts, private to the program: the view shared
 * between the poller (main thread) and the HTTP server (libmicrohttpd's
 * threads), the poller, and the server.
 *
 * Threads: main.c's thread polls the manager and publishes a new view;
 * libmicrohttpd runs one thread per connection (an event stream blocks
 * in its reader until the view changes).  Everything they share is in
 * struct web_view, under its one mutex; nothing else is shared.
 */
#ifndef STORM_WEB_H
#define STORM_WEB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <storm_client.h>

/* ---- the view (one per process) ------------------------------------------ */

struct web_view {
	pthread_mutex_t mu;
	pthread_cond_t changed; /* broadcast when doc changes or on stop */
	char *doc;              /* the JSON document, one line; never NULL
				 * once web_view_init() returned 0 */
	size_t len;
	uint64_t version;       /* +1 per change of doc */
	int stopping;           /* streams end */
	int streams;            /* event streams open (bounded) */
};

/** 0, or -ENOMEM / -errno of the mutex or condition. */
int web_view_init(struct web_view *v);
/** Replace the document with doc (taken: freed by the view) if it
 * differs; wakes the streams then.  Main thread. */
void web_view_publish(struct web_view *v, char *doc);
/** Streams end; called before the server stops. */
void web_view_stop(struct web_view *v);
void web_view_fini(struct web_view *v);

/* ---- the poller (poll.c) -------------------------------------------------- */

struct web_poll {
	stc_ctx_t c;      /* the failover client: one thread (main) */
	json_t *last;     /* the last complete view, for when none answers */
	char error[2048]; /* why the last poll failed, or "" */
};

/** One round: queue, nodes, matrix, managers from whichever replica
 * answers; the document to publish (caller frees), NULL only out of
 * memory.  When no replica answers the last view is kept, with "ok":
 * false and "error" saying why. */
char *web_poll_once(struct web_poll *p);
void web_poll_fini(struct web_poll *p);

/* ---- the HTTP server (http.c) --------------------------------------------- */

struct web_http;

/** Serve on the listening socket lfd (taken, even on failure) from
 * libmicrohttpd's threads.  @return 0, or -EIO with err. */
int web_http_start(struct web_http **out, int lfd, struct web_view *v,
		   char *err, size_t errlen);
/** Ends the streams (web_view_stop first) and joins every thread.
 * Accepts NULL. */
void web_http_stop(struct web_http *h);

/** The page (page.html, embedded at build time: page.c). */
extern const char web_page[];
extern const size_t web_page_len;

#endif
