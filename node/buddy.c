/*
 * buddy.c — L2 checkpoint copies on another node, and fetches (buddy.h).
 *
 * Two threads of its own: the receiver (boxes and requests from other
 * nodes: written out, acknowledged, answered) and the answerer (sends
 * the files a request asked for, so that a receiver never waits on its
 * own sends: two nodes sending to each other would wait for ever).
 * Senders (the answerer, the checkpoint agent's writer) take turns on
 * this node's one box.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>

#include <ckpt.h>

#include "buddy.h"
#include "ckpt_store.h"

#define HDR NM_BUDDY_HDR
#define F_FIRST NM_BUDDY_F_FIRST
#define F_LAST NM_BUDDY_F_LAST
#define F_REPLY NM_BUDDY_F_REPLY
#define F_DONE NM_BUDDY_F_DONE
#define F_DROP NM_BUDDY_F_DROP
#define ACK_LINE 32u
#define WANT_LINE NM_BUDDY_WANT_LINE
#define NAME_MAX_ NM_BUDDY_NAME_MAX
#define BOX_WAIT_MS 30000
#define FILES_MAX 80

/* the 32 bytes a receiver keeps current in a sender's ack line */
struct line {
	uint64_t box_seq; /* the last box of that sender taken */
	int64_t box_rc;   /* and what writing it did (0 or -errno) */
	uint64_t want_seq; /* the last request of that node answered */
	int64_t want_rc;  /* 0: sending, -ENOENT: not here */
};

struct incoming {            /* a file arriving from one sender */
	int fd, dfd;
	uint32_t job, epoch;
	uint64_t off, total, want_seq;
	char name[NAME_MAX_], part[NAME_MAX_ + 16];
};

struct answer {
	struct answer *next;
	uint32_t to;
	uint64_t want_seq;
	int n;
	struct nm_buddy_file file[FILES_MAX];
	char names[FILES_MAX][NM_BUDDY_NAME_MAX];
	int fds[FILES_MAX];
};

