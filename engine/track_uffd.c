/* The uffd-wp backend: tracked ranges are registered with a userfaultfd in
 * write-protect mode with UFFD_FEATURE_WP_ASYNC, so a write to a protected
 * page is resolved by the kernel itself (no signal, no VMA split) and leaves
 * the page marked written.  At each tick one PAGEMAP_SCAN ioctl per range
 * returns the written pages and write-protects them again, atomically
 * (PM_SCAN_WP_MATCHING).  Sees writes only, per page, not which thread made
 * them.  The kernel's own writes (read(2) into a protected buffer) succeed
 * and are recorded, so no system call needs a pin.
 *
 * Kernel: Linux 6.7 or later (WP_ASYNC, PAGEMAP_SCAN); the context is opened
 * with UFFD_USER_MODE_ONLY, which needs no privilege (5.11).  WP_UNPOPULATED
 * makes pages never touched yet protected too, so a first write to a fresh
 * page is seen.
 *
 * Both descriptors belong to this process: the userfaultfd context names
 * the mm that opened it and /proc/self/pagemap the process that opened it,
 * so a forked child that used them would unregister or re-protect its
 * parent's memory.  The child closes them first thing (uffd_forked) and
 * opens its own if it is measured; a child of a fork that runs no handlers
 * (_Fork, a raw clone) is recognised by its pid and does nothing. */
#include "config.h"
#include "engine/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "common/fmt.h"
#include "common/sys.h"
#include "engine/shadow.h"
#include "engine/uffd_compat.h"

#define UFFD_FEATURES (UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED)

static int uffd = -1, pagemap = -1;

void wss_uffd_fds(int *u, int *p)
{
	*u = __atomic_load_n(&uffd, __ATOMIC_RELAXED);
	*p = __atomic_load_n(&pagemap, __ATOMIC_RELAXED);
}
static int owner_pid; /* the process both descriptors belong to */
static struct page_region vec[512];

static bool ours(void) { return uffd >= 0 && wss_sys_getpid() == owner_pid; }

static long sys_ioctl(int fd, unsigned long req, void *arg) { return wss_sys3(SYS_ioctl, fd, req, arg); }

static void say(char *why, size_t n, const char *a, long err)
{
	wss_fmt_t f;
	wss_fmt_init(&f, why, n);
	wss_fmt_str(&f, a);
	if (err) {
		wss_fmt_str(&f, ": ");
		wss_fmt_str(&f, strerror((int)err));
	}
	wss_fmt_cstr(&f);
}

/* Their identities: a program that closes descriptors it does not know
 * (wss attach puts no guard on close) may have taken a number, and what it
 * holds there is not ours to close. */
static uint64_t id[2][2];

static void close_all(void)
{
	if (uffd >= 0 && wss_fd_same(uffd, id[0][0], id[0][1]))
		wss_sys_close(uffd);
	if (pagemap >= 0 && wss_fd_same(pagemap, id[1][0], id[1][1]))
		wss_sys_close(pagemap);
	uffd = pagemap = -1;
}

/* Open this process's context and pagemap.  Returns 0 or an errno with
 * the missing feature in why. */
static int open_ctx(char *why, size_t n)
{
	long fd = wss_sys1(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0) {
		say(why, n,
		    fd == -ENOSYS   ? "userfaultfd: not in this kernel"
		    : fd == -EINVAL ? "userfaultfd: UFFD_USER_MODE_ONLY not supported (Linux 5.11+)"
		    : fd == -EPERM  ? "userfaultfd: not permitted (vm.unprivileged_userfaultfd = 0?)"
				    : "userfaultfd",
		    fd == -ENOSYS || fd == -EINVAL || fd == -EPERM ? 0 : -fd);
		return (int)-fd;
	}
	struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURES};
	long r = sys_ioctl((int)fd, UFFDIO_API, &api);
	if (r < 0 || (api.features & UFFD_FEATURES) != UFFD_FEATURES) {
		wss_sys_close((int)fd);
		say(why, n, "UFFDIO_API: UFFD_FEATURE_WP_ASYNC and WP_UNPOPULATED not supported (Linux 6.7+)", 0);
		return r < 0 ? (int)-r : ENOTSUP;
	}
	int pm = wss_sys_openat(AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
	if (pm < 0) {
		wss_sys_close((int)fd);
		say(why, n, "/proc/self/pagemap", -pm);
		return -pm;
	}
	uffd = wss_fd_high((int)fd);
	pagemap = wss_fd_high(pm);
	wss_fd_identity(uffd, &id[0][0], &id[0][1]);
	wss_fd_identity(pagemap, &id[1][0], &id[1][1]);
	owner_pid = wss_sys_getpid();
	return 0;
}

