/*
 * test_frame.c — the client protocol's frames (proto/frame.c) against the
 * contract in storm_proto.h and docs/protocol.md: header parse/put, whole
 * frames over a socketpair even when the kernel takes or gives them a few
 * bytes at a time, EOF before a frame (-ECONNRESET) versus inside one
 * (-STORM_EPROTO), timeouts, the OUTPUT payload codec, and a seeded fuzz
 * loop: random and mutated headers and payloads go through the decoders,
 * which must answer 0 or -STORM_EPROTO and never read out of bounds (run
 * it under -Db_sanitize=address,undefined).  STORM_FUZZ_SEED=N replays.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fuzz_rng.h"

#include <storm_proto.h>

/* ---- helpers ------------------------------------------------------------ */

static void mkpair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		assert_true(w > 0);
		b += w;
		n -= (size_t)w;
	}
}

static void raw_hdr(uint8_t *h, const char *magic, int version, int type,
		    int reserved, uint32_t len)
{
	memcpy(h, magic, 4);
	h[4] = (uint8_t)version;
	h[5] = (uint8_t)type;
	h[6] = (uint8_t)(reserved >> 8);
	h[7] = (uint8_t)reserved;
	h[8] = (uint8_t)(len >> 24);
	h[9] = (uint8_t)(len >> 16);
	h[10] = (uint8_t)(len >> 8);
	h[11] = (uint8_t)len;
}

/* ---- header ------------------------------------------------------------- */

static void test_frame_hdr_put_then_parse_round_trips(void **state)
{
	uint8_t h[ST_FRAME_HDR];
	static const uint32_t lens[] = { 0, 1, 255, 256, 65536, ST_FRAME_MAX };
	int type;
	uint32_t len;

	(void)state;
	for (int t = ST_FRAME_REQUEST; t <= ST_FRAME_END; t++) {
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			st_frame_put_hdr(h, t, lens[i]);
			assert_memory_equal(h, "STRM", 4);
			assert_int_equal(h[4], ST_FRAME_VERSION);
			assert_int_equal(h[6] | h[7], 0);
			assert_int_equal(st_frame_parse_hdr(h, &type, &len), 0);
			assert_int_equal(type, t);
			assert_int_equal(len, lens[i]);
		}
	}
}

static void test_frame_hdr_length_is_big_endian(void **state)
{
	uint8_t h[ST_FRAME_HDR];

	(void)state;
	st_frame_put_hdr(h, ST_FRAME_REPLY, 0x00010203);
	assert_int_equal(h[8], 0x00);
	assert_int_equal(h[9], 0x01);
	assert_int_equal(h[10], 0x02);
	assert_int_equal(h[11], 0x03);
}

static void expect_bad_hdr(const uint8_t *h)
{
	int type = 77;
	uint32_t len = 77;

	assert_int_equal(st_frame_parse_hdr(h, &type, &len), -STORM_EPROTO);
	/* Nothing written on failure. */
	assert_int_equal(type, 77);
	assert_int_equal(len, 77);
}

static void test_frame_hdr_rejects_bad_magic_version_type_size(void **state)
{
	uint8_t h[ST_FRAME_HDR];

	(void)state;
	raw_hdr(h, "STRN", 1, 1, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "strm", 1, 1, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 0, 1, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 2, 1, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 0, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, ST_FRAME_STDIN + 1, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 255, 0, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 1, 1, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 1, 0x100, 0);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 1, 0, ST_FRAME_MAX + 1);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 1, 0, UINT32_MAX);
	expect_bad_hdr(h);
	raw_hdr(h, "STRM", 1, 1, 0, ST_FRAME_MAX);
	{
		int type;
		uint32_t len;

		assert_int_equal(st_frame_parse_hdr(h, &type, &len), 0);
	}
}

static void test_frame_hdr_rejects_null_arguments(void **state)
{
	uint8_t h[ST_FRAME_HDR];
	int type;
	uint32_t len;

	(void)state;
	st_frame_put_hdr(h, 1, 0);
	assert_int_equal(st_frame_parse_hdr(NULL, &type, &len), -EINVAL);
	assert_int_equal(st_frame_parse_hdr(h, NULL, &len), -EINVAL);
	assert_int_equal(st_frame_parse_hdr(h, &type, NULL), -EINVAL);
}

