/* Three allocation sites, each in a function of its own (allocation
 * sites, engine/allocs.c):
 *   hot_alloc    64 MiB, every page written every interval
 *   cold_alloc   128 MiB, every page written once at the start, then left
 *   small_alloc  100,000 objects of 64 bytes; every tenth one written every
 *                interval (about 1,563 pages' worth, nearly every page of
 *                theirs touched, at page granularity)
 * Manual ticks: each loop is one interval.  With "free", the hot block is
 * freed before the last interval (its site then has nothing live).  With
 * "unmap", two more, mappings of the program's own:
 *   map_alloc    32 MiB mapped and written once at the start; at interval
 *                5 its middle 16 MiB is unmapped (8 MiB stay at each end)
 *   remap_alloc  16 MiB mapped into that hole at interval 5, every page
 *                written every interval from then on
 * usage: allocsites [INTERVALS [free|unmap]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/wss.h"

#define PG 4096
#define HOT (64UL << 20)
#define COLD (128UL << 20)
#define MAPPED (32UL << 20)
#define NSMALL 100000
#define SMALL 64

/* Each writes its block's first byte: the call to malloc is then no tail
 * call, and the function is in the stack. */
__attribute__((noinline)) static char *hot_alloc(void)
{
	char *p = malloc(HOT);
	if (p)
		p[0] = 1;
	return p;
}

__attribute__((noinline)) static char *cold_alloc(void)
{
	char *p = malloc(COLD);
	if (p)
		p[0] = 1;
	return p;
}

__attribute__((noinline)) static char *map_alloc(void)
{
	char *p = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	p[0] = 1;
	return p;
}

__attribute__((noinline)) static char *remap_alloc(char *at, size_t n)
{
	char *p = mmap(at, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != at)
		return NULL;
	p[0] = 1;
	return p;
}

__attribute__((noinline)) static char **small_alloc(void)
{
	char **v = calloc(NSMALL, sizeof *v);
	for (int i = 0; v && i < NSMALL; i++)
		v[i] = malloc(SMALL);
	return v;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	int do_free = argc > 2 && !strcmp(argv[2], "free");
	int do_unmap = argc > 2 && !strcmp(argv[2], "unmap");
	char *hot = hot_alloc(), *cold = cold_alloc();
	char **small = small_alloc();
	char *mapped = do_unmap ? map_alloc() : NULL, *hole = NULL;
	if (!hot || !cold || !small || (do_unmap && !mapped))
		return 1;
	for (size_t i = 0; i < COLD; i += PG)
		cold[i] = 1;
	for (size_t i = 0; mapped && i < MAPPED; i += PG)
		mapped[i] = 1;
	for (int seq = 1; seq <= n; seq++) {
		if (hot)
			for (size_t i = 0; i < HOT; i += PG)
				hot[i]++;
		if (mapped && seq == 5) {
			if (munmap(mapped + MAPPED / 4, MAPPED / 2) || !(hole = remap_alloc(mapped + MAPPED / 4, MAPPED / 2)))
				return 1;
		}
		for (size_t i = 0; hole && i < MAPPED / 2; i += PG)
			hole[i]++;
		for (int i = 0; i < NSMALL; i += 10)
			small[i][0]++;
		if (do_free && seq == n - 1) {
			free(hot);
			hot = NULL;
		}
		wss_tick();
	}
	printf("allocsites: %d intervals\n", n);
	return 0;
}
