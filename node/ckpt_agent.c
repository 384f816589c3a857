/*
 * ckpt_agent.c — storm-nm's checkpoint agent (ckpt_agent.h).  Two halves:
 * the node manager's thread stops a job's local ranks, holds each for its
 * state and snapshot (ckpt_capture_hold: ptrace is per thread, so the
 * thread that holds is the one that ends) and lets them run on; the
 * agent's own thread writes the images (ckpt_capture_write), so a large
 * image never stalls the heartbeat.  An eventfd tells the loop an epoch
 * is written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include <ckpt.h>

#include "buddy.h"
#include "ckpt_agent.h"
#include "ckpt_store.h"
#include "job.h"

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- the rank's output point, kept in its image ------------------------- */

/* The note: "SAID" | u64 stdout bytes | u64 stderr bytes (LE): how much
 * the rank had written when captured, so that after a restore storm-nm
 * counts on from there and the output's reader can tell what the rank
 * prints again (docs/checkpoint.md §5). */
#define SAID_MAGIC 0x44494153u
#define SAID_LEN 20

/* Written: what was read, and what its pipes still hold (it is stopped:
 * nothing more comes). */
static int put_said(ckpt_capture_t *k, const struct nm_rank *x)
{
	unsigned char b[SAID_LEN];
	uint64_t v[2];

	for (int s = 0; s < 2; s++) {
		int q = 0;

		if (x->fd[s] < 0 || ioctl(x->fd[s], FIONREAD, &q) < 0 || q < 0)
			q = 0;
		v[s] = x->said[s] + (uint64_t)q;
	}
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(SAID_MAGIC >> (8 * i));
	for (int i = 0; i < 8; i++) {
		b[4 + i] = (unsigned char)(v[0] >> (8 * i));
		b[12 + i] = (unsigned char)(v[1] >> (8 * i));
	}
	return ckpt_capture_note(k, b, sizeof(b));
}

/* The rank restored from image b counts its output on from its note (0
 * if it has none: an image of an older storm-nm). */
static void take_said(const struct ckpt_blob *b, struct nm_rank *x)
{
	unsigned char n[SAID_LEN];

	x->said[0] = x->said[1] = 0;
	if (ckpt_note(b, n, sizeof(n)) == SAID_LEN && le(n, 4) == SAID_MAGIC) {
		x->said[0] = le(n + 4, 8);
		x->said[1] = le(n + 12, 8);
	}
}

/* The most deltas after a full image (ckpt_chain's bound). */
#define CKPT_CHAIN 64

struct agent_job {
	struct agent_job *next;
	uint32_t id;
	uint32_t last;           /* the last epoch started here */
	uint32_t parent;         /* the last epoch written here: a delta's base */
	uint32_t chain;          /* deltas since the full image */
	uint32_t full, prev_full; /* epochs of the last two full images */
	int busy;                /* an epoch being written */
	int compacting;          /* a chain being compacted (its length) */
	uint32_t compact_chain;
	int forgotten;           /* the job is gone: freed with its outcome */
	uint32_t ntr;
	ckpt_track_t **tr;       /* per local rank */
};

struct work {
	struct work *next;
	uint32_t job, epoch;
	uid_t uid;
	gid_t gid;
	int rc;                  /* the L3 copy's */
	char why[1400];
	uint32_t n;
	ckpt_capture_t **caps;
	int *fds;
	uint32_t *ranks;
	int full;
	uint32_t stop_us;
	/* the side blob (nm_ckpt_side), written by the writer */
	char side_name[64];
	int side_fd;
	uint8_t *side;
	size_t side_len;
	/* or a compaction of the chains ending at epoch of ranks[0..ncompact)
	 * (no capture: n is 0) */
	uint32_t ncompact;
	uint64_t compact_bytes;
	/* L2: the node keeping copies (-1: none), the oldest epoch this
	 * node keeps of the job (the buddy drops what is before), and
	 * whether every file got there */
	int64_t buddy;
	uint32_t base;
	int l2;
	int drop;                /* no capture: the buddy's copies of job go */
};

/* A job gone from this node: its images go linger_s after. */
struct gone {
	struct gone *next;
	uint32_t job;
	uint64_t at_ms;
};

