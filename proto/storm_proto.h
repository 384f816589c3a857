/*
 * storm_proto.h — what storm-mm, storm-nm and stormctl share: the cluster
 * configuration file, the client protocol's frames, and the layout of the
 * node managers' global memory with the heartbeat block the strobe master
 * multicasts into it.  The only header of libstorm-proto (prefix st_).
 *
 * Conventions as in storm_primitives.h: 0 or a count on success, a negative
 * errno or -STORM_E* on failure, nothing changed on failure, an optional
 * error-text buffer last ("what, where, what to do").
 */
#ifndef STORM_PROTO_H
#define STORM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <storm_primitives.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STORM_BUILDING_PROTO)
#define ST_API __attribute__((visibility("default")))
#else
#define ST_API
#endif

/* ------------------------------------------------------------------------ */
/* Cluster configuration (INI, parsed with libinih; docs/config.md)          */
/* ------------------------------------------------------------------------ */

#define ST_NAME_MAX 64
#define ST_HOST_NAME_MAX 40 /* libinih keeps 49 characters of a section */
#define ST_ADDR_MAX 128
#define ST_MAX_NODES 4096

/** One head node (storm-mm) or compute node (storm-nm).  World node ids:
 * head nodes first, in file order, then compute nodes in file order. */
typedef struct st_host {
	char name[ST_NAME_MAX];    /* [manager NAME] / [node NAME] */
	char address[ST_ADDR_MAX]; /* fabric address (host:port, or shm name) */
	char listen[ST_ADDR_MAX];  /* manager only: client TCP host:port, or "" */
	char metrics[ST_ADDR_MAX]; /* manager only: Prometheus metrics
				    * host:port (metrics_listen), or "" */
	char munge_socket[256];    /* manager only: its host's munged socket,
				    * or "": [cluster] munge_socket */
	uint32_t cpus;             /* node only: ranks it runs at once (>= 1) */
	uint32_t world_id;
} st_host_t;

/** The whole file.  A plain value: st_config_load() fills it, the caller
 * owns it and frees it with st_config_free(). */
typedef struct st_config {
	char path[4096];          /* the file it was read from */
	char cluster[ST_NAME_MAX];
	char provider[32];        /* tcp | shm | sockets | verbs | ... */
	uint32_t slice_us;        /* time slice (strobe period) */
	uint32_t micro_slices;    /* event-collection boundaries per slice */
	uint32_t idle_slices;     /* while every node is quiet, strobe only
				   * every this many slices (0: never idle) */
	uint32_t hb_period_ms;    /* fabric liveness heartbeat */
	uint32_t hb_timeout_ms;   /* missed for this long: failed */
	uint32_t chunk_kib;       /* launch: bytes per file chunk */
	uint32_t slots;           /* launch: ring slots per node */
	uint32_t output_kib;      /* per-node output mailbox at the manager */
	uint32_t heartbeat_kib;   /* heartbeat block: jobs listed per slice */
	uint32_t bcs_kib;         /* BCS-MPI record from node to node, a slice */
	uint32_t pmi_kib;         /* PMI: a node's inbox for merged stores */
	char ramdisk[1024];       /* tmpfs directory for binaries on nodes */
	char state_dir[1024];     /* manager state: LMDB, one directory per
				   * manager below it */
	char replication[16];     /* auto | corosync | none */
	char state_sync[16];      /* nometasync | nosync (unsafe: a host
				   * crash may corrupt the state) */
	uint32_t state_budget_mib; /* replicated state's size budget */
	uint32_t job_retention;   /* ended jobs kept in the state (count) */
	uint32_t job_retention_s; /* ... and for at most this long */
	uint32_t history_jobs;    /* history: jobs among the last ids */
	uint32_t history_days;    /* ... that ended at most this long ago */
	char munge_socket[1024];  /* munged's socket; "": libmunge's default */
	uint32_t admins[32];      /* uids that may act on any job (and root) */
	uint32_t nadmins;
	char sched_policy[16];    /* fcfs | backfill | gang */
	uint32_t mpl;             /* gang: matrix rows (1..16) */
	uint32_t quantum_us;      /* gang: a row's turn, a multiple of
				   * slice_us */
	char placement[16];       /* buddy | molar */
	uint32_t realtime;        /* 0, or the daemons' SCHED_FIFO priority */
	uint32_t clients_max;     /* client connections at once (root has
				   * clients_root_reserved more) */
	uint32_t clients_root_reserved;
	uint32_t clients_per_user; /* ... of one uid (root: no limit) */
	uint32_t clients_per_address; /* TCP, not yet authenticated, from
				   * one source address */
	uint32_t client_idle_ms;  /* a connection doing nothing is closed */
	uint32_t client_frame_ms; /* a frame's first byte to its last */
	uint32_t max_pending_jobs; /* admission: PENDING jobs in all */
	uint32_t max_pending_per_user; /* ... of one uid */
	char auth_key[1024];      /* the cluster key's file ("": the fabric
				   * is not authenticated) */
	uint32_t max_input_mib;   /* a job's program and files, at most */
	char cgroup[16];          /* auto | none: jobs in per-job cgroups */
	char cpu_bind[16];        /* auto | none: ranks bound to their cpus */
	char pmi_library[1024];   /* libstorm-pmi, for Open MPI's ranks
				   * (FLUX_PMI_LIBRARY_PATH) */
	char mpi_default[8];      /* --mpi when a program's libraries name
				   * no MPI: auto (none), none, pmi1, pmix,
				   * bcs */
	char mpi_env[1024];       /* K=V words: the environment of every
				   * rank of a pmi1 or pmix job */
	char mpich_abi_dir[1024]; /* libmpich.so.12 and libmpi.so.12 (BCS-MPI
				   * under MPICH's sonames): first on a
				   * BCS-MPI job's LD_LIBRARY_PATH */
	char ckpt_dir[1024];      /* checkpoint images on nodes ("": below
				   * the ramdisk, L1 in docs/checkpoint.md) */
	uint32_t ckpt_keep;       /* committed epochs kept per job (1..64) */
	uint32_t ckpt_chain;      /* deltas between full images (0..64) */
	uint32_t ckpt_mtbf_h;     /* a node's MTBF, for --checkpoint auto */
	uint32_t ckpt_quota_mib;  /* one user's images on a node (0: any) */
	uint32_t ckpt_linger_s;   /* a job's images kept after it left */
	char ckpt_shared_dir[1024]; /* a copy of every image (L3), "": none */
	uint32_t ckpt_buddy_kib;  /* L2 box size (0: no copy on a buddy) */
	uint32_t kill_grace_ms;   /* SIGTERM to a job's processes, then this
				   * long before every one is killed */
	char run_dir[1024];       /* sockets, pid files, logs */
	char log_target[1024];    /* stderr | syslog | file path */
	int log_level;            /* LOG_ERR .. LOG_DEBUG */
	st_host_t *managers;
	uint32_t nmanagers;
	st_host_t *nodes;
	uint32_t nnodes;
} st_config_t;

