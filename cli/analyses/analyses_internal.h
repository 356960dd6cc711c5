/* What the files of the trace analyses share besides analyses.h:
 * analyses.c's helpers for every command, the window's series
 * (analyses_window.c, filled page by page in analyses_window_pages.c
 * for the tests' build), and the reference string of mrc and simulate
 * with its LRU stack distances (analyses_refs.c). */
#ifndef WSS_CLI_ANALYSES_INTERNAL_H
#define WSS_CLI_ANALYSES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/analyses/analyses.h"
#include "cli/model/load.h"
#include "cli/model/trace.h"
#include "common/estimate.h"
#include "common/fmt.h"

/* ---- analyses.c ---- */

/* "wss: CMD: WHATARG" and where to find help, on stderr.  Returns 2. */
int wss_analyses_usage_error(const char *cmd, const char *what, const char *arg);
/* --csv and --json, at most one, into *out.  Returns 0 or 2 (said). */
int wss_analyses_output_form(const char *cmd, bool csv, bool json, wss_out_t *out);
/* A comma-separated list of whole numbers, each in [min, max], into a
 * new array.  Returns 0, 2 (said) or 1. */
int wss_analyses_number_list(const char *cmd, const char *name, const char *v, uint64_t min, uint64_t max,
			     uint64_t **out, size_t *n);
/* wss_pair_open then wss_scan_run: the usual start of a command.  Returns
 * 0, 2 or 1 (said on stderr); on error p and s hold nothing. */
int wss_analyses_open_scanned(const char *path, wss_pair_t *p, wss_scan_t *s);
/* "wss: CMD: out of memory" on stderr.  Returns 1. */
int wss_analyses_nomem(const char *cmd);
/* printf into f: the commands' format strings kept for their JSON,
 * which is built in a buffer (what `wss report --html` embeds). */
