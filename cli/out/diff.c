/* `wss diff A B` (diff.h): two profiles side by side, for a person reading
 * what changed and for a CI job guarding a program's working set.
 *
 * The figures are the summaries' (wss report's): avg, peak and total of
 * the data, read and write series, the data peak and total by kind, and
 * the allocation sites, matched from one run to the other by the functions
 * of their stacks (addresses move with ASLR and rebuilds; lines move with
 * edits), largest change first.  A sampled run's figures are estimates:
 * each is printed with its 95 % interval, and a change whose two intervals
 * overlap is marked "~" (within what the samples can tell apart).
 *
 * --fail-above PCT: the exit status is WSS_DIFF_ABOVE when B's data avg,
 * peak or total is more than PCT per cent above A's (point estimates; one
 * line on stderr names each figure), for a CI job to fail on. */
#include "config.h"
#include "cli/out/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/analyses.h"
#include "cli/out/jw.h"
#include "cli/model/symbols.h"
#include "cli/out/text.h"

#define EXIT_USAGE 2
/* Frames of an allocation site's stack that name it across runs. */
#define KEY_FRAMES 6
/* Sites listed in the text (all of them in --json). */
#define SITES_SHOWN 10

/* One figure of both runs: a's and b's value (in tenths of a page for an
 * average), and their intervals (present: an estimate). */
typedef struct fig {
	const char *name; /* "data.avg" */
	bool tenths, have;
	double a, b;
	wss_ci_t aci, bci;
	bool aest, best; /* from a sampled run: an estimate, with its interval or not */
} fig_t;

/* The allocation sites of one run with one key (their functions,
 * innermost first, joined by " < "; sites whose stacks differ deeper are
 * one here), their figures summed, and whether any is an estimate. */
typedef struct dsite {
	char *key;
	wss_alloc_site_t sum;
	bool est, matched;
} dsite_t;

typedef struct run {
	wss_profile_t p;
	bool loaded;
	dsite_t *sites;
	size_t nsites;
} run_t;

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "wss: diff: %s%s\n", what, arg ? arg : "");
	fputs("wss: try 'wss --help'\n", stderr);
	return EXIT_USAGE;
}

/* "10", "10%", "2.5 %": a percentage from 0 to 10,000. */
static int parse_pct(const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	while (*end == ' ')
		end++;
	if (*end == '%')
		end++;
	if (end == v || *end || errno || !(x >= 0) || x > 10000)
		return usage_error("--fail-above: not a percentage from 0 to 10000: ", v);
	*out = x;
	return 0;
}

/* A frame's name for the key: its function, else its module's file name
 * and offset, else its address. */
static void key_frame(char *buf, size_t n, const wss_frame_t *f)
{
	if (f->function)
		snprintf(buf, n, "%s", f->function);
	else if (f->module) {
		const char *slash = strrchr(f->module->path, '/');
		snprintf(buf, n, "%s+0x%" PRIx64, slash ? slash + 1 : f->module->path, f->offset);
	} else
		snprintf(buf, n, "0x%" PRIx64, f->addr);
}

static int by_key(const void *a, const void *b) { return strcmp(((const dsite_t *)a)->key, ((const dsite_t *)b)->key); }

