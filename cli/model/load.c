/* The profile reader (load.h).  One line at a time through the strict JSON
 * parser; only what the reports need is kept, so memory grows with the
 * number of samples and threads, not with the file.  A last line without
 * its newline is the record a killed program was writing: it is used if it
 * is complete and ignored (and reported) if it is cut.  This file opens the
 * profile, checks a record's members for the readers (the header's in
 * cli/model/load_header.c, the other records' in cli/model/load_records.c), hands each
 * record to its reader, and holds what the reports ask of the result. */
#include "config.h"
#include "cli/model/load.h"
#include "cli/model/load_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/json.h"

/* "wss: PATH:LINE: what" (no line when line is 0); returns the status. */
int wss_load_bad(loader_t *ld, long line, const char *fmt, ...)
{
	if (ld->status)
		return ld->status;
	if (line)
		fprintf(stderr, "wss: %s:%ld: ", ld->p->path, line);
	else
		fprintf(stderr, "wss: %s: ", ld->p->path);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return ld->status = WSS_EXIT_BADINPUT;
}

int wss_load_nomem(loader_t *ld)
{
	if (!ld->status) {
		fprintf(stderr, "wss: %s: out of memory\n", ld->p->path);
		ld->status = 1;
	}
	return ld->status;
}

/* Room for one more element in a growing array. */
void *wss_load_grow(loader_t *ld, void **items, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *m = realloc(*items, c * size);
		if (!m) {
			wss_load_nomem(ld);
			return NULL;
		}
		*items = m;
		*cap = c;
	}
	void *slot = (char *)*items + (*n)++ * size;
	memset(slot, 0, size);
	return slot;
}

char *wss_load_dup(loader_t *ld, const char *s)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		wss_load_nomem(ld);
	return d;
}

/* A required integer member, 0 <= value < limit; what names the limit in
 * the error ("2^62", "2^63 bytes of pages"). */
static bool need_below(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t limit,
		       const char *what, int64_t *out)
{
	if (!wss_json_get_int(o, key, out) || *out < 0) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" missing or not a non-negative integer", rec, key);
		return false;
	}
	if (*out >= limit) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" %lld is out of range (%s or more)", rec, key, (long long)*out,
			     what);
		return false;
	}
	return true;
}

/* A required non-negative integer member (a time, an id, a count). */
bool wss_load_need_int(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return need_below(ld, o, rec, key, LOAD_INT_LIMIT, "2^62", out);
}

/* A required count of pages. */
bool wss_load_need_pages(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return need_below(ld, o, rec, key, ld->pages_limit, "2^63 bytes of pages", out);
}

/* Optional ones: absent is fine (out unchanged), a wrong type is not. */
bool wss_load_opt_int(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return !wss_json_get(o, key) || wss_load_need_int(ld, o, rec, key, out);
}

bool wss_load_opt_pages(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return !wss_json_get(o, key) || wss_load_need_pages(ld, o, rec, key, out);
}

bool wss_load_need_str(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out)
{
	const char *s = wss_json_get_str(o, key);
	if (!s) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" missing or not a string", rec, key);
		return false;
	}
	return (*out = wss_load_dup(ld, s)) != NULL;
}

bool wss_load_opt_str(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out)
{
	if (!wss_json_get(o, key))
		return true;
	return wss_load_need_str(ld, o, rec, key, out);
}

char *wss_load_beside(const char *profile, const char *name)
{
	const char *slash = strrchr(profile, '/');
	int dir = slash && name[0] != '/' ? (int)(slash - profile) + 1 : 0;
	size_t n = (size_t)dir + strlen(name) + 1;
	char *path = malloc(n);
	if (path)
		snprintf(path, n, "%.*s%s", dir, profile, name);
	return path;
}

/* A member naming a file relative to the profile's directory (or
 * absolute), as a path from here. */
bool wss_load_opt_beside(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out)
{
	char *rel = NULL;
	if (!wss_load_opt_str(ld, o, rec, key, &rel) || !rel)
		return !ld->status;
	*out = wss_load_beside(ld->p->path, rel);
	free(rel);
	if (!*out)
		wss_load_nomem(ld);
	return *out != NULL;
}

/* An optional boolean member. */
bool wss_load_opt_bool(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, bool *out)
{
	const wss_json_t *v = wss_json_get(o, key);
	if (!v)
		return true;
	if (v->type != WSS_JSON_BOOL) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" is not true or false", rec, key);
		return false;
	}
	*out = v->b;
	return true;
}

