/* Measuring a process that was already running (`wss attach`, injected:
 * preload/attach.c loads us with dlopen).  No function of the process is
 * interposed, so no hook tells the registry about its mappings: the
 * registry follows /proc/self/maps instead, read at start and at every
 * tick (on_tick, under the engine lock), and the backend is uffd-wp, whose
 * write faults the kernel resolves by itself (no signal, no handler, and
 * no system call can fail on a protected page).
 *
 * What is tracked, each kind as `wss run` decides it where a mapping is
 * made (preload/mman.c), here from /proc/self/maps: writable mappings that
 * are not executable.  Private: the brk heap ([heap], kind heap, with
 * track.heap), the loaded objects' writable segments (.data and .bss, as
 * the loader's list gives their extents: data; the executable's with
 * track.data_segments, libraries' with track.library_data), stacks (the
 * main [stack] and threads', kind stack, with track.stacks), mappings of
 * regular files (file, with track.file_mmap), and the rest, anonymous
 * memory (anon, with track.anon_mmap).  Shared: shared memory (MAP_SHARED
 * anonymous memory, System V, memfd, tmpfs files: kind shared, with
 * track.shared) and regular files' mappings (file, with track.file_mmap).
 * Asynchronous write protection takes any kind of memory (the kernel's
 * vma_can_userfault allows every VMA when write protection is the only
 * mode and asynchronous), and a write to a protected page of a shared or
 * file mapping goes on as without it (the kernel clears the marker and
 * makes the page writable as for any write fault: page_mkwrite, dirty
 * accounting), so what reaches the file is the program's alone.
 *
 * A thread's stack is a writable anonymous mapping right above an
 * inaccessible one of at most 64 KiB (the guard glibc, and most runtimes,
 * put below it).  A stack is safe to protect: a write to a protected page
 * faults and the kernel resolves it itself, whoever writes, the thread
 * (its calls' frames), the kernel (a signal frame, a system call's output
 * through copy_to_user, get_user_pages), even with every signal blocked;
 * no handler of ours runs, so nothing of the program's stack is ever
 * needed to resolve it.  A stack the C library keeps for reuse after its
 * thread ended (glibc's stack cache) stays mapped and so tracked; glibc
 * gives its pages back (MADV_DONTNEED, all but the top 16 KiB), which
 * drops their markers, and the harvest counts only pages that hold data
 * (wss_uffd_present_only), so that is no write.  One it unmaps leaves at
 * the next scan.
 *
 * An anonymous mapping right after a library's data is not taken for its
 * .bss by adjacency: the kernel puts a program's mapping there as readily,
 * and merges it with a .bss of the same flags (a 256 MiB table after
 * libm's data was lost so).  Left out: the tool's own memory (all of it
 * shared anonymous memory while attached, listed by common/sys.c, and the
 * engine thread's stack), our library's writable segments, mappings of
 * devices, kernel interfaces and huge pages (as under `wss run`), and the
 * kernel's ([vvar]).
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
 * page written through a private mapping is the process's own copy):
 * those pages count as written in the interval that ends (seed_written).
 * A page of shared memory or of a shared file mapping is the page cache's
 * whether it was written or only read, so those writes are not seen.  A
 * page written there and then given back (MADV_DONTNEED) before the tick
 * is not seen.  A range the program
 * unmapped and mapped again at the same place between two ticks is no
 * longer registered: the harvest says so (EPERM) and the tick observes it
 * again (tick.c), so its writes in that interval are lost, not misplaced. */
#include "config.h"
#include "engine/internal.h"
#include "engine/uffd_compat.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/magic.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#define MAPS_MAX (256UL << 20)
#define GUARD_MAX (64UL << 10)

static wss_attach_track_t what;

/* The tool's own memory (common/sys.c), listed right after
 * /proc/self/maps was read and sorted by address: the scan frees lists of
 * its own while it parses, and a mapping freed after the read is still
 * ours.  The buffer is taken once, for as many as the list can hold. */
static wss_own_t *own;
static size_t nown;
static uintptr_t own_table; /* the list's own table: its line gives shm_dev */
/* The device of the kernel's internal tmpfs, where the files behind
 * shared anonymous memory, System V segments and memfds live (those of
 * huge pages live on a hugetlbfs): the device of the tool's memory. */
