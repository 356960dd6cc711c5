/* Signals, exit paths and threads of a real program, which must behave
 * exactly as they do without the preload.  The data each mode touches is in
 * tracked memory (heap, anonymous mappings, .bss), and each prints only
 * lines that do not depend on timing, so that lifecycle.sh can compare the
 * output and exit status of a run under the preload with a native one.
 * Signals:
 *   altstack     a SIGSEGV handler (SA_ONSTACK|SA_SIGINFO) on a malloc'd
 *                alternate stack recovers with siglongjmp from faults on a
 *                page the program made PROT_NONE itself
 *   resethand    SA_RESETHAND: the first fault is handled, the second kills
 *   nodefer      SA_NODEFER: the handler faults again (depth 2), recovers
 *   jmploop      two threads recover with siglongjmp thousands of times
 *                between touches of armed pages
 *   blockmask    threads that block SIGSEGV, then every signal, touch
 *                armed pages
 *   eintr        a pipe read into the heap interrupted by SIGALRM: EINTR
 *                without SA_RESTART, restarted with it
 *   async        SIGTERM, SIGINT, SIGUSR1 sent to the process: handled by
 *                the main thread, the only one of ours not blocking them
 *   sigwait      the same signals, taken by a thread in sigwait
 *   syncwait     SIGBUS, SIGFPE, SIGILL, SIGTRAP sent to the process (not
 *                raised by a fault), taken by a thread in sigwait
 *   sigchld      SIGCHLD from children's exits reaches the main thread
 *   blocked-exec execs blocked-child with SIGSEGV blocked (a raw system
 *                call, as a parent not under the preload would do), which
 *                reads its mask back and touches memory
 * Exit paths:
 *   exit3, return5, _exit4, abort, term (raise(SIGTERM))
 *   thread-exit  exit(6) from a thread while others touch memory
 *   main-pthread-exit  main calls pthread_exit; the process ends when the
 *                other threads have finished
 *   main-returns main returns while threads touch memory
 *   atexit       stdout buffered in the heap and flushed only at exit, an
 *                atexit handler, a destructor, and an atexit handler the
 *                destructor registers (it runs after every destructor)
 * Exits without exit handlers (exits.sh):
 *   _Exit5, exit-group6 (syscall(SYS_exit_group)), sys-exit11 (the main
 *                thread, alone, leaves with syscall(SYS_exit, 11))
 *   _exit-threads  _exit(7) while three threads touch memory
 *   raw-exit-group3  exit_group(3) made with the program's own instruction,
 *                as Go's runtime does: no wrapper sees it, no summary
 *                (cli.sh: wss run says why in one line)
 *   _exit-alarm    a SIGALRM handler calls _exit(8), while threads touch
 *                memory and main maps, touches and unmaps
 *   _exit-sigbus   SIGBUS sent to main while it maps, touches and unmaps
 *                (its mapping calls hold wss's lock, and SIGBUS stays open
 *                there); the handler calls _exit(9)
 *   atexit-_exit   the atexit handler a destructor registers, after every
 *                destructor, touches memory and calls _exit(10)
 *   fork-_exit     a vfork child that calls _exit(3) at once, a forked
 *                child that touches memory for 300 ms, then _exit(4), and
 *                one that calls _exit(5) at once
 * Threads:
 *   churn        thousands of short threads, joined and detached, with heap
 *                and TLS data; then, once they are all gone, an idle second
 *                in which main alone touches memory
 *   tls          static TLS arrays kept apart by threads running together
 * usage: lifecycle MODE */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define WAIT_MS 20000 /* how long a signal may take to arrive before it counts as lost */

static char bss_data[64 * PAGE];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static char *map(size_t pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(99);
	}
	memset(p, 1, pages * PAGE);
	return p;
}

/* One write per page: every page of an armed range faults once. */
static unsigned long touch(char *p, size_t len, unsigned seed)
{
	unsigned long sum = 0;
	for (size_t i = 0; i < len; i += PAGE) {
		p[i] = (char)(p[i] + seed);
		sum += (unsigned char)p[i];
	}
	return sum;
}

/* ---- the program's own SIGSEGV handling ------------------------------- */

static sigjmp_buf jb;
static volatile sig_atomic_t hits, depth, max_depth, on_alt, addr_ok;
static char *own;          /* a tracked mapping; page 4 is the program's PROT_NONE page */
static char *alt_lo, *alt_hi;
static char *heap_scratch; /* touched from handlers */

#define OWN_PAGE (own + 4 * PAGE)

static void set_segv(void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigaction(SIGSEGV, &sa, NULL);
}

