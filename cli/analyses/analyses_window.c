/* `wss window` (analyses.h): the working set of every interval over a
 * sliding window of n intervals, for any n, from the trace; a sampled
 * trace's from the members of each window's coarsest level, estimated as
 * the engine's tick does.  The window's sets are kept over ranges here;
 * the tests' page-by-page build computes them in
 * analyses_window_pages.c. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/segs.h"
#include "common/sample.h"
#include "config/config.h"

/* Sample k's estimates from its members touched, as the engine's tick
 * computes them (engine/tick.c): exact at level 0; else n x / k with the
 * tracked pages n of the profile's sample k and the members k of the
 * window's level, the profile's own when its sample has that level and
 * tracked / 2^level rounded when not (stratified sampling puts one member
 * in each aligned block: within one per tracked range of the truth). */
static void win_estimate(const wss_profile_t *prof, wss_window_sample_t *w)
{
	if (!w->level) {
		w->data = (wss_estimate_t){w->x, w->x, w->x};
		w->write = (wss_estimate_t){w->xw, w->xw, w->xw};
	} else {
		const wss_sample_t *s = wss_load_sample(prof, (int64_t)w->seq);
		if (s && s->tracked >= 0) {
			uint64_t n = (uint64_t)s->tracked, m;
			if (s->rate == (int64_t)1 << w->level && s->members >= 0)
				m = (uint64_t)s->members;
			else
				m = (n + (1ull << (w->level - 1))) >> w->level;
			w->data = wss_estimate_pages(n, m, w->x);
			w->write = wss_estimate_pages(n, m, w->xw);
			w->ci = true;
		} else {
			/* No tracked count to scale by: the plain scaled count. */
			w->data = (wss_estimate_t){w->x << w->level, w->x << w->level, w->x << w->level};
			w->write = (wss_estimate_t){w->xw << w->level, w->xw << w->level, w->xw << w->level};
		}
	}
	/* Reads are data minus writes, as in the profile's samples. */
	if (w->write.est > w->data.est)
		w->write.est = w->data.est;
	w->read = w->data.est - w->write.est;
}

int wss_window_start(const wss_scan_t *s, wss_window_result_t *res, wss_window_levels_t *q)
{
	memset(res, 0, sizeof *res);
	q->qh = q->qt = 0;
	q->dq = malloc((s->intervals ? s->intervals : 1) * sizeof *q->dq);
	res->v = calloc(s->intervals ? s->intervals : 1, sizeof *res->v);
	return q->dq && res->v ? 0 : ENOMEM;
}

/* Interval i (seq k) enters the window: the window's level now. */
unsigned wss_window_level(const wss_scan_t *s, wss_window_levels_t *q, size_t i, uint64_t k, uint64_t n)
{
	while (q->qt > q->qh && s->level[q->dq[q->qt - 1]] <= s->level[i])
		q->qt--;
	q->dq[q->qt++] = i;
	while (s->seq[q->dq[q->qh]] + n <= k)
		q->qh++;
	return s->level[q->dq[q->qh]];
}

/* The sample of interval iv: x members of level touched in the window,
 * xw of them written. */
void wss_window_add(const wss_profile_t *prof, wss_window_result_t *res, const wss_trace_interval_t *iv, unsigned level,
		    uint64_t x, uint64_t xw)
{
	wss_window_sample_t *o = &res->v[res->n++];
	o->seq = iv->seq;
	o->t_ns = iv->t_ns;
	o->level = level;
	o->x = x;
	o->xw = xw;
	win_estimate(prof, o);
	res->sum = wss_load_sat_addu(res->sum, o->data.est);
	if (o->data.est > res->peak)
		res->peak = o->data.est;
}

int wss_window_end(wss_window_result_t *res, wss_window_levels_t *q, int r)
{
	free(q->dq);
	if (r) {
		free(res->v);
		res->v = NULL;
	}
	return r;
}

/* The members of each level 0 .. lmax among pages [first, first + len)
 * into m[].  Short ranges go page by page (a page's top level costs a few
 * hash steps: most pages leave the descent at once), long ones by
 * wss_sample_count, which costs the same whatever the length. */
