/* The engine's boundary: what preload/ calls, from libwss.so's hooks and
 * from libwss-attach.so (preload/attach.c, which wss attach injects), and
 * the types they pass.  Nothing here knows which libc function was
 * interposed.  What the engine's files call in one another is in
 * engine/internal.h, and what they offer the tracking backends in
 * engine/backend.h.  Contexts: init (start-up only), hook (from an
 * interposed function, any thread), AS-safe (from the fault handler). */
#ifndef WSS_ENGINE_ENGINE_H
#define WSS_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a tracked range is (wss_kind_t): for the registry, the breakdown
 * of each sample by kind and the hot-page list. */
#include "common/kinds.h"

/* The status of a process the library stops before main (an explicit
 * backend this kernel cannot run, an unwritable profile): wss run's own
 * failures' status too (cli/cmd/wss.c), as env(1) and timeout(1) use it. */
#define WSS_EXIT_OWN 125

typedef enum { WSS_ENGINE_WALL = 0, WSS_ENGINE_CPU, WSS_ENGINE_MANUAL } wss_engine_time_t;

/* track.mode: exact first touches of every page; a sample of the pages at
 * a rate the overhead budget (or track.sample_rate) sets; or exact while
 * exactness fits the budget (docs/config.md). */
typedef enum { WSS_TRACK_AUTO = 0, WSS_TRACK_EXACT, WSS_TRACK_SAMPLED } wss_track_mode_t;

/* Test-only knobs (WSS_TEST_* in the environment; docs/config.md says they
 * are not for users).  Zero: off. */
typedef struct wss_engine_test {
	uint64_t harvest_delay_ns; /* sleep between the tick's arming and its harvest */
	bool uffd_unsupported;     /* probe userfaultfd as missing */
	long vma_budget;           /* VMAs our protection splits may use */
	uint64_t sampling_seed;    /* the membership seed, instead of a random one */
	uint32_t first_level;      /* a fixed rate's first intervals at 1/2^first_level ... */
	uint32_t first_intervals;  /* ... this many of them */
	int all_writes;            /* sampled intervals count all writes (sampling.c): 1 always, -1 never, 2 every other one */
	bool census_off;           /* no page counts in the totals by its presence (census.c) */
	int count;                 /* the tick's count: 0 by the touched list where it may, 1 the walk, 2 both, compared (tick.c) */
} wss_engine_test_t;

/* What the engine needs of the session's configuration: the preload fills
 * it from the config (preload/init.c), so the engine never sees TOML. */
typedef struct wss_engine_settings {
	const char *backend;          /* "auto", or a backend's name (lifecycle.c's table) */
	wss_engine_time_t time_base;
	uint64_t interval_ns;
	uint32_t window_intervals;
	const char *output;           /* the profile path pattern ("%p", "%t", "%n") */
	bool follow_fork, follow_exec;
	bool peaks;                   /* peaks.enabled */
	uint32_t peaks_sensitivity_milli, peaks_max, peaks_stack_depth;
	uint32_t hot_pages;           /* report.hot_pages */
	bool alloc_sites;             /* track.alloc_sites */
	uint32_t idle_after;          /* report.idle_after, in intervals */
	bool summary;                 /* report.summary: the stderr lines */
	wss_track_mode_t mode;        /* track.mode */
	uint32_t sample_level;        /* track.sample_rate as 1/2^level; 0: set by the budget */
	uint32_t overhead_ppm;        /* session.overhead: how much slower the program may run, in millionths */
	uint32_t precision_ppm;       /* session.precision: auto's target half-width on each interval's data estimate */
	bool trace;                   /* session.trace: a page trace beside the profile */
	bool code;                    /* track.code: the code working set */
	uint64_t trace_max;           /* session.trace_max, bytes */
	/* The header's members that describe the configuration, as JSON
	 * members each starting with ',': the timing (time base, interval,
	 * window) written before the engine's own, then the rest (what is
	 * tracked, the config file, every key and its source). */
	const char *header_timing, *header_config;
	wss_engine_test_t test;
} wss_engine_settings_t;

