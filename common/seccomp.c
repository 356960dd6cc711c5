/* A classic BPF interpreter for seccomp filters (seccomp.h).  The kernel
 * checks a filter before it runs it (kernel/seccomp.c: seccomp_check_filter
 * on top of bpf_check_classic): loads only of aligned 32-bit words of
 * struct seccomp_data, its length, the scratch memory and immediates; the
 * ALU and jump instructions; a return at the end.  Jumps only go forward,
 * so a run takes at most n steps. */
#include "config.h"
#include "common/seccomp.h"

#include <stddef.h>
#include <string.h>

#define SCRATCH 16 /* BPF_MEMWORDS */

bool wss_seccomp_allows(uint32_t action)
{
	uint32_t a = action & SECCOMP_RET_ACTION_FULL;
	return a == SECCOMP_RET_ALLOW || a == SECCOMP_RET_LOG;
}

/* One ALU operation; false for a division by zero. */
static bool alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD: *a += v; return true;
	case BPF_SUB: *a -= v; return true;
	case BPF_MUL: *a *= v; return true;
	case BPF_DIV:
		if (!v)
			return false;
		*a /= v;
		return true;
	case BPF_MOD:
		if (!v)
			return false;
		*a %= v;
		return true;
	case BPF_AND: *a &= v; return true;
	case BPF_OR: *a |= v; return true;
	case BPF_XOR: *a ^= v; return true;
	case BPF_LSH: *a = v >= 32 ? 0 : *a << v; return true;
	case BPF_RSH: *a = v >= 32 ? 0 : *a >> v; return true;
	}
	return false;
}

uint32_t wss_seccomp_run(const struct sock_filter *f, unsigned n, const struct seccomp_data *d, bool *valid)
{
	uint32_t A = 0, X = 0, M[SCRATCH] = {0};
	*valid = false;
	if (!f || n == 0 || n > BPF_MAXINSNS)
		return 0;
	for (unsigned pc = 0; pc < n; pc++) {
		const struct sock_filter *in = &f[pc];
		uint32_t k = in->k;
		switch (BPF_CLASS(in->code)) {
		case BPF_LD:
			if (in->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k % 4 || k > sizeof *d - 4)
					return 0;
				memcpy(&A, (const char *)d + k, 4);
			} else if (in->code == (BPF_LD | BPF_W | BPF_LEN)) {
				A = sizeof *d;
			} else if (in->code == (BPF_LD | BPF_IMM)) {
				A = k;
			} else if (in->code == (BPF_LD | BPF_MEM) && k < SCRATCH) {
				A = M[k];
			} else {
				return 0;
			}
			break;
		case BPF_LDX:
			if (in->code == (BPF_LDX | BPF_W | BPF_LEN))
				X = sizeof *d;
			else if (in->code == (BPF_LDX | BPF_IMM))
				X = k;
			else if (in->code == (BPF_LDX | BPF_MEM) && k < SCRATCH)
				X = M[k];
			else
				return 0;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= SCRATCH)
				return 0;
			M[k] = BPF_CLASS(in->code) == BPF_ST ? A : X;
			break;
		case BPF_ALU:
			if (BPF_OP(in->code) == BPF_NEG) {
				A = -A;
			} else if (!alu(BPF_OP(in->code), &A, BPF_SRC(in->code) == BPF_X ? X : k)) {
				if (BPF_SRC(in->code) == BPF_K || (BPF_OP(in->code) != BPF_DIV && BPF_OP(in->code) != BPF_MOD))
					return 0; /* refused by the checker */
				*valid = true;
				return 0; /* a division by X = 0 */
			}
			break;
		case BPF_JMP: {
			uint32_t v = BPF_SRC(in->code) == BPF_X ? X : k;
			unsigned off;
			switch (BPF_OP(in->code)) {
			case BPF_JA: off = k; break;
			case BPF_JEQ: off = A == v ? in->jt : in->jf; break;
			case BPF_JGT: off = A > v ? in->jt : in->jf; break;
			case BPF_JGE: off = A >= v ? in->jt : in->jf; break;
			case BPF_JSET: off = A & v ? in->jt : in->jf; break;
			default: return 0;
			}
			if (off >= n - pc - 1)
				return 0; /* past the last instruction */
			pc += off;
			break;
		}
		case BPF_RET:
			if (BPF_RVAL(in->code) != BPF_K && BPF_RVAL(in->code) != BPF_A)
				return 0;
			*valid = true;
			return BPF_RVAL(in->code) == BPF_K ? k : A;
		case BPF_MISC:
			if (BPF_MISCOP(in->code) == BPF_TAX)
				X = A;
			else if (BPF_MISCOP(in->code) == BPF_TXA)
				A = X;
			else
				return 0;
			break;
		default:
			return 0;
		}
	}
	return 0; /* ran off the end: the checker refuses it */
}
