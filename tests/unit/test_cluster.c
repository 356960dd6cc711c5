/* Cluster designs (common/sample.h: a span) and their estimator
 * (common/estimate.c: strata of cluster sums, wss_strata_add_key).
 * Membership: nesting across every level, below and above the span; one
 * cluster of 2^(S-L) pages per block; counts and the coarsest level
 * against brute force.  The estimator: the coverage of one interval's 95 %
 * interval over 2,000 seeded trials per touch pattern (issue 29 asks for
 * 93-97 %), including the patterns that make a page-level formula
 * under-cover, and a terabyte-like sparse stride, where a cluster design
 * at the same number of armed runs (VMAs) as the page design is several
 * times tighter.  Every random choice comes from fixed seeds. */
#include "config.h"
#include "common/sample.h"
#include "common/estimate.h"

#include <math.h>
#include <stdio.h>

#include "tests/tap/tap.h"

#define TRIALS 2000

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull; }
static uint64_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	uint64_t z = rng_state;
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
	z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return z ^ (z >> 33);
}
static uint64_t below(uint64_t n) { return (uint64_t)(((unsigned __int128)rnd() * n) >> 64); }

/* ---- membership ---- */

static void test_nesting(void)
{
	uint64_t bad = 0, checked = 0;
	rng_seed(11);
	for (int r = 0; r < 400; r++) {
		uint64_t seed = wss_sample_seed(rnd());
		unsigned span = 1 + (unsigned)below(14);
		uint64_t first = below(1ull << 40), n = 4ull << span;
		for (uint64_t p = first; p < first + n; p += 1 + below(7)) {
			for (unsigned l = 0; l < span + 4; l++, checked++)
				bad += wss_sample_member_span(p, l + 1, span, seed) &&
				       !wss_sample_member_span(p, l, span, seed);
		}
	}
	ok(bad == 0, "cluster designs nest: a member at L+1 is one at L, below, at and above the span (%llu checks)",
	   (unsigned long long)checked);
}

static void test_blocks(void)
{
	uint64_t bad = 0, blocks = 0;
	rng_seed(12);
	for (int r = 0; r < 300; r++) {
		uint64_t seed = wss_sample_seed(rnd());
		unsigned span = 2 + (unsigned)below(10), level = (unsigned)below(span);
		uint64_t b = below(1ull << 30), len = 1ull << (span - level);
		uint64_t c = wss_sample_cluster(b, level, span, seed), members = 0;
		bad += c % len != 0 || (c >> span) != b;
		for (uint64_t p = b << span; p < (b + 1) << span; p++) {
			bool m = wss_sample_member_span(p, level, span, seed);
			members += m;
			bad += m != (p >= c && p < c + len);
		}
		bad += members != len;
		/* The level-span member of the block is in its cluster. */
		uint64_t top = wss_sample_in_block(b, span, seed);
		bad += top < c || top >= c + len;
		blocks++;
	}
	ok(bad == 0, "below the span, each block holds one aligned cluster of 2^(S-L) pages, holding the level-S member (%llu blocks)",
	   (unsigned long long)blocks);
}

static void test_counts(void)
{
	uint64_t bad = 0, ranges = 0, topbad = 0;
	rng_seed(13);
	for (int r = 0; r < 600; r++) {
		uint64_t seed = wss_sample_seed(rnd());
		unsigned span = 1 + (unsigned)below(12), level = (unsigned)below(span + 3);
		uint64_t first = below(1ull << 36), n = below(6ull << span) + 1, c = 0;
		for (uint64_t p = first; p < first + n; p++)
			c += wss_sample_member_span(p, level, span, seed);
		bad += c != wss_sample_count_span(first, first + n, level, span, seed);
		ranges++;
		for (int k = 0; k < 20; k++) {
			uint64_t p = first + below(n);
			unsigned t = wss_sample_top_span(p, span, seed);
			topbad += !wss_sample_member_span(p, t, span, seed) ||
				  (t < WSS_SAMPLE_LEVEL_MAX && wss_sample_member_span(p, t + 1, span, seed));
		}
	}
	ok(bad == 0, "member counts of %llu ranges against brute force", (unsigned long long)ranges);
	ok(topbad == 0, "the coarsest level of a page: a member there, not one level up");
	ok(wss_sample_count_span(100, 100, 3, 8, 1) == 0 && wss_sample_count_span(0, 1ull << 20, 3, 8, 7) == 1ull << 17,
	   "an empty range has none; whole blocks hold 1 in 2^L pages");
}

