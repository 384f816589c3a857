/*
 * pmi_client.c — libstorm-pmi, the PMI-1 API inside a rank (docs/pmi.md
 * §3): what Open MPI 4's "flux" component loads from
 * FLUX_PMI_LIBRARY_PATH, speaking the simple wire protocol to the node
 * manager's PMI server (pmi.h) on PMI_FD.  One request at a time; a
 * reply is read whole before the call returns.  Local ranks (the
 * "clique") come from PMI_process_mapping.
 *
 * It runs in the user's process and trusts nothing but its own socket:
 * every reply is bounded and checked, and a broken one is PMI_FAIL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "storm_pmi.h"

#define LINE_MAX_PMI 4096

static int fd = -1, rank = -1, size = -1, initialized;
static char kvsname[256];
static int *clique, nclique;
static char inbuf[LINE_MAX_PMI];
static size_t inlen;

static int send_all(const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The next reply line into out (NUL-terminated, no newline). */
static int read_line(char *out, size_t cap)
{
	for (;;) {
		char *nl = memchr(inbuf, '\n', inlen);
		ssize_t r;

		if (nl) {
			size_t n = (size_t)(nl - inbuf);

			if (n >= cap)
				return -1;
			memcpy(out, inbuf, n);
			out[n] = 0;
			memmove(inbuf, nl + 1, inlen - n - 1);
			inlen -= n + 1;
			return 0;
		}
		if (inlen == sizeof(inbuf))
			return -1;
		r = recv(fd, inbuf + inlen, sizeof(inbuf) - inlen, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		inlen += (size_t)r;
	}
}

/* The value of word key in line (copied into out), or -1. */
static int word(const char *line, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);

	for (const char *p = line; p && *p;) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			/* value= is last and runs to the end of the line */
			size_t n = strcmp(key, "value") ?
				   strcspn(p + kl + 1, " ") : strlen(p + kl + 1);

			if (n >= cap)
				return -1;
			memcpy(out, p + kl + 1, n);
			out[n] = 0;
			return 0;
		}
		p = strchr(p, ' ');
	}
	return -1;
}

/* Send req, read the reply; it must be cmd=want with rc=0. */
static int call(const char *req, const char *want, char *reply, size_t cap)
{
	char cmd[64], rc[16];

	if (fd < 0)
		return PMI_ERR_INIT;
	if (send_all(req, strlen(req)) || read_line(reply, cap) ||
	    word(reply, "cmd", cmd, sizeof(cmd)) || strcmp(cmd, want))
		return PMI_FAIL;
	if (!word(reply, "rc", rc, sizeof(rc)) && strcmp(rc, "0"))
		return PMI_FAIL;
	return PMI_SUCCESS;
}

static int env_int(const char *name, int *v)
{
	const char *s = getenv(name);
	char *end;
	long n;

	if (!s || !*s)
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n < 0 || n > 0x7fffffff)
		return -1;
	*v = (int)n;
	return 0;
}

/* This rank's node-mates from (vector,(first,nodes,ranks),...). */
static int clique_from(const char *map)
{
	const char *p = strstr(map, "(vector");
	int r = 0, mynode = -1;
	int *v;

	if (!p || !(v = calloc((size_t)size, sizeof(*v))))
		return -1;
	p += 7;
	/* every rank's node, then those of ours */
	int *node_of = calloc((size_t)size, sizeof(*node_of));

	if (!node_of) {
		free(v);
		return -1;
	}
	while (r < size && (p = strchr(p, '('))) {
		int first, nodes, per;

		if (sscanf(p, "(%d,%d,%d)", &first, &nodes, &per) != 3 ||
		    nodes <= 0 || per <= 0)
			break;
		for (int n = 0; n < nodes && r < size; n++)
			for (int k = 0; k < per && r < size; k++)
				node_of[r++] = first + n;
		p++;
	}
	if (r < size || rank >= size) {
		free(v);
		free(node_of);
		return -1;
	}
	mynode = node_of[rank];
	nclique = 0;
	for (int k = 0; k < size; k++)
		if (node_of[k] == mynode)
			v[nclique++] = k;
	free(node_of);
	free(clique);
	clique = v;
	return 0;
}

int PMI_Init(int *spawned)
{
	char reply[LINE_MAX_PMI], v[LINE_MAX_PMI];
	char req[512];

	if (spawned)
		*spawned = 0;
	if (initialized)
		return PMI_SUCCESS;
	if (env_int("PMI_FD", &fd) || env_int("PMI_RANK", &rank) ||
	    env_int("PMI_SIZE", &size) || size < 1 || rank >= size) {
		fd = -1;
		return PMI_ERR_INIT;
	}
	if (call("cmd=init pmi_version=1 pmi_subversion=1\n",
		 "response_to_init", reply, sizeof(reply)) ||
	    call("cmd=get_my_kvsname\n", "my_kvsname", reply,
		 sizeof(reply)) ||
	    word(reply, "kvsname", kvsname, sizeof(kvsname)))
		return PMI_FAIL;
	snprintf(req, sizeof(req), "cmd=get kvsname=%s "
		 "key=PMI_process_mapping\n", kvsname);
	if (call(req, "get_result", reply, sizeof(reply)) ||
	    word(reply, "value", v, sizeof(v)) || clique_from(v))
		return PMI_FAIL;
	initialized = 1;
	return PMI_SUCCESS;
}

