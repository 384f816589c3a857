/*
 * rp_test_util.h — what the replication unit tests share: includes, the
 * internal header, little-endian writers, exact-size copies (so ASan sees
 * any overread) and throw-away state directories.
 */
#ifndef RP_TEST_UTIL_H
#define RP_TEST_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fuzz_rng.h"
#include "rp_internal.h"

#define OP_HDR 52u /* "SR" v t + the fixed fields of an OP */
#define OP_BUF 4096 /* room for the largest make_op() */

/* ---- little helpers --------------------------------------------------------- */

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A copy of exactly n bytes on the heap: ASan sees any read past it. */
static inline uint8_t *dup_exact(const void *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);

	assert_non_null(c);
	if (n)
		memcpy(c, p, n);
	return c;
}

static inline void make_state_dir(char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, cap, "%s/storm-rp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
}

static inline void remove_state_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1200];

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

/* An OP whose length field says len and that carries have bytes. */
static inline uint8_t *op_with_len(uint32_t len, size_t have, size_t *n)
{
	struct rp_buf b;

	assert_int_equal(rpw_begin(&b, RP_MSG_OP, OP_HDR + have), 0);
	rpw_u32(&b, 1);
	rpw_u32(&b, 2);
	rpw_u64(&b, 3);
	rpw_u32(&b, 0);
	rpw_u64(&b, 4);
	rpw_u64(&b, 5);
	rpw_u32(&b, 6);
	rpw_u32(&b, 7);
	rpw_u32(&b, len);
	for (size_t i = 0; i < have; i++)
		rpw_u8(&b, (uint8_t)i);
	assert_false(b.bad);
	*n = b.len;
	return b.p;
}

#endif /* RP_TEST_UTIL_H */