static void members_of(uint64_t first, uint64_t len, unsigned lmax, uint64_t seed, uint64_t *m)
{
	m[0] = len;
	if (!lmax)
		return;
	if (len <= 16) {
		for (unsigned l = 1; l <= lmax; l++)
			m[l] = 0;
		/* Membership is nested: a member of lmax is one of every level. */
		for (uint64_t pn = first; pn < first + len; pn++) {
			unsigned top = lmax;
			if (!wss_sample_member(pn, lmax, seed))
				for (top = 0; top + 1 < lmax && wss_sample_member(pn, top + 1, seed);)
					top++;
			for (unsigned l = 1; l <= top; l++)
				m[l]++;
		}
		return;
	}
	for (unsigned l = 1; l <= lmax; l++)
		m[l] = wss_sample_count(first, first + len, l, seed);
}

/* One window set over ranges: the pages with a newest touch (or write),
 * as segments of pages with the same newest interval, keyed by first
 * page (val: the interval); a segment whose newest is out of the window
 * counts as no history.  hist[l]: the members of level l in the window
 * (membership is nested, so level l's count is all the window's sample
 * needs); bucket[slot][l]: of them, those whose newest is the slot's
 * interval, owner[slot], subtracted when it leaves the window. */
typedef struct rwin {
	wss_segs_t segs;
	uint64_t n, seed;
	unsigned lmax;
	size_t ring;
	uint64_t *hist, *bucket, *owner, *m;
	wss_seg_t *old, *now; /* rwin_touch_all's lists */
	size_t old_cap, now_cap;
} rwin_t;

static int rwin_init(rwin_t *w, uint64_t n, size_t ring, unsigned lmax, uint64_t seed)
{
	memset(w, 0, sizeof *w);
	w->n = n;
	w->ring = ring;
	w->lmax = lmax;
	w->seed = seed;
	w->hist = calloc(lmax + 1, sizeof *w->hist);
	w->m = calloc(lmax + 1, sizeof *w->m);
	w->bucket = calloc(ring * (lmax + 1), sizeof *w->bucket);
	w->owner = calloc(ring, sizeof *w->owner);
	return w->hist && w->m && w->bucket && w->owner ? 0 : ENOMEM;
}

static void rwin_release(rwin_t *w)
{
	wss_segs_release(&w->segs);
	free(w->old);
	free(w->now);
	free(w->hist);
	free(w->m);
	free(w->bucket);
	free(w->owner);
}

/* Pages [first, first + len) with newest interval l in the window of k
 * (sign 1) or out of it (sign -1): their members counted or not. */
static void rwin_count(rwin_t *w, uint64_t first, uint64_t len, uint64_t l, int sign)
{
	size_t slot = l % w->ring;
	uint64_t *b = &w->bucket[slot * (w->lmax + 1)];
	if (w->owner[slot] != l) {
		memset(b, 0, (w->lmax + 1) * sizeof *b);
		w->owner[slot] = l;
	}
	members_of(first, len, w->lmax, w->seed, w->m);
	for (unsigned i = 0; i <= w->lmax; i++) {
		w->hist[i] += sign > 0 ? w->m[i] : -w->m[i];
		b[i] += sign > 0 ? w->m[i] : -w->m[i];
	}
}

/* A segment straddling page x is cut in two there. */
static int rwin_cut(rwin_t *w, uint64_t x)
{
	wss_seg_t g;
	if (!x || !wss_segs_floor(&w->segs, x - 1, &g) || g.key + g.len <= x)
		return 0;
	wss_segs_del(&w->segs, g.key);
	int r = wss_segs_put(&w->segs, g.key, x - g.key, g.val);
	return r ? r : wss_segs_put(&w->segs, x, g.key + g.len - x, g.val);
}

/* Pages [a, b) forget their history before the tick of interval k; the
 * parts of it in the window go to carry (when not NULL, for a move). */
