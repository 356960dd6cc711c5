/* The engine's internal header: its shared state and the functions its
 * files call in one another, grouped under the file that defines them
 * (docs/architecture.md says which thread and context runs each).  Only
 * the engine files include it; preload/ sees engine.h alone.  Each engine file
 * owns one job and the fields of E marked with its name: only that file
 * writes them (the fork child aside, which rebuilds the whole state). */
#ifndef WSS_ENGINE_INTERNAL_H
#define WSS_ENGINE_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/estimate.h"
#include "common/fmt.h"
#include "common/sample.h"
#include "common/sys.h"
#include "common/tracefmt.h"
#include "engine/backend.h"
#include "engine/engine.h"
#include "common/profile.h"
#include "engine/regions.h"
#include "engine/shadow.h"
#include "engine/sparse.h"
#include "engine/threads.h"

struct dl_phdr_info;

/* Pages counted for the run's totals by their last touch (tick.c,
 * wss_tick_last_touch): n[s][m] of series s (0 data, 1 write) at a rate of
 * 1 in 2^m, kind[k][m] the data's of kind k. */
typedef struct wss_last_counts {
	uint64_t n[2][WSS_SAMPLE_LEVEL_MAX + 1];
	uint64_t kind[WSS_KIND_N][WSS_SAMPLE_LEVEL_MAX + 1];
} wss_last_counts_t;

