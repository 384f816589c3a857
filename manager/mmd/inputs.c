/*
 * inputs.c — a job's inputs as the client handed them over, spooled
 * (inputs.h).  Key invariant: no path a client names is ever opened
 * here; the bytes come from the client's own descriptors or its own
 * frames, and never more than the cap is kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <storm_proto.h>

#include "inputs.h"

#define READ_CHUNK (1u << 20)

static void set_dir(const struct mmd_inputs *in, uint64_t id, char *out,
		    size_t n)
{
	snprintf(out, n, "%s/tmp-%" PRIu64, in->dir, id);
}

static void job_dir(const struct mmd_inputs *in, uint32_t job, char *out,
		    size_t n)
{
	snprintf(out, n, "%s/job-%u", in->dir, job);
}

void mmd_spool_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

static const char *kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" :
	       S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" :
	       "not a regular file";
}

static void over_cap(const struct mmd_inputs *in, struct mmd_input_set *s,
		     const char *name)
{
	s->rc = -EFBIG;
	snprintf(s->err, sizeof(s->err), "the job's inputs pass the cap of "
		 "%u MiB per job (max_input_mib in the manager's "
		 "configuration) at %s: stage less (or larger files "
		 "another way), or ask the administrator to raise "
		 "max_input_mib", in->cap_mib, name);
}

/* Input k of s from its descriptor into the spool file k. */
static void read_one(struct mmd_inputs *in, struct mmd_input_set *s,
		     const char *dir, uint32_t k, uint8_t *buf)
{
	const char *name = s->names[k];
	struct stat st;
	char path[1400];
	int out;
	off_t off = 0;

	if (fstat(s->fds[k], &st) < 0) {
		s->rc = -errno;
		snprintf(s->err, sizeof(s->err), "input %s: fstat: %s", name,
			 strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		/* before any read: a FIFO would wait for a writer */
		s->rc = -EINVAL;
		snprintf(s->err, sizeof(s->err), "input %s is %s, not a "
			 "regular file: only regular files are staged (copy "
			 "it to one)", name, kind(st.st_mode));
		return;
	}
	snprintf(path, sizeof(path), "%s/%u", dir, k);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		   0600);
	if (out < 0) {
		s->rc = -errno;
		snprintf(s->err, sizeof(s->err), "input %s: cannot spool it "
			 "in %.300s: %s", name, dir, strerror(errno));
		return;
	}
	for (;;) {
		/* pread: the client's file offset is not ours to move */
		ssize_t r = pread(s->fds[k], buf, READ_CHUNK, off), w;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			s->rc = -errno;
			snprintf(s->err, sizeof(s->err), "input %s: cannot "
				 "read it: %s", name, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		if (s->bytes + (uint64_t)r > in->cap) {
			over_cap(in, s, name);
			break;
		}
		s->bytes += (uint64_t)r;
		off += r;
		for (ssize_t done = 0; done < r; done += w) {
			w = write(out, buf + done, (size_t)(r - done));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				s->rc = w < 0 ? -errno : -EIO;
				snprintf(s->err, sizeof(s->err), "input %s: "
					 "cannot spool it in %.300s: %s", name,
					 dir, strerror(-s->rc));
				break;
			}
		}
		if (s->rc)
			break;
	}
	if (!s->rc && fchmod(out, st.st_mode & 0777) < 0) {
		s->rc = -errno;
		snprintf(s->err, sizeof(s->err), "input %s: chmod: %s", name,
			 strerror(errno));
	}
	close(out);
}

static void read_set(struct mmd_inputs *in, struct mmd_input_set *s)
{
	char dir[1300];
	uint8_t *buf = malloc(READ_CHUNK);

	if (!buf) {
		s->rc = -ENOMEM;
		snprintf(s->err, sizeof(s->err), "out of memory");
		return;
	}
	if (s->delay_ms) {
		struct timespec ts = { .tv_sec = s->delay_ms / 1000,
				       .tv_nsec = (long)(s->delay_ms % 1000) *
						  1000000L };

		nanosleep(&ts, NULL);
	}
	set_dir(in, s->id, dir, sizeof(dir));
	for (uint32_t k = 0; k < s->n && !s->rc; k++)
		read_one(in, s, dir, k, buf);
	free(buf);
}