/** Make the calling process SCHED_FIFO at cfg->realtime (0: nothing),
 * before it creates threads.  A refusal is logged and returned (-errno);
 * the daemon goes on at normal priority. */
ST_API int st_realtime(const st_config_t *cfg, const char *who);

/** Read and check the configuration at path into *cfg (zeroed first).
 * Unknown sections or keys, bad values and missing required entries are
 * errors that name the file and line ("FILE:LINE: ...").
 * @return 0; -ENOENT/-EACCES (cannot open), -STORM_ECONFIG (bad content),
 * -ENOMEM. */
ST_API int st_config_load(const char *path, st_config_t *cfg, char *err,
			  size_t errlen);
/** Free what st_config_load() allocated; cfg may be half-filled or zeroed. */
ST_API void st_config_free(st_config_t *cfg);
/** The host named name among managers and nodes, or NULL. */
ST_API const st_host_t *st_config_host(const st_config_t *cfg,
				       const char *name);
/** Build the primitives configuration for world node id (head nodes and
 * compute nodes are all members of one world), with the global memory
 * layout below.  join: open as a joining member (node managers always
 * join the manager's view); startup_ms: how long sp_open() waits for the
 * view.  @return 0, -ENOMEM, -STORM_ECONFIG. */
ST_API int st_config_world(const st_config_t *cfg, uint32_t world_id,
			   int join, uint32_t startup_ms, sp_config_t **out,
			   char *err, size_t errlen);
/** Make directory path (mode; missing parents 0755) if it does not
 * exist, then check it is this process's own: a real directory (not a
 * symbolic link), owned by the effective uid, writable by no one else.
 * @return 0, or -errno with err saying what is wrong and what to do. */
ST_API int st_dir_ensure(const char *path, unsigned mode, char *err,
			 size_t errlen);
/** open(path, flags, mode) with a user's file-system identity (fsuid uid,
 * fsgid gid, supplementary groups) on the calling thread alone, by raw
 * system calls (glibc's setgroups would change every thread of a daemon);
 * the thread is the daemon's own again before it returns (it aborts if
 * it cannot be).  O_NONBLOCK is added for the open (a FIFO does not wait
 * for its other end) and removed after; only a regular file is kept.
 * @return the fd, or -errno (-EINVAL: not a regular file). */
ST_API int st_open_as(const char *path, int flags, unsigned mode,
		      uint32_t uid, uint32_t gid, const uint32_t *groups,
		      int ngroups);
/** Bytes of the cluster key (auth_key). */
#define ST_KEY_BYTES 32
/** Read the cluster key at path: a regular file (not a symbolic link) of
 * exactly ST_KEY_BYTES bytes, owned by this process's uid, that no one
 * else may read or write.  @return 0, or -STORM_ECONFIG with err naming
 * the file, the cause and the fix. */
ST_API int st_key_load(const char *path, uint8_t key[ST_KEY_BYTES],
		       char *err, size_t errlen);
/** At a daemon's start: the configured key loads (0), or -STORM_ECONFIG
 * with err; no key configured is logged as a warning (0). */
ST_API int st_key_check(const st_config_t *cfg, char *err, size_t errlen);
/** Write a new random key to path (created, mode 0400; an existing file
 * is not replaced).  @return 0 or -errno with err. */