static void own_setup(void)
{
	own = map(16);
	heap_scratch = malloc(16 * PAGE);
	memset(heap_scratch, 0, 16 * PAGE);
	mprotect(OWN_PAGE, PAGE, PROT_NONE);
}

static void on_segv_alt(int sig, siginfo_t *si, void *uc)
{
	char here;
	(void)sig;
	(void)uc;
	hits++;
	if (&here >= alt_lo && &here < alt_hi)
		on_alt++;
	if (si->si_addr == OWN_PAGE + 8)
		addr_ok++;
	touch(heap_scratch, 16 * PAGE, 1); /* armed pages, from the alternate stack */
	siglongjmp(jb, 1);
}

static int altstack(void)
{
	own_setup();
	size_t sz = 64 * 1024;
	stack_t ss = {.ss_sp = malloc(sz), .ss_size = sz};
	alt_lo = ss.ss_sp;
	alt_hi = alt_lo + sz;
	if (sigaltstack(&ss, NULL))
		return 1;
	set_segv(on_segv_alt, SA_ONSTACK);
	unsigned long sum = 0;
	for (int i = 0; i < 200; i++) {
		sum += touch(own, 4 * PAGE, 1);
		if (sigsetjmp(jb, 1) == 0) {
			OWN_PAGE[8] = 1;
			printf("no fault\n");
		}
		if (i % 20 == 0)
			sleep_ms(2);
	}
	stack_t back;
	sigaltstack(NULL, &back);
	printf("altstack hits %d on-alt-stack %d addr-ok %d sum %lu\n", (int)hits, (int)on_alt, (int)addr_ok, sum);
	printf("altstack readback %s\n", back.ss_sp == alt_lo && back.ss_size == sz && !(back.ss_flags & SS_ONSTACK) ? "ok" : "wrong");
	return 0;
}

static void on_segv_jump(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	hits++;
	siglongjmp(jb, 1);
}

static int resethand(void)
{
	own_setup();
	set_segv(on_segv_jump, SA_RESETHAND);
	if (sigsetjmp(jb, 1) == 0)
		OWN_PAGE[0] = 1;
	struct sigaction back;
	sigaction(SIGSEGV, NULL, &back);
	printf("resethand hits %d, now %s\n", (int)hits, back.sa_handler == SIG_DFL ? "SIG_DFL" : "not SIG_DFL");
	fflush(stdout);
	touch(own, 4 * PAGE, 2);
	OWN_PAGE[0] = 2; /* the default action: killed by SIGSEGV */
	printf("survived\n");
	return 0;
}

static void on_segv_nested(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int d = ++depth;
	if (d > max_depth)
		max_depth = d;
	if (si->si_addr == OWN_PAGE + 16)
		addr_ok++;
	heap_scratch[d * PAGE] = (char)d;
	if (d == 1)
		OWN_PAGE[16] = 1; /* faults again, inside the handler */
	siglongjmp(jb, 1);
}

static int nodefer(void)
{
	own_setup();
	set_segv(on_segv_nested, SA_NODEFER);
	int rounds = 0;
	for (int i = 0; i < 20; i++) {
		depth = 0;
		touch(own, 4 * PAGE, 1);
		if (sigsetjmp(jb, 1) == 0)
			OWN_PAGE[16] = 1;
		else
			rounds++;
		sleep_ms(1);
	}
	printf("nodefer rounds %d max-depth %d addr-ok %d\n", rounds, (int)max_depth, (int)addr_ok);
	return 0;
}

/* ---- siglongjmp in a loop, in two threads ------------------------------ */

static __thread sigjmp_buf tjb;
static __thread int tjumps;

static void on_segv_tjump(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	tjumps++;
	siglongjmp(tjb, 1);
}

#define JMP_ROUNDS 20000

/* One fault on the program's own page, recovered from by the handler. */
static int fault_once(char *addr)
{
	if (sigsetjmp(tjb, 1))
		return 1;
	*(volatile char *)addr = 1;
	return 0;
}

static void *jumper(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	size_t len = 256 * PAGE;
	char *heap = malloc(len);
	memset(heap, 0, len);
	unsigned long sum = 0;
	for (int i = 0; i < JMP_ROUNDS; i++) {
		heap[(size_t)(i % 256) * PAGE] += (char)seed;
		bss_data[(size_t)(i % 64) * PAGE + seed] += 1;
		fault_once(OWN_PAGE + seed);
		sum += (unsigned char)heap[(size_t)(i % 256) * PAGE];
	}
	free(heap);
	return (void *)(uintptr_t)(sum + (unsigned long)tjumps * 1000000UL);
}

