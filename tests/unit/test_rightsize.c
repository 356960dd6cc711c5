/* The right-sizing arithmetic (cli/analyses/rightsize.c): nearest-rank quantiles
 * against a sort done here, over seeded random lists and the edge cases;
 * a series read at any moment against the window that holds it, with and
 * without a window given, and a cgroup's sum of two series offset in
 * time. */
#include "config.h"
#include "cli/analyses/rightsize.h"

#include <math.h>
#include <stdlib.h>

#include "tests/tap/tap.h"

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	plan(14);
	const double q[2] = {0.95, 0.99};
	int64_t out[2], v[1000], w[1000];
	ok(!wss_quantiles(v, 0, q, out), "no values: no quantile");
	v[0] = 7;
	ok(wss_quantiles(v, 1, q, out) && out[0] == 7 && out[1] == 7, "one value: both quantiles are it");
	for (int k = 0; k < 100; k++)
		v[k] = 100 - k; /* 1..100, reversed */
	ok(wss_quantiles(v, 100, q, out) && out[0] == 95 && out[1] == 99, "1..100: p95 95, p99 99 (nearest rank)");
	for (int k = 0; k < 20; k++)
		v[k] = k < 19 ? 1 : 1000;
	ok(wss_quantiles(v, 20, q, out) && out[0] == 1 && out[1] == 1000,
	   "19 small windows and one large of 20: p95 the small (rank 19), p99 the large (rank 20)");
	/* 2,000 seeded lists against the definition: the value of rank
	 * ceil(q n) in sorted order. */
	srand(29);
	int bad = 0;
	for (int t = 0; t < 2000; t++) {
		size_t n = 1 + (size_t)(rand() % 1000);
		for (size_t k = 0; k < n; k++)
			v[k] = w[k] = rand() % 5000;
		qsort(w, n, sizeof *w, cmp);
		wss_quantiles(v, n, q, out);
		for (int j = 0; j < 2; j++) {
			size_t r = (size_t)ceil(q[j] * (double)n);
			bad += out[j] != w[(r ? r : 1) - 1];
		}
	}
	is_int(bad, 0, "2,000 random lists: every quantile is the sorted list's rank ceil(q n)");

	/* Windows of 100 ending at 100, 200, 300: values 5, 6, 7. */
	const int64_t at[3] = {100, 200, 300}, val[3] = {5, 6, 7};
	is_int(wss_series_at(at, val, 3, 100, 0), 0, "before the first window: 0");
	is_int(wss_series_at(at, val, 3, 100, 1), 5, "inside the first window: its value");
	is_int(wss_series_at(at, val, 3, 100, 100), 5, "at a window's end: that window's");
	is_int(wss_series_at(at, val, 3, 100, 101), 6, "just after: the next window's");
	is_int(wss_series_at(at, val, 3, 100, 301), 0, "after the last sample: 0");
	is_int(wss_series_at(at, val, 3, 0, 150), 6, "no window given: the gap to the sample before");
	is_int(wss_series_at(at, val, 0, 100, 150), 0, "no samples: 0");
	/* A window of 300 ending at 300 holds 1 too; one of 50 ending at 200
	 * does not hold 120. */
	is_int(wss_series_at(at, val, 3, 300, 1) + wss_series_at(at, val, 3, 50, 120), 5,
	       "a window's length decides what it holds");
	/* Two processes, the second's windows 50 later: summed on one clock. */
	const int64_t at2[3] = {150, 250, 350}, val2[3] = {10, 20, 30};
	int64_t sum[4];
	for (int k = 0; k < 4; k++)
		sum[k] = wss_series_at(at, val, 3, 100, 60 + 80 * k) + wss_series_at(at2, val2, 3, 100, 60 + 80 * k);
	ok(sum[0] == 5 + 10 && sum[1] == 6 + 10 && sum[2] == 7 + 20 && sum[3] == 7 + 30,
	   "two series offset in time, summed at 60, 140, 220, 300: %lld %lld %lld %lld", (long long)sum[0],
	   (long long)sum[1], (long long)sum[2], (long long)sum[3]);
	return done_testing();
}