static uint64_t shm_dev;
static bool shm_dev_known;
/* An address in the engine thread's stack (0 before it runs). */
static uintptr_t engine_sp;

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
	wss_uffd_present_only();
	engine_sp = 0;
	shm_dev_known = false;
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

static void own_sift(size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && own[c + 1].start > own[c].start)
			c++;
		if (own[i].start >= own[c].start)
			return;
		wss_own_t t = own[i];
		own[i] = own[c];
		own[c] = t;
	}
}

static int read_own(void)
{
	if (!own && !(own = wss_sys_alloc((WSS_SYS_OWN_SLOTS + 1) * sizeof *own)))
		return ENOMEM;
	nown = wss_sys_own_list(own, WSS_SYS_OWN_SLOTS + 1);
	own_table = nown ? own[0].start : 0;
	/* Heapsort: thousands of entries in a large process, every tick. */
	for (size_t i = nown / 2; i-- > 0;)
		own_sift(i, nown);
	for (size_t n = nown; n > 1; n--) {
		wss_own_t t = own[0];
		own[0] = own[n - 1];
		own[n - 1] = t;
		own_sift(0, n - 1);
	}
	return 0;
}

static bool own_overlaps(uintptr_t s, uintptr_t e)
{
	size_t lo = 0, hi = nown;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (own[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nown && own[lo].start < e;
}

static bool prefixed(const char *name, size_t nlen, const char *prefix)
{
	size_t n = strlen(prefix);
	return nlen >= n && !memcmp(name, prefix, n);
}

/* The kind of a writable mapping of a file, named as /proc/self/maps
 * names it (" (deleted)" once unlinked), on device dev, as `wss run`
 * decides from the descriptor mapped (preload/mman.c): a tmpfs file mapped
 * shared is shared memory, any other regular file's mapping a file
 * mapping; a device, a kernel interface or huge pages, nothing. */
static int file_kind(const char *name, size_t nlen, bool shared, uint64_t dev)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof deleted - 1;
	int tmpfs = shared ? (what.shared ? WSS_KIND_SHARED : WSS_KIND_NONE) : (what.file_mmap ? WSS_KIND_FILE : WSS_KIND_NONE);
	int file = what.file_mmap ? WSS_KIND_FILE : WSS_KIND_NONE;
	if (nlen > dlen && !memcmp(name + nlen - dlen, deleted, dlen)) {
		/* No path to look at: by where the file lived.  The kernel's
		 * tmpfs ("/dev/zero", "/SYSV...", "/memfd:..."), /dev/shm's,
		 * or a file system on a block device (major number not 0),
		 * whose files are regular ones. */
		if ((shm_dev_known && dev == shm_dev) || (dev >> 32 == 0 && prefixed(name, nlen, "/dev/shm/")))
			return tmpfs;
		return dev >> 32 ? file : WSS_KIND_NONE;
	}
	char path[4096];
	if (nlen >= sizeof path)
		return WSS_KIND_NONE;
	memcpy(path, name, nlen);
	path[nlen] = 0;
	struct stat st;
	struct statfs sf;
	if (wss_sys_failed(wss_sys2(SYS_stat, path, &st)) || !S_ISREG(st.st_mode) ||
	    wss_sys_failed(wss_sys2(SYS_statfs, path, &sf)) || wss_fs_pseudo((long)sf.f_type))
		return WSS_KIND_NONE;
	return (long)sf.f_type == TMPFS_MAGIC ? tmpfs : file;
}

/* Whether [s, e) lies wholly in loaded objects' writable segments. */
static bool in_objs(uintptr_t s, uintptr_t e)
{
	for (size_t i = 0; i < objs.n && s < e; i++)
		if (objs.v[i].s <= s && objs.v[i].e > s)
			s = objs.v[i].e;
	return s >= e;
}

/* One line of /proc/self/maps. */
typedef struct maps_line {
	uintptr_t s, e;
	char perms[4];
	uint64_t dev; /* major << 32 | minor */
	const char *name;
	size_t nlen;
} maps_line_t;

/* Parse the line at *p, *p then at the next one; false for one that is
 * not a mapping's. */
static bool maps_line(const char **p, const char *end, maps_line_t *l)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	const char *next = nl ? nl + 1 : end, *q = *p;
	*p = next;
	l->s = hex(&q);
	if (*q != '-')
		return false;
	q++;
	l->e = hex(&q);
	while (*q == ' ')
		q++;
	memcpy(l->perms, q, sizeof l->perms);
	skip_field(&q); /* perms */
	skip_field(&q); /* offset */
	uint64_t major = hex(&q);
	q += *q == ':';
	l->dev = major << 32 | hex(&q);
	skip_field(&q); /* device */
	skip_field(&q); /* inode */
	l->name = q;
	l->nlen = (size_t)((nl ? nl : end) - q);
	return true;
}

