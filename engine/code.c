/* The code working set (track.code): the pages of the program's and its
 * shared libraries' executable segments run in each interval, found as the
 * data ones are, by a fault on the first touch.  At every tick each code
 * range loses PROT_EXEC (one mprotect per range: its VMAs merge again); the
 * first instruction fetched from one of its pages in the interval faults,
 * and the handler gives that page its execute permission back and records
 * the touch in the page's history (pagestate.h: the same two-deep history,
 * window and owner as a data page).  Reads of the segment (constants kept
 * in .text) are never armed.  Exact, never sampled: one mprotect per range
 * arms all of it, whatever its size.
 *
 * What cannot be armed, because it runs where a fault cannot be taken or
 * where our handler would fault again: wss itself (its handler), the C
 * library (the signal return trampoline, and the functions the handler
 * calls), the dynamic loader (dl_iterate_phdr, under the tick and the
 * unwinder), the unwinder and its decompressor (run inside the handler),
 * libgcc_s, the vdso (the kernel's code), writable executable segments
 * (code written at run time), and the objects the C library loads and
 * unloads behind dlclose's back (NSS and gconv modules, libidn2), which
 * could be unmapped while armed.  The header lists the excluded objects of
 * the start-up list with the reason; docs/backends.md the rules.
 *
 * The table and its readers.  The fault handler finds a code range without
 * a lock: ranges live in one of two tables, the published one read by
 * handlers, the other rebuilt by the engine (engine lock) and then
 * published.  A handler joins reader generation g (count[g & 1]: read g,
 * count in, re-read, as fault.c's epoch_join), reads the published table,
 * and leaves after its mprotect.  After publishing, the engine bumps the
 * generation and waits for count[old & 1] to drain: a handler that could
 * still hold the old table is gone, so a range dropped from the table can
 * no longer be opened by anyone, and its page histories can be freed.
 *
 * Ranges that leave (dlclose, the program's own mprotect/munmap/mremap or
 * MAP_FIXED over them) leave before the call, under the engine lock: given
 * their protection back, dropped and waited for, as above.  An instruction
 * fetch that faulted on a range just before it left finds no range: the
 * handler lets it run again once (the page is executable now), and a
 * second fault at the same address is not ours.  Ranges are added by the
 * tick that sees a module for the second time (at once at start-up), as
 * library data is (libdata.c): a dlopen in progress may still fail and
 * unmap its object without a dlclose.
 *
 * Races with the tick: the tick moves the epoch, waits for the handlers of
 * the interval that ended (fault.c's protocol: a code handler records in
 * the in-flight section as a data one does), then arms every range.  A
 * handler that opened its page before that arming but recorded after the
 * epoch move recorded the new interval; its instruction runs again on the
 * re-armed page, faults, finds the touch recorded and opens the page: one
 * touch, in the interval the instruction ran in. */
#include "config.h"
#include "engine/internal.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>

#define CODE_MAX 512 /* ranges; code beyond them is not tracked (said in the summary) */

typedef struct code_range {
	uintptr_t start, end;
	int prot;          /* the segment's own protection */
	wss_page_t *pages; /* one per page: the touch history */
	uint8_t *ever;     /* one per page: run before, in this run (atomic) */
	uint32_t *hits;    /* one per page: intervals it ran in (the tick's) */
	char *name;        /* its object's path (wss_sys_alloc) */
	bool startup;      /* loaded before main: never unloaded */
} code_range_t;

typedef struct code_table {
	uint32_t n;
	code_range_t v[CODE_MAX]; /* sorted by start, disjoint */
} code_table_t;

static bool on;
static const char *off_why;   /* code tracking asked for but impossible, or NULL */
static code_table_t tabs[2];  /* tabs[pub]: the handlers'; the other: the engine's (engine lock) */
static int pub;
static uint32_t rgen, rcount[2]; /* readers: fault.c's epoch_join over these */
static uint32_t removed;      /* ranges dropped while mapped (dlclose, mprotect...): the retry */
static __thread uintptr_t retry_at __attribute__((tls_model("initial-exec")));
static __thread uint32_t retry_removed __attribute__((tls_model("initial-exec")));
/* The thread is running a tick (a program thread's wss_tick under manual
 * ticks too): its runs of code are wss's. */
