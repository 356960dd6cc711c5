/* The engine: registry updates, the interval clock and the tick, samples,
 * and the profile.  One lock (a futex mutex taken with asynchronous signals
 * blocked) serialises the registry and the tick; the fault path takes no
 * lock and allocates nothing.
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
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "common/fmt.h"
#include "common/sys.h"
#include "engine/backend.h"
#include "engine/profile.h"
#include "engine/regions.h"
#include "engine/peaks.h"
#include "engine/shadow.h"
#include "engine/sites.h"
#include "engine/threads.h"

typedef struct wss_engine {
	int lock;                 /* 0 free, 1 locked, 2 locked with waiters */
	bool tracking;            /* registry and flags maintained (init on) */
	bool measuring;           /* atomic: arming, recording, sampling */
	bool finished;
	bool started;
	const wss_backend_t *backend;
	wss_regions_t regions;
	uint32_t epoch;           /* atomic */
	uint32_t inflight[2];     /* atomic */
	uint32_t wwin;            /* atomic: k + 1 while the tick's write window is open, else 0 */
	int wlock;                /* the write window's lock: 0 free, else the holder's tid */
	int harvester;            /* the tid of the thread running the tick or discard (engine lock) */
	long vma_delta;           /* atomic: estimated VMAs our unprotects added */
	long vma_budget;
	uint64_t coarse;          /* atomic: coarse unprotects since the last sample */
	int pid;
	int fd;                   /* the profile */
	uint64_t fd_dev, fd_ino;  /* its identity, checked before each write */
	int err_fd;               /* a private copy of stderr, for the summary */
	uint64_t err_dev, err_ino;
	uint64_t t0_ns, cpu0_ns;
	uint64_t nsamples, sum_pages, peak_pages, faults_total, coarse_total;
	uint64_t sum_write, peak_write, total_write; /* backends that see writes */
	uint64_t sum_read, peak_read, total_read;
	wss_fmt_t out;
	pthread_t thread;
	int stop;                 /* futex word: 1 asks the engine thread to stop */
	int argc;                 /* the program's arguments, for headers */
	char **argv;
	long max_map;
	uint64_t start_unix_ns;
	bool open_pending;        /* a forked child: create the profile on the first write */
	bool pending;             /* atomic: a forked child before its start (wss_engine_fork_child) */
	bool leader;              /* the session's first process: the one that prints the summary */
	bool no_profile;          /* the output is a character device (/dev/null): nothing written */
	bool peaks;               /* peak detection (peaks.enabled) */
	bool sites;               /* first-touch sites and stacks: peaks, and a backend with faults */
	uint32_t npeaks;          /* peak records written */
	uint64_t app_mask;        /* the signal mask of the thread that started the engine */
	uint64_t next_alone_ns;   /* engine thread: when to look for the last thread again */
	uint64_t written;         /* bytes of whole records in the profile */
	uint32_t samples_out;     /* the last sample record in the profile */
	int cut_err;              /* the profile could not be written: why (an errno) */
	uint32_t cut_at;          /* ... and the first sample it lacks */
	/* Last, the large fields a forked child does not write: every page
	 * written after a fork is a copy (wss_engine_fork_child). */
	wss_config_t cfg;
	char path[PATH_MAX];
} wss_engine_t;

static wss_engine_t E = {.fd = -1, .err_fd = -1};
static char backend_reason[320]; /* the header's: which backend and why */
static const char *runtime;       /* wss_engine_start_t.runtime */
static const char *runtime_untracked;
static void (*on_tick)(void);
static void (*tick_around)(void (*tick)(void));

void wss_engine_on_tick(void (*fn)(void)) { on_tick = fn; }
void wss_engine_tick_around(void (*around)(void (*tick)(void))) { tick_around = around; }

static const char *(*module_of)(uintptr_t addr, bool *main_program);
void wss_engine_on_module_of(const char *(*fn)(uintptr_t addr, bool *main_program)) { module_of = fn; }

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- lock ------------------------------------------------------------- */

/* Signals that are raised synchronously by a faulting instruction must stay
 * deliverable: blocking them turns a fault into a kill. */
#define SYNC_SIGNALS ((1ULL << (SIGSEGV - 1)) | (1ULL << (SIGBUS - 1)) | (1ULL << (SIGILL - 1)) | \
		      (1ULL << (SIGFPE - 1)) | (1ULL << (SIGTRAP - 1)))

/* Does this thread hold the engine lock?  A program's handler for a
 * synchronous signal (those stay open under the lock) that calls _exit may
 * have interrupted it there (wss_engine_exit). */
static __thread bool lock_mine __attribute__((tls_model("initial-exec")));

/* Take the lock, waiting at most timeout_ns (0: for ever); false when it
 * could not be had in time (the signal mask is then as it was). */
static bool lock_within(wss_lockstate_t *ls, uint64_t timeout_ns)
{
	uint64_t block = ~SYNC_SIGNALS;
	wss_sys_sigmask(SIG_BLOCK, &block, &ls->oldmask);
	int c = 0;
	if (__atomic_compare_exchange_n(&E.lock, &c, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		lock_mine = true;
		return true;
	}
	uint64_t deadline = timeout_ns ? clock_ns(CLOCK_MONOTONIC) + timeout_ns : 0;
	if (c != 2)
		c = __atomic_exchange_n(&E.lock, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		struct timespec ts, *tp = NULL;
		if (deadline) {
			uint64_t now = clock_ns(CLOCK_MONOTONIC);
			if (now >= deadline) {
				/* The word stays 2: the holder's unlock then
				 * wakes a waiter that may not exist, no harm. */
				wss_sys_sigmask(SIG_SETMASK, &ls->oldmask, NULL);
				return false;
			}
			ts = (struct timespec){(time_t)((deadline - now) / 1000000000ULL),
					       (long)((deadline - now) % 1000000000ULL)};
			tp = &ts;
		}
		wss_sys_futex(&E.lock, FUTEX_WAIT_PRIVATE, 2, tp, NULL, 0);
		c = __atomic_exchange_n(&E.lock, 2, __ATOMIC_ACQUIRE);
	}
	lock_mine = true;
	return true;
}

void wss_engine_lock(wss_lockstate_t *ls) { lock_within(ls, 0); }

void wss_engine_unlock(wss_lockstate_t *ls)
{
	lock_mine = false;
	if (__atomic_fetch_sub(&E.lock, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&E.lock, 0, __ATOMIC_RELEASE);
		wss_sys_futex(&E.lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	wss_sys_sigmask(SIG_SETMASK, &ls->oldmask, NULL);
}

/* ---- fault path (AS-safe) --------------------------------------------- */

static uintptr_t page_down(uintptr_t a) { return a & ~(WSS_PAGE_SIZE - 1); }
static uintptr_t page_up(uintptr_t a) { return (a + WSS_PAGE_SIZE - 1) & ~(WSS_PAGE_SIZE - 1); }

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

/* Set in the engine thread. */
static __thread bool engine_thread __attribute__((tls_model("initial-exec")));

static uint32_t inflight_enter(void)
{
	for (;;) {
		uint32_t e = __atomic_load_n(&E.epoch, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&E.inflight[e & 1], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&E.epoch, __ATOMIC_SEQ_CST) == e)
			return e;
		__atomic_sub_fetch(&E.inflight[e & 1], 1, __ATOMIC_SEQ_CST);
	}
}

static void inflight_exit(uint32_t e) { __atomic_sub_fetch(&E.inflight[e & 1], 1, __ATOMIC_RELEASE); }

/* Record a touch of page by slot in interval e; a fault also counts in the
 * thread's faults.  AS-safe. */
/* Returns true when this was the page's first touch in interval e. */
static bool record(uintptr_t page, uint8_t *fl, uint32_t e, uint32_t slot, bool fault)
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
	uint32_t e = inflight_enter();
	/* A forked child before its start: the page is open, nothing is
	 * recorded (child_start_locked waits for us before arming). */
	if (__atomic_load_n(&E.pending, __ATOMIC_SEQ_CST)) {
		inflight_exit(e);
		return;
	}
	/* The engine's own touches (see engine_main) count for no thread. */
	bool first = record(page, fl, e, engine_thread ? 0 : wss_threads_self(), true);
	int site = -1;
	bool fresh = false;
	/* A touch by the stack unwinder inside our handler (sites.c) or by
	 * the engine thread has no site of its own, and captures nothing. */
	if (first && uc && E.sites && !wss_sites_unwinding && !engine_thread)
		site = wss_sites_touch((uint64_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP], e, &fresh);
	inflight_exit(e);
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

static bool any_tracked(uintptr_t s, uintptr_t e)
{
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (fl && (__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED))
			return true;
	}
	return false;
}

/* Apply fn to each run of tracked pages in [s, e). */
static void tracked_runs(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	uintptr_t run = 0;
	for (uintptr_t a = s; a <= e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = a < e ? wss_shadow_flags(a) : NULL;
		bool t = fl && (__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED);
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

struct record_arg {
	uint32_t e, slot;
};

static void record_run(uintptr_t s, uintptr_t e, void *arg)
{
	struct record_arg *r = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE)
		record(a, wss_shadow_flags(a), r->e, r->slot, false);
}

static void open_run(uintptr_t s, uintptr_t e, void *arg) { E.backend->disarm(s, e); }

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
}

static void wlock_give(void) { __atomic_store_n(&E.wlock, 0, __ATOMIC_RELEASE); }

void wss_engine_split_write(uintptr_t page, bool (*take)(uintptr_t page))
{
	uint32_t win = __atomic_load_n(&E.wwin, __ATOMIC_SEQ_CST);
	if (!win)
		return;
	wss_page_t *p = wss_shadow_page(page);
	uint8_t *fl = wss_shadow_flags(page);
	if (!p || !fl || !(__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED) ||
	    (uint32_t)__atomic_load_n(&p->cur, __ATOMIC_ACQUIRE) != win - 1)
		return;
	int tid = wss_sys_gettid();
	if (__atomic_load_n(&E.wlock, __ATOMIC_RELAXED) == tid)
		return; /* the tick's own thread, inside its harvest */
	wlock_take(tid);
	uint32_t *mark = wss_shadow_wsplit(page);
	if (__atomic_load_n(&E.wwin, __ATOMIC_RELAXED) == win && *mark != win) {
		if (take(page))
			wss_written_set(wss_shadow_written(page), win - 1);
		*mark = win;
	}
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
	struct record_arg *r = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (!fl || !(__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED))
			continue;
		uint32_t when = r->e;
		if (E.backend->fault) {
			wss_page_t *p = wss_shadow_page(a);
			if (*wss_shadow_wsplit(a) == r->e + 1)
				when = r->e + 1;
			else if (wss_page_touched_in(p, r->e))
				when = r->e;
			else if ((uint32_t)__atomic_load_n(&p->cur, __ATOMIC_RELAXED) == r->e + 1)
				when = r->e + 1;
			else
				continue;
		} else {
			record(a, fl, r->e, r->slot, true);
		}
		wss_written_set(wss_shadow_written(a), when);
		if (!(__atomic_fetch_or(fl, WSS_PF_WEVER, __ATOMIC_RELAXED) & WSS_PF_WEVER))
			E.total_write++;
	}
}

