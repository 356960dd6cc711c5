/* The peak detector on synthetic series: each case builds a series
 * (deterministic noise from an LCG, spikes, ramps, sawtooths, steps),
 * feeds it to a fresh detector and compares the exact list of peak onsets.
 * docs/peaks.md has the same table and the reasoning behind each line.
 * Then the warm-up boundary, the values reported in info, monotonicity in
 * the sensitivity, and a run that shows what the filter is for. */
#include "config.h"
#include "engine/peaks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/tap/tap.h"

#define MAXN 1400

typedef struct series {
	double x[MAXN];
	int n;
} series_t;

/* Knuth's MMIX LCG; the top 31 bits as a uniform in [0, 1). */
static uint64_t lcg;
static double uniform(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(lcg >> 33) / 2147483648.0;
}

static void add(series_t *s, double v)
{
	if (s->n >= MAXN)
		bail("series longer than %d samples", MAXN);
	s->x[s->n++] = v;
}

/* n samples of base ± amp, uniform, rounded to whole pages. */
static void noise(series_t *s, int n, double base, double amp)
{
	for (int i = 0; i < n; i++)
		add(s, floor(base + amp * (2 * uniform() - 1) + 0.5));
}

static void level(series_t *s, int n, double v)
{
	for (int i = 0; i < n; i++)
		add(s, v);
}

/* from, from ± step, ... up to and including to. */
static void ramp(series_t *s, double from, double to, double step)
{
	if (from <= to)
		for (double v = from; v <= to; v += step)
			add(s, v);
	else
		for (double v = from; v >= to; v -= step)
			add(s, v);
}

static void spike(series_t *s, int at, int width, double v)
{
	for (int i = at; i < at + width; i++)
		s->x[i] = v;
}

static void scale(series_t *s, double k)
{
	for (int i = 0; i < s->n; i++)
		s->x[i] *= k;
}

/* --- the series --- */

static void flat_zero(series_t *s) { level(s, 200, 0); }
static void flat_100(series_t *s) { level(s, 200, 100); }
static void flat_1e7(series_t *s) { level(s, 200, 1e7); }

/* μ = 0, then one sample of 5 or 6 pages: the floor is g = 5 pages. */
static void zero_then_5(series_t *s) { level(s, 100, 0); spike(s, 40, 1, 5); }
static void zero_then_6(series_t *s) { level(s, 100, 0); spike(s, 40, 1, 6); }

/* 1000 ± 50 pages with three clear bursts: 3x for one sample, 2.5x for
 * three, 2x for one. */
static void noise_spikes(series_t *s)
{
	noise(s, 200, 1000, 50);
	spike(s, 60, 1, 3000);
	spike(s, 100, 3, 2500);
	spike(s, 150, 1, 2000);
}

static void noise_spikes_1e7(series_t *s)
{
	noise_spikes(s);
	scale(s, 1e4);
}

/* A 3-sample burst, 5 quiet samples, a second, smaller burst. */
static void close_bursts(series_t *s)
{
	noise(s, 200, 1000, 50);
	spike(s, 60, 3, 3000);
	spike(s, 68, 1, 2000);
}

/* Two one-sample bursts with 5 quiet samples between them. */
static void close_spikes(series_t *s)
{
	noise(s, 200, 1000, 50);
	spike(s, 60, 1, 3000);
	spike(s, 66, 1, 3000);
}

/* A dip to zero (the program idle for one interval) just before a burst. */
static void dip_then_burst(series_t *s)
{
	noise(s, 200, 1000, 50);
	spike(s, 60, 1, 0);
	spike(s, 62, 1, 2000);
}

static void linear_ramp(series_t *s) { ramp(s, 0, 2000, 5); }

/* pageramp: pages claimed 8 per interval up to 1024, then released the
 * same way (a triangle), five times. */
static void pageramp(series_t *s)
{
	for (int r = 0; r < 5; r++) {
		ramp(s, 0, 1024, 8);
		ramp(s, 1016, 8, 8);
	}
}

/* The literal sawtooth: up to 1024 by 8, all released at once. */
static void sawtooth(series_t *s)
{
	for (int r = 0; r < 5; r++)
		ramp(s, 0, 1024, 8);
}

static void step_up(series_t *s) { level(s, 50, 100); level(s, 150, 1000); }
static void step_up_noisy(series_t *s) { noise(s, 50, 100, 5); noise(s, 150, 1000, 50); }
static void step_down(series_t *s) { level(s, 50, 1000); level(s, 150, 100); }

