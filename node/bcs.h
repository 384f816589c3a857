/*
 * bcs.h — the node's BCS engine (docs/bcsmpi.md §3): one per storm-nm,
 * serving every BCS-MPI job on the node.  A job's ranks only post
 * descriptors into their shared segment; at each slice boundary the
 * engine takes them, matches sends with receives in the deterministic
 * order (bcs_match.h), moves the bytes between the ranks' memories,
 * runs the collectives, and posts completions, waking the ranks that
 * sleep on them.  Communication happens only at slice boundaries, so a
 * job stopped by the gang scheduler, or at a checkpoint, has no message
 * in flight.
 *
 * The engine runs as root and reads memory the job's user can write:
 * every descriptor is copied out and checked (bcs_ring.h), a rank's
 * memory is reached only by the pid of the engine's own unreaped child
 * (process_vm_readv/writev), and whatever a rank does wrong fails its
 * job with the rank and the reason, never the engine or another job.
 *
 * nm.c calls it; it does not reach back: a job it fails is reported by
 * nm_bcs_failed() for nm.c to end.
 */
#ifndef STORM_NM_BCS_H
#define STORM_NM_BCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <storm_primitives.h>
#include <storm_proto.h>

#include "bcs_match.h"
#include "bcs_xchg.h"

#define NM_BCS_SLICE_BYTES (8u << 20) /* bytes moved per job per slice */
#define NM_BCS_HELD_BYTES (64u << 20) /* eager bytes kept per job */
#define NM_BCS_HELD_DESCS (1u << 20)  /* unmatched sends and receives */
#define NM_BCS_SECT_LOCAL (16u << 20) /* a one-node job's section */
#define NM_BCS_EARLY_MAX 256u         /* sections of jobs not open yet */
#define NM_BCS_CUT_HOLD_MS 10000u     /* a cut held with no order here */
#define NM_BCS_LOST_MS 10000u         /* a job whose node left, with no
				       * word from the manager */

struct bcs_job;
struct bcs_early;

struct nm_bcs {
	struct bcs_job *jobs;
	uint8_t *bounce;       /* NM_BCS_SLICE_BYTES: one chunk's way */
	uint8_t *cbuf, *ctmp;  /* NM_BCS_SLICE_BYTES each: collectives' */
	uint8_t *sbuf;         /* NM_BCS_SECT_LOCAL: a section being built */
	uint8_t *pbuf;         /* the record room: a peer's copy of it */
	struct bcs_xchg x;     /* records to and from the other nodes */
	uint32_t self;         /* this node's world id */
	const st_config_t *cfg; /* the nodes' names */
	struct bcs_early *early; /* sections that came before their job */
	uint32_t nearly;
};

/* 0 or -ENOMEM. */
int nm_bcs_init(struct nm_bcs *e);
void nm_bcs_fini(struct nm_bcs *e);
/* The doorbell of a job whose ranks are all on this node: an eventfd
 * (the engine's, closed with the job) its ranks inherit and write when
 * every one of them waits in a blocking call, so that its round runs
 * then (nm_bcs_bell) rather than at the next slice.  -1 for a job that
 * spans nodes: its rounds need every node's section, sent at the
 * strobe. */
int nm_bcs_bell_fd(struct nm_bcs *e, uint32_t job);
/* The job's doorbell is readable: take it and run the job's round now
 * (at most BCS_EARLY_MAX between two slices). */
void nm_bcs_bell(struct nm_bcs *e, uint32_t job);

/* The world the engine talks to the other nodes through: records of
 * len bytes at base (layout.bcs) in global memory, self this node's
 * world id of nworld; cfg names the nodes in messages.  0 or
 * -ENOMEM. */
int nm_bcs_attach(struct nm_bcs *e, sp_world_t *w, uint64_t base,
		  uint32_t len, uint32_t self, uint32_t nworld,
		  const st_config_t *cfg);

/* A BCS-MPI job, incarnation inc (its restarts: sections of another
 * incarnation are not its), with nlocal ranks here (world ranks ranks[],
 * of size in all, rank r on node rank_node[r], a world id): its segment
 * is owned by uid:gid, mode 0600.  restoring: nm_bcs_restore follows,
 * and sections that came for it wait until then.  The descriptor the
 * ranks inherit (not close-on-exec; *fd), or -errno with err naming the
 * cause. */
int nm_bcs_open(struct nm_bcs *e, uint32_t job, uint32_t inc, int restoring,
		uint32_t size, uint32_t nlocal, const uint32_t *ranks,
		const uint32_t *rank_node, uid_t uid, gid_t gid,
		enum bcs_order order, int *fd, char *err, size_t errlen);
/* The job's match log (--bcs-trace): every match appended to fd (the
 * engine's from now on, opened as the job's user), a line each:
 *   match K slice N: rank D recv R <- rank S send Q tag T bytes B
 * (K counts the job's matches, N its slices, R and Q each rank's own
 * receives and sends: all but N are the same on a rerun that matches
 * alike). */
void nm_bcs_trace(struct nm_bcs *e, uint32_t job, int fd);
/* Replay a match log (--bcs-replay: text of len bytes, a log as
 * nm_bcs_trace writes): every receive takes the send the log names; a
 * receive that cannot stops the job naming the first differing match.
 * 0, or -EINVAL with err naming the line that is not a log line. */
int nm_bcs_replay(struct nm_bcs *e, uint32_t job, const char *text,
		  size_t len, char *err, size_t errlen);
