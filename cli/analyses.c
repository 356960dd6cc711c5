/* The trace analyses (analyses.h): `wss heatmap`, `wss window`, `wss mrc`
 * and `wss simulate`, and the plumbing replay.c shares.  Every command
 * reads the trace twice: a first pass checks every record (so a corrupt
 * trace is refused before any output) and collects the distinct pages as
 * ranges; the second computes.  A run is processed as a range: heat-map
 * bins take its overlap, the window keeps segments of pages with the same
 * newest touch, mrc's LRU stack segments of keys referenced in one go, so
 * time and memory follow the runs and events, not the pages they claim.
 * simulate and mrc's OPT walk the reference string one reference at a
 * time (4 bytes a reference, 12 with OPT, which needs each reference's
 * next use), up to REFS_MAX references.  docs/analyses.md defines what
 * each computes and what it can claim. */
#include "config.h"
#include "cli/analyses.h"
#include "config/config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/heatmap.h"
#include "cli/mrc.h"
#include "cli/pagemap.h"
#include "cli/policy.h"
#include "cli/segs.h"
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

int wss_reserve(void *array, size_t *cap, size_t n, size_t size)
{
	void **v = array;
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < n)
		c *= 2;
	void *m = realloc(*v, c * size);
	if (!m)
		return ENOMEM;
	*v = m;
	*cap = c;
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
	wss_ranges_release(&s->pages);
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
		for (size_t k = 0; k < iv.nruns; k++)
			if (wss_ranges_add(&s->pages, iv.runs[k].first, iv.runs[k].n))
				return scan_nomem(p, s);
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
	if (wss_ranges_finish(&s->pages))
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
			p->trace.end_reason == WSS_TRACE_END_RUN ? "exit"
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
	text_source(out, "heatmap", p);
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

static void heat_json(FILE *out, const wss_pair_t *p, const wss_scan_t *s, const heat_axes_t *ax,
		      const wss_heat_t *h)
{
	fputc('{', out);
	json_source(out, p);
	fprintf(out, ",\"by\":\"%s\",\"intervals\":%" PRIu64 ",\"pages\":%" PRIu64 ",\"level_max\":%u,\"page_size\":%" PRId64,
		ax->by_address ? "address" : "index", s->intervals, s->pages.pages, s->level_max, p->prof.page_size);
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
	heat_req_t rq = {0, 0, false, false};
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
	rq.fit = form == WSS_OUT_TEXT && !compare;
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

static int live_reserve(live_page_t **v, size_t *cap, size_t n) { return wss_reserve(v, cap, n, sizeof **v); }

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
	for (size_t i = 0; i < s->pages.n; i++)
		for (uint64_t pn = s->pages.v[i].first; pn < s->pages.v[i].first + s->pages.v[i].n && !r; pn++)
			r = wss_pagemap_add(m, pn, &idx, &added);
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

/* The window's level: the coarsest of its intervals, a sliding maximum
 * over the deque dq[qh..qt) of decreasing levels; and the series it
 * fills. */
typedef struct win_levels {
	size_t *dq, qh, qt;
} win_levels_t;

static int win_start(const wss_scan_t *s, win_result_t *res, win_levels_t *q)
{
	memset(res, 0, sizeof *res);
	q->qh = q->qt = 0;
	q->dq = malloc((s->intervals ? s->intervals : 1) * sizeof *q->dq);
	res->v = calloc(s->intervals ? s->intervals : 1, sizeof *res->v);
	return q->dq && res->v ? 0 : ENOMEM;
}

/* Interval i (seq k) enters the window: the window's level now. */
static unsigned win_level(const wss_scan_t *s, win_levels_t *q, size_t i, uint64_t k, uint64_t n)
{
	while (q->qt > q->qh && s->level[q->dq[q->qt - 1]] <= s->level[i])
		q->qt--;
	q->dq[q->qt++] = i;
	while (s->seq[q->dq[q->qh]] + n <= k)
		q->qh++;
	return s->level[q->dq[q->qh]];
}

/* The sample of interval iv: x members of level touched in the window,
 * xw of them written. */
static void win_add(const wss_profile_t *prof, win_result_t *res, const wss_trace_interval_t *iv, unsigned level,
		    uint64_t x, uint64_t xw)
{
	win_sample_t *o = &res->v[res->n++];
	o->seq = iv->seq;
	o->t_ns = iv->t_ns;
	o->level = level;
	o->x = x;
	o->xw = xw;
	win_estimate(prof, o);
	res->sum = wss_load_sat_addu(res->sum, o->data.est);
	if (o->data.est > res->peak)
		res->peak = o->data.est;
}

static int win_end(win_result_t *res, win_levels_t *q, int r)
{
	free(q->dq);
	if (r) {
		free(res->v);
		res->v = NULL;
	}
	return r;
}

/* The series for window n, page by page (the tests' reference build). */
static int win_compute_pages(wss_pair_t *p, const wss_scan_t *s, uint64_t n, win_result_t *res)
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
	win_levels_t q;
	int r = winset_init(&d, pages, ring) | winset_init(&w, pages, ring) | win_start(s, res, &q);
	if (r || !top || !seen) {
		r = nomem_cmd("window");
		goto out;
	}
	for (size_t i = 0; s->level_max && i < pages; i++) {
		unsigned t = 0;
		while (t < WSS_SAMPLE_LEVEL_MAX && wss_sample_member(lm.pages[i], t + 1, p->prof.sampling_seed))
			t++;
		top[i] = (uint8_t)t;
	}
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
		unsigned level = win_level(s, &q, i, k, n);
		win_add(&p->prof, res, &iv, level, winset_members(&d, level), winset_members(&w, level));
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
	return win_end(res, &q, r);
}

/* The members of each level 0 .. lmax among pages [first, first + len)
 * into m[].  Short ranges go page by page (a page's top level costs a few
 * hash steps: most pages leave the descent at once), long ones by
 * wss_sample_count, which costs the same whatever the length. */
static void members_of(uint64_t first, uint64_t len, unsigned lmax, uint64_t seed, uint64_t *m)
{
	m[0] = len;
	if (!lmax)
		return;
	if (len <= 16) {
		for (unsigned l = 1; l <= lmax; l++)
			m[l] = 0;
		/* Membership is nested: a member of lmax is one of every level. */
		for (uint64_t pn = first; pn < first + len; pn++) {
			unsigned top = lmax;
			if (!wss_sample_member(pn, lmax, seed))
				for (top = 0; top + 1 < lmax && wss_sample_member(pn, top + 1, seed);)
					top++;
			for (unsigned l = 1; l <= top; l++)
				m[l]++;
		}
		return;
	}
	for (unsigned l = 1; l <= lmax; l++)
		m[l] = wss_sample_count(first, first + len, l, seed);
}

/* One window set over ranges: the pages with a newest touch (or write),
 * as segments of pages with the same newest interval, keyed by first
 * page (val: the interval); a segment whose newest is out of the window
 * counts as no history.  hist[l]: the members of level l in the window
 * (membership is nested, so level l's count is all the window's sample
 * needs); bucket[slot][l]: of them, those whose newest is the slot's
 * interval, owner[slot], subtracted when it leaves the window. */