typedef struct wss_engine {
	/* lock.c */
	int lock;                 /* 0 free, 1 locked, 2 locked with waiters */
	/* lifecycle.c */
	bool tracking;            /* registry and flags maintained (init on) */
	bool measuring;           /* atomic: arming, recording, sampling */
	bool finished;
	bool leader;              /* the session's first process: the one that prints the summary */
	bool run_table;           /* wss run waits for it, and prints the table of a session of several */
	bool peaks;               /* peak detection (peaks.enabled) */
	bool sites;               /* first-touch sites and stacks: peaks, and a backend with faults */
	const wss_backend_t *backend;
	int pid;
	long max_map;
	int argc;                 /* the program's arguments, for headers */
	char **argv;
	const char *runtime;      /* wss_engine_start_t.runtime */
	const char *runtime_untracked;
	/* registry.c */
	wss_regions_t regions;
	uint64_t huge_n, huge_bytes; /* mappings left out for their size */
	/* fault.c (the tick moves the epoch) */
	uint32_t epoch;           /* atomic */
	uint32_t inflight[2];     /* atomic */
	long vma_delta;           /* atomic: estimated VMAs our unprotects added */
	long vma_budget;
	uint64_t coarse;          /* atomic: coarse unprotects since the last sample */
	uint32_t opening[2];      /* atomic: opens announced and not yet in flight, by the parity of the epoch read */
	uintptr_t *touched[2];    /* the pages first touched in each interval, by parity (NULL: not yet) */
	uint32_t ntouched[2];     /* atomic: appends to each (past touched_cap: it overflowed) */
	uint32_t touched_cap;
	bool touched_stale;       /* atomic: a page may be open and in no list: the next tick walks every member */
	/* writes.c */
	uint32_t wwin;            /* atomic: k + 1 while the tick's write window is open, else 0 */
	uint32_t wwin_alone;      /* atomic: ... k's armed level when k counted all writes (its other pages were alone), else 0 */
	int wlock;                /* the write window's lock: 0 free, else the holder's tid */
	/* fault.c */
	int changing;             /* futex word: the changer's tid while a change of sample opens or unwatches (wss_change_begin) */
	int changing_pid;         /* the process that set it */
	int harvester;            /* the tid of the thread running the tick or discard (engine lock) */
	/* tick.c */
	uint64_t t0_ns, cpu0_ns, start_unix_ns;
	uint64_t nsamples, sum_pages, peak_pages, faults_total, coarse_total;
	uint64_t sum_write, peak_write, total_write; /* backends that see writes */
	uint64_t sum_read, peak_read, total_read;
	uint64_t sum_code, peak_code;  /* track.code: the code series (code.c) */
	bool code_lower_bound;         /* a sample's code range was opened whole */
	/* clock.c */
	pthread_t thread;
	bool started;             /* the engine thread runs */
	int stop;                 /* futex word: 1 asks the engine thread to stop */
	uint64_t app_mask;        /* the signal mask of the thread that started the engine */
	uint64_t next_alone_ns;   /* engine thread: when to look for the last thread again */
	/* fork.c */
	bool pending;             /* atomic: a forked child before its start (wss_engine_fork_child) */
	/* output.c */
	int fd;                   /* the profile */
	uint64_t fd_dev, fd_ino;  /* its identity, checked before each write */
	int err_fd;               /* a private copy of stderr, for the summary */
	uint64_t err_dev, err_ino;
	wss_fmt_t out;            /* records not yet written */
	bool open_pending;        /* a forked child: create the profile on the first write */
	bool out_discard;         /* records are counted, never written (wss_out_discard) */
	bool no_profile;          /* the output is a character device (/dev/null): nothing written */
	const char *no_profile_why; /* or another reason, "(...)", for the stderr line */
	uint64_t written;         /* bytes of whole records in the profile */
	uint32_t samples_out;     /* the last sample record in the profile */
	int cut_err;              /* the profile could not be written: why (an errno) */
	uint32_t cut_at;          /* ... and the first sample it lacks */
	bool removed;             /* the profile had lost its name when closed */
	/* trace.c: the page trace (docs/trace-format.md) */
	int trace_fd;             /* -1: none open */
	uint64_t trace_dev, trace_ino;
	bool trace_removed;       /* the trace had lost its name when closed */
	uint64_t trace_written;   /* bytes of whole records (and the file header) */
	uint32_t trace_records;   /* interval records written */
	uint32_t trace_last;      /* the seq of the last one */
	uint64_t trace_pages;     /* pages listed in them */
	int trace_stop;           /* 0: tracing (or not started); WSS_TRACE_END_* (common/tracefmt.h) */
	int trace_err;            /* WSS_TRACE_END_ERROR: the errno */
	uint8_t *trace_buf;       /* a record being built (wss_sys_alloc) */
	size_t trace_cap, trace_len;
	uint8_t *trace_ev;        /* the interval's events so far, encoded (wss_sys_alloc) */
	size_t trace_ev_cap, trace_ev_len;
	uint32_t trace_nev;
	bool trace_ev_oom;
	/* findings.c */
	uint32_t npeaks;          /* peak records written */
	/* tick.c: the run's estimates (0 data, 1 write, 2 read) */
	uint64_t sum_lo[3], sum_hi[3];
	wss_estimate_t peak_est[3];
	uint64_t peak_lo[3], peak_hi[3]; /* the greatest lower and upper bounds of any sample: the peak's interval */
	/* The summary's average (wss_tick_avg): the exact samples' counts, and
	 * the per-page counts (wss_shadow_counts) of pages that left tracking,
	 * by the page's top member level, and their squares (series 0 data,
	 * 1 write, 2 read). */
	uint64_t exact_sum[3];
	double gone_sum[3][WSS_SAMPLE_LEVEL_MAX + 1], gone_sq[3][WSS_SAMPLE_LEVEL_MAX + 1];
	uint64_t tracked_max;     /* the most pages tracked at a tick */
	uint64_t total_hist[3][WSS_SAMPLE_LEVEL_MAX + 1]; /* pages counted in a sampled window and in no exact one, by top member level */
	uint64_t total_exact[3][WSS_SAMPLE_LEVEL_MAX + 1]; /* pages counted in an exact window, by top member level */
	wss_last_counts_t last_gone; /* the pages that left tracking, by their last touch (wss_tick_last_touch) */
	/* The data series by kind (wss_kind_t): the samples' estimates and
	 * bounds summed, the peak's, and the totals' counts as above. */
	struct {
		uint64_t sum, sum_lo, sum_hi, peak, peak_lo, peak_hi;
		uint64_t total_exact, total_hist[WSS_SAMPLE_LEVEL_MAX + 1];
	} kind[WSS_KIND_N];
	uint32_t kinds_seen;      /* bit k: some sample had pages of kind k tracked */
	uint32_t released;        /* atomic: untracks so far (registry.c), for a fault that raced one (fault.c) */
	uintptr_t main_stack_lo;  /* stacks.c: the main stack's lowest page tracked (0: not tracked) */
	uint32_t main_stack_owner; /* the main thread's slot */
	bool lower_bound;         /* an exact sample used coarse blocks */
	uint64_t prev_tick_at;    /* when the last tick started */
	uint64_t tick_cost_ns;    /* what the last tick took, but a change of sample and on_tick */
	uint64_t tick_fixed_ns;   /* what its on_tick took (no sample makes it cheaper) */
	uint64_t member_tick_ns;  /* a steady tick's cost per member touched in its interval (0: none measured) */
	uint64_t change_ns;       /* the CPU time of changes of sample in the current interval */
	uint64_t change_debt_ns;  /* changes' cost not yet paid back from unused budget (policy.c) */
	uint64_t late_max_ns;     /* the longest interval a wall-clock tick ended (tick.c) */
	/* sampling.c */
	uint64_t seed;            /* the session's membership seed */
	uint32_t level;           /* atomic: the level armed in the current interval (0: every page) */
	uint32_t level_used[WSS_SAMPLE_LEVEL_MAX + 1]; /* the last interval armed at each level (0: none) */
	uint32_t level_max;       /* the coarsest level of the run */
	uint32_t level_min_sampled; /* the finest sampled level of the run (0: none) */
	bool clustered;             /* some interval counted a sparse range's clusters (tick.c) */
	/* All writes (sampling.c): at a sampled level, every page of the
	 * dense ranges is write-protected and harvested, not only the
	 * members, so that the writes are counted exactly and only the pages
	 * read and not written are estimated.  Whether the current interval
	 * is so, and the first interval of the run of intervals, up to the
	 * current one, that all observed every write (exact, or all writes;
	 * 0: the current one does not). */
	bool all_writes;
	uint32_t all_writes_from;
	uint64_t wp_cost_ns;      /* a write to a write-protected page, resolved by the kernel, as the probe measured it */
	uint64_t last_writes, last_pages; /* the last sample's write and data estimates, for the decision to count all writes */
	uint32_t aw_hold, aw_backoff; /* ticks before all writes may come back, and the next hold (policy.c) */
	uint64_t aw_page_ns;      /* all writes' harvest and count of one tracked page: the median of aw_page_v (0: not yet) */
	uint64_t aw_page_v[3];    /* the last three ticks' figures of it, and how many were taken (policy.c) */
	uint32_t aw_page_n;
	/* The census (census.c): whether pages are counted in the totals by
	 * their presence, why not (NULL: on, or exact tracking), and the
	 * pages it counted first in the data and write totals. */
	bool census;
	const char *census_why;
	uint64_t census_data, census_write;
	/* The pages it could not count that may have been touched (present
	 * before their registration, mapped huge, files' and shared
	 * memory's), by kind; whether the end's count ran (the bound needs
	 * it). */
	uint64_t census_rest, census_rest_kind[WSS_KIND_N];
	bool census_final;
	/* Files' and shared memory's mappings: their pages touched are bounded
	 * by those mapped at the scans (in the rest), or by the mappings'
	 * sizes (census_whole, by kind) once a file page may have left
	 * unseen: reclaimed (the system's pgsteal_file when the census
	 * began), or a file shortened or punched (census_file_unsafe). */
	bool census_files, census_file_unsafe;
	uint64_t census_whole[WSS_KIND_N], census_reclaimed;
	uint32_t calm;            /* ticks in a row well under the budget */
	int hold;                 /* wss_hold_t: what held the sample at the last decision (policy.c) */
	bool raised;              /* the level was raised in the current interval (raise_to) */
	uint32_t burst;           /* atomic: first touches in the current interval (auto) */
	uint32_t burst_cap;       /* atomic: ... at which a handler wakes the engine thread (0: never) */
	uint32_t burst_hit;       /* atomic: a handler of interval e reached the cap: e + 1 (0: none) */
	uint64_t burst_excess;    /* touches of bursts the tick's decision leaves out */
	bool vma_short;           /* exact tracking needed coarse blocks: auto samples from then on */
	bool scanning;            /* attached: registering what a scan of the maps found (attached.c) */
	uint64_t fault_cost_ns;   /* one first touch, as the probe measured it */
	uint64_t probe_at_ns;     /* the last probe */
	uint32_t probes;          /* probes so far */
	uintptr_t probe;          /* the probe page (0: none) */
	uint32_t ncpu;            /* CPUs the process may run on (at start), for the budget's base */
	uint64_t cost_faults_ns, cost_program_ns, cost_wall_ns; /* the last interval's, for its sample */
	/* The precision of each interval's data estimate (sampled intervals
	 * with a touched member): the last one's half-width in millionths of
	 * the estimate (0: exact or none judged), and the run's, binned for
	 * the summary's median (wss_precision_bin). */
	uint64_t prec_last_ppm;
	uint64_t used_ns, used_wall_ns; /* the budget's measure summed over the decisions: delay + tick, wall */
	uint32_t prec_n, prec_missed;
	uint32_t prec_hist[WSS_PREC_BINS];
	/* attached.c: measuring a process wss attach loaded us into */
	bool attached;             /* the registry follows /proc/self/maps, not hooks */
	int engine_tid;            /* atomic: the engine thread's tid, once it runs (0: not yet) */
	uint64_t attach_until;     /* CLOCK_MONOTONIC end of wss attach's --duration (0: none) */
	int ending;                /* atomic: an attached measurement's end is in progress or done */
	const char *attach_end;    /* why measuring ended, for the summary (NULL: not yet) */
	const char *end_why;      /* why measuring ended before the process did (wss_engine_end), or NULL */
	bool lazy_open;           /* an exec'd program of a session: no profile unless it had a sample (lifecycle.c) */
	int attach_ctl;            /* wss attach's watch (attached.c), or -1 */
	uint64_t attach_scans;     /* maps scans made, and their CPU time */
	uint64_t attach_scan_ns;
	/* Last, the large fields a forked child does not write: every page
	 * written after a fork is a copy (wss_engine_fork_child). */
	wss_engine_settings_t set;   /* lifecycle.c, from wss_engine_init */
	char backend_reason[320];    /* lifecycle.c: the header's, which backend and why */
	char path[PATH_MAX];         /* output.c: the profile's path */
	char trace_path[PATH_MAX];   /* trace.c: the trace's */
} wss_engine_t;

