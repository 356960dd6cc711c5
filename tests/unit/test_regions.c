/* The region registry against a bitmap model: fixed cases for merge and
 * split, then random inserts and removes compared page by page. */
#include "config.h"
#include "engine/regions.h"

#include <stdlib.h>
#include <string.h>

#include "tests/tap/tap.h"

#define P 4096UL
#define NP 512

static int model[NP]; /* 0: untracked, else kind */

static bool matches(const wss_regions_t *r)
{
	int got[NP];
	memset(got, 0, sizeof got);
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].start >= r->v[i].end)
			return false;
		if (i && r->v[i - 1].end > r->v[i].start)
			return false; /* sorted, disjoint */
		if (i && r->v[i - 1].end == r->v[i].start && r->v[i - 1].kind == r->v[i].kind)
			return false; /* adjacent same-kind ranges must be merged */
		for (uintptr_t a = r->v[i].start; a < r->v[i].end; a += P)
			got[a / P] = r->v[i].kind;
	}
	return !memcmp(got, model, sizeof got);
}

static void m_set(uintptr_t s, uintptr_t e, int kind)
{
	for (uintptr_t a = s; a < e; a += P)
		model[a / P] = kind;
}

int main(void)
{
	wss_regions_t r = {0};
	plan(12);
	wss_regions_insert(&r, 10 * P, 20 * P, 1);
	wss_regions_insert(&r, 20 * P, 30 * P, 1);
	ok(r.n == 1 && r.v[0].start == 10 * P && r.v[0].end == 30 * P, "adjacent same-kind ranges merge");
	wss_regions_insert(&r, 30 * P, 40 * P, 2);
	is_int((long long)r.n, 2, "a different kind stays separate");
	wss_regions_remove(&r, 15 * P, 16 * P);
	ok(r.n == 3 && r.v[0].end == 15 * P && r.v[1].start == 16 * P, "removing the middle splits");
	wss_regions_remove(&r, 0, 12 * P);
	ok(r.v[0].start == 12 * P, "removing a prefix trims");
	wss_regions_remove(&r, 25 * P, 35 * P);
	ok(r.n == 3 && r.v[1].end == 25 * P && r.v[2].start == 35 * P, "removing across two ranges trims both");
	wss_regions_insert(&r, 14 * P, 36 * P, 1);
	ok(r.n == 2 && r.v[0].start == 12 * P && r.v[0].end == 36 * P, "insert over holes replaces and merges");
	is_int((long long)wss_regions_pages(&r), 24 + 4, "pages counted");
	is_int((long long)wss_regions_lower_bound(&r, 36 * P), 1, "lower bound at an end");
	wss_regions_remove(&r, 0, 100 * P);
	is_int((long long)r.n, 0, "remove everything");

	memset(model, 0, sizeof model);
	srand(12345);
	bool good = true;
	int ops = 0;
	for (; ops < 20000 && good; ops++) {
		uintptr_t s = (uintptr_t)(rand() % NP), e = s + 1 + (uintptr_t)(rand() % 40);
		if (e > NP)
			e = NP;
		if (rand() % 3) {
			int k = 1 + rand() % 3;
			good = wss_regions_insert(&r, s * P, e * P, k) == 0;
			m_set(s * P, e * P, k);
		} else {
			good = wss_regions_remove(&r, s * P, e * P) == 0;
			m_set(s * P, e * P, 0);
		}
		good = good && matches(&r);
	}
	ok(good, "20000 random inserts and removes match the model (stopped at %d)", ops);
	ok(r.cap >= r.n, "capacity holds the ranges");
	wss_regions_free(&r);
	ok(r.n == 0 && r.v == NULL, "free");
	return done_testing();
}
