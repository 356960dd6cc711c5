/* Known working sets in a reservation too large for per-page state, under
 * the manual time base: GiB of MAP_NORESERVE at a fixed address, each phase
 * reading or writing a known number of distinct pages spread over all of it
 * (one in each of n equal strides, at a pseudo-random place), then ending
 * the interval and giving the pages back with MADV_DONTNEED over the whole
 * reservation.  With "fork", a child forked in the middle phase touches a
 * few pages of it and exits.  Prints "truth SEQ DATA WRITE" per phase, then
 * "status VmHWM VmPTE" (KiB, from /proc/self/status) at the end, so that a
 * run under wss and a native run can be compared.
 * usage: sparseset GiB PHASES MIN_PAGES MAX_PAGES SEED [fork] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/wss.h"
#include "tests/progs/progs.h"

#define PAGE 4096UL
#define MAX_PHASES 64
#define BASE 0x200000000000UL

static uint64_t truth[MAX_PHASES][2];

int main(int argc, char **argv)
{
	if (argc != 6 && argc != 7)
		return 2;
	int forking = argc == 7 && !strcmp(argv[6], "fork");
	uint64_t gib = strtoull(argv[1], NULL, 10);
	int phases = atoi(argv[2]);
	uint64_t lo = strtoull(argv[3], NULL, 10), hi = strtoull(argv[4], NULL, 10), seed = strtoull(argv[5], NULL, 10);
	uint64_t pages = gib << 18;
	if (phases < 1 || phases > MAX_PHASES || lo < 1 || lo > hi || hi > pages)
		return 2;
	/* At a fixed address: with the seed fixed (WSS_TEST_SAMPLING_SEED),
	 * the members and every estimate are the same from run to run. */
	char *p = mmap((void *)BASE, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)BASE) {
		fprintf(stderr, "sparseset: cannot map %llu GiB at %#lx\n", (unsigned long long)gib, BASE);
		return 1;
	}
	volatile uint64_t sink = 0;
	wss_tick(); /* sample 1: start-up; phase i is sample i + 2 */
	for (int i = 0; i < phases; i++) {
		uint64_t h = progs_mix(seed * 1000003 + (uint64_t)i);
		uint64_t n = lo + h % (hi - lo + 1);
		uint64_t wshare = progs_mix(h) % 101; /* percent of the pages written */
		uint64_t stride = pages / n, nw = 0;
		for (uint64_t j = 0; j < n; j++) {
			uint64_t r = progs_mix(h ^ (j * 0x9e3779b97f4a7c15ULL));
			uint64_t pg = j * stride + r % stride;
			if (progs_mix(r) % 100 < wshare) {
				p[pg * PAGE] = 1;
				nw++;
			} else {
				sink += (unsigned char)p[pg * PAGE];
			}
		}
		truth[i][0] = n;
		truth[i][1] = nw;
		if (forking && i == phases / 2) {
			pid_t c = fork();
			if (c == 0) {
				for (uint64_t j = 0; j < 64; j++)
					p[(progs_mix(j) % pages) * PAGE] = 2;
				exit(0);
			}
			int st = 0;
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "sparseset: the forked child failed (%#x)\n", st);
				return 1;
			}
		}
		wss_tick();
		madvise(p, pages * PAGE, MADV_DONTNEED);
	}
	for (int i = 0; i < phases; i++)
		printf("truth %d %llu %llu\n", i + 2, (unsigned long long)truth[i][0], (unsigned long long)truth[i][1]);
	printf("status %lu %lu\n", progs_status_kb("VmHWM"), progs_status_kb("VmPTE"));
	return (int)(sink & 0);
}
