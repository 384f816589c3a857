/*
 * machine_fixture.c — see machine_fixture.h.  Builds the in-process machine
 * exactly as a user would, through the public header only.
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

#include "machine_fixture.h"

int fx_open(struct fx *f, uint32_t id, int join)
{
	return fx_open_key(f, id, join, f->o.key, 0);
}

int fx_open_key(struct fx *f, uint32_t id, int join, const uint8_t *key,
		uint32_t startup_ms)
{
	sp_config_t *cfg = NULL;
	char err[256] = "";
	int rc;

	assert_int_equal(sp_config_create(&cfg), 0);
	assert_int_equal(sp_config_set_node(cfg, id, f->o.n), 0);
	assert_int_equal(sp_config_set_provider(cfg, "inproc"), 0);
	assert_int_equal(sp_config_set_machine(cfg, f->m), 0);
	assert_int_equal(sp_config_set_gmem(cfg, f->o.gmem, f->o.nevents), 0);
	assert_int_equal(sp_config_set_fanout(cfg, f->o.fanout), 0);
	if (f->o.chunk)
		assert_int_equal(sp_config_set_chunk(cfg, f->o.chunk), 0);
	if (join)
		assert_int_equal(sp_config_set_join(cfg, 1), 0);
	if (key)
		assert_int_equal(sp_config_set_auth_key(cfg, key,
							SP_AUTH_KEY_BYTES), 0);
	if (startup_ms)
		assert_int_equal(sp_config_set_liveness(cfg, 250, 1000,
							startup_ms), 0);
	rc = sp_open(cfg, &f->w[id], err, sizeof(err));
	sp_config_destroy(cfg);
	if (rc)
		print_error("sp_open(node %u): %s: %s\n", id, storm_strerror(rc),
			    err);
	else
		f->dead[id] = 0;
	return rc;
}

void fx_close(struct fx *f, uint32_t id)
{
	sp_close(f->w[id]);
	f->w[id] = NULL;
}

void fx_free(struct fx *f)
{
	if (!f)
		return;
	/* release anything a failed test left parked */
	for (uint32_t i = 0; f->m && i < f->o.n; i++)
		sp_machine_hold(f->m, i, 0);
	for (uint32_t i = 0; f->w && i < f->o.n; i++)
		sp_close(f->w[i]);
	sp_machine_destroy(f->m);
	sp_nodeset_destroy(f->want);
	sp_nodeset_destroy(f->live);
	free(f->w);
	free(f->dead);
	free(f);
}

int fx_teardown(void **state)
{
	fx_free(*state);
	*state = NULL;
	return 0;
}

struct fx *fx_new(const struct fx_opts *o)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->o = *o;
	if (!f->o.gmem)
		f->o.gmem = 64 * 1024;
	if (!f->o.nevents)
		f->o.nevents = 16;
	if (!f->o.fanout)
		f->o.fanout = 4;
	f->w = calloc(o->n, sizeof(*f->w));
	f->dead = calloc(o->n, sizeof(*f->dead));
	if (!f->w || !f->dead || sp_nodeset_create(o->n, &f->want) != 0 ||
	    sp_nodeset_create(o->n, &f->live) != 0 ||
	    sp_machine_create(o->n, o->params, &f->m) != 0) {
		fx_free(f);
		fail_msg("cannot create a machine of %u nodes", o->n);
	}
	for (uint32_t i = 0; i < o->n; i++) {
		if (fx_open(f, i, 0) != 0) {
			fx_free(f);
			fail_msg("cannot open node %u", i);
		}
	}
	return f;
}

sp_nodeset_t *fx_set(const struct fx *f, const char *ranges)
{
	sp_nodeset_t *s = NULL;
	char err[256] = "";

	assert_int_equal(sp_nodeset_create(f->o.n, &s), 0);
	if (sp_nodeset_parse(s, ranges, err, sizeof(err)) != 0) {
		sp_nodeset_destroy(s);
		fail_msg("%s", err);
	}
	return s;
}