/* Harvest [s, e) into interval k under wlock.  Returns the backend's
 * result.  Engine lock held. */
static int harvest_range(uintptr_t s, uintptr_t e, uint32_t k)
{
	struct record_arg r = {k, 0};
	wlock_take(E.harvester);
	int err = E.backend->harvest(s, e, harvested, &r);
	wlock_give();
	return err;
}

int wss_engine_pin(const void *buf, size_t len)
{
	uintptr_t s = page_down((uintptr_t)buf), e = page_up((uintptr_t)buf + len);
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
	if (g & 1)
		while (__atomic_load_n(&arm_gen, __ATOMIC_SEQ_CST) == g)
			wss_sys_sched_yield();
	/* Open, then read the epoch (the handler's order), then record.  A
	 * page recorded in this interval is not necessarily open (a tick may
	 * have armed it after a handler of the new interval recorded it), so
	 * every tracked run is opened.  Asynchronous signals are blocked while
	 * we are in flight: a handler that longjmp'd out, or waited for the
	 * engine lock held by a tick waiting for us, would hang the tick. */
	uint64_t block = ~SYNC_SIGNALS, old;
	wss_sys_sigmask(SIG_BLOCK, &block, &old);
	tracked_runs(s, e, open_run, NULL);
	struct record_arg r = {inflight_enter(), slot};
	if (!__atomic_load_n(&E.pending, __ATOMIC_SEQ_CST))
		tracked_runs(s, e, record_run, &r);
	inflight_exit(r.e);
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
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
static void arm_begin(void)
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

static void arm_end(void) { __atomic_add_fetch(&arm_gen, 1, __ATOMIC_SEQ_CST); }

/* Arm [s, e) except the pinned parts.  Returns non-zero on error. */
static int arm_unpinned(uintptr_t s, uintptr_t e)
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

/* Call fn on each part of [s, e) covered by a tracked region. */
static void region_parts(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	size_t i = wss_regions_lower_bound(&E.regions, s);
	for (; i < E.regions.n && E.regions.v[i].start < e; i++)
		fn(E.regions.v[i].start > s ? E.regions.v[i].start : s, E.regions.v[i].end < e ? E.regions.v[i].end : e, arg);
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

static void arm_range(uintptr_t s, uintptr_t e) { arm_unpinned(s, e); }

static void rearm_part(uintptr_t s, uintptr_t e, void *arg) { untouched_runs(s, e, E.epoch, arm_range); }
static void disarm_part(uintptr_t s, uintptr_t e, void *arg) { E.backend->disarm(s, e); }

/* ---- registry (engine lock held) --------------------------------------- */

static void harvest_part(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	harvest_range(s, e, E.epoch);
}

static void observe_part(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	E.backend->observe(s, e);
}


static void reset_page(uintptr_t a)
{
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

void wss_engine_track_locked(uintptr_t start, size_t len, int prot, int kind)
{
	uintptr_t s = page_down(start), e = page_up(start + len);
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || s >= e || e > WSS_ADDR_LIMIT)
		return;
	if (wss_shadow_ensure(s, e) || wss_regions_insert(&E.regions, s, e, kind))
		return; /* out of memory for bookkeeping: leave it untracked */
	uint8_t bits = (uint8_t)((prot & WSS_PF_PROT) | WSS_PF_TRACKED | (kind << WSS_PF_KIND_SHIFT));
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		reset_page(a);
		__atomic_store_n(fl, (uint8_t)(bits | (*fl & (WSS_PF_EVER | WSS_PF_WEVER))), __ATOMIC_RELEASE);
	}
	E.backend->attach(s, e);
}

/* The page-rounded span of [start, start+len) in *s, *e; false when the
 * registry is off or no tracked region overlaps the span. */
static bool tracked_span(uintptr_t start, size_t len, uintptr_t *s, uintptr_t *e)
{
	*s = page_down(start);
	*e = page_up(start + len);
	if (!E.tracking || *s >= *e)
		return false;
	size_t i = wss_regions_lower_bound(&E.regions, *s);
	return i < E.regions.n && E.regions.v[i].start < *e;
}

void wss_engine_untrack_locked(uintptr_t start, size_t len)
{
	uintptr_t s, e;
	if (!tracked_span(start, len, &s, &e))
		return;
	wss_regions_remove(&E.regions, s, e);
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (!fl || !(*fl & WSS_PF_TRACKED))
			continue;
		__atomic_and_fetch(fl, (uint8_t)(WSS_PF_EVER | WSS_PF_WEVER), __ATOMIC_RELEASE);
		reset_page(a);
	}
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

static void set_prot_part(uintptr_t s, uintptr_t e, void *arg)
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

void wss_engine_protect_locked(uintptr_t start, size_t len, int prot)
{
	uintptr_t s, e;
	if (!tracked_span(start, len, &s, &e))
		return;
	if (prot & PROT_EXEC) {
		/* Code is not data: stop tracking it. */
		wss_engine_untrack_locked(s, e - s);
		return;
	}
	region_parts(s, e, set_prot_part, &prot);
	/* Once more, now that the flags say so: a fault handler that restored
	 * the old protection after the application's call re-reads the flags
	 * after its own mprotect and follows (track_mprotect.c); this covers
	 * the one that re-read them just before we changed them. */
	wss_sys_mprotect((void *)s, e - s, prot);
	/* The application's call opened pages we had armed: arm again those
	 * not yet touched in this interval, so their next touch still counts. */
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && (prot & (PROT_READ | PROT_WRITE))) {
		arm_begin();
		region_parts(s, e, rearm_part, NULL);
		arm_end();
	}
}

void wss_engine_disarm_locked(uintptr_t start, size_t len)
{
	if (E.tracking)
		region_parts(page_down(start), page_up(start + len), disarm_part, NULL);
}

static void detach_part(uintptr_t s, uintptr_t e, void *arg)
{
	if (E.backend->detach)
		E.backend->detach(s, e);
}

void wss_engine_exclude_locked(uintptr_t start, size_t len)
{
	wss_engine_disarm_locked(start, len);
	if (E.tracking)
		region_parts(page_down(start), page_up(start + len), detach_part, NULL);
	wss_engine_untrack_locked(start, len);
}

void wss_engine_move_locked(uintptr_t old, size_t oldlen, uintptr_t nw, size_t newlen)
{
	if (!E.tracking)
		return;
	oldlen = page_up(oldlen);
	newlen = page_up(newlen);
	uint8_t *fl = wss_shadow_flags(old);
	uint8_t f = fl ? *fl : 0;
	if (!(f & WSS_PF_TRACKED)) {
		wss_engine_untrack_locked(nw, newlen);
		return;
	}
	int prot = f & WSS_PF_PROT, kind = (f & WSS_PF_KIND) >> WSS_PF_KIND_SHIFT;
	if (nw == old) {
		if (newlen > oldlen)
			wss_engine_track_locked(old + oldlen, newlen - oldlen, prot, kind);
		else
			wss_engine_untrack_locked(old + newlen, oldlen - newlen);
		return;
	}
	wss_engine_untrack_locked(nw, newlen);
	wss_engine_track_locked(nw, newlen, prot, kind);
	size_t n = (oldlen < newlen ? oldlen : newlen) >> WSS_PAGE_SHIFT;
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
		*wss_shadow_written(b) = *wss_shadow_written(a);
		*wss_shadow_wsplit(b) = *wss_shadow_wsplit(a);
		*wss_shadow_hits(b) = *wss_shadow_hits(a);
		*wss_shadow_site(b) = *wss_shadow_site(a);
		if (*fa & (WSS_PF_EVER | WSS_PF_WEVER))
			__atomic_fetch_or(fb, *fa & (WSS_PF_EVER | WSS_PF_WEVER), __ATOMIC_RELAXED);
		*wss_shadow_rever(b) |= *wss_shadow_rever(a);
	}
	wss_engine_untrack_locked(old, oldlen);
}

