/* LRU stack distances in one pass (Mattson et al., 1970): the distance of
 * a reference is 1 + the number of distinct pages referenced since the
 * same page's previous reference, so an LRU memory of C pages hits it
 * exactly when the distance is at most C, and one histogram of distances
 * gives the miss ratio at every size.  Distinct pages in between are
 * counted with a Fenwick tree over time positions, one live position per
 * page (its latest reference): O(log pages) per reference.  Positions are
 * renumbered when they run out, so memory stays in proportion to the
 * distinct pages whatever the length of the string.  Pure.  wss mrc keeps
 * its stack over ranges of pages instead (analyses_refs.c, lru_run), whose
 * cost does not grow with a run's length; this one, a reference at a
 * time, is what the tests' page-by-page build holds it to. */
#ifndef WSS_CLI_MRC_H
#define WSS_CLI_MRC_H

#include <stddef.h>
#include <stdint.h>

typedef struct wss_stackdist {
	size_t npages;
	uint64_t *last;	   /* per page: its live position, 0: not referenced yet */
	uint32_t *at;	   /* per position: the page whose reference it was */
	uint32_t *tree;	   /* Fenwick tree over positions 1..size */
	size_t size;	   /* positions available */
	uint64_t now;	   /* positions used */
	uint64_t live;	   /* pages referenced so far */
} wss_stackdist_t;

/* For pages 0 .. npages-1.  Returns 0 or ENOMEM. */
int wss_stackdist_init(wss_stackdist_t *sd, size_t npages);
void wss_stackdist_release(wss_stackdist_t *sd);

/* References page (< npages): *dist gets its stack distance, 0 for its
 * first reference (a miss at every size).  Returns 0, never fails once
 * initialised (renumbering reuses the arrays). */
int wss_stackdist_ref(wss_stackdist_t *sd, uint32_t page, uint64_t *dist);

#endif
