/* The trace analyses (analyses.h): `wss heatmap`, `wss window`, `wss mrc`
 * and `wss simulate`, and the plumbing replay.c shares.  Every command
 * reads the trace twice: a first pass checks every record (so a corrupt
 * trace is refused before any output) and collects the distinct pages;
 * the second computes.  Per-page state lives in arrays indexed by the
 * page map, so memory follows the distinct pages; mrc and simulate also
 * hold their reference string (4 bytes a reference, 12 with OPT, which
 * needs each reference's next use).  docs/analyses.md defines what each
 * computes and what it can claim. */
#include "config.h"
#include "cli/analyses.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/heatmap.h"
#include "cli/mrc.h"
#include "cli/policy.h"
#include "cli/text.h"
#include "common/estimate.h"
#include "common/fmt.h"
#include "common/sample.h"

#define EXIT_USAGE 2
#define MIB (1024.0 * 1024.0)

/* ---- options ---- */

static int usage_error(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "wss: %s: %s%s\n", cmd, what, arg ? arg : "");
	fputs("wss: try 'wss --help'\n", stderr);
	return EXIT_USAGE;
}

int wss_opts_parse(const char *cmd, int argc, char **argv, const wss_opt_t *opts, size_t nopts, const char **paths,
		   size_t maxpaths, size_t *npaths, const char *synopsis)
{
	bool options = true;
	*npaths = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options && !strcmp(a, "--")) {
			options = false;
			continue;
		}
		if (options && (!strcmp(a, "-h") || !strcmp(a, "--help")))
			return WSS_CMD_HELP;
		if (options && a[0] == '-' && a[1]) {
			const wss_opt_t *o = NULL;
			size_t len = strcspn(a, "=");
			for (size_t k = 0; k < nopts && !o; k++)
				if (strlen(opts[k].name) == len && !strncmp(a, opts[k].name, len))
					o = &opts[k];
			if (!o)
				return usage_error(cmd, "unknown option ", a);
			if (o->flag) {
				if (a[len])
					return usage_error(cmd, "no value is taken by ", o->name);
				*o->flag = true;
			} else if (a[len]) {
				*o->value = a + len + 1;
			} else if (i + 1 < argc) {
				*o->value = argv[++i];
			} else
				return usage_error(cmd, "missing value for ", o->name);
			continue;
		}
		if (*npaths == maxpaths)
			return usage_error(cmd, "too many profiles: ", a);
		paths[(*npaths)++] = a;
	}
	if (*npaths == 0) {
		char what[160];
		snprintf(what, sizeof what, "no profile given (%s)", synopsis);
		return usage_error(cmd, what, NULL);
	}
	return 0;
}

int wss_opts_number(const char *cmd, const char *name, const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-' || x < min || x > max) {
		fprintf(stderr, "wss: %s: %s %s: not a whole number from %" PRIu64 " to %" PRIu64 "\n", cmd, name, v, min,
			max);
		return EXIT_USAGE;
	}
	*out = x;
	return 0;
}

/* --csv and --json: at most one. */
static int output_form(const char *cmd, bool csv, bool json, wss_out_t *out)
{
	if (csv && json)
		return usage_error(cmd, "--csv and --json: choose one", NULL);
	*out = csv ? WSS_OUT_CSV : json ? WSS_OUT_JSON : WSS_OUT_TEXT;
	return 0;
}

/* A comma-separated list of whole numbers, each in [min, max], into a
 * new array.  Returns 0, 2 (said) or 1. */
static int number_list(const char *cmd, const char *name, const char *v, uint64_t min, uint64_t max, uint64_t **out,
		       size_t *n)
{
	size_t cap = 1;
	for (const char *c = v; *c; c++)
		cap += *c == ',';
	uint64_t *a = malloc(cap * sizeof *a);
	char *copy = strdup(v);
	if (!a || !copy) {
		free(a);
		free(copy);
		fprintf(stderr, "wss: %s: out of memory\n", cmd);
		return 1;
	}
	*n = 0;
	char *save = NULL;
	int r = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save))
		r = wss_opts_number(cmd, name, tok, min, max, &a[(*n)++]);
	if (!r && *n == 0)
		r = usage_error(cmd, "an empty list for ", name);
	free(copy);
	if (r) {
		free(a);
		return r;
	}
	*out = a;
	return 0;
}

/* ---- the profile and its trace ---- */

int wss_pair_open(const char *path, wss_pair_t *p)
{
	memset(p, 0, sizeof *p);
	int r = wss_load_profile(path, &p->prof);
	if (r)
		return r;
	if (!p->prof.trace) {
		fprintf(stderr, "wss: %s: no page trace in this profile (record one with: wss run --trace -- PROG)\n",
			path);
		wss_load_release(&p->prof);
		return WSS_EXIT_BADINPUT;
	}
	if (!(p->trace_path = wss_load_beside(path, p->prof.trace))) {
		wss_load_release(&p->prof);
		fprintf(stderr, "wss: %s: out of memory\n", path);
		return 1;
	}
	if ((r = wss_trace_open(&p->trace, p->trace_path))) {
		free(p->trace_path);
		wss_load_release(&p->prof);
		return r;
	}
	if ((int64_t)1 << p->trace.page_shift != p->prof.page_size) {
		fprintf(stderr, "wss: %s: pages of %lld bytes, but the profile's are %" PRId64 " bytes: not its trace?\n",
			p->trace_path, 1LL << p->trace.page_shift, p->prof.page_size);
		wss_pair_close(p);
		return WSS_EXIT_BADINPUT;
	}
	p->trace.member_check = p->prof.has_seed;
	p->trace.seed = p->prof.sampling_seed;
	p->trace.prof = &p->prof;
	return 0;
}

void wss_pair_close(wss_pair_t *p)
{
	wss_trace_close(&p->trace);
	wss_load_release(&p->prof);
	free(p->trace_path);
	memset(p, 0, sizeof *p);
}

void wss_pair_note_end(const wss_pair_t *p)
{
	char end[160];
	wss_trace_describe_end(&p->trace, end, sizeof end);
	if (*end)
		fprintf(stderr, "wss: %s: %s\n", p->trace_path, end);
}

void wss_scan_release(wss_scan_t *s)
{
	wss_pagemap_release(&s->map);
	free(s->seq);
	free(s->t_ns);
	free(s->level);
	memset(s, 0, sizeof *s);
}

static int scan_nomem(wss_pair_t *p, wss_scan_t *s)
{
	fprintf(stderr, "wss: %s: out of memory\n", p->trace_path);
	wss_scan_release(s);
	return 1;
}

int wss_scan_run(wss_pair_t *p, wss_scan_t *s)
{
	memset(s, 0, sizeof *s);
	size_t cap = 0;
	wss_trace_interval_t iv;
	bool got;
	int r;
	while (!(r = wss_trace_next(&p->trace, &iv, &got)) && got) {
		if (s->intervals == cap) {
			cap = cap ? 2 * cap : 256;
			uint64_t *seq = realloc(s->seq, cap * sizeof *seq);
			if (seq)
				s->seq = seq;
			uint64_t *t = realloc(s->t_ns, cap * sizeof *t);
			if (t)
				s->t_ns = t;
			uint8_t *l = realloc(s->level, cap);
			if (l)
				s->level = l;
			if (!seq || !t || !l)
				return scan_nomem(p, s);
		}
		s->seq[s->intervals] = iv.seq;
		s->t_ns[s->intervals] = iv.t_ns;
		s->level[s->intervals++] = (uint8_t)iv.level;
		if (iv.level > s->level_max)
			s->level_max = iv.level;
		s->writes |= iv.sets & WSS_TRACE_SETS_WRITES;
		s->touches += iv.pages;
		for (size_t k = 0; k < iv.nruns; k++)
			for (uint64_t pn = iv.runs[k].first; pn < iv.runs[k].first + iv.runs[k].n; pn++) {
				uint32_t idx;
				bool added;
				int e = wss_pagemap_add(&s->map, pn, &idx, &added);
				if (e == EOVERFLOW) {
					fprintf(stderr, "wss: %s: more than 2^32 distinct pages\n", p->trace_path);
					wss_scan_release(s);
					return WSS_EXIT_BADINPUT;
				}
				if (e)
					return scan_nomem(p, s);
			}
	}
	if (r) {
		wss_scan_release(s);
		return r;
	}
	if (s->level_max && !p->prof.has_seed) {
		fprintf(stderr, "wss: %s: a sampled trace, but the profile has no \"sampling_seed\"\n", p->prof.path);
		wss_scan_release(s);
		return WSS_EXIT_BADINPUT;
	}
	if (wss_pagemap_sort(&s->map))
		return scan_nomem(p, s);
	if ((r = wss_trace_rewind(&p->trace)))
		wss_scan_release(s);
	return r;
}

/* Opens a profile's pair and scans it; the usual start of a command. */
static int open_scanned(const char *path, wss_pair_t *p, wss_scan_t *s)
{
	int r = wss_pair_open(path, p);
	if (r)
		return r;
	if ((r = wss_scan_run(p, s)))
		wss_pair_close(p);
	return r;
}

static int nomem_cmd(const char *cmd)
{
	fprintf(stderr, "wss: %s: out of memory\n", cmd);
	return 1;
}

