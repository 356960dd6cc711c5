/* The sample set: which tracked pages are armed, and how.
 *
 * At level L (rate 1/2^L) only the members of the sample are armed: one
 * page in each aligned block of 2^L pages, chosen by a hash of the block
 * and the session's seed (common/sample.c).  Membership is a pure function
 * of the page, so memory mapped later is sampled at the same rate with no
 * bookkeeping, and nested: a member at level L+1 is one at level L, so the
 * pages sampled at the coarsest level in force during a window were
 * members, armed and observed, in every interval of it.  That is what the
 * tick counts for a window (wss_sampling_window_level), and what the
 * run's totals count (the coarsest level of the run).  Level 0 is exact:
 * every page, armed range by range as before.  This file owns the members,
 * their arming, write-protection and state, the sparse ranges' members and
 * a change of level (wss_sampling_raise_to); which level is in force is
 * decided in policy.c. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <sys/mman.h>

#include "common/sample.h"

/* The touched lists (fault.c), at the first sampled level: as long as a
 * finer level than the VMA budget allows is not armed, an interval's first
 * touches are at most the members of its level and of the one before,
 * each under half the budget (vma_floor).  Past that the list overflows
 * and the tick walks every member. */
static void touched_lists(bool walked)
{
	long cap = E.vma_budget > 64 ? E.vma_budget : 64;
	wss_fault_list_init(cap > (1L << 24) ? 1U << 24 : (uint32_t)cap, walked);
}

void wss_sampling_init(void)
{
	uint64_t entropy = 0;
	if (wss_sys3(SYS_getrandom, &entropy, sizeof entropy, 0) != (long)sizeof entropy)
		entropy = wss_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)wss_sys_getpid() << 32);
	E.seed = E.set.test.sampling_seed ? E.set.test.sampling_seed : wss_sample_seed(entropy);
	/* The first interval's level, before anything was measured: exact
	 * under auto (a burst of touches raises it at once when exactness
	 * would not fit: wss_policy_burst), 1/64 under sampled. */
	uint32_t l = 0;
	if (E.set.mode == WSS_TRACK_SAMPLED)
		l = E.set.sample_level ? E.set.sample_level : 6;
	if (l && E.set.test.first_intervals)
		l = E.set.test.first_level;
	E.level = l;
	E.level_max = l;
	E.level_min_sampled = l;
	E.level_used[l] = 1;
	E.all_writes_from = l ? 0 : 1; /* exact observes every write */
	/* A fixed rate's first interval counts all writes from the start
	 * when a test asks (auto starts exact). */
	if (l && wss_policy_all_writes(l, E.set.interval_ns))
		wss_sampling_all_writes_next(true, l, 1);
	if (l)
		touched_lists(false);
	wss_policy_init();
}

uint32_t wss_sampling_window_level(uint32_t k, uint32_t w)
{
	uint32_t first = k >= w ? k - w + 1 : 1;
	for (uint32_t l = WSS_SAMPLE_LEVEL_MAX; l > 0; l--)
		if (E.level_used[l] >= first)
			return l;
	return 0;
}

void wss_sampling_set(uint32_t level, uint32_t interval)
{
	if (level)
		touched_lists(false);
	__atomic_store_n(&E.level, level, __ATOMIC_RELEASE);
	E.level_used[level] = interval;
	bool first = level && !E.level_max;
	if (level > E.level_max)
		E.level_max = level;
	if (first)
		wss_census_start();
	if (level && (!E.level_min_sampled || level < E.level_min_sampled))
		E.level_min_sampled = level;
	wss_policy_burst_cap();
}

/* ---- designs ------------------------------------------------------------
 * A dense range samples pages (span 0); a sparse range has the span it was
 * registered with (wss_sampling_span_for), below which its members are
 * clusters (common/sample.h).  Every walk and test of members goes by the
 * design of the piece it is in: the functions below split their range at
 * the sparse ranges' edges (wss_sparse_designs), and the single-page tests
 * look the page's range up (AS-safe, lock-free). */

static unsigned span_of(uintptr_t page)
{
	uintptr_t s, e;
	if (!wss_sparse_any())
		return 0;
	/* A page whose own byte says tracked is dense (a sparse range's bytes
	 * hold no more than their "ever" bits: sparse.h): no table scan for
	 * it on the fault path (neighbour_open tests both neighbours). */
	uint8_t *fl = wss_shadow_flags(page);
	if (fl && (__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED))
		return 0;
	return wss_sparse_span(page, &s, &e);
}

