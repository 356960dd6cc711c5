/* A program that sandboxes itself with a seccomp filter half-way through,
 * touching 4 MiB of heap before and after (sandbox.sh).  Modes:
 *   prctl      prctl(PR_SET_SECCOMP): mprotect fails with EPERM
 *   syscall    syscall(SYS_seccomp), as libseccomp installs one: the same
 *   kill       mprotect kills the process (SECCOMP_RET_KILL_PROCESS)
 *   mprotect-exec  mprotect with PROT_EXEC fails (a W^X sandbox's rule):
 *              wss's own calls are allowed
 *   unrelated  ptrace fails: nothing wss calls
 *   raw        the filter of prctl installed by an inline system call, which
 *              no wrapper sees
 * After the filter it touches the heap for ten 50 ms steps and, but for
 * raw, runs `sh -c 'echo child'` (exec under the same filter).  Prints
 * the filter's result, the heap's checksum and the child's line. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAP (4 << 20)

static long raw3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *mode = argv[1];
	char *heap = malloc(HEAP);
	if (!heap)
		return 1;
	memset(heap, 1, HEAP);
	uint32_t nr = __NR_mprotect, deny = SECCOMP_RET_ERRNO | EPERM;
	if (!strcmp(mode, "kill"))
		deny = SECCOMP_RET_KILL_PROCESS;
	if (!strcmp(mode, "unrelated"))
		nr = __NR_ptrace;
	/* mprotect-exec: args[2] (prot) & PROT_EXEC -> EPERM */
	struct sock_filter exec_rule[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter one_rule[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, deny),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {4, one_rule};
	if (!strcmp(mode, "mprotect-exec"))
		prog = (struct sock_fprog){6, exec_rule};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 3;
	long r;
	if (!strcmp(mode, "syscall"))
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	else if (!strcmp(mode, "raw"))
		r = raw3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&prog);
	else
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	printf("filter %ld\n", r);
	long sum = 0;
	for (int step = 0; step < 10; step++) {
		for (size_t i = 0; i < HEAP; i += 4096)
			sum += heap[i]++;
		usleep(50000);
	}
	printf("sum %ld\n", sum);
	fflush(stdout);
	if (strcmp(mode, "raw")) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", "echo child", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
	}
	return 0;
}
