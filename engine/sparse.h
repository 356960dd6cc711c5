/* Sparse ranges: tracked mappings too large for per-page state (a terabyte
 * MAP_NORESERVE reservation).  Registering one is O(1): an entry here says
 * "every page of [start, end) is tracked, with this protection and kind",
 * and only the members of the page sample get per-page state, when they are
 * first armed (engine/sampling.c).  The fault path reads the table when a
 * page's own flags byte does not say it is tracked; docs/backends.md,
 * "Sparse ranges", has the design and why. */
#ifndef WSS_ENGINE_SPARSE_H
#define WSS_ENGINE_SPARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/shadow.h"

/* A mapping larger than this is registered sparsely (or, in exact mode, not
 * tracked at all): under it, per-page flags and write-protect markers for
 * the whole range cost less than the program's own use of it. */
#define WSS_SPARSE_MIN_BYTES (64ULL << 30)
/* Under sampled tracking (track.mode auto or sampled), a mapping larger
 * than this is registered sparsely while the table has room, else densely:
 * its cost then follows the members of the sample too, and auto never
 * tracks it exactly (exactness over more than a gibibyte of touches would
 * not fit the budget anyway). */
#define WSS_SPARSE_SAMPLED_BYTES (1ULL << 30)
/* Entries: sparse mappings are admitted while fewer than WSS_SPARSE_RANGES
 * entries are live, so that the program's munmap and mprotect of their middles
 * (which split an entry in two) have room; past WSS_SPARSE_SLOTS pieces the
 * registry drops a piece from tracking instead (registry.c). */
#define WSS_SPARSE_SLOTS 4096
#define WSS_SPARSE_RANGES 64
/* The pages of the sparse ranges' members at a level (a cluster's all
 * count): the level is at least the one at which they are this many, so
 * that their state (some 45 bytes a page: shadow.h) stays near 24 MiB
 * whatever the reservations. */
#define WSS_SPARSE_MEMBER_PAGES (1ULL << 19)
/* A level at which no page is a member: nothing set up yet. */
#define WSS_SPARSE_NONE 0xff

/* One piece of a sparse range, clipped to what was asked: its flags
 * (WSS_PF_TRACKED | protection | kind), and the levels whose members may
 * have per-page state (fine: no other page of it ever gets any, so these
 * are what untracking resets) and were set up for the backend (watched:
 * write-protected once, under uffd-wp).  fine <= watched, except in a
 * forked child, which sets up afresh. */
typedef struct wss_sparse_part {
	uintptr_t s, e;
	uint8_t flags;
	uint32_t slot;
	uint8_t fine, watched;
	uint8_t span; /* its sample design (common/sample.h), fixed for its life */
} wss_sparse_part_t;

/* Is any sparse range tracked?  AS-safe. */
bool wss_sparse_any(void);
/* The flags of the sparse range holding addr (0: none), its bounds in *s
 * and *e when not NULL.  Lock-free: one 16-byte atomic read per candidate
 * entry.  AS-safe. */
uint8_t wss_sparse_find(uintptr_t addr, uintptr_t *s, uintptr_t *e);
/* The span of the sparse range holding addr (0: none, or the page
 * design), its bounds in *s and *e (0, 0: none).  AS-safe. */
unsigned wss_sparse_span(uintptr_t addr, uintptr_t *s, uintptr_t *e);
/* The runs armed at level by every sparse range (a cluster, or a member
 * of the page design, each), and their pages in *pages.  Lock-free. */
uint64_t wss_sparse_units(unsigned level, uint64_t *pages);
/* Register [s, e) with flags and the span of its sample design (common/
 * sample.h: below that level its members are clusters; a range keeps its
 * span, through splits, for its life, so that its members nest whatever
 * the level).  Returns 0, or ENOSPC when WSS_SPARSE_RANGES entries are
 * live.  Engine lock. */
int wss_sparse_add(uintptr_t s, uintptr_t e, uint8_t flags, unsigned span);
/* fn on each piece of a sparse range inside [s, e), in address order; fn
 * may change the part's fine and watched levels (written back after it
 * returns) but not the table.  Engine lock. */
void wss_sparse_parts(uintptr_t s, uintptr_t e, void (*fn)(wss_sparse_part_t *p, void *arg), void *arg);
/* dense on each maximal run of [s, e) outside every sparse range, sparse on
 * each piece inside one, in address order (as wss_sparse_parts).  Engine
 * lock. */
void wss_sparse_walk(uintptr_t s, uintptr_t e, void (*dense)(uintptr_t s, uintptr_t e, void *arg),
		     void (*sparse)(wss_sparse_part_t *p, void *arg), void *arg);
/* fn on each maximal run of [s, e) by its sample design, in address
 * order: span 0 outside every sparse range, the range's span inside one
 * (a piece of a range clipped to [s, e)).  Changes nothing.  Lock-free:
 * each piece read under the sequence counter (the pin path walks designs
 * without the engine lock).  AS-safe. */
void wss_sparse_designs(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t s, uintptr_t e, unsigned span, void *arg),
			void *arg);
/* Take [s, e) out of the sparse ranges.  Returns 0, or ENOSPC when a range
 * would split in two and no slot is free (nothing changed; *whole is then
 * the range that could not split).  Engine lock. */
int wss_sparse_cut(uintptr_t s, uintptr_t e, uintptr_t whole[2]);
/* [s, e) of the sparse ranges now has the program's protection prot (the
 * kind kept).  Returns 0 or ENOSPC as wss_sparse_cut.  Engine lock. */
int wss_sparse_protect(uintptr_t s, uintptr_t e, int prot, uintptr_t whole[2]);
/* In a forked child: nothing is observed by the child's backend yet. */
void wss_sparse_fork_child(void);

/* A page's flags as the fault path needs them: its own byte, or, for a
 * page of a sparse range whose byte holds no more than its "ever" bits,
 * the range's tracked, protection and kind bits with them.  AS-safe. */
static inline uint8_t wss_flags_load(uintptr_t page, const uint8_t *fl)
{
	uint8_t f = __atomic_load_n(fl, __ATOMIC_SEQ_CST);
	if (!(f & WSS_PF_TRACKED) && wss_sparse_any())
		f |= wss_sparse_find(page, NULL, NULL);
	return f;
}

#endif
