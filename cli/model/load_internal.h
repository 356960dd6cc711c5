/* What the profile reader's files share: cli/model/load.c opens the profile,
 * reads it a line at a time and hands each record to its reader
 * (cli/model/load_header.c the header's, cli/model/load_records.c the others'), which
 * check its members with load.c's checks.  A check or a reader that finds
 * the profile wrong says so once on stderr, "wss: PATH:LINE: what", and
 * leaves the exit status in ld->status. */
#ifndef WSS_CLI_LOAD_INTERNAL_H
#define WSS_CLI_LOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/model/json.h"
#include "cli/model/load.h"
#include "config/config.h"

/* What the engine can write, and so what a profile may say
 * (docs/profile-format.md, "Bounds"): every integer is below 2^62 (146
 * years of nanoseconds), and a count of pages times the page size is below
 * 2^63 bytes.  A profile past them was not written by wss; refusing it here
 * keeps the reports' arithmetic (pages times the page size, times in
 * tenths, twice an interval) inside 64 bits. */
#define LOAD_INT_LIMIT ((int64_t)1 << 62)
#define LOAD_PAGE_SIZE_MIN 4096
#define LOAD_PAGE_SIZE_MAX ((int64_t)1 << 30)
#define LOAD_RATE_MAX ((int64_t)1 << WSS_SAMPLE_LEVEL_MAX)

typedef struct loader {
	wss_profile_t *p;
	int64_t pages_limit; /* counts of pages are below this: 2^63 bytes of the header's pages */
	long line;
	int status;
	unsigned flags; /* WSS_LOAD_* */
	long summary_line; /* the summary's line, 0: none yet */
} loader_t;

/* load.c: the loader's errors and memory. */

/* "wss: PATH:LINE: what" (no line when line is 0); returns the status. */
int wss_load_bad(loader_t *ld, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "wss: PATH: out of memory"; returns the status. */
int wss_load_nomem(loader_t *ld);
/* Room for one more element, zeroed, in a growing array; NULL when out of
 * memory (said). */
void *wss_load_grow(loader_t *ld, void **items, size_t *n, size_t *cap, size_t size);
#define LOAD_GROW(ld, arr, n, cap) wss_load_grow((ld), (void **)&(arr), &(n), &(cap), sizeof *(arr))
/* A copy of s (NULL for NULL); NULL when out of memory (said). */
char *wss_load_dup(loader_t *ld, const char *s);

/* load.c: a record's members, checked.  Each returns true when the member
 * o[key] is as its name says (need_: present; opt_: present or absent, out
 * then unchanged), else false, having said why; rec names the record in
 * the message. */

/* A non-negative integer below 2^62 (a time, an id, a count). */
bool wss_load_need_int(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out);
bool wss_load_opt_int(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out);
/* A count of pages: below 2^63 bytes of the header's pages. */
bool wss_load_need_pages(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out);
bool wss_load_opt_pages(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out);
/* A string, copied into *out (false also when out of memory). */
bool wss_load_need_str(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out);
bool wss_load_opt_str(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out);
/* A file named relative to the profile's directory, as a path from here. */
bool wss_load_opt_beside(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out);
bool wss_load_opt_bool(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, bool *out);
/* An object: NULL in *out when absent. */
bool wss_load_opt_obj(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, const wss_json_t **out);
/* A 95 % interval [lo, hi] of pages, 0 <= lo <= hi. */
bool wss_load_opt_ci(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, wss_ci_t *out);
/* o's "ci": {"data":[lo,hi],"read":...,"write":...}, each optional. */
bool wss_load_opt_cis(loader_t *ld, const wss_json_t *o, const char *rec, wss_ci_t ci[WSS_SERIES_N]);
/* An address, "0x" and 1 to 16 hex digits: _parse_addr says nothing. */
bool wss_load_parse_addr(const wss_json_t *v, uint64_t *out);
bool wss_load_need_addr(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, uint64_t *out);

/* The readers, one per record type: each returns 0 or ld->status. */

/* load_header.c: the first line's. */
int wss_load_read_header(loader_t *ld, const wss_json_t *h);
/* load_records.c: the others', by the record's "type". */
int wss_load_read_sample(loader_t *ld, const wss_json_t *r);
int wss_load_read_summary(loader_t *ld, const wss_json_t *r);
int wss_load_read_module(loader_t *ld, const wss_json_t *r);
int wss_load_read_stack(loader_t *ld, const wss_json_t *r);
int wss_load_read_peak(loader_t *ld, const wss_json_t *r);
int wss_load_read_run_sites(loader_t *ld, const wss_json_t *r);
int wss_load_read_alloc_sites(loader_t *ld, const wss_json_t *r);
int wss_load_read_process(loader_t *ld, const wss_json_t *r);

#endif
