/*
 * inputs.h — a job's program and --file inputs as the client handed them
 * over (docs/security.md §2): over the unix socket as descriptors the
 * client opened with its own rights (SCM_RIGHTS), over TCP as bytes it
 * sent itself (INPUT frames, docs/protocol.md §2.7).  The manager never
 * opens a user's path for them.
 *
 * The bytes go to a store, a private directory of this replica
 * (STATE_DIR/NAME/inputs, 0700), content-addressed: each input is a
 * file named by the hex SHA-256 of its bytes (a "blob"), so the same
 * program submitted a thousand times is kept once, and any replica
 * holding a blob can stage every job that names it.  A set is first
 * received into its own directory tmp-ID, hashed as it comes, then each
 * input moves to its blob.  The job record carries the digests (op
 * SUBMIT_INPUTS); push.h copies the blobs to a majority of the replicas
 * before the job is proposed, fetch.h asks peers for a blob missing
 * here.  A blob no PENDING or STAGING job names is removed once it has
 * not been touched for MMD_BLOB_GRACE_MS (stored, pushed or asked for
 * again refreshes it): long enough for a set between its store and its
 * job's proposal.
 *
 * Descriptors are read by MMD_INPUTS_WORKERS threads, never by the main
 * loop: a FIFO is refused by fstat() before any read, and a slow file (a
 * hung network file system) holds one worker, not the strobe (sets are
 * taken in order; only when every worker is held do the others wait).
 * Every set is bounded by the per-job cap (max_input_mib): counted as
 * bytes come, before they are kept.
 *
 * Set life: READING (worker, or INPUT frames) -> READ, stored as blobs
 * (mmd_inputs_next, or the last INPUT frame) -> pushed (push.h) -> the
 * SUBMIT proposed, the set freed.  Only the main loop touches a set
 * outside the worker's queue.
 */
#ifndef STORM_MMD_INPUTS_H
#define STORM_MMD_INPUTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sodium.h>
#include <storm_manager.h>

/* program + files of one job: one sendmsg's worth of descriptors
 * (the kernel's SCM_MAX_FD) */
#define MMD_INPUTS_MAX 253u
#define MMD_INPUTS_QUEUE 1024u /* sets waiting for the workers, at most */
#define MMD_INPUTS_WORKERS 4 /* one slow file holds one of them */
#define MMD_BLOB_GRACE_MS (10u * 60u * 1000u)
#define MMD_BLOB_HEX (2u * MM_INPUT_SHA256_BYTES + 1u) /* with its NUL */

struct mmd_input_set {
	struct mmd_input_set *next;
	uint64_t id;          /* its directory: tmp-ID */
	uint64_t conn;        /* the client connection's number */
	uint32_t n;           /* inputs: the program, then the files */
	int *fds;             /* unix: the client's descriptors (owned) */
	char **names;         /* the client's paths, for messages */
	/* each input: its bytes, permission bits and digest (the sizes
	 * and modes a TCP request announced, checked as bytes come) */
	uint64_t *sizes;
	uint32_t *modes;
	uint8_t (*sha)[MM_INPUT_SHA256_BYTES];
	/* TCP: where the bytes are */
	uint32_t cur;         /* the input being received */
	uint64_t cur_left;    /* its bytes still to come */
	uint64_t left;        /* every input's bytes still to come */
	int out_fd;           /* the spool file being written, or -1 */
	crypto_hash_sha256_state hs; /* of the input being received */
	/* an inputs_put from a peer replica: one input, whose digest the
	 * peer claimed (checked once its bytes are in) */
	int put;
	uint8_t claimed[MM_INPUT_SHA256_BYTES];
	/* result */
	int rc;               /* 0 or -errno */
	char err[640];        /* rc != 0: what, where, what to do */
	uint64_t bytes;       /* read */
	int stored;           /* the inputs are blobs now */
	/* the request it belongs to (requests.c's) */
	json_t *req;
	int run;
	uint32_t delay_ms;    /* test only: wait this long before reading */
};

