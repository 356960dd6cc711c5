/* `wss export` (export.h): the command, its output, and two of its
 * formats: CSV, a row per sample for the process and one per thread in it,
 * and trace-event JSON (the Trace Event Format of chrome://tracing, which
 * Perfetto UI loads), with the working set as counters and the peaks as
 * instant events.  An output file is written beside its final name and
 * renamed over it at the end, so that a failure (a full disk, a file-size
 * limit) leaves the old file or none, never half of one. */
#include "config.h"
#include "cli/out/export.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/analyses/analyses.h"
#include "cli/cmd/outfile.h"
#include "cli/model/symbols.h"
#include "cli/out/text.h"

#define EXIT_USAGE 2
#define SINK_CHUNK (1u << 16)

/* ---- shared plumbing (export.h) ---- */

int wss_sink_flush(wss_sink_t *s, bool force)
{
	if (s->f.overflow && !s->err)
		s->err = ENOMEM;
	if (s->err || (!force && s->f.len < SINK_CHUNK))
		return s->err;
	for (size_t done = 0; done < s->f.len;) {
		ssize_t w = write(s->fd, s->f.buf + done, s->f.len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->err = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
	}
	wss_fmt_reset(&s->f);
	return s->err;
}

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t wss_u64map_get(const wss_u64map_t *m, uint64_t key)
{
	if (!m->cap)
		return 0;
	for (size_t k = mix(key) & (m->cap - 1); m->vals[k]; k = (k + 1) & (m->cap - 1))
		if (m->keys[k] == key)
			return m->vals[k];
	return 0;
}

int wss_u64map_put(wss_u64map_t *m, uint64_t key, uint64_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		wss_u64map_t g = {NULL, NULL, m->cap ? m->cap * 2 : 256, 0};
		g.keys = calloc(g.cap, sizeof *g.keys);
		g.vals = calloc(g.cap, sizeof *g.vals);
		if (!g.keys || !g.vals) {
			wss_u64map_free(&g);
			return ENOMEM;
		}
		for (size_t k = 0; k < m->cap; k++)
			if (m->vals[k])
				wss_u64map_put(&g, m->keys[k], m->vals[k]);
		wss_u64map_free(m);
		*m = g;
	}
	size_t k = mix(key) & (m->cap - 1);
	while (m->vals[k] && m->keys[k] != key)
		k = (k + 1) & (m->cap - 1);
	m->n += !m->vals[k];
	m->keys[k] = key;
	m->vals[k] = val;
	return 0;
}

void wss_u64map_free(wss_u64map_t *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->n = 0;
}

/* ---- CSV ---- */

/* One row's own numbers; the rest are its sample's. */
typedef struct csv_row {
	const char *scope;
	int64_t tid, cpu_ns, data, read, write, faults; /* -1: absent */
	wss_ci_t ci[WSS_SERIES_N];
	int64_t code; /* track.code's code_pages, -1: absent */
} csv_row_t;

/* ",v", or "," alone for an absent value (v < 0). */
static void csv_int(wss_fmt_t *f, int64_t v)
{
	wss_fmt_ch(f, ',');
	if (v >= 0)
		wss_fmt_i64(f, v);
}

/* A bound as a whole number when it is one (the profile's usually are:
 * 450, not the 4.5e+02 that the shortest %g would give). */
static void csv_num(wss_fmt_t *f, double v)
{
	char buf[40];
	wss_fmt_ch(f, ',');
	if (v >= 0 && v < 9007199254740992.0 && v == (double)(int64_t)v)
		wss_fmt_i64(f, (int64_t)v);
	else
		wss_fmt_str(f, wss_text_shortest(buf, sizeof buf, v));
}

/* The profile has a code series (track.code): a code_pages column; and
 * a kind_KIND_pages column for each kind some sample has (bit k of
 * kind_columns), last, filled on the process's rows. */
static bool code_column;
static unsigned kind_columns;

