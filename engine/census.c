/* The census: pages of the run's totals counted exactly by their presence.
 *
 * A sampled run knows which pages its members touched; of the others it
 * knows nothing, so its totals (the distinct pages touched in the run) are
 * estimates.  But the kernel knows which pages of the program's private
 * memory are present: an anonymous page becomes present when it is first
 * touched (a read maps the zero page, a write a page of its own), and a
 * page of a private file mapping becomes anonymous when it is first
 * written.  So a page that was not present when its range was registered,
 * and that is present, anonymous and mapped at page size later, was
 * touched in between; one that is not the zero page was written.  Such
 * pages are counted in the totals exactly, at the moments a range's pages
 * may disappear (before an munmap, a MAP_FIXED over it, an mremap, a
 * MADV_DONTNEED or MADV_FREE) and at the end of the run: one PAGEMAP_SCAN
 * of the ranges, whose cost follows the pages present, not the touches.
 *
 * Exact counting elsewhere and estimation of the rest stay unbiased
 * because whether a page is counted here does not depend on the sample:
 * members and other pages become present alike.  The totals are then the
 * pages counted exactly (in exact windows and here: REVER_E, tick.c) plus
 * the Horvitz-Thompson estimate of the pages first counted in a sampled
 * window and not counted exactly, as before.  A page touched and gone
 * (swapped out, or dropped behind our back) before a scan is simply not
 * counted here: the estimate covers it.
 *
 * What would make a page present without a touch, and what is done:
 * - present before registration (MAP_POPULATE, an mremap's moved pages,
 *   start-up memory): the registration's scan records it in `before`,
 *   present or swapped, and it is never counted here;
 * - transparent huge pages (a fault maps 512 pages; a split of one leaves
 *   them all present): mapped huge, a page is skipped; where huge pages
 *   may be allocated on any fault (`enabled` or an mTHP size "always"),
 *   the census is off; MADV_HUGEPAGE, MADV_COLLAPSE, MADV_POPULATE_* and
 *   mlock end it (the pages counted so far stay counted);
 * - fault-around and the page cache (file pages): not anonymous, skipped;
 * - shared memory (present in another process's touch): its pages are
 *   file pages to PAGEMAP_SCAN, skipped.  A stack's pages count by their
 *   writes alone (registry.c): only those not the zero page.
 * Not seen: a raw mlock(2) or madvise(2) system call that populates a
 *   tracked range (docs/limits.md).
 *
 * Sparse ranges (sparse.h) have per-page state only for their members:
 * the pages counted here are kept as runs in `counted`, so that a page
 * counted before a MADV_DONTNEED and present again at the end counts
 * once (the totals count pages by address).  Engine lock for all. */
#include "config.h"
#include "engine/internal.h"
#include "engine/uffd_compat.h"

#include <string.h>

/* Pages present or swapped at their range's registration, and a sparse
 * range's pages counted here: runs, by address (regions.h; kind unused). */
static wss_regions_t before, counted;
/* Room for the counted runs of sparse ranges (16 bytes each): past it the
 * census ends rather than grow without bound. */
#define COUNTED_MAX (1U << 20)

static struct page_region vec[512];

static int pagemap_fd(void)
{
	int u, pm;
	wss_uffd_fds(&u, &pm);
	return pm;
}

/* Is a transparent huge page (of any size) allocated on a fault in memory
 * that asked for none?  `always` at the top, or an mTHP size "always", or
 * "inherit" under a top `always`. */
static bool thp_on_any_fault(void)
{
	static const char *const sizes[] = {"16", "32", "64", "128", "256", "512", "1024", "2048"};
	char buf[64], path[96];
	long n = wss_read_small("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf - 1);
	bool top = n > 0 && (buf[n] = 0, strstr(buf, "[always]"));
	if (top)
		return true;
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		wss_fmt_t f;
		wss_fmt_init(&f, path, sizeof path);
		wss_fmt_str(&f, "/sys/kernel/mm/transparent_hugepage/hugepages-");
		wss_fmt_str(&f, sizes[i]);
		wss_fmt_str(&f, "kB/enabled");
		wss_fmt_cstr(&f);
		n = wss_read_small(path, buf, sizeof buf - 1);
		if (n > 0 && (buf[n] = 0, strstr(buf, "[always]")))
			return true;
	}
	return false;
}

/* Swap configured (swapped pages and our write-protect markers look alike
 * to PAGEMAP_SCAN), and the pages of files reclaimed system-wide so far. */
