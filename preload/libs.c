/* Data segments: the main program's .data/.bss (track.data_segments), and
 * with track.library_data those of shared libraries, loaded at start-up or
 * by dlopen, kept in step with the dynamic loader's list of objects.
 *
 * The danger is a library the loader unmaps behind our back while its range
 * is still registered: the next arming would make whatever is mapped there
 * next (another library's code) PROT_NONE.  How it is closed:
 * - dlclose (ours): before the real call, every library loaded after
 *   start-up leaves tracking (disarmed, unregistered), and no tick adds one
 *   until the call returns.  Libraries loaded at start-up are never
 *   unloaded.  The survivors come back at the next ticks.
 * - Every tick runs inside dl_iterate_phdr, which holds the loader's list
 *   lock (dl_load_write_lock), and re-reads the list there: the loader
 *   unlinks and unmaps an object under that same lock (elf/dl-close.c), so
 *   while the tick arms, every registered library is still mapped, and one
 *   that vanished since the last tick (a failed dlopen, or the C library's
 *   own dlclose of an NSS or gconv module, which we exclude anyway) is
 *   dropped first.  Lock order: loader list lock, then the engine lock,
 *   the same order as the loader's own free() -> extent hook path.
 * - A library is added only at the second tick that sees it, so an object
 *   of a dlopen in progress (which may still fail and be unmapped without a
 *   dlclose) is not armed unless the load spans a whole interval.
 * - fork: a child inherits the loader's list lock as it was; if the engine
 *   thread held it at that moment, the child's own engine thread would wait
 *   for it for ever.  Ticks take tick_lock around the list lock, and fork's
 *   prepare handler takes tick_lock too, so no fork happens inside a tick.
 * - Stack captures find unwind tables in the engine's own table
 *   (engine/modtab.c), never through the loader's list: read_list syncs
 *   that table, inside dl_iterate_phdr, at start-up and at every tick that
 *   sees the loader's add or remove counter move, on the engine thread (or
 *   the thread calling wss_tick), never in a fault handler.
 * What is left (docs/limits.md): a failed dlopen slower than one interval,
 * or a concurrent mapping at the freed address before the next tick, can
 * leave a range registered that is no longer the library's until that tick;
 * only a pin, a fault or the program's own mprotect there would act on it. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <link.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "common/sys.h"
#include "engine/engine.h"

#define LIB_MAX 1024 /* ranges; libraries beyond this are not tracked */

typedef struct lib_range {
	uintptr_t start, end;
	uint32_t first_gen; /* the sync that first saw it */
	bool tracked;
	bool startup;       /* loaded before main: never unloaded */
} lib_range_t;

static bool enabled;
static lib_range_t libs[LIB_MAX]; /* sorted by start; engine lock */
static int nlibs;
static uint32_t gen;              /* syncs so far; engine lock */
static int closing;               /* dlclose calls in progress; engine lock */
static uintptr_t self_base;       /* libwss.so's load address */

/* The list the current tick read (dl_iterate_phdr), applied under the
 * engine lock by the tick itself (wss_libs_apply). */
static struct {
	uintptr_t start[LIB_MAX], end[LIB_MAX];
	int n;
	int owner; /* tid of the ticking thread that read it, 0: none */
} seen;

static int (*real_dlclose)(void *);

/* Modules (peaks.enabled): every object loaded, for the profile's "module"
 * records, so that stack addresses can be symbolised offline.  Entries are
 * added by whoever reads the loader's list (start-up, or a tick inside
 * dl_iterate_phdr: serialised by the loader's lock) and written to the
 * profile by the next tick (engine lock); never removed. */
#define MOD_MAX 1024
typedef struct module {
	uintptr_t bias, start, end;
	uint32_t name; /* offset in mod_names */
	char build_id[41];
	bool written;
} module_t;
static bool modules_on;
static module_t mods[MOD_MAX];
static int nmods;
static char mod_names[256 * 1024];
static uint32_t mod_names_len;
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

/* What the dynamic loader itself reads in an object's writable segments,
 * outside the program's control: RELRO (.dynamic, .got, .data.rel.ro,
 * .init_array: read-only once relocated, read by lazy binding and
 * dl_iterate_phdr), PT_DYNAMIC (writable in -z norelro objects) and the TLS
 * initialisation image (copied into every new thread's TLS by
 * pthread_create, with all signals blocked).  None of it is the program's
 * data, and a touch of an armed page there with SIGSEGV blocked is a kill
 * (issue 11: lld puts RELRO in a segment of its own whose end is the
 * segment's end, and the old test, which only trimmed a RELRO ending
 * strictly inside a segment, tracked .dynamic).  Each range is widened to
 * whole pages: a page shared with the program's data is left out rather
 * than armed.  .got.plt stays tracked: lazy binding writes it from the
 * calling thread, whose SIGSEGV is never blocked (signals.c).  Returns how
 * many ranges it put in out[3]. */
