/* `wss simulate` (analyses.h): the replacement policies (policy.c) over
 * the reference string, at memory sizes about an interval's working set,
 * or at every size with --all: faults, hits and the hit ratio over time.
 * LRU alone comes from mrc's stack over ranges (analyses_refs.c), without
 * walking the string. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/policy.h"
#include "cli/out/text.h"

#define MIB (1024.0 * 1024.0)

typedef struct sim_result {
	wss_policy_kind_t kind;
	uint64_t frames, hits, faults;
	uint64_t *period_hits, *period_refs; /* per period */
} sim_result_t;

/* One policy and size over the string; periods of period sampled
 * references each. */
static int sim_run(const wss_refs_t *rs, const uint64_t *next, size_t period, size_t nperiods, sim_result_t *o)
{
	wss_policy_t *pol;
	o->period_hits = calloc(nperiods, sizeof *o->period_hits);
	o->period_refs = calloc(nperiods, sizeof *o->period_refs);
	if (!o->period_hits || !o->period_refs ||
	    wss_policy_new(o->kind, wss_refs_scaled_frames(rs, o->frames), rs->npages, &pol))
		return ENOMEM;
	size_t e = 0;
	for (size_t i = 0; i < rs->n; i++) {
		while (e < rs->nends && rs->ends[e] == i) {
			wss_policy_interval_end(pol);
			e++;
		}
		bool hit = wss_policy_ref(pol, rs->r[i], next ? next[i] : WSS_POLICY_NEVER);
		o->hits += hit;
		o->period_hits[i / period] += hit;
		o->period_refs[i / period]++;
	}
	wss_policy_free(pol);
	o->hits *= rs->rate;
	o->faults = (uint64_t)rs->n * rs->rate - o->hits;
	for (size_t k = 0; k < nperiods; k++) {
		o->period_hits[k] *= rs->rate;
		o->period_refs[k] *= rs->rate;
	}
	return 0;
}

/* The string's length and distinct keys, from a pass of mrc's stack
 * over ranges (so without walking it). */
static int sim_count(wss_pair_t *p, const wss_scan_t *s, wss_refs_t *rs)
{
	wss_refs_dists_t h = {0};
	int r = wss_refs_mrc_ranges(p, s, rs, &h);
	wss_refs_dist_finish(&h);
	free(h.v);
	rs->distinct = h.cold;
	return r ? r : wss_trace_rewind(&p->trace);
}

/* Every result of res (all LRU) in one more pass of the stack over
 * ranges: a reference hits at f frames when its distance is at most f. */
