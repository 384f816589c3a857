/*
 * memcpy.c — ckpt-memcpy MIB [REPS]: the physical floor `bench/run ckpt`
 * reports beside a capture: memcpy of MIB MiB between two buffers whose
 * pages are populated first, the median of REPS copies, in ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) << 20 : 0;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	double t[16];
	char *a, *b;

	if (!n || reps < 1 || reps > 16 || !(a = malloc(n)) || !(b = malloc(n)))
		return 2;
	memset(a, 1, n);
	memset(b, 2, n);
	for (int r = 0; r < reps; r++) {
		double t0 = now_ms();

		memcpy(b, a, n);
		__asm__ volatile("" : : "r"(b) : "memory");
		t[r] = now_ms() - t0;
		a[r] ^= b[n - 1 - r];
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp);
	printf("%.2f\n", t[reps / 2]);
	free(a);
	free(b);
	return 0;
}
