/* The engine without LD_PRELOAD: registry, pins, the tick and the lock
 * witness, on a fake backend (the backend table as a seam, as jemalloc
 * tests its hpa through hooks).  The fake keeps an "armed" bit per page and
 * a log of what the engine asked of it; a test "touch" does what a fault
 * handler does: open the page if armed, and report a first touch.  Time base
 * manual: each wss_engine_tick_manual() ends one interval, and the sample it
 * writes is read back from the profile. */
#include "config.h"
#include "engine/internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/tap/tap.h"

#define NP 16
#define PG WSS_PAGE_SIZE

static uintptr_t base;           /* NP pages the test tracks */
static bool armed[NP];           /* the fake's protection, per page */
static int attaches, detaches;   /* calls seen */
static int arms;                 /* arm calls since the last reset */
static int arm_calls[NP];        /* ... per page */
static int harvests;             /* harvest calls since the last reset (fake_hy) */
static uintptr_t sp_s, sp_e;     /* a sparse range under test */
static int sp_arms;              /* arm calls inside it */
static uintptr_t sp_armed[4096]; /* ... their pages, the first 4096 */
static bool written[NP];         /* fake_hy: written since its last harvest */

static int page_of(uintptr_t a) { return (int)((a - base) / PG); }

static void set_armed(uintptr_t s, uintptr_t e, bool on)
{
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG)
			armed[page_of(a)] = on;
}

static int fake_probe(char *why, size_t n) { return 0; }
static int fake_attach(uintptr_t s, uintptr_t e, bool arm) { attaches++; set_armed(s, e, arm); return 0; }
static int fake_arm(uintptr_t s, uintptr_t e)
{
	arms++;
	if (s >= sp_s && e <= sp_e && sp_s < sp_e) {
		if (sp_arms < 4096)
			sp_armed[sp_arms] = s;
		sp_arms++;
	}
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG)
			arm_calls[page_of(a)]++;
	set_armed(s, e, true);
	return 0;
}
static void fake_disarm(uintptr_t s, uintptr_t e) { set_armed(s, e, false); }
static void fake_detach(uintptr_t s, uintptr_t e) { detaches++; }

static const wss_backend_t fake = {
	.name = "fake",
	.sees = "reads and writes",
	.needs_pins = true,
	.probe = fake_probe,
	.attach = fake_attach,
	.arm = fake_arm,
	.disarm = fake_disarm,
	.detach = fake_detach,
};

/* The fake with a harvest and faults, as hybrid: harvest reports the pages
 * written since the last one (a test's write sets the bit).  Its fault is
 * never called: a test's touch does the handler's work. */
static bool fake_fault(uintptr_t addr, bool write, bool exec, const void *uc) { return false; }
static int fake_harvest(uintptr_t s, uintptr_t e, void (*w)(uintptr_t, uintptr_t, void *), void *arg)
{
	harvests++;
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG && written[page_of(a)]) {
			written[page_of(a)] = false;
			w(a, a + PG, arg);
		}
	return 0;
}
static int fake_observe(uintptr_t s, uintptr_t e) { return 0; }

/* The fake with write protection that follows the sample: what is watched
 * (write-protected for a harvest) per page, and in which order pages were
 * watched and armed. */
static bool watched[NP];
static int op_seq, watch_seq[NP], arm_seq[NP];
static int watch_calls, unwatch_calls;
static uintptr_t watch_log[256];
static int nwatch_log;

static int fake_watch(uintptr_t s, uintptr_t e)
{
	watch_calls++;
	if (nwatch_log < 256)
		watch_log[nwatch_log++] = s;
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG) {
			watched[page_of(a)] = true;
			written[page_of(a)] = false; /* write-protected: not written since */
			watch_seq[page_of(a)] = ++op_seq;
		}
	return 0;
}
static int fake_unwatch(uintptr_t s, uintptr_t e)
{
	unwatch_calls++;
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG)
			watched[page_of(a)] = false;
	return 0;
}
static void touch(int i);
static int hook_page = -1; /* a program thread touches and writes it right after it is armed */
static int fake_arm_seq(uintptr_t s, uintptr_t e)
{
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG)
			arm_seq[page_of(a)] = ++op_seq;
	int r = fake_arm(s, e);
	for (uintptr_t a = s; a < e; a += PG)
		if (a >= base && a < base + NP * PG && page_of(a) == hook_page) {
			hook_page = -1;
			touch(page_of(a));
			if (watched[page_of(a)])
				written[page_of(a)] = true;
		}
	return r;
}
static int fake_attach_w(uintptr_t s, uintptr_t e, bool arm)
{
	fake_attach(s, e, arm);
	if (arm)
		fake_watch(s, e);
	return 0;
}

static const wss_backend_t fake_hw = {
	.name = "fake",
	.sees = "reads and writes, writes apart",
	.needs_pins = true,
	.probe = fake_probe,
	.attach = fake_attach_w,
	.watch = fake_watch,
	.unwatch = fake_unwatch,
	.arm = fake_arm_seq,
	.disarm = fake_disarm,
	.detach = fake_detach,
	.fault = fake_fault,
	.harvest = fake_harvest,
	.observe = fake_observe,
};

static const wss_backend_t fake_hy = {
	.name = "fake",
	.sees = "reads and writes, writes apart",
	.needs_pins = true,
	.probe = fake_probe,
	.attach = fake_attach,
	.arm = fake_arm,
	.disarm = fake_disarm,
	.detach = fake_detach,
	.fault = fake_fault,
	.harvest = fake_harvest,
	.observe = fake_observe,
};

static void reset_calls(void)
{
	arms = harvests = 0;
	memset(arm_calls, 0, sizeof arm_calls);
}

/* A handler that opens page i, then is held up before it reads the epoch
 * (preempted), for slow_ns: the interleaving fault.c's announcement is for. */
static int slow_page;
static long slow_ns;
static volatile int slow_opened;

static void *slow_handler(void *arg)
{
	uintptr_t a = base + (uintptr_t)slow_page * PG;
	uint32_t ticket = wss_engine_opening();
	armed[slow_page] = false;
	slow_opened = 1;
	struct timespec ts = {0, slow_ns};
	nanosleep(&ts, NULL);
	wss_engine_opened(a, wss_shadow_flags(a), NULL, ticket);
	return arg;
}