static void csv_row(wss_fmt_t *f, const wss_sample_t *s, const csv_row_t *r)
{
	wss_fmt_str(f, r->scope);
	csv_int(f, s->seq);
	csv_int(f, s->t_ns);
	csv_int(f, r->cpu_ns);
	csv_int(f, r->tid);
	csv_int(f, r->data);
	csv_int(f, r->read);
	csv_int(f, r->write);
	csv_int(f, r->faults);
	csv_int(f, s->rate);
	for (int c = 0; c < WSS_SERIES_N; c++) {
		if (r->ci[c].present) {
			csv_num(f, r->ci[c].lo);
			csv_num(f, r->ci[c].hi);
		} else
			wss_fmt_str(f, ",,");
	}
	wss_fmt_str(f, s->final ? ",1" : ",0");
	wss_fmt_str(f, s->lower_bound ? ",1" : ",0");
	if (code_column)
		csv_int(f, r->code);
	for (int k = 1; k < WSS_KIND_N; k++)
		if (kind_columns & (1U << k))
			csv_int(f, r->tid < 0 ? s->kind_data[k] : -1);
	wss_fmt_ch(f, '\n');
}

/* A thread's interval in a sample ({-1, -1}: exact). */
static wss_ci_t thread_ci(const float ci[2])
{
	return (wss_ci_t){ci[0] >= 0, ci[0], ci[1]};
}

static int export_csv(const wss_profile_t *p, wss_sink_t *out)
{
	code_column = p->has_code;
	wss_fmt_str(&out->f, "scope,seq,t_ns,cpu_ns,tid,data_pages,read_pages,write_pages,faults,rate,"
			     "data_lo,data_hi,read_lo,read_hi,write_lo,write_hi,final,lower_bound");
	wss_fmt_str(&out->f, code_column ? ",code_pages" : "");
	kind_columns = 0;
	for (size_t k = 0; k < p->nsamples; k++)
		for (int j = 1; j < WSS_KIND_N; j++)
			if (p->samples[k].kind_data[j] >= 0)
				kind_columns |= 1U << j;
	for (int j = 1; j < WSS_KIND_N; j++)
		if (kind_columns & (1U << j)) {
			wss_fmt_str(&out->f, ",kind_");
			wss_fmt_str(&out->f, wss_kind_name(j));
			wss_fmt_str(&out->f, "_pages");
		}
	wss_fmt_ch(&out->f, '\n');
	for (size_t k = 0; k < p->nsamples; k++) {
		const wss_sample_t *s = &p->samples[k];
		csv_row_t r = {"process", -1, s->cpu_ns, s->data, s->read, s->write, s->faults,
			       {s->ci[0], s->ci[1], s->ci[2]}, s->code};
		csv_row(&out->f, s, &r);
		for (size_t j = 0; j < s->nthreads; j++) {
			const wss_sample_thread_t *t = &p->sample_threads[s->thread_first + j];
			/* A thread's read pages are its data pages not written,
			 * where the sample tells reads apart (profile-format.md). */
			r = (csv_row_t){"thread", t->tid, t->cpu_ns, t->data, -1, t->write, t->faults,
					{thread_ci(t->ci_data), {false, 0, 0}, thread_ci(t->ci_write)}, t->code};
			if (s->read >= 0 && t->write >= 0)
				r.read = t->data - t->write;
			csv_row(&out->f, s, &r);
		}
		if (wss_sink_flush(out, false))
			return out->err;
	}
	return wss_sink_flush(out, true);
}

/* ---- trace-event JSON ---- */

/* A JSON member or item, its separator and key in prefix (",\"seq\":"). */
static void j_i64(wss_fmt_t *f, const char *prefix, int64_t v)
{
	wss_fmt_str(f, prefix);
	wss_fmt_i64(f, v);
}

static void j_str(wss_fmt_t *f, const char *prefix, const char *v)
{
	wss_fmt_str(f, prefix);
	wss_fmt_json_str(f, v);
}

