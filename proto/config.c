/*
 * config.c — the cluster configuration file (INI) that storm-mm, storm-nm
 * and stormctl all read: one file describes every head node, compute node
 * and the cluster's knobs, so the same file can be copied to every host.
 *
 * Parsed by libinih through ini_parse_stream() with our own line reader, so
 * the handler knows the line it is on and every error names "FILE:LINE".
 * Nothing is kept from a file that fails: st_config_load() frees what it
 * built and leaves *cfg zeroed.
 */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <ini.h>

#include "storm_proto.h"

struct parse {
	st_config_t *cfg;
	FILE *f;
	unsigned line;
	char *err;
	size_t errlen;
	int failed;
	unsigned failed_line;
	int rc;
	char *raw;      /* the whole line, as getline() read it */
	size_t rawcap;
};

static void perr(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void perr(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->failed)
		return; /* the first error is the one to fix */
	p->failed = 1;
	p->failed_line = p->line;
	p->rc = -STORM_ECONFIG;
	if (!p->err || !p->errlen)
		return;
	n = snprintf(p->err, p->errlen, "%s:%u: ", p->cfg->path, p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static st_host_t *host_of(struct parse *p, const char *kind,
			  const char *name);

/* Hand libinih one line at a time, counting them, so that every error
 * names its line.  Seeing the raw lines also lets us check what libinih
 * would silently cut (lines over its buffer, section names over its
 * limit) and register a host at its section header, so that a host
 * section without keys is not lost. */
static char *reader(char *buf, int size, void *stream)
{
	struct parse *p = stream;
	ssize_t n = getline(&p->raw, &p->rawcap, p->f);
	char *t, *end;

	if (n < 0)
		return NULL;
	p->line++;
	if (p->failed) {
		buf[0] = '\0'; /* read on for the line count, change nothing */
		return buf;
	}
	if (n >= size - 1) {
		perr(p, "line of %zd characters: at most %d per line", n,
		     size - 2);
		buf[0] = '\0';
		return buf;
	}
	memcpy(buf, p->raw, (size_t)n + 1);
	for (t = p->raw; *t == ' ' || *t == '\t'; t++)
		;
	if (*t == '[' && (end = strchr(t, ']'))) {
		char kind[16], *name;

		*end = '\0';
		t++;
		name = strchr(t, ' ');
		if (name && (size_t)(name - t) < sizeof(kind)) {
			memcpy(kind, t, (size_t)(name - t));
			kind[name - t] = '\0';
			while (*name == ' ')
				name++;
			if (!strcmp(kind, "manager") || !strcmp(kind, "node"))
				host_of(p, kind, name);
		}
	}
	return buf;
}

static int parse_u32(struct parse *p, const char *key, const char *v,
		     uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || x < min || x > max) {
		perr(p, "%s = \"%s\": want a whole number in [%u, %u]", key, v,
		     min, max);
		return 0;
	}
	*out = (uint32_t)x;
	return 1;
}

/* "0, 1000, 1001": uids, at most 32. */
static int parse_admins(struct parse *p, const char *v, st_config_t *c)
{
	char buf[256], *save = NULL;

	if (strlen(v) >= sizeof(buf)) {
		perr(p, "admins: value longer than %zu characters",
		     sizeof(buf) - 1);
		return 0;
	}
	strcpy(buf, v);
	c->nadmins = 0;
	for (char *t = strtok_r(buf, ", ", &save); t;
	     t = strtok_r(NULL, ", ", &save)) {
		uint32_t uid;

		if (c->nadmins == 32) {
			perr(p, "admins: at most 32 uids");
			return 0;
		}
		if (!parse_u32(p, "admins", t, 0, 4294967294u, &uid))
			return 0;
		c->admins[c->nadmins++] = uid;
	}
	return 1;
}

static int copy_str(struct parse *p, const char *key, const char *v,
		    char *dst, size_t cap)
{
	if (strlen(v) >= cap) {
		perr(p, "%s: value longer than %zu characters", key, cap - 1);
		return 0;
	}
	strcpy(dst, v);
	return 1;
}

static int parse_level(struct parse *p, const char *v, int *out)
{
	static const struct { const char *name; int level; } levels[] = {
		{"error", LOG_ERR}, {"warning", LOG_WARNING},
		{"notice", LOG_NOTICE}, {"info", LOG_INFO},
		{"debug", LOG_DEBUG},
	};

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcmp(v, levels[i].name) == 0) {
			*out = levels[i].level;
			return 1;
		}
	}
	perr(p, "log_level = \"%s\": want error, warning, notice, info or "
	     "debug", v);
	return 0;
}

