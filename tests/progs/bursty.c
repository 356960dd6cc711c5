/* A program with bursts, for peak detection: every interval it keeps a few
 * pages busy, and at two known intervals it sweeps a large buffer in one
 * function (sweep, called from burst, called from main).  Manual ticks; it
 * prints "burst SEQ" for the samples that hold a sweep.
 * With "unmap", the busy pages are unmapped after the last interval and
 * two more intervals pass: they stay the run's hottest pages; with
 * "move", they are moved elsewhere by mremap instead.
 * usage: bursty [INTERVALS [unmap|move]] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/wss.h"

#define PG 4096
#define BIG 2000

static volatile char sink;

__attribute__((noinline)) static void sweep(char *p, int pages)
{
	for (int i = 0; i < pages; i++)
		p[(size_t)i * PG] = (char)i;
}

__attribute__((noinline)) static void burst(char *p)
{
	sweep(p, BIG);
	sink += p[PG];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 80;
	char *busy = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *big = mmap(NULL, (size_t)BIG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (busy == MAP_FAILED || big == MAP_FAILED)
		return 1;
	for (int seq = 1; seq <= n; seq++) {
		for (int i = 0; i < 4; i++)
			busy[i * PG]++;
		if (seq == 45 || seq == 65) {
			burst(big);
			printf("burst %d\n", seq);
		}
		wss_tick();
	}
	if (argc > 2 && !strcmp(argv[2], "unmap")) {
		munmap(busy, 4 * PG);
		wss_tick();
		wss_tick();
	}
	if (argc > 2 && !strcmp(argv[2], "move")) {
		char *to = mmap(NULL, 4 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (to == MAP_FAILED || mremap(busy, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to)
			return 1;
		wss_tick();
		wss_tick();
	}
	return 0;
}
