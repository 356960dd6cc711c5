/* Sampling membership (common/sample.c) and the estimator
 * (common/estimate.c).  Membership: nesting across levels, one member per
 * aligned block, counts against brute force, density, seeds, uniformity of
 * the member's offset.  The estimator: fixed values and invariants, then
 * the coverage of its 95 % interval over 2,000 seeded trials per cell of
 * rates x touched fractions (issue 14 asks for 93-97 %), real bitmaps
 * against the lazy draw, structured truths, and the average's bound.
 * Every random choice comes from fixed seeds: the output never changes. */
#include "config.h"
#include "common/sample.h"
#include "common/estimate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/tap/tap.h"

#define TRIALS 2000

/* The test's generator: an LCG through murmur3's finaliser, unrelated to
 * the splitmix64 mixer inside the membership hash. */
static uint64_t rng_state;
static void rng_seed(uint64_t s)
{
	rng_state = s * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
}
static uint64_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	uint64_t z = rng_state;
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
	z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return z ^ (z >> 33);
}
/* Uniform in [0, n) (Lemire's multiply; the bias is below 2^-40 here). */
static uint64_t below(uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rnd() * n) >> 64);
}

/* ---- membership ---- */

static void test_nesting(void)
{
	uint64_t bad = 0, checked = 0;
	rng_seed(1);
	for (int r = 0; r < 2000; r++) {
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t b = below(1ull << 20);
		uint64_t m = wss_sample_in_block(b, 20, seed);
		for (unsigned j = 0; j <= 20; j++, checked++)
			bad += !wss_sample_member(m, j, seed);
	}
	ok(bad == 0, "a level-20 member is a member at every level 0..20 (%llu checks)",
	   (unsigned long long)checked);
	/* And from below: over a range, each level's set inside the one before. */
	uint64_t seed = wss_sample_seed(2), first = 1ull << 33;
	uint64_t sizes[21] = {0};
	bad = 0;
	for (uint64_t p = first; p < first + (1 << 20); p++)
		for (unsigned j = 0; j <= 20; j++) {
			if (!wss_sample_member(p, j, seed))
				break;
			sizes[j]++;
			if (j < 20 && wss_sample_member(p, j + 1, seed) && !wss_sample_member(p, j, seed))
				bad++;
		}
	bool halving = true;
	for (unsigned j = 0; j <= 20; j++)
		halving &= sizes[j] == (1ull << 20) >> j;
	ok(bad == 0 && halving, "over 2^20 pages: the members of level j+1 are members of level j, "
	   "and level j has 2^(20-j) of them");
}

static void test_one_per_block(void)
{
	uint64_t bad = 0, blocks = 0;
	rng_seed(3);
	for (unsigned level = 0; level <= 12; level++)
		for (int r = 0; r < 200; r++, blocks++) {
			uint64_t seed = wss_sample_seed(rnd()), b = below(1ull << 36);
			uint64_t m = wss_sample_in_block(b, level, seed), n = 0, found = 0;
			for (uint64_t p = b << level; p < (b + 1) << level; p++)
				if (wss_sample_member(p, level, seed)) {
					n++;
					found = p;
				}
			bad += n != 1 || found != m;
		}
	for (int r = 0; r < 4; r++, blocks++) {
		uint64_t seed = wss_sample_seed(rnd()), b = below(1ull << 30), n = 0;
		for (uint64_t p = b << 20; p < (b + 1) << 20; p++)
			n += wss_sample_member(p, 20, seed);
		bad += n != 1;
	}
	ok(bad == 0, "exactly one member per aligned block, and it is wss_sample_in_block's "
	   "(%llu blocks, levels 0..12 and 20)", (unsigned long long)blocks);
}

static void test_count(void)
{
	uint64_t bad = 0;
	rng_seed(4);
	for (int r = 0; r < 3000; r++) {
		unsigned level = (unsigned)below(13);
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t first = below(1ull << 40), len = below((3ull << level) + 6);
		if (r % 4 == 0) /* aligned starts and ends too */
			first &= ~((1ull << level) - 1);
		if (r % 8 == 0)
			len &= ~((1ull << level) - 1);
		uint64_t n = 0;
		for (uint64_t p = first; p < first + len; p++)
			n += wss_sample_member(p, level, seed);
		if (wss_sample_count(first, first + len, level, seed) != n) {
			if (bad++ < 3)
				diag("level %u [%llu, +%llu): count %llu, brute force %llu", level,
				     (unsigned long long)first, (unsigned long long)len,
				     (unsigned long long)wss_sample_count(first, first + len, level, seed),
				     (unsigned long long)n);
		}
	}
	ok(bad == 0, "wss_sample_count equals a brute-force count on 3,000 random ranges");
	/* Small ranges are counted page by page: the same as the blocks'
	 * members (wss_sample_in_block) say, at every level. */
	bad = 0;
	for (int r = 0; r < 20000; r++) {
		unsigned level = 1 + (unsigned)below(WSS_SAMPLE_LEVEL_MAX);
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t first = below(1ull << 40), len = below(10);
		if (r % 3 == 0) /* a block's member, and its neighbours */
			first = wss_sample_in_block(first >> level, level, seed) - below(3);
		uint64_t n = 0;
		for (uint64_t b = first >> level; len && b <= (first + len - 1) >> level; b++) {
			uint64_t m = wss_sample_in_block(b, level, seed);
			n += m >= first && m < first + len;
		}
		bad += wss_sample_count(first, first + len, level, seed) != n;
	}
	ok(bad == 0, "wss_sample_count of ranges of 0 to 9 pages equals the blocks' members, levels 1 to 30");
	ok(wss_sample_count(10, 5, 3, 1) == 0 && wss_sample_count(7, 7, 3, 1) == 0 &&
	   wss_sample_count(5, 17, 0, 1) == 12 &&
	   wss_sample_count(UINT64_MAX - (1ull << 31), UINT64_MAX, WSS_SAMPLE_LEVEL_MAX, 9) <= 2,
	   "wss_sample_count: empty and reversed ranges, level 0, the top of the page space");
}

