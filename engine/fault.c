/* The fault path: what a backend's handler calls on a first touch, and the
 * interval clock's side of it.  Everything here is AS-safe, lock-free and
 * allocation-free.
 *
 * The interval clock.  `epoch` is the current interval (1, 2, ...).  A tick
 * ending interval k does, under the lock:
 *   1. epoch = k+1                          (seq_cst store)
 *   2. wait until inflight[k&1] == 0        (every handler that read k is done)
 *   3. arm every tracked range (backend)    (new interval starts per page here)
 *   4. scan the page states: sample k       (pagestate.h explains why the
 *                                            two-deep history makes this exact)
 * A handler, after unprotecting its page, registers in inflight[e&1] for the
 * epoch e it reads and re-reads the epoch (seq_cst): if it changed, it backs
 * out and retries.  By the store/load ordering (Dekker), either the tick's
 * step 2 sees the handler's increment, or the handler sees k+1.  So after
 * step 2 no handler records k any more, and no handler can hold k+2 before
 * the next tick.  The handler runs with all signals blocked (preload), so it
 * always completes and step 2 cannot wait forever. */
#include "config.h"
#include "engine/internal.h"

#include <ucontext.h>

#include "engine/sites.h"

uint32_t wss_engine_epoch(void) { return __atomic_load_n(&E.epoch, __ATOMIC_RELAXED); }

bool wss_engine_vma_charge(long delta)
{
	if (delta <= 0) {
		__atomic_add_fetch(&E.vma_delta, delta, __ATOMIC_RELAXED);
		return true;
	}
	if (__atomic_add_fetch(&E.vma_delta, delta, __ATOMIC_RELAXED) <= E.vma_budget)
		return true;
	__atomic_sub_fetch(&E.vma_delta, delta, __ATOMIC_RELAXED);
	return false;
}

void wss_engine_count_coarse(void) { __atomic_add_fetch(&E.coarse, 1, __ATOMIC_RELAXED); }

__thread bool wss_fault_engine_thread __attribute__((tls_model("initial-exec")));

uint32_t wss_fault_enter(void)
{
	for (;;) {
		uint32_t e = __atomic_load_n(&E.epoch, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&E.inflight[e & 1], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&E.epoch, __ATOMIC_SEQ_CST) == e)
			return e;
		__atomic_sub_fetch(&E.inflight[e & 1], 1, __ATOMIC_SEQ_CST);
	}
}

void wss_fault_exit(uint32_t e) { __atomic_sub_fetch(&E.inflight[e & 1], 1, __ATOMIC_RELEASE); }

bool wss_fault_record(uintptr_t page, uint8_t *fl, uint32_t e, uint32_t slot, bool fault)
{
	wss_thread_t *t = wss_threads_get(slot);
	wss_page_t *p = wss_shadow_page(page);
	bool first = p && wss_page_record(p, e, slot);
	if (first && fault)
		__atomic_add_fetch(&t->faults[e & 1], 1, __ATOMIC_RELAXED);
	if (!(__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_EVER) &&
	    !(__atomic_fetch_or(fl, WSS_PF_EVER, __ATOMIC_RELAXED) & WSS_PF_EVER))
		__atomic_add_fetch(&t->new_pages, 1, __ATOMIC_RELAXED);
	return first;
}

void wss_engine_touched(uintptr_t page, uint8_t *fl, const void *uc)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return; /* finished or forked: the page is open again, that is all */
	if (page == E.probe)
		return; /* the tick timing a touch (sampling.c): no one's */
	uint32_t e = wss_fault_enter();
	/* A forked child before its start: the page is open, nothing is
	 * recorded (child_start_locked waits for us before arming). */
	if (__atomic_load_n(&E.pending, __ATOMIC_SEQ_CST)) {
		wss_fault_exit(e);
		return;
	}
	/* The engine's own touches (see engine_main) count for no thread. */
	bool first = wss_fault_record(page, fl, e, wss_fault_engine_thread ? 0 : wss_threads_self(), true);
	int site = -1;
	bool fresh = false;
	/* A touch by the stack unwinder inside our handler (sites.c) or by
	 * the engine thread has no site of its own, and captures nothing. */
	if (first && uc && E.sites && !wss_sites_unwinding && !wss_fault_engine_thread)
		site = wss_sites_touch((uint64_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP], e, &fresh);
	wss_fault_exit(e);
	/* A new site's call stack, outside the in-flight section, which a
	 * tick waits for: a capture takes long (libunwind's mutexes, nested
	 * faults), and a tick's sync of the unwind tables waits for it
	 * (modtab.c). */
	if (fresh)
		wss_sites_capture(site, uc);
	/* The first site seen touching the page, for the hot-page list. */
	uint32_t *ps;
	if (site >= 0 && (ps = wss_shadow_site(page)) && !*ps)
		*ps = (uint32_t)site + 1;
}

bool wss_engine_fault(uintptr_t addr, bool write, bool exec, const void *uc)
{
	const wss_backend_t *b = E.backend;
	return b && b->fault && b->fault(addr, write, exec, uc);
}
