/*
 * track.c — which pages a process wrote since its last capture, by
 * userfaultfd asynchronous write-protect: every tracked page is
 * write-protected at a capture; the process's first write to a page
 * clears the protection in the kernel without a fault to us (≈1 µs);
 * PAGEMAP_SCAN at the next capture lists the pages written and protects
 * them again in the same walk (≈50 ns a page).
 *
 * vm.unprivileged_userfaultfd is 0 here, so the userfaultfd is made by
 * the process itself (a remote call, UFFD_USER_MODE_ONLY, with its own
 * rights) and taken by the agent with pidfd_getfd; the process's own
 * descriptor is closed again, so it sees no change.  Only anonymous
 * private memory can be registered; a private file mapping (a binary's
 * data) is saved whole each time, and so is a mapping made since the
 * last capture, which is registered then (its range FRESH in the image).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "ckpt_int.h"

/* Newer than Debian 12's kernel headers (Linux 6.7 and 6.1's uapi). */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask;
	uint64_t return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

struct ckpt_track {
	pid_t pid;
	int uffd, pagemap;
	uint64_t epoch;          /* of the last capture: a delta's parent */
};

int ckpt_track_create(struct ckpt_track **out)
{
	struct ckpt_track *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->uffd = t->pagemap = -1;
	*out = t;
	return 0;
}

void ckpt_track_destroy(struct ckpt_track *t)
{
	if (!t)
		return;
	if (t->uffd >= 0)
		close(t->uffd);
	if (t->pagemap >= 0)
		close(t->pagemap);
	free(t);
}

int ckpt_track_armed(const struct ckpt_track *t, pid_t pid, uint64_t *epoch)
{
	if (!t || t->uffd < 0 || t->pid != pid)
		return 0;
	*epoch = t->epoch;
	return 1;
}

void ckpt_track_done(struct ckpt_track *t, uint64_t epoch)
{
	t->epoch = epoch;
}

int ckpt_track_arm(struct ckpt_track *t, struct ckpt_tracee *p)
{
	struct uffdio_api api = { .api = UFFD_API, .features =
		UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	char path[64];
	long fd;
	int pidfd, mine;

	if (t->uffd >= 0) {
		close(t->uffd);
		close(t->pagemap);
		t->uffd = t->pagemap = -1;
	}
	fd = ckpt_trace_syscall(p, SYS_userfaultfd, 1,
				(long)(O_CLOEXEC | O_NONBLOCK |
				       UFFD_USER_MODE_ONLY));
	if (fd < 0)
		return (int)fd;
	pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	mine = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd,
					       0);
	if (pidfd >= 0)
		close(pidfd);
	ckpt_trace_syscall(p, SYS_close, 1, fd);
	if (mine < 0)
		return -errno;
	if (ioctl(mine, UFFDIO_API, &api) < 0) {
		close(mine);
		return -errno;
	}
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)p->pid);
	if ((t->pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		close(mine);
		return -errno;
	}
	t->uffd = mine;
	t->pid = p->pid;
	return 0;
}

int ckpt_track_register(struct ckpt_track *t, uint64_t start, uint64_t end)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};

	if (ioctl(t->uffd, UFFDIO_REGISTER, &reg) < 0)
		return -errno;
	if (ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp) < 0)
		return -errno;
	return 0;
}

int ckpt_track_scan(struct ckpt_track *t, uint64_t start, uint64_t end,
		    struct ckpt_run **runs, size_t *nruns, size_t *cap)
{
	struct page_region vec[512];
	struct pm_scan_arg a;

	while (start < end) {
		long n;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;
		a.start = start;
		a.end = end;
		a.vec = (uint64_t)(uintptr_t)vec;
		a.vec_len = sizeof(vec) / sizeof(vec[0]);
		a.category_mask = PAGE_IS_WRITTEN;
		a.return_mask = PAGE_IS_WRITTEN;
		if ((n = ioctl(t->pagemap, PAGEMAP_SCAN, &a)) < 0)
			return -errno; /* EPERM: not registered */
		for (long i = 0; i < n; i++) {
			if (*nruns == *cap) {
				struct ckpt_run *nr;

				*cap = *cap ? *cap * 2 : 256;
				if (!(nr = realloc(*runs, *cap * sizeof(*nr))))
					return -ENOMEM;
				*runs = nr;
			}
			(*runs)[*nruns].start = vec[i].start;
			(*runs)[(*nruns)++].end = vec[i].end;
		}
		if (a.walk_end <= start)
			break;
		start = a.walk_end;
	}
	return 0;
}
