/* Three allocation sites, each in a function of its own (allocation
 * sites, engine/allocs.c):
 *   hot_alloc    64 MiB, every page written every interval
 *   cold_alloc   128 MiB, every page written once at the start, then left
 *   small_alloc  100,000 objects of 64 bytes; every tenth one written every
 *                interval (about 1,563 pages' worth, nearly every page of
 *                theirs touched, at page granularity)
 * Manual ticks: each loop is one interval.  With "free", the hot block is
 * freed before the last interval (its site then has nothing live).
 * usage: allocsites [INTERVALS [free]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/wss.h"

#define PG 4096
#define HOT (64UL << 20)
#define COLD (128UL << 20)
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
	char *hot = hot_alloc(), *cold = cold_alloc();
	char **small = small_alloc();
	if (!hot || !cold || !small)
		return 1;
	for (size_t i = 0; i < COLD; i += PG)
		cold[i] = 1;
	for (int seq = 1; seq <= n; seq++) {
		if (hot)
			for (size_t i = 0; i < HOT; i += PG)
				hot[i]++;
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