/* The [cluster] keys that are whole numbers: name, bounds, field. */
static const struct u32_key {
	const char *name;
	uint32_t min, max;
	size_t off;
} u32_keys[] = {
	{ "slice_us", 100, 10000000, offsetof(st_config_t, slice_us) },
	{ "micro_slices", 1, 64, offsetof(st_config_t, micro_slices) },
	{ "idle_slices", 0, 1000000, offsetof(st_config_t, idle_slices) },
	{ "hb_period_ms", 1, 60000, offsetof(st_config_t, hb_period_ms) },
	{ "hb_timeout_ms", 2, 600000, offsetof(st_config_t, hb_timeout_ms) },
	{ "chunk_kib", 4, 65536, offsetof(st_config_t, chunk_kib) },
	{ "slots", 1, 64, offsetof(st_config_t, slots) },
	{ "heartbeat_kib", 1, 1024, offsetof(st_config_t, heartbeat_kib) },
	{ "output_kib", 4, 4096, offsetof(st_config_t, output_kib) },
	{ "bcs_kib", 16, 16384, offsetof(st_config_t, bcs_kib) },
	{ "pmi_kib", 4, 16384, offsetof(st_config_t, pmi_kib) },
	{ "ckpt_keep", 1, 64, offsetof(st_config_t, ckpt_keep) },
	{ "ckpt_chain", 0, 64, offsetof(st_config_t, ckpt_chain) },
	{ "ckpt_mtbf_h", 1, 1000000, offsetof(st_config_t, ckpt_mtbf_h) },
	{ "ckpt_quota_mib", 0, 1u << 30, offsetof(st_config_t, ckpt_quota_mib) },
	{ "ckpt_linger_s", 0, 31536000, offsetof(st_config_t, ckpt_linger_s) },
	{ "ckpt_buddy_kib", 0, 16384, offsetof(st_config_t, ckpt_buddy_kib) },
	{ "clients_max", 1, 1000000, offsetof(st_config_t, clients_max) },
	{ "clients_root_reserved", 0, 10000,
	  offsetof(st_config_t, clients_root_reserved) },
	{ "clients_per_user", 1, 1000000,
	  offsetof(st_config_t, clients_per_user) },
	{ "clients_per_address", 1, 1000000,
	  offsetof(st_config_t, clients_per_address) },
	{ "client_idle_ms", 100, 86400000,
	  offsetof(st_config_t, client_idle_ms) },
	{ "client_frame_ms", 100, 3600000,
	  offsetof(st_config_t, client_frame_ms) },
	{ "max_pending_jobs", 1, 100000000,
	  offsetof(st_config_t, max_pending_jobs) },
	{ "max_pending_per_user", 1, 100000000,
	  offsetof(st_config_t, max_pending_per_user) },
	{ "max_input_mib", 1, 1048576, offsetof(st_config_t, max_input_mib) },
	/* below a third of 8 GiB: a snapshot being replaced and the log
	 * beside it must fit next to the state in LMDB's map (16 GiB, the
	 * history's records beside them) */
	{ "state_budget_mib", 1, 2730,
	  offsetof(st_config_t, state_budget_mib) },
	{ "realtime", 0, 99, offsetof(st_config_t, realtime) },
	{ "kill_grace_ms", 0, 3600000, offsetof(st_config_t, kill_grace_ms) },
	{ "mpl", 1, 16, offsetof(st_config_t, mpl) },
	{ "quantum_us", 100, 600000000, offsetof(st_config_t, quantum_us) },
	/* retention: ended jobs kept in the replicated state, then in the
	 * history (docs/history.md) */
	{ "job_retention", 1, 10000000, offsetof(st_config_t, job_retention) },
	{ "job_retention_s", 1, 31536000,
	  offsetof(st_config_t, job_retention_s) },
	{ "history_jobs", 1, 100000000, offsetof(st_config_t, history_jobs) },
	{ "history_days", 1, 36500, offsetof(st_config_t, history_days) },
};