typedef struct wss_engine_start {
	int argc;
	char **argv;
	const wss_engine_settings_t *set;
	/* A runtime whose memory only a signal-free backend may track
	 * ("go", from preload/runtime.c), or NULL: auto then prefers uffd-wp,
	 * and the preload leaves that memory out under the others. */
	const char *runtime;
	/* The session leader's profile (WSS_LEADER, "" when it writes none)
	 * in a process exec'd within a session; NULL in the leader itself. */
	const char *leader;
	/* WSS_RUN_PID: the pid of the `wss run` that started the session (0:
	 * none).  Its direct child, the leader, leaves a session of several
	 * profiles to its table. */
	int run_pid;
	/* Attached to a running process (wss attach): the header's reason for
	 * the backend, which the caller has set to uffd-wp; NULL otherwise. */
	const char *attach_reason;
} wss_engine_start_t;

/* What an attached engine tracks of the process's mappings
 * (engine/attached.c): the session's track.* keys. */
typedef struct wss_attach_track {
	bool heap, anon_mmap, data_segments, library_data, shared, file_mmap, stacks;
} wss_attach_track_t;
/* Attached (preload/attach.c): follow /proc/self/maps, watch the wss
 * attach process and end if it goes (fifo: a FIFO only wss attach holds
 * open for writing; else controller, its pid).  After wss_engine_init,
 * before the first scan.  init. */
void wss_engine_attach_begin(const wss_attach_track_t *w, const char *fifo, int controller);
/* Attached with a duration: the engine ends the measurement itself after
 * duration_ns from its start (wss attach unloads it later).  init. */
void wss_engine_attach_duration(uint64_t duration_ns);
/* Bring the registry up to date with /proc/self/maps now (the tick does
 * it first thing, through wss_engine_attach_tick as its on_tick).  Returns
 * 0 or an errno.  hook. */
int wss_engine_attach_scan(void);
void wss_engine_attach_tick(void);
/* End an attached measurement (why: the summary's attach_end): the final
 * sample and summary, every range unregistered, every descriptor closed;
 * called on another thread than the engine's, also the engine thread
 * joined and all the tool's memory given back.  Runs once.  hook. */
void wss_engine_detach(const char *why);
/* End measuring before the process ends, while every system call still
 * works: the final sample, the summary, every page's protection given
 * back, and a stderr line that says why; the program runs on untracked. */
void wss_engine_end(const char *why);
/* A seccomp filter (strict: seccomp's strict mode) is about to be
 * installed: when it would refuse a call wss makes, measuring ends first
 * (wss_engine_end), and true is returned.  engine/sandbox.c. */
struct sock_fprog;
bool wss_engine_seccomp(const struct sock_fprog *prog, bool strict);
/* The engine thread's tid, waiting up to a second for it to start; 0 when
 * it does not run.  init. */
int wss_engine_thread_tid(void);
/* Allocation sites (engine/allocs.c): the program allocated n bytes at p
 * (malloc and friends), mapped them (its own mmap), freed p, or unmapped
 * [p, p + n) (all or part of mappings of its own).  Cheap unless sampled.
 * hook, never from a signal handler of ours. */
void wss_engine_alloc(const void *p, size_t n);
void wss_engine_alloc_mapped(const void *p, size_t n);
void wss_engine_free(const void *p);
void wss_engine_free_range(const void *p, size_t n);
/* The profile's path ("" when none is written).  hook. */
const char *wss_engine_profile_path(void);

/* "WSS_LEADER=<the leader's profile>", for the environment of a program
 * this process execs within the session, or NULL.  hook. */
const char *wss_engine_session_env(void);

/* What of the runtime's memory is left out and why (for the preload to
 * say), or NULL when the backend tracks it.  Valid after
 * wss_engine_init. */
const char *wss_engine_runtime_untracked(void);
/* Set up the engine, open the profile and write its header; does not start
 * the clock.  Returns 0, or an errno with a one-line message in err.  init. */
int wss_engine_init(const wss_engine_start_t *s, char *err, size_t errlen);
/* Start the interval clock (the engine thread, unless time_base is manual).
 * Returns 0 or an errno.  init. */
int wss_engine_start(void);
/* Take the final sample, write the summary, print it to stderr, and give all
 * tracked memory back its own protection.  Runs once; later calls do nothing.
 * hook. */