typedef struct rwin {
	wss_segs_t segs;
	uint64_t n, seed;
	unsigned lmax;
	size_t ring;
	uint64_t *hist, *bucket, *owner, *m;
	wss_seg_t *old, *now; /* rwin_touch_all's lists */
	size_t old_cap, now_cap;
} rwin_t;

static int rwin_init(rwin_t *w, uint64_t n, size_t ring, unsigned lmax, uint64_t seed)
{
	memset(w, 0, sizeof *w);
	w->n = n;
	w->ring = ring;
	w->lmax = lmax;
	w->seed = seed;
	w->hist = calloc(lmax + 1, sizeof *w->hist);
	w->m = calloc(lmax + 1, sizeof *w->m);
	w->bucket = calloc(ring * (lmax + 1), sizeof *w->bucket);
	w->owner = calloc(ring, sizeof *w->owner);
	return w->hist && w->m && w->bucket && w->owner ? 0 : ENOMEM;
}

static void rwin_release(rwin_t *w)
{
	wss_segs_release(&w->segs);
	free(w->old);
	free(w->now);
	free(w->hist);
	free(w->m);
	free(w->bucket);
	free(w->owner);
}

/* Pages [first, first + len) with newest interval l in the window of k
 * (sign 1) or out of it (sign -1): their members counted or not. */
static void rwin_count(rwin_t *w, uint64_t first, uint64_t len, uint64_t l, int sign)
{
	size_t slot = l % w->ring;
	uint64_t *b = &w->bucket[slot * (w->lmax + 1)];
	if (w->owner[slot] != l) {
		memset(b, 0, (w->lmax + 1) * sizeof *b);
		w->owner[slot] = l;
	}
	members_of(first, len, w->lmax, w->seed, w->m);
	for (unsigned i = 0; i <= w->lmax; i++) {
		w->hist[i] += sign > 0 ? w->m[i] : -w->m[i];
		b[i] += sign > 0 ? w->m[i] : -w->m[i];
	}
}

/* A segment straddling page x is cut in two there. */
static int rwin_cut(rwin_t *w, uint64_t x)
{
	wss_seg_t g;
	if (!x || !wss_segs_floor(&w->segs, x - 1, &g) || g.key + g.len <= x)
		return 0;
	wss_segs_del(&w->segs, g.key);
	int r = wss_segs_put(&w->segs, g.key, x - g.key, g.val);
	return r ? r : wss_segs_put(&w->segs, x, g.key + g.len - x, g.val);
}

/* Pages [a, b) forget their history before the tick of interval k; the
 * parts of it in the window go to carry (when not NULL, for a move). */
static int rwin_erase(rwin_t *w, uint64_t a, uint64_t b, uint64_t k, wss_segs_t *carry)
{
	int r = 0;
	if (a >= b || (r = rwin_cut(w, a)) || (r = rwin_cut(w, b)))
		return r;
	wss_seg_t g;
	while (wss_segs_ceil(&w->segs, a, &g) && g.key < b) {
		wss_segs_del(&w->segs, g.key);
		if (g.val + w->n < k)
			continue;
		rwin_count(w, g.key, g.len, g.val, -1);
		if (carry && (r = wss_segs_put(carry, g.key, g.len, g.val)))
			return r;
	}
	return 0;
}

/* Pages [first, first + len) get newest interval l (in the window of
 * the interval at hand). */
static int rwin_put(rwin_t *w, uint64_t first, uint64_t len, uint64_t l)
{
	rwin_count(w, first, len, l, 1);
	return wss_segs_put(&w->segs, first, len, l);
}

/* Interval k's events: pages gone, pages moved with their history (what
 * was at the target forgotten first, as the engine untracks it).  A move
 * carries the history in the window only: the rest is no history. */
static int rwin_events(rwin_t *w, const wss_trace_interval_t *iv, wss_segs_t *carry)
{
	int r = 0;
	for (size_t e = 0; e < iv->nevents && !r; e++) {
		const wss_trace_event_t *ev = &iv->events[e];
		if (ev->type != WSS_TRACE_EV_MOVED) {
			r = rwin_erase(w, ev->from, ev->from + ev->n, iv->seq, NULL);
			continue;
		}
		if ((r = rwin_erase(w, ev->from, ev->from + ev->n, iv->seq, carry)) ||
		    (r = rwin_erase(w, ev->to, ev->to + ev->n, iv->seq, NULL)))
			break;
		wss_seg_t g;
		while (!r && wss_segs_ceil(carry, 0, &g)) {
			wss_segs_del(carry, g.key);
			r = rwin_put(w, ev->to + (g.key - ev->from), g.len, g.val);
		}
	}
	return r;
}

/* Run u touched in interval k: what its pages had is forgotten, k is
 * their newest. */
static int rwin_touch(rwin_t *w, const wss_trace_run_t *u, uint64_t k)
{
	int r = rwin_erase(w, u->first, u->first + u->n, k, NULL);
	return r ? r : rwin_put(w, u->first, u->n, k);
}

/* The same for every run of iv (the written ones when written) at once:
 * the segments listed, merged with the runs in one pass, and the set
 * made anew, O(segments + runs) where run by run costs O(runs log
 * segments); segments out of the window are dropped on the way (no
 * event or touch can bring them back). */
static int rwin_touch_all(rwin_t *w, const wss_trace_interval_t *iv, bool written)
{
	uint64_t k = iv->seq;
	size_t nold = w->segs.n, o = 0, i = 0;
	if (wss_reserve(&w->old, &w->old_cap, nold, sizeof *w->old) ||
	    wss_reserve(&w->now, &w->now_cap, nold + 2 * iv->nruns, sizeof *w->now))
		return ENOMEM;
	wss_segs_list(&w->segs, w->old);
	for (size_t j = 0; j < iv->nruns; j++) {
		const wss_trace_run_t *u = &iv->runs[j];
		if (written && !u->written)
			continue;
		uint64_t a = u->first, b = a + u->n;
		for (; i < nold && w->old[i].key < b; i++) {
			wss_seg_t g = w->old[i];
			if (g.val + w->n < k)
				continue;
			if (g.key + g.len <= a) {
				w->now[o++] = g;
				continue;
			}
			if (g.key < a) {
				w->now[o++] = (wss_seg_t){g.key, a - g.key, g.val};
				g = (wss_seg_t){a, g.key + g.len - a, g.val};
			}
			uint64_t end = g.key + g.len < b ? g.key + g.len : b;
			rwin_count(w, g.key, end - g.key, g.val, -1);
			if (end < g.key + g.len) {
				w->old[i] = (wss_seg_t){b, g.key + g.len - b, g.val};
				break;
			}
		}
		rwin_count(w, a, b - a, k, 1);
		w->now[o++] = (wss_seg_t){a, b - a, k};
	}
	for (; i < nold; i++)
		if (w->old[i].val + w->n >= k)
			w->now[o++] = w->old[i];
	return wss_segs_assign(&w->segs, w->now, o);
}