static void test_density(void)
{
	/* Stratified: a long range holds its share exactly (+-1 at each end). */
	uint64_t seed = wss_sample_seed(5), first = 12345, len = 1ull << 22, n = 0;
	for (uint64_t p = first; p < first + len; p++)
		n += wss_sample_member(p, 7, seed);
	ok(n + 2 >= len >> 7 && n <= (len >> 7) + 2, "2^22 pages at level 7: %llu members, "
	   "2^15 +- 2", (unsigned long long)n);
	/* A population the blocks do not line up with (every third page): the
	 * members fall on it at the rate, within binomial bounds. */
	n = 0;
	for (uint64_t p = 3 * first; p < 3 * first + 3 * len; p += 3)
		n += wss_sample_member(p, 6, seed);
	double mean = (double)len / 64, sd = sqrt(mean * (1 - 1.0 / 64));
	ok(fabs((double)n - mean) < 5 * sd, "every third page of 3*2^22 at level 6: %llu members, "
	   "expected %.0f +- %.0f (5 sd)", (unsigned long long)n, mean, 5 * sd);
}

static void test_seeds(void)
{
	uint64_t s1 = wss_sample_seed(1), s2 = wss_sample_seed(2), same = 0;
	for (uint64_t b = 0; b < 10000; b++)
		same += wss_sample_in_block(b, 10, s1) == wss_sample_in_block(b, 10, s2);
	ok(wss_sample_seed(0) != 0 && s1 != s2 && same < 40,
	   "seeds: non-zero, distinct, and 10,000 blocks at level 10 share %llu members "
	   "(about 10 by chance)", (unsigned long long)same);
}

/* Chi-square of the member's offset in its block against uniform. */
static double chi2_offsets(unsigned level, uint64_t nblocks, bool vary_seed)
{
	static uint64_t hist[1 << 8];
	uint64_t cells = 1ull << level;
	memset(hist, 0, sizeof hist);
	for (uint64_t b = 0; b < nblocks; b++) {
		uint64_t seed = vary_seed ? wss_sample_seed(b) : wss_sample_seed(6);
		uint64_t block = vary_seed ? 777 : (1ull << 28) + b;
		hist[wss_sample_in_block(block, level, seed) - (block << level)]++;
	}
	double e = (double)nblocks / (double)cells, chi2 = 0;
	for (uint64_t i = 0; i < cells; i++)
		chi2 += ((double)hist[i] - e) * ((double)hist[i] - e) / e;
	return chi2;
}

static void test_uniformity(void)
{
	/* Thresholds at about 5 sd above the mean (df): a fixed seed passes or
	 * fails for good, and a real bias moves chi-square by far more. */
	double c = chi2_offsets(4, 160000, false);
	ok(c < 45, "offsets at level 4 over 160,000 consecutive blocks: chi2 %.1f, df 15 (< 45)", c);
	c = chi2_offsets(8, 256 * 400, false);
	ok(c < 368, "offsets at level 8 over 102,400 consecutive blocks: chi2 %.1f, df 255 (< 368)", c);
	c = chi2_offsets(6, 64000, true);
	ok(c < 119, "offsets of one block at level 6 over 64,000 seeds: chi2 %.1f, df 63 (< 119)", c);
}

static void time_in_block(void)
{
	struct timespec a, b;
	uint64_t seed = wss_sample_seed(7), acc = 0, calls = 1000000;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < calls; i++)
		acc += wss_sample_in_block(i, 20, seed);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)calls;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < calls; i++)
		acc += wss_sample_member((1ull << 32) + i, 20, seed);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns2 = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)calls;
	diag("cost: wss_sample_in_block at level 20 %.0f ns, wss_sample_member (mostly non-members) "
	     "%.1f ns (checksum %llu)", ns, ns2, (unsigned long long)(acc & 0xff));
}

/* ---- the estimator: values and invariants ---- */

static bool is_est(wss_estimate_t e, uint64_t est, uint64_t lo, uint64_t hi, const char *what)
{
	bool r = ok(e.est == est && e.lo == lo && e.hi == hi, "%s", what);
	if (!r)
		diag("got (%llu, %llu, %llu), want (%llu, %llu, %llu)", (unsigned long long)e.est,
		     (unsigned long long)e.lo, (unsigned long long)e.hi, (unsigned long long)est,
		     (unsigned long long)lo, (unsigned long long)hi);
	return r;
}

