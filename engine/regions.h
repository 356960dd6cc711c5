/* The region registry: the sorted set of page-aligned address ranges that
 * are tracked, each with its kind.  It is what the tick walks to arm and to
 * count; the fault handler never reads it (it uses the shadow flags).
 * Callers serialise access (the engine lock); storage grows with raw mmap. */
#ifndef WSS_ENGINE_REGIONS_H
#define WSS_ENGINE_REGIONS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wss_region {
	uintptr_t start, end; /* [start, end), page-aligned */
	int kind;
	uint32_t owner; /* a stack's thread (its slot, engine/threads.h); 0: none */
} wss_region_t;

typedef struct wss_regions {
	wss_region_t *v;
	size_t n, cap;
} wss_regions_t;

/* Make room for at least n more entries.  Returns 0 or ENOMEM. */
int wss_regions_reserve(wss_regions_t *r, size_t n);
/* Add [start, end) with kind, replacing whatever overlapped it and merging
 * with adjacent ranges of the same kind.  Returns 0 or ENOMEM. */
int wss_regions_insert(wss_regions_t *r, uintptr_t start, uintptr_t end, int kind);
/* The same with an owner: a range merges only with neighbours of the same
 * kind and owner (two threads' stacks side by side stay two). */
int wss_regions_insert_owned(wss_regions_t *r, uintptr_t start, uintptr_t end, int kind, uint32_t owner);
/* Remove [start, end), splitting ranges that straddle it.  Returns 0 or
 * ENOMEM (only when a split needs room that wss_regions_reserve did not
 * provide). */
int wss_regions_remove(wss_regions_t *r, uintptr_t start, uintptr_t end);
/* Index of the first range with end > addr (n if none). */
size_t wss_regions_lower_bound(const wss_regions_t *r, uintptr_t addr);
/* Total pages covered. */
size_t wss_regions_pages(const wss_regions_t *r);
void wss_regions_free(wss_regions_t *r);

#endif
