/* A program that closes every descriptor it did not open, as daemons do,
 * then opens files that reuse those numbers and writes to them.  Under wss
 * nothing of the profile or the summary may land in its files.
 * usage: fdclose DIR */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (int fd = 2; fd < 1024; fd++)
		close(fd);
	char path[4096];
	int fds[8];
	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof path, "%s/victim.%d", argv[1], i);
		fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	char *p = malloc(1 << 20);
	for (int r = 0; r < 50; r++) {
		memset(p, r, 1 << 20);
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 8; i++)
		if (fds[i] >= 0 && write(fds[i], "mine\n", 5) != 5)
			return 1;
	free(p);
	return 0;
}
