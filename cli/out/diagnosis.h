/* The diagnosis: the first paragraph of `wss report` (text and JSON) and
 * of the HTML page, saying in plain words what a run means: the working
 * set most intervals fit in, the peak and the code behind it, the memory
 * that would have kept misses low, how far the figures can be trusted,
 * and what to try next.  Built from the loaded profile (and its trace,
 * when it has one) alone: the sections below it give every figure's
 * detail, and the paragraph never says what they do not. */
#ifndef WSS_CLI_DIAGNOSIS_H
#define WSS_CLI_DIAGNOSIS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/model/load.h"
#include "cli/model/session.h"
#include "cli/model/symbols.h"

typedef struct wss_diag {
	size_t intervals;   /* the samples p50, p95 and p99 are of (whole intervals; the last, partial one when alone) */
	int64_t p50, p95, p99; /* their data pages (nearest rank); -1: no samples.  p95 and p99 are the
				* right-sizing figures: the memory that held the working set in 95 % and
				* 99 % of the windows */
	int64_t low, high;  /* their smallest and largest */
	int64_t peak;       /* the data peak, pages (the summary's, else the largest sample's); -1: none */
	int64_t peak_t_ns, peak_seq; /* the largest sample's time and seq; -1: none */
	bool peak_final;    /* it is the sample taken at exit (a partial interval) */
	char *peak_code;    /* the code that first touched most of the peak's pages, or NULL */
	int peak_share;     /* its share of the peak's first touches, % */
	int64_t lru99;      /* pages of an LRU memory hitting 99 % of re-references; -1: no trace read */
	char *text;         /* the paragraph: numbers and their units joined by no-break spaces */
} wss_diag_t;

/* Builds d for p, symbolising with syms; s is p's session when p is the
 * first profile of one (wss_session_build: the caller builds it once for
 * the paragraph and the table), else NULL.  A trace that cannot be read
 * is left out (its line on stderr, as wss mrc would print it).  Returns 0
 * or ENOMEM. */
int wss_diag_build(wss_profile_t *p, wss_symbols_t *syms, const wss_session_t *s, wss_diag_t *d);
void wss_diag_release(wss_diag_t *d);

/* d's paragraph, wrapped at width columns. */
void wss_diag_print(const wss_diag_t *d, FILE *out, int width);
/* d's text with its no-break spaces made plain ones. */
void wss_diag_plain(wss_diag_t *d);
/* The right-sizing line of wss report's figures: the data working set
 * that 95 % and 99 % of the whole intervals fit in (p95, p99, nearest
 * rank), from 10 intervals on; nothing with fewer.  Returns 0 or ENOMEM. */
int wss_diag_right_size(const wss_profile_t *p, FILE *out);
/* Build, print at 80 columns, release.  Returns 0 or ENOMEM. */
int wss_diag_text(wss_profile_t *p, wss_symbols_t *syms, const wss_session_t *s, FILE *out);

#endif
