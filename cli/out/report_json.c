/* `wss report --json` (report.h): the same as the text (report.c), as one
 * JSON document; docs/report.md, "--json", has its keys. */
#include "config.h"
#include "cli/out/report.h"
#include "cli/out/report_internal.h"
#include "cli/out/diagnosis.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/fold.h"
#include "cli/out/jw.h"
#include "cli/model/session.h"
#include "cli/out/text.h"
#include "common/fmt.h"

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

/* fold_label: the runtime whose run of fold_frames frames f is in (the
 * text shows the run as one line: cli/model/fold.h), or NULL. */
static void json_frame_folded(wss_jw_t *w, const char *key, const wss_frame_t *f, const char *fold_label,
			      size_t fold_frames)
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
	if (fold_label) {
		wss_jw_open(w, "folded", '{');
		wss_jw_str(w, "label", fold_label);
		wss_jw_int(w, "frames", (int64_t)fold_frames);
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, '}');
}

static void json_frame(wss_jw_t *w, const char *key, const wss_frame_t *f) { json_frame_folded(w, key, f, NULL, 0); }

/* "frames": the frames fr got (r 0), every one, each in a run of a
 * runtime's interpreter frames marked "folded" (the text's one line for
 * the run); or null when the stack is not in the profile (r ENOENT).
 * Returns ENOMEM for any other r. */
static int json_frames(wss_jw_t *w, int r, const wss_report_frames_t *fr)
{
	if (r == ENOENT) {
		wss_jw_str(w, "frames", NULL);
		return 0;
	}
	if (r)
		return ENOMEM;
	wss_jw_open(w, "frames", '[');
	for (size_t f = 0; f < fr->n;) {
		const char *label;
		size_t run = wss_fold_run(&fr->f[f], fr->n - f, &label);
		if (!run) {
			json_frame(w, NULL, &fr->f[f++]);
			continue;
		}
		for (size_t end = f + run; f < end; f++)
			json_frame_folded(w, NULL, &fr->f[f], label, run);
	}
	wss_jw_close(w, ']');
	return 0;
}

/* {"pc", "stack", "pages", "frames": [FRAME...] or null when its stack is
 * not in the profile}.  Returns 0 or ENOMEM. */
static int json_site(const wss_profile_t *p, wss_symbols_t *syms, const wss_site_t *site, wss_report_frames_t *fr, wss_jw_t *w)
{
	wss_jw_open(w, NULL, '{');
	wss_jw_hex(w, "pc", site->pc);
	wss_jw_int_or_null(w, "stack", site->stack);
	wss_jw_int(w, "pages", site->pages);
	if (json_frames(w, wss_report_site_frames(p, syms, site, fr), fr))
		return ENOMEM;
	wss_jw_close(w, '}');
	return 0;
}

