/* A JSON writer into a growable buffer (common/fmt.h), for the commands'
 * --json outputs: keys and commas kept track of by depth, numbers as the
 * shortest decimal that reads back the same, page averages in tenths, and
 * a sampled estimate's interval and ± as wss report prints them. */
#ifndef WSS_CLI_JW_H
#define WSS_CLI_JW_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/model/load.h"
#include "common/fmt.h"

typedef struct wss_jw {
	wss_fmt_t f;
	bool comma[32];
	int depth;
} wss_jw_t;

/* A growable buffer of initial bytes (0, or ENOMEM). */
int wss_jw_init(wss_jw_t *w, size_t initial);
/* key (NULL: an array's element) and the comma before it. */
void wss_jw_key(wss_jw_t *w, const char *key);
/* c: '{' or '['; closed with the matching character. */
void wss_jw_open(wss_jw_t *w, const char *key, char c);
void wss_jw_close(wss_jw_t *w, char c);
void wss_jw_int(wss_jw_t *w, const char *key, int64_t v);
/* v < 0: null. */
void wss_jw_int_or_null(wss_jw_t *w, const char *key, int64_t v);
/* s NULL: null. */
void wss_jw_str(wss_jw_t *w, const char *key, const char *s);
void wss_jw_bool(wss_jw_t *w, const char *key, bool b);
/* "0x..." */
void wss_jw_hex(wss_jw_t *w, const char *key, uint64_t v);
/* The shortest decimal that reads back as the same double. */
void wss_jw_num(wss_jw_t *w, const char *key, double v);
/* tenths / 10 with one decimal. */
void wss_jw_tenths(wss_jw_t *w, const char *key, int64_t tenths);
/* An interval as the profile has it, [lo, hi]; nothing when absent. */
void wss_jw_ci(wss_jw_t *w, const char *key, const wss_ci_t *ci);
/* ± of an estimate: the larger half-width of its interval, in per cent
 * of it (what the text report prints, to one decimal); nothing when it
 * has none. */
void wss_jw_pm(wss_jw_t *w, const char *key, double est, const wss_ci_t *ci);

#endif