unsigned wss_sampling_span_for(uint64_t pages)
{
	/* The finest level whose members of this range alone fit the VMA
	 * room, as vma_floor's: at it the cluster design is the page one, so
	 * the range never has fewer runs armed than it had as pages, and
	 * below it each run covers 2^(span - L) pages instead of one. */
	uint64_t room = E.vma_budget > 0 ? (uint64_t)E.vma_budget / 2 : 32;
	unsigned span = 1;
	while (span < WSS_SAMPLE_LEVEL_MAX && (pages >> span) + 1 > room)
		span++;
	return span;
}

typedef struct design_walk {
	uint32_t level;
	void (*fn)(uintptr_t page, void *arg);
	void (*run)(uintptr_t s, uintptr_t e, void *arg);
	void *arg;
	uint64_t n;
} design_walk_t;

/* The members of [s, e) at level under span, page by page (fn) or run by
 * run of consecutive pages (run). */
static void members_of(uintptr_t s, uintptr_t e, unsigned span, void *arg)
{
	design_walk_t *w = arg;
	uint64_t p0 = s >> WSS_PAGE_SHIFT, p1 = e >> WSS_PAGE_SHIFT;
	uint32_t level = w->level;
	if (level == 0) {
		if (w->run && s < e)
			w->run(s, e, w->arg);
		for (uint64_t p = p0; p < p1 && w->fn; p++)
			w->fn(p << WSS_PAGE_SHIFT, w->arg);
		return;
	}
	if (level < span) {
		uint64_t len = 1ULL << (span - level);
		for (uint64_t b = p0 >> span; (b << span) < p1; b++) {
			uint64_t m = wss_sample_cluster(b, level, span, E.seed);
			uint64_t a = m > p0 ? m : p0, z = m + len < p1 ? m + len : p1;
			if (a < z && w->run)
				w->run(a << WSS_PAGE_SHIFT, z << WSS_PAGE_SHIFT, w->arg);
			for (; a < z && w->fn; a++)
				w->fn(a << WSS_PAGE_SHIFT, w->arg);
		}
		return;
	}
	for (uint64_t b = p0 >> level; (b << level) < p1; b++) {
		uint64_t m = wss_sample_in_block(b, level, E.seed);
		if (m < p0 || m >= p1)
			continue;
		if (w->run)
			w->run(m << WSS_PAGE_SHIFT, (m + 1) << WSS_PAGE_SHIFT, w->arg);
		if (w->fn)
			w->fn(m << WSS_PAGE_SHIFT, w->arg);
	}
}

/* fn on [s, e) piece by piece, by each piece's design. */
static void by_design(uintptr_t s, uintptr_t e, design_walk_t *w, void (*fn)(uintptr_t, uintptr_t, unsigned, void *))
{
	if (w->level && wss_sparse_any())
		wss_sparse_designs(s, e, fn, w);
	else
		fn(s, e, 0, w);
}

void wss_sampling_members(uintptr_t s, uintptr_t e, uint32_t level, void (*fn)(uintptr_t page, void *arg), void *arg)
{
	design_walk_t w = {level, fn, NULL, arg, 0};
	by_design(s, e, &w, members_of);
}

void wss_sampling_member_runs(uintptr_t s, uintptr_t e, uint32_t level, void (*run)(uintptr_t s, uintptr_t e, void *arg),
			      void *arg)
{
	design_walk_t w = {level, NULL, run, arg, 0};
	by_design(s, e, &w, members_of);
}

static void count_of(uintptr_t s, uintptr_t e, unsigned span, void *arg)
{
	design_walk_t *w = arg;
	w->n += wss_sample_count_span(s >> WSS_PAGE_SHIFT, e >> WSS_PAGE_SHIFT, w->level, span, E.seed);
}

uint64_t wss_sampling_count(uintptr_t s, uintptr_t e, uint32_t level)
{
	design_walk_t w = {level, NULL, NULL, NULL, 0};
	by_design(s, e, &w, count_of);
	return w.n;
}

/* Clusters of [s, e) (each block's, where it meets the range) or, in the
 * page design, members: the strata's units. */
