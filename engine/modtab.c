/* The engine's table of loaded objects and their unwind tables, so that a
 * stack capture in the fault handler never waits for the dynamic loader's
 * list lock (issue 12).  libunwind's local unwinder finds an IP's unwind
 * information in its dynamic list (_U_dyn_register) before it ever calls
 * dl_iterate_phdr, which takes that lock: a program thread holding it
 * (dlopen, a dl_iterate_phdr callback) while it waits for a lock the
 * faulting thread holds would deadlock the program.  So every object's
 * .eh_frame_hdr search table is registered there, in the format libunwind
 * builds itself from dl_iterate_phdr (UNW_INFO_FORMAT_REMOTE_TABLE, whose
 * local lookup reads the table in place), and the capture asks this table
 * first (wss_modtab_check) and unwinds a frame only when the lookup
 * libunwind is about to do is sure to succeed from it: an IP in no known
 * object, or without a table entry, would send libunwind to dl_iterate_phdr.
 *
 * Who writes: syncs, always inside dl_iterate_phdr (start-up, and a tick
 * that sees the loader's add or remove counters change), so every object
 * listed is mapped while it is entered.  Captures never wait for a sync:
 * the gate word counts captures inside the table, and a sync sets its top
 * bit, then waits until the count is zero; a capture that finds the bit
 * set gives up and is retried at the site's next fault.  The sync's wait
 * is bounded: a capture inside waits for nothing the sync holds (not the
 * loader's lock, not the engine's).  So libunwind's list and our entries
 * change only while no capture reads them, and entries are never unlinked
 * from libunwind's list (_U_dyn_cancel would cut a reader's walk short,
 * sending it on to dl_iterate_phdr): a dropped entry gets an empty range.
 *
 * Unloading, and why an unmapped table is never read.  A capture looks up
 * only the IPs of its own thread's live frames, and an object whose code a
 * live frame is running cannot be unloaded by a correct program, so the
 * object of an IP is mapped while the capture runs.  What could go wrong is
 * an entry gone stale: between a dlclose (or the C library's own unloading
 * of an NSS or gconv module, or a failed dlopen) and the next sync, another
 * object can be mapped at the same addresses, and a capture in its code
 * would read the old object's table at an address that is now unmapped or
 * holds something else.  So an entry for an object loaded after start-up is
 * checked before its first use in each capture: the first 64 bytes at its
 * ELF header and 16 at its .eh_frame_hdr, read with process_vm_readv (which
 * fails with EFAULT where a load would fault), must be the bytes seen when
 * it was entered; otherwise the IP counts as unknown.  The same object
 * loaded again at the same address passes, and its table is then right.
 * Objects loaded at start-up are never unloaded and are not checked.
 * libunwind's cache of register rules, keyed by IP, is flushed at every
 * sync; until then the check above keeps captures from stepping through a
 * stale entry's addresses at all. */
#include "config.h"
#include "engine/modtab.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/sys.h"

#define MOD_MAX 1024
#define SIG_EHDR 64
#define SIG_HDR 16
#define GATE_SYNC 0x80000000u

/* libunwind's own search of a REMOTE_TABLE entry (exported, not declared
 * in its headers): the lookup its unwinder makes from the dynamic list. */
extern int _ULx86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					       unw_proc_info_t *pi, int need_unwind_info, void *arg);

typedef struct mod {
	unw_dyn_info_t di;   /* linked into libunwind's list once, never unlinked */
	uintptr_t lo, hi;    /* executable range; di's range while live */
	uintptr_t bias, hdr; /* load bias, .eh_frame_hdr */
	uintptr_t ehdr;      /* the ELF header (first PT_LOAD at offset 0), 0: none */
	unsigned char sig[SIG_EHDR + SIG_HDR];
	bool live, seen, startup, linked;
} mod_t;

static mod_t mods[MOD_MAX];
static int order[MOD_MAX]; /* the live entries by lo, for the lookup */
static int nlive;
static int nused; /* slots ever used */
static uint32_t gate; /* captures inside | GATE_SYNC */
static bool no_check; /* process_vm_readv refused: entries are trusted */

