/*
 * capture.c — one process into one image.  The process is held by ptrace
 * for the whole capture: its layout and pages read from /proc, its
 * registers and FP/SIMD state by PTRACE_GETREGSET, and what only the
 * process itself can tell (its brk, its signal dispositions) by remote
 * system calls.  Anything the restore could not make again is refused
 * before a byte is written, with the resource named.
 *
 * A page is in the image if it is present or swapped and, in a private
 * file mapping, no longer the file's own page; the rest reads back as
 * zero or from the file on restore.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_int.h"

#define XSTATE_MAX 16384
/* The most descriptors a captured process may hold open (each costs
 * the capture a path's room while it is held). */
#define MAX_FILES 4096u
#define SCRATCH_BYTES (64 * 1024)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int special(const struct ckpt_map *m)
{
	return !strcmp(m->path, "[vdso]") || !strcmp(m->path, "[vvar]") ||
	       !strcmp(m->path, "[vvar_vclock]");
}

/* Files a process may hold that the restore opens again by path. */
static int plain_device(const char *path)
{
	static const char *const ok[] = { "/dev/null", "/dev/zero",
		"/dev/urandom", "/dev/random", "/dev/full" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(path, ok[i]))
			return 1;
	return 0;
}

/* ---- what the capture gathers before it writes ---------------------------- */

struct file_rec {
	struct ckpt_s_file f;
	char path[4096];
};

struct cap {
	struct ckpt_tracee t;
	struct ckpt_map *maps;
	size_t nmaps;
	struct ckpt_s_vma *vmas; /* vmas[i] of maps[i], taken while held */
	struct file_rec *files;
	size_t nfiles;
	uint64_t scratch;
	/* what of each mapping goes in: plan[i] for maps[i] */
	unsigned char *plan;
	struct ckpt_run *runs;   /* DIRTY mappings' written pages, in order */
	size_t nruns, runcap;
	int delta;
	pid_t snap;              /* the copy-on-write snapshot, or 0 */
	int snap_rc;             /* why there is none */
	int snap_fd;             /* its pidfd: signalled and awaited by it,
				  * never by a pid that may be reused */
	char *why;
	size_t whylen;
	/* inherited descriptors and files (ckpt_inherit) */
	const int *inh;
	size_t ninh;
	const struct ckpt_inherit_map *imap;
	size_t nimap;
	dev_t *inh_dev;          /* of imap[i].own_fd's file */
	ino_t *inh_ino;
};

enum plan { PLAN_SKIP, PLAN_ALL, PLAN_FRESH, PLAN_DIRTY };

/* The stub's descriptor for the inherited file the shared mapping m
 * maps, or -1. */
static int inherited_map(struct cap *c, const struct ckpt_map *m)
{
	char mf[128];
	struct stat sb;

	if (!m->shared || !c->nimap)
		return -1;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)c->t.pid, m->start, m->end);
	if (stat(mf, &sb) < 0)
		return -1;
	for (size_t i = 0; i < c->nimap; i++)
		if (c->inh_ino[i] && sb.st_dev == c->inh_dev[i] &&
		    sb.st_ino == c->inh_ino[i])
			return c->imap[i].stub_fd;
	return -1;
}

/* Refuse a mapping the restore cannot make again, or say how to. */
static int vma_of(struct cap *c, const struct ckpt_map *m,
		  struct ckpt_s_vma *v)
{
	char mf[128];
	struct stat sb;
	int ifd;

