/* First-touch sites: the instructions that touched pages first in each
 * interval, counted per interval, and each distinct site's call stack,
 * captured once from the signal context and deduplicated.  The fault path
 * (wss_sites_touch, wss_sites_capture) is lock-free and allocates nothing:
 * tables are fixed-size and preallocated, entries are claimed with one
 * compare-and-swap.
 *
 * Interval counts live in two arrays indexed by the interval's parity, as
 * the in-flight counters do (engine/fault.c): handlers of interval e add to
 * counts[e & 1]; the tick that ends k runs after every handler of k has
 * finished and before any of k+2 can start, so it reads and clears
 * counts[k & 1] while handlers of k+1 use the other array.
 *
 * Stacks: libunwind walks the interrupted thread's stack from the signal
 * frame (unw_init_local2 with UNW_INIT_SIGNAL_FRAME).  Local unwinding does
 * not allocate (its memory pool comes from mmap).  It would find unwind
 * tables with dl_iterate_phdr, which takes the dynamic loader's list lock,
 * held by any program thread inside dlopen, dlclose or a dl_iterate_phdr
 * callback: such a thread waiting for a lock the faulting thread holds
 * would deadlock the program (issue 12).  So the unwinder finds every
 * table in the engine's own table of objects (modtab.c), and a frame is
 * stepped only when modtab says that lookup will succeed there; a frame in
 * an object the table does not know yet (loaded since the last tick) leaves
 * the site for a later fault, up to TRIES times, then ends the stack.  The
 * capture takes no lock a program thread can hold (libunwind's own
 * mutexes are taken only by captures), and still runs outside the engine's
 * in-flight section.
 *
 * The capture must never harm the program (issue 11), and three things
 * could:
 * - It reads memory that may be armed: a CIE's personality slot in .data
 *   (every Rust and C++ frame), and whatever the frame pointer holds when
 *   a frame has no unwind information (a JIT keeps heap addresses there).
 *   Our handler runs with every signal blocked, and a fault with SIGSEGV
 *   blocked is a kill.  So the capture reopens SIGSEGV for itself, and
 *   the unwinder's own sigprocmask calls are kept from blocking it again
 *   (signals.c); a touch of an armed page then faults
 *   into our handler again, nested, which opens the page and records it
 *   like any touch (no site: see wss_engine_touched), and the unwinder
 *   reads on.  And the walk stops at the first frame without unwind
 *   information instead of following a frame pointer that may be any
 *   value: a JIT's frames end the stack.
 * - Stack space: the handler may run on a small alternate stack (Rust's
 *   threads get SIGSTKSZ), and the unwinder's cursor, the frame buffer and
 *   its table search take tens of KiB.  The capture runs on a stack of its
 *   own, one of a few preallocated ones, claimed with a compare-and-swap;
 *   with none free the site is left for its next fault to capture.
 * - Locks: see above. */
#include "config.h"
#include "engine/sites.h"

#include <link.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/sys.h"
#include "engine/modtab.h"

#define SITE_SLOTS WSS_SITES_MAX /* distinct faulting instructions; more count as "other" */
#define STACK_SLOTS 4096
#define PROBES 64
#define CAPTURE_STACKS 4
#define CAPTURE_STACK_SIZE (256 * 1024)
#define CAPTURE_GUARD 4096 /* below each stack: an overflow faults, never runs into the next */
#define CAPTURE_STRIDE (CAPTURE_GUARD + CAPTURE_STACK_SIZE)
#define TRIES 8 /* captures of a site left for later before one ends its stack where it can */

typedef struct site {
	uint64_t pc;    /* 0: free */
	uint32_t stack; /* stack id, 0 until captured */
	uint32_t state; /* 0 new, 1 being captured, 2 done (stack 0: could not) */
} site_t;

typedef struct stack {
	uint64_t hash;  /* 0: free */
	uint32_t n;     /* frames, valid once state is 2 */
	uint32_t state; /* 1 being written, 2 ready, 3 written to the profile */
} stk_t;

__thread int wss_sites_unwinding __attribute__((tls_model("initial-exec")));

bool wss_engine_unwinding(void) { return wss_sites_unwinding != 0; }

