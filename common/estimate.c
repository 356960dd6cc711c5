/* The estimator and its interval (estimate.h).  Sampling without
 * replacement: x is hypergeometric, so the binomial variance p(1-p)/k is
 * scaled by (n-k)/(n-1), which is what Wilson's interval is given here (an
 * effective sample of k(n-1)/(n-k) pages).  Wilson rather than the normal
 * (Wald) interval because it stays valid at x = 0 and x = k; rather than
 * an exact mid-p hypergeometric interval because it is a closed form (no
 * search over sums of lgamma terms on the tick) and measured as close to
 * 95 %: the comparison is in docs/profile-format.md. */
#include "config.h"
#include "common/estimate.h"

#include <math.h>
#include <stdbool.h>

#define Z95 1.959963984540054 /* the 97.5 % quantile of the normal */

/* Poisson means whose P(X >= x) is 2.5 %, x = 1, 2, 3: Wilson's lower
 * bound is too high at one to three touched pages when the rate is low
 * (Brown, Cai and DasGupta 2001, "Interval estimation for a binomial
 * proportion", section 4.1.1), undercovering a small truth; the exact
 * Poisson bound replaces it there. */
static const double poisson_lo[4] = {0, 0.02531780798428984, 0.24220927854396457,
				     0.6186721228956004};

wss_estimate_t wss_estimate_pages(uint64_t n, uint64_t k, uint64_t x)
{
	if (k > n)
		k = n;
	if (x > k)
		x = k;
	if (k == 0)
		return (wss_estimate_t){0, 0, n};
	if (k == n)
		return (wss_estimate_t){x, x, x};
	/* n*x can pass 2^64 (2^40 pages times 2^30 samples); n*x/k <= n. */
	uint64_t est = (uint64_t)(((unsigned __int128)n * x + k / 2) / k);
	double dn = (double)n, dk = (double)k, p = (double)x / dk;
	double ke = dk * (dn - 1) / (dn - dk);
	double z2 = Z95 * Z95, a = 1 + z2 / ke;
	double mid = (p + z2 / (2 * ke)) / a;
	double half = Z95 / a * sqrt(p * (1 - p) / ke + z2 / (4 * ke * ke));
	double lo = dn * (mid - half), hi = dn * (mid + half);
	uint64_t untouched = k - x;
	if (x >= 1 && x <= 3 && poisson_lo[x] * dn / dk < lo)
		lo = poisson_lo[x] * dn / dk;
	if (untouched >= 1 && untouched <= 3 && dn - poisson_lo[untouched] * dn / dk > hi)
		hi = dn - poisson_lo[untouched] * dn / dk;
	lo = floor(lo);
	hi = ceil(hi);
	/* The touched members are certain, and so are the untouched ones. */
	uint64_t min = x, max = n - untouched;
	wss_estimate_t e = {est, min, max};
	if (lo > (double)min)
		e.lo = lo < (double)max ? (uint64_t)lo : max;
	if (hi < (double)max)
		e.hi = hi > (double)min ? (uint64_t)hi : min;
	/* Wilson's interval holds x/k; this only absorbs rounding. */
	if (e.lo > est)
		e.lo = est;
	if (e.hi < est)
		e.hi = est;
	return e;
}

void wss_estimate_sum_add(wss_estimate_sum_t *s, wss_estimate_t e)
{
	s->samples++;
	s->est += e.est;
	s->lo += e.lo;
	s->hi += e.hi;
}

wss_estimate_avg_t wss_estimate_sum_avg(const wss_estimate_sum_t *s)
{
	if (s->samples == 0)
		return (wss_estimate_avg_t){0, 0, 0};
	double m = (double)s->samples;
	return (wss_estimate_avg_t){(double)s->est / m, (double)s->lo / m, (double)s->hi / m};
}

unsigned wss_precision_bin(uint64_t ppm)
{
	if (ppm < 100000)
		return (unsigned)(ppm / 1000);
	if (ppm < 1000000)
		return 100 + (unsigned)((ppm - 100000) / 10000);
	if (ppm < 10000000)
		return 190 + (unsigned)((ppm - 1000000) / 100000);
	return WSS_PREC_BINS - 1;
}

uint64_t wss_precision_bin_upper(unsigned b)
{
	if (b < 100)
		return (uint64_t)(b + 1) * 1000;
	if (b < 190)
		return 100000 + (uint64_t)(b - 99) * 10000;
	if (b < WSS_PREC_BINS - 1)
		return 1000000 + (uint64_t)(b - 189) * 100000;
	return UINT64_MAX;
}

