/*
 * ckpt_store.c — checkpoint images on a node's disk (ckpt_store.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_store.h"

void nm_store_rm_tree(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (fd < 0) {
		unlinkat(dirfd, name, 0);
		return;
	}
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			nm_store_rm_tree(fd, e->d_name);
	closedir(d);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

static void job_path(const char *root, uint32_t job, char *p, size_t n)
{
	snprintf(p, n, "%s/job-%u", root, job);
}

/* The L3 copies of what this node wrote of epoch `name` of job (its
 * files in the L1 directory efd_l1): the same names removed in the
 * shared directory, then the directories there if nothing else is left
 * (other nodes' copies stay theirs to remove). */
static void remove_shared(const char *shared, uint32_t job, int l1_job,
			  const char *name)
{
	char p[1200];
	struct dirent *e;
	int efd, sfd;
	DIR *d;

	if (!shared || !shared[0])
		return;
	snprintf(p, sizeof(p), "%s/job-%u/%s", shared, job, name);
	if ((sfd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC)) < 0)
		return;
	if ((efd = openat(l1_job, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			  O_CLOEXEC)) >= 0 && (d = fdopendir(efd))) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(sfd, e->d_name, 0);
		closedir(d);
	} else if (efd >= 0) {
		close(efd);
	}
	close(sfd);
	rmdir(p); /* fails while another node's copies are there */
	snprintf(p, sizeof(p), "%s/job-%u", shared, job);
	rmdir(p);
}

void nm_store_remove_epoch(const char *root, const char *shared,
			   uint32_t job, uint32_t epoch)
{
	char p[1100], name[32];
	int fd;

	job_path(root, job, p, sizeof(p));
	if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	snprintf(name, sizeof(name), "epoch-%u", epoch);
	remove_shared(shared, job, fd, name);
	nm_store_rm_tree(fd, name);
	close(fd);
}

/* Epochs of job before `before` go (the chains older than the last
 * two full images). */
void nm_store_remove_before(const char *root, const char *shared,
			    uint32_t job, uint32_t before)
{
	char p[1100];
	struct dirent *e;
	DIR *d;

	job_path(root, job, p, sizeof(p));
	if (!(d = opendir(p)))
		return;
	while ((e = readdir(d))) {
		unsigned long v;

		if (sscanf(e->d_name, "epoch-%lu", &v) == 1 && v < before) {
			remove_shared(shared, job, dirfd(d), e->d_name);
			nm_store_rm_tree(dirfd(d), e->d_name);
		}
	}
	closedir(d);
}

/* The directory of epoch e of job below root, made (afresh if fresh):
 * its descriptor, or -errno. */
int nm_store_epoch_dir(const char *root, uint32_t job, uint32_t epoch,
		       int fresh)
{
	char p[1100], name[32];
	int jfd, efd;

	snprintf(p, sizeof(p), "%s/job-%u", root, job);
	if (mkdir(p, 0711) < 0 && errno != EEXIST)
		return -errno;
	if ((jfd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC)) < 0)
		return -errno;
	snprintf(name, sizeof(name), "epoch-%u", epoch);
	if (fresh)
		nm_store_rm_tree(jfd, name); /* a half-written one of before */
	if ((mkdirat(jfd, name, 0711) < 0 && errno != EEXIST) ||
	    (efd = openat(jfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			  O_CLOEXEC)) < 0) {
		efd = -errno;
	}
	close(jfd);
	return efd;
}

/* Bytes of uid's images below root (every job's, every epoch's). */
uint64_t nm_store_usage(const char *root, uid_t uid)
{
	uint64_t sum = 0;
	struct dirent *j, *e, *f;
	DIR *dj, *de, *df;

	if (!(dj = opendir(root)))
		return 0;
	while ((j = readdir(dj))) {
		int jfd;

		if (strncmp(j->d_name, "job-", 4) ||
		    (jfd = openat(dirfd(dj), j->d_name, O_RDONLY |
				  O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (!(de = fdopendir(jfd))) {
			close(jfd);
			continue;
		}
		while ((e = readdir(de))) {
			int efd;

			if (strncmp(e->d_name, "epoch-", 6) ||
			    (efd = openat(dirfd(de), e->d_name, O_RDONLY |
					  O_DIRECTORY | O_NOFOLLOW |
					  O_CLOEXEC)) < 0)
				continue;
			if (!(df = fdopendir(efd))) {
				close(efd);
				continue;
			}
			while ((f = readdir(df))) {
				struct stat sb;

				if (!fstatat(dirfd(df), f->d_name, &sb,
					     AT_SYMLINK_NOFOLLOW) &&
				    S_ISREG(sb.st_mode) && sb.st_uid == uid)
					sum += (uint64_t)sb.st_size;
			}
			closedir(df);
		}
		closedir(de);
	}
	closedir(dj);
	return sum;
}