static void units_of(uintptr_t s, uintptr_t e, unsigned span, void *arg)
{
	design_walk_t *w = arg;
	uint64_t p0 = s >> WSS_PAGE_SHIFT, p1 = e >> WSS_PAGE_SHIFT;
	if (w->level >= span || p0 >= p1) {
		w->n += wss_sample_count_span(p0, p1, w->level, span, E.seed);
		return;
	}
	uint64_t fb = p0 >> span, lb = (p1 - 1) >> span;
	w->n += lb > fb + 1 ? lb - fb - 1 : 0;
	w->n += wss_sample_count_span(p0, p1 < (fb + 1) << span ? p1 : (fb + 1) << span, w->level, span, E.seed) > 0;
	if (lb > fb)
		w->n += wss_sample_count_span(lb << span, p1, w->level, span, E.seed) > 0;
}

uint64_t wss_sampling_units(uintptr_t s, uintptr_t e, uint32_t level)
{
	design_walk_t w = {level, NULL, NULL, NULL, 0};
	by_design(s, e, &w, units_of);
	return w.n;
}

typedef struct cut_walk {
	uint32_t level;
	void (*fn)(uintptr_t s, uintptr_t e, void *arg);
	void *arg;
} cut_walk_t;

static void cuts_of(uintptr_t s, uintptr_t e, unsigned span, void *arg)
{
	cut_walk_t *w = arg;
	if (w->level >= span || s >= e)
		return;
	uint64_t p0 = s >> WSS_PAGE_SHIFT, p1 = e >> WSS_PAGE_SHIFT, mask = (1ULL << span) - 1;
	uint64_t fb = p0 >> span, lb = (p1 - 1) >> span, len = 1ULL << (span - w->level);
	for (uint64_t b = fb; b <= lb; b = b == fb ? (lb > fb ? lb : lb + 1) : lb + 1) {
		if (!((b == fb && (p0 & mask)) || (b == lb && (p1 & mask))))
			continue;
		uint64_t m = wss_sample_cluster(b, w->level, span, E.seed);
		uint64_t a = m > p0 ? m : p0, z = m + len < p1 ? m + len : p1;
		if (z < a)
			z = a;
		w->fn(a << WSS_PAGE_SHIFT, z << WSS_PAGE_SHIFT, w->arg);
	}
}

void wss_sampling_cut_clusters(uintptr_t s, uintptr_t e, uint32_t level, void (*fn)(uintptr_t s, uintptr_t e, void *arg),
			       void *arg)
{
	cut_walk_t w = {level, fn, arg};
	if (level && wss_sparse_any())
		wss_sparse_designs(s, e, cuts_of, &w);
}

uint32_t wss_sampling_top_level(uintptr_t page)
{
	return wss_sample_top_span(page >> WSS_PAGE_SHIFT, span_of(page), E.seed);
}

bool wss_engine_probe_page(uintptr_t page) { return page == __atomic_load_n(&E.probe, __ATOMIC_RELAXED); }

bool wss_sampling_member(uintptr_t page, uint32_t level)
{
	return wss_sample_member_span(page >> WSS_PAGE_SHIFT, level, span_of(page), E.seed);
}

unsigned wss_sampling_cluster_shift(uintptr_t page, uint32_t level, uintptr_t *s, uintptr_t *e)
{
	unsigned span = span_of(page) ? wss_sparse_span(page, s, e) : 0;
	if (!span) { /* the page design here; *s, *e: as far as that is known */
		*s = page;
		*e = page + WSS_PAGE_SIZE;
	}
	return level && level < span ? span - level : 0;
}

/* The gaps between the members of level, run by run (from 0), or the
 * members of from that are not members of level, run by run: fn(run). */
typedef struct others_walk {
	uint32_t from, level;
	void (*fn)(uintptr_t s, uintptr_t e);
	uintptr_t rs, re; /* the run so far */
} others_walk_t;

static void others_flush(others_walk_t *w)
{
	if (w->rs < w->re)
		w->fn(w->rs, w->re);
	w->rs = w->re = 0;
}

static void others_add(others_walk_t *w, uintptr_t s, uintptr_t e)
{
	if (w->rs < w->re && s == w->re) {
		w->re = e;
		return;
	}
	others_flush(w);
	w->rs = s;
	w->re = e;
}

