/*
 * storm_padded.c — a do-nothing parallel program padded to 12 MB with an
 * initialised array, so that launching it moves 12 MB to every node.  It
 * prints its rank and a checksum of the whole array: every rank must print
 * the same one (the file arrived whole everywhere).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PAD (12u << 20)

/* Initialised data goes into the file, not into .bss. */
static const uint8_t pad[PAD] = { 1, 2, 3, 4, 5, 6, 7, 8, [PAD - 1] = 9 };

int main(void)
{
	const char *rank = getenv("STORM_RANK");
	uint64_t sum = 0;

	for (uint32_t i = 0; i < PAD; i += 4096)
		sum = sum * 31 + pad[i] + pad[i + 4095];
	printf("rank %s checksum %llu\n", rank ? rank : "?",
	       (unsigned long long)sum);
	return 0;
}
