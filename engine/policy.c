/* The sampling policy: which level (rate 1/2^L) each interval is armed
 * at, from what the interval before cost and how precise its estimate was.
 *
 * The level of the next interval is set at each tick (wss_policy_next):
 * fixed (track.sample_rate), or from the overhead budget: how much longer
 * the interval took the program for us, against its wall time.  The cost
 * is the touches recorded (first-touch faults) times the cost of one,
 * measured by the probe below, taken as the delay of the thread that paid
 * the most (wss_policy_fault_delay), plus the time the last tick took
 * (arming, harvest, counting, writing).  Left out: the kernel's resolution
 * of write-protect faults on pages outside the sample (once per page and
 * run, see docs/backends.md), and the cost the program pays in its caches
 * for sharing the CPUs with the engine thread.  Moves are in powers of
 * two: up at once, by as many steps as the excess asks; down one step at
 * a time, after calm intervals in a row under a quarter of the budget
 * (halving the level at most doubles the fault cost), so the rate does not
 * flap, and only while the last interval's estimate missed
 * session.precision (or to exact).  Whatever the budget, armed members
 * must fit the VMA budget: each isolated armed page costs two VMAs.
 * Within an interval, bursts of touches and large new mappings raise the
 * level at once (wss_policy_burst, wss_policy_before_attach).  The sample
 * itself, its members and their arming, is sampling.c's. */
#include "config.h"
#include "engine/internal.h"

#include <sys/mman.h>

#include "common/sample.h"

/* The probe: the engine's own page, tracked (its flags say so) but in no
 * region, so never counted.  The tick arms it and touches it, timing the
 * whole round trip of a first touch on this machine, now. */
/* Every 50 ms for its first PROBES_EARLY, then every second: each probe
 * is three rounds of arming, harvest and a fault, 50-150 us with the TLB
 * shootdowns a multi-threaded program's other CPUs take; the cost of a
 * touch changes slowly, and a probe every interval would be a fixed part
 * of every tick. */
#define PROBE_EVERY_NS 50000000ULL
#define PROBE_LATER_NS 1000000000ULL
#define PROBES_EARLY 8
#define MIN_MEMBERS 32
#define CALM_TICKS 2
#define DEFAULT_MEMBER_NS 5000
#define DEFAULT_AW_PAGE_NS 60
/* The least burst cap, in first touches (wss_policy_burst). */
#define BURST_MIN 256

/* Four intervals' budget of first touches at fc each, at least
 * BURST_MIN: the burst cap (wss_policy_burst), and the size past which
 * a new mapping is taken sampled from exact (wss_policy_before_attach). */
static uint32_t cap_touches(uint64_t fc)
{
	uint64_t budget = E.set.overhead_ppm ? E.set.overhead_ppm : WSS_OVERHEAD_DEFAULT_PPM;
	uint64_t c = E.set.interval_ns / 1000000 * budget * 4 / fc;
	return c < BURST_MIN ? BURST_MIN : c > (1U << 30) ? 1U << 30 : (uint32_t)c;
}

/* What arming one new member costs: half what a steady tick spends on a
 * touched member (it re-arms and harvests it), or before any such tick
 * the probe's cost of a touch (5 us before the first probe). */
static uint64_t member_arm_ns(void)
{
	return E.member_tick_ns ? E.member_tick_ns / 2 : E.fault_cost_ns ? E.fault_cost_ns : DEFAULT_MEMBER_NS;
}

/* The CPUs the process may run on: the budget's base when its threads
 * outnumber them (wss_policy_fault_delay).  At least 1. */
static uint32_t cpus_allowed(void)
{
	uint64_t mask[16] = {0};
	long n = wss_sys3(SYS_sched_getaffinity, 0, sizeof mask, (long)mask);
	uint32_t c = 0;
	for (long i = 0; n > 0 && i < n / 8; i++)
		c += (uint32_t)__builtin_popcountll(mask[i]);
	return c ? c : 1;
}

static void probe_written(uintptr_t s, uintptr_t e, void *arg)
{
	(void)s;
	(void)e;
	(void)arg;
}

/* The least of three writes to the probe page, write-protected again by a
 * harvest before each (for backends that see writes) and armed too when
 * armed: UINT64_MAX when it cannot be (not observed, or not armed). */
static uint64_t probe_touch(bool armed)
{
	uintptr_t a = E.probe;
	uint64_t t = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		if (E.backend->harvest && E.backend->harvest(a, a + WSS_PAGE_SIZE, probe_written, NULL))
			return UINT64_MAX;
		if (armed && E.backend->arm(a, a + WSS_PAGE_SIZE))
			return UINT64_MAX;
		uint64_t t0 = wss_clock_ns(CLOCK_MONOTONIC);
		*(volatile char *)a = 1;
		uint64_t d = wss_clock_ns(CLOCK_MONOTONIC) - t0;
		if (d < t)
			t = d;
	}
	return t;
}