long wss_engine_discard(uintptr_t start, size_t len, int adv)
{
	uintptr_t s, e;
	wss_lockstate_t ls;
	if (adv != MADV_DONTNEED || !E.backend || !E.backend->harvest || !__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE))
		return wss_sys_madvise((void *)start, len, adv);
	wss_engine_lock(&ls);
	if (!tracked_span(start, len, &s, &e) || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED)) {
		wss_engine_unlock(&ls);
		return wss_sys_madvise((void *)start, len, adv);
	}
	E.harvester = wss_sys_gettid();
	region_parts(s, e, harvest_part, NULL);
	long r = wss_sys_madvise((void *)start, len, adv);
	region_parts(s, e, observe_part, NULL);
	wss_engine_unlock(&ls);
	return r;
}

bool wss_engine_relieve_locked(void)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || __atomic_load_n(&E.vma_delta, __ATOMIC_RELAXED) <= 0)
		return false;
	for (size_t i = 0; i < E.regions.n; i++)
		E.backend->disarm(E.regions.v[i].start, E.regions.v[i].end);
	__atomic_store_n(&E.vma_delta, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&E.coarse, 1, __ATOMIC_RELAXED);
	return true;
}

/* ---- the tick ----------------------------------------------------------- */

/* The identity of an open file, or false if fd is not open. */
static bool fd_identity(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (fd < 0 || wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)))
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* Is fd still the file we opened?  Programs close descriptors they do not
 * know (daemons' closefrom, gnulib's close_stdout closing stderr) and the
 * number may now name one of theirs: never write into that. */
static bool fd_still(int fd, uint64_t dev, uint64_t ino)
{
	uint64_t d, i;
	return fd_identity(fd, &d, &i) && d == dev && i == ino;
}

static int open_profile(char *err, size_t errlen);
static void deactivate_locked(void);

/* The profile cannot be written (ENOSPC, EIO, EFBIG, a quota): measuring
 * stops here, so the program runs on as it would without us, and the file
 * is cut back to its last whole record (a record cut short would be the
 * only invalid line in it).  The summary at exit says where and why.
 * Engine lock held (or start-up). */
static void profile_cut(int err)
{
	E.cut_err = err;
	E.cut_at = E.samples_out + 1;
	wss_sys2(SYS_ftruncate, E.fd, E.written); /* fails on what is no regular file: nothing to undo there */
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		deactivate_locked();
}

static void write_record(void)
{
	if (wss_sys_getpid() != E.pid) {
		wss_fmt_reset(&E.out); /* a child that ran no fork handlers: not ours to write */
		return;
	}
	if (E.open_pending && E.out.len) {
		char err[PATH_MAX + 128];
		E.open_pending = false;
		if (open_profile(err, sizeof err))
			wss_log(err, NULL);
	}
	if (E.fd >= 0 && E.out.len && !E.out.overflow) {
		if (!fd_still(E.fd, E.fd_dev, E.fd_ino)) {
			/* Closed under us: open the same file again, if it is. */
			int fd = wss_sys_openat(AT_FDCWD, E.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
			uint64_t d, i;
			if (fd >= 0 && fd_identity(fd, &d, &i) && d == E.fd_dev && i == E.fd_ino) {
				E.fd = fd;
			} else {
				if (fd >= 0)
					wss_sys_close(fd);
				E.fd = -1;
			}
		}
		/* A regular file: wss_profile_create makes it new (O_EXCL). */
		int r = E.fd >= 0 && !E.cut_err ? wss_write_own(E.fd, E.out.buf, E.out.len, true) : 0;
		if (r)
			profile_cut(r);
		else if (E.fd >= 0 && !E.cut_err)
			E.written += E.out.len;
	}
	wss_fmt_reset(&E.out);
}

/* The stderr summary goes to our copy of stderr when the program closed
 * its own. */
static void say(const char *a, const char *b)
{
	char line[PATH_MAX + 64];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, "wss: ");
	wss_fmt_str(&f, a);
	wss_fmt_str(&f, b);
	wss_fmt_ch(&f, '\n');
	int fd = fd_still(E.err_fd, E.err_dev, E.err_ino) ? E.err_fd : fd_still(2, E.err_dev, E.err_ino) ? 2 : -1;
	if (fd >= 0)
		wss_write_own(fd, f.buf, f.len, false);
}

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

static void peaks_locked(uint32_t k, uint64_t pages, uint64_t writes, wss_profile_sets_t sets, uint32_t nt);

