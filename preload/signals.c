/* Signals: our SIGSEGV handler, and the wrappers that keep the application's
 * view of SIGSEGV its own.  The application's handler is stored here and
 * read back by sigaction; faults that are not ours go to it (or to the
 * default action) with the mask and flags it asked for.  SIGSEGV is never
 * really blocked: blocking it makes the kernel kill the process on the next
 * fault on an armed page. */
#include "config.h"
#include "preload/preload.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <ucontext.h>
#include <unistd.h>

#include "common/sys.h"
#include "engine/engine.h"

/* glibc's own sigaction, under its public alias. */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* The application's SIGSEGV disposition, double-buffered: sigaction writes
 * the spare copy, then publishes its index, so the handler never copies a
 * half-written one (two updates racing one fault could still mix). */
static struct sigaction app_segv_buf[2];
static int app_segv_cur;
#define app_segv (app_segv_buf[__atomic_load_n(&app_segv_cur, __ATOMIC_ACQUIRE)])

static void app_segv_set(const struct sigaction *a)
{
	int spare = !__atomic_load_n(&app_segv_cur, __ATOMIC_RELAXED);
	app_segv_buf[spare] = *a;
	__atomic_store_n(&app_segv_cur, spare, __ATOMIC_RELEASE);
}
static bool installed;
/* Whether each thread asked for SIGSEGV to be blocked (read back only). */
static __thread bool tls_segv_blocked __attribute__((tls_model("initial-exec")));

#define SEGV_BIT (1ULL << (SIGSEGV - 1))
/* glibc reserves these two for itself and never lets them be blocked. */
#define GLIBC_RESERVED ((1ULL << 31) | (1ULL << 32))

static bool intercepting(void) { return __atomic_load_n(&installed, __ATOMIC_ACQUIRE); }

static void segv_handler(int sig, siginfo_t *si, void *ctx);
static int install_ours(void);

static void chain(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct sigaction a = app_segv;
	if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN) {
		/* Let the kernel do what it would have done: with the default
		 * disposition back, a fault re-executes and kills; a sent
		 * SIGSEGV is sent again and delivered when we return. */
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		if (si->si_code <= 0 && a.sa_handler == SIG_IGN)
			return;
		__sigaction(SIGSEGV, &d, NULL);
		if (si->si_code <= 0)
			wss_sys_tgkill(wss_sys_getpid(), wss_sys_gettid(), SIGSEGV);
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction d = a;
		d.sa_handler = SIG_DFL;
		d.sa_flags &= ~SA_SIGINFO;
		app_segv_set(&d);
	}
	uint64_t mask;
	memcpy(&mask, &uc->uc_sigmask, sizeof mask);
	uint64_t extra;
	memcpy(&extra, &a.sa_mask, sizeof extra);
	mask |= extra;
	mask &= ~(SEGV_BIT | GLIBC_RESERVED);
	wss_sys_sigmask(SIG_SETMASK, &mask, NULL);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
}

static void segv_handler(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	ucontext_t *uc = ctx;
	if (si->si_code == SEGV_ACCERR) {
		unsigned long err = (unsigned long)uc->uc_mcontext.gregs[REG_ERR];
		/* x86 page-fault error code: bit 1 write, bit 4 instruction fetch. */
		if (wss_engine_fault((uintptr_t)si->si_addr, err & 2, err & 16, uc)) {
			errno = saved;
			return;
		}
	}
	errno = saved;
	if (wss_engine_unwinding() && si->si_code > 0) {
		/* A fault of the unwinder's that is not ours, inside our
		 * handler: what it would have been before the capture opened
		 * SIGSEGV (a kill), not the program's handler, which might
		 * longjmp out of the middle of libunwind and the loader's lock. */
		struct sigaction d;
		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		__sigaction(sig, &d, NULL);
		return;
	}
	chain(sig, si, uc);
}

static int install_ours(void)
{
	struct sigaction ours;
	memset(&ours, 0, sizeof ours);
	ours.sa_sigaction = segv_handler;
	/* All signals blocked while we run: the epoch protocol needs every
	 * handler to finish.  SA_ONSTACK so that a thread with an alternate
	 * stack (stack-overflow handlers) keeps using it. */
	sigfillset(&ours.sa_mask);
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	return __sigaction(SIGSEGV, &ours, NULL) ? errno : 0;
}

