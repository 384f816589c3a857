/*
 * restore.c — a process from a chain of images (a full one and the deltas
 * after it), made inside a traced stub: the stub is the image's binary,
 * exec'd by its owner and stopped at the exec; every mapping, open file,
 * limit and signal disposition is a system call the stub makes itself, so
 * the owner's rights and no one else's decide what it may open.
 *
 * Order matters: the chain is checked whole before the stub is touched;
 * the kernel's vDSO and vvar move first (so remote calls keep a syscall
 * instruction), the stub's own mappings go, the image's come, pages are
 * written image by image (a delta's FRESH range voids older pages first),
 * then the memory layout fields, files, cwd, limits, signals and the
 * registers.  Any failure kills the stub: never half restored.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckpt_int.h"

#define SCRATCH_BYTES (256 * 1024)
#define TASK_TOP 0x7ffffffff000ull

/* Paths are copies (malloc'd, NUL-terminated) of the image's: a record
 * costs what its path does, not a page (an image may hold many). */
struct vma_ref {
	const struct ckpt_s_vma *v;
	char *path;
};

struct file_ref {
	const struct ckpt_s_file *f;
	char *path;
	long hi;                 /* its descriptor, parked above the image's */
};

/* The most mappings and descriptors an image may name. */
#define MAX_VMAS (1u << 20)
#define MAX_FILES (1u << 16)

struct rst {
	struct ckpt_tracee t;
	const struct ckpt_blob *chain;
	size_t n;
	struct ckpt_reader last;
	/* of the last image */
	struct ckpt_s_task task;
	const void *auxv, *xstate, *cwd;
	uint64_t auxvlen, xstatelen, cwdlen;
	struct user_regs_struct regs;
	struct ckpt_s_sigact sig[64];
	uint64_t rl[16][2];
	int have_regs, have_sig, have_task, have_rl;
	struct vma_ref *vmas;
	size_t nvmas;
	struct file_ref *files;
	size_t nfiles;
	/* the stub */
	struct ckpt_map *cur;
	size_t ncur;
	uint64_t scratch;
	int mem;                 /* /proc/PID/mem, open for writing */
	const struct ckpt_remap *remap;
	char *why;
	size_t whylen;
};