struct nm_buddy {
	sp_world_t *w;
	st_layout_t lay;
	uint32_t first, nnodes, self; /* self: this node's index */
	char dir[1100], l1[1100];
	uint32_t linger_s;
	pthread_mutex_t send_mu;     /* one sender at a time */
	uint8_t *box;
	uint64_t seq;
	sp_nodeset_t *one;
	/* the receiver's */
	pthread_t rx, tx;
	int quit;
	uint64_t *taken, *want_taken;
	struct line *lines;
	uint8_t *post;               /* lines to post again (EBUSY) */
	struct incoming *in;
	const uint8_t *gmem;         /* global memory, where boxes land */
	time_t swept;
	/* the requests: this node's, and answers owed (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct answer *answers;
	uint64_t want_seq;
	int want_open;
	uint64_t want_at_ms;
	uint8_t want_line[WANT_LINE];
	uint8_t *want_todo;          /* nodes still to be asked */
	uint32_t want_asked, want_nacks;
	int want_got;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

const char *nm_buddy_dir(const struct nm_buddy *b)
{
	return b->dir;
}

int64_t nm_buddy_pick(struct nm_buddy *b)
{
	sp_nodeset_t *live;
	sp_view_info_t vi;
	int64_t pick = -ENOENT;

	if (sp_nodeset_create(sp_node_count(b->w), &live))
		return -ENOMEM;
	if (!sp_view(b->w, &vi, live))
		for (uint32_t k = 1; k < b->nnodes; k++) {
			uint32_t x = b->first + (b->self + k) % b->nnodes;

			if (sp_nodeset_has(live, x)) {
				pick = x;
				break;
			}
		}
	sp_nodeset_destroy(live);
	return pick;
}

/* ---- sending ------------------------------------------------------------ */

static int refuse(char *why, size_t whylen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(char *why, size_t whylen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && whylen)
		vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return rc;
}

/* The ack line dest keeps in this node's memory. */
static void line_of(struct nm_buddy *b, uint32_t dest, struct line *l)
{
	uint8_t raw[ACK_LINE];

	memset(l, 0, sizeof(*l));
	if (sp_gmem_read(b->w, b->lay.buddy_ack +
			 (uint64_t)(dest - b->first) * ACK_LINE, raw,
			 sizeof(raw)))
		return;
	l->box_seq = st_get64(raw);
	l->box_rc = (int64_t)st_get64(raw + 8);
	l->want_seq = st_get64(raw + 16);
	l->want_rc = (int64_t)st_get64(raw + 24);
}

/* One box to dest, taken there: 0, or -errno (its write's, or ours). */
static int send_box(struct nm_buddy *b, uint32_t dest, size_t len)
{
	uint64_t seq = st_get64(b->box + 8), until = now_ms() + BOX_WAIT_MS;
	struct line l;
	int rc;

	while (sp_test_event(b->w, ST_EV_LOCAL_BUDDY, 0) != -EAGAIN)
		; /* a completion left over from a box given up on */
	sp_nodeset_clear(b->one);
	sp_nodeset_add(b->one, dest);
	rc = sp_xfer_and_signal(b->w, b->one, b->box, len,
				b->lay.buddy + (uint64_t)b->self *
				b->lay.buddy_len, ST_EV_LOCAL_BUDDY,
				ST_EV_BUDDY, NULL, 0);
	if (!rc)
		rc = sp_test_event(b->w, ST_EV_LOCAL_BUDDY, BOX_WAIT_MS);
	if (rc)
		return rc == -STORM_EABORTED || rc == -STORM_ENOTINVIEW ?
		       -EHOSTDOWN : rc;
	for (;;) {
		uint64_t now = now_ms();

		line_of(b, dest, &l);
		if (l.box_seq == seq)
			return (int)l.box_rc;
		if (now >= until)
			return -ETIMEDOUT;
		rc = sp_test_event(b->w, ST_EV_BUDDY_ACK,
				   (int)(until - now < 1000 ? until - now
							    : 1000));
		if (rc && rc != -ETIMEDOUT && rc != -EAGAIN)
			return rc;
	}
}

static int send_file(struct nm_buddy *b, uint32_t dest,
		     const struct nm_buddy_file *f, int fd, uint32_t flags,
		     uint64_t want_seq, char *why, size_t whylen)
{
	size_t cap = b->lay.buddy_len - HDR;
	struct stat sb;
	uint64_t off = 0, total;
	int rc = 0;

	if (!nm_buddy_name_ok(f->name))
		return refuse(why, whylen, -EINVAL, "%s: not a name a copy "
			      "can have", f->name);
	if (fd < 0)
		sb.st_size = 0; /* a drop */
	else if (fstat(fd, &sb) < 0)
		return refuse(why, whylen, -errno, "%s: %s", f->name,
			      strerror(errno));
	total = (uint64_t)sb.st_size;
	pthread_mutex_lock(&b->send_mu);
	do {
		size_t len = total - off < cap ? (size_t)(total - off) : cap;
		uint32_t fl = (off == 0 ? F_FIRST : 0) |
			      (off + len == total ? F_LAST | flags : 0) |
			      (flags & F_REPLY);

		for (size_t got = 0; got < len;) {
			ssize_t n = pread(fd, b->box + HDR + got, len - got,
					  (off_t)(off + got));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				rc = n < 0 ? -errno : -EIO;
				break;
			}
			got += (size_t)n;
		}
		if (rc)
			break;
		{
			struct nm_buddy_box x = {
				.flags = fl, .seq = ++b->seq, .job = f->job,
				.epoch = f->epoch, .base = f->base,
				.uid = (uint32_t)f->uid,
				.gid = (uint32_t)f->gid, .len = (uint32_t)len,
				.off = off, .total = total,
				.want_seq = want_seq,
			};

			snprintf(x.name, sizeof(x.name), "%s", f->name);
			nm_buddy_box_encode(b->box, &x);
		}
		if ((rc = send_box(b, dest, HDR + len)))
			break;
		off += len;
	} while (off < total);
	pthread_mutex_unlock(&b->send_mu);
	if (rc)
		return refuse(why, whylen, rc, "%s to node %u: %s", f->name,
			      dest, storm_strerror(rc));
	return 0;
}

int nm_buddy_send(struct nm_buddy *b, uint32_t dest,
		  const struct nm_buddy_file *f, int fd, char *why,
		  size_t whylen)
{
	return send_file(b, dest, f, fd, 0, 0, why, whylen);
}

