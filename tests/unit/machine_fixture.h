/*
 * machine_fixture.h — an in-process machine of N worlds for the protocol
 * unit tests (test_xfer.c, test_caw.c, test_membership.c).
 *
 * A test makes one with fx_new(), stores it in *state and lets the
 * cmocka teardown fx_teardown() close every world and destroy the machine,
 * so nothing leaks even when an assertion fails half-way.  Every helper
 * that waits is bounded by FX_WAIT_MS and fails the test on a timeout.
 * Helpers assert, so call them only from the test's own thread.
 */
#ifndef MACHINE_FIXTURE_H
#define MACHINE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "storm_primitives.h"

/* Upper bound on any single wait in a test (real time). */
#define FX_WAIT_MS 20000
/* Virtual time for a neighbour to notice a killed node: small. */
#define FX_DETECT_NS 50000u

struct fx_opts {
	uint32_t n;
	size_t gmem;      /* 0: 64 KiB */
	uint32_t nevents; /* 0: 16 */
	uint32_t fanout;  /* 0: 4 */
	size_t chunk;     /* 0: default */
	const sp_machine_params_t *params; /* NULL: defaults */
	const uint8_t *key; /* SP_AUTH_KEY_BYTES: an authenticated machine */
};

struct fx {
	sp_machine_t *m;
	struct fx_opts o;
	sp_world_t **w; /* NULL where closed */
	int *dead;      /* killed (or expelled) by the test */
	/* fx_settle()'s scratch sets: owned here, not by the call, so that
	 * an assertion failing inside it (a longjmp) leaks nothing */
	sp_nodeset_t *want, *live;
};

/* A machine of o->n nodes with every world open and the first view in. */
struct fx *fx_new(const struct fx_opts *o);
/* cmocka teardown: frees *state (a struct fx *), NULL accepted. */
int fx_teardown(void **state);
void fx_free(struct fx *f);

/* Open node id (join: as a rejoining member); returns sp_open()'s code. */
int fx_open(struct fx *f, uint32_t id, int join);
void fx_close(struct fx *f, uint32_t id);
/* fx_open with this key (NULL: none) and startup_ms (0: the default). */
int fx_open_key(struct fx *f, uint32_t id, int join, const uint8_t *key,
		uint32_t startup_ms);

/* A node set of this machine from a range list ("0-7,9"); caller frees. */
sp_nodeset_t *fx_set(const struct fx *f, const char *ranges);
/* The nodes not marked dead. */
sp_nodeset_t *fx_alive(const struct fx *f);

/* Kill with FX_DETECT_NS and mark dead. */
void fx_kill(struct fx *f, uint32_t id);
/* Wait until the machine has nothing to deliver (held messages aside). */
void fx_quiesce(struct fx *f);
/* This node's view epoch. */
uint64_t fx_epoch(struct fx *f, uint32_t id);
/* Wait until every open node not marked dead holds a stable view with
 * epoch >= min_epoch, then check they all agree on epoch, root and live
 * set, and that the live set is exactly the nodes not marked dead.
 * Returns the agreed epoch. */
uint64_t fx_settle(struct fx *f, uint64_t min_epoch);

/* Fill every node's global memory with a pattern of its own (node id and
 * offset), so a stray write anywhere shows. */
void fx_fill(struct fx *f);
/* Byte of fx_fill()'s pattern at node id, offset off. */
uint8_t fx_pattern(uint32_t id, size_t off);
/* Assert node id's global memory is exactly fx_fill()'s pattern. */
void fx_assert_pattern(struct fx *f, uint32_t id);
/* Assert no signal of ev is pending at node id (a killed node's closed
 * world counts as none). */
void fx_assert_no_event(struct fx *f, uint32_t id, sp_ev_t ev);

#endif /* MACHINE_FIXTURE_H */