void wss_analyses_jf(wss_fmt_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A finite double as JSON (the shortest form that reads back). */
void wss_analyses_json_num(wss_fmt_t *f, double v);
/* "profile", "trace" and how the trace ended, the members every JSON
 * document of the analyses opens with (after its '{'). */
void wss_analyses_json_source(wss_fmt_t *f, const wss_pair_t *p);
/* f a growable buffer for a command's document.  Returns 0 or 1 (said). */
int wss_analyses_json_init(wss_fmt_t *f, const char *cmd);
/* The document in f and a newline written to out and flushed when r, the
 * status of the run that wrote it, is 0; f released.  Returns r, or 1
 * said on stderr (out of memory, the write's error). */
int wss_analyses_json_write(wss_fmt_t *f, int r, FILE *out, const char *cmd);
/* The text forms' first lines: what was read, and how the trace ended
 * when that was not normal. */
void wss_analyses_text_source(FILE *out, const char *cmd, const wss_pair_t *p);
/* out flushed.  Returns 0, or 1 with the write's error on stderr. */
int wss_analyses_finish(FILE *out, const char *cmd);

/* ---- analyses_window.c, for analyses_window_pages.c ---- */

/* An interval's sample: the window ending there, as the profile's own. */
typedef struct wss_window_sample {
	uint64_t seq, t_ns;
	unsigned level;
	uint64_t x, xw; /* members touched, written in the window */
	wss_estimate_t data, write;
	uint64_t read;
	bool ci; /* data and write have intervals (sampled, tracked pages known) */
} wss_window_sample_t;

/* The series, a sample per interval: its data's sum and peak, and the
 * run's distinct pages (total). */
typedef struct wss_window_result {
	wss_window_sample_t *v;
	size_t n;
	uint64_t sum, peak, total;
	bool total_estimated;
} wss_window_result_t;

/* The window's level: the coarsest of its intervals, a sliding maximum
 * over the deque dq[qh..qt) of decreasing levels; and the series it
 * fills. */
typedef struct wss_window_levels {
	size_t *dq, qh, qt;
} wss_window_levels_t;

/* res and q made ready for the intervals of s.  Returns 0 or ENOMEM
 * (wss_window_end then releases what was allocated). */
int wss_window_start(const wss_scan_t *s, wss_window_result_t *res, wss_window_levels_t *q);
/* Interval i (seq k) enters the window of n: the window's level now. */
unsigned wss_window_level(const wss_scan_t *s, wss_window_levels_t *q, size_t i, uint64_t k, uint64_t n);
/* The sample of interval iv appended to res: x members of level touched
 * in the window, xw of them written. */
void wss_window_add(const wss_profile_t *prof, wss_window_result_t *res, const wss_trace_interval_t *iv, unsigned level,
		    uint64_t x, uint64_t xw);
/* q released, and res's series when r (an error) is not 0.  Returns r. */
int wss_window_end(wss_window_result_t *res, wss_window_levels_t *q, int r);

/* ---- analyses_window_pages.c ---- */

/* The series for window n, page by page (the tests' reference build).
 * Returns 0, 1 or 2 (said on stderr); on error res holds nothing. */
int wss_window_compute_pages(wss_pair_t *p, const wss_scan_t *s, uint64_t n, wss_window_result_t *res);

/* ---- analyses_refs.c, for analyses_mrc.c and analyses_simulate.c ---- */

/* The trace's pages, interval by interval, in increasing address order
 * within each interval: one reference per page and interval.  At a
 * sampled level the string keeps the members of the trace's coarsest
 * level (the sample every interval observed), each standing for rate
 * pages: a spatially sampled string (SHARDS).  A reference is named by a
 * key: its page number, or at a sampled level its aligned block's number
 * (a block has one member), so that the references of a run are
 * consecutive keys. */
typedef struct wss_refs {
	uint32_t *r; /* per reference: its key's index (wss_refs_build) */
	size_t n, cap;
	size_t *ends; /* per interval: n after it */
	size_t nends;
	size_t npages; /* key indices are below this */
	uint64_t distinct;
	uint64_t peak; /* the most references of one interval (unscaled) */
	unsigned level;
	uint64_t rate;
} wss_refs_t;

/* rs's arrays freed, rs emptied. */
void wss_refs_release(wss_refs_t *rs);
/* The string, one reference at a time, for walker (the policies, OPT)
 * (second pass).  Returns 0, or says why not and returns 1 or 2 (more
 * than REFS_MAX references). */
int wss_refs_build(wss_pair_t *p, const wss_scan_t *s, wss_refs_t *rs, const char *cmd, const char *walker);
/* Frames of the sampled string for a memory of size pages: size / rate,
 * rounded down. */
size_t wss_refs_scaled_frames(const wss_refs_t *rs, uint64_t size);
/* The default sizes, into a new array: powers of two up to the distinct
 * pages, and those.  Returns 0 or ENOMEM. */
int wss_refs_default_sizes(uint64_t distinct, uint64_t **sizes, size_t *n);

/* The histogram of stack distances: count references at each distance
 * (0: a first reference), as pairs, sorted and summed up by
 * wss_refs_dist_finish: as many as the ranges that produced them,
 * whatever their lengths. */
typedef struct wss_refs_dist_count {
	uint64_t dist, count;
} wss_refs_dist_count_t;

/* What simulate's LRU needs besides the histogram: its hits at each
 * size, in all and per period of the string, from the distances and
 * positions of the references as they come. */
typedef struct wss_refs_dist_sink {
	size_t n;		/* sizes */
	const uint64_t *frames; /* per size: frames of the sampled string */
	uint64_t *hits;		/* per size */
	uint64_t **period_hits; /* per size, per period */
	uint64_t period;	/* references a period */
} wss_refs_dist_sink_t;

typedef struct wss_refs_dists {
	wss_refs_dist_count_t *v;
	size_t n, cap;
	uint64_t cold, reuse; /* after wss_refs_dist_finish */
	wss_refs_dist_sink_t *sink;
} wss_refs_dists_t;

/* count references from position pos on, at distance dist (0: first
 * references), into h.  Returns 0 or ENOMEM. */
int wss_refs_dist_add(wss_refs_dists_t *h, uint64_t dist, uint64_t count, uint64_t pos);
/* h sorted by distance, the first references set apart (cold), the
 * re-references' counts made cumulative. */
void wss_refs_dist_finish(wss_refs_dists_t *h);
/* mrc's histogram over ranges (second pass) into h, with the string's
 * length and distinct keys in rs.  Returns 0, 1 (said) or the trace
 * reader's status. */
int wss_refs_mrc_ranges(wss_pair_t *p, const wss_scan_t *s, wss_refs_t *rs, wss_refs_dists_t *h);

#endif