/* An interval's runs on set w, run by run or all at once, whichever
 * costs less. */
static int rwin_runs(rwin_t *w, const wss_trace_interval_t *iv, bool written)
{
	if (iv->nruns * 16 >= w->segs.n)
		return rwin_touch_all(w, iv, written);
	int r = 0;
	for (size_t j = 0; j < iv->nruns && !r; j++)
		if (!written || iv->runs[j].written)
			r = rwin_touch(w, &iv->runs[j], iv->seq);
	return r;
}

/* The pages whose newest is k - n leave the window of k. */
static void rwin_expire(rwin_t *w, uint64_t k)
{
	if (k <= w->n)
		return;
	size_t slot = (k - w->n) % w->ring;
	if (w->owner[slot] != k - w->n)
		return;
	uint64_t *b = &w->bucket[slot * (w->lmax + 1)];
	for (unsigned i = 0; i <= w->lmax; i++) {
		w->hist[i] -= b[i];
		b[i] = 0;
	}
}

/* The trace's distinct pages for the window's total: those seen in an
 * exact interval for certain, the others (seen only in sampled ones)
 * through the members of the trace's coarsest level among them, scaled. */
static uint64_t win_total(const wss_ranges_t *exact, const wss_ranges_t *sampled, unsigned lmax, uint64_t seed)
{
	uint64_t t = exact->pages;
	for (size_t i = 0; i < sampled->n; i++) {
		uint64_t a = sampled->v[i].first, end = a + sampled->v[i].n;
		for (size_t j = wss_ranges_lower(exact, a); a < end; j++) {
			uint64_t b = j < exact->n && exact->v[j].first < end ? exact->v[j].first : end;
			if (b > a)
				t += wss_sample_count(a, b, lmax, seed) << lmax;
			if (j >= exact->n)
				break;
			a = exact->v[j].first + exact->v[j].n;
		}
	}
	return t;
}

/* The series for window n over the trace (second pass), over ranges:
 * O(log segments) a run or an event, whatever the pages they claim. */
static int win_compute_ranges(wss_pair_t *p, const wss_scan_t *s, uint64_t n, win_result_t *res)
{
	size_t ring = (size_t)((n < s->intervals ? n : s->intervals) + 1);
	uint64_t seed = p->prof.sampling_seed;
	rwin_t d, w;
	wss_segs_t carry = {0};
	wss_ranges_t exact = {0}, sampled = {0};
	win_levels_t q;
	int r = rwin_init(&d, n, ring, s->level_max, seed) | rwin_init(&w, n, ring, s->level_max, seed) |
		win_start(s, res, &q);
	wss_trace_interval_t iv;
	bool got;
	for (size_t i = 0; !r && !(r = wss_trace_next(&p->trace, &iv, &got)) && got; i++) {
		uint64_t k = iv.seq;
		bool writes = iv.sets & WSS_TRACE_SETS_WRITES;
		if ((r = rwin_events(&d, &iv, &carry)) || (r = rwin_events(&w, &iv, &carry)))
			break;
		if ((r = rwin_runs(&d, &iv, false)) || (writes && (r = rwin_runs(&w, &iv, true))))
			break;
		for (size_t j = 0; j < iv.nruns && !r; j++)
			r = wss_ranges_add(iv.level ? &sampled : &exact, iv.runs[j].first, iv.runs[j].n);
		if (r)
			break;
		rwin_expire(&d, k);
		rwin_expire(&w, k);
		unsigned level = win_level(s, &q, i, k, n);
		win_add(&p->prof, res, &iv, level, d.hist[level], w.hist[level]);
	}
	if (r == ENOMEM || (!r && (wss_ranges_finish(&exact) || wss_ranges_finish(&sampled))))
		r = nomem_cmd("window");
	if (!r) {
		res->total = win_total(&exact, &sampled, s->level_max, seed);
		res->total_estimated = s->level_max > 0;
	}
	rwin_release(&d);
	rwin_release(&w);
	wss_segs_release(&carry);
	wss_ranges_release(&exact);
	wss_ranges_release(&sampled);
	return win_end(res, &q, r);
}

static int win_compute(wss_pair_t *p, const wss_scan_t *s, uint64_t n, win_result_t *res)
{
	return WSS_PER_PAGE ? win_compute_pages(p, s, n, res) : win_compute_ranges(p, s, n, res);
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
			       "wss window --window N|DURATION PROFILE");
	wss_out_t form;
	uint64_t n;
	if (r || (r = output_form("window", csv, json, &form)))
		return r;
	if (!wn)
		return usage_error("window", "--window N is required (the window in intervals, or a duration: 500ms)", NULL);
	/* A count of intervals, or a duration (as wss run's --window is):
	 * then a whole number of the profile's intervals. */
	uint64_t dur = 0;
	bool is_dur = *wn && wn[strlen(wn) - 1] >= 'a' && wn[strlen(wn) - 1] <= 'z';
	if (is_dur && (wss_dur_parse(wn, &dur) || !dur)) {
		fprintf(stderr, "wss: window: --window %s: not a count of intervals or a duration (e.g. 3 or 300ms)\n", wn);
		return 2;
	}
	if (!is_dur && (r = wss_opts_number("window", "--window", wn, 1, UINT32_MAX, &n)))
		return r;
	wss_pair_t p;
	wss_scan_t s;
	if ((r = open_scanned(paths[0], &p, &s)))
		return r;
	if (is_dur) {
		int64_t iv = p.prof.interval_ns;
		if (iv <= 0 || dur % (uint64_t)iv || dur / (uint64_t)iv > UINT32_MAX) {
			const char *u = iv % 1000000 == 0 ? "ms" : iv % 1000 == 0 ? "us" : "ns";
			int64_t v = iv % 1000000 == 0 ? iv / 1000000 : iv % 1000 == 0 ? iv / 1000 : iv;
			fprintf(stderr, "wss: window: --window %s is not a whole number of this profile's intervals (%" PRId64
				"%s)\n", wn, v, u);
			wss_scan_release(&s);
			wss_pair_close(&p);
			return 2;
		}
		n = dur / (uint64_t)iv;
	}
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
 * pages: a spatially sampled string (SHARDS).  A reference is named by a
 * key: its page number, or at a sampled level its aligned block's number
 * (a block has one member), so that the references of a run are
 * consecutive keys. */
typedef struct refs {
	uint32_t *r; /* per reference: its key's index (refs_build) */
	size_t n, cap;
	size_t *ends; /* per interval: n after it */
	size_t nends;
	size_t npages; /* key indices are below this */
	uint64_t distinct;
	uint64_t peak; /* the most references of one interval (unscaled) */
	unsigned level;
	uint64_t rate;
} refs_t;

/* The policies and OPT walk the string one reference at a time, for each
 * policy and size, with 4 bytes a reference (12 for OPT): a string longer
 * than this is refused before it is built (docs/analyses.md, "Limits"),
 * where the LRU curve of wss mrc, computed over ranges, has no limit. */
