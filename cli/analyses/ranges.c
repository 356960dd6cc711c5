/* Page ranges (ranges.h).  Additions go to the end of the array and are
 * merged into the sorted part by sorting it all and coalescing: cheap
 * next to the trace reading that produced them, and amortised O(log n)
 * an addition because a merge waits until the additions outnumber the
 * merged ranges. */
#include "config.h"
#include "cli/analyses/ranges.h"

#include <errno.h>
#include <stdlib.h>

void wss_ranges_release(wss_ranges_t *s)
{
	free(s->v);
	free(s->base);
	*s = (wss_ranges_t){0};
}

static int by_first(const void *a, const void *b)
{
	const wss_range_t *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

static void merge(wss_ranges_t *s)
{
	if (s->norm == s->n)
		return;
	qsort(s->v, s->n, sizeof *s->v, by_first);
	size_t o = 0;
	for (size_t i = 0; i < s->n; i++) {
		wss_range_t r = s->v[i];
		wss_range_t *last = o ? &s->v[o - 1] : NULL;
		if (last && r.first <= last->first + last->n) {
			uint64_t end = r.first + r.n;
			if (end > last->first + last->n)
				last->n = end - last->first;
		} else
			s->v[o++] = r;
	}
	s->n = s->norm = o;
}

/* The first of v[0 .. hi) that ends after pn (hi when none). */
static size_t lower(const wss_ranges_t *s, uint64_t pn, size_t hi)
{
	size_t lo = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].first + s->v[mid].n <= pn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int wss_ranges_add(wss_ranges_t *s, uint64_t first, uint64_t n)
{
	/* Most pages come back interval after interval: a range the merged
	 * part holds already costs a search, not a place in the next sort. */
	size_t i = lower(s, first, s->norm);
	if (i < s->norm && s->v[i].first <= first && first + n <= s->v[i].first + s->v[i].n)
		return 0;
	if (s->n == s->cap) {
		if (s->n - s->norm > s->norm + 4096) {
			merge(s);
			if (s->n < s->cap)
				goto put;
		}
		size_t c = s->cap ? 2 * s->cap : 1024;
		wss_range_t *m = realloc(s->v, c * sizeof *m);
		if (!m)
			return ENOMEM;
		s->v = m;
		s->cap = c;
	}
put:
	s->v[s->n++] = (wss_range_t){first, n};
	return 0;
}

int wss_ranges_finish(wss_ranges_t *s)
{
	merge(s);
	free(s->base);
	if (!(s->base = malloc((s->n + 1) * sizeof *s->base)))
		return ENOMEM;
	uint64_t t = 0;
	for (size_t i = 0; i < s->n; i++) {
		s->base[i] = t;
		t += s->v[i].n;
	}
	s->base[s->n] = s->pages = t;
	return 0;
}

size_t wss_ranges_lower(const wss_ranges_t *s, uint64_t pn) { return lower(s, pn, s->n); }

bool wss_ranges_index(const wss_ranges_t *s, uint64_t pn, uint64_t *index)
{
	size_t i = wss_ranges_lower(s, pn);
	if (i == s->n || pn < s->v[i].first)
		return false;
	*index = s->base[i] + (pn - s->v[i].first);
	return true;
}

/* The pages of the set below pn. */
static uint64_t below(const wss_ranges_t *s, uint64_t pn)
{
	size_t i = wss_ranges_lower(s, pn);
	if (i == s->n)
		return s->pages;
	return s->base[i] + (pn > s->v[i].first ? pn - s->v[i].first : 0);
}

uint64_t wss_ranges_count(const wss_ranges_t *s, uint64_t first, uint64_t end)
{
	return end > first ? below(s, end) - below(s, first) : 0;
}