static bool swap_on(void)
{
	char buf[4096];
	long n = wss_read_small("/proc/meminfo", buf, sizeof buf - 1);
	if (n <= 0)
		return true;
	buf[n] = 0;
	const char *p = strstr(buf, "SwapTotal:");
	if (!p)
		return true;
	for (p += 10; *p == ' '; p++)
		;
	return *p != '0';
}

static uint64_t file_reclaimed(void)
{
	char buf[8192];
	long n = wss_read_small("/proc/vmstat", buf, sizeof buf - 1);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = 0;
	const char *p = strstr(buf, "\npgsteal_file ");
	if (!p)
		return UINT64_MAX;
	uint64_t v = 0;
	for (p += 15; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

void wss_census_init(void)
{
	E.census = false;
	E.census_why = NULL;
	E.census_rest = E.census_data = E.census_write = 0;
	memset(E.census_rest_kind, 0, sizeof E.census_rest_kind);
	E.census_files = false;
	E.census_reclaimed = file_reclaimed();
	before.n = counted.n = 0;
	if (E.set.mode == WSS_TRACK_EXACT)
		return; /* every touch is counted: nothing to add */
	if (E.set.test.census_off)
		E.census_why = "off (WSS_TEST_CENSUS)";
	else if (E.attached)
		E.census_why = "off (attached: the pages present were touched before)";
	else if (pagemap_fd() < 0)
		E.census_why = "off (the backend reads no page map)";
	else if (thp_on_any_fault())
		E.census_why = "off (transparent huge pages on every fault: a fault makes pages present that were not touched)";
	else if (swap_on())
		E.census_why = "off (swap is configured: a swapped page looks like one of our write-protect markers)";
	else
		E.census = true;
}

void wss_census_fork_child(void)
{
	E.census_data = E.census_write = E.census_rest = 0;
	memset(E.census_rest_kind, 0, sizeof E.census_rest_kind);
	E.census_files = false;
	E.census_reclaimed = file_reclaimed();
	before.n = counted.n = 0;
	/* What the child inherited present was the parent's touch. */
	for (size_t i = 0; E.census && i < E.regions.n; i++)
		wss_census_register(E.regions.v[i].start, E.regions.v[i].end, E.regions.v[i].kind);
}

void wss_census_stop(const char *why)
{
	if (!E.census)
		return;
	E.census = false;
	E.census_why = why;
}

/* fn on each run of [s, e) that PAGEMAP_SCAN reports with the categories
 * asked for; false when the scan failed. */
static bool scan(uintptr_t s, uintptr_t e, const struct pm_scan_arg *q,
		 void (*fn)(uintptr_t s, uintptr_t e, uint64_t cat, void *arg), void *arg)
{
	int pm = pagemap_fd();
	while (pm >= 0 && s < e) {
		struct pm_scan_arg a = *q;
		a.size = sizeof a;
		a.start = s;
		a.end = e;
		a.vec = (uintptr_t)vec;
		a.vec_len = sizeof vec / sizeof *vec;
		long n = wss_sys3(SYS_ioctl, pm, PAGEMAP_SCAN, &a);
		if (n < 0)
			return false;
		for (long i = 0; i < n; i++)
			fn(vec[i].start, vec[i].end, vec[i].categories, arg);
		if (a.walk_end <= s)
			return false;
		s = a.walk_end;
	}
	return true;
}

/* A page the census cannot count may still have been touched: the rest,
 * by kind, bounds how many (wss_census_rest). */
static void rest_add(int kind, uint64_t pages)
{
	E.census_rest += pages;
	if (kind > 0 && kind < WSS_KIND_N)
		E.census_rest_kind[kind] += pages;
}

typedef struct reg_walk {
	int kind;
	bool ok;
} reg_walk_t;

static void add_before(uintptr_t s, uintptr_t e, uint64_t cat, void *arg)
{
	reg_walk_t *w = arg;
	(void)cat;
	rest_add(w->kind, (e - s) >> WSS_PAGE_SHIFT);
	if (wss_regions_insert(&before, s, e, 0))
		w->ok = false;
}

void wss_census_register(uintptr_t s, uintptr_t e, int kind)
{
	if (!E.census)
		return;
	struct pm_scan_arg q = {.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED, .return_mask = PAGE_IS_PRESENT};
	reg_walk_t w = {kind, true};
	if (!scan(s, e, &q, add_before, &w) || !w.ok)
		wss_census_stop("ended (no room or no scan for the pages present at a mapping)");
}

/* The pages of a run present now and not before their registration. */
typedef struct census_walk {
	int kind;
	bool written;
	wss_sparse_part_t *part; /* NULL: a dense range */
} census_walk_t;

static void count_page(uintptr_t a, census_walk_t *w)
{
	uint8_t none = 0, *rv = &none;
	/* Only a sparse range's members of its finest level have state. */
	if (!w->part || (w->part->fine != WSS_SPARSE_NONE && wss_sampling_member(a, w->part->fine)))
		rv = wss_shadow_rever(a);
	if (!rv)
		return;
	int got = wss_tick_count_present(a, rv, w->kind, w->written);
	E.census_data += got & 1;
	E.census_write += got >> 1;
}

/* [s, e) less the runs of set, as runs: fn(run). */
static void less(const wss_regions_t *set, uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *),
		 void *arg)
{
	for (size_t i = wss_regions_lower_bound(set, s); s < e && i < set->n && set->v[i].start < e; i++) {
		if (set->v[i].start > s)
			fn(s, set->v[i].start, arg);
		s = set->v[i].end;
	}
	if (s < e)
		fn(s, e, arg);
}

static void count_new(uintptr_t s, uintptr_t e, void *arg)
{
	census_walk_t *w = arg;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE)
		count_page(a, w);
	if (w->part && (counted.n >= COUNTED_MAX || wss_regions_insert(&counted, s, e, 0)))
		wss_census_stop("ended (no room for the pages counted in sparse ranges)");
}