void wss_engine_finish(void);
/* The same at _exit, _Exit and a raw exit_group: the process ends right
 * after, with no destructor.  Callable from a signal handler: a handler
 * that interrupted the engine lock's holder on this thread writes a summary
 * without the final sample instead of waiting for ever, and the lock held
 * by another thread is waited for 2 s at most.  Nothing in a vfork child or
 * a fork child that is not measured (its pid is not ours).  hook. */
void wss_engine_exit(void);
/* Is the calling thread the program's last one (the engine thread aside;
 * a zombie main thread counts as gone)?  For a raw exit of one thread.
 * hook. */
bool wss_engine_last_thread(void);
/* True while measuring (after init, before finish, not in a forked child). */
bool wss_engine_active(void);
/* The engine's own descriptors (profile, stderr copy, /proc/self/stat,
 * the backend's, the trace), ascending, into out; returns how many (at
 * most 6).  The preload keeps the program from closing them
 * (preload/fds.c).  hook. */
int wss_engine_own_fds(int out[8]);
/* True once the registry is kept (from init on, also after finish and in a
 * forked child): mapping hooks must report changes while this holds. */
bool wss_engine_tracking(void);

/* A function the tick calls first (the preload checks its signal handler
 * there).  init. */
void wss_engine_on_tick(void (*fn)(void));

/* Track the main executable's .data and .bss (track.data_segments).
 * init. */
void wss_engine_data_segments(void);
/* Stacks (engine/stacks.c): a thread's stack the C library made, tracked
 * from its start to its end (memory the program gave it stays what it
 * was), and the main thread's, found from a stack pointer of its at start
 * and followed as it grows.  Nothing under a backend without a harvest.
 * hook; wss_engine_main_stack: init. */
void wss_engine_track_stack(void *lo, size_t len);
void wss_engine_untrack_stack(void *lo, size_t len);
void wss_engine_main_stack(const void *sp);
/* Whether a thread starting with this routine is wss's own (the engine
 * thread, which the preload's pthread_create starts too): its stack is
 * no memory of the program's.  AS-safe. */
bool wss_engine_own_thread(void *(*start)(void *));
/* Read the dynamic loader's list now and inside every tick from here on:
 * "module" records for every object loaded when sites or hot pages are
 * recorded, the unwind table stack captures use, and with library_data
 * (track.library_data) shared libraries' data segments, following dlopen
 * and dlclose (engine/loader.c).  init. */
void wss_engine_loader_init(bool library_data);
/* Around the program's dlclose: libraries loaded after start-up leave
 * tracking for the call (any of them may be unmapped by it), and come back
 * at the second tick that sees them after it.  hook. */
void wss_engine_dlclose_begin(void);
void wss_engine_dlclose_end(void);

/* End the current interval now (time_base manual).  hook. */
void wss_engine_tick_manual(void);

/* Mapping changes as one call each (engine/mapping.c): the system call
 * and the registry update under the engine lock, so that no tick sees one
 * without the other, and an ENOMEM our protection splits may have caused
 * relieved and the call retried once.  kind: WSS_KIND_NONE to leave new
 * memory untracked.  Each returns the system call's raw result (an address
 * or -errno; 0 or -errno).  hook. */
void *wss_engine_mmap(void *addr, size_t len, int prot, int flags, int fd, long off, int kind);
long wss_engine_munmap(void *addr, size_t len);
long wss_engine_mprotect(void *addr, size_t len, int prot);
void *wss_engine_mremap(void *old, size_t oldlen, size_t newlen, int flags, void *want);
/* System V shared memory: shmat's attachment tracked as shared memory
 * (its size from IPC_STAT), shmdt's untracked. */
void *wss_engine_shmat(int id, const void *addr, int flg);
long wss_engine_shmdt(const void *addr);
/* Memory someone else mapped (the allocator): track it, or record the
 * protection it now has.  hook. */
void wss_engine_track(void *addr, size_t len, int prot, int kind);
void wss_engine_protect(void *addr, size_t len, int prot);
/* Run unmap(arg), a call that may unmap [addr, len) (an allocator's), under
 * the engine lock; if it returns true the range is gone and leaves the
 * registry in the same step (once unmapped it may be reused by anyone).
 * Returns unmap's answer.  hook. */