/* ---- send / recv -------------------------------------------------------- */

static void test_frame_send_recv_each_type_nul_terminated(void **state)
{
	int sv[2];
	static const char *json =
		"{\"op\":\"status\",\"client\":\"h:1:ab\",\"seq\":1}";

	(void)state;
	mkpair(sv);
	for (int t = ST_FRAME_REQUEST; t <= ST_FRAME_END; t++) {
		int type;
		uint8_t *p = NULL;
		uint32_t len;

		assert_int_equal(st_frame_send(sv[0], t, json,
					       (uint32_t)strlen(json)), 0);
		assert_int_equal(st_frame_recv(sv[1], 1000, &type, &p, &len),
				 0);
		assert_int_equal(type, t);
		assert_int_equal(len, strlen(json));
		assert_string_equal((char *)p, json);
		free(p);
	}
	close(sv[0]);
	close(sv[1]);
}

static void test_frame_send_recv_empty_payload(void **state)
{
	int sv[2], type;
	uint8_t *p = NULL;
	uint32_t len = 99;

	(void)state;
	mkpair(sv);
	assert_int_equal(st_frame_send(sv[0], ST_FRAME_END, NULL, 0), 0);
	assert_int_equal(st_frame_recv(sv[1], 1000, &type, &p, &len), 0);
	assert_int_equal(type, ST_FRAME_END);
	assert_int_equal(len, 0);
	assert_non_null(p);
	assert_int_equal(p[0], 0);
	free(p);
	close(sv[0]);
	close(sv[1]);
}

static void test_frame_send_rejects_bad_arguments(void **state)
{
	int sv[2];

	(void)state;
	mkpair(sv);
	assert_int_equal(st_frame_send(-1, 1, "x", 1), -EINVAL);
	assert_int_equal(st_frame_send(sv[0], 0, "x", 1), -EINVAL);
	assert_int_equal(st_frame_send(sv[0], ST_FRAME_STDIN + 1, "x", 1),
			 -EINVAL);
	assert_int_equal(st_frame_send(sv[0], 1, NULL, 1), -EINVAL);
	assert_int_equal(st_frame_send(sv[0], 1, "x", ST_FRAME_MAX + 1),
			 -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
}

struct reader {
	int fd;
	size_t chunk; /* read this many bytes at a time */
	uint8_t *buf;
	size_t len;
};

static void *slow_reader(void *arg)
{
	struct reader *r = arg;
	size_t got = 0;

	while (got < r->len) {
		size_t want = r->len - got < r->chunk ? r->len - got : r->chunk;
		ssize_t n = read(r->fd, r->buf + got, want);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	r->len = got;
	return NULL;
}

/* A payload far bigger than the socket buffer, sent through a non-blocking
 * socket: sendmsg() takes it in pieces and returns EAGAIN in between; the
 * bytes on the wire must still be exactly one frame. */
static void test_frame_send_survives_partial_writes(void **state)
{
	const uint32_t n = 3u << 20;
	uint8_t *payload = malloc(n);
	struct reader r;
	pthread_t th;
	int sv[2], sz = 4096, type;
	uint32_t len;

	(void)state;
	assert_non_null(payload);
	for (uint32_t i = 0; i < n; i++)
		payload[i] = (uint8_t)(i * 7 + (i >> 13));
	mkpair(sv);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz,
				    sizeof(sz)), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz,
				    sizeof(sz)), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL,
			       fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
	r.fd = sv[1];
	r.chunk = 1000;
	r.len = ST_FRAME_HDR + n;
	r.buf = malloc(r.len);
	assert_non_null(r.buf);
	assert_int_equal(pthread_create(&th, NULL, slow_reader, &r), 0);
	assert_int_equal(st_frame_send(sv[0], ST_FRAME_OUTPUT, payload, n), 0);
	pthread_join(th, NULL);
	assert_int_equal(r.len, ST_FRAME_HDR + n);
	assert_int_equal(st_frame_parse_hdr(r.buf, &type, &len), 0);
	assert_int_equal(type, ST_FRAME_OUTPUT);
	assert_int_equal(len, n);
	assert_memory_equal(r.buf + ST_FRAME_HDR, payload, n);
	free(r.buf);
	free(payload);
	close(sv[0]);
	close(sv[1]);
}