extern wss_engine_t wss_engine_state;

/* One name for the state in every engine file: the code reads as one
 * module's, which it was, and the owner comments above say who writes. */
#define E wss_engine_state

/* Signals that are raised synchronously by a faulting instruction must stay
 * deliverable: blocking them turns a fault into a kill. */
#define WSS_SYNC_SIGNALS ((1ULL << (SIGSEGV - 1)) | (1ULL << (SIGBUS - 1)) | (1ULL << (SIGILL - 1)) | \
			  (1ULL << (SIGFPE - 1)) | (1ULL << (SIGTRAP - 1)))

static inline uint64_t wss_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A touch to record: the interval and the thread slot; for a harvest, the
 * level whose members were watched in that interval (0: every page): the
 * write bits of other pages are stale (never harvested while outside the
 * sample) and are dropped; and the level whose members were armed (0:
 * every page), when it is not the watched one (all writes: sampling.c):
 * a page outside it was watched for its writes alone. */
typedef struct wss_record_arg {
	uint32_t e, slot, level, armed;
} wss_record_arg_t;

/* lock.c */
/* The engine lock, with asynchronous signals blocked while it is held so a
 * signal handler on the same thread cannot re-enter it.  hook. */
typedef struct wss_lockstate {
	uint64_t oldmask;
} wss_lockstate_t;
void wss_engine_lock(wss_lockstate_t *ls);
void wss_engine_unlock(wss_lockstate_t *ls);

/* The lock order, as code: a thread takes these in increasing rank only
 * (docs/architecture.md).  The loader's and jemalloc's locks are not ours;
 * they are listed for the order.  The witness (lock.c) checks the ranks we
 * take: the tick lock (engine/loader.c), the engine lock and the write
 * window's lock (engine/writes.c). */
typedef enum wss_lock_rank {
	WSS_RANK_TICK = 1,  /* engine/loader.c tick_lock: one tick at a time, none across a fork */
	WSS_RANK_LOADER,    /* the loader's list lock: dl_iterate_phdr holds it around a tick, and
			     * a program's callback may allocate under it */
	WSS_RANK_ALLOCATOR, /* jemalloc's mutexes: its extent hooks call the engine */
	WSS_RANK_ENGINE,    /* the engine lock: registry, tick, profile */
	WSS_RANK_WINDOW,    /* the write window's lock (engine/writes.c) */
} wss_lock_rank_t;
/* Note that the calling thread takes / gives a lock of rank r: taking one
 * at or below a rank it holds is a violation (logged once; abort in
 * --enable-debug builds).  AS-safe. */
void wss_witness_take(wss_lock_rank_t r);
void wss_witness_give(wss_lock_rank_t r);
/* Violations seen so far (tests).  AS-safe. */
uint32_t wss_witness_violations(void);
/* Take the engine lock, waiting at most timeout_ns (0: for ever); false
 * when it could not be had in time (the signal mask is then as it was). */
bool wss_lock_within(wss_lockstate_t *ls, uint64_t timeout_ns);
/* Does the calling thread hold the engine lock?  AS-safe. */
bool wss_lock_mine(void);
/* In a fork child: the lock taken in prepare is free again, without a
 * wake-up (no other thread exists), and the mask is restored.  hook. */
void wss_lock_child_release(wss_lockstate_t *ls);

/* fault.c */
/* Set on the engine thread (clock.c): its touches count for no thread. */
extern __thread bool wss_fault_engine_thread __attribute__((tls_model("initial-exec")));
/* Enter / leave the in-flight section of the current interval (the
 * protocol at the top of fault.c); returns the interval.  AS-safe. */
uint32_t wss_fault_enter(void);
void wss_fault_exit(uint32_t e);
/* The touched lists (the comment at the top of fault.c).  list_init
 * allocates them once, for cap pages each; 0 or ENOMEM.  Engine lock. */
int wss_fault_list_init(uint32_t cap, bool walked);
/* Append page to interval e's list.  AS-safe, lock-free; in flight for
 * e, or on the tick's thread under the engine lock. */
void wss_fault_list_add(uintptr_t page, uint32_t e);
/* Some page may now be open and in no list: the next tick walks every
 * member.  AS-safe. */
void wss_fault_list_stale(void);
/* A change of sample's opening, which program threads' faults wait for (fault.c). */
void wss_change_begin(void);
void wss_change_end(void);
/* For the tick ending k, after the drain: interval k's list, or NULL when
 * it cannot be trusted (not allocated, overflowed, or stale; the stale
 * mark is consumed).  *n its length.  Engine lock held. */
const uintptr_t *wss_fault_list_take(uint32_t k, uint32_t *n);
/* Empty interval k's list for k + 2.  Engine lock held, by the tick. */
void wss_fault_list_reset(uint32_t k);
/* In a fork child: both lists empty and stale, no open announced.  hook. */
void wss_fault_fork_child(void);
/* Record a touch of page by slot in interval e; a fault also counts in the
 * thread's faults.  True when it was the page's first touch in e.  AS-safe. */