static void tick_locked(bool final)
{
	if (on_tick)
		on_tick();
	uint32_t k = E.epoch;
	uint32_t w = E.cfg.window_intervals;
	__atomic_store_n(&E.epoch, k + 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&E.inflight[k & 1], __ATOMIC_SEQ_CST))
		wss_sys_sched_yield();

	uint64_t unarmed = 0;
	/* The write window opens before the arming: a fault on a page armed
	 * now must see it (the comment above wlock_take). */
	bool window = !final && E.backend->harvest && E.backend->fault;
	if (E.backend->harvest)
		E.harvester = wss_sys_gettid();
	if (window)
		__atomic_store_n(&E.wwin, k + 1, __ATOMIC_SEQ_CST);
	if (!final) {
		arm_begin();
		for (size_t i = 0; i < E.regions.n; i++)
			if (arm_unpinned(E.regions.v[i].start, E.regions.v[i].end))
				unarmed++;
		/* Pinned buffers stay open: the kernel may touch them at any time
		 * during the call, so they count as touched in the new interval. */
		for (int i = 0; i < pin_n; i++) {
			struct record_arg r = {k + 1, pin_v[i].slot};
			tracked_runs(pin_v[i].s, pin_v[i].e, record_run, &r);
		}
		__atomic_store_n(&E.vma_delta, 0, __ATOMIC_RELAXED);
		arm_end();
		if (E.cfg.test_harvest_delay_ns) {
			struct timespec ts = {(time_t)(E.cfg.test_harvest_delay_ns / 1000000000ULL),
					      (long)(E.cfg.test_harvest_delay_ns % 1000000000ULL)};
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
			if (harvest_range(E.regions.v[i].start, E.regions.v[i].end, k)) {
				/* Part of it was not observed (remapped behind our
				 * back): observe all of it again from now on. */
				E.backend->observe(E.regions.v[i].start, E.regions.v[i].end);
				unarmed++;
			}
	}
	if (window) {
		wlock_take(E.harvester);
		__atomic_store_n(&E.wwin, 0, __ATOMIC_RELAXED);
		wlock_give();
	}
	uint32_t nt = wss_threads_count();
	for (uint32_t s = 0; s <= nt; s++)
		wss_threads_get(s)->window_pages = wss_threads_get(s)->window_writes = 0;
	uint64_t pages = 0, writes = 0;
	bool hot = E.cfg.report_hot_pages > 0;
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

	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	uint64_t coarse = __atomic_exchange_n(&E.coarse, 0, __ATOMIC_RELAXED);
	wss_profile_sample_t smp = {
		.seq = k,
		.t_ns = now - E.t0_ns,
		.cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - E.cpu0_ns,
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
	write_record();
	if (!E.cut_err)
		E.samples_out = k;
	if (E.peaks)
		peaks_locked(k, pages, writes, sets, nt);

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

/* ---- hot pages ---------------------------------------------------------
 * At the end: the report.hot_pages tracked pages touched in the most
 * intervals, with the mapping each belongs to and the site that first
 * touched it (its stack written before the summary).  Engine lock held. */

static const char *mapping_of(uintptr_t a, int kind, char *buf, size_t n)
{
	if (kind == WSS_KIND_HEAP)
		return "heap";
	if (kind == WSS_KIND_ANON)
		return "anon";
	bool main_program = false;
	const char *path = module_of ? module_of(a, &main_program) : NULL;
	if (!path)
		return "data";
	wss_fmt_t f;
	wss_fmt_init(&f, buf, n);
	wss_fmt_str(&f, main_program ? "data:" : "libdata:");
	wss_fmt_str(&f, path);
	return wss_fmt_cstr(&f);
}

static void stack_out(uint32_t id, const uint64_t *frames, uint32_t n, void *arg);

static wss_profile_hot_t *hot_pages_locked(int *nhot)
{
	uint32_t want = E.cfg.report_hot_pages;
	*nhot = 0;
	if (!want)
		return NULL;
	wss_profile_hot_t *v = wss_sys_alloc(want * sizeof *v);
	if (!v)
		return NULL;
	uint32_t n = 0;
	for (size_t i = 0; i < E.regions.n; i++)
		for (uintptr_t a = E.regions.v[i].start; a < E.regions.v[i].end; a += WSS_PAGE_SIZE) {
			uint32_t h = *wss_shadow_hits(a);
			if (!h || (n == want && v[n - 1].intervals >= h))
				continue;
			uint32_t j = n < want ? n++ : want - 1;
			for (; j > 0 && v[j - 1].intervals < h; j--)
				v[j] = v[j - 1];
			uint32_t site = *wss_shadow_site(a);
			v[j] = (wss_profile_hot_t){.addr = a, .intervals = h, .kind = E.regions.v[i].kind,
						   .stack = site ? wss_sites_stack_of((int)site - 1) : 0};
		}
	static char maps[256][PATH_MAX + 16];
	for (uint32_t j = 0; j < n; j++)
		v[j].mapping = mapping_of(v[j].addr, v[j].kind, maps[j % 256], sizeof maps[0]);
	if (E.sites)
		wss_sites_stacks_unwritten(stack_out, NULL);
	*nhot = (int)n;
	return v;
}

/* One tick of the clock, unless measuring stopped or the engine thread was
 * asked to stop meanwhile. */
static void tick_now(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && !__atomic_load_n(&E.stop, __ATOMIC_RELAXED))
		tick_locked(false);
	wss_engine_unlock(&ls);
}

static void tick(void)
{
	if (tick_around)
		tick_around(tick_now);
	else
		tick_now();
}

/* ---- peaks ------------------------------------------------------------------
 * One detector per series: data, read and write (where the backend has
 * them) and each of the first PEAK_THREADS threads' data.  At the onset of
 * a peak, a "peak" record with the sites that touched the most pages first
 * in that interval; their stacks are written before it. */

#define PEAK_SITES 8
#define PEAK_THREADS 256

static wss_peaks_t det_data, det_read, det_write, det_thread[PEAK_THREADS + 1];
static bool det_thread_on[PEAK_THREADS + 1];

static void peaks_init(void)
{
	double g = E.cfg.peaks_sensitivity_milli / 1000.0;
	wss_peaks_init(&det_data, g, WSS_PEAKS_WINDOW);
	wss_peaks_init(&det_read, g, WSS_PEAKS_WINDOW);
	wss_peaks_init(&det_write, g, WSS_PEAKS_WINDOW);
	memset(det_thread_on, 0, sizeof det_thread_on);
	E.npeaks = 0;
}

static void stack_out(uint32_t id, const uint64_t *frames, uint32_t n, void *arg)
{
	(void)arg;
	wss_profile_stack(&E.out, id, frames, n);
}

static void peaks_locked(uint32_t k, uint64_t pages, uint64_t writes, wss_profile_sets_t sets, uint32_t nt)
{
	wss_site_count_t top[PEAK_SITES];
	uint64_t rest = 0;
	int ntop = E.sites ? wss_sites_top(k, top, PEAK_SITES, &rest) : 0;
	wss_profile_site_t sites[PEAK_SITES];
	for (int i = 0; i < ntop; i++)
		sites[i] = (wss_profile_site_t){top[i].pc, top[i].stack, top[i].pages};
	struct {
		wss_peaks_t *d;
		const char *series;
		int tid;
		uint64_t value;
	} series[3 + PEAK_THREADS];
	int n = 0;
	series[n++] = (typeof(series[0])){&det_data, "data", 0, pages};
	if (sets.reads)
		series[n++] = (typeof(series[0])){&det_read, "read", 0, pages - writes};
	if (sets.writes && sets.reads)
		series[n++] = (typeof(series[0])){&det_write, "write", 0, writes};
	for (uint32_t t = 1; t <= nt && t <= PEAK_THREADS; t++) {
		wss_thread_t *th = wss_threads_get(t);
		if (!det_thread_on[t]) {
			if (!th->window_pages)
				continue;
			wss_peaks_init(&det_thread[t], E.cfg.peaks_sensitivity_milli / 1000.0, WSS_PEAKS_WINDOW);
			det_thread_on[t] = true;
		}
		series[n++] = (typeof(series[0])){&det_thread[t], "thread", th->tid, th->window_pages};
	}
	bool stacks_out = false;
	for (int i = 0; i < n; i++) {
		wss_peak_info_t info;
		if (!wss_peaks_update(series[i].d, (double)series[i].value, &info) || !info.start ||
		    E.npeaks >= E.cfg.peaks_max)
			continue;
		if (!stacks_out && E.sites) {
			wss_sites_stacks_unwritten(stack_out, NULL);
			stacks_out = true;
		}
		wss_profile_peak_t pk = {
			.seq = k,
			.series = series[i].series,
			.tid = series[i].tid,
			.value = series[i].value,
			.mean = info.mean,
			.threshold = info.threshold,
			.sites = sites,
			.nsites = ntop,
			.other_pages = rest,
		};
		wss_profile_peak(&E.out, &pk);
		E.npeaks++;
	}
	if (E.out.len)
		write_record();
}

void wss_engine_tick_manual(void)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) || E.cfg.time_base != WSS_TIME_MANUAL)
		return;
	tick();
}

/* Sleep until the absolute CLOCK_MONOTONIC time t or until asked to stop. */
static void wait_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ULL), .tv_nsec = (long)(t % 1000000000ULL)};
	wss_sys_futex(&E.stop, FUTEX_WAIT_BITSET_PRIVATE, 0, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* Read up to len - 1 bytes of a small file (/proc, /sys) into buf, NUL
 * terminated, with raw system calls.  Returns the length, or <= 0. */
static long read_small_file(const char *path, char *buf, size_t len)
{
	int fd = wss_sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	long n = wss_sys_read(fd, buf, len - 1);
	wss_sys_close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Is the engine thread the only one left?  glibc's last thread to exit
 * calls exit(0), but ours counts as a thread too: a program whose main
 * thread calls pthread_exit would never end once its other threads have.
 * The main thread stays a zombie until the whole process ends, so "alone"
 * is: the main thread (the state /proc/self/stat shows) is a zombie, and
 * the process has two threads, it and us.  A raw clone'd thread counts as
 * one of the program's, as it should. */
/* /proc/self/stat, kept open above the program's descriptor numbers and
 * read with pread.  Opening it afresh every 100 ms took the lowest free
 * number for a moment, and a program closing descriptors it did not open
 * (as daemons do) could close ours and open its own file under that
 * number, which our close then took from it (fds.sh: the program's write
 * failed with EBADF, 1 run in 20).  Opened at engine start, when only one
 * thread runs; reopened only if the program closed it. */
static int stat_fd = -1, stat_pid;
static uint64_t stat_dev, stat_ino;

static int proc_stat_fd(void)
{
	if (stat_fd >= 0 && stat_pid == E.pid && fd_still(stat_fd, stat_dev, stat_ino))
		return stat_fd;
	if (stat_fd >= 0 && fd_still(stat_fd, stat_dev, stat_ino))
		wss_sys_close(stat_fd); /* a forked child's copy of the parent's */
	stat_fd = -1;
	int fd = wss_sys_openat(AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int h = (int)wss_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 500);
	wss_sys_close(fd);
	if (h < 0 || !fd_identity(h, &stat_dev, &stat_ino))
		return -1;
	stat_fd = h;
	stat_pid = E.pid;
	return h;
}

/* The process's thread count (the main thread counts while it is a
 * zombie), and whether the main thread is one; -1 when unknown. */
static long proc_threads(bool *main_zombie)
{
	char buf[1024];
	int fd = proc_stat_fd();
	long n = fd < 0 ? -1 : wss_sys4(SYS_pread64, fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may contain anything */
	if (!p || p[1] != ' ')
		return -1;
	p += 2; /* field 3, the state; num_threads is field 20 */
	*main_zombie = p[0] == 'Z';
	for (int field = 3; field < 20 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	return p ? strtol(p, NULL, 10) : -1;
}

static bool engine_alone(void)
{
	bool zombie;
	return proc_threads(&zombie) == 2 && zombie;
}

bool wss_engine_last_thread(void)
{
	if (!__atomic_load_n(&E.tracking, __ATOMIC_ACQUIRE))
		return false; /* not set up (secure-execution mode): touch nothing */
	bool zombie;
	long n = proc_threads(&zombie), ours = E.started ? 1 : 0;
	if (wss_sys_gettid() == wss_sys_getpid())
		return n == 1 + ours;
	return zombie && n == 2 + ours;
}

/* Engine thread, at most every 100 ms: end the process as the program's
 * last thread would have, when it has no thread left.  exit runs the
 * program's exit handlers here, with its signal mask (less the synchronous
 * signals: they may touch armed pages), and our destructor writes the
 * summary. */
static void engine_check_alone(void)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	if (now < E.next_alone_ns)
		return;
	E.next_alone_ns = now + 100000000ULL;
	if (!engine_alone())
		return;
	uint64_t mask = E.app_mask & ~SYNC_SIGNALS;
	wss_sys_sigmask(SIG_SETMASK, &mask, NULL);
	exit(0);
}

static void child_start(void);

static void *engine_main(void *arg)
{
	(void)arg;
	/* Every signal but SIGSEGV (and glibc's two) is blocked here (see
	 * wss_engine_start).  SIGSEGV stays open for good: this thread
	 * touches the program's memory too, without meaning to.  A non-PIE
	 * executable's PLT holds the canonical address of each libc function
	 * whose address it takes, so glibc's own calls to free (the thread's
	 * exit frees its TLS) jump through the executable's .got.plt, which
	 * is tracked; copy relocations put stderr and environ in its .bss.
	 * A fault there with SIGSEGV blocked is a kill (cc1 died of it, 1 run
	 * in 15 at a 1 ms interval under mprotect).  Open, such a touch
	 * faults into our handler, which opens the page and records it for
	 * no thread (wss_engine_touched). */
	engine_thread = true;
	uint64_t interval = E.cfg.interval_ns;
	if (__atomic_load_n(&E.pending, __ATOMIC_ACQUIRE)) {
		/* A forked child: measuring starts one interval (of wall time,
		 * whatever the time base) after the fork, unless it exits or
		 * execs first (wss_engine_fork_child). */
		uint64_t due = E.t0_ns + interval;
		E.next_alone_ns = E.t0_ns + 100000000ULL;
		while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE) && clock_ns(CLOCK_MONOTONIC) < due) {
			wait_until(due < E.next_alone_ns ? due : E.next_alone_ns);
			engine_check_alone();
		}
		if (__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE))
			return NULL;
		if (tick_around)
			tick_around(child_start);
		else
			child_start();
	}
	if (E.cfg.time_base == WSS_TIME_CPU) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t next = interval;
		while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE)) {
			uint64_t used = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - E.cpu0_ns;
			if (used >= next) {
				tick();
				while (next <= used)
					next += interval;
				continue;
			}
			/* CPU time advances at most ncpu times faster than wall time. */
			uint64_t nap = (next - used) / (uint64_t)(ncpu > 0 ? ncpu : 1);
			if (nap < 100000)
				nap = 100000;
			if (nap > 50000000)
				nap = 50000000;
			wait_until(clock_ns(CLOCK_MONOTONIC) + nap);
			engine_check_alone();
		}
		return NULL;
	}
	uint64_t next = E.t0_ns + interval;
	while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE)) {
		/* Wake for the tick, or sooner to look for the last thread
		 * (intervals may be long). */
		wait_until(next < E.next_alone_ns ? next : E.next_alone_ns);
		if (__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE))
			break;
		engine_check_alone();
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now < next)
			continue;
		tick();
		/* A late tick does not cause a burst: skip to the next boundary. */
		next += interval;
		now = clock_ns(CLOCK_MONOTONIC);
		if (next <= now)
			next = now + interval - (now - E.t0_ns) % interval;
	}
	return NULL;
}