/* ---- output pieces ---- */

static void json_str(FILE *out, const char *s)
{
	wss_fmt_t f;
	if (wss_fmt_init_growable(&f, 256)) {
		fputs("null", out);
		return;
	}
	wss_fmt_json_str(&f, s);
	fwrite(f.buf, 1, f.len, out);
	wss_fmt_release(&f);
}

/* A finite double as JSON (the shortest form that reads back). */
static void json_num(FILE *out, double v)
{
	char buf[40];
	fputs(wss_text_shortest(buf, sizeof buf, v), out);
}

/* "profile", "trace" and how the trace ended, the members every JSON
 * document of the analyses opens with (after its '{'). */
static void json_source(FILE *out, const wss_pair_t *p)
{
	fputs("\"profile\":", out);
	json_str(out, p->prof.path);
	fputs(",\"trace\":", out);
	json_str(out, p->trace_path);
	fprintf(out, ",\"truncated\":%s,\"truncated_at\":", p->trace.truncated ? "true" : "false");
	if (p->trace.truncated)
		fprintf(out, "%" PRIu64, p->trace.off);
	else
		fputs("null", out);
	fputs(",\"end\":", out);
	if (!p->trace.ended)
		fputs("null", out);
	else
		fprintf(out, "{\"reason\":\"%s\",\"last\":%" PRIu64 "}",
			p->trace.end_reason == WSS_TRACE_END_EXIT ? "exit"
			: p->trace.end_reason == WSS_TRACE_END_MAX ? "trace_max"
								    : "error",
			p->trace.end_last);
}

/* The text forms' first lines: what was read, and how the trace ended
 * when that was not normal. */
static void text_source(FILE *out, const char *cmd, const wss_pair_t *p)
{
	fprintf(out, "wss %s: %s (trace %s)\n", cmd, p->prof.path, p->trace_path);
	char end[160];
	wss_trace_describe_end(&p->trace, end, sizeof end);
	if (*end)
		fprintf(out, "trace %s\n", end);
}

static int finish(FILE *out, const char *cmd)
{
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "wss: %s: %s\n", cmd, strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}

/* ---- heatmap ---- */

enum { HEAT_TBINS = 72, HEAT_PBINS = 24 };
static const char shades[] = " .:-=+*#%@";

typedef struct heat_axes {
	bool by_address;
	uint64_t items;	 /* pages: distinct (index) or the span of page numbers (address) */
	uint64_t lo;	 /* address: the lowest page number */
} heat_axes_t;

static heat_axes_t heat_axes(const wss_scan_t *s, bool by_address)
{
	heat_axes_t a = {by_address, s->map.n, 0};
	if (by_address && s->map.n) {
		a.lo = s->map.pages[0];
		a.items = s->map.pages[s->map.n - 1] - a.lo + 1;
	}
	return a;
}

/* The second pass: every (page, interval) touch into its cell, scaled by
 * the interval's rate. */
static int heat_fill(wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax, wss_heat_t *h)
{
	wss_trace_interval_t iv;
	bool got;
	int r;
	for (uint64_t i = 0; !(r = wss_trace_next(&p->trace, &iv, &got)) && got; i++) {
		size_t tb = wss_heat_bin(i, s->intervals, h->tbins);
		uint64_t w = 1ull << iv.level;
		for (size_t k = 0; k < iv.nruns; k++)
			for (uint64_t pn = iv.runs[k].first; pn < iv.runs[k].first + iv.runs[k].n; pn++) {
				uint64_t item = pn - ax->lo;
				uint32_t idx;
				if (!ax->by_address && wss_pagemap_find(&s->map, pn, &idx))
					item = idx;
				h->cells[wss_heat_bin(item, ax->items, h->pbins) * h->tbins + tb] += w;
			}
	}
	return r;
}

/* Bin b's first and last item, false when it holds none. */
static bool bin_range(size_t b, uint64_t n, size_t bins, uint64_t *first, uint64_t *last)
{
	*first = wss_heat_bin_first(b, n, bins);
	uint64_t end = wss_heat_bin_first(b + 1, n, bins);
	*last = end ? end - 1 : 0;
	return end > *first;
}

/* The page number (address mode) or index of a page bin's first item, as
 * text for the axis and the CSV. */
static void page_label(char *buf, size_t n, const heat_axes_t *ax, uint64_t item, unsigned shift)
{
	if (ax->by_address)
		snprintf(buf, n, "0x%" PRIx64, (ax->lo + item) << shift);
	else
		snprintf(buf, n, "%" PRIu64, item);
}

/* "N items" or "N-M items" per bin. */
static void per_bin(FILE *out, uint64_t items, size_t bins, const char *what)
{
	uint64_t lo = items / bins, hi = (items + bins - 1) / bins;
	if (lo == hi)
		fprintf(out, "%" PRIu64 " %s%s", lo, what, lo == 1 ? "" : "s");
	else
		fprintf(out, "%" PRIu64 "-%" PRIu64 " %ss", lo, hi, what);
}

static void heat_text(FILE *out, const wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax,
		      const wss_heat_t *h)
{
	text_source(out, "heatmap", p);
	uint64_t max = wss_heat_max(h), total = wss_heat_total(h);
	char g[32];
	fprintf(out, "pages  %s distinct, ", wss_text_grouped(g, sizeof g, s->map.n));
	if (ax->by_address)
		fprintf(out, "by address (0x%" PRIx64 "..0x%" PRIx64 "): %zu rows of ", ax->lo << p->trace.page_shift,
			(ax->lo + ax->items) << p->trace.page_shift, h->pbins);
	else
		fprintf(out, "by index (gaps removed): %zu rows of ", h->pbins);
	per_bin(out, ax->items, h->pbins, "page");
	fprintf(out, "\ntime   %" PRIu64 " intervals (seq %" PRIu64 "..%" PRIu64 "): %zu columns of ", s->intervals,
		s->seq[0], s->seq[s->intervals - 1], h->tbins);
	per_bin(out, s->intervals, h->tbins, "interval");
	char g2[32];
	fprintf(out, "\ncells  touches: a page's first touch in an interval counts 1%s; max %s, total %s\n",
		s->level_max ? " times its interval's rate (sampled)" : "", wss_text_grouped(g, sizeof g, max),
		wss_text_grouped(g2, sizeof g2, total));
	fputs("scale ", out);
	for (unsigned sh = 1; sh <= 9; sh++) {
		uint64_t lo = max * (sh - 1) / 9 + 1, hi = max * sh / 9;
		if (lo > hi)
			continue;
		if (lo == hi)
			fprintf(out, " '%c' %" PRIu64, shades[sh], lo);
		else
			fprintf(out, " '%c' %" PRIu64 "-%" PRIu64, shades[sh], lo, hi);
	}
	fputc('\n', out);
	char label[40];
	int width = 4;
	for (size_t b = 0; b < h->pbins; b++) {
		uint64_t first, last;
		if (bin_range(b, ax->items, h->pbins, &first, &last)) {
			page_label(label, sizeof label, ax, first, p->trace.page_shift);
			if ((int)strlen(label) > width)
				width = (int)strlen(label);
		}
	}
	fprintf(out, "%*s\n", width, ax->by_address ? "address" : "page");
	for (size_t b = h->pbins; b-- > 0;) {
		uint64_t first, last;
		if (bin_range(b, ax->items, h->pbins, &first, &last))
			page_label(label, sizeof label, ax, first, p->trace.page_shift);
		else
			label[0] = '\0';
		fprintf(out, "%*s |", width, label);
		size_t len = 0;
		for (size_t t = 0; t < h->tbins; t++)
			if (h->cells[b * h->tbins + t])
				len = t + 1;
		for (size_t t = 0; t < len; t++)
			fputc(shades[wss_heat_shade(h->cells[b * h->tbins + t], max)], out);
		fputc('\n', out);
	}
	fprintf(out, "%*s +", width, "");
	for (size_t t = 0; t < h->tbins; t++)
		fputc('-', out);
	fprintf(out, "\n%*s  seq %" PRIu64 " (%.3f s) .. seq %" PRIu64 " (%.3f s)\n", width, "", s->seq[0],
		(double)s->t_ns[0] / 1e9, s->seq[s->intervals - 1], (double)s->t_ns[s->intervals - 1] / 1e9);
}

static void heat_csv(FILE *out, const wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax, const wss_heat_t *h)
{
	fputs("page_bin,time_bin,page_first,page_last,seq_first,seq_last,touches\n", out);
	for (size_t b = 0; b < h->pbins; b++) {
		uint64_t pf, pl;
		char a[40] = "", z[40] = "";
		if (bin_range(b, ax->items, h->pbins, &pf, &pl)) {
			page_label(a, sizeof a, ax, pf, p->trace.page_shift);
			page_label(z, sizeof z, ax, pl, p->trace.page_shift);
		}
		for (size_t t = 0; t < h->tbins; t++) {
			uint64_t tf, tl;
			fprintf(out, "%zu,%zu,%s,%s,", b, t, a, z);
			if (bin_range(t, s->intervals, h->tbins, &tf, &tl))
				fprintf(out, "%" PRIu64 ",%" PRIu64, s->seq[tf], s->seq[tl]);
			else
				fputc(',', out);
			fprintf(out, ",%" PRIu64 "\n", h->cells[b * h->tbins + t]);
		}
	}
}

