/* Mapping changes as one call each: the system call (or the allocator's
 * callback that makes it) and the registry update that follows it, under
 * the engine lock, so that a tick never arms a range that was just unmapped
 * and reused, nor misses one just mapped.  If a call fails with ENOMEM
 * while our protection splits hold VMAs, the splits are undone and the call
 * is retried once: the program must never get ENOMEM because of us.  The
 * preload's wrappers call these and take no engine lock themselves. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/shm.h>

/* Run a system call once more if our splits may have made it fail. */
#define RETRY_RELIEVED(r, call)                                            \
	do {                                                               \
		(r) = (call);                                              \
		if ((long)(r) == -ENOMEM && wss_engine_relieve_locked()) \
			(r) = (call);                                      \
	} while (0)

/* System V attachments tracked (shmat), so that shmdt, which names only
 * the address, untracks what the kernel detaches: [start, end) each,
 * under the engine lock.  An attachment the program unmaps (munmap, a
 * MAP_FIXED over it) leaves the table with it; past SHM_SLOTS at once, an
 * attachment is left untracked. */
#define SHM_SLOTS 64
static struct {
	uintptr_t start, end;
} shm[SHM_SLOTS];

static void shm_forget_locked(uintptr_t s, size_t len)
{
	for (int i = 0; i < SHM_SLOTS; i++)
		if (shm[i].end && shm[i].start < s + len && s < shm[i].end)
			shm[i].start = shm[i].end = 0;
}

void *wss_engine_mmap(void *addr, size_t len, int prot, int flags, int fd, long off, int kind)
{
	wss_lockstate_t ls;
	void *r;
	if (flags & MAP_FIXED) {
		/* It may replace tracked pages: the call and the registry
		 * change are one step for the tick. */
		wss_engine_lock(&ls);
		wss_code_forget_locked((uintptr_t)addr, len);
		wss_registry_harvest_before_unmap((uintptr_t)addr, len);
		RETRY_RELIEVED(r, wss_sys_mmap(addr, len, prot, flags, fd, off));
		if (!wss_sys_failed((long)r)) {
			wss_engine_untrack_locked((uintptr_t)r, len);
			shm_forget_locked((uintptr_t)r, len);
			if (kind)
				wss_engine_track_locked((uintptr_t)r, len, prot, kind);
		}
		wss_engine_unlock(&ls);
		return r;
	}
	/* A plain mmap cannot land on a tracked range: the lock only to
	 * relieve and to register. */
	r = wss_sys_mmap(addr, len, prot, flags, fd, off);
	if ((long)r == -ENOMEM) {
		wss_engine_lock(&ls);
		bool retry = wss_engine_relieve_locked();
		wss_engine_unlock(&ls);
		if (retry)
			r = wss_sys_mmap(addr, len, prot, flags, fd, off);
	}
	if (kind && !wss_sys_failed((long)r))
		wss_engine_track(r, len, prot, kind);
	return r;
}

long wss_engine_munmap(void *addr, size_t len)
{
	wss_lockstate_t ls;
	long r;
	wss_engine_lock(&ls);
	wss_code_forget_locked((uintptr_t)addr, len);
	wss_registry_harvest_before_unmap((uintptr_t)addr, len);
	RETRY_RELIEVED(r, wss_sys_munmap(addr, len));
	if (!wss_sys_failed(r)) {
		wss_engine_untrack_locked((uintptr_t)addr, len);
		shm_forget_locked((uintptr_t)addr, len);
	}
	wss_engine_unlock(&ls);
	return r;
}

