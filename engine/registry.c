/* The registry: which ranges are tracked, with what protection and kind,
 * kept exact by the preload's mapping hooks (each change under the engine
 * lock, made by the caller together with its system call), and the page
 * history that follows the data (mremap) or is forgotten (unmap).  A range
 * over WSS_SPARSE_MIN_BYTES is registered sparsely (engine/sparse.h): one
 * table entry, and per-page work for the members of the sample only, so
 * that every change here costs what its members cost, never its size. */
#include "config.h"
#include "engine/internal.h"

#include <sys/mman.h>

/* Linux 5.18's MADV_DONTNEED for locked pages, which older headers lack. */
#define WSS_MADV_DONTNEED_LOCKED 24
/* And Linux 5.14's and 6.1's advice that populates. */
#define WSS_MADV_POPULATE_READ 22
#define WSS_MADV_POPULATE_WRITE 23
#define WSS_MADV_COLLAPSE 25
/* Advice that keeps the pages (4.14, 5.4, 6.13), for the census. */
#define WSS_MADV_WIPEONFORK 18
#define WSS_MADV_KEEPONFORK 19
#define WSS_MADV_COLD 20
#define WSS_MADV_GUARD_INSTALL 102
#define WSS_MADV_GUARD_REMOVE 103

/* Call fn on each part of [s, e) covered by a tracked region. */
void wss_registry_parts(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	size_t i = wss_regions_lower_bound(&E.regions, s);
	for (; i < E.regions.n && E.regions.v[i].start < e; i++)
		fn(E.regions.v[i].start > s ? E.regions.v[i].start : s, E.regions.v[i].end < e ? E.regions.v[i].end : e, arg);
}

bool wss_engine_tracked_page(uintptr_t addr, int *prot)
{
	uint8_t *fl = wss_shadow_flags(addr);
	uint8_t f = fl ? wss_flags_load(addr, fl) : 0;
	if (prot)
		*prot = f & WSS_PF_PROT;
	return f & WSS_PF_TRACKED;
}

bool wss_engine_tracked_any(const void *p, size_t n)
{
	uintptr_t s = wss_page_down((uintptr_t)p), e = (uintptr_t)p + n;
	for (uintptr_t a = s; a < e && a >= s; a += WSS_PAGE_SIZE)
		if (wss_engine_tracked_page(a, NULL))
			return true;
	return false;
}

static void rearm_part(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	wss_arm_untouched(s, e);
}

static void disarm_part(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	E.backend->disarm(s, e);
}

/* Sampled: the members only (the other pages are not watched), or every
 * page under all writes. */
static void harvest_dense(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	wss_writes_harvest_sampled(s, e, E.epoch, wss_sampling_watched(), l, 0);
}

/* A sparse piece: its members only (the others were never protected). */
static void harvest_sparse(wss_sparse_part_t *p, void *arg)
{
	(void)arg;
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	wss_writes_harvest_sampled(p->s, p->e, E.epoch, l, l, 0);
}

static void harvest_part(uintptr_t s, uintptr_t e, void *arg) { wss_sparse_walk(s, e, harvest_dense, harvest_sparse, arg); }

/* Sampled: registered again, and the members alone watched (backend.h:
 * attach). */
static void observe_dense(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	uint32_t l = wss_sampling_watched();
	if (l == 0 || !E.backend->watch) {
		E.backend->observe(s, e);
		return;
	}
	E.backend->attach(s, e, false);
	wss_sampling_watch(s, e, l);
}

/* With faults (hybrid), a member is watched as it is opened: those open
 * now, touched in this interval, are watched again; the others are armed,
 * and watched at their next fault. */
static void watch_member(uintptr_t page, void *arg)
{
	(void)arg;
	wss_page_t *pg = wss_shadow_page(page);
	if (E.backend->fault && (!pg || (uint32_t)__atomic_load_n(&pg->cur, __ATOMIC_RELAXED) != E.epoch))
		return;
	E.backend->watch(page, page + WSS_PAGE_SIZE);
}

/* Registered again, and its watched members protected again: never the
 * whole piece (a terabyte's page-table markers). */
static void observe_sparse(wss_sparse_part_t *p, void *arg)
{
	(void)arg;
	if (E.backend->attach_sparse)
		E.backend->attach_sparse(p->s, p->e);
	if (E.backend->watch && p->watched != WSS_SPARSE_NONE)
		wss_sampling_members(p->s, p->e, p->watched, watch_member, NULL);
}