/* Write-protected whether armed or not: a page outside a sample costs one
 * write fault, resolved by the kernel, and is not protected again (the
 * harvest of a sampled interval scans its members only). */
/* Registered, and write-protected as a whole when armed; unarmed (a
 * sampled attach), the engine watches the members alone: a page outside
 * the sample left protected costs the program a kernel fault at its next
 * write, for nothing (a 256 MiB random walk: 65,536 of them, +25 %). */
static int uffd_attach(uintptr_t start, uintptr_t end, bool arm)
{
	if (!ours())
		return 0;
	struct uffdio_register reg = {.range = {start, end - start}, .mode = UFFDIO_REGISTER_MODE_WP};
	long r = sys_ioctl(uffd, UFFDIO_REGISTER, &reg);
	if (r < 0)
		return (int)-r;
	if (!arm)
		return 0;
	struct uffdio_writeprotect wp = {.range = {start, end - start}, .mode = UFFDIO_WRITEPROTECT_MODE_WP};
	r = sys_ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
	return r < 0 ? (int)-r : 0;
}

/* A sparse range: registered (a flag on its VMAs, no page-table work),
 * not write-protected: with WP_UNPOPULATED that would put a marker in a
 * page table for every page of it, a terabyte's page tables.  Its members
 * are write-protected one by one (uffd_watch).  A page never protected
 * reports as written once the program writes it; only members are
 * harvested, and each was protected before it was first harvested. */
static int uffd_attach_sparse(uintptr_t start, uintptr_t end)
{
	if (!ours())
		return 0;
	struct uffdio_register reg = {.range = {start, end - start}, .mode = UFFDIO_REGISTER_MODE_WP};
	long r = sys_ioctl(uffd, UFFDIO_REGISTER, &reg);
	return r < 0 ? (int)-r : 0;
}

static int writeprotect(uintptr_t start, uintptr_t end, uint64_t mode)
{
	if (!ours())
		return 0;
	struct uffdio_writeprotect wp = {.range = {start, end - start}, .mode = mode};
	long r = sys_ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
	return r < 0 ? (int)-r : 0;
}

static int uffd_watch(uintptr_t start, uintptr_t end) { return writeprotect(start, end, UFFDIO_WRITEPROTECT_MODE_WP); }

/* Mode 0 resolves: the pages (and the markers of unpopulated ones) lose
 * their write protection; nobody waits on an asynchronous context. */
static int uffd_unwatch(uintptr_t start, uintptr_t end)
{
	return writeprotect(start, end, UFFDIO_WRITEPROTECT_MODE_DONTWAKE);
}

/* The harvest re-protects: nothing to do at the tick itself. */
static int uffd_arm(uintptr_t start, uintptr_t end)
{
	(void)start;
	(void)end;
	return 0;
}

/* Writes are never refused: nothing to give back. */
static void uffd_disarm(uintptr_t start, uintptr_t end)
{
	(void)start;
	(void)end;
}

/* Unregistering drops the write protection with it. */
static void uffd_detach(uintptr_t start, uintptr_t end)
{
	if (!ours())
		return;
	struct uffdio_range range = {start, end - start};
	sys_ioctl(uffd, UFFDIO_UNREGISTER, &range);
}

/* Attached, a written page is one that holds data (present or swapped).
 * The kernel reports a hole with no write-protect marker as written, and
 * MADV_DONTNEED drops the markers of anonymous memory with its pages: no
 * hook of ours sees the call in a process wss attach measures, and glibc
 * gives back every stack of a thread that ends so (8 MiB: 2,048 pages
 * counted written at the next harvest).  A hole is left unprotected: a
 * write there later makes a page of its own, unprotected, seen then; a
 * read maps the zero page, skipped until it is written. */
static uint64_t harvest_anyof;

void wss_uffd_present_only(void) { harvest_anyof = PAGE_IS_PRESENT | PAGE_IS_SWAPPED; }

/* The pages written since the last harvest, write-protected again as they
 * are reported.  Not a page that maps the zero page: a page read before it
 * is first written maps it (its write-protect marker kept), and its first
 * write clears the marker, then copies the zero page with the page table
 * unlocked; reported in that gap and protected again, the copy finds its
 * entry changed and faults again.  Left for the next scan, it is reported
 * where the copy completes.  The same holds for any page, in a gap too
 * short to close from here: the kernel clears the protection in the fault,
 * then the store is retried; a scan in between reports the page, protects
 * it again, and the store faults and is reported by the next scan too
 * (docs/backends.md, "uffd-wp"). */