static int fail(struct rst *r, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct rst *r, int rc, const char *fmt, ...)
{
	va_list ap;

	if (r->why && r->whylen && !r->why[0]) {
		va_start(ap, fmt);
		vsnprintf(r->why, r->whylen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static long rcall(struct rst *r, long nr, int nargs, ...)
{
	long a[6] = { 0 };
	va_list ap;

	va_start(ap, nargs);
	for (int i = 0; i < nargs && i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return ckpt_trace_syscall(&r->t, nr, 6, a[0], a[1], a[2], a[3], a[4],
				  a[5]);
}

/* ---- checking the chain --------------------------------------------------- */

static int bad_section(struct rst *r, const char *what)
{
	return fail(r, -EINVAL, "image %zu: %s", r->n - 1, what);
}

static int take_vma(struct rst *r, const struct ckpt_section *s)
{
	const struct ckpt_s_vma *v = s->data;
	struct vma_ref *nv;

	if (s->len < sizeof(*v) || s->len - sizeof(*v) != v->pathlen ||
	    v->pathlen >= 4096)
		return bad_section(r, "a mapping record of the wrong length");
	if (v->start % CKPT_PAGE || v->end % CKPT_PAGE || v->start >= v->end ||
	    v->end > TASK_TOP || v->pgoff % CKPT_PAGE ||
	    (r->nvmas && v->start < r->vmas[r->nvmas - 1].v->end))
		return bad_section(r, "mappings out of order or unaligned");
	if ((v->flags & CKPT_VMA_INHERIT) &&
	    (v->pathlen || v->fd > 65535 || !(v->flags & CKPT_VMA_SHARED) ||
	     (v->flags & (CKPT_VMA_FILE | CKPT_VMA_VDSO | CKPT_VMA_STACK |
			  CKPT_VMA_HEAP))))
		return bad_section(r, "a mapping of an inherited descriptor "
				   "out of bounds");
	if (r->nvmas >= MAX_VMAS)
		return bad_section(r, "more mappings than a process may have");
	if (!(r->nvmas & (r->nvmas + 1))) { /* 0, 1, 3, 7...: grow */
		nv = realloc(r->vmas, (r->nvmas * 2 + 2) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->vmas = nv;
	}
	nv = r->vmas;
	nv[r->nvmas].v = v;
	if (!(nv[r->nvmas].path = strndup((const char *)(v + 1), v->pathlen)))
		return -ENOMEM;
	r->nvmas++;
	if (strlen(nv[r->nvmas - 1].path) != v->pathlen ||
	    ((v->flags & CKPT_VMA_FILE) && nv[r->nvmas - 1].path[0] != '/'))
		return bad_section(r, "a file mapping with no path, or a "
				   "NUL inside one");
	return 0;
}

static int take_file(struct rst *r, const struct ckpt_section *s)
{
	const struct ckpt_s_file *f = s->data;
	struct file_ref *nf;

	if (s->len < sizeof(*f) || s->len - sizeof(*f) != f->pathlen ||
	    f->pathlen >= 4096 || f->fd > 65535 || f->kind < CKPT_F_REGULAR ||
	    f->kind > CKPT_F_INHERIT)
		return bad_section(r, "a descriptor record out of bounds");
	if (r->nfiles >= MAX_FILES)
		return bad_section(r, "more descriptors than a process has");
	if (!(r->nfiles & (r->nfiles + 1))) {
		nf = realloc(r->files, (r->nfiles * 2 + 2) * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		r->files = nf;
	}
	nf = r->files;
	nf[r->nfiles].f = f;
	nf[r->nfiles].hi = -1;
	if (!(nf[r->nfiles].path = strndup((const char *)(f + 1), f->pathlen)))
		return -ENOMEM;
	r->nfiles++;
	if (strlen(nf[r->nfiles - 1].path) != f->pathlen ||
	    ((f->kind == CKPT_F_REGULAR || f->kind == CKPT_F_DEVICE) &&
	     nf[r->nfiles - 1].path[0] != '/'))
		return bad_section(r, "a file with no path, or a NUL inside "
				   "one");
	return 0;
}

/* The memory sections of image i: whole pages, ranges in bounds. */
static int check_memory(struct rst *r, struct ckpt_reader *rd, size_t i)
{
	struct ckpt_section s;

	while (ckpt_read_section(rd, &s)) {
		uint64_t v[2];

		if (s.type == CKPT_S_PAGES) {
			if (s.len < 8 || (s.len - 8) % CKPT_PAGE)
				return fail(r, -EINVAL, "image %zu: a page "
					    "run not of whole pages", i);
			memcpy(v, s.data, 8);
			if (v[0] % CKPT_PAGE || v[0] > TASK_TOP ||
			    s.len - 8 > TASK_TOP - v[0])
				return fail(r, -EINVAL, "image %zu: a page "
					    "run out of bounds", i);
		} else if (s.type == CKPT_S_FRESH) {
			if (s.len != 16)
				return fail(r, -EINVAL, "image %zu: a fresh "
					    "range of the wrong length", i);
			memcpy(v, s.data, 16);
			if (v[0] % CKPT_PAGE || v[1] % CKPT_PAGE ||
			    v[0] >= v[1] || v[1] > TASK_TOP)
				return fail(r, -EINVAL, "image %zu: a fresh "
					    "range out of bounds", i);
		}
	}
	rd->off = CKPT_HEADER_BYTES; /* walked again by its users */
	rd->seen = 0;
	return 0;
}

/* Every image valid and of one chain; the last one's state taken. */
static int check_chain(struct rst *r, const struct ckpt_ident *expect)
{
	struct ckpt_header first = { 0 };
	struct ckpt_section s;
	int rc;

	if (!r->n)
		return fail(r, -EINVAL, "no image to restore from");
	for (size_t i = 0; i < r->n; i++) {
		struct ckpt_reader rd;
		char why[160];

		if (ckpt_read_begin(&rd, r->chain[i].buf, r->chain[i].len,
				    i ? &first.id : expect, why, sizeof(why)))
			return fail(r, -EINVAL, "image %zu: %s", i, why);
		if (i == 0 && rd.h.kind != CKPT_FULL)
			return fail(r, -EINVAL, "image 0 is a delta: a chain "
				    "starts with a full image");
		if (i && (rd.h.kind != CKPT_DELTA || rd.h.parent !=
						     first.epoch))
			return fail(r, -EINVAL, "image %zu is not the delta "
				    "of epoch %" PRIu64, i, first.epoch);
		first.id = rd.h.id;
		first.epoch = rd.h.epoch;
		if (i == r->n - 1)
			r->last = rd;
		if ((rc = check_memory(r, &rd, i)))
			return rc;
	}
	while (ckpt_read_section(&r->last, &s)) {
		rc = 0;
		switch (s.type) {
		case CKPT_S_TASK:
			if (s.len != sizeof(r->task))
				return bad_section(r, "a task record of the "
						   "wrong length");
			memcpy(&r->task, s.data, sizeof(r->task));
			r->have_task = 1;
			break;
		case CKPT_S_AUXV:
			r->auxv = s.data;
			r->auxvlen = s.len;
			break;
		case CKPT_S_VMA:
			rc = take_vma(r, &s);
			break;
		case CKPT_S_REGS:
			if (s.len != sizeof(r->regs))
				return bad_section(r, "registers of the wrong "
						   "length");
			memcpy(&r->regs, s.data, sizeof(r->regs));
			r->have_regs = 1;
			break;
		case CKPT_S_XSTATE:
			r->xstate = s.data;
			r->xstatelen = s.len;
			break;
		case CKPT_S_SIGACT:
			if (s.len != sizeof(r->sig))
				return bad_section(r, "signal dispositions of "
						   "the wrong length");
			memcpy(r->sig, s.data, sizeof(r->sig));
			r->have_sig = 1;
			break;
		case CKPT_S_FILE:
			rc = take_file(r, &s);
			break;
		case CKPT_S_CWD:
			if (!s.len || s.len >= 4096)
				return bad_section(r, "a working directory "
						   "out of bounds");
			r->cwd = s.data;
			r->cwdlen = s.len;
			break;
		case CKPT_S_RLIMIT:
			if (s.len != sizeof(r->rl))
				return bad_section(r, "limits of the wrong "
						   "length");
			memcpy(r->rl, s.data, sizeof(r->rl));
			r->have_rl = 1;
			break;
		case CKPT_S_PAGES:
			if (s.len < 8 || (s.len - 8) % CKPT_PAGE)
				return bad_section(r, "a page run not of "
						   "whole pages");
			break;
		default:
			break; /* PIPE, FRESH: read where used */
		}
		if (rc)
			return rc;
	}
	if (!r->have_task || !r->have_regs || !r->have_sig || !r->cwd ||
	    !r->xstate || !r->nvmas || r->auxvlen > 4096)
		return bad_section(r, "a part of the process is missing");
	return 0;
}

/* ---- the stub's memory ---------------------------------------------------- */

static int overlaps(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return a < d && c < b;
}

/* Scratch space where neither the stub nor the image has anything. */
static int place_scratch(struct rst *r)
{
	for (uint64_t at = 0x10000000ull; at < 0x7f0000000000ull;
	     at += 0x100000ull) {
		int clash = 0;

		for (size_t i = 0; i < r->nvmas && !clash; i++)
			clash = overlaps(at, at + SCRATCH_BYTES,
					 r->vmas[i].v->start, r->vmas[i].v->end);
		for (size_t i = 0; i < r->ncur && !clash; i++)
			clash = overlaps(at, at + SCRATCH_BYTES, r->cur[i].start,
					 r->cur[i].end);
		if (clash)
			continue;
		long a = rcall(r, SYS_mmap, 6, (long)at, (long)SCRATCH_BYTES,
			       (long)(PROT_READ | PROT_WRITE),
			       (long)(MAP_PRIVATE | MAP_ANONYMOUS |
				      MAP_FIXED_NOREPLACE), -1L, 0L);
		if (a < 0)
			return fail(r, (int)a, "scratch space in the new "
				    "process: %s", strerror((int)-a));
		r->scratch = (uint64_t)a;
		return 0;
	}
	return fail(r, -ENOMEM, "no room for scratch space");
}

static int is_special(const char *p)
{
	return !strcmp(p, "[vdso]") || !strcmp(p, "[vvar]") ||
	       !strcmp(p, "[vvar_vclock]");
}

/* The kernel's vDSO and vvar, moved to where the image had them. */
static int move_vdso(struct rst *r)
{
	for (size_t i = 0; i < r->nvmas; i++) {
		const struct vma_ref *v = &r->vmas[i];
		const struct ckpt_map *c = NULL;

		if (!(v->v->flags & CKPT_VMA_VDSO))
			continue;
		for (size_t j = 0; j < r->ncur; j++)
			if (!strcmp(r->cur[j].path, v->path))
				c = &r->cur[j];
		if (!c || c->end - c->start != v->v->end - v->v->start)
			return fail(r, -EINVAL, "this kernel's %s is not the "
				    "image's (another kernel?)", v->path);
		if (c->start == v->v->start)
			continue;
		long a = rcall(r, SYS_mremap, 5, (long)c->start,
			       (long)(c->end - c->start),
			       (long)(c->end - c->start),
			       (long)(MREMAP_MAYMOVE | MREMAP_FIXED),
			       (long)v->v->start);
		if (a < 0)
			return fail(r, (int)a, "moving %s: %s", v->path,
				    strerror((int)-a));
		if (!strcmp(v->path, "[vdso]"))
			r->t.syscall_ip += v->v->start - c->start;
	}
	return 0;
}

static int unmap_stub(struct rst *r)
{
	for (size_t i = 0; i < r->ncur; i++) {
		const struct ckpt_map *c = &r->cur[i];
		long a;

		if (is_special(c->path) || !strcmp(c->path, "[vsyscall]"))
			continue;
		/* the scratch stays (it may have merged with a neighbour) */
		if (overlaps(c->start, c->end, r->scratch,
			     r->scratch + SCRATCH_BYTES)) {
			if (c->start < r->scratch &&
			    (a = rcall(r, SYS_munmap, 2, (long)c->start,
				       (long)(r->scratch - c->start))) < 0)
				return fail(r, (int)a, "unmapping below the "
					    "scratch: %s", strerror((int)-a));
			if (c->end > r->scratch + SCRATCH_BYTES &&
			    (a = rcall(r, SYS_munmap, 2,
				       (long)(r->scratch + SCRATCH_BYTES),
				       (long)(c->end - r->scratch -
					      SCRATCH_BYTES))) < 0)
				return fail(r, (int)a, "unmapping above the "
					    "scratch: %s", strerror((int)-a));
			continue;
		}
		a = rcall(r, SYS_munmap, 2, (long)c->start,
			  (long)(c->end - c->start));
		if (a < 0)
			return fail(r, (int)a, "unmapping the stub's %s: %s",
				    c->path, strerror((int)-a));
	}
	return 0;
}

/* A path as it is now (remap); 1 if it moved. */
static int moved(const struct rst *r, const char *path, char *out,
		 size_t len)
{
	const char *m;

	if (r->remap && r->remap->marker && r->remap->to &&
	    (m = strstr(path, r->remap->marker))) {
		snprintf(out, len, "%s/%s", r->remap->to,
			 m + strlen(r->remap->marker));
		return 1;
	}
	snprintf(out, len, "%s", path);
	return 0;
}

/* Put a string into scratch at off, for a call that takes a path. */
static int put_str(struct rst *r, uint64_t off, const char *s)
{
	return ckpt_mem_write(r->t.pid, r->scratch + off, s, strlen(s) + 1);
}

static int map_file(struct rst *r, const struct vma_ref *v)
{
	const struct ckpt_s_vma *m = v->v;
	int wr = (m->flags & CKPT_VMA_SHARED) && (m->prot & PROT_WRITE);
	char path[4096];
	int mv = moved(r, v->path, path, sizeof(path));
	struct stat sb;
	long fd, a;
	int rc;

	if ((rc = put_str(r, 0, path)))
		return rc;
	fd = rcall(r, SYS_openat, 3, (long)AT_FDCWD, (long)r->scratch,
		   (long)((wr ? O_RDWR : O_RDONLY) | O_CLOEXEC));
	if (fd < 0)
		return fail(r, (int)fd, "opening %s to map it: %s", v->path,
			    strerror((int)-fd));
	a = rcall(r, SYS_fstat, 2, fd, (long)(r->scratch + 8192));
	if (a < 0 || (rc = ckpt_mem_read(r->t.pid, r->scratch + 8192, &sb,
					 sizeof(sb)))) {
		rcall(r, SYS_close, 1, fd);
		return fail(r, a < 0 ? (int)a : rc, "checking %s", v->path);
	}
	if ((uint64_t)sb.st_size != m->size ||
	    (!mv && (uint64_t)sb.st_mtim.tv_sec * 1000000000ull +
		    (uint64_t)sb.st_mtim.tv_nsec != m->mtime_ns)) {
		rcall(r, SYS_close, 1, fd);
		return fail(r, -ESTALE, "%s changed since the checkpoint "
			    "(size or time of modification)", v->path);
	}
	a = rcall(r, SYS_mmap, 6, (long)m->start, (long)(m->end - m->start),
		  (long)m->prot, (long)(((m->flags & CKPT_VMA_SHARED) ?
					  MAP_SHARED : MAP_PRIVATE) | MAP_FIXED),
		  fd, (long)m->pgoff);
	rcall(r, SYS_close, 1, fd);
	if (a < 0)
		return fail(r, (int)a, "mapping %s: %s", v->path,
			    strerror((int)-a));
	return 0;
}

static int map_image(struct rst *r)
{
	int rc;

	for (size_t i = 0; i < r->nvmas; i++) {
		const struct ckpt_s_vma *m = r->vmas[i].v;
		long a;

		if (m->flags & CKPT_VMA_VDSO)
			continue;
		if (m->flags & CKPT_VMA_INHERIT) {
			/* the stub's descriptor at that number, its
			 * launcher's: the file's bytes are the caller's */
			a = rcall(r, SYS_mmap, 6, (long)m->start,
				  (long)(m->end - m->start), (long)m->prot,
				  (long)(MAP_SHARED | MAP_FIXED), (long)m->fd,
				  (long)m->pgoff);
			if (a < 0)
				return fail(r, (int)a, "mapping inherited "
					    "descriptor %u at %#" PRIx64 ": %s",
					    m->fd, m->start,
					    strerror((int)-a));
			continue;
		}
		if (m->flags & CKPT_VMA_FILE) {
			if ((rc = map_file(r, &r->vmas[i])))
				return rc;
			continue;
		}
		a = rcall(r, SYS_mmap, 6, (long)m->start,
			  (long)(m->end - m->start), (long)m->prot,
			  (long)(MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
				 ((m->flags & CKPT_VMA_STACK) ? MAP_GROWSDOWN :
				  0)), -1L, 0L);
		if (a < 0)
			return fail(r, (int)a, "mapping %#" PRIx64 "-%#" PRIx64
				    ": %s", m->start, m->end,
				    strerror((int)-a));
	}
	return 0;
}

/* The private mapping of the image holding [a, a + len), if one does. */
static int writable_at(const struct rst *r, uint64_t a, uint64_t len)
{
	size_t lo = 0, hi = r->nvmas;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct ckpt_s_vma *m = r->vmas[mid].v;

		if (a >= m->end)
			lo = mid + 1;
		else if (a < m->start)
			hi = mid;
		else
			return a + len <= m->end &&
			       !(m->flags & (CKPT_VMA_SHARED | CKPT_VMA_VDSO));
	}
	return 0;
}

static int fill_pages(struct rst *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct ckpt_reader rd;
		struct ckpt_section s;
		char why[160];

		/* checked whole in check_chain */
		if (ckpt_read_begin(&rd, r->chain[i].buf, r->chain[i].len,
				    NULL, why, sizeof(why)))
			return fail(r, -EINVAL, "image %zu: %s", i, why);
		while (ckpt_read_section(&rd, &s)) {
			const unsigned char *d = s.data;
			uint64_t at;

			if (s.type == CKPT_S_FRESH && s.len == 16) {
				uint64_t fr[2];

				memcpy(fr, d, 16); /* checked in check_memory */
				rcall(r, SYS_madvise, 3, (long)fr[0],
				      (long)(fr[1] - fr[0]),
				      (long)MADV_DONTNEED);
				continue;
			}
			if (s.type != CKPT_S_PAGES)
				continue;
			memcpy(&at, d, 8); /* checked in check_memory */
			/* page by page where a run crosses mappings: a
			 * page no mapping holds any more is dropped */
			for (uint64_t off = 0; off < s.len - 8;) {
				uint64_t len = s.len - 8 - off;

				if (!writable_at(r, at + off, len))
					len = CKPT_PAGE;
				if (writable_at(r, at + off, len) &&
				    pwrite(r->mem, d + 8 + off, (size_t)len,
					   (off_t)(at + off)) != (ssize_t)len)
					return fail(r, -errno, "writing memory "
						    "at %#" PRIx64 ": %s",
						    at + off, strerror(errno));
				off += len;
			}
		}
	}
	return 0;
}

/* brk, the stack's, arguments' and environment's bounds, the auxv. */
static int set_mm(struct rst *r)
{
	struct prctl_mm_map mm = {
		.start_code = r->task.start_code, .end_code = r->task.end_code,
		.start_data = r->task.start_data, .end_data = r->task.end_data,
		.start_brk = r->task.start_brk, .brk = r->task.brk,
		.start_stack = r->task.start_stack,
		.arg_start = r->task.arg_start, .arg_end = r->task.arg_end,
		.env_start = r->task.env_start, .env_end = r->task.env_end,
		.auxv = (__u64 *)(uintptr_t)(r->scratch + 4096),
		.auxv_size = (uint32_t)r->auxvlen, .exe_fd = (uint32_t)-1,
	};
	long a;
	int rc;

	if ((rc = ckpt_mem_write(r->t.pid, r->scratch, &mm, sizeof(mm))) ||
	    (r->auxvlen && (rc = ckpt_mem_write(r->t.pid, r->scratch + 4096,
						r->auxv, r->auxvlen))))
		return rc;
	a = rcall(r, SYS_prctl, 5, (long)PR_SET_MM, (long)PR_SET_MM_MAP,
		  (long)r->scratch, (long)sizeof(mm), 0L);
	if (a < 0)
		return fail(r, (int)a, "setting the memory layout (brk, stack, "
			    "arguments): %s", strerror((int)-a));
	return 0;
}

/* ---- descriptors ---------------------------------------------------------- */

static const struct ckpt_section *pipe_data(struct rst *r, uint64_t id,
					    struct ckpt_section *s)
{
	struct ckpt_reader rd = r->last;

	rd.off = CKPT_HEADER_BYTES;
	rd.seen = 0;
	while (ckpt_read_section(&rd, s))
		if (s->type == CKPT_S_PIPE && s->len >= 8 &&
		    !memcmp(s->data, &id, 8))
			return s;
	return NULL;
}

static int make_pipe(struct rst *r, size_t i, long base)
{
	const struct ckpt_s_file *f = r->files[i].f;
	struct ckpt_section s;
	int fds[2];
	long a, end[2];
	int rc;

	/* non-blocking while we refill it (nothing reads it yet): a
	 * refill it cannot take fails instead of waiting forever; its
	 * ends get their own flags when placed */
	a = rcall(r, SYS_pipe2, 2, (long)r->scratch, (long)O_NONBLOCK);
	if (a < 0 || (rc = ckpt_mem_read(r->t.pid, r->scratch, fds,
					 sizeof(fds))))
		return fail(r, a < 0 ? (int)a : -EIO, "making a pipe");
	if (pipe_data(r, f->pipe, &s) && s.len > 8) {
		const unsigned char *d = (const unsigned char *)s.data + 8;
		uint64_t left = s.len - 8;

		if (left > 65536 &&
		    rcall(r, SYS_fcntl, 3, (long)fds[1], (long)F_SETPIPE_SZ,
			  (long)left) < 0)
			return fail(r, -ENOSPC, "a pipe holding %" PRIu64
				    " bytes: more than its user may have "
				    "in one", left);
		while (left) {
			uint64_t n = left < SCRATCH_BYTES / 2 ? left :
				     SCRATCH_BYTES / 2;

			if ((rc = ckpt_mem_write(r->t.pid, r->scratch, d, n)))
				return rc;
			a = rcall(r, SYS_write, 3, (long)fds[1],
				  (long)r->scratch, (long)n);
			if (a <= 0)
				return fail(r, a < 0 ? (int)a : -EIO,
					    "refilling a pipe (%" PRIu64
					    " bytes)", s.len - 8);
			d += a;
			left -= (uint64_t)a;
		}
	}
	for (int e = 0; e < 2; e++) {
		end[e] = rcall(r, SYS_fcntl, 3, (long)fds[e], (long)F_DUPFD,
			       base);
		rcall(r, SYS_close, 1, (long)fds[e]);
		if (end[e] < 0)
			return fail(r, (int)end[e], "parking a pipe's end");
	}
	for (size_t j = 0; j < r->nfiles; j++)
		if (r->files[j].f->kind == CKPT_F_PIPE &&
		    r->files[j].f->pipe == f->pipe)
			r->files[j].hi = (r->files[j].f->flags & O_ACCMODE) ==
					 O_RDONLY ? end[0] : end[1];
	return 0;
}

static int open_file(struct rst *r, size_t i, long base)
{
	const struct file_ref *fr = &r->files[i];
	char path[4096];
	long fd, hi;
	int rc;

	moved(r, fr->path, path, sizeof(path));
	if ((rc = put_str(r, 0, path)))
		return rc;
	fd = rcall(r, SYS_openat, 3, (long)AT_FDCWD, (long)r->scratch,
		   (long)(fr->f->flags & ~(uint32_t)(O_CREAT | O_EXCL |
						     O_TRUNC)));
	if (fd < 0)
		return fail(r, (int)fd, "opening %s again (descriptor %u): "
			    "%s", fr->path, fr->f->fd, strerror((int)-fd));
	if (fr->f->kind == CKPT_F_REGULAR &&
	    rcall(r, SYS_lseek, 3, fd, (long)fr->f->pos, (long)SEEK_SET) < 0) {
		rcall(r, SYS_close, 1, fd);
		return fail(r, -EIO, "seeking %s to %" PRIu64, fr->path,
			    fr->f->pos);
	}
	hi = rcall(r, SYS_fcntl, 3, fd, (long)F_DUPFD, base);
	rcall(r, SYS_close, 1, fd);
	if (hi < 0)
		return fail(r, (int)hi, "parking descriptor %u", fr->f->fd);
	r->files[i].hi = hi;
	return 0;
}

static int set_files(struct rst *r)
{
	long base = 3;
	int rc;

	for (size_t i = 0; i < r->nfiles; i++)
		if ((long)r->files[i].f->fd >= base)
			base = (long)r->files[i].f->fd + 1;
	/* the stub's own, but for 0-2 (the node manager's) and those the
	 * image inherits (given the stub at their numbers) */
	{
		long from = 3;

		for (;;) {
			long next = (long)~0u + 1L;

			for (size_t i = 0; i < r->nfiles; i++)
				if (r->files[i].f->kind == CKPT_F_INHERIT &&
				    (long)r->files[i].f->fd >= from &&
				    (long)r->files[i].f->fd < next)
					next = (long)r->files[i].f->fd;
			if (next > from)
				rcall(r, SYS_close_range, 3, from, next - 1,
				      0L);
			if (next > (long)~0u)
				break;
			from = next + 1;
		}
	}
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct ckpt_s_file *f = r->files[i].f;

		rc = 0;
		if (f->kind == CKPT_F_PIPE && r->files[i].hi < 0)
			rc = make_pipe(r, i, base);
		else if (f->kind == CKPT_F_REGULAR || f->kind == CKPT_F_DEVICE)
			rc = open_file(r, i, base);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct ckpt_s_file *f = r->files[i].f;
		long a;

		if (f->kind == CKPT_F_INHERIT)
			continue;
		a = rcall(r, SYS_dup3, 3, r->files[i].hi, (long)f->fd,
			  (long)(f->cloexec ? O_CLOEXEC : 0));
		if (a >= 0)
			a = rcall(r, SYS_fcntl, 3, (long)f->fd, (long)F_SETFL,
				  (long)(f->flags & (O_APPEND | O_NONBLOCK |
						     O_ASYNC | O_NOATIME)));
		if (a < 0)
			return fail(r, (int)a, "placing descriptor %u: %s",
				    f->fd, strerror((int)-a));
	}
	rcall(r, SYS_close_range, 3, base, (long)~0u, 0L);
	return 0;
}

/* ---- the rest of the process ---------------------------------------------- */

static int set_env(struct rst *r)
{
	char cwd[4096], was[4096];
	long a;
	int rc;

	memcpy(was, r->cwd, r->cwdlen);
	was[r->cwdlen] = '\0';
	moved(r, was, cwd, sizeof(cwd));
	if ((rc = put_str(r, 0, cwd)))
		return rc;
	if ((a = rcall(r, SYS_chdir, 1, (long)r->scratch)) < 0)
		return fail(r, (int)a, "entering the working directory %s: %s",
			    cwd, strerror((int)-a));
	rcall(r, SYS_umask, 1, (long)r->task.umask);
	rcall(r, SYS_personality, 1, (long)r->task.personality);
	for (int i = 0; r->have_rl && i < 16; i++) {
		uint64_t now[2], v[2];

		/* lowered to what the owner had, never raised: the process
		 * asks, with its own rights, and reads its own first */
		if (rcall(r, SYS_prlimit64, 4, 0L, (long)i, 0L,
			  (long)r->scratch) < 0 ||
		    ckpt_mem_read(r->t.pid, r->scratch, now, sizeof(now)))
			continue;
		v[1] = r->rl[i][1] < now[1] ? r->rl[i][1] : now[1];
		v[0] = r->rl[i][0] < v[1] ? r->rl[i][0] : v[1];
		if ((rc = ckpt_mem_write(r->t.pid, r->scratch, v, sizeof(v))))
			return rc;
		rcall(r, SYS_prlimit64, 4, 0L, (long)i, (long)r->scratch, 0L);
	}
	return 0;
}

static int set_signals(struct rst *r)
{
	for (int s = 1; s <= 64; s++) {
		long a;
		int rc;

		if (s == SIGKILL || s == SIGSTOP || !r->sig[s - 1].handler)
			continue;
		if ((rc = ckpt_mem_write(r->t.pid, r->scratch, &r->sig[s - 1],
					 sizeof(r->sig[0]))))
			return rc;
		a = rcall(r, SYS_rt_sigaction, 4, (long)s, (long)r->scratch, 0L,
			  8L);
		if (a < 0)
			return fail(r, (int)a, "the disposition of signal %d: "
				    "%s", s, strerror((int)-a));
	}
	if (ptrace(PTRACE_SETSIGMASK, r->t.pid, (void *)8, &r->task.sigmask) < 0)
		return fail(r, -errno, "the signal mask: %s", strerror(errno));
	return 0;
}

static int set_cpu(struct rst *r)
{
	struct iovec iov = { (void *)(uintptr_t)r->xstate,
			     (size_t)r->xstatelen };

	if (ptrace(PTRACE_SETREGSET, r->t.pid, (void *)NT_X86_XSTATE, &iov) < 0)
		return fail(r, -errno, "the FP/SIMD state (%" PRIu64 " bytes): "
			    "%s", r->xstatelen, strerror(errno));
	r->regs.orig_rax = (unsigned long long)-1;
	r->t.regs = r->regs;
	return 0;
}

static int restore_held(struct rst *r)
{
	char path[64];
	int rc, found = 0;

	if ((rc = ckpt_proc_maps(r->t.pid, &r->cur, &r->ncur)))
		return fail(r, rc, "reading the stub's mappings");
	for (size_t i = 0; i < r->ncur && !found; i++)
		if (!strcmp(r->cur[i].path, "[vdso]"))
			found = !ckpt_trace_find_syscall(&r->t, r->cur[i].start,
							 r->cur[i].end);
	if (!found)
		return fail(r, -ENOTSUP, "the stub has no vDSO to make system "
			    "calls from");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)r->t.pid);
	if ((r->mem = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return fail(r, -errno, "%s: %s", path, strerror(errno));
	if ((rc = place_scratch(r)) || (rc = move_vdso(r)))
		return rc;
	/* the moves changed the stub's layout: what to unmap is read anew */
	ckpt_proc_maps_free(r->cur, r->ncur);
	r->cur = NULL;
	r->ncur = 0;
	if ((rc = ckpt_proc_maps(r->t.pid, &r->cur, &r->ncur)))
		return fail(r, rc, "reading the stub's mappings again");
	if ((rc = unmap_stub(r)) || (rc = map_image(r)) ||
	    (rc = fill_pages(r)) || (rc = set_mm(r)) || (rc = set_files(r)) ||
	    (rc = set_env(r)) || (rc = set_signals(r)))
		return rc;
	rcall(r, SYS_munmap, 2, (long)r->scratch, (long)SCRATCH_BYTES);
	return set_cpu(r);
}

static void rst_free(struct rst *r)
{
	for (size_t i = 0; i < r->nvmas; i++)
		free(r->vmas[i].path);
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i].path);
	free(r->vmas);
	free(r->files);
	ckpt_proc_maps_free(r->cur, r->ncur);
}

int ckpt_check(const struct ckpt_blob *chain, size_t n,
	       const struct ckpt_ident *expect, char *why, size_t whylen)
{
	struct rst r = { .chain = chain, .n = n, .why = why,
			 .whylen = whylen, .mem = -1 };
	int rc;

	if (why && whylen)
		why[0] = '\0';
	rc = check_chain(&r, expect);
	rst_free(&r);
	return rc;
}

int ckpt_restore(pid_t pid, const struct ckpt_blob *chain, size_t n,
		 const struct ckpt_ident *expect,
		 const struct ckpt_remap *remap, char *why, size_t whylen)
{
	struct rst r = { .chain = chain, .n = n, .why = why,
			 .whylen = whylen, .mem = -1, .remap = remap };
	int rc, st;

	if (why && whylen)
		why[0] = '\0';
	rc = check_chain(&r, expect);
	if (!rc && (rc = ckpt_trace_take(&r.t, pid)))
		fail(&r, rc, "process %d is not stopped at its exec under "
		     "our trace: %s", (int)pid, strerror(-rc));
	if (!rc)
		rc = restore_held(&r);
	if (r.mem >= 0)
		close(r.mem);
	if (!rc) {
		ckpt_trace_detach(&r.t);
	} else {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
			;
	}
	rst_free(&r);
	return rc;
}

/* The sections are walked by their lengths, each checked against the
 * image; the digest is the caller's (ckpt_check) to have checked. */
long ckpt_note(const struct ckpt_blob *b, void *buf, size_t cap)
{
	const unsigned char *p = b->buf;
	size_t off = CKPT_HEADER_BYTES, end;

	if (!p || b->len < CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES ||
	    memcmp(p, "STORMCKP", 8))
		return -EINVAL;
	end = b->len - CKPT_TRAILER_BYTES;
	while (end - off >= CKPT_SECTION_BYTES) {
		uint32_t type;
		uint64_t len;

		memcpy(&type, p + off, 4);
		memcpy(&len, p + off + 8, 8);
		type = le32toh(type);
		len = le64toh(len);
		if (len > end - off - CKPT_SECTION_BYTES)
			return -EINVAL;
		if (type == CKPT_S_NOTE) {
			if (len > CKPT_NOTE_MAX)
				return -EINVAL;
			memcpy(buf, p + off + CKPT_SECTION_BYTES,
			       len < cap ? (size_t)len : cap);
			return (long)len;
		}
		len = (len + 7) / 8 * 8;
		if (len > end - off - CKPT_SECTION_BYTES)
			return -EINVAL;
		off += CKPT_SECTION_BYTES + (size_t)len;
	}
	return -ENOENT;
}