/* Time one first touch of the probe: armed as a sampled page is (and, for
 * backends that see writes, write-protected again), then written.  On the
 * thread running the tick, engine lock held; its touch counts for no
 * thread and has no site. */
static void probe(uint64_t now)
{
	/* On the engine thread only: a program thread ending an interval
	 * (wss_tick()) may run with SIGSEGV blocked by a raw system call,
	 * and its ticks are the program's own, not a clock's. */
	if (!E.probe || !wss_fault_engine_thread ||
	    now - E.probe_at_ns < (E.probes < PROBES_EARLY ? PROBE_EVERY_NS : PROBE_LATER_NS))
		return;
	E.probe_at_ns = now;
	/* The least of three touches: a touch can only be made slower by
	 * what is not ours (the thread preempted on a busy machine, an
	 * interrupt), and the budget weighs our cost, not the machine's
	 * load; then smoothed over probes. */
	uint64_t t = probe_touch(true);
	if (t == UINT64_MAX)
		return; /* not observed any more (a forked child): no figure */
	E.fault_cost_ns = E.fault_cost_ns ? (3 * E.fault_cost_ns + t) / 4 : t;
	E.probes++;
	/* A backend with both (hybrid): a write to the page write-protected
	 * alone, which the kernel resolves (all writes: sampling.c).  The
	 * fault above left it open and written. */
	if (!E.backend->fault || !E.backend->harvest || !E.backend->watch)
		return;
	t = probe_touch(false);
	if (t != UINT64_MAX)
		E.wp_cost_ns = E.wp_cost_ns ? (3 * E.wp_cost_ns + t) / 4 : t;
}

void wss_policy_probe_now(void)
{
	probe(wss_clock_ns(CLOCK_MONOTONIC));
	wss_policy_burst_cap();
}

/* The finest level whose armed runs fit the VMA budget (each member, or
 * a sparse range's cluster, armed alone in its range splits a VMA in
 * three), and whose sparse ranges' members fit WSS_SPARSE_MEMBER_PAGES of
 * page state.  tracked: every tracked page, the sparse ranges' included;
 * xpages: a sparse range about to be added, of span xspan. */
static uint32_t floor_with(uint64_t tracked, uint64_t regions, uint64_t xpages, unsigned xspan)
{
	uint64_t room = E.vma_budget > 0 ? (uint64_t)E.vma_budget / 2 : 32;
	uint32_t l = 1;
	for (; l < WSS_SAMPLE_LEVEL_MAX; l++) {
		uint64_t sp, su = wss_sparse_units(l, &sp);
		uint64_t dense = tracked > sp ? tracked - sp : 0;
		sp += xpages;
		su += xpages >> (l > xspan ? l : xspan);
		if ((dense >> l) + su + regions <= room && (sp >> l) <= WSS_SPARSE_MEMBER_PAGES)
			break;
	}
	return l;
}

static uint32_t vma_floor_of(uint64_t tracked, uint64_t regions) { return floor_with(tracked, regions, 0, 0); }

static uint32_t vma_floor(uint64_t tracked) { return vma_floor_of(tracked, E.regions.n); }

/* ceil(log2(x)) for x >= 1. */
static uint32_t log2_up(uint64_t x)
{
	uint32_t l = 0;
	while (l < 63 && (1ULL << l) < x)
		l++;
	return l;
}

uint32_t wss_policy_step(uint32_t l, uint64_t share_ppm, uint64_t fixed_ppm, uint64_t budget, uint32_t *calm, bool owed,
			 uint32_t room, bool precise)
{
	if (share_ppm > budget) {
		*calm = 0;
		return l + log2_up((share_ppm + budget - 1) / budget);
	}
	/* What a finer sample doubles is the share less its fixed part (the
	 * probe, the record, the walk of the sample's members): counted as
	 * doubling, a fixed part alone keeps a short interval's sample coarse
	 * however little its members cost. */
	uint64_t var = share_ppm > fixed_ppm ? share_ppm - fixed_ppm : 0, fixed = share_ppm - var;
	if (fixed + 2 * var < budget / 2 && l > 0) {
		/* Down as far as keeps the share under half the budget, the
		 * cost scaling with the members (at most doubling per level);
		 * to a sampled level no further than room levels (what arming
		 * the new members costs), to exact at once (one call a range),
		 * and not at all while changes are owed: the calm intervals
		 * keep counting meanwhile.  Not from under 3/8 of the budget:
		 * sort then went from 1 in 1,024 (a share of 0.6 %) down to 1
		 * in 256, its averages' intervals narrowed from +-50-60 % to
		 * +-44-50 %, and it ran 3 % longer (changes of sample, members'
		 * unseen costs). */
		if (++*calm < CALM_TICKS || owed)
			return l;
		uint32_t d = 1;
		while (d < l && d < 40 && fixed + (var << (d + 1)) < budget / 2)
			d++;
		if (d < l && d > room)
			d = room;
		/* Precise enough: a finer sample costs more for nothing the
		 * user asked for; exact, when it fits, is always worth it. */
		if (d == 0 || (precise && d < l))
			return l;
		*calm = 0;
		return l - d;
	}
	*calm = 0;
	return l;
}

