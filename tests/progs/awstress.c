/* Writes racing ticks, for all writes (engine/sampling.c): THREADS threads
 * each write every page of their own share of one anonymous mapping exactly
 * once, in a scattered order, for as long as it takes, while reading pages
 * of the others' shares, and the clock ticks every millisecond meanwhile.
 * Every write falls in exactly one interval, so the anonymous memory's
 * write counts of all the samples must add up to the pages written (a
 * write lost between a tick's arming and its harvest, or counted twice,
 * shows).  Prints "written N" at the end.
 * usage: awstress THREADS MiB */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "tests/progs/progs.h"

#define PAGE 4096UL

static char *base;
static uint64_t share, nthreads;
static volatile uint64_t sink;

static void *writer(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg, s = 0;
	char *mine = base + t * share * PAGE;
	/* A permutation of the share: a stride coprime with it. */
	uint64_t stride = 7919 % share ? 7919 : 7907;
	for (uint64_t i = 0; i < share; i++) {
		uint64_t p = i * stride % share;
		mine[p * PAGE] = 1;
		/* A read of another share's page, written or not. */
		uint64_t o = progs_mix(t * 1000003 + i) % (share * nthreads);
		s += (unsigned char)base[o * PAGE];
		if (i % 16 == 0) {
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
	}
	sink += s;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	nthreads = strtoull(argv[1], NULL, 10);
	uint64_t pages = strtoull(argv[2], NULL, 10) * 256;
	if (nthreads < 1 || nthreads > 16 || pages < nthreads * 64)
		return 2;
	share = pages / nthreads;
	base = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	pthread_t th[16];
	for (uint64_t t = 0; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t))
			return 1;
	for (uint64_t t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	printf("written %llu\n", (unsigned long long)(share * nthreads));
	return 0;
}