static void heat_json(FILE *out, const wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax,
		      const wss_heat_t *h)
{
	fputc('{', out);
	json_source(out, p);
	fprintf(out, ",\"by\":\"%s\",\"intervals\":%" PRIu64 ",\"pages\":%zu,\"level_max\":%u,\"page_size\":%" PRId64,
		ax->by_address ? "address" : "index", s->intervals, s->map.n, s->level_max, p->prof.page_size);
	fputs(",\"time_bins\":[", out);
	for (size_t t = 0; t < h->tbins; t++) {
		uint64_t f, l;
		if (bin_range(t, s->intervals, h->tbins, &f, &l))
			fprintf(out, "%s{\"seq_first\":%" PRIu64 ",\"seq_last\":%" PRIu64 ",\"t_ns_first\":%" PRIu64
				     ",\"t_ns_last\":%" PRIu64 "}",
				t ? "," : "", s->seq[f], s->seq[l], s->t_ns[f], s->t_ns[l]);
		else
			fprintf(out, "%snull", t ? "," : "");
	}
	fputs("],\"page_bins\":[", out);
	for (size_t b = 0; b < h->pbins; b++) {
		uint64_t f, l;
		char a[40], z[40];
		if (!bin_range(b, ax->items, h->pbins, &f, &l)) {
			fprintf(out, "%snull", b ? "," : "");
			continue;
		}
		page_label(a, sizeof a, ax, f, p->trace.page_shift);
		page_label(z, sizeof z, ax, l, p->trace.page_shift);
		if (ax->by_address)
			fprintf(out, "%s{\"first\":\"%s\",\"last\":\"%s\"}", b ? "," : "", a, z);
		else
			fprintf(out, "%s{\"first\":%s,\"last\":%s}", b ? "," : "", a, z);
	}
	fputs("],\"cells\":[", out);
	for (size_t b = 0; b < h->pbins; b++) {
		fputs(b ? ",[" : "[", out);
		for (size_t t = 0; t < h->tbins; t++)
			fprintf(out, "%s%" PRIu64, t ? "," : "", h->cells[b * h->tbins + t]);
		fputc(']', out);
	}
	fprintf(out, "],\"max\":%" PRIu64 ",\"total\":%" PRIu64 "}\n", wss_heat_max(h), wss_heat_total(h));
}

typedef struct heat_req {
	uint64_t tbins, pbins; /* 0: the default */
	bool by_address;
} heat_req_t;

/* One profile's map on a grid: tbins x pbins when given, else the
 * defaults capped by what there is. */
static int heat_build(wss_pair_t *p, wss_scan_t *s, heat_axes_t *ax, wss_heat_t *h, const heat_req_t *rq)
{
	if (!s->intervals) {
		fprintf(stderr, "wss: %s: no interval in the trace: nothing to map\n", p->trace_path);
		return EXIT_USAGE;
	}
	*ax = heat_axes(s, rq->by_address);
	if (!ax->items)
		ax->items = 1; /* no page touched: one empty row */
	size_t tb = rq->tbins ? (size_t)rq->tbins : s->intervals < HEAT_TBINS ? (size_t)s->intervals : HEAT_TBINS;
	size_t pb = rq->pbins ? (size_t)rq->pbins : ax->items < HEAT_PBINS ? (size_t)ax->items : HEAT_PBINS;
	if (wss_heat_init(h, tb, pb))
		return nomem_cmd("heatmap");
	int r = heat_fill(p, s, ax, h);
	if (r)
		wss_heat_release(h);
	return r;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a < b ? a : b;
	return m < c ? m : c;
}

/* --compare: both maps on one grid (by default the finer grid both can
 * fill), each divided by its total, and the RMSD between them. */
static int heat_compare(wss_pair_t *pp, wss_scan_t *ss, heat_req_t rq, wss_out_t form, FILE *out)
{
	heat_axes_t ax[2];
	wss_heat_t h[2] = {{0}};
	for (int k = 0; k < 2; k++)
		ax[k] = heat_axes(&ss[k], rq.by_address);
	if (!rq.tbins)
		rq.tbins = min3(HEAT_TBINS, ss[0].intervals ? ss[0].intervals : 1, ss[1].intervals ? ss[1].intervals : 1);
	if (!rq.pbins)
		rq.pbins = min3(HEAT_PBINS, ax[0].items ? ax[0].items : 1, ax[1].items ? ax[1].items : 1);
	int r = 0;
	for (int k = 0; k < 2 && !r; k++)
		r = heat_build(&pp[k], &ss[k], &ax[k], &h[k], &rq);
	double d = r ? 0 : wss_heat_rmsd(&h[0], &h[1]);
	if (!r && d < 0) {
		fprintf(stderr, "wss: heatmap: %s: no page touched: nothing to compare\n",
			wss_heat_total(&h[0]) ? pp[1].trace_path : pp[0].trace_path);
		r = EXIT_USAGE;
	}
	if (!r) {
		wss_pair_note_end(&pp[0]);
		wss_pair_note_end(&pp[1]);
		const char *by = rq.by_address ? "address" : "index";
		if (form == WSS_OUT_JSON) {
			fputs("{\"a\":", out);
			json_str(out, pp[0].prof.path);
			fputs(",\"b\":", out);
			json_str(out, pp[1].prof.path);
			fprintf(out, ",\"by\":\"%s\",\"time_bins\":%" PRIu64 ",\"page_bins\":%" PRIu64 ",\"rmsd\":", by,
				rq.tbins, rq.pbins);
			json_num(out, d);
			fputs("}\n", out);
		} else if (form == WSS_OUT_CSV) {
			fputs("a,b,by,time_bins,page_bins,rmsd\n", out);
			fprintf(out, "%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%.9g\n", pp[0].prof.path, pp[1].prof.path, by,
				rq.tbins, rq.pbins, d);
		} else {
			fprintf(out, "wss heatmap --compare: %s and %s\n", pp[0].prof.path, pp[1].prof.path);
			fprintf(out, "grid   %" PRIu64 " time bins x %" PRIu64 " page bins, pages by %s, each map divided by its total\n",
				rq.tbins, rq.pbins, by);
			fprintf(out, "rmsd   %.9g\n", d);
		}
		r = finish(out, "heatmap");
	}
	wss_heat_release(&h[0]);
	wss_heat_release(&h[1]);
	return r;
}

int wss_cmd_heatmap_to(int argc, char **argv, FILE *out)
{
	const char *tb = NULL, *pb = NULL, *by = NULL, *paths[2];
	bool csv = false, json = false, compare = false;
	const wss_opt_t opts[] = {{"--time-bins", &tb, NULL}, {"--page-bins", &pb, NULL}, {"--by", &by, NULL},
				  {"--compare", NULL, &compare}, {"--csv", NULL, &csv}, {"--json", NULL, &json}};
	size_t n;
	int r = wss_opts_parse("heatmap", argc, argv, opts, sizeof opts / sizeof *opts, paths, 2, &n,
			       "wss heatmap [OPTIONS] PROFILE, or --compare A B");
	heat_req_t rq = {0, 0, false};
	wss_out_t form;
	if (r || (r = output_form("heatmap", csv, json, &form)))
		return r;
	if (n != (compare ? 2u : 1u))
		return usage_error("heatmap", compare ? "--compare takes two profiles" : "one profile at a time (two with --compare)", NULL);
	if (tb && (r = wss_opts_number("heatmap", "--time-bins", tb, 1, 100000, &rq.tbins)))
		return r;
	if (pb && (r = wss_opts_number("heatmap", "--page-bins", pb, 1, 100000, &rq.pbins)))
		return r;
	if (by && strcmp(by, "index") && strcmp(by, "address"))
		return usage_error("heatmap", "--by takes index or address, not ", by);
	rq.by_address = by && !strcmp(by, "address");
	wss_pair_t pp[2];
	wss_scan_t ss[2];
	for (size_t k = 0; k < n; k++)
		if ((r = open_scanned(paths[k], &pp[k], &ss[k]))) {
			if (k) {
				wss_scan_release(&ss[0]);
				wss_pair_close(&pp[0]);
			}
			return r;
		}
	if (compare) {
		r = heat_compare(pp, ss, rq, form, out);
	} else {
		heat_axes_t ax;
		wss_heat_t h = {0};
		/* No more columns than intervals: a column narrower than one
		 * would stay empty and look like time the program was idle. (A
		 * comparison keeps the grid asked for: its two traces differ.) */
		if (rq.tbins > ss[0].intervals && ss[0].intervals)
			rq.tbins = ss[0].intervals;
		if (!(r = heat_build(&pp[0], &ss[0], &ax, &h, &rq))) {
			wss_pair_note_end(&pp[0]);
			if (form == WSS_OUT_JSON)
				heat_json(out, &pp[0], &ss[0], &ax, &h);
			else if (form == WSS_OUT_CSV)
				heat_csv(out, &pp[0], &ss[0], &ax, &h);
			else
				heat_text(out, &pp[0], &ss[0], &ax, &h);
			r = finish(out, "heatmap");
			wss_heat_release(&h);
		}
	}
	for (size_t k = 0; k < n; k++) {
		wss_scan_release(&ss[k]);
		wss_pair_close(&pp[k]);
	}
	return r;
}

