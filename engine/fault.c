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
 * always completes and step 2 cannot wait forever.
 *
 * The touched lists.  Each interval's first touches are also appended to a
 * preallocated list, one per epoch parity (a fetch-add index, no lock, no
 * allocation), so that a tick at a steady sampled level can re-arm and
 * harvest the members touched in k alone: a member in no list was armed
 * throughout k, hence unread and unwritten (tick.c says when the list is
 * trusted, and when the tick walks every member instead).  That needs
 * every page a handler opens to reach a list the tick reads, including a
 * page opened before the epoch moved by a handler that records it after.
 * So a handler announces the open first (wss_engine_opening): it reads
 * the epoch o, joins opening[o & 1] and re-reads the epoch (retrying if it
 * moved, as in wss_fault_enter), then opens the page, enters the in-flight
 * section (epoch e >= o) and only then leaves opening[o & 1]; a pin does
 * the same around the pages it opens (pins.c).  The tick, after step 1,
 * waits for opening[k & 1] as for inflight[k & 1]: by the same Dekker
 * argument no open of o = k starts after the epoch move, so the wait
 * ends, and then every open announced with o <= k has entered flight
 * with e = k (in list k once inflight[k & 1] drains) or e = k + 1 (in list
 * k + 1, which tick k + 1 reads: the handler's own access is k + 1's).
 * An open announced with o = k + 1 began after the epoch move, so its page
 * is k + 1's, and tick k + 1 waits for it in turn.  Overflow (more first
 * touches than the list holds) is seen by the tick as a count past the
 * capacity, and a coarse open (several pages for one touch) or a registry
 * change that opens pages marks the lists stale: the next tick then walks
 * every member, as before the lists. */
#include "config.h"
#include "engine/internal.h"

#include <linux/futex.h>

#include <errno.h>
#include <sys/mman.h>
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

/* A coarse open gave pages their protection that no touch records: the
 * lists are stale.  Marked before the handler ends its announcement, so
 * that the tick that waits for it sees the mark. */
void wss_engine_count_coarse(void)
{
	__atomic_add_fetch(&E.coarse, 1, __ATOMIC_RELAXED);
	wss_fault_list_stale();
}

void wss_fault_list_stale(void) { __atomic_store_n(&E.touched_stale, true, __ATOMIC_SEQ_CST); }

int wss_fault_list_init(uint32_t cap, bool walked)
{
	if (E.touched[0])
		return 0;
	uintptr_t *v = wss_sys_alloc(2 * (size_t)cap * sizeof *v);
	if (!v)
		return ENOMEM;
	E.touched_cap = cap;
	/* Handlers of the current interval that ran before this appended
	 * nothing: its list cannot be trusted, unless the caller lists what
	 * they recorded (walked: wss_policy_burst's raise).  Before
	 * measuring starts (wss_engine_init) no handler records anything, and
	 * the first tick may take its list: armed throughout is every member
	 * in none. */
	if (!walked && __atomic_load_n(&E.measuring, __ATOMIC_SEQ_CST))
		wss_fault_list_stale();
	__atomic_store_n(&E.touched[1], v + cap, __ATOMIC_RELEASE);
	__atomic_store_n(&E.touched[0], v, __ATOMIC_RELEASE);
	return 0;
}

/* The store of the page is ordered before the tick's reading by the
 * in-flight section it is made in (its exit is a release, the tick's drain
 * a seq_cst load), or by the engine lock for the tick's own appends. */
void wss_fault_list_add(uintptr_t page, uint32_t e)
{
	uintptr_t *v = __atomic_load_n(&E.touched[e & 1], __ATOMIC_ACQUIRE);
	if (!v)
		return;
	uint32_t i = __atomic_fetch_add(&E.ntouched[e & 1], 1, __ATOMIC_RELAXED);
	if (i < E.touched_cap)
		v[i] = page;
}

const uintptr_t *wss_fault_list_take(uint32_t k, uint32_t *n)
{
	bool stale = __atomic_exchange_n(&E.touched_stale, false, __ATOMIC_SEQ_CST);
	*n = __atomic_load_n(&E.ntouched[k & 1], __ATOMIC_RELAXED);
	if (stale || !E.touched[k & 1] || *n > E.touched_cap)
		return NULL;
	return E.touched[k & 1];
}

/* No handler appends to k's parity again before tick k + 1 moves the
 * epoch to k + 2, which this store precedes (engine lock). */