/* An optional object member: NULL in *out when absent. */
bool wss_load_opt_obj(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, const wss_json_t **out)
{
	*out = wss_json_get(o, key);
	if (*out && (*out)->type != WSS_JSON_OBJECT) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" is not an object", rec, key);
		return false;
	}
	return true;
}

/* An optional 95 % interval [lo, hi]: two numbers, 0 <= lo <= hi. */
bool wss_load_opt_ci(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, wss_ci_t *out)
{
	const wss_json_t *v = wss_json_get(o, key);
	if (!v)
		return true;
	if (v->type != WSS_JSON_ARRAY || v->n != 2 || v->items[0]->type != WSS_JSON_NUMBER ||
	    v->items[1]->type != WSS_JSON_NUMBER || !(v->items[0]->d >= 0) || !(v->items[0]->d <= v->items[1]->d)) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" is not an interval [lo, hi] with 0 <= lo <= hi", rec, key);
		return false;
	}
	/* The bounds are counts of pages (an interval's pages or tenths'
	 * worth): the reports scale them by the page size and by ten. */
	if (!(v->items[1]->d < (double)ld->pages_limit)) {
		wss_load_bad(ld, ld->line, "%s: \"%s\" upper bound %g is out of range (2^63 bytes of pages or more)",
			     rec, key, v->items[1]->d);
		return false;
	}
	*out = (wss_ci_t){true, v->items[0]->d, v->items[1]->d};
	return true;
}

static const char *const series_keys[WSS_SERIES_N] = {"data", "read", "write"};

/* A sample's or a thread's "ci": {"data":[lo,hi],"read":...,"write":...},
 * each optional. */
bool wss_load_opt_cis(loader_t *ld, const wss_json_t *o, const char *rec, wss_ci_t ci[WSS_SERIES_N])
{
	const wss_json_t *c;
	if (!wss_load_opt_obj(ld, o, rec, "ci", &c))
		return false;
	char sub[64];
	snprintf(sub, sizeof sub, "%s: ci", rec);
	for (int k = 0; c && k < WSS_SERIES_N; k++)
		if (!wss_load_opt_ci(ld, c, sub, series_keys[k], &ci[k]))
			return false;
	return true;
}

/* An address: a string "0x" and 1 to 16 hex digits. */
bool wss_load_parse_addr(const wss_json_t *v, uint64_t *out)
{
	if (!v || v->type != WSS_JSON_STRING || v->len < 3 || v->len > 18 || v->s[0] != '0' || v->s[1] != 'x')
		return false;
	uint64_t a = 0;
	for (size_t k = 2; k < v->len; k++) {
		char c = v->s[k];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16;
		if (d == 16)
			return false;
		a = a << 4 | d;
	}
	*out = a;
	return true;
}

bool wss_load_need_addr(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, uint64_t *out)
{
	if (wss_load_parse_addr(wss_json_get(o, key), out))
		return true;
	wss_load_bad(ld, ld->line, "%s: \"%s\" missing or not a hex address (\"0x...\")", rec, key);
	return false;
}

static int load_record(loader_t *ld, const wss_json_t *r)
{
	const char *type = wss_json_get_str(r, "type");
	if (!type)
		return wss_load_bad(ld, ld->line, "not a wss record (%s)",
			   r->type == WSS_JSON_OBJECT ? "no \"type\"" : "not a JSON object");
	if (!strcmp(type, "sample")) {
		if (ld->summary_line)
			return wss_load_bad(ld, ld->line, "a sample after the summary (line %ld)", ld->summary_line);
		return wss_load_read_sample(ld, r);
	}
	if (!strcmp(type, "summary")) {
		if (ld->p->has_summary)
			return wss_load_bad(ld, ld->line, "a second summary");
		ld->summary_line = ld->line;
		return wss_load_read_summary(ld, r);
	}
	if (!strcmp(type, "module"))
		return wss_load_read_module(ld, r);
	if (!strcmp(type, "stack"))
		return wss_load_read_stack(ld, r);
	if (!strcmp(type, "peak"))
		return wss_load_read_peak(ld, r);
	if (!strcmp(type, "sites"))
		return wss_load_read_run_sites(ld, r);
	if (!strcmp(type, "process"))
		return wss_load_read_process(ld, r);
	if (!strcmp(type, "alloc_sites"))
		return wss_load_read_alloc_sites(ld, r);
	if (!strcmp(type, "trace")) {
		/* The page trace beside the profile (docs/trace-format.md). */
		const char *file = wss_json_get_str(r, "file");
		if (!file || !*file || strchr(file, '/'))
			return wss_load_bad(ld, ld->line, "trace: \"file\" missing or not a file name (the trace lies beside the profile)");
		if (ld->p->trace)
			return wss_load_bad(ld, ld->line, "a second trace record");
		if (!(ld->p->trace = strdup(file)))
			return wss_load_nomem(ld);
		return 0;
	}
	if (!strcmp(type, "header"))
		return wss_load_bad(ld, ld->line, "a second header (two profiles in one file?)");
	return 0; /* a record type added later within version 1 */
}

