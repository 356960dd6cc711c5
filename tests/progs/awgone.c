/* Pages written, then gone within their interval, under the manual time
 * base: KEEP pages of one mapping written once and kept, then PHASES
 * intervals in each of which a new mapping of MORE pages is written whole
 * and then given up before the interval ends: unmapped (munmap), mapped
 * over (MAP_FIXED), or moved (mremap to a new place, then unmapped).  Each
 * write is a page written once, and every page is a distinct one (each
 * mapping at an address of its own), so the run wrote KEEP + PHASES * MORE
 * pages, which it prints ("written N").
 * usage: awgone munmap|fixed|mremap KEEP MORE PHASES */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/wss.h"

#define PAGE 4096UL

/* Each mapping at an address of its own (the totals count pages by
 * address: one mapped again where another was would be the same pages). */
static char *map(size_t pages)
{
	static char *next = (char *)0x310000000000UL;
	char *p = mmap(next, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != next)
		exit(1);
	next += pages * PAGE + (1UL << 30);
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	const char *how = argv[1];
	size_t keep = strtoul(argv[2], NULL, 10), more = strtoul(argv[3], NULL, 10);
	int phases = atoi(argv[4]);
	char *k = map(keep);
	for (size_t i = 0; i < keep; i++)
		k[i * PAGE] = 1;
	wss_tick();
	for (int ph = 0; ph < phases; ph++) {
		char *p = map(more);
		for (size_t i = 0; i < more; i++)
			p[i * PAGE] = (char)ph;
		if (!strcmp(how, "munmap")) {
			munmap(p, more * PAGE);
		} else if (!strcmp(how, "fixed")) {
			if (mmap(p, more * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p)
				return 1;
			munmap(p, more * PAGE);
		} else {
			char *q = mremap(p, more * PAGE, more * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, map(more));
			if (q == MAP_FAILED)
				return 1;
			munmap(q, more * PAGE);
		}
		wss_tick();
	}
	printf("written %zu\n", keep + (size_t)phases * more);
	return 0;
}