int wss_signals_init(void)
{
	if (__sigaction(SIGSEGV, NULL, &app_segv_buf[0]))
		return errno;
	int r = install_ours();
	if (r)
		return r;
	/* exec keeps the signal mask: a program started with SIGSEGV blocked
	 * (by a parent that blocked it) would be killed by its first fault on
	 * an armed page.  Unblock it for real; the thread reads it back as
	 * blocked, as if it had blocked it itself. */
	uint64_t segv = SEGV_BIT, old = 0;
	wss_sys_sigmask(SIG_UNBLOCK, &segv, &old);
	tls_segv_blocked = old & SEGV_BIT;
	/* Handlers installed before us (a needed library's constructor runs
	 * before ours, and the wrapper below was not intercepting yet) lose
	 * SIGSEGV from their masks, as every later one does: a handler's
	 * fault on an armed page with SIGSEGV blocked is a kill. */
	for (int s = 1; s < 65; s++) {
		struct sigaction a;
		if (s == SIGSEGV || s == SIGKILL || s == SIGSTOP || __sigaction(s, NULL, &a))
			continue;
		if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN && sigismember(&a.sa_mask, SIGSEGV)) {
			sigdelset(&a.sa_mask, SIGSEGV);
			__sigaction(s, &a, NULL);
		}
	}
	__atomic_store_n(&installed, true, __ATOMIC_RELEASE);
	return 0;
}


WSS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!intercepting())
		return __sigaction(sig, act, old);
	if (sig == SIGSEGV) {
		if (old)
			*old = app_segv;
		if (act)
			app_segv_set(act);
		return 0;
	}
	if (act && sigismember(&act->sa_mask, SIGSEGV)) {
		struct sigaction a = *act;
		sigdelset(&a.sa_mask, SIGSEGV);
		return __sigaction(sig, &a, old);
	}
	return __sigaction(sig, act, old);
}

/* Declared by glibc's headers only for some feature macros. */
sighandler_t bsd_signal(int sig, sighandler_t h);
sighandler_t __sysv_signal(int sig, sighandler_t h);

static sighandler_t install(int sig, sighandler_t h, int flags)
{
	struct sigaction a, old;
	memset(&a, 0, sizeof a);
	a.sa_handler = h;
	a.sa_flags = flags;
	sigemptyset(&a.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal() and bsd_signal() have BSD semantics, sysv_signal() the
 * System V ones; all three install through __sigaction internally, so they
 * are wrapped here to reach ours. */
WSS_EXPORT sighandler_t signal(int sig, sighandler_t h) { return install(sig, h, SA_RESTART); }
WSS_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h) { return install(sig, h, SA_RESTART); }
WSS_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h) { return install(sig, h, SA_RESETHAND | SA_NODEFER); }
/* What <signal.h> maps signal() to under some feature macros (zstd uses it). */
WSS_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h) { return install(sig, h, SA_RESETHAND | SA_NODEFER); }

/* The kernel's view of the SIGSEGV disposition (x86-64 struct
 * kernel_sigaction). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/* Called at every tick: if something replaced our handler without going
 * through these wrappers (a raw rt_sigaction, a library calling an alias we
 * do not wrap), adopt what it installed as the program's handler and put
 * ours back, so the next armed page does not kill the program. */
void wss_signals_check(void)
{
	struct ksigaction k;
	if (!intercepting() || wss_sys4(SYS_rt_sigaction, SIGSEGV, NULL, &k, 8) || k.handler == (void *)segv_handler)
		return;
	struct sigaction a;
	memset(&a, 0, sizeof a);
	a.sa_handler = (sighandler_t)k.handler;
	a.sa_flags = (int)k.flags & ~0x04000000; /* SA_RESTORER: the kernel-side field */
	memcpy(&a.sa_mask, &k.mask, sizeof k.mask);
	app_segv_set(&a);
	install_ours();
}

/* Apply a mask change without ever blocking SIGSEGV; remember what the
 * thread asked for so that it reads its own mask back.  Returns 0 or an
 * errno. */
