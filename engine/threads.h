/* Thread slots: a small integer per application thread, assigned on its
 * first recorded touch, that names the toucher in the per-page state.  The
 * table is preallocated so that the fault handler assigns a slot with one
 * atomic add and no allocation.  Slots are not reused in this version; past
 * WSS_MAX_SLOTS threads, the rest share the last slot (reported as tid 0). */
#ifndef WSS_ENGINE_THREADS_H
#define WSS_ENGINE_THREADS_H

#include <stdint.h>

#define WSS_MAX_SLOTS 65536U

typedef struct wss_thread {
	int tid;            /* 0 for the shared overflow slot */
	/* First-touch faults recorded in interval e, at [e & 1] (atomic).  The
	 * tick for k reads and clears [k & 1] once every handler of k is done
	 * and before any of k + 2 can start, so a sample's faults are cut at
	 * the same instant as its pages. */
	uint64_t faults[2];
	uint64_t new_pages; /* pages this thread touched first in the run (atomic) */
	uint64_t faults_k;  /* engine-private: faults of the interval being sampled */
	uint32_t window_pages; /* engine-private scratch for the scan */
	uint32_t window_writes; /* of those, written in the window */
	uint32_t window_code;   /* code pages in the window (code.c) */
} __attribute__((aligned(64))) wss_thread_t;

/* Allocate the table.  Returns 0 or ENOMEM.  init. */
int wss_threads_init(void);
/* The calling thread's slot, assigning one on first use.  AS-safe. */
uint32_t wss_threads_self(void);
/* Slots in use are 1..wss_threads_count().  Slot 0 is never assigned to a
 * thread: it holds the touches of a backend that cannot tell the thread
 * (uffd-wp), reported as tid 0. */
uint32_t wss_threads_count(void);
wss_thread_t *wss_threads_get(uint32_t slot);
/* Empty the table; the calling thread gets a new slot on its next touch
 * (in the child of fork, the only thread).  hook. */
void wss_threads_reset(void);

#endif