static void test_estimate_values(void)
{
	is_est(wss_estimate_pages(5000, 5000, 123), 123, 123, 123, "k == n: exact");
	/* The relative half-width (session.precision) and its bins. */
	is_int(wss_estimate_halfwidth_ppm((wss_estimate_t){123, 123, 123}), 0, "half-width of an exact estimate: 0");
	is_int(wss_estimate_halfwidth_ppm((wss_estimate_t){200, 190, 230}), 150000, "half-width: the larger side, 30 of 200 = 15%%");
	is_int(wss_estimate_halfwidth_ppm((wss_estimate_t){0, 0, 40}) == UINT64_MAX, 1, "an estimate of 0 with room above: unbounded");
	is_int(wss_estimate_halfwidth_ppm((wss_estimate_t){3, 2, 4}), 333334, "rounded up: 1 of 3");
	is_int(wss_precision_bin(0), 0, "bin of 0");
	is_int(wss_precision_bin(4999), 4, "0.1%% bins below 10%%");
	is_int(wss_precision_bin(100000), 100, "1%% bins from 10%%");
	is_int(wss_precision_bin(999999), 189, "... to 100%%");
	is_int(wss_precision_bin(1000000), 190, "10%% bins from 100%%");
	is_int(wss_precision_bin(UINT64_MAX), WSS_PREC_BINS - 1, "the last bin holds the rest");
	{
		unsigned bad_bin = 0;
		for (unsigned b = 0; b + 1 < WSS_PREC_BINS && !bad_bin; b++)
			if (wss_precision_bin(wss_precision_bin_upper(b) - 1) != b ||
			    wss_precision_bin(wss_precision_bin_upper(b)) != b + 1)
				bad_bin = b + 1;
		is_int(bad_bin, 0, "every bin's upper edge is where the next starts (1 + the first that is not)");
	}
	{
		uint32_t bins[WSS_PREC_BINS] = {0};
		is_int(wss_precision_median(bins, 0), 0, "median of nothing: 0");
		bins[wss_precision_bin(30000)] += 3;  /* three at 3% */
		bins[wss_precision_bin(250000)] += 2; /* two at 25% */
		is_int(wss_precision_median(bins, 5), 31000, "median of 3%% x3, 25%% x2: the 3%% bin's upper edge");
		bins[wss_precision_bin(250000)] += 2;
		is_int(wss_precision_median(bins, 7), 260000, "with two more at 25%%: the 25%% bin's");
	}
	is_est(wss_estimate_pages(5000, 0, 0), 0, 0, 5000, "k == 0: nothing known, [0, n]");
	is_est(wss_estimate_pages(5000, 9000, 9999), 5000, 5000, 5000, "k > n and x > k read as n");
	/* Reference values from the formula computed apart (Python, doubles). */
	is_est(wss_estimate_pages(409600, 100, 50), 204800, 165413, 244187,
	       "n 409,600, k 100, x 50: Wilson with the finite-population correction");
	is_est(wss_estimate_pages(1000000, 250000, 1000), 4000, 3791, 4221,
	       "n 10^6, k 250,000, x 1,000: the correction at rate 1/4");
	is_est(wss_estimate_pages(4096000, 1000, 0), 0, 0, 15671, "x = 0: an upper bound only");
	is_est(wss_estimate_pages(4096000, 1000, 1), 4096, 103, 23108,
	       "x = 1: the exact Poisson lower bound (0.0253 n/k), not Wilson's 723");
	is_est(wss_estimate_pages(4096000, 1000, 1000), 4096000, 4096000 - 15671, 4096000,
	       "x = k: the mirror of x = 0");
	wss_estimate_t e = wss_estimate_pages(1ull << 40, 1ull << 30, 1ull << 29);
	ok(e.est == 1ull << 39 && e.lo < e.est && e.hi > e.est && e.hi - e.lo < (1ull << 39) / 100,
	   "2^40 pages: no overflow in n*x");

	/* Invariants over every x, at several n and k. */
	static const uint64_t nk[][2] = {{100000, 1000}, {4096, 1024}, {3, 2}, {1ull << 36, 4096}, {10, 1}};
	uint64_t bad = 0;
	for (size_t i = 0; i < sizeof nk / sizeof *nk; i++) {
		uint64_t n = nk[i][0], k = nk[i][1];
		wss_estimate_t prev = {0, 0, 0};
		for (uint64_t x = 0; x <= k; x++) {
			e = wss_estimate_pages(n, k, x);
			bad += !(x <= e.lo && e.lo <= e.est && e.est <= e.hi && e.hi <= n - (k - x));
			bad += x > 0 && (e.lo < prev.lo || e.hi < prev.hi || e.est < prev.est);
			prev = e;
		}
	}
	ok(bad == 0, "x <= lo <= est <= hi <= n-(k-x), and all three rise with x");
}

/* ---- coverage ---- */

/* x of a uniformly random t-subset of n pages falling on k given pages:
 * hypergeometric, drawn sequentially over the smaller of t and k (the
 * distribution is symmetric in them). */
static uint64_t hypergeometric(uint64_t n, uint64_t t, uint64_t k)
{
	uint64_t draws = t < k ? t : k, pool = t < k ? k : t, x = 0;
	for (uint64_t i = 0; i < draws; i++, n--)
		if (below(n) < pool) {
			x++;
			pool--;
		}
	return x;
}

