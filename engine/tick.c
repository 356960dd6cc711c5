/* The tick: the end of one interval, under the engine lock, in named
 * phases (tick_locked): drain (move the epoch, wait for the interval's
 * handlers: fault.c's protocol), decide (the levels: policy.c), arm (the
 * next interval: at a steady sampled level the members touched in the
 * interval only), harvest (the write bits), count (the window's pages from
 * their states: pagestate.h explains why a two-deep history makes that
 * exact; sampled, the estimates from the members in address order), emit
 * (the sample with its threads, the trace, the peaks) and account (the
 * tick's own cost, for the next decision). */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>

static void (*on_tick)(void);

void wss_engine_on_tick(void (*fn)(void)) { on_tick = fn; }

static int64_t thread_cpu_ns(int tid)
{
	/* The kernel's CPU-clock id for a thread: see CPUCLOCK_* in the
	 * kernel's posix-timers.h (per-thread, scheduler clock). */
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
	struct timespec ts;
	if (tid <= 0 || clock_gettime(id, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The read-ever bits of a page (wss_shadow_rever): in a read set once (the
 * exact read total), and, for each series s of the run's totals (0 data,
 * 1 write, 2 read set), counted in an exact window (E) or in a sampled one
 * (S).  The sampled totals (output.c) are the pages with E, all seen, plus
 * the members of the run's coarsest level with S and not E, scaled: which
 * pages the program touched in exact and in sampled windows does not depend
 * on the sample, so these members are a sample of the pages touched in
 * sampled windows alone.  Engine lock held (the tick, an untrack). */
/* A steady tick's arming and harvest are divided among its listed members
 * only when they are enough to outweigh the fixed part. */
#define MIN_TOUCHED_FOR_COST 32

/* The data series (s 0) is counted by kind too. */
static void total_note(uintptr_t a, uint8_t *rv, int s, int kind, bool sampled, uint32_t *top)
{
	uint8_t bit = sampled ? REVER_S(s) : REVER_E(s), old = *rv;
	if (old & bit)
		return;
	*rv = (uint8_t)(old | bit);
	if (*top == UINT32_MAX)
		*top = wss_sampling_top_level(a);
	bool by_kind = s == 0 && kind > 0 && kind < WSS_KIND_N;
	if (!sampled) {
		E.total_exact[s][*top]++;
		if (by_kind)
			E.kind[kind].total_exact++;
		if (old & REVER_S(s)) {
			E.total_hist[s][*top]--;
			if (by_kind)
				E.kind[kind].total_hist[*top]--;
		}
	} else if (!(old & REVER_E(s))) {
		E.total_hist[s][*top]++;
		if (by_kind)
			E.kind[kind].total_hist[*top]++;
	}
}

int wss_tick_count_present(uintptr_t a, uint8_t *rv, int kind, bool data, bool write)
{
	uint32_t top = UINT32_MAX;
	uint8_t old = *rv;
	if (data)
		total_note(a, rv, 0, kind, false, &top);
	if (write)
		total_note(a, rv, 1, kind, false, &top);
	return (int)(data && !(old & REVER_E(0))) | (int)(write && !(old & REVER_E(1))) << 1;
}

/* One sample's count over the pages of the window's sample. */
typedef struct count {
	uint32_t k, w, nt, lw;
	bool hot;
	bool dry; /* counts and strata only, no page's or thread's state changed (WSS_TEST_COUNT=check) */
	wss_profile_sets_t sets;
	uint64_t pages, writes;
	/* Sampled: every member's 0/1, in address order, for the sample's
	 * intervals (data, write, read: common/estimate.h, wss_strata_*). */
	wss_strata_t st[3];
	/* The kind of the range being counted, and the data and write
	 * pages of each kind, with each kind's own data strata. */
	int kind;
	uint64_t kpages[WSS_KIND_N], kwrites[WSS_KIND_N];
	wss_strata_t kst[WSS_KIND_N];
	/* All writes (sampling.c): every interval of the window observed
	 * every write; the pages written in it, of every kind, counted on
	 * every page; each kind's members read and not written, in strata. */
	bool aw;
	uint64_t wall, kwall[WSS_KIND_N];
	wss_strata_t krst[WSS_KIND_N];
	/* The design of the piece the last member was in: a strata unit of
	 * 2^csh pages (0: a page), for members in [cs, ce). */
	uintptr_t cs, ce;
	unsigned csh;
} count_t;

/* The strata of the range being counted, series by series. */
static void strata_of(count_t *c, wss_strata_t *v[5])
{
	v[0] = &c->st[0];
	v[1] = &c->st[1];
	v[2] = &c->st[2];
	v[3] = &c->kst[c->kind];
	v[4] = &c->krst[c->kind];
}

/* A piece of a cluster design with members: its clusters' size, known to
 * the strata however they are added (one by one, or untouched in bulk by
 * the list's count), so that both counts give the same interval. */
static void design_mark(count_t *c, unsigned sh)
{
	wss_strata_t *v[5];
	strata_of(c, v);
	for (int j = 0; j < 5; j++)
		wss_strata_design(v[j], 1ULL << sh);
	if (!c->dry)
		E.clustered = true;
}

/* The strata's unit of member a: its page, or its cluster (sampling.c).
 * A member of another piece (another sparse entry, or a dense page) first
 * closes the cluster gathered so far: a cluster that a piece's end cuts
 * is one unit on each side, as the list's count (count_piece_listed) and
 * the cut bounds (wss_sampling_cut_clusters) have it, and the members
 * stay in address order. */
static unsigned unit_shift(count_t *c, uintptr_t a)
{
	if (!c->lw || !wss_sparse_any())
		return 0;
	if (a < c->cs || a >= c->ce) {
		wss_strata_t *v[5];
		strata_of(c, v);
		for (int j = 0; j < 5; j++)
			wss_strata_close(v[j]);
		c->csh = wss_sampling_cluster_shift(a, c->lw, &c->cs, &c->ce);
		if (c->csh)
			design_mark(c, c->csh);
	}
	return c->csh;
}

/* Member a in every strata: touched (data 1, written wr) or not (0, 0). */
static void strata_put(count_t *c, uintptr_t a, double data, double wr)
{
	unsigned sh = unit_shift(c, a);
	wss_strata_t *v[5];
	strata_of(c, v);
	double y[5] = {data, wr, data - wr, data, data - wr};
	for (int j = 0; j < 5; j++) {
		if (sh)
			wss_strata_add_key(v[j], a >> (WSS_PAGE_SHIFT + sh), y[j]);
		else
			wss_strata_add(v[j], y[j]);
	}
}

static void count_page(uintptr_t a, void *arg)
{
	count_t *c = arg;
	uint32_t owner;
	wss_page_t *pg = wss_shadow_page(a);
	if (!wss_page_in_window(pg, c->k, c->w, &owner)) {
		if (c->lw)
			strata_put(c, a, 0, 0);
		return;
	}
	if (c->hot && !c->dry && wss_page_touched_in(pg, c->k))
		(*wss_shadow_hits(a))++;
	c->pages++;
	bool wrote = false;
	uint8_t *rv = wss_shadow_rever(a);
	if (c->sets.writes) {
		wrote = wss_written_in(*wss_shadow_written(a), c->k, c->w);
		c->writes += wrote;
		if (!wrote && c->sets.reads && !c->dry && !(*rv & REVER_READ)) {
			*rv |= REVER_READ;
			E.total_read++;
		}
	}
	c->kpages[c->kind]++;
	c->kwrites[c->kind] += wrote;
	if (c->dry) {
		if (c->lw)
			strata_put(c, a, 1, wrote);
		return;
	}
	uint32_t top = UINT32_MAX;
	total_note(a, rv, 0, c->kind, c->lw != 0, &top);
	if (c->lw) {
		/* Under all writes the written pages are the exact part of
		 * the average (E.exact_sum): a member counts for the pages
		 * read and not written alone. */
		double *cn = wss_shadow_counts(a), wt = (double)(1ULL << c->lw);
		cn[0] += c->aw && wrote ? 0 : wt;
		cn[1] += wrote && !c->aw ? wt : 0;
		strata_put(c, a, 1, wrote);
	}
	if (wrote)
		total_note(a, rv, 1, c->kind, c->lw != 0, &top);
	else if (c->sets.reads)
		total_note(a, rv, 2, c->kind, c->lw != 0, &top);
	if (owner <= c->nt) {
		wss_threads_get(owner)->window_pages++;
		wss_threads_get(owner)->window_writes += wrote;
	}
}

/* Under all writes: a page written in the window, whoever's member, is
 * counted exactly, in the window's writes and in the run's totals of data
 * and writes (first counted in an exact window: REVER_E). */
static void count_written(uintptr_t a, void *arg)
{
	count_t *c = arg;
	uint64_t *w = wss_shadow_written(a);
	if (!w || !wss_written_in(*w, c->k, c->w))
		return;
	c->wall++;
	c->kwall[c->kind]++;
	uint8_t *rv = wss_shadow_rever(a);
	uint32_t top = UINT32_MAX;
	total_note(a, rv, 0, c->kind, false, &top);
	total_note(a, rv, 1, c->kind, false, &top);
}

/* A page leaving tracking in interval k (munmap): touched in the window
 * in progress, it would count in no sample, but it counts in the run's
 * data total (as a fault-time count would have it in exact mode). */
static void count_gone_window(uintptr_t a, int kind, uint32_t k)
{
	uint32_t w = E.set.window_intervals, owner;
	wss_page_t *pg = wss_shadow_page(a);
	if (!pg)
		return;
	/* Every write of the window observed (exact, or all writes): its
	 * write counts in the totals, harvested before it went
	 * (wss_registry_harvest_before_unmap).  Before the touch's test: a
	 * page outside the sample has no touch recorded, its write is all
	 * there is of it. */
	if (wss_sampling_all_writes_in(k, w)) {
		count_t c = {.k = k, .w = w, .kind = kind};
		count_written(a, &c); /* its writes were harvested (wss_engine_munmap) */
	}
	if (!wss_page_in_window(pg, k, w, &owner))
		return;
	uint32_t lw = wss_sampling_window_level(k, w);
	if (lw && !wss_sampling_member(a, lw))
		return;
	uint32_t top = UINT32_MAX;
	total_note(a, wss_shadow_rever(a), 0, kind, lw != 0, &top);
}

void wss_tick_count_gone(uintptr_t a, int kind)
{
	count_gone_window(a, kind, E.epoch);
	/* Its last touch, for the totals over several levels (after the
	 * window's count, which may find it in an exact one): its leaving
	 * ends what may follow it, the interval in progress included. */
	if (E.level_max)
		wss_tick_last_touch(a, kind, E.epoch, &E.last_gone);
}


/* An estimate that is the count itself (exact tracking). */
static wss_estimate_t exact(uint64_t x) { return (wss_estimate_t){x, x, x}; }

/* Add a sample's estimate of one series to the run's avg and peak. */
static void accumulate(int s, wss_estimate_t v)
{
	E.sum_lo[s] += v.lo;
	E.sum_hi[s] += v.hi;
	if (v.est > E.peak_est[s].est || E.nsamples == 0)
		E.peak_est[s] = v;
	/* The true peak is some sample's true count: at least the largest
	 * lower bound, at most the largest upper bound, whichever sample
	 * holds it (the largest estimate's own interval said "+-0 %" when
	 * an exact sample had the largest estimate and sampled ones, whose
	 * truth may be larger, had wider intervals). */
	if (v.lo > E.peak_lo[s] || E.nsamples == 0)
		E.peak_lo[s] = v.lo;
	if (v.hi > E.peak_hi[s] || E.nsamples == 0)
		E.peak_hi[s] = v.hi;
}

/* The same for a kind's data: the mean of the samples' bounds holds its
 * average, the largest bounds its peak (as accumulate). */
static void accumulate_kind(int k, uint64_t tracked, wss_estimate_t v)
{
	if (!tracked && !v.hi)
		return;
	bool first = !(E.kinds_seen & (1U << k));
	E.kinds_seen |= 1U << k;
	E.kind[k].sum += v.est;
	E.kind[k].sum_lo += v.lo;
	E.kind[k].sum_hi += v.hi;
	if (v.est > E.kind[k].peak || first)
		E.kind[k].peak = v.est;
	if (v.lo > E.kind[k].peak_lo || first)
		E.kind[k].peak_lo = v.lo;
	if (v.hi > E.kind[k].peak_hi || first)
		E.kind[k].peak_hi = v.hi;
}

/* The precision of a sampled interval's data estimate, against
 * session.precision: for auto's next decision and the summary.  An exact
 * interval is precise (a half-width of 0); a sampled one none of whose
 * members was touched is not judged in the summary (no relative error)
 * but is no precise one either: its sample is too small to say anything,
 * and only a finer one can. */
static void precision_note(uint32_t lw, uint64_t x, wss_estimate_t data)
{
	E.prec_last_ppm = lw ? UINT64_MAX : 0;
	if (!lw || x == 0)
		return;
	uint64_t hw = wss_estimate_halfwidth_ppm(data);
	uint64_t target = E.set.precision_ppm ? E.set.precision_ppm : WSS_PRECISION_DEFAULT_PPM;
	E.prec_last_ppm = hw;
	E.prec_n++;
	E.prec_missed += hw > target;
	E.prec_hist[wss_precision_bin(hw)]++;
}

static void tick_locked(bool final);

void wss_tick_locked(bool final)
{
	wss_code_ticking = true;
	tick_locked(final);
	wss_code_ticking = false;
}

/* One tick's state, phase to phase (tick_locked). */
typedef struct tick {
	bool final;                 /* the sample taken at the end: nothing armed after it */
	uint64_t t_start, cpu_start; /* when it started, and its thread's CPU time then */
	uint64_t fixed;             /* on_tick's CPU time: said, not budgeted */
	uint64_t once;              /* a change of sample's CPU time: left out of the tick's cost */
	uint32_t k, w, nt;          /* the interval ending, the window, the thread slots */
	uint32_t lk, lw, ln, lt;    /* levels: armed in k, counted, next, the trace's */
	bool awk, awn, aw;          /* all writes (sampling.c): in k, in k + 1, in the whole window counted */
	uint64_t aw_scan_ns;        /* ... what their harvest and count of every page took */
	uint64_t faults, unarmed;
	const uintptr_t *listed;    /* k's touched list, when the tick may arm by it */
	const uintptr_t *klist;     /* the same, whole, for k's harvest and count, whatever k + 1's level */
	uint32_t nlisted;
	bool window, change;        /* the write window is open; the level changes */
	uint64_t c_arm, c_armed;    /* CPU time when the arming started, and when it ended */
	wss_profile_sets_t sets;
	count_t c;
	uint64_t tracked, members, code, code_ns, now, coarse, pages, writes;
	bool code_lower;
	wss_estimate_t est[3];
	uint64_t ktracked[WSS_KIND_N], kmembers[WSS_KIND_N]; /* by kind, as tracked and members */
	wss_estimate_t kest[WSS_KIND_N], kwrite[WSS_KIND_N];
} tick_t;

/* The epoch moves to k + 1; every handler and open of k is done; k's faults, thread by thread. */
static void tick_drain(tick_t *x)
{
	x->t_start = wss_clock_ns(CLOCK_MONOTONIC);
	x->cpu_start = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	/* What on_tick costs (attached: reading /proc/self/maps) no sample
	 * makes cheaper: said in the overhead, not weighed by the budget (it
	 * drove a sleeping program's sample to 1 in 128 for nothing). */
	if (on_tick) {
		on_tick();
		x->fixed = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - x->cpu_start;
	}
	wss_loader_apply_locked();
	x->k = E.epoch;
	x->w = E.set.window_intervals;
	__atomic_store_n(&E.epoch, x->k + 1, __ATOMIC_SEQ_CST);
	/* The opens announced in k, which then enter flight, then k's
	 * handlers (fault.c): neither count can grow after the epoch move. */
	while (__atomic_load_n(&E.opening[x->k & 1], __ATOMIC_SEQ_CST))
		wss_sys_sched_yield();
	while (__atomic_load_n(&E.inflight[x->k & 1], __ATOMIC_SEQ_CST))
		wss_sys_sched_yield();
	/* k + 1's burst count starts, after k's handlers are done (fault.c:
	 * k + 1's own first touches made before this are not counted). */
	__atomic_store_n(&E.burst, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&E.burst_hit, 0, __ATOMIC_RELAXED);

	/* Every handler of k is done, and none of k+2 can start before the
	 * next tick: [k & 1] holds exactly k's faults, cut at the epoch move
	 * like the touches. */
	x->nt = wss_threads_count();
	for (uint32_t s = 0; s <= x->nt; s++) {
		wss_thread_t *t = wss_threads_get(s);
		t->faults_k = __atomic_exchange_n(&t->faults[x->k & 1], 0, __ATOMIC_RELAXED);
		x->faults += t->faults_k;
	}
}

/* The levels: armed in k, counted for sample k, and the next interval's (policy.c). */
static void tick_decide(tick_t *x)
{
	/* The levels: armed in k, counted for sample k (the coarsest of the
	 * window: its members were armed in every interval of it), and the
	 * next interval's, from what k cost. */
	x->lk = E.level;
	x->lw = wss_sampling_window_level(x->k, x->w);
	x->ln = x->lk;
	x->awk = E.all_writes;
	x->aw = x->lw && wss_sampling_all_writes_in(x->k, x->w);
	/* The trace's level for k alone, before the next level is set (the
	 * set marks it used in k + 1, which a coarser one then claims). */
	x->lt = wss_sampling_window_level(x->k, 1);
	uint64_t wall = E.prev_tick_at ? x->t_start - E.prev_tick_at : x->t_start - E.t0_ns;
	if (!x->final) {
		x->ln = wss_policy_next(x->faults, __atomic_load_n(&E.coarse, __ATOMIC_RELAXED), wall, x->t_start);
		x->awn = wss_policy_all_writes(x->ln, wall);
	}
	/* How late a tick of the clock came (the stderr summary says so
	 * when much later than asked: output.c). */
	if (!x->final && E.set.time_base == WSS_ENGINE_WALL) {
		uint64_t len = x->t_start - (E.prev_tick_at ? E.prev_tick_at : E.t0_ns);
		if (len > E.late_max_ns)
			E.late_max_ns = len;
	}
	E.prev_tick_at = x->t_start;
}

/* The next interval armed: from k's touched list at a steady level, else every member. */
static void tick_arm(tick_t *x)
{
	/* Interval k's touched list (fault.c), taken after the drain: at a
	 * steady level, the tick re-arms and harvests its pages alone, one
	 * or two system calls per member touched instead of per member.  A
	 * member in no list was armed throughout k: armed at the start of k
	 * (by the tick before, whichever way it armed, or by the attach of a
	 * range mapped in k), and every way a member opens puts it in a list
	 * the tick reads or marks the lists stale: a handler's or a pin's
	 * open (announced, fault.c), a pin at this tick (recorded in k + 1
	 * below, listed there), the program's mprotect (it re-arms the
	 * members not touched in the interval; a touched one is listed), a
	 * coarse open, mremap, the relief under ENOMEM, a pin over a range
	 * being attached, a fork (stale).  Armed, it was neither read nor
	 * written in k (a write to an armed page faults first under hybrid),
	 * so its protection and its write bit are already what the full walk
	 * would leave.  A member first touched in k + 1 before this harvest
	 * (a fault of the write window takes no bit from it: it was not
	 * touched in k) is in k + 1's list, and tick k + 1 harvests its write
	 * into k + 1, where the full walk would have put it now.  The probe
	 * page is in no range and no list.  The full walk stays for: a change
	 * of level (every new member must be armed; the tick after it may
	 * take the list: wss_sampling_steady), exact tracking, a backend
	 * whose harvest is its touches (uffd-wp: every member is scanned), an
	 * overflowed or stale list, and the final sample. */
	x->listed = wss_fault_list_take(x->k, &x->nlisted);
	if (x->final || (!E.backend->fault && E.backend->harvest))
		x->listed = NULL;
	/* A change of level arms by the full walk (every new member), but
	 * k's list still holds every member of k's level touched in k: k's
	 * harvest and count take it (a write of an armed member faults
	 * first, so an unlisted member of lk was not written in k). */
	x->klist = x->lk ? x->listed : NULL; /* exact: every page scanned and counted, as always */
	if (!wss_sampling_steady(x->ln))
		x->listed = NULL;

	/* The write window opens before the arming: a fault on a page armed
	 * now must see it (writes.c). */
	x->window = !x->final && E.backend->harvest && E.backend->fault;
	if (E.backend->harvest)
		E.harvester = wss_sys_gettid();
	if (x->window)
		wss_writes_window_open(x->k, x->awk ? x->lk : 0);
	/* A change of level walks every member once: its arming and harvest
	 * are left out of the tick's cost with the rest of the change (the
	 * budget weighs what an interval at the new level costs, the list's
	 * arming from then on).  So is the tick after a level raised in the
	 * interval (a sparse range's VMA floor, a burst: from exact, the
	 * raise lists the members touched so far, sampling.c). */
	x->change = !x->final && (x->ln != x->lk || E.raised);
	E.raised = false;
	x->c_arm = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!x->final) {
		/* A finer sample: its new members were not watched (their write
		 * bits are stale); watched before they are armed, a write of
		 * theirs from now on is k+1's.  All writes from k + 1: every
		 * page not watched in k, likewise (the pages watched in k keep
		 * their bits of k for the harvest).  Under all writes in k,
		 * every page is watched already. */
		uint32_t fine = x->awn ? 0 : x->ln;
		if (!x->awk && fine < x->lk)
			for (size_t i = 0; i < E.regions.n; i++)
				wss_sampling_watch_new(E.regions.v[i].start, E.regions.v[i].end, fine, x->lk);
		wss_sampling_all_writes_next(x->awn, x->ln, x->k + 1);
		wss_arm_begin();
		if (x->ln == 0) {
			wss_sampling_set(0, x->k + 1);
			for (size_t i = 0; i < E.regions.n; i++)
				if (wss_arm_unpinned(E.regions.v[i].start, E.regions.v[i].end))
					x->unarmed++;
			__atomic_store_n(&E.vma_delta, 0, __ATOMIC_RELAXED);
		} else {
			/* The new level first, for the faults on the members being
			 * armed (their VMA estimate), with the VMAs the members
			 * will hold; a member alone in its range splits a VMA in
			 * three, and the fault that opens it gives them back. */
			uint64_t armed = 0;
			for (size_t i = 0; i < E.regions.n; i++)
				armed += wss_sampling_units(E.regions.v[i].start, E.regions.v[i].end, x->ln);
			wss_sampling_set(x->ln, x->k + 1);
			__atomic_store_n(&E.vma_delta, (long)(2 * armed), __ATOMIC_RELAXED);
			if (x->listed) {
				x->unarmed += wss_sampling_arm_listed(x->listed, x->nlisted, x->ln);
			} else {
				/* A finer level's new members of sparse ranges: set
				 * up before they are first armed. */
				wss_sampling_sparse_setup(x->ln);
				for (size_t i = 0; i < E.regions.n; i++)
					x->unarmed += wss_sampling_arm(E.regions.v[i].start, E.regions.v[i].end, x->ln);
			}
			/* A coarser sample (or the first, after exact): the pages
			 * armed in k that are not members now get their own
			 * protection back, after the members are armed, so that no
			 * member is ever open in between (a touch then would go
			 * unseen).  A finer sample holds the coarser one (nested):
			 * nothing to open. */
			if (x->lk == 0 || x->lk < x->ln) {
				wss_change_begin();
				for (size_t i = 0; i < E.regions.n; i++)
					wss_sampling_open_others(E.regions.v[i].start, E.regions.v[i].end, x->lk, x->ln);
				wss_change_end();
			}
		}
		/* Pinned buffers stay open: the kernel may touch them at any time
		 * during the call, so they count as touched in the new interval. */
		wss_pins_record_pinned(x->k + 1);
		wss_arm_end();
		wss_code_arm_locked();
		x->c_armed = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (E.set.test.harvest_delay_ns) {
			struct timespec ts = {(time_t)(E.set.test.harvest_delay_ns / 1000000000ULL),
					      (long)(E.set.test.harvest_delay_ns % 1000000000ULL)};
			while (wss_sys2(SYS_nanosleep, &ts, &ts) == -EINTR)
				;
		}
	}

}

/* k's writes, and what re-arming and harvesting a member cost. */
static void tick_harvest(tick_t *x)
{
	/* The working set: pages touched in the window, each owned by its
	 * latest toucher; of those, the ones written in the window (a page's
	 * write is harvested into the interval it was made in, so written
	 * pages are a subset of touched ones, up to a write racing the tick),
	 * counted against the same owner. */
	x->sets = (wss_profile_sets_t){.writes = E.backend->harvest != NULL,
				   .reads = E.backend->harvest != NULL && E.backend->fault != NULL};
	if (E.backend->harvest) {
		/* Writes since the last harvest, after the arming: a write made
		 * between the harvest and the arming would reach the next tick
		 * away from its touch; writes made after the arming are told
		 * apart by the write window.  Sampled: the members of k's level.
		 * The pages joining a finer sample were write-protected afresh
		 * before they were armed (wss_sampling_watch_new): their bits
		 * are k+1's, for the next tick (read here as stale, a write of
		 * k+1 after the arming was lost, a review found). */
		/* Under all writes, every page: its pages outside the sample
		 * are in no list. */
		uint32_t lh = x->awk ? 0 : x->lk;
		if (x->klist && !x->awk)
			x->unarmed += wss_writes_harvest_listed(x->klist, x->nlisted, x->k, x->lk);
		uint64_t h0 = x->awk ? wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
		/* A stack's touches are its writes, in no list (no fault sees
		 * them): its members are harvested whichever way the rest is. */
		for (size_t i = 0; i < E.regions.n; i++)
			if (!x->klist || x->awk || E.regions.v[i].kind == WSS_KIND_STACK)
				if (wss_writes_harvest_sampled(E.regions.v[i].start, E.regions.v[i].end, x->k, lh, x->lk,
							       E.regions.v[i].owner)) {
					/* Part of it was not observed (remapped
					 * behind our back): observe all of it again
					 * from now on. */
					wss_registry_observe(E.regions.v[i].start, E.regions.v[i].end);
					x->unarmed++;
				}
		if (x->awk)
			x->aw_scan_ns = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - h0;
	}
	/* A coarser sample: the pages that left it, their bits of k read by
	 * the harvest, are not watched any more; no more all writes: every
	 * page outside the sample.  Under all writes in k + 1, all stay. */
	uint32_t from = x->awk ? 0 : x->lk;
	if (!x->final && !x->awn && from < x->ln && E.backend->unwatch) {
		wss_change_begin();
		for (size_t i = 0; i < E.regions.n; i++)
			wss_sampling_unwatch_others(E.regions.v[i].start, E.regions.v[i].end, from, x->ln);
		wss_change_end();
	}
	wss_fault_list_reset(x->k);
	if (x->window)
		wss_writes_window_close();
	uint64_t c_end = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (x->change)
		x->once = c_end - x->c_arm;
	/* What re-arming and harvesting a touched member costs the tick, for
	 * a burst's raise (wss_policy_burst): from steady ticks that took
	 * the list (a full walk's cost is every member's, not the touched
	 * ones'), the arming and harvest alone; under all writes the arming
	 * alone (the harvest scans every page however few members were
	 * touched: a fixed part). */
	if (x->listed && !x->change && x->lk && x->lk == x->ln && x->nlisted >= MIN_TOUCHED_FOR_COST) {
		uint64_t m = ((x->awk ? x->c_armed : c_end) - x->c_arm) / x->nlisted;
		E.member_tick_ns = E.member_tick_ns ? (E.member_tick_ns * 3 + m) / 4 : m;
	}
	/* The harvest records k's touches under uffd-wp: into k's counters,
	 * read before it for the decision; no handler of k+2 exists yet. */
	for (uint32_t s = 0; s <= x->nt; s++) {
		wss_thread_t *t = wss_threads_get(s);
		uint64_t late = __atomic_exchange_n(&t->faults[x->k & 1], 0, __ATOMIC_RELAXED);
		t->faults_k += late;
		x->faults += late;
	}
}

/* m untouched members in a row, for the count by the list. */
/* m untouched units (members, or clusters: the one open is closed first). */
static void count_zeros(count_t *c, uint64_t m)
{
	wss_strata_t *v[5] = {&c->st[0], &c->st[1], &c->st[2], &c->kst[c->kind], &c->krst[c->kind]};
	for (int j = 0; j < 5; j++) {
		wss_strata_close(v[j]);
		wss_strata_add_zeros(v[j], m);
	}
}

/* A cluster cut by its range's end (wss_sampling_cut_clusters): its
 * touched pages in [s, e) bound its spread, series by series. */
static void count_cut(uintptr_t s, uintptr_t e, void *arg)
{
	count_t *c = arg;
	double d = 0, w = 0;
	for (uintptr_t a = s; a < e; a += WSS_PAGE_SIZE) {
		uint32_t owner;
		if (!wss_page_in_window(wss_shadow_page(a), c->k, c->w, &owner))
			continue;
		d++;
		w += c->sets.writes && wss_written_in(*wss_shadow_written(a), c->k, c->w);
	}
	wss_strata_doubt(&c->st[0], d);
	wss_strata_doubt(&c->st[1], w);
	wss_strata_doubt(&c->st[2], d - w);
	wss_strata_doubt(&c->kst[c->kind], d);
	wss_strata_doubt(&c->krst[c->kind], d - w);
}

/* v[r]'s place in the heap v[0 .. end). */
static void sift(uintptr_t *v, uint32_t r, uint32_t end)
{
	for (uint32_t ch; (ch = 2 * r + 1) < end; r = ch) {
		if (ch + 1 < end && v[ch + 1] > v[ch])
			ch++;
		if (v[r] >= v[ch])
			return;
		uintptr_t t = v[r];
		v[r] = v[ch];
		v[ch] = t;
	}
}

/* Sorts v[0 .. n) in place: a heapsort, which needs no memory but the
 * engine thread's stack (qsort may allocate). */
static void sort_pages(uintptr_t *v, uint32_t n)
{
	for (uint32_t i = n / 2; i > 0; i--)
		sift(v, i - 1, n);
	for (uint32_t end = n; end > 1; end--) {
		uintptr_t t = v[0];
		v[0] = v[end - 1];
		v[end - 1] = t;
		sift(v, 0, end - 1);
	}
}

/* May the window's members be counted by k's touched list, and the rest
 * taken as untouched in bulk?  A window of one interval at a sampled
 * level (k + 1's may differ: k's list is k's), whose list was whole (tick_arm's reasoning: a member in
 * no list was armed throughout k, so neither read nor written in it),
 * without all writes (whose pages outside the sample are counted by
 * their write bits): then a member of lw touched in the window is one
 * touched in k, and every such one is listed.  Stacks are never listed
 * (their touches are writes no fault sees): counted by the walk. */
static bool count_by_list(const tick_t *x)
{
	return x->klist && x->w == 1 && x->lw && x->lw == x->lk && !x->awk && !x->aw &&
	       E.set.test.count != 1;
}

/* Region [s, e)'s members by the sorted list v[*i ..): each listed member
 * counted, the members between them added as untouched; *i moves past the
 * region's pages.  The same members in the same order as the walk, so
 * the same counts and strata, in time proportional to the touched.  A
 * piece whose members are clusters: a listed page's cluster is counted by
 * its listed pages (the others in it are untouched, adding nothing to its
 * sum), and the clusters between as untouched units. */
typedef struct listed_walk {
	count_t *c;
	const uintptr_t *v;
	uint32_t n, *i;
} listed_walk_t;

static void count_piece_listed(uintptr_t s, uintptr_t e, unsigned span, void *arg)
{
	listed_walk_t *l = arg;
	count_t *c = l->c;
	const uintptr_t *v = l->v;
	uint32_t n = l->n, *i = l->i;
	unsigned sh = c->lw < span ? span - c->lw : 0;
	if (sh && wss_sampling_units(s, e, c->lw))
		design_mark(c, sh); /* as the walk's first member of the piece */
	while (*i < n && v[*i] < s)
		(*i)++;
	uintptr_t at = s;
	for (; *i < n && v[*i] < e; (*i)++) {
		uintptr_t a = v[*i];
		if (a < at || !wss_sampling_member(a, c->lw))
			continue; /* listed twice, or of another level */
		uintptr_t cs = sh ? a >> (WSS_PAGE_SHIFT + sh) << (WSS_PAGE_SHIFT + sh) : a;
		count_zeros(c, wss_sampling_units(at, cs > at ? cs : at, c->lw));
		if (!sh) {
			count_page(a, c);
			at = a + WSS_PAGE_SIZE;
			continue;
		}
		uintptr_t ce = cs + ((uintptr_t)WSS_PAGE_SIZE << sh), prev = 0;
		for (; *i < n && v[*i] < ce && v[*i] < e; (*i)++)
			if (v[*i] != prev && v[*i] >= at)
				count_page(prev = v[*i], c);
		(*i)--;
		at = ce < e ? ce : e;
	}
	count_zeros(c, wss_sampling_units(at, e, c->lw));
}

static void count_region_listed(count_t *c, uintptr_t s, uintptr_t e, const uintptr_t *v, uint32_t n, uint32_t *i)
{
	listed_walk_t l = {c, v, n, i};
	if (wss_sparse_any())
		wss_sparse_designs(s, e, count_piece_listed, &l);
	else
		count_piece_listed(s, e, 0, &l);
}

/* WSS_TEST_COUNT=check: the walk's count, dry, against the list's. */
static void count_check(const tick_t *x)
{
	count_t d = {.k = x->k, .w = x->w, .nt = x->nt, .lw = x->lw, .sets = x->sets, .dry = true};
	for (size_t i = 0; i < E.regions.n; i++) {
		int kind = E.regions.v[i].kind;
		d.kind = kind > 0 && kind < WSS_KIND_N ? kind : 0;
		d.cs = d.ce = 0;
		wss_sampling_members(E.regions.v[i].start, E.regions.v[i].end, x->lw, count_page, &d);
		wss_sampling_cut_clusters(E.regions.v[i].start, E.regions.v[i].end, x->lw, count_cut, &d);
		for (int j = 0; j < 3; j++)
			wss_strata_break(&d.st[j]);
		wss_strata_break(&d.kst[d.kind]);
		wss_strata_break(&d.krst[d.kind]);
	}
	bool same = d.pages == x->c.pages && d.writes == x->c.writes;
	for (int j = 0; j < 3 + 2 * WSS_KIND_N; j++) {
		const wss_strata_t *a = j < 3 ? &d.st[j] : j < 3 + WSS_KIND_N ? &d.kst[j - 3] : &d.krst[j - 3 - WSS_KIND_N];
		const wss_strata_t *b = j < 3 ? &x->c.st[j] : j < 3 + WSS_KIND_N ? &x->c.kst[j - 3] : &x->c.krst[j - 3 - WSS_KIND_N];
		same = same && a->sum == b->sum && a->var == b->var && a->members == b->members && a->pairs == b->pairs &&
		       a->sq == b->sq && a->nonzero == b->nonzero && a->clustered == b->clustered && a->pages_max == b->pages_max;
	}
	char n[24];
	wss_fmt_t f;
	wss_fmt_init(&f, n, sizeof n);
	wss_fmt_u64(&f, x->k);
	wss_log("count check: interval ", wss_fmt_cstr(&f), same ? ": the list's count is the walk's" : ": MISMATCH between the list's count and the walk's", NULL);
}

/* The window's pages, member by member in address order, and the estimates. */
static void tick_count(tick_t *x)
{
	for (uint32_t s = 0; s <= x->nt; s++) {
		wss_thread_t *t = wss_threads_get(s);
		t->window_pages = t->window_writes = t->window_code = 0;
	}
	x->code = wss_code_count(x->k, x->w, x->nt, &x->code_lower);
	/* What the code's first runs cost the program, at the probe's cost
	 * of a touch: said, not budgeted (code is never sampled). */
	x->code_ns = wss_code_take_faults(x->k) * E.fault_cost_ns;
	x->c = (count_t){.k = x->k, .w = x->w, .nt = x->nt, .lw = x->lw, .hot = E.set.hot_pages > 0, .sets = x->sets,
			 .aw = x->aw};
	/* The list is consumed (tick_harvest reset it): sorted in place. */
	bool by_list = count_by_list(x);
	uint32_t li = 0;
	if (by_list)
		sort_pages((uintptr_t *)x->klist, x->nlisted);
	for (size_t i = 0; i < E.regions.n; i++) {
		uintptr_t s = E.regions.v[i].start, e = E.regions.v[i].end;
		int kind = E.regions.v[i].kind;
		kind = kind > 0 && kind < WSS_KIND_N ? kind : 0;
		uint64_t n = (e - s) >> WSS_PAGE_SHIFT, m = x->lw ? wss_sampling_count(s, e, x->lw) : n;
		x->tracked += n;
		x->members += m;
		x->ktracked[kind] += n;
		x->kmembers[kind] += m;
		x->c.kind = kind;
		x->c.cs = x->c.ce = 0; /* the region's first member looks its piece up (unit_shift) */
		if (x->aw) {
			uint64_t c0 = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			wss_sampling_members(s, e, 0, count_written, &x->c);
			x->aw_scan_ns += wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		}
		if (by_list && kind != WSS_KIND_STACK)
			count_region_listed(&x->c, s, e, x->klist, x->nlisted, &li);
		else
			wss_sampling_members(s, e, x->lw, count_page, &x->c);
		wss_sampling_cut_clusters(s, e, x->lw, count_cut, &x->c);
		for (int j = 0; j < 3; j++)
			wss_strata_break(&x->c.st[j]);
		wss_strata_break(&x->c.kst[kind]);
		wss_strata_break(&x->c.krst[kind]);
	}
	if (by_list && E.set.test.count == 2)
		count_check(x);
	if (x->tracked > E.tracked_max)
		E.tracked_max = x->tracked;
	/* What all writes' scan of every page costs a page, for the policy
	 * (wss_policy_all_writes): from ticks that harvested and counted
	 * every page. */
	if (x->awk && x->aw && x->tracked)
		wss_policy_aw_scanned(x->aw_scan_ns / x->tracked);

	x->now = wss_clock_ns(CLOCK_MONOTONIC);
	x->coarse = __atomic_exchange_n(&E.coarse, 0, __ATOMIC_RELAXED);
	if (x->lw) {
		x->est[0] = wss_estimate_strata(x->tracked, x->members, x->c.pages, &x->c.st[0], x->lw);
		x->est[1] = wss_estimate_strata(x->tracked, x->members, x->c.writes, &x->c.st[1], x->lw);
		x->est[2] = wss_estimate_strata(x->tracked, x->members, x->c.pages - x->c.writes, &x->c.st[2], x->lw);
		/* Each kind's data from its own members' strata; its writes
		 * by the ratio of its tracked pages (said without an interval). */
		for (int k = 1; k < WSS_KIND_N; k++) {
			x->kest[k] = wss_estimate_strata(x->ktracked[k], x->kmembers[k], x->c.kpages[k], &x->c.kst[k], x->lw);
			x->kwrite[k] = wss_estimate_pages(x->ktracked[k], x->kmembers[k], x->c.kwrites[k]);
		}
		/* All writes: the writes counted, the data their count plus the
		 * estimate of the pages read and not written, with its interval
		 * (the writes add no variance). */
		if (x->aw) {
			x->est[1] = exact(x->c.wall);
			x->est[0] = (wss_estimate_t){x->c.wall + x->est[2].est, x->c.wall + x->est[2].lo, x->c.wall + x->est[2].hi};
			for (int k = 1; k < WSS_KIND_N; k++) {
				uint64_t w = x->c.kwall[k];
				wss_estimate_t r = wss_estimate_strata(x->ktracked[k], x->kmembers[k], x->c.kpages[k] - x->c.kwrites[k],
								       &x->c.krst[k], x->lw);
				x->kwrite[k] = exact(w);
				x->kest[k] = (wss_estimate_t){w + r.est, w + r.lo, w + r.hi};
			}
		}
	} else {
		for (int k = 1; k < WSS_KIND_N; k++) {
			x->kest[k] = exact(x->c.kpages[k]);
			x->kwrite[k] = exact(x->c.kwrites[k]);
		}
		x->est[0] = exact(x->c.pages);
		x->est[1] = exact(x->c.writes);
		x->est[2] = exact(x->c.pages - x->c.writes);
	}
	/* Reads are data minus writes, as in an exact sample, whatever the
	 * rounding; the read interval is its own. */
	x->pages = x->est[0].est;
	x->writes = x->est[1].est > x->pages ? x->pages : x->est[1].est;
	x->est[1].est = x->writes;
	x->est[2].est = x->pages - x->writes;
	if (x->est[2].lo > x->est[2].est)
		x->est[2].lo = x->est[2].est;
	if (x->est[2].hi < x->est[2].est)
		x->est[2].hi = x->est[2].est;
}

/* v's part num/den (0 when den is). */
static uint64_t share(uint64_t v, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)v * num / den) : 0;
}