bool wss_fault_record(uintptr_t page, uint8_t *fl, uint32_t e, uint32_t slot, bool fault);

/* pins.c */
/* fn on each run of tracked pages in [s, e). */
void wss_pins_tracked_runs(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *), void *arg);
/* Record every page of [s, e) as touched (arg: a wss_record_arg_t). */
void wss_pins_record_run(uintptr_t s, uintptr_t e, void *arg);
/* An arming section: wss_arm_begin takes the pins (dropping those of dead
 * threads), wss_arm_unpinned arms [s, e) but the pinned parts (non-zero on
 * error), wss_arm_untouched arms the pages of [s, e) not touched in the
 * current interval, wss_arm_end ends it.  Engine lock held. */
void wss_arm_begin(void);
int wss_arm_unpinned(uintptr_t s, uintptr_t e);
void wss_arm_untouched(uintptr_t s, uintptr_t e);
void wss_arm_end(void);
/* Inside an arming section: does a pin of its snapshot overlap [s, e)? */
bool wss_arm_pinned_in(uintptr_t s, uintptr_t e);
/* Inside an arming section: record the pinned buffers' pages as touched in
 * interval e (they stay open).  Engine lock held. */
void wss_pins_record_pinned(uint32_t e);
/* In a fork child: drop the pins of the parent's other threads, move the
 * forking thread's from old_slot to new_slot.  hook. */
void wss_pins_fork_child(uint32_t old_slot, uint32_t new_slot);

/* writes.c */
/* Open the write window for the tick ending interval k (k + 1), with
 * alone the level armed in k when k counted all writes (0: it did not),
 * or close it.  Engine lock held. */
void wss_writes_window_open(uint32_t k, uint32_t alone);
void wss_writes_window_close(void);
/* Harvest the write bits of [s, e) into interval k.  Returns the backend's
 * result.  Engine lock held, E.harvester set. */
int wss_writes_harvest(uintptr_t s, uintptr_t e, uint32_t k, uint32_t watched, uint32_t armed, uint32_t slot);
/* Record the tracked pages of [s, e) (the members of the level in force)
 * as written in interval k, as a harvest that found them would.  Engine
 * lock held. */
void wss_writes_record(uintptr_t s, uintptr_t e, uint32_t k, uint32_t slot);

/* registry.c */
/* Registry updates; the caller holds the engine lock and has made the
 * mapping change itself.  prot is the application's protection. */
void wss_engine_track_locked(uintptr_t start, size_t len, int prot, int kind);
void wss_engine_untrack_locked(uintptr_t start, size_t len);
/* Stop tracking the parts of [start, len) registered with kind: their
 * mapping is gone (no protection is changed). */
void wss_engine_untrack_kind_locked(uintptr_t start, size_t len, int kind);
/* The application changed the protection of [start, len). */
void wss_engine_protect_locked(uintptr_t start, size_t len, int prot);
/* Give tracked pages in [start, len) the application's protection again
 * (before a call that needs one VMA, such as mremap). */
void wss_engine_disarm_locked(uintptr_t start, size_t len);
/* Stop tracking [start, len) for good, giving it its protection back: the
 * program uses it as a stack (signal stack, coroutine stack), where the
 * kernel writes signal frames and cannot meet an armed page. */
void wss_engine_exclude_locked(uintptr_t start, size_t len);
/* A mremap moved or resized [old, oldlen) to [new, newlen): tracking and
 * page history follow the data. */
void wss_engine_move_locked(uintptr_t old, size_t oldlen, uintptr_t nw, size_t newlen);
/* The application's mapping call failed with ENOMEM: if our protection
 * splits may be the cause, undo them all and return true (retry once). */
bool wss_engine_relieve_locked(void);
/* Is any page of [p, p+n) tracked?  AS-safe, lock-free. */
bool wss_engine_tracked_any(const void *p, size_t n);
/* fn on each part of [s, e) covered by a tracked region.  Engine lock. */
void wss_registry_parts(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t, uintptr_t, void *), void *arg);
/* Forget a page's history (touches, writes, hits, site).  Engine lock. */
void wss_registry_reset_page(uintptr_t a);
/* Observe [s, e) for harvest again (backend observe; in a sparse range,
 * attach_sparse and its watched members watched again).  Engine lock. */
void wss_registry_observe(uintptr_t s, uintptr_t e);
/* Exact or under all writes (every write observed), the write bits of
 * the tracked parts of [start, start + len), into the current interval,
 * before it is unmapped, mapped over or moved: its pages written count in
 * the run's totals (tick.c, count_gone_window).  Engine lock held. */
void wss_registry_harvest_before_unmap(uintptr_t start, size_t len);

/* Harvest [s, e) into interval k: the members of watched, the level whose
 * members were write-protected in k (0: all of it); armed, the level whose
 * members were armed in k (wss_record_arg_t).  Engine lock held,
 * E.harvester set. */
int wss_writes_harvest_sampled(uintptr_t s, uintptr_t e, uint32_t k, uint32_t watched, uint32_t armed, uint32_t slot);
/* Harvest the pages of interval k's touched list that are tracked members
 * of level (the level of k and k + 1) into k; a page that could not be
 * harvested has its range observed again.  Returns how many ranges were.
 * Engine lock held, E.harvester set. */
uint64_t wss_writes_harvest_listed(const uintptr_t *v, uint32_t n, uint32_t k, uint32_t level);

/* policy.c */
/* The probe page and the CPUs the process may use.  init, from
 * wss_sampling_init. */
void wss_policy_init(void);
/* The level of the next interval, from the one that ended: its faults,
 * coarse blocks and length.  Engine lock held. */
uint32_t wss_policy_next(uint64_t faults, uint64_t coarse, uint64_t wall_ns, uint64_t now);
/* The budget's move from level l, for an interval whose cost was
 * share_ppm of its wall time, fixed_ppm of it a part no finer sample
 * grows, against budget (all in millionths): up at once by the excess;
 * down after CALM_TICKS calm intervals in a row (a level down, the rest
 * doubled, would keep under half the budget; counted in *calm), unless
 * changes are owed, to exact or by at most room sampled levels; while
 * precise (the last interval's estimate within session.precision), only
 * to exact.  Pure. */
uint32_t wss_policy_step(uint32_t l, uint64_t share_ppm, uint64_t fixed_ppm, uint64_t budget, uint32_t *calm, bool owed,
			 uint32_t room, bool precise);
/* How much longer the interval that ended took for its first touches'
 * faults, in ns: the most any thread paid, or their total over the CPUs
 * the process may use when that is more; counted of all touches are
 * budgeted.  Engine lock held, after the tick took faults_k. */
