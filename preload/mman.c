/* The application's mapping calls keep the registry exact: each is handed
 * to the engine (engine/mapping.c), which makes the system call and the
 * registry change in one step for the tick, and undoes our protection
 * splits if they may have made it fail with ENOMEM.  Here: which mappings
 * are ours to track, and errno. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>

#include "common/sys.h"
#include "engine/engine.h"
#include "preload/preload.h"

static bool track_anon;

void wss_mman_init(bool track) { track_anon = track; }

static bool trackable(int prot, int flags)
{
	if (wss_engine_unwinding()) /* the unwinder's memory pool: never ours to arm */
		return false;
	if (!track_anon || !(flags & MAP_ANONYMOUS) || (flags & MAP_TYPE) != MAP_PRIVATE || (prot & PROT_EXEC))
		return false;
	int skip = MAP_GROWSDOWN;
#if HAVE_DECL_MAP_STACK
	skip |= MAP_STACK;
#endif
#if HAVE_DECL_MAP_HUGETLB
	skip |= MAP_HUGETLB;
#endif
	return !(flags & skip);
}

static void *result_ptr(void *r, int saved)
{
	if (wss_sys_failed((long)r)) {
		errno = (int)-(long)r;
		return MAP_FAILED;
	}
	errno = saved;
	return r;
}

static int result_int(long r, int saved)
{
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	errno = saved;
	return 0;
}

WSS_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_ptr(wss_sys_mmap(addr, len, prot, flags, fd, off), saved);
	int kind = trackable(prot, flags) ? WSS_KIND_ANON : WSS_KIND_NONE;
	return result_ptr(wss_engine_mmap(addr, len, prot, flags, fd, off, kind), saved);
}

WSS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

WSS_EXPORT int munmap(void *addr, size_t len)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys_munmap(addr, len), saved);
	return result_int(wss_engine_munmap(addr, len), saved);
}

WSS_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys_mprotect(addr, len, prot), saved);
	return result_int(wss_engine_mprotect(addr, len, prot), saved);
}

/* MADV_DONTNEED drops the pages with their write-protect markers: pages
 * nobody touches again would come back from the next harvest as written.
 * The engine harvests the range before and protects it again after
 * (engine/registry.c). */
WSS_EXPORT int madvise(void *addr, size_t len, int adv)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys_madvise(addr, len, adv), saved);
	return result_int(wss_engine_discard((uintptr_t)addr, len, adv), saved);
}

WSS_EXPORT void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...)
{
	int saved = errno;
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!wss_engine_tracking())
		return result_ptr(wss_sys_mremap(old, oldlen, newlen, flags, want), saved);
	return result_ptr(wss_engine_mremap(old, oldlen, newlen, flags, want), saved);
}

void wss_exclude_stack(const void *p, unsigned long n) { wss_engine_exclude(p, n); }
