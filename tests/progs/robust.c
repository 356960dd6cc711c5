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
 *   sync        four threads contend for rwlocks, semaphores, barriers,
 *               mutexes and condition variables (pthread and C11) in the
 *               heap and in .bss; every call must succeed, and the counters
 *               they protect must add up
 *   ioctl       ioctl(2) into heap pages armed again between calls: FIONREAD,
 *               TIOCSWINSZ/TIOCGWINSZ and TIOCGPTN on a pty, and an unknown
 *               request (ENOTTY); each result is checked
 *   paths       path calls (the mkstemp family, mkdtemp, the stat family and
 *               its 64 names, statfs/statvfs, chmod, chown, utimensat,
 *               rename, remove) with every string and result buffer alone
 *               on a tracked page, armed again before each call; and NULL
 *               paths, which must fail with EFAULT
 * usage: robust TEST [SECONDS] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <threads.h>
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
	/* Progress, not speed (that is bench/'s): a starved run (make soak at
	 * nice 19 beside other work) made 200-900 turns where a free one makes
	 * tens of thousands, and counted as a failure. */
	return turns < 10;
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

/* sync: the objects, half in one heap block, half in .bss. */
enum { NT = 4 };
struct syncs {
	pthread_rwlock_t rw;
	pthread_barrier_t bar;
	pthread_mutex_t m, tm;
	pthread_cond_t c;
	sem_t sem;
	mtx_t mtx;
	cnd_t cnd;
	struct timespec far; /* a deadline nobody reaches */
	long rw_n, tm_n, mtx_n; /* protected by rw, tm, mtx */
	long tick, left;     /* protected by m (pthread phase) or mtx (C11) */
	int done;
};
static struct syncs *sy;
static pthread_rwlock_t bss_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t bss_tm = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bss_bar;
static mtx_t bss_mtx;
static long bss_rw_n, bss_tm_n, bss_mtx_n;
static long writes[2], locks[2], mlocks[2]; /* what the counters must add up to */
static long sync_bad;
static time_t sync_end;

/* Count a failed call (r is an error number, or a C11 result) and report
 * the first few. */
static void check(int r, const char *what, int line)
{
	if (r && __atomic_fetch_add(&sync_bad, 1, __ATOMIC_RELAXED) < 5)
		fprintf(stderr, "robust: line %d: %s: %d (%s)\n", line, what, r, strerror(r));
}
#define CHECK(call) check((call), #call, __LINE__)
#define CHECK_SEM(call) check((call) ? errno : 0, #call, __LINE__)
#define CHECK_C11(call) check((call) != thrd_success ? EINVAL : 0, #call, __LINE__)

static void add(long *total, long n) { __atomic_fetch_add(total, n, __ATOMIC_RELAXED); }

/* Rounds separated by two barriers (the heap's, then the .bss one): the
 * serial thread of the first decides whether time is up.  In a round, each
 * thread takes the rwlocks in all four ways, a semaphore with two permits,
 * a timed mutex, and then passes a condition variable round: it bumps the
 * tick and waits until another thread has bumped it, or one has left. */
static void *sync_worker(void *a)
{
	long me = (long)a, w[2] = {0, 0}, l[2] = {0, 0};
	for (;;) {
		int r = pthread_barrier_wait(&sy->bar);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
			sy->done = time(NULL) >= sync_end;
			sy->left = NT;
		} else
			CHECK(r);
		r = pthread_barrier_wait(&bss_bar);
		if (r != PTHREAD_BARRIER_SERIAL_THREAD)
			CHECK(r);
		if (sy->done)
			break;
		for (int k = 0; k < 50; k++) {
			int h = k % 2;
			pthread_rwlock_t *rw = h ? &sy->rw : &bss_rw;
			long *n = h ? &sy->rw_n : &bss_rw_n;
			switch ((k / 2 + me) % 4) {
			case 0: CHECK(pthread_rwlock_rdlock(rw)); break;
			case 1: CHECK(pthread_rwlock_timedrdlock(rw, &sy->far)); break;
			case 2: CHECK(pthread_rwlock_wrlock(rw)); ++*n; w[h]++; break;
			case 3: CHECK(pthread_rwlock_timedwrlock(rw, &sy->far)); ++*n; w[h]++; break;
			}
			CHECK(pthread_rwlock_unlock(rw));
			CHECK_SEM(h ? sem_timedwait(&sy->sem, &sy->far) : sem_wait(&sy->sem));
			CHECK_SEM(sem_post(&sy->sem));
			pthread_mutex_t *m = h ? &sy->tm : &bss_tm;
			CHECK(pthread_mutex_timedlock(m, &sy->far));
			++*(h ? &sy->tm_n : &bss_tm_n);
			l[h]++;
			CHECK(pthread_mutex_unlock(m));
		}
		CHECK(pthread_mutex_timedlock(&sy->m, &sy->far));
		for (int k = 0; k < 20; k++) {
			long mine = ++sy->tick;
			CHECK(pthread_cond_broadcast(&sy->c));
			while (sy->tick == mine && sy->left == NT)
				CHECK(pthread_cond_timedwait(&sy->c, &sy->m, &sy->far));
		}
		sy->left--;
		CHECK(pthread_cond_broadcast(&sy->c));
		CHECK(pthread_mutex_unlock(&sy->m));
	}
	for (int h = 0; h < 2; h++) {
		add(&writes[h], w[h]);
		add(&locks[h], l[h]);
	}
	return NULL;
}