/* ---- lifecycle ---------------------------------------------------------- */

static long read_long_file(const char *path, long dflt)
{
	char buf[64];
	long n = read_small_file(path, buf, sizeof buf);
	if (n <= 0)
		return dflt;
	long v = 0;
	for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (buf[i] - '0');
	return v > 0 ? v : dflt;
}

static void readlink_exe(char *out, size_t n)
{
	long r = wss_sys6(SYS_readlink, (long)"/proc/self/exe", (long)out, (long)n - 1, 0, 0, 0);
	out[r > 0 ? r : 0] = '\0';
}

/* ---- the session ----------------------------------------------------------
 * A session is the first process started under the preload (its leader) and
 * every process it forks or execs, recursively.  Only the leader prints a
 * stderr summary; each other process notes in the leader's profile, with one
 * O_APPEND write of one line (atomic against the leader's own records and
 * other notes), the profile it created or why it has none.  So the notes are
 * complete whatever the order in which processes end: a descendant that
 * outlives the leader appends its note after the leader's summary.  A forked
 * child knows the leader from memory; an exec'd program from WSS_LEADER, which
 * the exec wrappers add to the environment they hand the kernel and the
 * constructor removes from the program's before main (preload/exec.c). */

static char session_env[PATH_MAX + 16]; /* "WSS_LEADER=<leader's profile>" */
static char leader_path[PATH_MAX];      /* the leader's profile, where notes go ("" none) */
static int leader_pid;

/* Set once this process has forked or exec'd within the session: only then
 * can it have descendants to count at the end (the count reads its whole
 * profile back). */
static bool session_used;

const char *wss_engine_session_env(void)
{
	if (!session_env[0] || !E.cfg.follow_exec)
		return NULL;
	session_used = true; /* in a vfork child too: the parent's memory */
	return session_env;
}

/* The session's leader is pid, with its profile at leader (absolute, for
 * descendants that change directory; "" for none). */
static void session_set(int pid, const char *leader)
{
	leader_pid = pid;
	wss_fmt_t f;
	wss_fmt_init(&f, leader_path, sizeof leader_path);
	if (leader[0] && leader[0] != '/') {
		char cwd[PATH_MAX];
		long n = wss_sys2(SYS_getcwd, cwd, sizeof cwd);
		if (n > 0) {
			wss_fmt_str(&f, cwd);
			wss_fmt_ch(&f, '/');
		}
	}
	wss_fmt_str(&f, leader);
	if (f.overflow)
		f.len = 0;
	wss_fmt_cstr(&f);
	wss_fmt_init(&f, session_env, sizeof session_env);
	wss_fmt_str(&f, "WSS_LEADER=");
	wss_fmt_u64(&f, (uint64_t)leader_pid);
	wss_fmt_ch(&f, ':');
	wss_fmt_str(&f, leader_path);
	wss_fmt_cstr(&f);
}

/* Note this process in the leader's profile: {"type":"process","pid":P,
 * "ppid":Q,"profile":PATH|null[,"reason":R]}.  hook. */
static void session_note(const char *profile, const char *reason)
{
	if (!leader_path[0]) /* none, or this is the leader creating it */
		return;
	char line[PATH_MAX + 256];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, "{\"type\":\"process\",\"pid\":");
	wss_fmt_u64(&f, (uint64_t)E.pid);
	wss_fmt_str(&f, ",\"ppid\":");
	wss_fmt_u64(&f, (uint64_t)wss_sys0(SYS_getppid));
	wss_fmt_str(&f, ",\"profile\":");
	if (profile) {
		char abs[PATH_MAX + 1];
		wss_fmt_t a;
		wss_fmt_init(&a, abs, sizeof abs);
		if (profile[0] != '/') {
			long n = wss_sys2(SYS_getcwd, abs, sizeof abs - 1);
			a.len = n > 1 ? (size_t)n - 1 : 0; /* getcwd's length counts the NUL */
			wss_fmt_ch(&a, '/');
		}
		wss_fmt_str(&a, profile);
		wss_fmt_json_str(&f, wss_fmt_cstr(&a));
	} else {
		wss_fmt_str(&f, "null");
	}
	if (reason) {
		wss_fmt_str(&f, ",\"reason\":");
		wss_fmt_json_str(&f, reason);
	}
	wss_fmt_str(&f, "}\n");
	if (f.overflow)
		return;
	int fd = wss_sys_openat(AT_FDCWD, leader_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	struct stat st;
	if (!wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)) && S_ISREG(st.st_mode))
		wss_write_all(fd, f.buf, f.len);
	wss_sys_close(fd);
}

/* The leader, at its end: how many other processes noted a profile in its
 * own, and how many had none; the directory of the first such profile in
 * dir.  Reads the profile back (descendants write into it, not into our
 * memory).  Returns false if it cannot be read. */