static int loader_ranges(const struct dl_phdr_info *info, uintptr_t out[][2])
{
	int n = 0;
	for (int i = 0; i < info->dlpi_phnum && n < 3; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_RELRO || ph->p_type == PT_DYNAMIC) {
			out[n][0] = a;
			out[n++][1] = a + ph->p_memsz;
		} else if (ph->p_type == PT_TLS && ph->p_filesz) {
			out[n][0] = a;
			out[n++][1] = a + ph->p_filesz;
		}
	}
	return n;
}

/* Call fn on each run of whole pages of [s, e) outside every range of
 * excl[0..n). */
static void subtract(uintptr_t s, uintptr_t e, uintptr_t excl[][2], int n,
		     void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	while (s < e) {
		uintptr_t next = e; /* the end of the run that starts at s */
		bool cut = false;
		for (int i = 0; i < n; i++) {
			uintptr_t xs = wss_page_down(excl[i][0]);
			uintptr_t xe = wss_page_up(excl[i][1]);
			if (xs <= s && s < xe) { /* s is excluded: skip past it */
				s = xe;
				cut = true;
				break;
			}
			if (s < xs && xs < next)
				next = xs;
		}
		if (cut)
			continue;
		fn(s, next, arg);
		s = next;
	}
}

/* Call fn on the writable, non-executable part of each PT_LOAD of info
 * that is the object's own data (not the loader's, see loader_ranges),
 * in whole pages. */
static void data_ranges(const struct dl_phdr_info *info, void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	uintptr_t excl[3][2];
	int n = loader_ranges(info, excl);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || (ph->p_flags & PF_X))
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		s = wss_page_down(s);
		e = wss_page_up(e);
		subtract(s, e, excl, n, fn, arg);
	}
}

static void track_exe_range(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	wss_engine_track((void *)s, e - s, PROT_READ | PROT_WRITE, WSS_KIND_DATA);
}

static int find_exe_data(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	data_ranges(info, track_exe_range, NULL); /* the first object is the main program */
	return 1;
}

void wss_data_init(void) { dl_iterate_phdr(find_exe_data, NULL); }

/* The C runtime's own objects: their data holds the loader's and the C
 * library's internal locks, which are waited on with raw futex calls (no
 * wrapper could pin them), and the C library loads and unloads NSS and
 * gconv modules itself, without dlclose.  And wss's own libraries: the
 * unwinder (and its decompressor) runs inside the fault handler, with
 * SIGSEGV blocked, where a touch of an armed page would be fatal. */
static bool excluded(const struct dl_phdr_info *info)
{
	static const char *const runtime[] = {
		"ld-linux", "libc.so", "libm.so", "libmvec.so", "libpthread.so", "libdl.so", "librt.so",
		"libresolv.so", "libutil.so", "libanl.so", "libnss_", "libthread_db", "libBrokenLocale",
		"libgcc_s.so", "libc_malloc_debug", "libmemusage", "libpcprofile", "libSegFault", "libidn2.so",
		"linux-vdso", "linux-gate",
		/* wss's own: the unwinder runs inside the fault handler */
		"libunwind", "liblzma.so", NULL,
	};
	const char *name = info->dlpi_name;
	if (!name || !*name || info->dlpi_addr == self_base || strstr(name, "/gconv/"))
		return true;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (int i = 0; runtime[i]; i++)
		if (!strncmp(base, runtime[i], strlen(runtime[i])))
			return true;
	return false;
}

static void add_seen(uintptr_t s, uintptr_t e, void *arg)
{
	(void)arg;
	if (seen.n < LIB_MAX) {
		seen.start[seen.n] = s;
		seen.end[seen.n] = e;
		seen.n++;
	}
}

