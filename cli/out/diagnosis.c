/* The diagnosis (diagnosis.h).  Each sentence is built from figures the
 * report prints below it, so the paragraph and the sections never
 * disagree: the percentiles of the samples' data pages, the summary's
 * peak and total, the first-touch sites of the largest data peak, wss
 * mrc's 99 % hit size, the precision line's figures and the allocation
 * sites' idle pages.  Numbers and their units are joined by no-break
 * spaces so that a wrapped line never starts with a unit. */
#include "config.h"
#include "cli/out/diagnosis.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/analyses/analyses.h"
#include "cli/model/fold.h"
#include "cli/out/report_internal.h"
#include "cli/model/session.h"
#include "cli/out/text.h"

#define NBSP "\xc2\xa0"

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* "740 KiB", "1.3 MiB", "2.10 GiB": pages of ps bytes. */
static const char *human(char *buf, size_t n, int64_t pages, int64_t ps)
{
	double b = (double)pages * (double)(ps > 0 ? ps : 4096);
	if (b < 1024.0 * 1024)
		snprintf(buf, n, "%.0f" NBSP "KiB", b / 1024);
	else if (b < 1024.0 * 1024 * 1024)
		snprintf(buf, n, "%.1f" NBSP "MiB", b / 1048576);
	else
		snprintf(buf, n, "%.2f" NBSP "GiB", b / 1073741824);
	return buf;
}

/* "1,490 pages" */
static const char *pages(char *buf, size_t n, int64_t v)
{
	char g[32];
	snprintf(buf, n, "%s" NBSP "page%s", wss_text_grouped(g, sizeof g, (uint64_t)(v > 0 ? v : 0)), v == 1 ? "" : "s");
	return buf;
}

/* p50, p95 and p99 of the whole intervals' data pages (the last, partial one
 * only when it is all there is), and the largest sample's time. */
static int percentiles(const wss_profile_t *p, wss_diag_t *d)
{
	d->p50 = d->p95 = d->p99 = d->peak = d->peak_t_ns = d->peak_seq = -1;
	d->intervals = 0; /* none without samples (a run cut before its first) */
	if (!p->nsamples)
		return 0;
	int64_t *v = malloc(p->nsamples * sizeof *v);
	if (!v)
		return ENOMEM;
	size_t n = 0;
	int64_t top = -1;
	for (size_t i = 0; i < p->nsamples; i++) {
		const wss_sample_t *s = &p->samples[i];
		if (!s->final || p->nsamples == 1)
			v[n++] = s->data;
		if (s->data > top) {
			top = s->data;
			d->peak_t_ns = s->t_ns;
			d->peak_seq = s->seq;
			d->peak_final = s->final;
		}
	}
	qsort(v, n, sizeof *v, by_value);
	d->low = v[0];
	d->high = v[n - 1];
	size_t k50 = (n * 50 + 99) / 100, k95 = (n * 95 + 99) / 100, k99 = (n * 99 + 99) / 100;
	d->p50 = v[k50 ? k50 - 1 : 0];
	d->p95 = v[k95 ? k95 - 1 : 0];
	d->p99 = v[k99 ? k99 - 1 : 0];
	d->intervals = n;
	d->peak = p->data.present ? p->data.peak : top;
	free(v);
	return 0;
}

/* Frames in these are the allocator's, the C library's or wss's own, not
 * the code that asked for the memory. */
static bool plumbing(const wss_frame_t *f)
{
	static const char *const libs[] = {"libc.so", "libc-", "ld-linux", "libwss", "libjemalloc", "libstdc++"};
	if (!f->module)
		return false;
	const char *b = wss_report_base_name(f->module->path);
	for (size_t k = 0; k < sizeof libs / sizeof *libs; k++)
		if (!strncmp(b, libs[k], strlen(libs[k])))
			return true;
	return false;
}

/* The frame that says whose code it was: the first with a source line,
 * else the first named one outside the plumbing, else the first.  As
 * "function (file:line)", "function (module)" or "module+0x...", in a
 * malloc'd string; NULL when there are no frames or no memory. */
