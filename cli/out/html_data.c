/* The data of `wss report --html`'s page (cli/out/html.c writes the page):
 * each process's run, series, threads, stacks symbolised offline, peaks,
 * allocation sites, the paragraph wss report starts with, and the trace
 * analyses when its profile names a page trace.  The data is one JSON
 * document; the long series (a value per sample, or per sample and
 * thread) are base64 of zigzag-coded deltas as LEB128 varints, which the
 * script decodes into typed arrays: a profile of 100,000 samples of 64
 * threads is 6.4 million numbers, and as JSON text it would be several
 * times larger and slower for the browser to parse. */
#include "config.h"
#include "cli/out/html_internal.h"
#include "cli/out/diagnosis.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/analyses.h"
#include "cli/model/fold.h"
#include "cli/model/load.h"
#include "cli/model/symbols.h"
#include "common/fmt.h"

/* ---- writing the data ---- */

static void put(out_t *o, const char *s) { wss_fmt_str(&o->f, s); }

static void putf(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(out_t *o, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	wss_fmt_mem(&o->f, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* A string, or null. */
static void put_s(out_t *o, const char *s)
{
	if (s)
		wss_fmt_json_str(&o->f, s);
	else
		put(o, "null");
}

/* A count that is -1 when unknown: null then. */
static void put_n(out_t *o, int64_t v)
{
	if (v < 0)
		put(o, "null");
	else
		wss_fmt_i64(&o->f, v);
}

/* A double, shortest form; null for what JSON cannot hold. */
static void put_d(out_t *o, double v)
{
	if (v != v || v > 1e300 || v < -1e300)
		put(o, "null");
	else
		putf(o, "%.17g", v);
}

/* ---- packed series ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A base64 string of varints being written: the delta of each value from
 * the one before, zigzag-coded so that small decreases stay small. */
typedef struct pack {
	out_t *o;
	unsigned char held[3];
	int nheld;
	int64_t prev;
} pack_t;

static void pack_byte(pack_t *k, unsigned char c)
{
	k->held[k->nheld++] = c;
	if (k->nheld < 3)
		return;
	uint32_t v = (uint32_t)k->held[0] << 16 | (uint32_t)k->held[1] << 8 | k->held[2];
	char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63], b64[v & 63]};
	wss_fmt_mem(&k->o->f, q, 4);
	k->nheld = 0;
}

static void pack_begin(pack_t *k, out_t *o)
{
	memset(k, 0, sizeof *k);
	k->o = o;
	wss_fmt_ch(&o->f, '"');
}

/* A new run of deltas (a thread's values after another's). */
static void pack_restart(pack_t *k) { k->prev = 0; }

static void pack_value(pack_t *k, int64_t v)
{
	uint64_t d = (uint64_t)v - (uint64_t)k->prev;
	uint64_t z = (d << 1) ^ (uint64_t)((int64_t)d >> 63);
	k->prev = v;
	while (z >= 0x80) {
		pack_byte(k, (unsigned char)(z | 0x80));
		z >>= 7;
	}
	pack_byte(k, (unsigned char)z);
}

static void pack_end(pack_t *k)
{
	if (k->nheld) {
		uint32_t v = (uint32_t)k->held[0] << 16 | (k->nheld > 1 ? (uint32_t)k->held[1] << 8 : 0);
		char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], k->nheld > 1 ? b64[(v >> 6) & 63] : '=', '='};
		wss_fmt_mem(&k->o->f, q, 4);
	}
	wss_fmt_ch(&k->o->f, '"');
}

/* Which member of a sample a packed series holds. */
typedef enum col {
	COL_T,
	COL_DATA,
	COL_READ,
	COL_WRITE,
	COL_FAULTS,
	COL_RATE,
	COL_CI_LO,
	COL_CI_HI = COL_CI_LO + WSS_SERIES_N,
	COL_N = COL_CI_HI + WSS_SERIES_N
} col_t;

