/* The tick: the end of one interval.  Under the engine lock it moves the
 * epoch (fault.c's protocol), arms every tracked range again, harvests the
 * write bits, counts the sample from the page states (pagestate.h explains
 * why a two-deep history makes that exact) and writes it with its threads. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>

static void (*on_tick)(void);
static void (*tick_around)(void (*tick)(void));

void wss_engine_on_tick(void (*fn)(void)) { on_tick = fn; }
void wss_engine_tick_around(void (*around)(void (*tick)(void))) { tick_around = around; }

static int64_t thread_cpu_ns(int tid)
{
	/* The kernel's CPU-clock id for a thread: see CPUCLOCK_* in the
	 * kernel's posix-timers.h (per-thread, scheduler clock). */
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
	struct timespec ts;
	if (tid <= 0 || clock_gettime(id, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void wss_tick_locked(bool final)
{
	if (on_tick)
		on_tick();
	uint32_t k = E.epoch;
	uint32_t w = E.set.window_intervals;
	__atomic_store_n(&E.epoch, k + 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&E.inflight[k & 1], __ATOMIC_SEQ_CST))
		wss_sys_sched_yield();

	uint64_t unarmed = 0;
	/* The write window opens before the arming: a fault on a page armed
	 * now must see it (writes.c). */
	bool window = !final && E.backend->harvest && E.backend->fault;
	if (E.backend->harvest)
		E.harvester = wss_sys_gettid();
	if (window)
		wss_writes_window_open(k);
	if (!final) {
		wss_arm_begin();
		for (size_t i = 0; i < E.regions.n; i++)
			if (wss_arm_unpinned(E.regions.v[i].start, E.regions.v[i].end))
				unarmed++;
		/* Pinned buffers stay open: the kernel may touch them at any time
		 * during the call, so they count as touched in the new interval. */
		wss_pins_record_pinned(k + 1);
		__atomic_store_n(&E.vma_delta, 0, __ATOMIC_RELAXED);
		wss_arm_end();
		if (E.set.test.harvest_delay_ns) {
			struct timespec ts = {(time_t)(E.set.test.harvest_delay_ns / 1000000000ULL),
					      (long)(E.set.test.harvest_delay_ns % 1000000000ULL)};
			while (wss_sys2(SYS_nanosleep, &ts, &ts) == -EINTR)
				;
		}
	}

	/* The working set: pages touched in the window, each owned by its
	 * latest toucher; of those, the ones written in the window (a page's
	 * write is harvested into the interval it was made in, so written
	 * pages are a subset of touched ones, up to a write racing the tick),
	 * counted against the same owner. */
	wss_profile_sets_t sets = {.writes = E.backend->harvest != NULL,
				   .reads = E.backend->harvest != NULL && E.backend->fault != NULL};
	if (E.backend->harvest) {
		/* Writes since the last harvest, after the arming: a write made
		 * between the harvest and the arming would reach the next tick
		 * away from its touch; writes made after the arming are told
		 * apart by the write window. */
		for (size_t i = 0; i < E.regions.n; i++)
			if (wss_writes_harvest(E.regions.v[i].start, E.regions.v[i].end, k)) {
				/* Part of it was not observed (remapped behind our
				 * back): observe all of it again from now on. */
				E.backend->observe(E.regions.v[i].start, E.regions.v[i].end);
				unarmed++;
			}
	}
	if (window)
		wss_writes_window_close();
	uint32_t nt = wss_threads_count();
	for (uint32_t s = 0; s <= nt; s++)
		wss_threads_get(s)->window_pages = wss_threads_get(s)->window_writes = 0;
	uint64_t pages = 0, writes = 0;
	bool hot = E.set.hot_pages > 0;
	for (size_t i = 0; i < E.regions.n; i++) {
		for (uintptr_t a = E.regions.v[i].start; a < E.regions.v[i].end; a += WSS_PAGE_SIZE) {
			uint32_t owner;
			wss_page_t *pg = wss_shadow_page(a);
			if (!wss_page_in_window(pg, k, w, &owner))
				continue;
			if (hot && wss_page_touched_in(pg, k))
				(*wss_shadow_hits(a))++;
			pages++;
			bool wrote = false;
			if (sets.writes) {
				wrote = wss_written_in(*wss_shadow_written(a), k, w);
				writes += wrote;
				uint8_t *rv;
				if (!wrote && sets.reads && !*(rv = wss_shadow_rever(a))) {
					*rv = 1;
					E.total_read++;
				}
			}
			if (owner <= nt) {
				wss_threads_get(owner)->window_pages++;
				wss_threads_get(owner)->window_writes += wrote;
			}
		}
	}

	uint64_t now = wss_clock_ns(CLOCK_MONOTONIC);
	uint64_t coarse = __atomic_exchange_n(&E.coarse, 0, __ATOMIC_RELAXED);
	wss_profile_sample_t smp = {
		.seq = k,
		.t_ns = now - E.t0_ns,
		.cpu_ns = wss_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - E.cpu0_ns,
		.data_pages = pages,
		.write_pages = writes,
		.sets = sets,
		.coarse = coarse,
		.unarmed = unarmed,
		.final = final,
	};
	/* Every handler of k is done (inflight above), the harvest has
	 * counted its touches, and none of k+2 can start before the next
	 * tick: [k & 1] holds exactly k's faults. */
	uint64_t faults = 0;
	for (uint32_t s = 0; s <= nt; s++) {
		wss_thread_t *t = wss_threads_get(s);
		t->faults_k = __atomic_exchange_n(&t->faults[k & 1], 0, __ATOMIC_RELAXED);
		faults += t->faults_k;
	}
	smp.faults = faults;
	wss_profile_sample_begin(&E.out, &smp);
	bool first = true;
	for (uint32_t s = 0; s <= nt; s++) {
		wss_thread_t *t = wss_threads_get(s);
		if (t->window_pages || t->faults_k) {
			int tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
			wss_profile_thread_t th = {.tid = tid,
						   .data_pages = t->window_pages,
						   .write_pages = t->window_writes,
						   .faults = t->faults_k,
						   .cpu_ns = thread_cpu_ns(tid)};
			wss_profile_sample_thread(&E.out, first, &smp, &th);
			first = false;
		}
	}
	wss_profile_sample_end(&E.out);
	wss_out_write();
	if (!E.cut_err)
		E.samples_out = k;
	if (E.peaks)
		wss_findings_peaks(k, pages, writes, sets, nt);

	E.nsamples++;
	E.sum_pages += pages;
	if (pages > E.peak_pages)
		E.peak_pages = pages;
	E.sum_write += writes;
	if (writes > E.peak_write)
		E.peak_write = writes;
	E.sum_read += pages - writes;
	if (pages - writes > E.peak_read)
		E.peak_read = pages - writes;
	E.faults_total += faults;
	E.coarse_total += coarse;
}


/* One tick of the clock, unless measuring stopped or the engine thread was
 * asked to stop meanwhile. */
static void tick_now(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && !__atomic_load_n(&E.stop, __ATOMIC_RELAXED))
		wss_tick_locked(false);
	wss_engine_unlock(&ls);
}

void wss_tick_around(void (*fn)(void))
{
	if (tick_around)
		tick_around(fn);
	else
		fn();
}

void wss_tick_clock(void) { wss_tick_around(tick_now); }

void wss_engine_tick_manual(void)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) || E.set.time_base != WSS_ENGINE_MANUAL)
		return;
	wss_tick_clock();
}