static void *worker(void *arg)
{
	struct mmd_inputs *in = arg;

	pthread_mutex_lock(&in->mu);
	for (;;) {
		struct mmd_input_set *s;
		const uint64_t one = 1;

		while (!in->stop && !in->in)
			pthread_cond_wait(&in->cv, &in->mu);
		if (in->stop)
			break;
		s = in->in;
		in->in = s->next;
		if (!in->in)
			in->in_tail = &in->in;
		pthread_mutex_unlock(&in->mu);
		read_set(in, s);
		pthread_mutex_lock(&in->mu);
		s->next = NULL;
		*in->out_tail = s;
		in->out_tail = &s->next;
		ssize_t w = write(in->efd, &one, sizeof(one));

		(void)w; /* the counter is only a wake-up */
	}
	pthread_mutex_unlock(&in->mu);
	return NULL;
}

int mmd_inputs_start(struct mmd_inputs *in, const char *dir,
		     uint32_t cap_mib, char *err, size_t errlen)
{
	const char *delay = getenv("STORM_TEST_INPUT_DELAY_MS");
	DIR *d;
	struct dirent *e;
	int rc;

	memset(in, 0, sizeof(*in));
	in->efd = -1;
	in->in_tail = &in->in;
	in->out_tail = &in->out;
	in->cap_mib = cap_mib;
	in->cap = (uint64_t)cap_mib << 20;
	in->delay_ms = delay ? (uint32_t)strtoul(delay, NULL, 10) : 0;
	snprintf(in->dir, sizeof(in->dir), "%s", dir);
	if ((rc = st_dir_ensure(dir, 0700, err, errlen)))
		return rc;
	/* an earlier run's sets: its clients are gone, its jobs fall back
	 * (stage.c) */
	if ((d = opendir(dir))) {
		while ((e = readdir(d))) {
			char p[1500];

			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			if (!strncmp(e->d_name, "tmp-", 4) ||
			    !strncmp(e->d_name, "fetch-", 6))
				mmd_spool_remove(p);
		}
		closedir(d);
	}
	in->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (in->efd < 0) {
		rc = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return rc;
	}
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->cv, NULL);
	for (int i = 0; i < MMD_INPUTS_WORKERS; i++) {
		if (pthread_create(&in->thread[i], NULL, worker, in)) {
			snprintf(err, errlen, "cannot start the inputs "
				 "workers");
			mmd_inputs_stop(in);
			return -EAGAIN;
		}
		in->started++;
	}
	return 0;
}

static void free_set(struct mmd_input_set *s)
{
	if (!s)
		return;
	for (uint32_t k = 0; s->fds && k < s->n; k++)
		if (s->fds[k] >= 0)
			close(s->fds[k]);
	for (uint32_t k = 0; s->names && k < s->n; k++)
		free(s->names[k]);
	if (s->out_fd >= 0)
		close(s->out_fd);
	free(s->fds);
	free(s->names);
	free(s->sizes);
	free(s->modes);
	json_decref(s->req);
	free(s);
}

/* s leaves the proposed list (if in it). */
static void unprop(struct mmd_inputs *in, struct mmd_input_set *s)
{
	if (!s->proposed)
		return;
	for (struct mmd_input_set **pp = &in->props; *pp; pp = &(*pp)->pnext)
		if (*pp == s) {
			*pp = s->pnext;
			in->proposed--;
			break;
		}
	s->proposed = 0;
}

void mmd_inputs_free(struct mmd_inputs *in, struct mmd_input_set *s)
{
	char dir[1300];

	if (!s)
		return;
	unprop(in, s);
	set_dir(in, s->id, dir, sizeof(dir));
	mmd_spool_remove(dir);
	free_set(s);
}

static void free_list(struct mmd_inputs *in, struct mmd_input_set *s)
{
	while (s) {
		struct mmd_input_set *next = s->next;

		mmd_inputs_free(in, s);
		s = next;
	}
}

