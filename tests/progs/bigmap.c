/* One large anonymous mapping made while a sampled level is in force: maps
 * MiB of private memory, writes the first byte of one page in each STRIDE,
 * and exits.  Under a sampled level its members are armed one by one as
 * the mapping is attached; the budget holds that to one interval's worth
 * (engine/sampling.c, wss_policy_before_attach), which the level of the
 * run's first sample shows.  Prints the pages it wrote.  With HOLD_MS, it
 * keeps the mapping that long after writing it (a tick in between counts
 * the pages: an munmap before it takes them out of the interval's count).
 * usage: bigmap MiB STRIDE [HOLD_MS] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	size_t mib = strtoul(argv[1], NULL, 10), stride = strtoul(argv[2], NULL, 10), pages = mib * 256;
	if (!mib || !stride)
		return 2;
	char *p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	size_t n = 0;
	for (size_t i = 0; i < pages; i += stride, n++)
		p[i * 4096] = 1;
	printf("%zu\n", n);
	if (argc == 4)
		usleep((useconds_t)strtoul(argv[3], NULL, 10) * 1000);
	return munmap(p, pages * 4096) != 0;
}
