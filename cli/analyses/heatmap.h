/* A page x time heat map's grid and arithmetic, apart from reading traces
 * and printing: binning by proportion, the shading of a cell, and the
 * distance between two maps.  Pure.  docs/analyses.md defines them. */
#ifndef WSS_CLI_HEATMAP_H
#define WSS_CLI_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

/* cells[pbin * tbins + tbin]: touches of (page, interval) pairs, each
 * scaled by its interval's rate. */
typedef struct wss_heat {
	size_t tbins, pbins;
	uint64_t *cells;
} wss_heat_t;

/* Returns 0 or ENOMEM (tbins, pbins >= 1). */
int wss_heat_init(wss_heat_t *h, size_t tbins, size_t pbins);
void wss_heat_release(wss_heat_t *h);

/* The bin of item i of n in bins bins: floor(i * bins / n), so that bins
 * split the items in proportion (i < n). */
size_t wss_heat_bin(uint64_t i, uint64_t n, size_t bins);
/* The first item of bin b: ceil(b * n / bins) (b <= bins: n for bins). */
uint64_t wss_heat_bin_first(size_t b, uint64_t n, size_t bins);

uint64_t wss_heat_total(const wss_heat_t *h);
uint64_t wss_heat_max(const wss_heat_t *h);

/* The shade of a cell of value v in a map whose largest is max: 0 for 0,
 * else ceil(9 v / max), 1..9.  The values of shade s are those v with
 * (s-1) max / 9 < v <= s max / 9. */
unsigned wss_heat_shade(uint64_t v, uint64_t max);

/* The root mean square difference between two maps of the same grid,
 * each divided by its total first (cells summing to 1):
 * sqrt(sum((a/A - b/B)^2) / cells).  Negative when the grids differ or a
 * map is empty. */
double wss_heat_rmsd(const wss_heat_t *a, const wss_heat_t *b);

#endif
