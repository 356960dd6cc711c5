/* Pins (buffers the kernel is about to access, kept open for the call) and
 * the arming sections that respect them: the tick, a re-arm after the
 * program's mprotect, a fork child's start.  Pinning is AS-safe and
 * lock-free; arming runs under the engine lock. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <linux/futex.h>

/* ---- pins: buffers the kernel is about to access -------------------------
 * A system call given a buffer on an armed page fails with EFAULT.  The
 * caller pins the buffer for the duration of the call: the pin is published
 * in a small table that the tick reads before arming, and the pages are
 * opened and recorded as touched (the kernel touches them) right away.
 * Closing the race with a tick that is arming right now: the pinner
 * publishes (seq_cst), then reads arm_gen; the tick makes arm_gen odd
 * (seq_cst), then reads the table.  Either the tick sees the pin, or the
 * pinner sees an arming in progress and waits for it to end before opening
 * the pages.  While a pin lasts, each tick records its pages as touched in
 * the new interval instead of arming them. */

#define PIN_SLOTS 4096
static wss_page_t pins[PIN_SLOTS]; /* cur = start, prev = end | thread slot << 48 */
static uint32_t arm_gen;
/* Pinners waiting for an arming section to end, asleep on arm_gen: a
 * spin with sched_yield never let the engine run where a realtime thread
 * of the program waited on its CPU (a SCHED_FIFO program's read(2) took
 * 0.9 s, the kernel's realtime throttling period).  Either the pinner
 * sees the section end before it sleeps (the futex compares arm_gen), or
 * wss_arm_end sees it counted (both seq_cst) and wakes it; the timeout is
 * a bound, not a mechanism. */
static uint32_t arm_waiters;

static bool any_tracked(uintptr_t s, uintptr_t e)
{
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (fl && (wss_flags_load(a, fl) & WSS_PF_TRACKED))
			return true;
	}
	return false;
}

/* Apply fn to each run of tracked pages in [s, e). */
void wss_pins_tracked_runs(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	uintptr_t run = 0;
	for (uintptr_t a = s; a <= e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = a < e ? wss_shadow_flags(a) : NULL;
		bool t = fl && (wss_flags_load(a, fl) & WSS_PF_TRACKED);
		if (t && !run)
			run = a;
		else if (!t && run) {
			fn(run, a, arg);
			run = 0;
		}
		if (a == e)
			break;
	}
}

/* Does a page of a pinned run have per-page state?  A page of a sparse
 * range (its flags byte does not say tracked) only if it is a member of
 * level, the level in force: its other pages are never counted, and get no
 * state (sparse.h). */
static bool pin_records(uintptr_t a, uint8_t *fl, uint32_t level)
{
	return (__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED) || (level && wss_sampling_member(a, level));
}

/* r->level: the level whose members the pin opened (pages of other
 * levels stay as they were, armed or not, and join no touched list). */
void wss_pins_record_run(uintptr_t s, uintptr_t e, void *arg)
{
	wss_record_arg_t *r = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (pin_records(a, fl, r->level) && wss_fault_record(a, fl, r->e, r->slot, false) &&
		    wss_sampling_member(a, r->level))
			wss_fault_list_add(a, r->e);
	}
}

/* Open a run of tracked pages.  Under sampled tracking only the members
 * of the level in force can be armed (the tick opens the others when the
 * level changes, and a new or moved range is attached with its members
 * alone armed): one mprotect per member instead of one per run. */
static void open_member(uintptr_t page, void *arg)
{
	(void)arg;
	E.backend->disarm(page, page + WSS_PAGE_SIZE);
}

static void open_run(uintptr_t s, uintptr_t e, void *arg)
{
	uint32_t l = *(uint32_t *)arg;
	if (l)
		wss_sampling_members(s, e, l, open_member, NULL);
	else
		E.backend->disarm(s, e);
}

