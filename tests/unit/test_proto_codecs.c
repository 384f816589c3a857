/*
 * test_proto_codecs.c — the byte formats manager and node managers share
 * through global memory (proto/hb.c) against storm_proto.h: heartbeat
 * blocks, file-ring chunk headers, output mailboxes and job manifests
 * round-trip; every decoder rejects what is malformed with -STORM_EPROTO
 * (a manifest prefix with -EAGAIN); and a seeded fuzz loop feeds random
 * and mutated buffers, each in a heap block of exactly its length, to all
 * the decoders, which must never read out of bounds, crash or leak (run it
 * under -Db_sanitize=address,undefined).  STORM_FUZZ_SEED=N replays.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz_rng.h"

#include <storm_proto.h>

/* ---- helpers ------------------------------------------------------------ */

/* A heap copy of exactly n bytes, so ASan sees any read past it. */
static uint8_t *exact_copy(const uint8_t *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);

	assert_non_null(c);
	if (n)
		memcpy(c, p, n);
	return c;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- heartbeat ---------------------------------------------------------- */

#define HB_LEN(n) (ST_HB_HDR + ST_HB_ENTRY * (size_t)(n))
#define HB_MAX 6000u /* more than a 64 KiB block holds */

static st_hb_job_t hb_in[HB_MAX], hb_out[HB_MAX];

static void fill_jobs(st_hb_job_t *jobs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		jobs[i].job = i * 2654435761u;
		jobs[i].state = i % 2 ? ST_HB_STAGING : ST_HB_ACTIVE;
		jobs[i].row = (uint16_t)(i % 16);
		jobs[i].done = i * 7u;
		jobs[i].ckpt = i % 3 ? 0 : i * 3u + 1;
		jobs[i].restore = i % 5 ? 0 : i + 2;
		jobs[i].inc = i % 7 ? 0 : i + 3;
	}
}

static int encode_hb_w(uint8_t *buf, size_t cap, uint64_t slice, uint32_t n,
		       uint16_t row, uint32_t lo, uint32_t hi)
{
	/* the idle flag on every other slice, to see it round-trip */
	st_hb_t hb = { .slice = slice, .row = row, .lo = lo, .hi = hi,
		       .njobs = n, .jobs = hb_in,
		       .flags = slice & 1 ? ST_HB_IDLE : 0 };

	fill_jobs(hb_in, n);
	return st_hb_encode(buf, cap, &hb);
}

static int encode_hb(uint8_t *buf, size_t cap, uint64_t slice, uint32_t n)
{
	return encode_hb_w(buf, cap, slice, n, ST_HB_ALL_ROWS, 0, UINT32_MAX);
}

static int decode_hb(const uint8_t *p, size_t len, st_hb_t *hb)
{
	hb->jobs = hb_out;
	return st_hb_decode(p, len, hb);
}

static void test_hb_round_trips_0_1_1000_jobs_every_state(void **state)
{
	static const uint32_t counts[] = { 0, 1, 2, 1000, 2848 };
	static const uint64_t slices[] = { 0, 1, UINT64_MAX, 0x0123456789abcdefULL };
	static uint8_t buf[64u << 10];

	(void)state;
	assert_int_equal(st_hb_capacity(sizeof(buf)), 2848);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (size_t s = 0; s < sizeof(slices) / sizeof(slices[0]); s++) {
			uint32_t n = counts[c];
			st_hb_t hb = { .njobs = 12345 };
			uint8_t *p;
			int len = encode_hb_w(buf, sizeof(buf), slices[s], n,
					      (uint16_t)c, (uint32_t)s,
					      (uint32_t)s + 1000);

			assert_int_equal(len, HB_LEN(n));
			p = exact_copy(buf, (size_t)len);
			memset(hb_out, 0, sizeof(hb_out));
			assert_int_equal(decode_hb(p, (size_t)len, &hb), 0);
			assert_int_equal(hb.njobs, n);
			assert_true(hb.slice == slices[s]);
			assert_int_equal(hb.row, c);
			assert_int_equal(hb.lo, s);
			assert_int_equal(hb.hi, s + 1000);
			assert_int_equal(hb.flags,
					 slices[s] & 1 ? ST_HB_IDLE : 0);
			for (uint32_t i = 0; i < n; i++) {
				assert_int_equal(hb_out[i].job, hb_in[i].job);
				assert_int_equal(hb_out[i].state,
						 hb_in[i].state);
				assert_int_equal(hb_out[i].row, hb_in[i].row);
				assert_int_equal(hb_out[i].done,
						 hb_in[i].done);
				assert_int_equal(hb_out[i].ckpt,
						 hb_in[i].ckpt);
				assert_int_equal(hb_out[i].restore,
						 hb_in[i].restore);
				assert_int_equal(hb_out[i].inc, hb_in[i].inc);
			}
			free(p);
			/* in a larger region (layout.hb_len) too */
			hb.njobs = 12345;
			assert_int_equal(decode_hb(buf, sizeof(buf), &hb), 0);
			assert_int_equal(hb.njobs, n);
		}
	}
}

static void test_hb_encode_short_cap_is_enospc(void **state)
{
	static const uint32_t counts[] = { 0, 1, 1000 };
	static uint8_t buf[HB_LEN(1001)];

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		uint32_t n = counts[c];

		memset(buf, 0xee, sizeof(buf));
		assert_int_equal(encode_hb(buf, HB_LEN(n) - 1, 7, n), -ENOSPC);
		assert_int_equal(encode_hb(buf, 0, 7, n), -ENOSPC);
		for (size_t i = 0; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0xee); /* nothing written */
		assert_int_equal(encode_hb(buf, HB_LEN(n), 7, n),
				 (int)HB_LEN(n));
	}
}

static void test_hb_decode_rejects_wrong_magic(void **state)
{
	uint8_t buf[HB_LEN(3)];
	st_hb_t hb;

	(void)state;
	for (int at = 0; at < 4; at++) {
		for (int bit = 0; bit < 8; bit++) {
			assert_int_equal(encode_hb(buf, sizeof(buf), 5, 3),
					 (int)sizeof(buf));
			buf[at] ^= (uint8_t)(1u << bit);
			assert_int_equal(decode_hb(buf, sizeof(buf), &hb),
					 -STORM_EPROTO);
		}
	}
	memset(buf, 0, sizeof(buf));
	assert_int_equal(decode_hb(buf, sizeof(buf), &hb), -STORM_EPROTO);
}

static void test_hb_decode_rejects_every_truncation(void **state)
{
	static const uint32_t counts[] = { 0, 1, 7 };
	uint8_t buf[HB_LEN(7)];

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		int len = encode_hb(buf, sizeof(buf), 42, counts[c]);

		assert_true(len > 0);
		for (int cut = 0; cut < len; cut++) {
			uint8_t *p = exact_copy(buf, (size_t)cut);
			st_hb_t hb = { .njobs = 777 };

			assert_int_equal(decode_hb(p, (size_t)cut, &hb),
					 -STORM_EPROTO);
			assert_int_equal(hb.njobs, 777);
			free(p);
		}
	}
}

/* A count the bytes cannot hold, or a window upside down, is refused
 * before any entry is read. */
