/*
 * peer.c — asking another manager replica (peer.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <munge.h>

#include "peer.h"

#define CONNECT_TIMEOUT_MS 3000
#define SEND_TIMEOUT_S 10

/* connect() within a bound (a dead host's TCP would take minutes), then
 * blocking with sends bounded by SEND_TIMEOUT_S (a peer that stopped
 * reading must not hold a worker for ever).  A unix socket connects
 * blocking, bounded by SO_SNDTIMEO: non-blocking, a full listen backlog
 * would fail at once (EAGAIN) instead of waiting for room.  0 or
 * -errno. */
static int connect_bounded(int fd, const struct sockaddr *sa, socklen_t len)
{
	int fl = fcntl(fd, F_GETFL), err = 0;
	socklen_t elen = sizeof(err);
	struct timeval tv = { .tv_sec = SEND_TIMEOUT_S };
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	if (sa->sa_family == AF_UNIX)
		return connect(fd, sa, len) < 0 ? -errno : 0;
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS && errno != EAGAIN)
			return -errno;
		if (poll(&p, 1, CONNECT_TIMEOUT_MS) != 1)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			return -errno;
		if (err)
			return -err;
	}
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

static int dial_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if ((rc = connect_bounded(fd, (struct sockaddr *)&sa, sizeof(sa)))) {
		close(fd);
		return rc;
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
		if (!connect_bounded(fd, ai->ai_addr, ai->ai_addrlen))
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