typedef struct cell {
	double coverage, mean_rel, mean_width; /* width: (hi-lo)/2 over the truth */
	uint64_t exact_fail;
} cell_t;

static void tally(cell_t *c, wss_estimate_t e, uint64_t t)
{
	c->coverage += e.lo <= t && t <= e.hi;
	c->mean_rel += ((double)e.est - (double)t) / (double)t;
	c->mean_width += (double)(e.hi - e.lo) / 2 / (double)t;
}

static void finish(cell_t *c, int trials)
{
	c->coverage = 100 * c->coverage / trials;
	c->mean_rel = 100 * c->mean_rel / trials;
	c->mean_width = 100 * c->mean_width / trials;
}

/* The population n of a trial is uniform in [nmin, 2 nmin) at an unaligned
 * start, so a cell averages over populations (at a single n, t, k the
 * coverage of any interval on a count jumps with the discreteness of x). */
static cell_t run_lazy(unsigned level, double frac, uint64_t nmin, uint64_t cell_seed)
{
	cell_t c = {0};
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t n = nmin + below(nmin), first = below(1ull << 40);
		uint64_t t = frac >= 1 ? n : (uint64_t)llround(frac * (double)n);
		if (t == 0)
			t = 1;
		uint64_t k = wss_sample_count(first, first + n, level, seed);
		uint64_t x = hypergeometric(n, t, k);
		wss_estimate_t e = wss_estimate_pages(n, k, x);
		tally(&c, e, t);
		c.exact_fail += frac >= 1 && (e.est != t || e.lo > t || e.hi < t);
	}
	finish(&c, TRIALS);
	return c;
}

static const unsigned levels[] = {2, 4, 6, 8, 10, 12};
static const double fracs[] = {0.001, 0.01, 0.1, 0.5, 1.0};
#define NLEVELS (sizeof levels / sizeof *levels)
#define NFRACS (sizeof fracs / sizeof *fracs)

/* nmin for an expected x of at least ex (and at least 256 members). */
static uint64_t nmin_for(unsigned level, double frac, double ex)
{
	double k = ceil(ex / frac);
	if (k < 256)
		k = 256;
	return (uint64_t)k << level;
}

static void test_coverage(void)
{
	cell_t cells[NLEVELS][NFRACS];
	for (size_t i = 0; i < NLEVELS; i++)
		for (size_t j = 0; j < NFRACS; j++) {
			cell_t *c = &cells[i][j];
			*c = run_lazy(levels[i], fracs[j], nmin_for(levels[i], fracs[j], 64), 100 + i * 10 + j);
			if (fracs[j] >= 1)
				ok(c->exact_fail == 0 && c->mean_rel == 0,
				   "rate 1/%u, all pages touched: the estimate is the truth in every trial",
				   1u << levels[i]);
			else
				ok(c->coverage >= 93 && c->coverage <= 97,
				   "rate 1/%u, %g %% touched: coverage %.1f %% (93-97), mean error %+.2f %%",
				   1u << levels[i], fracs[j] * 100, c->coverage, c->mean_rel);
		}
	diag("coverage of the 95 %% interval, %d trials per cell, expected x >= 64:", TRIALS);
	diag("  rate    0.1%%    1%%     10%%    50%%    100%%");
	for (size_t i = 0; i < NLEVELS; i++)
		diag("  1/%-4u  %5.1f  %5.1f  %5.1f  %5.1f  %5.1f", 1u << levels[i], cells[i][0].coverage,
		     cells[i][1].coverage, cells[i][2].coverage, cells[i][3].coverage, cells[i][4].coverage);
	diag("mean half-width of the interval, %% of the truth:");
	for (size_t i = 0; i < NLEVELS; i++)
		diag("  1/%-4u  %5.1f  %5.1f  %5.1f  %5.1f  %5.1f", 1u << levels[i], cells[i][0].mean_width,
		     cells[i][1].mean_width, cells[i][2].mean_width, cells[i][3].mean_width,
		     cells[i][4].mean_width);

	/* A few touched pages: at so small an x the interval must still hold;
	 * the modified lower bound at x = 1..3 and x <= lo make it wider than
	 * needed there rather than narrower. */
	static const double exs[] = {1, 4};
	for (size_t e = 0; e < 2; e++) {
		double cov[NLEVELS];
		for (size_t i = 0; i < NLEVELS; i++) {
			uint64_t nmin = (uint64_t)ceil(exs[e] / 0.001) << levels[i];
			cov[i] = run_lazy(levels[i], 0.001, nmin, 900 + e * 10 + i).coverage;
			if (e == 0)
				ok(cov[i] >= 93 && cov[i] <= 99.5, "rate 1/%u, 0.1 %% touched, expected x 1-2: "
				   "coverage %.1f %% (93-99.5)", 1u << levels[i], cov[i]);
			else
				ok(cov[i] >= 93 && cov[i] <= 97, "rate 1/%u, 0.1 %% touched, expected x 4-8: "
				   "coverage %.1f %% (93-97)", 1u << levels[i], cov[i]);
		}
		diag("coverage at 0.1 %% touched, expected x %g-%g: 1/4 %.1f, 1/16 %.1f, 1/64 %.1f, "
		     "1/256 %.1f, 1/1024 %.1f, 1/4096 %.1f", exs[e], 2 * exs[e], cov[0], cov[1], cov[2],
		     cov[3], cov[4], cov[5]);
	}
}

