/* What the samples found besides their counts: peaks of the working set
 * (one detector per series, engine/peaks.c) with the first-touch sites that
 * made them, and at the end the hot pages, touched in the most intervals.
 * Their call stacks are written before the records that name them. */
#include "config.h"
#include "engine/internal.h"

#include <string.h>

#include "engine/peaks.h"
#include "engine/sites.h"

/* ---- hot pages ---------------------------------------------------------
 * At the end: the report.hot_pages tracked pages touched in the most
 * intervals, with the mapping each belongs to and the site that first
 * touched it (its stack written before the summary).  Engine lock held. */

static void stack_out(uint32_t id, const uint64_t *frames, uint32_t n, void *arg);

static const char *mapping_of(uintptr_t a, int kind, char *buf, size_t n)
{
	if (kind != WSS_KIND_DATA)
		return wss_kind_name(kind);
	bool main_program = false;
	const char *path = wss_modules_of(a, &main_program);
	if (!path)
		return "data";
	wss_fmt_t f;
	wss_fmt_init(&f, buf, n);
	wss_fmt_str(&f, main_program ? "data:" : "libdata:");
	wss_fmt_str(&f, path);
	return wss_fmt_cstr(&f);
}


typedef struct hot {
	wss_profile_hot_t *v;
	uint32_t n, want;
	int kind;
} hot_t;

/* Put page a, touched in h intervals, among t's most touched (sorted, most
 * first).  No allocation: runs from the unmap path too. */
static void hot_insert(hot_t *t, uintptr_t a, uint32_t h, int kind, uint32_t gone)
{
	if (!h || !t->want || (t->n == t->want && t->v[t->n - 1].intervals >= h))
		return;
	uint32_t j = t->n < t->want ? t->n++ : t->want - 1;
	for (; j > 0 && t->v[j - 1].intervals < h; j--)
		t->v[j] = t->v[j - 1];
	uint32_t *site = wss_shadow_site(a);
	t->v[j] = (wss_profile_hot_t){.addr = a, .intervals = h, .kind = kind, .gone = gone,
				      .stack = site && *site ? wss_sites_stack_of((int)*site - 1) : 0};
}

static void hot_page(uintptr_t a, void *arg)
{
	hot_t *t = arg;
	hot_insert(t, a, *wss_shadow_hits(a), t->kind, 0);
}

/* The most touched of the pages that left tracking so far (unmapped, made
 * executable, a library's data unloaded, ...): hot pages are over the
 * whole run, and a page's count is gone with its state when it leaves (a
 * program that maps and unmaps its buffers would otherwise list only what
 * is mapped at exit). */
static hot_t gone_hot;

void wss_findings_hot_gone(uintptr_t a, int kind)
{
	uint32_t *h = wss_shadow_hits(a);
	if (gone_hot.v && h && *h)
		hot_insert(&gone_hot, a, *h, kind, E.epoch);
}


wss_profile_hot_t *wss_findings_hot(int *nhot)
{
	uint32_t want = E.set.hot_pages;
	*nhot = 0;
	if (!want)
		return NULL;
	wss_profile_hot_t *v = wss_sys_alloc(want * sizeof *v);
	if (!v)
		return NULL;
	hot_t h = {v, 0, want, 0};
	for (size_t i = 0; i < E.regions.n; i++) {
		h.kind = E.regions.v[i].kind;
		wss_sampling_state_pages(E.regions.v[i].start, E.regions.v[i].end, hot_page, &h);
	}
	for (uint32_t i = 0; i < gone_hot.n; i++) {
		const wss_profile_hot_t *g = &gone_hot.v[i];
		if (h.n == want && h.v[h.n - 1].intervals >= g->intervals)
			break;
		uint32_t j = h.n < want ? h.n++ : want - 1;
		for (; j > 0 && h.v[j - 1].intervals < g->intervals; j--)
			h.v[j] = h.v[j - 1];
		h.v[j] = *g;
	}
	uint32_t n = h.n;
	static char maps[256][PATH_MAX + 16];
	for (uint32_t j = 0; j < n; j++)
		v[j].mapping = mapping_of(v[j].addr, v[j].kind, maps[j % 256], sizeof maps[0]);
	if (E.sites)
		wss_sites_stacks_unwritten(stack_out, NULL);
	*nhot = (int)n;
	return v;
}

/* ---- peaks ------------------------------------------------------------------
 * One detector per series: data, read and write (where the backend has
 * them) and each of the first PEAK_THREADS threads' data.  At the onset of
 * a peak, a "peak" record with the sites that touched the most pages first
 * in that interval; their stacks are written before it. */

#define PEAK_SITES 8
#define PEAK_THREADS 256

static wss_peaks_t det_data, det_read, det_write, det_code, det_thread[PEAK_THREADS + 1];
static bool det_thread_on[PEAK_THREADS + 1];

