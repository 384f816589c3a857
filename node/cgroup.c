/*
 * cgroup.c — a cgroup per job (cgroup.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <qb/qblog.h>
#include <sodium.h>

#include "cgroup.h"

/* Write val into dir/file.  0 or -errno. */
static int put(const char *dir, const char *file, const char *val)
{
	char path[2400];
	ssize_t n;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The number after "key " in dir/file (a flat-keyed cgroup file), or
 * the file's first number when key is NULL.  0 or -errno. */
static int get(const char *dir, const char *file, const char *key,
	       uint64_t *v)
{
	char path[1400], line[256];
	size_t klen = key ? strlen(key) : 0;
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!key || (!strncmp(line, key, klen) && line[klen] == ' ')) {
			*v = strtoull(line + klen, NULL, 10);
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

/* Where a hierarchy is mounted: cgroup2 (v1_ctl NULL), or the v1 one
 * carrying controller v1_ctl. */
static int mount_of(const char *v1_ctl, char *out, size_t cap)
{
	char dev[256], dir[1024], type[64], opts[1024], line[4096];
	FILE *f = fopen("/proc/self/mounts", "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %1023s %63s %1023s", dev, dir, type,
			   opts) != 4)
			continue;
		if (!v1_ctl && !strcmp(type, "cgroup2")) {
			snprintf(out, cap, "%s", dir);
			rc = 0;
			break;
		}
		if (v1_ctl && !strcmp(type, "cgroup")) {
			for (char *o = strtok(opts, ","); o;
			     o = strtok(NULL, ","))
				if (!strcmp(o, v1_ctl)) {
					snprintf(out, cap, "%s", dir);
					rc = 0;
				}
			if (!rc)
				break;
		}
	}
	fclose(f);
	return rc;
}

/* This process's cgroup on v2 (ctl NULL, the "0::" line) or on the v1
 * hierarchy of ctl. */
static int own_path(const char *ctl, char *out, size_t cap)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "ID:CONTROLLERS:PATH" ("0::PATH" on v2) */
		char *ctls = strchr(line, ':'), *path;
		int hit = 0;

		if (!ctls || !(path = strchr(ctls + 1, ':')))
			continue;
		*ctls++ = '\0';
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (!ctl)
			hit = !strcmp(line, "0") && !ctls[0];
		else
			for (char *c = strtok(ctls, ","); c && !hit;
			     c = strtok(NULL, ","))
				hit = !strcmp(c, ctl);
		if (hit) {
			snprintf(out, cap, "%s", strcmp(path, "/") ? path : "");
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* Make dir (0755) or take the one there: a real directory of ours. */
static int make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* What a previous incarnation left below dir: killed and removed (at
 * start: a restarted node manager holds no job). */
static void sweep(const struct nm_cgroups *cg, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct nm_cg jc = { 0 };

		if (strncmp(e->d_name, "job-", 4))
			continue;
		snprintf(jc.dir, sizeof(jc.dir), "%s/%s", dir, e->d_name);
		if (dir == cg->base)
			nm_cg_kill(cg, &jc);
		for (int i = 0; i < 50 && rmdir(jc.dir) && errno == EBUSY; i++)
			nap_ms(20);
		qb_log(LOG_NOTICE, "cgroup %s of a previous node manager "
		       "removed (its processes killed)", jc.dir);
	}
	closedir(d);
}

