/* The engine lock and the lock-order witness.  The engine lock is a futex
 * mutex taken with asynchronous signals blocked, so a signal handler on the
 * same thread cannot re-enter it; it serialises the registry, the tick and
 * the profile.  The witness checks, per thread, that the locks we own are
 * taken in the order of wss_lock_rank_t (internal.h), as jemalloc's witness
 * does: a violation is a deadlock waiting for the right interleaving. */
#include "config.h"
#include "engine/internal.h"

#include <linux/futex.h>
#include <stdlib.h>

/* The ranks this thread holds, one bit each.  A signal handler that takes
 * and gives a lock leaves the word as it found it, so the plain
 * read-modify-writes here are safe against handlers on the same thread. */
static __thread uint32_t held_ranks __attribute__((tls_model("initial-exec")));
static uint32_t violations;

void wss_witness_take(wss_lock_rank_t r)
{
	uint32_t bit = 1U << r;
	if (held_ranks & ~(bit - 1)) {
		/* A rank at or above r is held.  Never harm the program for
		 * it: count, say so once, and abort only in debug builds. */
		if (__atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED) == 0)
			wss_log("lock order violated (taking rank ", r == WSS_RANK_TICK ? "tick" : r == WSS_RANK_ENGINE ? "engine" : "window",
				" above a later one): please report this", NULL);
		if (WSS_DEBUG)
			abort();
	}
	held_ranks |= bit;
}

void wss_witness_give(wss_lock_rank_t r) { held_ranks &= ~(1U << r); }

uint32_t wss_witness_violations(void) { return __atomic_load_n(&violations, __ATOMIC_RELAXED); }

/* Does this thread hold the engine lock?  A program's handler for a
 * synchronous signal (those stay open under the lock) that calls _exit may
 * have interrupted it there (wss_engine_exit). */
static __thread bool lock_mine __attribute__((tls_model("initial-exec")));

/* Take the lock, waiting at most timeout_ns (0: for ever); false when it
 * could not be had in time (the signal mask is then as it was). */
bool wss_lock_within(wss_lockstate_t *ls, uint64_t timeout_ns)
{
	uint64_t block = ~WSS_SYNC_SIGNALS;
	wss_sys_sigmask(SIG_BLOCK, &block, &ls->oldmask);
	int c = 0;
	if (__atomic_compare_exchange_n(&E.lock, &c, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		lock_mine = true;
		wss_witness_take(WSS_RANK_ENGINE);
		return true;
	}
	uint64_t deadline = timeout_ns ? wss_clock_ns(CLOCK_MONOTONIC) + timeout_ns : 0;
	if (c != 2)
		c = __atomic_exchange_n(&E.lock, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		struct timespec ts, *tp = NULL;
		if (deadline) {
			uint64_t now = wss_clock_ns(CLOCK_MONOTONIC);
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
	wss_witness_take(WSS_RANK_ENGINE);
	return true;
}

void wss_engine_lock(wss_lockstate_t *ls) { wss_lock_within(ls, 0); }

void wss_engine_unlock(wss_lockstate_t *ls)
{
	lock_mine = false;
	wss_witness_give(WSS_RANK_ENGINE);
	if (__atomic_fetch_sub(&E.lock, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&E.lock, 0, __ATOMIC_RELEASE);
		wss_sys_futex(&E.lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	wss_sys_sigmask(SIG_SETMASK, &ls->oldmask, NULL);
}

bool wss_lock_mine(void) { return lock_mine; }

void wss_lock_child_release(wss_lockstate_t *ls)
{
	E.lock = 0;
	lock_mine = false;
	wss_witness_give(WSS_RANK_ENGINE);
	wss_sys_sigmask(SIG_SETMASK, &ls->oldmask, NULL);
}
