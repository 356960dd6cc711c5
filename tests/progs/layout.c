/* The issue-12 layout check: writes one byte at offset i*4096 + (i%7)*64
 * in each of 1000 pages of an 8 MiB block, between two manual ticks, so
 * that it touches 1000 pages when the block starts on a page boundary and
 * fewer when it starts further in (jemalloc's cache-oblivious offsets).
 * Prints "offset N" (the block's offset in its page) for each of a few
 * large allocations, and "expect SEQ 1000".
 * usage: layout */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/wss.h"

int main(void)
{
	char *b[4];
	for (int i = 0; i < 4; i++)
		if (!(b[i] = malloc((size_t)(i + 1) << 21)))
			return 1;
	wss_tick(); /* 1: set-up */
	for (int i = 0; i < 1000; i++)
		((volatile char *)b[1])[(size_t)i * 4096 + (size_t)(i % 7) * 64] = 1;
	wss_tick(); /* 2 */
	for (int i = 0; i < 4; i++)
		printf("offset %lu\n", (unsigned long)((uintptr_t)b[i] % 4096));
	printf("expect 2 1000\n");
	for (int i = 0; i < 4; i++)
		free(b[i]);
	return 0;
}
