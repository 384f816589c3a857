/*
 * storm_manager.h — the Machine Manager's state machine: jobs, the queue,
 * allocations and the node table.  Pure and deterministic: it changes only
 * by mm_apply() of ordered operations, never reads a clock, a random source
 * or a file, so every replica that applies the same operations in the same
 * order holds the same state (issue 4 wraps it in replication).  Time
 * enters as MM_OP_TICK.  The I/O shell (storm-mm) turns requests and what
 * the strobe learns from the nodes into operations, and reads the state to
 * derive the level-triggered commands it multicasts each slice.
 *
 * Prefix mm_.  Conventions as in storm_primitives.h.  Not thread-safe: one
 * caller at a time per state.
 */
#ifndef STORM_MANAGER_H
#define STORM_MANAGER_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STORM_BUILDING_MANAGER)
#define MM_API __attribute__((visibility("default")))
#else
#define MM_API
#endif

#define MM_NAME_MAX 64
#define MM_REASON_MAX 160

typedef struct mm_state mm_state_t;

/** Job states.  Terminal: COMPLETED, FAILED, CANCELLED. */
typedef enum mm_job_state {
	MM_JOB_PENDING = 1, /* waiting for nodes */
	MM_JOB_STAGING,     /* nodes allocated; files being multicast */
	MM_JOB_RUNNING,     /* launch command in force on its nodes */
	MM_JOB_COMPLETED,   /* every rank exited 0 */
	MM_JOB_FAILED,      /* a rank exited non-zero, or a node failed */
	MM_JOB_CANCELLED,
} mm_job_state_t;

/** Scheduling policies (the configuration's sched_policy). */
typedef enum mm_policy {
	MM_POLICY_FCFS = 1,     /* batch, strict first come first served */
	MM_POLICY_BACKFILL = 2, /* batch with EASY backfilling */
	MM_POLICY_GANG = 3,     /* gang scheduling over mpl matrix rows */
} mm_policy_t;

/** Where a job's buddy block goes among the free ones. */
typedef enum mm_placement {
	MM_PLACE_BUDDY = 1, /* tightest fit (the buddy whose sibling is used),
			     * then lowest column */
	MM_PLACE_MOLAR = 2, /* the block whose least reliable node has the
			     * longest observed MTTF, then as BUDDY */
} mm_placement_t;

#define MM_MPL_MAX 16u
#define MM_CPUS_MAX 4096u /* per node, as the configuration allows */
#define MM_QUANTUM_MAX 1000000u /* slices */

/** The scheduler's settings: part of the replicated state (MM_OP_SCHED
 * changes them), so every replica schedules alike. */
typedef struct mm_sched_conf {
	mm_policy_t policy;
	uint32_t mpl;            /* matrix rows, 1..MM_MPL_MAX; only GANG
				  * may use more than 1 */
	uint32_t quantum_slices; /* GANG: slices a row stays active,
				  * 1..MM_QUANTUM_MAX */
	mm_placement_t placement;
} mm_sched_conf_t;

typedef enum mm_node_state {
	MM_NODE_UP = 1,
	MM_NODE_DOWN,
} mm_node_state_t;

/** One input of a job (its program, then each --file) as the replicas
 * hold it: content-addressed, so any replica holding bytes of that
 * digest can stage the job (docs/security.md §2). */
#define MM_INPUT_SHA256_BYTES 32u
typedef struct mm_input {
	uint8_t sha256[MM_INPUT_SHA256_BYTES]; /* of its bytes */
	uint64_t size;                         /* bytes */
	uint32_t mode;                         /* permission bits, <= 0777 */
} mm_input_t;

/** The MPI a job's ranks use: what the node sets up for them. */
enum { MM_MPI_NONE = 0, MM_MPI_BCS = 1,
       MM_MPI_BCS_ARRIVAL = 2, /* BCS-MPI matching by arrival (the
				* deterministic order off) */
       MM_MPI_PMI1 = 3,  /* PMI-1 for an MPI of its own (MPICH) */
       MM_MPI_PMIX = 4,  /* Open MPI, as a foreign launcher starts it
			  * (its PMI-1 library route, docs/pmi.md) */
       MM_MPI_MAX = 4 };