static void j_num(wss_fmt_t *f, const char *prefix, double v)
{
	char buf[40];
	wss_fmt_str(f, prefix);
	wss_fmt_str(f, wss_text_shortest(buf, sizeof buf, v));
}

typedef struct trace {
	wss_sink_t *out;
	const wss_profile_t *p;
	bool first;
} trace_t;

/* The start of an event, up to the opening of its args: "ts" in µs. */
static void te_begin(trace_t *t, const char *name, const char *ph, int64_t t_ns, int64_t tid)
{
	wss_fmt_t *f = &t->out->f;
	j_str(f, t->first ? "\n{\"name\":" : ",\n{\"name\":", name);
	t->first = false;
	j_str(f, ",\"ph\":", ph);
	wss_fmt_str(f, ",\"ts\":");
	wss_fmt_fixed(f, (uint64_t)(t_ns > 0 ? t_ns : 0), 3);
	j_i64(f, ",\"pid\":", t->p->pid);
	j_i64(f, ",\"tid\":", tid);
}

static void te_metadata(trace_t *t, const char *what, int64_t tid, const char *name)
{
	te_begin(t, what, "M", 0, tid);
	j_str(&t->out->f, ",\"args\":{\"name\":", name);
	wss_fmt_str(&t->out->f, "}}");
}

/* A counter with one series, "pages": one track per counter name. */
static void te_counter(trace_t *t, const char *name, int64_t t_ns, int64_t tid, int64_t pages)
{
	te_begin(t, name, "C", t_ns, tid);
	j_i64(&t->out->f, ",\"args\":{\"pages\":", pages);
	wss_fmt_str(&t->out->f, "}}");
}

/* A thread's counters: "thread TID data", and "... write", "... read"
 * where the sample has them; pages < 0 for a thread gone from the
 * samples, whose counters drop to 0. */
static void te_thread(trace_t *t, const wss_sample_t *s, int64_t tid, int64_t data, int64_t write)
{
	char name[64];
	bool gone = data < 0;
	snprintf(name, sizeof name, "thread %" PRId64 " data", tid);
	te_counter(t, name, s->t_ns, tid, gone ? 0 : data);
	if (s->write >= 0 && (write >= 0 || gone)) {
		snprintf(name, sizeof name, "thread %" PRId64 " write", tid);
		te_counter(t, name, s->t_ns, tid, gone ? 0 : write);
	}
	if (s->read >= 0 && (write >= 0 || gone)) {
		snprintf(name, sizeof name, "thread %" PRId64 " read", tid);
		te_counter(t, name, s->t_ns, tid, gone ? 0 : data - write);
	}
}

/* "function (file:line)", "function (module)", "module+0x1c", "0x12": the
 * report's frame, as one string. */
static void frame_label(wss_fmt_t *f, const wss_frame_t *fr)
{
	const char *base = fr->module ? strrchr(fr->module->path, '/') : NULL;
	base = base ? base + 1 : fr->module ? fr->module->path : NULL;
	char buf[512];
	if (fr->function && fr->file)
		snprintf(buf, sizeof buf, "%s (%s:%d)%s", fr->function, fr->file, fr->line, fr->inlined ? " [inlined]" : "");
	else if (fr->function)
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64 "%s%s%s", fr->function, fr->function_offset, base ? " (" : "",
			 base ? base : "", base ? ")" : "");
	else if (base)
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64, base, fr->offset);
	else
		snprintf(buf, sizeof buf, "0x%" PRIx64 " (no module)", fr->addr);
	wss_fmt_json_str(f, buf);
}

/* A peak's sites with their stacks symbolised, every frame (an export
 * folds no runtime's frames: cli/out/pprof.c says why).  Returns 0 or
 * ENOMEM. */
