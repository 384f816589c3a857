/*
 * buddy.h — L2 of the checkpoint levels (docs/checkpoint.md §4): copies
 * of this node's images kept by another node manager, its buddy, and
 * images fetched from whichever node keeps them when a restart puts a
 * rank where they are not.
 *
 * A file travels as boxes by XFER-AND-SIGNAL into the sender's box in
 * the receiver's global memory (layout.buddy, one per node), one box in
 * flight per sender; the receiver's thread writes each box out and
 * acknowledges it by a posted PUT into its line of the sender's
 * layout.buddy_ack, with the outcome.  Only a whole file is seen at the
 * receiver: it is written aside and renamed at its last box.  Copies are
 * kept below `dir`, as ROOT is (job-J/epoch-E/NAME), the job owner's,
 * 0600.  A request (nm_buddy_want) is one line to every other live node
 * (layout.buddy_want); each node that has the files answers by sending
 * them, and the requester takes whichever arrives whole first.
 *
 * Copies go with their chain: a file's first box names the oldest epoch
 * its sender still keeps (base), and the receiver deletes its copies of
 * that name in the epochs before; a sender that deletes a gone job's
 * images tells its buddy to drop the job's copies (nm_buddy_drop).  A
 * job's copies nobody wrote for a day past linger_s go too, so a dead
 * sender's copies do not stay for ever.
 */
#ifndef STORM_NM_BUDDY_H
#define STORM_NM_BUDDY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <storm_primitives.h>
#include <storm_proto.h>

#define NM_BUDDY_NAME_MAX 32

struct nm_buddy;

/* One file sent: what the receiver files it as. */
struct nm_buddy_file {
	uint32_t job, epoch;
	uint32_t base;   /* the receiver's copies of name below it go */
	uid_t uid;
	gid_t gid;
	const char *name; /* [A-Za-z0-9._-], < NM_BUDDY_NAME_MAX */
};

/* rank's chain of job back from epoch to its full image (ckpt_image.h:
 * each delta names its parent), and the file name of epoch if not NULL,
 * each looked for below roots[0..nroots) in turn ("" skipped): opened
 * read-only into fds[] and described in file[] (names kept in names[]).
 * Their count (at most max), or 0 if any is missing (nothing open). */
int nm_buddy_find(const char *const *roots, int nroots, uint32_t job,
		  uint32_t epoch, uint32_t rank, const char *name,
		  struct nm_buddy_file *file, char (*names)[NM_BUDDY_NAME_MAX],
		  int *fds, int max);

/* w's node manager (first_node: the world id of the first one, nnodes of
 * them); copies kept below dir (made if missing, root's, 0711); requests
 * answered from dir and l1 (this node's own images); seq_base numbers
 * this incarnation's boxes apart from the last one's.  0 or -errno with
 * why; L2 off (lay->buddy_len 0): 0 and *out NULL. */
int nm_buddy_create(struct nm_buddy **out, sp_world_t *w,
		    const st_layout_t *lay, uint32_t first_node,
		    uint32_t nnodes, const char *dir, const char *l1,
		    uint64_t seq_base, uint32_t linger_s, char *why,
		    size_t whylen);
void nm_buddy_destroy(struct nm_buddy *b);
/* Where copies and fetched images are kept here. */
const char *nm_buddy_dir(const struct nm_buddy *b);
/* The node manager that keeps this one's copies: the next one in the
 * view after it (world ids, round), or -ENOENT when it is alone. */
int64_t nm_buddy_pick(struct nm_buddy *b);
/* The file open at fd sent to node dest as f, blocking until it is
 * written there: 0, or -errno with why (the node gone, its disk full,
 * no answer within 30 s).  Any thread; senders take turns. */
int nm_buddy_send(struct nm_buddy *b, uint32_t dest,
		  const struct nm_buddy_file *f, int fd, char *why,
		  size_t whylen);

/* Node dest's copies of job go (its sender deleted the images): 0, or
 * -errno with why, as nm_buddy_send. */
int nm_buddy_drop(struct nm_buddy *b, uint32_t dest, uint32_t job,
		  char *why, size_t whylen);

/* Ask every other node for rank's chain of job back from epoch (and the
 * file `name` of that epoch, if not NULL): 0 once asked (the answer by
 * nm_buddy_fetched), -EBUSY while an earlier request is open. */
int nm_buddy_want(struct nm_buddy *b, uint32_t job, uint32_t epoch,
		  uint32_t rank, const char *name);
/* The open request: 1 when every file asked for arrived whole here from
 * one node, 0 while waiting, -ENOENT when no node had them (every live
 * node answered) or none answered within wait_ms.  A settled request is
 * closed (the next nm_buddy_want may go). */
int nm_buddy_fetched(struct nm_buddy *b, uint32_t wait_ms);

/* ---- the bytes (buddy_wire.c) ------------------------------------------ */

#define NM_BUDDY_HDR 96u
#define NM_BUDDY_WANT_LINE 64u
#define NM_BUDDY_F_FIRST 1u  /* a file's first box */
#define NM_BUDDY_F_LAST 2u   /* ... and its last */
#define NM_BUDDY_F_REPLY 4u  /* an answer to request want_seq */
#define NM_BUDDY_F_DONE 8u   /* the answer's last file */
#define NM_BUDDY_F_DROP 16u  /* no file: the receiver's copies of job go */

struct nm_buddy_box {
	uint32_t flags;
	uint64_t seq;
	uint32_t job, epoch, base, uid, gid, len;
	uint64_t off, total, want_seq;
	char name[NM_BUDDY_NAME_MAX];
	const uint8_t *data;     /* decode: len bytes after the header */
};

/* A name a copy may have: [A-Za-z0-9._-], not starting with '.'. */
int nm_buddy_name_ok(const char *s);
/* x's header into p (NM_BUDDY_HDR bytes; name cut to fit). */
void nm_buddy_box_encode(uint8_t *p, const struct nm_buddy_box *x);
/* The box in p[0..n) (what landed), checked: the magic, its name, its
 * bytes within n and within the file (off + len <= total <= 64 GiB),
 * job and epoch not 0.  0, or -EPROTO. */
int nm_buddy_box_decode(const uint8_t *p, size_t n, struct nm_buddy_box *x);
void nm_buddy_want_encode(uint8_t *p, uint64_t seq, uint32_t job,
			  uint32_t epoch, uint32_t rank, const char *name);
/* A request line (NM_BUDDY_WANT_LINE bytes), checked: 0 or -EPROTO. */
int nm_buddy_want_decode(const uint8_t *p, uint64_t *seq, uint32_t *job,
			 uint32_t *epoch, uint32_t *rank,
			 char name[NM_BUDDY_NAME_MAX]);

#endif
