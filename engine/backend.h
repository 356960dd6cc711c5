/* The tracking backend interface.  A backend turns "a new interval starts"
 * into whatever makes the next touch of each tracked page observable, and
 * gives the application back its own protection when asked.  Adding a
 * backend is one file implementing this and one entry in engine.c's table.
 * All functions but probe run with the engine lock held. */
#ifndef WSS_ENGINE_BACKEND_H
#define WSS_ENGINE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wss_backend {
	const char *name;
	/* Can it run on this kernel?  Returns 0, or an errno with the missing
	 * feature in why.  init. */
	int (*probe)(char *why, size_t whylen);
	/* [start, end) just became tracked: start observing it now. */
	int (*attach)(uintptr_t start, uintptr_t end);
	/* Start a new interval on [start, end) (the tick).  Returns 0 or an
	 * errno; on error the range is unobserved until the next tick. */
	int (*arm)(uintptr_t start, uintptr_t end);
	/* Give [start, end) back the application's protection. */
	void (*disarm)(uintptr_t start, uintptr_t end);
	/* A fault at addr (write / instruction fetch as told by the CPU):
	 * returns true when it was ours and has been handled.  AS-safe. */
	bool (*fault)(uintptr_t addr, bool write, bool exec);
} wss_backend_t;

extern const wss_backend_t wss_backend_mprotect;

#endif
