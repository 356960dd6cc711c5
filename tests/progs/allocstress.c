/* A stress of the allocation sites (engine/allocs.c): 4 threads malloc,
 * calloc, realloc, reallocarray, posix_memalign and free random sizes
 * (16 B .. 4 MiB, log-uniform) and touch them; they also mmap, mremap,
 * mmap MAP_FIXED over and munmap mappings of their own, and have libc
 * realloc their buffers (getline); one thread forks children that
 * allocate, free and exit; one sends SIGUSR1 to the workers at a high
 * rate (the handler only counts), to land in the captures.  At the end
 * every block is freed, so that no allocation of the st_ functions is
 * live.
 * With "forkidle": 64 MiB written after 400 ms, then a child forked
 * that leaves it untouched for 200 ms (its profile must show the
 * parent's block idle).
 * usage: allocstress [SECONDS | forkidle] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define SLOTS 64
#define MAPS 4

static volatile int stop;
static volatile sig_atomic_t hits;
static pthread_t workers[WORKERS];
static int bad;

static void on_usr1(int sig)
{
	(void)sig;
	hits++;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 16 B .. 4 MiB, log-uniform. */
static size_t rsize(uint64_t *s)
{
	unsigned sh = 4 + (unsigned)(next(s) % 19); /* 2^4 .. 2^22 */
	size_t lo = (size_t)1 << sh;
	return lo + (size_t)(next(s) % lo) / 2;
}

static void touch(char *p, size_t n, uint64_t *s)
{
	if (!p || !n)
		return;
	/* The first and last bytes, and a few pages between. */
	p[0] = 1;
	p[n - 1] = 2;
	for (int i = 0; i < 4 && n > 4096; i++)
		p[next(s) % n] = 3;
}

