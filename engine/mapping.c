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
	/* A locked mapping is populated whenever it gains access (an
	 * mprotect): present without a touch. */
	if (flags & MAP_LOCKED)
		wss_engine_populating("ended (MAP_LOCKED: pages present without a touch)");
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
	/* What it replaces leaves with the call: counted first. */
	if ((flg & SHM_REMAP) && addr && !wss_sys_failed(wss_sys3(SYS_shmctl, id, IPC_STAT, &ds)))
		wss_census_count(wss_page_down((uintptr_t)addr), wss_page_up((uintptr_t)addr + ds.shm_segsz));
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

/* mremap moves or grows one VMA.  Our protection splits are undone before
 * the call, but the pieces do not always merge back: each piece faulted
 * on its own got an anon_vma of its own, and the kernel merges no two
 * VMAs with different ones, so a call that works natively fails with
 * EFAULT.
 * Then the call is made piece by piece, as the kernel would have moved
 * the one VMA: each piece to its offset in the target, the last one
 * grown by what the call adds.  Another thread touching the range during
 * the call may see it half moved (natively it waits for the call): a
 * program does not touch what it is moving.  Engine lock held. */
#define PIECES_MAX 4096
#define MAPS_MAX (256UL << 20)

static long mremap_pieces(uintptr_t old, size_t oldlen, size_t newlen, int flags, uintptr_t want)
{
	static uintptr_t ps[PIECES_MAX], pe[PIECES_MAX];
	char *buf;
	size_t len, n = 0;
	if (wss_file_read("/proc/self/maps", MAPS_MAX, &buf, &len))
		return -EFAULT;
	uintptr_t end = old + oldlen, at = old;
	bool holes = false;
	for (size_t i = 0; i < len && n < PIECES_MAX;) {
		uintptr_t s = 0, e = 0;
		while (i < len && buf[i] != '-')
			s = s * 16 + (uintptr_t)(buf[i] <= '9' ? buf[i] - '0' : buf[i] - 'a' + 10), i++;
		for (i++; i < len && buf[i] != ' '; i++)
			e = e * 16 + (uintptr_t)(buf[i] <= '9' ? buf[i] - '0' : buf[i] - 'a' + 10);
		while (i < len && buf[i++] != '\n')
			;
		if (e <= at || s >= end)
			continue;
		holes |= s > at;
		ps[n] = s > old ? s : old;
		pe[n] = e < end ? e : end;
		at = pe[n++];
	}
	wss_file_free(buf, MAPS_MAX);
	/* Not one run of pieces: the native call fails there too. */
	if (holes || at < end || n < 2)
		return -EFAULT;
	size_t grow = newlen > oldlen ? newlen - oldlen : 0;
	long r;
	if (grow && !(flags & MREMAP_FIXED)) {
		/* In place, as the kernel tries first: the last piece grows. */
		r = (long)wss_sys_mremap((void *)ps[n - 1], pe[n - 1] - ps[n - 1], pe[n - 1] - ps[n - 1] + grow, 0, NULL);
		if (!wss_sys_failed(r))
			return (long)old;
		if (!(flags & MREMAP_MAYMOVE))
			return r;
	} else if (!grow && (newlen < oldlen || !(flags & MREMAP_FIXED))) {
		return -EFAULT; /* a shrink or a no-op does not need one VMA */
	}
	uintptr_t to = want;
	if (!(flags & MREMAP_FIXED)) {
		/* Room for it all, taken as the kernel would pick it. */
		r = (long)wss_sys_mmap(NULL, newlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (wss_sys_failed(r))
			return r;
		to = (uintptr_t)r;
	}
	int f = MREMAP_MAYMOVE | MREMAP_FIXED | (flags & MREMAP_DONTUNMAP);
	for (size_t i = 0; i < n; i++) {
		size_t l = pe[i] - ps[i];
		r = (long)wss_sys_mremap((void *)ps[i], l, l + (i == n - 1 ? grow : 0), f, (void *)(to + (ps[i] - old)));
		if (wss_sys_failed(r))
			return r;
	}
	return (long)to;
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
	/* What a fixed target replaces leaves with the call: counted first. */
	if (flags & MREMAP_FIXED)
		wss_census_count(wss_page_down((uintptr_t)want), wss_page_up((uintptr_t)want + newlen));
	wss_engine_disarm_locked((uintptr_t)old, oldlen);
	RETRY_RELIEVED(r, wss_sys_mremap(old, oldlen, newlen, flags, want));
	if ((long)r == -EFAULT && wss_engine_tracked_any(old, oldlen))
		r = (void *)mremap_pieces((uintptr_t)old, wss_page_up(oldlen), wss_page_up(newlen), flags, (uintptr_t)want);
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
