/* Online peak detection on one series of samples (pages per interval): the
 * dispersion-based detector of the valgrind-ws paper, with a threshold in
 * pages (docs/peaks.md gives the formulas and why).  Pure: no OS calls, no
 * allocation, no global state; one struct per series (data, read, write,
 * each thread's).  AS-safe. */
#ifndef WSS_ENGINE_PEAKS_H
#define WSS_ENGINE_PEAKS_H

#include <stdbool.h>
#include <stdint.h>

#define WSS_PEAKS_SENSITIVITY 5.0 /* default g (peaks.sensitivity) */
#define WSS_PEAKS_WINDOW 30u      /* default EMA window n, in samples */
#define WSS_PEAKS_PHI 0.1         /* default filter weight of an outlier */

typedef struct wss_peaks {
	double g;            /* sensitivity (peaks.sensitivity) */
	double alpha;        /* EMA weight, 2/(n+1) */
	double mean, var;    /* EMA of the input and of its squared deviation */
	uint64_t n;          /* samples seen */
	bool in_peak;        /* the previous sample was above the threshold */
	/* Additions. */
	double phi;          /* weight of an outlier in the filtered input */
	double fed;          /* the last value fed to the EMA (filter state) */
	uint64_t warmup;     /* samples before a peak can be reported (= n) */
} wss_peaks_t;

typedef struct wss_peak_info {
	double mean, threshold, deviation; /* at this sample, before the update */
	bool start;                        /* first sample of a peak (onset) */
} wss_peak_info_t;

/* Initialise: sensitivity g (> 0; default 5 from the config), window n
 * samples for the EMA weight (default 30).  A g that is not > 0 is taken
 * as the default, a window below 2 as 2.  AS-safe. */
void wss_peaks_init(wss_peaks_t *d, double sensitivity, unsigned window);
/* Feed one sample x (pages, >= 0; a negative x is taken as 0, a NaN or
 * infinite one is ignored).  Returns true when x is above the threshold
 * (part of a peak); info (may be NULL) gets the mean, threshold and
 * deviation |x - mean| used, and start = true only on the first sample of
 * a peak.  Never true during the first `warmup` samples.  AS-safe. */
bool wss_peaks_update(wss_peaks_t *d, double x, wss_peak_info_t *info);

#endif
