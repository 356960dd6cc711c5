/* Stacks the program provides itself: an alternate signal stack, a
 * coroutine stack for makecontext/swapcontext, a thread stack given to
 * pthread_attr_setstack.  The kernel writes signal frames there, and a
 * frame cannot be written onto an armed page (the process is killed), so
 * such memory leaves tracking when it becomes a stack. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>

#include "common/sys.h"

WSS_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	if (ss && !(ss->ss_flags & SS_DISABLE))
		wss_exclude_stack(ss->ss_sp, ss->ss_size);
	long r = wss_sys2(SYS_sigaltstack, ss, old);
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

static void exclude_context(const ucontext_t *uc)
{
	if (uc)
		wss_exclude_stack(uc->uc_stack.ss_sp, uc->uc_stack.ss_size);
}

WSS_EXPORT int setcontext(const ucontext_t *uc)
{
	static int (*real)(const ucontext_t *);
	if (!real)
		real = (int (*)(const ucontext_t *))dlsym(RTLD_NEXT, "setcontext");
	exclude_context(uc);
	return real(uc);
}

WSS_EXPORT int swapcontext(ucontext_t *restrict oucp, const ucontext_t *restrict uc)
{
	static int (*real)(ucontext_t *, const ucontext_t *);
	if (!real)
		real = (int (*)(ucontext_t *, const ucontext_t *))dlsym(RTLD_NEXT, "swapcontext");
	exclude_context(uc);
	return real(oucp, uc);
}

WSS_EXPORT int pthread_attr_setstack(pthread_attr_t *a, void *addr, size_t size)
{
	static int (*real)(pthread_attr_t *, void *, size_t);
	if (!real)
		real = (int (*)(pthread_attr_t *, void *, size_t))dlsym(RTLD_NEXT, "pthread_attr_setstack");
	int r = real(a, addr, size);
	if (r == 0)
		wss_exclude_stack(addr, size);
	return r;
}
