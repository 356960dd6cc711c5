/* The session's table: the first profile's process notes name the
 * session's other profiles (resolved by the loader relative to the first
 * profile, so a session moved whole still reads); each is loaded in turn,
 * kept as one row of figures and released, so a build of a thousand
 * processes holds one profile at a time.  Totals are summed per process:
 * pages two processes touched, shared memory above all, count in each. */
#include "config.h"
#include "cli/model/session.h"

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/analyses.h"
#include "cli/model/json.h"
#include "cli/out/text.h"
#include "common/pattern.h"

bool wss_session_wanted(const wss_profile_t *first)
{
	for (size_t k = 0; k < first->nprocs; k++)
		if ((first->procs[k].profile || first->procs[k].exe) && first->procs[k].pid != first->pid)
			return true;
	return false;
}

/* The interval of a figure, or the figure itself where it was counted. */
static void bounds(int64_t v, const wss_ci_t *ci, double *lo, double *hi)
{
	*lo = ci->present ? ci->lo : (double)v;
	*hi = ci->present ? ci->hi : (double)v;
}

/* Appends *row (program its exe, path its profile or NULL, copied),
 * summed into the session's total.  Returns 0 or ENOMEM. */
static int push_row(wss_session_t *s, size_t *cap, wss_session_row_t row, const char *exe, const char *path)
{
	if (s->nrows == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		wss_session_row_t *v = realloc(s->rows, c * sizeof *v);
		if (!v)
			return ENOMEM;
		s->rows = v;
		*cap = c;
	}
	exe = exe ? exe : "?";
	const char *slash = strrchr(exe, '/');
	wss_session_row_t *r = &s->rows[s->nrows];
	*r = row;
	r->program = strdup(slash ? slash + 1 : exe);
	r->path = path ? strdup(path) : NULL;
	if (!r->program || (path && !r->path)) {
		free(r->program);
		free(r->path);
		return ENOMEM;
	}
	s->nrows++;
	if (r->data.total < 0) {
		if (r->no_total)
			s->no_total++;
		else
			s->no_summary++;
		return 0;
	}
	double lo, hi;
	bounds(r->data.total, &r->data.total_ci, &lo, &hi);
	s->total = wss_load_sat_addu(s->total, (uint64_t)r->data.total);
	s->total_lo = wss_load_sat_addu(s->total_lo, (uint64_t)floor(lo));
	s->total_hi = wss_load_sat_addu(s->total_hi, (uint64_t)ceil(hi));
	if (r->shared > 0) {
		bounds(r->shared, &r->shared_ci, &lo, &hi);
		s->shared = wss_load_sat_addu(s->shared, (uint64_t)r->shared);
		s->shared_lo = wss_load_sat_addu(s->shared_lo, (uint64_t)floor(lo));
		s->shared_hi = wss_load_sat_addu(s->shared_hi, (uint64_t)ceil(hi));
	}
	s->estimated |= r->data.total_ci.present || r->shared_ci.present;
	return 0;
}

static int add_row(wss_session_t *s, wss_profile_t *p, size_t *cap)
{
	wss_load_stats(p);
	if (s->page_size <= 0)
		s->page_size = p->page_size;
	wss_session_row_t row = {
		.pid = p->pid,
		.data = p->data,
		.shared = p->kinds[WSS_KIND_SHARED].present ? p->kinds[WSS_KIND_SHARED].total : -1,
		.shared_ci = p->kinds[WSS_KIND_SHARED].total_ci,
		.sampled = wss_load_sampled(p),
		.no_total = p->has_summary && p->data.total < 0,
	};
	return push_row(s, cap, row, p->exe, p->path);
}

/* A program that ended within its first interval: what its note says it
 * measured (no shared part: a note does not break its total down). */
static int add_note_row(wss_session_t *s, const wss_process_note_t *n, size_t *cap)
{
	wss_session_row_t row = {
		.pid = n->pid,
		.data = {.present = true, .peak = n->data_peak, .total = n->data_total, .peak_ci = n->peak_ci,
			 .total_ci = n->total_ci},
		.shared = -1,
		.sampled = n->peak_ci.present || n->total_ci.present,
	};
	row.data.avg_tenths = -1;
	return push_row(s, cap, row, n->exe, NULL);
}

