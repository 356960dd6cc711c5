/* Measuring a process that was already running (`wss attach`, injected:
 * preload/attach.c loads us with dlopen).  No function of the process is
 * interposed, so no hook tells the registry about its mappings: the
 * registry follows /proc/self/maps instead, read at start and at every
 * tick (on_tick, under the engine lock), and the backend is uffd-wp, whose
 * write faults the kernel resolves by itself (no signal, no handler, and
 * no system call can fail on a protected page).
 *
 * What is tracked: private writable mappings that are not executable,
 * less the main stack and the kernel's, as `wss run` tracks: the brk heap
 * ([heap], kind heap, with track.heap), the loaded objects' writable
 * segments (.data and .bss, as the loader's list gives their extents:
 * data; the executable's with track.data_segments, libraries' with
 * track.library_data), and the rest, anonymous memory and private file
 * mappings (anon, with track.anon_mmap).  An anonymous mapping right after
 * a library's data is not taken for its .bss by adjacency: the kernel puts
 * a program's mapping there as readily, and merges it with a .bss of the
 * same flags (a 256 MiB table after libm's data was lost so).  Left out:
 * the tool's own memory (shared anonymous memory while attached,
 * common/sys.c), our library's writable segments, and thread stacks, which
 * `wss run` does not track either: a writable anonymous mapping right
 * above an inaccessible one of at most 64 KiB (the guard glibc, and most
 * runtimes, put below a thread's stack) is taken for one.
 *
 * The loader's list is read under the engine lock (dl_iterate_phdr takes
 * the loader's lock), against the lock order of a preloaded library
 * (wss_lock_rank_t): attached, no thread of the program ever takes the
 * engine lock (no hook, no fault handler), so no thread holding the
 * loader's lock can wait for it.
 *
 * A mapping made between two ticks (a new mmap, the heap grown by brk) is
 * registered at the tick after it appears; what the program wrote there
 * meanwhile is what the kernel has made present of it (an anonymous page
 * is present once written; read, it maps the shared zero page; a file
 * page written is the process's own copy): those pages count as written
 * in the interval that ends (seed_written).  A page written there and
 * then given back (MADV_DONTNEED) before the tick is not seen.  A range the program
 * unmapped and mapped again at the same place between two ticks is no
 * longer registered: the harvest says so (EPERM) and the tick observes it
 * again (tick.c), so its writes in that interval are lost, not misplaced. */
#include "config.h"
#include "engine/internal.h"
#include "engine/uffd_compat.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>

#define MAPS_MAX (256UL << 20)
#define GUARD_MAX (64UL << 10)

static wss_attach_track_t what;

typedef struct span {
	uintptr_t s, e;
	int kind, prot;
} span_t;

typedef struct spans {
	span_t *v;
	size_t n, cap;
} spans_t;

static int spans_add(spans_t *l, uintptr_t s, uintptr_t e, int kind, int prot)
{
	if (s >= e)
		return 0;
	if (l->n && l->v[l->n - 1].e == s && l->v[l->n - 1].kind == kind && l->v[l->n - 1].prot == prot) {
		l->v[l->n - 1].e = e;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		span_t *v = wss_sys_alloc(cap * sizeof *v);
		if (!v)
			return ENOMEM;
		if (l->n)
			memcpy(v, l->v, l->n * sizeof *v);
		wss_sys_free(l->v, l->cap * sizeof *v);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (span_t){s, e, kind, prot};
	return 0;
}

static void spans_free(spans_t *l)
{
	wss_sys_free(l->v, l->cap * sizeof *l->v);
	*l = (spans_t){0};
}

/* The loaded objects' writable PT_LOAD segments, page-rounded, with the
 * kind their pages are tracked as (WSS_KIND_NONE: not tracked; ours). */
static spans_t objs;

static int collect_objs(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	bool *first = data, exe = *first;
	*first = false;
	int kind = info->dlpi_addr == wss_loader_self_base()			? WSS_KIND_NONE
		   : (exe ? what.data_segments : what.library_data) ? WSS_KIND_DATA
								    : WSS_KIND_NONE;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || !ph->p_memsz)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (spans_add(&objs, wss_page_down(s), wss_page_up(s + ph->p_memsz), kind, 1))
			return 1;
	}
	return 0;
}