int wss_load_profile(const char *path, wss_profile_t *p) { return wss_load_profile_flags(path, p, 0); }

int wss_load_profile_flags(const char *path, wss_profile_t *p, unsigned flags)
{
	memset(p, 0, sizeof *p);
	p->path = path;
	p->version = p->pid = p->ppid = p->page_size = p->interval_ns = p->window_intervals = p->window_ns = -1;
	p->summary_samples = p->duration_ns = p->faults = p->summary_rate_max = -1;
	p->trace_records = p->trace_pages = p->trace_bytes = p->trace_last = -1;
	p->start_unix_ns = -1;
	loader_t ld = {.p = p, .flags = flags};
	FILE *f = fopen(path, "r");
	if (!f)
		return wss_load_bad(&ld, 0, "%s", strerror(errno));
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	while (!ld.status && (n = getline(&buf, &cap, f)) >= 0) {
		ld.line++;
		bool complete = n > 0 && buf[n - 1] == '\n';
		size_t len = (size_t)n - complete;
		wss_json_doc_t doc;
		wss_json_error_t err;
		int r = wss_json_parse(buf, len, &doc, &err);
		if (r == ENOMEM) {
			wss_load_nomem(&ld);
			break;
		}
		if (r && !complete && ld.line > 1) {
			/* The record a killed program was writing: not part of
			 * the profile. */
			p->cut_line = ld.line;
			break;
		}
		if (ld.line == 1) {
			if (r)
				wss_load_bad(&ld, 1, "not a wss profile (%s: column %zu: %s)", complete ? "not JSON" : "not JSON, and no newline",
				    err.column, err.msg);
			else if (!wss_json_get_str(doc.root, "type") || strcmp(wss_json_get_str(doc.root, "type"), "header"))
				wss_load_bad(&ld, 1, "not a wss profile (the first line is not a wss header record)");
			else
				wss_load_read_header(&ld, doc.root);
		} else if (r)
			wss_load_bad(&ld, ld.line, "invalid JSON: column %zu: %s", err.column, err.msg);
		else
			load_record(&ld, doc.root);
		if (!r)
			wss_json_free(&doc);
		if (complete)
			p->lines = ld.line;
	}
	if (!ld.status && ferror(f))
		wss_load_bad(&ld, 0, "%s", strerror(errno));
	else if (!ld.status && ld.line == 0)
		wss_load_bad(&ld, 0, "empty file, not a wss profile");
	else if (!ld.status && p->has_summary && p->summary_samples != (int64_t)p->nsamples)
		wss_load_bad(&ld, ld.summary_line,
			     "summary: \"samples\" %lld, but the profile holds %zu (samples missing)",
			     (long long)p->summary_samples, p->nsamples);
	free(buf);
	fclose(f);
	if (ld.status)
		wss_load_release(p);
	else
		wss_load_stats(p);
	return ld.status;
}

static void stat_from_samples(const wss_profile_t *p, size_t off, wss_stat_t *st)
{
	uint64_t sum = 0;
	int64_t peak = 0;
	for (size_t k = 0; k < p->nsamples; k++) {
		int64_t v = *(const int64_t *)((const char *)&p->samples[k] + off);
		if (v < 0)
			continue;
		sum = wss_load_sat_addu(sum, (uint64_t)v);
		if (v > peak)
			peak = v;
	}
	st->present = true;
	st->avg_tenths = (int64_t)wss_load_avg_tenths(sum, p->nsamples);
	st->peak = peak;
	st->total = -1;
}

/* A thread's pages are some of its process's in the same interval: an
 * estimated thread peak above the summary's (which the census may have
 * brought within the run's total) is brought down to it. */
