/* The write window: under backends with faults and a harvest (hybrid),
 * every harvested write is charged to the interval it was made in, whatever
 * the timing between the tick's arming and its harvest.  The reasoning is
 * the comment below; docs/backends.md ("hybrid") tells it for users. */
#include "config.h"
#include "engine/internal.h"

/* ---- the write window (backends with faults and a harvest: hybrid) ------
 * A page's write bit says that it was written since the last harvest, not
 * when.  The tick for k moves the epoch to k+1, arms every page, then
 * harvests; a page touched in k and written there may fault again in k+1
 * before the harvest reaches it, and its bit then holds k's writes and,
 * once the handler has opened the page, k+1's too.  So from the epoch move
 * to the end of the harvest (the window, wwin = k+1), a fault of k+1 on a
 * page last touched in k takes the page's write bit itself before the
 * page is opened (wss_engine_split_write), charges it to k, and marks the
 * page (wsplit = k+1): whatever the harvest finds on a marked page was
 * written after the fault, in k+1.  The fault's take and mark and the
 * harvest of a range (its scan and the reading of the marks) hold wlock,
 * so a harvest sees a page either before its fault took the bit (unmarked:
 * every write it finds came before the fault, while the page was open in
 * k) or after (marked).  Only one fault per page takes the bit (the mark
 * is checked under the lock), and it does so before its own unprotect, so
 * no thread can write the page between the take and the mark.  Writers of
 * the written history are serialised: the tick (engine lock) and, inside
 * the window only, faults under wlock; the window is closed under wlock
 * before the tick counts sample k. */