/* How many sampled levels down from l (not counting exact) a step may go:
 * arming the new members of a sampled level costs a system call or two
 * each, and at --overhead 10% sort stepped from 1 in 512 to 1 in 32
 * (11,520 new members, 40 ms), then back up to 1 in 64 (6,144 gaps
 * opened, 147 ms).  So a step arms at most four intervals' budget of new
 * members (allow_ns: one's), at what arming one costs: half what a touched
 * member costs a steady tick (its arming and harvest), as at an attach
 * (wss_policy_before_attach).  At the whole of it, which carries the
 * tick's own costs shared among few touched members, sort (393,217 pages
 * tracked, 11 members of 384 touched an interval) could never step down
 * from 1 in 1,024, calm at 0.7 % of a 2 % budget, its average +-95 %; the
 * step to 1 in 32 above cost 3.5 us a member. */
static uint32_t step_room(uint32_t l, uint64_t tracked, uint64_t allow_ns)
{
	uint64_t per = member_arm_ns();
	uint32_t d = 0;
	while (d + 1 < l && ((tracked >> (l - d - 1)) - (tracked >> l)) * per <= 4 * allow_ns)
		d++;
	return d;
}

/* How much longer the interval took for the faults of its first
 * touches, at the probe's cost of one (budgeted: of all touches, the
 * counted ones).  A fault delays the thread that takes it: a thread that
 * sleeps between its touches (a timer, a request) ends its interval that
 * much later, whatever the CPU time it used, so the delay is the most any
 * one thread paid.  But threads that share too few CPUs wait for one
 * another's faults: then it is their total over the CPUs the process may
 * use.  Left out: a thread whose interval started late (created in it) is
 * weighed against the whole interval; a thread that waits for another's
 * reply pays that one's delay too, which the larger of the two covers only
 * when it is on the critical path.  Engine lock held, after the tick took
 * each thread's faults of the interval (faults_k). */
uint64_t wss_policy_fault_delay(uint64_t counted, uint64_t all)
{
	uint32_t nt = wss_threads_count();
	uint64_t most = 0, sum = 0;
	for (uint32_t s = 0; s <= nt; s++) {
		uint64_t f = wss_threads_get(s)->faults_k;
		sum += f;
		if (f > most)
			most = f;
	}
	uint32_t ncpu = E.ncpu ? E.ncpu : 1;
	uint64_t shared = (sum + ncpu - 1) / ncpu;
	uint64_t eff = most > shared ? most : shared;
	if (all == 0 || sum == 0)
		return counted * E.fault_cost_ns; /* touches no thread is known for */
	/* the burst's excess taken off in proportion */
	eff = (uint64_t)((unsigned __int128)eff * counted / all);
	return eff * E.fault_cost_ns;
}

