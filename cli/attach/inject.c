/* Calling functions inside a running process by ptrace (cli/attach/inject.h).
 *
 * Where a thread is stopped decides whether a call is safe: the C
 * library's allocator and loader hold non-recursive locks while they make
 * system calls (mmap, brk, read of a library), and a call into dlopen on a
 * thread stopped there would wait for ever on its own lock.  So the thread
 * is taken only while it is blocked in a system call that only waits
 * (wss_inject_stop's list), which no code holding those locks makes.
 *
 * A call returns to an int3 byte of the C library's text and the thread
 * runs under PTRACE_CONT: the SIGTRAP it raises stops it once, at its
 * delivery, where the tracer takes rax and suppresses the signal.  The
 * kernel forces a SIGTRAP through a blocked or ignored one by resetting
 * its handler, so SIGTRAP stays open in the thread during calls (every
 * other signal is blocked), and where the program ignores SIGTRAP the
 * call returns instead to a `syscall` instruction (any two bytes 0f 05)
 * with the thread under PTRACE_SYSCALL: the return is the system-call
 * entry stop at that instruction (orig_rax: the number the kernel was
 * asked for is the function's rax), at the cost of a stop at every system
 * call the call makes (a dlopen under load took seconds so).  Returning
 * to address 0 would raise a SIGSEGV, which the kernel forces the same
 * way: the program's SIGSEGV handler would be reset.
 *
 * Giving the thread back: its registers as they were, but the system call
 * it was blocked in must start again, and the kernel does that only when
 * it resumes a thread from the stop it interrupted.  Resumed from the
 * entry stop instead (orig_rax -1: nothing runs there), the restart is done
 * here as the kernel would do it with no handler to run: -ERESTARTSYS,
 * -ERESTARTNOINTR and -ERESTARTNOHAND run the same call again (rax its
 * number, rip back over the instruction), -ERESTART_RESTARTBLOCK runs
 * restart_syscall (a nanosleep's remaining time).
 *
 * The addresses called (dlopen, dlsym, ..., the return traps) are found
 * in the target's libc.so.6 by cli/attach/inject_elf.c. */
#include "config.h"
#include "cli/attach/inject.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libunwind-ptrace.h>
#include <linux/ptrace.h>

#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
#define XSTATE_MAX (64 * 1024)
#define RED_ZONE 128

static void say(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void nap_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

/* ---- Stopping a thread where it is safe ---- */

/* System calls that only wait: nothing of the C library that holds its
 * allocator's or loader's lock makes one of them. */
static bool waits(long nr)
{
	switch (nr) {
	case SYS_poll: case SYS_select: case SYS_pause: case SYS_nanosleep: case SYS_accept: case SYS_recvfrom:
	case SYS_recvmsg: case SYS_wait4: case SYS_msgrcv: case SYS_rt_sigtimedwait: case SYS_rt_sigsuspend:
	case SYS_io_getevents: case SYS_clock_nanosleep: case SYS_epoll_wait: case SYS_waitid: case SYS_pselect6:
	case SYS_ppoll: case SYS_epoll_pwait: case SYS_accept4: case SYS_recvmmsg:
	/* A timed wait (nanosleep, poll, a futex with a timeout) taken up
	 * again after a stop: the C library's internal locks wait without a
	 * timeout, so none of them is held. */
	case SYS_restart_syscall:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return true;
	default:
		return false;
	}
}

/* The system call a thread is blocked in (/proc/PID/task/TID/syscall), or
 * -1 (running, or not in one). */
static long blocked_in(pid_t pid, pid_t tid)
{
	char path[96], buf[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* Why ptrace refused: the setting that refuses it, when one does. */
static void why_refused(pid_t pid, char *err, size_t errlen)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long tracer = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "TracerPid:", 10))
			tracer = strtol(line + 10, NULL, 10);
	if (f)
		fclose(f);
	if (tracer > 0) {
		say(err, errlen, "ptrace refused: process %d is already traced by process %ld (a debugger?)", (int)pid, tracer);
		return;
	}
	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = -1;
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (scope >= 1)
		say(err, errlen,
		    "ptrace refused by kernel.yama.ptrace_scope = %d (%s)", scope,
		    scope == 1   ? "only a process's ancestors may trace it: run wss attach as root, or set it to 0"
		    : scope == 2 ? "only root may trace"
				 : "no process may trace");
	else
		say(err, errlen, "ptrace refused (the process is not dumpable, or wss lacks CAP_SYS_PTRACE for it)");
}