/* The sample record, the trace, the peaks and the run's sums. */
static void tick_emit(tick_t *x)
{
	wss_profile_sample_t smp = {
		.seq = x->k,
		.t_ns = x->now - E.t0_ns,
		.cpu_ns = wss_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - E.cpu0_ns,
		.data_pages = x->pages,
		.write_pages = x->writes,
		.read_pages = x->est[2].est,
		.sets = x->sets,
		.coarse = x->coarse,
		.unarmed = x->unarmed,
		.final = x->final,
		.faults = x->faults,
		.rate = 1u << x->lw,
		.ci = {{x->est[0].lo, x->est[0].hi}, {x->est[1].lo, x->est[1].hi}, {x->est[2].lo, x->est[2].hi}},
		.tracked = x->tracked,
		.members = x->members,
		.x = {x->c.pages, x->c.writes, x->c.pages - x->c.writes},
		.all_writes = x->aw,
		.lower_bound = x->coarse != 0,
		.cost_faults_ns = E.cost_faults_ns,
		.cost_tick_ns = E.tick_cost_ns + E.tick_fixed_ns,
		.cost_change_ns = E.change_ns + x->once,
		.cost_program_ns = E.cost_program_ns,
		.cost_wall_ns = E.cost_wall_ns,
		.code = wss_code_on(),
		.code_lower_bound = x->code_lower,
		.code_pages = x->code,
		.cost_code_ns = x->code_ns,
	};
	for (int k = 1; k < WSS_KIND_N; k++) {
		uint64_t w = x->kwrite[k].est < x->kest[k].est ? x->kwrite[k].est : x->kest[k].est;
		smp.kinds[k] = (wss_profile_kind_t){x->ktracked[k], x->kest[k].est, w, {x->kest[k].lo, x->kest[k].hi}};
	}
	wss_profile_sample_begin(&E.out, &smp);
	/* Under all writes the sample's figures are not the members' alone:
	 * each thread has the share of its writes and of its pages read and
	 * not written that its members have of the sample's (a ratio
	 * estimate; a share of the data where no member of the kind was
	 * touched), its interval the members' widened to hold it; with no
	 * member touched, they are no known thread's (slot 0). */
	uint64_t md = 0, mw = 0;
	for (uint32_t s = 0; x->aw && s <= x->nt; s++) {
		md += wss_threads_get(s)->window_pages;
		mw += wss_threads_get(s)->window_writes;
	}
	uint64_t mr = md - mw, rd = x->pages - x->writes;
	bool first = true;
	for (uint32_t s = 0; s <= x->nt; s++) {
		wss_thread_t *t = wss_threads_get(s);
		bool unknown = x->aw && s == 0 && !md && x->pages;
		if (t->window_pages || t->faults_k || t->window_code || unknown) {
			int tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);
			wss_estimate_t td = x->lw ? wss_estimate_pages(x->tracked, x->members, t->window_pages) : exact(t->window_pages);
			wss_estimate_t tw = x->lw ? wss_estimate_pages(x->tracked, x->members, t->window_writes) : exact(t->window_writes);
			if (x->aw) {
				uint64_t p = t->window_pages, w = t->window_writes;
				tw.est = unknown ? x->writes : share(x->writes, mw ? w : p, mw ? mw : md);
				td.est = tw.est + (unknown ? rd : share(rd, mr ? p - w : p, mr ? mr : md));
				wss_estimate_t *e2[2] = {&td, &tw};
				for (int i = 0; i < 2; i++) {
					if (e2[i]->lo > e2[i]->est)
						e2[i]->lo = e2[i]->est;
					if (e2[i]->hi < e2[i]->est)
						e2[i]->hi = e2[i]->est;
				}
			}
			wss_profile_thread_t th = {.tid = tid,
						   .data_pages = td.est,
						   .write_pages = tw.est,
						   .ci = {{td.lo, td.hi}, {tw.lo, tw.hi}},
						   .faults = t->faults_k,
						   .cpu_ns = thread_cpu_ns(tid),
						   .code_pages = t->window_code};
			wss_profile_sample_thread(&E.out, first, &smp, &th);
			first = false;
		}
	}
	wss_profile_sample_end(&E.out);
	wss_out_write();
	if (!E.cut_err)
		E.samples_out = x->k;
	if (E.set.trace)
		wss_trace_interval(x->k, smp.t_ns, x->lt, x->sets);
	if (E.peaks)
		wss_findings_peaks(x->k, x->pages, x->writes, x->sets, x->nt, &(wss_sampled_t){x->lw != 0, x->tracked, x->members},
				   wss_code_on() ? (int64_t)x->code : -1);

	for (int s = 0; s < 3; s++)
		accumulate(s, x->est[s]);
	for (int k = 1; k < WSS_KIND_N; k++)
		accumulate_kind(k, x->ktracked[k], x->kest[k]);
	precision_note(x->lw, x->c.pages, x->est[0]);
	if (!x->lw) {
		E.exact_sum[0] += x->c.pages;
		E.exact_sum[1] += x->c.writes;
		E.exact_sum[2] += x->c.pages - x->c.writes;
	} else if (x->aw) {
		/* the members' counts hold the pages read and not written alone (count_page) */
		E.exact_sum[0] += x->c.wall;
		E.exact_sum[1] += x->c.wall;
	}
	E.last_writes = x->writes;
	E.last_pages = x->pages;
	E.nsamples++;
	E.sum_pages += x->pages;
	if (x->pages > E.peak_pages)
		E.peak_pages = x->pages;
	E.sum_write += x->writes;
	if (x->writes > E.peak_write)
		E.peak_write = x->writes;
	E.sum_read += x->est[2].est;
	if (x->est[2].est > E.peak_read)
		E.peak_read = x->est[2].est;
	E.faults_total += x->faults;
	E.coarse_total += x->coarse;
	E.sum_code += x->code;
	if (x->code > E.peak_code)
		E.peak_code = x->code;
	if (x->code_lower)
		E.code_lower_bound = true;
	if (x->coarse)
		E.lower_bound = true;
}

