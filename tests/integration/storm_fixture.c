/*
 * storm_fixture.c — see storm_fixture.h.  Waiting is done on events: the
 * manager answers a "wait" request when the nodes are up, children are
 * reaped on a pidfd (spc_waitpid), and the manager's socket is awaited with
 * inotify on the cluster directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <storm_proto.h>

#include "sp_cluster.h"
#include "storm_fixture.h"

static pid_t spawn(const char *const argv[], const char *out, const char *err)
{
	pid_t parent = getpid(), pid = fork();

	if (pid != 0)
		return pid < 0 ? -errno : pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (out) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			dup2(fd, 1);
		fd = open(err ? err : out, O_WRONLY | O_CREAT |
			  (err ? O_TRUNC : O_APPEND), 0644);
		if (fd >= 0)
			dup2(fd, 2);
	}
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* Free loopback ports, held together so that none repeats. */
static int free_ports(uint32_t n, int *ports)
{
	int fds[SF_MAX_NODES + 2], rc = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);

		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0 || bind(fds[i], (void *)&a, sizeof(a)) < 0 ||
		    getsockname(fds[i], (void *)&a, &len) < 0) {
			rc = -errno;
			n = i + 1;
			break;
		}
		ports[i] = ntohs(a.sin_port);
	}
	for (uint32_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

static int write_conf(sf_cluster_t *c, const char *provider)
{
	int ports[SF_MAX_NODES + 2];
	FILE *f;
	int rc = free_ports(c->nodes + 2, ports);

	if (rc)
		return rc;
	f = fopen(c->conf, "w");
	if (!f)
		return -errno;
	{
		char key[400];
		int fd;
		uint8_t k[32];

		snprintf(key, sizeof(key), "%s/storm.key", c->dir);
		fd = open(key, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0400);
		if (fd < 0 || getrandom(k, sizeof(k), 0) != sizeof(k) ||
		    write(fd, k, sizeof(k)) != sizeof(k)) {
			if (fd >= 0)
				close(fd);
			fclose(f);
			return -EIO;
		}
		close(fd);
		fprintf(f, "[cluster]\nauth_key = %s\n", key);
	}
	fprintf(f, "name = test\nprovider = %s\nslice_us = 10000\n"
		"hb_period_ms = 50\nhb_timeout_ms = 1000\nramdisk = %s/ramdisk\n"
		"state_dir = %s/state\nrun_dir = %s\nlog = %s/storm.log\n"
		"log_level = info\n\n[manager mm0]\n", provider, c->dir,
		c->dir, c->dir, c->dir);
	if (!strcmp(provider, "shm"))
		fprintf(f, "address = sf-%d-mm0\n", (int)getpid());
	else
		fprintf(f, "address = 127.0.0.1:%d\n", ports[0]);
	fprintf(f, "listen = 127.0.0.1:%d\n", ports[c->nodes + 1]);
	for (uint32_t i = 1; i <= c->nodes; i++) {
		fprintf(f, "\n[node nm%u]\n", i);
		if (!strcmp(provider, "shm"))
			fprintf(f, "address = sf-%d-nm%u\n", (int)getpid(), i);
		else
			fprintf(f, "address = 127.0.0.1:%d\n", ports[i]);
		fprintf(f, "cpus = 1\n");
	}
	return fclose(f) ? -errno : 0;
}

/* The manager's socket appears in the directory: inotify, bounded. */
static int await_socket(sf_cluster_t *c, int timeout_ms)
{
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK), rc = -ETIMEDOUT;
	struct timespec t0, t;
	struct stat st;

	if (fd < 0)
		return -errno;
	inotify_add_watch(fd, c->dir, IN_CREATE | IN_MOVED_TO);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[4096];
		long ms;

		if (stat(c->sock, &st) == 0 && S_ISSOCK(st.st_mode)) {
			rc = 0;
			break;
		}
		if (kill(c->mm, 0) < 0) {
			rc = -ESRCH;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= timeout_ms)
			break;
		/* bounded by 100 ms so that a manager that died is noticed */
		if (poll(&p, 1, 100) > 0 && read(fd, buf, sizeof(buf)) < 0)
			(void)0;
	}
	close(fd);
	return rc;
}