__thread bool wss_code_ticking __attribute__((tls_model("initial-exec")));

/* The candidates: seen by the tick's read of the loader's list once (added
 * at the next), kept sorted; the engine lock. */
static struct {
	uintptr_t start[CODE_MAX], end[CODE_MAX];
	int prot[CODE_MAX];
	const char *name[CODE_MAX]; /* the loader's, valid while its list lock is held */
	int n;
	int owner; /* the tid of the thread that read it, 0: none */
} seen;
static int closing;        /* dlclose calls in progress */
/* Ranges the program took over (its mprotect, munmap, mremap, MAP_FIXED
 * over them): never added again while their object is in the list. */
static struct {
	uintptr_t start[CODE_MAX], end[CODE_MAX];
	int n;
} forgotten;
/* Ranges dlclose took out, their histories kept: added back at the next
 * read that still lists them (the library stayed, or came back at the
 * same place), else freed.  The engine lock. */
static code_range_t parked[CODE_MAX];
static uint32_t nparked;
static uintptr_t self_base, vdso_base;
static uint64_t total;     /* code pages run in the run (atomic) */
static uint64_t nfaults[2]; /* first runs recorded in interval e, at [e & 1] (atomic) */
static uint32_t coarse;    /* opens of a whole range for want of VMAs, this interval (atomic) */
static char excluded_json[2048];
static wss_fmt_t excluded_fmt;
static bool full;          /* more code ranges than CODE_MAX */

static uint32_t reader_join(void)
{
	for (;;) {
		uint32_t g = __atomic_load_n(&rgen, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&rcount[g & 1], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&rgen, __ATOMIC_SEQ_CST) == g)
			return g;
		__atomic_sub_fetch(&rcount[g & 1], 1, __ATOMIC_SEQ_CST);
	}
}

static void reader_leave(uint32_t g) { __atomic_sub_fetch(&rcount[g & 1], 1, __ATOMIC_RELEASE); }

/* After a publish: no handler holds the table before it.  Two rounds, so
 * that a reader of the generation before the last one is gone too. */
static void quiesce(void)
{
	for (int round = 0; round < 2; round++) {
		uint32_t g = __atomic_fetch_add(&rgen, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&rcount[g & 1], __ATOMIC_SEQ_CST))
			wss_sys_sched_yield();
	}
}

