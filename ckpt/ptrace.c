/*
 * ptrace.c — the hold the engine has on a process: stop it, read and write
 * its memory, and make system calls in it.  A remote system call runs in
 * the tracee with its own credentials, which is why the restore opens a
 * user's files and sets its limits this way and never with the agent's:
 * the agent runs as root and must not act with root's rights for a user.
 *
 * A remote call sets the registers at a syscall instruction of the
 * tracee's vDSO and runs to the syscall's exit stop (PTRACE_SYSCALL twice),
 * with orig_rax = -1 so that the kernel's restart of an interrupted call
 * does not rewrite the call we set up.  Signals that arrive meanwhile are
 * held and sent again at the detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckpt_int.h"

/* The kernel's internal restart codes (include/linux/errno.h), which a
 * tracer sees in rax of a call a stop interrupted. */
enum {
	ERESTARTSYS_ = 512, ERESTARTNOINTR_ = 513, ERESTARTNOHAND_ = 514,
	ERESTART_RESTARTBLOCK_ = 516,
};

static int held_signals(struct ckpt_tracee *t, int sig)
{
	/* a stop signal too: sent again at the detach, it stops the
	 * process then (a job stopped for its capture stays stopped) */
	if (sig > 0 && sig < 65 && sig != SIGTRAP)
		t->held |= 1ull << (sig - 1);
	return 0;
}

/* Wait for the tracee's next stop: its status, or -ESRCH if it ended.
 * An end is only looked at (WNOWAIT), never reaped: the process is its
 * parent's (a node manager's rank) to reap and report. */
static int wait_stop(struct ckpt_tracee *t, int *status)
{
	for (;;) {
		siginfo_t si = { 0 };
		pid_t r;

		if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WSTOPPED |
			   __WALL | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
		    si.si_code == CLD_DUMPED)
			return -ESRCH;
		r = waitpid(t->pid, status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (WIFEXITED(*status) || WIFSIGNALED(*status))
			return -ESRCH;
		return 0;
	}
}

int ckpt_trace_seize(struct ckpt_tracee *t, pid_t pid)
{
	int st, rc;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->seized = 1;
	/* a seccomp filter of the process's own (one answered by another
	 * process of its user) must not hold or refuse our calls */
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)(PTRACE_O_TRACESYSGOOD |
				PTRACE_O_TRACEFORK |
				PTRACE_O_SUSPEND_SECCOMP)) < 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0) {
		rc = -errno;
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return rc;
	}
	/* A signal may be reported before the interrupt: hold it. */
	for (;;) {
		if ((rc = wait_stop(t, &st)))
			return rc;
		if (st >> 16 == PTRACE_EVENT_STOP)
			break;
		held_signals(t, WSTOPSIG(st));
		if (ptrace(PTRACE_CONT, pid, 0, 0) < 0)
			return -errno;
	}
	if (ptrace(PTRACE_GETREGS, pid, 0, &t->regs) < 0)
		return -errno;
	/* Stopped in a system call the stop interrupted: resumed at these
	 * registers it makes the call again, as the kernel would have */
	if ((long long)t->regs.orig_rax >= 0) {
		long long ax = (long long)t->regs.rax;

		if (ax == -ERESTARTSYS_ || ax == -ERESTARTNOINTR_ ||
		    ax == -ERESTARTNOHAND_) {
			t->regs.rax = t->regs.orig_rax;
			t->regs.rip -= 2;
		} else if (ax == -ERESTART_RESTARTBLOCK_) {
			t->regs.rax = SYS_restart_syscall;
			t->regs.rip -= 2;
			t->restart_block = 1;
		}
		t->regs.orig_rax = (unsigned long long)-1;
	}
	return 0;
}

int ckpt_trace_take(struct ckpt_tracee *t, pid_t pid)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)(long)(PTRACE_O_EXITKILL |
				PTRACE_O_TRACESYSGOOD |
				PTRACE_O_SUSPEND_SECCOMP)) < 0)
		return -errno;
	if (ptrace(PTRACE_GETREGS, pid, 0, &t->regs) < 0)
		return -errno;
	return 0;
}

int ckpt_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	size_t done = 0;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
				  (off_t)(addr + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EFAULT;
			break;
		}
		done += (size_t)n;
	}
	close(fd);
	return rc;
}

int ckpt_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	char path[64];
	size_t done = 0;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done,
				   (off_t)(addr + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EFAULT;
			break;
		}
		done += (size_t)n;
	}
	close(fd);
	return rc;
}

int ckpt_trace_find_syscall(struct ckpt_tracee *t, uint64_t lo, uint64_t hi)
{
	unsigned char b[16384];
	size_t len = hi - lo < sizeof(b) ? (size_t)(hi - lo) : sizeof(b);
	int rc;

	if ((rc = ckpt_mem_read(t->pid, lo, b, len)))
		return rc;
	for (size_t i = 0; i + 1 < len; i++)
		if (b[i] == 0x0f && b[i + 1] == 0x05) {
			t->syscall_ip = lo + i;
			return 0;
		}
	return -ENOENT;
}

/* Resume to the next syscall stop (enter or exit), holding any signal
 * that stops it first and noting a fork's child. */
static int to_syscall_stop(struct ckpt_tracee *t)
{
	int st, rc;

	if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0) < 0)
		return -errno;
	for (;;) {
		if ((rc = wait_stop(t, &st)))
			return rc;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			return 0;
		if (st >> 16 == PTRACE_EVENT_FORK) {
			unsigned long child = 0;

			ptrace(PTRACE_GETEVENTMSG, t->pid, 0, &child);
			t->forked = (pid_t)child;
		} else if (st >> 16 == 0) {
			int sig = WSTOPSIG(st);

			/* a fault at our syscall instruction would recur
			 * forever if held: the call failed */
			if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
			    sig == SIGFPE || sig == SIGSYS)
				return -EFAULT;
			held_signals(t, sig);
		}
		if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0) < 0)
			return -errno;
	}
}

long ckpt_trace_syscall(struct ckpt_tracee *t, long nr, int nargs, ...)
{
	struct user_regs_struct r = t->regs;
	unsigned long long *argr[6] = { &r.rdi, &r.rsi, &r.rdx, &r.r10,
					&r.r8, &r.r9 };
	va_list ap;
	int rc;

	va_start(ap, nargs);
	for (int i = 0; i < nargs && i < 6; i++)
		*argr[i] = (unsigned long long)va_arg(ap, long);
	va_end(ap);
	r.rax = (unsigned long long)nr;
	r.orig_rax = (unsigned long long)-1;
	r.rip = t->syscall_ip;
	if (ptrace(PTRACE_SETREGS, t->pid, 0, &r) < 0)
		return -errno;
	if ((rc = to_syscall_stop(t)) || (rc = to_syscall_stop(t)))
		return rc;
	if (ptrace(PTRACE_GETREGS, t->pid, 0, &r) < 0)
		return -errno;
	return (long)r.rax;
}

int ckpt_trace_setregs(struct ckpt_tracee *t,
		       const struct user_regs_struct *r)
{
	return ptrace(PTRACE_SETREGS, t->pid, 0, r) < 0 ? -errno : 0;
}

void ckpt_trace_detach(struct ckpt_tracee *t)
{
	ckpt_trace_setregs(t, &t->regs);
	ptrace(PTRACE_DETACH, t->pid, 0, 0);
	for (int s = 1; s < 65; s++)
		if (t->held & (1ull << (s - 1)))
			kill(t->pid, s);
	t->held = 0;
}
