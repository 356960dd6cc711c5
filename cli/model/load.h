/* Reading a profile (docs/profile-format.md) into memory for the reports:
 * the header's facts, one small record per sample, per-thread totals, the
 * summary, and the module, stack, peak and hot-page records.  Records may
 * come in any order after the header; references between them (a peak's
 * stack, a stack's module) are resolved by the reports, not here. */
#ifndef WSS_CLI_LOAD_H
#define WSS_CLI_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kinds.h"

/* Exit status for input that is not a readable profile. */
#define WSS_EXIT_BADINPUT 2

/* A 95 % confidence interval of an estimate (sampled tracking). */
typedef struct wss_ci {
	bool present;
	double lo, hi;
} wss_ci_t;

/* An interval closed on the figure itself: the figure was counted (a
 * sampled run's peak that an exact interval's count holds, with no
 * sampled interval's bound above it), so it is printed as a count, not
 * as "≈ v ± 0.0 %". */
static inline bool wss_ci_counted(const wss_ci_t *ci, double v)
{
	return ci->present && ci->lo == v && ci->hi == v;
}

/* The series of a sample, in the order of wss_sample_t's data, read, write. */
enum { WSS_SERIES_DATA, WSS_SERIES_READ, WSS_SERIES_WRITE, WSS_SERIES_N };

typedef struct wss_sample {
	int64_t seq, t_ns, cpu_ns; /* cpu_ns: -1 when absent */
	int64_t data, read, write; /* read, write: -1 when the backend does not see them */
	/* Sampled tracking (issue 14): pages counted 1 in rate (1: exact, also
	 * when the profile predates the field); when rate > 1 data, read and
	 * write are estimates with these intervals, from sampled[] pages
	 * touched of members armed of tracked (-1: absent). */
	int64_t rate;
	wss_ci_t ci[WSS_SERIES_N];
	int64_t tracked, members, sampled[WSS_SERIES_N];
	bool lower_bound; /* exact, but coarse blocks left pages uncounted */
	bool all_writes;  /* sampled, every page's writes counted: write is a count (engine/sampling.c) */
	int64_t faults_ns, tick_ns, change_ns, program_ns; /* "cost", -1: absent */
	int64_t wall_ns;  /* "cost": the interval's wall time, the tick's base; -1: absent (older profiles) */
	int64_t code_ns;  /* "cost": track.code's first runs, -1: absent */
	int64_t faults;	  /* first touches recorded in the interval, -1: absent */
	bool final;	  /* the sample taken at exit (a partial interval) */
	int64_t code;	  /* track.code: code pages run in the window (exact), -1: absent */
	bool code_lower_bound; /* a code range was opened whole in it */
	/* "kinds": each kind's data pages in the window (wss_kind_t; -1: the
	 * kind had no pages tracked, or the profile predates the field). */
	int64_t kind_data[WSS_KIND_N];
	/* With WSS_LOAD_THREAD_SAMPLES: this sample's threads are
	 * p->sample_threads[thread_first .. thread_first + nthreads). */
	size_t thread_first, nthreads;
} wss_sample_t;

/* One thread in one sample (WSS_LOAD_THREAD_SAMPLES), compact: a profile
 * of 100,000 samples of 64 threads holds 6.4 million of these. */
typedef struct wss_sample_thread {
	int32_t tid;
	uint32_t faults;
	int64_t data, write; /* write: -1 when the backend does not see writes */
	int64_t cpu_ns;	     /* -1: absent (the thread had exited) */
	float ci_data[2], ci_write[2]; /* 95 % intervals when the sample's rate > 1, else {-1, -1} */
	int32_t code;	     /* track.code: its code pages, -1: absent */
} wss_sample_thread_t;

/* One thread's totals (named apart from the engine's wss_thread_t, which is
 * a live thread, so that a grep or a debugger finds the one meant). */
typedef struct wss_load_thread {
	int64_t tid;
	uint64_t samples;	  /* samples it appears in */
	uint64_t data_sum, data_peak;
	uint64_t write_sum, write_peak;
	bool has_write;
	bool estimated;  /* some of its numbers come from a sample with rate > 1 */
	uint64_t faults; /* first touches, summed over its samples */
	int64_t cpu_ns;	 /* its last recorded CPU time, -1 if never */
	uint64_t code_sum, code_peak; /* track.code: code pages it ran first */
} wss_load_thread_t;

/* avg/peak/total of one series.  avg_tenths is the mean in tenths of a
 * page (the summary writes one decimal); total < 0 when unknown. */
typedef struct wss_stat {
	bool present;
	int64_t avg_tenths, peak, total;
	wss_ci_t avg_ci, peak_ci, total_ci; /* sampled runs' summary */
} wss_stat_t;

typedef struct wss_module {
	int64_t id;
	char *path;
	uint64_t bias, start, end; /* end == 0: the record gave no range */
	char *build_id;		   /* lower-case hex, or NULL */
} wss_module_t;

typedef struct wss_stack {
	int64_t id;
	uint64_t *frames;
	size_t n;
} wss_stack_t;

