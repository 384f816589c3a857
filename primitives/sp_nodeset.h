/*
 * sp_nodeset.h — the bitmap behind sp_nodeset_t (private), so the engine
 * can put node sets on the wire and combine them word by word.
 */
#ifndef SP_NODESET_H
#define SP_NODESET_H

#include <stdint.h>

#include "storm_primitives.h"

struct sp_nodeset {
	uint32_t capacity;
	uint32_t nwords;
	uint64_t *words; /* bit i of words[i/64] = node i */
};

static inline uint32_t sp_nodeset_words(uint32_t capacity)
{
	return (capacity + 63) / 64;
}

#endif /* SP_NODESET_H */