static int64_t column(const wss_sample_t *s, int c)
{
	switch (c) {
	case COL_T:
		return s->t_ns;
	case COL_DATA:
		return s->data;
	case COL_READ:
		return s->read;
	case COL_WRITE:
		return s->write;
	case COL_FAULTS:
		return s->faults;
	case COL_RATE:
		return s->rate;
	}
	/* Intervals outwards to whole pages, as the text report rounds them. */
	const wss_ci_t *ci = &s->ci[c < COL_CI_HI ? c - COL_CI_LO : c - COL_CI_HI];
	if (!ci->present)
		return -1;
	return c < COL_CI_HI ? (int64_t)(ci->lo + 1e-9) : (int64_t)(ci->hi + 1 - 1e-9);
}

static void put_column(out_t *o, const wss_profile_t *p, int c)
{
	pack_t k;
	pack_begin(&k, o);
	for (size_t i = 0; i < p->nsamples; i++)
		pack_value(&k, column(&p->samples[i], c));
	pack_end(&k);
}

static void put_series(out_t *o, const wss_profile_t *p)
{
	static const char *const names[COL_N] = {"t_ns", "data", "read", "write", "faults", "rate",
						 "data_lo", "read_lo", "write_lo", "data_hi", "read_hi", "write_hi"};
	bool sampled = wss_load_sampled(p);
	put(o, "{");
	for (int c = 0; c < COL_N; c++) {
		if ((c == COL_READ && !p->has_read) || (c == COL_WRITE && !p->has_write))
			continue;
		if (c >= COL_RATE && !sampled)
			continue;
		putf(o, "%s\"%s\":", c ? "," : "", names[c]);
		put_column(o, p, c);
	}
	/* track.code's series (exact). */
	if (p->has_code) {
		pack_t k;
		put(o, ",\"code\":");
		pack_begin(&k, o);
		for (size_t i = 0; i < p->nsamples; i++)
			pack_value(&k, p->samples[i].code);
		pack_end(&k);
	}
	put(o, "}");
}

typedef struct tid_index {
	int64_t tid;
	size_t k;
} tid_index_t;

