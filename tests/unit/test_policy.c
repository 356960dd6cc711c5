/* The replacement policies (cli/analyses/policy.c), the LRU stack distances
 * (cli/analyses/mrc.c) and the heat-map arithmetic (cli/analyses/heatmap.c) on reference
 * strings whose results are worked out by hand in the comments: Belady's
 * anomaly under FIFO, each policy on the classic string, NFU against
 * Aging where frequency and recency disagree; then OPT against every
 * other policy, and the stack distances against LRU itself, on seeded
 * random strings (the same strings every run). */
#include "config.h"
#include "cli/analyses/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/heatmap.h"
#include "cli/analyses/mrc.h"
#include "tests/tap/tap.h"

/* Faults of policy kind with frames frames over refs; an interval ends
 * after every per references (0: never). */
static uint64_t faults(wss_policy_kind_t kind, size_t frames, const uint32_t *refs, size_t n, size_t npages,
		       size_t per)
{
	uint64_t *next = malloc(n * sizeof *next);
	wss_policy_t *p;
	if (!next || wss_policy_next_uses(refs, n, npages, next) || wss_policy_new(kind, frames, npages, &p))
		bail("out of memory");
	uint64_t f = 0;
	for (size_t i = 0; i < n; i++) {
		if (per && i && i % per == 0)
			wss_policy_interval_end(p);
		f += !wss_policy_ref(p, refs[i], next[i]);
	}
	wss_policy_free(p);
	free(next);
	return f;
}

static const uint32_t belady[] = {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5};
#define NB (sizeof belady / sizeof *belady)

static void test_classic(void)
{
	is_int((long long)faults(WSS_POLICY_FIFO, 3, belady, NB, 6, 0), 9, "FIFO, 3 frames: 9 faults");
	is_int((long long)faults(WSS_POLICY_FIFO, 4, belady, NB, 6, 0), 10, "FIFO, 4 frames: 10 faults (Belady's anomaly)");
	is_int((long long)faults(WSS_POLICY_LRU, 3, belady, NB, 6, 0), 10, "LRU, 3 frames: 10 faults");
	is_int((long long)faults(WSS_POLICY_LRU, 4, belady, NB, 6, 0), 8, "LRU, 4 frames: 8 faults");
	/* OPT, 3 frames: 1 2 3 miss; 4 evicts 3 (next use farthest); 1 2 hit;
	 * 5 evicts 4; 1 2 hit; 3 evicts 1 (1 and 2 are never used again: the
	 * earlier loaded goes); 4 evicts 2; 5 hits.  7 faults. */
	is_int((long long)faults(WSS_POLICY_OPT, 3, belady, NB, 6, 0), 7, "OPT, 3 frames: 7 faults");
	is_int((long long)faults(WSS_POLICY_OPT, 4, belady, NB, 6, 0), 6, "OPT, 4 frames: 6 faults");
	/* Clock, 3 frames: every bit is set whenever the hand sweeps, so it
	 * evicts as FIFO does: 9.  4 frames: 1 2 3 4 miss, 1 2 hit, 5 clears
	 * all four bits and takes 1's frame, then 1, 2, 3, 4 each take the
	 * next frame (bits clear), 5 sweeps again: 10. */
	is_int((long long)faults(WSS_POLICY_CLOCK, 3, belady, NB, 6, 0), 9, "Clock, 3 frames: 9 faults");
	is_int((long long)faults(WSS_POLICY_CLOCK, 4, belady, NB, 6, 0), 10, "Clock, 4 frames: 10 faults");
	/* NFU, 3 frames, intervals of 3: [1 2 3] all miss, counters 1 1 1;
	 * [4 1 2]: 4 evicts 1 (ties: loaded earliest), 1 evicts 4 (counter 0,
	 * the least), 2 hits, counters 1:1 2:2 3:1; [5 1 2]: 5 evicts 3 (1 and
	 * 3 tie at 1; 3 loaded earlier), 1 2 hit, counters 1:2 2:3 5:1;
	 * [3 4 5]: each evicts the page loaded just before.  3+2+1+3 = 9. */
	is_int((long long)faults(WSS_POLICY_NFU, 3, belady, NB, 6, 3), 9, "NFU, 3 frames, intervals of 3: 9 faults");
	is_int((long long)faults(WSS_POLICY_AGING, 3, belady, NB, 6, 3), 9, "Aging, 3 frames, intervals of 3: 9 faults");
	is_int((long long)faults(WSS_POLICY_FIFO, 0, belady, NB, 6, 0), (long long)NB, "no frames: every reference faults");
	is_int((long long)faults(WSS_POLICY_LRU, 99, belady, NB, 6, 0), 5, "more frames than pages: the 5 cold misses");
}

/* A (0) used in each of three intervals, then B (1), C (2), A, B, one an
 * interval, 2 frames.  NFU keeps A for its count: C evicts B, and B's
 * return evicts C (count 1 against A's 4): faults A B C B = 4.  Aging
 * forgets: A's counter has decayed to 0x70 when C comes (B has 0x80), so
 * C evicts A, A's return evicts B, B's evicts C: A B C A B = 5.  LRU and
 * FIFO: 5.  OPT: C evicts B (next used last): 4. */
