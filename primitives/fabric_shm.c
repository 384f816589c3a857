/*
 * fabric_shm.c — what the shm provider of libfabric 1.17 needs beyond
 * messages: a futex "bell" per node to wake a sleeping progress thread,
 * lock files that tell a live node from a dead one, lazy address
 * insertion, and messages sent as inject-sized pieces.  See fabric.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "sp_config.h"
#include "sp_transport.h"

#include "sp_fabric.h"

long fab_futex(_Atomic uint32_t *w, int op, uint32_t val, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };
	return syscall(SYS_futex, (uint32_t *)w, op, val,
		       op == FUTEX_WAIT ? &ts : NULL, NULL, 0);
}

/* Wake a sleeping W_BELL thread.  The fence pairs with the sleeper's
 * store-then-look: either it sees what we posted or we see it asleep. */
void fab_ring(struct bell *b)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (b && atomic_load(&b->sleeping) && atomic_exchange(&b->sleeping, 0))
		fab_futex(&b->sleeping, FUTEX_WAKE, 1, 0);
}

/* Whether the node of b keeps event ev quiet; called after our post, the
 * fence orders the two as in fab_ring. */
int fab_quiet(struct bell *b, uint32_t ev)
{
	atomic_thread_fence(memory_order_seq_cst);
	return b && ev < 32 && (atomic_load(&b->quiet) >> ev & 1);
}

/* ------------------------------------------------------------------------ */
/* shm: lazy insertion, bells, liveness                                      */
/* ------------------------------------------------------------------------ */

int fab_lock_path(char *buf, size_t len, const char *name)
{
	return snprintf(buf, len, SHM_DIR "%s.lock", name) >= (int)len;
}