/* Real page sets: a bitmap of n pages with a uniformly random t-subset set
 * (Floyd's algorithm), x counted over the members wss_sample_in_block
 * names; the same cell drawn lazily must agree. */
#define BITMAP_MAX (1u << 19)
static uint64_t bitmap[BITMAP_MAX / 64];

static cell_t run_bitmap(unsigned level, double frac, uint64_t nmin, uint64_t cell_seed, uint64_t *kbad)
{
	cell_t c = {0};
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t n = nmin + below(nmin), first = below(1ull << 40), end = first + n;
		uint64_t t = (uint64_t)llround(frac * (double)n);
		memset(bitmap, 0, (n + 63) / 64 * 8);
		for (uint64_t j = n - t; j < n; j++) {
			uint64_t r = below(j + 1);
			uint64_t p = bitmap[r / 64] >> (r % 64) & 1 ? j : r;
			bitmap[p / 64] |= 1ull << (p % 64);
		}
		uint64_t k = 0, x = 0;
		for (uint64_t b = first >> level; b <= (end - 1) >> level; b++) {
			uint64_t m = wss_sample_in_block(b, level, seed);
			if (m < first || m >= end)
				continue;
			k++;
			x += bitmap[(m - first) / 64] >> ((m - first) % 64) & 1;
		}
		*kbad += k != wss_sample_count(first, end, level, seed);
		tally(&c, wss_estimate_pages(n, k, x), t);
	}
	finish(&c, TRIALS);
	return c;
}

static void test_bitmap(void)
{
	static const struct {
		unsigned level;
		double frac;
		uint64_t nmin;
	} bc[] = {{2, 0.5, 1 << 12}, {4, 0.01, 1 << 16}, {8, 0.1, 1 << 18}};
	for (size_t i = 0; i < sizeof bc / sizeof *bc; i++) {
		uint64_t kbad = 0;
		cell_t b = run_bitmap(bc[i].level, bc[i].frac, bc[i].nmin, 500 + i, &kbad);
		cell_t l = run_lazy(bc[i].level, bc[i].frac, bc[i].nmin, 600 + i);
		ok(kbad == 0 && b.coverage >= 93 && b.coverage <= 97 && fabs(b.coverage - l.coverage) <= 2.5 &&
		   fabs(b.mean_rel) < 1 && fabs(l.mean_rel) < 1,
		   "rate 1/%u, %g %% touched, pages in [%llu, %llu): bitmap coverage %.1f %%, lazy %.1f %%; "
		   "mean error %+.2f %%, %+.2f %%", 1u << bc[i].level, bc[i].frac * 100,
		   (unsigned long long)bc[i].nmin, (unsigned long long)(2 * bc[i].nmin), b.coverage,
		   l.coverage, b.mean_rel, l.mean_rel);
	}
}

/* Structured truths, where which pages are members matters: a contiguous
 * run (a quarter of the range) and every stride-th page.  The estimate must
 * be unbiased.  The interval assumes a random set: it is conservative on
 * the run (stratification counts it to +-1 member), and a truth spread
 * evenly over the blocks (every other page at rate 1/4) makes x binomial,
 * wider than the finite-population correction allows for. */
static cell_t run_structured(unsigned level, uint64_t stride, uint64_t cell_seed)
{
	cell_t c = {0};
	uint64_t nmin = 2048ull << level;
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t n = nmin + below(nmin), first = below(1ull << 40), end = first + n;
		uint64_t k = wss_sample_count(first, end, level, seed), t, x = 0;
		if (!stride) {
			t = n / 4;
			uint64_t at = first + below(n - t + 1);
			x = wss_sample_count(at, at + t, level, seed);
		} else {
			uint64_t r = below(stride);
			/* pages p in [first, end) with p % stride == r */
			uint64_t p0 = first + ((r + stride - first % stride) % stride);
			t = p0 < end ? (end - 1 - p0) / stride + 1 : 0;
			for (uint64_t b = first >> level; b <= (end - 1) >> level; b++) {
				uint64_t m = wss_sample_in_block(b, level, seed);
				x += m >= first && m < end && m % stride == r;
			}
		}
		tally(&c, wss_estimate_pages(n, k, x), t);
	}
	finish(&c, TRIALS);
	return c;
}

static void test_structured(void)
{
	static const unsigned sl[] = {4, 8, 12};
	for (size_t i = 0; i < 3; i++) {
		cell_t run = run_structured(sl[i], 0, 700 + i);
		cell_t str = run_structured(sl[i], 64, 800 + i);
		ok(fabs(run.mean_rel) < 0.5, "rate 1/%u, a contiguous quarter: mean error %+.3f %%",
		   1u << sl[i], run.mean_rel);
		ok(fabs(str.mean_rel) < 1.5, "rate 1/%u, every 64th page: mean error %+.2f %%",
		   1u << sl[i], str.mean_rel);
		diag("rate 1/%u: coverage %.1f %% on the run (half-width %.1f %%), %.1f %% on the stride "
		     "(half-width %.1f %%)", 1u << sl[i], run.coverage, run.mean_width, str.coverage,
		     str.mean_width);
	}
	cell_t even = run_structured(2, 2, 850), even16 = run_structured(4, 2, 851);
	ok(fabs(even.mean_rel) < 0.5 && fabs(even16.mean_rel) < 0.5,
	   "every other page at rates 1/4 and 1/16: mean error %+.2f %%, %+.2f %%", even.mean_rel,
	   even16.mean_rel);
	diag("every other page (an even spread, x binomial): coverage %.1f %% at 1/4, %.1f %% at 1/16",
	     even.coverage, even16.coverage);
}