void *wss_engine_shmat(int id, const void *addr, int flg)
{
	wss_lockstate_t ls;
	void *r;
	struct shmid_ds ds;
	/* Under the lock: with SHM_REMAP it replaces whatever was mapped
	 * there, in one step with the registry as a MAP_FIXED mmap. */
	wss_engine_lock(&ls);
	RETRY_RELIEVED(r, (void *)wss_sys3(SYS_shmat, id, addr, flg));
	if (!wss_sys_failed((long)r) && !wss_sys_failed(wss_sys3(SYS_shmctl, id, IPC_STAT, &ds)) && ds.shm_segsz) {
		uintptr_t s = (uintptr_t)r, e = wss_page_up(s + ds.shm_segsz);
		wss_code_forget_locked(s, e - s);
		wss_engine_untrack_locked(s, e - s);
		shm_forget_locked(s, e - s);
		int slot = -1;
		for (int i = 0; i < SHM_SLOTS && slot < 0; i++)
			if (!shm[i].end)
				slot = i;
		if (slot >= 0) {
			shm[slot].start = s;
			shm[slot].end = e;
			wss_engine_track_locked(s, e - s, (flg & SHM_RDONLY) ? PROT_READ : PROT_READ | PROT_WRITE,
						WSS_KIND_SHARED);
		}
	}
	wss_engine_unlock(&ls);
	return r;
}

long wss_engine_shmdt(const void *addr)
{
	wss_lockstate_t ls;
	long r;
	wss_engine_lock(&ls);
	int slot = -1;
	for (int i = 0; i < SHM_SLOTS && slot < 0; i++)
		if (shm[i].end && shm[i].start == (uintptr_t)addr)
			slot = i;
	/* Our protection split the attachment's VMA: give it back first, so
	 * that the kernel detaches it whole whatever it makes of the pieces. */
	if (slot >= 0) {
		wss_census_count(shm[slot].start, shm[slot].end);
		wss_engine_disarm_locked(shm[slot].start, shm[slot].end - shm[slot].start);
	}
	RETRY_RELIEVED(r, wss_sys1(SYS_shmdt, addr));
	if (!wss_sys_failed(r) && slot >= 0) {
		wss_engine_untrack_locked(shm[slot].start, shm[slot].end - shm[slot].start);
		shm[slot].start = shm[slot].end = 0;
	}
	wss_engine_unlock(&ls);
	return r;
}

long wss_engine_mprotect(void *addr, size_t len, int prot)
{
	wss_lockstate_t ls;
	long r;
	wss_engine_lock(&ls);
	/* Code the program reprotects (a patch, a JIT in a library's text)
	 * is its own from now on. */
	wss_code_forget_locked((uintptr_t)addr, len);
	RETRY_RELIEVED(r, wss_sys_mprotect(addr, len, prot));
	if (!wss_sys_failed(r))
		wss_engine_protect_locked((uintptr_t)addr, len, prot);
	wss_engine_unlock(&ls);
	return r;
}

void *wss_engine_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *want)
{
	wss_lockstate_t ls;
	void *r;
	wss_engine_lock(&ls);
	/* mremap needs its source to be one VMA: undo our splits there first. */
	wss_code_forget_locked((uintptr_t)old, oldlen);
	/* Under all writes, its pages' bits: a move drops them (the new
	 * range is watched afresh), a shrink unmaps the tail. */
	wss_registry_harvest_before_unmap((uintptr_t)old, oldlen);
	wss_engine_disarm_locked((uintptr_t)old, oldlen);
	RETRY_RELIEVED(r, wss_sys_mremap(old, oldlen, newlen, flags, want));
	if (!wss_sys_failed((long)r))
		wss_engine_move_locked((uintptr_t)old, oldlen, (uintptr_t)r, newlen);
	wss_engine_unlock(&ls);
	return r;
}

void wss_engine_track(void *addr, size_t len, int prot, int kind)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_track_locked((uintptr_t)addr, len, prot, kind);
	wss_engine_unlock(&ls);
}

void wss_engine_protect(void *addr, size_t len, int prot)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_protect_locked((uintptr_t)addr, len, prot);
	wss_engine_unlock(&ls);
}

bool wss_engine_unmapping(void *addr, size_t len, bool (*unmap)(void *arg), void *arg)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_census_count(wss_page_down((uintptr_t)addr), wss_page_up((uintptr_t)addr + len));
	bool gone = unmap(arg);
	if (gone)
		wss_engine_untrack_locked((uintptr_t)addr, len);
	wss_engine_unlock(&ls);
	return gone;
}

void wss_engine_exclude(const void *p, size_t len)
{
	if (!p || !len || !wss_engine_tracking() || !wss_engine_tracked_any(p, len))
		return;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_exclude_locked((uintptr_t)p, len);
	wss_engine_unlock(&ls);
}
