/* What the trace analyses share (analyses.h, analyses_internal.h): their
 * options, a profile opened with its trace, the first pass and the pieces
 * of their three output forms.  Each analysis has a file of its own:
 * analyses_heatmap.c, analyses_window.c, analyses_mrc.c,
 * analyses_simulate.c (the last two over analyses_refs.c's reference
 * string) and replay.c.  Every command reads the trace twice: a first
 * pass checks every record (so a corrupt trace is refused before any
 * output) and collects the distinct pages as ranges; the second computes.
 * A run is processed as a range: heat-map bins take its overlap, the
 * window keeps segments of pages with the same newest touch, mrc's LRU
 * stack segments of keys referenced in one go, so time and memory follow
 * the runs and events, not the pages they claim.  docs/analyses.md
 * defines what each computes and what it can claim. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/out/text.h"
#include "common/fmt.h"

#define EXIT_USAGE 2

/* ---- options ---- */

int wss_analyses_usage_error(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "wss: %s: %s%s\n", cmd, what, arg ? arg : "");
	fputs("wss: try 'wss --help'\n", stderr);
	return EXIT_USAGE;
}

int wss_opts_parse(const char *cmd, int argc, char **argv, const wss_opt_t *opts, size_t nopts, const char **paths,
		   size_t maxpaths, size_t *npaths, const char *synopsis)
{
	bool options = true;
	*npaths = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options && !strcmp(a, "--")) {
			options = false;
			continue;
		}
		if (options && (!strcmp(a, "-h") || !strcmp(a, "--help")))
			return WSS_CMD_HELP;
		if (options && a[0] == '-' && a[1]) {
			const wss_opt_t *o = NULL;
			size_t len = strcspn(a, "=");
			for (size_t k = 0; k < nopts && !o; k++)
				if (strlen(opts[k].name) == len && !strncmp(a, opts[k].name, len))
					o = &opts[k];
			if (!o)
				return wss_analyses_usage_error(cmd, "unknown option ", a);
			if (o->flag) {
				if (a[len])
					return wss_analyses_usage_error(cmd, "no value is taken by ", o->name);
				*o->flag = true;
			} else if (a[len]) {
				*o->value = a + len + 1;
			} else if (i + 1 < argc) {
				*o->value = argv[++i];
			} else
				return wss_analyses_usage_error(cmd, "missing value for ", o->name);
			continue;
		}
		if (*npaths == maxpaths)
			return wss_analyses_usage_error(cmd, "too many profiles: ", a);
		paths[(*npaths)++] = a;
	}
	if (*npaths == 0) {
		char what[160];
		snprintf(what, sizeof what, "no profile given (%s)", synopsis);
		return wss_analyses_usage_error(cmd, what, NULL);
	}
	return 0;
}

int wss_opts_number(const char *cmd, const char *name, const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (!*v || *end || errno || v[0] == '-' || x < min || x > max) {
		fprintf(stderr, "wss: %s: %s %s: not a whole number from %" PRIu64 " to %" PRIu64 "\n", cmd, name, v, min,
			max);
		return EXIT_USAGE;
	}
	*out = x;
	return 0;
}

/* --csv and --json: at most one. */
int wss_analyses_output_form(const char *cmd, bool csv, bool json, wss_out_t *out)
{
	if (csv && json)
		return wss_analyses_usage_error(cmd, "--csv and --json: choose one", NULL);
	*out = csv ? WSS_OUT_CSV : json ? WSS_OUT_JSON : WSS_OUT_TEXT;
	return 0;
}

/* A comma-separated list of whole numbers, each in [min, max], into a
 * new array.  Returns 0, 2 (said) or 1. */
