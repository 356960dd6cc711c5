/* The per-page state protocol: single-threaded cases for the two-deep
 * history and the window test, then threads recording two adjacent
 * intervals concurrently on the same pages (what a tick racing handlers
 * produces), checking that no interval is lost from the history. */
#include "config.h"
#include "engine/pagestate.h"

#include <pthread.h>
#include <stdlib.h>

#include "tests/tap/tap.h"

#define NPAGES 4096
static wss_page_t pages[NPAGES];
static pthread_barrier_t bar;

struct arg {
	uint32_t e, slot;
	int firsts;
};

static void *recorder(void *p)
{
	struct arg *a = p;
	pthread_barrier_wait(&bar);
	for (int i = 0; i < NPAGES; i++)
		a->firsts += wss_page_record(&pages[i], a->e, a->slot);
	return NULL;
}

int main(void)
{
	plan(15);
	wss_page_t p = {0, 0};
	uint32_t owner = 99;
	ok(!wss_page_in_window(&p, 1, 1, &owner), "a page never touched is in no window");
	ok(wss_page_record(&p, 3, 7), "first touch in interval 3 is recorded");
	ok(!wss_page_record(&p, 3, 8), "a second touch in the same interval is not");
	ok(wss_page_in_window(&p, 3, 1, &owner) && owner == 7, "in the window of sample 3, owned by slot 7");
	ok(!wss_page_in_window(&p, 4, 1, &owner), "not in sample 4 with a window of 1");
	ok(wss_page_in_window(&p, 5, 3, &owner), "in sample 5 with a window of 3");
	ok(!wss_page_in_window(&p, 6, 3, &owner), "out of sample 6 with a window of 3");
	ok(wss_page_record(&p, 5, 9), "touch in 5");
	ok(wss_page_in_window(&p, 4, 2, &owner) && owner == 7, "sample 4 sees interval 3 through the history, owner 7");
	ok(wss_page_record(&p, 4, 2), "a late handler of 4 still records after one of 5");
	ok(wss_page_in_window(&p, 4, 1, &owner) && owner == 2, "sample 4 now sees interval 4, owner 2");
	ok(wss_page_in_window(&p, 5, 1, &owner) && owner == 9, "sample 5 sees interval 5, owner 9");
	ok(!wss_page_record(&p, 3, 1), "an interval older than both is ignored");

	/* Concurrent: threads of interval 10 and 11 race on every page. */
	for (int i = 0; i < NPAGES; i++)
		wss_page_record(&pages[i], 8, 1);
	enum { T = 4 };
	pthread_t t[T];
	struct arg a[T];
	pthread_barrier_init(&bar, NULL, T);
	for (int i = 0; i < T; i++) {
		a[i] = (struct arg){10 + (uint32_t)(i & 1), 2 + (uint32_t)i, 0};
		pthread_create(&t[i], NULL, recorder, &a[i]);
	}
	for (int i = 0; i < T; i++)
		pthread_join(t[i], NULL);
	int bad = 0;
	for (int i = 0; i < NPAGES; i++) {
		uint64_t lo, hi;
		wss_page_load(&pages[i], &lo, &hi);
		if ((uint32_t)lo != 11 || (uint32_t)hi != 10)
			bad++;
		uint32_t o;
		if (!wss_page_in_window(&pages[i], 10, 1, &o) || (o != 2 && o != 4))
			bad++;
	}
	is_int(bad, 0, "every page holds both intervals, sample 10 sees its own toucher");
	is_int(a[0].firsts + a[2].firsts, NPAGES, "exactly one first touch per page for interval 10");
	return done_testing();
}
