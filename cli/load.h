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

/* Exit status for input that is not a readable profile. */
#define WSS_EXIT_BADINPUT 2

typedef struct wss_sample {
	int64_t seq, t_ns, cpu_ns; /* cpu_ns: -1 when absent */
	int64_t data, read, write; /* read, write: -1 when the backend does not see them */
} wss_sample_t;

/* One thread's totals (named apart from the engine's wss_thread_t, which is
 * a live thread, so that a grep or a debugger finds the one meant). */
typedef struct wss_load_thread {
	int64_t tid;
	uint64_t samples;	  /* samples it appears in */
	uint64_t data_sum, data_peak;
	uint64_t write_sum, write_peak;
	bool has_write;
	uint64_t faults; /* first touches, summed over its samples */
	int64_t cpu_ns;	 /* its last recorded CPU time, -1 if never */
} wss_load_thread_t;

/* avg/peak/total of one series.  avg_tenths is the mean in tenths of a
 * page (the summary writes one decimal); total < 0 when unknown. */
typedef struct wss_stat {
	bool present;
	int64_t avg_tenths, peak, total;
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
	int64_t stack, pages;
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
} wss_hot_t;

typedef struct wss_profile {
	const char *path;
	/* header */
	char *tool, *exe, *kernel, *backend, *backend_reason, *backend_sees, *time_base;
	char **argv;
	size_t argc;
	int64_t version, pid, ppid, page_size, interval_ns, window_intervals, window_ns; /* -1: absent */
	/* samples, in file order, and per-thread totals in order of appearance */
	wss_sample_t *samples;
	size_t nsamples, samples_cap;
	wss_load_thread_t *threads;
	size_t nthreads, threads_cap;
	int64_t *thread_index; /* open-addressing tid -> index + 1 */
	size_t thread_index_cap;
	bool has_read, has_write; /* some sample carried read_pages / write_pages */
	/* summary (has_summary) or what the samples give */
	bool has_summary;
	int64_t summary_samples, duration_ns, faults;
	wss_stat_t data, read, write;
	/* the records added with peaks */
	wss_module_t *modules;
	size_t nmodules, modules_cap;
	wss_stack_t *stacks;
	size_t nstacks, stacks_cap;
	wss_peak_t *peaks;
	size_t npeaks, peaks_cap;
	wss_hot_t *hot;
	size_t nhot;
	/* how the file ended */
	long lines;	/* complete lines read */
	long cut_line;	/* a last line cut short (and ignored), or 0 */
} wss_profile_t;

/* Reads the profile at path into p.  Returns 0, or prints one line
 * "wss: PATH[:LINE]: what" to stderr and returns WSS_EXIT_BADINPUT (also
 * for a missing or unreadable file), or 1 when out of memory; on error p
 * holds nothing to release. */
int wss_load_profile(const char *path, wss_profile_t *p);
void wss_load_release(wss_profile_t *p);

/* The summary's numbers, or when the profile has none, those computed from
 * the samples (totals unknown).  Fills data/read/write of p.  */
void wss_load_stats(wss_profile_t *p);

/* sum / n in tenths of a page, rounded half up, 0 when n is 0: every
 * average the report prints with one decimal (summary and threads). */
static inline uint64_t wss_load_avg_tenths(uint64_t sum, uint64_t n) { return n ? (sum * 10 + n / 2) / n : 0; }

/* The sample with this seq, or NULL. */
const wss_sample_t *wss_load_sample(const wss_profile_t *p, int64_t seq);
const wss_stack_t *wss_load_stack(const wss_profile_t *p, int64_t id);

#endif