/* The allocation sites of r by their keys.  Returns 0 or ENOMEM. */
static int site_keys(run_t *r)
{
	wss_profile_t *p = &r->p;
	if (!p->nalloc_sites)
		return 0;
	r->sites = calloc(p->nalloc_sites, sizeof *r->sites);
	wss_symbols_t *syms = wss_sym_open(p);
	if (!r->sites || !syms) {
		wss_sym_close(syms);
		return ENOMEM;
	}
	wss_frame_t *fr = NULL;
	size_t cap = 0;
	int err = 0;
	for (size_t i = 0; i < p->nalloc_sites && !err; i++) {
		const wss_alloc_site_t *s = &p->alloc_sites[i];
		const wss_stack_t *st = s->stack > 0 ? wss_load_stack(p, s->stack) : NULL;
		size_t n = 0;
		for (size_t k = 0; st && k < st->n && n < KEY_FRAMES && !err; k++)
			err = wss_sym_frames(syms, st->frames[k], true, &fr, &n, &cap);
		wss_fmt_t f;
		if (err || wss_fmt_init_growable(&f, 256)) {
			err = ENOMEM;
			break;
		}
		if (!n)
			wss_fmt_str(&f, "(no stack)");
		for (size_t k = 0; k < n && k < KEY_FRAMES; k++) {
			char name[512];
			key_frame(name, sizeof name, &fr[k]);
			if (k)
				wss_fmt_str(&f, " < ");
			wss_fmt_str(&f, name);
		}
		bool est = (s->live_ci.present && s->live_ci.hi - s->live_ci.lo > 1) ||
			   (s->ws_ci.present && s->ws_ci.hi - s->ws_ci.lo > 1);
		r->sites[r->nsites++] = (dsite_t){strdup(wss_fmt_cstr(&f)), *s, est, false};
		wss_fmt_release(&f);
		if (!r->sites[r->nsites - 1].key)
			err = ENOMEM;
	}
	free(fr);
	wss_sym_close(syms);
	if (err)
		return err;
	/* One entry a key: sorted by it, equal keys summed into the first. */
	qsort(r->sites, r->nsites, sizeof *r->sites, by_key);
	size_t n = 0;
	for (size_t i = 0; i < r->nsites; i++) {
		dsite_t *d = &r->sites[i];
		if (n && !strcmp(r->sites[n - 1].key, d->key)) {
			wss_alloc_site_t *t = &r->sites[n - 1].sum;
			t->live_pages += d->sum.live_pages;
			t->peak_live_pages += d->sum.peak_live_pages;
			t->ws_pages += d->sum.ws_pages;
			t->idle_pages += d->sum.idle_pages;
			t->allocs += d->sum.allocs;
			r->sites[n - 1].est |= d->est;
			free(d->key);
		} else
			r->sites[n++] = *d;
	}
	r->nsites = n;
	return 0;
}

static void run_release(run_t *r)
{
	for (size_t i = 0; i < r->nsites; i++)
		free(r->sites[i].key);
	free(r->sites);
	if (r->loaded)
		wss_load_release(&r->p);
}

/* ---- the figures ---- */

static void stat_figs(fig_t *v, size_t *n, const char *series, const wss_stat_t *a, const wss_stat_t *b)
{
	static char names[3][3][16];
	static const char *what[3] = {"avg", "peak", "total"};
	int si = series[0] == 'd' ? 0 : series[0] == 'r' ? 1 : 2;
	for (int k = 0; k < 3; k++) {
		snprintf(names[si][k], sizeof names[si][k], "%s.%s", series, what[k]);
		fig_t f = {.name = names[si][k], .tenths = k == 0, .have = a->present && b->present};
		if (k == 0)
			f = (fig_t){f.name, true, f.have, (double)a->avg_tenths, (double)b->avg_tenths, a->avg_ci, b->avg_ci, false, false};
		else if (k == 1)
			f = (fig_t){f.name, false, f.have, (double)a->peak, (double)b->peak, a->peak_ci, b->peak_ci, false, false};
		else
			f = (fig_t){f.name, false, f.have && a->total >= 0 && b->total >= 0, (double)a->total,
				    (double)b->total, a->total_ci, b->total_ci, false, false};
		v[(*n)++] = f;
	}
}

/* The value in pages. */
static double pages(const fig_t *f, bool b) { return (f->tenths ? 0.1 : 1) * (b ? f->b : f->a); }

static double change_pct(const fig_t *f)
{
	double a = pages(f, false), b = pages(f, true);
	return a > 0 ? 100 * (b - a) / a : b > 0 ? INFINITY : 0;
}

/* Both intervals (or values) overlap: the change is within what the
 * samples can tell apart. */
static bool overlap(const fig_t *f)
{
	if (!f->aci.present && !f->bci.present)
		return false;
	double s = f->tenths ? 10 : 1;
	double alo = f->aci.present ? f->aci.lo * s : f->a, ahi = f->aci.present ? f->aci.hi * s : f->a;
	double blo = f->bci.present ? f->bci.lo * s : f->b, bhi = f->bci.present ? f->bci.hi * s : f->b;
	return alo <= bhi && blo <= ahi;
}