uint64_t wss_policy_fault_delay(uint64_t counted, uint64_t all);
/* Before a sparse range of pages pages and span span is added: the level
 * in force becomes one whose armed runs fit the VMA budget with it, and
 * whose sparse members their page state, at once (mid interval:
 * sampling.c, wss_sampling_raise_to, says why that is sound).  Engine
 * lock held. */
void wss_policy_make_room(uint64_t pages, unsigned span);
/* Before a dense range of pages pages is attached: a coarser level first
 * if its members would cost more than an interval's budget to arm, or,
 * from exact, if it is larger than the burst cap.  Engine lock held. */
void wss_policy_before_attach(uint64_t pages);
/* On the engine thread, woken by a burst of first touches (fault.c): the
 * level in force becomes coarser at once.  Engine lock held. */
void wss_policy_burst(void);
/* The cap of first touches from here on in this interval, at the level
 * in force (0: no burst applies).  Engine lock held. */
void wss_policy_burst_cap(void);
/* On the engine thread as it starts: the cost of a touch measured now,
 * for the first interval's burst cap.  Engine lock held. */
void wss_policy_probe_now(void);
/* Should the next interval, at level, count all writes (sampling.c)?  From
 * the probe's cost of a kernel-resolved write fault and the writes of the
 * last sample, against the budget of an interval of wall_ns. */
bool wss_policy_all_writes(uint32_t level, uint64_t wall_ns);
void wss_policy_aw_scanned(uint64_t per_page_ns);

/* sampling.c */
/* The seed, the first level, the probe page.  init, after the backend. */
void wss_sampling_init(void);
/* The level in force becomes f at once, mid interval: the members of f
 * touched so far are listed for the next tick, the pages leaving the
 * sample opened and unwatched.  Engine lock held. */
void wss_sampling_raise_to(uint32_t f);
/* The level counted for sample k with a window of w intervals: the
 * coarsest armed in any of them. */
uint32_t wss_sampling_window_level(uint32_t k, uint32_t w);
/* Level is armed from interval on.  Engine lock held. */
void wss_sampling_set(uint32_t level, uint32_t interval);
/* fn on each member of level in [s, e) (level 0: every page). */
void wss_sampling_members(uintptr_t s, uintptr_t e, uint32_t level, void (*fn)(uintptr_t page, void *arg), void *arg);
/* The members of level in [s, e). */
uint64_t wss_sampling_count(uintptr_t s, uintptr_t e, uint32_t level);
/* Is the page a member of level (0: every page is)?  AS-safe. */
bool wss_sampling_member(uintptr_t page, uint32_t level);
/* The highest level the page is a member of. */
uint32_t wss_sampling_top_level(uintptr_t page);
/* fn on the members of [s, e) at level as runs of consecutive pages (a
 * cluster is one run, one protection change or scan, not one a page), in
 * address order.  Engine lock. */
void wss_sampling_member_runs(uintptr_t s, uintptr_t e, uint32_t level, void (*run)(uintptr_t s, uintptr_t e, void *arg),
			      void *arg);
/* The strata's units among the members of [s, e) at level: clusters
 * where a sparse range's design has them, else members.  Engine lock. */
uint64_t wss_sampling_units(uintptr_t s, uintptr_t e, uint32_t level);
/* fn on the part inside [s, e) of each cluster whose block the range's
 * ends (or a sparse piece's) cut, at level: [a, z), empty when the
 * cluster fell outside.  Such a block's spread is bounded apart
 * (wss_strata_doubt).  Engine lock. */
void wss_sampling_cut_clusters(uintptr_t s, uintptr_t e, uint32_t level, void (*fn)(uintptr_t s, uintptr_t e, void *arg),
			       void *arg);
/* The span a sparse range of this many pages is registered with
 * (common/sample.h): the level at which its members alone fill the VMA
 * room, below which they are clusters.  Engine lock. */
unsigned wss_sampling_span_for(uint64_t pages);
/* The cluster a member at level of page's range belongs to: log2 of its
 * pages (0: the page design, a member its own unit), the range's piece
 * in *s, *e (the page alone where it is dense).  AS-safe. */
unsigned wss_sampling_cluster_shift(uintptr_t page, uint32_t level, uintptr_t *s, uintptr_t *e);
/* Give the pages of [s, e) armed at level from (0: every page) that are
 * not members of level to their own protection (inside an arming
 * section, after the members of level are armed). */
void wss_sampling_open_others(uintptr_t s, uintptr_t e, uint32_t from, uint32_t level);
/* Write protection for harvests follows the sample (backends with unwatch,
 * dense ranges only): unwatch the pages of from that leave it for level (a
 * coarser sample, after the harvest that read their bits); watch the pages
 * of fine that join it from coarse (a finer sample, before they are armed:
 * their bits are stale); watch the members of level in [s, e). */
void wss_sampling_unwatch_others(uintptr_t s, uintptr_t e, uint32_t from, uint32_t level);
void wss_sampling_watch_new(uintptr_t s, uintptr_t e, uint32_t fine, uint32_t coarse);
void wss_sampling_watch(uintptr_t s, uintptr_t e, uint32_t level);
/* All writes (sampling.c): the level whose members are write-protected
 * now (0: every page); did every interval of the window of w intervals
 * ending at k observe every write; the next interval (interval) at level
 * counts all writes or not; end all writes now (a sparse range).  Engine
 * lock held. */
uint32_t wss_sampling_watched(void);
bool wss_sampling_all_writes_in(uint32_t k, uint32_t w);
void wss_sampling_all_writes_next(bool on, uint32_t level, uint32_t interval);
void wss_sampling_all_writes_off(void);
/* Arm the members of level in [s, e) (inside an arming section);
 * returns how many could not be. */
uint64_t wss_sampling_arm(uintptr_t s, uintptr_t e, uint32_t level);
/* May the tick ending the current interval arm and harvest from its
 * touched list (sampling.c says why it holds every member opened), with
 * next the level of the interval it starts?  Not at a change of level,
 * nor in exact mode.  Engine lock held. */
bool wss_sampling_steady(uint32_t next);
/* Arm the pages of a touched list that are tracked members of level
 * (inside an arming section); returns how many could not be. */
uint64_t wss_sampling_arm_listed(const uintptr_t *v, uint32_t n, uint32_t level);
/* Is the page a tracked member of level that the tick may arm (not the
 * probe)?  Engine lock held. */
