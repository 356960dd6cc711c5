/* Known code working sets under manual ticks (track.code): 64 functions,
 * each alone on its page (aligned to it, a few bytes long), run in phases
 * of K distinct ones between two wss_tick() calls.  A phase runs the
 * functions from a page-aligned runner of its own, so the pages each
 * interval runs are those K plus the same few of main's and the PLT's
 * (the baseline: the test measures it as the phase with K = 0).  Then:
 * two threads, each with its own page-aligned body, running 10 and 20 of
 * the functions; and a library loaded with dlopen (its 16 functions, also
 * one per page), run after it was seen by two ticks, then closed, then
 * loaded and run again.  Prints, per phase, "code SEQ PAGES-RUN" (the
 * functions' pages, without the baseline), "thread SEQ TID PAGES-RUN"
 * (the body and its functions), "lib SEQ PAGES-RUN" (the library's
 * functions and its runner's page: on top of an interval that runs only
 * the ticks, "idle SEQ").
 *
 * stress: four threads run the 64 functions ROUNDS times each while the
 * main thread loads the library, runs it and closes it ROUNDS / 100 times
 * (under a wall clock of 1 ms ticks in the test: arming, faults, ranges
 * leaving and coming back race); prints a checksum, the same natively.
 * peak: 30 intervals of 4 functions, one of all 64, 10 of 4 again: a peak
 * of the code series; prints "peak SEQ".
 * Where code runs that a fault must not stop (a review's findings), each
 * under 1 ms ticks in the test, printing a line the same natively:
 *   suspend   a SIGALRM handler on its own page, run from sigsuspend with
 *             every other signal blocked, 50 times
 *   patch     the program makes a function's page RWX and writes it (a
 *             hot patch) between calls, 20 times
 *   forkclose four threads run the functions while the main thread forks
 *             30 children that dlclose the library and exit
 *   retry     four threads run the library while another library is
 *             opened and closed N times (each dlclose takes the library's
 *             code out of tracking, racing the threads' runs of it)
 * usage: codepages LIBRARY
 *        codepages stress LIBRARY ROUNDS
 *        codepages peak
 *        codepages suspend | patch
 *        codepages forkclose LIBRARY
 *        codepages retry LIBRARY OTHER-LIBRARY N */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/wss.h"

#define PAGE_ALIGNED __attribute__((noinline, noipa, aligned(4096)))
#define F(n) static PAGE_ALIGNED int f##n(int x) { return x * 3 + n; }
#define F8(a) F(a##0) F(a##1) F(a##2) F(a##3) F(a##4) F(a##5) F(a##6) F(a##7)
F8(0) F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7)
#define R(n) f##n,
#define R8(a) R(a##0) R(a##1) R(a##2) R(a##3) R(a##4) R(a##5) R(a##6) R(a##7)
static int (*const fns[64])(int) = {R8(0) R8(1) R8(2) R8(3) R8(4) R8(5) R8(6) R8(7)};

static volatile int sink;
static unsigned seq = 1; /* the interval in progress */

static PAGE_ALIGNED void run(int from, int k)
{
	for (int i = from; i < from + k; i++)
		sink += fns[i](i);
}

static void tick(void)
{
	wss_tick();
	seq++;
}

static PAGE_ALIGNED void *body_a(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		sink += fns[i](i);
	printf("thread %u %ld 11\n", seq, (long)syscall(SYS_gettid));
	return NULL;
}

static PAGE_ALIGNED void *body_b(void *arg)
{
	(void)arg;
	for (int i = 10; i < 30; i++)
		sink += fns[i](i);
	printf("thread %u %ld 21\n", seq, (long)syscall(SYS_gettid));
	return NULL;
}

static void lib_phase(const char *path, const char *what)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "codepages: %s\n", dlerror());
		exit(1);
	}
	void (*all)(int) = (void (*)(int))dlsym(h, "codelib_run");
	if (!all)
		exit(1);
	/* Seen by the loader list at the next two ticks: tracked from then.
	 * The second interval runs nothing but the ticks. */
	tick();
	printf("idle %u\n", seq);
	tick();
	all(16);
	printf("lib %u 17 %s\n", seq, what);
	tick();
	dlclose(h);
	run(0, 0);
	printf("code %u 0\n", seq); /* after dlclose: none of the library's */
	tick();
}