static void wlock_take(int tid)
{
	int z = 0;
	while (!__atomic_compare_exchange_n(&E.wlock, &z, tid, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		z = 0;
		wss_sys_sched_yield();
	}
	wss_witness_take(WSS_RANK_WINDOW);
}

static void wlock_give(void)
{
	wss_witness_give(WSS_RANK_WINDOW);
	__atomic_store_n(&E.wlock, 0, __ATOMIC_RELEASE);
}

void wss_engine_split_write(uintptr_t page, bool (*take)(uintptr_t page))
{
	uint32_t win = __atomic_load_n(&E.wwin, __ATOMIC_SEQ_CST);
	if (!win)
		return;
	wss_page_t *p = wss_shadow_page(page);
	uint8_t *fl = wss_shadow_flags(page);
	/* Under all writes in the interval that ended, a page outside its
	 * armed sample (alone, watched for writes only) has no touch to tell
	 * by, and its bit may hold a write of that interval: taken likewise
	 * (set before the window opened, writes.c's open). */
	uint32_t al = __atomic_load_n(&E.wwin_alone, __ATOMIC_RELAXED);
	bool alone = al && !wss_sampling_member(page, al);
	if (!p || !fl || !(wss_flags_load(page, fl) & WSS_PF_TRACKED) ||
	    (!alone && (uint32_t)__atomic_load_n(&p->cur, __ATOMIC_ACQUIRE) != win - 1))
		return;
	int tid = wss_sys_gettid();
	if (__atomic_load_n(&E.wlock, __ATOMIC_RELAXED) == tid)
		return; /* the tick's own thread, inside its harvest */
	wlock_take(tid);
	uint32_t *mark = wss_shadow_wsplit(page);
	if (__atomic_load_n(&E.wwin, __ATOMIC_RELAXED) == win && *mark != win) {
		if (take(page)) {
			wss_written_set(wss_shadow_written(page), win - 1);
			/* Ever written, for the run's total, as a harvest counts
			 * it (a write charged here alone was in a sample's
			 * write_pages and never in the total: total 17, peak
			 * 18).  Atomic: the tick counts outside this lock. */
			if (!(__atomic_fetch_or(fl, WSS_PF_WEVER, __ATOMIC_RELAXED) & WSS_PF_WEVER))
				__atomic_add_fetch(&E.total_write, 1, __ATOMIC_RELAXED);
		}
		*mark = win;
	}
	wlock_give();
}

void wss_writes_window_open(uint32_t k, uint32_t alone)
{
	__atomic_store_n(&E.wwin_alone, alone, __ATOMIC_RELAXED);
	__atomic_store_n(&E.wwin, k + 1, __ATOMIC_SEQ_CST);
}

/* Closed under wlock: a fault that took the lock inside the window
 * finishes its take and mark before the tick counts the sample. */
void wss_writes_window_close(void)
{
	wlock_take(E.harvester);
	__atomic_store_n(&E.wwin, 0, __ATOMIC_RELAXED);
	wlock_give();
}

/* Harvested writes: each tracked page of [s, e) was written since the last
 * harvest.  r->e is the interval the harvest closes (the tick for k runs it
 * after moving the epoch to k+1 and arming; wss_engine_discard mid-interval,
 * with the current one).  A backend without faults (uffd-wp) sees nothing
 * else, so the write is its touch too, by no known thread (slot 0).  With
 * faults (hybrid): a page marked by a fault of the window was written after
 * that fault, in r->e + 1; otherwise in r->e when the page was touched
 * there; otherwise in r->e + 1 when touched there (a pinned buffer the
 * kernel wrote); a page written with neither touch was written where the
 * fault path does not look (a coarse block), and counting it would make
 * writes exceed touches.  Engine lock and wlock held. */
static void harvested(uintptr_t s, uintptr_t e, void *arg)
{
	wss_record_arg_t *r = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		uint8_t f = fl ? wss_flags_load(a, fl) : 0;
		if (!(f & WSS_PF_TRACKED))
			continue;
		if (r->level && !wss_sampling_member(a, r->level))
			continue; /* outside the sample: its bit is stale */
		uint32_t when = r->e;
		/* All writes (sampling.c): a page outside the armed sample was
		 * write-protected alone, so its write is the only sign of it,
		 * and no touch of its is recorded (the members' touches are
		 * the sample; its write counts in the exact write count).  It
		 * was written before this harvest reached it: for it, the
		 * harvest is where e ends, a tick's length at most from the
		 * epoch move, and every write falls in exactly one interval.
		 * A page alone in e that the tick armed for e + 1 (a finer
		 * sample) and that faulted in the window had its bit of e
		 * taken by that fault (wss_engine_split_write): what is found
		 * now was written after it, in e + 1. */
		bool alone = r->armed && !wss_sampling_member(a, r->armed);
		if (alone && E.backend->fault) {
			if (*wss_shadow_wsplit(a) == r->e + 1)
				when = r->e + 1;
		} else if (E.backend->fault && !(f & WSS_PF_WPONLY)) {
			wss_page_t *p = wss_shadow_page(a);
			if (*wss_shadow_wsplit(a) == r->e + 1)
				when = r->e + 1;
			else if (wss_page_touched_in(p, r->e))
				when = r->e;
			else if ((uint32_t)__atomic_load_n(&p->cur, __ATOMIC_RELAXED) == r->e + 1)
				when = r->e + 1;
			/* Armed throughout e and untouched, so not written in e;
			 * the tick ending e opened it, alone in e + 1 under all
			 * writes (a coarser sample): written since, in e + 1. */
			else if (r->e + 1 == E.epoch && E.all_writes && !wss_sampling_member(a, E.level))
				when = r->e + 1;
			else
				continue;
		} else {
			/* A fault of the budget's (its cost is the probe's) only
			 * where the backend has no other: under hybrid a
			 * stack's write is resolved by the kernel, a fraction of
			 * a protection fault's cost, and the tick's harvest of
			 * it is in the tick's. */
			wss_fault_record(a, fl, r->e, r->slot, !E.backend->fault);
		}
		wss_written_set(wss_shadow_written(a), when);
		if (!(__atomic_fetch_or(fl, WSS_PF_WEVER, __ATOMIC_RELAXED) & WSS_PF_WEVER))
			__atomic_add_fetch(&E.total_write, 1, __ATOMIC_RELAXED);
	}
}

typedef struct member_harvest {
	wss_record_arg_t r;
	int err;
} member_harvest_t;