/* The GNU build-id note of the object, as hex, or "" when it has none. */
static void build_id(const struct dl_phdr_info *info, char *out)
{
	out[0] = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh->n_descsz <= 20) {
				static const char hexd[] = "0123456789abcdef";
				for (unsigned j = 0; j < nh->n_descsz; j++) {
					out[2 * j] = hexd[desc[j] >> 4];
					out[2 * j + 1] = hexd[desc[j] & 15];
				}
				out[2 * nh->n_descsz] = 0;
				return;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* Add the object to mods[] if it is new (same load bias and range). */
static void add_module(const struct dl_phdr_info *info, bool main_program)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
	}
	if (lo >= hi || nmods >= MOD_MAX)
		return;
	for (int i = 0; i < nmods; i++)
		if (mods[i].bias == info->dlpi_addr && mods[i].start == lo && mods[i].end == hi)
			return;
	char exe[4096];
	const char *name = info->dlpi_name;
	if (main_program) {
		wss_readlink_exe(exe, sizeof exe);
		name = exe;
	}
	size_t len = name ? strlen(name) : 0;
	if (mod_names_len + len + 1 > sizeof mod_names)
		return;
	module_t *m = &mods[nmods];
	m->bias = info->dlpi_addr;
	m->start = lo;
	m->end = hi;
	m->name = mod_names_len;
	memcpy(mod_names + mod_names_len, name ? name : "", len + 1);
	mod_names_len += (uint32_t)len + 1;
	build_id(info, m->build_id);
	m->written = false;
	__atomic_store_n(&nmods, nmods + 1, __ATOMIC_RELEASE);
}

struct collecting {
	bool first; /* the next object is the main program */
	bool unwind; /* sync the engine's table of unwind tables too */
};

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct collecting *c = data;
	if (modules_on)
		add_module(info, c->first);
	if (c->unwind)
		wss_modtab_sync_add(info);
	if (c->first) { /* the main program: track.data_segments */
		c->first = false;
		return 0;
	}
	if (enabled && !excluded(info))
		data_ranges(info, add_seen, NULL);
	return 0;
}

/* Module records for the modules not yet in the profile (engine lock
 * held). */
static void modules_out_locked(void)
{
	int n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (!mods[i].written) {
			wss_engine_module_locked(i + 1, mod_names + mods[i].name, mods[i].bias, mods[i].start, mods[i].end,
						 mods[i].build_id);
			mods[i].written = true;
		}
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t me = (uintptr_t)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && me >= s && me < s + ph->p_memsz) {
			self_base = info->dlpi_addr;
			return 1;
		}
	}
	return 0;
}

/* Read the loader's list; with unwind, sync the engine's table of unwind
 * tables with it (engine/modtab.c), which is how stack captures find
 * unwind information without taking the loader's lock themselves.  Only
 * here: at start-up, and in ticks (the engine thread, or wss_tick). */
static void read_list(bool unwind, bool startup)
{
	struct collecting c = {true, unwind};
	seen.n = 0;
	if (unwind)
		wss_modtab_sync_begin();
	dl_iterate_phdr(collect, &c); /* the list lock is recursive */
	if (unwind)
		wss_modtab_sync_end(startup);
	seen.owner = wss_sys_gettid();
}

static int range_cmp(uintptr_t s, uintptr_t e, const lib_range_t *l)
{
	return s < l->start ? -1 : s > l->start ? 1 : e < l->end ? -1 : e > l->end;
}

/* Is [s, e) in seen (sorted)? */
static bool was_seen(uintptr_t s, uintptr_t e)
{
	int lo = 0, hi = seen.n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (seen.start[mid] < s || (seen.start[mid] == s && seen.end[mid] < e))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < seen.n && seen.start[lo] == s && seen.end[lo] == e;
}

/* Bring libs[] in step with seen (engine lock held).  First every range
 * that left the list is dropped: it is unmapped already, so only its
 * registry entry goes, and only where it is still a data segment (the
 * program or the heap may have mapped and registered something there
 * since).  Then ranges seen at two syncs in a row (at once at start-up) are
 * tracked. */