/* The tick's own cost, for the next decision. */
static void tick_account(tick_t *x)
{
	/* The tick's cost for the next decision: the CPU time of the thread
	 * that ran it (waiting for a CPU or for the test's delay is no cost
	 * to the program), but for a change of sample, paid once. */
	uint64_t spent = wss_clock_ns(CLOCK_THREAD_CPUTIME_ID) - x->cpu_start;
	E.tick_cost_ns = spent > x->once + x->fixed ? spent - x->once - x->fixed : 0;
	E.tick_fixed_ns = x->fixed;
	if (E.set.mode != WSS_TRACK_EXACT && !E.set.sample_level)
		E.change_debt_ns += E.change_ns + x->once; /* paid back from unused budget (policy.c) */
	E.change_ns = 0;
}

static void tick_locked(bool final)
{
	tick_t x = {.final = final};
	if (!final)
		wss_stacks_grow_locked();
	tick_drain(&x);
	tick_decide(&x);
	tick_arm(&x);
	tick_harvest(&x);
	tick_count(&x);
	wss_allocs_tick(x.k, x.w, x.final);
	tick_emit(&x);
	tick_account(&x);
}


/* One tick of the clock, unless measuring stopped or the engine thread was
 * asked to stop meanwhile. */
static void tick_now(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && !__atomic_load_n(&E.stop, __ATOMIC_RELAXED))
		wss_tick_locked(false);
	wss_engine_unlock(&ls);
}

void wss_tick_clock(void) { wss_loader_around(tick_now); }

void wss_engine_tick_manual(void)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) || E.set.time_base != WSS_ENGINE_MANUAL)
		return;
	wss_tick_clock();
}