static int by_tid(const void *a, const void *b)
{
	const tid_index_t *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The threads' totals, and each thread's data pages from the first sample
 * it appears in to its last (0 in a sample between them that lacks it),
 * packed thread after thread.  Returns 0 or ENOMEM. */
static int put_threads(out_t *o, const wss_profile_t *p)
{
	size_t nt = p->nthreads, ns = p->nsamples;
	tid_index_t *ix = calloc(nt ? nt : 1, sizeof *ix);
	size_t *first = calloc(nt ? nt : 1, sizeof *first), *last = calloc(nt ? nt : 1, sizeof *last);
	size_t *at = calloc(nt + 1, sizeof *at);
	int64_t *v = NULL;
	int r = ENOMEM;
	if (!ix || !first || !last || !at)
		goto out;
	for (size_t k = 0; k < nt; k++) {
		ix[k].tid = p->threads[k].tid;
		ix[k].k = k;
		first[k] = SIZE_MAX;
	}
	qsort(ix, nt, sizeof *ix, by_tid);
	/* Each sample thread's index, found once per pass. */
#define FIND(st) ((tid_index_t *)bsearch(&(tid_index_t){(st)->tid, 0}, ix, nt, sizeof *ix, by_tid))
	for (size_t i = 0; i < ns; i++) {
		const wss_sample_t *s = &p->samples[i];
		for (size_t j = 0; j < s->nthreads; j++) {
			tid_index_t *t = FIND(&p->sample_threads[s->thread_first + j]);
			if (!t)
				continue;
			if (first[t->k] == SIZE_MAX)
				first[t->k] = i;
			last[t->k] = i;
		}
	}
	for (size_t k = 0; k < nt; k++)
		at[k + 1] = at[k] + (first[k] == SIZE_MAX ? 0 : last[k] - first[k] + 1);
	if (!(v = calloc(at[nt] ? at[nt] : 1, sizeof *v)))
		goto out;
	for (size_t i = 0; i < ns; i++) {
		const wss_sample_t *s = &p->samples[i];
		for (size_t j = 0; j < s->nthreads; j++) {
			const wss_sample_thread_t *st = &p->sample_threads[s->thread_first + j];
			tid_index_t *t = FIND(st);
			if (t)
				v[at[t->k] + i - first[t->k]] += st->data;
		}
	}
#undef FIND
	put(o, ",\"threads\":[");
	for (size_t k = 0; k < nt; k++) {
		const wss_load_thread_t *t = &p->threads[k];
		putf(o, "%s{\"tid\":%" PRId64 ",\"samples\":%" PRIu64 ",\"data_avg\":", k ? "," : "", t->tid, t->samples);
		wss_fmt_fixed(&o->f, wss_load_avg_tenths(t->data_sum, t->samples), 1);
		putf(o, ",\"data_peak\":%" PRIu64, t->data_peak);
		if (t->has_write) {
			put(o, ",\"write_avg\":");
			wss_fmt_fixed(&o->f, wss_load_avg_tenths(t->write_sum, t->samples), 1);
			putf(o, ",\"write_peak\":%" PRIu64, t->write_peak);
		}
		putf(o, ",\"faults\":%" PRIu64 ",\"cpu_ns\":", t->faults);
		put_n(o, t->cpu_ns);
		putf(o, ",\"estimated\":%s,\"first\":%zu,\"count\":%zu}", t->estimated ? "true" : "false",
		     first[k] == SIZE_MAX ? 0 : first[k], at[k + 1] - at[k]);
	}
	put(o, "],\"thread_data\":");
	pack_t pk;
	pack_begin(&pk, o);
	for (size_t k = 0; k < nt; k++) {
		pack_restart(&pk);
		for (size_t i = at[k]; i < at[k + 1]; i++)
			pack_value(&pk, v[i]);
	}
	pack_end(&pk);
	r = 0;
out:
	free(ix);
	free(first);
	free(last);
	free(at);
	free(v);
	return r;
}

/* ---- stacks ---- */

typedef struct frames {
	wss_frame_t *f;
	size_t n, cap;
} frames_t;

/* The frames of addresses a[0 .. n) (a[0] the touching instruction, the
 * rest return addresses) as an array of
 * [function, file, line, inlined, module, "0xaddr", "0xoffset", function offset, note],
 * and a tenth, [label, frames], on each frame of a run of a runtime's
 * interpreter frames that the page shows folded (cli/model/fold.h). */
static int put_frames_as(out_t *o, wss_symbols_t *syms, const uint64_t *a, size_t n, frames_t *fr, bool all_returns);

static int put_frames(out_t *o, wss_symbols_t *syms, const uint64_t *a, size_t n, frames_t *fr)
{
	return put_frames_as(o, syms, a, n, fr, false);
}

/* all_returns: a[0] is a return address too (an allocation site's stack,
 * taken inside the allocator's wrapper). */
static int put_frames_as(out_t *o, wss_symbols_t *syms, const uint64_t *a, size_t n, frames_t *fr, bool all_returns)
{
	fr->n = 0;
	for (size_t k = 0; k < n; k++)
		if (wss_sym_frames(syms, a[k], all_returns || k > 0, &fr->f, &fr->n, &fr->cap))
			return ENOMEM;
	put(o, "[");
	const char *label = NULL;
	size_t run_end = 0, run = 0;
	for (size_t k = 0; k < fr->n; k++) {
		const wss_frame_t *f = &fr->f[k];
		if (k >= run_end && !o->raw) {
			run = wss_fold_run(f, fr->n - k, &label);
			run_end = k + (run ? run : 1);
		}
		put(o, k ? ",[" : "[");
		put_s(o, f->function);
		put(o, ",");
		put_s(o, f->file);
		put(o, ",");
		put_n(o, f->file ? f->line : -1);
		putf(o, ",%d,", f->inlined);
		put_s(o, f->module ? f->module->path : NULL);
		putf(o, ",\"0x%" PRIx64 "\",", f->addr);
		if (f->module)
			putf(o, "\"0x%" PRIx64 "\"", f->offset);
		else
			put(o, "null");
		put(o, ",");
		put_n(o, f->has_function_offset ? (int64_t)f->function_offset : -1);
		put(o, ",");
		put_s(o, f->note);
		if (run) {
			put(o, ",[");
			put_s(o, label);
			putf(o, ",%zu]", run);
		}
		put(o, "]");
	}
	put(o, "]");
	return 0;
}

static int put_stacks(out_t *o, const wss_profile_t *p, wss_symbols_t *syms, frames_t *fr)
{
	put(o, ",\"stacks\":{");
	for (size_t k = 0; k < p->nstacks; k++) {
		putf(o, "%s\"%" PRId64 "\":", k ? "," : "", p->stacks[k].id);
		if (put_frames(o, syms, p->stacks[k].frames, p->stacks[k].n, fr))
			return ENOMEM;
	}
	put(o, "}");
	return 0;
}

/* First-touch sites: each one's pages and stack, and the touching
 * instruction's own frames when the stack was not captured or is not in
 * the profile. */
static int put_sites(out_t *o, const wss_profile_t *p, wss_symbols_t *syms, const wss_site_t *sites, size_t n,
		     frames_t *fr)
{
	put(o, "[");
	for (size_t k = 0; k < n; k++) {
		const wss_site_t *s = &sites[k];
		putf(o, "%s{\"pages\":%" PRId64 ",\"pc\":\"0x%" PRIx64 "\",\"stack\":", k ? "," : "", s->pages, s->pc);
		put_n(o, s->stack);
		if (s->stack < 0 || !wss_load_stack(p, s->stack)) {
			put(o, ",\"frames\":");
			if (s->pc ? put_frames(o, syms, &s->pc, 1, fr) : (put(o, "[]"), 0))
				return ENOMEM;
		}
		put(o, "}");
	}
	put(o, "]");
	return 0;
}

/* Allocation sites: ",alloc_sites":[{figures, "stack"}], their stacks
 * apart in "alloc_stacks" (every frame a return address), and
 * "alloc_meta". */
static int put_alloc_sites(out_t *o, const wss_profile_t *p, wss_symbols_t *syms, frames_t *fr)
{
	if (!p->has_alloc_sites)
		return 0;
	putf(o, ",\"alloc_meta\":{\"mean_bytes\":%" PRId64 ",\"idle_after\":%" PRId64 ",\"intervals\":%" PRId64 "}",
	     p->alloc_mean, p->alloc_idle_after, p->alloc_intervals);
	put(o, ",\"alloc_sites\":[");
	for (size_t k = 0; k < p->nalloc_sites; k++) {
		const wss_alloc_site_t *x = &p->alloc_sites[k];
		putf(o,
		     "%s{\"stack\":%" PRId64 ",\"allocs\":%" PRId64 ",\"sampled\":%" PRId64 ",\"live\":%" PRId64
		     ",\"peak\":%" PRId64 ",\"ws\":%" PRId64 ",\"idle\":%" PRId64 ",\"live_bytes\":%" PRId64,
		     k ? "," : "", x->stack, x->allocs, x->sampled, x->live_pages, x->peak_live_pages, x->ws_pages,
		     x->idle_pages, x->live_bytes);
		const wss_ci_t *ci[3] = {&x->live_ci, &x->ws_ci, &x->idle_ci};
		static const char *const keys[3] = {"live_ci", "ws_ci", "idle_ci"};
		for (int c = 0; c < 3; c++)
			if (ci[c]->present)
				putf(o, ",\"%s\":[%.0f,%.0f]", keys[c], ci[c]->lo, ci[c]->hi);
		put(o, "}");
	}
	put(o, "],\"alloc_stacks\":{");
	bool first = true;
	for (size_t k = 0; k < p->nalloc_sites; k++) {
		const wss_stack_t *st = p->alloc_sites[k].stack > 0 ? wss_load_stack(p, p->alloc_sites[k].stack) : NULL;
		if (!st)
			continue;
		putf(o, "%s\"%" PRId64 "\":", first ? "" : ",", st->id);
		first = false;
		if (put_frames_as(o, syms, st->frames, st->n, fr, true))
			return ENOMEM;
	}
	put(o, "}");
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const wss_peak_t *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Peaks in time order, numbered from 1 as the text report numbers them. */
static int put_peaks(out_t *o, wss_profile_t *p, wss_symbols_t *syms, frames_t *fr)
{
	if (p->npeaks > 1)
		qsort(p->peaks, p->npeaks, sizeof *p->peaks, by_seq);
	put(o, ",\"peaks\":[");
	for (size_t k = 0; k < p->npeaks; k++) {
		const wss_peak_t *pk = &p->peaks[k];
		const wss_sample_t *s = wss_load_sample(p, pk->seq);
		putf(o, "%s{\"number\":%zu,\"seq\":%" PRId64 ",\"i\":%ld,\"series\":", k ? "," : "", k + 1, pk->seq,
		     s ? (long)(s - p->samples) : -1L);
		put_s(o, pk->series);
		putf(o, ",\"value\":%" PRId64 ",\"mean\":", pk->value);
		put_d(o, pk->mean);
		put(o, ",\"threshold\":");
		put_d(o, pk->threshold);
		put(o, ",\"sites\":");
		if (put_sites(o, p, syms, pk->sites, pk->nsites, fr))
			return ENOMEM;
		put(o, "}");
	}
	put(o, "]");
	if (p->has_sites) {
		put(o, ",\"sites\":");
		if (put_sites(o, p, syms, p->sites, p->nsites, fr))
			return ENOMEM;
		putf(o, ",\"sites_other\":%" PRId64, p->sites_other);
	}
	put(o, ",\"hot\":[");
	for (size_t k = 0; k < p->nhot; k++) {
		const wss_hot_t *h = &p->hot[k];
		putf(o, "%s{\"addr\":\"0x%" PRIx64 "\",\"intervals\":%" PRId64 ",\"mapping\":", k ? "," : "", h->addr,
		     h->intervals);
		put_s(o, h->mapping);
		put(o, ",\"stack\":");
		put_n(o, h->stack);
		put(o, ",\"gone\":");
		put_n(o, h->gone_seq);
		put(o, "}");
	}
	put(o, "]");
	return 0;
}

/* ---- the run ---- */

static void put_ci(out_t *o, const char *key, const wss_ci_t *ci)
{
	if (!ci->present)
		return;
	putf(o, ",\"%s\":[", key);
	put_d(o, ci->lo);
	put(o, ",");
	put_d(o, ci->hi);
	put(o, "]");
}

/* avg/peak/total of one series, as `wss report --json` has them. */
static void put_stat_body(out_t *o, const wss_stat_t *st)
{
	put(o, "{\"avg\":");
	wss_fmt_fixed(&o->f, (uint64_t)st->avg_tenths, 1);
	putf(o, ",\"peak\":%" PRId64 ",\"total\":", st->peak);
	put_n(o, st->total);
	put_ci(o, "avg_ci", &st->avg_ci);
	put_ci(o, "peak_ci", &st->peak_ci);
	put_ci(o, "total_ci", &st->total_ci);
	put(o, "}");
}

static void put_stat(out_t *o, const char *key, const wss_stat_t *st)
{
	if (!st->present)
		return;
	putf(o, ",\"%s\":", key);
	put_stat_body(o, st);
}

static void put_run(out_t *o, const wss_profile_t *p)
{
	put(o, "\"exe\":");
	put_s(o, p->exe);
	put(o, ",\"argv\":[");
	for (size_t k = 0; k < p->argc; k++) {
		if (k)
			put(o, ",");
		put_s(o, p->argv[k]);
	}
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
		{"tool", offsetof(wss_profile_t, tool)},
		{"kernel", offsetof(wss_profile_t, kernel)},
		{"backend", offsetof(wss_profile_t, backend)},
		{"backend_reason", offsetof(wss_profile_t, backend_reason)},
		{"backend_sees", offsetof(wss_profile_t, backend_sees)},
		{"time_base", offsetof(wss_profile_t, time_base)},
		{"track_mode", offsetof(wss_profile_t, track_mode)},
		{"config_file", offsetof(wss_profile_t, config_file)},
		{"trace", offsetof(wss_profile_t, trace)},
		{"trace_stopped", offsetof(wss_profile_t, trace_stopped)},
	};
	put(o, "]");
	for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) {
		putf(o, ",\"%s\":", strs[k].key);
		put_s(o, *(char *const *)((const char *)p + strs[k].off));
	}
	const struct {
		const char *key;
		int64_t v;
	} nums[] = {
		{"pid", p->pid},
		{"ppid", p->ppid},
		{"page_size", p->page_size},
		{"interval_ns", p->interval_ns},
		{"window_ns", p->window_ns},
		{"window_intervals", p->window_intervals},
		{"duration_ns", p->duration_ns},
		{"samples", p->has_summary ? p->summary_samples : (int64_t)p->nsamples},
		{"n", (int64_t)p->nsamples},
		{"cut_line", p->cut_line ? p->cut_line : -1},
		{"trace_records", p->trace_records},
		{"trace_pages", p->trace_pages},
		{"trace_bytes", p->trace_bytes},
		{"trace_last", p->trace_last},
	};
	for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
		putf(o, ",\"%s\":", nums[k].key);
		put_n(o, nums[k].v);
	}
	bool sampled = wss_load_sampled(p);
	putf(o, ",\"truncated\":%s,\"sampled\":%s,\"lower_bound\":%s", p->has_summary ? "false" : "true",
	     sampled ? "true" : "false", wss_load_lower_bound(p) ? "true" : "false");
	if (sampled) {
		int64_t hi = p->rate_max > p->summary_rate_max ? p->rate_max : p->summary_rate_max;
		putf(o, ",\"rate_min\":%" PRId64 ",\"rate_max\":%" PRId64 ",\"sampled_samples\":%zu",
		     p->rate_min ? p->rate_min : hi, hi, p->nsampled);
	}
	if (p->nlower)
		putf(o, ",\"lower_samples\":%zu", p->nlower);
	if (p->precision_note) {
		put(o, ",\"precision_note\":");
		put_s(o, p->precision_note);
	}
	if (p->has_cost)
		putf(o, ",\"cost\":{\"faults_ns\":%" PRId64 ",\"tick_ns\":%" PRId64 ",\"change_ns\":%" PRId64
			",\"code_ns\":%" PRId64 ",\"program_ns\":%" PRId64 ",\"base_ns\":%" PRId64 "}",
		     p->cost_faults_ns, p->cost_tick_ns, p->cost_change_ns, p->cost_code_ns, p->cost_program_ns,
		     p->cost_base_ns);
	putf(o, ",\"summary\":{\"from\":\"%s\"", p->has_summary ? "summary" : "samples");
	put_stat(o, "data", &p->data);
	put_stat(o, "read", &p->read);
	put_stat(o, "write", &p->write);
	put_stat(o, "code", &p->code);
	int order[WSS_KIND_N], nk = wss_load_kinds_by_peak(p, order);
	if (nk) {
		/* Largest peak first, as wss report lists them. */
		put(o, ",\"kinds\":{");
		for (int i = 0; i < nk; i++) {
			putf(o, "%s\"%s\":", i ? "," : "", wss_kind_name(order[i]));
			put_stat_body(o, &p->kinds[order[i]]);
		}
		put(o, "}");
	}
	put(o, "},\"settings\":[");
	for (size_t k = 0; k < p->nsettings; k++) {
		put(o, k ? ",[" : "[");
		put_s(o, p->settings[k].key);
		putf(o, ",%s,", p->settings[k].value ? p->settings[k].value : "null");
		put_s(o, p->settings[k].source);
		put(o, "]");
	}
	put(o, "],\"procs\":[");
	for (size_t k = 0; k < p->nprocs; k++) {
		const wss_process_note_t *n = &p->procs[k];
		putf(o, "%s{\"pid\":%" PRId64 ",\"ppid\":%" PRId64 ",\"profile\":", k ? "," : "", n->pid, n->ppid);
		put_s(o, n->profile);
		put(o, ",\"reason\":");
		put_s(o, n->reason);
		put(o, "}");
	}
	put(o, "]");
}