/** A job request as submitted.  Strings are copied by mm_apply(). */
typedef struct mm_job_spec {
	const char *name;      /* for humans; "" allowed */
	uint32_t uid, gid;     /* who submitted (from the transport) */
	uint32_t ranks;        /* >= 1 */
	const char *nodelist;  /* NULL/"": any nodes; else a node-id set text
				* ("1-3,5") of world ids the job must use */
	uint32_t argc;         /* >= 1: argv[0] is the program path */
	const char *const *argv;
	uint32_t envc;         /* "KEY=VALUE" strings added to the ranks' env */
	const char *const *env;
	const char *cwd;       /* directory the ranks start in */
	uint32_t nfiles;       /* extra files to stage beside the binary */
	const char *const *files;
	int batch;             /* 0: interactive (run), 1: batch (submit) */
	const char *out_path;  /* batch: stdout file pattern ("%j" job id,
				* "%r" rank); NULL: default */
	const char *err_path;
	uint64_t time_limit_ms; /* 0: none */
	uint64_t mem_bytes;    /* memory of its processes per node, 0: no
				* limit (SUBMIT_LIMITS, SUBMIT_INPUTS) */
	uint32_t ninputs;      /* 0, or 1 + nfiles: the program, then each
				* file (SUBMIT_INPUTS only) */
	const mm_input_t *inputs;
	uint8_t mpi;           /* MM_MPI_*: what its ranks communicate with
				* (SUBMIT_INPUTS only) */
	uint32_t ckpt_every_s; /* a checkpoint this often (seconds), or
				* MM_CKPT_AUTO, or 0: none (SUBMIT_CKPT
				* only) */
	uint8_t requeue;       /* 1: a node failure queues it again, to
				* start over when no checkpoint of it
				* survives (SUBMIT_CKPT only) */
	/* its shape (SUBMIT_SHAPE only; 0: the default) */
	uint32_t cpus_per_task; /* cpus each rank holds (-c), 1 by default */
	uint32_t tasks_per_node; /* at most this many ranks on a node, 0 any */
	uint32_t node_count;   /* on exactly this many nodes (-N), 0 any */
	uint8_t cpu_bind;      /* MM_BIND_* */
	/* a dependency (SUBMIT_SHAPE): it starts only once job dep_job
	 * ended as dep_type says (0: none) */
	uint32_t dep_job;
	uint8_t dep_type;      /* MM_DEP_* */
	/* an array (SUBMIT_SHAPE): array_count tasks, numbered array_first,
	 * + array_step, ..., each a job; at most array_max of them running
	 * at once (0: no limit).  array_count 0: not an array */
	uint32_t array_first, array_step, array_count, array_max;
	/* batch (SUBMIT_STEP only): alloc 1 makes an allocation, whose
	 * rank 0 alone runs (the script) while its other ranks hold their
	 * cpus for steps; parent non-zero makes a step of that allocation
	 * (same owner), run on its free task slots */
	uint8_t alloc;
	uint32_t parent;
} mm_job_spec_t;

/** A job's dependency on another's end (Slurm's). */
enum { MM_DEP_NONE = 0,
       MM_DEP_AFTEROK = 1,    /* it COMPLETED */
       MM_DEP_AFTERANY = 2,   /* it ended, whatever the end */
       MM_DEP_AFTERNOTOK = 3, /* it FAILED or was CANCELLED */
       MM_DEP_MAX = 3 };
#define MM_ARRAY_MAX 10000u /* tasks of one array */

/** How a rank is bound to its cpus on its node. */
enum { MM_BIND_AUTO = 0, /* to its cpus when the node's configuration
			  * describes the machine (cpu_bind = auto) */
       MM_BIND_NONE = 1, /* not bound */
       MM_BIND_MAX = 1 };

/* ckpt_every_s: the interval chosen from the measured checkpoint cost
 * and the nodes' MTBF (Young/Daly: docs/checkpoint.md §3). */
#define MM_CKPT_AUTO 0xffffffffu
/* The longest interval taken (a year), in seconds. */
#define MM_CKPT_EVERY_MAX 31536000u

