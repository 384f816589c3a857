/*
 * test_rp_codec.c — libstorm-replication's decoders of untrusted bytes:
 * the session table (sessions.c) and the OP codec (wire.c), round trips,
 * every truncation, and seeded fuzzing.  Run it under
 * -Db_sanitize=address,undefined: every decoder reads from a buffer of
 * exactly the message's size.
 */
#include "rp_test_util.h"

/* ---- sessions ----------------------------------------------------------------- */

static void assert_session(struct rp_sessions *t, uint64_t client,
			   uint64_t seq, uint64_t index, const void *reply,
			   size_t rlen)
{
	struct rp_session *s = rp_session_get(t, client);

	assert_non_null(s);
	assert_int_equal(s->client, client);
	assert_int_equal(s->seq, seq);
	assert_int_equal(s->index, index);
	assert_int_equal(s->rlen, rlen);
	if (rlen)
		assert_memory_equal(s->reply, reply, rlen);
}

static uint32_t sessions_walk(const struct rp_sessions *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->nb; i++)
		for (struct rp_session *s = t->b[i]; s; s = s->next) {
			assert_true(s->rlen <= RP_REPLY_MAX);
			n++;
		}
	return n;
}

static void test_sessions_put_get_overwrite(void **state)
{
	struct rp_sessions t;
	uint8_t big[RP_REPLY_MAX + 100];

	(void)state;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	assert_int_equal(rp_sessions_init(&t), 0);
	assert_null(rp_session_get(&t, 5));
	assert_int_equal(rp_session_put(&t, 5, 1, 10, (const uint8_t *)"ab",
					2), 0);
	assert_session(&t, 5, 1, 10, "ab", 2);
	/* the same client again: replaced in place, a longer reply */
	assert_int_equal(rp_session_put(&t, 5, 2, 11, big, 300), 0);
	assert_session(&t, 5, 2, 11, big, 300);
	assert_int_equal(t.n, 1);
	/* a shorter one, then none */
	assert_int_equal(rp_session_put(&t, 5, 3, 12, big + 1, 1), 0);
	assert_session(&t, 5, 3, 12, big + 1, 1);
	assert_int_equal(rp_session_put(&t, 5, 4, 13, NULL, 0), 0);
	assert_session(&t, 5, 4, 13, NULL, 0);
	/* a reply longer than RP_REPLY_MAX is kept truncated */
	assert_int_equal(rp_session_put(&t, 6, 1, 14, big, sizeof(big)), 0);
	assert_session(&t, 6, 1, 14, big, RP_REPLY_MAX);
	/* extreme ids are ordinary keys */
	assert_int_equal(rp_session_put(&t, 0, 9, 15, big, 3), 0);
	assert_int_equal(rp_session_put(&t, UINT64_MAX, 9, 16, big, 4), 0);
	assert_session(&t, 0, 9, 15, big, 3);
	assert_session(&t, UINT64_MAX, 9, 16, big, 4);
	assert_int_equal(t.n, 4);
	assert_int_equal(sessions_walk(&t), 4);
	assert_null(rp_session_get(&t, 7));
	rp_sessions_free(&t);
	assert_null(t.b);
	rp_sessions_free(&t); /* twice is harmless */
}

/* Client ids spread the way real ones are not: sequential, sparse, top
 * bits set. */
static uint64_t client_id(uint32_t i)
{
	switch (i % 3) {
	case 0: return i;
	case 1: return (uint64_t)i << 40 | 1;
	default: return UINT64_MAX - i;
	}
}

static void test_sessions_thousands_of_clients_rehash(void **state)
{
	struct rp_sessions t;
	const uint32_t n = 6000;
	uint8_t rep[16];

	(void)state;
	assert_int_equal(rp_sessions_init(&t), 0);
	uint32_t nb0 = t.nb;
	for (uint32_t i = 0; i < n; i++) {
		put_le64(rep, i);
		assert_int_equal(rp_session_put(&t, client_id(i), i + 1, i + 100,
						rep, i % 9), 0);
	}
	assert_int_equal(t.n, n);
	assert_true(t.nb > nb0); /* it grew */
	assert_true(t.n <= t.nb * 2);
	assert_int_equal(sessions_walk(&t), n);
	for (uint32_t i = 0; i < n; i++) {
		put_le64(rep, i);
		assert_session(&t, client_id(i), i + 1, i + 100, rep, i % 9);
	}
	/* overwrite every one after the rehash: still n of them */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(rp_session_put(&t, client_id(i), i + 2,
						i + 200, NULL, 0), 0);
	assert_int_equal(t.n, n);
	assert_int_equal(sessions_walk(&t), n);
	assert_session(&t, client_id(n - 1), n + 1, n - 1 + 200, NULL, 0);
	rp_sessions_free(&t);
}

