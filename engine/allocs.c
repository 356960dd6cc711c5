/* Allocation sites (track.alloc_sites): which code allocated the memory,
 * and whether that memory is used.  A heap profiler knows the first, the
 * working set the second; wss sees both, so it can say which allocations'
 * pages are idle.
 *
 * The sample.  An allocation of n bytes (malloc and friends, and the
 * program's own mmap calls) is sampled with probability 1 - exp(-n/M):
 * each thread counts bytes down from an exponential draw of mean M, and
 * the allocation that crosses zero is sampled (a Poisson process over the
 * bytes allocated, as heap profilers sample).  Large allocations are
 * sampled all but surely (n = 4M: 98 %), small ones one per M bytes on
 * average; a sampled allocation stands for 1/p of its kind (a
 * Horvitz-Thompson weight, kept with it, so that M may change), and every
 * per-site figure is an unbiased estimate.  Each sampled allocation's call
 * stack is captured at the allocation (libunwind's walk: microseconds, so
 * the budget below) and deduplicated with the peaks' (sites.c).
 *
 * The budget.  M starts at WSS_ALLOC_MEAN_MIN and follows the cost: the
 * captures may take a quarter of session.overhead of the wall time, as a
 * token bucket of an interval's whole budget that a capture draws its
 * measured time from and the tick refills.  An empty bucket doubles M
 * (a burst of allocations is sampled more thinly within the interval, not
 * paid for); a bucket the interval left more than half full halves it,
 * down to the minimum.
 *
 * Attribution.  At each tick, every live sampled allocation's pages are
 * looked up in the page state the tick has just counted: its share of each
 * page (the bytes of the allocation on that page, over the page size) is
 * in the site's working set when the page was touched in the window, and
 * idle when the page was not touched for report.idle_after intervals and
 * the allocation is at least that old.  A page is touched or not as a
 * whole: an object on a page another object touched counts as touched
 * (page granularity, which the report says).  Shares, not whole pages, so
 * that a site's small objects add up to the pages they fill, and sites sum
 * to no more than the memory.  Under sampled tracking only the members of
 * the page sample are observed; each counts for 2^L pages (L: the coarsest
 * level in force over the window or the idle span, whose members were
 * armed throughout it).
 *
 * Contexts.  wss_engine_alloc and wss_engine_free run in the program's
 * threads inside the allocator wrappers (hook context); wss_engine_free
 * also inside our fault handler, for the unwinder's own frees during a
 * first-touch capture, which the table's lock-freedom allows; an
 * allocation then is not sampled (wss_sites_unwinding).  The table of
 * live sampled allocations is lock-free:
 * open addressing with CAS on the key (0 free, TOMB removed, BUSY being
 * written); a counting filter in front of it keeps the free of an
 * unsampled pointer (nearly every free) at one load.  Per-site counters
 * are atomic adds; the tick (engine lock) reads entries with a key check
 * before and after, and skips one that changed meanwhile. */
#include "config.h"
#include "engine/internal.h"

#include <math.h>
#include <string.h>

#include "engine/sites.h"

#define LIVE_BITS 14
#define LIVE_SLOTS (1U << LIVE_BITS)
#define LIVE_PROBES 64
#define FILTER_BITS 16
#define KEY_TOMB 1ULL
#define KEY_BUSY 2ULL
#define ASITES 4097 /* stack ids 1..4096 (sites.c), 0: no stack */
/* Page visits a tick spends on attribution at most: past it, the rest of
 * the allocations wait for the next tick (the record says how many ticks
 * were cut short). */
#define VISITS_MAX (1U << 20)

typedef struct live {
	uint64_t key;    /* the address; 0 free, KEY_TOMB, KEY_BUSY */
	uint64_t size;
	uint64_t wbytes; /* size times the weight, what the site's live bytes got */
	double weight;   /* 1/p */
	uint32_t site;   /* stack id, 0: none */
	uint32_t born;   /* the interval it was allocated in */
	bool mapped;     /* the program's own mapping: a call may unmap part of it */
} live_t;

/* An estimate, its variance, the part of it known exactly (pages counted
 * as they are, of allocations sampled surely), how many sampled
 * observations it rests on, and whether any part of it is sampled. */
typedef struct part {
	double est, var, exact;
	uint64_t n, units; /* sampled observations that counted, and all of them */
	uint64_t obs;      /* every observation, exact ones too */
	bool sampled;
} part_t;

/* Fewer sampled observations that counted than this say too little of
 * their own variance (none says 0): the bounds are then those of a
 * proportion, n of the units, taken as a Poisson count (its exact 97.5 %
 * upper bound below), of everything the site could hold; and, below, what
 * was counted exactly. */