static int jmploop(void)
{
	own_setup();
	set_segv(on_segv_tjump, 0);
	pthread_t t;
	pthread_create(&t, NULL, jumper, (void *)2);
	void *a = jumper((void *)1), *b;
	pthread_join(t, &b);
	printf("jmploop %lu %lu\n", (unsigned long)(uintptr_t)a, (unsigned long)(uintptr_t)b);
	return 0;
}

/* ---- a blocked SIGSEGV ------------------------------------------------- */

static char *shared_heap;
#define SHARED_PAGES 512

static unsigned long touch_all(unsigned seed, int passes)
{
	unsigned long sum = 0;
	for (int i = 0; i < passes; i++) {
		sum += touch(shared_heap + (size_t)seed * SHARED_PAGES / 4 * PAGE, SHARED_PAGES / 4 * PAGE, seed);
		sum += touch(own + (size_t)seed * 4 * PAGE, 4 * PAGE, seed);
		sum += touch(bss_data + (size_t)seed * 16 * PAGE, 16 * PAGE, seed);
		sleep_ms(1);
	}
	return sum;
}

static void *blocker(void *arg)
{
	int all = arg != NULL;
	sigset_t s, o;
	if (all)
		sigfillset(&s);
	else {
		sigemptyset(&s);
		sigaddset(&s, SIGSEGV);
	}
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &o);
	unsigned long sum = touch_all(all ? 2 : 1, 200);
	flockfile(stdout);
	printf("blockmask thread %s: SIGSEGV %s, sum %lu\n", all ? "all" : "segv",
	       sigismember(&o, SIGSEGV) ? "blocked" : "not blocked", sum);
	funlockfile(stdout);
	return NULL;
}

static int blockmask(void)
{
	own = map(16);
	shared_heap = malloc(SHARED_PAGES * PAGE);
	memset(shared_heap, 0, SHARED_PAGES * PAGE);
	pthread_t a, b;
	pthread_create(&a, NULL, blocker, NULL);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, blocker, (void *)1);
	/* main blocks SIGSEGV too, with sigprocmask, and touches meanwhile */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigprocmask(SIG_BLOCK, &s, NULL);
	unsigned long sum = touch_all(0, 200);
	pthread_join(b, NULL);
	printf("blockmask main sum %lu\n", sum);
	return 0;
}

/* ---- EINTR ------------------------------------------------------------- */

static volatile sig_atomic_t alarms;
static int *heap_alarms;

static void on_alrm(int s)
{
	(void)s;
	alarms++;
	++*heap_alarms; /* a tracked page, from the handler */
}

static void set_alrm(int flags, long ms)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alrm;
	sa.sa_flags = flags;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, ms * 1000}, {0, ms * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_alrm(void)
{
	struct itimerval it = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static int pipe_w;

static void *late_writer(void *arg)
{
	(void)arg;
	sleep_ms(1000);
	char *msg = strdup("hello");
	write(pipe_w, msg, 6);
	free(msg);
	return NULL;
}

static int eintr(void)
{
	int fd[2];
	char *buf = malloc(4 * PAGE);
	heap_alarms = calloc(1, sizeof *heap_alarms);
	memset(buf, 0, 4 * PAGE);
	if (pipe(fd))
		return 1;
	pipe_w = fd[1];
	/* Without SA_RESTART: the read ends with EINTR. */
	set_alrm(0, 50);
	errno = 0;
	ssize_t r = read(fd[0], buf + PAGE, PAGE);
	int e = errno;
	stop_alrm();
	printf("no SA_RESTART: read %zd, %s, alarms %s\n", r, e == EINTR ? "EINTR" : strerror(e),
	       alarms >= 1 && *heap_alarms == alarms ? ">= 1" : "none");
	/* With SA_RESTART: the read is restarted after each alarm and returns
	 * the data written a second later.  The writer blocks SIGALRM, so the
	 * alarms interrupt the reader. */
	sigset_t s, o;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, &o);
	pthread_t t;
	pthread_create(&t, NULL, late_writer, NULL);
	pthread_sigmask(SIG_SETMASK, &o, NULL);
	sig_atomic_t before = alarms;
	set_alrm(SA_RESTART, 50);
	errno = 0;
	r = read(fd[0], buf + 2 * PAGE, PAGE);
	e = errno;
	stop_alrm();
	pthread_join(t, NULL);
	printf("SA_RESTART: read %zd \"%s\", %s, alarms during the read %s\n", r, buf + 2 * PAGE,
	       r < 0 ? strerror(e) : "no error", alarms > before && *heap_alarms == alarms ? ">= 1" : "none");
	return 0;
}

/* ---- asynchronous signals ---------------------------------------------- */

static volatile sig_atomic_t got[NSIG];
static volatile sig_atomic_t wrong_thread;
static pid_t main_tid;
static volatile int stop_touching;

static void on_async(int sig)
{
	if (gettid() != main_tid)
		wrong_thread++;
	got[sig]++;
	heap_scratch[sig * 64]++;
}

static void *toucher(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *mine = malloc(64 * PAGE);
	memset(mine, 0, 64 * PAGE);
	while (!__atomic_load_n(&stop_touching, __ATOMIC_RELAXED)) {
		touch(mine, 64 * PAGE, seed);
		touch(shared_heap, SHARED_PAGES * PAGE, seed);
		sleep_ms(1);
	}
	free(mine);
	return NULL;
}

static void start_touchers(pthread_t *t, int n)
{
	shared_heap = malloc(SHARED_PAGES * PAGE);
	memset(shared_heap, 0, SHARED_PAGES * PAGE);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, toucher, (void *)(uintptr_t)(i + 1));
}

