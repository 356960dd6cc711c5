/* A program that computes without a system call: one thread sweeps the
 * PAGES pages of a buffer, writing each, over and over for SECONDS; then
 * it checks the buffer, prints what it found and exits with status 3.  wss attach
 * finds no thread waiting in a system call here and stops this one in its
 * own code.  Prints "ready" (flushed) once the buffer is mapped.
 * usage: spinner SECONDS PAGES */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define PG 4096

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* the vdso: no system call */
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	double secs = atof(argv[1]);
	long pages = atol(argv[2]);
	unsigned char *buf = mmap(NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	printf("ready\n");
	fflush(stdout);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), sweeps = 0;
	while (now_ns() < end) {
		for (long i = 0; i < pages; i++)
			buf[(size_t)i * PG]++;
		sweeps++;
	}
	/* Every page holds the number of sweeps (mod 256): nothing of ours
	 * changed the program's memory. */
	long wrong = 0;
	for (long i = 0; i < pages; i++)
		wrong += buf[(size_t)i * PG] != (unsigned char)sweeps;
	printf("done: %ld pages, %ld wrong\n", pages, wrong);
	return 3;
}