/* The average over samples: 8 samples per trial whose truths are drawn
 * independently (the case where averaging the bounds is widest). */
static void test_average(void)
{
	int covered = 0;
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(990000 + (uint64_t)trial);
		uint64_t seed = wss_sample_seed(rnd()), first = below(1ull << 40);
		uint64_t n = (1ull << 20) + below(1ull << 20);
		uint64_t k = wss_sample_count(first, first + n, 10, seed);
		wss_estimate_sum_t s = {0};
		double truth = 0;
		for (int i = 0; i < 8; i++) {
			uint64_t t = n / 100 + below(n / 50);
			truth += (double)t / 8;
			wss_estimate_sum_add(&s, wss_estimate_pages(n, k, hypergeometric(n, t, k)));
		}
		wss_estimate_avg_t a = wss_estimate_sum_avg(&s);
		covered += a.lo <= truth && truth <= a.hi;
	}
	wss_estimate_sum_t z = {0};
	wss_estimate_avg_t a = wss_estimate_sum_avg(&z);
	ok(100.0 * covered / TRIALS >= 95 && a.est == 0 && a.lo == 0 && a.hi == 0,
	   "the average of 8 independent samples' bounds covers the true average in %.1f %% "
	   "(>= 95); no samples: 0", 100.0 * covered / TRIALS);
}

/* The average over a run's intervals from the members' per-page counts
 * (wss_strata_*: the summary's avg), with the touch patterns that make a
 * page-level formula under-cover: independent random touches, a run of
 * pages, strides, hot blocks.  Each trial draws its own membership seed
 * and its own touches; the truth is the mean over the intervals of the
 * pages touched. */
enum { PAT_RANDOM, PAT_RUNS, PAT_STRIDE, PAT_HOT, PAT_N };
static const char *const pat_name[PAT_N] = {"random pages", "runs", "strides", "hot blocks"};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 32);
}

typedef struct pattern {
	int kind;
	uint64_t key, first, n;
	uint64_t run_at[16], run_len[16], stride[16], phase[16];
	uint32_t p_ppm[16];
} pattern_t;

/* Was page p touched in interval i? */
static int touched(const pattern_t *pt, uint64_t p, int i)
{
	uint64_t off = p - pt->first;
	switch (pt->kind) {
	case PAT_RANDOM: return mix(pt->key ^ p * 0x100000001b3ULL ^ (uint64_t)i << 56) % 1000000 < pt->p_ppm[i];
	case PAT_RUNS: return off >= pt->run_at[i] && off < pt->run_at[i] + pt->run_len[i];
	case PAT_STRIDE: return off % pt->stride[i] == pt->phase[i];
	default: {
		/* a quarter of the 256-page blocks hot: their pages touched 4 in
		 * 5 intervals, the others' 1 in 50 */
		int hot = mix(pt->key ^ (p >> 8)) % 4 == 0;
		return mix(pt->key ^ p * 0x9e37ULL ^ (uint64_t)i << 50) % 1000 < (hot ? 800u : 20u);
	}
	}
}

/* A trial's pattern: its kind, a range of 256-512 blocks at level, and
 * nint intervals' parameters. */
static pattern_t pattern_draw(int kind, unsigned level, int nint)
{
	pattern_t pt = {.kind = kind, .key = rnd()};
	pt.n = (256ull << level) + below(256ull << level);
	pt.first = below(1ull << 36);
	for (int i = 0; i < nint; i++) {
		pt.p_ppm[i] = 20000 + (uint32_t)below(180000);
		pt.run_len[i] = pt.n / 10 + below(pt.n / 3);
		pt.run_at[i] = below(pt.n - pt.run_len[i]);
		static const uint64_t strides[] = {3, 7, 64, 100};
		pt.stride[i] = strides[below(4)];
		pt.phase[i] = below(pt.stride[i]);
	}
	return pt;
}

static double strata_coverage(int kind, unsigned level, int nint, uint64_t cell_seed, double *width)
{
	int covered = 0;
	double wsum = 0;
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		pattern_t pt = pattern_draw(kind, level, nint);
		uint64_t seed = wss_sample_seed(rnd());
		double truth = 0;
		for (uint64_t p = pt.first; p < pt.first + pt.n; p++)
			for (int i = 0; i < nint; i++)
				truth += touched(&pt, p, i);
		truth /= nint;
		wss_strata_t st = {0};
		uint64_t end = pt.first + pt.n;
		for (uint64_t b = pt.first >> level; b <= (end - 1) >> level; b++) {
			uint64_t m = wss_sample_in_block(b, level, seed);
			if (m < pt.first || m >= end)
				continue;
			int c = 0;
			for (int i = 0; i < nint; i++)
				c += touched(&pt, m, i);
			wss_strata_add(&st, c);
		}
		wss_strata_break(&st);
		wss_estimate_avg_t a = wss_strata_interval(&st, (double)(1u << level), 0, nint);
		covered += a.lo <= truth && truth <= a.hi;
		wsum += truth > 0 ? (a.hi - a.lo) / 2 / truth : 0;
	}
	*width = 100 * wsum / TRIALS;
	return 100.0 * covered / TRIALS;
}