static int wait_stop(pid_t tid, int *status)
{
	for (;;) {
		pid_t w = waitpid(tid, status, __WALL);
		if (w == tid)
			return WIFSTOPPED(*status) ? 0 : ESRCH;
		if (w < 0 && errno != EINTR)
			return errno == ECHILD ? ESRCH : errno;
	}
}

static bool in_libs(const wss_inject_libc_t *lc, uint64_t ip)
{
	for (int k = 0; k < 3; k++)
		if (ip >= lc->lib[k][0] && ip < lc->lib[k][1])
			return true;
	return false;
}

/* Is the stopped thread tid running the program's own code, with no frame
 * of the C library, the loader or the vdso on its stack but those where
 * threads start?  Then it holds none of their locks.  The stack, from the
 * innermost frame out, must be: the program's frames, then at most four of
 * the C library's (start_thread and clone3; __libc_start_call_main and
 * __libc_start_main), then at most the program's _start, and its end.  A
 * callback the C library made (qsort's comparison, a dl_iterate_phdr
 * callback, an atexit handler) has a program frame below the library's,
 * and a signal handler has the sigreturn trampoline (the C library's)
 * below it: not taken, whatever they hold.  Unwound by the unwind tables
 * (libunwind-ptrace); a stack that cannot be unwound to its end is not
 * taken. */
/* top: how many frames of the C library may be innermost, above the
 * program's.  A thread blocked in a waiting system call (WAITING): any
 * (sleep over nanosleep, a wrapper's helpers), and a stack that cannot be
 * unwound is taken (the system call says it is safe; what the unwind
 * shows is checked: no signal frame).  A thread blocked in another system
 * call (read on a pipe): one, the C library's wrapper itself, called by
 * the program (not the loader's read of a library, not stdio's, not a
 * lock's futex).  A thread in its own code: none. */
#define WAITING 1024
static bool stack_clear(pid_t tid, const wss_inject_libc_t *lc, int top)
{
	unw_addr_space_t as = unw_create_addr_space(&_UPT_accessors, 0);
	void *ui = as ? _UPT_create(tid) : NULL;
	bool clear = false, waiting = top == WAITING;
	unw_cursor_t c;
	if (ui && unw_init_remote(&c, as, ui) == 0) {
		int program = 0, libc = 0, after = 0, wrapper = 0;
		for (int depth = 0; depth < 1024; depth++) {
			unw_word_t ip = 0;
			unw_get_reg(&c, UNW_REG_IP, &ip);
			if (unw_is_signal_frame(&c) > 0)
				break; /* in a signal handler: what it interrupted may hold anything */
			if (!program && !libc && in_libs(lc, ip)) {
				/* the system call's wrapper: the C library's own */
				if (++wrapper > top || (!waiting && !(ip >= lc->lib[0][0] && ip < lc->lib[0][1])))
					break;
			} else if (in_libs(lc, ip)) {
				wrapper = false;
				if (!program || after || ++libc > 4)
					break; /* inside the C library, the loader or the vdso */
			} else if (libc) {
				if (++after > 1)
					break; /* the program called the C library, which called it back */
			} else {
				program++;
			}
			int r = unw_step(&c);
			if (r == 0) {
				clear = program > 0 && libc > 0;
				break;
			}
			if (r < 0) {
				clear = waiting; /* no unwind tables further down */
				break;
			}
		}
	} else {
		clear = waiting;
	}
	if (ui)
		_UPT_destroy(ui);
	if (as)
		unw_destroy_addr_space(as);
	return clear;
}

/* Does the process ignore SIGTRAP (SigIgn in /proc/PID/status)? */
static bool trap_ignored(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	bool ign = true; /* unknown: the system call way */
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "SigIgn:", 7))
			ign = (strtoull(line + 7, NULL, 16) >> (SIGTRAP - 1)) & 1;
	if (f)
		fclose(f);
	return ign;
}