static int rwin_erase(rwin_t *w, uint64_t a, uint64_t b, uint64_t k, wss_segs_t *carry)
{
	int r = 0;
	if (a >= b || (r = rwin_cut(w, a)) || (r = rwin_cut(w, b)))
		return r;
	wss_seg_t g;
	while (wss_segs_ceil(&w->segs, a, &g) && g.key < b) {
		wss_segs_del(&w->segs, g.key);
		if (g.val + w->n < k)
			continue;
		rwin_count(w, g.key, g.len, g.val, -1);
		if (carry && (r = wss_segs_put(carry, g.key, g.len, g.val)))
			return r;
	}
	return 0;
}

/* Pages [first, first + len) get newest interval l (in the window of
 * the interval at hand). */
static int rwin_put(rwin_t *w, uint64_t first, uint64_t len, uint64_t l)
{
	rwin_count(w, first, len, l, 1);
	return wss_segs_put(&w->segs, first, len, l);
}

/* Interval k's events: pages gone, pages moved with their history (what
 * was at the target forgotten first, as the engine untracks it).  A move
 * carries the history in the window only: the rest is no history. */
static int rwin_events(rwin_t *w, const wss_trace_interval_t *iv, wss_segs_t *carry)
{
	int r = 0;
	for (size_t e = 0; e < iv->nevents && !r; e++) {
		const wss_trace_event_t *ev = &iv->events[e];
		if (ev->type != WSS_TRACE_EV_MOVED) {
			r = rwin_erase(w, ev->from, ev->from + ev->n, iv->seq, NULL);
			continue;
		}
		if ((r = rwin_erase(w, ev->from, ev->from + ev->n, iv->seq, carry)) ||
		    (r = rwin_erase(w, ev->to, ev->to + ev->n, iv->seq, NULL)))
			break;
		wss_seg_t g;
		while (!r && wss_segs_ceil(carry, 0, &g)) {
			wss_segs_del(carry, g.key);
			r = rwin_put(w, ev->to + (g.key - ev->from), g.len, g.val);
		}
	}
	return r;
}

/* Run u touched in interval k: what its pages had is forgotten, k is
 * their newest. */
static int rwin_touch(rwin_t *w, const wss_trace_run_t *u, uint64_t k)
{
	int r = rwin_erase(w, u->first, u->first + u->n, k, NULL);
	return r ? r : rwin_put(w, u->first, u->n, k);
}

/* The same for every run of iv (the written ones when written) at once:
 * the segments listed, merged with the runs in one pass, and the set
 * made anew, O(segments + runs) where run by run costs O(runs log
 * segments); segments out of the window are dropped on the way (no
 * event or touch can bring them back). */
static int rwin_touch_all(rwin_t *w, const wss_trace_interval_t *iv, bool written)
{
	uint64_t k = iv->seq;
	size_t nold = w->segs.n, o = 0, i = 0;
	if (wss_reserve(&w->old, &w->old_cap, nold, sizeof *w->old) ||
	    wss_reserve(&w->now, &w->now_cap, nold + 2 * iv->nruns, sizeof *w->now))
		return ENOMEM;
	wss_segs_list(&w->segs, w->old);
	for (size_t j = 0; j < iv->nruns; j++) {
		const wss_trace_run_t *u = &iv->runs[j];
		if (written && !u->written)
			continue;
		uint64_t a = u->first, b = a + u->n;
		for (; i < nold && w->old[i].key < b; i++) {
			wss_seg_t g = w->old[i];
			if (g.val + w->n < k)
				continue;
			if (g.key + g.len <= a) {
				w->now[o++] = g;
				continue;
			}
			if (g.key < a) {
				w->now[o++] = (wss_seg_t){g.key, a - g.key, g.val};
				g = (wss_seg_t){a, g.key + g.len - a, g.val};
			}
			uint64_t end = g.key + g.len < b ? g.key + g.len : b;
			rwin_count(w, g.key, end - g.key, g.val, -1);
			if (end < g.key + g.len) {
				w->old[i] = (wss_seg_t){b, g.key + g.len - b, g.val};
				break;
			}
		}
		rwin_count(w, a, b - a, k, 1);
		w->now[o++] = (wss_seg_t){a, b - a, k};
	}
	for (; i < nold; i++)
		if (w->old[i].val + w->n >= k)
			w->now[o++] = w->old[i];
	return wss_segs_assign(&w->segs, w->now, o);
}