/* One member (or a cluster: one run of members) under wlock: a fault of
 * the window waits for one scan at most, and the window's reasoning is
 * per page. */
static void harvest_run(uintptr_t s, uintptr_t e, void *arg)
{
	member_harvest_t *m = arg;
	wlock_take(E.harvester);
	int err = E.backend->harvest(s, e, harvested, &m->r);
	wlock_give();
	if (err && !m->err)
		m->err = err;
}

static void harvest_member(uintptr_t page, void *arg) { harvest_run(page, page + WSS_PAGE_SIZE, arg); }

/* Could a harvest find a write of member a's that counts?  With faults
 * (hybrid) a write counts only on a page touched in e or since (harvested,
 * above); an armed member untouched since is unopened, so unwritten. */
static bool may_count(uintptr_t a, uint32_t e)
{
	wss_page_t *p = wss_shadow_page(a);
	return wss_page_touched_in(p, e) || (uint32_t)__atomic_load_n(&p->cur, __ATOMIC_RELAXED) == e + 1 ||
	       *wss_shadow_wsplit(a) == e + 1;
}

/* A sparse range's cluster under hybrid: its pages that may count, run by
 * run.  Scanning the others would only write-protect holes (a marker and
 * a page table for each block of them: 32 MiB and 60 ms for a terabyte's
 * clusters at one tick), which no write of theirs can need: an armed
 * member is written only after the fault that opens it, and the fault
 * write-protects it first. */
static void harvest_cluster(uintptr_t s, uintptr_t e, void *arg)
{
	member_harvest_t *m = arg;
	if (!E.backend->fault || e - s == WSS_PAGE_SIZE || !wss_sparse_any() || !wss_sparse_find(s, NULL, NULL)) {
		harvest_run(s, e, arg);
		return;
	}
	uintptr_t run = 0;
	for (uintptr_t a = s; a <= e; a += WSS_PAGE_SIZE) {
		bool in = a < e && may_count(a, m->r.e);
		if (in && !run)
			run = a;
		else if (!in && run) {
			harvest_run(run, a, arg);
			run = 0;
		}
	}
}

int wss_writes_harvest_sampled(uintptr_t s, uintptr_t e, uint32_t k, uint32_t watched, uint32_t armed, uint32_t slot)
{
	if (!watched)
		return wss_writes_harvest(s, e, k, 0, armed, slot);
	member_harvest_t m = {{k, slot, watched, armed}, 0};
	wss_sampling_member_runs(s, e, watched, harvest_cluster, &m);
	return m.err;
}

/* A listed page's harvest, as harvest_member's; a page whose harvest
 * failed (its range remapped behind our back) has the whole range
 * observed again, as the full walk does. */
uint64_t wss_writes_harvest_listed(const uintptr_t *v, uint32_t n, uint32_t k, uint32_t level)
{
	uint64_t bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!wss_sampling_armable(v[i], level))
			continue;
		member_harvest_t m = {{k, 0, level, level}, 0};
		harvest_member(v[i], &m);
		if (!m.err)
			continue;
		size_t j = wss_regions_lower_bound(&E.regions, v[i]);
		if (j < E.regions.n && E.regions.v[j].start <= v[i]) {
			wss_registry_observe(E.regions.v[j].start, E.regions.v[j].end);
			bad++;
		}
	}
	return bad;
}

void wss_writes_record(uintptr_t s, uintptr_t e, uint32_t k, uint32_t slot)
{
	wss_record_arg_t r = {k, slot, __atomic_load_n(&E.level, __ATOMIC_RELAXED), 0};
	wlock_take(E.harvester);
	harvested(s, e, &r);
	wlock_give();
}

/* Harvest [s, e) into interval k under wlock.  Returns the backend's
 * result.  Engine lock held. */
int wss_writes_harvest(uintptr_t s, uintptr_t e, uint32_t k, uint32_t watched, uint32_t armed, uint32_t slot)
{
	wss_record_arg_t r = {k, slot, watched, armed};
	wlock_take(E.harvester);
	int err = E.backend->harvest(s, e, harvested, &r);
	wlock_give();
	return err;
}