static void test_frequency_recency(void)
{
	static const uint32_t s[] = {0, 0, 0, 1, 2, 0, 1};
	size_t n = sizeof s / sizeof *s;
	is_int((long long)faults(WSS_POLICY_NFU, 2, s, n, 3, 1), 4, "NFU keeps the frequent page: 4 faults");
	is_int((long long)faults(WSS_POLICY_AGING, 2, s, n, 3, 1), 5, "Aging lets the old one go: 5 faults");
	is_int((long long)faults(WSS_POLICY_LRU, 2, s, n, 3, 1), 5, "LRU: 5 faults");
	is_int((long long)faults(WSS_POLICY_FIFO, 2, s, n, 3, 1), 5, "FIFO: 5 faults");
	is_int((long long)faults(WSS_POLICY_OPT, 2, s, n, 3, 1), 4, "OPT: 4 faults");
}

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(((rng >> 33) * n) >> 31);
}

/* A string with locality: mostly a drifting window of hot pages. */
static void random_string(uint32_t *s, size_t n, uint32_t npages, uint64_t seed)
{
	rng = seed;
	for (size_t i = 0; i < n; i++)
		s[i] = rnd(4) ? (uint32_t)((i / 50 + rnd(12)) % npages) : rnd(npages);
}

static void test_random(void)
{
	enum { N = 3000, PAGES = 64, STRINGS = 20 };
	static uint32_t s[N];
	int worse = 0, lru_bad = 0, mono_bad = 0, checks = 0;
	for (uint64_t seed = 1; seed <= STRINGS; seed++) {
		random_string(s, N, PAGES, seed);
		/* Stack distances: LRU with C frames hits exactly the
		 * references at distance <= C. */
		wss_stackdist_t sd;
		uint64_t hist[PAGES + 1] = {0};
		if (wss_stackdist_init(&sd, PAGES))
			bail("out of memory");
		for (size_t i = 0; i < N; i++) {
			uint64_t d;
			wss_stackdist_ref(&sd, s[i], &d);
			hist[d]++;
		}
		wss_stackdist_release(&sd);
		uint64_t hits = 0, prev_misses = N + 1;
		for (size_t c = 1; c <= PAGES; c++) {
			hits += hist[c];
			uint64_t lru = faults(WSS_POLICY_LRU, c, s, N, PAGES, 0);
			lru_bad += lru != N - hits;
			mono_bad += N - hits > prev_misses;
			prev_misses = N - hits;
			if (c % 4)
				continue;
			uint64_t opt = faults(WSS_POLICY_OPT, c, s, N, PAGES, 0);
			for (int k = 0; k < WSS_POLICY_N; k++, checks++)
				worse += opt > faults((wss_policy_kind_t)k, c, s, N, PAGES, 37);
		}
	}
	is_int(worse, 0, "OPT faults no more than any policy (%d comparisons over %d seeded strings)", checks, STRINGS);
	is_int(lru_bad, 0, "the stack distances give LRU's faults at every size 1..64");
	is_int(mono_bad, 0, "the LRU miss curve never rises with size");
	/* A string long enough to renumber the positions many times. */
	wss_stackdist_t sd;
	if (wss_stackdist_init(&sd, 3))
		bail("out of memory");
	int bad = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		uint64_t d;
		wss_stackdist_ref(&sd, i % 3, &d);
		bad += d != (i < 3 ? 0 : 3);
	}
	wss_stackdist_release(&sd);
	is_int(bad, 0, "a cycle over 3 pages: distance 3 for every reuse, across renumberings");
}

static void test_heat(void)
{
	static const size_t want[10] = {0, 0, 0, 1, 1, 2, 2, 2, 3, 3};
	int bad = 0;
	for (uint64_t i = 0; i < 10; i++)
		bad += wss_heat_bin(i, 10, 4) != want[i] || wss_heat_bin_first(want[i], 10, 4) > i;
	is_int(bad, 0, "10 items in 4 bins: 3, 2, 3, 2, by proportion");
	ok(wss_heat_bin_first(1, 10, 4) == 3 && wss_heat_bin_first(4, 10, 4) == 10, "bins' first items: 3, ..., 10");
	ok(wss_heat_bin(1ull << 40, 1ull << 47, 1000) == 7, "no overflow on a 47-bit span");
	ok(wss_heat_shade(0, 27) == 0 && wss_heat_shade(1, 27) == 1 && wss_heat_shade(3, 27) == 1 &&
	       wss_heat_shade(4, 27) == 2 && wss_heat_shade(27, 27) == 9,
	   "shades: 0 blank, 1..3 of 27 the lightest, 27 the darkest");
	wss_heat_t a, b, c;
	if (wss_heat_init(&a, 2, 2) || wss_heat_init(&b, 2, 2) || wss_heat_init(&c, 2, 1))
		bail("out of memory");
	a.cells[0] = a.cells[3] = 1;
	b.cells[1] = b.cells[2] = 2;
	/* a/A = (.5 0 0 .5), b/B = (0 .5 .5 0): each cell differs by .5. */
	ok(fabs(wss_heat_rmsd(&a, &b) - 0.5) < 1e-12, "RMSD of two disjoint halves: 0.5");
	b.cells[0] = b.cells[3] = 7;
	b.cells[1] = b.cells[2] = 0;
	ok(wss_heat_rmsd(&a, &b) == 0, "RMSD of a map and a multiple of it: 0 (each divided by its total)");
	ok(wss_heat_rmsd(&a, &c) < 0, "maps of different grids: no RMSD");
	ok(wss_heat_rmsd(&a, &c) < 0 && wss_heat_total(&a) == 2 && wss_heat_max(&b) == 7, "totals and maxima");
	wss_heat_release(&a);
	wss_heat_release(&b);
	wss_heat_release(&c);
}

int main(void)
{
	plan(29);
	test_classic();
	test_frequency_recency();
	test_random();
	test_heat();
	return done_testing();
}