uint64_t wss_precision_median(const uint32_t *bins, uint32_t n)
{
	uint64_t seen = 0, half = ((uint64_t)n + 1) / 2;
	for (unsigned b = 0; n && b < WSS_PREC_BINS; b++) {
		seen += bins[b];
		if (seen >= half)
			return wss_precision_bin_upper(b);
	}
	return 0;
}

uint64_t wss_estimate_halfwidth_ppm(wss_estimate_t e)
{
	uint64_t d = e.hi - e.est > e.est - e.lo ? e.hi - e.est : e.est - e.lo;
	if (d == 0)
		return 0;
	if (e.est == 0)
		return UINT64_MAX;
	return (uint64_t)(((unsigned __int128)d * 1000000 + e.est - 1) / e.est);
}

void wss_strata_add(wss_strata_t *s, double y)
{
	s->sum += y;
	s->sq += y * y;
	s->nonzero += y != 0;
	s->members++;
	if (s->has_pending) {
		double d = y - s->pending;
		s->var += d * d / 2;
		s->pairs++;
	}
	s->pending = y;
	s->has_pending++;
}

void wss_strata_add_zeros(wss_strata_t *s, uint64_t m)
{
	if (!m)
		return;
	/* The first zero's difference from the pending member, then
	 * differences of 0 (adding 0.0 leaves var as it is). */
	s->members += m;
	if (s->has_pending) {
		s->var += s->pending * s->pending / 2;
		s->pairs += m;
	} else {
		s->pairs += m - 1;
	}
	s->pending = 0;
	/* Only whether it is 0, 1 or more matters (wss_strata_break). */
	s->has_pending = s->has_pending || m > 1 ? 2 : 1;
}

void wss_strata_add_key(wss_strata_t *s, uint64_t key, double y)
{
	if (s->open && s->key == key) {
		s->acc += y;
		s->pages++;
		return;
	}
	wss_strata_close(s);
	s->open = s->clustered = 1;
	s->key = key;
	s->acc = y;
	s->pages = 1;
}

void wss_strata_close(wss_strata_t *s)
{
	if (!s->open)
		return;
	s->open = 0;
	if (s->pages > s->pages_max)
		s->pages_max = s->pages;
	wss_strata_add(s, s->acc);
}

void wss_strata_design(wss_strata_t *s, uint64_t pages)
{
	s->clustered = 1;
	if (pages > s->pages_max)
		s->pages_max = pages;
}

void wss_strata_doubt(wss_strata_t *s, double y) { s->var += y * y > 1 ? y * y : 1; }

void wss_strata_break(wss_strata_t *s)
{
	wss_strata_close(s);
	if (s->has_pending == 1)
		s->var += s->pending * s->pending;
	s->has_pending = 0;
}

void wss_strata_add_alone(wss_strata_t *s, double y)
{
	s->sum += y;
	s->sq += y * y;
	s->nonzero += y != 0;
	s->members++;
	s->var += y * y;
}

/* The 97.5 % quantile of Student's t with df degrees of freedom, close
 * enough for an interval (within 1 % from 3 on; the normal's past 1,000). */
double wss_t975(uint64_t df)
{
	static const double small[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228};
	if (df == 0)
		return small[0];
	if (df <= 10)
		return small[df - 1];
	return Z95 + 2.4 / (double)df;
}

/* Byar's approximation of the exact 95 % Poisson bounds for a count x. */
static void poisson_bounds(double x, double *lo, double *hi)
{
	*lo = 0;
	if (x > 0) {
		double a = 1 - 1 / (9 * x) - Z95 / (3 * sqrt(x));
		*lo = x * a * a * a;
	}
	double x1 = x + 1, b = 1 - 1 / (9 * x1) + Z95 / (3 * sqrt(x1));
	*hi = x1 * b * b * b;
}

/* A handful of touched members says too little of its own variance (none
 * at all says 0): the Poisson bounds of the touched count, which hold for
 * one member a block whatever the pattern.  A cluster brings all its
 * touched pages at once (a compound count, of variance the members'
 * squares): the bounds of the effective count sum^2 / squares, scaled back
 * to pages; with nothing touched, a cluster of the largest size for each
 * unit of the Poisson bound.  Is the sample that small?  Bounds on the
 * members' sum. */