int wss_analyses_number_list(const char *cmd, const char *name, const char *v, uint64_t min, uint64_t max,
			     uint64_t **out, size_t *n)
{
	size_t cap = 1;
	for (const char *c = v; *c; c++)
		cap += *c == ',';
	uint64_t *a = malloc(cap * sizeof *a);
	char *copy = strdup(v);
	if (!a || !copy) {
		free(a);
		free(copy);
		fprintf(stderr, "wss: %s: out of memory\n", cmd);
		return 1;
	}
	*n = 0;
	char *save = NULL;
	int r = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save))
		r = wss_opts_number(cmd, name, tok, min, max, &a[(*n)++]);
	if (!r && *n == 0)
		r = wss_analyses_usage_error(cmd, "an empty list for ", name);
	free(copy);
	if (r) {
		free(a);
		return r;
	}
	*out = a;
	return 0;
}

int wss_reserve(void *array, size_t *cap, size_t n, size_t size)
{
	void **v = array;
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < n)
		c *= 2;
	void *m = realloc(*v, c * size);
	if (!m)
		return ENOMEM;
	*v = m;
	*cap = c;
	return 0;
}

/* ---- the profile and its trace ---- */

int wss_pair_open(const char *path, wss_pair_t *p)
{
	memset(p, 0, sizeof *p);
	int r = wss_load_profile(path, &p->prof);
	if (r)
		return r;
	if (!p->prof.trace) {
		fprintf(stderr, "wss: %s: no page trace in this profile (record one with: wss run --trace -- PROG)\n",
			path);
		wss_load_release(&p->prof);
		return WSS_EXIT_BADINPUT;
	}
	if (!(p->trace_path = wss_load_beside(path, p->prof.trace))) {
		wss_load_release(&p->prof);
		fprintf(stderr, "wss: %s: out of memory\n", path);
		return 1;
	}
	if ((r = wss_trace_open(&p->trace, p->trace_path))) {
		free(p->trace_path);
		wss_load_release(&p->prof);
		return r;
	}
	if ((int64_t)1 << p->trace.page_shift != p->prof.page_size) {
		fprintf(stderr, "wss: %s: pages of %lld bytes, but the profile's are %" PRId64 " bytes: not its trace?\n",
			p->trace_path, 1LL << p->trace.page_shift, p->prof.page_size);
		wss_pair_close(p);
		return WSS_EXIT_BADINPUT;
	}
	p->trace.member_check = p->prof.has_seed;
	p->trace.seed = p->prof.sampling_seed;
	p->trace.prof = &p->prof;
	return 0;
}

void wss_pair_close(wss_pair_t *p)
{
	wss_trace_close(&p->trace);
	wss_load_release(&p->prof);
	free(p->trace_path);
	memset(p, 0, sizeof *p);
}

void wss_pair_note_end(const wss_pair_t *p)
{
	char end[160];
	wss_trace_describe_end(&p->trace, end, sizeof end);
	if (*end)
		fprintf(stderr, "wss: %s: %s\n", p->trace_path, end);
}

void wss_scan_release(wss_scan_t *s)
{
	wss_ranges_release(&s->pages);
	free(s->seq);
	free(s->t_ns);
	free(s->level);
	memset(s, 0, sizeof *s);
}

static int scan_nomem(wss_pair_t *p, wss_scan_t *s)
{
	fprintf(stderr, "wss: %s: out of memory\n", p->trace_path);
	wss_scan_release(s);
	return 1;
}

int wss_scan_run(wss_pair_t *p, wss_scan_t *s)
{
	memset(s, 0, sizeof *s);
	size_t cap = 0;
	wss_trace_interval_t iv;
	bool got;
	int r;
	while (!(r = wss_trace_next(&p->trace, &iv, &got)) && got) {
		if (s->intervals == cap) {
			cap = cap ? 2 * cap : 256;
			uint64_t *seq = realloc(s->seq, cap * sizeof *seq);
			if (seq)
				s->seq = seq;
			uint64_t *t = realloc(s->t_ns, cap * sizeof *t);
			if (t)
				s->t_ns = t;
			uint8_t *l = realloc(s->level, cap);
			if (l)
				s->level = l;
			if (!seq || !t || !l)
				return scan_nomem(p, s);
		}
		s->seq[s->intervals] = iv.seq;
		s->t_ns[s->intervals] = iv.t_ns;
		s->level[s->intervals++] = (uint8_t)iv.level;
		if (iv.level > s->level_max)
			s->level_max = iv.level;
		s->writes |= iv.sets & WSS_TRACE_SETS_WRITES;
		for (size_t k = 0; k < iv.nruns; k++)
			if (wss_ranges_add(&s->pages, iv.runs[k].first, iv.runs[k].n))
				return scan_nomem(p, s);
	}
	if (r) {
		wss_scan_release(s);
		return r;
	}
	if (s->level_max && !p->prof.has_seed) {
		fprintf(stderr, "wss: %s: a sampled trace, but the profile has no \"sampling_seed\"\n", p->prof.path);
		wss_scan_release(s);
		return WSS_EXIT_BADINPUT;
	}
	if (wss_ranges_finish(&s->pages))
		return scan_nomem(p, s);
	if ((r = wss_trace_rewind(&p->trace)))
		wss_scan_release(s);
	return r;
}