ST_API int st_key_write(const char *path, char *err, size_t errlen);
/** The local (unix) socket where manager m takes clients on its head
 * node: RUN_DIR/storm-mm-NAME.sock. */
ST_API void st_manager_socket(const st_config_t *cfg, const st_host_t *m,
			      char *out, size_t cap);
/** Route libqb logging of this process to cfg's target and level, tagged
 * ident.  Call once, early. @return 0 or -errno. */
ST_API int st_log_setup(const st_config_t *cfg, const char *ident);
/* (a log file is made 0600, an existing one of ours chmod'ed so; one
 * that is not a regular file of ours is refused: -errno, said on
 * stderr) */

/* ------------------------------------------------------------------------ */
/* Client protocol frames (docs/protocol.md)                                 */
/* ------------------------------------------------------------------------ */

/* A frame: "STRM" | version u8 | type u8 | 0 u16 | length u32 (big endian)
 * | payload.  Requests, replies and ends carry JSON; output carries a small
 * binary header and the raw bytes. */
#define ST_FRAME_MAGIC "STRM"
#define ST_FRAME_VERSION 1
#define ST_FRAME_HDR 12
#define ST_FRAME_MAX (16u << 20)

enum st_frame_type {
	ST_FRAME_REQUEST = 1, /* client -> manager: JSON {"op": ...} */
	ST_FRAME_REPLY = 2,   /* manager -> client: JSON {"ok": ...} */
	ST_FRAME_OUTPUT = 3,  /* manager -> client: job u32, rank u32,
			       * stream u8 (1 stdout, 2 stderr), bytes */
	ST_FRAME_END = 4,     /* manager -> client: JSON, the job's end */
	ST_FRAME_SEALED = 5,  /* client -> manager over TCP: a MUNGE
			       * credential and the request body it binds
			       * (st_seal_*) */
	ST_FRAME_INPUT = 6,   /* client -> manager over TCP, after a
			       * request with "inputs": the next bytes of
			       * the job's program and files, raw */
	ST_FRAME_STDIN = 7,   /* client -> manager after a run's REPLY:
			       * the next bytes of rank 0's stdin, raw, at
			       * most ST_STDIN_FRAME_MAX; empty: its end.
			       * manager -> client, empty: rank 0 takes no
			       * more (stop sending) */
};

/* The largest STDIN frame payload (docs/protocol.md 2.8): one chunk of a
 * node's stdin inbox. */
#define ST_STDIN_FRAME_MAX (64u << 10)

/** Parse a frame header (ST_FRAME_HDR bytes).  @return 0 and type and
 * payload length; -STORM_EPROTO (bad magic, version, type or a length over
 * ST_FRAME_MAX). */
ST_API int st_frame_parse_hdr(const uint8_t *hdr, int *type, uint32_t *len);
/** Write a frame header for (type, len) into hdr (ST_FRAME_HDR bytes). */
ST_API void st_frame_put_hdr(uint8_t *hdr, int type, uint32_t len);
/** Blocking helpers on a connected socket.  st_frame_send writes one whole
 * frame; st_frame_recv reads one (payload malloc'd, NUL-terminated, owned
 * by the caller).  @return 0; -ECONNRESET (peer closed), -STORM_EPROTO,
 * -ETIMEDOUT (timeout_ms >= 0 passed), -errno. */
ST_API int st_frame_send(int fd, int type, const void *payload, uint32_t len);
ST_API int st_frame_recv(int fd, int timeout_ms, int *type, uint8_t **payload,
			 uint32_t *len);
/** Output frame payload codec. @return bytes written / 0, or -STORM_EPROTO
 * / -ENOSPC. */
ST_API int st_output_encode(uint8_t *buf, size_t cap, uint32_t job,
			    uint32_t rank, int stream, const void *data,
			    size_t len);
ST_API int st_output_decode(const uint8_t *p, size_t len, uint32_t *job,
			    uint32_t *rank, int *stream, const uint8_t **data,
			    size_t *dlen);

/* ------------------------------------------------------------------------ */
/* Sealed requests: a credential bound to the body (docs/protocol.md §2.6)   */
/* ------------------------------------------------------------------------ */

/* SEALED payload: version u8 (1) | scheme u8 (1: MUNGE) | credential
 * length u16 (big endian) | the credential (printable ASCII) | the body,
 * a REQUEST payload byte for byte.  The credential's own payload is the
 * text "storm-seal-1 sha256=<64 hex> nonce=<32 hex>": the SHA-256 of the
 * body as sent and 16 random bytes that make every credential distinct. */
#define ST_SEAL_VERSION 1
#define ST_SEAL_MUNGE 1
#define ST_SEAL_HDR 4
#define ST_SEAL_CRED_MAX 4096u  /* a MUNGE credential is ~150-300 bytes */
#define ST_SHA256_BYTES 32
#define ST_SEAL_NONCE_BYTES 16
#define ST_SEAL_PAYLOAD_PREFIX "storm-seal-1 sha256="
/* strlen of a seal payload: prefix, 64 hex, " nonce=", 32 hex */
#define ST_SEAL_PAYLOAD_LEN (20 + 64 + 7 + 32)

