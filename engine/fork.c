/* fork, the engine's side.  Two sets of handlers bracket jemalloc's, in
 * lock order (wss_lock_rank_t): the outer ones (registered by preload/
 * init.c after jemalloc's, so their prepare runs first) take the tick lock,
 * jemalloc's take its mutexes, the inner ones (registered by preload/
 * malloc.c before jemalloc initialises) take the engine lock.  The child
 * either stops measuring cleanly or starts afresh one interval later with
 * its own pid, history and profile. */
#include "config.h"
#include "engine/internal.h"

#include <string.h>

#include "engine/sites.h"

/* fork: extent hooks take the engine lock while jemalloc holds its own, so
 * the lock order is jemalloc -> engine.  preload registers these handlers
 * before jemalloc registers its own (on the first malloc), and prepare
 * handlers run in reverse order of registration: jemalloc's run first, then
 * ours, which keeps the order and cannot deadlock. */
static wss_lockstate_t fork_ls;

void wss_engine_fork_prepare(void) { wss_engine_lock(&fork_ls); }

void wss_engine_fork_parent(void)
{
	wss_session_used(true);
	wss_engine_unlock(&fork_ls);
}

/* A forked child that is not measured: every page back to its own
 * protection, nothing written, the lock taken in prepare released. */
static void child_unmeasured(void)
{
	wss_out_close_err();
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		wss_lifecycle_deactivate_locked(false);
	E.finished = true;
	wss_lock_child_release(&fork_ls);
}

/* Start measuring a forked child afresh, as at start-up, with the child's
 * pid: every tracked page's history and "ever touched" flag cleared (the
 * parent's touches are not the child's), epoch 1, the backend reopened, and
 * every tracked page armed again (the parent had opened the ones it touched
 * in its last interval, and fork copied that).  The profile is created on
 * the first write.  Engine lock held. */
static void reset_page(uintptr_t a, void *arg)
{
	(void)arg;
	wss_registry_reset_page(a);
	uint8_t *fl = wss_shadow_flags(a);
	if (*fl & (WSS_PF_EVER | WSS_PF_WEVER))
		__atomic_and_fetch(fl, (uint8_t)~(WSS_PF_EVER | WSS_PF_WEVER), __ATOMIC_RELAXED);
	uint8_t *rv = wss_shadow_rever(a);
	if (*rv)
		*rv = 0;
}


static void child_start_locked(void)
{
	/* Pending: handlers and pins record nothing, so these stores race
	 * with no recorder. */
	for (size_t i = 0; i < E.regions.n; i++)
		wss_sampling_state_pages(E.regions.v[i].start, E.regions.v[i].end, reset_page, NULL);
	/* The child's backend observes none of the parent's members, and
	 * watches its members alone (no all writes: sampling.c) when it
	 * observes the ranges below. */
	wss_sparse_fork_child();
	E.all_writes = false;
	E.nsamples = E.sum_pages = E.peak_pages = E.faults_total = E.coarse_total = 0;
	memset(E.kind, 0, sizeof E.kind);
	E.kinds_seen = 0;
	E.sum_write = E.peak_write = E.total_write = E.sum_read = E.peak_read = E.total_read = 0;
	E.sum_code = E.peak_code = 0;
	E.code_lower_bound = false;
	wss_code_fork_child();
	E.samples_out = 0;
	if (E.sites || wss_allocs_on())
		wss_sites_fork_child();
	wss_allocs_fork_child();
	if (E.peaks)
		wss_findings_init();
	wss_findings_hot_init();
	__atomic_store_n(&E.coarse, 0, __ATOMIC_RELAXED);
	if (E.backend->reopen) {
		char why[256] = "";
		if (E.backend->reopen(why, sizeof why)) {
			wss_log("cannot measure a forked child: ", why, NULL);
			__atomic_store_n(&E.pending, false, __ATOMIC_SEQ_CST);
			wss_lifecycle_deactivate_locked(false);
			E.finished = true;
			return;
		}
		for (size_t i = 0; i < E.regions.n; i++)
			wss_registry_observe(E.regions.v[i].start, E.regions.v[i].end);
	}
	wss_census_fork_child();
	wss_clock_stat_fd();
	E.start_unix_ns = wss_clock_ns(CLOCK_REALTIME);
	E.t0_ns = wss_clock_ns(CLOCK_MONOTONIC);
	E.cpu0_ns = wss_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	wss_fmt_reset(&E.out);
	wss_out_header();
	E.open_pending = true;
	E.lazy_open = false; /* it has lived an interval: it writes its profile */
	/* Recording from here on, then arming: a handler that read pending
	 * as true is in flight, and is waited for, so the page it opened is
	 * armed after it (the tick's epoch/in-flight protocol). */
	__atomic_store_n(&E.epoch, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&E.pending, false, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&E.inflight[0], __ATOMIC_SEQ_CST) || __atomic_load_n(&E.inflight[1], __ATOMIC_SEQ_CST))
		wss_sys_sched_yield();
	wss_sampling_fork_child();
}

