/*
 * bcs_ring.h — a BCS-MPI rank's post ring as the engine reads it: the
 * descriptors of an area the job's user can write at any moment, copied
 * out and checked before anything acts on them (docs/bcsmpi.md §3).
 * Pure: the engine hands it the mapped area; the fuzzing harness hands
 * it any bytes.
 */
#ifndef STORM_NM_BCS_RING_H
#define STORM_NM_BCS_RING_H

#include <stddef.h>
#include <stdint.h>

#include <storm_bcs.h>

#define BCS_BYTES_MAX (UINT64_C(1) << 40) /* one message, at most */

/* Copy up to max descriptors the rank posted since tail out of area
 * (its post_head read once, atomically), into out; *n gets how many.
 * 0, or -EPROTO with why filled: a head behind the tail or more than a
 * ring ahead of it (the area is corrupt). */
int bcs_ring_take(const struct bcs_area *area, uint64_t tail,
		  struct bcs_desc *out, uint32_t max, uint32_t *n, char *why,
		  size_t whylen);
/* Check one copied descriptor of a job of size ranks: kind, flags,
 * ranks, tags, sizes, collective fields.  0, or -EINVAL with why
 * naming the field. */
int bcs_desc_check(const struct bcs_desc *d, uint32_t size, char *why,
		   size_t whylen);

#endif
