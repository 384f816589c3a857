/*
 * fuzz_rng.h — random numbers for the fuzz tests: xorshift64*, cheap and
 * reproducible from a seed.  STORM_FUZZ_SEED=N overrides a test's default
 * seed, which is printed so that a failure can be replayed.  Header-only:
 * one generator per test program.
 */
#ifndef STORM_FUZZ_RNG_H
#define STORM_FUZZ_RNG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_state = 1;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Seed the generator: STORM_FUZZ_SEED if set, else dflt.  Returns it. */
static inline uint64_t fuzz_seed_begin(uint64_t dflt)
{
	const char *env = getenv("STORM_FUZZ_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : dflt;

	printf("fuzz seed %#llx (STORM_FUZZ_SEED replays)\n",
	       (unsigned long long)seed);
	fflush(stdout);
	rng_state = seed ? seed : 1;
	return seed;
}

#endif