static volatile int alarms;

static PAGE_ALIGNED void on_alarm(int s)
{
	(void)s;
	alarms++;
}

static int suspend(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigset_t blk, wait;
	sigemptyset(&blk);
	sigaddset(&blk, SIGALRM);
	sigprocmask(SIG_BLOCK, &blk, NULL);
	struct itimerval it = {{0, 5000}, {0, 5000}};
	setitimer(ITIMER_REAL, &it, NULL);
	sigfillset(&wait);
	sigdelset(&wait, SIGALRM);
	while (alarms < 50)
		sigsuspend(&wait);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("alarms %d\n", alarms >= 50);
	return 0;
}

static int patch(void)
{
	uintptr_t p = (uintptr_t)f10 & ~(uintptr_t)4095;
	if (mprotect((void *)p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC))
		return 1;
	int s = 0;
	for (int i = 0; i < 20; i++) {
		usleep(3000);
		volatile unsigned char *b = (volatile unsigned char *)p;
		b[0] = b[0]; /* a hot patch's write */
		s += fns[8](i);
	}
	printf("patched %d\n", s);
	return 0;
}

static volatile int stopping;

static void *spin_lib(void *arg)
{
	void (*fn)(int) = (void (*)(int))arg;
	while (!stopping)
		fn(16);
	return NULL;
}

static int retry(const char *lib, const char *other, int n)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*fn)(int) = h ? (void (*)(int))dlsym(h, "codelib_run") : NULL;
	if (!fn)
		return 1;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, spin_lib, (void *)fn))
			return 1;
	for (int i = 0; i < n; i++) {
		void *o = dlopen(other, RTLD_NOW);
		if (o)
			dlclose(o);
		usleep(300);
	}
	stopping = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	puts("retry ok");
	return 0;
}

static void *spin_fns(void *arg)
{
	(void)arg;
	long s = 0;
	while (!stopping)
		for (int i = 0; i < 64; i++)
			s += fns[i](i);
	return (void *)s;
}

static int forkclose(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	if (!h)
		return 1;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, spin_fns, NULL))
			return 1;
	int ok = 0;
	for (int i = 0; i < 30; i++) {
		usleep(2000);
		pid_t p = fork();
		if (p == 0) {
			dlclose(h);
			_exit(0);
		}
		int st;
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	stopping = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("children %d\n", ok);
	return 0;
}

static long rounds;

static void *spinner(void *arg)
{
	long id = (long)arg, s = 0;
	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < 64; i++)
			s += fns[(i + id * 16) & 63]((int)r);
	return (void *)s;
}

static int stress(const char *path)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, spinner, (void *)i))
			return 1;
	for (long r = 0; r < rounds / 100; r++) {
		void *h = dlopen(path, RTLD_NOW);
		void (*all)(int) = h ? (void (*)(int))dlsym(h, "codelib_run") : NULL;
		if (!all)
			return 1;
		all((int)(r % 17));
		dlclose(h);
	}
	long sum = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("stress %ld\n", sum);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "suspend"))
		return suspend();
	if (argc == 2 && !strcmp(argv[1], "patch"))
		return patch();
	if (argc == 3 && !strcmp(argv[1], "forkclose"))
		return forkclose(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "retry"))
		return retry(argv[2], argv[3], atoi(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "peak")) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		tick();
		for (int i = 0; i < 41; i++) {
			run(0, i == 30 ? 64 : 4);
			if (i == 30)
				printf("peak %u\n", seq);
			tick();
		}
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "stress")) {
		rounds = atol(argv[3]);
		return stress(argv[2]);
	}
	if (argc != 2)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	tick(); /* start-up's pages end here */
	static const int ks[] = {0, 8, 32, 16, 64, 4, 0};
	for (unsigned i = 0; i < sizeof ks / sizeof *ks; i++) {
		run(0, ks[i]);
		printf("code %u %d\n", seq, ks[i]);
		tick();
	}
	pthread_t a, b;
	if (pthread_create(&a, NULL, body_a, NULL) || pthread_join(a, NULL) ||
	    pthread_create(&b, NULL, body_b, NULL) || pthread_join(b, NULL))
		return 1;
	tick();
	lib_phase(argv[1], "first");
	lib_phase(argv[1], "again");
	return 0;
}