static int cluster_key(struct parse *p, const char *k, const char *v)
{
	st_config_t *c = p->cfg;

	for (size_t i = 0; i < sizeof(u32_keys) / sizeof(u32_keys[0]); i++)
		if (!strcmp(k, u32_keys[i].name))
			return parse_u32(p, k, v, u32_keys[i].min,
					 u32_keys[i].max, (uint32_t *)(void *)
					 ((char *)c + u32_keys[i].off));

	if (!strcmp(k, "name"))
		return copy_str(p, k, v, c->cluster, sizeof(c->cluster));
	if (!strcmp(k, "provider"))
		return copy_str(p, k, v, c->provider, sizeof(c->provider));
	if (!strcmp(k, "ramdisk"))
		return copy_str(p, k, v, c->ramdisk, sizeof(c->ramdisk));
	if (!strcmp(k, "state_dir"))
		return copy_str(p, k, v, c->state_dir, sizeof(c->state_dir));
	if (!strcmp(k, "admins"))
		return parse_admins(p, v, c);
	if (!strcmp(k, "munge_socket"))
		return copy_str(p, k, v, c->munge_socket,
				sizeof(c->munge_socket));
	if (!strcmp(k, "state_sync")) {
		if (strcmp(v, "nometasync") && strcmp(v, "nosync")) {
			perr(p, "state_sync = \"%s\": want nometasync (the "
			     "default) or nosync", v);
			return 0;
		}
		return copy_str(p, k, v, c->state_sync,
				sizeof(c->state_sync));
	}
	if (!strcmp(k, "replication")) {
		if (strcmp(v, "auto") && strcmp(v, "corosync") &&
		    strcmp(v, "none"))
		{
			perr(p, "replication = \"%s\": want auto, corosync or "
			     "none", v);
			return 0;
		}
		return copy_str(p, k, v, c->replication,
				sizeof(c->replication));
	}
	if (!strcmp(k, "sched_policy")) {
		if (strcmp(v, "fcfs") && strcmp(v, "backfill") &&
		    strcmp(v, "gang")) {
			perr(p, "sched_policy = \"%s\": no such policy; want "
			     "fcfs, backfill or gang", v);
			return 0;
		}
		return copy_str(p, k, v, c->sched_policy,
				sizeof(c->sched_policy));
	}
	if (!strcmp(k, "placement")) {
		if (strcmp(v, "buddy") && strcmp(v, "molar")) {
			perr(p, "placement = \"%s\": want buddy or molar", v);
			return 0;
		}
		return copy_str(p, k, v, c->placement, sizeof(c->placement));
	}
	if (!strcmp(k, "auth_key"))
		return copy_str(p, k, v, c->auth_key, sizeof(c->auth_key));
	if (!strcmp(k, "cpu_bind")) {
		if (strcmp(v, "auto") && strcmp(v, "none")) {
			perr(p, "cpu_bind = \"%s\": want auto (ranks bound to "
			     "their cpus where a node's cpus are its "
			     "machine's, the default) or none", v);
			return 0;
		}
		return copy_str(p, k, v, c->cpu_bind, sizeof(c->cpu_bind));
	}
	if (!strcmp(k, "ckpt_dir")) {
		if (v[0] != '/') {
			perr(p, "ckpt_dir = \"%s\": want an absolute path (the "
			     "node-local directory checkpoint images are "
			     "written to; default: the ramdisk)", v);
			return 0;
		}
		return copy_str(p, k, v, c->ckpt_dir, sizeof(c->ckpt_dir));
	}
	if (!strcmp(k, "ckpt_shared_dir")) {
		if (v[0] != '/') {
			perr(p, "ckpt_shared_dir = \"%s\": want an absolute "
			     "path (a directory every node mounts, where a copy "
			     "of each checkpoint image goes: L3)", v);
			return 0;
		}
		return copy_str(p, k, v, c->ckpt_shared_dir,
				sizeof(c->ckpt_shared_dir));
	}
	if (!strcmp(k, "pmi_library")) {
		if (v[0] != '/') {
			perr(p, "pmi_library = \"%s\": want an absolute path "
			     "(libstorm-pmi.so.0, which Open MPI's ranks load)",
			     v);
			return 0;
		}
		return copy_str(p, k, v, c->pmi_library,
				sizeof(c->pmi_library));
	}
	if (!strcmp(k, "mpi_env")) {
		/* words K=V, K a variable name */
		for (const char *w = v; *w;) {
			size_t n = strcspn(w, " \t"), e = strcspn(w, "=");

			if (n && (e == 0 || e >= n ||
				  strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "abcdefghijklmnopqrstuvwxyz"
					 "0123456789_") != e)) {
				perr(p, "mpi_env = \"%s\": want words "
				     "NAME=VALUE separated by spaces", v);
				return 0;
			}
			w += n;
			w += strspn(w, " \t");
		}
		return copy_str(p, k, v, c->mpi_env, sizeof(c->mpi_env));
	}
	if (!strcmp(k, "mpich_abi_dir")) {
		if (v[0] != '/') {
			perr(p, "mpich_abi_dir = \"%s\": want an absolute path "
			     "(the directory holding libmpich.so.12)", v);
			return 0;
		}
		return copy_str(p, k, v, c->mpich_abi_dir,
				sizeof(c->mpich_abi_dir));
	}
	if (!strcmp(k, "mpi_default")) {
		if (strcmp(v, "auto") && strcmp(v, "none") &&
		    strcmp(v, "pmi1") && strcmp(v, "pmix") && strcmp(v, "bcs")) {
			perr(p, "mpi_default = \"%s\": want auto (from the "
			     "program's libraries, the default), none, pmi1, "
			     "pmix or bcs", v);
			return 0;
		}
		return copy_str(p, k, v, c->mpi_default,
				sizeof(c->mpi_default));
	}
	if (!strcmp(k, "cgroup")) {
		if (strcmp(v, "auto") && strcmp(v, "none")) {
			perr(p, "cgroup = \"%s\": want auto (jobs in per-job "
			     "cgroups, the default) or none", v);
			return 0;
		}
		return copy_str(p, k, v, c->cgroup, sizeof(c->cgroup));
	}
	if (!strcmp(k, "run_dir"))
		return copy_str(p, k, v, c->run_dir, sizeof(c->run_dir));
	if (!strcmp(k, "log"))
		return copy_str(p, k, v, c->log_target, sizeof(c->log_target));
	if (!strcmp(k, "log_level"))
		return parse_level(p, v, &c->log_level);
	perr(p, "[cluster]: unknown key \"%s\" (see docs/config.md)", k);
	return 0;
}