static void test_hb_decode_rejects_more_than_max_jobs(void **state)
{
	static uint8_t buf[HB_LEN(100)];
	static const uint32_t bad[] = { 101, 0x10000, UINT32_MAX };
	st_hb_t hb = { .njobs = 777 };

	(void)state;
	assert_int_equal(encode_hb(buf, sizeof(buf), 1, 100), (int)HB_LEN(100));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_u32(buf + 22, bad[i]);
		assert_int_equal(decode_hb(buf, sizeof(buf), &hb),
				 -STORM_EPROTO);
		assert_int_equal(hb.njobs, 777);
	}
	put_u32(buf + 22, 100);
	assert_int_equal(decode_hb(buf, sizeof(buf), &hb), 0);
	assert_int_equal(hb.njobs, 100);
	put_u32(buf + 14, 5);
	put_u32(buf + 18, 4);
	assert_int_equal(decode_hb(buf, sizeof(buf), &hb), -STORM_EPROTO);
}

static void test_hb_decode_rejects_bad_state_byte(void **state)
{
	static const uint8_t states[] = { 0, 3, 4, 0x81, 0xff };
	static const uint32_t where[] = { 0, 4, 9 };
	uint8_t buf[HB_LEN(10)];

	(void)state;
	for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
		for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
			st_hb_t hb = { .njobs = 777 };

			assert_int_equal(encode_hb(buf, sizeof(buf), 3, 10),
					 (int)sizeof(buf));
			buf[ST_HB_HDR + ST_HB_ENTRY * where[w] + 4] = states[s];
			assert_int_equal(decode_hb(buf, sizeof(buf), &hb),
					 -STORM_EPROTO);
			assert_int_equal(hb.njobs, 777);
		}
	}
}

/* What a node makes of a listing: STAGING stays STAGING; an ACTIVE job
 * RUNs in its row's turn (or in every row's) and is STOPped otherwise. */
static void test_hb_stop_state_decodes_and_state_4_is_rejected(void **state)
{
	(void)state;
	assert_int_equal(st_hb_want(ST_HB_STAGING, 3, 3), ST_HB_STAGING);
	assert_int_equal(st_hb_want(ST_HB_STAGING, 3, 1), ST_HB_STAGING);
	assert_int_equal(st_hb_want(ST_HB_ACTIVE, 3, 3), ST_HB_RUN);
	assert_int_equal(st_hb_want(ST_HB_ACTIVE, 3, 1), ST_HB_STOP);
	assert_int_equal(st_hb_want(ST_HB_ACTIVE, 0, ST_HB_ALL_ROWS),
			 ST_HB_RUN);
	assert_int_equal(st_hb_want(ST_HB_ACTIVE, 15, ST_HB_ALL_ROWS),
			 ST_HB_RUN);
	assert_int_equal(st_hb_want(ST_HB_ACTIVE, 0, ST_HB_ALL_ROWS - 1),
			 ST_HB_STOP);
}

/* EXIT records: the status alone (older nodes) or with usage. */
static void test_exit_record_round_trips(void **state)
{
	st_exit_t e = { -5, 1234567, 89, 1u << 20 }, d;
	uint8_t b[ST_EXIT_LEN];

	(void)state;
	st_exit_encode(b, &e);
	assert_int_equal(st_exit_decode(b, sizeof(b), &d), 0);
	assert_int_equal(d.status, -5);
	assert_true(d.utime_us == 1234567 && d.stime_us == 89 &&
		    d.maxrss_kib == (1u << 20));
	assert_int_equal(st_exit_decode(b, 4, &d), 0);
	assert_int_equal(d.status, -5);
	assert_true(d.utime_us == 0 && d.maxrss_kib == 0);
	for (size_t n = 0; n < sizeof(b) + 2; n++)
		if (n != 4 && n != ST_EXIT_LEN)
			assert_int_equal(st_exit_decode(b, n, &d),
					 -STORM_EPROTO);
}

/* ---- chunks ------------------------------------------------------------- */

static void test_chunk_hdr_round_trips(void **state)
{
	static const uint32_t v[][5] = {
		/* job, index, total, len, chunk_size */
		{ 1, 0, 1, 0, 4096 },
		{ 7, 3, 4, 4096 - ST_CHUNK_HDR, 4096 },
		{ UINT32_MAX, UINT32_MAX - 1, UINT32_MAX, 100, 1u << 20 },
		{ 0x01020304, 0, 0x7fffffff, (1u << 20) - ST_CHUNK_HDR,
		  1u << 20 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t slot[ST_CHUNK_HDR], *p;
		uint32_t job, index, total, len;

		st_chunk_put_hdr(slot, v[i][0], v[i][1], v[i][2], v[i][3]);
		p = exact_copy(slot, sizeof(slot));
		assert_int_equal(st_chunk_get_hdr(p, v[i][4], &job, &index,
						  &total, &len), 0);
		assert_int_equal(job, v[i][0]);
		assert_int_equal(index, v[i][1]);
		assert_int_equal(total, v[i][2]);
		assert_int_equal(len, v[i][3]);
		free(p);
	}
}

static void test_chunk_hdr_rejects_index_not_below_total(void **state)
{
	static const uint32_t it[][2] = {
		{ 0, 0 }, { 1, 1 }, { 5, 4 }, { UINT32_MAX, UINT32_MAX },
		{ UINT32_MAX, 0 },
	};
	uint8_t slot[ST_CHUNK_HDR];
	uint32_t job, index, total, len;

	(void)state;
	for (size_t i = 0; i < sizeof(it) / sizeof(it[0]); i++) {
		st_chunk_put_hdr(slot, 9, it[i][0], it[i][1], 10);
		assert_int_equal(st_chunk_get_hdr(slot, 4096, &job, &index,
						  &total, &len), -STORM_EPROTO);
	}
}

static void test_chunk_hdr_rejects_len_past_slot(void **state)
{
	uint8_t slot[ST_CHUNK_HDR];
	uint32_t job, index, total, len;

	(void)state;
	st_chunk_put_hdr(slot, 9, 0, 2, 4096 - ST_CHUNK_HDR + 1);
	assert_int_equal(st_chunk_get_hdr(slot, 4096, &job, &index, &total,
					  &len), -STORM_EPROTO);
	st_chunk_put_hdr(slot, 9, 0, 2, 4096);
	assert_int_equal(st_chunk_get_hdr(slot, 4096, &job, &index, &total,
					  &len), -STORM_EPROTO);
	st_chunk_put_hdr(slot, 9, 0, 2, UINT32_MAX);
	assert_int_equal(st_chunk_get_hdr(slot, 4096, &job, &index, &total,
					  &len), -STORM_EPROTO);
	/* the largest len that fits is accepted */
	st_chunk_put_hdr(slot, 9, 0, 2, 4096 - ST_CHUNK_HDR);
	assert_int_equal(st_chunk_get_hdr(slot, 4096, &job, &index, &total,
					  &len), 0);
	/* a slot only as large as its header carries no data */
	st_chunk_put_hdr(slot, 9, 0, 2, 1);
	assert_int_equal(st_chunk_get_hdr(slot, ST_CHUNK_HDR, &job, &index,
					  &total, &len), -STORM_EPROTO);
}

static void test_chunk_hdr_rejects_bad_magic(void **state)
{
	uint8_t slot[ST_CHUNK_HDR];
	uint32_t job, index, total, len;

	(void)state;
	for (int at = 0; at < 4; at++) {
		for (int bit = 0; bit < 8; bit++) {
			st_chunk_put_hdr(slot, 9, 0, 2, 10);
			slot[at] ^= (uint8_t)(1u << bit);
			assert_int_equal(st_chunk_get_hdr(slot, 4096, &job,
							  &index, &total, &len),
					 -STORM_EPROTO);
		}
	}
	memset(slot, 0, sizeof(slot));
	assert_int_equal(st_chunk_get_hdr(slot, 4096, &job, &index, &total,
					  &len), -STORM_EPROTO);
}

/* ---- output mailboxes --------------------------------------------------- */

static void test_box_hdr_round_trips(void **state)
{
	static const uint64_t seqs[] = { 0, 1, UINT64_MAX, 0x0102030405060708ULL };
	uint8_t box[ST_BOX_HDR + 100], *p;
	uint64_t seq;
	uint32_t nbytes;

	(void)state;
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		st_box_put_hdr(box, seqs[i], (uint32_t)(i * 33));
		assert_int_equal(st_box_get_hdr(box, sizeof(box), &seq,
						&nbytes), 0);
		assert_true(seq == seqs[i]);
		assert_int_equal(nbytes, i * 33);
	}
	/* a box exactly as long as its header and body */
	st_box_put_hdr(box, 5, 100);
	p = exact_copy(box, sizeof(box));
	assert_int_equal(st_box_get_hdr(p, sizeof(box), &seq, &nbytes), 0);
	assert_int_equal(nbytes, 100);
	free(p);
	st_box_put_hdr(box, 5, 0);
	p = exact_copy(box, ST_BOX_HDR);
	assert_int_equal(st_box_get_hdr(p, ST_BOX_HDR, &seq, &nbytes), 0);
	assert_int_equal(nbytes, 0);
	free(p);
}