static void others_of(uintptr_t s, uintptr_t e, unsigned span, void *arg)
{
	others_walk_t *w = arg;
	uint64_t p0 = s >> WSS_PAGE_SHIFT, p1 = e >> WSS_PAGE_SHIFT;
	if (w->from == 0) {
		if (!w->level)
			return;
		/* The gaps between consecutive members' runs. */
		uintptr_t gap = s;
		bool cl = w->level < span;
		uint64_t sh = cl ? span : w->level, len = cl ? 1ULL << (span - w->level) : 1;
		for (uint64_t b = p0 >> sh; (b << sh) < p1; b++) {
			uint64_t m = cl ? wss_sample_cluster(b, w->level, span, E.seed) : wss_sample_in_block(b, w->level, E.seed);
			uint64_t a = m > p0 ? m : p0, z = m + len < p1 ? m + len : p1;
			if (a >= z)
				continue;
			if ((a << WSS_PAGE_SHIFT) > gap)
				others_add(w, gap, a << WSS_PAGE_SHIFT);
			gap = z << WSS_PAGE_SHIFT;
		}
		if (gap < e)
			others_add(w, gap, e);
		others_flush(w);
		return;
	}
	/* The members of from less those of level.  A cluster of from holds
	 * level's (nested): at most two runs around it, block by block. */
	if (w->from < span && w->level <= w->from)
		return; /* a finer level keeps every member of from */
	if (w->from < span) {
		uint64_t len = 1ULL << (span - w->from);
		for (uint64_t b = p0 >> span; (b << span) < p1; b++) {
			uint64_t m = wss_sample_cluster(b, w->from, span, E.seed), is, ie;
			if (w->level < span) {
				is = wss_sample_cluster(b, w->level, span, E.seed);
				ie = is + (1ULL << (span - w->level));
			} else { /* the page design's member, if the block has one at level */
				is = wss_sample_in_block(b, span, E.seed);
				ie = wss_sample_member(is, w->level, E.seed) ? is + 1 : is;
			}
			uint64_t cut[2][2] = {{m, is}, {ie, m + len}};
			for (int j = 0; j < 2; j++) {
				uint64_t a = cut[j][0] > p0 ? cut[j][0] : p0, z = cut[j][1] < p1 ? cut[j][1] : p1;
				if (a < z)
					others_add(w, a << WSS_PAGE_SHIFT, z << WSS_PAGE_SHIFT);
			}
		}
		others_flush(w);
		return;
	}
	/* The page design: the members of from, page by page, less those of
	 * level. */
	for (uint64_t b = p0 >> w->from; (b << w->from) < p1; b++) {
		uint64_t m = wss_sample_in_block(b, w->from, E.seed);
		if (m >= p0 && m < p1 && !wss_sample_member(m, w->level, E.seed))
			others_add(w, m << WSS_PAGE_SHIFT, (m + 1) << WSS_PAGE_SHIFT);
	}
	others_flush(w);
}

static void others(uintptr_t s, uintptr_t e, uint32_t from, uint32_t level, void (*fn)(uintptr_t s, uintptr_t e))
{
	others_walk_t w = {from, level, fn, 0, 0};
	if (wss_sparse_any() && (from || level))
		wss_sparse_designs(s, e, others_of, &w);
	else
		others_of(s, e, 0, &w);
}

static void disarm_run(uintptr_t s, uintptr_t e) { E.backend->disarm(s, e); }
static void watch_run(uintptr_t s, uintptr_t e) { E.backend->watch(s, e); }
static void unwatch_run(uintptr_t s, uintptr_t e) { E.backend->unwatch(s, e); }

void wss_sampling_open_others(uintptr_t s, uintptr_t e, uint32_t from, uint32_t level)
{
	others(s, e, from, level, disarm_run);
}

/* Write protection follows the sample in dense ranges: the members of the
 * level in force are watched, the other pages are not (each would cost a
 * kernel fault at its next write, and its bit is never read).  A sparse
 * range watches its members as they are set up or opened (sparse.h). */
typedef struct watch_walk {
	uint32_t from, level;
	void (*fn)(uintptr_t s, uintptr_t e);
} watch_walk_t;

static void watch_dense(uintptr_t s, uintptr_t e, void *arg)
{
	watch_walk_t *w = arg;
	others(s, e, w->from, w->level, w->fn);
}

