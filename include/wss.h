/* wss — the public API for programs that want to talk to the profiler.
 *
 * wss_tick(): end the current interval now.  It only does something when
 * the program runs under libwss.so with time_base = "manual"; without the
 * preload it is a no-op, so a program that calls it runs unchanged either
 * way (it is declared weak and called only when present).
 *
 * Thread and signal safety: wss_tick() may be called from any thread, not
 * from a signal handler. */
#ifndef WSS_H
#define WSS_H

#ifdef __cplusplus
extern "C" {
#endif

void wss_tick(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* Calls through the weak symbol only when libwss.so provides it. */
#define wss_tick() (wss_tick ? wss_tick() : (void)0)

#endif