void wss_fault_list_reset(uint32_t k) { __atomic_store_n(&E.ntouched[k & 1], 0, __ATOMIC_RELAXED); }

void wss_fault_fork_child(void)
{
	for (int p = 0; p < 2; p++) {
		__atomic_store_n(&E.inflight[p], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&E.opening[p], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&E.ntouched[p], 0, __ATOMIC_RELAXED);
	}
	/* A change of sample the parent's engine thread was making is not
	 * the child's: its faults must not wait for it. */
	__atomic_store_n(&E.changing, 0, __ATOMIC_RELAXED);
	/* The parent's other threads may have been appending at the fork. */
	wss_fault_list_stale();
}

/* Join count[e & 1] for the current epoch e and return e: read the epoch,
 * count in, read it again, and retry if the tick moved it in between (the
 * protocol at the top of this file; the tick moves the epoch, then waits
 * for count[k & 1]).  AS-safe, lock-free. */
static inline uint32_t epoch_join(uint32_t count[2])
{
	for (;;) {
		uint32_t e = __atomic_load_n(&E.epoch, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&count[e & 1], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&E.epoch, __ATOMIC_SEQ_CST) == e)
			return e;
		__atomic_sub_fetch(&count[e & 1], 1, __ATOMIC_SEQ_CST);
	}
}

uint32_t wss_engine_opening(void) { return epoch_join(E.opening); }

void wss_engine_open_end(uint32_t ticket) { __atomic_sub_fetch(&E.opening[ticket & 1], 1, __ATOMIC_SEQ_CST); }

__thread bool wss_fault_engine_thread __attribute__((tls_model("initial-exec")));

uint32_t wss_fault_enter(void) { return epoch_join(E.inflight); }

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

