/* Every kind of tracked memory at once, with known counts per interval
 * (kinds.sh): SHARED_PAGES of MAP_SHARED|MAP_ANONYMOUS written, as many of a
 * private anonymous mapping written, MFD_PAGES of a memfd mapped shared
 * written, SYSV_PAGES of a System V segment written, FILE_READ pages of a
 * file (argv[1], FILE_PAGES long) mapped read-only and read, STACK_PAGES
 * of the main thread's stack and THREAD_PAGES of a thread's written, and, with
 * "shared-file", FILE_WRITE pages of the same file mapped shared and
 * written (one byte each: the page number's low byte).  Three manual
 * intervals, then everything unmapped and a last one.  Prints the sum of
 * the bytes read so that the run's output is compared with a native one.
 *
 * "fork": a child writes FORK_PAGES of a MAP_SHARED|MAP_ANONYMOUS mapping
 * its parent made and wrote, one interval each; "syscalls": the kernel
 * reads and writes armed pages of each kind for the program (write(2) from
 * a file mapping, read(2) into shared memory, pread into a shared file
 * mapping), then a page past the end of a truncated file mapping raises
 * SIGBUS for the program's own handler; each prints what it saw. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "include/wss.h"

#define PG 4096UL
#define SHARED_PAGES 4096
#define ANON_PAGES 4096
#define MFD_PAGES 256
#define SYSV_PAGES 128
#define FILE_PAGES 2048
#define FILE_READ 512  /* every fourth page */
#define FILE_WRITE 64  /* pages 1000.. */
#define STACK_PAGES 256 /* 1 MiB */
#define THREAD_PAGES 32

#define FORK_PAGES 300

static sigjmp_buf bus_jump;
static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jump, 1);
}

