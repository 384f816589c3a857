/*
 * fuzz.h — the contract of a fuzz target: LLVMFuzzerTestOneInput() takes
 * any bytes and returns 0; a decoder that crashes, leaks, reads out of
 * bounds or breaks an invariant it checks (FUZZ_CHECK) is a finding.
 * Built twice: with libFuzzer (-Dfuzz=true, clang: coverage-guided,
 * `bench/run fuzz`), and with replay.c as main in every build, where it
 * runs the checked-in seeds and every past crash (tests/fuzz/regress/)
 * as ordinary tests under the sanitizers.
 */
#ifndef STORM_FUZZ_H
#define STORM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: invariant broken: %s\n",     \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