int nm_buddy_drop(struct nm_buddy *b, uint32_t dest, uint32_t job,
		  char *why, size_t whylen)
{
	struct nm_buddy_file f = { job, 1, 0, 0, 0, "drop" };

	return send_file(b, dest, &f, -1, F_DROP, 0, why, whylen);
}

/* ---- receiving ---------------------------------------------------------- */

static int subdir(int at, const char *name)
{
	int fd;

	if (mkdirat(at, name, 0711) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Copies of name in job's epochs before base go (their sender dropped
 * them), and the epochs left empty. */
static void drop_before(int jfd, const char *name, uint32_t base)
{
	int fd = dup(jfd);
	struct dirent *e;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		unsigned long v;
		int efd;

		if (sscanf(e->d_name, "epoch-%lu", &v) != 1 || v >= base ||
		    (efd = openat(jfd, e->d_name, O_RDONLY | O_DIRECTORY |
				  O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		unlinkat(efd, name, 0);
		close(efd);
		unlinkat(jfd, e->d_name, AT_REMOVEDIR); /* if empty */
	}
	closedir(d);
}

static void in_close(struct incoming *in, int keep)
{
	if (in->fd >= 0)
		close(in->fd);
	if (in->dfd >= 0 && !keep)
		unlinkat(in->dfd, in->part, 0);
	if (in->dfd >= 0)
		close(in->dfd);
	in->fd = in->dfd = -1;
}

/* A box's first: the file opened aside in its epoch's directory. */
static int in_open(struct nm_buddy *b, struct incoming *in, uint32_t s,
		   const struct nm_buddy_box *x)
{
	char p[32];
	int root, jfd, rc;

	in_close(in, 0);
	in->job = x->job;
	in->epoch = x->epoch;
	in->off = 0;
	in->total = x->total;
	in->want_seq = x->want_seq;
	memcpy(in->name, x->name, NAME_MAX_);
	snprintf(in->part, sizeof(in->part), "%s.part-%u", in->name, s);
	if ((root = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	snprintf(p, sizeof(p), "job-%u", in->job);
	jfd = subdir(root, p);
	close(root);
	if (jfd < 0)
		return jfd;
	futimens(jfd, NULL); /* written now: it lingers from now */
	drop_before(jfd, in->name, x->base);
	snprintf(p, sizeof(p), "epoch-%u", in->epoch);
	in->dfd = subdir(jfd, p);
	close(jfd);
	if (in->dfd < 0) {
		rc = in->dfd;
		in->dfd = -1;
		return rc;
	}
	in->fd = openat(in->dfd, in->part, O_WRONLY | O_CREAT | O_TRUNC |
			O_NOFOLLOW | O_CLOEXEC, 0600);
	if (in->fd < 0 || fchown(in->fd, (uid_t)x->uid, (gid_t)x->gid) < 0) {
		rc = -errno;
		in_close(in, 0);
		return rc;
	}
	return 0;
}

/* A box from node index s: its header h (a copy), n bytes landed, its
 * file's bytes read where they landed (the sender writes the box again
 * only once this one is acknowledged: no copy first).  Written out; 0
 * or -errno. */
static int take_box(struct nm_buddy *b, uint32_t s, const uint8_t *h,
		    size_t n, const uint8_t *data, int *done)
{
	struct incoming *in = &b->in[s];
	struct nm_buddy_box x;
	int rc;

	*done = 0;
	if (nm_buddy_box_decode(h, n, &x))
		return -EPROTO;
	x.data = data;
	if (x.flags & F_DROP) { /* the sender deleted the job's images */
		char p[32];
		int root = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (root < 0)
			return -errno;
		snprintf(p, sizeof(p), "job-%u", x.job);
		nm_store_rm_tree(root, p);
		close(root);
		return 0;
	}
	if ((x.flags & F_FIRST) && (rc = in_open(b, in, s, &x)))
		return rc;
	if (in->fd < 0 || x.off != in->off || x.total != in->total ||
	    x.job != in->job || x.epoch != in->epoch ||
	    strcmp(x.name, in->name)) {
		in_close(in, 0);
		return -EPROTO;
	}
	for (size_t put = 0; put < x.len;) {
		ssize_t k = pwrite(in->fd, x.data + put, x.len - put,
				   (off_t)(x.off + put));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = k < 0 ? -errno : -EIO;
			in_close(in, 0);
			return rc;
		}
		put += (size_t)k;
	}
	in->off += x.len;
	if (!(x.flags & F_LAST))
		return 0;
	if (in->off != in->total)
		rc = -EPROTO;
	else if (fsync(in->fd) < 0 ||
		 renameat(in->dfd, in->part, in->dfd, in->name) < 0)
		rc = -errno;
	else
		rc = 0;
	in_close(in, rc == 0);
	if (!rc && (x.flags & F_REPLY) && (x.flags & F_DONE)) {
		pthread_mutex_lock(&b->mu);
		if (b->want_open && in->want_seq == b->want_seq)
			b->want_got = 1;
		pthread_mutex_unlock(&b->mu);
		*done = 1;
	}
	return rc;
}

/* A request from node index s: the answer queued, or "not here". */
static void take_want(struct nm_buddy *b, uint32_t s, const uint8_t *l)
{
	struct answer *a;
	char name[NAME_MAX_];
	uint64_t seq;
	uint32_t job, epoch, rank;
	int bad = nm_buddy_want_decode(l, &seq, &job, &epoch, &rank, name);

	b->lines[s].want_seq = seq;
	b->lines[s].want_rc = -ENOENT;
	b->post[s] = 1;
	if (bad || !(a = calloc(1, sizeof(*a))))
		return;
	a->to = b->first + s;
	a->want_seq = seq;
	{
		const char *roots[2] = { b->l1, b->dir };

		a->n = nm_buddy_find(roots, 2, job, epoch, rank,
				     name[0] ? name : NULL, a->file, a->names,
				     a->fds, FILES_MAX);
	}
	if (a->n <= 0) {
		free(a);
		return;
	}
	b->lines[s].want_rc = 0;
	pthread_mutex_lock(&b->mu);
	a->next = b->answers;
	b->answers = a;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* Lines owed to other nodes, posted; those refused for now (a box of
 * ours to that node still in flight) stay owed. */
static int post_lines(struct nm_buddy *b)
{
	int left = 0;

	for (uint32_t s = 0; s < b->nnodes; s++) {
		uint8_t raw[ACK_LINE];
		int rc;

		if (!b->post[s])
			continue;
		st_put64(raw, b->lines[s].box_seq);
		st_put64(raw + 8, (uint64_t)b->lines[s].box_rc);
		st_put64(raw + 16, b->lines[s].want_seq);
		st_put64(raw + 24, (uint64_t)b->lines[s].want_rc);
		rc = sp_put_posted(b->w, b->first + s, raw, sizeof(raw),
				   b->lay.buddy_ack +
				   (uint64_t)b->self * ACK_LINE,
				   ST_EV_BUDDY_ACK);
		if (rc == -EBUSY)
			left = 1;
		else
			b->post[s] = 0; /* sent, or the node is gone */
	}
	/* this node's request, to the nodes not yet asked */
	pthread_mutex_lock(&b->mu);
	for (uint32_t s = 0; b->want_open && s < b->nnodes; s++) {
		int rc;

		if (!(b->want_todo[s] & 1))
			continue;
		rc = sp_put_posted(b->w, b->first + s, b->want_line, WANT_LINE,
				   b->lay.buddy_want +
				   (uint64_t)b->self * WANT_LINE, ST_EV_BUDDY);
		if (rc == -EBUSY) {
			left = 1;
			continue;
		}
		b->want_todo[s] &= (uint8_t)~1u;
		if (rc) /* gone: it will not answer */
			b->want_nacks++;
	}
	pthread_mutex_unlock(&b->mu);
	return left;
}

/* Answers from the nodes asked: a "not here" counted once per node. */
static void count_nacks(struct nm_buddy *b)
{
	pthread_mutex_lock(&b->mu);
	if (b->want_open)
		for (uint32_t s = 0; s < b->nnodes; s++) {
			struct line l;

			if (s == b->self)
				continue;
			line_of(b, b->first + s, &l);
			if (l.want_seq == b->want_seq && l.want_rc < 0 &&
			    !(b->want_todo[s] & 2)) {
				b->want_todo[s] |= 2;
				b->want_nacks++;
			}
		}
	pthread_mutex_unlock(&b->mu);
}

static void sweep(struct nm_buddy *b)
{
	time_t now = time(NULL);
	struct dirent *e;
	DIR *d;

	if (now - b->swept < 60)
		return;
	b->swept = now;
	if (!(d = opendir(b->dir)))
		return;
	while ((e = readdir(d))) {
		struct stat sb;

		if (!strncmp(e->d_name, "job-", 4) &&
		    !fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) &&
		    S_ISDIR(sb.st_mode) &&
		    now - sb.st_mtime > (time_t)b->linger_s + 86400) {
			qb_log(LOG_DEBUG, "buddy copies %s: none written for "
			       "%u s, deleted", e->d_name,
			       b->linger_s + 86400);
			nm_store_rm_tree(dirfd(d), e->d_name);
		}
	}
	closedir(d);
}

/* Copies travel while jobs run: the threads yield to the ranks. */
static void background(void)
{
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) < 0)
		qb_log(LOG_DEBUG, "checkpoint copies: nice: %s",
		       strerror(errno));
}

static void *receiver(void *arg)
{
	struct nm_buddy *b = arg;
	int owed = 0;

	background();
	for (;;) {
		int rc = sp_test_event(b->w, ST_EV_BUDDY, owed ? 5 : 500);

		if (rc == -STORM_ECLOSED || __atomic_load_n(&b->quit,
							     __ATOMIC_ACQUIRE))
			break;
		for (uint32_t s = 0; s < b->nnodes; s++) {
			uint64_t at = b->lay.buddy + (uint64_t)s *
				      b->lay.buddy_len;
			uint8_t h[HDR], l[WANT_LINE];
			int done;

			if (s == b->self)
				continue;
			if (!sp_gmem_read(b->w, at, h, HDR) &&
			    st_get64(h + 8) && st_get64(h + 8) != b->taken[s]) {
				uint32_t len = st_get32(h + 36);

				rc = len > b->lay.buddy_len - HDR ? -EPROTO :
				     take_box(b, s, h, HDR + len,
					      b->gmem + at + HDR, &done);
				if (rc)
					qb_log(LOG_WARNING, "checkpoint copy "
					       "from node %u: %s", b->first + s,
					       strerror(-rc));
				b->taken[s] = st_get64(h + 8);
				b->lines[s].box_seq = b->taken[s];
				b->lines[s].box_rc = rc;
				b->post[s] = 1;
			}
			if (!sp_gmem_read(b->w, b->lay.buddy_want +
					  (uint64_t)s * WANT_LINE, l,
					  WANT_LINE) &&
			    st_get64(l) && st_get64(l) != b->want_taken[s]) {
				b->want_taken[s] = st_get64(l);
				take_want(b, s, l);
			}
		}
		owed = post_lines(b);
		count_nacks(b);
		sweep(b);
	}
	return NULL;
}

/* ---- answering ---------------------------------------------------------- */

static void *answerer(void *arg)
{
	struct nm_buddy *b = arg;

	background();
	pthread_mutex_lock(&b->mu);
	for (;;) {
		struct answer *a;

		while (!b->answers && !b->quit)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->quit)
			break;
		a = b->answers;
		b->answers = a->next;
		pthread_mutex_unlock(&b->mu);
		for (int i = 0; i < a->n; i++) {
			char why[256];

			if (send_file(b, a->to, &a->file[i], a->fds[i],
				      F_REPLY | (i == a->n - 1 ? F_DONE : 0),
				      a->want_seq, why, sizeof(why))) {
				qb_log(LOG_WARNING, "answering node %u: %s",
				       a->to, why);
				break;
			}
		}
		for (int i = 0; i < a->n; i++)
			close(a->fds[i]);
		free(a);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* ---- finding a chain ---------------------------------------------------- */

static int open_in(const char *const *roots, int nroots, uint32_t job,
		   uint32_t epoch, const char *name)
{
	char p[1300];
	int fd = -1;

	for (int k = 0; k < nroots && fd < 0; k++) {
		if (!roots[k][0])
			continue;
		snprintf(p, sizeof(p), "%s/job-%u/epoch-%u/%s", roots[k], job,
			 epoch, name);
		fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd;
}

static int add_file(int n, struct nm_buddy_file *file,
		    char (*names)[NM_BUDDY_NAME_MAX], int *fds, int fd,
		    uint32_t job, uint32_t epoch, const char *name)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	snprintf(names[n], NM_BUDDY_NAME_MAX, "%s", name);
	file[n] = (struct nm_buddy_file){ job, epoch, 0, sb.st_uid, sb.st_gid,
					  names[n] };
	fds[n] = fd;
	return n + 1;
}

int nm_buddy_find(const char *const *roots, int nroots, uint32_t job,
		  uint32_t epoch, uint32_t rank, const char *name,
		  struct nm_buddy_file *file, char (*names)[NM_BUDDY_NAME_MAX],
		  int *fds, int max)
{
	char img[NM_BUDDY_NAME_MAX];
	uint32_t e = epoch;
	int n = 0, k, fd;

	snprintf(img, sizeof(img), "rank-%u.img", rank);
	while (rank != UINT32_MAX && n < max - 1) {
		unsigned char h[CKPT_HEADER_BYTES];

		if ((fd = open_in(roots, nroots, job, e, img)) < 0 ||
		    pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
			if (fd >= 0)
				close(fd);
			goto missing;
		}
		if ((k = add_file(n, file, names, fds, fd, job, e, img)) < 0)
			goto missing;
		n = k;
		/* ckpt_image.h: the kind at 12, a delta's parent at 56 */
		if (st_get32(h + 12) == CKPT_FULL)
			break;
		if ((e = (uint32_t)st_get64(h + 56)) == 0 || e >= file[n - 1].epoch)
			goto missing;
	}
	if (rank != UINT32_MAX && (n == 0 || n >= max - 1))
		goto missing;
	if (name) {
		if ((fd = open_in(roots, nroots, job, epoch, name)) < 0 ||
		    (k = add_file(n, file, names, fds, fd, job, epoch,
				  name)) < 0)
			goto missing;
		n = k;
	}
	return n;
missing:
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

/* ---- requests ----------------------------------------------------------- */

int nm_buddy_want(struct nm_buddy *b, uint32_t job, uint32_t epoch,
		  uint32_t rank, const char *name)
{
	sp_nodeset_t *live;
	sp_view_info_t vi;

	if (sp_nodeset_create(sp_node_count(b->w), &live))
		return -ENOMEM;
	pthread_mutex_lock(&b->mu);
	if (b->want_open) {
		pthread_mutex_unlock(&b->mu);
		sp_nodeset_destroy(live);
		return -EBUSY;
	}
	b->want_seq = b->want_seq ? b->want_seq + 1 : b->seq + 1;
	nm_buddy_want_encode(b->want_line, b->want_seq, job, epoch, rank,
			     name);
	b->want_asked = b->want_nacks = 0;
	b->want_got = 0;
	memset(b->want_todo, 0, b->nnodes);
	if (!sp_view(b->w, &vi, live))
		for (uint32_t s = 0; s < b->nnodes; s++)
			if (s != b->self &&
			    sp_nodeset_has(live, b->first + s)) {
				b->want_todo[s] = 1;
				b->want_asked++;
			}
	b->want_open = 1;
	b->want_at_ms = now_ms();
	pthread_mutex_unlock(&b->mu);
	sp_nodeset_destroy(live);
	/* the receiver posts it (and again where refused for now) */
	return 0;
}

int nm_buddy_fetched(struct nm_buddy *b, uint32_t wait_ms)
{
	int rc = 0;

	pthread_mutex_lock(&b->mu);
	if (!b->want_open)
		rc = -EINVAL;
	else if (b->want_got)
		rc = 1;
	else if (b->want_nacks >= b->want_asked ||
		 now_ms() - b->want_at_ms > wait_ms)
		rc = -ENOENT;
	if (rc)
		b->want_open = 0;
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/* ---- life --------------------------------------------------------------- */

int nm_buddy_create(struct nm_buddy **out, sp_world_t *w,
		    const st_layout_t *lay, uint32_t first_node,
		    uint32_t nnodes, const char *dir, const char *l1,
		    uint64_t seq_base, uint32_t linger_s, char *why,
		    size_t whylen)
{
	struct nm_buddy *b;
	uint32_t id = sp_node_id(w);

	*out = NULL;
	if (!lay->buddy_len)
		return 0;
	if (lay->buddy_len <= HDR || id < first_node ||
	    id - first_node >= nnodes)
		return refuse(why, whylen, -EINVAL, "ckpt_buddy_kib: boxes "
			      "of %u bytes for node %u of %u", lay->buddy_len,
			      id, nnodes);
	if (mkdir(dir, 0711) < 0 && errno != EEXIST)
		return refuse(why, whylen, -errno, "%s: %s", dir,
			      strerror(errno));
	if (!(b = calloc(1, sizeof(*b))))
		return refuse(why, whylen, -ENOMEM, "out of memory");
	b->w = w;
	b->lay = *lay;
	b->first = first_node;
	b->nnodes = nnodes;
	b->self = id - first_node;
	b->seq = seq_base;
	b->linger_s = linger_s;
	snprintf(b->dir, sizeof(b->dir), "%s", dir);
	snprintf(b->l1, sizeof(b->l1), "%s", l1);
	pthread_mutex_init(&b->send_mu, NULL);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->box = malloc(lay->buddy_len);
	b->gmem = sp_gmem(w, NULL);
	b->taken = calloc(nnodes, sizeof(*b->taken));
	b->want_taken = calloc(nnodes, sizeof(*b->want_taken));
	b->lines = calloc(nnodes, sizeof(*b->lines));
	b->post = calloc(nnodes, 1);
	b->want_todo = calloc(nnodes, 1);
	b->in = calloc(nnodes, sizeof(*b->in));
	if (!b->box || !b->gmem || !b->taken || !b->want_taken ||
	    !b->lines || !b->post || !b->want_todo || !b->in ||
	    sp_nodeset_create(sp_node_count(w), &b->one)) {
		nm_buddy_destroy(b);
		return refuse(why, whylen, -ENOMEM, "out of memory");
	}
	for (uint32_t s = 0; s < nnodes; s++)
		b->in[s].fd = b->in[s].dfd = -1;
	/* what is already here was taken by an earlier incarnation, or is
	 * another's to take: only a box numbered anew is news */
	for (uint32_t s = 0; s < nnodes; s++) {
		uint8_t h[16], l[8];

		if (!sp_gmem_read(w, lay->buddy + (uint64_t)s * lay->buddy_len,
				  h, sizeof(h)))
			b->taken[s] = st_get64(h + 8);
		if (!sp_gmem_read(w, lay->buddy_want + (uint64_t)s * WANT_LINE,
				  l, sizeof(l)))
			b->want_taken[s] = st_get64(l);
	}
	if (pthread_create(&b->rx, NULL, receiver, b)) {
		nm_buddy_destroy(b);
		return refuse(why, whylen, -EAGAIN, "no thread");
	}
	if (pthread_create(&b->tx, NULL, answerer, b)) {
		__atomic_store_n(&b->quit, 1, __ATOMIC_RELEASE);
		pthread_join(b->rx, NULL);
		b->rx = 0;
		nm_buddy_destroy(b);
		return refuse(why, whylen, -EAGAIN, "no thread");
	}
	*out = b;
	return 0;
}

void nm_buddy_destroy(struct nm_buddy *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	__atomic_store_n(&b->quit, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	if (b->tx)
		pthread_join(b->tx, NULL);
	if (b->rx)
		pthread_join(b->rx, NULL);
	while (b->answers) {
		struct answer *a = b->answers;

		b->answers = a->next;
		for (int i = 0; i < a->n; i++)
			close(a->fds[i]);
		free(a);
	}
	for (uint32_t s = 0; b->in && s < b->nnodes; s++)
		in_close(&b->in[s], 0);
	sp_nodeset_destroy(b->one);
	free(b->box);
	free(b->taken);
	free(b->want_taken);
	free(b->lines);
	free(b->post);
	free(b->want_todo);
	free(b->in);
	pthread_mutex_destroy(&b->send_mu);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b);
}
