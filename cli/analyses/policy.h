/* Page replacement policies over a reference string of page indices
 * (0 .. npages-1), one reference at a time, for `wss simulate` and the
 * OPT curve of `wss mrc`: FIFO, LRU, Clock (second chance), NFU, Aging and
 * OPT (Belady's MIN).  Pure: no I/O, memory in proportion to the pages and
 * frames.  docs/analyses.md states each policy's rules; in short:
 *
 *   FIFO   evicts the page loaded earliest.
 *   LRU    evicts the page referenced least recently.
 *   Clock  a hand sweeps the frames in load order; a page with its
 *          reference bit set loses the bit and is passed over, the first
 *          without is evicted; a page's bit is set when it is loaded and
 *          at each hit; the hand moves past the frame it fills.
 *   NFU    a counter per resident page, 0 when loaded; at the end of each
 *          interval every page referenced in it gets 1 added.
 *   Aging  an 8-bit counter per resident page, 0 when loaded; at the end
 *          of each interval every counter shifts right by one and a page
 *          referenced in the interval gets the top bit (0x80).
 *   OPT    evicts the page whose next reference is farthest (never: the
 *          farthest of all).
 *
 * NFU and Aging evict the page with the lowest (counter, referenced in
 * the current interval) pair, then the one loaded earliest; OPT's ties
 * (pages never referenced again) also go to the one loaded earliest. */
#ifndef WSS_CLI_POLICY_H
#define WSS_CLI_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wss_policy_kind {
	WSS_POLICY_FIFO,
	WSS_POLICY_LRU,
	WSS_POLICY_CLOCK,
	WSS_POLICY_NFU,
	WSS_POLICY_AGING,
	WSS_POLICY_OPT,
	WSS_POLICY_N
} wss_policy_kind_t;

/* The next reference of a page that is never referenced again. */
#define WSS_POLICY_NEVER UINT64_MAX

/* The policy's lower-case name ("fifo", ...); parse returns false for a
 * name that is none of them. */
const char *wss_policy_name(wss_policy_kind_t kind);
bool wss_policy_parse(const char *name, wss_policy_kind_t *kind);

typedef struct wss_policy wss_policy_t;

/* A memory of frames page frames (0: nothing is ever resident) for pages
 * 0 .. npages-1.  Returns 0 or ENOMEM. */
int wss_policy_new(wss_policy_kind_t kind, size_t frames, size_t npages, wss_policy_t **out);
void wss_policy_free(wss_policy_t *p);

/* References page (< npages); next is the position of the page's next
 * reference in the string (WSS_POLICY_NEVER: none), which only OPT reads.
 * Returns true for a hit, false for a fault (the page is then loaded,
 * evicting another when the frames are full). */
bool wss_policy_ref(wss_policy_t *p, uint32_t page, uint64_t next);

/* The end of an interval: NFU's and Aging's counters take the interval's
 * references.  The others ignore it. */
void wss_policy_interval_end(wss_policy_t *p);

/* next[i] = the position of the next reference to refs[i] after i, or
 * WSS_POLICY_NEVER.  Returns 0 or ENOMEM. */
int wss_policy_next_uses(const uint32_t *refs, size_t n, size_t npages, uint64_t *next);

#endif
