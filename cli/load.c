/* The profile reader (load.h).  One line at a time through the strict JSON
 * parser; only what the reports need is kept, so memory grows with the
 * number of samples and threads, not with the file.  A last line without
 * its newline is the record a killed program was writing: it is used if it
 * is complete and ignored (and reported) if it is cut. */
#include "config.h"
#include "cli/load.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json.h"
#include "common/profile_version.h"
#include "config/config.h"

/* What the engine can write, and so what a profile may say
 * (docs/profile-format.md, "Bounds"): every integer is below 2^62 (146
 * years of nanoseconds), and a count of pages times the page size is below
 * 2^63 bytes.  A profile past them was not written by wss; refusing it here
 * keeps the reports' arithmetic (pages times the page size, times in
 * tenths, twice an interval) inside 64 bits. */
#define LOAD_INT_LIMIT ((int64_t)1 << 62)
#define LOAD_PAGE_SIZE_MIN 4096
#define LOAD_PAGE_SIZE_MAX ((int64_t)1 << 30)
#define LOAD_RATE_MAX ((int64_t)1 << WSS_SAMPLE_LEVEL_MAX)

typedef struct loader {
	wss_profile_t *p;
	int64_t pages_limit; /* counts of pages are below this: 2^63 bytes of the header's pages */
	long line;
	int status;
	unsigned flags; /* WSS_LOAD_* */
	long summary_line; /* the summary's line, 0: none yet */
} loader_t;

/* "wss: PATH:LINE: what" (no line when line is 0); returns the status. */
static int bad(loader_t *ld, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(loader_t *ld, long line, const char *fmt, ...)
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

static int nomem(loader_t *ld)
{
	if (!ld->status) {
		fprintf(stderr, "wss: %s: out of memory\n", ld->p->path);
		ld->status = 1;
	}
	return ld->status;
}

/* Room for one more element in a growing array. */
static void *grow(loader_t *ld, void **items, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *m = realloc(*items, c * size);
		if (!m) {
			nomem(ld);
			return NULL;
		}
		*items = m;
		*cap = c;
	}
	void *slot = (char *)*items + (*n)++ * size;
	memset(slot, 0, size);
	return slot;
}
#define GROW(ld, arr, n, cap) grow((ld), (void **)&(arr), &(n), &(cap), sizeof *(arr))

static char *dup(loader_t *ld, const char *s)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		nomem(ld);
	return d;
}

/* A required integer member, 0 <= value < limit; what names the limit in
 * the error ("2^62", "2^63 bytes of pages"). */
static bool need_below(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t limit,
		       const char *what, int64_t *out)
{
	if (!wss_json_get_int(o, key, out) || *out < 0) {
		bad(ld, ld->line, "%s: \"%s\" missing or not a non-negative integer", rec, key);
		return false;
	}
	if (*out >= limit) {
		bad(ld, ld->line, "%s: \"%s\" %lld is out of range (%s or more)", rec, key, (long long)*out, what);
		return false;
	}
	return true;
}

/* A required non-negative integer member (a time, an id, a count). */
static bool need_int(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return need_below(ld, o, rec, key, LOAD_INT_LIMIT, "2^62", out);
}

/* A required count of pages. */
static bool need_pages(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return need_below(ld, o, rec, key, ld->pages_limit, "2^63 bytes of pages", out);
}

/* Optional ones: absent is fine (out unchanged), a wrong type is not. */
static bool opt_int(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return !wss_json_get(o, key) || need_int(ld, o, rec, key, out);
}

static bool opt_pages(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, int64_t *out)
{
	return !wss_json_get(o, key) || need_pages(ld, o, rec, key, out);
}

static bool need_str(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out)
{
	const char *s = wss_json_get_str(o, key);
	if (!s) {
		bad(ld, ld->line, "%s: \"%s\" missing or not a string", rec, key);
		return false;
	}
	return (*out = dup(ld, s)) != NULL;
}

