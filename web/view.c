/*
 * view.c — the one document storm-web serves, shared between the poller
 * (which replaces it) and the HTTP threads (which copy it out).  A
 * version number counts changes, so that an event stream sends each
 * change once and nothing when the cluster stood still.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

int web_view_init(struct web_view *v)
{
	int e;

	*v = (struct web_view){ .doc = strdup("{\"ok\":false,\"error\":"
					      "\"starting\"}") };
	if (!v->doc)
		return -ENOMEM;
	v->len = strlen(v->doc);
	if ((e = pthread_mutex_init(&v->mu, NULL))) {
		free(v->doc);
		return -e;
	}
	if ((e = pthread_cond_init(&v->changed, NULL))) {
		pthread_mutex_destroy(&v->mu);
		free(v->doc);
		return -e;
	}
	return 0;
}

void web_view_publish(struct web_view *v, char *doc)
{
	pthread_mutex_lock(&v->mu);
	if (strcmp(doc, v->doc)) {
		free(v->doc);
		v->doc = doc;
		v->len = strlen(doc);
		v->version++;
		doc = NULL;
		pthread_cond_broadcast(&v->changed);
	}
	pthread_mutex_unlock(&v->mu);
	free(doc);
}

void web_view_stop(struct web_view *v)
{
	pthread_mutex_lock(&v->mu);
	v->stopping = 1;
	pthread_cond_broadcast(&v->changed);
	pthread_mutex_unlock(&v->mu);
}

void web_view_fini(struct web_view *v)
{
	pthread_cond_destroy(&v->changed);
	pthread_mutex_destroy(&v->mu);
	free(v->doc);
	v->doc = NULL;
}
