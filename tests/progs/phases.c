/* Deterministic phases for the manual time base: each phase touches a known
 * set of pages, prints what the sample must show, and calls wss_tick().
 * Lines: "expect SEQ LO HI" (data_pages of sample SEQ in LO..HI) and
 * "expect_tid SEQ TID LO HI".  LO is the exact count of pages the phase
 * touched; HI adds a few pages of slack for the runtime's own touches.
 * usage: phases basic|window|threads|coarse */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "include/wss.h"

#define PAGE 4096
#define SLACK 4

static int seq;
static char bss_block[64 * PAGE];

static void touch(char *p, int npages)
{
	for (int i = 0; i < npages; i++)
		((volatile char *)p)[(size_t)i * PAGE] += 1;
}

static long readsum(char *p, int npages)
{
	long s = 0;
	for (int i = 0; i < npages; i++)
		s += ((volatile char *)p)[(size_t)i * PAGE];
	return s;
}

static char *map(int npages)
{
	char *p = mmap(NULL, (size_t)npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void expect(int n)
{
	printf("expect %d %d %d\n", ++seq, n, n + SLACK);
	fflush(stdout);
	wss_tick();
}

static void basic(void)
{
	char *a = map(100);
	touch(a, 100);
	expect(100);
	touch(a, 30);
	expect(30);
	expect(0);
	/* reads count too, also on a page the program made read-only */
	mprotect(a, 20 * PAGE, PROT_READ);
	if (readsum(a, 20) < 0)
		abort();
	expect(20);
	mprotect(a, 20 * PAGE, PROT_READ | PROT_WRITE);
	munmap(a, 100 * PAGE);
	expect(0);
	/* heap: a large allocation, page-aligned pages inside it */
	char *h = malloc(65 * PAGE);
	char *hp = (char *)(((uintptr_t)h + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	touch(hp, 64);
	expect(64);
	free(h);
	/* the executable's .bss */
	touch(bss_block, 16);
	expect(16);
	/* mremap: the set follows the data */
	char *b = map(10);
	touch(b, 10);
	expect(10);
	b = mremap(b, 10 * PAGE, 40 * PAGE, MREMAP_MAYMOVE);
	if (b == MAP_FAILED)
		abort();
	touch(b, 40);
	expect(40);
	/* MAP_FIXED replacement of tracked memory by new tracked memory */
	char *c = mmap(b, 5 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (c != b)
		abort();
	touch(c, 5);
	expect(5);
	munmap(b, 40 * PAGE);
}

/* window = 3 intervals */
static void window(void)
{
	char *a = map(10), *b = map(20), *c = map(30), *d = map(40);
	touch(a, 10);
	expect(10);
	touch(b, 20);
	expect(30);
	touch(c, 30);
	expect(60);
	expect(50);
	expect(30);
	expect(0);
	touch(a, 10);
	touch(b, 5); /* pages already in the window are counted once */
	expect(15);
	touch(b, 5);
	expect(15);
	touch(d, 40);
	expect(55);
	munmap(d, 40 * PAGE); /* unmapped pages leave the window at once */
	expect(5);
}

struct job {
	char *p;
	int n;
	int tid;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	j->tid = (int)gettid();
	touch(j->p, j->n);
	return NULL;
}

static void run_thread(struct job *j)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, j) || pthread_join(t, NULL))
		abort();
}

/* window = 3 intervals */
static void threads(void)
{
	char *a = map(20), *b = map(30);
	struct job j1 = {a, 20, 0}, j2 = {b, 30, 0};
	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, worker, &j1) || pthread_create(&t2, NULL, worker, &j2))
		abort();
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("expect_tid %d %d %d %d\n", seq + 1, j1.tid, 20, 20);
	printf("expect_tid %d %d %d %d\n", seq + 1, j2.tid, 30, 30);
	expect(50);
	/* A third thread touches a's pages: they now belong to it, and the
	 * window (3 intervals) still holds b's pages for the second thread. */
	struct job j3 = {a, 20, 0};
	run_thread(&j3);
	printf("expect_tid %d %d %d %d\n", seq + 1, j3.tid, 20, 20);
	printf("expect_tid %d %d %d %d\n", seq + 1, j1.tid, 0, 0);
	printf("expect_tid %d %d %d %d\n", seq + 1, j2.tid, 30, 30);
	expect(50);
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* Every second page of 4096, five times: each open of a lone page splits a
 * VMA in three.  Run with a small WSS_TEST_VMA_BUDGET, the backend must
 * switch to coarse blocks and keep the VMA count bounded. */
static void coarse(void)
{
	char *a = map(4096);
	int most = 0;
	for (int r = 0; r < 5; r++) {
		for (int i = 0; i < 4096; i += 2)
			((volatile char *)a)[(size_t)i * PAGE] += 1;
		int m = count_maps();
		most = m > most ? m : most;
		wss_tick();
	}
	printf("maps %d\n", most);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "basic";
	if (!strcmp(what, "basic"))
		basic();
	else if (!strcmp(what, "window"))
		window();
	else if (!strcmp(what, "threads"))
		threads();
	else if (!strcmp(what, "coarse"))
		coarse();
	else
		return 2;
	return 0;
}