/* ---- coverage ---- */

enum { PAT_RANDOM, PAT_RUNS, PAT_STRIDE, PAT_HOT, PAT_SPARSE, PAT_N };
static const char *const pat_name[PAT_N] = {"random pages", "runs", "strides", "hot blocks", "1 page in 1,024"};

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
	uint64_t key, first, n, run_at, run_len, stride, phase;
	uint32_t p_ppm;
} pattern_t;

static int touched(const pattern_t *pt, uint64_t p)
{
	uint64_t off = p - pt->first;
	switch (pt->kind) {
	case PAT_RANDOM: return mix(pt->key ^ p * 0x100000001b3ULL) % 1000000 < pt->p_ppm;
	case PAT_RUNS: return off >= pt->run_at && off < pt->run_at + pt->run_len;
	case PAT_STRIDE: return off % pt->stride == pt->phase;
	case PAT_SPARSE: return p % 1024 == pt->phase;
	default: {
		int hot = mix(pt->key ^ (p >> 8)) % 4 == 0;
		return mix(pt->key ^ p * 0x9e37ULL) % 1000 < (hot ? 800u : 20u);
	}
	}
}

/* A trial's pattern over blocks of 2^span pages, of which the range
 * holds nb to 2 nb. */
static pattern_t pattern_draw(int kind, unsigned span, uint64_t nb)
{
	pattern_t pt = {.kind = kind, .key = rnd()};
	pt.n = (nb << span) + below(nb << span);
	pt.first = below(1ull << 36);
	pt.p_ppm = 20000 + (uint32_t)below(180000);
	pt.run_len = pt.n / 10 + below(pt.n / 3);
	pt.run_at = below(pt.n - pt.run_len);
	static const uint64_t strides[] = {3, 7, 64, 100};
	pt.stride = strides[below(4)];
	pt.phase = below(kind == PAT_SPARSE ? 1024 : pt.stride);
	return pt;
}

typedef struct cell {
	double coverage, width; /* width: the mean half-width over the truth, % */
} cell_t;

/* One interval's estimate (wss_estimate_strata) at level under span: the
 * members walked in address order as the engine walks them, a cluster's
 * pages gathered by their cluster number. */
static cell_t coverage(int kind, unsigned level, unsigned span, uint64_t nb, uint64_t cell_seed)
{
	int covered = 0;
	double wsum = 0;
	for (int trial = 0; trial < TRIALS; trial++) {
		rng_seed(cell_seed * 1000003 + (uint64_t)trial);
		pattern_t pt = pattern_draw(kind, span, nb);
		uint64_t seed = wss_sample_seed(rnd()), end = pt.first + pt.n, truth = 0, k = 0, x = 0;
		if (kind == PAT_SPARSE) /* pages = phase mod 1,024 in [first, end) */
			truth = (end - pt.phase + 1023) / 1024 - (pt.first - pt.phase + 1023) / 1024;
		else
			for (uint64_t p = pt.first; p < end; p++)
				truth += touched(&pt, p);
		wss_strata_t st = {0};
		bool clusters = level < span;
		unsigned shift = clusters ? span - level : 0;
		uint64_t fb = pt.first >> span, lb = (end - 1) >> span;
		for (uint64_t b = fb; b <= lb; b++) {
			uint64_t m0, len, yb = 0;
			bool cut = (b == fb && pt.first & ((1ull << span) - 1)) || (b == lb && end & ((1ull << span) - 1));
			if (clusters) {
				m0 = wss_sample_cluster(b, level, span, seed);
				len = 1ull << shift;
			} else { /* the page design at the span: one page a block */
				m0 = wss_sample_in_block(b, span, seed);
				len = 1;
			}
			for (uint64_t p = m0; p < m0 + len; p++) {
				if (p < pt.first || p >= end)
					continue;
				int y = touched(&pt, p);
				k++;
				x += (uint64_t)y;
				yb += (uint64_t)y;
				if (clusters)
					wss_strata_add_key(&st, p >> shift, y);
				else
					wss_strata_add(&st, y);
			}
			if (cut && clusters)
				wss_strata_doubt(&st, (double)yb);
		}
		wss_strata_break(&st);
		wss_estimate_t e = wss_estimate_strata(pt.n, k, x, &st, level);
		covered += e.lo <= truth && truth <= e.hi;
		wsum += truth ? (double)(e.hi - e.lo) / 2 / (double)truth : 0;
	}
	return (cell_t){100.0 * covered / TRIALS, 100 * wsum / TRIALS};
}

