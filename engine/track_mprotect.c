/* The mprotect backend: at each tick every tracked range becomes PROT_NONE;
 * the first access to a page in the interval faults, the handler gives the
 * page back the application's protection and records the touch.  Exact,
 * sees reads and writes, and names the touching thread.
 *
 * Races, and how they are closed:
 * - tick vs fault: the tick advances the epoch, then protects; the handler
 *   unprotects, then reads the epoch (engine/fault.c).  A page unprotected
 *   before the tick's protect is armed again and faults again in the new
 *   interval; one unprotected after it was unprotected by a handler that
 *   reads the new epoch.  So every interval sees the first touch of every
 *   page.  The handler announces the open before it unprotects, so that a
 *   tick that re-arms only the pages touched in its interval waits for
 *   the page to be in a touched list (fault.c).
 * - fault vs the application's own mprotect: the wrapper makes the call,
 *   stores the new protection in the page flags, then applies it once more;
 *   the handler calls mprotect with the flags it read, then reads them again
 *   and repeats if they changed.  A handler mprotect that lands after the
 *   application's call either sees the new flags on its re-read and follows,
 *   or read them before they changed and is overridden by the second call.
 * - fault vs the page leaving tracking (an exclusion at dlclose, a stack,
 *   from another thread): the flags then say "not tracked" with no
 *   protection bits, which is no protection to follow (following it would
 *   make the page PROT_NONE for good: the program's next access to it
 *   would be a SIGSEGV that is not ours).  Whoever untracks a mapped
 *   page gave it its protection first (its disarm, or the program's call
 *   applied again), so the handler stops there; its own mprotect, with the
 *   protection the page had while tracked, either preceded that or set the
 *   same.
 * - VMA count: each single-page unprotect inside a PROT_NONE range can split
 *   one VMA into three.  We keep an estimate per interval and, past a budget
 *   well below vm.max_map_count, unprotect an aligned block (or the whole
 *   uniform run) instead, counting it as "coarse" in the sample. */
#include "config.h"
#include "engine/backend.h"

#include <errno.h>
#include <sys/mman.h>

#include "common/fmt.h"
#include "common/sys.h"
#include "engine/shadow.h"
#include "engine/sparse.h"

#define COARSE_BLOCK_PAGES 64

static int mp_probe(char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	return 0; /* mprotect and SIGSEGV work everywhere */
}

static int mp_arm(uintptr_t start, uintptr_t end)
{
	int r = wss_sys_mprotect((void *)start, end - start, PROT_NONE);
	return r ? -r : 0;
}

static int mp_attach(uintptr_t start, uintptr_t end, bool arm) { return arm ? mp_arm(start, end) : 0; }

/* Give [start, end) the protections recorded in the flags, one mprotect per
 * run of equal protection; a piece of a sparse range is one run (its
 * entry's protection), whatever its length.  A page that is not tracked
 * (never, or no longer: a pin's open racing an exclusion) is left as it
 * is: its flags hold no protection of the program's, and whoever untracked
 * it gave it its own (restore's race note). */
static void mp_disarm(uintptr_t start, uintptr_t end)
{
	uintptr_t run = start;
	int run_prot = -1;
	for (uintptr_t a = start; a < end;) {
		uintptr_t next = a + WSS_PAGE_SIZE, ss, se;
		uint8_t *fl = wss_shadow_flags(a);
		uint8_t f = fl ? __atomic_load_n(fl, __ATOMIC_ACQUIRE) : 0, sf;
		int prot = (f & WSS_PF_TRACKED) ? f & WSS_PF_PROT : -1;
		if (!(f & WSS_PF_TRACKED) && wss_sparse_any() && (sf = wss_sparse_find(a, &ss, &se))) {
			prot = sf & WSS_PF_PROT;
			next = se < end ? se : end;
		}
		if (prot != run_prot) {
			if (run_prot >= 0)
				wss_sys_mprotect((void *)run, a - run, run_prot);
			run = a;
			run_prot = prot;
		}
		a = next;
	}
	if (run_prot >= 0)
		wss_sys_mprotect((void *)run, end - run, run_prot);
}

/* Does the application's protection allow this access?  On x86 a writable
 * page is also readable. */
static bool access_allowed(int prot, bool write, bool exec)
{
	if (exec)
		return prot & PROT_EXEC;
	if (write)
		return prot & PROT_WRITE;
	return prot & (PROT_READ | PROT_WRITE);
}

/* mprotect [a, a+len) to the protection of the flags of page (at fl), until
 * the flags are stable (see the race note above).  Returns 0 or a positive
 * errno. */
static int restore(uintptr_t a, size_t len, uintptr_t page, uint8_t *fl, uint8_t f)
{
	for (;;) {
		int r = wss_sys_mprotect((void *)a, len, f & WSS_PF_PROT);
		if (r)
			return -r;
		uint8_t g = wss_flags_load(page, fl);
		if (!(g & WSS_PF_TRACKED) || (g & WSS_PF_PROT) == (f & WSS_PF_PROT))
			return 0;
		f = g;
	}
}

#define UNIFORM(f) ((f) & (WSS_PF_TRACKED | WSS_PF_PROT))

static bool same_as(uintptr_t a, uint8_t want)
{
	uint8_t *fl = wss_shadow_flags(a);
	return fl && UNIFORM(wss_flags_load(a, fl)) == want;
}