/* An interval's runs on set w, run by run or all at once, whichever
 * costs less. */
static int rwin_runs(rwin_t *w, const wss_trace_interval_t *iv, bool written)
{
	if (iv->nruns * 16 >= w->segs.n)
		return rwin_touch_all(w, iv, written);
	int r = 0;
	for (size_t j = 0; j < iv->nruns && !r; j++)
		if (!written || iv->runs[j].written)
			r = rwin_touch(w, &iv->runs[j], iv->seq);
	return r;
}

/* The pages whose newest is k - n leave the window of k. */
static void rwin_expire(rwin_t *w, uint64_t k)
{
	if (k <= w->n)
		return;
	size_t slot = (k - w->n) % w->ring;
	if (w->owner[slot] != k - w->n)
		return;
	uint64_t *b = &w->bucket[slot * (w->lmax + 1)];
	for (unsigned i = 0; i <= w->lmax; i++) {
		w->hist[i] -= b[i];
		b[i] = 0;
	}
}

/* The trace's distinct pages for the window's total: those seen in an
 * exact interval for certain, the others (seen only in sampled ones)
 * through the members of the trace's coarsest level among them, scaled. */
static uint64_t win_total(const wss_ranges_t *exact, const wss_ranges_t *sampled, unsigned lmax, uint64_t seed)
{
	uint64_t t = exact->pages;
	for (size_t i = 0; i < sampled->n; i++) {
		uint64_t a = sampled->v[i].first, end = a + sampled->v[i].n;
		for (size_t j = wss_ranges_lower(exact, a); a < end; j++) {
			uint64_t b = j < exact->n && exact->v[j].first < end ? exact->v[j].first : end;
			if (b > a)
				t += wss_sample_count(a, b, lmax, seed) << lmax;
			if (j >= exact->n)
				break;
			a = exact->v[j].first + exact->v[j].n;
		}
	}
	return t;
}

/* The series for window n over the trace (second pass), over ranges:
 * O(log segments) a run or an event, whatever the pages they claim. */
static int win_compute_ranges(wss_pair_t *p, const wss_scan_t *s, uint64_t n, wss_window_result_t *res)
{
	size_t ring = (size_t)((n < s->intervals ? n : s->intervals) + 1);
	uint64_t seed = p->prof.sampling_seed;
	rwin_t d, w;
	wss_segs_t carry = {0};
	wss_ranges_t exact = {0}, sampled = {0};
	wss_window_levels_t q;
	int r = rwin_init(&d, n, ring, s->level_max, seed) | rwin_init(&w, n, ring, s->level_max, seed) |
		wss_window_start(s, res, &q);
	wss_trace_interval_t iv;
	bool got;
	for (size_t i = 0; !r && !(r = wss_trace_next(&p->trace, &iv, &got)) && got; i++) {
		uint64_t k = iv.seq;
		bool writes = iv.sets & WSS_TRACE_SETS_WRITES;
		if ((r = rwin_events(&d, &iv, &carry)) || (r = rwin_events(&w, &iv, &carry)))
			break;
		if ((r = rwin_runs(&d, &iv, false)) || (writes && (r = rwin_runs(&w, &iv, true))))
			break;
		for (size_t j = 0; j < iv.nruns && !r; j++)
			r = wss_ranges_add(iv.level ? &sampled : &exact, iv.runs[j].first, iv.runs[j].n);
		if (r)
			break;
		rwin_expire(&d, k);
		rwin_expire(&w, k);
		unsigned level = wss_window_level(s, &q, i, k, n);
		wss_window_add(&p->prof, res, &iv, level, d.hist[level], w.hist[level]);
	}
	if (r == ENOMEM || (!r && (wss_ranges_finish(&exact) || wss_ranges_finish(&sampled))))
		r = wss_analyses_nomem("window");
	if (!r) {
		res->total = win_total(&exact, &sampled, s->level_max, seed);
		res->total_estimated = s->level_max > 0;
	}
	rwin_release(&d);
	rwin_release(&w);
	wss_segs_release(&carry);
	wss_ranges_release(&exact);
	wss_ranges_release(&sampled);
	return wss_window_end(res, &q, r);
}

