/* The heap while measuring: jemalloc, linked in from Debian's
 * libjemalloc_pic.a with its public names renamed to wss_je_* at build time
 * (Makefile.am, preload/jemalloc.syms), so that these wrappers are the
 * process's malloc whatever the load order.
 *
 * Tracked arenas carry extent hooks that register every extent with the
 * engine; their metadata is kept out of them (metadata_use_hooks = false).
 * Arena 0 has jemalloc's default hooks and is never tracked: it serves
 * allocations made before start-up, and those made by the C library and the
 * dynamic loader for themselves (stdio buffers, DIR streams, locale data),
 * whose pages the C library hands to system calls internally, where an armed
 * page would fail with EFAULT.  jemalloc's own mmap/munmap/mprotect/madvise
 * are renamed to raw system calls so that they never reach our interposers. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/sys.h"
#include "engine/engine.h"

void *wss_je_malloc(size_t);
void *wss_je_calloc(size_t, size_t);
void *wss_je_realloc(void *, size_t);
void wss_je_free(void *);
int wss_je_posix_memalign(void **, size_t, size_t);
void *wss_je_aligned_alloc(size_t, size_t);
void *wss_je_memalign(size_t, size_t);
void *wss_je_valloc(size_t);
size_t wss_je_malloc_usable_size(void *);
void *wss_je_mallocx(size_t, int);
void *wss_je_rallocx(void *, size_t, int);
int wss_je_mallctl(const char *, void *, size_t *, void *, size_t);
/* Called by jemalloc in place of mmap, munmap, mprotect and madvise. */
void *wss_je_sys_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off);
int wss_je_sys_munmap(void *a, size_t len);
int wss_je_sys_mprotect(void *a, size_t len, int prot);
int wss_je_sys_madvise(void *a, size_t len, int adv);
/* Not declared by glibc's headers any more, still exported by it. */
void *pvalloc(size_t n);

/* jemalloc reads its options from here (and from MALLOC_CONF).  Huge
 * allocations must stay in the calling thread's (tracked) arena instead of
 * jemalloc's dedicated huge arena.  Objects up to 64 KiB are kept in the
 * thread's cache (jemalloc's default: 32 KiB): above the cache, each
 * allocation and free splits and merges extents, and with extent hooks of
 * ours every split and merge calls them with the thread switched to
 * jemalloc's slow path and back (its reentrancy guard): bench/mallocheavy
 * (5 % of its allocations between 512 B and 64 KiB) ran 701 ms with
 * nothing armed against 655 in jemalloc's own arena, 621 natively; 570
 * with this cache, for 0.5 MiB more of peak RSS.  The worst case is 20
 * objects of each of the four classes added (40-64 KiB) per thread, 4.1
 * MiB, on top of jemalloc's own 2.4 MiB for 16-32 KiB; its cache GC runs
 * on the thread's own allocations, so a parked thread keeps what it
 * cached.  MALLOC_CONF, read after this, can set it back. */
__attribute__((visibility("hidden"))) const char *wss_je_malloc_conf = "oversize_threshold:0,tcache_max:65536";

/* ---- jemalloc's system calls ------------------------------------------ */

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN void *wss_je_sys_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	void *r = wss_sys_mmap(a, len, prot, flags, fd, off);
	if (wss_sys_failed((long)r)) {
		errno = (int)-(long)r;
		return MAP_FAILED;
	}
	return r;
}

static int errno_result(long r)
{
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

HIDDEN int wss_je_sys_munmap(void *a, size_t len) { return errno_result(wss_sys_munmap(a, len)); }
HIDDEN int wss_je_sys_mprotect(void *a, size_t len, int prot) { return errno_result(wss_sys_mprotect(a, len, prot)); }
/* Purges go through the engine: a zapped page reads as written to the
 * write-tracking backends. */
HIDDEN int wss_je_sys_madvise(void *a, size_t len, int adv)
{
	return errno_result(wss_engine_discard((uintptr_t)a, len, adv));
}

/* ---- extent hooks ------------------------------------------------------- */

static extent_hooks_t *default_hooks;

static void *hook_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t align, bool *zero, bool *commit,
			unsigned ind)
{
	void *p = default_hooks->alloc(default_hooks, new_addr, size, align, zero, commit, ind);
	if (p)
		wss_engine_track(p, size, *commit ? PROT_READ | PROT_WRITE : PROT_NONE, WSS_KIND_HEAP);
	return p;
}

/* jemalloc's dalloc and destroy run inside wss_engine_unmapping: the range
 * leaves the registry in the same step as it is unmapped (once unmapped it
 * may be reused by anyone). */
struct unmap_call {
	void *addr;
	size_t size;
	bool committed;
	unsigned ind;
	bool keep; /* dalloc's answer: true, the extent was kept (not unmapped) */
};

static bool dalloc_call(void *arg)
{
	struct unmap_call *c = arg;
	c->keep = default_hooks->dalloc(default_hooks, c->addr, c->size, c->committed, c->ind);
	return !c->keep;
}