static void apply_locked(bool startup)
{
	static lib_range_t next[LIB_MAX];
	gen++;
	for (int i = 1; i < seen.n; i++) /* the list is in load order */
		for (int j = i; j > 0 && (seen.start[j - 1] > seen.start[j] ||
					  (seen.start[j - 1] == seen.start[j] && seen.end[j - 1] > seen.end[j]));
		     j--) {
			uintptr_t t = seen.start[j];
			seen.start[j] = seen.start[j - 1];
			seen.start[j - 1] = t;
			t = seen.end[j];
			seen.end[j] = seen.end[j - 1];
			seen.end[j - 1] = t;
		}
	int kept = 0;
	for (int i = 0; i < nlibs; i++) {
		if (was_seen(libs[i].start, libs[i].end))
			libs[kept++] = libs[i];
		else if (libs[i].tracked)
			wss_engine_untrack_kind_locked(libs[i].start, libs[i].end - libs[i].start, WSS_KIND_DATA);
	}
	int n = 0, i = 0;
	for (int k = 0; k < seen.n; k++) {
		uintptr_t s = seen.start[k], e = seen.end[k];
		if (n && next[n - 1].start == s && next[n - 1].end == e)
			continue;
		while (i < kept && range_cmp(s, e, &libs[i]) > 0)
			i++;
		lib_range_t l = {s, e, gen, false, startup};
		if (i < kept && range_cmp(s, e, &libs[i]) == 0)
			l = libs[i++];
		if (!l.tracked && !closing && (startup || l.first_gen < gen)) {
			wss_engine_track_locked(s, e - s, PROT_READ | PROT_WRITE, WSS_KIND_DATA);
			l.tracked = true;
		}
		next[n++] = l;
	}
	memcpy(libs, next, (size_t)n * sizeof *libs);
	nlibs = n;
}

void wss_libs_apply(void)
{
	if (modules_on)
		modules_out_locked();
	if (!enabled || seen.owner != wss_sys_gettid())
		return;
	apply_locked(false);
	seen.owner = 0;
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
		/* Library data: every tick; modules: when objects were added;
		 * unwind tables: when objects were added or removed (the C
		 * library unloads some behind dlclose's back). */
		bool changed = info->dlpi_adds != last_adds || info->dlpi_subs != last_subs;
		if (enabled || changed)
			read_list(changed && modules_on && !no_around, false);
		last_adds = info->dlpi_adds;
		last_subs = info->dlpi_subs;
		a->done = true;
		a->tick(); /* applies the list first (wss_libs_apply), then arms */
	}
	return 1;
}

static void around(void (*tick)(void))
{
	if (!enabled && no_around) { /* a forked child, modules only */
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

void wss_libs_fork_prepare(void)
{
	int self = wss_sys_gettid();
	fork_took = (enabled || modules_on) && __atomic_load_n(&tick_lock, __ATOMIC_RELAXED) != self;
	if (fork_took)
		tick_lock_take(self);
}

void wss_libs_fork_parent(void)
{
	if (fork_took)
		tick_lock_drop();
}

/* The module holding addr (engine lock held): its path, and whether it is
 * the main program (the first object the loader lists). */
static const char *module_of(uintptr_t addr, bool *main_program)
{
	int n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (addr >= mods[i].start && addr < mods[i].end) {
			*main_program = i == 0;
			return mod_names + mods[i].name;
		}
	return NULL;
}

void wss_libs_fork_child(void)
{
	if (fork_took) {
		wss_witness_give(WSS_RANK_TICK);
		__atomic_store_n(&tick_lock, 0, __ATOMIC_RELAXED);
	}
	no_around = true;
	/* The child's profile needs them all again. */
	for (int i = 0; i < nmods; i++)
		mods[i].written = false;
}

void wss_libs_init(bool track, bool modules)
{
	real_dlclose = (__typeof__(real_dlclose))dlsym(RTLD_NEXT, "dlclose");
	if (!track && !modules)
		return;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)wss_libs_init);
	enabled = track;
	modules_on = modules;
	read_list(modules_on, true);
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (modules_on) {
		modules_out_locked();
		wss_engine_on_module_of(module_of);
	}
	if (enabled)
		apply_locked(true);
	seen.owner = 0;
	wss_engine_unlock(&ls);
	wss_engine_tick_around(around);
}

/* Libraries loaded after start-up leave tracking for the call: any of them
 * may be unmapped by it.  Those still loaded afterwards come back at the
 * second tick that sees them.  Destructors that run inside the call touch
 * their data untracked. */
WSS_EXPORT int dlclose(void *handle)
{
	if (!real_dlclose)
		real_dlclose = (__typeof__(real_dlclose))dlsym(RTLD_NEXT, "dlclose");
	if (!enabled)
		return real_dlclose(handle);
	int saved = errno;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	closing++;
	int n = 0;
	for (int i = 0; i < nlibs; i++) {
		if (libs[i].startup) {
			libs[n++] = libs[i];
			continue;
		}
		if (libs[i].tracked)
			wss_engine_exclude_locked(libs[i].start, libs[i].end - libs[i].start);
	}
	nlibs = n;
	wss_engine_unlock(&ls);
	errno = saved;
	int r = real_dlclose(handle);
	saved = errno;
	wss_engine_lock(&ls);
	closing--;
	wss_engine_unlock(&ls);
	errno = saved;
	return r;
}