static void test_box_hdr_rejects_nbytes_past_box(void **state)
{
	uint8_t box[ST_BOX_HDR + 100], *p;
	uint64_t seq;
	uint32_t nbytes;

	(void)state;
	st_box_put_hdr(box, 5, 101);
	assert_int_equal(st_box_get_hdr(box, sizeof(box), &seq, &nbytes),
			 -STORM_EPROTO);
	st_box_put_hdr(box, 5, UINT32_MAX);
	assert_int_equal(st_box_get_hdr(box, sizeof(box), &seq, &nbytes),
			 -STORM_EPROTO);
	/* a box shorter than its header */
	st_box_put_hdr(box, 5, 0);
	for (size_t n = 0; n < ST_BOX_HDR; n++) {
		p = exact_copy(box, n);
		assert_int_equal(st_box_get_hdr(p, n, &seq, &nbytes),
				 -STORM_EPROTO);
		free(p);
	}
}

struct rec_spec {
	uint8_t type;
	uint32_t job, rank;
	const char *data;
	uint32_t len;
};

static void test_box_records_iterate_in_order(void **state)
{
	static const int32_t status = 9 << 8;
	static const struct rec_spec recs[] = {
		{ ST_REC_STDOUT, 1, 0, "hello\n", 6 },
		{ ST_REC_STDERR, 1, 0, "oops\n", 5 },
		{ ST_REC_STDOUT, 1, 1, "", 0 }, /* zero length */
		{ ST_REC_EXIT, 1, 0, (const char *)&status, 4 },
		{ ST_REC_STDERR, 2, 7, "x", 1 },
		{ ST_REC_FAIL, 2, 0, "node lost", 9 },
		{ ST_REC_EXIT, 1, 1, (const char *)&status, 4 },
		{ ST_REC_STDOUT, UINT32_MAX, UINT32_MAX, "\0\1\2", 3 },
		{ ST_REC_FAIL, 3, 0, "", 0 },
		{ ST_REC_STDERR, 3, 0, "", 0 }, /* zero length, last */
	};
	const size_t nrec = sizeof(recs) / sizeof(recs[0]);
	uint8_t buf[512], *box;
	size_t off = ST_BOX_HDR, boxlen, k = 0;
	uint64_t seq;
	uint32_t nbytes;
	st_rec_t rec;
	int rc;

	(void)state;
	for (size_t i = 0; i < nrec; i++) {
		st_box_put_rec(buf + off, recs[i].type, recs[i].job,
			       recs[i].rank, recs[i].data, recs[i].len);
		off += ST_REC_HDR + recs[i].len;
	}
	st_box_put_hdr(buf, 77, (uint32_t)(off - ST_BOX_HDR));
	box = exact_copy(buf, off);
	assert_int_equal(st_box_get_hdr(box, off, &seq, &nbytes), 0);
	assert_true(seq == 77);
	boxlen = ST_BOX_HDR + nbytes;
	assert_int_equal(boxlen, off);

	off = ST_BOX_HDR;
	while ((rc = st_box_next(box, boxlen, &off, &rec)) == 1) {
		assert_true(k < nrec);
		assert_int_equal(rec.type, recs[k].type);
		assert_int_equal(rec.job, recs[k].job);
		assert_int_equal(rec.rank, recs[k].rank);
		assert_int_equal(rec.len, recs[k].len);
		if (rec.len)
			assert_memory_equal(rec.data, recs[k].data, rec.len);
		assert_true(rec.data + rec.len == box + off);
		k++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(k, nrec);
	assert_int_equal(off, boxlen);
	/* at the end it stays at the end */
	assert_int_equal(st_box_next(box, boxlen, &off, &rec), 0);
	free(box);
}

static void test_box_next_empty_box_has_no_records(void **state)
{
	uint8_t buf[ST_BOX_HDR], *box;
	size_t off = ST_BOX_HDR;
	st_rec_t rec;

	(void)state;
	st_box_put_hdr(buf, 1, 0);
	box = exact_copy(buf, sizeof(buf));
	assert_int_equal(st_box_next(box, sizeof(buf), &off, &rec), 0);
	assert_int_equal(off, ST_BOX_HDR);
	free(box);
}

static void test_box_next_rejects_record_past_end(void **state)
{
	uint8_t buf[ST_BOX_HDR + ST_REC_HDR + 10], *box;
	size_t off;
	st_rec_t rec;

	(void)state;
	st_box_put_rec(buf + ST_BOX_HDR, ST_REC_STDOUT, 1, 2, "0123456789", 10);
	/* the data cut short by one byte, ..., the whole data missing */
	for (size_t cut = 1; cut <= 10; cut++) {
		size_t boxlen = sizeof(buf) - cut;

		box = exact_copy(buf, boxlen);
		off = ST_BOX_HDR;
		assert_int_equal(st_box_next(box, boxlen, &off, &rec),
				 -STORM_EPROTO);
		assert_int_equal(off, ST_BOX_HDR);
		free(box);
	}
	/* the record header itself cut short */
	for (size_t n = ST_BOX_HDR + 1; n < ST_BOX_HDR + ST_REC_HDR; n++) {
		box = exact_copy(buf, n);
		off = ST_BOX_HDR;
		assert_int_equal(st_box_next(box, n, &off, &rec),
				 -STORM_EPROTO);
		free(box);
	}
	/* a length near 2^32 must not wrap */
	put_u32(buf + ST_BOX_HDR + 9, UINT32_MAX);
	box = exact_copy(buf, sizeof(buf));
	off = ST_BOX_HDR;
	assert_int_equal(st_box_next(box, sizeof(buf), &off, &rec),
			 -STORM_EPROTO);
	free(box);
}

/* A CKPT record: success with its figures, failure with its reason;
 * anything of another shape refused. */
static void test_ckpt_record_round_trips(void **state)
{
	st_ckpt_rec_t in = { .epoch = 7, .bytes = UINT64_C(1) << 33,
			     .stop_us = 1234, .levels = 5 }, out;
	uint8_t buf[ST_CKPT_REC_LEN + 1100];
	int n;

	(void)state;
	n = st_ckpt_rec_encode(buf, sizeof(buf), &in);
	assert_int_equal(n, ST_CKPT_REC_LEN);
	assert_int_equal(st_ckpt_rec_decode(buf, (size_t)n, &out), 0);
	assert_int_equal(out.epoch, 7);
	assert_int_equal(out.rc, 0);
	assert_int_equal(out.bytes, in.bytes);
	assert_int_equal(out.stop_us, 1234);
	assert_int_equal(out.levels, 5);
	assert_int_equal(out.why_len, 0);
	in.rc = -95;
	in.why = "rank 0: 2 threads (one is supported)";
	n = st_ckpt_rec_encode(buf, sizeof(buf), &in);
	assert_int_equal(n, ST_CKPT_REC_LEN + (int)strlen(in.why));
	assert_int_equal(st_ckpt_rec_decode(buf, (size_t)n, &out), 0);
	assert_int_equal(out.rc, -95);
	assert_int_equal(out.why_len, strlen(in.why));
	assert_memory_equal(out.why, in.why, out.why_len);
	/* refused: short, a failure without its reason, epoch 0 */
	assert_int_equal(st_ckpt_rec_decode(buf, ST_CKPT_REC_LEN - 1, &out),
			 -STORM_EPROTO);
	assert_int_equal(st_ckpt_rec_decode(buf, ST_CKPT_REC_LEN, &out),
			 -STORM_EPROTO);
	memset(buf, 0, 4);
	assert_int_equal(st_ckpt_rec_decode(buf, (size_t)n, &out),
			 -STORM_EPROTO);
	assert_int_equal(st_ckpt_rec_encode(buf, ST_CKPT_REC_LEN, &in),
			 -ENOSPC);
}

/* A RERUN record round trips; any other length is refused. */
static void test_rerun_record_round_trips(void **state)
{
	const st_rerun_t in = { 7, { 1ull << 40, 12345 } };
	uint8_t buf[ST_RERUN_LEN + 1] = { 0 };
	st_rerun_t out;

	(void)state;
	st_rerun_encode(buf, &in);
	assert_int_equal(st_rerun_decode(buf, ST_RERUN_LEN, &out), 0);
	assert_int_equal(out.epoch, 7);
	assert_true(out.off[0] == in.off[0] && out.off[1] == in.off[1]);
	assert_int_equal(st_rerun_decode(buf, ST_RERUN_LEN - 1, &out),
			 -STORM_EPROTO);
	assert_int_equal(st_rerun_decode(buf, ST_RERUN_LEN + 1, &out),
			 -STORM_EPROTO);
}

static void test_box_next_rejects_unknown_type(void **state)
{
	static const uint8_t types[] = { 0, ST_REC_PMI + 1, 0x80, 0xff };
	uint8_t buf[ST_BOX_HDR + 2 * ST_REC_HDR + 4];
	size_t off;
	st_rec_t rec;

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		st_box_put_rec(buf + ST_BOX_HDR, ST_REC_STDOUT, 1, 0, "ab", 2);
		st_box_put_rec(buf + ST_BOX_HDR + ST_REC_HDR + 2, types[i], 1,
			       0, "cd", 2);
		off = ST_BOX_HDR;
		assert_int_equal(st_box_next(buf, sizeof(buf), &off, &rec), 1);
		assert_int_equal(st_box_next(buf, sizeof(buf), &off, &rec),
				 -STORM_EPROTO);
	}
}