/* What a fault handler does on a touch of page i: nothing if open. */
static void touch(int i)
{
	uintptr_t a = base + (uintptr_t)i * PG;
	if (!armed[i])
		return;
	armed[i] = false;
	wss_engine_touched(a, wss_shadow_flags(a), NULL);
}

static char profile[256];

/* data_pages of the last sample in the profile, -1 if none. */
static long last_sample(void)
{
	FILE *f = fopen(profile, "r");
	char line[8192];
	long v = -1;
	while (f && fgets(line, sizeof line, f)) {
		const char *p;
		if (strstr(line, "\"type\":\"sample\"") && (p = strstr(line, "\"data_pages\":")))
			v = atol(p + 13);
	}
	if (f)
		fclose(f);
	return v;
}

/* Does the last sample record contain s? */
static bool last_sample_has(const char *s)
{
	FILE *f = fopen(profile, "r");
	char line[8192];
	bool has = false;
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "\"type\":\"sample\""))
			has = strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return has;
}

static long tick(void)
{
	wss_engine_tick_manual();
	return last_sample();
}

static void locked_track(int from, int n)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_track_locked(base + (uintptr_t)from * PG, (size_t)n * PG, PROT_READ | PROT_WRITE, WSS_KIND_ANON);
	wss_engine_unlock(&ls);
}

static void locked_untrack(int from, int n)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_untrack_locked(base + (uintptr_t)from * PG, (size_t)n * PG);
	wss_engine_unlock(&ls);
}

static void locked_track_at(uintptr_t a, size_t len)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_track_locked(a, len, PROT_READ | PROT_WRITE, WSS_KIND_ANON);
	wss_engine_unlock(&ls);
}

static void locked_untrack_at(uintptr_t a, size_t len)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_engine_untrack_locked(a, len);
	wss_engine_unlock(&ls);
}

/* The end of an auto test's range: untracked, unmapped, exact again, two
 * ticks under the test's manual clock. */
static void auto_range_end(char *r, size_t pages)
{
	E.set.time_base = WSS_ENGINE_MANUAL;
	locked_untrack_at((uintptr_t)r, pages * PG);
	munmap(r, pages * PG);
	E.set.mode = WSS_TRACK_EXACT;
	E.fault_cost_ns = 0;
	tick();
	tick();
}

/* A "Name:   N kB" line of /proc/self/status, in KiB. */
static long status_kb(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, name, n) && line[n] == ':')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

/* The raw count of the last sample ("sampled":{...,"data":x), -1 if none. */
static long last_sampled_x(void)
{
	FILE *f = fopen(profile, "r");
	char line[8192];
	long v = -1;
	while (f && fgets(line, sizeof line, f)) {
		const char *p;
		if (strstr(line, "\"type\":\"sample\"") && (p = strstr(line, "\"sampled\":{")) &&
		    (p = strstr(p, "\"data\":")))
			v = atol(p + 7);
	}
	if (f)
		fclose(f);
	return v;
}

static int count_armed_from(int from)
{
	int n = 0;
	for (int i = from; i < NP; i++)
		n += armed[i];
	return n;
}

static int count_armed(void) { return count_armed_from(0); }