void wss_modtab_sync_begin(void)
{
	for (;;) {
		uint32_t v = __atomic_load_n(&gate, __ATOMIC_RELAXED) & ~GATE_SYNC;
		if (__atomic_compare_exchange_n(&gate, &v, v | GATE_SYNC, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			break;
		wss_sys_sched_yield();
	}
	while (__atomic_load_n(&gate, __ATOMIC_SEQ_CST) != GATE_SYNC)
		wss_sys_sched_yield();
	for (int i = 0; i < nused; i++)
		mods[i].seen = false;
}

/* The .eh_frame_hdr's search table, in the only encoding libunwind's
 * lookup reads (the one GNU ld, gold and lld write): returns the table's
 * address and its entry count in *n, or 0. */
static uintptr_t search_table(uintptr_t hdr, unw_word_t *n)
{
	const unsigned char *h = (const unsigned char *)hdr;
	/* version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4; table datarel|sdata4 */
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	uint32_t count;
	memcpy(&count, h + 8, sizeof count);
	*n = count;
	return count ? hdr + 12 : 0;
}

/* The bytes still_there compares (the object is mapped: sync). */
static void take_signature(mod_t *m)
{
	memset(m->sig, 0, sizeof m->sig);
	if (m->ehdr)
		memcpy(m->sig, (const void *)m->ehdr, SIG_EHDR);
	memcpy(m->sig + SIG_EHDR, (const void *)m->hdr, SIG_HDR);
}

void wss_modtab_sync_add(const struct dl_phdr_info *info)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0, hdr = 0, ehdr = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = a;
		} else if (ph->p_type == PT_LOAD) {
			if (ph->p_offset == 0 && ph->p_filesz >= SIG_EHDR)
				ehdr = a;
			if ((ph->p_flags & PF_X) && ph->p_memsz) {
				lo = a < lo ? a : lo;
				hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
			}
		}
	}
	unw_word_t count = 0;
	uintptr_t table = hdr ? search_table(hdr, &count) : 0;
	if (lo >= hi || !table)
		return; /* no unwind table: its frames end stacks */
	/* The same object's entry is written again: it may be another object
	 * of the same layout, loaded where this one was since the last sync,
	 * whose table and bytes are the ones to use from now on. */
	int free_slot = -1;
	for (int i = 0; i < nused; i++) {
		mod_t *m = &mods[i];
		if (m->live && m->bias == info->dlpi_addr && m->lo == lo && m->hi == hi && m->hdr == hdr) {
			free_slot = i;
			break;
		}
		if (!m->live && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		if (nused == MOD_MAX)
			return;
		free_slot = nused++;
	}
	mod_t *m = &mods[free_slot];
	m->lo = lo;
	m->hi = hi;
	m->bias = info->dlpi_addr;
	m->hdr = hdr;
	m->ehdr = ehdr;
	take_signature(m);
	/* Field by field: di's links belong to libunwind once it is linked. */
	m->di.start_ip = lo;
	m->di.end_ip = hi;
	m->di.gp = 0;
	m->di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	m->di.load_offset = 0;
	m->di.u.rti.name_ptr = 0;
	m->di.u.rti.segbase = hdr; /* table entries are relative to the header */
	m->di.u.rti.table_data = table;
	m->di.u.rti.table_len = count * 8 / sizeof(unw_word_t); /* 8-byte entries, in words */
	if (!m->live)
		m->startup = false;
	m->live = m->seen = true;
	if (!m->linked) {
		_U_dyn_register(&m->di);
		m->linked = true;
	}
}

void wss_modtab_sync_end(bool startup)
{
	nlive = 0;
	for (int i = 0; i < nused; i++) {
		mod_t *m = &mods[i];
		if (!m->live)
			continue;
		if (!m->seen) {
			m->di.start_ip = m->di.end_ip = 0;
			m->live = false;
			continue;
		}
		if (startup)
			m->startup = true;
		int j = nlive++;
		for (; j > 0 && mods[order[j - 1]].lo > m->lo; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	/* Syncs run when objects were added or removed: whatever was at an
	 * address libunwind cached rules for may be something else now. */
	unw_flush_cache(unw_local_addr_space, 0, 0);
	__atomic_fetch_and(&gate, ~GATE_SYNC, __ATOMIC_RELEASE);
}

bool wss_modtab_enter(void)
{
	uint32_t v = __atomic_load_n(&gate, __ATOMIC_ACQUIRE);
	do {
		if (v & GATE_SYNC)
			return false;
	} while (!__atomic_compare_exchange_n(&gate, &v, v + 1, false, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE));
	return true;
}

void wss_modtab_leave(void) { __atomic_sub_fetch(&gate, 1, __ATOMIC_RELEASE); }

/* Are the bytes at addr still the ones in sig?  Reads with the kernel's
 * copy, which fails with EFAULT where a load would fault. */
static bool same_bytes(uintptr_t addr, const unsigned char *sig, size_t n)
{
	unsigned char buf[SIG_EHDR];
	struct iovec local = {buf, n}, remote = {(void *)addr, n};
	long r = wss_sys6(SYS_process_vm_readv, wss_sys_getpid(), (long)&local, 1, (long)&remote, 1, 0);
	if (wss_sys_failed(r) && r != -EFAULT) {
		__atomic_store_n(&no_check, true, __ATOMIC_RELAXED); /* a seccomp filter, say */
		return true;
	}
	return r == (long)n && !memcmp(buf, sig, n);
}

static bool still_there(const mod_t *m)
{
	if (m->startup || __atomic_load_n(&no_check, __ATOMIC_RELAXED))
		return true;
	return (!m->ehdr || same_bytes(m->ehdr, m->sig, SIG_EHDR)) && same_bytes(m->hdr, m->sig + SIG_EHDR, SIG_HDR);
}

int wss_modtab_check(uint64_t lookup, int *memo)
{
	int lo = 0, hi = nlive;
	while (lo < hi) { /* the last entry starting at or below lookup */
		int mid = (lo + hi) / 2;
		if (mods[order[mid]].lo <= lookup)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return WSS_MODTAB_LATER;
	int slot = order[lo - 1];
	mod_t *m = &mods[slot];
	if (lookup >= m->hi)
		return WSS_MODTAB_LATER;
	if (*memo != slot) {
		if (!still_there(m))
			return WSS_MODTAB_LATER;
		*memo = slot;
	}
	/* The lookup libunwind will make, without its unwind information (no
	 * allocation).  It reads the FDE and CIE, and through a CIE's
	 * personality slot possibly an armed page (sites.c). */
	unw_proc_info_t pi;
	if (_ULx86_64_dwarf_search_unwind_table(unw_local_addr_space, lookup, &m->di, &pi, 0, NULL) < 0)
		return WSS_MODTAB_END;
	return WSS_MODTAB_OK;
}

void wss_modtab_fork_child(void)
{
	/* Only the forking thread lives on: captures that were inside are
	 * gone, and no sync was (fork waits for a tick's). */
	__atomic_store_n(&gate, 0, __ATOMIC_RELAXED);
}