/* A step, then a burst on the new level. */
static void step_then_burst(series_t *s)
{
	noise(s, 50, 100, 5);
	noise(s, 150, 1000, 50);
	spike(s, 120, 1, 3000);
}

/* A spike in the warm-up, then two clear ones. */
static void warmup_spike(series_t *s)
{
	noise(s, 100, 1000, 50);
	spike(s, 3, 1, 5000);
	spike(s, 40, 1, 3000);
	spike(s, 60, 1, 2000);
}

/* A step at sample 28, in the warm-up, then a burst: the step began in
 * the warm-up, so it is not reported on sample 30 when the reports begin. */
static void late_step(series_t *s)
{
	noise(s, 28, 100, 5);
	noise(s, 122, 1000, 50);
	spike(s, 100, 1, 3000);
}

/* Warm-up boundary: with window n, sample index n is the first that can
 * be reported. */
static void spike_at_29(series_t *s) { noise(s, 60, 1000, 50); spike(s, 29, 1, 3000); }
static void spike_at_30(series_t *s) { noise(s, 60, 1000, 50); spike(s, 30, 1, 3000); }
static void spike_at_9(series_t *s) { noise(s, 60, 1000, 50); spike(s, 9, 1, 3000); }
static void spike_at_10(series_t *s) { noise(s, 60, 1000, 50); spike(s, 10, 1, 3000); }

/* Scale: high dispersion (1000 ± 300: F ≈ 30, c ≈ 1, a pure 5σ test) is
 * scale-invariant; low dispersion (1000 ± 50: F ≈ 0.8, c ≈ 0.35) is not,
 * because F is in pages: ×1e4 makes c = 1 and the test 5σ. */
static void high_disp(series_t *s)
{
	noise(s, 200, 1000, 300);
	spike(s, 60, 1, 2500);
	spike(s, 120, 1, 4000);
}
static void high_disp_1e7(series_t *s) { high_disp(s); scale(s, 1e4); }
static void low_disp(series_t *s)
{
	noise(s, 200, 1000, 50);
	spike(s, 60, 1, 1300);
	spike(s, 120, 1, 3000);
}
static void low_disp_1e7(series_t *s) { low_disp(s); scale(s, 1e4); }

/* Graded spikes on 1000 ± 50 every 40 samples: 1.15, 1.3, 1.6, 2, 3, 5
 * and 10 times the level. */
static void graded(series_t *s)
{
	static const double h[] = {1.15, 1.3, 1.6, 2, 3, 5, 10};
	noise(s, 320, 1000, 50);
	for (int k = 0; k < 7; k++)
		spike(s, 40 * (k + 1), 1, 1000 * h[k]);
}

struct run {
	char onsets[256];
	int nonsets, flagged;
	double min_margin; /* min over samples after the warm-up of |1 - e/E| */
};

static void run_series(const series_t *s, double g, unsigned window, double phi, struct run *r)
{
	wss_peaks_t d;
	wss_peaks_init(&d, g, window);
	if (phi > 0)
		d.phi = phi;
	memset(r, 0, sizeof *r);
	r->min_margin = INFINITY;
	size_t len = 0;
	for (int i = 0; i < s->n; i++) {
		wss_peak_info_t info;
		bool p = wss_peaks_update(&d, s->x[i], &info);
		r->flagged += p;
		if (info.start) {
			len += (size_t)snprintf(r->onsets + len, sizeof r->onsets - len, "%s%d",
						r->nonsets ? "," : "", i);
			if (len >= sizeof r->onsets)
				bail("onset list too long");
			r->nonsets++;
		}
		if ((uint64_t)i >= d.warmup && s->x[i] > info.mean) {
			double m = fabs(1 - info.deviation / info.threshold);
			if (m < r->min_margin)
				r->min_margin = m;
		}
	}
}

struct tcase {
	const char *name;
	void (*build)(series_t *);
	double g;
	unsigned window;
	double phi; /* 0: the default */
	const char *want;
};

