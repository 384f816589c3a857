/*
 * inputs.c — a job's inputs as the client handed them over, stored by
 * content (inputs.h).  Key invariants: no path a client names is ever
 * opened here; the bytes come from the client's own descriptors or its
 * own frames, never more than the cap is kept, and a blob's name is the
 * digest of the bytes in it (computed here, never taken on trust).
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

static void blob_path(const struct mmd_inputs *in,
		      const uint8_t sha[MM_INPUT_SHA256_BYTES], char *out,
		      size_t n)
{
	char hex[MMD_BLOB_HEX];

	mmd_blob_hex(sha, hex);
	snprintf(out, n, "%s/%s", in->dir, hex);
}

void mmd_blob_hex(const uint8_t sha[MM_INPUT_SHA256_BYTES], char *hex)
{
	sodium_bin2hex(hex, MMD_BLOB_HEX, sha, MM_INPUT_SHA256_BYTES);
}

int mmd_blob_parse(const char *hex, uint8_t sha[MM_INPUT_SHA256_BYTES])
{
	size_t n = 0;
	const char *end;

	if (!hex || strlen(hex) != 2 * MM_INPUT_SHA256_BYTES)
		return -EINVAL;
	for (const char *p = hex; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return -EINVAL; /* lower case only: one name each */
	if (sodium_hex2bin(sha, MM_INPUT_SHA256_BYTES, hex, strlen(hex), NULL,
			   &n, &end) || n != MM_INPUT_SHA256_BYTES)
		return -EINVAL;
	return 0;
}

