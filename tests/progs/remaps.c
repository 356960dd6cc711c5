/* mremap of tracked memory as programs do it, many times over: a mapping
 * moved onto another (MREMAP_FIXED), one grown where it cannot grow in
 * place (MREMAP_MAYMOVE), one grown in place, each written first so that
 * its pages are present.  Every call must succeed and the data must move
 * with it, as without wss (engine/mapping.c, mremap_pieces).  Prints
 * "remaps N ok" or the failing call.
 * usage: remaps [ROUNDS] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define N 512

static char *map(size_t pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("remaps: mmap");
		exit(1);
	}
	return p;
}

static void fill(char *p, size_t pages, int tag)
{
	for (size_t i = 0; i < pages; i++)
		p[i * PAGE] = (char)(tag + i);
}

static int same(const char *p, size_t pages, int tag)
{
	for (size_t i = 0; i < pages; i++)
		if (p[i * PAGE] != (char)(tag + i))
			return 0;
	return 1;
}

static int fail(const char *what, int round)
{
	printf("remaps: %s failed in round %d: %s\n", what, round, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	for (int r = 0; r < rounds; r++) {
		char *b = map(N), *c = map(N);
		fill(b, N, 1);
		fill(c, N, 2);
		usleep(20000); /* a tick may arm them in between */
		if (mremap(c, N * PAGE, N * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, b) != b)
			return fail("a move onto a mapping", r);
		if (!same(b, N, 2))
			return fail("the moved data", r);
		/* grown where a mapping right after it blocks: moved */
		char *d = map(2 * N);
		munmap(d + N * PAGE, N * PAGE);
		char *block = mmap(d + N * PAGE, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		fill(d, N, 3);
		usleep(20000);
		char *e = mremap(d, N * PAGE, 2 * N * PAGE, MREMAP_MAYMOVE);
		if (e == MAP_FAILED)
			return fail("a grow that moves", r);
		if (!same(e, N, 3))
			return fail("the grown data", r);
		e[(2 * N - 1) * PAGE] = 1; /* the new part is there */
		/* grown in place: the room after it freed */
		munmap(block, PAGE);
		char *g = mremap(e, 2 * N * PAGE, 2 * N * PAGE + PAGE, 0);
		if (g == MAP_FAILED && errno != ENOMEM)
			return fail("a grow in place", r);
		munmap(g == MAP_FAILED ? e : g, 2 * N * PAGE + (g == MAP_FAILED ? 0 : PAGE));
		munmap(b, N * PAGE);
	}
	printf("remaps %d ok\n", rounds);
	return 0;
}