static void watch_sparse(wss_sparse_part_t *p, void *arg)
{
	(void)p;
	(void)arg;
}

void wss_sampling_unwatch_others(uintptr_t s, uintptr_t e, uint32_t from, uint32_t level)
{
	watch_walk_t w = {from, level, unwatch_run};
	if (E.backend->unwatch && level > from)
		wss_sparse_walk(s, e, watch_dense, watch_sparse, &w);
}

void wss_sampling_watch_new(uintptr_t s, uintptr_t e, uint32_t fine, uint32_t coarse)
{
	watch_walk_t w = {fine, coarse, watch_run};
	if (E.backend->watch && E.backend->unwatch && coarse > fine)
		wss_sparse_walk(s, e, watch_dense, watch_sparse, &w);
}

static void watch_members_run(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	E.backend->watch(s, e);
}

void wss_sampling_watch(uintptr_t s, uintptr_t e, uint32_t level)
{
	if (E.backend->watch)
		wss_sampling_member_runs(s, e, level, watch_members_run, NULL);
}

/* ---- all writes ---------------------------------------------------------
 * Under hybrid, a page's first touch costs a protection fault (a signal and
 * an mprotect), its first write a kernel-resolved write-protect fault (no
 * signal, no VMA change: several times cheaper, docs/backends.md).  So at
 * a sampled level auto may watch every page of the dense ranges for writes
 * while it arms the members alone: the writes are counted exactly (the
 * harvest reads every page), the members' faults see what they always did,
 * and of the data only the pages read and not written are estimated, from
 * the members (tick.c).  A program that writes most of what it touches
 * (a heap, a garbage collector, a runtime's reference counts) then has
 * most of its working set counted exactly for a fraction of exact
 * tracking's cost.  The switch is at ticks (tick.c: watched before the
 * arming, unwatched after the harvest, so that no bit of the interval
 * ending is lost); a sparse range ends it at once (its pages outside the
 * sample have no state: sparse.h), and a raise of the level from exact
 * unwatches the pages leaving the sample, so that the interval's writes
 * are not all observed.  E.all_writes_from says since
 * when every interval observed every write, for windows of several
 * intervals. */
uint32_t wss_sampling_watched(void)
{
	return E.all_writes ? 0 : __atomic_load_n(&E.level, __ATOMIC_RELAXED);
}

bool wss_sampling_all_writes_in(uint32_t k, uint32_t w)
{
	uint32_t first = k >= w ? k - w + 1 : 1;
	return E.all_writes_from && E.all_writes_from <= first;
}

void wss_sampling_all_writes_next(bool on, uint32_t level, uint32_t interval)
{
	bool all = on || level == 0;
	E.all_writes = on && level;
	if (!all)
		E.all_writes_from = 0;
	else if (!E.all_writes_from)
		E.all_writes_from = interval;
}

void wss_sampling_all_writes_off(void)
{
	if (!E.all_writes)
		return;
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	E.all_writes = false;
	E.all_writes_from = 0;
	wss_change_begin();
	for (size_t i = 0; i < E.regions.n; i++)
		wss_sampling_unwatch_others(E.regions.v[i].start, E.regions.v[i].end, 0, l);
	wss_change_end();
}

bool wss_engine_sampled_out(uintptr_t page)
{
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	return l && !wss_sampling_member(page, l);
}

static void zero_counts(uintptr_t page, void *arg)
{
	(void)arg;
	double *cn = wss_shadow_counts(page);
	if (cn && (cn[0] || cn[1]))
		cn[0] = cn[1] = 0;
}