/** SHA-256 of n bytes at p (OpenSSL's libcrypto).  @return 0 or -ENOMEM
 * (the library could not run). */
ST_API int st_sha256(const void *p, size_t n, uint8_t out[ST_SHA256_BYTES]);
/** Build a SEALED payload from a NUL-terminated credential and the body.
 * @return 0 and *out (malloc'd, the caller frees) of *len bytes;
 * -EINVAL (a credential empty, over ST_SEAL_CRED_MAX or not printable),
 * -EMSGSIZE (over ST_FRAME_MAX), -ENOMEM. */
ST_API int st_seal_encode(const char *cred, const void *body, size_t blen,
			  uint8_t **out, uint32_t *len);
/** Split a SEALED payload p[0 .. len) (untrusted) into its credential
 * (*cred, *clen bytes, not NUL-terminated) and body (*body, *blen), both
 * pointers into p.  Out-parameters are written only on success.
 * @return 0; -STORM_EPROTO with err saying what is wrong and where (short,
 * another version or scheme, a credential length of 0 or over
 * ST_SEAL_CRED_MAX or past the end, a byte of it not printable ASCII, an
 * empty body); -EINVAL (NULL arguments). */
ST_API int st_seal_decode(const uint8_t *p, size_t len, const char **cred,
			  size_t *clen, const uint8_t **body, size_t *blen,
			  char *err, size_t errlen);
/** The credential payload for a body: "storm-seal-1 sha256=HEX
 * nonce=HEX" into out (ST_SEAL_PAYLOAD_LEN + 1 bytes, NUL-terminated).
 * @return 0 or -ENOMEM. */
ST_API int st_seal_payload(const void *body, size_t blen,
			   const uint8_t nonce[ST_SEAL_NONCE_BYTES],
			   char out[ST_SEAL_PAYLOAD_LEN + 1]);
/** Check a credential's decoded payload (untrusted bytes, plen of them)
 * against the SHA-256 of the body received.  @return 0 (it binds that
 * body); -EACCES (a seal payload for another body); -STORM_EPROTO (not a
 * seal payload at all: an older client's, or garbage).  err says which. */
ST_API int st_seal_check(const void *payload, size_t plen,
			 const uint8_t digest[ST_SHA256_BYTES], char *err,
			 size_t errlen);

/* ------------------------------------------------------------------------ */
/* Global memory and the heartbeat (docs/launch.md)                          */
/* ------------------------------------------------------------------------ */

/* Events every world opens with. */
enum st_event {
	ST_EV_HB = 0,       /* node: a heartbeat block arrived */
	ST_EV_CHUNK = 1,    /* node: a file chunk arrived in its slot */
	ST_EV_OUT = 2,      /* manager: a node's output mailbox was filled */
	ST_EV_OUTACK = 3,   /* node: the manager emptied our mailbox */
	ST_EV_LOCAL_HB = 4, /* manager: its heartbeat transfer completed */
	ST_EV_LOCAL_CHUNK = 5,
	ST_EV_LOCAL_OUT = 6,
	ST_EV_LOCAL_ACK = 7,
	ST_EV_RELAY = 8,    /* node: another node's relay box arrived */
	ST_EV_RELAYACK = 9, /* node: our relay box was written out */
	ST_EV_LOCAL_RELAY = 10,
	ST_EV_BCS = 11,     /* node: another node's BCS-MPI record arrived */
	ST_EV_LOCAL_BCS = 12,
	ST_EV_HB_TICK = 13, /* node: a heartbeat block that differs from the
			     * last one only in its slice (a node manager
			     * with nothing to do at a slice keeps it quiet,
			     * docs/launch.md) */
	ST_EV_PMI = 14,     /* node: a PMI store chunk arrived in its inbox */
	/* 15: free on nodes; the manager's ring slots use 8..15 */
	ST_EV_WAKE = 16,    /* manager: a node manager has work at the next
			     * slice while the strobe idles (ST_HB_IDLE) */
	ST_EV_LOCAL_WAKE = 17,
	ST_EV_BUDDY = 18,   /* node: a checkpoint box or request arrived */
	ST_EV_BUDDY_ACK = 19, /* node: our box was written out there */
	ST_EV_LOCAL_BUDDY = 20,
	ST_EV_STDIN = 21,   /* node: a stdin chunk arrived in a replica's
			     * inbox slot */
	ST_EV_STDIN_ACK = 22, /* manager: a node took a stdin chunk */
	ST_EV_COUNT = 23
};

/* Little-endian fields of what goes between processes and to disk
 * (records, snapshots, checkpoint blobs, L2 boxes). */
static inline void st_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void st_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t st_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t st_get64(const uint8_t *p)
{
	return (uint64_t)st_get32(p) | (uint64_t)st_get32(p + 4) << 32;
}

/** Where things live in every node's global memory for cfg.  All offsets
 * 8-byte aligned; gvars are int64. */
