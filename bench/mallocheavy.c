/* Allocation-heavy: a pool of live objects of random sizes (16 B .. 64 KiB,
 * mostly small) replaced one at a time, each written when allocated and read
 * now and then.  Measures the cost of the wrapped allocator and of heap
 * tracking.  usage: mallocheavy [OPS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL 4096

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 20000000;
	static char *pool[POOL];
	static size_t sizes[POOL];
	uint64_t x = 0x9e3779b97f4a7c15ULL, sum = 0;
	for (long i = 0; i < ops; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t slot = x % POOL;
		size_t sz = (x >> 20) % 100 < 95 ? 16 + (x >> 32) % 512 : 512 + (x >> 32) % 65536;
		if (pool[slot]) {
			sum += (uint8_t)pool[slot][sizes[slot] - 1];
			free(pool[slot]);
		}
		pool[slot] = malloc(sz);
		if (!pool[slot])
			return 1;
		memset(pool[slot], (int)i, sz < 64 ? sz : 64);
		pool[slot][sz - 1] = (char)i;
		sizes[slot] = sz;
	}
	for (int i = 0; i < POOL; i++)
		free(pool[i]);
	printf("mallocheavy %ld ops: %llu\n", ops, (unsigned long long)sum);
	return 0;
}