/* The engine thread of a pending child, one interval after the fork. */
void wss_fork_child_start(void)
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
	/* Before the child's first allocation: an allocation site's capture
	 * would wait for ever on the unwinder's mutex, had a parent thread
	 * held it at the fork (allocstress's forker hung there). */
	wss_sites_fork_no_capture();
	E.started = false;
	wss_out_close();
	wss_trace_fork_child();
	E.open_pending = false;
	wss_fault_fork_child(); /* in-flight and opening counts, the touched lists */
	/* The write window's lock (writes.c) is taken without the engine
	 * lock by a program thread's fault (wss_engine_split_write), which
	 * may have read the window open just before a tick closed it: fork's
	 * engine lock does not exclude it.  Held at the fork by a thread the
	 * child does not have, it would stay held for ever, and the child's
	 * next harvest and its next fault in a window would spin on it.  No
	 * tick is running (we hold the engine lock), so the window is closed
	 * and what that holder did under the lock is of no interval the
	 * child counts. */
	__atomic_store_n(&E.wlock, 0, __ATOMIC_RELAXED);
	wss_code_fork_now();    /* the code table's reader counts */
	if (E.backend->forked)
		E.backend->forked(); /* before anything could use the parent's */
	uint32_t old_slot = wss_threads_self();
	wss_threads_reset();
	E.pid = wss_sys_getpid();
	uint32_t new_slot = wss_threads_self();
	/* Pins of the parent's other threads die with them.  The forking
	 * thread's own stay (fork from a signal handler that interrupted a
	 * pinned read, or inside pthread_once's init routine): the call
	 * resumes in the child, under the thread's new slot.  Only the used
	 * slots are written: each page of the table written is a copy. */
	wss_pins_fork_child(old_slot, new_slot);
	/* The same for the stacks: the forking thread's is its new slot's;
	 * the other threads' stacks are memory of no thread here. */
	for (size_t i = 0; i < E.regions.n; i++)
		if (E.regions.v[i].owner)
			E.regions.v[i].owner = E.regions.v[i].owner == old_slot ? new_slot : 0;
	E.main_stack_owner = E.main_stack_owner == old_slot ? new_slot : 0;
	if (!E.set.follow_fork || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) || E.finished) {
		child_unmeasured();
		return;
	}
	E.leader = false; /* silent; notes itself in the leader's profile */
	E.t0_ns = wss_clock_ns(CLOCK_MONOTONIC);
	wss_fmt_reset(&E.out);
	if (E.set.time_base == WSS_ENGINE_MANUAL)
		child_start_locked();
	else
		__atomic_store_n(&E.pending, true, __ATOMIC_SEQ_CST);
	wss_lock_child_release(&fork_ls);
}

void wss_engine_fork_outer_prepare(void) { wss_loader_fork_prepare(); }

void wss_engine_fork_outer_parent(void) { wss_loader_fork_parent(); }

/* After jemalloc's child handler: malloc works again, so a followed
 * child's engine thread can start. */
void wss_engine_fork_outer_child(void)
{
	wss_loader_fork_child();
	if (E.set.follow_fork && !E.finished && __atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) && !E.started &&
	    wss_engine_start())
		wss_log("cannot start the engine thread in a forked child: its profile has only the final sample", NULL);
}
