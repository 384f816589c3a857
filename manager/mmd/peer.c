/*
 * peer.c — asking another manager replica (peer.h).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <munge.h>

#include "peer.h"

static int dial_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int dial_tcp(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char host[256], *port;
	int fd = -ECONNREFUSED;

	snprintf(host, sizeof(host), "%s", addr);
	if (!(port = strrchr(host, ':')))
		return -EINVAL;
	*port++ = '\0';
	if (getaddrinfo(host, port, &hints, &res))
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		fd = -ECONNREFUSED;
	}
	freeaddrinfo(res);
	return fd;
}

int mmd_peer_dial(const st_config_t *cfg, const st_host_t *m, int *tcp,
		  char *note, size_t notelen)
{
	char sock[1100];
	int fd;

	*tcp = 0;
	st_manager_socket(cfg, m, sock, sizeof(sock));
	fd = dial_unix(sock);
	if (fd < 0 && m->listen[0]) {
		fd = dial_tcp(m->listen);
		*tcp = 1;
	}
	if (fd < 0)
		snprintf(note, notelen, "manager %s: cannot connect: %s",
			 m->name, strerror(-fd));
	return fd;
}

int mmd_peer_send(int fd, int seal, const char *text, char *note,
		  size_t notelen)
{
	char pl[ST_SEAL_PAYLOAD_LEN + 1], *cred = NULL;
	uint8_t nonce[ST_SEAL_NONCE_BYTES], *sealed = NULL;
	uint32_t slen;
	int rc;

	if (!seal)
		return st_frame_send(fd, ST_FRAME_REQUEST, text,
				     (uint32_t)strlen(text));
	/* sealed: a credential bound to these bytes (protocol §2.6) */
	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce) ||
	    st_seal_payload(text, strlen(text), nonce, pl) ||
	    munge_encode(&cred, NULL, pl, (int)strlen(pl)) != EMUNGE_SUCCESS) {
		snprintf(note, notelen, "no MUNGE credential (is munged "
			 "running?)");
		free(cred);
		return -EACCES;
	}
	rc = st_seal_encode(cred, text, strlen(text), &sealed, &slen);
	free(cred);
	if (!rc)
		rc = st_frame_send(fd, ST_FRAME_SEALED, sealed, slen);
	free(sealed);
	return rc;
}