void wss_registry_observe(uintptr_t s, uintptr_t e) { wss_sparse_walk(s, e, observe_dense, observe_sparse, NULL); }

static void observe_part(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	wss_registry_observe(s, e);
}

void wss_registry_reset_page(uintptr_t a)
{
	wss_tick_fold_counts(a);
	uint64_t *w = wss_shadow_written(a);
	if (w && *w)
		*w = 0;
	uint32_t *ws = wss_shadow_wsplit(a);
	if (ws && *ws)
		*ws = 0;
	uint32_t *h = wss_shadow_hits(a), *st = wss_shadow_site(a);
	if (h && *h)
		*h = 0;
	if (st && *st)
		*st = 0;
	wss_page_t *p = wss_shadow_page(a);
	if (p && (__atomic_load_n(&p->cur, __ATOMIC_RELAXED) || __atomic_load_n(&p->prev, __ATOMIC_RELAXED))) {
		__atomic_store_n(&p->cur, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&p->prev, 0, __ATOMIC_RELAXED);
	}
}

/* arg: the kind of the range, for its total and the hot pages. */
static void reset_member(uintptr_t page, void *arg)
{
	int kind = *(const int *)arg;
	wss_tick_count_gone(page, kind);
	wss_findings_hot_gone(page, kind);
	wss_registry_reset_page(page);
}

/* A reservation this large (a terabyte heap, a sanitizer's shadow) would
 * cost state and page tables for every page, touched or not: it is
 * registered in O(1) and tracked through the members of the sample alone
 * (sampling.c, wss_sampling_attach_sparse).  Exact tracking has no sample
 * to go by, and the table has room for WSS_SPARSE_RANGES entries: past
 * that, left out and counted for the summary (docs/limits.md). */
static bool track_sparse(uintptr_t s, uintptr_t e, int prot, int kind)
{
	uint8_t bits = (uint8_t)((prot & WSS_PF_PROT) | WSS_PF_TRACKED |
				 (kind == WSS_KIND_FILE || kind == WSS_KIND_SHARED ? WSS_PF_FILE : 0));
	if (E.set.mode == WSS_TRACK_EXACT || wss_regions_reserve(&E.regions, 2) || wss_shadow_ensure_sparse(s, e))
		return false;
	/* The level first (its runs must fit the VMA budget, with the new
	 * range counted, and its members their page state), then the entry,
	 * then the members armed.  Not held to one interval's budget of
	 * first touches as a dense range is (wss_policy_before_attach): a
	 * reservation is mostly never touched, and its touches raise the
	 * level as they come (wss_policy_burst). */
	uint64_t pages = (uint64_t)(e - s) >> WSS_PAGE_SHIFT;
	/* The page trace's readers know the page design alone (their
	 * membership checks, keys and scaling: docs/trace-format.md): a
	 * traced session samples its sparse ranges page by page (span 0),
	 * as before clusters. */
	unsigned span = E.set.trace ? 0 : wss_sampling_span_for(pages);
	wss_policy_make_room(pages, span);
	if (wss_sparse_add(s, e, bits, span))
		return false;
	wss_census_register(s, e, kind);
	wss_regions_insert(&E.regions, s, e, kind);
	wss_sampling_attach_sparse(s, e);
	return true;
}

/* owner: a stack's thread (regions.h). */
static void track(uintptr_t start, size_t len, int prot, int kind, uint32_t owner)
{
	uintptr_t s = wss_page_down(start), e = wss_page_up(start + len);
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || s >= e || e > WSS_ADDR_LIMIT)
		return;
	/* A stack is seen by write-protection alone: a backend with no
	 * harvest cannot (the kernel's signal frames must never meet a
	 * PROT_NONE page), and a sparse range has no per-page flag to say so. */
	if (kind == WSS_KIND_STACK && (!E.backend->harvest || e - s > WSS_SPARSE_SAMPLED_BYTES))
		return;
	if (e - s > WSS_SPARSE_MIN_BYTES) {
		if (!track_sparse(s, e, prot, kind)) {
			E.huge_n++;
			E.huge_bytes += e - s;
		}
		return;
	}
	/* Sampled tracking takes a mapping over a gibibyte sparsely too, when
	 * the table has room: per-page state for it would cost the program
	 * seconds in its mmap (3 s and 64 MiB of page tables for 32 GiB)
	 * for pages it may never touch. */
	if (e - s > WSS_SPARSE_SAMPLED_BYTES && track_sparse(s, e, prot, kind))
		return;
	wss_policy_before_attach((uint64_t)(e - s) >> WSS_PAGE_SHIFT);
	if (wss_shadow_ensure(s, e) || wss_regions_insert_owned(&E.regions, s, e, kind, owner))
		return; /* out of memory for bookkeeping: leave it untracked */
	wss_census_register(s, e, kind);
	uint8_t bits = (uint8_t)((prot & WSS_PF_PROT) | WSS_PF_TRACKED | (kind == WSS_KIND_STACK ? WSS_PF_WPONLY : 0) |
				 (kind == WSS_KIND_FILE || kind == WSS_KIND_SHARED ? WSS_PF_FILE : 0));
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		wss_registry_reset_page(a);
		__atomic_store_n(fl, (uint8_t)(bits | (*fl & (WSS_PF_EVER | WSS_PF_WEVER))), __ATOMIC_RELEASE);
	}
	wss_sampling_attach(s, e);
}