static void test_sessions_expire_removes_exactly_the_older(void **state)
{
	struct rp_sessions t;
	const uint32_t n = 3000;

	(void)state;
	assert_int_equal(rp_sessions_init(&t), 0);
	for (uint32_t i = 0; i < n; i++) /* client i last used at index i+1 */
		assert_int_equal(rp_session_put(&t, client_id(i), 1, i + 1,
						NULL, 0), 0);
	rp_sessions_expire(&t, 0);
	rp_sessions_expire(&t, 1);
	assert_int_equal(t.n, n);
	rp_sessions_expire(&t, 1500); /* indexes 1..1499 go */
	assert_int_equal(t.n, n - 1499);
	assert_int_equal(sessions_walk(&t), n - 1499);
	for (uint32_t i = 0; i < n; i++) {
		struct rp_session *s = rp_session_get(&t, client_id(i));

		if (i + 1 < 1500)
			assert_null(s);
		else
			assert_non_null(s);
	}
	/* an expired client comes back as new */
	assert_int_equal(rp_session_put(&t, client_id(3), 1, 5000, NULL, 0), 0);
	assert_int_equal(t.n, n - 1498);
	rp_sessions_expire(&t, UINT64_MAX);
	assert_int_equal(t.n, 0);
	assert_int_equal(sessions_walk(&t), 0);
	rp_sessions_free(&t);
}

/* A table of n clients with replies of every length class. */
static void sessions_fill(struct rp_sessions *t, uint32_t n)
{
	uint8_t rep[RP_REPLY_MAX];

	for (size_t i = 0; i < sizeof(rep); i++)
		rep[i] = (uint8_t)(i * 13 + 1);
	assert_int_equal(rp_sessions_init(t), 0);
	for (uint32_t i = 0; i < n; i++) {
		size_t rlen = i % 17 == 0 ? RP_REPLY_MAX : (i * 7) % 40;

		rep[0] = (uint8_t)i;
		assert_int_equal(rp_session_put(t, client_id(i), i * 3 + 1,
						i + 7, rep, rlen), 0);
	}
}

static void assert_sessions_same(const struct rp_sessions *a,
				 struct rp_sessions *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(sessions_walk(b), b->n);
	for (uint32_t i = 0; i < a->nb; i++)
		for (struct rp_session *s = a->b[i]; s; s = s->next)
			assert_session(b, s->client, s->seq, s->index,
				       s->reply, s->rlen);
}

static void test_sessions_encode_decode_round_trip(void **state)
{
	struct rp_sessions a, b, e;
	struct rp_buf w = { 0 }, rd;

	(void)state;
	sessions_fill(&a, 3000);
	assert_int_equal(rp_sessions_encode(&a, &w), 0);
	uint8_t *img = dup_exact(w.p, w.len);
	rd = (struct rp_buf){ img, 0, w.len, 0 };
	assert_int_equal(rp_sessions_init(&b), 0);
	assert_int_equal(rp_sessions_decode(&b, &rd), 0);
	assert_int_equal(rd.len, w.len); /* read it all, no more */
	assert_sessions_same(&a, &b);
	assert_sessions_same(&b, &a);
	free(img);
	free(w.p);
	/* the empty table */
	assert_int_equal(rp_sessions_init(&e), 0);
	w = (struct rp_buf){ 0 };
	assert_int_equal(rp_sessions_encode(&e, &w), 0);
	assert_int_equal(w.len, 4);
	rp_sessions_free(&b);
	assert_int_equal(rp_sessions_init(&b), 0);
	rd = (struct rp_buf){ w.p, 0, w.len, 0 };
	assert_int_equal(rp_sessions_decode(&b, &rd), 0);
	assert_int_equal(b.n, 0);
	free(w.p);
	rp_sessions_free(&a);
	rp_sessions_free(&b);
	rp_sessions_free(&e);
}

