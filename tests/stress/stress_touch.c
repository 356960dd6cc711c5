/* Concurrency stress for the fault path and the tick.
 *
 * manual mode (exactness): each round, T worker threads write a random half
 * of an N-page region while the main thread calls wss_tick() at a random
 * moment in the middle of their work, then once more after joining them.
 * With a window of 2 intervals the second sample must contain every page the
 * round wrote, whichever side of the concurrent tick each write fell on: a
 * lost touch shows up as a sample below the count.  The program prints
 * "expect SEQ LO HI" for each such sample; workers also churn small
 * malloc/free pairs (their pages are the HI slack).
 *
 * split mode (hybrid's write window): each round, T workers write a random
 * half of the region, then, as soon as they are done, read all of it while
 * the main thread ticks: the reads race the tick's arming and harvest, and
 * must not take the writes with them.  Prints "wexpect SEQ W" for the
 * interval of the writes (exactly W written pages, the writes' count) and
 * for the next one (0 written).  The state the threads share lives on
 * main's stack, which is not tracked, so no other page is written.
 *
 * sampled mode: manual's rounds under sampled tracking at a fixed rate and
 * seed (given as LEVEL and SEED, the session's WSS_TRACK_SAMPLE_RATE and
 * WSS_TEST_SAMPLING_SEED): the tick re-arms the members touched in the
 * interval only, so a member it failed to re-arm stays open and its next
 * round's write goes unseen.  Prints "xexpect SEQ LO HI" with the members
 * among the round's pages: the sample's raw count (sampled.data, and
 * sampled.write under hybrid) must be in [LO, HI].
 *
 * wall mode: the same workers run freely for SECONDS under a wall-clock
 * interval (1 ms in the tests), with malloc/free churn; the test checks that
 * the program finishes and the profile is consistent.
 *
 * usage: stress_touch manual|split|wall THREADS PAGES ROUNDS|SECONDS
 *        stress_touch sampled THREADS PAGES ROUNDS LEVEL SEED */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/sample.h"
#include "include/wss.h"

#define PAGE 4096
#define CHURN_SLACK 64

static char *region;
static int npages, nthreads;
static uint64_t round_seed;
static pthread_barrier_t start_b, end_b;
static volatile int stop;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static int in_set(uint64_t seed, int page) { return mix(seed * 1000003 + (uint64_t)page) & 1; }

static void churn(uint64_t *rng)
{
	*rng = mix(*rng);
	size_t sz = 16 + *rng % 2000;
	char *p = malloc(sz);
	if (p) {
		p[0] = 1;
		p[sz - 1] = 2;
		free(p);
	}
}

static void *manual_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t rng = (uint64_t)me + 1;
	for (;;) {
		pthread_barrier_wait(&start_b);
		if (stop)
			return NULL;
		for (int p = me; p < npages; p += nthreads) {
			if (in_set(round_seed, p))
				((volatile char *)region)[(size_t)p * PAGE] += 1;
			if ((p / nthreads) % 64 == 0)
				churn(&rng);
		}
		pthread_barrier_wait(&end_b);
	}
}

struct split {
	pthread_barrier_t start, written, end;
	uint64_t seed;
	int stop;
};
static struct split *sp; /* on main's stack; the pointer is only read */

static void *split_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	volatile char *m = region;
	for (;;) {
		pthread_barrier_wait(&sp->start);
		if (sp->stop)
			return NULL;
		for (int p = me; p < npages; p += nthreads)
			if (in_set(sp->seed, p))
				m[(size_t)p * PAGE] += 1;
		pthread_barrier_wait(&sp->written);
		for (int p = me; p < npages; p += nthreads)
			(void)m[(size_t)p * PAGE + 64];
		pthread_barrier_wait(&sp->end);
	}
}

