/* Known working sets for sampled tracking, under the manual time base.
 * Each phase reads or writes a pseudo-random set of distinct pages of one
 * reservation, its size known exactly, then ends the interval; the pages
 * may be dropped before the next phase.  Scattered pages are the hard case for a page sample: no run of
 * neighbours makes the estimate easier.  With "drop", the pages are given
 * back (MADV_DONTNEED) after each phase, so that each phase starts from
 * unpopulated memory; without, they stay (populating a page costs the
 * kernel more than tracking it on some virtual machines).  Prints "truth
 * SEQ DATA WRITE" per phase at the end (so that printing touches nothing
 * inside the phases), then "total DATA WRITE": the run's distinct pages.
 * usage: sampleset MiB PHASES MIN_PAGES MAX_PAGES SEED [drop] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "include/wss.h"
#include "tests/progs/progs.h"

#define PAGE 4096UL
#define MAX_PHASES 256

static uint64_t truth[MAX_PHASES][2];

int main(int argc, char **argv)
{
	if (argc != 6 && argc != 7)
		return 2;
	int drop = argc == 7 && !strcmp(argv[6], "drop");
	size_t mib = strtoul(argv[1], NULL, 10);
	int phases = atoi(argv[2]);
	uint64_t lo = strtoull(argv[3], NULL, 10), hi = strtoull(argv[4], NULL, 10), seed = strtoull(argv[5], NULL, 10);
	uint64_t pages = mib * 256;
	if (phases < 1 || phases > MAX_PHASES || lo > hi || hi > pages)
		return 2;
	/* At a fixed address: membership is a function of the page number
	 * and the seed, so with the seed fixed (WSS_TEST_SAMPLING_SEED) the
	 * members, and every estimate, are the same from run to run. */
	char *p = mmap((void *)0x300000000000UL, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)0x300000000000UL) {
		fprintf(stderr, "sampleset: cannot map at 0x300000000000\n");
		return 1;
	}
	volatile uint64_t sink = 0;
	wss_tick(); /* sample 1: start-up; phase i is sample i + 1 */
	for (int i = 0; i < phases; i++) {
		uint64_t h = progs_mix(seed * 1000003 + (uint64_t)i);
		uint64_t want = lo + h % (hi - lo + 1);
		uint64_t wshare = progs_mix(h) % 101; /* percent of the pages written */
		/* Each page is in with probability want/pages: the size is near
		 * want, and exactly what is counted. */
		uint64_t cut = (uint64_t)((double)want / (double)pages * 18446744073709551615.0);
		uint64_t n = 0, nw = 0;
		for (uint64_t pg = 0; pg < pages; pg++) {
			uint64_t r = progs_mix(h ^ (pg * 0x9e3779b97f4a7c15ULL));
			if (r > cut)
				continue;
			n++;
			if (progs_mix(r) % 100 < wshare) {
				p[pg * PAGE] = 1;
				nw++;
			} else {
				sink += (unsigned char)p[pg * PAGE];
			}
		}
		truth[i][0] = n;
		truth[i][1] = nw;
		wss_tick();
		if (drop)
			madvise(p, pages * PAGE, MADV_DONTNEED);
	}
	for (int i = 0; i < phases; i++)
		printf("truth %d %llu %llu\n", i + 2, (unsigned long long)truth[i][0], (unsigned long long)truth[i][1]);
	/* The run's distinct pages, touched and written, computed again from
	 * the phases' choices after the last tick (a bitmap kept during the
	 * phases would be memory of ours in the working set). */
	uint64_t td = 0, tw = 0;
	for (uint64_t pg = 0; pg < pages; pg++) {
		int in = 0, wr = 0;
		for (int i = 0; i < phases; i++) {
			uint64_t h = progs_mix(seed * 1000003 + (uint64_t)i);
			uint64_t want = lo + h % (hi - lo + 1), wshare = progs_mix(h) % 101;
			uint64_t cut = (uint64_t)((double)want / (double)pages * 18446744073709551615.0);
			uint64_t r = progs_mix(h ^ (pg * 0x9e3779b97f4a7c15ULL));
			if (r > cut)
				continue;
			in = 1;
			wr |= progs_mix(r) % 100 < wshare;
		}
		td += in;
		tw += wr;
	}
	printf("total %llu %llu\n", (unsigned long long)td, (unsigned long long)tw);
	return (int)(sink & 0);
}
