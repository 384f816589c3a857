/*
 * bsend.c — buffered mode (MPI-3.1 §3.6): Buffer_attach/detach and the
 * buffered sends.  A buffered send packs its message into the attached
 * buffer, posts it from there and returns: it never waits for a receive.
 * The space is the message's until the engine has read it (a send of at
 * most BCS_EAGER_MAX bytes travels in its descriptor, so its space is
 * free again at once); a message with no room left fails with
 * MPI_ERR_BUFFER, as the standard says, after the space of sends that
 * completed meanwhile is taken back.  Each message accounts
 * MPI_BSEND_OVERHEAD bytes besides its data, so a buffer sized by the
 * standard's rule (data + MPI_BSEND_OVERHEAD per message, Pack_size for
 * the data) always suffices.  The bookkeeping lives here, not in the
 * program's buffer, which the program might overwrite.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* A message in the buffer, by offset. */
struct held {
	struct held *next;
	size_t off, len;
	MPI_Request req;
};

static uint8_t *buffer;      /* attached, or NULL */
static size_t buffer_size;
static struct held *held;

/* Take back the space of sends the engine has finished with. */
static void reclaim(void)
{
	bcs_rt_poll();
	for (struct held **pp = &held, *h; (h = *pp);) {
		struct bcs_req *r = bcs_req_get(h->req);

		if (r && !r->done) {
			pp = &h->next;
			continue;
		}
		bcs_req_finish(&h->req, MPI_STATUS_IGNORE);
		*pp = h->next;
		free(h);
	}
}

/* First fit: the offset of need free bytes, or SIZE_MAX. */
static size_t find_room(size_t need, struct held ***at)
{
	size_t start = 0;
	struct held **pp;

	for (pp = &held; *pp; pp = &(*pp)->next) {
		if ((*pp)->off - start >= need)
			break;
		start = (*pp)->off + (*pp)->len;
	}
	*at = pp;
	if (!*pp && buffer_size - start < need)
		return SIZE_MAX;
	return start;
}

static size_t in_use(void)
{
	size_t n = 0;

	for (struct held *h = held; h; h = h->next)
		n += h->len;
	return n;
}

int bcs_bsend(const char *fn, struct bcs_comm *c, const void *buf, int count,
	      MPI_Datatype dt, int dest_world, int tag, MPI_Request *req)
{
	size_t bytes = (size_t)count * bcs_dt_size(dt), need, off;
	struct held **at, *h;
	struct bcs_req *done;
	int rc;

	if (!buffer)
		return bcs_error(c, fn, MPI_ERR_BUFFER, "no buffer is "
				 "attached: call MPI_Buffer_attach with room "
				 "for %zu bytes (data and MPI_BSEND_OVERHEAD)",
				 bytes + MPI_BSEND_OVERHEAD);
	if (bytes > INT_MAX)
		return bcs_error(c, fn, MPI_ERR_COUNT, "a message of %zu "
				 "bytes (at most %d buffered)", bytes,
				 INT_MAX);
	need = bytes + MPI_BSEND_OVERHEAD;
	reclaim();
	if ((off = find_room(need, &at)) == SIZE_MAX)
		return bcs_error(c, fn, MPI_ERR_BUFFER, "no room for %zu "
				 "bytes (data + MPI_BSEND_OVERHEAD) in the "
				 "attached buffer of %zu (%zu held by unsent"
				 " messages)", need, buffer_size, in_use());
	if (!(h = calloc(1, sizeof(*h))))
		return bcs_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
	if (bytes && bcs_dt_contig(dt))
		memcpy(buffer + off, buf, bytes);
	else if (bytes)
		bcs_dt_pack(dt, count, buf, buffer + off);
	rc = bcs_isend(buffer + off, (int)bytes, MPI_BYTE, dest_world, tag,
		       c->ctx, c, 0, &h->req);
	if (rc) {
		free(h);
		return bcs_error(c, fn, rc, "out of requests or memory");
	}
	h->off = off;
	h->len = need;
	h->next = *at;
	*at = h;
	/* the program's request is complete: its data is ours now */
	if (!(done = bcs_req_new(R_DONE, c)))
		return bcs_error(c, fn, MPI_ERR_INTERN, "out of requests");
	done->done = 1;
	*req = bcs_req_handle(done);
	return MPI_SUCCESS;
}

static int all_sent(void *ctx)
{
	(void)ctx;
	for (struct held *h = held; h; h = h->next) {
		struct bcs_req *r = bcs_req_get(h->req);

		if (r && !r->done)
			return 0;
	}
	return 1;
}

void bcs_bsend_flush(void)
{
	if (bcs_rt_wait(all_sent, NULL))
		bcs_fatal(NULL, "%s", bcs_rt_failed() ? bcs_rt_failed() :
			  "the job failed");
	reclaim();
}

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buf, int size)
{
	BCS_NEED_INIT("MPI_Buffer_attach");
	if (buffer)
		return bcs_error(NULL, "MPI_Buffer_attach", MPI_ERR_BUFFER,
				 "a buffer of %zu bytes is attached already "
				 "(MPI_Buffer_detach it first)", buffer_size);
	if (size < 0 || (size && !buf))
		return bcs_error(NULL, "MPI_Buffer_attach", MPI_ERR_ARG,
				 "buffer %p of %d bytes", buf, size);
	buffer = buf;
	buffer_size = (size_t)size;
	return MPI_SUCCESS;
}

/* Blocks until every message in the buffer is sent (MPI-3.1 §3.6.1);
 * buffer_addr is really a void ** (the standard's C binding). */
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	BCS_NEED_INIT("MPI_Buffer_detach");
	if (!buffer_addr || !size)
		return bcs_error(NULL, "MPI_Buffer_detach", MPI_ERR_ARG,
				 "buffer_addr or size is NULL");
	bcs_bsend_flush();
	*(void **)buffer_addr = buffer;
	*size = (int)buffer_size;
	buffer = NULL;
	buffer_size = 0;
	return MPI_SUCCESS;
}
