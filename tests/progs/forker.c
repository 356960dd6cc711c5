/* fork under the preload.  usage: forker manual|wall|setid|sigfork|threads|vfork|spawn|quick|exit N
 * manual: the parent touches 100 pages, forks; the child touches 30 of them
 *   and then 10 new ones, a sample each (wss_tick), and exits; then the
 *   parent touches 70.  Prints "child PID" and the expected samples:
 *   "expect WHO SEQ PAGES" (WHO is parent or child).
 * wall: the child keeps touching 20 pages for 300 ms (the engine thread of
 *   a followed child must tick), the parent waits.
 * setid: the forked child calls setgid (glibc signals every thread and
 *   waits for each, the child's engine thread too).
 * sigfork: a SIGALRM handler forks while the main thread is blocked in a
 *   read into heap memory; in the child the read resumes into the same
 *   buffer and must succeed.
 * threads: two threads keep touching memory while the main thread forks
 *   20 children, each touching 8 pages and exiting; every child must exit 0.
 * vfork: 40 vfork children, alternately execve("/bin/true") (path and argv
 *   in the heap) and _exit(i % 7), the heap touched around each; prints
 *   what each exited with.
 * spawn: posix_spawn of /bin/false and of this program (exit N),
 *   posix_spawnp of true and false, 8 times each; the pid, path, argv, file
 *   actions and attributes in the heap, the heap touched around each;
 *   prints each exit status.
 * quick: one child exits at once, another execs /bin/true at once; prints
 *   "exit PID" and "exec PID".
 * exit N: exits with status N.
 * Exits non-zero if a child failed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/wss.h"

#define PAGE 4096

static char *map(int n)
{
	char *p = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	return p;
}

static void touch(char *p, int n)
{
	for (int i = 0; i < n; i++)
		((volatile char *)p)[(size_t)i * PAGE] += 1;
}

static int reap(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "forker: child %d failed\n", (int)pid);
		return 1;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile int stop;
static int fds[2];
static volatile pid_t sig_child = -1;

static void on_alarm(int sig)
{
	(void)sig;
	pid_t p = fork();
	if (p == 0) {
		if (write(fds[1], "c", 1) != 1)
			_exit(3);
		return; /* back into the interrupted read */
	}
	sig_child = p;
	if (write(fds[1], "p", 1) != 1)
		_exit(3);
}

static void *spinner(void *arg)
{
	char *p = map(64);
	while (!stop)
		touch(p, 64);
	return arg;
}

/* A heap copy of a NULL-terminated argument vector. */
static char **heap_argv(const char *a0, const char *a1, const char *a2)
{
	const char *src[] = {a0, a1, a2, NULL};
	char **v = malloc(4 * sizeof *v);
	for (int i = 0; i < 4; i++)
		v[i] = src[i] ? strcpy(malloc(strlen(src[i]) + 1), src[i]) : NULL;
	return v;
}

/* Let ticks arm the heap again (the test runs with a 1 ms interval). */
static void nap(void)
{
	struct timespec ts = {0, 3000000};
	nanosleep(&ts, NULL);
}

/* The exit status of pid, or -1 (waitpid failed) or -2 (signalled). */
static int status_of(pid_t pid, int *st)
{
	if (waitpid(pid, st, 0) != pid) {
		fprintf(stderr, "forker: waitpid %d: %s\n", (int)pid, strerror(errno));
		return -1;
	}
	if (!WIFEXITED(*st)) {
		fprintf(stderr, "forker: child %d: signal %d\n", (int)pid, WIFSIGNALED(*st) ? WTERMSIG(*st) : 0);
		return -2;
	}
	return WEXITSTATUS(*st);
}

static int vforks(char *a)
{
	char **argv = heap_argv("/bin/true", NULL, NULL);
	int *st = malloc(sizeof *st);
	for (int i = 0; i < 40; i++) {
		touch(a, 100);
		nap();
		pid_t pid = vfork();
		if (pid == 0) {
			if (i % 2)
				_exit(i % 7);
			execve(argv[0], argv, environ);
			_exit(127);
		}
		if (pid < 0)
			return 1;
		int s = status_of(pid, st);
		touch(a, 100);
		printf("vfork %d %s: %d\n", i, i % 2 ? "_exit" : "execve", s);
	}
	return 0;
}