/* ---- manifest ----------------------------------------------------------- */

static uint32_t mf_rank_node[] = { 2, 2, 3, 3, 4 };
static char *mf_argv[] = { "prog", "--size", "", "two words" };
static char *mf_env[] = { "OMP_NUM_THREADS=4", "PATH=/bin:/usr/bin" };
static char *mf_names[] = { "prog", "input.dat", "libx.so" };
static uint64_t mf_sizes[] = { 12345, 0, UINT64_C(1) << 33 };
static uint32_t mf_modes[] = { 0755, 0644, 04700 };

static st_manifest_t sample_manifest(void)
{
	st_manifest_t m = {
		.job = 0xfeedbeef,
		.ranks = 5,
		.rank_node = mf_rank_node,
		.argc = 4,
		.argv = mf_argv,
		.envc = 2,
		.env = mf_env,
		.cwd = "/home/u/run",
		.nfiles = 3,
		.file_names = mf_names,
		.file_sizes = mf_sizes,
		.file_modes = mf_modes,
	};

	return m;
}

static void assert_manifest_equal(const st_manifest_t *a,
				  const st_manifest_t *b)
{
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->ranks, b->ranks);
	for (uint32_t i = 0; i < a->ranks; i++)
		assert_int_equal(a->rank_node[i], b->rank_node[i]);
	assert_int_equal(a->argc, b->argc);
	for (uint32_t i = 0; i < a->argc; i++)
		assert_string_equal(a->argv[i], b->argv[i]);
	assert_int_equal(a->envc, b->envc);
	for (uint32_t i = 0; i < a->envc; i++)
		assert_string_equal(a->env[i], b->env[i]);
	assert_string_equal(a->cwd ? a->cwd : "", b->cwd ? b->cwd : "");
	assert_int_equal(a->nfiles, b->nfiles);
	for (uint32_t i = 0; i < a->nfiles; i++) {
		assert_string_equal(a->file_names[i], b->file_names[i]);
		assert_true(a->file_sizes[i] == b->file_sizes[i]);
		assert_int_equal(a->file_modes[i], b->file_modes[i]);
	}
}

/* Encode m and decode an exact heap copy; returns the decoder's code. */
static int manifest_trip(const st_manifest_t *m, st_manifest_t **out)
{
	uint8_t *enc = NULL, *p;
	size_t len = 0, used = 0;
	int rc;

	assert_int_equal(st_manifest_encode(m, &enc, &len), 0);
	p = exact_copy(enc, len);
	free(enc);
	*out = NULL;
	rc = st_manifest_decode(p, len, &used, out);
	if (rc == 0)
		assert_int_equal(used, len);
	else
		assert_null(*out);
	free(p);
	return rc;
}

