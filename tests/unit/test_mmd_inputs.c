/*
 * test_mmd_inputs.c — a job's inputs as storm-mm takes them
 * (manager/mmd/inputs.c): descriptors read by the workers, refused when
 * not a regular file (before any read) or over the cap, TCP bytes
 * received in pieces, each input stored once under the SHA-256 of its
 * bytes, a peer's copy kept only if it hashes to its name, and the sweep
 * removing only blobs no waiting job names, once old.  Real files in a
 * temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "inputs.h"

static char dir[64], spool[128];
static struct mmd_inputs in;

static int setup(void **state)
{
	char err[512];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/storm-inputs-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(spool, sizeof(spool), "%s/inputs", dir);
	assert_int_equal(mmd_inputs_start(&in, spool, 1, err, sizeof(err)),
			 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	mmd_inputs_stop(&in);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* A regular file of n bytes of c, mode 0750; its descriptor. */
static int file_of(const char *name, size_t n, char c)
{
	char path[256], *buf = malloc(n ? n : 1);
	int fd;

	assert_non_null(buf);
	memset(buf, c, n);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0750);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	fchmod(fd, 0750);
	free(buf);
	return fd;
}

/* The next set the workers are done with (bounded wait). */
static struct mmd_input_set *done(void)
{
	struct mmd_input_set *s = NULL;

	for (int i = 0; i < 500 && !s; i++) {
		struct pollfd p = { .fd = in.efd, .events = POLLIN };

		poll(&p, 1, 10);
		if (!mmd_inputs_next(&in, &s))
			s = NULL;
	}
	assert_non_null(s);
	return s;
}

static struct mmd_input_set *read_set(int *fds, uint32_t n)
{
	static const char *const names[] = { "/p/prog", "/p/file" };
	int *mine = malloc(n * sizeof(int));
	struct mmd_input_set *s;

	assert_non_null(mine);
	memcpy(mine, fds, n * sizeof(int));
	s = mmd_inputs_new(&in, 1, n, mine, names);
	assert_non_null(s);
	assert_int_equal(mmd_inputs_read(&in, s), 0);
	return done();
}

/* The blob of the n bytes at p is in the store, mode 0600. */
static void assert_blob(const void *p, size_t n)
{
	uint8_t sha[MM_INPUT_SHA256_BYTES];
	char *got = malloc(n + 1);
	struct stat st;
	int fd;

	assert_non_null(got);
	crypto_hash_sha256(sha, p, n);
	assert_true(mmd_blob_have(&in, sha, n));
	fd = mmd_blob_open(&in, sha);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, (off_t)n);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(read(fd, got, n + 1), (ssize_t)n);
	assert_memory_equal(got, p, n);
	close(fd);
	free(got);
}

