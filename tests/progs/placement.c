/* The engine thread's CPU (engine/clock.c) against what a program does to
 * its own scheduling:
 *   placement rt SECONDS   turn SCHED_FIFO (prints "no-rt" and exits 0 where
 *                          that is refused), then compute for SECONDS with a
 *                          read(2) into a heap buffer now and then; prints the
 *                          slowest read in ms
 *   placement rtspin SECONDS  the same, computing only (no system call)
 *   placement thread FILE  print "ready", wait until FILE exists (10 s at
 *                          most), run a thread for 0.5 s (it prints
 *                          "thread" first)
 *   placement noaffinity PROG [ARGS]  run PROG with sched_setaffinity refused
 *                          (EPERM, by a seccomp filter) */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *sleeper(void *a)
{
	printf("thread\n");
	fflush(stdout);
	usleep(500000);
	return a;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "rtspin") == 0) {
		double secs = atof(argv[2]);
		struct sched_param sp = {.sched_priority = 1};
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			printf("no-rt\n");
			return 0;
		}
		volatile double x = 0;
		for (double t0 = now(); now() - t0 < secs;)
			for (int k = 0; k < 10000; k++)
				x += k;
		printf("done\n");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "rt") == 0) {
		double secs = atof(argv[2]);
		size_t n = 16 << 20;
		char *b = malloc(n);
		int fd = open("/dev/zero", O_RDONLY);
		if (!b || fd < 0)
			return 1;
		memset(b, 1, n);
		struct sched_param sp = {.sched_priority = 1};
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			printf("no-rt\n");
			return 0;
		}
		double t0 = now(), worst = 0;
		unsigned x = 1;
		for (long calls = 0; now() - t0 < secs; calls++) {
			for (volatile int k = 0; k < 20000; k++)
				;
			x = x * 1103515245 + 12345;
			double a = now();
			if (read(fd, b + (size_t)((x >> 4) % (n / 4096)) * 4096, 4096) != 4096)
				return 1;
			if (now() - a > worst)
				worst = now() - a;
			if (calls % 50 == 0)
				usleep(200);
		}
		printf("worst read %.0f ms\n", worst * 1e3);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "thread") == 0) {
		printf("ready\n");
		fflush(stdout);
		for (int i = 0; i < 1000 && access(argv[2], F_OK) != 0; i++)
			usleep(10000);
		pthread_t t;
		if (pthread_create(&t, NULL, sleeper, NULL))
			return 1;
		pthread_join(t, NULL);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "noaffinity") == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setaffinity, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog p = {sizeof f / sizeof f[0], f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p)) {
			perror("seccomp");
			return 1;
		}
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	fprintf(stderr, "usage: placement rt|rtspin SECONDS | thread FILE | noaffinity PROG [ARGS]\n");
	return 2;
}