static void test_manifest_round_trips(void **state)
{
	st_manifest_t m = sample_manifest(), *d = NULL;
	uint8_t *enc = NULL, *p;
	size_t len = 0, used = 0;

	(void)state;
	assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
	assert_non_null(enc);
	assert_true(len > 8);
	p = exact_copy(enc, len);
	assert_int_equal(st_manifest_decode(p, len, &used, &d), 0);
	assert_non_null(d);
	assert_int_equal(used, len);
	assert_manifest_equal(d, &m);
	assert_null(d->argv[d->argc]); /* NULL-terminated for execve */
	st_manifest_free(d);
	free(p);

	/* followed by the stream's file bytes: used is the manifest alone */
	p = malloc(len + 100);
	assert_non_null(p);
	memcpy(p, enc, len);
	memset(p + len, 'F', 100);
	assert_int_equal(st_manifest_decode(p, len + 100, &used, &d), 0);
	assert_int_equal(used, len);
	assert_manifest_equal(d, &m);
	st_manifest_free(d);
	free(p);
	free(enc);
}

/* A batch allocation and a step travel (SMF5); both at once is refused. */
static void test_manifest_alloc_and_step(void **state)
{
	st_manifest_t m = sample_manifest(), *d;
	uint8_t *enc = NULL;
	size_t len = 0, used = 0;

	(void)state;
	m.alloc = 1;
	assert_int_equal(manifest_trip(&m, &d), 0);
	assert_int_equal(d->alloc, 1);
	assert_int_equal(d->parent, 0);
	st_manifest_free(d);
	m.alloc = 0;
	m.parent = 77;
	assert_int_equal(manifest_trip(&m, &d), 0);
	assert_int_equal(d->alloc, 0);
	assert_int_equal(d->parent, 77);
	st_manifest_free(d);
	m.alloc = 1;
	assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
	assert_int_equal(st_manifest_decode(enc, len, &used, &d),
			 -STORM_EPROTO);
	enc[len - 5] = 2; /* alloc neither 0 nor 1 */
	assert_int_equal(st_manifest_decode(enc, len, &used, &d),
			 -STORM_EPROTO);
	free(enc);
}

/* The owner travels (version 2); a version-1 manifest (an older manager
 * during a rolling upgrade) still decodes, with no owner. */
static void test_manifest_owner(void **state)
{
	st_manifest_t m = sample_manifest(), *d;
	uint8_t *enc = NULL, *v1;
	size_t len = 0, used = 0;

	(void)state;
	m.uid = 65534;
	m.gid = 65533;
	m.owned = 1;
	assert_int_equal(manifest_trip(&m, &d), 0);
	assert_int_equal(d->owned, 1);
	assert_int_equal(d->uid, 65534);
	assert_int_equal(d->gid, 65533);
	st_manifest_free(d);
	/* version 1: "SMF1", no owner after the job id, no batch output,
	 * memory limit, cpus, MPI, shape nor batch step at the end (u8
	 * 0, two empty strings, u64 0, u8 0, u8 0, u32 1, u8 0, u32 0, u32
	 * 0, u8 0, u32 0: 37 bytes) */
	assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
	len -= 37;
	v1 = malloc(len - 8);
	assert_non_null(v1);
	memcpy(v1, "SMF1", 4);
	v1[4] = (uint8_t)(len - 8);
	v1[5] = (uint8_t)((len - 8) >> 8);
	v1[6] = v1[7] = 0;
	memcpy(v1 + 8, enc + 8, 4);
	memcpy(v1 + 12, enc + 20, len - 20);
	assert_int_equal(st_manifest_decode(v1, len - 8, &used, &d), 0);
	assert_int_equal(used, len - 8);
	assert_int_equal(d->owned, 0);
	assert_int_equal(d->uid, 0);
	assert_int_equal(d->batch, 0);
	assert_null(d->out_pat);
	assert_manifest_equal(d, &m);
	st_manifest_free(d);
	free(v1);
	free(enc);
}

/* A batch job's output patterns travel with it (version 2). */
static void test_manifest_batch_output(void **state)
{
	st_manifest_t m = sample_manifest(), *d;

	(void)state;
	m.owned = 1;
	m.batch = 1;
	m.out_pat = "out.%j.%r";
	m.err_pat = "/tmp/err";
	m.mem_limit = 3ull << 30;
	m.mpi = ST_MPI_BCS;
	{
		static uint32_t cpus[5] = { 0, 1, 0, 3, 2 };

		m.rank_cpu = cpus;
	}
	assert_int_equal(manifest_trip(&m, &d), 0);
	assert_true(d->mem_limit == 3ull << 30);
	assert_int_equal(d->mpi, ST_MPI_BCS);
	assert_non_null(d->rank_cpu);
	assert_int_equal(d->rank_cpu[3], 3);
	assert_int_equal(d->batch, 1);
	assert_string_equal(d->out_pat, "out.%j.%r");
	assert_string_equal(d->err_pat, "/tmp/err");
	assert_manifest_equal(d, &m);
	st_manifest_free(d);
}

static void test_manifest_round_trips_minimal(void **state)
{
	static uint32_t node0 = 0;
	static char *argv1[] = { "a" };
	static char *name1[] = { "a" };
	static uint64_t size1 = 0;
	static uint32_t mode1 = 0;
	st_manifest_t m = {
		.job = 0, .ranks = 1, .rank_node = &node0, .argc = 1,
		.argv = argv1, .envc = 0, .env = NULL, .cwd = "",
		.nfiles = 1, .file_names = name1, .file_sizes = &size1,
		.file_modes = &mode1,
	};
	st_manifest_t *d;

	(void)state;
	assert_int_equal(manifest_trip(&m, &d), 0);
	assert_manifest_equal(d, &m);
	assert_int_equal(d->envc, 0);
	st_manifest_free(d);
}

static void test_manifest_encode_null_cwd_is_empty(void **state)
{
	st_manifest_t m = sample_manifest(), *d;

	(void)state;
	/* wb_str() takes NULL for "": no undefined behaviour on the way
	 * (UBSan: memcpy from NULL, even of 0 bytes) */
	m.cwd = NULL;
	assert_int_equal(manifest_trip(&m, &d), 0);
	assert_string_equal(d->cwd, "");
	st_manifest_free(d);
}

static void test_manifest_decode_prefix_is_eagain(void **state)
{
	st_manifest_t m = sample_manifest(), *d;
	uint8_t *enc = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *p = exact_copy(enc, cut);
		size_t used = 4242;

		d = NULL;
		assert_int_equal(st_manifest_decode(p, cut, &used, &d),
				 -EAGAIN);
		assert_null(d);
		assert_int_equal(used, 4242);
		free(p);
	}
	free(enc);
}

static void test_manifest_decode_rejects_bad_file_names(void **state)
{
	static char *bad[] = { "a/b", "/etc", "dir/", ".", "..", "" };
	st_manifest_t *d;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (uint32_t f = 0; f < 3; f++) {
			st_manifest_t m = sample_manifest();
			char *names[3] = { "prog", "input.dat", "libx.so" };

			names[f] = bad[i];
			m.file_names = names;
			if (manifest_trip(&m, &d) != -STORM_EPROTO)
				fail_msg("file %u named \"%s\" accepted", f,
					 bad[i]);
		}
	}
	/* names that merely look odd are plain names */
	{
		st_manifest_t m = sample_manifest();
		char *names[3] = { "...", ".hidden", "a..b" };

		m.file_names = names;
		assert_int_equal(manifest_trip(&m, &d), 0);
		assert_string_equal(d->file_names[0], "...");
		st_manifest_free(d);
	}
}

