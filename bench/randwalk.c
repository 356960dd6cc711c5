/* A random walk over the pages of a 256 MiB buffer: the worst case for a
 * page-fault tracker, since nearly every page is touched in every interval.
 * usage: randwalk [STEPS] [MiB] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 40000000;
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
	size_t pages = mib * 256;
	char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	uint64_t x = 88172645463325252ULL, sum = 0;
	for (long i = 0; i < steps; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		char *q = p + (x % pages) * 4096 + (x >> 52);
		sum += (uint8_t)(*q)++;
	}
	printf("randwalk %ld steps over %zu MiB: %llu\n", steps, mib, (unsigned long long)sum);
	return 0;
}