int wss_engine_pin(const void *buf, size_t len)
{
	uintptr_t s = wss_page_down((uintptr_t)buf), e = wss_page_up((uintptr_t)buf + len);
	if (!len || e <= s || e > WSS_ADDR_LIMIT || !__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) ||
	    !E.backend->needs_pins || !any_tracked(s, e))
		return 0;
	uint32_t slot = wss_threads_self();
	int i = -1;
	for (int n = 0; n < PIN_SLOTS; n++) {
		int j = (int)((slot + (uint32_t)n) % PIN_SLOTS);
		uint64_t lo = 0, hi = 0;
		if (wss_cas16(&pins[j], &lo, &hi, s, e | (uint64_t)slot << 48)) {
			i = j;
			break;
		}
	}
	if (i < 0)
		return -1;
	uint32_t g = __atomic_load_n(&arm_gen, __ATOMIC_SEQ_CST);
	if (g & 1) {
		__atomic_add_fetch(&arm_waiters, 1, __ATOMIC_SEQ_CST);
		struct timespec ts = {0, 10000000};
		while (__atomic_load_n(&arm_gen, __ATOMIC_SEQ_CST) == g)
			wss_sys_futex(&arm_gen, FUTEX_WAIT_PRIVATE, g, &ts, NULL, 0);
		__atomic_sub_fetch(&arm_waiters, 1, __ATOMIC_SEQ_CST);
	}
	/* Sampled, and no member of the level in force in the buffer: nothing
	 * in it is armed, and nothing in it counts in this interval's sample
	 * (a sample's members are members of every level of its window), so
	 * the published pin is all it takes: a tick that arms a finer level
	 * before the call ends leaves the buffer open.  No system call, no
	 * in-flight section: a program's small reads and writes cost a few
	 * loads.  The level cannot change in between: that is an arming
	 * section, which waited for us or which we waited for. */
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	if (l && !wss_sampling_count(s, e, l)) {
		wss_census_touch(s, e);
		return i + 1;
	}
	/* Open, then read the epoch (the handler's order), then record.  A
	 * page recorded in this interval is not necessarily open (a tick may
	 * have armed it after a handler of the new interval recorded it), so
	 * every tracked run is opened.  Asynchronous signals are blocked while
	 * we are in flight: a handler that longjmp'd out, or waited for the
	 * engine lock held by a tick waiting for us, would hang the tick. */
	uint64_t block = ~WSS_SYNC_SIGNALS, old;
	wss_sys_sigmask(SIG_BLOCK, &block, &old);
	/* Announced as a handler's open is (fault.c): the tick waits for it. */
	uint32_t ticket = wss_engine_opening();
	wss_pins_tracked_runs(s, e, open_run, &l);
	wss_record_arg_t r = {wss_fault_enter(), slot, l, 0};
	wss_engine_open_end(ticket);
	if (!__atomic_load_n(&E.pending, __ATOMIC_SEQ_CST))
		wss_pins_tracked_runs(s, e, wss_pins_record_run, &r);
	wss_fault_exit(r.e);
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
	wss_census_touch(s, e);
	return i + 1;
}

void wss_engine_unpin(int pin)
{
	if (pin <= 0)
		return;
	wss_page_t *p = &pins[pin - 1];
	uint64_t lo, hi;
	wss_page_load(p, &lo, &hi);
	wss_cas16(p, &lo, &hi, 0, 0);
}

typedef struct pin_snap {
	uintptr_t s, e;
	uint32_t slot;
} pin_snap_t;

/* The pins seen by the arming in progress (engine lock held). */
static pin_snap_t pin_v[PIN_SLOTS];
static int pin_n;

/* Start an arming section: make arm_gen odd, then take the pins (sorted by
 * start).  Pins of threads that have exited (cancelled in a wait, or
 * longjmp'd out of one) are dropped here, so a leaked pin does not keep its
 * pages open for ever.  Engine lock held. */
void wss_arm_begin(void)
{
	__atomic_add_fetch(&arm_gen, 1, __ATOMIC_SEQ_CST);
	pin_n = 0;
	for (int i = 0; i < PIN_SLOTS; i++) {
		if (!__atomic_load_n(&pins[i].cur, __ATOMIC_SEQ_CST))
			continue;
		uint64_t lo, hi;
		wss_page_load(&pins[i], &lo, &hi);
		if (!lo)
			continue;
		uint32_t slot = (uint32_t)(hi >> 48);
		int tid = __atomic_load_n(&wss_threads_get(slot)->tid, __ATOMIC_RELAXED);
		if (tid > 0 && wss_sys_tgkill(E.pid, tid, 0) == -ESRCH) {
			wss_cas16(&pins[i], &lo, &hi, 0, 0);
			continue;
		}
		int j = pin_n++;
		for (; j > 0 && pin_v[j - 1].s > lo; j--)
			pin_v[j] = pin_v[j - 1];
		pin_v[j] = (pin_snap_t){lo, hi & ((1ULL << 48) - 1), slot};
	}
}