/* The parent writes FORK_PAGES shared pages, then its child writes them. */
static int forked(void)
{
	char *sh = mmap(NULL, FORK_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	wss_tick();
	for (size_t i = 0; i < FORK_PAGES; i++)
		sh[i * PG] = 1;
	wss_tick();
	pid_t c = fork();
	if (c == 0) {
		wss_tick();
		for (size_t i = 0; i < FORK_PAGES; i++)
			sh[i * PG] += 1;
		wss_tick();
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	unsigned long sum = 0;
	for (size_t i = 0; i < FORK_PAGES; i++)
		sum += (unsigned char)sh[i * PG];
	printf("child %d status %d sum %lu\n", (int)c, WIFEXITED(st) ? WEXITSTATUS(st) : -1, sum);
	return 0;
}

/* The kernel's accesses to armed pages of each kind, then SIGBUS. */
static int syscalls(const char *path)
{
	int fd = open(path, O_RDWR);
	int p[2];
	if (fd < 0 || pipe(p))
		return 1;
	char *fr = mmap(NULL, 4 * PG, PROT_READ, MAP_PRIVATE, fd, 0);
	char *fw = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *sh = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fr == MAP_FAILED || fw == MAP_FAILED || sh == MAP_FAILED)
		return 1;
	wss_tick(); /* every page armed */
	ssize_t w = write(p[1], fr + PG, 100);  /* the kernel reads a file page */
	ssize_t r = read(p[0], sh + 2 * PG, 100); /* and writes shared memory */
	ssize_t pr = pread(fd, fw + 3 * PG, 50, 0); /* and a shared file page */
	printf("write %zd read %zd same %d pread %zd same %d\n", w, r, !memcmp(fr + PG, sh + 2 * PG, 100), pr,
	       !memcmp(fw + 3 * PG, fr, 50));
	wss_tick();
	/* Past the end of the file: the program's SIGBUS, armed or not. */
	if (ftruncate(fd, PG)) /* pages 1.. now lie past the end */
		return 1;
	wss_tick();
	signal(SIGBUS, on_bus);
	volatile int got = 0;
	if (sigsetjmp(bus_jump, 1) == 0)
		got = fr[2 * PG];
	else
		got = -1;
	printf("past the end: %s\n", got == -1 ? "SIGBUS" : "no signal");
	return 0;
}

/* STACK_PAGES of this thread's stack written, a byte a page; not inlined,
 * so that the array is below the caller's frame every time. */
static __attribute__((noinline)) unsigned long stack_pages(int pages, int it)
{
	volatile char buf[STACK_PAGES * PG];
	for (int i = 0; i < pages; i++)
		buf[i * PG] = (char)it;
	return (unsigned long)buf[0];
}

static pthread_barrier_t turn;

/* A thread writing THREAD_PAGES of its stack in each of the three
 * intervals, between two barriers with the main thread. */
static void *stack_thread(void *arg)
{
	(void)arg;
	for (int it = 0; it < 3; it++) {
		pthread_barrier_wait(&turn);
		stack_pages(THREAD_PAGES, it);
		pthread_barrier_wait(&turn);
	}
	/* Not ended before the main thread's last tick: a thread's stack
	 * leaves tracking as it ends, with its touches of the interval in
	 * progress (docs/limits.md). */
	pthread_barrier_wait(&turn);
	return NULL;
}

static void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return forked();
	if (argc < 2) {
		fprintf(stderr, "usage: kinds FILE [shared-file|syscalls] | kinds fork\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "syscalls"))
		return syscalls(argv[1]);
	bool wfile = argc > 2 && !strcmp(argv[2], "shared-file");
	char *sh = map(SHARED_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	char *an = map(ANON_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	int mfd = memfd_create("kinds", 0);
	if (mfd < 0 || ftruncate(mfd, MFD_PAGES * PG)) {
		perror("memfd");
		return 1;
	}
	char *mf = map(MFD_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd);
	int id = shmget(IPC_PRIVATE, SYSV_PAGES * PG, IPC_CREAT | 0600);
	char *sv = id < 0 ? (char *)-1 : shmat(id, NULL, 0);
	if (sv == (char *)-1) {
		perror("shm");
		return 1;
	}
	shmctl(id, IPC_RMID, NULL);
	int fd = open(argv[1], wfile ? O_RDWR : O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	const unsigned char *fr = map(FILE_PAGES * PG, PROT_READ, MAP_PRIVATE, fd);
	unsigned char *fw = wfile ? map(FILE_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd) : NULL;
	unsigned long sum = 0;
	pthread_t th;
	pthread_barrier_init(&turn, NULL, 2);
	if (pthread_create(&th, NULL, stack_thread, NULL))
		return 1;
	stack_pages(STACK_PAGES, 0); /* the main stack grown before the first interval */
	wss_tick();
	for (int it = 0; it < 3; it++) {
		pthread_barrier_wait(&turn);
		sum += stack_pages(STACK_PAGES, it);
		for (size_t i = 0; i < SHARED_PAGES; i++)
			sh[i * PG] = (char)it;
		for (size_t i = 0; i < ANON_PAGES; i++)
			an[i * PG] = (char)it;
		for (size_t i = 0; i < MFD_PAGES; i++)
			mf[i * PG] = (char)it;
		for (size_t i = 0; i < SYSV_PAGES; i++)
			sv[i * PG] = (char)it;
		for (size_t i = 0; i < FILE_READ; i++)
			sum += fr[4 * i * PG + 7];
		for (size_t i = 0; fw && i < FILE_WRITE; i++)
			fw[(1000 + i) * PG] = (unsigned char)(1000 + i);
		pthread_barrier_wait(&turn);
		wss_tick();
	}
	pthread_barrier_wait(&turn);
	pthread_join(th, NULL);
	shmdt(sv);
	munmap(sh, SHARED_PAGES * PG);
	munmap(an, ANON_PAGES * PG);
	munmap(mf, MFD_PAGES * PG);
	munmap((void *)fr, FILE_PAGES * PG);
	if (fw)
		munmap(fw, FILE_PAGES * PG);
	printf("sum %lu\n", sum);
	return 0;
}
