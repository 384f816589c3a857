/*
 * sp_cluster.c — see sp_cluster.h.  Children are tracked by PID in the
 * cluster record; an atexit hook and spc_destroy() both SIGKILL whatever is
 * still alive, and PR_SET_PDEATHSIG covers a parent that dies by a signal.
 * spc_destroy() also removes what killed shm nodes left in /dev/shm.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "sp_cluster.h"

struct spc_cluster {
	char *exe, *provider, *addrlist, *dir;
	uint32_t n;
	pid_t *pid;
	int *status; /* -1 while running */
	int ino;     /* inotify on dir: the nodes' output files grow */
};

/* A free loopback port, held by *fd until the caller closes it: ports are
 * chosen for every node before any is released, or two nodes could be
 * handed the same one. */
static int free_port(int *fd)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int port = -1;

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(*fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(*fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	return port;
}

static int make_addrs(spc_cluster_t *c)
{
	size_t cap = (size_t)c->n * 64 + 1, len = 0;
	int shm = strcmp(c->provider, "shm") == 0, rc = 0;
	int *fds = calloc(c->n, sizeof(int));

	c->addrlist = malloc(cap);
	if (!c->addrlist || !fds) {
		free(fds);
		return -ENOMEM;
	}
	c->addrlist[0] = '\0';
	for (uint32_t i = 0; i < c->n; i++)
		fds[i] = -1;
	for (uint32_t i = 0; i < c->n && rc == 0; i++) {
		int port = shm ? 0 : free_port(&fds[i]);

		if (port < 0) {
			rc = port;
			break;
		}
		if (shm)
			len += (size_t)snprintf(c->addrlist + len, cap - len,
						"%sstorm-%d-%u", i ? "," : "",
						(int)getpid(), i);
		else
			len += (size_t)snprintf(c->addrlist + len, cap - len,
						"%s127.0.0.1:%d", i ? "," : "",
						port);
	}
	for (uint32_t i = 0; i < c->n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return rc;
}

static int spawn(spc_cluster_t *c, uint32_t i, char *const extra[])
{
	char node[16], nodes[16], out[512];
	char *argv[64];
	int k = 0, fd;
	pid_t pid;

	snprintf(node, sizeof(node), "%u", i);
	snprintf(nodes, sizeof(nodes), "%u", c->n);
	snprintf(out, sizeof(out), "%s/node.%u.out", c->dir, i);
	argv[k++] = c->exe;
	argv[k++] = "--node";
	argv[k++] = node;
	argv[k++] = "--nodes";
	argv[k++] = nodes;
	argv[k++] = "--provider";
	argv[k++] = c->provider;
	argv[k++] = "--addrs";
	argv[k++] = c->addrlist;
	for (int j = 0; extra && extra[j] && k < 63; j++)
		argv[k++] = extra[j];
	argv[k] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(c->exe, argv);
		_exit(127);
	}
	c->pid[i] = pid;
	c->status[i] = -1;
	return 0;
}

/* Every cluster alive in this process, for the atexit safety net. */
static spc_cluster_t *live_clusters[16];

static void kill_all_at_exit(void)
{
	for (int j = 0; j < 16; j++) {
		spc_cluster_t *c = live_clusters[j];

		for (uint32_t i = 0; c && i < c->n; i++)
			if (c->status[i] < 0 && c->pid[i] > 0)
				kill(c->pid[i], SIGKILL);
	}
}

int spc_start(const char *exe, const char *provider, uint32_t n,
	      char *const extra[], spc_cluster_t **out)
{
	static int hooked;
	char tmpl[] = "/tmp/storm-cluster-XXXXXX";
	spc_cluster_t *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->n = n;
	c->ino = -1;
	c->exe = strdup(exe);
	c->provider = strdup(provider);
	c->pid = calloc(n, sizeof(pid_t));
	c->status = calloc(n, sizeof(int));
	c->dir = mkdtemp(tmpl) ? strdup(tmpl) : NULL;
	if (!c->exe || !c->provider || !c->pid || !c->status || !c->dir) {
		spc_destroy(c);
		return -ENOMEM;
	}
	c->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (c->ino < 0 || inotify_add_watch(c->ino, c->dir, IN_MODIFY) < 0) {
		rc = -errno;
		spc_destroy(c);
		return rc;
	}
	rc = make_addrs(c);
	if (rc) {
		spc_destroy(c);
		return rc;
	}
	if (!hooked) {
		atexit(kill_all_at_exit);
		hooked = 1;
	}
	for (int j = 0; j < 16; j++) {
		if (!live_clusters[j]) {
			live_clusters[j] = c;
			break;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		rc = spawn(c, i, extra);
		if (rc) {
			spc_destroy(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

int spc_restart(spc_cluster_t *c, uint32_t i, char *const extra[])
{
	if (i >= c->n)
		return -ERANGE;
	if (c->status[i] < 0) {
		kill(c->pid[i], SIGKILL);
		waitpid(c->pid[i], NULL, 0);
	}
	return spawn(c, i, extra);
}

static int decode(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int spc_waitpid(pid_t pid, int timeout_ms, int *st)
{
	struct pollfd p = {.events = POLLIN};
	int rc = 0;
	pid_t r;

	/* A pidfd polls readable when the child exits: an event, no
	 * polling loop. */
	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd < 0)
		return -errno;
	if (poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms) == 0)
		rc = -ETIMEDOUT;
	close(p.fd);
	if (rc)
		return rc;
	r = waitpid(pid, st, WNOHANG);
	return r == pid ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

int spc_wait(spc_cluster_t *c, uint32_t i, int timeout_ms, int *status)
{
	if (i >= c->n)
		return -ERANGE;
	if (c->status[i] < 0) {
		int st, rc = spc_waitpid(c->pid[i], timeout_ms, &st);

		if (rc)
			return rc;
		c->status[i] = decode(st);
	}
	if (status)
		*status = c->status[i];
	return 0;
}

int spc_wait_stopped(spc_cluster_t *c, uint32_t i, int timeout_ms)
{
	struct timespec t0;

	if (i >= c->n)
		return -ERANGE;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int st;
		pid_t r;

		if (c->status[i] >= 0)
			return -ESRCH;
		r = waitpid(c->pid[i], &st, WNOHANG | WUNTRACED);
		if (r == c->pid[i] && WIFSTOPPED(st))
			return 0;
		if (r == c->pid[i]) {
			c->status[i] = decode(st);
			return -ESRCH;
		}
		if (r < 0)
			return -errno;
		if (ms_since(&t0) >= timeout_ms)
			return -ETIMEDOUT;
		/* a stop has no fd to wait on (a pidfd tells only exits,
		 * SIGCHLD would need a handler in the test process): poll,
		 * bounded by the timeout */
		usleep(200);
	}
}

int spc_kill(spc_cluster_t *c, uint32_t i, int sig)
{
	if (i >= c->n || c->status[i] >= 0)
		return -ESRCH;
	return kill(c->pid[i], sig) ? -errno : 0;
}

pid_t spc_pid(const spc_cluster_t *c, uint32_t i)
{
	return i < c->n ? c->pid[i] : -1;
}

char *spc_output(const spc_cluster_t *c, uint32_t i)
{
	char path[512];
	FILE *f;
	char *buf;
	long len;

	snprintf(path, sizeof(path), "%s/node.%u.out", c->dir, i);
	f = fopen(path, "r");
	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	if (buf) {
		size_t got = fread(buf, 1, (size_t)len, f);

		buf[got] = '\0';
	}
	fclose(f);
	return buf;
}

/* shm: what a node killed with SIGKILL leaves in /dev/shm — its lock file
 * and its provider region (16 MiB), which only a restart under the same
 * name would reclaim.  Named as the libfabric back-end names them
 * (fabric_shm.c: "storm-<uid>-<address>.lock", "…-<address>-<incarnation>");
 * the addresses are this cluster's own ("storm-<pid>-<i>"). */
static void remove_shm_leftovers(const spc_cluster_t *c)
{
	char pat[512];
	glob_t g;

	for (uint32_t i = 0; c->addrlist && i < c->n; i++) {
		snprintf(pat, sizeof(pat), "/dev/shm/storm-%u-storm-%d-%u.lock",
			 (unsigned)getuid(), (int)getpid(), i);
		unlink(pat);
		snprintf(pat, sizeof(pat), "/dev/shm/storm-%u-storm-%d-%u-*",
			 (unsigned)getuid(), (int)getpid(), i);
		if (glob(pat, 0, NULL, &g) == 0)
			for (size_t j = 0; j < g.gl_pathc; j++)
				unlink(g.gl_pathv[j]);
		globfree(&g);
	}
}

int spc_wait_activity(spc_cluster_t *c, int timeout_ms)
{
	struct pollfd p[1 + 64];
	nfds_t k = 0;
	char buf[4096];
	int rc;

	p[k++] = (struct pollfd){ .fd = c->ino, .events = POLLIN };
	for (uint32_t i = 0; i < c->n && k < sizeof(p) / sizeof(*p); i++) {
		int fd;

		if (c->pid[i] <= 0 || c->status[i] >= 0)
			continue;
		fd = (int)syscall(SYS_pidfd_open, c->pid[i], 0);
		if (fd >= 0)
			p[k++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	rc = poll(p, k, timeout_ms);
	/* drained: the next wait sleeps until something new happens */
	while (read(c->ino, buf, sizeof(buf)) > 0)
		;
	for (nfds_t j = 1; j < k; j++)
		close(p[j].fd);
	return rc > 0 ? 0 : rc == 0 ? -ETIMEDOUT : -errno;
}

void spc_destroy(spc_cluster_t *c)
{
	if (!c)
		return;
	if (c->ino >= 0)
		close(c->ino);
	for (uint32_t i = 0; c->pid && i < c->n; i++) {
		if (c->pid[i] > 0 && c->status[i] < 0) {
			kill(c->pid[i], SIGKILL);
			waitpid(c->pid[i], NULL, 0);
			c->status[i] = 137;
		}
	}
	if (c->provider && strcmp(c->provider, "shm") == 0)
		remove_shm_leftovers(c);
	for (int j = 0; j < 16; j++)
		if (live_clusters[j] == c)
			live_clusters[j] = NULL;
	if (c->dir) {
		for (uint32_t i = 0; i < c->n; i++) {
			char path[512];

			snprintf(path, sizeof(path), "%s/node.%u.out", c->dir, i);
			unlink(path);
		}
		rmdir(c->dir);
	}
	free(c->exe);
	free(c->provider);
	free(c->addrlist);
	free(c->dir);
	free(c->pid);
	free(c->status);
	free(c);
}

int spc_node_config(int *argc, char **argv, sp_config_t **out, char *err,
		    size_t errlen)
{
	long node = -1, nodes = -1;
	const char *prov = NULL, *addrs = NULL;
	int j = 1, rc;
	sp_config_t *cfg;

	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];

		if (i + 1 < *argc && strcmp(a, "--node") == 0)
			node = strtol(argv[++i], NULL, 10);
		else if (i + 1 < *argc && strcmp(a, "--nodes") == 0)
			nodes = strtol(argv[++i], NULL, 10);
		else if (i + 1 < *argc && strcmp(a, "--provider") == 0)
			prov = argv[++i];
		else if (i + 1 < *argc && strcmp(a, "--addrs") == 0)
			addrs = argv[++i];
		else
			argv[j++] = argv[i];
	}
	*argc = j;
	argv[j] = NULL;
	if (node < 0 || nodes <= 0 || node >= nodes || !prov || !addrs) {
		snprintf(err, errlen,
			 "usage: --node I --nodes N --provider P --addrs A0,A1,…");
		return -EINVAL;
	}
	rc = sp_config_create(&cfg);
	if (rc)
		return rc;
	rc = sp_config_set_node(cfg, (uint32_t)node, (uint32_t)nodes);
	if (!rc)
		rc = sp_config_set_provider(cfg, prov);
	for (uint32_t i = 0; !rc && i < (uint32_t)nodes; i++) {
		const char *comma = strchr(addrs, ',');
		size_t len = comma ? (size_t)(comma - addrs) : strlen(addrs);
		char a[256];

		if (len == 0 || len >= sizeof(a)) {
			rc = -EINVAL;
			break;
		}
		memcpy(a, addrs, len);
		a[len] = '\0';
		rc = sp_config_set_address(cfg, i, a);
		addrs = comma ? comma + 1 : addrs + len;
	}
	if (rc) {
		snprintf(err, errlen, "bad node arguments (%s)",
			 storm_strerror(rc));
		sp_config_destroy(cfg);
		return rc;
	}
	*out = cfg;
	return 0;
}