/** Operation codes: append-only, never renumbered (replicated). */
typedef enum mm_opcode {
	MM_OP_SUBMIT = 1,   /* job spec -> new job id (result.job) */
	MM_OP_CANCEL = 2,   /* job, uid (0 = root may cancel any) */
	MM_OP_TICK = 3,     /* slice number, now_ms: schedule pending jobs */
	MM_OP_NODE_DOWN = 4,/* node, reason: its jobs fail with the reason */
	MM_OP_NODE_UP = 5,  /* node: back in service */
	MM_OP_JOB_STAGED = 6, /* job: every file is on every node */
	MM_OP_JOB_EXITED = 7, /* job, per-rank exit statuses (wait status
			       * encoding: exited code or killed signal) */
	MM_OP_JOB_FAILED = 8, /* job, reason (e.g. launch error on a node) */
	MM_OP_SCHED = 9,      /* sched: new scheduler settings (refused if
			       * invalid, or if fewer rows than are in use) */
	MM_OP_SUBMIT_CAPPED = 10, /* SUBMIT with admission caps: refused if
			       * max_pending jobs are PENDING, or
			       * max_pending_user of its uid, or the jobs'
			       * bytes would pass max_state_bytes (0: no
			       * cap) */
	MM_OP_JOB_EXITED_USAGE = 11, /* JOB_EXITED with each rank's usage */
	MM_OP_TICK_RETAIN = 12, /* TICK, then terminal jobs beyond
			       * retain_jobs (the lowest ids) or ended
			       * retain_ms ago leave the state (0: that rule
			       * off; both 0 refused): mm_purged() */
	MM_OP_CRED = 13,      /* a client credential's id and expiry: taken
			       * once cluster-wide; refused (-EACCES) if
			       * taken before (replayed) or expired by the
			       * state's time, -EAGAIN if the cache holds
			       * MM_CREDS_MAX (docs/security.md) */
	MM_OP_SUBMIT_LIMITS = 14, /* SUBMIT_CAPPED with the spec's resource
			       * limits (mem_bytes); a job without limits
			       * goes as SUBMIT_CAPPED, readable by a
			       * replica that predates this */
	MM_OP_SUBMIT_INPUTS = 15, /* SUBMIT_LIMITS with the digests, sizes
			       * and modes of the job's inputs, which the
			       * replicas hold before it is proposed, and
			       * the job's MPI (spec.mpi) */
	MM_OP_CKPT_REQUEST = 16, /* job, uid: take a checkpoint of a RUNNING
			       * job (owner or root); result.epoch is its
			       * epoch (the one pending, if one is) */
	MM_OP_CKPT_COMMIT = 17, /* job, epoch, ckpt_bytes, ckpt_stop_us,
			       * ckpt_keep: every node has its images; the
			       * epoch joins the catalog, which keeps the
			       * last ckpt_keep (docs/checkpoint.md) */
	MM_OP_CKPT_ABORT = 18, /* job, epoch, reason: it failed somewhere;
			       * discarded everywhere, the job runs on */
	MM_OP_CKPT_RESTART = 19, /* job, uid, epoch (0: the last committed):
			       * the job's processes go and it is queued
			       * again (PENDING, restore_epoch set), to run
			       * on from that epoch's images */
	MM_OP_SUBMIT_CKPT = 20, /* SUBMIT_INPUTS with the spec's
			       * ckpt_every_s: the strobe asks for its
			       * checkpoints (a job without goes as
			       * SUBMIT_INPUTS) */
	MM_OP_CKPT_REQUEUE = 21, /* job, uid: CKPT_REQUEST, and once that
			       * epoch is committed the job's processes go
			       * and it is queued again to run on from it
			       * (drain, preemption); an abort leaves it
			       * running */
	MM_OP_SUBMIT_SHAPE = 22, /* SUBMIT_CKPT with the spec's shape:
			       * cpus per task, tasks per node, node
			       * count, cpu binding */
	MM_OP_NODE_DRAIN = 23, /* node, uid (root), reason: no new job on
			       * it; its running jobs that take checkpoints
			       * are checkpointed and queued again
			       * elsewhere, the others run to their end */
	MM_OP_NODE_RESUME = 24, /* node, uid (root): back in service */
	MM_OP_SUBMIT_STEP = 25, /* SUBMIT_SHAPE with the spec's alloc and
			       * parent: a batch allocation, or a step
			       * placed on its allocation's task slots */
} mm_opcode_t;

/* Storage levels of a committed epoch (mm_ckpt_t.levels). */
enum { MM_CKPT_L1 = 1,  /* node-local */
       MM_CKPT_L2 = 2,  /* a copy on a buddy node */
       MM_CKPT_L3 = 4,  /* a shared directory */
       MM_CKPT_SURVIVES = MM_CKPT_L2 | MM_CKPT_L3 /* a node's loss */ };