void nm_cg_init(struct nm_cgroups *cg, int wanted, const char *cluster,
		const char *node, const char *place)
{
	uint8_t h[16];
	char v2[1024], own[1024], top[2048], name[144];
	int rc;

	memset(cg, 0, sizeof(*cg));
	cg->wanted = wanted;
	if (!wanted) {
		snprintf(cg->why, sizeof(cg->why), "cgroup = none in the "
			 "configuration");
		return;
	}
	/* the same for every incarnation of this node manager (it sweeps
	 * what the last one left), another for any other on this host, even
	 * of a cluster and node of the same names (test clusters) */
	crypto_generichash(h, sizeof(h), (const uint8_t *)place, strlen(place),
			   NULL, 0);
	snprintf(name, sizeof(name), "storm-%s-%s-%02x%02x%02x%02x", cluster,
		 node, h[0], h[1], h[2], h[3]);
	if (mount_of(NULL, v2, sizeof(v2)) || own_path(NULL, own, sizeof(own))) {
		snprintf(cg->why, sizeof(cg->why), "no cgroup v2 hierarchy is "
			 "mounted (mount cgroup2, or set cgroup = none)");
		goto none;
	}
	snprintf(top, sizeof(top), "%s%s", v2, own);
	snprintf(cg->base, sizeof(cg->base), "%s/%s", top, name);
	if ((rc = make_dir(cg->base))) {
		snprintf(cg->why, sizeof(cg->why), "cannot make %s: %s",
			 cg->base, strerror(-rc));
		goto none;
	}
	sweep(cg, cg->base);
	{
		char path[2400];

		snprintf(path, sizeof(path), "%s/cgroup.kill", cg->base);
		cg->kill = access(path, W_OK) == 0;
	}
	/* memory on v2: enabled for the children of our cgroup and ours */
	{
		char ctl[4096] = "";
		FILE *f;
		char path[2200];

		snprintf(path, sizeof(path), "%s/cgroup.controllers", top);
		if ((f = fopen(path, "re"))) {
			if (!fgets(ctl, sizeof(ctl), f))
				ctl[0] = '\0';
			fclose(f);
		}
		if (strstr(ctl, "memory")) {
			cg->mode = NM_CG_V2;
			rc = put(top, "cgroup.subtree_control", "+memory");
			if (!rc)
				rc = put(cg->base, "cgroup.subtree_control",
					 "+memory");
			cg->memory = rc == 0;
			if (rc)
				snprintf(cg->why, sizeof(cg->why), "the memory "
					 "controller cannot be enabled below "
					 "%s: %s", top, strerror(-rc));
			goto out;
		}
	}
	/* the hybrid layout: memory on v1 */
	cg->mode = NM_CG_HYBRID;
	if (mount_of("memory", v2, sizeof(v2)) ||
	    own_path("memory", own, sizeof(own))) {
		snprintf(cg->why, sizeof(cg->why), "no memory controller on "
			 "cgroup v2 or v1");
		goto out;
	}
	snprintf(cg->mem, sizeof(cg->mem), "%s%s/%s", v2, own, name);
	if ((rc = make_dir(cg->mem))) {
		snprintf(cg->why, sizeof(cg->why), "cannot make %s: %s",
			 cg->mem, strerror(-rc));
		cg->mem[0] = '\0';
		goto out;
	}
	sweep(cg, cg->mem);
	cg->memory = 1;
out:
	qb_log(LOG_INFO, "jobs in cgroups below %s%s%s (%s%s%s)", cg->base,
	       cg->mem[0] ? " and " : "", cg->mem,
	       cg->mode == NM_CG_V2 ? "cgroup v2" : "hybrid: v2, memory on v1",
	       cg->memory ? "" : "; no memory limits: ",
	       cg->memory ? "" : cg->why);
	return;
none:
	cg->mode = NM_CG_NONE;
	qb_log(LOG_ERR, "no cgroups: %s; jobs will fail until it is fixed",
	       cg->why);
}

void nm_cg_fini(struct nm_cgroups *cg)
{
	if (cg->mode != NM_CG_NONE && cg->base[0])
		rmdir(cg->base);
	if (cg->mem[0])
		rmdir(cg->mem);
	cg->mode = NM_CG_NONE;
}

