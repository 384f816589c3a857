/*
 * test_wire_fuzz.c — every protocol message a node receives is untrusted
 * input: the decoders must survive any bytes.  Random and mutated messages
 * of every type are delivered straight into one node of an in-process
 * machine (sp_engine_deliver, as a back-end would), then the machine is
 * closed; the sanitizer build turns any out-of-bounds read, overflow or
 * leak into a failure.  What the protocol then does with a well-formed
 * but forged message (a node is trusted by design) is not asserted, only
 * that nothing crashes, hangs or leaks.
 *
 * The generator is a fixed-seed xorshift, so a failure is reproducible.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "machine_fixture.h"
#include "sp_nodeset.h"
#include "sp_transport.h"
#include "sp_wire.h"

#define FUZZ_ROUNDS 20000
#define FUZZ_MAX_LEN 512

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A message with a valid header of a random type (known or not), from
 * src, at the node's epoch or a random one, and a body of
 * random length made of random bytes and small integers (lengths and
 * offsets near the boundaries are what a decoder gets wrong). */
static size_t forge(uint8_t *buf, uint64_t epoch, uint32_t src)
{
	size_t len = SP_HDR_LEN + next() % (FUZZ_MAX_LEN - SP_HDR_LEN);
	uint64_t ep = next() % 4 ? epoch : next();

	buf[0] = SP_WIRE_MAGIC & 0xff;
	buf[1] = SP_WIRE_MAGIC >> 8;
	buf[2] = next() % 16 ? SP_WIRE_VERSION : (uint8_t)next();
	buf[3] = (uint8_t)(next() % (SP_MSG_MAX + 2));
	for (int i = 0; i < 4; i++)
		buf[4 + i] = (uint8_t)(src >> (8 * i));
	for (int i = 0; i < 8; i++)
		buf[8 + i] = (uint8_t)(ep >> (8 * i));
	for (size_t i = SP_HDR_LEN; i < len; i++) {
		uint64_t r = next();

		buf[i] = r % 3 ? (uint8_t)(r >> 8) : (uint8_t)(r % 4);
	}
	return len;
}

static void test_random_messages_never_crash_a_node(void **state)
{
	struct fx_opts o = {.n = 8, .fanout = 2};
	struct fx *f = fx_new(&o);
	uint8_t buf[FUZZ_MAX_LEN];

	*state = f;
	for (int i = 0; i < FUZZ_ROUNDS; i++) {
		uint32_t to = (uint32_t)(next() % o.n);
		/* The back-end vouches for the sender: header and link agree
		 * (else the message is dropped before any decoder runs). */
		uint32_t from = (uint32_t)(next() % o.n);
		size_t len = forge(buf, fx_epoch(f, to), from);

		if (!f->w[to])
			continue;
		/* Truncations of the same message, down to nothing. */
		if (i % 8 == 0)
			len = next() % (len + 1);
		sp_engine_deliver(f->w[to], from, buf, len);
	}
	fx_quiesce(f);
}

static void test_pure_noise_is_dropped(void **state)
{
	struct fx_opts o = {.n = 4};
	struct fx *f = fx_new(&o);
	uint8_t buf[FUZZ_MAX_LEN];

	*state = f;
	for (int i = 0; i < FUZZ_ROUNDS; i++) {
		size_t len = next() % sizeof(buf);

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)next();
		sp_engine_deliver(f->w[1], 0, buf, len);
	}
	fx_quiesce(f);
	/* Noise has no valid magic: the machine is untouched and still
	 * answers. */
	fx_settle(f, 1);
}

/* XRMA asks for a remote read; the in-process back-end has none.  A
 * well-formed one (a forged or misrouted message) must be dropped, not
 * followed into a missing read op. */
static void test_xrma_without_remote_reads_is_dropped(void **state)
{
	struct fx_opts o = {.n = 4, .gmem = 1u << 20};
	struct fx *f = fx_new(&o);
	uint8_t buf[256];
	struct sp_wbuf b = {.p = buf, .cap = sizeof(buf)};
	sp_nodeset_t *all;

	*state = f;
	all = fx_set(f, "0-3");
	sp_w_u16(&b, SP_WIRE_MAGIC);
	sp_w_u8(&b, SP_WIRE_VERSION);
	sp_w_u8(&b, SP_MSG_XRMA);
	sp_w_u32(&b, 0);
	sp_w_u64(&b, fx_epoch(f, 1));
	sp_w_u64(&b, (uint64_t)0 << 32 | 77); /* xid */
	sp_w_u32(&b, 0);                        /* source */
	sp_w_u64(&b, 65536);                    /* len */
	sp_w_u64(&b, 0);                        /* gaddr */
	sp_w_u32(&b, 1);                        /* remote event */
	sp_w_u64(&b, 0);                        /* off */
	sp_w_u32(&b, 65536);                    /* clen */
	sp_w_u64(&b, 0);                        /* key */
	sp_w_u64(&b, 0);                        /* raddr */
	sp_w_u64(&b, all->words[0]);                /* the set */
	assert_false(b.overflow);
	sp_engine_deliver(f->w[1], 0, buf, b.len);
	fx_quiesce(f);
	fx_assert_no_event(f, 1, 1);
	sp_nodeset_destroy(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_random_messages_never_crash_a_node,
					  fx_teardown),
		cmocka_unit_test_teardown(test_pure_noise_is_dropped,
					  fx_teardown),
		cmocka_unit_test_teardown(
			test_xrma_without_remote_reads_is_dropped, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