/* Opens a profile's pair and scans it; the usual start of a command. */
int wss_analyses_open_scanned(const char *path, wss_pair_t *p, wss_scan_t *s)
{
	int r = wss_pair_open(path, p);
	if (r)
		return r;
	if ((r = wss_scan_run(p, s)))
		wss_pair_close(p);
	return r;
}

int wss_analyses_nomem(const char *cmd)
{
	fprintf(stderr, "wss: %s: out of memory\n", cmd);
	return 1;
}

/* ---- output pieces ---- */

void wss_analyses_jf(wss_fmt_t *f, const char *fmt, ...)
{
	char buf[256], *big = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof buf && (big = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (n < 0 || (n >= (int)sizeof buf && !big))
		f->overflow = true;
	else
		wss_fmt_mem(f, big ? big : buf, (size_t)n);
	free(big);
}

void wss_analyses_json_num(wss_fmt_t *f, double v)
{
	char buf[40];
	wss_fmt_str(f, wss_text_shortest(buf, sizeof buf, v));
}

void wss_analyses_json_source(wss_fmt_t *f, const wss_pair_t *p)
{
	wss_fmt_str(f, "\"profile\":");
	wss_fmt_json_str(f, p->prof.path);
	wss_fmt_str(f, ",\"trace\":");
	wss_fmt_json_str(f, p->trace_path);
	wss_analyses_jf(f, ",\"truncated\":%s,\"truncated_at\":", p->trace.truncated ? "true" : "false");
	if (p->trace.truncated)
		wss_fmt_u64(f, p->trace.off);
	else
		wss_fmt_str(f, "null");
	wss_fmt_str(f, ",\"end\":");
	if (!p->trace.ended)
		wss_fmt_str(f, "null");
	else
		wss_analyses_jf(f, "{\"reason\":\"%s\",\"last\":%" PRIu64 "}",
				p->trace.end_reason == WSS_TRACE_END_RUN   ? "exit"
				: p->trace.end_reason == WSS_TRACE_END_MAX ? "trace_max"
									   : "error",
				p->trace.end_last);
}

int wss_analyses_json_init(wss_fmt_t *f, const char *cmd)
{
	return wss_fmt_init_growable(f, 1 << 16) ? wss_analyses_nomem(cmd) : 0;
}

int wss_analyses_json_write(wss_fmt_t *f, int r, FILE *out, const char *cmd)
{
	wss_fmt_ch(f, '\n');
	if (!r && f->overflow)
		r = wss_analyses_nomem(cmd);
	if (!r) {
		fwrite(f->buf, 1, f->len, out);
		r = wss_analyses_finish(out, cmd);
	}
	wss_fmt_release(f);
	return r;
}

/* The text forms' first lines: what was read, and how the trace ended
 * when that was not normal. */
void wss_analyses_text_source(FILE *out, const char *cmd, const wss_pair_t *p)
{
	fprintf(out, "wss %s: %s (trace %s)\n", cmd, p->prof.path, p->trace_path);
	char end[160];
	wss_trace_describe_end(&p->trace, end, sizeof end);
	if (*end)
		fprintf(out, "trace %s\n", end);
}

int wss_analyses_finish(FILE *out, const char *cmd)
{
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "wss: %s: %s\n", cmd, strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}