static int sessions_decode_bytes(const uint8_t *p, size_t n)
{
	struct rp_sessions t;
	uint8_t *c = dup_exact(p, n);
	struct rp_buf rd = { c, 0, n, 0 };
	int rc;

	assert_int_equal(rp_sessions_init(&t), 0);
	rc = rp_sessions_decode(&t, &rd);
	assert_true(rc == 0 || rc == -STORM_EPROTO);
	assert_true(rd.len <= n);
	if (rc == 0) { /* whatever it took is a consistent table */
		assert_int_equal(sessions_walk(&t), t.n);
		for (uint32_t i = 0; i < t.nb; i++)
			for (struct rp_session *s = t.b[i]; s; s = s->next)
				assert_ptr_equal(rp_session_get(&t, s->client),
						 s);
	}
	rp_sessions_free(&t);
	free(c);
	return rc;
}

static void test_sessions_decode_refuses_truncation_and_corruption(
	void **state)
{
	struct rp_sessions a;
	struct rp_buf w = { 0 };

	(void)state;
	sessions_fill(&a, 24);
	assert_int_equal(rp_sessions_encode(&a, &w), 0);
	for (size_t cut = 0; cut < w.len; cut++)
		assert_int_equal(sessions_decode_bytes(w.p, cut), -STORM_EPROTO);
	assert_int_equal(sessions_decode_bytes(w.p, w.len), 0);

	/* a count one too high, and the highest */
	uint8_t *c = dup_exact(w.p, w.len);
	c[0]++;
	assert_int_equal(sessions_decode_bytes(c, w.len), -STORM_EPROTO);
	memset(c, 0xff, 4);
	assert_int_equal(sessions_decode_bytes(c, w.len), -STORM_EPROTO);
	free(c);

	/* the first entry's reply length beyond RP_REPLY_MAX (it is at
	 * offset 4 + 24), with and without the bytes to back it */
	c = dup_exact(w.p, w.len);
	uint32_t bad = RP_REPLY_MAX + 1;
	for (int i = 0; i < 4; i++)
		c[28 + i] = (uint8_t)(bad >> (8 * i));
	assert_int_equal(sessions_decode_bytes(c, w.len), -STORM_EPROTO);
	for (int i = 0; i < 4; i++)
		c[28 + i] = 0xff;
	assert_int_equal(sessions_decode_bytes(c, w.len), -STORM_EPROTO);
	free(c);
	free(w.p);
	rp_sessions_free(&a);
}

static void test_sessions_decode_survives_random_mutations(void **state)
{
	struct rp_sessions a;
	struct rp_buf w = { 0 };
	unsigned ok = 0, refused = 0;

	(void)state;
	fuzz_seed_begin(0x5e551045);
	sessions_fill(&a, 40);
	assert_int_equal(rp_sessions_encode(&a, &w), 0);
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = w.len;
		uint8_t *c = dup_exact(w.p, n);
		int k = 1 + (int)(rnd() % 6);

		while (k--) {
			size_t at = rnd() % n;

			/* half of the hits go to the count and the first
			 * entries' headers, where lengths live */
			if (rnd() % 2)
				at = rnd() % (n < 64 ? n : 64);
			c[at] = (uint8_t)rnd();
		}
		if (rnd() % 4 == 0)
			n = rnd() % (n + 1);
		if (sessions_decode_bytes(c, n) == 0)
			ok++;
		else
			refused++;
		free(c);
	}
	print_message("sessions fuzz: %u decoded, %u refused\n", ok, refused);
	assert_true(refused > 0);
	free(w.p);
	rp_sessions_free(&a);
}

/* ---- wire: the OP codec --------------------------------------------------------- */

static struct rp_op random_op(uint8_t *bytes, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		bytes[i] = (uint8_t)rnd();
	return (struct rp_op){
		.nodeid = (uint32_t)rnd(), .pid = (uint32_t)rnd(),
		.token = rnd(), .origin = (uint32_t)rnd(),
		.client = rnd(), .seq = rnd(),
		.uid = (uint32_t)rnd(), .gid = (uint32_t)rnd(),
		.op = len ? bytes : NULL, .len = len,
	};
}

/* Decode n bytes from an exact copy: -STORM_EPROTO, or an OP whose bytes
 * lie inside the message and account for all of it. */
static int op_decode_checked(const uint8_t *msg, size_t n, struct rp_op *out)
{
	uint8_t *c = dup_exact(msg, n);
	struct rp_op o;
	int rc = rp_op_decode(c, n, &o);

	if (rc == 0) {
		assert_true(o.len <= RP_OP_MAX);
		assert_int_equal(n, OP_HDR + (size_t)o.len);
		assert_true(o.op >= c && o.op + o.len <= c + n);
		assert_ptr_equal(o.op, c + OP_HDR);
		if (out) {
			*out = o;
			out->op = o.len ? msg + (o.op - c) : NULL;
		}
	} else {
		assert_int_equal(rc, -STORM_EPROTO);
	}
	free(c);
	return rc;
}

