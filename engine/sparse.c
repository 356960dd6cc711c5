/* The sparse-range table (sparse.h): a small array of (start | flags, end)
 * entries, changed under the engine lock and read by the fault path with a
 * sequence counter, so that a reader never sees a range half split (a page
 * that stays tracked through a split must never look untracked: its fault
 * would go to the program's handler).  A reader waits only for the few
 * stores of one update, made by a thread holding the engine lock with
 * asynchronous signals blocked, which touches no tracked page meanwhile. */
#include "config.h"
#include "engine/sparse.h"

#include <errno.h>

#include "common/sys.h"

#define FLAGS_MASK 0xfffULL

static uint64_t start_v[WSS_SPARSE_SLOTS]; /* start | flags; 0: free */
static uint64_t end_v[WSS_SPARSE_SLOTS];   /* end | span (sample.h's cluster span) */
static uint8_t fine_v[WSS_SPARSE_SLOTS], watched_v[WSS_SPARSE_SLOTS]; /* engine lock only */
static uint32_t gen;  /* odd while an update is in progress */
static uint32_t hwm;  /* slots [0, hwm) may be in use */
static uint32_t live; /* slots in use */

bool wss_sparse_any(void) { return __atomic_load_n(&live, __ATOMIC_ACQUIRE) != 0; }

/* The writer's side of the sequence counter.  The release fence orders the
 * odd count before the entry stores; the release store of the even count
 * orders them before it. */
static void w_begin(void)
{
	__atomic_store_n(&gen, gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void w_end(void) { __atomic_store_n(&gen, gen + 1, __ATOMIC_RELEASE); }

static void set_slot(uint32_t i, uintptr_t s, uintptr_t e, uint8_t flags, uint8_t span)
{
	bool was = start_v[i] != 0, is = s < e;
	__atomic_store_n(&start_v[i], is ? (uint64_t)s | flags : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&end_v[i], is ? (uint64_t)e | span : 0, __ATOMIC_RELAXED);
	if (is && i >= hwm)
		__atomic_store_n(&hwm, i + 1, __ATOMIC_RELAXED);
	if (was != is)
		__atomic_store_n(&live, is ? live + 1 : live - 1, __ATOMIC_RELEASE);
}

/* The entry overlapping [at, e) that starts lowest, as stored (0, 0:
 * none), read under the sequence counter: a reader never sees an entry
 * half split.  Lock-free, AS-safe: the fault path looks a page up, and
 * the pin path (pins.c, in any thread) walks designs too. */
static void scan(uintptr_t at, uintptr_t e, uint64_t *lo, uint64_t *hi)
{
	for (;;) {
		uint32_t g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
		if (g & 1) {
			wss_sys_sched_yield();
			continue;
		}
		uint32_t n = __atomic_load_n(&hwm, __ATOMIC_RELAXED);
		*lo = *hi = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t a = __atomic_load_n(&start_v[i], __ATOMIC_RELAXED);
			uint64_t b = __atomic_load_n(&end_v[i], __ATOMIC_RELAXED);
			if (a && (a & ~FLAGS_MASK) < e && (b & ~FLAGS_MASK) > at &&
			    (!*lo || (a & ~FLAGS_MASK) < (*lo & ~FLAGS_MASK))) {
				*lo = a;
				*hi = b;
			}
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&gen, __ATOMIC_RELAXED) == g)
			return;
	}
}

/* The entry holding addr (entries never overlap). */
static void lookup(uintptr_t addr, uint64_t *lo, uint64_t *hi) { scan(addr, addr + 1, lo, hi); }

uint8_t wss_sparse_find(uintptr_t addr, uintptr_t *s, uintptr_t *e)
{
	uint64_t lo, hi;
	lookup(addr, &lo, &hi);
	if (s)
		*s = (uintptr_t)(lo & ~FLAGS_MASK);
	if (e)
		*e = (uintptr_t)(hi & ~FLAGS_MASK);
	return (uint8_t)(lo & 0xff);
}

unsigned wss_sparse_span(uintptr_t addr, uintptr_t *s, uintptr_t *e)
{
	uint64_t lo, hi;
	lookup(addr, &lo, &hi);
	*s = (uintptr_t)(lo & ~FLAGS_MASK);
	*e = (uintptr_t)(hi & ~FLAGS_MASK);
	return (unsigned)(hi & FLAGS_MASK);
}

