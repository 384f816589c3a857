/*
 * corrupt.c — rank 1 scribbles over its own area of the BCS-MPI segment
 * (a post ring head far past the ring) while rank 0 waits for it: the
 * engine must fail the job naming rank 1 and the corruption, never
 * crash, and rank 0 must not hang (tests/bcsmpi/test_jobs.py).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

/* The segment's mapping, from /proc/self/maps. */
static uint8_t *segment(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	unsigned long lo = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "bcs-segment")) {
			lo = strtoul(line, NULL, 16);
			break;
		}
	if (f)
		fclose(f);
	return (uint8_t *)(uintptr_t)lo;
}

int main(int argc, char **argv)
{
	int rank, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1) {
		uint8_t *seg = segment();
		uint64_t area_off, stride, bad = UINT64_C(1) << 40;
		int area = atoi(getenv("STORM_BCS_AREA"));

		if (!seg) {
			fprintf(stderr, "no segment mapping\n");
			return 2;
		}
		/* struct bcs_seg: 8 x u32, then bytes, area_off, stride */
		memcpy(&area_off, seg + 40, 8);
		memcpy(&stride, seg + 48, 8);
		memcpy(seg + area_off + (uint64_t)area * stride, &bad, 8);
		/* and posts nothing more (a post would write the head
		 * again): the job ends around it */
		for (;;)
			pause();
	}
	MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