uint32_t wss_policy_next(uint64_t faults, uint64_t coarse, uint64_t wall_ns, uint64_t now)
{
	/* Exact: no rate to set.  Its cost is measured where the probe
	 * times a touch, the engine thread's wall-clock ticks; a manual or a
	 * CPU-time tick says none (below). */
	if (E.set.mode == WSS_TRACK_EXACT && (E.set.time_base != WSS_ENGINE_WALL || !wss_fault_engine_thread))
		return 0;
	uint64_t tracked = wss_regions_pages(&E.regions);
	probe(now);
	/* A burst's touches counted as what they would have cost at the
	 * level it raised to (wss_policy_burst). */
	uint64_t all = faults;
	faults = faults > E.burst_excess ? faults - E.burst_excess : 0;
	E.burst_excess = 0;
	uint64_t wall = wall_ns ? wall_ns : 1;
	uint64_t fcost = faults * E.fault_cost_ns;
	uint64_t slow = wss_policy_fault_delay(faults, all), aw_delay = 0;
	/* Under all writes, the kernel's faults on the pages watched alone:
	 * as many as the pages written (the last sample's), at the
	 * probe's cost, a delay shared among the threads as the faults'.
	 * No finer sample makes them more (the tick's fixed part, below). */
	if (E.all_writes) {
		uint64_t wc = E.last_writes * E.wp_cost_ns;
		aw_delay = fcost ? (uint64_t)((unsigned __int128)wc * slow / fcost) : wc;
		slow += aw_delay;
		fcost += wc;
	}
	/* The faults' delay against the interval's wall time, and the base
	 * wss report divides the faults' total by to read the same share. */
	E.cost_faults_ns = fcost;
	E.cost_wall_ns = wall;
	E.cost_program_ns = slow ? (uint64_t)((unsigned __int128)wall * fcost / slow) : wall;
	if (E.cost_program_ns < wall)
		E.cost_program_ns = wall;
	/* Exact: no rate to set; the cost measured all the same, so that
	 * the summary and the report can say what exactness cost the
	 * program (its intervals hold that much less work). */
	if (E.set.mode == WSS_TRACK_EXACT) {
		E.used_ns += slow + E.tick_cost_ns;
		E.used_wall_ns += wall;
		return 0;
	}
	uint32_t l = E.level;
	if (E.set.sample_level) {
		uint32_t f = vma_floor(tracked), s = E.set.sample_level;
		if (E.epoch <= E.set.test.first_intervals) /* the next interval's */
			s = E.set.test.first_level;
		return s > f ? s : f;
	}
	/* share / budget, both in millionths: how much longer the interval
	 * took for us (docs/backends.md, "The budget") */
	uint64_t share_ppm = (uint64_t)(((unsigned __int128)(slow + E.tick_cost_ns) * 1000000ULL) / wall);
	E.used_ns += slow + E.tick_cost_ns;
	E.used_wall_ns += wall;
	uint64_t budget = E.set.overhead_ppm ? E.set.overhead_ppm : WSS_OVERHEAD_DEFAULT_PPM;
	/* What changes of sample cost is paid once, outside the decision
	 * (counted, the level went straight back and flapped), but not for
	 * free: it is a debt, paid back from the budget the intervals leave
	 * unused, and the level steps down (a change) only when nothing is
	 * owed.  Raises are never held back: they bound the next interval.
	 * Over a run, then, changes cost what the intervals left unspent
	 * (sort at --overhead 10 % had flapped between 1 in 64 and 1 in 128,
	 * 20 ms a change, and taken 19.6 % of its time). */
	/* The changes and a step's arming run on the engine thread, as the
	 * tick does: allowed an interval's budget of the tick's base, and
	 * paid back from the share the interval left unused. */
	uint64_t allow = wall / 1000000 * budget + wall % 1000000 * budget / 1000000;
	if (share_ppm < budget) {
		uint64_t spare = (budget - share_ppm) * (wall / 1000) / 1000;
		E.change_debt_ns = E.change_debt_ns > spare ? E.change_debt_ns - spare : 0;
	}
	/* Precise enough already (the last interval's data estimate within
	 * session.precision): no finer sample is worth its cost but exact. */
	uint64_t target = E.set.precision_ppm ? E.set.precision_ppm : WSS_PRECISION_DEFAULT_PPM;
	bool precise = E.prec_last_ppm <= target;
	/* The tick's part a finer sample does not grow: all of it but the
	 * touched members' re-arming and harvest (member_tick_ns each). */
	uint64_t per_member = E.member_tick_ns * faults;
	uint64_t fixed_ns = (E.tick_cost_ns > per_member ? E.tick_cost_ns - per_member : 0) + aw_delay;
	uint64_t fixed_ppm = l ? (uint64_t)(((unsigned __int128)fixed_ns * 1000000ULL) / wall) : 0;
	uint32_t was = l;
	l = wss_policy_step(l, share_ppm, fixed_ppm, budget, &E.calm, E.change_debt_ns != 0, step_room(l, tracked, allow),
			    precise);
	/* Why the sample is no finer, for the summary's precision note: a
	 * step down was due after more calm intervals (a short run ends
	 * first), or the budget held it. */
	E.hold = l == was && E.calm ? WSS_HOLD_WAIT : WSS_HOLD_BUDGET;
	/* Not past a sample of MIN_MEMBERS pages: below it the tick's fixed
	 * costs dominate, which a coarser sample does not lower, and the
	 * estimates would say little; a program tracking fewer than twice
	 * that is tracked exactly (`sleep` was sampled at 1 in 2 for the
	 * tick's own cost).  Not more either: a member armed and harvested
	 * costs the tick 30-35 us on this project's VMs (two TLB shootdowns
	 * and a VMA split under the mmap lock), so a floor of 64 held a
	 * malloc-heavy program of 3,000 pages at 3.7 % against a 2 % budget;
	 * at 32 its estimates are +-16 % and the budget holds. */
	while (l > 0 && (tracked >> l) < MIN_MEMBERS)
		l--;
	/* auto: coarse blocks would make the count a lower bound; sampling
	 * keeps it an estimate with an interval, from now on (exactness does
	 * not fit this program's VMAs, and would only flap back). */
	if (coarse)
		E.vma_short = true;
	if (E.vma_short && l == 0)
		l = 1;
	/* A sparse range is never tracked exactly (sparse.h): its pages
	 * outside the sample have no state. */
	if ((E.set.mode == WSS_TRACK_SAMPLED || wss_sparse_any()) && l == 0) {
		l = 1;
		E.hold = E.set.mode == WSS_TRACK_SAMPLED ? E.hold : WSS_HOLD_SPARSE;
	}
	if (l > 0) {
		uint32_t f = vma_floor(tracked);
		if (l < f) {
			l = f;
			E.hold = wss_sparse_any() ? WSS_HOLD_SPARSE : WSS_HOLD_VMA;
		}
	}
	return l > WSS_SAMPLE_LEVEL_MAX ? WSS_SAMPLE_LEVEL_MAX : l;
}