/* Room below sp on its stack: the main stack grows (up to its limit), a
 * thread's stack is its mapping.  The calls (dlopen, the engine's start)
 * need some 100 KiB. */
#define STACK_ROOM (256UL << 10)
static bool stack_room(pid_t pid, uint64_t sp)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool ok = false;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) != 2 || sp < s || sp >= e)
			continue;
		ok = strstr(line, "[stack]") || sp - s >= STACK_ROOM;
		break;
	}
	if (f)
		fclose(f);
	return ok;
}

/* Seize tid and stop it.  Returns 0 with its registers saved when it is
 * blocked in a waiting system call or (unwind) its stack is clear of the
 * C library, with room on its stack; EAGAIN when it is not (given back);
 * another errno when it cannot be traced.  Its signals are blocked while
 * it is ours (PTRACE_SETSIGMASK): they stay pending, whole, for when it
 * is given back. */
static int take(wss_inject_t *ij, const wss_inject_libc_t *lc, pid_t tid, bool unwind, char *err, size_t errlen)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD)) {
		int e = errno;
		if (e == ESRCH)
			return EAGAIN; /* the thread ended meanwhile */
		if (e == EPERM)
			why_refused(ij->pid, err, errlen);
		else
			say(err, errlen, "ptrace: %s", strerror(e));
		return e;
	}
	int st;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || wait_stop(tid, &st)) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return EAGAIN;
	}
	ij->tid = tid;
	/* A signal-delivery stop: the signal goes on to the thread as it
	 * would have, and another try comes later. */
	if ((st >> 16) != PTRACE_EVENT_STOP) {
		ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)WSTOPSIG(st));
		return EAGAIN;
	}
	struct user_regs_struct *r = (void *)ij->regs;
	bool ok = !ptrace(PTRACE_GETREGS, tid, NULL, r);
	if (ok) {
		bool in_call = (long)r->orig_rax >= 0, in_wait = in_call && waits((long)r->orig_rax);
		ok = (in_wait || unwind) && stack_room(ij->pid, r->rsp) &&
		     stack_clear(tid, lc, in_wait ? WAITING : in_call ? 1 : 0);
	}
	/* Calls return to an int3 (one stop) where SIGTRAP may be left open
	 * for it: the kernel forces a SIGTRAP through a blocked or ignored
	 * one by resetting its handler, so not where the program ignores it;
	 * else to a system call instruction (a stop at every system call the
	 * call makes: a dlopen under load took seconds so). */
	ij->by_trap = lc->int3 && !trap_ignored(ij->pid);
	uint64_t all = ij->by_trap ? ~(uint64_t)(1ULL << (SIGTRAP - 1)) : ~(uint64_t)0;
	if (ok)
		ok = !ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof ij->sigmask, &ij->sigmask) &&
		     !ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof all, &all);
	if (!ok) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return EAGAIN;
	}
	struct iovec iov = {ij->xstate, XSTATE_MAX};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0)
		ij->xstate_len = iov.iov_len;
	else if (ptrace(PTRACE_GETFPREGS, tid, NULL, ij->xstate) == 0)
		ij->xstate_len = 0; /* restored with SETFPREGS */
	else
		ij->xstate_len = (size_t)-1;
	ij->scratch = ((uint64_t)r->rsp - RED_ZONE - 256) & ~(uint64_t)15;
	ij->stopped = true;
	return 0;
}

static bool process_stopped(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'T' || p[2] == 't');
}

