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
#include <stdio.h>

#include "cli/load.h"
#include "cli/ranges.h"
#include "cli/trace.h"

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

/* heatmap, mrc and simulate writing their output to out instead of
 * stdout (`wss report --html` embeds their --json documents); errors
 * still go to stderr, and the status is the command's. */
int wss_cmd_heatmap_to(int argc, char **argv, FILE *out);
int wss_cmd_mrc_to(int argc, char **argv, FILE *out);
int wss_cmd_simulate_to(int argc, char **argv, FILE *out);

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