/* The device of the kernel's internal tmpfs, from the line of the tool's
 * list table (shared anonymous memory). */
static void find_shm_dev(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	maps_line_t l;
	while (!shm_dev_known && own_table && p < end)
		if (maps_line(&p, end, &l) && l.s == own_table) {
			shm_dev = l.dev;
			shm_dev_known = true;
		}
}

/* The spans of the mappings listed in buf that are tracked, in address
 * order. */
static int wanted(const char *buf, size_t len, spans_t *out)
{
	const char *p = buf, *end = buf + len;
	uintptr_t prev_e = 0;
	bool prev_guard = false;
	maps_line_t l;
	while (p < end) {
		if (!maps_line(&p, end, &l))
			continue;
		uintptr_t s = l.s, e = l.e;
		const char *name = l.name, *perms = l.perms;
		size_t nlen = l.nlen;
		bool anon = nlen == 0, named = prefixed(name, nlen, "[anon:");
		bool guard = (anon || named) && perms[0] == '-' && perms[1] == '-' && perms[2] == '-' && e - s <= GUARD_MAX;
		bool writable = perms[0] == 'r' && perms[1] == 'w' && perms[2] != 'x', shared = perms[3] == 's';
		bool stack = (anon || named) && !shared && prev_guard && prev_e == s; /* a thread's, above its guard */
		prev_guard = guard;
		prev_e = e;
		if (!writable || (engine_sp >= s && engine_sp < e))
			continue;
		int kind;
		if (shared) {
			if (own_overlaps(s, e))
				continue;
			kind = prefixed(name, nlen, "[anon_shmem:") ? (what.shared ? WSS_KIND_SHARED : WSS_KIND_NONE)
			       : name[0] == '/'			   ? file_kind(name, nlen, true, l.dev)
								   : WSS_KIND_NONE;
		} else if (stack || (nlen == 7 && !memcmp(name, "[stack]", 7))) {
			kind = what.stacks ? WSS_KIND_STACK : WSS_KIND_NONE;
		} else if (nlen == 6 && !memcmp(name, "[heap]", 6)) {
			kind = what.heap ? WSS_KIND_HEAP : WSS_KIND_NONE;
		} else if (anon || named) {
			kind = what.anon_mmap ? WSS_KIND_ANON : WSS_KIND_NONE;
		} else if (name[0] == '/') {
			/* (a loaded object's data: its own kind, no file to look at) */
			kind = in_objs(s, e) ? WSS_KIND_NONE : file_kind(name, nlen, false, l.dev);
		} else {
			continue; /* [vvar], [vsyscall], ... */
		}
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
	r = read_own();
	if (!r) {
		find_shm_dev(buf, len);
		r = wanted(buf, len, want);
	}
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

void wss_attached_engine_stack_locked(uintptr_t sp)
{
	engine_sp = sp;
	size_t i = wss_regions_lower_bound(&E.regions, sp);
	if (i < E.regions.n && E.regions.v[i].start <= sp)
		wss_engine_untrack_locked(E.regions.v[i].start, E.regions.v[i].end - E.regions.v[i].start);
}

void wss_attached_release(void)
{
	wss_sys_free(own, own ? (WSS_SYS_OWN_SLOTS + 1) * sizeof *own : 0);
	own = NULL;
	nown = 0;
	spans_t *all[] = {&objs, &want, &want2, &have, &gone, &gone2, &added, &skipped, &tmp};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		spans_free(all[i]);
	wss_attached_close();
}
