/* A program to attach to whose memory is of every kind but the heap's: a
 * writer thread sweeps 64 MiB of shared anonymous memory (16,384 pages),
 * 256 pages of a shared mapping of FILE and 64 pages of a private one; a
 * stack thread, its stack 64 MiB (more than glibc keeps for reuse, so it
 * is unmapped when the thread is joined), sweeps 64 pages of its own
 * stack.  After SECONDS the stack thread ends; after SECONDS2 more, the
 * writer, and the program checks its shared memory, prints what it did and
 * exits with status 3.  What FILE holds then does not depend on timing
 * (each page gets the same bytes at every sweep).  It prints "ready"
 * (flushed) once both threads swept, and "joined T_NS" (CLOCK_MONOTONIC)
 * on stderr when the stack is gone.
 * usage: attachkinds FILE SECONDS SECONDS2 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define SHM_PAGES 16384
#define FILE_PAGES 256
#define PRIV_PAGES 64
#define STACK_PAGES 64

static char *shm, *fshared, *fprivate;
static volatile int stop_writer, stop_stacker;
static volatile uint64_t writer_sweeps, stacker_sweeps;

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts))
		;
}

static unsigned char byte_of(size_t page) { return (unsigned char)(page * 31 + 7); }

static void *writer(void *arg)
{
	(void)arg;
	while (!stop_writer) {
		for (size_t i = 0; i < SHM_PAGES; i++)
			*(volatile char *)&shm[i * PG] = (char)byte_of(i);
		for (size_t i = 0; i < FILE_PAGES; i++)
			*(volatile char *)&fshared[i * PG + 100] = (char)byte_of(i);
		for (size_t i = 0; i < PRIV_PAGES; i++)
			*(volatile char *)&fprivate[i * PG + 200] = (char)byte_of(i);
		writer_sweeps++;
		sleep_s(0.002); /* a sweep in far less than an interval, leaving CPU to a loaded machine */
	}
	return NULL;
}

static void *stacker(void *arg)
{
	(void)arg;
	char pages[STACK_PAGES * PG] __attribute__((aligned(PG)));
	while (!stop_stacker) {
		for (size_t i = 0; i < STACK_PAGES; i++)
			*(volatile char *)&pages[i * PG] = (char)i;
		stacker_sweeps++;
		sleep_s(0.005);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return 1;
	shm = mmap(NULL, (size_t)SHM_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fshared = mmap(NULL, (size_t)FILE_PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	fprivate = mmap(NULL, (size_t)PRIV_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (shm == MAP_FAILED || fshared == MAP_FAILED || fprivate == MAP_FAILED)
		return 1;
	pthread_attr_t big;
	pthread_attr_init(&big);
	pthread_attr_setstacksize(&big, 64 << 20);
	pthread_t w, st;
	if (pthread_create(&w, NULL, writer, NULL) || pthread_create(&st, &big, stacker, NULL))
		return 1;
	while (!writer_sweeps || !stacker_sweeps)
		sleep_s(0.001);
	printf("ready\n");
	fflush(stdout);
	sleep_s(atof(argv[2]));
	stop_stacker = 1;
	pthread_join(st, NULL);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(stderr, "joined %llu\n", (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec);
	sleep_s(atof(argv[3]));
	stop_writer = 1;
	pthread_join(w, NULL);
	int wrong = 0;
	for (size_t i = 0; i < SHM_PAGES; i++)
		wrong += (unsigned char)shm[i * PG] != byte_of(i);
	printf("done: %d shared pages wrong\n", wrong);
	return 3;
}