void wss_engine_track_locked(uintptr_t start, size_t len, int prot, int kind) { track(start, len, prot, kind, 0); }

void wss_engine_track_stack_locked(uintptr_t start, size_t len, uint32_t owner)
{
	track(start, len, PROT_READ | PROT_WRITE, WSS_KIND_STACK, owner);
}

/* The page-rounded span of [start, start+len) in *s, *e; false when the
 * registry is off or no tracked region overlaps the span. */
static bool tracked_span(uintptr_t start, size_t len, uintptr_t *s, uintptr_t *e)
{
	*s = wss_page_down(start);
	*e = wss_page_up(start + len);
	if (!E.tracking || *s >= *e)
		return false;
	size_t i = wss_regions_lower_bound(&E.regions, *s);
	return i < E.regions.n && E.regions.v[i].start < *e;
}

/* arg: the kind of the range. */
static void untrack_dense(uintptr_t s, uintptr_t e, void *arg)
{
	int kind = *(const int *)arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (!fl || !(*fl & WSS_PF_TRACKED))
			continue;
		__atomic_and_fetch(fl, (uint8_t)(WSS_PF_EVER | WSS_PF_WEVER), __ATOMIC_RELEASE);
		wss_tick_count_gone(a, kind);
		wss_findings_hot_gone(a, kind);
		wss_registry_reset_page(a);
	}
}

/* Only the members of its finest level ever had state. */
static void untrack_sparse(wss_sparse_part_t *p, void *arg)
{
	if (p->fine != WSS_SPARSE_NONE)
		wss_sampling_members(p->s, p->e, p->fine, reset_member, arg);
}

/* A sparse range that cannot split for want of table room: its piece from
 * s on leaves tracking (given its protection back and unregistered), is
 * counted with the mappings left out, and [s, e) is then a suffix, which
 * the table can cut without a new slot. */
static void sparse_no_room(uintptr_t s, uintptr_t whole_e)
{
	E.backend->disarm(s, whole_e);
	if (E.backend->detach)
		E.backend->detach(s, whole_e);
	E.huge_n++;
	E.huge_bytes += whole_e - s;
	wss_census_count(s, whole_e); /* its pages stay; they leave the count */
	wss_engine_untrack_locked(s, whole_e - s);
}

void wss_engine_untrack_locked(uintptr_t start, size_t len)
{
	uintptr_t s, e;
	if (!tracked_span(start, len, &s, &e))
		return;
	/* Counted before any flag is cleared: a handler that finds its page
	 * untracked runs the access again (fault.c, data_retry). */
	__atomic_add_fetch(&E.released, 1, __ATOMIC_RELEASE);
	/* Range by range for their kinds (pages outside every range are not
	 * tracked), then out of the registry. */
	for (size_t i = wss_regions_lower_bound(&E.regions, s); i < E.regions.n && E.regions.v[i].start < e; i++) {
		int kind = E.regions.v[i].kind;
		uintptr_t rs = E.regions.v[i].start > s ? E.regions.v[i].start : s;
		uintptr_t re = E.regions.v[i].end < e ? E.regions.v[i].end : e;
		wss_sparse_walk(rs, re, untrack_dense, untrack_sparse, &kind);
	}
	wss_regions_remove(&E.regions, s, e);
	wss_census_dropped(s, e);
	if (E.set.trace)
		wss_trace_gone(s, e);
	uintptr_t whole[2];
	/* [s, e) inside one entry, and no slot for its right piece. */
	while (wss_sparse_any() && wss_sparse_cut(s, e, whole))
		sparse_no_room(e, whole[1]);
}

