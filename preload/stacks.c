/* Stacks the program provides itself: an alternate signal stack, a
 * coroutine stack for makecontext/swapcontext, a thread stack given to
 * pthread_attr_setstack.  The kernel writes signal frames there, and a
 * frame cannot be written onto an armed page (the process is killed), so
 * such memory leaves tracking when it becomes a stack.
 *
 * And every thread we see start gets an alternate signal stack of ours
 * (untracked, from mmap) when it has none.  A runtime that installs its
 * own by a raw system call, around our sigaltstack, in memory it mapped
 * through our mmap, would have the kernel write our handler's frame onto
 * an armed page: a silent kill (issue 11: Go does that for its signal
 * stacks, but adopts an alternate stack the thread already has when the
 * program uses cgo, as Rust's runtime does too). */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "common/sys.h"
#include "engine/engine.h"

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

/* Our alternate stacks: a guard page, then ALT_SIZE bytes.  The capture of
 * a call stack runs on a stack of its own (engine/sites.c), so this holds
 * only our handler and the program's handlers it chains to. */
#define ALT_SIZE (64 * 1024)
#define ALT_GUARD 4096

static __thread char *tls_alt __attribute__((tls_model("initial-exec")));
static pthread_key_t alt_key;
static bool alt_key_ok;

static void alt_release(void *p)
{
	stack_t cur;
	if (!wss_sys_failed(wss_sys2(SYS_sigaltstack, NULL, &cur)) && !(cur.ss_flags & SS_DISABLE) &&
	    (char *)cur.ss_sp == (char *)p + ALT_GUARD) {
		stack_t off = {.ss_flags = SS_DISABLE};
		if (wss_sys_failed(wss_sys2(SYS_sigaltstack, &off, NULL)))
			return; /* running on it (a handler calling pthread_exit): keep it */
	}
	if (tls_alt == p)
		tls_alt = NULL;
	wss_sys_munmap(p, ALT_GUARD + ALT_SIZE);
}

void wss_altstack_ensure(void)
{
	stack_t cur;
	if (tls_alt || wss_sys_failed(wss_sys2(SYS_sigaltstack, NULL, &cur)) || !(cur.ss_flags & SS_DISABLE))
		return;
	char *p = wss_sys_alloc(ALT_GUARD + ALT_SIZE);
	if (!p)
		return;
	wss_sys_mprotect(p, ALT_GUARD, PROT_NONE);
	stack_t ss = {.ss_sp = p + ALT_GUARD, .ss_size = ALT_SIZE, .ss_flags = 0};
	if (wss_sys_failed(wss_sys2(SYS_sigaltstack, &ss, NULL))) {
		wss_sys_munmap(p, ALT_GUARD + ALT_SIZE);
		return;
	}
	tls_alt = p;
	/* Freed when the thread exits (the main thread too, if it calls
	 * pthread_exit). */
	if (alt_key_ok)
		pthread_setspecific(alt_key, p);
}

static void resolve_pthread_create(void);

/* The thread's own stack, tracked from its start (thread_start) to its end
 * (this key's destructor, which runs on return from the start routine and
 * at pthread_exit alike; the C library may give the memory to a later
 * thread, which tracks it again). */
static __thread size_t tls_stack_len __attribute__((tls_model("initial-exec")));
static pthread_key_t stack_key;
static bool stack_key_ok, stacks_on;

static void stack_release(void *lo)
{
	wss_engine_untrack_stack(lo, tls_stack_len);
}

static void stack_track(void)
{
	pthread_attr_t a;
	void *lo;
	size_t len;
	if (!__atomic_load_n(&stacks_on, __ATOMIC_ACQUIRE) || !stack_key_ok || pthread_getattr_np(pthread_self(), &a))
		return;
	int r = pthread_attr_getstack(&a, &lo, &len);
	pthread_attr_destroy(&a);
	if (r || !lo || !len)
		return;
	tls_stack_len = len;
	if (pthread_setspecific(stack_key, lo) == 0)
		wss_engine_track_stack(lo, len);
}

