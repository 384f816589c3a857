/*
 * dirs.c — the daemons' own directories, made or checked before use
 * (storm_proto.h: st_dir_ensure).  A daemon runs as root in paths an
 * unprivileged user may have prepared (a world-writable parent such as
 * /tmp): a directory someone else owns, one others may write into, or a
 * symbolic link to elsewhere, would let that user plant or redirect what
 * the daemon writes there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storm_proto.h"

static int check(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "%s is a symbolic link: a daemon's "
			 "directory must be a real one (remove the link; the "
			 "daemon makes the directory)", path);
		return -ELOOP;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory: remove it or "
			 "configure another path", path);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s belongs to uid %u, not to this "
			 "daemon's uid %u (made by someone else?): remove it "
			 "or give it to uid %u", path, (unsigned)st.st_uid,
			 (unsigned)geteuid(), (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(err, errlen, "%s is writable by others (mode %04o): "
			 "chmod go-w %s", path, (unsigned)(st.st_mode & 07777),
			 path);
		return -EPERM;
	}
	return 0;
}

int st_dir_ensure(const char *path, unsigned mode, char *err, size_t errlen)
{
	char p[1200];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(p)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(p, path, n + 1);
	/* missing parents: searchable by all (the job directories below a
	 * node's RAM disk are entered by their users) */
	for (size_t i = 1; i < n; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) && errno != EEXIST) {
			int e = errno;

			snprintf(err, errlen, "cannot make %s: %s", p,
				 strerror(e));
			return -e;
		}
		p[i] = '/';
	}
	if (mkdir(p, (mode_t)mode) && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "cannot make %s: %s", p, strerror(e));
		return -e;
	}
	return check(p, err, errlen);
}