static int json_peaks(const wss_profile_t *p, wss_symbols_t *syms, wss_jw_t *w)
{
	wss_report_frames_t fr = {NULL, 0, 0};
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
	wss_report_frames_t fr = {NULL, 0, 0};
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
	wss_report_frames_t fr = {NULL, 0, 0};
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
		if (json_frames(w, wss_report_alloc_frames(p, syms, x->stack, &fr), &fr)) {
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
	wss_report_frames_t fr = {NULL, 0, 0};
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

/* The session's table (cli/model/session.c), for the first profile of a
 * session of several. */
static void json_session(const wss_session_t *s, wss_jw_t *w)
{
	if (!s)
		return;
	wss_jw_open(w, "session", '{');
	wss_jw_int(w, "processes", (int64_t)s->processes);
	wss_jw_int(w, "processes_with_profile", (int64_t)s->with);
	wss_jw_int(w, "processes_in_note", (int64_t)s->counted);
	wss_jw_int(w, "processes_without", (int64_t)s->without);
	wss_jw_int(w, "profiles", (int64_t)s->profiles);
	wss_jw_int(w, "unreadable", (int64_t)s->unreadable);
	wss_jw_int(w, "no_summary", (int64_t)s->no_summary);
	wss_jw_int(w, "total_pages", (int64_t)s->total);
	wss_jw_int(w, "shared_pages", (int64_t)s->shared);
	if (s->estimated) {
		wss_ci_t t = {true, (double)s->total_lo, (double)s->total_hi}, sh = {true, (double)s->shared_lo, (double)s->shared_hi};
		wss_jw_bool(w, "estimated", true);
		wss_jw_ci(w, "total_ci", &t);
		wss_jw_ci(w, "shared_ci", &sh);
	}
	wss_jw_int(w, "page_size", s->page_size);
	wss_jw_open(w, "top", '[');
	for (size_t k = 0; k < s->nrows && k < WSS_SESSION_TOP; k++) {
		const wss_session_row_t *r = &s->rows[k];
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
}

/* "threads": each thread's totals. */
static void json_threads(const wss_profile_t *p, wss_jw_t *w)
{
	wss_jw_open(w, "threads", '[');
	for (size_t k = 0; k < p->nthreads; k++) {
		const wss_load_thread_t *t = &p->threads[k];
		wss_jw_open(w, NULL, '{');
		wss_jw_int(w, "tid", t->tid);
		wss_jw_int(w, "samples", (int64_t)t->samples);
		wss_jw_tenths(w, "data_avg", (int64_t)wss_load_avg_tenths(t->data_sum, t->samples));
		wss_jw_int(w, "data_peak", (int64_t)t->data_peak);
		if (t->has_write) {
			wss_jw_tenths(w, "write_avg", (int64_t)wss_load_avg_tenths(t->write_sum, t->samples));
			wss_jw_int(w, "write_peak", (int64_t)t->write_peak);
		}
		if (p->has_code) {
			wss_jw_tenths(w, "code_avg", (int64_t)wss_load_avg_tenths(t->code_sum, t->samples));
			wss_jw_int(w, "code_peak", (int64_t)t->code_peak);
		}
		wss_jw_int(w, "faults", (int64_t)t->faults);
		wss_jw_int_or_null(w, "cpu_ns", t->cpu_ns);
		if (t->estimated)
			wss_jw_bool(w, "estimated", true);
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, ']');
}

/* "timeline": each sample's counts, and its intervals when sampled. */
static void json_timeline(const wss_profile_t *p, wss_jw_t *w)
{
	wss_jw_open(w, "timeline", '[');
	for (size_t k = 0; k < p->nsamples; k++) {
		const wss_sample_t *s = &p->samples[k];
		wss_jw_open(w, NULL, '{');
		wss_jw_int(w, "seq", s->seq);
		wss_jw_int(w, "t_ns", s->t_ns);
		wss_jw_int(w, "data", s->data);
		if (s->read >= 0)
			wss_jw_int(w, "read", s->read);
		if (s->write >= 0)
			wss_jw_int(w, "write", s->write);
		if (s->code >= 0)
			wss_jw_int(w, "code", s->code);
		if (s->rate > 1) {
			wss_jw_int(w, "rate", s->rate);
			static const char *const ci_keys[WSS_SERIES_N] = {"data_ci", "read_ci", "write_ci"};
			for (int c = 0; c < WSS_SERIES_N; c++)
				wss_jw_ci(w, ci_keys[c], &s->ci[c]);
		}
		if (s->lower_bound)
			wss_jw_bool(w, "lower_bound", true);
		wss_jw_close(w, '}');
	}
	wss_jw_close(w, ']');
}

/* The diagnosis's figures and its paragraph, with plain spaces (a script
 * reading the document has no use for the text's no-break spaces). */
static int json_diagnosis(wss_profile_t *p, wss_symbols_t *syms, const wss_session_t *s, wss_jw_t *w)
{
	wss_diag_t d;
	if (wss_diag_build(p, syms, s, &d))
		return ENOMEM;
	wss_diag_plain(&d);
	wss_jw_open(w, "diagnosis", '{');
	wss_jw_str(w, "text", d.text);
	wss_jw_int_or_null(w, "p50_pages", d.p50);
	wss_jw_int_or_null(w, "p95_pages", d.p95);
	wss_jw_int_or_null(w, "p99_pages", d.p99);
	wss_jw_int_or_null(w, "peak_pages", d.peak);
	wss_jw_int_or_null(w, "peak_t_ns", d.peak_t_ns);
	wss_jw_int_or_null(w, "peak_seq", d.peak_seq);
	wss_jw_str(w, "peak_code", d.peak_code);
	wss_jw_int_or_null(w, "lru_99_pages", d.lru99);
	wss_jw_close(w, '}');
	wss_diag_release(&d);
	return 0;
}

int wss_report_json(wss_profile_t *p, FILE *out)
{
	wss_report_sort_peaks(p);
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
	/* The session's profiles are read once, for the paragraph and "session". */
	wss_session_t session;
	bool in_session = wss_session_wanted(p);
	if ((in_session && wss_session_build(p, &session)) ||
	    json_diagnosis(p, syms, in_session ? &session : NULL, &w)) {
		if (in_session)
			wss_session_release(&session);
		wss_sym_close(syms);
		wss_fmt_release(&w.f);
		return ENOMEM;
	}
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
	json_session(in_session ? &session : NULL, &w);
	if (in_session)
		wss_session_release(&session);

	json_threads(p, &w);
	json_timeline(p, &w);


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