static void stop_touchers(pthread_t *t, int n)
{
	__atomic_store_n(&stop_touching, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* Wait until *count exceeds before; false after WAIT_MS. */
static int arrived(volatile sig_atomic_t *count, sig_atomic_t before)
{
	for (int ms = 0; ms < WAIT_MS; ms++) {
		if (*count > before)
			return 1;
		sleep_ms(1);
	}
	return 0;
}

static const int async_sigs[] = {SIGTERM, SIGINT, SIGUSR1};
#define NASYNC 3
#define ROUNDS 40

static volatile int sender_done;
static int lost;

static void *sender(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NASYNC; i++) {
			int sig = async_sigs[i];
			sig_atomic_t before = got[sig];
			kill(getpid(), sig); /* to the process: only main does not block it */
			if (!arrived(&got[sig], before))
				lost++;
		}
	__atomic_store_n(&sender_done, 1, __ATOMIC_RELEASE);
	kill(getpid(), SIGUSR2); /* wakes main's sigsuspend */
	return NULL;
}

static void on_wake(int sig) { (void)sig; }

static int async(void)
{
	main_tid = gettid();
	heap_scratch = calloc(16, PAGE);
	sigset_t s, o;
	sigemptyset(&s);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_async;
	for (int i = 0; i < NASYNC; i++) {
		sigaction(async_sigs[i], &sa, NULL);
		sigaddset(&s, async_sigs[i]);
	}
	sa.sa_handler = on_wake;
	sigaction(SIGUSR2, &sa, NULL);
	sigaddset(&s, SIGUSR2);
	/* Every other thread of the program blocks them. */
	pthread_sigmask(SIG_BLOCK, &s, &o);
	pthread_t t[3];
	start_touchers(t, 2);
	pthread_create(&t[2], NULL, sender, NULL);
	/* main: waiting in sigsuspend half of the time, touching memory with
	 * the signals unblocked the other half.  While it checks whether the
	 * sender is done, every thread blocks them: a signal sent then stays
	 * pending for the process until sigsuspend takes it. */
	for (int n = 0; !__atomic_load_n(&sender_done, __ATOMIC_ACQUIRE); n++) {
		if (n % 2) {
			pthread_sigmask(SIG_SETMASK, &o, NULL);
			touch(shared_heap, SHARED_PAGES * PAGE, 3);
			sleep_ms(1);
			pthread_sigmask(SIG_BLOCK, &s, NULL);
		} else {
			sigsuspend(&o);
		}
	}
	pthread_sigmask(SIG_SETMASK, &o, NULL);
	pthread_join(t[2], NULL);
	stop_touchers(t, 2);
	printf("async sent %d handled %d %d %d wrong-thread %d lost %d\n", ROUNDS * NASYNC, (int)got[SIGTERM],
	       (int)got[SIGINT], (int)got[SIGUSR1], (int)wrong_thread, lost);
	return 0;
}

/* A thread in sigwait takes the signals sent to the process; every other
 * thread blocks them.  SIGUSR2 ends the wait. */
static pid_t waiter_tid;
static sigset_t wait_set;

static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = gettid();
	for (;;) {
		int sig;
		if (sigwait(&wait_set, &sig))
			continue;
		if (sig == SIGUSR2)
			return NULL;
		if (gettid() != waiter_tid)
			wrong_thread++;
		__atomic_add_fetch(&got[sig], 1, __ATOMIC_RELEASE);
	}
}