/* "3,077.8", "≈ 3,077.8 ±2.1 %", or "≈ 3,077.8" for an estimate whose
 * interval is not known (a run cut short), into buf. */
static const char *value_text(char *buf, size_t n, double v, const wss_ci_t *ci, bool tenths, bool est)
{
	char g[32];
	uint64_t whole = (uint64_t)(tenths ? v / 10 : v);
	wss_text_grouped(g, sizeof g, whole);
	char num[48];
	if (tenths)
		snprintf(num, sizeof num, "%s.%d", g, (int)fmod(v, 10));
	else
		snprintf(num, sizeof num, "%s", g);
	double pv = tenths ? v / 10 : v;
	if (ci->present && pv > 0) {
		double pm = 100 * fmax(pv - ci->lo, ci->hi - pv) / pv;
		snprintf(buf, n, "≈ %s ±%.1f %%", num, pm);
	} else
		snprintf(buf, n, "%s%s", est ? "≈ " : "", num);
	return buf;
}

/* "+3,510.9" (tenths: one decimal) or "-224". */
static const char *signed_text(char *buf, size_t n, double d, bool tenths)
{
	char g[32];
	double a = fabs(d);
	uint64_t t = (uint64_t)llround(tenths ? a * 10 : a);
	wss_text_grouped(g, sizeof g, tenths ? t / 10 : t);
	if (tenths)
		snprintf(buf, n, "%c%s.%d", d < 0 ? '-' : '+', g, (int)(t % 10));
	else
		snprintf(buf, n, "%c%s", d < 0 ? '-' : '+', g);
	return buf;
}

static void print_fig(FILE *out, const fig_t *f)
{
	char a[64], b[64], c[64];
	if (!f->have)
		return;
	double d = pages(f, true) - pages(f, false), pct = change_pct(f);
	char g[40];
	signed_text(g, sizeof g, d, f->tenths);
	if (d == 0)
		snprintf(c, sizeof c, "0");
	else if (isinf(pct))
		snprintf(c, sizeof c, "%s (new)", g);
	else
		snprintf(c, sizeof c, "%s (%+.1f %%)%s", g, pct, overlap(f) ? " ~" : "");
	fprintf(out, "%-16s %22s  %22s  %s\n", f->name, value_text(a, sizeof a, f->a, &f->aci, f->tenths, f->aest),
		value_text(b, sizeof b, f->b, &f->bci, f->tenths, f->best), c);
}

static void describe(FILE *out, const char *tag, const wss_profile_t *p)
{
	fprintf(out, "  %s: %s", tag, p->path);
	if (p->exe)
		fprintf(out, ": %s", p->exe);
	if (p->pid >= 0)
		fprintf(out, " (pid %" PRId64 ")", p->pid);
	if (wss_load_sampled(p))
		fprintf(out, ", sampled up to 1 in %" PRId64, p->summary_rate_max > 0 ? p->summary_rate_max : p->rate_max);
	else
		fputs(", exact", out);
	fprintf(out, ", %zu samples%s\n", p->nsamples,
		p->has_summary ? "" : "; no summary (killed, or still running): its figures are its samples', its totals unknown");
}

/* Marks the figures v[from, n) of each run's sampled one as estimates. */
static void mark_estimates(fig_t *v, size_t from, size_t n, const wss_profile_t *a, const wss_profile_t *b)
{
	for (size_t i = from; i < n; i++) {
		v[i].aest = wss_load_sampled(a);
		v[i].best = wss_load_sampled(b);
	}
}

/* ---- the sites ---- */

typedef struct pair {
	const dsite_t *a, *b; /* either may be NULL: only in one run */
	double change;        /* b's live at its peak less a's */
} pair_t;

static int by_change(const void *x, const void *y)
{
	const pair_t *p = x, *q = y;
	double a = fabs(p->change), b = fabs(q->change);
	return (a < b) - (a > b);
}

static int64_t peak_live(const dsite_t *s) { return s ? s->sum.peak_live_pages : 0; }