static bool destroy_call(void *arg)
{
	struct unmap_call *c = arg;
	default_hooks->destroy(default_hooks, c->addr, c->size, c->committed, c->ind);
	return true;
}

static bool hook_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned ind)
{
	struct unmap_call c = {addr, size, committed, ind, false};
	wss_engine_unmapping(addr, size, dalloc_call, &c);
	return c.keep;
}

static void hook_destroy(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned ind)
{
	struct unmap_call c = {addr, size, committed, ind, false};
	wss_engine_unmapping(addr, size, destroy_call, &c);
}

static bool hook_commit(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len, unsigned ind)
{
	bool err = default_hooks->commit(default_hooks, addr, size, off, len, ind);
	if (!err)
		wss_engine_protect((char *)addr + off, len, PROT_READ | PROT_WRITE);
	return err;
}

static bool hook_decommit(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len, unsigned ind)
{
	bool err = default_hooks->decommit(default_hooks, addr, size, off, len, ind);
	if (!err)
		wss_engine_protect((char *)addr + off, len, PROT_NONE);
	return err;
}

static bool hook_purge_lazy(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len, unsigned ind)
{
	return default_hooks->purge_lazy ? default_hooks->purge_lazy(default_hooks, addr, size, off, len, ind) : true;
}

static bool hook_purge_forced(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len, unsigned ind)
{
	return default_hooks->purge_forced ? default_hooks->purge_forced(default_hooks, addr, size, off, len, ind) : true;
}

static bool hook_split(extent_hooks_t *h, void *addr, size_t size, size_t a, size_t b, bool committed, unsigned ind)
{
	return default_hooks->split(default_hooks, addr, size, a, b, committed, ind);
}

static bool hook_merge(extent_hooks_t *h, void *a, size_t as, void *b, size_t bs, bool committed, unsigned ind)
{
	return default_hooks->merge(default_hooks, a, as, b, bs, committed, ind);
}

static extent_hooks_t wss_hooks = {
	hook_alloc, hook_dalloc, hook_destroy, hook_commit, hook_decommit,
	hook_purge_lazy, hook_purge_forced, hook_split, hook_merge,
};

/* jemalloc 5.3's arena_config_t (experimental.arenas_create_ext). */
typedef struct {
	extent_hooks_t *extent_hooks;
	bool metadata_use_hooks;
} je_arena_config_t;

#define MAX_ARENAS 64
static unsigned heap_arenas[MAX_ARENAS];
static unsigned heap_narenas;
static unsigned heap_next;
static bool heap_ready;
static uintptr_t libc_text[4][2];
static int libc_ntext;
static __thread bool tls_bound __attribute__((tls_model("initial-exec")));

static int find_libc_text(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *n = info->dlpi_name;
	if (!n || (!strstr(n, "/libc.so") && !strstr(n, "/ld-linux")))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && libc_ntext < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			libc_text[libc_ntext][0] = info->dlpi_addr + ph->p_vaddr;
			libc_text[libc_ntext][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			libc_ntext++;
		}
	}
	return 0;
}

/* Not pthread_once: if registering allocated, the nested malloc would wait
 * on the once-control its own thread holds. */
static int atfork_done;

/* jemalloc's "cache_oblivious" (on in Debian's build, and refused by
 * malloc_conf in 5.3) starts every large allocation at a random multiple of
 * 64 bytes inside its first page, so the same program touches different
 * pages from run to run (glibc: always 16 bytes in).  Cleared before
 * jemalloc initialises (at the first allocation, which comes through
 * wss_heap_atfork_once), large allocations start on a page boundary and
 * profiles of the same input are reproducible. */
extern bool je_opt_cache_oblivious;

/* The engine's fork handlers, registered before jemalloc registers its
 * own (at its initialisation, which the first allocation after this
 * triggers).  Prepare handlers run in reverse order of registration, so
 * jemalloc's mutexes are taken before the engine lock, the order its
 * extent hooks take them (wss_lock_rank_t).  The ticks' lock comes before
 * both: preload/init.c registers it after jemalloc's. */
static void fork_prepare(void) { wss_engine_fork_prepare(); }
static void fork_parent(void) { wss_engine_fork_parent(); }
static void fork_child(void) { wss_engine_fork_child(); }

