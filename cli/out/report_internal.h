/* What the parts of `wss report` share: the text's sections (report.c, and
 * report_sites.c for the stacks' sections) and the JSON (report_json.c)
 * are built from the same loaded profile and the same frames, so that
 * their numbers agree. */
#ifndef WSS_CLI_REPORT_INTERNAL_H
#define WSS_CLI_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/model/load.h"
#include "cli/model/symbols.h"

/* A growing array of frames (wss_sym_frames). */
typedef struct wss_report_frames {
	wss_frame_t *f;
	size_t n, cap;
} wss_report_frames_t;

/* Peaks are numbered in time order, whatever order the file has. */
void wss_report_sort_peaks(wss_profile_t *p);
/* A first-touch site's frames: its stack's, or, when no stack was
 * captured, the touching instruction's alone.  Returns 0, ENOMEM, or
 * ENOENT when its stack is not in the profile. */
int wss_report_site_frames(const wss_profile_t *p, wss_symbols_t *syms, const wss_site_t *site,
			   wss_report_frames_t *out);
/* An allocation site's frames (all return addresses).  Returns 0, ENOMEM,
 * or ENOENT when its stack is not in the profile (or none: stack 0). */
int wss_report_alloc_frames(const wss_profile_t *p, wss_symbols_t *syms, int64_t stack, wss_report_frames_t *out);
/* path's last component. */
const char *wss_report_base_name(const char *path);
/* "function (file:line)", "function+0x1c (module)", "module+0x1234", or
 * the bare address. */
void wss_report_print_frame(FILE *out, const wss_frame_t *f);

/* fr's frames as a stack, a line each, innermost first (report_sites.c);
 * each run of a runtime's interpreter frames as one line,
 * "[python interpreter: 14 frames]", unless raw (cli/model/fold.h).  addrs: an
 * address column (the peaks' sites).  max: the most lines, 0 for all.
 * Returns how many frames were left out for max. */
size_t wss_report_print_stack(FILE *out, const wss_report_frames_t *fr, bool addrs, size_t max, bool raw);

/* The text's sections with stacks (report_sites.c): allocation sites, the
 * run's first-touch sites, hot pages, hot code pages.  Each returns 0 or
 * ENOMEM.  raw: as wss_report_print_stack's. */
int wss_report_print_alloc_sites(const wss_profile_t *p, wss_symbols_t *syms, bool raw, FILE *out);
int wss_report_print_run_sites(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);
int wss_report_print_hot(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);
int wss_report_print_hot_code(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);

#endif
