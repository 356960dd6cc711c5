/* A seccomp filter the program installs may deny the system calls wss
 * makes in its own process: mprotect above all, which the fault handler
 * needs to give a touched page its protection back (denied, the program's
 * next access to an armed page would be a SIGSEGV it cannot survive).  The
 * filter is a BPF program over the call's number and arguments: run here
 * (common/seccomp.c) on each call wss makes, with the arguments it makes
 * them with, before the program's wrapper installs it.  If any is refused,
 * measuring ends there, while every call still works: the final sample
 * and the summary are written, every page gets its protection back, and
 * the program runs on untracked, as it would without wss. */
#include "config.h"
#include "engine/internal.h"

#include <linux/audit.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "common/seccomp.h"

/* PAGEMAP_SCAN's request (linux/fs.h, 6.7), where the headers predate it. */
#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN _IOWR('f', 16, struct { char b[96]; })
#endif

#define CALL(n, nr_, ...) {.name = (n), .nr = (nr_), .args = {__VA_ARGS__}}

typedef struct call {
	const char *name;
	int nr;
	uint64_t args[6];
} call_t;

/* How the filter treats what it refuses, for the line that says so. */
static void say_action(wss_fmt_t *f, uint32_t action)
{
	uint32_t a = action & SECCOMP_RET_ACTION_FULL;
	if (a == SECCOMP_RET_ERRNO) {
		wss_fmt_str(f, "fails with ");
		wss_fmt_str(f, wss_errno_text((int)(action & SECCOMP_RET_DATA)));
	} else if (a == SECCOMP_RET_TRAP) {
		wss_fmt_str(f, "raises SIGSYS");
	} else if (a == SECCOMP_RET_TRACE || a == SECCOMP_RET_USER_NOTIF) {
		wss_fmt_str(f, "goes to a tracer or supervisor");
	} else {
		wss_fmt_str(f, "kills the process");
	}
}

bool wss_engine_seccomp(const struct sock_fprog *prog, bool strict)
{
	if (!__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) || wss_sys_getpid() != E.pid)
		return false;
	uintptr_t page = E.probe ? E.probe : (uintptr_t)&E & ~(uintptr_t)(WSS_PAGE_SIZE - 1);
	int uffd = -1, pagemap = -1;
	wss_uffd_fds(&uffd, &pagemap);
	/* The calls a tick and a fault make, with their arguments as made
	 * (the pages and the descriptors are ours). */
	const call_t calls[] = {
		CALL("mprotect", SYS_mprotect, page, WSS_PAGE_SIZE, PROT_NONE),
		CALL("mprotect", SYS_mprotect, page, WSS_PAGE_SIZE, PROT_READ | PROT_WRITE),
		CALL("mprotect", SYS_mprotect, page, WSS_PAGE_SIZE, PROT_READ),
		CALL("ioctl", uffd >= 0 ? SYS_ioctl : -1, (uint64_t)uffd, UFFDIO_WRITEPROTECT),
		CALL("ioctl", pagemap >= 0 ? SYS_ioctl : -1, (uint64_t)pagemap, PAGEMAP_SCAN),
		CALL("write", SYS_write, (uint64_t)(E.fd >= 0 ? E.fd : 2)),
		CALL("futex", SYS_futex, (uint64_t)(uintptr_t)&E.stop, FUTEX_WAIT_BITSET_PRIVATE),
		CALL("futex", SYS_futex, (uint64_t)(uintptr_t)&E.stop, FUTEX_WAKE_PRIVATE),
		CALL("sched_yield", SYS_sched_yield, 0),
		CALL("mincore", SYS_mincore, page, WSS_PAGE_SIZE),
		CALL("mmap", SYS_mmap, 0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1),
		CALL("munmap", SYS_munmap, page, WSS_PAGE_SIZE),
		CALL("madvise", SYS_madvise, page, WSS_PAGE_SIZE, MADV_DONTNEED),
		CALL("rt_sigprocmask", SYS_rt_sigprocmask, SIG_BLOCK, 0, 0, 8),
		CALL("getpid", SYS_getpid, 0),
		CALL("gettid", SYS_gettid, 0),
		CALL("fstat", SYS_fstat, (uint64_t)(E.fd >= 0 ? E.fd : 2)),
		CALL("ftruncate", SYS_ftruncate, (uint64_t)(E.fd >= 0 ? E.fd : 2)),
	};
	const char *denied = NULL;
	uint32_t action = 0;
	for (size_t i = 0; i < sizeof calls / sizeof *calls && !denied; i++) {
		if (calls[i].nr < 0)
			continue;
		if (strict) { /* read, write, exit and sigreturn alone */
			if (calls[i].nr != SYS_write) {
				denied = calls[i].name;
				action = SECCOMP_RET_KILL_THREAD;
			}
			continue;
		}
		struct seccomp_data d = {.nr = calls[i].nr, .arch = AUDIT_ARCH_X86_64};
		for (int j = 0; j < 6; j++)
			d.args[j] = calls[i].args[j];
		bool valid;
		uint32_t a = wss_seccomp_run(prog ? prog->filter : NULL, prog ? prog->len : 0, &d, &valid);
		if (!valid)
			return false; /* the kernel refuses it: nothing changes */
		if (!wss_seccomp_allows(a)) {
			denied = calls[i].name;
			action = a;
		}
	}
	if (!denied)
		return false;
	static char why[160];
	wss_fmt_t f;
	wss_fmt_init(&f, why, sizeof why);
	wss_fmt_str(&f, strict ? "the program entered seccomp's strict mode, where " : "the program's seccomp filter: ");
	wss_fmt_str(&f, denied);
	wss_fmt_ch(&f, ' ');
	say_action(&f, action);
	wss_fmt_cstr(&f);
	wss_engine_end(why);
	return true;
}
