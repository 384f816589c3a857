/*
 * mm_fixture.h — the Machine Manager's unit tests' machine and helpers
 * (test_mm_snapshot.c, test_mm_ckpt.c): a state machine of world 8 with
 * compute nodes 0 (2 cpus), 1 (4), 3 (4), 5 (8) and 7 (1) — matrix
 * columns n0 [0,2), n1 [4,8), n3 [8,12), n5 [16,24), n7 24; node 0 is a
 * compute node on purpose: a job placed only there has rank_node all 0,
 * like a job never placed — and ways to build, round-trip and compare
 * states through the public views only.  Helpers assert (cmocka).
 */
#ifndef STORM_TEST_MM_FIXTURE_H
#define STORM_TEST_MM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "storm_manager.h"

#define NNODES 5
extern const uint32_t node_ids[NNODES];
extern const char *const node_names[NNODES];
extern const uint32_t node_cpus[NNODES];

/* The machine, its nodes UP if up. */
mm_state_t *mkmachine(int up);
/* s's snapshot (free it). */
uint8_t *encode(const mm_state_t *s, size_t *len);
/* Bytes that must decode, into a state whose matrix is consistent. */
mm_state_t *decode(const uint8_t *buf, size_t len);
/* Two job inputs the same (digest, size, mode). */
void same_input(const mm_input_t *a, const mm_input_t *b);
/* a and b the same through every view (nodes, jobs, matrix, digest). */
void same_state(const mm_state_t *a, const mm_state_t *b);
/* s encoded, decoded, the same, and encoding to the same bytes: the copy. */
mm_state_t *round_trip(const mm_state_t *s);
/* Apply op, which must succeed: its result's job. */
uint32_t must(mm_state_t *s, mm_op_t op);
/* A job of ranks (on nodelist, or anywhere) submitted: its id. */
uint32_t submit(mm_state_t *s, uint32_t ranks, const char *nodelist);
/* A state with a DOWN node and jobs in every state (ids in brackets):
 * PENDING [8, 9], STAGING [1], RUNNING [7], COMPLETED [2], FAILED by a
 * rank [3], before placement [5] and after [6], CANCELLED [4]. */
mm_state_t *every_state(void);

#endif