/* Entries in the store (blobs and sets' directories). */
static int entries(void)
{
	char cmd[256];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", spool);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

static void test_inputs_read_and_stored_by_digest(void **state)
{
	int fds[2] = { file_of("a", 5000, 'a'), file_of("b", 0, 'b') };
	struct mmd_input_set *s;
	char five[5000];
	uint8_t sha[MM_INPUT_SHA256_BYTES];

	(void)state;
	memset(five, 'a', sizeof(five));
	lseek(fds[0], 17, SEEK_SET); /* the client's offset is not used */
	s = read_set(fds, 2);
	assert_int_equal(s->rc, 0);
	assert_true(s->stored);
	assert_int_equal(s->bytes, 5000);
	assert_int_equal(s->sizes[0], 5000);
	assert_int_equal(s->sizes[1], 0);
	assert_int_equal(s->modes[0], 0750); /* kept for the job record */
	crypto_hash_sha256(sha, (const uint8_t *)five, sizeof(five));
	assert_memory_equal(s->sha[0], sha, sizeof(sha));
	mmd_inputs_free(&in, s);
	assert_blob(five, sizeof(five));
	assert_blob("", 0);
	assert_int_equal(entries(), 2); /* the set's directory is gone */
	memset(sha, 0, sizeof(sha));
	assert_int_equal(mmd_blob_open(&in, sha), -ENOENT);
}

static void test_inputs_fifo_refused_before_read(void **state)
{
	int pp[2], fds[2];
	struct mmd_input_set *s;

	(void)state;
	assert_int_equal(pipe(pp), 0);
	fds[0] = file_of("c", 10, 'c');
	fds[1] = pp[0]; /* no writer will ever write: a read would wait */
	s = read_set(fds, 2);
	assert_int_equal(s->rc, -EINVAL);
	assert_non_null(strstr(s->err, "/p/file is a FIFO, not a regular "
				       "file"));
	mmd_inputs_free(&in, s);
	close(pp[1]);
	assert_int_equal(entries(), 0); /* nothing kept */
}

static void test_inputs_over_cap_refused_naming_it(void **state)
{
	int fds[1] = { file_of("big", (1u << 20) + 1, 'x') };
	struct mmd_input_set *s;

	(void)state;
	s = read_set(fds, 1);
	assert_int_equal(s->rc, -EFBIG);
	assert_non_null(strstr(s->err, "cap of 1 MiB per job "
				       "(max_input_mib"));
	mmd_inputs_free(&in, s);
	assert_int_equal(entries(), 0);
}

static void test_inputs_tcp_bytes_in_pieces(void **state)
{
	static const char *const names[] = { "/p/prog", "/p/empty", "/p/f" };
	struct mmd_input_set *s = mmd_inputs_new(&in, 2, 3, NULL, names);
	uint8_t bytes[10] = "0123456789";

	(void)state;
	assert_non_null(s);
	s->sizes[0] = 4;
	s->sizes[2] = 6;
	s->modes[0] = 0755;
	s->modes[2] = 0600;
	assert_int_equal(mmd_inputs_recv_begin(&in, s), 0);
	assert_int_equal(s->left, 10);
	/* a frame across the file boundary, then the rest */
	assert_int_equal(mmd_inputs_recv(&in, s, bytes, 7), 0);
	assert_false(s->stored);
	assert_int_equal(mmd_inputs_recv(&in, s, bytes + 7, 3), 1);
	assert_int_equal(s->rc, 0);
	assert_true(s->stored);
	mmd_inputs_free(&in, s);
	assert_blob("0123", 4);
	assert_blob("456789", 6);
	assert_blob("", 0); /* the empty one is there too */
}

static void test_inputs_same_bytes_kept_once(void **state)
{
	int a[1] = { file_of("first", 3, '1') };
	int b[2] = { file_of("again", 3, '1'), file_of("other", 4, '2') };
	struct mmd_input_set *s;

	(void)state;
	s = read_set(a, 1);
	mmd_inputs_free(&in, s);
	s = read_set(b, 2); /* the same program again, and another file */
	assert_int_equal(s->rc, 0);
	mmd_inputs_free(&in, s);
	assert_blob("111", 3);
	assert_blob("2222", 4);
	assert_int_equal(entries(), 2);
}

static void test_inputs_put_kept_only_if_it_hashes(void **state)
{
	static const char *const names[] = { "a peer's blob" };
	struct mmd_input_set *s;
	uint8_t sha[MM_INPUT_SHA256_BYTES];

	(void)state;
	/* a peer claims the digest of "good" but sends "evil" */
	crypto_hash_sha256(sha, (const uint8_t *)"good", 4);
	s = mmd_inputs_new(&in, 3, 1, NULL, names);
	assert_non_null(s);
	s->put = 1;
	memcpy(s->claimed, sha, sizeof(sha));
	s->sizes[0] = 4;
	assert_int_equal(mmd_inputs_recv_begin(&in, s), 0);
	assert_int_equal(mmd_inputs_recv(&in, s, (const uint8_t *)"evil", 4),
			 1);
	assert_int_equal(s->rc, -EBADMSG);
	mmd_inputs_free(&in, s);
	assert_false(mmd_blob_have(&in, sha, 4));
	assert_int_equal(entries(), 0);
	/* the true bytes are kept */
	s = mmd_inputs_new(&in, 3, 1, NULL, names);
	s->put = 1;
	memcpy(s->claimed, sha, sizeof(sha));
	s->sizes[0] = 4;
	assert_int_equal(mmd_inputs_recv_begin(&in, s), 0);
	assert_int_equal(mmd_inputs_recv(&in, s, (const uint8_t *)"good", 4),
			 1);
	assert_int_equal(s->rc, 0);
	mmd_inputs_free(&in, s);
	assert_blob("good", 4);
}

static void test_blob_names_are_canonical(void **state)
{
	uint8_t sha[MM_INPUT_SHA256_BYTES], back[MM_INPUT_SHA256_BYTES];
	char hex[MMD_BLOB_HEX], bad[MMD_BLOB_HEX];

	(void)state;
	for (size_t i = 0; i < sizeof(sha); i++)
		sha[i] = (uint8_t)(i * 37 + 11);
	mmd_blob_hex(sha, hex);
	assert_int_equal(strlen(hex), 64);
	assert_int_equal(mmd_blob_parse(hex, back), 0);
	assert_memory_equal(sha, back, sizeof(sha));
	memcpy(bad, hex, sizeof(bad));
	bad[3] = 'A'; /* upper case: another name for the same blob */
	assert_int_equal(mmd_blob_parse(bad, back), -EINVAL);
	bad[3] = '/';
	assert_int_equal(mmd_blob_parse(bad, back), -EINVAL);
	assert_int_equal(mmd_blob_parse("abc", back), -EINVAL);
	assert_int_equal(mmd_blob_parse("tmp-1", back), -EINVAL);
	assert_int_equal(mmd_blob_parse(NULL, back), -EINVAL);
}

/* Age the blob of the n bytes at p past the grace. */
static void age(const void *p, size_t n)
{
	uint8_t sha[MM_INPUT_SHA256_BYTES];
	char hex[MMD_BLOB_HEX], path[256];
	struct timespec old[2];

	crypto_hash_sha256(sha, p, n);
	mmd_blob_hex(sha, hex);
	snprintf(path, sizeof(path), "%s/%s", spool, hex);
	clock_gettime(CLOCK_REALTIME, &old[0]);
	old[0].tv_sec -= MMD_BLOB_GRACE_MS / 1000 + 60;
	old[1] = old[0];
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
}

static void test_sweep_removes_old_blobs_no_job_names(void **state)
{
	static const char *const argv[] = { "/p/prog" };
	static const uint32_t ids[] = { 0 }, cpus[] = { 4 };
	static const char *const nn[] = { "n0" };
	int a[1] = { file_of("w", 6, 'w') }, b[1] = { file_of("o", 3, 'o') },
	    c[1] = { file_of("y", 5, 'y') };
	struct mmd_input_set *s;
	mm_input_t inp = { .size = 6, .mode = 0755 };
	mm_job_spec_t sp = { .name = "j", .uid = 1000, .gid = 100,
			     .ranks = 1, .argc = 1, .argv = argv, .cwd = "/",
			     .ninputs = 1, .inputs = &inp };
	mm_op_t op = { .code = MM_OP_SUBMIT_INPUTS, .spec = &sp };
	mm_result_t res;
	mm_state_t *st;

	(void)state;
	s = read_set(a, 1);
	memcpy(inp.sha256, s->sha[0], MM_INPUT_SHA256_BYTES);
	mmd_inputs_free(&in, s);
	mmd_inputs_free(&in, read_set(b, 1));
	mmd_inputs_free(&in, read_set(c, 1));
	assert_int_equal(mm_state_create(1, 1, ids, nn, cpus, &st), 0);
	assert_int_equal(mm_apply(st, &op, &res), 0); /* PENDING, names w */
	age("wwwwww", 6);
	age("ooo", 3);
	mmd_inputs_sweep(&in, st);
	assert_blob("wwwwww", 6); /* old, but a waiting job names it */
	assert_blob("yyyyy", 5);  /* nobody names it, but it is young */
	assert_int_equal(entries(), 2); /* "ooo" is gone */
	/* once the job has ended, its blob goes too (when old) */
	assert_int_equal(mm_apply(st, &(mm_op_t){ .code = MM_OP_CANCEL,
						  .job = res.job }, &res), 0);
	age("wwwwww", 6);
	mmd_inputs_sweep(&in, st);
	assert_int_equal(entries(), 1);
	mm_state_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_inputs_read_and_stored_by_digest, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_fifo_refused_before_read, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_over_cap_refused_naming_it, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_tcp_bytes_in_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_same_bytes_kept_once, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_put_kept_only_if_it_hashes, setup,
			teardown),
		cmocka_unit_test(test_blob_names_are_canonical),
		cmocka_unit_test_setup_teardown(
			test_sweep_removes_old_blobs_no_job_names, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
