/*
 * log.c — one place that routes a daemon's libqb logging to where the
 * configuration says: stderr, syslog, or a file, at a level.
 */
#include <errno.h>
#include <string.h>
#include <syslog.h>

#include <qb/qblog.h>

#include "storm_proto.h"

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