__attribute__((noinline)) static char *st_malloc(size_t n) { return malloc(n); }
__attribute__((noinline)) static char *st_calloc(size_t n) { return calloc(n / 16 + 1, 16); }
__attribute__((noinline)) static char *st_realloc(char *p, size_t n) { return realloc(p, n); }
__attribute__((noinline)) static char *st_reallocarray(char *p, size_t n) { return reallocarray(p, n / 8 + 1, 8); }
__attribute__((noinline)) static char *st_memalign(size_t n)
{
	void *p = NULL;
	return posix_memalign(&p, 64, n) ? NULL : p;
}
__attribute__((noinline)) static char *st_mmap(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* libc reallocs the program's buffer (getline): the sample must let go
 * of the old block. */
__attribute__((noinline)) static char *st_getline(char *buf, size_t *cap, uint64_t *s)
{
	static const char line[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
				   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
	char text[4096 + 2];
	size_t len = 64 + next(s) % 4000;
	for (size_t i = 0; i < len; i++)
		text[i] = line[i % 127];
	text[len] = '\n';
	text[len + 1] = 0;
	FILE *f = fmemopen(text, len + 1, "r");
	if (!f)
		return buf;
	if (getline(&buf, cap, f) != (ssize_t)len + 1)
		__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
	fclose(f);
	return buf;
}

static void *worker(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);
	char *p[SLOTS] = {0};
	size_t n[SLOTS] = {0};
	char *m[MAPS] = {0};
	size_t mn[MAPS] = {0};
	char *gl = NULL;
	size_t glcap = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned i = (unsigned)(next(&s) % SLOTS), op = (unsigned)(next(&s) % 100);
		size_t sz = rsize(&s);
		if (op < 30) {
			free(p[i]);
			p[i] = op < 20 ? st_malloc(sz) : op < 25 ? st_calloc(sz) : st_memalign(sz);
			n[i] = p[i] ? (op < 25 && op >= 20 ? (sz / 16 + 1) * 16 : sz) : 0;
		} else if (op < 50) {
			char *q = op < 45 ? st_realloc(p[i], sz) : st_reallocarray(p[i], sz);
			if (q) {
				p[i] = q;
				n[i] = op < 45 ? sz : (sz / 8 + 1) * 8;
			}
		} else if (op < 60) {
			free(p[i]);
			p[i] = NULL;
			n[i] = 0;
		} else if (op < 62) {
			/* realloc(p, 0): freed (or a minimal block, freed below). */
			char *q = st_realloc(p[i], 0);
			p[i] = q;
			n[i] = 0;
		} else if (op < 66) {
			unsigned j = i % MAPS;
			if (m[j])
				munmap(m[j], mn[j]);
			mn[j] = (sz + 4095) & ~(size_t)4095;
			m[j] = st_mmap(mn[j]);
			if (!m[j])
				mn[j] = 0;
		} else if (op < 68) {
			/* Grown by mremap, maybe moved. */
			unsigned j = i % MAPS;
			if (m[j]) {
				size_t nn = mn[j] * 2;
				void *q = mremap(m[j], mn[j], nn, MREMAP_MAYMOVE);
				if (q != MAP_FAILED) {
					m[j] = q;
					mn[j] = nn;
				}
			}
		} else if (op < 70) {
			/* A fresh mapping over the old one, at its address. */
			unsigned j = i % MAPS;
			if (m[j]) {
				void *q = mmap(m[j], mn[j], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
				if (q == MAP_FAILED)
					__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			}
		} else if (op < 72) {
			/* A buffer of the program's own, grown by libc. */
			if (!gl || next(&s) % 4 == 0) {
				free(gl);
				glcap = 16 + next(&s) % 2048;
				gl = st_malloc(glcap);
				if (!gl)
					glcap = 0;
			}
			gl = st_getline(gl, &glcap, &s);
		} else {
			touch(p[i], n[i], &s);
			unsigned j = i % MAPS;
			if (m[j])
				touch(m[j], mn[j], &s);
		}
	}
	for (int i = 0; i < SLOTS; i++)
		free(p[i]);
	for (int j = 0; j < MAPS; j++)
		if (m[j])
			munmap(m[j], mn[j]);
	free(gl);
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	long forks = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pid_t c = fork();
		if (c < 0) {
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			break;
		}
		if (c == 0) {
			uint64_t s = 12345 + (uint64_t)getpid();
			char *q[16];
			for (int r = 0; r < 50; r++) {
				for (int i = 0; i < 16; i++) {
					q[i] = st_malloc(rsize(&s) / 4 + 1);
					if (q[i])
						q[i][0] = 1;
				}
				for (int i = 0; i < 16; i++)
					free(q[i]);
			}
			_exit(7);
		}
		int st;
		while (waitpid(c, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 7) {
			fprintf(stderr, "allocstress: child status %#x\n", st);
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		}
		forks++;
	}
	return (void *)forks;
}

static void *signaller(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 20000};
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < WORKERS; i++)
			pthread_kill(workers[i], SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

__attribute__((noinline)) static char *st_inherited(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

static int forkidle(void)
{
	/* Allocated late (born in the parent's ~400th interval), and
	 * forked soon after: the child runs fewer intervals than that. */
	struct timespec before = {0, 400000000}, settle = {0, 20000000}, idle = {0, 200000000};
	nanosleep(&before, NULL);
	char *p = st_inherited(64 << 20);
	if (!p)
		return 2;
	nanosleep(&settle, NULL);
	pid_t c = fork();
	if (c == 0) {
		nanosleep(&idle, NULL);
		_exit(0);
	}
	int st = 0;
	waitpid(c, &st, 0);
	free(p);
	printf("forkidle: %s\n", WIFEXITED(st) && !WEXITSTATUS(st) ? "ok" : "BAD");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "forkidle"))
		return forkidle();
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	for (uintptr_t i = 0; i < WORKERS; i++)
		if (pthread_create(&workers[i], NULL, worker, (void *)i))
			return 2;
	pthread_t f, g;
	if (pthread_create(&f, NULL, forker, NULL) || pthread_create(&g, NULL, signaller, NULL))
		return 2;
	struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(g, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(workers[i], NULL);
	void *forks;
	pthread_join(f, &forks);
	/* A few intervals with nothing of ours live. */
	struct timespec settle = {0, 50000000};
	nanosleep(&settle, NULL);
	printf("allocstress: %d workers, forked %s, %s\n", WORKERS, (long)forks > 0 ? "children" : "none",
	       bad ? "BAD" : "ok");
	fprintf(stderr, "allocstress: %ld forks, %ld signals\n", (long)forks, (long)hits);
	return bad ? 1 : 0;
}
