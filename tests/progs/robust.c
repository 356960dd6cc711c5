/* Programs that the kernel and the C library meet on tracked memory, each
 * printing "ok NAME" when it survives and behaves:
 *   altstack-heap, altstack-bss  a signal stack in the heap / in .bss, with
 *                                signals delivered on it all the while
 *   coro        makecontext/swapcontext on a malloc'd stack
 *   efault      read(2) into thousands of small tracked mappings while
 *               ticks arm them (no call may fail with EFAULT)
 *   rearm       read(2) into a page while another thread mprotects it
 *   condvar     threads waiting on a condition variable in the heap and a
 *               mutex in .bss, with ticks in between (futex waits on armed
 *               words must not fail)
 *   cancel      threads cancelled inside pthread_cond_wait
 * usage: robust TEST [SECONDS] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static int secs = 2;
static char bss_stack[65536];
static volatile sig_atomic_t got;

static int until(time_t end) { return time(NULL) < end; }

static void on_usr1(int s)
{
	(void)s;
	got++;
}

static int altstack(int heap)
{
	stack_t ss = {.ss_size = sizeof bss_stack};
	ss.ss_sp = heap ? malloc(ss.ss_size) : bss_stack;
	if (sigaltstack(&ss, NULL))
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	char *buf = malloc(1 << 20);
	int n = 0;
	for (time_t end = time(NULL) + secs; until(end); n++) {
		memset(buf, n, 1 << 20);
		raise(SIGUSR1);
		usleep(2000);
	}
	return got == n ? 0 : 1;
}

static ucontext_t main_ctx, co_ctx;

static void co(void)
{
	for (;;) {
		volatile char big[16384];
		memset((char *)big, 1, sizeof big);
		swapcontext(&co_ctx, &main_ctx);
	}
}

static int coro(void)
{
	size_t sz = 1 << 20;
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = malloc(sz);
	co_ctx.uc_stack.ss_size = sz;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co, 0);
	for (time_t end = time(NULL) + secs; until(end);) {
		swapcontext(&main_ctx, &co_ctx);
		usleep(2000);
	}
	return 0;
}

static int efault(void)
{
	enum { N = 4000 };
	static char *r[N];
	for (int i = 0; i < N; i++)
		if ((r[i] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			return 1;
	int fd = open("/dev/zero", O_RDONLY);
	long bad = 0;
	unsigned s = 1;
	for (time_t end = time(NULL) + secs; until(end);)
		for (int k = 0; k < 1000; k++) {
			s = s * 1103515245 + 12345;
			char *p = r[(s >> 8) % N];
			p[100] = 1;
			if (read(fd, p, 64) < 0)
				bad++;
		}
	return bad != 0;
}

static char *rearm_page;
static volatile int stop;

static void *reprotect(void *a)
{
	(void)a;
	while (!stop)
		mprotect(rearm_page, 4096, PROT_READ | PROT_WRITE);
	return NULL;
}

static int rearm(void)
{
	rearm_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/dev/zero", O_RDONLY);
	pthread_t t;
	pthread_create(&t, NULL, reprotect, NULL);
	long bad = 0;
	for (time_t end = time(NULL) + secs; until(end);)
		for (int i = 0; i < 1000; i++)
			if (read(fd, rearm_page, 64) < 0)
				bad++;
	stop = 1;
	pthread_join(t, NULL);
	return bad != 0;
}

static pthread_mutex_t bss_mutex = PTHREAD_MUTEX_INITIALIZER;
struct box {
	pthread_cond_t c;
	long turn, rounds;
};
static struct box *box;

/* Two threads take turns: each waits for its parity of box->turn. */
static void *ping(void *a)
{
	long me = (long)a;
	pthread_mutex_lock(&bss_mutex);
	while (box->rounds > 0) {
		while (box->turn % 2 != me && box->rounds > 0)
			pthread_cond_wait(&box->c, &bss_mutex);
		if (box->rounds > 0) {
			box->rounds--;
			box->turn++;
		}
		pthread_cond_broadcast(&box->c);
	}
	pthread_mutex_unlock(&bss_mutex);
	return NULL;
}

static int condvar(void)
{
	box = calloc(1, sizeof *box);
	pthread_cond_init(&box->c, NULL);
	box->rounds = 1L << 40; /* until time is up */
	pthread_t t1, t2;
	pthread_create(&t1, NULL, ping, (void *)0L);
	pthread_create(&t2, NULL, ping, (void *)1L);
	struct timespec ts = {secs, 0};
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&bss_mutex);
	long turns = box->turn;
	box->rounds = 0;
	pthread_cond_broadcast(&box->c);
	pthread_mutex_unlock(&bss_mutex);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return turns < 1000;
}

struct shared {
	pthread_mutex_t m;
	pthread_cond_t c;
} *sh;

static void unlock(void *m) { pthread_mutex_unlock(m); }

static void *waiter(void *a)
{
	(void)a;
	pthread_mutex_lock(&sh->m);
	pthread_cleanup_push(unlock, &sh->m);
	for (;;)
		pthread_cond_wait(&sh->c, &sh->m);
	pthread_cleanup_pop(0);
	return NULL;
}

static int cancel(void)
{
	sh = calloc(1, sizeof *sh);
	pthread_mutex_init(&sh->m, NULL);
	pthread_cond_init(&sh->c, NULL);
	for (int i = 0; i < 8; i++) {
		pthread_t t;
		pthread_create(&t, NULL, waiter, NULL);
		usleep(20000);
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	/* idle: nothing touches sh any more */
	usleep(300000);
	return 0;
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "";
	if (argc > 2)
		secs = atoi(argv[2]);
	int r = !strcmp(t, "altstack-heap") ? altstack(1)
		: !strcmp(t, "altstack-bss") ? altstack(0)
		: !strcmp(t, "coro")         ? coro()
		: !strcmp(t, "efault")       ? efault()
		: !strcmp(t, "rearm")        ? rearm()
		: !strcmp(t, "condvar")      ? condvar()
		: !strcmp(t, "cancel")       ? cancel()
					     : 2;
	if (r == 0)
		printf("ok %s\n", t);
	return r;
}
