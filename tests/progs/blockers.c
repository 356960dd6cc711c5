/* Programs whose threads block where wss attach must be careful, for
 * tests/integration/attach_inject.sh.  Prints "ready" (flushed) first and
 * a deterministic last line; exits 3.
 *   blockers epollfork SECONDS  waits in epoll_wait (100 ms timeouts) and
 *                               forks a child every 100 ms: EINTR seen by
 *                               the program, children that did not exit 0
 *   blockers read SECONDS       one thread, blocked in read(2) on a pipe
 *                               nobody writes, until SIGALRM (no
 *                               SA_RESTART) ends it after SECONDS
 *   blockers trap SECONDS       a SIGTRAP handler (wss attach's calls
 *                               return by an int3): sleeps, raises one
 *                               SIGTRAP, counts what the handler saw
 *   blockers trapign SECONDS    SIGTRAP ignored: sleeps, says whether it
 *                               still is
 *   blockers sleep SECONDS      one nanosleep of SECONDS: whether it
 *                               returned 0 having slept them all (a
 *                               stop in it restarts it for the time left) */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[256 * 4096];
static volatile sig_atomic_t alarmed, traps;

static void on_trap(int s)
{
	(void)s;
	traps++;
}

static void on_alarm(int s)
{
	(void)s;
	alarmed = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	double secs = atof(argv[2]);
	printf("ready\n");
	fflush(stdout);
	if (!strcmp(argv[1], "epollfork")) {
		int ep = epoll_create1(0);
		long eintr = 0, bad = 0;
		struct epoll_event ev;
		for (double end = now() + secs; now() < end;) {
			if (epoll_wait(ep, &ev, 1, 100) < 0 && errno == EINTR)
				eintr++;
			memset(buf, (int)eintr, sizeof buf);
			pid_t c = fork();
			if (c == 0)
				_exit(0);
			int st;
			if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
		}
		printf("done: epoll_wait interrupted %ld times, %ld children failed\n", eintr, bad);
		return 3;
	}
	if (!strcmp(argv[1], "read")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm; /* no SA_RESTART: read returns EINTR */
		sigaction(SIGALRM, &sa, NULL);
		int p[2];
		if (pipe(p))
			return 1;
		memset(buf, 1, sizeof buf);
		alarm((unsigned)secs);
		char c;
		ssize_t n = read(p[0], &c, 1);
		printf("done: read returned %zd (%s), alarm %s\n", n, n < 0 ? strerror(errno) : "data",
		       alarmed ? "came" : "did not come");
		return 3;
	}
	if (!strcmp(argv[1], "sleep")) {
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
		double t0 = now();
		int r = nanosleep(&ts, &ts);
		double slept = now() - t0;
		printf("done: nanosleep returned %d, %s\n", r, slept >= secs - 0.01 ? "slept it all" : "cut short");
		return 3;
	}
	if (!strcmp(argv[1], "trap") || !strcmp(argv[1], "trapign")) {
		bool ign = !strcmp(argv[1], "trapign");
		signal(SIGTRAP, ign ? SIG_IGN : on_trap);
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
		while (nanosleep(&ts, &ts))
			;
		if (!ign)
			raise(SIGTRAP);
		struct sigaction now;
		sigaction(SIGTRAP, NULL, &now);
		if (ign)
			printf("done: SIGTRAP %s\n", now.sa_handler == SIG_IGN ? "still ignored" : "no longer ignored");
		else
			printf("done: %d SIGTRAP, handler %s\n", (int)traps, now.sa_handler == on_trap ? "kept" : "lost");
		return 3;
	}
	return 2;
}