bool wss_sampling_armable(uintptr_t page, uint32_t level);
/* fn on every page of [s, e) that may hold per-page state: each page
 * outside sparse ranges, the members of each sparse piece's finest level
 * inside them.  Engine lock held. */
void wss_sampling_state_pages(uintptr_t s, uintptr_t e, void (*fn)(uintptr_t page, void *arg), void *arg);
/* Attach a newly tracked range and arm what the level in force asks.
 * Engine lock held. */
void wss_sampling_attach(uintptr_t s, uintptr_t e);
/* In a fork child's start: the run's figures afresh, the sample armed.
 * Engine lock held. */
void wss_sampling_fork_child(void);
/* Attach a newly tracked sparse range (engine/sparse.h), already in the
 * registry and the table: its members of the level in force set up and
 * armed, nothing else.  Engine lock held. */
void wss_sampling_attach_sparse(uintptr_t s, uintptr_t e);
/* Before arming level (a full walk): the members of level of every sparse
 * range not set up yet get their state reset and are watched.  Inside an
 * arming section. */
void wss_sampling_sparse_setup(uint32_t level);

/* output.c */
/* Append a "module" record: id, path, load bias, mapped range,
 * build-id ("" for none); written with the next record.  Engine lock
 * held. */
void wss_engine_module_locked(int id, const char *path, uintptr_t bias, uintptr_t start, uintptr_t end,
			      const char *build_id);
/* Write the records in E.out to the profile (creating it first in a child
 * that has not yet), or cut the profile if that fails.  Engine lock held
 * (or start-up, or the fork child). */
void wss_out_write(void);
/* From now on E.out's records are dropped, never written, and no profile
 * is created: an exec'd program ending before its first sample is counted
 * for its note alone.  Engine lock held. */
void wss_out_discard(void);
/* A line "wss: <a><b>" on the program's stderr, or our copy of it. */
void wss_out_say(const char *a, const char *b);
/* Create this process's profile from the output pattern.  Returns 0 or
 * an errno with the reason in err. */
int wss_out_open(char *err, size_t errlen);
/* The header record, into E.out. */
void wss_out_header(void);
/* The summary of the samples so far, without hot pages. */
void wss_out_summary(wss_profile_summary_t *sum);
/* The stderr lines at the end: the summary (when summary), then where the
 * profile is, or where and why it was cut. */
void wss_out_say_summary(const wss_profile_summary_t *sum, bool summary);
/* Close the profile and our stderr copy, if still ours. */
void wss_out_close(void);
void wss_out_close_err(void);

/* tick.c and totals.c: the bits of a page's rever byte (shadow.h): bit 0,
 * in a sample's read set at least once (the read total); for each series
 * s (0 data, 1 write, 2 read), first counted in an exact window (REVER_E)
 * or in a sampled one (REVER_S), for the run's totals. */
#define REVER_READ 1
#define REVER_E(s) ((uint8_t)(2U << (2 * (s))))
#define REVER_S(s) ((uint8_t)(4U << (2 * (s))))

/* tick.c */
/* End interval E.epoch: arm, harvest, sample (final: no arming).  Engine
 * lock held. */
void wss_tick_locked(bool final);
/* Before page leaves tracking: its touch in the window in progress counts
 * in the run's data total.  Engine lock held. */
void wss_tick_count_gone(uintptr_t page, int kind);
/* Track what the main stack grew by since the last tick (stacks.c).  Engine
 * lock. */
void wss_stacks_grow_locked(void);
/* Track [start, len) as the stack of the thread in slot owner (registry.c).
 * Engine lock. */
void wss_engine_track_stack_locked(uintptr_t start, size_t len, uint32_t owner);
/* A page leaves tracking: its per-page sample counts go to the gone
 * sums, and are zeroed.  Engine lock held. */
void wss_tick_fold_counts(uintptr_t page);
/* The average of series s (0 data, 1 write, 2 read) over the samples so
 * far and its 95 % interval, as sums over the samples (lo, hi: floor and
 * ceiling): the exact samples' counts plus the sampled ones estimated from
 * the rate-weighted counts of the members of the run's finest sampled
 * level, each a stratum of its block (wss_strata_*).  Engine lock held. */
void wss_tick_avg(int s, uint64_t *sum_lo, uint64_t *sum_hi);
/* The run's total of series s: xe pages counted in exact windows, x
 * members of the run's coarsest level first counted in a sampled one
 * (wss_estimate_total), the interval narrowed by the members' successive
 * differences where the ranges still hold them.  Engine lock held. */
void wss_tick_total(int s, uint64_t xe, uint64_t x, wss_estimate_t *t);
/* The run's totals over several sampled levels (wss_tick_last_touch):
 * page's last touch and last write up to interval K, each counted in c
 * when the page was a member of the coarsest level in force from that
 * interval to K, and first counted in no exact window.  Engine lock held. */
void wss_tick_last_touch(uintptr_t page, int kind, uint32_t K, wss_last_counts_t *c);
/* The same over every page tracked now, up to the last interval counted,
 * plus the pages gone (E.last_gone). */
void wss_tick_last_touches(wss_last_counts_t *c);
/* Page a, present and not before its registration (census.c), counted in
 * the run's data total exactly (data), and in the write total (write); rv
 * its read-ever bits (a scratch byte for a page without state).  Returns
 * 1 if it was new to the data total, | 2 if new to the write total.
 * Engine lock held. */
int wss_tick_count_present(uintptr_t a, uint8_t *rv, int kind, bool data, bool write);
/* One tick from the clock, through wss_loader_around. */
void wss_tick_clock(void);

/* findings.c */
/* Reset the peak detectors (start, fork child). */
void wss_findings_init(void);
/* How a sample was counted, for the threads' series: exact (sampled
 * false) or members of tracked pages at a level. */
typedef struct wss_sampled {
	bool sampled;
	uint64_t tracked, members;
} wss_sampled_t;
/* Peak records for sample k (pages and writes on the sample's scale; the
 * threads' series are put on it by sm; code: the code series, -1 without
 * track.code).  Engine lock held. */
void wss_findings_peaks(uint32_t k, uint64_t pages, uint64_t writes, wss_profile_sets_t sets, uint32_t nt,
			const wss_sampled_t *sm, int64_t code);
/* The hot pages, from wss_sys_alloc (report.hot_pages entries), their
 * count in *nhot; their stacks are written into E.out first.  Engine
 * lock held. */
wss_profile_hot_t *wss_findings_hot(int *nhot);
/* The run's hot pages that left tracking: reset at start-up and in a
 * forked child (whether or not peaks are on).  Engine lock held. */
