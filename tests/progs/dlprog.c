/* dlopen and dlclose under tracking (track.library_data).
 *   exact DIR   manual ticks: prints "expect SEQ PAGES" for the samples whose
 *               page count the library's touches make exact
 *   churn DIR N N rounds of dlopen, touch, dlclose of two libraries that
 *               load where the other was, and of one whose dlopen fails
 *               after it was mapped, while a thread touches heap memory;
 *               prints the checksum (the same natively)
 * DIR holds libdldata1.so, libdldata2.so and libdlbad.so.
 * usage: dlprog MODE DIR [N] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/wss.h"

static char path[3][4096];
static int seq = 1; /* the sample the next wss_tick() ends */

static void tick(void)
{
	wss_tick();
	seq++;
}

static void *open_lib(int which)
{
	void *h = dlopen(path[which], RTLD_NOW | RTLD_LOCAL);
	if (!h && which != 2) {
		fprintf(stderr, "dlopen %s: %s\n", path[which], dlerror());
		exit(3);
	}
	return h;
}

static long touch(void *h, int n)
{
	long (*f)(int) = (long (*)(int))dlsym(h, "dl_touch");
	if (!f) {
		fprintf(stderr, "dlsym dl_touch: %s\n", dlerror());
		exit(3);
	}
	return f(n);
}

static int exact(void)
{
	void *h = open_lib(0);
	tick(); /* sees the library */
	tick(); /* tracks it: armed from here */
	touch(h, 40);
	printf("expect %d 40\n", seq);
	tick();
	touch(h, 10);
	printf("expect %d 10\n", seq);
	tick();
	if (dlclose(h))
		return 4;
	printf("expect %d 0\n", seq);
	tick();
	/* Loaded again: tracked again from the second tick that sees it. */
	h = open_lib(1);
	tick();
	tick();
	touch(h, 30);
	printf("expect %d 30\n", seq);
	tick();
	dlclose(h);
	return 0;
}

static volatile int stop;

static void *heap_toucher(void *a)
{
	(void)a;
	long sum = 0;
	while (!stop) {
		char *p = malloc(64 * 4096);
		for (int i = 0; i < 64; i++)
			p[i * 4096] = (char)i;
		for (int i = 0; i < 64; i++)
			sum += p[i * 4096];
		free(p);
	}
	return (void *)sum;
}

static int churn(int rounds)
{
	pthread_t t;
	pthread_create(&t, NULL, heap_toucher, NULL);
	long sum = 0;
	int failed = 0;
	for (int r = 0; r < rounds; r++) {
		void *a = open_lib(r & 1);
		sum += touch(a, 1 + r % 200);
		if (open_lib(2)) /* must fail: an undefined symbol */
			return 5;
		failed++;
		void *b = open_lib(!(r & 1));
		sum += touch(b, 50);
		if (r % 8 == 0) { /* long enough for ticks to track both */
			struct timespec ts = {0, 3000000};
			nanosleep(&ts, NULL);
			sum += touch(a, 20) + touch(b, 20);
		}
		dlclose(a);
		sum += touch(b, 100);
		dlclose(b);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("churn %d rounds, %d failed loads, checksum %ld\n", rounds, failed, sum);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	snprintf(path[0], sizeof path[0], "%s/libdldata1.so", argv[2]);
	snprintf(path[1], sizeof path[1], "%s/libdldata2.so", argv[2]);
	snprintf(path[2], sizeof path[2], "%s/libdlbad.so", argv[2]);
	if (!strcmp(argv[1], "exact"))
		return exact();
	if (!strcmp(argv[1], "churn"))
		return churn(argc > 3 ? atoi(argv[3]) : 200);
	return 2;
}