typedef struct st_layout {
	uint64_t hb;          /* heartbeat block */
	uint32_t hb_len;
	uint64_t gv_slice;    /* node: last slice applied */
	uint64_t gv_consumed; /* node: file chunks written out (count) */
	uint64_t gv_quiet;    /* node: 1 while it has nothing to do at a
			       * slice (the strobe may idle), else 0 */
	uint64_t wake;        /* manager: where ST_EV_WAKE's 8 bytes land
			       * (the sender's world id) */
	uint64_t gv_done;     /* node: done_slots gvars; a job's slot (the
			       * heartbeat names it: its matrix cell) holds
			       * the job id once its ranks all ended here */
	uint32_t done_slots;
	uint64_t gv_ckpt;     /* node: done_slots gvars; a job's slot holds
			       * st_ckpt_done(job, epoch) once every image
			       * of that epoch is written on this node */
	uint64_t gv_pmi;      /* node: done_slots gvars; a job's slot holds
			       * st_pmi_slot(job, 2 x barriers taken + 1
			       * while its entries for the next are sent) */
	uint64_t gv_pmi_seq;  /* node: the PMI chunk last copied out */
	uint64_t pmi;         /* node: the PMI inbox (pmi_len bytes): a
			       * chunk of a merged store from the master */
	uint32_t pmi_len;
	uint64_t gv_outseq;   /* node: output records the manager has taken */
	uint64_t outack;      /* node: manager's ack (int64 seq) lands here */
	uint64_t ring;        /* file ring: slots x chunk bytes */
	uint32_t chunk, slots;
	uint64_t outbox;      /* manager: one mailbox per world id */
	uint32_t outbox_len;
	uint64_t bcs;         /* node: BCS-MPI records, two buffers per
			       * world id (the sender), bcs_len each */
	uint32_t bcs_len;
	uint64_t buddy;       /* node: L2 checkpoint copies and fetches,
			       * one box per node (the sender's index),
			       * buddy_len each (0: L2 off) */
	uint32_t buddy_len;
	uint64_t buddy_ack;   /* node: one 32-byte line per node, where the
			       * receiver of this node's box acknowledges it */
	uint64_t buddy_want;  /* node: one 64-byte line per node, its
			       * request for images it lacks */
	uint64_t stdin;       /* node: rank 0 stdin inboxes, one per manager
			       * replica (the sender's index), stdin_len
			       * each */
	uint32_t stdin_len;
	uint64_t stdin_ack;   /* manager: one 64-byte line per world id,
			       * where that node acknowledges the last
			       * stdin chunk it took (st_stdin_ack) */
	uint64_t size;        /* total */
} st_layout_t;

/* Done slots: one per cell of the gang matrix (the largest MPL, 16
 * rows, x its columns), then as many again for batch steps, which run
 * inside their allocation's cells (a step's slot is its first task slot
 * in the copy of its allocation's row).  A cell belongs to one job at a
 * time and a task slot to one step, so every job holding PEs has a slot
 * of its own, whatever its id. */
#define ST_DONE_ROWS 32u
ST_API void st_layout(const st_config_t *cfg, st_layout_t *out);

/** Whether "NAME=VALUE" is a variable Storm sets in every rank itself
 * (STORM_JOB_ID, STORM_RANK, PMI_FD, ...): never exported by stormctl,
 * never taken from a job's environment by storm-nm (env.c). */
ST_API int st_env_storm_sets(const char *kv);
/** Matrix columns of cfg's nodes: each node's first column a multiple of
 * its cpus rounded up to a power of two (as the manager's matrix lays
 * them out; phantom columns between). */
ST_API uint32_t st_matrix_cols(const st_config_t *cfg);
static inline uint64_t st_ckpt_var(const st_layout_t *l, uint32_t slot)
{
	return l->gv_ckpt + 8u * (slot < l->done_slots ? slot : 0);
}
/** The gv_ckpt value meaning "epoch e of job captured here". */
static inline int64_t st_ckpt_done(uint32_t job, uint32_t epoch)
{
	return (int64_t)((uint64_t)job << 32 | epoch);
}
static inline uint64_t st_pmi_var(const st_layout_t *l, uint32_t slot)
{
	return l->gv_pmi + 8u * (slot < l->done_slots ? slot : 0);
}
/** The gv_pmi value: job, and n = 2 x barriers whose merged store the
 * node took, + 1 while its entries for the next are on their way. */
static inline int64_t st_pmi_slot(uint32_t job, uint32_t n)
{
	return (int64_t)((uint64_t)job << 32 | n);
}
static inline uint64_t st_done_var(const st_layout_t *l, uint32_t slot)
{
	return l->gv_done + 8u * (slot < l->done_slots ? slot : 0);
}

/* ---- heartbeat block (manager -> nodes, at layout.hb, every slice) ------ */

/* Level-triggered.  The block carries the gang row whose turn it is and
 * lists jobs with their row and done slot; it is complete over a window
 * of job ids [lo, hi]: a node kills and forgets a job it holds inside
 * the window that is not listed.  Jobs outside the window keep what they
 * were last listed with.  When every active job fits, the window is
 * every id; otherwise the manager sweeps it over the ids slice by slice,
 * listing jobs that just changed in every block besides (docs/manager.md
 * says how soon every job is listed again). */