static int win_compute(wss_pair_t *p, const wss_scan_t *s, uint64_t n, wss_window_result_t *res)
{
	return WSS_PER_PAGE ? wss_window_compute_pages(p, s, n, res) : win_compute_ranges(p, s, n, res);
}

/* Tenths of a page, rounded half up: the profile's avg. */
static void win_text(FILE *out, const wss_pair_t *p, const wss_scan_t *s, uint64_t n, const wss_window_result_t *res)
{
	wss_analyses_text_source(out, "window", p);
	fprintf(out, "window %" PRIu64 " interval%s", n, n == 1 ? "" : "s");
	if (p->prof.interval_ns > 0 && !strcmp(p->prof.time_base ? p->prof.time_base : "", "wall"))
		fprintf(out, " (%.3f s)", (double)n * (double)p->prof.interval_ns / 1e9);
	fprintf(out, "; the profile's own is %" PRId64 "\n", p->prof.window_intervals);
	if (s->level_max)
		fputs("sampled: ≈ estimates from the members of each window's coarsest level, with 95 % intervals\n", out);
	fprintf(out, "%8s %12s %10s %10s %10s %10s %10s %6s\n", "seq", "t", "data", "lo", "hi",
		s->writes ? "write" : "-", s->writes ? "read" : "-", "rate");
	for (size_t i = 0; i < res->n; i++) {
		const wss_window_sample_t *o = &res->v[i];
		fprintf(out, "%8" PRIu64 " %10.3f s %10" PRIu64, o->seq, (double)o->t_ns / 1e9, o->data.est);
		if (o->ci)
			fprintf(out, " %10" PRIu64 " %10" PRIu64, o->data.lo, o->data.hi);
		else
			fprintf(out, " %10s %10s", "-", "-");
		if (s->writes)
			fprintf(out, " %10" PRIu64 " %10" PRIu64, o->write.est, o->read);
		else
			fprintf(out, " %10s %10s", "-", "-");
		fprintf(out, " %6llu\n", 1ull << o->level);
	}
	uint64_t a = wss_load_avg_tenths(res->sum, res->n);
	int64_t ps = p->prof.page_size;
	fprintf(out, "Data avg/peak/total: %s%" PRIu64 ".%" PRIu64 "/%" PRIu64 "/%" PRIu64 " pages (%" PRIu64 "/%" PRIu64
		     "/%" PRIu64 " kB)\n",
		s->level_max ? "≈ " : "", a / 10, a % 10, res->peak, res->total, wss_load_kb(a, ps),
		wss_load_kb(res->peak * 10, ps), wss_load_kb(res->total * 10, ps));
}

static void win_csv(FILE *out, const wss_window_result_t *res, bool writes)
{
	fputs("seq,t_ns,data,data_lo,data_hi,write,read,rate,members_touched\n", out);
	for (size_t i = 0; i < res->n; i++) {
		const wss_window_sample_t *o = &res->v[i];
		fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", o->seq, o->t_ns, o->data.est);
		if (o->ci)
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",", o->data.lo, o->data.hi);
		else
			fputs(",,", out);
		if (writes)
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",", o->write.est, o->read);
		else
			fputs(",,", out);
		fprintf(out, "%llu,%" PRIu64 "\n", 1ull << o->level, o->x);
	}
}

