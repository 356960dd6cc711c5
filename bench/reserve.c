/* A terabyte reservation touched sparsely: MAP_NORESERVE of 1 TiB, then
 * PASSES passes each writing one byte in each page of a run of RUN pages
 * at the start of every STRIDE MiB (default 16 pages every 32 MiB: 2 GiB
 * of pages spread over 1 TiB).  What sampled tracking must handle without
 * state for the untouched space.  Prints the process's peak RSS and page
 * tables (VmHWM, VmPTE) at the end, so that a run under wss and a native
 * one can be compared.
 * usage: reserve [PASSES] [GiB] [STRIDE_MiB] [RUN] [PAUSE_MS]
 * (PAUSE_MS: a sleep after each pass, the rest of a request's work;
 * issue 29's case: reserve 12 1024 4 1 500 under --time-base manual) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "include/wss.h"
#include "tests/progs/progs.h"

int main(int argc, char **argv)
{
	long passes = argc > 1 ? atol(argv[1]) : 8;
	size_t gib = argc > 2 ? (size_t)atol(argv[2]) : 1024;
	size_t stride = (argc > 3 ? (size_t)atol(argv[3]) : 32) << 20;
	size_t run = argc > 4 ? (size_t)atol(argv[4]) : 16;
	long pause_ms = argc > 5 ? atol(argv[5]) : 0;
	size_t len = gib << 30;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		perror("reserve: mmap");
		return 1;
	}
	uint64_t sum = 0;
	/* A pass an interval under time_base = "manual" (wss_tick: nothing
	 * otherwise). */
	for (long i = 0; i < passes; i++) {
		for (size_t off = 0; off < len; off += stride)
			for (size_t j = 0; j < run; j++)
				sum += (uint8_t)p[off + j * 4096 + (size_t)(i % 4096)]++;
		if (pause_ms)
			nanosleep(&(struct timespec){pause_ms / 1000, pause_ms % 1000 * 1000000}, NULL);
		wss_tick();
	}
	printf("reserve: %ld passes over %zu GiB, %zu pages each; VmHWM %lu kB, VmPTE %lu kB\n", passes, gib,
	       len / stride * run, progs_status_kb("VmHWM"), progs_status_kb("VmPTE"));
	return (int)(sum & 0);
}
