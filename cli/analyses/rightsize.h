/* The right-sizing arithmetic of the live metrics (cli/out/metrics.c): the
 * working set that a share of the windows fit in, and a process's series
 * read at any moment, so that a cgroup's processes can be summed on one
 * clock.  Pure. */
#ifndef WSS_CLI_RIGHTSIZE_H
#define WSS_CLI_RIGHTSIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The nearest-rank q[0] and q[1] quantiles of v[0 .. n) (sorted in
 * place) into out; false when n is 0. */
bool wss_quantiles(int64_t *v, size_t n, const double *q, int64_t *out);

/* A series of n samples, each the working set of the window ending at
 * at[i] (ascending, ns) of window ns (0: the gap to the sample before),
 * read at time t: the value of the first sample ending at or after t
 * when its window holds t, else 0 (before its first window, after its
 * last sample). */
int64_t wss_series_at(const int64_t *at, const int64_t *v, size_t n, int64_t window, int64_t t);

#endif
