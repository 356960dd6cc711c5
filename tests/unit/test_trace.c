/* The page-trace reader's pure parts (cli/model/trace.c) and the page map
 * (cli/analyses/pagemap.c): an interval payload written here byte by byte and
 * decoded (CRC-32 and varints are the codec's, tests/unit/test_tracefmt.c), and
 * each way a payload can be corrupt, with the offset the reader names. */
#include "config.h"
#include "cli/model/trace.h"

#include <errno.h>
#include <string.h>

#include "cli/analyses/pagemap.h"
#include "tests/tap/tap.h"

/* seq 5, t_ns 300, level 0, sets 3, three runs: pages 0x100-0x102
 * written by 42, 0x103 the same (kind 0), 0x109 read by 7; no events. */
static const uint8_t payload[] = {0x05, 0xac, 0x02, 0x00, 0x03, 0x03, 0x80, 0x02, 0x02,
				  0x56, 0x00, 0x00, 0x00, 0x05, 0x00, 0x0f, 0x00};

static int decode(const uint8_t *p, size_t n, wss_trace_interval_t *iv, size_t *at, const char **why)
{
	static wss_trace_store_t st;
	return wss_trace_decode_interval(p, n, 12, iv, &st, at, why);
}

/* A corrupt payload: EINVAL, naming the field at offset want. */
static void corrupt(const uint8_t *p, size_t n, size_t want, const char *what, const char *name)
{
	wss_trace_interval_t iv;
	size_t at = 0;
	const char *why = NULL;
	int r = decode(p, n, &iv, &at, &why);
	ok(r == EINVAL && at == want && why && (!what || strstr(why, what)), "%s: corrupt at %zu (%s)", name, at,
	   why ? why : "decoded");
}

static void test_decode(void)
{
	wss_trace_interval_t iv;
	size_t at;
	const char *why;
	if (!ok(!decode(payload, sizeof payload, &iv, &at, &why), "a hand-written interval payload decodes"))
		return;
	ok(iv.seq == 5 && iv.t_ns == 300 && iv.level == 0 && iv.sets == 3, "seq, t_ns, level, sets");
	is_int((long long)iv.nruns, 3, "three runs");
	is_int((long long)iv.pages, 5, "five pages");
	ok(iv.runs[0].first == 0x100 && iv.runs[0].n == 3 && iv.runs[0].tid == 42 && iv.runs[0].written,
	   "run 1: 0x100, 3 pages, tid 42, written");
	ok(iv.runs[1].first == 0x103 && iv.runs[1].n == 1 && iv.runs[1].tid == 42 && iv.runs[1].written,
	   "run 2: gap 0 after run 1, kind 0 keeps tid 42 and written");
	ok(iv.runs[2].first == 0x109 && iv.runs[2].n == 1 && iv.runs[2].tid == 7 && !iv.runs[2].written,
	   "run 3: gap 5 from the end of run 2, tid 7, read");

	uint8_t p[sizeof payload + 1];
	memcpy(p, payload, sizeof payload);
	p[sizeof payload] = 0;
	corrupt(p, sizeof payload + 1, sizeof payload, "after", "a byte after the events");
	corrupt(payload, sizeof payload - 2, sizeof payload - 2, "kind", "a payload ending inside a run");
	corrupt(payload, sizeof payload - 1, sizeof payload - 1, "events", "a payload ending before the events");
	memcpy(p, payload, sizeof payload);
	p[9] = 0x00;
	corrupt(p, sizeof payload, 6, "kind 0", "kind 0 on the first run");
	memcpy(p, payload, sizeof payload);
	p[3] = 31;
	corrupt(p, sizeof payload, 3, "level", "level 31");
	memcpy(p, payload, sizeof payload);
	p[4] = 4;
	corrupt(p, sizeof payload, 4, "sets", "unknown sets bits");
	memcpy(p, payload, sizeof payload);
	p[5] = 0x7f;
	corrupt(p, sizeof payload, 5, "runs", "127 runs in 10 bytes");
	memcpy(p, payload, sizeof payload);
	p[0] = 0;
	corrupt(p, sizeof payload, 0, "seq 0", "seq 0");
	/* A first page past 2^52 (4 KiB pages of a 64-bit space). */
	static const uint8_t far[] = {0x01, 0x00, 0x00, 0x01, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80,
				      0x80, 0x80, 0x80, 0x10, 0x00, 0x01};
	corrupt(far, sizeof far, 5, "address space", "a page number past the address space");
	static const uint8_t overflow[] = {0x01, 0x00, 0x00, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x01};
	corrupt(overflow, sizeof overflow, 5, "overflow", "a gap's varint overflowing 64 bits");
	static const uint8_t empty[] = {0x07, 0x09, 0x02, 0x01, 0x00, 0x00};
	ok(!decode(empty, sizeof empty, &iv, &at, &why) && iv.nruns == 0 && iv.seq == 7 && iv.level == 2,
	   "an interval with no page touched: no runs");
	/* Two events: pages 0x200-0x203 gone, 0x300-0x301 moved to 0x500. */
	static const uint8_t evs[] = {0x07, 0x09, 0x00, 0x01, 0x00, 0x02, 0x01, 0x80, 0x04, 0x04,
				      0x02, 0x80, 0x06, 0x80, 0x0a, 0x02};
	ok(!decode(evs, sizeof evs, &iv, &at, &why) && iv.nevents == 2 && iv.events[0].type == WSS_TRACE_EV_GONE &&
	       iv.events[0].from == 0x200 && iv.events[0].n == 4 && iv.events[1].type == WSS_TRACE_EV_MOVED &&
	       iv.events[1].from == 0x300 && iv.events[1].to == 0x500 && iv.events[1].n == 2,
	   "events: pages gone, pages moved, in order");
	uint8_t bad_ev[sizeof evs];
	memcpy(bad_ev, evs, sizeof evs);
	bad_ev[6] = 9;
	corrupt(bad_ev, sizeof bad_ev, 6, "event", "an unknown event type");
}

static void test_pagemap(void)
{
	wss_pagemap_t m = {0};
	uint32_t idx;
	bool added;
	int bad = 0;
	/* 5,000 pages in two clusters, each added twice. */
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t i = 0; i < 5000; i++) {
			uint64_t pn = i < 2500 ? 0x7f0000000ull + i * 3 : 0x55000 + (5000 - i);
			if (wss_pagemap_add(&m, pn, &idx, &added) || added != (pass == 0) || (pass == 0 && idx != i))
				bad++;
		}
	is_int(bad, 0, "indices in order of first sight, a page added once");
	is_int((long long)m.n, 5000, "5,000 distinct pages");
	ok(!wss_pagemap_find(&m, 0x7f0000001ull, &idx), "a page never added is not found");
	ok(!wss_pagemap_add(&m, 0, &idx, &added) && added && idx == 5000, "page number 0 is a page like any other");
	ok(!wss_pagemap_sort(&m), "renumbered in address order");
	bad = 0;
	for (size_t i = 0; i < m.n; i++)
		if ((i && m.pages[i - 1] >= m.pages[i]) || !wss_pagemap_find(&m, m.pages[i], &idx) || idx != i)
			bad++;
	is_int(bad, 0, "after sorting, index i is the i-th page by address, and found as such");
	wss_pagemap_release(&m);
}

int main(void)
{
	plan(26);
	test_decode();
	test_pagemap();
	return done_testing();
}