typedef struct wss_site {
	uint64_t pc;	       /* the instruction that touched the pages first */
	int64_t stack, pages; /* stack: -1 when none was captured */
} wss_site_t;

typedef struct wss_peak {
	int64_t seq, value;
	double mean, threshold;
	char *series;
	wss_site_t *sites;
	size_t nsites;
} wss_peak_t;

typedef struct wss_hot {
	uint64_t addr;
	int64_t intervals;
	char *mapping;
	int64_t stack; /* -1: none recorded */
	int64_t gone_seq; /* the page left tracking in this interval (unmapped, ...), -1: tracked at the end */
} wss_hot_t;

/* An allocation site (the "alloc_sites" record, docs/profile-format.md):
 * estimates, with their 95 % intervals where the record gives them. */
typedef struct wss_alloc_site {
	int64_t stack; /* 0: no stack was captured */
	int64_t sampled, allocs, live_bytes, freed_bytes;
	int64_t live_pages, peak_live_pages, ws_pages, idle_pages, touched_pages;
	wss_ci_t live_ci, ws_ci, idle_ci, touched_ci;
} wss_alloc_site_t;

/* A "process" record: another process of the session noted itself.  A
 * program that ended before its first sample notes what it measured
 * (exe set: its data peak and total, with intervals where sampled). */
typedef struct wss_process_note {
	int64_t pid, ppid;
	char *profile; /* its path from here (the note's, relative to the leader's directory), or NULL */
	char *reason;  /* why there is none, or NULL */
	char *exe;     /* the program measured without a profile, or NULL */
	int64_t data_peak, data_total, duration_ns; /* with exe; -1: absent */
	wss_ci_t peak_ci, total_ci;
} wss_process_note_t;

/* One effective setting from the header: "section.key", its value as JSON
 * text, and where it came from ("default", "file", "env", "flag"). */
typedef struct wss_setting {
	char *key, *value, *source;
} wss_setting_t;

typedef struct wss_profile {
	const char *path;
	/* header */
	char *tool, *exe, *kernel, *backend, *backend_reason, *backend_sees, *time_base;
	char *host; /* the machine's name, or NULL (profiles before the field) */
	char **argv;
	size_t argc;
	int64_t version, pid, ppid, page_size, interval_ns, window_intervals, window_ns; /* -1: absent */
	int64_t start_unix_ns;	/* wall-clock start, ns since the epoch; -1: absent */
	char *trace;		/* the page trace's file name (docs/trace-format.md), or NULL */
	/* The summary's "trace" member (-1: absent): what the run wrote. */
	int64_t trace_records, trace_pages, trace_bytes, trace_last;
	char *trace_stopped;	/* NULL: it ran to the end */
	char *track_mode;	/* "auto", "exact", "sampled", or NULL */
	char *config_file;	/* the session file, or NULL */
	char *session_dir;	/* the leader's: where the session's other profiles go, as a path from here; or NULL */
	wss_setting_t *settings; /* the header's config, in its order */
	size_t nsettings;
	bool has_seed;		/* sampling_seed was given */
	uint64_t sampling_seed; /* the page sample's seed (common/sample.h) */
	/* samples, in file order, and per-thread totals in order of appearance */
	wss_sample_t *samples;
	size_t nsamples, samples_cap;
	wss_load_thread_t *threads;
	size_t nthreads, threads_cap;
	int64_t *thread_index; /* open-addressing tid -> index + 1 */
	size_t thread_index_cap;
	bool has_read, has_write; /* some sample carried read_pages / write_pages */
	/* track.code: the header said so (code_tracked), or why not
	 * (code_off); the excluded objects ("name: why", code_nexcluded);
	 * some sample carried code_pages (has_code); the series' summary,
	 * and whether a sample was a lower bound. */
	bool code_tracked, has_code, code_lower_bound;
	char *code_off;
	char **code_excluded;
	size_t code_nexcluded;
	wss_stat_t code;
	/* Sampled tracking, from the samples: how many had rate > 1 and their
	 * smallest and largest rate, how many were lower bounds, and the sums
	 * of the cost members (has_cost: some sample had them), and of
	 * what the engine's own costs (tick, changes) are weighed against:
	 * the program's time or the interval's wall time, whichever is
	 * longer (engine/sampling.c, wss_policy_next). */
	size_t nsampled, nlower, nall_writes;
	int64_t rate_min, rate_max;
	bool has_cost;
	int64_t cost_faults_ns, cost_tick_ns, cost_change_ns, cost_program_ns, cost_code_ns, cost_base_ns;
	/* summary (has_summary) or what the samples give */
	bool has_summary;
	int64_t summary_samples, duration_ns, faults;
	wss_stat_t data, read, write;
	wss_stat_t kinds[WSS_KIND_N]; /* the summary's "kinds": the data series by kind (present: said) */
	bool summary_sampled, summary_lower_bound; /* the summary's "sampled", "lower_bound" */
	int64_t summary_rate_max;                  /* its "rate_max", -1: absent */
	char *precision_note;                      /* its "precision" "note": what missed the targets, or NULL */
	bool has_precision;                        /* its "precision": each interval's data estimate against the target */
	double precision_target_pct, precision_median_pct; /* median -1: not known */
	int64_t precision_intervals, precision_missed;
	/* its "census": pages of the data and write totals counted exactly by
	 * their presence, or why there were none (off) */
	bool has_census;
	int64_t census_data, census_write;
	char *census_off;
	/* the records added with peaks */
	wss_module_t *modules;
	size_t nmodules, modules_cap;
	wss_stack_t *stacks;
	size_t nstacks, stacks_cap;
	wss_peak_t *peaks;
	size_t npeaks, peaks_cap;
	wss_hot_t *hot;
	size_t nhot;
	wss_hot_t *hot_code; /* track.code: the code pages run in the most intervals */
	size_t nhot_code;
	/* The whole run's first-touch sites (the "sites" record at the end),
	 * most pages first, and the pages no site table slot counted. */
	bool has_sites;
	wss_site_t *sites;
	size_t nsites;
	int64_t sites_other;
	/* Allocation sites (track.alloc_sites), largest first, and the
	 * record's sampling mean, idle span and intervals counted. */
	bool has_alloc_sites;
	wss_alloc_site_t *alloc_sites;
	size_t nalloc_sites;
	int64_t alloc_mean, alloc_idle_after, alloc_intervals, alloc_cut, alloc_dropped;
	/* The session's other processes, as the leader's profile notes them. */
	wss_process_note_t *procs;
	size_t nprocs, procs_cap;
	/* WSS_LOAD_THREAD_SAMPLES: every sample's threads, in file order. */
	wss_sample_thread_t *sample_threads;
	size_t nsample_threads, sample_threads_cap;
	/* how the file ended */
	long lines;	/* complete lines read */
	long cut_line;	/* a last line cut short (and ignored), or 0 */
} wss_profile_t;