struct trickle {
	int fd;
	const uint8_t *buf;
	size_t len;
	size_t step;
	int close_after; /* shut down the write side when done */
};

static void *trickle_writer(void *arg)
{
	struct trickle *t = arg;
	struct timespec ts = { 0, 200 * 1000 };

	for (size_t off = 0; off < t->len; off += t->step) {
		size_t n = t->len - off < t->step ? t->len - off : t->step;

		write_all(t->fd, t->buf + off, n);
		/* the pause is what is under test: the reader must see the
		 * frame arrive in separate pieces, not synchronisation */
		nanosleep(&ts, NULL);
	}
	if (t->close_after)
		shutdown(t->fd, SHUT_WR);
	return NULL;
}

/* The reader sees the header and payload dribble in a few bytes at a time
 * and must still return one whole frame. */
static void test_frame_recv_assembles_partial_reads(void **state)
{
	const char *msg = "{\"ok\":true,\"job\":42}";
	uint8_t wire[ST_FRAME_HDR + 64];
	size_t mlen = strlen(msg);
	struct trickle t;
	pthread_t th;
	int sv[2], type;
	uint8_t *p;
	uint32_t len;

	(void)state;
	st_frame_put_hdr(wire, ST_FRAME_REPLY, (uint32_t)mlen);
	memcpy(wire + ST_FRAME_HDR, msg, mlen);
	mkpair(sv);
	t = (struct trickle){ sv[0], wire, ST_FRAME_HDR + mlen, 3, 0 };
	assert_int_equal(pthread_create(&th, NULL, trickle_writer, &t), 0);
	assert_int_equal(st_frame_recv(sv[1], 5000, &type, &p, &len), 0);
	pthread_join(th, NULL);
	assert_int_equal(type, ST_FRAME_REPLY);
	assert_int_equal(len, mlen);
	assert_string_equal((char *)p, msg);
	free(p);
	close(sv[0]);
	close(sv[1]);
}

static void test_frame_recv_clean_eof_is_connreset(void **state)
{
	int sv[2], type = 5;
	uint8_t *p = (uint8_t *)&type;
	uint32_t len = 5;

	(void)state;
	mkpair(sv);
	close(sv[0]);
	assert_int_equal(st_frame_recv(sv[1], 1000, &type, &p, &len),
			 -ECONNRESET);
	assert_int_equal(type, 5);
	assert_ptr_equal(p, (uint8_t *)&type);
	assert_int_equal(len, 5);
	close(sv[1]);
}

static void test_frame_recv_eof_mid_header_is_eproto(void **state)
{
	uint8_t h[ST_FRAME_HDR];
	int sv[2], type;
	uint8_t *p;
	uint32_t len;

	(void)state;
	st_frame_put_hdr(h, ST_FRAME_REPLY, 10);
	mkpair(sv);
	write_all(sv[0], h, 5);
	close(sv[0]);
	assert_int_equal(st_frame_recv(sv[1], 1000, &type, &p, &len),
			 -STORM_EPROTO);
	close(sv[1]);
}

static void test_frame_recv_eof_mid_payload_is_eproto(void **state)
{
	uint8_t h[ST_FRAME_HDR];
	int sv[2], type;
	uint8_t *p;
	uint32_t len;

	(void)state;
	st_frame_put_hdr(h, ST_FRAME_REPLY, 10);
	mkpair(sv);
	write_all(sv[0], h, sizeof(h));
	write_all(sv[0], "{\"ok\"", 5);
	close(sv[0]);
	assert_int_equal(st_frame_recv(sv[1], 1000, &type, &p, &len),
			 -STORM_EPROTO);
	close(sv[1]);
}

