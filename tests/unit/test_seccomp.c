/* The seccomp filter interpreter (common/seccomp.c): what a filter returns
 * for a call, and which programs the kernel's checker would refuse. */
#include "config.h"
#include "common/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tests/tap/tap.h"

#define N(f) ((unsigned)(sizeof(f) / sizeof *(f)))
#define NR offsetof(struct seccomp_data, nr)
#define ARG(i) offsetof(struct seccomp_data, args[i])

static struct seccomp_data call(int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	return (struct seccomp_data){.nr = nr, .arch = AUDIT_ARCH_X86_64, .args = {a0, a1, a2}};
}

int main(void)
{
	plan(17);
	bool v;
	struct seccomp_data mp = call(SYS_mprotect, 0x1000, 4096, PROT_NONE), rd = call(SYS_read, 0, 0, 0);

	struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	ok(wss_seccomp_run(allow, 1, &mp, &v) == SECCOMP_RET_ALLOW && v, "one instruction: allow");

	struct sock_filter deny[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	uint32_t a = wss_seccomp_run(deny, N(deny), &mp, &v);
	ok(v && a == (SECCOMP_RET_ERRNO | EPERM) && !wss_seccomp_allows(a), "mprotect refused with EPERM");
	ok(wss_seccomp_run(deny, N(deny), &rd, &v) == SECCOMP_RET_ALLOW && v, "read allowed by the same filter");

	/* W^X: mprotect with PROT_EXEC in args[2] refused, the rest allowed. */
	struct sock_filter wx[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG(2)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
	};
	struct seccomp_data mx = call(SYS_mprotect, 0x1000, 4096, PROT_READ | PROT_EXEC);
	ok(wss_seccomp_run(wx, N(wx), &mx, &v) == SECCOMP_RET_KILL_PROCESS && v, "an argument's bit tested: PROT_EXEC kills");
	a = wss_seccomp_run(wx, N(wx), &mp, &v);
	ok(a == SECCOMP_RET_LOG && wss_seccomp_allows(a), "PROT_NONE logged, which allows");

	/* Arithmetic, scratch memory, X: (nr & 0xff) * 2 stored, reloaded,
	 * compared with X. */
	struct sock_filter alu[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
		BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 2),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_IMM, 2 * SYS_mprotect),
		BPF_STMT(BPF_LD | BPF_IMM, 0),
		BPF_STMT(BPF_LD | BPF_MEM, 3),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	ok(wss_seccomp_run(alu, N(alu), &mp, &v) == SECCOMP_RET_TRAP && v, "ALU, scratch memory and a jump on X");
	is_int(wss_seccomp_run(alu, N(alu), &rd, &v), 2 * SYS_mprotect, "TXA then return A");
	struct sock_filter gt[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG(1)),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 8192, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOMEM),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 4096, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | E2BIG),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	ok(wss_seccomp_run(gt, N(gt), &mp, &v) == SECCOMP_RET_ALLOW && v, "JGT false, JGE true");
	struct seccomp_data big = call(SYS_mprotect, 0, 1 << 20, 0);
	ok(wss_seccomp_run(gt, N(gt), &big, &v) == (SECCOMP_RET_ERRNO | ENOMEM), "JGT true");

	/* Programs the kernel refuses: nothing installed, nothing judged. */
	struct sock_filter past[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 5, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	wss_seccomp_run(past, N(past), &mp, &v);
	ok(!v, "a jump past the end is refused");
	struct sock_filter odd[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_K, 0)};
	wss_seccomp_run(odd, N(odd), &mp, &v);
	ok(!v, "a misaligned load is refused");
	struct sock_filter beyond[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), BPF_STMT(BPF_RET | BPF_K, 0)};
	wss_seccomp_run(beyond, N(beyond), &mp, &v);
	ok(!v, "a load past struct seccomp_data is refused");
	struct sock_filter noret[] = {BPF_STMT(BPF_LD | BPF_IMM, 1)};
	wss_seccomp_run(noret, N(noret), &mp, &v);
	ok(!v, "no return at the end is refused");
	wss_seccomp_run(allow, 0, &mp, &v);
	ok(!v, "an empty program is refused");
	struct sock_filter divk[] = {BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), BPF_STMT(BPF_RET | BPF_K, 0)};
	wss_seccomp_run(divk, N(divk), &mp, &v);
	ok(!v, "a division by a constant 0 is refused");
	struct sock_filter divx[] = {
		BPF_STMT(BPF_LD | BPF_IMM, 7),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	a = wss_seccomp_run(divx, N(divx), &mp, &v);
	ok(v && a == 0 && !wss_seccomp_allows(a), "a division by X = 0 returns 0: the kill");
	struct sock_filter ldlen[] = {BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0), BPF_STMT(BPF_RET | BPF_A, 0)};
	is_int(wss_seccomp_run(ldlen, N(ldlen), &mp, &v), sizeof(struct seccomp_data), "the length load");
	return done_testing();
}
