/* `wss heatmap` (analyses.h): a profile's page touches on a grid of time
 * bins by page bins, the pages by index or by address, as a text map,
 * CSV or JSON; or two profiles' maps compared (--compare).  The bins'
 * and shades' arithmetic is heatmap.c's. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <inttypes.h>
#include <string.h>

#include "cli/analyses/heatmap.h"
#include "cli/out/text.h"

#define EXIT_USAGE 2

enum { HEAT_TBINS = 72, HEAT_PBINS = 24 };
static const char shades[] = " .:-=+*#%@";

typedef struct heat_axes {
	bool by_address;
	uint64_t items;	 /* pages: distinct (index) or the span of page numbers (address) */
	uint64_t lo;	 /* address: the lowest page number */
} heat_axes_t;

static heat_axes_t heat_axes(const wss_scan_t *s, bool by_address)
{
	const wss_ranges_t *pg = &s->pages;
	heat_axes_t a = {by_address, pg->pages, 0};
	if (by_address && pg->n) {
		a.lo = pg->v[0].first;
		a.items = pg->v[pg->n - 1].first + pg->v[pg->n - 1].n - a.lo;
	}
	return a;
}

/* Items [i, i + n) touched in time bin tb, each counting w: w times
 * their overlap with each page bin (page by page in the tests' reference
 * build). */
static void heat_add(wss_heat_t *h, uint64_t items, size_t tb, uint64_t i, uint64_t n, uint64_t w)
{
	uint64_t end = i + n;
	if (WSS_PER_PAGE) {
		for (; i < end; i++)
			h->cells[wss_heat_bin(i, items, h->pbins) * h->tbins + tb] += w;
		return;
	}
	for (size_t b = wss_heat_bin(i, items, h->pbins); i < end; b++) {
		uint64_t next = wss_heat_bin_first(b + 1, items, h->pbins), upto = next < end ? next : end;
		h->cells[b * h->tbins + tb] += w * (upto - i);
		i = upto;
	}
}

/* The second pass: every (page, interval) touch into its cell, scaled by
 * the interval's rate.  A run's pages have consecutive items (it lies in
 * one range of the distinct pages). */