struct nm_ckpt {
	char root[1024];
	uint64_t quota;          /* bytes of one user's images here, 0: any */
	uint32_t linger_s;
	struct gone *gone;
	uint64_t swept_ms;
	char shared[1024];       /* L3, or "" */
	uint32_t chain;          /* deltas between full images */
	uint64_t cluster;
	int efd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct work *todo, *done;
	int quit, nbusy;
	pthread_t th;
	struct agent_job *jobs;
	struct nm_buddy *buddy;  /* L2, or NULL */
	/* a restore's images being fetched: which */
	uint32_t fetch_job, fetch_epoch, fetch_rank;
	int fetching;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

/* ---- the writer thread -------------------------------------------------- */

/* The file src of w (named name in the epoch's directory) copied to the
 * shared directory (L3): the same path below it, the same owner and
 * mode; 0 or -errno with w->why (what names it). */
static int copy_shared(struct nm_ckpt *a, struct work *w, int src,
		       const char *name, const char *what)
{
	char part[80];
	off_t len = lseek(src, 0, SEEK_END), off = 0;
	/* never made afresh: other nodes write their ranks' copies there */
	int dfd = nm_store_epoch_dir(a->shared, w->job, w->epoch, 0);
	int fd, rc = 0;

	if (dfd < 0) {
		snprintf(w->why, sizeof(w->why), "%s: shared directory "
			 "%.200s: %s", what, a->shared, strerror(-dfd));
		return dfd;
	}
	/* written aside, then renamed: a reader on another node sees the
	 * whole copy or the one before, never a torn one */
	snprintf(part, sizeof(part), "%s.part", name);
	fd = openat(dfd, part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0 || fchown(fd, w->uid, w->gid) < 0)
		rc = -errno;
	while (!rc && off < len) {
		loff_t in = off;
		ssize_t n = copy_file_range(src, &in, fd, NULL,
					    (size_t)(len - off), 0);

		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else
			off += n;
	}
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (!rc && renameat(dfd, part, dfd, name) < 0)
		rc = -errno;
	if (rc)
		unlinkat(dfd, part, 0);
	close(dfd);
	if (rc)
		snprintf(w->why, sizeof(w->why), "%s: its copy in %.200s: %s",
			 what, a->shared, strerror(-rc));
	return rc;
}

/* The side blob of w to its file (and L3): 0 or -errno with w->why. */
static int write_side(struct nm_ckpt *a, struct work *w)
{
	size_t off = 0;
	int rc = 0;

	while (!rc && off < w->side_len) {
		ssize_t n = write(w->side_fd, w->side + off,
				  w->side_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (!rc && fsync(w->side_fd) < 0)
		rc = -errno;
	if (rc) {
		snprintf(w->why, sizeof(w->why), "%s: %s", w->side_name,
			 strerror(-rc));
		return rc;
	}
	return a->shared[0] ? copy_shared(a, w, w->side_fd, w->side_name,
					  w->side_name) : 0;
}

/* The file fd of w (named name) to the buddy (L2); a failure costs the
 * epoch its L2 level, not the epoch. */
static void copy_buddy(struct nm_ckpt *a, struct work *w, int fd,
		       const char *name)
{
	struct nm_buddy_file f = { w->job, w->epoch, w->base, w->uid, w->gid,
				   name };
	char why[300];

	if (!w->l2)
		return;
	if (nm_buddy_send(a->buddy, (uint32_t)w->buddy, &f, fd, why,
			  sizeof(why))) {
		qb_log(LOG_WARNING, "job %u epoch %u: no copy on a buddy "
		       "(L2): %s", w->job, w->epoch, why);
		w->l2 = 0;
	}
}

/* Whether w's files go to a buddy: one is picked (the next node). */
static void pick_buddy(struct nm_ckpt *a, struct work *w)
{
	w->buddy = a->buddy ? nm_buddy_pick(a->buddy) : -1;
	w->l2 = w->buddy >= 0;
}

static int do_compact(struct nm_ckpt *a, struct work *w);

static void *writer(void *arg)
{
	struct nm_ckpt *a = arg;

	/* images travel while the job runs: on a node whose cpus its ranks
	 * use, the copying yields to them (a rank waking from a sleep is
	 * not made to wait for it), and takes what they leave */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) < 0)
		qb_log(LOG_DEBUG, "checkpoint agent: nice: %s",
		       strerror(errno));

	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct work *w;

		while (!a->todo && !a->quit)
			pthread_cond_wait(&a->cv, &a->mu);
		if (!a->todo)
			break;
		w = a->todo;
		a->todo = w->next;
		pthread_mutex_unlock(&a->mu);
		pick_buddy(a, w);
		if (w->drop) {
			char why[300];

			if (w->l2 && nm_buddy_drop(a->buddy, (uint32_t)w->buddy,
						   w->job, why, sizeof(why)))
				qb_log(LOG_DEBUG, "job %u: its copies on the "
				       "buddy stay: %s", w->job, why);
			free(w);
			pthread_mutex_lock(&a->mu);
			continue;
		}
		if (w->ncompact)
			w->rc = do_compact(a, w);
		for (uint32_t i = 0; i < w->n; i++) {
			char img[32];

			if (ckpt_capture_write(w->caps[i])) {
				w->l2 = 0;
				continue;
			}
			if (fsync(w->fds[i]) < 0)
				qb_log(LOG_WARNING, "job %u epoch %u: fsync: "
				       "%s", w->job, w->epoch,
				       strerror(errno));
			if (a->shared[0] && !w->rc) {
				char name[32], what[32];

				snprintf(name, sizeof(name), "rank-%u.img",
					 w->ranks[i]);
				snprintf(what, sizeof(what), "rank %u",
					 w->ranks[i]);
				w->rc = copy_shared(a, w, w->fds[i], name, what);
			}
			snprintf(img, sizeof(img), "rank-%u.img", w->ranks[i]);
			if (!w->rc)
				copy_buddy(a, w, w->fds[i], img);
		}
		if (w->side && !w->rc)
			w->rc = write_side(a, w);
		if (w->side && !w->rc)
			copy_buddy(a, w, w->side_fd, w->side_name);
		pthread_mutex_lock(&a->mu);
		w->next = a->done;
		a->done = w;
		{
			uint64_t one = 1;

			if (write(a->efd, &one, sizeof(one)) < 0)
				qb_log(LOG_WARNING, "checkpoint agent: "
				       "eventfd: %s", strerror(errno));
		}
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* ---- images on disk (ckpt_store.h) -------------------------------------- */

static int epoch_dir(const struct nm_ckpt *a, uint32_t job, uint32_t epoch)
{
	return nm_store_epoch_dir(a->root, job, epoch, 1);
}

/* ---- the agent ---------------------------------------------------------- */

int nm_ckpt_create(struct nm_ckpt **out, const char *root,
		   const char *shared, const char *cluster, uint32_t chain,
		   char *why, size_t whylen)
{
	struct nm_ckpt *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	snprintf(a->root, sizeof(a->root), "%s", root);
	snprintf(a->shared, sizeof(a->shared), "%s", shared ? shared : "");
	a->chain = chain < CKPT_CHAIN ? chain : CKPT_CHAIN;
	a->cluster = fnv(0xcbf29ce484222325ull, cluster, strlen(cluster));
	if (mkdir(a->root, 0711) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "checkpoint directory %s: %s", a->root,
			 strerror(errno));
		free(a);
		return -errno;
	}
	chmod(a->root, 0711); /* others may reach their own images only */
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if ((a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    pthread_create(&a->th, NULL, writer, a)) {
		snprintf(why, whylen, "checkpoint agent: cannot start its "
			 "writer: %s", strerror(errno));
		if (a->efd >= 0)
			close(a->efd);
		free(a);
		return -EAGAIN;
	}
	*out = a;
	return 0;
}

static void job_free(struct agent_job *j)
{
	for (uint32_t i = 0; i < j->ntr; i++)
		ckpt_track_destroy(j->tr[i]);
	free(j->tr);
	free(j);
}

static void work_end(struct work *w, struct nm_ckpt_done *d)
{
	if (d && w->rc) {
		d->rc = w->rc;
		snprintf(d->why, sizeof(d->why), "%.250s", w->why);
	}
	for (uint32_t i = 0; i < w->n; i++) {
		struct ckpt_stats st;
		char why[200];
		int rc = ckpt_capture_end(w->caps[i], &st, why, sizeof(why));

		if (rc && d && !d->rc) {
			d->rc = rc;
			snprintf(d->why, sizeof(d->why), "rank %u: %s",
				 w->ranks[i], why);
		} else if (!rc && d) {
			d->bytes += st.bytes;
			d->pages += st.pages;
			d->dirty += st.dirty_pages;
		}
		close(w->fds[i]);
	}
	if (w->side_fd >= 0)
		close(w->side_fd);
	free(w->side);
	free(w->caps);
	free(w->fds);
	free(w->ranks);
	free(w);
}

void nm_ckpt_destroy(struct nm_ckpt *a)
{
	struct agent_job *j;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->quit = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	while (a->todo) { /* not written: their snapshots go */
		struct work *w = a->todo;

		a->todo = w->next;
		work_end(w, NULL);
	}
	while (a->done) {
		struct work *w = a->done;

		a->done = w->next;
		work_end(w, NULL);
	}
	while ((j = a->jobs)) {
		a->jobs = j->next;
		job_free(j);
	}
	while (a->gone) {
		struct gone *g = a->gone;

		a->gone = g->next;
		free(g);
	}
	close(a->efd);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}

static struct agent_job *job_of(const struct nm_ckpt *a, uint32_t id)
{
	for (struct agent_job *j = a->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

int nm_ckpt_wanted(const struct nm_ckpt *a, const struct nm_job *j,
		   uint32_t epoch)
{
	const struct agent_job *aj = job_of(a, j->id);

	return epoch && (!aj || epoch > aj->last);
}

int nm_ckpt_fd(const struct nm_ckpt *a)
{
	return a->efd;
}

int nm_ckpt_busy(const struct nm_ckpt *a)
{
	return a->nbusy > 0;
}

/* SIGSTOP to (or SIGCONT for) each live rank's process group. */
static void signal_ranks(struct nm_job *j, int sig)
{
	for (uint32_t i = 0; i < j->nlocal; i++)
		if (j->ranks[i].pid > 0)
			kill(-j->ranks[i].pid, sig);
}

static int refuse(char *why, size_t whylen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *why, size_t whylen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Whose an image of j's rank is: this cluster, the job, the rank, and
 * its program (name and size: the staging checks its bytes). */
static struct ckpt_ident ident_of(const struct nm_ckpt *a,
				  const struct nm_job *j, uint32_t rank)
{
	const char *prog = j->m->nfiles ? j->m->file_names[0] : "";
	uint64_t binary = fnv(0xcbf29ce484222325ull, prog, strlen(prog));

	if (j->m->nfiles)
		binary = fnv(binary, &j->m->file_sizes[0], 8);
	return (struct ckpt_ident){ a->cluster, j->id, rank, binary };
}

/* Whether pid is stopped (group stop, or traced), by /proc/PID/stat. */
static int is_stopped(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'T' || p[2] == 't');
}

/* Every live rank of j stopped within ms: a rank that is not (waiting
 * for a vfork child it stopped with it, in uninterruptible sleep) is
 * never held, as the hold would wait for it with the main loop.  0, or
 * -ETIMEDOUT with why naming the rank. */
static int await_stopped(struct nm_job *j, uint32_t ms, char *why,
			 size_t whylen)
{
	uint64_t until = now_us() + (uint64_t)ms * 1000u;
	struct timespec nap = { 0, 500000 };

	for (uint32_t i = 0; i < j->nlocal; i++)
		while (j->ranks[i].pid > 0 && !is_stopped(j->ranks[i].pid)) {
			if (now_us() >= until) {
				snprintf(why, whylen, "rank %u did not stop "
					 "within %u ms (waiting for a child "
					 "it vforked, or in uninterruptible "
					 "sleep); the next epoch may find it "
					 "stoppable", j->ranks[i].rank, ms);
				return -ETIMEDOUT;
			}
			nanosleep(&nap, NULL);
		}
	return 0;
}

/* Hold every local rank of j for epoch e; the holds into w. */
static int hold_ranks(struct nm_ckpt *a, struct nm_job *j,
		      struct agent_job *aj, uint32_t epoch, int dfd,
		      const struct ckpt_inherit *inh, struct work *w,
		      char *why, size_t whylen)
{
	/* a delta while the chain is short or being compacted; full past
	 * twice ckpt_chain (compactions failing) or with ckpt_chain 0 */
	int full = !aj->parent || !a->chain ||
		   aj->chain >= (2 * a->chain < CKPT_CHAIN ? 2 * a->chain :
				 CKPT_CHAIN);

	w->full = full;
	for (uint32_t i = 0; i < j->nlocal; i++) {
		const struct nm_rank *x = &j->ranks[i];
		struct ckpt_header h = {
			.kind = full ? CKPT_FULL : CKPT_DELTA,
			.id = ident_of(a, j, x->rank),
			.epoch = epoch, .parent = full ? 0 : aj->parent,
		};
		char name[32], cwhy[200];
		int fd, rc;

		if (x->pid <= 0)
			return refuse(why, whylen, -ESRCH, "rank %u has ended; "
				      "a job is checkpointed while all its "
				      "ranks run", x->rank);
		if (!aj->tr[i] && ckpt_track_create(&aj->tr[i]))
			return refuse(why, whylen, -ENOMEM, "out of memory");
		snprintf(name, sizeof(name), "rank-%u.img", x->rank);
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return refuse(why, whylen, -errno, "rank %u: image "
				      "%s/job-%u/epoch-%u/%s: %s", x->rank,
				      a->root, j->id, epoch, name,
				      strerror(errno));
		/* the user's image, 0600: theirs to read, nobody else's */
		if (j->ident && fchown(fd, j->ident->uid, j->ident->gid) < 0) {
			rc = -errno;
			close(fd);
			return refuse(why, whylen, rc, "rank %u: image owner: "
				      "%s", x->rank, strerror(-rc));
		}
		rc = ckpt_capture_hold_inherit(x->pid, fd, &h, aj->tr[i], inh,
					       &w->caps[w->n], cwhy,
					       sizeof(cwhy));
		if (!rc && (rc = put_said(w->caps[w->n], x))) {
			ckpt_capture_end(w->caps[w->n], NULL, cwhy,
					 sizeof(cwhy));
			w->caps[w->n] = NULL;
		}
		if (rc) {
			close(fd);
			return refuse(why, whylen, rc, "rank %u: %s", x->rank,
				      cwhy);
		}
		w->fds[w->n] = fd;
		w->ranks[w->n++] = x->rank;
	}
	return 0;
}

/* The side blob of j, while its ranks are stopped: into w, its file
 * made in dfd (the owner's, 0600).  0 or -errno with why. */
static int hold_side(struct nm_job *j, const struct nm_ckpt_side *side,
		     int dfd, struct work *w, char *why, size_t whylen)
{
	int rc;

	snprintf(w->side_name, sizeof(w->side_name), "%s", side->name);
	if ((rc = side->held(side->ctx, j, &w->side, &w->side_len, why,
			     whylen)))
		return rc;
	w->side_fd = openat(dfd, w->side_name, O_RDWR | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->side_fd < 0 ||
	    (j->ident && fchown(w->side_fd, j->ident->uid,
				j->ident->gid) < 0))
		return refuse(why, whylen, -errno, "%s: %s", w->side_name,
			      strerror(errno));
	return 0;
}

int nm_ckpt_start(struct nm_ckpt *a, struct nm_job *j, uint32_t epoch,
		  const struct nm_ckpt_side *side, char *why, size_t whylen)
{
	struct agent_job *aj = job_of(a, j->id);
	struct work *w;
	int dfd, rc, thawed = 0, stopped = 0;
	uint64_t t0;

	if (!aj) {
		if (!(aj = calloc(1, sizeof(*aj))) ||
		    !(aj->tr = calloc(j->nlocal ? j->nlocal : 1,
				      sizeof(*aj->tr)))) {
			free(aj);
			return refuse(why, whylen, -ENOMEM, "out of memory");
		}
		aj->id = j->id;
		aj->ntr = j->nlocal;
		aj->next = a->jobs;
		a->jobs = aj;
	}
	aj->last = epoch;
	if (j->m->mpi && !side)
		return refuse(why, whylen, -ENOTSUP, "BCS-MPI ranks are "
			      "checkpointed with their engine's state; none "
			      "was given");
	if (aj->busy)
		return refuse(why, whylen, -EBUSY, "the images of the epoch "
			      "before are still being written");
	if (!j->started || j->nlocal != aj->ntr)
		return refuse(why, whylen, -EAGAIN, "its ranks are not "
			      "running here");
	if (!(w = calloc(1, sizeof(*w))) ||
	    !(w->caps = calloc(j->nlocal + 1, sizeof(*w->caps))) ||
	    !(w->fds = calloc(j->nlocal + 1, sizeof(*w->fds))) ||
	    !(w->ranks = calloc(j->nlocal + 1, sizeof(*w->ranks)))) {
		if (w) {
			free(w->caps);
			free(w->fds);
		}
		free(w);
		return refuse(why, whylen, -ENOMEM, "out of memory");
	}
	w->job = j->id;
	w->side_fd = -1;
	w->epoch = epoch;
	w->uid = j->ident ? j->ident->uid : 0;
	w->gid = j->ident ? j->ident->gid : 0;
	if ((dfd = epoch_dir(a, j->id, epoch)) < 0) {
		work_end(w, NULL);
		return refuse(why, whylen, dfd, "%s/job-%u/epoch-%u: %s",
			      a->root, j->id, epoch, strerror(-dfd));
	}
	/* the job's ranks stop together; a frozen cgroup (a gang stop) is
	 * thawed meanwhile, its ranks staying stopped by SIGSTOP, so that
	 * ptrace can make them act */
	t0 = now_us();
	if (!j->stopped) {
		signal_ranks(j, SIGSTOP);
		stopped = 1;
	} else {
		thawed = nm_cg_freeze(&j->cg, 0) == 0;
	}
	rc = await_stopped(j, 200, why, whylen);
	if (!rc)
		rc = hold_ranks(a, j, aj, epoch, dfd,
				side ? &side->inherit : NULL, w, why, whylen);
	if (!rc && side)
		rc = hold_side(j, side, dfd, w, why, whylen);
	if (thawed)
		nm_cg_freeze(&j->cg, 1);
	if (stopped)
		signal_ranks(j, SIGCONT);
	w->stop_us = (uint32_t)(now_us() - t0);
	close(dfd);
	if (rc) {
		work_end(w, NULL);
		nm_store_remove_epoch(a->root, a->shared, j->id, epoch);
		aj->parent = 0; /* the next one is full */
		return rc;
	}
	aj->busy = 1;
	/* what this node keeps once it is written: from the full image
	 * before (a full capture drops the chains before that) */
	w->base = w->full ? aj->full : aj->prev_full;
	pthread_mutex_lock(&a->mu);
	w->next = a->todo;
	a->todo = w;
	a->nbusy++;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	qb_log(LOG_DEBUG, "job %u: epoch %u held (%u ranks, %s, stopped "
	       "%u us)", j->id, epoch, w->n, w->full ? "full" : "delta",
	       w->stop_us);
	return 0;
}

static uint64_t now_ms(void)
{
	return now_us() / 1000u;
}

void nm_ckpt_limits(struct nm_ckpt *a, uint64_t quota_bytes,
		    uint32_t linger_s)
{
	a->quota = quota_bytes;
	a->linger_s = linger_s;
}

/* The buddy's copies of a job whose images went here: dropped by the
 * writer thread (it sends; this one must not wait). */
static void drop_later(struct nm_ckpt *a, uint32_t job)
{
	struct work *w;

	if (!a->buddy || !(w = calloc(1, sizeof(*w))))
		return;
	w->job = job;
	w->drop = 1;
	w->side_fd = -1;
	pthread_mutex_lock(&a->mu);
	w->next = a->todo;
	a->todo = w;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void nm_ckpt_sweep(struct nm_ckpt *a, int (*held)(void *, uint32_t),
		   void *ctx)
{
	uint64_t now = now_ms();

	if (now - a->swept_ms < 1000)
		return;
	a->swept_ms = now;
	for (struct gone **p = &a->gone; *p;) {
		struct gone *g = *p;
		char name[32];
		int fd;

		if (held(ctx, g->job)) { /* back here (a restart) */
			*p = g->next;
			free(g);
			continue;
		}
		if (now < g->at_ms + (uint64_t)a->linger_s * 1000u) {
			p = &g->next;
			continue;
		}
		snprintf(name, sizeof(name), "job-%u", g->job);
		/* and their L3 copies */
		nm_store_remove_before(a->root, a->shared, g->job, UINT32_MAX);
		if ((fd = open(a->root, O_RDONLY | O_DIRECTORY |
			       O_CLOEXEC)) >= 0) {
			nm_store_rm_tree(fd, name);
			close(fd);
		}
		qb_log(LOG_DEBUG, "job %u: its images here deleted (%u s "
		       "after it left)", g->job, a->linger_s);
		drop_later(a, g->job);
		*p = g->next;
		free(g);
	}
}

static void queue_work(struct nm_ckpt *a, struct work *w)
{
	pthread_mutex_lock(&a->mu);
	w->next = a->todo;
	a->todo = w;
	a->nbusy++;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

/* A compaction of j's chains ending at epoch, for the ranks of a work
 * that wrote it: queued for the writer thread. */
static void compact_later(struct nm_ckpt *a, struct agent_job *aj,
			  const struct work *done)
{
	struct work *w = calloc(1, sizeof(*w));

	if (!w || !(w->ranks = calloc(done->n ? done->n : 1,
				      sizeof(*w->ranks)))) {
		free(w);
		return; /* a full capture comes later instead */
	}
	w->job = done->job;
	w->epoch = done->epoch;
	w->uid = done->uid;
	w->gid = done->gid;
	w->side_fd = -1;
	w->ncompact = done->n;
	w->base = aj->full;
	memcpy(w->ranks, done->ranks, done->n * sizeof(*w->ranks));
	aj->compacting = 1;
	aj->compact_chain = aj->chain;
	queue_work(a, w);
}

/* A compaction's outcome: epoch is the full image now, the chain before
 * the one before it goes (as for a full capture). */
static void compacted(struct nm_ckpt *a, struct work *w)
{
	struct agent_job *aj = job_of(a, w->job);

	if (w->rc)
		qb_log(LOG_WARNING, "job %u: compacting its images of epoch "
		       "%u: %s", w->job, w->epoch, w->why);
	else
		qb_log(LOG_DEBUG, "job %u: epoch %u compacted (%llu bytes)",
		       w->job, w->epoch,
		       (unsigned long long)w->compact_bytes);
	if (aj) {
		aj->compacting = 0;
		if (!w->rc && aj->full < w->epoch) {
			if (aj->full)
				nm_store_remove_before(a->root, a->shared, w->job, aj->full);
			aj->prev_full = aj->full;
			aj->full = w->epoch;
			aj->chain = aj->chain > aj->compact_chain ?
				    aj->chain - aj->compact_chain : 0;
		}
	}
	work_end(w, NULL);
}

int nm_ckpt_poll(struct nm_ckpt *a, struct nm_ckpt_done *d)
{
	struct agent_job *aj;
	struct work *w;
	uint64_t v;

	if (read(a->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		qb_log(LOG_WARNING, "checkpoint agent: eventfd: %s",
		       strerror(errno));
	for (;;) {
		pthread_mutex_lock(&a->mu);
		if ((w = a->done))
			a->done = w->next;
		pthread_mutex_unlock(&a->mu);
		if (!w)
			return 0;
		if (!w->ncompact)
			break;
		a->nbusy--;
		compacted(a, w);
	}
	memset(d, 0, sizeof(*d));
	d->job = w->job;
	d->epoch = w->epoch;
	d->stop_us = w->stop_us;
	d->levels = 1 | (w->l2 ? 2 : 0) | (a->shared[0] ? 4 : 0);
	a->nbusy--;
	{
		int full = w->full;
		uid_t uid = w->uid;
		struct work keep = *w; /* its ranks, for a compaction */

		keep.ranks = calloc(w->n ? w->n : 1, sizeof(*keep.ranks));
		if (keep.ranks)
			memcpy(keep.ranks, w->ranks, w->n * sizeof(*w->ranks));
		else
			keep.n = 0;
		work_end(w, d); /* here: the thread that held ends */
		if (!d->rc && a->quota) {
			uint64_t used = nm_store_usage(a->root, uid);

			if (used > a->quota) {
				d->rc = -EDQUOT;
				snprintf(d->why, sizeof(d->why), "uid %u's "
					 "images here take %llu MiB, over "
					 "ckpt_quota_mib (%llu): delete a job's "
					 "or ask for a larger quota",
					 (unsigned)uid,
					 (unsigned long long)(used >> 20),
					 (unsigned long long)(a->quota >> 20));
			}
		}
		aj = job_of(a, d->job);
		if (aj)
			aj->busy = 0;
		if (d->rc) {
			nm_store_remove_epoch(a->root, a->shared, d->job, d->epoch);
			if (aj)
				aj->parent = 0;
		} else if (aj) {
			aj->parent = d->epoch;
			aj->chain = full ? 0 : aj->chain + 1;
			/* a new full image: the chains before the last
			 * one go (the catalog keeps the last few epochs,
			 * fewer than a chain) */
			if (full) {
				if (aj->full)
					nm_store_remove_before(a->root, a->shared, d->job, aj->full);
				aj->prev_full = aj->full;
				aj->full = d->epoch;
			}
			/* a chain as long as ckpt_chain: folded into a
			 * full image in the background, so the next
			 * captures stay deltas */
			if (!full && a->chain && aj->chain >= a->chain &&
			    !aj->compacting && !aj->forgotten && keep.n)
				compact_later(a, aj, &keep);
		}
		free(keep.ranks);
		if (aj && aj->forgotten)
			nm_ckpt_forget(a, d->job);
	}
	return 1;
}

void nm_ckpt_forget(struct nm_ckpt *a, uint32_t job)
{
	struct gone *g;
	int known = 0;

	for (g = a->gone; g; g = g->next)
		known |= g->job == job;
	/* its images go linger_s from now, unless it is back by then */
	if (!known && (g = calloc(1, sizeof(*g)))) {
		g->job = job;
		g->at_ms = now_ms();
		g->next = a->gone;
		a->gone = g;
	}
	for (struct agent_job **p = &a->jobs; *p; p = &(*p)->next)
		if ((*p)->id == job) {
			struct agent_job *j = *p;

			if (j->busy) { /* freed with its outcome */
				j->forgotten = 1;
				return;
			}
			*p = j->next;
			job_free(j);
			return;
		}
}

/* ---- restore ------------------------------------------------------------ */

/* The image of rank at epoch of job, here (L1), else in the shared
 * directory (L3), read into private anonymous memory: the file is its
 * owner's to write, and what the restore checks must be what it uses
 * (a mapping of the file would follow the owner's writes, or fault on
 * a truncation).  0, or -errno. */
static int map_named(const struct nm_ckpt *a, uint32_t job, uint32_t epoch,
		     const char *name, struct ckpt_blob *b)
{
	const char *roots[3] = { a->root,
				 a->buddy ? nm_buddy_dir(a->buddy) : "",
				 a->shared };
	char p[1200];
	struct stat sb;
	int rc = -ENOENT;

	for (int k = 0; k < 3 && rc == -ENOENT; k++) {
		int fd;

		if (!roots[k][0])
			continue;
		snprintf(p, sizeof(p), "%s/job-%u/epoch-%u/%s", roots[k], job,
			 epoch, name);
		if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = -errno;
			continue;
		}
		if (fstat(fd, &sb) < 0 || sb.st_size < CKPT_HEADER_BYTES) {
			close(fd);
			return -EINVAL;
		}
		b->len = (size_t)sb.st_size;
		b->buf = mmap(NULL, b->len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->buf == MAP_FAILED) {
			rc = -errno;
			b->buf = NULL;
			close(fd);
			return rc;
		}
		for (size_t off = 0; off < b->len;) {
			ssize_t n = pread(fd, (char *)b->buf + off,
					  b->len - off, (off_t)off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) { /* shortened meanwhile: refused */
				munmap((void *)b->buf, b->len);
				b->buf = NULL;
				close(fd);
				return n < 0 ? -errno : -EINVAL;
			}
			off += (size_t)n;
		}
		close(fd);
		rc = 0;
	}
	return rc;
}

static int map_image(const struct nm_ckpt *a, uint32_t job, uint32_t epoch,
		     uint32_t rank, struct ckpt_blob *b)
{
	char name[32];

	snprintf(name, sizeof(name), "rank-%u.img", rank);
	return map_named(a, job, epoch, name, b);
}

int nm_ckpt_side_read(struct nm_ckpt *a, const struct nm_job *j,
		      uint32_t epoch, const char *name, uint8_t **buf,
		      size_t *len, char *why, size_t whylen)
{
	struct ckpt_blob b;
	int rc = map_named(a, j->id, epoch, name, &b);

	if (rc)
		return refuse(why, whylen, rc, "its %s of epoch %u: %s", name,
			      epoch, strerror(-rc));
	*buf = malloc(b.len);
	if (*buf)
		memcpy(*buf, b.buf, b.len);
	*len = b.len;
	munmap((void *)b.buf, b.len);
	return *buf ? 0 : refuse(why, whylen, -ENOMEM, "out of memory");
}


/* Rank's chain back from epoch to its full image, oldest first, read
 * into chain[0..*n) (munmap each): 0, or -errno with why. */
static int load_chain(const struct nm_ckpt *a, uint32_t job, uint32_t epoch,
		      uint32_t rank, struct ckpt_blob *chain, uint32_t *n,
		      char *why, size_t whylen)
{
	uint32_t e = epoch;
	int rc = 0;

	*n = 0;
	while (!rc && *n < CKPT_CHAIN + 2) {
		const unsigned char *h;

		if ((rc = map_image(a, job, e, rank, &chain[*n]))) {
			snprintf(why, whylen, "its image of epoch %u: %s", e,
				 strerror(-rc));
			break;
		}
		h = chain[(*n)++].buf;
		if (le(h + 12, 4) == CKPT_FULL)
			break;
		e = (uint32_t)le(h + 56, 8);
	}
	if (!rc && le((const unsigned char *)chain[*n - 1].buf + 12, 4) !=
		       CKPT_FULL) {
		rc = -EINVAL;
		snprintf(why, whylen, "a chain of more than %u images",
			 CKPT_CHAIN + 2);
	}
	for (uint32_t k = 0; !rc && k < *n / 2; k++) {
		struct ckpt_blob t = chain[k];

		chain[k] = chain[*n - 1 - k];
		chain[*n - 1 - k] = t;
	}
	if (rc) {
		for (uint32_t k = 0; k < *n; k++)
			munmap((void *)chain[k].buf, chain[k].len);
		*n = 0;
	}
	return rc;
}

/* In the writer thread: each rank's chain ending at w->epoch made one
 * full image (ckpt_compact), written aside and renamed over the
 * epoch's image, here and in L3.  0 or -errno with w->why. */
static int do_compact(struct nm_ckpt *a, struct work *w)
{
	for (uint32_t i = 0; i < w->ncompact; i++) {
		struct ckpt_blob chain[CKPT_CHAIN + 2];
		char name[32], part[40], cwhy[200];
		uint32_t n;
		uint64_t bytes = 0;
		int dfd, fd, rc;

		if ((rc = load_chain(a, w->job, w->epoch, w->ranks[i], chain,
				     &n, cwhy, sizeof(cwhy)))) {
			snprintf(w->why, sizeof(w->why), "rank %u: %s",
				 w->ranks[i], cwhy);
			return rc;
		}
		if (n == 1) { /* full already */
			munmap((void *)chain[0].buf, chain[0].len);
			continue;
		}
		snprintf(name, sizeof(name), "rank-%u.img", w->ranks[i]);
		snprintf(part, sizeof(part), "%s.part", name);
		dfd = nm_store_epoch_dir(a->root, w->job, w->epoch, 0);
		fd = dfd < 0 ? -1 : openat(dfd, part, O_RDWR | O_CREAT |
					   O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
					   0600);
		rc = dfd < 0 ? dfd : fd < 0 ? -errno : 0;
		if (!rc && fchown(fd, w->uid, w->gid) < 0)
			rc = -errno;
		if (!rc)
			rc = ckpt_compact(chain, n, fd, &bytes, cwhy,
					  sizeof(cwhy));
		else
			snprintf(cwhy, sizeof(cwhy), "%s", strerror(-rc));
		for (uint32_t k = 0; k < n; k++)
			munmap((void *)chain[k].buf, chain[k].len);
		if (!rc && fsync(fd) < 0)
			rc = -errno;
		if (!rc && renameat(dfd, part, dfd, name) < 0)
			rc = -errno;
		if (rc && dfd >= 0)
			unlinkat(dfd, part, 0);
		if (dfd >= 0)
			close(dfd);
		if (!rc && a->shared[0]) {
			char what[32];

			snprintf(what, sizeof(what), "rank %u", w->ranks[i]);
			rc = copy_shared(a, w, fd, name, what);
		}
		if (!rc)
			copy_buddy(a, w, fd, name);
		if (fd >= 0)
			close(fd);
		if (rc) {
			if (!w->why[0])
				snprintf(w->why, sizeof(w->why), "rank %u: "
					 "compacting epoch %u: %s",
					 w->ranks[i], w->epoch, cwhy);
			return rc;
		}
		w->compact_bytes += bytes;
	}
	return 0;
}

void nm_ckpt_set_buddy(struct nm_ckpt *a, struct nm_buddy *b)
{
	a->buddy = b;
}

/* How long a fetch may take before the restore gives up: every live
 * node is asked, and the one sending takes about a second per GiB */
#define FETCH_WAIT_MS 120000

/* Whether rank's chain (or, rank UINT32_MAX, the file name) of epoch of
 * job is here: L1, L2 store, L3. */
static int at_hand(const struct nm_ckpt *a, uint32_t job, uint32_t epoch,
		   uint32_t rank, const char *name)
{
	const char *roots[3] = { a->root,
				 a->buddy ? nm_buddy_dir(a->buddy) : "",
				 a->shared };
	struct nm_buddy_file file[CKPT_CHAIN + 3];
	char names[CKPT_CHAIN + 3][NM_BUDDY_NAME_MAX];
	int fds[CKPT_CHAIN + 3];
	int n = nm_buddy_find(roots, 3, job, epoch, rank, name, file, names,
			      fds, CKPT_CHAIN + 3);

	for (int i = 0; i < n; i++)
		close(fds[i]);
	return n > 0;
}

int nm_ckpt_gather(struct nm_ckpt *a, struct nm_job *j, uint32_t epoch,
		   const char *side, char *why, size_t whylen)
{
	for (uint32_t i = 0; i <= j->nlocal; i++) {
		uint32_t rank = i < j->nlocal ? j->ranks[i].rank : UINT32_MAX;
		const char *name = i < j->nlocal ? NULL : side;
		int rc;

		if ((i == j->nlocal && !side) ||
		    at_hand(a, j->id, epoch, rank, name))
			continue;
		if (!a->buddy)
			goto none;
		if (a->fetching) { /* one request at a time */
			int mine = a->fetch_job == j->id &&
				   a->fetch_epoch == epoch &&
				   a->fetch_rank == rank;

			if (!(rc = nm_buddy_fetched(a->buddy, FETCH_WAIT_MS)))
				return 0;
			a->fetching = 0;
			if (mine) {
				if (rc == 1 &&
				    at_hand(a, j->id, epoch, rank, name))
					continue;
				goto none;
			}
		}
		if (nm_buddy_want(a->buddy, j->id, epoch, rank, name))
			return 0;
		a->fetching = 1;
		a->fetch_job = j->id;
		a->fetch_epoch = epoch;
		a->fetch_rank = rank;
		qb_log(LOG_INFO, "job %u: %s of epoch %u not here: asked the "
		       "other nodes", j->id, name ? name : "a rank's images",
		       epoch);
		return 0;
none:
		if (rank == UINT32_MAX)
			return refuse(why, whylen, -ENOENT, "its %s of epoch "
				      "%u is on no node left", name, epoch);
		return refuse(why, whylen, -ENOENT, "rank %u: its images of "
			      "epoch %u are on no node left (not here%s, and "
			      "no live node has them)", rank, epoch,
			      a->shared[0] ? " or in the shared directory" :
			      "");
	}
	return 1;
}

int nm_ckpt_restore(struct nm_ckpt *a, struct nm_job *j, uint32_t epoch,
		    char *why, size_t whylen)
{
	char marker[32];
	struct ckpt_remap remap = { marker, j->dir };

	snprintf(marker, sizeof(marker), "/job-%u/", j->id);
	for (uint32_t i = 0; i < j->nlocal; i++) {
		struct nm_rank *x = &j->ranks[i];
		struct ckpt_blob chain[CKPT_CHAIN + 2];
		struct ckpt_ident id = ident_of(a, j, x->rank);
		uint32_t n = 0;
		char cwhy[200];
		int rc;

		/* back from epoch to its full image, then oldest first */
		rc = load_chain(a, j->id, epoch, x->rank, chain, &n, cwhy,
				sizeof(cwhy));
		if (!rc) {
			rc = ckpt_restore(x->pid, chain, n, &id, &remap, cwhy,
					  sizeof(cwhy));
			if (!rc)
				take_said(&chain[n - 1], x);
		} else {
			kill(x->pid, SIGKILL);
			waitpid(x->pid, NULL, __WALL);
		}
		for (uint32_t k = 0; k < n; k++)
			munmap((void *)chain[k].buf, chain[k].len);
		if (rc) {
			x->pid = 0;
			snprintf(why, whylen, "rank %u: restore from epoch %u: "
				 "%s", x->rank, epoch, cwhy);
			return rc;
		}
	}
	return 0;
}