void wss_sampling_fork_child(void)
{
	uint32_t l = E.level, parent_min = E.level_min_sampled;
	for (uint32_t i = 0; i <= WSS_SAMPLE_LEVEL_MAX; i++)
		E.level_used[i] = 0;
	for (int s = 0; s < 3; s++) {
		E.sum_lo[s] = E.sum_hi[s] = 0;
		E.peak_est[s] = (wss_estimate_t){0, 0, 0};
		E.peak_lo[s] = E.peak_hi[s] = 0;
		for (uint32_t i = 0; i <= WSS_SAMPLE_LEVEL_MAX; i++) {
			E.total_hist[s][i] = E.total_exact[s][i] = 0;
			E.gone_sum[s][i] = E.gone_sq[s][i] = 0;
		}
		E.exact_sum[s] = 0;
	}
	E.last_gone = (wss_last_counts_t){0};
	E.tracked_max = 0;
	E.burst_excess = 0;
	E.lower_bound = false;
	E.prev_tick_at = 0;
	E.tick_cost_ns = 0;
	E.change_ns = 0;
	E.change_debt_ns = 0; /* the parent's changes are the parent's */
	E.level_max = l;
	E.level_min_sampled = 0; /* set again by wss_sampling_set below */
	/* The child's backend watches the members alone (fork.c). */
	E.all_writes_from = l ? 0 : 1;
	E.last_writes = E.last_pages = 0;
	E.aw_hold = E.aw_backoff = 0;
	E.aw_page_ns = 0;
	E.aw_page_n = 0;
	E.calm = 0;
	E.vma_short = false;
	E.prec_last_ppm = 0;
	E.prec_n = E.prec_missed = 0;
	E.used_ns = E.used_wall_ns = 0;
	for (unsigned b = 0; b < WSS_PREC_BINS; b++)
		E.prec_hist[b] = 0;
	wss_sampling_set(l, 1);
	if (E.probe && E.backend->observe)
		E.backend->observe(E.probe - WSS_PAGE_SIZE, E.probe + 2 * WSS_PAGE_SIZE); /* its mapping, as attached */
	__atomic_store_n(&E.burst, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&E.burst_hit, 0, __ATOMIC_RELAXED);
	/* The parent's per-page counts are the parent's: they are on
	 * members of its finest sampled level, a walk of its sample. */
	for (size_t i = 0; parent_min && i < E.regions.n; i++)
		wss_sampling_members(E.regions.v[i].start, E.regions.v[i].end, parent_min, zero_counts, NULL);
	/* The parent's sample is armed in the child's copy; exact: every
	 * page again (the parent had opened the ones it touched).  The
	 * child's backend observes nothing of the sparse ranges yet
	 * (fork.c): their members of l are watched afresh. */
	wss_arm_begin();
	wss_sampling_sparse_setup(l);
	uint64_t armed = 0;
	for (size_t i = 0; i < E.regions.n; i++) {
		if (l == 0) {
			wss_arm_unpinned(E.regions.v[i].start, E.regions.v[i].end);
		} else {
			wss_sampling_arm(E.regions.v[i].start, E.regions.v[i].end, l);
			armed += wss_sampling_units(E.regions.v[i].start, E.regions.v[i].end, l);
		}
	}
	__atomic_store_n(&E.vma_delta, (long)(2 * armed), __ATOMIC_RELAXED);
	wss_arm_end();
}

static void arm_run(uintptr_t s, uintptr_t e, void *arg)
{
	uint64_t *err = arg;
	if (wss_arm_unpinned(s, e))
		(*err)++;
}

uint64_t wss_sampling_arm(uintptr_t s, uintptr_t e, uint32_t level)
{
	uint64_t err = 0;
	wss_sampling_member_runs(s, e, level, arm_run, &err);
	return err;
}

/* ---- sparse ranges -------------------------------------------------------
 * A sparse range (sparse.h) has per-page state for the members of the levels
 * armed since it was added, and for no other page: a member is set up
 * (watched: write-protected, for a backend that harvests without faults;
 * hybrid watches a member as it opens it) the first time a level it
 * belongs to is armed, which the tick
 * does in its full walk at a change of level (wss_sampling_sparse_setup).
 * A member of any coarser level is a member of a finer one, so the members
 * of the finest level set up (fine) hold all the state there is, and those
 * of the finest level watched are all observed; nothing is ever undone (a
 * page that leaves the sample stays write-protected: one kernel fault at
 * its next write).  Every level armed is at or above the VMA floor, at
 * which the members of all ranges fit half the VMA budget: whatever the
 * footprint, the state, the arming and the counting are bounded by the
 * budget (a few thousand pages), and the untouched space costs nothing. */

/* No reset of the member's history: nothing but a member of the finest
 * level set up ever gets state in a sparse range, and untracking resets
 * those (registry.c), as it resets every page of a dense range; reading
 * the fields here would only map page tables over the shadow for nothing
 * (a few per GiB of range). */