static void assert_op_same(const struct rp_op *a, const struct rp_op *b)
{
	assert_int_equal(a->nodeid, b->nodeid);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->token, b->token);
	assert_int_equal(a->origin, b->origin);
	assert_int_equal(a->client, b->client);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->uid, b->uid);
	assert_int_equal(a->gid, b->gid);
	assert_int_equal(a->len, b->len);
	if (a->len)
		assert_memory_equal(a->op, b->op, a->len);
}

static void test_op_round_trip_random_sizes(void **state)
{
	static uint8_t bytes[4096];
	struct rp_buf b;
	struct rp_op in, out;

	(void)state;
	fuzz_seed_begin(0x0b0b);
	for (int iter = 0; iter < 600; iter++) {
		uint32_t len = iter == 0 ? 0 : iter == 1 ? 4096 :
			       (uint32_t)(rnd() % 4097);

		in = random_op(bytes, len);
		assert_int_equal(rp_op_encode(&in, &b), 0);
		assert_int_equal(b.len, OP_HDR + len);
		assert_int_equal(b.p[0], 'S');
		assert_int_equal(b.p[1], 'R');
		assert_int_equal(b.p[2], RP_WIRE_VERSION);
		assert_int_equal(b.p[3], RP_MSG_OP);
		assert_int_equal(op_decode_checked(b.p, b.len, &out), 0);
		assert_op_same(&in, &out);
		free(b.p);
	}
}

static void test_op_of_rp_op_max_round_trips(void **state)
{
	uint8_t *bytes = malloc(RP_OP_MAX);
	struct rp_buf b;
	struct rp_op in, out;

	(void)state;
	assert_non_null(bytes);
	fuzz_seed_begin(0x3a3a);
	in = random_op(bytes, RP_OP_MAX);
	assert_int_equal(rp_op_encode(&in, &b), 0);
	assert_int_equal(op_decode_checked(b.p, b.len, &out), 0);
	assert_op_same(&in, &out);
	free(b.p);
	free(bytes);
}

static void test_op_decode_refuses_every_truncation(void **state)
{
	static const uint32_t sizes[] = { 0, 1, 100, 4096 };
	static uint8_t bytes[4096];
	struct rp_buf b;

	(void)state;
	fuzz_seed_begin(0x7c7c);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct rp_op in = random_op(bytes, sizes[s]);

		assert_int_equal(rp_op_encode(&in, &b), 0);
		for (size_t cut = 0; cut < b.len; cut++)
			assert_int_equal(op_decode_checked(b.p, cut, NULL),
					 -STORM_EPROTO);
		/* one byte more is refused too */
		uint8_t *x = malloc(b.len + 1);
		assert_non_null(x);
		memcpy(x, b.p, b.len);
		x[b.len] = 0;
		assert_int_equal(op_decode_checked(x, b.len + 1, NULL),
				 -STORM_EPROTO);
		free(x);
		free(b.p);
	}
	assert_int_equal(rp_op_decode(NULL, 0, &(struct rp_op){ 0 }),
			 -STORM_EPROTO);
}

static void test_op_decode_refuses_bad_magic_version_and_type(void **state)
{
	uint8_t bytes[32];
	struct rp_buf b;

	(void)state;
	fuzz_seed_begin(0x4d4d);
	struct rp_op in = random_op(bytes, sizeof(bytes));
	assert_int_equal(rp_op_encode(&in, &b), 0);
	for (int at = 0; at < 4; at++) {
		uint8_t keep = b.p[at];

		for (int v = 0; v < 256; v++) {
			if (v == keep)
				continue;
			b.p[at] = (uint8_t)v;
			assert_int_equal(op_decode_checked(b.p, b.len, NULL),
					 -STORM_EPROTO);
		}
		b.p[at] = keep;
	}
	assert_int_equal(op_decode_checked(b.p, b.len, NULL), 0);
	free(b.p);
}