static int te_sites(trace_t *t, wss_symbols_t *syms, const wss_peak_t *k, wss_frame_t **fr, size_t *cap)
{
	wss_fmt_t *f = &t->out->f;
	wss_fmt_str(f, ",\"sites\":[");
	for (size_t j = 0; j < k->nsites; j++) {
		const wss_site_t *site = &k->sites[j];
		const wss_stack_t *st = site->stack >= 0 ? wss_load_stack(t->p, site->stack) : NULL;
		uint64_t pc = site->pc ? site->pc : st && st->n ? st->frames[0] : 0;
		char hex[24];
		snprintf(hex, sizeof hex, "0x%" PRIx64, pc);
		j_i64(f, j ? ",{\"pages\":" : "{\"pages\":", site->pages);
		j_str(f, ",\"pc\":", hex);
		if (site->stack >= 0)
			j_i64(f, ",\"stack\":", site->stack);
		else
			wss_fmt_str(f, ",\"stack\":null");
		size_t n = 0;
		for (size_t a = 0; a < (st && st->n ? st->n : 1); a++)
			if (wss_sym_frames(syms, st && st->n ? st->frames[a] : pc, a > 0, fr, &n, cap))
				return ENOMEM;
		wss_fmt_str(f, ",\"frames\":[");
		for (size_t a = 0; a < n; a++) {
			if (a)
				wss_fmt_ch(f, ',');
			frame_label(f, &(*fr)[a]);
		}
		wss_fmt_str(f, "]}");
	}
	wss_fmt_ch(f, ']');
	return 0;
}

static int te_peaks(trace_t *t)
{
	const wss_profile_t *p = t->p;
	wss_symbols_t *syms = wss_sym_open(p);
	if (!syms)
		return ENOMEM;
	wss_frame_t *fr = NULL;
	size_t cap = 0;
	int r = 0;
	for (size_t i = 0; i < p->npeaks && !r; i++) {
		const wss_peak_t *k = &p->peaks[i];
		const wss_sample_t *s = wss_load_sample(p, k->seq);
		bool thread = !strncmp(k->series, "thread:", 7);
		int64_t tid = thread ? strtoll(k->series + 7, NULL, 10) : p->pid;
		char name[96];
		snprintf(name, sizeof name, "peak %zu: %s%s", i + 1, thread ? "thread " : "", thread ? k->series + 7 : k->series);
		te_begin(t, name, "i", s ? s->t_ns : 0, tid);
		wss_fmt_t *f = &t->out->f;
		j_i64(f, thread ? ",\"s\":\"t\",\"args\":{\"number\":" : ",\"s\":\"p\",\"args\":{\"number\":",
		      (int64_t)i + 1);
		j_i64(f, ",\"seq\":", k->seq);
		j_str(f, ",\"series\":", k->series);
		j_i64(f, ",\"value\":", k->value);
		j_num(f, ",\"mean\":", k->mean);
		j_num(f, ",\"threshold\":", k->threshold);
		r = te_sites(t, syms, k, &fr, &cap);
		wss_fmt_str(f, "}}");
		if (!r)
			r = wss_sink_flush(t->out, false);
	}
	free(fr);
	wss_sym_close(syms);
	return r;
}

/* Each thread's counters at each sample; a thread that leaves the
 * samples gets zeros at the first sample without it. */
