/* Touches that race a tick: a second thread touches last interval's pages
 * while the tick is between arming them and harvesting their write bits
 * (the tick is held there by WSS_TEST_HARVEST_DELAY).  Each page must count
 * in the interval it was touched in, as read or written as it was there,
 * whatever the timing: the counts printed are exact.  Manual ticks.
 *
 * Only the mapping below and stack memory are touched between ticks: no
 * stdio, no malloc, no static data, so every sample's pages are known.
 * The helper thread sees that the tick armed the pages by reading
 * /proc/self/maps (into its stack) until the mapping is PROT_NONE.
 *
 * Prints, at the end, "expect SEQ WHO DATA WRITTEN" lines, WHO being
 * "main" or "helper", and "tids MAIN HELPER".
 * usage: split */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "include/wss.h"

#define PG 4096
#define N 64 /* pages per phase */

enum { IDLE, READ, WRITE, QUIT };

struct ctl {
	char *m;
	int cmd;        /* what the helper does once the pages are armed */
	int from;
	int done;       /* the helper finished cmd */
	int saw_armed;  /* the helper saw the pages armed before touching */
	int tid;
};

static void wr(char *m, int from, int to)
{
	for (int i = from; i < to; i++)
		((volatile char *)m)[(size_t)i * PG] = (char)i;
}

static int rd(char *m, int from, int to)
{
	int s = 0;
	for (int i = from; i < to; i++)
		s += ((volatile char *)m)[(size_t)i * PG + 8];
	return s;
}

/* Is the page at a PROT_NONE now?  /proc/self/maps read into the stack. */
static int armed(const char *a)
{
	char buf[16384];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t len = 0;
	ssize_t n;
	while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *end;
		unsigned long lo = strtoul(l, &end, 16), hi = strtoul(end + 1, &end, 16);
		if ((unsigned long)a >= lo && (unsigned long)a < hi)
			return end[1] == '-' && end[2] == '-' && end[3] == '-';
	}
	return 0;
}

static void *helper(void *arg)
{
	struct ctl *c = arg;
	c->tid = (int)syscall(SYS_gettid);
	for (;;) {
		int cmd;
		while ((cmd = __atomic_load_n(&c->cmd, __ATOMIC_ACQUIRE)) == IDLE)
			sched_yield();
		if (cmd == QUIT)
			return NULL;
		char *p = c->m + (size_t)c->from * PG;
		/* Up to 10 s for the tick to arm the pages; a late helper
		 * touches after the harvest, which must count the same. */
		int saw = 0;
		for (int i = 0; i < 10000 && !(saw = armed(p)); i++)
			usleep(1000);
		if (cmd == READ)
			rd(c->m, c->from, c->from + N);
		else
			wr(c->m, c->from, c->from + N);
		c->saw_armed += saw;
		__atomic_store_n(&c->cmd, IDLE, __ATOMIC_RELEASE);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
}

/* Tick, with the helper doing cmd on [from, from + N) while the tick is
 * held between arming and harvest; then wait for it to finish. */
static void tick_racing(struct ctl *c, int cmd, int from)
{
	c->from = from;
	__atomic_store_n(&c->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->cmd, cmd, __ATOMIC_RELEASE);
	wss_tick();
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		sched_yield();
}

int main(void)
{
	struct ctl c = {0};
	c.m = mmap(NULL, 8 * N * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c.m == MAP_FAILED)
		return 1;
	pthread_t t;
	if (pthread_create(&t, NULL, helper, &c))
		return 1;
	while (!__atomic_load_n(&c.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	wr(c.m, 0, 8 * N);
	wss_tick(); /* 1: set-up */
	wss_tick(); /* 2: nothing, so that every page was armed at least once */

	/* 3: main writes A; 4: the helper reads A in the window. */
	wr(c.m, 0, N);
	tick_racing(&c, READ, 0);
	wss_tick();
	/* 5: main reads B; 6: the helper writes B in the window. */
	rd(c.m, N, 2 * N);
	tick_racing(&c, WRITE, N);
	wss_tick();
	/* 7: main writes C; 8: the helper writes C in the window. */
	wr(c.m, 2 * N, 3 * N);
	tick_racing(&c, WRITE, 2 * N);
	wss_tick();
	/* 9: main reads D; 10: the helper reads D in the window. */
	rd(c.m, 3 * N, 4 * N);
	tick_racing(&c, READ, 3 * N);
	wss_tick();
	/* 11: main writes E then reads F; 12: the helper writes F and reads
	 * nothing else. */
	wr(c.m, 4 * N, 5 * N);
	rd(c.m, 5 * N, 6 * N);
	tick_racing(&c, WRITE, 5 * N);
	wss_tick();

	__atomic_store_n(&c.cmd, QUIT, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("tids %d %d\n", (int)syscall(SYS_gettid), c.tid);
	printf("armed %d\n", c.saw_armed);
	printf("expect 3 main %d %d\n", N, N);
	printf("expect 4 helper %d %d\n", N, 0);
	printf("expect 5 main %d %d\n", N, 0);
	printf("expect 6 helper %d %d\n", N, N);
	printf("expect 7 main %d %d\n", N, N);
	printf("expect 8 helper %d %d\n", N, N);
	printf("expect 9 main %d %d\n", N, 0);
	printf("expect 10 helper %d %d\n", N, 0);
	printf("expect 11 main %d %d\n", 2 * N, N);
	printf("expect 12 helper %d %d\n", N, N);
	return 0;
}