/* Local rank i of job runs as pid (once launched). */
void nm_bcs_started(struct nm_bcs *e, uint32_t job, uint32_t i, pid_t pid);
/* Local rank i of job exited (before it is reaped): a rank that had not
 * finalized fails the job. */
void nm_bcs_exited(struct nm_bcs *e, uint32_t job, uint32_t i, int status);
/* The job is gone here: its segment unmapped and removed. */
void nm_bcs_close(struct nm_bcs *e, uint32_t job);
/* Whether the job is stopped (gang scheduling): it is skipped. */
void nm_bcs_stopped(struct nm_bcs *e, uint32_t job, int stopped);

/* Coordinated checkpoints (docs/bcsmpi.md §7): the engine's state of
 * a job — its unmatched sends (with their eager bytes) and receives,
 * its ranks' states and counters, communicators and posted
 * collectives, the sections of the next rounds already here, its
 * areas' ring positions, sequences and late completions, the bytes of
 * matched messages still to move — as a self-contained image: a
 * version, a BLAKE2b-256 checksum (it detects a damaged file; a forged
 * one is refused by the decoder's checks).  Not in it: the ranks' pids,
 * the segment (its descriptor, mapping and bytes: the checkpoint
 * work's), the match log's file and a replayed record.
 *
 * Save: the job must be stopped (nm_bcs_stopped(e, job, 1)) or failed.
 * 0 with *buf (malloc'd; the caller frees it) and *len; -ENOENT (no
 * such job), -EBUSY (it runs), -ENOMEM; err says which. */
int nm_bcs_save(struct nm_bcs *e, uint32_t job, uint8_t **buf, size_t *len,
		char *err, size_t errlen);
/* Restore: into a job opened here with nm_bcs_open alike (the same job
 * id, size, local ranks in the same areas, ranks' nodes, order, and
 * this node the image's), its segment's bytes already restored.  The
 * image is untrusted bytes: checked whole before anything changes.  On
 * success the job's engine state is the image's (what it held before is
 * freed; a record given by nm_bcs_replay stays), and it is stopped:
 * nm_bcs_started for each rank, then nm_bcs_stopped(e, job, 0).  A
 * failed job's image restores a failed job, reported again by
 * nm_bcs_failed.  0; -ENOENT (no such job); -EBADMSG (not an image:
 * truncated, damaged, malformed); -EPROTONOSUPPORT (a version this
 * engine does not read); -EINVAL (an image of another job or shape:
 * err names the difference); -ENOMEM.  On failure the job is as it
 * was. */
int nm_bcs_restore(struct nm_bcs *e, uint32_t job, const uint8_t *buf,
		   size_t len, char *err, size_t errlen);
/* The same for a job placed anew (a restart): the image's nodes are
 * read as the nodes the job's ranks have now, which must group the ranks
 * as they were (-EINVAL otherwise, err naming two ranks that were
 * together and are not, or the reverse); this node the one that has the
 * image's ranks.  An image with sections of rounds to come moves only
 * if the job's nodes keep their order. */
int nm_bcs_restore_placed(struct nm_bcs *e, uint32_t job, const uint8_t *buf,
			  size_t len, char *err, size_t errlen);
/* The job's segment as the engine maps it: 0 with *base and *len, or
 * -ENOENT.  Its bytes are the ranks' and the engine's together: saved
 * with the engine's image while the job is stopped, put back before
 * nm_bcs_restore. */
int nm_bcs_segment(struct nm_bcs *e, uint32_t job, void **base,
		   size_t *len);

/* A checkpoint's cut of a job on several nodes (bcs_cut.c): every node
 * captures the job after one same round.  nm_bcs_cut: this node is to
 * take epoch; 1 when the job is held at that epoch's cut (or on one
 * node: no cut needed; or the cut passed without this node, which
 * nm_bcs_at_cut then refuses), 0 while it waits (this node's next
 * section asks for the cut).  nm_bcs_at_cut: whether a capture now is
 * of epoch's cut.  nm_bcs_cut_release: captured (or failed): the job
 * runs on. */
int nm_bcs_cut(struct nm_bcs *e, uint32_t job, uint32_t epoch);
int nm_bcs_at_cut(struct nm_bcs *e, uint32_t job, uint32_t epoch);
void nm_bcs_cut_release(struct nm_bcs *e, uint32_t job);

/* A slice boundary: every running job's round starts — its ranks'
 * descriptors taken into this node's section, sent to the job's other
 * nodes — and a job whose sections are all here runs it (matched,
 * moved, completed). */
void nm_bcs_slice(struct nm_bcs *e, uint64_t slice);
/* Records from other nodes arrived, or ours went (the world's notify):
 * rounds whose sections are all here run. */
void nm_bcs_events(struct nm_bcs *e);
/* Whether a job here needs the next slice: 0 when every running job
 * naps (nothing new from its ranks, no round under way), so that the
 * node manager may sleep through slices; a rank rings when it wakes. */
int nm_bcs_busy(const struct nm_bcs *e);
/* The view: a job with a node outside live fails; channels to nodes
 * outside it are forgotten. */
void nm_bcs_view(struct nm_bcs *e, const sp_nodeset_t *live);
/* A job the engine failed since the last call: 1 with *job and why
 * (the rank and the reason), or 0. */
int nm_bcs_failed(struct nm_bcs *e, uint32_t *job, char *why, size_t whylen);

#endif
