/*
 * ckpt_target.c — an unmodified program holding every kind of state the
 * checkpoint engine must carry across a capture and a restore: heap,
 * stack, anonymous and private file mappings, TLS, a signal handler and a
 * blocked signal, a file read half way, a pipe with bytes in it, a working
 * directory, a umask and a lowered limit.  It prints "ready", waits for a
 * line on stdin (blocked in read(2) when it is captured), checks that all
 * of it is as it left it, and prints "ok" or what differs.
 *
 * Before "go", lines "w K" make it write part of its heap and map and
 * unmap regions (for incremental captures); it answers "done K".  The
 * final line is "ok go SUM", SUM a digest of its heap and mapping.
 *
 *   ckpt_target FILE [plain|thread|socket|inherit]
 * FILE: a file of at least 64 KiB it may read (mapped and read).
 * inherit: descriptor 3 is shared memory of at least 8 KiB its launcher
 * gave it (mapped shared, then closed, as a BCS-MPI rank does with its
 * segment) and 4 an eventfd it keeps; at "go" it checks that byte 100 of
 * the memory is 0x5a, sets byte 200 to 0x77 and adds 1 to the eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static __thread long tls_value = 7;
static volatile sig_atomic_t usr1;
static long data_value = 11;
#define MAXW 16
static int written[MAXW], nw;
static unsigned char *extra[MAXW];

static void on_usr1(int s)
{
	(void)s;
	usr1++;
}

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

#define CHECK(cond, what) do { if (!(cond)) { \
	printf("bad: %s\n", what); fflush(stdout); return 1; } } while (0)

int main(int argc, char **argv)
{
	const size_t heap_len = 3 << 20, anon_len = 1 << 20;
	unsigned char stack_buf[8192], *heap, *anon, *fmap, first[16], next[16];
	int fd, p[2], sp[2];
	struct sigaction sa = { 0 };
	char line[64], pipebuf[32], cwd[4096];
	sigset_t set, old;
	struct rlimit rl;
	pthread_t th;
	unsigned long sum = 0;
	unsigned char *shm = NULL;

	if (argc < 2)
		return 2;
	tls_value = 4242;
	data_value = 99;
	heap = malloc(heap_len);
	anon = mmap(NULL, anon_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!heap || anon == MAP_FAILED)
		return 2;
	for (size_t i = 0; i < heap_len; i++)
		heap[i] = (unsigned char)(i * 7 + 1);
	for (size_t i = 0; i < anon_len; i += 3)
		anon[i] = (unsigned char)(i * 13 + 5);
	for (size_t i = 0; i < sizeof(stack_buf); i++)
		stack_buf[i] = (unsigned char)(i ^ 0x5a);
	if ((fd = open(argv[1], O_RDONLY)) < 0)
		return 2;
	fmap = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (fmap == MAP_FAILED)
		return 2;
	fmap[4096] ^= 0xff; /* one page of it is ours now */
	if (read(fd, first, sizeof(first)) != sizeof(first))
		return 2;
	if (pipe(p) || write(p[1], "in the pipe", 12) != 12)
		return 2;
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	umask(027);
	if (chdir("/") < 0)
		return 2;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 200;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (argc > 2 && !strcmp(argv[2], "thread"))
		pthread_create(&th, NULL, idle, NULL);
	if (argc > 2 && !strcmp(argv[2], "socket") &&
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return 2;
	if (argc > 2 && !strcmp(argv[2], "inherit")) {
		shm = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, 3,
			   0);
		if (shm == MAP_FAILED)
			return 2;
		close(3);
	}

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* "w K": write the heap's pages p with p % 5 == K % 5, map a new
	 * region K and unmap region K - 2; anything else: check */
	for (;;) {
		if (!fgets(line, sizeof(line), stdin))
			return 3;
		if (line[0] != 'w')
			break;
		int k = atoi(line + 2);

		if (k < 1 || k >= MAXW || nw >= MAXW)
			return 4;
		for (size_t pg = 0; pg < heap_len / 4096; pg++)
			if (pg % 5 == (size_t)k % 5)
				heap[pg * 4096 + 17] = (unsigned char)k;
		extra[k] = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (extra[k] == MAP_FAILED)
			return 4;
		memset(extra[k], k, 65536);
		if (k >= 3 && extra[k - 2]) {
			munmap(extra[k - 2], 65536);
			extra[k - 2] = NULL;
		}
		written[nw++] = k;
		printf("done %d\n", k);
		fflush(stdout);
	}

	/* all of it as it was */
	CHECK(tls_value == 4242, "TLS");
	CHECK(data_value == 99, "data");
	for (size_t i = 0; i < heap_len; i++) {
		unsigned char want = (unsigned char)(i * 7 + 1);

		for (int w = 0; w < nw; w++)
			if (i % 4096 == 17 && (i / 4096) % 5 ==
			    (size_t)written[w] % 5)
				want = (unsigned char)written[w];
		CHECK(heap[i] == want, "heap");
		sum = sum * 31 + heap[i];
	}
	for (int k = 1; k < MAXW; k++) {
		int live = 0;

		for (int w = 0; w < nw; w++)
			if (written[w] == k)
				live = 1;
			else if (written[w] == k + 2 && live)
				live = 0; /* unmapped by command k + 2 */
		CHECK(!!extra[k] == live, "regions mapped since");
		for (size_t i = 0; live && i < 65536; i++)
			CHECK(extra[k][i] == k, "a region mapped since");
	}
	for (size_t i = 0; i < anon_len; i++) {
		CHECK(anon[i] == (i % 3 ? 0 : (unsigned char)(i * 13 + 5)),
		      "anonymous mapping");
		sum = sum * 31 + anon[i];
	}
	for (size_t i = 0; i < sizeof(stack_buf); i++)
		CHECK(stack_buf[i] == (unsigned char)(i ^ 0x5a), "stack");
	{
		int f2 = open(argv[1], O_RDONLY);
		unsigned char orig[2];

		CHECK(f2 >= 0 && pread(f2, orig, 1, 4096) == 1 &&
		      pread(f2, orig + 1, 1, 0) == 1, "reopening the file");
		CHECK(fmap[4096] == (unsigned char)(orig[0] ^ 0xff),
		      "private file page");
		CHECK(fmap[0] == orig[1], "file page");
		CHECK(pread(f2, orig, 1, 16) == 1, "file");
		CHECK(read(fd, next, sizeof(next)) == sizeof(next) &&
		      next[0] == orig[0], "file offset");
		close(f2);
	}
	CHECK(read(p[0], pipebuf, 12) == 12 &&
	      !memcmp(pipebuf, "in the pipe", 12), "pipe contents");
	CHECK(write(p[1], "x", 1) == 1 && read(p[0], pipebuf, 1) == 1,
	      "pipe");
	raise(SIGUSR1);
	CHECK(usr1 == 1, "signal handler");
	sigprocmask(SIG_BLOCK, NULL, &old);
	CHECK(sigismember(&old, SIGUSR2), "signal mask");
	CHECK(umask(0) == 027, "umask");
	CHECK(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, "/"), "cwd");
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur != 200) printf("limit %lu/%lu ", (unsigned long)rl.rlim_cur, (unsigned long)rl.rlim_max);
	CHECK(rl.rlim_cur == 200, "limit");
	CHECK(sbrk(1 << 20) != (void *)-1, "brk");
	{
		unsigned char *more = malloc(8 << 20);

		CHECK(more, "malloc after restore");
		memset(more, 1, 8 << 20);
		free(more);
	}
	if (shm) {
		uint64_t one = 1;

		CHECK(shm[100] == 0x5a, "inherited shared memory");
		shm[200] = 0x77;
		CHECK(write(4, &one, sizeof(one)) == sizeof(one),
		      "inherited eventfd");
	}
	free(heap);
	printf("ok %.*s %lu\n", (int)strcspn(line, "\n"), line, sum);
	fflush(stdout);
	return 0;
}