/* The host of section "manager NAME" or "node NAME", added on first use. */
static st_host_t *host_of(struct parse *p, const char *kind, const char *name)
{
	st_config_t *c = p->cfg;
	int mgr = !strcmp(kind, "manager");
	st_host_t **arr = mgr ? &c->managers : &c->nodes;
	uint32_t *n = mgr ? &c->nmanagers : &c->nnodes;
	st_host_t *h;

	for (uint32_t i = 0; i < *n; i++)
		if (!strcmp((*arr)[i].name, name))
			return &(*arr)[i];
	/* libinih keeps 49 characters of a section name ("node " + name) */
	if (!*name || strlen(name) > ST_HOST_NAME_MAX ||
	    strpbrk(name, " \t/")) {
		perr(p, "[%s %s]: a host name is 1 to %d characters without "
		     "blanks or '/'", kind, name, ST_HOST_NAME_MAX);
		return NULL;
	}
	if (st_config_host(c, name)) {
		perr(p, "[%s %s]: the name is already used by another host",
		     kind, name);
		return NULL;
	}
	if (c->nmanagers + c->nnodes >= ST_MAX_NODES) {
		perr(p, "too many hosts (at most %d)", ST_MAX_NODES);
		return NULL;
	}
	h = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!h) {
		p->rc = -ENOMEM;
		p->failed = 1;
		return NULL;
	}
	*arr = h;
	h = &h[(*n)++];
	memset(h, 0, sizeof(*h));
	strcpy(h->name, name);
	h->cpus = 1;
	return h;
}