void wss_heap_atfork_once(void)
{
	if (__atomic_load_n(&atfork_done, __ATOMIC_ACQUIRE) || __atomic_exchange_n(&atfork_done, 1, __ATOMIC_ACQ_REL))
		return;
	je_opt_cache_oblivious = false; /* before pthread_atfork's allocation */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int wss_heap_init(void)
{
	wss_heap_atfork_once();
	dl_iterate_phdr(find_libc_text, NULL);
	size_t sz = sizeof default_hooks;
	int r = wss_je_mallctl("arena.0.extent_hooks", &default_hooks, &sz, NULL, 0);
	if (r)
		return r;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = ncpu > 0 ? (unsigned)ncpu : 1;
	if (want > MAX_ARENAS)
		want = MAX_ARENAS;
	for (unsigned i = 0; i < want; i++) {
		je_arena_config_t cfg = {&wss_hooks, false};
		unsigned ind;
		sz = sizeof ind;
		r = wss_je_mallctl("experimental.arenas_create_ext", &ind, &sz, &cfg, sizeof cfg);
		if (r) {
			extent_hooks_t *hp = &wss_hooks;
			r = wss_je_mallctl("arenas.create", &ind, &sz, &hp, sizeof hp);
		}
		if (r)
			break;
		heap_arenas[heap_narenas++] = ind;
	}
	if (!heap_narenas)
		return r ? r : ENOMEM;
	__atomic_store_n(&heap_ready, true, __ATOMIC_RELEASE);
	return 0;
}

static bool from_libc(const void *ra)
{
	uintptr_t a = (uintptr_t)ra;
	for (int i = 0; i < libc_ntext; i++)
		if (a >= libc_text[i][0] && a < libc_text[i][1])
			return true;
	return false;
}

static void bind_slow(void)
{
	tls_bound = true;
	if (!wss_engine_active())
		return;
	unsigned ind = heap_arenas[__atomic_fetch_add(&heap_next, 1, __ATOMIC_RELAXED) % heap_narenas];
	wss_je_mallctl("thread.arena", NULL, NULL, &ind, sizeof ind);
}

#define UNTRACKED (MALLOCX_ARENA(0) | MALLOCX_TCACHE_NONE)

/* Where should this allocation come from?  Returns true for the untracked
 * arena; otherwise makes sure the thread is bound to a tracked one. */
static inline bool route_untracked(const void *ra)
{
	if (!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE)) {
		wss_heap_atfork_once();
		return false; /* before start-up: arena 0 anyway */
	}
	if (from_libc(ra) || wss_engine_unwinding())
		return true;
	if (__builtin_expect(!tls_bound, 0))
		bind_slow();
	return false;
}

/* An allocation from a tracked arena, for the allocation sites
 * (engine/allocs.c): most cost one subtraction there. */
static inline void *sited(void *p, size_t n)
{
	wss_engine_alloc(p, n);
	return p;
}

/* realloc: the old block leaves the sample before the call (once the
 * call has freed it, another thread may be given its address), and the
 * new one is an allocation of its own.  A realloc that fails leaves the
 * old block live, and out of the sample. */
static inline void *resited(void *old, size_t n)
{
	wss_engine_free(old);
	return sited(wss_je_realloc(old, n), n);
}

WSS_EXPORT void *malloc(size_t n)
{
	if (route_untracked(__builtin_return_address(0)))
		return wss_je_mallocx(n ? n : 1, UNTRACKED);
	return sited(wss_je_malloc(n), n);
}

WSS_EXPORT void *calloc(size_t n, size_t m)
{
	if (route_untracked(__builtin_return_address(0))) {
		size_t t;
		if (__builtin_mul_overflow(n, m, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return wss_je_mallocx(t ? t : 1, UNTRACKED | MALLOCX_ZERO);
	}
	size_t t = 0;
	(void)__builtin_mul_overflow(n, m, &t);
	return sited(wss_je_calloc(n, m), t);
}

WSS_EXPORT void *realloc(void *p, size_t n)
{
	if (route_untracked(__builtin_return_address(0)) && n) {
		if (!p)
			return wss_je_mallocx(n, UNTRACKED);
		/* libc growing a block of the program's (getline, open_memstream):
		 * out of the sample first, as in resited, or its entry would
		 * outlive the block and count as live for ever. */
		wss_engine_free(p);
		return wss_je_rallocx(p, n, UNTRACKED);
	}
	return resited(p, n);
}

WSS_EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	if (__builtin_mul_overflow(n, m, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	if (route_untracked(__builtin_return_address(0)) && t) {
		if (!p)
			return wss_je_mallocx(t, UNTRACKED);
		wss_engine_free(p); /* as in realloc */
		return wss_je_rallocx(p, t, UNTRACKED);
	}
	return resited(p, t);
}

WSS_EXPORT void free(void *p)
{
	wss_engine_free(p);
	wss_je_free(p);
}

WSS_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	route_untracked(NULL);
	int r = wss_je_posix_memalign(out, align, n);
	if (!r)
		sited(*out, n);
	return r;
}

WSS_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	route_untracked(NULL);
	return sited(wss_je_aligned_alloc(align, n), n);
}

WSS_EXPORT void *memalign(size_t align, size_t n)
{
	route_untracked(NULL);
	return sited(wss_je_memalign(align, n), n);
}

WSS_EXPORT void *valloc(size_t n)
{
	route_untracked(NULL);
	return sited(wss_je_valloc(n), n);
}

WSS_EXPORT void *pvalloc(size_t n)
{
	route_untracked(NULL);
	size_t ps = WSS_PAGE_SIZE;
	n = n ? (n + ps - 1) & ~(ps - 1) : ps;
	return sited(wss_je_memalign(ps, n), n);
}

WSS_EXPORT size_t malloc_usable_size(void *p) { return p ? wss_je_malloc_usable_size(p) : 0; }