void wss_findings_hot_init(void);
/* Page a of kind leaves tracking (unmapped, or no longer tracked): keep it
 * among the run's hot pages if it is one.  Engine lock held, before its
 * state is reset. */
void wss_findings_hot_gone(uintptr_t a, int kind);
/* The "sites" record: the whole run's first-touch sites, their stacks
 * written first, into E.out.  Engine lock held, after the final sample. */
void wss_findings_sites(void);
/* The "alloc_sites" record, the stacks first, into E.out.  Engine lock
 * held, after the final sample. */
void wss_findings_alloc_sites(void);

/* allocs.c: allocation sites (track.alloc_sites).  Allocations are
 * sampled by bytes, one per M bytes allocated on average, M from
 * WSS_ALLOC_MEAN_MIN up as the budget requires. */
#define WSS_ALLOC_MEAN_MIN (16ULL << 10)
#define WSS_ALLOC_MEAN_MAX (1ULL << 30)
/* Set up the tables and the stack store (depth frames a stack).  Returns 0
 * or ENOMEM.  init. */
int wss_allocs_init(unsigned depth);
bool wss_allocs_on(void);
/* Attribute the pages of interval k's window (w intervals) to the live
 * sampled allocations.  Engine lock held, after the tick's count. */
void wss_allocs_tick(uint32_t k, uint32_t w, bool final);
/* The record (its stacks already written).  Engine lock held. */
void wss_allocs_out(wss_fmt_t *f);
/* A forked child: the figures over time start afresh.  Engine lock. */
void wss_allocs_fork_child(void);

/* clock.c */
/* /proc/self/stat, kept open high (-1 when it cannot be); the current
 * descriptor without opening (for wss_engine_own_fds). */
int wss_clock_stat_fd(void);
int wss_clock_stat_fd_peek(void);
void wss_clock_close(void);

/* session.c */
/* The session's leader is pid, with its profile at leader ("" none). */
void wss_session_set(int pid, const char *leader, bool own);
/* The leader's profile path ("" none). */
const char *wss_session_leader_path(void);
/* This process forked or exec'd within the session: it may have
 * descendants to count at its end. */
void wss_session_used(bool used);
/* Note this process in the leader's profile: its profile or NULL, and
 * why it has none, and, when sum is not NULL, what it measured without a
 * profile (its program and data peak and total).  hook. */
void wss_session_note(const char *profile, const char *reason, const wss_profile_summary_t *sum);
/* The end of the leader's "profile:" line on stderr: the session's other
 * profiles and the children that wrote none, listed in the leader's
 * profile (this image's, or its first image's); nothing when there are
 * none. */
void wss_session_describe(wss_fmt_t *f);
/* Has another process of the session (not this program's own exec'd
 * images) noted a profile, or its measured size, in the leader's?  Then
 * wss run prints the session's table instead of this process's figures. */
bool wss_session_others(void);
/* The session directory (docs/config.md, session.output), where this
 * process's profile goes: absolute, from the leader's profile's path, so
 * that descendants that change directory (a shell script that cd's, pyenv's
 * shims) write beside the leader's profile, not into other programs'
 * directories.  False for the leader's first image (its profile is where
 * the pattern says) and in a session whose leader wrote no profile.  hook. */
bool wss_session_dir(char *dir, size_t n);
/* The session directory's name, relative to the leader's profile's
 * directory, for the first image's header; NULL in any other process. */
const char *wss_session_dir_name(void);
/* Create the session directory dir if it is not there, and open it for
 * creating profiles in it: never through a link, never another user's.
 * Returns 0 with the descriptor, or an errno with why it cannot be used
 * ("is a symbolic link, ...") in reason.  hook. */
int wss_session_dir_open(const char *dir, int *dirfd, const char **reason);
/* Say in the leader's profile that this process writes no profile: the
 * session directory cannot be used, for reason.  hook. */
void wss_session_note_refused(const char *reason);
/* Is this an exec'd image of the session's leader (it leads on, and notes
 * its profile in the first image's, the profile to read next)? */
bool wss_session_exec_image(void);

/* lifecycle.c */
/* Are first-touch sites and their stacks recorded (peaks.enabled, and a
 * backend with faults), or hot pages listed?  Then the profile needs
 * "module" records.  init. */
bool wss_engine_sites(void);
/* Stop measuring: every tracked page back to its own protection; unless
 * ending (the process ends now), the backend detached too.  Engine lock
 * held. */
void wss_lifecycle_deactivate_locked(bool ending);
/* The backend table, in auto's order of preference after the runtime
 * rule; NULL-terminated. */
extern const wss_backend_t *const wss_backends[];
/* A test's backend (the fake of tests/unit), used instead of the table's
 * when set before wss_engine_init.  Tests only. */
extern const wss_backend_t *wss_lifecycle_test_backend;

/* loader.c */
/* Run tick() once, inside dl_iterate_phdr after reading the loader's list
 * when library data or modules are followed (the tick lock held), else
 * directly.  Takes the tick lock: no other lock held. */
void wss_loader_around(void (*tick)(void));
/* What this tick read of the list: module records, library data ranges.
 * First in each tick, engine lock held. */
void wss_loader_apply_locked(void);
/* fork handlers for the tick lock (fork.c calls them).  hook. */
void wss_loader_fork_prepare(void);
void wss_loader_fork_parent(void);
void wss_loader_fork_child(void);

/* modules.c */
/* Add the object to the module list if it is new (same load bias and
 * range); main_program: it is the executable (its path from /proc).
 * Inside dl_iterate_phdr, serialised by loader.c. */
void wss_modules_add(const struct dl_phdr_info *info, bool main_program);
/* Module records for the modules not yet in the profile.  Engine lock
 * held. */
void wss_modules_out_locked(void);
/* The module holding addr: its path, and whether it is the main program;
 * NULL for none.  Engine lock held. */
const char *wss_modules_of(uintptr_t addr, bool *main_program);
/* In a fork child: the child's profile needs every record again. */
void wss_modules_fork_child(void);

/* loader.c: libwss.so's load address (its dl_phdr_info's dlpi_addr).  init. */
uintptr_t wss_loader_self_base(void);

/* attached.c: the registry of a process wss attach loaded us into,
 * following /proc/self/maps. */
void wss_attached_init(const wss_attach_track_t *w, const char *fifo, int controller);
int wss_attached_scan_locked(void);
/* Has the wss attach process gone (killed) without detaching? */
bool wss_attached_orphaned(void);
/* On the engine thread at its start: its stack (sp within it) is the
 * tool's, left out of tracking from now on.  Engine lock held. */