/* The sites of both runs paired by key (the first of b's with that key
 * for each of a's), then those of b alone.  Returns the pairs (NULL when
 * out of memory: *n is then SIZE_MAX). */
static pair_t *pair_sites(run_t *a, run_t *b, size_t *n)
{
	pair_t *v = calloc(a->nsites + b->nsites + 1, sizeof *v);
	*n = 0;
	if (!v) {
		*n = SIZE_MAX;
		return NULL;
	}
	for (size_t i = 0; i < a->nsites; i++) {
		dsite_t *m = NULL;
		for (size_t j = 0; j < b->nsites && !m; j++)
			if (!b->sites[j].matched && !strcmp(a->sites[i].key, b->sites[j].key))
				m = &b->sites[j];
		if (m)
			m->matched = true;
		v[(*n)++] = (pair_t){&a->sites[i], m, (double)(peak_live(m) - peak_live(&a->sites[i]))};
	}
	for (size_t j = 0; j < b->nsites; j++)
		if (!b->sites[j].matched)
			v[(*n)++] = (pair_t){NULL, &b->sites[j], (double)peak_live(&b->sites[j])};
	qsort(v, *n, sizeof *v, by_change);
	return v;
}

/* A site's figures are estimates: its allocations were sampled (by their
 * bytes), or its pages (a sampled run). */
static bool estimated(const pair_t *p) { return (p->a && p->a->est) || (p->b && p->b->est); }

static void print_sites(FILE *out, const pair_t *v, size_t n)
{
	char x[32], y[32], z[32], w[32];
	fputs("\nAllocation sites, largest change of live pages at the peak first (\"a → b\"; by their functions):\n",
	      out);
	size_t shown = 0;
	for (size_t i = 0; i < n && shown < SITES_SHOWN; i++, shown++) {
		const pair_t *p = &v[i];
		const dsite_t *s = p->a ? p->a : p->b;
		const char *tag = !p->a ? "only in b" : !p->b ? "only in a" : NULL;
		char c[40];
		fprintf(out, "%3zu. %s%s live at the peak%s%s%s\n      %s\n", shown + 1, estimated(p) ? "≈ " : "",
			signed_text(c, sizeof c, p->change, false), tag ? " (" : "", tag ? tag : "", tag ? ")" : "", s->key);
		fprintf(out, "      live at the peak %s → %s, working set %s → %s\n",
			wss_text_grouped(x, sizeof x, (uint64_t)peak_live(p->a)),
			wss_text_grouped(y, sizeof y, (uint64_t)peak_live(p->b)),
			wss_text_grouped(z, sizeof z, (uint64_t)(p->a ? p->a->sum.ws_pages : 0)),
			wss_text_grouped(w, sizeof w, (uint64_t)(p->b ? p->b->sum.ws_pages : 0)));
	}
	if (n > shown)
		fprintf(out, "     (%zu more in --json)\n", n - shown);
	for (size_t i = 0; i < n; i++)
		if (estimated(&v[i])) {
			fputs("     (≈: an estimate, its allocations or pages sampled: wss report gives its interval)\n", out);
			break;
		}
}

/* ---- --json ---- */

static void json_fig(wss_jw_t *w, const fig_t *f)
{
	wss_jw_open(w, NULL, '{');
	wss_jw_str(w, "figure", f->name);
	double s = f->tenths ? 0.1 : 1;
	wss_jw_num(w, "a", f->a * s);
	wss_jw_num(w, "b", f->b * s);
	wss_jw_ci(w, "a_ci", &f->aci);
	wss_jw_ci(w, "b_ci", &f->bci);
	wss_jw_num(w, "change", round(10 * (pages(f, true) - pages(f, false))) / 10);
	double pct = change_pct(f);
	if (isinf(pct))
		wss_jw_str(w, "change_pct", NULL);
	else
		wss_jw_num(w, "change_pct", round(10 * pct) / 10);
	wss_jw_bool(w, "within_noise", overlap(f));
	wss_jw_close(w, '}');
}

