/* The run's summary estimators, from the pages' state at the end of the
 * run (output.c calls them): the totals over several sampled levels by
 * each page's last touch, the average from the members' per-page counts,
 * the total from the members first counted in a sampled window, and the
 * per-page counts of pages leaving tracking.  The counting that feeds
 * them is the tick's (tick.c). */
#include "config.h"
#include "engine/internal.h"

#include <math.h>

void wss_tick_fold_counts(uintptr_t a)
{
	double *cn = wss_shadow_counts(a);
	if (!cn || (!cn[0] && !cn[1]))
		return;
	uint32_t top = wss_sampling_top_level(a);
	double v[3] = {cn[0], cn[1], cn[0] - cn[1]};
	for (int s = 0; s < 3; s++) {
		E.gone_sum[s][top] += v[s];
		E.gone_sq[s][top] += v[s] * v[s];
	}
	cn[0] = cn[1] = 0;
}

/* The run's totals when it went through several sampled levels.  The
 * estimate at the coarsest level alone (wss_tick_total) counts only its
 * members, however briefly that level was in force (a start-up burst's
 * interval or two), while the finer levels after it had many times as
 * many members.  Instead each page counts by its last
 * touch t (a total is a count of pages by the interval of their last
 * touch): from t to the end of the run (or to its leaving) every level in
 * force must have had it as a member, for the touch to be known as its
 * last, so the level that decides is the coarsest one in force since t,
 * M(t), and a page counts 2^M(t) when it is a member of M(t) (a
 * Horvitz-Thompson weight: it is with probability 2^-M(t)).  Such a page
 * was observed from t on: its recorded last touch is its true one.  A
 * page whose last touch was recorded at t but was in fact later was no
 * member of that later interval's level, hence of none >= M(t): it
 * counts nothing.  Pages first counted in an exact window are the exact
 * part (REVER_E), as in wss_tick_total.  Writes alike, by the last write.
 * The read series keeps the coarsest level's count (a read set is a
 * window's, not a page's last touch). */
static uint32_t newest_upto(uint64_t hist, uint32_t K)
{
	uint32_t last = (uint32_t)hist, plast = (uint32_t)(hist >> 32);
	return last <= K ? last : plast <= K ? plast : 0;
}

void wss_tick_last_touch(uintptr_t a, int kind, uint32_t K, wss_last_counts_t *c)
{
	wss_page_t *pg = wss_shadow_page(a);
	uint8_t *rv = wss_shadow_rever(a);
	if (!pg || !rv || (!__atomic_load_n(&pg->cur, __ATOMIC_RELAXED) && !__atomic_load_n(&pg->prev, __ATOMIC_RELAXED)))
		return;
	uint32_t top = UINT32_MAX;
	for (int s = 0; s < 2; s++) {
		if (*rv & REVER_E(s))
			continue;
		uint32_t t;
		if (s == 0) {
			uint64_t lo, hi;
			wss_page_load(pg, &lo, &hi);
			t = newest_upto((uint32_t)lo | (hi << 32), K);
		} else {
			uint64_t *w = wss_shadow_written(a);
			t = w ? newest_upto(*w, K) : 0;
		}
		if (!t)
			continue;
		uint32_t m = wss_sampling_window_level(K, K - t + 1);
		if (top == UINT32_MAX)
			top = wss_sampling_top_level(a);
		if (top < m)
			continue;
		c->n[s][m]++;
		if (s == 0 && kind > 0 && kind < WSS_KIND_N)
			c->kind[kind][m]++;
	}
}

typedef struct last_walk {
	wss_last_counts_t *c;
	uint32_t K;
	int kind;
} last_walk_t;

static void last_page(uintptr_t a, void *arg)
{
	last_walk_t *w = arg;
	wss_tick_last_touch(a, w->kind, w->K, w->c);
}

