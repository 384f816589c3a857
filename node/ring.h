/*
 * ring.h — the node's side of staging: the chunks of a job's stream
 * arrive in a ring of slots in global memory (XFER-AND-SIGNAL from the
 * manager); the manifest at its head is decoded, then each chunk is
 * written straight into its file on the RAM disk and counted in
 * gv_consumed, which the manager's COMPARE-AND-WRITE reads before it
 * reuses the slot.
 *
 * The ring knows nothing of jobs beyond the stream: it tells its owner
 * through handlers when a manifest decoded (the owner takes it and says
 * where the files go), when a stream failed, and when every file is in.
 */
#ifndef STORM_NM_RING_H
#define STORM_NM_RING_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>
#include <storm_proto.h>

struct nm_ring_ops {
	/* job's manifest decoded: the handler takes m and returns the
	 * directory its files go into (kept until the stream ends), or
	 * NULL: no memory, the stream fails */
	const char *(*manifest)(void *ctx, uint32_t job, st_manifest_t *m);
	/* the stream failed (why says where and why); for a job whose
	 * manifest was taken, or one whose manifest never decoded */
	void (*failed)(void *ctx, uint32_t job, int taken, const char *why);
	/* every file is in, and the directory is the job's user's */
	void (*written)(void *ctx, uint32_t job);
};

struct nm_ring {
	sp_world_t *w;
	const uint8_t *gmem;
	const st_layout_t *lay;
	const char *node;      /* this node's name, for messages */
	struct nm_ring_ops ops;
	void *ctx;
	/* the stream arriving */
	uint32_t job, next, total, last_job;
	uint32_t inc, last_inc;  /* the stream's incarnation (a restart's) */
	uint8_t *mf;           /* the manifest, until it decodes */
	size_t mf_len, mf_cap;
	const st_manifest_t *m; /* decoded, the owner's: the files to write */
	const char *dir;
	uint32_t file;         /* the file being written, at foff */
	uint64_t foff;
	int fd, failed;
};

void nm_ring_init(struct nm_ring *r, sp_world_t *w, const st_layout_t *lay,
		  const char *node, const struct nm_ring_ops *ops, void *ctx);
void nm_ring_fini(struct nm_ring *r);
/* Take every chunk that has arrived (main loop, on ST_EV_CHUNK). */
void nm_ring_take(struct nm_ring *r);
/* The owner drops job: the rest of its stream is counted, not written. */
void nm_ring_forget(struct nm_ring *r, uint32_t job);
/* Remove a job's files and directory. */
void nm_ring_remove(const char *dir, const st_manifest_t *m);

#endif