static void json_site(wss_jw_t *w, const char *key, const dsite_t *s)
{
	if (!s) {
		wss_jw_str(w, key, NULL);
		return;
	}
	wss_jw_open(w, key, '{');
	wss_jw_int(w, "live_pages", s->sum.live_pages);
	wss_jw_int(w, "peak_live_pages", s->sum.peak_live_pages);
	wss_jw_int(w, "ws_pages", s->sum.ws_pages);
	wss_jw_int(w, "idle_pages", s->sum.idle_pages);
	wss_jw_int(w, "allocs", s->sum.allocs);
	wss_jw_bool(w, "estimated", s->est);
	wss_jw_close(w, '}');
}

static int write_json(FILE *out, const run_t *a, const run_t *b, const fig_t *v, size_t nv, const pair_t *pairs,
		      size_t np, double limit, const char **failed, size_t nfailed)
{
	wss_jw_t w;
	if (wss_jw_init(&w, 1 << 14))
		return ENOMEM;
	wss_jw_open(&w, NULL, '{');
	wss_jw_str(&w, "a", a->p.path);
	wss_jw_str(&w, "b", b->p.path);
	wss_jw_bool(&w, "a_sampled", wss_load_sampled(&a->p));
	wss_jw_bool(&w, "b_sampled", wss_load_sampled(&b->p));
	wss_jw_bool(&w, "a_truncated", !a->p.has_summary);
	wss_jw_bool(&w, "b_truncated", !b->p.has_summary);
	wss_jw_open(&w, "figures", '[');
	for (size_t i = 0; i < nv; i++)
		if (v[i].have)
			json_fig(&w, &v[i]);
	wss_jw_close(&w, ']');
	wss_jw_open(&w, "alloc_sites", '[');
	for (size_t i = 0; i < np; i++) {
		wss_jw_open(&w, NULL, '{');
		wss_jw_str(&w, "functions", (pairs[i].a ? pairs[i].a : pairs[i].b)->key);
		json_site(&w, "a", pairs[i].a);
		json_site(&w, "b", pairs[i].b);
		wss_jw_num(&w, "change_peak_live_pages", pairs[i].change);
		wss_jw_close(&w, '}');
	}
	wss_jw_close(&w, ']');
	if (limit >= 0) {
		wss_jw_num(&w, "fail_above_pct", limit);
		wss_jw_open(&w, "failed", '[');
		for (size_t i = 0; i < nfailed; i++)
			wss_jw_str(&w, NULL, failed[i]);
		wss_jw_close(&w, ']');
	}
	wss_jw_close(&w, '}');
	wss_fmt_ch(&w.f, '\n');
	int r = w.f.overflow ? ENOMEM : 0;
	if (!r && (fwrite(w.f.buf, 1, w.f.len, out) != w.f.len || fflush(out)))
		r = EIO;
	wss_fmt_release(&w.f);
	return r;
}

/* ---- the command ---- */

static void kind_figs(fig_t *v, size_t *n, const wss_profile_t *a, const wss_profile_t *b)
{
	static char names[WSS_KIND_N][2][48];
	for (int k = 1; k < WSS_KIND_N; k++) {
		const wss_stat_t *x = &a->kinds[k], *y = &b->kinds[k];
		if (!x->present && !y->present)
			continue;
		snprintf(names[k][0], sizeof names[k][0], "kind.%s.peak", wss_kind_name(k));
		snprintf(names[k][1], sizeof names[k][1], "kind.%s.total", wss_kind_name(k));
		/* A kind the other run did not have counts as 0 there. */
		v[(*n)++] = (fig_t){names[k][0], false, true, x->present ? (double)x->peak : 0,
				    y->present ? (double)y->peak : 0, x->peak_ci, y->peak_ci, false, false};
		v[(*n)++] = (fig_t){names[k][1], false, (!x->present || x->total >= 0) && (!y->present || y->total >= 0),
				    x->present ? (double)x->total : 0, y->present ? (double)y->total : 0, x->total_ci,
				    y->total_ci, false, false};
	}
}