static int waited(const char *name, const int *sigs, int n)
{
	sigemptyset(&wait_set);
	for (int i = 0; i < n; i++)
		sigaddset(&wait_set, sigs[i]);
	sigaddset(&wait_set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &wait_set, NULL);
	pthread_t w, t[2];
	pthread_create(&w, NULL, waiter, NULL);
	start_touchers(t, 2);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < n; i++) {
			int sig = sigs[i];
			sig_atomic_t before = got[sig];
			kill(getpid(), sig);
			if (!arrived(&got[sig], before))
				lost++;
			touch(shared_heap, SHARED_PAGES * PAGE, 1);
		}
	kill(getpid(), SIGUSR2);
	pthread_join(w, NULL);
	stop_touchers(t, 2);
	printf("%s sent %d handled", name, ROUNDS * n);
	for (int i = 0; i < n; i++)
		printf(" %d", (int)got[sigs[i]]);
	printf(" wrong-thread %d lost %d\n", (int)wrong_thread, lost);
	return 0;
}

static void on_chld(int sig)
{
	if (gettid() != main_tid)
		wrong_thread++;
	got[sig]++;
}

static int sigchld(void)
{
	main_tid = gettid();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t s, o;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &s, &o);
	pthread_t t[2];
	start_touchers(t, 2);
	pthread_sigmask(SIG_SETMASK, &o, NULL);
	int status_ok = 0;
	enum { CHILDREN = 20 };
	for (int i = 0; i < CHILDREN; i++) {
		sig_atomic_t before = got[SIGCHLD];
		pid_t pid = fork();
		if (pid == 0) {
			touch(shared_heap, SHARED_PAGES * PAGE, 5);
			_exit(i + 1);
		}
		if (!arrived(&got[SIGCHLD], before))
			lost++;
		int st;
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == i + 1)
			status_ok++;
	}
	stop_touchers(t, 2);
	printf("sigchld children %d signals %d wrong-thread %d lost %d status-ok %d\n", CHILDREN, (int)got[SIGCHLD],
	       (int)wrong_thread, lost, status_ok);
	return 0;
}

/* The mask is blocked with a raw system call: a parent that is not under
 * the preload.  Nothing tracked is touched between that and the exec. */
static int blocked_exec(void)
{
	uint64_t segv = 1ULL << (SIGSEGV - 1);
	static char *const args[] = {"lifecycle", "blocked-child", NULL};
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &segv, NULL, sizeof segv);
	execv("/proc/self/exe", args);
	return 1;
}

static int blocked_child(void)
{
	sigset_t o;
	sigprocmask(SIG_BLOCK, NULL, &o);
	printf("blocked-child: SIGSEGV %s\n", sigismember(&o, SIGSEGV) ? "blocked" : "not blocked");
	fflush(stdout);
	own = map(16);
	shared_heap = malloc(SHARED_PAGES * PAGE);
	memset(shared_heap, 0, SHARED_PAGES * PAGE);
	printf("blocked-child: sum %lu\n", touch_all(1, 50));
	return 0;
}

/* ---- exit paths ---------------------------------------------------------- */

static char *big;
#define BIG_PAGES 2048

/* Memory in every tracked kind, touched over a few intervals. */
static void big_setup(void)
{
	big = malloc(BIG_PAGES * PAGE);
	memset(big, 0, BIG_PAGES * PAGE);
	own = map(16);
	for (int i = 0; i < 10; i++) {
		touch(big, BIG_PAGES * PAGE, 1);
		touch(own, 16 * PAGE, 1);
		touch(bss_data, sizeof bss_data, 1);
		sleep_ms(1);
	}
}

/* Threads that touch memory until the process ends. */
static void *forever(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *mine = malloc(32 * PAGE);
	for (;;) {
		touch(mine, 32 * PAGE, seed);
		touch(big, BIG_PAGES * PAGE, seed);
		touch(bss_data, sizeof bss_data, seed);
		sleep_ms(1);
	}
	return NULL;
}

static void start_forever(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;
		pthread_create(&t, NULL, forever, (void *)(uintptr_t)(i + 1));
		pthread_detach(t);
	}
}

static void *exiter(void *arg)
{
	(void)arg;
	sleep_ms(200);
	printf("exit from a thread\n");
	exit(6);
}

__attribute__((noreturn)) static int thread_exit(void)
{
	big_setup();
	start_forever(3);
	pthread_t t;
	pthread_create(&t, NULL, exiter, NULL);
	for (;;) {
		touch(own, 16 * PAGE, 1);
		sleep_ms(1);
	}
}

static int finishers;
static unsigned long finish_sum;

static void *finisher(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *mine = malloc(32 * PAGE);
	memset(mine, 0, 32 * PAGE);
	unsigned long sum = 0;
	for (int i = 0; i < 100; i++) {
		sum += touch(mine, 32 * PAGE, seed);
		sum += touch(big + (size_t)seed * 256 * PAGE, 256 * PAGE, seed);
		sleep_ms(2);
	}
	__atomic_add_fetch(&finish_sum, sum, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&finishers, 1, __ATOMIC_ACQ_REL) == 0)
		printf("the last thread is done: sum %lu\n", __atomic_load_n(&finish_sum, __ATOMIC_RELAXED));
	return NULL;
}