int fab_lock_held(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* 1.17's shm guards each region with a spinlock in shared memory: a peer
 * killed while holding its own makes any later send to it spin forever.
 * Its progress thread holds a robust mutex, which the kernel marks
 * FUTEX_OWNER_DIED when the holder dies: a load, no syscall, so every send
 * checks it (glibc's futex word, __data.__lock).  This narrows the window
 * but cannot close it: a send that starts spinning while the peer is being
 * killed spins on. */
int fab_died(struct bell *b)
{
	return b && (__atomic_load_n(&b->alive.__data.__lock,
				     __ATOMIC_ACQUIRE) & FUTEX_OWNER_DIED);
}

/* Insert node n.  libfabric 1.17's shm crashes in smr_progress_connreq
 * when a peer contacts us whose name we inserted before its region existed
 * (NULL region) or whose earlier incarnation we had mapped (stale region).
 * So peers are inserted lazily — not in id order, hence p->fa — once their
 * lock is held and their endpoint ready, under a name per incarnation. */
int fab_shm_resolve_locked(struct fab *f, struct peer *p, uint32_t n)
{
	char path[PATH_MAX], region[sizeof(p->bell->region)];
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	struct stat st;
	void *m;

	if (p->lfd < 0) {
		if (fab_lock_path(path, sizeof(path), f->names[n]) ||
		    (p->lfd = open(path, O_RDWR | O_CLOEXEC)) < 0)
			return -FI_EAGAIN;
		/* The owner creates the file, then sizes it: mapping a file
		 * shorter than the bell would SIGBUS on the first read. */
		if (fstat(p->lfd, &st) < 0 || st.st_size < (off_t)BELL_SIZE) {
			close(p->lfd);
			p->lfd = -1;
			return -FI_EAGAIN;
		}
		m = mmap(NULL, BELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 p->lfd, 0);
		if (m == MAP_FAILED) {
			close(p->lfd);
			p->lfd = -1;
			return -FI_EAGAIN;
		}
		p->bell = m;
	}
	if (!atomic_load(&p->bell->ready) || !fab_lock_held(p->lfd) ||
	    fab_died(p->bell))
		return -FI_EAGAIN;
	p->inc = atomic_load(&p->bell->inc);
	p->pid = atomic_load(&p->bell->pid);
	memcpy(region, p->bell->region, sizeof(region));
	region[sizeof(region) - 1] = '\0';
	atomic_thread_fence(memory_order_acquire);
	if (!atomic_load(&p->bell->ready) ||
	    atomic_load(&p->bell->inc) != p->inc)
		return -FI_EAGAIN; /* it is restarting: a torn name */
	if (fi_av_insert(f->av, region, 1, &fa, 0, NULL) != 1 ||
	    fa == FI_ADDR_NOTAVAIL)
		return -FI_EAGAIN;
	p->fa = fa;
	p->region = fab_region_map(region, p->pid);
	return 0;
}

/* Drop what we know of p's incarnation.  Its AV entry stays: in 1.17
 * fi_av_remove leaves a dangling region pointer for the slot's next user. */
void fab_shm_forget_locked(struct fab *f, struct peer *p)
{
	p->fa = FI_ADDR_NOTAVAIL;
	fab_region_unmap(p->region);
	p->region = NULL;
	if (p->gmem)
		munmap((void *)p->gmem, p->gmem_len);
	p->gmem = NULL;
	p->gmem_len = 0;
	if (p->stage_map)
		fab_shm_unpin_locked(f, p->stage_map); /* pins keep it */
	p->stage_map = NULL;
	p->stage = NULL;
	p->stage_len = 0;
	if (p->bell)
		munmap(p->bell, BELL_SIZE);
	if (p->lfd >= 0)
		close(p->lfd);
	p->bell = NULL;
	p->lfd = -1;
}

/* Our lock file.  Its OFD lock says we live (a live node with our name is
 * a configuration error); holding it, the region our bell names is a
 * killed predecessor's: removed, or the provider refuses ours (EBUSY).
 * close() removes the file; kill -9 leaves it and the region behind. */
int fab_shm_claim(struct fab *f, char *path, size_t len, char *err,
		     size_t errlen)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	const char *name = f->names[f->self];
	pthread_mutexattr_t ma;
	struct timespec ts;
	struct stat a, b;
	void *m;

	if (fab_lock_path(path, len, name))
		return -ENAMETOOLONG;
	for (int tries = 0;; tries++) {
		f->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (f->lock_fd < 0 || ftruncate(f->lock_fd, BELL_SIZE) != 0)
			return -errno;
		if (fcntl(f->lock_fd, F_OFD_SETLK, &fl) != 0)
			return fab_fail(err, errlen, -STORM_ECONFIG,
				    "fabric: shm name \"%s\" of node %u is in "
				    "use by a running process — give every "
				    "node its own address", name, f->self);
		/* Did we lock a file its closing owner just removed? */
		if ((fstat(f->lock_fd, &a) == 0 && stat(path, &b) == 0 &&
		     a.st_ino == b.st_ino) || tries == 3)
			break;
		close(f->lock_fd);
	}
	m = mmap(NULL, BELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 f->lock_fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	f->bell = m;
	atomic_store(&f->bell->ready, 0);
	if (pthread_mutexattr_init(&ma) || pthread_mutexattr_setpshared(&ma,
	    PTHREAD_PROCESS_SHARED) || pthread_mutexattr_setrobust(&ma,
	    PTHREAD_MUTEX_ROBUST) || pthread_mutex_init(&f->bell->alive, &ma))
		return -EINVAL; /* the predecessor's, if any, is dead */
	pthread_mutexattr_destroy(&ma);
	f->bell->region[sizeof(f->bell->region) - 1] = '\0';
	if (f->bell->region[0] && !strchr(f->bell->region, '/') &&
	    (size_t)snprintf(path, len, SHM_DIR "%s", f->bell->region) < len) {
		unlink(path);
		if ((size_t)snprintf(path, len, SHM_DIR "%s.gmem",
				     f->bell->region) < len)
			unlink(path);
		if ((size_t)snprintf(path, len, SHM_DIR "%s.stage",
				     f->bell->region) < len)
			unlink(path);
	}
	atomic_store(&f->bell->gmem_len, 0);
	atomic_store(&f->bell->stage_len, 0);
	atomic_store(&f->bell->pid, (int32_t)getpid());
	clock_gettime(CLOCK_REALTIME, &ts);
	atomic_store(&f->bell->inc,
		     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	snprintf(f->bell->region, sizeof(f->bell->region), "%s-%llx", name,
		 (unsigned long long)atomic_load(&f->bell->inc));
	return 0;
}

static int map_peer_stage(struct fab *f, struct peer *p);

/* shm: read s->rlen bytes of p's staging here and now, with one copy.
 * Preferably a memcpy from p's arena, which is a file we map read-only
 * (share_stage): no syscall, no page pinning — CMA costs about four times
 * a memcpy per byte here, and its page-table walks of one parent's pages
 * contend between its children.  Else with process_vm_readv (CMA).  Not
 * fi_read: 1.17's shm makes the CMA copy holding p's region spinlock, so
 * the children of one parent copy one at a time while the others spin, on
 * a machine with fewer cores than nodes.  Returns 0 (s reported), -EPERM
 * (CMA not allowed: use fi_read), -ENOSYS (neither way: use fi_read) or
 * -FI_ECONNRESET (p is gone). */
int fab_shm_read_locked(struct fab *f, struct peer *p, struct fsend *s)
{
	size_t done = 0;

	if (p->stage || map_peer_stage(f, p) == 0) {
		uint64_t off = s->raddr - p->stage_base;

		/* A file never faults (it is as long as we mapped it);
		 * only an address outside it goes the CMA way (and fails) */
		if (s->raddr >= p->stage_base && off <= p->stage_len &&
		    s->rlen <= p->stage_len - off) {
			atomic_thread_fence(memory_order_acquire);
			memcpy(s->rlocal, p->stage + off, s->rlen);
			done = s->rlen;
		}
	}
	if (!done && !f->cma)
		return -ENOSYS;
	while (done < s->rlen) {
		struct iovec l = { .iov_base = (uint8_t *)s->rlocal + done,
				   .iov_len = s->rlen - done };
		struct iovec r = { .iov_base = (void *)(uintptr_t)(s->raddr +
								   done),
				   .iov_len = s->rlen - done };
		ssize_t n = process_vm_readv(p->pid, &l, 1, &r, 1, 0);

		if (n < 0 && (errno == EPERM || errno == ENOSYS))
			return -EPERM;
		if (n <= 0 || atomic_load(&p->bell->inc) != p->inc ||
		    fab_died(p->bell))
			return -FI_ECONNRESET; /* gone, or another process */
		done += (size_t)n;
	}
	/* as with CMA: the bytes count only if p lived through the copy */
	if (atomic_load(&p->bell->inc) != p->inc || fab_died(p->bell))
		return -FI_ECONNRESET;
	s->status = 0;
	p->sent = 1;
	fab_done_locked(f, s);
	return 0;
}

/* shm: post s as pieces from s->off on; -FI_EAGAIN keeps the progress. */
int fab_post_frags_locked(struct fab *f, struct peer *p, struct fsend *s)
{
	size_t hl = s->len - PREFIX, total = hl + s->paylen, cap, h, n, k;
	/* s->payload is referenced (never copied) for pieces */
	uint8_t piece[FRAG_MAX];
	ssize_t rc;

	cap = f->inject_size < FRAG_MAX ? f->inject_size : FRAG_MAX;
	while (s->off < total) {
		h = s->off ? PREFIX : PREFIX + 4;
		n = total - s->off < cap - h ? total - s->off : cap - h;
		k = s->off >= hl ? 0 : hl - s->off < n ? hl - s->off : n;
		memcpy(piece, s->buf, 4);
		put_le32(piece + 4, s->off ? FRAG_MORE : FRAG_FIRST);
		if (!s->off)
			put_le32(piece + PREFIX, (uint32_t)total);
		if (k)
			memcpy(piece + h, s->buf + PREFIX + s->off, k);
		if (n > k)
			memcpy(piece + h + k, (const uint8_t *)s->payload +
						      (s->off + k - hl), n - k);
		if (fab_died(p->bell)) /* it may have died holding its lock */
			return -FI_ECONNRESET;
		if ((rc = fi_inject(f->ep, piece, h + n, p->fa)))
			return (int)rc;
		s->off += n;
		p->stall_since = 0;
	}
	return 0;
}

/* shm base names "storm-<uid>-<name>": users sharing /dev/shm do not
 * collide. */
int fab_shm_names(struct fab *f, const sp_config_t *cfg, char *err,
		     size_t errlen)
{
	if (!(f->names = calloc(f->nnodes, sizeof(char *))))
		return -ENOMEM;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const char *a = cfg->addrs[i];
		a += strncmp(a, "fi_shm://", 9) ? 0 : 9;
		if (!*a || strchr(a, '/') || strlen(a) > 200)
			return fab_fail(err, errlen, -STORM_ECONFIG,
				    "fabric: shm address \"%s\" of node %u "
				    "must be a name of 1-200 bytes without '/'",
				    cfg->addrs[i], i);
		if (asprintf(&f->names[i], "storm-%u-%s", (unsigned)getuid(),
			     a) < 0) {
			f->names[i] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* shm: global memory peers load directly                                    */
/* ------------------------------------------------------------------------ */

static int shm_path(char *buf, size_t len, const char *region,
		    const char *sfx)
{
	return !region[0] || strchr(region, '/') ||
	       (size_t)snprintf(buf, len, SHM_DIR "%s.%s", region, sfx) >= len;
}

static int gmem_path(char *buf, size_t len, const char *region)
{
	return shm_path(buf, len, region, "gmem");
}

/* A new file "<region>.<sfx>" of len bytes (sparse: pages cost once
 * used), mapped read-write; named after this incarnation's region, so a
 * peer never maps a predecessor's.  NULL on any failure. */
static void *share_file(struct fab *f, const char *sfx, size_t len)
{
	char path[PATH_MAX];
	void *m;
	int fd;

	if (!f->shm || f->bell == &f->own ||
	    shm_path(path, sizeof(path), f->bell->region, sfx))
		return NULL;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len) != 0) {
		close(fd);
		unlink(path);
		return NULL;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		unlink(path);
		return NULL;
	}
	return m;
}

/* Our global memory, in a file peers map.  NULL: keep private memory. */
void *fab_shm_share_gmem(struct fab *f, size_t len)
{
	void *m = share_file(f, "gmem", len);

	if (!m)
		return NULL;
	f->gmem = m;
	f->gmem_len = len;
	atomic_store(&f->bell->gmem_len, (uint64_t)len); /* peers may map */
	return m;
}

/* Our staging arena, in a file our children map to read their chunks
 * with a memcpy.  NULL: the engine maps its own (read by CMA). */
void *fab_shm_share_stage(struct fab *f, size_t len)
{
	void *m = share_file(f, "stage", len);

	if (!m)
		return NULL;
	f->stage = m;
	f->stage_len = len;
	atomic_store(&f->bell->stage_base, (uint64_t)(uintptr_t)m);
	atomic_store(&f->bell->stage_len, (uint64_t)len); /* peers may map */
	return m;
}

void fab_shm_unshare_stage(struct fab *f)
{
	char path[PATH_MAX];

	if (!f->stage)
		return;
	if (f->bell != &f->own) {
		atomic_store(&f->bell->stage_len, 0);
		if (!shm_path(path, sizeof(path), f->bell->region, "stage"))
			unlink(path);
	}
	munmap(f->stage, f->stage_len);
	f->stage = NULL;
}

/* Map p's staging arena read-only, if it shares one.  0 or -ENOSYS.  The
 * mapping outlives p: a read racing its death copies bytes of a transfer
 * that then never commits (the caller checks p lived through it). */
static int map_peer_stage(struct fab *f, struct peer *p)
{
	char region[sizeof(p->bell->region)], path[PATH_MAX];
	struct fab_pinmap *pm;
	uint64_t len, base;
	struct stat st;
	void *m;
	int fd;

	if (!p->bell || !(len = atomic_load(&p->bell->stage_len)))
		return -ENOSYS;
	base = atomic_load(&p->bell->stage_base);
	memcpy(region, p->bell->region, sizeof(region));
	region[sizeof(region) - 1] = '\0';
	if (atomic_load(&p->bell->inc) != p->inc ||
	    shm_path(path, sizeof(path), region, "stage"))
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOSYS;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < len) {
		close(fd);
		return -ENOSYS;
	}
	if (!(pm = calloc(1, sizeof(*pm)))) {
		close(fd);
		return -ENOSYS;
	}
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		free(pm);
		return -ENOSYS;
	}
	pm->m = m;
	pm->len = len;
	pm->refs = 1; /* p's */
	pm->next = f->pinmaps;
	f->pinmaps = pm;
	p->stage_map = pm;
	p->stage = m;
	p->stage_len = len;
	p->stage_base = base;
	return 0;
}

/* The len bytes at raddr of p's arena, in place, and a reference that
 * keeps them mapped — after p dies, and after we forget it — until
 * fab_shm_unpin_locked.  The mapping is of the file, so bytes p wrote
 * before it named them to us stay as it left them; p itself keeps them
 * until we answer (xfer.c).  NULL: not possible (no shared arena, p
 * unknown, gone or another incarnation): the caller reads instead. */
const void *fab_shm_pin_locked(struct fab *f, struct peer *p,
			       uint64_t raddr, size_t len, void **pin)
{
	uint32_t n = (uint32_t)(p - f->peers);
	uint64_t off;

	if (p->state == P_DOWN)
		return NULL;
	if (p->fa == FI_ADDR_NOTAVAIL && fab_shm_resolve_locked(f, p, n))
		return NULL;
	if (!p->bell || (!p->stage && map_peer_stage(f, p)))
		return NULL;
	off = raddr - p->stage_base;
	if (raddr < p->stage_base || off > p->stage_len ||
	    len > p->stage_len - off)
		return NULL;
	if (fab_died(p->bell) || atomic_load(&p->bell->inc) != p->inc)
		return NULL;
	atomic_thread_fence(memory_order_acquire);
	p->stage_map->refs++;
	*pin = p->stage_map;
	return p->stage + off;
}

void fab_shm_unpin_locked(struct fab *f, struct fab_pinmap *m)
{
	if (--m->refs)
		return;
	for (struct fab_pinmap **pp = &f->pinmaps; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	munmap(m->m, m->len);
	free(m);
}

void fab_shm_unmap_pins(struct fab *f)
{
	while (f->pinmaps) {
		struct fab_pinmap *m = f->pinmaps;

		f->pinmaps = m->next;
		munmap(m->m, m->len);
		free(m);
	}
	for (uint32_t i = 0; f->peers && i < f->nnodes; i++) {
		f->peers[i].stage_map = NULL;
		f->peers[i].stage = NULL;
	}
}

void fab_shm_unshare_gmem(struct fab *f)
{
	char path[PATH_MAX];

	if (!f->gmem)
		return;
	if (f->bell != &f->own) {
		atomic_store(&f->bell->gmem_len, 0);
		if (!gmem_path(path, sizeof(path), f->bell->region))
			unlink(path);
	}
	munmap(f->gmem, f->gmem_len);
	f->gmem = NULL;
}

/* Map p's global memory read-only, if it shares one.  0 or -ENOSYS. */
static int map_peer_gmem(struct peer *p)
{
	char region[sizeof(p->bell->region)], path[PATH_MAX];
	uint64_t len = atomic_load(&p->bell->gmem_len);
	struct stat st;
	void *m;
	int fd;

	if (!len)
		return -ENOSYS;
	memcpy(region, p->bell->region, sizeof(region));
	region[sizeof(region) - 1] = '\0';
	if (atomic_load(&p->bell->inc) != p->inc ||
	    gmem_path(path, sizeof(path), region))
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOSYS;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < len) {
		close(fd);
		return -ENOSYS;
	}
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -ENOSYS;
	p->gmem = m;
	p->gmem_len = len;
	return 0;
}

/* The 8-byte variable at gaddr of p, by one load from its memory.  Only
 * a live incarnation's answer counts: a dead one's pages stay mapped. */
int fab_shm_peek_locked(struct fab *f, struct peer *p, uint64_t gaddr,
			int64_t *value)
{
	uint32_t n = (uint32_t)(p - f->peers);

	if (p->state == P_DOWN)
		return -STORM_EUNREACH;
	if (p->fa == FI_ADDR_NOTAVAIL && fab_shm_resolve_locked(f, p, n))
		return -ENOSYS;
	if (!p->bell)
		return -ENOSYS;
	if (!p->gmem && map_peer_gmem(p))
		return -ENOSYS;
	if (gaddr % 8 || gaddr + 8 > p->gmem_len)
		return -ENOSYS;
	*value = __atomic_load_n((const int64_t *)(const void *)(p->gmem +
								 gaddr),
				 __ATOMIC_ACQUIRE);
	if (fab_died(p->bell) || atomic_load(&p->bell->inc) != p->inc)
		return -STORM_EUNREACH;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* shm: the provider's region lock                                          */
/* ------------------------------------------------------------------------ */

/* libfabric 1.17's shm region header (struct smr_region): version 4 in the
 * first byte, the owner's pid at 4, the pthread spinlock that guards the
 * region at 24 (glibc x86-64: 1 free, 0 or less held). */
#define REGION_VERSION 4
#define REGION_PID_OFF 4
#define REGION_LOCK_OFF 24
#define REGION_PAGE 4096u

uint8_t *fab_region_map(const char *name, int32_t pid)
{
	char path[PATH_MAX];
	struct stat st;
	uint8_t *m;
	int32_t got;
	int fd;

	if (!name[0] || strchr(name, '/') ||
	    (size_t)snprintf(path, sizeof(path), SHM_DIR "%s", name) >=
		    sizeof(path))
		return NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)REGION_PAGE) {
		close(fd);
		return NULL;
	}
	m = mmap(NULL, REGION_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	memcpy(&got, m + REGION_PID_OFF, sizeof(got));
	if (m[0] != REGION_VERSION || got != pid) {
		munmap(m, REGION_PAGE);
		return NULL;
	}
	return m;
}

void fab_region_unmap(uint8_t *r)
{
	if (r)
		munmap(r, REGION_PAGE);
}

_Atomic int32_t *fab_region_lock(uint8_t *r)
{
	return (_Atomic int32_t *)(r + REGION_LOCK_OFF);
}

/* Whether r's lock is free now or within ns.  A sender that calls into the
 * provider while the lock is held spins there, under f->mu, for as long as
 * the holder does not run: a stopped peer would stop this node too. */
int fab_region_wait_free(uint8_t *r, uint64_t ns)
{
	uint64_t until = 0;

	if (!r)
		return 1;
	while (atomic_load_explicit(fab_region_lock(r),
				    memory_order_relaxed) != REGION_LOCK_FREE) {
		uint64_t now = mono_ns();

		if (!until)
			until = now + ns;
		else if (now >= until)
			return 0;
		sched_yield();
	}
	return 1;
}