bool wss_engine_unmapping(void *addr, size_t len, bool (*unmap)(void *arg), void *arg);
/* Stop tracking [p, p + len) for good, giving it its protection back: the
 * program uses it as a stack (signal stack, coroutine stack), where the
 * kernel writes signal frames and cannot meet an armed page.  Cheap for a
 * range that is not tracked (no lock then).  hook. */
void wss_engine_exclude(const void *p, size_t len);

/* madvise(adv) on [start, len) for the allocator, as a raw system call.
 * MADV_DONTNEED on tracked pages under a backend that harvests writes:
 * their write bits are harvested first (a page written in this interval
 * stays written) and protected again after, since the kernel reports a
 * zapped page as written.  Returns the system call's result (0 or
 * -errno).  hook (takes the engine lock). */
long wss_engine_discard(uintptr_t start, size_t len, int adv);
/* The program is about to make pages present without touching them
 * (mlock): the totals count no more pages by their presence (census.c).
 * hook (takes the engine lock when it has something to do). */
void wss_engine_populating(const char *why);
/* The program is about to shorten a file or punch a hole in it (truncate,
 * ftruncate, fallocate): a file's pages may leave its mappings unseen, and
 * the census bounds them by the mappings' sizes from now on.  AS-safe. */
void wss_engine_file_changed(void);

/* Is the page at addr tracked?  Then *prot (if not NULL) is the
 * application's protection of it.  AS-safe, lock-free. */
bool wss_engine_tracked_page(uintptr_t addr, int *prot);
/* Is the calling thread inside our stack unwinder (a site's capture)?  Its
 * calls (sigprocmask around libunwind's caches, mmap for its memory pool,
 * a pipe to check addresses) reach the preload's wrappers, which must then
 * do nothing but the call.  AS-safe (engine/sites.c). */
bool wss_engine_unwinding(void);
/* Inside a capture from our own context, with the asynchronous signals
 * blocked for its whole walk: the mask in force in *mask (the unwinder's
 * mask changes need no system call then).  AS-safe. */
bool wss_engine_unwind_masked(uint64_t *mask);
/* The engine thread stops being held to the CPU of a single-threaded
 * program (engine/clock.c): called before a thread of the program takes a
 * realtime policy (realtime: the engine, held behind it, would not run
 * again), and before the program starts a thread.  hook; one atomic load
 * when not held. */
void wss_engine_cpu_release(bool realtime);
/* The fault handler's entry, with the interrupted context uc (a
 * ucontext_t): true when the fault was ours and is handled.  AS-safe,
 * lock-free. */
bool wss_engine_fault(uintptr_t addr, bool write, bool exec, const void *uc);

/* Pin [buf, buf+len) for a system call that will access it: its tracked
 * pages are opened, recorded as touched, and not armed again until unpinned
 * (each tick counts them as touched meanwhile).  Returns a handle for
 * wss_engine_unpin, 0 when nothing there is tracked, or -1 when the pin
 * table is full.  AS-safe, lock-free (waits only for an arming in progress). */
int wss_engine_pin(const void *buf, size_t len);
void wss_engine_unpin(int pin);

/* After fork in the child: stop measuring cleanly (no profile writes, all
 * memory back to its own protection).  hook. */
void wss_engine_fork_prepare(void);
void wss_engine_fork_parent(void);
void wss_engine_fork_child(void);
/* The outer fork handlers, registered after jemalloc's (prepare handlers
 * run in reverse order of registration, child handlers in order): prepare
 * takes the tick lock, so that no fork happens inside a tick that holds the
 * loader's list lock (the lock order: engine/internal.h); the child's
 * frees it and starts the engine thread of a followed child once malloc
 * works again.  hook. */
void wss_engine_fork_outer_prepare(void);
void wss_engine_fork_outer_parent(void);
void wss_engine_fork_outer_child(void);
/* The process is about to exec: end its profile (no stderr summary).  If
 * the exec fails, the process goes on unmeasured.  hook. */
void wss_engine_exec(void);

#endif