/* Reads the profile at path into p.  Returns 0, or prints one line
 * "wss: PATH[:LINE]: what" to stderr and returns WSS_EXIT_BADINPUT (also
 * for a missing or unreadable file), or 1 when out of memory; on error p
 * holds nothing to release. */
int wss_load_profile(const char *path, wss_profile_t *p);
/* The same, with flags: WSS_LOAD_THREAD_SAMPLES keeps each sample's
 * threads (p->sample_threads), which the plain report does not need. */
#define WSS_LOAD_THREAD_SAMPLES 1u
int wss_load_profile_flags(const char *path, wss_profile_t *p, unsigned flags);
void wss_load_release(wss_profile_t *p);
/* The path from here of name, a file named relative to the directory of
 * the profile at profile (or absolute): malloc'd, NULL when out of memory. */
char *wss_load_beside(const char *profile, const char *name);

/* The summary's numbers, or when the profile has none, those computed from
 * the samples (totals unknown).  Fills data/read/write of p.  */
void wss_load_stats(wss_profile_t *p);

/* sum / n in tenths of a page, rounded half up, 0 when n is 0: every
 * average the report prints with one decimal (summary and threads).  The
 * quotient and the remainder apart, so that a sum near 2^64 does not wrap
 * when it is multiplied by ten. */
static inline uint64_t wss_load_avg_tenths(uint64_t sum, uint64_t n)
{
	return n ? sum / n * 10 + (sum % n * 10 + n / 2) / n : 0;
}

/* Tenths of a page -> kB, rounded half up.  The loader holds page_size to
 * a power of two of at least 4 kB, so it is divided first: ten times a
 * count of pages times the page size can pass 2^64. */
static inline uint64_t wss_load_kb(uint64_t tenths, int64_t page_size)
{
	return (tenths * ((uint64_t)page_size / 1024) + 5) / 10;
}

/* Sums over the samples, saturating: each term is bounded by the loader
 * (below 2^62, or 2^63 bytes of pages), but a profile has no bound on its
 * number of samples.  wss_load_sat_add counts b < 0 (absent) as 0. */
static inline int64_t wss_load_sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return b <= 0 ? a : __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
static inline uint64_t wss_load_sat_addu(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Were some of the profile's counts estimated (sampled tracking)?  Are
 * some lower bounds (exact tracking with coarse blocks)? */
bool wss_load_sampled(const wss_profile_t *p);
bool wss_load_lower_bound(const wss_profile_t *p);

/* What tracking cost the program, in % of its time (wss report's
 * "overhead"): the faults against the program's time, the tick and the
 * changes of rate against that or the wall time, whichever is longer (as
 * the budget weighs them: engine/policy.c); -1 when the profile has no
 * costs. */
double wss_load_overhead_pct(const wss_profile_t *p);

/* The sample with this seq, or NULL. */
const wss_sample_t *wss_load_sample(const wss_profile_t *p, int64_t seq);
const wss_stack_t *wss_load_stack(const wss_profile_t *p, int64_t id);

/* The kinds the summary has (p->kinds[k].present), largest peak first:
 * order[0..n), n returned. */
int wss_load_kinds_by_peak(const wss_profile_t *p, int order[WSS_KIND_N]);

#endif
