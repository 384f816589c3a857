/*
 * key.c — the cluster's secret key (st_key_load, st_key_write in
 * storm_proto.h): the fabric's MACs are made with it, so a process
 * without it cannot speak on the machine's networks.  Like corosync's
 * authkey: 32 random bytes in a file root alone may read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <sodium.h>

#include "storm_proto.h"

int st_key_load(const char *path, uint8_t key[ST_KEY_BYTES], char *err,
		size_t errlen)
{
	struct stat st;
	ssize_t n;
	uint8_t extra;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "auth_key %s: %s%s", path,
			 strerror(errno), errno == ELOOP ?
			 " (a symbolic link: name the file itself)" :
			 errno == ENOENT ? " (make one with storm-keygen "
					   "and copy it to every host)" : "");
		return -STORM_ECONFIG;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "auth_key %s: not a regular file", path);
		goto bad;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "auth_key %s: belongs to uid %u, not to "
			 "this daemon's uid %u: chown %u it", path,
			 (unsigned)st.st_uid, (unsigned)geteuid(),
			 (unsigned)geteuid());
		goto bad;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "auth_key %s: mode %04o lets others "
			 "read or write it: chmod 0400 it (and make a new key: "
			 "this one may be known)", path,
			 (unsigned)(st.st_mode & 07777));
		goto bad;
	}
	n = read(fd, key, ST_KEY_BYTES);
	if (n != ST_KEY_BYTES || read(fd, &extra, 1) != 0) {
		snprintf(err, errlen, "auth_key %s: %lld bytes, a key has "
			 "exactly %d: make one with storm-keygen", path,
			 (long long)st.st_size, ST_KEY_BYTES);
		sodium_memzero(key, ST_KEY_BYTES);
		goto bad;
	}
	close(fd);
	return 0;
bad:
	close(fd);
	return -STORM_ECONFIG;
}

int st_key_check(const st_config_t *cfg, char *err, size_t errlen)
{
	uint8_t key[ST_KEY_BYTES];
	int rc;

	if (!cfg->auth_key[0]) {
		qb_log(LOG_WARNING, "auth_key is not set: the fabric is not "
		       "authenticated, anyone who reaches its addresses can "
		       "speak on it (docs/security.md)");
		return 0;
	}
	rc = st_key_load(cfg->auth_key, key, err, errlen);
	sodium_memzero(key, sizeof(key));
	return rc;
}

int st_key_write(const char *path, char *err, size_t errlen)
{
	uint8_t key[ST_KEY_BYTES];
	int fd, rc = 0;

	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium cannot start");
		return -ENOMEM;
	}
	randombytes_buf(key, sizeof(key));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0400);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (a key is there: remove it first "
					   "to replace it on every host)" : "");
		rc = -errno;
	} else if (write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) ||
		   fsync(fd)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -EIO;
		unlink(path);
	}
	if (fd >= 0)
		close(fd);
	sodium_memzero(key, sizeof(key));
	return rc;
}