/* One interval's estimate (wss_estimate_strata) over the same patterns:
 * its coverage, and its mean half-width beside Wilson's. */
static double interval_coverage(int kind, unsigned level, uint64_t cell_seed, double *width, double *wilson)
{
	int covered = 0;
	double wsum = 0, wwil = 0;
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		pattern_t pt = pattern_draw(kind, level, 1);
		uint64_t seed = wss_sample_seed(rnd());
		uint64_t truth = 0, end = pt.first + pt.n, k = 0, x = 0;
		for (uint64_t p = pt.first; p < end; p++)
			truth += touched(&pt, p, 0);
		wss_strata_t st = {0};
		for (uint64_t b = pt.first >> level; b <= (end - 1) >> level; b++) {
			uint64_t m = wss_sample_in_block(b, level, seed);
			if (m < pt.first || m >= end)
				continue;
			int y = touched(&pt, m, 0);
			k++;
			x += y;
			wss_strata_add(&st, y);
		}
		wss_strata_break(&st);
		wss_estimate_t e = wss_estimate_strata(pt.n, k, x, &st, level), w = wss_estimate_pages(pt.n, k, x);
		covered += e.lo <= truth && truth <= e.hi;
		wsum += truth ? (double)(e.hi - e.lo) / 2 / (double)truth : 0;
		wwil += truth ? (double)(w.hi - w.lo) / 2 / (double)truth : 0;
	}
	*width = 100 * wsum / TRIALS;
	*wilson = 100 * wwil / TRIALS;
	return 100.0 * covered / TRIALS;
}

static void test_strata(void)
{
	for (int kind = 0; kind < PAT_N; kind++) {
		double w, wil;
		double c = interval_coverage(kind, 5, 3200 + (uint64_t)kind, &w, &wil);
		double top = kind == PAT_RUNS || kind == PAT_HOT ? 100 : 97.5;
		ok(c >= 93 && c <= top, "one interval over %s at 1/32: coverage %.1f %%, half-width %.1f %% (Wilson's %.1f %%)",
		   pat_name[kind], c, w, wil);
	}
	for (int kind = 0; kind < PAT_N; kind++) {
		double w4, w6;
		double c4 = strata_coverage(kind, 4, 8, 3000 + (uint64_t)kind, &w4);
		double c6 = strata_coverage(kind, 6, 6, 3100 + (uint64_t)kind, &w6);
		/* Runs and hot blocks have neighbouring blocks of unequal means
		 * only at their edges: the pairs' differences there make the
		 * interval conservative, and very narrow. */
		double top = kind == PAT_RUNS || kind == PAT_HOT ? 100 : 97.5;
		ok(c4 >= 93 && c4 <= top && c6 >= 93 && c6 <= top,
		   "the average's interval over %s: coverage %.1f %% at 1/16 (8 intervals, half-width %.1f %%), "
		   "%.1f %% at 1/64 (6, %.1f %%)", pat_name[kind], c4, w4, c6, w6);
	}
	wss_strata_t z = {0};
	wss_estimate_avg_t a = wss_strata_interval(&z, 64, 10, 2);
	ok(a.est == 5 && a.lo == 5 && a.hi == 5, "no members: the exact part alone");
	wss_strata_t one = {0};
	wss_strata_add(&one, 3);
	wss_strata_add(&one, 1);
	wss_strata_add(&one, 2);
	wss_strata_break(&one);
	wss_strata_t lone = {0};
	wss_strata_add(&lone, 3);
	wss_strata_break(&lone);
	ok(one.pairs == 2 && one.var == 2 + 0.5 && one.sum == 6 && lone.var == 9,
	   "half of each successive difference squared; a range of one member: its square");
}

/* The run's total over several sampled levels (engine/totals.c,
 * wss_tick_last_touch, and wss_estimate_total_levels): each page counts
 * by its last touch seen, 2^M when a member of M, the coarsest level in
 * force from that interval to the end.  schedule: each interval's level.
 * The truth is the pages touched in any interval. */
static double levels_coverage(int kind, const unsigned *schedule, int nint, uint64_t cell_seed, double *width)
{
	int covered = 0;
	double wsum = 0;
	unsigned fine = 30;
	for (int i = 0; i < nint; i++)
		if (schedule[i] < fine)
			fine = schedule[i];
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		pattern_t pt = pattern_draw(kind, fine, nint);
		uint64_t seed = wss_sample_seed(rnd()), truth = 0, n[WSS_SAMPLE_LEVEL_MAX + 1] = {0};
		unsigned coarse = 0;
		for (uint64_t p = pt.first; p < pt.first + pt.n; p++) {
			int last = -1, seen = -1;
			for (int i = 0; i < nint; i++)
				if (touched(&pt, p, i)) {
					last = i;
					if (wss_sample_member(p, schedule[i], seed))
						seen = i;
				}
			truth += last >= 0;
			if (seen < 0)
				continue;
			unsigned m = 0;
			for (int i = seen; i < nint; i++)
				if (schedule[i] > m)
					m = schedule[i];
			if (wss_sample_member(p, m, seed))
				n[m]++;
		}
		for (int i = 0; i < nint; i++)
			if (schedule[i] > coarse)
				coarse = schedule[i];
		wss_estimate_t e = wss_estimate_total_levels(0, n, WSS_SAMPLE_LEVEL_MAX + 1, coarse);
		covered += e.lo <= truth && truth <= e.hi;
		wsum += truth ? (double)(e.hi - e.lo) / 2 / (double)truth : 0;
	}
	*width = 100 * wsum / TRIALS;
	return 100.0 * covered / TRIALS;
}