static bool session_count(uint64_t *with, uint64_t *without, char *dir, size_t dirlen)
{
	static const char tag[] = "{\"type\":\"process\",";
	static const char prof[] = "\"profile\":\"";
	*with = *without = 0;
	dir[0] = '\0';
	int fd = wss_sys_openat(AT_FDCWD, leader_path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	static char buf[1 << 16];
	char line[PATH_MAX + 256];
	size_t ll = 0;
	bool skip = false; /* inside a line too long to be a note */
	long n;
	while ((n = wss_sys_read(fd, buf, sizeof buf)) > 0) {
		for (long i = 0; i < n; i++) {
			char c = buf[i];
			if (c != '\n') {
				if (ll < sizeof line - 1)
					line[ll++] = c;
				else
					skip = true;
				continue;
			}
			line[ll] = '\0';
			if (!skip && !strncmp(line, tag, sizeof tag - 1)) {
				const char *p = strstr(line, prof);
				if (!p) {
					(*without)++;
				} else if ((*with)++ == 0) {
					p += sizeof prof - 1;
					const char *q = strchr(p, '"'), *slash = NULL;
					for (const char *x = p; q && x < q; x++)
						if (*x == '/')
							slash = x;
					size_t dl = slash ? (size_t)(slash - p) : 0;
					if (dl && dl < dirlen && !memchr(p, '\\', dl)) {
						memcpy(dir, p, dl);
						dir[dl] = '\0';
					}
				}
			}
			ll = 0;
			skip = false;
		}
	}
	wss_sys_close(fd);
	return n == 0;
}

/* Create this process's profile from the output pattern.  Returns 0 or
 * an errno with the reason in err. */
static int open_profile(char *err, size_t errlen)
{
	const char *prog = E.argc > 0 && E.argv ? E.argv[0] : NULL;
	int r = wss_profile_create(E.cfg.output, E.pid, E.start_unix_ns / 1000000000ULL, prog, E.path, sizeof E.path,
				   &E.fd, err, errlen);
	if (r)
		return r;
	E.no_profile = E.fd < 0;
	if (E.no_profile)
		return 0;
	if (!E.leader)
		session_note(E.path, NULL);
	/* Keep the low descriptor numbers the program would get natively. */
	int high = (int)wss_sys3(SYS_fcntl, E.fd, F_DUPFD_CLOEXEC, 500);
	if (high >= 0) {
		wss_sys_close(E.fd);
		E.fd = high;
	}
	fd_identity(E.fd, &E.fd_dev, &E.fd_ino);
	E.written = 0;
	return 0;
}

/* The header record, into E.out. */
static void format_header(void)
{
	char exe[PATH_MAX];
	readlink_exe(exe, sizeof exe);
	struct utsname u;
	if (uname(&u))
		strcpy(u.release, "unknown");
	wss_profile_header_t h = {
		.pid = E.pid,
		.ppid = getppid(),
		.exe = exe,
		.argc = E.argc,
		.argv = E.argv,
		.kernel = u.release,
		.backend = E.backend->name,
		.backend_reason = backend_reason,
		.backend_sees = E.backend->sees,
		.runtime = runtime,
		.untracked = runtime_untracked,
		.cfg = &E.cfg,
		.start_unix_ns = E.start_unix_ns,
		.page_size = (long)WSS_PAGE_SIZE,
		.max_map_count = E.max_map,
		.vma_budget = E.vma_budget,
	};
	wss_profile_header(&E.out, &h);
}

/* The backend the session asked for.  auto: mprotect, the one backend of
 * this version that sees reads.  Returns 0, or an errno with the one-line
 * reason (naming the missing kernel feature) in err: an explicit backend
 * that cannot run is an error, never a silent fallback. */
static int probe(const wss_backend_t *b, char *why, size_t n)
{
	if (b != &wss_backend_mprotect && E.cfg.test_uffd_unsupported) {
		wss_fmt_t f;
		wss_fmt_init(&f, why, n);
		wss_fmt_str(&f, "userfaultfd write-protect: unsupported (WSS_TEST_UFFD_UNSUPPORTED)");
		wss_fmt_cstr(&f);
		return ENOTSUP;
	}
	return b->probe(why, n);
}

static int choose_backend(char *err, size_t errlen)
{
	char why[256] = "";
	wss_fmt_t e;
	if (E.cfg.backend == WSS_BACKEND_AUTO) {
		/* hybrid where the kernel allows: reads and writes apart.  A
		 * runtime whose memory faults must not touch: uffd-wp, which
		 * tracks all of it without signals. */
		wss_fmt_init(&e, backend_reason, sizeof backend_reason);
		if (runtime && !probe(&wss_backend_uffd_wp, why, sizeof why)) {
			E.backend = &wss_backend_uffd_wp;
			wss_fmt_str(&e, "auto: uffd-wp (a ");
			wss_fmt_str(&e, runtime);
			wss_fmt_str(&e, " program: its runtime makes raw system calls on its own memory, which fail on "
					"pages armed for faults; uffd-wp tracks it without them)");
		} else if (!probe(&wss_backend_hybrid, why, sizeof why)) {
			E.backend = &wss_backend_hybrid;
			wss_fmt_str(&e, "auto: hybrid (userfaultfd async write-protect and PAGEMAP_SCAN work on this kernel)");
		} else {
			E.backend = &wss_backend_mprotect;
			wss_fmt_str(&e, "auto: mprotect; hybrid needs ");
			wss_fmt_str(&e, why);
		}
		wss_fmt_cstr(&e);
		return wss_backend_mprotect.probe(why, sizeof why);
	}
	const wss_backend_t *b = E.cfg.backend == WSS_BACKEND_UFFD_WP ? &wss_backend_uffd_wp
				 : E.cfg.backend == WSS_BACKEND_HYBRID ? &wss_backend_hybrid
								       : &wss_backend_mprotect;
	int r = probe(b, why, sizeof why);
	if (r) {
		wss_fmt_init(&e, err, errlen);
		wss_fmt_str(&e, "track.backend: ");
		wss_fmt_str(&e, b->name);
		wss_fmt_str(&e, " cannot run on this kernel: ");
		wss_fmt_str(&e, why);
		wss_fmt_cstr(&e);
		return r;
	}
	E.backend = b;
	strcpy(backend_reason, "requested");
	return 0;
}

const char *wss_engine_runtime_untracked(void) { return runtime_untracked; }

int wss_engine_init(const wss_engine_start_t *s, char *err, size_t errlen)
{
	E.cfg = *s->cfg;
	runtime = s->runtime;
	int r = choose_backend(err, errlen);
	if (r)
		return r;
	if (runtime && E.backend->fault)
		runtime_untracked = "the runtime's own memory (its mmaps and the executable's data): its raw "
				    "system calls would fail with EFAULT on protected pages; track.backend = "
				    "\"uffd-wp\" tracks it";
	if (wss_shadow_init() || wss_threads_init() || wss_fmt_init_growable(&E.out, 1 << 16) ||
	    wss_regions_reserve(&E.regions, 64)) {
		wss_fmt_t e;
		wss_fmt_init(&e, err, errlen);
		wss_fmt_str(&e, "out of memory setting up the engine");
		wss_fmt_cstr(&e);
		return ENOMEM;
	}
	/* Sites need faults: mprotect and hybrid have them, uffd-wp not. */
	E.peaks = E.cfg.peaks_enabled;
	E.sites = E.peaks && E.backend->fault && !wss_sites_init(E.cfg.peaks_stack_depth);
	if (E.peaks)
		peaks_init();
	long max_map = read_long_file("/proc/sys/vm/max_map_count", 65530);
	/* Our splits may use half of what is left; the application keeps the
	 * rest, and the relieve path covers it if it needs more. */
	E.vma_budget = max_map / 2 - 1024;
	if (E.vma_budget < 64)
		E.vma_budget = 64;
	if (E.cfg.test_vma_budget)
		E.vma_budget = E.cfg.test_vma_budget;

	E.max_map = max_map;
	E.argc = s->argc;
	E.argv = s->argv;
	E.pid = wss_sys_getpid();
	E.start_unix_ns = clock_ns(CLOCK_REALTIME);
	/* WSS_LEADER is "<pid>:<profile>".  The leader's own pid: the leader
	 * exec'd (sh -c 'exec prog', env, nice), and its new image leads on. */
	int lpid = 0;
	const char *lp = s->leader;
	while (lp && *lp >= '0' && *lp <= '9')
		lpid = lpid * 10 + (*lp++ - '0');
	if (lp && *lp == ':')
		session_set(lpid, lp + 1);
	E.leader = !lp || *lp != ':' || lpid == E.pid;
	session_used = lp && *lp == ':' && lpid == E.pid; /* notes of its first image's descendants */
	r = open_profile(err, errlen);
	if (r)
		return r;
	if (!leader_path[0] && !lpid)
		session_set(E.pid, E.no_profile ? "" : E.path);
	E.err_fd = -1;
	if (fd_identity(2, &E.err_dev, &E.err_ino)) {
		E.err_fd = (int)wss_sys3(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 500);
		if (E.err_fd < 0)
			E.err_fd = -1;
	}
	format_header();
	write_record();
	E.epoch = 1;
	E.t0_ns = clock_ns(CLOCK_MONOTONIC);
	E.cpu0_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	__atomic_store_n(&E.tracking, true, __ATOMIC_RELEASE);
	/* Not even the header could be written: the program runs unmeasured,
	 * and says so at exit. */
	__atomic_store_n(&E.measuring, !E.cut_err, __ATOMIC_RELEASE);
	return 0;
}

bool wss_engine_sites(void) { return E.sites || E.cfg.report_hot_pages; }

void wss_engine_module_locked(int id, const char *path, uintptr_t bias, uintptr_t start, uintptr_t end,
			      const char *build_id)
{
	wss_profile_module(&E.out, id, path, bias, start, end, build_id);
	if (!E.open_pending)
		write_record();
}

bool wss_engine_active(void) { return __atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE); }

int wss_engine_own_fds(int out[8])
{
	int c[5] = {__atomic_load_n(&E.fd, __ATOMIC_RELAXED), __atomic_load_n(&E.err_fd, __ATOMIC_RELAXED),
		    __atomic_load_n(&stat_fd, __ATOMIC_RELAXED)};
	wss_uffd_fds(&c[3], &c[4]);
	int n = 0;
	for (int i = 0; i < 5; i++) {
		if (c[i] < 0)
			continue;
		int j = n++;
		for (; j > 0 && out[j - 1] > c[i]; j--) /* sorted */
			out[j] = out[j - 1];
		out[j] = c[i];
	}
	return n;
}

bool wss_engine_owns_fd(int fd)
{
	int own[8], n = wss_engine_own_fds(own);
	for (int i = 0; i < n; i++)
		if (own[i] == fd)
			return fd >= 0;
	return false;
}

bool wss_engine_tracking(void) { return __atomic_load_n(&E.tracking, __ATOMIC_ACQUIRE); }