uint64_t wss_sparse_units(unsigned level, uint64_t *pages)
{
	uint64_t u = 0, n = 0;
	uint32_t h = __atomic_load_n(&hwm, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < h; i++) {
		uint64_t a = __atomic_load_n(&start_v[i], __ATOMIC_RELAXED);
		uint64_t b = __atomic_load_n(&end_v[i], __ATOMIC_RELAXED);
		if (!a)
			continue;
		uint64_t p0 = (a & ~FLAGS_MASK) >> WSS_PAGE_SHIFT, p1 = (b & ~FLAGS_MASK) >> WSS_PAGE_SHIFT;
		unsigned span = (unsigned)(b & FLAGS_MASK), sh = level > span ? level : span;
		n += p1 - p0;
		/* The blocks it meets, its cut ends included (each may arm a
		 * run): a piece of a few pages still holds one. */
		u += ((p1 - 1) >> sh) - (p0 >> sh) + 1;
	}
	*pages = n;
	return u;
}

static int free_slot(void)
{
	for (uint32_t i = 0; i < WSS_SPARSE_SLOTS; i++)
		if (!start_v[i])
			return (int)i;
	return -1;
}

static uint32_t free_slots(void) { return WSS_SPARSE_SLOTS - live; }

int wss_sparse_add(uintptr_t s, uintptr_t e, uint8_t flags, unsigned span)
{
	int i = live < WSS_SPARSE_RANGES ? free_slot() : -1;
	if (i < 0)
		return ENOSPC;
	w_begin();
	set_slot((uint32_t)i, s, e, flags, (uint8_t)span);
	w_end();
	fine_v[i] = watched_v[i] = WSS_SPARSE_NONE;
	return 0;
}

static uintptr_t slot_s(uint32_t i) { return (uintptr_t)(start_v[i] & ~FLAGS_MASK); }
static uintptr_t slot_e(uint32_t i) { return (uintptr_t)(end_v[i] & ~FLAGS_MASK); }
static uint8_t slot_f(uint32_t i) { return (uint8_t)(start_v[i] & 0xff); }
static uint8_t slot_span(uint32_t i) { return (uint8_t)(end_v[i] & FLAGS_MASK); }

/* The live slot with the lowest start among those overlapping [s, e), or
 * -1.  Entries never overlap one another. */
static int first_in(uintptr_t s, uintptr_t e)
{
	int best = -1;
	for (uint32_t i = 0; i < hwm; i++)
		if (start_v[i] && slot_s(i) < e && slot_e(i) > s && (best < 0 || slot_s(i) < slot_s((uint32_t)best)))
			best = (int)i;
	return best;
}

void wss_sparse_walk(uintptr_t s, uintptr_t e, void (*dense)(uintptr_t, uintptr_t, void *),
		     void (*sparse)(wss_sparse_part_t *, void *), void *arg)
{
	uintptr_t at = s;
	while (at < e) {
		int i = live ? first_in(at, e) : -1;
		uintptr_t ps = i < 0 ? e : (slot_s((uint32_t)i) > at ? slot_s((uint32_t)i) : at);
		if (ps > at && dense)
			dense(at, ps, arg);
		if (i < 0)
			return;
		wss_sparse_part_t p = {ps,	 slot_e((uint32_t)i) < e ? slot_e((uint32_t)i) : e,
				       slot_f((uint32_t)i), (uint32_t)i,
				       fine_v[i],	 watched_v[i],
				       slot_span((uint32_t)i)};
		if (sparse)
			sparse(&p, arg);
		fine_v[i] = p.fine;
		watched_v[i] = p.watched;
		at = p.e;
	}
}

/* The piece of [at, e) that starts lowest ([*ps, *pe), its span; false:
 * none), whole as stored (scan). */
static bool next_piece(uintptr_t at, uintptr_t e, uintptr_t *ps, uintptr_t *pe, unsigned *span)
{
	uint64_t blo, bhi;
	scan(at, e, &blo, &bhi);
	*ps = (uintptr_t)(blo & ~FLAGS_MASK);
	*pe = (uintptr_t)(bhi & ~FLAGS_MASK);
	*span = (unsigned)(bhi & FLAGS_MASK);
	return blo != 0;
}

void wss_sparse_designs(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t s, uintptr_t e, unsigned span, void *arg),
			void *arg)
{
	uintptr_t at = s;
	while (at < e) {
		uintptr_t ps = e, pe = e;
		unsigned span = 0;
		bool found = wss_sparse_any() && next_piece(at, e, &ps, &pe, &span);
		if (!found)
			ps = e;
		else if (ps < at)
			ps = at;
		if (ps > at)
			fn(at, ps, 0, arg);
		if (!found)
			return;
		if (pe > e)
			pe = e;
		fn(ps, pe, span, arg);
		at = pe;
	}
}

void wss_sparse_parts(uintptr_t s, uintptr_t e, void (*fn)(wss_sparse_part_t *, void *), void *arg)
{
	wss_sparse_walk(s, e, NULL, fn, arg);
}

