/* Start-up entry points of the preload's modules, called in order by
 * init.c's constructor. */
#ifndef WSS_PRELOAD_PRELOAD_H
#define WSS_PRELOAD_PRELOAD_H

#include <stdbool.h>

/* Interposed functions and the public API; everything else is hidden
 * (-fvisibility=hidden, preload/exports.map). */
#define WSS_EXPORT __attribute__((visibility("default")))

/* The C library's function behind one of our wrappers: a file lists its
 * wrapped names in an X-macro, declares a pointer for each with
 * WSS_REAL_DECLARE, resolves them all at start-up with WSS_REAL_RESOLVE
 * (dlsym is not async-signal-safe, and a wrapper may first run in a signal
 * handler), and WSS_REAL resolves lazily for calls made before that. */
#define WSS_REAL_DECLARE(name) static __typeof__(name) *real_##name;
#define WSS_REAL_RESOLVE(name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);
#define WSS_REAL(name) \
	if (!real_##name) \
	WSS_REAL_RESOLVE(name)

/* Install the SIGSEGV handler, keeping the disposition the application (or
 * an earlier constructor) set as the one we chain to.  Returns 0 or an
 * errno.  init. */
int wss_signals_init(void);
/* Just before an exec: block SIGSEGV for real if the thread asked for it
 * to be blocked and nothing is armed any more; returns whether it did.
 * After a failed exec, wss_signals_exec_failed undoes it.  hook. */
bool wss_signals_exec_prepare(void);
void wss_signals_exec_failed(bool prepared);
/* Put our SIGSEGV handler back if something replaced it behind our back.
 * Called at every tick (engine thread or wss_tick). */
void wss_signals_check(void);
/* Create the tracked arenas and bind threads to them from now on; learn the
 * C library's text range.  Returns 0 or an errno.  init. */
int wss_heap_init(void);
/* Register the fork handlers (idempotent; also called on the first malloc so
 * that they are registered before jemalloc's).  hook. */
void wss_heap_atfork_once(void);
/* Resolve the C library's functions we wrap.  init. */
void wss_sync_init(void);
void wss_io_init(void);
void wss_syscalls_init(void);
void wss_exec_init(void);
void wss_paths_init(void);
/* Open the pages of a NUL-terminated string the kernel will read.  hook. */
void wss_open_str(const char *s);
/* Pin such a string for a call (its pages are not armed until unpinned),
 * or open its pages when the pin table is full.  Returns a handle for
 * wss_engine_unpin, negative when only opened.  hook. */
int wss_pin_str(const char *s);
/* The same for [p, p+n) (0 for a null or empty range).  hook. */
int wss_pin_or_open(const void *p, unsigned long n);
/* The program uses [p, p+n) as a stack: stop tracking it.  hook. */
void wss_exclude_stack(const void *p, unsigned long n);
/* Give the calling thread an alternate signal stack of ours if it has
 * none (stacks.c).  hook. */
void wss_altstack_ensure(void);
/* The same for the main thread, and the key that frees a thread's stack
 * when it exits.  init. */
void wss_altstack_init(void);
/* Track stacks (track.stacks): the main thread's, from the thread that
 * runs the constructor (the main one), and from now on each new thread's.
 * init. */
void wss_stacks_main(bool track);
/* The language runtime of the executable that needs its memory handled
 * apart ("Go"), or NULL (runtime.c).  init. */
const char *wss_runtime_detect(void);
/* pipe2 for libunwind inside a stack capture: the pipe's descriptors are
 * kept above the program's numbers and counted as wss's own (fds.c).
 * Returns 0 or -1 with errno.  AS-safe. */
int wss_fds_unwinder_pipe(int fd[2], int flags);
/* session.follow_exec = false: remove LD_PRELOAD's libwss.so and wss's
 * variables from the environment, in place, so that nothing the program
 * starts, by any route (exec*, posix_spawn, system, popen), is measured.
 * init. */
void wss_exec_unfollow(void);
/* The session leader's profile from WSS_LEADER (NULL: this process is the
 * leader), the variable taken out of environ.  init. */
const char *wss_exec_take_leader(void);
/* Which of the program's mappings are tracked: private anonymous ones
 * (track.anon_mmap), shared memory (track.shared), file mappings
 * (track.file_mmap).  init. */
void wss_mman_init(bool anon, bool shared, bool files);
/* End the profile, then the process with exit_group(status) (_exit,
 * _Exit, syscall(SYS_exit_group); init.c).  hook. */
__attribute__((noreturn)) void wss_preload_exit(int status);
/* Make the pages of [p, p+n) that the kernel is about to access readable and
 * writable for the call, counting them as touched.  hook. */
void wss_touch_range(const void *p, unsigned long n);

#endif
