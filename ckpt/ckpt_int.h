/*
 * ckpt_int.h — private to ckpt/: a traced process and the remote system
 * calls the capture and the restore make in it, and the sections of an
 * image as the engine lays them out (docs/checkpoint.md §2.1).
 */
#ifndef STORM_CKPT_INT_H
#define STORM_CKPT_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ckpt.h"

#define CKPT_PAGE 4096u

/* why (whylen bytes, may be NULL) gets the message; returns rc. */
int ckpt_fail(char *why, size_t whylen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A process under ptrace, stopped. */
struct ckpt_tracee {
	pid_t pid;
	int seized;              /* PTRACE_SEIZE (capture) or TRACEME (restore) */
	uint64_t syscall_ip;     /* a syscall instruction in its vDSO */
	uint64_t held;           /* signals that arrived meanwhile: sent again */
	pid_t forked;            /* the child of its last remote fork */
	int restart_block;       /* stopped in a call restarted by restart_syscall */
	struct user_regs_struct regs; /* as it was stopped */
};

/* Stop pid (PTRACE_SEIZE + PTRACE_INTERRUPT) and wait for the stop. */
int ckpt_trace_seize(struct ckpt_tracee *t, pid_t pid);
/* Take pid, already stopped by PTRACE_TRACEME at its exec. */
int ckpt_trace_take(struct ckpt_tracee *t, pid_t pid);
/* Find the syscall instruction within [lo, hi) of its memory. */
int ckpt_trace_find_syscall(struct ckpt_tracee *t, uint64_t lo, uint64_t hi);
/* A system call made by the tracee itself, with its credentials: its
 * result (>= 0) or -errno.  The tracee's registers are left as the call
 * left them; ckpt_trace_setregs puts them back. */
long ckpt_trace_syscall(struct ckpt_tracee *t, long nr, int nargs, ...);
int ckpt_trace_setregs(struct ckpt_tracee *t,
		       const struct user_regs_struct *r);
void ckpt_trace_detach(struct ckpt_tracee *t);

/* Its memory, by /proc/PID/mem (which reads and writes any mapping the
 * tracee has, whatever its protection): 0 or -errno. */
int ckpt_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ckpt_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* One line of /proc/PID/maps. */
struct ckpt_map {
	uint64_t start, end, pgoff;
	uint32_t prot;           /* PROT_* */
	int shared;
	uint64_t ino;
	char *path;              /* "" for anonymous; "[stack]" and kin */
};

/* Its mappings: an array (*out, ckpt_proc_maps_free it) and their count,
 * or -errno. */
int ckpt_proc_maps(pid_t pid, struct ckpt_map **out, size_t *n);
void ckpt_proc_maps_free(struct ckpt_map *v, size_t n);
/* Its number of threads, or -errno. */
int ckpt_proc_threads(pid_t pid);
/* Fields of /proc/PID/stat (1-based numbering of proc(5)) into v[]. */
int ckpt_proc_stat(pid_t pid, uint64_t v[53]);
/* Its 16 resource limits (soft, hard) from /proc/PID/limits. */
int ckpt_proc_limits(pid_t pid, uint64_t rl[16][2]);
/* A hexadecimal or decimal field "Name:" of /proc/PID/status. */
int ckpt_proc_status(pid_t pid, const char *name, int base, uint64_t *v);

/* A run of pages [start, end). */
struct ckpt_run {
	uint64_t start, end;
};

/* Tracking of written pages (track.c), while the process is held. */
int ckpt_track_armed(const struct ckpt_track *t, pid_t pid, uint64_t *epoch);
void ckpt_track_done(struct ckpt_track *t, uint64_t epoch);
/* A new userfaultfd of the process, taken by us. */
int ckpt_track_arm(struct ckpt_track *t, struct ckpt_tracee *p);
/* Register [start, end) for write-protect and protect it. */
int ckpt_track_register(struct ckpt_track *t, uint64_t start, uint64_t end);
/* Append the pages written in [start, end) since they were protected to
 * *runs (realloc'd), protecting them again; -EPERM if the range is not
 * registered (a mapping made since). */
int ckpt_track_scan(struct ckpt_track *t, uint64_t start, uint64_t end,
		    struct ckpt_run **runs, size_t *nruns, size_t *cap);

/* ---- sections ------------------------------------------------------------- */

enum ckpt_section_type {
	CKPT_S_TASK = 1,        /* struct ckpt_s_task */
	CKPT_S_AUXV = 2,        /* its auxiliary vector, raw */
	CKPT_S_VMA = 3,         /* struct ckpt_s_vma, then the path */
	CKPT_S_PAGES = 4,       /* u64 address, then whole pages */
	CKPT_S_REGS = 5,        /* struct user_regs_struct */
	CKPT_S_XSTATE = 6,      /* NT_X86_XSTATE, raw */
	CKPT_S_SIGACT = 7,      /* 64 x struct ckpt_s_sigact */
	CKPT_S_FILE = 8,        /* struct ckpt_s_file, then the path */
	CKPT_S_PIPE = 9,        /* u64 pipe id, then its buffered bytes */
	CKPT_S_CWD = 10,        /* the path */
	CKPT_S_RLIMIT = 11,     /* 16 x { u64 cur, max } */
	CKPT_S_FRESH = 12,      /* u64 start, end: older pages void */
	CKPT_S_NOTE = 13,       /* the caller's bytes (ckpt_capture_note) */
};

/* What the whole process needs besides its memory. */
struct ckpt_s_task {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t sigmask;
	uint32_t umask, personality;
	uint64_t vdso, vvar;     /* where they were: moved there on restore */
};

enum ckpt_vma_flag {
	CKPT_VMA_SHARED = 1,    /* MAP_SHARED (of a file): mapped again */
	CKPT_VMA_FILE = 2,      /* backed by the file at path */
	CKPT_VMA_STACK = 4,     /* [stack]: MAP_GROWSDOWN */
	CKPT_VMA_HEAP = 8,      /* [heap] */
	CKPT_VMA_VDSO = 16,     /* [vdso], [vvar], [vvar_vclock]: the kernel's */
	CKPT_VMA_INHERIT = 32,  /* MAP_SHARED of an inherited descriptor's
				 * file (fd): mapped again from it, no pages */
};

struct ckpt_s_vma {
	uint64_t start, end, pgoff;
	uint32_t prot, flags;    /* PROT_*, CKPT_VMA_* */
	uint64_t size, mtime_ns; /* of its file, checked on restore */
	uint32_t pathlen;
	uint32_t fd;             /* CKPT_VMA_INHERIT: the descriptor, else 0 */
};

struct ckpt_s_sigact {
	uint64_t handler, flags, restorer, mask;
};

enum ckpt_file_kind {
	CKPT_F_REGULAR = 1,     /* reopened by path, at its offset */
	CKPT_F_DEVICE = 2,      /* /dev/null and its kind, reopened by path */
	CKPT_F_PIPE = 3,        /* a pipe within the process, remade, refilled */
	CKPT_F_INHERIT = 4,     /* 0-2 to the node manager, and what the caller
				 * names (ckpt_inherit): the new process's own,
				 * given it at the same number */
};

struct ckpt_s_file {
	uint32_t fd, kind;
	uint32_t flags, cloexec;
	uint64_t pos;
	uint64_t pipe;           /* CKPT_F_PIPE: its id (the inode), both ends */
	uint32_t pathlen, pad;
};

#endif