/* ticket: the announcement of the open to end once in flight (-1: none). */
static void touched(uintptr_t page, uint8_t *fl, const void *uc, int64_t ticket)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || page == E.probe) {
		/* Finished or forked: the page is open again, that is all; or
		 * the tick timing a touch (policy.c): no one's. */
		if (ticket >= 0)
			wss_engine_open_end((uint32_t)ticket);
		return;
	}
	uint32_t e = wss_fault_enter();
	if (ticket >= 0)
		wss_engine_open_end((uint32_t)ticket); /* in flight now: the tick waits for us there */
	/* A forked child before its start: the page is open, nothing is
	 * recorded (child_start_locked waits for us before arming). */
	if (__atomic_load_n(&E.pending, __ATOMIC_SEQ_CST)) {
		wss_fault_exit(e);
		return;
	}
	/* The engine's own touches (see engine_main) count for no thread. */
	bool first = wss_fault_record(page, fl, e, wss_fault_engine_thread ? 0 : wss_threads_self(), true);
	/* Every first touch, whatever the level: a list is trusted only when
	 * every recorder of its interval saw one level (tick.c), and a member
	 * is what the handler opened. */
	if (first)
		wss_fault_list_add(page, e);
	/* auto's bound inside an interval (policy.c): the first touch at or
	 * past the cap wakes the engine thread, once an interval (the flag
	 * says which: e + 1, never 0).  The tick clears both after its
	 * drain; a handler of k + 1 that ran before that is not counted (a
	 * bound, not a figure), and a flag of k set late is one the engine
	 * thread ignores (wss_policy_burst). */
	uint32_t cap = __atomic_load_n(&E.burst_cap, __ATOMIC_RELAXED);
	if (first && cap && __atomic_add_fetch(&E.burst, 1, __ATOMIC_RELAXED) >= cap) {
		uint32_t zero = 0;
		if (__atomic_load_n(&E.burst_hit, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&E.burst_hit, &zero, e + 1, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			wss_sys_futex(&E.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
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

void wss_engine_touched(uintptr_t page, uint8_t *fl, const void *uc) { touched(page, fl, uc, -1); }

void wss_engine_opened(uintptr_t page, uint8_t *fl, const void *uc, uint32_t ticket)
{
	touched(page, fl, uc, ticket);
}

/* A change of sample opens the pages leaving it range by range, from the
 * engine thread, while the program's threads fault on those pages and
 * open them one by one: every open on either side is an mprotect, which
 * takes the process's mmap lock for writing, and the two sides then hand
 * it back and forth (a random walk's raise from exact, 1,024 gaps of 63
 * pages, took 17 ms against 3.8 ms alone; matmul's, 36 gaps, 11 ms).  So
 * while the engine thread opens (wss_change_begin .. wss_change_end), a
 * program thread's fault on a tracked page waits for it, then returns
 * for the access to run again: opened by the change, it goes through;
 * still armed (a member), it faults again and is recorded as any touch.
 * The wait is before the handler joins the epoch (the protocol above), so
 * a tick waiting for handlers never waits for it.  It is bounded: the
 * engine thread holds the engine lock while it opens, which no waiting
 * handler holds, but if the change ever waited for the thread in the
 * handler (a lock it holds outside wss), the wait times out and the
 * fault goes the usual way. */
#define CHANGE_WAIT_NS 50000000L

void wss_change_begin(void)
{
	__atomic_store_n(&E.changing_pid, wss_sys_getpid(), __ATOMIC_RELAXED);
	__atomic_store_n(&E.changing, wss_sys_gettid(), __ATOMIC_SEQ_CST);
}

void wss_change_end(void)
{
	__atomic_store_n(&E.changing, 0, __ATOMIC_SEQ_CST);
	wss_sys_futex(&E.changing, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* E.changing holds the changer's thread id: the thread making the change
 * (the engine thread, or a program thread in its mmap or ending an
 * interval under manual ticks: wss_policy_make_room, _before_attach,
 * wss_tick) never waits for itself.  A child forked without the fork
 * handlers (_Fork, a raw clone) during a change inherits the word with no
 * one to clear it: the pid tells. */
static bool change_wait(uintptr_t addr, bool write, bool exec)
{
	int c = __atomic_load_n(&E.changing, __ATOMIC_ACQUIRE);
	if (!c || wss_fault_engine_thread || c == wss_sys_gettid() || __atomic_load_n(&E.changing_pid, __ATOMIC_RELAXED) != wss_sys_getpid())
		return false;
	uintptr_t page = addr & ~(WSS_PAGE_SIZE - 1);
	uint8_t *fl = wss_shadow_flags(page);
	uint8_t f = fl ? __atomic_load_n(fl, __ATOMIC_RELAXED) : 0;
	if (!(f & WSS_PF_TRACKED))
		return false;
	/* The program's own fault (a guard page, a collector's barrier)
	 * goes to its handler at once. */
	int prot = f & WSS_PF_PROT;
	if (exec ? !(prot & PROT_EXEC) : write ? !(prot & PROT_WRITE) : !(prot & (PROT_READ | PROT_WRITE)))
		return false;
	struct timespec ts = {0, CHANGE_WAIT_NS};
	wss_sys_futex(&E.changing, FUTEX_WAIT_PRIVATE, c, &ts, NULL, 0);
	return !__atomic_load_n(&E.changing, __ATOMIC_ACQUIRE);
}

/* A fault on a page that is not tracked when the handler looks may have
 * been ours all the same: the page was armed when the access faulted, and
 * left tracking (its protection given back first) before the handler read
 * its flags (an exclusion at dlclose or for a stack, the program's
 * mprotect making it executable, from another thread).  The access would
 * now succeed: it runs again, once per page and per count of pages that
 * left tracking (wss_engine_untrack_locked counts them before it clears
 * their flags, so a handler that saw the flags cleared sees the count
 * moved).  A fault of the program's own on that page faults again and
 * goes to the program (as a fault on a page that was never ours does at
 * once, the count unchanged).  Per thread: AS-safe. */
static __thread uintptr_t data_retry_at __attribute__((tls_model("initial-exec")));
static __thread uint32_t data_retry_gen __attribute__((tls_model("initial-exec")));

static bool data_retry(uintptr_t addr)
{
	uint32_t g = __atomic_load_n(&E.released, __ATOMIC_ACQUIRE);
	uintptr_t page = addr & ~(WSS_PAGE_SIZE - 1);
	if (!g || (data_retry_at == page && data_retry_gen == g)) {
		data_retry_at = 0;
		return false;
	}
	data_retry_at = page;
	data_retry_gen = g;
	return true;
}

bool wss_engine_fault(uintptr_t addr, bool write, bool exec, const void *uc)
{
	/* An instruction fetch from an armed code page (code.c), whatever
	 * the data backend. */
	if (exec && wss_code_fault(addr))
		return true;
	const wss_backend_t *b = E.backend;
	if (b && b->fault) {
		if (change_wait(addr, write, exec))
			return true;
		if (b->fault(addr, write, exec, uc))
			return true;
		if (!exec)
			return data_retry(addr);
	}
	return exec && wss_code_retry(addr);
}