static void test_manifest_decode_rejects_zero_files(void **state)
{
	st_manifest_t m = sample_manifest(), *d;

	(void)state;
	m.nfiles = 0;
	assert_int_equal(manifest_trip(&m, &d), -STORM_EPROTO);
}

static void test_manifest_decode_rejects_zero_ranks(void **state)
{
	st_manifest_t m = sample_manifest(), *d;

	(void)state;
	m.ranks = 0;
	assert_int_equal(manifest_trip(&m, &d), -STORM_EPROTO);
}

static void test_manifest_decode_rejects_zero_argc(void **state)
{
	st_manifest_t m = sample_manifest(), *d;

	(void)state;
	m.argc = 0;
	assert_int_equal(manifest_trip(&m, &d), -STORM_EPROTO);
}

/* Encode m, turn the one byte marker of the encoding into a NUL, decode. */
static int decode_with_nul_for(const st_manifest_t *m, char marker)
{
	uint8_t *enc = NULL, *hit;
	size_t len = 0, used;
	st_manifest_t *d = NULL;
	int rc;

	assert_int_equal(st_manifest_encode(m, &enc, &len), 0);
	hit = memchr(enc, marker, len);
	assert_non_null(hit);
	assert_null(memchr(hit + 1, marker, len - (size_t)(hit + 1 - enc)));
	*hit = '\0';
	rc = st_manifest_decode(enc, len, &used, &d);
	if (rc == 0)
		st_manifest_free(d);
	free(enc);
	return rc;
}

static void test_manifest_decode_rejects_nul_inside_strings(void **state)
{
	st_manifest_t m = sample_manifest();
	char *argv[4] = { "prog", "--si@ze", "", "two words" };
	char *env[2] = { "OMP_NUM_THREADS=4", "PATH=/bin:/u@sr/bin" };
	char *names[3] = { "prog", "in@put.dat", "libx.so" };

	(void)state;
	m.argv = argv;
	assert_int_equal(decode_with_nul_for(&m, '@'), -STORM_EPROTO);
	m.argv = mf_argv;
	m.env = env;
	assert_int_equal(decode_with_nul_for(&m, '@'), -STORM_EPROTO);
	m.env = mf_env;
	m.cwd = "/home/@u";
	assert_int_equal(decode_with_nul_for(&m, '@'), -STORM_EPROTO);
	m.cwd = "/home/u";
	m.file_names = names;
	assert_int_equal(decode_with_nul_for(&m, '@'), -STORM_EPROTO);
}

static void test_manifest_decode_rejects_trailing_garbage(void **state)
{
	st_manifest_t m = sample_manifest(), *d = NULL;
	uint8_t *enc = NULL, *p;
	size_t len = 0, used;

	(void)state;
	assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
	for (size_t extra = 1; extra <= 16; extra++) {
		p = malloc(len + extra);
		assert_non_null(p);
		memcpy(p, enc, len);
		memset(p + len, 0, extra);
		put_u32(p + 4, (uint32_t)(len + extra)); /* declared length */
		assert_int_equal(st_manifest_decode(p, len + extra, &used, &d),
				 -STORM_EPROTO);
		assert_null(d);
		free(p);
	}
	free(enc);
}

static void test_manifest_decode_rejects_bad_header(void **state)
{
	st_manifest_t m = sample_manifest(), *d = NULL;
	uint8_t *enc = NULL;
	size_t len = 0, used;

	(void)state;
	assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
	enc[0] ^= 1; /* magic */
	assert_int_equal(st_manifest_decode(enc, len, &used, &d),
			 -STORM_EPROTO);
	enc[0] ^= 1;
	for (uint32_t total = 0; total < 8; total++) {
		put_u32(enc + 4, total);
		assert_int_equal(st_manifest_decode(enc, len, &used, &d),
				 -STORM_EPROTO);
	}
	/* declared shorter than what it holds */
	put_u32(enc + 4, (uint32_t)len - 1);
	assert_int_equal(st_manifest_decode(enc, len, &used, &d),
			 -STORM_EPROTO);
	assert_null(d);
	free(enc);
}

static void test_manifest_free_null_is_fine(void **state)
{
	(void)state;
	st_manifest_free(NULL);
}

/* ---- fuzz --------------------------------------------------------------- */

#define FUZZ_ROUNDS 20000
#define FUZZ_MAX 1024

static uint64_t fuzz_seed;
static int fuzz_round;

#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond))                                                 \
			fail_msg("seed %#llx round %d: %s",                  \
				 (unsigned long long)fuzz_seed, fuzz_round,  \
				 #cond);                                     \
	} while (0)

/* A valid encoding of a random kind, into buf; returns its length. */
static size_t valid_sample(uint8_t *buf, size_t cap)
{
	switch (rnd() % 4) {
	case 0: {
		uint32_t n = (uint32_t)(rnd() % 12);
		int len = encode_hb(buf, cap, rnd(), n);

		return len > 0 ? (size_t)len : 0;
	}
	case 1:
		st_chunk_put_hdr(buf, (uint32_t)rnd(), (uint32_t)(rnd() % 4),
				 (uint32_t)(1 + rnd() % 8),
				 (uint32_t)(rnd() % 200));
		return ST_CHUNK_HDR + (size_t)(rnd() % 32);
	case 2: {
		size_t off = ST_BOX_HDR;
		unsigned k = (unsigned)(rnd() % 6);

		for (unsigned i = 0; i < k; i++) {
			uint32_t len = (uint32_t)(rnd() % 20);
			uint8_t data[20];

			for (uint32_t j = 0; j < len; j++)
				data[j] = (uint8_t)rnd();
			st_box_put_rec(buf + off,
				       (uint8_t)(ST_REC_STDOUT + rnd() % 4),
				       (uint32_t)rnd(), (uint32_t)rnd(), data,
				       len);
			off += ST_REC_HDR + len;
		}
		st_box_put_hdr(buf, rnd(), (uint32_t)(off - ST_BOX_HDR));
		return off;
	}
	default: {
		st_manifest_t m = sample_manifest();
		uint8_t *enc = NULL;
		size_t len = 0;

		m.ranks = 1 + (uint32_t)(rnd() % 5);
		m.argc = 1 + (uint32_t)(rnd() % 4);
		m.envc = (uint32_t)(rnd() % 3);
		m.nfiles = 1 + (uint32_t)(rnd() % 3);
		if (rnd() % 2)
			m.cwd = ""; /* not NULL: see the null_cwd test */
		assert_int_equal(st_manifest_encode(&m, &enc, &len), 0);
		assert_true(len <= cap);
		memcpy(buf, enc, len);
		free(enc);
		return len;
	}
	}
}

static const uint32_t interesting[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 12, 13, 24, 255, 1024, 1025, 4096, 4097,
	65535, 65536, 65537, 0x7fffffff, 0x80000000u, 0xfffffffe, 0xffffffff,
};