/* A new dense range at a sampled level has its members armed (and, for
 * backends that see writes, write-protected) one by one as it is
 * attached, in the program's mmap: a system call or two per member.  Under
 * the budget that attach is held to one interval's budget: a coarser level
 * first, if the range's members at this one would cost more (`sort` maps
 * 1.5 GiB at 1 in 32, 12,304 members: 37 ms in its mmap, then 33 ms to
 * open them again when its first burst raised the level to 1 in 1,024).
 *
 * Under auto, exact tracking takes such a range sampled too, when it is
 * made (not found by an attached engine's scan) and larger than the
 * burst cap (four intervals' budget of first touches): touched as fast
 * as a program touches a buffer it has just asked for, it would end in
 * a burst, after the cap's exact first touches and a change of sample
 * from exact, which opens the gaps between the new members range by
 * range.  A random walk over 256 MiB, 0.25 s natively, paid
 * 49 ms under the defaults, against 20 at a fixed 1 in 512; the
 * difference was the exact start and the burst.  A range the program
 * then touches little brings the level down again at the calm ticks
 * (wss_policy_next); one under the cap stays exact (a short program
 * whose memory is a few MiB is measured exactly).  A fixed rate is the
 * user's, and manual ticks have no interval to budget: neither is
 * changed. */
void wss_policy_before_attach(uint64_t pages)
{
	uint32_t l = __atomic_load_n(&E.level, __ATOMIC_RELAXED);
	if (E.set.sample_level || E.set.mode == WSS_TRACK_EXACT || E.set.time_base == WSS_ENGINE_MANUAL)
		return;
	/* Not for mappings an attached engine's scan finds (attached.c): they
	 * were not just made, and a service's memory is mostly touched
	 * little (an idle python3 process attached to, 50 MiB in a
	 * bytearray, 32 pages written an interval, was taken at 1 in 128,
	 * then 1 in 256 by ticks that cost the same at every level: an
	 * average of 26 pages +-3,122 %, against an exact 32). */
	if (!l && (E.set.mode != WSS_TRACK_AUTO || E.finished || E.scanning))
		return;
	/* Before the engine thread's first probe (a program that maps its
	 * buffers first thing), a member is taken to cost what the probe
	 * reads on this project's VMs at the least. */
	uint64_t fc = E.fault_cost_ns ? E.fault_cost_ns : DEFAULT_MEMBER_NS;
	uint64_t ppm = E.set.overhead_ppm ? E.set.overhead_ppm : WSS_OVERHEAD_DEFAULT_PPM;
	uint64_t allow = E.set.interval_ns / 1000000 * ppm; /* one interval's budget, ns */
	/* Exact: only past the burst cap. */
	if (!l && pages <= cap_touches(fc))
		return;
	/* A member costs its arming here and the fault of its first touch.
	 * Counted at the fault's cost alone, matmul's three 5 MiB matrices
	 * were attached at 1 in 4 from exact, 936 members armed one by one
	 * in its first 0.1 s: 9.6 ms of a 0.16 s run (now 1 in 16, 2 ms).
	 * At the whole cost of a touched member (its fault, re-arming and
	 * harvest), sort's 1.5 GiB buffer, which it fills over a second,
	 * went to 1 in 8,192 for no time saved: its average's interval
	 * widened from +-63 to +-93 %. */
	uint64_t per = allow / (fc + member_arm_ns()); /* one interval's budget, in members */
	if (per < MIN_MEMBERS)
		per = MIN_MEMBERS;
	uint32_t f = l;
	while (f < WSS_SAMPLE_LEVEL_MAX && (pages >> f) > per)
		f++;
	if (f == l)
		return;
	uint64_t t0 = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	wss_sampling_raise_to(f);
	/* Paid once, as a burst's raise is. */
	uint64_t t = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	E.change_ns += t;
}