static void count_sparse_new(uintptr_t s, uintptr_t e, void *arg) { less(&counted, s, e, count_new, arg); }

/* A run that may hold touched pages the census cannot count: into the
 * rest (files': mapped in this process, so at most these were touched,
 * as long as no page of a file was reclaimed meanwhile). */
static void rest_run(uintptr_t s, uintptr_t e, void *arg)
{
	census_walk_t *w = arg;
	rest_add(w->kind, (e - s) >> WSS_PAGE_SHIFT);
}

static void present(uintptr_t s, uintptr_t e, uint64_t cat, void *arg)
{
	census_walk_t *w = arg;
	if (cat & (PAGE_IS_FILE | PAGE_IS_HUGE)) {
		E.census_files |= (cat & PAGE_IS_FILE) != 0;
		less(&before, s, e, rest_run, w);
		return;
	}
	w->written = !(cat & PAGE_IS_PFNZERO);
	/* A stack's pages count by their writes alone (registry.c). */
	if (w->kind == WSS_KIND_STACK && !w->written)
		return;
	less(&before, s, e, w->part ? count_sparse_new : count_new, w);
}

static void scan_present(uintptr_t s, uintptr_t e, census_walk_t *w)
{
	struct pm_scan_arg q = {
		.category_mask = PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO | PAGE_IS_FILE | PAGE_IS_HUGE,
	};
	if (!scan(s, e, &q, present, w))
		wss_census_stop("ended (PAGEMAP_SCAN failed)");
}

static void census_dense(uintptr_t s, uintptr_t e, void *arg)
{
	census_walk_t w = {.kind = *(int *)arg};
	scan_present(s, e, &w);
}

static void census_sparse(wss_sparse_part_t *p, void *arg)
{
	census_walk_t w = {.kind = *(int *)arg, .part = p};
	scan_present(p->s, p->e, &w);
}

void wss_census_count(uintptr_t s, uintptr_t e)
{
	/* Before the first sampled window every touch was counted. */
	if (!E.census || !E.level_max || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return;
	for (size_t i = wss_regions_lower_bound(&E.regions, s); E.census && i < E.regions.n && E.regions.v[i].start < e;
	     i++) {
		wss_region_t r = E.regions.v[i];
		uintptr_t rs = r.start > s ? r.start : s, re = r.end < e ? r.end : e;
		wss_sparse_walk(rs, re, census_dense, census_sparse, &r.kind);
	}
}

void wss_census_count_all(void) { wss_census_count(0, WSS_ADDR_LIMIT); }

void wss_census_dropped(uintptr_t s, uintptr_t e)
{
	if (E.census)
		wss_regions_remove(&before, s, e);
}

bool wss_census_rest(uint64_t *rest, const uint64_t **by_kind)
{
	/* Off or ended: what was touched since is bounded by nothing here.
	 * A page of a file reclaimed system-wide may have been one of ours,
	 * unmapped behind our back. */
	if (!E.census || swap_on() || (E.census_files && file_reclaimed() != E.census_reclaimed))
		return false;
	*rest = E.census_rest;
	*by_kind = E.census_rest_kind;
	return true;
}

void wss_census_lost(uintptr_t s, uintptr_t e, int kind)
{
	if (E.census)
		rest_add(kind, (e - s) >> WSS_PAGE_SHIFT);
}