	memset(v, 0, sizeof(*v));
	v->start = m->start;
	v->end = m->end;
	v->pgoff = m->pgoff;
	v->prot = m->prot;
	if (m->shared)
		v->flags |= CKPT_VMA_SHARED;
	if ((ifd = inherited_map(c, m)) >= 0) {
		v->flags |= CKPT_VMA_INHERIT;
		v->fd = (uint32_t)ifd;
		return 0;
	}
	if (!strcmp(m->path, "[stack]"))
		v->flags |= CKPT_VMA_STACK;
	else if (!strcmp(m->path, "[heap]"))
		v->flags |= CKPT_VMA_HEAP;
	else if (special(m))
		v->flags |= CKPT_VMA_VDSO;
	else if (m->path[0] == '/') {
		if (strstr(m->path, " (deleted)"))
			return ckpt_fail(c->why, c->whylen, -ENOTSUP, "the mapping "
				    "of %s, a deleted file", m->path);
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%"
			 PRIx64, (int)c->t.pid, m->start, m->end);
		if (stat(mf, &sb) < 0)
			return ckpt_fail(c->why, c->whylen, -errno, "the mapping of "
				    "%s: %s", m->path, strerror(errno));
		if (!S_ISREG(sb.st_mode))
			return ckpt_fail(c->why, c->whylen, -ENOTSUP, "the mapping "
				    "of %s, a device", m->path);
		v->flags |= CKPT_VMA_FILE;
		v->size = (uint64_t)sb.st_size;
		v->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000ull +
			      (uint64_t)sb.st_mtim.tv_nsec;
	} else if (m->path[0]) {
		return ckpt_fail(c->why, c->whylen, -ENOTSUP, "the mapping %s",
			    m->path);
	}
	if (m->shared && !(v->flags & CKPT_VMA_FILE))
		return ckpt_fail(c->why, c->whylen, -ENOTSUP, "a shared anonymous "
			    "mapping at %#" PRIx64, m->start);
	v->pathlen = (v->flags & (CKPT_VMA_FILE | CKPT_VMA_VDSO)) ?
		     (uint32_t)strlen(m->path) : 0;
	return 0;
}

/* Its open descriptors: each one restorable, or the capture refused. */
static int gather_files(struct cap *c)
{
	char dir[64], link[320], info[320], line[256];
	struct dirent *e;
	size_t cap = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)c->t.pid);
	if (!(d = opendir(dir)))
		return ckpt_fail(c->why, c->whylen, -errno, "%s: %s", dir,
			    strerror(errno));
	while ((e = readdir(d))) {
		struct file_rec r = { 0 };
		struct stat sb;
		ssize_t n;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		r.f.fd = (uint32_t)atoi(e->d_name);
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		if ((n = readlink(link, r.path, sizeof(r.path) - 1)) < 0 ||
		    stat(link, &sb) < 0)
			continue; /* closed meanwhile: it cannot be, stopped */
		r.path[n] = '\0';
		snprintf(info, sizeof(info), "/proc/%d/fdinfo/%s",
			 (int)c->t.pid, e->d_name);
		if ((f = fopen(info, "re"))) {
			while (fgets(line, sizeof(line), f)) {
				if (!strncmp(line, "pos:", 4))
					r.f.pos = strtoull(line + 4, NULL, 10);
				else if (!strncmp(line, "flags:", 6))
					r.f.flags = (uint32_t)strtoul(line + 6,
								NULL, 8);
			}
			fclose(f);
		}
		r.f.cloexec = !!(r.f.flags & O_CLOEXEC);
		r.f.flags &= ~(uint32_t)O_CLOEXEC;
		for (size_t i = 0; i < c->ninh; i++)
			if ((uint32_t)c->inh[i] == r.f.fd)
				r.f.kind = CKPT_F_INHERIT;
		if (r.f.kind == CKPT_F_INHERIT) {
			r.path[0] = '\0'; /* the launcher's */
		} else if (r.f.fd <= 2 && !S_ISREG(sb.st_mode)) {
			r.f.kind = CKPT_F_INHERIT; /* to the node manager */
			r.path[0] = '\0';
		} else if (S_ISREG(sb.st_mode) && r.path[0] == '/' &&
			   !strstr(r.path, " (deleted)")) {
			r.f.kind = CKPT_F_REGULAR;
		} else if (S_ISCHR(sb.st_mode) && plain_device(r.path)) {
			r.f.kind = CKPT_F_DEVICE;
		} else if (S_ISFIFO(sb.st_mode) && !strncmp(r.path, "pipe:",
							      5)) {
			r.f.kind = CKPT_F_PIPE;
			r.f.pipe = (uint64_t)sb.st_ino;
			r.path[0] = '\0';
		} else {
			closedir(d);
			return ckpt_fail(c->why, c->whylen, -ENOTSUP, "descriptor "
				    "%u, %s", r.f.fd, r.path);
		}
		r.f.pathlen = (uint32_t)strlen(r.path);
		if (c->nfiles >= MAX_FILES) {
			closedir(d);
			return ckpt_fail(c->why, c->whylen, -ENOTSUP, "more than %u "
				    "open descriptors", MAX_FILES);
		}
		if (c->nfiles == cap) {
			struct file_rec *nv;

			cap = cap ? cap * 2 : 16;
			if (!(nv = realloc(c->files, cap * sizeof(*nv)))) {
				closedir(d);
				return -ENOMEM;
			}
			c->files = nv;
		}
		c->files[c->nfiles++] = r;
	}
	closedir(d);
	/* a pipe is restorable only with both of its ends here */
	for (size_t i = 0; i < c->nfiles; i++) {
		int rd = 0, wr = 0;

		if (c->files[i].f.kind != CKPT_F_PIPE)
			continue;
		for (size_t j = 0; j < c->nfiles; j++)
			if (c->files[j].f.kind == CKPT_F_PIPE &&
			    c->files[j].f.pipe == c->files[i].f.pipe) {
				rd |= (c->files[j].f.flags & O_ACCMODE) ==
				      O_RDONLY;
				wr |= (c->files[j].f.flags & O_ACCMODE) ==
				      O_WRONLY;
			}
		if (!rd || !wr)
			return ckpt_fail(c->why, c->whylen, -ENOTSUP, "descriptor "
				    "%u, a pipe to another process",
				    c->files[i].f.fd);
	}
	return 0;
}