void wss_arm_end(void)
{
	__atomic_add_fetch(&arm_gen, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&arm_waiters, __ATOMIC_SEQ_CST))
		wss_sys_futex(&arm_gen, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Arm [s, e) except the pinned parts.  Returns non-zero on error. */
int wss_arm_unpinned(uintptr_t s, uintptr_t e)
{
	int err = 0;
	for (int i = 0; i < pin_n && s < e; i++) {
		if (pin_v[i].e <= s || pin_v[i].s >= e)
			continue;
		if (pin_v[i].s > s)
			err |= E.backend->arm(s, pin_v[i].s);
		s = pin_v[i].e;
	}
	if (s < e)
		err |= E.backend->arm(s, e);
	return err;
}

bool wss_arm_pinned_in(uintptr_t s, uintptr_t e)
{
	for (int i = 0; i < pin_n; i++)
		if (pin_v[i].s < e && pin_v[i].e > s)
			return true;
	return false;
}

/* Call fn on each run of pages in [s, e) not touched in interval epoch. */
static void untouched_runs(uintptr_t s, uintptr_t e, uint32_t epoch, void (*fn)(uintptr_t, uintptr_t))
{
	uintptr_t run = 0;
	for (uintptr_t a = s; a <= e; a += WSS_PAGE_SIZE) {
		bool closed = a < e && (uint32_t)__atomic_load_n(&wss_shadow_page(a)->cur, __ATOMIC_ACQUIRE) != epoch;
		if (closed && !run)
			run = a;
		else if (!closed && run) {
			fn(run, a);
			run = 0;
		}
		if (a == e)
			break;
	}
}

static void arm_range(uintptr_t s, uintptr_t e) { wss_arm_unpinned(s, e); }

static void arm_member_untouched(uintptr_t page, void *arg)
{
	(void)arg;
	if ((uint32_t)__atomic_load_n(&wss_shadow_page(page)->cur, __ATOMIC_ACQUIRE) != E.epoch)
		arm_range(page, page + WSS_PAGE_SIZE);
}

void wss_arm_untouched(uintptr_t s, uintptr_t e)
{
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	if (l)
		wss_sampling_members(s, e, l, arm_member_untouched, NULL);
	else
		untouched_runs(s, e, E.epoch, arm_range);
}

/* A pinned buffer's pages at a tick: recorded, and its members of the
 * level now in force listed even when their touch in e was recorded
 * already, by a pinner that may have opened them at the level before
 * (a pin published before this arming section read the level without
 * waiting for it): the tick after a change of level trusts the list. */
static void record_pinned_run(uintptr_t s, uintptr_t e, void *arg)
{
	wss_record_arg_t *r = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (!pin_records(a, fl, r->level))
			continue;
		wss_fault_record(a, fl, r->e, r->slot, false);
		if (wss_sampling_member(a, r->level))
			wss_fault_list_add(a, r->e);
	}
}

void wss_pins_record_pinned(uint32_t e)
{
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	for (int i = 0; i < pin_n; i++) {
		wss_record_arg_t r = {e, pin_v[i].slot, l, 0};
		wss_pins_tracked_runs(pin_v[i].s, pin_v[i].e, record_pinned_run, &r);
	}
}

void wss_pins_fork_child(uint32_t old_slot, uint32_t new_slot)
{
	for (int i = 0; i < PIN_SLOTS; i++) {
		if (!__atomic_load_n(&pins[i].cur, __ATOMIC_RELAXED))
			continue;
		uint64_t hi = __atomic_load_n(&pins[i].prev, __ATOMIC_RELAXED);
		if ((uint32_t)(hi >> 48) == old_slot) {
			__atomic_store_n(&pins[i].prev, (hi & ((1ULL << 48) - 1)) | (uint64_t)new_slot << 48,
					 __ATOMIC_RELAXED);
			continue;
		}
		__atomic_store_n(&pins[i].cur, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&pins[i].prev, 0, __ATOMIC_RELAXED);
	}
}