int wss_engine_start(void)
{
	if (E.cfg.time_base == WSS_TIME_MANUAL || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return 0;
	/* The engine thread starts with every signal blocked, so the
	 * application's SIGTERM, SIGINT, SIGCHLD... go where they would go
	 * without us (heaptrack learned this from a swallowed SIGTERM).  The
	 * synchronous ones too, but for SIGSEGV: one sent with kill() to the
	 * process would otherwise land here whenever the program's threads
	 * block it (a sigwait thread for SIGBUS) and kill the process with
	 * the default action.  Not glibc's own SIGCANCEL and SIGSETXID:
	 * setuid() and friends signal every thread and wait for each to
	 * answer, and would hang for ever on ours (glibc unblocks them in the
	 * first thread it creates, but not in a forked child, where this runs
	 * again).  SIGSEGV is open, in the creating thread and in the engine:
	 * pthread_create runs the loader (lazy binding, TLS set-up) and reads
	 * the caller's memory, the engine thread reads some of the program's
	 * (engine_main), and a touch of an armed page with SIGSEGV blocked is
	 * a kill (issue 11).  SIGSEGV is never blocked in the program's
	 * threads either (signals.c), so one sent by kill() could land in any
	 * of them already. */
	uint64_t block = ~((1ULL << 31) | (1ULL << 32) | (1ULL << (SIGSEGV - 1))), old;
	wss_sys_sigmask(SIG_BLOCK, &block, &old);
	E.app_mask = old;
	E.next_alone_ns = 0;
	if (!__atomic_load_n(&E.pending, __ATOMIC_RELAXED))
		proc_stat_fd(); /* now, while this is the only thread (a pending child: at its start) */
	__atomic_store_n(&E.stop, 0, __ATOMIC_RELAXED);
	int r = pthread_create(&E.thread, NULL, engine_main, NULL);
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		E.started = true;
	return r;
}

/* Stop measuring: every tracked page gets the application's protection back.
 * The registry and the flags stay exact (the hooks keep them up to date), so
 * a thread that faulted on an armed page just before this still finds the
 * page ours and simply reopens it, instead of being sent to the
 * application's handler. */
static void deactivate_locked(void)
{
	__atomic_store_n(&E.measuring, false, __ATOMIC_RELEASE);
	for (size_t i = 0; i < E.regions.n; i++) {
		E.backend->disarm(E.regions.v[i].start, E.regions.v[i].end);
		if (E.backend->detach)
			E.backend->detach(E.regions.v[i].start, E.regions.v[i].end);
	}
}

static void session_say(void);

/* The summary of the samples so far, without hot pages (finish adds them). */
static void summary_locked(wss_profile_summary_t *sum)
{
	uint64_t total = 0;
	uint32_t nt = wss_threads_count();
	for (uint32_t s = 0; s <= nt; s++)
		total += __atomic_load_n(&wss_threads_get(s)->new_pages, __ATOMIC_RELAXED);
	*sum = (wss_profile_summary_t){
		.samples = E.nsamples,
		.data = {E.sum_pages, E.peak_pages, total},
		.write = {E.sum_write, E.peak_write, E.total_write},
		.read = {E.sum_read, E.peak_read, E.total_read},
		.sets = {.writes = E.backend->harvest != NULL, .reads = E.backend->harvest && E.backend->fault},
		.faults = E.faults_total,
		.coarse = E.coarse_total,
		.duration_ns = clock_ns(CLOCK_MONOTONIC) - E.t0_ns,
		.page_size = (long)WSS_PAGE_SIZE,
	};
}

/* An errno's text without the C library's strerror, which may translate
 * (gettext: locks, malloc) and so is not for a signal handler's _exit. */
static const char *cut_reason(int err)
{
	switch (err) {
	case ENOSPC: return "No space left on device";
	case EDQUOT: return "Disk quota exceeded";
	case EFBIG: return "File too large (RLIMIT_FSIZE or the file system's maximum)";
	case EIO: return "Input/output error";
	case EROFS: return "Read-only file system";
	case EBADF: return "Bad file descriptor";
	case EPIPE: return "Broken pipe";
	case EINVAL: return "Invalid argument";
	}
	return "write error";
}

/* The stderr lines at the end: the summary, then where the profile is, or
 * where and why it was cut. */
static void say_summary(const wss_profile_summary_t *sum, bool summary)
{
	/* One summary per session: the leader's (see session_note); any
	 * process says where its profile was cut. */
	if (!E.cfg.report_summary || (!E.leader && !E.cut_err))
		return;
	summary = summary && E.leader;
	static const char *const series[] = {"data", "read", "write"};
	for (int i = 0; summary && i < 3; i++) {
		if ((i == 1 && !sum->sets.reads) || (i == 2 && !sum->sets.writes))
			continue;
		char line[512];
		wss_fmt_t f;
		wss_fmt_init(&f, line, sizeof line);
		wss_profile_summary_text(&f, sum, series[i]);
		say(wss_fmt_cstr(&f), "");
	}
	if (E.no_profile) {
		say("profile: none (the output is a character device)", "");
		return;
	}
	if (!E.cut_err) {
		say("profile: ", E.path);
		session_say();
		return;
	}
	char line[PATH_MAX + 160];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, "profile cut at sample ");
	wss_fmt_u64(&f, E.cut_at);
	wss_fmt_str(&f, ": ");
	wss_fmt_str(&f, cut_reason(E.cut_err));
	wss_fmt_str(&f, " (");
	wss_fmt_str(&f, E.path);
	wss_fmt_str(&f, "); measuring stopped there");
	say(wss_fmt_cstr(&f), "");
}

static void close_err_fd(void)
{
	if (E.err_fd >= 0 && fd_still(E.err_fd, E.err_dev, E.err_ino))
		wss_sys_close(E.err_fd);
	E.err_fd = -1;
}

enum finish_how {
	FINISH_EXIT,  /* exit(): our destructor */
	FINISH_EXEC,  /* exec: quietly */
	FINISH_QUICK, /* _exit and friends: the process ends right after */
};

/* The end of this process's measurement: final sample, summary, every page
 * given back its protection.  Not in a process that is not ours: the child
 * of a fork that ran no fork handlers (_Fork, a raw clone) or of vfork,
 * which still see the parent's engine.  exec: the process image ends here;
 * quietly (no stderr lines), and a forked child that has written nothing
 * yet writes nothing (the exec'd program writes its own); _exit the same
 * way, but with the stderr lines.  A profile already cut (profile_cut) gets
 * no more records, and the stderr lines say where it ends. */
static void finish(enum finish_how how)
{
	if (wss_sys_getpid() != E.pid ||
	    (!__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) && !E.cut_err))
		return;
	wss_lockstate_t ls;
	if (how == FINISH_QUICK) {
		/* _exit may be called from a signal handler, which may have
		 * interrupted a thread the engine thread is waiting for (the
		 * loader's lock around a tick): no join, the process ends
		 * anyway.  The engine lock is waited for a bounded time only:
		 * another thread holding it may itself be stopped behind this
		 * one.  Past that, no summary: the file stays a valid prefix. */
		__atomic_store_n(&E.stop, 1, __ATOMIC_RELEASE);
		wss_sys_futex(&E.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		if (!lock_within(&ls, 2000000000ULL)) {
			if (E.cfg.report_summary)
				say("_exit while wss was busy elsewhere: no summary in ", E.path);
			return;
		}
	} else {
		/* Not when the engine thread itself ends the process (its last
		 * thread gone): it is not looping any more. */
		if (E.started && !pthread_equal(pthread_self(), E.thread)) {
			__atomic_store_n(&E.stop, 1, __ATOMIC_RELEASE);
			wss_sys_futex(&E.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			pthread_join(E.thread, NULL);
			E.started = false;
		}
		wss_engine_lock(&ls);
	}
	if (E.finished) {
		wss_engine_unlock(&ls);
		return;
	}
	E.finished = true;
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED)) {
		/* Cut earlier: nothing more to write, only to say, of the
		 * samples taken up to the cut. */
		wss_profile_summary_t sum;
		summary_locked(&sum);
		if (E.fd >= 0 && fd_still(E.fd, E.fd_dev, E.fd_ino))
			wss_sys_close(E.fd);
		E.fd = -1;
		wss_engine_unlock(&ls);
		if (how != FINISH_EXEC)
			say_summary(&sum, sum.samples > 0);
		close_err_fd();
		return;
	}
	if (E.pending || (how != FINISH_EXIT && E.open_pending)) {
		/* A forked child that has written nothing: it writes nothing
		 * (an exec'd program writes its own profile), and says why in
		 * the leader's. */
		__atomic_store_n(&E.pending, false, __ATOMIC_RELAXED);
		deactivate_locked();
		wss_engine_unlock(&ls);
		session_note(NULL, how == FINISH_EXEC ? "exec before its first sample" : "exit before its first sample");
		close_err_fd();
		return;
	}
	tick_locked(true);
	wss_profile_summary_t sum;
	summary_locked(&sum);
	wss_profile_hot_t *hot = hot_pages_locked(&sum.nhot);
	sum.hot = hot;
	wss_profile_summary(&E.out, &sum);
	write_record();
	if (hot)
		wss_sys_free(hot, E.cfg.report_hot_pages * sizeof *hot);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		deactivate_locked();
	if (E.fd >= 0 && fd_still(E.fd, E.fd_dev, E.fd_ino)) /* never a descriptor the program reused */
		wss_sys_close(E.fd);
	E.fd = -1;
	wss_engine_unlock(&ls);

	if (how != FINISH_EXEC)
		say_summary(&sum, true);
	close_err_fd();
}

void wss_engine_finish(void) { finish(FINISH_EXIT); }

/* The leader's last line: the other profiles of the session so far. */
static void session_say(void)
{
	uint64_t with, without;
	char dir[PATH_MAX];
	if (!session_used || !session_count(&with, &without, dir, sizeof dir) || (!with && !without))
		return;
	char line[2 * PATH_MAX + 160];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_u64(&f, with);
	wss_fmt_str(&f, with == 1 ? " more profile" : " more profiles");
	wss_fmt_str(&f, " from this session");
	if (dir[0]) {
		wss_fmt_str(&f, ", in ");
		wss_fmt_str(&f, dir);
	}
	if (without) {
		wss_fmt_str(&f, "; ");
		wss_fmt_u64(&f, without);
		wss_fmt_str(&f, without == 1 ? " forked child wrote none" : " forked children wrote none");
	}
	wss_fmt_str(&f, "; all listed in ");
	say(wss_fmt_cstr(&f), leader_path);
}