/* The same with C11 mutexes and condition variables, until time is up. */
static int c11_worker(void *a)
{
	long me = (long)a, l[2] = {0, 0};
	while (time(NULL) < sync_end) {
		for (int k = 0; k < 50; k++) {
			int h = k % 2;
			mtx_t *m = h ? &sy->mtx : &bss_mtx;
			if ((k / 2 + me) % 2)
				CHECK_C11(mtx_timedlock(m, &sy->far));
			else
				CHECK_C11(mtx_lock(m));
			++*(h ? &sy->mtx_n : &bss_mtx_n);
			l[h]++;
			CHECK_C11(mtx_unlock(m));
		}
		CHECK_C11(mtx_lock(&sy->mtx));
		for (int k = 0; k < 20; k++) {
			long mine = ++sy->tick;
			sy->mtx_n++;
			l[1]++;
			CHECK_C11(cnd_broadcast(&sy->cnd));
			while (sy->tick == mine && sy->left == NT)
				CHECK_C11(k % 2 ? cnd_timedwait(&sy->cnd, &sy->mtx, &sy->far) : cnd_wait(&sy->cnd, &sy->mtx));
		}
		CHECK_C11(mtx_unlock(&sy->mtx));
	}
	CHECK_C11(mtx_lock(&sy->mtx));
	sy->left--;
	CHECK_C11(cnd_broadcast(&sy->cnd));
	CHECK_C11(mtx_unlock(&sy->mtx));
	for (int h = 0; h < 2; h++)
		add(&mlocks[h], l[h]);
	return 0;
}