enum st_hb_job_state { ST_HB_STAGING = 1, ST_HB_RUN = 2,
		       ST_HB_STOP = 3 /* staged/started, but its matrix row
				       * is not active: processes stopped */ };

/* In a block: STAGING, or ACTIVE (staged: runs while its row is the
 * block's active row, or in every row when the block's row is
 * ST_HB_ALL_ROWS).  st_hb_want() turns it into RUN or STOP. */
#define ST_HB_ACTIVE 2
#define ST_HB_ALL_ROWS 0xffffu

typedef struct st_hb_job {
	uint32_t job;
	uint8_t state;  /* ST_HB_STAGING or ST_HB_ACTIVE */
	uint16_t row;   /* its gang matrix row */
	uint32_t done;  /* its done slot */
	uint32_t ckpt;  /* the checkpoint epoch to take, 0: none */
	uint32_t restore; /* its ranks start from this epoch's images
			   * (a restart), 0: from the start */
	uint32_t inc;   /* its incarnation (restarts): a node holding
			 * another one kills and forgets it */
} st_hb_job_t;

/* st_hb_t.flags: the strobe idles — it strobes only every few slices
 * until a node manager with work signals ST_EV_WAKE (docs/manager.md) */
#define ST_HB_IDLE 1u

typedef struct st_hb {
	uint64_t slice;
	uint16_t row;        /* active gang row, or ST_HB_ALL_ROWS */
	uint32_t lo, hi;     /* the window the list is complete over */
	uint32_t njobs;
	uint32_t flags;      /* ST_HB_IDLE; other bits ignored */
	st_hb_job_t *jobs;
} st_hb_t;

#define ST_HB_HDR 30
#define ST_HB_ENTRY 23
/** Jobs a block of len bytes holds. */
static inline uint32_t st_hb_capacity(size_t len)
{
	return len < ST_HB_HDR ? 0 : (uint32_t)((len - ST_HB_HDR) / ST_HB_ENTRY);
}
/** What a job of state/row must be under active row `active`. */
static inline uint8_t st_hb_want(uint8_t state, uint16_t row, uint16_t active)
{
	if (state == ST_HB_STAGING)
		return ST_HB_STAGING;
	return active == ST_HB_ALL_ROWS || row == active ? ST_HB_RUN
							 : ST_HB_STOP;
}

/** Encode a heartbeat block: bytes or -ENOSPC.  decode: 0, or
 * -STORM_EPROTO for anything malformed; hb->jobs must hold
 * st_hb_capacity(len) entries. */
ST_API int st_hb_encode(uint8_t *buf, size_t cap, const st_hb_t *hb);
ST_API int st_hb_decode(const uint8_t *buf, size_t len, st_hb_t *hb);
/** The bytes of the block whose first len bytes are at buf, as its
 * header says (so a reader copies no more than was sent), or 0 when
 * len holds no header or the header is not a block's. */
ST_API size_t st_hb_need(const uint8_t *buf, size_t len);
/** Whether two encoded blocks of len bytes differ at most in their
 * slice. */
ST_API int st_hb_same(const uint8_t *a, const uint8_t *b, size_t len);

/* ---- file ring chunks (manager -> a job's nodes) ------------------------ */

/* Each slot starts with this header; the rest of the slot is data.  The
 * chunks of one job form one stream: a manifest, then every file. */
#define ST_CHUNK_HDR 24
ST_API void st_chunk_put_hdr(uint8_t *slot, uint32_t job, uint32_t index,
			     uint32_t total, uint32_t len);
ST_API int st_chunk_get_hdr(const uint8_t *slot, uint32_t chunk_size,
			    uint32_t *job, uint32_t *index, uint32_t *total,
			    uint32_t *len);
/** The gv_consumed value meaning "k chunks of job taken". */
static inline int64_t st_consumed(uint32_t job, uint32_t k)
{
	return (int64_t)((uint64_t)job << 32 | k);
}
/* A job staged again (a restart) is a new incarnation of its stream: the
 * header's last 4 bytes (0 the first time), and its chunks counted above
 * every earlier incarnation's in gv_consumed.  A stream has fewer than
 * ST_CHUNKS_MAX chunks. */
#define ST_CHUNKS_MAX (1u << 24)
static inline uint32_t st_chunk_inc(const uint8_t *slot)
{
	return (uint32_t)slot[20] | (uint32_t)slot[21] << 8 |
	       (uint32_t)slot[22] << 16 | (uint32_t)slot[23] << 24;
}
static inline void st_chunk_put_inc(uint8_t *slot, uint32_t inc)
{
	for (int i = 0; i < 4; i++)
		slot[20 + i] = (uint8_t)(inc >> (8 * i));
}
/** The gv_consumed value meaning "k chunks of incarnation inc taken". */
static inline int64_t st_consumed_inc(uint32_t job, uint32_t inc, uint32_t k)
{
	return st_consumed(job, (inc & 0xffu) << 24 | k);
}

/* ---- output mailbox (node -> manager) ----------------------------------- */

