/* Per-page touch state and the lock-free protocol between the fault path and
 * the tick.  Each tracked page keeps the two most recent intervals in which it
 * was first touched, each with the thread slot that touched it:
 *
 *   cur  = last  | owner << 32      (most recent interval, its toucher)
 *   prev = plast | powner << 32     (the one before)
 *
 * Both words change together with one cmpxchg16b, so readers never see a
 * mixed pair.  Why two: the tick for sample k runs after the epoch has moved
 * to k+1, and handlers of k+1 may already have recorded a page before the
 * scan reaches it.  The epoch protocol (engine/fault.c) guarantees that when the
 * scan runs, every handler that read epoch <= k has finished, and no handler
 * can have read k+2; so the newest touch at or before k is `cur` when
 * cur.last <= k, else `prev`.  Interval 0 means "never". */
#ifndef WSS_ENGINE_PAGESTATE_H
#define WSS_ENGINE_PAGESTATE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct wss_page {
	uint64_t cur;
	uint64_t prev;
} __attribute__((aligned(16))) wss_page_t;

static inline uint64_t wss_page_pack(uint32_t interval, uint32_t owner)
{
	return (uint64_t)interval | (uint64_t)owner << 32;
}

/* 16-byte compare-and-swap; on failure lo and hi get the current value.
 * Lock-free (lock cmpxchg16b), AS-safe. */
static inline bool wss_cas16(wss_page_t *p, uint64_t *lo, uint64_t *hi, uint64_t nlo, uint64_t nhi)
{
	bool ok;
	__asm__ volatile("lock cmpxchg16b %1"
			 : "=@ccz"(ok), "+m"(*p), "+a"(*lo), "+d"(*hi)
			 : "b"(nlo), "c"(nhi)
			 : "memory");
	return ok;
}

/* Atomic 16-byte read (a CAS that writes back what it finds).  AS-safe. */
static inline void wss_page_load(wss_page_t *p, uint64_t *lo, uint64_t *hi)
{
	*lo = 0;
	*hi = 0;
	wss_cas16(p, lo, hi, 0, 0);
}

/* Record that slot touched the page in interval e.  Keeps cur and prev as the
 * two newest distinct intervals.  Returns true when this call recorded the
 * first touch of the page in e (so exactly one caller per page and interval
 * counts it).  Lock-free, AS-safe. */
static inline bool wss_page_record(wss_page_t *p, uint32_t e, uint32_t slot)
{
	uint64_t lo = __atomic_load_n(&p->cur, __ATOMIC_RELAXED);
	uint64_t hi = __atomic_load_n(&p->prev, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t last = (uint32_t)lo, plast = (uint32_t)hi;
		uint64_t nlo, nhi;
		if (e == last || e == plast)
			return false;
		if (e > last) {
			nlo = wss_page_pack(e, slot);
			nhi = lo;
		} else if (e > plast) {
			/* A handler of e finishing after one of e+1 (see above). */
			nlo = lo;
			nhi = wss_page_pack(e, slot);
		} else {
			return false; /* older than both: excluded by the tick protocol */
		}
		if (wss_cas16(p, &lo, &hi, nlo, nhi))
			return true;
	}
}

/* Was the page touched in interval k itself?  The same reads as below.
 * AS-safe. */
static inline bool wss_page_touched_in(wss_page_t *p, uint32_t k)
{
	uint64_t lo = __atomic_load_n(&p->cur, __ATOMIC_ACQUIRE);
	if ((uint32_t)lo == k)
		return true;
	if ((uint32_t)lo < k)
		return false;
	uint64_t hi;
	wss_page_load(p, &lo, &hi);
	return (uint32_t)lo == k || (uint32_t)hi == k;
}

/* Is the page in the window of sample k (intervals k-w+1..k)?  If so, store
 * the owning thread slot (the toucher of its newest interval <= k).  Reads
 * with one 8-byte load in the common case and a 16-byte atomic read only when
 * a handler of k+1 got there first.  AS-safe. */
static inline bool wss_page_in_window(wss_page_t *p, uint32_t k, uint32_t w, uint32_t *owner)
{
	uint64_t lo = __atomic_load_n(&p->cur, __ATOMIC_ACQUIRE);
	uint32_t last = (uint32_t)lo;
	if (last == 0)
		return false;
	if (last > k) {
		uint64_t hi;
		wss_page_load(p, &lo, &hi);
		if ((uint32_t)lo > k)
			lo = hi;
		last = (uint32_t)lo;
		if (last == 0 || last > k)
			return false;
	}
	if ((uint64_t)last + w <= k)
		return false;
	*owner = (uint32_t)(lo >> 32);
	return true;
}

/* Write history: the two latest intervals in which a page was seen
 * written, last | plast << 32, like the touch history and for the same
 * reason: the tick for k may learn of a write of k + 1 (a fault of the
 * window, engine/writes.c) before it counts k's.  Not atomic: its writers are
 * serialised (engine/writes.c). */
static inline void wss_written_set(uint64_t *w, uint32_t k)
{
	uint32_t last = (uint32_t)*w, plast = (uint32_t)(*w >> 32);
	if (k == last || k == plast)
		return;
	if (k > last)
		*w = (uint64_t)k | (uint64_t)last << 32;
	else if (k > plast)
		*w = (uint64_t)last | (uint64_t)k << 32;
}

/* Was the page written in the window of sample k (intervals k-w+1..k)? */
static inline bool wss_written_in(uint64_t w, uint32_t k, uint32_t win)
{
	uint32_t last = (uint32_t)w;
	if (last > k)
		last = (uint32_t)(w >> 32);
	return last && last <= k && (uint64_t)last + win > k;
}

#endif
