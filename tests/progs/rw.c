/* Reads and writes in known phases, one manual tick each, for comparing
 * what each backend counts: mprotect sees reads and writes, uffd-wp writes
 * only (kernel writes included).  Prints "expect SEQ MPROTECT UFFD" for
 * each sample whose page count the phase makes exact, and "child SEQ
 * MPROTECT UFFD" for the forked child's own first sample.
 * usage: rw */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/wss.h"

#define PG 4096
static char *m;
static int seq = 1;
static volatile char sink;

static void tick(void)
{
	wss_tick();
	seq++;
}

static void wr(int from, int to)
{
	for (int i = from; i < to; i++)
		m[(size_t)i * PG] = (char)i;
}

static void rd(int from, int to)
{
	for (int i = from; i < to; i++)
		sink += m[(size_t)i * PG + 8];
}

static void expect(int mp, int uf)
{
	printf("expect %d %d %d\n", seq, mp, uf);
}

struct span {
	int from, to;
};

static void *writer(void *a)
{
	struct span *s = a;
	wr(s->from, s->to);
	return NULL;
}

int main(void)
{
	m = mmap(NULL, 256 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	wr(0, 256);
	tick(); /* 1: set-up */

	wr(0, 40);
	expect(40, 40);
	tick();

	rd(100, 150);
	expect(50, 0);
	tick();

	wr(0, 10);
	rd(200, 230);
	expect(40, 10);
	tick();

	/* The kernel writes 4 pages: read(2) from a pipe into them. */
	int p[2];
	if (pipe(p))
		return 1;
	static char chunk[4 * PG]; /* in .bss: tracked too */
	memset(chunk, 'x', sizeof chunk);
	tick(); /* the set-up above touched .bss */
	if (write(p[1], chunk, sizeof chunk) != (ssize_t)sizeof chunk || read(p[0], m + 60 * PG, sizeof chunk) != (ssize_t)sizeof chunk)
		return 1;
	expect(8, 4); /* mprotect also counts the 4 pages write(2) read */
	tick();

	/* Two threads, 16 pages each. */
	pthread_t t1, t2;
	struct span a = {150, 166}, b = {170, 186};
	pthread_create(&t1, NULL, writer, &a);
	pthread_create(&t2, NULL, writer, &b);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	tick(); /* thread start-up touches the heap: not exact */
	pthread_create(&t1, NULL, writer, &a);
	pthread_join(t1, NULL);
	expect(16, 16);
	tick();
	struct span c = {180, 200};
	pthread_create(&t2, NULL, writer, &c);
	pthread_join(t2, NULL);
	expect(20, 20);
	tick();

	/* mremap: the tracked range grows and moves; both parts are tracked. */
	char *n = mremap(m, 256 * PG, 512 * PG, MREMAP_MAYMOVE);
	if (n == MAP_FAILED)
		return 1;
	m = n;
	tick();
	wr(0, 20);
	wr(300, 330);
	expect(50, 50);
	tick();

	/* fork: the child counts its own writes from scratch. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		wr(0, 25);
		printf("child %d 1 25 25\n", (int)getpid());
		fflush(stdout);
		wss_tick();
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	tick(); /* fork and wait touch the parent's memory: not exact */
	wr(400, 412);
	expect(12, 12);
	tick();
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
