/* Cost of one first touch in an interval: a region of N pages is touched
 * (every STRIDE-th page, read or write) once per interval, ROUNDS times, with
 * wss_tick() between rounds (run it with time_base = manual), and the time
 * of the touch loops is divided by the number of touches.  Also reports the
 * cost of the ticks (re-arming N pages).  Natively (no preload) it measures
 * the loop itself.
 * usage: faultcost [PAGES] [STRIDE] [ROUNDS] [read|write] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "include/wss.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 16384;
	long stride = argc > 2 ? atol(argv[2]) : 1;
	int rounds = argc > 3 ? atoi(argv[3]) : 20;
	int write = !(argc > 4 && !strcmp(argv[4], "read"));
	volatile char *p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (long i = 0; i < pages; i++)
		p[i * 4096] = 1; /* populate outside the measurement */
	wss_tick();
	double touch = 0, tick = 0;
	long sum = 0, n = 0;
	for (int r = 0; r < rounds; r++) {
		double t0 = now();
		for (long i = 0; i < pages; i += stride, n++) {
			if (write)
				p[i * 4096]++;
			else
				sum += p[i * 4096];
		}
		double t1 = now();
		wss_tick();
		double t2 = now();
		touch += t1 - t0;
		tick += t2 - t1;
	}
	printf("%s stride %ld: %.2f us per first touch, %.1f us per tick of %ld pages (%ld)\n", write ? "write" : "read",
	       stride, touch / n * 1e6, tick / rounds * 1e6, pages, sum);
	return 0;
}