int sf_request(sf_cluster_t *c, const char *req, int timeout_ms,
	       char **reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t *p = NULL;
	uint32_t len;
	int fd, type, rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (void *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = st_frame_send(fd, ST_FRAME_REQUEST, req, (uint32_t)strlen(req));
	if (!rc)
		rc = st_frame_recv(fd, timeout_ms, &type, &p, &len);
	close(fd);
	if (!rc && type != ST_FRAME_REPLY)
		rc = -EPROTO;
	if (!rc && !strstr((char *)p, "\"ok\":true"))
		rc = -ENOENT;
	if (reply)
		*reply = (char *)p;
	else
		free(p);
	return rc;
}

int sf_wait_up(sf_cluster_t *c, uint32_t n, int timeout_ms)
{
	char req[160];

	snprintf(req, sizeof(req), "{\"op\":\"wait\",\"client\":\"fixture\","
		 "\"seq\":1,\"nodes_up\":%u,\"timeout_ms\":%d}", n, timeout_ms);
	return sf_request(c, req, timeout_ms + 2000, NULL);
}

int sf_wait_down(sf_cluster_t *c, uint32_t n, int timeout_ms)
{
	char req[160];

	snprintf(req, sizeof(req), "{\"op\":\"wait\",\"client\":\"fixture\","
		 "\"seq\":1,\"nodes_down\":%u,\"timeout_ms\":%d}", n,
		 timeout_ms);
	return sf_request(c, req, timeout_ms + 2000, NULL);
}

int sf_wait_job(sf_cluster_t *c, uint32_t job, int timeout_ms, char **reply)
{
	char req[160];

	snprintf(req, sizeof(req), "{\"op\":\"wait\",\"client\":\"fixture\","
		 "\"seq\":1,\"job\":%u,\"timeout_ms\":%d}", job, timeout_ms);
	return sf_request(c, req, timeout_ms + 2000, reply);
}

int sf_start_nm(sf_cluster_t *c, uint32_t i)
{
	char name[16], out[400];
	const char *argv[] = { c->nm_exe, "--config", c->conf, "--name", name,
			       NULL };
	pid_t pid;

	snprintf(name, sizeof(name), "nm%u", i);
	snprintf(out, sizeof(out), "%s/%s.out", c->dir, name);
	setenv("STORM_TEST_CONTROLS", "1", 1); /* SIGUSR2 hangs its loop */
	pid = spawn(argv, out, NULL);
	if (pid < 0)
		return (int)pid;
	c->nm[i] = pid;
	return 0;
}

/* A killed libqb daemon leaves its crash blackbox in /dev/shm: worth
 * keeping after a real crash, not after a test's kill. */
static void rm_blackbox(pid_t pid)
{
	char pat[96];
	glob_t g;

	snprintf(pat, sizeof(pat), "/dev/shm/qb-storm-*-%d-blackbox-*",
		 (int)pid);
	if (glob(pat, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
	globfree(&g);
}

int sf_kill_nm(sf_cluster_t *c, uint32_t i, int sig)
{
	int st;

	if (!c->nm[i])
		return -ESRCH;
	if (kill(c->nm[i], sig) < 0)
		return -errno;
	if (sig == SIGKILL || sig == SIGTERM) {
		int rc = spc_waitpid(c->nm[i], 10000, &st);

		if (rc)
			return rc;
		rm_blackbox(c->nm[i]);
		c->nm[i] = 0;
	}
	return 0;
}

int sf_start(const char *mm_exe, const char *nm_exe, const char *ctl_exe,
	     uint32_t nodes, const char *provider, sf_cluster_t **out)
{
	sf_cluster_t *c = calloc(1, sizeof(*c));
	const char *argv[] = { mm_exe, "--config", NULL, "--name", "mm0",
			       NULL };
	char mmout[400];
	int rc;

	*out = NULL;
	if (!c || nodes == 0 || nodes > SF_MAX_NODES) {
		free(c);
		return c ? -EINVAL : -ENOMEM;
	}
	c->mm_exe = mm_exe;
	c->nm_exe = nm_exe;
	c->ctl_exe = ctl_exe;
	c->nodes = nodes;
	snprintf(c->dir, sizeof(c->dir), "/tmp/storm-test-XXXXXX");
	if (!mkdtemp(c->dir)) {
		free(c);
		return -errno;
	}
	snprintf(c->conf, sizeof(c->conf), "%s/storm.conf", c->dir);
	snprintf(c->sock, sizeof(c->sock), "%s/storm-mm-mm0.sock", c->dir);
	snprintf(mmout, sizeof(mmout), "%s/mm0.out", c->dir);
	if ((rc = write_conf(c, provider)))
		goto fail;
	argv[2] = c->conf;
	c->mm = spawn(argv, mmout, NULL);
	if (c->mm < 0) {
		rc = (int)c->mm;
		c->mm = 0;
		goto fail;
	}
	if ((rc = await_socket(c, 10000)))
		goto fail;
	for (uint32_t i = 1; i <= nodes; i++)
		if ((rc = sf_start_nm(c, i)))
			goto fail;
	if ((rc = sf_wait_up(c, nodes, 20000)))
		goto fail;
	*out = c;
	return 0;
fail:
	fprintf(stderr, "sf_start: %s; manager log:\n", strerror(-rc));
	{
		char *log = sf_read(c, "storm.log");

		fprintf(stderr, "%s\n", log ? log : "(none)");
		free(log);
	}
	sf_destroy(c);
	return rc;
}

char *sf_read(sf_cluster_t *c, const char *name)
{
	char path[600];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = malloc(1);
	for (int ch; buf && (ch = fgetc(f)) != EOF;) {
		char *b = realloc(buf, len + 2);

		if (!b) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = b;
		buf[len++] = (char)ch;
	}
	if (buf)
		buf[len] = '\0';
	fclose(f);
	return buf;
}

static const char **ctl_argv(sf_cluster_t *c, const char *const args[])
{
	size_t n = 0;
	const char **v;

	while (args[n])
		n++;
	v = calloc(n + 4, sizeof(*v));
	if (!v)
		return NULL;
	v[0] = c->ctl_exe;
	v[1] = "--config";
	v[2] = c->conf;
	for (size_t i = 0; i < n; i++)
		v[3 + i] = args[i];
	return v;
}

pid_t sf_ctl_pipe(sf_cluster_t *c, const char *const args[], int *out_fd)
{
	const char **v = ctl_argv(c, args);
	pid_t parent = getpid(), pid;
	int p[2];

	if (!v)
		return -ENOMEM;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(v);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(v[0], (char *const *)v);
		_exit(127);
	}
	free(v);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -errno;
	}
	*out_fd = p[0];
	return pid;
}

int sf_read_until(int fd, const char *want, int timeout_ms, char *buf,
		  size_t cap)
{
	size_t len = strlen(buf);
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!strstr(buf, want)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long ms;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= timeout_ms || len + 1 >= cap)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)(timeout_ms - ms)) <= 0)
			continue;
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			return -ECONNRESET;
		len += (size_t)n;
		buf[len] = '\0';
	}
	return 0;
}

