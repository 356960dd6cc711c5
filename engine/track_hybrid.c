/* The hybrid backend: the mprotect backend sees the first touch of each page
 * in an interval (read or write, and which thread), and the uffd-wp backend,
 * on the same ranges, which pages were written.  So each sample has a read
 * set and a write set.  The two mechanisms do not disturb each other: the
 * userfaultfd write-protect marker lives in the page table entry and
 * survives mprotect (change_protection keeps it), and a VMA split by
 * mprotect keeps its userfaultfd registration.  A write to an armed page
 * faults once for mprotect (the handler opens the page), then is resolved
 * by the kernel for uffd-wp (the page is marked written).  Kernel accesses
 * to armed pages still fail with EFAULT, as under mprotect: pins stay.
 * A write bit says that a page was written, not when: the tick's write
 * window (engine/writes.c) keeps a write with the interval it was made in. */
#include "config.h"
#include "engine/backend.h"

#include "engine/shadow.h"
#include "engine/sparse.h"

#define MP wss_backend_mprotect
#define UF wss_backend_uffd_wp

static int hy_probe(char *why, size_t whylen) { return UF.probe(why, whylen); }

/* A range whose touches are its writes (a stack: WSS_PF_WPONLY) is the
 * uffd-wp backend's alone: never protected, so it never faults, and its
 * harvest records its touches.  Every range the engine hands a backend
 * lies in one region of the registry, of one kind: its first page says. */
static bool wp_only(uintptr_t start)
{
	uint8_t *fl = wss_shadow_flags(start);
	return fl && (__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_WPONLY);
}

static int hy_attach(uintptr_t start, uintptr_t end, bool arm)
{
	int r = UF.attach(start, end, arm);
	if (wp_only(start))
		return r;
	int m = MP.attach(start, end, arm);
	return r ? r : m;
}

/* Sparse: registered for uffd-wp, nothing protected; members are armed
 * and write-protected one by one. */
static int hy_attach_sparse(uintptr_t start, uintptr_t end) { return UF.attach_sparse(start, end); }
static int hy_watch(uintptr_t start, uintptr_t end) { return UF.watch(start, end); }
static int hy_unwatch(uintptr_t start, uintptr_t end) { return UF.unwatch(start, end); }

/* A write-protected-only range is armed again by its harvest (the scan
 * write-protects what it reports), and has nothing to give back. */
static int hy_arm(uintptr_t start, uintptr_t end) { return wp_only(start) ? 0 : MP.arm(start, end); }
static void hy_disarm(uintptr_t start, uintptr_t end)
{
	if (!wp_only(start))
		MP.disarm(start, end);
}
static void hy_detach(uintptr_t start, uintptr_t end) { UF.detach(start, end); }
/* Before the page is opened: a fault inside the tick's write window takes
 * the page's write bits for the interval that ended (engine/writes.c). */
static bool hy_fault(uintptr_t addr, bool write, bool exec, const void *uc)
{
	uintptr_t page = addr & ~(WSS_PAGE_SIZE - 1);
	wss_engine_split_write(page, wss_uffd_take_written);
	/* A member of a sparse range (its flags byte does not say tracked:
	 * sparse.h) is write-protected here, before it is opened, rather than
	 * when it was armed: only the members touched get a marker, and a
	 * page table for it.  Protecting again a page no thread could write
	 * since it was armed (or since the write window took its bit) loses
	 * nothing; a page never protected drops writes made while it was
	 * outside the sample, which are no interval's. */
	uint8_t *fl = wss_shadow_flags(page);
	if (fl && !(__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED) && wss_sparse_any() &&
	    wss_sparse_find(page, NULL, NULL))
		UF.watch(page, page + WSS_PAGE_SIZE);
	return MP.fault(addr, write, exec, uc);
}

static int hy_harvest(uintptr_t start, uintptr_t end, void (*written)(uintptr_t, uintptr_t, void *), void *arg)
{
	return UF.harvest(start, end, written, arg);
}

static int hy_observe(uintptr_t start, uintptr_t end) { return UF.observe(start, end); }
static void hy_forked(void) { UF.forked(); }
static int hy_reopen(char *why, size_t whylen) { return UF.reopen(why, whylen); }

const wss_backend_t wss_backend_hybrid = {
	.name = "hybrid",
	.sees = "reads and writes, writes apart",
	.needs_pins = true,
	.probe = hy_probe,
	.attach = hy_attach,
	.attach_sparse = hy_attach_sparse,
	.watch = hy_watch,
	.unwatch = hy_unwatch,
	.arm = hy_arm,
	.disarm = hy_disarm,
	.detach = hy_detach,
	.fault = hy_fault,
	.harvest = hy_harvest,
	.observe = hy_observe,
	.forked = hy_forked,
	.reopen = hy_reopen,
};