static int span_cmp(const span_t *a, const span_t *b) { return a->s < b->s ? -1 : a->s > b->s; }

static int read_objs(void)
{
	objs.n = 0;
	bool first = true; /* the executable comes first in the loader's list */
	dl_iterate_phdr(collect_objs, &first);
	/* Sorted by address (insertion: a few dozen objects). */
	for (size_t i = 1; i < objs.n; i++)
		for (size_t j = i; j > 0 && span_cmp(&objs.v[j - 1], &objs.v[j]) > 0; j--) {
			span_t t = objs.v[j];
			objs.v[j] = objs.v[j - 1];
			objs.v[j - 1] = t;
		}
	return 0;
}

/* wss attach's watch: the read end of a FIFO whose only writer is wss
 * attach (it hangs up when wss attach dies, whatever pid namespace either
 * is in), else a pidfd of wss attach (same namespace only); its identity,
 * since a program closing descriptors it does not know may take the
 * number (then the watch is off: never poll the program's file). */
static bool ctl_fifo;
static uint64_t ctl_dev, ctl_ino;

void wss_attached_init(const wss_attach_track_t *w, const char *fifo, int controller)
{
	what = *w;
	E.attached = true;
	wss_census_stop("off (attached: the pages present were touched before)");
	E.attach_end = NULL;
	E.attach_ctl = -1;
	E.attach_scans = E.attach_scan_ns = 0;
	long fd = fifo && *fifo ? wss_sys_openat(AT_FDCWD, fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0) : -1;
	ctl_fifo = fd >= 0;
	if (fd < 0 && controller > 0)
		fd = wss_sys2(SYS_pidfd_open, controller, 0);
	if (fd >= 0) {
		E.attach_ctl = wss_fd_high((int)fd);
		if (!wss_fd_identity(E.attach_ctl, &ctl_dev, &ctl_ino)) {
			wss_sys_close(E.attach_ctl);
			E.attach_ctl = -1;
		}
	}
}

bool wss_attached_orphaned(void)
{
	if (E.attach_ctl < 0)
		return false;
	if (!wss_fd_same(E.attach_ctl, ctl_dev, ctl_ino)) {
		E.attach_ctl = -1; /* the program's now: not ours to poll or close */
		return false;
	}
	struct pollfd p = {E.attach_ctl, POLLIN, 0};
	struct timespec zero = {0, 0};
	if (wss_sys4(SYS_ppoll, &p, 1, &zero, NULL) != 1)
		return false;
	return ctl_fifo ? (p.revents & (POLLHUP | POLLERR)) != 0 : true;
}

static void wss_attached_close(void)
{
	if (E.attach_ctl >= 0 && wss_fd_same(E.attach_ctl, ctl_dev, ctl_ino))
		wss_sys_close(E.attach_ctl);
	E.attach_ctl = -1;
}

static uintptr_t hex(const char **p)
{
	uintptr_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return v;
		v = v * 16 + (uintptr_t)d;
	}
}

static void skip_field(const char **p)
{
	while (**p && **p != ' ' && **p != '\n')
		(*p)++;
	while (**p == ' ')
		(*p)++;
}

/* Add [s, e) to out: the parts inside a loaded object's writable segment
 * with that object's kind, the rest with kind. */
