/* The valgrind-ws paper's demo: claim 4 KiB pages one at a time up to 1024
 * (each claim writes its page), release them back to zero, and all the
 * while write one byte to every second claimed page.  Repeated REPS times
 * (default 10), one step every STEP_US microseconds (default 1000).  Its
 * working set ramps to about 512 pages and back, a sawtooth.
 * usage: pageramp [REPS] [STEP_US] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NPAGES 1024
#define PAGE 4096

static void step_pause(long us)
{
	if (us <= 0)
		return; /* as fast as possible (the benchmark) */
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts))
		;
}

/* Write one byte to every second claimed page. */
static void touch_pages(char **pages, int claimed)
{
	for (int j = 0; j < claimed; j += 2)
		pages[j][0]++;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 10;
	long step = argc > 2 ? atol(argv[2]) : 1000;
	static char *pages[NPAGES];
	long sum = 0;
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < NPAGES; i++) {
			pages[i] = aligned_alloc(PAGE, PAGE);
			if (!pages[i])
				return 1;
			pages[i][0] = (char)i;
			touch_pages(pages, i + 1);
			step_pause(step);
		}
		for (int i = NPAGES - 1; i >= 0; i--) {
			sum += pages[i][0];
			free(pages[i]);
			touch_pages(pages, i);
			step_pause(step);
		}
	}
	printf("pageramp: %d repetitions, checksum %ld\n", reps, sum);
	return 0;
}
