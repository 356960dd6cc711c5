/* Right-sizing arithmetic (rightsize.h). */
#include "config.h"
#include "cli/analyses/rightsize.h"

#include <math.h>
#include <stdlib.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

bool wss_quantiles(int64_t *v, size_t n, const double *q, int64_t *out)
{
	if (!n)
		return false;
	qsort(v, n, sizeof *v, cmp_i64);
	for (int k = 0; k < 2; k++) {
		size_t r = (size_t)ceil(q[k] * (double)n);
		out[k] = v[r ? (r > n ? n : r) - 1 : 0];
	}
	return true;
}

int64_t wss_series_at(const int64_t *at, const int64_t *v, size_t n, int64_t window, int64_t t)
{
	if (!n || t > at[n - 1])
		return 0;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (at[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t w = window > 0 ? window : lo ? at[lo] - at[lo - 1] : 0;
	return at[lo] - t < w ? v[lo] : 0;
}