static void said_at_exit(void) { printf("atexit handler ran\n"); }

static int main_pthread_exit(void)
{
	big_setup();
	atexit(said_at_exit);
	finishers = 4;
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		pthread_create(&t, NULL, finisher, (void *)(uintptr_t)(i + 1));
	}
	printf("main calls pthread_exit\n");
	pthread_exit(NULL);
}

static int main_returns(void)
{
	big_setup();
	start_forever(4);
	sleep_ms(300);
	printf("main returns\n");
	return 0;
}

/* atexit: stdout's buffer is in the heap and is written only by exit's
 * final flush, after every destructor (ours included); the destructor
 * registers an atexit handler, which runs after the destructors too. */
static int atexit_mode;
static char *late;
#define LATE_PAGES 4096

static void late_handler(void)
{
	unsigned long sum = touch(late, LATE_PAGES * PAGE, 3);
	char *fresh = malloc(64 * PAGE);
	memset(fresh, 7, 64 * PAGE);
	char *m = map(8);
	sum += touch(fresh, 64 * PAGE, 1) + touch(m, 8 * PAGE, 1) + touch(bss_data, sizeof bss_data, 1);
	printf("late atexit handler (after the destructors): sum %lu\n", sum);
}

static void early_handler(void)
{
	unsigned long sum = touch(late, LATE_PAGES * PAGE, 1);
	printf("atexit handler: sum %lu\n", sum);
}

__attribute__((destructor)) static void program_destructor(void)
{
	if (!atexit_mode)
		return;
	unsigned long sum = touch(late, LATE_PAGES * PAGE, 2);
	printf("program destructor: sum %lu\n", sum);
	atexit(late_handler);
}

static int atexit_test(void)
{
	atexit_mode = 1;
	size_t bufsz = 64 * 1024;
	setvbuf(stdout, malloc(bufsz), _IOFBF, bufsz);
	late = malloc(LATE_PAGES * PAGE);
	memset(late, 0, LATE_PAGES * PAGE);
	atexit(early_handler);
	/* 40 KB: stays in the buffer until exit */
	for (int i = 0; i < 1000; i++)
		printf("line %4d of output held in a heap buffer\n", i);
	return 0;
}

/* ---- exits without exit handlers ------------------------------------------ */

static void say_raw(const char *s) { (void)!write(1, s, strlen(s)); }

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	touch(heap_scratch, 16 * PAGE, 1);
	if (++alarms == 50) {
		say_raw("_exit(8) from the SIGALRM handler\n");
		_exit(8);
	}
}

/* Map, touch, unmap and change protections for ever: each call goes
 * through wss's hooks, and most of the time is spent in them. */
static __attribute__((noreturn)) void map_loop(void)
{
	for (unsigned i = 0;; i++) {
		char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(99);
		touch(p, 4 * PAGE, 1);
		mprotect(p, PAGE, PROT_READ);
		munmap(p, 4 * PAGE);
		/* wss walks every page of it in its lock */
		mprotect(big, BIG_PAGES * PAGE, PROT_READ | PROT_WRITE);
		if (i % 1024 == 0)
			touch(big, BIG_PAGES * PAGE, 1);
	}
}

static int exit_alarm(void)
{
	big_setup();
	heap_scratch = malloc(16 * PAGE);
	memset(heap_scratch, 0, 16 * PAGE);
	start_forever(2);
	signal(SIGALRM, on_alarm);
	struct itimerval it = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &it, NULL);
	map_loop();
}

static void on_bus(int sig)
{
	(void)sig;
	say_raw("_exit(9) from the SIGBUS handler\n");
	_exit(9);
}

static void *bus_sender(void *arg)
{
	sleep_ms(200);
	pthread_kill(*(pthread_t *)arg, SIGBUS);
	return NULL;
}

static int exit_sigbus(void)
{
	big_setup();
	signal(SIGBUS, on_bus);
	static pthread_t main_thread;
	main_thread = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, bus_sender, &main_thread);
	map_loop();
}

static void late_exit(void)
{
	unsigned long sum = touch(big, BIG_PAGES * PAGE, 5) + touch(bss_data, sizeof bss_data, 5);
	printf("late atexit handler: sum %lu, _exit(10)\n", sum);
	fflush(stdout);
	_exit(10);
}

static int late_exit_mode;

__attribute__((destructor)) static void exit_destructor(void)
{
	if (late_exit_mode)
		atexit(late_exit);
}

