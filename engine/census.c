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
 * pages are counted in the totals exactly, before a call may take them
 * away (an munmap, a mapping made or moved over them, an mremap, advice
 * other than the few that keep pages, shmdt, a stack's thread ending, a
 * range leaving tracking while mapped) and at the end of the run: one
 * PAGEMAP_SCAN of the ranges, whose cost follows the pages present.
 * Untracking itself counts nothing: it may follow an unmapping, after
 * which the addresses may hold someone else's pages.
 *
 * Exact counting elsewhere and estimation of the rest stay unbiased
 * because whether a page is counted here does not depend on the sample:
 * members and other pages become present alike.  The totals are then the
 * pages counted exactly (in exact windows and here: REVER_E, tick.c) plus
 * the Horvitz-Thompson estimate of the pages first counted in a sampled
 * window and not counted exactly, as before.
 *
 * The rest, the pages touched that the census cannot count, is bounded
 * (wss_census_rest, the totals' caps): the pages present at their range's
 * registration; a file's and shared memory's pages (never counted here),
 * a data segment's pages read from its file and pages mapped huge, as
 * scans see them mapped; a library's data unloaded behind our back.  A
 * file's page can leave the mapping unseen (reclaimed, its file shortened
 * or punched): when one may have (the system reclaimed file pages during
 * the run, the program truncated a file), files' and shared memory's
 * mappings count whole instead.  A buffer given to a system call counts as touched whether or
 * not the kernel writes it (pins.c): its pages are read before the call
 * (wss_census_touch), so that they are present too.  Without swap, a
 * private anonymous page leaves only through the calls above.
 *
 * What would make a page present without a touch, and what is done:
 * - present before registration (MAP_POPULATE, an mremap's moved pages,
 *   start-up memory): the registration's scan records it in `before`,
 *   present or swapped, and it is never counted here;
 * - transparent huge pages (a fault maps 512 pages; a split of one leaves
 *   them all present): mapped huge, a page is skipped; where huge pages
 *   may be allocated on any fault (`enabled` or an mTHP size "always"),
 *   the census is off; MADV_HUGEPAGE (wherever given: jemalloc asks before
 *   its extent is registered), MADV_COLLAPSE, MADV_POPULATE_*, mlock and
 *   MAP_LOCKED end it (the pages counted so far stay counted), and memory
 *   locked before we came keeps it off;
 * - fault-around and the page cache (file pages): not anonymous, skipped;
 * - shared memory (present in another process's touch): its pages are
 *   file pages to PAGEMAP_SCAN, skipped.  A stack's pages count by their
 *   writes alone (registry.c): only those not the zero page.
 * Not seen: such a call made as a raw system call (docs/limits.md); a page
 * being migrated (compaction, NUMA balancing) during the end's scan is not
 * present for that moment and is neither counted nor in the rest.
 *
 * Sparse ranges (sparse.h) have per-page state only for their members:
 * the pages counted here are kept as runs in `counted` (data and writes
 * apart), so that a page counts once in each total (the totals count pages
 * by address).  Engine lock for all but wss_census_touch. */
#include "config.h"
#include "engine/internal.h"
#include "engine/uffd_compat.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

/* Pages present or swapped at their range's registration, and a sparse
 * range's pages counted here in the data total [0] and in the write total
 * [1]: runs, by address (regions.h; kind unused). */
static wss_regions_t before, counted[2];
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

/* Does a file under /sys/kernel/mm/transparent_hugepage say "[always]"? */
static bool says_always(const char *path)
{
	char buf[64];
	long n = wss_read_small(path, buf, sizeof buf - 1);
	return n > 0 && (buf[n] = 0, strstr(buf, "[always]") != NULL);
}

/* Is a transparent huge page (of any size) allocated on a fault in memory
 * that asked for none?  `always` at the top, or an mTHP size's "always"
 * (each hugepages-<size>kB directory; "inherit" follows the top). */
static bool thp_on_any_fault(void)
{
	static const char dir[] = "/sys/kernel/mm/transparent_hugepage";
	if (says_always("/sys/kernel/mm/transparent_hugepage/enabled"))
		return true;
	int fd = (int)wss_sys3(SYS_open, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	char buf[4096], path[160];
	bool on = false;
	long n;
	while (!on && (n = wss_sys3(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long o = 0; o < n && !on;) {
			struct linux_dirent64 {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + o);
			if (!strncmp(d->name, "hugepages-", 10)) {
				wss_fmt_t f;
				wss_fmt_init(&f, path, sizeof path);
				wss_fmt_str(&f, dir);
				wss_fmt_ch(&f, '/');
				wss_fmt_str(&f, d->name);
				wss_fmt_str(&f, "/enabled");
				on = says_always(wss_fmt_cstr(&f));
			}
			o += d->reclen;
		}
	wss_sys_close(fd);
	return on;
}

/* The number after key (a line's start: "\nVmLck:") in a small /proc
 * file; false when the file or the key is missing. */
static bool proc_number(const char *path, const char *key, uint64_t *v)
{
	char buf[8192];
	long n = wss_read_small(path, buf, sizeof buf - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	const char *p = strstr(buf, key);
	if (!p)
		return false;
	for (p += strlen(key); *p == ' ' || *p == '\t'; p++)
		;
	for (*v = 0; *p >= '0' && *p <= '9'; p++)
		*v = *v * 10 + (uint64_t)(*p - '0');
	return true;
}

/* Pages locked in memory already (VmLck): a lock made before we came
 * (mlockall's MCL_FUTURE) populates every mapping made or reprotected. */
static bool locked(void)
{
	uint64_t kb;
	return !proc_number("/proc/self/status", "\nVmLck:", &kb) || kb;
}

/* Swap configured: swapped pages and our write-protect markers look alike
 * to PAGEMAP_SCAN. */
static bool swap_on(void)
{
	uint64_t kb;
	return !proc_number("/proc/meminfo", "\nSwapTotal:", &kb) || kb;
}

/* File pages reclaimed system-wide so far (/proc/vmstat's pgsteal_file);
 * UINT64_MAX when unknown, which counts as moved. */
static uint64_t file_reclaimed(void)
{
	uint64_t v;
	return proc_number("/proc/vmstat", "\npgsteal_file", &v) && v != UINT64_MAX ? v : UINT64_MAX;
}

/* Nothing counted, nothing bounded yet. */
static void census_reset(void)
{
	E.census_rest = E.census_data = E.census_write = 0;
	memset(E.census_rest_kind, 0, sizeof E.census_rest_kind);
	E.census_final = E.census_files = false;
	memset(E.census_whole, 0, sizeof E.census_whole);
	__atomic_store_n(&E.census_file_unsafe, false, __ATOMIC_RELAXED);
	before.n = counted[0].n = counted[1].n = 0;
}

/* On from start-up where it may be (each registration records the pages
 * present), and counting nothing before the first sampled level, which
 * decides the rest (wss_census_start): a process tracked exactly
 * throughout (a script's short command) reads no /proc or /sys file for
 * it. */
void wss_census_init(void)
{
	E.census = false;
	E.census_why = NULL;
	census_reset();
	if (E.set.mode == WSS_TRACK_EXACT)
		return; /* every touch is counted: nothing to add */
	if (E.set.test.census_off)
		E.census_why = "off (WSS_TEST_CENSUS)";
	else if (E.attached)
		E.census_why = "off (attached: the pages present were touched before)";
	else if (pagemap_fd() < 0)
		E.census_why = "off (the backend reads no page map)";
	else
		E.census = true;
	if (E.level_max)
		wss_census_start();
}

/* Nothing is counted before this (wss_census_count needs a sampled level),
 * so a page made present without a touch by what is checked here only
 * needs to be ruled out from now on. */
void wss_census_start(void)
{
	if (!E.census)
		return;
	if (thp_on_any_fault())
		wss_census_stop("off (transparent huge pages on every fault: a fault makes pages present that were not touched)");
	else if (swap_on())
		wss_census_stop("off (swap is configured: a swapped page looks like one of our write-protect markers)");
	else if (locked())
		wss_census_stop("off (memory locked: pages present without a touch)");
	E.census_reclaimed = file_reclaimed();
}

void wss_census_fork_child(void)
{
	if (!E.census)
		return;
	census_reset();
	E.census_reclaimed = file_reclaimed();
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

/* A page present at its range's registration was not touched since, as
 * far as the census can tell: it goes in `before`, and in the rest. */
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
	/* A file's or shared memory's pages are never counted here; if one
	 * may have left a mapping unseen, the whole mappings bound them
	 * (wss_census_rest). */
	if (kind == WSS_KIND_FILE || kind == WSS_KIND_SHARED) {
		E.census_whole[kind] += (e - s) >> WSS_PAGE_SHIFT;
		E.census_files = true;
		return;
	}
	struct pm_scan_arg q = {.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED, .return_mask = PAGE_IS_PRESENT};
	reg_walk_t w = {kind, true};
	if (!scan(s, e, &q, add_before, &w) || !w.ok)
		wss_census_stop("ended (no room or no scan for the pages present at a mapping)");
}

/* The pages of a run present now and not before their registration. */
typedef struct census_walk {
	int kind;
	bool written;
	int series;              /* a sparse range's pass: 0 data, 1 write */
	wss_sparse_part_t *part; /* NULL: a dense range */
} census_walk_t;

/* A dense page's read-ever bits say what was counted; a sparse range's
 * pages outside its finest level have none, and are counted once per
 * series by the runs in counted[]. */
static void count_page(uintptr_t a, census_walk_t *w)
{
	uint8_t none = 0, *rv = &none;
	if (!w->part || (w->part->fine != WSS_SPARSE_NONE && wss_sampling_member(a, w->part->fine)))
		rv = wss_shadow_rever(a);
	if (!rv)
		return;
	bool data = !w->part || w->series == 0, write = w->written && (!w->part || w->series == 1);
	int got = wss_tick_count_present(a, rv, w->kind, data, write);
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
	wss_regions_t *c = &counted[w->series];
	if (w->part && (c->n >= COUNTED_MAX || wss_regions_insert(c, s, e, 0)))
		wss_census_stop("ended (no room for the pages counted in sparse ranges)");
}

/* A sparse range's run: data, then (written) writes, each once a page. */
static void count_sparse_new(uintptr_t s, uintptr_t e, void *arg)
{
	census_walk_t *w = arg;
	w->series = 0;
	less(&counted[0], s, e, count_new, w);
	if (w->written) {
		w->series = 1;
		less(&counted[1], s, e, count_new, w);
	}
}

/* A run that may hold touched pages the census cannot count (a data
 * segment's pages read from its file, pages mapped huge): into the rest,
 * as often as a scan sees them (a bound, not a count). */
static void rest_run(uintptr_t s, uintptr_t e, void *arg)
{
	census_walk_t *w = arg;
	rest_add(w->kind, (e - s) >> WSS_PAGE_SHIFT);
}

static void present(uintptr_t s, uintptr_t e, uint64_t cat, void *arg)
{
	census_walk_t *w = arg;
	if (cat & (PAGE_IS_FILE | PAGE_IS_HUGE)) {
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

void wss_census_count_all(void)
{
	wss_census_count(0, WSS_ADDR_LIMIT);
	/* The bound holds only with every page present at the end seen. */
	E.census_final = E.census && __atomic_load_n(&E.measuring, __ATOMIC_RELAXED);
}

void wss_census_dropped(uintptr_t s, uintptr_t e)
{
	if (E.census)
		wss_regions_remove(&before, s, e);
}

void wss_census_lost(uintptr_t s, uintptr_t e, int kind)
{
	if (E.census)
		rest_add(kind, (e - s) >> WSS_PAGE_SHIFT);
}

bool wss_census_rest(uint64_t *rest, const uint64_t **by_kind)
{
	/* Off, ended, or a summary before the end's count (a profile cut
	 * short): what was touched since is bounded by nothing here. */
	if (!E.census || !E.census_final || swap_on())
		return false;
	/* A file's and shared memory's pages touched are among those mapped
	 * in this process at the scans, unless some left unseen: a file
	 * page reclaimed (anywhere: the system's count moved), a file
	 * shortened or punched (the program's calls).  Then their mappings'
	 * sizes bound them instead. */
	if (E.census_files && (E.census_reclaimed == UINT64_MAX || file_reclaimed() != E.census_reclaimed ||
			       __atomic_load_n(&E.census_file_unsafe, __ATOMIC_RELAXED))) {
		for (int k = 0; k < WSS_KIND_N; k++)
			rest_add(k, E.census_whole[k]);
		memset(E.census_whole, 0, sizeof E.census_whole);
	}
	*rest = E.census_rest;
	*by_kind = E.census_rest_kind;
	return true;
}

void wss_engine_file_changed(void)
{
	__atomic_store_n(&E.census_file_unsafe, true, __ATOMIC_RELAXED);
}

/* A buffer a system call is given (pins.c) counts as touched, though the
 * kernel may fill only its start (a short read): its tracked readable
 * pages are read here, before the call, so that each is present and
 * counted like any page touched.  A read maps the zero page where there
 * is none: no memory, no change to what the program sees.  Not a file's
 * page, which past the file's end would raise SIGBUS where the call only
 * fails: the files' mappings then bound their pages whole. */
void wss_census_touch(uintptr_t s, uintptr_t e)
{
	/* Before the first sampled level every touch is counted exactly. */
	if (!__atomic_load_n(&E.census, __ATOMIC_RELAXED) || !__atomic_load_n(&E.level_max, __ATOMIC_RELAXED))
		return;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		uint8_t f = fl ? wss_flags_load(a, fl) : 0;
		if (!(f & WSS_PF_TRACKED) || !(f & PROT_READ) || (f & WSS_PF_WPONLY))
			continue;
		if (f & WSS_PF_FILE)
			__atomic_store_n(&E.census_file_unsafe, true, __ATOMIC_RELAXED);
		else
			(void)*(volatile const char *)a;
	}
}