#define REFS_MAX (1ull << 27)

/* The keys of run [first, first + n) at level: consecutive, [*k0, *k1):
 * its pages at level 0; else the blocks whose member lies in the run,
 * every block between its first and last page, and those two when their
 * member does. */
static void run_keys(uint64_t first, uint64_t n, unsigned level, uint64_t seed, uint64_t *k0, uint64_t *k1)
{
	if (!level) {
		*k0 = first;
		*k1 = first + n;
		return;
	}
	uint64_t end = first + n, fb = first >> level, lb = (end - 1) >> level;
	*k0 = fb + (wss_sample_in_block(fb, level, seed) < first);
	*k1 = lb + (wss_sample_in_block(lb, level, seed) < end);
}

static void refs_release(refs_t *rs)
{
	free(rs->r);
	free(rs->ends);
	memset(rs, 0, sizeof *rs);
}

static void refs_start(const wss_scan_t *s, refs_t *rs)
{
	memset(rs, 0, sizeof *rs);
	rs->level = s->level_max;
	rs->rate = 1ull << s->level_max;
}

/* Reference to key: its index in km (numbered in order of first sight:
 * no policy looks at the numbers) appended to the string. */
static int refs_add(refs_t *rs, wss_pagemap_t *km, uint64_t key)
{
	if (wss_reserve(&rs->r, &rs->cap, rs->n + 1, sizeof *rs->r))
		return ENOMEM;
	uint32_t idx;
	bool added;
	int r = wss_pagemap_add(km, key, &idx, &added);
	if (r)
		return r;
	rs->r[rs->n++] = idx;
	rs->distinct += added;
	return 0;
}

/* The string, one reference at a time, for walker (the policies, OPT)
 * (second pass).  Returns 0, or says why not and returns 1 or 2 (more
 * than REFS_MAX references). */
static int refs_build(wss_pair_t *p, const wss_scan_t *s, refs_t *rs, const char *cmd, const char *walker)
{
	refs_start(s, rs);
	uint64_t seed = p->prof.sampling_seed;
	wss_pagemap_t km = {0};
	rs->ends = malloc((s->intervals ? s->intervals : 1) * sizeof *rs->ends);
	wss_trace_interval_t iv;
	bool got;
	int r = rs->ends ? 0 : ENOMEM, t = 0;
	while (!r && !(t = wss_trace_next(&p->trace, &iv, &got)) && got) {
		for (size_t k = 0; k < iv.nruns && !r; k++) {
			uint64_t first = iv.runs[k].first, n = iv.runs[k].n, k0, k1;
			run_keys(first, n, rs->level, seed, &k0, &k1);
			if (k1 - k0 > REFS_MAX - rs->n) {
				fprintf(stderr,
					"wss: %s: %s: more than %llu references, the most %s walks one by one "
					"(wss mrc --no-opt draws the LRU curve over ranges)\n",
					cmd, p->trace_path, REFS_MAX, walker);
				refs_release(rs);
				wss_pagemap_release(&km);
				return WSS_EXIT_BADINPUT;
			}
			/* The tests' reference build finds the members page by
			 * page, as a check on run_keys. */
			if (WSS_PER_PAGE)
				for (uint64_t pn = first; pn < first + n && !r; pn++) {
					if (!rs->level || wss_sample_member(pn, rs->level, seed))
						r = refs_add(rs, &km, pn >> rs->level);
				}
			else
				for (uint64_t key = k0; key < k1 && !r; key++)
					r = refs_add(rs, &km, key);
		}
		size_t from = rs->nends ? rs->ends[rs->nends - 1] : 0;
		if (rs->n - from > rs->peak)
			rs->peak = rs->n - from;
		rs->ends[rs->nends++] = rs->n;
	}
	rs->npages = km.n;
	wss_pagemap_release(&km);
	if (r || t)
		refs_release(rs);
	return r ? nomem_cmd(cmd) : t;
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

/* The histogram of stack distances: count references at each distance
 * (0: a first reference), as pairs, sorted and summed up by dist_finish:
 * as many as the ranges that produced them, whatever their lengths. */
typedef struct dist_count {
	uint64_t dist, count;
} dist_count_t;

/* What simulate's LRU needs besides the histogram: its hits at each
 * size, in all and per period of the string, from the distances and
 * positions of the references as they come. */
typedef struct dist_sink {
	size_t n;		/* sizes */
	const uint64_t *frames; /* per size: frames of the sampled string */
	uint64_t *hits;		/* per size */
	uint64_t **period_hits; /* per size, per period */
	uint64_t period;	/* references a period */
} dist_sink_t;

typedef struct dists {
	dist_count_t *v;
	size_t n, cap;
	uint64_t cold, reuse; /* after dist_finish */
	dist_sink_t *sink;
} dists_t;

static int by_dist(const void *a, const void *b)
{
	const dist_count_t *x = a, *y = b;
	return (x->dist > y->dist) - (x->dist < y->dist);
}

/* Sorted by distance, the counts of one distance summed. */
static void dist_compact(dists_t *h)
{
	qsort(h->v, h->n, sizeof *h->v, by_dist);
	size_t o = 0;
	for (size_t i = 0; i < h->n; i++)
		if (o && h->v[o - 1].dist == h->v[i].dist)
			h->v[o - 1].count += h->v[i].count;
		else
			h->v[o++] = h->v[i];
	h->n = o;
}

/* count references from position pos on, at distance dist, into the
 * sink's hits: those at each size whose frames hold them (an LRU memory
 * of f frames hits a reference exactly when its distance is at most f),
 * spread over the periods they fall in. */
static void sink_add(dist_sink_t *k, uint64_t dist, uint64_t count, uint64_t pos)
{
	for (size_t i = 0; dist && i < k->n; i++) {
		if (dist > k->frames[i])
			continue;
		k->hits[i] += count;
		for (uint64_t at = pos, end = pos + count; at < end;) {
			uint64_t next = (at / k->period + 1) * k->period, upto = next < end ? next : end;
			k->period_hits[i][at / k->period] += upto - at;
			at = upto;
		}
	}
}

/* A full histogram is compacted before it grows: it then holds a pair per
 * distance seen (at most the distinct keys), not one per reference. */
static int dist_add(dists_t *h, uint64_t dist, uint64_t count, uint64_t pos)
{
	if (h->sink)
		sink_add(h->sink, dist, count, pos);
	if (h->n == h->cap && h->n >= 4096) {
		dist_compact(h);
		if (h->n > h->cap / 2 && wss_reserve(&h->v, &h->cap, 2 * h->cap, sizeof *h->v))
			return ENOMEM;
	}
	if (wss_reserve(&h->v, &h->cap, h->n + 1, sizeof *h->v))
		return ENOMEM;
	h->v[h->n++] = (dist_count_t){dist, count};
	return 0;
}

/* Sorted by distance, the first references set apart (cold), and each
 * re-reference's count made cumulative: v[i].count = re-references at
 * distance <= v[i].dist. */
static void dist_finish(dists_t *h)
{
	dist_compact(h);
	size_t o = 0;
	uint64_t cum = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (!h->v[i].dist) {
			h->cold += h->v[i].count;
			continue;
		}
		cum += h->v[i].count;
		h->v[o++] = (dist_count_t){h->v[i].dist, cum};
	}
	h->n = o;
	h->reuse = cum;
}