static char *code_of(const wss_report_frames_t *fr)
{
	const wss_frame_t *pick = NULL;
	/* A runtime's own frames (the interpreter's list_repeat) say how it
	 * ran the program, not which code: the program's is named, when its
	 * frames are (a JIT's), else the runtime. */
	const char *runtime = NULL;
	for (size_t k = 0; k < fr->n && !runtime; k++)
		runtime = fr->f[k].module ? wss_fold_runtime(fr->f[k].module->path) : NULL;
	for (size_t k = 0; runtime && k < fr->n && !pick; k++)
		if (fr->f[k].function && !fr->f[k].module)
			pick = &fr->f[k];
	if (runtime && !pick) {
		char *s = NULL;
		return asprintf(&s, "the program's code, run by the %s (wss report --raw-stacks has its frames)", runtime) < 0
			       ? NULL
			       : s;
	}
	for (size_t k = 0; k < fr->n && !pick; k++)
		if (fr->f[k].file && fr->f[k].function)
			pick = &fr->f[k];
	for (size_t k = 0; k < fr->n && !pick; k++)
		if (fr->f[k].function && !plumbing(&fr->f[k]))
			pick = &fr->f[k];
	if (!pick && fr->n)
		pick = &fr->f[0];
	if (!pick)
		return NULL;
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	if (!m)
		return NULL;
	if (pick->function && pick->file)
		fprintf(m, "%s (%s:%d)", pick->function, pick->file, pick->line);
	else if (pick->function)
		fprintf(m, "%s%s%s%s", pick->function, pick->module ? " (" : "",
			pick->module ? wss_report_base_name(pick->module->path) : "", pick->module ? ")" : "");
	else
		wss_report_print_frame(m, pick);
	if (fclose(m)) {
		free(s);
		return NULL;
	}
	return s;
}

/* The largest data peak's (else the largest peak's) site with the most
 * pages, and its share of the peak's pages in *share (%). */
static const wss_site_t *peak_site(const wss_profile_t *p, int *share)
{
	const wss_peak_t *best = NULL;
	for (size_t i = 0; i < p->npeaks; i++) {
		const wss_peak_t *k = &p->peaks[i];
		bool data = k->series && !strcmp(k->series, "data"), best_data = best && !strcmp(best->series, "data");
		if (k->nsites && (!best || (data && !best_data) || (data == best_data && k->value > best->value)))
			best = k;
	}
	if (!best)
		return NULL;
	const wss_site_t *site = &best->sites[0];
	int64_t sum = 0;
	for (size_t j = 0; j < best->nsites; j++) {
		sum += best->sites[j].pages;
		if (best->sites[j].pages > site->pages)
			site = &best->sites[j];
	}
	*share = sum > 0 ? (int)(100 * site->pages / sum) : 0;
	return site;
}

/* The trace's 99 % hit size, when the profile names a trace that is
 * there (a moved profile without its trace is not an error here). */
static void cache_size(const wss_profile_t *p, wss_diag_t *d)
{
	d->lru99 = -1;
	if (!p->trace)
		return;
	char *path = wss_load_beside(p->path, p->trace);
	bool there = path && access(path, R_OK) == 0;
	free(path);
	uint64_t pg;
	if (there && wss_mrc_hit_size(p->path, 99, &pg) == 0)
		d->lru99 = (int64_t)pg;
}