/* The heat map, the miss-ratio curves and the policy simulation of the
 * profile's page trace: the --json documents of `wss heatmap`, `wss mrc`
 * and `wss simulate` with their defaults, written by the functions the
 * commands call (cli/analyses/analyses.h), so the page shows what the commands
 * print.  A trace that cannot be read gets its command's line on stderr
 * and an error in the page; the rest of the page is made anyway. */
/* Analysis k (put_analyses's names) of the profile at path into f, or
 * its fallback.  Returns the command's status. */
static int run_analysis(size_t k, const char *path, bool fallback, wss_fmt_t *f)
{
	/* A trace longer than the string the per-reference analyses walk
	 * (OPT, the policies other than LRU) refuses them with status 2
	 * once the heat map has read it whole: they run again without,
	 * over ranges, and the page shows the LRU curves alone. */
	static const wss_heatmap_opts_t heat = {0, 0, false};
	static const wss_mrc_opts_t mrc[2] = {{NULL, 0, false}, {NULL, 0, true}};
	static const wss_simulate_opts_t sim[2] = {{.nkinds = 0}, {.kinds = {WSS_POLICY_LRU}, .nkinds = 1}};
	if (k == 0)
		return wss_heatmap_json(path, &heat, f);
	if (k == 1)
		return wss_mrc_json(path, &mrc[fallback], f);
	return wss_simulate_json(path, &sim[fallback], f);
}

