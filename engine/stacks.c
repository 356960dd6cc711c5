/* Stacks as tracked memory (kind stack): the main thread's, and each
 * thread's the C library allocated, from the thread's start to its end.
 * A stack is written by the kernel as much as by the program (signal
 * frames, system calls' output), so it is never protected against access:
 * it is write-protected (WSS_PF_WPONLY, shadow.h), a write the kernel
 * resolves itself in userfaultfd's asynchronous mode, and its pages touched
 * in an interval are the ones written there, read from the harvest.  So a
 * backend without a harvest (mprotect) tracks no stack; docs/limits.md says
 * what a write-only view leaves out. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <sys/mman.h>

/* Whether [a, a + len) is mapped: mincore(2) says ENOMEM for a hole. */
static bool mapped(uintptr_t a, size_t len)
{
	unsigned char vec[64];
	for (size_t off = 0; off < len; off += 64 * WSS_PAGE_SIZE) {
		size_t n = len - off < 64 * WSS_PAGE_SIZE ? len - off : 64 * WSS_PAGE_SIZE;
		if (wss_sys3(SYS_mincore, a + off, n, vec) == -ENOMEM)
			return false;
	}
	return true;
}

void wss_engine_track_stack(void *lo, size_t len)
{
	uintptr_t s = wss_page_up((uintptr_t)lo), e = wss_page_down((uintptr_t)lo + len);
	/* Memory of the program's own (the heap, its mmap) made a stack with
	 * pthread_attr_setstack stays what it was, or left tracking (stacks.c
	 * in preload/ excludes it). */
	if (s >= e || !wss_engine_tracking() || wss_engine_tracked_any((void *)s, e - s))
		return;
	/* The calling thread is the stack's: its pages are its own. */
	uint32_t owner = wss_threads_self();
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_track_stack_locked(s, e - s, owner);
	wss_engine_unlock(&ls);
}

void wss_engine_untrack_stack(void *lo, size_t len)
{
	uintptr_t s = wss_page_up((uintptr_t)lo), e = wss_page_down((uintptr_t)lo + len);
	if (s >= e || !wss_engine_tracking())
		return;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_census_count(s, e); /* the thread's last writes, before glibc keeps or frees the stack */
	wss_engine_untrack_kind_locked(s, e - s, WSS_KIND_STACK);
	wss_engine_unlock(&ls);
}

/* The main stack grows down at the program's touches below it, one
 * mapping (VM_GROWSDOWN): its mapped part at start is tracked, and the
 * tick tracks what it grew by since (wss_stacks_grow_locked).  The first
 * page above its top and below its bottom are holes (the guard gap). */
void wss_engine_main_stack(const void *sp)
{
	uintptr_t p = wss_page_down((uintptr_t)sp), lo = p, hi = p + WSS_PAGE_SIZE;
	if (!mapped(p, WSS_PAGE_SIZE))
		return;
	while (lo >= WSS_PAGE_SIZE && mapped(lo - WSS_PAGE_SIZE, WSS_PAGE_SIZE))
		lo -= WSS_PAGE_SIZE;
	while (hi < WSS_ADDR_LIMIT && mapped(hi, WSS_PAGE_SIZE))
		hi += WSS_PAGE_SIZE;
	wss_engine_track_stack((void *)lo, hi - lo);
	E.main_stack_lo = lo;
	E.main_stack_owner = wss_threads_self();
}

/* The pages the main stack grew by since the last tick: the lowest lo'
 * with [lo', lo) mapped, found by doubling then halving.  Engine lock. */
void wss_stacks_grow_locked(void)
{
	uintptr_t lo = E.main_stack_lo;
	if (!lo || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || !mapped(lo - WSS_PAGE_SIZE, WSS_PAGE_SIZE))
		return;
	size_t n = 1;
	while (lo > (2 * n) * WSS_PAGE_SIZE && mapped(lo - 2 * n * WSS_PAGE_SIZE, 2 * n * WSS_PAGE_SIZE))
		n *= 2;
	/* [lo - n pages, lo) is mapped, [lo - 2n pages, lo) is not. */
	size_t step = n / 2;
	while (step) {
		if (lo > (n + step) * WSS_PAGE_SIZE && mapped(lo - (n + step) * WSS_PAGE_SIZE, step * WSS_PAGE_SIZE))
			n += step;
		step /= 2;
	}
	uintptr_t nlo = lo - n * WSS_PAGE_SIZE;
	E.main_stack_lo = nlo;
	/* Not growth: a mapping of the program's right below (MAP_FIXED into
	 * the guard gap) is its own. */
	for (size_t i = wss_regions_lower_bound(&E.regions, nlo); i < E.regions.n && E.regions.v[i].start < lo; i++)
		return;
	wss_engine_track_stack_locked(nlo, lo - nlo, E.main_stack_owner);
	/* What it grew by was written in the interval ending (a stack grows
	 * at the program's access), before it was tracked: its pages in
	 * memory are this interval's writes. */
	unsigned char vec[64];
	for (uintptr_t a = nlo; a < lo; a += 64 * WSS_PAGE_SIZE) {
		size_t pages = (lo - a) / WSS_PAGE_SIZE < 64 ? (lo - a) / WSS_PAGE_SIZE : 64;
		if (wss_sys3(SYS_mincore, a, pages * WSS_PAGE_SIZE, vec))
			break;
		for (size_t i = 0; i < pages; i++)
			if (vec[i] & 1)
				wss_writes_record(a + i * WSS_PAGE_SIZE, a + (i + 1) * WSS_PAGE_SIZE, E.epoch, E.main_stack_owner);
	}
}