/* The re-references an LRU memory of f pages hits: those at distance <= f. */
static uint64_t dist_hits(const dists_t *h, uint64_t f)
{
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->v[mid].dist <= f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? h->v[lo - 1].count : 0;
}

/* The LRU stack over ranges of keys: the keys referenced so far, as
 * segments of consecutive keys whose latest references took consecutive
 * positions of the string, twice: by first key (addr: val the position
 * of its first key's reference) and by that position (pos: val the
 * first key), for the keys referenced after a position, summed.  A
 * reference is the keys' distinct count since their latest reference
 * plus one. */
typedef struct lru_ranges {
	wss_segs_t addr, pos;
	uint64_t now; /* positions used */
	/* lru_interval's work space */
	wss_seg_t *a, *p, *an, *pn;
	size_t a_cap, p_cap, an_cap, pn_cap;
	uint64_t *suffix, *fen;
	size_t suffix_cap, fen_cap;
	size_t *rank, *origin, *count;
	size_t rank_cap, origin_cap, count_cap;
	wss_range_t *keys;
	size_t keys_cap;
} lru_ranges_t;

static void lru_release(lru_ranges_t *l)
{
	wss_segs_release(&l->addr);
	wss_segs_release(&l->pos);
	free(l->a);
	free(l->p);
	free(l->an);
	free(l->pn);
	free(l->suffix);
	free(l->fen);
	free(l->rank);
	free(l->origin);
	free(l->count);
	free(l->keys);
}

static int lru_put(lru_ranges_t *l, uint64_t key, uint64_t len, uint64_t at)
{
	int r = wss_segs_put(&l->addr, key, len, at);
	return r ? r : wss_segs_put(&l->pos, at, len, key);
}

static void lru_del(lru_ranges_t *l, const wss_seg_t *g)
{
	wss_segs_del(&l->addr, g->key);
	wss_segs_del(&l->pos, g->val);
}

/* A segment straddling key x is cut in two there; the right part's
 * positions follow on from the left's. */
static int lru_cut(lru_ranges_t *l, uint64_t x)
{
	wss_seg_t g;
	if (!x || !wss_segs_floor(&l->addr, x - 1, &g) || g.key + g.len <= x)
		return 0;
	lru_del(l, &g);
	int r = lru_put(l, g.key, x - g.key, g.val);
	return r ? r : lru_put(l, x, g.key + g.len - x, g.val + (x - g.key));
}

/* Keys [a, b) referenced in order: each segment of them takes its keys'
 * distances into h.  For key k of segment [u, v) (cut to lie in the run),
 * the keys referenced since k's latest are those of the segments after
 * it in position (the rest of the run's earlier segments have left the
 * tree, each for the top of the stack), the run's keys before k, and
 * [k + 1, v): sum_above + (k - a) + (v - 1 - k), the same for every key
 * of the segment.  Keys in no segment are first references. */
static int lru_run(lru_ranges_t *l, uint64_t a, uint64_t b, dists_t *h)
{
	int r;
	if ((r = lru_cut(l, a)) || (r = lru_cut(l, b)))
		return r;
	uint64_t at = a;
	wss_seg_t g;
	while (wss_segs_ceil(&l->addr, a, &g) && g.key < b) {
		if (g.key > at && (r = dist_add(h, 0, g.key - at, l->now + (at - a))))
			return r;
		if ((r = dist_add(h, wss_segs_sum_above(&l->pos, g.val) + g.key + g.len - a, g.len, l->now + (g.key - a))))
			return r;
		lru_del(l, &g);
		at = g.key + g.len;
	}
	if (at < b && (r = dist_add(h, 0, b - at, l->now + (at - a))))
		return r;
	r = lru_put(l, a, b - a, l->now);
	l->now += b - a;
	return r;
}

/* The re-references consumed from the old segments of pos rank j and
 * above (a Fenwick tree over ranks, 1-based inside). */
static void fen_add(uint64_t *f, size_t n, size_t j, uint64_t v)
{
	for (size_t i = j + 1; i <= n; i += i & -i)
		f[i] += v;
}

static uint64_t fen_prefix(const uint64_t *f, size_t j)
{
	uint64_t s = 0;
	for (size_t i = j; i > 0; i -= i & -i)
		s += f[i];
	return s;
}

/* Pushes segment g, from old segment of rank o, onto the next lists. */
static void lru_keep(lru_ranges_t *l, size_t *n, wss_seg_t g, size_t o)
{
	l->an[*n] = g;
	l->origin[(*n)++] = o;
}

/* An interval's key ranges k[0 .. nk) at once, for an interval with many
 * runs: lru_run's arithmetic on lists of the segments instead of the
 * trees, O(segments + runs log segments).  The old segments are ranked
 * by position; a segment's keys referenced again have distance: the old
 * keys after it in position not referenced yet in this interval
 * (suffix[j + 1] less the Fenwick tree of what was), its own keys after
 * them (end - v), the keys of the interval's runs before this one (moved
 * to the top of the stack), and those of this run before it (v - a): the
 * same sum as lru_run's.  The trees are then made anew from the lists:
 * the old segments' remains in their position order (a segment's pieces
 * keep it), then the interval's runs. */