static void cap_threads(wss_profile_t *p)
{
	for (size_t k = 0; k < p->nthreads; k++) {
		wss_load_thread_t *t = &p->threads[k];
		if (!t->estimated)
			continue;
		if (p->data.present && p->data.peak >= 0 && t->data_peak > (uint64_t)p->data.peak)
			t->data_peak = (uint64_t)p->data.peak;
		if (p->write.present && p->write.peak >= 0 && t->write_peak > (uint64_t)p->write.peak)
			t->write_peak = (uint64_t)p->write.peak;
	}
}

void wss_load_stats(wss_profile_t *p)
{
	if (p->has_summary) {
		cap_threads(p);
		return;
	}
	stat_from_samples(p, offsetof(wss_sample_t, data), &p->data);
	if (p->has_read)
		stat_from_samples(p, offsetof(wss_sample_t, read), &p->read);
	if (p->has_write)
		stat_from_samples(p, offsetof(wss_sample_t, write), &p->write);
	if (p->has_code)
		stat_from_samples(p, offsetof(wss_sample_t, code), &p->code);
}

bool wss_load_sampled(const wss_profile_t *p) { return p->summary_sampled || p->nsampled > 0; }

bool wss_load_lower_bound(const wss_profile_t *p) { return p->summary_lower_bound || p->nlower > 0; }

double wss_load_overhead_pct(const wss_profile_t *p)
{
	if (!p->has_cost || p->cost_program_ns <= 0)
		return -1;
	double prog = (double)p->cost_program_ns;
	double base = (double)(p->cost_base_ns > 0 ? p->cost_base_ns : p->cost_program_ns);
	return 100.0 * (((double)p->cost_faults_ns + (double)p->cost_code_ns) / prog +
			((double)p->cost_tick_ns + (double)p->cost_change_ns) / base);
}

const wss_sample_t *wss_load_sample(const wss_profile_t *p, int64_t seq)
{
	/* The loader holds seq to 1, 2, 3, ... in file order. */
	if (seq >= 1 && (size_t)seq <= p->nsamples)
		return &p->samples[seq - 1];
	return NULL;
}

const wss_stack_t *wss_load_stack(const wss_profile_t *p, int64_t id)
{
	for (size_t k = 0; k < p->nstacks; k++)
		if (p->stacks[k].id == id)
			return &p->stacks[k];
	return NULL;
}

void wss_load_release(wss_profile_t *p)
{
	free(p->tool);
	free(p->exe);
	free(p->kernel);
	free(p->host);
	free(p->backend);
	free(p->backend_reason);
	free(p->backend_sees);
	free(p->time_base);
	free(p->trace);
	free(p->trace_stopped);
	free(p->precision_note);
	free(p->census_off);
	free(p->track_mode);
	free(p->config_file);
	free(p->session_dir);
	free(p->code_off);
	for (size_t k = 0; k < p->code_nexcluded; k++)
		free(p->code_excluded[k]);
	free(p->code_excluded);
	for (size_t k = 0; k < p->nsettings; k++) {
		free(p->settings[k].key);
		free(p->settings[k].value);
		free(p->settings[k].source);
	}
	free(p->settings);
	free(p->sites);
	free(p->alloc_sites);
	for (size_t k = 0; k < p->nprocs; k++) {
		free(p->procs[k].profile);
		free(p->procs[k].reason);
		free(p->procs[k].exe);
	}
	free(p->procs);
	free(p->sample_threads);
	for (size_t k = 0; k < p->argc; k++)
		free(p->argv[k]);
	free(p->argv);
	free(p->samples);
	free(p->threads);
	free(p->thread_index);
	for (size_t k = 0; k < p->nmodules; k++) {
		free(p->modules[k].path);
		free(p->modules[k].build_id);
	}
	free(p->modules);
	for (size_t k = 0; k < p->nstacks; k++)
		free(p->stacks[k].frames);
	free(p->stacks);
	for (size_t k = 0; k < p->npeaks; k++) {
		free(p->peaks[k].series);
		free(p->peaks[k].sites);
	}
	free(p->peaks);
	for (size_t k = 0; k < p->nhot; k++)
		free(p->hot[k].mapping);
	free(p->hot);
	for (size_t k = 0; k < p->nhot_code; k++)
		free(p->hot_code[k].mapping);
	free(p->hot_code);
	memset(p, 0, sizeof *p);
}

int wss_load_kinds_by_peak(const wss_profile_t *p, int order[WSS_KIND_N])
{
	int n = 0;
	for (int k = 1; k < WSS_KIND_N; k++) {
		if (!p->kinds[k].present)
			continue;
		int j = n++;
		for (; j > 0 && p->kinds[order[j - 1]].peak < p->kinds[k].peak; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	return n;
}