int wss_cmd_heatmap(int argc, char **argv) { return wss_cmd_heatmap_to(argc, argv, stdout); }

/* ---- window ---- */

/* The pages in the window, by their newest touch (or newest write): a
 * list per interval of the pages whose newest is that interval, in a ring
 * of ring slots, and how many pages of each top level (the coarsest
 * level they are a member of) are in the window. */
typedef struct winset {
	uint64_t *last; /* per page: newest interval, 0: never */
	uint32_t *prev, *next;
	uint32_t *head;
	size_t ring;
	uint64_t hist[WSS_SAMPLE_LEVEL_MAX + 1];
} winset_t;

#define NIL UINT32_MAX

static int winset_init(winset_t *w, size_t pages, size_t ring)
{
	memset(w, 0, sizeof *w);
	w->ring = ring;
	size_t n = pages ? pages : 1;
	w->last = calloc(n, sizeof *w->last);
	w->prev = malloc(n * sizeof *w->prev);
	w->next = malloc(n * sizeof *w->next);
	w->head = malloc(ring * sizeof *w->head);
	if (!w->last || !w->prev || !w->next || !w->head)
		return ENOMEM;
	for (size_t i = 0; i < ring; i++)
		w->head[i] = NIL;
	return 0;
}

static void winset_release(winset_t *w)
{
	free(w->last);
	free(w->prev);
	free(w->next);
	free(w->head);
}

static void winset_unlink(winset_t *w, uint32_t pg)
{
	size_t slot = w->last[pg] % w->ring;
	if (w->prev[pg] != NIL)
		w->next[w->prev[pg]] = w->next[pg];
	else
		w->head[slot] = w->next[pg];
	if (w->next[pg] != NIL)
		w->prev[w->next[pg]] = w->prev[pg];
}

/* Page pg touched (or written) in interval k, with window n: in the
 * window of k - 1 already, or entering it. */
static void winset_touch(winset_t *w, uint32_t pg, uint64_t k, uint64_t n, unsigned top)
{
	uint64_t l = w->last[pg];
	if (l == k)
		return;
	if (l && l + n >= k)
		winset_unlink(w, pg);
	else
		w->hist[top]++;
	w->last[pg] = k;
	size_t slot = k % w->ring;
	w->prev[pg] = NIL;
	w->next[pg] = w->head[slot];
	if (w->head[slot] != NIL)
		w->prev[w->head[slot]] = pg;
	w->head[slot] = pg;
}

/* The pages whose newest is k - n leave the window of k. */
static void winset_expire(winset_t *w, uint64_t k, uint64_t n, const uint8_t *top)
{
	if (k <= n)
		return;
	size_t slot = (k - n) % w->ring;
	for (uint32_t pg = w->head[slot]; pg != NIL; pg = w->next[pg])
		w->hist[top[pg]]--;
	w->head[slot] = NIL;
}

/* Page pg left tracking before interval k's tick: its history is gone, as
 * the engine forgets it (engine/registry.c). */
static void winset_forget(winset_t *w, uint32_t pg, uint64_t k, uint64_t n, const uint8_t *top)
{
	uint64_t l = w->last[pg];
	if (l && l + n >= k) {
		winset_unlink(w, pg);
		w->hist[top[pg]]--;
	}
	w->last[pg] = 0;
}

/* Page src moved to dst (mremap) before interval k's tick, its history
 * with it; dst had none (the engine untracks the target first). */
static void winset_move(winset_t *w, uint32_t src, uint32_t dst, uint64_t k, uint64_t n, const uint8_t *top)
{
	uint64_t l = w->last[src];
	winset_forget(w, dst, k, n, top);
	winset_forget(w, src, k, n, top);
	if (!l)
		return;
	w->last[dst] = l;
	if (l + n < k)
		return; /* out of the window already */
	size_t slot = l % w->ring;
	w->prev[dst] = NIL;
	w->next[dst] = w->head[slot];
	if (w->head[slot] != NIL)
		w->prev[w->head[slot]] = dst;
	w->head[slot] = dst;
	w->hist[top[dst]]++;
}

/* The window's pages that are members of level: those of top level >=
 * level (membership is nested). */
static uint64_t winset_members(const winset_t *w, unsigned level)
{
	uint64_t x = 0;
	for (unsigned t = level; t <= WSS_SAMPLE_LEVEL_MAX; t++)
		x += w->hist[t];
	return x;
}

typedef struct win_sample {
	uint64_t seq, t_ns;
	unsigned level;
	uint64_t x, xw; /* members touched, written in the window */
	wss_estimate_t data, write;
	uint64_t read;
	bool ci; /* data and write have intervals (sampled, tracked pages known) */
} win_sample_t;

/* Sample k's estimates from its members touched, as the engine's tick
 * computes them (engine/tick.c): exact at level 0; else n x / k with the
 * tracked pages n of the profile's sample k and the members k of the
 * window's level, the profile's own when its sample has that level and
 * tracked / 2^level rounded when not (stratified sampling puts one member
 * in each aligned block: within one per tracked range of the truth). */
static void win_estimate(const wss_profile_t *prof, win_sample_t *w)
{
	if (!w->level) {
		w->data = (wss_estimate_t){w->x, w->x, w->x};
		w->write = (wss_estimate_t){w->xw, w->xw, w->xw};
	} else {
		const wss_sample_t *s = wss_load_sample(prof, (int64_t)w->seq);
		if (s && s->tracked >= 0) {
			uint64_t n = (uint64_t)s->tracked, m;
			if (s->rate == (int64_t)1 << w->level && s->members >= 0)
				m = (uint64_t)s->members;
			else
				m = (n + (1ull << (w->level - 1))) >> w->level;
			w->data = wss_estimate_pages(n, m, w->x);
			w->write = wss_estimate_pages(n, m, w->xw);
			w->ci = true;
		} else {
			/* No tracked count to scale by: the plain scaled count. */
			w->data = (wss_estimate_t){w->x << w->level, w->x << w->level, w->x << w->level};
			w->write = (wss_estimate_t){w->xw << w->level, w->xw << w->level, w->xw << w->level};
		}
	}
	/* Reads are data minus writes, as in the profile's samples. */
	if (w->write.est > w->data.est)
		w->write.est = w->data.est;
	w->read = w->data.est - w->write.est;
}

typedef struct win_result {
	win_sample_t *v;
	size_t n;
	uint64_t sum, peak, total;
	bool total_estimated;
} win_result_t;

/* The first index of a page at or after pn in a sorted map. */
static size_t map_lower(const wss_pagemap_t *m, uint64_t pn)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->pages[mid] < pn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pages with history in the window, in address order, for win_map's
 * replay of the events: each with its newest touch. */
typedef struct live_page {
	uint64_t pn, last;
} live_page_t;

typedef struct live_set {
	live_page_t *v, *tmp;
	size_t n, cap, tmp_cap;
	live_page_t *pend; /* touches since the last merge, unsorted */
	size_t npend, pend_cap;
} live_set_t;

static int live_reserve(live_page_t **v, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < n)
		c *= 2;
	live_page_t *m = realloc(*v, c * sizeof *m);
	if (!m)
		return ENOMEM;
	*v = m;
	*cap = c;
	return 0;
}

static int live_cmp(const void *a, const void *b)
{
	const live_page_t *x = a, *y = b;
	return x->pn < y->pn ? -1 : x->pn > y->pn ? 1 : x->last < y->last ? -1 : x->last > y->last;
}

/* The first page at or after pn. */
static size_t live_lower(const live_set_t *l, uint64_t pn)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[mid].pn < pn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pending touches merged in (the newest touch of a page wins), and
 * the pages out of the window of interval k (newest + n < k) dropped: a
 * move cannot bring them back into it. */
static int live_merge(live_set_t *l, uint64_t k, uint64_t n)
{
	qsort(l->pend, l->npend, sizeof *l->pend, live_cmp);
	if (live_reserve(&l->tmp, &l->tmp_cap, l->n + l->npend))
		return ENOMEM;
	size_t i = 0, j = 0, o = 0;
	while (i < l->n || j < l->npend) {
		live_page_t x;
		if (j == l->npend || (i < l->n && l->v[i].pn < l->pend[j].pn))
			x = l->v[i++];
		else if (i == l->n || l->pend[j].pn < l->v[i].pn)
			x = l->pend[j++];
		else
			x = l->v[i++]; /* the same page: its pending touches follow, newer */
		if (o && l->tmp[o - 1].pn == x.pn) {
			if (x.last > l->tmp[o - 1].last)
				l->tmp[o - 1].last = x.last;
			continue;
		}
		if (x.last + n >= k)
			l->tmp[o++] = x;
	}
	live_page_t *v = l->v;
	size_t cap = l->cap;
	l->v = l->tmp;
	l->cap = l->tmp_cap;
	l->n = o;
	l->tmp = v;
	l->tmp_cap = cap;
	l->npend = 0;
	return 0;
}

/* Removes the pages in [lo, hi) of the array. */
static void live_cut(live_set_t *l, size_t lo, size_t hi)
{
	memmove(l->v + lo, l->v + hi, (l->n - hi) * sizeof *l->v);
	l->n -= hi - lo;
}