void wss_policy_make_room(uint64_t pages, unsigned span)
{
	/* The floor with the new sparse range counted, its runs and one more
	 * region; a fixed rate finer than that gives way, as at a tick. */
	uint32_t f = floor_with(wss_regions_pages(&E.regions), E.regions.n + 1, pages, span);
	if (__atomic_load_n(&E.level, __ATOMIC_RELAXED) < f)
		wss_sampling_raise_to(f);
}

/* auto's bound inside an interval.  The budget acts at ticks, on what the
 * interval that ended cost; a program that maps 256 MiB and touches all of
 * it at once would, in exact tracking, pay a first touch for each of its
 * 65,536 pages (seconds on a virtual machine) before the next tick could
 * react.  So the touches of an interval are counted as they come
 * (fault.c: one relaxed add a first touch, a handful of cycles against
 * the fault's microseconds), and the handler whose touch reaches the
 * interval's cap wakes the engine thread, which raises the level at once
 * (raise_to: sound mid-interval), in proportion to the touches' pace
 * (wss_policy_burst).  The
 * cap is four intervals' budget of touches (a burst, not the level the
 * budget settles at, whose touches vary around one budget), never under
 * BURST_MIN, so that a short program whose memory is a few MiB stays exact:
 * auto starts exact, and samples from its first interval only what would
 * not fit.  The tick then weighs the burst's touches as what they would
 * have cost at the new level (wss_sampling_burst_excess).  Not under
 * manual ticks (the program's intervals have no length to budget), nor at
 * a fixed rate. */

/* Four intervals' budget of touches at the probe's cost, at least
 * BURST_MIN; 0 where no burst applies. */
static uint32_t burst_touches(void)
{
	if (E.set.mode != WSS_TRACK_AUTO || E.set.time_base == WSS_ENGINE_MANUAL || !E.fault_cost_ns ||
	    E.level >= WSS_SAMPLE_LEVEL_MAX)
		return 0;
	return cap_touches(E.fault_cost_ns);
}

/* Counted from the touches so far: set mid-interval (a raise, by a burst
 * or by a mapping at a sampled level), a cap of touches from here on, at
 * the new level.  Counted from 0, the next member touched after a burst's
 * raise raised again, and again, a level a touch (a random walk's ran on
 * to 1 in 16,384).  The tick sets it after starting the count afresh. */
void wss_policy_burst_cap(void)
{
	uint64_t c = burst_touches(), cap = c ? (uint64_t)__atomic_load_n(&E.burst, __ATOMIC_RELAXED) + c : 0;
	__atomic_store_n(&E.burst_cap, cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap, __ATOMIC_RELAXED);
}