/* A capture from our own context (wss_sites_capture_here) blocks the
 * asynchronous signals once, around the whole walk, and the unwinder's own
 * mask changes (two system calls around each cache access: Debian's
 * libunwind masks every signal while it holds its cache lock) are then
 * answered here without a call: no signal can arrive meanwhile, which is
 * what they are for.  Mask: the one in force, 0 when not capturing. */
static __thread uint64_t here_mask __attribute__((tls_model("initial-exec")));
static __thread bool here_masked __attribute__((tls_model("initial-exec")));

bool wss_engine_unwind_masked(uint64_t *mask)
{
	if (!here_masked)
		return false;
	*mask = here_mask;
	return true;
}

/* Set in a forked child: no stack is captured there.  A parent thread may
 * have been inside the unwinder at the fork, holding one of its internal
 * mutexes, which the child then inherits held. */
static bool no_capture;

static site_t sites[SITE_SLOTS];
static uint32_t counts[2][SITE_SLOTS];
static uint32_t other[2];
/* The whole run's counts, summed by the tick from the intervals'. */
static uint64_t totals[SITE_SLOTS], other_total;
static stk_t stacks[STACK_SLOTS];
static uint64_t *frames; /* STACK_SLOTS * depth */
static unsigned depth;
static char *capture_stacks; /* CAPTURE_STACKS * CAPTURE_STRIDE: guard, stack */
static uint32_t capture_busy; /* bit i: stack i is in use */
static uint8_t tries[SITE_SLOTS]; /* captures of the site left for later */

/* wss's own executable code: the frames a capture from our own context
 * leaves out. */
static uintptr_t self_lo, self_hi;