/** A committed checkpoint epoch of a job: restartable. */
typedef struct mm_ckpt {
	uint32_t epoch;
	uint32_t stop_us;            /* longest stop of a node's ranks */
	uint32_t levels;             /* MM_CKPT_L*: where every image is */
	uint64_t slice, ms;          /* when it was committed (state time) */
	uint64_t bytes;              /* every image of every node */
} mm_ckpt_t;

/* A job is restarted at most this many times (its staging's incarnation
 * is a byte of the chunk count: storm_proto.h). */
#define MM_RESTARTS_MAX 255u

/* The catalog keeps at most this many epochs of a job. */
#define MM_CKPT_KEEP_MAX 64u

/** The replay cache of client credentials (MM_OP_CRED): an id is the
 * first MM_CRED_ID_BYTES of a hash of what the credential vouches for
 * (the shell's choice: manager/mmd/auth.c).  An entry leaves when the
 * state's time (TICK's now_ms) passes its expiry by MM_CRED_SKEW_MS, the
 * clock difference between replicas it tolerates. */
#define MM_CRED_ID_BYTES 16
#define MM_CREDS_MAX 65536u
#define MM_CRED_SKEW_MS 60000u

/** One rank's resource usage, as its node's wait4() reported it. */
typedef struct mm_usage {
	uint64_t utime_us, stime_us; /* CPU time, user and system */
	uint64_t maxrss_kib;         /* peak resident set */
} mm_usage_t;

typedef struct mm_op {
	mm_opcode_t code;
	uint32_t job;
	uint32_t node;
	uint32_t uid;
	uint64_t slice, now_ms;
	const char *reason;
	const mm_job_spec_t *spec; /* SUBMIT */
	uint32_t nstatus;          /* JOB_EXITED: one per rank */
	const int32_t *status;
	const mm_usage_t *usage;   /* JOB_EXITED_USAGE: nstatus of them */
	const mm_sched_conf_t *sched; /* SCHED */
	uint32_t max_pending, max_pending_user; /* SUBMIT_CAPPED */
	uint64_t max_state_bytes;
	uint32_t retain_jobs;      /* TICK_RETAIN */
	uint64_t retain_ms;
	uint32_t history_jobs;     /* TICK_RETAIN, for the shell's history
				    * (not read by mm_apply) */
	uint64_t history_ms;
	const uint8_t *cred_id;    /* CRED: MM_CRED_ID_BYTES; uid above is
				    * the credential's (for the refusal) */
	uint64_t cred_expire_ms;   /* CRED: epoch ms it expires */
	uint32_t epoch;            /* CKPT_COMMIT, CKPT_ABORT */
	uint32_t ckpt_stop_us, ckpt_keep, ckpt_levels; /* CKPT_COMMIT */
	uint64_t ckpt_bytes;
} mm_op_t;

/** What an operation did. */
typedef struct mm_result {
	int rc;        /* 0 or -errno/-STORM_E*: a refused op changes nothing */
	uint32_t job;  /* SUBMIT: the new id */
	uint32_t epoch; /* CKPT_REQUEST: the epoch being taken */
	char err[256]; /* refused: what, where, what to do */
} mm_result_t;