sp_nodeset_t *fx_alive(const struct fx *f)
{
	sp_nodeset_t *s = NULL;

	assert_int_equal(sp_nodeset_create(f->o.n, &s), 0);
	for (uint32_t i = 0; i < f->o.n; i++)
		if (!f->dead[i] && f->w[i])
			assert_int_equal(sp_nodeset_add(s, i), 0);
	return s;
}

void fx_kill(struct fx *f, uint32_t id)
{
	assert_int_equal(sp_machine_kill(f->m, id, FX_DETECT_NS), 0);
	f->dead[id] = 1;
}

void fx_quiesce(struct fx *f)
{
	assert_int_equal(sp_machine_quiesce(f->m, FX_WAIT_MS), 0);
}

uint64_t fx_epoch(struct fx *f, uint32_t id)
{
	sp_view_info_t vi;

	assert_int_equal(sp_view(f->w[id], &vi, NULL), 0);
	return vi.epoch;
}

uint64_t fx_settle(struct fx *f, uint64_t min_epoch)
{
	sp_nodeset_t *want = f->want, *live = f->live;
	sp_view_info_t first = {0}, vi;
	int have = 0;

	sp_nodeset_clear(want);
	for (uint32_t i = 0; i < f->o.n; i++)
		if (!f->dead[i] && f->w[i])
			assert_int_equal(sp_nodeset_add(want, i), 0);
	for (int64_t x = sp_nodeset_next(want, 0); x >= 0;
	     x = sp_nodeset_next(want, (uint32_t)x + 1)) {
		int rc = sp_view_wait(f->w[x], min_epoch, FX_WAIT_MS);

		if (rc != 0)
			fail_msg("node %lld: sp_view_wait(epoch >= %#llx): %s",
				 (long long)x, (unsigned long long)min_epoch,
				 storm_strerror(rc));
	}
	/* waits done: let the last STABLE messages drain, then compare */
	fx_quiesce(f);
	for (int64_t x = sp_nodeset_next(want, 0); x >= 0;
	     x = sp_nodeset_next(want, (uint32_t)x + 1)) {
		assert_int_equal(sp_view(f->w[x], &vi, live), 0);
		assert_true(vi.stable);
		assert_int_equal(vi.nlive, sp_nodeset_count(want));
		for (uint32_t i = 0; i < f->o.n; i++)
			if (sp_nodeset_has(live, i) != sp_nodeset_has(want, i))
				fail_msg("node %lld: node %u is %s its view",
					 (long long)x, i,
					 sp_nodeset_has(live, i) ? "in" :
								   "missing from");
		if (!have) {
			first = vi;
			have = 1;
		}
		assert_int_equal(vi.epoch, first.epoch);
		assert_int_equal(vi.root, first.root);
	}
	assert_true(have);
	assert_true(first.epoch >= min_epoch);
	return first.epoch;
}

uint8_t fx_pattern(uint32_t id, size_t off)
{
	return (uint8_t)(0x80u ^ (id * 37u) ^ (uint32_t)(off * 13u) ^
			 (uint32_t)(off >> 8));
}

void fx_fill(struct fx *f)
{
	for (uint32_t i = 0; i < f->o.n; i++) {
		size_t size = 0;
		uint8_t *g;

		if (!f->w[i])
			continue;
		g = sp_gmem(f->w[i], &size);
		assert_int_equal(size, f->o.gmem);
		for (size_t off = 0; off < size; off++)
			g[off] = fx_pattern(i, off);
	}
}

void fx_assert_pattern(struct fx *f, uint32_t id)
{
	size_t size = 0;
	const uint8_t *g = sp_gmem(f->w[id], &size);

	for (size_t off = 0; off < size; off++)
		if (g[off] != fx_pattern(id, off))
			fail_msg("node %u: global memory changed at offset %zu",
				 id, off);
}

void fx_assert_no_event(struct fx *f, uint32_t id, sp_ev_t ev)
{
	int rc = sp_test_event(f->w[id], ev, 0);

	/* a killed node's world is closed: -STORM_ECLOSED comes only once
	 * every pending signal has been consumed, so it too means "none" */
	if (rc != -EAGAIN && !(f->dead[id] && rc == -STORM_ECLOSED))
		fail_msg("node %u: event %u unexpectedly signalled (%d: %s)", id,
			 ev, rc, storm_strerror(rc));
}