int PMI_Initialized(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	*out = initialized;
	return PMI_SUCCESS;
}

int PMI_Finalize(void)
{
	char reply[256];
	int rc;

	if (!initialized)
		return PMI_ERR_INIT;
	rc = call("cmd=finalize\n", "finalize_ack", reply, sizeof(reply));
	initialized = 0;
	return rc;
}

int PMI_Abort(int code, const char msg[])
{
	char req[600];
	size_t n;

	/* the message as one word: the protocol has no quoting */
	n = (size_t)snprintf(req, sizeof(req), "cmd=abort exitcode=%d", code);
	/* "N/A" is what Open MPI says when it has nothing to say */
	if (msg && *msg && strcmp(msg, "N/A")) {
		n += (size_t)snprintf(req + n, sizeof(req) - n, " msg=");
		for (const char *p = msg; *p && n < sizeof(req) - 2; p++)
			req[n++] = (*p == ' ' || *p == '\n' || *p == '=') ?
				   '_' : *p;
	}
	req[n++] = '\n';
	if (fd >= 0)
		send_all(req, n);
	_exit(code ? code : 1);
}

int PMI_Get_size(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	if (!initialized)
		return PMI_ERR_INIT;
	*out = size;
	return PMI_SUCCESS;
}

int PMI_Get_rank(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	if (!initialized)
		return PMI_ERR_INIT;
	*out = rank;
	return PMI_SUCCESS;
}

int PMI_Get_universe_size(int *out)
{
	return PMI_Get_size(out);
}

int PMI_Get_appnum(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	*out = 0;
	return initialized ? PMI_SUCCESS : PMI_ERR_INIT;
}

int PMI_Get_clique_size(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	if (!initialized)
		return PMI_ERR_INIT;
	*out = nclique;
	return PMI_SUCCESS;
}

int PMI_Get_clique_ranks(int ranks[], int length)
{
	if (!ranks || length < nclique)
		return PMI_ERR_INVALID_LENGTH;
	if (!initialized)
		return PMI_ERR_INIT;
	memcpy(ranks, clique, (size_t)nclique * sizeof(*ranks));
	return PMI_SUCCESS;
}

int PMI_KVS_Get_my_name(char name[], int length)
{
	if (!name || length < (int)strlen(kvsname) + 1)
		return PMI_ERR_INVALID_LENGTH;
	if (!initialized)
		return PMI_ERR_INIT;
	strcpy(name, kvsname);
	return PMI_SUCCESS;
}

int PMI_KVS_Get_name_length_max(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	*out = 256;
	return PMI_SUCCESS;
}

int PMI_KVS_Get_key_length_max(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	*out = 64;
	return PMI_SUCCESS;
}

int PMI_KVS_Get_value_length_max(int *out)
{
	if (!out)
		return PMI_ERR_INVALID_ARG;
	*out = 1024;
	return PMI_SUCCESS;
}

/* A word of the protocol: no space, newline or NUL in it. */
static int plain(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (s[n] == ' ' || s[n] == '\n' || s[n] == '\r' || n >= max)
			return 0;
	return 1;
}

/* A value: any bytes but newline and NUL (it ends the line). */
static int one_line(const char *s, size_t max)
{
	size_t n = strcspn(s, "\n\r");

	return !s[n] && n <= max;
}

int PMI_KVS_Put(const char name[], const char key[], const char value[])
{
	char req[LINE_MAX_PMI], reply[256];

	if (!name || !key || !value || !*key || !plain(key, 64) ||
	    !one_line(value, 1024) || !plain(name, 255))
		return PMI_ERR_INVALID_ARG;
	snprintf(req, sizeof(req), "cmd=put kvsname=%s key=%s value=%s\n",
		 name, key, value);
	return call(req, "put_result", reply, sizeof(reply));
}

int PMI_KVS_Commit(const char name[])
{
	(void)name; /* puts go to the server at once */
	return initialized ? PMI_SUCCESS : PMI_ERR_INIT;
}

int PMI_KVS_Get(const char name[], const char key[], char value[],
		int length)
{
	char req[LINE_MAX_PMI], reply[LINE_MAX_PMI];
	int rc;

	if (!name || !key || !value || length <= 0 || !plain(key, 64) ||
	    !plain(name, 255))
		return PMI_ERR_INVALID_ARG;
	snprintf(req, sizeof(req), "cmd=get kvsname=%s key=%s\n", name, key);
	if ((rc = call(req, "get_result", reply, sizeof(reply))))
		return rc;
	if (word(reply, "value", value, (size_t)length))
		return PMI_ERR_INVALID_LENGTH;
	return PMI_SUCCESS;
}

int PMI_Barrier(void)
{
	char reply[256];

	return call("cmd=barrier_in\n", "barrier_out", reply, sizeof(reply));
}
