/*
 * common.h — small helpers shared by the Open MPI peer benchmarks.
 *
 * Why it exists: bench/ompi/allreduce.c and bench/ompi/bcast.c must compute
 * exactly the statistics Storm's own benchmark reports (median and p99 of
 * per-operation times taken at the initiator), so the two sides of every
 * ratio in `bench/run primitives` are comparable. Header-only, static.
 */
#ifndef STORM_BENCH_OMPI_COMMON_H
#define STORM_BENCH_OMPI_COMMON_H

#include <errno.h>
#include <stdlib.h>

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a;
	double y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Sorts v[0..n) in place and returns its q-quantile (0 <= q <= 1) by the
 * nearest-rank method: the smallest sample with at least q*n samples <= it.
 * For the median of an even n this is the lower of the two middle samples.
 * n must be > 0.
 */
static double bench_quantile(double *v, size_t n, double q)
{
	size_t rank;

	qsort(v, n, sizeof(*v), bench_cmp_double);
	rank = (size_t)(q * (double)n + 0.999999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/*
 * Parses a positive integer argument. Returns 0 and sets *out, or -EINVAL.
 */
static int bench_parse_pos(const char *s, long *out)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

#endif /* STORM_BENCH_OMPI_COMMON_H */
