/* The dynamic loader's list of objects, read by the engine itself: at
 * start-up and inside every tick, which runs within dl_iterate_phdr (the
 * loader's list lock held) so that no library is unmapped while the tick
 * arms.  One read feeds three owners: the module records (modules.c), the
 * table of unwind tables that stack captures use without the loader's lock
 * (modtab.c), and the libraries' data ranges (libdata.c).
 *
 * Ticks take the tick lock around the list lock, and fork's prepare
 * handler takes it too: a child inherits the loader's list lock as it was,
 * and if the engine thread held it at the fork, the child's own engine
 * thread would wait for it for ever. */
#include "config.h"
#include "engine/internal.h"

#include "engine/modtab.h"

#include <link.h>
#include <linux/futex.h>

static bool started;    /* wss_loader_init ran: ticks go through the list */
static bool modules_on; /* module records and the unwind table (sites or hot pages) */
static unsigned long long last_adds, last_subs;

/* Held by a tick for its dl_iterate_phdr, and by fork across the fork:
 * 0 free, else the owner's tid.  A thread that forks inside its own tick
 * (from a signal handler) does not wait for itself. */
static int tick_lock;
static bool fork_took;
/* In a forked child the loader's list lock may have been inherited held
 * (a parent thread unwinding a stack at the fork): ticks read the list
 * only for library data there, not for modules. */
static bool no_around;

static void tick_lock_take(int self)
{
	for (;;) {
		int cur = 0;
		if (__atomic_compare_exchange_n(&tick_lock, &cur, self, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			wss_witness_take(WSS_RANK_TICK);
			return;
		}
		wss_sys_futex(&tick_lock, FUTEX_WAIT_PRIVATE, cur, NULL, NULL, 0);
	}
}

static void tick_lock_drop(void)
{
	wss_witness_give(WSS_RANK_TICK);
	__atomic_store_n(&tick_lock, 0, __ATOMIC_RELEASE);
	wss_sys_futex(&tick_lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

struct collecting {
	bool first;  /* the next object is the main program */
	bool unwind; /* modules and the table of unwind tables too */
};

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct collecting *c = data;
	if (c->unwind) {
		wss_modules_add(info, c->first);
		wss_modtab_sync_add(info);
	}
	wss_code_seen(info);
	if (c->first) { /* the main program: track.data_segments */
		c->first = false;
		return 0;
	}
	wss_libdata_seen(info);
	return 0;
}

/* Read the loader's list (its lock is recursive: inside a tick's
 * dl_iterate_phdr too); with unwind, modules and the unwind table too.
 * Only at start-up and in ticks (the engine thread, or wss_tick), never
 * in a fault handler. */
static void read_list(bool unwind, bool startup)
{
	struct collecting c = {true, unwind};
	wss_libdata_begin();
	wss_code_begin();
	if (unwind)
		wss_modtab_sync_begin();
	dl_iterate_phdr(collect, &c);
	if (unwind)
		wss_modtab_sync_end(startup);
	wss_libdata_end();
	wss_code_end();
}

struct around {
	void (*tick)(void);
	bool done;
};

static int around_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct around *a = data;
	if (!a->done) {
		/* Library data and code: every tick (an object is added at
		 * the second read that sees it); modules: when objects were
		 * added; unwind tables: when objects were added or removed
		 * (the C library unloads some behind dlclose's back). */
		bool changed = info->dlpi_adds != last_adds || info->dlpi_subs != last_subs;
		if (wss_libdata_enabled() || wss_code_on() || changed)
			read_list(changed && modules_on && !no_around, false);
		last_adds = info->dlpi_adds;
		last_subs = info->dlpi_subs;
		a->done = true;
		a->tick(); /* applies the list first (wss_loader_apply_locked), then arms */
	}
	return 1;
}

void wss_loader_around(void (*tick)(void))
{
	bool lists = wss_libdata_enabled() || wss_code_on();
	if (!started || (!lists && !modules_on) || (!lists && no_around)) {
		tick();
		return;
	}
	struct around a = {tick, false};
	int self = wss_sys_gettid();
	bool mine = __atomic_load_n(&tick_lock, __ATOMIC_RELAXED) == self; /* a tick in a signal handler */
	if (!mine)
		tick_lock_take(self);
	dl_iterate_phdr(around_cb, &a);
	if (!mine)
		tick_lock_drop();
	if (!a.done)
		tick();
}

void wss_loader_apply_locked(void)
{
	if (modules_on)
		wss_modules_out_locked();
	wss_libdata_apply_locked();
	wss_code_apply_locked();
}

struct self_find {
	uintptr_t me, base;
};

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct self_find *f = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->me >= s && f->me < s + ph->p_memsz) {
			f->base = info->dlpi_addr;
			return 1;
		}
	}
	return 0;
}

uintptr_t wss_loader_self_base(void)
{
	static uintptr_t base;
	if (!base) {
		struct self_find f = {(uintptr_t)wss_loader_self_base, 0};
		dl_iterate_phdr(find_self, &f);
		base = f.base;
	}
	return base;
}

void wss_engine_loader_init(bool library_data)
{
	wss_libdata_init(library_data);
	modules_on = wss_engine_sites();
	if (!library_data && !modules_on && !wss_code_on())
		return;
	read_list(modules_on, true);
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (modules_on)
		wss_modules_out_locked();
	wss_libdata_start_locked();
	wss_code_start_locked();
	wss_engine_unlock(&ls);
	started = true;
}

void wss_loader_fork_prepare(void)
{
	int self = wss_sys_gettid();
	fork_took = started && __atomic_load_n(&tick_lock, __ATOMIC_RELAXED) != self;
	if (fork_took)
		tick_lock_take(self);
}

void wss_loader_fork_parent(void)
{
	if (fork_took)
		tick_lock_drop();
}

void wss_loader_fork_child(void)
{
	if (fork_took) {
		wss_witness_give(WSS_RANK_TICK);
		__atomic_store_n(&tick_lock, 0, __ATOMIC_RELAXED);
	}
	no_around = true;
	wss_modules_fork_child();
}
