/* Stack captures against the dynamic loader's list lock (issue 12): a
 * capture must take no lock that a program thread may hold.
 *   interlock N  N rounds of the classic deadlock, made deterministic: a
 *                thread inside a dl_iterate_phdr callback (the loader's
 *                list lock held) waits for a mutex that another thread
 *                holds while it touches a fresh page at an instruction that
 *                never touched one before (a new site: its stack is
 *                captured in the fault handler)
 *   churn DIR T  T threads touch fresh pages at 2048 distinct
 *                instructions, each under a mutex, while another thread
 *                dlopens and dlcloses DIR/libdldata1.so in a loop and,
 *                inside a dl_iterate_phdr callback, takes that mutex
 *                (DIR "-": no such thread, to time the captures alone)
 * Both print what they did (the same natively); a hang is the failure,
 * caught by a timeout outside the program.
 * usage: unwindlock interlock N | churn DIR THREADS */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define SITES 2048
#define PG 4096

/* One distinct store instruction per k (the immediates differ, so no two
 * cases can be merged): each is a new first-touch site. */
#define S1(k) \
	case (k): \
		__asm__ volatile("movl %1, (%0)" : : "r"(p), "i"(k) : "memory"); \
		break;
#define S4(k) S1(k) S1((k) + 1) S1((k) + 2) S1((k) + 3)
#define S16(k) S4(k) S4((k) + 4) S4((k) + 8) S4((k) + 12)
#define S64(k) S16(k) S16((k) + 16) S16((k) + 32) S16((k) + 48)
#define S256(k) S64(k) S64((k) + 64) S64((k) + 128) S64((k) + 192)
#define S1024(k) S256(k) S256((k) + 256) S256((k) + 512) S256((k) + 768)

static __attribute__((noinline)) void touch_site(int k, char *p)
{
	switch (k) {
		S1024(0)
		S1024(1024)
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* On a thread's stack, never tracked: pthread_mutex_lock's futex must not
 * be the subject here. */
static pthread_mutex_t *lock;
static char *pages; /* SITES pages from the heap: tracked and armed */
static volatile int stop, in_callback;

static int hold_callback(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	in_callback = 1;
	pthread_mutex_lock(lock); /* the loader's list lock is held here */
	pthread_mutex_unlock(lock);
	in_callback = 0;
	return 1;
}

static void *iterate_once(void *arg)
{
	(void)arg;
	dl_iterate_phdr(hold_callback, NULL);
	return NULL;
}

static int interlock(int rounds)
{
	for (int r = 0; r < rounds && r < SITES; r++) {
		sleep_ms(5); /* ticks arm the page */
		pthread_mutex_lock(lock);
		pthread_t t;
		pthread_create(&t, NULL, iterate_once, NULL);
		while (!in_callback)
			sleep_ms(1);
		sleep_ms(2); /* and it waits for the mutex now */
		touch_site(r, pages + (size_t)r * PG);
		pthread_mutex_unlock(lock);
		pthread_join(t, NULL);
	}
	printf("interlock: %d rounds\n", rounds);
	return 0;
}

static char libpath[4096];
static int nthreads;
static long loads;

static void *churner(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "dlopen %s: %s\n", libpath, dlerror());
			exit(3);
		}
		dl_iterate_phdr(hold_callback, NULL);
		dlclose(h);
		loads++;
	}
	return NULL;
}

static void *toucher(void *arg)
{
	long id = (long)arg;
	for (int k = (int)id; k < SITES; k += nthreads) {
		pthread_mutex_lock(lock);
		touch_site(k, pages + (size_t)k * PG);
		pthread_mutex_unlock(lock);
		if (k % 64 == (int)id)
			sleep_ms(1); /* let ticks come between */
	}
	return NULL;
}

static int churn(const char *dir, int threads)
{
	snprintf(libpath, sizeof libpath, "%s/libdldata1.so", dir);
	nthreads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
	pthread_t c, t[16];
	bool churning = strcmp(dir, "-") != 0;
	if (churning)
		pthread_create(&c, NULL, churner, NULL);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, toucher, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	stop = 1;
	if (churning)
		pthread_join(c, NULL);
	long sum = 0;
	for (int k = 0; k < SITES; k++)
		sum += *(int *)(pages + (size_t)k * PG);
	printf("churn: %d sites, checksum %ld, %s\n", SITES, sum,
	       !churning ? "no loader thread" : loads > 0 ? "loads ran" : "no loads");
	return 0;
}

int main(int argc, char **argv)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	lock = &m;
	pages = malloc((size_t)SITES * PG + PG);
	if (!pages)
		return 3;
	pages = (char *)(((unsigned long)pages + PG - 1) & ~(unsigned long)(PG - 1));
	sleep_ms(10); /* ticks arm them */
	if (argc >= 3 && !strcmp(argv[1], "interlock"))
		return interlock(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "churn"))
		return churn(argv[2], atoi(argv[3]));
	return 2;
}