static void test_total_levels(void)
{
	/* A burst's coarse start, then a finer sample; and a run that went
	 * fine, coarse, fine. */
	static const unsigned burst[8] = {8, 8, 4, 4, 4, 4, 4, 4}, dip[8] = {4, 4, 7, 4, 4, 4, 5, 4};
	for (int kind = 0; kind < PAT_N; kind++) {
		double wb, wd;
		double cb = levels_coverage(kind, burst, 8, 3300 + (uint64_t)kind, &wb);
		double cd = levels_coverage(kind, dip, 8, 3400 + (uint64_t)kind, &wd);
		ok(cb >= 93 && cd >= 93, "the total over several levels, %s: coverage %.1f %% after a coarse start (half-width %.1f %%), "
		   "%.1f %% over a coarse dip (%.1f %%)", pat_name[kind], cb, wb, cd, wd);
	}
	uint64_t one[WSS_SAMPLE_LEVEL_MAX + 1] = {0};
	one[4] = 100;
	wss_estimate_t a = wss_estimate_total_levels(7, one, WSS_SAMPLE_LEVEL_MAX + 1, 4), b = wss_estimate_total(7, 100, 4);
	ok(a.est == 1607 && a.lo >= b.lo && a.hi <= b.hi && a.lo >= 107 && a.hi > a.est,
	   "one stratum: 2^m per page plus the exact part, an interval no wider than the coarsest level's Poisson one "
	   "(%llu [%llu, %llu] against [%llu, %llu])", (unsigned long long)a.est, (unsigned long long)a.lo,
	   (unsigned long long)a.hi, (unsigned long long)b.lo, (unsigned long long)b.hi);
	uint64_t zero[WSS_SAMPLE_LEVEL_MAX + 1] = {0};
	wss_estimate_t z = wss_estimate_total_levels(5, zero, WSS_SAMPLE_LEVEL_MAX + 1, 6), zt = wss_estimate_total(5, 0, 6);
	ok(z.est == 5 && z.lo == zt.lo && z.hi == zt.hi, "nothing found: the coarsest level's Poisson bound above the exact part");
	uint64_t ex[WSS_SAMPLE_LEVEL_MAX + 1] = {0};
	ex[0] = 40;
	wss_estimate_t x = wss_estimate_total_levels(2, ex, WSS_SAMPLE_LEVEL_MAX + 1, 6);
	ok(x.est == 42 && x.lo == 42 && x.hi == 42, "pages of exact intervals alone: an exact total");
}

/* wss_strata_add_zeros leaves exactly what as many wss_strata_add(s, 0)
 * calls leave (the tick's count by its touched list adds the untouched
 * members between touched ones so: engine/tick.c), bit for bit, from every
 * state a range can be in: empty, after a one, after a zero, across breaks. */
static void test_strata_zeros(void)
{
	int bad = 0, trials = 2000;
	rng_seed(77);
	for (int t = 0; t < trials; t++) {
		wss_strata_t a = {0}, b = {0};
		int steps = 1 + (int)below(40);
		for (int i = 0; i < steps; i++) {
			uint64_t r = below(10);
			if (r < 4) {
				double y = (double)below(2);
				wss_strata_add(&a, y);
				wss_strata_add(&b, y);
			} else if (r < 9) {
				uint64_t m = below(6);
				for (uint64_t j = 0; j < m; j++)
					wss_strata_add(&a, 0);
				wss_strata_add_zeros(&b, m);
			} else {
				wss_strata_break(&a);
				wss_strata_break(&b);
			}
		}
		wss_strata_break(&a);
		wss_strata_break(&b);
		bad += a.sum != b.sum || a.var != b.var || a.members != b.members || a.pairs != b.pairs;
	}
	is_int(bad, 0, "%d random sequences of members: zeros in bulk as zeros one by one", trials);
	wss_strata_t z = {0};
	wss_strata_add(&z, 1);
	wss_strata_add_zeros(&z, 1000000000ULL);
	ok(z.members == 1000000001ULL && z.pairs == 1000000000ULL && z.var == 0.5 && z.sum == 1,
	   "a billion zeros after a one: one difference of 1, in O(1)");
}

int main(void)
{
	plan(108);
	test_nesting();
	test_one_per_block();
	test_count();
	test_density();
	test_seeds();
	test_uniformity();
	time_in_block();
	test_estimate_values();
	test_coverage();
	test_bitmap();
	test_structured();
	test_average();
	test_strata();
	test_strata_zeros();
	test_total_levels();
	return done_testing();
}