static code_range_t *find(code_table_t *t, uintptr_t a)
{
	uint32_t lo = 0, hi = t->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (t->v[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->v[lo].start <= a ? &t->v[lo] : NULL;
}

static size_t npages(const code_range_t *r) { return (r->end - r->start) >> WSS_PAGE_SHIFT; }

static void range_free(code_range_t *r)
{
	size_t n = npages(r);
	if (r->pages)
		wss_sys_free(r->pages, n * sizeof *r->pages);
	if (r->ever)
		wss_sys_free(r->ever, n);
	if (r->hits)
		wss_sys_free(r->hits, n * sizeof *r->hits);
	if (r->name)
		wss_sys_free(r->name, strlen(r->name) + 1);
}

static char exe_path[4096];

static bool range_alloc(code_range_t *r, const char *name)
{
	size_t n = npages(r);
	if (!name || !*name)
		name = exe_path; /* the main program */
	r->pages = wss_sys_alloc(n * sizeof *r->pages);
	r->ever = wss_sys_alloc(n);
	r->hits = wss_sys_alloc(n * sizeof *r->hits);
	r->name = wss_sys_alloc(strlen(name) + 1);
	if (r->pages && r->ever && r->hits && r->name) {
		memcpy(r->name, name, strlen(name) + 1);
		return true;
	}
	if (r->name)
		r->name[0] = 0;
	range_free(r);
	return false;
}

/* Publish the engine's table, wait out the old one's readers, and make the
 * engine's copy equal to the published one again.  Engine lock. */
static void publish(void)
{
	__atomic_store_n(&pub, !pub, __ATOMIC_SEQ_CST);
	quiesce();
	code_table_t *now = &tabs[pub], *spare = &tabs[!pub];
	spare->n = now->n;
	memcpy(spare->v, now->v, now->n * sizeof *now->v);
}

/* Scratch for the engine's rebuilds (engine lock): too large for the
 * stack of a program thread in its mprotect or dlclose. */
static code_range_t gone[CODE_MAX], next_v[CODE_MAX];

/* Drop the engine table's ranges overlapping [s, e) (those pred says, when
 * given), giving them their protection back; publish; then park them
 * (dlclose) or free them and remember them as the program's (forget).
 * Engine lock. */
static void drop_where(uintptr_t s, uintptr_t e, bool (*pred)(const code_range_t *), bool park)
{
	code_table_t *t = &tabs[!pub];
	uint32_t ng = 0, k = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		code_range_t *r = &t->v[i];
		bool drop = pred ? pred(r) : r->start < e && s < r->end;
		if (drop) {
			wss_sys_mprotect((void *)r->start, r->end - r->start, r->prot);
			gone[ng++] = *r;
		} else {
			t->v[k++] = *r;
		}
	}
	if (!ng)
		return;
	t->n = k;
	__atomic_add_fetch(&removed, ng, __ATOMIC_RELAXED);
	publish();
	for (uint32_t i = 0; i < ng; i++) {
		if (park && nparked < CODE_MAX) {
			parked[nparked++] = gone[i];
			continue;
		}
		if (!park && forgotten.n < CODE_MAX) {
			forgotten.start[forgotten.n] = gone[i].start;
			forgotten.end[forgotten.n++] = gone[i].end;
		}
		range_free(&gone[i]);
	}
}

bool wss_code_on(void) { return on; }

const char *wss_code_off_why(void) { return off_why; }

/* What runs where a fault cannot be taken, or may be unmapped behind
 * dlclose's back (see the top of this file): the reason, or NULL. */
static const char *exclusion(const struct dl_phdr_info *info)
{
	static const struct {
		const char *prefix, *why;
	} rules[] = {
		{"libc.so", "the signal return trampoline and the C functions the fault handler calls"},
		{"ld-linux", "the dynamic loader: dl_iterate_phdr, under the tick and the stack unwinder"},
		{"libunwind", "the stack unwinder, run inside the fault handler"},
		{"liblzma.so", "the stack unwinder's decompressor, run inside the fault handler"},
		{"libgcc_s.so", "unwinding support, run inside the fault handler"},
		{"libnss_", "loaded and unloaded by the C library itself, behind dlclose"},
		{"libidn2.so", "loaded and unloaded by the C library itself, behind dlclose"},
		{"libc_malloc_debug", "the C library's own debugging preload"},
		{"libmemusage", "the C library's own debugging preload"},
		{"libSegFault", "the C library's own debugging preload"},
		{"linux-vdso", "the vdso: the kernel's code"},
		{NULL, NULL},
	};
	const char *name = info->dlpi_name;
	if (info->dlpi_addr == self_base && self_base)
		return "wss itself: its fault handler";
	if (info->dlpi_addr == vdso_base && vdso_base)
		return "the vdso: the kernel's code";
	if (!name || !*name)
		return NULL; /* the main program */
	if (strstr(name, "/gconv/"))
		return "loaded and unloaded by the C library itself, behind dlclose";
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (int i = 0; rules[i].prefix; i++)
		if (!strncmp(base, rules[i].prefix, strlen(rules[i].prefix)))
			return rules[i].why;
	return NULL;
}

static void add_seen(uintptr_t s, uintptr_t e, int prot, const char *name)
{
	if (seen.n >= CODE_MAX) {
		full = true;
		return;
	}
	seen.start[seen.n] = s;
	seen.end[seen.n] = e;
	seen.prot[seen.n] = prot;
	seen.name[seen.n] = name;
	seen.n++;
}

void wss_code_begin(void) { seen.n = 0; }

void wss_code_end(void) { seen.owner = wss_sys_gettid(); }

/* Text relocations: the dynamic loader makes the object's text writable
 * to relocate it, which arming would undo (the vdso has no PT_DYNAMIC
 * worth reading, and is excluded anyway). */
static bool textrel(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr); d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)))
				return true;
	}
	return false;
}

