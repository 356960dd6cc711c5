/* `wss report` (report.h): header facts, the avg/peak/total summary in the
 * valgrind-ws paper's style, per-thread totals, a timeline chart with the
 * peaks marked, each peak's first-touch sites as symbolised stacks, and the
 * hot pages.  The text and the JSON forms are built from the same loaded
 * profile and the same frames, so their numbers agree.  A sampled run's
 * estimates are marked as such everywhere they appear (≈, with their 95 %
 * intervals where there is room); an exact profile's report is what it was
 * before sampling existed, byte for byte. */
#include "config.h"
#include "cli/out/report.h"
#include "cli/out/report_internal.h"
#include "cli/out/diagnosis.h"
#include "cli/model/session.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/symbols.h"
#include "cli/out/text.h"
#include "common/fmt.h"

/* ---- shared pieces ---- */



/* The frames of one stack: frames[0] is the faulting instruction, the
 * others return addresses.  Returns 0 or ENOMEM. */
static int stack_frames(wss_symbols_t *syms, const wss_stack_t *st, wss_report_frames_t *out)
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
int wss_report_site_frames(const wss_profile_t *p, wss_symbols_t *syms, const wss_site_t *site, wss_report_frames_t *out)
{
	if (site->stack < 0) {
		out->n = 0;
		return wss_sym_frames(syms, site->pc, false, &out->f, &out->n, &out->cap);
	}
	const wss_stack_t *st = wss_load_stack(p, site->stack);
	return st ? stack_frames(syms, st, out) : ENOENT;
}

const char *wss_report_base_name(const char *path)
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
			wss_load_overhead_pct(p), 100.0 * (double)p->cost_faults_ns / prog,
			100.0 * (double)p->cost_tick_ns / base);
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
	bool counted = wss_ci_counted(ci, (double)t / 10);
	fprintf(out, "%s%s pages", counted ? "" : "≈ ",
		tenths ? grouped_tenths(v, sizeof v, t) : grouped(v, sizeof v, (uint64_t)value));
	if (counted) {
		fputs(" (counted)", out);
	} else if (ci->present) {
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
void wss_report_print_frame(FILE *out, const wss_frame_t *f)
{
	if (f->function) {
		fputs(f->function, out);
		if (f->file)
			fprintf(out, " (%s:%d)", f->file, f->line);
		else {
			if (f->has_function_offset)
				fprintf(out, "+0x%" PRIx64, f->function_offset);
			if (f->module)
				fprintf(out, " (%s)", wss_report_base_name(f->module->path));
		}
		if (f->inlined)
			fputs(" [inlined]", out);
	} else if (f->module)
		fprintf(out, "%s+0x%" PRIx64, wss_report_base_name(f->module->path), f->offset);
	else
		fprintf(out, "0x%" PRIx64 " (no module)", f->addr);
	if (f->note)
		fprintf(out, " (%s)", f->note);
}

/* A peak's first-touch sites, with their stacks.  Returns 0 or ENOMEM. */
static int print_peak_sites(const wss_profile_t *p, wss_symbols_t *syms, const wss_peak_t *k, wss_report_frames_t *fr,
			    bool raw, FILE *out)
{
	for (size_t j = 0; j < k->nsites; j++) {
		const wss_site_t *site = &k->sites[j];
		fprintf(out, "   %" PRId64 " page%s first touched at%s:\n", site->pages, site->pages == 1 ? "" : "s",
			site->stack < 0 ? " (no stack captured)" : "");
		int r = wss_report_site_frames(p, syms, site, fr);
		if (r == ENOENT) {
			fprintf(out, "      (stack %" PRId64 " is not in the profile)\n", site->stack);
			continue;
		}
		if (r)
			return ENOMEM;
		wss_report_print_stack(out, fr, true, 0, raw);
	}
	return 0;
}

/* One entry a burst: its first peak as it was detected, the other series
 * and intervals of the burst on one line, and the sites of each of its
 * intervals once (the sites of a peak are its interval's, whatever its
 * series). */
static int print_peaks(const wss_profile_t *p, wss_symbols_t *syms, bool raw, FILE *out)
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
	wss_report_frames_t fr = {NULL, 0, 0};
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
			if (print_peak_sites(p, syms, &p->peaks[j], &fr, raw, out)) {
				free(fr.f);
				return ENOMEM;
			}
		}
		i = end;
	}
	free(fr.f);
	return 0;
}

int wss_report_text(wss_profile_t *p, FILE *out, bool raw_stacks)
{
	wss_report_sort_peaks(p);
	wss_symbols_t *syms = wss_sym_open(p);
	if (!syms)
		return ENOMEM;
	/* The session's profiles are read once, for the paragraph and the table. */
	wss_session_t s;
	bool session = wss_session_wanted(p);
	if (session && wss_session_build(p, &s)) {
		wss_sym_close(syms);
		return ENOMEM;
	}
	fprintf(out, "wss report: %s\n", p->path);
	print_truncation(p, out);
	fputc('\n', out);
	if (wss_diag_text(p, syms, session ? &s : NULL, out)) {
		if (session)
			wss_session_release(&s);
		wss_sym_close(syms);
		return ENOMEM;
	}
	fputc('\n', out);
	print_header(p, out);
	fputc('\n', out);
	print_summary(p, out);
	if (wss_diag_right_size(p, out)) {
		if (session)
			wss_session_release(&s);
		wss_sym_close(syms);
		return ENOMEM;
	}
	fputc('\n', out);
	if (session) {
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
	int r = print_peaks(p, syms, raw_stacks, out);
	if (!r && p->has_sites) {
		fputc('\n', out);
		r = wss_report_print_run_sites(p, syms, out);
	}
	if (!r && p->nalloc_sites) {
		fputc('\n', out);
		r = wss_report_print_alloc_sites(p, syms, raw_stacks, out);
	}
	if (!r && p->nhot_code) {
		fputc('\n', out);
		r = wss_report_print_hot_code(p, syms, out);
	}
	if (!r && p->nhot) {
		fputc('\n', out);
		r = wss_report_print_hot(p, syms, out);
	}
	wss_sym_close(syms);
	if (!r && (fflush(out) || ferror(out)))
		r = EIO;
	return r;
}