static int uffd_harvest(uintptr_t start, uintptr_t end, void (*touched)(uintptr_t, uintptr_t, void *), void *arg)
{
	if (!ours())
		return 0;
	while (start < end) {
		struct pm_scan_arg a = {
			.size = sizeof a,
			.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = start,
			.end = end,
			.vec = (uintptr_t)vec,
			.vec_len = sizeof vec / sizeof *vec,
			.category_inverted = PAGE_IS_PFNZERO,
			.category_mask = PAGE_IS_WRITTEN | PAGE_IS_PFNZERO,
			.category_anyof_mask = harvest_anyof,
			.return_mask = PAGE_IS_WRITTEN,
		};
		long r = sys_ioctl(pagemap, PAGEMAP_SCAN, &a);
		if (r < 0)
			return (int)-r; /* EPERM: part of the range is not registered */
		for (long i = 0; i < r; i++)
			touched(vec[i].start, vec[i].end, arg);
		if (a.walk_end <= start) /* no progress: should not happen */
			return EIO;
		start = a.walk_end;
	}
	return 0;
}

bool wss_uffd_take_written(uintptr_t page)
{
	if (!ours())
		return false;
	struct page_region got;
	struct pm_scan_arg a = {.size = sizeof a, .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
				.start = page, .end = page + WSS_PAGE_SIZE, .vec = (uintptr_t)&got, .vec_len = 1,
				.category_inverted = PAGE_IS_PFNZERO, .category_mask = PAGE_IS_WRITTEN | PAGE_IS_PFNZERO,
				.return_mask = PAGE_IS_WRITTEN};
	return sys_ioctl(pagemap, PAGEMAP_SCAN, &a) == 1;
}

/* Can this kernel do it?  A scratch mapping of two pages, protected, one
 * written: one PAGEMAP_SCAN must report exactly that page as written (the
 * category flag PAGE_IS_WRITTEN, the only one used), and a second none. */
static int uffd_probe(char *why, size_t n)
{
	close_all();
	int r = open_ctx(why, n);
	if (r)
		return r;
	char *p = wss_sys_mmap(NULL, 2 * WSS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((uintptr_t)p > (uintptr_t)-4096) {
		close_all();
		say(why, n, "out of memory for the userfaultfd probe", 0);
		return ENOMEM;
	}
	uintptr_t s = (uintptr_t)p, e = s + 2 * WSS_PAGE_SIZE;
	const char *fail = NULL;
	r = uffd_attach(s, e, true);
	if (r)
		fail = "UFFDIO_REGISTER in write-protect mode";
	struct page_region got[2] = {{0, 0, 0}, {0, 0, 0}};
	int ngot = 0;
	if (!fail) {
		p[WSS_PAGE_SIZE] = 1;
		struct pm_scan_arg a = {.size = sizeof a, .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
					.start = s, .end = e, .vec = (uintptr_t)got, .vec_len = 2,
					.category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN};
		long k = sys_ioctl(pagemap, PAGEMAP_SCAN, &a);
		if (k < 0) {
			r = (int)-k;
			fail = r == ENOTTY ? "PAGEMAP_SCAN: not supported (Linux 6.7+)" : "PAGEMAP_SCAN";
		} else if (k != 1 || got[0].start != s + WSS_PAGE_SIZE || got[0].end != e ||
			   !(got[0].categories & PAGE_IS_WRITTEN)) {
			r = ENOTSUP;
			fail = "PAGEMAP_SCAN: PAGE_IS_WRITTEN did not report the written page";
		} else {
			ngot = (int)sys_ioctl(pagemap, PAGEMAP_SCAN, &a);
			if (ngot != 0) {
				r = ENOTSUP;
				fail = "PAGEMAP_SCAN: PM_SCAN_WP_MATCHING did not protect the page again";
			}
		}
	}
	wss_sys_munmap(p, 2 * WSS_PAGE_SIZE);
	if (fail) {
		close_all();
		say(why, n, fail, r == ENOTSUP || r == ENOTTY ? 0 : r);
		return r ? r : ENOTSUP;
	}
	return 0;
}

static int uffd_observe(uintptr_t start, uintptr_t end) { return uffd_attach(start, end, true); }

void wss_uffd_close(void) { close_all(); }

static void uffd_forked(void)
{
	/* Not ours any more: close without touching the parent's context. */
	close_all();
}

static int uffd_reopen(char *why, size_t n) { return open_ctx(why, n); }

const wss_backend_t wss_backend_uffd_wp = {
	.name = "uffd-wp",
	.sees = "writes",
	.needs_pins = false,
	.probe = uffd_probe,
	.attach = uffd_attach,
	.attach_sparse = uffd_attach_sparse,
	.watch = uffd_watch,
	.unwatch = uffd_unwatch,
	.arm = uffd_arm,
	.disarm = uffd_disarm,
	.detach = uffd_detach,
	.fault = NULL,
	.harvest = uffd_harvest,
	.observe = uffd_observe,
	.forked = uffd_forked,
	.reopen = uffd_reopen,
};