/* A box: seq u64 | nbytes u32 | records.  Records: type u8 | job u32 |
 * rank u32 | len u32 | bytes.  OUT/ERR carry output, EXIT a wait status
 * (int32) for the rank, FAIL a reason (text) for the job, CKPT what a
 * checkpoint epoch did on the node (st_ckpt_rec_t; rank: the node's
 * world id), RERUN that the rank runs again from an earlier point of its
 * output (st_rerun_t). */
enum st_rec_type { ST_REC_STDOUT = 1, ST_REC_STDERR = 2, ST_REC_EXIT = 3,
		   ST_REC_FAIL = 4, ST_REC_CKPT = 5, ST_REC_RERUN = 6,
		   ST_REC_PMI = 7 };

/* A PMI record (rank: the node's world id): the job's incarnation u32 |
 * barrier u32 | last u32 (1: the node's last record for it) | entries
 * (node/pmi.h: whole ones, so that the managers may concatenate every
 * node's records in any order). */
#define ST_PMI_REC_HDR 12

/* A chunk of a merged PMI store in a node's inbox (manager -> node):
 * magic u32 | job u32 | inc u32 | barrier u32 | seq u64 (the master's
 * chunk number, copied into gv_pmi_seq once taken) | off u32 | total u32
 * | len u32 | pad u32 | len bytes of entries, at off of total. */
#define ST_PMI_MAGIC 0x53494d50u /* "PMIS" */
#define ST_PMI_HDR 40
typedef struct st_pmi_chunk {
	uint32_t job, inc, fence;
	uint64_t seq;
	uint32_t off, total, len;
} st_pmi_chunk_t;
ST_API void st_pmi_chunk_put(uint8_t *p, const st_pmi_chunk_t *c);
/** 0, or -STORM_EPROTO unless a whole chunk of at most room bytes. */
ST_API int st_pmi_chunk_get(const uint8_t *p, size_t room,
			    st_pmi_chunk_t *c);

/* A RERUN record's bytes: the rank, restored from epoch (0: started
 * over), runs on from these offsets of its stdout and its stderr (bytes
 * it had written at that point): what it writes next is at them.
 * epoch u32 | out u64 | err u64. */
#define ST_RERUN_LEN 20
typedef struct st_rerun {
	uint32_t epoch;
	uint64_t off[2];
} st_rerun_t;
ST_API void st_rerun_encode(uint8_t out[ST_RERUN_LEN], const st_rerun_t *r);
/** 0, or -STORM_EPROTO unless len is ST_RERUN_LEN. */
ST_API int st_rerun_decode(const uint8_t *p, size_t len, st_rerun_t *r);

/* A CKPT record's bytes: epoch u32 | rc i32 (0: every image written) |
 * bytes u64 | stop_us u32 | levels u32 | then, if rc, the reason (text). */
#define ST_CKPT_REC_LEN 24
typedef struct st_ckpt_rec {
	uint32_t epoch;
	int32_t rc;
	uint64_t bytes;          /* the node's images */
	uint32_t stop_us;        /* its longest stop of a rank */
	uint32_t levels;         /* where they are: MM_CKPT_L* bits */
	const char *why;         /* decode: into the record, why_len bytes */
	uint32_t why_len;
} st_ckpt_rec_t;
/** Encode into out (cap bytes): its length, or -ENOSPC. */
ST_API int st_ckpt_rec_encode(uint8_t *out, size_t cap,
			      const st_ckpt_rec_t *c);
/** 0, or -STORM_EPROTO for a record of another shape. */
ST_API int st_ckpt_rec_decode(const uint8_t *p, size_t len,
			      st_ckpt_rec_t *c);
#define ST_BOX_HDR 12
#define ST_REC_HDR 13

/* ---- rank 0's stdin (manager -> node, docs/protocol.md 2.8) ------------- */

/* A chunk in a node's inbox slot of the sending replica: magic u32 | job
 * u32 | seq u64 (the replica's chunk number for this node, from 1) |
 * flags u32 (ST_STDIN_EOF) | len u32 | 8 bytes 0 | len bytes.  The node
 * answers each chunk it took with an ack in the replica's stdin_ack line
 * of the node: seq u64 | job u32 | flags u32 (ST_STDIN_CLOSED: rank 0
 * takes no more of the job's stdin). */
#define ST_STDIN_MAGIC 0x49445453u /* "STDI" */
#define ST_STDIN_HDR 32
#define ST_STDIN_EOF 1u
#define ST_STDIN_CLOSED 1u
#define ST_STDIN_ACK_LEN 16
typedef struct st_stdin_chunk {
	uint32_t job;
	uint64_t seq;
	uint32_t flags;
	uint32_t len;
} st_stdin_chunk_t;
ST_API void st_stdin_chunk_put(uint8_t *p, const st_stdin_chunk_t *c);
/** Check the chunk at p (room bytes of untrusted memory).  @return 0,
 * or -STORM_EPROTO unless a whole chunk of at most room bytes, seq not 0,
 * no unknown flag. */
ST_API int st_stdin_chunk_get(const uint8_t *p, size_t room,
			      st_stdin_chunk_t *c);
