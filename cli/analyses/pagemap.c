/* The page map (pagemap.h).  Page numbers of a process cluster in a few
 * ranges, so the hash is a full 64-bit mix (splitmix64's finaliser), not
 * the identity, to keep probe sequences short. */
#include "config.h"
#include "cli/analyses/pagemap.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
	uint64_t z = key * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (size_t)(z ^ (z >> 31)) & (cap - 1);
}

void wss_pagemap_release(wss_pagemap_t *m)
{
	free(m->keys);
	free(m->slots);
	free(m->pages);
	*m = (wss_pagemap_t){0};
}

/* Places every page again into tables of cap slots. */
static int rehash(wss_pagemap_t *m, size_t cap)
{
	uint64_t *keys = calloc(cap, sizeof *keys);
	uint32_t *slots = malloc(cap * sizeof *slots);
	if (!keys || !slots) {
		free(keys);
		free(slots);
		return ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		size_t h = slot_of(m->pages[i] + 1, cap);
		while (keys[h])
			h = (h + 1) & (cap - 1);
		keys[h] = m->pages[i] + 1;
		slots[h] = (uint32_t)i;
	}
	free(m->keys);
	free(m->slots);
	m->keys = keys;
	m->slots = slots;
	m->cap = cap;
	return 0;
}

bool wss_pagemap_find(const wss_pagemap_t *m, uint64_t pn, uint32_t *index)
{
	if (!m->cap || pn == UINT64_MAX)
		return false;
	for (size_t h = slot_of(pn + 1, m->cap); m->keys[h]; h = (h + 1) & (m->cap - 1))
		if (m->keys[h] == pn + 1) {
			*index = m->slots[h];
			return true;
		}
	return false;
}

int wss_pagemap_add(wss_pagemap_t *m, uint64_t pn, uint32_t *index, bool *added)
{
	*added = false;
	if (wss_pagemap_find(m, pn, index))
		return 0;
	if (pn == UINT64_MAX || m->n >= UINT32_MAX)
		return EOVERFLOW;
	if (2 * (m->n + 1) > m->cap && rehash(m, m->cap ? 2 * m->cap : 1024))
		return ENOMEM;
	if (m->n == m->pages_cap) {
		size_t c = m->pages_cap ? 2 * m->pages_cap : 512;
		uint64_t *p = realloc(m->pages, c * sizeof *p);
		if (!p)
			return ENOMEM;
		m->pages = p;
		m->pages_cap = c;
	}
	size_t h = slot_of(pn + 1, m->cap);
	while (m->keys[h])
		h = (h + 1) & (m->cap - 1);
	m->keys[h] = pn + 1;
	m->slots[h] = (uint32_t)m->n;
	m->pages[m->n] = pn;
	*index = (uint32_t)m->n++;
	*added = true;
	return 0;
}

static int by_page(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int wss_pagemap_sort(wss_pagemap_t *m)
{
	if (m->n < 2)
		return 0;
	qsort(m->pages, m->n, sizeof *m->pages, by_page);
	return rehash(m, m->cap);
}