#define PART_MIN 10
static const double poisson_hi[PART_MIN] = {3.689, 5.572, 7.225, 8.767, 10.242, 11.668, 13.059, 14.423, 15.763, 17.085};

/* An observation of a page: y of it counts (0: none), seen at level. */
static void part_add(part_t *p, double y, uint32_t level)
{
	double scale = (double)(1ULL << level);
	p->est += y * scale;
	p->var += y * y * scale * (scale - 1); /* Horvitz-Thompson: y^2 (1 - pi) / pi^2 */
	p->obs++;
	if (!level) {
		p->exact += y;
		return;
	}
	p->units++;
	p->n += y > 0;
}

/* A sampled allocation's part s (over its pages), weight w = 1/p: its
 * allocation-sampling variance w (w - 1) s^2 and its pages' w^2 var.
 * levelled: the pages were observed through a page sample. */
static void part_weigh(part_t *site, const part_t *s, double w, bool levelled)
{
	site->est += w * s->est;
	site->var += w * (w - 1) * s->est * s->est + w * w * s->var;
	bool surely = w < 1.0000001;
	site->exact += surely ? s->exact : 0;
	site->n += surely ? s->n : s->est > 0;
	/* An allocation sampled by its bytes is one unit, if any page of it
	 * was observed. */
	site->units += surely ? s->units : s->obs > 0;
	site->obs += s->obs;
	site->sampled |= levelled || !surely;
}

static double part_lo(const part_t *p)
{
	double lo = p->est - 1.96 * sqrt(p->var);
	if (p->sampled && p->n < PART_MIN)
		lo = p->exact;
	return lo > p->exact ? lo : p->exact;
}

static double part_hi(const part_t *p, double most)
{
	double hi = p->est + 1.96 * sqrt(p->var);
	if (p->sampled && p->n < PART_MIN && most > 0) {
		double b = p->exact + (p->units ? poisson_hi[p->n] / (double)p->units : 1) * most;
		if (b > hi)
			hi = b;
	}
	/* No more than the site's memory could hold. */
	if (most > 0 && hi > most)
		hi = most > p->est ? most : p->est;
	return hi;
}

typedef struct asite {
	/* Program threads, atomic. */
	uint64_t sampled, wcount; /* sampled allocations, and their weights summed (est. allocations) */
	uint64_t live_wbytes, freed_wbytes;
	/* The tick: this tick's estimates, and the run's. */
	part_t ws, idle, touched, live;
	double ws_sum, ws_lo_sum, ws_hi_sum; /* the working set's estimates and bounds summed over the ticks */
	double peak_live_pages;
	bool seen;
	int listed; /* in the active list (atomic) */
} asite_t;

static live_t *live;
static uint16_t *filter;
static asite_t *asites;
/* The slots that may hold an entry, a bit each (set by an insert after
 * it publishes, cleared by the tick: see live_slots), so that a tick
 * visits the allocations and not the table; and the sites that ever had
 * one, in the order they came (site + 1; 0: an append not yet stored). */
static uint64_t occ[LIVE_SLOTS / 64];
static uint32_t active[ASITES], nactive;
/* Attribution every stride ticks (1 unless it costs more than a quarter
 * of the budget: a large heap's pages at every tick), ticks counted. */
static uint32_t stride = 1, since;
/* The slot the last tick cut short stopped at: the next starts there. */
static uint32_t resume;
static bool on;
static uint64_t dropped;    /* sampled allocations the table had no room for */
static uint64_t mapped_live; /* live entries of mappings (atomic): none, and an munmap costs a load */
static uint32_t ticks, cut_ticks;
static __thread int64_t countdown __attribute__((tls_model("initial-exec")));
static __thread uint64_t countdown_mean __attribute__((tls_model("initial-exec"))); /* the mean countdown was drawn with */
/* The sampling's mean, bytes: a power of two from WSS_ALLOC_MEAN_MIN to
 * WSS_ALLOC_MEAN_MAX; and the captures' token bucket, ns (atomic). */
static uint64_t mean = WSS_ALLOC_MEAN_MIN;
static int64_t tokens, depth, capture_avg = 3000;
static uint64_t last_tick_ns, captures;
static __thread uint64_t rng __attribute__((tls_model("initial-exec")));

bool wss_allocs_on(void) { return on; }