/* ---- writing the sections ------------------------------------------------- */

static int put(struct ckpt_writer *w, uint32_t type, const void *a,
	       size_t alen, const void *b, size_t blen)
{
	int rc;

	if ((rc = ckpt_section_begin(w, type, 0, alen + blen)))
		return rc;
	if (alen && (rc = ckpt_write_data(w, a, alen)))
		return rc;
	return blen ? ckpt_write_data(w, b, blen) : 0;
}

static int put_task(struct cap *c, struct ckpt_writer *w)
{
	struct ckpt_s_task k = { 0 };
	uint64_t v[53], um = 0, pers = 0;
	char path[64], buf[32] = "";
	long brk;
	FILE *f;
	int rc;

	if ((rc = ckpt_proc_stat(c->t.pid, v)))
		return rc;
	k.start_code = v[26];
	k.end_code = v[27];
	k.start_stack = v[28];
	k.start_data = v[45];
	k.end_data = v[46];
	k.start_brk = v[47];
	k.arg_start = v[48];
	k.arg_end = v[49];
	k.env_start = v[50];
	k.env_end = v[51];
	if ((brk = ckpt_trace_syscall(&c->t, SYS_brk, 1, 0L)) < 0)
		return (int)brk;
	k.brk = (uint64_t)brk;
	if (ptrace(PTRACE_GETSIGMASK, c->t.pid, (void *)sizeof(k.sigmask),
		   &k.sigmask) < 0)
		return -errno;
	ckpt_proc_status(c->t.pid, "Umask", 8, &um);
	k.umask = (uint32_t)um;
	snprintf(path, sizeof(path), "/proc/%d/personality", (int)c->t.pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, sizeof(buf), f))
			pers = strtoull(buf, NULL, 16);
		fclose(f);
	}
	k.personality = (uint32_t)pers;
	for (size_t i = 0; i < c->nmaps; i++) {
		if (!strcmp(c->maps[i].path, "[vdso]"))
			k.vdso = c->maps[i].start;
		else if (!strcmp(c->maps[i].path, "[vvar]"))
			k.vvar = c->maps[i].start;
	}
	return put(w, CKPT_S_TASK, &k, sizeof(k), NULL, 0);
}

static int put_auxv(struct cap *c, struct ckpt_writer *w)
{
	char path[64];
	unsigned char buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)c->t.pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	return put(w, CKPT_S_AUXV, buf, (size_t)n, NULL, 0);
}