static void say_typical(const wss_profile_t *p, const wss_diag_t *d, FILE *m)
{
	char a[48], b[48], c[48], e[48];
	const char *about = wss_load_sampled(p) ? "about " : "";
	char span[64];
	if (p->window_intervals > 1)
		snprintf(span, sizeof span, "windows of %" PRId64 " intervals", p->window_intervals);
	else if (p->interval_ns > 0 && p->time_base && !strcmp(p->time_base, "manual"))
		snprintf(span, sizeof span, "intervals");
	else if (p->interval_ns > 0)
		snprintf(span, sizeof span, "intervals of %" PRId64 NBSP "ms%s", p->interval_ns / 1000000,
			 p->time_base && !strcmp(p->time_base, "cpu") ? " of CPU time" : "");
	else
		snprintf(span, sizeof span, "intervals");
	if (d->intervals < 2) {
		fprintf(m, "The run was one interval long, and touched %s%s of data (%s).", about,
			human(a, sizeof a, d->p50, p->page_size), pages(b, sizeof b, d->p50));
		return;
	}
	if (d->intervals < 10) {
		/* Too few for percentiles to mean anything. */
		fprintf(m, "Its %zu %s touched from %s%s to %s%s of data.", d->intervals, span, about,
			human(a, sizeof a, d->low, p->page_size), about, human(c, sizeof c, d->high, p->page_size));
		return;
	}
	if (!d->p95) {
		fprintf(m, "At least 95" NBSP "%% of the %s touched no data.", span);
		return;
	}
	if (!d->p50)
		fprintf(m, "Half the %s touched no data", span);
	else
		fprintf(m, "Half the %s touched at most %s%s of data (p50, %s)", span, about,
			human(a, sizeof a, d->p50, p->page_size), pages(b, sizeof b, d->p50));
	fprintf(m, "; 95" NBSP "%% at most %s%s (p95, %s)", about, human(c, sizeof c, d->p95, p->page_size),
		pages(e, sizeof e, d->p95));
	/* The p99 only where it says more than the p95 and the peak. */
	if (d->intervals >= 100 && d->p99 > d->p95)
		fprintf(m, ", 99" NBSP "%% at most %s%s (p99)", about, human(c, sizeof c, d->p99, p->page_size));
	fputc('.', m);
}

static void say_peak(const wss_profile_t *p, const wss_diag_t *d, FILE *m)
{
	char a[48], b[48];
	if (d->peak < 0 || d->intervals < 2)
		return;
	fprintf(m, " The peak was %s%s (%s) ", wss_load_sampled(p) ? "about " : "",
		human(a, sizeof a, d->peak, p->page_size), pages(b, sizeof b, d->peak));
	if (p->time_base && !strcmp(p->time_base, "manual"))
		fprintf(m, "in interval %" PRId64, d->peak_seq);
	else
		fprintf(m, "at %.1f" NBSP "s (interval %" PRId64 ")", (double)d->peak_t_ns / 1e9, d->peak_seq);
	if (d->peak_final)
		fputs(", the last and partial one", m);
	if (d->peak_code)
		fprintf(m, ", %s of its new pages first touched by %s.", d->peak_share >= 50 ? "most" : "the largest share",
			d->peak_code);
	else if (!p->npeaks)
		fputs(": no interval stood out from the rest as a burst, so no stack was recorded.", m);
	else
		fputc('.', m);
	if (p->data.present && p->data.total > d->peak) {
		fprintf(m, " Over the whole run it touched %s%s (%s).", wss_load_sampled(p) ? "about " : "",
			human(a, sizeof a, p->data.total, p->page_size), pages(b, sizeof b, p->data.total));
	}
}

static void say_cache(const wss_profile_t *p, const wss_diag_t *d, FILE *m)
{
	char a[48], b[48];
	if (d->lru99 > 0)
		fprintf(m, " A memory of %s (%s) kept by LRU would have held 99" NBSP "%% of the pages touched again "
			   "in a later interval (wss mrc).",
			human(a, sizeof a, d->lru99, p->page_size), pages(b, sizeof b, d->lru99));
}

/* How far the figures go: exact and what it cost, or the sample and its
 * precision, and what to do when either is in the way. */