void mmd_inputs_stop(struct mmd_inputs *in)
{
	if (!in->started) {
		if (in->efd >= 0)
			close(in->efd);
		in->efd = -1;
		return;
	}
	pthread_mutex_lock(&in->mu);
	in->stop = 1;
	pthread_cond_broadcast(&in->cv);
	pthread_mutex_unlock(&in->mu);
	for (int i = 0; i < in->started; i++)
		pthread_join(in->thread[i], NULL);
	free_list(in, in->in);
	free_list(in, in->out);
	close(in->efd);
	in->efd = -1;
	pthread_mutex_destroy(&in->mu);
	pthread_cond_destroy(&in->cv);
	in->started = 0;
}

struct mmd_input_set *mmd_inputs_new(struct mmd_inputs *in, uint64_t conn,
				     uint32_t n, int *fds,
				     const char *const *names)
{
	struct mmd_input_set *s = calloc(1, sizeof(*s));

	if (!s || !(s->names = calloc(n ? n : 1, sizeof(char *)))) {
		for (uint32_t k = 0; fds && k < n; k++)
			close(fds[k]);
		free(fds);
		free(s);
		return NULL;
	}
	s->id = ++in->next_id;
	s->conn = conn;
	s->n = n;
	s->fds = fds;
	s->out_fd = -1;
	for (uint32_t k = 0; k < n; k++)
		if (!(s->names[k] = strdup(names[k] ? names[k] : "?"))) {
			free_set(s);
			return NULL;
		}
	return s;
}

static int make_set_dir(struct mmd_inputs *in, struct mmd_input_set *s)
{
	char dir[1300];

	set_dir(in, s->id, dir, sizeof(dir));
	if (mkdir(dir, 0700) < 0) {
		s->rc = -errno;
		snprintf(s->err, sizeof(s->err), "cannot make the job's "
			 "spool %.300s: %s", dir, strerror(errno));
		return s->rc;
	}
	return 0;
}

int mmd_inputs_read(struct mmd_inputs *in, struct mmd_input_set *s)
{
	int rc;

	if (in->queued >= MMD_INPUTS_QUEUE)
		return -EAGAIN;
	if ((rc = make_set_dir(in, s)))
		return rc;
	s->delay_ms = in->delay_ms;
	in->delay_ms = 0; /* the first set only */
	pthread_mutex_lock(&in->mu);
	s->next = NULL;
	*in->in_tail = s;
	in->in_tail = &s->next;
	in->queued++;
	pthread_cond_signal(&in->cv);
	pthread_mutex_unlock(&in->mu);
	return 0;
}

