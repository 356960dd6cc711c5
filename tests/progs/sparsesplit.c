/* A reservation too large for per-page state, its protection changed in
 * pieces at unaligned places (the program's mprotect splits the sparse
 * range's entry: engine/sparse.c), so that some pieces' ends cut clusters
 * (docs/profile-format.md, "Clusters"); each phase reads the pages around
 * every cut, then ends the interval (manual time base).
 * usage: sparsesplit GiB CUTS PHASES SEED */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "include/wss.h"
#include "tests/progs/progs.h"

#define PAGE 4096UL
#define BASE 0x200000000000UL
#define MAX_CUTS 256
#define AROUND 8

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	uint64_t pages = strtoull(argv[1], NULL, 10) << 18;
	int ncut = atoi(argv[2]), phases = atoi(argv[3]);
	uint64_t seed = strtoull(argv[4], NULL, 10);
	if (!pages || ncut < 2 || ncut > MAX_CUTS || ncut % 2 || phases < 1)
		return 2;
	char *p = mmap((void *)BASE, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)BASE) {
		fprintf(stderr, "sparsesplit: cannot map at %#lx\n", BASE);
		return 1;
	}
	uint64_t cut[MAX_CUTS], stride = pages / (uint64_t)ncut;
	for (int i = 0; i < ncut; i++)
		cut[i] = (uint64_t)i * stride + AROUND + progs_mix(seed * 1000003 + (uint64_t)i) % (stride - 2 * AROUND);
	wss_tick();
	for (int i = 0; i < ncut; i += 2)
		if (mprotect(p + cut[i] * PAGE, (cut[i + 1] - cut[i]) * PAGE, PROT_READ)) {
			perror("sparsesplit: mprotect");
			return 1;
		}
	volatile uint64_t sink = 0;
	for (int ph = 0; ph < phases; ph++) {
		for (int i = 0; ph % 2 && i < ncut; i++)
			for (uint64_t a = cut[i] - AROUND; a < cut[i] + AROUND; a++)
				sink += (unsigned char)p[a * PAGE];
		wss_tick();
	}
	printf("done %d\n", (int)(sink & 0));
	return 0;
}
