/*
 * requests_int.h — what requests.c and requests_submit.c share (private
 * to them).
 */
#ifndef STORM_MMD_REQUESTS_INT_H
#define STORM_MMD_REQUESTS_INT_H

#include <stdint.h>

#include <jansson.h>

#include "clients.h"
#include "inputs.h"
#include "requests.h"

/* "run" (run 1) and "submit": set is the request's inputs once read
 * (NULL: the request has just come). */
void mmd_requests_submit(struct mmd_requests *rq, struct mmd_client *c,
			 json_t *req, int run, struct mmd_input_set *set);
/* The input set being received on connection conn, unlinked; NULL if
 * none. */
struct mmd_input_set *mmd_requests_set_take(struct mmd_requests *rq,
					    uint64_t conn);
/* "inputs_put": a peer replica's copy of a blob (push.h). */
void mmd_requests_inputs_put(struct mmd_requests *rq, struct mmd_client *c,
			     json_t *req);

#endif