static bool opt_str(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out)
{
	if (!wss_json_get(o, key))
		return true;
	return need_str(ld, o, rec, key, out);
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
static bool opt_beside(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, char **out)
{
	char *rel = NULL;
	if (!opt_str(ld, o, rec, key, &rel) || !rel)
		return !ld->status;
	*out = wss_load_beside(ld->p->path, rel);
	free(rel);
	if (!*out)
		nomem(ld);
	return *out != NULL;
}

/* An optional boolean member. */
static bool opt_bool(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, bool *out)
{
	const wss_json_t *v = wss_json_get(o, key);
	if (!v)
		return true;
	if (v->type != WSS_JSON_BOOL) {
		bad(ld, ld->line, "%s: \"%s\" is not true or false", rec, key);
		return false;
	}
	*out = v->b;
	return true;
}

/* An optional object member: NULL in *out when absent. */
static bool opt_obj(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, const wss_json_t **out)
{
	*out = wss_json_get(o, key);
	if (*out && (*out)->type != WSS_JSON_OBJECT) {
		bad(ld, ld->line, "%s: \"%s\" is not an object", rec, key);
		return false;
	}
	return true;
}

/* An optional 95 % interval [lo, hi]: two numbers, 0 <= lo <= hi. */
static bool opt_ci(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, wss_ci_t *out)
{
	const wss_json_t *v = wss_json_get(o, key);
	if (!v)
		return true;
	if (v->type != WSS_JSON_ARRAY || v->n != 2 || v->items[0]->type != WSS_JSON_NUMBER ||
	    v->items[1]->type != WSS_JSON_NUMBER || !(v->items[0]->d >= 0) || !(v->items[0]->d <= v->items[1]->d)) {
		bad(ld, ld->line, "%s: \"%s\" is not an interval [lo, hi] with 0 <= lo <= hi", rec, key);
		return false;
	}
	/* The bounds are counts of pages (an interval's pages or tenths'
	 * worth): the reports scale them by the page size and by ten. */
	if (!(v->items[1]->d < (double)ld->pages_limit)) {
		bad(ld, ld->line, "%s: \"%s\" upper bound %g is out of range (2^63 bytes of pages or more)", rec, key,
		    v->items[1]->d);
		return false;
	}
	*out = (wss_ci_t){true, v->items[0]->d, v->items[1]->d};
	return true;
}

static const char *const series_keys[WSS_SERIES_N] = {"data", "read", "write"};

/* A sample's or a thread's "ci": {"data":[lo,hi],"read":...,"write":...},
 * each optional. */
static bool opt_cis(loader_t *ld, const wss_json_t *o, const char *rec, wss_ci_t ci[WSS_SERIES_N])
{
	const wss_json_t *c;
	if (!opt_obj(ld, o, rec, "ci", &c))
		return false;
	char sub[64];
	snprintf(sub, sizeof sub, "%s: ci", rec);
	for (int k = 0; c && k < WSS_SERIES_N; k++)
		if (!opt_ci(ld, c, sub, series_keys[k], &ci[k]))
			return false;
	return true;
}

/* An address: a string "0x" and 1 to 16 hex digits. */
static bool parse_addr(const wss_json_t *v, uint64_t *out)
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

static bool need_addr(loader_t *ld, const wss_json_t *o, const char *rec, const char *key, uint64_t *out)
{
	if (parse_addr(wss_json_get(o, key), out))
		return true;
	bad(ld, ld->line, "%s: \"%s\" missing or not a hex address (\"0x...\")", rec, key);
	return false;
}

/* A JSON value as compact text (the header's settings are scalars: null,
 * booleans, numbers, strings).  Returns NULL when out of memory. */
static char *json_text(const wss_json_t *v)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	if (!f)
		return NULL;
	switch (v->type) {
	case WSS_JSON_NULL:
		fputs("null", f);
		break;
	case WSS_JSON_BOOL:
		fputs(v->b ? "true" : "false", f);
		break;
	case WSS_JSON_NUMBER:
		if (v->is_int) {
			fprintf(f, "%lld", (long long)v->i);
		} else {
			/* The shortest digits that read back as the same double
			 * (5.0 as 5.0, 0.1 as 0.1). */
			char b[32];
			for (int prec = 1; prec <= 17; prec++) {
				snprintf(b, sizeof b, "%.*g", prec, v->d);
				if (strtod(b, NULL) == v->d)
					break;
			}
			fputs(b, f);
			if (!strpbrk(b, ".eEn"))
				fputs(".0", f);
		}
		break;
	case WSS_JSON_STRING:
		fputc('"', f);
		for (size_t k = 0; k < v->len; k++) {
			unsigned char c = (unsigned char)v->s[k];
			if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
		fputc('"', f);
		break;
	default:
		fputs(v->type == WSS_JSON_ARRAY ? "[...]" : "{...}", f);
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* The header's "config" (by section) with "config_source", flattened to
 * "section.key" settings in the header's order. */
static int load_settings(loader_t *ld, const wss_json_t *h)
{
	wss_profile_t *p = ld->p;
	const wss_json_t *cfg, *src;
	if (!opt_obj(ld, h, "header", "config", &cfg) || !opt_obj(ld, h, "header", "config_source", &src))
		return ld->status;
	if (!cfg)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < cfg->n; i++)
		if (cfg->members[i].value->type == WSS_JSON_OBJECT)
			n += cfg->members[i].value->n;
	if (n && !(p->settings = calloc(n, sizeof *p->settings)))
		return nomem(ld);
	for (size_t i = 0; i < cfg->n; i++) {
		const wss_json_t *sec = cfg->members[i].value;
		if (sec->type != WSS_JSON_OBJECT)
			return bad(ld, 1, "header: config: \"%s\" is not an object", cfg->members[i].key);
		for (size_t j = 0; j < sec->n; j++) {
			wss_setting_t *st = &p->settings[p->nsettings++];
			if (asprintf(&st->key, "%s.%s", cfg->members[i].key, sec->members[j].key) < 0) {
				st->key = NULL;
				return nomem(ld);
			}
			const char *from = src ? wss_json_get_str(src, st->key) : NULL;
			if (!(st->value = json_text(sec->members[j].value)) || !(st->source = dup(ld, from ? from : "")))
				return nomem(ld);
		}
	}
	return 0;
}

static int load_code_header(loader_t *ld, const wss_json_t *c);

static int load_header(loader_t *ld, const wss_json_t *h)
{
	wss_profile_t *p = ld->p;
	if (!wss_json_get_int(h, "version", &p->version))
		return bad(ld, 1, "not a wss profile (the header has no version)");
	if (p->version != WSS_PROFILE_VERSION)
		return bad(ld, 1, "profile format version %lld is not supported (this wss reads version %d; a newer wss wrote it?)",
			   (long long)p->version, WSS_PROFILE_VERSION);
	const char *rec = "header";
	if (!need_int(ld, h, rec, "pid", &p->pid) || !need_str(ld, h, rec, "exe", &p->exe) ||
	    !need_int(ld, h, rec, "page_size", &p->page_size) || !need_str(ld, h, rec, "backend", &p->backend) ||
	    !need_str(ld, h, rec, "time_base", &p->time_base) || !need_int(ld, h, rec, "interval_ns", &p->interval_ns) ||
	    !need_int(ld, h, rec, "window_intervals", &p->window_intervals) || !opt_int(ld, h, rec, "ppid", &p->ppid) ||
	    !opt_int(ld, h, rec, "window_ns", &p->window_ns) || !opt_str(ld, h, rec, "tool", &p->tool) ||
	    !opt_str(ld, h, rec, "kernel", &p->kernel) || !opt_str(ld, h, rec, "host", &p->host) || !opt_str(ld, h, rec, "backend_reason", &p->backend_reason) ||
	    !opt_str(ld, h, rec, "backend_sees", &p->backend_sees))
		return ld->status;
	if (p->page_size < LOAD_PAGE_SIZE_MIN || p->page_size > LOAD_PAGE_SIZE_MAX || (p->page_size & (p->page_size - 1)))
		return bad(ld, 1, "header: \"page_size\" %lld is not a power of two from 4096 to 1 GiB",
			   (long long)p->page_size);
	ld->pages_limit = INT64_MAX / p->page_size + 1;
	/* session.interval's and session.window's range (config/config.h):
	 * the engine refuses to run outside it. */
	if (p->interval_ns < (int64_t)WSS_INTERVAL_MIN_NS || p->interval_ns > (int64_t)WSS_INTERVAL_MAX_NS)
		return bad(ld, 1, "header: \"interval_ns\" %lld is not from 100 us to 3600 s", (long long)p->interval_ns);
	if (p->window_intervals < 1 || p->window_intervals > (int64_t)WSS_WINDOW_MAX_INTERVALS ||
	    p->window_intervals > (int64_t)WSS_WINDOW_MAX_NS / p->interval_ns)
		return bad(ld, 1, "header: \"window_intervals\" %lld is not from 1 to 1000000 intervals of at most a week",
			   (long long)p->window_intervals);
	if (p->window_ns >= 0 && p->window_ns != p->window_intervals * p->interval_ns)
		return bad(ld, 1, "header: \"window_ns\" %lld is not \"window_intervals\" times \"interval_ns\" (%lld)",
			   (long long)p->window_ns, (long long)(p->window_intervals * p->interval_ns));
	if (!opt_int(ld, h, rec, "start_unix_ns", &p->start_unix_ns))
		return ld->status;
	if (wss_json_get(h, "sampling_seed")) {
		if (!parse_addr(wss_json_get(h, "sampling_seed"), &p->sampling_seed))
			return bad(ld, 1, "header: \"sampling_seed\" is not a hex string (\"0x...\")");
		p->has_seed = true;
	}
	const wss_json_t *argv = wss_json_get(h, "argv");
	if (!argv || argv->type != WSS_JSON_ARRAY)
		return bad(ld, 1, "header: \"argv\" missing or not an array");
	if (!(p->argv = calloc(argv->n + 1, sizeof *p->argv)))
		return nomem(ld);
	for (size_t k = 0; k < argv->n; k++) {
		if (argv->items[k]->type != WSS_JSON_STRING)
			return bad(ld, 1, "header: \"argv\" holds a non-string");
		if (!(p->argv[p->argc++] = dup(ld, argv->items[k]->s)))
			return ld->status;
	}
	if (p->window_ns < 0)
		p->window_ns = p->window_intervals * p->interval_ns;
	if (!opt_str(ld, h, rec, "track_mode", &p->track_mode) || !opt_str(ld, h, rec, "config_file", &p->config_file) ||
	    !opt_beside(ld, h, rec, "session_dir", &p->session_dir))
		return ld->status;
	const wss_json_t *code;
	if (!opt_obj(ld, h, rec, "code", &code))
		return ld->status;
	if (code && load_code_header(ld, code))
		return ld->status;
	return load_settings(ld, h);
}

/* The header's "code": {"tracked":true,"excluded":[{"object","why"}...]}
 * or {"tracked":false,"why":...}. */
static int load_code_header(loader_t *ld, const wss_json_t *c)
{
	wss_profile_t *p = ld->p;
	const char *rec = "header: code";
	if (!opt_bool(ld, c, rec, "tracked", &p->code_tracked) || !opt_str(ld, c, rec, "why", &p->code_off))
		return ld->status;
	const wss_json_t *ex = wss_json_get(c, "excluded");
	if (!ex)
		return 0;
	if (ex->type != WSS_JSON_ARRAY)
		return bad(ld, 1, "header: code: \"excluded\" is not an array");
	if (ex->n && !(p->code_excluded = calloc(ex->n, sizeof *p->code_excluded)))
		return nomem(ld);
	for (size_t k = 0; k < ex->n; k++) {
		const wss_json_t *o = ex->items[k];
		const wss_json_t *name = o->type == WSS_JSON_OBJECT ? wss_json_get(o, "object") : NULL;
		const wss_json_t *why = o->type == WSS_JSON_OBJECT ? wss_json_get(o, "why") : NULL;
		if (!name || name->type != WSS_JSON_STRING || !why || why->type != WSS_JSON_STRING)
			return bad(ld, 1, "header: code: excluded[%zu]: \"object\" and \"why\" must be strings", k);
		size_t n = strlen(name->s) + strlen(why->s) + 3;
		if (!(p->code_excluded[k] = malloc(n)))
			return nomem(ld);
		snprintf(p->code_excluded[k], n, "%s: %s", name->s, why->s);
		p->code_nexcluded++;
	}
	return 0;
}

static wss_load_thread_t *thread_slot(loader_t *ld, int64_t tid)
{
	wss_profile_t *p = ld->p;
	if (2 * (p->nthreads + 1) > p->thread_index_cap) {
		size_t cap = p->thread_index_cap ? p->thread_index_cap * 2 : 64;
		int64_t *t = calloc(cap, sizeof *t);
		if (!t) {
			nomem(ld);
			return NULL;
		}
		for (size_t k = 0; k < p->nthreads; k++) {
			size_t h = (size_t)((uint64_t)p->threads[k].tid * 0x9e3779b97f4a7c15ULL) & (cap - 1);
			while (t[h])
				h = (h + 1) & (cap - 1);
			t[h] = (int64_t)k + 1;
		}
		free(p->thread_index);
		p->thread_index = t;
		p->thread_index_cap = cap;
	}
	size_t mask = p->thread_index_cap - 1;
	size_t h = (size_t)((uint64_t)tid * 0x9e3779b97f4a7c15ULL) & mask;
	for (; p->thread_index[h]; h = (h + 1) & mask)
		if (p->threads[p->thread_index[h] - 1].tid == tid)
			return &p->threads[p->thread_index[h] - 1];
	wss_load_thread_t *t = GROW(ld, p->threads, p->nthreads, p->threads_cap);
	if (!t)
		return NULL;
	p->thread_index[h] = (int64_t)p->nthreads;
	t->tid = tid;
	t->cpu_ns = -1;
	return t;
}

static int load_sample(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_sample_t s = {.cpu_ns = -1, .read = -1, .write = -1, .rate = 1, .tracked = -1, .members = -1, .faults = -1,
			  .sampled = {-1, -1, -1}, .faults_ns = -1, .tick_ns = -1, .change_ns = -1, .program_ns = -1, .wall_ns = -1,
			  .code = -1, .code_ns = -1};
	const char *rec = "sample";
	const wss_json_t *sampled, *cost;
	if (!need_int(ld, r, rec, "seq", &s.seq) || !need_int(ld, r, rec, "t_ns", &s.t_ns) ||
	    !need_pages(ld, r, rec, "data_pages", &s.data) || !opt_int(ld, r, rec, "cpu_ns", &s.cpu_ns) ||
	    !opt_pages(ld, r, rec, "read_pages", &s.read) || !opt_pages(ld, r, rec, "write_pages", &s.write) ||
	    !opt_int(ld, r, rec, "rate", &s.rate) || !opt_cis(ld, r, rec, s.ci) ||
	    !opt_bool(ld, r, rec, "lower_bound", &s.lower_bound) || !opt_obj(ld, r, rec, "sampled", &sampled) ||
	    !opt_obj(ld, r, rec, "cost", &cost) || !opt_pages(ld, r, rec, "faults", &s.faults) ||
	    !opt_bool(ld, r, rec, "final", &s.final) || !opt_pages(ld, r, rec, "code_pages", &s.code) ||
	    !opt_bool(ld, r, rec, "code_lower_bound", &s.code_lower_bound))
		return ld->status;
	/* A duplicated, missing or swapped sample would change every figure
	 * the reports print: the writer numbers them 1, 2, 3, ... in file
	 * order, so anything else is not one process's profile. */
	if (s.seq != (int64_t)p->nsamples + 1)
		return bad(ld, ld->line,
			   "sample: \"seq\" %lld, expected %zu (samples are numbered 1, 2, 3, ... in order)",
			   (long long)s.seq, p->nsamples + 1);
	const wss_json_t *kinds = NULL;
	if (!opt_obj(ld, r, rec, "kinds", &kinds))
		return ld->status;
	for (int k = 0; k < WSS_KIND_N; k++) {
		const wss_json_t *o = k && kinds ? wss_json_get(kinds, wss_kind_name(k)) : NULL;
		s.kind_data[k] = -1;
		if (o && o->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "sample: kinds: \"%s\" is not an object", wss_kind_name(k));
		if (o && !need_pages(ld, o, "sample: kinds", "data", &s.kind_data[k]))
			return ld->status;
	}
	p->has_code |= s.code >= 0;
	p->code_lower_bound |= s.code_lower_bound;
	if (s.rate < 1)
		return bad(ld, ld->line, "sample: \"rate\" is 0 (1 is exact)");
	if (s.rate > LOAD_RATE_MAX || (s.rate & (s.rate - 1)))
		return bad(ld, ld->line, "sample: \"rate\" %lld is not a power of two up to 2^30", (long long)s.rate);
	if (sampled && (!opt_pages(ld, sampled, "sample: sampled", "tracked", &s.tracked) ||
			!opt_pages(ld, sampled, "sample: sampled", "members", &s.members) ||
			!opt_pages(ld, sampled, "sample: sampled", "data", &s.sampled[WSS_SERIES_DATA]) ||
			!opt_pages(ld, sampled, "sample: sampled", "read", &s.sampled[WSS_SERIES_READ]) ||
			!opt_pages(ld, sampled, "sample: sampled", "write", &s.sampled[WSS_SERIES_WRITE]) ||
			!opt_bool(ld, sampled, "sample: sampled", "all_writes", &s.all_writes)))
		return ld->status;
	if (cost && (!opt_int(ld, cost, "sample: cost", "faults_ns", &s.faults_ns) ||
		     !opt_int(ld, cost, "sample: cost", "tick_ns", &s.tick_ns) ||
		     !opt_int(ld, cost, "sample: cost", "change_ns", &s.change_ns) ||
		     !opt_int(ld, cost, "sample: cost", "code_ns", &s.code_ns) ||
		     !opt_int(ld, cost, "sample: cost", "program_ns", &s.program_ns) ||
		     !opt_int(ld, cost, "sample: cost", "wall_ns", &s.wall_ns)))
		return ld->status;
	p->has_read |= s.read >= 0;
	p->has_write |= s.write >= 0;
	if (s.rate > 1) {
		p->nsampled++;
		if (!p->rate_min || s.rate < p->rate_min)
			p->rate_min = s.rate;
		if (s.rate > p->rate_max)
			p->rate_max = s.rate;
	}
	p->nlower += s.lower_bound;
	p->nall_writes += s.rate > 1 && s.all_writes;
	if (cost) {
		p->has_cost = true;
		/* Sums over the samples: each term is below 2^62, the sum
		 * saturates (a run of 146 years' cost is no real one). */
		p->cost_faults_ns = wss_load_sat_add(p->cost_faults_ns, s.faults_ns);
		p->cost_tick_ns = wss_load_sat_add(p->cost_tick_ns, s.tick_ns);
		p->cost_change_ns = wss_load_sat_add(p->cost_change_ns, s.change_ns);
		p->cost_code_ns = wss_load_sat_add(p->cost_code_ns, s.code_ns);
		p->cost_program_ns = wss_load_sat_add(p->cost_program_ns, s.program_ns);
		/* The tick's base: the interval's wall time, as the engine
		 * says it; a profile of before it said it weighed the tick
		 * against the program's time or the wall time, the longer. */
		int64_t wall = s.t_ns - (p->nsamples ? p->samples[p->nsamples - 1].t_ns : 0);
		p->cost_base_ns = wss_load_sat_add(p->cost_base_ns, s.wall_ns > 0 ? s.wall_ns : s.program_ns > wall ? s.program_ns : wall);
	}
	const wss_json_t *threads = wss_json_get(r, "threads");
	if (!threads || threads->type != WSS_JSON_ARRAY)
		return bad(ld, ld->line, "sample: \"threads\" missing or not an array");
	s.thread_first = p->nsample_threads;
	for (size_t k = 0; k < threads->n; k++) {
		const wss_json_t *o = threads->items[k];
		int64_t tid, data, write = -1, faults = 0, cpu = -1, code = 0;
		wss_ci_t ci[WSS_SERIES_N] = {{0}};
		rec = "sample: threads[]";
		if (o->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "%s: not an object", rec);
		if (!need_int(ld, o, rec, "tid", &tid) || !need_pages(ld, o, rec, "data_pages", &data) ||
		    !opt_pages(ld, o, rec, "write_pages", &write) || !opt_pages(ld, o, rec, "faults", &faults) ||
		    !opt_int(ld, o, rec, "cpu_ns", &cpu) || !opt_cis(ld, o, rec, ci) ||
		    !opt_pages(ld, o, rec, "code_pages", &code))
			return ld->status;
		wss_load_thread_t *t = thread_slot(ld, tid);
		if (!t)
			return ld->status;
		t->estimated |= s.rate > 1;
		t->samples++;
		t->code_sum = wss_load_sat_addu(t->code_sum, (uint64_t)code);
		if ((uint64_t)code > t->code_peak)
			t->code_peak = (uint64_t)code;
		t->data_sum = wss_load_sat_addu(t->data_sum, (uint64_t)data);
		if ((uint64_t)data > t->data_peak)
			t->data_peak = (uint64_t)data;
		if (write >= 0) {
			t->has_write = true;
			t->write_sum = wss_load_sat_addu(t->write_sum, (uint64_t)write);
			if ((uint64_t)write > t->write_peak)
				t->write_peak = (uint64_t)write;
		}
		t->faults = wss_load_sat_addu(t->faults, (uint64_t)faults);
		if (cpu >= 0)
			t->cpu_ns = cpu;
		if (tid > INT32_MAX)
			return bad(ld, ld->line, "%s: \"tid\" %lld is not a thread id", rec, (long long)tid);
		if (ld->flags & WSS_LOAD_THREAD_SAMPLES) {
			if (faults > UINT32_MAX)
				faults = UINT32_MAX;
			wss_sample_thread_t *st = GROW(ld, p->sample_threads, p->nsample_threads, p->sample_threads_cap);
			if (!st)
				return ld->status;
			*st = (wss_sample_thread_t){.tid = (int32_t)tid, .faults = (uint32_t)faults, .data = data,
						    .write = write, .cpu_ns = cpu, .ci_data = {-1, -1}, .ci_write = {-1, -1},
						    .code = s.code >= 0 ? (int32_t)code : -1};
			if (ci[WSS_SERIES_DATA].present)
				st->ci_data[0] = (float)ci[WSS_SERIES_DATA].lo, st->ci_data[1] = (float)ci[WSS_SERIES_DATA].hi;
			if (ci[WSS_SERIES_WRITE].present)
				st->ci_write[0] = (float)ci[WSS_SERIES_WRITE].lo, st->ci_write[1] = (float)ci[WSS_SERIES_WRITE].hi;
			s.nthreads++;
		}
	}
	wss_sample_t *slot = GROW(ld, p->samples, p->nsamples, p->samples_cap);
	if (!slot)
		return ld->status;
	*slot = s;
	return 0;
}

static int load_stat(loader_t *ld, const wss_json_t *r, const char *key, wss_stat_t *st)
{
	const wss_json_t *o = wss_json_get(r, key);
	if (!o)
		return 0;
	double avg;
	char rec[32];
	snprintf(rec, sizeof rec, "summary: %s", key);
	if (!wss_json_get_num(o, "avg", &avg) || !(avg >= 0))
		return bad(ld, ld->line, "%s: \"avg\" missing or not a non-negative number", rec);
	if (!(avg < (double)ld->pages_limit))
		return bad(ld, ld->line, "%s: \"avg\" %g is out of range (2^63 bytes of pages or more)", rec, avg);
	/* total null: not known (wss attach cannot tell which pages were read). */
	const wss_json_t *total = wss_json_get(o, "total");
	if (total && total->type == WSS_JSON_NULL)
		st->total = -1;
	else if (!need_pages(ld, o, rec, "total", &st->total))
		return ld->status;
	if (!need_pages(ld, o, rec, "peak", &st->peak) ||
	    !opt_ci(ld, o, rec, "avg_ci", &st->avg_ci) || !opt_ci(ld, o, rec, "peak_ci", &st->peak_ci) ||
	    !opt_ci(ld, o, rec, "total_ci", &st->total_ci))
		return ld->status;
	st->avg_tenths = llround(avg * 10);
	st->present = true;
	return 0;
}

/* The summary's "hot_pages" or "hot_code": [{"addr","intervals","mapping",
 * "stack"?,"gone"?}...]. */
static int load_hot(loader_t *ld, const wss_json_t *r, const char *key, wss_hot_t **out, size_t *nout)
{
	const wss_json_t *hot = wss_json_get(r, key);
	if (!hot)
		return 0;
	if (hot->type != WSS_JSON_ARRAY)
		return bad(ld, ld->line, "summary: \"%s\" is not an array", key);
	if (hot->n && !(*out = calloc(hot->n, sizeof **out)))
		return nomem(ld);
	char rec[40];
	snprintf(rec, sizeof rec, "summary: %s[]", key);
	for (size_t k = 0; k < hot->n; k++) {
		const wss_json_t *o = hot->items[k];
		wss_hot_t *h = &(*out)[(*nout)++];
		h->stack = h->gone_seq = -1;
		if (o->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "%s: not an object", rec);
		if (!need_addr(ld, o, rec, "addr", &h->addr) || !need_int(ld, o, rec, "intervals", &h->intervals) ||
		    !need_str(ld, o, rec, "mapping", &h->mapping) || !opt_int(ld, o, rec, "stack", &h->stack) ||
		    !opt_int(ld, o, rec, "gone", &h->gone_seq))
			return ld->status;
	}
	return 0;
}

static int load_summary(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	const char *rec = "summary";
	if (!wss_json_get(r, "data"))
		return bad(ld, ld->line, "summary: \"data\" missing");
	if (!need_int(ld, r, rec, "samples", &p->summary_samples) || !opt_int(ld, r, rec, "duration_ns", &p->duration_ns) ||
	    !opt_int(ld, r, rec, "faults", &p->faults) || !opt_bool(ld, r, rec, "sampled", &p->summary_sampled) ||
	    !opt_bool(ld, r, rec, "lower_bound", &p->summary_lower_bound) ||
	    !opt_int(ld, r, rec, "rate_max", &p->summary_rate_max) || load_stat(ld, r, "data", &p->data) ||
	    load_stat(ld, r, "read", &p->read) || load_stat(ld, r, "write", &p->write) ||
	    load_stat(ld, r, "code", &p->code))
		return ld->status;
	if (p->summary_rate_max > LOAD_RATE_MAX || (p->summary_rate_max > 0 && (p->summary_rate_max & (p->summary_rate_max - 1))))
		return bad(ld, ld->line, "summary: \"rate_max\" %lld is not a power of two up to 2^30",
			   (long long)p->summary_rate_max);
	const wss_json_t *kinds = NULL;
	if (!opt_obj(ld, r, rec, "kinds", &kinds))
		return ld->status;
	for (int k = 1; kinds && k < WSS_KIND_N; k++) {
		const wss_json_t *o = wss_json_get(kinds, wss_kind_name(k));
		if (o && o->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "summary: kinds: \"%s\" is not an object", wss_kind_name(k));
		if (load_stat(ld, kinds, wss_kind_name(k), &p->kinds[k]))
			return ld->status;
	}
	const wss_json_t *prec = NULL;
	if (!opt_obj(ld, r, rec, "precision", &prec) ||
	    (prec && (!opt_str(ld, prec, "summary: precision", "note", &p->precision_note) ||
		      !opt_int(ld, prec, "summary: precision", "intervals", &p->precision_intervals) ||
		      !opt_int(ld, prec, "summary: precision", "missed", &p->precision_missed))))
		return ld->status;
	if (prec) {
		p->has_precision = true;
		if (!wss_json_get_num(prec, "target_pct", &p->precision_target_pct))
			p->precision_target_pct = -1;
		if (!wss_json_get_num(prec, "median_pct", &p->precision_median_pct))
			p->precision_median_pct = -1;
	}
	const wss_json_t *cen = NULL;
	if (!opt_obj(ld, r, rec, "census", &cen) ||
	    (cen && (!opt_str(ld, cen, "summary: census", "off", &p->census_off) ||
		     !opt_pages(ld, cen, "summary: census", "data", &p->census_data) ||
		     !opt_pages(ld, cen, "summary: census", "write", &p->census_write))))
		return ld->status;
	p->has_census = cen != NULL;
	const wss_json_t *tr = wss_json_get(r, "trace");
	if (tr) {
		const char *trec = "summary: trace";
		if (tr->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "summary: \"trace\" is not an object");
		const wss_json_t *st = wss_json_get(tr, "stopped");
		if (!need_int(ld, tr, trec, "records", &p->trace_records) || !need_int(ld, tr, trec, "pages", &p->trace_pages) ||
		    !need_int(ld, tr, trec, "bytes", &p->trace_bytes) || !need_int(ld, tr, trec, "last", &p->trace_last) ||
		    (st && st->type != WSS_JSON_NULL && !opt_str(ld, tr, trec, "stopped", &p->trace_stopped)))
			return ld->status;
	}
	if (load_hot(ld, r, "hot_pages", &p->hot, &p->nhot) || load_hot(ld, r, "hot_code", &p->hot_code, &p->nhot_code))
		return ld->status;
	p->has_summary = true;
	return 0;
}

static int load_module(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_module_t *m = GROW(ld, p->modules, p->nmodules, p->modules_cap);
	if (!m)
		return ld->status;
	const char *rec = "module";
	if (!need_int(ld, r, rec, "id", &m->id) || !need_str(ld, r, rec, "path", &m->path) ||
	    !need_addr(ld, r, rec, "bias", &m->bias))
		return ld->status;
	if (wss_json_get(r, "start") || wss_json_get(r, "end")) {
		if (!need_addr(ld, r, rec, "start", &m->start) || !need_addr(ld, r, rec, "end", &m->end))
			return ld->status;
		if (m->end <= m->start)
			return bad(ld, ld->line, "module: \"end\" is not above \"start\"");
	}
	const wss_json_t *id = wss_json_get(r, "build_id");
	if (id && id->type != WSS_JSON_NULL) {
		if (id->type != WSS_JSON_STRING || id->len == 0 || id->len % 2 || strspn(id->s, "0123456789abcdefABCDEF") != id->len)
			return bad(ld, ld->line, "module: \"build_id\" is neither hex nor null");
		if (!(m->build_id = dup(ld, id->s)))
			return ld->status;
		for (char *c = m->build_id; *c; c++)
			if (*c >= 'A' && *c <= 'F')
				*c = (char)(*c - 'A' + 'a');
	}
	return 0;
}

static int load_stack(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_stack_t *s = GROW(ld, p->stacks, p->nstacks, p->stacks_cap);
	if (!s)
		return ld->status;
	if (!need_int(ld, r, "stack", "id", &s->id))
		return ld->status;
	const wss_json_t *f = wss_json_get(r, "frames");
	if (!f || f->type != WSS_JSON_ARRAY)
		return bad(ld, ld->line, "stack: \"frames\" missing or not an array");
	if (f->n && !(s->frames = calloc(f->n, sizeof *s->frames)))
		return nomem(ld);
	for (size_t k = 0; k < f->n; k++, s->n++)
		if (!parse_addr(f->items[k], &s->frames[k]))
			return bad(ld, ld->line, "stack: frames[%zu] is not a hex address (\"0x...\")", k);
	return 0;
}

static int load_sites(loader_t *ld, const wss_json_t *sites, const char *rec, wss_site_t **out, size_t *n);

static int load_peak(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_peak_t *k = GROW(ld, p->peaks, p->npeaks, p->peaks_cap);
	if (!k)
		return ld->status;
	const char *rec = "peak";
	if (!need_int(ld, r, rec, "seq", &k->seq) || !need_str(ld, r, rec, "series", &k->series) ||
	    !need_pages(ld, r, rec, "value", &k->value))
		return ld->status;
	if (!wss_json_get_num(r, "mean", &k->mean) || !wss_json_get_num(r, "threshold", &k->threshold))
		return bad(ld, ld->line, "peak: \"mean\" or \"threshold\" missing or not a number");
	const wss_json_t *sites = wss_json_get(r, "sites");
	if (!sites)
		return 0;
	return load_sites(ld, sites, "peak", &k->sites, &k->nsites);
}

/* A "sites" array (a peak's, or the whole run's): objects with "pc",
 * "pages" and, when its stack was captured, "stack". */
static int load_sites(loader_t *ld, const wss_json_t *sites, const char *rec, wss_site_t **out, size_t *n)
{
	if (sites->type != WSS_JSON_ARRAY)
		return bad(ld, ld->line, "%s: \"sites\" is not an array", rec);
	if (sites->n && !(*out = calloc(sites->n, sizeof **out)))
		return nomem(ld);
	char sub[32];
	snprintf(sub, sizeof sub, "%s: sites[]", rec);
	for (size_t j = 0; j < sites->n; j++, (*n)++) {
		const wss_json_t *o = sites->items[j];
		wss_site_t *st = &(*out)[j];
		st->stack = -1;
		if (o->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "%s: sites[%zu] is not an object", rec, j);
		if (!need_addr(ld, o, sub, "pc", &st->pc) || !opt_int(ld, o, sub, "stack", &st->stack) ||
		    !need_pages(ld, o, sub, "pages", &st->pages))
			return ld->status;
	}
	return 0;
}

/* The whole run's first-touch sites, once, at the end. */
static int load_run_sites(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	if (p->has_sites)
		return bad(ld, ld->line, "a second sites record");
	const wss_json_t *sites = wss_json_get(r, "sites");
	if (!sites)
		return bad(ld, ld->line, "sites: \"sites\" missing");
	p->has_sites = true;
	p->sites_other = 0;
	if (!opt_pages(ld, r, "sites", "other_pages", &p->sites_other))
		return ld->status;
	return load_sites(ld, sites, "sites", &p->sites, &p->nsites);
}

/* The allocation sites, once, at the end. */
static int load_alloc_sites(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	const char *rec = "alloc_sites";
	if (p->has_alloc_sites)
		return bad(ld, ld->line, "a second alloc_sites record");
	const wss_json_t *sites = wss_json_get(r, "sites");
	if (!sites || sites->type != WSS_JSON_ARRAY)
		return bad(ld, ld->line, "alloc_sites: \"sites\" missing or not an array");
	p->has_alloc_sites = true;
	if (!need_int(ld, r, rec, "mean_bytes", &p->alloc_mean) || !need_int(ld, r, rec, "idle_after", &p->alloc_idle_after) ||
	    !need_int(ld, r, rec, "intervals", &p->alloc_intervals) || !opt_int(ld, r, rec, "cut_intervals", &p->alloc_cut) ||
	    !opt_int(ld, r, rec, "dropped", &p->alloc_dropped))
		return ld->status;
	if (sites->n && !(p->alloc_sites = calloc(sites->n, sizeof *p->alloc_sites)))
		return nomem(ld);
	const char *sub = "alloc_sites: sites[]";
	for (size_t j = 0; j < sites->n; j++, p->nalloc_sites++) {
		const wss_json_t *o = sites->items[j];
		wss_alloc_site_t *a = &p->alloc_sites[j];
		if (o->type != WSS_JSON_OBJECT)
			return bad(ld, ld->line, "alloc_sites: sites[%zu] is not an object", j);
		if (!need_int(ld, o, sub, "stack", &a->stack) || !need_int(ld, o, sub, "sampled", &a->sampled) ||
		    !need_int(ld, o, sub, "allocs", &a->allocs) || !need_int(ld, o, sub, "live_bytes", &a->live_bytes) ||
		    !need_int(ld, o, sub, "freed_bytes", &a->freed_bytes) || !need_pages(ld, o, sub, "live_pages", &a->live_pages) ||
		    !need_pages(ld, o, sub, "peak_live_pages", &a->peak_live_pages) ||
		    !need_pages(ld, o, sub, "ws_pages", &a->ws_pages) || !need_pages(ld, o, sub, "idle_pages", &a->idle_pages) ||
		    !need_pages(ld, o, sub, "touched_pages", &a->touched_pages) || !opt_ci(ld, o, sub, "live_ci", &a->live_ci) ||
		    !opt_ci(ld, o, sub, "ws_ci", &a->ws_ci) || !opt_ci(ld, o, sub, "idle_ci", &a->idle_ci) ||
		    !opt_ci(ld, o, sub, "touched_ci", &a->touched_ci))
			return ld->status;
	}
	return 0;
}

/* Another process of the session noted itself in the leader's profile. */
static int load_process(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_process_note_t *n = GROW(ld, p->procs, p->nprocs, p->procs_cap);
	if (!n)
		return ld->status;
	n->ppid = n->data_peak = n->data_total = n->duration_ns = -1;
	const wss_json_t *prof = wss_json_get(r, "profile");
	if (!need_int(ld, r, "process", "pid", &n->pid) || !opt_int(ld, r, "process", "ppid", &n->ppid) ||
	    !opt_str(ld, r, "process", "reason", &n->reason) || !opt_str(ld, r, "process", "exe", &n->exe) ||
	    !opt_pages(ld, r, "process", "data_peak", &n->data_peak) ||
	    !opt_pages(ld, r, "process", "data_total", &n->data_total) ||
	    !opt_int(ld, r, "process", "duration_ns", &n->duration_ns) ||
	    !opt_ci(ld, r, "process", "data_peak_ci", &n->peak_ci) ||
	    !opt_ci(ld, r, "process", "data_total_ci", &n->total_ci))
		return ld->status;
	if (n->exe && (n->data_peak < 0 || n->data_total < 0))
		return bad(ld, ld->line, "process: \"exe\" without \"data_peak\" and \"data_total\"");
	if (prof && prof->type != WSS_JSON_NULL && !opt_beside(ld, r, "process", "profile", &n->profile))
		return ld->status;
	return 0;
}

static int load_record(loader_t *ld, const wss_json_t *r)
{
	const char *type = wss_json_get_str(r, "type");
	if (!type)
		return bad(ld, ld->line, "not a wss record (%s)",
			   r->type == WSS_JSON_OBJECT ? "no \"type\"" : "not a JSON object");
	if (!strcmp(type, "sample")) {
		if (ld->summary_line)
			return bad(ld, ld->line, "a sample after the summary (line %ld)", ld->summary_line);
		return load_sample(ld, r);
	}
	if (!strcmp(type, "summary")) {
		if (ld->p->has_summary)
			return bad(ld, ld->line, "a second summary");
		ld->summary_line = ld->line;
		return load_summary(ld, r);
	}
	if (!strcmp(type, "module"))
		return load_module(ld, r);
	if (!strcmp(type, "stack"))
		return load_stack(ld, r);
	if (!strcmp(type, "peak"))
		return load_peak(ld, r);
	if (!strcmp(type, "sites"))
		return load_run_sites(ld, r);
	if (!strcmp(type, "process"))
		return load_process(ld, r);
	if (!strcmp(type, "alloc_sites"))
		return load_alloc_sites(ld, r);
	if (!strcmp(type, "trace")) {
		/* The page trace beside the profile (docs/trace-format.md). */
		const char *file = wss_json_get_str(r, "file");
		if (!file || !*file || strchr(file, '/'))
			return bad(ld, ld->line, "trace: \"file\" missing or not a file name (the trace lies beside the profile)");
		if (ld->p->trace)
			return bad(ld, ld->line, "a second trace record");
		if (!(ld->p->trace = strdup(file)))
			return nomem(ld);
		return 0;
	}
	if (!strcmp(type, "header"))
		return bad(ld, ld->line, "a second header (two profiles in one file?)");
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
		return bad(&ld, 0, "%s", strerror(errno));
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
			nomem(&ld);
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
				bad(&ld, 1, "not a wss profile (%s: column %zu: %s)", complete ? "not JSON" : "not JSON, and no newline",
				    err.column, err.msg);
			else if (!wss_json_get_str(doc.root, "type") || strcmp(wss_json_get_str(doc.root, "type"), "header"))
				bad(&ld, 1, "not a wss profile (the first line is not a wss header record)");
			else
				load_header(&ld, doc.root);
		} else if (r)
			bad(&ld, ld.line, "invalid JSON: column %zu: %s", err.column, err.msg);
		else
			load_record(&ld, doc.root);
		if (!r)
			wss_json_free(&doc);
		if (complete)
			p->lines = ld.line;
	}
	if (!ld.status && ferror(f))
		bad(&ld, 0, "%s", strerror(errno));
	else if (!ld.status && ld.line == 0)
		bad(&ld, 0, "empty file, not a wss profile");
	else if (!ld.status && p->has_summary && p->summary_samples != (int64_t)p->nsamples)
		bad(&ld, ld.summary_line, "summary: \"samples\" %lld, but the profile holds %zu (samples missing)",
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