static void say_trust(const wss_profile_t *p, FILE *m)
{
	double cost = wss_load_overhead_pct(p);
	if (!wss_load_sampled(p)) {
		if (wss_load_lower_bound(p)) {
			fputs(" Pages were counted, not sampled (exact mode), but some counts are lower bounds: "
			      "coarse blocks left touched pages uncounted (see the header).", m);
			return;
		}
		fputs(" Every page was counted (exact mode)", m);
		if (cost >= 0)
			fprintf(m, ", at a cost of %.1f" NBSP "%% of the program's time", cost);
		fputc('.', m);
		if (cost > 10)
			fputs(" That much slows the program: its intervals held less work than they would natively, "
			      "so its working set reads small; the default mode (auto) samples instead.", m);
		return;
	}
	int64_t rate = p->rate_max > p->summary_rate_max ? p->rate_max : p->summary_rate_max;
	fprintf(m, " The figures are estimates from a sample of up to 1 page in %" PRId64, rate);
	bool median = p->has_precision && p->precision_median_pct >= 0;
	if (median)
		fprintf(m, ": each interval's within \xc2\xb1%.0f" NBSP "%% (the median)", p->precision_median_pct);
	if (p->data.present && p->data.avg_ci.present && p->data.avg_tenths > 0) {
		double est = (double)p->data.avg_tenths / 10;
		double half = est - p->data.avg_ci.lo > p->data.avg_ci.hi - est ? est - p->data.avg_ci.lo
										 : p->data.avg_ci.hi - est;
		fprintf(m, "%s the average within \xc2\xb1%.1f" NBSP "%%", median ? "," : ":", 100 * half / est);
	}
	fputc('.', m);
	if (median && p->precision_median_pct > p->precision_target_pct)
		fprintf(m, " That is wider than the \xc2\xb1%.0f" NBSP "%% target: --overhead" NBSP "10%% or --mode" NBSP
			   "exact tightens them%s.",
			p->precision_target_pct, cost >= 0 ? ", at a higher cost" : "");
}

/* The allocation site with the most idle pages, when they are a fair
 * part of what it holds. */
static int say_idle(const wss_profile_t *p, wss_symbols_t *syms, FILE *m)
{
	const wss_alloc_site_t *best = NULL;
	for (size_t i = 0; i < p->nalloc_sites; i++) {
		const wss_alloc_site_t *a = &p->alloc_sites[i];
		if (a->idle_pages >= 64 && a->idle_pages * 10 >= a->live_pages && (!best || a->idle_pages > best->idle_pages))
			best = a;
	}
	if (!best)
		return 0;
	wss_report_frames_t fr = {NULL, 0, 0};
	int r = wss_report_alloc_frames(p, syms, best->stack, &fr);
	if (r == ENOMEM) {
		free(fr.f);
		return ENOMEM;
	}
	char *code = r ? NULL : code_of(&fr);
	free(fr.f);
	char a[48], b[48];
	fprintf(m, " %s%s (%s) allocated %s%s was idle at the end: untouched for %" PRId64 " intervals or more.",
		wss_load_sampled(p) ? "About " : "", human(a, sizeof a, best->idle_pages, p->page_size),
		pages(b, sizeof b, best->idle_pages),
		!code ? "at one site" : !strncmp(code, "the ", 4) ? "by " : "at ", code ? code : "", p->alloc_idle_after);
	free(code);
	return 0;
}

/* A session's first profile: the session's size and its largest process,
 * which the paragraph's other figures (this process's alone) may not be. */
static void say_session(const wss_profile_t *p, const wss_session_t *s, FILE *m)
{
	if (!s)
		return;
	char a[48], b[48];
	fprintf(m, " This process began a session of %zu, which touched %s%s in all (the sum of their totals)",
		s->processes, s->estimated ? "about " : "", human(a, sizeof a, (int64_t)s->total, p->page_size));
	if (s->nrows && s->rows[0].pid != p->pid)
		fprintf(m, "; the largest data peak was %s's (pid %" PRId64 "), %s%s", s->rows[0].program, s->rows[0].pid,
			s->rows[0].sampled ? "about " : "", human(b, sizeof b, s->rows[0].data.peak, p->page_size));
	fputs(": see the session's table below.", m);
}

static void say_next(const wss_profile_t *p, FILE *m)
{
	const char *name = p->path;
	if (!p->trace)
		fputs(" Next: wss run --trace records a page trace, for the memory that keeps misses low (wss mrc) "
		      "and where the touches fall (wss heatmap).", m);
	else
		fprintf(m, " Next: wss heatmap %s shows where in memory and when the touches fell.", name);
	if (p->npeaks)
		fputs(" The stacks behind the peaks are listed below.", m);
}

