/*
 * hostile.c — a rank attacks the engine through its own segment, as any
 * process of the job's user could, then communicates as usual: the job
 * must complete with every result right (tests/bcsmpi/test_jobs.py).
 *   - shrink the segment (its descriptor, before MPI_Init): sealed;
 *   - overwrite the segment's layout (area offset and stride) in the
 *     header: the engine keeps its own copy;
 *   - be able to gain privileges under its pid (the engine writes into
 *     it as root): no_new_privs is set;
 *   - ring the job's doorbell without cause, 100000 times, and steal
 *     its rings by reading it: the engine runs at most BCS_EARLY_MAX
 *     rounds a slice for it, and a stolen ring only delays the job.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

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

static int no_new_privs(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "NoNewPrivs:", 11))
			v = atoi(line + 11);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	int rank, size, shrunk, sum = 0;
	uint64_t bad = UINT64_C(0x7fff00000000);

	shrunk = ftruncate(atoi(getenv("STORM_BCS_FD")), 0) == 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD); /* every rank has mapped its area */
	if (rank == 0) {
		uint8_t *seg = segment();

		/* struct bcs_seg: 8 x u32, bytes, area_off, area_stride */
		memcpy(seg + 40, &bad, 8);
		memcpy(seg + 48, &bad, 8);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (getenv("STORM_BCS_BELL")) {
		int bell = atoi(getenv("STORM_BCS_BELL"));
		uint64_t one = 1, v;

		for (int i = 0; i < 100000; i++)
			if (write(bell, &one, sizeof(one)) < 0 ||
			    (i % 7 == 0 && read(bell, &v, sizeof(v)) < 0 &&
			     0))
				break;
	}
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("hostile: shrink %s, no_new_privs %d, sum %d %s\n",
		       shrunk ? "ALLOWED" : "refused", no_new_privs(), sum,
		       sum == size * (size - 1) / 2 ? "right" : "WRONG");
	MPI_Finalize();
	return 0;
}
