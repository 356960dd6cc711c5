/* A statically linked program to attach to: wss attach cannot inject into
 * it (no dynamic loader) and says so.  Prints "ready" and sleeps SECONDS.
 * usage: staticwait SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	printf("ready\n");
	fflush(stdout);
	sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 5);
	return 0;
}
