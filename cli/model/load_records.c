/* The profile's records after its header (cli/model/load.c hands each here by
 * its type), a reader per type: the samples, with each thread's totals
 * kept across them; the summary; the modules, stacks and peaks; the run's
 * first-touch sites and allocation sites; and the session's other
 * processes.  References between records are left to the reports. */
#include "config.h"
#include "cli/model/load_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/json.h"
#include "config/config.h"

static wss_load_thread_t *thread_slot(loader_t *ld, int64_t tid)
{
	wss_profile_t *p = ld->p;
	if (2 * (p->nthreads + 1) > p->thread_index_cap) {
		size_t cap = p->thread_index_cap ? p->thread_index_cap * 2 : 64;
		int64_t *t = calloc(cap, sizeof *t);
		if (!t) {
			wss_load_nomem(ld);
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
	wss_load_thread_t *t = LOAD_GROW(ld, p->threads, p->nthreads, p->threads_cap);
	if (!t)
		return NULL;
	p->thread_index[h] = (int64_t)p->nthreads;
	t->tid = tid;
	t->cpu_ns = -1;
	return t;
}

int wss_load_read_sample(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_sample_t s = {.cpu_ns = -1, .read = -1, .write = -1, .rate = 1, .tracked = -1, .members = -1, .faults = -1,
			  .sampled = {-1, -1, -1}, .faults_ns = -1, .tick_ns = -1, .change_ns = -1, .program_ns = -1, .wall_ns = -1,
			  .code = -1, .code_ns = -1};
	const char *rec = "sample";
	const wss_json_t *sampled, *cost;
	if (!wss_load_need_int(ld, r, rec, "seq", &s.seq) || !wss_load_need_int(ld, r, rec, "t_ns", &s.t_ns) ||
	    !wss_load_need_pages(ld, r, rec, "data_pages", &s.data) ||
	    !wss_load_opt_int(ld, r, rec, "cpu_ns", &s.cpu_ns) ||
	    !wss_load_opt_pages(ld, r, rec, "read_pages", &s.read) ||
	    !wss_load_opt_pages(ld, r, rec, "write_pages", &s.write) ||
	    !wss_load_opt_int(ld, r, rec, "rate", &s.rate) || !wss_load_opt_cis(ld, r, rec, s.ci) ||
	    !wss_load_opt_bool(ld, r, rec, "lower_bound", &s.lower_bound) ||
	    !wss_load_opt_obj(ld, r, rec, "sampled", &sampled) || !wss_load_opt_obj(ld, r, rec, "cost", &cost) ||
	    !wss_load_opt_pages(ld, r, rec, "faults", &s.faults) || !wss_load_opt_bool(ld, r, rec, "final", &s.final) ||
	    !wss_load_opt_pages(ld, r, rec, "code_pages", &s.code) ||
	    !wss_load_opt_bool(ld, r, rec, "code_lower_bound", &s.code_lower_bound))
		return ld->status;
	/* A duplicated, missing or swapped sample would change every figure
	 * the reports print: the writer numbers them 1, 2, 3, ... in file
	 * order, so anything else is not one process's profile. */
	if (s.seq != (int64_t)p->nsamples + 1)
		return wss_load_bad(ld, ld->line,
			   "sample: \"seq\" %lld, expected %zu (samples are numbered 1, 2, 3, ... in order)",
			   (long long)s.seq, p->nsamples + 1);
	const wss_json_t *kinds = NULL;
	if (!wss_load_opt_obj(ld, r, rec, "kinds", &kinds))
		return ld->status;
	for (int k = 0; k < WSS_KIND_N; k++) {
		const wss_json_t *o = k && kinds ? wss_json_get(kinds, wss_kind_name(k)) : NULL;
		s.kind_data[k] = -1;
		if (o && o->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "sample: kinds: \"%s\" is not an object", wss_kind_name(k));
		if (o && !wss_load_need_pages(ld, o, "sample: kinds", "data", &s.kind_data[k]))
			return ld->status;
	}
	p->has_code |= s.code >= 0;
	p->code_lower_bound |= s.code_lower_bound;
	if (s.rate < 1)
		return wss_load_bad(ld, ld->line, "sample: \"rate\" is 0 (1 is exact)");
	if (s.rate > LOAD_RATE_MAX || (s.rate & (s.rate - 1)))
		return wss_load_bad(ld, ld->line, "sample: \"rate\" %lld is not a power of two up to 2^30",
				    (long long)s.rate);
	if (sampled && (!wss_load_opt_pages(ld, sampled, "sample: sampled", "tracked", &s.tracked) ||
			!wss_load_opt_pages(ld, sampled, "sample: sampled", "members", &s.members) ||
			!wss_load_opt_pages(ld, sampled, "sample: sampled", "data", &s.sampled[WSS_SERIES_DATA]) ||
			!wss_load_opt_pages(ld, sampled, "sample: sampled", "read", &s.sampled[WSS_SERIES_READ]) ||
			!wss_load_opt_pages(ld, sampled, "sample: sampled", "write", &s.sampled[WSS_SERIES_WRITE]) ||
			!wss_load_opt_bool(ld, sampled, "sample: sampled", "all_writes", &s.all_writes)))
		return ld->status;
	if (cost && (!wss_load_opt_int(ld, cost, "sample: cost", "faults_ns", &s.faults_ns) ||
		     !wss_load_opt_int(ld, cost, "sample: cost", "tick_ns", &s.tick_ns) ||
		     !wss_load_opt_int(ld, cost, "sample: cost", "change_ns", &s.change_ns) ||
		     !wss_load_opt_int(ld, cost, "sample: cost", "code_ns", &s.code_ns) ||
		     !wss_load_opt_int(ld, cost, "sample: cost", "program_ns", &s.program_ns) ||
		     !wss_load_opt_int(ld, cost, "sample: cost", "wall_ns", &s.wall_ns)))
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
		return wss_load_bad(ld, ld->line, "sample: \"threads\" missing or not an array");
	s.thread_first = p->nsample_threads;
	for (size_t k = 0; k < threads->n; k++) {
		const wss_json_t *o = threads->items[k];
		int64_t tid, data, write = -1, faults = 0, cpu = -1, code = 0;
		wss_ci_t ci[WSS_SERIES_N] = {{0}};
		rec = "sample: threads[]";
		if (o->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "%s: not an object", rec);
		if (!wss_load_need_int(ld, o, rec, "tid", &tid) ||
		    !wss_load_need_pages(ld, o, rec, "data_pages", &data) ||
		    !wss_load_opt_pages(ld, o, rec, "write_pages", &write) ||
		    !wss_load_opt_pages(ld, o, rec, "faults", &faults) ||
		    !wss_load_opt_int(ld, o, rec, "cpu_ns", &cpu) || !wss_load_opt_cis(ld, o, rec, ci) ||
		    !wss_load_opt_pages(ld, o, rec, "code_pages", &code))
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
			return wss_load_bad(ld, ld->line, "%s: \"tid\" %lld is not a thread id", rec, (long long)tid);
		if (ld->flags & WSS_LOAD_THREAD_SAMPLES) {
			if (faults > UINT32_MAX)
				faults = UINT32_MAX;
			wss_sample_thread_t *st = LOAD_GROW(ld, p->sample_threads, p->nsample_threads, p->sample_threads_cap);
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
	wss_sample_t *slot = LOAD_GROW(ld, p->samples, p->nsamples, p->samples_cap);
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
		return wss_load_bad(ld, ld->line, "%s: \"avg\" missing or not a non-negative number", rec);
	if (!(avg < (double)ld->pages_limit))
		return wss_load_bad(ld, ld->line, "%s: \"avg\" %g is out of range (2^63 bytes of pages or more)", rec,
				    avg);
	/* total null: not known (wss attach cannot tell which pages were read). */
	const wss_json_t *total = wss_json_get(o, "total");
	if (total && total->type == WSS_JSON_NULL)
		st->total = -1;
	else if (!wss_load_need_pages(ld, o, rec, "total", &st->total))
		return ld->status;
	if (!wss_load_need_pages(ld, o, rec, "peak", &st->peak) ||
	    !wss_load_opt_ci(ld, o, rec, "avg_ci", &st->avg_ci) ||
	    !wss_load_opt_ci(ld, o, rec, "peak_ci", &st->peak_ci) ||
	    !wss_load_opt_ci(ld, o, rec, "total_ci", &st->total_ci))
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
		return wss_load_bad(ld, ld->line, "summary: \"%s\" is not an array", key);
	if (hot->n && !(*out = calloc(hot->n, sizeof **out)))
		return wss_load_nomem(ld);
	char rec[40];
	snprintf(rec, sizeof rec, "summary: %s[]", key);
	for (size_t k = 0; k < hot->n; k++) {
		const wss_json_t *o = hot->items[k];
		wss_hot_t *h = &(*out)[(*nout)++];
		h->stack = h->gone_seq = -1;
		if (o->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "%s: not an object", rec);
		if (!wss_load_need_addr(ld, o, rec, "addr", &h->addr) ||
		    !wss_load_need_int(ld, o, rec, "intervals", &h->intervals) ||
		    !wss_load_need_str(ld, o, rec, "mapping", &h->mapping) ||
		    !wss_load_opt_int(ld, o, rec, "stack", &h->stack) ||
		    !wss_load_opt_int(ld, o, rec, "gone", &h->gone_seq))
			return ld->status;
	}
	return 0;
}

int wss_load_read_summary(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	const char *rec = "summary";
	if (!wss_json_get(r, "data"))
		return wss_load_bad(ld, ld->line, "summary: \"data\" missing");
	if (!wss_load_need_int(ld, r, rec, "samples", &p->summary_samples) ||
	    !wss_load_opt_int(ld, r, rec, "duration_ns", &p->duration_ns) ||
	    !wss_load_opt_int(ld, r, rec, "faults", &p->faults) ||
	    !wss_load_opt_bool(ld, r, rec, "sampled", &p->summary_sampled) ||
	    !wss_load_opt_bool(ld, r, rec, "lower_bound", &p->summary_lower_bound) ||
	    !wss_load_opt_int(ld, r, rec, "rate_max", &p->summary_rate_max) || load_stat(ld, r, "data", &p->data) ||
	    load_stat(ld, r, "read", &p->read) || load_stat(ld, r, "write", &p->write) ||
	    load_stat(ld, r, "code", &p->code))
		return ld->status;
	if (p->summary_rate_max > LOAD_RATE_MAX || (p->summary_rate_max > 0 && (p->summary_rate_max & (p->summary_rate_max - 1))))
		return wss_load_bad(ld, ld->line, "summary: \"rate_max\" %lld is not a power of two up to 2^30",
			   (long long)p->summary_rate_max);
	const wss_json_t *kinds = NULL;
	if (!wss_load_opt_obj(ld, r, rec, "kinds", &kinds))
		return ld->status;
	for (int k = 1; kinds && k < WSS_KIND_N; k++) {
		const wss_json_t *o = wss_json_get(kinds, wss_kind_name(k));
		if (o && o->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "summary: kinds: \"%s\" is not an object", wss_kind_name(k));
		if (load_stat(ld, kinds, wss_kind_name(k), &p->kinds[k]))
			return ld->status;
	}
	const wss_json_t *prec = NULL;
	if (!wss_load_opt_obj(ld, r, rec, "precision", &prec) ||
	    (prec && (!wss_load_opt_str(ld, prec, "summary: precision", "note", &p->precision_note) ||
		      !wss_load_opt_int(ld, prec, "summary: precision", "intervals", &p->precision_intervals) ||
		      !wss_load_opt_int(ld, prec, "summary: precision", "missed", &p->precision_missed))))
		return ld->status;
	if (prec) {
		p->has_precision = true;
		if (!wss_json_get_num(prec, "target_pct", &p->precision_target_pct))
			p->precision_target_pct = -1;
		if (!wss_json_get_num(prec, "median_pct", &p->precision_median_pct))
			p->precision_median_pct = -1;
	}
	const wss_json_t *cen = NULL;
	if (!wss_load_opt_obj(ld, r, rec, "census", &cen) ||
	    (cen && (!wss_load_opt_str(ld, cen, "summary: census", "off", &p->census_off) ||
		     !wss_load_opt_pages(ld, cen, "summary: census", "data", &p->census_data) ||
		     !wss_load_opt_pages(ld, cen, "summary: census", "write", &p->census_write))))
		return ld->status;
	p->has_census = cen != NULL;
	const wss_json_t *tr = wss_json_get(r, "trace");
	if (tr) {
		const char *trec = "summary: trace";
		if (tr->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "summary: \"trace\" is not an object");
		const wss_json_t *st = wss_json_get(tr, "stopped");
		if (!wss_load_need_int(ld, tr, trec, "records", &p->trace_records) || !wss_load_need_int(ld, tr, trec, "pages", &p->trace_pages) ||
		    !wss_load_need_int(ld, tr, trec, "bytes", &p->trace_bytes) || !wss_load_need_int(ld, tr, trec, "last", &p->trace_last) ||
		    (st && st->type != WSS_JSON_NULL && !wss_load_opt_str(ld, tr, trec, "stopped", &p->trace_stopped)))
			return ld->status;
	}
	if (load_hot(ld, r, "hot_pages", &p->hot, &p->nhot) || load_hot(ld, r, "hot_code", &p->hot_code, &p->nhot_code))
		return ld->status;
	p->has_summary = true;
	return 0;
}

int wss_load_read_module(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_module_t *m = LOAD_GROW(ld, p->modules, p->nmodules, p->modules_cap);
	if (!m)
		return ld->status;
	const char *rec = "module";
	if (!wss_load_need_int(ld, r, rec, "id", &m->id) || !wss_load_need_str(ld, r, rec, "path", &m->path) ||
	    !wss_load_need_addr(ld, r, rec, "bias", &m->bias))
		return ld->status;
	if (wss_json_get(r, "start") || wss_json_get(r, "end")) {
		if (!wss_load_need_addr(ld, r, rec, "start", &m->start) ||
		    !wss_load_need_addr(ld, r, rec, "end", &m->end))
			return ld->status;
		if (m->end <= m->start)
			return wss_load_bad(ld, ld->line, "module: \"end\" is not above \"start\"");
	}
	const wss_json_t *id = wss_json_get(r, "build_id");
	if (id && id->type != WSS_JSON_NULL) {
		if (id->type != WSS_JSON_STRING || id->len == 0 || id->len % 2 || strspn(id->s, "0123456789abcdefABCDEF") != id->len)
			return wss_load_bad(ld, ld->line, "module: \"build_id\" is neither hex nor null");
		if (!(m->build_id = wss_load_dup(ld, id->s)))
			return ld->status;
		for (char *c = m->build_id; *c; c++)
			if (*c >= 'A' && *c <= 'F')
				*c = (char)(*c - 'A' + 'a');
	}
	return 0;
}

int wss_load_read_stack(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_stack_t *s = LOAD_GROW(ld, p->stacks, p->nstacks, p->stacks_cap);
	if (!s)
		return ld->status;
	if (!wss_load_need_int(ld, r, "stack", "id", &s->id))
		return ld->status;
	const wss_json_t *f = wss_json_get(r, "frames");
	if (!f || f->type != WSS_JSON_ARRAY)
		return wss_load_bad(ld, ld->line, "stack: \"frames\" missing or not an array");
	if (f->n && !(s->frames = calloc(f->n, sizeof *s->frames)))
		return wss_load_nomem(ld);
	for (size_t k = 0; k < f->n; k++, s->n++)
		if (!wss_load_parse_addr(f->items[k], &s->frames[k]))
			return wss_load_bad(ld, ld->line, "stack: frames[%zu] is not a hex address (\"0x...\")", k);
	return 0;
}

static int load_sites(loader_t *ld, const wss_json_t *sites, const char *rec, wss_site_t **out, size_t *n);

int wss_load_read_peak(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_peak_t *k = LOAD_GROW(ld, p->peaks, p->npeaks, p->peaks_cap);
	if (!k)
		return ld->status;
	const char *rec = "peak";
	if (!wss_load_need_int(ld, r, rec, "seq", &k->seq) || !wss_load_need_str(ld, r, rec, "series", &k->series) ||
	    !wss_load_need_pages(ld, r, rec, "value", &k->value))
		return ld->status;
	if (!wss_json_get_num(r, "mean", &k->mean) || !wss_json_get_num(r, "threshold", &k->threshold))
		return wss_load_bad(ld, ld->line, "peak: \"mean\" or \"threshold\" missing or not a number");
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
		return wss_load_bad(ld, ld->line, "%s: \"sites\" is not an array", rec);
	if (sites->n && !(*out = calloc(sites->n, sizeof **out)))
		return wss_load_nomem(ld);
	char sub[32];
	snprintf(sub, sizeof sub, "%s: sites[]", rec);
	for (size_t j = 0; j < sites->n; j++, (*n)++) {
		const wss_json_t *o = sites->items[j];
		wss_site_t *st = &(*out)[j];
		st->stack = -1;
		if (o->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "%s: sites[%zu] is not an object", rec, j);
		if (!wss_load_need_addr(ld, o, sub, "pc", &st->pc) ||
		    !wss_load_opt_int(ld, o, sub, "stack", &st->stack) ||
		    !wss_load_need_pages(ld, o, sub, "pages", &st->pages))
			return ld->status;
	}
	return 0;
}

/* The whole run's first-touch sites, once, at the end. */
int wss_load_read_run_sites(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	if (p->has_sites)
		return wss_load_bad(ld, ld->line, "a second sites record");
	const wss_json_t *sites = wss_json_get(r, "sites");
	if (!sites)
		return wss_load_bad(ld, ld->line, "sites: \"sites\" missing");
	p->has_sites = true;
	p->sites_other = 0;
	if (!wss_load_opt_pages(ld, r, "sites", "other_pages", &p->sites_other))
		return ld->status;
	return load_sites(ld, sites, "sites", &p->sites, &p->nsites);
}

/* The allocation sites, once, at the end. */
int wss_load_read_alloc_sites(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	const char *rec = "alloc_sites";
	if (p->has_alloc_sites)
		return wss_load_bad(ld, ld->line, "a second alloc_sites record");
	const wss_json_t *sites = wss_json_get(r, "sites");
	if (!sites || sites->type != WSS_JSON_ARRAY)
		return wss_load_bad(ld, ld->line, "alloc_sites: \"sites\" missing or not an array");
	p->has_alloc_sites = true;
	if (!wss_load_need_int(ld, r, rec, "mean_bytes", &p->alloc_mean) || !wss_load_need_int(ld, r, rec, "idle_after", &p->alloc_idle_after) ||
	    !wss_load_need_int(ld, r, rec, "intervals", &p->alloc_intervals) || !wss_load_opt_int(ld, r, rec, "cut_intervals", &p->alloc_cut) ||
	    !wss_load_opt_int(ld, r, rec, "dropped", &p->alloc_dropped))
		return ld->status;
	if (sites->n && !(p->alloc_sites = calloc(sites->n, sizeof *p->alloc_sites)))
		return wss_load_nomem(ld);
	const char *sub = "alloc_sites: sites[]";
	for (size_t j = 0; j < sites->n; j++, p->nalloc_sites++) {
		const wss_json_t *o = sites->items[j];
		wss_alloc_site_t *a = &p->alloc_sites[j];
		if (o->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, ld->line, "alloc_sites: sites[%zu] is not an object", j);
		if (!wss_load_need_int(ld, o, sub, "stack", &a->stack) ||
		    !wss_load_need_int(ld, o, sub, "sampled", &a->sampled) ||
		    !wss_load_need_int(ld, o, sub, "allocs", &a->allocs) ||
		    !wss_load_need_int(ld, o, sub, "live_bytes", &a->live_bytes) ||
		    !wss_load_need_int(ld, o, sub, "freed_bytes", &a->freed_bytes) ||
		    !wss_load_need_pages(ld, o, sub, "live_pages", &a->live_pages) ||
		    !wss_load_need_pages(ld, o, sub, "peak_live_pages", &a->peak_live_pages) ||
		    !wss_load_need_pages(ld, o, sub, "ws_pages", &a->ws_pages) ||
		    !wss_load_need_pages(ld, o, sub, "idle_pages", &a->idle_pages) ||
		    !wss_load_need_pages(ld, o, sub, "touched_pages", &a->touched_pages) ||
		    !wss_load_opt_ci(ld, o, sub, "live_ci", &a->live_ci) ||
		    !wss_load_opt_ci(ld, o, sub, "ws_ci", &a->ws_ci) ||
		    !wss_load_opt_ci(ld, o, sub, "idle_ci", &a->idle_ci) ||
		    !wss_load_opt_ci(ld, o, sub, "touched_ci", &a->touched_ci))
			return ld->status;
	}
	return 0;
}

/* Another process of the session noted itself in the leader's profile. */
int wss_load_read_process(loader_t *ld, const wss_json_t *r)
{
	wss_profile_t *p = ld->p;
	wss_process_note_t *n = LOAD_GROW(ld, p->procs, p->nprocs, p->procs_cap);
	if (!n)
		return ld->status;
	n->ppid = n->data_peak = n->data_total = n->duration_ns = -1;
	const wss_json_t *prof = wss_json_get(r, "profile");
	if (!wss_load_need_int(ld, r, "process", "pid", &n->pid) ||
	    !wss_load_opt_int(ld, r, "process", "ppid", &n->ppid) ||
	    !wss_load_opt_str(ld, r, "process", "reason", &n->reason) ||
	    !wss_load_opt_str(ld, r, "process", "exe", &n->exe) ||
	    !wss_load_opt_pages(ld, r, "process", "data_peak", &n->data_peak) ||
	    !wss_load_opt_pages(ld, r, "process", "data_total", &n->data_total) ||
	    !wss_load_opt_int(ld, r, "process", "duration_ns", &n->duration_ns) ||
	    !wss_load_opt_ci(ld, r, "process", "data_peak_ci", &n->peak_ci) ||
	    !wss_load_opt_ci(ld, r, "process", "data_total_ci", &n->total_ci))
		return ld->status;
	if (n->exe && (n->data_peak < 0 || n->data_total < 0))
		return wss_load_bad(ld, ld->line, "process: \"exe\" without \"data_peak\" and \"data_total\"");
	if (prof && prof->type != WSS_JSON_NULL && !wss_load_opt_beside(ld, r, "process", "profile", &n->profile))
		return ld->status;
	return 0;
}