static void setup_member(uintptr_t page, void *arg)
{
	wss_sparse_part_t *p = arg;
	if (p->watched != WSS_SPARSE_NONE && wss_sample_member_span(page >> WSS_PAGE_SHIFT, p->watched, p->span, E.seed))
		return;
	/* Its state read once here: the kernel maps the shadow page (the zero
	 * page) now, in the mapping's call, rather than in the next tick's
	 * count, where 8,192 such faults took 15 ms and the budget took it for
	 * a recurring cost. */
	(void)__atomic_load_n(&wss_shadow_page(page)->cur, __ATOMIC_RELAXED);
	/* A backend with faults watches a member when it opens it (hybrid:
	 * hy_fault), so that only the members touched get a write-protect
	 * marker, and a page table for it; one without (uffd-wp) sees
	 * nothing unless it is watched from the start. */
	if (E.backend->watch && !E.backend->fault)
		E.backend->watch(page, page + WSS_PAGE_SIZE);
}

static void setup_part(wss_sparse_part_t *p, void *arg)
{
	uint32_t level = *(uint32_t *)arg;
	if (level == 0 || level >= p->watched)
		return; /* every member of level is a member of watched: done */
	wss_sampling_members(p->s, p->e, level, setup_member, p);
	p->watched = (uint8_t)level;
	if (level < p->fine)
		p->fine = (uint8_t)level;
}

void wss_sampling_sparse_setup(uint32_t level)
{
	if (wss_sparse_any())
		wss_sparse_parts(0, WSS_ADDR_LIMIT, setup_part, &level);
}

/* Raising the level in the middle of interval k is sound by the nesting:
 * the members of the coarser level were members of the finer one, armed
 * since the start of k (or touched, and listed), so counting k at the
 * coarser level (the window's level is the coarsest used in it) sees every
 * touch of theirs.  The pages that leave the sample are opened; a touched
 * one was listed at the finer level and is no member now.  So k's list
 * still holds every member of the coarser level opened in k, and the next
 * tick may take it (from exact, the lists are new, hence stale: one walk of
 * every member). */
/* A member of the new level touched in k so far goes in k's list. */
static void list_touched(uintptr_t page, void *arg)
{
	uint32_t k = *(uint32_t *)arg;
	wss_page_t *p = wss_shadow_page(page);
	if (p && wss_page_touched_in(p, k))
		wss_fault_list_add(page, k);
}

void wss_sampling_raise_to(uint32_t f)
{
	uint32_t lk = __atomic_load_n(&E.level, __ATOMIC_RELAXED), k = E.epoch;
	wss_arm_begin();
	/* From exact, k's list is new (or holds exact touches): it is made
	 * to hold the members of f touched in k, so that the next tick arms
	 * and harvests those alone instead of every member (a random walk's
	 * raise to 1 in 128 then cost its tick 512 members twice over, 15
	 * ms).  Every member of f touched so far is appended (what the list
	 * held stays: a non-member is no member to arm, a member listed twice
	 * is armed twice, an overflow means the full walk; emptying it raced
	 * with a handler between its index and its store, a review found).
	 * A handler records its touch (a locked cmpxchg16b: a full barrier)
	 * before it loads the list to append to; this thread publishes the
	 * list, then a full fence, then reads each member's record: so
	 * either the walk sees a handler's record, or the handler sees the
	 * list and appends to it itself (twice is harmless).  A member
	 * opened in k by anything else marked the lists stale, which this
	 * leaves as it is.  Exact tracking has no sparse range (sparse.h). */
	if (lk == 0) {
		touched_lists(true);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (size_t i = 0; i < E.regions.n; i++)
			wss_sampling_members(E.regions.v[i].start, E.regions.v[i].end, f, list_touched, &k);
	}
	wss_sampling_set(f, k);
	/* From exact, the pages leaving are unwatched: k's writes are not
	 * all observed.  (Not all writes at once: a raise is a burst of
	 * touches or a large new mapping about to be touched, whose writes
	 * the last sample's do not predict.) */
	if (!E.all_writes)
		E.all_writes_from = 0;
	uint64_t armed = 0;
	wss_change_begin();
	for (size_t i = 0; i < E.regions.n; i++) {
		wss_sampling_open_others(E.regions.v[i].start, E.regions.v[i].end, lk, f);
		/* k is counted at f: the bits of the pages leaving are read by
		 * no harvest (under all writes, every page stays watched). */
		if (!E.all_writes)
			wss_sampling_unwatch_others(E.regions.v[i].start, E.regions.v[i].end, lk, f);
		armed += wss_sampling_units(E.regions.v[i].start, E.regions.v[i].end, f);
	}
	wss_change_end();
	__atomic_store_n(&E.vma_delta, (long)(2 * armed), __ATOMIC_RELAXED);
	E.calm = 0;
	E.raised = true;
	wss_arm_end();
}