/* One event on the live pages; a move adds its targets to m. */
static int live_event(live_set_t *l, const wss_trace_event_t *ev, wss_pagemap_t *m)
{
	size_t lo = live_lower(l, ev->from), hi = live_lower(l, ev->from + ev->n);
	if (ev->type != WSS_TRACE_EV_MOVED) {
		live_cut(l, lo, hi);
		return 0;
	}
	size_t k = hi - lo;
	if (live_reserve(&l->tmp, &l->tmp_cap, k))
		return ENOMEM;
	for (size_t i = 0; i < k; i++) {
		uint32_t idx;
		bool added;
		l->tmp[i] = (live_page_t){ev->to + (l->v[lo + i].pn - ev->from), l->v[lo + i].last};
		int r = wss_pagemap_add(m, l->tmp[i].pn, &idx, &added);
		if (r)
			return r;
	}
	live_cut(l, lo, hi);
	/* What was at the target is forgotten (win_events), and the moved
	 * pages take its place, in order: the target range holds nothing
	 * else now. */
	live_cut(l, live_lower(l, ev->to), live_lower(l, ev->to + ev->n));
	if (live_reserve(&l->v, &l->cap, l->n + k))
		return ENOMEM;
	size_t at = live_lower(l, ev->to);
	memmove(l->v + at + k, l->v + at, (l->n - at) * sizeof *l->v);
	memcpy(l->v + at, l->tmp, k * sizeof *l->v);
	l->n += k;
	return 0;
}

/* The trace's pages and the pages their history moves to (mremap events)
 * within a window of n, so that the window can carry a history to its new
 * address: a pass of its own replaying the events on the pages that have
 * history in the window at the time, then sorted.  A move carries those
 * pages only, never every page ever seen in its range, so the targets
 * grow with the pages a move really carries: a few bytes of events
 * cannot double the map again and again.  Returns 0, ENOMEM, EOVERFLOW
 * or the reader's status. */
static int win_map(wss_pair_t *p, const wss_scan_t *s, uint64_t n, wss_pagemap_t *m)
{
	uint32_t idx;
	bool added;
	int r = 0;
	for (size_t i = 0; i < s->map.n && !r; i++)
		r = wss_pagemap_add(m, s->map.pages[i], &idx, &added);
	live_set_t l = {0};
	wss_trace_interval_t iv;
	bool got;
	int t = 0;
	while (!r && !(t = wss_trace_next(&p->trace, &iv, &got)) && got) {
		/* Touches wait in pend until an event needs them, merged
		 * sooner when they outgrow the live pages. */
		if (iv.nevents || l.npend > 2 * l.n + 4096)
			r = live_merge(&l, iv.seq, n);
		for (size_t e = 0; e < iv.nevents && !r; e++)
			r = live_event(&l, &iv.events[e], m);
		for (size_t j = 0; j < iv.nruns && !r; j++) {
			if ((r = live_reserve(&l.pend, &l.pend_cap, l.npend + iv.runs[j].n)))
				break;
			for (uint64_t pn = iv.runs[j].first; pn < iv.runs[j].first + iv.runs[j].n; pn++)
				l.pend[l.npend++] = (live_page_t){pn, iv.seq};
		}
	}
	free(l.v);
	free(l.tmp);
	free(l.pend);
	if (r)
		return r;
	if (t)
		return t;
	if (wss_pagemap_sort(m))
		return ENOMEM;
	return wss_trace_rewind(&p->trace);
}

/* Interval k's events on the window sets: pages gone, pages moved.  A
 * move first forgets what was at its target, every page of it, as the
 * engine untracks the target before the move. */
static void win_events(const wss_trace_interval_t *iv, const wss_pagemap_t *m, winset_t *d, winset_t *w,
		       uint64_t n, const uint8_t *top)
{
	for (size_t e = 0; e < iv->nevents; e++) {
		const wss_trace_event_t *ev = &iv->events[e];
		bool moved = ev->type == WSS_TRACE_EV_MOVED;
		for (size_t i = map_lower(m, ev->to); moved && i < m->n && m->pages[i] - ev->to < ev->n; i++) {
			winset_forget(d, (uint32_t)i, iv->seq, n, top);
			winset_forget(w, (uint32_t)i, iv->seq, n, top);
		}
		for (size_t i = map_lower(m, ev->from); i < m->n && m->pages[i] - ev->from < ev->n; i++) {
			if (!moved) {
				winset_forget(d, (uint32_t)i, iv->seq, n, top);
				winset_forget(w, (uint32_t)i, iv->seq, n, top);
				continue;
			}
			uint32_t dst;
			if (!wss_pagemap_find(m, ev->to + (m->pages[i] - ev->from), &dst))
				continue; /* no history to carry (win_map) */
			winset_move(d, (uint32_t)i, dst, iv->seq, n, top);
			winset_move(w, (uint32_t)i, dst, iv->seq, n, top);
		}
	}
}

/* The series for window n over the trace (second pass). */
static int win_compute(wss_pair_t *p, const wss_scan_t *s, uint64_t n, win_result_t *res)
{
	memset(res, 0, sizeof *res);
	wss_pagemap_t lm = {0};
	int mr = win_map(p, s, n, &lm);
	if (mr) {
		wss_pagemap_release(&lm);
		return mr == ENOMEM || mr == EOVERFLOW ? nomem_cmd("window") : mr;
	}
	size_t pages = lm.n;
	size_t ring = (size_t)((n < s->intervals ? n : s->intervals) + 1);
	winset_t d, w;
	uint8_t *top = calloc(pages ? pages : 1, 1);
	/* per page: seen in an exact interval (1), in a sampled one (2) */
	uint8_t *seen = calloc(pages ? pages : 1, 1);
	size_t *dq = malloc((s->intervals ? s->intervals : 1) * sizeof *dq);
	res->v = calloc(s->intervals ? s->intervals : 1, sizeof *res->v);
	int r = winset_init(&d, pages, ring) | winset_init(&w, pages, ring);
	if (r || !top || !seen || !dq || !res->v) {
		r = nomem_cmd("window");
		goto out;
	}
	for (size_t i = 0; s->level_max && i < pages; i++) {
		unsigned t = 0;
		while (t < WSS_SAMPLE_LEVEL_MAX && wss_sample_member(lm.pages[i], t + 1, p->prof.sampling_seed))
			t++;
		top[i] = (uint8_t)t;
	}
	/* The window's level: the coarsest of its intervals, a sliding
	 * maximum over the deque dq[qh..qt) of decreasing levels. */
	size_t qh = 0, qt = 0;
	wss_trace_interval_t iv;
	bool got;
	for (size_t i = 0; !(r = wss_trace_next(&p->trace, &iv, &got)) && got; i++) {
		uint64_t k = iv.seq;
		bool writes = iv.sets & WSS_TRACE_SETS_WRITES;
		win_events(&iv, &lm, &d, &w, n, top);
		for (size_t j = 0; j < iv.nruns; j++)
			for (uint64_t pn = iv.runs[j].first; pn < iv.runs[j].first + iv.runs[j].n; pn++) {
				uint32_t idx = 0;
				wss_pagemap_find(&lm, pn, &idx);
				winset_touch(&d, idx, k, n, top[idx]);
				if (writes && iv.runs[j].written)
					winset_touch(&w, idx, k, n, top[idx]);
				seen[idx] |= iv.level ? 2 : 1;
			}
		winset_expire(&d, k, n, top);
		winset_expire(&w, k, n, top);
		while (qt > qh && s->level[dq[qt - 1]] <= iv.level)
			qt--;
		dq[qt++] = i;
		while (s->seq[dq[qh]] + n <= k)
			qh++;
		win_sample_t *o = &res->v[res->n++];
		o->seq = k;
		o->t_ns = iv.t_ns;
		o->level = s->level[dq[qh]];
		o->x = winset_members(&d, o->level);
		o->xw = winset_members(&w, o->level);
		win_estimate(&p->prof, o);
		res->sum = wss_load_sat_addu(res->sum, o->data.est);
		if (o->data.est > res->peak)
			res->peak = o->data.est;
	}
	if (r)
		goto out;
	/* The run's distinct pages: those seen in an exact interval for
	 * certain, the others through the members of the trace's coarsest
	 * level among them, scaled. */
	for (size_t i = 0; i < pages; i++) {
		if (seen[i] & 1)
			res->total++;
		else if (seen[i] && top[i] >= s->level_max)
			res->total += 1ull << s->level_max;
	}
	res->total_estimated = s->level_max > 0;
out:
	winset_release(&d);
	winset_release(&w);
	wss_pagemap_release(&lm);
	free(top);
	free(seen);
	free(dq);
	if (r) {
		free(res->v);
		res->v = NULL;
	}
	return r;
}