void wss_findings_hot_init(void)
{
	/* At start-up, and in a forked child: the parent's pages that left
	 * tracking are not the child's. */
	if (E.set.hot_pages && !gone_hot.v)
		gone_hot.v = wss_sys_alloc(E.set.hot_pages * sizeof *gone_hot.v);
	gone_hot.n = 0;
	gone_hot.want = gone_hot.v ? E.set.hot_pages : 0;
}

void wss_findings_init(void)
{
	double g = E.set.peaks_sensitivity_milli / 1000.0;
	wss_peaks_init(&det_data, g, WSS_PEAKS_WINDOW);
	wss_peaks_init(&det_read, g, WSS_PEAKS_WINDOW);
	wss_peaks_init(&det_write, g, WSS_PEAKS_WINDOW);
	wss_peaks_init(&det_code, g, WSS_PEAKS_WINDOW);
	memset(det_thread_on, 0, sizeof det_thread_on);
	E.npeaks = 0;
}

static void stack_out(uint32_t id, const uint64_t *frames, uint32_t n, void *arg)
{
	(void)arg;
	wss_profile_stack(&E.out, id, frames, n);
}

void wss_findings_sites(void)
{
	if (!E.sites)
		return;
	static wss_site_count_t run[WSS_SITES_MAX];
	static wss_profile_site_t out[WSS_SITES_MAX];
	uint64_t rest = 0;
	int n = wss_sites_run(run, WSS_SITES_MAX, &rest);
	for (int i = 0; i < n; i++)
		out[i] = (wss_profile_site_t){run[i].pc, run[i].stack, run[i].pages};
	wss_sites_stacks_unwritten(stack_out, NULL);
	wss_profile_sites(&E.out, out, n, rest);
}

void wss_findings_alloc_sites(void)
{
	if (!wss_allocs_on())
		return;
	wss_sites_stacks_unwritten(stack_out, NULL);
	wss_allocs_out(&E.out);
}

void wss_findings_peaks(uint32_t k, uint64_t pages, uint64_t writes, wss_profile_sets_t sets, uint32_t nt,
			const wss_sampled_t *sm, int64_t code)
{
	wss_site_count_t top[PEAK_SITES];
	uint64_t rest = 0;
	int ntop = E.sites ? wss_sites_top(k, top, PEAK_SITES, &rest) : 0;
	wss_profile_site_t sites[PEAK_SITES];
	for (int i = 0; i < ntop; i++)
		sites[i] = (wss_profile_site_t){top[i].pc, top[i].stack, top[i].pages};
	struct {
		wss_peaks_t *d;
		const char *series;
		int tid;
		uint64_t value;
	} series[4 + PEAK_THREADS];
	int n = 0;
	series[n++] = (typeof(series[0])){&det_data, "data", 0, pages};
	if (sets.reads)
		series[n++] = (typeof(series[0])){&det_read, "read", 0, pages - writes};
	if (sets.writes && sets.reads)
		series[n++] = (typeof(series[0])){&det_write, "write", 0, writes};
	/* track.code: its peaks name no sites (the data's first touches did
	 * not make them; the hot code pages say which code runs). */
	if (code >= 0)
		series[n++] = (typeof(series[0])){&det_code, "code", 0, (uint64_t)code};
	for (uint32_t t = 1; t <= nt && t <= PEAK_THREADS; t++) {
		wss_thread_t *th = wss_threads_get(t);
		if (!det_thread_on[t]) {
			if (!th->window_pages)
				continue;
			wss_peaks_init(&det_thread[t], E.set.peaks_sensitivity_milli / 1000.0, WSS_PEAKS_WINDOW);
			det_thread_on[t] = true;
		}
		/* On the sample's scale: a sampled thread's estimate, as its
		 * sample record says (the process's series are estimates too). */
		uint64_t v = sm->sampled ? wss_estimate_pages(sm->tracked, sm->members, th->window_pages).est : th->window_pages;
		series[n++] = (typeof(series[0])){&det_thread[t], "thread", th->tid, v};
	}
	bool stacks_out = false;
	for (int i = 0; i < n; i++) {
		wss_peak_info_t info;
		if (!wss_peaks_update(series[i].d, (double)series[i].value, &info) || !info.start ||
		    E.npeaks >= E.set.peaks_max)
			continue;
		if (!stacks_out && E.sites) {
			wss_sites_stacks_unwritten(stack_out, NULL);
			stacks_out = true;
		}
		wss_profile_peak_t pk = {
			.seq = k,
			.series = series[i].series,
			.tid = series[i].tid,
			.value = series[i].value,
			.mean = info.mean,
			.threshold = info.threshold,
			.sites = sites,
			.nsites = series[i].d == &det_code ? 0 : ntop,
			.other_pages = series[i].d == &det_code ? 0 : rest,
		};
		wss_profile_peak(&E.out, &pk);
		E.npeaks++;
	}
	if (E.out.len)
		wss_out_write();
}