int main(void)
{
	char dir[] = "/tmp/wss-test-engine-XXXXXX";
	if (!mkdtemp(dir))
		bail("mkdtemp");
	snprintf(profile, sizeof profile, "%s/p.jsonl", dir);
	void *map = mmap(NULL, NP * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		bail("mmap");
	base = (uintptr_t)map;

	wss_engine_settings_t set = {
		.backend = "auto",
		.time_base = WSS_ENGINE_MANUAL,
		.interval_ns = 100000000,
		.window_intervals = 1,
		.output = profile,
		.header_timing = ",\"time_base\":\"manual\"",
		.header_config = "",
		.mode = WSS_TRACK_EXACT,
	};
	wss_engine_start_t start = {.argc = 0, .argv = NULL, .set = &set};
	char err[512];
	wss_lifecycle_test_backend = &fake;
	if (wss_engine_init(&start, err, sizeof err))
		bail("wss_engine_init: %s", err);
	is_str(E.backend->name, "fake", "the test backend is the engine's");

	/* ---- registry ---- */
	locked_track(0, NP);
	ok(E.regions.n == 1 && E.regions.v[0].start == base && E.regions.v[0].end == base + NP * PG,
	   "track: one region of %d pages", NP);
	ok(attaches == 1 && count_armed() == NP, "the backend attached all of it");
	locked_untrack(6, 4);
	ok(E.regions.n == 2 && E.regions.v[0].end == base + 6 * PG && E.regions.v[1].start == base + 10 * PG,
	   "untrack of pages 6-9 splits the region in two");
	ok(!(*wss_shadow_flags(base + 7 * PG) & WSS_PF_TRACKED) && (*wss_shadow_flags(base + 5 * PG) & WSS_PF_TRACKED),
	   "and their flags say so");
	locked_track(6, 4);
	ok(E.regions.n == 1, "tracking them again merges the region");

	/* ---- the tick: each interval counts the pages touched in it ---- */
	is_int(tick(), 0, "interval 1: nothing touched");
	ok(count_armed() == NP, "the tick armed every tracked page");
	for (int i = 0; i < 5; i++)
		touch(i);
	touch(2); /* a second touch in the interval: open, not counted again */
	is_int(tick(), 5, "interval 2: five pages touched");
	is_int(tick(), 0, "interval 3: none");
	touch(15);
	is_int(tick(), 1, "interval 4: one");

	/* A page the program protects itself is re-armed only if untouched in
	 * the interval (registry.c: a re-arm after the program's mprotect). */
	touch(3);
	{
		wss_lockstate_t ls;
		wss_engine_lock(&ls);
		set_armed(base, base + NP * PG, false); /* the program's mprotect opened them all */
		wss_engine_protect_locked(base, NP * PG, PROT_READ | PROT_WRITE);
		wss_engine_unlock(&ls);
	}
	ok(!armed[3] && armed[4] && count_armed() == NP - 1,
	   "mprotect by the program: the pages not touched in this interval are armed again");
	is_int(tick(), 1, "and the touched one still counts once");

	/* ---- pins: a buffer handed to the kernel stays open and counts ---- */
	int pin = wss_engine_pin((const void *)(base + 8 * PG + 100), 2 * PG);
	ok(pin > 0, "pin a buffer over pages 8-10");
	ok(!armed[8] && !armed[9] && !armed[10], "its pages are open");
	is_int(tick(), 3, "the interval it was pinned in counts its 3 pages");
	ok(!armed[8] && !armed[9] && !armed[10] && armed[7] && armed[11], "the tick leaves pinned pages open");
	is_int(tick(), 3, "and counts them in every interval the pin lasts");
	wss_engine_unpin(pin);
	is_int(tick(), 3, "unpinned: the interval it ended in still counts them");
	ok(armed[8] && armed[9] && armed[10], "the next tick arms them again");
	is_int(tick(), 0, "and nothing is counted once they are quiet");
	is_int(wss_engine_pin((const void *)(base + NP * PG), PG), 0, "a buffer outside tracked memory: no pin");

	/* ---- mremap: history follows the data ---- */
	touch(1);
	{
		wss_lockstate_t ls;
		wss_engine_lock(&ls);
		wss_engine_move_locked(base, 4 * PG, base + 12 * PG, 4 * PG); /* pages 0-3 now at 12-15 */
		wss_engine_unlock(&ls);
	}
	ok(E.regions.n == 1 && E.regions.v[0].start == base + 4 * PG, "mremap: the old range is no longer tracked");
	is_int(tick(), 1, "the touch made before the move counts at its new address");

	/* ---- sampled tracking: the members of the sample armed, the count
	 * scaled, exact again after ---- */
	for (int i = 4; i < NP; i++)
		touch(i); /* every tracked page seen in an exact interval */
	tick();
	E.set.mode = WSS_TRACK_SAMPLED;
	E.set.sample_level = 1;
	tick(); /* the next interval is sampled at 1/2 */
	int members = 0;
	bool only_members = true;
	for (int i = 4; i < NP; i++) {
		bool mem = wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, 1, E.seed);
		members += mem;
		only_members = only_members && armed[i] == mem;
	}
	ok(only_members && members == (int)wss_sampling_count(base + 4 * PG, base + NP * PG, 1),
	   "sampled 1/2: exactly the members of the sample are armed");
	for (int i = 4; i < NP; i++)
		touch(i);
	is_int(tick(), 12, "every page touched: the estimate is the 12 tracked pages");
	{
		wss_profile_summary_t sum;
		wss_out_summary(&sum);
		ok(sum.rate_max == 2 && sum.data.total >= 12 && sum.data.total_ci.lo == sum.data.total,
		   "the run's total: pages first seen in exact intervals count as seen, not as a sample "
		   "(%llu, interval from %llu)", (unsigned long long)sum.data.total,
		   (unsigned long long)sum.data.total_ci.lo);
	}
	ok(last_sample_has("\"rate\":2,\"ci\":{\"data\":[") && last_sample_has(",12]}"),
	   "the sample says its rate and interval, at most the tracked pages");
	int x = 0;
	for (int i = 4; i < 6; i++) {
		x += wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, 1, E.seed);
		touch(i);
	}
	is_int(tick(), (x * 12 + members / 2) / members, "pages 4-5 touched: their members scaled to the 12 pages");
	{
		/* A range unmapped in the interval its pages were touched in:
		 * they count in no sample, but in the run's total. */
		char *r = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r == MAP_FAILED)
			bail("mmap");
		locked_track_at((uintptr_t)r, 64 * PG);
		wss_profile_summary_t before, after;
		wss_out_summary(&before);
		int m = 0;
		for (int i = 0; i < 64; i++) {
			uintptr_t a = (uintptr_t)r + (uintptr_t)i * PG;
			wss_engine_touched(a, wss_shadow_flags(a), NULL);
			m += wss_sampling_member(a, E.level_max);
		}
		locked_untrack_at((uintptr_t)r, 64 * PG);
		munmap(r, 64 * PG);
		tick();
		wss_out_summary(&after);
		ok(m > 0 && after.data.total >= before.data.total + (uint64_t)m,
		   "a range unmapped before the tick: its %d members touched count in the run's total (%llu -> %llu)", m,
		   (unsigned long long)before.data.total, (unsigned long long)after.data.total);
	}
	{
		/* A range moved (mremap) before the tick: its touches count once,
		 * at the new addresses, not also as gone at the old ones. */
		/* Addresses no other test used: the run's totals count an
		 * address once. */
		char *r = mmap((void *)0x310000000000UL, 128 * PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (r == MAP_FAILED)
			bail("mmap at 0x310000000000");
		uintptr_t from = (uintptr_t)r, to = (uintptr_t)r + 64 * PG;
		locked_track_at(from, 64 * PG);
		uint32_t L = E.level_max;
		uint64_t s0 = 0;
		for (uint32_t l = L; l <= WSS_SAMPLE_LEVEL_MAX; l++)
			s0 += E.total_hist[0][l];
		/* The members of L there not yet counted in the run (bits 2 and
		 * 4 of the rever byte: data counted in an exact, a sampled
		 * window; an earlier test may have used these addresses). */
		int m_to = 0;
		for (int i = 0; i < 64; i++) {
			uintptr_t a = from + (uintptr_t)i * PG, b = to + (uintptr_t)i * PG;
			wss_engine_touched(a, wss_shadow_flags(a), NULL);
			uint8_t *rb = wss_shadow_rever(b), *ra = wss_shadow_rever(a);
			m_to += wss_sampling_member(b, L) && !((rb ? *rb : 0) & 6) && !((ra ? *ra : 0) & 6);
		}
		{
			wss_lockstate_t ls;
			wss_engine_lock(&ls);
			wss_engine_move_locked(from, 64 * PG, to, 64 * PG);
			wss_engine_unlock(&ls);
		}
		tick();
		uint64_t s1 = 0;
		for (uint32_t l = L; l <= WSS_SAMPLE_LEVEL_MAX; l++)
			s1 += E.total_hist[0][l];
		ok(E.level_max == L && s1 - s0 == (uint64_t)m_to,
		   "a range moved before the tick: its members at the new addresses count once in the total (%llu, want %d)",
		   (unsigned long long)(s1 - s0), m_to);
		locked_untrack_at(to, 64 * PG);
		munmap(r, 128 * PG);
	}

	/* ---- sampled at a steady level: the tick re-arms and harvests the
	 * members touched in the interval, and no other ---- */
	int m1 = -1, m2 = -1;
	for (int i = 4; i < NP; i++)
		if (wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, 1, E.seed)) {
			if (m1 < 0)
				m1 = i;
			else if (m2 < 0)
				m2 = i;
		}
	if (m2 < 0)
		bail("fewer than two members at 1/2 in 12 pages");
	tick();
	reset_calls();
	is_int(tick(), 0, "steady 1/2, nothing touched: nothing counted");
	is_int(arms, 0, "and no arm call: every member is still armed");
	touch(m1);
	reset_calls();
	tick();
	is_int(arms, 1, "one member touched: one arm call");
	ok(arm_calls[m1] == 1 && armed[m1], "the touched member is armed again");
	ok(arm_calls[m2] == 0 && armed[m2], "an untouched member is left alone, still armed");
	/* The same with a harvest (hybrid's shape). */
	E.backend = &fake_hy;
	tick();
	reset_calls();
	tick();
	is_int(harvests, 0, "with a harvest: no harvest call when no member was touched");
	touch(m1);
	written[m1] = true;
	reset_calls();
	tick();
	ok(harvests == 1 && arms == 1 && armed[m1], "one touched member: one harvest call, one arm call");
	ok(last_sample_has("\"write\":1}"), "and its write counted in the sample");
	E.backend = &fake;
	/* More first touches than the list holds: the tick walks every
	 * member, as without a list. */
	uint32_t cap = E.touched_cap;
	E.touched_cap = 1;
	touch(m1);
	touch(m2);
	reset_calls();
	is_int(tick(), (2 * 12 + members / 2) / members, "list overflowed: both touches still counted");
	ok(arms == members && armed[m1] && armed[m2], "and every member armed again, one call each (%d)", arms);
	E.touched_cap = cap;
	reset_calls();
	tick();
	is_int(arms, 0, "the next interval has its list again");
	/* A handler that opened a member and is held up across the tick: the
	 * tick waits for it to be in flight (it then records the touch in the
	 * next interval), so the next tick finds the member in its list.
	 * Without the wait both ticks would pass it, and the member would
	 * stay open and unseen for an interval. */
	{
		pthread_t t;
		slow_page = m2;
		slow_ns = 50000000;
		slow_opened = 0;
		if (pthread_create(&t, NULL, slow_handler, NULL))
			bail("pthread_create");
		while (!slow_opened)
			sched_yield();
		tick();
		reset_calls();
		is_int(tick(), (12 + members / 2) / members, "a handler held up across a tick: its touch counts in the next interval");
		ok(arm_calls[m2] == 1 && armed[m2], "and the tick after arms the member again");
		pthread_join(t, NULL);
	}
	/* mremap's disarm (the call may fail, the range stays tracked):
	 * members open that no list holds, so the next tick walks them all. */
	{
		wss_lockstate_t ls;
		wss_engine_lock(&ls);
		wss_engine_disarm_locked(base + 4 * PG, 12 * PG);
		wss_engine_unlock(&ls);
	}
	reset_calls();
	tick();
	ok(arms == members && armed[m1] && armed[m2], "after a disarm the tick arms every member (%d calls)", arms);
	/* A pinned member across a change of level (1/2 to 1/4, whose
	 * members are members of 1/2): the change's walk leaves it open, the
	 * tick after it takes the list, which must hold it. */
	int m4 = -1;
	for (int i = 4; i < NP && m4 < 0; i++)
		if (wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, 2, E.seed))
			m4 = i;
	if (m4 < 0)
		bail("no member at 1/4 in 12 pages");
	int pin4 = wss_engine_pin((const void *)(base + (uintptr_t)m4 * PG), 1);
	ok(pin4 > 0 && !armed[m4], "pin a member of 1/4: open");
	E.set.sample_level = 2;
	tick(); /* the change: every member of 1/4 armed but the pinned one */
	ok(!armed[m4], "the change of level leaves the pinned member open");
	wss_engine_unpin(pin4);
	reset_calls();
	tick();
	ok(armed[m4] && arm_calls[m4] == 1, "the tick after the change arms it once unpinned (%d calls)", arms);
	touch(m4);
	int n4 = (int)wss_sampling_count(base + 4 * PG, base + NP * PG, 2);
	is_int(tick(), (12 + n4 / 2) / n4, "and its next touch counts");
	/* ---- write protection follows the sample (uffd-wp, hybrid) ---- */
	{
		E.backend = &fake_hw;
		for (int i = 4; i < NP; i++)
			watched[i] = wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, 2, E.seed);
		E.set.sample_level = 3;
		tick(); /* to 1/8: coarser */
		bool follows = true;
		for (int i = 4; i < NP; i++)
			follows = follows && watched[i] == wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, 3, E.seed);
		ok(follows, "a coarser sample: the pages leaving it are no longer write-protected, its members still are");
		E.set.sample_level = 1;
		op_seq = 0;
		memset(watch_seq, 0, sizeof watch_seq);
		memset(arm_seq, 0, sizeof arm_seq);
		tick(); /* to 1/2: finer */
		bool before = true;
		follows = true;
		int joined = 0;
		for (int i = 4; i < NP; i++) {
			uint64_t pn = (base >> WSS_PAGE_SHIFT) + (uint64_t)i;
			follows = follows && watched[i] == wss_sample_member(pn, 1, E.seed);
			if (wss_sample_member(pn, 1, E.seed) && !wss_sample_member(pn, 3, E.seed)) {
				joined++;
				before = before && watch_seq[i] && arm_seq[i] && watch_seq[i] < arm_seq[i];
			}
		}
		ok(follows && joined > 0, "a finer sample: the pages joining it are write-protected (%d), the others not", joined);
		ok(before, "each before it is armed (its old write bit is stale)");
		/* A joining page touched and written by a program thread right
		 * after the tick arms it, before the tick's harvest: its write is
		 * the next interval's, not a stale bit to drop. */
		E.set.sample_level = 3;
		tick();
		tick();
		int P = -1;
		for (int i = 4; i < NP && P < 0; i++) {
			uint64_t pn = (base >> WSS_PAGE_SHIFT) + (uint64_t)i;
			if (wss_sample_member(pn, 1, E.seed) && !wss_sample_member(pn, 3, E.seed))
				P = i;
		}
		if (P < 0)
			bail("no member of 1/2 outside 1/8 in 12 pages");
		E.set.sample_level = 1;
		hook_page = P;
		tick(); /* to 1/2: P is armed, then touched and written */
		ok(hook_page < 0, "the joining page was touched and written after its arming");
		tick();
		ok(last_sample_has("\"data\":1,\"read\":0,\"write\":1}"),
		   "the next sample counts it written (the harvest left its bit for the next tick)");
		/* A range mapped at a sampled level: registered unprotected, its
		 * members write-protected one by one. */
		char *r = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r == MAP_FAILED)
			bail("mmap");
		nwatch_log = 0;
		watch_calls = 0;
		locked_track_at((uintptr_t)r, 64 * PG);
		bool members_only = watch_calls == nwatch_log;
		for (int i = 0; i < nwatch_log; i++)
			members_only = members_only && wss_sampling_member(watch_log[i], E.level);
		is_int(watch_calls, (long)wss_sampling_count((uintptr_t)r, (uintptr_t)r + 64 * PG, E.level),
		       "a range mapped at 1/%u: one write-protect call per member", 1U << E.level);
		ok(members_only, "and none for the other pages");
		locked_untrack_at((uintptr_t)r, 64 * PG);
		munmap(r, 64 * PG);
		E.set.sample_level = 2;
		tick();
		E.backend = &fake;
	}
	/* ---- a sparse range: 256 GiB, registered in O(1), members only ---- */
	{
		size_t span = 256ULL << 30;
		void *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			bail("mmap of 256 GiB of address space");
		sp_s = (uintptr_t)r;
		sp_e = sp_s + span;
		long budget = E.vma_budget;
		E.vma_budget = 2048; /* room for 1024 runs: a span of 17 at 2^26 pages */
		long rss0 = status_kb("VmRSS"), pte0 = status_kb("VmPTE");
		sp_arms = 0;
		locked_track_at(sp_s, span);
		uint32_t L = E.level;
		uint64_t nm = wss_sampling_count(sp_s, sp_e, L), nu = wss_sampling_units(sp_s, sp_e, L);
		ok(wss_sparse_any() && E.regions.n == 2, "a 256 GiB mapping is tracked, as a sparse range");
		/* Its members are clusters (span 17: 512 blocks of 2^17 pages),
		 * so the VMA budget does not bound the level; the members' page
		 * state does (WSS_SPARSE_MEMBER_PAGES: 2^19 pages at 1 in 128). */
		is_int(L, 7, "the level rose at once to where its members' page state fits");
		ok(nm + 1024 >= 1 << 19 && nm <= (1 << 19) + 1024, "2^19 member pages, give or take a cluster at each end (%llu)",
		   (unsigned long long)nm);
		is_int(sp_arms, (long)nu, "one arm call per cluster (%llu clusters of %llu pages), none for the other pages",
		       (unsigned long long)nu, (unsigned long long)(nu ? nm / nu : 0));
		bool members_only = true;
		for (int i = 0; i < sp_arms && i < 4096; i++)
			members_only = members_only && wss_sampling_member(sp_armed[i], L);
		ok(members_only, "and each of them a member");
		int flags0 = 0, state0 = 0, seen = 0, prot_rw = 0;
		for (uint64_t i = 0; i < 20000; i++) {
			uintptr_t a = sp_s + ((i * 0x9e3779b97f4a7c15ULL) % (span >> WSS_PAGE_SHIFT)) * PG;
			if (wss_sampling_member(a, L))
				continue;
			seen++;
			flags0 += *wss_shadow_flags(a) == 0;
			state0 += wss_shadow_page(a)->cur == 0 && wss_shadow_page(a)->prev == 0;
			int prot = 0;
			prot_rw += wss_engine_tracked_page(a, &prot) && prot == (PROT_READ | PROT_WRITE);
		}
		ok(flags0 == seen && state0 == seen, "non-members: no flags, no history written (%d pages looked at)", seen);
		is_int(prot_rw, seen, "yet each is tracked, with its protection, through the range's entry");
		long drss = status_kb("VmRSS") - rss0, dpte = status_kb("VmPTE") - pte0;
		diag("registering 256 GiB: VmRSS %+ld KiB, VmPTE %+ld KiB", drss, dpte);
		ok(drss < 16384 && dpte < 16384, "and the registration cost under 16 MiB of memory and page tables");

		/* Touch 10 members (what the fault path does), one of them in
		 * [128, 192) GiB, unmapped below. */
		uintptr_t tm[10];
		int nt = 0, mid = -1;
		for (int i = 0; i < sp_arms && i < 4096 && nt < 10; i++)
			if (nt < 9 || (sp_armed[i] >= sp_s + (128ULL << 30) && sp_armed[i] < sp_s + (192ULL << 30))) {
				if (sp_armed[i] >= sp_s + (128ULL << 30) && sp_armed[i] < sp_s + (192ULL << 30))
					mid = nt;
				tm[nt++] = sp_armed[i];
			}
		if (nt < 10 || mid < 0)
			bail("fewer than 10 members, or none in [128, 192) GiB");
		for (int i = 0; i < nt; i++)
			wss_engine_touched(tm[i], wss_shadow_flags(tm[i]), NULL);
		uint64_t tracked = 12 + (span >> WSS_PAGE_SHIFT);
		uint64_t sparse_members = nm + wss_sampling_count(base + 4 * PG, base + NP * PG, L);
		long est = (long)wss_estimate_pages(tracked, sparse_members, 10).est;
		sp_arms = 0;
		is_int(tick(), est, "10 members touched: the count is scaled to the %llu tracked pages",
		       (unsigned long long)tracked);
		is_int(last_sampled_x(), 10, "from 10 members counted");
		is_int(sp_arms, 10, "the tick armed the 10 touched members again, and no other");
		sp_arms = 0;
		is_int(tick(), 0, "nothing touched: nothing counted");
		is_int(sp_arms, 0, "and nothing armed");

		/* The program's mprotect and munmap of parts of it. */
		{
			wss_lockstate_t ls;
			wss_engine_lock(&ls);
			wss_engine_protect_locked(sp_s + (64ULL << 30), 64ULL << 30, PROT_READ);
			wss_engine_unlock(&ls);
		}
		int prot = 0;
		ok(wss_engine_tracked_page(sp_s + (100ULL << 30), &prot) && prot == PROT_READ,
		   "mprotect of [64, 128) GiB: a page there has the new protection");
		ok(wss_engine_tracked_page(sp_s + (10ULL << 30), &prot) && prot == (PROT_READ | PROT_WRITE) &&
		   wss_engine_tracked_page(sp_s + (200ULL << 30), &prot) && prot == (PROT_READ | PROT_WRITE),
		   "pages on both sides keep theirs");
		wss_engine_touched(tm[mid], wss_shadow_flags(tm[mid]), NULL);
		locked_untrack_at(sp_s + (128ULL << 30), 64ULL << 30);
		ok(!wss_engine_tracked_page(sp_s + (150ULL << 30), NULL) && wss_engine_tracked_page(sp_s + (127ULL << 30), NULL) &&
		   wss_engine_tracked_page(sp_s + (192ULL << 30), NULL), "munmap of [128, 192) GiB: untracked there only");
		ok(wss_shadow_page(tm[mid])->cur == 0 && wss_shadow_page(tm[mid])->prev == 0,
		   "and the history of its member touched in this interval is forgotten");
		is_int(E.regions.n, 3, "the registry has the two pieces and the dense range");
		locked_untrack_at(sp_s, span);
		ok(!wss_sparse_any() && E.regions.n == 1, "unmapped whole: no sparse range left");
		E.set.mode = WSS_TRACK_EXACT;
		uint64_t huge = E.huge_n;
		locked_track_at(sp_s, span);
		ok(E.huge_n == huge + 1 && !wss_sparse_any() && E.regions.n == 1,
		   "exact mode: a mapping over 64 GiB is left out and counted, as before");
		E.vma_budget = budget;
		sp_s = sp_e = 0;
		munmap(r, span);
	}
	E.set.mode = WSS_TRACK_EXACT;
	E.set.sample_level = 0;
	tick();
	is_int(count_armed_from(4), NP - 4, "exact again: every page armed");
	touch(6);
	is_int(tick(), 1, "and counted one by one");
	ok(last_sample_has("\"rate\":1,"), "at rate 1");

	/* ---- auto: a burst of first touches in an interval raises the
	 * level at once, before the tick ---- */
	{
		int big = 4096;
		char *r = mmap(NULL, (size_t)big * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			bail("mmap");
		E.set.mode = WSS_TRACK_AUTO;
		E.set.time_base = WSS_ENGINE_WALL; /* read by the rule only: no clock runs */
		E.set.interval_ns = 100000000;
		E.set.overhead_ppm = 20000;
		E.fault_cost_ns = 50000; /* 4 budgets of 2 ms: 160 touches, so the floor, 256 */
		wss_tick_clock(); /* the clock's tick: time base wall */
		is_int(E.level, 0, "auto: exact");
		/* As in a run that starts exact: no touched list yet. */
		E.touched[0] = E.touched[1] = NULL;
		is_int(E.burst_cap, 256, "the burst cap: four intervals' budget of touches, at least 256");
		/* Attached exact: at a touch's cost of 1 us, 4,096 pages are
		 * under the attach's cap (8,000 pages); the burst's cap stays
		 * what the tick set. */
		E.fault_cost_ns = 1000;
		locked_track_at((uintptr_t)r, (size_t)big * PG);
		E.fault_cost_ns = 50000;
		is_int(E.level, 0, "a mapping under the attach's cap is attached exact");
		for (int i = 0; i < 255; i++)
			wss_engine_touched((uintptr_t)r + (uintptr_t)i * PG, wss_shadow_flags((uintptr_t)r + (uintptr_t)i * PG), NULL);
		ok(E.burst == 255 && !E.burst_hit, "255 first touches: under the cap");
		wss_engine_touched((uintptr_t)r + 255 * PG, wss_shadow_flags((uintptr_t)r + 255 * PG), NULL);
		wss_engine_touched((uintptr_t)r + 256 * PG, wss_shadow_flags((uintptr_t)r + 256 * PG), NULL);
		ok(E.burst == 257 && E.burst_hit, "the 256th raises the flag for the engine thread");
		{
			wss_lockstate_t ls;
			wss_engine_lock(&ls);
			wss_policy_burst();
			wss_engine_unlock(&ls);
		}
		/* 257 touches in next to no time: far past one interval's
		 * budget at that pace, so as coarse as keeps 32 members. */
		uint64_t tracked = wss_regions_pages(&E.regions);
		uint32_t want = E.level;
		uint32_t lc = 1;
		while ((tracked >> lc) > 256 / 4)
			lc++;
		is_int(want, lc, "the engine thread raises the level at once, as far as the pace asks but no coarser than "
				 "a quarter of the cap's members (1/%u of %llu pages)", 1U << want, (unsigned long long)tracked);
		is_int(E.burst_cap, 257 + 256, "another burst in this interval takes another cap of touches");
		bool only = true;
		for (int i = 4; i < NP; i++)
			only = only && armed[i] == wss_sample_member((base >> WSS_PAGE_SHIFT) + (uint64_t)i, want, E.seed);
		ok(only, "the other ranges' pages outside the new sample are opened, its members left armed");
		ok(!E.burst_hit, "once");
		int tm = 0;
		for (int i = 0; i < 257; i++)
			tm += wss_sampling_member((uintptr_t)r + (uintptr_t)i * PG, want);
		reset_calls();
		/* The rate held where the raise put it (the budget's decision
		 * on this test's clock is anyone's). */
		E.set.sample_level = want;
		wss_tick_clock();
		E.set.sample_level = 0;
		is_int(E.level, want, "the tick keeps the raised level");
		is_int(arms, tm, "the tick after the raise arms the members touched before it (%d), not every member (%llu)", tm,
		       (unsigned long long)wss_sampling_count((uintptr_t)r, (uintptr_t)r + (size_t)big * PG, want));
		long est = last_sample();
		ok(last_sample_has("\"rate\":") && est >= 0, "the interval is counted at the raised level (%ld)", est);
		is_int(E.burst, 0, "the next interval counts afresh");
		auto_range_end(r, (size_t)big);
	}

	/* ---- auto, exact: a mapping past the burst cap is attached at a
	 * sampled level, its members one interval's budget ---- */
	{
		int big = 4096;
		char *r = mmap(NULL, (size_t)big * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			bail("mmap");
		E.set.mode = WSS_TRACK_AUTO;
		E.set.time_base = WSS_ENGINE_WALL;
		E.set.interval_ns = 100000000;
		E.set.overhead_ppm = 20000;
		E.fault_cost_ns = 10000; /* cap: 8 ms / 10 us = 800 touches; a member 10 + 10 us (its fault, its arming): 100 a budget */
		E.member_tick_ns = 0;
		wss_tick_clock();
		is_int(E.level, 0, "auto: exact");
		E.touched[0] = E.touched[1] = NULL;
		locked_track_at((uintptr_t)r, (size_t)big * PG);
		uint64_t big_members = wss_sampling_count((uintptr_t)r, (uintptr_t)r + (size_t)big * PG, E.level);
		/* 4096 >> 6 = 64 <= 100 < 4096 >> 5: 1 in 64 (the hash's draw: about 64) */
		is_int(E.level, 6, "4,096 pages past a cap of 800: attached at 1 in 64, not exact");
		ok(big_members > 0 && big_members < 128, "its sample: about 64 members of 4,096 (%llu)", (unsigned long long)big_members);
		auto_range_end(r, (size_t)big);
	}

	/* ---- the lock-order witness ---- */
	uint32_t v0 = wss_witness_violations();
	wss_witness_take(WSS_RANK_TICK);
	wss_witness_take(WSS_RANK_ENGINE);
	wss_witness_give(WSS_RANK_ENGINE);
	wss_witness_give(WSS_RANK_TICK);
	is_int(wss_witness_violations(), v0, "witness: tick then engine is the order");
	wss_witness_take(WSS_RANK_ENGINE);
	wss_witness_take(WSS_RANK_TICK);
	wss_witness_give(WSS_RANK_TICK);
	wss_witness_give(WSS_RANK_ENGINE);
	is_int(wss_witness_violations(), v0 + 1, "witness: engine then tick is a violation");

	/* ---- the end ---- */
	int detaches_before = detaches;
	wss_engine_finish();
	FILE *f = fopen(profile, "r");
	char line[8192], last[8192] = "";
	while (f && fgets(line, sizeof line, f))
		strcpy(last, line);
	if (f)
		fclose(f);
	ok(strstr(last, "\"type\":\"summary\"") != NULL, "finish writes the summary last");
	/* Pages 0-3 left with the mremap: their mapping is gone, nothing to
	 * give back there. */
	ok(count_armed_from(4) == 0, "and gives every tracked page back its protection");
	is_int(detaches, detaches_before, "but detaches nothing: the process is ending, the kernel drops it all");
	unlink(profile);
	rmdir(dir);
	/* ---- the faults' delay (wss_policy_fault_delay): the most any
	 * thread paid, or their total over the CPUs ---- */
	{
		uint64_t fc = E.fault_cost_ns;
		uint32_t ncpu = E.ncpu;
		(void)wss_threads_self();
		uint32_t nt = wss_threads_count();
		uint64_t saved[8] = {0};
		for (uint32_t s = 0; s <= nt && s < 8; s++)
			saved[s] = wss_threads_get(s)->faults_k;
		for (uint32_t s = 0; s <= nt; s++)
			wss_threads_get(s)->faults_k = 0;
		E.fault_cost_ns = 10000;
		E.ncpu = 2;
		wss_threads_get(0)->faults_k = 100;
		is_int((long long)wss_policy_fault_delay(100, 100), 1000000, "one thread's 100 faults at 10 us: 1 ms of delay");
		is_int((long long)wss_policy_fault_delay(50, 100), 500000, "a burst's excess taken off in proportion");
		uint32_t me = wss_threads_self(); /* a slot of its own: 1 or more */
		wss_threads_get(me)->faults_k = 60;
		is_int((long long)wss_policy_fault_delay(160, 160), 1000000,
		       "two threads on two CPUs: the one that paid the most (not their 1.6 ms total)");
		E.ncpu = 1;
		is_int((long long)wss_policy_fault_delay(160, 160), 1600000, "on one CPU they wait for each other: the total");
		wss_threads_get(me)->faults_k = 0;
		wss_threads_get(0)->faults_k = 0;
		is_int((long long)wss_policy_fault_delay(0, 0), 0, "no faults, no delay");
		for (uint32_t s = 0; s <= nt && s < 8; s++)
			wss_threads_get(s)->faults_k = saved[s];
		E.fault_cost_ns = fc;
		E.ncpu = ncpu;
	}
	/* ---- the budget's step (wss_policy_step): share and budget in
	 * millionths ---- */
	{
		uint32_t calm = 0;
		is_int(wss_policy_step(5, 30000, 0, 20000, &calm, false, 32, false), 6, "1.5x the budget: one level up at once");
		is_int(wss_policy_step(5, 70000, 0, 20000, &calm, false, 32, false), 7, "3.5x the budget: two levels up");
		is_int(wss_policy_step(5, 12000, 0, 20000, &calm, false, 32, false), 5, "0.6x the budget: stays");
		is_int(calm, 0, "... and is no calm interval");
		is_int(wss_policy_step(8, 4000, 0, 20000, &calm, false, 32, false), 8, "0.2x the budget: one calm interval, stays");
		is_int(wss_policy_step(8, 4000, 0, 20000, &calm, false, 32, false), 7,
		       "0.2x twice: down one level (at most doubling: 0.4x), not further (0.8x)");
		is_int(calm, 0, "the calm count starts again");
		wss_policy_step(8, 6000, 0, 20000, &calm, false, 32, false);
		is_int(wss_policy_step(8, 6000, 0, 20000, &calm, false, 32, false), 8, "0.3x twice: stays (0.6x a level down)");
		calm = 0;
		wss_policy_step(8, 600, 0, 20000, &calm, false, 32, false);
		is_int(wss_policy_step(8, 600, 0, 20000, &calm, false, 32, false), 4,
		       "0.03x twice: down as far as keeps under half the budget (0.48x four levels down)");
		calm = 0;
		wss_policy_step(2, 10, 0, 20000, &calm, false, 32, false);
		is_int(wss_policy_step(2, 10, 0, 20000, &calm, false, 32, false), 0, "an idle program goes straight to exact");
		wss_policy_step(8, 4000, 0, 20000, &calm, false, 32, false);
		wss_policy_step(8, 25000, 0, 20000, &calm, false, 32, false);
		is_int(wss_policy_step(8, 4000, 0, 20000, &calm, false, 32, false), 8, "calm intervals count only in a row");
		calm = 0;
		wss_policy_step(8, 600, 0, 20000, &calm, false, 2, false);
		is_int(wss_policy_step(8, 600, 0, 20000, &calm, false, 2, false), 6, "no further down than the arming allows (room 2)");
		calm = 0;
		wss_policy_step(8, 4000, 0, 20000, &calm, false, 0, false);
		is_int(wss_policy_step(8, 4000, 0, 20000, &calm, false, 0, false), 8, "no room for a sampled level: stays...");
		is_int(wss_policy_step(8, 4000, 0, 20000, &calm, false, 1, false), 7, "... and steps once there is");
		calm = 0;
		wss_policy_step(3, 10, 0, 20000, &calm, false, 0, false);
		is_int(wss_policy_step(3, 10, 0, 20000, &calm, false, 0, false), 0, "exact is within reach without room (one call a range)");
		calm = 0;
		wss_policy_step(8, 600, 0, 20000, &calm, true, 32, false);
		is_int(wss_policy_step(8, 600, 0, 20000, &calm, true, 32, false), 8, "not down while changes are owed...");
		is_int(wss_policy_step(8, 600, 0, 20000, &calm, false, 32, false), 4, "... and down at once when paid: the calm ticks counted");
		is_int(wss_policy_step(4, 30000, 0, 20000, &calm, true, 0, false), 5, "a raise is never held back");
		/* Precise enough (session.precision met): no finer sample but exact. */
		calm = 0;
		wss_policy_step(8, 600, 0, 20000, &calm, false, 32, true);
		is_int(wss_policy_step(8, 600, 0, 20000, &calm, false, 32, true), 8, "precise: no finer sampled level for its cost");
		calm = 0;
		wss_policy_step(2, 10, 0, 20000, &calm, false, 32, true);
		is_int(wss_policy_step(2, 10, 0, 20000, &calm, false, 32, true), 0, "precise: still exact when exactness fits");
		is_int(wss_policy_step(5, 30000, 0, 20000, &calm, false, 32, true), 6, "precise: a raise past the budget all the same");
		/* A fixed part (the probe, the record) no finer sample grows. */
		calm = 0;
		wss_policy_step(14, 6000, 5000, 20000, &calm, false, 32, false);
		is_int(wss_policy_step(14, 6000, 5000, 20000, &calm, false, 32, false), 12,
		       "0.3x the budget, 0.25x of it fixed: two levels down (0.25 + 0.05 x 4 = 0.45x, under half; x 8 is not)");
		calm = 0;
		wss_policy_step(14, 9000, 8000, 20000, &calm, false, 32, false);
		is_int(wss_policy_step(14, 9000, 8000, 20000, &calm, false, 32, false), 14,
		       "0.45x, 0.4x of it fixed: stays (a level down, 0.4 + 0.05 x 2 = 0.5x, is not under half)");
	}
	/* ---- all writes' scan cost (wss_policy_aw_scanned) and the
	 * decision (wss_policy_all_writes) ---- */
	{
		const wss_backend_t *b = E.backend;
		wss_track_mode_t mode = E.set.mode;
		E.backend = &fake_hw;
		E.set.mode = WSS_TRACK_AUTO;
		E.set.sample_level = 0;
		E.set.test.all_writes = 0;
		E.aw_page_n = 0;
		wss_policy_aw_scanned(150);
		is_int((long long)E.aw_page_ns, 150, "one figure of the scan: taken");
		wss_policy_aw_scanned(1500);
		is_int((long long)E.aw_page_ns, 150, "two: the least (a one-off tick does not count)");
		wss_policy_aw_scanned(160);
		is_int((long long)E.aw_page_ns, 160, "three: the median");
		wss_policy_aw_scanned(1400);
		is_int((long long)E.aw_page_ns, 1400, "the last three: 1500, 160, 1400: the median");
		wss_policy_aw_scanned(140);
		is_int((long long)E.aw_page_ns, 160, "then 160, 1400, 140: the median");
		/* The decision at 100 ms and 2 %: 2 ms allowed.  300 pages
		 * written at 1 us each, all of the data written. */
		uint64_t tp = wss_regions_pages(&E.regions), wall = 100000000;
		ok(tp > 0, "pages are tracked (%llu) for the scan's cost", (unsigned long long)tp);
		E.set.overhead_ppm = 20000;
		E.wp_cost_ns = 1000;
		E.nsamples = 1;
		E.last_writes = E.last_pages = 300;
		E.all_writes = false;
		E.aw_hold = E.aw_backoff = 0;
		E.aw_page_n = 0;
		wss_policy_aw_scanned(0);
		ok(wss_policy_all_writes(3, wall), "writes 0.3 ms, no scan: on (under a quarter of the budget)");
		/* On, then one tick's scan of 3 ms: off, held four ticks. */
		E.all_writes = true;
		E.aw_page_n = 0;
		wss_policy_aw_scanned(tp ? 3000000 / tp : 0);
		ok(!wss_policy_all_writes(3, wall), "one scan of 3 ms: off");
		is_int(E.aw_hold, 4, "... held four ticks");
		E.all_writes = false;
		int held = 0;
		for (int i = 0; i < 3; i++)
			held += !wss_policy_all_writes(3, wall);
		is_int(held, 3, "three ticks held");
		ok(wss_policy_all_writes(3, wall),
		   "the hold's end: a trial at the writes' cost (the figure that ended it may be a one-off)");
		is_int(E.aw_page_n, 0, "... the scan's figures of before the hold forgotten");
		/* The trial's tick read 3 ms again: off, held eight. */
		E.all_writes = true;
		wss_policy_aw_scanned(tp ? 3000000 / tp : 0);
		ok(!wss_policy_all_writes(3, wall), "the trial read it again: off");
		is_int(E.aw_hold, 8, "... held twice as long");
		E.all_writes = false;
		/* Three figures of 3 ms, two of them one-offs or not: the
		 * median is one; only a trial measures it again. */
		wss_policy_aw_scanned(tp ? 3000000 / tp : 0);
		wss_policy_aw_scanned(tp ? 3000000 / tp : 0);
		int trials = 0;
		for (int i = 0; i < 8; i++)
			trials += wss_policy_all_writes(3, wall);
		is_int(trials, 1, "eight ticks: one trial, at the hold's end");
		/* They pay while the pages read and not written, R of the data
		 * D, are under 1 - c / allow of it: 0.85 here. */
		E.aw_hold = 0;
		E.aw_page_n = 0;
		wss_policy_aw_scanned(0);
		E.last_pages = 1900;
		ok(wss_policy_all_writes(3, wall), "84 %% of the data read and not written: on");
		E.all_writes = false;
		E.last_pages = 2100;
		ok(!wss_policy_all_writes(3, wall), "86 %%: the coarser sample they cost loses more than they give: off");
		E.backend = b;
		E.set.mode = mode;
		E.all_writes = false;
		E.aw_hold = E.aw_backoff = 0;
		E.aw_page_n = 0;
		E.aw_page_ns = 0;
	}

	return done_testing();
}
