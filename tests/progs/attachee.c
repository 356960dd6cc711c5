/* A program to attach to: THREADS threads write the pages of one buffer
 * in phases of known size, each phase lasting SECONDS, repeated ROUNDS
 * times; then it prints what it did and exits with status 3.  Its output
 * does not depend on timing, so a run attached to equals one that was not.
 * It prints "ready" (flushed) once its threads run, and each phase's start
 * ("phase PAGES T_NS", T_NS on CLOCK_MONOTONIC) on stderr.  ROUNDS "usr1":
 * rounds until SIGUSR1, at least one (a test that attaches many times,
 * however slow a loaded machine makes them, then ends it).
 * usage: attachee SECONDS ROUNDS THREADS PAGES[,PAGES...] */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PG 4096

static char *buf;
static volatile int phase_pages; /* 0: stop */
static volatile uint64_t phase_id;
/* Per thread: its count of sweeps, on its own stack (which the tests
 * leave untracked, track.stacks off: a global written every sweep would be
 * a page of its own). */
static volatile uint64_t *volatile sweeps[64];
static int nthreads;
static volatile sig_atomic_t stop_asked;

static void on_usr1(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	volatile uint64_t seen = 0;
	sweeps[t] = &seen;
	while (1) {
		int n = phase_pages;
		if (!n)
			break;
		/* Thread t writes pages t, t + nthreads, ... of the phase. */
		/* A store, not an increment: a byte counting sweeps wraps to
		 * 0 after 256 of them, and a thread whose sweeps came to a
		 * multiple of 256 left its pages reading "never written" (the
		 * output then depended on timing: 125 pages, 1 CI run in a
		 * few dozen). */
		for (int i = t; i < n; i += nthreads)
			*(volatile char *)&buf[(size_t)i * PG] = 1;
		seen++;
	}
	return (void *)(uintptr_t)seen;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	double secs = atof(argv[1]);
	bool until_usr1 = !strcmp(argv[2], "usr1");
	int rounds = until_usr1 ? 1 : atoi(argv[2]);
	if (until_usr1)
		signal(SIGUSR1, on_usr1);
	nthreads = atoi(argv[3]);
	int sizes[64], nsizes = 0, max = 0;
	for (char *s = strtok(argv[4], ","); s && nsizes < 64; s = strtok(NULL, ","))
		if ((sizes[nsizes++] = atoi(s)) > max)
			max = sizes[nsizes - 1];
	if (nthreads < 1 || nthreads > 64 || !nsizes || max <= 0)
		return 2;
	buf = mmap(NULL, (size_t)max * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	phase_pages = sizes[0];
	pthread_t th[64];
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < nthreads; t++)
		while (!sweeps[t]) {
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
		}
	printf("ready\n");
	fflush(stdout);
	for (int r = 0;; r++) {
		if (r >= rounds) {
			if (!until_usr1 || stop_asked)
				break;
			rounds++; /* one more round until SIGUSR1 */
		}
		for (int k = 0; k < nsizes; k++) {
			uint64_t at[64];
			for (int t = 0; t < nthreads; t++)
				at[t] = *sweeps[t];
			phase_pages = sizes[k];
			fprintf(stderr, "phase %d %llu\n", sizes[k], (unsigned long long)now_ns());
			struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
			nanosleep(&ts, NULL);
			/* Every thread has swept the phase's pages at least
			 * once (its second sweep from now read the new size),
			 * however little CPU a loaded machine gave it: the
			 * output does not depend on timing. */
			for (int t = 0; t < nthreads; t++)
				while (*sweeps[t] < at[t] + 2) {
					struct timespec ms = {0, 1000000};
					nanosleep(&ms, NULL);
				}
		}
	}
	phase_pages = 0;
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	/* What it did, independent of timing: the phases and a check that
	 * every page of the largest phase was written at least once. */
	int untouched = 0;
	for (int i = 0; i < max; i++)
		untouched += buf[(size_t)i * PG] == 0;
	printf("done: %d rounds of %d phases, %d threads, %d pages never written\n", rounds, nsizes, nthreads, untouched);
	return 3;
}
