/* The application's mapping calls keep the registry exact: each is handed
 * to the engine (engine/mapping.c), which makes the system call and the
 * registry change in one step for the tick, and undoes our protection
 * splits if they may have made it fail with ENOMEM.  Here: which mappings
 * are ours to track, and errno. */
#include "config.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "common/sys.h"
#include "engine/engine.h"
#include "preload/preload.h"

static bool track_anon, track_shared, track_files;

void wss_mman_init(bool anon, bool shared, bool files)
{
	track_anon = anon;
	track_shared = shared;
	track_files = files;
}

/* The kind a new mapping is tracked as (WSS_KIND_NONE: left alone).  Never
 * code (track.code), stacks, huge pages, or the unwinder's pool; of files,
 * only regular ones on real or tmpfs file systems (a device's or a kernel
 * interface's mapping is not memory we may protect): a shared mapping of a
 * tmpfs file (memfd_create, shm_open, /dev/shm) is shared memory, any
 * other mapping of a regular file a file mapping. */
static int mapping_kind(int prot, int flags, int fd)
{
	if (wss_engine_unwinding()) /* the unwinder's memory pool: never ours to arm */
		return WSS_KIND_NONE;
	int skip = MAP_GROWSDOWN;
#if HAVE_DECL_MAP_STACK
	skip |= MAP_STACK;
#endif
#if HAVE_DECL_MAP_HUGETLB
	skip |= MAP_HUGETLB;
#endif
	if ((prot & PROT_EXEC) || (flags & skip))
		return WSS_KIND_NONE;
	int type = flags & MAP_TYPE;
	bool shared = type == MAP_SHARED || type == MAP_SHARED_VALIDATE;
	if (flags & MAP_ANONYMOUS) {
		if (type == MAP_PRIVATE)
			return track_anon ? WSS_KIND_ANON : WSS_KIND_NONE;
		return shared && track_shared ? WSS_KIND_SHARED : WSS_KIND_NONE;
	}
	if ((!shared && type != MAP_PRIVATE) || (!track_shared && !track_files))
		return WSS_KIND_NONE;
	struct stat st;
	struct statfs sf;
	if (wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)) || !S_ISREG(st.st_mode) ||
	    wss_sys_failed(wss_sys2(SYS_fstatfs, fd, &sf)) || wss_fs_pseudo((long)sf.f_type))
		return WSS_KIND_NONE;
	if (shared && (long)sf.f_type == TMPFS_MAGIC)
		return track_shared ? WSS_KIND_SHARED : WSS_KIND_NONE;
	return track_files ? WSS_KIND_FILE : WSS_KIND_NONE;
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
	int kind = mapping_kind(prot, flags, fd);
	/* A mapping that replaces one at the same address (MAP_FIXED): the
	 * old one leaves the allocation sites first, or its entry would stay
	 * live for ever beside the new one's. */
	if ((flags & MAP_FIXED) && addr)
		wss_engine_free_range(addr, len);
	void *r = wss_engine_mmap(addr, len, prot, flags, fd, off, kind);
	if (kind != WSS_KIND_NONE && !wss_sys_failed((long)r))
		wss_engine_alloc_mapped(r, len); /* an allocation site (engine/allocs.c) */
	return result_ptr(r, saved);
}

WSS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

WSS_EXPORT int munmap(void *addr, size_t len)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys_munmap(addr, len), saved);
	/* Out of the allocation sites first: once unmapped, the address may
	 * be another thread's new mapping. */
	wss_engine_free_range(addr, len);
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

/* A file shortened or with a hole punched loses its mapped pages (the
 * census, engine/census.c); one made longer (a JVM's performance file,
 * sized before it is mapped) or space reserved loses none. */
int ftruncate(int fd, off_t len);
int fallocate(int fd, int mode, off_t off, off_t len);

WSS_EXPORT int ftruncate(int fd, off_t len)
{
	int saved = errno;
	struct stat st;
	if (wss_engine_tracking() && (wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)) || st.st_size > len))
		wss_engine_file_changed();
	return result_int(wss_sys2(SYS_ftruncate, fd, len), saved);
}

WSS_EXPORT int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));

#define FALLOC_KEEPS (0x01 | 0x40) /* FALLOC_FL_KEEP_SIZE, FALLOC_FL_UNSHARE_RANGE */

WSS_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	int saved = errno;
	if (mode & ~FALLOC_KEEPS)
		wss_engine_file_changed(); /* a hole punched, a range zeroed, collapsed or inserted */
	return result_int(wss_sys4(SYS_fallocate, fd, mode, off, len), saved);
}

WSS_EXPORT int fallocate64(int fd, int mode, off_t off, off_t len) __attribute__((alias("fallocate")));

/* Locking memory faults its pages in: present without a touch, which the
 * totals' census must know (engine/census.c). */
WSS_EXPORT int mlock(const void *addr, size_t len)
{
	int saved = errno;
	if (wss_engine_tracking())
		wss_engine_populating("ended (mlock: pages present without a touch)");
	return result_int(wss_sys3(SYS_mlock, addr, len, 0), saved);
}

WSS_EXPORT int mlock2(const void *addr, size_t len, unsigned int flags)
{
	int saved = errno;
	if (wss_engine_tracking())
		wss_engine_populating("ended (mlock2: pages present without a touch)");
	return result_int(wss_sys3(SYS_mlock2, addr, len, flags), saved);
}

WSS_EXPORT int mlockall(int flags)
{
	int saved = errno;
	if (wss_engine_tracking())
		wss_engine_populating("ended (mlockall: pages present without a touch)");
	return result_int(wss_sys3(SYS_mlockall, flags, 0, 0), saved);
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
	/* For the allocation sites, as realloc: the old mapping leaves the
	 * sample before the call (moved, its address may be another thread's
	 * next mapping; and its entry would stay live for ever), and the
	 * result, when tracked (its first page: tracked_any would walk every
	 * page of a large one), is an allocation of its own.  A call that
	 * fails leaves the old mapping out of the sample. */
	wss_engine_free_range(old, oldlen);
	void *r = wss_engine_mremap(old, oldlen, newlen, flags, want);
	if (!wss_sys_failed((long)r) && wss_engine_tracked_page((uintptr_t)r, NULL))
		wss_engine_alloc_mapped(r, newlen);
	return result_ptr(r, saved);
}

void wss_exclude_stack(const void *p, unsigned long n) { wss_engine_exclude(p, n); }

/* System V shared memory: an attachment is shared memory like a MAP_SHARED
 * mapping (its size from IPC_STAT); shmdt untracks what shmat tracked.
 * SHM_EXEC attachments are code, never ours. */
WSS_EXPORT void *shmat(int id, const void *addr, int flg)
{
	int saved = errno;
	if (!wss_engine_tracking() || !track_shared || (flg & SHM_EXEC) || wss_engine_unwinding())
		return result_ptr((void *)wss_sys3(SYS_shmat, id, addr, flg), saved);
	return result_ptr(wss_engine_shmat(id, addr, flg), saved);
}

WSS_EXPORT int shmdt(const void *addr)
{
	int saved = errno;
	if (!wss_engine_tracking())
		return result_int(wss_sys1(SYS_shmdt, addr), saved);
	return result_int(wss_engine_shmdt(addr), saved);
}