void wss_code_seen(const struct dl_phdr_info *info)
{
	if (!on || exclusion(info) || textrel(info))
		return;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || (ph->p_flags & PF_W) || !ph->p_memsz)
			continue;
		uintptr_t s = wss_page_down(info->dlpi_addr + ph->p_vaddr);
		uintptr_t e = wss_page_up(info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
		add_seen(s, e, PROT_EXEC | ((ph->p_flags & PF_R) ? PROT_READ : 0), info->dlpi_name);
	}
}

static int seen_cmp(int a, int b)
{
	return seen.start[a] < seen.start[b] ? -1 : seen.start[a] > seen.start[b] ? 1 : 0;
}

static void seen_sort(void)
{
	for (int i = 1; i < seen.n; i++)
		for (int j = i; j > 0 && seen_cmp(j - 1, j) > 0; j--) {
			uintptr_t ts = seen.start[j], te = seen.end[j];
			int tp = seen.prot[j];
			const char *tn = seen.name[j];
			seen.start[j] = seen.start[j - 1];
			seen.end[j] = seen.end[j - 1];
			seen.prot[j] = seen.prot[j - 1];
			seen.name[j] = seen.name[j - 1];
			seen.start[j - 1] = ts;
			seen.end[j - 1] = te;
			seen.prot[j - 1] = tp;
			seen.name[j - 1] = tn;
		}
}

/* The candidates of the previous read, not yet in the table (sorted). */
static struct {
	uintptr_t start[CODE_MAX], end[CODE_MAX];
	int n;
} pending;

static bool was_pending(uintptr_t s, uintptr_t e)
{
	for (int i = 0; i < pending.n; i++)
		if (pending.start[i] == s && pending.end[i] == e)
			return true;
	return false;
}

/* Bring the table in step with the list the tick read (engine lock, inside
 * the loader's dl_iterate_phdr: nothing in the list is unmapped meanwhile).
 * A range that left the list was unmapped already (the loader's own
 * unload, or a failed dlopen): dropped without touching its addresses.  A
 * range seen at two reads in a row (at once at start-up) is added. */
static bool overlaps_forgotten(uintptr_t s, uintptr_t e)
{
	for (int i = 0; i < forgotten.n; i++)
		if (forgotten.start[i] < e && s < forgotten.end[i])
			return true;
	return false;
}

/* A parked range for [s, e) of the same object, taken out of the park. */
static bool unpark(uintptr_t s, uintptr_t e, const char *name, code_range_t *out)
{
	if (!name || !*name)
		name = exe_path;
	for (uint32_t i = 0; i < nparked; i++)
		if (parked[i].start == s && parked[i].end == e && !strcmp(parked[i].name, name)) {
			*out = parked[i];
			parked[i] = parked[--nparked];
			return true;
		}
	return false;
}