static int by_peak_desc(const void *a, const void *b)
{
	const wss_session_row_t *x = a, *y = b;
	if (x->data.peak != y->data.peak)
		return x->data.peak < y->data.peak ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The distinct values of v[0..n), sorted in place: a build's notes run to
 * tens of thousands, too many to compare in pairs. */
static size_t distinct(int64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, by_value);
	size_t d = 0;
	for (size_t k = 0; k < n; k++)
		d += !k || v[k] != v[k - 1];
	return d;
}

int wss_session_build(wss_profile_t *first, wss_session_t *s)
{
	memset(s, 0, sizeof *s);
	size_t cap = 0;
	int64_t *pids = malloc((first->nprocs + 1) * sizeof *pids);
	int r = pids ? add_row(s, first, &cap) : ENOMEM;
	for (size_t k = 0; !r && k < first->nprocs; k++) {
		const wss_process_note_t *n = &first->procs[k];
		pids[k] = n->pid;
		if (!n->profile) {
			if (n->exe && n->pid != first->pid && (r = add_note_row(s, n, &cap)))
				break;
			continue;
		}
		wss_profile_t p;
		int lr = wss_load_profile(n->profile, &p);
		if (lr == 1)
			r = ENOMEM;
		else if (lr)
			s->unreadable++;
		else {
			r = add_row(s, &p, &cap);
			wss_load_release(&p);
		}
	}
	if (r) {
		free(pids);
		wss_session_release(s);
		return r;
	}
	pids[first->nprocs] = first->pid;
	s->processes = distinct(pids, first->nprocs + 1);
	s->profiles = 0;
	/* A pid with a profile's row wrote one (one per image that lived an
	 * interval); one with a note's row was measured without one; the
	 * others wrote none, or none that could be read. */
	size_t np = 0;
	for (size_t k = 0; k < s->nrows; k++)
		if (s->rows[k].path)
			pids[np++] = s->rows[k].pid;
	s->profiles = np;
	s->with = distinct(pids, np);
	np = 0;
	for (size_t k = 0; k < s->nrows; k++)
		pids[np++] = s->rows[k].pid;
	size_t measured = distinct(pids, np);
	free(pids);
	s->counted = measured > s->with ? measured - s->with : 0;
	s->without = s->processes > measured ? s->processes - measured : 0;
	qsort(s->rows, s->nrows, sizeof *s->rows, by_peak_desc);
	return 0;
}

int wss_session_build_many(char *const *paths, size_t n, const char *name, wss_session_t *s)
{
	memset(s, 0, sizeof *s);
	size_t cap = 0;
	int r = 0;
	for (size_t k = 0; k < n && !r; k++) {
		wss_profile_t p;
		wss_session_t one;
		int lr = wss_load_profile(paths[k], &p);
		if (lr) {
			r = lr == 1 ? ENOMEM : 0;
			s->unreadable++;
			continue;
		}
		r = wss_session_build(&p, &one);
		wss_load_release(&p);
		if (r)
			break;
		if (s->nrows + one.nrows > cap) {
			size_t c = 2 * (s->nrows + one.nrows);
			wss_session_row_t *v = realloc(s->rows, c * sizeof *v);
			if (!v) {
				wss_session_release(&one);
				r = ENOMEM;
				break;
			}
			s->rows = v;
			cap = c;
		}
		memcpy(s->rows + s->nrows, one.rows, one.nrows * sizeof *one.rows);
		s->nrows += one.nrows;
		free(one.rows);
		s->processes += one.processes;
		s->with += one.with;
		s->counted += one.counted;
		s->without += one.without;
		s->profiles += one.profiles;
		s->unreadable += one.unreadable;
		s->no_summary += one.no_summary;
		s->no_total += one.no_total;
		s->page_size = s->page_size ? s->page_size : one.page_size;
		s->total = wss_load_sat_addu(s->total, one.total);
		s->total_lo = wss_load_sat_addu(s->total_lo, one.total_lo);
		s->total_hi = wss_load_sat_addu(s->total_hi, one.total_hi);
		s->shared = wss_load_sat_addu(s->shared, one.shared);
		s->shared_lo = wss_load_sat_addu(s->shared_lo, one.shared_lo);
		s->shared_hi = wss_load_sat_addu(s->shared_hi, one.shared_hi);
		s->estimated |= one.estimated;
	}
	if (r) {
		wss_session_release(s);
		return r;
	}
	qsort(s->rows, s->nrows, sizeof *s->rows, by_peak_desc);
	s->name = name;
	return 0;
}