/** A read-only view of one job, valid until the next mm_apply(). */
typedef struct mm_job {
	uint32_t id;
	char name[MM_NAME_MAX];
	uint32_t uid, gid;
	mm_job_state_t state;
	char reason[MM_REASON_MAX]; /* why it waits / failed; "" */
	uint32_t ranks;
	const sp_nodeset_t *nodes;  /* allocated (empty while PENDING) */
	const uint32_t *rank_node;  /* world id of each rank (ranks entries) */
	uint32_t argc;
	const char *const *argv;
	uint32_t envc;
	const char *const *env;
	const char *cwd;
	uint32_t nfiles;
	const char *const *files;
	int batch;
	const char *out_path, *err_path;
	uint64_t time_limit_ms;
	uint64_t mem_bytes;         /* per node, 0: no limit */
	uint32_t ninputs;           /* 0 (submitted before inputs were
				     * replicated), or 1 + nfiles */
	const mm_input_t *inputs;
	uint8_t mpi;                /* MM_MPI_* */
	uint64_t submit_slice, start_slice, end_slice;
	uint64_t submit_ms, start_ms, end_ms;
	int32_t exit_code;          /* job's: first non-zero rank's, else 0;
				     * 128+sig for a signal */
	const int32_t *rank_status; /* per rank once ended, else NULL */
	const mm_usage_t *rank_usage; /* per rank once ended by
				       * JOB_EXITED_USAGE, else NULL */
	/* its place in the matrix while it holds PEs (STAGING/RUNNING):
	 * row, and the buddy block [col, col + width) of that row */
	uint32_t row, col, width;
	/* checkpoints: the epoch being taken (0: none) and since when, the
	 * last epoch number handed out, why the last one failed (""), and
	 * the committed ones, oldest first */
	uint32_t ckpt_want, ckpt_last;
	uint64_t ckpt_want_slice;
	char ckpt_error[MM_REASON_MAX];
	uint32_t nckpts;
	const mm_ckpt_t *ckpts;
	uint32_t restore_epoch;     /* queued again to run on from this
				     * epoch (0: from the start) */
	uint32_t ckpt_every_s;      /* its checkpoint interval (seconds,
				     * MM_CKPT_AUTO, 0: none) */
	uint8_t ckpt_requeue;       /* requeued once ckpt_want commits */
	uint8_t requeue;            /* --requeue: a node failure queues it
				     * again, from the start if no epoch
				     * of it survives */
	uint32_t restarts;          /* times it was restarted */
	/* its shape: each rank holds cpus_per_task cpus (columns) of one
	 * node; at most tasks_per_node ranks on a node (0: any); on
	 * exactly node_count nodes, ranks spread evenly (0: any) */
	uint32_t cpus_per_task;
	uint32_t tasks_per_node;
	uint32_t node_count;
	uint8_t cpu_bind;           /* MM_BIND_* */
	uint32_t dep_job;           /* waits for this job's end (0: none) */
	uint8_t dep_type;           /* MM_DEP_* */
	uint32_t array_id;          /* its array's first job (0: none) */
	uint32_t array_task;        /* its task number in the array */
	uint32_t array_max;         /* the array's tasks running at once */
	uint8_t alloc;              /* a batch allocation: rank 0 runs the
				     * script, the other ranks are slots */
	uint32_t parent;            /* a step of this allocation (0: none);
				     * while it holds PEs it is in its
				     * parent's row, on the parent's task
				     * slots [col - parent col, + width) */
} mm_job_t;

typedef struct mm_node {
	uint32_t id;                /* world id */
	char name[MM_NAME_MAX];
	uint32_t cpus;
	mm_node_state_t state;
	char reason[MM_REASON_MAX]; /* why DOWN */
	uint32_t used;              /* ranks placed on it now */
	uint32_t failures;          /* times it went DOWN */
	uint64_t up_ms;             /* time in service before up_since_ms */
	uint64_t up_since_ms;       /* state time it last came UP (if UP) */
	uint32_t col;               /* its first matrix column (cpus of them) */
	uint8_t drain;              /* drained: no new job is placed on it;
				     * DRAINING while jobs still hold it,
				     * DRAINED once none does */
	char drain_reason[MM_REASON_MAX]; /* why, as the administrator said */
} mm_node_t;

/** Create an empty state for a machine of world size nworld whose compute
 * nodes are node ids/names/cpus (nnodes of them; all start DOWN, "has not
 * joined yet", until an MM_OP_NODE_UP puts each in service).  cpus of
 * each: 1..MM_CPUS_MAX.
 * @return 0, -EINVAL, -ENOMEM. */
MM_API int mm_state_create(uint32_t nworld, uint32_t nnodes,
			   const uint32_t *ids, const char *const *names,
			   const uint32_t *cpus, mm_state_t **out);
/** Set the scheduler's settings of a state no operation has touched yet
 * (a new state starts FCFS, MPL 1, quantum 1, BUDDY).  Later changes go
 * through MM_OP_SCHED.  @return 0 or -EINVAL (invalid, or jobs exist). */
MM_API int mm_state_set_sched(mm_state_t *s, const mm_sched_conf_t *c);
MM_API void mm_state_destroy(mm_state_t *s);

/** Apply one operation.  Deterministic.  Returns res->rc. */
MM_API int mm_apply(mm_state_t *s, const mm_op_t *op, mm_result_t *res);