void wss_engine_exec(void) { finish(FINISH_EXEC); }

/* _exit on a thread that holds the engine lock: a handler for a
 * synchronous signal interrupted one of our locked sections.  Whatever that
 * section was doing is left half done, so nothing of it is used: no final
 * sample and no hot pages; the summary of the samples written so far goes
 * straight to the file, after its last whole record, and says it is
 * incomplete. */
static void finish_interrupted(void)
{
	if (E.finished || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return;
	E.finished = true;
	__atomic_store_n(&E.measuring, false, __ATOMIC_RELEASE);
	wss_profile_summary_t sum;
	summary_locked(&sum);
	sum.incomplete = "_exit from a signal handler that interrupted wss: no final sample";
	char buf[1024];
	wss_fmt_t f;
	wss_fmt_init(&f, buf, sizeof buf);
	wss_profile_summary(&f, &sum);
	if (E.fd >= 0 && !E.open_pending && !f.overflow && fd_still(E.fd, E.fd_dev, E.fd_ino)) {
		wss_sys2(SYS_ftruncate, E.fd, E.written);
		int r = wss_write_own(E.fd, f.buf, f.len, true);
		if (r) {
			E.cut_err = r;
			E.cut_at = E.samples_out + 1;
			wss_sys2(SYS_ftruncate, E.fd, E.written);
		}
	}
	say("_exit from a signal handler that interrupted wss: the summary has no final sample", "");
	say_summary(&sum, true);
}

void wss_engine_exit(void)
{
	if (lock_mine) {
		if (wss_sys_getpid() == E.pid)
			finish_interrupted();
		return;
	}
	finish(FINISH_QUICK);
}

/* fork: extent hooks take the engine lock while jemalloc holds its own, so
 * the lock order is jemalloc -> engine.  preload registers these handlers
 * before jemalloc registers its own (on the first malloc), and prepare
 * handlers run in reverse order of registration: jemalloc's run first, then
 * ours, which keeps the order and cannot deadlock. */
static wss_lockstate_t fork_ls;

void wss_engine_fork_prepare(void) { wss_engine_lock(&fork_ls); }

void wss_engine_fork_parent(void)
{
	session_used = true;
	wss_engine_unlock(&fork_ls);
}

/* A forked child that is not measured: every page back to its own
 * protection, nothing written, the lock taken in prepare released. */
static void child_unmeasured(void)
{
	if (E.err_fd >= 0 && fd_still(E.err_fd, E.err_dev, E.err_ino))
		wss_sys_close(E.err_fd);
	E.err_fd = -1;
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		deactivate_locked();
	E.finished = true;
	E.lock = 0;
	lock_mine = false;
	wss_sys_sigmask(SIG_SETMASK, &fork_ls.oldmask, NULL);
}

/* Start measuring a forked child afresh, as at start-up, with the child's
 * pid: every tracked page's history and "ever touched" flag cleared (the
 * parent's touches are not the child's), epoch 1, the backend reopened, and
 * every tracked page armed again (the parent had opened the ones it touched
 * in its last interval, and fork copied that).  The profile is created on
 * the first write.  Engine lock held. */
static void child_start_locked(void)
{
	/* Pending: handlers and pins record nothing, so these stores race
	 * with no recorder. */
	for (size_t i = 0; i < E.regions.n; i++)
		for (uintptr_t a = E.regions.v[i].start; a < E.regions.v[i].end; a += WSS_PAGE_SIZE) {
			reset_page(a);
			uint8_t *fl = wss_shadow_flags(a);
			if (*fl & (WSS_PF_EVER | WSS_PF_WEVER))
				__atomic_and_fetch(fl, (uint8_t)~(WSS_PF_EVER | WSS_PF_WEVER), __ATOMIC_RELAXED);
			*wss_shadow_rever(a) = 0;
		}
	E.nsamples = E.sum_pages = E.peak_pages = E.faults_total = E.coarse_total = 0;
	E.sum_write = E.peak_write = E.total_write = E.sum_read = E.peak_read = E.total_read = 0;
	E.samples_out = 0;
	if (E.sites)
		wss_sites_fork_child();
	if (E.peaks)
		peaks_init();
	__atomic_store_n(&E.coarse, 0, __ATOMIC_RELAXED);
	if (E.backend->reopen) {
		char why[256] = "";
		if (E.backend->reopen(why, sizeof why)) {
			wss_log("cannot measure a forked child: ", why, NULL);
			__atomic_store_n(&E.pending, false, __ATOMIC_SEQ_CST);
			deactivate_locked();
			E.finished = true;
			return;
		}
		for (size_t i = 0; i < E.regions.n; i++)
			E.backend->observe(E.regions.v[i].start, E.regions.v[i].end);
	}
	proc_stat_fd();
	E.start_unix_ns = clock_ns(CLOCK_REALTIME);
	E.t0_ns = clock_ns(CLOCK_MONOTONIC);
	E.cpu0_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	wss_fmt_reset(&E.out);
	format_header();
	E.open_pending = true;
	/* Recording from here on, then arming: a handler that read pending
	 * as true is in flight, and is waited for, so the page it opened is
	 * armed after it (the tick's epoch/in-flight protocol). */
	__atomic_store_n(&E.epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&E.pending, false, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&E.inflight[0], __ATOMIC_SEQ_CST) || __atomic_load_n(&E.inflight[1], __ATOMIC_SEQ_CST))
		wss_sys_sched_yield();
	arm_begin();
	for (size_t i = 0; i < E.regions.n; i++)
		arm_unpinned(E.regions.v[i].start, E.regions.v[i].end);
	__atomic_store_n(&E.vma_delta, 0, __ATOMIC_RELAXED);
	arm_end();
}

/* The engine thread of a pending child, one interval after the fork. */
static void child_start(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (__atomic_load_n(&E.pending, __ATOMIC_RELAXED) && __atomic_load_n(&E.measuring, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&E.stop, __ATOMIC_RELAXED))
		child_start_locked();
	wss_engine_unlock(&ls);
}

/* The child of fork.  Only the forking thread exists; it holds the engine
 * lock (taken in prepare), so no tick and no registry change was in
 * progress, but other threads of the parent may have been inside the fault
 * handler or a pinned call: their inflight counts and pins are cleared,
 * since those threads are gone.
 *
 * session.follow_fork = false: stop measuring, write nothing.
 * follow_fork = true: the child is pending: it starts measuring one
 * interval after the fork (child_start_locked, run by its engine thread),
 * and until then records nothing and writes nothing.  Shells, make and
 * build systems fork thousands of children that exec or exit at once: each
 * of those now costs little more than a native fork, and leaves only a line
 * in the leader's profile saying why it has no profile of its own.  Memory
 * written after a fork costs a copy-on-write fault per page, and the reset
 * and re-arming write the shadow of every tracked page, so a pending child
 * writes as little as it can.  Its memory keeps the state fork copied: the
 * pages the parent had armed stay armed (a touch opens them, unrecorded),
 * so its kernel calls are still pinned.  The engine thread is still
 * started at fork (wss_engine_fork_child_late): a child that only computes
 * calls none of our hooks, and a thread is what can start it in time (a
 * signal handler could not start one safely); it costs about a tenth of
 * what the rest of the start cost (bench/RESULTS.md).  time_base manual
 * starts at once: the program ends the intervals, and no thread runs. */
void wss_engine_fork_child(void)
{
	E.started = false;
	if (E.fd >= 0 && fd_still(E.fd, E.fd_dev, E.fd_ino))
		wss_sys_close(E.fd);
	E.fd = -1;
	E.open_pending = false;
	__atomic_store_n(&E.inflight[0], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&E.inflight[1], 0, __ATOMIC_RELAXED);
	/* Pins of the parent's other threads die with them.  The forking
	 * thread's own stay (fork from a signal handler that interrupted a
	 * pinned read, or inside pthread_once's init routine): the call
	 * resumes in the child, under the thread's new slot.  Only the used
	 * slots are written: each page of the table written is a copy. */
	if (E.backend->forked)
		E.backend->forked(); /* before anything could use the parent's */
	uint32_t old_slot = wss_threads_self();
	wss_threads_reset();
	E.pid = wss_sys_getpid();
	uint32_t new_slot = wss_threads_self();
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
	if (!E.cfg.follow_fork || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || E.finished) {
		child_unmeasured();
		return;
	}
	E.leader = false; /* silent; notes itself in the leader's profile */
	E.t0_ns = clock_ns(CLOCK_MONOTONIC);
	wss_fmt_reset(&E.out);
	if (E.cfg.time_base == WSS_TIME_MANUAL)
		child_start_locked();
	else
		__atomic_store_n(&E.pending, true, __ATOMIC_SEQ_CST);
	E.lock = 0;
	lock_mine = false;
	wss_sys_sigmask(SIG_SETMASK, &fork_ls.oldmask, NULL);
}

void wss_engine_fork_child_late(void)
{
	if (E.cfg.follow_fork && !E.finished && __atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) && !E.started &&
	    wss_engine_start())
		wss_log("cannot start the engine thread in a forked child: its profile has only the final sample", NULL);
}
