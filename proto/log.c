/*
 * log.c — one place that routes a daemon's libqb logging to where the
 * configuration says: stderr, syslog, or a file, at a level.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <qb/qblog.h>

#include "storm_proto.h"

/* A log file is private (it names users, jobs and paths): made 0600, or
 * an existing one of ours made so; one that is not a regular file of
 * ours (a planted link) is refused. */
static int private_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
				    O_CLOEXEC | O_NONBLOCK, 0600), rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid())
		rc = -EPERM;
	else if ((st.st_mode & 077) && fchmod(fd, st.st_mode & 0600))
		rc = -errno;
	close(fd);
	return rc;
}

int st_log_setup(const st_config_t *cfg, const char *ident)
{
	int level = cfg ? cfg->log_level : LOG_INFO;
	const char *target = cfg ? cfg->log_target : "stderr";
	int32_t t;

	qb_log_init(ident, LOG_DAEMON, level);
	qb_log_ctl(QB_LOG_SYSLOG, QB_LOG_CONF_ENABLED, QB_FALSE);
	qb_log_format_set(QB_LOG_STDERR, "%t %p %b");
	if (!strcmp(target, "stderr")) {
		t = QB_LOG_STDERR;
	} else if (!strcmp(target, "syslog")) {
		t = QB_LOG_SYSLOG;
	} else {
		int rc = private_file(target);

		if (rc) {
			fprintf(stderr, "%s: log %s: %s\n", ident, target,
				rc == -EPERM ? "not a regular file of this "
				"daemon's user: remove it" : strerror(-rc));
			return rc;
		}
		t = qb_log_file_open(target);
		if (t < 0)
			return t;
		qb_log_format_set(t, "%t %N[%P] %p %b");
	}
	qb_log_filter_ctl(t, QB_LOG_FILTER_ADD, QB_LOG_FILTER_FILE, "*",
			  level);
	qb_log_ctl(t, QB_LOG_CONF_ENABLED, QB_TRUE);
	/* the blackbox keeps recent debug messages for a crash dump */
	qb_log_filter_ctl(QB_LOG_BLACKBOX, QB_LOG_FILTER_ADD,
			  QB_LOG_FILTER_FILE, "*", LOG_DEBUG);
	qb_log_ctl(QB_LOG_BLACKBOX, QB_LOG_CONF_SIZE, 1 << 20);
	qb_log_ctl(QB_LOG_BLACKBOX, QB_LOG_CONF_ENABLED, QB_TRUE);
	return 0;
}