static size_t mutate(uint8_t *buf, size_t n, size_t cap)
{
	unsigned edits = 1 + (unsigned)(rnd() % 4);

	for (unsigned e = 0; e < edits; e++) {
		size_t at = n ? (size_t)(rnd() % n) : 0;

		switch (rnd() % 6) {
		case 0:
			if (n)
				buf[at] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1:
			if (n)
				buf[at] = (uint8_t)rnd();
			break;
		case 2: /* an interesting u32 */
			if (n >= 4) {
				at = (size_t)(rnd() % (n - 3));
				put_u32(buf + at, interesting[rnd() %
					(sizeof(interesting) /
					 sizeof(interesting[0]))]);
			}
			break;
		case 3: /* truncate */
			n = n ? (size_t)(rnd() % n) : 0;
			break;
		case 4: /* insert */
			if (n < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = (uint8_t)rnd();
				n++;
			}
			break;
		default: /* delete */
			if (n) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
			break;
		}
	}
	return n;
}

static int fuzz_hb(const uint8_t *p, size_t n)
{
	st_hb_t hb = { .njobs = 0 };
	int rc = decode_hb(p, n, &hb);

	if (rc == 0) {
		static uint8_t re[HB_LEN(HB_MAX)];

		FUZZ_CHECK(HB_LEN(hb.njobs) <= n);
		FUZZ_CHECK(hb.lo <= hb.hi);
		for (uint32_t i = 0; i < hb.njobs; i++)
			FUZZ_CHECK(hb_out[i].state == ST_HB_STAGING ||
				   hb_out[i].state == ST_HB_ACTIVE);
		/* canonical but for the pad: re-encodes to the bytes */
		FUZZ_CHECK(st_hb_encode(re, HB_LEN(hb.njobs), &hb) ==
			   (int)HB_LEN(hb.njobs));
		FUZZ_CHECK(memcmp(re, p, 26) == 0);
		FUZZ_CHECK(memcmp(re + ST_HB_HDR, p + ST_HB_HDR,
				  HB_LEN(hb.njobs) - ST_HB_HDR) == 0);
	} else {
		FUZZ_CHECK(rc == -STORM_EPROTO);
	}
	return rc == 0;
}

static void fuzz_chunk(const uint8_t *p, size_t n)
{
	uint32_t job, index, total, len, size;
	uint8_t *slot;
	int rc;

	if (n < ST_CHUNK_HDR)
		return; /* a slot is never shorter than its header */
	slot = exact_copy(p, ST_CHUNK_HDR);
	size = ST_CHUNK_HDR + (uint32_t)(rnd() % 300);
	rc = st_chunk_get_hdr(slot, size, &job, &index, &total, &len);
	if (rc == 0) {
		uint8_t re[ST_CHUNK_HDR];

		FUZZ_CHECK(index < total);
		FUZZ_CHECK(len <= size - ST_CHUNK_HDR);
		st_chunk_put_hdr(re, job, index, total, len);
		FUZZ_CHECK(memcmp(re, slot, 20) == 0);
	} else {
		FUZZ_CHECK(rc == -STORM_EPROTO);
	}
	free(slot);
}

static void fuzz_box(const uint8_t *p, size_t n)
{
	uint64_t seq;
	uint32_t nbytes;
	size_t boxlen = n, off = ST_BOX_HDR, prev = off;
	volatile uint8_t sink = 0;
	st_rec_t rec;
	int rc;

	rc = st_box_get_hdr(p, n, &seq, &nbytes);
	if (rc == 0) {
		FUZZ_CHECK(nbytes <= n - ST_BOX_HDR);
		boxlen = ST_BOX_HDR + nbytes;
	} else {
		FUZZ_CHECK(rc == -STORM_EPROTO);
	}
	/* iterate the header's body, or the whole buffer if it has none */
	for (int k = 0; (rc = st_box_next(p, boxlen, &off, &rec)) == 1; k++) {
		FUZZ_CHECK(k < FUZZ_MAX);
		FUZZ_CHECK(rec.type >= ST_REC_STDOUT &&
			   rec.type <= ST_REC_PMI);
		FUZZ_CHECK(rec.data == p + prev + ST_REC_HDR);
		FUZZ_CHECK(off == prev + ST_REC_HDR + rec.len);
		FUZZ_CHECK(off <= boxlen);
		for (uint32_t i = 0; i < rec.len; i++)
			sink ^= rec.data[i];
		prev = off;
	}
	FUZZ_CHECK(rc == 0 || rc == -STORM_EPROTO);
	(void)sink;
}

static int fuzz_manifest(const uint8_t *p, size_t n)
{
	st_manifest_t *m = NULL;
	size_t used = 0;
	int rc = st_manifest_decode(p, n, &used, &m);

	if (rc == 0) {
		uint8_t *re = NULL;
		size_t relen = 0;

		FUZZ_CHECK(m != NULL);
		FUZZ_CHECK(used >= 8 && used <= n);
		FUZZ_CHECK(m->ranks > 0 && m->argc > 0 && m->nfiles > 0);
		FUZZ_CHECK(m->argv[m->argc] == NULL);
		for (uint32_t i = 0; i < m->nfiles; i++) {
			const char *f = m->file_names[i];

			FUZZ_CHECK(f[0] && !strchr(f, '/') && strcmp(f, ".") &&
				   strcmp(f, ".."));
		}
		FUZZ_CHECK(st_manifest_encode(m, &re, &relen) == 0);
		FUZZ_CHECK(relen == used);
		free(re);
		st_manifest_free(m);
	} else {
		FUZZ_CHECK(rc == -EAGAIN || rc == -STORM_EPROTO);
		FUZZ_CHECK(m == NULL);
	}
	return rc == 0;
}

static void test_codecs_fuzz_decoders_never_crash(void **state)
{
	static const char *const magics[] = { "SHB1", "CHK", "SMF1" };
	static uint8_t buf[FUZZ_MAX + 64];
	unsigned hb_ok = 0, mf_ok = 0;

	(void)state;
	fuzz_seed = fuzz_seed_begin(0xc0dec5ULL);
	for (fuzz_round = 0; fuzz_round < FUZZ_ROUNDS; fuzz_round++) {
		size_t n;
		uint8_t *p;

		if (rnd() % 4 == 0) { /* random bytes */
			n = (size_t)(rnd() % 300);
			for (size_t i = 0; i < n; i++)
				buf[i] = (uint8_t)rnd();
			/* often behind a valid magic (and a manifest's
			 * declared length) so decoding gets past it */
			if (n >= 8 && rnd() % 2) {
				memcpy(buf, magics[rnd() % 3], 4);
				if (rnd() % 2)
					put_u32(buf + 4, (uint32_t)n);
			}
		} else { /* a valid encoding, mostly mutated */
			n = valid_sample(buf, sizeof(buf));
			if (rnd() % 8)
				n = mutate(buf, n, FUZZ_MAX);
		}
		p = exact_copy(buf, n);
		hb_ok += fuzz_hb(p, n);
		fuzz_chunk(p, n);
		fuzz_box(p, n);
		mf_ok += fuzz_manifest(p, n);
		free(p);
	}
	/* the valid share reached the decoders' success paths */
	assert_true(hb_ok > 0);
	assert_true(mf_ok > 0);
}