typedef struct st_stdin_ack {
	uint64_t seq;
	uint32_t job, flags;
} st_stdin_ack_t;
ST_API void st_stdin_ack_put(uint8_t p[ST_STDIN_ACK_LEN],
			     const st_stdin_ack_t *a);
/** @return 0, or -STORM_EPROTO (an unknown flag). */
ST_API int st_stdin_ack_get(const uint8_t p[ST_STDIN_ACK_LEN],
			    st_stdin_ack_t *a);

/* An EXIT record's bytes: the rank's wait status (int32), then its
 * usage as wait4() gave it: user and system CPU time in microseconds and
 * peak resident set in KiB (u64 each).  Old nodes send the status alone. */
#define ST_EXIT_LEN 28
typedef struct st_exit {
	int32_t status;
	uint64_t utime_us, stime_us, maxrss_kib;
} st_exit_t;
ST_API void st_exit_encode(uint8_t out[ST_EXIT_LEN], const st_exit_t *e);
/** 0, or -STORM_EPROTO unless len is 4 (status alone) or ST_EXIT_LEN. */
ST_API int st_exit_decode(const uint8_t *p, size_t len, st_exit_t *e);

typedef struct st_rec {
	uint8_t type;
	uint32_t job, rank;
	uint32_t len;
	const uint8_t *data;
} st_rec_t;

/** Iterate records of a box body: *off starts at ST_BOX_HDR.  @return 1 and
 * the record, 0 at the end, -STORM_EPROTO if malformed. */
ST_API int st_box_next(const uint8_t *box, size_t boxlen, size_t *off,
		       st_rec_t *rec);
ST_API void st_box_put_rec(uint8_t *p, uint8_t type, uint32_t job,
			   uint32_t rank, const void *data, uint32_t len);
ST_API void st_box_put_hdr(uint8_t *box, uint64_t seq, uint32_t nbytes);
ST_API int st_box_get_hdr(const uint8_t *box, size_t boxlen, uint64_t *seq,
			  uint32_t *nbytes);

/* ---- job manifest (first bytes of a job's chunk stream) ----------------- */

typedef struct st_manifest {
	uint32_t job, ranks;
	/* the job's owner, as the manager's transport established it
	 * (SO_PEERCRED or MUNGE): its ranks run as uid with primary gid.
	 * A version-1 manifest (an older manager) has none: owned = 0 */
	uint32_t uid, gid;
	int owned;
	uint32_t *rank_node;  /* world id per rank */
	uint32_t argc, envc, nfiles;
	char **argv, **env;   /* argv[0]: the program's name on the ramdisk */
	char *cwd;
	char **file_names;    /* file 0 is the program */
	uint64_t *file_sizes;
	uint32_t *file_modes;
	/* a batch job's output: the nodes write these files as its user
	 * (patterns with %j, the job id, and %r, the rank; relative to cwd;
	 * "" the default).  Version 2 only: a version-1 job is not batch */
	int batch;
	char *out_pat, *err_pat;
	uint64_t mem_limit;   /* bytes per node for the job's processes
			       * (--mem), 0 none; version 2 only */
	uint32_t *rank_cpu;   /* per rank: its cpu on its node (0 ..
			       * cpus - 1, the scheduler's column), or NULL:
			       * not known; version 2 only */
	uint8_t mpi;          /* ST_MPI_*: what the node sets up for the
			       * ranks (version 2, after rank_cpu; absent
			       * in an older manager's: none) */
	uint32_t cpus_per_task; /* each rank binds to this many cpus from
				 * its rank_cpu (1 in an older one's) */
	uint8_t cpu_bind;     /* ST_BIND_* */
	uint32_t array_id;    /* its array's first job (0: not in one) */
	uint32_t array_task;  /* its task number there */
	uint8_t alloc;        /* a batch allocation: only rank 0 (the
			       * script) runs; the other ranks are task
			       * slots, ended at once (SMF5) */
	uint32_t parent;      /* a step of this allocation (0: none) */
} st_manifest_t;

/* A job's cpu binding (the manager's MM_BIND_* values). */
enum { ST_BIND_AUTO = 0, ST_BIND_NONE = 1 };

/* A job's MPI (the manager's MM_MPI_* values). */
enum { ST_MPI_NONE = 0, ST_MPI_BCS = 1, ST_MPI_BCS_ARRIVAL = 2,
       ST_MPI_PMI1 = 3, ST_MPI_PMIX = 4 };

/** Encode into a malloc'd buffer (*out, *len). @return 0 or -ENOMEM. */
ST_API int st_manifest_encode(const st_manifest_t *m, uint8_t **out,
			      size_t *len);
/** Decode from the stream's first bytes; *used gets its length.  Fills a
 * malloc'd manifest freed with st_manifest_free().  @return 0, -EAGAIN (need
 * more bytes), -STORM_EPROTO, -ENOMEM. */
ST_API int st_manifest_decode(const uint8_t *p, size_t len, size_t *used,
			      st_manifest_t **out);
ST_API void st_manifest_free(st_manifest_t *m);

#ifdef __cplusplus
}
#endif
#endif /* STORM_PROTO_H */