static int te_threads(trace_t *t)
{
	const wss_profile_t *p = t->p;
	wss_u64map_t idx = {0};
	uint64_t *seen = calloc(p->nthreads ? p->nthreads : 1, sizeof *seen); /* last sample index + 1 */
	if (!seen)
		return ENOMEM;
	int r = 0;
	for (size_t k = 0; k < p->nthreads && !r; k++)
		r = wss_u64map_put(&idx, (uint64_t)p->threads[k].tid, k + 1);
	for (size_t k = 0; k < p->nsamples && !r; k++) {
		const wss_sample_t *s = &p->samples[k];
		for (size_t j = 0; j < s->nthreads; j++) {
			const wss_sample_thread_t *th = &p->sample_threads[s->thread_first + j];
			uint64_t i = wss_u64map_get(&idx, (uint64_t)th->tid);
			if (i)
				seen[i - 1] = k + 1;
			te_thread(t, s, th->tid, th->data, th->write);
		}
		const wss_sample_t *prev = k ? &p->samples[k - 1] : NULL;
		for (size_t j = 0; prev && j < prev->nthreads; j++) {
			int32_t tid = p->sample_threads[prev->thread_first + j].tid;
			uint64_t i = wss_u64map_get(&idx, (uint64_t)tid);
			if (i && seen[i - 1] == k)
				te_thread(t, s, tid, -1, -1);
		}
		r = wss_sink_flush(t->out, false);
	}
	free(seen);
	wss_u64map_free(&idx);
	return r;
}

static int export_trace(const wss_profile_t *p, wss_sink_t *out)
{
	trace_t t = {out, p, true};
	wss_fmt_t *f = &out->f;
	j_str(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"wss_profile\":", p->path);
	j_str(f, ",\"exe\":", p->exe);
	j_str(f, ",\"backend\":", p->backend);
	j_i64(f, ",\"page_size\":", p->page_size);
	wss_fmt_str(f, wss_load_sampled(p) ? ",\"sampled\":true" : ",\"sampled\":false");
	wss_fmt_str(f, "},\"traceEvents\":[");
	const char *base = strrchr(p->exe, '/');
	te_metadata(&t, "process_name", p->pid, base ? base + 1 : p->exe);
	for (size_t k = 0; k < p->nthreads; k++) {
		char name[64];
		int64_t tid = p->threads[k].tid;
		if (!tid)
			snprintf(name, sizeof name, "no thread known (tid 0)");
		else
			snprintf(name, sizeof name, "thread %" PRId64 "%s", tid, tid == p->pid ? " (main)" : "");
		te_metadata(&t, "thread_name", tid, name);
	}
	for (size_t k = 0; k < p->nsamples; k++) {
		const wss_sample_t *s = &p->samples[k];
		te_counter(&t, "data", s->t_ns, p->pid, s->data);
		if (s->read >= 0)
			te_counter(&t, "read", s->t_ns, p->pid, s->read);
		if (s->write >= 0)
			te_counter(&t, "write", s->t_ns, p->pid, s->write);
		if (s->code >= 0)
			te_counter(&t, "code", s->t_ns, p->pid, s->code);
	}
	int r = te_threads(&t);
	if (!r)
		r = te_peaks(&t);
	wss_fmt_str(f, "\n]}\n");
	return r ? r : wss_sink_flush(out, true);
}

/* ---- the command ---- */

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "wss: export: %s%s\n", what, arg ? arg : "");
	fputs("wss: try 'wss --help'\n", stderr);
	return EXIT_USAGE;
}