static void put_analyses(out_t *o, const wss_profile_t *p)
{
	static const char *const names[] = {"heatmap", "mrc", "simulate"};
	put(o, ",\"analyses\":{");
	int failed = 0; /* after one failure the others would say it again */
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		putf(o, "%s\"%s\":", k ? "," : "", names[k]);
		int r = failed;
		if (!failed)
			r = run_analysis(k, p->path, false, &o->f);
		if (!failed && r == WSS_EXIT_BADINPUT && k)
			r = run_analysis(k, p->path, true, &o->f);
		if (r && failed) {
			putf(o, "{\"error\":\"wss %s not run: the trace could not be read\"}", names[k]);
		} else if (r) {
			putf(o, "{\"error\":\"wss %s failed (exit status %d; stderr says why)\"}", names[k], r);
			failed = r;
		}
	}
	put(o, "}");
}

/* The paragraph wss report starts with (cli/out/diagnosis.c), the page's
 * first words about the run. */
static int put_diagnosis(out_t *o, wss_profile_t *p, wss_symbols_t *syms)
{
	wss_session_t s;
	bool session = wss_session_wanted(p);
	if (session && wss_session_build(p, &s))
		return ENOMEM;
	wss_diag_t d;
	int r = wss_diag_build(p, syms, session ? &s : NULL, &d);
	if (session)
		wss_session_release(&s);
	if (r)
		return ENOMEM;
	put(o, ",\"diagnosis\":");
	put_s(o, d.text);
	wss_diag_release(&d);
	return 0;
}