static int heat_fill(wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax, wss_heat_t *h)
{
	wss_trace_interval_t iv;
	bool got;
	int r;
	for (uint64_t i = 0; !(r = wss_trace_next(&p->trace, &iv, &got)) && got; i++) {
		size_t tb = wss_heat_bin(i, s->intervals, h->tbins);
		for (size_t k = 0; k < iv.nruns; k++) {
			uint64_t item = iv.runs[k].first - ax->lo;
			if (!ax->by_address)
				wss_ranges_index(&s->pages, iv.runs[k].first, &item);
			heat_add(h, ax->items, tb, item, iv.runs[k].n, 1ull << iv.level);
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

/* The text map's y axis: its labels' width (at least its title's). */
static int heat_label_width(const wss_pair_t *p, const heat_axes_t *ax, const wss_heat_t *h)
{
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
	return width;
}

/* The key: each shade's range of touches, as wss_heat_shade draws them,
 * wrapped at column 80 under its title. */
static void heat_scale(FILE *out, uint64_t max)
{
	int col = fprintf(out, "scale  ' ' 0");
	for (unsigned sh = 1; sh <= 9; sh++) {
		uint64_t lo = max * (sh - 1) / 9 + 1, hi = max * sh / 9;
		char e[64];
		if (lo > hi)
			continue;
		int n = lo == hi ? snprintf(e, sizeof e, "'%c' %" PRIu64, shades[sh], lo)
				 : snprintf(e, sizeof e, "'%c' %" PRIu64 "-%" PRIu64, shades[sh], lo, hi);
		if (col + 2 + n > 80)
			col = fprintf(out, "\n     ") - 1;
		col += fprintf(out, "  %s", e);
	}
	fputc('\n', out);
}

/* The CPU seconds of the profile's sample seq (found by bisection: the
 * samples are in seq order).  False when there is no such sample or it
 * has no cpu_ns. */
static bool tick_cpu_seconds(const wss_profile_t *prof, uint64_t seq, double *sec)
{
	size_t lo = 0, hi = prof->nsamples;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (prof->samples[mid].seq < (int64_t)seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == prof->nsamples || prof->samples[lo].seq != (int64_t)seq || prof->samples[lo].cpu_ns < 0)
		return false;
	*sec = (double)prof->samples[lo].cpu_ns / 1e9;
	return true;
}

/* The x axis's clock: 'm' under the manual time base (no time: the
 * ticks are the program's calls, the seq says it all), 'c' under cpu when
 * every interval's sample has its CPU time, else 'w' (the clock's
 * t_ns). */
static int heat_time_base(const wss_pair_t *p, const wss_scan_t *s)
{
	const char *tb = p->prof.time_base ? p->prof.time_base : "";
	if (!strcmp(tb, "manual"))
		return 'm';
	double sec;
	for (uint64_t i = 0; !strcmp(tb, "cpu") && i < s->intervals; i++)
		if (!tick_cpu_seconds(&p->prof, s->seq[i], &sec))
			return 'w';
	return strcmp(tb, "cpu") ? 'w' : 'c';
}

enum { HEAT_TICK_EVERY = 18, HEAT_TICKS_MAX = 16 };

/* A mark of the x axis: its column, and the seq and time of the interval
 * it names (a column's first; the last column's last). */
typedef struct heat_tick {
	size_t col;
	char seq[24], time[32];
	int width; /* of the longer label */
} heat_tick_t;

/* Mark k at column col naming interval i, in time base base
 * (heat_time_base). */
static void heat_tick_at(heat_tick_t *k, size_t col, const wss_pair_t *p, const wss_scan_t *s, size_t i, int base)
{
	double sec = (double)s->t_ns[i] / 1e9;
	if (base == 'c')
		tick_cpu_seconds(&p->prof, s->seq[i], &sec);
	k->col = col;
	snprintf(k->seq, sizeof k->seq, "%" PRIu64, s->seq[i]);
	if (base == 'm')
		k->time[0] = '\0';
	else
		snprintf(k->time, sizeof k->time, "%.3f", sec);
	int a = (int)strlen(k->seq), b = (int)strlen(k->time);
	k->width = a > b ? a : b;
}

/* The marks: the first column, about every HEAT_TICK_EVERY columns
 * those whose labels fit two spaces from their neighbours', and the last
 * column (its labels end there).  Returns how many, into k. */
static size_t heat_ticks(heat_tick_t *k, const wss_pair_t *p, const wss_scan_t *s, size_t cols, int base)
{
	uint64_t f, l;
	size_t want = cols / HEAT_TICK_EVERY < HEAT_TICKS_MAX ? cols / HEAT_TICK_EVERY : HEAT_TICKS_MAX, n = 1;
	heat_tick_t last;
	bin_range(cols - 1, s->intervals, cols, &f, &l);
	heat_tick_at(&last, cols - 1, p, s, (size_t)l, base);
	heat_tick_at(&k[0], 0, p, s, 0, base);
	int room = (int)cols - last.width; /* where the last's labels start */
	for (size_t j = 1; j < want; j++) {
		size_t c = j * (cols - 1) / want;
		bin_range(c, s->intervals, cols, &f, &l);
		heat_tick_at(&k[n], c, p, s, (size_t)f, base);
		if ((int)c >= (int)k[n - 1].col + k[n - 1].width + 2 && (int)c + k[n].width + 2 <= room)
			n++;
	}
	if (cols > 1 && (int)k[n - 1].col + k[n - 1].width + 2 <= room)
		k[n++] = last;
	return n;
}

/* A row of labels under the axis, after the margin's title: the last
 * mark's right-aligned to its column, the others left-aligned. */
static void heat_tick_row(FILE *out, int width, const char *title, const heat_tick_t *k, size_t n, bool seq)
{
	fprintf(out, "%*s  ", width, title);
	int col = 0;
	for (size_t j = 0; j < n; j++) {
		const char *l = seq ? k[j].seq : k[j].time;
		int at = (int)k[j].col - (j && j == n - 1 ? (int)strlen(l) - 1 : 0);
		col += fprintf(out, "%*s%s", at - col, "", l);
	}
	fputc('\n', out);
}

/* The x axis: a rule with the marks, the seq of the interval each names
 * and its time in the profile's time base, in seconds since start (none
 * under the manual time base, whose ticks are the program's calls). */
static void heat_xaxis(FILE *out, const wss_pair_t *p, const wss_scan_t *s, const wss_heat_t *h, int width, int base)
{
	heat_tick_t k[HEAT_TICKS_MAX + 1];
	size_t n = heat_ticks(k, p, s, h->tbins, base);
	fprintf(out, "%*s +", width, "");
	for (size_t t = 0, j = 1; t < h->tbins; t++) {
		bool mark = j < n && k[j].col == t;
		j += mark;
		fputc(mark ? '+' : '-', out);
	}
	fputc('\n', out);
	heat_tick_row(out, width, "seq", k, n, true);
	if (base != 'm')
		heat_tick_row(out, width, "s", k, n, false);
}

static void heat_text(FILE *out, const wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax,
		      const wss_heat_t *h)
{
	wss_analyses_text_source(out, "heatmap", p);
	uint64_t max = wss_heat_max(h), total = wss_heat_total(h);
	int base = heat_time_base(p, s);
	char g[32], g2[32];
	fprintf(out, "pages  %s distinct, ", wss_text_grouped(g, sizeof g, s->pages.pages));
	if (ax->by_address)
		fprintf(out, "by address (0x%" PRIx64 "..0x%" PRIx64 "): %zu rows of ", ax->lo << p->trace.page_shift,
			(ax->lo + ax->items) << p->trace.page_shift, h->pbins);
	else
		fprintf(out, "by index (gaps removed): %zu rows of ", h->pbins);
	per_bin(out, ax->items, h->pbins, "page");
	fprintf(out, "\ntime   %" PRIu64 " intervals (seq %" PRIu64 "..%" PRIu64 "): %zu columns of ", s->intervals,
		s->seq[0], s->seq[s->intervals - 1], h->tbins);
	per_bin(out, s->intervals, h->tbins, "interval");
	fprintf(out, "%s\ncells  page touches (first per interval%s): max %s, total %s\n",
		base == 'c' ? "; s: CPU time" : "", s->level_max ? ", x rate" : "", wss_text_grouped(g, sizeof g, max),
		wss_text_grouped(g2, sizeof g2, total));
	heat_scale(out, max);
	char label[40];
	int width = heat_label_width(p, ax, h);
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
	heat_xaxis(out, p, s, h, width, base);
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

static void heat_json(wss_fmt_t *doc, const wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax,
		      const wss_heat_t *h)
{
	wss_fmt_ch(doc, '{');
	wss_analyses_json_source(doc, p);
	wss_analyses_jf(doc, ",\"by\":\"%s\",\"intervals\":%" PRIu64 ",\"pages\":%" PRIu64 ",\"level_max\":%u,\"page_size\":%" PRId64,
		ax->by_address ? "address" : "index", s->intervals, s->pages.pages, s->level_max, p->prof.page_size);
	wss_fmt_str(doc, ",\"time_bins\":[");
	for (size_t t = 0; t < h->tbins; t++) {
		uint64_t f, l;
		if (bin_range(t, s->intervals, h->tbins, &f, &l))
			wss_analyses_jf(doc, "%s{\"seq_first\":%" PRIu64 ",\"seq_last\":%" PRIu64 ",\"t_ns_first\":%" PRIu64
				     ",\"t_ns_last\":%" PRIu64 "}",
				t ? "," : "", s->seq[f], s->seq[l], s->t_ns[f], s->t_ns[l]);
		else
			wss_analyses_jf(doc, "%snull", t ? "," : "");
	}
	wss_fmt_str(doc, "],\"page_bins\":[");
	for (size_t b = 0; b < h->pbins; b++) {
		uint64_t f, l;
		char a[40], z[40];
		if (!bin_range(b, ax->items, h->pbins, &f, &l)) {
			wss_analyses_jf(doc, "%snull", b ? "," : "");
			continue;
		}
		page_label(a, sizeof a, ax, f, p->trace.page_shift);
		page_label(z, sizeof z, ax, l, p->trace.page_shift);
		if (ax->by_address)
			wss_analyses_jf(doc, "%s{\"first\":\"%s\",\"last\":\"%s\"}", b ? "," : "", a, z);
		else
			wss_analyses_jf(doc, "%s{\"first\":%s,\"last\":%s}", b ? "," : "", a, z);
	}
	wss_fmt_str(doc, "],\"cells\":[");
	for (size_t b = 0; b < h->pbins; b++) {
		wss_fmt_str(doc, b ? ",[" : "[");
		for (size_t t = 0; t < h->tbins; t++)
			wss_analyses_jf(doc, "%s%" PRIu64, t ? "," : "", h->cells[b * h->tbins + t]);
		wss_fmt_ch(doc, ']');
	}
	wss_analyses_jf(doc, "],\"max\":%" PRIu64 ",\"total\":%" PRIu64 "}", wss_heat_max(h), wss_heat_total(h));
}

typedef struct heat_req {
	uint64_t tbins, pbins; /* 0: the default */
	bool by_address;
	bool fit; /* the text map: the default columns fit in 80 with the labels */
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
	/* The widest label is at most the last item's (an address's hex, an
	 * index's digits): the rows, "LABEL |" and the cells, in 80 columns. */
	char label[40];
	page_label(label, sizeof label, ax, ax->items - 1, p->trace.page_shift);
	size_t room = 80 - 2 - (strlen(label) > 4 ? strlen(label) : 4);
	if (rq->fit && !rq->tbins && tb > room)
		tb = room;
	if (wss_heat_init(h, tb, pb))
		return wss_analyses_nomem("heatmap");
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
		wss_fmt_t f;
		if (form == WSS_OUT_JSON && !(r = wss_analyses_json_init(&f, "heatmap"))) {
			wss_fmt_str(&f, "{\"a\":");
			wss_fmt_json_str(&f, pp[0].prof.path);
			wss_fmt_str(&f, ",\"b\":");
			wss_fmt_json_str(&f, pp[1].prof.path);
			wss_analyses_jf(&f, ",\"by\":\"%s\",\"time_bins\":%" PRIu64 ",\"page_bins\":%" PRIu64 ",\"rmsd\":", by,
					rq.tbins, rq.pbins);
			wss_analyses_json_num(&f, d);
			wss_fmt_ch(&f, '}');
			r = wss_analyses_json_write(&f, 0, out, "heatmap");
		} else if (form == WSS_OUT_CSV) {
			fputs("a,b,by,time_bins,page_bins,rmsd\n", out);
			fprintf(out, "%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%.9g\n", pp[0].prof.path, pp[1].prof.path, by,
				rq.tbins, rq.pbins, d);
		} else if (form == WSS_OUT_TEXT) {
			fprintf(out, "wss heatmap --compare: %s and %s\n", pp[0].prof.path, pp[1].prof.path);
			fprintf(out, "grid   %" PRIu64 " time bins x %" PRIu64 " page bins, pages by %s, each map divided by its total\n",
				rq.tbins, rq.pbins, by);
			fprintf(out, "rmsd   %.9g\n", d);
		}
		if (form != WSS_OUT_JSON)
			r = wss_analyses_finish(out, "heatmap");
	}
	wss_heat_release(&h[0]);
	wss_heat_release(&h[1]);
	return r;
}

/* The map of the profile at path on rq's grid, in form: text and CSV to
 * out, JSON into json. */
static int heat_one(const char *path, heat_req_t rq, wss_out_t form, FILE *out, wss_fmt_t *json)
{
	wss_pair_t p;
	wss_scan_t s;
	int r = wss_analyses_open_scanned(path, &p, &s);
	if (r)
		return r;
	heat_axes_t ax;
	wss_heat_t h = {0};
	/* No more columns than intervals: a column narrower than one would
	 * stay empty and look like time the program was idle. (A comparison
	 * keeps the grid asked for: its two traces differ.) */
	if (rq.tbins > s.intervals && s.intervals)
		rq.tbins = s.intervals;
	if (!(r = heat_build(&p, &s, &ax, &h, &rq))) {
		wss_pair_note_end(&p);
		if (form == WSS_OUT_JSON)
			heat_json(json, &p, &s, &ax, &h);
		else if (form == WSS_OUT_CSV)
			heat_csv(out, &p, &s, &ax, &h);
		else
			heat_text(out, &p, &s, &ax, &h);
		if (form != WSS_OUT_JSON)
			r = wss_analyses_finish(out, "heatmap");
		wss_heat_release(&h);
	}
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

int wss_heatmap_json(const char *path, const wss_heatmap_opts_t *o, wss_fmt_t *f)
{
	heat_req_t rq = {o->time_bins, o->page_bins, o->by_address, false};
	return heat_one(path, rq, WSS_OUT_JSON, NULL, f);
}

int wss_cmd_heatmap(int argc, char **argv)
{
	const char *tb = NULL, *pb = NULL, *by = NULL, *paths[2];
	bool csv = false, json = false, compare = false;
	const wss_opt_t opts[] = {{"--time-bins", &tb, NULL}, {"--page-bins", &pb, NULL}, {"--by", &by, NULL},
				  {"--compare", NULL, &compare}, {"--csv", NULL, &csv}, {"--json", NULL, &json}};
	size_t n;
	int r = wss_opts_parse("heatmap", argc, argv, opts, sizeof opts / sizeof *opts, paths, 2, &n,
			       "wss heatmap [OPTIONS] PROFILE, or --compare A B");
	heat_req_t rq = {0, 0, false, false};
	wss_out_t form;
	if (r || (r = wss_analyses_output_form("heatmap", csv, json, &form)))
		return r;
	if (n != (compare ? 2u : 1u))
		return wss_analyses_usage_error("heatmap", compare ? "--compare takes two profiles" : "one profile at a time (two with --compare)", NULL);
	if (tb && (r = wss_opts_number("heatmap", "--time-bins", tb, 1, 100000, &rq.tbins)))
		return r;
	if (pb && (r = wss_opts_number("heatmap", "--page-bins", pb, 1, 100000, &rq.pbins)))
		return r;
	if (by && strcmp(by, "index") && strcmp(by, "address"))
		return wss_analyses_usage_error("heatmap", "--by takes index or address, not ", by);
	rq.by_address = by && !strcmp(by, "address");
	rq.fit = form == WSS_OUT_TEXT && !compare;
	if (!compare) {
		wss_fmt_t f;
		if (form != WSS_OUT_JSON)
			return heat_one(paths[0], rq, form, stdout, NULL);
		if ((r = wss_analyses_json_init(&f, "heatmap")))
			return r;
		return wss_analyses_json_write(&f, heat_one(paths[0], rq, form, NULL, &f), stdout, "heatmap");
	}
	wss_pair_t pp[2];
	wss_scan_t ss[2];
	if ((r = wss_analyses_open_scanned(paths[0], &pp[0], &ss[0])))
		return r;
	if (!(r = wss_analyses_open_scanned(paths[1], &pp[1], &ss[1]))) {
		r = heat_compare(pp, ss, rq, form, stdout);
		wss_scan_release(&ss[1]);
		wss_pair_close(&pp[1]);
	}
	wss_scan_release(&ss[0]);
	wss_pair_close(&pp[0]);
	return r;
}