void wss_attached_engine_stack_locked(uintptr_t sp);
void wss_attached_release(void);

/* libdata.c */
/* track.library_data on (track) or off.  init. */
void wss_libdata_init(bool track);
bool wss_libdata_enabled(void);
/* One read of the loader's list, inside dl_iterate_phdr: begin, each
 * object but the executable seen, end (the reading thread owns it until
 * its tick applies it). */
void wss_libdata_begin(void);
void wss_libdata_seen(const struct dl_phdr_info *info);
void wss_libdata_end(void);
/* Track the start-up read's libraries at once.  Engine lock held, init. */
void wss_libdata_start_locked(void);
/* Bring the tracked libraries in step with this thread's read: drop
 * those gone, track those seen at two reads in a row.  Engine lock
 * held. */
void wss_libdata_apply_locked(void);

/* code.c: the code working set (track.code) */
/* track.code asked for (track); runtime as wss_engine_start_t's.  init. */
void wss_code_init(bool track, const char *runtime);
bool wss_code_on(void);
/* Asked for but impossible here: why (for the header), else NULL. */
const char *wss_code_off_why(void);
/* The header's list of excluded start-up objects ({"object","why"},...),
 * or NULL when off. */
const char *wss_code_excluded_json(void);
/* More code ranges than the table holds (the rest untracked). */
bool wss_code_full(void);
/* One read of the loader's list, as libdata's. */
void wss_code_begin(void);
void wss_code_seen(const struct dl_phdr_info *info);
void wss_code_end(void);
/* Engine lock held: the start-up read's ranges at once; a tick's read
 * applied (ranges gone dropped, ranges seen twice added); arming every
 * range (after the epoch move and the drain); disarming at the end. */
void wss_code_start_locked(void);
void wss_code_apply_locked(void);
void wss_code_arm_locked(void);
void wss_code_disarm_locked(void);
/* Under VMA pressure (wss_engine_relieve_locked): all code opened. */
void wss_code_relieve_locked(void);
/* An instruction fetch fault at addr: true when it was ours (opened,
 * recorded).  AS-safe, lock-free. */
bool wss_code_fault(uintptr_t addr);
extern __thread bool wss_code_ticking; /* set by the thread running a tick */
/* A fetch fault no one claimed, possibly on a range that left tracking
 * since it faulted: true to let it run again (once per address).  AS-safe. */
bool wss_code_retry(uintptr_t addr);
/* The code pages in sample k's window (each thread's added to its
 * window_code); lower: a range was opened whole in the interval.  Engine
 * lock held. */
uint64_t wss_code_count(uint32_t k, uint32_t w, uint32_t nt, bool *lower);
/* Code pages run in the run so far. */
uint64_t wss_code_total(void);
/* The code pages run in the most intervals (hot pages of code), most
 * first, their mappings "code:PATH" written into names.  Engine lock. */
int wss_code_hot(wss_profile_hot_t *v, int want, char (*names)[4096 + 8]);
/* First runs recorded in interval k (read once, after k's handlers). */
uint64_t wss_code_take_faults(uint32_t k);
/* The program changes the mapping of [start, len) (before the call).
 * Engine lock held. */
void wss_code_forget_locked(uintptr_t start, size_t len);
void wss_code_dlclose_begin_locked(void);
void wss_code_dlclose_end_locked(void);
void wss_code_fork_child(void);
void wss_code_fork_now(void);

/* fork.c */
/* The engine thread of a pending child, one interval after the fork. */
void wss_fork_child_start(void);

/* ---- census.c: the totals' pages counted by their presence ---- */
/* Start-up: on unless exact tracking, attached or without a page map
 * (each registration then records the pages present). */
void wss_census_init(void);
/* The first sampled level, before which nothing is counted: off with
 * swap, where huge pages come on any fault, with memory locked; the
 * system's count of file pages reclaimed taken.  Engine lock. */
void wss_census_start(void);
/* A forked child starts afresh (after its backend reopened): the pages it
 * inherited present are not its touches. */
void wss_census_fork_child(void);
/* Off from now on, for why (the pages counted so far stay counted). */
void wss_census_stop(const char *why);
/* [s, e) is being registered: its pages present now were not touched in
 * the run as far as the census can tell. */
void wss_census_register(uintptr_t s, uintptr_t e, int kind);
/* Count the pages of the tracked ranges in [s, e) present now (before
 * they may disappear: an munmap, MADV_DONTNEED). */
void wss_census_count(uintptr_t s, uintptr_t e);
void wss_census_count_all(void);
/* The pages of [s, e) were dropped or left tracking: any page present
 * there later was touched after. */
void wss_census_dropped(uintptr_t s, uintptr_t e);
/* [s, e) of kind was unmapped before the census could count it (a
 * library dlclose unloaded): any of its pages may have been touched. */
void wss_census_lost(uintptr_t s, uintptr_t e, int kind);
/* Read the tracked readable pages of [s, e) (a buffer pinned for a system
 * call, which counts as touched whatever the kernel does with it), so that
 * they are present.  AS-safe. */
void wss_census_touch(uintptr_t s, uintptr_t e);
/* At the end: true when the census ran throughout, and then at most
 * *rest pages touched in the run (by_kind[kind] of each kind) were
 * counted neither by it nor in an exact window: the totals' bound. */
bool wss_census_rest(uint64_t *rest, const uint64_t **by_kind);

/* ---- trace.c: the page trace (docs/trace-format.md) ---- */
/* Sample k's record: the pages touched in interval k itself (the members
 * of its level when sampled), after the tick counted it (engine lock).
 * Creates the trace at the first one, once the profile exists. */
void wss_trace_interval(uint32_t k, uint64_t t_ns, uint32_t level, wss_profile_sets_t sets);
/* The profile was cut (err): the trace ends there too. */
void wss_trace_cut(int err);
/* The end record, at the run's end (engine lock). */
void wss_trace_end(void);
/* Pages [s, e) left tracking (unmapped, or mapped over); n pages moved
 * from old to nw with their history (mremap): the current interval's
 * record says so, in order, for the readers' windows (engine lock). */
void wss_trace_gone(uintptr_t s, uintptr_t e);
void wss_trace_moved(uintptr_t old, uintptr_t nw, size_t n);
/* What the summary says of it; false when there is no trace. */
bool wss_trace_summary(wss_profile_trace_t *t);
/* In a forked child: the parent's trace is not ours. */
void wss_trace_fork_child(void);
/* Before measuring starts. */
void wss_trace_init(void);

#endif