void wss_tick_last_touches(wss_last_counts_t *c)
{
	/* The last interval counted: the final tick moved the epoch past it. */
	last_walk_t w = {c, E.epoch > 1 ? E.epoch - 1 : 1, 0};
	*c = E.last_gone;
	for (size_t i = 0; i < E.regions.n; i++) {
		w.kind = E.regions.v[i].kind;
		wss_sampling_state_pages(E.regions.v[i].start, E.regions.v[i].end, last_page, &w);
	}
}

/* A walk of the members of one level, in address order, for the
 * summary's variances: each member's per-page count of a series (the
 * average), or whether it was first counted in a sampled window (the
 * total). */
typedef struct member_walk {
	int s;
	bool total;
	uint64_t x;
	wss_strata_t st;
	uint32_t L;
	uintptr_t cs, ce; /* the piece whose design csh is (tick.c's count_t) */
	unsigned csh;
} member_walk_t;

static double member_value(member_walk_t *w, uintptr_t a)
{
	double v = 0;
	if (w->total) {
		uint8_t *rv = wss_shadow_rever(a);
		v = rv && (*rv & REVER_S(w->s)) && !(*rv & REVER_E(w->s));
		w->x += v != 0;
	} else {
		double *cn = wss_shadow_counts(a);
		if (cn)
			v = w->s == 0 ? cn[0] : w->s == 1 ? cn[1] : cn[0] - cn[1];
	}
	return v;
}

/* A member, or a page of a cluster (sampling.c: the cluster is the unit). */
static void walk_member(uintptr_t a, void *arg)
{
	member_walk_t *w = arg;
	double v = member_value(w, a);
	if (wss_sparse_any() && (a < w->cs || a >= w->ce)) {
		wss_strata_close(&w->st); /* another piece: its clusters are its own (tick.c, unit_shift) */
		w->csh = wss_sampling_cluster_shift(a, w->L, &w->cs, &w->ce);
		if (w->csh)
			wss_strata_design(&w->st, 1ULL << w->csh);
	}
	if (wss_sparse_any() && w->csh)
		wss_strata_add_key(&w->st, a >> (WSS_PAGE_SHIFT + w->csh), v);
	else
		wss_strata_add(&w->st, v);
}

/* A cluster a range's end cuts: its sum bounds its spread. */
static void walk_cut(uintptr_t s, uintptr_t e, void *arg)
{
	member_walk_t *w = arg;
	double y = 0;
	uint64_t x = w->x;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE)
		y += member_value(w, a);
	w->x = x; /* counted by the walk */
	wss_strata_doubt(&w->st, y);
}

/* Every range's members of level L, range by range. */
static void walk_members(uint32_t L, member_walk_t *w)
{
	w->L = L;
	for (size_t i = 0; L && i < E.regions.n; i++) {
		w->cs = w->ce = 0;
		wss_sampling_members(E.regions.v[i].start, E.regions.v[i].end, L, walk_member, w);
		wss_sampling_cut_clusters(E.regions.v[i].start, E.regions.v[i].end, L, walk_cut, w);
		wss_strata_break(&w->st);
	}
}

/* The sampled samples' part of the average is a sum over pages of the
 * samples each counted in.  Each page's count is weighted by the rate of
 * each sample it counted in (a member of 1 in 2^l is one page of 2^l: a
 * Horvitz-Thompson weight, so the page's count is an unbiased estimate of
 * its own, whatever levels the run went through), and the pages with
 * counts are members of the finest sampled level of the run, walked in
 * address order for the variance (successive differences, range by range:
 * common/estimate.h; members of a coarser level are negatively correlated
 * within its blocks, which makes that variance an upper bound).  A sum of
 * the samples' own estimates would share their errors, which the same
 * members make move together, and the mean of their bounds is as wide as
 * one sample's interval however many samples there are. */
