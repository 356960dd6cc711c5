/* What the parts of `wss report` share: the text's sections (report.c, and
 * report_sites.c for the stacks' sections) and the JSON (report_json.c)
 * are built from the same loaded profile and the same frames, so that
 * their numbers agree. */
#ifndef WSS_CLI_REPORT_INTERNAL_H
#define WSS_CLI_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "cli/load.h"
#include "cli/symbols.h"

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

/* The text's sections with stacks (report_sites.c): allocation sites, the
 * run's first-touch sites, hot pages, hot code pages.  Each returns 0 or
 * ENOMEM. */
int wss_report_print_alloc_sites(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);
int wss_report_print_run_sites(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);
int wss_report_print_hot(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);
int wss_report_print_hot_code(const wss_profile_t *p, wss_symbols_t *syms, FILE *out);

#endif