static int add_pieces(spans_t *out, uintptr_t s, uintptr_t e, int kind)
{
	for (size_t i = 0; i < objs.n && s < e; i++) {
		uintptr_t os = objs.v[i].s, oe = objs.v[i].e;
		if (oe <= s || os >= e)
			continue;
		if (os > s && kind != WSS_KIND_NONE && spans_add(out, s, os, kind, PROT_READ | PROT_WRITE))
			return ENOMEM;
		uintptr_t ps = os > s ? os : s, pe = oe < e ? oe : e;
		if (objs.v[i].kind != WSS_KIND_NONE && spans_add(out, ps, pe, objs.v[i].kind, PROT_READ | PROT_WRITE))
			return ENOMEM;
		s = pe;
	}
	if (s < e && kind != WSS_KIND_NONE && spans_add(out, s, e, kind, PROT_READ | PROT_WRITE))
		return ENOMEM;
	return 0;
}

/* The spans of the mappings listed in buf that are tracked, in address
 * order. */
static int wanted(const char *buf, size_t len, spans_t *out)
{
	const char *p = buf, *end = buf + len;
	uintptr_t prev_e = 0;
	bool prev_guard = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		uintptr_t s = hex(&p);
		if (*p != '-') {
			p = next;
			continue;
		}
		p++;
		uintptr_t e = hex(&p);
		while (*p == ' ')
			p++;
		char perms[4] = {p[0], p[1], p[2], p[3]};
		skip_field(&p); /* perms */
		skip_field(&p); /* offset */
		skip_field(&p); /* device */
		skip_field(&p); /* inode */
		const char *name = p;
		size_t nlen = (size_t)((nl ? nl : end) - name);
		bool anon = nlen == 0;
		bool guard = anon && perms[0] == '-' && perms[1] == '-' && perms[2] == '-' && e - s <= GUARD_MAX;
		bool data = perms[0] == 'r' && perms[1] == 'w' && perms[2] != 'x' && perms[3] == 'p';
		bool stack = anon && prev_guard && prev_e == s; /* a thread's stack, above its guard */
		prev_guard = guard;
		prev_e = e;
		p = next;
		bool heap = nlen == 6 && !memcmp(name, "[heap]", 6), named = nlen > 6 && !memcmp(name, "[anon:", 6);
		if (!data || stack || (!anon && name[0] != '/' && !heap && !named))
			continue; /* [stack], [vvar], [vsyscall], ... */
		int kind = heap ? (what.heap ? WSS_KIND_HEAP : WSS_KIND_NONE) : (what.anon_mmap ? WSS_KIND_ANON : WSS_KIND_NONE);
		if (add_pieces(out, s, e, kind))
			return ENOMEM;
	}
	return 0;
}

/* out = the pieces of a's spans not covered by b's (both sorted, neither
 * overlapping itself), each with its kind in a. */
static int minus(const spans_t *a, const spans_t *b, spans_t *out)
{
	size_t j = 0;
	out->n = 0;
	for (size_t i = 0; i < a->n; i++) {
		uintptr_t s = a->v[i].s, e = a->v[i].e;
		while (j < b->n && b->v[j].e <= s)
			j++;
		for (size_t k = j; k < b->n && b->v[k].s < e && s < e; k++) {
			if (b->v[k].s > s && spans_add(out, s, b->v[k].s, a->v[i].kind, a->v[i].prot))
				return ENOMEM;
			if (b->v[k].e > s)
				s = b->v[k].e;
		}
		if (s < e && spans_add(out, s, e, a->v[i].kind, a->v[i].prot))
			return ENOMEM;
	}
	return 0;
}

/* The wanted spans, as /proc/self/maps lists them now. */
static int read_wanted(spans_t *want)
{
	char *buf;
	size_t len;
	int r = wss_file_read("/proc/self/maps", MAPS_MAX, &buf, &len);
	if (r)
		return r;
	want->n = 0;
	r = wanted(buf, len, want);
	wss_file_free(buf, MAPS_MAX);
	return r;
}