/* Tenths of a page, rounded half up: the profile's avg. */
static void win_text(FILE *out, const wss_pair_t *p, const wss_scan_t *s, uint64_t n, const win_result_t *res)
{
	text_source(out, "window", p);
	fprintf(out, "window %" PRIu64 " interval%s", n, n == 1 ? "" : "s");
	if (p->prof.interval_ns > 0 && !strcmp(p->prof.time_base ? p->prof.time_base : "", "wall"))
		fprintf(out, " (%.3f s)", (double)n * (double)p->prof.interval_ns / 1e9);
	fprintf(out, "; the profile's own is %" PRId64 "\n", p->prof.window_intervals);
	if (s->level_max)
		fputs("sampled: ≈ estimates from the members of each window's coarsest level, with 95 % intervals\n", out);
	fprintf(out, "%8s %12s %10s %10s %10s %10s %10s %6s\n", "seq", "t", "data", "lo", "hi",
		s->writes ? "write" : "-", s->writes ? "read" : "-", "rate");
	for (size_t i = 0; i < res->n; i++) {
		const win_sample_t *o = &res->v[i];
		fprintf(out, "%8" PRIu64 " %10.3f s %10" PRIu64, o->seq, (double)o->t_ns / 1e9, o->data.est);
		if (o->ci)
			fprintf(out, " %10" PRIu64 " %10" PRIu64, o->data.lo, o->data.hi);
		else
			fprintf(out, " %10s %10s", "-", "-");
		if (s->writes)
			fprintf(out, " %10" PRIu64 " %10" PRIu64, o->write.est, o->read);
		else
			fprintf(out, " %10s %10s", "-", "-");
		fprintf(out, " %6llu\n", 1ull << o->level);
	}
	uint64_t a = wss_load_avg_tenths(res->sum, res->n);
	int64_t ps = p->prof.page_size;
	fprintf(out, "Data avg/peak/total: %s%" PRIu64 ".%" PRIu64 "/%" PRIu64 "/%" PRIu64 " pages (%" PRIu64 "/%" PRIu64
		     "/%" PRIu64 " kB)\n",
		s->level_max ? "≈ " : "", a / 10, a % 10, res->peak, res->total, wss_load_kb(a, ps),
		wss_load_kb(res->peak * 10, ps), wss_load_kb(res->total * 10, ps));
}

static void win_csv(FILE *out, const win_result_t *res, bool writes)
{
	fputs("seq,t_ns,data,data_lo,data_hi,write,read,rate,members_touched\n", out);
	for (size_t i = 0; i < res->n; i++) {
		const win_sample_t *o = &res->v[i];
		fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", o->seq, o->t_ns, o->data.est);
		if (o->ci)
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",", o->data.lo, o->data.hi);
		else
			fputs(",,", out);
		if (writes)
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",", o->write.est, o->read);
		else
			fputs(",,", out);
		fprintf(out, "%llu,%" PRIu64 "\n", 1ull << o->level, o->x);
	}
}

static void win_json(FILE *out, const wss_pair_t *p, const wss_scan_t *s, uint64_t n, const win_result_t *res)
{
	fputc('{', out);
	json_source(out, p);
	fprintf(out, ",\"window\":%" PRIu64 ",\"page_size\":%" PRId64 ",\"samples\":[", n, p->prof.page_size);
	for (size_t i = 0; i < res->n; i++) {
		const win_sample_t *o = &res->v[i];
		fprintf(out, "%s{\"seq\":%" PRIu64 ",\"t_ns\":%" PRIu64 ",\"data\":%" PRIu64, i ? "," : "", o->seq, o->t_ns,
			o->data.est);
		if (s->writes)
			fprintf(out, ",\"write\":%" PRIu64 ",\"read\":%" PRIu64, o->write.est, o->read);
		fprintf(out, ",\"rate\":%llu", 1ull << o->level);
		if (o->level)
			fprintf(out, ",\"members_touched\":%" PRIu64, o->x);
		if (o->ci)
			fprintf(out, ",\"data_ci\":[%" PRIu64 ",%" PRIu64 "]", o->data.lo, o->data.hi);
		fputc('}', out);
	}
	uint64_t a = wss_load_avg_tenths(res->sum, res->n);
	fprintf(out, "],\"data\":{\"avg\":%" PRIu64 ".%" PRIu64 ",\"peak\":%" PRIu64 ",\"total\":%" PRIu64
		     ",\"estimated\":%s}}\n",
		a / 10, a % 10, res->peak, res->total, s->level_max ? "true" : "false");
}