int wss_inject_stop(wss_inject_t *ij, const wss_inject_libc_t *lc, pid_t pid, pid_t skip, uint64_t timeout_ns,
		    char *err, size_t errlen)
{
	memset(ij, 0, sizeof *ij);
	ij->pid = pid;
	ij->xstate = calloc(1, XSTATE_MAX);
	if (!ij->xstate)
		return ENOMEM;
	if (process_stopped(pid)) {
		say(err, errlen, "process %d is stopped (SIGSTOP or a debugger): continue it first", (int)pid);
		return EAGAIN;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	uint64_t start = now_ns(), deadline = start + timeout_ns;
	do {
		/* The waiting threads first; after a second, the others too,
		 * by their stacks (stopping each costs it an unwind). */
		bool unwind = now_ns() - start > 1000000000ULL;
		DIR *d = opendir(path);
		if (!d) {
			say(err, errlen, "no process %d", (int)pid);
			return ESRCH;
		}
		struct dirent *de;
		int r = EAGAIN;
		while (r == EAGAIN && (de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid > 0 && tid != skip && (unwind || waits(blocked_in(pid, tid))))
				r = take(ij, lc, tid, unwind, err, errlen);
		}
		closedir(d);
		if (r != EAGAIN)
			return r;
		nap_us(unwind ? 20000 : 2000);
	} while (now_ns() < deadline);
	say(err, errlen,
	    "no thread of process %d came to a safe point in %.0f s (blocked in poll, epoll_wait, nanosleep, accept or "
	    "the like, or running its own code outside the C library): every thread waited on a lock or a read, or ran "
	    "in the C library",
	    (int)pid, (double)timeout_ns / 1e9);
	return ETIMEDOUT;
}

static int poke(pid_t pid, uint64_t at, const void *data, size_t len)
{
	struct iovec l = {(void *)data, len}, r = {(void *)at, len};
	ssize_t n = process_vm_writev(pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	/* Without process_vm_writev (some seccomp policies): word by word. */
	const unsigned char *p = data;
	for (size_t k = 0; k < len; k += sizeof(long)) {
		long w = 0;
		size_t m = len - k < sizeof w ? len - k : sizeof w;
		if (m < sizeof w) {
			errno = 0;
			w = ptrace(PTRACE_PEEKDATA, pid, (void *)(at + k), NULL);
			if (errno)
				return errno;
		}
		memcpy(&w, p + k, m);
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(at + k), (void *)w))
			return errno;
	}
	return 0;
}

int wss_inject_put(wss_inject_t *ij, const void *data, size_t len, uint64_t *at)
{
	ij->scratch = (ij->scratch - len) & ~(uint64_t)15;
	*at = ij->scratch;
	return poke(ij->tid, *at, data, len);
}

int wss_inject_string(pid_t pid, uint64_t addr, char *out, size_t n)
{
	struct iovec l = {out, n - 1}, r = {(void *)addr, n - 1};
	ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (got <= 0) {
		/* The string may end near the end of its mapping: byte pages. */
		size_t k = 0;
		for (; k + 1 < n; k++) {
			struct iovec l1 = {out + k, 1}, r1 = {(void *)(addr + k), 1};
			if (process_vm_readv(pid, &l1, 1, &r1, 1, 0) != 1)
				break;
			if (!out[k])
				return 0;
		}
		out[k] = '\0';
		return k ? 0 : errno;
	}
	out[got] = '\0';
	return 0;
}

