/* First-touch sites and their call stacks (sites.c).  Contexts as in
 * engine.h: AS-safe (fault path), tick (engine lock held). */
#ifndef WSS_ENGINE_SITES_H
#define WSS_ENGINE_SITES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#define WSS_SITES_DEPTH_MAX 128

typedef struct wss_site_count {
	uint64_t pc;    /* the faulting instruction */
	uint32_t stack; /* its stack id, 0 if not captured */
	uint64_t pages; /* pages it touched first in the interval (or the run) */
} wss_site_count_t;

/* Allocate the frame store; stacks keep at most depth frames.  Returns 0
 * or ENOMEM.  init. */
int wss_sites_init(unsigned depth);
/* Count a first touch in interval epoch by the instruction at pc.  Returns
 * the site's index, -1 when the site table is full (counted as other);
 * *fresh is true for the call that added the site (it should capture the
 * stack).  AS-safe, lock-free. */
int wss_sites_touch(uint64_t pc, uint32_t epoch, bool *fresh);
/* Non-zero while this thread unwinds a stack (wss_sites_capture): the
 * unwinder's own calls (sigprocmask around its caches, mmap for its memory
 * pool, any malloc) reach our wrappers, which must then do nothing but the
 * call: no mask bookkeeping, no tracking.  AS-safe to read. */
extern __thread int wss_sites_unwinding __attribute__((tls_model("initial-exec")));
/* Capture the call stack of the interrupted context uc (a ucontext_t) for
 * site, once (or leave it for the site's next fault).  AS-safe, no
 * allocation, takes no lock a program thread may hold (not the loader's:
 * see sites.c); never inside the in-flight section. */
void wss_sites_capture(int site, const void *uc);
/* The call stack of the current context, wss's own frames left out, for
 * an allocation site (allocs.c): its stack id, 0 when none could be taken
 * (every capture stack in use, a forked child, a nested call).  Not from a
 * signal handler.  hook. */
uint32_t wss_sites_capture_here(void);
/* The at most max sites of interval k with the most pages, largest first,
 * and the pages of all the others in *rest; clears interval k's counts.
 * Returns how many.  tick. */
int wss_sites_top(uint32_t k, wss_site_count_t *top, int max, uint64_t *rest);
/* The whole run's sites (intervals summed by wss_sites_top) into out, at
 * most max, most pages first; the pages of the others in *rest.  Returns
 * how many.  tick. */
#define WSS_SITES_MAX 4096
int wss_sites_run(wss_site_count_t *out, int max, uint64_t *rest);
/* Call fn for each captured stack not yet written to the profile, and mark
 * it written.  Returns how many.  tick. */
int wss_sites_stacks_unwritten(void (*fn)(uint32_t id, const uint64_t *frames, uint32_t n, void *arg), void *arg);
/* The stack id of a site (0: none yet).  tick. */
uint32_t wss_sites_stack_of(int site);
/* In a forked child: clear the counts, write every stack again, and
 * capture no new stack (see sites.c).  hook. */
void wss_sites_fork_child(void);
/* In a forked child at once (its fork handler): no capture from here on.
 * A parent thread inside the unwinder at the fork left its mutex held,
 * and a followed child's program threads allocate, and capture
 * (allocs.c), before wss_sites_fork_child runs an interval later. */
void wss_sites_fork_no_capture(void);

#endif