int wss_cmd_window(int argc, char **argv)
{
	const char *wn = NULL, *paths[1];
	bool csv = false, json = false;
	const wss_opt_t opts[] = {{"--window", &wn, NULL}, {"--csv", NULL, &csv}, {"--json", NULL, &json}};
	size_t np;
	int r = wss_opts_parse("window", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss window --window N PROFILE");
	wss_out_t form;
	uint64_t n;
	if (r || (r = output_form("window", csv, json, &form)))
		return r;
	if (!wn)
		return usage_error("window", "--window N is required (the window in intervals)", NULL);
	if ((r = wss_opts_number("window", "--window", wn, 1, UINT32_MAX, &n)))
		return r;
	wss_pair_t p;
	wss_scan_t s;
	if ((r = open_scanned(paths[0], &p, &s)))
		return r;
	win_result_t res;
	if (!(r = win_compute(&p, &s, n, &res))) {
		wss_pair_note_end(&p);
		if (form == WSS_OUT_JSON)
			win_json(stdout, &p, &s, n, &res);
		else if (form == WSS_OUT_CSV)
			win_csv(stdout, &res, s.writes);
		else
			win_text(stdout, &p, &s, n, &res);
		r = finish(stdout, "window");
		free(res.v);
	}
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

/* ---- the reference string (mrc, simulate) ---- */

/* The trace's pages, interval by interval, in increasing address order
 * within each interval: one reference per page and interval.  At a
 * sampled level the string keeps the members of the trace's coarsest
 * level (the sample every interval observed), each standing for rate
 * pages: a spatially sampled string (SHARDS). */
typedef struct refs {
	uint32_t *r;
	size_t n, cap;
	size_t *ends; /* per interval: n after it */
	size_t nends;
	size_t npages; /* page indices are below this */
	uint64_t distinct;
	unsigned level;
	uint64_t rate;
} refs_t;

static void refs_release(refs_t *rs)
{
	free(rs->r);
	free(rs->ends);
	memset(rs, 0, sizeof *rs);
}

static int refs_build(wss_pair_t *p, const wss_scan_t *s, refs_t *rs, const char *cmd)
{
	memset(rs, 0, sizeof *rs);
	rs->level = s->level_max;
	rs->rate = 1ull << s->level_max;
	rs->npages = s->map.n;
	rs->ends = malloc((s->intervals ? s->intervals : 1) * sizeof *rs->ends);
	uint8_t *seen = calloc(s->map.n ? s->map.n : 1, 1);
	if (!rs->ends || !seen) {
		free(seen);
		refs_release(rs);
		return nomem_cmd(cmd);
	}
	wss_trace_interval_t iv;
	bool got;
	int r;
	while (!(r = wss_trace_next(&p->trace, &iv, &got)) && got) {
		for (size_t k = 0; k < iv.nruns; k++)
			for (uint64_t pn = iv.runs[k].first; pn < iv.runs[k].first + iv.runs[k].n; pn++) {
				if (rs->level && !wss_sample_member(pn, rs->level, p->prof.sampling_seed))
					continue;
				if (rs->n == rs->cap) {
					size_t c = rs->cap ? 2 * rs->cap : 4096;
					uint32_t *m = realloc(rs->r, c * sizeof *m);
					if (!m) {
						free(seen);
						refs_release(rs);
						return nomem_cmd(cmd);
					}
					rs->r = m;
					rs->cap = c;
				}
				uint32_t idx = 0;
				wss_pagemap_find(&s->map, pn, &idx);
				rs->r[rs->n++] = idx;
				rs->distinct += !seen[idx];
				seen[idx] = 1;
			}
		rs->ends[rs->nends++] = rs->n;
	}
	free(seen);
	if (r)
		refs_release(rs);
	return r;
}

/* Frames of the sampled string for a memory of size pages: size / rate,
 * rounded down (a memory smaller than a sampled page holds none). */
static size_t scaled_frames(const refs_t *rs, uint64_t size) { return (size_t)(size >> rs->level); }

/* OPT's hits for a memory of size pages, over the sampled string. */
static int opt_hits(const refs_t *rs, const uint64_t *next, uint64_t size, uint64_t *hits)
{
	wss_policy_t *pol;
	if (wss_policy_new(WSS_POLICY_OPT, scaled_frames(rs, size), rs->npages, &pol))
		return ENOMEM;
	uint64_t h = 0;
	for (size_t i = 0; i < rs->n; i++)
		h += wss_policy_ref(pol, rs->r[i], next[i]);
	wss_policy_free(pol);
	*hits = h * rs->rate;
	return 0;
}

/* ---- mrc ---- */

typedef struct mrc_point {
	uint64_t size, lru_hits, opt_hits;
} mrc_point_t;

static const unsigned quantiles[3] = {90, 95, 99};

static void mrc_text(FILE *out, const wss_pair_t *p, const refs_t *rs, uint64_t refs, uint64_t cold,
		     const mrc_point_t *pt, size_t npt, const uint64_t *q, bool opt)
{
	text_source(out, "mrc", p);
	char g[32];
	double ps = (double)p->prof.page_size;
	fprintf(out, "references %s: each page's first touch in each interval, in address order within it\n",
		wss_text_grouped(g, sizeof g, refs));
	fprintf(out, "pages      %s distinct (%.3f MiB): each one's first reference misses at every size\n",
		wss_text_grouped(g, sizeof g, cold), (double)cold * ps / MIB);
	if (rs->level)
		fprintf(out, "sampled    the members of 1 page in %" PRIu64 " (the trace's coarsest level), "
			     "distances and counts scaled by %" PRIu64 "\n",
			rs->rate, rs->rate);
	fprintf(out, "%12s %12s %12s%s\n", "pages", "MiB", "LRU misses", opt ? "   OPT misses" : "");
	for (size_t i = 0; i < npt; i++) {
		fprintf(out, "%12" PRIu64 " %12.3f %10.2f %%", pt[i].size, (double)pt[i].size * ps / MIB,
			refs ? 100.0 * (double)(refs - pt[i].lru_hits) / (double)refs : 0.0);
		if (opt)
			fprintf(out, " %10.2f %%", refs ? 100.0 * (double)(refs - pt[i].opt_hits) / (double)refs : 0.0);
		fputc('\n', out);
	}
	fputs("LRU memory for", out);
	for (int k = 0; k < 3; k++)
		fprintf(out, "%s %u %%", k ? " /" : "", quantiles[k]);
	fputs(" of the re-references to hit:", out);
	for (int k = 0; k < 3; k++)
		if (q[k])
			fprintf(out, "%s %" PRIu64, k ? " /" : "", q[k]);
		else
			fprintf(out, "%s -", k ? " /" : "");
	fputs(" pages (", out);
	for (int k = 0; k < 3; k++)
		fprintf(out, "%s%.3f", k ? " / " : "", (double)q[k] * ps / MIB);
	fputs(" MiB)\n", out);
}

static void mrc_csv(FILE *out, int64_t ps, uint64_t refs, const mrc_point_t *pt, size_t npt, bool opt)
{
	fputs("pages,mib,references,lru_misses,lru_miss_ratio,opt_misses,opt_miss_ratio\n", out);
	for (size_t i = 0; i < npt; i++) {
		fprintf(out, "%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%.9g,", pt[i].size, (double)pt[i].size * (double)ps / MIB,
			refs, refs - pt[i].lru_hits, refs ? (double)(refs - pt[i].lru_hits) / (double)refs : 0.0);
		if (opt)
			fprintf(out, "%" PRIu64 ",%.9g\n", refs - pt[i].opt_hits,
				refs ? (double)(refs - pt[i].opt_hits) / (double)refs : 0.0);
		else
			fputs(",\n", out);
	}
}

static void mrc_json(FILE *out, const wss_pair_t *p, const refs_t *rs, uint64_t refs, uint64_t cold,
		     const mrc_point_t *pt, size_t npt, const uint64_t *q, bool opt)
{
	fputc('{', out);
	json_source(out, p);
	fprintf(out, ",\"page_size\":%" PRId64 ",\"rate\":%" PRIu64 ",\"references\":%" PRIu64 ",\"distinct\":%" PRIu64
		     ",\"curve\":[",
		p->prof.page_size, rs->rate, refs, cold);
	for (size_t i = 0; i < npt; i++) {
		fprintf(out, "%s{\"pages\":%" PRIu64 ",\"mib\":", i ? "," : "", pt[i].size);
		json_num(out, (double)pt[i].size * (double)p->prof.page_size / MIB);
		fprintf(out, ",\"lru_misses\":%" PRIu64 ",\"lru_miss_ratio\":", refs - pt[i].lru_hits);
		json_num(out, refs ? (double)(refs - pt[i].lru_hits) / (double)refs : 0.0);
		if (opt) {
			fprintf(out, ",\"opt_misses\":%" PRIu64 ",\"opt_miss_ratio\":", refs - pt[i].opt_hits);
			json_num(out, refs ? (double)(refs - pt[i].opt_hits) / (double)refs : 0.0);
		}
		fputc('}', out);
	}
	fputs("],\"lru_hit_sizes\":{", out);
	for (int k = 0; k < 3; k++) {
		fprintf(out, "%s\"%u\":", k ? "," : "", quantiles[k]);
		if (q[k])
			fprintf(out, "%" PRIu64, q[k]);
		else
			fputs("null", out);
	}
	fputs("}}\n", out);
}

/* The default sizes: powers of two up to the distinct pages, and those. */
static int default_sizes(uint64_t distinct, uint64_t **sizes, size_t *n)
{
	*n = 0;
	if (!(*sizes = malloc(66 * sizeof **sizes)))
		return ENOMEM;
	for (uint64_t c = 1; c < distinct; c *= 2)
		(*sizes)[(*n)++] = c;
	(*sizes)[(*n)++] = distinct ? distinct : 1;
	return 0;
}

int wss_cmd_mrc_to(int argc, char **argv, FILE *out)
{
	const char *sz = NULL, *paths[1];
	bool csv = false, json = false, no_opt = false;
	const wss_opt_t opts[] = {{"--sizes", &sz, NULL}, {"--no-opt", NULL, &no_opt}, {"--csv", NULL, &csv},
				  {"--json", NULL, &json}};
	size_t np, nsizes = 0;
	int r = wss_opts_parse("mrc", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss mrc [--sizes N,...] PROFILE");
	wss_out_t form;
	uint64_t *sizes = NULL;
	if (r || (r = output_form("mrc", csv, json, &form)))
		return r;
	if (sz && (r = number_list("mrc", "--sizes", sz, 1, UINT64_MAX >> 1, &sizes, &nsizes)))
		return r;
	wss_pair_t p;
	wss_scan_t s;
	refs_t rs;
	if ((r = open_scanned(paths[0], &p, &s))) {
		free(sizes);
		return r;
	}
	if ((r = refs_build(&p, &s, &rs, "mrc")))
		goto out_scan;
	/* LRU: the histogram of stack distances, cumulated. */
	wss_stackdist_t sd;
	uint64_t *cum = calloc(rs.npages + 2, sizeof *cum), *next = NULL;
	mrc_point_t *pt = NULL;
	if (!cum || wss_stackdist_init(&sd, rs.npages)) {
		free(cum);
		r = nomem_cmd("mrc");
		goto out_refs;
	}
	for (size_t i = 0; i < rs.n; i++) {
		uint64_t d;
		wss_stackdist_ref(&sd, rs.r[i], &d);
		cum[d]++; /* d = 0: a first reference */
	}
	wss_stackdist_release(&sd);
	uint64_t cold = cum[0];
	cum[0] = 0;
	for (size_t d = 1; d <= rs.npages; d++)
		cum[d] += cum[d - 1];
	uint64_t refs = (uint64_t)rs.n * rs.rate, reuse = rs.n - cold;
	/* The smallest size whose LRU hits q % of the re-references. */
	uint64_t q[3] = {0, 0, 0};
	for (int k = 0; k < 3 && reuse; k++) {
		size_t d = 1;
		while (d < rs.npages && cum[d] * 100 < (uint64_t)quantiles[k] * reuse)
			d++;
		q[k] = (uint64_t)d * rs.rate;
	}
	if (!sizes && default_sizes(rs.distinct * rs.rate, &sizes, &nsizes)) {
		r = nomem_cmd("mrc");
		goto out_cum;
	}
	pt = calloc(nsizes, sizeof *pt);
	if (!pt || (!no_opt && !(next = malloc((rs.n ? rs.n : 1) * sizeof *next))) ||
	    (next && wss_policy_next_uses(rs.r, rs.n, rs.npages, next))) {
		r = nomem_cmd("mrc");
		goto out_cum;
	}
	for (size_t i = 0; i < nsizes; i++) {
		size_t f = scaled_frames(&rs, sizes[i]);
		pt[i].size = sizes[i];
		pt[i].lru_hits = cum[f < rs.npages ? f : rs.npages] * rs.rate;
		if (next && opt_hits(&rs, next, sizes[i], &pt[i].opt_hits)) {
			r = nomem_cmd("mrc");
			goto out_cum;
		}
	}
	wss_pair_note_end(&p);
	if (form == WSS_OUT_JSON)
		mrc_json(out, &p, &rs, refs, cold * rs.rate, pt, nsizes, q, !no_opt);
	else if (form == WSS_OUT_CSV)
		mrc_csv(out, p.prof.page_size, refs, pt, nsizes, !no_opt);
	else
		mrc_text(out, &p, &rs, refs, cold * rs.rate, pt, nsizes, q, !no_opt);
	r = finish(out, "mrc");
out_cum:
	free(cum);
	free(next);
	free(pt);
out_refs:
	refs_release(&rs);
out_scan:
	free(sizes);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

int wss_cmd_mrc(int argc, char **argv) { return wss_cmd_mrc_to(argc, argv, stdout); }

/* ---- simulate ---- */

typedef struct sim_result {
	wss_policy_kind_t kind;
	uint64_t frames, hits, faults;
	uint64_t *period_hits, *period_refs; /* per period */
} sim_result_t;

/* One policy and size over the string; periods of period sampled
 * references each. */
static int sim_run(const refs_t *rs, const uint64_t *next, size_t period, size_t nperiods, sim_result_t *o)
{
	wss_policy_t *pol;
	o->period_hits = calloc(nperiods, sizeof *o->period_hits);
	o->period_refs = calloc(nperiods, sizeof *o->period_refs);
	if (!o->period_hits || !o->period_refs || wss_policy_new(o->kind, scaled_frames(rs, o->frames), rs->npages, &pol))
		return ENOMEM;
	size_t e = 0;
	for (size_t i = 0; i < rs->n; i++) {
		while (e < rs->nends && rs->ends[e] == i) {
			wss_policy_interval_end(pol);
			e++;
		}
		bool hit = wss_policy_ref(pol, rs->r[i], next ? next[i] : WSS_POLICY_NEVER);
		o->hits += hit;
		o->period_hits[i / period] += hit;
		o->period_refs[i / period]++;
	}
	wss_policy_free(pol);
	o->hits *= rs->rate;
	o->faults = (uint64_t)rs->n * rs->rate - o->hits;
	for (size_t k = 0; k < nperiods; k++) {
		o->period_hits[k] *= rs->rate;
		o->period_refs[k] *= rs->rate;
	}
	return 0;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void sim_text(FILE *out, const wss_pair_t *p, const refs_t *rs, const sim_result_t *res, size_t nres,
		     uint64_t period, size_t nperiods)
{
	text_source(out, "simulate", p);
	char g[32], g2[32];
	fprintf(out, "references %s (each page's first touch in each interval, in address order within it); pages %s distinct\n",
		wss_text_grouped(g, sizeof g, (uint64_t)rs->n * rs->rate), wss_text_grouped(g2, sizeof g2, rs->distinct * rs->rate));
	if (rs->level)
		fprintf(out, "sampled    1 page in %" PRIu64 ": frames / %" PRIu64 " on the sampled string, counts x %" PRIu64
			     "\n",
			rs->rate, rs->rate, rs->rate);
	fprintf(out, "%-8s %10s %14s %14s %9s\n", "policy", "frames", "faults", "hits", "hit ratio");
	for (size_t i = 0; i < nres; i++)
		fprintf(out, "%-8s %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %9.4f\n", wss_policy_name(res[i].kind),
			res[i].frames, res[i].faults, res[i].hits, ratio(res[i].hits, res[i].hits + res[i].faults));
	fprintf(out, "hit ratio over time, every %s references:\n", wss_text_grouped(g, sizeof g, period));
	for (size_t i = 0; i < nres; i++) {
		fprintf(out, "%-8s %10" PRIu64 " ", wss_policy_name(res[i].kind), res[i].frames);
		for (size_t k = 0; k < nperiods; k++)
			fprintf(out, " %.2f", ratio(res[i].period_hits[k], res[i].period_refs[k]));
		fputc('\n', out);
	}
}

static void sim_csv(FILE *out, const sim_result_t *res, size_t nres, size_t nperiods)
{
	fputs("policy,frames,period,references,hits,faults,hit_ratio\n", out);
	for (size_t i = 0; i < nres; i++) {
		const sim_result_t *o = &res[i];
		const char *name = wss_policy_name(o->kind);
		fprintf(out, "%s,%" PRIu64 ",all,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9g\n", name, o->frames,
			o->hits + o->faults, o->hits, o->faults, ratio(o->hits, o->hits + o->faults));
		for (size_t k = 0; k < nperiods; k++)
			fprintf(out, "%s,%" PRIu64 ",%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9g\n", name, o->frames, k + 1,
				o->period_refs[k], o->period_hits[k], o->period_refs[k] - o->period_hits[k],
				ratio(o->period_hits[k], o->period_refs[k]));
	}
}

static void sim_json(FILE *out, const wss_pair_t *p, const refs_t *rs, const sim_result_t *res, size_t nres,
		     uint64_t period, size_t nperiods)
{
	fputc('{', out);
	json_source(out, p);
	fprintf(out, ",\"rate\":%" PRIu64 ",\"references\":%" PRIu64 ",\"distinct\":%" PRIu64 ",\"period\":%" PRIu64
		     ",\"results\":[",
		rs->rate, (uint64_t)rs->n * rs->rate, rs->distinct * rs->rate, period);
	for (size_t i = 0; i < nres; i++) {
		const sim_result_t *o = &res[i];
		fprintf(out, "%s{\"policy\":\"%s\",\"frames\":%" PRIu64 ",\"faults\":%" PRIu64 ",\"hits\":%" PRIu64
			     ",\"hit_ratio\":",
			i ? "," : "", wss_policy_name(o->kind), o->frames, o->faults, o->hits);
		json_num(out, ratio(o->hits, o->hits + o->faults));
		fputs(",\"over_time\":[", out);
		for (size_t k = 0; k < nperiods; k++) {
			if (k)
				fputc(',', out);
			json_num(out, ratio(o->period_hits[k], o->period_refs[k]));
		}
		fputs("]}", out);
	}
	fputs("]}\n", out);
}

int wss_cmd_simulate_to(int argc, char **argv, FILE *out)
{
	const char *pol = NULL, *fr = NULL, *per = NULL, *paths[1];
	bool csv = false, json = false;
	const wss_opt_t opts[] = {{"--policy", &pol, NULL}, {"--frames", &fr, NULL}, {"--period", &per, NULL},
				  {"--csv", NULL, &csv}, {"--json", NULL, &json}};
	size_t np, nframes = 0, nkinds = 0;
	int r = wss_opts_parse("simulate", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss simulate [--policy P,...] [--frames N,...] [--period N] PROFILE");
	wss_out_t form;
	uint64_t *frames = NULL, period = 0;
	wss_policy_kind_t kinds[WSS_POLICY_N];
	if (r || (r = output_form("simulate", csv, json, &form)))
		return r;
	if (!pol)
		for (int k = 0; k < WSS_POLICY_N; k++)
			kinds[nkinds++] = (wss_policy_kind_t)k;
	for (const char *c = pol; c && *c;) {
		size_t len = strcspn(c, ",");
		char name[16];
		snprintf(name, sizeof name, "%.*s", (int)(len < 15 ? len : 15), c);
		wss_policy_kind_t k;
		if (len >= sizeof name || !wss_policy_parse(name, &k))
			return usage_error("simulate", "--policy: fifo, lru, clock, nfu, aging or opt, not ", name);
		if (nkinds == WSS_POLICY_N)
			return usage_error("simulate", "--policy: each policy once", NULL);
		kinds[nkinds++] = k;
		c += len + (c[len] == ',');
	}
	if (pol && !nkinds)
		return usage_error("simulate", "an empty list for --policy", NULL);
	if (per && (r = wss_opts_number("simulate", "--period", per, 1, UINT64_MAX >> 1, &period)))
		return r;
	if (fr && (r = number_list("simulate", "--frames", fr, 0, UINT32_MAX, &frames, &nframes)))
		return r;
	wss_pair_t p;
	wss_scan_t s;
	refs_t rs;
	sim_result_t *res = NULL;
	uint64_t *next = NULL;
	size_t nres = 0;
	if ((r = open_scanned(paths[0], &p, &s))) {
		free(frames);
		return r;
	}
	if ((r = refs_build(&p, &s, &rs, "simulate")))
		goto out_scan;
	if (!frames && default_sizes(rs.distinct * rs.rate, &frames, &nframes)) {
		r = nomem_cmd("simulate");
		goto out_refs;
	}
	/* Ten periods by default; in sampled references, at least one. */
	uint64_t total = (uint64_t)rs.n * rs.rate;
	if (!period)
		period = total > 10 ? (total + 9) / 10 : 1;
	size_t sp = (size_t)(period >> rs.level) ? (size_t)(period >> rs.level) : 1;
	size_t nperiods = rs.n ? (rs.n + sp - 1) / sp : 0;
	res = calloc(nkinds * nframes, sizeof *res);
	if (!res) {
		r = nomem_cmd("simulate");
		goto out_refs;
	}
	for (size_t k = 0; k < nkinds; k++) {
		if (kinds[k] == WSS_POLICY_OPT && !next &&
		    (!(next = malloc((rs.n ? rs.n : 1) * sizeof *next)) ||
		     wss_policy_next_uses(rs.r, rs.n, rs.npages, next))) {
			r = nomem_cmd("simulate");
			goto out_res;
		}
		for (size_t f = 0; f < nframes; f++) {
			sim_result_t *o = &res[nres++];
			o->kind = kinds[k];
			o->frames = frames[f];
			if (sim_run(&rs, kinds[k] == WSS_POLICY_OPT ? next : NULL, sp, nperiods, o)) {
				r = nomem_cmd("simulate");
				goto out_res;
			}
		}
	}
	wss_pair_note_end(&p);
	if (form == WSS_OUT_JSON)
		sim_json(out, &p, &rs, res, nres, (uint64_t)sp * rs.rate, nperiods);
	else if (form == WSS_OUT_CSV)
		sim_csv(out, res, nres, nperiods);
	else
		sim_text(out, &p, &rs, res, nres, (uint64_t)sp * rs.rate, nperiods);
	r = finish(out, "simulate");
out_res:
	for (size_t i = 0; i < nres; i++) {
		free(res[i].period_hits);
		free(res[i].period_refs);
	}
	free(res);
	free(next);
out_refs:
	refs_release(&rs);
out_scan:
	free(frames);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

int wss_cmd_simulate(int argc, char **argv) { return wss_cmd_simulate_to(argc, argv, stdout); }
