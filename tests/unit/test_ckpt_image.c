/*
 * test_ckpt_image.c — the checkpoint image format (ckpt/ckpt_image.c):
 * a round trip of sections of every length (padding), one streamed in
 * pieces, an empty one; an image cut at every length, or with any of its
 * bytes changed, refused with the reason; another job's, rank's, binary's
 * or cluster's refused when the reader says whose it expects; a delta's
 * base checked; a full disk (/dev/full) and a section written past its
 * length reported by the writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckpt_image.h"

static const struct ckpt_ident ID = { 0xc1u, 42, 3, 0xb1b1 };

/* An image of n sections (section k: k * 37 bytes of k), streamed into
 * a memory file: its bytes (malloc'd) and length. */
static unsigned char *make(enum ckpt_kind kind, uint64_t epoch,
			   uint64_t parent, int n, size_t *len)
{
	struct ckpt_header h = { CKPT_IMAGE_VERSION, kind, ID, epoch, parent };
	struct ckpt_writer w;
	int fd = memfd_create("ckpt", 0);
	unsigned char *b;
	off_t end;

	assert_true(fd >= 0);
	assert_int_equal(ckpt_write_begin(&w, fd, &h), 0);
	for (int k = 0; k < n; k++) {
		unsigned char chunk[64];
		size_t sl = (size_t)k * 37, done = 0;

		memset(chunk, k, sizeof(chunk));
		assert_int_equal(ckpt_section_begin(&w, 100 + k, k, sl), 0);
		while (done < sl) { /* in pieces of up to 64 */
			size_t piece = sl - done < sizeof(chunk) ?
				       sl - done : sizeof(chunk);

			assert_int_equal(ckpt_write_data(&w, chunk, piece),
					 0);
			done += piece;
		}
	}
	assert_int_equal(ckpt_write_end(&w), 0);
	end = lseek(fd, 0, SEEK_END);
	assert_true(end > 0);
	b = malloc((size_t)end);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)end, 0), end);
	close(fd);
	*len = (size_t)end;
	return b;
}

static void test_round_trip(void **state)
{
	struct ckpt_reader r;
	struct ckpt_section s;
	char why[128];
	size_t len;
	unsigned char *b = make(CKPT_FULL, 7, 0, 9, &len);
	int k = 0;

	(void)state;
	assert_int_equal(len % 8, 0);
	assert_int_equal(ckpt_read_begin(&r, b, len, &ID, why, sizeof(why)),
			 0);
	assert_int_equal(r.h.kind, CKPT_FULL);
	assert_int_equal(r.h.epoch, 7);
	assert_int_equal(r.h.id.rank, 3);
	while (ckpt_read_section(&r, &s)) {
		const unsigned char *d = s.data;

		assert_int_equal(s.type, 100 + k);
		assert_int_equal(s.flags, k);
		assert_int_equal(s.len, (uint64_t)k * 37);
		for (uint64_t i = 0; i < s.len; i++)
			assert_int_equal(d[i], k);
		k++;
	}
	assert_int_equal(k, 9);
	free(b);
}

static void test_every_cut_and_every_change_is_refused(void **state)
{
	struct ckpt_reader r;
	char why[128];
	size_t len;
	unsigned char *b = make(CKPT_DELTA, 9, 8, 4, &len);

	(void)state;
	for (size_t cut = 0; cut < len; cut++) {
		why[0] = '\0';
		assert_int_equal(ckpt_read_begin(&r, b, cut, NULL, why,
						 sizeof(why)), -1);
		assert_true(why[0]);
	}
	for (size_t i = 0; i < len; i++) {
		b[i] ^= 0x20;
		why[0] = '\0';
		assert_int_equal(ckpt_read_begin(&r, b, len, NULL, why,
						 sizeof(why)), -1);
		assert_true(why[0]);
		b[i] ^= 0x20;
	}
	assert_int_equal(ckpt_read_begin(&r, b, len, NULL, why, sizeof(why)),
			 0);
	free(b);
}

static void test_another_owners_image_is_refused(void **state)
{
	struct ckpt_ident other[4] = { ID, ID, ID, ID };
	struct ckpt_reader r;
	char why[128];
	size_t len;
	unsigned char *b = make(CKPT_FULL, 1, 0, 2, &len);

	(void)state;
	other[0].cluster++;
	other[1].job++;
	other[2].rank++;
	other[3].binary++;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ckpt_read_begin(&r, b, len, &other[i], why,
						 sizeof(why)), -1);
		assert_non_null(strstr(why, "another"));
	}
	free(b);
}

static void test_a_delta_needs_an_earlier_base(void **state)
{
	struct ckpt_reader r;
	char why[128];
	size_t len;
	unsigned char *b;

	(void)state;
	b = make(CKPT_DELTA, 5, 5, 1, &len); /* its own base */
	assert_int_equal(ckpt_read_begin(&r, b, len, NULL, why, sizeof(why)),
			 -1);
	free(b);
	b = make(CKPT_FULL, 5, 2, 1, &len); /* a full one with a base */
	assert_int_equal(ckpt_read_begin(&r, b, len, NULL, why, sizeof(why)),
			 -1);
	free(b);
}

static void test_the_writer_reports_errors(void **state)
{
	struct ckpt_header h = { CKPT_IMAGE_VERSION, CKPT_FULL, ID, 1, 0 };
	struct ckpt_writer w;
	unsigned char big[1 << 16] = { 0 };
	int fd = open("/dev/full", O_WRONLY), rc = 0;

	(void)state;
	assert_true(fd >= 0);
	rc = ckpt_write_begin(&w, fd, &h);
	if (!rc)
		rc = ckpt_section_begin(&w, 1, 0, sizeof(big));
	if (!rc)
		rc = ckpt_write_data(&w, big, sizeof(big));
	assert_int_equal(rc ? rc : ckpt_write_end(&w), -ENOSPC);
	assert_int_equal(ckpt_write_end(&w), -ENOSPC); /* kept */
	close(fd);
	fd = memfd_create("ckpt", 0);
	assert_int_equal(ckpt_write_begin(&w, fd, &h), 0);
	assert_int_equal(ckpt_section_begin(&w, 1, 0, 4), 0);
	assert_int_equal(ckpt_write_data(&w, big, 5), -EINVAL);
	close(fd);
	fd = memfd_create("ckpt", 0);
	assert_int_equal(ckpt_write_begin(&w, fd, &h), 0);
	assert_int_equal(ckpt_section_begin(&w, 1, 0, 4), 0);
	assert_int_equal(ckpt_write_end(&w), -EINVAL); /* not whole */
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_cut_and_every_change_is_refused),
		cmocka_unit_test(test_another_owners_image_is_refused),
		cmocka_unit_test(test_a_delta_needs_an_earlier_base),
		cmocka_unit_test(test_the_writer_reports_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
