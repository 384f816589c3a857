/*
 * spin.c — `gang-spin`: one rank of the CPU-bound parallel job that
 * `bench/run gang` gang-schedules (bench/gang/bench.py).
 *
 * Why it exists: the STORM experiment runs two copies of a job with fixed
 * work and compares their makespan time-shared against back to back.  The
 * work must be pure CPU (no I/O, no communication, a working set in
 * registers) so that what changes with the quantum is only what the
 * context switches cost, and it must be a fixed amount of work, not a fixed
 * time, so that a rank stopped half of the time takes twice as long.
 *
 * Usage: gang-spin ITERATIONS [AT_NS]
 *   With AT_NS (a CLOCK_MONOTONIC time in ns), first sleeps until then, so
 *   that the ranks of jobs launched at different moments start their work
 *   together and no launch falls inside the timed part.  Then runs
 *   ITERATIONS rounds of a 64-bit LCG step mixed with a xorshift (a
 *   dependency chain the compiler can neither remove nor vectorise: the
 *   result is printed), then prints one JSON line on stdout:
 *     {"job":J,"rank":R,"iters":N,"start_ns":S,"end_ns":E,"wall_ms":W,
 *      "cpu_ms":C,"gaps":G,"gap_ms":T,"gap_wmed_us":M,"check":"hex"}
 *   J and R from STORM_JOB_ID and STORM_RANK (0 when unset); S and E are
 *   CLOCK_MONOTONIC, the same clock for every process of this host, so the
 *   benchmark can line up the ranks of both jobs; C is this process's CPU
 *   time (CLOCK_PROCESS_CPUTIME_ID): wall - cpu is the time it was stopped
 *   or waiting for a core.
 *
 *   Gaps: every CHECK_EVERY rounds (~16 us here) the loop reads the clock;
 *   an interval longer than GAP_MIN_US is a gap — the rank did not run
 *   (stopped by its node manager, or preempted).  G gaps took T ms in
 *   all; M is their time-weighted median (half of the stopped time was in
 *   gaps at least M us long): under gang scheduling at MPL 2 a rank is
 *   stopped while the other job runs, so M is the quantum actually held,
 *   while short preemptions, however many, weigh little.
 *
 * Exit status: 0 done; 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK_EVERY 8192u /* rounds between clock reads: a power of two */
#define GAP_MIN_US 50u
#define GAP_KEEP 65536u   /* gaps kept for the median; more are counted */

static uint32_t gap_us[GAP_KEEP];

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The length at which the gaps at least that long hold half the total. */
static uint32_t weighted_median(uint32_t n)
{
	uint64_t total = 0, acc = 0;

	qsort(gap_us, n, sizeof(gap_us[0]), cmp_u32);
	for (uint32_t i = 0; i < n; i++)
		total += gap_us[i];
	for (uint32_t i = n; i-- > 0;) {
		acc += gap_us[i];
		if (2 * acc >= total)
			return gap_us[i];
	}
	return 0;
}

static uint64_t ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned long env_u(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoul(v, NULL, 10) : 0;
}

int main(int argc, char **argv)
{
	uint64_t iters, x, start, end, cpu0, cpu1, last, gaps = 0, gap_ns = 0;
	char *endp;

	if (argc < 2 || argc > 3 || !argv[1][0]) {
		fprintf(stderr, "usage: gang-spin ITERATIONS [AT_NS]\n");
		return 2;
	}
	iters = strtoull(argv[1], &endp, 10);
	if (*endp || iters == 0) {
		fprintf(stderr, "gang-spin: ITERATIONS must be a positive "
			"integer, not \"%s\"\n", argv[1]);
		return 2;
	}
	if (argc == 3) {
		uint64_t at = strtoull(argv[2], &endp, 10);
		struct timespec ts = { (time_t)(at / 1000000000u),
				       (long)(at % 1000000000u) };

		if (*endp || !argv[2][0]) {
			fprintf(stderr, "gang-spin: AT_NS must be a "
				"CLOCK_MONOTONIC time in ns, not \"%s\"\n",
				argv[2]);
			return 2;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	x = iters ^ 0x9e3779b97f4a7c15u;
	start = last = ns_of(CLOCK_MONOTONIC);
	cpu0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		x ^= x >> 29;
		if ((i & (CHECK_EVERY - 1)) == CHECK_EVERY - 1) {
			uint64_t now = ns_of(CLOCK_MONOTONIC);

			if (now - last > GAP_MIN_US * 1000u) {
				if (gaps < GAP_KEEP)
					gap_us[gaps] = (uint32_t)((now - last) /
								  1000u);
				gaps++;
				gap_ns += now - last;
			}
			last = now;
		}
	}
	cpu1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	end = ns_of(CLOCK_MONOTONIC);
	printf("{\"job\":%lu,\"rank\":%lu,\"iters\":%" PRIu64
	       ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
	       ",\"wall_ms\":%.3f,\"cpu_ms\":%.3f,\"gaps\":%" PRIu64
	       ",\"gap_ms\":%.3f,\"gap_wmed_us\":%" PRIu32
	       ",\"check\":\"%016" PRIx64 "\"}\n",
	       env_u("STORM_JOB_ID"), env_u("STORM_RANK"), iters, start, end,
	       (double)(end - start) / 1e6, (double)(cpu1 - cpu0) / 1e6, gaps,
	       (double)gap_ns / 1e6,
	       weighted_median(gaps < GAP_KEEP ? (uint32_t)gaps : GAP_KEEP),
	       x);
	return 0;
}
