/*
 * peer.h — asking another manager replica, as root, from a worker thread:
 * the history backfill's pages (backfill.c) and a job's inputs
 * (fetch.c).  A replica is reached on its local socket when it is on
 * this host, else on its TCP address, where the first request is sealed
 * with root's MUNGE credential (docs/protocol.md §2.6).
 */
#ifndef STORM_MMD_PEER_H
#define STORM_MMD_PEER_H

#include <stddef.h>

#include <storm_proto.h>

/* Connect to manager m: its unix socket, else its TCP listen address
 * (*tcp set).  The fd, or -errno with note saying why. */
int mmd_peer_dial(const st_config_t *cfg, const st_host_t *m, int *tcp,
		  char *note, size_t notelen);
/* Send the request text on fd: sealed (a fresh credential bound to its
 * bytes) or plain.  0, or -errno with note saying why. */
int mmd_peer_send(int fd, int seal, const char *text, char *note,
		  size_t notelen);

#endif