static void test_op_decode_refuses_lengths_beyond_max_or_message(void **state)
{
	size_t n;
	uint8_t *m;

	(void)state;
	/* beyond RP_OP_MAX even though the bytes are all there */
	m = op_with_len(RP_OP_MAX + 1, RP_OP_MAX + 1, &n);
	assert_int_equal(op_decode_checked(m, n, NULL), -STORM_EPROTO);
	free(m);
	m = op_with_len(UINT32_MAX, 16, &n);
	assert_int_equal(op_decode_checked(m, n, NULL), -STORM_EPROTO);
	free(m);
	/* beyond the message by one, and by a lot */
	m = op_with_len(101, 100, &n);
	assert_int_equal(op_decode_checked(m, n, NULL), -STORM_EPROTO);
	free(m);
	m = op_with_len(RP_OP_MAX, 100, &n);
	assert_int_equal(op_decode_checked(m, n, NULL), -STORM_EPROTO);
	free(m);
	/* shorter than the message: trailing bytes */
	m = op_with_len(99, 100, &n);
	assert_int_equal(op_decode_checked(m, n, NULL), -STORM_EPROTO);
	free(m);
	/* and the same frame told the truth */
	m = op_with_len(100, 100, &n);
	assert_int_equal(op_decode_checked(m, n, NULL), 0);
	free(m);
}

static void test_reader_past_the_end_reads_zeros_and_stays_bad(void **state)
{
	static const uint8_t three[3] = { 1, 2, 3 };
	uint8_t *c = dup_exact(three, 3);
	struct rp_buf b = { c, 0, 3, 0 };

	(void)state;
	assert_int_equal(rpr_u8(&b), 1);
	assert_int_equal(rpr_u32(&b), 0);
	assert_true(b.bad);
	assert_int_equal(rpr_u8(&b), 0); /* even though a byte is left */
	assert_null(rpr_bytes(&b, 0));
	b = (struct rp_buf){ c, 1, 3, 0 };
	assert_null(rpr_bytes(&b, SIZE_MAX));
	assert_true(b.bad);
	b = (struct rp_buf){ c, 0, 3, 0 };
	assert_int_equal(rpr_u64(&b), 0);
	assert_true(b.bad);
	b = (struct rp_buf){ c, 0, 3, 0 };
	assert_int_equal(rpr_begin(&b, c, 3), -STORM_EPROTO);
	free(c);
}

static void test_op_decode_survives_random_mutations(void **state)
{
	static uint8_t bytes[4096];
	unsigned ok = 0, refused = 0;

	(void)state;
	fuzz_seed_begin(0xf00dfeed);
	for (int iter = 0; iter < 30000; iter++) {
		uint32_t len = rnd() % 8 == 0 ? (uint32_t)(rnd() % 4097) :
						(uint32_t)(rnd() % 200);
		struct rp_op in = random_op(bytes, len);
		struct rp_buf b;

		assert_int_equal(rp_op_encode(&in, &b), 0);
		size_t n = b.len;
		uint8_t *m = malloc(n + 16);
		assert_non_null(m);
		memcpy(m, b.p, n);
		free(b.p);
		int k = (int)(rnd() % 5);
		while (k--) {
			size_t at = rnd() % n;

			switch (rnd() % 3) {
			case 0: /* the header and the length field */
				at = rnd() % 4;
				if (rnd() % 2)
					at = 48 + rnd() % 4;
				break;
			default:
				break;
			}
			m[at] = (uint8_t)rnd();
		}
		switch (rnd() % 6) {
		case 0:
			n = rnd() % (n + 1);
			break;
		case 1:
			for (size_t e = 1 + rnd() % 16; e; e--)
				m[n++] = (uint8_t)rnd();
			break;
		default:
			break;
		}
		if (op_decode_checked(m, n, NULL) == 0)
			ok++;
		else
			refused++;
		free(m);
	}
	print_message("op fuzz: %u decoded, %u refused\n", ok, refused);
	assert_true(ok > 0 && refused > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sessions_put_get_overwrite),
		cmocka_unit_test(test_sessions_thousands_of_clients_rehash),
		cmocka_unit_test(test_sessions_expire_removes_exactly_the_older),
		cmocka_unit_test(test_sessions_encode_decode_round_trip),
		cmocka_unit_test(
			test_sessions_decode_refuses_truncation_and_corruption),
		cmocka_unit_test(test_sessions_decode_survives_random_mutations),
		cmocka_unit_test(test_op_round_trip_random_sizes),
		cmocka_unit_test(test_op_of_rp_op_max_round_trips),
		cmocka_unit_test(test_op_decode_refuses_every_truncation),
		cmocka_unit_test(test_op_decode_refuses_bad_magic_version_and_type),
		cmocka_unit_test(
			test_op_decode_refuses_lengths_beyond_max_or_message),
		cmocka_unit_test(
			test_reader_past_the_end_reads_zeros_and_stays_bad),
		cmocka_unit_test(test_op_decode_survives_random_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