/* The pages of one private mapping worth keeping, as runs. */
static int put_pages(struct ckpt_writer *w, int pagemap, pid_t src,
		     const struct ckpt_map *m, struct ckpt_stats *st)
{
	uint64_t npages = (m->end - m->start) / CKPT_PAGE;
	static __thread uint64_t pm[512];
	unsigned char *buf;
	int rc = 0;

	if (!(buf = malloc(512 * CKPT_PAGE)))
		return -ENOMEM;
	for (uint64_t base = 0; base < npages && !rc; base += 512) {
		uint64_t cnt = npages - base < 512 ? npages - base : 512;
		ssize_t n = pread(pagemap, pm, cnt * 8,
				  (off_t)((m->start / CKPT_PAGE + base) * 8));

		if (n != (ssize_t)(cnt * 8)) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		for (uint64_t i = 0; i < cnt && !rc;) {
			uint64_t j = i;

			/* present or swapped, and not the file's page */
			while (j < cnt && (pm[j] >> 62 & 3) &&
			       !(m->path[0] == '/' && (pm[j] >> 61 & 1)))
				j++;
			if (j == i) {
				i++;
				continue;
			}
			{
				uint64_t addr = m->start + (base + i) *
						CKPT_PAGE;
				size_t len = (size_t)(j - i) * CKPT_PAGE;

				if ((rc = ckpt_mem_read(src, addr, buf,
							len)))
					break;
				rc = put(w, CKPT_S_PAGES, &addr, 8, buf, len);
				st->pages += j - i;
			}
			i = j;
		}
	}
	free(buf);
	return rc;
}

/* The written pages of a tracked mapping, from the scan's runs. */
static int put_dirty(struct cap *c, struct ckpt_writer *w, pid_t src,
		     const struct ckpt_map *m, size_t *run,
		     struct ckpt_stats *st)
{
	unsigned char *buf;
	int rc = 0;

	if (!(buf = malloc(512 * CKPT_PAGE)))
		return -ENOMEM;
	for (; *run < c->nruns && c->runs[*run].start < m->end && !rc;
	     (*run)++) {
		uint64_t a = c->runs[*run].start, e = c->runs[*run].end;

		while (a < e && !rc) {
			uint64_t len = e - a < 512 * CKPT_PAGE ? e - a :
				       512 * CKPT_PAGE;

			if (!(rc = ckpt_mem_read(src, a, buf, (size_t)len)))
				rc = put(w, CKPT_S_PAGES, &a, 8, buf,
					 (size_t)len);
			st->pages += len / CKPT_PAGE;
			st->dirty_pages += len / CKPT_PAGE;
			a += len;
		}
	}
	free(buf);
	return rc;
}