/* One process's member of the "procs" array. */
static int put_proc(out_t *o, proc_t *pr, size_t k)
{
	putf(o, "%s{\"pid\":", k ? "," : "");
	put_n(o, pr->pid);
	put(o, ",\"ppid\":");
	put_n(o, pr->ppid);
	putf(o, ",\"noted_by\":%ld,\"path\":", pr->noted_by);
	put_s(o, pr->path);
	put(o, ",\"reason\":");
	put_s(o, pr->reason);
	if (pr->note) {
		/* Measured without a profile: its size, for the tree. */
		put(o, ",\"measured\":{\"exe\":");
		put_s(o, pr->note->exe);
		putf(o, ",\"data_peak\":%" PRId64 ",\"data_total\":%" PRId64 ",\"estimated\":%s}", pr->note->data_peak,
		     pr->note->data_total, pr->note->peak_ci.present ? "true" : "false");
	}
	if (!pr->loaded) {
		put(o, ",\"profile\":null}");
		return 0;
	}
	wss_profile_t *p = &pr->p;
	put(o, ",\"profile\":{");
	put_run(o, p);
	put(o, ",\"series\":");
	put_series(o, p);
	int r = put_threads(o, p);
	wss_symbols_t *syms = r ? NULL : wss_sym_open(p);
	frames_t fr = {NULL, 0, 0};
	if (!syms || put_stacks(o, p, syms, &fr) || put_peaks(o, p, syms, &fr) || put_alloc_sites(o, p, syms, &fr) ||
	    put_diagnosis(o, p, syms))
		r = ENOMEM;
	free(fr.f);
	if (syms)
		wss_sym_close(syms);
	if (!r && p->trace)
		put_analyses(o, p);
	put(o, "}}");
	return r;
}

int wss_html_data(out_t *o, procs_t *ps)
{
	int r = 0;
	putf(o, "{\"format\":1,\"tool\":\"wss %s\",\"procs\":[", PACKAGE_VERSION);
	for (size_t k = 0; k < ps->n && !r; k++)
		r = put_proc(o, &ps->v[k], k);
	put(o, "]}");
	return r;
}