static int fork_exit(void)
{
	big_setup();
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0)
		_exit(3);
	int st = 0;
	waitpid(pid, &st, 0);
	printf("vfork child: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 300; i++) {
			touch(own, 16 * PAGE, 2);
			sleep_ms(1);
		}
		_exit(4);
	}
	waitpid(pid, &st, 0);
	printf("fork child: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(5);
	waitpid(pid, &st, 0);
	printf("fork child at once: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	touch(big, BIG_PAGES * PAGE, 3);
	return 0;
}

/* ---- threads ------------------------------------------------------------- */

static __thread unsigned long tls_arr[1024]; /* 8 KiB of static TLS per thread */

struct job {
	unsigned id;
	unsigned long result;
};

static unsigned long work(unsigned id)
{
	size_t len = (4 + id % 8) * PAGE;
	unsigned char *buf = malloc(len);
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(id + i);
	for (size_t i = 0; i < 1024; i++)
		tls_arr[i] = id * 3 + i;
	unsigned long sum = 0;
	for (size_t i = 0; i < len; i += 64)
		sum += buf[i];
	for (size_t i = 0; i < 1024; i++)
		sum += tls_arr[i] == id * 3 + i;
	free(buf);
	return sum;
}

static void *joined(void *arg)
{
	struct job *j = arg;
	pthread_setname_np(pthread_self(), "churn");
	j->result = work(j->id);
	return NULL;
}

static int detached_live;
static unsigned long detached_sum;

static void *detached(void *arg)
{
	struct job *j = arg;
	pthread_setname_np(pthread_self(), "churn");
	__atomic_add_fetch(&detached_sum, work(j->id), __ATOMIC_RELAXED);
	free(j);
	__atomic_sub_fetch(&detached_live, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Threads named "churn" still in /proc/self/task (not yet reaped). */
static int churn_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
		if (f) {
			n += fgets(comm, sizeof comm, f) && !strcmp(comm, "churn\n");
			fclose(f);
		}
	}
	closedir(d);
	return n;
}

#define CHURN_JOINED 2400
#define CHURN_BATCH 8
#define CHURN_DETACHED 500

static int churn(void)
{
	unsigned long sum = 0;
	for (unsigned i = 0; i < CHURN_JOINED; i += CHURN_BATCH) {
		pthread_t t[CHURN_BATCH];
		struct job *j = malloc(CHURN_BATCH * sizeof *j);
		for (unsigned k = 0; k < CHURN_BATCH; k++) {
			j[k].id = i + k;
			if (pthread_create(&t[k], NULL, joined, &j[k]))
				return 1;
		}
		for (unsigned k = 0; k < CHURN_BATCH; k++) {
			pthread_join(t[k], NULL);
			sum += j[k].result;
		}
		free(j);
	}
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (unsigned i = 0; i < CHURN_DETACHED; i++) {
		struct job *j = malloc(sizeof *j);
		j->id = CHURN_JOINED + i;
		__atomic_add_fetch(&detached_live, 1, __ATOMIC_RELAXED);
		if (pthread_create(&(pthread_t){0}, &a, detached, j))
			return 1;
	}
	for (int ms = 0; __atomic_load_n(&detached_live, __ATOMIC_ACQUIRE) && ms < 60000; ms++)
		sleep_ms(1);
	sum += __atomic_load_n(&detached_sum, __ATOMIC_RELAXED);
	printf("churn joined %d detached %d live %d sum %lu\n", CHURN_JOINED, CHURN_DETACHED,
	       __atomic_load_n(&detached_live, __ATOMIC_ACQUIRE), sum);
	fflush(stdout);
	/* The idle tail: once the detached threads are gone, a second in which
	 * only main touches memory. */
	for (int ms = 0; churn_threads() && ms < 60000; ms++)
		sleep_ms(1);
	own = map(4);
	for (int i = 0; i < 1000; i++) {
		own[(i % 4) * PAGE]++;
		sleep_ms(1);
	}
	return 0;
}

#define TLS_THREADS 8
static pthread_barrier_t tls_barrier;
static int tls_bad;

static void *tls_worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	char *heap = malloc(16 * PAGE);
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < 1024; i++)
			tls_arr[i] = id * 100000 + (unsigned)round * 1024 + i;
		memset(heap, (int)id, 16 * PAGE);
		pthread_barrier_wait(&tls_barrier); /* everyone has written its own */
		sleep_ms(1);
		for (size_t i = 0; i < 1024; i++)
			if (tls_arr[i] != id * 100000 + (unsigned)round * 1024 + i)
				__atomic_add_fetch(&tls_bad, 1, __ATOMIC_RELAXED);
		for (size_t i = 0; i < 16 * PAGE; i += 512)
			if (heap[i] != (char)id)
				__atomic_add_fetch(&tls_bad, 1, __ATOMIC_RELAXED);
		pthread_barrier_wait(&tls_barrier);
	}
	free(heap);
	return NULL;
}