int wss_diag_build(wss_profile_t *p, wss_symbols_t *syms, const wss_session_t *s, wss_diag_t *d)
{
	memset(d, 0, sizeof *d);
	if (percentiles(p, d))
		return ENOMEM;
	const wss_site_t *site = peak_site(p, &d->peak_share);
	if (site) {
		wss_report_frames_t fr = {NULL, 0, 0};
		int r = wss_report_site_frames(p, syms, site, &fr);
		if (!r)
			d->peak_code = code_of(&fr);
		free(fr.f);
		if (r == ENOMEM)
			return ENOMEM;
	}
	cache_size(p, d);
	size_t len = 0;
	FILE *m = open_memstream(&d->text, &len);
	if (!m) {
		wss_diag_release(d);
		return ENOMEM;
	}
	if (d->p50 < 0)
		fputs("The profile has no samples: the program ended before its first interval did.", m);
	else {
		say_typical(p, d, m);
		say_peak(p, d, m);
		say_cache(p, d, m);
		say_trust(p, m);
		if (say_idle(p, syms, m)) {
			fclose(m);
			wss_diag_release(d);
			return ENOMEM;
		}
		say_session(p, s, m);
	}
	say_next(p, m);
	if (fclose(m)) {
		d->text = NULL;
		wss_diag_release(d);
		return ENOMEM;
	}
	return 0;
}

int wss_diag_right_size(const wss_profile_t *p, FILE *out)
{
	wss_diag_t d;
	if (percentiles(p, &d))
		return ENOMEM;
	if (d.intervals < 10)
		return 0;
	char a[32], c[32];
	double mib = (double)p->page_size / 1048576;
	fprintf(out, "Right-size: %sp95 %s pages (%.1f MiB), p99 %s pages (%.1f MiB): the data working set fit in these in "
		     "95 %% and 99 %% of the %zu windows\n",
		wss_load_sampled(p) ? "\u2248 " : "", wss_text_grouped(a, sizeof a, (uint64_t)d.p95), (double)d.p95 * mib,
		wss_text_grouped(c, sizeof c, (uint64_t)d.p99), (double)d.p99 * mib, d.intervals);
	return 0;
}

int wss_diag_text(wss_profile_t *p, wss_symbols_t *syms, const wss_session_t *s, FILE *out)
{
	wss_diag_t d;
	if (wss_diag_build(p, syms, s, &d))
		return ENOMEM;
	wss_diag_print(&d, out, 80);
	wss_diag_release(&d);
	return 0;
}

void wss_diag_plain(wss_diag_t *d)
{
	char *o = d->text;
	for (const char *s = d->text; s && *s; s++) {
		if (s[0] == '\xc2' && s[1] == '\xa0') {
			*o++ = ' ';
			s++;
		} else
			*o++ = *s;
	}
	if (o)
		*o = '\0';
}

void wss_diag_release(wss_diag_t *d)
{
	free(d->peak_code);
	free(d->text);
	memset(d, 0, sizeof *d);
}

/* Words are broken at ASCII spaces only; a word longer than the line
 * stands on its own. */
void wss_diag_print(const wss_diag_t *d, FILE *out, int width)
{
	if (!d->text)
		return;
	const char *s = d->text;
	int col = 0;
	while (*s) {
		size_t w = strcspn(s, " ");
		int cols = 0;
		for (size_t k = 0; k < w; k++)
			cols += ((unsigned char)s[k] & 0xc0) != 0x80; /* one column a character */
		if (col && col + 1 + cols > width) {
			fputc('\n', out);
			col = 0;
		} else if (col) {
			fputc(' ', out);
			col++;
		}
		fwrite(s, 1, w, out);
		col += cols;
		s += w;
		while (*s == ' ')
			s++;
	}
	if (col)
		fputc('\n', out);
}