static void apply_locked(bool startup)
{
	seen_sort();
	/* No range is added while the dynamic loader is adding or removing
	 * objects (a dlopen may still fail and unmap what it mapped, or be
	 * relocating it): r_debug says so, and the next read adds them. */
	bool loading = _r_debug.r_state != RT_CONSISTENT;
	code_table_t *t = &tabs[!pub];
	code_range_t *next = next_v;
	uint32_t ng = 0, n = 0, i = 0;
	int np = 0;
	static uintptr_t ps[CODE_MAX], pe[CODE_MAX];
	for (int k = 0; k < seen.n; k++) {
		uintptr_t s = seen.start[k], e = seen.end[k];
		while (i < t->n && t->v[i].start < s)
			gone[ng++] = t->v[i++];
		if (i < t->n && t->v[i].start == s && t->v[i].end == e) {
			next[n++] = t->v[i++];
			continue;
		}
		if (n && next[n - 1].end > s)
			continue; /* overlaps one kept: the list changed under a reuse; next read */
		if (overlaps_forgotten(s, e))
			continue; /* the program's own now */
		code_range_t r;
		if (!closing && !loading && unpark(s, e, seen.name[k], &r)) {
			next[n++] = r;
		} else if (!closing && !loading && (startup || was_pending(s, e))) {
			r = (code_range_t){.start = s, .end = e, .prot = seen.prot[k], .startup = startup};
			if (range_alloc(&r, seen.name[k]))
				next[n++] = r;
		} else if (np < CODE_MAX) {
			ps[np] = s;
			pe[np++] = e;
		}
	}
	while (i < t->n)
		gone[ng++] = t->v[i++];
	/* Forgotten ranges whose object left the list, and parked ones not
	 * listed (unloaded), are done with; not while dlclose runs. */
	int kf = 0;
	for (int f = 0; f < forgotten.n; f++) {
		bool listed = false;
		for (int q = 0; q < seen.n && !listed; q++)
			listed = seen.start[q] < forgotten.end[f] && forgotten.start[f] < seen.end[q];
		if (listed || closing) {
			forgotten.start[kf] = forgotten.start[f];
			forgotten.end[kf++] = forgotten.end[f];
		}
	}
	forgotten.n = kf;
	if (!closing && !loading) {
		for (uint32_t q = 0; q < nparked; q++)
			range_free(&parked[q]);
		nparked = 0;
	}
	memcpy(pending.start, ps, (size_t)np * sizeof *ps);
	memcpy(pending.end, pe, (size_t)np * sizeof *pe);
	pending.n = np;
	bool changed = ng || n != t->n;
	t->n = n;
	memcpy(t->v, next, n * sizeof *next);
	if (changed)
		publish();
	for (uint32_t g = 0; g < ng; g++)
		range_free(&gone[g]);
}

void wss_code_apply_locked(void)
{
	if (!on || seen.owner != wss_sys_gettid())
		return;
	apply_locked(false);
	seen.owner = 0;
}

/* The start-up list's exclusions, for the header. */
static int note_excluded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *why = exclusion(info), *name = info->dlpi_name;
	if (!why)
		return 0;
	const char *base = name && *name ? strrchr(name, '/') : NULL;
	wss_fmt_str(&excluded_fmt, excluded_fmt.len ? ",{\"object\":" : "{\"object\":");
	wss_fmt_json_str(&excluded_fmt, base ? base + 1 : name && *name ? name : "[vdso]");
	wss_fmt_str(&excluded_fmt, ",\"why\":");
	wss_fmt_json_str(&excluded_fmt, why);
	wss_fmt_ch(&excluded_fmt, '}');
	return 0;
}

void wss_code_init(bool track, const char *runtime)
{
	if (!track)
		return;
	/* A process whose reads imply execution (an executable stack
	 * marked by an old binary) cannot take the execute permission
	 * away from a readable page. */
	int pers = personality(0xffffffff);
	if (pers != -1 && (pers & READ_IMPLIES_EXEC)) {
		off_why = "the process runs with READ_IMPLIES_EXEC (an executable stack): a readable page stays executable";
		return;
	}
	/* Go's runtime installs its own signal handlers by raw system calls
	 * and runs its signal trampolines from its own text. */
	if (runtime && !strcmp(runtime, "go")) {
		off_why = "a Go runtime: its signal handlers and trampolines are its own code, outside any wrapper";
		return;
	}
	self_base = wss_loader_self_base();
	vdso_base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	long len = wss_sys3(SYS_readlink, (long)"/proc/self/exe", (long)exe_path, sizeof exe_path - 1);
	exe_path[len > 0 ? len : 0] = 0;
	wss_fmt_init(&excluded_fmt, excluded_json, sizeof excluded_json - 1); /* NUL-terminated */
	dl_iterate_phdr(note_excluded, NULL);
	on = true;
}

/* The start-up list's code, armed at once: the first interval is the
 * program's start (measuring is on: wss_engine_init). */
void wss_code_start_locked(void)
{
	if (!on)
		return;
	apply_locked(true);
	seen.owner = 0;
	wss_code_arm_locked();
}

