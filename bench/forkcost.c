/* Cost of fork + child exit + wait, with MB megabytes of touched heap in
 * the parent.  The child writes one byte and exits at once, or with "exec"
 * execs /bin/true at once: what shells and make do thousands of times.
 * usage: forkcost MB [exec]   Prints microseconds per fork over 200 forks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 64;
	int ex = argc > 2 && !strcmp(argv[2], "exec");
	char *p = malloc(mb << 20);
	memset(p, 1, mb << 20);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 200; i++) {
		pid_t c = fork();
		if (c == 0) {
			p[i] = 2;
			if (ex)
				execl("/bin/true", "true", (char *)NULL);
			exit(0);
		}
		waitpid(c, NULL, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 200 / 1e3);
	return 0;
}