struct mmd_inputs {
	char dir[1200];       /* the store */
	uint64_t cap;         /* bytes per job (max_input_mib) */
	uint32_t cap_mib;
	uint32_t delay_ms;    /* test only (STORM_TEST_INPUT_DELAY_MS): the
			       * first set read waits this long */
	uint64_t next_id;
	pthread_t thread[MMD_INPUTS_WORKERS];
	int started, stop;    /* started: threads running */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mmd_input_set *in, **in_tail, *out, **out_tail;
	uint32_t queued;
	int efd;              /* readable when sets were read */
};

/* Make the store (0700, checked like every daemon directory), remove
 * the sets an earlier run left half received, start the workers.
 * @return 0 or -errno with err filled. */
int mmd_inputs_start(struct mmd_inputs *in, const char *dir,
		     uint32_t cap_mib, char *err, size_t errlen);
/* Stop the workers; sets queued are dropped (their directories too). */
void mmd_inputs_stop(struct mmd_inputs *in);

/* A set for conn of n inputs named names[] (copied); fds (n of them, or
 * NULL for TCP) are taken over: closed by mmd_inputs_free().
 * @return the set or NULL (out of memory: fds closed). */
struct mmd_input_set *mmd_inputs_new(struct mmd_inputs *in, uint64_t conn,
				     uint32_t n, int *fds,
				     const char *const *names);
/* Queue a set of descriptors for the workers.  @return 0, -EAGAIN (the
 * queue holds MMD_INPUTS_QUEUE), or the error of making its directory;
 * on failure the set is the caller's still. */
int mmd_inputs_read(struct mmd_inputs *in, struct mmd_input_set *s);
/* The next set the workers are done with (stored, or rc set): 1 and
 * *s, or 0. */
int mmd_inputs_next(struct mmd_inputs *in, struct mmd_input_set **s);

/* TCP: begin receiving s->sizes[]/s->modes[] (set by the caller, each
 * mode <= 0777).  The caller checked the sum against the cap.
 * @return 0 or -errno (s->err says). */
int mmd_inputs_recv_begin(struct mmd_inputs *in, struct mmd_input_set *s);
/* TCP: len bytes of the stream (at most s->left).  A write error is
 * kept in s->rc and the rest is counted, not written.  @return 1 once
 * every byte came (then stored as blobs, or rc set), else 0. */
int mmd_inputs_recv(struct mmd_inputs *in, struct mmd_input_set *s,
		    const uint8_t *p, uint32_t len);

/* Free s and remove its directory (the blobs it stored stay). */
void mmd_inputs_free(struct mmd_inputs *in, struct mmd_input_set *s);

/* The hex name of a digest (MMD_BLOB_HEX bytes with the NUL). */
void mmd_blob_hex(const uint8_t sha[MM_INPUT_SHA256_BYTES], char *hex);
/* Parse 64 hex digits: 0, or -EINVAL. */
int mmd_blob_parse(const char *hex, uint8_t sha[MM_INPUT_SHA256_BYTES]);
/* The blob of sha, read-only: the descriptor, or -ENOENT (not here). */
int mmd_blob_open(const struct mmd_inputs *in,
		  const uint8_t sha[MM_INPUT_SHA256_BYTES]);
/* Whether the blob of sha is here with size bytes; if so its grace
 * starts again (someone wants it). */
int mmd_blob_have(const struct mmd_inputs *in,
		  const uint8_t sha[MM_INPUT_SHA256_BYTES], uint64_t size);
/* Move the file at path, whose bytes hash to sha, to its blob (an equal
 * blob already there is kept and path removed).  0 or -errno. */
int mmd_blob_adopt(const struct mmd_inputs *in, const char *path,
		   const uint8_t sha[MM_INPUT_SHA256_BYTES]);
/* Remove blobs no PENDING or STAGING job of st names, untouched for
 * MMD_BLOB_GRACE_MS. */
void mmd_inputs_sweep(struct mmd_inputs *in, const mm_state_t *st);

/* Remove a spool directory and the files in it (the spool has no
 * deeper levels). */
void mmd_spool_remove(const char *dir);

#endif