static int by_seq(const void *a, const void *b)
{
	const wss_peak_t *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static bool table_header = true;

static int export_table_csv(const wss_profile_t *p, wss_sink_t *out)
{
	int r = wss_export_table(p, out, false, table_header);
	table_header = false;
	return r;
}

static int export_table_json(const wss_profile_t *p, wss_sink_t *out) { return wss_export_table(p, out, true, false); }

static const struct format {
	const char *name;
	int (*write)(const wss_profile_t *p, wss_sink_t *out);
	unsigned load_flags;
	bool binary, several; /* several: profiles in one output, one after another */
} formats[] = {
	{"csv", export_csv, WSS_LOAD_THREAD_SAMPLES, false, false},
	{"pprof", wss_export_pprof, 0, true, false},
	{"perfetto", export_trace, WSS_LOAD_THREAD_SAMPLES, false, false},
	{"table", export_table_csv, 0, false, true},
	{"jsonl", export_table_json, 0, false, true},
};

/* One profile through fm into sink.  Returns 0, the loader's status (its
 * line said why), or an errno with WSS_EXPORT_ERRNO added. */
#define WSS_EXPORT_ERRNO 1000
static int export_one(const struct format *fm, const char *path, wss_sink_t *sink)
{
	wss_profile_t p;
	int r = wss_load_profile_flags(path, &p, fm->load_flags);
	if (r)
		return r;
	if (p.npeaks > 1) /* peaks are numbered in time order, as in the report */
		qsort(p.peaks, p.npeaks, sizeof *p.peaks, by_seq);
	r = fm->write(&p, sink);
	wss_load_release(&p);
	return r ? WSS_EXPORT_ERRNO + r : 0;
}

static int export_paths(const char *format, const char *output, const char **paths, size_t npaths);

int wss_cmd_export(int argc, char **argv)
{
	const char *format = NULL, *output = NULL;
	const char **paths = calloc((size_t)argc + 1, sizeof *paths);
	size_t npaths;
	const wss_opt_t opts[] = {{"--format", &format, NULL}, {"-o", &output, NULL}, {"--output", &output, NULL}};
	int r = paths ? wss_opts_parse("export", argc, argv, opts, sizeof opts / sizeof *opts, paths, (size_t)argc, &npaths,
				       "wss export --format csv|pprof|perfetto|table|jsonl [-o OUT] PROFILE...")
		      : 1;
	if (!paths)
		perror("wss");
	r = r ? r : export_paths(format, output, paths, npaths);
	free(paths);
	return r;
}

static int export_paths(const char *format, const char *output, const char **paths, size_t npaths)
{
	int r;
	if (output && !strcmp(output, "-"))
		output = NULL; /* stdout, as the usual convention has it */
	if (!format)
		return usage_error("no format given (--format csv, pprof, perfetto, table or jsonl)", NULL);
	const struct format *fm = NULL;
	for (size_t k = 0; k < sizeof formats / sizeof *formats; k++)
		if (!strcmp(format, formats[k].name))
			fm = &formats[k];
	if (!fm) {
		fprintf(stderr, "wss: export: unknown format '%s' (csv, pprof, perfetto, table or jsonl)\n", format);
		return EXIT_USAGE;
	}
	if (!npaths)
		return usage_error("no profile given", NULL);
	if (npaths > 1 && !fm->several)
		return usage_error("one profile at a time (several with --format table or jsonl): ", paths[1]);
	if (fm->binary && !output && isatty(1)) {
		fprintf(stderr, "wss: export: a pprof profile is gzipped binary, not for a terminal: use -o FILE or a redirection\n");
		return EXIT_USAGE;
	}
	wss_outfile_t o = {.fd = 1, .dirfd = -1};
	if (output && (r = wss_outfile_open(&o, output, WSS_OUTFILE_REPLACE))) {
		bool refused = wss_outfile_refused(&o, output);
		if (!refused)
			wss_text_output_error(output, r);
		wss_outfile_close(&o, false);
		return refused ? WSS_EXIT_REFUSED : EXIT_USAGE;
	}
	wss_sink_t sink = {o.fd, 0, {0}};
	r = wss_fmt_init_growable(&sink.f, 2 * SINK_CHUNK);
	for (size_t k = 0; !r && k < npaths; k++)
		r = export_one(fm, paths[k], &sink);
	wss_fmt_release(&sink.f);
	if (r && r < WSS_EXPORT_ERRNO) { /* a profile that could not be read: its line was printed */
		if (output)
			wss_outfile_close(&o, false);
		return r;
	}
	r = r ? r - WSS_EXPORT_ERRNO : 0;
	int closed = output ? wss_outfile_close(&o, !r) : 0;
	if (!r)
		r = closed;
	if (r == ENOMEM && !sink.err) {
		fprintf(stderr, "wss: export: %s\n", strerror(r));
		return 1;
	}
	if (r) {
		fprintf(stderr, "wss: %s: %s\n", output ? output : "stdout", strerror(r));
		return output ? EXIT_USAGE : 1;
	}
	return 0;
}