/* Every mapping, and the pages its plan says, read from src. */
static int put_memory(struct cap *c, struct ckpt_writer *w, pid_t src,
		      struct ckpt_stats *st)
{
	char path[64];
	size_t run = 0;
	int pagemap, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)src);
	if ((pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	for (size_t i = 0; i < c->nmaps && !rc; i++) {
		const struct ckpt_map *m = &c->maps[i];
		const struct ckpt_s_vma *v = &c->vmas[i];

		if (!strcmp(m->path, "[vsyscall]"))
			continue;
		if ((rc = put(w, CKPT_S_VMA, v, sizeof(*v), m->path,
			      v->pathlen)))
			break;
		st->vmas++;
		if (c->plan[i] == PLAN_FRESH && c->delta) {
			uint64_t fr[2] = { m->start, m->end };

			rc = put(w, CKPT_S_FRESH, fr, sizeof(fr), NULL, 0);
		}
		if (!rc && (c->plan[i] == PLAN_ALL || c->plan[i] == PLAN_FRESH))
			rc = put_pages(w, pagemap, src, m, st);
		else if (!rc && c->plan[i] == PLAN_DIRTY)
			rc = put_dirty(c, w, src, m, &run, st);
	}
	close(pagemap);
	return rc;
}

static int put_regs(struct cap *c, struct ckpt_writer *w)
{
	struct user_regs_struct r = c->t.regs;
	unsigned char *x;
	struct iovec iov;
	int rc;

	/* restart_syscall needs the restart block of this process, which a
	 * restored one has not: there the call returns EINTR */
	if (c->t.restart_block) {
		r.rax = (unsigned long long)-EINTR;
		r.rip += 2;
	}
	if ((rc = put(w, CKPT_S_REGS, &r, sizeof(r), NULL, 0)))
		return rc;
	if (!(x = calloc(1, XSTATE_MAX)))
		return -ENOMEM;
	iov.iov_base = x;
	iov.iov_len = XSTATE_MAX;
	if (ptrace(PTRACE_GETREGSET, c->t.pid, (void *)NT_X86_XSTATE, &iov) < 0)
		rc = -errno;
	else
		rc = put(w, CKPT_S_XSTATE, x, iov.iov_len, NULL, 0);
	free(x);
	return rc;
}

static int put_signals(struct cap *c, struct ckpt_writer *w)
{
	struct ckpt_s_sigact sa[64] = { 0 };
	uint64_t caught = ~0ull, ignored = 0;

	/* only a caught or ignored signal is not at its default: ask the
	 * process about those alone (a remote call costs tens of µs) */
	if (!ckpt_proc_status(c->t.pid, "SigCgt", 16, &caught))
		ckpt_proc_status(c->t.pid, "SigIgn", 16, &ignored);
	for (int s = 1; s <= 64; s++) {
		long rc;

		if (s == SIGKILL || s == SIGSTOP ||
		    !((caught | ignored) >> (s - 1) & 1))
			continue;
		rc = ckpt_trace_syscall(&c->t, SYS_rt_sigaction, 4, (long)s,
					0L, (long)c->scratch, 8L);
		if (rc < 0)
			continue; /* not a signal one may handle */
		if ((rc = ckpt_mem_read(c->t.pid, c->scratch, &sa[s - 1],
					sizeof(sa[0]))))
			return (int)rc;
	}
	return put(w, CKPT_S_SIGACT, sa, sizeof(sa), NULL, 0);
}

/* A pipe's buffered bytes, copied (tee) without taking them from it. */
static int put_pipe(struct cap *c, struct ckpt_writer *w,
		    const struct file_rec *r)
{
	int pidfd, mine, p[2], rc = 0;
	char buf[65536];
	ssize_t n, got = 0;

	if ((pidfd = (int)syscall(SYS_pidfd_open, c->t.pid, 0)) < 0)
		return -errno;
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, (int)r->f.fd, 0);
	close(pidfd);
	if (mine < 0)
		return -errno;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		close(mine);
		return rc;
	}
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	n = tee(mine, p[1], 1 << 20, SPLICE_F_NONBLOCK);
	close(mine);
	close(p[1]);
	if (n < 0 && errno != EAGAIN)
		rc = -errno;
	{
		char *all = NULL;

		while (!rc && (n = read(p[0], buf, sizeof(buf))) > 0) {
			char *na = realloc(all, (size_t)(got + n));

			if (!na) {
				rc = -ENOMEM;
				break;
			}
			all = na;
			memcpy(all + got, buf, (size_t)n);
			got += n;
		}
		if (!rc)
			rc = put(w, CKPT_S_PIPE, &r->f.pipe, 8, all,
				 (size_t)got);
		free(all);
	}
	close(p[0]);
	return rc;
}

static int put_files(struct cap *c, struct ckpt_writer *w,
		     struct ckpt_stats *st)
{
	int rc = 0;

	for (size_t i = 0; i < c->nfiles && !rc; i++) {
		const struct file_rec *r = &c->files[i];
		int first = 1;

		rc = put(w, CKPT_S_FILE, &r->f, sizeof(r->f), r->path,
			 r->f.pathlen);
		st->files++;
		if (rc || r->f.kind != CKPT_F_PIPE ||
		    (r->f.flags & O_ACCMODE) != O_RDONLY)
			continue;
		for (size_t j = 0; j < i; j++)
			if (c->files[j].f.kind == CKPT_F_PIPE &&
			    c->files[j].f.pipe == r->f.pipe &&
			    (c->files[j].f.flags & O_ACCMODE) == O_RDONLY)
				first = 0;
		if (first)
			rc = put_pipe(c, w, r);
	}
	return rc;
}