static int find_self_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t me = (uintptr_t)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= s && me < s + ph->p_memsz) {
			self_lo = s;
			self_hi = s + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

int wss_sites_init(unsigned stack_depth)
{
	if (!self_hi)
		dl_iterate_phdr(find_self_text, (void *)(uintptr_t)wss_sites_init);
	depth = stack_depth ? stack_depth : 1;
	if (!frames) {
		frames = wss_sys_alloc((size_t)STACK_SLOTS * WSS_SITES_DEPTH_MAX * sizeof *frames);
		if (!frames)
			return ENOMEM;
	}
	if (!capture_stacks) {
		capture_stacks = wss_sys_alloc((size_t)CAPTURE_STACKS * CAPTURE_STRIDE);
		if (!capture_stacks)
			return ENOMEM;
		for (int i = 0; i < CAPTURE_STACKS; i++)
			wss_sys_mprotect(capture_stacks + (size_t)i * CAPTURE_STRIDE, CAPTURE_GUARD, PROT_NONE);
	}
	/* libunwind initialises here, opening the pipe it checks addresses
	 * with: as the unwinder, so the pipe goes above the program's
	 * descriptor numbers and is counted as ours (preload/fds.c). */
	wss_sites_unwinding++;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	wss_sites_unwinding--;
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

int wss_sites_touch(uint64_t pc, uint32_t epoch, bool *fresh)
{
	*fresh = false;
	if (!pc)
		return -1;
	uint32_t h = (uint32_t)mix(pc);
	for (int i = 0; i < PROBES; i++) {
		uint32_t s = (h + (uint32_t)i) & (SITE_SLOTS - 1);
		uint64_t cur = __atomic_load_n(&sites[s].pc, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			uint64_t zero = 0;
			if (__atomic_compare_exchange_n(&sites[s].pc, &zero, pc, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				*fresh = true;
			else
				cur = zero;
		}
		if (*fresh || cur == pc) {
			__atomic_add_fetch(&counts[epoch & 1][s], 1, __ATOMIC_RELAXED);
			/* Not captured yet (new, or left for later by a capture
			 * that found no stack to run on). */
			*fresh = __atomic_load_n(&sites[s].state, __ATOMIC_RELAXED) == 0;
			return (int)s;
		}
	}
	__atomic_add_fetch(&other[epoch & 1], 1, __ATOMIC_RELAXED);
	return -1;
}

/* Put frames[0..n) in the stack table.  Returns the stack id (slot + 1) or
 * 0 when the table is full. */
static uint32_t stack_insert(const uint64_t *f, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	for (uint32_t i = 0; i < n; i++)
		h = mix(h ^ f[i]) + i;
	if (!h)
		h = 1;
	for (int i = 0; i < PROBES; i++) {
		uint32_t s = ((uint32_t)h + (uint32_t)i) & (STACK_SLOTS - 1);
		uint64_t cur = __atomic_load_n(&stacks[s].hash, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			uint64_t zero = 0;
			if (__atomic_compare_exchange_n(&stacks[s].hash, &zero, h, false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				memcpy(&frames[(size_t)s * WSS_SITES_DEPTH_MAX], f, n * sizeof *f);
				stacks[s].n = n;
				__atomic_store_n(&stacks[s].state, 2, __ATOMIC_RELEASE);
				return s + 1;
			}
			cur = zero;
		}
		if (cur != h)
			continue;
		/* Same hash: the same stack, unless it is still being written
		 * (then wait for it: the writer is another thread in the fault
		 * path, a few instructions from done) or differs. */
		while (__atomic_load_n(&stacks[s].state, __ATOMIC_ACQUIRE) < 2)
			wss_sys_sched_yield();
		if (stacks[s].n == n && !memcmp(&frames[(size_t)s * WSS_SITES_DEPTH_MAX], f, n * sizeof *f))
			return s + 1;
	}
	return 0;
}

struct capture {
	const void *uc;
	bool here;   /* uc is unw_getcontext's, not a signal frame's: wss_sites_capture_here */
	bool last;   /* the site's last try: end the stack where modtab cannot go on */
	bool later;  /* out: leave the site for its next fault */
	uint32_t id; /* the stack's id, 0: none */
};


/* On a capture stack.  A nested fault would be delivered at the top of the
 * thread's alternate stack, where the handler that called us still has its
 * frames, so the alternate stack is switched off until we are done (the
 * kernel allows it: we are not running on it) and the nested handler runs
 * here. */
static void unwind(void *arg)
{
	struct capture *c = arg;
	uint64_t f[WSS_SITES_DEPTH_MAX];
	uint32_t n = 0;
	stack_t off = {.ss_flags = SS_DISABLE}, alt;
	/* From our own context (not a handler), a nested fault is delivered
	 * as any other: nothing to switch off, nothing to open. */
	bool restore = !c->here && !wss_sys_failed(wss_sys2(SYS_sigaltstack, &off, &alt)) && !(alt.ss_flags & SS_DISABLE);
	/* SIGSEGV open only while the alternate stack is off: with it on and
	 * us off it, a nested one (a fault, or one sent by kill) would be
	 * delivered over the outer handler's frames.  Only SIGSEGV, which is
	 * never blocked in a program thread anyway (signals.c): SIGBUS open
	 * here would take a SIGBUS sent to the process by kill() in a thread
	 * whose program blocks it, to its default action. */
	uint64_t open = 1ULL << (SIGSEGV - 1), old;
	if (!c->here)
		wss_sys_sigmask(SIG_UNBLOCK, &open, &old);
	unw_cursor_t cur;
	if (!wss_modtab_enter()) {
		c->later = !c->last; /* a sync is writing the table */
	} else {
		if (unw_init_local2(&cur, (unw_context_t *)c->uc, c->here ? 0 : UNW_INIT_SIGNAL_FRAME) == 0) {
			/* The interrupted frame: its IP is looked up as is.  A
			 * context of our own holds a return address. */
			bool exact = !c->here;
			int memo = -1;
			for (;;) {
				unw_word_t ip = 0;
				if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
					break;
				/* Before libunwind looks ip up: where modtab
				 * cannot answer, libunwind would ask the loader
				 * (see the top); without unwind information, it
				 * would follow the frame pointer, which may hold
				 * anything.  Either ends the walk here. */
				int st = wss_modtab_check(exact ? ip : ip - 1, &memo);
				/* After a signal frame, either address may be
				 * looked up (libunwind goes by the frame's CIE,
				 * unw_is_signal_frame by its code): both must do. */
				if (exact && n && st == WSS_MODTAB_OK)
					st = wss_modtab_check(ip - 1, &memo);
				if (st == WSS_MODTAB_LATER && !c->last) {
					c->later = true;
					break;
				}
				/* From our own context: wss's frames (the capture,
				 * the allocation hook, the wrapper) are not the
				 * program's. */
				if (!(c->here && !n && ip >= self_lo && ip < self_hi))
					f[n++] = ip;
				if (st != WSS_MODTAB_OK || n >= depth)
					break;
				/* The next frame's IP is a return address, unless
				 * this one is a signal frame (a handler's
				 * sigreturn trampoline): libunwind's rule. */
				exact = unw_is_signal_frame(&cur) > 0;
				if (unw_step(&cur) <= 0)
					break;
			}
		}
		wss_modtab_leave();
	}
	if (!c->here)
		wss_sys_sigmask(SIG_SETMASK, &old, NULL);
	c->id = n && !c->later ? stack_insert(f, n) : 0;
	if (restore) {
		alt.ss_flags &= ~SS_ONSTACK;
		wss_sys2(SYS_sigaltstack, &alt, NULL);
	}
}

/* Run fn(arg) on the stack whose top is top (16-byte aligned).  x86-64:
 * the old stack pointer waits in rbx, which fn preserves. */
static void call_on_stack(char *top, void (*fn)(void *), void *arg)
{
	uintptr_t a = (uintptr_t)arg;
	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "mov %[top], %%rsp\n\t"
			 "call *%[fn]\n\t"
			 "mov %%rbx, %%rsp"
			 : "+D"(a)
			 : [top] "r"(top), [fn] "r"(fn)
			 : "rbx", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0",
			   "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
			   "xmm12", "xmm13", "xmm14", "xmm15");
}

void wss_sites_capture(int site, const void *uc)
{
	if (site < 0 || !frames || no_capture || wss_sites_unwinding)
		return;
	uint32_t zero = 0;
	if (!__atomic_compare_exchange_n(&sites[site].state, &zero, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return; /* another thread is capturing it, or has */
	int k = -1;
	for (int i = 0; i < CAPTURE_STACKS && k < 0; i++) {
		uint32_t bit = 1U << i;
		if (!(__atomic_fetch_or(&capture_busy, bit, __ATOMIC_ACQUIRE) & bit))
			k = i;
	}
	if (k < 0) { /* every capture stack is in use: at the site's next fault */
		__atomic_store_n(&sites[site].state, 0, __ATOMIC_RELEASE);
		return;
	}
	struct capture c = {uc, false, tries[site] + 1 >= TRIES, false, 0};
	wss_sites_unwinding++;
	call_on_stack(capture_stacks + (size_t)k * CAPTURE_STRIDE + CAPTURE_STRIDE, unwind, &c);
	wss_sites_unwinding--;
	__atomic_fetch_and(&capture_busy, ~(1U << k), __ATOMIC_RELEASE);
	if (c.later) { /* state 1 is ours: tries[site] is too */
		tries[site]++;
		__atomic_store_n(&sites[site].state, 0, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&sites[site].stack, c.id, __ATOMIC_RELEASE);
	__atomic_store_n(&sites[site].state, 2, __ATOMIC_RELEASE);
}

uint32_t wss_sites_capture_here(void)
{
	if (!frames || no_capture || wss_sites_unwinding)
		return 0;
	int k = -1;
	for (int i = 0; i < CAPTURE_STACKS && k < 0; i++) {
		uint32_t bit = 1U << i;
		if (!(__atomic_fetch_or(&capture_busy, bit, __ATOMIC_ACQUIRE) & bit))
			k = i;
	}
	if (k < 0)
		return 0;
	/* This frame stays live while the walk runs on the capture stack. */
	unw_context_t uc;
	unw_getcontext(&uc);
	/* The walk's last try at once: an allocation is not met again, so
	 * the stack ends where modtab cannot go on (a library loaded since
	 * the last tick) rather than being left for later. */
	struct capture c = {&uc, true, true, false, 0};
	/* Every signal but the synchronous ones (a fault must reach its
	 * handler: ours, for an armed page the walk reads). */
	uint64_t block = ~((1ULL << (SIGSEGV - 1)) | (1ULL << (SIGBUS - 1)) | (1ULL << (SIGILL - 1)) |
			   (1ULL << (SIGFPE - 1)) | (1ULL << (SIGTRAP - 1))),
		 old;
	if (wss_sys_failed(wss_sys_sigmask(SIG_BLOCK, &block, &old))) {
		__atomic_fetch_and(&capture_busy, ~(1U << k), __ATOMIC_RELEASE);
		return 0;
	}
	here_mask = old | block;
	here_masked = true;
	wss_sites_unwinding++;
	call_on_stack(capture_stacks + (size_t)k * CAPTURE_STRIDE + CAPTURE_STRIDE, unwind, &c);
	wss_sites_unwinding--;
	here_masked = false;
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_fetch_and(&capture_busy, ~(1U << k), __ATOMIC_RELEASE);
	return c.id;
}

int wss_sites_top(uint32_t k, wss_site_count_t *top, int max, uint64_t *rest)
{
	int n = 0;
	uint64_t others = __atomic_exchange_n(&other[k & 1], 0, __ATOMIC_RELAXED);
	other_total += others;
	for (uint32_t s = 0; s < SITE_SLOTS; s++) {
		uint32_t c = counts[k & 1][s];
		if (!c)
			continue;
		counts[k & 1][s] = 0;
		totals[s] += c;
		wss_site_count_t e = {.pc = __atomic_load_n(&sites[s].pc, __ATOMIC_ACQUIRE),
				      .stack = __atomic_load_n(&sites[s].stack, __ATOMIC_ACQUIRE),
				      .pages = c};
		/* Keep the max largest, sorted (max is small). */
		int i;
		if (n < max) {
			i = n++;
		} else if (top[max - 1].pages < c) {
			others += top[max - 1].pages;
			i = max - 1;
		} else {
			others += c;
			continue;
		}
		for (; i > 0 && top[i - 1].pages < c; i--)
			top[i] = top[i - 1];
		top[i] = e;
	}
	*rest = others;
	return n;
}

int wss_sites_stacks_unwritten(void (*fn)(uint32_t id, const uint64_t *frames, uint32_t n, void *arg), void *arg)
{
	int written = 0;
	for (uint32_t s = 0; s < STACK_SLOTS; s++) {
		if (__atomic_load_n(&stacks[s].state, __ATOMIC_ACQUIRE) != 2)
			continue;
		fn(s + 1, &frames[(size_t)s * WSS_SITES_DEPTH_MAX], stacks[s].n, arg);
		stacks[s].state = 3;
		written++;
	}
	return written;
}

void wss_sites_fork_no_capture(void) { no_capture = true; }

void wss_sites_fork_child(void)
{
	/* The parent's handlers in flight are gone with its threads, and the
	 * child's profile has none of the stacks yet. */
	memset(counts, 0, sizeof counts);
	memset(other, 0, sizeof other);
	memset(totals, 0, sizeof totals);
	other_total = 0;
	no_capture = true;
	wss_modtab_fork_child();
	for (uint32_t s = 0; s < STACK_SLOTS; s++)
		if (stacks[s].state == 3)
			stacks[s].state = 2;
	for (uint32_t s = 0; s < SITE_SLOTS; s++)
		if (sites[s].state == 1) /* its capturing thread is gone */
			sites[s].state = 2;
}

int wss_sites_run(wss_site_count_t *out, int max, uint64_t *rest)
{
	int n = 0;
	uint64_t others = other_total;
	for (uint32_t s = 0; s < SITE_SLOTS; s++) {
		if (!totals[s])
			continue;
		if (n == max) {
			others += totals[s];
			continue;
		}
		out[n++] = (wss_site_count_t){.pc = __atomic_load_n(&sites[s].pc, __ATOMIC_ACQUIRE),
					      .stack = __atomic_load_n(&sites[s].stack, __ATOMIC_ACQUIRE),
					      .pages = totals[s]};
	}
	/* Shell sort, most pages first (no qsort: it may allocate). */
	for (int gap = n / 2; gap > 0; gap /= 2)
		for (int i = gap; i < n; i++) {
			wss_site_count_t e = out[i];
			int j = i;
			for (; j >= gap && out[j - gap].pages < e.pages; j -= gap)
				out[j] = out[j - gap];
			out[j] = e;
		}
	*rest = others;
	return n;
}

uint32_t wss_sites_stack_of(int site)
{
	return site >= 0 && site < SITE_SLOTS ? __atomic_load_n(&sites[site].stack, __ATOMIC_ACQUIRE) : 0;
}