int wss_cmd_diff(int argc, char **argv)
{
	const char *fail = NULL, *paths[2];
	bool json = false;
	size_t npaths;
	const wss_opt_t opts[] = {{"--fail-above", &fail, NULL}, {"--json", NULL, &json}};
	int r = wss_opts_parse("diff", argc, argv, opts, sizeof opts / sizeof *opts, paths, 2, &npaths,
			       "wss diff [--json] [--fail-above PCT] A B");
	if (r)
		return r;
	if (npaths != 2)
		return usage_error("two profiles are needed (wss diff [--json] [--fail-above PCT] A B)", NULL);
	double limit = -1;
	if (fail && (r = parse_pct(fail, &limit)))
		return r;
	run_t a = {0}, b = {0};
	if ((r = wss_load_profile(paths[0], &a.p)))
		return r;
	a.loaded = true;
	if ((r = wss_load_profile(paths[1], &b.p))) {
		run_release(&a);
		return r;
	}
	b.loaded = true;
	fig_t v[9 + 2 * WSS_KIND_N];
	size_t nv = 0;
	stat_figs(v, &nv, "data", &a.p.data, &b.p.data);
	stat_figs(v, &nv, "read", &a.p.read, &b.p.read);
	stat_figs(v, &nv, "write", &a.p.write, &b.p.write);
	size_t nstat = nv;
	kind_figs(v, &nv, &a.p, &b.p);
	mark_estimates(v, 0, nv, &a.p, &b.p);
	/* A run cut short has no summary: its figures are its samples', no
	 * total; a guard cannot judge it (a crash must not pass as a win). */
	for (int k = 0; k < 2 && limit >= 0; k++) {
		const wss_profile_t *p = k ? &b.p : &a.p;
		if (!p->has_summary) {
			fprintf(stderr,
				"wss: diff: %s: no summary (the run was killed, or is still running): --fail-above cannot "
				"judge it\n",
				p->path);
			run_release(&a);
			run_release(&b);
			return EXIT_USAGE;
		}
	}
	size_t np = 0;
	pair_t *pairs = NULL;
	if (!(r = site_keys(&a)) && !(r = site_keys(&b)) && !(pairs = pair_sites(&a, &b, &np)) && np == SIZE_MAX)
		r = ENOMEM;
	/* The guard: data avg, peak and total (the first three). */
	const char *failed[3];
	size_t nfailed = 0;
	for (size_t i = 0; !r && limit >= 0 && i < 3; i++)
		if (v[i].have && change_pct(&v[i]) > limit)
			failed[nfailed++] = v[i].name;
	if (!r && json)
		r = write_json(stdout, &a, &b, v, nv, pairs, np, limit, failed, nfailed);
	else if (!r) {
		printf("wss diff: a → b\n");
		describe(stdout, "a", &a.p);
		describe(stdout, "b", &b.p);
		printf("\n%-16s %22s  %22s  %s\n", "pages", "a", "b", "change");
		for (size_t i = 0; i < nstat; i++)
			print_fig(stdout, &v[i]);
		if (nv > nstat) {
			puts("\nBy kind (data):");
			for (size_t i = nstat; i < nv; i++)
				print_fig(stdout, &v[i]);
		}
		if (np)
			print_sites(stdout, pairs, np);
		if (wss_load_sampled(&a.p) || wss_load_sampled(&b.p))
			puts("\n≈: an estimate (a sampled run), ± its 95 % interval; ~: the two intervals overlap, a change "
			     "the samples cannot tell from none");
		if (fflush(stdout) || ferror(stdout))
			r = EIO;
	}
	for (size_t i = 0; !r && i < nfailed; i++) {
		const fig_t *f = NULL;
		for (size_t k = 0; k < 3; k++)
			if (!strcmp(v[k].name, failed[i]))
				f = &v[k];
		if (isinf(change_pct(f)))
			fprintf(stderr, "wss: diff: %s grew from 0 to %.0f (more than %g %%)\n", failed[i], pages(f, true), limit);
		else
			fprintf(stderr, "wss: diff: %s grew %.1f %% (more than %g %%)%s\n", failed[i], change_pct(f), limit,
				overlap(f) ? ", within the estimates' intervals" : "");
	}
	free(pairs);
	run_release(&a);
	run_release(&b);
	if (r) {
		fprintf(stderr, "wss: diff: %s\n", strerror(r));
		return 1;
	}
	return nfailed ? WSS_DIFF_ABOVE : 0;
}