void wss_policy_burst(void)
{
	/* A flag of an interval that has ended since (its handler reached
	 * the cap as the tick moved the epoch) is no burst of this one. */
	uint32_t hit = __atomic_exchange_n(&E.burst_hit, 0, __ATOMIC_ACQUIRE);
	if (!hit || hit != __atomic_load_n(&E.epoch, __ATOMIC_RELAXED) + 1)
		return;
	uint32_t cap = burst_touches();
	uint32_t lk = __atomic_load_n(&E.level, __ATOMIC_RELAXED), l = lk + 1;
	if (!cap || lk >= WSS_SAMPLE_LEVEL_MAX)
		return;
	/* Coarser by as many powers of two as bring the touches, at the
	 * pace of the interval so far, within one interval's budget (a
	 * quarter of the cap): proportionate, as a tick's move is.  Sort's
	 * 733 touches early in an interval took it from 1 in 32 to 1 in
	 * 2,048 when the raise went to the cap's members of everything, and
	 * the calm steps down took the rest of the run. */
	uint64_t tracked = wss_regions_pages(&E.regions);
	uint64_t now = wss_clock_ns(CLOCK_MONOTONIC), since = E.prev_tick_at ? E.prev_tick_at : E.t0_ns;
	uint64_t iv = E.set.interval_ns, el = now > since ? now - since : 0;
	if (el < iv / 64)
		el = iv / 64;
	/* The pace of the program's own time: the touches so far took their
	 * cost out of it, which a coarser sample gives back (a random walk
	 * under exact tracking touched a fifth of the pages it touches at 1
	 * in 128, and the two ticks after the burst each raised the level
	 * again, a change of sample each: 13 ms of a 0.5 s run).  At least
	 * an eighth of the time elapsed, whatever the probe says. */
	uint64_t nb = __atomic_load_n(&E.burst, __ATOMIC_RELAXED), spent = nb * E.fault_cost_ns;
	uint64_t own = el - (spent < el - el / 8 ? spent : el - el / 8);
	uint64_t pace = nb * (iv / 1000) / (own / 1000 ? own / 1000 : 1);
	/* A touched member costs its fault (the cap's unit) and, at every
	 * tick, its re-arming and harvest: as measured by steady ticks, or,
	 * before any, twice the fault's (on this project's VMs, 5 us to arm
	 * and 7 to harvest a member against a 4-6 us touch).  Counted, the
	 * raise lands where the ticks would have taken it: a random walk
	 * went 0 -> 6 at its burst, then 7 and 9 at two ticks, three changes
	 * of sample in its first 0.2 s. */
	uint64_t fc = E.fault_cost_ns, mc = E.member_tick_ns ? E.member_tick_ns : 2 * fc;
	uint64_t per = cap / 4 * fc / (fc + mc);
	if (per == 0)
		per = 1;
	l = lk + (pace > per ? log2_up((pace + per - 1) / per) : 1);
	if (l > WSS_SAMPLE_LEVEL_MAX)
		l = WSS_SAMPLE_LEVEL_MAX;
	/* Never coarser than a sample whose every member touched fits a
	 * quarter of the cap, one interval's budget of touches (a short
	 * program's burst, extrapolated from its first milliseconds, took
	 * python3 to 1 in 4,096).  Not the whole cap: a random walk's burst
	 * stopped at 1 in 128, 512 members all touched every interval, and
	 * the next two ticks raised again, 8-15 ms of changes of sample in
	 * a 0.25 s run; now 1-2 ms (the raises from a sampled level open
	 * only the members leaving). */
	uint32_t lc = lk + 1;
	while (lc < WSS_SAMPLE_LEVEL_MAX && (tracked >> lc) > cap / 4)
		lc++;
	if (l > lc)
		l = lc;
	while (l > lk + 1 && (tracked >> l) < MIN_MEMBERS)
		l--;
	/* Its isolated members must fit the VMA budget, as at a tick: a
	 * generous budget's cap would otherwise arm more than the process
	 * may have mappings. */
	if (l < vma_floor(tracked))
		l = vma_floor(tracked);
	/* The touches so far were at lk: at l they would have been fewer by
	 * the ratio of the samples. */
	uint64_t n = __atomic_load_n(&E.burst, __ATOMIC_RELAXED);
	E.burst_excess += n - (n >> (l - lk));
	uint64_t t0 = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	wss_sampling_raise_to(l); /* which sets another cap of touches from here (wss_policy_burst_cap) */
	/* Paid once, as a tick's change of sample: said in the sample's
	 * cost, left out of the decision's. */
	uint64_t t = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	E.change_ns += t;
}

/* All writes (sampling.c) while the kernel's write faults they add fit a
 * quarter of the budget, kept while they fit half of it (the rest is the
 * sample's, whose faults a finer level doubles), and while they pay (below).  At the writes of the last
 * sample (estimated, when sampled: a window's writes, at least an
 * interval's), never before one: the decision is an interval late, and a
 * program whose writes grow pays one interval of kernel faults at most
 * before it ends.  So each time the
 * cost ends it, it may come back only after twice as many ticks as the
 * last time (at least 4): a program that alternates quiet and busy phases
 * pays that interval ever more rarely.  Only under auto with a backend
 * that has both faults and write protection (hybrid), and no sparse range
 * (its pages outside the sample have no state).  WSS_TEST_ALL_WRITES sets
 * it for tests: always, never, or every other interval (the next one,
 * E.epoch, when even). */
