/* Data segments: the main program's .data/.bss (track.data_segments), and
 * with track.library_data those of shared libraries, loaded at start-up or
 * by dlopen, kept in step with the dynamic loader's list of objects.
 *
 * The danger is a library the loader unmaps behind our back while its range
 * is still registered: the next arming would make whatever is mapped there
 * next (another library's code) PROT_NONE.  How it is closed:
 * - dlclose (the preload's wrapper calls wss_engine_dlclose_begin and _end
 *   around the real call): before it, every library loaded after start-up
 *   leaves tracking (disarmed, unregistered), and no tick adds one until
 *   the call returns.  Libraries loaded at start-up are never unloaded.
 *   The survivors come back at the next ticks.
 * - Every tick runs inside dl_iterate_phdr (loader.c), which holds the
 *   loader's list lock (dl_load_write_lock), and re-reads the list there:
 *   the loader unlinks and unmaps an object under that same lock
 *   (elf/dl-close.c), so while the tick arms, every registered library is
 *   still mapped, and one that vanished since the last tick (a failed
 *   dlopen, or the C library's own dlclose of an NSS or gconv module, which
 *   we exclude anyway) is dropped first.  Lock order: loader list lock,
 *   then the engine lock, the same order as the loader's own free() ->
 *   extent hook path.
 * - A library is added only at the second tick that sees it, so an object
 *   of a dlopen in progress (which may still fail and be unmapped without a
 *   dlclose) is not armed unless the load spans a whole interval.
 * What is left (docs/limits.md): a failed dlopen slower than one interval,
 * or a concurrent mapping at the freed address before the next tick, can
 * leave a range registered that is no longer the library's until that tick;
 * only a pin, a fault or the program's own mprotect there would act on it. */
#include "config.h"
#include "engine/internal.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

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

/* The list the current tick read (loader.c, inside dl_iterate_phdr),
 * applied under the engine lock by the tick itself (wss_libdata_apply). */
static struct {
	uintptr_t start[LIB_MAX], end[LIB_MAX];
	int n;
	int owner; /* tid of the ticking thread that read it, 0: none */
} seen;

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

void wss_engine_data_segments(void) { dl_iterate_phdr(find_exe_data, NULL); }

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
		else if (libs[i].tracked) {
			wss_census_lost(libs[i].start, libs[i].end, WSS_KIND_DATA);
			wss_engine_untrack_kind_locked(libs[i].start, libs[i].end - libs[i].start, WSS_KIND_DATA);
		}
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

bool wss_libdata_enabled(void) { return enabled; }

void wss_libdata_begin(void) { seen.n = 0; }

void wss_libdata_seen(const struct dl_phdr_info *info)
{
	if (enabled && !excluded(info))
		data_ranges(info, add_seen, NULL);
}

void wss_libdata_end(void) { seen.owner = wss_sys_gettid(); }

void wss_libdata_apply_locked(void)
{
	if (!enabled || seen.owner != wss_sys_gettid())
		return;
	apply_locked(false);
	seen.owner = 0;
}

void wss_libdata_init(bool track)
{
	if (!track)
		return;
	self_base = wss_loader_self_base();
	enabled = true;
}

void wss_libdata_start_locked(void)
{
	if (!enabled)
		return;
	apply_locked(true);
	seen.owner = 0;
}

void wss_engine_dlclose_begin(void)
{
	if (!enabled && !wss_code_on())
		return;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	/* The code of libraries loaded after start-up leaves too (code.c). */
	wss_code_dlclose_begin_locked();
	if (!enabled) {
		wss_engine_unlock(&ls);
		return;
	}
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
}

void wss_engine_dlclose_end(void)
{
	if (!enabled && !wss_code_on())
		return;
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_code_dlclose_end_locked();
	if (enabled)
		closing--;
	wss_engine_unlock(&ls);
}
