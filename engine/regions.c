/* Region registry (see regions.h): a sorted array.  Updates are O(n) moves,
 * which is fine for the thousands of ranges real programs have (jemalloc
 * grows its extents geometrically and adjacent ranges merge); lookups are a
 * binary search. */
#include "config.h"
#include "engine/regions.h"

#include <errno.h>
#include <string.h>

#include "common/sys.h"

int wss_regions_reserve(wss_regions_t *r, size_t n)
{
	if (r->n + n <= r->cap)
		return 0;
	size_t cap = r->cap ? r->cap : 256;
	while (cap < r->n + n)
		cap *= 2;
	wss_region_t *v = wss_sys_alloc(cap * sizeof *v);
	if (!v)
		return ENOMEM;
	if (r->v) {
		memcpy(v, r->v, r->n * sizeof *v);
		wss_sys_free(r->v, r->cap * sizeof *v);
	}
	r->v = v;
	r->cap = cap;
	return 0;
}

size_t wss_regions_lower_bound(const wss_regions_t *r, uintptr_t addr)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int wss_regions_remove(wss_regions_t *r, uintptr_t start, uintptr_t end)
{
	size_t i = wss_regions_lower_bound(r, start);
	if (i < r->n && r->v[i].start < start && r->v[i].end > end) {
		/* Split one range into two. */
		if (wss_regions_reserve(r, 1))
			return ENOMEM;
		memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
		r->n++;
		r->v[i].end = start;
		r->v[i + 1].start = end;
		return 0;
	}
	if (i < r->n && r->v[i].start < start) {
		r->v[i].end = start;
		i++;
	}
	size_t j = i;
	while (j < r->n && r->v[j].end <= end)
		j++;
	if (j < r->n && r->v[j].start < end)
		r->v[j].start = end;
	memmove(&r->v[i], &r->v[j], (r->n - j) * sizeof *r->v);
	r->n -= j - i;
	return 0;
}

int wss_regions_insert(wss_regions_t *r, uintptr_t start, uintptr_t end, int kind)
{
	return wss_regions_insert_owned(r, start, end, kind, 0);
}

int wss_regions_insert_owned(wss_regions_t *r, uintptr_t start, uintptr_t end, int kind, uint32_t owner)
{
	if (start >= end)
		return 0;
	if (wss_regions_reserve(r, 2))
		return ENOMEM;
	wss_regions_remove(r, start, end);
	size_t i = wss_regions_lower_bound(r, start);
	int merge_left = i > 0 && r->v[i - 1].end == start && r->v[i - 1].kind == kind && r->v[i - 1].owner == owner;
	int merge_right = i < r->n && r->v[i].start == end && r->v[i].kind == kind && r->v[i].owner == owner;
	if (merge_left && merge_right) {
		r->v[i - 1].end = r->v[i].end;
		memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
		r->n--;
	} else if (merge_left) {
		r->v[i - 1].end = end;
	} else if (merge_right) {
		r->v[i].start = start;
	} else {
		memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
		r->v[i] = (wss_region_t){start, end, kind, owner};
		r->n++;
	}
	return 0;
}

size_t wss_regions_pages(const wss_regions_t *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += (r->v[i].end - r->v[i].start) >> 12;
	return n;
}

void wss_regions_free(wss_regions_t *r)
{
	wss_sys_free(r->v, r->cap * sizeof *r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}
