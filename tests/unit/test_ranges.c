/* The range set (cli/analyses/ranges.c) and the segment treap (cli/analyses/segs.c) against
 * a plain bitmap and a plain array, on seeded random operations (the same
 * every run): ranges added in any order, overlapping and adjacent, then
 * each page's index and each span's count; segments put and deleted,
 * then floor, ceil and the sums above every key. */
#include "config.h"
#include "cli/analyses/ranges.h"

#include <stdlib.h>
#include <string.h>

#include "cli/analyses/segs.h"
#include "tests/tap/tap.h"

#define SPACE 4096

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* One random set of adds; true when every query agrees. */
static bool ranges_round(uint64_t seed, size_t adds)
{
	static uint8_t in[SPACE];
	memset(in, 0, sizeof in);
	wss_ranges_t s = {0};
	uint64_t st = seed;
	for (size_t i = 0; i < adds; i++) {
		uint64_t first = rnd(&st) % (SPACE - 64), n = 1 + rnd(&st) % (rnd(&st) % 4 ? 3 : 60);
		if (wss_ranges_add(&s, first, n))
			bail("out of memory");
		memset(in + first, 1, n);
	}
	if (wss_ranges_finish(&s))
		bail("out of memory");
	bool good = true;
	uint64_t idx = 0, total = 0;
	for (uint64_t pn = 0; pn < SPACE && good; pn++) {
		uint64_t got;
		bool found = wss_ranges_index(&s, pn, &got);
		good = found == (in[pn] != 0) && (!found || got == idx);
		idx += in[pn];
	}
	total = idx;
	for (size_t i = 0; i + 1 < s.n && good; i++)
		good = s.v[i].first + s.v[i].n < s.v[i + 1].first; /* disjoint, not adjacent */
	for (int q = 0; q < 200 && good; q++) {
		uint64_t a = rnd(&st) % SPACE, b = a + rnd(&st) % (SPACE - a + 1), c = 0;
		for (uint64_t pn = a; pn < b; pn++)
			c += in[pn];
		good = wss_ranges_count(&s, a, b) == c;
	}
	good = good && s.pages == total;
	wss_ranges_release(&s);
	return good;
}

/* Random puts and deletes over keys 0..255, mirrored in arrays. */
static bool segs_round(uint64_t seed)
{
	enum { KEYS = 256 };
	bool has[KEYS] = {false};
	uint64_t len[KEYS], val[KEYS];
	wss_segs_t t = {0};
	uint64_t st = seed;
	bool good = true;
	for (int op = 0; op < 3000 && good; op++) {
		uint64_t k = rnd(&st) % KEYS;
		if (has[k]) {
			good = wss_segs_del(&t, k);
			has[k] = false;
		} else {
			len[k] = 1 + rnd(&st) % 1000;
			val[k] = rnd(&st);
			if (wss_segs_put(&t, k, len[k], val[k]))
				bail("out of memory");
			has[k] = true;
		}
		uint64_t x = rnd(&st) % (KEYS + 2), above = 0;
		for (uint64_t j = x + 1; j < KEYS; j++)
			above += has[j] ? len[j] : 0;
		good = good && wss_segs_sum_above(&t, x) == above;
		wss_seg_t g;
		int64_t fl = -1, ce = -1;
		for (int64_t j = (int64_t)(x < KEYS ? x : KEYS - 1); j >= 0 && fl < 0; j--)
			if (has[j])
				fl = j;
		for (uint64_t j = x; j < KEYS && ce < 0; j++)
			if (has[j])
				ce = (int64_t)j;
		bool f = wss_segs_floor(&t, x, &g);
		good = good && f == (fl >= 0) && (!f || (g.key == (uint64_t)fl && g.len == len[fl] && g.val == val[fl]));
		bool c = wss_segs_ceil(&t, x, &g);
		good = good && c == (ce >= 0) && (!c || g.key == (uint64_t)ce);
	}
	good = good && !wss_segs_del(&t, KEYS + 5);
	wss_segs_release(&t);
	return good;
}

int main(void)
{
	plan(12);
	static const size_t adds[] = {0, 1, 10, 300, 5000, 20000};
	for (size_t i = 0; i < sizeof adds / sizeof *adds; i++)
		ok(ranges_round(1000 + i, adds[i]), "ranges: %zu random adds: indices, counts and disjointness", adds[i]);
	for (uint64_t seed = 1; seed <= 6; seed++)
		ok(segs_round(seed), "segs: seed %llu: floor, ceil and sums above through 3000 puts and deletes",
		   (unsigned long long)seed);
	return done_testing();
}