struct kind_part {
	uintptr_t s[64], e[64];
	int n;
};

void wss_engine_untrack_kind_locked(uintptr_t start, size_t len, int kind)
{
	uintptr_t s, e;
	if (!tracked_span(start, len, &s, &e))
		return;
	/* Collect first: untracking edits the registry being walked. */
	for (;;) {
		struct kind_part k = {.n = 0};
		size_t i = wss_regions_lower_bound(&E.regions, s);
		for (; i < E.regions.n && E.regions.v[i].start < e && k.n < 64; i++)
			if (E.regions.v[i].kind == kind) {
				k.s[k.n] = E.regions.v[i].start > s ? E.regions.v[i].start : s;
				k.e[k.n] = E.regions.v[i].end < e ? E.regions.v[i].end : e;
				k.n++;
			}
		for (int j = 0; j < k.n; j++)
			wss_engine_untrack_locked(k.s[j], k.e[j] - k.s[j]);
		if (k.n < 64)
			return;
	}
}

static void set_prot_dense(uintptr_t s, uintptr_t e, void *arg)
{
	int prot = *(int *)arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		uint8_t old = __atomic_load_n(fl, __ATOMIC_RELAXED), nw;
		do
			nw = (uint8_t)((old & ~WSS_PF_PROT) | (prot & WSS_PF_PROT));
		while (!__atomic_compare_exchange_n(fl, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	}
}

/* Dense pages one by one; sparse pieces are one entry each, changed after
 * (wss_engine_protect_locked). */
static void set_prot_part(uintptr_t s, uintptr_t e, void *arg) { wss_sparse_walk(s, e, set_prot_dense, NULL, arg); }

void wss_engine_protect_locked(uintptr_t start, size_t len, int prot)
{
	uintptr_t s, e;
	if (!tracked_span(start, len, &s, &e))
		return;
	if (prot & PROT_EXEC) {
		/* Code is not data: stop tracking it (its pages counted first:
		 * untracking counts none, as it may follow an unmapping). */
		wss_census_count(s, e);
		wss_engine_untrack_locked(s, e - s);
		return;
	}
	wss_registry_parts(s, e, set_prot_part, &prot);
	uintptr_t whole[2];
	/* No slot for an entry's pieces: from s on, it leaves tracking. */
	while (wss_sparse_any() && wss_sparse_protect(s, e, prot, whole))
		sparse_no_room(s > whole[0] ? s : whole[0], whole[1]);
	/* Once more, now that the flags say so: a fault handler that restored
	 * the old protection after the application's call re-reads the flags
	 * after its own mprotect and follows (track_mprotect.c); this covers
	 * the one that re-read them just before we changed them. */
	wss_sys_mprotect((void *)s, e - s, prot);
	/* The application's call opened pages we had armed: arm again those
	 * not yet touched in this interval, so their next touch still counts. */
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && (prot & (PROT_READ | PROT_WRITE))) {
		wss_arm_begin();
		wss_registry_parts(s, e, rearm_part, NULL);
		wss_arm_end();
	}
}

static void disarm_parts(uintptr_t start, size_t len)
{
	if (E.tracking)
		wss_registry_parts(wss_page_down(start), wss_page_up(start + len), disarm_part, NULL);
}

/* Before a mremap: the range stays tracked if the call fails, with its
 * members open and in no touched list. */
void wss_engine_disarm_locked(uintptr_t start, size_t len)
{
	disarm_parts(start, len);
	wss_fault_list_stale();
}

static void detach_part(uintptr_t s, uintptr_t e, void *arg)
{
	if (E.backend->detach)
		E.backend->detach(s, e);
}

/* Its pages leave tracking: the tick skips them in the touched lists. */
void wss_engine_exclude_locked(uintptr_t start, size_t len)
{
	if (E.tracking)
		wss_census_count(wss_page_down(start), wss_page_up(start + len));
	disarm_parts(start, len);
	if (E.tracking)
		wss_registry_parts(wss_page_down(start), wss_page_up(start + len), detach_part, NULL);
	wss_engine_untrack_locked(start, len);
}

static void sparse_seen(wss_sparse_part_t *p, void *arg)
{
	(void)p;
	*(bool *)arg = true;
}