int mmd_blob_open(const struct mmd_inputs *in,
		  const uint8_t sha[MM_INPUT_SHA256_BYTES])
{
	char path[1400];
	int fd;

	blob_path(in, sha, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int mmd_blob_have(const struct mmd_inputs *in,
		  const uint8_t sha[MM_INPUT_SHA256_BYTES], uint64_t size)
{
	char path[1400];
	struct stat st;

	blob_path(in, sha, path, sizeof(path));
	if (lstat(path, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != size)
		return 0;
	utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW); /* wanted */
	return 1;
}

int mmd_blob_adopt(const struct mmd_inputs *in, const char *path,
		   const uint8_t sha[MM_INPUT_SHA256_BYTES])
{
	char to[1400];
	struct stat st;

	blob_path(in, sha, to, sizeof(to));
	if (lstat(to, &st) == 0 && S_ISREG(st.st_mode)) {
		/* the same bytes are here already: keep them, wanted again */
		utimensat(AT_FDCWD, to, NULL, AT_SYMLINK_NOFOLLOW);
		unlink(path);
		return 0;
	}
	if (rename(path, to) < 0) {
		int e = -errno;

		unlink(path);
		return e;
	}
	return 0;
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
	crypto_hash_sha256_init(&s->hs);
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
		crypto_hash_sha256_update(&s->hs, buf, (unsigned long long)r);
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
	crypto_hash_sha256_final(&s->hs, s->sha[k]);
	s->sizes[k] = (uint64_t)off;
	s->modes[k] = st.st_mode & 0777;
	close(out);
}

/* Every input of a set received whole becomes its blob. */
static void store_set(struct mmd_inputs *in, struct mmd_input_set *s)
{
	char dir[1300], path[1400];
	int rc;

	set_dir(in, s->id, dir, sizeof(dir));
	if (s->put && !s->rc &&
	    sodium_memcmp(s->sha[0], s->claimed, MM_INPUT_SHA256_BYTES)) {
		s->rc = -EBADMSG;
		snprintf(s->err, sizeof(s->err), "the bytes do not hash to "
			 "the digest announced");
	}
	for (uint32_t k = 0; k < s->n && !s->rc; k++) {
		snprintf(path, sizeof(path), "%s/%u", dir, k);
		if ((rc = mmd_blob_adopt(in, path, s->sha[k]))) {
			s->rc = rc;
			snprintf(s->err, sizeof(s->err), "input %s: cannot "
				 "store it in %.300s: %s", s->names[k],
				 in->dir, strerror(-rc));
		}
	}
	s->stored = !s->rc;
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
	if (!s->rc)
		store_set(in, s);
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
	/* an earlier run's half-received sets: their clients are gone
	 * (blobs stay: the sweep removes those no job names) */
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
	free(s->sha);
	json_decref(s->req);
	free(s);
}

void mmd_inputs_free(struct mmd_inputs *in, struct mmd_input_set *s)
{
	char dir[1300];

	if (!s)
		return;
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

	if (!s || !(s->names = calloc(n ? n : 1, sizeof(char *))) ||
	    !(s->sizes = calloc(n ? n : 1, sizeof(*s->sizes))) ||
	    !(s->modes = calloc(n ? n : 1, sizeof(*s->modes))) ||
	    !(s->sha = calloc(n ? n : 1, sizeof(*s->sha)))) {
		for (uint32_t k = 0; fds && k < n; k++)
			close(fds[k]);
		free(fds);
		if (s) {
			free(s->names);
			free(s->sizes);
			free(s->modes);
		}
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
		if (s->out_fd < 0) {
			s->rc = -errno;
			snprintf(s->err, sizeof(s->err), "input %s: cannot "
				 "spool it in %.300s: %s", s->names[s->cur], dir,
				 strerror(errno));
			return s->rc;
		}
		s->cur_left = s->sizes[s->cur];
		crypto_hash_sha256_init(&s->hs);
		if (s->cur_left)
			return 0;
		crypto_hash_sha256_final(&s->hs, s->sha[s->cur]);
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
	if ((rc = recv_next(in, s)))
		return rc;
	if (!s->left)
		store_set(in, s); /* every input empty */
	return s->rc;
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
		crypto_hash_sha256_update(&s->hs, p, (unsigned long long)w);
		p += w;
		len -= (uint32_t)w;
		s->cur_left -= (uint64_t)w;
		if (!s->cur_left) {
			crypto_hash_sha256_final(&s->hs, s->sha[s->cur]);
			close(s->out_fd);
			s->out_fd = -1;
			s->cur++;
			recv_next(in, s);
		}
	}
	if (s->left)
		return 0;
	if (!s->rc)
		store_set(in, s);
	return 1;
}

static int cmp_sha(const void *a, const void *b)
{
	return memcmp(a, b, MM_INPUT_SHA256_BYTES);
}

/* The digests every PENDING or STAGING job of st names, sorted: *n of
 * them (NULL and 0 when none, or out of memory: then *failed). */
static uint8_t *wanted(const mm_state_t *st, size_t *n, int *failed)
{
	uint8_t *v = NULL;
	size_t cap = 0;
	mm_job_t j;

	*n = 0;
	*failed = 0;
	for (uint32_t id = mm_live_from(st); mm_job_next(st, id, &j) == 0;
	     id = j.id + 1) {
		if (j.state != MM_JOB_PENDING && j.state != MM_JOB_STAGING)
			continue;
		for (uint32_t k = 0; k < j.ninputs; k++) {
			if (*n == cap) {
				size_t nc = cap ? 2 * cap : 256;
				uint8_t *nv = realloc(v, nc *
						      MM_INPUT_SHA256_BYTES);

				if (!nv) {
					free(v);
					*n = 0;
					*failed = 1;
					return NULL;
				}
				v = nv;
				cap = nc;
			}
			memcpy(v + *n * MM_INPUT_SHA256_BYTES,
			       j.inputs[k].sha256, MM_INPUT_SHA256_BYTES);
			(*n)++;
		}
	}
	if (*n)
		qsort(v, *n, MM_INPUT_SHA256_BYTES, cmp_sha);
	return v;
}

void mmd_inputs_sweep(struct mmd_inputs *in, const mm_state_t *st)
{
	DIR *d = opendir(in->dir);
	struct dirent *e;
	struct timespec now;
	uint8_t *want = NULL, sha[MM_INPUT_SHA256_BYTES];
	size_t nwant = 0;
	int looked = 0, failed = 0;

	if (!d)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d))) {
		struct stat sb;
		int64_t age_ms;

		if (mmd_blob_parse(e->d_name, sha) ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		age_ms = ((int64_t)now.tv_sec - (int64_t)sb.st_mtim.tv_sec) *
			 1000 + (now.tv_nsec - sb.st_mtim.tv_nsec) / 1000000;
		if (age_ms < (int64_t)MMD_BLOB_GRACE_MS)
			continue;
		if (!looked) { /* only when some blob is old enough */
			want = wanted(st, &nwant, &failed);
			looked = 1;
		}
		if (failed)
			break; /* out of memory: next sweep */
		if (nwant && bsearch(sha, want, nwant, MM_INPUT_SHA256_BYTES,
				     cmp_sha))
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	free(want);
}
