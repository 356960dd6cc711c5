/* Every kind of tracked memory at once, with known counts per interval
 * (kinds.sh): SHARED_PAGES of MAP_SHARED|MAP_ANONYMOUS written, as many of a
 * private anonymous mapping written, MFD_PAGES of a memfd mapped shared
 * written, SYSV_PAGES of a System V segment written, FILE_READ pages of a
 * file (argv[1], FILE_PAGES long) mapped read-only and read, and, with
 * "shared-file", FILE_WRITE pages of the same file mapped shared and
 * written (one byte each: the page number's low byte).  Three manual
 * intervals, then everything unmapped and a last one.  Prints the sum of
 * the bytes read so that the run's output is compared with a native one. */
#include <fcntl.h>
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
	if (argc < 2) {
		fprintf(stderr, "usage: kinds FILE [shared-file]\n");
		return 2;
	}
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
	wss_tick();
	for (int it = 0; it < 3; it++) {
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
		wss_tick();
	}
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