/** Lookups and iteration (views valid until the next mm_apply()). */
MM_API int mm_job_get(const mm_state_t *s, uint32_t id, mm_job_t *out);
/** Jobs in id order starting at id >= from; returns 0 and fills out, or
 * -ENOENT when there are no more.  Ids have gaps where retention
 * removed ended jobs. */
MM_API int mm_job_next(const mm_state_t *s, uint32_t from, mm_job_t *out);
/** An id below which every job has ended: iterating from it with
 * mm_job_next() meets every job not ended (and some that have). */
MM_API uint32_t mm_live_from(const mm_state_t *s);
/** Jobs in the state now, and the id the next SUBMIT will get. */
MM_API uint32_t mm_job_count(const mm_state_t *s);
MM_API uint32_t mm_next_id(const mm_state_t *s);
/** The jobs the last mm_apply() removed from the state (TICK_RETAIN), for
 * the caller's history: views valid until the next mm_apply(). */
MM_API uint32_t mm_purged_count(const mm_state_t *s);
MM_API int mm_purged_get(const mm_state_t *s, uint32_t i, mm_job_t *out);
MM_API uint32_t mm_node_count(const mm_state_t *s);
MM_API int mm_node_get(const mm_state_t *s, uint32_t index, mm_node_t *out);
MM_API int mm_node_by_id(const mm_state_t *s, uint32_t world_id,
			 mm_node_t *out);
MM_API uint64_t mm_slice(const mm_state_t *s);
/** The state's time (now_ms of the last TICK, never decreasing). */
MM_API uint64_t mm_now_ms(const mm_state_t *s);
/** Credentials in the replay cache (MM_OP_CRED) now. */
MM_API uint32_t mm_creds_count(const mm_state_t *s);
/** What the jobs in the state weigh against the size budget: per job, its
 * spec's encoded bytes plus a fixed part per rank (a function of what the
 * job was submitted with, so every replica counts alike). */
MM_API uint64_t mm_state_bytes(const mm_state_t *s);
/** Jobs PENDING now: in all (uid UINT32_MAX) or of uid. */
MM_API uint32_t mm_pending_count(const mm_state_t *s, uint32_t uid);
/** A number that changes whenever a job starts or stops holding cpus
 * (STAGING/RUNNING): the shell rebuilds its list of active jobs only
 * then, not at every slice over every queued job.  Not part of the
 * state (a restored state starts its own count). */
MM_API uint64_t mm_active_gen(const mm_state_t *s);
/** A digest of the whole state: the FNV-1a 64 of the bytes
 * mm_state_encode() would give (computed without allocating), so it covers
 * everything mm_apply() depends on and replicas compare it; equal states
 * give equal digests.  A new snapshot version is a new digest: compare
 * digests between replicas that write the same version.  NULL gives the
 * FNV offset basis. */
MM_API uint64_t mm_digest(const mm_state_t *s);

/** Encode the whole state (node table, every job with everything mm_apply
 * needs to continue exactly as the original would, slice/now) into a
 * malloc'd buffer *out of *len bytes (caller frees).  Versioned
 * (a magic + version), little-endian, canonical: equal states give equal
 * bytes.  s is only read.  The format is described in snapshot.c.
 * @return 0 (*out and *len set), -EINVAL (a NULL argument), -ENOMEM;
 * on failure *out and *len are untouched. */
MM_API int mm_state_encode(const mm_state_t *s, uint8_t **out, size_t *len);
/** Build a new state from mm_state_encode() bytes.  Every field is
 * bounds-checked (the bytes may come from another host or a damaged file):
 * a short, oversized, inconsistent or foreign-version buffer gives
 * -STORM_EPROTO and err says what and where (offset).  Whatever is
 * accepted encodes back to the very same bytes, and the state continues
 * under mm_apply() exactly as the one that was encoded.  buf is only read
 * and may be freed on return; the new state is the caller's
 * (mm_state_destroy()).  err (optional: NULL or errlen 0) gets a
 * NUL-terminated message on failure, "" on success.
 * @return 0 (*out set), -STORM_EPROTO, -ENOMEM, -EINVAL (out NULL, or buf
 * NULL with len > 0); on failure *out is untouched. */
MM_API int mm_state_decode(const uint8_t *buf, size_t len, mm_state_t **out,
			   char *err, size_t errlen);