static int host_key(struct parse *p, const char *kind, const char *name,
		    const char *k, const char *v)
{
	st_host_t *h = host_of(p, kind, name);

	if (!h)
		return 0;
	if (!strcmp(k, "address"))
		return copy_str(p, k, v, h->address, sizeof(h->address));
	if (!strcmp(k, "listen") && !strcmp(kind, "manager"))
		return copy_str(p, k, v, h->listen, sizeof(h->listen));
	if (!strcmp(k, "metrics_listen") && !strcmp(kind, "manager"))
		return copy_str(p, k, v, h->metrics, sizeof(h->metrics));
	if (!strcmp(k, "munge_socket") && !strcmp(kind, "manager"))
		return copy_str(p, k, v, h->munge_socket,
				sizeof(h->munge_socket));
	if (!strcmp(k, "cpus") && !strcmp(kind, "node"))
		return parse_u32(p, k, v, 1, 4096, &h->cpus);
	perr(p, "[%s %s]: unknown key \"%s\" (see docs/config.md)", kind, name,
	     k);
	return 0;
}

static int handler(void *user, const char *section, const char *k,
		   const char *v)
{
	struct parse *p = user;
	const char *name = strchr(section, ' ');
	char kind[16];

	if (p->failed)
		return 0;
	if (!strcmp(section, "cluster"))
		return cluster_key(p, k, v);
	if (name && (size_t)(name - section) < sizeof(kind)) {
		memcpy(kind, section, (size_t)(name - section));
		kind[name - section] = '\0';
		while (*name == ' ')
			name++;
		if (!strcmp(kind, "manager") || !strcmp(kind, "node"))
			return host_key(p, kind, name, k, v);
	}
	perr(p, "unknown section [%s]: want [cluster], [manager NAME] or "
	     "[node NAME]", section);
	return 0;
}

static void defaults(st_config_t *c)
{
	strcpy(c->cluster, "storm");
	strcpy(c->provider, "tcp");
	c->slice_us = 10000;
	c->micro_slices = 4;
	c->idle_slices = 32;
	c->hb_period_ms = 50;
	c->hb_timeout_ms = 500;
	c->chunk_kib = 1024;
	c->slots = 4;
	c->output_kib = 64;
	c->heartbeat_kib = 64;
	c->bcs_kib = 512;
	c->pmi_kib = 64;
	c->ckpt_keep = 2;
	c->ckpt_chain = 8;
	c->ckpt_mtbf_h = 720;
	c->ckpt_linger_s = 86400;
	c->ckpt_buddy_kib = 256;
	c->clients_max = 1024;
	c->clients_root_reserved = 32;
	c->clients_per_user = 64;
	c->clients_per_address = 64;
	c->client_idle_ms = 300000;
	c->client_frame_ms = 10000;
	c->max_pending_jobs = 100000;
	c->max_pending_per_user = 50000;
	c->max_input_mib = 1024;
	strcpy(c->ramdisk, "/dev/shm/storm");
	strcpy(c->cgroup, "auto");
	strcpy(c->mpi_default, "auto");
	strcpy(c->cpu_bind, "auto");
	snprintf(c->mpich_abi_dir, sizeof(c->mpich_abi_dir), "%s",
		 STORM_MPICH_ABI_DIR);
	snprintf(c->pmi_library, sizeof(c->pmi_library), "%s",
		 STORM_PMI_LIBRARY);
	c->kill_grace_ms = 10000;
	strcpy(c->state_dir, "/var/lib/storm");
	strcpy(c->replication, "auto");
	strcpy(c->state_sync, "nometasync");
	c->state_budget_mib = 2048;
	c->job_retention = 10000;
	c->job_retention_s = 3600;
	c->history_jobs = 1000000;
	c->history_days = 90;
	strcpy(c->sched_policy, "fcfs");
	c->mpl = 1;
	c->quantum_us = 0; /* 0: ten slices */
	strcpy(c->placement, "buddy");
	strcpy(c->run_dir, "/run/storm");
	strcpy(c->log_target, "stderr");
	c->log_level = LOG_INFO;
}