void wss_tick_avg(int s, uint64_t *sum_lo, uint64_t *sum_hi)
{
	uint32_t L = E.level_min_sampled;
	member_walk_t w = {.s = s};
	walk_members(L, &w);
	for (uint32_t t = L; L && t <= WSS_SAMPLE_LEVEL_MAX; t++) {
		w.st.sum += E.gone_sum[s][t];
		w.st.var += E.gone_sq[s][t];
	}
	/* In units of the coarsest rate's weight: each touch counts at most
	 * 1 there, so the sum is at most the touches seen (the interval's
	 * floor) and, with fewer than ten, their Poisson bounds apply
	 * (common/estimate.h). */
	wss_strata_t st = w.st;
	double scale = (double)(1ULL << E.level_max);
	st.sum /= scale;
	st.var /= scale * scale;
	st.sq /= scale * scale; /* few_bounds' sq / sum: pages a touched cluster brings, in the same unit */
	wss_estimate_avg_t a = wss_strata_interval(&st, scale, (double)E.exact_sum[s], 1);
	*sum_lo = a.lo > 0 ? (uint64_t)floor(a.lo) : 0;
	*sum_hi = (uint64_t)ceil(a.hi);
}

void wss_tick_total(int s, uint64_t xe, uint64_t x, wss_estimate_t *t)
{
	uint32_t L = E.level_max;
	*t = wss_estimate_total(xe, x, L);
	if (!L || (x < WSS_STRATA_MIN && !E.clustered))
		return;
	/* The members of the ranges tracked now, in address order: their
	 * successive differences (common/estimate.h) bound the variance of
	 * the ones they hold; members touched in ranges gone since are
	 * counted at the Poisson variance, their mean. */
	member_walk_t w = {.s = s, .total = true};
	walk_members(L, &w);
	/* Nearly every member touched (a random walk over all of a buffer):
	 * their differences are all 0 and say nothing of the pages between
	 * them (a "+-0.0 %" total).  With no touched member gone with its
	 * range, the pages tracked now are the population, and Wilson's
	 * interval, whose bound mirrors the untouched members' Poisson one,
	 * applies; else the Poisson interval of all of them stays. */
	/* Clusters (sampling.c): the Poisson interval's premise, one member
	 * a block touched at most once, fails (a cluster brings its touched
	 * pages together), as does Wilson's; their strata's interval holds
	 * (common/estimate.h), widened for a few touched clusters. */
	if (w.st.clustered) {
		double rest = x > w.x ? (double)(x - w.x) : 0, scale = (double)(1ULL << L);
		wss_strata_t st = w.st;
		st.var += rest;
		wss_estimate_avg_t a = wss_strata_interval(&st, scale, (double)xe, 1);
		a.lo += scale * rest; /* centred on the members still walked: moved to all */
		a.hi += scale * rest;
		uint64_t seen = xe + x;
		t->lo = a.lo <= (double)seen ? seen : a.lo >= (double)t->est ? t->est : (uint64_t)floor(a.lo);
		t->hi = a.hi <= (double)t->est ? t->est : (uint64_t)ceil(a.hi);
		return;
	}
	/* Clusters counted in some interval (E.clustered) but none at L: a
	 * handful of touches keeps the Poisson interval, as without them. */
	if (x < WSS_STRATA_MIN)
		return;
	if (w.st.members - w.x < WSS_STRATA_MIN) {
		if (x > w.x)
			return;
		uint64_t n = wss_regions_pages(&E.regions);
		wss_estimate_t e = wss_estimate_pages(n, w.st.members, w.x);
		if (e.hi + xe < t->hi)
			t->hi = e.hi + xe;
		if (e.lo + xe > t->lo && e.lo + xe <= t->est)
			t->lo = e.lo + xe;
		return;
	}
	double rest = x > w.x ? (double)(x - w.x) : 0;
	double var = w.st.var + rest, scale = (double)(1ULL << L);
	double half = wss_t975(w.st.pairs) * scale * sqrt(var);
	double lo = floor((double)t->est - half), hi = ceil((double)t->est + half);
	uint64_t seen = xe + x;
	wss_estimate_t e = {t->est, lo <= (double)seen ? seen : lo >= (double)t->est ? t->est : (uint64_t)lo,
			    hi <= (double)t->est ? t->est : (uint64_t)hi};
	/* never wider than the Poisson interval, which holds whatever the pattern */
	if (e.lo > t->lo)
		t->lo = e.lo;
	if (e.hi < t->hi)
		t->hi = e.hi;
}
