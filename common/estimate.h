/* Estimates from a sampled session: x of the k sampled pages were touched,
 * the k being the members among n tracked pages; the working set is
 * estimated as n*x/k pages with a 95 % interval (Wilson's score interval
 * with the finite-population correction; docs/profile-format.md, "Sampling
 * and estimates", has the method and its measured coverage).  Pure, no
 * allocation: AS-safe (libm's sqrt, floor and ceil only). */
#ifndef WSS_COMMON_ESTIMATE_H
#define WSS_COMMON_ESTIMATE_H

#include <stdint.h>

/* Pages: est rounded to nearest, lo down, hi up; x <= lo <= est <= hi <=
 * n - (k - x) (the x touched members are certain, the k - x untouched
 * ones certain too). */
typedef struct wss_estimate {
	uint64_t est, lo, hi;
} wss_estimate_t;

/* The estimate and 95 % interval for n tracked pages, k sampled, x touched.
 * k == n: exact (x, x, x); k == 0: (0, 0, n).  k > n is read as k = n and
 * x > k as x = k.  AS-safe. */
wss_estimate_t wss_estimate_pages(uint64_t n, uint64_t k, uint64_t x);

/* The running sums behind an average over samples (the summary's avg).
 * Zero-initialise; page counts below 2^40 over 2^23 samples cannot
 * overflow. */
typedef struct wss_estimate_sum {
	uint64_t samples, est, lo, hi;
} wss_estimate_sum_t;

typedef struct wss_estimate_avg {
	double est, lo, hi;
} wss_estimate_avg_t;

/* Adds one sample's estimate (an exact sample is (x, x, x)).  AS-safe. */
void wss_estimate_sum_add(wss_estimate_sum_t *s, wss_estimate_t e);

/* The averages of est, lo and hi; all 0 without samples.  [lo, hi] bounds
 * the true average working set at 95 % whatever the correlation between
 * the samples' errors: the error of an average has at most the average of
 * the errors' standard deviations.  It is close to exact when the samples
 * share their pages (the same members every interval, overlapping working
 * sets) and up to sqrt(samples) times too wide when their errors are
 * independent.  AS-safe. */
wss_estimate_avg_t wss_estimate_sum_avg(const wss_estimate_sum_t *s);

/* Half-widths of estimates in millionths of the estimate, binned for a
 * median without keeping them: 0.1 % bins below 10 %, 1 % bins to 100 %,
 * 10 % bins to 1000 %, and one bin for the rest. */
#define WSS_PREC_BINS 281
/* The bin of a half-width of ppm millionths.  AS-safe. */
unsigned wss_precision_bin(uint64_t ppm);
/* The upper edge of bin b, in millionths (the last bin: UINT64_MAX).  AS-safe. */
uint64_t wss_precision_bin_upper(unsigned b);
/* The upper edge of the bin holding the median of n binned half-widths
 * (0 when n is 0).  AS-safe. */
uint64_t wss_precision_median(const uint32_t *bins, uint32_t n);
/* The relative half-width of e in millionths of e.est: the larger side;
 * 0 for an exact estimate, UINT64_MAX for an estimate of 0 with room
 * above it.  AS-safe. */
uint64_t wss_estimate_halfwidth_ppm(wss_estimate_t e);

/* An estimate of a sum over pages from a stratified sample of one page in
 * each aligned block of 2^L (common/sample.h), with a variance valid when
 * the pages' values are correlated (runs, strides, hot blocks): the
 * members are taken in address order, range by range, and half the
 * squared difference of each member and the next estimates the variance
 * of their blocks (the successive-difference estimator of a systematic
 * sample: exact where neighbouring blocks have equal means, above it where
 * they differ, and never 0 across the edge of a run of touched pages, which
 * fixed pairs of blocks can miss).  A range of one member adds its square,
 * an upper bound.  Zero-initialise.  Pure. */
typedef struct wss_strata {
	double sum;      /* the members' values */
	double var;      /* half the successive differences squared, the lone members' squares */
	uint64_t members, pairs; /* pairs: the differences taken (the degrees of freedom) */
	double pending;  /* the last member of the range so far */
	int has_pending; /* members of the range so far (0: none) */
	/* Cluster designs (common/sample.h): a member is a cluster, whose
	 * value is the sum of its pages', which wss_strata_add_key gathers
	 * (open: a cluster's pages so far, key its number, acc their sum). */
	double sq;       /* the members' squares: the compound count's spread */
	uint64_t nonzero;
	int open, clustered;
	uint64_t key, pages, pages_max; /* pages: the open cluster's so far */
	double acc;
} wss_strata_t;

