/* Peak detection (see peaks.h, and docs/peaks.md for the reasoning):
 * exponential moving mean and variance, a threshold that mixes a relative
 * test (low dispersion) and a σ test (high dispersion) by the Fano factor,
 * and an exponential filter on outliers so that one peak neither inflates
 * the statistics nor hides the next.  Only libm's exp and sqrt, which are
 * pure; exp's argument is bounded so that it never underflows and sets
 * errno. */
#include "config.h"
#include "engine/peaks.h"

#include <math.h>

/* Counts are integers: a deviation of g pages or less is never a peak.
 * This is also what keeps a flat series (σ = 0) and μ = 0 from flagging
 * every change of one page. */
#define FLOOR_PAGES 1.0
/* Beyond this F, 1 - exp(-F/2) is 1 to within 1e-14. */
#define FANO_MAX 64.0

void wss_peaks_init(wss_peaks_t *d, double sensitivity, unsigned window)
{
	if (!(sensitivity > 0) || !isfinite(sensitivity))
		sensitivity = WSS_PEAKS_SENSITIVITY;
	if (window < 2)
		window = 2; /* n = 1 gives alpha = 1: no memory, σ² stays 0 */
	*d = (wss_peaks_t){
		.g = sensitivity,
		.alpha = 2.0 / ((double)window + 1.0),
		.phi = WSS_PEAKS_PHI,
		.warmup = window,
	};
}

/* E = max(c·g·σ + (1 − c)·(g/10)·μ, g·1 page), c = 1 − exp(−F/2),
 * F = σ²/μ.  Both terms are in pages. */
static double threshold(const wss_peaks_t *d, double g)
{
	double c = 1.0; /* μ = 0: F is undefined and a relative test meaningless */
	if (d->mean > 0) {
		double fano = d->var / d->mean;
		c = fano < FANO_MAX ? 1.0 - exp(-fano / 2.0) : 1.0;
	}
	double e = c * g * sqrt(d->var) + (1.0 - c) * (g / 10.0) * d->mean;
	double lo = g * FLOOR_PAGES;
	return e > lo ? e : lo;
}

bool wss_peaks_update(wss_peaks_t *d, double x, wss_peak_info_t *info)
{
	double thr = threshold(d, d->g);
	if (!isfinite(x)) {
		if (info)
			*info = (wss_peak_info_t){d->mean, thr, 0, false};
		return false;
	}
	if (x < 0)
		x = 0;
	double dev = fabs(x - d->mean);
	bool warm = d->n >= d->warmup;
	bool above = d->n > 0 && dev > thr && x > d->mean;
	/* Nothing is reported in the warm-up, nor the rest of a peak that
	 * began there: in_peak is kept through the warm-up, so a start is
	 * always the sample where the excursion began. */
	bool peak = warm && above;
	bool start = peak && !d->in_peak;
	/* Which samples the filter damps: outliers of either sign.  In the
	 * warm-up the estimates are young; a low g would damp the ordinary
	 * start of a ramp, and the damped input, lagging it, would make a
	 * peak of the whole ramp.  So there the filter takes only what the
	 * default sensitivity calls an outlier. */
	bool outlier = d->n > 0 && dev > thr;
	if (outlier && !warm && d->g < WSS_PEAKS_SENSITIVITY)
		outlier = dev > threshold(d, WSS_PEAKS_SENSITIVITY);
	if (info)
		*info = (wss_peak_info_t){d->mean, thr, dev, start};

	/* The filter runs on outliers of either sign from the second sample
	 * on, also during the warm-up (a spike there would otherwise blind the
	 * detector for several windows).  It follows the input at rate phi,
	 * so a sustained level shift is adopted within a few samples while a
	 * short burst moves the mean by about alpha·phi of its height. */
	double in = outlier ? d->phi * x + (1.0 - d->phi) * d->fed : x;
	if (d->n == 0) {
		d->mean = in;
		d->var = 0;
	} else {
		/* Weight 1/(k+1) until it falls to alpha: the exact running mean
		 * and variance at first, instead of an EMA biased to sample 0. */
		double a = 1.0 / ((double)d->n + 1.0);
		if (a < d->alpha)
			a = d->alpha;
		double diff = in - d->mean; /* against the previous mean */
		d->var = (1.0 - a) * (d->var + a * diff * diff);
		d->mean += a * diff;
	}
	d->fed = in;
	d->n++;
	d->in_peak = above;
	return peak;
}
