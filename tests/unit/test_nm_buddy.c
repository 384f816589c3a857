/*
 * test_nm_buddy.c — L2 checkpoint copies and fetches (node/buddy.c) over
 * the in-process machine: three node managers, each with an L1
 * directory and a buddy store of its own below a temporary directory.
 *
 * Covers: the buddy is the next live node (round); a file of several
 * boxes arrives whole and identical, the owner's, 0600, with no part
 * left; a copy naming a later base drops the receiver's copies of
 * earlier epochs; a drop deletes the receiver's copies of the job; a
 * bad name is refused before anything is sent; a
 * request for a chain (a delta and its full image) is answered by the
 * node that has it in L1, and both files arrive at the requester; a
 * request nobody can answer settles at once with -ENOENT; a second
 * request while one is open is refused.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <storm_proto.h>

#include "buddy.h"
#include "machine_fixture.h"

#define N 3
#define BOX 4096u

struct t {
	struct fx *f;
	st_layout_t lay;
	char base[64];
	char l1[N][160], store[N][160];
	struct nm_buddy *b[N];
};

static void rm_rf(const char *p)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	struct fx_opts o = { .n = N, .gmem = 64 * 1024,
			     .nevents = ST_EV_COUNT };
	struct t *t = calloc(1, sizeof(*t));
	char why[256];

	assert_non_null(t);
	*state = t;
	t->lay.buddy = 0;
	t->lay.buddy_len = BOX;
	t->lay.buddy_ack = N * BOX;
	t->lay.buddy_want = N * BOX + 32 * N;
	snprintf(t->base, sizeof(t->base), "/tmp/storm-buddy-XXXXXX");
	assert_non_null(mkdtemp(t->base));
	t->f = fx_new(&o);
	fx_settle(t->f, 0);
	for (uint32_t i = 0; i < N; i++) {
		char p[128];

		snprintf(p, sizeof(p), "%s/n%u", t->base, i);
		assert_int_equal(mkdir(p, 0755), 0);
		snprintf(t->l1[i], sizeof(t->l1[i]), "%s/l1", p);
		snprintf(t->store[i], sizeof(t->store[i]), "%s/buddy", p);
		assert_int_equal(mkdir(t->l1[i], 0711), 0);
		assert_int_equal(nm_buddy_create(&t->b[i], t->f->w[i], &t->lay,
						 0, N, t->store[i], t->l1[i],
						 1000u * (i + 1), 0, why,
						 sizeof(why)),
				 0);
	}
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;

	if (!t)
		return 0;
	for (uint32_t i = 0; i < N; i++)
		nm_buddy_destroy(t->b[i]);
	fx_free(t->f);
	rm_rf(t->base);
	free(t);
	*state = NULL;
	return 0;
}

/* A file below root: job-J/epoch-E/name with len bytes of pattern seed
 * (an image header if kind: its kind at 12, its parent at 56). */
static void make(const char *root, uint32_t job, uint32_t epoch,
		 const char *name, size_t len, int seed, uint32_t kind,
		 uint64_t parent)
{
	char p[256];
	uint8_t *buf = malloc(len);
	int fd;

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + (size_t)seed);
	if (kind) {
		memcpy(buf + 12, &kind, 4);
		memcpy(buf + 56, &parent, 8);
	}
	snprintf(p, sizeof(p), "%s/job-%u", root, job);
	mkdir(p, 0711);
	snprintf(p, sizeof(p), "%s/job-%u/epoch-%u", root, job, epoch);
	mkdir(p, 0711);
	snprintf(p, sizeof(p), "%s/job-%u/epoch-%u/%s", root, job, epoch,
		 name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

/* Whether two files have the same bytes. */
static int same(const char *a, const char *b)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

static int exists(const char *root, uint32_t job, uint32_t epoch,
		  const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/job-%u/epoch-%u/%s", root, job, epoch,
		 name);
	return access(p, F_OK) == 0;
}

static void test_pick(void **state)
{
	struct t *t = *state;

	assert_int_equal(nm_buddy_pick(t->b[0]), 1);
	assert_int_equal(nm_buddy_pick(t->b[1]), 2);
	assert_int_equal(nm_buddy_pick(t->b[2]), 0);
}