static const struct tcase cases[] = {
	{"flat zero", flat_zero, 5, 30, 0, ""},
	{"flat 100 pages", flat_100, 5, 30, 0, ""},
	{"flat 1e7 pages", flat_1e7, 5, 30, 0, ""},
	{"zeros, then 5 pages (not above the floor of g pages)", zero_then_5, 5, 30, 0, ""},
	{"zeros, then 6 pages", zero_then_6, 5, 30, 0, "40"},
	{"noise with 3 bursts", noise_spikes, 5, 30, 0, "60,100,150"},
	{"noise with 3 bursts, g=2", noise_spikes, 2, 30, 0, "60,100,150"},
	{"noise with 3 bursts, g=10", noise_spikes, 10, 30, 0, "60,100,150"},
	{"noise with 3 bursts, window 10", noise_spikes, 5, 10, 0, "60,100,150"},
	{"noise with 3 bursts at 1e7 pages", noise_spikes_1e7, 5, 30, 0, "60,100,150"},
	{"3-sample burst, 5 quiet, second burst", close_bursts, 5, 30, 0, "60,68"},
	{"two spikes 5 samples apart", close_spikes, 5, 30, 0, "60,66"},
	{"a dip to zero just before a burst", dip_then_burst, 5, 30, 0, "62"},
	{"linear ramp", linear_ramp, 5, 30, 0, ""},
	{"linear ramp, g=1.5", linear_ramp, 1.5, 30, 0, ""},
	{"pageramp triangle", pageramp, 5, 30, 0, ""},
	{"pageramp triangle, g=1.5", pageramp, 1.5, 30, 0, ""},
	/* A 1σ test: every ramp up is one peak (the first began in the
	 * warm-up, so it is not reported). */
	{"pageramp triangle, g=1: one peak per ramp up", pageramp, 1, 30, 0, "284,540,796,1052"},
	{"sawtooth", sawtooth, 5, 30, 0, ""},
	{"sawtooth, g=1.5", sawtooth, 1.5, 30, 0, ""},
	{"step 100 -> 1000", step_up, 5, 30, 0, "50"},
	{"step 100 -> 1000, g=1", step_up, 1, 30, 0, "50"},
	{"step 100 -> 1000, g=20", step_up, 20, 30, 0, "50"},
	{"noisy step 100 -> 1000", step_up_noisy, 5, 30, 0, "50"},
	{"step down 1000 -> 100", step_down, 5, 30, 0, ""},
	{"step, then a burst on the new level", step_then_burst, 5, 30, 0, "50,120"},
	{"spike in the warm-up, two after", warmup_spike, 5, 30, 0, "40,60"},
	{"step at 28 (in the warm-up), burst at 100", late_step, 5, 30, 0, "100"},
	{"step at 28 (in the warm-up), burst at 100, g=2", late_step, 2, 30, 0, "100"},
	{"spike at 29, window 30", spike_at_29, 5, 30, 0, ""},
	{"spike at 30, window 30", spike_at_30, 5, 30, 0, "30"},
	{"spike at 9, window 10", spike_at_9, 5, 10, 0, ""},
	{"spike at 10, window 10", spike_at_10, 5, 10, 0, "10"},
	{"high dispersion", high_disp, 5, 30, 0, "60,120"},
	{"high dispersion x1e4: the same", high_disp_1e7, 5, 30, 0, "60,120"},
	{"low dispersion: 1.3x is within 0.5 mu", low_disp, 5, 30, 0, "120"},
	{"low dispersion x1e4: 5 sigma, 1.3x caught", low_disp_1e7, 5, 30, 0, "60,120"},
	{"graded spikes, g=3", graded, 3, 30, 0, "80,120,160,200,240,280"},
	{"graded spikes, g=5", graded, 5, 30, 0, "120,160,200,240,280"},
	{"graded spikes, g=10", graded, 10, 30, 0, "160,200,240,280"},
	{"graded spikes, g=20", graded, 20, 30, 0, "200,240,280"},
	/* Without the filter (phi = 1) the first burst enters the statistics
	 * raw and the second goes unseen: what the filter is for. */
	{"3-sample burst, second burst, no filter", close_bursts, 5, 30, 1.0, "60"},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static series_t S;

static void build(void (*f)(series_t *))
{
	memset(&S, 0, sizeof S);
	lcg = 12345;
	f(&S);
}

int main(void)
{
	plan(NCASES + 19);

	for (int i = 0; i < NCASES; i++) {
		const struct tcase *c = &cases[i];
		build(c->build);
		struct run r;
		run_series(&S, c->g, c->window, c->phi, &r);
		if (!is_str(r.onsets, c->want, "%s: onsets [%s]", c->name, c->want))
			diag("closest call after the warm-up: |1 - e/E| = %.3f", r.min_margin);
	}

	/* A burst over 3 samples: one onset, three samples flagged. */
	build(noise_spikes);
	struct run r;
	run_series(&S, 5, 30, 0, &r);
	is_int(r.flagged, 5, "noise with 3 bursts: 5 samples flagged (1 + 3 + 1)");
	/* Steps adapt: flagged for a few samples, then quiet. */
	build(step_up);
	run_series(&S, 5, 30, 0, &r);
	ok(r.flagged >= 1 && r.flagged <= 10, "step, g=5: in the peak for %d samples (1..10)", r.flagged);
	run_series(&S, 1, 30, 0, &r);
	ok(r.flagged >= 1 && r.flagged <= 40, "step, g=1: in the peak for %d samples (1..40)", r.flagged);

	/* Ramps at a low g: quiet, not an unreported peak that would hide a
	 * later burst (the warm-up filters with the default g). */
	build(linear_ramp);
	run_series(&S, 1.5, 30, 0, &r);
	is_int(r.flagged, 0, "linear ramp, g=1.5: no sample above the threshold");
	build(pageramp);
	run_series(&S, 2, 30, 0, &r);
	is_int(r.flagged, 0, "pageramp triangle, g=2: no sample above the threshold");

	/* Monotone in g on the graded series: onsets and flagged samples. */
	static const double gs[] = {0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30};
	int ng = (int)(sizeof gs / sizeof gs[0]);
	for (int sc = 0; sc < 2; sc++) {
		build(graded);
		if (sc)
			scale(&S, 1e4);
		int prev_on = 1 << 30, prev_fl = 1 << 30, first = 0, last = 0;
		bool mono = true;
		for (int k = 0; k < ng; k++) {
			run_series(&S, gs[k], 30, 0, &r);
			if (r.nonsets > prev_on || r.flagged > prev_fl) {
				mono = false;
				diag("g=%g: %d onsets, %d flagged; the lower g before it: %d, %d", gs[k],
				     r.nonsets, r.flagged, prev_on, prev_fl);
			}
			prev_on = r.nonsets;
			prev_fl = r.flagged;
			if (k == 0)
				first = r.nonsets;
			last = r.nonsets;
		}
		ok(mono, "graded%s: onsets and flagged samples never grow with g", sc ? " x1e4" : "");
		ok(first > last, "graded%s: g=0.5 flags more than g=30 (%d > %d)", sc ? " x1e4" : "", first, last);
	}

	/* info: the values used, before the update. */
	wss_peaks_t d;
	wss_peaks_init(&d, 5, 30);
	wss_peak_info_t info;
	for (int i = 0; i < 40; i++)
		wss_peaks_update(&d, 100, &info);
	ok(!info.start && info.mean == 100 && info.deviation == 0, "flat 100: mean 100, deviation 0");
	ok(info.threshold == 50, "flat 100: threshold 0.5 mu = 50 (c = 0), got %g", info.threshold);
	bool p = wss_peaks_update(&d, 200, &info);
	ok(p && info.start, "200 after 100s: a peak, and its start");
	ok(info.mean == 100 && info.deviation == 100 && info.threshold == 50,
	   "info before the update: mean %g, deviation %g, threshold %g", info.mean, info.deviation,
	   info.threshold);
	ok(d.mean > 100.6 && d.mean < 100.7, "the filter fed 110, not 200: the mean is %g (100 + 10 alpha)", d.mean);
	p = wss_peaks_update(&d, 200, &info);
	ok(p && !info.start && d.in_peak, "a second 200: still in the peak, not a start");
	p = wss_peaks_update(&d, 100, NULL);
	ok(!p && !d.in_peak, "back to 100 (info NULL): the peak is over");
	uint64_t n = d.n;
	double m = d.mean;
	p = wss_peaks_update(&d, NAN, &info);
	ok(!p && d.n == n && d.mean == m, "NaN is ignored");

	/* Defensive defaults. */
	wss_peaks_init(&d, 0, 0);
	ok(d.g == WSS_PEAKS_SENSITIVITY && d.alpha == 2.0 / 3 && d.warmup == 2,
	   "g 0 -> default, window 0 -> 2 (g %g, alpha %g)", d.g, d.alpha);
	wss_peaks_init(&d, 5, 30);
	ok(fabs(d.alpha - 2.0 / 31) < 1e-15 && d.phi == WSS_PEAKS_PHI && d.n == 0 && !d.in_peak,
	   "init: alpha 2/(n+1), phi default, nothing seen");
	return done_testing();
}