/* ---- scheduling (sched.c, matrix.c) --------------------------------------
 * The Ousterhout matrix: rows = time slots (the MPL), columns = PEs, the
 * cpus of every compute node in ascending world id (node.col ..
 * node.col + cpus - 1), each node starting at a multiple of its cpus
 * rounded up to a power of two so that it is a buddy block of its own;
 * the columns between are phantoms (no node: mm_matrix_col_node() gives
 * UINT32_MAX, the cell is always 0).  A job holds one buddy block of one row: width a
 * power of two, col a multiple of it; its ranks sit on the block's first
 * usable columns (a node that is DOWN or outside its nodelist counts as
 * not usable).  Blocks may run past the last column (a machine that is not
 * a power of two): only real columns count. */

/** The settings in force. */
MM_API void mm_sched_get(const mm_state_t *s, mm_sched_conf_t *out);
/** Check settings: 0, or -EINVAL with what and what to do in err. */
MM_API int mm_sched_check(const mm_sched_conf_t *c, char *err, size_t len);
MM_API const char *mm_policy_name(mm_policy_t p);
MM_API int mm_policy_parse(const char *name, mm_policy_t *out);
MM_API const char *mm_placement_name(mm_placement_t p);
MM_API int mm_placement_parse(const char *name, mm_placement_t *out);
/** Rows in force (the mpl) and columns (every node's cpus). */
MM_API uint32_t mm_matrix_rows(const mm_state_t *s);
MM_API uint32_t mm_matrix_cols(const mm_state_t *s);
/** The job holding (row, col), or 0 (free). */
MM_API uint32_t mm_matrix_cell(const mm_state_t *s, uint32_t row,
			       uint32_t col);
/** World id of the node a column belongs to, UINT32_MAX for a phantom. */
MM_API uint32_t mm_matrix_col_node(const mm_state_t *s, uint32_t col);
/** The row whose jobs run at slice: rows holding a job take turns of
 * quantum_slices slices in ascending order; UINT32_MAX when every row is
 * empty.  A function of the state and the slice only, so a new strobe
 * master continues the same rotation. */
MM_API uint32_t mm_active_row(const mm_state_t *s, uint64_t slice);
/** Whether rows other than the active one hold jobs (a context switch
 * can happen); 0 at MPL 1. */
MM_API int mm_matrix_shared(const mm_state_t *s);
/** FNV-1a 64 of the matrix (settings, every cell); equal on replicas. */
MM_API uint64_t mm_matrix_digest(const mm_state_t *s);
/** Check every invariant linking the matrix, the jobs and the nodes
 * (cells <-> jobs' blocks, ranks on usable columns of their block, node
 * use counts).  0, or -STORM_ESTATE and what is wrong in err. */
MM_API int mm_matrix_check(const mm_state_t *s, char *err, size_t len);
/** Free PEs (cells) over the rows in force, on nodes that are UP. */
MM_API uint64_t mm_free_pes(const mm_state_t *s);

/** Expected start times of the first pending jobs (queue order, at most
 * max): the scheduler replayed forward in time with every running job
 * ending at its time limit.  ids[i] and start_ms[i] (state time; 0 =
 * unknown: it waits behind jobs without a time limit).  Returns how many
 * were filled (>= 0) or -ENOMEM. */
MM_API int mm_expected_starts(const mm_state_t *s, uint32_t max,
			      uint32_t *ids, uint64_t *start_ms);

/** The done slot of a job holding PEs (STAGING/RUNNING): the gvar
 * index its nodes mark its end in (ST_DONE_ROWS x columns of them).  A
 * job's is its block's first cell; a step's lies in the rows after
 * MM_MPL_MAX, at its first task slot of its parent's block, so no two
 * jobs holding PEs share one. */
MM_API uint32_t mm_job_done_slot(const mm_state_t *s, const mm_job_t *j);

MM_API const char *mm_job_state_name(mm_job_state_t st);
MM_API const char *mm_node_state_name(mm_node_state_t st);

/** Operation wire codec (versioned, bounds-checked; for the replication
 * log).  encode: bytes written or -ENOSPC.  decode: 0 and a decoded op
 * whose pointers refer into *arena (malloc'd, caller frees), or
 * -STORM_EPROTO. */
MM_API int mm_op_encode(const mm_op_t *op, uint8_t *buf, size_t cap);
MM_API int mm_op_decode(const uint8_t *buf, size_t len, mm_op_t *op,
			void **arena);

#ifdef __cplusplus
}
#endif
#endif /* STORM_MANAGER_H */