const char *wss_code_excluded_json(void) { return on ? excluded_json : NULL; }

bool wss_code_full(void) { return full; }

void wss_code_arm_locked(void)
{
	if (!on)
		return;
	code_table_t *t = &tabs[!pub];
	for (uint32_t i = 0; i < t->n; i++)
		wss_sys_mprotect((void *)t->v[i].start, t->v[i].end - t->v[i].start, t->v[i].prot & ~PROT_EXEC);
}

void wss_code_disarm_locked(void)
{
	if (!on)
		return;
	code_table_t *t = &tabs[!pub];
	for (uint32_t i = 0; i < t->n; i++)
		wss_sys_mprotect((void *)t->v[i].start, t->v[i].end - t->v[i].start, t->v[i].prot);
}

void wss_code_relieve_locked(void)
{
	if (!on || !tabs[!pub].n)
		return;
	wss_code_disarm_locked();
	__atomic_add_fetch(&coarse, 1, __ATOMIC_RELAXED);
}

bool wss_code_fault(uintptr_t addr)
{
	if (!on)
		return false;
	uint32_t g = reader_join();
	code_range_t *r = find(&tabs[__atomic_load_n(&pub, __ATOMIC_ACQUIRE)], addr);
	if (!r) {
		reader_leave(g);
		return false;
	}
	uintptr_t page = addr & ~(WSS_PAGE_SIZE - 1);
	size_t i = (page - r->start) >> WSS_PAGE_SHIFT;
	/* An isolated open page splits its range's VMA in three; past the
	 * VMA budget the whole range opens (a lower bound for the rest of
	 * the interval). */
	long rc = -1;
	if (wss_engine_vma_charge(2)) {
		rc = wss_sys_mprotect((void *)page, WSS_PAGE_SIZE, r->prot);
		if (rc)
			wss_engine_vma_charge(-2);
	}
	if (rc) {
		if (wss_sys_mprotect((void *)r->start, r->end - r->start, r->prot)) {
			reader_leave(g);
			return false;
		}
		__atomic_add_fetch(&coarse, 1, __ATOMIC_RELAXED);
	}
	/* The tick's own runs are not the program's: it computes its
	 * estimates with libm (three of its pages here), which it opens
	 * without a record; the program's runs of those pages in the same
	 * interval then go unseen. */
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && !wss_fault_engine_thread && !wss_code_ticking) {
		uint32_t e = wss_fault_enter();
		if (!__atomic_load_n(&E.pending, __ATOMIC_SEQ_CST) &&
		    wss_page_record(&r->pages[i], e, wss_threads_self())) {
			__atomic_add_fetch(&nfaults[e & 1], 1, __ATOMIC_RELAXED);
			if (!__atomic_exchange_n(&r->ever[i], 1, __ATOMIC_RELAXED))
				__atomic_add_fetch(&total, 1, __ATOMIC_RELAXED);
		}
		wss_fault_exit(e);
	}
	reader_leave(g);
	return true;
}

/* Once per page and removal: a retry that worked leaves its mark, and a
 * later removal racing a run of the same page must get its retry too (a
 * review found the second race sent to the program). */
bool wss_code_retry(uintptr_t addr)
{
	uint32_t rm = on ? __atomic_load_n(&removed, __ATOMIC_RELAXED) : 0;
	if (!rm)
		return false;
	uintptr_t page = addr & ~(WSS_PAGE_SIZE - 1);
	if (retry_at == page && retry_removed == rm) {
		retry_at = 0;
		return false;
	}
	retry_at = page;
	retry_removed = rm;
	return true;
}

uint64_t wss_code_count(uint32_t k, uint32_t w, uint32_t nt, bool *lower)
{
	uint64_t n = 0;
	*lower = __atomic_exchange_n(&coarse, 0, __ATOMIC_RELAXED) != 0;
	if (!on)
		return 0;
	code_table_t *t = &tabs[!pub];
	for (uint32_t r = 0; r < t->n; r++) {
		size_t np = npages(&t->v[r]);
		for (size_t i = 0; i < np; i++) {
			uint32_t owner;
			if (!wss_page_in_window(&t->v[r].pages[i], k, w, &owner))
				continue;
			if (wss_page_touched_in(&t->v[r].pages[i], k))
				t->v[r].hits[i]++;
			n++;
			if (owner <= nt)
				wss_threads_get(owner)->window_code++;
		}
	}
	return n;
}

