/*
 * test_mmd_inputs.c — a job's inputs as storm-mm takes them
 * (manager/mmd/inputs.c): descriptors read by the workers into the
 * spool, refused when not a regular file (before any read) or over the
 * cap, TCP bytes received in pieces, and a set's directory becoming the
 * job's or going away.  Real files in a temporary directory.
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
#include <unistd.h>

#include <cmocka.h>

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

static void test_inputs_read_into_spool_then_job(void **state)
{
	int fds[2] = { file_of("a", 5000, 'a'), file_of("b", 0, 'b') };
	struct mmd_input_set *s;
	struct stat st;
	int fd;

	(void)state;
	lseek(fds[0], 17, SEEK_SET); /* the client's offset is not used */
	s = read_set(fds, 2);
	assert_int_equal(s->rc, 0);
	assert_int_equal(s->bytes, 5000);
	mmd_inputs_proposed(&in, s, 1000);
	assert_int_equal(in.proposed, 1);
	mmd_inputs_settle(&in, s, 42);
	assert_int_equal(in.proposed, 0);
	assert_true(mmd_inputs_have(&in, 42));
	fd = mmd_inputs_open(&in, 42, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 5000);
	assert_int_equal(st.st_mode & 0777, 0750);
	close(fd);
	fd = mmd_inputs_open(&in, 42, 1);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mmd_inputs_open(&in, 43, 0), -ENOENT);
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
	mmd_inputs_settle(&in, s, 0); /* refused: nothing kept */
	assert_false(mmd_inputs_have(&in, 0));
}

static void test_inputs_tcp_bytes_in_pieces(void **state)
{
	static const char *const names[] = { "/p/prog", "/p/empty", "/p/f" };
	struct mmd_input_set *s = mmd_inputs_new(&in, 2, 3, NULL, names);
	uint8_t bytes[10] = "0123456789";
	char path[256], got[16] = "";
	int fd;

	(void)state;
	assert_non_null(s);
	s->sizes = calloc(3, sizeof(uint64_t));
	s->modes = calloc(3, sizeof(uint32_t));
	s->sizes[0] = 4;
	s->sizes[2] = 6;
	s->modes[0] = 0755;
	s->modes[2] = 0600;
	assert_int_equal(mmd_inputs_recv_begin(&in, s), 0);
	assert_int_equal(s->left, 10);
	/* a frame across the file boundary, then the rest */
	assert_int_equal(mmd_inputs_recv(&in, s, bytes, 7), 0);
	assert_int_equal(mmd_inputs_recv(&in, s, bytes + 7, 3), 1);
	assert_int_equal(s->rc, 0);
	mmd_inputs_settle(&in, s, 7);
	snprintf(path, sizeof(path), "%s/job-7/2", spool);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got)), 6);
	assert_string_equal(got, "456789");
	close(fd);
	fd = mmd_inputs_open(&in, 7, 1);
	assert_true(fd >= 0); /* the empty one is there too */
	close(fd);
}

static void test_inputs_retry_keeps_first_bytes(void **state)
{
	int a[1] = { file_of("first", 3, '1') }, b[1] = { file_of("second",
								   4, '2') };
	struct mmd_input_set *s;
	struct stat st;
	int fd;

	(void)state;
	s = read_set(a, 1);
	mmd_inputs_settle(&in, s, 9);
	s = read_set(b, 1); /* the same request again: answered job 9 */
	mmd_inputs_settle(&in, s, 9);
	fd = mmd_inputs_open(&in, 9, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 3);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_inputs_read_into_spool_then_job, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_fifo_refused_before_read, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_over_cap_refused_naming_it, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_tcp_bytes_in_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_inputs_retry_keeps_first_bytes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