static int sim_lru(wss_pair_t *p, const wss_scan_t *s, const wss_refs_t *rs, sim_result_t *res, size_t nres,
		   size_t period, size_t nperiods)
{
	uint64_t *fr = calloc(nres ? nres : 1, sizeof *fr), *hits = calloc(nres ? nres : 1, sizeof *hits);
	uint64_t **ph = calloc(nres ? nres : 1, sizeof *ph);
	int r = fr && hits && ph ? 0 : ENOMEM;
	for (size_t i = 0; i < nres && !r; i++) {
		fr[i] = wss_refs_scaled_frames(rs, res[i].frames);
		res[i].period_hits = ph[i] = calloc(nperiods ? nperiods : 1, sizeof **ph);
		res[i].period_refs = calloc(nperiods ? nperiods : 1, sizeof *res[i].period_refs);
		if (!ph[i] || !res[i].period_refs)
			r = ENOMEM;
	}
	wss_refs_dist_sink_t sink = {nres, fr, hits, ph, period};
	wss_refs_dists_t h = {.sink = &sink};
	wss_refs_t count;
	if (r || (r = wss_refs_mrc_ranges(p, s, &count, &h)))
		goto out;
	for (size_t i = 0; i < nres; i++) {
		sim_result_t *o = &res[i];
		o->hits = hits[i] * rs->rate;
		o->faults = (uint64_t)rs->n * rs->rate - o->hits;
		for (size_t k = 0; k < nperiods; k++) {
			uint64_t end = (k + 1) * period < rs->n ? (k + 1) * period : rs->n;
			o->period_hits[k] *= rs->rate;
			o->period_refs[k] = (end - k * period) * rs->rate;
		}
	}
out:
	free(h.v);
	free(fr);
	free(hits);
	free(ph);
	return r == ENOMEM ? wss_analyses_nomem("simulate") : r;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void sim_text(FILE *out, const wss_pair_t *p, const wss_refs_t *rs, const sim_result_t *res, size_t nres,
		     uint64_t period, size_t nperiods)
{
	wss_analyses_text_source(out, "simulate", p);
	char g[32], g2[32];
	fprintf(out, "references %s (each page's first touch in each interval, in address order within it); pages %s distinct\n",
		wss_text_grouped(g, sizeof g, (uint64_t)rs->n * rs->rate), wss_text_grouped(g2, sizeof g2, rs->distinct * rs->rate));
	if (rs->level)
		fprintf(out, "sampled    1 page in %" PRIu64 ": frames / %" PRIu64 " on the sampled string, counts x %" PRIu64
			     "\n",
			rs->rate, rs->rate, rs->rate);
	fprintf(out, "%-8s %10s %14s %14s %9s\n", "policy", "frames", "faults", "hits", "hit ratio");
	for (size_t i = 0; i < nres; i++)
		fprintf(out, "%-8s %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %9.4f\n", wss_policy_name(res[i].kind),
			res[i].frames, res[i].faults, res[i].hits, ratio(res[i].hits, res[i].hits + res[i].faults));
	fprintf(out, "hit ratio over time, every %s references:\n", wss_text_grouped(g, sizeof g, period));
	for (size_t i = 0; i < nres; i++) {
		fprintf(out, "%-8s %10" PRIu64 " ", wss_policy_name(res[i].kind), res[i].frames);
		for (size_t k = 0; k < nperiods; k++)
			fprintf(out, " %.2f", ratio(res[i].period_hits[k], res[i].period_refs[k]));
		fputc('\n', out);
	}
}

static void sim_csv(FILE *out, const sim_result_t *res, size_t nres, size_t nperiods)
{
	fputs("policy,frames,period,references,hits,faults,hit_ratio\n", out);
	for (size_t i = 0; i < nres; i++) {
		const sim_result_t *o = &res[i];
		const char *name = wss_policy_name(o->kind);
		fprintf(out, "%s,%" PRIu64 ",all,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9g\n", name, o->frames,
			o->hits + o->faults, o->hits, o->faults, ratio(o->hits, o->hits + o->faults));
		for (size_t k = 0; k < nperiods; k++)
			fprintf(out, "%s,%" PRIu64 ",%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9g\n", name, o->frames, k + 1,
				o->period_refs[k], o->period_hits[k], o->period_refs[k] - o->period_hits[k],
				ratio(o->period_hits[k], o->period_refs[k]));
	}
}

static void sim_json(wss_fmt_t *f, const wss_pair_t *p, const wss_refs_t *rs, const sim_result_t *res, size_t nres,
		     uint64_t period, size_t nperiods)
{
	wss_fmt_ch(f, '{');
	wss_analyses_json_source(f, p);
	wss_analyses_jf(f, ",\"rate\":%" PRIu64 ",\"references\":%" PRIu64 ",\"distinct\":%" PRIu64 ",\"period\":%" PRIu64
		     ",\"results\":[",
		rs->rate, (uint64_t)rs->n * rs->rate, rs->distinct * rs->rate, period);
	for (size_t i = 0; i < nres; i++) {
		const sim_result_t *o = &res[i];
		wss_analyses_jf(f, "%s{\"policy\":\"%s\",\"frames\":%" PRIu64 ",\"faults\":%" PRIu64 ",\"hits\":%" PRIu64
			     ",\"hit_ratio\":",
			i ? "," : "", wss_policy_name(o->kind), o->frames, o->faults, o->hits);
		wss_analyses_json_num(f, ratio(o->hits, o->hits + o->faults));
		wss_fmt_str(f, ",\"over_time\":[");
		for (size_t k = 0; k < nperiods; k++) {
			if (k)
				wss_fmt_ch(f, ',');
			wss_analyses_json_num(f, ratio(o->period_hits[k], o->period_refs[k]));
		}
		wss_fmt_str(f, "]}");
	}
	wss_fmt_str(f, "]}");
}

/* The brief text (no --all): for each size, each policy's miss ratio.
 * The default sizes are about the working set of an interval (the
 * references of one: the working set with a one-interval window), each
 * named: half its average, its average, its peak, twice its peak, and all
 * the pages touched (where only first references miss). */
static const char *const sim_size_names[] = {"avg / 2", "avg", "peak", "peak x 2", "all pages"};

typedef struct sim_brief {
	uint64_t avg, peak; /* pages, scaled */
	unsigned *names;    /* per size: bit k for sim_size_names[k]; NULL: the sizes were given */
	size_t nall;        /* the sizes --all would give (wss_refs_default_sizes) */
} sim_brief_t;

/* The named sizes into *sizes, ascending, a size several are once with
 * all their names.  Returns 0 or ENOMEM. */
static int sim_brief_sizes(const wss_refs_t *rs, uint64_t intervals, sim_brief_t *b, uint64_t **sizes, size_t *n)
{
	uint64_t refs = (uint64_t)rs->n * rs->rate, all = rs->distinct ? rs->distinct * rs->rate : 1;
	b->avg = intervals ? (refs + intervals / 2) / intervals : 0;
	b->peak = rs->peak * rs->rate;
	for (uint64_t c = 1; c < all; c *= 2)
		b->nall++;
	b->nall++;
	/* Ascending as listed: the average (rounded) is at most the peak, the
	 * peak at most all the pages; twice the peak, when above them, goes. */
	uint64_t want[5] = {(b->avg + 1) / 2, b->avg, b->peak, b->peak * 2, all};
	*n = 0;
	*sizes = malloc(5 * sizeof **sizes);
	b->names = calloc(5, sizeof *b->names);
	if (!*sizes || !b->names)
		return ENOMEM;
	for (int k = 0; k < 5; k++) {
		if (!want[k] || want[k] > all)
			continue;
		if (!*n || (*sizes)[*n - 1] != want[k])
			(*sizes)[(*n)++] = want[k];
		b->names[*n - 1] |= 1u << k;
	}
	return 0;
}

static void sim_brief_text(FILE *out, const wss_pair_t *p, const wss_refs_t *rs, const sim_result_t *res, size_t nkinds,
			   size_t nframes, const sim_brief_t *b)
{
	wss_analyses_text_source(out, "simulate", p);
	char g[32], g2[32];
	double ps = (double)p->prof.page_size;
	fprintf(out, "references %s (one per page and interval), %s pages distinct\n",
		wss_text_grouped(g, sizeof g, (uint64_t)rs->n * rs->rate),
		wss_text_grouped(g2, sizeof g2, rs->distinct * rs->rate));
	if (b->names)
		fprintf(out, "working set of an interval: avg %s, peak %s pages (%.3f / %.3f MiB)\n",
			wss_text_grouped(g, sizeof g, b->avg), wss_text_grouped(g2, sizeof g2, b->peak),
			(double)b->avg * ps / MIB, (double)b->peak * ps / MIB);
	if (rs->level)
		fprintf(out, "sampled    1 page in %" PRIu64 ": frames / %" PRIu64 " on the sampled string, counts x %" PRIu64
			     "\n",
			rs->rate, rs->rate, rs->rate);
	fputs("miss ratio (faults / references), %, by memory size:\n", out);
	fprintf(out, "%9s %10s", "frames", "MiB");
	for (size_t k = 0; k < nkinds; k++)
		fprintf(out, " %6s", wss_policy_name(res[k * nframes].kind));
	fputc('\n', out);
	for (size_t f = 0; f < nframes; f++) {
		fprintf(out, "%9" PRIu64 " %10.3f", res[f].frames, (double)res[f].frames * ps / MIB);
		for (size_t k = 0; k < nkinds; k++) {
			const sim_result_t *o = &res[k * nframes + f];
			fprintf(out, " %6.2f", 100.0 * ratio(o->faults, o->hits + o->faults));
		}
		for (int k = 0, first = 1; b->names && k < 5; k++)
			if (b->names[f] & (1u << k)) {
				fprintf(out, "%s%s", first ? "  " : ", ", sim_size_names[k]);
				first = 0;
			}
		fputc('\n', out);
	}
	if (b->names)
		fprintf(out, "faults, hits and the hit ratio over time, at %zu sizes: wss simulate --all\n", b->nall);
	else
		fputs("faults, hits and the hit ratio over time: wss simulate --all\n", out);
}

typedef struct sim_req {
	wss_simulate_opts_t o;
	uint64_t *frames; /* o.frames, owned */
	wss_out_t form;
	const char *path;
} sim_req_t;

/* simulate's options into q.  Returns 0, WSS_CMD_HELP or 2 (said). */
static int sim_parse(int argc, char **argv, sim_req_t *q)
{
	const char *pol = NULL, *fr = NULL, *per = NULL, *paths[1];
	bool csv = false, json = false, all = false;
	const wss_opt_t opts[] = {{"--policy", &pol, NULL}, {"--frames", &fr, NULL}, {"--period", &per, NULL},
				  {"--all", NULL, &all},    {"--csv", NULL, &csv},   {"--json", NULL, &json}};
	size_t np;
	memset(q, 0, sizeof *q);
	int r = wss_opts_parse("simulate", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss simulate [--policy P,...] [--frames N,...] [--period N] [--all] PROFILE");
	if (r || (r = wss_analyses_output_form("simulate", csv, json, &q->form)))
		return r;
	q->o.all = all;
	for (const char *c = pol; c && *c;) {
		size_t len = strcspn(c, ",");
		char name[16];
		snprintf(name, sizeof name, "%.*s", (int)(len < 15 ? len : 15), c);
		wss_policy_kind_t k;
		if (len >= sizeof name || !wss_policy_parse(name, &k))
			return wss_analyses_usage_error("simulate",
							"--policy: fifo, lru, clock, nfu, aging or opt, not ", name);
		if (q->o.nkinds == WSS_POLICY_N)
			return wss_analyses_usage_error("simulate", "--policy: each policy once", NULL);
		q->o.kinds[q->o.nkinds++] = k;
		c += len + (c[len] == ',');
	}
	if (pol && !q->o.nkinds)
		return wss_analyses_usage_error("simulate", "an empty list for --policy", NULL);
	if (per && (r = wss_opts_number("simulate", "--period", per, 1, UINT64_MAX >> 1, &q->o.period)))
		return r;
	if (fr && (r = wss_analyses_number_list("simulate", "--frames", fr, 0, UINT32_MAX, &q->frames, &q->o.nframes)))
		return r;
	q->o.frames = q->frames;
	q->path = paths[0];
	return 0;
}

/* Every policy of q at every size of q over rs, into res (kinds major).
 * Returns 0 or 1 (said). */
static int sim_all(wss_pair_t *p, const wss_scan_t *s, const wss_refs_t *rs, const wss_simulate_opts_t *q, bool walk,
		   sim_result_t *res, size_t sp, size_t nperiods)
{
	uint64_t *next = NULL;
	int r = 0;
	for (size_t k = 0; k < q->nkinds; k++)
		for (size_t f = 0; f < q->nframes; f++) {
			res[k * q->nframes + f].kind = q->kinds[k];
			res[k * q->nframes + f].frames = q->frames[f];
		}
	if (!walk)
		return sim_lru(p, s, rs, res, q->nkinds * q->nframes, sp, nperiods);
	for (size_t k = 0; k < q->nkinds && !r; k++) {
		if (q->kinds[k] == WSS_POLICY_OPT && !next &&
		    (!(next = malloc((rs->n ? rs->n : 1) * sizeof *next)) ||
		     wss_policy_next_uses(rs->r, rs->n, rs->npages, next)))
			r = wss_analyses_nomem("simulate");
		for (size_t f = 0; f < q->nframes && !r; f++)
			if (sim_run(rs, q->kinds[k] == WSS_POLICY_OPT ? next : NULL, sp, nperiods,
				    &res[k * q->nframes + f]))
				r = wss_analyses_nomem("simulate");
	}
	free(next);
	return r;
}

/* The policies over the string of the profile at path with options o,
 * in form: text and CSV to out, JSON into json. */
static int sim_run_req(const char *path, const wss_simulate_opts_t *o, wss_out_t form, FILE *out, wss_fmt_t *json)
{
	wss_simulate_opts_t q = *o;
	uint64_t *own = NULL;
	bool brief = form == WSS_OUT_TEXT && !o->all;
	if (!q.nkinds)
		for (int k = 0; k < WSS_POLICY_N; k++)
			q.kinds[q.nkinds++] = (wss_policy_kind_t)k;
	wss_pair_t p;
	wss_scan_t s;
	wss_refs_t rs;
	sim_result_t *res = NULL;
	sim_brief_t names = {0};
	size_t nres = 0;
	int r = wss_analyses_open_scanned(path, &p, &s);
	if (r)
		return r;
	/* LRU comes from mrc's stack over ranges, whatever the string's
	 * length (page by page in the tests' reference build); the other
	 * policies walk the string. */
	bool walk = WSS_PER_PAGE;
	for (size_t k = 0; k < q.nkinds; k++)
		walk |= q.kinds[k] != WSS_POLICY_LRU;
	if (walk)
		r = wss_refs_build(&p, &s, &rs, "simulate", "a policy");
	else
		r = sim_count(&p, &s, &rs);
	if (r)
		goto out_scan;
	if (!q.frames && (brief ? sim_brief_sizes(&rs, s.intervals, &names, &own, &q.nframes)
				: wss_refs_default_sizes(rs.distinct * rs.rate, &own, &q.nframes))) {
		r = wss_analyses_nomem("simulate");
		goto out_refs;
	}
	if (!q.frames)
		q.frames = own;
	/* Ten periods by default; in sampled references, at least one. */
	uint64_t total = (uint64_t)rs.n * rs.rate, period = q.period;
	if (!period)
		period = total > 10 ? (total + 9) / 10 : 1;
	size_t sp = (size_t)(period >> rs.level) ? (size_t)(period >> rs.level) : 1;
	size_t nperiods = rs.n ? (rs.n + sp - 1) / sp : 0;
	nres = q.nkinds * q.nframes;
	if (!(res = calloc(nres ? nres : 1, sizeof *res))) {
		r = wss_analyses_nomem("simulate");
		goto out_refs;
	}
	if ((r = sim_all(&p, &s, &rs, &q, walk, res, sp, nperiods)))
		goto out_res;
	wss_pair_note_end(&p);
	if (form == WSS_OUT_JSON)
		sim_json(json, &p, &rs, res, nres, (uint64_t)sp * rs.rate, nperiods);
	else if (form == WSS_OUT_CSV)
		sim_csv(out, res, nres, nperiods);
	else if (brief)
		sim_brief_text(out, &p, &rs, res, q.nkinds, q.nframes, &names);
	else
		sim_text(out, &p, &rs, res, nres, (uint64_t)sp * rs.rate, nperiods);
	if (form != WSS_OUT_JSON)
		r = wss_analyses_finish(out, "simulate");
out_res:
	for (size_t i = 0; i < nres; i++) {
		free(res[i].period_hits);
		free(res[i].period_refs);
	}
	free(res);
out_refs:
	wss_refs_release(&rs);
out_scan:
	free(names.names);
	free(own);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

int wss_simulate_json(const char *path, const wss_simulate_opts_t *o, wss_fmt_t *f)
{
	return sim_run_req(path, o, WSS_OUT_JSON, NULL, f);
}

int wss_cmd_simulate(int argc, char **argv)
{
	sim_req_t q;
	int r = sim_parse(argc, argv, &q);
	wss_fmt_t f;
	if (r)
		return r;
	if (q.form != WSS_OUT_JSON)
		r = sim_run_req(q.path, &q.o, q.form, stdout, NULL);
	else if (!(r = wss_analyses_json_init(&f, "simulate")))
		r = wss_analyses_json_write(&f, sim_run_req(q.path, &q.o, q.form, NULL, &f), stdout, "simulate");
	free(q.frames);
	return r;
}
