/* The shadow table: per-page state and flags for every tracked page, found
 * from an address in O(1) without locks.  Two levels: a directory with one
 * entry per GiB of the 47-bit user address space, and leaves allocated on
 * first registration and never freed, so a fault handler that loaded a leaf
 * pointer can always use it. */
#ifndef WSS_ENGINE_SHADOW_H
#define WSS_ENGINE_SHADOW_H

#include <stdbool.h>
#include <stdint.h>

#include "common/sys.h"
#include "engine/engine.h"
#include "engine/pagestate.h"

#define WSS_LEAF_SHIFT 30
#define WSS_LEAF_PAGES (1UL << (WSS_LEAF_SHIFT - WSS_PAGE_SHIFT))
#define WSS_ADDR_LIMIT (1UL << 47)

/* Page flags (one byte per page). */
#define WSS_PF_PROT 0x07    /* the application's PROT_READ|WRITE|EXEC */
#define WSS_PF_TRACKED 0x08 /* ours to arm */
#define WSS_PF_EVER 0x10    /* touched at least once in this run */
/* Its touches are its writes alone, seen by write-protection and never by
 * a fault: a stack (registry.c).  The kernel resolves a write to a
 * write-protected page itself (userfaultfd's asynchronous mode), so a
 * signal frame the kernel pushes, or a system call's output, never fails
 * there as it would on a PROT_NONE page. */
#define WSS_PF_WPONLY 0x20
/* A page of a file's mapping or of shared memory: reading it may raise
 * SIGBUS (past the file's end), where the kernel would fail a system call
 * with EFAULT (census.c, wss_census_touch).  Otherwise a page's kind is its
 * range's, in the registry (regions.h): nothing on the fault path needs
 * it. */
#define WSS_PF_FILE 0x40
#define WSS_PF_WEVER 0x80   /* written at least once in this run (write-tracking backends) */


/* Allocate the directory.  Returns 0 or ENOMEM.  init. */
int wss_shadow_init(void);
/* Make sure leaves exist for [start, end).  Returns 0 or ENOMEM.  Called
 * with the engine lock held. */
int wss_shadow_ensure(uintptr_t start, uintptr_t end);
/* The same for a sparse range (engine/sparse.h): the leaves its members'
 * state is written into, a few bytes apart from one member to the next,
 * so without transparent huge pages.  Returns 0 or ENOMEM.  Engine lock. */
int wss_shadow_ensure_sparse(uintptr_t start, uintptr_t end);
/* The state and flags of the page holding addr, or NULL when no leaf covers
 * it.  AS-safe. */
wss_page_t *wss_shadow_page(uintptr_t addr);
uint8_t *wss_shadow_flags(uintptr_t addr);
/* The two latest intervals in which the page was seen written (see
 * wss_written_set in pagestate.h; 0: never), kept by backends that see
 * writes.  Written by the tick, and by the fault path only inside the
 * tick's write window under its lock (engine/writes.c); read by the tick, so
 * plain loads and stores.  NULL when no leaf covers addr. */
uint64_t *wss_shadow_written(uintptr_t addr);
/* The interval whose write window a fault of the page last opened in (the
 * page's write bits before that fault were charged to the interval
 * before); same rules as written.  NULL when no leaf covers addr. */
uint32_t *wss_shadow_wsplit(uintptr_t addr);
/* 1 once the page was in a sample's read set (touched in the window and
 * not written there), for the read total; tick only.  NULL when no leaf
 * covers addr. */
uint8_t *wss_shadow_rever(uintptr_t addr);
/* Hot-page bookkeeping: the number of intervals the page was touched in
 * (tick only), and 1 + the site that first touched it (0: unknown; set
 * once by the fault path, plain store).  NULL when no leaf covers addr. */
uint32_t *wss_shadow_hits(uintptr_t addr);
uint32_t *wss_shadow_site(uintptr_t addr);
/* The sampled samples the page counted in, [0], and counted in as
 * written, [1], each weighted by its rate (2^level: a Horvitz-Thompson
 * weight): for the summary's average (tick.c, wss_tick_avg); tick and
 * registry only, under the engine lock.  NULL when no leaf covers addr. */
double *wss_shadow_counts(uintptr_t addr);

#endif