static int lru_interval(lru_ranges_t *l, const wss_range_t *k, size_t nk, dists_t *h)
{
	size_t na = l->addr.n, nn = 0, cap = na + 2 * nk;
	if (wss_reserve(&l->a, &l->a_cap, na, sizeof *l->a) || wss_reserve(&l->p, &l->p_cap, na, sizeof *l->p) ||
	    wss_reserve(&l->an, &l->an_cap, cap, sizeof *l->an) || wss_reserve(&l->pn, &l->pn_cap, cap, sizeof *l->pn) ||
	    wss_reserve(&l->suffix, &l->suffix_cap, na + 1, sizeof *l->suffix) ||
	    wss_reserve(&l->fen, &l->fen_cap, na + 1, sizeof *l->fen) ||
	    wss_reserve(&l->rank, &l->rank_cap, na, sizeof *l->rank) ||
	    wss_reserve(&l->origin, &l->origin_cap, cap, sizeof *l->origin) ||
	    wss_reserve(&l->count, &l->count_cap, na + nk + 1, sizeof *l->count))
		return ENOMEM;
	wss_segs_list(&l->addr, l->a);
	wss_segs_list(&l->pos, l->p);
	l->suffix[na] = 0;
	for (size_t j = na; j-- > 0;)
		l->suffix[j] = l->suffix[j + 1] + l->p[j].len;
	memset(l->fen, 0, (na + 1) * sizeof *l->fen);
	for (size_t i = 0; i < na; i++) {
		size_t lo = 0, hi = na;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (l->p[mid].key <= l->a[i].val)
				lo = mid;
			else
				hi = mid;
		}
		l->rank[i] = lo;
	}
	uint64_t before = 0, consumed = 0;
	size_t i = 0;
	int r = 0;
	for (size_t j = 0; j < nk && !r; j++) {
		uint64_t a = k[j].first, b = a + k[j].n, at = a;
		for (; i < na && l->a[i].key < b && !r; i++) {
			wss_seg_t g = l->a[i];
			uint64_t end = g.key + g.len;
			if (end <= a) {
				lru_keep(l, &nn, g, l->rank[i]);
				continue;
			}
			if (g.key < a) {
				lru_keep(l, &nn, (wss_seg_t){g.key, a - g.key, g.val}, l->rank[i]);
				g = (wss_seg_t){a, end - a, g.val + (a - g.key)};
			}
			if (g.key > at && (r = dist_add(h, 0, g.key - at, l->now + (at - a))))
				break;
			uint64_t v = end < b ? end : b, rk = l->rank[i];
			uint64_t later = l->suffix[rk + 1] - (consumed - fen_prefix(l->fen, rk + 1));
			r = dist_add(h, later + end + before - a, v - g.key, l->now + (g.key - a));
			fen_add(l->fen, na, rk, v - g.key);
			consumed += v - g.key;
			at = v;
			if (v < end) {
				l->a[i] = (wss_seg_t){v, end - v, g.val + (v - g.key)};
				break;
			}
		}
		if (!r && at < b)
			r = dist_add(h, 0, b - at, l->now + (at - a));
		lru_keep(l, &nn, (wss_seg_t){a, b - a, l->now}, na + j);
		l->now += b - a;
		before += b - a;
	}
	for (; i < na; i++)
		lru_keep(l, &nn, l->a[i], l->rank[i]);
	if (r)
		return r;
	/* The position order: by origin (old ranks, then the runs), and by
	 * address within one, a counting sort. */
	memset(l->count, 0, (na + nk + 1) * sizeof *l->count);
	for (size_t x = 0; x < nn; x++)
		l->count[l->origin[x] + 1]++;
	for (size_t x = 1; x <= na + nk; x++)
		l->count[x] += l->count[x - 1];
	for (size_t x = 0; x < nn; x++)
		l->pn[l->count[l->origin[x]]++] = (wss_seg_t){l->an[x].val, l->an[x].len, l->an[x].key};
	if ((r = wss_segs_assign(&l->addr, l->an, nn)))
		return r;
	return wss_segs_assign(&l->pos, l->pn, nn);
}

/* mrc's histogram over ranges (second pass), with the string's length and
 * distinct keys in rs: an interval's runs one by one, or all at once when
 * they are many next to the segments. */
static int mrc_ranges(wss_pair_t *p, const wss_scan_t *s, refs_t *rs, dists_t *h)
{
	lru_ranges_t l = {0};
	wss_trace_interval_t iv;
	bool got;
	int r = 0, t;
	refs_start(s, rs);
	while (!r && !(t = wss_trace_next(&p->trace, &iv, &got)) && got) {
		size_t nk = 0, from = rs->n;
		if ((r = wss_reserve(&l.keys, &l.keys_cap, iv.nruns, sizeof *l.keys)))
			break;
		for (size_t k = 0; k < iv.nruns; k++) {
			uint64_t k0, k1;
			run_keys(iv.runs[k].first, iv.runs[k].n, rs->level, p->prof.sampling_seed, &k0, &k1);
			if (k1 > k0)
				l.keys[nk++] = (wss_range_t){k0, k1 - k0};
			rs->n += k1 - k0;
		}
		if (rs->n - from > rs->peak)
			rs->peak = rs->n - from;
		if (nk * 16 >= l.addr.n)
			r = lru_interval(&l, l.keys, nk, h);
		else
			for (size_t k = 0; k < nk && !r; k++)
				r = lru_run(&l, l.keys[k].first, l.keys[k].first + l.keys[k].n, h);
	}
	lru_release(&l);
	return r ? nomem_cmd("mrc") : t;
}

/* The same histogram from the string, reference by reference (the tests'
 * reference build). */
static int mrc_pages(wss_pair_t *p, const wss_scan_t *s, refs_t *rs, dists_t *h)
{
	int r = refs_build(p, s, rs, "mrc", "the stack-distance pass");
	if (r || (r = wss_trace_rewind(&p->trace)))
		return r;
	wss_stackdist_t sd;
	if (wss_stackdist_init(&sd, rs->npages))
		return nomem_cmd("mrc");
	for (size_t i = 0; i < rs->n && !r; i++) {
		uint64_t d;
		wss_stackdist_ref(&sd, rs->r[i], &d);
		r = dist_add(h, d, 1, i);
	}
	wss_stackdist_release(&sd);
	return r ? nomem_cmd("mrc") : 0;
}

/* The smallest LRU memory, in pages, that hits pct % of the
 * re-references (0: there are none). */
static uint64_t reuse_size(const dists_t *h, unsigned pct, uint64_t rate)
{
	if (!h->reuse)
		return 0;
	size_t i = 0;
	while (h->v[i].count * 100 < (uint64_t)pct * h->reuse)
		i++;
	return h->v[i].dist * rate;
}