int wss_allocs_init(unsigned stack_depth)
{
	if (on)
		return 0;
	live = wss_sys_alloc(LIVE_SLOTS * sizeof *live);
	filter = wss_sys_alloc((1U << FILTER_BITS) * sizeof *filter);
	asites = wss_sys_alloc(ASITES * sizeof *asites);
	if (!live || !filter || !asites || wss_sites_init(stack_depth))
		return ENOMEM;
	depth = (int64_t)(E.set.interval_ns / 1000000 * E.set.overhead_ppm);
	if (depth < 1000000)
		depth = 1000000;
	tokens = depth;
	last_tick_ns = wss_clock_ns(CLOCK_MONOTONIC);
	on = true;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* An exponential draw of mean m, per thread. */
static int64_t next_countdown(uint64_t m)
{
	if (!rng)
		rng = mix64((uint64_t)(uintptr_t)&rng ^ wss_clock_ns(CLOCK_MONOTONIC)) | 1;
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	double u = ((double)(rng >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
	return (int64_t)(-log(u) * (double)m) + 1;
}

/* An entry for n bytes at a; piece: what is left of a mapping unmapped in
 * part (born then, counted as an allocation already).  Returns its
 * weighted bytes, 0 when the table had no room. */
static uint64_t insert_entry(uint64_t a, uint64_t n, double weight, uint32_t site, bool mapped, const uint32_t *piece)
{
	uint64_t h = mix64(a);
	uint64_t wb = (uint64_t)((double)n * weight + 0.5);
	for (uint32_t i = 0; i < LIVE_PROBES; i++) {
		live_t *e = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t k = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
		if ((k != 0 && k != KEY_TOMB) ||
		    !__atomic_compare_exchange_n(&e->key, &k, KEY_BUSY, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		e->size = n;
		e->wbytes = wb;
		e->weight = weight;
		e->site = site;
		e->born = piece ? *piece : __atomic_load_n(&E.epoch, __ATOMIC_RELAXED);
		e->mapped = mapped;
		if (mapped)
			__atomic_add_fetch(&mapped_live, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&filter[h & ((1U << FILTER_BITS) - 1)], 1, __ATOMIC_RELAXED);
		asite_t *s = &asites[site];
		if (!piece) {
			__atomic_add_fetch(&s->sampled, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&s->wcount, (uint64_t)(weight + 0.5), __ATOMIC_RELAXED);
		}
		__atomic_add_fetch(&s->live_wbytes, wb, __ATOMIC_RELAXED);
		int zero = 0;
		if (!__atomic_load_n(&s->listed, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&s->listed, &zero, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			__atomic_store_n(&active[__atomic_fetch_add(&nactive, 1, __ATOMIC_ACQ_REL)], site + 1, __ATOMIC_RELEASE);
		uint32_t slot = (uint32_t)((h + i) & (LIVE_SLOTS - 1));
		__atomic_store_n(&e->key, a, __ATOMIC_SEQ_CST);
		__atomic_fetch_or(&occ[slot / 64], 1ULL << (slot % 64), __ATOMIC_SEQ_CST);
		return wb;
	}
	__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
	return 0;
}

static void sampled_alloc(const void *p, size_t n, bool mapped)
{
	if (!on || !p || !n || wss_sites_unwinding || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return;
	uint64_t m = __atomic_load_n(&mean, __ATOMIC_RELAXED);
	if (!countdown) {
		countdown = next_countdown(m);
		countdown_mean = m;
	} else if (countdown_mean != m) {
		/* The mean changed since the draw: what is left of an
		 * exponential of the old mean, scaled by new/old, is one of
		 * the new (memoryless).  Left as drawn, the next sample's
		 * weight (1/p under the new mean) would not match the odds
		 * it was taken with. */
		countdown = (int64_t)((double)countdown * (double)m / (double)countdown_mean) + 1;
		countdown_mean = m;
	}
	countdown -= (int64_t)n;
	if (countdown > 0)
		return;
	countdown = next_countdown(m);
	countdown_mean = m;
	double prob = -expm1(-(double)n / (double)m);
	uint64_t t0 = wss_clock_ns(CLOCK_MONOTONIC);
	uint32_t site = wss_sites_capture_here();
	insert_entry((uint64_t)(uintptr_t)p, n, prob > 0 ? 1 / prob : 1, site, mapped, NULL);
	/* Its time, less a preemption's: clipped at twice the running
	 * average (a loaded machine's wall time is not our cost). */
	int64_t spent = (int64_t)(wss_clock_ns(CLOCK_MONOTONIC) - t0);
	int64_t avg = __atomic_load_n(&capture_avg, __ATOMIC_RELAXED);
	if (spent > 2 * avg + 1000)
		spent = 2 * avg + 1000;
	__atomic_store_n(&capture_avg, (7 * avg + spent) / 8, __ATOMIC_RELAXED);
	__atomic_add_fetch(&captures, 1, __ATOMIC_RELAXED);
	/* The bucket empty: twice the mean from here on, and a quarter of
	 * the bucket for it (each doubling halves the rate of what follows;
	 * the tick refills). */
	if (__atomic_sub_fetch(&tokens, spent, __ATOMIC_RELAXED) < 0 && m < WSS_ALLOC_MEAN_MAX &&
	    __atomic_compare_exchange_n(&mean, &m, m * 2, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&tokens, depth / 4, __ATOMIC_RELAXED);
}

void wss_engine_alloc(const void *p, size_t n) { sampled_alloc(p, n, false); }

void wss_engine_alloc_mapped(const void *p, size_t n) { sampled_alloc(p, n, true); }

void wss_engine_free(const void *p)
{
	if (!on || !p)
		return;
	uint64_t a = (uint64_t)(uintptr_t)p, h = mix64(a);
	uint16_t *fc = &filter[h & ((1U << FILTER_BITS) - 1)];
	if (!__atomic_load_n(fc, __ATOMIC_RELAXED))
		return;
	for (uint32_t i = 0; i < LIVE_PROBES; i++) {
		live_t *e = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if (k == 0)
			return;
		if (k != a)
			continue;
		/* Read before the removal: once removed, an insert may reuse
		 * the entry.  No one else frees p meanwhile (a double free is
		 * the program's bug, and jemalloc's abort). */
		uint64_t wb = e->wbytes;
		uint32_t site = e->site;
		bool mapped = e->mapped;
		if (!__atomic_compare_exchange_n(&e->key, &k, KEY_TOMB, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return;
		if (mapped)
			__atomic_sub_fetch(&mapped_live, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(fc, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&asites[site].live_wbytes, wb, __ATOMIC_RELAXED);
		__atomic_add_fetch(&asites[site].freed_wbytes, wb, __ATOMIC_RELAXED);
		return;
	}
}

/* What [lo, hi) leaves of the mapping's entry e, key k: none of it, a
 * head, a tail, or both (a hole punched in the middle).  The entry is
 * claimed (BUSY) while it changes: a tick that read its key before sees
 * the key change and skips it (live_slots, attribute); the head keeps the
 * slot, a tail is an entry of its own, born with the mapping.  A claim
 * that fails is another thread's unmapping of the same pages (the
 * program's own race): its call does the cut. */
static void cut(live_t *e, uint64_t k, uint64_t lo, uint64_t hi)
{
	if (!__atomic_compare_exchange_n(&e->key, &k, KEY_BUSY, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	uint64_t end = k + e->size, wb = e->wbytes;
	if (end <= lo || k >= hi) {
		/* Another mapping's, at the same address since the read. */
		__atomic_store_n(&e->key, k, __ATOMIC_SEQ_CST);
		return;
	}
	double w = e->weight;
	uint32_t site = e->site, born = e->born;
	uint64_t head = lo > k ? lo - k : 0, tail = end > hi ? end - hi : 0, kept = 0;
	uint16_t *fc = &filter[mix64(k) & ((1U << FILTER_BITS) - 1)];
	if (head) {
		e->size = head;
		e->wbytes = (uint64_t)((double)head * w + 0.5);
		kept = e->wbytes;
		__atomic_store_n(&e->key, k, __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&e->key, KEY_TOMB, __ATOMIC_SEQ_CST);
		__atomic_sub_fetch(fc, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&mapped_live, 1, __ATOMIC_RELAXED);
	}
	/* The tail's bytes leave the site's live count here and come back
	 * with its entry (none, if the table is full: then they are gone). */
	__atomic_sub_fetch(&asites[site].live_wbytes, wb - kept, __ATOMIC_RELAXED);
	uint64_t back = tail ? insert_entry(hi, tail, w, site, true, &born) : 0;
	__atomic_add_fetch(&asites[site].freed_wbytes, wb - kept - back, __ATOMIC_RELAXED);
}

void wss_engine_free_range(const void *p, size_t n)
{
	/* The program's munmap (or a mapping made over, or an mremap's
	 * source): every entry of a mapping of its own that [p, p + n)
	 * overlaps loses those bytes.  Without a mapping's entry live (most
	 * programs, most of the time) one load.  Else the occupied slots,
	 * as a tick visits them: a few thousand loads at most, beside a
	 * system call that unmaps.  A part unmapped at the end or in the
	 * middle must leave too: kept, it would stay live, and memory mapped
	 * there later would be attributed to it. */
	if (!on || !p || !n || !__atomic_load_n(&mapped_live, __ATOMIC_RELAXED))
		return;
	uint64_t lo = (uint64_t)(uintptr_t)p;
	uint64_t hi = lo + ((n + WSS_PAGE_SIZE - 1) & ~(uint64_t)(WSS_PAGE_SIZE - 1));
	for (uint32_t wd = 0; wd < LIVE_SLOTS / 64; wd++) {
		uint64_t bits = __atomic_load_n(&occ[wd], __ATOMIC_ACQUIRE);
		while (bits) {
			live_t *e = &live[wd * 64 + (uint32_t)__builtin_ctzll(bits)];
			bits &= bits - 1;
			uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
			/* The fields read before the claim are checked by it. */
			if (k > KEY_BUSY && e->mapped && k < hi && k + e->size > lo)
				cut(e, k, lo, hi);
		}
	}
}

/* ---- the tick -------------------------------------------------------------- */

typedef struct visit {
	uint64_t a, end;  /* the allocation's bytes */
	uint32_t k, w, idle, born;
	part_t ws, idle_pages, touched;
	uint32_t lw, li, lt; /* the levels whose members were armed throughout the window, the idle span, the run */
	bool aw_w, aw_t;     /* every write of the window, of the run, observed (all writes, or exact) */
	uint32_t visits;
} visit_t;

/* The allocation's bytes on the page at pg, in pages. */
static double share(const visit_t *v, uintptr_t pg)
{
	uint64_t lo = v->a > pg ? v->a : pg, hi = v->end < pg + WSS_PAGE_SIZE ? v->end : pg + WSS_PAGE_SIZE;
	return hi > lo ? (double)(hi - lo) / WSS_PAGE_SIZE : 0;
}

/* First touched in the last w intervals up to k (a fault, or the harvest's
 * record: the page's state p), or written there (the harvest's bits wr). */
static bool touched_in(wss_page_t *p, const uint64_t *wr, uint32_t k, uint32_t w)
{
	uint32_t owner;
	return (p && wss_page_in_window(p, k, w, &owner)) || (wr && wss_written_in(*wr, k, w));
}

/* One page's part.  Where every write was observed, a written page counts
 * as it is, and the members stand for the pages read and not written
 * (the tick's own estimator under all writes); elsewhere the members stand
 * for every page. */
static void visit_page(uintptr_t pg, void *arg)
{
	visit_t *v = arg;
	v->visits++;
	uint8_t *fl = wss_shadow_flags(pg);
	if (!fl || !(wss_flags_load(pg, fl) & WSS_PF_TRACKED))
		return;
	double sh = share(v, pg);
	wss_page_t *p = wss_shadow_page(pg);
	const uint64_t *wr = wss_shadow_written(pg);
	if (v->aw_w && wr && wss_written_in(*wr, v->k, v->w))
		part_add(&v->ws, sh, 0);
	else if (!v->lw || wss_sampling_member(pg, v->lw))
		part_add(&v->ws, touched_in(p, wr, v->k, v->w) ? sh : 0, v->lw);
	/* Idle: the members untouched (a written page is touched: the
	 * writes add nothing to this estimate). */
	if (v->born + v->idle <= v->k && (!v->li || wss_sampling_member(pg, v->li)))
		part_add(&v->idle_pages, touched_in(p, wr, v->k, v->idle) ? 0 : sh, v->li);
	uint8_t f = __atomic_load_n(fl, __ATOMIC_RELAXED);
	if (v->aw_t && (f & WSS_PF_WEVER))
		part_add(&v->touched, sh, 0);
	else if (!v->lt || wss_sampling_member(pg, v->lt))
		part_add(&v->touched, (f & (WSS_PF_EVER | WSS_PF_WEVER)) ? sh : 0, v->lt);
}

/* The pages of the allocation: every one where writes were observed on
 * every page, else the members of the finest of the three levels (levels
 * nest: a member of a coarser level is one of a finer). */
static void visit_pages(visit_t *v)
{
	uint32_t l = v->lw < v->li ? v->lw : v->li;
	if (v->lt < l)
		l = v->lt;
	if (v->aw_w || v->aw_t)
		l = 0;
	uintptr_t s = (uintptr_t)(v->a & ~(uint64_t)(WSS_PAGE_SIZE - 1));
	uintptr_t e = (uintptr_t)((v->end + WSS_PAGE_SIZE - 1) & ~(uint64_t)(WSS_PAGE_SIZE - 1));
	if (l == 0) {
		for (uintptr_t pg = s; pg < e; pg += WSS_PAGE_SIZE)
			visit_page(pg, v);
	} else {
		wss_sampling_members(s, e, l, visit_page, v);
	}
}

static void budget_tick(void);

/* The slots of the live entries, each given to fn once.  A slot found
 * empty has its bit cleared, then its key read again: an insert publishes
 * its key before it sets the bit (both sequentially consistent), so
 * either this reads the new key and sets the bit back, or the insert's
 * bit comes after the clear. */
static void live_slots(uint32_t from, void (*fn)(live_t *e, uint64_t a, uint32_t slot, void *arg), void *arg)
{
	for (uint32_t n = 0; n < LIVE_SLOTS / 64; n++) {
		uint32_t wd = (from / 64 + n) % (LIVE_SLOTS / 64);
		uint64_t bits = __atomic_load_n(&occ[wd], __ATOMIC_SEQ_CST);
		while (bits) {
			uint32_t b = (uint32_t)__builtin_ctzll(bits), i = wd * 64 + b;
			bits &= bits - 1;
			live_t *e = &live[i];
			uint64_t a = __atomic_load_n(&e->key, __ATOMIC_SEQ_CST);
			if (a == 0 || a == KEY_TOMB) {
				__atomic_fetch_and(&occ[wd], ~(1ULL << b), __ATOMIC_SEQ_CST);
				a = __atomic_load_n(&e->key, __ATOMIC_SEQ_CST);
				if (a != 0 && a != KEY_TOMB)
					__atomic_fetch_or(&occ[wd], 1ULL << b, __ATOMIC_SEQ_CST);
			}
			if (a > KEY_BUSY)
				fn(e, a, i, arg);
		}
	}
}

/* The sites in the active list: fn(site index). */
static void active_sites(void (*fn)(asite_t *s, void *arg), void *arg)
{
	uint32_t n = __atomic_load_n(&nactive, __ATOMIC_ACQUIRE);
	for (uint32_t j = 0; j < n && j < ASITES; j++) {
		uint32_t id = __atomic_load_n(&active[j], __ATOMIC_ACQUIRE);
		if (id)
			fn(&asites[id - 1], arg);
	}
}

static void site_reset(asite_t *s, void *arg)
{
	(void)arg;
	s->ws = s->idle = s->touched = s->live = (part_t){0};
}

/* A tick's figures into the run's: its working set stands for the ticks
 * since the one attributed before (weight). */
static void site_sum(asite_t *s, void *arg)
{
	double weight = *(const double *)arg;
	s->ws_sum += weight * s->ws.est;
	s->ws_lo_sum += weight * part_lo(&s->ws);
	s->ws_hi_sum += weight * part_hi(&s->ws, part_hi(&s->live, 0));
	if (s->live.est > s->peak_live_pages)
		s->peak_live_pages = s->live.est;
}

typedef struct attrib {
	uint32_t k, w, idle, lw, li, lt, visits;
	bool aw_w, aw_t, cut;
} attrib_t;

static void attribute(live_t *e, uint64_t a, uint32_t slot, void *arg)
{
	attrib_t *t = arg;
	/* The fields, read once each: the size below is the one checked,
	 * not a second read after the check (by then the entry may be
	 * another allocation's, or being written).  The fence keeps the
	 * reads before the second key load (a seqlock's reader: an
	 * acquire load alone lets earlier loads move after it). */
	uint64_t size = __atomic_load_n(&e->size, __ATOMIC_RELAXED);
	uint32_t born = __atomic_load_n(&e->born, __ATOMIC_RELAXED);
	double weight = e->weight;
	uint32_t site = __atomic_load_n(&e->site, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&e->key, __ATOMIC_SEQ_CST) != a || site >= ASITES)
		return;
	visit_t v = {.a = a, .end = a + size, .k = t->k, .w = t->w, .idle = t->idle, .born = born,
		     .lw = t->lw, .li = t->li, .lt = t->lt, .aw_w = t->aw_w, .aw_t = t->aw_t};
	asite_t *s = &asites[site];
	s->seen = true;
	part_t pages = {size >= WSS_PAGE_SIZE ? (double)((v.end + WSS_PAGE_SIZE - 1) / WSS_PAGE_SIZE - a / WSS_PAGE_SIZE)
					  : (double)size / WSS_PAGE_SIZE,
			0, 0, 0, 0, 0, false};
	part_weigh(&s->live, &pages, weight, false);
	if (t->cut)
		return;
	/* An allocation of more pages than a quarter of a tick's visits is
	 * itself sampled: the members of a level at which it fits, each
	 * standing for its share (the page sample's estimator, writes
	 * included), whatever the tracking's level. */
	uint64_t npages = ((v.end + WSS_PAGE_SIZE - 1) / WSS_PAGE_SIZE) - a / WSS_PAGE_SIZE;
	uint32_t lx = 0;
	while (lx < WSS_SAMPLE_LEVEL_MAX && (npages >> lx) > VISITS_MAX / 4)
		lx++;
	if (lx) {
		v.lw = v.lw > lx ? v.lw : lx;
		v.li = v.li > lx ? v.li : lx;
		v.lt = v.lt > lx ? v.lt : lx;
		v.aw_w = v.aw_t = false;
	}
	visit_pages(&v);
	t->visits += v.visits;
	part_weigh(&s->ws, &v.ws, weight, v.lw != 0);
	part_weigh(&s->idle, &v.idle_pages, weight, v.li != 0);
	part_weigh(&s->touched, &v.touched, weight, v.lt != 0);
	/* Past the tick's visits: the rest wait, and the next tick that
	 * attributes starts with them. */
	if (t->visits > VISITS_MAX) {
		t->cut = true;
		resume = (slot + 1) % LIVE_SLOTS;
	}
}

void wss_allocs_tick(uint32_t k, uint32_t w, bool final)
{
	if (!on)
		return;
	budget_tick();
	/* Every stride-th tick, and the last (the figures at the end); each
	 * stands for the ticks since the one before. */
	if (++since < stride && !final)
		return;
	double weight = since;
	since = 0;
	uint64_t c0 = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID), w0 = wss_clock_ns(CLOCK_MONOTONIC);
	active_sites(site_reset, NULL);
	uint32_t idle = E.set.idle_after ? E.set.idle_after : 10;
	attrib_t t = {.k = k, .w = w, .idle = idle, .lw = wss_sampling_window_level(k, w),
		      .li = wss_sampling_window_level(k, idle), .lt = E.level_max};
	t.aw_w = t.lw && wss_sampling_all_writes_in(k, w);
	t.aw_t = t.lt && E.all_writes_from == 1;
	live_slots(resume, attribute, &t);
	ticks += (uint32_t)weight;
	cut_ticks += t.cut;
	active_sites(site_sum, &weight);
	/* Its cost against a quarter of the budget of the wall time it
	 * stands for (stride intervals): over it, every other tick as often;
	 * under an eighth of it, twice as often.  Exact tracking attributes
	 * every tick, whatever it costs (track.mode = "exact"). */
	if (E.set.mode == WSS_TRACK_EXACT)
		return;
	uint64_t spent = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	uint64_t span = (wss_clock_ns(CLOCK_MONOTONIC) - w0) + (uint64_t)stride * E.set.interval_ns;
	uint64_t quarter = span / 4000 * E.set.overhead_ppm / 1000;
	if (spent > quarter && stride < 64)
		stride *= 2;
	else if (spent < quarter / 8 && stride > 1)
		stride /= 2;
}

/* The token bucket of the captures (once a tick): a quarter of the budget
 * of the time since the last tick, at most an interval's whole budget.
 * Left more than half full by an interval that sampled at all: half the
 * mean. */
static void budget_tick(void)
{
	uint64_t now = wss_clock_ns(CLOCK_MONOTONIC), el = now - last_tick_ns;
	last_tick_ns = now;
	int64_t add = (int64_t)(el / 1000 * E.set.overhead_ppm / 4000);
	int64_t t = __atomic_load_n(&tokens, __ATOMIC_RELAXED) + add;
	__atomic_store_n(&tokens, t > depth ? depth : t, __ATOMIC_RELAXED);
	uint64_t m = __atomic_load_n(&mean, __ATOMIC_RELAXED);
	if (t > depth / 2 && __atomic_exchange_n(&captures, 0, __ATOMIC_RELAXED) && m > WSS_ALLOC_MEAN_MIN)
		__atomic_store_n(&mean, m / 2, __ATOMIC_RELAXED);
}

static void site_forget(asite_t *s, void *arg)
{
	(void)arg;
	s->ws_sum = s->ws_lo_sum = s->ws_hi_sum = s->peak_live_pages = 0;
	s->freed_wbytes = 0;
}

void wss_allocs_fork_child(void)
{
	if (!on)
		return;
	/* The parent's allocations are the child's too (fork copied them),
	 * with their stacks; the figures over time start afresh. */
	active_sites(site_forget, NULL);
	ticks = cut_ticks = since = 0;
	stride = 1;
	countdown = 0;
	/* The child counts intervals from 1 again (fork.c), and its pages
	 * start untouched: the parent's allocations were there before its
	 * first, and may be idle after idle_after of its own.  Their births
	 * in the parent's intervals would keep them out of the idle figure
	 * until the child had run as many intervals as the parent had. */
	for (uint32_t i = 0; i < LIVE_SLOTS; i++)
		if (__atomic_load_n(&live[i].key, __ATOMIC_RELAXED) > KEY_BUSY)
			live[i].born = 0;
}

/* ---- the record -------------------------------------------------------------- */

/* A figure as the record writes it. */
static uint64_t rounded(double x) { return x > 0 ? (uint64_t)(x + 0.5) : 0; }

static void key_num(wss_fmt_t *f, const char *k, double x)
{
	wss_fmt_str(f, ",\"");
	wss_fmt_str(f, k);
	wss_fmt_str(f, "\":");
	wss_fmt_u64(f, rounded(x));
}

/* ,"k":[lo,hi]: the 95 % interval (normal, from the variance). */
static void key_ci(wss_fmt_t *f, const char *k, const part_t *p, double most)
{
	wss_fmt_str(f, ",\"");
	wss_fmt_str(f, k);
	wss_fmt_str(f, "\":[");
	wss_fmt_u64(f, (uint64_t)part_lo(p));
	wss_fmt_ch(f, ',');
	wss_fmt_u64(f, (uint64_t)ceil(part_hi(p, most)));
	wss_fmt_ch(f, ']');
}

/* Largest first, by the figures as written (live now plus at the peak),
 * so that a reader sees them in order. */
static int by_live(const void *a, const void *b)
{
	const asite_t *x = &asites[*(const uint32_t *)a], *y = &asites[*(const uint32_t *)b];
	uint64_t a1 = rounded(x->live.est) + rounded(x->peak_live_pages), b1 = rounded(y->live.est) + rounded(y->peak_live_pages);
	return a1 < b1 ? 1 : a1 > b1 ? -1 : 0;
}

/* {"type":"alloc_sites",...}: every site with memory live now or at its
 * peak, largest first (docs/profile-format.md).  The stacks are written
 * before it.  tick context, at the end. */
void wss_allocs_out(wss_fmt_t *f)
{
	if (!on)
		return;
	static uint32_t order[ASITES];
	uint32_t n = 0, na = __atomic_load_n(&nactive, __ATOMIC_ACQUIRE);
	for (uint32_t j = 0; j < na && j < ASITES; j++) {
		uint32_t id = __atomic_load_n(&active[j], __ATOMIC_ACQUIRE);
		if (id)
			order[n++] = id - 1;
	}
	/* Insertion sort (no qsort: it may allocate); a few hundred sites. */
	for (uint32_t i = 1; i < n; i++) {
		uint32_t x = order[i], j = i;
		for (; j > 0 && by_live(&order[j - 1], &x) > 0; j--)
			order[j] = order[j - 1];
		order[j] = x;
	}
	uint32_t idle = E.set.idle_after ? E.set.idle_after : 10;
	wss_fmt_str(f, "{\"type\":\"alloc_sites\"");
	key_num(f, "mean_bytes", (double)__atomic_load_n(&mean, __ATOMIC_RELAXED));
	key_num(f, "idle_after", idle);
	key_num(f, "intervals", ticks);
	key_num(f, "cut_intervals", cut_ticks);
	key_num(f, "dropped", (double)__atomic_load_n(&dropped, __ATOMIC_RELAXED));
	wss_fmt_str(f, ",\"sites\":[");
	for (uint32_t j = 0; j < n; j++) {
		const asite_t *s = &asites[order[j]];
		if (j)
			wss_fmt_ch(f, ',');
		wss_fmt_ch(f, '{');
		wss_fmt_str(f, "\"stack\":");
		wss_fmt_u64(f, order[j]);
		key_num(f, "sampled", (double)s->sampled);
		key_num(f, "allocs", (double)s->wcount);
		key_num(f, "live_bytes", (double)__atomic_load_n(&s->live_wbytes, __ATOMIC_RELAXED));
		key_num(f, "freed_bytes", (double)__atomic_load_n(&s->freed_wbytes, __ATOMIC_RELAXED));
		key_num(f, "live_pages", s->live.est);
		double most = part_hi(&s->live, 0);
		key_ci(f, "live_ci", &s->live, 0);
		key_num(f, "peak_live_pages", s->peak_live_pages);
		key_num(f, "ws_pages", ticks ? s->ws_sum / ticks : 0);
		wss_fmt_str(f, ",\"ws_ci\":[");
		wss_fmt_u64(f, ticks ? (uint64_t)(s->ws_lo_sum / ticks) : 0);
		wss_fmt_ch(f, ',');
		wss_fmt_u64(f, ticks ? (uint64_t)ceil(s->ws_hi_sum / ticks) : 0);
		wss_fmt_ch(f, ']');
		key_num(f, "idle_pages", s->idle.est);
		key_ci(f, "idle_ci", &s->idle, most);
		key_num(f, "touched_pages", s->touched.est);
		key_ci(f, "touched_ci", &s->touched, most);
		wss_fmt_ch(f, '}');
	}
	wss_fmt_str(f, "]}\n");
}
