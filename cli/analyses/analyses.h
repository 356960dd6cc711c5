/* The trace analyses of the `wss` command (docs/analyses.md): heatmap,
 * window, mrc, simulate and replay, a file each (analyses_NAME.c,
 * replay.c), and what they share (analyses.c): a profile opened with the
 * page trace its header names, a first pass that checks every record
 * before anything is printed, the options of their command lines and
 * their three output forms. */
#ifndef WSS_CLI_ANALYSES_H
#define WSS_CLI_ANALYSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/model/load.h"
#include "cli/analyses/policy.h"
#include "cli/analyses/ranges.h"
#include "cli/model/trace.h"
#include "common/fmt.h"

/* The analyses work on the trace's runs as ranges: time and memory follow
 * the runs and events, never the pages a run claims.  The tests build a
 * second wss with WSS_PER_PAGE 1 (tests/Makefile.inc), whose analyses
 * walk every run page by page instead: a reference for the range
 * arithmetic, which must give the same output byte for byte. */
#ifndef WSS_PER_PAGE
#define WSS_PER_PAGE 0
#endif

/* What a command returns when it was asked for --help (wss.c prints the
 * usage). */
#define WSS_CMD_HELP (-1)

/* The subcommands: argv[0] is the subcommand's name.  Each returns the
 * command's exit status (0, 1 for an error of the system, 2 for bad input
 * or usage, said on stderr in one line) or WSS_CMD_HELP. */
int wss_cmd_heatmap(int argc, char **argv);
int wss_cmd_window(int argc, char **argv);
int wss_cmd_mrc(int argc, char **argv);
int wss_cmd_simulate(int argc, char **argv);
int wss_cmd_replay(int argc, char **argv);

/* ---- heatmap, mrc and simulate as functions ----
 * The command and `wss report --html`, which embeds their --json
 * documents, call the same function: each writes the --json document of
 * the profile at path into f (common/fmt.h), without the newline the
 * command ends it with.  Each returns the command's status: 0, or 1 or 2
 * with its line on stderr, and then has written nothing to f. */

/* wss heatmap's options: bins 0 for the default grid. */
typedef struct wss_heatmap_opts {
	uint64_t time_bins, page_bins;
	bool by_address;
} wss_heatmap_opts_t;

int wss_heatmap_json(const char *path, const wss_heatmap_opts_t *o, wss_fmt_t *f);

/* wss mrc's options. */
typedef struct wss_mrc_opts {
	const uint64_t *sizes; /* NULL: powers of two up to the distinct pages */
	size_t nsizes;
	bool no_opt; /* LRU alone: OPT walks the string, which has a limit */
} wss_mrc_opts_t;

int wss_mrc_json(const char *path, const wss_mrc_opts_t *o, wss_fmt_t *f);

/* wss simulate's options. */
typedef struct wss_simulate_opts {
	wss_policy_kind_t kinds[WSS_POLICY_N];
	size_t nkinds;		/* 0: every policy */
	const uint64_t *frames; /* NULL: the default sizes */
	size_t nframes;
	uint64_t period; /* references a period; 0: a tenth of them */
	bool all;	 /* the text at every size, over time (--all) */
} wss_simulate_opts_t;

int wss_simulate_json(const char *path, const wss_simulate_opts_t *o, wss_fmt_t *f);

/* The smallest LRU memory, in pages, that would have hit pct % of the
 * re-references of the profile at path's trace (wss mrc's "lru_hit_sizes"),
 * into *pages (0: nothing was referenced twice).  Returns 0, or the
 * command's status with its line on stderr (no trace, a bad one). */
int wss_mrc_hit_size(const char *path, unsigned pct, uint64_t *pages);

/* ---- shared by the analyses and replay.c ---- */

typedef enum wss_out { WSS_OUT_TEXT, WSS_OUT_CSV, WSS_OUT_JSON } wss_out_t;

/* An option of a subcommand: a flag (flag set) or one with a value
 * (value set to it). */
typedef struct wss_opt {
	const char *name;
	const char **value;
	bool *flag;
} wss_opt_t;

/* Parses argv[1..] of subcommand cmd: the options in opts, the operands
 * into paths (at most maxpaths; exactly want of them unless want is 0).
 * Returns 0, WSS_CMD_HELP, or prints the error and returns 2. */
int wss_opts_parse(const char *cmd, int argc, char **argv, const wss_opt_t *opts, size_t nopts, const char **paths,
		   size_t maxpaths, size_t *npaths, const char *synopsis);

/* A whole number in [min, max] for option name of cmd.  Returns 0 or
 * prints the error and returns 2. */
int wss_opts_number(const char *cmd, const char *name, const char *v, uint64_t min, uint64_t max, uint64_t *out);

/* *array (a T *, passed as its address) holding at least n elements of
 * size bytes, its capacity *cap doubled as needed.  Returns 0 or ENOMEM
 * (then *array is as it was). */
int wss_reserve(void *array, size_t *cap, size_t n, size_t size);

/* A profile and its trace. */
typedef struct wss_pair {
	wss_profile_t prof;
	wss_trace_t trace;
	char *trace_path;
} wss_pair_t;

/* Loads the profile at path and opens the trace its header names, beside
 * it; a profile without one is refused with the command that records
 * one.  Returns 0, 2 (said on stderr) or 1; on error p holds nothing. */
int wss_pair_open(const char *path, wss_pair_t *p);
void wss_pair_close(wss_pair_t *p);

/* The first pass: every record checked; the distinct pages, as ranges,
 * numbered in address order; each interval's seq, t_ns and level. */
typedef struct wss_scan {
	wss_ranges_t pages;
	uint64_t intervals;
	uint64_t *seq, *t_ns;
	uint8_t *level;
	unsigned level_max;
	bool writes; /* some interval tells written pages apart */
} wss_scan_t;

/* Runs the first pass over p's trace and rewinds it.  Returns 0, 2 or 1
 * (said on stderr); on error s holds nothing. */
int wss_scan_run(wss_pair_t *p, wss_scan_t *s);
void wss_scan_release(wss_scan_t *s);

/* When the trace did not end with a normal end record: one line
 * "wss: TRACE: truncated at byte N ..." on stderr (every output form
 * gets it; text and JSON say it again in their own place). */
void wss_pair_note_end(const wss_pair_t *p);

#endif