int wss_mrc_hit_size(const char *path, unsigned pct, uint64_t *pages)
{
	wss_pair_t p;
	wss_scan_t s;
	refs_t rs = {0};
	dists_t h = {0};
	int r = open_scanned(path, &p, &s);
	if (r)
		return r;
	if (!(r = WSS_PER_PAGE ? mrc_pages(&p, &s, &rs, &h) : mrc_ranges(&p, &s, &rs, &h))) {
		dist_finish(&h);
		*pages = reuse_size(&h, pct, rs.rate);
	}
	free(h.v);
	refs_release(&rs);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
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
	refs_t rs = {0}, os = {0};
	dists_t h = {0};
	uint64_t *next = NULL;
	mrc_point_t *pt = NULL;
	if ((r = open_scanned(paths[0], &p, &s))) {
		free(sizes);
		return r;
	}
	/* LRU: the histogram of stack distances, cumulated. */
	if ((r = WSS_PER_PAGE ? mrc_pages(&p, &s, &rs, &h) : mrc_ranges(&p, &s, &rs, &h)))
		goto out;
	dist_finish(&h);
	uint64_t cold = h.cold, refs = (uint64_t)rs.n * rs.rate;
	rs.distinct = cold;
	uint64_t q[3];
	for (int k = 0; k < 3; k++)
		q[k] = reuse_size(&h, quantiles[k], rs.rate);
	if (!sizes && default_sizes(rs.distinct * rs.rate, &sizes, &nsizes)) {
		r = nomem_cmd("mrc");
		goto out;
	}
	/* OPT: reference by reference, on the string built again. */
	if (!no_opt && ((r = wss_trace_rewind(&p.trace)) ||
			(r = refs_build(&p, &s, &os, "mrc", "OPT"))))
		goto out;
	pt = calloc(nsizes, sizeof *pt);
	if (!pt || (!no_opt && !(next = malloc((os.n ? os.n : 1) * sizeof *next))) ||
	    (next && wss_policy_next_uses(os.r, os.n, os.npages, next))) {
		r = nomem_cmd("mrc");
		goto out;
	}
	for (size_t i = 0; i < nsizes; i++) {
		pt[i].size = sizes[i];
		pt[i].lru_hits = dist_hits(&h, scaled_frames(&rs, sizes[i])) * rs.rate;
		if (next && opt_hits(&os, next, sizes[i], &pt[i].opt_hits)) {
			r = nomem_cmd("mrc");
			goto out;
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
out:
	free(h.v);
	free(next);
	free(pt);
	refs_release(&rs);
	refs_release(&os);
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

/* The string's length and distinct keys, from a pass of mrc's stack
 * over ranges (so without walking it). */
static int sim_count(wss_pair_t *p, const wss_scan_t *s, refs_t *rs)
{
	dists_t h = {0};
	int r = mrc_ranges(p, s, rs, &h);
	dist_finish(&h);
	free(h.v);
	rs->distinct = h.cold;
	return r ? r : wss_trace_rewind(&p->trace);
}

/* Every result of res (all LRU) in one more pass of the stack over
 * ranges: a reference hits at f frames when its distance is at most f. */
static int sim_lru(wss_pair_t *p, const wss_scan_t *s, const refs_t *rs, sim_result_t *res, size_t nres,
		   size_t period, size_t nperiods)
{
	uint64_t *fr = calloc(nres ? nres : 1, sizeof *fr), *hits = calloc(nres ? nres : 1, sizeof *hits);
	uint64_t **ph = calloc(nres ? nres : 1, sizeof *ph);
	int r = fr && hits && ph ? 0 : ENOMEM;
	for (size_t i = 0; i < nres && !r; i++) {
		fr[i] = scaled_frames(rs, res[i].frames);
		res[i].period_hits = ph[i] = calloc(nperiods ? nperiods : 1, sizeof **ph);
		res[i].period_refs = calloc(nperiods ? nperiods : 1, sizeof *res[i].period_refs);
		if (!ph[i] || !res[i].period_refs)
			r = ENOMEM;
	}
	dist_sink_t sink = {nres, fr, hits, ph, period};
	dists_t h = {.sink = &sink};
	refs_t count;
	if (r || (r = mrc_ranges(p, s, &count, &h)))
		goto out;
	for (size_t i = 0; i < nres; i++) {
		sim_result_t *o = &res[i];
		o->hits = hits[i] * rs->rate;
		o->faults = (uint64_t)rs->n * rs->rate - o->hits;
		for (size_t k = 0; k < nperiods; k++) {
			uint64_t end = (k + 1) * period < rs->n ? (k + 1) * period : rs->n;
			o->period_hits[k] *= rs->rate;
			o->period_refs[k] = (end - k * period) * rs->rate;
		}
	}
out:
	free(h.v);
	free(fr);
	free(hits);
	free(ph);
	return r == ENOMEM ? nomem_cmd("simulate") : r;
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

/* The brief text (no --all): for each size, each policy's miss ratio.
 * The default sizes are about the working set of an interval (the
 * references of one: the working set with a one-interval window), each
 * named: half its average, its average, its peak, twice its peak, and all
 * the pages touched (where only first references miss). */
static const char *const sim_size_names[] = {"avg / 2", "avg", "peak", "peak x 2", "all pages"};

typedef struct sim_brief {
	uint64_t avg, peak; /* pages, scaled */
	unsigned *names;    /* per size: bit k for sim_size_names[k]; NULL: the sizes were given */
	size_t nall;        /* the sizes --all would give (default_sizes) */
} sim_brief_t;

/* The named sizes into *sizes, ascending, a size several are once with
 * all their names.  Returns 0 or ENOMEM. */
static int sim_brief_sizes(const refs_t *rs, uint64_t intervals, sim_brief_t *b, uint64_t **sizes, size_t *n)
{
	uint64_t refs = (uint64_t)rs->n * rs->rate, all = rs->distinct ? rs->distinct * rs->rate : 1;
	b->avg = intervals ? (refs + intervals / 2) / intervals : 0;
	b->peak = rs->peak * rs->rate;
	for (uint64_t c = 1; c < all; c *= 2)
		b->nall++;
	b->nall++;
	/* Ascending as listed: the average (rounded) is at most the peak, the
	 * peak at most all the pages; twice the peak, when above them, goes. */
	uint64_t want[5] = {(b->avg + 1) / 2, b->avg, b->peak, b->peak * 2, all};
	*n = 0;
	*sizes = malloc(5 * sizeof **sizes);
	b->names = calloc(5, sizeof *b->names);
	if (!*sizes || !b->names)
		return ENOMEM;
	for (int k = 0; k < 5; k++) {
		if (!want[k] || want[k] > all)
			continue;
		if (!*n || (*sizes)[*n - 1] != want[k])
			(*sizes)[(*n)++] = want[k];
		b->names[*n - 1] |= 1u << k;
	}
	return 0;
}

static void sim_brief_text(FILE *out, const wss_pair_t *p, const refs_t *rs, const sim_result_t *res, size_t nkinds,
			   size_t nframes, const sim_brief_t *b)
{
	text_source(out, "simulate", p);
	char g[32], g2[32];
	double ps = (double)p->prof.page_size;
	fprintf(out, "references %s (one per page and interval), %s pages distinct\n",
		wss_text_grouped(g, sizeof g, (uint64_t)rs->n * rs->rate),
		wss_text_grouped(g2, sizeof g2, rs->distinct * rs->rate));
	if (b->names)
		fprintf(out, "working set of an interval: avg %s, peak %s pages (%.3f / %.3f MiB)\n",
			wss_text_grouped(g, sizeof g, b->avg), wss_text_grouped(g2, sizeof g2, b->peak),
			(double)b->avg * ps / MIB, (double)b->peak * ps / MIB);
	if (rs->level)
		fprintf(out, "sampled    1 page in %" PRIu64 ": frames / %" PRIu64 " on the sampled string, counts x %" PRIu64
			     "\n",
			rs->rate, rs->rate, rs->rate);
	fputs("miss ratio (faults / references), %, by memory size:\n", out);
	fprintf(out, "%9s %10s", "frames", "MiB");
	for (size_t k = 0; k < nkinds; k++)
		fprintf(out, " %6s", wss_policy_name(res[k * nframes].kind));
	fputc('\n', out);
	for (size_t f = 0; f < nframes; f++) {
		fprintf(out, "%9" PRIu64 " %10.3f", res[f].frames, (double)res[f].frames * ps / MIB);
		for (size_t k = 0; k < nkinds; k++) {
			const sim_result_t *o = &res[k * nframes + f];
			fprintf(out, " %6.2f", 100.0 * ratio(o->faults, o->hits + o->faults));
		}
		for (int k = 0, first = 1; b->names && k < 5; k++)
			if (b->names[f] & (1u << k)) {
				fprintf(out, "%s%s", first ? "  " : ", ", sim_size_names[k]);
				first = 0;
			}
		fputc('\n', out);
	}
	if (b->names)
		fprintf(out, "faults, hits and the hit ratio over time, at %zu sizes: wss simulate --all\n", b->nall);
	else
		fputs("faults, hits and the hit ratio over time: wss simulate --all\n", out);
}

typedef struct sim_req {
	wss_policy_kind_t kinds[WSS_POLICY_N];
	size_t nkinds;
	uint64_t *frames; /* NULL: the default */
	size_t nframes;
	uint64_t period; /* 0: the default */
	wss_out_t form;
	bool brief; /* the text without --all */
	const char *path;
} sim_req_t;

/* simulate's options into q.  Returns 0, WSS_CMD_HELP or 2 (said). */
static int sim_parse(int argc, char **argv, sim_req_t *q)
{
	const char *pol = NULL, *fr = NULL, *per = NULL, *paths[1];
	bool csv = false, json = false, all = false;
	const wss_opt_t opts[] = {{"--policy", &pol, NULL}, {"--frames", &fr, NULL}, {"--period", &per, NULL},
				  {"--all", NULL, &all},    {"--csv", NULL, &csv},   {"--json", NULL, &json}};
	size_t np;
	memset(q, 0, sizeof *q);
	int r = wss_opts_parse("simulate", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss simulate [--policy P,...] [--frames N,...] [--period N] [--all] PROFILE");
	if (r || (r = output_form("simulate", csv, json, &q->form)))
		return r;
	q->brief = q->form == WSS_OUT_TEXT && !all;
	if (!pol)
		for (int k = 0; k < WSS_POLICY_N; k++)
			q->kinds[q->nkinds++] = (wss_policy_kind_t)k;
	for (const char *c = pol; c && *c;) {
		size_t len = strcspn(c, ",");
		char name[16];
		snprintf(name, sizeof name, "%.*s", (int)(len < 15 ? len : 15), c);
		wss_policy_kind_t k;
		if (len >= sizeof name || !wss_policy_parse(name, &k))
			return usage_error("simulate", "--policy: fifo, lru, clock, nfu, aging or opt, not ", name);
		if (q->nkinds == WSS_POLICY_N)
			return usage_error("simulate", "--policy: each policy once", NULL);
		q->kinds[q->nkinds++] = k;
		c += len + (c[len] == ',');
	}
	if (pol && !q->nkinds)
		return usage_error("simulate", "an empty list for --policy", NULL);
	if (per && (r = wss_opts_number("simulate", "--period", per, 1, UINT64_MAX >> 1, &q->period)))
		return r;
	if (fr && (r = number_list("simulate", "--frames", fr, 0, UINT32_MAX, &q->frames, &q->nframes)))
		return r;
	q->path = paths[0];
	return 0;
}

/* Every policy of q at every size of q over rs, into res (kinds major).
 * Returns 0 or 1 (said). */
static int sim_all(wss_pair_t *p, const wss_scan_t *s, const refs_t *rs, const sim_req_t *q, bool walk,
		   sim_result_t *res, size_t sp, size_t nperiods)
{
	uint64_t *next = NULL;
	int r = 0;
	for (size_t k = 0; k < q->nkinds; k++)
		for (size_t f = 0; f < q->nframes; f++) {
			res[k * q->nframes + f].kind = q->kinds[k];
			res[k * q->nframes + f].frames = q->frames[f];
		}
	if (!walk)
		return sim_lru(p, s, rs, res, q->nkinds * q->nframes, sp, nperiods);
	for (size_t k = 0; k < q->nkinds && !r; k++) {
		if (q->kinds[k] == WSS_POLICY_OPT && !next &&
		    (!(next = malloc((rs->n ? rs->n : 1) * sizeof *next)) ||
		     wss_policy_next_uses(rs->r, rs->n, rs->npages, next)))
			r = nomem_cmd("simulate");
		for (size_t f = 0; f < q->nframes && !r; f++)
			if (sim_run(rs, q->kinds[k] == WSS_POLICY_OPT ? next : NULL, sp, nperiods,
				    &res[k * q->nframes + f]))
				r = nomem_cmd("simulate");
	}
	free(next);
	return r;
}

int wss_cmd_simulate_to(int argc, char **argv, FILE *out)
{
	sim_req_t q;
	int r = sim_parse(argc, argv, &q);
	if (r)
		return r;
	wss_pair_t p;
	wss_scan_t s;
	refs_t rs;
	sim_result_t *res = NULL;
	sim_brief_t brief = {0};
	size_t nres = 0;
	if ((r = open_scanned(q.path, &p, &s))) {
		free(q.frames);
		return r;
	}
	/* LRU comes from mrc's stack over ranges, whatever the string's
	 * length (page by page in the tests' reference build); the other
	 * policies walk the string. */
	bool walk = WSS_PER_PAGE;
	for (size_t k = 0; k < q.nkinds; k++)
		walk |= q.kinds[k] != WSS_POLICY_LRU;
	if (walk)
		r = refs_build(&p, &s, &rs, "simulate", "a policy");
	else
		r = sim_count(&p, &s, &rs);
	if (r)
		goto out_scan;
	if (!q.frames && (q.brief ? sim_brief_sizes(&rs, s.intervals, &brief, &q.frames, &q.nframes)
				  : default_sizes(rs.distinct * rs.rate, &q.frames, &q.nframes))) {
		r = nomem_cmd("simulate");
		goto out_refs;
	}
	/* Ten periods by default; in sampled references, at least one. */
	uint64_t total = (uint64_t)rs.n * rs.rate, period = q.period;
	if (!period)
		period = total > 10 ? (total + 9) / 10 : 1;
	size_t sp = (size_t)(period >> rs.level) ? (size_t)(period >> rs.level) : 1;
	size_t nperiods = rs.n ? (rs.n + sp - 1) / sp : 0;
	nres = q.nkinds * q.nframes;
	if (!(res = calloc(nres ? nres : 1, sizeof *res))) {
		r = nomem_cmd("simulate");
		goto out_refs;
	}
	if ((r = sim_all(&p, &s, &rs, &q, walk, res, sp, nperiods)))
		goto out_res;
	wss_pair_note_end(&p);
	if (q.form == WSS_OUT_JSON)
		sim_json(out, &p, &rs, res, nres, (uint64_t)sp * rs.rate, nperiods);
	else if (q.form == WSS_OUT_CSV)
		sim_csv(out, res, nres, nperiods);
	else if (q.brief)
		sim_brief_text(out, &p, &rs, res, q.nkinds, q.nframes, &brief);
	else
		sim_text(out, &p, &rs, res, nres, (uint64_t)sp * rs.rate, nperiods);
	r = finish(out, "simulate");
out_res:
	for (size_t i = 0; i < nres; i++) {
		free(res[i].period_hits);
		free(res[i].period_refs);
	}
	free(res);
out_refs:
	refs_release(&rs);
out_scan:
	free(brief.names);
	free(q.frames);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

int wss_cmd_simulate(int argc, char **argv) { return wss_cmd_simulate_to(argc, argv, stdout); }