int nm_cg_create(const struct nm_cgroups *cg, uint32_t job,
		 uint64_t mem_limit, const char *node, struct nm_cg *out,
		 char *err, size_t errlen)
{
	char lim[32];
	int rc;

	memset(out, 0, sizeof(*out));
	if (cg->mode == NM_CG_NONE) {
		if (!cg->wanted && !mem_limit)
			return 0; /* cgroup = none: run uncontained */
		snprintf(err, errlen, "node %s: job %u: no cgroup for it: %s",
			 node, job, cg->why);
		return -ENOTSUP;
	}
	if (mem_limit && !cg->memory) {
		snprintf(err, errlen, "node %s: job %u: a memory limit needs "
			 "the memory controller: %s", node, job, cg->why);
		return -ENOTSUP;
	}
	snprintf(out->dir, sizeof(out->dir), "%s/job-%u", cg->base, job);
	if ((rc = make_dir(out->dir))) {
		snprintf(err, errlen, "node %s: job %u: cannot make its cgroup "
			 "%s: %s", node, job, out->dir, strerror(-rc));
		return rc;
	}
	out->made = 1;
	snprintf(out->procs[0], sizeof(out->procs[0]), "%s/cgroup.procs",
		 out->dir);
	snprintf(lim, sizeof(lim), "%llu", (unsigned long long)mem_limit);
	if (cg->mode == NM_CG_V2 && mem_limit) {
		rc = put(out->dir, "memory.max", lim);
		put(out->dir, "memory.swap.max", "0"); /* no swap instead */
	} else if (cg->mode == NM_CG_HYBRID && cg->mem[0]) {
		snprintf(out->mem, sizeof(out->mem), "%s/job-%u", cg->mem, job);
		rc = make_dir(out->mem);
		if (rc)
			out->mem[0] = '\0';
		else
			snprintf(out->procs[1], sizeof(out->procs[1]),
				 "%s/cgroup.procs", out->mem);
		if (!rc && mem_limit) {
			rc = put(out->mem, "memory.limit_in_bytes", lim);
			put(out->mem, "memory.memsw.limit_in_bytes", lim);
		}
	}
	if (rc) {
		snprintf(err, errlen, "node %s: job %u: cannot set up its "
			 "memory cgroup: %s", node, job, strerror(-rc));
		nm_cg_remove(out);
		return rc;
	}
	return 0;
}

int nm_cg_join(const struct nm_cg *jc)
{
	for (int k = 0; k < 2; k++) {
		int fd;

		if (!jc->procs[k][0])
			continue;
		/* "0": the writing process (async-signal-safe: no number to
		 * format) */
		if ((fd = open(jc->procs[k], O_WRONLY | O_CLOEXEC)) < 0)
			return -errno;
		if (write(fd, "0", 1) != 1) {
			int e = errno;

			close(fd);
			return -e;
		}
		close(fd);
	}
	return 0;
}

int nm_cg_signal(const struct nm_cg *jc, int sig)
{
	char path[2400];
	FILE *f;
	long pid;
	int n = 0;

	if (!jc->made)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", jc->dir);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	fclose(f);
	return n;
}

void nm_cg_kill(const struct nm_cgroups *cg, const struct nm_cg *jc)
{
	if (cg->kill && put(jc->dir, "cgroup.kill", "1") == 0)
		return;
	/* without cgroup.kill (kernels before 5.14): rounds of SIGKILL
	 * until none is left (a fork in between is caught next round) */
	for (int i = 0; i < 10 && nm_cg_signal(jc, SIGKILL) > 0; i++)
		;
}

int nm_cg_freeze(const struct nm_cg *jc, int on)
{
	return jc->made ? put(jc->dir, "cgroup.freeze", on ? "1" : "0") : 0;
}

int nm_cg_populated(const struct nm_cg *jc)
{
	uint64_t v = 0;

	if (!jc->made)
		return 0;
	if (get(jc->dir, "cgroup.events", "populated", &v))
		return 0;
	return v != 0;
}

void nm_cg_usage(const struct nm_cgroups *cg, const struct nm_cg *jc,
		 struct nm_cg_usage *u)
{
	uint64_t v;

	memset(u, 0, sizeof(*u));
	if (!jc->made)
		return;
	if (!get(jc->dir, "cpu.stat", "usage_usec", &v))
		u->cpu_us = v;
	if (cg->mode == NM_CG_V2) {
		if (!get(jc->dir, "memory.peak", NULL, &v))
			u->peak_kib = v >> 10;
		if (!get(jc->dir, "memory.events", "oom_kill", &v))
			u->oom_kills = v;
	} else if (jc->mem[0]) {
		if (!get(jc->mem, "memory.max_usage_in_bytes", NULL, &v))
			u->peak_kib = v >> 10;
		if (!get(jc->mem, "memory.oom_control", "oom_kill", &v))
			u->oom_kills = v;
	}
}

int nm_cg_remove(struct nm_cg *jc)
{
	if (!jc->made)
		return 0;
	if (rmdir(jc->dir) && errno != ENOENT)
		return -errno;
	if (jc->mem[0] && rmdir(jc->mem) && errno != ENOENT)
		return -errno;
	jc->made = 0;
	return 0;
}