/* The next member in address order, of value y.  AS-safe. */
void wss_strata_add(wss_strata_t *s, double y);
/* m members of value 0 in a row: what m calls of wss_strata_add(s, 0)
 * leave, in O(1) (a sample's untouched members between its touched ones).
 * AS-safe. */
void wss_strata_add_zeros(wss_strata_t *s, uint64_t m);
/* A page of the cluster numbered key, of value y: the cluster is one
 * member, of its pages' sum, added when a page of another cluster comes,
 * at wss_strata_close or at a break.  Pages in address order, so a
 * cluster's pages come together.  AS-safe. */
void wss_strata_add_key(wss_strata_t *s, uint64_t key, double y);
/* The cluster gathered so far added as a member.  AS-safe. */
void wss_strata_close(wss_strata_t *s);
/* The members to come include clusters of up to `pages` pages (a piece of
 * a cluster design holds members): the strata are clustered, and a
 * cluster's size is known whether or not any of its pages is added one by
 * one (a count by the touched list adds untouched clusters in bulk).
 * AS-safe. */
void wss_strata_design(wss_strata_t *s, uint64_t pages);
/* A block of a cluster design cut by its range's end, y its touched pages
 * in the range: no neighbour tells its spread (its cluster may hold the
 * range's few touches or miss them), so its variance is bounded by its
 * square, and never less than one page's (a stride's clusters all alike
 * would otherwise read as exact, and its ends are not).  AS-safe. */
void wss_strata_doubt(wss_strata_t *s, double y);
/* A break (the end of a range): no difference across it.  AS-safe. */
void wss_strata_break(wss_strata_t *s);
/* A lone value (a member whose neighbours are gone): its square.  AS-safe. */
void wss_strata_add_alone(wss_strata_t *s, double y);
/* The 95 % interval of base + scale * (the members' sum), divided by div
 * (after a break: a cluster still open is not in it):
 * the members' values scaled by the sample's 2^L, plus a part known
 * exactly; never below base + the members' own sum (what was seen), over
 * div.  Uses Student's t with a degree of freedom a pair.  AS-safe. */
wss_estimate_avg_t wss_strata_interval(const wss_strata_t *s, double scale, double base, double div);

/* The 97.5 % quantile of Student's t with df degrees of freedom (within
 * 1 % from 3 on; 0 is read as 1).  AS-safe. */
double wss_t975(uint64_t df);

/* One sample's estimate from its members in address order (s: their 0/1
 * touched values, wss_strata_add): n tracked pages, k members, x touched,
 * at a rate of 1 in 2^level.  The estimate is wss_estimate_pages's; the
 * interval is the strata's (valid when touches cluster; far narrower on
 * runs of pages) once at least WSS_STRATA_MIN members are touched and as
 * many untouched, else Wilson's (its bounds for a few touched members are
 * the exact Poisson ones, which a variance of a handful cannot give).
 * AS-safe. */
#define WSS_STRATA_MIN 10
wss_estimate_t wss_estimate_strata(uint64_t n, uint64_t k, uint64_t x, const wss_strata_t *s, unsigned level);

/* A total over pages from the x members touched of a sample of one page
 * in each block of 2^level (a Horvitz-Thompson sum, 2^level x, that needs
 * no count of the pages the members were drawn from), plus a part xe known
 * exactly.  The interval is the Poisson one for x (Byar's approximation
 * of the exact bounds): one member a block is touched with a variance at
 * most its mean, so it holds whatever the touches' pattern.  AS-safe. */
wss_estimate_t wss_estimate_total(uint64_t xe, uint64_t x, unsigned level);

/* A total over pages sampled at several rates, plus a part xe known
 * exactly: n[m] pages found at a rate of 1 in 2^m (m < levels), each
 * standing for 2^m (a Horvitz-Thompson sum).  The variance is the sum of
 * the strata's Poisson-like ones, n[m] 2^m (2^m - 1), an upper bound for
 * one member a block (its blocks' members are negatively correlated
 * across strata); the interval is that of a Poisson count with the same
 * mean and variance (Byar's bounds, scaled).  With nothing found,
 * wss_estimate_total's at empty_level.  AS-safe. */
wss_estimate_t wss_estimate_total_levels(uint64_t xe, const uint64_t *n, unsigned levels, unsigned empty_level);

#endif