static int put_env(struct cap *c, struct ckpt_writer *w)
{
	char link[64], cwd[4096];
	uint64_t rl[16][2];
	ssize_t n;
	int rc;

	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)c->t.pid);
	if ((n = readlink(link, cwd, sizeof(cwd) - 1)) < 0)
		return -errno;
	if ((rc = put(w, CKPT_S_CWD, cwd, (size_t)n, NULL, 0)))
		return rc;
	/* its limits, as /proc shows anyone (one read, not 16 remote
	 * calls: they are most of a small process's stop) */
	if ((rc = ckpt_proc_limits(c->t.pid, rl)))
		return rc;
	return put(w, CKPT_S_RLIMIT, rl, sizeof(rl), NULL, 0);
}

/* ---- the capture ---------------------------------------------------------- */

/* What of each mapping the image takes, and the tracking set up or read:
 * a full capture (re)arms it and registers every anonymous private
 * mapping; a delta scans those registered (and protects their written
 * pages again) and registers those made since, which go in whole. */
static int plan_memory(struct cap *c, struct ckpt_track *tr, int full)
{
	int rc;

	if (!(c->plan = calloc(c->nmaps ? c->nmaps : 1, 1)))
		return -ENOMEM;
	if (tr && full && (rc = ckpt_track_arm(tr, &c->t)))
		return ckpt_fail(c->why, c->whylen, rc, "tracking written pages "
			    "(userfaultfd): %s", strerror(-rc));
	for (size_t i = 0; i < c->nmaps; i++) {
		const struct ckpt_map *m = &c->maps[i];
		int anon = !m->path[0] || !strcmp(m->path, "[heap]") ||
			   !strcmp(m->path, "[stack]");

		if (m->shared || special(m) || !strcmp(m->path, "[vsyscall]")) {
			c->plan[i] = PLAN_SKIP;
			continue;
		}
		c->plan[i] = PLAN_FRESH;
		if (!tr || !anon)
			continue; /* a file's private pages: whole each time */
		if (!full) {
			rc = ckpt_track_scan(tr, m->start, m->end, &c->runs,
					     &c->nruns, &c->runcap);
			if (!rc) {
				c->plan[i] = PLAN_DIRTY;
				continue;
			}
			if (rc != -EPERM)
				return ckpt_fail(c->why, c->whylen, rc, "scanning "
					    "written pages at %#" PRIx64 ": %s",
					    m->start, strerror(-rc));
		}
		ckpt_track_register(tr, m->start, m->end); /* else: whole */
	}
	return 0;
}

/* A copy-on-write snapshot: a fork the process makes, held stopped by
 * us and a child of the process's parent (CLONE_PARENT), so the process
 * itself never sees it; 0 and c->snap, or -errno (read in place). */
static void snapshot_end(struct cap *c);

static int snapshot(struct cap *c)
{
	long r;
	int st;

	c->t.forked = 0;
	r = ckpt_trace_syscall(&c->t, SYS_clone, 5,
			       (long)(CLONE_PARENT | SIGCHLD), 0L, 0L, 0L, 0L);
	if (c->t.forked > 0) { /* a child, even if the call then failed */
		c->snap = c->t.forked;
		c->snap_fd = (int)syscall(SYS_pidfd_open, c->snap, 0);
	}
	if (r < 0 || c->t.forked <= 0 || c->snap_fd < 0) {
		snapshot_end(c);
		return r < 0 ? (int)r : -ECHILD;
	}
	while (waitpid(c->snap, &st, __WALL) < 0 && errno == EINTR)
		;
	ptrace(PTRACE_SETOPTIONS, c->snap, 0, (void *)(long)PTRACE_O_EXITKILL);
	return 0;
}

static void snapshot_end(struct cap *c)
{
	if (c->snap <= 0)
		return;
	/* by its pidfd: if its parent reaped it meanwhile (it is a child
	 * of the process's parent), its pid may be another's now */
	if (c->snap_fd >= 0) {
		siginfo_t si;

		syscall(SYS_pidfd_send_signal, c->snap_fd, SIGKILL, NULL, 0);
		while (waitid((idtype_t)3 /* P_PIDFD */, (id_t)c->snap_fd, &si,
			      WEXITED | __WALL) < 0 && errno == EINTR)
			;
		close(c->snap_fd);
	}
	c->snap_fd = -1;
	c->snap = 0;
}

/* While the process is held: everything but its pages, and the
 * snapshot to read those from. */
