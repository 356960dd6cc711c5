/* What a seccomp SIGSYS guard would cost (docs/limits.md): the time of one
 * getppid() natively, and when a seccomp filter traps it (SECCOMP_RET_TRAP)
 * to a SIGSYS handler that performs it from an address the filter lets
 * through, as a guard opening the call's buffers would.  The filter needs
 * no_new_privs, which this process sets for itself only.
 * usage: sigsyscost [CALLS] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The one place the filter allows getppid from: a syscall instruction at a
 * known address. */
__attribute__((noinline)) static long raw_getppid(void)
{
	long r;
	__asm__ volatile("mov %1, %%eax\n.globl guard_site\nguard_site: syscall\n"
			 : "=a"(r)
			 : "i"(SYS_getppid)
			 : "rcx", "r11", "memory");
	return r;
}

extern char guard_site[];

static void on_sys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ucv;
	/* A real guard would open the pointer arguments here (per system call),
	 * then run the call from the allowed site. */
	uc->uc_mcontext.gregs[REG_RAX] = raw_getppid();
}

static double loop(long n)
{
	double t = now();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (now() - t) / n * 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	double native = loop(n);
	struct sigaction sa = {.sa_sigaction = on_sys, .sa_flags = SA_SIGINFO};
	sigaction(SIGSYS, &sa, NULL);
	uint64_t site = (uint64_t)(uintptr_t)guard_site + 2; /* the IP after the syscall instruction */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)site, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 1;
	}
	if (syscall(SYS_getppid) != getppid()) {
		fprintf(stderr, "the trapped call returned a wrong value\n");
		return 1;
	}
	double trapped = loop(n);
	printf("getppid: native %.0f ns, trapped to SIGSYS and re-issued %.0f ns (%.1fx, +%.2f us per call)\n", native,
	       trapped, trapped / native, (trapped - native) / 1000);
	return 0;
}
