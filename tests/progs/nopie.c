/* Built without PIE by tests/integration/runtimes.sh.  A non-PIE executable
 * that takes the address of free makes its PLT entry free's canonical
 * address, so the C library's own calls to free jump through this
 * executable's .got.plt, which wss tracks.  A thread's exit frees its TLS
 * that way, the engine thread's too.  The exit handler sleeps for many
 * intervals first, so that the page is armed when the engine stops: the
 * engine thread must take that fault (cc1 died of it under mprotect). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void (*volatile keep)(void *);
/* Between .got.plt and .bss, where the executable's own destructor writes
 * at exit: the .got.plt page is then left alone after the sleep. */
char pad[2 * 4096] = {1};

static void later(void)
{
	struct timespec t = {0, 50 * 1000 * 1000};
	nanosleep(&t, NULL);
}

int main(void)
{
	atexit(later);
	keep = free; /* in code: an absolute address, the canonical PLT */
	keep(malloc(100));
	puts("nopie ok");
	return 0;
}
