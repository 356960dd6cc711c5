/* The application's mapping calls keep the registry exact.  Calls that can
 * remove or change tracked pages (MAP_FIXED, munmap, mprotect, mremap) run
 * their system call under the engine lock, so that a tick can never arm a
 * range that was just unmapped and reused.  A plain mmap cannot land on a
 * tracked range and only takes the lock to register.  If one of these calls
 * fails with ENOMEM while our protection splits are holding VMAs, the splits
 * are undone and the call is retried once: the application must never get
 * ENOMEM because of us. */
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
	bool track = trackable(prot, flags);
	wss_lockstate_t ls;
	void *r;
	if (flags & MAP_FIXED) {
		wss_engine_lock(&ls);
		r = wss_sys_mmap(addr, len, prot, flags, fd, off);
		if ((long)r == -ENOMEM && wss_engine_relieve_locked())
			r = wss_sys_mmap(addr, len, prot, flags, fd, off);
		if (!wss_sys_failed((long)r)) {
			wss_engine_untrack_locked((uintptr_t)r, len);
			if (track)
				wss_engine_track_locked((uintptr_t)r, len, prot, WSS_KIND_ANON);
		}
		wss_engine_unlock(&ls);
		return result_ptr(r, saved);
	}
	r = wss_sys_mmap(addr, len, prot, flags, fd, off);
	if ((long)r == -ENOMEM) {
		wss_engine_lock(&ls);
		bool retry = wss_engine_relieve_locked();
		wss_engine_unlock(&ls);
		if (retry)
			r = wss_sys_mmap(addr, len, prot, flags, fd, off);
	}
	if (track && !wss_sys_failed((long)r)) {
		wss_engine_lock(&ls);
		wss_engine_track_locked((uintptr_t)r, len, prot, WSS_KIND_ANON);
		wss_engine_unlock(&ls);
	}
	return result_ptr(r, saved);
}

WSS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

WSS_EXPORT int munmap(void *addr, size_t len)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys_munmap(addr, len), saved);
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	long r = wss_sys_munmap(addr, len);
	if (r == -ENOMEM && wss_engine_relieve_locked())
		r = wss_sys_munmap(addr, len);
	if (!wss_sys_failed(r))
		wss_engine_untrack_locked((uintptr_t)addr, len);
	wss_engine_unlock(&ls);
	return result_int(r, saved);
}

WSS_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys_mprotect(addr, len, prot), saved);
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	long r = wss_sys_mprotect(addr, len, prot);
	if (r == -ENOMEM && wss_engine_relieve_locked())
		r = wss_sys_mprotect(addr, len, prot);
	if (!wss_sys_failed(r))
		wss_engine_protect_locked((uintptr_t)addr, len, prot);
	wss_engine_unlock(&ls);
	return result_int(r, saved);
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
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	/* mremap needs its source to be one VMA: undo our splits there first. */
	wss_engine_disarm_locked((uintptr_t)old, oldlen);
	void *r = wss_sys_mremap(old, oldlen, newlen, flags, want);
	if ((long)r == -ENOMEM && wss_engine_relieve_locked())
		r = wss_sys_mremap(old, oldlen, newlen, flags, want);
	if (!wss_sys_failed((long)r))
		wss_engine_move_locked((uintptr_t)old, oldlen, (uintptr_t)r, newlen);
	wss_engine_unlock(&ls);
	return result_ptr(r, saved);
}

void wss_exclude_stack(const void *p, unsigned long n)
{
	if (!p || !n || !wss_engine_tracking() || !wss_engine_tracked_any(p, n))
		return;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_exclude_locked((uintptr_t)p, n);
	wss_engine_unlock(&ls);
}
