/* `wss report` (report.h): header facts, the avg/peak/total summary in the
 * valgrind-ws paper's style, per-thread totals, a timeline chart with the
 * peaks marked, each peak's first-touch sites as symbolised stacks, and the
 * hot pages.  The text and the JSON forms are built from the same loaded
 * profile and the same frames, so their numbers agree.  A sampled run's
 * estimates are marked as such everywhere they appear (≈, with their 95 %
 * intervals where there is room); an exact profile's report is what it was
 * before sampling existed, byte for byte. */
#include "config.h"
#include "cli/report.h"
#include "cli/jw.h"
#include "cli/session.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/symbols.h"
#include "cli/text.h"
#include "common/fmt.h"

/* ---- shared pieces ---- */

static int by_seq(const void *a, const void *b)
{
	const wss_peak_t *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Peaks are numbered in time order, whatever order the file has. */
static void sort_peaks(wss_profile_t *p)
{
	if (p->npeaks > 1)
		qsort(p->peaks, p->npeaks, sizeof *p->peaks, by_seq);
}

typedef struct frames {
	wss_frame_t *f;
	size_t n, cap;
} frames_t;

/* The frames of one stack: frames[0] is the faulting instruction, the
 * others return addresses.  Returns 0 or ENOMEM. */
static int stack_frames(wss_symbols_t *syms, const wss_stack_t *st, frames_t *out)
{
	out->n = 0;
	for (size_t k = 0; k < st->n; k++)
		if (wss_sym_frames(syms, st->frames[k], k > 0, &out->f, &out->n, &out->cap))
			return ENOMEM;
	return 0;
}

/* A first-touch site's frames: its stack's, or, when no stack was
 * captured, the touching instruction's alone.  Returns 0, ENOMEM, or
 * ENOENT when its stack is not in the profile. */
static int site_frames(const wss_profile_t *p, wss_symbols_t *syms, const wss_site_t *site, frames_t *out)
{
	if (site->stack < 0) {
		out->n = 0;
		return wss_sym_frames(syms, site->pc, false, &out->f, &out->n, &out->cap);
	}
	const wss_stack_t *st = wss_load_stack(p, site->stack);
	return st ? stack_frames(syms, st, out) : ENOENT;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void series_name(const char *series, char *buf, size_t n)
{
	if (!strncmp(series, "thread:", 7))
		snprintf(buf, n, "thread %s", series + 7);
	else
		snprintf(buf, n, "%s", series);
}

/* ---- text ---- */

static void print_duration_ns(FILE *out, int64_t ns)
{
	if (ns >= 1000000000 && ns % 1000000000 == 0)
		fprintf(out, "%" PRId64 " s", ns / 1000000000);
	else if (ns >= 1000000 && ns % 1000000 == 0)
		fprintf(out, "%" PRId64 " ms", ns / 1000000);
	else if (ns >= 1000 && ns % 1000 == 0)
		fprintf(out, "%" PRId64 " us", ns / 1000);
	else
		fprintf(out, "%" PRId64 " ns", ns);
}

static void print_seconds(FILE *out, int64_t ns) { fprintf(out, "%.3f s", (double)ns / 1e9); }

/* v with thousands separated by commas ("12,340"), into buf. */
static const char *grouped(char *buf, size_t n, uint64_t v) { return wss_text_grouped(buf, n, v); }

/* Tenths of a page as "12,340.5". */
static const char *grouped_tenths(char *buf, size_t n, uint64_t tenths)
{
	grouped(buf, n, tenths / 10);
	size_t len = strlen(buf);
	snprintf(buf + len, n - len, ".%" PRIu64, tenths % 10);
	return buf;
}

/* The sampling rates in force: "1 page in 64", or "up to 1 page in 64
 * (rates 1/16..1/64; 3 of 40 samples exact)". */
static void print_rates(const wss_profile_t *p, FILE *out)
{
	int64_t hi = p->rate_max > p->summary_rate_max ? p->rate_max : p->summary_rate_max;
	int64_t lo = p->rate_min ? p->rate_min : hi;
	size_t exact = p->nsampled < p->nsamples ? p->nsamples - p->nsampled : 0;
	if (hi <= 1) {
		fputs("estimated counts", out);
		return;
	}
	fprintf(out, "%s1 page in %" PRId64, lo < hi || exact ? "up to " : "", hi);
	if (lo < hi)
		fprintf(out, " (rates 1/%" PRId64 "..1/%" PRId64, lo, hi);
	if (exact)
		fprintf(out, "%s%zu of %zu samples exact", lo < hi ? "; " : " (", exact, p->nsamples);
	if (lo < hi || exact)
		fputc(')', out);
}

/* Rounding an interval outwards to tenths (or units), so that what is
 * printed still contains what was computed. */
static int64_t round_down(double v, int scale) { return (int64_t)floor(v * scale + 1e-9); }
static int64_t round_up(double v, int scale) { return (int64_t)ceil(v * scale - 1e-9); }

/* A shell word, quoted when it needs to be. */
static void print_word(FILE *out, const char *w)
{
	if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") == strlen(w)) {
		fputs(w, out);
		return;
	}
	fputc('\'', out);
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", out);
		else
			fputc(*w, out);
	fputc('\'', out);
}

/* The session's other processes, from the process notes, counted as the
 * leader's stderr line counts them: the profiles they wrote and where, and
 * the processes that wrote none (a forked child that exec'd is counted by
 * its exec'd image's note); and where this program's own exec'd image
 * wrote its profile (the one to read next). */
static void print_session(const wss_profile_t *p, FILE *out)
{
	static const char refused[] = "the session directory "; /* engine/session.c */
	size_t with = 0, without = 0, outside = 0, refused_n = 0;
	const char *refused_why = NULL;
	const char *next = NULL;
	size_t dl = p->session_dir ? strlen(p->session_dir) : 0;
	for (size_t k = 0; k < p->nprocs; k++) {
		const wss_process_note_t *n = &p->procs[k];
		if (n->pid == p->pid) {
			if (n->profile)
				next = n->profile; /* the last exec of this process */
			continue;
		}
		if (!n->profile) {
			without += !n->reason || strcmp(n->reason, "exec before its first sample");
			if (n->reason && !strncmp(n->reason, refused, sizeof refused - 1) && !refused_n++)
				refused_why = n->reason + sizeof refused - 1;
			continue;
		}
		with++;
		outside += !dl || strncmp(n->profile, p->session_dir, dl) || n->profile[dl] != '/';
	}
	if (next)
		fprintf(out, "\nexec'd     this program exec'd; the next image's profile is %s", next);
	if (!with && !without)
		return;
	fputs("\nsession    ", out);
	if (with) {
		fprintf(out, "%zu more profile%s", with, with == 1 ? "" : "s");
		if (with > outside && dl)
			fprintf(out, " in %s/", p->session_dir);
		if (outside && with > outside)
			fprintf(out, " (%zu elsewhere)", outside);
		fputs(without ? " and " : "", out);
	}
	if (without)
		fprintf(out, "%zu process%s that wrote none", without, without == 1 ? "" : "es");
	fprintf(out, " (wss report --html OUT.html %s shows the tree)", p->path);
	if (refused_n)
		fprintf(out, "\n           %zu of them wrote none because the session directory%s%s %s", refused_n,
			p->session_dir ? " " : "", p->session_dir ? p->session_dir : "", refused_why);
}

static void print_header(const wss_profile_t *p, FILE *out)
{
	fprintf(out, "program    %s\n", p->exe);
	fputs("argv      ", out);
	for (size_t k = 0; k < p->argc; k++) {
		fputc(' ', out);
		print_word(out, p->argv[k]);
	}
	fprintf(out, "\npid        %" PRId64, p->pid);
	if (p->ppid >= 0)
		fprintf(out, " (parent %" PRId64 ")", p->ppid);
	fprintf(out, "\nbackend    %s", p->backend);
	if (p->backend_reason)
		fprintf(out, " (%s)", p->backend_reason);
	if (p->backend_sees)
		fprintf(out, "\nsees       %s", p->backend_sees);
	if (wss_load_sampled(p)) {
		fputs("\nsampled    ", out);
		print_rates(p, out);
		fputs(", estimates with 95 % intervals", out);
		if (p->nall_writes)
			fprintf(out, "\nall writes %zu of %zu sampled samples counted every page's writes: their writes are counts",
				p->nall_writes, p->nsampled);
		if (p->census_off)
			fprintf(out, "\ncensus     %s", p->census_off);
		else if (p->has_census)
			fprintf(out,
				"\ncensus     %" PRId64 " pages of the data total and %" PRId64
				" of the write total counted exactly, by their presence in memory",
				p->census_data, p->census_write);
	}
	if (wss_load_lower_bound(p)) {
		fputs("\ncounts     lower bounds: coarse blocks left touched pages uncounted", out);
		if (p->nlower)
			fprintf(out, " (in %zu of %zu samples)", p->nlower, p->nsamples);
	}
	if (p->has_cost && p->cost_program_ns > 0) {
		/* As the budget weighs them: the faults against the base that
		 * makes them the program's slowdown (program_ns), the engine
		 * thread's tick and changes against the intervals' wall time. */
		double prog = (double)p->cost_program_ns;
		double base = (double)(p->cost_base_ns > 0 ? p->cost_base_ns : p->cost_program_ns);
		fprintf(out, "\noverhead   %.1f %% of the program's time (faults %.1f %%, tick %.1f %%",
			100.0 * (((double)p->cost_faults_ns + (double)p->cost_code_ns) / prog +
				 ((double)p->cost_tick_ns + (double)p->cost_change_ns) / base),
			100.0 * (double)p->cost_faults_ns / prog, 100.0 * (double)p->cost_tick_ns / base);
		if (p->cost_change_ns)
			fprintf(out, ", changes of rate %.1f %%", 100.0 * (double)p->cost_change_ns / base);
		if (p->cost_code_ns)
			fprintf(out, ", code %.1f %%", 100.0 * (double)p->cost_code_ns / prog);
		fputc(')', out);
	}
	print_session(p, out);
	if (p->code_tracked) {
		fputs("\ncode       tracked (track.code)", out);
		if (p->code_lower_bound)
			fputs(", a lower bound in some samples (a range opened whole for want of VMAs)", out);
		for (size_t k = 0; k < p->code_nexcluded; k++)
			fprintf(out, "%s%s", k ? "\n             " : "; not tracked:\n             ", p->code_excluded[k]);
	} else if (p->code_off) {
		fprintf(out, "\ncode       not tracked: %s", p->code_off);
	}
	if (p->trace) {
		fprintf(out, "\ntrace      %s", p->trace);
		if (p->trace_records >= 0)
			fprintf(out, " (%" PRId64 " intervals, %" PRId64 " pages, %" PRId64 " bytes)", p->trace_records,
				p->trace_pages, p->trace_bytes);
		if (p->trace_stopped)
			fprintf(out, "; stopped after sample %" PRId64 ": %s", p->trace_last,
				!strcmp(p->trace_stopped, "trace_max") ? "session.trace_max reached" : p->trace_stopped);
		fputs("; wss heatmap, window, mrc, simulate and replay read it", out);
	}
	fputs("\ninterval   ", out);
	print_duration_ns(out, p->interval_ns);
	/* Ticks much later than asked (the stderr summary says it too:
	 * engine/output.c): the engine thread got no CPU in time. */
	int64_t late = 0, prev = 0;
	for (size_t k = 0; p->time_base && !strcmp(p->time_base, "wall") && k < p->nsamples; k++) {
		if (p->samples[k].final)
			break;
		if (p->samples[k].t_ns - prev > late)
			late = p->samples[k].t_ns - prev;
		prev = p->samples[k].t_ns;
	}
	if (p->interval_ns > 0 && late > 2 * p->interval_ns && late > p->interval_ns + 200000000) {
		fprintf(out, "; ticks came late: the longest interval lasted %" PRId64 " ms", late / 1000000);
		fputs(" (the engine thread got no CPU in time: a realtime program on its CPUs, or a loaded machine)", out);
	}
	fputs("\nwindow     ", out);
	print_duration_ns(out, p->window_ns);
	fprintf(out, " (%" PRId64 " interval%s)", p->window_intervals, p->window_intervals == 1 ? "" : "s");
	fprintf(out, "\ntime base  %s\nduration   ", p->time_base);
	if (p->duration_ns >= 0)
		print_seconds(out, p->duration_ns);
	else if (p->nsamples) {
		fputs("at least ", out);
		print_seconds(out, p->samples[p->nsamples - 1].t_ns);
		fputs(" (to the last sample)", out);
	} else
		fputs("unknown", out);
	fprintf(out, "\nsamples    %" PRId64 "\n", p->has_summary ? p->summary_samples : (int64_t)p->nsamples);
	if (p->kernel)
		fprintf(out, "kernel     %s\n", p->kernel);
	fprintf(out, "page size  %" PRId64 " bytes\n", p->page_size);
	if (p->tool)
		fprintf(out, "tool       %s\n", p->tool);
}

/* One estimate: "  avg    ≈ 12,340.5 pages ± 2.1 %  [12,081.0, 12,600.0]  48,205 kB";
 * tenths: value (and interval) in tenths of a page, else whole pages;
 * value < 0: unknown. */
static void print_estimate(FILE *out, const char *what, int64_t value, bool tenths, const wss_ci_t *ci, int64_t ps)
{
	char v[40], lo[40], hi[40], k[40];
	fprintf(out, "  %-6s ", what);
	if (value < 0) {
		fputs("? (only the summary has it)\n", out);
		return;
	}
	int scale = tenths ? 10 : 1;
	uint64_t t = (uint64_t)value * (tenths ? 1 : 10);
	fprintf(out, "≈ %s pages", tenths ? grouped_tenths(v, sizeof v, t) : grouped(v, sizeof v, (uint64_t)value));
	if (ci->present) {
		double est = (double)t / 10, half = fmax(est - ci->lo, ci->hi - est);
		if (est > 0)
			fprintf(out, " ± %.1f %%", 100.0 * half / est);
		int64_t l = round_down(ci->lo, scale), h = round_up(ci->hi, scale);
		if (tenths)
			fprintf(out, "  [%s, %s]", grouped_tenths(lo, sizeof lo, (uint64_t)l), grouped_tenths(hi, sizeof hi, (uint64_t)h));
		else
			fprintf(out, "  [%s, %s]", grouped(lo, sizeof lo, (uint64_t)l), grouped(hi, sizeof hi, (uint64_t)h));
	} else {
		fputs(" (no interval)", out);
	}
	fprintf(out, "  %s kB\n", grouped(k, sizeof k, wss_load_kb(t, ps)));
}

static void print_stat(FILE *out, const char *name, const wss_stat_t *st, int64_t ps, bool sampled, bool at_least)
{
	if (!st->present)
		return;
	if (sampled) {
		fprintf(out, "%s avg/peak/total, estimated with 95 %% intervals:\n", name);
		print_estimate(out, "avg", st->avg_tenths, true, &st->avg_ci, ps);
		print_estimate(out, "peak", st->peak, false, &st->peak_ci, ps);
		print_estimate(out, "total", st->total, false, &st->total_ci, ps);
		return;
	}
	fprintf(out, "%s avg/peak/total: %s%" PRId64 ".%" PRId64 "/%" PRId64 "/", name, at_least ? "at least " : "",
		st->avg_tenths / 10, st->avg_tenths % 10, st->peak);
	if (st->total >= 0)
		fprintf(out, "%" PRId64, st->total);
	else
		fputc('?', out);
	fprintf(out, " pages (%" PRIu64 "/%" PRIu64 "/", wss_load_kb((uint64_t)st->avg_tenths, ps), wss_load_kb((uint64_t)st->peak * 10, ps));
	if (st->total >= 0)
		fprintf(out, "%" PRIu64, wss_load_kb((uint64_t)st->total * 10, ps));
	else
		fputc('?', out);
	fputs(" kB)\n", out);
}

/* The larger half of ci around est, in percent of est ("" without one);
 * the interval itself, in pages, when that is above 100 % (a kind of a
 * few pages in a sample: the summary's precision line says why). */
static const char *pm_pct(char *buf, size_t n, double est, const wss_ci_t *ci)
{
	if (!ci->present)
		return "";
	double pm = est > 0 ? 100.0 * fmax(est - ci->lo, ci->hi - est) / est : INFINITY;
	if (pm > 100)
		snprintf(buf, n, "[%.0f, %.0f]", floor(ci->lo), ceil(ci->hi));
	else
		snprintf(buf, n, "\u00b1%.1f%%", pm);
	return buf;
}

/* "Data by kind": what the working set is made of, from the summary. */
static void print_kinds(const wss_profile_t *p, FILE *out, bool sampled)
{
	int order[WSS_KIND_N], n = wss_load_kinds_by_peak(p, order);
	if (!n)
		return;
	fprintf(out, "Data by kind%s    %12s %10s %10s %10s\n", sampled ? " (≈)" : "    ", "avg", "peak", "total",
		"peak kB");
	for (int i = 0; i < n; i++) {
		const wss_stat_t *st = &p->kinds[order[i]];
		char a[40], pk[40], t[40], k[40], pa[64], pp[64], pt[64];
		fprintf(out, "  %-18s %12s %10s %10s %10s", wss_kind_name(order[i]),
			grouped_tenths(a, sizeof a, (uint64_t)st->avg_tenths), grouped(pk, sizeof pk, (uint64_t)st->peak),
			st->total >= 0 ? grouped(t, sizeof t, (uint64_t)st->total) : "?",
			grouped(k, sizeof k, wss_load_kb((uint64_t)st->peak * 10, p->page_size)));
		if (sampled)
			fprintf(out, "  %s/%s/%s", pm_pct(pa, sizeof pa, (double)st->avg_tenths / 10, &st->avg_ci),
				pm_pct(pp, sizeof pp, (double)st->peak, &st->peak_ci),
				pm_pct(pt, sizeof pt, (double)st->total, &st->total_ci));
		fputc('\n', out);
	}
}

static void print_truncation(const wss_profile_t *p, FILE *out)
{
	if (!p->has_summary) {
		fputs("profile truncated (no summary): the program did not end normally, or the file was cut", out);
		if (p->cut_line)
			fprintf(out, "; its last line (%ld) was cut short and is ignored", p->cut_line);
		fputs("\n", out);
	} else if (p->cut_line)
		fprintf(out, "the last line (%ld) was cut short and is ignored\n", p->cut_line);
}

static void print_summary(const wss_profile_t *p, FILE *out)
{
	/* A lower bound is "at least" only when nothing was estimated: with
	 * estimates, the header's counts line says which samples it was. */
	bool sampled = wss_load_sampled(p), at_least = !sampled && wss_load_lower_bound(p);
	print_stat(out, "Data", &p->data, p->page_size, sampled, at_least);
	print_stat(out, "Read", &p->read, p->page_size, sampled, at_least);
	print_stat(out, "Write", &p->write, p->page_size, sampled, at_least);
	/* Code is exact whatever the data's rate. */
	print_stat(out, "Insn", &p->code, p->page_size, false, p->code_lower_bound);
	print_kinds(p, out, sampled);
	if (p->precision_note)
		fprintf(out, "%s\n", p->precision_note);
	if (!p->has_summary)
		fputs("(computed from the samples; the totals, distinct pages over the run, are only in a summary)\n",
		      out);
}

static void print_threads(const wss_profile_t *p, FILE *out)
{
	fprintf(out, "Threads (%zu)\n", p->nthreads);
	if (!p->nthreads)
		return;
	bool any_estimated = false;
	for (size_t k = 0; k < p->nthreads; k++)
		any_estimated |= p->threads[k].estimated;
	if (any_estimated)
		fputs("  (≈: estimated from sampled pages)\n", out);
	bool w = p->has_write, c = p->has_code;
	fprintf(out, "  %10s %8s %10s %8s", "tid", "samples", "data avg", "peak");
	if (w)
		fprintf(out, " %10s %8s", "write avg", "peak");
	if (c)
		fprintf(out, " %10s %8s", "insn avg", "peak");
	fprintf(out, " %12s %12s\n", "first faults", "cpu time");
	for (size_t k = 0; k < p->nthreads; k++) {
		const wss_load_thread_t *t = &p->threads[k];
		char tid[24];
		if (t->tid)
			snprintf(tid, sizeof tid, "%" PRId64, t->tid);
		else
			snprintf(tid, sizeof tid, "(unknown)");
		uint64_t avg = wss_load_avg_tenths(t->data_sum, t->samples);
		if (t->estimated) { /* "≈" is one column and three bytes */
			char a[32], pk[32];
			snprintf(a, sizeof a, "≈%" PRIu64 ".%" PRIu64, avg / 10, avg % 10);
			snprintf(pk, sizeof pk, "≈%" PRIu64, t->data_peak);
			fprintf(out, "  %10s %8" PRIu64 " %12s %10s", tid, t->samples, a, pk);
			if (w) {
				uint64_t wa = wss_load_avg_tenths(t->write_sum, t->samples);
				snprintf(a, sizeof a, "≈%" PRIu64 ".%" PRIu64, wa / 10, wa % 10);
				snprintf(pk, sizeof pk, "≈%" PRIu64, t->write_peak);
				fprintf(out, " %12s %10s", a, pk);
			}
		} else
			fprintf(out, "  %10s %8" PRIu64 " %8" PRIu64 ".%" PRIu64 " %8" PRIu64, tid, t->samples, avg / 10,
				avg % 10, t->data_peak);
		if (w && !t->estimated) {
			uint64_t wa = wss_load_avg_tenths(t->write_sum, t->samples);
			fprintf(out, " %8" PRIu64 ".%" PRIu64 " %8" PRIu64, wa / 10, wa % 10, t->write_peak);
		}
		if (c) {
			uint64_t ca = wss_load_avg_tenths(t->code_sum, t->samples);
			fprintf(out, " %8" PRIu64 ".%" PRIu64 " %8" PRIu64, ca / 10, ca % 10, t->code_peak);
		}
		fprintf(out, " %12" PRIu64 " ", t->faults);
		if (t->cpu_ns >= 0)
			fprintf(out, "%10.3f s\n", (double)t->cpu_ns / 1e9);
		else
			fprintf(out, "%12s\n", "-");
	}
}

/* Axis label of a sample: seconds, short; or, under the manual time base
 * (the program's ticks, whose time says little), its seq. */
static int axis_label(const wss_profile_t *p, char *buf, size_t n, const wss_sample_t *smp)
{
	if (p->time_base && !strcmp(p->time_base, "manual"))
		return snprintf(buf, n, "seq %" PRId64, smp->seq);
	double s = (double)smp->t_ns / 1e9;
	return snprintf(buf, n, s < 10 ? "%.2fs" : s < 100 ? "%.1fs" : "%.0fs", s);
}

/* A burst: peaks of any series in the same interval or in intervals one
 * after another (a sweep shows in data, write and its thread's series
 * alike, and may last a few intervals).  The burst number of peak i
 * (peaks in seq order), from 1. */
static size_t burst_of(const wss_profile_t *p, size_t i)
{
	size_t b = 1;
	for (size_t j = 1; j <= i && j < p->npeaks; j++)
		b += p->peaks[j].seq > p->peaks[j - 1].seq + 1;
	return b;
}

/* The end of the burst that starts at peak i. */
static size_t burst_end(const wss_profile_t *p, size_t i)
{
	size_t j = i + 1;
	while (j < p->npeaks && p->peaks[j].seq <= p->peaks[j - 1].seq + 1)
		j++;
	return j;
}

static char peak_mark(size_t number)
{
	return number <= 9 ? (char)('0' + number) : number <= 35 ? (char)('a' + number - 10) : '*';
}

/* The timeline of the data series (written pages apart where the backend
 * tells them), or with code of the code series. */
static void print_timeline(const wss_profile_t *p, FILE *out, bool code)
{
	size_t n = p->nsamples;
	enum { COLS = WSS_REPORT_COLUMNS, ROWS = WSS_REPORT_ROWS };
	if (!n) {
		fputs("Timeline: no samples\n", out);
		return;
	}
	size_t cols = n < COLS ? n : COLS;
	size_t first[COLS + 1];
	int64_t dmax[COLS], wmax[COLS], ymax = 0;
	bool split = !code && p->has_write && p->has_read;
	for (size_t c = 0; c <= cols; c++)
		first[c] = c * n / cols;
	for (size_t c = 0; c < cols; c++) {
		dmax[c] = wmax[c] = 0;
		for (size_t k = first[c]; k < first[c + 1]; k++) {
			int64_t v = code ? p->samples[k].code : p->samples[k].data;
			if (v > dmax[c])
				dmax[c] = v;
			if (p->samples[k].write > wmax[c])
				wmax[c] = p->samples[k].write;
		}
		if (dmax[c] > ymax)
			ymax = dmax[c];
	}
	size_t lo = n / cols, hi = (n + cols - 1) / cols;
	fputs(code ? "Timeline: code pages per sample (insn)" : "Timeline: data pages per sample", out);
	if (lo == 1 && hi == 1)
		fputs(" (a column per sample)\n", out);
	else if (lo == hi)
		fprintf(out, " (each column: the max of %zu samples)\n", lo);
	else
		fprintf(out, " (each column: the max of %zu or %zu samples)\n", lo, hi);
	if (split)
		fputs("  # written   : touched, not written\n", out);
	bool sampled = !code && wss_load_sampled(p);
	if (sampled)
		fputs("  estimates where sampled: ~ under the column\n", out);
	int64_t scale = ymax ? ymax : 1;
	for (int r = ROWS; r >= 1; r--) {
		char label[24] = "";
		if (r == ROWS || r == ROWS / 2)
			snprintf(label, sizeof label, "%" PRId64, (ymax * r + ROWS / 2) / ROWS);
		char row[COLS + 1];
		size_t len = 0;
		for (size_t c = 0; c < cols; c++) {
			/* A cell is filled when the value reaches half of it. */
			int64_t hd = (dmax[c] * ROWS * 2 + scale) / (2 * scale);
			int64_t hw = (wmax[c] * ROWS * 2 + scale) / (2 * scale);
			row[c] = r <= hd ? (split && r > hw ? ':' : '#') : ' ';
			if (row[c] != ' ')
				len = c + 1;
		}
		row[len] = '\0';
		fprintf(out, "%8s |%s\n", label, row);
	}
	char axis[COLS + 1];
	memset(axis, '-', cols);
	axis[cols] = '\0';
	fprintf(out, "%8s +%s\n", "0", axis);

	/* Seconds (or seqs) under the first, middle and last columns, where
	 * they fit. */
	char xl[COLS + 32];
	memset(xl, ' ', sizeof xl);
	char t0[32], t1[32], tm[32];
	int l0 = axis_label(p, t0, sizeof t0, &p->samples[0]);
	int l1 = axis_label(p, t1, sizeof t1, &p->samples[n - 1]);
	int lm = axis_label(p, tm, sizeof tm, &p->samples[first[cols / 2]]);
	size_t width = (size_t)l0;
	memcpy(xl, t0, (size_t)l0);
	if (cols >= (size_t)(l0 + l1 + 2)) {
		memcpy(xl + cols - (size_t)l1, t1, (size_t)l1);
		width = cols;
		size_t at = cols / 2 >= (size_t)lm / 2 ? cols / 2 - (size_t)lm / 2 : 0;
		if (at > (size_t)l0 + 1 && at + (size_t)lm + 1 < cols - (size_t)l1)
			memcpy(xl + at, tm, (size_t)lm);
	}
	xl[width] = '\0';
	fprintf(out, "%8s  %s\n", "", xl);

	if (sampled) {
		char est[COLS + 1];
		size_t elen = 0;
		for (size_t c = 0; c < cols; c++) {
			est[c] = ' ';
			for (size_t k = first[c]; k < first[c + 1]; k++)
				if (p->samples[k].rate > 1)
					est[c] = '~';
			if (est[c] != ' ')
				elen = c + 1;
		}
		est[elen] = '\0';
		fprintf(out, "%8s  %s\n", "sampled", est);
	}

	if (code || !p->npeaks)
		return;
	char marks[COLS + 1];
	memset(marks, ' ', cols);
	size_t len = 0;
	for (size_t i = p->npeaks; i-- > 0;) { /* the lower number wins a shared column */
		const wss_sample_t *s = wss_load_sample(p, p->peaks[i].seq);
		if (!s)
			continue;
		size_t k = (size_t)(s - p->samples), c = 0;
		while (c + 1 < cols && first[c + 1] <= k)
			c++;
		marks[c] = peak_mark(burst_of(p, i));
		if (c + 1 > len)
			len = c + 1;
	}
	marks[len] = '\0';
	fprintf(out, "%8s  %s\n", "peaks", marks);
}

/* "function (file:line)", "function+0x1c (module)", "module+0x1234", or the
 * bare address. */
static void print_frame(FILE *out, const wss_frame_t *f)
{
	if (f->function) {
		fputs(f->function, out);
		if (f->file)
			fprintf(out, " (%s:%d)", f->file, f->line);
		else {
			if (f->has_function_offset)
				fprintf(out, "+0x%" PRIx64, f->function_offset);
			if (f->module)
				fprintf(out, " (%s)", base_name(f->module->path));
		}
		if (f->inlined)
			fputs(" [inlined]", out);
	} else if (f->module)
		fprintf(out, "%s+0x%" PRIx64, base_name(f->module->path), f->offset);
	else
		fprintf(out, "0x%" PRIx64 " (no module)", f->addr);
	if (f->note)
		fprintf(out, " (%s)", f->note);
}

/* A peak's first-touch sites, with their stacks.  Returns 0 or ENOMEM. */
static int print_peak_sites(const wss_profile_t *p, wss_symbols_t *syms, const wss_peak_t *k, frames_t *fr, FILE *out)
{
	for (size_t j = 0; j < k->nsites; j++) {
		const wss_site_t *site = &k->sites[j];
		fprintf(out, "   %" PRId64 " page%s first touched at%s:\n", site->pages, site->pages == 1 ? "" : "s",
			site->stack < 0 ? " (no stack captured)" : "");
		int r = site_frames(p, syms, site, fr);
		if (r == ENOENT) {
			fprintf(out, "      (stack %" PRId64 " is not in the profile)\n", site->stack);
			continue;
		}
		if (r)
			return ENOMEM;
		for (size_t f = 0; f < fr->n; f++) {
			bool same = f > 0 && fr->f[f].addr == fr->f[f - 1].addr;
			if (same)
				fprintf(out, "      %18s  ", "");
			else
				fprintf(out, "      0x%016" PRIx64 "  ", fr->f[f].addr);
			print_frame(out, &fr->f[f]);
			fputc('\n', out);
		}
	}
	return 0;
}

/* One entry a burst: its first peak as it was detected, the other series
 * and intervals of the burst on one line, and the sites of each of its
 * intervals once (the sites of a peak are its interval's, whatever its
 * series). */
static int print_peaks(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	if (!p->npeaks) {
		fputs("Peaks: none in this profile\n", out);
		return 0;
	}
	size_t nb = burst_of(p, p->npeaks - 1);
	if (nb < p->npeaks)
		fprintf(out, "Peaks (%zu, in %zu burst%s: the series and intervals of one are listed together)\n", p->npeaks,
			nb, nb == 1 ? "" : "s");
	else
		fprintf(out, "Peaks (%zu)\n", p->npeaks);
	if (wss_load_sampled(p))
		fputs("(a sampled run: values are estimates, and the sites are those of the sampled pages)\n", out);
	frames_t fr = {NULL, 0, 0};
	for (size_t i = 0, b = 1; i < p->npeaks; b++) {
		size_t end = burst_end(p, i);
		const wss_peak_t *k = &p->peaks[i];
		const wss_sample_t *s = wss_load_sample(p, k->seq);
		char series[64];
		series_name(k->series, series, sizeof series);
		fprintf(out, "%c. seq %" PRId64, peak_mark(b), k->seq);
		if (s) {
			fputs(" at ", out);
			print_seconds(out, s->t_ns);
		}
		fprintf(out, ", %s: %" PRId64 " pages, mean %.1f, threshold %.1f", series, k->value, k->mean,
			k->threshold);
		if (k->mean > 0)
			fprintf(out, " (%.1fx the mean)", (double)k->value / k->mean);
		for (size_t j = i + 1; j < end; j++) {
			const wss_peak_t *o = &p->peaks[j];
			series_name(o->series, series, sizeof series);
			if (o->seq == k->seq)
				fprintf(out, "%s %s: %" PRId64, j == i + 1 ? "; also" : ",", series, o->value);
			else
				fprintf(out, "%s seq %" PRId64 " %s: %" PRId64, j == i + 1 ? "; then" : ",", o->seq, series,
					o->value);
		}
		fputc('\n', out);
		for (size_t j = i; j < end; j++) {
			if (j > i && p->peaks[j].seq == p->peaks[j - 1].seq)
				continue; /* that interval's sites are listed */
			if (j > i)
				fprintf(out, "   seq %" PRId64 ":\n", p->peaks[j].seq);
			if (print_peak_sites(p, syms, &p->peaks[j], &fr, out)) {
				free(fr.f);
				return ENOMEM;
			}
		}
		i = end;
	}
	free(fr.f);
	return 0;
}

/* An allocation site's frames: all return addresses (the stack was taken
 * inside the allocator wrapper, wss's own frames left out).  Returns 0,
 * ENOMEM, or ENOENT when its stack is not in the profile (or none was
 * captured: stack 0). */
static int alloc_frames(const wss_profile_t *p, wss_symbols_t *syms, int64_t stack, frames_t *out)
{
	const wss_stack_t *st = stack > 0 ? wss_load_stack(p, stack) : NULL;
	if (!st)
		return ENOENT;
	out->n = 0;
	for (size_t k = 0; k < st->n; k++)
		if (wss_sym_frames(syms, st->frames[k], true, &out->f, &out->n, &out->cap))
			return ENOMEM;
	return 0;
}

/* "N" for an exact figure, "≈ N [lo, hi]" for an estimate. */
static void print_alloc_figure(FILE *out, int64_t v, const wss_ci_t *ci)
{
	char a[32], b[32], c[32];
	if (!ci->present || (ci->hi - ci->lo <= 1 && ci->lo <= (double)v && (double)v <= ci->hi)) {
		fputs(grouped(a, sizeof a, (uint64_t)v), out);
		return;
	}
	fprintf(out, "≈ %s [%s, %s]", grouped(a, sizeof a, (uint64_t)v), grouped(b, sizeof b, (uint64_t)ci->lo),
		grouped(c, sizeof c, (uint64_t)ci->hi));
}

/* At most this many allocation sites in the text, and frames of each. */
#define REPORT_ALLOC_SITES 10
#define REPORT_ALLOC_FRAMES 6

static int print_alloc_sites(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	char a[32];
	size_t n = p->nalloc_sites < REPORT_ALLOC_SITES ? p->nalloc_sites : REPORT_ALLOC_SITES;
	fprintf(out, "Memory by allocation site (%zu of %zu, largest live first): pages live now (and at the peak), the\n",
		n, p->nalloc_sites);
	fprintf(out, "working set on average, idle now (untouched for %" PRId64 " interval%s); an allocation is\n",
		p->alloc_idle_after, p->alloc_idle_after == 1 ? "" : "s");
	fprintf(out, "sampled by its bytes (one sample per %s bytes allocated on average, at the end;\n",
		grouped(a, sizeof a, (uint64_t)p->alloc_mean));
	fputs("each stands for those it represents), and a page counts as touched when anything on it\n", out);
	fputs("was (objects sharing a page share its touches)\n", out);
	if (p->alloc_cut)
		fprintf(out, "(%" PRId64 " interval%s attributed only in part: too many pages to visit in one tick)\n",
			p->alloc_cut, p->alloc_cut == 1 ? "" : "s");
	if (p->alloc_dropped)
		fprintf(out, "(%" PRId64 " sampled allocation%s dropped: the table of live ones was full)\n", p->alloc_dropped,
			p->alloc_dropped == 1 ? "" : "s");
	frames_t fr = {NULL, 0, 0};
	for (size_t i = 0; i < n; i++) {
		const wss_alloc_site_t *x = &p->alloc_sites[i];
		fprintf(out, "%2zu. live ", i + 1);
		print_alloc_figure(out, x->live_pages, &x->live_ci);
		/* The peak is an estimate too when the site's allocations were
		 * sampled (its interval is not in the record). */
		fprintf(out, " (%s%s at the peak); working set ", x->sampled < x->allocs ? "≈ " : "",
			grouped(a, sizeof a, (uint64_t)x->peak_live_pages));
		print_alloc_figure(out, x->ws_pages, &x->ws_ci);
		fputs("; idle ", out);
		print_alloc_figure(out, x->idle_pages, &x->idle_ci);
		fprintf(out, "; %s allocation%s%s\n", grouped(a, sizeof a, (uint64_t)x->allocs), x->allocs == 1 ? "" : "s",
			x->sampled < x->allocs ? " (estimated)" : "");
		int r = alloc_frames(p, syms, x->stack, &fr);
		if (r == ENOENT) {
			fputs("      (no stack)\n", out);
			continue;
		}
		if (r) {
			free(fr.f);
			return ENOMEM;
		}
		for (size_t f = 0; f < fr.n && f < REPORT_ALLOC_FRAMES; f++) {
			fputs("      ", out);
			print_frame(out, &fr.f[f]);
			fputc('\n', out);
		}
		if (fr.n > REPORT_ALLOC_FRAMES)
			fprintf(out, "      (%zu more frames: wss report --json)\n", fr.n - REPORT_ALLOC_FRAMES);
	}
	free(fr.f);
	return 0;
}

/* The whole run's first-touch sites, at most this many in the text. */
#define REPORT_SITES 10

/* A source location of the text's site list: the sites (instructions)
 * whose line reads the same, summed. */
typedef struct {
	char *text;
	int64_t pages;
} site_line_t;

static int by_pages_desc(const void *a, const void *b)
{
	const site_line_t *x = a, *y = b;
	return x->pages < y->pages ? 1 : x->pages > y->pages ? -1 : strcmp(x->text, y->text);
}

static int print_run_sites(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	int64_t all = p->sites_other;
	for (size_t k = 0; k < p->nsites; k++)
		all += p->sites[k].pages;
	/* Each site as its line reads: the touching statement (innermost,
	 * inlined or not) and, inlined, where (else one function inlined in
	 * two places reads as two identical lines); instructions of one
	 * statement (an unrolled loop's) are one line, their pages summed. */
	site_line_t *v = calloc(p->nsites ? p->nsites : 1, sizeof *v);
	if (!v)
		return ENOMEM;
	size_t nv = 0;
	int r = 0;
	frames_t fr = {NULL, 0, 0};
	for (size_t k = 0; k < p->nsites && !r; k++) {
		fr.n = 0;
		char *text = NULL;
		size_t len = 0;
		FILE *m = NULL;
		if (wss_sym_frames(syms, p->sites[k].pc, false, &fr.f, &fr.n, &fr.cap) ||
		    !(m = open_memstream(&text, &len))) {
			r = ENOMEM;
			break;
		}
		print_frame(m, &fr.f[0]);
		if (fr.f[0].inlined && fr.n > 1) {
			fputs(" in ", m);
			print_frame(m, &fr.f[1]);
		}
		if (fclose(m) || !text) {
			free(text);
			r = ENOMEM;
			break;
		}
		size_t j = 0;
		while (j < nv && strcmp(v[j].text, text))
			j++;
		if (j < nv) {
			free(text);
		} else {
			v[nv].text = text;
			nv++;
		}
		v[j].pages += p->sites[k].pages;
	}
	free(fr.f);
	if (!r) {
		qsort(v, nv, sizeof *v, by_pages_desc);
		fprintf(out, "First touches by site, whole run (%zu site%s, %" PRId64 " first touches)\n", p->nsites,
			p->nsites == 1 ? "" : "s", all);
		if (wss_load_sampled(p))
			fputs("(a sampled run: first touches of the sampled pages)\n", out);
		for (size_t j = 0; j < nv && j < REPORT_SITES; j++)
			fprintf(out, "  %10" PRId64 "  %5.1f %%  %s\n", v[j].pages,
				all ? 100.0 * (double)v[j].pages / (double)all : 0.0, v[j].text);
		if (nv > REPORT_SITES)
			fprintf(out, "  (%zu more source lines: wss report --json lists every site)\n", nv - REPORT_SITES);
	}
	for (size_t j = 0; j < nv; j++)
		free(v[j].text);
	free(v);
	return r;
}

static int print_hot(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	if (!p->nhot)
		return 0;
	fprintf(out, "Hot pages (%zu): page, intervals touched, memory, first touched at\n", p->nhot);
	if (wss_load_sampled(p))
		fputs("(a sampled run: these are the hottest of the sampled pages)\n", out);
	frames_t fr = {NULL, 0, 0};
	for (size_t k = 0; k < p->nhot; k++) {
		const wss_hot_t *h = &p->hot[k];
		fprintf(out, "  0x%016" PRIx64 " %8" PRId64 "  %-16s ", h->addr, h->intervals, h->mapping);
		const wss_stack_t *st = h->stack >= 0 ? wss_load_stack(p, h->stack) : NULL;
		if (h->stack < 0)
			fputs("-", out);
		else if (!st || !st->n)
			fprintf(out, "(stack %" PRId64 " is not in the profile)", h->stack);
		else {
			fr.n = 0;
			if (wss_sym_frames(syms, st->frames[0], false, &fr.f, &fr.n, &fr.cap)) {
				free(fr.f);
				return ENOMEM;
			}
			print_frame(out, &fr.f[0]);
		}
		if (h->gone_seq >= 0)
			fprintf(out, "  (left tracking in interval %" PRId64 ")", h->gone_seq);
		fputc('\n', out);
	}
	free(fr.f);
	return 0;
}

/* track.code's hot pages: each page's object, and the function at its
 * start (from the modules' debug information). */
static int print_hot_code(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	fprintf(out, "Hot code pages (%zu): page, intervals run, object, function at the page's start\n", p->nhot_code);
	frames_t fr = {NULL, 0, 0};
	for (size_t k = 0; k < p->nhot_code; k++) {
		const wss_hot_t *h = &p->hot_code[k];
		const char *obj = strncmp(h->mapping, "code:", 5) ? h->mapping : h->mapping + 5;
		fprintf(out, "  0x%016" PRIx64 " %8" PRId64 "  %-16s ", h->addr, h->intervals, base_name(obj));
		fr.n = 0;
		if (wss_sym_frames(syms, h->addr, false, &fr.f, &fr.n, &fr.cap)) {
			free(fr.f);
			return ENOMEM;
		}
		if (fr.n)
			print_frame(out, &fr.f[0]); /* the module and offset when no name covers it */
		else
			fputc('-', out);
		fputc('\n', out);
	}
	free(fr.f);
	return 0;
}

int wss_report_text(wss_profile_t *p, FILE *out)
{
	sort_peaks(p);
	wss_symbols_t *syms = wss_sym_open(p);
	if (!syms)
		return ENOMEM;
	fprintf(out, "wss report: %s\n", p->path);
	print_truncation(p, out);
	fputc('\n', out);
	print_header(p, out);
	fputc('\n', out);
	print_summary(p, out);
	fputc('\n', out);
	if (wss_session_wanted(p)) {
		wss_session_t s;
		if (wss_session_build(p, &s)) {
			wss_sym_close(syms);
			return ENOMEM;
		}
		wss_session_text(&s, out, "");
		wss_session_release(&s);
		fputc('\n', out);
	}
	print_threads(p, out);
	fputc('\n', out);
	print_timeline(p, out, false);
	fputc('\n', out);
	if (p->has_code) {
		print_timeline(p, out, true);
		fputc('\n', out);
	}
	int r = print_peaks(p, syms, out);
	if (!r && p->has_sites) {
		fputc('\n', out);
		r = print_run_sites(p, syms, out);
	}
	if (!r && p->nalloc_sites) {
		fputc('\n', out);
		r = print_alloc_sites(p, syms, out);
	}
	if (!r && p->nhot_code) {
		fputc('\n', out);
		r = print_hot_code(p, syms, out);
	}
	if (!r && p->nhot) {
		fputc('\n', out);
		r = print_hot(p, syms, out);
	}
	wss_sym_close(syms);
	if (!r && (fflush(out) || ferror(out)))
		r = EIO;
	return r;
}

/* ---- JSON ---- */

static void json_header(const wss_profile_t *p, wss_jw_t *w)
{
	wss_jw_open(w, "header", '{');
	wss_jw_str(w, "exe", p->exe);
	wss_jw_open(w, "argv", '[');
	for (size_t k = 0; k < p->argc; k++)
		wss_jw_str(w, NULL, p->argv[k]);
	wss_jw_close(w, ']');
	wss_jw_int(w, "pid", p->pid);
	wss_jw_int_or_null(w, "ppid", p->ppid);
	wss_jw_str(w, "tool", p->tool);
	wss_jw_str(w, "backend", p->backend);
	wss_jw_str(w, "backend_reason", p->backend_reason);
	wss_jw_str(w, "backend_sees", p->backend_sees);
	if (p->code_tracked || p->code_off) {
		wss_jw_open(w, "code", '{');
		wss_jw_bool(w, "tracked", p->code_tracked);
		if (p->code_off)
			wss_jw_str(w, "why", p->code_off);
		wss_jw_open(w, "excluded", '[');
		for (size_t k = 0; k < p->code_nexcluded; k++)
			wss_jw_str(w, NULL, p->code_excluded[k]);
		wss_jw_close(w, ']');
		wss_jw_close(w, '}');
	}
	wss_jw_int(w, "interval_ns", p->interval_ns);
	wss_jw_int(w, "window_ns", p->window_ns);
	wss_jw_int(w, "window_intervals", p->window_intervals);
	wss_jw_str(w, "time_base", p->time_base);
	wss_jw_str(w, "kernel", p->kernel);
	wss_jw_int(w, "page_size", p->page_size);
	wss_jw_close(w, '}');
}

static void json_stat(wss_jw_t *w, const char *key, const wss_stat_t *st, int64_t ps, bool sampled)
{
	if (!st->present)
		return;
	wss_jw_open(w, key, '{');
	wss_jw_tenths(w, "avg", st->avg_tenths);
	wss_jw_int(w, "peak", st->peak);
	wss_jw_int_or_null(w, "total", st->total);
	wss_jw_int(w, "avg_kb", (int64_t)wss_load_kb((uint64_t)st->avg_tenths, ps));
	wss_jw_int(w, "peak_kb", (int64_t)wss_load_kb((uint64_t)st->peak * 10, ps));
	wss_jw_int_or_null(w, "total_kb", st->total < 0 ? -1 : (int64_t)wss_load_kb((uint64_t)st->total * 10, ps));
	if (sampled) {
		wss_jw_bool(w, "estimated", true);
		wss_jw_ci(w, "avg_ci", &st->avg_ci);
		wss_jw_ci(w, "peak_ci", &st->peak_ci);
		wss_jw_ci(w, "total_ci", &st->total_ci);
		wss_jw_pm(w, "avg_pm_pct", (double)st->avg_tenths / 10, &st->avg_ci);
		wss_jw_pm(w, "peak_pm_pct", (double)st->peak, &st->peak_ci);
		if (st->total >= 0)
			wss_jw_pm(w, "total_pm_pct", (double)st->total, &st->total_ci);
	}
	wss_jw_close(w, '}');
}

static void json_frame(wss_jw_t *w, const char *key, const wss_frame_t *f)
{
	wss_jw_open(w, key, '{');
	wss_jw_hex(w, "addr", f->addr);
	wss_jw_str(w, "function", f->function);
	wss_jw_key(w, "function_offset");
	if (f->has_function_offset)
		wss_fmt_u64(&w->f, f->function_offset);
	else
		wss_fmt_str(&w->f, "null");
	wss_jw_str(w, "file", f->file);
	wss_jw_int_or_null(w, "line", f->file ? f->line : -1);
	wss_jw_bool(w, "inlined", f->inlined);
	wss_jw_str(w, "module", f->module ? f->module->path : NULL);
	wss_jw_key(w, "offset");
	if (f->module)
		wss_fmt_u64(&w->f, f->offset);
	else
		wss_fmt_str(&w->f, "null");
	wss_jw_str(w, "note", f->note);
	wss_jw_close(w, '}');
}

/* "frames": the frames fr got (r 0), or null when the stack is not in the
 * profile (r ENOENT).  Returns ENOMEM for any other r. */
static int json_frames(wss_jw_t *w, int r, const frames_t *fr)
{
	if (r == ENOENT) {
		wss_jw_str(w, "frames", NULL);
		return 0;
	}
	if (r)
		return ENOMEM;
	wss_jw_open(w, "frames", '[');
	for (size_t f = 0; f < fr->n; f++)
		json_frame(w, NULL, &fr->f[f]);
	wss_jw_close(w, ']');
	return 0;
}

/* {"pc", "stack", "pages", "frames": [FRAME...] or null when its stack is
 * not in the profile}.  Returns 0 or ENOMEM. */
static int json_site(const wss_profile_t *p, wss_symbols_t *syms, const wss_site_t *site, frames_t *fr, wss_jw_t *w)
{
	wss_jw_open(w, NULL, '{');
	wss_jw_hex(w, "pc", site->pc);
	wss_jw_int_or_null(w, "stack", site->stack);
	wss_jw_int(w, "pages", site->pages);
	if (json_frames(w, site_frames(p, syms, site, fr), fr))
		return ENOMEM;
	wss_jw_close(w, '}');
	return 0;
}

static int json_peaks(const wss_profile_t *p, wss_symbols_t *syms, wss_jw_t *w)
{
	frames_t fr = {NULL, 0, 0};
	wss_jw_open(w, "peaks", '[');
	for (size_t i = 0; i < p->npeaks; i++) {
		const wss_peak_t *k = &p->peaks[i];
		const wss_sample_t *s = wss_load_sample(p, k->seq);
		wss_jw_open(w, NULL, '{');
		wss_jw_int(w, "number", (int64_t)i + 1);
		wss_jw_int(w, "seq", k->seq);
		wss_jw_int_or_null(w, "t_ns", s ? s->t_ns : -1);
		wss_jw_str(w, "series", k->series);
		wss_jw_int(w, "value", k->value);
		wss_jw_num(w, "mean", k->mean);
		wss_jw_num(w, "threshold", k->threshold);
		wss_jw_open(w, "sites", '[');
		for (size_t j = 0; j < k->nsites; j++) {
			if (json_site(p, syms, &k->sites[j], &fr, w)) {
				free(fr.f);
				return ENOMEM;
			}
		}
		wss_jw_close(w, ']');
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, ']');
	free(fr.f);
	return 0;
}

/* "sites": {"sites": [{"pc", "stack", "pages", "frames"}], "other_pages"}. */
static int json_run_sites(const wss_profile_t *p, wss_symbols_t *syms, wss_jw_t *w)
{
	frames_t fr = {NULL, 0, 0};
	wss_jw_open(w, "sites", '{');
	wss_jw_open(w, "sites", '[');
	for (size_t k = 0; k < p->nsites; k++) {
		if (json_site(p, syms, &p->sites[k], &fr, w)) {
			free(fr.f);
			return ENOMEM;
		}
	}
	wss_jw_close(w, ']');
	wss_jw_int(w, "other_pages", p->sites_other);
	wss_jw_close(w, '}');
	free(fr.f);
	return 0;
}

/* "alloc_sampling": {...}, "alloc_sites": [{"stack", "frames", the
 * figures and their intervals}]. */
static int json_alloc_sites(const wss_profile_t *p, wss_symbols_t *syms, wss_jw_t *w)
{
	frames_t fr = {NULL, 0, 0};
	wss_jw_open(w, "alloc_sampling", '{');
	wss_jw_int(w, "mean_bytes", p->alloc_mean);
	wss_jw_int(w, "idle_after_intervals", p->alloc_idle_after);
	wss_jw_int(w, "intervals", p->alloc_intervals);
	wss_jw_int(w, "cut_intervals", p->alloc_cut);
	wss_jw_int(w, "dropped", p->alloc_dropped);
	wss_jw_close(w, '}');
	wss_jw_open(w, "alloc_sites", '[');
	for (size_t i = 0; i < p->nalloc_sites; i++) {
		const wss_alloc_site_t *x = &p->alloc_sites[i];
		wss_jw_open(w, NULL, '{');
		wss_jw_int_or_null(w, "stack", x->stack > 0 ? x->stack : -1);
		if (json_frames(w, alloc_frames(p, syms, x->stack, &fr), &fr)) {
			free(fr.f);
			return ENOMEM;
		}
		wss_jw_int(w, "sampled", x->sampled);
		wss_jw_int(w, "allocs", x->allocs);
		wss_jw_int(w, "live_bytes", x->live_bytes);
		wss_jw_int(w, "freed_bytes", x->freed_bytes);
		wss_jw_int(w, "live_pages", x->live_pages);
		wss_jw_ci(w, "live_ci", &x->live_ci);
		wss_jw_int(w, "peak_live_pages", x->peak_live_pages);
		wss_jw_int(w, "ws_pages", x->ws_pages);
		wss_jw_ci(w, "ws_ci", &x->ws_ci);
		wss_jw_int(w, "idle_pages", x->idle_pages);
		wss_jw_ci(w, "idle_ci", &x->idle_ci);
		wss_jw_int(w, "touched_pages", x->touched_pages);
		wss_jw_ci(w, "touched_ci", &x->touched_ci);
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, ']');
	free(fr.f);
	return 0;
}

static int json_hot(const wss_profile_t *p, wss_symbols_t *syms, wss_jw_t *w)
{
	frames_t fr = {NULL, 0, 0};
	wss_jw_open(w, "hot_pages", '[');
	for (size_t k = 0; k < p->nhot; k++) {
		const wss_hot_t *h = &p->hot[k];
		wss_jw_open(w, NULL, '{');
		wss_jw_hex(w, "addr", h->addr);
		wss_jw_int(w, "intervals", h->intervals);
		wss_jw_str(w, "mapping", h->mapping);
		wss_jw_int_or_null(w, "stack", h->stack);
		wss_jw_int_or_null(w, "gone", h->gone_seq);
		const wss_stack_t *st = h->stack >= 0 ? wss_load_stack(p, h->stack) : NULL;
		if (!st || !st->n)
			wss_jw_str(w, "site", NULL);
		else {
			fr.n = 0;
			if (wss_sym_frames(syms, st->frames[0], false, &fr.f, &fr.n, &fr.cap)) {
				free(fr.f);
				return ENOMEM;
			}
			json_frame(w, "site", &fr.f[0]);
		}
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, ']');
	if (p->nhot_code) {
		wss_jw_open(w, "hot_code", '[');
		for (size_t k = 0; k < p->nhot_code; k++) {
			const wss_hot_t *h = &p->hot_code[k];
			wss_jw_open(w, NULL, '{');
			wss_jw_hex(w, "addr", h->addr);
			wss_jw_int(w, "intervals", h->intervals);
			wss_jw_str(w, "mapping", h->mapping);
			fr.n = 0;
			if (wss_sym_frames(syms, h->addr, false, &fr.f, &fr.n, &fr.cap)) {
				free(fr.f);
				return ENOMEM;
			}
			if (fr.n)
				json_frame(w, "function", &fr.f[0]);
			else
				wss_jw_str(w, "function", NULL);
			wss_jw_close(w, '}');
		}
		wss_jw_close(w, ']');
	}
	free(fr.f);
	return 0;
}

/* The session's table (cli/session.c), for the first profile of a
 * session of several. */
static int json_session(wss_profile_t *p, wss_jw_t *w)
{
	if (!wss_session_wanted(p))
		return 0;
	wss_session_t s;
	if (wss_session_build(p, &s))
		return ENOMEM;
	wss_jw_open(w, "session", '{');
	wss_jw_int(w, "processes", (int64_t)s.processes);
	wss_jw_int(w, "processes_with_profile", (int64_t)s.with);
	wss_jw_int(w, "processes_without", (int64_t)s.without);
	wss_jw_int(w, "profiles", (int64_t)s.profiles);
	wss_jw_int(w, "unreadable", (int64_t)s.unreadable);
	wss_jw_int(w, "no_summary", (int64_t)s.no_summary);
	wss_jw_int(w, "total_pages", (int64_t)s.total);
	wss_jw_int(w, "shared_pages", (int64_t)s.shared);
	if (s.estimated) {
		wss_ci_t t = {true, (double)s.total_lo, (double)s.total_hi}, sh = {true, (double)s.shared_lo, (double)s.shared_hi};
		wss_jw_bool(w, "estimated", true);
		wss_jw_ci(w, "total_ci", &t);
		wss_jw_ci(w, "shared_ci", &sh);
	}
	wss_jw_int(w, "page_size", s.page_size);
	wss_jw_open(w, "top", '[');
	for (size_t k = 0; k < s.nrows && k < WSS_SESSION_TOP; k++) {
		const wss_session_row_t *r = &s.rows[k];
		wss_jw_open(w, NULL, '{');
		wss_jw_int(w, "pid", r->pid);
		wss_jw_str(w, "program", r->program);
		wss_jw_str(w, "profile", r->path);
		wss_jw_int(w, "data_peak", r->data.peak);
		wss_jw_int_or_null(w, "data_total", r->data.total);
		wss_jw_int_or_null(w, "shared_total", r->shared);
		if (r->sampled) {
			wss_jw_bool(w, "estimated", true);
			wss_jw_ci(w, "peak_ci", &r->data.peak_ci);
			wss_jw_ci(w, "total_ci", &r->data.total_ci);
		}
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, ']');
	wss_jw_close(w, '}');
	wss_session_release(&s);
	return 0;
}

int wss_report_json(wss_profile_t *p, FILE *out)
{
	sort_peaks(p);
	wss_jw_t w;
	if (wss_jw_init(&w, 1 << 16))
		return ENOMEM;
	wss_symbols_t *syms = wss_sym_open(p);
	if (!syms) {
		wss_fmt_release(&w.f);
		return ENOMEM;
	}
	wss_jw_open(&w, NULL, '{');
	wss_jw_str(&w, "profile", p->path);
	wss_jw_bool(&w, "truncated", !p->has_summary);
	wss_jw_int_or_null(&w, "cut_line", p->cut_line ? p->cut_line : -1);
	json_header(p, &w);
	wss_jw_int_or_null(&w, "duration_ns", p->duration_ns);
	wss_jw_int(&w, "samples", p->has_summary ? p->summary_samples : (int64_t)p->nsamples);
	/* Sampled tracking's members appear only in profiles that have it, so
	 * an exact profile's document is unchanged. */
	bool sampled = wss_load_sampled(p);
	if (sampled) {
		wss_jw_open(&w, "sampling", '{');
		int64_t hi = p->rate_max > p->summary_rate_max ? p->rate_max : p->summary_rate_max;
		wss_jw_int(&w, "rate_min", p->rate_min ? p->rate_min : hi);
		wss_jw_int(&w, "rate_max", hi);
		wss_jw_int(&w, "sampled_samples", (int64_t)p->nsampled);
		wss_jw_int(&w, "exact_samples", (int64_t)(p->nsamples - p->nsampled));
		wss_jw_int(&w, "all_writes_samples", (int64_t)p->nall_writes);
		if (p->has_precision) {
			wss_jw_open(&w, "precision", '{');
			if (p->precision_target_pct >= 0)
				wss_jw_num(&w, "target_pct", p->precision_target_pct);
			wss_jw_int(&w, "intervals", p->precision_intervals);
			wss_jw_int(&w, "missed", p->precision_missed);
			if (p->precision_median_pct >= 0)
				wss_jw_num(&w, "median_pct", p->precision_median_pct);
			wss_jw_close(&w, '}');
		}
		if (p->precision_note)
			wss_jw_str(&w, "precision_note", p->precision_note);
		if (p->has_census) {
			wss_jw_open(&w, "census", '{');
			if (p->census_off)
				wss_jw_str(&w, "off", p->census_off);
			else {
				wss_jw_int(&w, "data", p->census_data);
				wss_jw_int(&w, "write", p->census_write);
			}
			wss_jw_close(&w, '}');
		}
		wss_jw_close(&w, '}');
	}
	if (wss_load_lower_bound(p))
		wss_jw_bool(&w, "lower_bound", true);
	if (p->has_cost) {
		wss_jw_open(&w, "cost", '{');
		wss_jw_int(&w, "faults_ns", p->cost_faults_ns);
		wss_jw_int(&w, "tick_ns", p->cost_tick_ns);
		wss_jw_int(&w, "change_ns", p->cost_change_ns);
		if (p->has_code)
			wss_jw_int(&w, "code_ns", p->cost_code_ns);
		wss_jw_int(&w, "program_ns", p->cost_program_ns);
		wss_jw_int(&w, "base_ns", p->cost_base_ns > 0 ? p->cost_base_ns : p->cost_program_ns);
		wss_jw_close(&w, '}');
	}
	if (p->trace) {
		wss_jw_open(&w, "trace", '{');
		wss_jw_str(&w, "file", p->trace);
		wss_jw_int_or_null(&w, "records", p->trace_records);
		wss_jw_int_or_null(&w, "pages", p->trace_pages);
		wss_jw_int_or_null(&w, "bytes", p->trace_bytes);
		wss_jw_int_or_null(&w, "last", p->trace_last);
		wss_jw_str(&w, "stopped", p->trace_stopped);
		wss_jw_close(&w, '}');
	}
	wss_jw_open(&w, "summary", '{');
	wss_jw_str(&w, "from", p->has_summary ? "summary" : "samples");
	json_stat(&w, "data", &p->data, p->page_size, sampled);
	json_stat(&w, "read", &p->read, p->page_size, sampled);
	json_stat(&w, "write", &p->write, p->page_size, sampled);
	json_stat(&w, "code", &p->code, p->page_size, false);
	int order[WSS_KIND_N], nk = wss_load_kinds_by_peak(p, order);
	if (nk) {
		/* Largest peak first, as the text says them. */
		wss_jw_open(&w, "kinds", '{');
		for (int i = 0; i < nk; i++)
			json_stat(&w, wss_kind_name(order[i]), &p->kinds[order[i]], p->page_size, sampled);
		wss_jw_close(&w, '}');
	}
	wss_jw_close(&w, '}');
	if (json_session(p, &w)) {
		wss_sym_close(syms);
		wss_fmt_release(&w.f);
		return ENOMEM;
	}

	wss_jw_open(&w, "threads", '[');
	for (size_t k = 0; k < p->nthreads; k++) {
		const wss_load_thread_t *t = &p->threads[k];
		wss_jw_open(&w, NULL, '{');
		wss_jw_int(&w, "tid", t->tid);
		wss_jw_int(&w, "samples", (int64_t)t->samples);
		wss_jw_tenths(&w, "data_avg", (int64_t)wss_load_avg_tenths(t->data_sum, t->samples));
		wss_jw_int(&w, "data_peak", (int64_t)t->data_peak);
		if (t->has_write) {
			wss_jw_tenths(&w, "write_avg", (int64_t)wss_load_avg_tenths(t->write_sum, t->samples));
			wss_jw_int(&w, "write_peak", (int64_t)t->write_peak);
		}
		if (p->has_code) {
			wss_jw_tenths(&w, "code_avg", (int64_t)wss_load_avg_tenths(t->code_sum, t->samples));
			wss_jw_int(&w, "code_peak", (int64_t)t->code_peak);
		}
		wss_jw_int(&w, "faults", (int64_t)t->faults);
		wss_jw_int_or_null(&w, "cpu_ns", t->cpu_ns);
		if (t->estimated)
			wss_jw_bool(&w, "estimated", true);
		wss_jw_close(&w, '}');
	}
	wss_jw_close(&w, ']');

	wss_jw_open(&w, "timeline", '[');
	for (size_t k = 0; k < p->nsamples; k++) {
		const wss_sample_t *s = &p->samples[k];
		wss_jw_open(&w, NULL, '{');
		wss_jw_int(&w, "seq", s->seq);
		wss_jw_int(&w, "t_ns", s->t_ns);
		wss_jw_int(&w, "data", s->data);
		if (s->read >= 0)
			wss_jw_int(&w, "read", s->read);
		if (s->write >= 0)
			wss_jw_int(&w, "write", s->write);
		if (s->code >= 0)
			wss_jw_int(&w, "code", s->code);
		if (s->rate > 1) {
			wss_jw_int(&w, "rate", s->rate);
			static const char *const ci_keys[WSS_SERIES_N] = {"data_ci", "read_ci", "write_ci"};
			for (int c = 0; c < WSS_SERIES_N; c++)
				wss_jw_ci(&w, ci_keys[c], &s->ci[c]);
		}
		if (s->lower_bound)
			wss_jw_bool(&w, "lower_bound", true);
		wss_jw_close(&w, '}');
	}
	wss_jw_close(&w, ']');

	int r = json_peaks(p, syms, &w);
	if (!r && p->has_sites)
		r = json_run_sites(p, syms, &w);
	if (!r && p->has_alloc_sites)
		r = json_alloc_sites(p, syms, &w);
	if (!r)
		r = json_hot(p, syms, &w);
	wss_jw_close(&w, '}');
	wss_fmt_ch(&w.f, '\n');
	wss_sym_close(syms);
	if (!r && w.f.overflow)
		r = ENOMEM;
	if (!r) {
		fwrite(w.f.buf, 1, w.f.len, out);
		if (fflush(out) || ferror(out))
			r = EIO;
	}
	wss_fmt_release(&w.f);
	return r;
}
