/* A set of page numbers kept as sorted, disjoint ranges, and each page's
 * index among the set's pages (address order).  The analyses number the
 * distinct pages of a trace with it: a run of the trace lies inside one
 * of the set's ranges, so it maps to consecutive indices, and memory and
 * time follow the runs, never the pages they claim.  Pure. */
#ifndef WSS_CLI_RANGES_H
#define WSS_CLI_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wss_range {
	uint64_t first, n; /* pages [first, first + n), n >= 1 */
} wss_range_t;

typedef struct wss_ranges {
	wss_range_t *v;
	size_t n, cap;
	size_t norm;	/* v[0 .. norm) sorted, disjoint and not adjacent */
	uint64_t *base; /* after wss_ranges_finish: pages in v[0 .. i) */
	uint64_t pages; /* after wss_ranges_finish: pages in all */
} wss_ranges_t;

/* Zero-initialise a set before use; release frees it. */
void wss_ranges_release(wss_ranges_t *s);

/* Adds pages [first, first + n) (n >= 1, first + n <= UINT64_MAX).
 * Additions wait unsorted and are merged when they outnumber the merged
 * ranges, so memory stays in proportion to the distinct ranges.  Returns
 * 0 or ENOMEM. */
int wss_ranges_add(wss_ranges_t *s, uint64_t first, uint64_t n);

/* Merges what waits and numbers the pages; the set may not be added to
 * afterwards.  Returns 0 or ENOMEM. */
int wss_ranges_finish(wss_ranges_t *s);

/* After finish: the first range that ends after pn (s->n when none). */
size_t wss_ranges_lower(const wss_ranges_t *s, uint64_t pn);

/* After finish: whether pn is in the set, and its index among the set's
 * pages. */
bool wss_ranges_index(const wss_ranges_t *s, uint64_t pn, uint64_t *index);

/* After finish: the pages of the set in [first, end). */
uint64_t wss_ranges_count(const wss_ranges_t *s, uint64_t first, uint64_t end);

#endif