static int sync_test(void)
{
	sy = calloc(1, sizeof *sy);
	clock_gettime(CLOCK_REALTIME, &sy->far);
	sy->far.tv_sec += 3600;
	CHECK(pthread_rwlock_init(&sy->rw, NULL));
	CHECK(pthread_barrier_init(&sy->bar, NULL, NT));
	CHECK(pthread_barrier_init(&bss_bar, NULL, NT));
	CHECK(pthread_mutex_init(&sy->m, NULL));
	CHECK(pthread_mutex_init(&sy->tm, NULL));
	CHECK(pthread_cond_init(&sy->c, NULL));
	CHECK_SEM(sem_init(&sy->sem, 0, 2));
	CHECK_C11(mtx_init(&sy->mtx, mtx_timed));
	CHECK_C11(mtx_init(&bss_mtx, mtx_timed));
	CHECK_C11(cnd_init(&sy->cnd));
	/* pthreads made with attributes, their ids and results in the heap;
	 * meanwhile the main thread waits for timeouts that must expire. */
	pthread_attr_t *at = malloc(sizeof *at);
	pthread_t *t = malloc(NT * sizeof *t);
	void **res = malloc(NT * sizeof *res);
	struct timespec *soon = malloc(sizeof *soon);
	sem_t *empty = malloc(sizeof *empty);
	CHECK_SEM(sem_init(empty, 0, 0));
	CHECK(pthread_attr_init(at));
	CHECK(pthread_attr_setstacksize(at, 256 * 1024));
	CHECK(pthread_attr_setdetachstate(at, PTHREAD_CREATE_JOINABLE));
	sync_end = time(NULL) + secs;
	for (long i = 0; i < NT; i++)
		CHECK(pthread_create(&t[i], at, sync_worker, (void *)i));
	int timeouts = 0, waits = 0;
	while (time(NULL) < sync_end) {
		clock_gettime(CLOCK_REALTIME, soon);
		soon->tv_nsec += 1000000;
		if (soon->tv_nsec >= 1000000000) {
			soon->tv_sec++;
			soon->tv_nsec -= 1000000000;
		}
		waits++;
		if (sem_timedwait(empty, soon) == -1 && errno == ETIMEDOUT)
			timeouts++;
		usleep(1000);
	}
	for (int i = 0; i < NT; i++) {
		res[i] = t;
		CHECK(pthread_join(t[i], &res[i]));
		CHECK(res[i] ? EINVAL : 0);
	}
	if (timeouts != waits)
		fprintf(stderr, "robust: %d of %d sem_timedwait on an empty semaphore timed out\n", timeouts, waits);
	/* C11 threads, their ids and results in the heap. */
	thrd_t *ct = malloc(NT * sizeof *ct);
	int *cres = malloc(NT * sizeof *cres);
	sy->left = NT;
	sync_end = time(NULL) + (secs + 1) / 2;
	for (long i = 0; i < NT; i++)
		CHECK_C11(thrd_create(&ct[i], c11_worker, (void *)i));
	for (int i = 0; i < NT; i++) {
		cres[i] = -1;
		CHECK_C11(thrd_join(ct[i], &cres[i]));
		CHECK(cres[i]);
	}
	int sums = sy->rw_n == writes[1] && bss_rw_n == writes[0] && sy->tm_n == locks[1] && bss_tm_n == locks[0] &&
		   sy->mtx_n == mlocks[1] && bss_mtx_n == mlocks[0] && sy->rw_n > 0 && sy->mtx_n > 0;
	if (!sums)
		fprintf(stderr, "robust: counters %ld/%ld %ld/%ld %ld/%ld %ld/%ld %ld/%ld %ld/%ld\n", sy->rw_n, writes[1],
			bss_rw_n, writes[0], sy->tm_n, locks[1], bss_tm_n, locks[0], sy->mtx_n, mlocks[1], bss_mtx_n,
			mlocks[0]);
	return sync_bad != 0 || timeouts != waits || !sums;
}

/* A page of its own in the heap, so that nothing else opens it. */
static void *page_alone(void) { return aligned_alloc(4096, 4096); }

static long ioctl_bad;
static void ioctl_fail(const char *what, int r, long val, long want)
{
	if (ioctl_bad++ < 5)
		fprintf(stderr, "robust: %s: returned %d (%s), got %ld, want %ld\n", what, r, r ? strerror(errno) : "ok",
			val, want);
}

static int ioctl_test(void)
{
	int p[2], m = posix_openpt(O_RDWR | O_NOCTTY), s = -1;
	if (pipe(p) || m < 0 || grantpt(m) || unlockpt(m) || (s = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0) {
		perror("robust: ioctl: setup");
		return 1;
	}
	unsigned ptn = (unsigned)atoi(ptsname(m) + strlen("/dev/pts/"));
	int *avail = page_alone();
	unsigned *num = page_alone();
	struct winsize *set = page_alone(), *get = page_alone();
	char buf[64];
	memset(buf, 'x', sizeof buf);
	long calls = 0;
	struct timespec nap = {0, 2000000};
	for (time_t end = time(NULL) + secs; until(end); calls++) {
		int n = (int)(calls % 50) + 1, r;
		if (write(p[1], buf, (size_t)n) != n)
			return 1;
		nanosleep(&nap, NULL);
		errno = 4242;
		if ((r = ioctl(p[0], FIONREAD, avail)) || *avail != n || errno != 4242)
			ioctl_fail("FIONREAD", r, r ? -1 : *avail, n);
		if (read(p[0], buf, (size_t)n) != n)
			return 1;
		set->ws_row = (unsigned short)(calls % 200 + 1);
		set->ws_col = 80;
		nanosleep(&nap, NULL);
		if ((r = ioctl(m, TIOCSWINSZ, set)))
			ioctl_fail("TIOCSWINSZ", r, -1, 0);
		nanosleep(&nap, NULL);
		if ((r = ioctl(s, TIOCGWINSZ, get)) || get->ws_row != set->ws_row || get->ws_col != 80)
			ioctl_fail("TIOCGWINSZ", r, r ? -1 : get->ws_row, set->ws_row);
		nanosleep(&nap, NULL);
		if ((r = ioctl(m, TIOCGPTN, num)) || *num != ptn)
			ioctl_fail("TIOCGPTN", r, r ? -1 : (long)*num, ptn);
		/* Unknown to the wrapper: passed through, the kernel's error. */
		errno = 0;
		if ((r = ioctl(p[0], _IO('W', 0xee), avail)) != -1 || errno != ENOTTY)
			ioctl_fail("unknown request", r, errno, ENOTTY);
	}
	if (ioctl_bad || calls < 1)
		fprintf(stderr, "robust: %ld of %ld ioctl calls failed\n", ioctl_bad, 5 * calls);
	return ioctl_bad != 0 || calls < 1;
}

/* A page of its own (tracked anonymous memory) holding s. */
static char *page_of(const char *s)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : strcpy(p, s);
}

