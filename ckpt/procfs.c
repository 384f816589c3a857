/*
 * procfs.c — what the capture reads of a stopped process from /proc: its
 * mappings, threads, the memory layout fields of stat, and status lines.
 * Read as the agent (root) about a process it has stopped; nothing read
 * here is a user's file.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ckpt_int.h"

int ckpt_proc_maps(pid_t pid, struct ckpt_map **out, size_t *n)
{
	char path[64], *line = NULL;
	size_t cap = 0, len = 0, lcap = 0;
	struct ckpt_map *v = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		struct ckpt_map m = { 0 };
		char perm[8] = "", dev[16];
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
			   " %15s %" SCNu64 " %n", &m.start, &m.end, perm,
			   &m.pgoff, dev, &m.ino, &pos) < 6)
			continue;
		m.prot = (perm[0] == 'r' ? PROT_READ : 0) |
			 (perm[1] == 'w' ? PROT_WRITE : 0) |
			 (perm[2] == 'x' ? PROT_EXEC : 0);
		m.shared = perm[3] == 's';
		line[strcspn(line, "\n")] = '\0';
		if (!(m.path = strdup(pos > 0 ? line + pos : ""))) {
			ckpt_proc_maps_free(v, len);
			free(line);
			fclose(f);
			return -ENOMEM;
		}
		if (len == cap) {
			struct ckpt_map *nv;

			cap = cap ? cap * 2 : 64;
			if (!(nv = realloc(v, cap * sizeof(*v)))) {
				free(m.path);
				ckpt_proc_maps_free(v, len);
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			v = nv;
		}
		v[len++] = m;
	}
	free(line);
	fclose(f);
	*out = v;
	*n = len;
	return 0;
}

void ckpt_proc_maps_free(struct ckpt_map *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
}

int ckpt_proc_threads(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int ckpt_proc_stat(pid_t pid, uint64_t v[53])
{
	char path[64], buf[2048], *p, *end;
	size_t got;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	got = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[got] = '\0';
	/* the command may hold spaces and parentheses: fields start after
	 * its last ')' */
	if (!(p = strrchr(buf, ')')))
		return -EINVAL;
	memset(v, 0, 53 * sizeof(v[0]));
	p += 2;
	for (i = 3; i <= 52 && *p; i++) {
		if (i == 3) {
			v[i] = (uint64_t)*p;
			p += 2;
			continue;
		}
		v[i] = strtoull(p, &end, 10);
		if (*end == ' ')
			end++;
		p = end;
	}
	return 0;
}

int ckpt_proc_status(pid_t pid, const char *name, int base, uint64_t *v)
{
	char path[64], line[512];
	size_t nl = strlen(name);
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, nl) && line[nl] == ':') {
			*v = strtoull(line + nl + 1, NULL, base);
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

int ckpt_proc_limits(pid_t pid, uint64_t rl[16][2])
{
	char path[64], line[256];
	int r = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	/* a header, then RLIMIT_CPU .. RLIMIT_RTTIME in order: the name in
	 * the first 26 columns, then soft and hard ("unlimited" or a
	 * number) */
	while (fgets(line, sizeof(line), f) && r < 16) {
		char soft[32], hard[32];

		if (r++ < 0)
			continue;
		if (strlen(line) < 27 ||
		    sscanf(line + 26, "%31s %31s", soft, hard) != 2)
			break;
		rl[r - 1][0] = strcmp(soft, "unlimited") ?
			       strtoull(soft, NULL, 10) : UINT64_MAX;
		rl[r - 1][1] = strcmp(hard, "unlimited") ?
			       strtoull(hard, NULL, 10) : UINT64_MAX;
	}
	fclose(f);
	return r == 16 ? 0 : -EPROTO;
}
