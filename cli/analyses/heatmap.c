/* Heat-map arithmetic (heatmap.h).  Products go through 128 bits: an item
 * index times a bin count passes 64 bits for address-ordered bins of a
 * 47-bit address space. */
#include "config.h"
#include "cli/analyses/heatmap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int wss_heat_init(wss_heat_t *h, size_t tbins, size_t pbins)
{
	h->tbins = tbins;
	h->pbins = pbins;
	h->cells = calloc(tbins * pbins, sizeof *h->cells);
	return h->cells ? 0 : ENOMEM;
}

void wss_heat_release(wss_heat_t *h)
{
	free(h->cells);
	h->cells = NULL;
}

size_t wss_heat_bin(uint64_t i, uint64_t n, size_t bins)
{
	return (size_t)((unsigned __int128)i * bins / n);
}

uint64_t wss_heat_bin_first(size_t b, uint64_t n, size_t bins)
{
	return (uint64_t)(((unsigned __int128)b * n + bins - 1) / bins);
}

uint64_t wss_heat_total(const wss_heat_t *h)
{
	uint64_t t = 0;
	for (size_t i = 0; i < h->tbins * h->pbins; i++)
		t += h->cells[i];
	return t;
}

uint64_t wss_heat_max(const wss_heat_t *h)
{
	uint64_t m = 0;
	for (size_t i = 0; i < h->tbins * h->pbins; i++)
		if (h->cells[i] > m)
			m = h->cells[i];
	return m;
}

unsigned wss_heat_shade(uint64_t v, uint64_t max)
{
	if (!v || !max)
		return 0;
	return (unsigned)(((unsigned __int128)v * 9 + max - 1) / max);
}

double wss_heat_rmsd(const wss_heat_t *a, const wss_heat_t *b)
{
	if (a->tbins != b->tbins || a->pbins != b->pbins)
		return -1;
	double ta = (double)wss_heat_total(a), tb = (double)wss_heat_total(b);
	if (ta == 0 || tb == 0)
		return -1;
	size_t n = a->tbins * a->pbins;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a->cells[i] / ta - (double)b->cells[i] / tb;
		sum += d * d;
	}
	return sqrt(sum / (double)n);
}