/* Sleep past a few ticks (1 ms interval), so that every page is armed again
 * when the next call reads it. */
static void nap(void)
{
	struct timespec t = {0, 3 * 1000 * 1000};
	nanosleep(&t, NULL);
}

static long path_bad;
#define PATH_CALL(call) \
	do { \
		nap(); \
		if ((call) < 0) { \
			path_bad++; \
			fprintf(stderr, "%s: %s\n", #call, strerror(errno)); \
		} \
	} while (0)

static int paths(void)
{
	char *dir = page_of("/tmp/wss-paths-XXXXXX");
	if (!dir || !mkdtemp(dir))
		return 1;
	char *a = page_of(dir), *b = page_of(dir), *t = page_of(""), *d = page_of("");
	struct stat64 *st = (void *)page_of("");
	struct statfs64 *sf = (void *)page_of("");
	struct statvfs64 *sv = (void *)page_of("");
	struct timespec *ts = (void *)page_of("");
	if (!a || !b || !t || !d || !st || !sf || !sv || !ts)
		return 1;
	strcat(a, "/a");
	strcat(b, "/b");
	/* NULL strings fail with EFAULT, as without us (Rust probes statx
	 * that way). */
	const char *volatile nul = NULL;
	struct statx *volatile nulx = NULL;
	errno = 0;
	if (statx(0, nul, 0, STATX_ALL, nulx) != -1 || errno != EFAULT || stat(nul, (struct stat *)st) != -1 ||
	    errno != EFAULT || open(nul, O_RDONLY) != -1 || errno != EFAULT || stat64(nul, st) != -1 || errno != EFAULT) {
		fprintf(stderr, "a NULL path: %s\n", strerror(errno));
		return 1;
	}
	for (time_t end = time(NULL) + secs; until(end);) {
		int fd;
		sprintf(t, "%s/t-XXXXXX.tmp", dir);
		PATH_CALL(fd = mkstemps(t, 4));
		close(fd);
		PATH_CALL(rename(t, a));
		PATH_CALL(stat64(a, st));
		PATH_CALL(lstat64(a, st));
		PATH_CALL(stat(a, (struct stat *)st));
		PATH_CALL(chmod(a, 0600));
		PATH_CALL(chown(a, getuid(), getgid()));
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
		PATH_CALL(utimensat(AT_FDCWD, a, ts, 0));
		PATH_CALL(statfs64(a, sf));
		PATH_CALL(statvfs64(a, sv));
		PATH_CALL(rename(a, b));
		PATH_CALL(remove(b));
		sprintf(t, "%s/u-XXXXXX", dir);
		PATH_CALL(fd = mkstemp64(t));
		close(fd);
		PATH_CALL(unlink(t));
		sprintf(d, "%s/d-XXXXXX", dir);
		PATH_CALL(mkdtemp(d) ? 0 : -1);
		PATH_CALL(rmdir(d));
	}
	return rmdir(dir) || path_bad;
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
		: !strcmp(t, "sync")         ? sync_test()
		: !strcmp(t, "ioctl")        ? ioctl_test()
		: !strcmp(t, "paths")        ? paths()
					     : 2;
	if (r == 0)
		printf("ok %s\n", t);
	return r;
}