/* What a file that parsed must still hold together. */
static int check(struct parse *p)
{
	st_config_t *c = p->cfg;
	const char *path = c->path;
	uint32_t id = 0;

	if (c->nmanagers == 0 || c->nnodes == 0) {
		snprintf(p->err ? p->err : (char[1]){0}, p->err ? p->errlen : 1,
			 "%s: needs at least one [manager NAME] and one "
			 "[node NAME] section", path);
		return -STORM_ECONFIG;
	}
	for (uint32_t i = 0; i < c->nmanagers + c->nnodes; i++) {
		int mgr = i < c->nmanagers;
		st_host_t *h = mgr ? &c->managers[i] :
				     &c->nodes[i - c->nmanagers];

		if (!h->address[0]) {
			if (p->err)
				snprintf(p->err, p->errlen,
					 "%s: [%s %s] has no address",
					 path, mgr ? "manager" : "node",
					 h->name);
			return -STORM_ECONFIG;
		}
		h->world_id = id++;
	}
	if (c->mpl > 1 && strcmp(c->sched_policy, "gang")) {
		if (p->err)
			snprintf(p->err, p->errlen, "%s: [cluster] mpl = %u "
				 "needs sched_policy = gang (%s runs one job "
				 "per PE); set mpl = 1 or the gang policy",
				 path, c->mpl, c->sched_policy);
		return -STORM_ECONFIG;
	}
	if (!c->quantum_us)
		c->quantum_us = c->slice_us * 10u;
	if (c->quantum_us % c->slice_us ||
	    c->quantum_us / c->slice_us > 1000000u) {
		if (p->err)
			snprintf(p->err, p->errlen, "%s: [cluster] quantum_us "
				 "= %u is not a whole number of slices of "
				 "slice_us = %u (at most 1000000 of them); "
				 "give a multiple of slice_us", path,
				 c->quantum_us, c->slice_us);
		return -STORM_ECONFIG;
	}
	if (c->hb_timeout_ms <= c->hb_period_ms) {
		if (p->err)
			snprintf(p->err, p->errlen,
				 "%s: [cluster] hb_timeout_ms (%u) must be "
				 "larger than hb_period_ms (%u)", path,
				 c->hb_timeout_ms, c->hb_period_ms);
		return -STORM_ECONFIG;
	}
	return 0;
}

int st_config_load(const char *path, st_config_t *cfg, char *err,
		   size_t errlen)
{
	struct parse p = { .cfg = cfg, .err = err, .errlen = errlen };
	int rc;

	if (!path || !cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	if (strlen(path) >= sizeof(cfg->path)) {
		if (err)
			snprintf(err, errlen, "configuration path too long");
		return -ENAMETOOLONG;
	}
	strcpy(cfg->path, path);
	defaults(cfg);
	p.f = fopen(path, "r");
	if (!p.f) {
		rc = -errno;
		if (err)
			snprintf(err, errlen, "%s: cannot open: %s (give "
				 "--config FILE or set STORM_CONFIG)", path,
				 strerror(errno));
		memset(cfg, 0, sizeof(*cfg));
		return rc;
	}
	rc = ini_parse_stream(reader, &p, handler, &p);
	fclose(p.f);
	free(p.raw);
	if (rc > 0 && (!p.failed || (unsigned)rc < p.failed_line)) {
		/* a syntax error before the first error we saw comes first */
		p.failed = 0;
		p.line = (unsigned)rc;
		perr(&p, "syntax error (want [section] or key = value)");
	}
	rc = p.failed ? p.rc : (rc < 0 ? -EIO : 0);
	if (!rc)
		rc = check(&p);
	if (rc) {
		st_config_free(cfg);
		return rc;
	}
	return 0;
}

void st_config_free(st_config_t *cfg)
{
	if (!cfg)
		return;
	free(cfg->managers);
	free(cfg->nodes);
	memset(cfg, 0, sizeof(*cfg));
}

const st_host_t *st_config_host(const st_config_t *cfg, const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (uint32_t i = 0; i < cfg->nmanagers; i++)
		if (!strcmp(cfg->managers[i].name, name))
			return &cfg->managers[i];
	for (uint32_t i = 0; i < cfg->nnodes; i++)
		if (!strcmp(cfg->nodes[i].name, name))
			return &cfg->nodes[i];
	return NULL;
}

void st_manager_socket(const st_config_t *cfg, const st_host_t *m, char *out,
		       size_t cap)
{
	snprintf(out, cap, "%s/storm-mm-%s.sock", cfg->run_dir, m->name);
}