void wss_session_release(wss_session_t *s)
{
	for (size_t k = 0; k < s->nrows; k++) {
		free(s->rows[k].program);
		free(s->rows[k].path);
	}
	free(s->rows);
	memset(s, 0, sizeof *s);
}

/* "≈ 12,345UNIT ± 3.1 % (48.2 MiB)", or "12,345UNIT (48.2 MiB)" where
 * counted (no MiB for ps 0), "?" without a value. */
static const char *figure(char *buf, size_t n, int64_t v, const char *unit, const wss_ci_t *ci, bool approx,
			  int64_t ps)
{
	char g[32];
	if (v < 0)
		return "?";
	if (ci && wss_ci_counted(ci, (double)v))
		approx = false, ci = NULL;
	int len = snprintf(buf, n, "%s%s%s", approx ? "\u2248 " : "", wss_text_grouped(g, sizeof g, (uint64_t)v), unit);
	if (ci && ci->present && v > 0 && len > 0 && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len, " \u00b1 %.1f %%",
				100.0 * fmax((double)v - ci->lo, ci->hi - (double)v) / (double)v);
	if (ps > 0 && len > 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, " (%.1f MiB)", (double)v * (double)ps / (1 << 20));
	return buf;
}

/* Display width of UTF-8 text: its bytes less continuation bytes. */
static int width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void pad(FILE *out, const char *s, int w)
{
	fputs(s, out);
	for (int k = width(s); k < w; k++)
		fputc(' ', out);
}

void wss_session_text(const wss_session_t *s, FILE *out, const char *prefix)
{
	size_t top = s->nrows < WSS_SESSION_TOP ? s->nrows : WSS_SESSION_TOP;
	const char *name = s->name ? s->name : "session";
	fprintf(out, "%s%s: %zu process%s, %zu with a profile", prefix, name, s->processes, s->processes == 1 ? "" : "es",
		s->with);
	if (s->counted)
		fprintf(out, ", %zu measured in %s note (%s ended within an interval)", s->counted,
			s->counted == 1 ? "its" : "their", s->counted == 1 ? "it" : "they");
	if (s->without)
		fprintf(out, " and %zu not measured", s->without);
	if (s->unreadable)
		fprintf(out, " (%zu profile%s could not be read)", s->unreadable, s->unreadable == 1 ? "" : "s");
	if (s->nrows > top)
		fprintf(out, "; the %zu largest data peaks of %zu:\n", top, s->nrows);
	else
		fprintf(out, "; by data peak:\n");
	char peak[WSS_SESSION_TOP][96], total[WSS_SESSION_TOP][96];
	int wp = width("data peak, pages");
	for (size_t k = 0; k < top; k++) {
		const wss_session_row_t *r = &s->rows[k];
		figure(peak[k], sizeof peak[k], r->data.peak, "", &r->data.peak_ci, r->sampled, s->page_size);
		if (r->data.total < 0)
			snprintf(total[k], sizeof total[k], "%s",
				 r->no_total ? "? (reference bits: no distinct count)" : "? (no summary: still running, or killed)");
		else
			figure(total[k], sizeof total[k], r->data.total, "", &r->data.total_ci, r->sampled, s->page_size);
		if (width(peak[k]) > wp)
			wp = width(peak[k]);
	}
	int wn = width("program");
	for (size_t k = 0; k < top; k++)
		if (width(s->rows[k].program) > wn)
			wn = width(s->rows[k].program);
	if (wn > 24)
		wn = 24;
	fprintf(out, "%s%8s  %-*s  ", prefix, "pid", wn, "program");
	pad(out, "data peak, pages", wp);
	fputs("  data total\n", out);
	for (size_t k = 0; k < top; k++) {
		fprintf(out, "%s%8" PRId64 "  %-*.*s  ", prefix, s->rows[k].pid, wn, wn, s->rows[k].program);
		pad(out, peak[k], wp);
		fprintf(out, "  %s\n", total[k]);
	}
	char t[96], sh[96];
	wss_ci_t tci = {s->estimated, (double)s->total_lo, (double)s->total_hi};
	wss_ci_t sci = {s->estimated, (double)s->shared_lo, (double)s->shared_hi};
	fprintf(out, "%s%s total: %s, the sum of the processes' data totals (each process counts the pages it touched",
		prefix, name, figure(t, sizeof t, (int64_t)s->total, " pages", &tci, s->estimated, s->page_size));
	if (s->no_summary)
		fprintf(out, "; %zu profile%s without a summary left out", s->no_summary, s->no_summary == 1 ? "" : "s");
	if (s->no_total)
		fprintf(out, "; %zu measured by reference bits, which count no distinct pages, left out", s->no_total);
	fputs(")\n", out);
	fprintf(out, "%s%s (%.1f %%) of it shared memory, counted in each process that touched it\n", prefix,
		figure(sh, sizeof sh, (int64_t)s->shared, " pages", &sci, s->estimated && s->shared, 0),
		s->total ? 100.0 * (double)s->shared / (double)s->total : 0.0);
}

