/* An ordered set of segments: each a key, a length and a value, ordered
 * by key, with the sum of the lengths above any key.  The analyses keep
 * ranges of pages in it (keyed by first page, or by the position of their
 * last reference), so that a run of pages costs O(log segments) however
 * many pages it claims.  A treap over an array of nodes: expected
 * O(log n) an operation.  Pure. */
#ifndef WSS_CLI_SEGS_H
#define WSS_CLI_SEGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wss_seg {
	uint64_t key, len, val;
} wss_seg_t;

typedef struct wss_segs {
	struct wss_segs_node *v;
	uint32_t cap, used, free, root;
	size_t n;     /* segments held */
	uint64_t rng; /* the priorities' generator */
} wss_segs_t;

/* Zero-initialise a set before use; release frees it. */
void wss_segs_release(wss_segs_t *t);

/* Adds a segment whose key is not in the set.  Returns 0, or ENOMEM
 * (also past 2^32 - 2 segments). */
int wss_segs_put(wss_segs_t *t, uint64_t key, uint64_t len, uint64_t val);

/* Removes the segment with this key; false when there is none. */
bool wss_segs_del(wss_segs_t *t, uint64_t key);

/* The segment with the greatest key <= x (floor), or the least key >= x
 * (ceil); false when there is none. */
bool wss_segs_floor(const wss_segs_t *t, uint64_t x, wss_seg_t *out);
bool wss_segs_ceil(const wss_segs_t *t, uint64_t x, wss_seg_t *out);

/* The lengths of the segments whose key is above x, summed. */
uint64_t wss_segs_sum_above(const wss_segs_t *t, uint64_t x);

/* For work on many segments at once, in O(n) rather than O(n log n):
 * the segments in key order into out (room for t->n), and the set made
 * anew from n segments in increasing key order.  assign returns 0 or
 * ENOMEM (the set is then empty). */
void wss_segs_list(const wss_segs_t *t, wss_seg_t *out);
int wss_segs_assign(wss_segs_t *t, const wss_seg_t *v, size_t n);

#endif