static void test_frame_recv_rejects_bad_header_on_wire(void **state)
{
	static const struct {
		const char *magic;
		int version, type;
		uint32_t len;
	} bad[] = {
		{ "XTRM", 1, 1, 2 },
		{ "STRM", 9, 1, 2 },
		{ "STRM", 1, 9, 2 },
		{ "STRM", 1, 1, ST_FRAME_MAX + 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t h[ST_FRAME_HDR];
		int sv[2], type;
		uint8_t *p;
		uint32_t len;

		raw_hdr(h, bad[i].magic, bad[i].version, bad[i].type, 0,
			bad[i].len);
		mkpair(sv);
		write_all(sv[0], h, sizeof(h));
		write_all(sv[0], "{}", 2);
		assert_int_equal(st_frame_recv(sv[1], 1000, &type, &p, &len),
				 -STORM_EPROTO);
		close(sv[0]);
		close(sv[1]);
	}
}

static void test_frame_recv_times_out(void **state)
{
	int sv[2], type = 3;
	uint8_t *p = NULL;
	uint32_t len = 3;
	struct timespec a, b;
	long ms;

	(void)state;
	mkpair(sv);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(st_frame_recv(sv[1], 50, &type, &p, &len),
			 -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms >= 45);
	assert_true(ms < 2000);
	assert_null(p);
	assert_int_equal(type, 3);
	assert_int_equal(len, 3);
	/* A header that stops short also times out rather than hanging. */
	write_all(sv[0], "STRM", 4);
	assert_int_equal(st_frame_recv(sv[1], 20, &type, &p, &len),
			 -ETIMEDOUT);
	assert_int_equal(st_frame_recv(sv[1], 0, &type, &p, &len),
			 -ETIMEDOUT);
	close(sv[0]);
	close(sv[1]);
}

static void test_frame_send_to_closed_peer_fails_without_sigpipe(void **state)
{
	int sv[2], rc = 0;

	(void)state;
	mkpair(sv);
	close(sv[1]);
	/* Without MSG_NOSIGNAL this would kill the test with SIGPIPE. */
	for (int i = 0; i < 4 && rc == 0; i++)
		rc = st_frame_send(sv[0], ST_FRAME_REPLY, "{}", 2);
	assert_true(rc == -ECONNRESET || rc == -EPIPE);
	close(sv[0]);
}

/* ---- output payload ----------------------------------------------------- */

static void test_output_encode_decode_round_trips(void **state)
{
	uint8_t buf[64];
	uint32_t job, rank;
	int stream;
	const uint8_t *data;
	size_t dlen;
	int n;

	(void)state;
	n = st_output_encode(buf, sizeof(buf), 0xdeadbeef, 7, 2, "hello\n", 6);
	assert_int_equal(n, 9 + 6);
	/* Big endian on the wire, stream after the two ids. */
	assert_int_equal(buf[0], 0xde);
	assert_int_equal(buf[3], 0xef);
	assert_int_equal(buf[7], 7);
	assert_int_equal(buf[8], 2);
	assert_int_equal(st_output_decode(buf, (size_t)n, &job, &rank, &stream,
					  &data, &dlen), 0);
	assert_int_equal(job, 0xdeadbeef);
	assert_int_equal(rank, 7);
	assert_int_equal(stream, 2);
	assert_int_equal(dlen, 6);
	assert_memory_equal(data, "hello\n", 6);
	assert_ptr_equal(data, buf + 9);

	n = st_output_encode(buf, 9, 1, 0, 1, NULL, 0);
	assert_int_equal(n, 9);
	assert_int_equal(st_output_decode(buf, 9, &job, &rank, &stream, &data,
					  &dlen), 0);
	assert_int_equal(dlen, 0);
	assert_int_equal(stream, 1);
}

static void test_output_encode_checks_space_and_stream(void **state)
{
	uint8_t buf[16];

	(void)state;
	assert_int_equal(st_output_encode(buf, 14, 1, 1, 1, "hello\n", 6),
			 -ENOSPC);
	assert_int_equal(st_output_encode(buf, 8, 1, 1, 1, NULL, 0), -ENOSPC);
	assert_int_equal(st_output_encode(buf, sizeof(buf), 1, 1, 0, "x", 1),
			 -EINVAL);
	assert_int_equal(st_output_encode(buf, sizeof(buf), 1, 1, 3, "x", 1),
			 -EINVAL);
	assert_int_equal(st_output_encode(buf, sizeof(buf), 1, 1, 1, NULL, 1),
			 -EINVAL);
	assert_int_equal(st_output_encode(buf, SIZE_MAX, 1, 1, 1, "x",
					  ST_FRAME_MAX), -ENOSPC);
}

static void test_output_decode_rejects_short_and_bad_stream(void **state)
{
	uint8_t buf[16] = { 0 };
	uint32_t job = 1, rank = 1;
	int stream = 1;
	const uint8_t *data = NULL;
	size_t dlen = 1;

	(void)state;
	for (size_t n = 0; n < 9; n++)
		assert_int_equal(st_output_decode(buf, n, &job, &rank, &stream,
						  &data, &dlen), -STORM_EPROTO);
	buf[8] = 0;
	assert_int_equal(st_output_decode(buf, 9, &job, &rank, &stream, &data,
					  &dlen), -STORM_EPROTO);
	buf[8] = 3;
	assert_int_equal(st_output_decode(buf, 12, &job, &rank, &stream, &data,
					  &dlen), -STORM_EPROTO);
	assert_null(data);
	assert_int_equal(dlen, 1);
}

/* ---- fuzz --------------------------------------------------------------- */

#define FUZZ_ROUNDS 20000

static void fuzz_hdr(uint8_t *h)
{
	uint64_t how = rnd() % 4;

	if (how == 0) { /* pure noise */
		for (int i = 0; i < ST_FRAME_HDR; i++)
			h[i] = (uint8_t)rnd();
		return;
	}
	/* A valid header with one to three bytes or bits changed. */
	st_frame_put_hdr(h, (int)(1 + rnd() % 4), (uint32_t)rnd() % 4096);
	for (uint64_t k = 0, m = 1 + rnd() % 3; k < m; k++) {
		size_t at = rnd() % ST_FRAME_HDR;

		if (how == 1)
			h[at] ^= (uint8_t)(1u << (rnd() % 8));
		else if (how == 2)
			h[at] = (uint8_t)rnd();
		else
			h[at] = (uint8_t)(at >= 8 ? 0xff : rnd() % 6);
	}
}

static void test_frame_fuzz_decoders_never_crash(void **state)
{
	unsigned ok = 0, bad = 0, wire = 0;

	(void)state;
	fuzz_seed_begin(0x5eed5707ULL);
	for (int round = 0; round < FUZZ_ROUNDS; round++) {
		uint8_t h[ST_FRAME_HDR], h2[ST_FRAME_HDR];
		int type = -1, rc;
		uint32_t len = 0;

		fuzz_hdr(h);
		rc = st_frame_parse_hdr(h, &type, &len);
		if (rc == 0) {
			/* Accepted means well-formed: put_hdr agrees. */
			assert_true(type >= ST_FRAME_REQUEST &&
				    type <= ST_FRAME_STDIN);
			assert_true(len <= ST_FRAME_MAX);
			st_frame_put_hdr(h2, type, len);
			assert_memory_equal(h, h2, ST_FRAME_HDR);
			ok++;
		} else {
			assert_int_equal(rc, -STORM_EPROTO);
			bad++;
		}

		/* An output payload of random length, exactly sized on the
		 * heap so ASan sees any read past it. */
		{
			size_t n = rnd() % 40;
			uint8_t *p = malloc(n ? n : 1);
			uint32_t job, rank;
			int stream;
			const uint8_t *data;
			size_t dlen;
			volatile uint8_t sink = 0;

			assert_non_null(p);
			for (size_t i = 0; i < n; i++)
				p[i] = (uint8_t)rnd();
			if (n > 8 && rnd() % 2)
				p[8] = (uint8_t)(1 + rnd() % 2);
			rc = st_output_decode(p, n, &job, &rank, &stream, &data,
					      &dlen);
			if (rc == 0) {
				assert_true(stream == 1 || stream == 2);
				assert_true(data == p + 9);
				assert_int_equal(dlen, n - 9);
				for (size_t i = 0; i < dlen; i++)
					sink ^= data[i];
			} else {
				assert_int_equal(rc, -STORM_EPROTO);
			}
			(void)sink;
			free(p);
		}

		/* One round in ten goes over a real socket, truncated at a
		 * random point: st_frame_recv must return a whole frame or
		 * an error, never hang or overrun. */
		if (round % 10 == 0) {
			uint8_t body[64];
			size_t cut = rnd() % (ST_FRAME_HDR + sizeof(body) + 1);
			int sv[2];
			uint8_t *p = NULL;

			for (size_t i = 0; i < sizeof(body); i++)
				body[i] = (uint8_t)rnd();
			if (rnd() % 2) /* sometimes a frame that fits */
				st_frame_put_hdr(
					h, (int)(1 + rnd() % 4),
					(uint32_t)(rnd() % sizeof(body)));
			mkpair(sv);
			if (cut <= ST_FRAME_HDR) {
				write_all(sv[0], h, cut);
			} else {
				write_all(sv[0], h, ST_FRAME_HDR);
				write_all(sv[0], body, cut - ST_FRAME_HDR);
			}
			shutdown(sv[0], SHUT_WR);
			rc = st_frame_recv(sv[1], 1000, &type, &p, &len);
			if (rc == 0) {
				assert_non_null(p);
				assert_int_equal(p[len], 0);
				free(p);
				wire++;
			} else {
				assert_true(rc == -STORM_EPROTO ||
					    rc == -ECONNRESET);
			}
			close(sv[0]);
			close(sv[1]);
		}
	}
	/* The mutator must exercise both sides of the decoder. */
	assert_true(ok > 100);
	assert_true(bad > 100);
	(void)wire;
}

/* ---- sealed requests (docs/protocol.md §2.6) ------------------------- */

static const char seal_body[] = "{\"op\":\"show\",\"job\":1}";

static void test_seal_round_trips_and_binds_the_body(void **state)
{
	uint8_t nonce[ST_SEAL_NONCE_BYTES] = { 1, 2, 3 }, d[ST_SHA256_BYTES];
	char payload[ST_SEAL_PAYLOAD_LEN + 1], err[256];
	const char *cred;
	const uint8_t *body;
	size_t clen, blen;
	uint8_t *p = NULL;
	uint32_t len;

	(void)state;
	assert_int_equal(st_seal_encode("MUNGE:abc:", seal_body,
					strlen(seal_body), &p, &len), 0);
	assert_int_equal(len, ST_SEAL_HDR + 10 + strlen(seal_body));
	assert_int_equal(st_seal_decode(p, len, &cred, &clen, &body, &blen,
					err, sizeof(err)), 0);
	assert_int_equal(clen, 10);
	assert_memory_equal(cred, "MUNGE:abc:", 10);
	assert_int_equal(blen, strlen(seal_body));
	assert_memory_equal(body, seal_body, blen);
	free(p);

	assert_int_equal(st_seal_payload(seal_body, strlen(seal_body), nonce,
					 payload), 0);
	assert_int_equal(strlen(payload), ST_SEAL_PAYLOAD_LEN);
	assert_int_equal(strncmp(payload, "storm-seal-1 sha256=", 20), 0);
	assert_int_equal(st_sha256(seal_body, strlen(seal_body), d), 0);
	assert_int_equal(st_seal_check(payload, strlen(payload), d, err,
				       sizeof(err)), 0);
	/* the body altered by one byte: another digest, refused */
	assert_int_equal(st_sha256("{\"op\":\"show\",\"job\":2}",
				   strlen(seal_body), d), 0);
	assert_int_equal(st_seal_check(payload, strlen(payload), d, err,
				       sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "binds another request body"));
	/* an older client's payload, "CLIENT:SEQ" */
	assert_int_equal(st_seal_check("host:1:ab:1", 11, d, err,
				       sizeof(err)), -STORM_EPROTO);
	assert_non_null(strstr(err, "older stormctl"));
	/* uppercase hex is not the one spelling */
	payload[20] = payload[20] >= 'a' ? (char)(payload[20] - 32) : 'G';
	assert_int_equal(st_seal_check(payload, strlen(payload), d, err,
				       sizeof(err)), -STORM_EPROTO);
}

static void test_seal_decode_refuses_bad_payloads(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *why;
	} bad[] = {
		{ "\1\1\0", 3, "fewer than its 4-byte header" },
		{ "\2\1\0\1xB", 6, "version 2" },
		{ "\1\2\0\1xB", 6, "scheme 2" },
		{ "\1\1\0\0B", 5, "a credential of 0 bytes" },
		{ "\1\1\x10\1xB", 6, "a credential of 4097 bytes" },
		{ "\1\1\0\5xB", 6, "only 2 follow" },
		{ "\1\1\0\2x B", 7, "not printable" },
		{ "\1\1\0\2xy", 6, "no body" },
	};
	const char *cred = (const char *)1;
	const uint8_t *body = (const uint8_t *)1;
	size_t clen = 7, blen = 7;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(st_seal_decode((const uint8_t *)bad[i].bytes,
						bad[i].len, &cred, &clen,
						&body, &blen, err,
						sizeof(err)), -STORM_EPROTO);
		if (!strstr(err, bad[i].why))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err,
				 bad[i].why);
		/* nothing written on failure */
		assert_ptr_equal(cred, (const char *)1);
		assert_ptr_equal(body, (const uint8_t *)1);
		assert_int_equal(clen, 7);
		assert_int_equal(blen, 7);
	}
	assert_int_equal(st_seal_decode(NULL, 0, &cred, &clen, &body, &blen,
					err, sizeof(err)), -STORM_EPROTO);
	/* encode refuses what decode would */
	{
		uint8_t *p = NULL;
		uint32_t len;

		assert_int_equal(st_seal_encode("", "x", 1, &p, &len), -EINVAL);
		assert_int_equal(st_seal_encode("a b", "x", 1, &p, &len),
				 -EINVAL);
		assert_null(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seal_round_trips_and_binds_the_body),
		cmocka_unit_test(test_seal_decode_refuses_bad_payloads),
		cmocka_unit_test(test_frame_hdr_put_then_parse_round_trips),
		cmocka_unit_test(test_frame_hdr_length_is_big_endian),
		cmocka_unit_test(test_frame_hdr_rejects_bad_magic_version_type_size),
		cmocka_unit_test(test_frame_hdr_rejects_null_arguments),
		cmocka_unit_test(test_frame_send_recv_each_type_nul_terminated),
		cmocka_unit_test(test_frame_send_recv_empty_payload),
		cmocka_unit_test(test_frame_send_rejects_bad_arguments),
		cmocka_unit_test(test_frame_send_survives_partial_writes),
		cmocka_unit_test(test_frame_recv_assembles_partial_reads),
		cmocka_unit_test(test_frame_recv_clean_eof_is_connreset),
		cmocka_unit_test(test_frame_recv_eof_mid_header_is_eproto),
		cmocka_unit_test(test_frame_recv_eof_mid_payload_is_eproto),
		cmocka_unit_test(test_frame_recv_rejects_bad_header_on_wire),
		cmocka_unit_test(test_frame_recv_times_out),
		cmocka_unit_test(test_frame_send_to_closed_peer_fails_without_sigpipe),
		cmocka_unit_test(test_output_encode_decode_round_trips),
		cmocka_unit_test(test_output_encode_checks_space_and_stream),
		cmocka_unit_test(test_output_decode_rejects_short_and_bad_stream),
		cmocka_unit_test(test_frame_fuzz_decoders_never_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
