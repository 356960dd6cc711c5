/* The tracking backend interface.  A backend turns "a new interval starts"
 * into whatever makes the next touch of each tracked page observable, and
 * gives the application back its own protection when asked.  Adding a
 * backend is one file implementing this and one entry in wss_backends[] (engine/lifecycle.c).
 * All of a backend's functions but probe and fault run with the engine
 * lock held.  At the end, what the engine offers a backend's fault
 * handler. */
#ifndef WSS_ENGINE_BACKEND_H
#define WSS_ENGINE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wss_backend {
	const char *name;
	/* What a recorded touch is, for the header and the docs:
	 * "reads and writes" or "writes". */
	const char *sees;
	/* Can system calls fail with EFAULT on an armed page?  Then buffers
	 * handed to the kernel are pinned for the call (engine/pins.c). */
	bool needs_pins;
	/* Can it run on this kernel?  Returns 0, or an errno with the missing
	 * feature in why.  Leaves the backend ready to attach.  init. */
	int (*probe)(char *why, size_t whylen);
	/* [start, end) just became tracked: start observing it now, armed
	 * (every page's next touch observed) or not (sampled tracking arms
	 * and watches its members itself).  Returns 0 or an errno. */
	int (*attach)(uintptr_t start, uintptr_t end, bool arm);
	/* [start, end) just became tracked as a sparse range (engine/sparse.h):
	 * make it observable page by page with watch, observing nothing of it
	 * yet (no per-page work: it may be a terabyte).  Also after a failed
	 * harvest or in a forked child, where observe is for dense ranges.
	 * Returns 0 or an errno.  NULL when attach(start, end, false) does no
	 * per-page work. */
	int (*attach_sparse)(uintptr_t start, uintptr_t end);
	/* Observe the pages [start, end), first armed as members of the
	 * sample: for a harvest, write-protect them (once: a harvest protects
	 * them again).  Returns 0 or an errno.  NULL when arm is enough. */
	int (*watch)(uintptr_t start, uintptr_t end);
	/* Stop observing the pages [start, end), which left the sample, for a
	 * harvest: their writes cost nothing from now on (each would be a
	 * kernel write-protect fault).  Their write bits say nothing after
	 * this: watch them again before they are next harvested.  NULL with
	 * watch. */
	int (*unwatch)(uintptr_t start, uintptr_t end);
	/* Start a new interval on [start, end) (the tick).  Returns 0 or an
	 * errno; on error the range is unobserved until the next tick. */
	int (*arm)(uintptr_t start, uintptr_t end);
	/* Give [start, end) back the application's protection (for a pinned
	 * buffer, before a mremap, at the end); it stays observed where the
	 * backend observes without protecting (uffd-wp). */
	void (*disarm)(uintptr_t start, uintptr_t end);
	/* Stop observing [start, end) for good (after disarm).  NULL when
	 * disarm is enough. */
	void (*detach)(uintptr_t start, uintptr_t end);
	/* A fault at addr (write / instruction fetch as told by the CPU) in
	 * the interrupted context uc (a ucontext_t): returns true when it was
	 * ours and has been handled.  AS-safe.  NULL for a backend that takes
	 * no faults. */
	bool (*fault)(uintptr_t addr, bool write, bool exec, const void *uc);
	/* The tick, before arm: call written(s, e, arg) for each run of pages
	 * in [start, end) written since the last harvest, and start observing
	 * them again.  Returns 0 or an errno (the range was only partly
	 * harvested).  NULL for a backend that does not see writes apart. */
	int (*harvest)(uintptr_t start, uintptr_t end, void (*written)(uintptr_t s, uintptr_t e, void *arg),
		       void *arg);
	/* Observe [start, end) for harvest again without arming it (after a
	 * failed harvest, or in a forked child after reopen).  NULL when
	 * harvest is. */
	int (*observe)(uintptr_t start, uintptr_t end);
	/* In the child of fork, first thing: drop what belongs to the parent.
	 * Then, if the child is measured, reopen() makes the backend ready to
	 * attach again (the engine re-attaches every tracked range).  NULL when
	 * nothing is per-process.  Returns 0 or an errno with why. */
	void (*forked)(void);
	int (*reopen)(char *why, size_t whylen);
} wss_backend_t;

extern const wss_backend_t wss_backend_mprotect;
extern const wss_backend_t wss_backend_uffd_wp;
extern const wss_backend_t wss_backend_hybrid;

/* The uffd-wp backend's userfaultfd and pagemap descriptors (-1: none).
 * hook. */
void wss_uffd_fds(int *uffd, int *pagemap);
/* Close both (detaching from a process wss attach measured: closing the
 * context unregisters whatever is still registered and drops its write
 * protection). */
void wss_uffd_close(void);
/* Was the page at page written since its last harvest?  Protects it
 * again, atomically with the answer (one PAGEMAP_SCAN).  AS-safe. */
bool wss_uffd_take_written(uintptr_t page);
/* Attached to a running process (engine/attached.c): from now on the
 * harvest counts only pages that hold data (present or swapped), not the
 * holes the program's MADV_DONTNEED leaves.  init. */
void wss_uffd_present_only(void);

/* What the engine offers the backends, for their fault handlers
 * (defined in fault.c, writes.c and sampling.c): a backend includes this
 * header, not engine/internal.h. */
/* Record a first touch of page (whose flags byte is fl) in the current
 * interval, made in the context uc (for its site and call stack).
 * AS-safe, lock-free. */
void wss_engine_touched(uintptr_t page, uint8_t *fl, const void *uc);
/* Around a handler's opening of a tracked page: opening() announces it
 * to the tick before the page is opened and returns a ticket; opened()
 * records the first touch as wss_engine_touched does and ends the
 * announcement; open_end() ends it when nothing was opened (or, for a pin,
 * once it is in flight).  The tick waits for the announcements of the
 * interval it ends, so that every page a handler opened is in a touched
 * list the tick reads (fault.c).  AS-safe, lock-free. */
uint32_t wss_engine_opening(void);
void wss_engine_opened(uintptr_t page, uint8_t *fl, const void *uc, uint32_t ticket);
void wss_engine_open_end(uint32_t ticket);
/* For a backend with faults and a harvest, at a fault on page before it is
 * opened: inside the tick's write window, hand take (which returns whether
 * the page was written since the last harvest, and protects it again) the
 * write bits of a page last touched in the interval the tick ends, and
 * charge them to that interval (engine/writes.c).  AS-safe;
 * inside the window, waits for a harvest of one range at most. */
void wss_engine_split_write(uintptr_t page, bool (*take)(uintptr_t page));
/* Is it the engine's probe page (engine/policy.c), which the mprotect
 * handler opens with no VMA accounting?  AS-safe. */
bool wss_engine_probe_page(uintptr_t page);
/* Is the page outside the sample armed in this interval (so never armed,
 * open)?  False in exact tracking.  AS-safe. */
bool wss_engine_sampled_out(uintptr_t page);
/* The current interval number.  AS-safe. */
uint32_t wss_engine_epoch(void);
/* The budget of VMAs our protection splits may use (the mprotect
 * backend, code.c): charge delta more (or give -delta back); false, and
 * nothing charged, when delta would exceed it.  AS-safe. */
bool wss_engine_vma_charge(long delta);
/* A coarse open (a block opened whole, the budget spent): counted for the
 * sample, and the touched lists marked stale, before the handler ends its
 * announcement.  AS-safe. */
void wss_engine_count_coarse(void);

#endif
