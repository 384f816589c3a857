/*
 * test_ckpt_engine.c — the capture and restore engine (ckpt.h) on real
 * processes: tests/ckpt/ckpt_target holds heap, stack, anonymous and file
 * mappings, TLS, a signal handler, a file read half way and a pipe; it is
 * captured while blocked in read(2), killed, restored into a fresh stub and
 * checks every part itself.  Also: the captured process runs on untouched;
 * a moved vDSO; the same image restored twice; a process with a thread or
 * a socket refused with the reason and left running; a corrupt image and
 * a changed file refused with the stub killed; all of it as an
 * unprivileged user.
 *
 *   test_ckpt_engine TARGET STATIC-TARGET (the same, linked statically)
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckpt.h"

static const char *target, *dynamic_target, *static_target;
static char dir[64], datafile[128];
/* descriptors the next spawn gives the target at 3, 4 (-1: none) */
static int give[2] = { -1, -1 };

struct proc {
	pid_t pid;
	int in, out;             /* its stdin (we write), its stdout */
};

static const struct ckpt_ident ID = { 0x5157, 42, 3, 0xb1 };

/* Start the target: as uid (0: as we are), address randomisation on or
 * off, and either running or stopped at its exec under our trace. */
static void spawn(struct proc *p, const char *mode, uid_t uid, int aslr,
		  int traceme)
{
	int in[2], out[2], st;

	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (!p->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (give[0] >= 0) { /* above 4 first: they may be 3 or 4 */
			int a = fcntl(give[0], F_DUPFD, 10);
			int b = fcntl(give[1], F_DUPFD, 10);

			if (a < 0 || b < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0)
				_exit(122);
		}
		/* nothing of ours but 0-2 (and what it is given) */
		close_range(give[0] >= 0 ? 5 : 3, ~0u, 0);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(120);
		if (!aslr)
			personality(ADDR_NO_RANDOMIZE);
		if (traceme)
			ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl(target, target, datafile, mode, (char *)NULL);
		_exit(121);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = out[0];
	if (traceme) {
		assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
		assert_true(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP);
	}
}

/* A line of its output, awaited for at most 10 s, into got. */
static void expect_line_got(struct proc *p, const char *prefix, char *got,
			    size_t gotlen)
{
	char buf[256];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		struct pollfd pf = { p->out, POLLIN, 0 };
		ssize_t r;

		assert_int_equal(poll(&pf, 1, 10000), 1);
		r = read(p->out, buf + n, 1);
		assert_int_equal(r, 1);
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = '\0';
	if (strncmp(buf, prefix, strlen(prefix)))
		fail_msg("expected \"%s...\", got \"%s\"", prefix, buf);
	if (got)
		snprintf(got, gotlen, "%s", buf);
}

static void expect_line(struct proc *p, const char *prefix)
{
	expect_line_got(p, prefix, NULL, 0);
}

/* Tell it to check itself; it must say ok (sum: its digest line) and
 * exit 0. */
static void expect_ok_sum(struct proc *p, char *sum, size_t sumlen)
{
	int st;

	assert_int_equal(write(p->in, "go\n", 3), 3);
	expect_line_got(p, "ok go", sum, sumlen);
	assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(p->in);
	close(p->out);
}

static void expect_ok(struct proc *p)
{
	expect_ok_sum(p, NULL, 0);
}

static void kill_proc(struct proc *p)
{
	int st;

	kill(p->pid, SIGKILL);
	waitpid(p->pid, &st, 0);
	close(p->in);
	close(p->out);
}

/* Capture p into a file, at epoch (a delta of parent if parent is not
 * 0); its bytes in *img (free them). */
static int capture_at(struct proc *p, ckpt_track_t *tr, uint64_t epoch,
		      uint64_t parent, void **img, size_t *len,
		      struct ckpt_stats *stp, char *why, size_t whylen)
{
	struct ckpt_header h = { .kind = parent ? CKPT_DELTA : CKPT_FULL,
				 .id = ID, .epoch = epoch, .parent = parent };
	struct ckpt_stats st;
	char path[160];
	struct stat sb;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/image", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	rc = ckpt_capture(p->pid, fd, &h, tr, &st, why, whylen);
	if (!rc) {
		assert_int_equal(fstat(fd, &sb), 0);
		assert_int_equal((uint64_t)sb.st_size, st.bytes);
		assert_int_equal(st.snapshot, 1);
		if (!parent)
			assert_true(st.pages > 3 * 256); /* the heap, at least */
		if (stp)
			*stp = st;
		*len = (size_t)sb.st_size;
		*img = malloc(*len);
		assert_non_null(*img);
		assert_int_equal(pread(fd, *img, *len, 0), (ssize_t)*len);
	}
	close(fd);
	return rc;
}

static int capture(struct proc *p, void **img, size_t *len, char *why,
		   size_t whylen)
{
	return capture_at(p, NULL, 1, 0, img, len, NULL, why, whylen);
}

static int restore(struct proc *p, const void *img, size_t len, uid_t uid,
		   int aslr, char *why, size_t whylen)
{
	struct ckpt_blob b = { img, len };

	spawn(p, "plain", uid, aslr, 1);
	return ckpt_restore(p->pid, &b, 1, &ID, NULL, why, whylen);
}

/* Captured, run on, killed, restored (twice, one with the vDSO moved). */
static void round_trip_as(uid_t uid)
{
	struct proc p, q;
	char why[256];
	void *img;
	size_t len;
	int rc;

	spawn(&p, "plain", uid, 0, 0);
	expect_line(&p, "ready");
	rc = capture(&p, &img, &len, why, sizeof(why));
	if (rc)
		fail_msg("capture: %d %s", rc, why);
	expect_ok(&p); /* the capture left it as it was */

	rc = restore(&q, img, len, uid, 0, why, sizeof(why));
	if (rc)
		fail_msg("restore: %d %s", rc, why);
	expect_ok(&q);
	rc = restore(&q, img, len, uid, 1, why, sizeof(why));
	if (rc)
		fail_msg("restore with the vDSO elsewhere: %d %s", rc, why);
	expect_ok(&q);
	free(img);
}

/* The caller's note rides in the image: handed back by ckpt_note, ignored
 * by the restore; an image without one has none; too long a note fails
 * the capture. */
static void test_note(void **state)
{
	struct ckpt_header h = { .kind = CKPT_FULL, .id = ID, .epoch = 1 };
	static char big[CKPT_NOTE_MAX + 1];
	ckpt_capture_t *k;
	struct proc p, q;
	struct ckpt_blob b;
	char why[256], path[160], got[32];
	struct stat sb;
	void *img;
	size_t len;
	int fd;

	(void)state;
	spawn(&p, "plain", 0, 0, 0);
	expect_line(&p, "ready");
	snprintf(path, sizeof(path), "%s/image", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ckpt_capture_hold(p.pid, fd, &h, NULL, &k, why,
					   sizeof(why)), 0);
	assert_int_equal(ckpt_capture_note(k, "said 42", 7), 0);
	assert_int_equal(ckpt_capture_write(k), 0);
	assert_int_equal(ckpt_capture_end(k, NULL, why, sizeof(why)), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	len = (size_t)sb.st_size;
	img = malloc(len);
	assert_non_null(img);
	assert_int_equal(pread(fd, img, len, 0), (ssize_t)len);
	b = (struct ckpt_blob){ img, len };
	assert_int_equal(ckpt_check(&b, 1, &ID, why, sizeof(why)), 0);
	memset(got, 0, sizeof(got));
	assert_int_equal(ckpt_note(&b, got, sizeof(got)), 7);
	assert_string_equal(got, "said 42");
	assert_int_equal(ckpt_note(&b, got, 3), 7); /* cut to the room */
	assert_int_equal(restore(&q, img, len, 0, 0, why, sizeof(why)), 0);
	expect_ok(&q);
	free(img);
	/* none, and too long */
	assert_int_equal(capture(&p, &img, &len, why, sizeof(why)), 0);
	b = (struct ckpt_blob){ img, len };
	assert_int_equal(ckpt_note(&b, got, sizeof(got)), -ENOENT);
	free(img);
	b = (struct ckpt_blob){ "not an image", 12 };
	assert_int_equal(ckpt_note(&b, got, sizeof(got)), -EINVAL);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(ckpt_capture_hold(p.pid, fd, &h, NULL, &k, why,
					   sizeof(why)), 0);
	assert_int_equal(ckpt_capture_note(k, big, sizeof(big)), -EINVAL);
	assert_int_equal(ckpt_capture_write(k), -EINVAL);
	assert_int_equal(ckpt_capture_end(k, NULL, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "a note of"));
	close(fd);
	expect_ok(&p);
}

/* What the launcher gave the process: the shared memory it mapped and
 * closed, and an eventfd it keeps.  Refused unless named; named, the
 * image leaves the memory's pages out and a restore maps the new
 * launcher's memory where the old was and keeps its eventfd. */
static void test_inherit(void **state)
{
	struct ckpt_header h = { .kind = CKPT_FULL, .id = ID, .epoch = 1 };
	const int fds[1] = { 4 };
	struct ckpt_inherit_map map = { -1, 3 };
	struct ckpt_inherit in = { fds, 1, &map, 1 };
	int shm = memfd_create("t", MFD_CLOEXEC), efd = eventfd(0, EFD_CLOEXEC);
	int shm2 = memfd_create("t2", MFD_CLOEXEC);
	int efd2 = eventfd(0, EFD_CLOEXEC), fd;
	unsigned char *a, *b, byte = 0x5a;
	ckpt_capture_t *k;
	struct proc p, q;
	char why[256], path[160];
	uint64_t v = 0;
	struct stat sb;
	void *img;
	size_t len;

	(void)state;
	assert_true(shm >= 0 && efd >= 0 && shm2 >= 0 && efd2 >= 0);
	assert_int_equal(ftruncate(shm, 8192), 0);
	assert_int_equal(ftruncate(shm2, 8192), 0);
	assert_int_equal(pwrite(shm, &byte, 1, 100), 1);
	give[0] = shm;
	give[1] = efd;
	spawn(&p, "inherit", 0, 0, 0);
	expect_line(&p, "ready");
	/* not named: refused, the process runs on */
	assert_int_equal(capture(&p, &img, &len, why, sizeof(why)), -ENOTSUP);
	map.own_fd = shm;
	snprintf(path, sizeof(path), "%s/image", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ckpt_capture_hold_inherit(p.pid, fd, &h, NULL, &in,
						   &k, why, sizeof(why)), 0);
	assert_int_equal(ckpt_capture_write(k), 0);
	if (ckpt_capture_end(k, NULL, why, sizeof(why)))
		fail_msg("capture: %s", why);
	assert_int_equal(fstat(fd, &sb), 0);
	len = (size_t)sb.st_size;
	img = malloc(len);
	assert_non_null(img);
	assert_int_equal(pread(fd, img, len, 0), (ssize_t)len);
	close(fd);
	expect_ok(&p);
	assert_int_equal(read(efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	assert_true(v == 1);
	/* restored with another memory and eventfd given at 3 and 4 */
	assert_int_equal(pwrite(shm2, &byte, 1, 100), 1);
	give[0] = shm2;
	give[1] = efd2;
	assert_int_equal(restore(&q, img, len, 0, 0, why, sizeof(why)), 0);
	expect_ok(&q);
	give[0] = give[1] = -1;
	a = mmap(NULL, 8192, PROT_READ, MAP_SHARED, shm2, 0);
	b = mmap(NULL, 8192, PROT_READ, MAP_SHARED, shm, 0);
	assert_true(a != MAP_FAILED && b != MAP_FAILED);
	assert_int_equal(a[200], 0x77); /* it wrote the new memory */
	assert_int_equal(read(efd2, &v, sizeof(v)), (ssize_t)sizeof(v));
	assert_true(v == 1);
	munmap(a, 8192);
	munmap(b, 8192);
	free(img);
	close(shm);
	close(shm2);
	close(efd);
	close(efd2);
}

static void test_round_trip(void **state)
{
	(void)state;
	round_trip_as(0);
}

/* The same program linked statically: no loader, no libraries. */
static void test_round_trip_static(void **state)
{
	(void)state;
	target = static_target;
	round_trip_as(0);
	target = dynamic_target;
}

static void test_round_trip_unprivileged(void **state)
{
	struct passwd *pw = getpwnam("nobody");

	(void)state;
	assert_non_null(pw);
	round_trip_as(pw->pw_uid);
}

static void refused(const char *mode, const char *reason)
{
	struct proc p;
	char why[256];
	void *img = NULL;
	size_t len;

	spawn(&p, mode, 0, 0, 0);
	expect_line(&p, "ready");
	assert_int_equal(capture(&p, &img, &len, why, sizeof(why)), -ENOTSUP);
	if (!strstr(why, reason))
		fail_msg("reason \"%s\" does not name %s", why, reason);
	if (!strcmp(mode, "thread")) {
		kill_proc(&p); /* its thread never ends: it would not exit */
		return;
	}
	expect_ok(&p);
}

static void test_refuses_thread(void **state)
{
	(void)state;
	refused("thread", "threads");
}

static void test_refuses_socket(void **state)
{
	(void)state;
	refused("socket", "socket");
}

/* A corrupt image or a changed file: refused, the stub killed. */
static void test_bad_restore(void **state)
{
	struct proc p, q;
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	char why[256];
	unsigned char *img;
	size_t len;

	(void)state;
	spawn(&p, "plain", 0, 0, 0);
	expect_line(&p, "ready");
	assert_int_equal(capture(&p, (void **)&img, &len, why, sizeof(why)), 0);
	kill_proc(&p);

	img[len / 2] ^= 1;
	assert_int_equal(restore(&q, img, len, 0, 0, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "corrupt"));
	assert_int_equal(kill(q.pid, 0), -1); /* killed and reaped */
	close(q.in);
	close(q.out);
	img[len / 2] ^= 1;

	{
		struct ckpt_ident other = ID;
		struct ckpt_blob b = { img, len };

		other.job++;
		spawn(&q, "plain", 0, 0, 1);
		assert_int_equal(ckpt_restore(q.pid, &b, 1, &other, NULL, why,
					      sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "another"));
		close(q.in);
		close(q.out);
	}

	assert_int_equal(utimensat(AT_FDCWD, datafile, ts, 0), 0);
	assert_int_equal(restore(&q, img, len, 0, 0, why, sizeof(why)),
			 -ESTALE);
	assert_non_null(strstr(why, datafile));
	close(q.in);
	close(q.out);
	free(img);
}

static void say(struct proc *p, int k)
{
	char line[16], want[16];

	snprintf(line, sizeof(line), "w %d\n", k);
	snprintf(want, sizeof(want), "done %d", k);
	assert_int_equal(write(p->in, line, strlen(line)),
			 (ssize_t)strlen(line));
	expect_line(p, want);
}

static void restore_chain(const struct ckpt_blob *b, size_t n,
			  const char *sum)
{
	struct proc q;
	char why[256], got[256];
	int rc;

	spawn(&q, "plain", 0, 0, 1);
	if ((rc = ckpt_restore(q.pid, b, n, &ID, NULL, why, sizeof(why))))
		fail_msg("restore of %zu images: %d %s", n, rc, why);
	expect_ok_sum(&q, got, sizeof(got));
	if (strcmp(got, sum))
		fail_msg("restored from %zu images: \"%s\", not \"%s\"", n,
			 got, sum);
}

/* A full image and three deltas: each small, the chain restoring what a
 * full image of the same moment restores; a broken chain refused. */
static void test_incremental(void **state)
{
	struct ckpt_blob b[5];
	struct ckpt_stats st[4];
	ckpt_track_t *tr;
	struct proc p, q;
	char why[256], sum[256];
	void *img[5];
	size_t len[5];
	int rc;

	(void)state;
	assert_int_equal(ckpt_track_create(&tr), 0);
	spawn(&p, "plain", 0, 0, 0);
	expect_line(&p, "ready");
	if ((rc = capture_at(&p, tr, 1, 0, &img[0], &len[0], &st[0], why,
			     sizeof(why))))
		fail_msg("full capture: %d %s", rc, why);
	for (int k = 1; k <= 3; k++) {
		say(&p, k);
		if ((rc = capture_at(&p, tr, (uint64_t)k + 1, (uint64_t)k,
				     &img[k], &len[k], &st[k], why,
				     sizeof(why))))
			fail_msg("delta %d: %d %s", k, rc, why);
		if (getenv("CKPT_SHOW"))
			printf("delta %d: %lu pages, %lu written, %zu B, stop %lu us; full %zu B %lu pages stop %lu us\n", k, (unsigned long)st[k].pages, (unsigned long)st[k].dirty_pages, len[k], (unsigned long)st[k].stop_ns / 1000, len[0], (unsigned long)st[0].pages, (unsigned long)st[0].stop_ns / 1000);
		/* a fifth of the heap's 768 pages, the stack, a new region */
		if (st[k].dirty_pages < 150 || st[k].dirty_pages > 200 ||
		    len[k] > len[0] / 3)
			fail_msg("delta %d: %lu written pages, %zu bytes (the "
				 "full image: %zu)", k,
				 (unsigned long)st[k].dirty_pages, len[k],
				 len[0]);
	}
	/* a delta whose parent is not the last capture: refused */
	{
		struct ckpt_header h = { .kind = CKPT_DELTA, .id = ID,
					 .epoch = 9, .parent = 2 };
		char path[160];
		int fd;

		snprintf(path, sizeof(path), "%s/image", dir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_int_equal(ckpt_capture(p.pid, fd, &h, tr, NULL, why,
					      sizeof(why)), -EINVAL);
		close(fd);
	}
	assert_int_equal(capture_at(&p, NULL, 5, 0, &img[4], &len[4], NULL,
				    why, sizeof(why)), 0);
	expect_ok_sum(&p, sum, sizeof(sum));

	for (int i = 0; i < 4; i++)
		b[i] = (struct ckpt_blob){ img[i], len[i] };
	restore_chain(b, 4, sum);
	b[4] = (struct ckpt_blob){ img[4], len[4] };
	restore_chain(&b[4], 1, sum);
	/* the chain compacted: one full image of epoch 4 restores alike,
	 * and no larger than a full capture */
	{
		char path[160];
		struct ckpt_blob c;
		struct ckpt_reader rd;
		uint64_t bytes = 0;
		void *cimg;
		int fd;

		snprintf(path, sizeof(path), "%s/compact", dir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		if (ckpt_compact(b, 4, fd, &bytes, why, sizeof(why)))
			fail_msg("compact: %s", why);
		assert_non_null(cimg = malloc((size_t)bytes));
		assert_int_equal(pread(fd, cimg, (size_t)bytes, 0),
				 (ssize_t)bytes);
		close(fd);
		c = (struct ckpt_blob){ cimg, (size_t)bytes };
		assert_int_equal(ckpt_read_begin(&rd, cimg, (size_t)bytes, &ID,
						 why, sizeof(why)), 0);
		assert_int_equal(rd.h.kind, CKPT_FULL);
		assert_int_equal(rd.h.epoch, 4);
		if (getenv("CKPT_SHOW"))
			printf("compacted: %lu B; full capture at 5: %zu B\n",
			       (unsigned long)bytes, len[4]);
		assert_true(bytes <= len[4] + 65536);
		restore_chain(&c, 1, sum);
		/* a delta of epoch 4's own still applies on it */
		assert_int_equal(ckpt_compact(b, 3, -1, &bytes, why,
					      sizeof(why)), -EBADF);
		free(cimg);
	}
	/* a chain with a hole */
	b[1] = b[2];
	spawn(&q, "plain", 0, 0, 1);
	assert_int_equal(ckpt_restore(q.pid, b, 3, &ID, NULL, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "not the delta"));
	close(q.in);
	close(q.out);
	for (int i = 0; i < 5; i++)
		free(img[i]);
	ckpt_track_destroy(tr);
}

static int setup(void **state)
{
	char buf[4096];
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ckpt-engine-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755))
		return -1;
	snprintf(datafile, sizeof(datafile), "%s/data", dir);
	if ((fd = open(datafile, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		return -1;
	for (int i = 0; i < 32; i++) {
		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (char)(i * 31 + j * 17);
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return -1;
	}
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	char path[160];

	(void)state;
	snprintf(path, sizeof(path), "%s/image", dir);
	unlink(path);
	unlink(datafile);
	rmdir(dir);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_round_trip_static),
		cmocka_unit_test(test_round_trip_unprivileged),
		cmocka_unit_test(test_refuses_thread),
		cmocka_unit_test(test_refuses_socket),
		cmocka_unit_test(test_bad_restore),
		cmocka_unit_test(test_incremental),
	};

	if (argc < 3) {
		fprintf(stderr, "usage: %s TARGET STATIC-TARGET\n", argv[0]);
		return 2;
	}
	target = dynamic_target = argv[1];
	static_target = argv[2];
	if (geteuid()) {
		printf("1..0 # SKIP needs root (ptrace of other users)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