static bool few_bounds(const wss_strata_t *s, double *lo, double *hi)
{
	if (!s->members || (s->clustered ? s->nonzero : s->sum) >= WSS_STRATA_MIN)
		return false;
	if (!s->clustered) {
		poisson_bounds(s->sum, lo, hi);
		return true;
	}
	if (s->sq <= 0) {
		poisson_bounds(0, lo, hi);
		*hi *= (double)(s->pages_max ? s->pages_max : 1);
		return true;
	}
	double per = s->sq / s->sum; /* pages a touched cluster brings, weighted */
	poisson_bounds(s->sum / per, lo, hi);
	*lo *= per;
	*hi *= per;
	return true;
}

wss_estimate_avg_t wss_strata_interval(const wss_strata_t *s, double scale, double base, double div)
{
	double var = s->var + (s->has_pending == 1 ? s->pending * s->pending : 0);
	double est = base + scale * s->sum;
	double half = wss_t975(s->pairs) * scale * sqrt(var);
	double lo = est - half, hi = est + half, seen = base + s->sum;
	/* A handful of touches: the bounds of their count, where wider. */
	double plo, phi;
	if (few_bounds(s, &plo, &phi)) {
		if (base + scale * plo < lo)
			lo = base + scale * plo;
		if (base + scale * phi > hi)
			hi = base + scale * phi;
	}
	if (lo < seen)
		lo = seen;
	if (div <= 0)
		div = 1;
	return (wss_estimate_avg_t){est / div, lo / div, hi / div};
}

wss_estimate_t wss_estimate_strata(uint64_t n, uint64_t k, uint64_t x, const wss_strata_t *s, unsigned level)
{
	wss_estimate_t e = wss_estimate_pages(n, k, x);
	if (k > n)
		k = n;
	if (x > k)
		x = k;
	/* Clusters: Wilson's interval counts pages as drawn one by one, which
	 * a cluster's are not; the strata's (by cluster), widened for a few
	 * touched ones. */
	if (!s->clustered && (k == n || x < WSS_STRATA_MIN || k - x < WSS_STRATA_MIN))
		return e;
	double var = s->var + (s->has_pending == 1 ? s->pending * s->pending : 0);
	double scale = (double)(1ULL << level), half = wss_t975(s->pairs) * scale * sqrt(var);
	double lo = floor((double)e.est - half), hi = ceil((double)e.est + half), plo, phi;
	if (s->clustered && few_bounds(s, &plo, &phi)) {
		lo = fmin(lo, floor(scale * plo));
		hi = fmax(hi, ceil(scale * phi));
	}
	uint64_t min = x, max = n - (k - x);
	e.lo = lo <= (double)min ? min : lo >= (double)e.est ? e.est : (uint64_t)lo;
	e.hi = hi >= (double)max ? max : hi <= (double)e.est ? e.est : (uint64_t)hi;
	return e;
}

wss_estimate_t wss_estimate_total(uint64_t xe, uint64_t x, unsigned level)
{
	double scale = (double)(1ULL << level), dx = (double)x, lo, hi;
	poisson_bounds(dx, &lo, &hi);
	wss_estimate_t e = {xe + (uint64_t)(scale * dx), 0, 0};
	double l = floor((double)xe + scale * lo), h = ceil((double)xe + scale * hi);
	uint64_t seen = xe + x;
	e.lo = l <= (double)seen ? seen : l >= (double)e.est ? e.est : (uint64_t)l;
	e.hi = h <= (double)e.est ? e.est : (uint64_t)h;
	return e;
}

wss_estimate_t wss_estimate_total_levels(uint64_t xe, const uint64_t *n, unsigned levels, unsigned empty_level)
{
	double est = 0, var = 0;
	uint64_t seen = xe;
	for (unsigned m = 0; m < levels; m++) {
		double w = (double)(1ULL << m), c = (double)n[m];
		est += c * w;
		var += c * w * (w - 1);
		seen += n[m];
	}
	if (est == 0)
		return wss_estimate_total(xe, 0, empty_level);
	wss_estimate_t e = {xe + (uint64_t)est, 0, 0};
	if (var == 0) {
		e.lo = e.hi = e.est;
		return e;
	}
	/* A sum of scaled counts with this mean and variance is a Poisson
	 * count of est^2/var at a scale of var/est (one stratum: its own
	 * count at its own rate, less one): its bounds are those of that
	 * count, scaled. */
	double scale = var / est, lo, hi;
	poisson_bounds(est / scale, &lo, &hi);
	double l = floor((double)xe + scale * lo), h = ceil((double)xe + scale * hi);
	e.lo = l <= (double)seen ? seen : l >= (double)e.est ? e.est : (uint64_t)l;
	e.hi = h <= (double)e.est ? e.est : (uint64_t)h;
	return e;
}
