/*
 * floor.c — the floor for `bench/run launch`: the least work any launcher
 * must do on this machine to start N copies of a program that is not yet
 * on the nodes, done directly in one process with no daemon, no network
 * and no protocol.
 *
 * Why it exists: Storm's launch moves the program to every node's RAM disk
 * and then starts one process per node.  On one host the irreducible cost
 * of that is copying the bytes into N files on tmpfs plus fork/exec/wait of
 * N processes; whatever Storm takes beyond this is its own overhead, and
 * the benchmark's target is stated as a multiple of this figure.
 *
 * Usage: launch-floor SRC N DIR
 *   Reads SRC once, writes it to DIR/copy-0 .. DIR/copy-(N-1) (mode 0755),
 *   then forks all N and execs copy-i in each with STORM_RANK=i in its
 *   environment and stdout on /dev/null, and waits for all of them.  The
 *   clock (CLOCK_MONOTONIC) starts before SRC is read and stops when the
 *   last child is reaped; the elapsed milliseconds are printed on stdout
 *   as one number.  The copies are unlinked afterwards (outside the timed
 *   part); DIR itself belongs to the caller.
 *
 * Exit status: 0 every child exited 0; 1 an error (named on stderr) or a
 * child that failed; 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_MAX_N 4096

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reads all of path into a malloc'ed buffer; 0 or -errno. */
static int read_all(const char *path, char **buf_out, size_t *len_out)
{
	struct stat st;
	char *buf;
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (st.st_size <= 0) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + off, (size_t)st.st_size - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* A short read is an error: the file changed under us. */
			int e = r < 0 ? -errno : -EIO;
			free(buf);
			close(fd);
			return e;
		}
		off += (size_t)r;
	}
	close(fd);
	*buf_out = buf;
	*len_out = off;
	return 0;
}

/* Writes buf to a new file path with mode 0755; 0 or -errno. */
static int write_copy(const char *path, const char *buf, size_t len)
{
	size_t off = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? -errno : -EIO;
			close(fd);
			return e;
		}
		off += (size_t)w;
	}
	/* close() may report a deferred write error; it counts. */
	return close(fd) < 0 ? -errno : 0;
}

/* In the child: rank in the environment, stdout to /dev/null, exec. */
static void child(const char *path, int rank)
{
	char val[16];
	char *argv[2] = { (char *)path, NULL };
	int fd = open("/dev/null", O_WRONLY);

	snprintf(val, sizeof(val), "%d", rank);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    setenv("STORM_RANK", val, 1) < 0)
		_exit(127);
	execv(path, argv);
	_exit(127);
}

int main(int argc, char **argv)
{
	char *end, *buf = NULL;
	char (*paths)[PATH_MAX];
	pid_t *pids;
	size_t len = 0;
	long n;
	int rc, failed = 0;
	double t0, t1;

	if (argc != 4) {
		fprintf(stderr, "usage: launch-floor SRC N DIR\n");
		return 2;
	}
	errno = 0;
	n = strtol(argv[2], &end, 10);
	if (errno || *end || n < 1 || n > FLOOR_MAX_N) {
		fprintf(stderr, "launch-floor: N must be 1 to %d\n", FLOOR_MAX_N);
		return 2;
	}
	paths = calloc((size_t)n, sizeof(*paths));
	pids = calloc((size_t)n, sizeof(*pids));
	if (!paths || !pids) {
		fprintf(stderr, "launch-floor: out of memory\n");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if ((size_t)snprintf(paths[i], sizeof(paths[i]), "%s/copy-%ld",
				     argv[3], i) >= sizeof(paths[i])) {
			fprintf(stderr, "launch-floor: DIR too long\n");
			return 2;
		}
	}

	/* ---- timed part: read once, write N copies, start and reap N ---- */
	t0 = now_ms();
	rc = read_all(argv[1], &buf, &len);
	if (rc < 0) {
		fprintf(stderr, "launch-floor: read %s: %s\n", argv[1],
			strerror(-rc));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		rc = write_copy(paths[i], buf, len);
		if (rc < 0) {
			fprintf(stderr, "launch-floor: write %s: %s\n",
				paths[i], strerror(-rc));
			failed = 1;
			n = i + 1;	/* unlink what was written */
			goto out;
		}
	}
	fflush(NULL);
	for (long i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "launch-floor: fork: %s\n",
				strerror(errno));
			failed = 1;
			break;
		}
		if (pids[i] == 0)
			child(paths[i], (int)i);
	}
	for (long i = 0; i < n; i++) {
		int st;

		if (pids[i] <= 0)
			continue;
		while (waitpid(pids[i], &st, 0) < 0) {
			if (errno != EINTR) {
				st = -1;
				break;
			}
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "launch-floor: rank %ld failed "
				"(status 0x%x)\n", i, (unsigned)st);
			failed = 1;
		}
	}
	t1 = now_ms();
	/* ---- end of timed part ---- */

	if (!failed)
		printf("%.3f\n", t1 - t0);
out:
	for (long i = 0; i < n; i++)
		unlink(paths[i]);
	free(buf);
	free(paths);
	free(pids);
	return failed ? 1 : 0;
}
