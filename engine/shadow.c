/* Shadow table (see shadow.h).  Leaves are published with a release store and
 * read with an acquire load; they are never freed, so there is no reclamation
 * problem for the fault handler.  Leaf memory is MAP_NORESERVE and populated
 * by the kernel only where pages are actually tracked. */
#include "config.h"
#include "engine/shadow.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "common/sys.h"

typedef struct wss_leaf {
	wss_page_t pages[WSS_LEAF_PAGES];
	uint8_t flags[WSS_LEAF_PAGES];
	uint64_t written[WSS_LEAF_PAGES];
	uint32_t wsplit[WSS_LEAF_PAGES];
	uint8_t rever[WSS_LEAF_PAGES];
	uint32_t hits[WSS_LEAF_PAGES];
	uint32_t site[WSS_LEAF_PAGES];
	double counts[WSS_LEAF_PAGES][2];
} wss_leaf_t;

#define DIR_ENTRIES (WSS_ADDR_LIMIT >> WSS_LEAF_SHIFT)

static wss_leaf_t **shadow_dir;

int wss_shadow_init(void)
{
	if (shadow_dir)
		return 0;
	shadow_dir = wss_sys_alloc(DIR_ENTRIES * sizeof *shadow_dir);
	return shadow_dir ? 0 : ENOMEM;
}

int wss_shadow_ensure(uintptr_t start, uintptr_t end)
{
	if (!shadow_dir || end > WSS_ADDR_LIMIT || start >= end)
		return ENOMEM;
	for (uintptr_t i = start >> WSS_LEAF_SHIFT; i <= (end - 1) >> WSS_LEAF_SHIFT; i++) {
		if (__atomic_load_n(&shadow_dir[i], __ATOMIC_ACQUIRE))
			continue;
		wss_leaf_t *leaf = wss_sys_alloc(sizeof(wss_leaf_t));
		if (!leaf)
			return ENOMEM;
		__atomic_store_n(&shadow_dir[i], leaf, __ATOMIC_RELEASE);
	}
	return 0;
}

int wss_shadow_ensure_sparse(uintptr_t start, uintptr_t end)
{
	if (!shadow_dir || end > WSS_ADDR_LIMIT || start >= end)
		return ENOMEM;
	uintptr_t first = start >> WSS_LEAF_SHIFT, last = (end - 1) >> WSS_LEAF_SHIFT;
	size_t missing = 0;
	for (uintptr_t i = first; i <= last; i++)
		missing += !__atomic_load_n(&shadow_dir[i], __ATOMIC_RELAXED);
	if (!missing)
		return 0;
	/* One mapping for all of them (a terabyte is a thousand leaves), and
	 * no transparent huge pages: a member's state is a few bytes in each
	 * array, and a huge page would make each of those 2 MiB. */
	wss_leaf_t *v = wss_sys_alloc(missing * sizeof(wss_leaf_t));
	if (!v)
		return ENOMEM;
	wss_sys_madvise(v, missing * sizeof(wss_leaf_t), MADV_NOHUGEPAGE);
	for (uintptr_t i = first; i <= last; i++)
		if (!__atomic_load_n(&shadow_dir[i], __ATOMIC_RELAXED))
			__atomic_store_n(&shadow_dir[i], v++, __ATOMIC_RELEASE);
	return 0;
}

static wss_leaf_t *leaf_of(uintptr_t addr)
{
	if (addr >= WSS_ADDR_LIMIT || !shadow_dir)
		return NULL;
	return __atomic_load_n(&shadow_dir[addr >> WSS_LEAF_SHIFT], __ATOMIC_ACQUIRE);
}

/* The per-page field of the leaf covering addr, or NULL. */
#define LEAF_FIELD(field, addr) \
	({ \
		wss_leaf_t *l_ = leaf_of(addr); \
		l_ ? &l_->field[((addr) >> WSS_PAGE_SHIFT) & (WSS_LEAF_PAGES - 1)] : NULL; \
	})

wss_page_t *wss_shadow_page(uintptr_t addr) { return LEAF_FIELD(pages, addr); }
uint8_t *wss_shadow_flags(uintptr_t addr) { return LEAF_FIELD(flags, addr); }
uint64_t *wss_shadow_written(uintptr_t addr) { return LEAF_FIELD(written, addr); }
uint32_t *wss_shadow_wsplit(uintptr_t addr) { return LEAF_FIELD(wsplit, addr); }
uint8_t *wss_shadow_rever(uintptr_t addr) { return LEAF_FIELD(rever, addr); }
uint32_t *wss_shadow_hits(uintptr_t addr) { return LEAF_FIELD(hits, addr); }
uint32_t *wss_shadow_site(uintptr_t addr) { return LEAF_FIELD(site, addr); }
double *wss_shadow_counts(uintptr_t addr)
{
	wss_leaf_t *l = leaf_of(addr);
	return l ? l->counts[(addr >> WSS_PAGE_SHIFT) & (WSS_LEAF_PAGES - 1)] : NULL;
}