static void test_send_whole(void **state)
{
	struct t *t = *state;
	char src[256], dst[256], why[256];
	struct nm_buddy_file f = { 7, 1, 0, 65534, 65534, "rank-0.img" };
	struct stat sb;
	int fd;

	/* three boxes and a bit */
	make(t->l1[0], 7, 1, "rank-0.img", 3 * BOX + 123, 5, 0, 0);
	snprintf(src, sizeof(src), "%s/job-7/epoch-1/rank-0.img", t->l1[0]);
	snprintf(dst, sizeof(dst), "%s/job-7/epoch-1/rank-0.img",
		 t->store[1]);
	fd = open(src, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(nm_buddy_send(t->b[0], 1, &f, fd, why, sizeof(why)),
			 0);
	assert_true(same(src, dst));
	assert_int_equal(stat(dst, &sb), 0);
	assert_int_equal(sb.st_uid, 65534);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_false(exists(t->store[1], 7, 1, "rank-0.img.part-0"));
	/* a later epoch whose base is 2: epoch 1's copy goes */
	f.epoch = 2;
	f.base = 2;
	assert_int_equal(nm_buddy_send(t->b[0], 1, &f, fd, why, sizeof(why)),
			 0);
	close(fd);
	assert_true(exists(t->store[1], 7, 2, "rank-0.img"));
	assert_false(exists(t->store[1], 7, 1, "rank-0.img"));
	/* an empty file travels too */
	make(t->l1[0], 7, 2, "bcs-0.img", 0, 0, 0, 0);
	snprintf(src, sizeof(src), "%s/job-7/epoch-2/bcs-0.img", t->l1[0]);
	fd = open(src, O_RDONLY);
	f.name = "bcs-0.img";
	assert_int_equal(nm_buddy_send(t->b[0], 1, &f, fd, why, sizeof(why)),
			 0);
	close(fd);
	assert_true(exists(t->store[1], 7, 2, "bcs-0.img"));
	/* the sender deleted the job's images: the copies go */
	assert_int_equal(nm_buddy_drop(t->b[0], 1, 7, why, sizeof(why)), 0);
	snprintf(dst, sizeof(dst), "%s/job-7", t->store[1]);
	assert_int_equal(access(dst, F_OK), -1);
}

static void test_bad_name(void **state)
{
	struct t *t = *state;
	struct nm_buddy_file f = { 7, 1, 0, 0, 0, "../escape" };
	char why[256];
	int fd = open("/dev/null", O_RDONLY);

	assert_int_equal(nm_buddy_send(t->b[0], 1, &f, fd, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "../escape"));
	f.name = ".hidden";
	assert_int_equal(nm_buddy_send(t->b[0], 1, &f, fd, why, sizeof(why)),
			 -EINVAL);
	close(fd);
}

/* The request's outcome, waited for (bounded). */
static int settle(struct nm_buddy *b, uint32_t wait_ms)
{
	struct timespec nap = { 0, 2000000 };
	int rc;

	for (int i = 0; i < FX_WAIT_MS / 2; i++) {
		if ((rc = nm_buddy_fetched(b, wait_ms)) != 0)
			return rc;
		nanosleep(&nap, NULL);
	}
	return -ETIMEDOUT;
}

static void test_fetch_chain(void **state)
{
	struct t *t = *state;
	char a[256], b[256];

	/* node 0 has rank 3's full image (epoch 1) and a delta (epoch 2) */
	make(t->l1[0], 9, 1, "rank-3.img", 2 * BOX, 1, 1, 0);
	make(t->l1[0], 9, 2, "rank-3.img", BOX + 7, 2, 2, 1);
	assert_int_equal(nm_buddy_want(t->b[2], 9, 2, 3, NULL), 0);
	assert_int_equal(nm_buddy_want(t->b[2], 9, 2, 3, NULL), -EBUSY);
	assert_int_equal(settle(t->b[2], FX_WAIT_MS), 1);
	for (uint32_t e = 1; e <= 2; e++) {
		snprintf(a, sizeof(a), "%s/job-9/epoch-%u/rank-3.img",
			 t->l1[0], e);
		snprintf(b, sizeof(b), "%s/job-9/epoch-%u/rank-3.img",
			 t->store[2], e);
		assert_true(same(a, b));
	}
	/* settled: another request may go */
	assert_int_equal(nm_buddy_fetched(t->b[2], FX_WAIT_MS), -EINVAL);
}

static void test_fetch_none(void **state)
{
	struct t *t = *state;

	/* a delta whose full image is nowhere is no chain either */
	make(t->l1[1], 11, 2, "rank-0.img", 100, 3, 2, 1);
	assert_int_equal(nm_buddy_want(t->b[0], 11, 2, 0, NULL), 0);
	assert_int_equal(settle(t->b[0], FX_WAIT_MS), -ENOENT);
	assert_int_equal(nm_buddy_want(t->b[0], 12, 1, 0, NULL), 0);
	assert_int_equal(settle(t->b[0], FX_WAIT_MS), -ENOENT);
	assert_false(exists(t->store[0], 11, 2, "rank-0.img"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pick, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_whole, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_name, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fetch_chain, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fetch_none, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