void wss_altstack_init(void)
{
	resolve_pthread_create();
	alt_key_ok = pthread_key_create(&alt_key, alt_release) == 0;
	stack_key_ok = pthread_key_create(&stack_key, stack_release) == 0;
	wss_altstack_ensure();
}

void wss_stacks_main(bool track)
{
	char here;
	if (!track)
		return;
	__atomic_store_n(&stacks_on, true, __ATOMIC_RELEASE);
	wss_engine_main_stack(&here);
}

/* Pin [p, p+len) for a call, or at least touch it (pin table full). */
static int pin(const void *p, size_t len)
{
	int h = wss_engine_pin(p, len);
	if (h < 0)
		wss_touch_range(p, len);
	return h;
}

/* A thread's start, through us: its alternate stack first.  given: the
 * program gave it its stack (pthread_attr_setstack), which is the
 * program's memory, excluded from tracking (wss_exclude_stack), never a
 * stack of the C library's to track. */
struct start {
	void *(*fn)(void *);
	void *arg;
	bool given;
};

static void *thread_start(void *p)
{
	struct start st = *(struct start *)p;
	wss_sys_free(p, sizeof st);
	wss_altstack_ensure();
	if (!st.given && !wss_engine_own_thread(st.fn))
		stack_track();
	return st.fn(st.arg);
}

static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void resolve_pthread_create(void)
{
	real_pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
		RTLD_NEXT, "pthread_create");
}

WSS_EXPORT int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict attr, void *(*fn)(void *),
			      void *restrict arg)
{
	if (!__atomic_load_n(&real_pthread_create, __ATOMIC_ACQUIRE))
		resolve_pthread_create(); /* before the constructor: a library's own */
	/* The program is no longer single-threaded (and its new thread may
	 * be realtime): the engine thread goes back to its CPUs. */
	wss_engine_cpu_release(false);
	__typeof__(real_pthread_create) real = real_pthread_create;
	/* glibc reads the attributes (and their extension: CPU set, signal
	 * mask) with every signal blocked, around the clone, and writes *t:
	 * on an armed page that is a kill (robust sync, 139, most runs on a
	 * loaded machine).  They are pinned for the call.  The extension's
	 * place is glibc's own layout (struct pthread_attr, 2.32 and later:
	 * the pointer after stacksize, then the CPU set's pointer and
	 * size); read only once the attributes are pinned, and a wrong guess
	 * pins a range that is not tracked, which does nothing. */
	int pins[4], n = 0;
	pins[n++] = pin(t, sizeof *t);
	if (attr) {
		pins[n++] = pin(attr, sizeof *attr);
		char *ext = ((char *const *)attr)[5];
		if (ext && ((uintptr_t)ext & 7) == 0) {
			pins[n++] = pin(ext, 2 * sizeof(void *) + sizeof(sigset_t) + 8);
			void *cpus = ((void **)ext)[0];
			size_t ncpus = ((size_t *)ext)[1];
			if (cpus && ncpus && ncpus <= 65536)
				pins[n++] = pin(cpus, ncpus);
		}
	}
	/* From mmap, not the heap: the record is ours, and is read by the
	 * new thread before anything else. */
	struct start *st = wss_sys_alloc(sizeof *st);
	void *given = NULL;
	size_t given_len;
	if (attr && pthread_attr_getstack(attr, &given, &given_len))
		given = NULL;
	int r = st ? (st->fn = fn, st->arg = arg, st->given = given != NULL, real(t, attr, thread_start, st))
		   : real(t, attr, fn, arg);
	if (r && st)
		wss_sys_free(st, sizeof *st);
	for (int i = 0; i < n; i++)
		if (pins[i] > 0)
			wss_engine_unpin(pins[i]);
	return r;
}
