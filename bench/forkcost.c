/* Cost of fork + child exit + wait, with MB megabytes of touched heap in
 * the parent (the followed child resets and re-arms all of it).
 * usage: forkcost MB   Prints microseconds per fork over 200 forks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 64;
	char *p = malloc(mb << 20);
	memset(p, 1, mb << 20);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 200; i++) {
		pid_t c = fork();
		if (c == 0) {
			p[i] = 2;
			exit(0);
		}
		waitpid(c, NULL, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 200 / 1e3);
	return 0;
}
