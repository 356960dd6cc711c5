/* Page numbers to dense indices 0, 1, 2, ... in order of first sight, and
 * back: the analyses keep their per-page state in arrays indexed by these,
 * so their memory grows with the distinct pages of a trace, not with its
 * length.  Open addressing with linear probing; no deletion. */
#ifndef WSS_CLI_PAGEMAP_H
#define WSS_CLI_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wss_pagemap {
	uint64_t *keys;	  /* page number + 1; 0: empty slot */
	uint32_t *slots;  /* the index of the key in the same slot */
	size_t cap;	  /* a power of two, at least twice n */
	uint64_t *pages;  /* index -> page number */
	size_t n, pages_cap;
} wss_pagemap_t;

/* Zero-initialise a map before use; release frees it. */
void wss_pagemap_release(wss_pagemap_t *m);

/* The index of page pn, added when new (*added true).  Returns 0, ENOMEM,
 * or EOVERFLOW past 2^32 - 1 pages or for pn = UINT64_MAX. */
int wss_pagemap_add(wss_pagemap_t *m, uint64_t pn, uint32_t *index, bool *added);

/* Whether pn has an index, and which. */
bool wss_pagemap_find(const wss_pagemap_t *m, uint64_t pn, uint32_t *index);

/* Renumbers the indices in increasing page-number order (pages[] sorted).
 * Returns 0, or ENOMEM: the map is then unusable (release it). */
int wss_pagemap_sort(wss_pagemap_t *m);

#endif