static int spawns(char *a)
{
	pid_t *pid = malloc(sizeof *pid);
	int *st = malloc(sizeof *st);
	char *self = strcpy(malloc(16), "/proc/self/exe");
	char *no = strcpy(malloc(16), "/bin/false");
	char **self_argv = heap_argv("forker", "exit", "3");
	char **no_argv = heap_argv("false", NULL, NULL);
	char **t_argv = heap_argv("true", NULL, NULL);
	/* File actions and attributes in the heap too, read by glibc's spawn
	 * with every signal blocked. */
	posix_spawn_file_actions_t *fa = malloc(sizeof *fa);
	posix_spawnattr_t *at = malloc(sizeof *at);
	sigset_t none;
	sigemptyset(&none);
	if (posix_spawn_file_actions_init(fa) || posix_spawn_file_actions_adddup2(fa, 1, 1) || posix_spawnattr_init(at) ||
	    posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK) || posix_spawnattr_setsigmask(at, &none))
		return 1;
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 4; k++) {
			touch(a, 100);
			nap();
			int e = k == 0	 ? posix_spawn(pid, no, NULL, NULL, no_argv, environ)
				: k == 1 ? posix_spawn(pid, self, fa, at, self_argv, environ)
				: k == 2 ? posix_spawnp(pid, t_argv[0], fa, at, t_argv, environ)
					 : posix_spawnp(pid, no_argv[0], NULL, NULL, no_argv, environ);
			if (e) {
				printf("spawn %d.%d: error %d\n", i, k, e);
				continue;
			}
			int s = status_of(*pid, st);
			touch(a, 100);
			printf("spawn %d.%d: %d\n", i, k, s);
		}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "manual";
	if (!strcmp(mode, "exit"))
		return argc > 2 ? atoi(argv[2]) : 0;
	char *a = map(100);
	if (!strcmp(mode, "vfork"))
		return vforks(a);
	if (!strcmp(mode, "spawn"))
		return spawns(a);
	if (!strcmp(mode, "quick")) {
		touch(a, 100);
		pid_t e = fork();
		if (e == 0)
			exit(0);
		pid_t x = fork();
		if (x == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		printf("exit %d\nexec %d\n", (int)e, (int)x);
		return reap(e) | reap(x);
	}
	if (!strcmp(mode, "manual")) {
		touch(a, 100);
		wss_tick();
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			touch(a, 30);
			wss_tick();
			char *b = map(10);
			touch(b, 10);
			wss_tick();
			exit(a[0] == 2 ? 0 : 1); /* the child sees the parent's writes */
		}
		int bad = reap(pid);
		touch(a + 30 * PAGE, 70);
		wss_tick();
		printf("child %d\nexpect parent 1 100\nexpect parent 2 70\nexpect child 1 30\nexpect child 2 10\n", (int)pid);
		return bad || a[0] != 1;
	}
	if (!strcmp(mode, "wall")) {
		pid_t pid = fork();
		if (pid == 0) {
			double t0 = now();
			while (now() - t0 < 0.3)
				touch(a, 20);
			exit(0);
		}
		printf("child %d\n", (int)pid);
		return reap(pid);
	}
	if (!strcmp(mode, "setid")) {
		pid_t pid = fork();
		if (pid == 0)
			exit(setgid(getgid()) ? 1 : 0);
		return reap(pid);
	}
	if (!strcmp(mode, "sigfork")) {
		if (pipe(fds))
			return 1;
		char *buf = malloc(1 << 16);
		memset(buf, 0, 1 << 16);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		alarm(1);
		ssize_t r = read(fds[0], buf + 8192, 1);
		if (sig_child == -1) /* the child */
			exit(r == 1 ? 0 : 2);
		return r != 1 || reap(sig_child);
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spinner, NULL);
	int bad = 0;
	for (int i = 0; i < 20; i++) {
		touch(a, 100);
		pid_t pid = fork();
		if (pid == 0) {
			touch(a, 8);
			exit(a[0] == (char)(i + 2) ? 0 : 1);
		}
		bad |= reap(pid);
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return bad;
}