static int mask_change(int how, const sigset_t *set, sigset_t *old)
{
	uint64_t held;
	if (wss_engine_unwind_masked(&held)) {
		/* The unwinder, capturing an allocation's stack with every
		 * asynchronous signal blocked already (sites.c): the mask
		 * stays as it is. */
		if (old)
			memcpy(old, &held, sizeof held);
		return 0;
	}
	if (wss_engine_unwinding()) {
		/* The unwinder, inside our fault handler, saving and restoring
		 * the mask around its caches and memory pool: what it asks,
		 * less SIGSEGV, which the capture keeps open so that its reads
		 * of armed pages fault into our handler instead of killing the
		 * process (sites.c).  SIGBUS is left as asked: opening it would
		 * let a SIGBUS sent to the process by kill() land in a thread
		 * that blocks it (lifecycle syncwait died of it in CI). */
		uint64_t s = 0;
		if (set) {
			memcpy(&s, set, sizeof s);
			if (how != SIG_UNBLOCK)
				s &= ~SEGV_BIT;
		}
		long r = wss_sys_sigmask(how, set ? &s : NULL, (uint64_t *)old);
		return wss_sys_failed(r) ? (int)-r : 0;
	}
	uint64_t s = 0, o = 0;
	bool asked = false;
	if (set) {
		if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
			return EINVAL;
		memcpy(&s, set, sizeof s);
		asked = s & SEGV_BIT;
		s &= ~GLIBC_RESERVED;
		if (intercepting())
			s &= ~SEGV_BIT;
	}
	long r = wss_sys_sigmask(how, set ? &s : NULL, old ? &o : NULL);
	if (wss_sys_failed(r))
		return (int)-r;
	if (old) {
		if (tls_segv_blocked)
			o |= SEGV_BIT;
		memcpy(old, &o, sizeof o);
	}
	if (set) {
		if (how == SIG_SETMASK)
			tls_segv_blocked = asked;
		else if (asked)
			tls_segv_blocked = how == SIG_BLOCK;
	}
	return 0;
}

bool wss_signals_exec_prepare(void)
{
	/* exec keeps the signal mask: a SIGSEGV the thread asked to block is
	 * blocked for real for the new image (whose wss unblocks it again and
	 * reads it back blocked, wss_signals_init).  Only once measurement
	 * has ended (wss_engine_exec), with nothing armed; not in a vfork
	 * child, whose parent's pages stay armed. */
	if (!tls_segv_blocked || wss_engine_active())
		return false;
	uint64_t segv = SEGV_BIT;
	wss_sys_sigmask(SIG_BLOCK, &segv, NULL);
	return true;
}

void wss_signals_exec_failed(bool prepared)
{
	uint64_t segv = SEGV_BIT;
	if (prepared)
		wss_sys_sigmask(SIG_UNBLOCK, &segv, NULL);
}

WSS_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int r = mask_change(how, set, old);
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

WSS_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) { return mask_change(how, set, old); }

/* syscall(2): the C library's door to raw system calls.  The calls that
 * would take SIGSEGV, an alternate stack or tracked memory from under us go
 * through our wrappers, as the same calls by name do (issue 11: a handler
 * installed with syscall(SYS_rt_sigaction) would receive our faults until
 * the next tick, a stack installed with syscall(SYS_sigaltstack) in
 * tracked memory would kill the process at the first signal, memory
 * unmapped with syscall(SYS_munmap) would stay registered, and
 * syscall(SYS_close_range) would close wss's own descriptors, fds.c).  The rest go
 * to the kernel as they are.  A program that makes these calls with its
 * own instructions (Go's runtime) is beyond any wrapper: docs/limits.md. */
static long ret_errno(int r) { return r ? (errno = r, -1) : 0; }

static long raw_call(long n, long a, long b, long c, long d)
{
	long r = wss_sys6(n, a, b, c, d, 0, 0);
	return wss_sys_failed(r) ? ret_errno((int)-r) : r;
}

static long raw_sigaction(int sig, const struct ksigaction *act, struct ksigaction *old, size_t setsize)
{
	if (setsize != 8 || sig != SIGSEGV) {
		/* Another signal goes to the kernel as it is (glibc's own 32
		 * and 33 included), but its handler never blocks SIGSEGV, as
		 * with sigaction. */
		struct ksigaction k;
		if (act && setsize == 8) {
			k = *act;
			k.mask &= ~SEGV_BIT;
			act = &k;
		}
		return raw_call(SYS_rt_sigaction, sig, (long)act, (long)old, (long)setsize);
	}
	struct sigaction a, o;
	memset(&a, 0, sizeof a);
	if (act) {
		a.sa_handler = (sighandler_t)act->handler;
		a.sa_flags = (int)act->flags & ~0x04000000; /* SA_RESTORER */
		memcpy(&a.sa_mask, &act->mask, sizeof act->mask);
	}
	if (sigaction(sig, act ? &a : NULL, old ? &o : NULL))
		return -1;
	if (old) {
		memset(old, 0, sizeof *old);
		old->handler = (void *)o.sa_handler;
		old->flags = (unsigned long)o.sa_flags;
		old->restorer = (void *)o.sa_restorer;
		memcpy(&old->mask, &o.sa_mask, sizeof old->mask);
	}
	return 0;
}