/* The pages of a range that appeared since the last scan which the
 * program wrote meanwhile: present, not the zero page, not the page
 * cache's (PAGEMAP_SCAN, no protection change), recorded as written in
 * interval k.  Not at the first scan: what the process wrote before wss
 * came is not this interval's. */
static void seed_written(uintptr_t s, uintptr_t e, uint32_t k)
{
	int u, pm;
	wss_uffd_fds(&u, &pm);
	if (pm < 0)
		return;
	static struct page_region vec[256];
	while (s < e) {
		struct pm_scan_arg a = {
			.size = sizeof a,
			.start = s,
			.end = e,
			.vec = (uintptr_t)vec,
			.vec_len = sizeof vec / sizeof *vec,
			.category_inverted = PAGE_IS_PFNZERO | PAGE_IS_FILE,
			.category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO | PAGE_IS_FILE,
			.return_mask = PAGE_IS_PRESENT,
		};
		long n = wss_sys3(SYS_ioctl, pm, PAGEMAP_SCAN, &a);
		if (n < 0)
			return;
		for (long i = 0; i < n; i++)
			wss_writes_record(vec[i].start, vec[i].end, k, 0);
		if (a.walk_end <= s)
			return;
		s = a.walk_end;
	}
}

/* Lists kept from scan to scan (their memory the tool's). */
static spans_t want, want2, have, gone, gone2, added, skipped, tmp;

int wss_attached_scan_locked(void)
{
	if (!E.attached || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return 0;
	uint64_t t0 = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	read_objs();
	int r = read_wanted(&want);
	have.n = 0;
	for (size_t i = 0; !r && i < E.regions.n; i++)
		r = spans_add(&have, E.regions.v[i].start, E.regions.v[i].end, E.regions.v[i].kind, 0);
	/* Ranges the registry could not take (a mapping too large for exact
	 * tracking, counted in the summary once): not offered again while
	 * they are mapped. */
	if (!r)
		r = minus(&skipped, &want, &tmp) || minus(&skipped, &tmp, &gone2);
	if (!r) {
		spans_t t = skipped;
		skipped = gone2;
		gone2 = t;
		r = minus(&want, &skipped, &tmp);
	}
	if (!r) {
		spans_t t = want;
		want = tmp;
		tmp = t;
		r = minus(&have, &want, &gone) || minus(&want, &have, &added);
	}
	/* /proc/self/maps is read a page at a time, each under the mmap
	 * lock but not all of it under one: a mapping can go missing from a
	 * read while the program maps and unmaps elsewhere.  A range gone
	 * from one read leaves only when a second read agrees. */
	if (!r && gone.n) {
		r = read_wanted(&want2) || minus(&gone, &want2, &gone2);
		if (!r) {
			spans_t t = gone;
			gone = gone2;
			gone2 = t;
		}
	}
	if (!r) {
		for (size_t i = 0; i < gone.n; i++)
			wss_engine_untrack_locked(gone.v[i].s, gone.v[i].e - gone.v[i].s);
		/* Mappings found, not made: how fast they are touched is not
		 * known (wss_policy_before_attach). */
		E.scanning = true;
		for (size_t i = 0; i < added.n; i++) {
			uintptr_t s = added.v[i].s, e = added.v[i].e;
			wss_engine_track_locked(s, e - s, added.v[i].prot, added.v[i].kind);
			size_t k = wss_regions_lower_bound(&E.regions, s);
			if (k == E.regions.n || E.regions.v[k].start > s) {
				if (spans_add(&skipped, s, e, added.v[i].kind, added.v[i].prot))
					break;
			} else if (E.attach_scans) {
				seed_written(s, e, E.epoch);
			}
		}
		E.scanning = false;
	}
	E.attach_scans++;
	E.attach_scan_ns += wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return r;
}

void wss_attached_release(void)
{
	spans_t *all[] = {&objs, &want, &want2, &have, &gone, &gone2, &added, &skipped, &tmp};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		spans_free(all[i]);
	wss_attached_close();
}