int sf_await_gone(pid_t pid, int timeout_ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), rc;
	struct pollfd p;

	if (fd < 0)
		return errno == ESRCH ? 0 : -errno;
	p.fd = fd;
	p.events = POLLIN;
	rc = poll(&p, 1, timeout_ms);
	close(fd);
	return rc > 0 ? 0 : -ETIMEDOUT;
}

pid_t sf_ctl_bg(sf_cluster_t *c, const char *tag, const char *const args[])
{
	char o[400], e[400];
	const char **v = ctl_argv(c, args);
	pid_t pid;

	if (!v)
		return -ENOMEM;
	snprintf(o, sizeof(o), "%s/%s.out", c->dir, tag);
	snprintf(e, sizeof(e), "%s/%s.err", c->dir, tag);
	pid = spawn(v, o, e);
	free(v);
	return pid;
}

int sf_ctl(sf_cluster_t *c, int timeout_ms, char **out, char **err,
	   const char *const args[])
{
	static unsigned seq;
	char tag[32], name[48];
	pid_t pid;
	int st, rc;

	snprintf(tag, sizeof(tag), "ctl%u", ++seq);
	pid = sf_ctl_bg(c, tag, args);
	if (pid < 0)
		return (int)pid;
	rc = spc_waitpid(pid, timeout_ms, &st);
	if (rc) {
		kill(pid, SIGKILL);
		spc_waitpid(pid, -1, &st);
		return rc;
	}
	if (out) {
		snprintf(name, sizeof(name), "%s.out", tag);
		*out = sf_read(c, name);
	}
	if (err) {
		snprintf(name, sizeof(name), "%s.err", tag);
		*err = sf_read(c, name);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Stop a daemon: SIGTERM, a bounded wait for its clean exit, then
 * SIGKILL. */
static void stop(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	if (spc_waitpid(pid, 5000, &st)) {
		kill(pid, SIGKILL);
		spc_waitpid(pid, -1, &st);
	}
	rm_blackbox(pid);
}

void sf_destroy(sf_cluster_t *c)
{
	if (!c)
		return;
	for (uint32_t i = 1; i <= c->nodes; i++)
		if (c->nm[i] > 0)
			stop(c->nm[i]);
	if (c->mm > 0)
		stop(c->mm);
	/* STORM_TEST_KEEP=1 keeps the logs of a failed run for a look */
	if (c->dir[0] && !getenv("STORM_TEST_KEEP"))
		nftw(c->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(c);
}