static void split_rounds(pthread_t *t, long rounds)
{
	struct split s = {.seed = 0};
	int expect[2 * 4000]; /* on the stack too */
	if (rounds > 4000)
		rounds = 4000;
	sp = &s;
	pthread_barrier_init(&s.start, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&s.written, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&s.end, NULL, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, split_worker, (void *)(intptr_t)i);
	int seq = 1;
	wss_tick();
	for (long r = 0; r < rounds; r++) {
		s.seed = (uint64_t)r + 1;
		int want = 0;
		for (int p = 0; p < npages; p++)
			want += in_set(s.seed, p);
		pthread_barrier_wait(&s.start);
		pthread_barrier_wait(&s.written);
		wss_tick(); /* racing the readers */
		expect[2 * r] = ++seq;
		expect[2 * r + 1] = want;
		pthread_barrier_wait(&s.end);
		wss_tick();
		seq++;
	}
	s.stop = 1;
	pthread_barrier_wait(&s.start);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	for (long r = 0; r < rounds; r++) {
		printf("wexpect %d %d\n", expect[2 * r], expect[2 * r + 1]);
		printf("wexpect %d 0\n", expect[2 * r] + 1);
	}
}

static void *wall_worker(void *arg)
{
	uint64_t rng = (uint64_t)(intptr_t)arg * 7 + 3;
	while (!stop) {
		for (int i = 0; i < 256; i++) {
			rng = mix(rng);
			((volatile char *)region)[(rng % (uint64_t)npages) * PAGE] += 1;
		}
		churn(&rng);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	const char *mode = argv[1];
	nthreads = atoi(argv[2]);
	npages = atoi(argv[3]);
	long amount = atol(argv[4]);
	region = mmap(NULL, (size_t)npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || nthreads < 1 || npages < 1)
		return 1;
	pthread_t *t = calloc((size_t)nthreads, sizeof *t);
	if (!strcmp(mode, "split")) {
		split_rounds(t, amount);
		free(t);
		printf("stress_touch split done\n");
		return 0;
	}
	bool sampled = !strcmp(mode, "sampled");
	unsigned level = sampled && argc > 6 ? (unsigned)atoi(argv[5]) : 0;
	uint64_t seed = sampled && argc > 6 ? strtoull(argv[6], NULL, 0) : 0;
	if (sampled && (level < 1 || !seed))
		return 2;
	if (!strcmp(mode, "manual") || sampled) {
		pthread_barrier_init(&start_b, NULL, (unsigned)nthreads + 1);
		pthread_barrier_init(&end_b, NULL, (unsigned)nthreads + 1);
		for (int i = 0; i < nthreads; i++)
			pthread_create(&t[i], NULL, manual_worker, (void *)(intptr_t)i);
		int seq = 0;
		wss_tick();
		seq++;
		for (long r = 0; r < amount; r++) {
			round_seed = (uint64_t)r + 1;
			int want = 0;
			for (int p = 0; p < npages; p++)
				want += in_set(round_seed, p) &&
					(!level || wss_sample_member(((uintptr_t)region >> 12) + (uint64_t)p, level, seed));
			pthread_barrier_wait(&start_b);
			/* the concurrent tick, somewhere in the workers' sweep */
			struct timespec ts = {0, (long)(mix((uint64_t)r) % 1500000)};
			nanosleep(&ts, NULL);
			wss_tick();
			seq++;
			pthread_barrier_wait(&end_b);
			printf("%s %d %d %d\n", sampled ? "xexpect" : "expect", seq + 1, want, want + CHURN_SLACK);
			wss_tick();
			seq++;
		}
		stop = 1;
		pthread_barrier_wait(&start_b);
	} else {
		for (int i = 0; i < nthreads; i++)
			pthread_create(&t[i], NULL, wall_worker, (void *)(intptr_t)i);
		struct timespec ts = {amount, 0};
		nanosleep(&ts, NULL);
		stop = 1;
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	free(t);
	printf("stress_touch %s done\n", mode);
	return 0;
}