/* What the main thread passed to syscall(SYS_exit), if it left that way. */
static int main_exit_code;

/* A seccomp filter about to be installed (prctl or seccomp(2)): measuring
 * ends first if the filter would refuse a call wss makes (engine/sandbox.c),
 * and nothing the program execs afterwards, under the same filter, loads
 * us.  installing: the call would install one (valid mode). */
static void wss_seccomp_before(bool strict, const void *prog, bool installing)
{
	if (installing && wss_engine_seccomp(prog, strict))
		wss_exec_unfollow();
}

WSS_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a[4];
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		wss_seccomp_before(a[0] == SECCOMP_MODE_STRICT, a[0] == SECCOMP_MODE_FILTER ? (const void *)a[1] : NULL,
				   a[0] == SECCOMP_MODE_STRICT || a[0] == SECCOMP_MODE_FILTER);
	long r = wss_sys6(SYS_prctl, option, (long)a[0], (long)a[1], (long)a[2], (long)a[3], 0);
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

WSS_EXPORT long syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (n) {
	case SYS_rt_sigaction:
		return raw_sigaction((int)a[0], (const struct ksigaction *)a[1], (struct ksigaction *)a[2], (size_t)a[3]);
	case SYS_rt_sigprocmask:
		if ((size_t)a[3] != 8)
			break;
		return ret_errno(mask_change((int)a[0], (const sigset_t *)a[1], (sigset_t *)a[2]));
	case SYS_sigaltstack:
		return sigaltstack((const stack_t *)a[0], (stack_t *)a[1]);
	case SYS_mmap: {
		void *p = mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5]);
		return p == MAP_FAILED ? -1 : (long)p;
	}
	case SYS_munmap:
		return munmap((void *)a[0], (size_t)a[1]);
	case SYS_close:
		return close((int)a[0]);
	case SYS_close_range:
		return close_range((unsigned)a[0], (unsigned)a[1], (int)a[2]);
	case SYS_mprotect:
		return mprotect((void *)a[0], (size_t)a[1], (int)a[2]);
	case SYS_madvise:
		return madvise((void *)a[0], (size_t)a[1], (int)a[2]);
	case SYS_mremap: {
		void *p = mremap((void *)a[0], (size_t)a[1], (size_t)a[2], (int)a[3], (void *)a[4]);
		return p == MAP_FAILED ? -1 : (long)p;
	}
	case SYS_exit_group: /* the profile ends first, as with _exit (init.c) */
		wss_preload_exit((int)a[0]);
	case SYS_exit:
		/* The program's last thread: natively the process ends with the
		 * main thread's status (this one's, or what main passed when it
		 * left: 0 from pthread_exit).  Our engine thread would keep it
		 * alive, then end it with exit(0) (engine/clock.c). */
		if (wss_engine_last_thread())
			wss_preload_exit(wss_sys_gettid() == wss_sys_getpid() ? (int)a[0] : main_exit_code);
		if (wss_sys_gettid() == wss_sys_getpid())
			main_exit_code = (int)a[0];
		break;
	case SYS_sched_setscheduler:
	case SYS_sched_setattr: /* a realtime policy, perhaps: syscalls.c */
		wss_engine_cpu_release(true);
		break;
	case SYS_getrandom: /* where the C library has no getrandom (CPython) */
		return getrandom((void *)a[0], (size_t)a[1], (unsigned)a[2]);
	case SYS_seccomp: /* libseccomp's way in */
		wss_seccomp_before(a[0] == SECCOMP_SET_MODE_STRICT, a[0] == SECCOMP_SET_MODE_FILTER ? (const void *)a[2] : NULL,
				   a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER);
		break;
	}
	long r = wss_sys6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