int wss_inject_call(wss_inject_t *ij, const wss_inject_libc_t *lc, uint64_t fn, const uint64_t *args, int nargs,
		    uint64_t *ret, char *err, size_t errlen)
{
	struct user_regs_struct r;
	memcpy(&r, ij->regs, sizeof r);
	/* The call's stack: below the arguments, 16-byte aligned before the
	 * return address is pushed, as a call instruction leaves it. */
	uint64_t sp = (ij->scratch - 4096) & ~(uint64_t)15, back_to = ij->by_trap ? lc->int3 : lc->trap;
	sp -= 8;
	if (poke(ij->tid, sp, &back_to, 8)) {
		say(err, errlen, "cannot write the thread's stack: %s", strerror(errno));
		return EFAULT;
	}
	unsigned long long *regs[6] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
	for (int k = 0; k < nargs && k < 6; k++)
		*regs[k] = args[k];
	r.rip = fn;
	r.rsp = sp;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1; /* no system call to restart at the resume */
	if (ptrace(PTRACE_SETREGS, ij->tid, NULL, &r)) {
		say(err, errlen, "ptrace SETREGS: %s", strerror(errno));
		return errno;
	}
	int sig = 0;
	for (;;) {
		int st;
		if (ptrace(ij->by_trap ? PTRACE_CONT : PTRACE_SYSCALL, ij->tid, NULL, (void *)(long)sig) ||
		    wait_stop(ij->tid, &st)) {
			say(err, errlen, "process %d ended during the call", (int)ij->pid);
			ij->stopped = false;
			return ESRCH;
		}
		sig = 0;
		int s = WSTOPSIG(st);
		if (s == (SIGTRAP | 0x80)) {
			struct ptrace_syscall_info si;
			if (ptrace(PTRACE_GET_SYSCALL_INFO, ij->tid, (void *)sizeof si, &si) > 0 &&
			    si.op == PTRACE_SYSCALL_INFO_ENTRY && si.instruction_pointer == lc->trap + 2 &&
			    si.stack_pointer == sp + 8) {
				struct user_regs_struct back;
				if (ptrace(PTRACE_GETREGS, ij->tid, NULL, &back))
					return errno;
				*ret = back.orig_rax;
				return 0;
			}
			continue;
		}
		if ((st >> 16) == PTRACE_EVENT_STOP)
			continue; /* a group stop or our interrupt: on with the call */
		if (s == SIGTRAP && ij->by_trap) {
			/* The int3 after the call's return (rip past it, the
			 * return address popped), or the program's own. */
			struct user_regs_struct back;
			if (ptrace(PTRACE_GETREGS, ij->tid, NULL, &back))
				return errno;
			if (back.rip == lc->int3 + 1 && back.rsp == sp + 8) {
				*ret = back.rax;
				return 0;
			}
			ij->trap_seen = true;
			continue;
		}
		siginfo_t info;
		bool fault = (s == SIGSEGV || s == SIGBUS || s == SIGILL || s == SIGFPE) &&
			     !ptrace(PTRACE_GETSIGINFO, ij->tid, NULL, &info) && info.si_code > 0;
		if (fault) {
			struct user_regs_struct at;
			ptrace(PTRACE_GETREGS, ij->tid, NULL, &at);
			say(err, errlen, "the call faulted (signal %d at %#llx, address %p)", s, at.rip, info.si_addr);
			return EFAULT;
		}
		/* SIGKILL aside, only a signal no mask holds comes here:
		 * SIGSTOP, sent again when the thread is given back. */
		if (s == SIGSTOP)
			ij->stop_seen = true;
		sig = 0;
	}
}

void wss_inject_resume(wss_inject_t *ij)
{
	if (!ij->stopped)
		goto out;
	struct user_regs_struct r;
	memcpy(&r, ij->regs, sizeof r);
	long rax = (long)r.rax;
	if ((long)r.orig_rax >= 0) {
		/* epoll_wait, rt_sigtimedwait, io_getevents and a receive with
		 * a timeout return EINTR for a stop too, where no signal was
		 * delivered: they start again as well (a real signal, left
		 * pending, interrupts them again at once). */
		if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
		    (rax == -EINTR && waits((long)r.orig_rax))) {
			r.rax = r.orig_rax;
			r.rip -= 2;
		} else if (rax == -ERESTART_RESTARTBLOCK) {
			r.rax = SYS_restart_syscall;
			r.rip -= 2;
		}
	}
	r.orig_rax = (unsigned long long)-1;
	ptrace(PTRACE_SETREGS, ij->tid, NULL, &r);
	if (ij->xstate_len == 0) {
		ptrace(PTRACE_SETFPREGS, ij->tid, NULL, ij->xstate);
	} else if (ij->xstate_len != (size_t)-1) {
		struct iovec iov = {ij->xstate, ij->xstate_len};
		ptrace(PTRACE_SETREGSET, ij->tid, (void *)NT_X86_XSTATE, &iov);
	}
	ptrace(PTRACE_SETSIGMASK, ij->tid, (void *)sizeof ij->sigmask, &ij->sigmask);
	ptrace(PTRACE_DETACH, ij->tid, NULL, NULL);
	if (ij->trap_seen)
		syscall(SYS_tgkill, ij->pid, ij->tid, SIGTRAP);
	if (ij->stop_seen)
		kill(ij->pid, SIGSTOP);
	ij->stopped = false;
out:
	free(ij->xstate);
	ij->xstate = NULL;
}
