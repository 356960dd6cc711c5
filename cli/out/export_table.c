/* `wss export --format table|jsonl` (export.h): profiles as rows of one
 * table with a fixed schema, one row per process and interval, so that a
 * fleet's profiles, exported one by one or together, concatenate into
 * one table that DuckDB, ClickHouse or pandas read directly (CSV with a
 * header row, or JSON Lines; docs/report.md, "--format table").  The
 * columns never depend on what a profile holds: a value a profile lacks
 * is an empty field (null in JSON). */
#include "config.h"
#include "cli/out/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/kinds.h"

/* The columns, in order; the kinds' follow "kind_" + name + "_pages". */
static const char *const columns[] = {
	"host",	      "profile",     "pid",	   "ppid",	  "program", "start_unix_ns", "interval_ns",
	"window_ns",  "page_size",   "seq",	   "t_ns",	  "t_unix_ns", "final",	      "rate",
	"data_pages", "data_lo",     "data_hi",	   "read_pages",  "write_pages", "data_bytes",
};
#define NCOLS (sizeof columns / sizeof *columns)

typedef struct cell {
	bool str, absent;
	const char *s;
	int64_t i;
	double d;
	bool is_d;
} cell_t;

/* A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line
 * break, as a path or a host name may. */
static void csv_str(wss_fmt_t *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		wss_fmt_str(f, s);
		return;
	}
	wss_fmt_ch(f, '"');
	for (; *s; s++) {
		if (*s == '"')
			wss_fmt_ch(f, '"');
		wss_fmt_ch(f, *s);
	}
	wss_fmt_ch(f, '"');
}

static void put_cell(wss_fmt_t *f, const cell_t *c, bool json)
{
	if (c->absent) {
		if (json)
			wss_fmt_str(f, "null");
	} else if (c->str) {
		if (json)
			wss_fmt_json_str(f, c->s);
		else
			csv_str(f, c->s);
	} else if (c->is_d) {
		char b[40];
		snprintf(b, sizeof b, "%.1f", c->d);
		wss_fmt_str(f, b);
	} else
		wss_fmt_i64(f, c->i);
}

static void header_row(wss_fmt_t *f)
{
	for (size_t k = 0; k < NCOLS; k++) {
		wss_fmt_str(f, k ? "," : "");
		wss_fmt_str(f, columns[k]);
	}
	for (int k = 1; k < WSS_KIND_N; k++) {
		wss_fmt_str(f, ",kind_");
		wss_fmt_str(f, wss_kind_name(k));
		wss_fmt_str(f, "_pages");
	}
	wss_fmt_ch(f, '\n');
}

static cell_t S(const char *s) { return (cell_t){.str = true, .absent = !s, .s = s}; }
static cell_t I(int64_t v) { return (cell_t){.absent = v < 0, .i = v}; }
static cell_t D(bool present, double v) { return (cell_t){.absent = !present, .is_d = true, .d = v}; }

static void row(wss_fmt_t *f, const wss_profile_t *p, const char *program, const wss_sample_t *s, bool json)
{
	int64_t ps = p->page_size > 0 ? p->page_size : 4096;
	int64_t start = p->start_unix_ns;
	cell_t c[NCOLS] = {
		S(p->host),
		S(p->path),
		I(p->pid),
		I(p->ppid),
		S(program),
		I(start),
		I(p->interval_ns),
		I(p->window_ns),
		I(p->page_size),
		I(s->seq),
		I(s->t_ns),
		I(start >= 0 ? start + s->t_ns : -1),
		I(s->final),
		I(s->rate > 0 ? s->rate : 1),
		I(s->data),
		D(s->ci[WSS_SERIES_DATA].present, s->ci[WSS_SERIES_DATA].lo),
		D(s->ci[WSS_SERIES_DATA].present, s->ci[WSS_SERIES_DATA].hi),
		I(s->read),
		I(s->write),
		I(s->data >= 0 ? s->data * ps : -1),
	};
	wss_fmt_str(f, json ? "{" : "");
	for (size_t k = 0; k < NCOLS + WSS_KIND_N - 1; k++) {
		if (k)
			wss_fmt_ch(f, ',');
		cell_t kc;
		const cell_t *cell = &c[k];
		if (k >= NCOLS) {
			kc = I(s->kind_data[k - NCOLS + 1]);
			cell = &kc;
		}
		if (json) {
			wss_fmt_ch(f, '"');
			if (k < NCOLS)
				wss_fmt_str(f, columns[k]);
			else {
				wss_fmt_str(f, "kind_");
				wss_fmt_str(f, wss_kind_name((int)(k - NCOLS + 1)));
				wss_fmt_str(f, "_pages");
			}
			wss_fmt_str(f, "\":");
		}
		put_cell(f, cell, json);
	}
	wss_fmt_str(f, json ? "}\n" : "\n");
}

int wss_export_table(const wss_profile_t *p, wss_sink_t *out, bool json, bool header)
{
	wss_fmt_t *f = &out->f;
	if (header && !json)
		header_row(f);
	const char *exe = p->exe ? p->exe : "", *slash = strrchr(exe, '/');
	const char *program = p->exe ? (slash ? slash + 1 : exe) : NULL;
	for (size_t k = 0; k < p->nsamples; k++) {
		row(f, p, program, &p->samples[k], json);
		int r = wss_sink_flush(out, false);
		if (r)
			return r;
	}
	return wss_sink_flush(out, true);
}