void wss_engine_move_locked(uintptr_t old, size_t oldlen, uintptr_t nw, size_t newlen)
{
	if (!E.tracking)
		return;
	oldlen = wss_page_up(oldlen);
	newlen = wss_page_up(newlen);
	uint8_t *fl = wss_shadow_flags(old);
	uint8_t f = fl ? wss_flags_load(old, fl) : 0;
	if (!(f & WSS_PF_TRACKED)) {
		wss_engine_untrack_locked(nw, newlen);
		return;
	}
	size_t ri = wss_regions_lower_bound(&E.regions, old);
	int prot = f & WSS_PF_PROT;
	int kind = ri < E.regions.n && E.regions.v[ri].start <= old ? E.regions.v[ri].kind : WSS_KIND_ANON;
	if (nw == old) {
		if (newlen > oldlen)
			wss_engine_track_locked(old + oldlen, newlen - oldlen, prot, kind);
		else
			wss_engine_untrack_locked(old + newlen, oldlen - newlen);
		return;
	}
	wss_engine_untrack_locked(nw, newlen);
	wss_engine_track_locked(nw, newlen, prot, kind);
	/* The history follows the data: a page touched in this interval
	 * says so at its new address, where no touched list holds it (the
	 * program's mprotect would then leave it open). */
	wss_fault_list_stale();
	/* Not to or from a sparse range: its state is its members', and the
	 * members of the new addresses are other pages.  What was touched
	 * there in this interval before the move goes uncounted. */
	bool sparse = false;
	wss_sparse_parts(old, old + oldlen, sparse_seen, &sparse);
	wss_sparse_parts(nw, nw + newlen, sparse_seen, &sparse);
	/* Nor in a sampled window, for the same reason: carried to the new
	 * addresses, a member's state would land on pages that are no
	 * members and a non-member's (none) on members, and the totals would
	 * lose most of the pages moved.  The pages count as gone from the
	 * old addresses, as an munmap's do, and start afresh at the new
	 * ones. */
	bool sampled = wss_sampling_window_level(E.epoch, E.set.window_intervals) != 0;
	size_t n = sparse || sampled ? 0 : (oldlen < newlen ? oldlen : newlen) >> WSS_PAGE_SHIFT;
	if (E.set.trace && n)
		wss_trace_moved(old, nw, n);
	for (size_t i = 0; i < n; i++) {
		uintptr_t a = old + (i << WSS_PAGE_SHIFT), b = nw + (i << WSS_PAGE_SHIFT);
		wss_page_t *pa = wss_shadow_page(a), *pb = wss_shadow_page(b);
		uint8_t *fa = wss_shadow_flags(a), *fb = wss_shadow_flags(b);
		if (!pa || !pb)
			continue;
		uint64_t lo, hi;
		wss_page_load(pa, &lo, &hi);
		__atomic_store_n(&pb->cur, lo, __ATOMIC_RELAXED);
		__atomic_store_n(&pb->prev, hi, __ATOMIC_RELAXED);
		/* Moved, not gone: the untrack below must not count the old
		 * address's touch in the run's totals (wss_tick_count_gone). */
		__atomic_store_n(&pa->cur, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&pa->prev, 0, __ATOMIC_RELAXED);
		*wss_shadow_written(b) = *wss_shadow_written(a);
		*wss_shadow_written(a) = 0; /* nor its writes (count_gone_window) */
		*wss_shadow_wsplit(b) = *wss_shadow_wsplit(a);
		/* The hits move too: the old address is not a page unmapped
		 * with its hits (wss_findings_hot_gone). */
		*wss_shadow_hits(b) = *wss_shadow_hits(a);
		*wss_shadow_hits(a) = 0;
		*wss_shadow_site(b) = *wss_shadow_site(a);
		double *ca = wss_shadow_counts(a), *cb = wss_shadow_counts(b);
		cb[0] = ca[0];
		cb[1] = ca[1];
		ca[0] = ca[1] = 0;
		if (*fa & (WSS_PF_EVER | WSS_PF_WEVER))
			__atomic_fetch_or(fb, *fa & (WSS_PF_EVER | WSS_PF_WEVER), __ATOMIC_RELAXED);
		*wss_shadow_rever(b) |= *wss_shadow_rever(a);
	}
	wss_engine_untrack_locked(old, oldlen);
}