/* Is the neighbouring page already open in this interval (so unprotecting
 * ours merges with its VMA instead of splitting)?  Under sampled tracking
 * a page outside the sample is never armed. */
static bool neighbour_open(uintptr_t a, uint8_t want, uint32_t epoch)
{
	if (!same_as(a, want))
		return false;
	if (wss_engine_sampled_out(a))
		return true;
	wss_page_t *p = wss_shadow_page(a);
	return p && (uint32_t)__atomic_load_n(&p->cur, __ATOMIC_RELAXED) == epoch;
}

/* restore() over several pages re-reads only the faulting page's flags: if
 * the application changed another page of the range meanwhile, give every
 * page its own protection again.  Returns 0 or an errno. */
static int restore_many(uintptr_t lo, uintptr_t hi, uintptr_t page, uint8_t *fl, uint8_t f)
{
	int r = restore(lo, hi - lo, page, fl, f);
	if (r)
		return r;
	for (uintptr_t a = lo; a < hi; a += WSS_PAGE_SIZE)
		if (!same_as(a, UNIFORM(f))) {
			mp_disarm(lo, hi);
			break;
		}
	return 0;
}

/* Under VMA pressure: open a larger uniform block around page.  Returns 0 or
 * an errno. */
static int open_coarse(uintptr_t page, uint8_t *fl, uint8_t f)
{
	uint8_t want = UNIFORM(f);
	uintptr_t bs = COARSE_BLOCK_PAGES * WSS_PAGE_SIZE;
	uintptr_t b = page & ~(bs - 1);
	bool uniform = true;
	for (uintptr_t a = b; a < b + bs && uniform; a += WSS_PAGE_SIZE)
		uniform = same_as(a, want);
	if (uniform && restore_many(b, b + bs, page, fl, f) == 0)
		return 0;
	/* A sparse range (a terabyte, its members alone armed): its entry is
	 * the run, found at once.  If the program changed part of it
	 * meanwhile, every page gets its own protection again, entry by
	 * entry. */
	uintptr_t ss, se;
	if (!(__atomic_load_n(fl, __ATOMIC_RELAXED) & WSS_PF_TRACKED) && wss_sparse_find(page, &ss, &se)) {
		int r = restore(ss, se - ss, page, fl, f);
		if (r)
			return r;
		uintptr_t s2, e2;
		uint8_t g = wss_sparse_find(page, &s2, &e2);
		if (s2 != ss || e2 != se || UNIFORM(g) != want)
			mp_disarm(ss, se);
		return 0;
	}
	/* The whole run of equally protected tracked pages: giving all of it
	 * back its protection merges VMAs, so it cannot need a new one. */
	uintptr_t lo = page, hi = page + WSS_PAGE_SIZE;
	while (lo >= WSS_PAGE_SIZE && same_as(lo - WSS_PAGE_SIZE, want))
		lo -= WSS_PAGE_SIZE;
	while (hi < WSS_ADDR_LIMIT && same_as(hi, want))
		hi += WSS_PAGE_SIZE;
	return restore_many(lo, hi, page, fl, f);
}

static bool mp_fault(uintptr_t addr, bool write, bool exec, const void *uc)
{
	uintptr_t page = addr & ~(WSS_PAGE_SIZE - 1);
	uint8_t *fl = wss_shadow_flags(page);
	if (!fl)
		return false;
	uint8_t f = wss_flags_load(page, fl);
	if (!(f & WSS_PF_TRACKED) || !access_allowed(f & WSS_PF_PROT, write, exec))
		return false;

	if (wss_engine_probe_page(page)) {
		if (restore(page, WSS_PAGE_SIZE, page, fl, f))
			return false;
		wss_engine_touched(page, fl, uc);
		return true;
	}
	/* Announced before anything is opened, so that a tick cannot miss a
	 * page opened here but recorded after its epoch move (fault.c). */
	uint32_t ticket = wss_engine_opening();
	uint8_t want = UNIFORM(f);
	uint32_t epoch = wss_engine_epoch();
	int open = neighbour_open(page - WSS_PAGE_SIZE, want, epoch) + neighbour_open(page + WSS_PAGE_SIZE, want, epoch);
	long delta = 2 - 2 * open;
	int r = ENOMEM;
	if (wss_engine_vma_charge(delta)) {
		r = restore(page, WSS_PAGE_SIZE, page, fl, f);
		if (r)
			wss_engine_vma_charge(-delta);
	}
	if (r == ENOMEM) {
		r = open_coarse(page, fl, f);
		if (r == 0)
			wss_engine_count_coarse();
	}
	if (r) {
		wss_engine_open_end(ticket);
		/* Refused (a seccomp filter installed behind the C library's
		 * back, a security module): the page stays closed and the
		 * access is the program's fault now, which is fatal unless it
		 * handles SIGSEGV.  Said once, before that. */
		static int said;
		if ((r == EPERM || r == EACCES) && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			wss_log("cannot give a page its protection back: mprotect: ", wss_errno_text(r),
				" (a seccomp filter wss did not see installed, or a security module): the access faults", NULL);
		return false; /* not mapped any more: not ours */
	}
	wss_engine_opened(page, fl, uc, ticket);
	return true;
}

const wss_backend_t wss_backend_mprotect = {
	.name = "mprotect",
	.sees = "reads and writes",
	.needs_pins = true,
	.probe = mp_probe,
	.attach = mp_attach,
	.arm = mp_arm,
	.disarm = mp_disarm,
	.fault = mp_fault,
};
