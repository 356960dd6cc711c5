/* Reading a page trace (docs/trace-format.md): the 16-byte header, then
 * one record at a time, each checked against its CRC-32 and decoded into
 * its interval's runs of pages.  The reader holds one record and its runs,
 * never the whole trace: the analyses keep what they need per distinct
 * page.  A trace cut short (a last record incomplete, or no end record) is
 * read up to its last whole record and said to be truncated; anything else
 * that is not the format is an error naming the byte where it is. */
#ifndef WSS_CLI_TRACE_H
#define WSS_CLI_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/tracefmt.h" /* the format's constants and codec */

struct wss_profile;

/* Consecutive pages first touched in the interval by one thread, all
 * written or all not. */
typedef struct wss_trace_run {
	uint64_t first; /* page number (address >> page shift) */
	uint64_t n;	/* pages, >= 1 */
	uint64_t tid;	/* 0: unknown */
	bool written;
} wss_trace_run_t;

/* Pages that left tracking in the interval ("gone": unmapped or mapped
 * over), or moved there with their history (mremap), in the order they
 * happened, all before the interval's tick. */
typedef struct wss_trace_event {
	unsigned type; /* WSS_TRACE_EV_* */
	uint64_t from, to, n; /* pages [from, from + n); moved to [to, to + n) */
} wss_trace_event_t;

/* Where decoded records keep their runs and events (grown as needed). */
typedef struct wss_trace_store {
	struct wss_trace_run *runs;
	size_t runs_cap;
	wss_trace_event_t *events;
	size_t events_cap;
} wss_trace_store_t;

/* One interval record, decoded; runs and events point into the reader's
 * buffers and are valid until the next call. */
typedef struct wss_trace_interval {
	uint64_t seq, t_ns;
	unsigned level; /* the pages are the members of rate 2^level touched */
	unsigned sets;	/* WSS_TRACE_SETS_* */
	const wss_trace_run_t *runs;
	size_t nruns;
	const wss_trace_event_t *events;
	size_t nevents;
	uint64_t pages;	 /* the runs' pages, summed */
	uint64_t offset; /* the record's first byte in the file */
} wss_trace_interval_t;

typedef struct wss_trace {
	char *path; /* for messages */
	FILE *f;
	uint64_t size; /* the file's size when opened */
	unsigned page_shift;
	/* With member_check, a page listed at a level above 0 that is not a
	 * member of that level under seed is an error (the profile's sample
	 * and the trace disagree). */
	bool member_check;
	uint64_t seed;
	/* With prof, the profile the trace belongs to: interval k may list
	 * no more pages than its sample k says the interval could hold (see
	 * check_sample in trace.c), so a claimed run of 2^30 pages in a few
	 * bytes is refused before an analysis walks it. */
	const struct wss_profile *prof;
	/* Where reading is, and what it found. */
	uint64_t off;	     /* the next record's first byte */
	uint64_t intervals;  /* whole interval records read */
	uint64_t first_seq, last_seq;
	bool ended;	     /* the end record was read */
	uint64_t end_reason, end_last, end_errno;
	bool truncated;	     /* no end record: the trace stops at off */
	bool cut;	     /* ... and bytes of an incomplete record follow */
	uint8_t *buf;
	size_t buf_cap;
	wss_trace_store_t store;
} wss_trace_t;

/* Opens the trace at path and checks its header.  Returns 0, or prints
 * "wss: PATH: what" and returns WSS_EXIT_BADINPUT (cli/model/load.h), or 1 when
 * out of memory; on error t holds nothing to release. */
int wss_trace_open(wss_trace_t *t, const char *path);

/* The next interval record into iv (*got true), or the end of the trace
 * (*got false: t->ended or t->truncated says which).  Returns 0, or prints
 * "wss: PATH: byte N: what" for a corrupt record and returns
 * WSS_EXIT_BADINPUT, or 1 when out of memory. */
int wss_trace_next(wss_trace_t *t, wss_trace_interval_t *iv, bool *got);

/* Back to the first record, for another pass.  Returns 0 or as above. */
int wss_trace_rewind(wss_trace_t *t);
void wss_trace_close(wss_trace_t *t);

/* One line saying how the trace ends when it was cut short, for the
 * analyses' output ("truncated at byte N ..."), into buf; "" otherwise. */
void wss_trace_describe_end(const wss_trace_t *t, char *buf, size_t n);

/* ---- pure decoding, for the reader and its unit tests ---- */

/* Decodes the payload of an interval record (n bytes at p) into iv, its
 * runs and events in st, page numbers below 2^(64 - page_shift).  Returns
 * 0, ENOMEM, or EINVAL with *at the offset in the payload of the field at
 * fault and *why what is wrong. */
int wss_trace_decode_interval(const uint8_t *p, size_t n, unsigned page_shift, wss_trace_interval_t *iv,
			      wss_trace_store_t *st, size_t *at, const char **why);

#endif
