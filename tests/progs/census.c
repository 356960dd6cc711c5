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
 *   replace   1024 pages written, 512 of them replaced by a MAP_FIXED
 *             MAP_POPULATE mapping never touched; two 512-page mappings
 *             written, one moved onto the other (mremap MREMAP_FIXED)
 *   shortread a read(2) of a pipe's 10 bytes into a 512-page buffer: the
 *             buffer counts as touched (the kernel could write all of it)
 *   sparsedrop 1024 pages of a 2 GiB reservation read, dropped
 *             (MADV_DONTNEED), then written: data and write 1024 each
 *   truncate  a file of 2048 pages mapped shared and read (kind file),
 *             then truncated to nothing while mapped: prints "file 2048"
 *   pastend   read(2) into a file mapping past its file's end: fails
 *             with EFAULT, as natively (prints "pastend EFAULT"), never
 *             a SIGBUS
 * usage: census MODE */
#include <errno.h>
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
	} else if (!strcmp(m, "replace")) {
		char *a = map(1024, 0);
		for (size_t i = 0; i < 1024; i++)
			a[i * PAGE] = 1;
		pause_a_while();
		if (mmap(a, 512 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1,
			 0) != a)
			return 1;
		char *b = map(512, 0), *c = map(512, 0);
		for (size_t i = 0; i < 512; i++)
			b[i * PAGE] = c[i * PAGE] = 1;
		pause_a_while();
		if (mremap(c, 512 * PAGE, 512 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, b) != b)
			return 1;
		pause_a_while();
		n = 2048;
	} else if (!strcmp(m, "shortread")) {
		char *buf = map(512, 0);
		int fd[2];
		if (pipe(fd) || write(fd[1], "0123456789", 10) != 10)
			return 1;
		for (int round = 0; round < 2; round++) {
			if (round == 0 && read(fd[0], buf, 512 * PAGE) != 10)
				return 1;
			pause_a_while();
		}
		n = 512;
	} else if (!strcmp(m, "sparsedrop")) {
		char *p = map(2UL << 18, MAP_NORESERVE);
		for (size_t i = 0; i < 1024; i++)
			sink += p[i * 64 * PAGE];
		pause_a_while();
		madvise(p, (2UL << 18) * PAGE, MADV_DONTNEED);
		for (int round = 0; round < 2; round++) {
			for (size_t i = 0; i < 1024; i++)
				p[i * 64 * PAGE] = 1;
			pause_a_while();
		}
		n = 1024;
	} else if (!strcmp(m, "pastend")) {
		char path[] = "/tmp/census.XXXXXX";
		int fd = mkstemp(path), pfd[2];
		if (fd < 0 || ftruncate(fd, 4 * PAGE) || pipe(pfd) || write(pfd[1], "0123456789", 10) != 10)
			return 1;
		unlink(path);
		char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED || ftruncate(fd, 0))
			return 1;
		for (int round = 0; round < 2; round++)
			pause_a_while();
		long r = read(pfd[0], p, 4 * PAGE);
		printf("pastend %s\n", r < 0 && errno == EFAULT ? "EFAULT" : "other");
		return 0;
	} else if (!strcmp(m, "truncate")) {
		char path[] = "/tmp/census.XXXXXX";
		int fd = mkstemp(path);
		if (fd < 0 || ftruncate(fd, 2048 * PAGE))
			return 1;
		unlink(path);
		char *p = mmap(NULL, 2048 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 1;
		for (int round = 0; round < 2; round++) {
			for (size_t i = 0; i < 2048; i++)
				sink += p[i * PAGE];
			pause_a_while();
		}
		if (ftruncate(fd, 0))
			return 1;
		pause_a_while();
		printf("file 2048\n");
		return 0;
	} else {
		fprintf(stderr, "usage: census basic|populate|drop|move|mlock|huge|fork|sparse|replace|shortread|sparsedrop|truncate|pastend\n");
		return 2;
	}
	printf("anon %lu\n", n);
	return 0;
}