uint64_t wss_code_total(void) { return __atomic_load_n(&total, __ATOMIC_RELAXED); }

/* The code pages run in the most intervals, most first, into v[0..want)
 * (at most 64), their mapping "code:PATH" in names[].  Code of
 * libraries closed before the end is not among them.  Engine lock. */
int wss_code_hot(wss_profile_hot_t *v, int want, char (*names)[4096 + 8])
{
	int n = 0;
	const char *owner[64];
	if (want > 64)
		want = 64;
	if (!on || want <= 0)
		return 0;
	code_table_t *t = &tabs[!pub];
	for (uint32_t r = 0; r < t->n; r++) {
		size_t np = npages(&t->v[r]);
		for (size_t i = 0; i < np; i++) {
			uint32_t h = t->v[r].hits[i];
			if (!h || (n == want && v[n - 1].intervals >= h))
				continue;
			int j = n < want ? n++ : want - 1;
			for (; j > 0 && v[j - 1].intervals < h; j--) {
				v[j] = v[j - 1];
				owner[j] = owner[j - 1];
			}
			v[j] = (wss_profile_hot_t){.addr = t->v[r].start + (i << WSS_PAGE_SHIFT), .intervals = h};
			owner[j] = t->v[r].name;
		}
	}
	for (int j = 0; j < n; j++) {
		wss_fmt_t f;
		wss_fmt_init(&f, names[j], sizeof names[j]);
		wss_fmt_str(&f, "code:");
		wss_fmt_str(&f, owner[j]);
		v[j].mapping = wss_fmt_cstr(&f);
	}
	return n;
}

uint64_t wss_code_take_faults(uint32_t k) { return __atomic_exchange_n(&nfaults[k & 1], 0, __ATOMIC_RELAXED); }

/* A mapping change over code (the program's own mprotect, munmap, mremap,
 * MAP_FIXED): the ranges it touches leave tracking first.  Engine lock. */
void wss_code_forget_locked(uintptr_t start, size_t len)
{
	if (!on || !len)
		return;
	uintptr_t s = wss_page_down(start), e = wss_page_up(start + len);
	code_table_t *t = &tabs[!pub];
	for (uint32_t i = 0; i < t->n; i++)
		if (t->v[i].start < e && s < t->v[i].end) {
			drop_where(s, e, NULL, false);
			return;
		}
}

static bool not_startup(const code_range_t *r) { return !r->startup; }

void wss_code_dlclose_begin_locked(void)
{
	if (!on)
		return;
	closing++;
	drop_where(0, 0, not_startup, true);
}

void wss_code_dlclose_end_locked(void)
{
	if (on)
		closing--;
}

/* A forked child measures afresh: the parent's touches are not its own
 * (no recorder runs: the child is pending). */
void wss_code_fork_child(void)
{
	if (!on)
		return;
	code_table_t *t = &tabs[!pub];
	for (uint32_t r = 0; r < t->n; r++) {
		size_t np = npages(&t->v[r]);
		memset(t->v[r].pages, 0, np * sizeof *t->v[r].pages);
		memset(t->v[r].ever, 0, np);
		memset(t->v[r].hits, 0, np * sizeof *t->v[r].hits);
	}
	__atomic_store_n(&total, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&coarse, 0, __ATOMIC_RELAXED);
	nfaults[0] = nfaults[1] = 0;
	/* The parent opened what it ran in its last interval. */
	wss_code_arm_locked();
}

/* At the fork itself, in the child, while the forking thread is its only
 * one: a parent's thread in a handler at the fork left its reader count,
 * which no one would ever take back (a dlclose in the child's first
 * interval then waited for it for ever, a review found). */
void wss_code_fork_now(void)
{
	rcount[0] = rcount[1] = 0;
	retry_at = 0;
}
