/* Known totals for the census (engine/census.c): the pages a sampled run
 * counts exactly by their presence.  Each mode touches a known set of
 * pages of its own anonymous mappings (kind anon) across a few intervals
 * and prints "anon N": the distinct pages it touched there, by address.
 *   basic     2048 pages read, 1024 written, of a 4096-page mapping
 *   populate  as basic, beside 1024 MAP_POPULATE'd pages never touched
 *   drop      1024 written, MADV_DONTNEED, 512 of them and 256 others
 *             written again, then half the mapping unmapped
 *   move      1024 written, moved by mremap, 256 of them written again
 *             (the moved pages start afresh at their new address)
 *   mlock     as basic, then an untouched mapping locked (mlock)
 *   huge      as basic, then MADV_HUGEPAGE on the mapping
 *   fork      as basic; the child (measured with follow_fork) writes 256
 *             pages of a new mapping and prints "child N"
 *   sparse    one page written in every MiB of a 2 GiB reservation
 * usage: census MODE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL

static volatile char sink;

static char *map(size_t pages, int extra)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
	if (p == MAP_FAILED) {
		perror("census: mmap");
		exit(1);
	}
	return p;
}

/* An interval or two of wall time between phases. */
static void pause_a_while(void) { usleep(150000); }

static unsigned long basic(void)
{
	char *p = map(4096, 0);
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < 2048; i++)
			sink += p[i * 2 * PAGE]; /* the even pages, read */
		for (size_t i = 0; i < 1024; i++)
			p[(i * 4 + 1) * PAGE] = 1; /* every fourth odd page, written */
		pause_a_while();
	}
	return 3072;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	unsigned long n = 0;
	if (!strcmp(m, "basic")) {
		n = basic();
	} else if (!strcmp(m, "populate")) {
		(void)map(1024, MAP_POPULATE);
		n = basic();
	} else if (!strcmp(m, "drop")) {
		char *p = map(4096, 0);
		for (size_t i = 0; i < 1024; i++)
			p[i * PAGE] = 1;
		pause_a_while();
		madvise(p, 4096 * PAGE, MADV_DONTNEED);
		for (size_t i = 0; i < 512; i++)
			p[i * PAGE] = 2;
		for (size_t i = 2048; i < 2304; i++)
			p[i * PAGE] = 2;
		pause_a_while();
		munmap(p + 2048 * PAGE, 2048 * PAGE);
		pause_a_while();
		n = 1024 + 256;
	} else if (!strcmp(m, "move")) {
		char *p = map(1024, 0);
		for (size_t i = 0; i < 1024; i++)
			p[i * PAGE] = 1;
		pause_a_while();
		char *to = map(2048, 0); /* a place to move to: a mapping of our own, replaced */
		char *q = mremap(p, 1024 * PAGE, 1024 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to + 512 * PAGE);
		if (q == MAP_FAILED) {
			perror("census: mremap");
			return 1;
		}
		for (size_t i = 0; i < 256; i++)
			q[i * PAGE] = 2;
		pause_a_while();
		n = 1024 + 256;
	} else if (!strcmp(m, "mlock")) {
		n = basic();
		char *q = map(1024, 0);
		if (mlock(q, 1024 * PAGE))
			perror("census: mlock");
		pause_a_while();
	} else if (!strcmp(m, "huge")) {
		n = basic();
		char *q = map(1024, 0);
		madvise(q, 1024 * PAGE, MADV_HUGEPAGE);
		pause_a_while();
	} else if (!strcmp(m, "fork")) {
		n = basic();
		pid_t c = fork();
		if (c == 0) {
			pause_a_while(); /* measured from an interval after the fork */
			char *q = map(256, 0);
			for (int round = 0; round < 3; round++) {
				for (size_t i = 0; i < 256; i++)
					q[i * PAGE] = 1;
				pause_a_while();
			}
			printf("child 256\n");
			return 0;
		}
		int st;
		waitpid(c, &st, 0);
	} else if (!strcmp(m, "sparse")) {
		char *p = map(2UL << 18, MAP_NORESERVE);
		for (int round = 0; round < 3; round++) {
			for (size_t i = 0; i < 2048; i++)
				p[i * 256 * PAGE] = 1;
			pause_a_while();
		}
		n = 2048;
	} else {
		fprintf(stderr, "usage: census basic|populate|drop|move|mlock|huge|fork|sparse\n");
		return 2;
	}
	printf("anon %lu\n", n);
	return 0;
}
