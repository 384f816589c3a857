/*
 * inputs.h — a job's program and --file inputs as the client handed them
 * over (docs/security.md §2): over the unix socket as descriptors the
 * client opened with its own rights (SCM_RIGHTS), over TCP as bytes it
 * sent itself (INPUT frames, docs/protocol.md §2.7).  The manager never
 * opens a user's path for them.
 *
 * The bytes go to a spool, a private directory of this replica
 * (STATE_DIR/NAME/inputs, 0700): first a set's own directory tmp-ID,
 * then, once the SUBMIT that carries them is applied and durable, job-ID,
 * where the stager (stage.c) reads them.  A set that was refused, or
 * whose client went away before it was proposed, is removed.
 *
 * Descriptors are read by MMD_INPUTS_WORKERS threads, never by the main
 * loop: a FIFO is refused by fstat() before any read, and a slow file (a
 * hung network file system) holds one worker, not the strobe (sets are
 * taken in order; only when every worker is held do the others wait).  Every set is bounded by the per-job cap
 * (max_input_mib): counted as bytes come, before they are kept.
 *
 * Set life: READING (worker, or INPUT frames) -> READ (main loop: the
 * SUBMIT is proposed) -> PROPOSED -> settled: renamed to job-ID
 * (applied) or removed (refused, failed).  Only the main loop touches a
 * set outside the worker's queue.
 */
#ifndef STORM_MMD_INPUTS_H
#define STORM_MMD_INPUTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <storm_manager.h>

/* program + files of one job: one sendmsg's worth of descriptors
 * (the kernel's SCM_MAX_FD) */
#define MMD_INPUTS_MAX 253u
#define MMD_INPUTS_QUEUE 1024u /* sets waiting for the workers, at most */
#define MMD_INPUTS_WORKERS 4 /* one slow file holds one of them */

struct mmd_input_set {
	struct mmd_input_set *next;
	uint64_t id;          /* its directory: tmp-ID */
	uint64_t conn;        /* the client connection's number */
	uint32_t n;           /* inputs: the program, then the files */
	int *fds;             /* unix: the client's descriptors (owned) */
	char **names;         /* the client's paths, for messages */
	/* TCP: what the request announced, and where the bytes are */
	uint64_t *sizes;
	uint32_t *modes;
	uint32_t cur;         /* the input being received */
	uint64_t cur_left;    /* its bytes still to come */
	uint64_t left;        /* every input's bytes still to come */
	int out_fd;           /* the spool file being written, or -1 */
	/* result */
	int rc;               /* 0 or -errno */
	char err[640];        /* rc != 0: what, where, what to do */
	uint64_t bytes;       /* read */
	/* the request it belongs to (requests.c's) */
	json_t *req;
	int run;
	int proposed;
	uint32_t uid;         /* the submitter (for the stager's wait) */
	struct mmd_input_set *pnext; /* in mmd_inputs.props */
	uint32_t delay_ms;    /* test only: wait this long before reading */
};

struct mmd_inputs {
	char dir[1200];       /* the spool */
	uint64_t cap;         /* bytes per job (max_input_mib) */
	uint32_t cap_mib;
	uint32_t delay_ms;    /* test only (STORM_TEST_INPUT_DELAY_MS): the
			       * first set read waits this long */
	uint64_t next_id;
	uint32_t proposed;    /* sets proposed, not yet settled ... */
	struct mmd_input_set *props; /* ... these */
	pthread_t thread[MMD_INPUTS_WORKERS];
	int started, stop;    /* started: threads running */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mmd_input_set *in, **in_tail, *out, **out_tail;
	uint32_t queued;
	int efd;              /* readable when sets were read */
};

/* Make the spool dir (0700, checked like every daemon directory),
 * remove what an earlier run left in it, start the worker.
 * @return 0 or -errno with err filled. */
int mmd_inputs_start(struct mmd_inputs *in, const char *dir,
		     uint32_t cap_mib, char *err, size_t errlen);
/* Stop the worker; sets queued are dropped (their directories too). */
void mmd_inputs_stop(struct mmd_inputs *in);

/* A set for conn of n inputs named names[] (copied); fds (n of them, or
 * NULL for TCP) are taken over: closed by mmd_inputs_free().
 * @return the set or NULL (out of memory: fds closed). */
struct mmd_input_set *mmd_inputs_new(struct mmd_inputs *in, uint64_t conn,
				     uint32_t n, int *fds,
				     const char *const *names);
/* Queue a set of descriptors for the worker.  @return 0, -EAGAIN (the
 * queue holds MMD_INPUTS_QUEUE), or the error of making its directory;
 * on failure the set is the caller's still. */
int mmd_inputs_read(struct mmd_inputs *in, struct mmd_input_set *s);
/* The next set the worker is done with: 1 and *s, or 0. */
int mmd_inputs_next(struct mmd_inputs *in, struct mmd_input_set **s);

/* TCP: begin receiving sizes[]/modes[] (s->sizes, s->modes set by the
 * caller, each mode <= 0777).  The caller checked the sum against the
 * cap.  @return 0 or -errno (s->err says). */
int mmd_inputs_recv_begin(struct mmd_inputs *in, struct mmd_input_set *s);
/* TCP: len bytes of the stream (at most s->left).  A write error is
 * kept in s->rc and the rest is counted, not written.  @return 1 once
 * every byte came, else 0. */
int mmd_inputs_recv(struct mmd_inputs *in, struct mmd_input_set *s,
		    const uint8_t *p, uint32_t len);

/* s's SUBMIT was proposed: until it settles, the stager waits for a job
 * that may be s's (mmd_inputs_awaited). */
void mmd_inputs_proposed(struct mmd_inputs *in, struct mmd_input_set *s,
			 uint32_t uid);
/* Whether a proposed, unsettled set may hold job j's inputs (same
 * submitter, program path and number of inputs). */
int mmd_inputs_awaited(const struct mmd_inputs *in, const mm_job_t *j);
/* Settle s: job > 0 keeps its bytes as job's (a job that has them
 * already keeps those), 0 removes them.  s is freed. */
void mmd_inputs_settle(struct mmd_inputs *in, struct mmd_input_set *s,
		       uint32_t job);
/* Free s and remove its directory (a set never proposed). */
void mmd_inputs_free(struct mmd_inputs *in, struct mmd_input_set *s);

/* Input k of job, read-only: the descriptor, or -ENOENT (this replica
 * did not receive the job's inputs). */
int mmd_inputs_open(const struct mmd_inputs *in, uint32_t job, uint32_t k);
/* Whether job's inputs are in the spool. */
int mmd_inputs_have(const struct mmd_inputs *in, uint32_t job);
/* Remove job-ID directories of jobs that are not PENDING or STAGING in
 * st (staged, ended, gone). */
void mmd_inputs_sweep(struct mmd_inputs *in, const mm_state_t *st);

/* Remove a spool directory and the files in it (the spool has no
 * deeper levels). */
void mmd_spool_remove(const char *dir);

#endif
