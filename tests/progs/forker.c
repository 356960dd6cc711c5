/* fork under the preload.  usage: forker manual|wall|threads
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
 * Exits non-zero if a child failed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "manual";
	char *a = map(100);
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