static int tls(void)
{
	pthread_t t[TLS_THREADS];
	pthread_barrier_init(&tls_barrier, NULL, TLS_THREADS);
	for (int i = 0; i < TLS_THREADS; i++)
		pthread_create(&t[i], NULL, tls_worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < TLS_THREADS; i++)
		pthread_join(t[i], NULL);
	printf("tls threads %d mismatches %d\n", TLS_THREADS, tls_bad);
	return 0;
}

/* exit_group(code) by the program's own instruction, not the C library's
 * syscall(): what Go's runtime does, which no wrapper can see. */
static void raw_exit_group(int code)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(code) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_exit_group;
	register long x0 __asm__("x0") = code;
	__asm__ volatile("svc 0" : : "r"(x8), "r"(x0) : "memory");
#endif
	syscall(SYS_exit_group, code); /* elsewhere: the wrapped call */
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	static const int async_set[] = {SIGTERM, SIGINT, SIGUSR1};
	static const int sync_set[] = {SIGBUS, SIGFPE, SIGILL, SIGTRAP};
	if (!strcmp(m, "altstack"))
		return altstack();
	if (!strcmp(m, "resethand"))
		return resethand();
	if (!strcmp(m, "nodefer"))
		return nodefer();
	if (!strcmp(m, "jmploop"))
		return jmploop();
	if (!strcmp(m, "blockmask"))
		return blockmask();
	if (!strcmp(m, "eintr"))
		return eintr();
	if (!strcmp(m, "async"))
		return async();
	if (!strcmp(m, "sigwait"))
		return waited("sigwait", async_set, 3);
	if (!strcmp(m, "syncwait"))
		return waited("syncwait", sync_set, 4);
	if (!strcmp(m, "sigchld"))
		return sigchld();
	if (!strcmp(m, "blocked-exec"))
		return blocked_exec();
	if (!strcmp(m, "blocked-child"))
		return blocked_child();
	if (!strcmp(m, "exit3")) {
		big_setup();
		printf("exit(3)\n");
		exit(3);
	}
	if (!strcmp(m, "return5")) {
		big_setup();
		printf("return 5\n");
		return 5;
	}
	if (!strcmp(m, "_exit4")) {
		big_setup();
		printf("_exit(4)\n");
		fflush(stdout);
		_exit(4);
	}
	if (!strcmp(m, "abort")) {
		big_setup();
		printf("abort()\n");
		fflush(stdout);
		abort();
	}
	if (!strcmp(m, "term")) {
		big_setup();
		printf("raise(SIGTERM)\n");
		fflush(stdout);
		raise(SIGTERM);
		return 0;
	}
	if (!strcmp(m, "thread-exit"))
		return thread_exit();
	if (!strcmp(m, "main-pthread-exit"))
		return main_pthread_exit();
	if (!strcmp(m, "main-returns"))
		return main_returns();
	if (!strcmp(m, "atexit"))
		return atexit_test();
	if (!strcmp(m, "_Exit5")) {
		big_setup();
		printf("_Exit(5)\n");
		fflush(stdout);
		_Exit(5);
	}
	if (!strcmp(m, "exit-group6")) {
		big_setup();
		printf("syscall(SYS_exit_group, 6)\n");
		fflush(stdout);
		syscall(SYS_exit_group, 6);
	}
	if (!strcmp(m, "raw-exit-group3")) {
		big_setup();
		printf("exit_group(3), the program's own instruction\n");
		fflush(stdout);
		raw_exit_group(3);
	}
	if (!strcmp(m, "sys-exit11")) {
		big_setup();
		printf("syscall(SYS_exit, 11) from the only thread\n");
		fflush(stdout);
		syscall(SYS_exit, 11);
	}
	if (!strcmp(m, "_exit-threads")) {
		big_setup();
		start_forever(3);
		sleep_ms(200);
		printf("_exit(7) with three threads touching memory\n");
		fflush(stdout);
		_exit(7);
	}
	if (!strcmp(m, "_exit-alarm"))
		return exit_alarm();
	if (!strcmp(m, "_exit-sigbus"))
		return exit_sigbus();
	if (!strcmp(m, "atexit-_exit")) {
		big_setup();
		late_exit_mode = 1;
		printf("exit(0), then _exit(10) in a late atexit handler\n");
		exit(0);
	}
	if (!strcmp(m, "fork-_exit"))
		return fork_exit();
	if (!strcmp(m, "churn"))
		return churn();
	if (!strcmp(m, "tls"))
		return tls();
	fprintf(stderr, "usage: lifecycle MODE (see the top of lifecycle.c)\n");
	return 2;
}