static void test_coverage(void)
{
	/* Span 8 (blocks of 256 pages), clusters of 4 and of 16 pages. */
	for (int kind = 0; kind < PAT_SPARSE; kind++) {
		cell_t a = coverage(kind, 6, 8, 128, 4000 + (uint64_t)kind), b = coverage(kind, 4, 8, 128, 4100 + (uint64_t)kind);
		/* Runs and hot blocks differ between neighbouring clusters only
		 * at their edges: conservative there. */
		double top = kind == PAT_RUNS || kind == PAT_HOT ? 100 : 97.5;
		ok(a.coverage >= 93 && a.coverage <= top && b.coverage >= 93 && b.coverage <= top,
		   "one interval over %s, clusters of 4 pages (1 in 64): coverage %.1f %% (half-width %.1f %%); "
		   "of 16 (1 in 16): %.1f %% (%.1f %%)",
		   pat_name[kind], a.coverage, a.width, b.coverage, b.width);
	}
}

/* A terabyte-like sparse range: one page touched in every 1,024, over
 * 1,024-2,048 blocks.  The page design at the level whose members fit a
 * VMA budget (one per block of 2^14 pages here) holds few touched members; the cluster design with
 * that span arms as many runs, at a level the fault budget sets (1 in
 * 256: clusters of 64 pages), and its interval is far tighter. */
static void test_sparse(void)
{
	cell_t page = coverage(PAT_SPARSE, 14, 14, 1024, 4200), cl = coverage(PAT_SPARSE, 8, 14, 1024, 4300);
	ok(cl.coverage >= 93 && cl.coverage <= 97.5, "one page in 1,024, clusters of 64 pages at 1 in 256: coverage %.1f %%",
	   cl.coverage);
	ok(page.coverage >= 93, "the page design at the same VMAs (1 in 16,384): coverage %.1f %%", page.coverage);
	ok(cl.width * 3 < page.width, "the cluster design is over three times tighter: half-width %.1f %% against %.1f %%",
	   cl.width, page.width);
	/* Clusters as long as the stride: every one holds one touch, no
	 * spread between them. */
	cell_t whole = coverage(PAT_SPARSE, 4, 14, 128, 4400);
	ok(whole.coverage >= 93 && whole.width < 2, "clusters of 1,024 pages (1 in 16): coverage %.1f %%, half-width %.2f %%",
	   whole.coverage, whole.width);
}

/* The few-touches bounds, by hand. */
static void test_few(void)
{
	wss_strata_t s = {0};
	for (uint64_t c = 0; c < 100; c++)
		for (int p = 0; p < 8; p++)
			wss_strata_add_key(&s, c, c == 7 && p == 0 ? 1 : 0);
	wss_strata_break(&s);
	ok(s.members == 100 && s.sum == 1 && s.nonzero == 1 && s.pages_max == 8,
	   "pages gathered by cluster: 100 members of 8 pages, one touched page");
	wss_estimate_t e = wss_estimate_strata(6400, 800, 1, &s, 3);
	ok(e.hi >= 40, "one touched cluster: the Poisson bound of one, not the spread of 100 near-zeros (hi %llu)",
	   (unsigned long long)e.hi);
	wss_strata_t z = {0};
	for (uint64_t c = 0; c < 50; c++)
		for (int p = 0; p < 16; p++)
			wss_strata_add_key(&z, c, 0);
	wss_strata_break(&z);
	wss_estimate_avg_t a = wss_strata_interval(&z, 4, 0, 1);
	ok(a.est == 0 && a.hi >= 4 * 3.6 * 16, "none touched: up to the Poisson bound of clusters of 16 (hi %.1f)", a.hi);
}

int main(void)
{
	plan(16);
	test_nesting();
	test_blocks();
	test_counts();
	test_coverage();
	test_sparse();
	test_few();
	return done_testing();
}