void wss_sampling_attach_sparse(uintptr_t s, uintptr_t e)
{
	wss_sampling_all_writes_off();
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	if (E.backend->attach_sparse)
		E.backend->attach_sparse(s, e);
	else
		E.backend->attach(s, e, false);
	/* A range mremap moved keeps the protection its pages had: one
	 * mprotect for the whole piece (its entry gives the protection). */
	E.backend->disarm(s, e);
	wss_arm_begin();
	wss_sparse_parts(s, e, setup_part, &l);
	wss_sampling_arm(s, e, l);
	__atomic_add_fetch(&E.vma_delta, (long)(2 * wss_sampling_units(s, e, l)), __ATOMIC_RELAXED);
	if (wss_arm_pinned_in(s, e))
		wss_fault_list_stale();
	wss_arm_end();
}

/* The interval before k may have been at another level: the tick that
 * ended it armed every member of k's level but the pinned ones, which it
 * listed in k whatever level their pinner saw (pins.c), and a handler
 * lists what it opened whatever the level.  So k's list holds every
 * member of k's level opened in k, from the first interval at a level. */
bool wss_sampling_steady(uint32_t next) { return next && next == E.level; }

bool wss_sampling_armable(uintptr_t page, uint32_t level)
{
	uint8_t *fl = wss_shadow_flags(page);
	return fl && (wss_flags_load(page, fl) & WSS_PF_TRACKED) && page != E.probe &&
	       wss_sampling_member(page, level);
}

/* A page of the list that left tracking since (unmapped, excluded) is not
 * ours to arm; a pinned one is skipped by wss_arm_unpinned, as in the
 * full walk.  A page listed twice (its history reset by an untrack and a
 * track within the interval) is armed twice: harmless. */
uint64_t wss_sampling_arm_listed(const uintptr_t *v, uint32_t n, uint32_t level)
{
	uint64_t err = 0;
	for (uint32_t i = 0; i < n; i++)
		if (wss_sampling_armable(v[i], level) && wss_arm_unpinned(v[i], v[i] + WSS_PAGE_SIZE))
			err++;
	return err;
}

typedef struct state_walk {
	void (*fn)(uintptr_t page, void *arg);
	void *arg;
} state_walk_t;

static void state_dense(uintptr_t s, uintptr_t e, void *arg)
{
	state_walk_t *w = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE)
		w->fn(a, w->arg);
}

/* A sparse piece: the members of its finest level hold all its state. */
static void state_sparse(wss_sparse_part_t *p, void *arg)
{
	state_walk_t *w = arg;
	if (p->fine != WSS_SPARSE_NONE)
		wss_sampling_members(p->s, p->e, p->fine, w->fn, w->arg);
}

void wss_sampling_state_pages(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t page, void *arg), void *arg)
{
	state_walk_t w = {fn, arg};
	wss_sparse_walk(s, e, state_dense, state_sparse, &w);
}

void wss_sampling_attach(uintptr_t s, uintptr_t e)
{
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	E.backend->attach(s, e, l == 0);
	/* Sampled: write-protected member by member (backend.h: attach), or
	 * all of it under all writes. */
	if (l && E.all_writes)
		E.backend->watch(s, e);
	else if (l)
		wss_sampling_watch(s, e, l);
	if (l == 0 || !E.backend->fault)
		return;
	/* A range mremap moved keeps the protection its pages had: members of
	 * the old addresses may not be members here.  Only the members may
	 * be armed (pins open nothing else): everything gets its own
	 * protection first, then the members are armed. */
	E.backend->disarm(s, e);
	wss_arm_begin();
	wss_sampling_arm(s, e, l);
	/* A pin over the new range (a mapping made over a buffer in a call)
	 * keeps members open that no list holds. */
	if (wss_arm_pinned_in(s, e))
		wss_fault_list_stale();
	wss_arm_end();
}