/* Give [s, e) of slot i the flags nf (0: take it out), keeping the rest of
 * the slot as it was: up to two more slots, which the caller has checked
 * are free.  Inside a write section. */
static void reshape(uint32_t i, uintptr_t s, uintptr_t e, uint8_t nf)
{
	uintptr_t a = slot_s(i), b = slot_e(i);
	uint8_t f = slot_f(i), fi = fine_v[i], wa = watched_v[i], sp = slot_span(i);
	if (s < a)
		s = a;
	if (e > b)
		e = b;
	/* The slot keeps the left piece if there is one, else the middle. */
	struct {
		uintptr_t s, e;
		uint8_t f;
	} pc[3] = {{a, s, f}, {s, e, nf}, {e, b, f}};
	bool kept = false;
	for (int k = 0; k < 3; k++) {
		if (pc[k].s >= pc[k].e || !pc[k].f)
			continue;
		uint32_t j = kept ? (uint32_t)free_slot() : i;
		set_slot(j, pc[k].s, pc[k].e, pc[k].f, sp);
		fine_v[j] = fi;
		watched_v[j] = wa;
		kept = true;
	}
	if (!kept)
		set_slot(i, 0, 0, 0, 0);
}

/* Slots needed beyond those in use to give [s, e) new flags (cut: 0),
 * and the slot that would split, if any. */
static uint32_t slots_needed(uintptr_t s, uintptr_t e, bool cut, int *splitting)
{
	uint32_t need = 0;
	*splitting = -1;
	for (uint32_t i = 0; i < hwm; i++) {
		if (!start_v[i] || slot_s(i) >= e || slot_e(i) <= s)
			continue;
		uint32_t pieces = (slot_s(i) < s) + (slot_e(i) > e) + !cut;
		if (pieces > 1) {
			need += pieces - 1;
			*splitting = (int)i;
		}
	}
	return need;
}

/* Merge slot i with a neighbour that ends where it starts, or starts where
 * it ends, with the same flags and span: the program's mprotect of
 * consecutive pieces (committing a reservation chunk by chunk) keeps one
 * entry.  The merged piece's members of the coarser watched level are
 * observed in both, and its state lives in the members of the finer fine
 * level (the same members: the same span). */
static void merge_around(uint32_t i)
{
	for (uint32_t j = 0; j < hwm; j++) {
		if (j == i || !start_v[j] || !start_v[i] || slot_f(j) != slot_f(i) || slot_span(j) != slot_span(i))
			continue;
		uintptr_t a = slot_s(i), b = slot_e(i);
		if (slot_e(j) != a && slot_s(j) != b)
			continue;
		uintptr_t ns = slot_s(j) < a ? slot_s(j) : a, ne = slot_e(j) > b ? slot_e(j) : b;
		uint8_t fi = fine_v[i] < fine_v[j] ? fine_v[i] : fine_v[j];
		uint8_t wa = watched_v[i] > watched_v[j] ? watched_v[i] : watched_v[j];
		uint8_t f = slot_f(i), sp = slot_span(i);
		set_slot(j, 0, 0, 0, 0);
		set_slot(i, ns, ne, f, sp);
		fine_v[i] = fi;
		watched_v[i] = wa;
		j = (uint32_t)-1; /* again, from the start: both sides may merge */
	}
}

static int change(uintptr_t s, uintptr_t e, int prot, bool cut, uintptr_t whole[2])
{
	int splitting;
	if (slots_needed(s, e, cut, &splitting) > free_slots()) {
		whole[0] = slot_s((uint32_t)splitting);
		whole[1] = slot_e((uint32_t)splitting);
		return ENOSPC;
	}
	w_begin();
	for (uint32_t i = 0; i < hwm; i++) {
		if (!start_v[i] || slot_s(i) >= e || slot_e(i) <= s)
			continue;
		uint8_t nf = cut ? 0 : (uint8_t)((slot_f(i) & ~WSS_PF_PROT) | (prot & WSS_PF_PROT));
		reshape(i, s, e, nf);
	}
	if (!cut)
		for (uint32_t i = 0; i < hwm; i++)
			if (start_v[i] && slot_s(i) < e && slot_e(i) > s)
				merge_around(i);
	w_end();
	return 0;
}

int wss_sparse_cut(uintptr_t s, uintptr_t e, uintptr_t whole[2]) { return change(s, e, 0, true, whole); }

int wss_sparse_protect(uintptr_t s, uintptr_t e, int prot, uintptr_t whole[2])
{
	return change(s, e, prot, false, whole);
}

void wss_sparse_fork_child(void)
{
	for (uint32_t i = 0; i < hwm; i++)
		watched_v[i] = WSS_SPARSE_NONE;
}