static int capture_held(struct cap *c, struct ckpt_writer *w, int fd,
			const struct ckpt_header *h, struct ckpt_track *tr,
			struct ckpt_stats *st)
{
	long sc;
	int rc, threads;
	uint64_t parent;

	if ((threads = ckpt_proc_threads(c->t.pid)) != 1)
		return threads < 0 ? threads : ckpt_fail(c->why, c->whylen,
			-ENOTSUP, "%d threads (one is supported)", threads);
	if (c->delta && (!ckpt_track_armed(tr, c->t.pid, &parent) ||
			 parent != h->parent))
		return ckpt_fail(c->why, c->whylen, -EINVAL, "a delta of epoch %"
			    PRIu64 " with no tracked capture of it",
			    h->parent);
	if ((rc = ckpt_proc_maps(c->t.pid, &c->maps, &c->nmaps)))
		return rc;
	/* the inherited files, to know their mappings */
	if (c->nimap && (!(c->inh_dev = calloc(c->nimap, sizeof(dev_t))) ||
			 !(c->inh_ino = calloc(c->nimap, sizeof(ino_t)))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nimap; i++) {
		struct stat sb;

		if (c->imap[i].own_fd >= 0 && c->imap[i].stub_fd >= 0 &&
		    !fstat(c->imap[i].own_fd, &sb)) {
			c->inh_dev[i] = sb.st_dev;
			c->inh_ino[i] = sb.st_ino;
		}
	}
	for (size_t i = 0; i < c->nmaps; i++)
		if (!strcmp(c->maps[i].path, "[vdso]"))
			rc = ckpt_trace_find_syscall(&c->t, c->maps[i].start,
						     c->maps[i].end) ? -1 : 1;
	if (rc != 1)
		return ckpt_fail(c->why, c->whylen, -ENOTSUP, "no vDSO to make "
			    "system calls from");
	/* refuse what cannot be restored before anything is written; what
	 * each mapping is (its file's size and time) is taken now, while the
	 * process is held, never read again from it once it runs on */
	if (!(c->vmas = calloc(c->nmaps ? c->nmaps : 1, sizeof(*c->vmas))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nmaps; i++)
		if (strcmp(c->maps[i].path, "[vsyscall]") &&
		    (rc = vma_of(c, &c->maps[i], &c->vmas[i])))
			return rc;
	if ((rc = gather_files(c)))
		return rc;
	sc = ckpt_trace_syscall(&c->t, SYS_mmap, 6, 0L, (long)SCRATCH_BYTES,
				(long)(PROT_READ | PROT_WRITE),
				(long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
	if (sc < 0)
		return ckpt_fail(c->why, c->whylen, (int)sc, "a scratch page in "
			    "the process: %s", strerror((int)-sc));
	c->scratch = (uint64_t)sc;
	rc = ckpt_write_begin(w, fd, h);
	if (!rc)
		rc = put_task(c, w);
	if (!rc)
		rc = put_auxv(c, w);
	if (!rc)
		rc = put_regs(c, w);
	if (!rc)
		rc = put_signals(c, w);
	if (!rc)
		rc = put_files(c, w, st);
	if (!rc)
		rc = put_env(c, w);
	ckpt_trace_syscall(&c->t, SYS_munmap, 2, (long)c->scratch,
			   (long)SCRATCH_BYTES);
	if (!rc)
		rc = plan_memory(c, tr, !c->delta);
	if (!rc)
		c->snap_rc = snapshot(c);
	return rc;
}

struct ckpt_capture {
	struct cap c;
	struct ckpt_writer w;
	struct ckpt_stats st;
	ckpt_track_t *tr;
	uint64_t epoch;
	int rc;
	char why[512];
};

int ckpt_capture_hold(pid_t pid, int fd, const struct ckpt_header *h,
		      ckpt_track_t *tr, ckpt_capture_t **out, char *why,
		      size_t whylen)
{
	return ckpt_capture_hold_inherit(pid, fd, h, tr, NULL, out, why,
					 whylen);
}

int ckpt_capture_hold_inherit(pid_t pid, int fd, const struct ckpt_header *h,
			      ckpt_track_t *tr, const struct ckpt_inherit *in,
			      ckpt_capture_t **out, char *why, size_t whylen)
{
	struct ckpt_capture *k = calloc(1, sizeof(*k));
	uint64_t t0 = now_ns();
	int rc;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (!k)
		return ckpt_fail(why, whylen, -ENOMEM, "out of memory");
	k->c.why = k->why;
	k->c.whylen = sizeof(k->why);
	k->c.snap_fd = -1;
	k->c.delta = h->kind == CKPT_DELTA;
	if (in) {
		k->c.inh = in->fds;
		k->c.ninh = in->n;
		k->c.imap = in->maps;
		k->c.nimap = in->nmaps;
	}
	k->tr = tr;
	k->epoch = h->epoch;
	if ((rc = ckpt_trace_seize(&k->c.t, pid))) {
		ckpt_fail(why, whylen, rc, "cannot stop process %d: %s", (int)pid,
		     strerror(-rc));
		free(k);
		if (tr)
			ckpt_track_done(tr, 0);
		return rc;
	}
	rc = capture_held(&k->c, &k->w, fd, h, tr, &k->st);
	/* no snapshot: the pages would be read while the process and its
	 * caller wait, as long as that takes; refused instead */
	if (!rc && !k->c.snap)
		rc = ckpt_fail(k->why, sizeof(k->why), -EAGAIN, "the copy-on-write "
			  "snapshot was refused (%s): a limit of the user's "
			  "processes (RLIMIT_NPROC)?", strerror(-k->c.snap_rc));
	ckpt_trace_detach(&k->c.t);
	k->st.stop_ns = now_ns() - t0;
	k->rc = rc;
	if (rc) {
		if (!k->why[0])
			ckpt_fail(k->why, sizeof(k->why), rc, "writing the image: "
			     "%s", strerror(-rc));
		ckpt_fail(why, whylen, rc, "%s", k->why);
		ckpt_capture_end(k, NULL, NULL, 0);
		return rc;
	}
	*out = k;
	return 0;
}

int ckpt_capture_write(ckpt_capture_t *k)
{
	if (!k->rc && k->c.snap) {
		k->st.snapshot = 1;
		k->rc = put_memory(&k->c, &k->w, k->c.snap, &k->st);
	}
	if (!k->rc)
		k->rc = ckpt_write_end(&k->w);
	k->st.bytes = k->w.bytes;
	if (k->rc && !k->why[0])
		ckpt_fail(k->why, sizeof(k->why), k->rc, "writing the image: %s",
		     strerror(-k->rc));
	return k->rc;
}

int ckpt_capture_note(ckpt_capture_t *k, const void *note, size_t len)
{
	if (!k->rc && len > CKPT_NOTE_MAX)
		k->rc = ckpt_fail(k->why, sizeof(k->why), -EINVAL, "a note of %zu "
			     "bytes (at most %d)", len, CKPT_NOTE_MAX);
	if (!k->rc)
		k->rc = put(&k->w, CKPT_S_NOTE, note, len, NULL, 0);
	return k->rc;
}

int ckpt_capture_end(ckpt_capture_t *k, struct ckpt_stats *st, char *why,
		     size_t whylen)
{
	int rc;

	if (!k)
		return -EINVAL;
	snapshot_end(&k->c);
	rc = k->rc;
	if (k->tr) /* the tracking holds for a next delta only after success */
		ckpt_track_done(k->tr, rc ? 0 : k->epoch);
	if (rc)
		ckpt_fail(why, whylen, rc, "%s", k->why);
	else if (st)
		*st = k->st;
	ckpt_proc_maps_free(k->c.maps, k->c.nmaps);
	free(k->c.inh_dev);
	free(k->c.inh_ino);
	free(k->c.vmas);
	free(k->c.files);
	free(k->c.plan);
	free(k->c.runs);
	free(k);
	return rc;
}

int ckpt_capture(pid_t pid, int fd, const struct ckpt_header *h,
		 ckpt_track_t *tr, struct ckpt_stats *st, char *why,
		 size_t whylen)
{
	ckpt_capture_t *k;
	int rc = ckpt_capture_hold(pid, fd, h, tr, &k, why, whylen);

	if (rc)
		return rc;
	ckpt_capture_write(k);
	return ckpt_capture_end(k, st, why, whylen);
}