static void win_json(wss_fmt_t *f, const wss_pair_t *p, const wss_scan_t *s, uint64_t n, const wss_window_result_t *res)
{
	wss_fmt_ch(f, '{');
	wss_analyses_json_source(f, p);
	wss_analyses_jf(f, ",\"window\":%" PRIu64 ",\"page_size\":%" PRId64 ",\"samples\":[", n, p->prof.page_size);
	for (size_t i = 0; i < res->n; i++) {
		const wss_window_sample_t *o = &res->v[i];
		wss_analyses_jf(f, "%s{\"seq\":%" PRIu64 ",\"t_ns\":%" PRIu64 ",\"data\":%" PRIu64, i ? "," : "", o->seq, o->t_ns,
			o->data.est);
		if (s->writes)
			wss_analyses_jf(f, ",\"write\":%" PRIu64 ",\"read\":%" PRIu64, o->write.est, o->read);
		wss_analyses_jf(f, ",\"rate\":%llu", 1ull << o->level);
		if (o->level)
			wss_analyses_jf(f, ",\"members_touched\":%" PRIu64, o->x);
		if (o->ci)
			wss_analyses_jf(f, ",\"data_ci\":[%" PRIu64 ",%" PRIu64 "]", o->data.lo, o->data.hi);
		wss_fmt_ch(f, '}');
	}
	uint64_t a = wss_load_avg_tenths(res->sum, res->n);
	wss_analyses_jf(f, "],\"data\":{\"avg\":%" PRIu64 ".%" PRIu64 ",\"peak\":%" PRIu64 ",\"total\":%" PRIu64
		     ",\"estimated\":%s}}",
		a / 10, a % 10, res->peak, res->total, s->level_max ? "true" : "false");
}

int wss_cmd_window(int argc, char **argv)
{
	const char *wn = NULL, *paths[1];
	bool csv = false, json = false;
	const wss_opt_t opts[] = {{"--window", &wn, NULL}, {"--csv", NULL, &csv}, {"--json", NULL, &json}};
	size_t np;
	int r = wss_opts_parse("window", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss window --window N|DURATION PROFILE");
	wss_out_t form;
	uint64_t n;
	if (r || (r = wss_analyses_output_form("window", csv, json, &form)))
		return r;
	if (!wn)
		return wss_analyses_usage_error("window", "--window N is required (the window in intervals, or a duration: 500ms)", NULL);
	/* A count of intervals, or a duration (as wss run's --window is):
	 * then a whole number of the profile's intervals. */
	uint64_t dur = 0;
	bool is_dur = *wn && wn[strlen(wn) - 1] >= 'a' && wn[strlen(wn) - 1] <= 'z';
	if (is_dur && (wss_dur_parse(wn, &dur) || !dur)) {
		fprintf(stderr, "wss: window: --window %s: not a count of intervals or a duration (e.g. 3 or 300ms)\n", wn);
		return 2;
	}
	if (!is_dur && (r = wss_opts_number("window", "--window", wn, 1, UINT32_MAX, &n)))
		return r;
	wss_pair_t p;
	wss_scan_t s;
	if ((r = wss_analyses_open_scanned(paths[0], &p, &s)))
		return r;
	if (is_dur) {
		int64_t iv = p.prof.interval_ns;
		if (iv <= 0 || dur % (uint64_t)iv || dur / (uint64_t)iv > UINT32_MAX) {
			const char *u = iv % 1000000 == 0 ? "ms" : iv % 1000 == 0 ? "us" : "ns";
			int64_t v = iv % 1000000 == 0 ? iv / 1000000 : iv % 1000 == 0 ? iv / 1000 : iv;
			fprintf(stderr, "wss: window: --window %s is not a whole number of this profile's intervals (%" PRId64
				"%s)\n", wn, v, u);
			wss_scan_release(&s);
			wss_pair_close(&p);
			return 2;
		}
		n = dur / (uint64_t)iv;
	}
	wss_window_result_t res;
	if (!(r = win_compute(&p, &s, n, &res))) {
		wss_pair_note_end(&p);
		wss_fmt_t f;
		if (form == WSS_OUT_JSON && !(r = wss_analyses_json_init(&f, "window"))) {
			win_json(&f, &p, &s, n, &res);
			r = wss_analyses_json_write(&f, 0, stdout, "window");
		} else if (form == WSS_OUT_CSV)
			win_csv(stdout, &res, s.writes);
		else if (form == WSS_OUT_TEXT)
			win_text(stdout, &p, &s, n, &res);
		if (form != WSS_OUT_JSON)
			r = wss_analyses_finish(stdout, "window");
		free(res.v);
	}
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}