void wss_registry_harvest_before_unmap(uintptr_t start, size_t len)
{
	uintptr_t s, e;
	if (tracked_span(start, len, &s, &e))
		wss_census_count(s, e);
	if (!E.backend->harvest || (!E.all_writes && __atomic_load_n(&E.level, __ATOMIC_RELAXED)) ||
	    !tracked_span(start, len, &s, &e))
		return;
	E.harvester = wss_sys_gettid();
	wss_registry_parts(s, e, harvest_part, NULL);
}

/* Advice after which a page may be present without a touch (census.c). */
static const char *populates(int adv)
{
	switch (adv) {
	case MADV_HUGEPAGE:
		return "ended (MADV_HUGEPAGE: a fault may make 512 pages present)";
	case WSS_MADV_POPULATE_READ:
	case WSS_MADV_POPULATE_WRITE:
		return "ended (MADV_POPULATE_*: pages present without a touch)";
	case WSS_MADV_COLLAPSE:
		return "ended (MADV_COLLAPSE: pages present without a touch)";
	}
	return NULL;
}

/* Advice that leaves every page where it was: nothing for the census to
 * count before it.  Any other may take pages away (MADV_DONTNEED, FREE,
 * REMOVE, PAGEOUT, GUARD_INSTALL, advice newer than this list). */
static bool keeps_pages(int adv)
{
	switch (adv) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
	case MADV_DONTFORK:
	case MADV_DOFORK:
	case MADV_MERGEABLE:
	case MADV_UNMERGEABLE:
	case MADV_NOHUGEPAGE:
	case MADV_DONTDUMP:
	case MADV_DODUMP:
	case WSS_MADV_WIPEONFORK:
	case WSS_MADV_KEEPONFORK:
	case WSS_MADV_COLD:
	case WSS_MADV_GUARD_REMOVE:
		return true;
	}
	return false;
}

/* Advice after which the range's pages are gone: a page present there
 * later was touched after. */
static bool drops_pages(int adv)
{
	return adv == MADV_DONTNEED || adv == WSS_MADV_DONTNEED_LOCKED || adv == MADV_REMOVE ||
	       adv == WSS_MADV_GUARD_INSTALL;
}

long wss_engine_discard(uintptr_t start, size_t len, int adv)
{
	uintptr_t s, e;
	wss_lockstate_t ls;
	bool dontneed = adv == MADV_DONTNEED || adv == WSS_MADV_DONTNEED_LOCKED;
	bool harvest = dontneed && E.backend && E.backend->harvest;
	bool census = __atomic_load_n(&E.census, __ATOMIC_RELAXED) && (populates(adv) || !keeps_pages(adv));
	if ((!harvest && !census) || !__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE))
		return wss_sys_madvise((void *)start, len, adv);
	wss_engine_lock(&ls);
	/* Wherever it is given: jemalloc asks for huge pages on an extent
	 * before the extent is registered (opt.thp), and the range is ours
	 * from then on. */
	if (populates(adv))
		wss_census_stop(populates(adv));
	if (!tracked_span(start, len, &s, &e) || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED)) {
		wss_engine_unlock(&ls);
		return wss_sys_madvise((void *)start, len, adv);
	}
	/* The pages present go with the advice: counted first. */
	wss_census_count(s, e);
	if (harvest) {
		E.harvester = wss_sys_gettid();
		wss_registry_parts(s, e, harvest_part, NULL);
	}
	long r = wss_sys_madvise((void *)start, len, adv);
	if (r == 0 && drops_pages(adv))
		wss_census_dropped(s, e);
	if (harvest)
		wss_registry_parts(s, e, observe_part, NULL);
	wss_engine_unlock(&ls);
	return r;
}

void wss_engine_populating(const char *why)
{
	if (!__atomic_load_n(&E.census, __ATOMIC_RELAXED))
		return;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_census_stop(why);
	wss_engine_unlock(&ls);
}

bool wss_engine_relieve_locked(void)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || __atomic_load_n(&E.vma_delta, __ATOMIC_RELAXED) <= 0)
		return false;
	for (size_t i = 0; i < E.regions.n; i++)
		E.backend->disarm(E.regions.v[i].start, E.regions.v[i].end);
	/* The code's opened pages split VMAs too: open it all (the rest of
	 * the interval's code runs unseen: a lower bound). */
	wss_code_relieve_locked();
	__atomic_store_n(&E.vma_delta, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&E.coarse, 1, __ATOMIC_RELAXED);
	wss_fault_list_stale(); /* everything open: the next tick arms every member */
	return true;
}
