/* For the report's inline frames: bump() is always inlined into main, so an
 * address in its loop is two frames, bump then main (tests/integration/
 * report.sh builds it at -O2 -g).  usage: inlined [PAGES] */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) void bump(volatile char *p, int n)
{
	for (int i = 0; i < n; i++)
		p[(long)i * 4096] += (char)i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	volatile char *buf = calloc((size_t)n, 4096);
	if (!buf)
		return 1;
	bump(buf, n);
	printf("inlined: %d\n", buf[4096]);
	return 0;
}