bool wss_policy_all_writes(uint32_t level, uint64_t wall_ns)
{
	if (!level || !E.backend->fault || !E.backend->harvest || !E.backend->watch || !E.backend->unwatch ||
	    wss_sparse_any())
		return false;
	if (E.set.test.all_writes)
		return E.set.test.all_writes == 1 || (E.set.test.all_writes == 2 && E.epoch % 2 == 0);
	if (E.set.mode != WSS_TRACK_AUTO || E.set.sample_level || !E.wp_cost_ns || !E.nsamples)
		return false;
	uint64_t budget = E.set.overhead_ppm ? E.set.overhead_ppm : WSS_OVERHEAD_DEFAULT_PPM;
	uint64_t allow = (uint64_t)((unsigned __int128)wall_ns * budget / 1000000);
	/* They may take the sample a level or two coarser: what they cost
	 * grows with the writes, and so does what they take out of the data
	 * estimate's variance. */
	/* With the tick's harvest and count of every page of the dense
	 * ranges, whatever was written: a large heap written little would
	 * pay more for the scan than for its writes.  As measured, or
	 * DEFAULT_AW_PAGE_NS a page before any measure. */
	uint64_t scan = wss_regions_pages(&E.regions) * (E.aw_page_ns ? E.aw_page_ns : DEFAULT_AW_PAGE_NS);
	uint64_t c = E.last_writes * E.wp_cost_ns + scan;
	/* And only where they pay: the data estimate's variance comes from
	 * the pages read and not written alone, R of the data D, but at a
	 * sample that the share of the budget they take, c, makes coarser
	 * by about allow / (allow - c); so while R / D < 1 - c / allow. */
	uint64_t d = E.last_pages, r = d > E.last_writes ? d - E.last_writes : 0;
	bool pays = c < allow && (unsigned __int128)r * allow < (unsigned __int128)d * (allow - c);
	if (E.all_writes) {
		if (c <= allow / 2 && pays)
			return true;
		E.aw_backoff = E.aw_backoff ? 2 * E.aw_backoff : 4;
		E.aw_hold = E.aw_backoff;
		return false;
	}
	if (E.aw_hold) {
		if (--E.aw_hold)
			return false;
		/* The hold's end: the scan's figures are of before it, and two
		 * of the last three may be the one-offs that ended it (one tick
		 * in five reads 5-10 times the others: then the median is one,
		 * and nothing measures the scan while all writes are off).
		 * Forgotten, and a trial interval, judged at the writes' cost,
		 * measures it afresh; the backoff, doubled at each ending,
		 * bounds how often. */
		E.aw_page_n = 0;
		E.aw_page_ns = 0;
		uint64_t w = E.last_writes * E.wp_cost_ns;
		return w <= allow / 4 && (unsigned __int128)r * allow < (unsigned __int128)d * (allow - w);
	}
	return c <= allow / 4 && pays;
}

/* A tick's figure of all writes' scan, per tracked page, in CPU time.
 * Some ticks read several times the others whatever the tick does (an
 * interrupt, a cold cache: bench/RESULTS.md, Stop 38), and one such
 * figure must not decide alone: the median of the last three, and the
 * least of fewer. */
void wss_policy_aw_scanned(uint64_t per)
{
	E.aw_page_v[E.aw_page_n % 3] = per;
	E.aw_page_n++;
	uint64_t a = E.aw_page_v[0], b = E.aw_page_v[1], c = E.aw_page_v[2];
	if (E.aw_page_n == 1)
		E.aw_page_ns = a;
	else if (E.aw_page_n == 2)
		E.aw_page_ns = a < b ? a : b;
	else
		E.aw_page_ns = a > b ? (b > c ? b : a < c ? a : c) : (a > c ? a : b < c ? b : c);
}

void wss_policy_init(void)
{
	E.fault_cost_ns = 0;
	E.ncpu = cpus_allowed();
	E.prec_last_ppm = 0;
	E.probe = 0;
	/* A backend with neither sees no touch to time.  (Exact tracking
	 * sets no rate, but its cost is said: wss_policy_next.) */
	if (!E.backend->fault && !E.backend->harvest)
		return;
	/* The probe page between two pages of its own mapping, the three
	 * between two inaccessible guard pages: arming and opening it splits
	 * and merges a VMA as a member inside a tracked range does (timed
	 * alone in its VMA, a touch read 4 µs where a member's costs 8), and
	 * no fault handler's neighbour or block is ever a tracked page of
	 * ours.  The backend observes all three (the same VMA flags), only
	 * the middle one is tracked and armed. */
	char *g = wss_sys_alloc(5 * WSS_PAGE_SIZE); /* the tool's own memory (attached: left out of the scan) */
	if (!g)
		return; /* no probe: the cost of a touch stays unknown, counted as 0 */
	char *n = g + WSS_PAGE_SIZE;
	uintptr_t a = (uintptr_t)n + WSS_PAGE_SIZE;
	if (wss_sys_mprotect(g, WSS_PAGE_SIZE, PROT_NONE) || wss_sys_mprotect(n + 3 * WSS_PAGE_SIZE, WSS_PAGE_SIZE, PROT_NONE) ||
	    wss_shadow_ensure(a, a + WSS_PAGE_SIZE)) {
		wss_sys_free(g, 5 * WSS_PAGE_SIZE);
		return;
	}
	__atomic_store_n(wss_shadow_flags(a), (uint8_t)(PROT_READ | PROT_WRITE | WSS_PF_TRACKED), __ATOMIC_RELEASE);
	/* populated: the probe times our fault, not the kernel's first allocation */
	for (int i = 0; i < 3; i++)
		n[i * WSS_PAGE_SIZE] = 0;
	if (E.backend->attach((uintptr_t)n, (uintptr_t)n + 3 * WSS_PAGE_SIZE, false))
		return;
	E.probe = a;
}