/* ---- rank 0's stdin chunks and acks (issue 17) ---------------------------- */

static void test_stdin_chunk_round_trips(void **state)
{
	uint8_t slot[ST_STDIN_HDR + 8];
	st_stdin_chunk_t c = { .job = 9, .seq = 1ull << 40, .flags =
			       ST_STDIN_EOF, .len = 8 }, d;

	(void)state;
	st_stdin_chunk_put(slot, &c);
	memcpy(slot + ST_STDIN_HDR, "abcdefgh", 8);
	assert_int_equal(st_stdin_chunk_get(slot, sizeof(slot), &d), 0);
	assert_int_equal(d.job, 9);
	assert_true(d.seq == 1ull << 40);
	assert_int_equal(d.flags, ST_STDIN_EOF);
	assert_int_equal(d.len, 8);
}

static void test_stdin_chunk_rejects_what_is_not_one(void **state)
{
	uint8_t slot[ST_STDIN_HDR + 8];
	st_stdin_chunk_t c = { .job = 9, .seq = 3, .len = 8 }, d;

	(void)state;
	/* longer than the slot */
	st_stdin_chunk_put(slot, &c);
	assert_int_equal(st_stdin_chunk_get(slot, sizeof(slot) - 1, &d),
			 -STORM_EPROTO);
	/* a short slot, seq 0, an unknown flag, padding, another magic */
	assert_int_equal(st_stdin_chunk_get(slot, ST_STDIN_HDR - 1, &d),
			 -STORM_EPROTO);
	c.seq = 0;
	st_stdin_chunk_put(slot, &c);
	assert_int_equal(st_stdin_chunk_get(slot, sizeof(slot), &d),
			 -STORM_EPROTO);
	c.seq = 3;
	c.flags = 2;
	st_stdin_chunk_put(slot, &c);
	assert_int_equal(st_stdin_chunk_get(slot, sizeof(slot), &d),
			 -STORM_EPROTO);
	c.flags = 0;
	st_stdin_chunk_put(slot, &c);
	slot[30] = 1;
	assert_int_equal(st_stdin_chunk_get(slot, sizeof(slot), &d),
			 -STORM_EPROTO);
	st_stdin_chunk_put(slot, &c);
	slot[0] ^= 1;
	assert_int_equal(st_stdin_chunk_get(slot, sizeof(slot), &d),
			 -STORM_EPROTO);
}

static void test_stdin_ack_round_trips_and_rejects_flags(void **state)
{
	uint8_t line[ST_STDIN_ACK_LEN];
	st_stdin_ack_t a = { .seq = 77, .job = 5, .flags = ST_STDIN_CLOSED },
		       b;

	(void)state;
	st_stdin_ack_put(line, &a);
	assert_int_equal(st_stdin_ack_get(line, &b), 0);
	assert_true(b.seq == 77 && b.job == 5 &&
		    b.flags == ST_STDIN_CLOSED);
	a.flags = 4;
	st_stdin_ack_put(line, &a);
	assert_int_equal(st_stdin_ack_get(line, &b), -STORM_EPROTO);
}

static void test_layout_stdin_after_everything(void **state)
{
	st_config_t cfg = { .nmanagers = 3, .nnodes = 4, .chunk_kib = 64,
			    .slots = 4, .output_kib = 64,
			    .ckpt_buddy_kib = 0 };
	st_host_t nodes[4] = { { .cpus = 2 }, { .cpus = 2 }, { .cpus = 2 },
			       { .cpus = 2 } };
	st_layout_t l;

	(void)state;
	cfg.nodes = nodes;
	st_layout(&cfg, &l);
	assert_int_equal(l.stdin_len, ST_STDIN_HDR + ST_STDIN_FRAME_MAX);
	assert_true(l.stdin >= l.buddy_want);
	assert_true(l.stdin_ack >= l.stdin + 3ull * l.stdin_len);
	assert_true(l.size >= l.stdin_ack + 64ull * 7);
	assert_int_equal(l.stdin % 8, 0);
	assert_int_equal(l.stdin_ack % 64, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hb_round_trips_0_1_1000_jobs_every_state),
		cmocka_unit_test(test_hb_encode_short_cap_is_enospc),
		cmocka_unit_test(test_hb_decode_rejects_wrong_magic),
		cmocka_unit_test(test_hb_decode_rejects_every_truncation),
		cmocka_unit_test(test_hb_decode_rejects_more_than_max_jobs),
		cmocka_unit_test(test_hb_decode_rejects_bad_state_byte),
		cmocka_unit_test(test_hb_stop_state_decodes_and_state_4_is_rejected),
		cmocka_unit_test(test_exit_record_round_trips),
		cmocka_unit_test(test_chunk_hdr_round_trips),
		cmocka_unit_test(test_chunk_hdr_rejects_index_not_below_total),
		cmocka_unit_test(test_chunk_hdr_rejects_len_past_slot),
		cmocka_unit_test(test_chunk_hdr_rejects_bad_magic),
		cmocka_unit_test(test_box_hdr_round_trips),
		cmocka_unit_test(test_box_hdr_rejects_nbytes_past_box),
		cmocka_unit_test(test_box_records_iterate_in_order),
		cmocka_unit_test(test_box_next_empty_box_has_no_records),
		cmocka_unit_test(test_box_next_rejects_record_past_end),
		cmocka_unit_test(test_rerun_record_round_trips),
		cmocka_unit_test(test_box_next_rejects_unknown_type),
		cmocka_unit_test(test_ckpt_record_round_trips),
		cmocka_unit_test(test_manifest_round_trips),
		cmocka_unit_test(test_manifest_round_trips_minimal),
		cmocka_unit_test(test_manifest_owner),
		cmocka_unit_test(test_manifest_alloc_and_step),
		cmocka_unit_test(test_manifest_batch_output),
		cmocka_unit_test(test_manifest_decode_prefix_is_eagain),
		cmocka_unit_test(test_manifest_decode_rejects_bad_file_names),
		cmocka_unit_test(test_manifest_decode_rejects_zero_files),
		cmocka_unit_test(test_manifest_decode_rejects_zero_ranks),
		cmocka_unit_test(test_manifest_decode_rejects_zero_argc),
		cmocka_unit_test(test_manifest_decode_rejects_nul_inside_strings),
		cmocka_unit_test(test_manifest_decode_rejects_trailing_garbage),
		cmocka_unit_test(test_manifest_decode_rejects_bad_header),
		cmocka_unit_test(test_manifest_free_null_is_fine),
		cmocka_unit_test(test_codecs_fuzz_decoders_never_crash),
		/* last: until hb.c is fixed, UBSan halts the run here */
		cmocka_unit_test(test_manifest_encode_null_cwd_is_empty),
		cmocka_unit_test(test_stdin_chunk_round_trips),
		cmocka_unit_test(test_stdin_chunk_rejects_what_is_not_one),
		cmocka_unit_test(test_stdin_ack_round_trips_and_rejects_flags),
		cmocka_unit_test(test_layout_stdin_after_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