int mmd_inputs_next(struct mmd_inputs *in, struct mmd_input_set **out)
{
	struct mmd_input_set *s;
	uint64_t v;

	if (read(in->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&in->mu);
	s = in->out;
	if (s) {
		in->out = s->next;
		if (!in->out)
			in->out_tail = &in->out;
		in->queued--;
	}
	pthread_mutex_unlock(&in->mu);
	if (!s)
		return 0;
	s->next = NULL;
	/* the client's descriptors are done with */
	for (uint32_t k = 0; k < s->n; k++)
		if (s->fds[k] >= 0) {
			close(s->fds[k]);
			s->fds[k] = -1;
		}
	*out = s;
	return 1;
}

/* TCP: open spool file s->cur (empty inputs are made at once). */
static int recv_next(struct mmd_inputs *in, struct mmd_input_set *s)
{
	char dir[1300], path[1400];

	set_dir(in, s->id, dir, sizeof(dir));
	while (s->cur < s->n) {
		snprintf(path, sizeof(path), "%s/%u", dir, s->cur);
		s->out_fd = open(path, O_WRONLY | O_CREAT | O_EXCL |
				 O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->out_fd < 0 || fchmod(s->out_fd, s->modes[s->cur])) {
			s->rc = -errno;
			snprintf(s->err, sizeof(s->err), "input %s: cannot "
				 "spool it in %.300s: %s", s->names[s->cur], dir,
				 strerror(errno));
			return s->rc;
		}
		s->cur_left = s->sizes[s->cur];
		if (s->cur_left)
			return 0;
		close(s->out_fd);
		s->out_fd = -1;
		s->cur++;
	}
	return 0;
}

int mmd_inputs_recv_begin(struct mmd_inputs *in, struct mmd_input_set *s)
{
	int rc;

	s->left = 0;
	for (uint32_t k = 0; k < s->n; k++)
		s->left += s->sizes[k];
	if ((rc = make_set_dir(in, s)))
		return rc;
	return recv_next(in, s);
}

int mmd_inputs_recv(struct mmd_inputs *in, struct mmd_input_set *s,
		    const uint8_t *p, uint32_t len)
{
	if (len > s->left)
		len = (uint32_t)s->left; /* the caller checked: never */
	s->left -= len;
	s->bytes += len;
	while (len && !s->rc) {
		uint32_t m = len < s->cur_left ? len : (uint32_t)s->cur_left;
		ssize_t w = write(s->out_fd, p, m);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->rc = w < 0 ? -errno : -EIO;
			snprintf(s->err, sizeof(s->err), "input %s: cannot "
				 "spool it: %s", s->names[s->cur],
				 strerror(-s->rc));
			break;
		}
		p += w;
		len -= (uint32_t)w;
		s->cur_left -= (uint64_t)w;
		if (!s->cur_left) {
			close(s->out_fd);
			s->out_fd = -1;
			s->cur++;
			recv_next(in, s);
		}
	}
	return s->left == 0;
}

void mmd_inputs_settle(struct mmd_inputs *in, struct mmd_input_set *s,
		       uint32_t job)
{
	char dir[1300], to[1300];

	unprop(in, s);
	if (job) {
		set_dir(in, s->id, dir, sizeof(dir));
		job_dir(in, job, to, sizeof(to));
		/* a retry of a request applied before keeps the first
		 * bytes: rename() refuses a directory that has files */
		if (rename(dir, to) == 0) {
			qb_log(LOG_DEBUG, "job %u: %" PRIu64 " input bytes "
			       "spooled", job, s->bytes);
			free_set(s);
			return;
		}
	}
	mmd_inputs_free(in, s);
}

void mmd_inputs_proposed(struct mmd_inputs *in, struct mmd_input_set *s,
			 uint32_t uid)
{
	s->proposed = 1;
	s->uid = uid;
	s->pnext = in->props;
	in->props = s;
	in->proposed++;
}

int mmd_inputs_awaited(const struct mmd_inputs *in, const mm_job_t *j)
{
	for (const struct mmd_input_set *s = in->props; s; s = s->pnext)
		if (s->uid == j->uid && s->n == 1 + j->nfiles && j->argc &&
		    !strcmp(s->names[0], j->argv[0]))
			return 1;
	return 0;
}

int mmd_inputs_open(const struct mmd_inputs *in, uint32_t job, uint32_t k)
{
	char dir[1300], path[1400];
	int fd;

	job_dir(in, job, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%u", dir, k);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int mmd_inputs_have(const struct mmd_inputs *in, uint32_t job)
{
	char dir[1300];
	struct stat st;

	job_dir(in, job, dir, sizeof(dir));
	return stat(dir, &st) == 0;
}

void mmd_inputs_sweep(struct mmd_inputs *in, const mm_state_t *st)
{
	DIR *d = opendir(in->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		unsigned long id;
		mm_job_t j;
		char p[1500];

		if (strncmp(e->d_name, "job-", 4))
			continue;
		id = strtoul(e->d_name + 4, &end, 10);
		if (*end || !id || id > UINT32_MAX)
			continue;
		if (!mm_job_get(st, (uint32_t)id, &j) &&
		    (j.state == MM_JOB_PENDING || j.state == MM_JOB_STAGING))
			continue;
		snprintf(p, sizeof(p), "%s/%s", in->dir, e->d_name);
		mmd_spool_remove(p);
	}
	closedir(d);
}