int wss_session_header(const char *path, wss_json_doc_t *doc)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, f);
	fclose(f);
	wss_json_error_t err;
	int r = n > 0 && !wss_json_parse(line, (size_t)n, doc, &err) ? 0 : -1;
	free(line);
	if (r)
		return -1;
	const char *type = wss_json_get_str(doc->root, "type");
	if (type && !strcmp(type, "header"))
		return 0;
	wss_json_free(doc);
	return -1;
}

/* Is the profile at path the one the program's first image wrote: its
 * header's pid, started after t0_ns (not an earlier run's under a
 * recycled pid)? */
static bool first_profile_is(const char *path, pid_t pid, int64_t t0_ns)
{
	wss_json_doc_t doc;
	if (wss_session_header(path, &doc))
		return false;
	int64_t p, t;
	bool is = wss_json_get_int(doc.root, "pid", &p) && p == pid &&
		  (!wss_json_get_int(doc.root, "start_unix_ns", &t) || t >= t0_ns - 1000000000);
	wss_json_free(&doc);
	return is;
}

/* fn on each profile the pattern names that pid wrote after t0_ns
 * (first_profile_is), until fn returns true. */
static void find_each(const char *pattern, pid_t pid, int64_t t0_ns, bool (*fn)(const char *path, void *arg),
		      void *arg)
{
	char g[3 * WSS_OUTPUT_MAX + 32];
	size_t o = 0;
	for (const char *p = pattern; *p && o < sizeof g - 32; p++) {
		if (*p == '%' && p[1] == 'p')
			o += (size_t)snprintf(g + o, sizeof g - o, "%d", (int)pid);
		else if (*p == '%' && p[1] == 't')
			o += (size_t)snprintf(g + o, sizeof g - o, "[0-9]*-[0-9]*");
		else if (*p == '%' && p[1] == 'n')
			g[o++] = '*';
		else if (*p == '%')
			g[o++] = '%';
		else {
			if (strchr("*?[]\\{},", *p))
				g[o++] = '\\';
			g[o++] = *p;
			continue;
		}
		p++;
	}
	snprintf(g + o, sizeof g - o, "{,.[1-9]*}");
	glob_t gl;
	if (glob(g, GLOB_BRACE, NULL, &gl) == 0) {
		for (size_t k = 0; k < gl.gl_pathc; k++)
			if (first_profile_is(gl.gl_pathv[k], pid, t0_ns) && fn(gl.gl_pathv[k], arg))
				break;
		globfree(&gl);
	}
}

static bool take_first(const char *path, void *arg)
{
	*(char **)arg = strdup(path);
	return true;
}

char *wss_session_find_first(const char *pattern, pid_t pid, int64_t t0_ns)
{
	char *found = NULL;
	find_each(pattern, pid, t0_ns, take_first, &found);
	return found;
}

typedef struct found_all {
	char **v;
	size_t n, cap;
} found_all_t;

static bool take_each(const char *path, void *arg)
{
	found_all_t *f = arg;
	char *d = strdup(path);
	if (d && !wss_reserve(&f->v, &f->cap, f->n + 1, sizeof *f->v))
		f->v[f->n++] = d;
	else
		free(d);
	return false;
}

size_t wss_session_find_all(const char *pattern, pid_t pid, int64_t t0_ns, char ***paths)
{
	found_all_t f = {NULL, 0, 0};
	find_each(pattern, pid, t0_ns, take_each, &f);
	*paths = f.v;
	return f.n;
}
